"""The shape every mask-narrowing decision rule of a shipped agent shares: the rule reads the
world the agent was reset on and removes candidates from the env's action mask before the agent
chooses (:class:`~mrsched_gym.agents.affinity.AffinityDelegate`,
:class:`~mrsched_gym.agents.slow_start.SlowStartDelegate`).
"""

from __future__ import annotations

import numpy as np


def narrowed(mask: np.ndarray, out: list[int]) -> np.ndarray:
    """``mask`` with the candidates ``out`` removed (a copy when any is), and skip legal when no
    candidate is left (the env's work-conserving mask offers it then too)."""
    if not out:
        return mask
    mask = mask.copy()
    mask[out] = False
    if not mask[:-1].any():
        mask[-1] = True
    return mask


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
        return self.agent.act(obs, narrowed(mask, self.masked_candidates(self.sim)))

    def masked_candidates(self, sim) -> list[int]:
        """Indices of the candidates the rule removes at the current decision."""
        raise NotImplementedError


__all__ = ["MaskingDelegate", "narrowed"]
