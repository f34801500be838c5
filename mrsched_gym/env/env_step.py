"""The per-decision work of :meth:`MRSchedEnv.step <mrsched_gym.env.MRSchedEnv.step>` and
:meth:`~mrsched_gym.env.MRSchedEnv.advance`: play the action, take the reward, build the info.

These are the env's per-step operations; they live apart from ``env.py`` so that the optional
compiled build (``setup.py``) compiles them from this same source with the simulator
(``env.py``'s class derives from ``gymnasium.Env``, which mypyc does not compile). The env holds
a :class:`Stepper`, checks its phase before calling it and adds the episode's log and metrics
after the last decision.
"""

from __future__ import annotations

from typing import Any, Final

import numpy as np

from mrsched_gym.config import REWARD_COMPONENTS
from mrsched_gym.env.encoding import ObservationEncoder
from mrsched_gym.env.env_setup import action_index
from mrsched_gym.env.rewards import RewardTracker
from mrsched_gym.errors import InputError
from mrsched_gym.sim.decision import DECISION_NAMES, SCHEDULE
from mrsched_gym.sim.engine import Simulator
from mrsched_gym.sim.native import mypyc_attr

#: The reward components' names (``Final``: a C static in the compiled build).
_COMPONENTS: Final = REWARD_COMPONENTS
#: ``info["reward_components"]`` before its values: copied, then filled (a copy of a dict of
#: these keys costs less than growing a new one key by key).
_NO_INCREMENTS: Final = dict.fromkeys(REWARD_COMPONENTS, 0.0)


def decision_mask(sim: Simulator, masks: list[np.ndarray], work_masks: list[np.ndarray],
                  allow_idle: bool) -> np.ndarray:
    """A fresh copy of the current decision's action mask (``MRSchedEnv.action_masks``):
    ``masks[k]`` with ``k`` candidates, or ``work_masks[k]`` (no skip) at a schedule decision
    unless idling is allowed (``env_setup.mask_tables``)."""
    d = sim.decision
    k = len(d.candidates)
    mask: np.ndarray = (masks if allow_idle or d.kind != SCHEDULE else work_masks)[k].copy()
    return mask


def decision_info(sim: Simulator, mask: np.ndarray, invalid: bool) -> dict[str, Any]:
    """The ``info`` dict of the current decision (the env's "Info" section)."""
    d = sim.decision
    return {"action_mask": mask, "decision": DECISION_NAMES[d.kind], "node": d.node,
            "time_s": sim.now, "n_candidates": len(d.candidates), "invalid_action": invalid,
            "episode_over": sim.done}


def play(sim: Simulator, rewards: RewardTracker, action: int, lean_info: bool,
         masks: list[np.ndarray], work_masks: list[np.ndarray], allow_idle: bool,
         info_mask: np.ndarray | None = None) -> tuple[float, bool, bool, dict[str, Any]]:
    """Apply ``action`` (an ``int``; illegal: played as skip, ``Simulator.act``) and run the world
    to its next decision, or close a world that ended before posing any. ``info["action_mask"]``
    is ``info_mask`` if given (the flat variants: every action legal), else the next decision's
    mask (:func:`decision_mask`).

    Returns:
        ``(reward, terminated, truncated, info)``; ``info`` without the episode's log and
        metrics (the env adds them once ``sim.done``), and only ``invalid_action`` and
        ``episode_over`` with ``lean_info``.
    """
    if sim.done:                # the world posed no decision before its end: close it
        valid = sim.is_legal(action)
    else:
        valid = sim.act(action)
    reward, inc = rewards.step(sim)
    done = sim.done
    truncated = sim.truncated
    terminated = done and not truncated
    if lean_info:
        return reward, terminated, truncated, {"invalid_action": not valid,
                                               "episode_over": done}
    if info_mask is None:
        info_mask = decision_mask(sim, masks, work_masks, allow_idle)
    info = decision_info(sim, info_mask, not valid)
    components = _NO_INCREMENTS.copy()
    for i in range(len(inc)):             # one increment per component, in their order
        components[_COMPONENTS[i]] = inc[i]
    info["reward_components"] = components
    return reward, terminated, truncated, info


@mypyc_attr(allow_interpreted_subclasses=True)      # copies and pickles: sim/native.py
class Stepper:
    """One env's ``step`` and ``advance`` after the phase check: the action read, checked and
    played (:func:`play`), then the observation built (``step``). The env's ``strict_actions``,
    ``lean_info`` and ``allow_idle`` are this object's attributes (the env's properties).

    Args:
        sim: The env's simulator.
        encoder: Its observation encoder.
        rewards: Its reward tracker.
        masks: The action masks by candidate count (``env_setup.mask_tables``).
        work_masks: The same without skip (work-conserving schedule decisions).
        objective: The observation's ``"objective"`` vector, or ``None`` (not observed).
    """

    def __init__(self, sim: Simulator, encoder: ObservationEncoder, rewards: RewardTracker,
                 masks: list[np.ndarray], work_masks: list[np.ndarray],
                 objective: np.ndarray | None) -> None:
        self.sim = sim
        self.encoder = encoder
        self.rewards = rewards
        self.masks = masks
        self.work_masks = work_masks
        self.objective = objective
        self.K = sim.K
        self.strict_actions = False
        self.lean_info = False
        self.allow_idle = False

    def mask(self) -> np.ndarray:
        """A fresh copy of the current decision's action mask (:func:`decision_mask`)."""
        return decision_mask(self.sim, self.masks, self.work_masks, self.allow_idle)

    def advance(self, action: Any) -> tuple[float, bool, bool, dict[str, Any]]:
        """Read ``action`` (``env_setup.action_index``), refuse an illegal one with
        ``strict_actions``, and :func:`play` it."""
        a: int = action if type(action) is int else action_index(action, self.K)
        if self.strict_actions and not self.sim.is_legal(a):
            raise InputError(f"action {a} is not legal now (mask {self.mask()})")
        return play(self.sim, self.rewards, a, self.lean_info, self.masks, self.work_masks,
                    self.allow_idle)

    def observe(self) -> dict[str, np.ndarray]:
        """The observation of the current decision (with the objective vector if observed)."""
        obs = self.encoder.observe()
        if self.objective is not None:
            obs["objective"] = self.objective.copy()
        return obs

    def step(self, action: Any) -> tuple[dict[str, np.ndarray] | np.ndarray, float, bool, bool,
                                         dict[str, Any]]:
        """:meth:`advance`, then the next decision's observation."""
        reward, terminated, truncated, info = self.advance(action)
        return self.observe(), reward, terminated, truncated, info
