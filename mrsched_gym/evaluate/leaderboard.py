"""The leaderboard (``mrsched-gym compare``): ranked table, result files and plots."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from mrsched_gym.results import metric_range, summarize

#: Metrics shown beside the headline (when not the headline itself). The JCT statistics are
#: followed by the share of the arrived jobs that really finished (JCT metrics state
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
    """-1 where higher is better (:data:`~mrsched_gym.env.metrics.HIGHER_IS_BETTER`), else 1."""
    from mrsched_gym.env.metrics import HIGHER_IS_BETTER
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
    best baseline (one of the classical baselines: :func:`~mrsched_gym.evaluate.policy_role`),
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
    """A headless matplotlib ``Figure`` of ``w`` x ``h`` inches at 100 dpi, on an Agg canvas
    (no pyplot): its layout and text sizes are those of the saved PNG."""
    import matplotlib
    matplotlib.use("Agg")
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    fig = Figure(figsize=(w, h), dpi=100)
    FigureCanvasAgg(fig)
    return fig


def clipped_interval(mean: np.ndarray, half: np.ndarray, metric: str
                     ) -> tuple[np.ndarray, np.ndarray]:
    """The interval ``mean ± half`` clipped to :func:`metric_range` (an undefined half-width,
    one seed: no interval), as its lower and upper ends."""
    lo_b, hi_b = metric_range(metric)
    half = np.nan_to_num(np.asarray(half, dtype=float))
    mean = np.asarray(mean, dtype=float)
    return np.clip(mean - half, lo_b, hi_b), np.clip(mean + half, lo_b, hi_b)


def bars_figure(records: Sequence[dict], headline: str):
    """Bars of the means with their 95% CIs (Student's t over seeds, clipped to the metric's
    range: a non-negative metric's interval never goes below 0) for the headline and three key
    metrics, one bar per policy, best first."""
    rows = ranked(records, headline)
    metrics = [headline] + [k for k in ("deadline_miss_pct", "mean_jct_s", "utilisation")
                            if k != headline][:3]
    fig = new_figure(4.2 * len(metrics), 0.28 * len(rows) + 1.8)
    names = [r["policy"] for r in rows]
    for k, m in enumerate(metrics):
        ax = fig.add_subplot(1, len(metrics), k + 1)
        mean = np.array([r.get(f"{m}_mean", math.nan) for r in rows], dtype=float)
        ci = np.array([r.get(f"{m}_ci95", math.nan) for r in rows], dtype=float)
        lo, hi = clipped_interval(mean, ci, m)
        shown = np.nan_to_num(mean)
        err = np.vstack([np.nan_to_num(shown - lo), np.nan_to_num(hi - shown)])
        ax.barh(range(len(rows)), shown, xerr=np.maximum(err, 0), color=[
            "C0" if k == 0 else "C7"] * len(rows), capsize=2)
        ax.set_yticks(range(len(rows)))
        ax.set_yticklabels(names if k == 0 else [""] * len(rows), fontsize=8)
        ax.invert_yaxis()
        lo_b, hi_b = metric_range(m)
        if lo_b == 0:
            ax.set_xlim(left=0)
        better = "higher" if better_sign(m) < 0 else "lower"
        ax.set_title(f"{m}\n({better} is better)", fontsize=9)
    fig.suptitle(f"{records[0]['scenario']}: mean and 95% CI over {rows[0]['n']} seeds "
                 "(Student's t, clipped to the metric's range)", fontsize=10)
    fig.tight_layout()
    return fig


def plot_bars(records: Sequence[dict], headline: str, path: Path) -> Path:
    """Write :func:`bars_figure` to ``path`` (durably)."""
    from mrsched_gym.results import save_figure
    return save_figure(bars_figure(records, headline), path)


def jct_cdf_figure(records: Sequence[dict], headline: str | None = None):
    """Empirical CDF of job completion times (all seeds pooled), one line per policy, every
    policy (in ranking order when ``headline`` is given); a policy without completion times is
    named in the figure as left out."""
    from matplotlib import colormaps
    rows = ranked(records, headline) if headline else summarize(records)
    names = [r["policy"] for r in rows]
    fig = new_figure(9.5, 5)
    ax = fig.add_subplot(111)
    # ten colours that differ in hue (tab20's pairs are two shades of one hue), then the same
    # ten dashed, dotted, dash-dotted: 15 policies are 15 lines told apart by colour and dash
    palette = colormaps["tab10"].colors
    styles = ("-", "--", ":", "-.")
    missing = []
    for k, name in enumerate(names):
        jct = np.sort(np.concatenate([np.asarray(r.get("_jct_s", []), dtype=float)
                                      for r in records if r["policy"] == name] or [np.zeros(0)]))
        jct = jct[np.isfinite(jct)]
        if not len(jct):
            missing.append(name)
            continue
        ax.step(jct, np.arange(1, len(jct) + 1) / len(jct), where="post",
                label=f"{k + 1}. {name}" if headline else name, color=palette[k % 10],
                linestyle=styles[(k // 10) % 4], lw=1.6)
    ax.set_xscale("log")
    ax.set_xlabel("Job completion time (s, log scale)")
    ax.set_ylabel("Fraction of finished jobs (seeds pooled)")
    shown = len(names) - len(missing)
    title = f"{records[0]['scenario']}: job completion time CDF, all {shown} policies"
    if missing:
        title = (f"{records[0]['scenario']}: job completion time CDF, {shown} of {len(names)} "
                 f"policies\nleft out (no completion times): {', '.join(missing)}")
    ax.set_title(title, fontsize=10)
    if shown:
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0,
                  title=f"rank by {headline}" if headline else None, title_fontsize=7)
    fig.tight_layout()
    return fig


def plot_jct_cdf(records: Sequence[dict], path: Path, headline: str | None = None) -> Path:
    """Write :func:`jct_cdf_figure` to ``path`` (durably)."""
    from mrsched_gym.results import save_figure
    return save_figure(jct_cdf_figure(records, headline), path)


def gantt_figure(log, title: str, max_jobs: int = 150):
    """The job Gantt chart of one episode (:func:`~mrsched_gym.env.render.draw_gantt`): every job
    that arrived (or the ``max_jobs`` with the most task time, as the figure says), each in its
    own colour, the time axis ending at the episode's end. Returns the figure and the dict of
    :func:`~mrsched_gym.env.render.draw_gantt`."""
    from mrsched_gym.env.render import draw_gantt
    from mrsched_gym.workloads.profiles import TYPE_NAMES

    fig = new_figure(11, 6.5)
    drawn = draw_gantt(fig, log.task_log, log.arrival_s, log.deadline_s, log.deadline_finish_s,
                       [TYPE_NAMES[t] for t in log.type_idx], log.end_s, title,
                       max_jobs=max_jobs, finish_s=log.finish_s, rejected=log.rejected)
    fig.subplots_adjust(left=0.12, right=0.78, top=0.9, bottom=0.08)
    return fig, drawn


def plot_gantt(log, title: str, path: Path) -> Path:
    """Write :func:`gantt_figure` to ``path`` (durably)."""
    fig, _ = gantt_figure(log, title)
    from mrsched_gym.results import save_figure
    return save_figure(fig, path)
