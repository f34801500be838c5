"""Agents under the hardware-affinity mask (:mod:`mrsched_gym.baselines.affinity`, where the rule
and its threshold are documented): the observation shows each candidate's expected speed on the
decision node only, so a network cannot tell that a job would run many times faster elsewhere;
the mask keeps such a job off the node while another candidate can use the slot.
"""

from __future__ import annotations

from mrsched_gym.agents.masking import MaskingDelegate
from mrsched_gym.baselines.affinity import SpeedTable, check_min_ratio, slow_candidates


class AffinityDelegate(MaskingDelegate):
    """An agent whose schedule decisions are made under the affinity mask (module docstring).

    Args:
        agent: An agent with ``reset(sim)`` and ``act(obs, mask)``.
        min_ratio: The mask's speed ratio, in (0, 1].
    """

    rule = "the affinity mask"

    def __init__(self, agent, min_ratio: float) -> None:
        super().__init__(agent)
        self.min_ratio = check_min_ratio(min_ratio)
        self.table: SpeedTable | None = None

    def reset(self, sim, seed: int | None = None) -> None:
        """Reset the agent and build the world's speed table."""
        super().reset(sim, seed=seed)
        self.table = SpeedTable(sim)

    def masked_candidates(self, sim) -> list[int]:
        """The slow candidates (:func:`slow_candidates`), by the table :meth:`reset` built."""
        if self.table is None:
            raise ValueError(f"{self.name}: call reset(sim) before act (the affinity mask "
                             f"reads the world)")
        return slow_candidates(sim, self.table, self.min_ratio)


__all__ = ["AffinityDelegate"]
