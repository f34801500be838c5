"""Mechanisms the thesis ch. 5 simulation needs (seed 004, 5.3.3 and 5.3.5.1, Table 5.6).

* ``availability.generator: transactional``: a transactional load trace takes capacity,
  f(t) = 1 - (1 - f_min) * load / peak load, over a repeated one-day window.
* ``workload.map_only``: jobs of a single phase (the thesis's simulator runs one phase).
* ``Scenario.stats_window_s``: job statistics over the jobs submitted or completed in a window
  (7 days simulated, the middle 5 studied), while the reward still covers the whole episode.
"""

import dataclasses
import math

import numpy as np
import pytest

from mrsched_gym.config import AvailabilityConfig, ConfigError, load_scenario, with_overrides
from mrsched_gym.env.metrics import episode_metrics, in_stats_window
from mrsched_gym.evaluate import make_env, make_policy, run_episode
from mrsched_gym.models.availability import availability_fraction
from mrsched_gym.models.traces import read_series, sample_steps

NASA_DAY = {"availability.generator": "transactional", "availability.trace": "nasa-http-1995",
            "availability.trace_offset_s": 421200, "availability.period_s": 86400,
            "availability.step_s": 300, "availability.min_fraction": 0.5}


def transactional(load: np.ndarray, lo: float, period_steps: int, n_steps: int) -> np.ndarray:
    cfg = AvailabilityConfig(generator="transactional", trace="nasa-http-1995", min_fraction=lo,
                             step_s=300.0, period_s=300.0 * period_steps)
    f, up = availability_fraction(cfg, 300.0 * (n_steps - 1), np.random.default_rng(0), 4,
                                  trace=load)
    assert up is None
    return f


def test_transactional_peak_leaves_min_fraction_and_idle_leaves_everything():
    load = np.array([0.0, 1.0, 2.0, 4.0])
    f = transactional(load, 0.5, 4, 4)
    np.testing.assert_allclose(f, [1.0, 0.875, 0.75, 0.5])


def test_transactional_window_repeats_and_ignores_the_trace_beyond_it():
    load = np.array([1.0, 3.0, 100.0, 100.0])      # rows past the 2-step window are not used
    f = transactional(load, 0.4, 2, 7)
    np.testing.assert_allclose(f, [0.8, 0.4, 0.8, 0.4, 0.8, 0.4, 0.8])


def test_transactional_nasa_day_peaks_at_hour_18_in_the_thesis_reading():
    sc = with_overrides(load_scenario("thesis_scale"), NASA_DAY)
    times, values = read_series("nasa-http-1995")
    load = sample_steps(times, values, 300.0, 2 * 288 + 1, 421200.0)
    f, _ = availability_fraction(sc.availability, 2 * 86400.0, np.random.default_rng(0), 100,
                                 trace=load)
    day = f[:288]
    assert day.min() == pytest.approx(0.5)
    assert 14 <= int(np.argmin(day)) * 300 / 3600 <= 22          # the peak hour (thesis: ~18)
    np.testing.assert_array_equal(f[288:576], day)                # the day repeats


def test_transactional_settings_are_checked():
    with pytest.raises(ConfigError, match="availability.trace: required"):
        with_overrides(load_scenario("thesis_scale"), {"availability.generator": "transactional"})
    with pytest.raises(ConfigError, match="trace_invert"):
        with_overrides(load_scenario("thesis_scale"), {**NASA_DAY,
                                                       "availability.trace_invert": True})


def small_week(**extra) -> dict:
    """Overrides making thesis_scale a 2-day, 10-node, map-only version of itself (fast)."""
    return {"cluster.nodes": [{"count": 10, "cpu_cores": 8, "mem_gb": 16, "map_slots": 1,
                               "reduce_slots": 0}],
            "workload.duration_s": 172800, "workload.map_only": True, "workload.size_mean": 8,
            "workload.size_std": 2, "workload.load": 0.5, "time_limit_s": 200000,
            "workload.type_mix": {"wordcount": 1, "sort": 1, "grep": 1}, **extra}


def test_map_only_jobs_have_no_reduces_even_of_reducing_types():
    env = make_env("thesis_scale", small_week())
    env.reset(seed=1)
    jobs = env.unwrapped.sim.jobs
    assert jobs and all(j.n_reduces == 0 for j in jobs)
    assert {j.profile.name for j in jobs} == {"wordcount", "sort", "grep"}
    assert all(p.reduces_per_map > 0 for p in {j.profile for j in jobs})


def test_map_only_puts_the_load_on_the_map_phase():
    """Without reduces the map phase carries the load: at least as many jobs arrive as when
    the reduce phase (one slot per node here) could be the busier one."""
    from mrsched_gym.workloads.synthetic import arrival_rate
    base = load_scenario("thesis_scale")
    maps_only = with_overrides(base, small_week())
    with_reduces = with_overrides(base, small_week(**{
        "workload.map_only": False,
        "cluster.nodes": [{"count": 10, "map_slots": 1, "reduce_slots": 1}]}))
    assert arrival_rate(maps_only.workload, maps_only.cluster) >= arrival_rate(
        with_reduces.workload, with_reduces.cluster)


def test_stats_window_counts_jobs_submitted_or_completed_inside_it():
    res = run_episode("thesis_scale", make_policy("fifo"), 3,
                      env_kwargs=small_week(stats_window_s=[43200, 129600]), keep_log=True)
    log = res["log"]
    done = np.where(np.isnan(log.finish_s), log.est_finish_s, log.finish_s)
    inside = ((log.arrival_s >= 43200) & (log.arrival_s < 129600)) | (
        (done >= 43200) & (done < 129600))
    np.testing.assert_array_equal(in_stats_window(log), inside)
    assert 0 < inside.sum() < len(inside)                     # the window leaves jobs out
    m = res["metrics"]
    assert m["n_jobs"] == inside.sum()
    assert m["mean_jct_s"] == pytest.approx((done - log.arrival_s)[inside].mean())
    # the reward still covers the whole episode: the return is minus the objective
    assert res["return"] == pytest.approx(-m["objective"], rel=1e-9, abs=1e-9)
    whole = episode_metrics(dataclasses.replace(log, stats_window_s=None),
                            weights={"deadline": 1.0})
    assert whole["n_jobs"] == len(log.arrival_s)
    assert whole["deadline_penalty_h"] == m["deadline_penalty_h"]


@pytest.mark.parametrize("window, needle", [
    ([5.0, 5.0], "start < end"), ([-1.0, 10.0], "0 <= start"),
    ([0.0, 1e9], "time_limit_s"), ([0.0, math.inf], "finite")])
def test_bad_stats_windows_are_refused(window, needle):
    with pytest.raises(ConfigError, match="stats_window_s") as e:
        with_overrides(load_scenario("thesis_scale"), {"stats_window_s": window})
    assert needle in str(e.value)
