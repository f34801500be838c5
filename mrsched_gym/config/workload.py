"""The workload section of a scenario: a synthetic generator, a fixed job list or a trace."""

from __future__ import annotations

from dataclasses import field
from typing import Annotated, Literal

from mrsched_gym.config.errors import check, exact_keys, in_range, lower_bound
from mrsched_gym.config.fields import (
    AS_LIST,
    Bool,
    Float,
    FloatMap,
    FloatPair,
    Int,
    Text,
    TextMap,
    section,
)
from mrsched_gym.frozen import FrozenDict
from mrsched_gym.workloads.profiles import PROFILES

#: The trace classes (:mod:`mrsched_gym.workloads.trace`): the keys of ``trace_types`` and
#: ``trace_keep``.
TRACE_CLASSES = ("map_only", "aggregate", "transform")


@section
class JobSpec:
    """One job of a fixed job list.

    Attributes:
        type: Job type name (see :mod:`mrsched_gym.workloads.profiles`).
        arrival_s: Submission time (s).
        n_maps: Number of map tasks.
        n_reduces: Number of reduce tasks; ``None`` = the type's default ratio.
        deadline_s: Completion time goal relative to arrival (s); ``None`` = no deadline.
        deadline_factor: Alternative to ``deadline_s``: factor x completion time alone (of the map
            phase alone with ``workload.deadline_scope: map``).
        priority: Priority class (higher preempts lower when preemption is enabled).
        weight: Weight in the deadline-miss penalty (RDS Eq. 1) and in Fair shares.
        map_work_s: Mean map task work override (s).
        reduce_work_s: Mean reduce task work override (s).
        work_cv: Coefficient of variation of task work override (0 = every task exactly the mean).
        arrival_jitter_s: Submission at ``arrival_s`` + U(-j, j) drawn per episode (0: none).
        label: Free-form label (e.g. the paper's J1).
    """

    type: Text
    arrival_s: Float = 0.0
    n_maps: Int = 10
    n_reduces: Int | None = None
    deadline_s: Float | None = None
    deadline_factor: Float | None = None
    priority: Int = 0
    weight: Float = 1.0
    map_work_s: Float | None = None
    reduce_work_s: Float | None = None
    work_cv: Float | None = None
    arrival_jitter_s: Float = 0.0
    label: Text = ""

    def __post_init__(self) -> None:
        check(self.type in PROFILES, "type",
               f"unknown job type {self.type!r}; known: {', '.join(PROFILES)}")
        lower_bound(self.arrival_s, 0, "arrival_s")
        lower_bound(self.n_maps, 1, "n_maps")
        check(self.n_reduces is None or self.n_reduces >= 0, "n_reduces",
               f"must be >= 0, got {self.n_reduces!r}")
        for name in ("deadline_s", "deadline_factor", "map_work_s", "reduce_work_s"):
            v = getattr(self, name)
            check(v is None or v > 0, name, f"must be > 0, got {v!r}")
        check(self.deadline_s is None or self.deadline_factor is None, "deadline_s",
               "give deadline_s or deadline_factor, not both")
        check(0 <= self.priority <= 9, "priority", f"must be in [0, 9], got {self.priority!r}")
        lower_bound(self.weight, 0, "weight", lo_open=True)
        check(self.work_cv is None or 0 <= self.work_cv <= 5, "work_cv",
               f"must be in [0, 5], got {self.work_cv!r}")
        check(0 <= self.arrival_jitter_s <= self.arrival_s, "arrival_jitter_s",
               f"must be in [0, arrival_s], got {self.arrival_jitter_s!r}")


@section
class WorkloadConfig:
    """The jobs of an episode.

    Attributes:
        kind: ``"synthetic"`` (thesis Table 5.6), ``"jobs"`` (the fixed list ``jobs``) or
            ``"trace"`` (replay of a job trace, :mod:`mrsched_gym.workloads.trace`).
        duration_s: Synthetic: arrivals are generated over ``[0, duration_s)``; trace: the
            window ``[trace_offset_s, trace_offset_s + duration_s)`` of the trace is replayed.
        load: Synthetic: target load factor = offered work / cluster capacity (thesis: 0.2-1.0).
        size_mean: Synthetic: mean number of map tasks per job (thesis: lognormal, mean 62).
        size_std: Synthetic: standard deviation of the number of map tasks (thesis: 15.5).
        type_mix: Synthetic: relative weights of job types.
        deadline_factor: Synthetic: deadline factor uniform in [lo, hi] x completion time alone
            (thesis: 1.5 to 4 / 8 / 12; RDS: 2.5).
        deadline_fraction: Synthetic: fraction of jobs that have a deadline.
        deadline_scope: What a deadline covers: ``"job"`` or ``"map"`` (the map phase, MIMP 3.1,
            Eq. 3-4): with ``map`` a job meets its deadline when its last map ends, the deadline
            base is the map phase alone, and the deadline metrics and ``deadline_penalty_h``'s
            lateness judge the map phase's end (an unserved job: the time limit plus its remaining
            map work alone); JCT and time-in-system metrics still cover the whole job.
        deadline_base: What ``deadline_factor`` multiplies: ``"analytic"`` (time alone in closed
            form) or ``"alone"`` (simulated alone on this cluster, :mod:`mrsched_gym.sim.alone`).
        map_only: Synthetic: the jobs have no reduce phase (the thesis ch. 5 simulator runs a
            single phase, 5.3.5.1 "Validation of the Simulation Platform").
        high_priority_fraction: Synthetic: fraction of jobs with priority 1 (others 0).
        weight_range: Synthetic: job weight uniform in [lo, hi] (RDS omega_j).
        task_work_scale: Synthetic: multiplier of every type's mean task work (longer tasks at
            the same load mean fewer jobs; thesis Table 5.6 has ~2500 jobs a week at load 1.0).
        jobs: The fixed job list (kind ``"jobs"``).
        trace: Trace: bundled name (``swim-fb2009-day0``) or path of a job trace (relative
            to the scenario file's folder when given in one).
        trace_offset_s: Trace: start of the replayed window in the trace (s).
        trace_random_window: Trace: draw the window's start per episode, uniform over the trace
            from ``trace_offset_s`` on (whole minutes), so seeds replay different hours.
        bytes_scale: Trace: multiplier of every byte count (scale a 600-node cluster's data to a
            small simulated cluster).
        max_maps: Trace: cap on map tasks per job (larger inputs get larger splits, so the work
            is conserved).
        reduce_mb: Trace: shuffle data per reduce task (MB); a job with shuffle bytes gets
            ceil(shuffle / reduce_mb) reduces (at most max_maps / 4); map-only jobs get none.
        trace_types: Trace: the job type standing for each trace class: ``map_only`` (no
            shuffle), ``aggregate`` (shuffle < input / 2) and ``transform`` (shuffle >= input / 2).
        task_model: Trace: ``"profile"`` (task work from the type's profile) or ``"aloja"``
            (task durations resampled from the ALOJA HiBench records).
        trace_rate_scale: Trace: arrival-rate multiplier in (0, 100]: ``duration_s x
            trace_rate_scale`` seconds of the trace are replayed in ``duration_s`` (inter-arrival
            times divided by it), so 2 doubles the jobs per hour (a thickened stream) and 0.5
            halves it (a thinned one); job sizes are unchanged.
        trace_keep: Trace: probability in [0, 1] that a job of each trace class (the keys of
            ``trace_types``) is replayed, drawn per job from the episode's job stream: below 1
            for every class thins the stream at the same pace; below 1 for some classes skews
            the mix (``map_only: 0.3`` leaves a reduce-heavy mix, ``aggregate`` and
            ``transform`` low a map-only-heavy one). A window thinned to no job keeps its first.
    """

    kind: Literal["synthetic", "jobs", "trace"] = "synthetic"
    duration_s: Float = 3600.0
    load: Float = 0.7
    size_mean: Float = 62.0
    size_std: Float = 15.5
    type_mix: FloatMap = field(
        default_factory=lambda: FrozenDict({"wordcount": 1.0, "sort": 1.0}))
    deadline_factor: FloatPair = (1.5, 8.0)
    deadline_fraction: Float = 1.0
    deadline_scope: Literal["job", "map"] = "job"
    deadline_base: Literal["analytic", "alone"] = "analytic"
    map_only: Bool = False
    high_priority_fraction: Float = 0.0
    weight_range: FloatPair = (1.0, 1.0)
    task_work_scale: Float = 1.0
    jobs: Annotated[tuple[JobSpec, ...], AS_LIST] = ()
    trace: Text | None = None
    trace_offset_s: Float = 0.0
    trace_random_window: Bool = False
    bytes_scale: Float = 1.0
    max_maps: Int = 400
    reduce_mb: Float = 1024.0
    trace_types: TextMap = field(default_factory=lambda: FrozenDict(
        {"map_only": "grep", "aggregate": "wordcount", "transform": "sort"}))
    task_model: Literal["profile", "aloja"] = "profile"
    trace_rate_scale: Float = 1.0
    trace_keep: FloatMap = field(default_factory=lambda: FrozenDict(
        {"map_only": 1.0, "aggregate": 1.0, "transform": 1.0}))

    @property
    def trace_span_s(self) -> float:
        """Trace: seconds of the trace one episode replays (``duration_s x
        trace_rate_scale``)."""
        return self.duration_s * self.trace_rate_scale

    def __post_init__(self) -> None:
        check(self.kind != "trace" or bool(self.trace), "trace", "required when kind is 'trace'")
        lower_bound(self.trace_offset_s, 0, "trace_offset_s")
        in_range(self.bytes_scale, 0.0, 1e6, "bytes_scale", lo_open=True)
        check(1 <= self.max_maps <= 100_000, "max_maps",
               f"must be in [1, 100000], got {self.max_maps!r}")
        lower_bound(self.reduce_mb, 0, "reduce_mb", lo_open=True)
        exact_keys(self.trace_types, TRACE_CLASSES, "trace_types")
        for k, v in self.trace_types.items():
            check(v in PROFILES, f"trace_types.{k}",
                   f"unknown job type {v!r}; known: {', '.join(PROFILES)}")
        in_range(self.trace_rate_scale, 0.0, 100.0, "trace_rate_scale", lo_open=True)
        exact_keys(self.trace_keep, TRACE_CLASSES, "trace_keep")
        for cls, p in self.trace_keep.items():
            in_range(p, 0.0, 1.0, f"trace_keep.{cls}")
        check(sum(self.trace_keep.values()) > 0, "trace_keep", "probabilities must not all be 0")
        lower_bound(self.duration_s, 0, "duration_s", lo_open=True)
        in_range(self.load, 0.0, 5.0, "load", lo_open=True)
        lower_bound(self.size_mean, 1, "size_mean")
        check(0 <= self.size_std <= 100 * self.size_mean, "size_std",
               f"must be in [0, 100 x size_mean = {100 * self.size_mean:g}], got {self.size_std!r}")
        check(len(self.type_mix) > 0, "type_mix", "needs at least one type")
        for name, w in self.type_mix.items():
            check(name in PROFILES, f"type_mix.{name}",
                   f"unknown job type; known: {', '.join(PROFILES)}")
            check(w >= 0, f"type_mix.{name}", f"weight must be >= 0, got {w!r}")
        check(sum(self.type_mix.values()) > 0, "type_mix", "weights must not all be 0")
        lo, hi = self.deadline_factor
        check(0 < lo <= hi, "deadline_factor", f"needs 0 < lo <= hi, got {self.deadline_factor}")
        in_range(self.deadline_fraction, 0.0, 1.0, "deadline_fraction")
        in_range(self.high_priority_fraction, 0.0, 1.0, "high_priority_fraction")
        wl, wh = self.weight_range
        check(0 < wl <= wh, "weight_range", f"needs 0 < lo <= hi, got {self.weight_range}")
        in_range(self.task_work_scale, 0.0, 1000.0, "task_work_scale", lo_open=True)
        check(self.kind != "jobs" or len(self.jobs) > 0, "jobs", "kind 'jobs' needs a job list")
