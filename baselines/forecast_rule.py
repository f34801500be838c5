"""``srpt-forecast``: ``srpt-slowstart`` that reads the capacity forecast, a reference rule.

Dynamic-v0 and GreenTrace-v0 put a forecast of the availability f(t) in the view
(:attr:`~mrsched_gym.sim.view.ClusterView.node_forecast`, derived from f(t) by the simulator's
own rule), and no other hand-written rule reads it. In their ``nodes`` mode a node that leaves
loses the work running on it: the killed task goes back to pending and starts again from zero.
A task launched on a node that leaves before the task can finish therefore gains nothing and
keeps that task from a node that stays up. This rule uses the forecast for exactly that and
nothing else:

1. At a schedule decision on node ``n``, it reads ``n``'s row of the forecast over the steps a
   policy's observation covers (``availability.forecast_steps`` steps after the current one, the
   window of :meth:`~mrsched_gym.sim.view.ClusterView.forecast_window`) and finds the first step
   at which ``n`` is forecast down (capacity 0). ``up_for`` is the time from now to the start of
   that step; infinite when ``n`` stays up through the window (the rule never guesses beyond
   what the forecast shows).
2. A candidate's task is expected to take its job's observed mean task length of that phase
   (:func:`~mrsched_gym.baselines.common.task_len`, the job's profile before one finished).
   It *would be cut off* when ``margin`` x that length exceeds ``up_for``.
3. Held: the candidates the slow-start rule holds (:func:`~mrsched_gym.baselines.slow_start.
   held_reduces`, ``fraction``) and the ones that would be cut off, maps and reduces alike.
4. The free slot goes to the candidate of least remaining job work (``srpt``'s order,
   :meth:`~mrsched_gym.baselines.simple.SRPTScheduler.key`) among those not held; when every
   candidate is held the slot stays idle until the next event (skip), so work that cannot
   finish before the dip waits for a node that stays up, while the short tasks that can finish
   still use the leaving node.

Where no node is ever forecast down (``capacity`` mode, as in ThesisScale-v0, scales a node's
speed instead of removing it; a world without availability) step 3 holds nothing more than the
slow-start rule, and the rule makes the choices of ``srpt-slowstart`` with the same
``fraction``. Admission: accept. Preemption: wait. Speculation: skip.
"""

from __future__ import annotations

import math

from mrsched_gym.baselines.common import task_len
from mrsched_gym.baselines.simple import SRPTScheduler
from mrsched_gym.baselines.slow_start import SlowStartRule, held_reduces
from mrsched_gym.sim.decision import SCHEDULE


def check_margin(margin: float) -> float:
    """``margin`` as a float >= 0 (0: nothing is ever cut off, the rule is ``srpt-slowstart``).

    Raises:
        ValueError: Not a finite number >= 0.
    """
    if isinstance(margin, bool) or not isinstance(margin, (int, float)) \
            or not math.isfinite(margin) or margin < 0:
        raise ValueError(f"srpt-forecast: margin must be a finite number >= 0, got {margin!r}")
    return float(margin)


def node_up_for(sim, node: int) -> float:
    """Seconds from now until ``node`` is forecast down (capacity 0) within the forecast window
    a policy observes (module docstring, step 1); ``math.inf`` when it stays up through it."""
    av = sim.scenario.availability
    row = sim.node_forecast[node]
    step = int(sim.now // av.step_s) + 1
    for s in range(step, min(step + av.forecast_steps, len(row))):
        if row[s] <= 0.0:
            return s * av.step_s - sim.now
    return math.inf


def cut_off(sim, margin: float) -> list[int]:
    """Indices of the schedule candidates whose expected task (``margin`` x the job's mean task
    length of that phase) would not finish before the decision's node is forecast down (module
    docstring, step 2). Empty at other decisions and when the node stays up through the window."""
    dec = sim.decision
    if dec.kind != SCHEDULE or margin == 0.0:
        return []
    up_for = node_up_for(sim, dec.node)
    if math.isinf(up_for):
        return []
    return [i for i, c in enumerate(dec.candidates)
            if margin * task_len(c.job, c.phase) > up_for]


class SRPTForecastScheduler(SlowStartRule):
    """``srpt-slowstart`` that also holds the tasks a forecast dip would cut off, a reference
    rule, not a paper's (module docstring).

    Args:
        fraction: The slow-start rule's share of a job's maps done before its reduces may start,
            in (0, 1] (default 1.0, as ``srpt-slowstart``).
        margin: A task is held when ``margin`` x its expected length exceeds the time its node
            is forecast to stay up (default 1.0; 0 holds nothing, making this rule
            ``srpt-slowstart``).
    """

    name = "srpt-forecast"

    def __init__(self, fraction: float = 1.0, margin: float = 1.0) -> None:
        super().__init__(fraction)
        self.margin = check_margin(margin)

    def pick(self, sim, running: dict) -> int:
        """The least remaining work among the candidates neither held by slow start nor cut
        off by the forecast, or skip."""
        held = set(held_reduces(sim, self.fraction)) | set(cut_off(sim, self.margin))
        cands = sim.decision.candidates
        free = [i for i in range(len(cands)) if i not in held]
        if not free:
            return sim.K
        return min(free, key=lambda i: SRPTScheduler.key(sim, running, cands[i]))

    def key(self, sim, running: dict, c) -> tuple:
        """:meth:`SRPTScheduler.key`."""
        return SRPTScheduler.key(sim, running, c)


__all__ = ["SRPTForecastScheduler", "check_margin", "cut_off", "node_up_for"]
