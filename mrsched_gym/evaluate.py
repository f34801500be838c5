"""The evaluation harness shared by baselines and agents (SPEC 7; issue 3).

* :func:`run_episode` runs one policy on one scenario and seed and returns every metric of
  :func:`mrsched_gym.metrics.episode_metrics` (the one implementation, computed from the episode
  log) plus the return and step count.
* :func:`evaluate` runs policies x scenarios x seeds, in parallel over local processes, with
  common random numbers: every policy sees the same worlds (the seed draws the whole world at
  reset, and a baseline's scenario overrides never change the job draws).
* :func:`summarize` aggregates by policy and scenario: mean and 95% confidence interval
  (Student's t over seeds) of every metric.
* :func:`write_results` writes ``records.json`` (one record per policy x scenario x seed, every
  metric by name), ``records.csv`` and ``summary.json``/``summary.csv``, atomically.

Policies are named by strings: a baseline name (``"fifo"``), a baseline with parameters
(``"fair:delay=0"``), a trained agent checkpoint (``"agent:path/to/model.zip"`` or any path
ending in ``.zip``; loaded with sb3-contrib's MaskablePPO, or SB3 PPO) or a shipped agent
(``"agent:hadoop-v0"``, :mod:`mrsched_gym.agents.pretrained`).
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Optional, Sequence

import gymnasium as gym
import numpy as np

import mrsched_gym  # noqa: F401  (registers the ids)
from mrsched_gym.config import load_scenario

DEFAULT_ENV = "mrsched/Hadoop-v0"


# ---------------------------------------------------------------------- policies
@dataclass(frozen=True)
class PolicySpec:
    """A policy by name: ``kind`` is ``"baseline"`` or ``"agent"``."""

    label: str
    kind: str
    target: str
    params: tuple = field(default_factory=tuple)


def _parse_value(v: str) -> Any:
    for conv in (int, float):
        try:
            return conv(v)
        except ValueError:
            pass
    return {"true": True, "false": False}.get(v.lower(), v)


def parse_policy(spec: str) -> PolicySpec:
    """Parse ``"fifo"``, ``"fair:delay=0,pools=type"``, ``"agent:model.zip"`` or ``"x.zip"``."""
    from mrsched_gym.baselines import BASELINES

    if spec.startswith("agent:") or spec.endswith(".zip"):
        path = spec[len("agent:"):] if spec.startswith("agent:") else spec
        if not Path(path).is_file():
            from mrsched_gym.agents.pretrained import pretrained_agents, pretrained_path
            shipped = pretrained_path(path)
            if shipped is None:
                raise FileNotFoundError(
                    f"policy {spec!r}: checkpoint file {path!r} not found (shipped agents: "
                    f"{', '.join(pretrained_agents()) or 'none'})")
            return PolicySpec(label=f"agent:{path}", kind="agent", target=shipped)
        return PolicySpec(label=f"agent:{Path(path).stem}", kind="agent", target=path)
    name, _, rest = spec.partition(":")
    if name not in BASELINES:
        raise ValueError(f"policy {spec!r}: unknown baseline {name!r}; known: "
                         f"{', '.join(BASELINES)} (or agent:PATH.zip)")
    params = []
    for item in filter(None, rest.split(",")):
        k, eq, v = item.partition("=")
        if not eq or not k:
            raise ValueError(f"policy {spec!r}: parameter {item!r} is not key=value")
        params.append((k.strip(), _parse_value(v.strip())))
    return PolicySpec(label=spec, kind="baseline", target=name, params=tuple(params))


def make_policy(spec: PolicySpec | str):
    """Instantiate a policy (a baseline :class:`Scheduler` or an agent adapter)."""
    spec = parse_policy(spec) if isinstance(spec, str) else spec
    if spec.kind == "agent":
        from mrsched_gym.agents.policy import load_agent
        return load_agent(spec.target)
    from mrsched_gym.baselines import make_baseline
    try:
        return make_baseline(spec.target, **dict(spec.params))
    except TypeError as e:
        raise ValueError(f"policy {spec.label!r}: {e}") from None


# ---------------------------------------------------------------------- scenarios
def make_env(scenario: str, overrides: Optional[dict] = None) -> gym.Env:
    """A registered id, a bundled scenario name or a scenario YAML path, with overrides."""
    kw = dict(overrides or {})
    if isinstance(scenario, str) and scenario in gym.registry:
        return gym.make(scenario, **kw)
    return gym.make(DEFAULT_ENV, scenario=scenario, **kw)


def scenario_of(scenario: str):
    """The :class:`~mrsched_gym.config.Scenario` behind an id, name or path."""
    from mrsched_gym.config import Scenario
    from mrsched_gym.registration import ENV_IDS
    if isinstance(scenario, Scenario):
        return scenario
    return load_scenario(ENV_IDS.get(scenario, scenario))


# ---------------------------------------------------------------------- one episode
def run_episode(scenario: str, policy, seed: int, env_kwargs: Optional[dict] = None,
                keep_log: bool = False) -> dict[str, Any]:
    """Run ``policy`` for one episode on ``scenario`` (an id, name or path) with ``seed``.

    The policy's own ``env_overrides`` (e.g. Fair + MROrchestrator switching the orchestrator on)
    are applied on top of ``env_kwargs``.

    Returns:
        ``{"metrics", "return", "steps", "wall_s", "jct_s"}`` (+ ``"log"``, the
        :class:`~mrsched_gym.sim.log.EpisodeLog`, with ``keep_log``).
    """
    kw = dict(env_kwargs or {})
    kw.update(getattr(policy, "env_overrides", {}) or {})
    env = make_env(scenario, kw)
    t0 = time.perf_counter()
    obs, info = env.reset(seed=seed)
    base = env.unwrapped
    sim = base.sim
    policy.reset(sim, seed=seed)
    uses_obs = hasattr(policy, "act")
    total, steps = 0.0, 0
    while True:
        a = policy.act(obs, base.action_masks()) if uses_obs else policy.decide(sim)
        obs, r, term, trunc, info = env.step(a)
        total += r
        steps += 1
        if term or trunc:
            break
    out = {"metrics": info["metrics"], "return": total, "steps": steps,
           "wall_s": time.perf_counter() - t0}
    log = info["episode_log"]
    fin = ~np.isnan(log.finish_s)
    out["jct_s"] = (log.finish_s - log.arrival_s)[fin].tolist()
    if keep_log:
        out["log"] = log
    env.close()
    return out


def _run_task(task: tuple) -> dict[str, Any]:
    policy_spec, scenario, seed, env_kwargs = task
    policy = make_policy(policy_spec)
    res = run_episode(scenario, policy, seed, env_kwargs)
    rec = {"policy": policy_spec.label, "scenario": scenario, "seed": seed,
           "steps": res["steps"], "return": res["return"], "wall_s": res["wall_s"]}
    rec.update(res["metrics"])
    rec["_jct_s"] = res["jct_s"]
    return rec


# ---------------------------------------------------------------------- many episodes
def evaluate(policies: Sequence[str | PolicySpec], scenarios: Sequence[str],
             seeds: Iterable[int], workers: Optional[int] = None, progress: bool = True,
             env_kwargs: Optional[dict] = None) -> list[dict[str, Any]]:
    """Run every policy on every scenario and seed (common random numbers across policies).

    Args:
        policies: Policy strings or specs (see :func:`parse_policy`).
        scenarios: Env ids, bundled scenario names or YAML paths.
        seeds: Episode seeds.
        workers: Processes (default: the machine's cores; 1 = in this process).
        progress: Show a progress bar (tqdm) on stderr.
        env_kwargs: Scenario overrides applied to every run.

    Returns:
        One record per (policy, scenario, seed), sorted in that order: ``policy``, ``scenario``,
        ``seed``, ``steps``, ``return``, ``wall_s`` and every metric by name (plus the
        per-job completion times under ``_jct_s``, not written to the CSV).
    """
    return run_parallel(_run_task, sweep_tasks(policies, scenarios, seeds, env_kwargs), workers,
                        progress, "episodes")


def sweep_tasks(policies: Sequence[str | PolicySpec], scenarios: Sequence[str],
                seeds: Iterable[int], env_kwargs: Optional[dict] = None) -> list[tuple]:
    """The ``_run_task`` arguments of a sweep, in record order (policy, scenario, seed), after
    checking every scenario and policy: a bad one fails before anything runs."""
    for s in scenarios:
        scenario_of(s)
    specs = [check_policy(p) for p in policies]
    return [(sp, sc, int(sd), env_kwargs) for sp in specs for sc in scenarios for sd in seeds]


def check_policy(spec: PolicySpec | str) -> PolicySpec:
    """Parse a policy and build it once if it is a baseline, so bad parameters fail early."""
    sp = parse_policy(spec) if isinstance(spec, str) else spec
    if sp.kind == "baseline":
        make_policy(sp)
    return sp


def run_parallel(fn, tasks: Sequence, workers: Optional[int] = None, progress: bool = True,
                 desc: str = "episodes") -> list:
    """``[fn(t) for t in tasks]`` in task order, over a fork pool (``workers`` processes, default
    the machine's cores; 1 = in this process) with a tqdm bar on stderr."""
    workers = min(workers or os.cpu_count() or 1, len(tasks)) or 1
    from tqdm.auto import tqdm
    out = []
    with tqdm(total=len(tasks), desc=desc, disable=not progress, unit="ep") as bar:
        if workers <= 1:
            for t in tasks:
                out.append(fn(t))
                bar.update()
            return out
        import multiprocessing as mp
        ctx = mp.get_context("fork" if "fork" in mp.get_all_start_methods() else "spawn")
        with ctx.Pool(workers) as pool:
            for r in pool.imap(fn, tasks, chunksize=1):
                out.append(r)
                bar.update()
    return out


def mean_ci95(values: Sequence[float]) -> tuple[float, float]:
    """Mean and half-width of the 95% confidence interval (Student's t; nan-aware)."""
    x = np.asarray([v for v in values if v is not None and not math.isnan(v)], dtype=float)
    if len(x) == 0:
        return math.nan, math.nan
    if len(x) == 1:
        return float(x[0]), math.nan
    from scipy.stats import t
    return float(x.mean()), float(t.ppf(0.975, len(x) - 1) * x.std(ddof=1) / math.sqrt(len(x)))


def metric_names(records: Sequence[dict]) -> list[str]:
    """The numeric fields of the records (metrics, steps, return), in record order."""
    skip = {"policy", "scenario", "seed"}
    return [k for k, v in records[0].items() if k not in skip and not k.startswith("_")
            and isinstance(v, (int, float))] if records else []


def summarize(records: Sequence[dict]) -> list[dict[str, Any]]:
    """Per (policy, scenario): ``n`` seeds and ``<metric>_mean`` / ``<metric>_ci95`` of each."""
    groups: dict[tuple, list[dict]] = {}
    for r in records:
        groups.setdefault((r["policy"], r["scenario"]), []).append(r)
    out = []
    for (pol, sc), rs in groups.items():
        row: dict[str, Any] = {"policy": pol, "scenario": sc, "n": len(rs)}
        for k in metric_names(rs):
            row[f"{k}_mean"], row[f"{k}_ci95"] = mean_ci95([r[k] for r in rs])
        out.append(row)
    return out


def _atomic_write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _json_safe(x: Any) -> Any:
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if isinstance(x, dict):
        return {k: _json_safe(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_json_safe(v) for v in x]
    return x


def _csv_text(rows: Sequence[dict]) -> str:
    buf = io.StringIO()
    if rows:
        keys = [k for k in rows[0] if not k.startswith("_")]
        w = csv.DictWriter(buf, fieldnames=keys, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow({k: r.get(k) for k in keys})
    return buf.getvalue()


def write_results(records: Sequence[dict], out_dir: str | Path) -> dict[str, Path]:
    """Write records and summary as JSON and CSV into ``out_dir`` (each file atomically)."""
    out = Path(out_dir)
    summary = summarize(records)
    clean = [{k: _json_safe(v) for k, v in r.items() if not k.startswith("_")} for r in records]
    paths = {"records.json": out / "records.json", "records.csv": out / "records.csv",
             "summary.json": out / "summary.json", "summary.csv": out / "summary.csv"}
    _atomic_write(paths["records.json"], json.dumps(clean, indent=1))
    _atomic_write(paths["records.csv"], _csv_text(records))
    _atomic_write(paths["summary.json"], json.dumps(
        [{k: _json_safe(v) for k, v in r.items()} for r in summary], indent=1))
    _atomic_write(paths["summary.csv"], _csv_text(summary))
    return paths
