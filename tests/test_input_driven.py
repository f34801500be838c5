"""Variance reduction for input-driven environments (``agents/training/input_driven.py``, the
trainer's ``input_driven`` option): groups of envs that share their inputs, the input-dependent
baseline, the differential reward and the curriculum on episode length, at tiny scale."""

import math

import numpy as np
import pytest

from mrsched_gym.agents.training.input_driven import InputDrivenConfig, SameInput, input_baselines

SHORT = {"workload.duration_s": 600}


def _jobs(env):
    """The episode's input as the world drew it: every job's arrival and work."""
    return [(j.arrival_s, j.total_work, j.deadline_s) for j in env.unwrapped.sim.jobs]


# ---------------------------------------------------------------------- the baseline
def test_the_baseline_is_the_groups_mean_return_to_go_at_the_same_time():
    """Worked by hand: env 0 decides at t = 0, 10, 20 and env 1 at t = 0, 5, 30 on the same
    input (one group), both episodes ending in the rollout. At each decision time the baseline
    is the mean of both envs' return-to-go from their last decision at or before that time (0
    after an episode's end)."""
    times = np.array([[0.0, 0.0], [10.0, 5.0], [20.0, 30.0]])
    returns = np.array([[6.0, 8.0], [4.0, 3.0], [1.0, 2.0]])
    episodes = np.zeros((3, 2), int)
    ended = np.array([[False, False], [False, False], [True, True]])
    base, cover = input_baselines(returns, times, episodes, ended, k=2)
    expected = np.array([[(6 + 8) / 2, (6 + 8) / 2],      # t=0: both at their first decision
                         [(4 + 3) / 2, (6 + 3) / 2],      # env 0 at t=10, env 1 at t=5
                         [(1 + 3) / 2, (0 + 2) / 2]])     # env 0 at t=20; env 1 at t=30: env 0
    np.testing.assert_allclose(base, expected)            # has ended (0 to go)
    assert (cover == 2).all()


def test_an_env_whose_rollout_stops_before_the_time_is_left_out():
    """Env 1's rollout stops at t=5 within its episode (not ended): at env 0's t=10 and t=20
    only env 0 covers the time; groups do not mix (envs 2, 3 form another group)."""
    times = np.array([[0.0, 0.0, 0.0, 0.0], [10.0, 5.0, 1.0, 1.0], [20.0, 5.0, 2.0, 2.0]])
    times[2, 1] = 6.0
    returns = np.array([[6.0, 8.0, 100.0, 200.0], [4.0, 3.0, 100.0, 200.0],
                        [1.0, 2.0, 100.0, 200.0]])
    episodes = np.zeros((3, 4), int)
    ended = np.zeros((3, 4), bool)
    base, cover = input_baselines(returns, times, episodes, ended, k=2)
    assert cover[1, 0] == 1 and base[1, 0] == 4.0
    assert cover[2, 0] == 1 and base[2, 0] == 1.0
    assert cover[1, 1] == 2 and base[1, 1] == (6.0 + 3.0) / 2
    np.testing.assert_allclose(base[:, 2:], 150.0)          # its own group's mean only


def test_episodes_are_matched_by_their_index():
    """Env 0 is in episode 1 while env 1 is still in episode 0: they do not share a baseline."""
    times = np.array([[5.0, 5.0]])
    returns = np.array([[1.0, 9.0]])
    base, cover = input_baselines(returns, times, np.array([[1, 0]]), np.zeros((1, 2), bool),
                                  k=2)
    assert cover.tolist() == [[1, 1]] and base.tolist() == [[1.0, 9.0]]


# ---------------------------------------------------------------------- the envs
def _group_envs(n=4, k=2, seed_base=1000, **cfg):
    from mrsched_gym.evaluate import make_env
    ic = InputDrivenConfig(rollouts_per_input=k, **cfg)
    envs = [SameInput(make_env("mrsched/Hadoop-v0", SHORT), seed_base, ic) for _ in range(n)]
    for i, e in enumerate(envs):
        e.reset(seed=seed_base + i)
    return envs


def _play_randomly(env, rng, steps):
    """Random legal actions (each env its own): the policies differ."""
    ends = 0
    for _ in range(steps):
        mask = env.unwrapped.action_masks()
        _, _, term, trunc, _ = env.step(int(rng.choice(np.flatnonzero(mask))))
        if term or trunc:
            env.reset()
            ends += 1
    return ends


def test_envs_of_a_group_see_the_same_input_whatever_the_policy():
    """Same input within a group (the first episode, and after several episodes played with
    different random actions), different inputs between groups."""
    envs = _group_envs()
    assert _jobs(envs[0]) == _jobs(envs[1]) and _jobs(envs[2]) == _jobs(envs[3])
    assert _jobs(envs[0]) != _jobs(envs[2])
    for e, s in zip(envs, (1, 2, 3, 4), strict=True):
        rng = np.random.default_rng(s)
        while e.episode < 2:
            _play_randomly(e, rng, 1)
    assert all(e.episode == 2 for e in envs)
    assert _jobs(envs[0]) == _jobs(envs[1]) and _jobs(envs[2]) == _jobs(envs[3])
    assert _jobs(envs[0]) != _jobs(envs[2])


def test_the_differential_reward_subtracts_the_rate_times_the_steps_time():
    from mrsched_gym.evaluate import make_env
    plain = make_env("mrsched/Hadoop-v0", SHORT)
    plain.reset(seed=7)
    diff = SameInput(make_env("mrsched/Hadoop-v0", SHORT), 7,
                     InputDrivenConfig(differential_reward=True))
    diff.reset(seed=7)
    diff.set_rate(-0.5)
    total_r = total_dt = 0.0
    for _ in range(30):
        a = int(np.flatnonzero(plain.unwrapped.action_masks())[0])
        _, r, *_ = plain.step(a)
        _, r2, _, _, info = diff.step(a)
        assert r2 == pytest.approx(r + 0.5 * info["input_dt_s"], rel=1e-12, abs=1e-12)
        total_r, total_dt = total_r + r, total_dt + info["input_dt_s"]
    assert total_dt > 0
    assert diff.take_totals() == pytest.approx((total_r, total_dt)) and diff.take_totals() == (0, 0)


def test_the_curriculum_truncates_a_groups_episodes_at_one_drawn_time():
    envs = _group_envs(curriculum_start_s=200.0, curriculum_growth_s=100.0)
    assert envs[0].horizon == envs[1].horizon != envs[2].horizon
    assert math.isfinite(envs[0].horizon)
    e = envs[0]
    h = e.horizon
    while True:
        _, _, term, trunc, _ = e.step(int(np.flatnonzero(e.unwrapped.action_masks())[0]))
        if term or trunc:
            break
    assert trunc and not term and e.unwrapped.sim.now >= h
    e.reset()
    assert e.horizon == envs[1].draw_horizon(1)
    assert InputDrivenConfig().rollouts_per_input == 4
    assert math.isinf(_group_envs(n=2)[0].horizon)             # no curriculum: no horizon


# ---------------------------------------------------------------------- the trainer option
torch = pytest.importorskip("torch")
pytest.importorskip("sb3_contrib")

from mrsched_gym.agents.training.train import (  # noqa: E402
    build_model,
    load_config,
    make_vec_env,
    train,
)
from mrsched_gym.config import ConfigError  # noqa: E402


def tiny(name="tiny_input", **kw):
    idc = {"rollouts_per_input": 2, "differential_reward": True, "curriculum_start_s": 300.0,
           "curriculum_growth_s": 100.0}
    idc.update(kw.pop("input_driven", {}))
    base = dict(name=name, total_timesteps=512, n_envs=4, env_kwargs=SHORT, tensorboard=False,
                input_driven=idc, **{"ppo.n_steps": 128, "ppo.batch_size": 128,
                                     "ppo.n_epochs": 1, "eval.n_seeds": 1,
                                     "eval.every_steps": 0, "eval.baselines": ["edf"]})
    base.update(kw)
    return load_config("hadoop_set", **base)


def test_bad_fields_are_named():
    with pytest.raises(ConfigError, match=r"input_driven.rollouts_per_input: n_envs \(4\)"):
        tiny(input_driven={"rollouts_per_input": 3})
    with pytest.raises(ConfigError, match=r"input_driven.rollouts_per_input: an integer >= 2"):
        tiny(input_driven={"rollouts_per_input": 1})
    with pytest.raises(ConfigError, match=r"input_driven.reward_rate_decay"):
        tiny(input_driven={"reward_rate_decay": 1.0})
    with pytest.raises(ConfigError, match=r"input_driven.curriculum_start_s"):
        tiny(input_driven={"curriculum_start_s": -1})
    with pytest.raises(ConfigError, match=r"input_driven: a single env only"):
        tiny(worlds={"ids": ["mrsched/Hadoop-v0"], "max_nodes": 25})


@pytest.mark.parametrize("numerics", ["fast", "exact"])
def test_the_update_uses_the_input_dependent_advantages(numerics):
    """After each rollout, before the update, the buffer's advantages are the returns minus
    the group's mean return-to-go wherever two or more of the group's envs cover the time (and
    GAE's elsewhere); some steps are covered."""
    from stable_baselines3.common.callbacks import BaseCallback

    from mrsched_gym.agents.training.input_driven import input_baseline_callback
    cfg = tiny(numerics=numerics)
    torch.manual_seed(0)
    model = build_model(cfg, make_vec_env(cfg))
    rewrite = input_baseline_callback(cfg.input_driven)
    seen = []

    class Check(BaseCallback):
        def _on_rollout_start(self):
            self.gae = None

        def _on_step(self):
            return True

        def _on_rollout_end(self):
            buf = self.model.rollout_buffer
            base, cover = input_baselines(buf.returns, np.array(rewrite.times),
                                          np.array(rewrite.episodes), np.array(rewrite.ends), 2)
            use = cover >= 2
            np.testing.assert_allclose(buf.advantages[use], (buf.returns - base)[use],
                                       rtol=1e-5, atol=1e-6)
            seen.append(float(use.mean()))

    model.learn(1024, callback=[rewrite, Check()])
    print(seen)
    assert len(seen) == 2 and min(seen) > 0.5, seen
    assert rewrite.rate is not None and rewrite.rate < 0      # rewards are costs


def test_a_short_run_completes_and_is_reproducible(tmp_path):
    """Two runs with the same seed: the same learning curve and the same weights."""
    runs = []
    for i in range(2):
        torch.set_num_threads(1)
        res = train(tiny(), tmp_path / str(i), progress=False)
        from mrsched_gym.agents.policy import load_sb3
        params = load_sb3(res["final_model"]).policy.state_dict()
        runs.append((res["history"], params))
    assert [h["mean"] for h in runs[0][0]] == [h["mean"] for h in runs[1][0]]
    assert all(torch.equal(runs[0][1][k], runs[1][1][k]) for k in runs[0][1])
