"""The fair myopic rollout (agents/rollout.py, ``estimate_the_unknown``): play-outs in copies
that hold estimates, made from the observable state, of what no scheduler observes."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from mrsched_gym.agents.rollout import (
    RolloutTeacher,
    drop_future_arrivals,
    estimate_the_unknown,
)
from mrsched_gym.evaluate import make_env, make_policy
from mrsched_gym.sim.decision import SCHEDULE
from mrsched_gym.sim.events import EventKind

ENV = "mrsched/Hadoop-v0"
#: A short, loaded Hadoop-v0 world with tight deadlines (the candidates' costs differ).
WORLD = {"workload.duration_s": 900, "workload.load": 1.3,
         "workload.deadline_factor": [1.0, 1.5]}


def _state(base: str = "edf", seed: int = 3, after_s: float = 700.0):
    """The simulator at its first schedule decision with two or more candidates after
    ``after_s`` (played by ``base``, a baseline) and the base policy."""
    env = make_env(ENV, WORLD).unwrapped
    env.reset(seed=seed)
    policy = make_policy(base)
    policy.reset(env.sim, seed=seed)
    sim = env.sim
    while not (sim.decision.kind == SCHEDULE and len(sim.decision.candidates) >= 2
               and sim.now > after_s):
        sim.act(policy.decide(sim))
    return sim, policy


def _fair_copy(sim):
    c = copy.deepcopy(sim)
    drop_future_arrivals(c)
    estimate_the_unknown(c)
    return c


def _pending_step(sim, kind: EventKind) -> int:
    return min(e[3] for e in sim.queue.heap if e[1] == int(kind))


def test_estimates_replace_the_unobserved_and_keep_the_observed():
    """Pending tasks of the present jobs get the job's profile mean and demand multiplier 1;
    launched ones keep theirs; running attempts keep their remaining work; the load holds its
    current value; the availability follows the visible forecast, then holds its last value;
    what the observation shows now (f now, the forecast window, the residual CPU) is unchanged."""
    sim, _ = _state()
    c = _fair_copy(sim)
    W = sim.scenario.availability.forecast_steps
    changed = 0
    for job, orig in zip(c.jobs, sim.jobs, strict=False):
        for i, st in enumerate(job.map_state):
            if st == 0:
                assert job.map_work[i] == job.prior_len[0] and job.map_mult[i] == 1.0
                changed += job.map_work[i] != orig.map_work[i]
            else:
                assert job.map_work[i] == orig.map_work[i]
        for i in range(job.n_reduces):
            pending = i in job.red_stack
            assert job.reduce_work[i] == (job.prior_len[1] if pending else orig.reduce_work[i])
        assert job.total_work == pytest.approx(sum(job.map_work) + sum(job.reduce_work))
    assert changed > 0
    running = [(t.remaining, u.remaining) for n in range(sim.n_nodes)
               for t, u in zip(c.tasks_on[n], sim.tasks_on[n], strict=True)]
    assert running and all(a == b for a, b in running)
    ls = _pending_step(sim, EventKind.LOAD_CHANGE)
    assert (c.load_u[:, ls:] == sim.load_u[:, [ls - 1]]).all()
    assert (c.load_u[:, :ls] == sim.load_u[:, :ls]).all()
    assert (sim.load_u[:, ls:] != sim.load_u[:, [ls - 1]]).any()     # it was not flat
    step = _pending_step(sim, EventKind.NODE_CHANGE) - 1
    seen = step + W
    assert (c.avail_f[:seen + 1] == sim.forecast_f[:seen + 1]).all()
    assert (c.avail_f[seen:] == sim.forecast_f[seen]).all()
    assert (c.forecast_f[seen:] == sim.forecast_f[seen]).all()
    assert c.availability_now() == sim.availability_now()
    assert (c.forecast_window(W) == sim.forecast_window(W)).all()
    assert c.residual == sim.residual
    assert (sim.avail_f[seen:] != sim.avail_f[seen]).any()           # the truth was not flat


def _perturb_hidden(sim, rng) -> None:
    """Change, in place, only what no scheduler observes: the pending tasks' work and demand
    multipliers, the load to come, the availability (and its forecast) beyond the window."""
    W = sim.scenario.availability.forecast_steps
    for job in sim.jobs:
        for i, st in enumerate(job.map_state):
            if st == 0:
                job.map_work[i] *= float(rng.uniform(0.3, 3.0))
                job.map_mult[i] *= float(rng.uniform(0.5, 1.5))
        for i in job.red_stack:
            job.reduce_work[i] *= float(rng.uniform(0.3, 3.0))
            job.reduce_mult[i] *= float(rng.uniform(0.5, 1.5))
    ls = _pending_step(sim, EventKind.LOAD_CHANGE)
    sim.load_u = sim.load_u.copy()
    sim.load_u[:, ls:] = rng.uniform(0.0, 1.0, sim.load_u[:, ls:].shape)
    seen = _pending_step(sim, EventKind.NODE_CHANGE) - 1 + W
    sim.avail_f, sim.forecast_f = sim.avail_f.copy(), sim.forecast_f.copy()
    sim.avail_f[seen + 1:] = sim.forecast_f[seen + 1:] = rng.uniform(
        0.5, 1.0, len(sim.avail_f) - seen - 1)


@pytest.mark.parametrize("base", ["edf", "agent:hadoop-v0"])
def test_fair_play_outs_do_not_depend_on_the_hidden_draw(base):
    """Two worlds that differ only in what no scheduler observes give every candidate the
    same fair play-out cost, to the last bit, and the fair rollout the same choice; the
    myopic (unfair) play-outs of the same two worlds differ, so the check can fail."""
    env = make_env(ENV, WORLD).unwrapped
    obs, _ = env.reset(seed=3)
    policy = make_policy(base)
    policy.reset(env.sim, seed=3)
    reads_obs = hasattr(policy, "act")
    while not (env.sim.decision.kind == SCHEDULE and len(env.sim.decision.candidates) >= 2
               and env.sim.now > 700.0):
        a = policy.act(obs, env.action_masks()) if reads_obs else policy.decide(env.sim)
        obs, *_ = env.step(int(a))
    other = copy.deepcopy(env)
    _perturb_hidden(other.sim, np.random.default_rng(0))
    costs = {}
    for estimates in (True, False):
        for name, e in (("world", env), ("other", other)):
            teacher = RolloutTeacher(make_policy(base), arrivals=False, estimates=estimates)
            teacher.reset(e.sim, seed=3)
            base_action = teacher.base_action(e, obs)
            costs[estimates, name] = teacher.play_outs(e, base_action)
            if estimates:
                costs["choice", name] = teacher.plan(e, obs)
    assert costs[True, "world"] == costs[True, "other"]
    assert costs["choice", "world"] == costs["choice", "other"]
    assert costs[False, "world"] != costs[False, "other"]
    assert costs[True, "world"] != costs[False, "world"]


def test_estimates_need_the_arrivals_dropped():
    with pytest.raises(ValueError, match="estimates"):
        RolloutTeacher(make_policy("edf"), arrivals=True, estimates=True)


@pytest.mark.parametrize("change", ["drop", "sample", "estimate"])
def test_a_changed_copy_observes_what_a_fresh_encoder_builds(change):
    """After its jobs to come are dropped or sampled, or the unobserved replaced by estimates,
    a copy's incremental observations (cached job rows, a job list that shrank or grew) are
    the bytes a fresh encoder builds, at every step to the episode's end."""
    from mrsched_gym.agents.rollout import sample_future_arrivals
    from mrsched_gym.encoding import ObservationEncoder
    env = make_env(ENV, WORLD).unwrapped
    obs, _ = env.reset(seed=3)
    rng = np.random.default_rng(5)
    while env.sim.now < 300.0:
        obs, *_ = env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
    e = copy.deepcopy(env)
    if change == "sample":
        assert sample_future_arrivals(e.sim, np.random.default_rng(7)) > 0
    else:
        assert drop_future_arrivals(e.sim) > 0
        if change == "estimate":
            estimate_the_unknown(e.sim)
    obs = e.encoder.observe()
    steps, term, trunc = 0, False, False
    while not (term or trunc):
        fresh = ObservationEncoder(e.sim)
        fresh.reset()
        want = fresh.observe()
        for key in want:
            assert obs[key].tobytes() == want[key].tobytes(), (change, steps, key)
        obs, _, term, trunc, _ = e.step(int(rng.choice(np.flatnonzero(e.action_masks()))))
        steps += 1
    assert steps > 20


def test_a_margin_keeps_the_base_unless_the_cheapest_beats_it_by_that_much():
    from mrsched_gym.agents.rollout import cheapest
    costs = {0: [1.0, 1.0], 1: [0.96, 0.98], 2: [0.85, 0.95], 3: [2.0, 0.0]}
    assert cheapest(costs, 0) == 2                       # mean 0.9: the cheapest
    assert cheapest(costs, 0, margin=0.05) == 2          # 0.9 < 0.95
    assert cheapest(costs, 0, margin=0.12) == 0          # 0.9 is not < 0.88
    assert cheapest(costs, 0, margin=0.5) == 0
    assert cheapest(costs, 2, margin=0.5) == 2           # the base is the cheapest already
    assert cheapest({0: [0.0], 1: [0.0]}, 1, margin=0.05) == 1     # nothing to gain


@pytest.mark.parametrize("margin", [-0.1, 1.0, float("nan")])
def test_a_margin_outside_0_1_is_refused(margin):
    with pytest.raises(ValueError, match="margin"):
        RolloutTeacher(make_policy("edf"), arrivals=False, estimates=True, margin=margin)
