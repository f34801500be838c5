"""The scheduler interface every baseline (and a wrapped agent) implements."""

from __future__ import annotations

from mrsched_gym.sim.engine import ADMIT, PREEMPT


class Scheduler:
    """A fixed policy acting through the same decision interface as an agent.

    ``decide`` receives the simulator as its read-only view: the current decision is ``sim.kind``
    (``SCHEDULE``, ``ADMIT`` or ``PREEMPT``), ``sim.node`` and ``sim.candidates`` (candidate ``i``
    is action ``i``; action ``sim.K`` is skip). Baselines may read the documented read-only
    attributes of :class:`~mrsched_gym.sim.engine.Simulator` where their paper assumes that
    knowledge, and must never mutate it.
    """

    name = "base"

    @classmethod
    def applies_to(cls, scenario) -> bool:
        """Whether this baseline belongs in the leaderboard of ``scenario``."""
        return True

    def reset(self, sim, seed: int | None = None) -> None:
        """Called after every env reset, before the first decision."""

    def decide(self, sim) -> int:
        """Return the action for the current decision."""
        raise NotImplementedError


def default_action(sim) -> int | None:
    """The action of a scheduler that does not take part in a decision, or ``None``.

    Admission: accept (candidate 0). Preemption: wait (skip). A schedule decision without
    candidates: skip. Otherwise ``None``: the scheduler must choose.
    """
    if sim.kind == ADMIT:
        return 0
    if sim.kind == PREEMPT or not sim.candidates:
        return sim.K
    return None
