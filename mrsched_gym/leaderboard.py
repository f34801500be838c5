"""The leaderboard (``mrsched-gym compare``): ranked table, result files and plots."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from mrsched_gym.results import summarize

#: Metrics shown beside the headline (when not the headline itself). The JCT statistics are
#: followed by the share of the arrived jobs that really finished (SPEC 7: JCT metrics state
#: the finished fraction; an unserved job's JCT is the completion charged for it).
KEY_METRICS = ("deadline_miss_pct", "mean_jct_s", "p95_jct_s", "jobs_finished_pct",
               "utilisation", "data_locality_pct", "wasted_work_s", "web_response_mean_ms",
               "rejections")


def _fmt(mean: float, ci: float | None = None) -> str:
    if mean is None or (isinstance(mean, float) and math.isnan(mean)):
        return "-"
    s = f"{mean:.2f}" if abs(mean) < 1000 else f"{mean:.0f}"
    if ci is not None and not math.isnan(ci):
        s += f" ± {ci:.2f}" if abs(ci) < 1000 else f" ± {ci:.0f}"
    return s


def better_sign(metric: str) -> float:
    """-1 where higher is better (:data:`~mrsched_gym.metrics.HIGHER_IS_BETTER`), else 1."""
    from mrsched_gym.metrics import HIGHER_IS_BETTER
    return -1.0 if metric in HIGHER_IS_BETTER else 1.0


def ranked(records: Sequence[dict], headline: str) -> list[dict[str, Any]]:
    """Summary rows of one scenario, best first (lowest headline mean, or highest where higher
    is better)."""
    rows = summarize(records)
    sign = better_sign(headline)
    return sorted(rows, key=lambda r: (math.inf if math.isnan(r.get(f"{headline}_mean", math.nan))
                                       else sign * r[f"{headline}_mean"], r["policy"]))


def table(records: Sequence[dict], headline: str, notes: dict | None = None) -> str:
    """A Markdown table: rank, policy, headline mean ± 95% CI, then the key metrics' means."""
    rows = ranked(records, headline)
    keys = [k for k in KEY_METRICS if k != headline and any(
        not math.isnan(r.get(f"{k}_mean", math.nan)) for r in rows)]
    head = ["#", "policy", f"{headline} (mean ± 95% CI)"] + keys
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    for i, r in enumerate(rows, 1):
        name = r["policy"] + (f" ({notes[r['policy']]})" if notes and notes.get(r["policy"])
                              else "")
        cells = [str(i), name, _fmt(r.get(f"{headline}_mean", math.nan),
                                    r.get(f"{headline}_ci95", math.nan))]
        cells += [_fmt(r.get(f"{k}_mean", math.nan)) for k in keys]
        lines.append("| " + " | ".join(cells) + " |")
    n = rows[0]["n"] if rows else 0
    word = "higher" if better_sign(headline) < 0 else "lower"
    lines.append(f"\n{n} seeds per policy; {word} {headline} is better; "
                 "95% CI = Student's t over seeds (common random numbers).")
    return "\n".join(lines)


def paired_vs_best(records: Sequence[dict], headline: str) -> list[str]:
    """The paired differences (same worlds per seed: common random numbers), mean ± 95% CI and
    on how many seeds the first policy is better: each agent and each reference rule minus the
    best baseline (one of the spec's baselines: :func:`~mrsched_gym.evaluate.policy_role`),
    then each agent minus each reference rule."""
    from mrsched_gym.evaluate import AGENT, BASELINE, REFERENCE, policy_role
    order = [r["policy"] for r in ranked(records, headline)]
    role = {p: policy_role(p) for p in order}
    base = [p for p in order if role[p] == BASELINE]
    refs = [p for p in order if role[p] == REFERENCE]
    pairs = [(p, base[0]) for p in order if base and role[p] != BASELINE]
    pairs += [(a, r) for a in order if role[a] == AGENT for r in refs]
    return [line for a, b in pairs if (line := paired_line(records, headline, a, b))]


def paired_line(records: Sequence[dict], headline: str, a: str, b: str) -> str:
    """``a - b`` per seed over the seeds both ran, as a sentence ('' if they share none)."""
    from mrsched_gym.results import mean_ci95
    ref = {r["seed"]: r[headline] for r in records if r["policy"] == b}
    d = [x[headline] - ref[x["seed"]] for x in records if x["policy"] == a and x["seed"] in ref]
    if not d:
        return ""
    m, c = mean_ci95(d)
    higher = better_sign(headline) < 0
    wins = sum((v > 0) if higher else (v < 0) for v in d)
    return (f"{a} - {b} (paired over the same {len(d)} seeds): {_fmt(m, c)}; "
            f"{a} {'higher' if higher else 'lower'} on {wins}/{len(d)} seeds")


def new_figure(w: float, h: float):
    """A headless matplotlib ``Figure`` of ``w`` x ``h`` inches at 100 dpi (Agg, no pyplot)."""
    import matplotlib
    matplotlib.use("Agg")
    from matplotlib.figure import Figure
    return Figure(figsize=(w, h), dpi=100)


def plot_bars(records: Sequence[dict], headline: str, path: Path) -> Path:
    """Bars with 95% CIs for the headline and three key metrics, one bar per policy."""
    rows = ranked(records, headline)
    metrics = [headline] + [k for k in ("deadline_miss_pct", "mean_jct_s", "utilisation")
                            if k != headline][:3]
    fig = new_figure(4.2 * len(metrics), 4.6)
    names = [r["policy"] for r in rows]
    for k, m in enumerate(metrics):
        ax = fig.add_subplot(1, len(metrics), k + 1)
        mean = np.array([r.get(f"{m}_mean", math.nan) for r in rows], dtype=float)
        ci = np.nan_to_num(np.array([r.get(f"{m}_ci95", math.nan) for r in rows], dtype=float))
        ax.barh(range(len(rows)), np.nan_to_num(mean), xerr=ci, color=[
            "C0" if k == 0 else "C7"] * len(rows), capsize=2)
        ax.set_yticks(range(len(rows)))
        ax.set_yticklabels(names if k == 0 else [""] * len(rows), fontsize=8)
        ax.invert_yaxis()
        ax.set_title(m, fontsize=9)
    fig.suptitle(f"{records[0]['scenario']}: mean ± 95% CI over {rows[0]['n']} seeds")
    fig.tight_layout()
    from mrsched_gym.results import save_figure
    return save_figure(fig, path)


def plot_jct_cdf(records: Sequence[dict], path: Path, max_policies: int = 8,
                 headline: str | None = None) -> Path:
    """Empirical CDF of job completion times (all seeds pooled), the best policies."""
    rows = ranked(records, headline) if headline else summarize(records)
    names = [r["policy"] for r in rows][:max_policies]
    fig = new_figure(7, 4.5)
    ax = fig.add_subplot(111)
    for name in names:
        jct = np.sort(np.concatenate([np.asarray(r.get("_jct_s", []), dtype=float)
                                      for r in records if r["policy"] == name] or [np.zeros(0)]))
        if len(jct):
            ax.step(jct, np.arange(1, len(jct) + 1) / len(jct), where="post", label=name)
    ax.set_xscale("log")
    ax.set_xlabel("Job completion time (s)")
    ax.set_ylabel("Fraction of jobs")
    ax.set_title(f"{records[0]['scenario']}: job completion time CDF")
    ax.legend(fontsize=7)
    fig.tight_layout()
    from mrsched_gym.results import save_figure
    return save_figure(fig, path)


def plot_gantt(log, title: str, path: Path) -> Path:
    """Running tasks per job over time for one episode (thesis Fig. 3.4 style)."""
    from mrsched_gym.render import draw_gantt
    from mrsched_gym.workloads.profiles import TYPE_NAMES

    fig = new_figure(10, 5)
    ax = fig.add_subplot(111)
    draw_gantt(ax, log.task_log, log.arrival_s, log.deadline_s,
               [TYPE_NAMES[t] for t in log.type_idx], log.end_s, title)
    fig.tight_layout()
    from mrsched_gym.results import save_figure
    return save_figure(fig, path)
