"""The trainer's vectorised envs without deep copies: :class:`InProcessVecEnv` and
:class:`RewardNormalize`, what SB3's ``DummyVecEnv`` and ``VecNormalize`` return, faster.
"""

from __future__ import annotations

import numpy as np
from stable_baselines3.common.vec_env import DummyVecEnv, VecNormalize
from stable_baselines3.common.vec_env.util import dict_to_obs

# SB3's DummyVecEnv deep-copies its observation buffer and every step's info dicts, and
# VecNormalize deep-copies the observation again even when it does not normalise observations.
# The env returns a fresh info dict every step, so the copies only cost time (at an episode's end
# the info carries the whole episode log, whose deep copy costs more than a step). These
# subclasses return the same values: the observation arrays copied once, the info dicts as the
# env made them, a terminal observation copied (the env may reuse its arrays after the reset);
# training is unchanged to the last bit (tested).


class InProcessVecEnv(DummyVecEnv):
    """:class:`~stable_baselines3.common.vec_env.DummyVecEnv` that copies each observation
    array once and no info dict (see the comment above)."""

    def step_wait(self):
        """Step every env with its action; reset the envs whose episode ended."""
        for i, env in enumerate(self.envs):
            obs, self.buf_rews[i], terminated, truncated, info = env.step(self.actions[i])
            self.buf_dones[i] = terminated or truncated
            info["TimeLimit.truncated"] = truncated and not terminated
            if self.buf_dones[i]:
                info["terminal_observation"] = _copy_obs(obs)
                obs, self.reset_infos[i] = env.reset()
            self.buf_infos[i] = info
            self._save_obs(i, obs)
        return (self._obs_from_buf(), np.copy(self.buf_rews), np.copy(self.buf_dones),
                list(self.buf_infos))

    def _obs_from_buf(self):
        return dict_to_obs(self.observation_space, {k: v.copy() for k, v in self.buf_obs.items()})


class RewardNormalize(VecNormalize):
    """:class:`~stable_baselines3.common.vec_env.VecNormalize` that returns the observation
    itself, not a deep copy, when it does not normalise observations."""

    def normalize_obs(self, obs):
        """``obs`` unchanged without ``norm_obs``; else VecNormalize's normalisation."""
        return obs if not self.norm_obs else super().normalize_obs(obs)


def _copy_obs(obs):
    return {k: np.array(v) for k, v in obs.items()} if isinstance(obs, dict) else np.array(obs)


__all__ = ["InProcessVecEnv", "RewardNormalize"]
