"""Agents under the hardware-affinity mask (:mod:`mrsched_gym.baselines.affinity`, where the rule
and its threshold are documented): the observation shows each candidate's expected speed on the
decision node only, so a network cannot tell that a job would run many times faster elsewhere;
the mask keeps such a job off the node while another candidate can use the slot.
"""

from __future__ import annotations

import numpy as np

from mrsched_gym.baselines.affinity import SpeedTable, check_min_ratio, slow_candidates


class AffinityDelegate:
    """An agent whose schedule decisions are made under the affinity mask (module docstring).

    Args:
        agent: An agent with ``reset(sim)`` and ``act(obs, mask)``.
        min_ratio: The mask's speed ratio, in (0, 1].
    """

    def __init__(self, agent, min_ratio: float) -> None:
        if not getattr(agent, "masked", True):
            raise ValueError(f"{agent.name}: the affinity mask needs an agent that acts within "
                             f"the env's action mask (MaskablePPO); this one ignores masks")
        self.agent = agent
        self.min_ratio = check_min_ratio(min_ratio)
        self.name = agent.name
        self._sim = None
        self._table: SpeedTable | None = None

    def reset(self, sim, seed: int | None = None) -> None:
        """Reset the agent; keep the world, whose decisions the mask reads."""
        self.agent.reset(sim, seed=seed)
        self._sim = sim
        self._table = SpeedTable(sim)

    def act(self, obs: dict, mask: np.ndarray) -> int:
        """The agent's action, with the slow candidates masked."""
        if self._sim is None or self._table is None:
            raise ValueError(f"{self.name}: call reset(sim) before act (the affinity mask "
                             f"reads the world)")
        slow = slow_candidates(self._sim, self._table, self.min_ratio)
        if slow:
            mask = mask.copy()
            mask[slow] = False
        return self.agent.act(obs, mask)


__all__ = ["AffinityDelegate"]
