"""The fair myopic rollout (agents/research/rollout.py, ``estimate_the_unknown``): play-outs in
copies that hold estimates, made from the observable state, of what no scheduler observes."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from mrsched_gym.agents.research.rollout import (
    RolloutTeacher,
    cheapest,
    drop_future_arrivals,
    estimate_the_unknown,
    sample_future_arrivals,
)
from mrsched_gym.env.encoding import ObservationEncoder
from mrsched_gym.evaluate import make_env, make_policy
from mrsched_gym.sim.decision import SCHEDULE
from mrsched_gym.sim.events import EventKind
from mrsched_gym.testing import check_invariants

ENV = "mrsched/Hadoop-v0"
#: A short, loaded Hadoop-v0 world with tight deadlines (the candidates' costs differ).
WORLD = {"workload.duration_s": 900, "workload.load": 1.3,
         "workload.deadline_factor": [1.0, 1.5]}
#: The same with a forecast that errs (so the truth and the forecast differ in the window).
NOISY = {**WORLD, "availability.forecast_noise": 0.2}


def _state(base: str = "edf", seed: int = 3, after_s: float = 700.0, world=None):
    """The env at its first schedule decision with two or more candidates after ``after_s``
    (played by ``base``, a baseline or an agent), its observation and the base policy."""
    env = make_env(ENV, world or WORLD).unwrapped
    obs, _ = env.reset(seed=seed)
    policy = make_policy(base)
    policy.reset(env.sim, seed=seed)
    reads_obs = hasattr(policy, "act")
    while not (env.sim.decision.kind == SCHEDULE and len(env.sim.decision.candidates) >= 2
               and env.sim.now > after_s):
        a = policy.act(obs, env.action_masks()) if reads_obs else policy.decide(env.sim)
        obs, *_ = env.step(int(a))
    return env, obs, policy


def _fair_copy(sim):
    c = copy.deepcopy(sim)
    drop_future_arrivals(c)
    estimate_the_unknown(c)
    return c


def _pending_step(sim, kind: EventKind) -> int:
    return min(e[3] for e in sim.queue.heap if e[1] == int(kind))


def test_estimates_replace_the_unobserved_and_keep_the_observed():
    """Pending tasks of the present jobs get the mean their work was drawn around (not their
    draw's mean) and demand multiplier 1; launched ones keep theirs; running and suspended
    attempts keep their remaining work; the load holds its current value; the availability is
    the truth up to now, the forecast over the visible window, then the forecast's last value;
    what the observation shows now is unchanged; the copy then plays to its end with the
    simulator's invariants holding."""
    env, _, policy = _state(world=NOISY)
    sim = env.sim
    c = _fair_copy(sim)
    W = sim.scenario.availability.forecast_steps
    changed = 0
    for job, orig in zip(c.jobs, sim.jobs, strict=False):
        expected = (orig.profile.map_work_s, orig.profile.reduce_work_s)
        assert job.expected_len == pytest.approx(expected)          # task_work_scale 1
        for i, st in enumerate(job.map_state):
            if st == 0:
                assert job.map_work[i] == job.expected_len[0] and job.map_mult[i] == 1.0
                changed += job.map_work[i] != orig.map_work[i]
            else:
                assert job.map_work[i] == orig.map_work[i]
        for i in range(job.n_reduces):
            pending = i in job.red_stack
            assert job.reduce_work[i] == (job.expected_len[1] if pending else orig.reduce_work[i])
            assert job.reduce_mult[i] == (1.0 if pending else orig.reduce_mult[i])
        assert job.total_work == pytest.approx(sum(job.map_work) + sum(job.reduce_work))
        if not any(st == 0 for st in job.map_state) and not job.red_stack:
            assert job.total_work == orig.total_work
    assert changed > 0
    assert any(j.expected_len[0] != j.prior_len[0] for j in sim.jobs)   # not the draw's mean
    running = [(t.remaining, u.remaining) for n in range(sim.n_nodes)
               for t, u in zip(c.tasks_on[n], sim.tasks_on[n], strict=True)]
    assert running and all(a == b for a, b in running)
    ls = _pending_step(sim, EventKind.LOAD_CHANGE)
    assert (c.load_u[:, ls:] == sim.load_u[:, [ls - 1]]).all()
    assert (c.load_u[:, :ls] == sim.load_u[:, :ls]).all()
    assert (sim.load_u[:, ls:] != sim.load_u[:, [ls - 1]]).any()     # it was not flat
    step = _pending_step(sim, EventKind.NODE_CHANGE) - 1
    seen = step + W
    assert (c.avail_f[:step + 1] == sim.avail_f[:step + 1]).all()
    assert (c.avail_f[step + 1:seen + 1] == sim.forecast_f[step + 1:seen + 1]).all()
    assert (sim.avail_f[step + 1:seen + 1] != sim.forecast_f[step + 1:seen + 1]).any()
    assert (c.avail_f[seen:] == sim.forecast_f[seen]).all()
    assert (c.forecast_f[:seen + 1] == sim.forecast_f[:seen + 1]).all()
    assert (c.forecast_f[seen:] == sim.forecast_f[seen]).all()
    assert c.availability_now() == sim.availability_now()
    assert (c.forecast_window(W) == sim.forecast_window(W)).all()
    assert c.residual == sim.residual
    while not c.done:
        c.act(policy.decide(c))
        check_invariants(c)
    assert c.n_closed == c.n_jobs


def test_nodes_mode_holds_the_nodes_and_cuts_the_forecast():
    """With nodes that leave and join (Dynamic-v0), the nodes up now stay up, those down stay
    down, f(t) stays at its current value and the copy's forecast ends at its last visible
    value."""
    env = make_env("mrsched/Dynamic-v0").unwrapped
    env.reset(seed=1)
    policy = make_policy("edf")
    policy.reset(env.sim, seed=1)
    sim = env.sim
    while sim.now < 5400.0:
        sim.act(policy.decide(sim))
    c = _fair_copy(sim)
    step = _pending_step(sim, EventKind.NODE_CHANGE) - 1
    seen = step + sim.scenario.availability.forecast_steps
    assert (c.node_up[:, step + 1:] == sim.node_up[:, [step]]).all()
    assert (sim.node_up[:, step + 1:] != sim.node_up[:, [step]]).any()   # the truth moves
    assert (c.avail_f[step:] == sim.avail_f[step]).all()
    assert (c.forecast_f[:seen + 1] == sim.forecast_f[:seen + 1]).all()
    assert (c.forecast_f[seen:] == sim.forecast_f[seen]).all()
    assert (sim.forecast_f[seen:] != sim.forecast_f[seen]).any()


def _perturb_hidden(sim, rng) -> None:
    """Change, in place, only what no scheduler observes, into another world the simulator
    could have drawn: the pending tasks' work and demand multipliers (the job's draw mean and
    total recomputed as a job does), the load to come, the truth in the forecast window, the
    availability and its forecast beyond the window."""
    W = sim.scenario.availability.forecast_steps
    for job in sim.jobs:
        for i, st in enumerate(job.map_state):
            if st == 0:
                job.map_work[i] *= float(rng.uniform(0.3, 3.0))
                job.map_mult[i] *= float(rng.uniform(0.5, 1.5))
        for i in job.red_stack:
            job.reduce_work[i] *= float(rng.uniform(0.3, 3.0))
            job.reduce_mult[i] *= float(rng.uniform(0.5, 1.5))
        job.prior_len = tuple(sum(w) / len(w) if w else 0.0
                              for w in (job.map_work, job.reduce_work))
        job.total_work = float(sum(job.map_work) + sum(job.reduce_work))
    ls = _pending_step(sim, EventKind.LOAD_CHANGE)
    sim.load_u = sim.load_u.copy()
    sim.load_u[:, ls:] = rng.uniform(0.0, 1.0, sim.load_u[:, ls:].shape)
    step = _pending_step(sim, EventKind.NODE_CHANGE) - 1
    seen = step + W
    sim.avail_f, sim.forecast_f = sim.avail_f.copy(), sim.forecast_f.copy()
    sim.avail_f[step + 1:seen + 1] = rng.uniform(0.5, 1.0, W)
    sim.avail_f[seen + 1:] = sim.forecast_f[seen + 1:] = rng.uniform(
        0.5, 1.0, len(sim.avail_f) - seen - 1)


@pytest.mark.parametrize("base", ["edf", "agent:hadoop-v0"])
def test_fair_play_outs_do_not_depend_on_the_hidden_draw(base):
    """Two worlds that differ only in what no scheduler observes give every candidate the
    same fair play-out cost, to the last bit, and the fair rollout the same choice; the
    myopic (unfair) play-outs of the same two worlds differ, so the check can fail."""
    env, obs, _ = _state(base, world=NOISY)
    other = copy.deepcopy(env)
    _perturb_hidden(other.sim, np.random.default_rng(0))
    seen = [ObservationEncoder(e.sim) for e in (env, other)]
    for enc in seen:
        enc.reset()
    a, b = (enc.observe() for enc in seen)
    assert all(a[k].tobytes() == b[k].tobytes() for k in a)   # nothing observed differs
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


def test_sampled_jobs_keep_their_drawn_task_lengths():
    """With the jobs to come sampled, the estimates touch only the jobs in the system: the
    sampled jobs keep the work they were drawn with."""
    sim = _state()[0].sim
    c = copy.deepcopy(sim)
    sample_future_arrivals(c, np.random.default_rng(7))
    drawn = {j.jid: list(j.map_work) for j in c.jobs if j.arrival_s > c.now}
    assert drawn
    estimate_the_unknown(c)
    assert {jid: c.jobs[jid].map_work for jid in drawn} == drawn


@pytest.mark.parametrize("change", ["drop", "sample", "estimate"])
def test_a_changed_copy_observes_what_a_fresh_encoder_builds(change):
    """After its jobs to come are dropped or sampled, or the unobserved replaced by estimates,
    a copy's incremental observations (cached job rows, a job list that shrank or grew) are
    the bytes a fresh encoder builds, at every step to the episode's end."""
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
    costs = {0: [1.0, 1.0], 1: [0.96, 0.98], 2: [0.85, 0.95], 3: [2.0, 0.0]}
    assert cheapest(costs, 0) == 2                       # mean 0.9: the cheapest
    assert cheapest(costs, 0, margin=0.05) == 2          # 0.9 < 0.95
    assert cheapest(costs, 0, margin=0.12) == 0          # 0.9 is not < 0.88
    assert cheapest(costs, 0, margin=0.5) == 0
    assert cheapest(costs, 2, margin=0.5) == 2           # the base is the cheapest already
    assert cheapest({0: [0.0], 1: [0.0]}, 1, margin=0.05) == 1     # nothing to gain
    negative = {0: [-10.0], 1: [-10.5], 2: [-11.5]}                  # rewards as costs
    assert cheapest(negative, 0, margin=0.1) == 2                    # -11.5 < -11
    assert cheapest({0: [-10.0], 1: [-10.5]}, 0, margin=0.1) == 0    # -10.5 is not < -11
    with pytest.raises(KeyError, match="base_action"):
        cheapest({0: [1.0]}, 3, margin=0.1)
    with pytest.raises(ValueError, match="margin"):
        cheapest(costs, 0, margin=1.0)


def test_the_teacher_applies_its_margin():
    """plan with a margin keeps the base's action where the cheapest candidate's gain is
    below it and departs where it is above (the same play-outs)."""
    sim_env = make_env(ENV, WORLD).unwrapped
    obs, _ = sim_env.reset(seed=3)
    policy = make_policy("edf")
    policy.reset(sim_env.sim, seed=3)
    teacher = RolloutTeacher(make_policy("edf"), arrivals=False, estimates=True)
    teacher.reset(sim_env.sim, seed=3)
    checked = 0
    while checked < 3 and not sim_env.sim.done:
        d = sim_env.sim.decision
        if d.kind == SCHEDULE and len(d.candidates) >= 2:
            base_action = teacher.base_action(sim_env, obs)
            outs = teacher.play_outs(sim_env, base_action)
            means = {b: sum(c) / len(c) for b, c in outs.items()}
            gain = (means[base_action] - min(means.values())) / abs(means[base_action] or 1.0)
            if gain > 0.02:
                below = RolloutTeacher(make_policy("edf"), arrivals=False, estimates=True,
                                       margin=gain * 0.9)
                above = RolloutTeacher(make_policy("edf"), arrivals=False, estimates=True,
                                       margin=min(gain * 1.1, 0.99))
                assert below.plan(sim_env, obs) == min(means, key=means.get)
                assert above.plan(sim_env, obs) == base_action
                checked += 1
        obs, *_ = sim_env.step(int(policy.decide(sim_env.sim)))
    assert checked == 3


@pytest.mark.parametrize("margin", [-0.1, 1.0, float("nan")])
def test_a_margin_outside_0_1_is_refused(margin):
    with pytest.raises(ValueError, match="margin"):
        RolloutTeacher(make_policy("edf"), arrivals=False, estimates=True, margin=margin)


def test_a_job_without_expected_task_work_is_refused():
    sim = _state()[0].sim
    c = copy.deepcopy(sim)
    job = next(j for j in c.jobs if j.arrival_s <= c.now)
    job.expected_len = (float("nan"), 1.0)
    with pytest.raises(ValueError, match=f"job {job.jid}: expected_len"):
        estimate_the_unknown(c)
