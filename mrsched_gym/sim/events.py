"""The event queue: one heap, one place where time advances (SimPy's loop shape, no generators).

Entries are plain tuples ``(time_s, kind, seq, a, b)``: ``kind`` orders simultaneous events
deterministically (see :class:`EventKind`), ``seq`` is a monotone counter that breaks the remaining
ties by insertion order, and ``a``/``b`` are integer payloads. Tuples deep-copy and pickle, so the
whole simulator does too. Stale task events are skipped by version (lazy invalidation).
"""

from __future__ import annotations

import heapq
from enum import IntEnum

from mrsched_gym.sim.native import mypyc_attr


class EventKind(IntEnum):
    """Event kinds, in the order simultaneous events are handled."""

    NODE_CHANGE = 0      # a: step index -> availability changes (nodes leave/join, capacity)
    LOAD_CHANGE = 1      # a: step index -> interactive load changes on shared nodes
    TASK_END = 2         # a: task id, b: version -> a task finishes or stalls
    CLEANUP_END = 3      # a: node -> a killed task's clean-up frees its slot
    ORCHESTRATE = 4      # periodic orchestrator epoch
    DEADLINE = 5         # a: job id -> a job passes its deadline
    ARRIVAL = 6          # a: job id -> a job is submitted


@mypyc_attr(allow_interpreted_subclasses=True)
class EventQueue:
    """Min-heap of events with deterministic tie-breaking.

    The rate model pushes task end events itself (``seq += 1``, then ``heapq.heappush`` of
    the tuple: what :meth:`push` does) to save a call per rate change; a change to the entry
    layout changes :func:`~mrsched_gym.sim.rates.schedule_end` too.
    """

    __slots__ = ("heap", "seq")

    def __init__(self) -> None:
        self.heap: list[tuple[float, int, int, int, int]] = []
        self.seq = 0

    def push(self, time_s: float, kind: int, a: int = 0, b: int = 0) -> None:
        """Schedule an event."""
        self.seq += 1
        heapq.heappush(self.heap, (time_s, kind, self.seq, a, b))

    def pop(self) -> tuple[float, int, int, int, int]:
        """Remove and return the earliest event."""
        return heapq.heappop(self.heap)

    def peek_time(self) -> float:
        """Time of the earliest event (``inf`` when empty)."""
        return self.heap[0][0] if self.heap else float("inf")

    def __len__(self) -> int:
        return len(self.heap)
