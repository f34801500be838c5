"""The jobs of an episode drawn together (``workloads.jobs.make_jobs``: one draw per stream) are
the jobs drawn one at a time, value for value, and leave both streams where the one-at-a-time
draws leave them.

The reference is ``make_job``, the per-job code the draws were batched from: for each job,
``lognormal`` calls of the job's sizes with scalar parameters, then ``integers`` calls of the
job's block count with scalar bounds. The cases cover what changes the layout of the draws:
replication 1 to 4 (and a bound whose range is one value), a coefficient of variation of 0 (no
draw), given work arrays, map-only jobs, one-block jobs and data nodes that are not every node.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from mrsched_gym.config import scenario_from_dict
from mrsched_gym.workloads.jobs import JobPlan, make_job, make_jobs, place_replicas
from mrsched_gym.workloads.profiles import TYPE_NAMES


def _reference(plan, task_rng, place_rng, cluster):
    """One job drawn alone (``make_job``, the per-job code): ``(map_work, reduce_work,
    map_mult, reduce_mult, replicas, alone_s, map_alone_s)``."""
    d = make_job(plan.profile_idx, plan.arrival, plan.deadline, plan.priority, plan.weight,
                 plan.n_maps, plan.n_red, plan.mw, plan.rw, task_rng, place_rng, cluster,
                 plan.label, plan.work_cv, plan.map_work, plan.reduce_work)
    return (d.map_work, d.reduce_work, d.map_mult, d.reduce_mult, d.replicas, d.alone_s,
            d.map_alone_s)


def _cluster(n_nodes, replication, demand_cv, hdfs_on="all"):
    groups = [{"count": n_nodes - 2}, {"count": 2, "kind": "dedicated"}]
    if hdfs_on == "dedicated":
        groups = [{"count": n_nodes - 3, "kind": "shared", "reduce_slots": 0},
                  {"count": 3, "kind": "dedicated"}]
    return scenario_from_dict({"cluster": {"nodes": groups, "replication": replication,
                                           "task_demand_cv": demand_cv, "hdfs_on": hdfs_on}}
                              ).cluster


def _plans(rng, n_jobs, work_cv, given_every):
    plans = []
    for i in range(n_jobs):
        n_maps = int(rng.integers(1, 9)) if i % 5 else 1
        n_red = 0 if i % 4 == 1 else int(rng.integers(1, 5))
        given = given_every and i % given_every == 0
        plans.append(JobPlan(
            int(rng.integers(len(TYPE_NAMES))), float(i), math.inf, i % 2, 1.0 + i, n_maps,
            n_red, float(rng.uniform(5, 50)), float(rng.uniform(5, 80)), f"j{i}",
            work_cv if i % 3 == 0 else None,
            rng.uniform(1, 9, n_maps) if given else None,
            rng.uniform(1, 9, n_red) if given else None))
    return plans


CASES = [  # (nodes, replication, demand cv, work cv, given arrays every, hdfs_on)
    (12, 3, 0.25, None, 0, "all"),
    (12, 1, 0.25, 0.5, 0, "all"),
    (5, 4, 0.25, 0.0, 3, "all"),
    (3, 3, 0.0, None, 2, "all"),          # k = 1 draws from one value: no stream use
    (40, 2, 0.1, 0.0, 0, "all"),
    (8, 3, 0.25, None, 4, "dedicated"),   # 3 data nodes of 8
]


@pytest.mark.parametrize("case", CASES, ids=[f"n{c[0]}-rep{c[1]}-{c[5]}" for c in CASES])
@pytest.mark.parametrize("seed", [0, 1, 7])
def test_make_jobs_is_make_job_in_order(case, seed):
    n_nodes, replication, demand_cv, work_cv, given_every, hdfs_on = case
    cluster = _cluster(n_nodes, replication, demand_cv, hdfs_on)
    plans = _plans(np.random.default_rng(100 + seed), 23, work_cv, given_every)
    t_ref, p_ref = np.random.default_rng(seed), np.random.default_rng(seed + 1000)
    t_new, p_new = np.random.default_rng(seed), np.random.default_rng(seed + 1000)
    expected = [_reference(plan, t_ref, p_ref, cluster) for plan in plans]
    drawn = make_jobs(plans, t_new, p_new, cluster)
    assert len(drawn) == len(plans)
    for plan, want, got in zip(plans, expected, drawn, strict=True):
        mw, rw, mm, rm, reps, alone, map_alone = want
        for a, b in ((mw, got.map_work), (rw, got.reduce_work), (mm, got.map_mult),
                     (rm, got.reduce_mult), (reps, got.replicas)):
            assert a.dtype == b.dtype and a.shape == b.shape
            assert a.tobytes() == b.tobytes()
        assert (got.alone_s, got.map_alone_s) == (alone, map_alone)
        assert (got.label, got.arrival_s, got.priority) == (plan.label, plan.arrival,
                                                            plan.priority)
        assert reps.shape[1] == cluster.effective_replication
        assert all(len(set(row)) == len(row) for row in got.replicas.tolist())
    # both streams are left where the one-at-a-time draws leave them
    assert t_new.bit_generator.state == t_ref.bit_generator.state
    assert p_new.bit_generator.state == p_ref.bit_generator.state


def test_one_stream_twice_and_no_job():
    cluster = _cluster(12, 3, 0.25)
    plan = _plans(np.random.default_rng(3), 1, None, 0)[0]
    rng = np.random.default_rng(4)
    with pytest.raises(ValueError, match="two generators"):
        make_jobs([plan], rng, rng, cluster)
    before = rng.bit_generator.state
    assert make_jobs([], rng, np.random.default_rng(5), cluster) == []
    assert rng.bit_generator.state == before
    reps = place_replicas(np.random.default_rng(9), 7, cluster)
    assert reps.shape == (7, 3) and all(len(set(r)) == 3 for r in reps.tolist())
