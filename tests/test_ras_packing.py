"""RAS's job slots reserve each phase's demand (thesis 4.2.1, Eq. 10, Algorithm 1).

A reducer whose job still has maps to finish reserves its shuffle demand (Table 4.2: no CPU, I/O
per map placed taken as 0; 4.2.4: "only consumes memory"), and switches to its reduce demand when
its job's map phase ends; :func:`mrsched_gym.testing.check_invariants` checks at every step that
each node's reservation is what its tasks hold.
"""

from mrsched_gym.config import scenario_from_dict
from mrsched_gym.env import MRSchedEnv
from mrsched_gym.sim.cluster import reservation, shuffling
from mrsched_gym.sim.state import MAP, REDUCE
from mrsched_gym.testing import check_invariants, check_task_log
from mrsched_gym.workloads.profiles import TYPE_NAMES


def one_node(job_type):
    """One 8 GB node in containers mode: a ``job_type`` job whose reduce may start once a map
    is done, and a map-only Select job submitted during its reduce phase."""
    return scenario_from_dict({
        "cluster": {"nodes": [{"count": 1, "cpu_cores": 4, "mem_gb": 8, "map_slots": 8,
                               "reduce_slots": 2}],
                    "resource_mode": "containers", "task_demand_cv": 0.0},
        "interference": {"load": "constant", "mean": 0.0, "noise": 0.0},
        "decisions": {"slow_start": 0.0},
        "workload": {"kind": "jobs", "jobs": [
            {"type": job_type, "n_maps": 12, "n_reduces": 1, "map_work_s": 20.0,
             "reduce_work_s": 300.0, "work_cv": 0.0},
            # later maps, offered while the first job's reducer is in its reduce phase
            {"type": "select", "arrival_s": 120.0, "n_maps": 8, "n_reduces": 0,
             "map_work_s": 20.0, "work_cv": 0.0}]},
        "time_limit_s": 10_000,
    })


def play_reduce_first(env):
    """Reduce candidates first (Algorithm 1 places reducers first), else the first map; per
    step: the invariants and the node's (maps running beside a shuffling reducer)."""
    env.reset(seed=0)
    sim = env.sim
    beside, switched = [], False
    while True:
        cands = sim.candidates
        red = [i for i, c in enumerate(cands) if c.phase == REDUCE]
        a = red[0] if red else (0 if cands else sim.K)
        tasks = sim.tasks_on[0]
        if any(t.phase == REDUCE and shuffling(t) for t in tasks):   # maps once this one runs
            beside.append(sum(1 for t in tasks if t.phase == MAP)
                          + (a < len(cands) and cands[a].phase == MAP))
        switched |= any(t.phase == REDUCE and not shuffling(t) for t in tasks)
        _, _, term, trunc, _ = env.step(a)
        check_invariants(sim)
        if term or trunc:
            return sim, beside, switched


def test_shuffling_reducer_reserves_only_its_memory():
    sort = TYPE_NAMES.index("sort")
    assert reservation(REDUCE, sort, True) == (0.0, 0.0, reservation(REDUCE, sort)[2])
    assert reservation(REDUCE, sort)[1] == 0.5 and reservation(MAP, sort)[1] == 0.45


def test_maps_pack_beside_a_shuffling_reducer_and_it_switches_at_the_map_phase_end():
    """Combine (Table 4.2): a map reserves CPU 0.25, the reduce phase CPU 0.10. With the
    reduce-phase CPU reserved from launch three maps would fit beside the reducer
    ((1 - 0.10) / 0.25); with its shuffle reservation four do. The reducer switches to its
    reduce reservation once the maps are done, and the job completes."""
    sim, beside, switched = play_reduce_first(MRSchedEnv(one_node("combine")))
    check_task_log(sim)
    assert sim.cap[0] == 1.0
    assert beside, "the reducer never ran while its job's maps were running"
    assert max(beside) == 4
    assert switched
    assert all(j.finish_s < float("inf") for j in sim.jobs)
