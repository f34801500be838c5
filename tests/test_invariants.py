"""Hypothesis property tests: simulator invariants over random legal action sequences."""

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mrsched_gym.config import scenario_from_dict
from mrsched_gym.env import MRSchedEnv
from mrsched_gym.testing import check_invariants, check_task_log

BASE = {
    "cluster": {"racks": 2, "nodes": [
        {"count": 2, "map_slots": 2, "reduce_slots": 1, "mem_gb": 4},
        {"count": 2, "map_slots": 2, "reduce_slots": 1, "kind": "shared", "cpu_speed": 1.5},
        {"count": 1, "map_slots": 2, "reduce_slots": 1, "accelerator": "cell"}]},
    "interference": {"load": "bursty", "mean": 0.3, "amplitude": 0.5, "step_s": 60},
    "workload": {"duration_s": 600, "load": 0.9, "size_mean": 6, "size_std": 3,
                 "type_mix": {"wordcount": 1, "sort": 1, "montecarlo": 1, "kmeans": 1},
                 "high_priority_fraction": 0.3, "deadline_factor": [1.0, 3.0]},
    "decisions": {"max_candidates": 4},
    "time_limit_s": 2400,
}

VARIANTS = {
    "slots": {},
    "containers": {"cluster": {"resource_mode": "containers"}},
    "preemption": {"decisions": {"preemption": {"enabled": True, "max_suspended_per_node": 1}}},
    "admission": {"decisions": {"admission": True}},
    "nodes_onoff": {"availability": {"generator": "onoff", "mode": "nodes", "step_s": 60,
                                     "mean_on_s": 600, "mean_off_s": 120}},
    "capacity_bursty": {"availability": {"generator": "bursty", "mode": "capacity",
                                         "level": 3, "step_s": 60}},
    "memory_fail": {"cluster": {"memory_overcommit": "fail", "resource_mode": "slots"}},
    "orchestrator": {"cluster": {"orchestrator": "regression", "orchestrator_epoch_s": 30}},
    "speculation": {"decisions": {"speculation": {"enabled": True, "min_runtime_s": 10}}},
    "speculation_memory_fail": {"cluster": {"memory_overcommit": "fail"},
                                "decisions": {"speculation": {"enabled": True,
                                                              "min_runtime_s": 10}}},
    "everything": {"cluster": {"orchestrator": "uniform"},
                   "availability": {"generator": "onoff", "mode": "nodes", "step_s": 60,
                                    "mean_on_s": 900, "mean_off_s": 60},
                   "decisions": {"admission": True, "preemption": {"enabled": True},
                                 "speculation": {"enabled": True, "min_runtime_s": 10}}},
}


def _merge(a, b):
    out = dict(a)
    for k, v in b.items():
        out[k] = _merge(a[k], v) if isinstance(v, dict) and isinstance(a.get(k), dict) else v
    return out


SCENARIOS = {k: scenario_from_dict(_merge(BASE, v)) for k, v in VARIANTS.items()}


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(variant=st.sampled_from(sorted(SCENARIOS)), seed=st.integers(0, 2**31 - 1),
       choices=st.lists(st.integers(0, 10**6), min_size=1, max_size=64))
def test_invariants_hold_under_random_legal_actions(variant, seed, choices):
    env = MRSchedEnv(SCENARIOS[variant])
    env.reset(seed=seed)
    sim = env.sim
    last_t = sim.now
    check_invariants(sim)
    for k in range(3000):
        legal = np.flatnonzero(env.action_masks())
        a = int(legal[choices[k % len(choices)] % len(legal)])
        _, r, term, trunc, info = env.step(a)
        assert np.isfinite(r)
        assert sim.now >= last_t, "time went backwards"
        last_t = sim.now
        check_invariants(sim)
        if term or trunc:
            break
    check_task_log(sim)
    if term:
        # every job finished exactly once or was rejected
        assert sim.n_closed == sim.n_jobs
        assert all(j.state in (3, 4) for j in sim.jobs)
