"""The scheduler interface every baseline (and a wrapped agent) implements."""

from __future__ import annotations

from mrsched_gym.sim.decision import ADMIT, PREEMPT, SPECULATE
from mrsched_gym.sim.view import ClusterView


class Scheduler:
    """A fixed policy acting through the same decision interface as an agent.

    ``decide`` receives the simulator as its read-only
    :class:`~mrsched_gym.sim.view.ClusterView`: the current decision is ``sim.decision`` (a
    :class:`~mrsched_gym.sim.decision.Decision`: its ``kind``, ``node``, ``job`` and named
    ``candidates``; candidate ``i`` is action ``i``, action ``sim.K`` is skip). Baselines may
    read the view's cluster state where their paper assumes that knowledge, and must never
    mutate it.
    """

    name = "base"

    @classmethod
    def applies_to(cls, scenario) -> bool:
        """Whether this baseline belongs in the leaderboard of ``scenario``."""
        return True

    def reset(self, sim: ClusterView, seed: int | None = None) -> None:
        """Called after every env reset, before the first decision."""

    def decide(self, sim: ClusterView) -> int:
        """Return the action for the current decision."""
        raise NotImplementedError


def default_action(sim: ClusterView) -> int | None:
    """The action of a scheduler that does not take part in a decision, or ``None``.

    Admission: accept (candidate 0). Preemption: wait (skip). Speculation: launch no copy
    (skip; a scheduler without speculation is Hadoop with speculative execution off). A schedule
    decision without candidates: skip. Otherwise ``None``: the scheduler must choose.
    """
    d = sim.decision
    if d.kind == ADMIT:
        return 0
    if d.kind == PREEMPT or d.kind == SPECULATE or not d.candidates:
        return sim.K
    return None
