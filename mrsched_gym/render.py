"""Rendering: a text summary (``ansi``) and a running-tasks-per-job plot (``rgb_array``).

The plot follows thesis Fig. 3.4: running tasks of each job over time (solid: maps, dotted:
reduces), with each job's submission time and deadline marked.
"""

from __future__ import annotations

import math

import numpy as np

from mrsched_gym.sim.engine import DECISION_NAMES
from mrsched_gym.sim.state import ACTIVE, MAP


def render_ansi(sim) -> str:
    """A text snapshot: time, decision, node usage and the oldest active jobs."""
    lines = [f"t={sim.now:10.1f}s  decision={DECISION_NAMES[sim.kind]}  node={sim.node}  "
             f"candidates={len(sim.candidates)}  active={sim.n_active}  "
             f"f(t)={sim.availability_now():.2f}"]
    for n in range(sim.n_nodes):
        if sim.slots_mode:
            use = f"map {sim.used_map[n]}/{sim.map_slots[n]} red {sim.used_red[n]}/{sim.red_slots[n]}"
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
    jobs = sorted({j for _, _, j, _, _, _ in log})[:12]
    for k, jid in enumerate(jobs):
        color = f"C{k % 10}"
        job = sim.jobs[jid]
        for phase, style in ((MAP, "-"), (1, ":")):
            t, c = running_tasks_series(log, jid, phase, sim.now)
            if c.any():
                ax.step(t, c, where="post", linestyle=style, color=color,
                        label=f"J{jid} {job.profile.name}" if phase == MAP else None)
        ax.axvline(job.arrival_s, color=color, alpha=0.3, linewidth=0.8)
        if math.isfinite(job.deadline_s):
            ax.axvline(job.deadline_s, color=color, linestyle="--", alpha=0.6, linewidth=0.8)
    ax.set_xlabel("Elapsed time (s)")
    ax.set_ylabel("Running tasks")
    ax.set_title(f"{sim.scenario.name}: running tasks per job (solid map, dotted reduce)")
    if jobs:
        ax.legend(fontsize=7, loc="upper right")
    fig.tight_layout()
    canvas.draw()
    return np.asarray(canvas.buffer_rgba())[:, :, :3].copy()
