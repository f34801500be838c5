"""Trace workloads beyond the bundled regimes: arrival-rate scaling, thinning and mixes
(``workload.trace_rate_scale``, ``workload.trace_keep``) and their ranges in a pool of worlds."""

import numpy as np
import pytest

from mrsched_gym.agents.training.worlds import WorldPool, WorldsConfig, world_overrides
from mrsched_gym.config import ConfigError, load_scenario, with_overrides
from mrsched_gym.env import MRSchedEnv
from mrsched_gym.models.traces import read_job_trace

FIXED = {"workload.trace_random_window": False, "workload.duration_s": 600.0,
         "workload.task_model": "profile", "workload.bytes_scale": 1.0}


def jobs_of(overrides, seed=0):
    env = MRSchedEnv(with_overrides(load_scenario("hadoop_trace"), {**FIXED, **overrides}))
    env.reset(seed=seed)
    return env.sim.jobs


def test_rate_scale_compresses_a_longer_stretch_of_the_trace():
    rows = read_job_trace("swim-fb2009-day0")
    win = rows[rows[:, 0] < 1200.0]
    jobs = jobs_of({"workload.trace_rate_scale": 2.0})
    assert len(jobs) == len(win) > len(rows[rows[:, 0] < 600.0])
    assert [j.arrival_s for j in jobs] == pytest.approx(list(win[:, 0] / 2.0))
    assert max(j.arrival_s for j in jobs) < 600.0


def test_rate_scale_below_one_thins_the_stream():
    rows = read_job_trace("swim-fb2009-day0")
    jobs = jobs_of({"workload.trace_rate_scale": 0.5})
    assert len(jobs) == int((rows[:, 0] < 300.0).sum())
    assert [j.arrival_s for j in jobs] == pytest.approx(list(rows[rows[:, 0] < 300.0, 0] * 2.0))


def test_keep_thins_every_class_and_repeats_for_a_seed():
    full = jobs_of({})
    half = jobs_of({"workload.trace_keep": {"map_only": 0.5, "aggregate": 0.5,
                                            "transform": 0.5}})
    again = jobs_of({"workload.trace_keep": {"map_only": 0.5, "aggregate": 0.5,
                                             "transform": 0.5}})
    assert 0.25 * len(full) < len(half) < 0.75 * len(full)
    kept = {j.arrival_s for j in half}
    assert kept <= {j.arrival_s for j in full}
    assert [j.arrival_s for j in again] == [j.arrival_s for j in half]


def test_keep_skews_the_mix():
    full = jobs_of({})
    reduce_heavy = jobs_of({"workload.trace_keep": {"map_only": 0.0, "aggregate": 1.0,
                                                    "transform": 1.0}})
    map_only_heavy = jobs_of({"workload.trace_keep": {"map_only": 1.0, "aggregate": 0.0,
                                                      "transform": 0.0}})
    n_map_only = sum(j.n_reduces == 0 for j in full)
    assert 0 < n_map_only < len(full)
    assert all(j.n_reduces > 0 for j in reduce_heavy)
    assert len(reduce_heavy) == len(full) - n_map_only
    assert all(j.n_reduces == 0 for j in map_only_heavy)
    assert len(map_only_heavy) == n_map_only


def test_a_window_thinned_to_nothing_keeps_its_first_job():
    jobs = jobs_of({"workload.duration_s": 60.0,
                    "workload.trace_keep": {"map_only": 0.0, "aggregate": 0.0,
                                            "transform": 1e-9}})
    assert len(jobs) == 1


@pytest.mark.parametrize("overrides, match", [
    ({"workload.trace_rate_scale": 0.0}, r"workload\.trace_rate_scale: must be in \(0"),
    ({"workload.trace_rate_scale": 101.0}, r"workload\.trace_rate_scale"),
    ({"workload.trace_keep": {"map_only": 1.0, "aggregate": 1.0}},
     r"workload\.trace_keep: needs exactly the keys map_only, aggregate, transform; "
     r"missing transform$"),
    ({"workload.trace_keep": {"map_only": 1.0, "aggregate": 1.0, "transfrom": 1.0}},
     r"workload\.trace_keep: .*; missing transform; unknown transfrom$"),
    ({"workload.trace_types": {"map_only": "grep", "aggregate": "wordcount"}},
     r"workload\.trace_types: needs exactly the keys .*; missing transform$"),
    ({"workload.trace_keep": {"map_only": 1.5, "aggregate": 1.0, "transform": 1.0}},
     r"workload\.trace_keep\.map_only: must be in \[0"),
    ({"workload.trace_keep": {"map_only": 0.0, "aggregate": 0.0, "transform": 0.0}},
     r"workload\.trace_keep: probabilities must not all be 0"),
])
def test_bad_regime_fields_name_the_field(overrides, match):
    with pytest.raises(ConfigError, match=match):
        with_overrides(load_scenario("hadoop_trace"), overrides)


def test_pool_varies_rate_size_and_mix_of_a_trace_world():
    base = load_scenario("hadoop_trace")
    vary = {"workload.trace_rate_scale": [0.5, 2.0], "workload.bytes_scale": [0.5, 2.0],
            "workload.trace_keep.map_only": [0.2, 1.0],
            "workload.trace_keep.transform": [0.2, 1.0]}
    seen = []
    rng = np.random.default_rng(0)
    for _ in range(20):
        ov = world_overrides(base, vary, rng)
        assert 0.5 <= ov["workload.trace_rate_scale"] <= 2.0
        assert 0.125 <= ov["workload.bytes_scale"] <= 0.5
        keep = ov["workload.trace_keep"]
        assert keep["aggregate"] == 1.0 and 0.2 <= keep["map_only"] <= 1.0
        assert 0.2 <= keep["transform"] <= 1.0
        with_overrides(base, ov)                        # a valid scenario
        seen.append(ov["workload.trace_rate_scale"])
    assert min(seen) < 0.9 and max(seen) > 1.5


def test_pool_plays_a_varied_trace_world():
    cfg = WorldsConfig(ids=["mrsched/HadoopTrace-v0"],
                       overrides={"mrsched/HadoopTrace-v0": {"workload.duration_s": 600.0}},
                       vary_by_id={"mrsched/HadoopTrace-v0": {
                           "workload.trace_rate_scale": [1.5, 2.0],
                           "workload.trace_keep.map_only": [0.1, 0.5]}})
    pool = WorldPool(cfg)
    _, info = pool.reset(seed=3)
    assert info["world"] == "mrsched/HadoopTrace-v0"
    assert info["overrides"]["workload.trace_rate_scale"] >= 1.5
    wl = pool.env.scenario.workload
    assert wl.trace_rate_scale >= 1.5 and wl.trace_keep["map_only"] <= 0.5


def test_unknown_vary_key_lists_the_trace_keys():
    with pytest.raises(ValueError, match="workload.trace_keep.map_only"):
        WorldsConfig(ids=["mrsched/HadoopTrace-v0"],
                     vary={"workload.trace_keep.shuffle": [0.5, 1.0]}).validate()



def test_a_random_window_in_a_quiet_stretch_starts_at_the_next_job(tmp_path):
    """A trace with long gaps: most drawn windows would hold no job; each starts at the next
    job instead of failing (a fixed empty window still fails, naming the field)."""
    from mrsched_gym.workloads.trace import trace_window
    jobs = tmp_path / "gaps.tsv"
    submits = [0, 10, 5000, 10000, 20000]
    jobs.write_text("".join(f"job{i}\t{s}\t30\t200000000\t0\t1000\n"
                            for i, s in enumerate(submits)))
    sc = with_overrides(load_scenario("hadoop_trace"), {
        "workload.trace": str(jobs), "workload.duration_s": 600.0})
    moved = set()
    for seed in range(10):
        start, win = trace_window(sc.workload, np.random.default_rng(seed))
        assert len(win) == 1 and start <= win[0, 0] < start + 600.0
        if start == win[0, 0]:
            moved.add(start)
    assert len(moved) > 1
    with pytest.raises(ConfigError, match="workload.trace_offset_s: no job"):
        trace_window(with_overrides(sc, {"workload.trace_random_window": False,
                                         "workload.trace_offset_s": 100.0}).workload)
