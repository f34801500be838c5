"""Training under a shipped agent's decision rules (``affinity`` / ``slow_start`` in a training
config, :mod:`mrsched_gym.agents.rules`): PPO's mask is the one the deployed agent meets, the
config refuses what cannot work, and a checkpoint acts under its rules wherever it is named."""

from __future__ import annotations

import numpy as np
import pytest

from mrsched_gym.agents.affinity import AffinityDelegate
from mrsched_gym.agents.policy import WorkConserving
from mrsched_gym.agents.rules import TrainUnderRules, with_rules
from mrsched_gym.agents.slow_start import SlowStartDelegate
from mrsched_gym.config import ConfigError
from mrsched_gym.evaluate import make_env


class MaskRecorder:
    """An agent that returns nothing but remembers the mask it was given."""

    name = "recorder"
    masked = True

    def reset(self, sim, seed=None):
        self.seen = None

    def act(self, obs, mask):
        self.seen = mask
        return 0


@pytest.mark.parametrize("env_id, rules", [
    ("mrsched/Heterogeneous-v0", {"affinity": 0.55}),
    ("mrsched/Hadoop-v0", {"slow_start": 1.0}),
    ("mrsched/Heterogeneous-v0", {"affinity": 0.55, "slow_start": 1.0}),
    ("mrsched/Dynamic-v0", {"affinity": 0.55, "slow_start": 0.8}),
])
def test_the_training_mask_is_the_deployed_agents_mask_at_every_decision(env_id, rules):
    """Random legal play for 600 decisions: at each, the trainer's mask equals the mask the
    agent wrapped in the same rules receives, and the rules narrowed it at some decisions."""
    kw = {"workload.duration_s": 1800}
    env = TrainUnderRules(WorkConserving(make_env(env_id, kw)), **rules)
    obs, _ = env.reset(seed=3)
    recorder = MaskRecorder()
    deployed = with_rules(recorder, **rules)
    deployed.reset(env.unwrapped.sim)
    rng = np.random.default_rng(0)
    narrowed = 0
    for _ in range(600):
        train_mask = env.action_masks()
        base = env.env.action_masks()
        deployed.act(obs, base)
        np.testing.assert_array_equal(train_mask, recorder.seen)
        narrowed += int(not np.array_equal(train_mask, base))
        obs, _, term, trunc, _ = env.step(int(rng.choice(np.flatnonzero(train_mask))))
        if term or trunc:
            obs, _ = env.reset(seed=int(rng.integers(1000)))
            deployed.reset(env.unwrapped.sim)
    assert narrowed > 0


def test_with_rules_wraps_in_the_deployed_order():
    agent = with_rules(MaskRecorder(), affinity=0.5, slow_start=1.0)
    assert isinstance(agent, SlowStartDelegate) and isinstance(agent.agent, AffinityDelegate)
    assert isinstance(with_rules(MaskRecorder()), MaskRecorder)


pytest.importorskip("torch")
pytest.importorskip("sb3_contrib")
from mrsched_gym.agents.training.train import load_config, train  # noqa: E402

SHORT = {"workload.duration_s": 900}


def tiny(**kw):
    base = dict(name="rules", total_timesteps=512, n_envs=2, env_kwargs=SHORT,
                tensorboard=False, affinity=0.55, slow_start=1.0,
                **{"ppo.n_steps": 256, "ppo.batch_size": 128, "ppo.n_epochs": 1,
                   "eval.n_seeds": 1, "eval.every_steps": 0, "eval.baselines": ["edf"]})
    base.update(kw)
    return load_config("hadoop_set", **base)


@pytest.mark.parametrize("change, field", [
    ({"affinity": 0.0}, "affinity"),
    ({"slow_start": 1.5}, "slow_start"),
    ({"slow_start": "all"}, "slow_start"),
    ({"algo": "ppo", "slow_start": None}, "affinity"),
])
def test_a_bad_rule_setting_names_its_field(change, field):
    with pytest.raises(ConfigError, match=rf"\b{field}\b"):
        tiny(**change)


def test_imitation_under_the_rules_is_refused_with_the_way_round():
    with pytest.raises(ConfigError, match="init_from"):
        tiny(imitate={"teachers": {"default": "srpt"}, "rounds": 1, "steps_per_round": 64})


def test_a_checkpoint_trained_under_the_rules_acts_under_them(tmp_path):
    from mrsched_gym.evaluate import make_policy, run_episode
    res = train(tiny(), tmp_path, progress=False)
    path = f"{res['out']}/best_model.zip"
    pol = make_policy(f"agent:{path}")
    assert isinstance(pol, SlowStartDelegate) and pol.fraction == 1.0
    assert isinstance(pol.agent, AffinityDelegate) and pol.agent.min_ratio == 0.55
    # the same checkpoint without its rules plays another episode on a world where they act
    from mrsched_gym.agents.policy import load_agent
    bare = run_episode("mrsched/Hadoop-v0", load_agent(path), 1, SHORT)["metrics"]
    ruled = run_episode("mrsched/Hadoop-v0", pol, 1, SHORT)["metrics"]
    assert bare != ruled


@pytest.mark.parametrize("numerics", ["exact", "fast"])
def test_ppo_never_plays_an_action_the_rules_removed(monkeypatch, numerics):
    """When the rules leave only skip at a decision whose observation still shows valid
    candidates, the work-conserving head must not tie skip with the masked candidates (PPO would
    then draw among them at random): every action PPO plays is in the narrowed mask, and such
    decisions occur."""
    from mrsched_gym.agents.training.train_model import build_model, make_vec_env
    seen = {"outside": 0, "steps": 0, "only_skip": 0}
    masks_of = TrainUnderRules.action_masks

    def action_masks(self):
        mask = masks_of(self)
        self.last_mask = mask
        seen["only_skip"] += int(not mask[:-1].any() and bool(self.env.action_masks()[:-1].any()))
        return mask

    def step(self, action):
        seen["steps"] += 1
        seen["outside"] += int(not self.last_mask[action])
        return self.env.step(action)

    monkeypatch.setattr(TrainUnderRules, "action_masks", action_masks)
    monkeypatch.setattr(TrainUnderRules, "step", step)
    cfg = tiny(numerics=numerics, total_timesteps=1024)
    venv = make_vec_env(cfg)
    build_model(cfg, venv).learn(1024)
    venv.close()
    assert seen["steps"] >= 1024 and seen["only_skip"] > 0
    assert seen["outside"] == 0


def test_the_numpy_export_and_the_spec_carry_the_rules(tmp_path):
    from mrsched_gym.agents.rules import checkpoint_rules
    from mrsched_gym.evaluate import make_policy
    from mrsched_gym.evaluate.policy_specs import parse_policy
    res = train(tiny(numerics="fast", slow_start=None), tmp_path, progress=False)
    for name in ("best_model.zip", "best_model.npz"):
        path = f"{res['out']}/{name}"
        assert checkpoint_rules(path) == {"affinity": 0.55}
        assert dict(parse_policy(f"agent:{path}").params) == {"affinity": 0.55}
        pol = make_policy(f"agent:{path}")
        assert isinstance(pol, AffinityDelegate) and pol.min_ratio == 0.55


def test_resume_under_other_rules_is_refused(tmp_path):
    res = train(tiny(), tmp_path, progress=False)
    with pytest.raises(ConfigError, match="slow_start"):
        train(tiny(slow_start=0.5, total_timesteps=1024), tmp_path, progress=False,
              resume=f"{res['out']}/last_model.zip")
