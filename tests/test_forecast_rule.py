"""The forecast-aware reference rule ``srpt-forecast`` (baselines/forecast_rule.py): which
candidates it holds, that it is deterministic and legal, that it is ``srpt-slowstart`` where no
node is forecast down, and a small world where reading the forecast must help."""

import math

import gymnasium as gym
import pytest

import mrsched_gym  # noqa: F401  (registers the ids)
from mrsched_gym.baselines import make_baseline
from mrsched_gym.baselines.common import task_len
from mrsched_gym.baselines.forecast_rule import check_margin, cut_off, node_up_for
from mrsched_gym.evaluate import run_episode
from mrsched_gym.sim.decision import SCHEDULE

#: Two nodes with one map slot each; from 600 s one of them (which one: the episode's leave
#: order, drawn at reset) is down for 90 minutes. Two map-only jobs at time 0: one 500 s map
#: and one 700 s map. Where the leaving node takes the 700 s map, srpt-slowstart loses it at
#: 600 s and runs it again from 600 s; srpt-forecast holds it there (700 s > the 600 s the node
#: is forecast up) and the other node runs it from 500 s, so the job ends 100 s sooner.
DIP = "time_s,value\n0,1\n600,0\n6000,0\n6300,1\n20000,1\n"


def dip_world(trace: str) -> dict:
    return {
        "cluster.nodes": [{"count": 2, "map_slots": 1, "reduce_slots": 1}],
        "cluster.racks": 1, "cluster.task_demand_cv": 0.0,
        "availability.generator": "trace", "availability.mode": "nodes",
        "availability.trace": trace, "availability.min_fraction": 0.5,
        "availability.step_s": 300, "availability.forecast_steps": 12,
        "workload.kind": "jobs",
        "workload.jobs": [
            {"type": "grep", "n_maps": 1, "n_reduces": 0, "map_work_s": 500, "work_cv": 0},
            {"type": "grep", "n_maps": 1, "n_reduces": 0, "map_work_s": 700, "work_cv": 0}],
        "time_limit_s": 20000,
    }


def test_cut_off_holds_exactly_the_tasks_longer_than_the_node_is_forecast_up():
    """Dynamic-v0: at every schedule decision, ``node_up_for`` is the start of the first step
    within the observed window at which the node's forecast is 0 (else inf), and the candidates
    cut off are those whose mean task length exceeds it; both cases occur."""
    env = gym.make("mrsched/Dynamic-v0")
    env.reset(seed=100)
    sim = env.unwrapped.sim
    av = sim.scenario.availability
    seen = {"cut": 0, "up through the window": 0, "kept before a dip": 0}
    for _ in range(6000):
        dec = sim.decision
        if dec.kind == SCHEDULE and dec.candidates:
            step = int(sim.now // av.step_s) + 1
            row = sim.node_forecast[dec.node][step:step + av.forecast_steps]
            down = [k for k, v in enumerate(row) if v == 0]
            expect = (step + down[0]) * av.step_s - sim.now if down else math.inf
            assert node_up_for(sim, dec.node) == pytest.approx(expect)
            cut = cut_off(sim, 1.0)
            assert cut == [i for i, c in enumerate(dec.candidates)
                           if task_len(c.job, c.phase) > expect]
            assert cut_off(sim, 0.0) == []
            seen["cut"] += bool(cut)
            seen["up through the window"] += not down
            seen["kept before a dip"] += bool(down) and len(cut) < len(dec.candidates)
        else:
            assert cut_off(sim, 1.0) == []
        _, _, term, trunc, _ = env.step(0)
        if term or trunc:
            break
    assert min(seen.values()) >= 3, seen     # cuts are rare here: tasks are short next to a step


def test_the_rule_acts_within_the_mask_and_repeats_itself():
    """Every action it takes on Dynamic-v0 and GreenTrace-v0 is a candidate or skip (which
    ``step()`` always accepts: the rule leaves a slot idle on purpose), the env counts no invalid
    action, and the same seed gives the same episode."""
    for env_id in ("mrsched/Dynamic-v0", "mrsched/GreenTrace-v0"):
        env = gym.make(env_id)
        env.reset(seed=101)
        base, rule = env.unwrapped, make_baseline("srpt-forecast")
        skips = 0
        while True:
            a = rule.decide(base.sim)
            assert a == base.sim.K or 0 <= a < len(base.sim.decision.candidates), a
            skips += a == base.sim.K
            _, term, trunc, _ = base.advance(a)
            if term or trunc:
                break
        assert skips > 0, env_id
        first = run_episode(env_id, "srpt-forecast", 101)
        again = run_episode(env_id, "srpt-forecast", 101)
        assert first["metrics"] == again["metrics"] and first["steps"] == again["steps"]
        assert first["metrics"]["invalid_actions"] == 0


def test_without_a_node_forecast_down_it_is_srpt_slowstart():
    """``margin: 0`` holds nothing more than slow start; in ``capacity`` mode no node is ever
    forecast down: both give srpt-slowstart's episode decision for decision."""
    for env_id, kwargs, params in (("mrsched/Dynamic-v0", None, {"margin": 0.0}),
                                   ("mrsched/Dynamic-v0", {"availability.mode": "capacity"}, {})):
        a = run_episode(env_id, make_baseline("srpt-forecast", **params), 102, kwargs)
        b = run_episode(env_id, "srpt-slowstart", 102, kwargs)
        assert a["metrics"] == b["metrics"] and a["steps"] == b["steps"]
    # ... and where nodes do leave, it is not (the test above would pass for any rule otherwise)
    a = run_episode("mrsched/Dynamic-v0", "srpt-forecast", 102)
    b = run_episode("mrsched/Dynamic-v0", "srpt-slowstart", 102)
    assert a["metrics"] != b["metrics"]


def test_reading_the_forecast_helps_where_a_node_leaves_mid_task(tmp_path):
    """The dip world (:data:`DIP`): srpt-forecast never loses a task and is never worse; on the
    seeds where the leaving node would take the long map it is better by 100 s of that job."""
    trace = tmp_path / "dip.csv"
    trace.write_text(DIP)
    world = dip_world(str(trace))
    better = 0
    for seed in range(8):
        rule = run_episode("dynamic", "srpt-forecast", seed, world)["metrics"]
        ref = run_episode("dynamic", "srpt-slowstart", seed, world)["metrics"]
        assert rule["lost_tasks"] == 0 and rule["jobs_finished"] == 2
        gain_h = ref["time_in_system_h"] - rule["time_in_system_h"]
        if ref["lost_tasks"]:
            assert gain_h == pytest.approx(100 / 3600 / 2, abs=1e-6), seed   # mean of 2 jobs
            better += 1
        else:
            assert gain_h == pytest.approx(0.0, abs=1e-9), seed
    assert 0 < better < 8


def test_bad_margins_are_refused_with_the_field_named():
    for bad in (-0.5, math.nan, math.inf, True, "1"):
        with pytest.raises(ValueError, match="margin must be a finite number >= 0"):
            check_margin(bad)
    with pytest.raises(ValueError, match="margin"):
        make_baseline("srpt-forecast", margin=-1.0)
    with pytest.raises(ValueError, match="fraction"):
        make_baseline("srpt-forecast", fraction=0.0)
    assert check_margin(2) == 2.0
