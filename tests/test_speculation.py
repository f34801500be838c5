"""Speculative execution (SPEC 2.6): the SPECULATE decision, backup copies (the first to finish
wins, the other's work is wasted), and the LATE and Hadoop-native baselines on hand-built worlds
whose outcomes are computed by hand."""

import numpy as np
import pytest

from mrsched_gym.baselines import applicable_baselines, make_baseline
from mrsched_gym.config import scenario_from_dict
from mrsched_gym.env import MRSchedEnv
from mrsched_gym.env.encoding import decision_kind_slot, kind_slice, observed_kind
from mrsched_gym.evaluate import make_env
from mrsched_gym.registration import scenario_for
from mrsched_gym.sim.decision import SCHEDULE, SPECULATE, SpeculateCandidate
from mrsched_gym.sim.speculation import time_left
from mrsched_gym.sim.state import MAP
from mrsched_gym.sim.tasks import kill
from mrsched_gym.testing import check_invariants, check_task_log


def toy(speeds, jobs, **decisions):
    """One map slot per node (no reduce slots), map-only jobs of exact work, no noise."""
    data = {
        "cluster": {"nodes": [{"count": 1, "map_slots": 1, "reduce_slots": 0, "cpu_speed": s}
                              for s in speeds], "task_demand_cv": 0.0},
        "interference": {"load": "constant", "mean": 0.0, "noise": 0.0},
        "workload": {"kind": "jobs", "jobs": [{"work_cv": 0.0, "n_reduces": 0, **j}
                                              for j in jobs]},
        "decisions": {"speculation": {"enabled": True, **decisions}},
        "time_limit_s": 10_000,
    }
    return MRSchedEnv(scenario_from_dict(data))


def run(env, policy, seed=0):
    """Run an episode with ``policy(sim) -> action``; returns the simulator and its metrics."""
    env.reset(seed=seed)
    sim = env.sim
    while True:
        _, _, term, trunc, info = env.step(policy(sim))
        check_invariants(sim)
        if term or trunc:
            check_task_log(sim)
            return sim, info["metrics"]


def baseline(name):
    sched = make_baseline(name)
    return sched.decide


def first(sim):
    return 0 if sim.candidates else sim.K


def no_copy(sim):
    return sim.K if sim.kind == SPECULATE else first(sim)


# A fast node (0) and a slow one (1, 0.2x); two 100 s maps: one runs on each. At t = 100 the fast
# node is free with nothing pending, and the slow map (20% done after 100 s) is the straggler.
STRAGGLER = dict(speeds=[1.0, 0.2], jobs=[{"type": "grep", "n_maps": 2, "map_work_s": 100.0}])


@pytest.mark.parametrize("policy", ["late", "hadoop-speculative"])
def test_a_copy_of_the_straggler_wins_and_the_original_is_wasted(policy):
    sim, m = run(toy(**STRAGGLER), baseline(policy))
    # the copy runs on the fast node from t = 100 (its block: a replica there, or a remote read)
    assert sim.jobs[0].finish_s < 205.0 + 2 * 128 / 125.0
    assert m["speculative_copies"] == 1 and m["speculative_wins"] == 1
    end = sim.jobs[0].finish_s
    assert m["wasted_work_s"] == pytest.approx(0.2 * end)   # the slow original's work by then
    outcomes = [o for *_, o in sim.task_log]
    assert outcomes.count("done") == 2 and outcomes.count("superseded") == 1
    assert m["killed_tasks"] == 0                            # superseded is not a kill


def test_without_speculation_the_straggler_sets_the_response_time():
    sim, m = run(toy(**STRAGGLER), no_copy)
    assert sim.jobs[0].finish_s == pytest.approx(500.0)
    assert m["speculative_copies"] == 0 and m["wasted_work_s"] == 0.0


def test_the_original_can_win_and_then_the_copy_is_wasted():
    # Two equal nodes; a 100 s map and a 150 s map. At t = 100 the second has 50 s left and a
    # copy would need 150 s: copying it anyway, the original wins at 150 and the copy's 50 s of
    # work are wasted.
    env = toy([1.0, 1.0], [{"type": "grep", "n_maps": 1, "map_work_s": 100.0},
                           {"type": "grep", "n_maps": 1, "map_work_s": 150.0}],
              min_runtime_s=60.0)
    sim, m = run(env, first)
    assert sim.jobs[1].finish_s == pytest.approx(150.0)
    assert m["speculative_copies"] == 1 and m["speculative_wins"] == 0
    assert m["wasted_work_s"] == pytest.approx(50.0)         # the copy ran 50 s at speed 1


def test_candidates_follow_the_documented_rules():
    """Every SPECULATE decision of a random policy on Stragglers-v0: running tasks without a
    copy, on another node, run at least min_runtime_s, no reduce waiting for map output, with
    room on the node, longest estimated time left first; and it is posed only where no pending
    task can use the node."""
    env = make_env("mrsched/Stragglers-v0")
    sim = env.unwrapped.sim
    rng = np.random.default_rng(0)
    obs, _ = env.reset(seed=3)
    seen = 0
    min_run = sim.scenario.decisions.speculation.min_runtime_s
    while True:
        d = sim.decision
        if d.kind == SPECULATE and d.candidates:
            seen += 1
            n = d.node
            lefts = []
            for c in d.candidates:
                assert isinstance(c, SpeculateCandidate)
                t = c.task
                assert t.tid in sim.running and t.twin is None and t.node != n
                assert sim.now - t.start_s >= min_run
                assert t.phase == MAP or t.job.maps_done == t.job.n_maps
                slots = sim.map_slots if t.phase == MAP else sim.red_slots
                used = sim.used_map if t.phase == MAP else sim.used_red
                assert used[n] < slots[n]
                lefts.append(time_left(t, sim.now))
            assert lefts == sorted(lefts, reverse=True)
            assert not [j for j in sim.runnable if sim.jobs[j].pending_maps and
                        sim.used_map[n] < sim.map_slots[n]], "a pending map could use the node"
            assert observed_kind(obs["decision"]) == SPECULATE
            assert obs["nodes"][n, 9] == 1.0                  # the decision node is marked
            rows = obs["candidates"][: len(d.candidates)]
            assert np.all(rows[:, 20] > 0) and np.all(rows[:, 20] < 1)   # progress
        legal = np.flatnonzero(env.unwrapped.action_masks())
        obs, _, term, trunc, _ = env.step(int(rng.choice(legal)))
        if term or trunc:
            break
    assert seen > 50


def test_killing_one_copy_leaves_the_other_running_alone():
    # STRAGGLER plus a third node busy until t = 150 with another job's map, and a job arriving
    # then: a decision while both copies run (t = 100-200).
    env = toy([1.0, 0.2, 1.0], [{"type": "grep", "n_maps": 2, "map_work_s": 100.0},
                                {"type": "grep", "n_maps": 1, "map_work_s": 150.0},
                                {"type": "grep", "n_maps": 1, "map_work_s": 20.0,
                                 "arrival_s": 150.0}])
    env.reset(seed=0)
    sim = env.sim
    while sim.kind != SPECULATE:
        env.step(first(sim))
    assert sim.now == pytest.approx(100.0)
    env.step(0)                                     # copy the straggler to node 0
    assert sim.now == pytest.approx(150.0)
    original = next(t for t in sim.running.values() if t.node == 1)
    copy = original.twin
    assert copy is not None and copy.twin is original and copy.is_copy
    job = original.job
    pending = job.pending_maps
    kill(sim, original)                             # e.g. preempted, or its node left
    assert copy.twin is None and copy.tid in sim.running
    assert job.pending_maps == pending              # not requeued: the copy goes on
    check_invariants(sim)
    while not sim.done:
        env.step(first(sim))
    assert job.finish_s == pytest.approx(copy.start_s + copy.work)


def _copy_nodes(name, seeds):
    """Run ``name`` on Stragglers-v0 and return the decision nodes it launched copies on."""
    sched = make_baseline(name)
    nodes = []

    def policy(sim):
        a = sched.decide(sim)
        if sim.kind == SPECULATE and a != sim.K:
            nodes.append(sim.node)
        return a

    for seed in seeds:
        run(make_env("mrsched/Stragglers-v0").unwrapped, policy, seed=seed)
    return nodes


def test_late_copies_onto_fast_nodes_more_than_hadoop_does():
    """LATE's SlowNodeThreshold keeps copies off the slowest nodes (its paper's point against
    Hadoop's rule, which copies onto whichever node asks)."""
    speed = make_env("mrsched/Stragglers-v0").unwrapped.sim.speed
    late = [speed[n] for n in _copy_nodes("late", range(3))]
    native = [speed[n] for n in _copy_nodes("hadoop-speculative", range(3))]
    assert late and native
    slow_late = sum(s < 0.5 for s in late) / len(late)
    slow_native = sum(s < 0.5 for s in native) / len(native)
    assert slow_late < slow_native


def test_late_respects_its_cap():
    _, capped = run(toy(**STRAGGLER), make_baseline("late", speculative_cap=0.0).decide)
    assert capped["speculative_copies"] == 0


def test_the_observation_has_a_speculate_entry_only_where_it_is_posed():
    plain = make_env("mrsched/Hadoop-v0")
    spec = make_env("mrsched/Stragglers-v0")
    assert plain.observation_space["decision"].shape == (10,)
    assert spec.observation_space["decision"].shape == (11,)
    obs, _ = spec.reset(seed=0)
    assert kind_slice(obs["decision"]) == slice(0, 4)
    assert obs["decision"][decision_kind_slot(SCHEDULE)] in (0.0, 1.0)
    assert spec.observation_space.contains(obs)


def test_the_speculating_baselines_only_join_worlds_that_speculate():
    assert {"late", "hadoop-speculative"} <= set(applicable_baselines(
        scenario_for("mrsched/Stragglers-v0")))
    assert not {"late", "hadoop-speculative"} & set(applicable_baselines(
        scenario_for("mrsched/Hadoop-v0")))


def test_a_stragglers_episode_counts_its_copies():
    _, m = run(make_env("mrsched/Stragglers-v0").unwrapped, baseline("late"), seed=5)
    assert 0 < m["speculative_wins"] <= m["speculative_copies"]
    assert m["wasted_work_s"] > 0 and m["killed_tasks"] == 0


def test_a_speculation_rule_can_pair_with_any_scheduler():
    """SpeculationDelegate around a baseline: its schedule decisions are the baseline's, its
    speculation decisions the rule's (the srpt + Hadoop pairing docs/notes/agents.md compares)."""
    import gymnasium as gym

    from mrsched_gym.agents.policy import SpeculationDelegate
    env = gym.make("mrsched/Stragglers-v0", workload__duration_s=900)
    obs, _ = env.reset(seed=1)
    sim = env.unwrapped.sim
    pol = SpeculationDelegate(make_baseline("srpt"), "hadoop-speculative")
    srpt, rule = make_baseline("srpt"), make_baseline("hadoop-speculative")
    for p in (pol, srpt, rule):
        p.reset(sim, seed=1)
    kinds = {SCHEDULE: 0, SPECULATE: 0}
    while True:
        a = pol.act(obs, env.unwrapped.action_masks())
        kind = sim.decision.kind
        assert a == (rule.speculate(sim) if kind == SPECULATE else srpt.decide(sim))
        kinds[kind] = kinds.get(kind, 0) + 1
        obs, _, term, trunc, info = env.step(a)
        if term or trunc:
            break
    assert kinds[SCHEDULE] > 100 and kinds[SPECULATE] > 10
    assert info["metrics"]["speculative_copies"] > 0
