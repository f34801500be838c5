"""The event loop: the one place simulated time advances (:func:`run`), and the posing of the
next decision (:func:`pose_decision`), over a :class:`~mrsched_gym.sim.engine.Simulator`'s state.

:meth:`Simulator.reset <mrsched_gym.sim.engine.Simulator.reset>` and
:meth:`Simulator.act <mrsched_gym.sim.engine.Simulator.act>` call :func:`run` to reach the next
decision or the end of the episode.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Final

from mrsched_gym.sim.accounting import advance_to, close_books
from mrsched_gym.sim.cluster import reoffer
from mrsched_gym.sim.decision import SCHEDULE, Decision, DecisionKind
from mrsched_gym.sim.events import EventKind, IntFields, TimeField, heapify_events, pop_event
from mrsched_gym.sim.jobs import on_arrival, on_deadline
from mrsched_gym.sim.rates import orchestrate
from mrsched_gym.sim.tasks import on_cleanup_end, on_task_end
from mrsched_gym.sim.timelines import on_load_change, on_node_change

if TYPE_CHECKING:
    from mrsched_gym.sim.engine import Simulator

_NODE_CHANGE: Final = int(EventKind.NODE_CHANGE)
_LOAD_CHANGE: Final = int(EventKind.LOAD_CHANGE)
_TASK_END: Final = int(EventKind.TASK_END)
_CLEANUP_END: Final = int(EventKind.CLEANUP_END)
_ORCHESTRATE: Final = int(EventKind.ORCHESTRATE)
_DEADLINE: Final = int(EventKind.DEADLINE)
_ARRIVAL: Final = int(EventKind.ARRIVAL)
#: The event queue is cleared of stale task events when it grows past twice its live length
#: after the last clearing, and at least this long.
MIN_COMPACT: Final = 128


def run(sim: Simulator) -> None:
    """Run events until a decision is pending or the episode ends (the one place time moves)."""
    q = sim.queue
    limit = sim.time_limit_s
    while True:
        if pose_decision(sim):
            return
        if sim.n_closed == sim.n_jobs:
            sim.done = True
            end_decision(sim, SCHEDULE)
            close_books(sim)
            return
        # Drop stale task events (superseded by a rate change) without a batch round trip.
        heap = q.heap
        running = sim.running
        if len(heap) > sim.compact_at:
            drop_stale_events(sim)
            heap = q.heap                     # a new list
        # The same entries typed by the fields read (``events.IntFields``, ``TimeField``).
        ints: list[IntFields] = heap          # type: ignore[assignment]
        times: list[TimeField] = heap         # type: ignore[assignment]
        while ints and ints[0][1] == _TASK_END:
            e = ints[0]
            task = running.get(e[3])
            if task is not None and task.version == e[4]:
                break
            pop_event(heap)
        t = times[0][0] if times else math.inf
        if t > limit:
            advance_to(sim, limit)
            sim.done = True
            sim.truncated = True
            end_decision(sim, sim.decision.kind)
            close_books(sim)
            return
        advance_to(sim, t)
        # Handle every event at this instant before offering capacity again.
        while times and times[0][0] <= t:
            _, kind, _, a, b = q.pop()
            if kind == _TASK_END:
                on_task_end(sim, a, b)
            elif kind == _ARRIVAL:
                on_arrival(sim, a)
            elif kind == _LOAD_CHANGE:
                on_load_change(sim, a)
            elif kind == _NODE_CHANGE:
                on_node_change(sim, a)
            elif kind == _CLEANUP_END:
                on_cleanup_end(sim, a, b)
            elif kind == _DEADLINE:
                on_deadline(sim, a)
            elif kind == _ORCHESTRATE:
                orchestrate(sim)
        if sim.idle and (sim.runnable or (sim.speculation and sim.running)):
            reoffer(sim)


def drop_stale_events(sim: Simulator) -> None:
    """Remove every stale task event from the queue at once (a rate change leaves its old end
    event behind: re-rating pushes most events, and popping the stale ones one by one costs a
    heap sift each). A stale event stays stale (versions only grow, task ids are never reused)
    and is ignored when popped, and the pop order of the rest is their (time, kind, seq) order
    whatever the heap's layout, so nothing else changes. The queue gets a new list: a caller
    holding the old one must read ``sim.queue.heap`` again, as :func:`run` does."""
    heap = sim.queue.heap
    running = sim.running
    live: list[Any] = []                      # entries as they are (not unpacked)
    ints: list[IntFields] = heap              # type: ignore[assignment]
    for e in ints:
        if e[1] == _TASK_END:
            task = running.get(e[3])
            if task is None or task.version != e[4]:
                continue
        live.append(e)
    heapify_events(live)
    sim.queue.heap = live                     # rebound: copying it into the old list cost more
    sim.compact_at = max(MIN_COMPACT, 2 * len(live))


def pose_decision(sim: Simulator) -> bool:
    """Set up the next decision if one is due (the first of the scenario's decision parts that
    poses one, in :data:`~mrsched_gym.sim.engine.DECISION_PARTS` order); returns whether one is
    pending."""
    for part in sim.parts:
        decision = part.pose(sim)
        if decision is not None:
            sim.decision = decision
            return True
    return False


def end_decision(sim: Simulator, kind: DecisionKind) -> None:
    """The episode is over: no candidates left (the last decision's node and job stay)."""
    d = sim.decision
    sim.decision = Decision(kind, sim.now, d.node, d.job, ())
