"""Rendering: a text summary (``ansi``) and a running-tasks-per-job plot (``rgb_array``).

The plot follows thesis Fig. 3.4: running tasks of each job over time (solid: maps, dotted:
reduces), with each job's submission time and deadline marked.
"""

from __future__ import annotations

import math

import numpy as np

from mrsched_gym.sim.decision import DECISION_NAMES
from mrsched_gym.sim.state import ACTIVE, MAP


def render_ansi(sim) -> str:
    """A text snapshot: time, decision, node usage and the oldest active jobs."""
    d = sim.decision
    lines = [f"t={sim.now:10.1f}s  decision={DECISION_NAMES[d.kind]}  node={d.node}  "
             f"candidates={len(d.candidates)}  active={sim.n_active}  "
             f"f(t)={sim.availability_now():.2f}"]
    for n in range(sim.n_nodes):
        if sim.slots_mode:
            use = (f"map {sim.used_map[n]}/{sim.map_slots[n]} "
                   f"red {sim.used_red[n]}/{sim.red_slots[n]}")
        else:
            use = f"cpu {sim.res[n][0]:.2f}/{sim.cap[n]:.2f} mem {sim.res[n][2]:.2f}"
        flags = ("S" if sim.shared[n] else "D") + ("A" if sim.accel[n] else "-") + \
            ("" if sim.up[n] else " DOWN")
        lines.append(f"  node {n:3d} [{flags}] {use}  r={sim.residual[n]:.2f} "
                     f"susp={len(sim.susp_on[n])}")
    active = [j for j in sim.jobs if j.state == ACTIVE][:10]
    for j in active:
        dl = "-" if not math.isfinite(j.deadline_s) else f"{j.deadline_s - sim.now:8.0f}s"
        lines.append(f"  job {j.jid:4d} {j.profile.name:10s} maps {j.maps_done}/{j.n_maps} "
                     f"red {j.reduces_done}/{j.n_reduces} run {j.maps_running + j.reduces_running}"
                     f" deadline in {dl}")
    return "\n".join(lines)


def running_tasks_series(task_log: list, jid: int, phase: int, end_s: float
                         ) -> tuple[np.ndarray, np.ndarray]:
    """Step series (times, running count) of one job's tasks of one phase from the task log."""
    ev = [(s, 1) for s, e, j, _, p, _ in task_log if j == jid and p == phase]
    ev += [(e, -1) for s, e, j, _, p, _ in task_log if j == jid and p == phase]
    if not ev:
        return np.array([0.0, end_s]), np.array([0, 0])
    ev.sort()
    t = np.array([x for x, _ in ev])
    c = np.cumsum([d for _, d in ev])
    return t, c


def draw_gantt(ax, task_log: list, arrival_s, deadline_s, labels, end_s: float,
               title: str, max_jobs: int = 12) -> None:
    """Running tasks per job over time on a matplotlib axis (thesis Fig. 3.4 style).

    Args:
        ax: The axis.
        task_log: ``(start, end, job, node, phase, outcome)`` segments.
        arrival_s: Submission time per job, by job id.
        deadline_s: Deadline per job, by job id.
        labels: Name per job, by job id.
        end_s: End of the time axis.
        title: Axis title.
        max_jobs: Jobs drawn (the first started).
    """
    jobs = sorted({j for _, _, j, _, _, _ in task_log})[:max_jobs]
    for k, jid in enumerate(jobs):
        color = f"C{k % 10}"
        for phase, style in ((MAP, "-"), (1, ":")):
            t, c = running_tasks_series(task_log, jid, phase, end_s)
            if c.any():
                ax.step(t, c, where="post", linestyle=style, color=color,
                        label=f"J{jid} {labels[jid]}" if phase == MAP else None)
        ax.axvline(arrival_s[jid], color=color, alpha=0.3, linewidth=0.8)
        if math.isfinite(deadline_s[jid]):
            ax.axvline(deadline_s[jid], color=color, linestyle="--", alpha=0.6, linewidth=0.8)
    ax.set_xlabel("Elapsed time (s)")
    ax.set_ylabel("Running tasks")
    ax.set_title(title)
    if jobs:
        ax.legend(fontsize=7, loc="upper right")


def render_rgb(sim, width_px: int = 900, height_px: int = 500) -> np.ndarray:
    """Running tasks per job over time as an RGB array ``[H, W, 3]`` (uint8)."""
    import matplotlib
    matplotlib.use("Agg")
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width_px / 100, height_px / 100), dpi=100)
    canvas = FigureCanvasAgg(fig)
    ax = fig.add_subplot(111)
    log = list(sim.task_log) + [(t.start_s, sim.now, t.job.jid, t.node, t.phase, "running")
                                for t in sim.running.values()]
    draw_gantt(ax, log, [j.arrival_s for j in sim.jobs], [j.deadline_s for j in sim.jobs],
               [j.profile.name for j in sim.jobs], sim.now,
               f"{sim.scenario.name}: running tasks per job (solid map, dotted reduce)")
    fig.tight_layout()
    canvas.draw()
    return np.asarray(canvas.buffer_rgba())[:, :, :3].copy()
