"""A killed task's clean-up (Pastorelli et al.'s kill primitive, ``kill_cleanup_s``) holds its
slot until it is over or its node leaves, whichever comes first: never shorter, never longer,
whatever nodes leave and come back in between."""

import numpy as np
import pytest

from mrsched_gym.config import load_scenario, scenario_from_dict, to_dict
from mrsched_gym.env import MRSchedEnv
from mrsched_gym.sim.engine import KILL, PREEMPT

CLEANUP_S = 200.0


def churning_world(speculation: bool) -> MRSchedEnv:
    """The preemption scenario with long clean-ups and nodes that leave every few minutes."""
    data = to_dict(load_scenario("preemption"))
    data["decisions"]["preemption"]["kill_cleanup_s"] = CLEANUP_S
    data["decisions"]["speculation"]["enabled"] = speculation
    data["availability"] = {"generator": "onoff", "mode": "nodes", "step_s": 20.0,
                            "mean_on_s": 300.0, "mean_off_s": 40.0, "min_fraction": 0.1}
    data["workload"]["duration_s"] = 1800.0
    return MRSchedEnv(scenario_from_dict(data))


def departures(sim) -> list[list[float]]:
    """Each node's departure times, from the episode's availability timeline (step ``k`` is
    applied at ``k * step_s``)."""
    step_s = sim.scenario.availability.step_s
    up = sim.node_up
    cols = up.shape[1]
    out: list[list[float]] = [[] for _ in range(sim.n_nodes)]
    for k in range(1, cols + 1):
        before, now = up[:, min(k - 1, cols - 1)], up[:, min(k, cols - 1)]
        for n in np.flatnonzero(before & ~now):
            out[n].append(k * step_s)
    return out


@pytest.mark.parametrize("speculation", [False, True])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_cleanup_holds_its_slot_until_it_is_over_or_its_node_leaves(seed, speculation):
    env = churning_world(speculation)
    env.reset(seed=seed)
    sim = env.sim
    left = departures(sim)
    rng = np.random.default_rng(seed)
    checked = kills = 0
    while True:
        now = sim.now
        begun: list[list[float]] = [[] for _ in range(sim.n_nodes)]
        for _, end, _, n, _, outcome in sim.task_log:
            if outcome in ("killed", "superseded"):         # each began a clean-up on n
                begun[n].append(end)
        for n in range(sim.n_nodes):
            held = [s for s in begun[n] if s + CLEANUP_S > now
                    and not any(s < d <= now for d in left[n])]
            assert len(sim.cleanups[n]) == len(held), (n, now, begun[n], left[n])
            checked += bool(held)
        if sim.kind == PREEMPT and sim.candidates:          # kill whenever the world offers it
            kinds = [prim for _, prim in sim.candidates]
            a = kinds.index(KILL) if KILL in kinds else sim.K
            kills += a != sim.K
        else:
            legal = np.flatnonzero(env.action_masks())
            a = int(rng.choice(legal))
        _, _, term, trunc, _ = env.step(a)
        if term or trunc:
            break
    assert kills > 5 and checked > 20                         # the check saw clean-ups
    assert sum(len(d) for d in left) > 10                     # and nodes leaving


def play_killing(env: MRSchedEnv, seed: int, each_step) -> None:
    """An episode that kills whenever the world offers it, else a random legal action;
    ``each_step(sim)`` before every step."""
    env.reset(seed=seed)
    sim = env.sim
    rng = np.random.default_rng(seed)
    while True:
        each_step(sim)
        if sim.kind == PREEMPT and sim.candidates:
            kinds = [prim for _, prim in sim.candidates]
            a = kinds.index(KILL) if KILL in kinds else sim.K
        else:
            a = int(rng.choice(np.flatnonzero(env.action_masks())))
        _, _, term, trunc, _ = env.step(a)
        if term or trunc:
            return


def test_check_invariants_counts_each_nodes_cleanup_ends_of_its_current_stay():
    """``mrsched_gym.testing.check_invariants`` holds in the churning world; at a moment some
    node has a clean-up, one more end event of the node's current stay breaks it (a slot
    would be freed early, the old bug), and one from before its last departure does not."""
    from mrsched_gym.sim.events import EventKind
    from mrsched_gym.testing import check_invariants
    seen = []

    def check(sim):
        check_invariants(sim)
        busy = [n for n in range(sim.n_nodes) if sim.cleanups[n]]
        if busy and not seen:
            seen.append(busy[0])
            n, end = busy[0], int(EventKind.CLEANUP_END)
            heap = list(sim.queue.heap)
            sim.queue.push(sim.now + 1.0, end, n, sim.departures[n] - 1)      # an old stay's
            check_invariants(sim)
            sim.queue.push(sim.now + 1.0, end, n, sim.departures[n])          # this stay's
            with pytest.raises(AssertionError, match=rf"node {n}: \d+ clean-ups, \d+ end events"):
                check_invariants(sim)
            sim.queue.heap[:] = heap

    play_killing(churning_world(False), 0, check)
    assert seen
