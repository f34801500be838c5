"""The Gymnasium contract over every registered id, plus SB3 compatibility and vector envs."""

import copy
import pickle

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env as gym_check_env

from mrsched_gym import ENV_IDS
from mrsched_gym.testing import (
    assert_same_record,
    first_legal,
    random_legal,
    rollout,
    world_fingerprint,
)

# The thesis-scale id is exercised by the benchmark; its week-long episode is too long for the
# per-id rollouts here, so those use a shortened variant (same model code).
SMALL = {"mrsched/ThesisScale-v0": {"workload__duration_s": 3600.0, "time_limit_s": 7200.0}}
IDS = sorted(ENV_IDS)


def make(env_id, **kw):
    return gym.make(env_id, **{**SMALL.get(env_id, {}), **kw})


@pytest.mark.parametrize("env_id", IDS)
def test_gymnasium_check_env(env_id):
    env = make(env_id)
    gym_check_env(env.unwrapped, skip_render_check=True)


@pytest.mark.parametrize("env_id", IDS)
@pytest.mark.filterwarnings(
    "ignore:Your observation (candidates|nodes) has an unconventional shape:UserWarning")
def test_sb3_check_env(env_id):
    """SB3's checker passes; its advice to flatten the set-shaped boxes is expected (the set
    network of mrsched_gym.agents.networks reads them as sets)."""
    from stable_baselines3.common.env_checker import check_env as sb3_check_env
    sb3_check_env(make(env_id).unwrapped, warn=True)


@pytest.mark.parametrize("env_id", IDS)
def test_lockstep_determinism(env_id):
    """Same seed -> identical observations, rewards, flags and infos (two env instances)."""
    a = rollout(make(env_id), random_legal(7), seed=123, max_steps=400)
    b = rollout(make(env_id), random_legal(7), seed=123, max_steps=400)
    assert_same_record(a, b)


@pytest.mark.parametrize("env_id", IDS)
def test_different_seeds_differ(env_id):
    e1, e2 = make(env_id), make(env_id)
    e1.reset(seed=1)
    e2.reset(seed=2)
    f1, f2 = world_fingerprint(e1.unwrapped.sim), world_fingerprint(e2.unwrapped.sim)
    assert any(f1[k].shape != f2[k].shape or not np.array_equal(f1[k], f2[k]) for k in f1)


@pytest.mark.parametrize("env_id", ["mrsched/Hadoop-v0", "mrsched/Dynamic-v0",
                                    "mrsched/Shared-v1"])
def test_common_random_numbers(env_id):
    """Two different policies see the same arrivals, task work, interference and availability."""
    fps = []
    for policy in (first_legal, random_legal(3)):
        env = make(env_id)
        rollout(env, policy, seed=42, max_steps=300)
        fps.append(world_fingerprint(env.unwrapped.sim))
    for k in fps[0]:
        assert np.array_equal(fps[0][k], fps[1][k]), k


def test_seed_zero_is_a_seed():
    e1, e2 = make("mrsched/Hadoop-v0"), make("mrsched/Hadoop-v0")
    e1.reset(seed=0)
    e2.reset(seed=0)
    assert_same_record(world_fingerprint(e1.unwrapped.sim), world_fingerprint(e2.unwrapped.sim))


@pytest.mark.parametrize("how", ["deepcopy", "pickle"])
def test_copy_mid_episode(how):
    """A copy taken mid-episode continues exactly like the original."""
    env = make("mrsched/Preemption-v0")
    policy = random_legal(5)
    obs, _ = env.reset(seed=9)
    for _ in range(150):
        obs, *_ = env.step(policy(env, obs))
    clone = copy.deepcopy(env) if how == "deepcopy" else pickle.loads(pickle.dumps(env))
    pa, pb = random_legal(11), random_legal(11)
    for _ in range(200):
        ra = env.step(pa(env, None))
        rb = clone.step(pb(clone, None))
        ra = (ra[0], ra[1], ra[2], ra[3], {k: v for k, v in ra[4].items() if k != "episode_log"})
        rb = (rb[0], rb[1], rb[2], rb[3], {k: v for k, v in rb[4].items() if k != "episode_log"})
        assert_same_record(ra, rb)
        if ra[2] or ra[3]:
            break


REGISTERED = sorted(i for i in gym.registry if i.startswith("mrsched/"))


@pytest.mark.parametrize("env_id", REGISTERED)
def test_every_registered_id_pickles_mid_episode(env_id):
    """Every id gym.make knows (flat variants and earlier versions included), pickled after
    some steps, continues as the original does."""
    small = SMALL.get(env_id.replace("-flat-", "-"), {})
    env = gym.make(env_id, **small)
    env.reset(seed=4)
    for t in range(20):
        env.step(t % 3)
    clone = pickle.loads(pickle.dumps(env))
    for t in range(60):
        ra, rb = env.step(t % 4), clone.step(t % 4)
        ra = (*ra[:4], {k: v for k, v in ra[4].items() if k != "episode_log"})
        rb = (*rb[:4], {k: v for k, v in rb[4].items() if k != "episode_log"})
        assert_same_record(ra, rb)
        if ra[2] or ra[3]:
            break


@pytest.mark.parametrize("vec", ["sync", "async"])
def test_vector_envs(vec):
    fns = [lambda: gym.make("mrsched/Hadoop-v0") for _ in range(2)]
    envs = gym.vector.SyncVectorEnv(fns) if vec == "sync" else gym.vector.AsyncVectorEnv(fns)
    try:
        obs, infos = envs.reset(seed=[1, 2])
        assert obs["candidates"].shape == (2, 8, 22)
        for _ in range(50):
            masks = infos["action_mask"]
            actions = np.array([int(np.flatnonzero(m)[0]) for m in masks])
            obs, rew, term, trunc, infos = envs.step(actions)
            assert rew.shape == (2,)
    finally:
        envs.close()


def test_action_mask_and_skip():
    env = make("mrsched/Hadoop-v0")
    obs, info = env.reset(seed=3)
    mask = env.unwrapped.action_masks()
    assert mask.dtype == bool and mask.shape == (env.action_space.n,)
    assert info["decision"] == "schedule" and info["n_candidates"] > 0
    assert not mask[-1], "work-conserving by default: no skip while a candidate waits"
    assert np.array_equal(mask, info["action_mask"])
    n = info["n_candidates"]
    assert mask[:n].all() and not mask[n:-1].any()
    assert obs["candidates"][:n, 0].all() and not obs["candidates"][n:, 0].any()
    idle = make("mrsched/Hadoop-v0", allow_idle=True)
    _, idle_info = idle.reset(seed=3)
    assert idle.unwrapped.action_masks()[-1], "allow_idle: skip offered at every decision"
    assert np.array_equal(idle_info["action_mask"][:-1], mask[:-1])
    twin = make("mrsched/Hadoop-v0")
    twin.reset(seed=3)
    for e in (env, idle, twin):                 # step() takes skip under either mask
        *_, i = e.step(env.action_space.n - 1)
        assert not i["invalid_action"]


def test_invalid_action_is_skip_and_flagged():
    env = make("mrsched/Hadoop-v0")
    env.reset(seed=3)
    twin = make("mrsched/Hadoop-v0")
    twin.reset(seed=3)
    K = env.action_space.n - 1
    bad = K + 1                                             # out of range
    o1, r1, *_, i1 = env.step(bad)
    o2, r2, *_, i2 = twin.step(K)
    assert i1["invalid_action"] and not i2["invalid_action"]
    assert_same_record(o1, o2)
    assert r1 == r2
    assert env.unwrapped.sim.invalid_actions == 1


def test_strict_actions_raise():
    env = make("mrsched/Hadoop-v0", strict_actions=True)
    env.reset(seed=3)
    bad = env.action_space.n                                # out of range
    with pytest.raises(ValueError, match="not legal"):
        env.step(bad)
    env.step(env.action_space.n - 1)   # skip still works


def test_return_equals_minus_objective():
    env = make("mrsched/Hadoop-v0")
    recs = rollout(env, random_legal(1), seed=5, max_steps=100_000)
    total = sum(r for _, r, *_ in recs)
    last = recs[-1][4]
    assert recs[-1][2] or recs[-1][3]
    m = last["metrics"]
    assert total == pytest.approx(-m["objective"], rel=1e-9, abs=1e-9)
    assert m["objective"] == pytest.approx(m[env.unwrapped.headline_metric])
    comps = sum(rec[4]["reward_components"]["deadline"] for rec in recs[1:])
    assert comps == pytest.approx(m["deadline_penalty_h"], rel=1e-9, abs=1e-12)


def test_flatten_observation_and_spaces():
    env = gym.wrappers.FlattenObservation(make("mrsched/Hadoop-v0"))
    obs, _ = env.reset(seed=0)
    assert env.observation_space.contains(obs)


@pytest.mark.parametrize("mode", ["ansi", "rgb_array"])
def test_render(mode):
    env = make("mrsched/Hadoop-v0", render_mode=mode)
    obs, _ = env.reset(seed=0)
    for _ in range(100):
        obs, *_ = env.step(first_legal(env, obs))
    out = env.render()
    if mode == "ansi":
        assert "node" in out and "job" in out
    else:
        assert out.dtype == np.uint8 and out.ndim == 3 and out.shape[2] == 3
        assert out.std() > 0


def test_scenario_object_and_overrides():
    from mrsched_gym import load_scenario
    sc = load_scenario("dedicated")
    env = gym.make("mrsched/Hadoop-v0", scenario=sc, **{"workload.load": 0.3})
    assert env.unwrapped.scenario.name == "dedicated"
    assert env.unwrapped.scenario.workload.load == 0.3
