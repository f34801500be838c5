"""What a workload config asks of the cluster, from the config alone: the throughput of a phase
when its tasks fill every slot, the synthetic generator's arrival rate, and the jobs and tasks an
episode is expected to hold (the size limits of :mod:`mrsched_gym.config.limits` read them; the
generators of :mod:`mrsched_gym.workloads` draw with them)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from mrsched_gym.models.contention import processor_share, spill_slowdown
from mrsched_gym.workloads.profiles import PROFILES, JobTypeProfile

if TYPE_CHECKING:
    from mrsched_gym.config.cluster import ClusterConfig
    from mrsched_gym.config.workload import WorkloadConfig


#: :func:`phase_throughput`'s results by ``(id(cluster), demand, reduce)``, each with the
#: cluster it was computed for: a frozen section gives the same result each time, and the entry
#: keeps it alive, so its id goes to no other object while the entry is kept. A job draw asks for
#: a handful of distinct keys thousands of times.
_THROUGHPUT: dict[tuple[int, tuple[float, ...], bool],
                  tuple[ClusterConfig, tuple[float, float]]] = {}
#: Entries kept before the cache starts afresh.
THROUGHPUT_KEPT = 256


def phase_throughput(cluster: ClusterConfig, demand: tuple[float, float, float, float],
                     reduce: bool) -> tuple[float, float]:
    """``(concurrency, throughput)`` of one phase when its tasks fill every slot of the cluster
    (computed once per cluster, demand and phase: :func:`compute_phase_throughput`)."""
    key = (id(cluster), demand, reduce)
    hit = _THROUGHPUT.get(key)
    if hit is not None:
        return hit[1]
    out = compute_phase_throughput(cluster, demand, reduce)
    if len(_THROUGHPUT) >= THROUGHPUT_KEPT:
        _THROUGHPUT.clear()
    _THROUGHPUT[key] = (cluster, out)
    return out


def compute_phase_throughput(cluster: ClusterConfig, demand: tuple[float, float, float, float],
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


def default_reduces(profile: JobTypeProfile, n_maps: int, map_only: bool = False) -> int:
    """Reduce tasks of a job of ``profile`` with ``n_maps`` maps when its config gives none (the
    type's reduces-per-map ratio, at least one; none for a map-only job)."""
    if map_only:
        return 0
    if profile.reduces_per_map <= 0:
        return 1 if profile.reduce_work_s > 0 and profile.name in ("combine", "select") else 0
    return max(1, int(round(n_maps * profile.reduces_per_map)))


def positive_type_mix(cfg: WorkloadConfig) -> tuple[list[str], np.ndarray, list[JobTypeProfile]]:
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
    _, probs, profiles = positive_type_mix(cfg)
    per_job_m = per_job_r = 0.0
    for pr, p in zip(probs, profiles, strict=False):
        nm = cfg.size_mean
        sc = cfg.task_work_scale
        per_job_m += pr * nm * sc * p.map_work_s / phase_throughput(cluster, p.map_demand,
                                                                      False)[1]
        nr = default_reduces(p, max(1, int(round(nm))), cfg.map_only)
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
            n_red = (spec.n_reduces if spec.n_reduces is not None
                     else default_reduces(p, spec.n_maps))
            if n_red > 0:
                return f"workload.jobs[{i}] ({spec.type}) has {n_red} reduce task(s)"
        return ""
    if cfg.kind == "synthetic":
        for name, w in cfg.type_mix.items():
            if w > 0 and default_reduces(PROFILES[name], 1, cfg.map_only) > 0:
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
            n_red = (spec.n_reduces if spec.n_reduces is not None
                     else default_reduces(p, spec.n_maps))
            tasks += spec.n_maps + n_red
        return float(len(cfg.jobs)), float(tasks)
    if cfg.kind != "synthetic":
        return 0.0, 0.0
    _, probs, profiles = positive_type_mix(cfg)
    size = max(1, int(round(min(cfg.size_mean, 1e12))))
    per_job = sum(pr * (cfg.size_mean + default_reduces(p, size, cfg.map_only))
                  for pr, p in zip(probs, profiles, strict=False))
    jobs = max(1.0, arrival_rate(cfg, cluster) * cfg.duration_s)
    return jobs, jobs * per_job
