"""Jobs as drawn at reset (:class:`JobDraw`) and how one is made from its type and size: task
work and demand draws, the block replicas of its maps, and its completion time alone (the
deadline base). The synthetic generator and fixed job lists
(:mod:`mrsched_gym.workloads.synthetic`) build an episode's jobs with :func:`make_jobs` (one
draw per stream for all of them), trace replay (:mod:`mrsched_gym.workloads.trace`) with
:func:`make_job` (one job at a time: its task model may draw between two jobs); both draw a
job's tasks the same way.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from mrsched_gym.config import ClusterConfig
from mrsched_gym.config.sizing import phase_throughput
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


def _lognormal_params(mean: float, cv: float) -> tuple[float, float]:
    """The log-mean and log-standard deviation of a lognormal of ``mean`` and ``cv`` (> 0)."""
    s2 = math.log1p(cv * cv)
    return math.log(mean) - s2 / 2, math.sqrt(s2)


def _lognormal(rng: np.random.Generator, mean: float, cv: float, size: int) -> np.ndarray:
    if cv <= 0:
        return np.full(size, mean)
    mu, sigma = _lognormal_params(mean, cv)
    return rng.lognormal(mu, sigma, size=size)


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


def place_replicas(rng: np.random.Generator, n: int, cluster: ClusterConfig) -> np.ndarray:
    """``[n, effective_replication]`` distinct data nodes holding each of ``n`` blocks: uniform
    over every node, or over the dedicated nodes with ``hdfs_on: dedicated`` (MIMP 3.1)."""
    rep = cluster.effective_replication
    if cluster.hdfs_on == "all":
        return _replicas(rng, n, cluster.n_nodes, rep)
    nodes = np.asarray(cluster.data_nodes, dtype=np.int64)
    return nodes[_replicas(rng, n, len(nodes), rep)]


def _replicas(rng: np.random.Generator, n: int, n_nodes: int, rep: int) -> np.ndarray:
    """``[n, rep]`` distinct random nodes per block, vectorised (no per-block shuffles): the
    first replicas, then the offsets to the others (:func:`_distinct`)."""
    first = rng.integers(0, n_nodes, size=n)
    draws = [rng.integers(1, n_nodes - k, size=n) for k in range(rep - 1)]
    return _distinct(first, draws, n_nodes)


def _distinct(first: np.ndarray, draws: list[np.ndarray], n_nodes: int) -> np.ndarray:
    """``[len(first), 1 + len(draws)]`` nodes per block: ``first``, then distinct offsets in
    ``1..n_nodes-1`` from it, the ``k``-th drawn in ``1..n_nodes-1-k`` (``draws[k]``) and
    shifted past the earlier ones in increasing order (drawing without replacement)."""
    n, rep = len(first), 1 + len(draws)
    out = np.empty((n, rep), dtype=np.int64)
    out[:, 0] = first
    if rep > 1:
        offs = np.empty((n, rep - 1), dtype=np.int64)
        for k, o in enumerate(draws):
            if k:
                earlier = np.sort(offs[:, :k], axis=1) if k > 1 else offs
                for j in range(k):   # shift past earlier offsets, in increasing order
                    o = np.where(o >= earlier[:, j], o + 1, o)
            offs[:, k] = o
        out[:, 1:] = (first[:, None] + offs) % n_nodes
    return out


def place_replicas_of(rng: np.random.Generator, sizes: list[int],
                      cluster: ClusterConfig) -> list[np.ndarray]:
    """:func:`place_replicas` for several jobs' blocks (``sizes[j]`` blocks of job ``j``), in
    one draw: the same nodes as one call per job in the list's order."""
    rep = cluster.effective_replication
    if cluster.hdfs_on == "all":
        reps = _replicas_of(rng, sizes, cluster.n_nodes, rep)
    else:
        nodes = np.asarray(cluster.data_nodes, dtype=np.int64)
        reps = nodes[_replicas_of(rng, sizes, len(nodes), rep)]
    return np.split(reps, np.cumsum(sizes[:-1])) if sizes else []


def _replicas_of(rng: np.random.Generator, sizes: list[int], n_nodes: int,
                 rep: int) -> np.ndarray:
    """``[sum(sizes), rep]`` distinct random nodes per block, vectorised (no per-block shuffles).

    Per job, in the list's order, the stream gives the job's first replica of each block, then
    the blocks' offsets to the second, third, ... replica (distinct offsets in ``1..n_nodes-1``,
    drawn without replacement by the shifting trick). The draws of every job are taken in one
    call with per-value bounds: numpy's bounded integers draw value by value from the stream
    whether the bounds are scalars or arrays, so the values are the ones a call per job and
    bound would give (:func:`_replicas`; ``tests/test_job_draws.py`` holds this).
    """
    n_of = np.asarray(sizes, dtype=np.int64)
    total = int(n_of.sum())
    job = np.repeat(np.arange(len(sizes)), n_of)            # each block's job
    first_of_job = np.cumsum(n_of) - n_of                   # each job's first block
    n = n_of[job]
    block_start = first_of_job[job]
    # Position in the stream of each block's k-th value (k = 0: the first replica).
    at = rep * block_start + (np.arange(total) - block_start)
    low = np.empty(rep * total, dtype=np.int64)
    high = np.empty(rep * total, dtype=np.int64)
    low[at] = 0
    high[at] = n_nodes
    for k in range(rep - 1):
        low[at + (k + 1) * n] = 1
        high[at + (k + 1) * n] = n_nodes - k
    drawn = rng.integers(low, high) if total else np.empty(0, dtype=np.int64)
    return _distinct(drawn[at], [drawn[at + (k + 1) * n] for k in range(rep - 1)], n_nodes)


@dataclass(frozen=True)
class JobPlan:
    """One job before its per-task draws: the arguments of :func:`make_job` without the
    streams and the cluster (their meanings are there)."""

    profile_idx: int
    arrival: float
    deadline: float
    priority: int
    weight: float
    n_maps: int
    n_red: int
    mw: float
    rw: float
    label: str = ""
    work_cv: float | None = None
    map_work: np.ndarray | None = None
    reduce_work: np.ndarray | None = None
    deadline_factor: float = math.nan


def make_job(profile_idx: int, arrival: float, deadline: float, priority: int, weight: float,
             n_maps: int, n_red: int, mw: float, rw: float, task_rng: np.random.Generator,
             place_rng: np.random.Generator, cluster: ClusterConfig, label: str = "",
             work_cv: float | None = None, map_work: np.ndarray | None = None,
             reduce_work: np.ndarray | None = None, deadline_factor: float = math.nan) -> JobDraw:
    """One job: task work drawn lognormal around ``mw``/``rw`` unless given as arrays (the
    draws one job at a time; :func:`make_jobs` draws many jobs at once with the same values).

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


def make_jobs(plans: list[JobPlan], task_rng: np.random.Generator,
              place_rng: np.random.Generator, cluster: ClusterConfig) -> list[JobDraw]:
    """The jobs of ``plans``, in one draw per stream: the same jobs as :func:`make_job` called
    for each plan in order.

    Per job, ``task_rng`` gives, in this order, the map work, the reduce work (each lognormal
    around ``mw``/``rw`` with the type's or ``work_cv``'s coefficient of variation, unless
    given), then the map and the reduce tasks' demand multipliers (lognormal around 1 with
    ``cluster.task_demand_cv``); a coefficient of variation of 0 or less draws nothing (the
    mean itself). All of them are one ``lognormal`` call with per-value parameters, which
    numpy draws value by value as it does a call per job and array; ``place_rng`` gives the
    replicas (:func:`place_replicas_of`). The two streams must be two generators: the jobs
    one at a time took from both in turn, so one generator passed twice would give other
    values here.
    """
    if task_rng is place_rng:
        raise ValueError("make_jobs: task_rng and place_rng must be two generators")
    demand_cv = cluster.task_demand_cv
    log_means: list[float] = []
    log_sds: list[float] = []
    counts: list[int] = []
    pieces: list[list[np.ndarray | slice]] = []  # per job: an array, or its place in the draw
    drawn_so_far = 0
    for plan in plans:
        p = PROFILES[TYPE_NAMES[plan.profile_idx]]
        map_cv = p.map_cv if plan.work_cv is None else plan.work_cv
        red_cv = p.reduce_cv if plan.work_cv is None else plan.work_cv
        row: list[np.ndarray | slice] = []
        for given, mean, cv, size in ((plan.map_work, plan.mw, map_cv, plan.n_maps),
                                      (plan.reduce_work, plan.rw, red_cv, plan.n_red),
                                      (None, 1.0, demand_cv, plan.n_maps),
                                      (None, 1.0, demand_cv, plan.n_red)):
            if given is not None:
                row.append(given)
            elif cv <= 0:
                row.append(np.full(size, mean))
            else:
                mu, sigma = _lognormal_params(mean, cv)
                log_means.append(mu)
                log_sds.append(sigma)
                counts.append(size)
                row.append(slice(drawn_so_far, drawn_so_far + size))
                drawn_so_far += size
        pieces.append(row)
    drawn = (task_rng.lognormal(np.repeat(log_means, counts), np.repeat(log_sds, counts))
             if drawn_so_far else np.empty(0))
    replicas = place_replicas_of(place_rng, [plan.n_maps for plan in plans], cluster)
    out = []
    for plan, row, reps in zip(plans, pieces, replicas, strict=True):
        work = [drawn[piece] if isinstance(piece, slice) else piece for piece in row]
        p = PROFILES[TYPE_NAMES[plan.profile_idx]]
        map_alone, red_alone = phase_alone_times(p, plan.n_maps, plan.n_red, plan.mw, plan.rw,
                                                 cluster)
        out.append(JobDraw(
            type_idx=plan.profile_idx, arrival_s=plan.arrival, deadline_s=plan.deadline,
            priority=plan.priority, weight=plan.weight, map_work=work[0], reduce_work=work[1],
            map_mult=work[2], reduce_mult=work[3], replicas=reps, label=plan.label,
            alone_s=map_alone + red_alone, map_alone_s=map_alone, map_mean_s=float(plan.mw),
            reduce_mean_s=float(plan.rw), deadline_factor=float(plan.deadline_factor)))
    return out
