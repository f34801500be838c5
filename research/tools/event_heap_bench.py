"""The event heap as it is against the same heap over native objects, both compiled with mypyc
(docs/notes/speed.md, "A ninth look"): what one part of a simulator core with fewer Python
objects per event would gain.

    python research/tools/event_heap_bench.py [--rounds 5] [--size 400] [--ops 1000000]

Needs mypy (``pip install "mypy>=2.0"``) and a C compiler. It writes one module into a
temporary folder: ``mrsched_gym/sim/events.py``'s written-out heap functions (``_earlier`` to
``heapify_events``, copied from the file as it is, so they are the code the compiled build
runs), and the same sifts over a class of five typed fields, one object per event, whose fields
the compiled code compares as C values. It builds that module with mypyc and times, in
alternating rounds, ``--ops`` pops each followed by a push on a heap of ``--size`` events; it
prints the CPU nanoseconds per pop and push of each (median of the rounds) and checks first that
both pop the same events in the same order (the sum of the popped times, and a checksum of
their sequence numbers in the order popped, which each loop keeps). The times are continuous
and the kind one, so no two events tie: the comparisons stop at the time, as the simulator's
mostly do (its ties, simultaneous events, go on to the kind and the sequence number in both
versions).
"""

from __future__ import annotations

import argparse
import importlib
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

EVENTS = Path(__file__).resolve().parents[2] / "mrsched_gym" / "sim" / "events.py"

HEADER = '''from __future__ import annotations
from typing import Any, Final, TypeAlias
Event: TypeAlias = tuple[float, int, int, int, int]
TimeField: TypeAlias = tuple[float, ...]
'''

NATIVE = '''

class Ev:
    __slots__ = ("t", "kind", "seq", "a", "b")

    def __init__(self, t: float, kind: int, seq: int, a: int, b: int) -> None:
        self.t = t
        self.kind = kind
        self.seq = seq
        self.a = a
        self.b = b


def ev_earlier(x: Ev, y: Ev) -> bool:
    if x.t != y.t:
        return x.t < y.t
    if x.kind != y.kind:
        return x.kind < y.kind
    return x.seq < y.seq


def ev_sift_down(heap: list[Ev], start: int, pos: int) -> None:
    item = heap[pos]
    while pos > start:
        parent_pos = (pos - 1) >> 1
        parent = heap[parent_pos]
        if ev_earlier(item, parent):
            heap[pos] = parent
            pos = parent_pos
            continue
        break
    heap[pos] = item


def ev_sift_up(heap: list[Ev], pos: int) -> None:
    end = len(heap)
    start = pos
    item = heap[pos]
    child = 2 * pos + 1
    while child < end:
        right = child + 1
        if right < end and not ev_earlier(heap[child], heap[right]):
            child = right
        heap[pos] = heap[child]
        pos = child
        child = 2 * pos + 1
    heap[pos] = item
    ev_sift_down(heap, start, pos)


def ev_push(heap: list[Ev], e: Ev) -> None:
    heap.append(e)
    ev_sift_down(heap, 0, len(heap) - 1)


def ev_pop(heap: list[Ev]) -> Ev:
    last = heap.pop()
    if heap:
        first = heap[0]
        heap[0] = last
        ev_sift_up(heap, 0)
        return first
    return last


def run_tuples(gaps: list[float], size: int, n: int) -> tuple[float, int]:
    heap: list[Event] = []
    seq = 0
    for i in range(size):
        seq += 1
        push_event(heap, (gaps[i % len(gaps)], 2, seq, i, 0))
    total = 0.0
    order = 0
    for i in range(n):
        e = pop_event(heap)
        t = e[0]
        total += t
        order = (order * 31 + e[2]) % 1_000_000_007
        seq += 1
        push_event(heap, (t + gaps[i % len(gaps)], 2, seq, e[3], e[4] + 1))
    return total, order


def run_native(gaps: list[float], size: int, n: int) -> tuple[float, int]:
    heap: list[Ev] = []
    seq = 0
    for i in range(size):
        seq += 1
        ev_push(heap, Ev(gaps[i % len(gaps)], 2, seq, i, 0))
    total = 0.0
    order = 0
    for i in range(n):
        e = ev_pop(heap)
        t = e.t
        total += t
        order = (order * 31 + e.seq) % 1_000_000_007
        seq += 1
        ev_push(heap, Ev(t + gaps[i % len(gaps)], 2, seq, e.a, e.b + 1))
    return total, order
'''


def module_source() -> str:
    """The benchmark module: events.py's heap functions, then the native-object copy."""
    text = EVENTS.read_text()
    start, end = text.index("def _earlier"), text.index("#: The written-out functions")
    return HEADER + text[start:end] + NATIVE


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--size", type=int, default=400, help="events in the heap")
    p.add_argument("--ops", type=int, default=1_000_000, help="pops (each followed by a push)")
    a = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "heap_bench.py").write_text(module_source())
        build = subprocess.run([sys.executable, "-m", "mypyc", "heap_bench.py"], cwd=tmp,
                               capture_output=True, text=True)
        if build.returncode:
            raise SystemExit(f"mypyc failed:\n{build.stdout[-2000:]}{build.stderr[-2000:]}")
        (Path(tmp) / "heap_bench.py").unlink()        # import the extension, not the source
        sys.path.insert(0, tmp)
        bench = importlib.import_module("heap_bench")
        rng = random.Random(1)
        gaps = [rng.expovariate(1 / 50.0) for _ in range(4096)]
        if bench.run_tuples(gaps, a.size, 10_000) != bench.run_native(gaps, a.size, 10_000):
            raise SystemExit("the two heaps popped different events")
        ns: dict[str, list[float]] = {"tuples (as shipped)": [], "native objects": []}
        sides = list(zip(ns, (bench.run_tuples, bench.run_native), strict=True))
        for r in range(a.rounds):
            for name, run in (sides if r % 2 == 0 else sides[::-1]):    # alternate the order
                c0 = time.process_time()
                run(gaps, a.size, a.ops)
                ns[name].append((time.process_time() - c0) / a.ops * 1e9)
    for name, values in ns.items():
        print(f"{name}: {statistics.median(values):.0f} ns per pop and push "
              f"(rounds {min(values):.0f}-{max(values):.0f})")


if __name__ == "__main__":
    main()
