"""Priority scheduling with task preemption by kill, wait or suspend (Pastorelli
et al.).

Scheduling: the highest-priority job first, oldest first within a priority class (the simple
priority scheduler of the paper's experiments). When a high-priority job waits for capacity the
simulator poses PREEMPT decisions; this baseline answers them with its fixed primitive:

* ``wait``: never preempt (skip); the high-priority job waits for running tasks to finish.
* ``kill``: kill the victim; its work is lost and it restarts later (Hadoop's default).
* ``suspend``: suspend the victim (SIGSTOP); its memory is paged out to swap only when the new
  task needs it, and paged back in when it resumes on the same node (the paper's OS-assisted
  primitive, Section III).

Eviction policies (the paper glosses over them, Section VI; we offer the common ones):
``youngest`` (the most recently started task, least work lost: Hadoop Fair Scheduler's choice and
our default), ``oldest`` (the task closest to finishing), ``least_memory`` (the smallest resident
memory, the cheapest to suspend). Victims always come from the lowest priority class present.
"""

from __future__ import annotations

from mrsched_gym.baselines.base import Scheduler, default_action
from mrsched_gym.baselines.common import argmin_candidate
from mrsched_gym.sim.decision import KILL, PREEMPT, SUSPEND, PreemptCandidate, ScheduleCandidate

EVICTION_POLICIES = ("youngest", "oldest", "least_memory")


def _priority_key(c: ScheduleCandidate) -> tuple:
    """The highest priority first, then the oldest job, maps before reduces."""
    return (-c.job.priority, c.job.jid, c.phase)


class PriorityPreemptionScheduler(Scheduler):
    """Priority scheduler that preempts with one primitive.

    Args:
        primitive: ``"kill"``, ``"wait"`` or ``"suspend"``.
        eviction: One of :data:`EVICTION_POLICIES`.
    """

    def __init__(self, primitive: str = "suspend", eviction: str = "youngest") -> None:
        if primitive not in ("kill", "wait", "suspend"):
            raise ValueError(f"primitive must be kill, wait or suspend, got {primitive!r}")
        if eviction not in EVICTION_POLICIES:
            raise ValueError(f"eviction must be one of {EVICTION_POLICIES}, got {eviction!r}")
        self.primitive = primitive
        self.eviction = eviction
        self.name = f"preempt-{primitive}"

    @classmethod
    def applies_to(cls, scenario) -> bool:
        """Whether ``scenario`` poses PREEMPT decisions (``decisions.preemption.enabled``)."""
        return bool(scenario.decisions.preemption.enabled)

    def _victim_key(self, c: PreemptCandidate) -> tuple:
        t = c.task
        if self.eviction == "youngest":
            k = -t.start_s
        elif self.eviction == "oldest":
            k = t.start_s
        else:
            k = t.mem_gb - t.swapped_gb
        return (t.job.priority, k, -t.tid)

    def decide(self, sim) -> int:
        """PREEMPT: the victim chosen by the eviction policy, preempted with the primitive (skip
        for ``wait`` or when no candidate offers the primitive). Otherwise the highest-priority
        job's candidate, oldest job first."""
        d = sim.decision
        if d.kind == PREEMPT:
            if self.primitive == "wait":
                return sim.K
            want = KILL if self.primitive == "kill" else SUSPEND
            idx = [i for i, c in enumerate(d.candidates) if c.primitive == want]
            if not idx:
                return sim.K
            sub = [d.candidates[i] for i in idx]
            return idx[argmin_candidate(sub, self._victim_key)]
        a = default_action(sim)
        if a is not None:
            return a
        return argmin_candidate(d.candidates, _priority_key)
