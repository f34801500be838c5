"""MIMP's task completion time (TCT) model, trained on the task completions the scheduler sees.

MIMP 5.1: "The model is trained by running map tasks on shared nodes with different available
CPU capacities. This can either be done offline in advance, or the first set of tasks for a new
job can be distributed to different nodes for measurement, and then a model can be generated and
updated as tasks complete." MP's deadline check (Eq. 3-4), its choice of the job that progresses
most on a slot (Eq. 2) and admission control's time alone (Eq. 6-7) all read TCT_j(R_i).

Our reading, the online variant (a scheduler's models must come from what it can observe):

* **The shape** of TCT in the residual capacity r is MIMP Eq. 1's (the simulator's
  :mod:`~mrsched_gym.models.interference` curves, read through the view as ``int_f`` =
  1/NormTCT_j(r)), times the node's CPU speed and accelerator speed-up: the *reference*
  prediction ``ref = mean task work / (speed x accel x int_f)`` of the job's phase on the node.
* **The scale** is trained: a correction ``m[type, node class, phase]`` (node class: dedicated or
  shared), the running mean of ``observed duration / ref`` over the task completions seen so far,
  with the prior ``m = 1`` counted as :data:`PRIOR_WEIGHT` observations::

      m = (PRIOR_WEIGHT x 1 + sum of ratios) / (PRIOR_WEIGHT + n)

  so TCT_j(n) = m x ref. With no completion seen the prediction is the uncontended reference
  (the prior); as completions arrive it converges to their mean. The ratio folds in what the
  reference leaves out: remote reads, data-node overload, co-located tasks' contention, the
  shuffle of reduces.
* **What is observed.** The view's ``task_log``: the task reports a JobTracker receives (start,
  end, job, node, phase, outcome). Each ``done`` report is one observation of its duration
  (end - start); its ``ref`` is the one noted when the scheduler first saw the task running
  (through the view's ``running``, so the residual capacity of its launch), or, for a task that
  started and ended between two of its decisions, the one at the report. Killed, lost,
  superseded and suspended segments are not observations. Nothing else of the simulator is read.
* **Per episode.** The model starts from the prior at every episode (reset), so an episode's
  decisions depend on its seed alone (deterministic, common random numbers across policies).
"""

from __future__ import annotations

from mrsched_gym.sim.state import MAP, Job
from mrsched_gym.sim.view import ClusterView

#: Weight of the prior (m = 1, the uncontended reference) in observations.
PRIOR_WEIGHT = 2.0


def reference_tct(sim: ClusterView, job: Job, phase: int, n: int) -> float:
    """The untrained prediction of ``job``'s ``phase`` task on node ``n`` now (s): mean task work
    over CPU speed x accelerator speed-up x 1/NormTCT_j(r) (MIMP Eq. 1-2)."""
    ti = job.type_idx
    rate = sim.speed[n] * sim.accel_mult[n][ti] * sim.int_f[n][ti]
    return job.prior_len[phase] / max(rate, 1e-9)


class TCTModel:
    """Trained correction of :func:`reference_tct` per (job type, node class, phase).

    Args:
        prior_weight: Observations the prior ``m = 1`` counts as (>= 0; 0 = observations only,
            the prior used only before the first one).
    """

    def __init__(self, prior_weight: float = PRIOR_WEIGHT) -> None:
        if not prior_weight >= 0:
            raise ValueError(f"prior_weight must be >= 0, got {prior_weight!r}")
        self.prior_weight = float(prior_weight)
        self.reset()

    def reset(self) -> None:
        """Forget every observation (a new episode)."""
        self.sums: dict[tuple[int, bool, int], float] = {}
        self.counts: dict[tuple[int, bool, int], int] = {}
        self._refs: dict[tuple[int, int, int, float], float] = {}  # running task -> its ref
        self._read = 0                                   # task reports read so far

    def factor(self, type_idx: int, shared: bool, phase: int) -> float:
        """The trained correction m of (type, node class, phase): 1 (the prior) without data."""
        key = (type_idx, shared, phase)
        n = self.counts.get(key, 0)
        if n == 0:
            return 1.0
        return (self.prior_weight + self.sums[key]) / (self.prior_weight + n)

    def observe(self, type_idx: int, shared: bool, phase: int, ratio: float) -> None:
        """Add one completion: observed duration / reference prediction."""
        key = (type_idx, shared, phase)
        self.sums[key] = self.sums.get(key, 0.0) + ratio
        self.counts[key] = self.counts.get(key, 0) + 1

    def update(self, sim: ClusterView) -> None:
        """Learn from the task reports since the last call; note the ref of new running tasks."""
        refs = self._refs
        for t in sim.running.values():
            key = (t.job.jid, t.phase, t.node, t.start_s)
            if key not in refs:
                refs[key] = reference_tct(sim, t.job, t.phase, t.node)
        log = sim.task_log
        for i in range(self._read, len(log)):
            start, end, jid, node, phase, outcome = log[i]
            ref = refs.pop((jid, phase, node, start), None)
            if outcome != "done":
                continue
            if ref is None:
                ref = reference_tct(sim, sim.jobs[jid], phase, node)
            if ref > 0:
                self.observe(sim.jobs[jid].type_idx, sim.shared[node], phase, (end - start) / ref)
        self._read = len(log)

    def tct(self, sim: ClusterView, job: Job, phase: int, n: int) -> float:
        """TCT_j of ``job``'s ``phase`` task on node ``n`` now (s): the trained correction x the
        reference prediction."""
        return self.factor(job.type_idx, sim.shared[n], phase) * reference_tct(sim, job, phase, n)

    def norm_tct(self, sim: ClusterView, job: Job, n: int) -> float:
        """NormTCT_j on node ``n`` (MIMP Eq. 2): its map TCT there over its map TCT on a
        dedicated reference node (speed 1, no accelerator, trained dedicated correction)."""
        ti = job.type_idx
        dedicated = self.factor(ti, False, MAP)
        shared = self.factor(ti, sim.shared[n], MAP)
        return shared / (dedicated * max(sim.int_f[n][ti], 1e-9))
