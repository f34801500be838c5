"""The ``SCHEDULE`` decision: which job gets a node's free capacity .

Nodes with free capacity are offered one at a time (``Simulator.offer``, lowest index first);
an offered node that no runnable job can use is dropped until the next event frees or adds
capacity. Choosing a candidate launches a task of its job on the node and keeps offering the
same node while it has room; skip leaves it idle until the next event, and so does a launch that
fails for memory (``memory_overcommit: fail``): offered again at once, the same launch would fail
again at the same instant, for ever.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from mrsched_gym.sim.cluster import fits, has_free, reservation
from mrsched_gym.sim.decision import SCHEDULE, Decision, DecisionPart, ScheduleCandidate
from mrsched_gym.sim.state import MAP, NODE_LOCAL, REDUCE
from mrsched_gym.sim.tasks import launch

if TYPE_CHECKING:
    from mrsched_gym.sim.engine import Simulator

# What ScheduleCandidate(job, phase, locality) does, without the Python-level __new__ call
# (half the cost); each is made once per job (``Job.schedule_candidates``).
_new: Final = tuple.__new__
#: ``Job.schedule_candidates``'s slot of the reduce phase (the map phase's are its localities).
_REDUCE_SLOT: Final = 3


def candidates(sim: Simulator, n: int, K: int) -> list[ScheduleCandidate]:
    """Runnable job-phases that can launch on node ``n``: oldest job first, maps before
    reduces, at most ``K``."""
    if not sim.runnable:
        return []
    if sim.slots_mode:
        can_map = sim.n_map_jobs > 0 and sim.used_map[n] < sim.map_slots[n]
        can_red = sim.n_red_jobs > 0 and sim.used_red[n] < sim.red_slots[n]
    else:
        can_map = sim.n_map_jobs > 0
        can_red = sim.n_red_jobs > 0
    if not (can_map or can_red):
        return []
    return _scan(sim, n, K, can_map, can_red)


def _scan(sim: Simulator, n: int, K: int, can_map: bool, can_red: bool
          ) -> list[ScheduleCandidate]:
    """:func:`candidates` once it is known which phases have room on ``n``."""
    rack = sim.rack[n]
    cands: list[ScheduleCandidate] = []
    jobs = sim.jobs
    slots = sim.slots_mode
    for jid in sim.runnable:
        job = jobs[jid]
        if can_map and (job.pending_maps > 0 or (job.susp and job.suspended_on(n, MAP))):
            if slots or fits(sim, n, job.map_demand):
                loc = job.map_locality(n, rack) if job.pending_maps > 0 else NODE_LOCAL
                made = job.schedule_candidates
                cand = made[loc]
                if cand is None:
                    cand = made[loc] = _new(ScheduleCandidate, (job, MAP, loc))
                cands.append(cand)
                if len(cands) == K:
                    break
        if can_red and job.reduce_ready and (job.pending_reduces > 0 or (
                job.susp and job.suspended_on(n, REDUCE))):
            if slots or fits(sim, n, reservation(REDUCE, job.type_idx,
                                                 job.maps_done < job.n_maps)):
                made = job.schedule_candidates
                cand = made[_REDUCE_SLOT]
                if cand is None:
                    cand = made[_REDUCE_SLOT] = _new(ScheduleCandidate, (job, REDUCE, NODE_LOCAL))
                cands.append(cand)
                if len(cands) == K:
                    break
    return cands


def pose(sim: Simulator) -> Decision | None:
    """The next offered node some runnable job can use, with its candidates."""
    offer = sim.offer
    if not sim.runnable:
        offer.clear()                 # (what candidates() would find node by node)
        return None
    slots = sim.slots_mode
    has_map = sim.n_map_jobs > 0
    has_red = sim.n_red_jobs > 0
    while offer:
        n = offer[-1]
        if not sim.up[n]:
            offer.pop()
            continue
        # candidates(), with its room test inlined: most offered nodes have none
        if slots:
            can_map = has_map and sim.used_map[n] < sim.map_slots[n]
            can_red = has_red and sim.used_red[n] < sim.red_slots[n]
        else:
            can_map, can_red = has_map, has_red
        if can_map or can_red:
            cands = _scan(sim, n, sim.K, can_map, can_red)
            if cands:
                return Decision(SCHEDULE, sim.now, n, None, tuple(cands))
        offer.pop()
    return None


def apply(sim: Simulator, decision: Decision, action: int) -> None:
    """Launch the chosen candidate's task on the node (skip: leave the node idle)."""
    n = sim.offer.pop()
    if action != sim.K:
        cand = decision.candidates[action]
        assert isinstance(cand, ScheduleCandidate)
        failed = sim.n_failed
        launch(sim, cand.job, cand.phase, n)
        if has_free(sim, n) and sim.n_failed == failed:
            sim.offer.append(n)       # keep filling the same node (not after a failed launch)


PART = DecisionPart(SCHEDULE, pose, apply)
