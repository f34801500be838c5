"""The episode metrics: pure functions of an :class:`~mrsched_gym.sim.log.EpisodeLog`.

One implementation, shared by the env's final ``info``, baselines and agents.

Neither the objective's components nor the deadline and JCT metrics reward leaving work
unfinished or rejected (cluster-side metrics such as web response time or fairness can still look
better on an idle cluster). Every arrived job has a completion time:
its finish time, or — for a job the episode left unserved (unfinished at the time limit, or
rejected at admission) — the estimate ``time limit + remaining work alone`` the simulator charges
(``EpisodeLog.est_finish_s``, :meth:`mrsched_gym.sim.engine.Simulator.remaining_alone_s`).

* ``deadline_penalty_h`` and ``time_in_system_h`` are the simulator's integrals, which charge
  unserved jobs to that estimate (exactly what the rewards sum).
* An unserved job with a deadline **counts as missed** (it did not meet its deadline within the
  episode), rejected jobs included; ``deadline_miss_pct`` is over all arrived jobs with deadlines.
* Deadlines judge the part of the job they cover (``workload.deadline_scope``): the whole job, or
  with ``map`` its map phase (MIMP 3.1), i.e. ``EpisodeLog.deadline_finish_s`` and, for a job the
  episode left short of it, ``est_deadline_finish_s`` — the same rule as the simulator's lateness
  integral behind ``deadline_penalty_h``.
* ``accepted_deadline_misses`` and ``accepted_deadline_penalty_h`` count the accepted jobs only
  (MIMP 5.3's count of admission control: rejected jobs leave both): the misses, and the
  weighted lateness in hours (a job left unserved late to its charged completion). Alone they
  reward rejecting; read them beside ``rejections``, as MIMP does.
* ``relative_lateness`` is RDS's Eq. 1: the weighted lateness relative to the time the job was
  given (deadline - submission), summed over jobs.
* JCT statistics (``mean_jct_s``, ``p95_jct_s``, slowdown, fairness, high-priority sojourn) are
  over all arrived jobs, the unserved ones at their estimated completion; ``jobs_finished_pct``
  says how many actually finished.
* ``n_jobs`` is the workload's size: every job it submits, including those whose submission
  time the episode did not reach (a time limit shorter than the arrivals, e.g. an override);
  the jobs that arrived are ``jobs_finished + jobs_unfinished + rejections`` (without a
  statistics window, which ``rejections``, a reward component, ignores), and every
  percentage above is over arrived jobs only.
* With a statistics window (``Scenario.stats_window_s``, thesis 5.3.5.1: the steady-state middle
  of a long run) the job statistics above (job counts, makespan, JCT, deadline metrics, relative
  lateness, fairness) count only the jobs submitted or completed (at their finish or charged
  completion) inside it; the reward components (``deadline_penalty_h`` ...), the objective and
  the cluster-side metrics still cover the whole episode, so the return stays minus the
  objective.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

from mrsched_gym.config import COMPONENT_METRICS, REWARD_COMPONENTS
from mrsched_gym.env.rewards import totals
from mrsched_gym.sim.log import EpisodeLog

#: Every metric of :func:`episode_metrics` (without ``objective``), in its order.
METRIC_NAMES = (
    "n_jobs", "jobs_finished", "jobs_unfinished", "jobs_finished_pct", "truncated", "makespan_s",
    "mean_jct_s", "p95_jct_s", "mean_slowdown", "deadline_misses", "deadline_miss_pct",
    "accepted_deadline_misses", "accepted_deadline_penalty_h",
    "mean_time_beyond_deadline_s", "mean_distance_to_deadline_s", "relative_lateness",
    "high_priority_sojourn_s",
    "wasted_work_s", "swap_overhead_s", "utilisation", "cpu_utilisation", "data_locality_pct",
    "rack_locality_pct",
    "jain_fairness", "web_response_mean_ms", "web_response_p95_ms", "slo_violation_pct",
    "killed_tasks", "suspended_tasks", "lost_tasks", "speculative_copies", "speculative_wins",
    "invalid_actions",
    *(COMPONENT_METRICS[c] for c in REWARD_COMPONENTS))
#: The numeric fields of an evaluation record: the episode's return, steps and wall time, and
#: every metric (rank a leaderboard by any of them).
RECORD_METRICS = ("return", "steps", "wall_s", *METRIC_NAMES, "objective")
#: The record fields where higher is better (a leaderboard ranks them in descending order).
HIGHER_IS_BETTER = frozenset({
    "return", "jobs_finished", "jobs_finished_pct", "utilisation", "cpu_utilisation",
    "data_locality_pct",
    "rack_locality_pct", "jain_fairness", "mean_distance_to_deadline_s"})


def _mean(x: np.ndarray) -> float:
    return float(np.mean(x)) if len(x) else math.nan


def percentile(x: np.ndarray, q: float) -> float:
    """The ``q``-th percentile of ``x`` (``nan`` when empty), equal to ``np.percentile(x, q)``.

    The same float bit for bit as numpy's default ``"linear"`` method (Hyndman & Fan's 7th):
    the same virtual index, the same partition and the same two-sided interpolation (a ``nan``
    anywhere gives ``nan``). Written out because ``np.percentile`` calls ``np.unique``, whose
    first call imports ``numpy.ma`` (about 20 ms, in the first episode's metrics of a process).

    Args:
        x: 1-d array of floats (copied, not modified).
        q: percentile in ``[0, 100]``.
    """
    if not 0.0 <= q <= 100.0:
        raise ValueError(f"percentile q={q} is outside [0, 100]")
    a = np.array(x, dtype=np.float64).ravel()
    n = len(a)
    if n == 0:
        return math.nan
    virtual = float(n - 1) * (float(q) / 100.0)
    lower = math.floor(virtual)
    if virtual >= n - 1:          # at (or past) the last value: both neighbours are the maximum
        lower = upper = -1
    else:
        upper = lower + 1
    # numpy partitions at the sorted unique positions {0, -1, lower, upper}, in this order
    a.partition(sorted({0, -1, lower, upper}))
    if math.isnan(a[-1]):         # a nan sorts last and makes the percentile nan
        return float(a[-1])
    gamma = virtual - lower
    below, above = float(a[lower]), float(a[upper])
    diff = above - below
    # numpy's _lerp: from the nearer end, so that gamma = 1 gives the upper value exactly
    return above - diff * (1.0 - gamma) if gamma >= 0.5 else below + diff * gamma


def jain_index(x: np.ndarray) -> float:
    """Jain's fairness index of positive values (1 = perfectly fair)."""
    x = np.asarray(x, dtype=float)
    if len(x) == 0 or not np.any(x):
        return math.nan
    return float(x.sum() ** 2 / (len(x) * np.square(x).sum()))


def in_stats_window(log: EpisodeLog) -> np.ndarray:
    """``[J]`` bool: the jobs the job statistics count (every job without a window).

    With ``log.stats_window_s = (a, b)``: the jobs submitted in ``[a, b)`` or completed in it,
    at their finish time or, for a job the episode left unserved, the completion charged for it.
    """
    if log.stats_window_s is None:
        return np.ones(len(log.arrival_s), dtype=bool)
    a, b = log.stats_window_s
    done = np.where(np.isnan(log.finish_s), log.est_finish_s, log.finish_s)
    with np.errstate(invalid="ignore"):
        return ((log.arrival_s >= a) & (log.arrival_s < b)) | ((done >= a) & (done < b))


def job_outcomes(log: EpisodeLog) -> dict[str, np.ndarray]:
    """Per job (``[J]`` arrays, in job order) what :func:`episode_metrics` aggregates.

    ``counted``: in the statistics window (:func:`in_stats_window`); ``arrived``, ``finished``,
    ``has_deadline`` and ``missed`` are among the counted jobs (what the metrics count);
    ``completion_s``: the finish time, or for a job the episode left unserved the completion
    charged for it (time limit + remaining work alone; ``nan`` for a job that never arrived);
    ``jct_s`` = completion - arrival; ``late_by_s``: when the part of the job its deadline covers
    finished (or is charged to), minus the deadline (negative: met early);
    ``misses_deadline``: an arrived job, counted or not, that missed its deadline (rejected and
    unserved jobs miss).
    """
    counted = in_stats_window(log)
    arrived = log.arrived & counted
    done = ~np.isnan(log.finish_s)
    # completion time of every job: finished, or the estimate charged at the end
    completion = np.where(done, log.finish_s, log.est_finish_s)
    # the deadline judges the part of the job it covers (the whole job or its map phase)
    due_done = ~np.isnan(log.deadline_finish_s)
    late_by = np.where(due_done, log.deadline_finish_s, log.est_deadline_finish_s) - log.deadline_s
    misses = np.isfinite(log.deadline_s) & log.arrived & (~due_done | (late_by > 0))
    return {"counted": counted, "arrived": arrived, "finished": done & counted,
            "completion_s": completion, "jct_s": completion - log.arrival_s,
            "has_deadline": np.isfinite(log.deadline_s) & arrived, "late_by_s": late_by,
            "missed": misses & counted, "misses_deadline": misses}


#: The columns of :func:`job_table`, in order.
JOB_COLUMNS = ("job", "type", "label", "arrival_s", "deadline_s", "completion_s", "jct_s",
               "late_by_s", "arrived", "finished", "rejected", "missed", "counted", "weight",
               "priority", "n_tasks")


def job_table(log: EpisodeLog) -> dict[str, list]:
    """One row per job of the workload, as columns of plain Python values (``None`` where a
    value does not exist: no deadline, never arrived): :data:`JOB_COLUMNS`, from
    :func:`job_outcomes` (a job the episode left unserved is charged its completion, as every
    metric charges it; ``finished`` says whether it really finished)."""
    from mrsched_gym.workloads.profiles import TYPE_NAMES
    out = job_outcomes(log)

    def floats(x: np.ndarray, where: np.ndarray) -> list:
        return [float(v) if w and math.isfinite(v) else None for v, w in zip(x, where,
                                                                              strict=True)]

    arrived = log.arrived
    has_dl = np.isfinite(log.deadline_s)
    labels = log.labels or [""] * len(log.arrival_s)
    return {
        "job": list(range(len(log.arrival_s))),
        "type": [TYPE_NAMES[t] for t in log.type_idx],
        "label": [str(v) for v in labels],
        "arrival_s": [float(v) for v in log.arrival_s],
        "deadline_s": floats(log.deadline_s, has_dl),
        "completion_s": floats(out["completion_s"], arrived),
        "jct_s": floats(out["jct_s"], arrived),
        "late_by_s": floats(out["late_by_s"], has_dl & arrived),
        "arrived": [bool(v) for v in arrived],
        "finished": [bool(v) for v in ~np.isnan(log.finish_s)],
        "rejected": [bool(v) for v in log.rejected],
        "missed": [bool(v) for v in out["misses_deadline"]],
        "counted": [bool(v) for v in out["counted"]],
        "weight": [float(v) for v in log.weight],
        "priority": [int(v) for v in log.priority],
        "n_tasks": [int(v) for v in log.n_tasks],
    }


def episode_metrics(log: EpisodeLog, weights: Mapping[str, float] | None = None
                    ) -> dict[str, float]:
    """Compute every metric from ``log``.

    Args:
        log: The episode log.
        weights: Reward weights; when given, ``objective`` = sum_c w_c * metric_c is added
            (the episode return equals ``-objective``).

    Returns:
        Metric name -> value (floats; ``nan`` where undefined, e.g. no job had a deadline).
    """
    c = log.counters
    n_all = len(log.arrival_s)
    jobs = job_outcomes(log)
    counted, arrived, finished = jobs["counted"], jobs["arrived"], jobs["finished"]
    n_jobs = int(counted.sum())
    unserved = arrived & ~finished
    done_s = jobs["completion_s"][arrived]
    jct = jobs["jct_s"][arrived]
    has_dl, late_by, missed = jobs["has_deadline"], jobs["late_by_s"], jobs["missed"]
    met = has_dl & ~missed
    slowdown = jct / np.maximum(log.alone_s[arrived], 1e-9)
    hp = (log.priority > 0)[arrived]
    loc = log.locality.sum(axis=0)
    n_dl = int(has_dl.sum())
    n_arrived = int(arrived.sum())
    end = log.end_s
    m: dict[str, float] = {
        "n_jobs": float(n_jobs),
        "jobs_finished": float(finished.sum()),
        "jobs_unfinished": float((unserved & ~log.rejected).sum()),
        "jobs_finished_pct": 100.0 * float(finished.sum()) / n_arrived if n_arrived else math.nan,
        "truncated": float(log.truncated),
        "makespan_s": float(np.max(done_s) - np.min(log.arrival_s[arrived]))
        if n_arrived else math.nan,
        "mean_jct_s": _mean(jct),
        "p95_jct_s": percentile(jct, 95),
        "mean_slowdown": _mean(slowdown),
        "deadline_misses": float(missed.sum()),
        "deadline_miss_pct": float(100.0 * missed.sum() / n_dl) if n_dl else math.nan,
        "accepted_deadline_misses": float((missed & ~log.rejected).sum()),
        "accepted_deadline_penalty_h": float(np.sum((log.weight * np.maximum(late_by, 0.0))[
            has_dl & ~log.rejected]) / 3600.0),
        "mean_time_beyond_deadline_s": _mean(np.maximum(late_by[missed], 0.0)),
        "mean_distance_to_deadline_s": _mean(-late_by[met]),
        # RDS Eq. 1: sum_j w_j ((y_j - y_ref) / y_ref)^+ with times measured from submission
        "relative_lateness": float(np.sum((log.weight * np.maximum(late_by, 0.0) / np.maximum(
            log.deadline_s - log.arrival_s, 1e-9))[has_dl])),
        "high_priority_sojourn_s": _mean(jct[hp]),
        "wasted_work_s": c["wasted_s"],
        "swap_overhead_s": c["swap_s"],
        "utilisation": c["I_busy"] / c["I_cap"] if c["I_cap"] > 0 else math.nan,
        # the CPU MapReduce's tasks use over the CPU offered to it (MROrchestrator Fig. 7(a))
        "cpu_utilisation": c["I_cpu_used"] / c["I_cpu_cap"] if c["I_cpu_cap"] > 0 else math.nan,
        "data_locality_pct": 100.0 * loc[0] / loc.sum() if loc.sum() else math.nan,
        "rack_locality_pct": 100.0 * loc[1] / loc.sum() if loc.sum() else math.nan,
        "jain_fairness": jain_index(1.0 / np.maximum(slowdown, 1e-9)),
        "web_response_mean_ms": c["I_resp"] / (log.n_shared * end) if log.n_shared and end > 0
        else math.nan,
        "web_response_p95_ms": percentile(log.resp_samples_ms, 95) if log.n_shared else math.nan,
        "slo_violation_pct": 100.0 * c["I_slo"] / (log.n_shared * end)
        if log.n_shared and end > 0 else math.nan,
        "killed_tasks": float(c["n_killed"]),
        "suspended_tasks": float(c["n_suspended"]),
        "lost_tasks": float(c["n_lost"]),
        "speculative_copies": float(c["n_copies"]),
        "speculative_wins": float(c["n_copies_won"]),
        "invalid_actions": float(c["invalid_actions"]),
    }
    # the reward components' totals (one formula, shared with mrsched_gym.env.rewards)
    comp = totals(c["I_active"], c["I_late"], c["I_slo"], c["wasted_s"], c["I_cap"],
                  c["I_busy"], c["n_rejected"], n_all)
    for name, value in zip(REWARD_COMPONENTS, comp, strict=False):
        m[COMPONENT_METRICS[name]] = value
    if weights is not None:
        m["objective"] = float(sum(w * m[COMPONENT_METRICS[k]] for k, w in weights.items()))
    return m
