"""Action masks for sb3-contrib's ``MaskablePPO`` on any SB3 ``VecEnv``, with no round trip.

``MaskablePPO`` asks a ``VecEnv`` for masks with ``env_method("action_masks")`` before every
step. On a ``SubprocVecEnv`` that is one more message to every worker and back per step
(as sb3-contrib's users report). Every ``mrsched`` env already sends its mask with each step
and reset (``info["action_mask"]``), so :class:`MasksFromInfos` keeps the masks the workers sent
and answers ``env_method("action_masks")`` from them: the mask of the observation just returned
(after an episode ends, the new episode's, from SB3's ``reset_infos``).

Usage::

    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.vec_env import SubprocVecEnv
    from mrsched_gym.agents import SetPolicy
    from mrsched_gym.agents.vec_masks import MasksFromInfos

    env = MasksFromInfos(make_vec_env("mrsched_gym:mrsched/Hadoop-v0", n_envs=8,
                                      vec_env_cls=SubprocVecEnv))
    model = MaskablePPO(SetPolicy, env, seed=0)

(``mrsched_gym:`` makes each worker import the package, which registers the ids.)

Other methods and attributes go to the wrapped ``VecEnv`` as they would without it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
from stable_baselines3.common.vec_env import VecEnv, VecEnvWrapper

from mrsched_gym.errors import InputError

#: The info key every mrsched env puts its mask under, and the method MaskablePPO calls.
MASK_KEY = "action_mask"
METHOD = "action_masks"


class MasksFromInfos(VecEnvWrapper):
    """A ``VecEnv`` whose ``env_method("action_masks")`` answers from the masks its envs sent
    with their last step or reset (see the module).

    Args:
        venv: An SB3 ``VecEnv`` of mrsched envs (``DummyVecEnv``, ``SubprocVecEnv``, maybe
            wrapped in ``VecNormalize`` or ``VecMonitor``).

    Raises:
        InputError: An env's info holds no ``"action_mask"`` (not an mrsched env), at the
            first reset.
    """

    def __init__(self, venv: VecEnv) -> None:
        super().__init__(venv)
        self.masks: np.ndarray | None = None

    def reset(self) -> Any:
        """Reset every env; keep the masks of their first observations."""
        obs = self.venv.reset()
        self.masks = self._stack(self.venv.unwrapped.reset_infos)
        return obs

    def step_wait(self) -> Any:
        """Step every env; keep the masks of the observations returned (a new episode's where
        one ended)."""
        obs, rewards, dones, infos = self.venv.step_wait()
        resets = self.venv.unwrapped.reset_infos
        self.masks = self._stack([resets[i] if done else info
                                  for i, (done, info) in enumerate(zip(dones, infos,
                                                                       strict=True))])
        return obs, rewards, dones, infos

    def env_method(self, method_name: str, *method_args: Any,
                   indices: None | int | Iterable[int] = None, **method_kwargs: Any) -> list[Any]:
        """``action_masks`` from the kept masks (no call to the envs); any other method as the
        wrapped ``VecEnv`` calls it."""
        if method_name == METHOD and not method_args and not method_kwargs \
                and self.masks is not None:
            return [self.masks[i].copy() for i in self._get_indices(indices)]
        return self.venv.env_method(method_name, *method_args, indices=indices,
                                    **method_kwargs)

    @staticmethod
    def _stack(infos: Iterable[dict[str, Any]]) -> np.ndarray:
        masks = []
        for i, info in enumerate(infos):
            if MASK_KEY not in info:
                raise InputError(f"env {i} sent no info[{MASK_KEY!r}]: MasksFromInfos needs "
                                 f"mrsched envs, which send their action mask with every step")
            masks.append(info[MASK_KEY])
        return np.stack(masks)


__all__ = ["MasksFromInfos"]
