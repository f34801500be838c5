"""Learning-curve figures of training runs: validation mean against env steps, with the
baselines as lines."""

from __future__ import annotations

from pathlib import Path

import numpy as np


def curve_metric(env: str) -> str:
    """The y-axis label of a learning curve on ``env``: its headline metric, what is averaged
    and which way is better."""
    from mrsched_gym.evaluate import scenario_of
    from mrsched_gym.evaluate.leaderboard import better_sign
    headline = scenario_of(env).reward.headline
    better = "higher" if better_sign(headline) < 0 else "lower"
    return f"{headline}, mean over validation seeds\n({better} is better)"


def plot_learning_curves(histories: dict[str, list[dict]], baselines: dict[str, float],
                         path: Path, title: str = "", metric: str = "validation mean") -> Path:
    """Write :func:`learning_curve_figure` to ``path``."""
    fig = learning_curve_figure(histories, baselines, title, metric)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    return path


def learning_curve_figure(histories: dict[str, list[dict]], baselines: dict[str, float],
                          title: str = "", metric: str = "validation mean"):
    """Validation mean (band: 95% CI) against env steps for each run, baselines as lines, on
    linear axes; ``metric`` names the y axis (the headline metric and what is averaged).

    A run with one evaluation has no curve and so no band: its point is drawn with its 95% CI
    as an error bar (when it has one) and its legend entry says so."""
    from mrsched_gym.evaluate.leaderboard import new_figure
    fig = new_figure(8, 4.5)
    ax = fig.add_subplot(111)
    handles = []                                  # the legend in the order drawn
    for name, hist in histories.items():
        if not hist:
            continue
        x = np.array([h["step"] for h in hist], float)
        m = np.array([h["mean"] for h in hist], float)
        ci = np.array([h["ci95"] if h["ci95"] is not None else np.nan for h in hist], float)
        has_ci = bool(np.isfinite(ci).any())
        c = np.nan_to_num(ci)
        if len(hist) == 1:
            handles.append(ax.errorbar(
                x, m, yerr=c if has_ci else None, marker="o", capsize=4,
                label=f"{name} (one evaluation{', bar: 95% CI' if has_ci else ''})"))
            continue
        (line,) = ax.plot(x, m, marker=".", label=f"{name} (band: 95% CI)" if has_ci else name)
        handles.append(line)
        if has_ci:
            ax.fill_between(x, m - c, m + c, alpha=0.15, color=line.get_color())
    for i, (b, v) in enumerate(sorted(baselines.items(), key=lambda kv: kv[1])):
        handles.append(ax.axhline(v, ls="--", lw=1, color=f"C{i + len(histories)}",
                                  label=b if "baseline" in b else f"{b} (baseline)"))
    ax.set_xlabel("env steps (decisions)")
    ax.set_ylabel(metric)
    values = [h["mean"] for hist in histories.values() for h in hist] + list(baselines.values())
    if values and min(values) >= 0:
        ax.set_ylim(bottom=0)                     # a non-negative metric: from 0
    ax.set_title(title)
    ax.legend(handles=handles, fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0),
              borderaxespad=0)
    fig.tight_layout()
    return fig
