"""Cluster mechanisms two seed papers need, each on a crafted toy scenario, and their refusals.

* MIMP 3.1 (seed 000): reduces and HDFS on dedicated nodes only (``reduce_slots: 0`` on shared
  nodes, ``cluster.hdfs_on: dedicated``) and deadlines that cover the map phase
  (``workload.deadline_scope: map``), with the same rule in the metrics and the lateness integral.
* MROrchestrator (seed 001, Algorithms 1-2): the orchestrator re-divides a contended node's CPU.
"""

import math

import numpy as np
import pytest

from mrsched_gym.config import ConfigError, load_scenario, scenario_from_dict, with_overrides
from mrsched_gym.env import MRSchedEnv
from mrsched_gym.evaluate import make_env
from mrsched_gym.sim.engine import Simulator, cpu_factors
from mrsched_gym.sim.state import MAP, REDUCE
from mrsched_gym.testing import check_invariants, check_task_log
from mrsched_gym.workloads.profiles import PROFILES
from mrsched_gym.workloads.synthetic import phase_alone_times


def scenario(nodes, jobs, **extra):
    data = {
        "cluster": {"nodes": nodes, "task_demand_cv": 0.0, **extra.pop("cluster", {})},
        "interference": {"load": "constant", "mean": 0.0, "noise": 0.0},
        "workload": {"kind": "jobs", "jobs": [{"work_cv": 0.0, "n_reduces": 0, **j} for j in jobs],
                     **extra.pop("workload", {})},
        "time_limit_s": 10_000,
        **extra,
    }
    return scenario_from_dict(data)


def run(env, seed=0, check=False):
    """First candidate, else skip; returns (simulator, total reward, last info)."""
    env.reset(seed=seed)
    sim, total = env.sim, 0.0
    while True:
        _, r, term, trunc, info = env.step(0 if sim.candidates else sim.K)
        total += r
        if check:
            check_invariants(sim)
        if term or trunc:
            return sim, total, info


HYBRID = [{"count": 2, "map_slots": 2, "reduce_slots": 2},
          {"count": 3, "kind": "shared", "map_slots": 2, "reduce_slots": 0}]


# ------------------------------------------------------------------ maps-only nodes (MIMP 3.1)
def test_reduces_never_run_on_maps_only_nodes():
    sc = scenario(HYBRID, [{"type": "sort", "n_maps": 20, "n_reduces": 6, "map_work_s": 30.0,
                            "reduce_work_s": 30.0}, {"type": "wordcount", "n_maps": 10,
                                                     "n_reduces": 3, "arrival_s": 5.0}])
    sim, _, _ = run(MRSchedEnv(sc), check=True)
    check_task_log(sim)
    assert sim.red_slots == [2, 2, 0, 0, 0]
    assert all(j.finish_s > 0 for j in sim.jobs)
    nodes = {phase: {node for _, _, _, node, ph, out in sim.task_log if ph == phase}
             for phase in (MAP, REDUCE)}
    assert nodes[REDUCE] <= {0, 1}                       # dedicated nodes only
    assert nodes[MAP] & {2, 3, 4}                        # shared nodes ran maps
    # the observation of a maps-only node has no free reduce slots (and no division by zero)
    env = MRSchedEnv(sc)
    obs, _ = env.reset(seed=0)
    assert np.all(obs["nodes"][2:, 6] == 0.0) and np.all(obs["nodes"][:2, 6] == 1.0)


def test_maps_only_cluster_runs_map_only_jobs():
    nodes = [{"count": 2, "map_slots": 2, "reduce_slots": 0}]
    sim, _, info = run(MRSchedEnv(scenario(nodes, [{"type": "piest", "n_maps": 4}])))
    assert info["metrics"]["jobs_finished"] == 1.0


@pytest.mark.parametrize("workload,needle", [
    ({"kind": "jobs", "jobs": [{"type": "sort", "n_maps": 4, "n_reduces": 1}]},
     "workload.jobs[0] (sort) has 1 reduce task(s)"),
    ({"kind": "jobs", "jobs": [{"type": "wordcount", "n_maps": 40}]},
     "workload.jobs[0] (wordcount) has 4 reduce task(s)"),
    ({"type_mix": {"piest": 1, "sort": 1}}, "type_mix draws sort jobs"),
])
def test_reduces_without_reduce_slots_are_refused(workload, needle):
    data = {"cluster": {"nodes": [{"count": 3, "map_slots": 2, "reduce_slots": 0}]},
            "workload": workload}
    with pytest.raises(ConfigError, match="every node group has reduce_slots 0") as e:
        scenario_from_dict(data)
    assert needle in str(e.value)


def test_maps_only_synthetic_mix_is_accepted():
    sc = scenario_from_dict({"cluster": {"nodes": [{"count": 3, "reduce_slots": 0}]},
                             "workload": {"type_mix": {"piest": 1.0}}})
    assert not sc.cluster.has_reduce_slots


def test_trace_with_shuffles_and_no_reduce_slots_is_refused():
    sc = load_scenario("hadoop_trace")
    nodes = [{**g, "reduce_slots": 0} for g in
             [{"count": g.count, "map_slots": g.effective_map_slots} for g in sc.cluster.nodes]]
    bad = with_overrides(sc, {"cluster.nodes": nodes})
    with pytest.raises(ConfigError, match="shuffles data, so it has reduce tasks"):
        MRSchedEnv(bad)
    with pytest.raises(ConfigError, match="shuffles data"):
        Simulator(bad)


@pytest.mark.parametrize("cluster,needle", [
    ({"nodes": [{"reduce_slots": -1}]}, "reduce_slots: must be null or in [0, 64]"),
    ({"nodes": [{"reduce_slots": 0}, {"reduce_slots": 1}], "resource_mode": "containers"},
     "nodes[0].reduce_slots: 0 (maps only) needs resource_mode 'slots'"),
    ({"nodes": [{"kind": "shared"}], "hdfs_on": "dedicated"},
     "hdfs_on: 'dedicated' needs at least one node group of kind 'dedicated'"),
    ({"hdfs_on": "shared"}, "hdfs_on: must be one of"),
])
def test_cluster_refusals(cluster, needle):
    with pytest.raises(ConfigError) as e:
        scenario_from_dict({"cluster": cluster, "workload": {"type_mix": {"piest": 1}}})
    assert needle in str(e.value)


# ------------------------------------------------------------------ HDFS on dedicated nodes
@pytest.mark.parametrize("seed", range(3))
def test_replicas_only_on_dedicated_nodes(seed):
    jobs = [{"type": "grep", "n_maps": 60, "map_work_s": 10.0}]
    sc = scenario(HYBRID, jobs, cluster={"hdfs_on": "dedicated", "replication": 3})
    assert sc.cluster.data_nodes == (0, 1) and sc.cluster.effective_replication == 2
    sim, _, info = run(MRSchedEnv(sc), seed=seed, check=True)
    reps = sim.jobs[0].replicas
    assert reps.shape == (60, 2) and set(np.unique(reps)) == {0, 1}
    assert np.all(reps[:, 0] != reps[:, 1])
    # maps on shared nodes read remotely from a dedicated data node
    shared_maps = [(s, n) for s, _, _, n, ph, out in sim.task_log if ph == MAP and n >= 2]
    assert shared_maps
    assert sum(sim.jobs[0].locality_counts[1:]) >= len(shared_maps)
    # with every node a data node, the shared nodes hold replicas too
    sim_all, _, _ = run(MRSchedEnv(scenario(HYBRID, jobs)), seed=seed)
    assert np.any(sim_all.jobs[0].replicas >= 2)


# ------------------------------------------------------------------ map-scoped deadlines
ONE = [{"map_slots": 1, "reduce_slots": 1}]
MAP_THEN_REDUCE = {"type": "grep", "n_maps": 1, "map_work_s": 100.0, "n_reduces": 1,
                   "reduce_work_s": 100.0}


def _deadline_run(scope, deadline_s, time_limit_s=10_000):
    sc = scenario(ONE, [{**MAP_THEN_REDUCE, "deadline_s": deadline_s, "weight": 2.0}],
                  workload={"deadline_scope": scope}, decisions={"slow_start": 1.0},
                  time_limit_s=time_limit_s)
    sim, total, info = run(MRSchedEnv(sc))
    assert total == pytest.approx(-info["metrics"]["objective"], rel=1e-12)
    return sim, info["metrics"], info["episode_log"]


def test_map_scoped_deadline_is_met_when_the_map_phase_ends():
    shuffle = PROFILES["grep"].shuffle_mb_per_map / 125.0
    sim, m, log = _deadline_run("job", 150.0)
    assert sim.jobs[0].finish_s == pytest.approx(200.0 + shuffle)
    assert m["deadline_misses"] == 1.0
    assert m["deadline_penalty_h"] == pytest.approx(2.0 * (50.0 + shuffle) / 3600.0)
    sim, m, log = _deadline_run("map", 150.0)
    assert sim.jobs[0].map_finish_s == pytest.approx(100.0)
    assert log.deadline_finish_s[0] == pytest.approx(100.0)
    assert m["deadline_misses"] == 0.0 and m["deadline_penalty_h"] == 0.0
    assert m["mean_distance_to_deadline_s"] == pytest.approx(50.0)
    assert m["mean_jct_s"] == pytest.approx(200.0 + shuffle)     # JCT is still the whole job


def test_map_scoped_lateness_stops_at_the_map_phase_end():
    _, m, _ = _deadline_run("map", 60.0)
    assert m["deadline_misses"] == 1.0
    assert m["mean_time_beyond_deadline_s"] == pytest.approx(40.0)
    assert m["deadline_penalty_h"] == pytest.approx(2.0 * 40.0 / 3600.0)


def test_map_scope_unfinished_job_whose_maps_are_done_is_not_missed():
    """The time limit (150 s) cuts the reduce; the map phase met its 120 s deadline."""
    _, m, log = _deadline_run("map", 120.0, time_limit_s=150.0)
    assert m["truncated"] == 1.0 and m["jobs_finished"] == 0.0
    assert m["deadline_misses"] == 0.0 and m["deadline_penalty_h"] == 0.0
    assert math.isnan(log.est_deadline_finish_s[0]) and log.est_finish_s[0] > 150.0
    _, m, _ = _deadline_run("job", 120.0, time_limit_s=150.0)
    assert m["deadline_misses"] == 1.0 and m["deadline_penalty_h"] > 0.0


def test_map_scope_unfinished_map_phase_is_charged_its_remaining_map_work():
    """Limit 40 s in a 100 s map: charged to 40 + the map phase alone x (all of it left)."""
    sim, m, log = _deadline_run("map", 30.0, time_limit_s=40.0)
    map_alone = sim.jobs[0].map_alone_s
    assert log.est_deadline_finish_s[0] == pytest.approx(40.0 + map_alone)
    assert m["deadline_misses"] == 1.0
    assert m["deadline_penalty_h"] == pytest.approx(2.0 * (10.0 + map_alone) / 3600.0)


@pytest.mark.parametrize("scope", ["job", "map"])
def test_observed_deadline_features_follow_the_deadline_scope(scope):
    """Candidate features 7-9 (time to deadline, has a deadline, slots required): with the map
    scope they count the remaining maps only, and a job whose maps are done has no pending
    deadline (its reduce row reads "none"); with the job scope the reduce keeps the deadline."""
    sc = scenario(ONE, [{**MAP_THEN_REDUCE, "deadline_s": 400.0}],
                  workload={"deadline_scope": scope}, decisions={"slow_start": 1.0})
    env = MRSchedEnv(sc)
    obs, _ = env.reset(seed=0)
    sim = env.sim
    row = obs["candidates"][0]
    assert sim.decision.candidates[0].phase == MAP
    # before any task finished the mean length is the job's expected work (its map_work_s, not
    # its type's): the map scope counts the one map, the job scope both tasks
    work = (1 if scope == "map" else 2) * MAP_THEN_REDUCE["map_work_s"]
    assert MAP_THEN_REDUCE["map_work_s"] != PROFILES["grep"].map_work_s
    assert row[8] == 1.0 and row[7] == pytest.approx(400.0 / 3600.0, rel=1e-5)
    assert row[9] == pytest.approx(work / 400.0 / env.encoder.total_slots, rel=1e-5)
    while not any(c.phase == REDUCE for c in sim.decision.candidates):
        obs, *_ = env.step(0 if sim.decision.candidates else sc.decisions.max_candidates)
    row = obs["candidates"][0]
    if scope == "map":
        assert row[8] == 0.0 and row[7] == 24.0 and row[9] == 0.0
    else:
        assert row[8] == 1.0 and row[7] < 400.0 / 3600.0 and row[9] > 0.0


def test_map_scoped_deadline_base_is_the_map_phase_alone():
    job = {"type": "sort", "n_maps": 40, "n_reduces": 10, "deadline_factor": 2.0}
    out = {}
    for scope in ("job", "map"):
        sim = Simulator(scenario(HYBRID, [job], workload={"deadline_scope": scope}))
        sim.reset(np.random.default_rng(0))
        out[scope] = sim.jobs[0]
    p = PROFILES["sort"]
    sc = scenario(HYBRID, [job])
    m, r = phase_alone_times(p, 40, 10, p.map_work_s, p.reduce_work_s, sc.cluster)
    assert out["map"].deadline_s == pytest.approx(2.0 * m)
    assert out["job"].deadline_s == pytest.approx(2.0 * (m + r))
    assert out["map"].map_alone_s == pytest.approx(m) and out["map"].alone_s == out["job"].alone_s


def _charged(log):
    """sum_j w_j (y_j - d_j)^+ / 3600 with y_j the deadline-covered part's end or estimate."""
    y = np.where(np.isnan(log.deadline_finish_s), log.est_deadline_finish_s, log.deadline_finish_s)
    dl = np.isfinite(log.deadline_s) & log.arrived
    return float(np.sum(log.weight[dl] * np.maximum(y[dl] - log.deadline_s[dl], 0.0))) / 3600


@pytest.mark.parametrize("env_id,overrides,policy", [
    ("mrsched/Shared-v1", {"time_limit_s": 2400}, "first"),
    ("mrsched/Admission-v1", {"workload.duration_s": 1200}, "first"),
    ("mrsched/Admission-v1", {"workload.duration_s": 1200}, "reject"),
])
def test_map_scope_accounting_matches_the_metrics(env_id, overrides, policy):
    """The lateness integral, the metrics and the return agree under the map scope, with
    unserved (cut or rejected) jobs charged."""
    env = make_env(env_id, {**overrides, "workload.deadline_scope": "map"})
    env.reset(seed=2)
    sim, total = env.unwrapped.sim, 0.0
    while True:
        a = sim.K if policy == "reject" else (0 if sim.candidates else sim.K)
        _, r, term, trunc, info = env.step(a)
        total += r
        if term or trunc:
            break
    m, log = info["metrics"], info["episode_log"]
    assert total == pytest.approx(-m["objective"], rel=1e-9, abs=1e-9)
    assert m["deadline_penalty_h"] == pytest.approx(_charged(log), rel=1e-9, abs=1e-12)
    has_dl = np.isfinite(log.deadline_s) & log.arrived
    assert m["deadline_misses"] >= np.sum(has_dl & np.isnan(log.deadline_finish_s))
    if policy == "reject":
        assert m["deadline_miss_pct"] == 100.0
    else:
        assert np.all(log.deadline_finish_s[has_dl & ~np.isnan(log.finish_s)]
                      <= log.finish_s[has_dl & ~np.isnan(log.finish_s)])


# ------------------------------------------------------------------ MROrchestrator CPU
class _Task:
    def __init__(self, d, est=None):
        self.demand = (d, 0.0, 0.0, 0.0)
        self.cpu_est = est


def test_cpu_factors_water_fill():
    # estimates equal to demands: the OS share capacity / sum of demands
    assert cpu_factors([_Task(0.9, 0.9), _Task(0.9, 0.9)], 1.0, [1, 1]) == \
        pytest.approx([1 / 1.8, 1 / 1.8])
    # a lower estimate gives the other task more; nobody gets more than its demand
    g = cpu_factors([_Task(0.9, 0.3), _Task(0.9, 0.9)], 1.0, [1, 1])
    assert g == pytest.approx([0.25 / 0.9, 0.75 / 0.9])
    g = cpu_factors([_Task(0.9, 0.9), _Task(0.5, 5.0)], 1.0, [1, 1])
    assert g == pytest.approx([0.5 / 0.9, 1.0])
    # a task that can use only half of its demand (its disk limit) leaves the rest to others
    g = cpu_factors([_Task(0.9, 0.9), _Task(0.9, 0.9)], 1.0, [0.4, 1.0])
    assert g == pytest.approx([0.4, 0.64 / 0.9])
    # a task not yet estimated keeps its proportional request
    g = cpu_factors([_Task(0.9, None), _Task(0.9, 0.45)], 1.0, [1, 1])
    assert g == pytest.approx([(0.9 / 1.35) / 0.9, (0.45 / 1.35) / 0.9])


def _two_piest_maps(orchestrator, time_limit_s=10_000.0, seed=0):
    """One node, two PiEst maps (90% CPU each: contended) of one job, one with 3x the work."""
    sc = scenario([{"map_slots": 2, "reduce_slots": 1}],
                  [{"type": "piest", "n_maps": 2, "map_work_s": 100.0}],
                  cluster={"orchestrator": orchestrator, "orchestrator_epoch_s": 20.0},
                  time_limit_s=time_limit_s)
    env = MRSchedEnv(sc)
    env.reset(seed=seed)
    env.sim.jobs[0].map_work[1] = 300.0            # a straggler by input size
    env.sim.jobs[0].total_work += 200.0
    sim = env.sim
    while True:
        _, _, term, trunc, info = env.step(0 if sim.candidates else sim.K)
        if term or trunc:
            return sim


def test_regression_gives_cpu_to_the_task_behind_its_job_phase():
    sim = _two_piest_maps("regression", time_limit_s=30.0)  # stop after the 20 s epoch
    small, big = sorted(sim.tasks_on[0], key=lambda t: t.work)
    os_share = 1.0 / 1.8
    g = sim.cpu_shares([small, big])
    assert g[1] > os_share > g[0]                     # the task behind gets more CPU
    assert big.rate > small.rate
    assert big.cpu_est > small.cpu_est
    check_invariants(sim)
    # ... which shortens the job (its slowest task) against no orchestrator
    done = {o: _two_piest_maps(o).jobs[0].finish_s for o in ("none", "regression")}
    assert done["regression"] < done["none"]
    assert done["none"] == pytest.approx(100.0 * 1.8 + 200.0)     # then the big map runs alone


def test_uniform_equalises_cpu_within_a_job_phase():
    """UNIFORM: every task of a job-phase asks for the phase's mean demand, so the task with
    the larger own demand gets a smaller fraction of it than the OS share gives."""
    sc = scenario([{"map_slots": 2, "reduce_slots": 1}],
                  [{"type": "piest", "n_maps": 2, "map_work_s": 100.0}],
                  cluster={"orchestrator": "uniform", "task_demand_cv": 0.5},
                  time_limit_s=30.0)
    sim, _, _ = run(MRSchedEnv(sc))
    lo, hi = sorted(sim.tasks_on[0], key=lambda t: t.demand[0])
    assert lo.cpu_est == hi.cpu_est == PROFILES["piest"].map_demand[0]
    total = lo.demand[0] + hi.demand[0]
    assert total > 1.0
    g = sim.cpu_shares([lo, hi])
    assert g[1] < 1.0 / total < g[0]


def test_no_orchestrator_leaves_cpu_to_the_os():
    sim = _two_piest_maps("none", time_limit_s=30.0)
    assert all(t.cpu_est is None for t in sim.tasks_on[0])
    assert sim.cpu_shares(sim.tasks_on[0]) == pytest.approx([1 / 1.8, 1 / 1.8])


# ------------------------------------------------------------------ everything at once
MIMP_WORLD = {
    "cluster": {"racks": 2, "hdfs_on": "dedicated", "nodes": [
        {"count": 2, "map_slots": 2, "reduce_slots": 2, "mem_gb": 4},
        {"count": 3, "map_slots": 2, "reduce_slots": 0, "kind": "shared"}]},
    "interference": {"load": "bursty", "mean": 0.3, "amplitude": 0.5, "step_s": 60},
    "workload": {"duration_s": 600, "load": 0.9, "size_mean": 6, "size_std": 3,
                 "type_mix": {"wordcount": 1, "sort": 1, "piest": 1, "kmeans": 1},
                 "high_priority_fraction": 0.3, "deadline_factor": [1.0, 3.0],
                 "deadline_scope": "map"},
    "decisions": {"max_candidates": 4},
    "time_limit_s": 2400,
}


@pytest.mark.parametrize("variant", [
    {},
    {"cluster.orchestrator": "regression", "cluster.orchestrator_epoch_s": 30.0},
    {"cluster.orchestrator": "uniform", "decisions.admission": True},
    {"decisions.preemption": {"enabled": True}, "cluster.orchestrator": "regression"},
])
@pytest.mark.parametrize("seed", range(3))
def test_invariants_under_random_actions_in_a_mimp_world(variant, seed):
    from mrsched_gym.testing import random_legal
    env = MRSchedEnv(with_overrides(scenario_from_dict(MIMP_WORLD), variant))
    policy = random_legal(seed)
    env.reset(seed=seed)
    sim, total = env.sim, 0.0
    while True:
        _, r, term, trunc, info = env.step(policy(env, None))
        total += r
        check_invariants(sim)
        if term or trunc:
            break
    check_task_log(sim)
    assert total == pytest.approx(-info["metrics"]["objective"], rel=1e-9, abs=1e-9)
    assert all(node < 2 for *_, node, ph, _ in sim.task_log if ph == REDUCE)
    assert all(set(j.replicas.ravel().tolist()) <= {0, 1} for j in sim.jobs)


def test_mp_counts_only_maps_against_a_map_scoped_deadline():
    """MIMP Eq. 3 and Eq. 6 with the paper's map-phase deadlines: reduces do not count."""
    from mrsched_gym.baselines import make_baseline
    job = {**MAP_THEN_REDUCE, "reduce_work_s": 5000.0, "deadline_s": 400.0}
    for scope, on_track in (("job", False), ("map", True)):
        sc = scenario(ONE, [job], workload={"deadline_scope": scope},
                      decisions={"slow_start": 1.0})
        env = MRSchedEnv(sc)
        env.reset(seed=0)
        mp = make_baseline("mp")
        mp.reset(env.sim, 0)
        env.step(0)                                   # the map runs on the one slot
        sim = env.sim
        tasks = [t for t in sim.running.values() if t.job is sim.jobs[0]]
        assert mp.on_track(sim, sim.jobs[0], tasks) is on_track, scope
        slots = [(0, MAP), (0, REDUCE)]
        alone = mp.jct_alone(sim, sim.jobs[0], slots)
        assert (alone < 400.0) is on_track, (scope, alone)
