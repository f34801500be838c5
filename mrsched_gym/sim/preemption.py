"""The ``PREEMPT`` decision: evict a lower-priority task for a waiting job (Pastorelli
et al.).

With ``decisions.preemption.enabled`` an accepted job of priority > 0 joins
``Simulator.preempt_queue`` with a budget of one preemption per map. While it waits for capacity
it is posed (after any admission) with victims ranked lowest priority first, then most recently
started (least work lost), each with every allowed primitive (``suspend`` only on nodes below
``max_suspended_per_node``, and not for a task whose speculative copy runs: killing it leaves
the copy to finish alone). Skip (``wait``) ends its preemptions; so do an exhausted budget and
the moment it no longer waits.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mrsched_gym.sim.cluster import fits
from mrsched_gym.sim.decision import (
    KILL,
    PREEMPT,
    SUSPEND,
    Decision,
    DecisionPart,
    PreemptCandidate,
)
from mrsched_gym.sim.state import ACTIVE, Job
from mrsched_gym.sim.tasks import kill, suspend

if TYPE_CHECKING:
    from mrsched_gym.config import Scenario
    from mrsched_gym.sim.engine import Simulator


def needs_preemption(sim: Simulator, job: Job) -> bool:
    """Whether ``job`` has budget left and tasks that the free capacity cannot take."""
    if job.state != ACTIVE or job.preempt_budget <= 0:
        return False
    waiting = job.pending_maps + (job.pending_reduces if job.reduce_ready else 0)
    if waiting == 0:
        return False
    if sim.slots_mode:
        free = sum(sim.map_slots[n] - sim.used_map[n] - len(sim.cleanups[n])
                   for n in sim.idle if sim.up[n]) if job.pending_maps else 0
        return waiting > max(free, 0)
    return not any(fits(sim, n, job.profile.map_demand) for n in sim.idle)


def candidates(sim: Simulator, job: Job) -> list[PreemptCandidate]:
    """Victims of lower priority than ``job`` with their primitives (ranked, at most K)."""
    cfg = sim.scenario.decisions.preemption
    victims = [t for t in sim.running.values() if t.job.priority < job.priority]
    if not victims:
        return []
    victims.sort(key=lambda t: (t.job.priority, -t.start_s, -t.tid))
    cands: list[PreemptCandidate] = []
    for t in victims:
        for prim in cfg.primitives:
            if prim == "suspend" and (len(sim.susp_on[t.node]) >= cfg.max_suspended_per_node
                                      or t.twin is not None):
                continue              # (a task with a speculative copy can only be killed)
            cands.append(PreemptCandidate(t, KILL if prim == "kill" else SUSPEND))
            if len(cands) == sim.K:
                return cands
    return cands


def pose(sim: Simulator) -> Decision | None:
    """The first queued job that needs a preemption and has victims; jobs that no longer need
    one (or have none to take) leave the queue."""
    queue = sim.preempt_queue
    while queue:
        job = sim.jobs[queue[0]]
        victims = candidates(sim, job) if needs_preemption(sim, job) else []
        if victims:
            return Decision(PREEMPT, sim.now, -1, job, tuple(victims))
        job.preempt_budget = 0
        queue.pop(0)
    return None


def apply(sim: Simulator, decision: Decision, action: int) -> None:
    """Kill or suspend the chosen victim (skip: wait, ending the job's preemptions)."""
    job = decision.job
    assert job is not None, "a preemption decision names the waiting job"
    if action == sim.K:
        job.preempt_budget = 0
    else:
        cand = decision.candidates[action]
        assert isinstance(cand, PreemptCandidate)
        job.preempt_budget -= 1
        if cand.primitive == KILL:
            kill(sim, cand.task)
        else:
            suspend(sim, cand.task)
    if job.preempt_budget <= 0:
        sim.preempt_queue.pop(0)


def enabled(scenario: Scenario) -> bool:
    """Whether ``scenario`` poses this kind (``decisions.preemption.enabled``)."""
    return bool(scenario.decisions.preemption.enabled)


PART = DecisionPart(PREEMPT, pose, apply, enabled)
