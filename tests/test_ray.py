"""The Ray path: RLlib on the env (the set module with the action mask, and RLlib's default
MLP on the flattened observation) and evaluation sweeps as Ray tasks, run locally at tiny scale.

CI installs the ``ray`` extra (see ``.ci/run``), so these run there; without Ray they skip. The
set module's own properties (masking, permutation equivariance, any K and N) are checked on the
module directly, without a Ray cluster; one tiny PPO iteration then runs it end to end.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

ray = pytest.importorskip("ray")
torch = pytest.importorskip("torch")

from mrsched_gym.agents.rllib_module import SetRLModule  # noqa: E402
from mrsched_gym.ray_backend import (  # noqa: E402
    RLlibMaskedObservation,
    RLlibObservation,
    evaluate_ray,
    init_ray,
    make_rllib_env,
    register_rllib_envs,
    rllib_ppo_config,
    train_rllib,
)

#: One pytest-xdist worker runs every test of this file: one local Ray cluster at a time.
pytestmark = pytest.mark.xdist_group("ray")


@pytest.fixture(scope="module")
def local_ray():
    init_ray(num_cpus=2, runtime_env={"env_vars": {"OMP_NUM_THREADS": "1"}})
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


def test_runtime_env_pins_the_workers_threads(local_ray):
    import os
    env_of_a_task = ray.remote(num_cpus=1)(lambda: os.environ.get("OMP_NUM_THREADS"))
    assert ray.get(env_of_a_task.remote()) == "1"


def test_bad_policy_fails_before_any_ray_task():
    with pytest.raises(ValueError, match="unknown baseline"):
        evaluate_ray(["nope"], ["mrsched/Hadoop-v0"], [0])


def test_rllib_ppo_with_the_default_mlp_trains_one_tiny_iteration(local_ray, tmp_path):
    cfg = rllib_ppo_config(env_overrides={"workload.duration_s": 900}, num_env_runners=0,
                           train_batch_size=256, minibatch_size=64, num_epochs=1, hidden=(32,),
                           module="mlp")
    assert cfg.env_config["observation"] == "flat"
    res = train_rllib(cfg, iterations=1)
    assert res[0]["training_iteration"] == 1
    assert res[0]["num_env_steps_sampled_lifetime"] >= 256
    # the harness runs set modules only: a sweep refuses this one before any episode runs
    algo = cfg.build_algo()
    try:
        checkpoint = algo.save_to_path(tmp_path / "ckpt")
    finally:
        algo.stop()
    from mrsched_gym.errors import InputError
    from mrsched_gym.evaluate import sweep_tasks
    with pytest.raises(InputError, match=r"policy 'rllib:ckpt': RLlib checkpoint \S+ckpt\S*: "
                                         r"holds a \w+, not the set module \(SetRLModule\)"):
        sweep_tasks(["edf", f"rllib:{checkpoint}"], ["mrsched/Hadoop-v0"], [0])


# ---------------------------------------------------------------------- the set module
SHORT = {"workload.duration_s": 900}


def _masked_space(K: int | None = None, N: int | None = None) -> gym.spaces.Dict:
    """The masked observation space of Hadoop-v0, with K candidates and N nodes if given."""
    space = make_rllib_env({"observation": "masked", **SHORT}).observation_space
    inner = space["observations"]
    K = K or inner["candidates"].shape[0]
    N = N or inner["nodes"].shape[0]
    boxes = dict(inner.spaces)
    for key, shape in (("candidates", (K, inner["candidates"].shape[1])),
                       ("nodes", (N, inner["nodes"].shape[1]))):
        boxes[key] = gym.spaces.Box(inner[key].low.flat[0], inner[key].high.flat[0], shape,
                                    np.float32)
    return gym.spaces.Dict({"action_mask": gym.spaces.Box(0.0, 1.0, (K + 1,), np.float32),
                            "observations": gym.spaces.Dict(boxes)})


def _module(space: gym.spaces.Dict, seed: int = 0, scale: float | None = None,
            **model_config) -> SetRLModule:
    """A set module for ``space``; ``scale`` redraws every weight ~ N(0, scale) so that logits
    differ clearly between actions (the default init makes the policy near-uniform)."""
    torch.manual_seed(seed)
    m = SetRLModule(observation_space=space,
                    action_space=gym.spaces.Discrete(space["action_mask"].shape[0]),
                    model_config={"work_conserving": False, **model_config})
    if scale is not None:
        with torch.no_grad():
            for p in m.parameters():
                p.normal_(0.0, scale)
    return m


def _batch(space: gym.spaces.Dict, B: int, seed: int, valid_rows: int | None = None) -> dict:
    """``B`` random observations of ``space`` (numpy, batched): the first ``valid_rows``
    candidate rows valid (all by default), the others zero; the mask says the same, skip legal."""
    inner = space["observations"]
    inner.seed(seed)
    obs = [inner.sample() for _ in range(B)]
    out = {k: np.stack([o[k] for o in obs]) for k in inner.spaces}
    K = out["candidates"].shape[1]
    n = K if valid_rows is None else valid_rows
    out["candidates"][:, n:] = 0.0
    out["candidates"][:, :n, 0] = 1.0
    out["decision"][:, :3] = np.eye(3, dtype=np.float32)[0]          # schedule decisions
    mask = np.zeros((B, K + 1), np.float32)
    mask[:, :n] = 1.0
    mask[:, K] = 1.0
    return {"action_mask": mask, "observations": out}


def _tensors(batch: dict) -> dict:
    return {"obs": {"action_mask": torch.as_tensor(batch["action_mask"]),
                    "observations": {k: torch.as_tensor(v)
                                     for k, v in batch["observations"].items()}}}


def test_masked_wrapper_keeps_the_dict_and_adds_the_env_mask():
    env = make_rllib_env({"observation": "masked", "workload.load": 0.5, **SHORT})
    assert isinstance(env, RLlibMaskedObservation)
    ref = gym.make("mrsched/Hadoop-v0", workload__load=0.5, workload__duration_s=900)
    obs, _ = env.reset(seed=3)
    ref_obs, info = ref.reset(seed=3)
    kinds = set()
    for _ in range(60):
        assert env.observation_space.contains(obs)
        for k in ref_obs:
            np.testing.assert_array_equal(obs["observations"][k], ref_obs[k])
        np.testing.assert_array_equal(obs["action_mask"], info["action_mask"].astype(np.float32))
        kinds.add(int(obs["action_mask"][:-1].sum()))
        a = int(np.flatnonzero(info["action_mask"])[0])
        obs, _, term, trunc, _ = env.step(a)
        ref_obs, _, _, _, info = ref.step(a)
        if term or trunc:
            break
    assert len(kinds) > 1                   # the mask changed along the episode
    with pytest.raises(ValueError, match="observation must be one of"):
        make_rllib_env({"observation": "nested"})


def test_set_module_never_picks_a_masked_action():
    space = _masked_space()
    K = space["action_mask"].shape[0] - 1
    batch = _batch(space, B=256, seed=1)
    # the default init (near-uniform policy: unmasked, every action would be drawn) and large
    # random weights (unmasked, illegal actions would often win the argmax)
    for module, uniform in ((_module(space), True), (_module(space, scale=0.5), False)):
        for allowed in ([1, 3], [K - 1], [K], [0, K]):        # skip masked in the first two
            mask = np.zeros_like(batch["action_mask"])
            mask[:, allowed] = 1.0
            t = _tensors({**batch, "action_mask": mask})
            for forward in (module.forward_exploration, module.forward_inference,
                            module.forward_train):
                logits = forward(t)["action_dist_inputs"]
                dist = module.get_exploration_action_dist_cls().from_logits(logits)
                samples = torch.stack([dist.sample() for _ in range(8)]).unique().tolist()
                assert set(samples) <= set(allowed), (allowed, samples)
                greedy = logits.argmax(dim=1).unique().tolist()
                assert set(greedy) <= set(allowed), (allowed, greedy)
                if uniform:                    # every allowed action is drawn, not just one
                    assert set(samples) == set(allowed)
    one = {"action_mask": mask[0], "observations": {k: v[0] for k, v in
                                                    batch["observations"].items()}}
    assert {module.act(one, explore=True) for _ in range(50)} <= {0, K}
    assert module.act(one) in (0, K)


def test_set_module_masks_skip_when_work_conserving():
    space = _masked_space()
    K = space["action_mask"].shape[0] - 1
    module = _module(space, scale=0.2, work_conserving=True)
    batch = _batch(space, B=64, seed=2, valid_rows=2)
    logits = module.forward_inference(_tensors(batch))["action_dist_inputs"]
    assert (logits[:, K] < -1e7).all() and (logits[:, :2] > -1e7).all()
    batch["observations"]["decision"][:, :3] = np.eye(3, dtype=np.float32)[1]    # admission
    logits = module.forward_inference(_tensors(batch))["action_dist_inputs"]
    assert (logits[:, K] > -1e7).all()


def test_set_module_candidate_logits_follow_the_candidates_order():
    space = _masked_space()
    K = space["action_mask"].shape[0] - 1
    module = _module(space, scale=0.2)
    batch = _batch(space, B=16, seed=4, valid_rows=K - 2)
    t = _tensors(batch)
    logits = module.forward_inference(t)["action_dist_inputs"]
    values = module.compute_values(t)
    assert logits[:, : K - 2].std(dim=1).min() > 1e-3           # the candidates differ
    perm = np.random.default_rng(0).permutation(K)
    node_perm = np.random.default_rng(1).permutation(batch["observations"]["nodes"].shape[1])
    obs = dict(batch["observations"], candidates=batch["observations"]["candidates"][:, perm],
               nodes=batch["observations"]["nodes"][:, node_perm])
    mask = np.concatenate([batch["action_mask"][:, perm], batch["action_mask"][:, K:]], axis=1)
    t2 = _tensors({"action_mask": mask, "observations": obs})
    logits2 = module.forward_inference(t2)["action_dist_inputs"]
    torch.testing.assert_close(logits2[:, :K], logits[:, perm], rtol=1e-5, atol=1e-4)
    torch.testing.assert_close(logits2[:, K], logits[:, K], rtol=1e-5, atol=1e-4)
    torch.testing.assert_close(module.compute_values(t2), values, rtol=1e-5, atol=1e-4)


def test_set_module_runs_on_any_number_of_candidates_and_nodes():
    big = _module(_masked_space(), scale=0.2)
    K = big.observation_space["action_mask"].shape[0] - 1
    small_space = _masked_space(K=3, N=5)
    small = _module(small_space, seed=1)
    small.load_state_dict(big.state_dict())            # same weights: nothing depends on K, N
    b = _batch(small_space, B=8, seed=5, valid_rows=2)
    out = small.forward_train(_tensors(b))
    assert out["action_dist_inputs"].shape == (8, 4)
    # K=3 candidates padded with empty rows to the big module's K give the same logits and value
    pad = dict(b["observations"], candidates=np.concatenate(
        [b["observations"]["candidates"], np.zeros((8, K - 3, 22), np.float32)], axis=1))
    mask = np.concatenate([b["action_mask"][:, :3], np.zeros((8, K - 3), np.float32),
                           b["action_mask"][:, 3:]], axis=1)
    big_out = big.forward_train(_tensors({"action_mask": mask, "observations": pad}))
    torch.testing.assert_close(big_out["action_dist_inputs"][:, :3],
                               out["action_dist_inputs"][:, :3])
    torch.testing.assert_close(big_out["action_dist_inputs"][:, K], out["action_dist_inputs"][:, 3])
    torch.testing.assert_close(big.compute_values({}, big_out["embeddings"]),
                               small.compute_values(_tensors(b)))
    with pytest.raises(ValueError, match="RLlibMaskedObservation"):
        SetRLModule(observation_space=small_space["observations"],
                    action_space=gym.spaces.Discrete(4), model_config={})


def test_rllib_ppo_trains_the_set_module_end_to_end(local_ray, tmp_path):
    from ray.rllib.core.rl_module.rl_module import RLModule
    cfg = rllib_ppo_config(env_overrides=SHORT, num_env_runners=1, train_batch_size=256,
                           minibatch_size=64, num_epochs=1, set_hidden=16, vf_hiddens=(16,))
    assert cfg.env_config["observation"] == "masked" and cfg.num_env_runners == 1
    algo = cfg.build_algo()
    try:
        res = algo.train()
        module = algo.get_module()
        checkpoint = algo.save_to_path(tmp_path / "ckpt")
    finally:
        algo.stop()
    assert isinstance(module, SetRLModule) and module.encoder.hidden == 16
    # the module comes back from the checkpoint (the recipe in docs/ray.md), same weights
    restored = RLModule.from_checkpoint(
        f"{checkpoint}/learner_group/learner/rl_module/default_policy")
    assert isinstance(restored, SetRLModule)
    for (k, v), (k2, v2) in zip(module.state_dict().items(), restored.state_dict().items(),
                                strict=True):
        assert k == k2 and torch.equal(v, v2), k
    assert res["training_iteration"] == 1
    assert res["env_runners"]["num_env_steps_sampled_lifetime"] >= 256
    learner = res["learners"]["default_policy"]
    for key in ("total_loss", "policy_loss", "vf_loss", "entropy"):
        assert math.isfinite(float(learner[key])), (key, learner[key])
    assert learner["num_module_steps_trained"] > 0
    # the trained module acts legally for a whole (short) episode, through the harness
    from mrsched_gym.agents.rllib_module import RLlibPolicy
    from mrsched_gym.evaluate import run_episode
    out = run_episode("mrsched/Hadoop-v0", RLlibPolicy(module), seed=0, env_kwargs=SHORT)
    assert out["steps"] > 10 and out["metrics"]["invalid_actions"] == 0
    # ... and by name, as `mrsched-gym compare --policies rllib:FOLDER` loads it: same actions
    from mrsched_gym.evaluate import make_policy
    by_name = run_episode("mrsched/Hadoop-v0", make_policy(f"rllib:{checkpoint}"), seed=0,
                          env_kwargs=SHORT)
    assert by_name["jct_s"] == out["jct_s"] and by_name["return"] == out["return"]
    _tampered_checkpoints_are_one_line(Path(checkpoint), tmp_path, out)


def _tampered_checkpoints_are_one_line(checkpoint, tmp_path, out):
    """A relative folder loads as the absolute one; a damaged or tampered checkpoint is one
    error line naming its folder (never RLlib's traceback, never a ranked random start)."""
    import os
    import pickle
    import shutil

    from mrsched_gym.agents.rllib_module import MODULE_STATE_FILE, MODULE_SUBDIR
    from mrsched_gym.errors import InputError
    from mrsched_gym.evaluate import make_policy, run_episode
    here = os.getcwd()
    os.chdir(checkpoint.parent)
    try:
        relative = run_episode("mrsched/Hadoop-v0", make_policy(f"rllib:{checkpoint.name}"),
                               seed=0, env_kwargs=SHORT)
    finally:
        os.chdir(here)
    assert relative["return"] == out["return"]

    def tampered(name, change):
        copy = tmp_path / name
        shutil.copytree(checkpoint, copy)
        change(copy / MODULE_SUBDIR / MODULE_STATE_FILE)
        return copy

    def edit_state(edit):
        def change(state_file):
            state = pickle.loads(state_file.read_bytes())
            edit(state)
            state_file.write_bytes(pickle.dumps(state))
        return change

    def nan(state):
        key = next(k for k, v in state.items() if np.asarray(v).dtype.kind == "f")
        state[key] = np.array(state[key], copy=True)
        state[key].flat[0] = np.nan

    def drop(state):
        del state[sorted(state)[-1]]

    cases = {
        "truncated": (lambda f: f.write_bytes(f.read_bytes()[:40]), "cannot be loaded"),
        "empty": (lambda f: f.write_bytes(b""), "cannot be loaded (EOFError"),
        "not_a_dict": (lambda f: f.write_bytes(pickle.dumps([1, 2])), "cannot be loaded"),
        "nan": (edit_state(nan), "NaN or infinite"),
        "missing": (edit_state(drop), "is missing from module_state.pkl"),
        "no_module": (lambda f: shutil.rmtree(f.parent), "no RLlib module in it"),
    }
    for name, (change, says) in cases.items():
        folder = tampered(name, change)
        with pytest.raises(InputError, match=re.escape(says)) as e:
            make_policy(f"rllib:{folder}")
        assert "\n" not in str(e.value) and str(folder) in str(e.value), (name, e.value)


@pytest.mark.parametrize("scenario, overrides, message", [
    ("mrsched/Hadop-v0", None, "did you mean 'mrsched/Hadoop-v0'?"),
    ("mrsched/Hadoop-v0", {"workload.lod": 0.5}, "unknown key 'lod'"),
])
def test_a_bad_scenario_fails_in_the_driver_not_in_the_env_runners(scenario, overrides,
                                                                     message):
    from mrsched_gym.errors import MRSchedError
    with pytest.raises(MRSchedError, match=re.escape(message)):
        rllib_ppo_config(scenario, env_overrides=overrides)


def test_unknown_module_is_refused():
    with pytest.raises(ValueError, match="module must be"):
        rllib_ppo_config(module="transformer")


def test_set_module_reads_the_objective_when_the_env_observes_it():
    env = make_rllib_env({"observation": "masked", "observe_objective": True, **SHORT})
    space = env.observation_space
    assert "objective" in space["observations"].spaces
    module = _module(space, scale=0.3)
    batch = _batch(space, B=32, seed=4)
    a = module.forward_inference(_tensors(batch))["action_dist_inputs"]
    batch["observations"]["objective"][:] = np.array([1, 0, 0, 0, 0, 0], np.float32)
    b = module.forward_inference(_tensors(batch))["action_dist_inputs"]
    assert not torch.allclose(a, b)          # the objective is an input of the context
    obs, _ = env.reset(seed=0)
    assert obs["observations"]["objective"].tolist() == [0, 1, 0, 0, 0, 0]


def test_a_policy_file_runs_as_ray_tasks_and_an_unpicklable_object_is_refused(local_ray,
                                                                               tmp_path):
    """``FILE.py:Class`` runs in the Ray workers as in the local harness (EDF from the policy
    contract gives edf's records); an object that does not pickle is refused up front."""
    from mrsched_gym.errors import InputError
    mine = tmp_path / "mine.py"
    mine.write_text(
        "from mrsched_gym.sim.decision import DecisionKind\n\n\n"
        "class Mine:\n"
        "    def decide(self, decision, view):\n"
        "        if decision.kind == DecisionKind.ADMIT:\n"
        "            return 0\n"
        "        if decision.kind != DecisionKind.SCHEDULE or not decision.candidates:\n"
        "            return view.K\n"
        "        keys = [(c.job.deadline_s, c.job.jid, c.phase) for c in decision.candidates]\n"
        "        return keys.index(min(keys))\n")
    kw = {"workload.duration_s": 900}
    recs = evaluate_ray([f"{mine}:Mine", "edf"], ["mrsched/Hadoop-v0"], [0, 1], env_kwargs=kw,
                        progress=False)
    assert [r["policy"] for r in recs] == ["Mine", "Mine", "edf", "edf"]
    for r, e in zip(recs[:2], recs[2:], strict=True):
        assert all(_same(r[k], e[k]) for k in e if k not in ("policy", "wall_s", "_policy_fp"))
    with pytest.raises(InputError, match="<lambda> do not pickle, so they cannot run as Ray"):
        evaluate_ray([lambda obs, mask: 0], ["mrsched/Hadoop-v0"], [0], progress=False)
