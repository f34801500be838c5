"""The sampled rollout (agents/research/rollout.py): play-outs whose jobs to come are drawn from the
workload, not the world's own draw; and Simulator.add_job, which it adds them with."""

from __future__ import annotations

import copy
import dataclasses
import math
from types import SimpleNamespace

import numpy as np
import pytest

from mrsched_gym.agents.research import rollout
from mrsched_gym.agents.research.rollout import RolloutTeacher, sample_future_arrivals
from mrsched_gym.evaluate import make_env, make_policy
from mrsched_gym.sim.decision import SCHEDULE
from mrsched_gym.sim.events import EventKind
from mrsched_gym.workloads.synthetic import arrival_rate

ENV = "mrsched/Hadoop-v0"
#: A short, loaded Hadoop-v0 world with tight deadlines (the candidates' costs differ).
WORLD = {"workload.duration_s": 600, "workload.load": 1.3,
         "workload.deadline_factor": [1.0, 1.5]}


def _branching_state(base: str, seed: int = 3, after_s: float = 120.0):
    """The env at its first schedule decision with three or more candidates after
    ``after_s`` (played by ``base``), its observation and the base policy."""
    env = make_env(ENV, WORLD).unwrapped
    obs, _ = env.reset(seed=seed)
    policy = make_policy(base)
    policy.reset(env.sim, seed=seed)
    while not (env.sim.decision.kind == SCHEDULE and len(env.sim.decision.candidates) >= 3
               and env.sim.now > after_s):
        obs, *_ = env.step(_decide(policy, env, obs))
    return env, obs, policy


def _decide(policy, env, obs) -> int:
    return (int(policy.act(obs, env.action_masks())) if hasattr(policy, "act")
            else int(policy.decide(env.sim)))


def _future(sim) -> list[tuple[float, int, int]]:
    """The jobs not arrived yet: (arrival, maps, reduces)."""
    return [(j.arrival_s, j.n_maps, j.n_reduces) for j in sim.jobs if j.arrival_s > sim.now]


def test_add_job_appends_the_next_id_and_schedules_its_arrival():
    env, _, _ = _branching_state("fifo")
    sim = copy.deepcopy(env.sim)
    draw = sim.world.jobs[-1]
    late = dataclasses.replace(draw, arrival_s=sim.now + 10.0)
    n, arrivals = len(sim.jobs), sum(e[1] == EventKind.ARRIVAL for e in sim.queue.heap)
    assert sim.add_job(late) == n
    assert sim.n_jobs == len(sim.jobs) == n + 1 and sim.jobs[n].arrival_s == sim.now + 10.0
    assert sum(e[1] == EventKind.ARRIVAL for e in sim.queue.heap) == arrivals + 1
    with pytest.raises(ValueError, match="arrival_s"):
        sim.add_job(dataclasses.replace(draw, arrival_s=sim.now - 1.0))
    # a hand-made draw without the mean its work was drawn around (the observation shows it)
    for field, bad in (("map_mean_s", math.nan), ("reduce_mean_s", -1.0)):
        with pytest.raises(ValueError, match=field):
            sim.add_job(dataclasses.replace(late, **{field: bad}))
    assert sim.n_jobs == n + 1                       # nothing was added


@pytest.mark.parametrize("horizon_s", [math.inf, 120.0])
def test_sampled_arrivals_replace_the_future_and_keep_the_present(horizon_s):
    """The copy keeps every job that has arrived as it is; the jobs to come are a fresh draw
    (not the world's), arriving after now and within the horizon, with the next ids and an
    arrival event each; the same generator draws the same jobs; the copy plays to an end at
    which every job closed (the agent's observation encoder takes the added jobs)."""
    env, obs, policy = _branching_state("agent:hadoop-v0")
    sim0 = env.sim
    present = [j.jid for j in sim0.jobs if j.arrival_s <= sim0.now]
    e = copy.deepcopy(env)
    added = sample_future_arrivals(e.sim, np.random.default_rng(7), horizon_s)
    sim = e.sim
    assert added > 0 and len(sim.jobs) == sim.n_jobs == len(present) + added
    assert [j.jid for j in sim.jobs] == list(range(len(sim.jobs)))
    for jid in present:
        assert sim.jobs[jid].arrival_s == sim0.jobs[jid].arrival_s
        assert sim.jobs[jid].n_maps == sim0.jobs[jid].n_maps
    new = sim.jobs[len(present):]
    assert all(sim.now < j.arrival_s <= sim.now + horizon_s for j in new)
    assert sum(ev[1] == EventKind.ARRIVAL for ev in sim.queue.heap) == added
    assert _future(sim) != _future(sim0)
    again = copy.deepcopy(env.sim)
    sample_future_arrivals(again, np.random.default_rng(7), horizon_s)
    assert _future(again) == _future(sim)
    obs, _, term, trunc, _ = e.step(_decide(policy, e, obs))     # the present is the same
    while not (term or trunc):
        obs, _, term, trunc, _ = e.step(_decide(policy, e, obs))
    assert sim.n_closed == sim.n_jobs and not sim.truncated


def test_the_sampled_count_of_jobs_to_come_follows_the_workloads_rate():
    """Over 400 draws the mean number of jobs to come is the Poisson rate times the time
    left of the workload (within 4 standard errors); the world's own future is one draw."""
    env, _, _ = _branching_state("fifo")
    sc = env.sim.scenario
    expected = arrival_rate(sc.workload, sc.cluster) * (sc.workload.duration_s - env.sim.now)
    counts = []
    for seed in range(400):
        sim = copy.deepcopy(env.sim)
        counts.append(sample_future_arrivals(sim, np.random.default_rng(seed)))
    se = math.sqrt(expected / len(counts))
    assert abs(np.mean(counts) - expected) < 4 * se, (np.mean(counts), expected)
    assert np.var(counts) > 0.5 * expected              # Poisson: variance = mean


@pytest.mark.parametrize("kwargs", [{"samples": 2}, {"samples": -1, "arrivals": False},
                                    {"samples": 2, "arrivals": False, "horizon_s": 0.0}])
def test_bad_sampled_settings_are_refused(kwargs):
    with pytest.raises(ValueError, match="samples|horizon_s"):
        RolloutTeacher(make_policy("fifo"), **kwargs)


def test_the_sampled_teacher_judges_each_candidate_by_its_mean_over_shared_futures(
        monkeypatch):
    """Every candidate is played out in the same ``samples`` futures (common random numbers),
    the futures differ from one another and from the world's (the teacher reset with the
    env's own seed), and the teacher takes the candidate with the lowest mean cost; a teacher
    reset with the same seed draws the same futures, another seed others."""
    env, obs, policy = _branching_state("fifo")
    seen: list[tuple[int, tuple]] = []
    play_out = rollout._play_out

    def spy(world, base, first, weights):
        sim = getattr(world, "sim", world)
        cost = play_out(world, base, first, weights)
        seen.append((first, tuple(_future_at(sim, env.sim.now)), cost))
        return cost

    monkeypatch.setattr(rollout, "_play_out", spy)
    teacher = RolloutTeacher(policy, arrivals=False, samples=3)
    teacher.reset(env.sim, seed=3)                      # the env's seed
    choice = teacher.plan(env, obs)
    n = len(env.sim.decision.candidates)
    assert [s[0] for s in seen] == [b for b in range(n) for _ in range(3)]
    futures = [s[1] for s in seen[:3]]
    assert len(set(futures)) == 3 and tuple(_future(env.sim)) not in futures
    assert all([s[1] for s in seen[3 * b:3 * b + 3]] == futures for b in range(n))
    means = [math.fsum(s[2] for s in seen[3 * b:3 * b + 3]) / 3 for b in range(n)]
    assert means[choice] == min(means) and max(means) > min(means)
    first = [s[1] for s in seen]
    seen.clear()
    again = RolloutTeacher(policy, arrivals=False, samples=3)
    again.reset(env.sim, seed=3)
    assert again.plan(env, obs) == choice and [s[1] for s in seen] == first
    seen.clear()
    other = RolloutTeacher(policy, arrivals=False, samples=3)
    other.reset(env.sim, seed=12)
    other.plan(env, obs)
    assert {s[1] for s in seen}.isdisjoint(futures)


def _future_at(sim, t: float) -> list[tuple[float, int, int]]:
    """The jobs of a played-out copy that arrive after ``t`` (the decision's time)."""
    return [(j.arrival_s, j.n_maps, j.n_reduces) for j in sim.jobs if j.arrival_s > t]


def test_sampled_play_outs_in_worker_processes_give_the_same_choice():
    import multiprocessing as mp
    env, obs, policy = _branching_state("agent:hadoop-v0")
    serial = RolloutTeacher(policy, arrivals=False, samples=2)
    serial.reset(env.sim, seed=4)
    from mrsched_gym.processes.lifecycle import default_termination
    with mp.get_context("fork").Pool(2, initializer=default_termination) as pool:
        pooled = RolloutTeacher(policy, pool=pool, arrivals=False, samples=2)
        pooled.reset(env.sim, seed=4)
        assert [pooled.plan(env, obs) for _ in range(2)] == [serial.plan(env, obs)
                                                             for _ in range(2)]


def test_sampling_from_the_worlds_own_stream_gives_the_worlds_future_and_its_costs():
    """The world's jobs are drawn from the first three of the seven streams its generator
    spawns at reset; sampling the jobs to come from a generator seeded as the env's gives
    back the world's own future, and every candidate's play-out costs, to the last bit,
    what it costs in the clairvoyant copy (the sampled copies differ only in their draw)."""
    env, _, policy = _branching_state("agent:hadoop-v0")
    e = copy.deepcopy((env, policy))
    sample_future_arrivals(e[0].sim, np.random.default_rng(3))     # the env's seed
    assert _future(e[0].sim) == _future(env.sim)
    weights = env.rewards.weights
    costs = []
    for b in range(len(env.sim.decision.candidates)):
        clairvoyant = rollout._play_out(*copy.deepcopy((env, policy)), b, weights)
        costs.append(rollout._play_out(*copy.deepcopy(e), b, weights))
        assert costs[-1] == clairvoyant
    assert len(set(costs)) > 1


def _tool(name: str):
    import importlib.util
    from pathlib import Path
    path = Path(__file__).resolve().parents[1] / "research" / "tools" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_signal_tool_chooses_on_one_half_of_the_samples_and_judges_on_the_other():
    """research/tools/rollout_signal.py: action 1 looks best on the first half of the samples but
    not
    on the second, so its expected gain is the held-out half's (negative), not the chooser's;
    the clairvoyant gain is the best true candidate's (action 2), the realised gain the
    choice's in the true future; a tie keeps the base's action."""
    signal = _tool("rollout_signal").decision_signal
    sampled = {0: [5.0, 5.0, 5.0, 5.0], 1: [3.0, 3.0, 6.0, 8.0], 2: [4.0, 4.5, 4.0, 4.0]}
    clairvoyant = {0: [5.0], 1: [4.5], 2: [4.0]}
    row = signal(clairvoyant, sampled, base_action=0)
    assert row["choice"] == 1 and row["departs"] == 1.0
    assert row["expected"] == pytest.approx(-2.0)            # (5-6 + 5-8) / 2
    assert row["se"] == pytest.approx(1.0)                   # std(-1, -3) / sqrt(2)
    assert row["clairvoyant"] == 1.0 and row["realised"] == 0.5
    tie = signal({0: [1.0], 1: [1.0]}, {0: [2.0, 2.0], 1: [2.0, 1.0]}, base_action=0)
    assert tie["choice"] == 0 and tie["departs"] == 0.0 and tie["expected"] == 0.0
    with pytest.raises(ValueError, match="at least 2"):
        signal({0: [1.0]}, {0: [1.0]}, base_action=0)


@pytest.mark.parametrize("workload", [{"kind": "jobs"},
                                      {"kind": "trace", "trace_random_window": False}])
def test_workloads_whose_draw_is_fixed_cannot_be_sampled(workload):
    """A fixed job list, or a trace replayed from a fixed window, draws the world's own jobs
    again: sampling them would be the clairvoyant rollout under another name."""
    env, _, _ = _branching_state("fifo")
    sim = copy.deepcopy(env.sim)
    fixed = {"trace_random_window": True, **workload}       # read before anything is drawn
    sim.scenario = SimpleNamespace(workload=SimpleNamespace(**fixed),
                                   cluster=sim.scenario.cluster)
    with pytest.raises(ValueError, match="workload.kind"):
        sample_future_arrivals(sim, np.random.default_rng(0))
    assert len(sim.jobs) == len(env.sim.jobs)                     # nothing dropped


def test_a_sampled_teacher_needs_the_episodes_seed():
    env, _, policy = _branching_state("fifo")
    with pytest.raises(ValueError, match="seed"):
        RolloutTeacher(policy, arrivals=False, samples=2).reset(env.sim)
