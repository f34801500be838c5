"""Scenario configuration: frozen, typed dataclasses; YAML is only their file format.

A scenario is everything that defines a world: the cluster, the interactive services, availability,
the workload, which decision kinds the policy gets, the reward and the episode limit. Unknown keys
and bad values raise :class:`ConfigError` naming the file and the dotted field path:

* every float field must be a finite number (``.inf`` and ``.nan`` are refused), every field has
  its declared type (bools are not numbers; numpy scalars are accepted), and fields with a fixed
  set of values are ``Literal`` types (a typo such as ``accelerator: cel`` is refused);
* a key repeated in one YAML mapping is an error naming the key and the line
  (:class:`UniqueKeyLoader`);
* a scenario whose episode would exhaust memory or time is refused with the numbers and the
  limit (:func:`episode_size`, ``MAX_*`` below).

Load with :func:`load_scenario` (a path or a bundled name such as ``"hadoop"``); apply overrides
with :func:`with_overrides` (``{"workload": {"load": 0.8}}`` or ``{"workload.load": 0.8}``).

A relative file path inside a scenario file (every ``trace:`` field that is not a bundled trace
name) is read relative to the folder of that scenario file, not the working directory
(:func:`resolve_relative_paths` makes it absolute when the file is loaded); a path given as an
override (``--set workload.trace=...``) is relative to the working directory as usual.
"""

from __future__ import annotations

import collections.abc
import dataclasses
import functools
import math
import numbers
import os
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Literal, TypeVar, Union, cast

import numpy as np
import yaml

from mrsched_gym.errors import InputTypeError, MRSchedError
from mrsched_gym.frozen import FrozenDict
from mrsched_gym.workloads.profiles import ACCELERATORS, PROFILES


class ConfigError(MRSchedError, ValueError):
    """A scenario file or object is malformed. The message names the file (if any) and field."""


# Episode-size limits, checked when a scenario is built (:func:`episode_size`). They keep a typo
# (``step_s: 0.001``, ``count: 5000000``) from exhausting memory or running for hours, and leave
# room above the largest bundled scenario, thesis_scale (100 nodes; ~170,000 tasks expected,
# ~105,000 run; 2,305 interference steps over 8 simulated days; ~10 s and ~115 MB an episode):
# 100x its nodes, ~6x its tasks (scaling its run linearly, a 1,000,000-task episode takes ~2
# minutes and ~1 GB) and ~400x its steps.
#: Nodes in the cluster (observation rows; per-node state and timelines).
MAX_NODES = 10_000
#: Map + reduce tasks of an episode (each costs ~0.5 KB and ~0.1 ms of simulation).
MAX_TASKS = 1_000_000
#: Steps of one periodic timeline (interference load, availability f(t), orchestrator epochs):
#: each is an event and an array column.
MAX_PERIODIC_STEPS = 1_000_000
#: Nodes x steps of one per-node timeline (web load of shared nodes; node up/down states).
MAX_TIMELINE_CELLS = 10_000_000
#: Simulated time of an episode (366 days).
MAX_TIME_LIMIT_S = 366 * 86400.0
#: Nodes x expected decisions (about one per task) of an episode: what a step costs grows with
#: the cluster (observation rows, candidate and node scans), so the two limits above do not
#: bound an episode's time together. Measured on one core: 10,000 nodes run at ~4-5k decisions
#: per second at the start of an episode, slower as queues grow (an audit saw 0.45k/s), so an
#: episode at this limit (e.g. 10,000 nodes x 100,000 tasks) takes minutes per policy and
#: anything larger is refused with the estimate.
MAX_NODE_DECISIONS = 1_000_000_000


def _check(cond: bool, fld: str, msg: str) -> None:
    if not cond:
        raise ConfigError(f"{fld}: {msg}")


def _is_number(value: Any) -> bool:
    """A real number that is not a bool (numpy scalars included)."""
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


def _is_integer(value: Any) -> bool:
    """An integer that is not a bool (numpy integer scalars included)."""
    return isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))


@functools.cache
def _field_rules(cls: type) -> tuple[tuple[str, str, tuple], ...]:
    """``(field, rule, choices)`` for every field of a config dataclass, from its type hints.

    Rules: ``number`` (a finite number), ``numbers`` (a tuple of them), ``number_map`` (a
    mapping to them), ``integer``, ``flag`` (a bool), ``text`` (a string), ``choice`` (one of
    the ``Literal``'s values), ``choices`` (a tuple of such values); ``""`` = no generic rule.
    """
    rules = []
    for name, tp in typing.get_type_hints(cls).items():
        if typing.get_origin(tp) in (Union, types.UnionType):
            tp = [a for a in typing.get_args(tp) if a is not type(None)][0]
        origin, args = typing.get_origin(tp), typing.get_args(tp)
        if origin is Literal:
            rules.append((name, "choice", args))
        elif origin is tuple and args and typing.get_origin(args[0]) is Literal:
            rules.append((name, "choices", typing.get_args(args[0])))
        elif origin is tuple and args and all(a in (float, Ellipsis) for a in args):
            rules.append((name, "numbers", ()))
        elif origin in (collections.abc.Mapping, dict) and args and args[1] is float:
            rules.append((name, "number_map", ()))
        else:
            rule = {float: "number", int: "integer", bool: "flag", str: "text"}.get(tp, "")
            rules.append((name, rule, ()))
    return tuple(rules)


def _short(value: Any, limit: int = 60) -> str:
    """``repr(value)`` on one line, cut to ``limit`` characters, for error messages (numpy
    scalars print as plain values)."""
    r = " ".join((str(value) if isinstance(value, np.generic) else repr(value)).split())
    return r if len(r) <= limit else r[: limit - 3] + "..."


def _choice_list(choices: tuple) -> str:
    return ", ".join(repr(c) for c in choices)


def _check_fields(obj: Any) -> None:
    """The checks every config field gets from its declared type, before the per-class ones.

    Floats must be finite numbers (``.inf`` and ``.nan`` are refused everywhere); integers,
    flags and strings must have their type; a ``Literal`` field must hold one of its values.
    ``None`` is left to the class (it is only allowed where the type is ``Optional``).
    """
    for name, rule, choices in _field_rules(type(obj)):
        v = getattr(obj, name)
        if v is None or not rule:
            continue
        if rule == "number":
            _check(_is_number(v) and math.isfinite(v), name, f"must be a finite number, got {v!r}")
        elif rule == "numbers":
            for i, x in enumerate(v):
                _check(_is_number(x) and math.isfinite(x), f"{name}[{i}]",
                       f"must be a finite number, got {x!r}")
        elif rule == "number_map":
            for k, x in v.items():
                _check(_is_number(x) and math.isfinite(x), f"{name}.{k}",
                       f"must be a finite number, got {x!r}")
        elif rule == "integer":
            _check(_is_integer(v), name, f"must be an integer, got {v!r}")
        elif rule == "flag":
            _check(isinstance(v, (bool, np.bool_)), name, f"must be true or false, got {v!r}")
        elif rule == "text":
            _check(isinstance(v, str), name, f"must be a string, got {v!r}")
        elif rule == "choice":
            _check(v in choices, name, f"must be one of {_choice_list(choices)}; got {v!r}")
        elif rule == "choices":
            for x in v:
                _check(x in choices, name, f"unknown value {x!r}; allowed: {_choice_list(choices)}")


def _in_range(value: float, lo: float, hi: float, fld: str, *, lo_open: bool = False) -> None:
    ok = (value > lo if lo_open else value >= lo) and value <= hi and math.isfinite(value)
    bracket = "(" if lo_open else "["
    _check(ok, fld, f"must be in {bracket}{lo}, {hi}], got {value!r}")


@dataclass(frozen=True)
class NodeGroup:
    """A group of identical nodes.

    Attributes:
        count: Number of nodes in the group.
        cpu_cores: CPU cores per node.
        mem_gb: Memory per node (GB).
        disk_mb_s: Disk bandwidth per node (MB/s); page-in/out of suspended tasks runs at this rate.
        net_mb_s: Network bandwidth per node (MB/s); remote block reads and shuffle use it.
        disk_gb: Disk space (GB), used only by the default slot rule.
        cpu_speed: Relative CPU speed (reference node = 1.0).
        accelerator: Accelerator kind on these nodes or ``None``; one of the kinds job profiles
            are sped up by (:data:`~mrsched_gym.workloads.profiles.ACCELERATORS`: ``"cell"``).
        kind: ``"dedicated"`` or ``"shared"`` (co-hosts an interactive service, MIMP 3.1).
        map_slots: Map slots per node (slots mode); ``None`` = MROrchestrator rule
            min{C-1, (M-2)/2, D/50} (MROrchestrator footnote 1).
        reduce_slots: Reduce slots per node (slots mode); ``None`` = half the map slots, at least 1.
            ``0`` = the nodes run maps only (MIMP 3.1: shared nodes run map tasks, reduces run
            on dedicated nodes); slots mode only, and some node of the cluster must keep reduce
            slots when the workload has reduce tasks (:class:`Scenario` refuses it otherwise).
    """

    count: int = 1
    cpu_cores: int = 8
    mem_gb: float = 16.0
    disk_mb_s: float = 100.0
    net_mb_s: float = 125.0
    disk_gb: float = 500.0
    cpu_speed: float = 1.0
    accelerator: str | None = None
    kind: Literal["dedicated", "shared"] = "dedicated"
    map_slots: int | None = None
    reduce_slots: int | None = None

    def __post_init__(self) -> None:
        _check_fields(self)
        _check(self.count >= 1, "count", f"must be >= 1, got {self.count}")
        _check(self.count <= MAX_NODES, "count",
               f"{self.count:,} nodes, more than the limit of {MAX_NODES:,}")
        _check(self.cpu_cores >= 1, "cpu_cores", f"must be >= 1, got {self.cpu_cores}")
        _check(self.mem_gb > 0, "mem_gb", f"must be > 0, got {self.mem_gb}")
        for name in ("disk_mb_s", "net_mb_s", "disk_gb"):
            _check(getattr(self, name) > 0, name, f"must be > 0, got {getattr(self, name)}")
        _in_range(self.cpu_speed, 0.001, 1000.0, "cpu_speed")
        _check(self.accelerator is None or self.accelerator in ACCELERATORS, "accelerator",
               f"unknown accelerator {self.accelerator!r}; known: {', '.join(ACCELERATORS)} "
               "(the kinds job profiles are sped up by), or null for none")
        _check(self.map_slots is None or 1 <= self.map_slots <= 64, "map_slots",
               f"must be null or in [1, 64], got {self.map_slots}")
        _check(self.reduce_slots is None or 0 <= self.reduce_slots <= 64, "reduce_slots",
               f"must be null or in [0, 64] (0 = maps only), got {self.reduce_slots}")

    @property
    def effective_map_slots(self) -> int:
        """Map slots per node: configured, or MROrchestrator's Hadoop rule (MROrchestrator,
        footnote 1)."""
        if self.map_slots is not None:
            return self.map_slots
        rule = min(self.cpu_cores - 1, (self.mem_gb - 2) / 2, self.disk_gb / 50)
        return max(1, int(rule))

    @property
    def effective_reduce_slots(self) -> int:
        """Reduce slots per node: configured (0 = maps only), or half the map slots (at least
        one)."""
        if self.reduce_slots is not None:
            return self.reduce_slots
        return max(1, self.effective_map_slots // 2)


@dataclass(frozen=True)
class ClusterConfig:
    """The cluster: node groups, racks, resource mode, locality and contention settings.

    Attributes:
        nodes: Node groups; nodes are numbered group by group.
        racks: Number of racks; node i sits in rack i % racks.
        resource_mode: ``"slots"`` (Hadoop 1 map/reduce slots) or ``"containers"`` (YARN / RAS job
            slots: a task fits where its per-phase demand fits in the free capacity).
        replication: HDFS replicas per input block (distinct nodes; at most one per node).
        hdfs_on: Nodes that are HDFS data nodes, i.e. hold block replicas: ``"all"`` or
            ``"dedicated"`` (only nodes of ``kind: dedicated``; MIMP 3.1: "we use dedicated
            servers to run both the shared Hadoop file system and all reduce tasks", so every
            map on a shared node reads its block remotely and loads a dedicated data node, MIMP
            5.1 "Data Node I/O"). Replicas are spread over the data nodes only, at most one per
            node (:attr:`effective_replication`).
        block_mb: HDFS block size (MB): what a map task reads.
        off_rack_factor: Cost multiplier of an off-rack read relative to a rack-local one.
        memory_overcommit: ``"swap"`` (tasks slow down) or ``"fail"`` (newest task is killed).
        swap_slowdown: Slowdown per unit of relative memory shortfall (spill or swap): a task
            with allocation m below its demand d runs at 1 / (1 + swap_slowdown * (1 - m/d)).
        orchestrator: MROrchestrator setting: ``"none"``, ``"uniform"`` or ``"regression"``
            (MROrchestrator III, Algorithms 1-2): every ``orchestrator_epoch_s`` the node-level
            orchestrator re-divides each node's memory and, on a node whose CPU is contended,
            its CPU among the running tasks, by the UNIFORM (job-phase mean) or REGRESSION
            (per-task need; CPU by progress rate relative to the job-phase) estimates (module
            docstring of :mod:`mrsched_gym.sim.rates`). ``"none"``: static per-slot memory,
            CPU in proportion to demand.
        orchestrator_epoch_s: Re-allocation period of the orchestrator (MROrchestrator: 20 s).
        task_demand_cv: Per-task variation of resource demand around its profile (lognormal cv).
    """

    nodes: tuple[NodeGroup, ...] = (NodeGroup(count=10),)
    racks: int = 1
    resource_mode: Literal["slots", "containers"] = "slots"
    replication: int = 3
    hdfs_on: Literal["all", "dedicated"] = "all"
    block_mb: float = 128.0
    off_rack_factor: float = 2.0
    memory_overcommit: Literal["swap", "fail"] = "swap"
    swap_slowdown: float = 3.0
    orchestrator: Literal["none", "uniform", "regression"] = "none"
    orchestrator_epoch_s: float = 20.0
    task_demand_cv: float = 0.25

    def __post_init__(self) -> None:
        _check_fields(self)
        _check(len(self.nodes) >= 1, "nodes", "needs at least one node group")
        _check(self.n_nodes <= MAX_NODES, "nodes",
               f"{self.n_nodes:,} nodes in all, more than the limit of {MAX_NODES:,}")
        _check(1 <= self.racks <= self.n_nodes, "racks",
               f"must be in [1, n_nodes={self.n_nodes}], got {self.racks}")
        _check(1 <= self.replication <= 16, "replication",
               f"must be in [1, 16], got {self.replication}")
        _check(self.block_mb >= 1, "block_mb", f"must be >= 1 (HDFS's smallest block), got "
               f"{self.block_mb!r}")
        _check(self.off_rack_factor >= 1, "off_rack_factor",
               f"must be >= 1, got {self.off_rack_factor}")
        _in_range(self.swap_slowdown, 0.0, 1000.0, "swap_slowdown")
        _check(self.orchestrator_epoch_s > 0, "orchestrator_epoch_s",
               f"must be > 0, got {self.orchestrator_epoch_s}")
        _in_range(self.task_demand_cv, 0.0, 2.0, "task_demand_cv")
        _check(self.hdfs_on == "all" or any(g.kind == "dedicated" for g in self.nodes),
               "hdfs_on", "'dedicated' needs at least one node group of kind 'dedicated'")
        for i, g in enumerate(self.nodes):
            _check(g.reduce_slots != 0 or self.resource_mode == "slots",
                   f"nodes[{i}].reduce_slots",
                   "0 (maps only) needs resource_mode 'slots' (containers place reduces by "
                   "their demand, not by slots)")

    @property
    def n_nodes(self) -> int:
        """Total number of nodes."""
        return sum(g.count for g in self.nodes)

    @property
    def data_nodes(self) -> tuple[int, ...]:
        """Indices of the nodes holding HDFS block replicas (all, or the dedicated ones with
        ``hdfs_on: dedicated``), numbered group by group as the simulator numbers nodes."""
        out: list[int] = []
        first = 0
        for g in self.nodes:
            if self.hdfs_on == "all" or g.kind == "dedicated":
                out.extend(range(first, first + g.count))
            first += g.count
        return tuple(out)

    @property
    def n_data_nodes(self) -> int:
        """Number of HDFS data nodes (:attr:`data_nodes`)."""
        if self.hdfs_on == "all":
            return self.n_nodes
        return sum(g.count for g in self.nodes if g.kind == "dedicated")

    @property
    def effective_replication(self) -> int:
        """Replicas actually placed: HDFS cannot place more than one per data node."""
        return min(self.replication, self.n_data_nodes)

    @property
    def has_reduce_slots(self) -> bool:
        """Whether some node can run reduce tasks (containers: always)."""
        return self.resource_mode != "slots" or any(
            g.effective_reduce_slots > 0 for g in self.nodes)


@dataclass(frozen=True)
class InterferenceConfig:
    """Interactive services on shared nodes (MIMP 2, 4).

    Attributes:
        policy: Hypervisor CPU policy: ``"credit"`` (Xen Credit) or ``"background"`` (MIMP MI).
        load: Web CPU demand generator: ``"constant"``, ``"diurnal"``, ``"bursty"`` or ``"trace"``.
        mean: Mean web CPU demand u as a fraction of the node's CPU.
        amplitude: Diurnal amplitude (fraction of CPU) or burst height (bursty).
        period_s: Period of the diurnal cycle (s).
        step_s: Resolution of the piecewise-constant load series (s).
        noise: Standard deviation of per-step multiplicative noise.
        trace: Path or bundled name of a load trace (``load: trace``), e.g. ``nasa-http-1995``;
            scaled so its mean over the episode window is ``mean``. A relative path in a
            scenario file is relative to that file's folder.
        trace_offset_s: Where in the trace the episode starts (s).
        min_share: Starvation guard of the background policy (e/p, MIMP 4.2) and minimum credit
            share of the Hadoop VM.
        response_alone_ms: Web response time alone (MIMP Table 1: 25 ms).
        credit_inflation: Response-time inflation at full Hadoop CPU use under credit
            (MIMP Table 1: 175.5/25 - 1 = 6.02).
        background_inflation: The same under the background policy (MIMP 6.2: near alone).
        slo_ms: Response-time service-level objective.
    """

    policy: Literal["credit", "background"] = "background"
    load: Literal["constant", "diurnal", "bursty", "trace"] = "diurnal"
    mean: float = 0.4
    amplitude: float = 0.3
    period_s: float = 86400.0
    step_s: float = 300.0
    noise: float = 0.05
    trace: str | None = None
    trace_offset_s: float = 0.0
    min_share: float = 0.02
    response_alone_ms: float = 25.0
    credit_inflation: float = 6.02
    background_inflation: float = 0.05
    slo_ms: float = 100.0

    def __post_init__(self) -> None:
        _check_fields(self)
        _in_range(self.mean, 0.0, 1.0, "mean")
        _in_range(self.amplitude, 0.0, 1.0, "amplitude")
        _check(self.period_s >= 1, "period_s", f"must be >= 1, got {self.period_s!r}")
        _in_range(self.step_s, 0.0, MAX_TIME_LIMIT_S, "step_s", lo_open=True)
        _in_range(self.noise, 0.0, 1.0, "noise")
        _check(self.load != "trace" or bool(self.trace), "trace", "required when load is 'trace'")
        _check(self.trace_offset_s >= 0, "trace_offset_s",
               f"must be >= 0, got {self.trace_offset_s!r}")
        _in_range(self.min_share, 0.0, 1.0, "min_share")
        _check(self.response_alone_ms > 0, "response_alone_ms",
               f"must be > 0, got {self.response_alone_ms!r}")
        _check(self.credit_inflation >= 0, "credit_inflation",
               f"must be >= 0, got {self.credit_inflation!r}")
        _check(self.background_inflation >= 0, "background_inflation",
               f"must be >= 0, got {self.background_inflation!r}")
        _check(self.slo_ms > 0, "slo_ms", f"must be > 0, got {self.slo_ms!r}")


@dataclass(frozen=True)
class AvailabilityConfig:
    """Capacity offered to MapReduce over time, f(t) (RDS, thesis ch. 5).

    Attributes:
        generator: ``"none"``, ``"diurnal"``, ``"bursty"``, ``"onoff"``, ``"trace"`` or
            ``"transactional"`` (a transactional workload's load trace takes capacity:
            f = 1 - (1 - min_fraction) x load / peak load, thesis 5.3.3 and 5.3.5.1).
        mode: ``"nodes"`` (nodes leave and join; running work on a leaving node is lost) or
            ``"capacity"`` (every node's CPU capacity is scaled by f(t)).
        step_s: Resolution of f(t) (s).
        min_fraction: Lowest value of f(t).
        period_s: Diurnal period (s); ``transactional``: the length of the trace window (from
            ``trace_offset_s``) that repeats over the episode (thesis 5.3.5.1: one day).
        level: Burstiness level 1-3 (thesis Fig. 5.22: more and larger dips at higher levels).
        mean_on_s: On/off generator: mean up time of a node (s).
        mean_off_s: On/off generator: mean down time of a node (s).
        trace: Path or bundled name of an availability trace (``generator: trace``), e.g.
            ``google-2019-cpu`` or ``pvwatts-golden``; values are divided by their maximum over
            the episode window and mapped into [min_fraction, 1] (a trace that is 0 throughout is
            refused). A relative path in a scenario file is relative to that file's folder.
        trace_offset_s: Where in the trace the episode starts (s).
        trace_invert: Use 1 - value (a usage trace whose complement is the free capacity).
        forecast_steps: Length of the forecast window exposed to policies (steps of ``step_s``).
        forecast_noise: Std of multiplicative forecast error (0 = the true future f(t)).
    """

    generator: Literal["none", "diurnal", "bursty", "onoff", "trace", "transactional"] = "none"
    mode: Literal["nodes", "capacity"] = "nodes"
    step_s: float = 300.0
    min_fraction: float = 0.5
    period_s: float = 86400.0
    level: int = 1
    mean_on_s: float = 7200.0
    mean_off_s: float = 900.0
    trace: str | None = None
    trace_offset_s: float = 0.0
    trace_invert: bool = False
    forecast_steps: int = 8
    forecast_noise: float = 0.0

    def __post_init__(self) -> None:
        _check_fields(self)
        _in_range(self.step_s, 0.0, MAX_TIME_LIMIT_S, "step_s", lo_open=True)
        _in_range(self.min_fraction, 0.0, 1.0, "min_fraction", lo_open=True)
        _check(self.period_s >= 1, "period_s", f"must be >= 1, got {self.period_s!r}")
        _check(self.level in (1, 2, 3), "level", f"must be 1, 2 or 3, got {self.level}")
        _check(self.mean_on_s > 0, "mean_on_s", f"must be > 0, got {self.mean_on_s!r}")
        _check(self.mean_off_s > 0, "mean_off_s", f"must be > 0, got {self.mean_off_s!r}")
        _check(self.generator not in ("trace", "transactional") or bool(self.trace), "trace",
               f"required when generator is {self.generator!r}")
        _check(not (self.generator == "transactional" and self.trace_invert), "trace_invert",
               "a transactional trace is read as the load taking capacity already")
        _check(self.trace_offset_s >= 0, "trace_offset_s",
               f"must be >= 0, got {self.trace_offset_s!r}")
        _check(1 <= self.forecast_steps <= 256, "forecast_steps",
               f"must be in [1, 256], got {self.forecast_steps!r}")
        _in_range(self.forecast_noise, 0.0, 2.0, "forecast_noise")


@dataclass(frozen=True)
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

    type: str
    arrival_s: float = 0.0
    n_maps: int = 10
    n_reduces: int | None = None
    deadline_s: float | None = None
    deadline_factor: float | None = None
    priority: int = 0
    weight: float = 1.0
    map_work_s: float | None = None
    reduce_work_s: float | None = None
    work_cv: float | None = None
    arrival_jitter_s: float = 0.0
    label: str = ""

    def __post_init__(self) -> None:
        _check_fields(self)
        _check(self.type in PROFILES, "type",
               f"unknown job type {self.type!r}; known: {', '.join(PROFILES)}")
        _check(self.arrival_s >= 0, "arrival_s", f"must be >= 0, got {self.arrival_s!r}")
        _check(self.n_maps >= 1, "n_maps", f"must be >= 1, got {self.n_maps}")
        _check(self.n_reduces is None or self.n_reduces >= 0, "n_reduces",
               f"must be >= 0, got {self.n_reduces!r}")
        for name in ("deadline_s", "deadline_factor", "map_work_s", "reduce_work_s"):
            v = getattr(self, name)
            _check(v is None or v > 0, name, f"must be > 0, got {v!r}")
        _check(self.deadline_s is None or self.deadline_factor is None, "deadline_s",
               "give deadline_s or deadline_factor, not both")
        _check(0 <= self.priority <= 9, "priority", f"must be in [0, 9], got {self.priority!r}")
        _check(self.weight > 0, "weight", f"must be > 0, got {self.weight!r}")
        _check(self.work_cv is None or 0 <= self.work_cv <= 5, "work_cv",
               f"must be in [0, 5], got {self.work_cv!r}")
        _check(0 <= self.arrival_jitter_s <= self.arrival_s, "arrival_jitter_s",
               f"must be in [0, arrival_s], got {self.arrival_jitter_s!r}")


@dataclass(frozen=True)
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
    """

    kind: Literal["synthetic", "jobs", "trace"] = "synthetic"
    duration_s: float = 3600.0
    load: float = 0.7
    size_mean: float = 62.0
    size_std: float = 15.5
    type_mix: Mapping[str, float] = field(
        default_factory=lambda: FrozenDict({"wordcount": 1.0, "sort": 1.0}))
    deadline_factor: tuple[float, float] = (1.5, 8.0)
    deadline_fraction: float = 1.0
    deadline_scope: Literal["job", "map"] = "job"
    deadline_base: Literal["analytic", "alone"] = "analytic"
    map_only: bool = False
    high_priority_fraction: float = 0.0
    weight_range: tuple[float, float] = (1.0, 1.0)
    task_work_scale: float = 1.0
    jobs: tuple[JobSpec, ...] = ()
    trace: str | None = None
    trace_offset_s: float = 0.0
    trace_random_window: bool = False
    bytes_scale: float = 1.0
    max_maps: int = 400
    reduce_mb: float = 1024.0
    trace_types: Mapping[str, str] = field(default_factory=lambda: FrozenDict(
        {"map_only": "grep", "aggregate": "wordcount", "transform": "sort"}))
    task_model: Literal["profile", "aloja"] = "profile"

    def __post_init__(self) -> None:
        _check_fields(self)
        _check(self.kind != "trace" or bool(self.trace), "trace", "required when kind is 'trace'")
        _check(self.trace_offset_s >= 0, "trace_offset_s",
               f"must be >= 0, got {self.trace_offset_s!r}")
        _in_range(self.bytes_scale, 0.0, 1e6, "bytes_scale", lo_open=True)
        _check(1 <= self.max_maps <= 100_000, "max_maps",
               f"must be in [1, 100000], got {self.max_maps!r}")
        _check(self.reduce_mb > 0, "reduce_mb", f"must be > 0, got {self.reduce_mb!r}")
        _check(set(self.trace_types) == {"map_only", "aggregate", "transform"}, "trace_types",
               "needs exactly the keys map_only, aggregate, transform")
        for k, v in self.trace_types.items():
            _check(v in PROFILES, f"trace_types.{k}",
                   f"unknown job type {v!r}; known: {', '.join(PROFILES)}")
        _check(self.duration_s > 0, "duration_s", f"must be > 0, got {self.duration_s!r}")
        _in_range(self.load, 0.0, 5.0, "load", lo_open=True)
        _check(self.size_mean >= 1, "size_mean", f"must be >= 1, got {self.size_mean!r}")
        _check(0 <= self.size_std <= 100 * self.size_mean, "size_std",
               f"must be in [0, 100 x size_mean = {100 * self.size_mean:g}], got {self.size_std!r}")
        _check(len(self.type_mix) > 0, "type_mix", "needs at least one type")
        for name, w in self.type_mix.items():
            _check(name in PROFILES, f"type_mix.{name}",
                   f"unknown job type; known: {', '.join(PROFILES)}")
            _check(w >= 0, f"type_mix.{name}", f"weight must be >= 0, got {w!r}")
        _check(sum(self.type_mix.values()) > 0, "type_mix", "weights must not all be 0")
        lo, hi = self.deadline_factor
        _check(0 < lo <= hi, "deadline_factor", f"needs 0 < lo <= hi, got {self.deadline_factor}")
        _in_range(self.deadline_fraction, 0.0, 1.0, "deadline_fraction")
        _in_range(self.high_priority_fraction, 0.0, 1.0, "high_priority_fraction")
        wl, wh = self.weight_range
        _check(0 < wl <= wh, "weight_range", f"needs 0 < lo <= hi, got {self.weight_range}")
        _in_range(self.task_work_scale, 0.0, 1000.0, "task_work_scale", lo_open=True)
        _check(self.kind != "jobs" or len(self.jobs) > 0, "jobs", "kind 'jobs' needs a job list")


@dataclass(frozen=True)
class PreemptionConfig:
    """Preemption decisions (Pastorelli et al.).

    Attributes:
        enabled: Offer preemption decisions when a higher-priority job is waiting.
        primitives: Primitives the policy may choose: ``"kill"`` and/or ``"suspend"``;
            ``wait`` is the skip action.
        kill_cleanup_s: Clean-up time that occupies the slot after a kill (Pastorelli et al. IV-C).
        max_suspended_per_node: Suspended tasks a node may hold.
    """

    enabled: bool = False
    primitives: tuple[Literal["kill", "suspend"], ...] = ("kill", "suspend")
    kill_cleanup_s: float = 2.0
    max_suspended_per_node: int = 2

    def __post_init__(self) -> None:
        _check_fields(self)
        _check(len(self.primitives) >= 1, "primitives", "needs at least one primitive")
        _check(len(set(self.primitives)) == len(self.primitives), "primitives",
               f"duplicates in {list(self.primitives)}")
        _check(self.kill_cleanup_s >= 0, "kill_cleanup_s",
               f"must be >= 0, got {self.kill_cleanup_s!r}")
        _check(self.max_suspended_per_node >= 0, "max_suspended_per_node",
               f"must be >= 0, got {self.max_suspended_per_node!r}")


@dataclass(frozen=True)
class SpeculationConfig:
    """Speculative-execution decisions (LATE, Zaharia et al., OSDI 2008).

    With ``enabled``, a node with room that no pending task can use is offered for a backup
    copy of a running task (``SPECULATE`` decision, :mod:`mrsched_gym.sim.speculation`).
    Which task to copy, and whether to copy at all, is the policy's choice: LATE's
    SpeculativeCap, SlowTaskThreshold and SlowNodeThreshold are parameters of the ``late``
    baseline, not of the cluster.

    Attributes:
        enabled: Offer speculation decisions.
        min_runtime_s: A task is a candidate only after running this long (Hadoop's one-minute
            rule: progress estimates of younger tasks are too noisy to act on).
    """

    enabled: bool = False
    min_runtime_s: float = 60.0

    def __post_init__(self) -> None:
        _check_fields(self)
        _check(self.min_runtime_s >= 0, "min_runtime_s",
               f"must be >= 0, got {self.min_runtime_s!r}")


@dataclass(frozen=True)
class DecisionConfig:
    """What the policy decides.

    Attributes:
        max_candidates: K, the number of candidate slots in the action and observation.
        slow_start: Fraction of maps that must finish before reduces launch (Hadoop: 0.05).
        admission: Offer an accept/reject decision for each arriving job (MIMP 5.3).
        preemption: Preemption decisions.
        speculation: Speculative-execution decisions.
    """

    max_candidates: int = 8
    slow_start: float = 0.05
    admission: bool = False
    preemption: PreemptionConfig = PreemptionConfig()
    speculation: SpeculationConfig = SpeculationConfig()

    def __post_init__(self) -> None:
        _check_fields(self)
        _check(1 <= self.max_candidates <= 256, "max_candidates",
               f"must be in [1, 256], got {self.max_candidates!r}")
        _in_range(self.slow_start, 0.0, 1.0, "slow_start")


#: Reward components and the metric each one sums to over an episode (see mrsched_gym.rewards).
COMPONENT_METRICS: Mapping[str, str] = FrozenDict({
    "jct": "time_in_system_h",
    "deadline": "deadline_penalty_h",
    "slo": "slo_violation_h",
    "wasted": "wasted_work_h",
    "idle": "idle_capacity_h",
    "rejection": "rejections",
})
REWARD_COMPONENTS: tuple[str, ...] = tuple(COMPONENT_METRICS)


@dataclass(frozen=True)
class RewardConfig:
    """Reward = - sum_c weight_c * increment of component c (see :mod:`mrsched_gym.rewards`).

    Attributes:
        weights: Weight per component (``jct``, ``deadline``, ``slo``, ``wasted``, ``idle``,
            ``rejection``). Missing components weigh 0.
        headline: The headline metric (a component's metric name). The episode return equals
            minus ``objective`` = sum_c weight_c * metric_c, which is the headline metric itself
            when the weights are ``{component: 1}``, as on every registered id (tested).
    """

    weights: Mapping[str, float] = field(default_factory=lambda: FrozenDict({"deadline": 1.0}))
    headline: str = "deadline_penalty_h"

    def __post_init__(self) -> None:
        _check_fields(self)
        for k in self.weights:
            _check(k in REWARD_COMPONENTS, f"weights.{k}",
                   f"unknown component; known: {', '.join(REWARD_COMPONENTS)}")
        _check(any(v != 0 for v in self.weights.values()), "weights", "all weights are 0")
        _check(self.headline in COMPONENT_METRICS.values(), "headline",
               f"must be one of {', '.join(COMPONENT_METRICS.values())}; got {self.headline!r}")


@dataclass(frozen=True)
class Scenario:
    """A complete world definition.

    Attributes:
        name: Scenario name.
        description: One-paragraph description.
        cluster: The cluster.
        interference: Interactive services on shared nodes.
        availability: Dynamic availability.
        workload: The jobs.
        decisions: What the policy decides.
        reward: Reward components and headline metric.
        time_limit_s: Simulated-time limit (truncation).
        stats_window_s: ``(start, end)``: the job statistics (counts, deadline and JCT metrics)
            count only the jobs submitted or completed in ``[start, end)``, the steady state of
            a long run (thesis 5.3.5.1: 7 days simulated, the middle 5 studied, "considering
            only jobs that either start or finish within that time window"; a job's start is its
            submission). ``None``: every job. The reward and the objective's components always
            cover the whole episode.
    """

    name: str = "custom"
    description: str = ""
    cluster: ClusterConfig = ClusterConfig()
    interference: InterferenceConfig = InterferenceConfig()
    availability: AvailabilityConfig = AvailabilityConfig()
    workload: WorkloadConfig = WorkloadConfig()
    decisions: DecisionConfig = DecisionConfig()
    reward: RewardConfig = RewardConfig()
    time_limit_s: float = 86400.0
    stats_window_s: tuple[float, float] | None = None

    def __post_init__(self) -> None:
        _check_fields(self)
        _check(0 < self.time_limit_s <= MAX_TIME_LIMIT_S, "time_limit_s",
               f"must be in (0, {MAX_TIME_LIMIT_S:,.0f}] s (366 days), got {self.time_limit_s!r}")
        if self.stats_window_s is not None:
            start, end = self.stats_window_s
            _check(0 <= start < end <= self.time_limit_s, "stats_window_s",
                   f"needs 0 <= start < end <= time_limit_s ({self.time_limit_s:g}), got "
                   f"{list(self.stats_window_s)}")
        _check(not (self.availability.generator != "none" and self.availability.mode == "nodes"
                    and self.cluster.n_nodes < 2), "availability.mode",
               "node availability needs at least 2 nodes")
        jobs = self.workload.jobs
        _check(self.workload.kind != "jobs" or min(j.arrival_s for j in jobs) < self.time_limit_s,
               "time_limit_s", f"every job of workload.jobs arrives at or after the time limit "
               f"{self.time_limit_s!r} s, so the episode would hold no decision")
        _check_reduce_capacity(self)
        _check_episode_size(self)

    @property
    def has_shared_nodes(self) -> bool:
        """Whether any node hosts an interactive service."""
        return any(g.kind == "shared" for g in self.cluster.nodes)


def episode_size(sc: Scenario) -> dict[str, float]:
    """What an episode of ``sc`` holds, estimated from the config alone (no files read).

    Returns:
        ``nodes``; ``jobs`` and ``tasks`` (expected; 0 for trace replay, whose size the trace
        decides); ``interference_steps`` and ``availability_steps`` (columns of the periodic
        timelines, ``ceil(time_limit_s / step_s) + 1``; both are drawn whatever the generator);
        ``interference_cells`` (shared nodes x steps) and ``availability_cells`` (nodes x steps
        when nodes leave and join); ``orchestrator_epochs`` (0 without the orchestrator).
    """
    from mrsched_gym.workloads.synthetic import expected_size  # it imports this module

    c, i, a = sc.cluster, sc.interference, sc.availability
    n_shared = sum(g.count for g in c.nodes if g.kind == "shared")
    i_steps = _periods(sc.time_limit_s, i.step_s) + 1
    a_steps = _periods(sc.time_limit_s, a.step_s) + 1
    per_node = a.generator == "onoff" or (a.generator != "none" and a.mode == "nodes")
    jobs, tasks = expected_size(sc.workload, c)
    return {
        "nodes": c.n_nodes, "jobs": jobs, "tasks": tasks,
        "interference_steps": i_steps, "availability_steps": a_steps,
        "interference_cells": n_shared * i_steps,
        "availability_cells": c.n_nodes * a_steps if per_node else 0,
        "orchestrator_epochs": (_periods(sc.time_limit_s, c.orchestrator_epoch_s)
                                if c.orchestrator != "none" else 0),
    }


def _check_reduce_capacity(sc: Scenario) -> None:
    """Refuse a workload with reduce tasks on a cluster where no node has a reduce slot.

    Fixed job lists and synthetic type mixes are checked exactly; a trace replay is checked
    against the trace's shuffle bytes when the environment is built
    (:func:`mrsched_gym.workloads.trace.check_trace_size`).
    """
    if sc.cluster.has_reduce_slots:
        return
    from mrsched_gym.workloads.synthetic import workload_has_reduces  # it imports this module

    why = workload_has_reduces(sc.workload)
    _check(not why, "cluster.nodes",
           f"every node group has reduce_slots 0 but {why}; give some node group reduce slots "
           "(MIMP 3.1: reduces run on the dedicated nodes)")


def _periods(horizon_s: float, step_s: float) -> float:
    """``ceil(horizon_s / step_s)``, or ``inf`` when it is too large to be an exact integer."""
    n = horizon_s / step_s
    return math.ceil(n) if n < 1e15 else math.inf


def _check_episode_size(sc: Scenario) -> None:
    """Refuse a scenario whose episode would exhaust memory or time (the ``MAX_*`` limits)."""
    size = episode_size(sc)
    for part in ("interference", "availability"):
        steps = size[f"{part}_steps"]
        _check(steps <= MAX_PERIODIC_STEPS, f"{part}.step_s",
               f"time_limit_s / step_s gives {steps:,.0f} steps, more than the limit of "
               f"{MAX_PERIODIC_STEPS:,}; raise {part}.step_s or lower time_limit_s")
        cells = size[f"{part}_cells"]
        _check(cells <= MAX_TIMELINE_CELLS, f"{part}.step_s",
               f"{cells // steps:,.0f} nodes x {steps:,.0f} steps = {cells:,.0f} timeline cells, "
               f"more than the limit of {MAX_TIMELINE_CELLS:,}; raise {part}.step_s or lower "
               "time_limit_s")
    epochs = size["orchestrator_epochs"]
    _check(epochs <= MAX_PERIODIC_STEPS, "cluster.orchestrator_epoch_s",
           f"time_limit_s / orchestrator_epoch_s gives {epochs:,.0f} epochs, more than the limit "
           f"of {MAX_PERIODIC_STEPS:,}")
    jobs, tasks = size["jobs"], size["tasks"]
    work = size["nodes"] * tasks
    _check(work <= MAX_NODE_DECISIONS or tasks > MAX_TASKS, "cluster.nodes",
           f"{size['nodes']:,} nodes x about {tasks:,.0f} decisions (one per expected task) = "
           f"{work:,.0f} node-decisions, more than the limit of {MAX_NODE_DECISIONS:,} (at "
           "4k to 0.45k decisions/s on a large cluster the episode would take "
           f"{tasks / 4000 / 60:,.1f} to {tasks / 450 / 60:,.0f} minutes per policy); use "
           "fewer nodes or lower workload.load or workload.duration_s")
    if tasks <= MAX_TASKS:
        return
    if sc.workload.kind == "jobs":
        raise ConfigError(f"workload.jobs: {jobs:,.0f} jobs with {tasks:,.0f} tasks in all, more "
                          f"than the limit of {MAX_TASKS:,} tasks; give fewer or smaller jobs")
    raise ConfigError(f"workload: about {jobs:,.0f} jobs with {tasks:,.0f} tasks in all "
                      f"expected, more than the limit of {MAX_TASKS:,} tasks; lower "
                      "workload.load, workload.duration_s, workload.size_mean or raise "
                      "workload.task_work_scale")


# --------------------------------------------------------------------------------------------
# Generic strict builder: dict -> frozen dataclass, with dotted field paths in errors.
# --------------------------------------------------------------------------------------------

_T = TypeVar("_T")


def _build(tp: Any, value: Any, path: str) -> Any:
    """Plain data at ``path`` as type ``tp``: converts, checks types, names the path in errors.

    Numbers accept numpy scalars (``np.float64(0.9)``, ``np.int64(3)``) but never bools; lists
    accept 1-d numpy arrays. Ranges and choices are checked by the dataclasses themselves.
    """
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin in (Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        inner = [a for a in args if a is not type(None)]
        return _build(inner[0], value, path)
    if dataclasses.is_dataclass(tp):
        return _build_dataclass(tp, value, path)
    if origin is Literal:
        return str(value) if isinstance(value, str) else value    # checked by the class
    if origin is tuple:
        if isinstance(value, np.ndarray) and value.ndim == 1:
            value = value.tolist()
        if not isinstance(value, (list, tuple)):
            raise ConfigError(f"{path}: expected a list, got {_short(value)}")
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_build(args[0], v, f"{path}[{i}]") for i, v in enumerate(value))
        if len(value) != len(args):
            raise ConfigError(f"{path}: expected {len(args)} values, got {len(value)}")
        return tuple(_build(a, v, f"{path}[{i}]")
                     for i, (a, v) in enumerate(zip(args, value, strict=False)))
    if origin is list:
        if isinstance(value, np.ndarray) and value.ndim == 1:
            value = value.tolist()
        if not isinstance(value, (list, tuple)):
            raise ConfigError(f"{path}: expected a list, got {_short(value)}")
        return [_build(args[0] if args else Any, v, f"{path}[{i}]") for i, v in enumerate(value)]
    if origin in (collections.abc.Mapping, dict) or tp is Mapping:
        if not isinstance(value, Mapping):
            raise ConfigError(f"{path}: expected a mapping, got {_short(value)}")
        vt = args[1] if args else Any
        items = {str(k): _build(vt, v, f"{path}.{k}") for k, v in value.items()}
        return items if origin is dict else FrozenDict(items)   # a plain dict where declared
    return _build_scalar(tp, value, path)


def _build_dataclass(tp: type, value: Any, path: str) -> Any:
    """A config section from a mapping: unknown keys are refused, listing the known ones."""
    if isinstance(value, tp):
        return value
    if not isinstance(value, Mapping):
        raise ConfigError(f"{path or 'scenario'}: expected a mapping, got {_short(value)}")
    hints = typing.get_type_hints(tp)
    names = {f.name for f in dataclasses.fields(tp)}
    unknown = sorted((k for k in value if k not in names), key=str)
    if unknown:
        raise ConfigError(f"{path + '.' if path else ''}{unknown[0]}: unknown key "
                          f"(known: {', '.join(sorted(names))})")
    missing = [f.name for f in dataclasses.fields(tp) if f.name not in value
               and f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING]
    if missing:
        raise ConfigError(f"{path + '.' if path else ''}{missing[0]}: required")
    kwargs = {k: _build(hints[k], v, f"{path}.{k}" if path else k) for k, v in value.items()}
    try:
        return tp(**kwargs)
    except ConfigError as e:
        raise ConfigError(f"{path + '.' if path else ''}{e}") from None


def _build_scalar(tp: Any, value: Any, path: str) -> Any:
    """A bool, int, float or str field; numpy scalars become their Python equivalents."""
    if tp is bool:
        if not isinstance(value, (bool, np.bool_)):
            raise ConfigError(f"{path}: expected true/false, got {_short(value)}")
        return bool(value)
    if tp is int:
        if not _is_integer(value):
            raise ConfigError(f"{path}: expected an integer, got {_short(value)}")
        return int(value)
    if tp is float:
        if not _is_number(value):
            raise ConfigError(f"{path}: expected a number, got {_short(value)}")
        try:
            return float(value)
        except OverflowError:
            raise ConfigError(f"{path}: {_short(value)} is too large for a number") from None
    if tp is str:
        if not isinstance(value, str):
            raise ConfigError(f"{path}: expected a string, got {_short(value)}")
        return str(value)
    return value


def from_dict(tp: type[_T], data: Any, source: str = "<dict>") -> _T:
    """The strict builder: plain data (a parsed YAML mapping) -> the config dataclass ``tp``.

    One builder for every config of the package (scenarios, training configs): field types
    convert and check the values (``Literal`` choices, numbers, lists, nested dataclasses),
    unknown keys are refused with the known ones listed, and errors name ``source`` and the
    dotted field path.

    Raises:
        ConfigError: The data does not fit ``tp``.
    """
    try:
        return cast(_T, _build(tp, data, ""))
    except ConfigError as e:
        raise ConfigError(f"{source}: {e}") from None


def scenario_from_dict(data: Mapping[str, Any], *, source: str = "<dict>") -> Scenario:
    """Build a :class:`Scenario` from plain data, naming ``source`` in any error."""
    return from_dict(Scenario, data, source)


#: The kinds of bundled config files: folder of ``configs/`` -> what its files are called.
CONFIG_KINDS: Mapping[str, str] = FrozenDict({
    "scenarios": "scenario", "agents": "training config", "reproductions": "reproduction"})


def bundled_names(kind: str) -> list[str]:
    """Names of the config files shipped in ``configs/<kind>`` (a key of :data:`CONFIG_KINDS`)."""
    root = resources.files("mrsched_gym.configs").joinpath(kind)
    return sorted(p.name[:-5] for p in root.iterdir() if p.name.endswith(".yaml"))


def config_source(path_or_name: str | os.PathLike[str], kind: str) -> tuple[str, str]:
    """The one "path or bundled name" rule of every config file (scenarios, training configs,
    reproductions): ``(source, text)``.

    A name ending in ``.yaml``/``.yml``, or naming an existing file, is read as a path; any other
    name is looked up in ``configs/<kind>``.

    Raises:
        ConfigError: A missing or unreadable file, or an unknown name (the message lists the
            bundled names).
        InputTypeError: ``path_or_name`` is neither a string nor a path.
    """
    what = CONFIG_KINDS[kind]
    if not isinstance(path_or_name, (str, os.PathLike)):
        raise InputTypeError(f"{what} must be a YAML path or a bundled {what} name, got "
                             f"{type(path_or_name).__name__} {_short(path_or_name)}")
    bundled = ", ".join(bundled_names(kind))
    if not str(path_or_name).strip():
        raise ConfigError(f"{what} name is empty (bundled: {bundled})")
    p = Path(path_or_name)
    if p.suffix in (".yaml", ".yml") or p.exists():
        return str(p), read_text_file(p, what)
    name = str(path_or_name)
    res = resources.files("mrsched_gym.configs").joinpath(kind, f"{name}.yaml")
    if not res.is_file():
        raise ConfigError(f"{name}: no such {what} file or bundled {what} (bundled: {bundled})"
                          + unknown_name_hint(kind, name))
    return f"configs/{kind}/{name}.yaml", res.read_text(encoding="utf-8")


def unknown_name_hint(kind: str, name: str) -> str:
    """For an unknown scenario name, the registered env ids (which name scenarios where a world
    is asked for: the CLI, the harness, gym.make) and the closest id or bundled name, as the end
    of the error's sentence; '' for other kinds. A registered id given where only a scenario
    file is read (``MRSchedEnv(scenario=...)``, ``load_scenario``) is told its scenario's name."""
    if kind != "scenarios":
        return ""
    import difflib

    from mrsched_gym.registration import ENV_IDS, ENV_OVERRIDES
    if name in ENV_IDS:
        extra = ENV_OVERRIDES.get(name)
        return (f"; {name!r} is a registered env id (for gym.make and the command line): a "
                f"scenario file is named by its bundled name, here {ENV_IDS[name]!r}"
                + (f" with the overrides {dict(extra)}" if extra else ""))
    close = difflib.get_close_matches(name, [*ENV_IDS, *bundled_names(kind)], n=1, cutoff=0.6)
    return (f"; registered ids: {', '.join(ENV_IDS)}"
            + (f"; did you mean {close[0]!r}?" if close else ""))


def bundled_scenarios() -> list[str]:
    """Names of the scenario files shipped in ``configs/scenarios``."""
    return bundled_names("scenarios")


class UniqueKeyLoader(yaml.SafeLoader):
    """PyYAML's safe loader, except that a key repeated in one mapping is an error.

    Plain ``yaml.safe_load`` keeps the last value silently, so ``load: 0.5`` followed by
    ``load: 0.9`` would quietly mean 0.9. Keys brought in by a ``<<`` merge may still be
    overridden (that is what merges are for).
    """

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict:
        """Build a mapping; a repeated key raises a ``ConstructorError`` naming both lines."""
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.construct_object(key_node, deep=True)
            try:
                first = seen.get(key)
            except TypeError:
                continue          # an unhashable key: the base class reports it
            if first is not None:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key!r} (first at line {first})",
                    key_node.start_mark)
            seen[key] = key_node.start_mark.line + 1
        return super().construct_mapping(node, deep=deep)


def parse_yaml(text: str, source: str) -> Any:
    """Parse YAML text with :class:`UniqueKeyLoader`; errors name ``source`` and the line.

    Raises:
        ConfigError: Invalid YAML or a duplicate key.
    """
    try:
        return yaml.load(text, Loader=UniqueKeyLoader)  # noqa: S506 (a SafeLoader subclass)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark is not None else ""
        raise ConfigError(f"{source}:{where} invalid YAML: {getattr(e, 'problem', e)}") from None


def read_text_file(path: Path, what: str) -> str:
    """The UTF-8 text of a config file (a leading byte-order mark is dropped).

    Raises:
        ConfigError: The file is missing, unreadable or not UTF-8 text, naming it.
    """
    if not path.is_file():
        raise ConfigError(f"{path}: {what} file not found")
    try:
        data = path.read_bytes()
    except OSError as e:
        raise ConfigError(f"{path}: cannot read the {what} file: {e.strerror}") from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        raise ConfigError(f"{path}: line {line}: not UTF-8 text (byte {data[e.start]:#04x} at "
                          f"offset {e.start}); a {what} file is YAML text") from None


def _read_yaml(text: str, source: str) -> Mapping[str, Any]:
    data = parse_yaml(text, source)
    if not isinstance(data, Mapping):
        raise ConfigError(f"{source}: top level must be a mapping of scenario fields, got "
                          f"{_short(data)}")
    return data


def load_scenario(path_or_name: str | Path) -> Scenario:
    """Load a scenario from a YAML file path or a bundled scenario name (e.g. ``"hadoop"``).

    Raises:
        ConfigError: A missing, unreadable or malformed file; the message names the file, the
            line (YAML errors, duplicate keys) or the dotted field path.
        InputTypeError: ``path_or_name`` is neither a string nor a path.
    """
    source, text = config_source(path_or_name, "scenarios")
    data = _read_yaml(text, source)
    if not source.startswith("configs/"):                 # a file of the user's
        data = resolve_relative_paths(data, Path(source).parent)
    return scenario_from_dict(data, source=source)


def resolve_relative_paths(data: Any, folder: Path) -> Any:
    """``data`` (a scenario file's plain data) with every relative ``trace:`` path that is not
    a bundled trace name made relative to ``folder`` (the scenario file's folder)."""
    from mrsched_gym.models.traces import BUNDLED_TRACES
    if isinstance(data, Mapping):
        out = {}
        for k, v in data.items():
            if k == "trace" and isinstance(v, str) and v and v not in BUNDLED_TRACES \
                    and not Path(v).is_absolute():
                out[k] = os.path.abspath(folder / v)
            else:
                out[k] = resolve_relative_paths(v, folder)
        return out
    return data


def to_dict(obj: Any) -> Any:
    """Plain-data form of a config object (round-trips through :func:`scenario_from_dict`)."""
    if dataclasses.is_dataclass(obj):
        return {f.name: to_dict(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, Mapping):
        return {k: to_dict(v) for k, v in obj.items()}
    if isinstance(obj, tuple):
        return [to_dict(v) for v in obj]
    return obj


def _field_type(keys: list[str]) -> Any:
    """The declared type at a dotted path of :class:`Scenario` (``None`` if not a field)."""
    tp: Any = Scenario
    for k in keys:
        if not dataclasses.is_dataclass(tp):
            return None
        hints = typing.get_type_hints(tp)
        if k not in hints:
            return None
        tp = hints[k]
        if typing.get_origin(tp) in (Union, types.UnionType):
            tp = [a for a in typing.get_args(tp) if a is not type(None)][0]
    return tp


def _set_path(d: dict, keys: list[str], value: Any, full: str,
              prefix: tuple[str, ...] = ()) -> None:
    for k in keys[:-1]:
        sub = d.get(k)
        if not isinstance(sub, dict):
            raise ConfigError(f"override {full!r}: {k} is not a section")
        d = sub
    if keys[-1] not in d:
        raise ConfigError(f"override {full!r}: unknown key {keys[-1]!r} (known: "
                          f"{', '.join(sorted(d))})")
    tp = _field_type(list(prefix) + keys)
    if isinstance(d[keys[-1]], dict) and isinstance(value, Mapping) and \
            dataclasses.is_dataclass(tp):
        for k, v in value.items():                      # a section: merge field by field
            _set_path(d[keys[-1]], [k], v, f"{full}.{k}", (*prefix, *keys))
    else:
        d[keys[-1]] = value                             # a value or a free-form mapping


def with_overrides(scenario: Scenario, overrides: Mapping[str, Any]) -> Scenario:
    """Return a new scenario with ``overrides`` applied.

    Keys are dotted paths (``"workload.load"``), double-underscore paths (``workload__load``, the
    form ``gymnasium.make`` keyword arguments take) or nested mappings (``{"workload": {...}}``).
    """
    if not overrides:
        return scenario
    d = to_dict(scenario)
    for key, value in overrides.items():
        path = key.replace("__", ".").split(".")
        _set_path(d, path, to_dict(value), key)
    return scenario_from_dict(d, source="overrides")
