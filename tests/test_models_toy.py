"""Hand-built toy instances whose completion times are computed by hand, one per model."""

import math

import pytest

from mrsched_gym.config import scenario_from_dict
from mrsched_gym.env import MRSchedEnv
from mrsched_gym.sim.engine import ADMIT, KILL, PREEMPT, SCHEDULE, SUSPEND
from mrsched_gym.workloads.profiles import PROFILES


def toy(nodes, jobs, **extra):
    data = {
        "cluster": {"nodes": nodes, "task_demand_cv": 0.0, **extra.pop("cluster", {})},
        "interference": {"load": "constant", "mean": 0.0, "noise": 0.0,
                         **extra.pop("interference", {})},
        "workload": {"kind": "jobs", "jobs": [{"work_cv": 0.0, "n_reduces": 0, **j} for j in jobs]},
        "time_limit_s": 10_000,
        **extra,
    }
    return MRSchedEnv(scenario_from_dict(data))


def run(env, policy=None, seed=0):
    env.reset(seed=seed)
    sim = env.sim
    while True:
        a = policy(sim) if policy else (0 if sim.candidates else sim.K)
        _, _, term, trunc, info = env.step(a)
        if term or trunc:
            return sim, info["metrics"]


def test_single_task_runs_at_reference_speed():
    sim, _ = run(toy([{"map_slots": 1, "reduce_slots": 1}],
                     [{"type": "piest", "n_maps": 1, "map_work_s": 100.0}]))
    assert sim.jobs[0].finish_s == pytest.approx(100.0)


def test_cpu_speed_and_accelerator():
    sim, _ = run(toy([{"map_slots": 1, "reduce_slots": 1, "cpu_speed": 2.0}],
                     [{"type": "piest", "n_maps": 1, "map_work_s": 100.0}]))
    assert sim.jobs[0].finish_s == pytest.approx(50.0)
    sim, _ = run(toy([{"map_slots": 1, "reduce_slots": 1, "accelerator": "cell"}],
                     [{"type": "montecarlo", "n_maps": 1, "map_work_s": 100.0}]))
    assert sim.jobs[0].finish_s == pytest.approx(100.0 / 25.0)   # thesis 3.5.1: 25x


def test_multi_resource_contention():
    """Two PiEst maps (90% CPU each) share one node: 1.8x demand -> each at 1/1.8 speed."""
    sim, _ = run(toy([{"map_slots": 2, "reduce_slots": 1}],
                     [{"type": "piest", "n_maps": 1, "map_work_s": 100.0},
                      {"type": "piest", "n_maps": 1, "map_work_s": 100.0}]))
    assert [j.finish_s for j in sim.jobs] == pytest.approx([180.0, 180.0])


def test_memory_static_share_spills():
    """Slots mode: a Sort reduce (60% memory) in a 1/2 slot share spills at 1/(1+3(1-.5/.6))."""
    nodes = [{"map_slots": 1, "reduce_slots": 1}]
    job = {"type": "sort", "n_maps": 1, "map_work_s": 10.0, "n_reduces": 1,
           "reduce_work_s": 100.0}
    sim, _ = run(toy(nodes, [job], decisions={"slow_start": 1.0}))
    p = PROFILES["sort"]
    shuffle = p.shuffle_mb_per_map * 1 / 1 / 125.0
    f_mem = 1.0 / (1.0 + 3.0 * (1.0 - 0.5 / 0.6))
    assert sim.jobs[0].finish_s == pytest.approx(10.0 + (shuffle + 100.0) / f_mem)


def test_map_shuffle_reduce_pipeline():
    """Reduces start after the maps (slow start 1.0) and take shuffle + reduce work."""
    sim, _ = run(toy([{"map_slots": 2, "reduce_slots": 1}],
                     [{"type": "grep", "n_maps": 2, "map_work_s": 100.0, "n_reduces": 1,
                       "reduce_work_s": 50.0}], decisions={"slow_start": 1.0}))
    shuffle = PROFILES["grep"].shuffle_mb_per_map * 2 / 1 / 125.0
    assert sim.jobs[0].finish_s == pytest.approx(100.0 + shuffle + 50.0)


@pytest.mark.parametrize("policy", ["credit", "background"])
def test_tct_slowdown_and_web_response(policy):
    """Shared node at web load u=0.5: a PiEst task takes 100 x NormTCT(0.5) (MIMP Eq. 1-2)."""
    sim, m = run(toy([{"map_slots": 1, "reduce_slots": 1, "kind": "shared"}],
                     [{"type": "piest", "n_maps": 1, "map_work_s": 100.0}],
                     interference={"mean": 0.5, "policy": policy}))
    a, b, c, d = PROFILES["piest"].tct
    norm = (a * math.exp(b * 0.5) + c * math.exp(d * 0.5)) / (a * math.exp(b) + c * math.exp(d))
    assert sim.jobs[0].finish_s == pytest.approx(100.0 * norm)
    k = 6.02 if policy == "credit" else 0.05
    assert m["web_response_mean_ms"] == pytest.approx(25.0 * (1 + k * 0.9))   # MIMP Table 1


def test_pi_suffers_more_than_sort():
    """MIMP Fig. 2: CPU-bound Pi slows more than I/O-bound Sort as residual capacity shrinks."""
    for r in (0.1, 0.3, 0.5):
        assert PROFILES["piest"].norm_tct(r) > PROFILES["sort"].norm_tct(r) > 1.0
    assert 6.0 < PROFILES["piest"].norm_tct(0.1) < 8.0
    assert 2.0 < PROFILES["sort"].norm_tct(0.1) < 3.5


@pytest.mark.parametrize("seed", range(6))
def test_locality_costs(seed):
    """Node 0 (rack 0) runs the only map: local = 100 s, rack-local +128/125 s, off-rack x2."""
    env = toy([{"count": 3, "map_slots": 1, "reduce_slots": 1}],
              [{"type": "wordcount", "n_maps": 1, "map_work_s": 100.0}],
              cluster={"racks": 2, "replication": 1})
    sim, m = run(env, seed=seed)
    replica = int(sim.jobs[0].replicas[0, 0])
    extra = {0: 0.0, 2: 128 / 125.0, 1: 2 * 128 / 125.0}[replica]   # racks: node % 2
    assert sim.jobs[0].finish_s == pytest.approx(100.0 + extra)
    assert m["data_locality_pct"] == (100.0 if replica == 0 else 0.0)


def _preempt_env():
    nodes = [{"map_slots": 1, "reduce_slots": 1, "mem_gb": 2.0, "disk_mb_s": 80.0}]
    jobs = [{"type": "kmeans", "n_maps": 1, "map_work_s": 100.0, "priority": 0},
            {"type": "kmeans", "n_maps": 1, "map_work_s": 50.0, "priority": 1, "arrival_s": 30.0}]
    return toy(nodes, jobs, decisions={"preemption": {"enabled": True, "kill_cleanup_s": 2.0}})


def _preempt_policy(primitive):
    def policy(sim):
        if sim.kind == PREEMPT:
            if primitive is None:
                return sim.K
            for i, (_, prim) in enumerate(sim.candidates):
                if prim == primitive:
                    return i
        if sim.kind == SCHEDULE and sim.candidates:
            return max(range(len(sim.candidates)), key=lambda i: sim.candidates[i][0].priority)
        return 0 if sim.candidates else sim.K
    return policy


@pytest.mark.parametrize("primitive,sojourn,makespan,wasted,swap", [
    (None, 120.0, 150.0, 0.0, 0.0),                         # wait
    (KILL, 52.0, 182.0, 30.0, 0.0),                         # kill: 2 s clean-up, restart
    (SUSPEND, 50.0 + 12.8, 50.0 + 12.8 + 70.0 + 12.8 + 30.0, 0.0, 25.6),  # 1 GB swapped at 80 MB/s
])
def test_preemption_primitives_and_paging_cost(primitive, sojourn, makespan, wasted, swap):
    """Pastorelli et al.: a high-priority task arrives at 30% of a low-priority one's progress."""
    sim, m = run(_preempt_env(), _preempt_policy(primitive))
    hi, lo = sim.jobs[1], sim.jobs[0]
    assert hi.finish_s - hi.arrival_s == pytest.approx(sojourn)
    assert max(hi.finish_s, lo.finish_s) == pytest.approx(makespan)
    assert m["wasted_work_s"] == pytest.approx(wasted)
    assert m["swap_overhead_s"] == pytest.approx(swap)


def test_node_loss_wastes_work_and_requeues(tmp_path):
    """Two nodes; at t=50 one leaves: its task's 50 s are lost and it reruns after t=100."""
    trace = tmp_path / "avail.csv"
    trace.write_text("time_s,value\n0,1.0\n50,0.5\n")
    env = toy([{"count": 2, "map_slots": 1, "reduce_slots": 1}],
              [{"type": "wordcount", "n_maps": 2, "map_work_s": 100.0}],
              availability={"generator": "trace", "trace": str(trace), "mode": "nodes",
                            "step_s": 50.0, "min_fraction": 0.01})
    sim, m = run(env)
    assert sim.jobs[0].finish_s == pytest.approx(200.0)
    assert m["wasted_work_s"] == pytest.approx(50.0)
    assert m["lost_tasks"] == 1.0


def test_capacity_shrink_slows_tasks(tmp_path):
    """Capacity mode: f drops to 0.5 at t=50 -> a CPU-bound task's remaining 50 s take 100 s."""
    trace = tmp_path / "avail.csv"
    trace.write_text("time_s,value\n0,1.0\n50,0.5\n")
    env = toy([{"map_slots": 1, "reduce_slots": 1}],
              [{"type": "piest", "n_maps": 1, "map_work_s": 100.0}],
              availability={"generator": "trace", "trace": str(trace), "mode": "capacity",
                            "step_s": 50.0, "min_fraction": 0.01})
    sim, _ = run(env)
    f = 0.01 + 0.99 * 0.5                      # trace scaled into [min_fraction, 1]
    cpu = 0.9                                  # PiEst map CPU demand: slows once 0.9 > f
    assert sim.jobs[0].finish_s == pytest.approx(50.0 + 50.0 * cpu / f)


def test_admission_reject_and_accept():
    env = toy([{"map_slots": 1, "reduce_slots": 1}],
              [{"type": "piest", "n_maps": 1, "map_work_s": 100.0},
               {"type": "piest", "n_maps": 1, "map_work_s": 100.0, "arrival_s": 10.0}],
              decisions={"admission": True})
    sim, m = run(env, lambda s: (1 if s.jobs[1].state == 1 else 0) * s.K if s.kind == ADMIT
                 else (0 if s.candidates else s.K))
    assert m["rejections"] == 1.0
    assert math.isnan(sim.jobs[1].finish_s) and sim.jobs[0].finish_s == pytest.approx(100.0)


def test_deadline_penalty_hand_computed():
    """Weight 2, deadline 60 s, finish 100 s -> penalty 2 x 40 s = 80/3600 job-hours."""
    env = toy([{"map_slots": 1, "reduce_slots": 1}],
              [{"type": "piest", "n_maps": 1, "map_work_s": 100.0, "deadline_s": 60.0,
                "weight": 2.0}])
    _, m = run(env)
    assert m["deadline_penalty_h"] == pytest.approx(80.0 / 3600.0)
    assert m["deadline_misses"] == 1.0
    assert m["mean_time_beyond_deadline_s"] == pytest.approx(40.0)


def test_data_node_overload_slows_remote_reads():
    """MIMP 5.1 data-node I/O: 4 Grep maps whose blocks all sit on node 0.

    Node 0 runs one map locally (disk demand 0.5) and serves three remote readers (0.5 x 0.5
    each): 1.25 > 1, so everything touching node 0's disk runs at 0.8. The local map ends at
    100/0.8 = 125 s; the readers (100 + 128/125 s of work, rack-local) have 101.024 - 100 = 1.024
    left, now at full speed: the job ends at 126.024 s.
    """
    from mrsched_gym.sim.engine import READ_FRACTION
    assert READ_FRACTION == 0.5
    for seed in range(400):
        env = toy([{"count": 4, "map_slots": 1, "reduce_slots": 1}],
                  [{"type": "grep", "n_maps": 4, "map_work_s": 100.0}],
                  cluster={"racks": 1, "replication": 1})
        env.reset(seed=seed)
        if (env.sim.jobs[0].replicas[:, 0] == 0).all():
            break
    else:
        pytest.fail("no seed puts all four blocks on node 0")
    sim, _ = run(env, seed=seed)
    assert sim.jobs[0].finish_s == pytest.approx(125.0 + (100.0 + 128 / 125.0 - 100.0))
