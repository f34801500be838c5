"""The training speed-ups of ``numerics: fast`` and of the training envs compute what they
replace: the value MLP with its first layer split, the distinct node rows by 64-bit keys, the
work-conserving mask read from the decision, and the env's ``lean_info`` option."""

from __future__ import annotations

import re

import gymnasium as gym
import numpy as np
import pytest

th = pytest.importorskip("torch")
pytest.importorskip("sb3_contrib")

import mrsched_gym  # noqa: E402,F401
from mrsched_gym.agents import set_layers  # noqa: E402
from mrsched_gym.agents.networks import SetExtractor, SetPolicy, critic_latent  # noqa: E402
from mrsched_gym.agents.policy import WorkConserving, work_conserving_mask  # noqa: E402
from mrsched_gym.env.encoding import decision_kind_slot  # noqa: E402
from mrsched_gym.sim.decision import SCHEDULE  # noqa: E402


def _batch(n: int, seed: int = 0):
    """``n`` observations of Hadoop-v0 (first legal actions), as tensors, and their masks."""
    env = gym.make("mrsched/Hadoop-v0")
    obs, _ = env.reset(seed=seed)
    rows, masks = [], []
    for i in range(n * 7):
        mask = env.unwrapped.action_masks()
        if i % 7 == 0:
            rows.append(obs)
            masks.append(mask)
        obs, *_ = env.step(int(np.flatnonzero(mask)[i % mask.sum()]))
    batch = {k: th.as_tensor(np.stack([o[k] for o in rows])) for k in rows[0]}
    return env, batch, np.stack(masks)


def test_distinct_rows_by_keys_and_after_a_key_collision(monkeypatch):
    rng = np.random.default_rng(0)
    x = th.as_tensor(rng.integers(0, 3, (200, 10)).astype(np.float32))
    x[100:150] = x[:50].clone()                           # 50 repeated rows
    x[5] = -0.0                                           # -0.0 and 0.0 differ in their bytes
    x[6] = 0.0
    for collide in (False, True):
        if collide:                                       # every row the same key: fall back
            monkeypatch.setattr(set_layers, "row_keys", lambda a: np.zeros(len(a), np.uint64))
        first, index = set_layers.distinct_rows(x)
        assert th.equal(x[first][index], x)
        distinct = {r.tobytes() for r in x.numpy()}
        assert len(first) == len(distinct) < 160
        assert index[110] == index[10] and index[6] != index[5]   # equal rows, +0 vs -0


def test_split_critic_is_the_flat_value_mlp():
    env, obs, _ = _batch(6)
    pol = SetPolicy(env.observation_space, env.action_space, lambda _: 1e-3)
    fx = pol.features_extractor
    fx.fast_numerics = True
    sched = decision_kind_slot(SCHEDULE)
    with th.no_grad():
        sets = fx.encode_sets(obs)
        ref = pol.mlp_extractor.forward_critic(SetExtractor.flat_features(obs, sets))
        out = critic_latent(pol.mlp_extractor.value_net, sets,
                            obs["decision"][:, sched:sched + 1])
    th.testing.assert_close(out, ref, rtol=1e-5, atol=1e-5)


def test_fast_evaluate_actions_match_the_exact_path():
    env, obs, masks = _batch(8, seed=2)
    pol = SetPolicy(env.observation_space, env.action_space, lambda _: 1e-3,
                    work_conserving=True)
    actions = th.as_tensor([np.flatnonzero(m)[-1] for m in masks])
    with th.no_grad():
        ref = pol.evaluate_actions(obs, actions, th.as_tensor(masks))
        pol.features_extractor.fast_numerics = True
        out = pol.evaluate_actions(obs, actions, th.as_tensor(masks))
    for a, b in zip(ref, out, strict=True):
        th.testing.assert_close(a, b, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("env_id", ["mrsched/Admission-v1", "mrsched/Preemption-v0",
                                    "mrsched/Stragglers-v0"])
def test_work_conserving_wrapper_masks_as_the_function(env_id):
    env = WorkConserving(gym.make(env_id))
    base = env.unwrapped
    env.reset(seed=3)
    kinds = set()
    for step in range(1500):
        want = work_conserving_mask(base.action_masks(), base.sim.decision.kind == SCHEDULE)
        got = env.action_masks()
        assert np.array_equal(got, want), step
        kinds.add((base.sim.decision.kind, bool(got[:-1].any())))
        _, _, term, trunc, _ = env.step(int(np.flatnonzero(got)[step % got.sum()]))
        if term or trunc:
            env.reset(seed=step)
    assert len(kinds) >= 2


@pytest.mark.parametrize("env_id", ["mrsched/Hadoop-v0", "mrsched/Admission-v1"])
def test_lean_info_changes_only_the_info(env_id):
    """``lean_info=True``: the same observations, rewards and episode ends, step for step
    through an episode's end and the next reset; the step's info holds only
    ``invalid_action`` and ``episode_over``."""
    kw = {"workload.duration_s": 900}
    full, lean = gym.make(env_id, **kw), gym.make(env_id, lean_info=True, **kw)
    a, _ = full.reset(seed=5)
    b, info = lean.reset(seed=5)
    assert "action_mask" in info                          # reset's info is the usual one
    ends = 0
    for step in range(5000):
        assert all(np.array_equal(a[k], b[k]) for k in a), step
        mask = full.unwrapped.action_masks()
        act = int(np.flatnonzero(mask)[step % mask.sum()]) if step % 11 else full.unwrapped.K
        a, ra, ta, ua, ia = full.step(act)
        b, rb, tb, ub, ib = lean.step(act)
        assert (ra, ta, ua) == (rb, tb, ub)
        assert ib == {k: ia[k] for k in ("invalid_action", "episode_over")}
        if ta or ua:
            ends += 1
            assert "metrics" in ia and "metrics" not in ib
            if ends == 2:
                break
            a, _ = full.reset(seed=step)
            b, _ = lean.reset(seed=step)
    assert ends == 2


def test_a_lean_pool_changes_only_the_info():
    """``WorldPool(lean_info=True)`` (the training pools): the same worlds, observations,
    rewards and episode ends as the full pool, through two episodes."""
    from mrsched_gym.agents.training.worlds import WorldPool, WorldsConfig
    worlds = WorldsConfig(ids=["mrsched/Hadoop-v0", "mrsched/Preemption-v0"], max_nodes=25,
                          vary={"workload.load": [0.3, 0.4]})
    full, lean = WorldPool(worlds), WorldPool(worlds, lean_info=True)
    a, _ = full.reset(seed=2)
    b, _ = lean.reset(seed=2)
    ends = 0
    for step in range(20000):
        assert all(np.array_equal(a[k], b[k]) for k in a), step
        mask = full.action_masks()
        act = int(np.flatnonzero(mask)[step % mask.sum()])
        a, ra, ta, ua, ia = full.step(act)
        b, rb, tb, ub, ib = lean.step(act)
        assert (ra, ta, ua) == (rb, tb, ub) and ia["world"] == ib["world"]
        assert set(ib) == {"world", "invalid_action", "episode_over"}
        if ta or ua:
            ends += 1
            if ends == 2:
                break
            a, _ = full.reset()
            b, _ = lean.reset()
    assert ends == 2


def test_lean_info_must_be_a_bool():
    from mrsched_gym.errors import InputTypeError
    with pytest.raises(InputTypeError, match="lean_info must be True or False, got str 'yes'"):
        gym.make("mrsched/Hadoop-v0", lean_info="yes")
    assert gym.make("mrsched/Hadoop-v0", lean_info=np.bool_(True)).unwrapped.lean_info is True
    assert gym.make("mrsched/Hadoop-v0").unwrapped.lean_info is False


@pytest.mark.parametrize("ends", [{}, {"time_limit_s": 450}])   # terminated / truncated
def test_numpy_rollouts_fill_the_buffer_as_sb3_contribs_loop(monkeypatch, ends):
    """``NumpyRolloutPPO`` (numerics: fast) collects what sb3-contrib's rollout loop collects
    with the same policy: the same buffers, so the same weights after training, bit for bit
    (through episode ends: short episodes that end, or that hit the time limit, where the
    value of the last observation is bootstrapped)."""
    from sb3_contrib import MaskablePPO

    from mrsched_gym.agents import networks
    from mrsched_gym.agents.training.train import build_model, load_config, make_vec_env
    cfg = load_config("hadoop_set", total_timesteps=1024, n_envs=2, tensorboard=False,
                      numerics="fast", env_kwargs={"workload.duration_s": 300, **ends},
                      **{"ppo.n_steps": 256, "ppo.batch_size": 128, "ppo.n_epochs": 1})
    runs = []
    for reference in (False, True):
        if reference:
            monkeypatch.setattr(networks.NumpyRolloutPPO, "collect_rollouts",
                                MaskablePPO.collect_rollouts)
        model = build_model(cfg, make_vec_env(cfg))
        assert isinstance(model, networks.NumpyRolloutPPO)
        model.learn(1024)
        buf = model.rollout_buffer
        runs.append((model.policy.state_dict(), {k: v.copy() for k, v in buf.observations.items()},
                     [getattr(buf, k).copy() for k in ("actions", "rewards", "episode_starts",
                                                       "values", "log_probs", "action_masks",
                                                       "advantages", "returns")],
                     len(model.ep_info_buffer)))
    (w0, obs0, arrays0, eps0), (w1, obs1, arrays1, eps1) = runs
    assert eps0 == eps1 > 0
    assert all(np.array_equal(obs0[k], obs1[k]) for k in obs0)
    assert all(np.array_equal(a, b) for a, b in zip(arrays0, arrays1, strict=True))
    assert all(th.equal(w0[k], w1[k]) for k in w0)


def test_the_numpy_rollouts_follow_the_updates():
    """After PPO updates (``numerics: fast``) the numpy rollout pass has the policy's new
    weights: its log-probabilities and values are torch's to float32 rounding (the weights are
    read again when an optimiser step changed a parameter's version counter; an optimiser that
    does not count, such as Adam's fused kernel, would leave the rollouts on stale weights)."""
    from sb3_contrib.common.maskable.utils import get_action_masks

    from mrsched_gym.agents.networks import masked_log_probs
    from mrsched_gym.agents.training.train import build_model, load_config, make_vec_env
    cfg = load_config("hadoop_set", n_envs=2, tensorboard=False, numerics="fast",
                      **{"ppo.n_steps": 128, "ppo.batch_size": 64, "ppo.learning_rate": 1e-2})
    venv = make_vec_env(cfg)
    model = build_model(cfg, venv)
    model.learn(512)
    pol = model.policy
    obs, masks = model._last_obs, get_action_masks(venv)
    log_p, values = pol.numpy_actor()(obs, masks)
    with th.no_grad():
        latent_pi, latent_vf = pol.mlp_extractor(pol.extract_features(
            {k: th.as_tensor(v) for k, v in obs.items()}))
        ref_lp = masked_log_probs(pol.action_net(latent_pi), masks).numpy()
        ref_v = pol.value_net(latent_vf)[:, 0].numpy()
    np.testing.assert_allclose(log_p[masks], ref_lp[masks], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(values, ref_v, rtol=1e-5, atol=1e-5)


def test_numerics_default_is_fast_where_it_applies_and_shipped_configs_name_theirs():
    """``auto`` resolves by algorithm and policy; the config of every shipped agent names the
    numerics that trained it (a later change of the default must not change a re-run)."""
    from mrsched_gym.agents.pretrained import pretrained_agents
    from mrsched_gym.agents.training.train import bundled_configs, load_config
    from mrsched_gym.config import config_source
    assert load_config("hadoop_set", numerics="auto").numerics == "fast"
    assert load_config("hadoop_set", numerics="auto", algo="ppo").numerics == "exact"
    assert load_config("hadoop_flat", numerics="auto").numerics == "exact"
    assert load_config("hadoop_set").numerics == "exact"      # agent:hadoop-v0's run
    for name, info in pretrained_agents().items():
        _, text = config_source(info["config"], "agents")
        assert re.search(r"^numerics: (exact|fast)\b", text, re.M), name
    for name in bundled_configs():                       # every bundled config says which
        _, text = config_source(name, "agents")
        assert re.search(r"^numerics: (exact|fast)\b", text, re.M), name


def test_resume_refuses_other_numerics(tmp_path):
    """A run's numerics are not in its checkpoints: resuming an ``exact`` run with a config
    that resolves to ``fast`` (the default, say) is refused, naming the field."""
    from mrsched_gym.agents.training.train import load_config, train
    from mrsched_gym.config import ConfigError
    kw = dict(name="num", total_timesteps=256, n_envs=1, tensorboard=False,
              env_kwargs={"workload.duration_s": 300},
              **{"ppo.n_steps": 256, "ppo.batch_size": 128, "ppo.n_epochs": 1,
                 "eval.n_seeds": 1, "eval.every_steps": 0, "eval.baselines": []})
    out = train(load_config("hadoop_set", numerics="exact", **kw), tmp_path, progress=False)
    with pytest.raises(ConfigError, match="numerics: the run .* trained with exact"):
        train(load_config("hadoop_set", numerics="auto", **kw), tmp_path,
              resume=out["final_model"], progress=False)
