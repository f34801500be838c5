"""The event queue's heap, written out (``sim/events.py``): the compiled build's own sifts keep
exactly heapq's layout and pop order; the interpreted build uses heapq itself. Runs in both
builds (``.ci/run``'s compiled stage runs it too)."""

from __future__ import annotations

import heapq
import math

import numpy as np
import pytest

from mrsched_gym import acceleration
from mrsched_gym.sim import events
from mrsched_gym.sim.events import WRITTEN_OUT

push_event, pop_event, heapify_events = WRITTEN_OUT


def _entries(rng: np.random.Generator, n: int, times: int) -> list[tuple]:
    """``n`` entries whose times are drawn from ``times`` values (so many tie), kinds from 7,
    unique sequence numbers in a shuffled order, and payloads."""
    pool = rng.uniform(0.0, 100.0, times).tolist() + [0.0, math.inf]
    seqs = rng.permutation(n).tolist()
    return [(pool[int(rng.integers(len(pool)))], int(rng.integers(7)), seqs[i],
             int(rng.integers(50)), int(rng.integers(3))) for i in range(n)]


@pytest.mark.parametrize("seed", range(12))
def test_the_written_out_heap_is_heapq_entry_for_entry(seed):
    """Random pushes, pops and heapifies, with many equal times and kinds: after every
    operation the written-out heap is the same list as heapq's, and pops return the same
    entries."""
    rng = np.random.default_rng(seed)
    ours: list[tuple] = []
    theirs: list[tuple] = []
    fresh = iter(_entries(rng, 4000, times=int(rng.integers(3, 60))))
    for _ in range(3000):
        r = rng.random()
        if r < 0.55 or not theirs:
            e = next(fresh)
            push_event(ours, e)
            heapq.heappush(theirs, e)
        elif r < 0.97:
            assert pop_event(ours) == heapq.heappop(theirs)
        else:                                   # a compaction: drop some, re-heapify
            keep = [e for e in theirs if e[3] % 3]
            ours[:] = keep
            theirs[:] = list(keep)
            heapify_events(ours)
            heapq.heapify(theirs)
        assert ours == theirs
    order = [pop_event(ours) for _ in range(len(ours))]
    assert order == [heapq.heappop(theirs) for _ in range(len(theirs))]
    assert order == sorted(order)


@pytest.mark.parametrize("n", [2400, 2501, 6000])
def test_heapify_of_long_queues_is_heapq_entry_for_entry(n):
    """heapq's C heapify visits long lists (over 2,500 entries) in another order; the
    written-out heapify keeps the layout there too, with -0.0, 0.0 and infinite times."""
    rng = np.random.default_rng(n)
    entries = _entries(rng, n, times=40)
    entries[::97] = [(-0.0,) + e[1:] for e in entries[::97]]
    ours, theirs = list(entries), list(entries)
    heapify_events(ours)
    heapq.heapify(theirs)
    assert ours == theirs
    assert [pop_event(ours) for _ in range(300)] == [heapq.heappop(theirs) for _ in range(300)]


def test_ties_are_broken_by_kind_then_sequence():
    """Equal times pop by kind, then by sequence number, whatever the push order."""
    heap: list[tuple] = []
    for e in [(5.0, 2, 9, 0, 0), (5.0, 1, 10, 0, 0), (5.0, 2, 3, 0, 0), (4.0, 6, 11, 0, 0),
              (5.0, 0, 12, 0, 0)]:
        push_event(heap, e)
    assert [pop_event(heap)[:3] for _ in range(5)] == [
        (4.0, 6, 11), (5.0, 0, 12), (5.0, 1, 10), (5.0, 2, 3), (5.0, 2, 9)]
    with pytest.raises(IndexError):
        pop_event(heap)


def test_each_build_uses_its_faster_heap():
    """Interpreted, the queue calls heapq's C functions; compiled, its own native ones."""
    if acceleration() == "python":
        assert events.push_event is heapq.heappush and events.pop_event is heapq.heappop
        assert events.heapify_events is heapq.heapify
    else:
        assert events.push_event is push_event and events.pop_event is pop_event
        assert events.heapify_events is heapify_events
