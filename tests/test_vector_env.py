"""The native vector env (mrsched_gym/env/vector.py): gymnasium.make_vec on an id gives N worlds
in one process with their masks, each world's episodes the single env's, seed for seed, and every
output Gymnasium's SyncVectorEnv gives."""

import pickle

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode, SyncVectorEnv

import mrsched_gym  # noqa: F401
from mrsched_gym.config import ConfigError
from mrsched_gym.env.vector import MRSchedVectorEnv
from mrsched_gym.errors import InputError

ID = "mrsched/Hadoop-v0"
SHORT = {"workload.duration_s": 900}


def play(mask: np.ndarray, t: int) -> int:
    """A fixed policy that reads the mask: one legal action, chosen by the step count."""
    legal = np.flatnonzero(mask)
    return int(legal[t % len(legal)])


def single_episodes(seed: int, episodes: int) -> list[tuple]:
    """One world alone: ``episodes`` episodes from ``reset(seed=seed)``, then ``reset()``."""
    env = gym.make(ID, **SHORT)
    out = []
    obs, info = env.reset(seed=seed)
    for _ in range(episodes):
        t, steps = 0, []
        while True:
            a = play(info["action_mask"], t)
            obs, r, term, trunc, info = env.step(a)
            steps.append((a, {k: v.tobytes() for k, v in obs.items()}, r, term, trunc,
                          info["action_mask"].tobytes()))
            t += 1
            if term or trunc:
                break
        out.append(steps)
        obs, info = env.reset()
    env.close()
    return out


def test_make_vec_gives_the_native_vector_env_with_masks():
    venv = gym.make_vec(ID, num_envs=3, **SHORT)
    assert isinstance(venv, MRSchedVectorEnv)
    obs, info = venv.reset(seed=7)
    masks = venv.action_masks()
    assert masks.shape == (3, venv.single_action_space.n) and masks.dtype == bool
    assert np.array_equal(masks, info["action_mask"]) and info["_action_mask"].all()
    for i, env in enumerate(venv.envs):
        assert np.array_equal(masks[i], env.action_masks())
    assert {k: v.shape[0] for k, v in obs.items()} == {k: 3 for k in obs}
    venv.close()


def test_each_world_plays_the_single_envs_episodes_seed_for_seed():
    """World i of reset(seed=s) is the single env reset with s + i, its next episode (autoreset,
    NEXT_STEP) the single env's reset() after it."""
    n, seed, episodes = 3, 11, 2
    expected = [single_episodes(seed + i, episodes) for i in range(n)]
    venv = gym.make_vec(ID, num_envs=n, **SHORT)
    obs, info = venv.reset(seed=seed)
    got = [[[]] for _ in range(n)]
    t = [0] * n
    resetting = np.zeros(n, dtype=bool)
    while any(len(g) <= episodes for g in got):
        masks = venv.action_masks()
        actions = np.array([play(masks[i], t[i]) for i in range(n)])
        obs, rew, term, trunc, info = venv.step(actions)
        for i in range(n):
            if resetting[i]:              # this step reset world i: its action was not played
                assert rew[i] == 0.0 and not term[i] and not trunc[i]
                got[i].append([])
                t[i] = 0
                continue
            got[i][-1].append((int(actions[i]), {k: v[i].tobytes() for k, v in obs.items()},
                               float(rew[i]), bool(term[i]), bool(trunc[i]),
                               info["action_mask"][i].tobytes()))
            t[i] += 1
        resetting = term | trunc
    venv.close()
    for i in range(n):
        assert got[i][:episodes] == expected[i], f"world {i}"


def test_every_output_is_the_sync_vector_envs():
    """Observations, rewards, flags and infos equal Gymnasium's SyncVectorEnv's over the same
    worlds, through an autoreset (SAME_STEP: the final observation and info included)."""
    for mode in (AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP):
        ours = gym.make_vec(ID, num_envs=2, autoreset_mode=mode, **SHORT)
        theirs = gym.make_vec(ID, num_envs=2, vectorization_mode="sync",
                              vector_kwargs={"autoreset_mode": mode}, **SHORT)
        assert isinstance(theirs, SyncVectorEnv) and not isinstance(theirs, MRSchedVectorEnv)
        a, b = ours.reset(seed=3), theirs.reset(seed=3)
        ended = 0
        for t in range(400):
            assert_same(a, b)
            masks = np.stack(b[-1]["action_mask"])
            actions = np.array([play(m, t) for m in masks])
            a, b = ours.step(actions), theirs.step(actions)
            ended += int(np.sum(a[2] | a[3]))
        assert ended >= 1, "no episode ended: the autoreset was not compared"
        ours.close()
        theirs.close()


def assert_same(a, b):
    if isinstance(a, dict):
        assert sorted(a) == sorted(b)
        for k in a:
            assert_same(a[k], b[k])
    elif isinstance(a, tuple):
        assert len(a) == len(b)
        for x, y in zip(a, b, strict=True):
            assert_same(x, y)
    elif isinstance(a, np.ndarray) and a.dtype != object:
        assert a.dtype == b.dtype and np.array_equal(a, b, equal_nan=a.dtype.kind == "f")
    elif isinstance(a, np.ndarray):
        assert a.shape == b.shape
        for x, y in zip(a, b, strict=True):
            assert_same(x, y)
    elif isinstance(a, float) and np.isnan(a):
        assert np.isnan(b)
    elif isinstance(a, (int, float, str, bool, type(None), np.generic)):
        assert a == b
    else:                                    # an episode log, a list: the same pickled bytes
        assert type(a) is type(b) and pickle.dumps(a) == pickle.dumps(b)


def test_the_flat_variants_have_no_vector_entry_point():
    venv = gym.make_vec("mrsched/Hadoop-flat-v0", num_envs=2)
    assert type(venv) is SyncVectorEnv
    venv.close()


@pytest.mark.parametrize("bad", [0, -1, 2.5, True, "4"])
def test_a_bad_number_of_worlds_is_refused_naming_it(bad):
    with pytest.raises(InputError, match="num_envs"):
        MRSchedVectorEnv(bad, scenario="hadoop_default")


def test_a_bad_autoreset_mode_is_refused_naming_it():
    with pytest.raises(InputError, match="autoreset_mode"):
        gym.make_vec(ID, num_envs=2, autoreset_mode="sometimes")


def test_a_bad_env_argument_fails_once_before_any_world_runs():
    with pytest.raises(ConfigError, match="no_such_field"):
        gym.make_vec(ID, num_envs=2, **{"cluster.no_such_field": 1})


def test_masks_before_reset_are_an_episode_state_error():
    from mrsched_gym.errors import EpisodeStateError
    venv = gym.make_vec(ID, num_envs=2)
    with pytest.raises(EpisodeStateError):
        venv.action_masks()
    venv.close()
