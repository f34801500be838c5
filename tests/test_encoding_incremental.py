"""The incremental observation encoder (cached node rows and job-phase rows) builds exactly the
bytes a fresh encoder builds, at every step of whole episodes of every decision kind."""

import numpy as np
import pytest

from mrsched_gym.encoding import ObservationEncoder
from mrsched_gym.evaluate import make_env

CASES = [
    ("mrsched/Hadoop-v0", None),
    ("mrsched/Hadoop-v0", {"cluster.resource_mode": "containers"}),
    ("mrsched/Preemption-v0", None),
    ("mrsched/Admission-v0", None),
    ("mrsched/Dynamic-v0", None),
    ("mrsched/HadoopOrchestrated-v0", None),
    ("mrsched/Shared-v0", None),
    ("mrsched/Heterogeneous-v0", None),
    ("mrsched/HadoopTrace-v0", None),
    ("mrsched/GreenTrace-v0", None),
    ("mrsched/Stragglers-v0", None),
    ("mrsched/Stragglers-v0", {"cluster.resource_mode": "containers"}),
    ("mrsched/ThesisScale-v0", {"workload.duration_s": 3600, "time_limit_s": 7200}),
]


@pytest.mark.parametrize("env_id,overrides", CASES)
def test_incremental_observations_equal_a_fresh_build(env_id, overrides):
    env = make_env(env_id, overrides)
    sim = env.unwrapped.sim
    rng = np.random.default_rng(3)
    for seed in (0, 1):
        obs, _ = env.reset(seed=seed)
        steps = 0
        while True:
            fresh = ObservationEncoder(sim)
            fresh.reset()                         # every node stale: rebuilt from scratch
            want = fresh.observe()
            for key in want:
                assert obs[key].dtype == want[key].dtype
                assert obs[key].tobytes() == want[key].tobytes(), (env_id, seed, steps, key)
            legal = np.flatnonzero(env.unwrapped.action_masks())
            obs, _, term, trunc, _ = env.step(int(rng.choice(legal)))
            steps += 1
            if term or trunc:
                break
        assert steps > 10
    env.close()
