"""Imitation before PPO (agents/training/imitate.py) and its reference teachers, the srpt and atc
rules."""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest

from mrsched_gym.baselines import applicable_baselines, make_baseline
from mrsched_gym.config import ConfigError
from mrsched_gym.evaluate import make_policy, run_episode, scenario_of
from mrsched_gym.sim.decision import SCHEDULE

#: Short episodes keep these tests to seconds.
SHORT = {"workload.duration_s": 900}


# ---------------------------------------------------------------------- srpt
def _remaining_work(job, sim) -> float:
    """Seconds of work the job has left, written out from the job's fields: every pending or
    suspended task at its phase's observed mean length (the profile before one finished), and
    every running task's mean length minus its elapsed time (at least 0)."""
    def mean(phase):
        n = job.len_n[phase]
        return job.len_sum[phase] / n if n else job.prior_len[phase]
    left = job.pending_maps * mean(0) + job.pending_reduces * mean(1)
    left += sum(mean(t.phase) for t in job.susp)
    for t in sim.running.values():
        if t.job is job:
            left += max(mean(t.phase) - (sim.now - t.start_s), 0.0)
    return left


def test_srpt_picks_the_job_with_the_least_remaining_work():
    """Checked on every schedule decision with two or more jobs of an overloaded episode."""
    import gymnasium as gym
    env = gym.make("mrsched/Dedicated-v0", **{"workload.load": 1.5})
    env.reset(seed=3)
    sim = env.unwrapped.sim
    srpt = make_baseline("srpt")
    checked = 0
    for _ in range(2000):
        d = sim.decision
        a = srpt.decide(sim)
        if d.kind == SCHEDULE and len({c.job.jid for c in d.candidates}) > 1:
            work = [_remaining_work(c.job, sim) for c in d.candidates]
            assert work[a] == pytest.approx(min(work), rel=1e-9)
            checked += 1
        _, _, term, trunc, _ = env.step(a)
        if term or trunc:
            break
    assert checked >= 50


@pytest.mark.parametrize("env_id", ["mrsched/Dedicated-v0", "mrsched/Preemption-v0"])
def test_srpt_is_named_only_and_beats_capacity_on_mean_time_in_system(env_id):
    """The README's claim at a small scale: Capacity is the best baseline there, srpt lower."""
    assert "srpt" not in applicable_baselines(scenario_of(env_id))
    srpt = [run_episode(env_id, make_policy("srpt"), s)["metrics"]["time_in_system_h"]
            for s in range(3)]
    capacity = [run_episode(env_id, make_policy("capacity"), s)["metrics"]["time_in_system_h"]
                for s in range(3)]
    assert np.mean(srpt) < np.mean(capacity)


# ---------------------------------------------------------------------- atc
def _atc_indices(sim, k: float) -> list[float]:
    """ATC's index of every candidate, written out from the formula:
    w / p * exp(-max(d - now - p / m, 0) / (k * p_bar)), p the remaining work, m the tasks left
    (running, pending, suspended) capped at the cluster's slots, p_bar the mean of p / m; 0 for
    a job without a deadline. With map-scope deadlines p and m count the maps only, a job whose
    maps all finished has no deadline left, and a reduce candidate has index 0."""
    map_scope = sim.map_scope
    jobs = {c.job.jid: c.job for c in sim.decision.candidates}
    p, m = {}, {}
    for jid, job in jobs.items():
        mine = [t for t in sim.running.values() if t.job is job]
        if map_scope and job.maps_done < job.n_maps:
            n = job.len_n[0]
            mean = job.len_sum[0] / n if n else job.prior_len[0]
            maps = [t for t in mine if t.phase == 0]
            susp = [t for t in job.susp if t.phase == 0]
            p[jid] = (job.pending_maps + len(susp)) * mean + sum(
                max(mean - (sim.now - t.start_s), 0.0) for t in maps)
            left = len(maps) + job.pending_maps + len(susp)
        else:
            p[jid] = _remaining_work(job, sim)
            left = len(mine) + job.pending_maps + job.pending_reduces + len(job.susp)
        m[jid] = max(min(left, sim.total_slots), 1)
    p_bar = sum(p[j] / m[j] for j in jobs) / len(jobs)
    out = []
    for c in sim.decision.candidates:
        job = c.job
        settled = map_scope and job.maps_done == job.n_maps
        if math.isinf(job.deadline_s) or settled or (map_scope and c.phase == 1):
            out.append(0.0)
            continue
        slack = max(job.deadline_s - sim.now - p[job.jid] / m[job.jid], 0.0)
        out.append(job.weight / p[job.jid] * math.exp(-slack / (k * p_bar)))
    return out


@pytest.mark.parametrize("k, scope", [(0.5, "job"), (4.0, "job"), (2.0, "map")])
def test_atc_picks_the_job_with_the_largest_apparent_tardiness_cost(k, scope):
    """Checked on every schedule decision with two or more jobs of an overloaded deadline
    episode, where some jobs are late (the WSPT end of the rule) and some have slack; among
    equal indices the pick has the least remaining work."""
    import gymnasium as gym
    env = gym.make("mrsched/Hadoop-v0", **{"workload.load": 1.5,
                                           "workload.deadline_scope": scope})
    env.reset(seed=2)
    sim = env.unwrapped.sim
    atc = make_baseline("atc", k=k)
    checked = late = ties = 0
    for _ in range(3000):
        d = sim.decision
        a = atc.decide(sim)
        if d.kind == SCHEDULE and len({c.job.jid for c in d.candidates}) > 1:
            index = _atc_indices(sim, k)
            assert index[a] == pytest.approx(max(index), rel=1e-9)
            tied = [_remaining_work(c.job, sim) for i, c in enumerate(d.candidates)
                    if index[i] == index[a]]
            assert _remaining_work(d.candidates[a].job, sim) == pytest.approx(min(tied),
                                                                            rel=1e-9)
            ties += len({c.job.jid for i, c in enumerate(d.candidates)
                         if index[i] == index[a]}) > 1
            late += any(c.job.deadline_s < sim.now for c in d.candidates)
            checked += 1
        _, _, term, trunc, _ = env.step(a)
        if term or trunc:
            break
    assert checked >= 100 and late >= 20
    if scope == "map":
        assert ties >= 10                 # settled jobs and reduces: the remaining-work order


def test_atc_is_srpt_where_no_job_has_a_deadline():
    """Index 0 for every job leaves the remaining-work tie-break: the same episode as srpt."""
    kw = {"workload.deadline_fraction": 0.0, "workload.duration_s": 1800}
    runs = [run_episode("mrsched/Dedicated-v0", make_policy(p), 1, kw) for p in ("atc", "srpt")]
    assert runs[0]["steps"] == runs[1]["steps"] > 100
    assert runs[0]["jct_s"] == runs[1]["jct_s"]
    atc = run_episode("mrsched/Dedicated-v0", make_policy("atc"), 1,
                      {"workload.duration_s": 1800})                 # with deadlines: not srpt
    srpt = run_episode("mrsched/Dedicated-v0", make_policy("srpt"), 1,
                       {"workload.duration_s": 1800})
    assert atc["jct_s"] != srpt["jct_s"]


def test_atc_is_named_only_and_checks_k():
    from mrsched_gym.errors import InputError
    assert all("atc" not in applicable_baselines(scenario_of(i))
               for i in ("mrsched/Hadoop-v0", "mrsched/Heterogeneous-v0"))
    for bad in ("0", "-1", "inf", "nan"):
        with pytest.raises(InputError, match="atc: k must be a positive finite number"):
            make_policy(f"atc:k={bad}")
    with pytest.raises(InputError, match="atc: parameter 'k' must be a number, got bool True"):
        make_policy("atc:k=true")                  # refused by its type, before the constructor


# ---------------------------------------------------------------------- imitation
th = pytest.importorskip("torch")
pytest.importorskip("sb3_contrib")

from mrsched_gym.agents.training.imitate import imitate  # noqa: E402
from mrsched_gym.agents.training.train import (  # noqa: E402
    build_model,
    load_config,
    make_vec_env,
    train,
)


def tiny(name="tiny_imitate", imitate_cfg=None, **kw):
    ic = {"teachers": {"default": "edf"}, "rounds": 2, "steps_per_round": 3000, "n_envs": 2,
          "epochs": 6, "batch_size": 128, "learning_rate": 3e-3}
    ic.update(imitate_cfg or {})
    base = dict(name=name, total_timesteps=512, n_envs=2, env_kwargs=SHORT, tensorboard=False,
                imitate=ic, **{"ppo.n_steps": 256, "ppo.batch_size": 128, "ppo.n_epochs": 1,
                               "eval.n_seeds": 1, "eval.every_steps": 0,
                               "eval.baselines": ["edf"]})
    base.update(kw)
    return load_config("hadoop_set", **base)


def _fitted(cfg):
    th.manual_seed(cfg.seed)
    model = build_model(cfg, make_vec_env(cfg))
    rows = imitate(model, cfg, 7, progress=False)
    return model, rows


def _agreement(model, teacher: str, env_kwargs: dict, seed: int) -> float:
    """Share of a fresh episode's decisions (played by the model) where it acts as the
    teacher would."""
    from mrsched_gym.agents.policy import AgentPolicy
    from mrsched_gym.evaluate import make_env
    env = make_env("mrsched/Hadoop-v0", env_kwargs)
    obs, _ = env.reset(seed=seed)
    sim = env.unwrapped.sim
    pol, ref = AgentPolicy(model, "student"), make_policy(teacher)
    pol.reset(sim, seed=seed)
    ref.reset(sim, seed=seed)
    same = n = 0
    while True:
        a = pol.act(obs, env.unwrapped.action_masks())
        if len(sim.decision.candidates) > 1:
            same += a == ref.decide(sim)
            n += 1
        obs, _, term, trunc, _ = env.step(a)
        if term or trunc:
            return same / n


def test_imitation_learns_the_teacher():
    """A fresh network agrees with EDF about as often as chance before the fit; after it, on a
    fresh episode it plays itself, nearly always."""
    cfg = tiny()
    th.manual_seed(0)
    fresh = build_model(cfg, make_vec_env(cfg))
    before = _agreement(fresh, "edf", SHORT, seed=42)
    model, rows = _fitted(cfg)
    after = _agreement(model, "edf", SHORT, seed=42)
    assert [r["round"] for r in rows] == [0, 1]
    assert rows[-1]["decisions"] == 2 * cfg.imitate.steps_per_round
    assert after > 0.9 and after > before + 0.3, (before, after)


def test_a_teacher_that_idles_a_slot_is_played_not_learned_and_rounds_stop_on_count():
    """Fair's delay scheduling skips with a candidate waiting, which a work-conserving policy
    cannot do: those decisions are dropped (counted), the rest learned; a round plays exactly
    steps_per_round decisions over its envs (3 envs, 500 decisions)."""
    cfg = tiny(imitate_cfg={"teachers": {"default": "fair"}, "rounds": 2,
                            "steps_per_round": 500, "n_envs": 3, "epochs": 1})
    _, rows = _fitted(cfg)
    assert all(r["dropped"] > 0 for r in rows)
    assert [r["decisions"] for r in rows] == [
        500 - rows[0]["dropped"], 1000 - rows[0]["dropped"] - rows[1]["dropped"]]


def test_imitation_is_reproducible():
    small = {"steps_per_round": 400, "epochs": 2}
    a, rows_a = _fitted(tiny(imitate_cfg=small))
    b, rows_b = _fitted(tiny(imitate_cfg=small))
    assert [r["loss"] for r in rows_a] == [r["loss"] for r in rows_b]
    for (k, x), y in zip(a.policy.state_dict().items(), b.policy.state_dict().values(),
                         strict=True):
        assert th.equal(x, y), k


def test_an_agent_teacher_reads_the_world_observation_in_a_pool():
    """Warm-started from agent:hadoop-v0 with agent:hadoop-v0 teaching, on a pool that pads
    nodes and observes the objective (the teacher does neither): before any fit the policy is
    the teacher, so round 0 agrees on every decision (the teacher got the unpadded world
    observation)."""
    worlds = {"ids": ["mrsched/Hadoop-v0", "mrsched/Shared-v1"], "max_nodes": 25,
              "observe_objective": True}
    cfg = tiny(worlds=worlds, init_from="agent:hadoop-v0", hidden=64,
               imitate_cfg={"teachers": {"default": "agent:hadoop-v0"}, "rounds": 1,
                            "steps_per_round": 600})
    _, rows = _fitted(cfg)
    assert rows[0]["agreement"] == 1.0


def test_train_with_imitation_evaluates_the_fitted_policy_at_step_0(tmp_path):
    summary = train(tiny(imitate_cfg={"rounds": 1, "steps_per_round": 300}), tmp_path,
                    progress=False)
    assert summary["history"][0]["step"] == 0
    assert summary["history"][-1]["step"] >= 512
    rows = json.loads((tmp_path / "tiny_imitate" / "imitate.json").read_text())
    assert rows[0]["decisions"] == 300


@pytest.mark.parametrize("change, field", [
    ({"teachers": {"mrsched/Shared-v1": "edf"}}, "imitate.teachers.mrsched/Shared-v1"),
    ({"teachers": {"mrsched/Hadoop-v0": "nope"}}, "imitate.teachers.mrsched/Hadoop-v0"),
    ({"teachers": {}}, "imitate.teachers"),
    ({"rounds": 0}, "imitate.rounds"),
    ({"learning_rate": -1.0}, "imitate.learning_rate"),
    ({"learning_rate": float("inf")}, "imitate.learning_rate"),
    ({"n_envs": 501}, "imitate.n_envs"),
    ({"soft_targets": "yes"}, "imitate.soft_targets"),
    ({"teacher_workers": 0}, "imitate.teacher_workers"),
])
def test_bad_imitate_fields_are_named(change, field):
    with pytest.raises(ConfigError, match=re.escape(field)):
        tiny(imitate_cfg=change)


def test_every_world_needs_a_teacher():
    worlds = {"ids": ["mrsched/Hadoop-v0", "mrsched/Shared-v1"], "max_nodes": 25}
    with pytest.raises(ConfigError, match="no teacher for mrsched/Shared-v1"):
        tiny(worlds=worlds, imitate_cfg={"teachers": {"mrsched/Hadoop-v0": "edf"}})


def test_imitation_needs_the_set_policy():
    with pytest.raises(ConfigError, match="imitate: imitation needs"):
        tiny(policy="flat")


def test_imitation_loss_keeps_fitting_the_labelled_decisions():
    """ImitationLoss: the labelled decisions imitate() hands back, and steps on them that lower
    the imitation loss of a fresh network over all of them."""
    cfg = tiny(imitate_cfg={"rounds": 1, "steps_per_round": 1500, "epochs": 1})
    th.manual_seed(0)
    model = build_model(cfg, make_vec_env(cfg))
    labelled: dict = {}
    imitate(model, cfg, 7, progress=False, labelled=labelled)
    assert len(labelled["action"]) == 1500 and labelled["mask"].shape[0] == 1500
    from mrsched_gym.agents.training.imitate import ImitationLoss
    th.manual_seed(1)
    fresh = build_model(cfg, make_vec_env(cfg))
    loss = ImitationLoss(labelled, 128, seed=0)

    def full_loss() -> float:
        obs = {k: th.as_tensor(v) for k, v in labelled.items() if k not in ("mask", "action")}
        with th.no_grad():
            _, log_prob, _ = fresh.policy.evaluate_actions(
                obs, th.as_tensor(labelled["action"]),
                action_masks=th.as_tensor(labelled["mask"]))
        return -float(log_prob.mean())

    before = full_loss()
    optimizer = th.optim.Adam(fresh.policy.parameters(), lr=3e-3)
    assert math.isfinite(loss.steps(fresh.policy, optimizer, 30))
    assert full_loss() < 0.8 * before, (before, full_loss())


def _start_and_fit(teacher: str, soft: bool):
    """From agent:hadoop-v0's weights, one round of 1,500 decisions labelled by ``teacher``:
    the starting policy (frozen), the fitted model, the labelled decisions and the round."""
    from mrsched_gym.agents.training.imitate import _frozen_actor
    cfg = tiny(init_from="agent:hadoop-v0", hidden=64,
               imitate_cfg={"teachers": {"default": teacher}, "rounds": 1,
                            "steps_per_round": 1500, "soft_targets": soft,
                            "learning_rate": 1e-3, "epochs": 4})
    th.manual_seed(cfg.seed)
    model = build_model(cfg, make_vec_env(cfg))
    start = _frozen_actor(model.policy)
    labelled: dict = {}
    rows = imitate(model, cfg, 7, progress=False, labelled=labelled)
    return start, model, labelled, rows[0]


def _log_probs(actor, labelled: dict) -> np.ndarray:
    from mrsched_gym.agents.training.imitate import LABEL_KEYS
    obs = {k: v for k, v in labelled.items() if k not in LABEL_KEYS}
    return actor(obs, labelled["mask"])[0]


def _kl(log_p: np.ndarray, log_q: np.ndarray, mask: np.ndarray) -> float:
    """Mean KL(p || q) over the rows, legal actions only."""
    return float(np.where(mask, np.exp(log_p) * (log_p - log_q), 0.0).sum(1).mean())


def test_soft_targets_keep_the_starting_policy_where_the_teacher_agrees():
    """The starting policy teaching itself: soft targets leave its distribution where it was
    (KL ~1e-5, from Adam's steps on rounding-sized gradients), hard labels sharpen it towards
    the labels (KL ~0.6); the targets are the starting policy's distributions, and no
    decision is a departure."""
    from mrsched_gym.agents.training.imitate import soft_target
    results = {}
    for soft in (True, False):
        start, model, labelled, row = _start_and_fit("agent:hadoop-v0", soft)
        before = _log_probs(start, labelled)
        after = _log_probs(model.policy.numpy_actor(), labelled)
        results[soft] = _kl(before, after, labelled["mask"])
        if soft:
            assert row["departures"] == 0
            assert np.allclose(labelled["target"], np.exp(before), atol=1e-6)
            assert soft_target(before[0], int(np.argmax(before[0]))).sum() == \
                pytest.approx(1.0, abs=1e-5)
        else:
            assert "target" not in labelled and "departures" not in row
    assert results[True] < 0.01 * results[False], results


def test_soft_targets_learn_where_the_teacher_departs():
    """EDF teaching from agent:hadoop-v0's weights: the decisions where EDF departs from the
    starting policy's most likely action get EDF's action alone as their target, and the fit
    raises its probability there."""
    start, model, labelled, row = _start_and_fit("edf", soft=True)
    before = _log_probs(start, labelled)
    after = _log_probs(model.policy.numpy_actor(), labelled)
    action = labelled["action"]
    departs = np.argmax(before, axis=1) != action
    assert row["departures"] == departs.sum() > 50
    rows = np.arange(len(action))
    one_hot = np.zeros_like(labelled["target"])
    one_hot[rows, action] = 1.0
    assert np.array_equal(labelled["target"][departs], one_hot[departs])
    p_before, p_after = np.exp(before[rows, action]), np.exp(after[rows, action])
    assert p_after[departs].mean() > p_before[departs].mean() + 0.05, (
        p_before[departs].mean(), p_after[departs].mean())


def test_imitation_loss_fits_the_soft_targets():
    """ImitationLoss (the PPO-phase regulariser) on the starting policy's own soft targets
    leaves the starting policy where it is; the same steps on the hard labels alone (no
    ``target``) sharpen it away."""
    from mrsched_gym.agents.training.imitate import ImitationLoss, _frozen_actor
    _, _, labelled, _ = _start_and_fit("agent:hadoop-v0", soft=True)
    hard = {k: v for k, v in labelled.items() if k != "target"}
    kl = {}
    for name, arrays in (("soft", labelled), ("hard", hard)):
        cfg = tiny(init_from="agent:hadoop-v0", hidden=64)
        th.manual_seed(1)
        policy = build_model(cfg, make_vec_env(cfg)).policy
        start = _frozen_actor(policy)
        ImitationLoss(arrays, 128, seed=0).steps(policy, th.optim.Adam(policy.parameters(),
                                                                        lr=1e-3), 20)
        kl[name] = _kl(_log_probs(start, labelled), _log_probs(policy.numpy_actor(), labelled),
                       labelled["mask"])
    assert kl["soft"] < 0.1 * kl["hard"], kl


def test_rollout_labels_are_the_same_with_teacher_workers(monkeypatch):
    """imitate.teacher_workers: the rollout teacher's play-outs in two processes label every
    decision as in one, and the fit is the same."""
    from mrsched_gym.agents.training import imitate as imitate_module
    pools = []
    make_pool = imitate_module._teacher_pool
    monkeypatch.setattr(imitate_module, "_teacher_pool",
                        lambda ic: pools.append(make_pool(ic)) or pools[-1])
    runs = []
    for workers in (1, 2):
        cfg = tiny(imitate_cfg={"plugins": ["mrsched_gym.agents.research"],
                                "teachers": {"default": "rollout:edf"}, "rounds": 1,
                                "steps_per_round": 60, "n_envs": 1, "epochs": 1,
                                "teacher_workers": workers})
        th.manual_seed(cfg.seed)
        model = build_model(cfg, make_vec_env(cfg))
        labelled: dict = {}
        rows = imitate(model, cfg, 7, progress=False, labelled=labelled)
        runs.append((labelled["action"], rows[0]["loss"]))
    assert pools[0] is None and pools[1] is not None
    assert np.array_equal(runs[0][0], runs[1][0]) and runs[0][1] == runs[1][1]


@pytest.mark.parametrize("fast", [True, False])
def test_action_log_probs_are_evaluate_actions_log_probabilities(fast):
    """The whole distribution soft targets are fitted on, in either numerics, is the one PPO's
    updates read one action of."""
    cfg = tiny(numerics="fast" if fast else "exact")
    th.manual_seed(0)
    model = build_model(cfg, make_vec_env(cfg))
    _, _, labelled, _ = _start_and_fit("edf", soft=True)
    from mrsched_gym.agents.training.imitate import LABEL_KEYS
    obs = {k: th.as_tensor(v[:64]) for k, v in labelled.items() if k not in LABEL_KEYS}
    masks = th.as_tensor(labelled["mask"][:64])
    log_p = model.policy.action_log_probs(obs, masks)
    assert log_p.requires_grad
    for a in range(log_p.shape[1]):
        _, log_prob, _ = model.policy.evaluate_actions(obs, th.full((64,), a),
                                                       action_masks=masks)
        assert th.equal(log_p[:, a], log_prob)


def test_ppo_batches_run_with_ppo_and_refuse_a_resume(tmp_path):
    """A run with imitate.ppo_batches trains through PPO updates (the regulariser steps after
    each) and cannot be resumed: its labelled decisions are not in the checkpoint."""
    cfg = tiny("bc", imitate_cfg={"rounds": 1, "steps_per_round": 600, "epochs": 1,
                                  "ppo_batches": 3}, total_timesteps=1536)
    run = train(cfg, tmp_path, progress=False)
    assert run["history"][-1]["step"] >= 1536
    with pytest.raises(ConfigError, match="imitate.ppo_batches: a resumed run"):
        train(cfg, tmp_path, resume=f"{run['out']}/final_model.zip", progress=False)
    with pytest.raises(ConfigError, match="imitate.ppo_batches"):
        tiny(imitate_cfg={"ppo_batches": -1})
