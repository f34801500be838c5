"""RDS: Resource and Deadline-aware Scheduling in dynamic Hadoop clusters (Cheng
et al.).

Every control interval (10 minutes in the paper, Section IV; III.D: "The scheduling optimizer is
invoked at each control interval" and "the resource allocation is determined once for every
control interval"):

1. **Resource predictor** (III.C, Table II): an ARIMA(p, 1, 0) model fitted by least squares on
   the measured availability of past control intervals predicts the next ``horizon`` intervals by
   iterating the one-step prediction.
2. **Scheduling optimizer** (III.D, Eq. 4-5): a receding-horizon QP over the next ``horizon``
   intervals chooses each job's slot allocation u_j(i), minimising
   sum_i sum_j w_j * max(0, yref_j(i) - y_j(i))^2 + sum_i P_i * sum_j (Delta u_j(i) / S)^2
   subject to sum_j u_j(i) <= S * fhat(i) and 0 <= u_j(i) <= the job's remaining tasks, where
   y_j(i) is the fraction of the job's remaining work done by the end of interval i (u x interval
   / remaining slot-seconds, the progress model) and yref_j(i) the calibrated per-interval target
   that meets its deadline (work spread evenly up to the deadline, III.A). Solved exactly as a
   convex QP (:mod:`mrsched_gym.baselines.rds_qp`).
3. **Task scheduling with dynamic slots** (Algorithm 1): at each heartbeat the job with the
   largest remaining adjustment Delta u_j = u_j - (slots it holds) gets the slot and its
   adjustment drops by r_slot (one slot's share of the available resource, ra / slots). Jobs whose
   deadline falls before the next control interval take the short-job fast path (first).
   A job that arrives between two control intervals waits in the paper's waiting queue until the
   next plan (III.D "Job management"): it has no adjustment (0) until then, so it gets slots
   after every job with a positive adjustment (or at once through the fast path).
   ``replan_on_arrival=True`` re-plans at every arrival instead (our earlier reading; many more
   QP solves, e.g. 182 instead of 36 in a six-hour HadoopTrace-v0 episode).

Gaps we filled: the paper's offline-trained fuzzy progress model is replaced by the job's trained
profile (remaining work in slot-seconds, thesis Eq. 1 numerator with the profile's task length),
which is what the fuzzy model learns; the penalty is one-sided (Eq. 1: zero until the job falls
behind), where Eq. 5 squares the error both ways; P = the paper's map weights (0.0107, 0.0096,
0.0132) on slot changes normalised by the cluster's slots; once every positive adjustment is used,
remaining slots go to the earliest deadline instead of idling (work-conserving, our choice: the
paper's jobs with u_j = 0 wait, which only wastes capacity in our simulator).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from mrsched_gym.baselines.base import Scheduler, default_action
from mrsched_gym.baselines.common import prior_task_len, remaining_slot_seconds, running_by_job
from mrsched_gym.baselines.rds_qp import solve_allocation
from mrsched_gym.sim.decision import ScheduleCandidate
from mrsched_gym.sim.state import MAP, REDUCE


def least_squares(rows: Sequence[Sequence[float]], y: Sequence[float]) -> list[float]:
    """Ordinary least squares in plain Python floats, so that every CPU gives the same bits.

    ``np.linalg.lstsq`` rounds differently under each OpenBLAS kernel (the same history gave
    coefficients a few units in the last place apart), and RDS's slot counts tip on such
    differences. Here the normal equations are formed with correctly rounded sums
    (``math.fsum``) and solved by Gaussian elimination with diagonal pivoting, largest pivot
    first: every operation is one IEEE-754 operation, the same on every machine. A column whose
    remaining pivot is at most 1e-12 of the largest diagonal entry (no variation left, e.g. a
    differenced series that is all zero) gets coefficient 0. For full-rank problems this is the
    least-squares solution up to rounding; for rank-deficient ones it is a basic solution, where
    ``lstsq`` gives the minimum-norm one. Both fit the data equally well, and their predictions
    agree wherever the new regressor row lies in the span of the fitted rows (e.g. dropped
    columns that are zero in it too, as in :func:`arima_forecast`).

    Args:
        rows: The regressors, one row per observation (all rows the same length).
        y: The observations, one per row.

    Returns:
        One coefficient per column.

    Raises:
        ValueError: Fewer observations than coefficients (no unique fit).
    """
    n = len(rows[0]) if len(rows) else 0
    if len(rows) < n:
        raise ValueError(f"least_squares: {len(rows)} observations for {n} coefficients")
    a = [[math.fsum(r[i] * r[j] for r in rows) for j in range(n)]
         + [math.fsum(r[i] * t for r, t in zip(rows, y, strict=True))] for i in range(n)]
    tol = 1e-12 * max((a[i][i] for i in range(n)), default=0.0)
    free, pivots = list(range(n)), []
    while free:
        k = max(free, key=lambda i: a[i][i])           # first of equal pivots: deterministic
        if not a[k][k] > tol:
            break
        free.remove(k)
        pivots.append(k)
        for i in free:
            f = a[i][k] / a[k][k]
            a[i] = [v - f * w for v, w in zip(a[i], a[k], strict=True)]
    coef = [0.0] * n
    for m, k in reversed(list(enumerate(pivots))):
        later = pivots[m + 1:]
        coef[k] = (a[k][n] - math.fsum(a[k][j] * coef[j] for j in later)) / a[k][k]
    return coef


def arima_forecast(history: Sequence[float], steps: int, p: int = 2) -> np.ndarray:
    """ARIMA(p, 1, 0) forecast of ``steps`` values by iterated one-step prediction (RDS Table II).

    The AR coefficients (and intercept) of the differenced series are fitted by ordinary least
    squares (:func:`least_squares`: the same bits on every CPU). The fit needs more equations
    than its p + 1 unknowns: with fewer than ``2p + 3`` points of history the last value persists
    (a random walk). Until 2026-11-23 the fit started at ``p + 3`` points, where
    ``np.linalg.lstsq`` took the minimum-norm solution of 2 equations in 3 unknowns (p = 2), a
    forecast the data do not determine; our choice, the paper does not say.
    """
    h = [float(v) for v in history]
    if len(h) == 0:
        return np.ones(steps)
    if len(h) < 2 * p + 3:
        return np.full(steps, h[-1])
    d = [b - a for a, b in zip(h[:-1], h[1:], strict=True)]
    rows = [[d[t - k - 1] for k in range(p)] + [1.0] for t in range(p, len(d))]
    coef = least_squares(rows, d[p:])
    lags = d[-p:][::-1]
    level = h[-1]
    out = np.empty(steps)
    for s in range(steps):
        nd = math.fsum([c * lag for c, lag in zip(coef[:p], lags, strict=True)] + [coef[p]])
        level = level + nd
        out[s] = level
        lags = [nd] + lags[:-1]
    return np.clip(out, 0.0, 1.0)


class RDSScheduler(Scheduler):
    """Resource and Deadline-aware Scheduler.

    Args:
        interval_s: Control interval (paper: 10 minutes).
        horizon: Prediction / control horizon in intervals (paper: 3-step ARIMA, Table II).
        ar_order: AR order of the ARIMA predictor.
        P: Control-effort weights (paper: map weights 0.0107, 0.0096, 0.0132).
        replan_on_arrival: Also re-plan whenever a job arrives (not the paper's rule).
    """

    name = "rds"

    def __init__(self, interval_s: float = 600.0, horizon: int = 3, ar_order: int = 2,
                 P: Sequence[float] = (0.0107, 0.0096, 0.0132),
                 replan_on_arrival: bool = False) -> None:
        if interval_s <= 0 or horizon < 1:
            raise ValueError("RDSScheduler needs interval_s > 0 and horizon >= 1")
        self.interval_s = float(interval_s)
        self.horizon = int(horizon)
        self.ar_order = int(ar_order)
        self.P = tuple(P) + (P[-1],) * max(0, horizon - len(P))
        self.replan_on_arrival = bool(replan_on_arrival)

    def reset(self, sim, seed: int | None = None) -> None:
        """Forget the previous plan: the first decision plans."""
        self.next_plan = 0.0
        self.known: set[int] = set()
        self.adjust: dict[int, float] = {}
        self.capacity_mode = sim.scenario.availability.mode == "capacity"

    # ---------------------------------------------------------------- prediction
    def availability_history(self, sim) -> list[float]:
        """Measured availability averaged over each past control interval."""
        step = sim.scenario.availability.step_s
        k_now = int(sim.now // step) + 1
        past = np.asarray(sim.avail_f[:min(k_now, len(sim.avail_f))], dtype=float)
        per = max(1, int(round(self.interval_s / step)))
        n = len(past) // per
        hist = [math.fsum(past[i * per:(i + 1) * per]) / per for i in range(n)]
        return hist + [float(past[-1])] if len(past) else [1.0]

    # ---------------------------------------------------------------- optimisation
    def plan(self, sim, running) -> None:
        """Solve the receding-horizon QP (:func:`solve_allocation`) for the runnable and running
        jobs, and keep each job's slot adjustment (planned slots minus held slots) for the next
        control interval.

        Args:
            sim: The simulator.
            running: Running tasks by job id (:func:`running_by_job`).
        """
        now = sim.now
        S = float(sum(sim.map_slots[n] + sim.red_slots[n] for n in range(sim.n_nodes)))
        fhat = arima_forecast(self.availability_history(sim), self.horizon, self.ar_order)
        r_slot = sim.availability_now() if self.capacity_mode else 1.0
        runnable = set(sim.runnable)
        jobs = [sim.jobs[j] for j in sim.runnable] + [
            sim.jobs[j] for j in running if j not in runnable]
        work, left, weight, umax, u0 = [], [], [], [], []
        for job in jobs:
            tasks = running.get(job.jid, ())
            mu_m, mu_r = prior_task_len(job, MAP), prior_task_len(job, REDUCE)
            work.append(remaining_slot_seconds(job, tasks, now, mu_m, mu_r))
            left.append(job.deadline_s - now if math.isfinite(job.deadline_s) else 1e9)
            weight.append(job.weight if math.isfinite(job.deadline_s) else 1e-3)
            umax.append(float(job.pending_maps + job.pending_reduces + len(tasks) + len(job.susp)))
            u0.append(len(tasks) * r_slot)
        u = solve_allocation(np.array(work), np.array(left), np.array(weight), S * fhat,
                             np.array(umax), np.array(u0), self.interval_s, self.P)
        self.adjust = {job.jid: float(u[k, 0]) - u0[k] for k, job in enumerate(jobs)}
        self.next_plan = now + self.interval_s
        self.known = {job.jid for job in jobs}

    def decide(self, sim) -> int:
        """Re-plan once per control interval, then the candidate whose job the plan most wants to
        grow, jobs due before the next plan first (the short-job fast path); the launch uses up
        one slot of the job's adjustment (Algorithm 1)."""
        a = default_action(sim)
        if a is not None:
            return a
        if sim.now >= self.next_plan or (self.replan_on_arrival and any(
                j not in self.known for j in sim.runnable)):
            self.plan(sim, running_by_job(sim))
        horizon_end = self.next_plan
        r_slot = sim.availability_now() if self.capacity_mode else 1.0

        def key(c: ScheduleCandidate) -> tuple:
            job = c.job
            fast = job.deadline_s <= horizon_end                       # short-job fast path
            return (not fast, -self.adjust.get(job.jid, 0.0), job.deadline_s, job.jid, c.phase)
        cands = sim.decision.candidates
        best = min(range(len(cands)), key=lambda i: key(cands[i]))
        jid = cands[best].job.jid
        self.adjust[jid] = self.adjust.get(jid, 0.0) - r_slot                # Algorithm 1, l. 9
        return best
