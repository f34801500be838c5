"""The Adaptive Scheduler of Polo's thesis (ch. 3).

Adaptive Scheduler (ch. 3.3-3.4):

* **basic** (3.4.1): the priority of a job is s_req (Eq. 1), the slots it still needs
  concurrently to meet its completion time goal: (sum of running tasks' remaining time delta_i +
  |U| x mu) / (T_goal - T_curr) - |R|, with mu the observed mean task length and delta_i = mu -
  beta_i (3.3.2). Section 3.3.1 estimates **each phase separately**, against the completion time
  goal of the phase T_goal^{m,p} ("derived from the completion time goal of the job and the time
  required for executing each phase"), and allocates by the job's current phase: a map
  candidate's priority is Eq. 1 over the job's maps (running maps R, unstarted maps U, map length
  mu_m) against the map goal, a reduce candidate's is Eq. 1 over its reduces against the reduce
  goal (:func:`phase_required_slots`). Jobs that already missed their goal come first (the one
  with the fewest running tasks of the phase, which equalises them), then jobs with no finished
  map yet (oldest first: no data to estimate), then the highest s_req. Priorities are recomputed
  at every decision, so excess slots spread across jobs.
* **data affinity** (3.4.2): when the chosen job's next map is not node-local and the job already
  holds enough map slots to meet its map goal (s_req <= 0), the task is deferred, up to
  ``max_delays`` times (the thesis evaluates 1-3; default 3); when every job defers, the slot
  waits.
* **hardware affinity** (3.4.3): jobs are calibrated by running at least one map on each pool
  (accelerated / regular); a job whose observed speed-up mu_reg / mu_acc exceeds
  ``accel_threshold`` is accelerable. On accelerated nodes accelerable jobs come first, by
  s_req,acc (Eq. 2, with mu_acc, against the map goal); on regular nodes an accelerable job
  competes with s_req,extra = mu_reg / mu_acc x (s_req,acc - accelerated slots) (Eq. 3) minus the
  regular map slots it holds. Acceleration is for maps only (3.4.3), so reduces keep the basic
  priority.

Phase goals (3.3.1, 3.4.5; :func:`phase_goal`): "both map and reduce phase must complete within
the completion timeframe, one after the other", so the reduce goal is the job's goal and the map
goal is the job's goal minus the time the remaining reduce phase needs. The thesis leaves three
gaps, filled as follows (tested):

* the reduce task length before any reduce finished is the user's estimate of 3.4.5, "the
  relative cost of a reduce task compared to that of a map task", times the observed mu_m; the
  relative cost is the job's submitted profile (mean reduce work / mean map work), and the
  observed mean reduce length replaces the estimate once reduces finish
  (:func:`reduce_task_estimate`);
* the reduce phase lasts its waves on the cluster's reduce slots, ceil(reduces left / reduce
  slots) x mu_r (:func:`reduce_phase_s`): the time it needs when it gets the reduce slots, which
  is what the phase's own goal then asks for;
* a phase whose goal has passed (the map phase after its map goal) has missed its goal: it joins
  the jobs that missed theirs (its Eq. 1 need is unbounded). Section 3.3.1 states that the
  allocation algorithm's "tasks and completion time goal" are those of the phase, so the
  missed-goal rule of 3.4.1 applies per phase.

Slots needed (Eq. 1): the thesis does not say how its simulator rounds Eq. 1, so the chapter's
own numbers chose the reading (:data:`DEFAULT_SLOTS_ESTIMATE`). ``slots_estimate="fluid"`` (the
default) divides the remaining work by the time left; ``"waves"`` counts the time left in whole
waves of task length (derivation in :func:`~mrsched_gym.baselines.common.eq1_slots`). Measured on
the ch. 3 reproduction (tight goals, 10 seeds; ``mrsched-gym reproduce thesis-ch3-adaptive``),
Table 5.7's simulated row, |ours - thesis| in points for J1..J5: fluid 0.0 / 1.4 / 7.4 / 3.4 /
9.5, waves 0.1 / 0.6 / 7.3 / 17.6 / 22.3; Table 5.8's simulated J4 (197 s): fluid 199 s, waves
161 s; the real row's J4 (0.38): fluid 0.43, waves 0.28. Under waves a Join with maps unstarted
less than one map length before its goal cannot meet it and ranks with the jobs that missed
theirs, first (3.4.1), which the thesis's times do not show. The claims of Figs. 3.4-3.6 come
out the same under both. RAS (:mod:`~mrsched_gym.baselines.ras`) and Reverse-Adaptive
(:mod:`~mrsched_gym.baselines.reverse_adaptive`) take the same parameter; their chapters' numbers
chose whole waves.
"""

from __future__ import annotations

import math

from mrsched_gym.baselines.base import Scheduler, default_action
from mrsched_gym.baselines.common import (
    check_slots_estimate,
    eq1_slots,
    running_by_job,
    task_len,
)
from mrsched_gym.sim.state import MAP, NODE_LOCAL, REDUCE

#: Eq. 1's reading the Adaptive Scheduler uses unless told (module docstring: Tables 5.7-5.8's
#: simulated rows chose it).
DEFAULT_SLOTS_ESTIMATE = "fluid"


def reduce_task_estimate(job, mu_map: float) -> float:
    """Expected reduce task length mu_r of a job (thesis 3.4.5).

    The observed mean length of its finished reduces; before any finished, the user's estimate
    of "the relative cost of a reduce task compared to that of a map task" (here the job's
    submitted profile: mean reduce work / mean map work; equal cost without a profile) times the
    observed map length ``mu_map``.
    """
    mu = job.mean_task_len(REDUCE)
    if not math.isnan(mu):
        return mu
    map_work, red_work = job.prior_len
    return mu_map * red_work / map_work if map_work > 0 else mu_map


def reduce_phase_s(job, mu_reduce: float, reduce_slots: float) -> float:
    """Time the job's remaining reduce phase needs (thesis 3.4.5): its waves on the cluster's
    reduce slots, ceil(reduces not finished / reduce slots) x mu_r; 0 without reduces."""
    left = job.n_reduces - job.reduces_done
    if left <= 0:
        return 0.0
    return math.ceil(left / max(reduce_slots, 1.0)) * mu_reduce


def phase_goal(job, phase: int, mu_reduce: float, reduce_slots: float) -> float:
    """Completion time goal of a phase, T_goal^{m,p} (thesis 3.3.1, 3.4.5).

    Both phases complete within the job's timeframe, one after the other: the reduce goal is the
    job's goal, the map goal leaves the remaining reduce phase its time (:func:`reduce_phase_s`).
    """
    if phase == REDUCE:
        return job.deadline_s
    return job.deadline_s - reduce_phase_s(job, mu_reduce, reduce_slots)


def phase_required_slots(job, tasks, phase: int, now: float, mu: float, goal: float,
                         estimate: str = "waves") -> float:
    """Thesis Eq. 1 for one phase, without -|R|: the slots of that phase the job needs
    concurrently from now on to finish the phase by its goal (thesis 3.3.1).

    (sum over the phase's running tasks of delta_i + |U| x mu) over the time to
    T_goal^{m,p}, in whole waves of mu (``estimate="waves"``) or as a plain division
    (``"fluid"``; :func:`~mrsched_gym.baselines.common.eq1_slots`), with
    delta_i = max(mu - beta_i, 0) (3.3.2) and U the phase's unstarted (and suspended) tasks.
    ``inf`` once the phase goal has passed (or, under ``waves``, when an unstarted task can no
    longer finish by it); 1 for a job without a goal (it only needs to progress).

    Args:
        job: The job (``deadline_s``, ``pending_maps``/``pending_reduces``, ``susp``).
        tasks: The job's running tasks (both phases; only ``phase``'s are counted).
        phase: ``MAP`` or ``REDUCE``.
        now: Current time T_curr.
        mu: Mean task length of the phase.
        goal: The phase's goal (:func:`phase_goal`).
        estimate: ``"waves"`` or ``"fluid"``.
    """
    if not math.isfinite(job.deadline_s):
        return 1.0
    left = goal - now
    if left <= 0:
        return math.inf
    running = sum(max(mu - (now - t.start_s), 0.0) for t in tasks if t.phase == phase)
    unstarted = job.pending_maps if phase == MAP else job.pending_reduces
    unstarted += sum(1 for t in job.susp if t.phase == phase)
    return eq1_slots(running + unstarted * mu, left, mu, unstarted, estimate)


def cluster_reduce_slots(sim) -> float:
    """Reduce slots of the nodes that are up."""
    return float(sum(sim.red_slots[n] for n in range(sim.n_nodes) if sim.up[n]))


class AdaptiveScheduler(Scheduler):
    """Polo's Adaptive Scheduler: ``affinity`` = ``"none"`` (basic), ``"data"`` or ``"hardware"``.

    Priorities are per phase (thesis 3.3.1; module docstring): a candidate ``(job, phase)`` is
    ranked by the job's Eq. 1 need for that phase against that phase's goal.

    Args:
        affinity: Which extension of 3.4.2-3.4.3 to use.
        max_delays: Data affinity: deferrals allowed per job between launches.
        accel_threshold: Hardware affinity: speed-up above which a job is accelerable.
        slots_estimate: Eq. 1's reading, ``"fluid"`` (the default, chosen by Tables
            5.7-5.8) or ``"waves"`` (:func:`~mrsched_gym.baselines.common.eq1_slots`).
    """

    def __init__(self, affinity: str = "none", max_delays: int = 3,
                 accel_threshold: float = 1.5,
                 slots_estimate: str = DEFAULT_SLOTS_ESTIMATE) -> None:
        if affinity not in ("none", "data", "hardware"):
            raise ValueError(f"affinity must be none, data or hardware, got {affinity!r}")
        self.affinity = affinity
        self.max_delays = int(max_delays)
        self.accel_threshold = float(accel_threshold)
        self.slots_estimate = check_slots_estimate(slots_estimate)
        self.name = "adaptive" if affinity == "none" else f"adaptive-{affinity}"

    def reset(self, sim, seed: int | None = None) -> None:
        """Clear the episode's estimates (deferral counts, per-pool map lengths) and note the
        accelerated nodes."""
        self.delays: dict[int, int] = {}
        self.log_pos = 0
        # per job: [sum, count] of finished map lengths on regular / accelerated nodes
        self.pool_len: dict[int, list[list[float]]] = {}
        self.acc_nodes = [n for n in range(sim.n_nodes) if sim.accel[n]]
        self.acc_slots = sum(sim.map_slots[n] for n in self.acc_nodes)

    # ---------------------------------------------------------------- estimates
    def _observe(self, sim) -> None:
        """Fold newly finished maps into the per-pool task lengths (hardware affinity)."""
        log = sim.task_log
        for k in range(self.log_pos, len(log)):
            s, e, jid, node, phase, outcome = log[k]
            if phase == MAP and outcome == "done":
                p = self.pool_len.setdefault(jid, [[0.0, 0], [0.0, 0]])[1 if sim.accel[node] else 0]
                p[0] += e - s
                p[1] += 1
        self.log_pos = len(log)

    def _pool_mu(self, jid: int, acc: int) -> float:
        p = self.pool_len.get(jid)
        return p[acc][0] / p[acc][1] if p and p[acc][1] else math.nan

    def goal(self, sim, job, phase: int, mu_map: float) -> float:
        """The phase's goal T_goal^{m,p} (:func:`phase_goal`) given the observed map length."""
        mu_r = reduce_task_estimate(job, mu_map) if job.n_reduces else 0.0
        return phase_goal(job, phase, mu_r, cluster_reduce_slots(sim))

    def need(self, sim, job, tasks, phase: int = MAP) -> tuple:
        """Priority key of ``(job, phase)`` (smaller first): ``(class, -need, jid)``.

        Class 0: the job missed its goal or the phase missed its phase goal (fewest running
        tasks of the phase first); class 1: no finished map yet (oldest first); class 2: by the
        phase's s_req minus its running tasks (Eq. 1 per phase, thesis 3.3.1).
        """
        n_run = sum(1 for t in tasks if t.phase == phase)
        if math.isfinite(job.deadline_s) and job.deadline_s <= sim.now:
            return (0, n_run, job.jid)
        mu_m = task_len(job, MAP, prior=False)
        if math.isnan(mu_m):
            return (1, 0.0, job.jid)
        mu = mu_m if phase == MAP else reduce_task_estimate(job, mu_m)
        s_req = phase_required_slots(job, tasks, phase, sim.now, mu,
                                     self.goal(sim, job, phase, mu_m), self.slots_estimate)
        if math.isinf(s_req):
            return (0, n_run, job.jid)
        return (2, -(s_req - n_run), job.jid)

    def _hw_need(self, sim, job, tasks, on_acc: bool, phase: int) -> tuple:
        if phase != MAP:                      # acceleration is for maps (3.4.3)
            return self.need(sim, job, tasks, phase)
        mu_reg, mu_acc = self._pool_mu(job.jid, 0), self._pool_mu(job.jid, 1)
        if self.acc_nodes and (math.isnan(mu_reg) or math.isnan(mu_acc)):
            missing = math.isnan(mu_acc) if on_acc else math.isnan(mu_reg)
            if missing:                       # calibration: one map on each pool first
                return (1, 0.0, job.jid)
        base = self.need(sim, job, tasks, MAP)
        if not self.acc_nodes or math.isnan(mu_acc) or mu_reg / mu_acc <= self.accel_threshold:
            # a regular job: preferably on regular nodes
            return base if not on_acc else (base[0] + 3, base[1], job.jid)
        if base[0] != 2:
            return base
        maps = [t for t in tasks if t.phase == MAP]
        acc_maps = sum(1 for t in maps if sim.accel[t.node])
        left = self.goal(sim, job, MAP, task_len(job, MAP, prior=False)) - sim.now
        work = job.pending_maps * mu_acc + sum(max(mu_acc - (sim.now - t.start_s), 0.0)
                                               for t in maps)
        s_req_acc = eq1_slots(work, left, mu_acc, job.pending_maps,     # Eq. 2 (total)
                              self.slots_estimate) if math.isfinite(left) else 1.0
        if on_acc:
            return (2, -(s_req_acc - acc_maps), job.jid)
        extra = mu_reg / mu_acc * (s_req_acc - self.acc_slots)          # Eq. 3
        return (2, -(extra - (len(maps) - acc_maps)), job.jid)

    # ---------------------------------------------------------------- decision
    def decide(self, sim) -> int:
        """The candidate ``(job, phase)`` most in need (:meth:`need`; with hardware affinity,
        the need on this node's pool). With data affinity a non-local map is deferred, at most
        ``max_delays`` times in a row, while its job holds the map slots its goal needs; skip
        when every candidate is deferred."""
        a = default_action(sim)
        if a is not None:
            return a
        running = running_by_job(sim)
        d = sim.decision
        cands = d.candidates
        if self.affinity == "hardware":
            self._observe(sim)
            on_acc = bool(sim.accel[d.node])

            def key(i: int) -> tuple:
                c = cands[i]
                return self._hw_need(sim, c.job, running.get(c.job.jid, ()), on_acc,
                                     c.phase) + (c.phase,)
        else:
            def key(i: int) -> tuple:
                c = cands[i]
                return self.need(sim, c.job, running.get(c.job.jid, ()), c.phase) + (c.phase,)
        order = sorted(range(len(cands)), key=key)
        if self.affinity != "data":
            return order[0]
        for i in order:
            job, phase, loc = cands[i].job, cands[i].phase, cands[i].locality
            if phase != MAP or loc == NODE_LOCAL:
                self.delays[job.jid] = 0
                return i
            k = self.need(sim, job, running.get(job.jid, ()), MAP)
            safe = k[0] == 2 and k[1] >= 0    # holds the map slots its map goal needs
            d = self.delays.get(job.jid, 0)
            if not safe or d >= self.max_delays:
                self.delays[job.jid] = 0
                return i
            self.delays[job.jid] = d + 1
        return sim.K
