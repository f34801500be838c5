"""The residual set policy (``SetPolicy(prior="edf")``): the rule's preference read from the
observation orders the candidates as the EDF baseline does in every registered world; the
untrained residual policy plays EDF's episodes through every forward pass (torch, the fast
numerics, the numpy rollouts, the shipped numpy actor); the prior survives saving and loading;
bad priors are refused by name."""

import json
import zipfile

import gymnasium as gym
import numpy as np
import pytest

import mrsched_gym  # noqa: F401
from mrsched_gym.agents.rule_prior import PRIOR_RULES, check_prior, preference
from mrsched_gym.baselines.simple import EDFScheduler
from mrsched_gym.env.encoding import decision_kind_slot
from mrsched_gym.sim.decision import SCHEDULE

SCHEDULE_SLOT = decision_kind_slot(SCHEDULE)
ENV = "mrsched/Hadoop-v0"
IDS = [i for i in gym.registry if i.startswith("mrsched/") and "-flat" not in i]


def rows(*cands, width=22):
    """Candidate rows from dicts of column -> value (valid set)."""
    out = np.zeros((1, len(cands) + 1, width), np.float32)           # one empty row after
    for i, c in enumerate(cands):
        out[0, i, 0] = 1.0
        for col, v in c.items():
            out[0, i, col] = v
    return out


def test_preference_orders_as_edf_key():
    # columns: 1 is reduce, 7 time to deadline, 8 has a deadline, 12 waiting time
    c = rows({7: 5.0, 8: 1, 12: 1.0},           # deadline in 5 h
             {7: 2.0, 8: 1, 12: 0.5},           # the earliest deadline
             {7: 24.0, 8: 0, 12: 9.0},          # no deadline, oldest
             {7: 5.0, 8: 1, 12: 3.0},           # same deadline as row 0, older
             {7: 5.0, 8: 1, 12: 3.0, 1: 1.0},   # the same job's reduces
             {7: 24.0, 8: 0, 12: 2.0})          # no deadline, younger
    pref = preference("edf", c, np.array([1.0]))[0]
    assert pref.tolist() == [-3, 0, -4, -1, -2, -5, 0]     # the empty row last: 0
    assert int(np.argmax(np.where(c[0, :, 0] > 0, pref, -np.inf))) == 1
    # not a schedule decision: no preference
    assert not preference("edf", c, np.array([0.0])).any()


@pytest.mark.parametrize("env_id", IDS)
def test_preference_picks_what_the_edf_baseline_picks(env_id):
    """At every schedule decision of EDF's own episode (the first 400, seed 11), the preferred
    legal candidate is the baseline's action."""
    env = gym.make(env_id)
    obs, _ = env.reset(seed=11)
    rule, seen = EDFScheduler(), 0
    for _ in range(400):
        a = rule.decide(env.unwrapped.sim)
        valid = obs["candidates"][:, 0] > 0.5
        if obs["decision"][SCHEDULE_SLOT] > 0.5 and valid.any():
            pref = preference("edf", obs["candidates"][None], obs["decision"][None, SCHEDULE_SLOT])
            legal = env.unwrapped.action_masks()[:len(valid)] & valid
            assert int(np.argmax(np.where(legal, pref[0], -np.inf))) == a
            seen += 1
        obs, _, term, trunc, _ = env.step(a)
        if term or trunc:
            break
    assert seen > 50


def test_bad_priors_are_refused():
    assert check_prior(None) is None and check_prior("edf") == "edf"
    assert "edf" in PRIOR_RULES
    with pytest.raises(ValueError, match="prior must be one of"):
        check_prior("sjf")


# ------------------------------------------------------------------ the residual policy

torch = pytest.importorskip("torch")
pytest.importorskip("sb3_contrib")


def residual_model(work_conserving=True, **kwargs):
    from mrsched_gym.agents import SetPolicy
    from mrsched_gym.agents.networks import NumpyRolloutPPO
    torch.set_num_threads(1)
    return NumpyRolloutPPO(SetPolicy, gym.make(ENV), seed=0, device="cpu",
                           policy_kwargs=dict(prior="edf", work_conserving=work_conserving,
                                              **kwargs))


@pytest.mark.parametrize("work_conserving", [True, False])
def test_untrained_residual_policy_plays_edf(tmp_path, work_conserving):
    """Its torch checkpoint and its numpy export both play EDF's episodes; a model built
    outside the trainer (no ``mrsched_work_conserving``) acts under the env's mask in both
    forms, whatever its head's ``work_conserving``."""
    from mrsched_gym.agents.training.numpy_export import export_numpy
    from mrsched_gym.evaluate import evaluate
    model = residual_model(work_conserving)
    assert not model.policy.action_net.score.weight.any()      # the correction starts at 0
    model.save(tmp_path / "torch.zip")
    export_numpy(model, tmp_path / "numpy.npz")
    recs = evaluate([f"agent:{tmp_path / 'torch.zip'}", f"agent:{tmp_path / 'numpy.npz'}",
                     "edf"], [ENV], seeds=[3, 12], workers=1, progress=False)
    by = {}
    for r in recs:
        by.setdefault(r["policy"], []).append((r["seed"], r["makespan_s"],
                                               r["deadline_penalty_h"]))
    assert by["agent:torch"] == by["edf"]
    assert by["agent:numpy"] == by["edf"]


def test_under_the_rules_the_untrained_residual_policy_plays_the_best_rule(tmp_path):
    """With the generalist's rules in its checkpoint (what the trainer's ``affinity`` and
    ``slow_start`` save), the untrained residual model plays ``edf-affinity:slow_start=1``,
    the best reference rule on Hadoop-v0, and with ``slow_start`` alone ``edf-slowstart``."""
    from mrsched_gym.evaluate import evaluate
    for name, rules in (("aff", {"affinity": 0.55, "slow_start": 1.0}),
                        ("ss", {"slow_start": 1.0})):
        model = residual_model()
        model.mrsched_rules = rules
        model.save(tmp_path / f"{name}.zip")
    recs = evaluate([f"agent:{tmp_path / 'aff.zip'}", "edf-affinity:slow_start=1",
                     f"agent:{tmp_path / 'ss.zip'}", "edf-slowstart"], [ENV], seeds=[6],
                    workers=1, progress=False)
    got = {r["policy"]: (r["makespan_s"], r["deadline_penalty_h"]) for r in recs}
    assert got["agent:aff"] == got["edf-affinity:slow_start=1"]
    assert got["agent:ss"] == got["edf-slowstart"]
    assert got["agent:aff"] != got["agent:ss"]             # the rules did change the play


def random_observations(n=24, seed=5):
    env = gym.make(ENV)
    obs, _ = env.reset(seed=seed)
    out, rng = [], np.random.default_rng(seed)
    while len(out) < n:
        if (obs["candidates"][:, 0] > 0.5).sum() >= 2 or rng.random() < 0.1:
            out.append(obs)                       # mostly decisions with a choice
        legal = np.flatnonzero(env.unwrapped.action_masks())
        obs, _, term, trunc, _ = env.step(int(rng.choice(legal)))
        if term or trunc:
            obs, _ = env.reset(seed=seed + len(out))
    return out


def test_every_forward_pass_adds_the_same_preference(tmp_path):
    """With trained-looking weights (perturbed), the logits of the torch features, the fast
    numerics, the numpy rollouts and the shipped numpy actor agree; the value too."""
    from mrsched_gym.agents.numpy_policy import NumpySetPolicy
    from mrsched_gym.agents.numpy_rollout import NumpyActorCritic
    from mrsched_gym.agents.training.numpy_export import export_numpy
    model = residual_model(prior_weight=1.5)
    pol = model.policy
    with torch.no_grad():
        for p in pol.parameters():
            p.add_(0.05 * torch.randn_like(p))
    obs_list = random_observations()
    batch = {k: torch.as_tensor(np.stack([o[k] for o in obs_list])) for k in obs_list[0]}
    masks = np.stack([np.ones(batch["candidates"].shape[1] + 1, bool)] * len(obs_list))
    pref = preference("edf", batch["candidates"].numpy(), batch["decision"][:, SCHEDULE_SLOT])
    assert (pref < 0).any()                                 # the batch has ranked choices
    with torch.no_grad():
        slow = pol.action_net(pol.extract_features(batch))
        learned = pol.action_net.score(
            pol.features_extractor.encode_sets(batch).candidates).squeeze(2)
        K = pref.shape[1]
        valid = batch["candidates"][..., 0] > 0.5
        assert torch.allclose(slow[:, :K][valid], (learned + 1.5 * torch.from_numpy(pref))[valid],
                              atol=1e-5)
        slow_logp = pol.action_log_probs(batch, masks)
        pol.features_extractor.fast_numerics = True
        fast_logp = pol.action_log_probs(batch, masks)
        values_fast = pol.evaluate_actions(batch, torch.zeros(len(obs_list)), masks)[0]
        pol.features_extractor.fast_numerics = False
        values_slow = pol.evaluate_actions(batch, torch.zeros(len(obs_list)), masks)[0]
    assert torch.allclose(fast_logp, slow_logp, atol=1e-4)
    assert torch.allclose(values_fast, values_slow, atol=1e-4)
    np_logp, np_values = NumpyActorCritic(pol)({k: v.numpy() for k, v in batch.items()}, masks)
    assert np.allclose(np_logp, slow_logp.numpy(), atol=1e-4)
    assert np.allclose(np_values, values_slow.numpy()[:, 0], atol=1e-4)
    shipped = NumpySetPolicy.load(export_numpy(model, tmp_path / "a.npz"))
    for i, o in enumerate(obs_list):
        assert np.allclose(shipped.logits(o)[:K][valid[i].numpy()],
                           slow[i, :K][valid[i]].numpy(), atol=1e-4)


def test_the_prior_is_saved_with_the_model(tmp_path):
    from sb3_contrib import MaskablePPO

    from mrsched_gym.agents.numpy_policy import META_KEY
    from mrsched_gym.agents.training.numpy_export import export_numpy
    model = residual_model(prior_weight=3.0)
    model.save(tmp_path / "m.zip")
    back = MaskablePPO.load(tmp_path / "m.zip", device="cpu")
    assert back.policy.features_extractor.prior == "edf"
    assert back.policy.action_net.prior_weight == 3.0
    path = export_numpy(model, tmp_path / "m.npz")
    with np.load(path) as z:
        meta = json.loads(str(z[META_KEY]))
    assert (meta["prior"], meta["prior_weight"]) == ("edf", 3.0)
    assert zipfile.is_zipfile(tmp_path / "m.zip")


@pytest.mark.parametrize("change, message", [
    ({"prior": "sjf"}, "field 'prior': prior must be one of"),
    ({"prior_weight": -1.0}, "field 'prior_weight': prior_weight must be a number"),
    ({"prior_weight": "2"}, "field 'prior_weight' must be a float"),
])
def test_a_bad_prior_in_an_npz_is_named(tmp_path, change, message):
    from mrsched_gym.agents.numpy_policy import META_KEY, NumpySetPolicy
    from mrsched_gym.agents.training.numpy_export import export_numpy
    from mrsched_gym.errors import InputError
    path = export_numpy(residual_model(), tmp_path / "m.npz")
    with np.load(path) as z:
        arrays = {k: z[k] for k in z.files}
    meta = dict(json.loads(str(arrays.pop(META_KEY))), **change)
    bad = tmp_path / "bad.npz"
    np.savez(bad, **arrays, **{META_KEY: np.array(json.dumps(meta))})
    with pytest.raises(InputError, match=message):
        NumpySetPolicy.load(bad)


@pytest.mark.parametrize("kwargs, message", [
    ({"prior": "fifo"}, "prior must be one of"),
    ({"prior_weight": 0.0}, "prior_weight must be a number"),
    ({"prior_weight": True}, "prior_weight must be a number"),
])
def test_bad_policy_arguments_are_named(kwargs, message):
    from mrsched_gym.agents import SetPolicy
    from mrsched_gym.agents.networks import NumpyRolloutPPO
    with pytest.raises(ValueError, match=message):
        NumpyRolloutPPO(SetPolicy, gym.make(ENV), device="cpu",
                        policy_kwargs={"prior": "edf", **kwargs})
