"""The incremental observation encoder (cached node rows and job-phase rows) builds exactly the
bytes a fresh encoder builds, at every step of whole episodes of every decision kind."""

import numpy as np
import pytest

from mrsched_gym.env.encoding import ObservationEncoder
from mrsched_gym.errors import EpisodeStateError
from mrsched_gym.evaluate import make_env

CASES = [
    ("mrsched/Hadoop-v0", None),
    ("mrsched/Hadoop-v0", {"cluster.resource_mode": "containers"}),
    ("mrsched/Preemption-v0", None),
    ("mrsched/Admission-v1", None),
    ("mrsched/Dynamic-v0", None),
    ("mrsched/HadoopOrchestrated-v0", None),
    ("mrsched/Shared-v1", None),
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


def _fresh_build(sim) -> dict:
    """A fresh encoder's observation, leaving the simulator's stale-node marks as they were
    (so that the env's own encoder is not helped by the fresh one's full rebuild)."""
    marked = set(sim.dirty)
    fresh = ObservationEncoder(sim)
    fresh.reset()
    want = fresh.observe()
    sim.dirty.clear()
    sim.dirty.update(marked)
    return want


@pytest.mark.parametrize("env_id", ["mrsched/Hadoop-v0", "mrsched/Dynamic-v0",
                                    "mrsched/Preemption-v0", "mrsched/Stragglers-v0"])
def test_advance_is_step_without_the_observation(env_id):
    """``advance`` (the harness's path for baselines) gives the rewards, infos and metrics of
    ``step``, and a ``step`` after several ``advance`` calls observes what a fresh build does."""
    stepped, advanced = make_env(env_id), make_env(env_id)
    rng = np.random.default_rng(5)
    stepped.reset(seed=2)
    advanced.reset(seed=2)
    steps = observed = 0
    while True:
        legal = np.flatnonzero(stepped.unwrapped.action_masks())
        np.testing.assert_array_equal(legal, np.flatnonzero(advanced.unwrapped.action_masks()))
        a = int(rng.choice(legal))
        _, r, term, trunc, info = stepped.step(a)
        if steps % 7 == 6:                        # observe now and then, after 6 advances
            obs, r2, term2, trunc2, info2 = advanced.step(a)
            want = _fresh_build(advanced.unwrapped.sim)
            for key in want:
                assert obs[key].tobytes() == want[key].tobytes(), (env_id, steps, key)
            observed += 1
        else:
            r2, term2, trunc2, info2 = advanced.unwrapped.advance(a)
        assert (r2, term2, trunc2) == (r, term, trunc)
        assert info2.keys() == info.keys()
        for k in info:
            if k not in ("action_mask", "episode_log"):
                assert info2[k] == info[k], (steps, k)
        steps += 1
        if term or trunc:
            break
    assert observed > 3
    assert info2["metrics"] == info["metrics"]
    with pytest.raises(EpisodeStateError, match=r"advance\(\) called after the episode ended"):
        advanced.unwrapped.advance(0)
