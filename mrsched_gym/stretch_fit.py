"""Reverse-Adaptive's per-node fit of one window as a plain loop, for the compiled build.

:class:`~mrsched_gym.baselines.reverse_adaptive.NodeStretches` fits the pending maps of a window
with numpy (a dozen array calls per window: cheap per stretch, dear per call). In the compiled
build (``setup.py``'s ``COMPILED``) this module is a C extension, and the same fit as one loop
over the stretches costs a few microseconds instead of tens, with the same floats: every value is
the same IEEE operation in the same order as the numpy code's (``tests/test_eq1_estimate.py``
compares the two bit for bit; the fingerprints cover Reverse-Adaptive in both builds). The
pure-Python build keeps the numpy code, which is faster there.
"""

from __future__ import annotations

import math


class StretchTable:
    """Each node's up stretches under its forecast capacity, as lists (what
    :class:`~mrsched_gym.baselines.reverse_adaptive.NodeStretches` holds as arrays).

    Args:
        node: Node of each stretch.
        start: Start of each stretch (s).
        end: End of each stretch (s; ``inf`` when it lasts beyond the forecast).
        slots: Map slots of each stretch's node.
        at_start: Capacity integral of the stretch's node at its start.
        at_end: Capacity integral at its end (0 for an open end).
        cum: Each node's capacity integral up to the start of each step.
        cap: Each node's forecast capacity per step.
        step_s: Length of a step (s).
    """

    def __init__(self, node: list[int], start: list[float], end: list[float],
                 slots: list[float], at_start: list[float], at_end: list[float],
                 cum: list[list[float]], cap: list[list[float]], step_s: float) -> None:
        self.node = node
        self.start = start
        self.end = end
        self.slots = slots
        self.at_start = at_start
        self.at_end = at_end
        self.cum = cum
        self.cap = cap
        self.step_s = step_s
        self.last = len(cap[0]) - 1 if cap else 0

    def step_of(self, t: float) -> int:
        """The forecast step ``t`` falls in (beyond the forecast its last step persists)."""
        k = int(t // self.step_s)
        return k if k < self.last else self.last

    def window(self, a: float, b: float, overlap: list[int]) -> tuple[list[float], list[float]]:
        """The stretches ``overlap`` (those that overlap [a, b], in order; numpy finds them
        faster than a loop over all of them): each one's length inside [a, b] and the map
        capacity-seconds it offers there (slots x capacity integral, at least 0)."""
        lengths: list[float] = []
        rooms: list[float] = []
        ka, kb = self.step_of(a), self.step_of(b)
        da, db = a - ka * self.step_s, b - kb * self.step_s
        for i in overlap:
            start = self.start[i]
            end = self.end[i]
            # max and min as comparisons: compiled, the builtins would box every float
            lo = start if start > a else a
            hi = end if end < b else b
            if hi < lo:
                hi = lo
            node = self.node[i]
            # the integral at a and b (NodeStretches.integral_at), step and offset worked out once
            at_lo = self.at_start[i] if start >= a else (self.cum[node][ka]
                                                         + self.cap[node][ka] * da)
            at_hi = self.at_end[i] if end <= b else self.cum[node][kb] + self.cap[node][kb] * db
            room = self.slots[i] * (at_hi - at_lo)
            lengths.append(hi - lo)
            rooms.append(room if room > 0.0 else 0.0)
        return lengths, rooms

    def fit(self, a: float, b: float, overlap: list[int],
            wants: list[tuple[float, float]]) -> list[float]:
        """The tasks of each ``(mu, want)`` in ``wants`` (in order) that the window [a, b]
        holds (its stretches ``overlap``, :meth:`window`): whole tasks of length ``mu``, none
        longer than its stretch, the first stretches first, each request taking from what the
        ones before it left (:func:`take_stretches`); 0 for a request of nothing or whose task
        is longer than the window."""
        lengths, rooms = self.window(a, b, overlap)
        out: list[float] = []
        for mu, want in wants:
            out.append(take_stretches(lengths, rooms, mu, want)
                       if want > 0 and b - a >= mu else 0.0)
        return out


def take_stretches(lengths: list[float], rooms: list[float], mu: float, want: float) -> float:
    """Fit up to ``want`` tasks of length ``mu`` into the stretches, first ones first (whole
    tasks, floor(room / mu) with a 1e-9 tolerance per stretch at least ``mu`` long, the last one
    in part); ``rooms`` is reduced in place. Returns the number fitted."""
    if want <= 0:
        return 0.0
    placed = 0.0                        # whole numbers: exact
    for i in range(len(rooms)):
        if lengths[i] + 1e-9 >= mu:
            room = rooms[i]
            count = float(math.floor(room / mu + 1e-9))
            if count > 0:
                if placed + count >= want:      # this stretch fills the request up
                    rooms[i] = room - (want - placed) * mu
                    return want
                rooms[i] = room - count * mu
                placed += count
    return placed
