"""Learned agents: networks, training, checkpoints, the harness, the shipped agent."""

from __future__ import annotations

import json
import math
import re

import gymnasium as gym
import numpy as np
import pytest

th = pytest.importorskip("torch")
pytest.importorskip("sb3_contrib")

from mrsched_gym.agents.kinds import agent_for_checks  # noqa: E402
from mrsched_gym.agents.networks import SetExtractor, SetPolicy  # noqa: E402
from mrsched_gym.agents.policy import AgentPolicy, load_agent, load_sb3, policy_logits  # noqa: E402
from mrsched_gym.agents.pretrained import agents_for, pretrained_agents  # noqa: E402
from mrsched_gym.agents.training.train import (  # noqa: E402
    TRAIN_SEED_BASE,
    build_model,
    load_config,
    make_vec_env,
    train,
)
from mrsched_gym.env.encoding import observed_kind  # noqa: E402
from mrsched_gym.errors import InputError  # noqa: E402
from mrsched_gym.evaluate import (  # noqa: E402
    evaluate,
    mean_ci95,
    run_episode,
    sweep_tasks,
)
from mrsched_gym.sim.decision import SCHEDULE  # noqa: E402

#: Short episodes (15 min of arrivals) keep the training tests to seconds.
SHORT = {"workload.duration_s": 900}


def tiny(name="tiny", **kw):
    base = dict(name=name, total_timesteps=2048, n_envs=2, env_kwargs=SHORT,
                tensorboard=False, **{"ppo.n_steps": 256, "ppo.batch_size": 128,
                                      "ppo.n_epochs": 2, "eval.n_seeds": 2,
                                      "eval.every_steps": 1024, "eval.baselines": ["edf"]})
    base.update(kw)
    return load_config("hadoop_set", **base)


#: The tests of a module fixture run on one pytest-xdist worker, so that it is built once.
TRAINED_GROUP = pytest.mark.xdist_group("trained")
HELD_OUT_GROUP = pytest.mark.xdist_group("held_out")


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    out = tmp_path_factory.mktemp("runs")
    return train(tiny(), out, progress=False)


def _obs(env_id="mrsched/Hadoop-v0", seed=0, min_cands=3):
    env = gym.make(env_id)
    obs, info = env.reset(seed=seed)
    while info["n_candidates"] < min_cands or info["decision"] != "schedule":
        obs, _, term, trunc, info = env.step(0)
        assert not (term or trunc)
    return env, obs, info


_logits = policy_logits


# ---------------------------------------------------------------------- the set network
def test_set_policy_is_permutation_equivariant():
    env, obs, info = _obs()
    pol = SetPolicy(env.observation_space, env.action_space, lambda _: 1e-3,
                    ortho_init=False)
    n = info["n_candidates"]
    perm = np.random.default_rng(0).permutation(n)
    shuffled = dict(obs, candidates=obs["candidates"].copy())
    shuffled["candidates"][:n] = obs["candidates"][perm]
    a, b = _logits(pol, obs), _logits(pol, shuffled)
    np.testing.assert_allclose(b[:n], a[:n][perm], rtol=1e-5, atol=1e-5)
    assert b[-1] == pytest.approx(a[-1], abs=1e-5)          # skip does not move
    # node order does not matter either (nodes are mean-pooled; the decision node is flagged)
    nperm = np.random.default_rng(1).permutation(obs["nodes"].shape[0])
    c = _logits(pol, dict(obs, nodes=obs["nodes"][nperm]))
    np.testing.assert_allclose(c, a, rtol=1e-5, atol=1e-5)


def test_set_policy_masks_illegal_and_work_conserving_skip():
    env, obs, info = _obs()
    n = info["n_candidates"]
    for wc in (False, True):
        pol = SetPolicy(env.observation_space, env.action_space, lambda _: 1e-3,
                        work_conserving=wc)
        lg = _logits(pol, obs)
        assert (lg[n:-1] < -1e7).all()                       # rows past the candidates
        assert (lg[:n] > -1e7).all()
        assert (lg[-1] < -1e7) == wc                         # skip only when work-conserving


def test_work_conserving_keeps_skip_at_admission():
    """Skip is reject at an admission decision: never masked there."""
    env = gym.make("mrsched/Admission-v1")
    obs, info = env.reset(seed=0)
    for _ in range(5000):
        if info["decision"] == "admit":
            break
        obs, _, term, trunc, info = env.step(0)
    assert info["decision"] == "admit"
    pol = SetPolicy(env.observation_space, env.action_space, lambda _: 1e-3,
                    work_conserving=True)
    assert _logits(pol, obs)[-1] > -1e7


# ---------------------------------------------------------------------- configs
@pytest.mark.parametrize("override, field", [
    ({"algo": "dqn"}, "algo"), ({"policy": "cnn"}, "policy"), ({"n_envs": 0}, "n_envs"),
    ({"ppo.learning_rat": 1e-3}, "ppo.learning_rat"), ({"env": "nope"}, "env"),
    ({"eval.baselines": ["nope"]}, "eval.baselines"), ({"colour": 1}, "colour"),
    ({"algo": "ppo", "policy": "flat"}, "work_conserving"),
])
def test_bad_config_names_the_field(override, field):
    with pytest.raises(ValueError, match=field.replace(".", r"\.")) as e:
        load_config("hadoop_set", **override)
    assert "hadoop_set.yaml" in str(e.value)


def test_bundled_configs_document_every_field():
    """Every field of the shipped configs carries a comment."""
    from importlib.resources import files

    from mrsched_gym.agents.training.train import bundled_configs
    assert "general_rules" in bundled_configs()
    for name in bundled_configs():
        text = files("mrsched_gym.configs").joinpath("agents", f"{name}.yaml").read_text()
        for line in text.splitlines():
            if line.strip() and not line.lstrip().startswith("#") and not line.endswith(":"):
                assert "#" in line, f"{name}.yaml: undocumented line {line!r}"
        load_config(name)


def test_training_envs_never_replay_evaluation_seeds():
    from mrsched_gym.agents.training.train_config import TrainConfig
    assert TrainConfig().env_seeds == "trainer"                          # the default
    cfg = tiny(env_seeds="trainer")
    venv = make_vec_env(cfg)
    assert venv.venv._seeds == [TRAIN_SEED_BASE, TRAIN_SEED_BASE + 1]   # under VecNormalize
    assert TRAIN_SEED_BASE > cfg.eval.seed_start + cfg.eval.n_seeds
    build_model(cfg, venv)          # SB3's seed= re-seeds them from cfg.seed; the trainer not
    assert venv.venv._seeds == [TRAIN_SEED_BASE, TRAIN_SEED_BASE + 1]
    venv.close()


def test_bundled_configs_keep_the_seeds_their_runs_used():
    """env_seeds: model (0.4.0's seeding: the model's seed + i), so the bundled configs still
    reproduce the shipped agents weight for weight."""
    cfg = tiny()
    assert cfg.env_seeds == "model"
    venv = make_vec_env(cfg)
    build_model(cfg, venv)
    assert venv.venv._seeds == [cfg.seed, cfg.seed + 1]
    venv.close()
    from mrsched_gym.config.errors import ConfigError
    with pytest.raises(ConfigError, match="env_seeds: must be trainer or model"):
        tiny(env_seeds="random")


# ---------------------------------------------------------------------- training
@pytest.mark.slow
@TRAINED_GROUP
def test_training_smoke_writes_every_output(trained, tmp_path):
    from pathlib import Path
    out = Path(trained["out"])
    for f in ("config.yaml", "baselines.json", "evaluations.csv", "best_model.zip",
              "last_model.zip", "final_model.zip", "state.json", "learning_curve.png"):
        assert (out / f).is_file(), f
    assert [h["step"] for h in trained["history"]] == [1024, 2048]   # periodic evaluation
    assert math.isfinite(trained["best"]) and trained["baselines"]["edf"] >= 0
    # TensorBoard: a run with logs on writes event files
    res = train(tiny("tb", tensorboard=True, total_timesteps=512), tmp_path, progress=False)
    assert list(Path(res["out"]).glob("tb/**/events.out.tfevents.*"))


@pytest.mark.slow
def test_plain_ppo_with_the_set_head_trains(tmp_path):
    res = train(tiny("ppo", algo="ppo", total_timesteps=512), tmp_path, progress=False)
    model = load_sb3(res["final_model"])
    assert type(model).__name__ == "PPO" and model.policy.work_conserving
    pol = AgentPolicy(model, "ppo")
    r = run_episode("mrsched/Hadoop-v0", pol, 0, SHORT)
    assert r["metrics"]["invalid_actions"] == 0               # the head masks illegal actions


def test_an_agent_trains_where_speculation_is_posed(tmp_path):
    """Agents can speculate too: the set network reads the longer decision array of a world
    with speculation decisions, trains, and acts legally in it (numpy forward pass included)."""
    res = train(tiny("spec", env="mrsched/Stragglers-v0", total_timesteps=256,
                     **{"ppo.n_steps": 128, "ppo.batch_size": 64, "eval.n_seeds": 1,
                        "eval.every_steps": 10**6, "eval.baselines": ["fifo"]}),
                tmp_path, progress=False)
    model = load_sb3(res["final_model"])
    assert model.observation_space["decision"].shape == (11,)
    r = run_episode("mrsched/Stragglers-v0", AgentPolicy(model, "spec"), 0, SHORT)
    assert r["metrics"]["invalid_actions"] == 0 and r["steps"] > 0


def test_value_warmup_moves_only_the_value_function(tmp_path):
    """value_warmup_steps: while within it, PPO updates change the value MLP and its output and
    nothing else (the set features, the policy head); after it, the policy moves too."""
    from mrsched_gym.agents.training.train import is_value_parameter
    cfg = tiny("warm", value_warmup_steps=1024, **{"eval.every_steps": 0})
    venv, threads = make_vec_env(cfg), th.get_num_threads()
    th.set_num_threads(cfg.torch_threads)        # as train() builds it (the orthogonal init's
    try:                                         # last bits depend on the thread count)
        start = {k: v.clone() for k, v in build_model(cfg, venv, None).policy.state_dict().items()}
    finally:
        th.set_num_threads(threads)
        venv.close()
    seen = {}

    def params_after(steps: int) -> dict:
        run = train(tiny("warm", value_warmup_steps=1024, total_timesteps=steps,
                         **{"eval.every_steps": 0}), tmp_path / str(steps), progress=False)
        return load_sb3(f"{run['out']}/final_model.zip").policy.state_dict()

    for steps in (1024, 2048):
        seen[steps] = params_after(steps)
    moved = {k for k, v in seen[1024].items() if not th.equal(v, start[k])}
    assert moved and all(is_value_parameter(k) for k in moved)
    assert moved >= {"value_net.weight", "mlp_extractor.value_net.0.weight"}
    assert not th.equal(seen[2048]["action_net.score.weight"], start["action_net.score.weight"])
    with pytest.raises(Exception, match="value_warmup_steps"):
        tiny(value_warmup_steps=-1)


@TRAINED_GROUP
def test_checkpoint_round_trip(trained, tmp_path):
    a = load_sb3(trained["final_model"])
    a.save(str(tmp_path / "again.zip"))
    b = load_sb3(tmp_path / "again.zip")
    sa, sb = a.policy.state_dict(), b.policy.state_dict()
    assert sa.keys() == sb.keys() and all(th.equal(sa[k], sb[k]) for k in sa)
    assert b.mrsched_work_conserving is True and type(b.policy) is SetPolicy
    env, obs, _ = _obs()
    pa, pb = AgentPolicy(a, "a"), AgentPolicy(b, "b")
    for _ in range(200):
        m = env.unwrapped.action_masks()
        x = pa.act(obs, m)
        assert x == pb.act(obs, m)
        obs, *_ = env.step(x)


@TRAINED_GROUP
def test_agent_matches_sb3_predict(trained):
    """The harness's fast path picks exactly what ``model.predict`` picks."""
    from mrsched_gym.agents.policy import work_conserving_mask
    model = load_sb3(trained["final_model"])
    pol = AgentPolicy(model, "a")
    env, obs, _ = _obs()
    for _ in range(200):
        m = env.unwrapped.action_masks()
        x = pol.act(obs, m)
        y, _ = model.predict(obs, deterministic=True,
                             action_masks=work_conserving_mask(
                                 m, observed_kind(obs["decision"]) == SCHEDULE))
        assert x == int(y)
        obs, *_ = env.step(x)


@TRAINED_GROUP
def test_loaded_agent_through_the_harness(trained):
    spec = f"agent:{trained['final_model']}"
    seq = evaluate([spec, "edf"], ["mrsched/Hadoop-v0"], [0, 1], workers=1, progress=False,
                   env_kwargs=SHORT)
    par = evaluate([spec, "edf"], ["mrsched/Hadoop-v0"], [0, 1], workers=2, progress=False,
                   env_kwargs=SHORT)
    assert [r["policy"] for r in seq] == ["agent:final_model"] * 2 + ["edf"] * 2
    for a, b in zip(seq, par, strict=False):
        assert a["deadline_penalty_h"] == b["deadline_penalty_h"] and a["steps"] == b["steps"]
    assert seq[0]["invalid_actions"] == 0 and seq[0]["jobs_finished"] > 0


@TRAINED_GROUP
def test_resume_continues_to_the_total(trained, tmp_path):
    import shutil
    from pathlib import Path
    run = tmp_path / "tiny"
    shutil.copytree(trained["out"], run)
    res = train(tiny(total_timesteps=3072), tmp_path, resume=run / "last_model.zip",
                progress=False)
    steps = [h["step"] for h in res["history"]]
    assert steps == [1024, 2048, 3072]                           # history kept and extended
    assert load_sb3(Path(res["final_model"])).num_timesteps == 3072


@TRAINED_GROUP
def test_fixed_seed_reproduces_training(trained, tmp_path):
    """Same seed, one thread, in-process envs: the same weights, bit for bit."""
    again = train(tiny(), tmp_path, progress=False)
    a = load_sb3(trained["final_model"]).policy.state_dict()
    b = load_sb3(again["final_model"]).policy.state_dict()
    assert all(th.equal(a[k], b[k]) for k in a)
    assert again["history"] == [dict(h, wall_s=g["wall_s"], eval_s=g["eval_s"])
                                for h, g in zip(trained["history"], again["history"], strict=False)]
    other = train(tiny("other", seed=1, total_timesteps=512), tmp_path, progress=False)
    c = load_sb3(other["final_model"]).policy.state_dict()
    assert not all(th.equal(a[k], c[k]) for k in a)


def _batch(n=6, seed=0):
    """``n`` observations of Hadoop-v0 (stacked, as a vec env returns them) and their masks
    (skip offered: ``allow_idle``, so the networks' own work-conserving masking is tested)."""
    env = gym.make("mrsched/Hadoop-v0", allow_idle=True)
    obs, _ = env.reset(seed=seed)
    rows, masks = [], []
    while len(rows) < n:
        m = env.unwrapped.action_masks()
        if m[:-1].sum() >= 2:
            rows.append(obs)
            masks.append(m)
        obs, *_ = env.step(int(np.flatnonzero(m)[-2 if m[:-1].any() else -1]))
    return env, {k: th.as_tensor(np.stack([o[k] for o in rows])) for k in rows[0]}, \
        np.stack(masks)


def test_lean_rollout_forward_and_update_equal_sb3_contrib():
    """SetPolicy.forward and evaluate_actions (no distribution objects) give sb3-contrib's floats
    to the last bit: the same sampled actions for the same seed, values, log-probabilities,
    entropies and gradients."""
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
    env, obs, masks = _batch()
    pol = SetPolicy(env.observation_space, env.action_space, lambda _: 1e-3,
                    work_conserving=True)
    with th.no_grad():
        out = []
        for forward in (SetPolicy.forward, MaskableActorCriticPolicy.forward):
            th.manual_seed(3)
            out.append(forward(pol, obs, action_masks=masks))
    for a, b in zip(*out, strict=True):
        assert th.equal(a, b)
    legal = masks[np.arange(len(masks)), out[0][0].numpy()]
    assert legal.all()                                           # only legal actions drawn
    actions = th.as_tensor(np.array([np.flatnonzero(m)[0] for m in masks]))
    res, grads = [], []
    for evaluate_actions in (SetPolicy.evaluate_actions,
                             MaskableActorCriticPolicy.evaluate_actions):
        pol.zero_grad()
        values, log_prob, entropy = evaluate_actions(pol, obs, actions, th.as_tensor(masks))
        (values.sum() + log_prob.sum() + entropy.sum()).backward()
        res.append((values, log_prob, entropy))
        grads.append([p.grad.clone() for p in pol.parameters()])
    for a, b in zip(*res, strict=True):
        assert th.equal(a, b)
    assert all(th.equal(a, b) for a, b in zip(*grads, strict=True))
    assert (res[0][2] > 0).all()                    # >= 2 legal actions: a positive entropy


def test_in_process_vec_env_returns_what_dummy_vec_env_returns():
    """The training envs without deep copies: the same observations, rewards, dones and info
    (terminal observations included) as SB3's DummyVecEnv + VecNormalize, step for step through
    episode ends; the returned arrays are copies."""
    from stable_baselines3.common.env_util import make_vec_env as sb3_make_vec_env
    from stable_baselines3.common.vec_env import DummyVecEnv, VecNormalize

    from mrsched_gym.agents.policy import WorkConserving
    from mrsched_gym.evaluate import make_env
    cfg = tiny(env_kwargs={"workload.duration_s": 300})
    ours = make_vec_env(cfg)
    lean = {**cfg.env_kwargs, "lean_info": True}                # as make_vec_env makes them
    ref = VecNormalize(sb3_make_vec_env(lambda: make_env(cfg.env, lean), n_envs=2,
                                        wrapper_class=WorkConserving, seed=TRAIN_SEED_BASE,
                                        vec_env_cls=DummyVecEnv),
                       norm_obs=False, gamma=cfg.ppo["gamma"])
    a, b = ours.reset(), ref.reset()
    ends = 0
    for step in range(3000):
        assert a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a), step
        ma, mb = ours.env_method("action_masks"), ref.env_method("action_masks")
        assert all(np.array_equal(x, y) for x, y in zip(ma, mb, strict=True))
        act = np.array([np.flatnonzero(m)[step % m.sum()] for m in ma])
        a["candidates"][:] = -1.0                      # the caller may scribble on its copy
        a, ra, da, ia = ours.step(act)
        b, rb, db, ib = ref.step(act)
        assert np.array_equal(ra, rb) and np.array_equal(da, db)
        for x, y in zip(ia, ib, strict=True):
            assert x.keys() == y.keys()
            if "terminal_observation" in x:
                ends += 1
                assert all(np.array_equal(x["terminal_observation"][k],
                                          y["terminal_observation"][k]) for k in a)
                assert (x["episode"]["r"], x["episode"]["l"]) == (y["episode"]["r"],
                                                                  y["episode"]["l"])
        if ends >= 3:
            break
    assert ends >= 3


@pytest.mark.parametrize("node_mask, work_conserving", [(False, True), (True, False)])
def test_numpy_rollouts_match_the_torch_policy(node_mask, work_conserving):
    """numerics: fast: the numpy rollout pass gives torch's log-probabilities of the legal
    actions and values (to float32 rounding), follows the weights after an optimiser step, and
    draws only legal actions, as often as their probabilities say."""
    from mrsched_gym.agents.networks import masked_log_probs
    from mrsched_gym.agents.numpy_rollout import NumpyActorCritic
    env, obs, masks = _batch(8, seed=1)
    pol = SetPolicy(env.observation_space, env.action_space, lambda _: 1e-2,
                    work_conserving=work_conserving,
                    features_extractor_kwargs=dict(node_mask=node_mask))
    fast = NumpyActorCritic(pol)
    obs_np = {k: v.numpy() for k, v in obs.items()}

    def check():
        with th.no_grad():
            latent_pi, latent_vf = pol.mlp_extractor(pol.extract_features(obs))
            ref_lp = masked_log_probs(pol.action_net(latent_pi), masks).numpy()
            ref_v = pol.value_net(latent_vf)[:, 0].numpy()
        fast.sync()
        log_p, values = fast(obs_np, masks)
        np.testing.assert_allclose(log_p[masks], ref_lp[masks], rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(values, ref_v, rtol=1e-5, atol=1e-5)
        return log_p, values

    before = check()
    values, log_prob, entropy = pol.evaluate_actions(
        obs, th.as_tensor([np.flatnonzero(m)[0] for m in masks]), th.as_tensor(masks))
    pol.optimizer.zero_grad()
    (values.sum() - log_prob.sum() - entropy.sum()).backward()
    pol.optimizer.step()
    after = check()                                   # the new weights, not the copied ones
    assert not np.allclose(before[1], after[1])
    log_p = after[0]
    draws = np.stack([fast.sample(log_p) for _ in range(4000)])
    assert masks[np.arange(len(masks)), draws].all()
    freq = np.stack([np.bincount(draws[:, b], minlength=masks.shape[1]) / len(draws)
                     for b in range(len(masks))])
    np.testing.assert_allclose(freq, np.exp(log_p), atol=0.04)


@pytest.mark.parametrize("node_mask", [False, True])
def test_fast_numerics_compute_the_same_features(node_mask):
    """numerics: fast (split layers, the node network once per distinct node row, only the
    candidate rows encoded) computes the set features of the exact path, to float32 rounding,
    with and without the node mask (rows without a candidate: 0, masked everywhere anyway)."""
    env, obs, _ = _batch(6)
    pol = SetPolicy(env.observation_space, env.action_space, lambda _: 1e-3,
                    features_extractor_kwargs=dict(node_mask=node_mask))
    fx = pol.features_extractor
    if node_mask:                                     # two absent (padded) nodes per observation
        obs = dict(obs, nodes=obs["nodes"].clone())
        obs["nodes"][:, -2:] = 0.0
    with th.no_grad():
        ref = fx.encode_sets(obs)
        fx.fast_numerics = True
        out = fx.encode_sets(obs)
    valid = ref.valid.unsqueeze(2)
    assert (out.candidates[valid.expand_as(out.candidates) == 0] == 0).all()
    assert 0 < ref.valid.sum() < ref.valid.numel()
    ref = ref._replace(candidates=ref.candidates * valid)
    for a, b in zip(ref, out, strict=True):
        th.testing.assert_close(a, b, rtol=1e-5, atol=1e-5)


def test_fast_numerics_train_reproducibly():
    """numerics: fast trains (numpy rollouts, split layers) and a fixed seed repeats the run."""
    weights = []
    for _ in range(2):
        cfg = tiny(numerics="fast", total_timesteps=512)
        model = build_model(cfg, make_vec_env(cfg))
        assert model.policy.numpy_rollouts and model.policy.features_extractor.fast_numerics
        model.learn(512)
        assert model.num_timesteps == 512 and model.policy._numpy_actor is not None
        weights.append(model.policy.state_dict())
    assert all(th.equal(weights[0][k], weights[1][k]) for k in weights[0])
    with pytest.raises(ValueError, match="numerics"):
        tiny(numerics="fast", algo="ppo")


@TRAINED_GROUP
def test_set_agent_runs_on_other_cluster_sizes_flat_agent_refuses(trained, tmp_path):
    pol = load_agent(trained["final_model"])
    for env_id in ("mrsched/Dedicated-v0", "mrsched/Dynamic-v0"):    # N = 20, W = 12
        r = run_episode(env_id, pol, 0, SHORT)
        assert r["metrics"]["jobs_finished"] > 0 and r["metrics"]["invalid_actions"] == 0
    cfg = tiny("flat", policy="flat", total_timesteps=256)
    model = build_model(cfg, make_vec_env(cfg))
    flat = AgentPolicy(model, "flat")
    with pytest.raises(ValueError, match="flat-network agent"):
        run_episode("mrsched/Dedicated-v0", flat, 0, SHORT)
    # a sweep checks it up front, before any episode runs; on its own world it fits
    model.save(tmp_path / "flat.zip")
    spec = f"agent:{tmp_path / 'flat.zip'}"
    assert len(sweep_tasks([spec], ["mrsched/Hadoop-v0"], [0, 1], SHORT)) == 2
    with pytest.raises(InputError, match=r"policy 'agent:flat': a flat-network agent .*nodes: "
                                         r"trained on \(\d+, \d+\), scenario "
                                         r"'mrsched/Dedicated-v0' gives"):
        sweep_tasks([spec, "edf"], ["mrsched/Hadoop-v0", "mrsched/Dedicated-v0"], [0], SHORT)
    sweep_tasks([f"agent:{trained['final_model']}"], ["mrsched/Dedicated-v0"], [0], SHORT)
    (tmp_path / "b").mkdir()                      # two files named alike: the error names which
    (tmp_path / "b" / "flat.zip").write_bytes((tmp_path / "flat.zip").read_bytes())
    named = f"policy 'agent:{tmp_path / 'b' / 'flat'}': a flat"
    with pytest.raises(InputError, match=re.escape(named)):
        sweep_tasks([f"agent:{tmp_path / 'b' / 'flat.zip'}", spec], ["mrsched/Dedicated-v0"], [0])
    # a file is loaded once per version for the checks, and the caller's torch threads are kept
    import torch
    threads = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        loads = agent_for_checks.cache_info().misses
        for _ in range(3):
            sweep_tasks([spec], ["mrsched/Hadoop-v0"], [0], SHORT)
        assert agent_for_checks.cache_info().misses == loads
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(threads)
    with pytest.raises(InputError, match="not found"):
        sweep_tasks([f"agent:{tmp_path / 'none.zip'}"], ["mrsched/Hadoop-v0"], [0])


# ---------------------------------------------------------------------- the shipped agent
def test_shipped_agent_is_listed_with_its_reproduce_command():
    agents = pretrained_agents()
    assert "hadoop-v0" in agents
    info = agents["hadoop-v0"]
    assert info["env"] == "mrsched/Hadoop-v0"
    assert info["command"].startswith("mrsched-gym train")
    assert "agent:hadoop-v0" in agents_for("mrsched/Hadoop-v0")
    assert "agent:hadoop-v0" not in agents_for("mrsched/Dedicated-v0")
    pol = load_agent(info["path"])
    assert isinstance(pol.model.policy.features_extractor, SetExtractor)
    from mrsched_gym.agents.pretrained import params_sha256
    assert params_sha256(info["path"]) == info["params_sha256"]     # the weights it describes
    import os
    assert os.path.getsize(info["path"]) < 2_000_000                 # small


@pytest.mark.parametrize("name, config, left_out", [
    ("general", "general", {"mrsched/ThesisScale-v0", "mrsched/Stragglers-v0"}),
    ("general-v2", "general_scale16", {"mrsched/Stragglers-v0"})])
def test_shipped_generalist_applies_to_every_id_it_was_trained_for(name, config, left_out):
    """A shipped generalist's metadata lists the ids of its pool (every id but Stragglers-v0,
    whose speculation decisions make a longer decision array, and for agent:general
    ThesisScale-v0, its week too long to train on), its numpy actor pools nodes with a mask, and
    its hash matches its weights. The leaderboard of each of its ids includes the current one,
    agent:general-v2, and not agent:general, which it superseded (still loadable by name)."""
    from mrsched_gym.agents.numpy_policy import NumpySetPolicy
    from mrsched_gym.agents.pretrained import params_sha256
    from mrsched_gym.agents.training.train import load_config
    from mrsched_gym.registration import ENV_IDS
    info = pretrained_agents()[name]
    assert info["envs"] == load_config(config).worlds.ids
    assert set(info["envs"]) == set(ENV_IDS) - left_out
    current = not info.get("superseded_by")
    assert current == (name == "general-v2")
    for env_id in ENV_IDS:
        assert (f"agent:{name}" in agents_for(env_id)) == (current and env_id in info["envs"])
    assert info["command"].startswith(f"mrsched-gym train {config} ")
    assert NumpySetPolicy.load(info["numpy_path"]).node_mask
    assert params_sha256(info["path"]) == info["params_sha256"]


@pytest.mark.parametrize("agent, env_id", [
    ("hadoop-v0", "mrsched/Hadoop-v0"), ("hadoop-v0", "mrsched/Dedicated-v0"),
    ("general", "mrsched/Hadoop-v0"), ("general", "mrsched/Dynamic-v0"),
    ("general-v2", "mrsched/Hadoop-v0"), ("general-v2", "mrsched/Dynamic-v0")])
def test_numpy_forward_pass_takes_the_torch_agents_actions(agent, env_id):
    """A shipped agent's numpy actor (no torch) picks the torch policy's action at every
    decision, on its own cluster and on another size (Dedicated-v0: other N; the generalist,
    trained on padded observations, unpadded with its node mask and its forecast padded)."""
    from mrsched_gym.agents.numpy_policy import NumpySetPolicy
    info = pretrained_agents()[agent]
    torch_pol, numpy_pol = load_agent(info["path"]), NumpySetPolicy.load(info["numpy_path"])
    env = gym.make(env_id)
    n = 0
    for seed in (0, 1):
        obs, _ = env.reset(seed=seed)
        for pol in (torch_pol, numpy_pol):           # as the harness does
            pol.reset(env.unwrapped.sim, seed=seed)
        while True:
            mask = env.unwrapped.action_masks()
            a = torch_pol.act(obs, mask)
            assert numpy_pol.act(obs, mask) == a, (seed, n)
            obs, _, term, trunc, _ = env.step(a)
            n += 1
            if term or trunc:
                break
    assert n > 1000


@pytest.mark.parametrize("agent", ["hadoop-v0", "general"])
def test_shipped_agents_play_a_world_with_speculation_and_skip_it(agent):
    """On Stragglers-v0 (a fourth decision kind, a longer decision array) a shipped agent skips
    every speculation decision, as every scheduler without speculation does, and reads the other
    decisions in its trained layout; torch and numpy agree."""
    from mrsched_gym.agents.numpy_policy import NumpySetPolicy
    from mrsched_gym.sim.decision import SPECULATE
    info = pretrained_agents()[agent]
    torch_pol, numpy_pol = load_agent(info["path"]), NumpySetPolicy.load(info["numpy_path"])
    env = gym.make("mrsched/Stragglers-v0", workload__duration_s=900)
    obs, _ = env.reset(seed=0)
    sim = env.unwrapped.sim
    for pol in (torch_pol, numpy_pol):               # as the harness does
        pol.reset(sim, seed=0)
    kinds = set()
    while True:
        mask = env.unwrapped.action_masks()
        a = numpy_pol.act(obs, mask)
        assert torch_pol.act(obs, mask) == a
        kinds.add(sim.decision.kind)
        if sim.decision.kind == SPECULATE:
            assert a == sim.K
        obs, _, term, trunc, info = env.step(a)
        if term or trunc:
            break
    assert SPECULATE in kinds and info["metrics"]["speculative_copies"] == 0
    assert info["metrics"]["invalid_actions"] == 0


def test_shipped_generalist_speculates_with_hadoops_rule_and_schedules_with_its_network():
    """agent:general's metadata names a speculation rule: through the harness every speculation
    decision is hadoop-speculative's and every other decision the network's (the bare numpy
    actor's, under the slow-start rule of the same metadata; the affinity mask masks nothing
    without accelerators); it launches copies (the bare agents launch none on the same episode:
    test_shipped_agents_play_a_world_with_speculation_and_skip_it). agent:hadoop-v0 names no
    rule and is not wrapped."""
    from mrsched_gym.agents.numpy_policy import NumpySetPolicy
    from mrsched_gym.agents.policy import SpeculationDelegate
    from mrsched_gym.baselines import make_baseline
    from mrsched_gym.baselines.slow_start import held_reduces
    from mrsched_gym.evaluate import make_policy
    from mrsched_gym.sim.decision import SPECULATE
    info = pretrained_agents()["general"]
    assert info["speculation"] == "hadoop-speculative"
    assert not isinstance(make_policy("agent:hadoop-v0"), SpeculationDelegate)
    pol = make_policy("agent:general")
    assert isinstance(pol, SpeculationDelegate) and pol.name == "agent:general"
    bare, rule = NumpySetPolicy.load(info["numpy_path"]), make_baseline("hadoop-speculative")
    env = gym.make("mrsched/Stragglers-v0", workload__duration_s=900)
    obs, _ = env.reset(seed=0)
    sim = env.unwrapped.sim
    for p in (pol, bare, rule):
        p.reset(sim, seed=0)
    n_spec = n_other = 0
    while True:
        mask = env.unwrapped.action_masks()
        a = pol.act(obs, mask)
        if sim.decision.kind == SPECULATE:
            assert a == rule.speculate(sim)
            n_spec += 1
        else:
            under = mask.copy()
            under[held_reduces(sim, info["slow_start"])] = False
            if not under[:-1].any():            # every candidate held: skip is offered
                under[-1] = True
            assert a == bare.act(obs, under)
            n_other += 1
        obs, _, term, trunc, out = env.step(a)
        if term or trunc:
            break
    assert n_spec > 10 and n_other > 100
    assert out["metrics"]["speculative_copies"] > 0 and out["metrics"]["invalid_actions"] == 0


def test_a_speculation_rule_must_be_a_speculating_baseline():
    from mrsched_gym.agents.policy import SpeculationDelegate
    from mrsched_gym.evaluate import PolicySpec, make_policy, parse_policy
    shipped = parse_policy("agent:general")
    for bad in ("fifo", "nope"):
        with pytest.raises(InputError, match=f"speculation: '{bad}' is not a baseline with a "
                                             f"speculation rule .*hadoop-speculative"):
            make_policy(PolicySpec(shipped.label, "agent", shipped.target,
                                   (("speculation", bad),)))
    with pytest.raises(ValueError, match="call reset"):
        SpeculationDelegate(make_policy("agent:hadoop-v0"), "late").act({}, np.ones(9, bool))


@TRAINED_GROUP
def test_numpy_export_round_trip(trained, tmp_path):
    """export_numpy writes what NumpySetPolicy reads: same logits as the torch actor."""
    from mrsched_gym.agents.numpy_policy import NumpySetPolicy
    from mrsched_gym.agents.policy import policy_logits
    from mrsched_gym.agents.training.numpy_export import export_numpy
    model = load_sb3(trained["final_model"])
    pol = NumpySetPolicy.load(export_numpy(model, tmp_path / "tiny"))
    env = gym.make("mrsched/Hadoop-v0")
    obs, _ = env.reset(seed=3)
    for _ in range(30):
        ref = policy_logits(model.policy, obs)
        legal = ref > -1e7
        assert np.allclose(pol.logits(obs)[legal], ref[legal], rtol=1e-4, atol=1e-4)
        obs, *_ = env.step(int(np.flatnonzero(env.unwrapped.action_masks())[0]))


def test_shipped_agent_runs_in_the_harness_without_torch(tmp_path):
    """`agent:hadoop-v0` needs no torch: a fresh interpreter where importing torch fails."""
    import subprocess
    import sys
    code = ("import sys; sys.modules['torch'] = None\n"
            "from mrsched_gym.evaluate import evaluate\n"
            "r = evaluate(['agent:hadoop-v0'], ['mrsched/Hadoop-v0'], [0], workers=1, "
            "progress=False)[0]\n"
            "print(r['deadline_penalty_h'], r['invalid_actions'])\n")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                         text=True).stdout.split()
    with_torch = evaluate([f"agent:{pretrained_agents()['hadoop-v0']['path']}"],
                          ["mrsched/Hadoop-v0"], [0], workers=1, progress=False)[0]
    assert float(out[0]) == with_torch["deadline_penalty_h"] and float(out[1]) == 0


def test_without_torch_an_sb3_checkpoint_and_training_say_how_to_install_it(tmp_path):
    """A fresh interpreter where importing torch fails: loading an SB3 checkpoint and
    ``mrsched-gym train`` end in one ``error:`` line naming the install command from the clone
    (the package is on no index), not a traceback."""
    import subprocess
    import sys
    zip_path = pretrained_agents()["hadoop-v0"]["path"]
    code = ("import sys; sys.modules['torch'] = None\n"
            "from mrsched_gym.cli import main\n"
            f"codes = [main(['demo', '--env', 'mrsched/Dedicated-v0', '--policies', "
            f"'agent:{zip_path}']), main(['train', 'hadoop_set', '--steps', '8', '--out', "
            f"{str(tmp_path)!r}])]\n"
            "print(codes)\n")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert run.stdout.strip().splitlines()[-1] == "[2, 2]", run.stdout + run.stderr
    errors = [ln for ln in run.stderr.splitlines() if ln.startswith("error:")]
    assert len(errors) == 2 and "Traceback" not in run.stderr, run.stderr
    assert "needs the rl extra: pip install -c constraints.txt -e '.[rl]'" in errors[0]
    assert "training needs the rl extra: pip install -c constraints.txt -e '.[rl]'" in errors[1]


def test_compare_includes_the_shipped_agent_by_default(tmp_path, capsys):
    from mrsched_gym.cli import main
    assert main(["compare", "--seeds", "1", "--workers", "1", "--quiet", "--no-plots",
                 "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "agent:hadoop-v0" in out and "| edf" in out
    assert "agent:hadoop-v0 - edf (paired over the same 1 seeds)" in out
    recs = json.loads((tmp_path / "hadoop" / "records.json").read_text())
    assert {"agent:hadoop-v0", "edf", "fifo"} <= {r["policy"] for r in recs}


@pytest.fixture(scope="module")
def held_out():
    """The shipped agent and EDF (the best baseline) on 20 held-out seeds (0-19; the training
    envs never replay them)."""
    recs = evaluate(["agent:hadoop-v0", "edf"], ["mrsched/Hadoop-v0"], range(20),
                    progress=False)
    return {p: np.array([r["deadline_penalty_h"] for r in recs if r["policy"] == p])
            for p in ("agent:hadoop-v0", "edf")}


@pytest.mark.slow
@HELD_OUT_GROUP
def test_shipped_agent_beats_edf_seed_for_seed(held_out):
    """Common random numbers: the per-seed difference agent - EDF has a 95% CI below zero, and
    the agent's mean is lower (docs/notes/agents.md: 1.32 vs 2.07 job-hours, 17 of 20 seeds)."""
    a, e = held_out["agent:hadoop-v0"], held_out["edf"]
    dm, dc = mean_ci95(list(a - e))
    assert dm + dc < 0, f"paired difference {dm:.3f} ± {dc:.3f}"
    assert a.mean() < e.mean() and (a < e).sum() >= 14


@pytest.mark.slow
@pytest.mark.xfail(strict=True, reason=(
    "not yet: the target is non-overlapping 95% CIs; on seeds 0-19 the agent has 1.32 ± 0.76 "
    "and EDF 2.07 ± 1.39 job-hours. EDF's interval spans 0.68-3.46 because a few overloaded "
    "seeds dominate (seed 4: 13.3), so separation needs the agent's upper bound below 0.68; "
    "see docs/notes/agents.md"))
@HELD_OUT_GROUP
def test_shipped_agent_ci_lies_below_edf_ci(held_out):
    """The headline criterion: the agent's 95% CI entirely below EDF's."""
    (ma, ca), (me, ce) = mean_ci95(list(held_out["agent:hadoop-v0"])), \
        mean_ci95(list(held_out["edf"]))
    assert ma + ca < me - ce, f"agent {ma:.3f} ± {ca:.3f} vs EDF {me:.3f} ± {ce:.3f}"


def test_train_cli_runs_a_yaml_file(tmp_path, capsys):
    from mrsched_gym.cli import main
    cfg = tmp_path / "mine.yaml"
    cfg.write_text("name: mine\nenv: hadoop\nenv_kwargs: {workload.duration_s: 900}\n"
                   "total_timesteps: 512\nn_envs: 2\ntensorboard: false\n"
                   "ppo: {n_steps: 256, batch_size: 128, n_epochs: 1}\n"
                   "eval: {every_steps: 0, n_seeds: 1, baselines: [edf]}\n")
    assert main(["train", str(cfg), "--out", str(tmp_path / "runs"), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "best validation mean" in out and (tmp_path / "runs/mine/best_model.zip").is_file()
    assert main(["train", "--list"]) == 0
    assert "hadoop_set" in capsys.readouterr().out
    cfg.write_text("name: mine\nppo: {learning_rat: 1}\n")
    assert main(["train", str(cfg), "--out", str(tmp_path / "runs")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "mine.yaml: line 2: ppo.learning_rat" in err
    assert "Traceback" not in err


def test_an_agent_trained_on_a_flattened_observation_ranks(tmp_path):
    """A checkpoint trained through FlattenObservation is no longer refused: the harness turns
    the Dict observation into the flat one it was trained on (agents/flat_agent.py); the
    details are tested in tests/test_external_clients.py."""
    from stable_baselines3 import PPO

    from mrsched_gym.evaluate import make_policy
    env = gym.wrappers.FlattenObservation(gym.make("mrsched/Hadoop-v0"))
    PPO("MlpPolicy", env, n_steps=32, batch_size=32, n_epochs=1, seed=0).save(tmp_path / "flat")
    agent = make_policy(f"agent:{tmp_path / 'flat.zip'}")
    base = gym.make("mrsched/Hadoop-v0")
    assert agent.layout(base.observation_space, "Hadoop-v0") == "FlattenObservation"
    obs, info = base.reset(seed=0)
    assert 0 <= agent.act(obs, info["action_mask"]) <= base.unwrapped.K
    assert agent.observation == "FlattenObservation"


