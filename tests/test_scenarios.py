"""The default scenario separates schedulers, and the shipped baselines behave as documented."""

import numpy as np

from mrsched_gym.baselines import make_baseline
from mrsched_gym.evaluate import run_episode


def _mean_headline(name, seeds, env_id="mrsched/Hadoop-v0"):
    return float(np.mean([run_episode(env_id, make_baseline(name), s)["metrics"]
                          ["deadline_penalty_h"] for s in seeds]))


def test_default_scenario_separates_schedulers_by_more_than_20pct():
    """Schedulers differ by > 20% on the headline metric of Hadoop-v0."""
    seeds = range(5)
    fifo, edf = _mean_headline("fifo", seeds), _mean_headline("edf", seeds)
    assert edf < 0.8 * fifo, (edf, fifo)


def test_baseline_runs_are_reproducible():
    a = run_episode("mrsched/Hadoop-v0", make_baseline("random"), 3)
    b = run_episode("mrsched/Hadoop-v0", make_baseline("random"), 3)
    assert a["return"] == b["return"] and a["steps"] == b["steps"]


def test_orchestrator_lowers_jct_under_memory_contention():
    """MROrchestrator (seed 001): re-dividing memory by need beats static slot shares."""
    kw = {"workload__type_mix": {"sort": 1.0, "twitter": 1.0}, "workload__load": 0.6,
          "workload__duration_s": 3600.0}
    res = {}
    for orch in ("none", "uniform", "regression"):
        ms = [run_episode("mrsched/Dedicated-v0", make_baseline("fifo"), s,
                          {**kw, "cluster__orchestrator": orch})["metrics"] for s in range(3)]
        res[orch] = float(np.mean([m["mean_jct_s"] for m in ms]))
    assert res["regression"] < res["none"], res
    assert res["regression"] <= res["uniform"] * 1.02, res
