"""The world of an episode: the cluster's fixed layout, and everything random, drawn at reset.

:func:`node_layout` lays the scenario's node groups out as per-node lists (fixed for the
simulator's life). :func:`draw_world` draws a :class:`World` from the env's generator, split
into independent streams (cluster layout, arrivals, task work, block placement, interactive
load, availability, forecast), so e.g. a different availability setting does not change the jobs
drawn for the same seed, and every policy sees the same world for a seed (common random
numbers). Nothing is drawn after reset: ``step`` is deterministic.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from mrsched_gym.config import ClusterConfig, Scenario
from mrsched_gym.models.availability import (
    availability_fraction,
    forecast_series,
    node_capacity_forecast,
    nodes_up,
)
from mrsched_gym.models.interference import web_load_series
from mrsched_gym.models.traces import TraceError, read_series, sample_steps
from mrsched_gym.sim.native import mypyc_attr, rebuild_args
from mrsched_gym.workloads.profiles import PROFILES, TYPE_NAMES
from mrsched_gym.workloads.synthetic import JobDraw, draw_jobs
from mrsched_gym.workloads.trace import job_trace


@dataclass(frozen=True)
class NodeLayout:
    """The cluster's hardware, one entry per node (index = node id; node groups in scenario
    order), and what follows from it.

    Attributes:
        speed: CPU speed (1 = the reference node).
        accel: Accelerator name, or ``None``.
        shared: Shared with interactive services.
        map_slots: Map slots.
        red_slots: Reduce slots.
        mem_gb: Memory (GB).
        disk_mb_s: Disk bandwidth (MB/s).
        net_mb_s: Network bandwidth (MB/s).
        cores: CPU cores.
        rack: Rack (nodes are dealt round-robin over the racks).
        shared_nodes: Ids of the shared nodes.
        static_share: Memory share of one slot, 1 / (map + reduce slots) (Hadoop 1's fixed
            child heap).
        total_slots: Map + reduce slots of the cluster.
        accel_mult: Accelerator speed-up per node and job type.
    """

    speed: list[float]
    accel: list[str | None]
    shared: list[bool]
    map_slots: list[int]
    red_slots: list[int]
    mem_gb: list[float]
    disk_mb_s: list[float]
    net_mb_s: list[float]
    cores: list[int]
    rack: list[int]
    shared_nodes: list[int]
    static_share: list[float]
    total_slots: float
    accel_mult: list[list[float]]

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        """Copies and pickles are rebuilt from the fields (:mod:`mrsched_gym.sim.native`)."""
        return rebuild_args(self)


def node_layout(c: ClusterConfig) -> NodeLayout:
    """Lay the node groups of ``c`` out node by node."""
    n = c.n_nodes
    speed: list[float] = []
    accel: list[str | None] = []
    shared: list[bool] = []
    map_slots: list[int] = []
    red_slots: list[int] = []
    mem_gb: list[float] = []
    disk_mb_s: list[float] = []
    net_mb_s: list[float] = []
    cores: list[int] = []
    for g in c.nodes:
        for _ in range(g.count):
            speed.append(g.cpu_speed)
            accel.append(g.accelerator)
            shared.append(g.kind == "shared")
            map_slots.append(g.effective_map_slots)
            red_slots.append(g.effective_reduce_slots)
            mem_gb.append(g.mem_gb)
            disk_mb_s.append(g.disk_mb_s)
            net_mb_s.append(g.net_mb_s)
            cores.append(g.cpu_cores)
    return NodeLayout(
        speed=speed, accel=accel, shared=shared, map_slots=map_slots, red_slots=red_slots,
        mem_gb=mem_gb, disk_mb_s=disk_mb_s, net_mb_s=net_mb_s, cores=cores,
        rack=[i % c.racks for i in range(n)],
        shared_nodes=[i for i in range(n) if shared[i]],
        static_share=[1.0 / (map_slots[i] + red_slots[i]) for i in range(n)],
        total_slots=float(sum(map_slots) + sum(red_slots)),
        accel_mult=[[PROFILES[t].accel_speedup.get(acc, 1.0) if acc else 1.0
                     for t in TYPE_NAMES] for acc in accel])


@mypyc_attr(allow_interpreted_subclasses=True)
class TraceCache:
    """The traces of interference and availability configs and the workload's job trace, read
    once per simulator (when it is made: a trace edited afterwards does not change its
    episodes)."""

    def __init__(self) -> None:
        self.cache: dict[tuple[Any, ...], np.ndarray] = {}

    def get(self, cfg: Any, horizon: float) -> np.ndarray | None:
        """The trace of ``cfg`` (an interference or availability config) sampled at its
        ``step_s`` from its ``trace_offset_s`` over ``horizon`` s; ``None`` if it has none.

        Raises:
            TraceError: The file is unreadable or ``trace_offset_s`` is past its last row.
        """
        if not cfg.trace:
            return None
        key = (cfg.trace, cfg.step_s, cfg.trace_offset_s)
        if key not in self.cache:
            times, values = read_series(cfg.trace)
            if cfg.trace_offset_s > times[-1]:
                raise TraceError(f"{cfg.trace}: trace_offset_s={cfg.trace_offset_s} is past the "
                                 f"trace's last row (time {times[-1]})")
            self.cache[key] = sample_steps(times, values, cfg.step_s,
                                           int(math.ceil(horizon / cfg.step_s)) + 1,
                                           cfg.trace_offset_s)
        return self.cache[key]

    def job_rows(self, cfg: Any) -> np.ndarray | None:
        """The rows of a workload config's job trace (:func:`~mrsched_gym.workloads.trace.
        job_trace`); ``None`` unless it replays a trace."""
        if cfg.kind != "trace":
            return None
        key = ("jobs", cfg.trace)
        if key not in self.cache:
            self.cache[key] = job_trace(cfg.trace)
        return self.cache[key]


@dataclass(frozen=True)
class World:
    """Everything random about one episode, drawn at reset.

    Attributes:
        jobs: The jobs in arrival order (sizes, deadlines, per-task work and demand, replicas).
        load_u: ``[shared nodes, load steps]`` interactive CPU load of each shared node.
        avail_f: ``[availability steps]`` availability f(t).
        node_up: ``[nodes, availability steps]`` which nodes are up (availability in ``nodes``
            mode), else ``None`` (capacity mode, or no availability model).
        forecast_f: ``[availability steps]`` the forecast of f(t) policies see.
        node_forecast: ``[nodes, availability steps]`` each node's forecast capacity, from
            ``forecast_f`` (:func:`~mrsched_gym.models.availability.node_capacity_forecast`).
    """

    jobs: list[JobDraw]
    load_u: np.ndarray
    avail_f: np.ndarray
    node_up: np.ndarray | None
    forecast_f: np.ndarray
    node_forecast: np.ndarray

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        """Copies and pickles are rebuilt from the fields (:mod:`mrsched_gym.sim.native`)."""
        return rebuild_args(self)


def draw_world(sc: Scenario, n_nodes: int, n_shared: int, rng: np.random.Generator,
               traces: TraceCache) -> World:
    """Draw the world of one episode from ``rng`` (split into independent streams)."""
    (r_jobs, r_tasks, r_place, r_load, r_avail, r_nodes, r_fc) = rng.spawn(7)
    horizon = sc.time_limit_s
    load_u = web_load_series(sc.interference, n_shared, horizon, r_load,
                             trace=traces.get(sc.interference, horizon))
    avail_f, up_matrix = availability_fraction(sc.availability, horizon, r_avail, n_nodes,
                                               trace=traces.get(sc.availability, horizon))
    node_up: np.ndarray | None
    order = None
    if sc.availability.generator != "none" and sc.availability.mode == "nodes":
        if up_matrix is None:
            order = r_nodes.permutation(n_nodes)        # order[k] = k-th node to stay up
            node_up = nodes_up(avail_f, order)
        else:
            node_up = up_matrix
    else:
        node_up = None
    forecast_f = forecast_series(avail_f, sc.availability.forecast_noise, r_fc)
    jobs = draw_jobs(sc.workload, sc.cluster, r_jobs, r_tasks, r_place,
                     traces.job_rows(sc.workload))
    node_forecast = node_capacity_forecast(forecast_f, n_nodes, order)
    node_forecast.flags.writeable = False
    return World(jobs, load_u, avail_f, node_up, forecast_f, node_forecast)
