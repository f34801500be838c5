"""The Resource-aware Adaptive Scheduler (RAS) of Polo's thesis (ch. 4) and its utilities.

RAS (ch. 4.2): utility u_j = u_M + u_R (Eq. 5) with u_M = log(s_alloc)/log(s_req) - 1 below the
requirement and (s_alloc - s_req)/(s_pend - s_req) above it (Eq. 6), u_R = log(r_alloc)/log(r_pend)
- 1 (Eq. 7); the placement maximises the minimum utility (Eq. 8) under each node's resource
capacity (Eq. 9-10). At a heartbeat this is the inner loop of Algorithm 1: reducers first, spread
(a job's reduce goes to a node that runs none of its reduces while its u_R < 0), then the map of
the job with the lowest utility among those with room on the node. Room is the simulator's own
capacity check (a free slot, or in containers mode the job's demand profile fitting the node's
free resources), so RAS runs with dynamic job slots when the scenario is in containers mode.

s_req (:func:`pending_slots`, ``s_req_basis="pending"``, the default): the thesis's Job Completion
Time Estimator "estimates the number of map tasks that should be allocated concurrently (s_req)
to meet the completion time goal of each job. To perform this calculation it relies on the
completion time goal T_goal, the number of pending map tasks (s_pend), and the observed average
task length" (4.2.2; Fig. 4.1 feeds it s_pend, r_pend and the average task length, no elapsed
times of running tasks), and s_pend is updated "upon completion of a task" (4.2.2), so it counts
the maps not yet finished, running ones included (Eq. 6 reaches 1 at s_alloc = s_pend). With
Eq. 1's time left in whole waves (``slots_estimate="waves"``, Fig. 3.2's s(d, l) = tasks /
waves) this is s_pend / floor((T_goal - T_curr) / mu): a running map holds one of its slot's
whole task executions before the goal however far it has run. Ch. 5 reads s_req the same way:
"the average number of tasks that should be allocated over time ... from current time to its
deadline" (5.3.4.2). 4.2.2 also says the estimator "leverages the techniques already described
in [59]", the Adaptive Scheduler's Eq. 1, whose numerator counts a running task by its remaining
time delta_i; we take the inputs 4.2.2 and Fig. 4.1 list, which have no delta_i (the text leaves
the two readings open). ``s_req_basis="work"`` keeps the earlier estimate, Eq. 1's numerator with
delta_i = mu - beta_i for running tasks and the reduce work counted
(:func:`~mrsched_gym.baselines.common.required_slots`), so both can be compared: in a job's last
wave it counts a half-run map as half a slot, so the job looks satisfied while maps that must
start now to meet the goal still wait. Gaps we filled (documented, tested): a job with reduces
has its maps' goal one reduce task length (the profile's) before its deadline, the time its
reducers, placed first and spread (Algorithm 1), need after the last map (as Reverse-Adaptive's
reverse fitting); a job whose maps' goal holds no whole wave (or has passed) cannot meet it and
asks for all its unfinished maps (the cap of the work basis; the thesis does not say how RAS
treats it); u_R uses log(1 + r) so it is defined for one reduce (range [-1, 0] as the thesis
states); RAS uses the job's submitted profile for mu until tasks finish (the thesis' job
profile).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import cast

from mrsched_gym.baselines.base import Scheduler, default_action
from mrsched_gym.baselines.common import (
    check_slots_estimate,
    required_slots,
    running_by_job,
    task_len,
)
from mrsched_gym.sim.decision import ScheduleCandidate
from mrsched_gym.sim.native import mypyc_attr
from mrsched_gym.sim.state import MAP, REDUCE, Job, Task
from mrsched_gym.sim.view import ClusterView

#: Bases of RAS's s_req (:class:`RASScheduler`); ``pending`` is the thesis's (4.2.2).
S_REQ_BASES = ("pending", "work")
#: Where RAS serves a job that can no longer meet its goal (:class:`RASScheduler`'s
#: ``hopeless``); ``first`` is the one the thesis's text supports.
HOPELESS_ORDERS = ("first", "last")


def pending_slots(s_pend: float, left: float, mu: float, estimate: str = "waves") -> float:
    """RAS's s_req from the maps not yet finished (thesis 4.2.2): ``s_pend`` maps of length
    ``mu`` over the ``left`` seconds to the maps' goal.

    ``waves``: s_pend / floor(left / mu), the maps in whole waves (Fig. 3.2's s(d, l));
    ``fluid``: s_pend x mu / left. ``s_pend`` (all of them, the most it can use) when the goal
    has passed, when no whole wave fits before it under ``waves`` or less than one task length
    is left under ``fluid`` (the job cannot meet its goal), or when ``mu`` is unknown.
    """
    if s_pend <= 0:
        return 0.0
    if left <= 0 or not mu > 0:
        return float(s_pend)
    if estimate == "fluid":
        return min(float(s_pend), s_pend * mu / left)
    waves = math.floor(left / mu + 1e-9)
    return float(s_pend) if waves < 1 else s_pend / waves


def _log_ratio(a: float, b: float) -> float:
    """log(a) / log(b) - 1 for a < b, -inf at a = 0 (the thesis' "at least one slot")."""
    if a <= 0:
        return -math.inf
    if b <= 1:
        return 0.0
    return math.log(a) / math.log(b) - 1.0


def ras_map_utility(s_alloc: float, s_req: float, s_pend: float) -> float:
    """Thesis Eq. 6."""
    if s_alloc < s_req:
        return _log_ratio(s_alloc, s_req)
    if s_pend <= s_req:
        return 1.0
    return min(1.0, (s_alloc - s_req) / (s_pend - s_req))


def reduce_utility(r_alloc: float, r_pend: float) -> float:
    """Thesis Eq. 7 / 15 with log(1 + r): -1 with no reducer running, 0 with all of them."""
    if r_pend <= 0:
        return 0.0
    return math.log1p(min(r_alloc, r_pend)) / math.log1p(r_pend) - 1.0


def reverse_map_utility(s_alloc: float, s_fit: float, s_req: float, s_pend: float) -> float:
    """Thesis Eq. 14 (three pieces; the last when s_req <= s_fit)."""
    if s_alloc < s_fit:
        return _log_ratio(s_alloc, s_fit)
    if s_req <= s_fit:
        return 1.0 if s_pend <= s_fit else min(1.0, (s_alloc - s_fit) / (s_pend - s_fit))
    if s_alloc < s_req:
        return (s_alloc - s_fit) / (2.0 * (s_req - s_fit))
    if s_pend <= s_req:
        return 1.0
    return min(1.0, 0.5 + (s_alloc - s_req) / (2.0 * (s_pend - s_req)))


@mypyc_attr(allow_interpreted_subclasses=True)   # a user may subclass it
class RASScheduler(Scheduler):
    """Resource-aware Adaptive Scheduler (thesis ch. 4): max-min utility placement.

    Args:
        slots_estimate: Eq. 1's reading for s_req, ``"waves"`` (the thesis's) or ``"fluid"``
            (:func:`~mrsched_gym.baselines.common.eq1_slots`).
        s_req_basis: ``"pending"`` (the thesis's, 4.2.2: the maps not yet finished,
            :func:`pending_slots`) or ``"work"`` (Eq. 1's remaining work with delta_i and the
            reduce work, :func:`~mrsched_gym.baselines.common.required_slots`).
        hopeless: Where a job that can no longer meet its goal (:meth:`cannot_meet`) is
            served. ``"first"`` (the default): it asks for all its unfinished maps and competes
            by Eq. 6 like any other job, so with no slot it ranks among the neediest. The RAS
            chapter does not say; it builds on the Adaptive Scheduler ("the Job Completion Time
            Estimator ... leverages the techniques already described in [59]", 4.2.2), which
            serves "jobs that have already missed their deadline" among the "special jobs which
            get the highest priority in the system ... the scheduler tries to at least complete
            it as soon as possible, which helps avoid job starvation" (3.4.1), and RAS's goals
            are "soft deadlines used to guide the workload management as opposed to strict
            deadlines" (4.3.3, Experiment 2). ``"last"``: its map candidates come after every
            other map candidate (a reading the RAS chapter leaves open, which its text does not
            support: measured on the Baselines page).
    """

    name = "ras"

    def __init__(self, slots_estimate: str = "waves", s_req_basis: str = "pending",
                 hopeless: str = "first") -> None:
        self.slots_estimate = check_slots_estimate(slots_estimate)
        if s_req_basis not in S_REQ_BASES:
            raise ValueError(f"s_req_basis must be one of {', '.join(S_REQ_BASES)}, "
                             f"got {s_req_basis!r}")
        self.s_req_basis = s_req_basis
        if hopeless not in HOPELESS_ORDERS:
            raise ValueError(f"hopeless must be one of {', '.join(HOPELESS_ORDERS)}, "
                             f"got {hopeless!r}")
        self.hopeless = hopeless

    def map_utility(self, sim: ClusterView, job: Job, tasks: Sequence[Task],
                    s_alloc: int | None = None) -> float:
        """Utility of ``job``'s map allocation (thesis Eq. 6), ``tasks`` its running tasks
        (``s_alloc``, its running maps, counted from them when not given)."""
        if s_alloc is None:
            s_alloc = sum(1 for t in tasks if t.phase == MAP)
        s_req = self.s_req(sim, job, tasks)
        return ras_map_utility(s_alloc, s_req, job.n_maps - job.maps_done)

    def s_req(self, sim: ClusterView, job: Job, tasks: Sequence[Task]) -> float:
        """Map slots ``job`` needs concurrently to meet its goal, at most its unfinished maps
        (all of them when the goal cannot be met): :func:`pending_slots` over the maps' goal
        (``s_req_basis="pending"``) or :func:`required_slots` (``"work"``); 1 for a job
        without a goal."""
        s_pend = float(job.n_maps - job.maps_done)
        if self.s_req_basis == "pending":
            if not math.isfinite(job.deadline_s):
                return min(1.0, s_pend)
            goal = job.deadline_s - (task_len(job, REDUCE) if job.n_reduces else 0.0)
            return pending_slots(s_pend, goal - sim.now, task_len(job, MAP), self.slots_estimate)
        r = required_slots(job, tasks, sim.now, prior=True, estimate=self.slots_estimate)
        return min(r, s_pend) if math.isfinite(r) else s_pend

    def cannot_meet(self, sim: ClusterView, job: Job, tasks: Sequence[Task]) -> bool:
        """Whether ``job`` can no longer meet its goal as its s_req sees it: its maps' goal has
        passed or holds no whole wave (``slots_estimate="waves"``) or less than one map length
        (``"fluid"``) for the maps it has not started (``s_req_basis="pending"``), or Eq. 1 is
        unbounded (``"work"``). Never for a job without a goal or with every map started."""
        if not math.isfinite(job.deadline_s) or job.pending_maps <= 0:
            return False
        if self.s_req_basis == "work":
            return math.isinf(required_slots(job, tasks, sim.now, prior=True,
                                             estimate=self.slots_estimate))
        goal = job.deadline_s - (task_len(job, REDUCE) if job.n_reduces else 0.0)
        left, mu = goal - sim.now, task_len(job, MAP)
        if left <= 0:
            return True
        if not mu > 0:
            return False
        return (math.floor(left / mu + 1e-9) < 1) if self.slots_estimate == "waves" else left < mu

    def decide(self, sim: ClusterView) -> int:
        """Max-min utility placement (thesis Algorithm 1): a reduce of a job whose reduce
        utility is negative first (at most one of its reduces per node), else the map candidate
        with the lowest map + reduce utility; earliest deadline next.

        A job's running maps and reduces are its own counters (``maps_running``,
        ``reduces_running``, ``running_reduces``); the running tasks themselves are gathered
        only for ``s_req_basis="work"``, whose Eq. 1 reads their elapsed times. When the map
        candidates all belong to one job, their keys are equal whatever its utility (and a
        reduce outranks them by class), so the utilities and :meth:`prepare` are skipped: the
        same choice.
        """
        a = default_action(sim)
        if a is not None:
            return a
        cands = cast(tuple[ScheduleCandidate, ...], sim.decision.candidates)
        map_jobs = {c.job.jid for c in cands if c.phase == MAP}
        contested = len(map_jobs) > 1
        running: dict[int, list[Task]] = \
            running_by_job(sim) if contested and self.s_req_basis == "work" else {}
        n = sim.decision.node
        if contested:
            self.prepare(sim, running)
        best, best_key = 0, None
        no_tasks: list[Task] = []
        for i, c in enumerate(cands):
            job: Job = c.job
            u_r = reduce_utility(job.reduces_running, job.n_reduces - job.reduces_done)
            if c.phase == REDUCE:
                if u_r >= 0 or any(t.node == n for t in job.running_reduces):
                    continue
                key = (0, u_r, job.deadline_s, job.jid)      # reducers first (Algorithm 1)
            else:
                if not contested:
                    key = (1, 0.0, job.deadline_s, job.jid)
                else:
                    tasks = running.get(job.jid, no_tasks)
                    u_m = self.map_utility(sim, job, tasks, job.maps_running)
                    last = self.hopeless == "last" and self.cannot_meet(sim, job, tasks)
                    key = (2 if last else 1, u_m + u_r, job.deadline_s, job.jid)
            if best_key is None or key < best_key:
                best, best_key = i, key
        return best

    def prepare(self, sim: ClusterView, running: dict[int, list[Task]]) -> None:
        """Hook for per-decision precomputation (Reverse-Adaptive's s_fit); ``running`` holds
        the running tasks by job under ``s_req_basis="work"`` and is empty otherwise."""
