"""Reduce slow-start at decision time: keep a job's reduce tasks out of the slots until the
fraction ``fraction`` of its maps is done (the rule of :class:`~mrsched_gym.agents.slow_start.
SlowStartDelegate`, and of the reference rules ``edf-slowstart`` and ``srpt-slowstart``).

Hadoop offers a job's reduces to the scheduler once 5% of its maps are done
(``mapreduce.job.reduce.slowstart.completedmaps``, the scenarios' ``decisions.slow_start``), so
that their shuffle overlaps the rest of the map phase. A reduce launched that early holds its
slot until the job's last map finishes (it cannot pass its un-shuffled share,
``mrsched_gym/sim/tasks.py``), and a scheduler that then serves other jobs' maps first (SRPT,
EDF, a learned order) leaves the job's reduces holding reduce slots that no other job can use.
On Admission-v1 (seeds 500-539: validation and beyond, not test) the hours of reduce slots held
by jobs whose maps were unfinished were a median 3.1 h under ``srpt``, but 8.7-12.6 h on the
three seeds where it lost most to Capacity (docs/notes/agents.md).

A scheduler may decline a slot (the env's skip), so it may also wait: at a schedule decision,
candidate ``j`` is *held* when it is a reduce and its job has finished fewer than
``fraction x n_maps`` maps. Held candidates are masked even when every candidate is held: the
slot then idles until the next event (unlike the affinity mask, which never masks every
candidate: here the point is to keep the slot free). Map candidates are never held, and a job's
reduces are never held once its maps are done, so no job waits forever. A reduce launched late
still does its whole shuffle (``_reduce_attempt``): the rule trades the shuffle's overlap with
the map phase for the slots the early reduces would hold.

``fraction`` of the shipped generalist: 1.0 (reduces wait for all their job's maps), chosen on
its validation seeds 500-509 between 0.8 and 1.0 (docs/notes/agents.md).
"""

from __future__ import annotations

from mrsched_gym.baselines.common import argmin_candidate, check_unit_share, edf_key
from mrsched_gym.baselines.simple import ReferenceRule, SRPTScheduler
from mrsched_gym.sim.decision import SCHEDULE
from mrsched_gym.sim.state import REDUCE


def check_fraction(fraction: float) -> float:
    """``fraction`` as a float in (0, 1].

    Raises:
        ValueError: Not a number in (0, 1].
    """
    return check_unit_share(fraction, "slow_start: fraction")


def held_reduces(sim, fraction: float) -> list[int]:
    """Indices of the schedule candidates held back (module docstring): reduces of jobs with
    fewer than ``fraction x n_maps`` maps done. Empty at other decisions; may be every
    candidate."""
    dec = sim.decision
    if dec.kind != SCHEDULE:
        return []
    return [i for i, c in enumerate(dec.candidates)
            if c.phase == REDUCE and c.job.maps_done < fraction * c.job.n_maps]


class SlowStartRule(ReferenceRule):
    """A reference rule's order among the candidates that are not held (module docstring); skip
    when every candidate is held.

    Args:
        fraction: The share of a job's maps done before its reduces may start, in (0, 1]
            (default 1.0, the shipped generalist's).
    """

    def __init__(self, fraction: float = 1.0) -> None:
        self.fraction = check_fraction(fraction)

    def pick(self, sim, running: dict) -> int:
        """The rule's choice (:meth:`key`) among the candidates not held, or skip."""
        held = set(held_reduces(sim, self.fraction))
        cands = sim.decision.candidates
        free = [i for i in range(len(cands)) if i not in held]
        if not free:
            return sim.K
        best = argmin_candidate([cands[i] for i in free],
                                lambda c: self.key(sim, running, c))
        return free[best]

    def key(self, sim, running: dict, c) -> tuple:
        """The order of the rule (lowest first)."""
        raise NotImplementedError


class EDFSlowStartScheduler(SlowStartRule):
    """EDF under the slow-start rule, a reference rule, not a paper's: the earliest deadline
    (:func:`~mrsched_gym.baselines.common.edf_key`) among the candidates not held (module
    docstring). It shows what the rule alone does beside the agent that plays under it
    (docs/notes/agents.md). Admission: accept. Preemption: wait."""

    name = "edf-slowstart"

    def key(self, sim, running: dict, c) -> tuple:
        """:func:`edf_key`."""
        return edf_key(c)


class SRPTSlowStartScheduler(SlowStartRule):
    """``srpt`` under the slow-start rule, a reference rule, not a paper's: the least remaining
    work (:meth:`SRPTScheduler.key`) among the candidates not held (module docstring).
    Admission: accept. Preemption: wait."""

    name = "srpt-slowstart"

    def key(self, sim, running: dict, c) -> tuple:
        """:meth:`SRPTScheduler.key`."""
        return SRPTScheduler.key(sim, running, c)


__all__ = ["EDFSlowStartScheduler", "SRPTSlowStartScheduler", "SlowStartRule", "check_fraction",
           "held_reduces"]
