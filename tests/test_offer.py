"""The narrowed offer (``Simulator.narrow_offer``, ``sim/cluster.py``'s ``reoffer``): offering
only the idle nodes with a free slot of a phase that some runnable job has work in changes no
decision. Each episode is played twice in lockstep, narrowed and not, by a policy that often
skips (a skipped node waits for the next event, the case where the offer is rebuilt most); the
decisions, observations, masks and rewards must be the same at every step. Runs in both builds
(``.ci/run``'s compiled stage runs it too)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import mrsched_gym  # noqa: F401  (registers the ids)

CASES = [
    ("mrsched/Hadoop-v0", {}),
    ("mrsched/Dynamic-v0", {}),                       # nodes leave and join
    ("mrsched/HadoopTrace-v0", {}),
    ("mrsched/Dedicated-v0", {}),
    ("mrsched/ThesisScale-v0", {"workload__duration_s": 1800}),
    ("mrsched/Preemption-v0", {}),                    # not narrowed: the check still holds
]


def _plain(x) -> object:
    """A job or task by its id (the two simulators hold different objects)."""
    if hasattr(x, "tid"):
        return ("task", x.tid)
    if hasattr(x, "jid"):
        return ("job", x.jid)
    return x


def _decision(sim) -> tuple:
    d = sim.decision
    return (d.kind, d.time_s, d.node, _plain(d.job),
            tuple(tuple(_plain(x) for x in c) for c in d.candidates))


def _check_order(sim) -> None:
    """The ordered lists hold the sets' nodes in increasing order, and the sets are the up nodes
    with a free slot of that phase."""
    if not sim.slots_mode:
        return
    assert sim.map_order == sorted(sim.map_idle)
    assert sim.red_order == sorted(sim.red_idle)
    n = sim.n_nodes
    assert sim.map_idle == {i for i in range(n) if sim.up[i] and sim.used_map[i] < sim.map_slots[i]}
    assert sim.red_idle == {i for i in range(n) if sim.up[i] and sim.used_red[i] < sim.red_slots[i]}


@pytest.mark.parametrize(("env_id", "kwargs"), CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("seed", [3, 11])
def test_the_narrowed_offer_poses_the_same_decisions(env_id, kwargs, seed):
    narrow = gym.make(env_id, **kwargs).unwrapped
    wide = gym.make(env_id, **kwargs).unwrapped
    wide.sim.narrow_offer = False
    obs_n, _ = narrow.reset(seed=seed)
    obs_w, _ = wide.reset(seed=seed)
    rng = np.random.default_rng(seed)
    narrowed_ever = narrow.sim.narrow_offer
    for step in range(2500):
        assert _decision(narrow.sim) == _decision(wide.sim), f"step {step}"
        for key in obs_n:
            assert np.array_equal(obs_n[key], obs_w[key]), f"step {step}: obs[{key!r}]"
        mask = narrow.action_masks()
        assert np.array_equal(mask, wide.action_masks())
        _check_order(narrow.sim)
        legal = np.flatnonzero(mask)
        skip = narrow.K if mask[narrow.K] else None
        a = int(skip if skip is not None and rng.random() < 0.3 else rng.choice(legal))
        obs_n, r_n, term_n, trunc_n, _ = narrow.step(a)
        obs_w, r_w, term_w, trunc_w, _ = wide.step(a)
        assert (r_n, term_n, trunc_n) == (r_w, term_w, trunc_w), f"step {step}"
        if term_n or trunc_n:
            break
    assert narrowed_ever == (env_id != "mrsched/Preemption-v0")
