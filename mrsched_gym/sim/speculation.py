"""The ``SPECULATE`` decision: a backup copy of a running task on a node with spare room
(LATE, Zaharia et al., OSDI 2008; Hadoop's native speculation).

With ``decisions.speculation.enabled`` an offered node that no pending task can use (Hadoop
looks for a speculative task only after the non-running ones, LATE paper section 2.1) is posed
as a ``SPECULATE`` decision when some running task could be copied to it. Its candidates are
the running tasks that have no copy, run on another node, have run at least
``min_runtime_s``, fit the node's free room and are not reduces waiting for map output (a copy
would wait too), ranked by LATE's estimate of their time left, longest first (ties: oldest
task). Choosing one launches the copy (:func:`~mrsched_gym.sim.tasks.launch_copy`) and keeps
offering the node while it has room; skip leaves it idle until the next event.

LATE's estimates (paper section 4): a task's *progress rate* is its progress score over the time
it has run, and its *time left* is ``(1 - progress) / rate``. The progress score here is the
fraction of the attempt's work done (Hadoop's reduce score counts copy, sort and reduce as
thirds; the simulator's reduce is one stream of shuffle then reduce work).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from mrsched_gym.sim import schedule
from mrsched_gym.sim.cluster import fits, has_free, reservation, shuffling
from mrsched_gym.sim.decision import SPECULATE, Decision, DecisionPart, SpeculateCandidate
from mrsched_gym.sim.state import MAP, Task
from mrsched_gym.sim.tasks import launch_copy

if TYPE_CHECKING:
    from mrsched_gym.config import Scenario
    from mrsched_gym.sim.engine import Simulator


def progress_rate(t: Task, now: float) -> float:
    """LATE's progress rate: progress score per second of the attempt's run so far (0 at its
    start)."""
    elapsed = now - t.start_s
    return t.progress_at(now) / elapsed if elapsed > 0 else 0.0


def time_left(t: Task, now: float) -> float:
    """LATE's estimated time left, ``(1 - progress) / progress rate`` (s; infinite for a task
    without progress)."""
    p = t.progress_at(now)
    if p <= 0.0:
        return math.inf
    return (now - t.start_s) * (1.0 - p) / p


def _has_room(sim: Simulator, n: int, t: Task) -> bool:
    """Whether node ``n`` has a free slot (containers: room) for a copy of ``t``."""
    if sim.slots_mode:
        if t.phase == MAP:
            return sim.used_map[n] < sim.map_slots[n]
        return sim.used_red[n] < sim.red_slots[n]
    return fits(sim, n, reservation(t.phase, t.job.type_idx, shuffling(t)))


def candidates(sim: Simulator, n: int, K: int) -> list[SpeculateCandidate]:
    """Running tasks a copy of which could start on node ``n``, longest estimated time left
    first, at most ``K``."""
    now = sim.now
    min_run = sim.scenario.decisions.speculation.min_runtime_s
    ranked = []
    for t in sim.running.values():
        if t.twin is not None or t.node == n or now - t.start_s < min_run:
            continue
        if t.phase != MAP and t.job.maps_done < t.job.n_maps:
            continue
        if _has_room(sim, n, t):
            ranked.append((-time_left(t, now), t.tid, t))
    ranked.sort(key=lambda r: (r[0], r[1]))
    return [SpeculateCandidate(r[2]) for r in ranked[:K]]


def pose(sim: Simulator) -> Decision | None:
    """The next offered node that no pending task can use but a copy can, with its
    candidates; offered nodes with neither are dropped (as the schedule decision drops them)."""
    offer = sim.offer
    while offer:
        n = offer[-1]
        if not sim.up[n]:
            offer.pop()
            continue
        if schedule.candidates(sim, n, 1):
            return None               # pending work first: the schedule decision takes it
        cands = candidates(sim, n, sim.K)
        if cands:
            return Decision(SPECULATE, sim.now, n, None, tuple(cands))
        offer.pop()
    return None


def apply(sim: Simulator, decision: Decision, action: int) -> None:
    """Launch a copy of the chosen task on the node (skip: launch none; the node stays idle
    until the next event, as after a copy that fails for memory: see
    :mod:`~mrsched_gym.sim.schedule`)."""
    n = sim.offer.pop()
    if action != sim.K:
        cand = decision.candidates[action]
        assert isinstance(cand, SpeculateCandidate)
        failed = sim.n_failed
        launch_copy(sim, cand.task, n)
        if has_free(sim, n) and sim.n_failed == failed:
            sim.offer.append(n)       # keep filling the same node (not after a failed launch)


def enabled(scenario: Scenario) -> bool:
    """Whether ``scenario`` poses this kind (``decisions.speculation.enabled``)."""
    return bool(scenario.decisions.speculation.enabled)


PART = DecisionPart(SPECULATE, pose, apply, enabled)
