"""Every number of a scenario is at most ``MAX_MAGNITUDE`` (1e12) in magnitude, whatever its
section; at that size the simulator's products and sums stay finite. Near the float maximum
(1e305 and up) a job weight, a task's work or a response time overflowed to ``inf``, and the
rewards (inf - inf) and observations (inf / inf) to ``nan``."""

import math

import gymnasium as gym
import numpy as np
import pytest

import mrsched_gym  # noqa: F401
from mrsched_gym.config import ConfigError
from mrsched_gym.config.fields import MAX_MAGNITUDE


@pytest.mark.parametrize("env_id, override, field", [
    ("mrsched/Heterogeneous-v0", {"workload__weight_range": [1.0, 1.7e308]},
     r"workload\.weight_range\[1\]"),
    ("mrsched/HadoopTrace-v0", {"interference__response_alone_ms": 1e13},
     r"interference\.response_alone_ms"),
    ("mrsched/Stragglers-v0", {"workload__kind": "jobs", "workload__jobs": [
        {"type": "simulator", "map_work_s": 1e300}]}, r"workload\.jobs\[0\]\.map_work_s"),
    ("mrsched/Hadoop-v0", {"reward__weights": {"deadline": -1e200}},
     r"reward\.weights\.deadline"),
    ("mrsched/Hadoop-v0", {"workload__deadline_factor": [1.0, 2e12]},
     r"workload\.deadline_factor\[1\]"),
])
def test_a_number_beyond_the_magnitude_cap_is_refused_naming_its_field(env_id, override, field):
    with pytest.raises(ConfigError, match=rf"{field}: must be at most 1e\+12 in magnitude"):
        gym.make(env_id, **override)


@pytest.mark.parametrize("env_id, override", [
    ("mrsched/Heterogeneous-v0", {"time_limit_s": 7200.0, "workload__duration_s": 1800.0,
                                  "workload__weight_range": [1e-12, MAX_MAGNITUDE]}),
    ("mrsched/Stragglers-v0", {"time_limit_s": 600.0, "workload__kind": "jobs",
                               "workload__jobs": [{"type": "simulator",
                                                   "map_work_s": MAX_MAGNITUDE}]}),
    ("mrsched/HadoopTrace-v0", {"time_limit_s": 7200.0, "workload__duration_s": 900.0,
                                "interference__response_alone_ms": MAX_MAGNITUDE}),
])
def test_at_the_cap_rewards_observations_and_metrics_stay_finite(env_id, override):
    env = gym.make(env_id, **override)
    obs, _ = env.reset(seed=1)
    rng = np.random.default_rng(0)
    done = False
    while not done:
        obs, r, te, tr, info = env.step(int(rng.choice(np.flatnonzero(
            env.unwrapped.action_masks()))))
        assert math.isfinite(r)
        assert all(np.isfinite(v).all() for v in obs.values())
        done = te or tr
    assert not any(isinstance(v, float) and math.isinf(v) for v in info["metrics"].values())
