"""The shape every mask-narrowing decision rule of a shipped agent shares: the rule reads the
world the agent was reset on and removes candidates from the env's action mask before the agent
chooses (:class:`~mrsched_gym.agents.affinity.AffinityDelegate`,
:class:`~mrsched_gym.agents.slow_start.SlowStartDelegate`).
"""

from __future__ import annotations

import numpy as np


class MaskingDelegate:
    """An agent whose decisions are made under a mask that :meth:`masked_candidates` narrows.

    Args:
        agent: An agent with ``reset(sim)`` and ``act(obs, mask)`` that acts within the mask
            (a MaskablePPO agent); one that ignores masks is refused.
    """

    #: The rule's name in error messages.
    rule = "the rule"

    def __init__(self, agent) -> None:
        if not getattr(agent, "masked", True):
            raise ValueError(f"{agent.name}: {self.rule} needs an agent that acts within the "
                             f"env's action mask (MaskablePPO); this one ignores masks")
        self.agent = agent
        self.name = agent.name
        self.masked = True
        self.sim = None

    def reset(self, sim, seed: int | None = None) -> None:
        """Reset the agent; keep the world, whose decisions the rule reads."""
        self.agent.reset(sim, seed=seed)
        self.sim = sim

    def act(self, obs: dict, mask: np.ndarray) -> int:
        """The agent's action, with :meth:`masked_candidates` removed from ``mask``."""
        if self.sim is None:
            raise ValueError(f"{self.name}: call reset(sim) before act ({self.rule} reads the "
                             f"world)")
        out = self.masked_candidates(self.sim)
        if out:
            mask = mask.copy()
            mask[out] = False
            if not mask[:-1].any():     # no candidate left: skip is the legal action (the
                mask[-1] = True         # env's work-conserving mask offers it then too)
        return self.agent.act(obs, mask)

    def masked_candidates(self, sim) -> list[int]:
        """Indices of the candidates the rule removes at the current decision."""
        raise NotImplementedError


__all__ = ["MaskingDelegate"]
