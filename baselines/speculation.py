"""Speculative execution: LATE (Zaharia et al., OSDI 2008) and Hadoop's native speculation.

Both schedule jobs as Hadoop's FIFO does (the oldest job first; the LATE paper evaluates its
speculation under Hadoop's default job scheduler) and answer the ``SPECULATE`` decision
(:mod:`mrsched_gym.sim.speculation`: a node with room that no pending task can use, and the
running tasks a backup copy of which could start there, longest estimated time left first).

**LATE** (paper section 4, "Longest Approximate Time to End"). When a node asks for a task and
fewer than ``SpeculativeCap`` speculative copies run:

* ignore the request if the node's total progress is below ``SlowNodeThreshold``;
* rank the running tasks that are not being speculated by estimated time left
  (``(1 - progress) / progress rate``; the decision's candidate order);
* launch a copy of the highest-ranked task whose progress rate is below ``SlowTaskThreshold``.

The paper's settings (section 5.2): ``SpeculativeCap`` 10% of the available task slots,
``SlowNodeThreshold`` and ``SlowTaskThreshold`` the 25th percentile. Gaps the paper leaves, and
the choices made here:

* a node's *total progress* is the sum of the progress scores of the tasks it finished (1 each)
  and of those it runs; the percentile is over the nodes up;
* the progress rates a task is compared with are those of its job's tasks of the same phase: the
  running attempts' and the finished tasks' (progress 1 over their length). The finished ones
  keep the threshold meaningful at a job's tail, when the straggler may be the only task left
  running;
* "available task slots" are the map and reduce slots of the nodes up (containers: one per
  core of the nodes up);
* only the decision's candidates can be chosen: the simulator ranks every eligible task by time
  left, so LATE's pick is among them unless more than K tasks rank above it.

**Hadoop's native speculation** (Hadoop 0.20, as the LATE paper describes it in section 2.1): a
task is a straggler when its progress score is below the average of its category (the job's
maps, or its reduces: finished tasks count 1, pending ones 0, a running one its best attempt's
progress) minus 0.2, and it has run for at
least a minute (the simulator's ``min_runtime_s``). Stragglers are "equally slow": ties are
broken by data locality on the node (node-local, rack-local, off-rack), then as Hadoop scans its
jobs and their tasks: the oldest job first, maps before reduces, the lowest task index first (not
by time left, which is LATE's ranking).
There is no cap and no slow-node test, which is what the LATE paper finds harmful on
heterogeneous clusters.
"""

from __future__ import annotations

import numpy as np

from mrsched_gym.baselines.simple import FIFOScheduler
from mrsched_gym.sim.decision import SPECULATE, SpeculateCandidate
from mrsched_gym.sim.speculation import progress_rate
from mrsched_gym.sim.state import MAP, Task
from mrsched_gym.sim.view import ClusterView

#: Hadoop's SPECULATIVE_GAP: how far below its category's average progress a straggler is.
HADOOP_SPECULATIVE_GAP = 0.2


class _SpeculatingFIFO(FIFOScheduler):
    """FIFO job scheduling, and :meth:`speculate` for the ``SPECULATE`` decision."""

    @classmethod
    def applies_to(cls, scenario) -> bool:
        """Only worlds that pose speculation decisions (elsewhere it is plain FIFO)."""
        return bool(scenario.decisions.speculation.enabled)

    def decide(self, sim: ClusterView) -> int:
        """FIFO's choice, or :meth:`speculate`'s on a speculation decision."""
        if sim.decision.kind == SPECULATE:
            return self.speculate(sim)
        return super().decide(sim)

    def speculate(self, sim: ClusterView) -> int:
        """The candidate to copy, or ``sim.K`` for none."""
        raise NotImplementedError


def _slots_up(sim: ClusterView) -> float:
    """Task slots of the nodes up (containers: their cores)."""
    if sim.slots_mode:
        return float(sum(sim.map_slots[n] + sim.red_slots[n]
                         for n in range(sim.n_nodes) if sim.up[n]))
    return float(sum(sim.cores[n] for n in range(sim.n_nodes) if sim.up[n]))


class LATEScheduler(_SpeculatingFIFO):
    """LATE's speculation over FIFO job scheduling (module docstring; paper section 4).

    Args:
        speculative_cap: Copies that may run at once, as a fraction of the available slots.
        slow_node_pct: ``SlowNodeThreshold``, a percentile of the nodes' total progress.
        slow_task_pct: ``SlowTaskThreshold``, a percentile of the progress rates.
    """

    name = "late"

    def __init__(self, speculative_cap: float = 0.1, slow_node_pct: float = 25.0,
                 slow_task_pct: float = 25.0) -> None:
        self.speculative_cap = speculative_cap
        self.slow_node_pct = slow_node_pct
        self.slow_task_pct = slow_task_pct

    def speculate(self, sim: ClusterView) -> int:
        """LATE's rule: the first candidate (longest time left) whose progress rate is below
        its job-phase's ``slow_task_pct`` percentile, unless the cap is reached or the node is
        slow."""
        d = sim.decision
        now = sim.now
        running = sim.running.values()
        if sum(t.is_copy for t in running) >= self.speculative_cap * _slots_up(sim):
            return sim.K
        progress = {n: sim.node_done[n] + sum(t.progress_at(now) for t in sim.tasks_on[n])
                    for n in range(sim.n_nodes) if sim.up[n]}
        if progress[d.node] < np.percentile(list(progress.values()), self.slow_node_pct):
            return sim.K
        rates: dict[tuple[int, int], list[float]] = {}
        for t in running:
            rates.setdefault((t.job.jid, t.phase), []).append(progress_rate(t, now))
        for i, c in enumerate(d.candidates):
            assert isinstance(c, SpeculateCandidate)
            t = c.task
            pool = rates[(t.job.jid, t.phase)] + [1.0 / x for x in t.job.lens[t.phase] if x > 0]
            if progress_rate(t, now) < np.percentile(pool, self.slow_task_pct):
                return i
        return sim.K


class HadoopSpeculationScheduler(_SpeculatingFIFO):
    """Hadoop's native speculative execution over FIFO job scheduling (module docstring)."""

    name = "hadoop-speculative"

    def speculate(self, sim: ClusterView) -> int:
        """The most local straggler (progress below its category's average minus 0.2), or
        none."""
        d = sim.decision
        now = sim.now
        partial: dict[tuple[int, int], float] = {}
        for t in sim.running.values():
            twin = t.twin
            if twin is None or t.tid < twin.tid:      # a task running twice counts once,
                p = t.progress_at(now)                # at its better attempt's progress
                if twin is not None:
                    p = max(p, twin.progress_at(now))
                key = (t.job.jid, t.phase)
                partial[key] = partial.get(key, 0.0) + p
        best, best_key = sim.K, None
        for i, c in enumerate(d.candidates):
            assert isinstance(c, SpeculateCandidate)
            t = c.task
            job = t.job
            done, total = ((job.maps_done, job.n_maps) if t.phase == MAP
                           else (job.reduces_done, job.n_reduces))
            average = (done + partial[(job.jid, t.phase)]) / total
            if t.progress_at(now) < average - HADOOP_SPECULATIVE_GAP:
                key = (_locality(sim, t, d.node), job.jid, t.phase, t.idx)
                if best_key is None or key < best_key:
                    best, best_key = i, key
        return best


def _locality(sim: ClusterView, t: Task, node: int) -> int:
    """Locality level of a copy of ``t`` on ``node`` (reduces read no block: node-local)."""
    if t.phase != MAP:
        return 0
    return t.job.locality_of(t.idx, node, list(sim.rack))
