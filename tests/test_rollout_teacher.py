"""The rollout teacher (agents/research/rollout.py): clairvoyant one-step policy improvement for
imitation."""

from __future__ import annotations

import copy
import re

import pytest

from mrsched_gym.agents.research import rollout
from mrsched_gym.agents.research.rollout import TIE_TOLERANCE, RolloutTeacher
from mrsched_gym.env.rewards import RewardTracker, component_totals
from mrsched_gym.evaluate import make_env, make_policy, run_episode
from mrsched_gym.sim.decision import SCHEDULE

#: A short Hadoop-v0 world: rollouts play the episode out once per candidate.
SHORT = {"workload.duration_s": 300, "workload.load": 1.3}
#: The same with tight deadlines: jobs already in the system miss theirs (the myopic copies).
TIGHT = {**SHORT, "workload.deadline_factor": [1.0, 1.5]}
ENV = "mrsched/Hadoop-v0"


def _cost(env) -> float:
    weights = RewardTracker(env.scenario.reward.weights).weights
    return sum(w * t for w, t in zip(weights, component_totals(env.sim), strict=True))


def _play(teacher_or_base, seed: int) -> float:
    """Play one episode with a RolloutTeacher (``plan``) or a baseline; its cost."""
    env = make_env(ENV, SHORT).unwrapped
    obs, _ = env.reset(seed=seed)
    teacher_or_base.reset(env.sim, seed=seed)
    while True:
        a = (teacher_or_base.plan(env, obs) if isinstance(teacher_or_base, RolloutTeacher)
             else teacher_or_base.decide(env.sim))
        obs, _, term, trunc, _ = env.step(a)
        if term or trunc:
            return _cost(env)


def _branching_state(seed: int, base: str, world: dict = SHORT):
    """The env at its first schedule decision with three or more candidates (played by
    ``base``), its observation and the base policy."""
    env = make_env(ENV, world).unwrapped
    obs, _ = env.reset(seed=seed)
    policy = make_policy(base)
    policy.reset(env.sim, seed=seed)
    while not (env.sim.decision.kind == SCHEDULE and len(env.sim.decision.candidates) >= 3):
        obs, *_ = env.step(_decide(policy, env, obs))
    return env, obs, policy


def _decide(policy, env, obs) -> int:
    return (int(policy.act(obs, env.action_masks())) if hasattr(policy, "act")
            else int(policy.decide(env.sim)))


@pytest.mark.parametrize("base, arrivals", [("fifo", True), ("agent:hadoop-v0", True),
                                            ("fifo", False), ("agent:hadoop-v0", False)])
def test_the_teacher_picks_the_candidate_whose_play_out_costs_least_and_leaves_the_env(
        base, arrivals):
    """Each candidate played out by hand on a deep copy of the env (without the jobs still to
    arrive, for the myopic teacher): the teacher takes the cheapest (the base's own action on a
    tie), whether its base reads the simulator or observations, and the env it was asked about
    is untouched."""
    env, obs, policy = _branching_state(seed=3, base=base, world=SHORT if arrivals else TIGHT)
    costs = []
    for b in range(len(env.sim.decision.candidates)):
        e, p = copy.deepcopy((env, policy))
        if not arrivals:
            assert rollout.drop_future_arrivals(e.sim) > 0
        o, _, term, trunc, _ = e.step(b)
        while not (term or trunc):
            o, _, term, trunc, _ = e.step(_decide(p, e, o))
        costs.append(_cost(e))
    before = (env.sim.now, env.sim.decision, _cost(env), env.sim.next_tid, env.sim.n_jobs,
              len(env.sim.queue))
    choice = RolloutTeacher(policy, arrivals=arrivals).plan(env, obs)
    assert (env.sim.now, env.sim.decision, _cost(env), env.sim.next_tid, env.sim.n_jobs,
            len(env.sim.queue)) == before
    best = min(costs)
    own = _decide(policy, env, obs)
    tie = TIE_TOLERANCE * max(1.0, best)
    assert costs[choice] <= best + tie
    assert choice == (own if costs[own] <= best + tie else costs.index(best))
    assert max(costs) > best + tie, "a state where the candidates differ: the test could fail"


class _RecordingPool:
    """A process pool that keeps what its ``starmap`` calls return."""

    def __init__(self, pool) -> None:
        self.pool, self.results = pool, []

    def starmap(self, fn, tasks, chunksize=1):
        out = self.pool.starmap(fn, tasks, chunksize=chunksize)
        self.results.append(out)
        return out


@pytest.mark.parametrize("base", ["fifo", "agent:hadoop-v0"])
def test_play_outs_in_worker_processes_give_the_same_costs_and_choice(base):
    """imitate.teacher_workers: the candidates played out in a pool of two processes cost, to
    the last bit, what they cost played out here, so the teacher picks the same action."""
    import multiprocessing as mp
    import pickle
    env, obs, policy = _branching_state(seed=3, base=base)
    serial = RolloutTeacher(policy).plan(env, obs)
    world = env if hasattr(policy, "act") else env.sim
    blob = pickle.dumps((world, policy))
    here = [rollout._play_out(*pickle.loads(blob), b, env.rewards.weights)
            for b in range(len(env.sim.decision.candidates))]
    with mp.get_context("fork").Pool(2) as pool:
        recording = _RecordingPool(pool)
        assert RolloutTeacher(policy, pool=recording).plan(env, obs) == serial
    assert recording.results == [here]
    assert len(set(here)) > 1, "a state where the candidates differ"


def test_dropping_future_arrivals_ends_the_episode_with_the_jobs_in_the_system():
    """The myopic copy: no arrival event is left, the jobs not yet arrived are gone, and the
    copy plays to an end at which every job it kept closed (finished or rejected), before the
    time limit; the original's future is intact."""
    from mrsched_gym.sim.events import EventKind
    env, _, policy = _branching_state(seed=3, base="fifo")
    sim = copy.deepcopy(env.sim)
    arrived = sum(j.arrival_s <= sim.now for j in sim.jobs)
    dropped = rollout.drop_future_arrivals(sim)
    assert dropped == len(env.sim.jobs) - arrived > 0
    assert len(sim.jobs) == sim.n_jobs == arrived
    assert all(e[1] != EventKind.ARRIVAL for e in sim.queue.heap)
    while not sim.done:
        sim.act(policy.decide(sim))
    assert not sim.truncated and sim.n_closed == arrived
    assert sum(e[1] == EventKind.ARRIVAL for e in env.sim.queue.heap) == dropped
    assert rollout.drop_future_arrivals(sim) == 0


@pytest.mark.parametrize("base", ["fifo", "agent:hadoop-v0"])
def test_the_myopic_teacher_plays_out_copies_without_the_jobs_still_to_arrive(base,
                                                                             monkeypatch):
    """Every copy a myopic teacher plays out holds only the jobs that have arrived; a
    clairvoyant teacher's holds them all."""
    env, obs, policy = _branching_state(seed=3, base=base, world=TIGHT)
    arrived = sum(j.arrival_s <= env.sim.now for j in env.sim.jobs)
    seen = []
    play_out = rollout._play_out

    def spy(world, base_policy, first, weights):
        sim = getattr(world, "sim", world)
        seen.append((sim.n_jobs, len(sim.jobs)))
        return play_out(world, base_policy, first, weights)

    monkeypatch.setattr(rollout, "_play_out", spy)
    RolloutTeacher(policy, arrivals=False).plan(env, obs)
    assert seen == [(arrived, arrived)] * len(env.sim.decision.candidates)
    seen.clear()
    RolloutTeacher(policy).plan(env, obs)
    assert seen == [(env.sim.n_jobs, env.sim.n_jobs)] * len(env.sim.decision.candidates)
    assert env.sim.n_jobs > arrived


def test_a_myopic_base_that_holds_the_simulator_plays_the_copy(monkeypatch):
    """agent:general on Stragglers-v0 speculates with Hadoop's rule through a delegate that
    holds the simulator it was reset with: in a myopic copy it must hold the copy's, or its
    speculation decisions read a frozen world. The teacher's play-out costs equal those of
    copies made with the base by hand."""
    world = {"workload.duration_s": 300, "workload.load": 1.3,
             "workload.deadline_factor": [1.0, 1.5]}
    env = make_env("mrsched/Stragglers-v0", world).unwrapped
    obs, _ = env.reset(seed=3)
    policy = make_policy("agent:general")
    policy.reset(env.sim, seed=3)
    while not (env.sim.decision.kind == SCHEDULE and len(env.sim.decision.candidates) >= 3
               and env.sim.now > 60):
        obs, *_ = env.step(_decide(policy, env, obs))
    by_hand = []
    for b in range(len(env.sim.decision.candidates)):
        e, p = copy.deepcopy((env, policy))
        rollout.drop_future_arrivals(e.sim)
        by_hand.append(rollout._play_out(e, p, b, env.rewards.weights))
    seen = []
    play_out_copy = rollout._play_out_copy

    def spy(blob, first, weights):
        seen.append(play_out_copy(blob, first, weights))
        return seen[-1]

    monkeypatch.setattr(rollout, "_play_out_copy", spy)
    RolloutTeacher(policy, arrivals=False).plan(env, obs)
    assert seen == by_hand
    assert len(set(by_hand)) > 1, "a state where the candidates differ"


def test_myopic_rollout_is_named_in_imitate():
    from mrsched_gym.agents.training.imitate import make_teacher
    teacher = make_teacher("myopic-rollout:edf")
    assert isinstance(teacher, RolloutTeacher) and not teacher.arrivals
    assert make_teacher("rollout:edf").arrivals


def test_the_rollout_policy_costs_no_more_than_its_base(seed=2):
    """The cost improvement property: in the copy's deterministic world, playing the rollout
    policy throughout costs at most what its base costs (here strictly less)."""
    base = _play(make_policy("fifo"), seed)
    rolled = _play(RolloutTeacher(make_policy("fifo")), seed)
    assert rolled <= base + 1e-9
    assert rolled < base, (rolled, base)


def test_a_decision_without_a_choice_is_the_base_policys_and_plays_nothing_out(monkeypatch):
    def no_play_out(*args):
        raise AssertionError("a play-out at a decision without a choice")

    monkeypatch.setattr(rollout, "_play_out", no_play_out)
    env = make_env(ENV, SHORT).unwrapped
    obs, _ = env.reset(seed=5)
    edf = make_policy("edf")
    teacher = RolloutTeacher(make_policy("edf"))
    teacher.reset(env.sim, seed=5)
    edf.reset(env.sim, seed=5)
    seen = 0
    while seen < 20:
        if len(env.sim.decision.candidates) < 2:
            assert teacher.plan(env, obs) == edf.decide(env.sim)
            seen += 1
        obs, _, term, trunc, _ = env.step(edf.decide(env.sim))
        assert not (term or trunc)


class _Skipper:
    """A base that always skips (reads the simulator)."""

    def reset(self, sim, seed=None) -> None:
        self.K = sim.K

    def decide(self, sim) -> int:
        return self.K


def _fake_costs(monkeypatch, costs: dict[int, float]) -> list[int]:
    """Play-outs that cost ``costs[first action]``; returns the actions played out."""
    played = []

    def play_out(world, base, first, weights):
        played.append(first)
        return costs[first]

    monkeypatch.setattr(rollout, "_play_out", play_out)
    return played


def test_a_base_that_skips_has_its_skip_weighed(monkeypatch):
    env, obs, _ = _branching_state(seed=3, base="fifo")
    n, K = len(env.sim.decision.candidates), env.sim.K
    teacher = RolloutTeacher(_Skipper())
    teacher.reset(env.sim)
    played = _fake_costs(monkeypatch, {**{b: 2.0 + b for b in range(n)}, K: 1.0})
    assert teacher.plan(env, obs) == K
    assert played == [*range(n), K]
    played = _fake_costs(monkeypatch, {**{b: 2.0 + b for b in range(n)}, K: 3.5})
    assert teacher.plan(env, obs) == 0


def test_the_base_wins_ties_within_float_rounding(monkeypatch):
    env, obs, fifo = _branching_state(seed=3, base="fifo")
    n, own = len(env.sim.decision.candidates), fifo.decide(env.sim)
    other = (own + 1) % n
    teacher = RolloutTeacher(fifo)
    for gap, expected in ((1e-12, own), (1e-6, other)):
        costs = {b: 5.0 for b in range(n)}
        costs[other] = 5.0 - gap
        _fake_costs(monkeypatch, costs)
        assert teacher.plan(env, obs) == expected, gap


th = pytest.importorskip("torch")
pytest.importorskip("sb3_contrib")

from mrsched_gym.agents.training.train import load_config  # noqa: E402
from mrsched_gym.config import ConfigError  # noqa: E402


def test_a_rollout_teacher_is_named_in_imitate_and_its_base_checked():
    ic = {"plugins": ["mrsched_gym.agents.research"], "teachers": {"default": "rollout:edf"},
          "rounds": 1, "steps_per_round": 10}
    cfg = load_config("hadoop_set", imitate=ic)
    assert cfg.imitate.teachers["default"] == "rollout:edf"
    ic["teachers"] = {"default": "rollout:nope"}
    with pytest.raises(ConfigError, match=re.escape("imitate.teachers.default")):
        load_config("hadoop_set", imitate=ic)


def test_the_rollout_teacher_is_not_a_policy_of_the_harness():
    """Clairvoyant: it must never reach a leaderboard."""
    from mrsched_gym.errors import InputError
    with pytest.raises(InputError, match="unknown baseline 'rollout'"):
        run_episode(ENV, make_policy("rollout:edf"), seed=0)


def test_imitation_labels_with_the_rollout_teacher(monkeypatch):
    """In a pool, round 0 plays and learns the rollout teacher's plan of the world's own env."""
    from mrsched_gym.agents.training.imitate import imitate
    from mrsched_gym.agents.training.train import build_model, make_vec_env
    planned = []
    plan = RolloutTeacher.plan

    def spy(self, env, obs):
        a = plan(self, env, obs)
        planned.append((type(env).__name__, a))
        return a

    monkeypatch.setattr(RolloutTeacher, "plan", spy)
    worlds = {"ids": ["mrsched/Hadoop-v0"], "max_nodes": 25}
    ic = {"plugins": ["mrsched_gym.agents.research"], "teachers": {"default": "rollout:edf"},
          "rounds": 1, "steps_per_round": 40,
          "n_envs": 1, "epochs": 1, "batch_size": 16}
    cfg = load_config("hadoop_set", env_kwargs=SHORT, worlds=worlds, imitate=ic,
                      total_timesteps=256, n_envs=1, tensorboard=False)
    th.manual_seed(0)
    model = build_model(cfg, make_vec_env(cfg))
    labelled = {}
    rows = imitate(model, cfg, 7, progress=False, labelled=labelled)
    assert rows[0]["decisions"] == 40 == len(planned)
    assert {name for name, _ in planned} == {"MRSchedEnv"}      # the world, not the pool
    assert [int(a) for a in labelled["action"]] == [a for _, a in planned]   # pool K = world K
