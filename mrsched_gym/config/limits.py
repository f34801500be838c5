"""Episode-size limits: a scenario whose episode would exhaust memory or time is refused with
the numbers and the limit, from the config alone (no file is read)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from mrsched_gym.config.errors import ConfigError, check
from mrsched_gym.config.sizing import expected_size, workload_has_reduces

if TYPE_CHECKING:
    from mrsched_gym.config.scenario import Scenario

# Episode-size limits, checked when a scenario is built (:func:`episode_size`). They keep a typo
# (``step_s: 0.001``, ``count: 5000000``) from exhausting memory or running for hours, and leave
# room above the largest bundled scenario, thesis_scale (100 nodes; ~170,000 tasks expected,
# ~105,000 run; 2,305 interference steps over 8 simulated days; ~10 s and ~115 MB an episode):
# 100x its nodes, ~6x its tasks (scaling its run linearly, a 1,000,000-task episode takes ~2
# minutes and ~1 GB) and ~400x its steps.
#: The largest seed (of an episode, a training run): numpy's legacy and torch's seed range, so
#: every seed a run uses is one they take.
MAX_SEED = 2**32 - 1
#: The most env steps a training run may take (``total_timesteps``, ``--steps``).
MAX_TRAIN_STEPS = 10**10
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



def big(x: float) -> str:
    """``x`` for a message: ``1,234,567``, or ``2.44e+305`` past a quadrillion (a file's
    absurd figure stays one short line)."""
    return f"{x:,.0f}" if abs(x) < 1e15 else f"{x:.3g}"

def episode_size(sc: Scenario) -> dict[str, float]:
    """What an episode of ``sc`` holds, estimated from the config alone (no files read).

    Returns:
        ``nodes``; ``jobs`` and ``tasks`` (expected; 0 for trace replay, whose size the trace
        decides); ``interference_steps`` and ``availability_steps`` (columns of the periodic
        timelines, ``ceil(time_limit_s / step_s) + 1``; both are drawn whatever the generator);
        ``interference_cells`` (shared nodes x steps) and ``availability_cells`` (nodes x steps
        when nodes leave and join); ``orchestrator_epochs`` (0 without the orchestrator).
    """
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


def check_reduce_capacity(sc: Scenario) -> None:
    """Refuse a workload with reduce tasks on a cluster where no node has a reduce slot.

    Fixed job lists and synthetic type mixes are checked exactly; a trace replay is checked
    against the trace's shuffle bytes when the environment is built
    (:func:`mrsched_gym.workloads.trace.check_trace_size`).
    """
    if sc.cluster.has_reduce_slots:
        return
    why = workload_has_reduces(sc.workload)
    check(not why, "cluster.nodes",
           f"every node group has reduce_slots 0 but {why}; give some node group reduce slots "
           "(MIMP 3.1: reduces run on the dedicated nodes)")


def _periods(horizon_s: float, step_s: float) -> float:
    """``ceil(horizon_s / step_s)``, or ``inf`` when it is too large to be an exact integer."""
    n = horizon_s / step_s
    return math.ceil(n) if n < 1e15 else math.inf


def check_episode_size(sc: Scenario) -> None:
    """Refuse a scenario whose episode would exhaust memory or time (the ``MAX_*`` limits)."""
    size = episode_size(sc)
    for part in ("interference", "availability"):
        steps = size[f"{part}_steps"]
        check(steps <= MAX_PERIODIC_STEPS, f"{part}.step_s",
               f"time_limit_s / step_s gives {big(steps)} steps, more than the limit of "
               f"{MAX_PERIODIC_STEPS:,}; raise {part}.step_s or lower time_limit_s")
        cells = size[f"{part}_cells"]
        check(cells <= MAX_TIMELINE_CELLS, f"{part}.step_s",
               f"{big(cells // steps)} nodes x {big(steps)} steps = {big(cells)} timeline cells, "
               f"more than the limit of {MAX_TIMELINE_CELLS:,}; raise {part}.step_s or lower "
               "time_limit_s")
    epochs = size["orchestrator_epochs"]
    check(epochs <= MAX_PERIODIC_STEPS, "cluster.orchestrator_epoch_s",
           f"time_limit_s / orchestrator_epoch_s gives {big(epochs)} epochs, more than the limit "
           f"of {MAX_PERIODIC_STEPS:,}")
    jobs, tasks = size["jobs"], size["tasks"]
    work = size["nodes"] * tasks
    check(work <= MAX_NODE_DECISIONS or tasks > MAX_TASKS, "cluster.nodes",
           f"{size['nodes']:,} nodes x about {big(tasks)} decisions (one per expected task) = "
           f"{big(work)} node-decisions, more than the limit of {MAX_NODE_DECISIONS:,} (at "
           "4k to 0.45k decisions/s on a large cluster the episode would take "
           f"{tasks / 4000 / 60:,.1f} to {tasks / 450 / 60:,.0f} minutes per policy); use "
           "fewer nodes or lower workload.load or workload.duration_s")
    if tasks <= MAX_TASKS:
        return
    if sc.workload.kind == "jobs":
        raise ConfigError(f"workload.jobs: {big(jobs)} jobs with {big(tasks)} tasks in all, more "
                          f"than the limit of {MAX_TASKS:,} tasks; give fewer or smaller jobs")
    raise ConfigError(f"workload: about {big(jobs)} jobs with {big(tasks)} tasks in all "
                      f"expected, more than the limit of {MAX_TASKS:,} tasks; lower "
                      "workload.load, workload.duration_s, workload.size_mean or raise "
                      "workload.task_work_scale")
