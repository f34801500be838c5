"""Trace replay: real job arrivals and sizes (SWIM Facebook 2009), task durations from ALOJA
HiBench.

Trace replay. A job trace gives, per job, its submit time and its map input, shuffle and
output bytes (no task counts, no durations). We turn each job in the replayed window into tasks:

* **Arrival**: submit time minus the window start, divided by ``trace_rate_scale`` (the window
  is ``[trace_offset_s, trace_offset_s + duration_s x trace_rate_scale)``, or a random window of
  that span per episode with ``trace_random_window``; a scale above 1 thickens the stream, below
  1 thins it).
* **Thinning and mix** (``trace_keep``): each job of the window is kept with its class's
  probability (classes below), drawn from the job stream only when some probability is below 1,
  so the default replays every job and draws nothing.
* **Maps**: input MB = map input bytes x ``bytes_scale``; n_maps = ceil(input / block_mb),
  clipped to [1, ``max_maps``] (capped jobs get larger splits, so work is conserved).
* **Reduces**: a job with zero shuffle bytes stays map-only; otherwise
  n_reduces = ceil(shuffle MB / ``reduce_mb``), clipped to [1, max(1, max_maps // 4)].
* **Type** (the trace has none): the class of the job picks a profile via ``trace_types``:
  ``map_only`` (no shuffle), ``aggregate`` (shuffle < input / 2: WordCount-like) and ``transform``
  (shuffle >= input / 2: Sort-like). The type sets resource demands, TCT and accelerator speed-ups.
* **Task work** (reference seconds): with ``task_model: profile`` the type's mean task work scaled
  by the split size, ``work = mean x clip(split_MB / block_MB, 0.1, inf)`` for maps and
  ``mean x clip(shuffle_per_reduce / reduce_mb, 0.1, inf)`` for reduces, lognormal around it with
  the type's cv (the 0.1 floor is Hadoop's per-task start-up cost: a 19 KB map is not free).
  With ``task_model: aloja`` the base durations are resampled from the ALOJA HiBench task records
  (:func:`aloja_durations`; 2,821 maps, median 37 s, p90 115 s; 245 reduces, median 411 s) and
  scaled by the same size factor. ALOJA's map durations are uncorrelated with their bytes read
  (r = -0.02, data README), which is why the record durations are resampled as a distribution
  rather than fitted as a throughput.
* **Deadlines, weights, priorities**: as the synthetic generator (``deadline_factor``,
  ``deadline_fraction``, ``deadline_scope``, ``weight_range``, ``high_priority_fraction``), drawn
  from the job stream.

Hardware speed factors (:func:`aloja_speed_factors`) compare executions of the same HiBench
benchmark on different hardware (InfiniBand + SSD vs Ethernet + HDD); the trace scenarios use them
for their fast node group.
"""

from __future__ import annotations

import csv
import functools
import math

import numpy as np

from mrsched_gym.config import MAX_TASKS, ClusterConfig, ConfigError, WorkloadConfig
from mrsched_gym.models.traces import (
    TraceError,
    file_version,
    read_job_trace,
    resolve_trace,
    trace_lines,
)
from mrsched_gym.workloads.jobs import JobDraw, JobPlan, make_job, make_jobs
from mrsched_gym.workloads.profiles import PROFILES, TYPE_NAMES

_MB = 1024.0 * 1024.0
MIN_WORK_FRACTION = 0.1


def job_trace(name: str) -> np.ndarray:
    """The rows of job trace ``name`` (a bundled name, or a path relative to the working
    directory), read once per :func:`~mrsched_gym.models.traces.file_version`, so an edited
    file, or the same relative name from another directory, is read again. The rows are
    read-only (every caller shares them). A simulator reads them once, when it is made
    (:class:`~mrsched_gym.sim.world.TraceCache`), and replays those in every episode."""
    return _job_trace_version(name, file_version(resolve_trace(name)))


@functools.lru_cache(maxsize=16)
def _job_trace_version(name: str, version: tuple[str, int, int, int, int]) -> np.ndarray:
    """``name``'s rows as :func:`job_trace` keys them (``name`` for the errors' wording)."""
    rows = read_job_trace(name)
    rows.flags.writeable = False
    return rows


def trace_window(cfg: WorkloadConfig, rng: np.random.Generator | None = None,
                 rows: np.ndarray | None = None) -> tuple[float, np.ndarray]:
    """``(start_s, rows [J, 4])``: the replayed window of ``cfg.trace`` (its ``rows`` if given,
    else read by :func:`job_trace`) and its jobs.

    The window spans ``cfg.trace_span_s``. The start is ``trace_offset_s``, or with
    ``trace_random_window`` a whole minute drawn from ``rng`` in ``[trace_offset_s, last submit -
    span]``; a drawn window that holds no job (a quiet stretch of a short or thinned window)
    starts at the next submit time instead. An empty fixed window raises.
    """
    rows = job_trace(cfg.trace) if rows is None else rows
    t = rows[:, 0]
    start = cfg.trace_offset_s
    width = cfg.trace_span_s
    if cfg.trace_random_window and rng is not None:
        span = max(0.0, t[-1] - width - start)
        start += 60.0 * math.floor(rng.uniform(0.0, span) / 60.0)
    sel = (t >= start) & (t < start + width)
    if not sel.any() and cfg.trace_random_window and rng is not None:
        start = float(t[np.searchsorted(t, start)])     # a quiet stretch: from the next job on
        sel = (t >= start) & (t < start + width)
    if not sel.any():
        raise ConfigError(f"workload.trace_offset_s: no job of {cfg.trace} is submitted in "
                          f"[{start}, {start + width}) "
                          f"(trace spans {t[0]:.0f}-{t[-1]:.0f} s)")
    return start, rows[sel]


def _read_csv(name: str) -> list[dict]:
    return list(csv.DictReader(text for _, text in trace_lines(resolve_trace(name))))


def task_counts(cfg: WorkloadConfig, cluster: ClusterConfig, rows: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(input_mb, shuffle_mb, n_maps, n_reduces)`` per trace row ``[J]`` (module docstring)."""
    in_mb = rows[:, 1] * cfg.bytes_scale / _MB
    sh_mb = rows[:, 2] * cfg.bytes_scale / _MB
    n_maps = np.clip(np.ceil(in_mb / cluster.block_mb), 1, cfg.max_maps).astype(int)
    max_red = max(1, cfg.max_maps // 4)
    n_red = np.where(rows[:, 2] > 0, np.clip(np.ceil(sh_mb / cfg.reduce_mb), 1, max_red),
                     0).astype(int)
    return in_mb, sh_mb, n_maps, n_red


def check_trace_size(cfg: WorkloadConfig, cluster: ClusterConfig) -> None:
    """Refuse a trace replay whose window holds more than ``MAX_TASKS`` tasks.

    With ``trace_random_window`` the busiest window the episode could draw counts (windows
    starting at each submit time from ``trace_offset_s`` on bound every window). Reads the trace
    (errors name the field ``workload.trace``); does nothing for other workload kinds.

    Raises:
        TraceError: The trace is malformed.
        ConfigError: The window is empty (:func:`trace_window`) or too large.
    """
    if cfg.kind != "trace":
        return
    try:
        rows = job_trace(cfg.trace)
    except TraceError as e:
        raise TraceError(f"workload.trace: {e}") from None
    trace_window(cfg)
    check_trace_reduces(cfg, cluster)
    _, _, n_maps, n_red = task_counts(cfg, cluster, rows)
    t = rows[:, 0]
    tasks = np.concatenate([[0], np.cumsum(n_maps + n_red)])
    starts = np.unique(np.concatenate([[cfg.trace_offset_s], t[t >= cfg.trace_offset_s]])) \
        if cfg.trace_random_window else np.array([cfg.trace_offset_s])
    lo = np.searchsorted(t, starts, side="left")
    hi = np.searchsorted(t, starts + cfg.trace_span_s, side="left")
    k = int(np.argmax(tasks[hi] - tasks[lo]))
    n_tasks, n_jobs = int(tasks[hi[k]] - tasks[lo[k]]), int(hi[k] - lo[k])
    if n_tasks > MAX_TASKS:
        raise ConfigError(
            f"workload.trace: the window [{starts[k]:.0f}, {starts[k] + cfg.trace_span_s:.0f}) s "
            f"of {cfg.trace} holds {n_jobs:,} jobs with {n_tasks:,} tasks, more than the limit "
            f"of {MAX_TASKS:,} tasks; lower workload.duration_s, workload.trace_rate_scale, "
            "workload.bytes_scale or workload.max_maps, or raise cluster.block_mb")


def check_trace_reduces(cfg: WorkloadConfig, cluster: ClusterConfig) -> None:
    """Refuse a trace replay whose jobs may have reduces on a cluster without reduce slots.

    A trace job with shuffle bytes gets reduce tasks; with every node group at
    ``reduce_slots: 0`` no replayed window from ``trace_offset_s`` on may hold one.

    Raises:
        ConfigError: Such a job exists (naming its submit time).
    """
    if cfg.kind != "trace" or cluster.has_reduce_slots:
        return
    rows = job_trace(cfg.trace)
    if cfg.trace_random_window:
        sel = rows[:, 0] >= cfg.trace_offset_s
    else:
        sel = (rows[:, 0] >= cfg.trace_offset_s) & (rows[:, 0] < cfg.trace_offset_s
                                                     + cfg.trace_span_s)
    shuffled = rows[sel & (rows[:, 2] > 0)]
    if len(shuffled):
        raise ConfigError(
            f"cluster.nodes: every node group has reduce_slots 0 but the job of {cfg.trace} "
            f"submitted at {shuffled[0, 0]:.0f} s shuffles data, so it has reduce tasks; give "
            "some node group reduce slots (MIMP 3.1: reduces run on the dedicated nodes)")


@functools.lru_cache(maxsize=1)
def aloja_durations() -> tuple[np.ndarray, np.ndarray]:
    """``(map_s, reduce_s)``: task durations (s) of the ALOJA HiBench records (tasks under 1 s,
    the clock's resolution, count as 1 s)."""
    rows = _read_csv("aloja-hibench-tasks")
    dur = {"map": [], "reduce": []}
    for r in rows:
        dur[r["type"]].append(max(1.0, float(r["duration_s"])))
    return np.asarray(dur["map"]), np.asarray(dur["reduce"])


@functools.lru_cache(maxsize=1)
def aloja_speed_factors() -> dict[str, float]:
    """Speed of each hardware configuration relative to the slowest run of the same benchmark,
    ``{"bench:NET+DISK": factor}``, for benchmarks run on more than one configuration."""
    rows = _read_csv("aloja-hibench-execs")
    by_bench: dict[str, dict[str, float]] = {}
    for r in rows:
        by_bench.setdefault(r["bench"], {})[f"{r['net']}+{r['disk']}"] = float(r["exe_time_s"])
    out = {}
    for bench, runs in sorted(by_bench.items()):
        if len(runs) > 1:
            slowest = max(runs.values())
            for hw, t in sorted(runs.items()):
                out[f"{bench}:{hw}"] = slowest / t
    return out


def trace_classes(rows: np.ndarray) -> np.ndarray:
    """The class of each trace row ``[J]`` (module docstring): ``map_only``, ``aggregate`` or
    ``transform``."""
    return np.where(rows[:, 2] == 0, "map_only",
                    np.where(rows[:, 2] < 0.5 * rows[:, 1], "aggregate", "transform"))


def thin(cfg: WorkloadConfig, rows: np.ndarray, cls: np.ndarray, rng: np.random.Generator
         ) -> tuple[np.ndarray, np.ndarray]:
    """``(rows, cls)`` of the jobs ``trace_keep`` keeps (one draw per job from ``rng``, none when
    every probability is 1); a window thinned to no job keeps its first."""
    if all(p >= 1.0 for p in cfg.trace_keep.values()):
        return rows, cls
    p = np.array([cfg.trace_keep[str(c)] for c in cls], float)
    keep = rng.random(len(rows)) < p
    if not keep.any():
        keep[0] = True
    return rows[keep], cls[keep]


def trace_jobs(cfg: WorkloadConfig, cluster: ClusterConfig, job_rng: np.random.Generator,
               task_rng: np.random.Generator, place_rng: np.random.Generator,
               trace_rows: np.ndarray | None = None) -> list[JobDraw]:
    """Replay the trace window (see module docstring) of ``trace_rows`` (the trace's rows as
    the simulator read them; ``None``: read by :func:`job_trace`)."""
    start, rows = trace_window(cfg, job_rng, trace_rows)
    cls = trace_classes(rows)
    rows, cls = thin(cfg, rows, cls, job_rng)
    n = len(rows)
    arrivals = rows[:, 0] - start
    if cfg.trace_rate_scale != 1.0:
        arrivals = arrivals / cfg.trace_rate_scale
    in_mb, sh_mb, n_maps, n_red = task_counts(cfg, cluster, rows)
    block = cluster.block_mb
    split_f = np.maximum(MIN_WORK_FRACTION, in_mb / n_maps / block)
    red_f = np.maximum(MIN_WORK_FRACTION, sh_mb / np.maximum(n_red, 1) / cfg.reduce_mb)
    # job-stream draws, vectorised and in a fixed order
    lo, hi = cfg.deadline_factor
    factors = job_rng.uniform(lo, hi, size=n)
    has_deadline = job_rng.random(n) < cfg.deadline_fraction
    high = job_rng.random(n) < cfg.high_priority_fraction
    weights = job_rng.uniform(cfg.weight_range[0], cfg.weight_range[1], size=n)
    if cfg.task_model == "aloja":
        map_pool, red_pool = aloja_durations()
    out = []
    plans = []
    for i in range(n):
        p = PROFILES[cfg.trace_types[str(cls[i])]]
        nm, nr = int(n_maps[i]), int(n_red[i])
        if cfg.task_model == "aloja":      # one job at a time: its work draws come first
            mwork = task_rng.choice(map_pool, size=nm) * split_f[i]
            rwork = task_rng.choice(red_pool, size=nr) * red_f[i]
            mw = float(map_pool.mean() * split_f[i])
            rw = float(red_pool.mean() * red_f[i])
            out.append(make_job(TYPE_NAMES.index(p.name), float(arrivals[i]), math.inf,
                                int(high[i]), float(weights[i]), nm, nr, mw, rw, task_rng,
                                place_rng, cluster, map_work=mwork, reduce_work=rwork))
        else:
            mw = p.map_work_s * float(split_f[i])
            rw = p.reduce_work_s * float(red_f[i])
            plans.append(JobPlan(TYPE_NAMES.index(p.name), float(arrivals[i]), math.inf,
                                 int(high[i]), float(weights[i]), nm, nr, mw, rw))
    if plans:                              # all at once: the same draws (make_jobs)
        out = make_jobs(plans, task_rng, place_rng, cluster)
    for i, draw in enumerate(out):
        if has_deadline[i]:
            base = draw.map_alone_s if cfg.deadline_scope == "map" else draw.alone_s
            draw.deadline_s = float(arrivals[i] + factors[i] * base)
            draw.deadline_factor = float(factors[i])
    return out
