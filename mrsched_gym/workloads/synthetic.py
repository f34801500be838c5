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
from dataclasses import dataclass, replace

import numpy as np

from mrsched_gym.config import ClusterConfig, JobSpec, WorkloadConfig
from mrsched_gym.models.contention import processor_share, spill_slowdown
from mrsched_gym.workloads.profiles import PROFILES, TYPE_NAMES, JobTypeProfile


@dataclass
class JobDraw:
    """One job as drawn at reset (plain data; the simulator turns it into live state).

    Attributes:
        type_idx: Index into :data:`TYPE_NAMES`.
        arrival_s: Submission time.
        deadline_s: Absolute deadline, or ``inf`` when the job has none.
        priority: Priority class.
        weight: Penalty / share weight.
        map_work: ``[n_maps]`` work of each map task (reference seconds).
        reduce_work: ``[n_reduces]`` work of each reduce task (reference seconds).
        map_mult: ``[n_maps]`` per-task demand multiplier.
        reduce_mult: ``[n_reduces]`` per-task demand multiplier.
        replicas: ``[n_maps, replication]`` nodes holding each map's input block.
        label: Optional label.
        alone_s: Estimated completion time alone on the cluster (:func:`alone_time_s`).
        map_alone_s: The same for its map phase alone (the deadline base with
            ``deadline_scope: map``).
        map_mean_s: The mean the map work was drawn around (reference seconds): the job's
            expected task work, from which its time alone is estimated (a scheduler's
            estimate; the draw's own mean differs from it).
        reduce_mean_s: The same for the reduce work.
        deadline_factor: What multiplied the deadline base (``deadline_s = arrival_s +
            deadline_factor x base``), or ``nan`` when the deadline was given in seconds or
            the job has none; ``workload.deadline_base: alone`` re-bases such deadlines on the
            time alone simulated (:mod:`mrsched_gym.sim.alone`).
    """

    type_idx: int
    arrival_s: float
    deadline_s: float
    priority: int
    weight: float
    map_work: np.ndarray
    reduce_work: np.ndarray
    map_mult: np.ndarray
    reduce_mult: np.ndarray
    replicas: np.ndarray
    label: str = ""
    alone_s: float = 0.0
    map_alone_s: float = 0.0
    map_mean_s: float = math.nan
    reduce_mean_s: float = math.nan
    deadline_factor: float = math.nan


def _lognormal(rng: np.random.Generator, mean: float, cv: float, size: int) -> np.ndarray:
    if cv <= 0:
        return np.full(size, mean)
    s2 = math.log1p(cv * cv)
    return rng.lognormal(math.log(mean) - s2 / 2, math.sqrt(s2), size=size)


def phase_throughput(cluster: ClusterConfig, demand: tuple[float, float, float, float],
                     reduce: bool) -> tuple[float, float]:
    """``(concurrency, throughput)`` of one phase when its tasks fill every slot of the cluster.

    Concurrency is the number of tasks running at once (slots in slots mode; tasks that fit by
    their largest demand in containers mode). Throughput is the reference work done per second:
    the sum over those tasks of CPU speed x their share under the rate model of
    :mod:`mrsched_gym.sim.rates` (CPU/IO/network sharing and the memory allocation; the same
    formulas, :mod:`mrsched_gym.models.contention`).
    """
    conc = 0.0
    thr = 0.0
    for g in cluster.nodes:
        if cluster.resource_mode == "slots":
            k = g.effective_reduce_slots if reduce else g.effective_map_slots
            mem_share = 1.0 / (g.effective_map_slots + g.effective_reduce_slots)
        else:
            k = max(1, int(1.0 / max(max(demand[:3]), 1e-3)))
            mem_share = demand[2]
        share = processor_share(k * demand[1], k * demand[3], k * demand[0])
        f_mem = 1.0 if mem_share >= demand[2] else 1.0 / spill_slowdown(
            mem_share, demand[2], cluster.swap_slowdown)
        conc += g.count * k
        thr += g.count * k * g.cpu_speed * share * f_mem
    return conc, thr


def _phase_alone_s(cluster: ClusterConfig, n_tasks: int, work_s: float, cv: float,
                   demand: tuple[float, float, float, float], reduce: bool) -> float:
    """Time for ``n_tasks`` of one phase when a lone job fills every slot of the cluster."""
    conc, thr = phase_throughput(cluster, demand, reduce)
    waves = math.ceil(n_tasks / conc)
    return (waves * work_s + 2.0 * cv * work_s) / (thr / conc)


def phase_alone_times(profile: JobTypeProfile, n_maps: int, n_reduces: int, map_work_s: float,
                      reduce_work_s: float, cluster: ClusterConfig) -> tuple[float, float]:
    """``(map_s, reduce_s)``: each phase's completion time when the job is alone on the cluster.

    Analytic: waves x mean task work divided by the per-task speed a task gets when the job's
    tasks fill every slot of that phase (:func:`phase_throughput`), plus a straggler tail of two
    standard deviations of task work; ``reduce_s`` is 0 for a map-only job. Accelerators and
    interference are ignored (the base is a dedicated cluster).
    """
    m = _phase_alone_s(cluster, n_maps, map_work_s, profile.map_cv, profile.map_demand, False)
    r = 0.0
    if n_reduces > 0:
        r = _phase_alone_s(cluster, n_reduces, reduce_work_s, profile.reduce_cv,
                           profile.reduce_demand, True)
    return m, r


def alone_time_s(profile: JobTypeProfile, n_maps: int, n_reduces: int, map_work_s: float,
                 reduce_work_s: float, cluster: ClusterConfig) -> float:
    """Estimated completion time of a job alone on the cluster: both phases of
    :func:`phase_alone_times` (the deadline base with ``deadline_scope: job``)."""
    m, r = phase_alone_times(profile, n_maps, n_reduces, map_work_s, reduce_work_s, cluster)
    return m + r


def deadline_base_s(profile: JobTypeProfile, n_maps: int, n_reduces: int, map_work_s: float,
                    reduce_work_s: float, cluster: ClusterConfig, scope: str) -> float:
    """What ``deadline_factor`` multiplies: the job's completion time alone (``scope`` ``"job"``)
    or its map phase's (``"map"``, MIMP 3.1 and Eq. 4: the deadline covers the map phase)."""
    m, r = phase_alone_times(profile, n_maps, n_reduces, map_work_s, reduce_work_s, cluster)
    return m if scope == "map" else m + r


def _n_reduces(profile: JobTypeProfile, n_maps: int, map_only: bool = False) -> int:
    if map_only:
        return 0
    if profile.reduces_per_map <= 0:
        return 1 if profile.reduce_work_s > 0 and profile.name in ("combine", "select") else 0
    return max(1, int(round(n_maps * profile.reduces_per_map)))


def place_replicas(rng: np.random.Generator, n: int, cluster: ClusterConfig) -> np.ndarray:
    """``[n, effective_replication]`` distinct data nodes holding each of ``n`` blocks: uniform
    over every node, or over the dedicated nodes with ``hdfs_on: dedicated`` (MIMP 3.1)."""
    rep = cluster.effective_replication
    if cluster.hdfs_on == "all":
        return _replicas(rng, n, cluster.n_nodes, rep)
    nodes = np.asarray(cluster.data_nodes, dtype=np.int64)
    return nodes[_replicas(rng, n, len(nodes), rep)]


def _replicas(rng: np.random.Generator, n: int, n_nodes: int, rep: int) -> np.ndarray:
    """``[n, rep]`` distinct random nodes per block, vectorised (no per-block shuffles)."""
    first = rng.integers(0, n_nodes, size=n)
    out = np.empty((n, rep), dtype=np.int64)
    out[:, 0] = first
    if rep > 1:
        # Distinct offsets in 1..n_nodes-1, drawn without replacement by the shifting trick.
        offs = np.empty((n, rep - 1), dtype=np.int64)
        for k in range(rep - 1):
            o = rng.integers(1, n_nodes - k, size=n)
            for j in range(k):   # shift past earlier offsets, in increasing order
                prev = np.sort(offs[:, :k], axis=1)[:, j]
                o = np.where(o >= prev, o + 1, o)
            offs[:, k] = o
        out[:, 1:] = (first[:, None] + offs) % n_nodes
    return out


def make_job(profile_idx: int, arrival: float, deadline: float, priority: int, weight: float,
             n_maps: int, n_red: int, mw: float, rw: float, task_rng: np.random.Generator,
             place_rng: np.random.Generator, cluster: ClusterConfig, label: str = "",
             work_cv: float | None = None, map_work: np.ndarray | None = None,
             reduce_work: np.ndarray | None = None, deadline_factor: float = math.nan) -> JobDraw:
    """One job: task work drawn lognormal around ``mw``/``rw`` unless given as arrays.

    Shared by the synthetic generator, fixed job lists and trace replay
    (:mod:`mrsched_gym.workloads.trace`), so every workload kind draws its tasks the same way.

    Args:
        profile_idx: Index of the job type into :data:`TYPE_NAMES`.
        arrival: Submission time (s).
        deadline: Absolute deadline (s), ``inf`` for none.
        priority: Priority class.
        weight: Penalty / share weight.
        n_maps: Number of map tasks.
        n_red: Number of reduce tasks.
        mw: Mean work of a map task (reference seconds).
        rw: Mean work of a reduce task (reference seconds).
        task_rng: Stream for per-task work and demand multipliers.
        place_rng: Stream for block replica placement.
        cluster: The cluster (phase times alone, demand spread, data nodes).
        label: Optional label.
        work_cv: Coefficient of variation of task work; ``None`` takes the type's.
        map_work: Given map work per task (skips the map-work draw).
        reduce_work: Given reduce work per task (skips the reduce-work draw).
        deadline_factor: The factor behind ``deadline`` (``nan``: none, see
            :attr:`JobDraw.deadline_factor`).

    Returns:
        The job's :class:`JobDraw`.
    """
    p = PROFILES[TYPE_NAMES[profile_idx]]
    cv = cluster.task_demand_cv
    map_alone, red_alone = phase_alone_times(p, n_maps, n_red, mw, rw, cluster)
    if map_work is None:
        map_work = _lognormal(task_rng, mw, p.map_cv if work_cv is None else work_cv, n_maps)
    if reduce_work is None:
        reduce_work = _lognormal(task_rng, rw, p.reduce_cv if work_cv is None else work_cv,
                                 n_red)
    return JobDraw(
        type_idx=profile_idx, arrival_s=arrival, deadline_s=deadline, priority=priority,
        weight=weight, map_work=map_work, reduce_work=reduce_work,
        map_mult=_lognormal(task_rng, 1.0, cv, n_maps),
        reduce_mult=_lognormal(task_rng, 1.0, cv, n_red),
        replicas=place_replicas(place_rng, n_maps, cluster),
        label=label, alone_s=map_alone + red_alone, map_alone_s=map_alone,
        map_mean_s=float(mw), reduce_mean_s=float(rw), deadline_factor=float(deadline_factor))


def fixed_jobs(jobs: tuple[JobSpec, ...], cluster: ClusterConfig, task_rng: np.random.Generator,
               place_rng: np.random.Generator, deadline_scope: str = "job",
               job_rng: np.random.Generator | None = None) -> list[JobDraw]:
    """Turn a fixed job list into draws (task lengths and replicas are still random); a
    ``deadline_factor`` multiplies :func:`deadline_base_s` of ``deadline_scope``.

    A job with ``arrival_jitter_s`` > 0 is submitted at ``arrival_s`` + U(-j, j), drawn from
    ``job_rng`` in the list's order (one draw per such job, none otherwise, so lists without
    jitter draw exactly as before); its deadline moves with it (it is relative to submission).
    """
    out = []
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
        n_red = spec.n_reduces if spec.n_reduces is not None else _n_reduces(p, spec.n_maps)
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
        out.append(make_job(TYPE_NAMES.index(spec.type), spec.arrival_s, deadline,
                            spec.priority, spec.weight, spec.n_maps, n_red, mw, rw, task_rng,
                            place_rng, cluster, spec.label, spec.work_cv, deadline_factor=factor))
    return out


def _type_mix(cfg: WorkloadConfig) -> tuple[list[str], np.ndarray, list[JobTypeProfile]]:
    """``(names, probabilities, profiles)`` of the job types with a positive weight."""
    names = [n for n, w in cfg.type_mix.items() if w > 0]
    probs = np.array([cfg.type_mix[n] for n in names], dtype=float)
    probs /= probs.sum()
    return names, probs, [PROFILES[n] for n in names]


def arrival_rate(cfg: WorkloadConfig, cluster: ClusterConfig) -> float:
    """Jobs per second of the synthetic generator (``inf`` if the per-job work rounds to 0).

    Offered load per phase: lambda x E[work of the phase] / phase throughput; the rate makes the
    busier phase's load equal to ``cfg.load``.
    """
    _, probs, profiles = _type_mix(cfg)
    per_job_m = per_job_r = 0.0
    for pr, p in zip(probs, profiles, strict=False):
        nm = cfg.size_mean
        sc = cfg.task_work_scale
        per_job_m += pr * nm * sc * p.map_work_s / phase_throughput(cluster, p.map_demand,
                                                                      False)[1]
        nr = _n_reduces(p, max(1, int(round(nm))), cfg.map_only)
        if nr:                                # a maps-only cluster has no reduce throughput
            per_job_r += pr * nr * sc * p.reduce_work_s / phase_throughput(
                cluster, p.reduce_demand, True)[1]
    busier = max(per_job_m, per_job_r)
    with np.errstate(over="ignore"):          # a subnormal per-job work: the rate is inf
        return cfg.load / busier if busier > 0 else math.inf


def workload_has_reduces(cfg: WorkloadConfig) -> str:
    """Why the workload's jobs have reduce tasks (``""`` when none does or, for a trace replay,
    when only the trace can tell: :func:`mrsched_gym.workloads.trace.check_trace_reduces`)."""
    if cfg.kind == "jobs":
        for i, spec in enumerate(cfg.jobs):
            p = PROFILES[spec.type]
            n_red = spec.n_reduces if spec.n_reduces is not None else _n_reduces(p, spec.n_maps)
            if n_red > 0:
                return f"workload.jobs[{i}] ({spec.type}) has {n_red} reduce task(s)"
        return ""
    if cfg.kind == "synthetic":
        for name, w in cfg.type_mix.items():
            if w > 0 and _n_reduces(PROFILES[name], 1, cfg.map_only) > 0:
                return f"workload.type_mix draws {name} jobs, which have reduce tasks"
    return ""


def expected_size(cfg: WorkloadConfig, cluster: ClusterConfig) -> tuple[float, float]:
    """``(jobs, tasks)`` an episode of a synthetic or fixed-list workload is expected to hold.

    Synthetic: the Poisson mean rate x ``duration_s`` (at least one job) times the mean map and
    reduce tasks of the type mix. Fixed list: exact. Trace replay: ``(0, 0)``, the trace file
    decides (:func:`mrsched_gym.workloads.trace.check_trace_size`).
    """
    if cfg.kind == "jobs":
        tasks = 0
        for spec in cfg.jobs:
            p = PROFILES[spec.type]
            n_red = spec.n_reduces if spec.n_reduces is not None else _n_reduces(p, spec.n_maps)
            tasks += spec.n_maps + n_red
        return float(len(cfg.jobs)), float(tasks)
    if cfg.kind != "synthetic":
        return 0.0, 0.0
    _, probs, profiles = _type_mix(cfg)
    size = max(1, int(round(min(cfg.size_mean, 1e12))))
    per_job = sum(pr * (cfg.size_mean + _n_reduces(p, size, cfg.map_only))
                  for pr, p in zip(probs, profiles, strict=False))
    jobs = max(1.0, arrival_rate(cfg, cluster) * cfg.duration_s)
    return jobs, jobs * per_job


def synthetic_jobs(cfg: WorkloadConfig, cluster: ClusterConfig, job_rng: np.random.Generator,
                   task_rng: np.random.Generator, place_rng: np.random.Generator) -> list[JobDraw]:
    """Thesis Table 5.6 generator (see module docstring)."""
    names, probs, profiles = _type_mix(cfg)
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
    out = []
    for i in range(n_jobs):
        p = profiles[types[i]]
        n_maps = int(sizes[i])
        n_red = _n_reduces(p, n_maps, cfg.map_only)
        mw = p.map_work_s * cfg.task_work_scale
        rw = p.reduce_work_s * cfg.task_work_scale
        deadline = (arrivals[i] + factors[i] * deadline_base_s(p, n_maps, n_red, mw, rw, cluster,
                                                               cfg.deadline_scope)
                    if has_deadline[i] else math.inf)
        out.append(make_job(TYPE_NAMES.index(p.name), float(arrivals[i]), float(deadline),
                            int(high[i]), float(weights[i]), n_maps, n_red, mw, rw, task_rng,
                            place_rng, cluster,
                            deadline_factor=float(factors[i]) if has_deadline[i] else math.nan))
    return out


def draw_jobs(cfg: WorkloadConfig, cluster: ClusterConfig, job_rng: np.random.Generator,
              task_rng: np.random.Generator, place_rng: np.random.Generator) -> list[JobDraw]:
    """Draw the episode's jobs for ``cfg`` (synthetic or a fixed list)."""
    if cfg.kind == "jobs":
        return fixed_jobs(cfg.jobs, cluster, task_rng, place_rng, cfg.deadline_scope, job_rng)
    if cfg.kind == "trace":
        from mrsched_gym.workloads.trace import trace_jobs
        return trace_jobs(cfg, cluster, job_rng, task_rng, place_rng)
    return synthetic_jobs(cfg, cluster, job_rng, task_rng, place_rng)
