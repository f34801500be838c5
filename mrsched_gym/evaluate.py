"""The evaluation harness shared by baselines and agents.

* :func:`run_episode` runs one policy on one scenario and seed and returns every metric of
  :func:`mrsched_gym.metrics.episode_metrics` (the one implementation, computed from the episode
  log) plus the return and step count.
* :func:`evaluate` runs policies x scenarios x seeds, in parallel over local processes, with
  common random numbers: every policy sees the same worlds (the seed draws the whole world at
  reset; a policy never changes the scenario). A failing episode (the policy raises, returns a
  non-action, the env fails) is recorded with its policy, scenario, seed and traceback while the
  other episodes finish; :class:`~mrsched_gym.results.EpisodeFailures` then carries both.
  Every episode runs with one BLAS/OpenMP thread (threadpoolctl), so records do not depend on the
  machine's thread settings or on the number of workers.
* Aggregation and result files live in :mod:`mrsched_gym.results` (:func:`summarize`,
  :func:`write_results`, re-exported here).

Policies are named by strings: a baseline name (``"fifo"``), a baseline with parameters
(``"fair:delay=0"``), a trained agent checkpoint (``"agent:path/to/model.zip"`` or any path
ending in ``.zip``; loaded with sb3-contrib's MaskablePPO, or SB3 PPO), a shipped agent
(``"agent:hadoop-v0"``, :mod:`mrsched_gym.agents.pretrained`; run by the numpy forward pass of
:mod:`mrsched_gym.agents.numpy_policy`, no torch needed) or a policy in code
(``"my_policy.py:MyPolicy"``, ``"package.module:Class:key=value"``,
:mod:`mrsched_gym.policy_files`). In Python a policy may also be an object that implements the
contract of :mod:`mrsched_gym.policies` (``decide(decision, view)``, ``act(obs, mask)``, a
function ``(obs, mask)``, an SB3 model or a ``Scheduler``).
"""

from __future__ import annotations

import functools
import hashlib
import os
import time
import traceback
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

import mrsched_gym  # noqa: F401  (registers the ids)
from mrsched_gym.config import load_scenario
from mrsched_gym.errors import InputError, MissingExtraError, install_hint
from mrsched_gym.metrics import job_table
from mrsched_gym.policies import as_policy
from mrsched_gym.results import (
    EpisodeFailures,
    mean_ci95,
    metric_names,
    summarize,
    task_key,
    write_results,
)

DEFAULT_ENV = "mrsched/Hadoop-v0"


# ---------------------------------------------------------------------- policies
@dataclass(frozen=True)
class PolicySpec:
    """A policy by name: ``kind`` is ``"baseline"``, ``"agent"`` (an SB3 checkpoint or a shipped
    agent), ``"rllib"`` (an RLlib checkpoint folder), ``"code"`` (a policy in a file or module,
    ``target`` ``"file.py:Class"`` or ``"package.module:Class"``) or ``"object"`` (a policy
    object given in Python: ``target`` is its key and resume fingerprint, ``payload`` its pickle,
    :func:`mrsched_gym.policy_files.object_parts`). ``params``: a baseline's or a code policy's
    parameters, or a shipped agent's decision rules from its metadata: the affinity mask
    (:class:`~mrsched_gym.agents.affinity.AffinityDelegate`), the slow-start rule
    (:class:`~mrsched_gym.agents.slow_start.SlowStartDelegate`) and the speculation rule
    (:class:`~mrsched_gym.agents.policy.SpeculationDelegate`)."""

    label: str
    kind: str
    target: str
    params: tuple = field(default_factory=tuple)
    payload: bytes | None = field(default=None, repr=False)


def _parse_value(v: str) -> Any:
    for conv in (int, float):
        try:
            return conv(v)
        except ValueError:
            pass
    return {"true": True, "false": False}.get(v.lower(), v)


def parse_policy(spec: str) -> PolicySpec:
    """Parse ``"fifo"``, ``"fair:delay=0,pools=type"``, ``"agent:model.zip"``, ``"x.zip"``,
    ``"rllib:FOLDER"`` (what ``algo.save_to_path`` wrote, or its module folder),
    ``"my_policy.py:MyPolicy"`` or ``"package.module:Class"`` (with ``:key=value,...``
    parameters for the class; the file is loaded and the policy built once, so a bad one fails
    here, :mod:`mrsched_gym.policy_files`).

    Raises:
        InputError: A bad spec (the message names it and what is wrong).
    """
    from mrsched_gym.baselines import BASELINES
    from mrsched_gym.policy_files import code_spec_parts, is_code_spec

    if spec.startswith("rllib:"):
        path = spec[len("rllib:"):]
        if not Path(path).is_dir():
            raise InputError(f"policy {spec!r}: RLlib checkpoint folder {path!r} not found (the "
                             f"folder algo.save_to_path wrote, or its module folder)")
        return PolicySpec(label=f"rllib:{Path(path).name}", kind="rllib", target=path)
    if spec.startswith("agent:") or spec.endswith(".zip"):
        path = spec[len("agent:"):] if spec.startswith("agent:") else spec
        if not Path(path).is_file():
            from mrsched_gym.agents.pretrained import pretrained_agents
            agents = pretrained_agents()               # the metadata, read once
            info = agents.get(path)
            if info is None:
                raise InputError(
                    f"policy {spec!r}: checkpoint file {path!r} not found (shipped agents: "
                    f"{', '.join(agents) or 'none'})")
            params = tuple((k, info[k]) for k in ("affinity", "slow_start", "speculation")
                           if info.get(k))
            return PolicySpec(label=f"agent:{path}", kind="agent",
                              target=info["numpy_path"] or info["path"], params=params)
        return PolicySpec(label=f"agent:{Path(path).stem}", kind="agent", target=path)
    name, _, rest = spec.partition(":")
    if name not in BASELINES and is_code_spec(spec):
        label, target, params = code_spec_parts(spec, _parse_value)
        return PolicySpec(label=label, kind="code", target=target, params=params)
    if name not in BASELINES:
        raise InputError(f"policy {spec!r}: unknown baseline {name!r}; known: "
                         f"{', '.join(BASELINES)} (or agent:PATH.zip, rllib:FOLDER, "
                         f"FILE.py:Class, package.module:Class)")
    params = []
    for item in filter(None, rest.split(",")):
        k, eq, v = item.partition("=")
        if not eq or not k:
            raise InputError(f"policy {spec!r}: parameter {item!r} is not key=value")
        params.append((k.strip(), _parse_value(v.strip())))
    return PolicySpec(label=spec, kind="baseline", target=name, params=tuple(params))


#: What a policy label names (:func:`policy_role`).
AGENT, REFERENCE, BASELINE = "agent", "reference", "baseline"


def policy_role(label: str) -> str:
    """What the policy of a record's ``label`` is: :data:`AGENT` (``agent:...``, ``rllib:...``,
    and any outside policy: a policy file or object, whose label is no baseline's name),
    :data:`REFERENCE` (a reference rule: a textbook rule outside the classical baselines, ranked
    only when named, e.g. ``srpt`` or ``edf-affinity:slow_start=1``) or :data:`BASELINE` (one of
    the classical baselines). Only a baseline is ever "the best baseline" that leaderboards pair
    agents with and that anchors the benchmark's score."""
    from mrsched_gym.baselines import BASELINES, is_reference_rule

    if label.startswith(("agent:", "rllib:")) or label.partition(":")[0] not in BASELINES:
        return AGENT
    return REFERENCE if is_reference_rule(label.partition(":")[0]) else BASELINE


def make_policy(spec: PolicySpec | str):
    """Instantiate a policy (a baseline :class:`Scheduler`, an agent adapter, or an outside
    policy through :func:`~mrsched_gym.policies.as_policy`: a code policy built afresh, a
    policy object as a fresh copy, :func:`~mrsched_gym.policy_files.object_copy`)."""
    spec = parse_policy(spec) if isinstance(spec, str) else spec
    if spec.kind == "code":
        from mrsched_gym.policy_files import load_code_object
        return as_policy(load_code_object(spec.target, dict(spec.params)), spec.label)
    if spec.kind == "object":
        from mrsched_gym.policy_files import object_copy
        return as_policy(object_copy(spec.target, spec.payload), spec.label)
    if spec.kind == "rllib":
        try:
            from mrsched_gym.agents.rllib_module import load_rllib_policy
        except ImportError as e:
            raise MissingExtraError(f"policy {spec.label!r}: loading an RLlib checkpoint "
                                    f"needs the ray extra ({install_hint('ray')}): {e}"
                                    ) from None
        return load_rllib_policy(spec.target, name=spec.label)
    if spec.kind == "agent":
        if spec.target.endswith(".npz"):           # a shipped agent: numpy, no torch needed
            from mrsched_gym.agents.numpy_policy import NumpySetPolicy
            agent = NumpySetPolicy.load(spec.target, name=spec.label)
        else:
            from mrsched_gym.agents.policy import load_agent
            agent = load_agent(spec.target)
        params = dict(spec.params)
        try:
            if params.get("affinity") is not None:     # the shipped agent's affinity mask
                from mrsched_gym.agents.affinity import AffinityDelegate
                agent = AffinityDelegate(agent, params["affinity"])
            if params.get("slow_start") is not None:   # its reduce slow-start rule
                from mrsched_gym.agents.slow_start import SlowStartDelegate
                agent = SlowStartDelegate(agent, params["slow_start"])
            if params.get("speculation") is not None:  # its speculation rule
                from mrsched_gym.agents.policy import SpeculationDelegate
                agent = SpeculationDelegate(agent, params["speculation"])
        except ValueError as e:
            raise InputError(f"policy {spec.label!r}: {e}") from None
        return agent
    from mrsched_gym.baselines import make_baseline
    try:
        return make_baseline(spec.target, **dict(spec.params))
    except (TypeError, ValueError) as e:
        raise InputError(f"policy {spec.label!r}: {e}") from None


# ---------------------------------------------------------------------- scenarios
def make_env(scenario: str, overrides: dict | None = None) -> gym.Env:
    """A registered id, a bundled scenario name or a scenario YAML path, with overrides."""
    kw = dict(overrides or {})
    if isinstance(scenario, str) and scenario in gym.registry:
        return gym.make(scenario, **kw)
    return gym.make(DEFAULT_ENV, scenario=scenario, **kw)


def scenario_of(scenario: str):
    """The :class:`~mrsched_gym.config.Scenario` behind an id, name or path."""
    from mrsched_gym.config import Scenario
    from mrsched_gym.registration import ENV_IDS, scenario_for
    if isinstance(scenario, Scenario):
        return scenario
    return scenario_for(scenario) if scenario in ENV_IDS else load_scenario(scenario)


# ---------------------------------------------------------------------- one episode
def run_episode(scenario: str, policy, seed: int, env_kwargs: dict | None = None,
                keep_log: bool = False, keep_jobs: bool = False) -> dict[str, Any]:
    """Run ``policy`` for one episode on ``scenario`` (an id, name or path) with ``seed``.

    ``policy`` is a policy string (:func:`parse_policy`) or any object of the contract of
    :mod:`mrsched_gym.policies` (run as it is: its state carries over between calls; its
    ``reset(view, seed)`` is called first).

    A policy never changes the world: every policy of a comparison runs the same scenario (a
    cluster mechanism such as the MROrchestrator is part of the scenario, e.g.
    ``mrsched/HadoopOrchestrated-v0``).

    Returns:
        ``{"metrics", "return", "steps", "wall_s", "jct_s"}`` (+ ``"log"``, the
        :class:`~mrsched_gym.sim.log.EpisodeLog`, with ``keep_log``; + ``"jobs"``, one row per
        job as :func:`~mrsched_gym.metrics.job_table` columns, with ``keep_jobs``).
    """
    policy = make_policy(policy) if isinstance(policy, (str, PolicySpec)) else as_policy(policy)
    env = make_env(scenario, env_kwargs)
    t0 = time.perf_counter()
    obs, info = env.reset(seed=seed)
    base = env.unwrapped
    sim = base.sim
    policy.reset(sim, seed=seed)
    uses_obs = hasattr(policy, "act")
    total, steps = 0.0, 0
    while True:
        if uses_obs:
            obs, r, term, trunc, info = env.step(policy.act(obs, base.action_masks()))
        else:          # a baseline decides from the simulator: no observation to build (the
            # wrappers gym.make adds check only reset and the first step; no id sets a step
            # limit, which a TimeLimit wrapper would enforce)
            r, term, trunc, info = base.advance(policy.decide(sim))
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
    if keep_jobs:
        out["jobs"] = job_table(log)
    env.close()
    return out


def policy_fingerprint(spec: PolicySpec) -> str:
    """What makes a policy's episodes reusable on resume: its label for a baseline (parameters
    included), its file and the file's hash for an agent (a retrained checkpoint differs), every
    file's hash for an RLlib checkpoint folder, the source file's hash for a code policy, the
    hashes of its pickle and class source for a policy object."""
    if spec.kind == "code":
        from mrsched_gym.policy_files import code_fingerprint
        return code_fingerprint(spec.target, spec.params)
    if spec.kind == "object":
        return spec.target
    if spec.kind == "rllib":
        digests = []
        for p in sorted(p for p in Path(spec.target).rglob("*") if p.is_file()):
            st = p.stat()
            digests.append(f"{p.relative_to(spec.target)}="
                           f"{file_digest(str(p), st.st_mtime_ns, st.st_size)}")
        return f"{spec.target}:{hashlib.sha256(';'.join(digests).encode()).hexdigest()[:16]}"
    if spec.kind != "agent":
        return spec.label
    st = Path(spec.target).stat()
    extra = "".join(f",{k}={v}" for k, v in spec.params)       # e.g. its speculation rule
    return f"{spec.target}:{file_digest(spec.target, st.st_mtime_ns, st.st_size)}{extra}"



@functools.lru_cache(maxsize=64)
def file_digest(path: str, mtime_ns: int, size: int) -> str:
    """The first 16 hex digits of a file's SHA-256 (read once per process per file version)."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()[:16]


def reusable_records(tasks: Sequence[tuple], done: Sequence[dict],
                     per_job: bool = False) -> dict[tuple, dict]:
    """The records of ``done`` that a sweep of ``tasks`` may reuse (same policy fingerprint;
    with ``per_job``, only those that carry their job table), keyed by (policy, scenario,
    seed)."""
    fps = {t[0].label: policy_fingerprint(t[0]) for t in tasks}
    return {task_key(r): r for r in done if r.get("_policy_fp") == fps.get(r["policy"])
            and (not per_job or "_jobs" in r)}


def collect_records(tasks: Sequence[tuple], finished: dict[tuple, dict]) -> list[dict]:
    """The records of ``tasks`` in task order; raises :class:`EpisodeFailures` (holding the
    others) if any episode failed."""
    ordered = [finished[(t[0].label, t[1], t[2])] for t in tasks]
    failures = [r for r in ordered if "error" in r]
    records = [r for r in ordered if "error" not in r]
    if failures:
        raise EpisodeFailures(records, failures)
    return records


def run_task(task: tuple, per_job: bool = False) -> dict[str, Any]:
    """Run one episode of a sweep (a :func:`sweep_tasks` entry) with one BLAS/OpenMP thread.

    Returns its record (with ``per_job``, the episode's job table under ``_jobs``), or, if
    anything fails, a failure record ``{policy, scenario, seed, error, traceback}`` — the sweep
    goes on.
    """
    from threadpoolctl import threadpool_limits
    policy_spec, scenario, seed, env_kwargs = task
    try:
        with threadpool_limits(limits=1):
            policy = make_policy(policy_spec)
            res = run_episode(scenario, policy, seed, env_kwargs, keep_jobs=per_job)
    except Exception as e:                     # noqa: BLE001 (recorded, with its traceback)
        return {"policy": policy_spec.label, "scenario": scenario, "seed": seed,
                "error": f"{type(e).__name__}: {e}", "traceback": traceback.format_exc(),
                "_policy_fp": policy_fingerprint(policy_spec)}
    rec = {"policy": policy_spec.label, "scenario": scenario, "seed": seed,
           "steps": res["steps"], "return": res["return"], "wall_s": res["wall_s"]}
    rec.update(res["metrics"])
    rec["_jct_s"] = res["jct_s"]
    if per_job:
        rec["_jobs"] = res["jobs"]
    rec["_policy_fp"] = policy_fingerprint(policy_spec)
    return rec


# ---------------------------------------------------------------------- many episodes
def evaluate(policies: Sequence[Any], scenarios: Sequence[str],
             seeds: Iterable[int], workers: int | None = None, progress: bool = True,
             env_kwargs: dict | None = None, done: Sequence[dict] = (),
             on_result=None, per_job: bool = False) -> list[dict[str, Any]]:
    """Run every policy on every scenario and seed (common random numbers across policies).

    Args:
        policies: Policy strings or specs (see :func:`parse_policy`), or policy objects (the
            contract of :mod:`mrsched_gym.policies`; labelled by their ``name`` attribute, else
            their class name). An object is pickled once and every episode runs on a fresh
            copy of it (in a worker process, or here with ``workers=1``); one that does not
            pickle runs its episodes in this process, each on a deep copy
            (:mod:`mrsched_gym.policy_files`).
        scenarios: Env ids, bundled scenario names or YAML paths.
        seeds: Episode seeds.
        workers: Processes (default: the machine's cores; 1 = in this process).
        progress: Show a progress bar (tqdm) on stderr.
        env_kwargs: Scenario overrides applied to every run.
        done: Records of episodes already finished (e.g. from a journal): not run again when
            the same policy (same parameters; for an agent, the same checkpoint file and bytes;
            for a code policy, the same source file bytes; for an object, the same pickle and
            class source) ran them.
        on_result: Called with each record (or failure record) the moment it finishes.
        per_job: Keep every episode's job table (:func:`~mrsched_gym.metrics.job_table`)
            under ``_jobs``; :func:`write_results` writes it as ``jobs.csv``.

    Returns:
        One record per (policy, scenario, seed), sorted in that order: ``policy``, ``scenario``,
        ``seed``, ``steps``, ``return``, ``wall_s`` and every metric by name (plus the
        finished jobs' completion times under ``_jct_s``, and ``_jobs`` with ``per_job``; the
        ``_`` fields are left out of ``records.json`` and ``records.csv``).

    Raises:
        EpisodeFailures: After every episode ran, if some failed (it holds the records of the
            others and the failures).
    """
    tasks = sweep_tasks(policies, scenarios, seeds, env_kwargs)
    finished = reusable_records(tasks, done, per_job)
    todo = [t for t in tasks if (t[0].label, t[1], t[2]) not in finished]
    fn = functools.partial(run_task, per_job=per_job)
    here = [t for t in todo if in_process_only(t[0])]       # objects that do not pickle
    pooled = [t for t in todo if not in_process_only(t[0])]
    for r in run_parallel(fn, pooled, workers, progress, "episodes", on_result):
        finished[task_key(r)] = r
    for r in run_parallel(fn, here, 1, progress, "episodes (in this process)", on_result):
        finished[task_key(r)] = r
    return collect_records(tasks, finished)


def in_process_only(spec: PolicySpec) -> bool:
    """Whether ``spec`` is a policy object that does not pickle, so its episodes run in the
    process that holds it."""
    return spec.kind == "object" and spec.payload is None


def sweep_tasks(policies: Sequence[Any], scenarios: Sequence[str],
                seeds: Iterable[int], env_kwargs: dict | None = None) -> list[tuple]:
    """The :func:`run_task` arguments of a sweep, in record order (policy, scenario, seed), after
    checking every scenario, policy and seed: a bad one fails before anything runs. Policy labels
    are unique (two checkpoints with the same file name are labelled by their paths)."""
    seeds = list(seeds)
    if not seeds:
        raise InputError("seeds: at least one seed is needed")
    for sd in seeds:
        if isinstance(sd, bool) or not isinstance(sd, (int, np.integer)) or sd < 0:
            raise InputError(f"seeds: every seed must be an integer >= 0, got {sd!r}")
    if len(set(seeds)) != len(seeds):
        raise InputError(f"seeds: repeated seeds in {seeds}")
    for s in scenarios:
        scenario_of(s)
    specs = unique_labels([check_policy(p) for p in policies])
    for sp in specs:
        check_agent_fits(sp, scenarios, env_kwargs)
    return [(sp, sc, int(sd), env_kwargs) for sp in specs for sc in scenarios for sd in seeds]


def check_agent_fits(spec: PolicySpec, scenarios: Sequence[str],
                     env_kwargs: dict | None = None) -> None:
    """Check that an agent checkpoint can act in every scenario, so a sweep with one that
    cannot fails before any episode runs: an SB3 checkpoint's algorithm and, for a flat
    network, its input shapes; an RLlib checkpoint's module (the set module runs on any
    cluster); an outside policy's own ``check_fits`` if it has one (an SB3 model object's
    observation space). Shipped agents (set networks) and baselines pass."""
    if spec.kind in ("code", "object"):
        agent = make_policy(spec)
        if not hasattr(agent, "check_fits"):
            return
    elif spec.kind not in ("agent", "rllib") or spec.target.endswith(".npz"):
        return
    else:
        try:
            agent = agent_for_checks(spec.kind, spec.target, policy_fingerprint(spec))
        except (FileNotFoundError, ValueError) as e:
            raise InputError(f"policy {spec.label!r}: {e}") from None
        if spec.kind == "rllib":
            return
    for sc in scenarios:
        env = make_env(sc, env_kwargs)
        try:
            agent.check_fits(env.observation_space, f"scenario {sc!r}")
        except InputError as e:
            raise InputError(f"policy {spec.label!r}: {e}") from None
        finally:
            env.close()


@functools.lru_cache(maxsize=8)
def agent_for_checks(kind: str, target: str, fingerprint: str):
    """The agent of a checkpoint, loaded once per version (``fingerprint``, which holds the
    files' hashes) for :func:`check_agent_fits` (the command line checks a sweep before it runs
    it), without changing the caller's torch thread count (an episode's loading sets one)."""
    if kind == "rllib":
        return make_policy(PolicySpec(label=f"rllib:{Path(target).name}", kind=kind,
                                      target=target))
    from mrsched_gym.agents.policy import load_agent
    return load_agent(target, one_thread=False)


def unique_labels(specs: Sequence[PolicySpec]) -> list[PolicySpec]:
    """Agents whose labels collide (``runs/a/best_model.zip`` and ``runs/b/best_model.zip``) are
    labelled by their paths; a policy given twice is an error."""
    from collections import Counter
    from dataclasses import replace
    count = Counter(sp.label for sp in specs)
    out = [replace(sp, label=f"{sp.kind}:{Path(sp.target).with_suffix('')}")
           if count[sp.label] > 1 and sp.kind in ("agent", "rllib") else sp for sp in specs]
    dup = [k for k, n in Counter(sp.label for sp in out).items() if n > 1]
    if dup:
        outside = any(sp.kind in ("code", "object") for sp in out if sp.label in dup)
        raise InputError(f"policies: {', '.join(dup)} given more than once" + (
            " (a policy object or file is labelled by its name attribute, else its class "
            "name: give each one a name of its own)" if outside else ""))
    return out


def check_policy(spec: Any) -> PolicySpec:
    """Parse a policy and build it once if it is a baseline, so bad parameters fail early; a
    policy object becomes an ``"object"`` spec (:func:`~mrsched_gym.policy_files.object_parts`).

    Raises:
        InputError: A bad policy string, or an object that is no policy (the message names what
            is missing).
    """
    if not isinstance(spec, (str, PolicySpec)):
        from mrsched_gym.policy_files import object_parts
        label, key, payload = object_parts(spec)
        return PolicySpec(label=label, kind="object", target=key, payload=payload)
    sp = parse_policy(spec) if isinstance(spec, str) else spec
    if sp.kind == "baseline":
        make_policy(sp)
    return sp


def run_parallel(fn, tasks: Sequence, workers: int | None = None, progress: bool = True,
                 desc: str = "episodes", on_result=None) -> list:
    """``[fn(t) for t in tasks]`` in task order, over a fork pool (``workers`` processes, default
    the machine's cores; 1 = in this process) with a tqdm bar on stderr; ``on_result(r)`` is
    called as each result arrives (in task order)."""
    workers = min(workers or os.cpu_count() or 1, len(tasks)) or 1
    from tqdm.auto import tqdm
    out = []
    with tqdm(total=len(tasks), desc=desc, disable=not progress, unit="ep") as bar:
        if workers <= 1:
            for t in tasks:
                out.append(fn(t))
                if on_result is not None:
                    on_result(out[-1])
                bar.update()
            return out
        import multiprocessing as mp
        ctx = mp.get_context("fork" if "fork" in mp.get_all_start_methods() else "spawn")
        from mrsched_gym.lifecycle import ParentGuard, worker_init
        with ctx.Pool(workers, initializer=worker_init) as pool:
            for r in pool.imap(ParentGuard(fn), tasks, chunksize=1):
                out.append(r)
                if on_result is not None:
                    on_result(r)
                bar.update()
    return out


__all__ = ["AGENT", "BASELINE", "REFERENCE", "EpisodeFailures", "PolicySpec", "check_policy",
           "collect_records", "evaluate", "file_digest", "make_env", "make_policy", "mean_ci95",
           "metric_names", "parse_policy", "policy_fingerprint", "policy_role",
           "reusable_records", "run_episode", "run_parallel", "run_task", "scenario_of",
           "summarize", "sweep_tasks", "unique_labels", "write_results"]
