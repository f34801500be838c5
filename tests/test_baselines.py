"""Behaviour tests: each baseline shows its paper's characteristic behaviour.

Crafted scenarios check a claim exactly where one can be set up by hand; scenario families with a
few seeds check the statistical claims. A claim our simulator does not reproduce is a strict
``xfail`` with the numbers in its reason (and in the README's table of baseline claims), so it is
reported, not hidden,
and the test flags it the day it starts to hold.
"""

import math
import os
import re

import numpy as np
import pytest

from mrsched_gym.baselines import BASELINES, applicable_baselines, make_baseline
from mrsched_gym.config import scenario_from_dict
from mrsched_gym.env import MRSchedEnv
from mrsched_gym.evaluate import run_episode, scenario_of
from mrsched_gym.registration import ENV_IDS


def toy(nodes, jobs, **extra):
    return scenario_from_dict({
        "cluster": {"nodes": nodes, "task_demand_cv": 0.0, **extra.pop("cluster", {})},
        "interference": {"load": "constant", "mean": 0.0, "noise": 0.0},
        "workload": {"kind": "jobs", "jobs": [{"work_cv": 0.0, "n_reduces": 0, **j} for j in jobs]},
        "time_limit_s": 20_000, **extra})


def play(scenario, name, seed=0, **params):
    """Run baseline ``name`` on a Scenario object; returns (simulator, metrics)."""
    pol = make_baseline(name, **params)
    env = MRSchedEnv(scenario)
    env.reset(seed=seed)
    pol.reset(env.sim, seed)
    while True:
        _, _, term, trunc, info = env.step(pol.decide(env.sim))
        if term or trunc:
            return env.sim, info["metrics"]


def mean_metric(env_id, name, key, seeds, overrides=None):
    return float(np.nanmean([run_episode(env_id, make_baseline(name), s, overrides)["metrics"][key]
                             for s in seeds]))


# ------------------------------------------------------------------ coverage
@pytest.mark.parametrize("env_id", [e for e in ENV_IDS if e != "mrsched/ThesisScale-v0"])
def test_every_applicable_baseline_runs_on_every_family(env_id):
    """Every baseline runs a short episode of each family it applies to, with legal actions."""
    short = {"workload.duration_s": 600.0}
    names = applicable_baselines(scenario_of(env_id))
    assert {"fifo", "fair", "edf", "rds", "ras", "reverse-adaptive"} <= set(names)
    for name in names:
        m = run_episode(env_id, make_baseline(name), 0, short)["metrics"]
        assert m["invalid_actions"] == 0, name
        assert m["jobs_finished"] + m["rejections"] > 0, name


def test_applicability_of_decision_specific_baselines():
    assert "mp+ac" in applicable_baselines(scenario_of("mrsched/Admission-v1"))
    assert "mp+ac" not in applicable_baselines(scenario_of("mrsched/Hadoop-v0"))
    pre = {"preempt-kill", "preempt-wait", "preempt-suspend"}
    assert pre <= set(applicable_baselines(scenario_of("mrsched/Preemption-v0")))
    assert not pre & set(applicable_baselines(scenario_of("mrsched/Hadoop-v0")))
    assert set(applicable_baselines(scenario_of("mrsched/Hadoop-v0"))) < set(BASELINES)


def test_bad_parameters_are_rejected_with_the_field_name():
    with pytest.raises(ValueError, match="delay"):
        make_baseline("fair", delay=-1)
    with pytest.raises(TypeError, match="'primitive' is set by the name 'preempt-kill'"):
        make_baseline("preempt-kill", primitive="suspend")   # the name would lie in records
    with pytest.raises(ValueError, match="eviction"):
        make_baseline("preempt-kill", eviction="random")
    with pytest.raises(KeyError, match="unknown baseline"):
        make_baseline("lottery")


@pytest.mark.parametrize("name, params, message", [
    ("fair", {"delay": 1.5}, "'delay' must be an integer, got float 1.5"),   # not truncated to 1
    ("fair", {"delay": True}, "'delay' must be an integer, got bool True"),
    ("fair", {"delay": "abc"}, "'delay' must be an integer, got str 'abc'"),
    ("rds", {"interval_s": "abc"}, "'interval_s' must be a number"),
    ("mp", {"admission": 1}, "'admission' must be true or false, got int 1"),
    ("edf-affinity", {"min_ratio": True}, "'min_ratio' must be a number, got bool True"),
    ("fair", {"delay": np.bool_(True)}, "'delay' must be an integer, got bool np.True_"),
    ("fair", {"delay": np.float64(2.0)}, "'delay' must be an integer, got float64"),
    ("fair", {"dealy": 2}, "unknown parameter 'dealy'; known: delay, pools"),
    ("edf", {"x": 1}, "unknown parameter 'x'; known: none"),
])
def test_parameters_of_the_wrong_type_or_name_are_refused(name, params, message):
    with pytest.raises(TypeError, match=re.escape(message)):
        make_baseline(name, **params)


def test_parameters_of_the_right_type_are_taken():
    assert make_baseline("fair", delay=2).delay == 2
    assert make_baseline("rds", interval_s=300).interval_s == 300        # an int is a number
    assert make_baseline("edf-affinity", min_ratio=0.5, slow_start=None).slow_start is None
    # numpy's scalars stand for the Python types (a value read from an array)
    assert make_baseline("fair", delay=np.int64(2)).delay == 2
    assert make_baseline("edf-affinity", min_ratio=np.float32(0.5)).min_ratio == 0.5
    assert make_baseline("mp", admission=np.bool_(True)).admission


def test_the_type_check_reads_every_spelling_of_optional():
    """``int | None``, ``None | int`` and ``Optional[int]`` are all checked (the hints are
    resolved, not read as text)."""
    from typing import Optional

    from mrsched_gym.baselines import check_constructor_parameters

    class Probe:
        def __init__(self, a: int | None = None, b: None | int = None,
                     c: Optional[int] = None) -> None:  # noqa: UP045 (the spelling under test)
            pass

    for key in "abc":
        check_constructor_parameters(Probe, {key: None}, "probe")
        with pytest.raises(TypeError, match=f"probe: parameter '{key}' must be an integer, "
                                            f"got float 1.5"):
            check_constructor_parameters(Probe, {key: 1.5}, "probe")


# ------------------------------------------------------------------ EDF (MIMP 5.2, RDS)
def test_edf_meets_the_deadline_fifo_misses():
    """A short urgent job behind a long relaxed one: FIFO makes it wait, EDF serves it first."""
    sc = toy([{"count": 4, "map_slots": 1, "reduce_slots": 1}],
             [{"type": "piest", "n_maps": 40, "map_work_s": 60.0, "deadline_s": 2000.0},
              {"type": "piest", "n_maps": 8, "map_work_s": 60.0, "deadline_s": 300.0,
               "arrival_s": 30.0}])
    _, fifo = play(sc, "fifo")
    _, edf = play(sc, "edf")
    assert fifo["deadline_misses"] == 1 and edf["deadline_misses"] == 0


# ------------------------------------------------------------------ Fair + delay scheduling
def test_delay_scheduling_raises_locality():
    seeds = range(2)
    with_delay = mean_metric("mrsched/Hadoop-v0", "fair", "data_locality_pct", seeds)
    no_delay = float(np.mean([run_episode("mrsched/Hadoop-v0", make_baseline("fair", delay=0),
                                          s)["metrics"]["data_locality_pct"] for s in seeds]))
    assert with_delay > no_delay + 10.0, (with_delay, no_delay)


def running_after_first_fill(scenario, pol):
    """Maps each job gets when the empty cluster is filled at t=0."""
    env = MRSchedEnv(scenario)
    env.reset(seed=0)
    pol.reset(env.sim)
    launched = [0] * len(env.sim.jobs)
    while env.sim.now == 0.0 and not env.sim.done:
        a = pol.decide(env.sim)
        if a < len(env.sim.candidates):
            launched[env.sim.candidates[a][0].jid] += 1
        env.step(a)
    return launched


def test_fair_shares_slots_equally_and_weights_tilt_them():
    sc = toy([{"count": 4, "map_slots": 2, "reduce_slots": 1}],
             [{"type": "piest", "n_maps": 40, "map_work_s": 60.0},
              {"type": "piest", "n_maps": 40, "map_work_s": 60.0, "weight": 3.0}])
    run = running_after_first_fill(sc, make_baseline("fair", delay=0))
    assert run == [2, 6], run          # weights 1:3 of 8 slots


# ------------------------------------------------------------------ Capacity
def test_capacity_scheduler_guarantees_each_queue_its_share():
    """A flood of one type first: FIFO starves the later queue, Capacity serves it its share."""
    jobs = [{"type": "piest", "n_maps": 30, "map_work_s": 60.0, "arrival_s": float(i)}
            for i in range(4)] + [{"type": "grep", "n_maps": 8, "map_work_s": 60.0,
                                   "arrival_s": 10.0}]
    sc = toy([{"count": 4, "map_slots": 2, "reduce_slots": 1}], jobs)
    sim_f, _ = play(sc, "fifo")
    sim_c, _ = play(sc, "capacity", queues={"piest": 0.5, "grep": 0.5})
    late = lambda s: s.jobs[4].finish_s - s.jobs[4].arrival_s  # noqa: E731
    assert late(sim_c) < 0.5 * late(sim_f), (late(sim_c), late(sim_f))


# ------------------------------------------------------------------ DRF
def test_drf_equalises_dominant_shares():
    """PiEst maps are CPU-dominant (0.9 of a node's CPU), Grep maps I/O-dominant (0.5): DRF runs
    more Grep tasks so both jobs' dominant shares meet, where Fair runs equal task counts."""
    sc = toy([{"count": 4, "map_slots": 6, "reduce_slots": 1}],
             [{"type": "piest", "n_maps": 60, "map_work_s": 600.0},
              {"type": "grep", "n_maps": 60, "map_work_s": 600.0}])
    counts = {name: running_after_first_fill(sc, make_baseline(name, **kw))
              for name, kw in (("drf", {}), ("fair", {"delay": 0}))}
    assert counts["fair"] == [12, 12], counts
    assert counts["drf"][1] > counts["drf"][0] + 2, counts
    pi, grep = (0.90 * counts["drf"][0], 0.50 * counts["drf"][1])
    assert abs(pi - grep) <= 0.9, (pi, grep)   # within one task's dominant demand


# ------------------------------------------------------------------ Adaptive (thesis ch. 3)
def test_adaptive_meets_relaxed_goals_that_fair_misses():
    """Thesis Fig. 3.4 vs 3.6: Fair splits slots evenly and the job with the tighter goal misses;
    Adaptive gives each job the slots its goal needs (Eq. 1) and both meet."""
    sc = toy([{"count": 10, "map_slots": 1, "reduce_slots": 1}],
             [{"type": "piest", "n_maps": 100, "map_work_s": 60.0, "deadline_s": 800.0},
              {"type": "piest", "n_maps": 40, "map_work_s": 60.0, "deadline_s": 4000.0}])
    _, fair = play(sc, "fair")
    sim, ada = play(sc, "adaptive")
    assert fair["deadline_misses"] == 1 and ada["deadline_misses"] == 0
    assert sim.jobs[0].finish_s <= 800.0


def test_data_affinity_raises_locality():
    seeds = range(3)
    basic = mean_metric("mrsched/Hadoop-v0", "adaptive", "data_locality_pct", seeds)
    data = mean_metric("mrsched/Hadoop-v0", "adaptive-data", "data_locality_pct", seeds)
    assert data > basic + 1.0, (data, basic)


def test_hardware_affinity_runs_accelerable_maps_on_accelerators():
    """Thesis 3.4.3: after calibration, Montecarlo (25x on Cell) runs on the accelerated pool."""
    nodes = [{"count": 6, "map_slots": 2, "reduce_slots": 1},
             {"count": 2, "map_slots": 2, "reduce_slots": 1, "accelerator": "cell"}]
    sc = toy(nodes, [{"type": "wordcount", "n_maps": 80, "map_work_s": 60.0, "deadline_s": 3000.0},
                     {"type": "montecarlo", "n_maps": 80, "map_work_s": 100.0,
                      "deadline_s": 3000.0, "arrival_s": 5.0}])
    share = {}
    for name in ("adaptive", "adaptive-hardware"):
        sim, _ = play(sc, name)
        on_acc = [sim.accel[n] is not None for s, e, j, n, p, o in sim.task_log
                  if j == 1 and o == "done"]
        share[name] = float(np.mean(on_acc))
    assert share["adaptive-hardware"] > share["adaptive"] + 0.2, share



def phase_job(deadline_s=150.0, pending_maps=10, n_reduces=10, pending_reduces=8,
              mu_map=10.0, mu_reduce=math.nan, prior=(10.0, 100.0), reduces_done=0):
    """A job as the estimates read it, with an observed map length ``mu_map`` (nan: none yet)
    and its profile ``prior`` (map, reduce)."""
    from sim_objects import real_job
    return real_job(deadline_s, pending_maps, mu_map, n_reduces=n_reduces,
                    pending_reduces=pending_reduces, reduces_done=reduces_done,
                    mu_r=mu_reduce, prior_m=prior[0], prior_r=prior[1])


def phase_sim(now=0.0, nodes=10):
    from types import SimpleNamespace
    return SimpleNamespace(now=now, n_nodes=nodes, red_slots=[1] * nodes, up=[True] * nodes)


def test_adaptive_estimates_each_phase_against_its_own_goal():
    """Thesis 3.3.1: each phase is estimated separately against its own goal. A job with 10 maps
    of 10 s left and 10 reduces of 100 s (2 running, 8 to start) due in 150 s on 10 reduce slots:
    the reduce phase needs one wave (100 s), so the maps must finish by 50 s and need
    100 / 50 = 2 map slots (5 whole waves of 10 s fit in 50 s); the reduces' 150 s hold one wave
    of 100 s, so they need (2 x 100 + 8 x 100) / (1 x 100) - 2 running = 8 reduce slots (the
    fluid reading: 1000 / 150 - 2 = 4.67). The whole-job estimate (RAS's) folds it all into
    1100 / (15 x 10) - 2 = 5.33 map slots."""
    from sim_objects import running_task

    from mrsched_gym.baselines.adaptive import AdaptiveScheduler
    from mrsched_gym.baselines.common import required_slots
    from mrsched_gym.sim.state import MAP, REDUCE
    job = phase_job()
    reduces = [running_task(job, REDUCE, 0.0) for _ in range(2)]
    ada = AdaptiveScheduler(slots_estimate="waves")
    assert ada.need(phase_sim(), job, reduces, MAP) == (2, -2.0, 0)
    cls, neg, _ = ada.need(phase_sim(), job, reduces, REDUCE)
    assert cls == 2 and -neg == pytest.approx(1000 / 100 - 2)
    fluid = AdaptiveScheduler(slots_estimate="fluid")
    assert fluid.need(phase_sim(), job, reduces, MAP) == (2, -2.0, 0)
    assert -fluid.need(phase_sim(), job, reduces, REDUCE)[1] == pytest.approx(1000 / 150 - 2)
    folded = required_slots(job, reduces, 0.0, prior=False) - len(reduces)
    assert folded == pytest.approx(1100 / 150 - 2)
    # a map-only job needing 3 map slots: the folded estimate would rank it after the job
    # above (3 < 5.33); per phase it comes first (3 > 2)
    maps_only = phase_job(deadline_s=100.0, pending_maps=30, n_reduces=0, pending_reduces=0)
    maps_only.jid = 1
    assert required_slots(maps_only, [], 0.0, prior=False) == pytest.approx(3.0)
    assert 3.0 < folded
    keys = sorted([ada.need(phase_sim(), job, reduces, MAP),
                   ada.need(phase_sim(), maps_only, [], MAP)])
    assert [k[2] for k in keys] == [1, 0]


def test_adaptive_phase_goal_gaps():
    """The gaps 3.3.1/3.4.5 leave, as documented in baselines/adaptive.py: mu_r is the profile's
    relative reduce cost x the observed map length until reduces finish, then the observed mean;
    the reduce phase lasts its waves on the cluster's reduce slots; a map phase past its map goal
    has missed its goal (first class) while the job's goal is still ahead."""
    from mrsched_gym.baselines.adaptive import (
        AdaptiveScheduler,
        phase_goal,
        reduce_phase_s,
        reduce_task_estimate,
    )
    from mrsched_gym.sim.state import MAP, REDUCE
    assert reduce_task_estimate(phase_job(mu_map=12.0), 12.0) == pytest.approx(120.0)
    assert reduce_task_estimate(phase_job(mu_reduce=80.0), 12.0) == 80.0
    assert reduce_task_estimate(phase_job(prior=(0.0, 5.0)), 12.0) == 12.0   # equal cost
    assert reduce_phase_s(phase_job(n_reduces=25), 100.0, 10) == 300.0
    assert reduce_phase_s(phase_job(n_reduces=25, reduces_done=25), 100.0, 10) == 0.0
    assert phase_goal(phase_job(), MAP, 100.0, 10) == 50.0
    assert phase_goal(phase_job(), REDUCE, 100.0, 10) == 150.0
    ada = AdaptiveScheduler(slots_estimate="waves")
    late = ada.need(phase_sim(now=60.0), phase_job(), [], MAP)
    assert late == (0, 0, 0)                                   # map goal 50 s has passed
    fluid = AdaptiveScheduler(slots_estimate="fluid")
    assert fluid.need(phase_sim(now=60.0), phase_job(), [], REDUCE)[0] == 2
    # in whole waves the reduces' 90 s left hold no 100 s reduce: the phase cannot make its goal
    assert ada.need(phase_sim(now=60.0), phase_job(), [], REDUCE)[0] == 0
    assert ada.need(phase_sim(now=40.0), phase_job(), [], REDUCE)[0] == 2
    assert ada.need(phase_sim(), phase_job(mu_map=math.nan), [], MAP)[0] == 1   # no data yet

# ------------------------------------------------------------------ RAS (thesis ch. 4)
def test_ras_job_slots_beat_every_static_slot_count():
    """Thesis Fig. 4.3: RAS with resource-aware job slots (containers) beats Fair at 1..8 static
    map slots per node on the Sort/Combine/Select/Twitter mix (memory-bound slots spill)."""
    jobs = [{"type": "sort", "n_maps": 60, "n_reduces": 4, "deadline_s": 3000.0},
            {"type": "combine", "n_maps": 80, "deadline_s": 3000.0, "arrival_s": 60.0},
            {"type": "select", "n_maps": 80, "deadline_s": 3000.0, "arrival_s": 120.0},
            {"type": "twitter", "n_maps": 40, "n_reduces": 4, "deadline_s": 3000.0,
             "arrival_s": 180.0}]
    static = []
    for k in range(1, 9):
        _, m = play(toy([{"count": 10, "map_slots": k, "reduce_slots": 2, "mem_gb": 8}], jobs),
                    "fair")
        static.append(m["makespan_s"])
    _, ras = play(toy([{"count": 10, "map_slots": 8, "reduce_slots": 2, "mem_gb": 8}], jobs,
                      cluster={"resource_mode": "containers"}), "ras")
    assert ras["makespan_s"] < min(static), (ras["makespan_s"], static)


def test_ras_utility_shape():
    from mrsched_gym.baselines.ras import ras_map_utility, reduce_utility, reverse_map_utility
    assert ras_map_utility(0, 20, 35) == -math.inf
    assert ras_map_utility(20, 20, 35) == 0.0 and ras_map_utility(35, 20, 35) == 1.0
    assert -1 < ras_map_utility(10, 20, 35) < 0
    assert reduce_utility(0, 10) == -1.0 and reduce_utility(10, 10) == 0.0
    assert reverse_map_utility(10, 10, 15, 35) == 0.0
    assert reverse_map_utility(15, 10, 15, 35) == 0.5
    assert reverse_map_utility(35, 10, 15, 35) == 1.0


# ------------------------------------------------------------------ Reverse-Adaptive (ch. 5)
def test_reverse_adaptive_misses_fewer_deadlines_with_a_known_f():
    """Thesis 5.3.5: Reverse-Adaptive misses fewer deadlines than Adaptive when f(t) is known
    (Eq. 1 in whole waves, s_req from the maps not finished: 107.5 vs 111.5 on these seeds;
    12 seeds: 94.25 vs 97.17)."""
    seeds, kw = range(4), {"workload.load": 0.45}
    ra = mean_metric("mrsched/Dynamic-v0", "reverse-adaptive", "deadline_misses", seeds, kw)
    ad = mean_metric("mrsched/Dynamic-v0", "adaptive", "deadline_misses", seeds, kw)
    assert ra < ad, (ra, ad)


def test_reverse_adaptive_misses_no_more_deadlines_without_f():
    """Thesis 5.3.5: without f(t) Reverse-Adaptive is never worse than Adaptive. Held with the
    fluid reading of Eq. 1 (7.0 vs 7.5 misses on these 4 seeds; 12 seeds: 8.0 vs 8.3); not
    with Eq. 1 in whole waves while RAS and Reverse-Adaptive took s_req from Eq. 1's remaining
    work (6.75 vs 6.0 on these seeds, 8.17 vs 7.58 over 12). With s_req from the maps not yet
    finished (thesis 4.2.2, the default): 5.75 vs 6.0 on these seeds, 7.25 vs 7.58 over 12."""
    seeds, kw = range(4), {"workload.load": 0.45, "availability.generator": "none"}
    ra = mean_metric("mrsched/Dynamic-v0", "reverse-adaptive", "deadline_misses", seeds, kw)
    ad = mean_metric("mrsched/Dynamic-v0", "adaptive", "deadline_misses", seeds, kw)
    assert ra <= ad, (ra, ad)


def test_reverse_fitting_reserves_for_a_coming_capacity_dip():
    """Algorithm 2: with capacity halving before its goal, a job needs more maps now (s_fit)."""
    from mrsched_gym.baselines.reverse_adaptive import ReverseAdaptiveScheduler
    sc = toy([{"count": 4, "map_slots": 2, "reduce_slots": 1}],
             [{"type": "piest", "n_maps": 60, "map_work_s": 60.0, "deadline_s": 900.0}])
    for estimate in ("waves", "fluid"):
        env = MRSchedEnv(sc)
        env.reset(seed=0)
        pol = ReverseAdaptiveScheduler(slots_estimate=estimate)
        pol.reset(env.sim)
        pol.prepare(env.sim, {})
        full = pol.s_fit[0]
        dip = np.where(np.arange(len(env.sim.forecast_f)) >= 1, 0.25, 1.0)
        env.sim.forecast_f = dip
        env.sim.node_forecast = np.broadcast_to(dip, (env.sim.n_nodes, len(dip)))
        pol.reset(env.sim)                    # the forecast is drawn at reset; read it again
        pol.prepare(env.sim, {})
        assert pol.s_fit[0] > full, (estimate, pol.s_fit[0], full)


def reverse_fit_reference(pol, sim):
    """Algorithm 2 as first written (every fitted job visited in every window, O(jobs^2))."""
    from mrsched_gym.baselines.common import task_len
    from mrsched_gym.sim.state import MAP, REDUCE
    now, jobs = sim.now, []
    for jid in sim.runnable:
        job = sim.jobs[jid]
        if math.isfinite(job.deadline_s):
            goal = job.deadline_s - (task_len(job, REDUCE) if job.n_reduces else 0.0)
            jobs.append((goal, jid, max(task_len(job, MAP), 1e-6), float(job.pending_maps)))
    jobs.sort(reverse=True)
    s_fit = {jid: pend for _, jid, _, pend in jobs}
    placed = []
    for k, (goal, jid, mu, _) in enumerate(jobs):
        a = jobs[k + 1][0] if k + 1 < len(jobs) else now + mu
        cap = pol.capacity(sim, max(a, now + mu), goal)
        for pj, pmu in placed + [(jid, mu)]:
            if s_fit[pj] > 0 and cap > 0:
                fit = min(s_fit[pj], math.floor(cap / pmu))
                s_fit[pj] -= fit
                cap -= fit * pmu
        placed.append((jid, mu))
    return s_fit


def test_reverse_fitting_shortcuts_give_the_reference_fit():
    """The fast reverse fitting over the aggregate f(t) (the fluid reading) equals the plain
    O(jobs^2) one at every decision of two trace episodes, and its capacity integral equals the
    step-by-step sum over the forecast."""
    from mrsched_gym.baselines.reverse_adaptive import ReverseAdaptiveScheduler
    checked = 0
    for env_id in ("mrsched/HadoopTrace-v0", "mrsched/GreenTrace-v0"):
        env = MRSchedEnv(scenario_of(env_id), workload__duration_s=1800.0)
        env.reset(seed=2)
        pol = ReverseAdaptiveScheduler(slots_estimate="fluid")
        pol.reset(env.sim)
        sim, step = env.sim, pol.step_s
        for a, b in ((0.0, 7 * step), (0.5 * step, 3.25 * step), (100.0, 100.0 + step / 3)):
            stepwise = sum(float(sim.forecast_f[k]) * (min(b, (k + 1) * step) - max(a, k * step))
                           for k in range(int(a // step), int(b // step) + 1)
                           if min(b, (k + 1) * step) > max(a, k * step))
            assert pol.capacity(sim, a, b) == pytest.approx(
                pol.slots * stepwise, rel=1e-12, abs=1e-9)
        while True:
            if sim.candidates and sim.kind == 0:
                pol.prepare(sim, {})
                assert pol.s_fit == reverse_fit_reference(pol, sim)
                checked += 1
            _, _, term, trunc, _ = env.step(pol.decide(sim))
            if term or trunc:
                break
    assert checked > 500


# ------------------------------------------------------------------ RDS (seed 003)
def test_rds_beats_fair_when_capacity_varies():
    seeds = range(5)
    rds = mean_metric("mrsched/Hadoop-v0", "rds", "deadline_penalty_h", seeds)
    fair = mean_metric("mrsched/Hadoop-v0", "fair", "deadline_penalty_h", seeds)
    assert rds < fair, (rds, fair)


@pytest.mark.xfail(strict=True, reason="not reproduced: RDS's deadline-miss penalty is above EDF's "
                   "on Hadoop-v0 (seeds 0-4: 8.68 vs 4.21 job-hours); see the README's baseline "
                   "claims")
def test_rds_beats_edf_when_capacity_varies():
    seeds = range(5)
    rds = mean_metric("mrsched/Hadoop-v0", "rds", "deadline_penalty_h", seeds)
    edf = mean_metric("mrsched/Hadoop-v0", "edf", "deadline_penalty_h", seeds)
    assert rds < edf, (rds, edf)


def test_arima_forecast_follows_a_trend_and_qp_respects_capacity():
    from mrsched_gym.baselines.rds import arima_forecast
    from mrsched_gym.baselines.rds_qp import solve_allocation
    f = arima_forecast([0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8], 3)
    assert f == pytest.approx([0.85, 0.9, 0.95], abs=1e-6)
    # Fewer than 2p + 3 points: no fit with more equations than unknowns, the last value stays.
    assert list(arima_forecast([0.5, 0.55, 0.6, 0.65, 0.7, 0.75], 3)) == [0.75] * 3
    u = solve_allocation(work=np.array([6000.0, 6000.0]), left=np.array([600.0, 6000.0]),
                         weight=np.array([1.0, 1.0]), cap=np.array([12.0, 12.0, 12.0]),
                         umax=np.array([20.0, 20.0]), u0=np.zeros(2), interval=600.0,
                         P=(0.01, 0.01, 0.01))
    assert u[:, 0].sum() <= 12.0 + 1e-6
    assert u[0, 0] > u[1, 0]                  # the job due first gets the capacity first


def test_rds_least_squares_matches_lstsq_and_drops_a_constant_column():
    from mrsched_gym.baselines.rds import least_squares
    rng = np.random.default_rng(3)
    for m, n in [(5, 3), (12, 3), (30, 2)]:
        X = rng.normal(size=(m, n))
        y = rng.normal(size=m)
        ref, *_ = np.linalg.lstsq(X, y, rcond=None)
        assert least_squares(X.tolist(), y.tolist()) == pytest.approx(ref, rel=1e-9, abs=1e-12)
    # A differenced series with no variation: its lag columns are all zero.
    rows = [[0.0, 0.0, 1.0]] * 6
    assert least_squares(rows, [0.25] * 6) == [0.0, 0.0, 0.25]
    # Two identical columns: one is dropped, the fit is still exact.
    rows = [[x, x, 1.0] for x in (0.1, 0.3, 0.2, 0.5)]
    y = [2 * x + 1 for x in (0.1, 0.3, 0.2, 0.5)]
    coef = least_squares(rows, y)
    assert 0.0 in coef[:2] and sum(coef[:2]) == pytest.approx(2.0) and coef[2] == pytest.approx(1)
    with pytest.raises(ValueError, match="2 observations for 3 coefficients"):
        least_squares([[0.1, 0.2, 1.0], [0.3, 0.1, 1.0]], [0.0, 1.0])


def test_rds_episode_is_the_same_under_every_openblas_kernel():
    """RDS's ARIMA fit once used ``np.linalg.lstsq``, whose last bits depend on the OpenBLAS kernel
    the CPU selects: Hadoop-v0 seed 4 then gave another episode under the Prescott kernel. With
    ``OPENBLAS_CORETYPE`` forcing older kernels (numpy's OpenBLAS is built with DYNAMIC_ARCH; a
    build without it ignores the variable and this test checks one kernel only), the episode must
    be the same, bit for bit."""
    import json
    import subprocess
    import sys
    code = ("import json, sys; from mrsched_gym.evaluate import run_episode, make_policy; "
            "r = run_episode('mrsched/Hadoop-v0', make_policy('rds'), 4); "
            "r.pop('wall_s'); print(json.dumps(r, sort_keys=True, default=str))")
    out = {}
    for core in ("", "Prescott", "Sandybridge"):
        env = dict(os.environ, OPENBLAS_CORETYPE=core, OPENBLAS_NUM_THREADS="1",
                   OMP_NUM_THREADS="1")
        run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                             text=True, check=True)
        out[core] = json.loads(run.stdout)
    assert out["Prescott"] == out[""] and out["Sandybridge"] == out[""]


def test_rds_plans_once_per_control_interval(monkeypatch):
    """RDS III.D: the optimizer runs once per control interval; arrivals wait for the next plan
    (``replan_on_arrival=True`` re-plans at every arrival as well)."""
    import mrsched_gym.baselines.rds as rds
    calls = []
    real = rds.solve_allocation
    monkeypatch.setattr(rds, "solve_allocation", lambda *a: calls.append(1) or real(*a))
    res = run_episode("mrsched/Hadoop-v0", make_baseline("rds"), 0, keep_log=True)
    per_interval = len(calls)
    assert per_interval <= math.ceil(res["log"].end_s / 600.0) + 1
    calls.clear()
    run_episode("mrsched/Hadoop-v0", make_baseline("rds", replan_on_arrival=True), 0)
    assert len(calls) > 3 * per_interval


def test_rds_qp_reaches_the_optimum_slsqp_finds():
    """The exact QP solver against scipy's SLSQP on random instances (one BLAS thread):
    never worse than SLSQP's objective, always feasible."""
    from scipy.optimize import minimize

    from mrsched_gym.baselines.rds_qp import allocation_objective, solve_allocation
    rng = np.random.default_rng(7)
    P = (0.0107, 0.0096, 0.0132)
    for _ in range(12):
        J, H = int(rng.integers(1, 25)), 3
        work, left = rng.uniform(50, 20000, J), rng.uniform(-500, 8000, J)
        w, cap = rng.uniform(0.5, 2, J), rng.uniform(5, 60, H)
        umax = rng.integers(0, 30, J).astype(float)
        u0 = np.minimum(rng.integers(0, 10, J).astype(float), umax)
        S = max(cap.max(), 1.0)
        u = solve_allocation(work, left, w, cap, umax, u0, 600.0, P)
        assert u.shape == (J, H)
        assert np.all(u >= 0) and np.all(u <= umax[:, None] + 1e-9)
        assert np.all(u.sum(axis=0) <= cap + 1e-6)

        def f(x, J=J, H=H, work=work, left=left, w=w, u0=u0, S=S):
            return allocation_objective(x.reshape(J, H), work, left, w, u0, 600.0, P, S)
        cons = [{"type": "ineq",
                 "fun": (lambda x, i=i, cap=cap, J=J, H=H: cap[i] - x.reshape(J, H)[:, i].sum())}
                for i in range(H)]
        ref = minimize(f, np.repeat(u0[:, None], H, axis=1).ravel(), method="SLSQP",
                       bounds=[(0, umax[j]) for j in range(J) for _ in range(H)],
                       constraints=cons, options={"maxiter": 500, "ftol": 1e-12})
        ours, theirs = f(u.ravel()), f(np.clip(ref.x, 0, np.repeat(umax, H)))
        assert ours <= theirs + 1e-7 * max(1.0, theirs), (J, ours, theirs)


@pytest.mark.parametrize("policy", ["rds", "edf"])
def test_baseline_records_do_not_depend_on_the_blas_thread_count(policy):
    """The same episode under 1 and 2 BLAS/OpenMP threads (fresh processes): identical records."""
    import subprocess
    import sys
    code = ("import json, mrsched_gym; from mrsched_gym.evaluate import run_episode, make_policy;"
            f"r = run_episode('mrsched/Hadoop-v0', make_policy('{policy}'), 0);"
            "print(json.dumps(r['metrics'], sort_keys=True))")
    outs = []
    for threads in ("1", "2"):
        env = dict(os.environ, OPENBLAS_NUM_THREADS=threads, OMP_NUM_THREADS=threads,
                   MKL_NUM_THREADS=threads)
        outs.append(subprocess.run([sys.executable, "-c", code], env=env, check=True,
                                   capture_output=True, text=True).stdout)
    assert outs[0] == outs[1]


# ------------------------------------------------------------------ MIMP (seed 000)
@pytest.mark.xfail(strict=True, reason="not reproduced: MP misses more deadlines than EDF on "
                   "Shared-v1 at load 0.5 (5 seeds, trained TCT models: 20.0 vs 17.2); see the "
                   "README's baseline claims")
def test_mp_meets_at_least_as_many_deadlines_as_edf_on_a_hybrid_cluster():
    seeds, kw = range(5), {"workload.load": 0.5}
    mp = mean_metric("mrsched/Shared-v1", "mp", "deadline_misses", seeds, kw)
    edf = mean_metric("mrsched/Shared-v1", "edf", "deadline_misses", seeds, kw)
    assert mp <= edf, (mp, edf)


def test_mp_matches_cpu_hungry_jobs_to_dedicated_nodes():
    """Maximum progress (Eq. 2): on a busy shared node the I/O-bound Sort gets the slot, not Pi."""
    sc = scenario_from_dict({
        "cluster": {"nodes": [{"count": 1, "kind": "shared", "map_slots": 1, "reduce_slots": 1}]},
        "interference": {"load": "constant", "mean": 0.8, "noise": 0.0},
        "workload": {"kind": "jobs", "jobs": [
            {"type": "piest", "n_maps": 4, "n_reduces": 0, "deadline_s": 1e5},
            {"type": "sort", "n_maps": 4, "n_reduces": 0, "deadline_s": 2e5}]},
        "time_limit_s": 1e6})
    env = MRSchedEnv(sc)
    env.reset(seed=0)
    pol = make_baseline("mp")
    pol.reset(env.sim)
    # first decision: both jobs are "missing" (no slots): closest deadline (Pi) first, Eq. 3
    assert env.sim.candidates[pol.decide(env.sim)][0].profile.name == "piest"


@pytest.mark.xfail(strict=True, reason="not reproduced once rejected jobs count: a rejected job "
                   "is a "
                   "missed deadline charged as if it waited until the time limit (Admission-v1, "
                   "3 seeds, trained TCT models: mp+ac 95.3 misses / 352 job-h vs mp 101.7 / 70); "
                   "MIMP 5.3 does not "
                   "count rejected jobs")
def test_admission_control_avoids_cascading_misses():
    seeds = range(3)
    acc = mean_metric("mrsched/Admission-v1", "mp+ac", "deadline_misses", seeds)
    plain = mean_metric("mrsched/Admission-v1", "mp", "deadline_misses", seeds)
    pen_acc = mean_metric("mrsched/Admission-v1", "mp+ac", "deadline_penalty_h", seeds)
    pen = mean_metric("mrsched/Admission-v1", "mp", "deadline_penalty_h", seeds)
    assert acc < 0.6 * plain and pen_acc < 0.5 * pen, (acc, plain, pen_acc, pen)


# ------------------------------------------------------------------ Pastorelli (seed 002)
def pastorelli(mem_gb):
    return toy([{"count": 1, "map_slots": 1, "reduce_slots": 1, "mem_gb": mem_gb,
                 "disk_mb_s": 50}],
               [{"type": "twitter", "n_maps": 1, "map_work_s": 100.0, "priority": 0},
                {"type": "twitter", "n_maps": 1, "map_work_s": 50.0, "priority": 1,
                 "arrival_s": 50.0}],
               decisions={"preemption": {"enabled": True}})


def test_suspend_sojourn_near_kill_and_makespan_near_wait():
    r = {p: play(pastorelli(16.0), f"preempt-{p}")[1] for p in ("wait", "kill", "suspend")}
    soj = {p: m["high_priority_sojourn_s"] for p, m in r.items()}
    mk = {p: m["makespan_s"] for p, m in r.items()}
    assert soj["suspend"] <= soj["kill"] * 1.1 and soj["suspend"] < 0.6 * soj["wait"], soj
    assert mk["suspend"] <= mk["wait"] * 1.05 and mk["suspend"] < mk["kill"], mk
    assert r["kill"]["wasted_work_s"] > 0 and r["suspend"]["wasted_work_s"] == 0


def test_suspend_degrades_with_swapped_memory():
    light = play(pastorelli(16.0), "preempt-suspend")[1]
    heavy = play(pastorelli(2.0), "preempt-suspend")[1]
    assert heavy["swap_overhead_s"] > 0 and light["swap_overhead_s"] == 0
    assert heavy["high_priority_sojourn_s"] > light["high_priority_sojourn_s"]
    assert heavy["makespan_s"] > light["makespan_s"]


def test_eviction_policy_picks_the_victim():
    sc = toy([{"count": 1, "map_slots": 2, "reduce_slots": 1}],
             [{"type": "wordcount", "n_maps": 1, "map_work_s": 100.0},
              {"type": "grep", "n_maps": 1, "map_work_s": 100.0, "arrival_s": 10.0},
              {"type": "wordcount", "n_maps": 1, "map_work_s": 10.0, "priority": 1,
               "arrival_s": 20.0}],
             decisions={"preemption": {"enabled": True}})
    for policy, victim in (("youngest", 1), ("oldest", 0)):
        sim, m = play(sc, "preempt-kill", eviction=policy)
        killed = [j for s, e, j, n, p, o in sim.task_log if o == "killed"]
        assert killed == [victim], (policy, killed)


# ------------------------------------------------------------------ MROrchestrator (seed 001)
def test_fair_with_orchestrator_lowers_jct_under_contention():
    kw = {"workload.type_mix": {"sort": 1.0, "twitter": 1.0}, "workload.load": 0.6}
    seeds = range(2)
    fair = mean_metric("mrsched/Dedicated-v0", "fair", "mean_jct_s", seeds, kw)
    uni = mean_metric("mrsched/Dedicated-v0", "fair", "mean_jct_s", seeds,
                      {**kw, "cluster.orchestrator": "uniform"})
    reg = mean_metric("mrsched/DedicatedOrchestrated-v0", "fair", "mean_jct_s", seeds, kw)
    assert reg < uni < fair, (reg, uni, fair)
