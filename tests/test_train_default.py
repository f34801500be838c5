"""Training out of the box (issue 31 item 2): the default action mask is work-conserving on every
registered id, ``allow_idle=True`` restores skip at every decision, the mask changes nothing but
what an agent is offered, checkpoints act under the mask they were trained on, and a newcomer's
default MaskablePPO does not collapse into idling."""

import warnings

import gymnasium as gym
import numpy as np
import pytest

from mrsched_gym import ENV_IDS
from mrsched_gym.sim.decision import SCHEDULE
from mrsched_gym.testing import assert_same_record

SMALL = {"mrsched/ThesisScale-v0": {"workload__duration_s": 3600.0, "time_limit_s": 7200.0}}
IDS = sorted(ENV_IDS)


def make(env_id, **kw):
    return gym.make(env_id, **{**SMALL.get(env_id, {}), **kw})


def walk(env, seed, steps, rng_seed=0, pick=None):
    """Random steps over the mask; yields ``(mask, decision, info_mask)`` before each step."""
    rng = np.random.default_rng(rng_seed)
    obs, info = env.reset(seed=seed)
    base = env.unwrapped
    for _ in range(steps):
        mask = base.action_masks()
        yield mask, base.sim.decision, info["action_mask"]
        a = pick(mask) if pick else int(rng.choice(np.flatnonzero(mask)))
        obs, _, term, trunc, info = env.step(a)
        if term or trunc:
            return


@pytest.mark.parametrize("env_id", IDS)
def test_default_mask_never_offers_skip_with_a_candidate(env_id):
    """Every registered id: at a schedule decision with a candidate skip is not offered; at
    admission / preemption / speculation decisions and without candidates it is; the mask is
    never empty and ``info["action_mask"]`` is the same array."""
    env = make(env_id)
    K = env.unwrapped.K
    seen = set()
    for mask, d, info_mask in walk(env, seed=0, steps=300):
        assert np.array_equal(mask, info_mask)
        assert mask.any()
        n = len(d.candidates)
        assert mask[:n].all() and not mask[n:K].any()
        if d.kind == SCHEDULE and n:
            assert not mask[K], "skip offered at a schedule decision with a candidate"
        else:
            assert mask[K]
        seen.add((int(d.kind), n > 0))
    assert (int(SCHEDULE), True) in seen


@pytest.mark.parametrize("env_id", ["mrsched/Hadoop-v0", "mrsched/Admission-v1",
                                    "mrsched/Preemption-v0", "mrsched/Stragglers-v0"])
def test_allow_idle_offers_skip_at_every_decision(env_id):
    """``allow_idle=True``: skip at every decision, the candidates as in the default mask; the
    same actions give the same records under either mask (the mask changes no dynamics)."""
    idle, plain = make(env_id, allow_idle=True), make(env_id)
    for mask, _, info_mask in walk(idle, seed=1, steps=200):
        assert mask[-1] and info_mask[-1]
    rng = np.random.default_rng(3)
    acts = []
    recs = {}
    for name, env in (("idle", idle), ("plain", plain)):
        obs, info = env.reset(seed=2)
        out = [(obs, info["n_candidates"])]
        for i in range(200):
            mask = env.unwrapped.action_masks()
            if name == "idle":          # a skip now and then, legal in the simulator always
                a = mask.size - 1 if rng.random() < 0.2 else int(rng.choice(np.flatnonzero(
                    mask[:-1]))) if mask[:-1].any() else mask.size - 1
                acts.append(a)
            else:
                a = acts[i]
            obs, r, term, trunc, info = env.step(a)
            assert not info["invalid_action"]
            out.append((obs, r, term, trunc, info["n_candidates"]))
            if term or trunc:
                break
        recs[name] = out
    assert_same_record(recs["idle"], recs["plain"])


def test_allow_idle_must_be_a_bool():
    from mrsched_gym.errors import InputTypeError
    with pytest.raises(InputTypeError, match="allow_idle"):
        gym.make("mrsched/Hadoop-v0", allow_idle=1)


@pytest.mark.parametrize("policy", ["edf", "fair", "random"])
def test_baselines_records_do_not_depend_on_the_mask(policy):
    """The baselines decide from the simulator: identical records under either mask."""
    from mrsched_gym.evaluate import make_policy, run_episode
    a = run_episode("mrsched/Hadoop-v0", make_policy(policy), 0)
    b = run_episode("mrsched/Hadoop-v0", make_policy(policy), 0, env_kwargs={"allow_idle": True})
    for r in (a, b):
        r.pop("wall_s")
    assert_same_record(a, b)


def test_wrappers_and_idle_mask():
    from mrsched_gym.agents.policy import AllowIdle, WorkConserving, idle_mask
    env = gym.make("mrsched/Hadoop-v0")
    wc, ai = WorkConserving(gym.make("mrsched/Hadoop-v0", allow_idle=True)), AllowIdle(
        gym.make("mrsched/Hadoop-v0"))
    for e in (env, wc, ai):
        e.reset(seed=0)
    for _ in range(50):
        m = env.unwrapped.action_masks()
        np.testing.assert_array_equal(wc.action_masks(), m)
        np.testing.assert_array_equal(ai.action_masks(), idle_mask(m))
        assert ai.action_masks()[-1]
        a = int(np.flatnonzero(m)[0])
        for e in (env, wc, ai):
            e.step(a)
    m = np.array([True, False, False])
    assert idle_mask(m).tolist() == [True, False, True] and not m[-1]    # a copy
    m = np.array([True, False, True])
    assert idle_mask(m) is m


class _Model:
    """The parts of an SB3 model AgentPolicy reads, with logits that prefer skip."""

    def __init__(self, wc):
        import torch as th
        space = gym.make("mrsched/Hadoop-v0").observation_space
        K = space["candidates"].shape[0]

        class Pol(th.nn.Module):
            observation_space = space

            def set_training_mode(self, mode):
                pass

        self.policy = Pol()
        self.K = K
        if wc is not None:
            self.mrsched_work_conserving = wc


@pytest.mark.parametrize("wc, skips", [(None, False), (True, False), (False, True)])
def test_agent_acts_under_the_mask_it_was_trained_on(monkeypatch, wc, skips):
    """A checkpoint of ``mrsched-gym train`` with ``work_conserving: false`` was trained with skip
    offered: it keeps it under the env's work-conserving mask; one trained work-conserving, or
    an outside model (no attribute), acts within the mask it is given."""
    pytest.importorskip("torch")
    import mrsched_gym.agents.policy as pol_mod
    from mrsched_gym.agents.policy import AgentPolicy
    model = _Model(wc)
    type(model).__name__ = "MaskablePPO"
    agent = AgentPolicy(model, "agent:test")
    K = model.K
    logits = np.zeros(K + 1, np.float32)
    logits[K] = 5.0                                       # skip is the model's favourite
    monkeypatch.setattr(pol_mod, "policy_logits", lambda policy, obs: logits)
    env = gym.make("mrsched/Hadoop-v0")
    obs, info = env.reset(seed=0)
    assert info["n_candidates"] and not info["action_mask"][-1]
    assert (agent.act(obs, info["action_mask"]) == K) is skips


def test_masking_delegate_offers_skip_when_it_removes_every_candidate(recorder):
    from mrsched_gym.agents.masking import MaskingDelegate

    class All(MaskingDelegate):
        def masked_candidates(self, sim):
            return list(range(len(sim.decision.candidates)))

    env = gym.make("mrsched/Hadoop-v0")
    obs, info = env.reset(seed=0)
    agent = All(recorder)
    agent.reset(env.unwrapped.sim)
    assert agent.act(obs, info["action_mask"]) == env.unwrapped.K
    assert recorder.masks[-1][-1] and not recorder.masks[-1][:-1].any()


def test_torch_threads_told_once_and_only_when_sb3_learns(monkeypatch):
    """The threads notice: never outside a learning call (evaluation, check_env, a user's loop),
    once per process inside SB3's learn, short and without colour codes."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("stable_baselines3")
    from stable_baselines3 import PPO

    import mrsched_gym.env.env_setup as env_mod
    monkeypatch.setattr(env_mod, "_told_threads", False)
    monkeypatch.setattr(torch, "get_num_threads", lambda: 4)
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        env = gym.make("mrsched/Hadoop-v0")
        env.reset(seed=0)
        env.step(0)
    assert not [w for w in got if "set_num_threads" in str(w.message)]
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        for _ in range(2):
            PPO("MlpPolicy", gym.make("mrsched/Hadoop-flat-v0"), n_steps=64, batch_size=64,
                n_epochs=1, device="cpu").learn(64)
    said = [w for w in got if "set_num_threads(1)" in str(w.message)]
    assert len(said) == 1 and "4 threads" in str(said[0].message)
    assert "\x1b" not in str(said[0].message) and len(str(said[0].message)) < 140
    monkeypatch.setattr(env_mod, "_told_threads", False)
    monkeypatch.setattr(torch, "get_num_threads", lambda: 1)
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        PPO("MlpPolicy", gym.make("mrsched/Hadoop-flat-v0"), n_steps=64, batch_size=64,
            n_epochs=1, device="cpu").learn(64)
    assert not [w for w in got if "set_num_threads" in str(w.message)]


@pytest.mark.slow
def test_default_maskable_ppo_does_not_idle():
    """The newcomer's script at reduced scale: MaskablePPO("MultiInputPolicy", gym.make(id))
    with default settings, a few thousand steps. The deterministic policy never skips at a
    decision with a candidate (the collapse of issue 31: 89% skips, 44-105 job-hours), and on
    seeds 0-1 it stays within twice random's deadline penalty (random: 12.8 on seeds 0-4)."""
    pytest.importorskip("sb3_contrib")
    import torch
    from sb3_contrib import MaskablePPO

    from mrsched_gym.evaluate import make_policy, run_episode
    torch.set_num_threads(1)
    model = MaskablePPO("MultiInputPolicy", gym.make("mrsched/Hadoop-v0"), seed=0, n_steps=512,
                        batch_size=64)
    model.learn(3072)
    scores, rand, skips, busy_skips, n = [], [], 0, 0, 0
    for seed in (0, 1):
        env = gym.make("mrsched/Hadoop-v0")
        obs, _ = env.reset(seed=seed)
        base = env.unwrapped
        while True:
            mask = base.action_masks()
            a = int(model.predict(obs, action_masks=mask, deterministic=True)[0])
            n += 1
            skips += a == base.K
            busy_skips += a == base.K and len(base.sim.decision.candidates) > 0
            obs, _, term, trunc, info = env.step(a)
            if term or trunc:
                break
        scores.append(info["metrics"]["deadline_penalty_h"])
        rand.append(run_episode("mrsched/Hadoop-v0", make_policy("random"), seed)["metrics"][
            "deadline_penalty_h"])
    assert busy_skips == 0
    assert skips / n < 0.05
    assert np.mean(scores) <= 2 * np.mean(rand), (scores, rand)
