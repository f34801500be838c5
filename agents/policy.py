"""Trained agents as policies of the evaluation harness (``agent:PATH.zip``)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import numpy as np


class AgentPolicy:
    """A stable-baselines3 / sb3-contrib model acting on the env's observation and mask.

    Deterministic actions; MaskablePPO gets the action mask, other algorithms' illegal choices
    are mapped to skip by the env (counted in ``invalid_actions``).
    """

    env_overrides: dict = {}

    def __init__(self, model, name: str) -> None:
        self.model = model
        self.name = name
        self.masked = type(model).__name__ == "MaskablePPO"

    def reset(self, sim, seed: Optional[int] = None) -> None:
        """Nothing to reset: the policy is stateless."""

    def act(self, obs: dict, mask: np.ndarray) -> int:
        if self.masked:
            a, _ = self.model.predict(obs, deterministic=True, action_masks=mask)
        else:
            a, _ = self.model.predict(obs, deterministic=True)
        return int(a)


def load_agent(path: str | Path) -> AgentPolicy:
    """Load a checkpoint saved by SB3 (``model.save``): MaskablePPO first, then PPO."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"agent checkpoint {str(path)!r} not found")
    try:
        import torch
        torch.set_num_threads(1)
        from sb3_contrib import MaskablePPO
        from stable_baselines3 import PPO
    except ImportError as e:
        raise ImportError("loading an agent needs the RL extra: pip install 'mrsched-gym[rl]'"
                          ) from e
    errors = []
    for cls in (MaskablePPO, PPO):
        try:
            return AgentPolicy(cls.load(str(path), device="cpu"), name=f"agent:{path.stem}")
        except Exception as e:  # noqa: BLE001 - try the next algorithm, report all below
            errors.append(f"{cls.__name__}: {e}")
    raise ValueError(f"{path}: not a MaskablePPO or PPO checkpoint ({'; '.join(errors)})")
