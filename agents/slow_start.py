"""Agents under the reduce slow-start rule (:mod:`mrsched_gym.baselines.slow_start`, where the
rule and its fraction are documented): a job's reduces wait for a share of its maps, so that they
do not hold reduce slots while other jobs' maps are served first.
"""

from __future__ import annotations

from mrsched_gym.agents.masking import MaskingDelegate
from mrsched_gym.baselines.slow_start import check_fraction, held_reduces


class SlowStartDelegate(MaskingDelegate):
    """An agent whose schedule decisions are made with the held reduces masked (module
    docstring); when every candidate is held, only skip is left.

    Args:
        agent: An agent with ``reset(sim)`` and ``act(obs, mask)`` that acts within the mask.
        fraction: The share of a job's maps done before its reduces may start, in (0, 1].
    """

    rule = "the slow-start rule"

    def __init__(self, agent, fraction: float) -> None:
        super().__init__(agent)
        self.fraction = check_fraction(fraction)

    def masked_candidates(self, sim) -> list[int]:
        """The held reduces (:func:`held_reduces`)."""
        return held_reduces(sim, self.fraction)


__all__ = ["SlowStartDelegate"]
