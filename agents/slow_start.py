"""Agents under the reduce slow-start rule (:mod:`mrsched_gym.baselines.slow_start`, where the
rule and its fraction are documented): a job's reduces wait for a share of its maps, so that they
do not hold reduce slots while other jobs' maps are served first.
"""

from __future__ import annotations

import numpy as np

from mrsched_gym.baselines.slow_start import check_fraction, held_reduces


class SlowStartDelegate:
    """An agent whose schedule decisions are made with the held reduces masked (module
    docstring); when every candidate is held, only skip is left.

    Args:
        agent: An agent with ``reset(sim)`` and ``act(obs, mask)`` that acts within the mask.
        fraction: The share of a job's maps done before its reduces may start, in (0, 1].
    """

    def __init__(self, agent, fraction: float) -> None:
        if not getattr(agent, "masked", True):
            raise ValueError(f"{agent.name}: the slow-start rule needs an agent that acts "
                             f"within the env's action mask (MaskablePPO); this one ignores "
                             f"masks")
        self.agent = agent
        self.fraction = check_fraction(fraction)
        self.name = agent.name
        self.masked = True
        self._sim = None

    def reset(self, sim, seed: int | None = None) -> None:
        """Reset the agent; keep the world, whose decisions the rule reads."""
        self.agent.reset(sim, seed=seed)
        self._sim = sim

    def act(self, obs: dict, mask: np.ndarray) -> int:
        """The agent's action, with the held reduces masked."""
        if self._sim is None:
            raise ValueError(f"{self.name}: call reset(sim) before act (the slow-start rule "
                             f"reads the world)")
        held = held_reduces(self._sim, self.fraction)
        if held:
            mask = mask.copy()
            mask[held] = False
        return self.agent.act(obs, mask)


__all__ = ["SlowStartDelegate"]
