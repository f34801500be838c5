"""The episode log: everything metrics need, as plain arrays (pure data, no simulator reference)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass
class EpisodeLog:
    """Per-job records and cluster integrals of one episode.

    Attributes:
        end_s: Simulated time at the end of the episode.
        truncated: Whether the time limit cut the episode.
        type_idx: ``[J]`` job type index.
        arrival_s: ``[J]`` submission times.
        deadline_s: ``[J]`` absolute deadlines (``inf`` if none).
        finish_s: ``[J]`` completion times (``nan`` if unfinished or rejected).
        est_finish_s: ``[J]`` estimated completion of the jobs the episode left unserved
            (unfinished at the end, rejected): time limit + remaining work alone (``nan``
            otherwise).
        deadline_finish_s: ``[J]`` when the part of the job its deadline covers finished: its
            finish time (``workload.deadline_scope: job``) or its map phase's end (``map``);
            ``nan`` if it did not.
        est_deadline_finish_s: ``[J]`` for the jobs whose deadline-covered part the episode left
            unfinished, the estimate charged for it (``est_finish_s``, or with the map scope the
            time limit + remaining map work alone); ``nan`` otherwise.
        map_finish_s: ``[J]`` when the job's last map finished (``nan`` if it did not).
        first_start_s: ``[J]`` first task launch (``nan`` if never started).
        alone_s: ``[J]`` completion time alone on the cluster (deadline base).
        weight: ``[J]`` penalty weights.
        priority: ``[J]`` priority classes.
        rejected: ``[J]`` rejected at admission.
        arrived: ``[J]`` submitted before the episode ended.
        n_tasks: ``[J]`` map + reduce tasks.
        locality: ``[J, 3]`` map launches node-local / rack-local / off-rack.
        counters: Integrals (I_*) and counters of the simulator (see ``Simulator.counters``).
        n_shared: Number of shared nodes.
        resp_samples_ms: Web response times sampled at every interference step on every shared node.
        task_log: ``(start_s, end_s, job, node, phase, outcome)`` per task segment.
        labels: ``[J]`` job labels (fixed job lists; empty strings otherwise).
        stats_window_s: The scenario's ``stats_window_s``: job statistics count only the jobs
            submitted or completed in it (``None``: every job).
    """

    end_s: float
    truncated: bool
    type_idx: np.ndarray
    arrival_s: np.ndarray
    deadline_s: np.ndarray
    finish_s: np.ndarray
    est_finish_s: np.ndarray
    deadline_finish_s: np.ndarray
    est_deadline_finish_s: np.ndarray
    map_finish_s: np.ndarray
    first_start_s: np.ndarray
    alone_s: np.ndarray
    weight: np.ndarray
    priority: np.ndarray
    rejected: np.ndarray
    arrived: np.ndarray
    n_tasks: np.ndarray
    locality: np.ndarray
    counters: dict[str, Any]
    n_shared: int
    slo_ms: float
    resp_samples_ms: np.ndarray = field(default_factory=lambda: np.zeros(0))
    task_log: list[tuple[Any, ...]] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)
    stats_window_s: tuple[float, float] | None = None


def build_log(sim: Any) -> EpisodeLog:
    """Snapshot the simulator's records into an :class:`EpisodeLog`."""
    from mrsched_gym.sim.state import FUTURE, REJECTED

    jobs = sim.jobs

    def f(attr: str) -> np.ndarray:
        return np.array([getattr(j, attr) for j in jobs], dtype=float)
    return EpisodeLog(
        end_s=sim.now, truncated=sim.truncated,
        type_idx=np.array([j.type_idx for j in jobs], dtype=int),
        arrival_s=f("arrival_s"), deadline_s=f("deadline_s"), finish_s=f("finish_s"),
        est_finish_s=f("est_finish_s"),
        deadline_finish_s=f("map_finish_s" if sim.map_scope else "finish_s"),
        est_deadline_finish_s=f("est_deadline_finish_s"), map_finish_s=f("map_finish_s"),
        first_start_s=f("first_start_s"), alone_s=f("alone_s"), weight=f("weight"),
        priority=np.array([j.priority for j in jobs], dtype=int),
        rejected=np.array([j.state == REJECTED for j in jobs], dtype=bool),
        arrived=np.array([j.state != FUTURE for j in jobs], dtype=bool),
        n_tasks=np.array([j.n_maps + j.n_reduces for j in jobs], dtype=int),
        locality=np.array([j.locality_counts for j in jobs], dtype=float).reshape(-1, 3),
        counters=sim.counters(), n_shared=len(sim.shared_nodes),
        slo_ms=sim.scenario.interference.slo_ms,
        resp_samples_ms=np.asarray(sim.resp_samples, dtype=float),
        task_log=list(sim.task_log),
        labels=[j.label for j in jobs],
        stats_window_s=sim.scenario.stats_window_s,
    )
