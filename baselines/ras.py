"""The Resource-aware Adaptive Scheduler (RAS) of Polo's thesis (ch. 4) and its utilities.

RAS (ch. 4.2): utility u_j = u_M + u_R (Eq. 5) with u_M = log(s_alloc)/log(s_req) - 1 below the
requirement and (s_alloc - s_req)/(s_pend - s_req) above it (Eq. 6), u_R = log(r_alloc)/log(r_pend)
- 1 (Eq. 7); the placement maximises the minimum utility (Eq. 8) under each node's resource
capacity (Eq. 9-10). At a heartbeat this is the inner loop of Algorithm 1: reducers first, spread
(a job's reduce goes to a node that runs none of its reduces while its u_R < 0), then the map of
the job with the lowest utility among those with room on the node. Room is the simulator's own
capacity check (a free slot, or in containers mode the job's demand profile fitting the node's
free resources), so RAS runs with dynamic job slots when the scenario is in containers mode.

s_req is the whole-job estimate of :func:`~mrsched_gym.baselines.common.required_slots` (thesis
Eq. 1 with the reduce work counted; ``slots_estimate`` picks its reading, whole waves by
default), at most the job's unfinished maps. Gaps we filled (documented, tested): u_R uses
log(1 + r) so it is defined for one reduce (range [-1, 0] as the thesis states); s_pend counts
the job's maps not yet finished; RAS uses the job's submitted profile for mu until tasks finish
(the thesis' job profile).
"""

from __future__ import annotations

import math

from mrsched_gym.baselines.base import Scheduler, default_action
from mrsched_gym.baselines.common import check_slots_estimate, required_slots, running_by_job
from mrsched_gym.sim.state import MAP, REDUCE


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


class RASScheduler(Scheduler):
    """Resource-aware Adaptive Scheduler (thesis ch. 4): max-min utility placement.

    Args:
        slots_estimate: Eq. 1's reading for s_req, ``"waves"`` (the thesis's) or ``"fluid"``
            (:func:`~mrsched_gym.baselines.common.eq1_slots`).
    """

    name = "ras"

    def __init__(self, slots_estimate: str = "waves") -> None:
        self.slots_estimate = check_slots_estimate(slots_estimate)

    def map_utility(self, sim, job, tasks) -> float:
        """Utility of ``job``'s map allocation (thesis Eq. 6), ``tasks`` its running tasks."""
        s_alloc = sum(1 for t in tasks if t.phase == MAP)
        s_req = self.s_req(sim, job, tasks)
        return ras_map_utility(s_alloc, s_req, job.n_maps - job.maps_done)

    def s_req(self, sim, job, tasks) -> float:
        """Map slots ``job`` needs to meet its goal (:func:`required_slots`), at most its
        unfinished maps (all of them when no estimate exists yet)."""
        r = required_slots(job, tasks, sim.now, prior=True, estimate=self.slots_estimate)
        return min(r, float(job.n_maps - job.maps_done)) if math.isfinite(r) else \
            float(job.n_maps - job.maps_done)

    def decide(self, sim) -> int:
        """Max-min utility placement (thesis Algorithm 1): a reduce of a job whose reduce
        utility is negative first (at most one of its reduces per node), else the map candidate
        with the lowest map + reduce utility; earliest deadline next."""
        a = default_action(sim)
        if a is not None:
            return a
        running = running_by_job(sim)
        n = sim.decision.node
        self.prepare(sim, running)
        best, best_key = 0, None
        for i, c in enumerate(sim.decision.candidates):
            job, phase = c.job, c.phase
            tasks = running.get(job.jid, ())
            r_alloc = sum(1 for t in tasks if t.phase == REDUCE)
            u_r = reduce_utility(r_alloc, job.n_reduces - job.reduces_done)
            if phase == REDUCE:
                if any(t.node == n and t.phase == REDUCE for t in tasks) or u_r >= 0:
                    continue
                key = (0, u_r, job.deadline_s, job.jid)      # reducers first (Algorithm 1)
            else:
                key = (1, self.map_utility(sim, job, tasks) + u_r, job.deadline_s, job.jid)
            if best_key is None or key < best_key:
                best, best_key = i, key
        return best

    def prepare(self, sim, running) -> None:
        """Hook for per-decision precomputation (Reverse-Adaptive's s_fit)."""
