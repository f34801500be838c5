"""The event queue: one heap, one place where time advances (SimPy's loop shape, no generators).

Entries are plain tuples ``(time_s, kind, seq, a, b)``: ``kind`` orders simultaneous events
deterministically (see :class:`EventKind`), ``seq`` is a monotone counter that breaks the remaining
ties by insertion order, and ``a``/``b`` are integer payloads. Tuples deep-copy and pickle, so the
whole simulator does too. Stale task events are skipped by version (lazy invalidation).
"""

from __future__ import annotations

import heapq
from enum import IntEnum
from types import FunctionType
from typing import Any, Final, TypeAlias

from mrsched_gym.sim.native import mypyc_attr

#: A queue entry: ``(time_s, kind, seq, a, b)``.
Event: TypeAlias = tuple[float, int, int, int, int]
#: An entry typed for reading some of its fields only: ``IntFields`` for the integer fields
#: (1-4; reading field 0 through it fails in the compiled build), ``TimeField`` for reading
#: fields as floats (the time; the integers convert exactly, as :func:`_earlier` uses them).
#: The compiled build then reads one field instead of unpacking the whole entry (an
#: :data:`Event` there is a C struct, so reading one from the heap unpacks five fields and
#: storing it re-packs them); the interpreted build sees the same tuples.
IntFields: TypeAlias = tuple[int, ...]
TimeField: TypeAlias = tuple[float, ...]


class EventKind(IntEnum):
    """Event kinds, in the order simultaneous events are handled."""

    NODE_CHANGE = 0      # a: step index -> availability changes (nodes leave/join, capacity)
    LOAD_CHANGE = 1      # a: step index -> interactive load changes on shared nodes
    TASK_END = 2         # a: task id, b: version -> a task finishes or stalls
    CLEANUP_END = 3      # a: node, b: its departures then -> a clean-up frees its slot
    ORCHESTRATE = 4      # periodic orchestrator epoch
    DEADLINE = 5         # a: job id -> a job passes its deadline
    ARRIVAL = 6          # a: job id -> a job is submitted


@mypyc_attr(allow_interpreted_subclasses=True)
class EventQueue:
    """Min-heap of events with deterministic tie-breaking.

    The rate model draws task ends' sequence numbers itself (``seq += 1``) and pushes each
    node's earliest end with :func:`push_event` (:func:`~mrsched_gym.sim.rates.queue_node_end`);
    a change to the entry layout changes it too.
    """

    __slots__ = ("heap", "seq")

    def __init__(self) -> None:
        self.heap: list[Event] = []
        self.seq = 0

    def push(self, time_s: float, kind: int, a: int = 0, b: int = 0) -> None:
        """Schedule an event."""
        self.seq += 1
        push_event(self.heap, (time_s, kind, self.seq, a, b))

    def pop(self) -> Event:
        """Remove and return the earliest event."""
        return pop_event(self.heap)

    def peek_time(self) -> float:
        """Time of the earliest event (``inf`` when empty)."""
        return self.heap[0][0] if self.heap else float("inf")

    def __len__(self) -> int:
        return len(self.heap)


# ---------------------------------------------------------------------- the heap, written out
# heapq's own algorithm (CPython's heapq.py / _heapqmodule.c: the same sifts, the same
# comparisons, so the same layout), on entries compared field by field as tuples compare:
# the compiled build compares the floats and ints natively instead of through tuple and float
# objects. Interpreted, heapq's C functions are faster, so the interpreted build uses those
# (below); both builds pop the same events in the same order (``tests/test_events.py``). One
# difference from tuple comparison: a tuple finds an entry's own ``nan`` time equal to itself
# (identity), these functions do not; the simulator never schedules at a ``nan`` time. The
# names ``_sift_down``/``_sift_up`` are heapq's (the first moves an entry towards the root).

def _earlier(x: TimeField, y: TimeField) -> bool:
    """``x < y`` as tuples compare (the first field that differs decides). Typed as tuples of
    floats (an entry's ints compare exactly as floats: all are far below 2**53) so that the
    compiled build reads a field without unpacking, or re-packing, the whole entry. Written
    out field by field: a loop over the fields measured slower in the compiled build."""
    a = x[0]
    b = y[0]
    if a != b:
        return a < b
    a = x[1]
    b = y[1]
    if a != b:
        return a < b
    a = x[2]
    b = y[2]
    if a != b:
        return a < b
    a = x[3]
    b = y[3]
    return a < b if a != b else x[4] < y[4]


def _sift_down(heap: list[Any], start: int, pos: int) -> None:
    """Move ``heap[pos]`` up towards ``start`` to its place (heapq's ``_siftdown``)."""
    item = heap[pos]
    while pos > start:
        parent_pos = (pos - 1) >> 1
        parent = heap[parent_pos]
        if _earlier(item, parent):
            heap[pos] = parent
            pos = parent_pos
            continue
        break
    heap[pos] = item


def _sift_up(heap: list[Any], pos: int) -> None:
    """Move the smaller child up until a leaf, then ``heap[pos]``'s old entry down from there
    (:func:`_sift_down`; heapq's ``_siftup``)."""
    end = len(heap)
    start = pos
    item = heap[pos]
    child = 2 * pos + 1
    while child < end:
        right = child + 1
        if right < end and not _earlier(heap[child], heap[right]):
            child = right
        heap[pos] = heap[child]
        pos = child
        child = 2 * pos + 1
    heap[pos] = item
    _sift_down(heap, start, pos)


def push_event(heap: list[Event], entry: Event) -> None:
    """``heapq.heappush(heap, entry)`` (interpreted, this name is heapq's function itself:
    the end of this module)."""
    heap.append(entry)
    _sift_down(heap, 0, len(heap) - 1)


def pop_event(heap: list[Event]) -> Event:
    """``heapq.heappop(heap)`` (``IndexError`` when empty)."""
    entries: list[Any] = heap             # moved as they are, not unpacked and re-packed
    last = entries.pop()
    if entries:
        first = entries[0]
        entries[0] = last
        _sift_up(entries, 0)
        return first                      # type: ignore[no-any-return]
    return last                           # type: ignore[no-any-return]


def heapify_events(heap: list[Event]) -> None:
    """``heapq.heapify(heap)``."""
    for i in range(len(heap) // 2 - 1, -1, -1):
        _sift_up(heap, i)


#: The written-out functions, whichever build runs (their tests use these).
WRITTEN_OUT: Final = (push_event, pop_event, heapify_events)

if isinstance(push_event, FunctionType):       # interpreted: heapq's C functions instead
    globals().update(push_event=heapq.heappush, pop_event=heapq.heappop,
                     heapify_events=heapq.heapify)
