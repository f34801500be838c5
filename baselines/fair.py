"""Hadoop's sharing schedulers: Fair (+ delay scheduling), Capacity and DRF.

* Fair: the Hadoop Fair Scheduler (Zaharia et al., EuroSys 2010, "Delay Scheduling"): jobs below
  their pool's min share first (most starved first), then the lowest running-tasks / weight ratio;
  delay scheduling skips a job up to ``delay`` times while it has no node-local map on the offered
  node, then allows rack-local, and after ``2 * delay`` skips any placement (Zaharia's two-level
  wait, counted in skipped offers).
* Capacity: the Hadoop Capacity Scheduler: queues with guaranteed capacity shares; the free slot
  goes to the queue furthest below its guarantee (used / capacity), FIFO within the queue.
* DRF: Dominant Resource Fairness (Ghodsi et al., NSDI 2011, the Mesos allocator MROrchestrator
  compares against, its section II): the job with the smallest (weighted) dominant share of the
  cluster's CPU, disk bandwidth and memory gets the next task.

MROrchestrator is not a scheduler but a node-level resource manager under one: it
is a cluster setting (``cluster.orchestrator: uniform | regression``, Algorithms 1-2 in
:mod:`mrsched_gym.sim.rates`), with registered orchestrated worlds such as
``mrsched/HadoopOrchestrated-v0`` where every policy runs under it. Its paper's comparison (Fair
with vs without it) is the ``mrorchestrator`` reproduction.
"""

from __future__ import annotations

from collections.abc import Mapping

from mrsched_gym.baselines.base import Scheduler, default_action
from mrsched_gym.baselines.common import argmin_candidate, running_by_job
from mrsched_gym.sim.decision import ScheduleCandidate
from mrsched_gym.sim.state import MAP, NODE_LOCAL, RACK_LOCAL


class FairScheduler(Scheduler):
    """Hadoop Fair Scheduler with min shares, weights and delay scheduling.

    Args:
        delay: Skips allowed per job before a rack-local launch (``2 * delay`` before off-rack);
            0 disables delay scheduling. Zaharia et al. show a small D already gives near-full
            locality when jobs are short; we default to 3 skips.
        pools: ``"job"`` (each job its own pool, Hadoop's default) or ``"type"`` (one pool per
            job type).
        min_shares: Pool name -> minimum share in tasks (``"type"`` pools).
        weights: Pool name -> weight (multiplies the job's own weight).
    """

    name = "fair"

    def __init__(self, delay: int = 3, pools: str = "job",
                 min_shares: Mapping[str, float] | None = None,
                 weights: Mapping[str, float] | None = None) -> None:
        if pools not in ("job", "type"):
            raise ValueError(f"FairScheduler.pools must be 'job' or 'type', got {pools!r}")
        if delay < 0:
            raise ValueError(f"FairScheduler.delay must be >= 0, got {delay}")
        self.delay = int(delay)
        self.pools = pools
        self.min_shares = dict(min_shares or {})
        self.weights = dict(weights or {})
        self.skips: dict[int, int] = {}

    def reset(self, sim, seed: int | None = None) -> None:
        """Forget the delay-scheduling skip counts."""
        self.skips = {}

    def _pool(self, job) -> str:
        return job.profile.name if self.pools == "type" else f"job{job.jid}"

    def order_key(self, sim, running: dict):
        """Fair-share comparator: (not below min share, share ratio, arrival)."""
        pool_run: dict[str, int] = {}
        if self.pools == "type":
            for jid, ts in running.items():
                p = self._pool(sim.jobs[jid])
                pool_run[p] = pool_run.get(p, 0) + len(ts)

        def key(c: ScheduleCandidate) -> tuple:
            job = c.job
            run = len(running.get(job.jid, ()))
            pool = self._pool(job)
            prun = pool_run.get(pool, run)
            ms = self.min_shares.get(pool, 0.0)
            needy = prun < ms
            w = job.weight * self.weights.get(pool, 1.0)
            ratio = prun / ms if needy else run / w
            return (not needy, ratio, job.jid, c.phase)
        return key

    def decide(self, sim) -> int:
        """The first candidate in fair-share order (:meth:`order_key`) that delay scheduling
        lets launch here; skip when every job waits for a more local slot."""
        a = default_action(sim)
        if a is not None:
            return a
        key = self.order_key(sim, running_by_job(sim))
        cands = sim.decision.candidates
        order = sorted(range(len(cands)), key=lambda i: key(cands[i]))
        if self.delay == 0:
            return order[0]
        for i in order:
            job, phase, loc = cands[i].job, cands[i].phase, cands[i].locality
            if phase != MAP or loc == NODE_LOCAL:
                if phase == MAP:
                    self.skips[job.jid] = 0
                return i
            s = self.skips.get(job.jid, 0)
            if (loc == RACK_LOCAL and s >= self.delay) or s >= 2 * self.delay:
                return i
            self.skips[job.jid] = s + 1
        return sim.K                           # every job waits for locality: leave idle


class CapacityScheduler(Scheduler):
    """Hadoop Capacity Scheduler: guaranteed queue shares, FIFO within a queue.

    Args:
        queues: Job type -> guaranteed capacity share. ``None``: one queue per job type of the
            scenario's ``type_mix`` with shares proportional to the mix (our choice; the seeds do
            not configure queues). Types without a queue go to a ``default`` queue.
    """

    name = "capacity"

    def __init__(self, queues: Mapping[str, float] | None = None) -> None:
        self.queues = dict(queues) if queues else None
        self.share: dict[str, float] = {}

    def reset(self, sim, seed: int | None = None) -> None:
        """Normalise the queue shares (by default one queue per job type of the scenario)."""
        q = self.queues or dict(sim.scenario.workload.type_mix) or {"default": 1.0}
        tot = sum(q.values())
        self.share = {k: v / tot for k, v in q.items()}

    def _queue(self, job) -> str:
        return job.profile.name if job.profile.name in self.share else "default"

    def decide(self, sim) -> int:
        """A candidate of the queue furthest below its guaranteed share (running tasks / share),
        oldest job first."""
        a = default_action(sim)
        if a is not None:
            return a
        used: dict[str, int] = {}
        for t in sim.running.values():
            q = self._queue(t.job)
            used[q] = used.get(q, 0) + 1

        def key(c: ScheduleCandidate) -> tuple:
            q = self._queue(c.job)
            return (used.get(q, 0) / self.share.get(q, 1e-9), c.job.jid, c.phase)
        return argmin_candidate(sim.decision.candidates, key)


class DRFScheduler(Scheduler):
    """Dominant Resource Fairness (progressive filling at task granularity).

    The dominant share of a job is max over (CPU, disk, memory) of its running tasks' demand on
    that resource divided by the cluster total (a task's demand is its profile fraction times the
    capacity of the node it runs on: cores x speed, disk MB/s, memory GB), divided by the job's
    weight. The candidate job with the smallest dominant share gets the slot.
    """

    name = "drf"

    def reset(self, sim, seed: int | None = None) -> None:
        """Note each node's capacity (cores x speed, disk MB/s, memory GB) and the totals."""
        n = range(sim.n_nodes)
        self.node_cap = [(sim.cores[i] * sim.speed[i], sim.disk_mb_s[i], sim.mem_gb[i]) for i in n]
        self.total = [max(sum(c[r] for c in self.node_cap), 1e-9) for r in range(3)]

    def decide(self, sim) -> int:
        """The candidate whose job has the smallest weighted dominant share."""
        a = default_action(sim)
        if a is not None:
            return a
        share: dict[int, list[float]] = {}
        for t in sim.running.values():
            s = share.setdefault(t.job.jid, [0.0, 0.0, 0.0])
            cap = self.node_cap[t.node]
            for r in range(3):
                s[r] += t.demand[r] * cap[r]
        tot = self.total

        def key(c: ScheduleCandidate) -> tuple:
            s = share.get(c.job.jid)
            dom = max(s[r] / tot[r] for r in range(3)) if s else 0.0
            return (dom / c.job.weight, c.job.jid, c.phase)
        return argmin_candidate(sim.decision.candidates, key)
