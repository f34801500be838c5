"""``memory_overcommit: fail`` ends every episode. A launch that fails for memory (the newest
task on an over-committed node is killed, ``sim/tasks.py``) leaves its node idle until the next
event (``sim/schedule.py``, ``sim/speculation.py``): offered again at once, a work-conserving
policy (every mask-following agent, every baseline) launched the same task there and saw it fail
again, at the same instant, for ever."""

import gymnasium as gym
import numpy as np
import pytest

import mrsched_gym  # noqa: F401

FAIL = {"cluster__memory_overcommit": "fail", "workload__duration_s": 900.0}
CASES = [
    ("mrsched/Dedicated-v0", {}),
    ("mrsched/Hadoop-v0", {}),
    ("mrsched/Hadoop-v0", {"cluster__resource_mode": "containers"}),
    ("mrsched/Preemption-v0", {}),
    ("mrsched/Admission-v1", {}),
    ("mrsched/Dynamic-v0", {}),
    ("mrsched/Hadoop-v0", {"decisions__speculation__enabled": True}),
]
CAP = 200_000


@pytest.mark.parametrize("env_id, extra", CASES)
@pytest.mark.parametrize("chooser", ["first", "random"])
def test_a_failed_launch_is_not_offered_again_at_the_same_instant_and_the_episode_ends(
        env_id, extra, chooser):
    env = gym.make(env_id, **FAIL, **extra)
    u = env.unwrapped
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    failed_at: set[tuple[float, int]] = set()     # (time, node) of each failed launch
    seen = n_failed = 0
    for _ in range(CAP):
        sim = u.sim
        d = sim.decision
        assert (sim.now, d.node) not in failed_at, (
            f"node {d.node} offered again at t={sim.now} after a launch there failed")
        legal = np.flatnonzero(u.action_masks())
        a = int(legal[0]) if chooser == "first" else int(rng.choice(legal))
        _, _, term, trunc, _ = env.step(a)
        for _, end, _, node, _, outcome in sim.task_log[seen:]:
            if outcome == "failed":
                failed_at.add((end, node))
                n_failed += 1
        seen = len(sim.task_log)
        if term or trunc:
            break
    else:
        pytest.fail(f"no end after {CAP} decisions (t={u.sim.now})")
    assert term and not trunc                 # every job done before the time limit
    assert n_failed > 0                       # the world does over-commit memory
