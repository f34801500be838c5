"""Deadlines from the time alone on the simulated cluster (``workload.deadline_base: alone``,
:mod:`mrsched_gym.sim.alone`): the base is the lone job's simulated completion, deterministic,
cached, and the analytic base stays the default."""

from __future__ import annotations

import math

import numpy as np
import pytest

from mrsched_gym.config import ConfigError, load_scenario, scenario_from_dict, with_overrides
from mrsched_gym.sim import alone
from mrsched_gym.sim.engine import Simulator


def _run_fifo(sim: Simulator) -> None:
    while not sim.done:
        sim.act(0 if sim.decision.candidates else sim.K)


def _one_job(base: str, scope: str = "job", **job) -> dict:
    spec = {"label": "J", "type": "wordcount", "arrival_s": 100.0, "n_maps": 30,
            "deadline_factor": 2.0, **job}
    return {
        "cluster": {"nodes": [{"count": 2, "map_slots": 2, "reduce_slots": 1},
                              {"count": 2, "kind": "shared", "map_slots": 2,
                               "reduce_slots": 1}]},
        "interference": {"load": "constant", "mean": 0.5, "noise": 0.0},
        "workload": {"kind": "jobs", "jobs": [spec], "deadline_base": base,
                     "deadline_scope": scope},
        "time_limit_s": 20000,
    }


@pytest.mark.parametrize("scope", ["job", "map"])
def test_alone_base_is_the_lone_jobs_simulated_time(scope):
    """A lone job with a constant interactive load: its episode is its run alone, so its
    deadline is arrival + factor x its own simulated completion (map phase end with map
    scope), and alone_s / map_alone_s are those times."""
    sim = Simulator(scenario_from_dict(_one_job("alone", scope)))
    sim.reset(np.random.default_rng(3))
    job = sim.jobs[0]
    deadline = job.deadline_s
    _run_fifo(sim)
    took = job.finish_s - job.arrival_s
    maps = job.map_finish_s - job.arrival_s
    assert job.alone_s == pytest.approx(took, rel=1e-9)
    assert job.map_alone_s == pytest.approx(maps, rel=1e-9)
    assert deadline == pytest.approx(100.0 + 2.0 * (maps if scope == "map" else took), rel=1e-9)


def test_analytic_is_the_default_and_differs():
    """Without the field the deadline is the analytic one; the simulated base here is longer
    (interactive load on the shared nodes, the last wave's stragglers)."""
    analytic = Simulator(scenario_from_dict(_one_job("analytic")))
    analytic.reset(np.random.default_rng(3))
    data = _one_job("analytic")
    del data["workload"]["deadline_base"]
    default = Simulator(scenario_from_dict(data))
    default.reset(np.random.default_rng(3))
    assert default.jobs[0].deadline_s == analytic.jobs[0].deadline_s
    simulated = Simulator(scenario_from_dict(_one_job("alone")))
    simulated.reset(np.random.default_rng(3))
    assert simulated.jobs[0].deadline_s - 100.0 > 1.1 * (analytic.jobs[0].deadline_s - 100.0)


def test_deadline_in_seconds_is_kept():
    sim = Simulator(scenario_from_dict(_one_job("alone", deadline_factor=None,
                                                deadline_s=500.0)))
    sim.reset(np.random.default_rng(0))
    assert sim.jobs[0].deadline_s == 600.0
    assert math.isfinite(sim.jobs[0].alone_s) and sim.jobs[0].alone_s > 0


def test_synthetic_deterministic_and_cached():
    """The same seed gives the same deadlines; a second reset simulates nothing new (cached per
    job draw); the cached value is what a fresh simulation gives."""
    sc = with_overrides(load_scenario("shared"), {"workload.deadline_base": "alone",
                                                  "workload.duration_s": 1200})
    a = Simulator(sc)
    a.reset(np.random.default_rng(7))
    n_cached = len(alone._cache)
    b = Simulator(sc)
    b.reset(np.random.default_rng(7))
    assert len(alone._cache) == n_cached
    assert [j.deadline_s for j in a.jobs] == [j.deadline_s for j in b.jobs]
    draw = b.world.jobs[0]
    fresh = alone.simulate_alone(Simulator(alone.alone_scenario(sc)), draw)
    assert fresh == (b.jobs[0].alone_s, b.jobs[0].map_alone_s)
    # every deadline is arrival + factor x the simulated base, the factor as drawn
    for d, j in zip(b.world.jobs, b.jobs, strict=True):
        assert j.deadline_s == pytest.approx(d.arrival_s + d.deadline_factor * j.alone_s)


def test_bad_value_names_the_field():
    with pytest.raises(ConfigError, match="deadline_base"):
        scenario_from_dict(_one_job("simulated"))
