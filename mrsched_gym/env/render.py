"""Rendering: a text summary (``ansi``), the job Gantt chart of ``compare``'s gantt.png
(:func:`draw_gantt`) and the ``rgb_array`` frames (:func:`render_rgb`).

Both charts show every job (one row each, by arrival, each in its own colour): when its map and
reduce tasks ran, its arrival and its deadline; gantt.png adds the running tasks stacked per job
(the content of thesis Fig. 3.4) and the ``rgb_array`` frames a current-time marker.
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


def job_colours(n: int) -> np.ndarray:
    """``[n, 3]`` RGB colours in [0, 1], one per job, all distinct: the perceptual ``turbo``
    colormap sampled at golden-ratio steps (consecutive jobs far apart in hue), its darkest and
    palest ends left out so that every job shows against white and black marks."""
    from matplotlib import colormaps
    pos = 0.08 + 0.84 * ((np.arange(n) * 0.6180339887) % 1.0)
    return np.asarray(colormaps["turbo"](pos))[:, :3]


def busy_spans(task_log: list, n_jobs: int) -> dict[tuple[int, int], list[tuple[float, float]]]:
    """Per ``(job, phase)``: the merged time spans in which at least one of its tasks ran."""
    by: dict[tuple[int, int], list[tuple[float, float]]] = {}
    for s, e, j, _, p, _ in task_log:
        if j < n_jobs and e > s:
            by.setdefault((j, 1 if p != MAP else 0), []).append((s, e))
    out = {}
    for key, segs in by.items():
        segs.sort()
        merged = [list(segs[0])]
        for s, e in segs[1:]:
            if s <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], e)
            else:
                merged.append([s, e])
        out[key] = [(a, b) for a, b in merged]
    return out


def shown_jobs(task_log: list, arrived: np.ndarray, max_jobs: int) -> tuple[list[int], str]:
    """The jobs a Gantt chart draws and the rule, as a phrase for the figure: every job that
    arrived, or, past ``max_jobs``, the ``max_jobs`` with the most task time (then by id)."""
    jobs = [int(j) for j in np.flatnonzero(arrived)]
    if len(jobs) <= max_jobs:
        return jobs, f"all {len(jobs)} jobs"
    work: dict[int, float] = {}
    for s, e, j, *_ in task_log:
        work[j] = work.get(j, 0.0) + (e - s)
    top = sorted(jobs, key=lambda j: (-work.get(j, 0.0), j))[:max_jobs]
    return sorted(top), (f"the {max_jobs} of {len(jobs)} jobs with the most task time "
                         "(rule: total running time of their tasks)")


def draw_gantt(fig, task_log: list, arrival_s, deadline_s, deadline_finish_s, labels,
               end_s: float, title: str, max_jobs: int = 150, finish_s=None,
               rejected=None) -> dict:
    """A job Gantt chart of one episode on ``fig`` (two axes sharing the time axis, 0 to
    ``end_s``, the episode's end).

    Top: running tasks over time, stacked per job. Bottom: one row per job, by job id (arrival
    order): bars where its map tasks ran (upper half, the job's colour) and its reduce tasks ran
    (lower half, paler), the time it spent in the system as a grey line, its arrival (black tick)
    and its deadline (black triangle if met, red if missed; at the right edge if after the end).
    Every job that arrived is drawn, each in its own colour (:func:`job_colours`), unless there
    are more than ``max_jobs``: then the ``max_jobs`` with the most task time, as the title says.

    Args:
        fig: A matplotlib figure (empty).
        task_log: ``(start, end, job, node, phase, outcome)`` segments.
        arrival_s: Submission time per job, by job id (``inf`` or later than ``end_s``: not
            arrived).
        deadline_s: Deadline per job, by job id (``inf``: none).
        deadline_finish_s: When the part of the job its deadline covers finished (``nan``: not).
        labels: Name per job, by job id (its type).
        end_s: The episode's end: the time axis runs from 0 to it.
        title: Figure title (the rule of the jobs shown is added).
        max_jobs: The most rows drawn.
        finish_s: Completion time per job (``nan``: unfinished; the grey line then runs to the
            end); default ``deadline_finish_s``.
        rejected: Per job, whether admission control refused it (a grey cross at its arrival,
            no line); default none.

    Returns:
        ``{"tasks": top axis, "jobs": bottom axis, "shown": job ids drawn, "colours": [n, 3]}``.
    """
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    arrival = np.asarray(arrival_s, dtype=float)
    deadline = np.asarray(deadline_s, dtype=float)
    dfinish = np.asarray(deadline_finish_s, dtype=float)
    finish = dfinish if finish_s is None else np.asarray(finish_s, dtype=float)
    n = len(arrival)
    shown, rule = shown_jobs(task_log, arrival <= end_s, max_jobs)
    n_arrived = int(np.sum(arrival <= end_s))
    refused = np.zeros(n, dtype=bool) if rejected is None else np.asarray(rejected, dtype=bool)
    colours = job_colours(len(shown))
    row = {j: k for k, j in enumerate(shown)}
    gs = fig.add_gridspec(2, 1, height_ratios=(1, 2.6), hspace=0.08)
    ax_t = fig.add_subplot(gs[0])
    ax_j = fig.add_subplot(gs[1], sharex=ax_t)

    # top: running tasks stacked per job (the jobs not drawn as rows in one grey layer at the
    # bottom), on the common grid of task start and end times
    other = len(shown)                              # the index of the grey layer
    segs = [(s, e, row.get(j, other)) for s, e, j, *_ in task_log if e > s]
    if segs:
        grid = np.unique(np.concatenate([[0.0, end_s], [s for s, _, _ in segs],
                                         [e for _, e, _ in segs]]))
        count = np.zeros((len(shown) + 1, len(grid)))
        for s, e, k in segs:
            count[k, np.searchsorted(grid, s):np.searchsorted(grid, e)] += 1
        base = np.zeros(len(grid))
        for k in (other, *range(len(shown))):
            if count[k].any():
                ax_t.fill_between(grid, base, base + count[k], step="post", lw=0,
                                  color="0.6" if k == other else colours[k],
                                  label=f"the {n_arrived - len(shown)} other jobs"
                                  if k == other else None)
                base = base + count[k]
        if count[other].any():
            ax_t.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0),
                        borderaxespad=0)
    ax_t.set_ylabel("Running tasks\n(stacked by job)")
    ax_t.tick_params(labelbottom=False)

    # bottom: one row per job
    spans = busy_spans(task_log, n)
    for k, j in enumerate(shown):
        c = colours[k]
        pale = 0.45 * c + 0.55
        leave = finish[j] if math.isfinite(finish[j]) else end_s
        if not refused[j]:
            ax_j.plot([arrival[j], max(leave, arrival[j])], [k, k], color="0.75", lw=0.8,
                      zorder=1)
        maps = [(a, b - a) for a, b in spans.get((j, 0), [])]
        reds = [(a, b - a) for a, b in spans.get((j, 1), [])]
        if maps:
            ax_j.broken_barh(maps, (k - 0.42, 0.42), facecolors=[c], zorder=2)
        if reds:
            ax_j.broken_barh(reds, (k, 0.42), facecolors=[pale], zorder=2)
    ks = np.arange(len(shown))
    idx = np.array(shown, dtype=int)
    ax_j.scatter(arrival[idx], ks, marker="|", s=30, color="black", lw=1.2, zorder=3)
    has = np.isfinite(deadline[idx])
    met = has & np.isfinite(dfinish[idx]) & (dfinish[idx] <= deadline[idx] + 1e-9)
    missed = has & ~met
    x_dl = np.minimum(deadline[idx], end_s)
    after = has & (deadline[idx] > end_s)
    for sel, colour, marker in ((met & ~after, "black", "v"), (missed & ~after, "red", "v"),
                                (met & after, "black", ">"), (missed & after, "red", ">")):
        if sel.any():
            ax_j.scatter(x_dl[sel], ks[sel] - 0.1, marker=marker, s=14, color=colour, zorder=4,
                         clip_on=marker == "v")
    if refused[idx].any():
        ax_j.scatter(arrival[idx][refused[idx]], ks[refused[idx]], marker="x", s=16,
                     color="0.45", lw=1, zorder=4)
    ax_j.set_xlim(0, end_s)
    ax_j.set_ylim(len(shown) - 0.5, -0.5)
    step = max(1, int(math.ceil(len(shown) / 12)))
    ax_j.set_yticks(ks[::step])
    ax_j.set_yticklabels([f"J{j} {labels[j]}" if labels is not None else f"J{j}"
                          for j in shown[::step]], fontsize=7)
    ax_j.set_ylabel("Job (by arrival)")
    ax_j.set_xlabel("Elapsed time (s); the axis ends at the episode's end")
    handles = [Patch(color="0.35", label="map tasks running (job's colour)"),
               Patch(color="0.75", label="reduce tasks running (paler)"),
               Line2D([], [], color="0.75", lw=0.8, label="in the system"),
               Line2D([], [], color="black", marker="|", ls="", ms=8, label="arrival"),
               Line2D([], [], color="black", marker="v", ls="", ms=5, label="deadline met"),
               Line2D([], [], color="red", marker="v", ls="", ms=5, label="deadline missed"),
               Line2D([], [], color="0.4", marker=">", ls="", ms=5,
                      label="deadline after the end")]
    if refused[idx].any():
        handles.append(Line2D([], [], color="0.45", marker="x", ls="", ms=5,
                              label="rejected at admission"))
    ax_j.legend(handles=handles, fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0),
                borderaxespad=0)
    fig.suptitle(f"{title}\n{rule}, one colour each", fontsize=10)
    return {"tasks": ax_t, "jobs": ax_j, "shown": shown, "colours": colours}


# ---------------------------------------------------------------------- rgb_array
#: Colours of the ``rgb_array`` frame's deadline marks and current-time line.
DEADLINE_RGB = np.array([110, 0, 170], dtype=np.uint8)
NOW_RGB = np.array([255, 0, 0], dtype=np.uint8)


def round_up(x: float) -> float:
    """The smallest of 1, 1.5, 2, 2.5, 3, 4, 5, 6, 8 times a power of ten that is >= ``x``
    (time axes repeat across episodes, so their static frames are drawn once)."""
    k = 10.0 ** math.floor(math.log10(max(x, 1e-9)))
    return next(m * k for m in (1, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10) if m * k >= x * (1 - 1e-12))


_STATIC: dict[tuple, tuple[np.ndarray, tuple[int, int, int, int]]] = {}


def static_frame(name: str, x_max: float, w: int, h: int
                 ) -> tuple[np.ndarray, tuple[int, int, int, int]]:
    """The static parts of an ``rgb_array`` frame (axes, time ticks to ``x_max``, labels,
    legend), drawn by matplotlib once per scenario name, axis and size in a process, and the
    plotting area's pixel columns and rows ``(x0, x1, y0, y1)`` inside the spines."""
    key = (name, x_max, w, h)
    if key in _STATIC:
        return _STATIC[key]
    import matplotlib
    matplotlib.use("Agg")
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    fig = Figure(figsize=(w / 100, h / 100), dpi=100)
    canvas = FigureCanvasAgg(fig)
    ax = fig.add_axes((0.06, 0.11, 0.72, 0.80))
    ax.set_xlim(0, x_max)
    ax.set_yticks([])
    ax.set_xlabel("Elapsed time (s)")
    ax.set_ylabel("Jobs, one row each, by arrival (first on top)")
    ax.set_title(f"{name}: tasks running per job (red line: now)", fontsize=10)
    handles = [Patch(color="0.35", label="map tasks (job's colour)"),
               Patch(color="0.75", label="reduce tasks (paler)"),
               Line2D([], [], color="black", lw=2, label="arrival"),
               Line2D([], [], color=DEADLINE_RGB / 255, lw=2, label="deadline"),
               Line2D([], [], color=NOW_RGB / 255, lw=2, label="now")]
    ax.legend(handles=handles, fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0),
              borderaxespad=0)
    canvas.draw()
    frame = np.asarray(canvas.buffer_rgba())[:, :, :3].copy()
    frame.setflags(write=False)
    bb = ax.get_window_extent()
    box = (int(math.ceil(bb.x0)) + 1, int(bb.x1) - 1,
           int(math.ceil(h - bb.y1)) + 1, int(h - bb.y0) - 1)
    if len(_STATIC) >= 32:
        _STATIC.pop(next(iter(_STATIC)))
    _STATIC[key] = (frame, box)
    return frame, box


class RgbRenderer:
    """The ``rgb_array`` frames of one episode, drawn with numpy onto a frame whose static
    parts (axes, ticks, labels, legend) matplotlib draws once per time axis
    (:func:`static_frame`, kept across episodes): one row per job, by arrival, with its map
    (upper half) and reduce (lower half, paler) tasks running, its arrival (black) and deadline
    (purple) marks, and the current time as a red vertical line (:data:`NOW_RGB`). Finished
    task segments are painted once, as they appear in the log."""

    def __init__(self, sim, width_px: int = 900, height_px: int = 500) -> None:
        self.sim = sim
        self.w, self.h = width_px, height_px
        self.x_max = 0.0
        self.n = 0

    def _layout(self) -> None:
        """Choose the time axis (a round number past the last arrival and now, grown by half
        when time passes it, at most the episode's time limit), take its static frame and
        reset the raster for the current job count."""
        sim = self.sim
        self.n = max(1, len(sim.jobs))
        arrivals = [j.arrival_s for j in sim.jobs if math.isfinite(j.arrival_s)]
        span = max([sim.now, *arrivals, 1.0])
        self.x_max = round_up(max(span * 1.15, self.x_max * 1.5))
        limit = sim.scenario.time_limit_s
        if limit is not None and sim.now <= limit < self.x_max:
            self.x_max = float(limit)                 # the episode ends there at the latest
        self.frame, (self.x0, self.x1, self.y0, self.y1) = static_frame(
            sim.scenario.name, self.x_max, self.w, self.h)
        pw, ph = self.x1 - self.x0, self.y1 - self.y0
        self.raster = np.full((ph, pw, 3), 255, dtype=np.uint8)
        cols = job_colours(self.n)
        self.colours = (cols * 255).astype(np.uint8)
        self.pale = ((0.45 * cols + 0.55) * 255).astype(np.uint8)
        edges = np.linspace(0, ph, self.n + 1)
        self.r0 = np.floor(edges[:-1]).astype(int)
        self.r1 = np.maximum(self.r0 + 1, np.floor(edges[1:]).astype(int))
        self.rmid = np.maximum(self.r0 + 1, (self.r0 + self.r1 + 1) // 2)
        self.painted = 0

    def _col(self, t: float) -> int:
        return int(min(self.x1 - self.x0 - 1, max(0.0, t / self.x_max * (self.x1 - self.x0))))

    def _paint(self, img: np.ndarray, s: float, e: float, jid: int, phase: int) -> None:
        if jid >= self.n:
            return
        a, b = self._col(s), self._col(e) + 1
        if phase == MAP:
            img[self.r0[jid]:self.rmid[jid], a:b] = self.colours[jid]
        else:
            img[self.rmid[jid]:self.r1[jid], a:b] = self.pale[jid]

    def frame_now(self) -> np.ndarray:
        """The frame of the simulator's current state (``[H, W, 3]`` uint8)."""
        sim = self.sim
        if self.n == 0 or sim.now > self.x_max or len(sim.jobs) != self.n:
            self._layout()
        log = sim.task_log
        for s, e, j, _, p, _ in log[self.painted:]:
            self._paint(self.raster, s, e, j, p)
        self.painted = len(log)
        img = self.raster.copy()
        for t in sim.running.values():
            self._paint(img, t.start_s, sim.now, t.job.jid, t.phase)
        jobs = sim.jobs
        arr = np.array([j.arrival_s for j in jobs], dtype=float)
        dl = np.array([j.deadline_s for j in jobs], dtype=float)
        seen = np.flatnonzero(arr <= sim.now)
        for jid in seen:
            c = self._col(arr[jid])
            img[self.r0[jid]:self.r1[jid], c:c + 2] = 0
            if math.isfinite(dl[jid]) and dl[jid] <= self.x_max:
                c = self._col(dl[jid])
                img[self.r0[jid]:self.r1[jid], c:c + 2] = DEADLINE_RGB
        c = self._col(sim.now)
        img[:, c:c + 2] = NOW_RGB
        out = self.frame.copy()
        out[self.y0:self.y1, self.x0:self.x1] = img
        return out


def render_rgb(sim, width_px: int = 900, height_px: int = 500) -> np.ndarray:
    """Tasks running per job over time, with a current-time marker, as an RGB array
    ``[H, W, 3]`` (uint8), drawn by a new :class:`RgbRenderer`. ``MRSchedEnv.render`` keeps one
    renderer per env instead, so that each frame only paints what changed."""
    return RgbRenderer(sim, width_px, height_px).frame_now()
