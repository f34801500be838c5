"""Metrics of SPEC section 7: pure functions of an :class:`~mrsched_gym.sim.log.EpisodeLog`.

One implementation, shared by the env's final ``info``, baselines and agents. Jobs that did not
finish by the end of the episode count with the episode end as their completion time in the
time-integral metrics (``time_in_system_h``, ``deadline_penalty_h``), which is what the reward
sums; the per-job statistics (JCT, slowdown, misses) use finished jobs, and unfinished jobs with a
deadline already passed count as missed.
"""

from __future__ import annotations

import math
from typing import Mapping

import numpy as np

from mrsched_gym.config import COMPONENT_METRICS, REWARD_COMPONENTS
from mrsched_gym.rewards import totals
from mrsched_gym.sim.log import EpisodeLog


def _mean(x: np.ndarray) -> float:
    return float(np.mean(x)) if len(x) else math.nan


def _pct(x: np.ndarray, q: float) -> float:
    return float(np.percentile(x, q)) if len(x) else math.nan


def jain_index(x: np.ndarray) -> float:
    """Jain's fairness index of positive values (1 = perfectly fair)."""
    x = np.asarray(x, dtype=float)
    if len(x) == 0 or not np.any(x):
        return math.nan
    return float(x.sum() ** 2 / (len(x) * np.square(x).sum()))


def episode_metrics(log: EpisodeLog, weights: Mapping[str, float] | None = None
                    ) -> dict[str, float]:
    """Compute every SPEC 7 metric from ``log``.

    Args:
        log: The episode log.
        weights: Reward weights; when given, ``objective`` = sum_c w_c * metric_c is added
            (the episode return equals ``-objective``).

    Returns:
        Metric name -> value (floats; ``nan`` where undefined, e.g. no job had a deadline).
    """
    c = log.counters
    n_jobs = len(log.arrival_s)
    finished = ~np.isnan(log.finish_s)
    jct = (log.finish_s - log.arrival_s)[finished]
    has_dl = np.isfinite(log.deadline_s) & ~log.rejected & log.arrived
    end = log.end_s
    eff_finish = np.where(finished, log.finish_s, end)
    late_by = eff_finish - log.deadline_s
    missed = has_dl & (late_by > 0)
    met = has_dl & finished & (late_by <= 0)
    slowdown = jct / np.maximum(log.alone_s[finished], 1e-9)
    hp = finished & (log.priority > 0)
    loc = log.locality.sum(axis=0)
    n_dl = int(has_dl.sum())
    m: dict[str, float] = {
        "n_jobs": float(n_jobs),
        "jobs_finished": float(finished.sum()),
        "jobs_unfinished": float((log.arrived & ~finished & ~log.rejected).sum()),
        "truncated": float(log.truncated),
        "makespan_s": float(np.max(log.finish_s[finished]) - np.min(log.arrival_s))
        if finished.any() else math.nan,
        "mean_jct_s": _mean(jct),
        "p95_jct_s": _pct(jct, 95),
        "mean_slowdown": _mean(slowdown),
        "deadline_misses": float(missed.sum()),
        "deadline_miss_pct": float(100.0 * missed.sum() / n_dl) if n_dl else math.nan,
        "mean_time_beyond_deadline_s": _mean(late_by[missed]),
        "mean_distance_to_deadline_s": _mean(-late_by[met]),
        "high_priority_sojourn_s": _mean((log.finish_s - log.arrival_s)[hp]),
        "wasted_work_s": c["wasted_s"],
        "swap_overhead_s": c["swap_s"],
        "utilisation": c["I_busy"] / c["I_cap"] if c["I_cap"] > 0 else math.nan,
        "data_locality_pct": 100.0 * loc[0] / loc.sum() if loc.sum() else math.nan,
        "rack_locality_pct": 100.0 * loc[1] / loc.sum() if loc.sum() else math.nan,
        "jain_fairness": jain_index(1.0 / np.maximum(slowdown, 1e-9)),
        "web_response_mean_ms": c["I_resp"] / (log.n_shared * end) if log.n_shared and end > 0
        else math.nan,
        "web_response_p95_ms": _pct(log.resp_samples_ms, 95) if log.n_shared else math.nan,
        "slo_violation_pct": 100.0 * c["I_slo"] / (log.n_shared * end)
        if log.n_shared and end > 0 else math.nan,
        "killed_tasks": float(c["n_killed"]),
        "suspended_tasks": float(c["n_suspended"]),
        "lost_tasks": float(c["n_lost"]),
        "invalid_actions": float(c["invalid_actions"]),
    }
    # the reward components' totals (one formula, shared with mrsched_gym.rewards)
    comp = totals(c["I_active"], c["I_late"], c["I_slo"], c["wasted_s"], c["I_cap"],
                  c["I_busy"], c["n_rejected"], n_jobs)
    for name, value in zip(REWARD_COMPONENTS, comp):
        m[COMPONENT_METRICS[name]] = value
    if weights is not None:
        m["objective"] = float(sum(w * m[COMPONENT_METRICS[k]] for k, w in weights.items()))
    return m
