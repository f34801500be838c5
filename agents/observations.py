"""What an agent reads from an observation, shared by the SB3 agents
(:mod:`mrsched_gym.agents.policy`) and the numpy forward pass
(:mod:`mrsched_gym.agents.numpy_policy`): the decision array as the agent was trained on it, the
work-conserving mask, and the objective vector (observed, or read from the world at reset).
"""

from __future__ import annotations

import numpy as np

from mrsched_gym.env.encoding import DECISION_TAIL, kind_slice


def fit_decision(obs: dict, length: int) -> dict | None:
    """``obs`` as an agent trained on ``length``-entry decision arrays reads it.

    A world that poses more decision kinds (speculation) has a longer kind one-hot. On a
    decision of a kind the agent never saw this returns ``None``: the caller skips it, as every
    scheduler without that mechanism does (``baselines.base.default_action``). On the other
    decisions the extra kinds' (zero) entries are dropped, which gives the trained layout.
    """
    dec = obs["decision"]
    if len(dec) <= length:
        return obs
    kinds = kind_slice(dec)
    known = length - DECISION_TAIL
    if dec[kinds][known:].any():
        return None
    return dict(obs, decision=np.concatenate([dec[:known], dec[kinds.stop:]]))


def work_conserving_mask(mask: np.ndarray, is_schedule: bool) -> np.ndarray:
    """The mask without skip at a schedule decision that has a legal candidate."""
    if is_schedule and mask[:-1].any():
        mask = mask.copy()
        mask[-1] = False
    return mask


def world_objective(sim) -> np.ndarray:
    """The objective vector of ``sim``'s world (what ``observe_objective=True`` observes)."""
    from mrsched_gym.env.encoding import objective_vector
    return objective_vector(sim.scenario.reward.weights)


def objective_of(obs: dict, from_reset: np.ndarray | None, name: str) -> np.ndarray:
    """``obs["objective"]``, else the world's read at the agent's ``reset(sim)``
    (``from_reset``): an agent that observes the objective runs on envs that do not.

    Raises:
        ValueError: Neither is there (the message names the agent and the env option).
    """
    if "objective" in obs:
        return obs["objective"]
    if from_reset is None:
        raise ValueError(f"{name} observes the objective: make the env with "
                         f"observe_objective=True, or call reset(sim) first")
    return from_reset
