"""Workload generation: the synthetic generator of thesis Table 5.6 and fixed job lists.

Everything is drawn at reset, vectorised, from generators passed in (one stream for arrivals and
job attributes, one for per-task work and demand, one for block placement), so every policy sees
the same jobs, the same task lengths and the same replicas for a seed (common random numbers).

Synthetic workload (thesis 5.2.3, Table 5.6):

* Poisson arrivals over ``[0, duration_s)``; the rate follows from the load factor: for each
  phase, load = lambda x E[work of the phase per job] / the phase's throughput when its tasks fill
  every slot (:func:`phase_throughput`, i.e. the work the cluster can really do under the rate
  model); lambda makes the busier phase's load equal to ``load``.
* Number of map tasks lognormal with mean ``size_mean`` and standard deviation ``size_std``
  (thesis: mu = 62, sigma = 15.5; we read them as the mean and standard deviation of the task
  count, since a lognormal with log-mean 62 would be absurd). Reduces follow the type's ratio.
* Deadline = arrival + factor x completion time alone, factor ~ U[lo, hi] (thesis 1.5-4/8/12x,
  RDS 2.5x). Completion time alone = map waves x mean map work + reduce waves x mean reduce work
  on the whole cluster (:func:`alone_time_s`); with ``deadline_scope: map`` the deadline covers
  the map phase and its base is the map phase alone (:func:`deadline_base_s`, MIMP 3.1). With
  ``workload.deadline_base: alone`` the simulator re-bases every deadline given as a factor on
  the job's simulated time alone (:mod:`mrsched_gym.sim.alone`; the draw keeps its factor).
* Block replicas: ``replication`` distinct data nodes per map input block, uniform over the data
  nodes (every node, or the dedicated ones with ``cluster.hdfs_on: dedicated``, MIMP 3.1).
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from mrsched_gym.config import ClusterConfig, JobSpec, WorkloadConfig
from mrsched_gym.config.sizing import (
    arrival_rate,
    default_reduces,
    expected_size,
    phase_throughput,
    positive_type_mix,
    workload_has_reduces,
)
from mrsched_gym.workloads.jobs import (
    JobDraw,
    JobPlan,
    alone_time_s,
    deadline_base_s,
    make_job,
    make_jobs,
    phase_alone_times,
    place_replicas,
)
from mrsched_gym.workloads.profiles import PROFILES, TYPE_NAMES
from mrsched_gym.workloads.trace import trace_jobs

# The sizing and the job builder moved to mrsched_gym.config.sizing and
# mrsched_gym.workloads.jobs; they are still read from here.
__all__ = [
    "JobDraw", "alone_time_s", "arrival_rate", "deadline_base_s", "default_reduces", "draw_jobs",
    "expected_size", "fixed_jobs", "make_job", "phase_alone_times", "phase_throughput",
    "place_replicas", "positive_type_mix", "synthetic_jobs", "workload_has_reduces",
]


def fixed_jobs(jobs: tuple[JobSpec, ...], cluster: ClusterConfig, task_rng: np.random.Generator,
               place_rng: np.random.Generator, deadline_scope: str = "job",
               job_rng: np.random.Generator | None = None) -> list[JobDraw]:
    """Turn a fixed job list into draws (task lengths and replicas are still random); a
    ``deadline_factor`` multiplies :func:`deadline_base_s` of ``deadline_scope``.

    A job with ``arrival_jitter_s`` > 0 is submitted at ``arrival_s`` + U(-j, j), drawn from
    ``job_rng`` in the list's order (one draw per such job, none otherwise, so lists without
    jitter draw exactly as before); its deadline moves with it (it is relative to submission).
    """
    plans = []
    shift: dict[int, float] = {}
    for i, spec in enumerate(jobs):
        if spec.arrival_jitter_s > 0:
            if job_rng is None:
                raise ValueError(f"job {spec.label or i}: arrival_jitter_s needs a job stream")
            shift[i] = float(job_rng.uniform(-spec.arrival_jitter_s, spec.arrival_jitter_s))
    if shift:
        jobs = tuple(replace(s, arrival_s=s.arrival_s + shift[i], arrival_jitter_s=0.0)
                     if i in shift else s for i, s in enumerate(jobs))
    for spec in sorted(jobs, key=lambda s: s.arrival_s):
        p = PROFILES[spec.type]
        n_red = spec.n_reduces if spec.n_reduces is not None else default_reduces(p, spec.n_maps)
        mw = spec.map_work_s or p.map_work_s
        rw = spec.reduce_work_s or p.reduce_work_s
        factor = math.nan
        if spec.deadline_s is not None:
            deadline = spec.arrival_s + spec.deadline_s
        elif spec.deadline_factor is not None:
            factor = spec.deadline_factor
            deadline = spec.arrival_s + spec.deadline_factor * deadline_base_s(
                p, spec.n_maps, n_red, mw, rw, cluster, deadline_scope)
        else:
            deadline = math.inf
        plans.append(JobPlan(TYPE_NAMES.index(spec.type), spec.arrival_s, deadline,
                             spec.priority, spec.weight, spec.n_maps, n_red, mw, rw, spec.label,
                             spec.work_cv, deadline_factor=factor))
    return make_jobs(plans, task_rng, place_rng, cluster)


def synthetic_jobs(cfg: WorkloadConfig, cluster: ClusterConfig, job_rng: np.random.Generator,
                   task_rng: np.random.Generator, place_rng: np.random.Generator) -> list[JobDraw]:
    """Thesis Table 5.6 generator (see module docstring)."""
    names, probs, profiles = positive_type_mix(cfg)
    s2 = math.log1p((cfg.size_std / cfg.size_mean) ** 2)
    mu = math.log(cfg.size_mean) - s2 / 2
    rate = arrival_rate(cfg, cluster)                                  # jobs per second
    n_jobs = int(job_rng.poisson(rate * cfg.duration_s))
    n_jobs = max(n_jobs, 1)
    arrivals = np.sort(job_rng.uniform(0.0, cfg.duration_s, size=n_jobs))
    types = job_rng.choice(len(names), size=n_jobs, p=probs)
    sizes = np.maximum(1, np.rint(job_rng.lognormal(mu, math.sqrt(s2), size=n_jobs))).astype(int)
    lo, hi = cfg.deadline_factor
    factors = job_rng.uniform(lo, hi, size=n_jobs)
    has_deadline = job_rng.random(n_jobs) < cfg.deadline_fraction
    high = job_rng.random(n_jobs) < cfg.high_priority_fraction
    weights = job_rng.uniform(cfg.weight_range[0], cfg.weight_range[1], size=n_jobs)
    plans = []
    for i in range(n_jobs):
        p = profiles[types[i]]
        n_maps = int(sizes[i])
        n_red = default_reduces(p, n_maps, cfg.map_only)
        mw = p.map_work_s * cfg.task_work_scale
        rw = p.reduce_work_s * cfg.task_work_scale
        deadline = (arrivals[i] + factors[i] * deadline_base_s(p, n_maps, n_red, mw, rw, cluster,
                                                               cfg.deadline_scope)
                    if has_deadline[i] else math.inf)
        plans.append(JobPlan(TYPE_NAMES.index(p.name), float(arrivals[i]), float(deadline),
                             int(high[i]), float(weights[i]), n_maps, n_red, mw, rw,
                             deadline_factor=float(factors[i]) if has_deadline[i] else math.nan))
    return make_jobs(plans, task_rng, place_rng, cluster)


def draw_jobs(cfg: WorkloadConfig, cluster: ClusterConfig, job_rng: np.random.Generator,
              task_rng: np.random.Generator, place_rng: np.random.Generator,
              trace_rows: np.ndarray | None = None) -> list[JobDraw]:
    """Draw the episode's jobs for ``cfg`` (synthetic, a fixed list, or a trace replay of
    ``trace_rows``, :func:`~mrsched_gym.workloads.trace.trace_jobs`)."""
    if cfg.kind == "jobs":
        return fixed_jobs(cfg.jobs, cluster, task_rng, place_rng, cfg.deadline_scope, job_rng)
    if cfg.kind == "trace":
        return trace_jobs(cfg, cluster, job_rng, task_rng, place_rng, trace_rows)
    return synthetic_jobs(cfg, cluster, job_rng, task_rng, place_rng)
