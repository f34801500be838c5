"""The Ray path: RLlib on the env and evaluation sweeps as Ray tasks, run locally.

CI installs the ``ray`` extra (see ``.ci/run``), so these run there; without Ray they skip.
"""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest

ray = pytest.importorskip("ray")

from mrsched_gym.ray_backend import (  # noqa: E402
    RLlibObservation,
    evaluate_ray,
    init_ray,
    make_rllib_env,
    register_rllib_envs,
    rllib_ppo_config,
    train_rllib,
)


@pytest.fixture(scope="module")
def local_ray():
    init_ray(num_cpus=2)
    yield
    ray.shutdown()


def _same(a, b) -> bool:
    return a == b or (isinstance(a, float) and isinstance(b, float) and math.isnan(a)
                      and math.isnan(b))


def test_flattening_wrapper_matches_the_dict_observation():
    env = make_rllib_env({"scenario": "mrsched/Hadoop-v0", "workload.load": 0.5})
    assert isinstance(env, RLlibObservation)
    assert env.unwrapped.scenario.workload.load == 0.5
    obs, _ = env.reset(seed=3)
    ref, _ = gym.make("mrsched/Hadoop-v0", workload__load=0.5).reset(seed=3)
    assert obs.shape == env.observation_space.shape and obs.dtype == np.float32
    np.testing.assert_array_equal(
        obs, np.concatenate([ref[k].ravel() for k in sorted(ref)]))
    assert env.observation_space.contains(obs)


def test_every_env_id_is_registered_for_rllib():
    from ray.tune.registry import ENV_CREATOR, _global_registry
    names = register_rllib_envs(["hadoop"])
    assert "rllib:mrsched/Hadoop-v0" in names and "rllib:hadoop" in names
    assert all(_global_registry.contains(ENV_CREATOR, n) for n in names)


def test_evaluation_sweep_as_ray_tasks_equals_the_local_harness(local_ray):
    from mrsched_gym.evaluate import evaluate
    kw = {"workload.duration_s": 900}
    remote = evaluate_ray(["fifo", "edf"], ["mrsched/Hadoop-v0"], [0, 1], env_kwargs=kw,
                          progress=False)
    local = evaluate(["fifo", "edf"], ["mrsched/Hadoop-v0"], [0, 1], workers=1,
                     progress=False, env_kwargs=kw)
    assert len(remote) == len(local) == 4
    for r, lo in zip(remote, local, strict=False):
        assert all(_same(r[k], lo[k]) for k in lo if k != "wall_s"), (r["policy"], r["seed"])


def test_bad_policy_fails_before_any_ray_task():
    with pytest.raises(ValueError, match="unknown baseline"):
        evaluate_ray(["nope"], ["mrsched/Hadoop-v0"], [0])


def test_rllib_ppo_trains_one_tiny_iteration(local_ray):
    cfg = rllib_ppo_config(env_overrides={"workload.duration_s": 900}, num_env_runners=0,
                           train_batch_size=256, minibatch_size=64, num_epochs=1, hidden=(32,))
    res = train_rllib(cfg, iterations=1)
    assert res[0]["training_iteration"] == 1
    assert res[0]["num_env_steps_sampled_lifetime"] >= 256
