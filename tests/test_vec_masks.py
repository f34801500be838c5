"""MasksFromInfos (mrsched_gym/agents/vec_masks.py): MaskablePPO reads masks from what the envs
sent with their steps, with no round trip to the workers, and they are the envs' own masks."""

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

from sb3_contrib import MaskablePPO  # noqa: E402
from stable_baselines3.common.env_util import make_vec_env  # noqa: E402
from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv, VecNormalize  # noqa: E402

from mrsched_gym.agents.vec_masks import MasksFromInfos  # noqa: E402
from mrsched_gym.errors import InputError  # noqa: E402

ID = "mrsched/Hadoop-v0"
SHORT = {"workload.duration_s": 600}


def vec(cls, n=2, env_id=ID):
    kwargs = {"start_method": "fork"} if cls is SubprocVecEnv else None
    return make_vec_env(env_id, n_envs=n, seed=3, env_kwargs=SHORT, vec_env_cls=cls,
                        vec_env_kwargs=kwargs)


@pytest.mark.parametrize("cls", [DummyVecEnv, SubprocVecEnv])
def test_the_kept_masks_are_the_envs_own_through_episode_ends(cls):
    inner = vec(cls)
    env = MasksFromInfos(VecNormalize(inner, norm_obs=False))
    env.reset()
    rng = np.random.default_rng(0)
    ends = 0
    for _ in range(500):
        kept = np.stack(env.env_method("action_masks"))
        truth = np.stack(inner.env_method("action_masks"))      # the round trip, to check
        assert np.array_equal(kept, truth)
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in kept])
        _, _, dones, _ = env.step(actions)
        ends += int(dones.sum())
    assert ends >= 2, "no episode ended: the reset masks were not checked"
    kept = env.env_method("action_masks", indices=[1])
    assert len(kept) == 1 and np.array_equal(kept[0], inner.env_method("action_masks")[1])
    env.close()


def test_maskable_ppo_trains_without_asking_the_workers_for_masks():
    inner = vec(SubprocVecEnv)
    env = MasksFromInfos(inner)
    asked = []
    real = inner.env_method

    def spy(name, *args, **kwargs):
        asked.append(name)
        return real(name, *args, **kwargs)

    inner.env_method = spy
    model = MaskablePPO("MultiInputPolicy", env, n_steps=64, batch_size=64, n_epochs=1, seed=0)
    model.learn(256)
    assert "action_masks" not in asked
    env.close()


def test_an_env_without_a_mask_is_refused_naming_it():
    env = MasksFromInfos(make_vec_env("CartPole-v1", n_envs=2))
    with pytest.raises(InputError, match="env 0 sent no info\\['action_mask'\\]"):
        env.reset()
    env.close()


def test_other_methods_go_to_the_envs():
    inner = vec(DummyVecEnv)
    env = MasksFromInfos(inner)
    env.reset()
    assert env.env_method("action_masks")[0].shape == (inner.action_space.n,)
    assert env.get_attr("K") == inner.get_attr("K")
    env.close()
