"""Cluster bookkeeping: which nodes have room (slots or container reservations) and the data
nodes remote maps read from.

Slots mode (Hadoop 1) counts busy map and reduce slots per node; containers mode (YARN, RAS's
job slots) sums the reserved CPU, I/O and memory of the node's tasks (their profile demands, a
reducer's shuffle demand until its job's maps are done: :func:`reservation`). A node with room is
*idle* (``Simulator.idle``) and gets offered to the policy. A remote map reads its block from a
replica's node (its *data node*), which loads that node's disk (MIMP 5.1; the rate model in
:mod:`mrsched_gym.sim.rates` slows every reader of an overloaded data node).
"""

from __future__ import annotations

from bisect import insort
from typing import TYPE_CHECKING, Final

from mrsched_gym.sim.rates import rerate
from mrsched_gym.sim.state import EPS, MAP, RACK_LOCAL, REDUCE, Job, Task
from mrsched_gym.workloads.profiles import PROFILES, TYPE_NAMES

if TYPE_CHECKING:
    from mrsched_gym.sim.engine import Simulator


def capacity(sim: Simulator) -> float:
    """The cluster's capacity now: slots of the nodes up (containers: their CPU capacity)."""
    if sim.slots_mode:
        return float(sum(sim.map_slots[i] + sim.red_slots[i]
                         for i in range(sim.n_nodes) if sim.up[i]))
    return float(sum(sim.cap[i] for i in range(sim.n_nodes) if sim.up[i]))


def cpu_capacity(sim: Simulator) -> float:
    """The CPU offered to MapReduce now, in nodes' worth: the CPU capacity (f(t) in capacity
    mode) summed over the nodes up."""
    return float(sum(sim.cap[i] for i in range(sim.n_nodes) if sim.up[i]))


def has_free(sim: Simulator, n: int) -> bool:
    """Whether node ``n`` is up with a free slot (containers: CPU, I/O and memory left)."""
    if not sim.up[n]:
        return False
    if sim.slots_mode:
        return sim.used_map[n] < sim.map_slots[n] or sim.used_red[n] < sim.red_slots[n]
    r = sim.res[n]
    return r[0] < sim.cap[n] - 0.01 and r[1] < 0.99 and r[2] < 0.99


def touch(sim: Simulator, n: int) -> None:
    """Node ``n`` changed: mark it for the observation and file it as idle or full
    (:func:`has_free`, inlined: this runs at every launch and completion)."""
    sim.dirty.add(n)
    if sim.slots_mode:
        up = sim.up[n]
        free_map = up and sim.used_map[n] < sim.map_slots[n]
        free_red = up and sim.used_red[n] < sim.red_slots[n]
        # The map and reduce filings written out (not a helper called twice): hot path.
        if free_map:
            if n not in sim.map_idle:
                sim.map_idle.add(n)
                insort(sim.map_order, n)
        elif n in sim.map_idle:
            sim.map_idle.discard(n)
            sim.map_order.remove(n)
        if free_red:
            if n not in sim.red_idle:
                sim.red_idle.add(n)
                insort(sim.red_order, n)
        elif n in sim.red_idle:
            sim.red_idle.discard(n)
            sim.red_order.remove(n)
        free = free_map or free_red
    elif not sim.up[n]:
        free = False
    else:
        r = sim.res[n]
        free = r[0] < sim.cap[n] - 0.01 and r[1] < 0.99 and r[2] < 0.99
    if free:
        sim.idle.add(n)
    else:
        sim.idle.discard(n)


def reoffer(sim: Simulator) -> None:
    """Offer the idle nodes again, lowest index first (``offer.pop()`` takes the last). With
    ``narrow_offer`` only those with a free slot of a phase some runnable job has work in: the
    others would be dropped by the schedule decision unused (same decisions, fewer visits).
    The nodes with a free map (reduce) slot are kept in order as they change
    (``Simulator.map_order``, ``red_order``): sorting a set walks its whole table, which
    stays as large as the cluster once every node was idle."""
    if not sim.narrow_offer:
        sim.offer = sorted(sim.idle, reverse=True)
    elif sim.n_map_jobs > 0:
        if sim.n_red_jobs > 0:
            sim.offer = sorted(sim.idle, reverse=True)
        else:
            sim.offer = sim.map_order[::-1]
    elif sim.n_red_jobs > 0:
        sim.offer = sim.red_order[::-1]
    else:
        sim.offer = []


def reservation(phase: int, type_idx: int, shuffling: bool = False) -> tuple[float, ...]:
    """What a container of a ``type_idx`` task reserves: (cpu, io, mem) of its phase's demand.

    RAS's job slots (thesis 4.2.1) carry one demand "for each task type and phase (map, reduce in
    shuffle phase, and reduce in reduce phase)", and Algorithm 1 switches "the profile of placed
    reducers from shuffle to reduce" when their job's map phase completes (Eq. 10 holds with the
    phase's demand). A reducer whose job still has maps to finish (``shuffling``) reserves its
    shuffle demand: Table 4.2 gives no CPU ("-") and an I/O of 0.15% per map placed (taken as 0)
    for it, and 4.2.4 says a shuffling reducer "only consumes memory", so it reserves its memory
    (Table 4.2 prints "-" there too; the memory is kept, the reading that reserves more).
    """
    row = _RESERVATIONS[type_idx]
    if phase == MAP:
        return row[0]
    return row[2] if shuffling else row[1]


#: :func:`reservation` by type index: (map, reduce, shuffling reduce), made once (the profiles
#: are frozen).
_RESERVATIONS: Final = tuple(
    (p.map_demand[:3], p.reduce_demand[:3], (0.0, 0.0, p.reduce_demand[2]))
    for p in (PROFILES[name] for name in TYPE_NAMES))


def shuffling(t: Task) -> bool:
    """A reduce task whose job still has maps to finish (it reserves its shuffle demand)."""
    return t.phase != MAP and t.job.maps_done < t.job.n_maps


def fits(sim: Simulator, n: int, demand: tuple[float, ...]) -> bool:
    """Whether a container of ``demand`` (cpu, io, mem, ...) fits node ``n``'s reservations."""
    r = sim.res[n]
    return bool(r[0] + demand[0] <= sim.cap[n] + EPS and r[1] + demand[1] <= 1.0 + EPS
            and r[2] + demand[2] <= 1.0 + EPS)


def occupy(sim: Simulator, n: int, phase: int, type_idx: int, sign: int,
           shuffle: bool = False) -> None:
    """Take (``sign`` +1) or free (-1) one slot of ``phase`` on node ``n`` (containers: the
    :func:`reservation` of a ``type_idx`` task, of its shuffle when ``shuffle``), and count it
    in the busy integral."""
    if sim.slots_mode:
        if phase == MAP:
            sim.used_map[n] += sign
        else:
            sim.used_red[n] += sign
        sim.busy += sign
    else:
        d = reservation(phase, type_idx, shuffle)
        r = sim.res[n]
        r[0] += sign * d[0]
        r[1] += sign * d[1]
        r[2] += sign * d[2]
        sim.busy += sign * d[0]
    touch(sim, n)


def end_shuffle(sim: Simulator, job: Job) -> None:
    """Containers: ``job``'s map phase ended, so its running reducers switch from their shuffle
    reservation to their reduce one (thesis Algorithm 1, last step). A node may go over its
    capacity; it is offered no new task until enough is freed (4.2.5: the Task Scheduler
    drives the transition without starting tasks on an overloaded TaskTracker)."""
    if sim.slots_mode:
        return
    full = reservation(REDUCE, job.type_idx)
    part = reservation(REDUCE, job.type_idx, True)
    for t in job.running_reduces:
        r = sim.res[t.node]
        for k in range(3):
            r[k] += full[k] - part[k]
        sim.busy += full[0] - part[0]
        touch(sim, t.node)


def pick_source(sim: Simulator, replicas: list[int], rack: int, loc: int) -> int:
    """The replica a remote map reads from: least-loaded, in-rack when rack-local."""
    best, best_key = -1, None
    for r in replicas:
        if not sim.up[r] or (loc == RACK_LOCAL and sim.rack[r] != rack):
            continue
        key = (len(sim.readers[r]), r)
        if best_key is None or key < best_key:
            best, best_key = r, key
    return best


def drop_reader(sim: Simulator, t: Task) -> None:
    """Task ``t`` stops reading from its data node."""
    src = t.src
    if src >= 0 and t in sim.readers[src]:
        sim.readers[src].remove(t)
        reads_changed(sim, src, -t.read_io)


def reads_changed(sim: Simulator, n: int, delta: float) -> None:
    """Re-rate data node ``n`` only if its disk was or becomes over-committed."""
    sim.read_sum[n] += delta
    if not sim.readers[n]:
        sim.read_sum[n] = 0.0            # no drift from repeated float updates
    total = sim.own_io[n] + sim.read_sum[n]
    if total > 1.0 or total - delta > 1.0:
        rerate(sim, n)
