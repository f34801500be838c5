"""Thesis Eq. 1 as the thesis writes it (whole waves of task length) beside the fluid reading,
and the per-node capacity forecast Reverse-Adaptive's Algorithm 2 fits into (5.3.4.2).

Every expected value below is computed by hand in the comment next to it.
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest
from sim_objects import map_candidates, real_job, running_task, schedule_decision

from mrsched_gym.baselines import make_baseline
from mrsched_gym.baselines.common import eq1_slots, required_slots
from mrsched_gym.baselines.reverse_adaptive import NodeStretches, take_tasks
from mrsched_gym.sim.state import MAP


# ------------------------------------------------------------------ Eq. 1's division
def test_exactly_k_waves():
    # 30 unstarted tasks of 10 s, 100 s left: 10 waves -> 300 / (10 x 10) = 3 slots (both)
    assert eq1_slots(300.0, 100.0, 10.0, 30) == pytest.approx(3.0)
    assert eq1_slots(300.0, 100.0, 10.0, 30, "fluid") == pytest.approx(3.0)
    # a float time left that is a whole number of waves up to rounding: 0.3 s / 0.1 s = 3 waves
    assert eq1_slots(0.6, 0.3, 0.1, 6) == pytest.approx(2.0)


def test_time_left_rounds_down_to_whole_waves():
    # 62 tasks of 400 s, 1000 s left: 2 whole waves (800 s) -> 62 x 400 / 800 = 31 slots;
    # the fluid reading asks for 24,800 / 1000 = 24.8, too few: 24.8 slots run 62 tasks in
    # ceil(62 / 24.8) = 3 waves = 1200 s > 1000 s
    assert eq1_slots(62 * 400.0, 1000.0, 400.0, 62) == pytest.approx(31.0)
    assert eq1_slots(62 * 400.0, 1000.0, 400.0, 62, "fluid") == pytest.approx(24.8)
    # one wave left (1.9 task lengths): every task at once
    assert eq1_slots(62 * 400.0, 760.0, 400.0, 62) == pytest.approx(62.0)


def test_tasks_longer_than_the_time_left():
    # an unstarted 400 s task cannot end within 300 s whatever the slots: the goal is lost
    assert eq1_slots(800.0, 300.0, 400.0, 2) == math.inf
    assert eq1_slots(800.0, 300.0, 400.0, 2, "fluid") == pytest.approx(800 / 300)
    # only running tasks left (150 s of work, 300 s left, 400 s tasks): the slots they hold,
    # 150 / 400 = 0.375 (one wave taken)
    assert eq1_slots(150.0, 300.0, 400.0, 0) == pytest.approx(0.375)
    # the goal has passed: inf under both readings
    assert eq1_slots(10.0, 0.0, 5.0, 1) == math.inf
    assert eq1_slots(10.0, -1.0, 5.0, 1, "fluid") == math.inf


def test_a_join_like_j4_per_fig_3_2():
    """Thesis ch. 3's Join J4 (65 maps of 50 s, goal 120 s) as Eq. 1 in waves sees it.

    Fig. 3.2 / 3.4.6: l = 50 / 120 = 42% of the goal, so at submission 120 // 50 = 2 waves fit.
    """
    work = 65 * 50.0
    # 2 waves: 3,250 / (2 x 50) = 32.5 slots; the fluid 3,250 / 120 = 27.08 slots would run
    # 65 maps in ceil(65 / 27.08) = 3 waves = 150 s > 120 s
    assert eq1_slots(work, 120.0, 50.0, 65) == pytest.approx(32.5)
    assert eq1_slots(work, 120.0, 50.0, 65, "fluid") == pytest.approx(3250 / 120)
    # still 2 waves with 100 s left; 1 wave with 99 s or exactly 50 s left: all 65 at once
    assert eq1_slots(work, 100.0, 50.0, 65) == pytest.approx(32.5)
    assert eq1_slots(work, 99.0, 50.0, 65) == pytest.approx(65.0)
    assert eq1_slots(work, 50.0, 50.0, 65) == pytest.approx(65.0)
    # under one task length left (d < l in Fig. 3.2) with maps unstarted: no allocation meets
    # the goal; fluid: 3,250 / 49 = 66.3 slots, a finite number that cannot help either
    assert eq1_slots(work, 49.0, 50.0, 65) == math.inf
    assert eq1_slots(work, 49.0, 50.0, 65, "fluid") == pytest.approx(3250 / 49)


def test_waves_round_down_as_3_4_6_states():
    # 3.4.6: "a job with a map length bigger than 50%" runs "all the tasks ... in a single
    # wave": l = 60% of the time left gives 100 // 60 = 1 wave (rounding up would give 2):
    # 10 maps of 60 s with 100 s left need all 10 slots at once (600 / (1 x 60))
    assert eq1_slots(600.0, 100.0, 60.0, 10) == pytest.approx(10.0)
    # and Fig. 3.2's baseline, d = 100%: 1.0x the estimate for any l dividing the goal
    # (20 s maps, 100 s left: 5 waves, 50 maps -> 10 slots under both readings)
    assert eq1_slots(1000.0, 100.0, 20.0, 50) == pytest.approx(10.0)
    assert eq1_slots(1000.0, 100.0, 20.0, 50, "fluid") == pytest.approx(10.0)


def job(deadline_s, pending_maps, mu, n_reduces=0, pending_reduces=0, mu_r=math.nan,
        running=0):
    """A job with ``pending_maps`` maps to start and ``running`` running, observed map length
    ``mu`` (and reduce length ``mu_r``)."""
    return real_job(deadline_s, pending_maps + running, mu, pending_maps=pending_maps,
                    n_reduces=n_reduces, pending_reduces=pending_reduces, mu_r=mu_r)


def test_required_slots_counts_running_tasks_in_the_first_wave():
    # 150 s left, 100 s maps: 1 wave. One map running for 10 s (delta 90) and one unstarted:
    # (90 + 100) / (1 x 100) = 1.9 slots, i.e. the unstarted map needs a second slot now
    # (waiting for the running one would end at 190 s); fluid: 190 / 150 = 1.27
    j = job(150.0, 1, 100.0, running=1)
    running = [running_task(j, MAP, -10.0)]
    assert required_slots(j, running, 0.0) == pytest.approx(1.9)
    assert required_slots(j, running, 0.0, estimate="fluid") == pytest.approx(190 / 150)


def test_required_slots_waves_of_reduces_after_the_maps():
    # maps done, 3 reduces of 50 s (profile) unstarted, 120 s left: 2 waves of 50 s ->
    # 150 / 100 = 1.5 reduce slots (counted in reduce lengths once no map is left)
    j = job(120.0, 0, 10.0, n_reduces=3, pending_reduces=3, mu_r=50.0)
    assert required_slots(j, [], 0.0) == pytest.approx(1.5)
    assert required_slots(j, [], 0.0, estimate="fluid") == pytest.approx(150 / 120)


def test_adaptive_serves_a_join_past_its_last_wave_first():
    """J4 of thesis ch. 3 at its first estimate, 90 s after submission (goal 120 s): 54 maps
    running for 45 s (delta 5 s each), 5 unstarted, mu 50 s; a Simulator-like job beside it
    needs 40 more slots. Under waves 30 s < one map: the goal is lost, and J4 ranks with the
    jobs that missed theirs (3.4.1), first. Under fluid: (54 x 5 + 5 x 50) / 30 = 17.33 slots,
    36.67 fewer than the 54 it holds, so the other job ranks first."""
    from mrsched_gym.baselines.adaptive import AdaptiveScheduler
    sim = SimpleNamespace(now=90.0, n_nodes=1, red_slots=[1], up=[True])
    j4 = job(120.0, 5, 50.0, running=54)
    running = [running_task(j4, MAP, 45.0)] * 54
    waves = AdaptiveScheduler(slots_estimate="waves").need(sim, j4, running)
    fluid = AdaptiveScheduler(slots_estimate="fluid").need(sim, j4, running)
    assert waves == (0, 54, 0)
    assert fluid[0] == 2 and fluid[1] == pytest.approx(54 - 520 / 30)
    other = (2, -40.0, 1)                     # the other job's key: 40 slots short
    assert waves < other < fluid


def test_slots_estimate_is_checked_and_named():
    # each chapter's numbers chose its scheduler's default (the Baselines page's table):
    # Tables 5.7-5.8 the fluid reading for Adaptive, ch. 5's misses whole waves for RAS and
    # Reverse-Adaptive
    defaults = {"adaptive": "fluid", "adaptive-data": "fluid", "adaptive-hardware": "fluid",
                "ras": "waves", "reverse-adaptive": "waves"}
    for name, default in defaults.items():
        assert make_baseline(name).slots_estimate == default
        other = "waves" if default == "fluid" else "fluid"
        assert make_baseline(name, slots_estimate=other).slots_estimate == other
        with pytest.raises(ValueError, match="slots_estimate must be one of waves, fluid"):
            make_baseline(name, slots_estimate="wave")


# ------------------------------------------------------------------ Algorithm 2 per node
def test_node_stretches_and_whole_task_fit():
    # 3 nodes, 1 map slot each, steps of 100 s: node 0 always up, node 1 up for steps 0-1 only
    # (down from 200 s), node 2 at capacity 0.5 throughout
    fc = np.array([[1, 1, 1, 1], [1, 1, 0, 0], [0.5, 0.5, 0.5, 0.5]], dtype=float)
    st = NodeStretches(fc, [1, 1, 1], 100.0)
    assert list(st.node) == [0, 1, 2]
    assert list(st.start) == [0.0, 0.0, 0.0] and st.end[1] == 200.0
    assert math.isinf(st.end[0]) and math.isinf(st.end[2])  # last value persists
    length, room = st.window(50.0, 350.0)
    # node 0: 300 s; node 1: 50..200 = 150 s; node 2: 300 s at 0.5 = 150 capacity-seconds
    assert list(length) == [300.0, 150.0, 300.0]
    assert room == pytest.approx([300.0, 150.0, 150.0])
    # tasks of 100 s: node 0 holds 3, node 1 holds 1, node 2 holds 1 -> 5 in all; 4 asked:
    # the first stretches first (3 on node 0, 1 on node 1)
    r = room.copy()
    assert take_tasks(length, r, 100.0, 4) == 4
    assert r == pytest.approx([0.0, 50.0, 150.0])
    # tasks of 200 s: node 1's 150 s stretch holds none, node 0 one (300 s), node 2 none
    # (150 capacity-seconds)
    r = room.copy()
    assert take_tasks(length, r, 200.0, 10) == 1


def brute_force_window(fc, slots, step, a, b):
    """Every stretch of every node that overlaps [a, b], by scanning them all (the window's
    definition): its length inside [a, b] and the capacity-seconds it offers there."""
    n, k = fc.shape
    lengths, rooms = [], []
    for node in range(n):
        if not slots[node]:
            continue
        t = 0
        while t < k:
            if fc[node, t] <= 0:
                t += 1
                continue
            e = t
            while e < k and fc[node, e] > 0:
                e += 1
            start, end = t * step, (math.inf if e >= k else e * step)
            if start < b and end > a:
                lo, hi = max(start, a), max(min(end, b), max(start, a))
                lengths.append(hi - lo)

                def integral(x, row=fc[node]):
                    i = min(int(x // step), k - 1)
                    return row[:i].sum() * step + row[i] * (x - i * step)
                rooms.append(max(slots[node] * (integral(hi) - integral(lo)), 0.0))
            t = e
    return lengths, rooms


@pytest.mark.parametrize("seed", range(6))
def test_a_window_holds_exactly_the_stretches_that_overlap_it(seed):
    """The window finds its stretches through an index (those up in the step its start lies
    in, then those that start inside it) instead of scanning them all: the same stretches, in
    the same order, with the same lengths and capacity-seconds, on random forecasts (nodes
    that leave and return, capacities below 1, a node without map slots, windows that start
    or end on a step's edge and that run past the forecast)."""
    rng = np.random.default_rng(seed)
    n, k, step = 7, 30, 50.0
    fc = np.where(rng.random((n, k)) < 0.3, 0.0, rng.choice([0.5, 1.0], size=(n, k)))
    slots = [1, 2, 0, 1, 1, 3, 1]
    st = NodeStretches(fc, slots, step)
    for _ in range(40):
        a = float(rng.choice([rng.uniform(0, k * step), step * rng.integers(0, k)]))
        b = a + float(rng.choice([rng.uniform(1, 900), step * rng.integers(1, 12),
                                  (k + 5) * step]))
        length, room = st.window(a, b)
        want_length, want_room = brute_force_window(fc, slots, step, a, b)
        assert length == pytest.approx(want_length, abs=1e-9)
        assert room == pytest.approx(want_room, abs=1e-6)


def test_a_room_left_a_hair_below_zero_holds_no_task():
    """A longer task can leave a stretch's room a rounding error below zero (whole tasks are
    counted with 1e-9 of slack); a shorter task then finds none there, not minus one."""
    length, room = [1000.0, 1000.0], [-1e-7, 300.0]
    assert take_tasks(length, room, 10.0, 40) == 30
    assert room[0] == -1e-7 and room[1] == pytest.approx(0.0)
    assert take_tasks([1000.0], [-1e-7], 10.0, 5) == 0


def test_reverse_adaptive_fits_each_decision_as_if_it_were_the_first():
    """Reverse-Adaptive takes over the previous decision's windows while the jobs fitted up to
    them are the same, and keeps other windows' fits: at every decision of an episode its
    s_fit equals a fresh scheduler's, which fits every window anew."""
    from mrsched_gym.baselines.reverse_adaptive import ReverseAdaptiveScheduler
    from mrsched_gym.env import MRSchedEnv
    from mrsched_gym.evaluate import scenario_of
    env = MRSchedEnv(scenario_of("mrsched/Dynamic-v0"), workload__duration_s=3600.0,
                     availability__mode="nodes")
    env.reset(seed=2)
    sim = env.unwrapped.sim
    kept = ReverseAdaptiveScheduler()
    kept.reset(sim)
    compared = done = 0
    while not done:
        if sim.decision.kind == 0 and len({c.job.jid for c in sim.decision.candidates}) > 1:
            kept.prepare(sim, {})
            fresh = ReverseAdaptiveScheduler()
            fresh.reset(sim)
            fresh.prepare(sim, {})
            assert kept.s_fit == fresh.s_fit
            compared += 1
        _, _, term, trunc, _ = env.step(kept.decide(sim))
        done = term or trunc
    assert compared > 50


def test_reverse_fit_sees_a_node_leave_before_a_task_ends():
    """Three nodes of one map slot, 1000 s maps; nodes 1 and 2 leave at 1750 s. A job with 4
    maps due at 3000 s: windows start one task length from now (1000 s). Per node, node 0 holds
    2 maps in [1000, 3000] and nodes 1-2 none (750 s up each), so 2 maps must start now
    (s_fit = 4 - 2 = 2). The aggregate f(t) (1 until 1750 s, 1/3 after) offers
    3 x (750 + 1250 / 3) = 3500 slot-seconds: 3 maps "fit", s_fit = 1."""
    from mrsched_gym.baselines.reverse_adaptive import ReverseAdaptiveScheduler
    step = 250.0
    up = [1.0] * 7 + [0.0] * 5                    # up for steps 0-6, i.e. until 1750 s
    node_fc = np.array([[1.0] * 12, up, up])
    jobs = [real_job(3000.0, 4, 1000.0)]
    sim = SimpleNamespace(now=0.0, runnable=[0], jobs=jobs, map_slots=[1, 1, 1],
                          scenario=SimpleNamespace(availability=SimpleNamespace(step_s=step)),
                          forecast_f=node_fc.mean(axis=0), node_forecast=node_fc)
    fits = {}
    for estimate in ("waves", "fluid"):
        pol = ReverseAdaptiveScheduler(slots_estimate=estimate)
        pol.reset(sim)
        pol.prepare(sim, {})
        fits[estimate] = pol.s_fit[0]
    assert fits == {"waves": 2.0, "fluid": 1.0}


# ------------------------------------------------------------------ the view's accessor
def test_node_forecast_follows_the_simulators_own_rule():
    """Without forecast noise, each node's forecast capacity in nodes mode is exactly the
    simulator's node up/down schedule; in capacity mode it is f(t) on every node."""
    from mrsched_gym.env import MRSchedEnv
    from mrsched_gym.evaluate import scenario_of
    base = {"workload__duration_s": 3600.0, "availability__forecast_noise": 0.0}
    env = MRSchedEnv(scenario_of("mrsched/Dynamic-v0"), **base, availability__mode="nodes")
    env.reset(seed=3)
    sim = env.sim
    assert sim.node_forecast.shape == sim.node_up.shape
    assert np.array_equal(sim.node_forecast > 0, sim.node_up)
    assert not sim.node_forecast.flags.writeable
    env = MRSchedEnv(scenario_of("mrsched/Dynamic-v0"), **base, availability__mode="capacity")
    env.reset(seed=3)
    sim = env.sim
    assert sim.node_up is None
    assert np.array_equal(sim.node_forecast, np.broadcast_to(sim.avail_f, sim.node_forecast.shape))


# ------------------------------------------------------------------ RAS's s_req (thesis 4.2.2)
def ras_job(deadline_s, n_maps, maps_done, pending_maps, mu, jid=0):
    """A map-only job with observed map length ``mu``."""
    return real_job(deadline_s, n_maps, mu, jid=jid, maps_done=maps_done,
                    pending_maps=pending_maps)


def test_pending_slots_counts_maps_not_finished_in_whole_waves():
    from mrsched_gym.baselines.ras import pending_slots
    # 62 maps of 400 s, 1000 s left: 2 whole waves -> 31 slots; fluid: 62 x 400 / 1000 = 24.8
    assert pending_slots(62, 1000.0, 400.0) == pytest.approx(31.0)
    assert pending_slots(62, 1000.0, 400.0, "fluid") == pytest.approx(24.8)
    # 300 s left for 400 s maps: no whole wave, the goal cannot be met -> all 62 maps (both)
    assert pending_slots(62, 300.0, 400.0) == 62.0
    assert pending_slots(62, 300.0, 400.0, "fluid") == 62.0
    assert pending_slots(62, -5.0, 400.0) == 62.0 and pending_slots(0, 1000.0, 400.0) == 0.0


def test_ras_last_wave_needs_a_slot_for_every_map_not_finished():
    """A job in its last wave: 4 maps of 100 s, 3 running for 50 s, 1 unstarted, 150 s to its
    goal (one whole wave). The unstarted map must start now to meet the goal, so the job needs
    4 slots (thesis 4.2.2: s_pend = 4 maps not finished / 1 wave). Eq. 1's work basis counts
    each half-run map as half a slot: (3 x 50 + 100) / (1 x 100) = 2.5 slots, so with its 3
    running maps the job looks satisfied (Eq. 6: u >= 0) and a job B below its requirement
    (s_req 10, 7 slots: log 7 / log 10 - 1 = -0.155) takes the free slot first. Under the
    thesis's basis the job's utility is log 3 / log 4 - 1 = -0.208 < -0.155: it gets the slot."""
    from mrsched_gym.baselines.ras import RASScheduler, ras_map_utility
    sim = SimpleNamespace(now=0.0)
    a = ras_job(150.0, 4, 0, 1, 100.0)
    running = [running_task(a, MAP, -50.0) for _ in range(3)]
    thesis, work = RASScheduler(), RASScheduler(s_req_basis="work")
    assert thesis.s_req(sim, a, running) == pytest.approx(4.0)
    assert work.s_req(sim, a, running) == pytest.approx(2.5)
    u_b = ras_map_utility(7, 10, 20)
    assert u_b == pytest.approx(math.log(7) / math.log(10) - 1)
    assert thesis.map_utility(sim, a, running) == pytest.approx(math.log(3) / math.log(4) - 1)
    assert thesis.map_utility(sim, a, running) < u_b          # the job gets the slot
    assert work.map_utility(sim, a, running) > u_b            # the old rule gave it to B
    # Reverse-Adaptive keeps RAS's s_req
    assert make_baseline("reverse-adaptive").s_req(sim, a, running) == pytest.approx(4.0)


def test_ras_maps_goal_leaves_one_reduce_length():
    """A job with reduces: maps' goal = deadline - one reduce task length (profile 50 s).
    10 maps of 100 s, deadline 450 s: 400 s to the maps' goal = 4 waves -> 2.5 slots. Deadline
    420 s: 370 s = 3 waves -> 10 / 3 = 3.33 slots (the job's deadline alone, 420 s, would hold
    4 waves -> 2.5)."""
    from mrsched_gym.baselines.ras import RASScheduler
    j = real_job(450.0, 10, 100.0, n_reduces=1, prior_r=50.0)   # no reduce observed yet
    assert RASScheduler().s_req(SimpleNamespace(now=0.0), j, []) == pytest.approx(2.5)
    j.deadline_s = 420.0
    assert RASScheduler().s_req(SimpleNamespace(now=0.0), j, []) == pytest.approx(10 / 3)


def test_s_req_basis_is_checked_and_named():
    for name in ("ras", "reverse-adaptive"):
        assert make_baseline(name).s_req_basis == "pending"
        assert make_baseline(name, s_req_basis="work").s_req_basis == "work"
        with pytest.raises(ValueError, match="s_req_basis must be one of pending, work"):
            make_baseline(name, s_req_basis="eq1")


def test_ras_hopeless_jobs_first_by_default_last_on_request():
    """A job whose maps' goal holds no whole wave (50 s left, 100 s maps) cannot meet it: by
    default it asks for all its 4 unfinished maps and, holding no slot, has Eq. 6's -inf, so it
    gets the slot before B (1 of its 1 required slot held, 10 maps of 100 s in 1,000 s: u = 0);
    with ``hopeless="last"`` B gets it. Fluid: 50 s < one map length, hopeless too; 150 s left
    is not (though it holds one wave only under waves: 150 // 100 = 1)."""
    from mrsched_gym.baselines.ras import RASScheduler

    a = ras_job(50.0, 4, 0, 4, 100.0, jid=0)
    b = ras_job(1000.0, 10, 0, 9, 100.0, jid=1)
    b.maps_running = 1
    cands = map_candidates(a, b)
    sim = SimpleNamespace(now=0.0, K=2, running={}, decision=schedule_decision(0, cands))
    first, last = RASScheduler(), RASScheduler(hopeless="last")
    assert first.cannot_meet(sim, a, []) and not first.cannot_meet(sim, b, [])
    assert first.decide(sim) == 0 and last.decide(sim) == 1
    assert make_baseline("reverse-adaptive", hopeless="last").hopeless == "last"
    fluid = RASScheduler(slots_estimate="fluid")
    assert fluid.cannot_meet(sim, a, [])
    assert not fluid.cannot_meet(sim, ras_job(150.0, 4, 0, 4, 100.0), [])
    assert not first.cannot_meet(sim, ras_job(math.inf, 4, 0, 4, 100.0), [])
    assert not first.cannot_meet(sim, ras_job(50.0, 4, 0, 0, 100.0), [])   # every map started
    assert RASScheduler(s_req_basis="work").cannot_meet(sim, a, [])
    with pytest.raises(ValueError, match="hopeless must be one of first, last"):
        RASScheduler(hopeless="never")


def test_each_default_reading_is_the_one_its_chapters_numbers_chose():
    """docs/readings.json (tools/compare_readings.py) is the table on the Baselines page: the
    defaults it names are the schedulers' defaults, and under each chosen reading its chapter's
    numbers come out at least as close (Adaptive: Table 5.7's simulated row, summed over jobs;
    RAS and Reverse-Adaptive: ch. 5's mean misses, lower being the thesis's direction)."""
    import json
    from pathlib import Path
    data = json.loads((Path(__file__).resolve().parents[1] / "docs" / "readings.json")
                      .read_text())
    for name, reading in data["defaults"].items():
        assert make_baseline(name).slots_estimate == reading
    rows = data["rows"]

    def total(chapter, scheduler, start):
        sel = [r for r in rows if r["chapter"] == chapter and r["scheduler"] == scheduler
               and r["measure"].startswith(start)]
        assert sel
        return {k: sum(r[k] for r in sel) for k in ("fluid", "waves")}
    gap = total("ch. 3", "adaptive", "Table 5.7 simulated")
    assert gap[data["defaults"]["adaptive"]] <= min(gap.values())
    for name in ("ras", "reverse-adaptive"):
        miss = total("ch. 5", name, "mean deadline misses")
        assert miss[data["defaults"][name]] <= min(miss.values())
