"""Hardware affinity at decision time: keep a job off a node where its tasks would run far slower
than on the best node of the cluster (the mask of :class:`~mrsched_gym.agents.affinity.
AffinityDelegate`, and the reference rule ``edf-affinity``).

The observation shows each candidate's expected speed on the *decision* node only (candidate
feature 10), not what the job would get elsewhere: a Monte Carlo task (25x on a Cell
accelerator, thesis 3.5.1) looks the same as a WordCount task on a regular node. The shipped
agents, trained without this information, placed such jobs on regular nodes, where they hold a
slot 25 times longer than on an accelerated one. The thesis's hardware-affinity idea (ch. 3.4.3:
accelerable jobs on accelerated nodes) is what this mask adds at decision time.

At a schedule decision on node ``n``, candidate ``j`` is *slow* when

    speed(n) x speedup(n, type_j) < min_ratio x max_{m up} speed(m) x speedup(m, type_j)

(CPU speed times the accelerator's speed-up for the job's type; the interactive interference is
left out: it changes within minutes, the hardware does not). Slow candidates are masked as long
as at least one candidate is not slow; when every candidate is slow the mask is left as it is,
so the mask never removes every candidate (our choice: with a work-conserving agent, which the
shipped ones are, it never idles a slot the agent would have filled; waiting for a fast node
is left to the network). Together with the slow-start rule, which the shipped generalist also
plays under (:mod:`mrsched_gym.baselines.slow_start`), the two masks can leave only skip: each
masks what it masks.

``min_ratio`` of the shipped generalist: 0.55, chosen on its validation seeds among 0.2 (Monte
Carlo only kept off the plain nodes), 0.5 and 0.6 (Crypt too, from nodes below 0.6 of its best
speed), docs/notes/agents.md. On every registered world 0.55 masks exactly what 0.6 masks, without
sitting on Heterogeneous-v0's ratio of exactly 0.6 (Crypt on a 1.5x node: 1.5 / 2.5).
"""

from __future__ import annotations

from mrsched_gym.baselines.base import default_action
from mrsched_gym.baselines.common import check_unit_share, edf_key
from mrsched_gym.baselines.simple import ReferenceRule
from mrsched_gym.baselines.slow_start import check_fraction, held_reduces
from mrsched_gym.sim.decision import SCHEDULE


def check_min_ratio(min_ratio: float) -> float:
    """``min_ratio`` as a float in (0, 1].

    Raises:
        ValueError: Not a number in (0, 1].
    """
    return check_unit_share(min_ratio, "affinity: min_ratio")


class SpeedTable:
    """Each job type's speed on each node (CPU speed x accelerator speed-up), and the nodes in
    order of it, fastest first, to find the best up node without scanning them all."""

    def __init__(self, sim) -> None:
        n_types = len(sim.accel_mult[0]) if sim.n_nodes else 0
        self.speed = [[sim.speed[n] * sim.accel_mult[n][t] for n in range(sim.n_nodes)]
                      for t in range(n_types)]
        self.order = [sorted(range(sim.n_nodes), key=lambda n, s=s: (-s[n], n))
                      for s in self.speed]

    def best_up(self, type_idx: int, up) -> float:
        """The type's highest speed over the nodes that are up (0 if none is)."""
        s = self.speed[type_idx]
        for n in self.order[type_idx]:
            if up[n]:
                return s[n]
        return 0.0


def slow_candidates(sim, table: SpeedTable, min_ratio: float) -> list[int]:
    """Indices of the schedule candidates that are slow on the decision node (module
    docstring); empty at other decisions or when every candidate is slow."""
    dec = sim.decision
    if dec.kind != SCHEDULE or not dec.candidates:
        return []
    n, up = dec.node, sim.up
    slow = []
    best: dict[int, float] = {}
    for i, c in enumerate(dec.candidates):
        t = c.job.type_idx
        if t not in best:
            best[t] = table.best_up(t, up)
        if table.speed[t][n] < min_ratio * best[t]:
            slow.append(i)
    return [] if len(slow) == len(dec.candidates) else slow


class EDFAffinityScheduler(ReferenceRule):
    """EDF under the affinity mask, a reference rule, not a paper's: the candidate with the
    earliest deadline among those that are not slow on the decision node (module docstring;
    :func:`~mrsched_gym.baselines.common.edf_key`). It shows what the mask alone does, beside
    the agent that plays under it (docs/notes/agents.md). Admission: accept. Preemption: wait.

    With ``slow_start`` it also holds back the reduces the slow-start rule holds
    (:mod:`mrsched_gym.baselines.slow_start`), as the generalist's metadata combines the two:
    each rule masks what it masks, and when together they mask every candidate the rule skips.

    Args:
        min_ratio: The mask's speed ratio, in (0, 1] (default 0.55, the shipped generalist's).
        slow_start: The slow-start rule's fraction, in (0, 1], or ``None`` (default: no rule).
    """

    name = "edf-affinity"

    def __init__(self, min_ratio: float = 0.55, slow_start: float | None = None) -> None:
        self.min_ratio = check_min_ratio(min_ratio)
        self.slow_start = None if slow_start is None else check_fraction(slow_start)
        self.table: SpeedTable | None = None

    def reset(self, sim, seed: int | None = None) -> None:
        """The speed table of this world's nodes."""
        self.table = SpeedTable(sim)

    def decide(self, sim) -> int:
        """:func:`default_action` where it decides, else the earliest deadline among the
        candidates that are not slow (nor held, with ``slow_start``); skip if none is left."""
        a = default_action(sim)
        if a is not None:
            return a
        if self.table is None:
            self.table = SpeedTable(sim)
        masked = set(slow_candidates(sim, self.table, self.min_ratio))
        if self.slow_start is not None:
            masked.update(held_reduces(sim, self.slow_start))
        cands = sim.decision.candidates
        free = [i for i in range(len(cands)) if i not in masked]
        return min(free, key=lambda i: edf_key(cands[i])) if free else sim.K


__all__ = ["EDFAffinityScheduler", "SpeedTable", "check_min_ratio", "slow_candidates"]
