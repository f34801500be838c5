"""The benchmark protocol (``mrsched-gym benchmark``): one number per policy that people can cite.

* **The suite**: every registered id (:data:`SUITE`; the week-long thesis-scale id and
  Stragglers-v0 are left out by default, :data:`OUTSIDE_SUITE`: pass them with ``--ids``),
  each ranked by its own headline metric, on fixed **test seeds** :data:`TEST_SEEDS`, disjoint
  from the leaderboard's seeds (0-19), the agents' validation seeds (500-519) and their
  training seeds (1,000,000 and up).
* **Normalised score** per id and seed: ``(R - x) / (R - B)`` with ``x`` the policy's headline
  value, ``R`` the mean of ``random`` and ``B`` the mean of the best baseline *of that world*
  (lower headline is better): 0 = random, 1 = the best baseline, above 1 = better than every
  baseline.
* **Aggregates** over all ids, as rliable recommends (Agarwal et al., NeurIPS 2021): the
  interquartile mean (IQM) of the normalised scores and, for each agent, the probability of
  improvement over the best baseline of each world, P(score_agent > score_best) averaged over ids
  (ties count half); both with 95% stratified bootstrap confidence intervals (seeds resampled
  within each id, a fixed bootstrap seed, so the numbers are reproducible).
* **Reference rules** (``--references``): textbook rules outside the classical baselines
  (``srpt``, or an order under the shipped generalist's decision rules such as
  ``edf-affinity:slow_start=1``; :func:`~mrsched_gym.evaluate.policy_role`) are scored and
  ranked like the agents, so that a cited table shows what a hand-written rule reaches beside
  a learned agent, but they are never the anchor ``B``: the score's 1 stays the best of the
  classical baselines whichever references are named.

The results (``benchmark.json``, ``scores.csv``, ``records.json``, ``benchmark.md``, ``iqm.png``)
carry the suite's version: the package version, the ids and the seeds.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from mrsched_gym.registration import ENV_IDS

#: Ids left out of the default suite (pass them with ``--ids``): the week-long thesis-scale id,
#: and Stragglers-v0, where ``random`` copies a straggler at every chance and is among the best
#: policies, so the score's 0 anchor (random) sits next to its 1 (the best baseline).
OUTSIDE_SUITE = ("mrsched/ThesisScale-v0", "mrsched/Stragglers-v0")
#: The benchmark's ids (every registered id but :data:`OUTSIDE_SUITE`).
SUITE = tuple(e for e in ENV_IDS if e not in OUTSIDE_SUITE)
#: The benchmark's test seeds (never used for leaderboards, validation or training).
TEST_SEEDS = tuple(range(100, 110))
#: In a benchmark ``--agents`` entry, replaced by each world's id name (``Hadoop-v0``): an agent
#: with one checkpoint per id, ranked as one row (the plain-PPO reference,
#: :mod:`mrsched_gym.agents.training.plain_ppo`: ``agent:results/plain-ppo/{id}.zip``).
ID_FIELD = "{id}"
BOOTSTRAP_SAMPLES = 2000
BOOTSTRAP_SEED = 0


def id_name(env_id: str) -> str:
    """The file-name part of a registered id: ``mrsched/Hadoop-v0`` -> ``Hadoop-v0``."""
    return env_id.rpartition("/")[2]


def agent_in_world(agent: str, env_id: str) -> Any:
    """The policy the benchmark entry ``agent`` names in the world ``env_id``: ``agent`` itself,
    or for a per-id agent (one holding :data:`ID_FIELD`) the spec of that id's checkpoint,
    labelled by the entry without its ``.zip`` (``agent:results/plain-ppo/{id}``) so that its
    worlds make one row.

    Raises:
        InputError: The id's checkpoint is missing or not an agent (naming both).
    """
    if ID_FIELD not in agent:
        return agent
    from dataclasses import replace

    from mrsched_gym.evaluate import parse_policy
    spec = parse_policy(agent.replace(ID_FIELD, id_name(env_id)))
    label = f"agent:{agent}" if spec.kind == "agent" and not agent.startswith("agent:") \
        else agent
    return replace(spec, label=label.removesuffix(".zip"))


def headline_of(env_id: str) -> str:
    """The headline metric of an id's scenario."""
    from mrsched_gym.evaluate import scenario_of
    return scenario_of(env_id).reward.headline


def is_anchor(policy: str) -> bool:
    """Whether ``policy`` (a record's label) may be the best baseline ``B`` of a world: one of
    the classical baselines, not an agent nor a reference rule
    (:func:`~mrsched_gym.evaluate.policy_role`)."""
    from mrsched_gym.evaluate import BASELINE, policy_role
    return policy_role(policy) == BASELINE


def normalised_scores(records: Sequence[dict]) -> dict[str, dict[str, np.ndarray]]:
    """``{id: {policy: scores by seed}}`` (module docstring); seeds in sorted order. Agents and
    reference rules are scored but never the anchor ``B`` (:func:`is_anchor`)."""
    out: dict[str, dict[str, np.ndarray]] = {}
    for env_id in dict.fromkeys(r["scenario"] for r in records):
        rs = [r for r in records if r["scenario"] == env_id]
        metric = headline_of(env_id)
        seeds = sorted({r["seed"] for r in rs})
        vals = {p: np.array([next(r[metric] for r in rs if r["policy"] == p and r["seed"] == s)
                             for s in seeds], dtype=float)
                for p in dict.fromkeys(r["policy"] for r in rs)}
        if "random" not in vals:
            raise ValueError(f"{env_id}: the benchmark needs the random policy (score 0)")
        R = float(np.mean(vals["random"]))
        B = min(float(np.mean(v)) for p, v in vals.items() if is_anchor(p))
        # a world where random is (nearly) as good as the best baseline has no scale: NaN
        span = R - B if R - B > 1e-6 * max(abs(R), abs(B), 1e-12) else float("nan")
        out[env_id] = {p: (R - v) / span for p, v in vals.items()}
    return out


def best_baseline(scores: dict[str, np.ndarray]) -> str:
    """The baseline with the highest mean normalised score in one world (agents and reference
    rules excluded: :func:`is_anchor`)."""
    return max((p for p in scores if is_anchor(p)),
               key=lambda p: float(np.nanmean(scores[p])))


def iqm(x: np.ndarray) -> float:
    """Interquartile mean: the mean of the middle 50% of the values."""
    x = np.sort(np.asarray(x, dtype=float).ravel())
    x = x[~np.isnan(x)]
    if len(x) == 0:
        return float("nan")
    lo, hi = int(np.floor(0.25 * len(x))), int(np.ceil(0.75 * len(x)))
    return float(x[lo:hi].mean()) if hi > lo else float(x.mean())


def prob_improvement(a: np.ndarray, b: np.ndarray) -> float:
    """P(a > b) for independent draws of a and b (ties count half)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    a, b = a[~np.isnan(a)][:, None], b[~np.isnan(b)][None, :]
    if a.size == 0 or b.size == 0:
        return float("nan")
    return float(np.mean((a > b) + 0.5 * (a == b)))


def aggregate(scores: dict[str, dict[str, np.ndarray]],
              samples: int = BOOTSTRAP_SAMPLES) -> list[dict[str, Any]]:
    """Per policy: IQM over every (id, seed) score, its 95% stratified bootstrap CI, the
    per-id mean scores and, for agents and reference rules, the probability of improvement over
    the best baseline of each world (with its CI)."""
    rng = np.random.default_rng(BOOTSTRAP_SEED)
    ids = list(scores)
    policies = [p for p in dict.fromkeys(p for s in scores.values() for p in s)
                if all(p in scores[i] for i in ids)]
    n = {i: len(next(iter(scores[i].values()))) for i in ids}
    boots = [{i: rng.integers(0, n[i], n[i]) for i in ids} for _ in range(samples)]
    best = {i: best_baseline(scores[i]) for i in ids}
    rows = []
    for p in policies:
        row: dict[str, Any] = {"policy": p}
        row["iqm"] = iqm(np.concatenate([scores[i][p] for i in ids]))
        sample = [iqm(np.concatenate([scores[i][p][b[i]] for i in ids])) for b in boots]
        row["iqm_lo"], row["iqm_hi"] = (float(np.nanpercentile(sample, q)) for q in (2.5, 97.5))
        for i in ids:
            row[f"score:{i}"] = float(np.nanmean(scores[i][p]))
        if not is_anchor(p):
            def poi(idx, p=p):
                return float(np.nanmean([prob_improvement(scores[i][p][idx[i]],
                                                          scores[i][best[i]][idx[i]])
                                         for i in ids]))
            row["p_improvement"] = poi({i: np.arange(n[i]) for i in ids})
            sample = [poi(b) for b in boots[: max(200, samples // 10)]]
            row["p_improvement_lo"], row["p_improvement_hi"] = (
                float(np.percentile(sample, q)) for q in (2.5, 97.5))
        rows.append(row)
    return sorted(rows, key=lambda r: -r["iqm"])


def table(rows: Sequence[dict], ids: Sequence[str]) -> str:
    """Markdown: IQM with its CI, probability of improvement, and the mean score per id; the
    reference rules marked as such."""
    from mrsched_gym.evaluate import REFERENCE, policy_role
    short = [i.split("/")[-1].removesuffix("-v0") for i in ids]
    head = ["#", "policy", "IQM (95% CI)", "P(improvement) vs best baseline"] + short
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    for k, r in enumerate(rows, 1):
        poi = (f"{r['p_improvement']:.2f} ({r['p_improvement_lo']:.2f}, "
               f"{r['p_improvement_hi']:.2f})" if "p_improvement" in r else "")
        name = r["policy"] + (" (reference)" if policy_role(r["policy"]) == REFERENCE else "")
        cells = [str(k), name, f"{r['iqm']:.2f} ({r['iqm_lo']:.2f}, {r['iqm_hi']:.2f})",
                 poi] + [f"{r[f'score:{i}']:.2f}" for i in ids]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def paired_rows(records: Sequence[dict]) -> list[dict[str, Any]]:
    """Per id and agent: the paired comparison with the world's best reference rule and with its
    best baseline (each the one with the lowest mean headline on these seeds): the agent's mean,
    the rival's, the mean per-seed difference agent - rival with its 95% CI (Student's t over the
    seeds: common random numbers make each seed one world for both) and the number of seeds on
    which the agent is lower. Rivals that are absent (no reference rule named) are left out."""
    from mrsched_gym.evaluate import AGENT, REFERENCE, policy_role
    from mrsched_gym.results import mean_ci95
    out = []
    for env_id in dict.fromkeys(r["scenario"] for r in records):
        metric = headline_of(env_id)
        by: dict[str, dict[int, float]] = {}
        for r in records:
            if r["scenario"] == env_id:
                by.setdefault(r["policy"], {})[r["seed"]] = float(r[metric])
        means = {p: float(np.mean(list(v.values()))) for p, v in by.items()}
        rivals = {}
        for role, kind in ((REFERENCE, "rule"), (None, "baseline")):
            pool = [p for p in by if (policy_role(p) == role if role else is_anchor(p))]
            if pool:
                rivals[kind] = min(pool, key=lambda p: means[p])
        for agent in (p for p in by if policy_role(p) == AGENT):
            row: dict[str, Any] = {"scenario": env_id, "metric": metric, "policy": agent,
                                   "mean": means[agent]}
            for kind, rival in rivals.items():
                seeds = sorted(set(by[agent]) & set(by[rival]))
                diff = [by[agent][s] - by[rival][s] for s in seeds]
                mean, ci = mean_ci95(diff)
                row.update({f"best_{kind}": rival, f"{kind}_mean": means[rival],
                            f"diff_vs_{kind}": mean, f"ci_vs_{kind}": ci,
                            f"lower_vs_{kind}": sum(d < 0 for d in diff), "n": len(seeds)})
            out.append(row)
    return out


def paired_table(rows: Sequence[dict]) -> str:
    """Markdown of :func:`paired_rows`: per id and agent, the paired difference with the best
    reference rule and the best baseline (negative: the agent is better)."""
    def cell(r, kind):
        if f"best_{kind}" not in r:
            return ["-", "-"]
        d, ci = r[f"diff_vs_{kind}"], r[f"ci_vs_{kind}"]
        interval = (f"[{d - ci:+.3g}, {d + ci:+.3g}]" if math.isfinite(ci)
                    else f"(no CI from {r['n']} seed{'s' if r['n'] != 1 else ''})")
        return [f"{r[f'best_{kind}']} {r[f'{kind}_mean']:.3g}",
                f"{d:+.3g} {interval}, lower on {r[f'lower_vs_{kind}']}/{r['n']}"]
    head = ["id", "agent", "agent mean", "best reference rule", "agent - rule (95% CI)",
            "best baseline", "agent - baseline (95% CI)"]
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    for r in rows:
        lines.append("| " + " | ".join([r["scenario"].split("/")[-1], r["policy"],
                                        f"{r['mean']:.3g}", *cell(r, "rule"),
                                        *cell(r, "baseline")]) + " |")
    return "\n".join(lines)


def sample_phrase(ids: Sequence[str], seeds: Sequence[int]) -> str:
    """What an aggregate is over, for a caption: ``"12 ids x 10 seeds (100-109)"`` (the seeds
    listed when they are not one run of consecutive numbers)."""
    seeds = sorted(seeds)
    consecutive = len(seeds) > 1 and seeds == list(range(seeds[0], seeds[-1] + 1))
    which = f"{seeds[0]}-{seeds[-1]}" if consecutive else ", ".join(map(str, seeds))
    return (f"{len(ids)} id{'s' * (len(ids) != 1)} x {len(seeds)} "
            f"seed{'s' * (len(seeds) != 1)} ({which})")


def iqm_figure(rows: Sequence[dict], *, ids: Sequence[str], seeds: Sequence[int]):
    """Horizontal bars of the IQM with their 95% CIs, best on top, coloured by role (agents
    orange, reference rules green, baselines blue) with a legend of the roles present; the
    axis label says how many ids and seeds (``ids``, ``seeds``) each IQM is over."""
    from matplotlib.patches import Patch

    from mrsched_gym.evaluate import AGENT, BASELINE, REFERENCE, policy_role
    from mrsched_gym.evaluate.leaderboard import new_figure
    fig = new_figure(7.5, 0.32 * len(rows) + 2.0)
    ax = fig.add_subplot(111)
    names = [r["policy"] for r in rows][::-1]
    mid = np.array([r["iqm"] for r in rows][::-1])
    err = np.array([[r["iqm"] - r["iqm_lo"], r["iqm_hi"] - r["iqm"]] for r in rows][::-1]).T
    colour = {AGENT: "C1", REFERENCE: "C2", BASELINE: "C0"}
    label = {AGENT: "agent", REFERENCE: "reference rule", BASELINE: "baseline"}
    roles = [policy_role(n) for n in names]
    ax.barh(names, mid, xerr=np.maximum(err, 0), capsize=3, color=[colour[r] for r in roles])
    ax.axvline(0, color="grey", lw=0.8)
    ax.axvline(1, color="grey", lw=0.8, ls="--")
    ax.tick_params(axis="y", labelsize=8)
    ax.set_xlabel(f"normalised score: IQM over {sample_phrase(ids, seeds)}, 95% bootstrap CI"
                  "\n(0 = random, 1 = best baseline; higher is better)")
    present = [r for r in (AGENT, REFERENCE, BASELINE) if r in roles]
    ax.legend(handles=[Patch(color=colour[r], label=label[r]) for r in present],
              fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    fig.tight_layout()
    return fig


def plot_iqm(rows: Sequence[dict], path, *, ids: Sequence[str], seeds: Sequence[int]) -> Any:
    """Write :func:`iqm_figure` to ``path`` (durably; the whole figure, labels included)."""
    from mrsched_gym.results import save_figure
    fig = iqm_figure(rows, ids=ids, seeds=seeds)
    save_figure(fig, path, dpi=110, bbox_inches="tight")
    return path


__all__ = ["SUITE", "TEST_SEEDS", "aggregate", "best_baseline", "headline_of", "iqm",
           "iqm_figure", "is_anchor", "normalised_scores", "paired_rows", "paired_table",
           "plot_iqm", "prob_improvement", "sample_phrase", "table"]
