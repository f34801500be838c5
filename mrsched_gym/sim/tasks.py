"""The task life cycle: launch, resume, kill, suspend, completion, and memory pressure.

A launch takes the best-placed pending map of the job for the node (node-local, rack-local,
any) or its next reduce, or resumes the job's task suspended on that node. A remote map
reads its block over the network (extra work ``block_mb / net_mb_s``, x ``off_rack_factor``
off-rack) from a data node (:func:`~mrsched_gym.sim.cluster.pick_source`): ``READ_FRACTION`` of
its disk demand then loads that node instead of its own. A reduce's work is its shuffle plus its
reduce work; it cannot pass its un-shuffled share (``floor``) until more maps finish.
A speculative copy (:func:`launch_copy`) runs beside its original; the first to finish wins
and the other is killed (outcome ``superseded``, its work wasted). Killing loses a task's work
(the slot is held for ``kill_cleanup_s``); suspending
keeps its memory on the node, paged out only when a new task needs it (Pastorelli III). With
``memory_overcommit: fail`` the newest tasks of an over-committed node are killed. A suspended
task resumes only on its node (a restart elsewhere is a kill + relaunch).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Final

from mrsched_gym.sim.cluster import (
    drop_reader,
    end_shuffle,
    occupy,
    pick_source,
    reads_changed,
    shuffling,
)
from mrsched_gym.sim.events import EventKind
from mrsched_gym.sim.jobs import end_map_phase, finish_job, refresh_runnable
from mrsched_gym.sim.rates import queue_node_end, rerate, schedule_end, sync
from mrsched_gym.sim.state import (
    DONE,
    EPS,
    MAP,
    NODE_LOCAL,
    OFF_RACK,
    PENDING,
    REDUCE,
    RUNNING,
    SUSPENDED,
    Job,
    Task,
)

if TYPE_CHECKING:
    from mrsched_gym.sim.engine import Simulator

#: Share of a map task's disk demand that is reading its input block (the rest is local output).
READ_FRACTION: Final = 0.5
_CLEANUP_END: Final = int(EventKind.CLEANUP_END)


def launch(sim: Simulator, job: Job, phase: int, n: int) -> None:
    """Start a task of ``job`` in ``phase`` on node ``n``: resume its suspended one there,
    else its best-placed pending map (node-local, rack-local, any) or its next reduce."""
    t = job.suspended_on(n, phase) if job.susp else None
    if t is not None:
        _resume(sim, t)
        return
    if phase == MAP:
        i, loc = job.take_map(n, sim.rack[n])
        job.locality_counts[loc] += 1
        t = _map_attempt(sim, job, i, loc, n)
    else:
        i = job.red_stack.pop()
        job.pending_reduces -= 1
        t = _reduce_attempt(sim, job, i, n)
    if math.isnan(job.first_start_s):
        job.first_start_s = sim.now
    _start(sim, t, n)
    refresh_runnable(sim, job)


def launch_copy(sim: Simulator, t: Task, n: int) -> None:
    """Start a backup copy of the running task ``t`` on node ``n`` (speculative execution):
    the same map (reading its block from a replica unless ``n`` holds one) or
    reduce (shuffling again). The two copies are each other's ``twin``; the first to finish
    wins and the other is killed (:func:`kill`, outcome ``superseded``). A copy is not counted
    in the job's locality counts, which count map tasks."""
    job = t.job
    if t.phase == MAP:
        c = _map_attempt(sim, job, t.idx, job.locality_of(t.idx, n, sim.rack), n)
    else:
        c = _reduce_attempt(sim, job, t.idx, n)
    c.is_copy = True
    c.twin = t
    t.twin = c
    sim.n_copies += 1
    _start(sim, c, n)


def _map_attempt(sim: Simulator, job: Job, i: int, loc: int, n: int) -> Task:
    """A new attempt of map ``i`` on node ``n`` at locality ``loc`` (counted as running)."""
    work = job.map_work[i]
    mult = job.map_mult[i]
    d = job.map_demand
    extra = 0.0
    net = d[3] * mult
    io = d[1] * mult
    src = -1
    if loc != NODE_LOCAL:
        extra = sim.block_mb / sim.net_mb_s[n]
        if loc == OFF_RACK:
            extra *= sim.off_rack_factor
        net += extra / (work + extra)
        src = pick_source(sim, job.replicas[i].tolist(), sim.rack[n], loc)
    job.maps_running += 1
    t = Task(sim.next_tid, job, MAP, i, n, work + extra,
             (d[0] * mult, io * (1.0 - READ_FRACTION) if src >= 0 else io,
              d[2] * mult, net), sim.now, job.task_mem_gb)
    t.locality = loc
    if src >= 0:
        t.src = src
        t.read_io = io * READ_FRACTION
    return t


def _reduce_attempt(sim: Simulator, job: Job, i: int, n: int) -> Task:
    """A new attempt of reduce ``i`` on node ``n`` (counted as running): its shuffle plus its
    reduce work, held at its un-shuffled share until the maps are done."""
    mult = job.reduce_mult[i]
    d = job.reduce_demand
    shuffle = job.shuffle_mb_per_map * job.n_maps / max(job.n_reduces, 1) / sim.net_mb_s[n]
    red = job.reduce_work[i]
    job.reduces_running += 1
    t = Task(sim.next_tid, job, REDUCE, i, n, shuffle + red,
             (d[0] * mult, d[1] * mult, d[2] * mult, d[3] * mult), sim.now, job.task_mem_gb)
    t.shuffle_s = shuffle
    if job.maps_done < job.n_maps:
        t.floor = red + shuffle * (1.0 - job.maps_done / job.n_maps)
    job.running_reduces.append(t)
    return t


def _start(sim: Simulator, t: Task, n: int) -> None:
    """Run a new attempt on ``n``: number it, page out suspended tasks if its memory
    over-commits the node (Pastorelli III), and place it."""
    sim.next_tid += 1
    sim.mem_used_gb[n] += t.mem_gb
    _page_out(sim, n, t)
    _place(sim, t, n)


def _place(sim: Simulator, t: Task, n: int) -> None:
    """Occupy capacity on ``n`` for a running task and recompute the node's rates."""
    t.state = RUNNING
    t.t_last = sim.now
    t.rate = 0.0                          # forces _rerate to schedule its end event
    ti = t.job.type_idx
    t.type_idx = ti
    t.base = sim.speed[n] * sim.accel_mult[n][ti]
    if sim.slots_mode:
        t.mem0 = sim.static_share[n]     # Hadoop 1: a fixed heap per slot
    else:
        job = t.job                       # containers: the reservation
        t.mem0 = (job.map_demand if t.phase == MAP else job.reduce_demand)[2]
    sim.running[t.tid] = t
    sim.tasks_on[n].append(t)
    occupy(sim, n, t.phase, t.job.type_idx, +1, shuffling(t))
    if t.src >= 0:
        if sim.up[t.src]:
            sim.readers[t.src].append(t)
            reads_changed(sim, t.src, t.read_io)
        else:
            t.src = -1                   # HDFS would switch replica; the read stays local
    if sim.orchestrated:
        sim.new_tasks.append(t)
    if sim.fail_on_overcommit:
        _enforce_memory(sim, n)
    rerate(sim, n)


def _page_out(sim: Simulator, n: int, t: Task) -> None:
    """Page out suspended tasks' memory on ``n`` if ``t``'s start over-commits it; ``t`` pays
    the paging time (Pastorelli III)."""
    excess = sim.mem_used_gb[n] + sim.susp_resident_gb[n] - sim.mem_gb[n]
    if excess <= EPS or not sim.susp_on[n]:
        return
    swapped = 0.0
    for s in sim.susp_on[n]:                       # oldest suspended first
        resident = s.mem_gb - s.swapped_gb
        take = min(resident, excess - swapped)
        if take > 0:
            s.swapped_gb += take
            swapped += take
        if swapped >= excess - EPS:
            break
    sim.susp_resident_gb[n] -= swapped
    cost = swapped * 1024.0 / sim.disk_mb_s[n]
    t.work += cost
    t.remaining += cost
    sim.swap_s += cost


def _resume(sim: Simulator, t: Task) -> None:
    """Resume a suspended task on its node, paging its memory back in first."""
    n = t.node
    job = t.job
    sim.susp_on[n].remove(t)
    job.susp.remove(t)
    sim.susp_resident_gb[n] -= t.mem_gb - t.swapped_gb
    cost = t.swapped_gb * 1024.0 / sim.disk_mb_s[n]    # page-in (Pastorelli Fig. 4)
    t.swapped_gb = 0.0
    t.work += cost
    t.remaining += cost
    sim.swap_s += cost
    sim.mem_used_gb[n] += t.mem_gb
    if t.phase == MAP:
        job.maps_running += 1
    else:
        job.reduces_running += 1
        job.running_reduces.append(t)
        if job.maps_done >= job.n_maps:
            t.floor = 0.0
    _page_out(sim, n, t)
    _place(sim, t, n)
    refresh_runnable(sim, job)


def _detach(sim: Simulator, t: Task) -> None:
    """Take a running task off its node (progress synced; slot accounting is the caller's)."""
    n = t.node
    sync(sim, t)
    del sim.running[t.tid]
    sim.tasks_on[n].remove(t)
    sim.mem_used_gb[n] -= t.mem_gb
    t.version += 1
    t.end_s = math.inf
    drop_reader(sim, t)
    job = t.job
    if t.phase == MAP:
        job.maps_running -= 1
    else:
        job.reduces_running -= 1
        job.running_reduces.remove(t)


def requeue(sim: Simulator, t: Task) -> None:
    """Return a killed or lost task to its job's pending tasks."""
    job = t.job
    if t.phase == MAP:
        job.requeue_map(t.idx, sim.rack)
    else:
        job.red_stack.append(t.idx)
        job.pending_reduces += 1
    t.state = PENDING
    refresh_runnable(sim, job)


def kill(sim: Simulator, t: Task, cleanup: bool = True, outcome: str = "killed") -> None:
    """Kill a running task: its work is lost and it returns to pending, unless a
    copy of it still runs (speculative execution), which then goes on alone."""
    n = t.node
    twin = t.twin
    _detach(sim, t)
    done = t.work - t.remaining
    sim.wasted_s += done
    sim.n_killed += outcome == "killed"
    sim.task_log.append((t.start_s, sim.now, t.job.jid, n, t.phase, outcome))
    cleanup_s = sim.scenario.decisions.preemption.kill_cleanup_s if cleanup else 0.0
    if cleanup_s > 0:
        if shuffling(t):                  # a clean-up holds the reduce's whole reservation
            occupy(sim, n, t.phase, t.job.type_idx, -1, True)
            occupy(sim, n, t.phase, t.job.type_idx, +1)
        sim.cleanups[n].append((t.phase, t.job.type_idx))
        sim.queue.push(sim.now + cleanup_s, _CLEANUP_END, n, sim.departures[n])
    else:
        occupy(sim, n, t.phase, t.job.type_idx, -1, shuffling(t))
    if twin is None:
        requeue(sim, t)
    else:
        t.twin = twin.twin = None
        t.state = PENDING
    rerate(sim, n)


def suspend(sim: Simulator, t: Task) -> None:
    """Suspend a running task: it keeps its memory on its node (Pastorelli III)."""
    n = t.node
    _detach(sim, t)
    sim.task_log.append((t.start_s, sim.now, t.job.jid, n, t.phase, "suspended"))
    occupy(sim, n, t.phase, t.job.type_idx, -1, shuffling(t))
    t.state = SUSPENDED
    sim.susp_on[n].append(t)
    sim.susp_resident_gb[n] += t.mem_gb
    t.job.susp.append(t)
    t.start_s = sim.now                  # the next log segment starts at resume
    sim.n_suspended += 1
    refresh_runnable(sim, t.job)
    rerate(sim, n)


def on_cleanup_end(sim: Simulator, n: int, departures: int) -> None:
    """A killed task's clean-up on node ``n`` is over: its slot is free. ``departures`` is how
    many times ``n`` had left when the clean-up began: if it has left since, the departure freed
    the slot and dropped the clean-up, and this end belongs to none of the clean-ups begun after
    the node came back (each of those ends with its own event; all last ``kill_cleanup_s``, so
    they end in the order they began)."""
    if departures != sim.departures[n]:
        return
    phase, type_idx = sim.cleanups[n].pop(0)
    occupy(sim, n, phase, type_idx, -1)


def on_task_end(sim: Simulator, tid: int, version: int) -> None:
    """Task ``tid`` reached its end (or, a reduce, the end of the map output it has)."""
    t = sim.running.get(tid)
    if t is None or t.version != version:
        return                            # stale event (rate changed or task gone)
    sync(sim, t)
    t.end_s = math.inf                    # its queued end is handled
    if t.floor > 0:
        queue_node_end(sim, t.node)       # a reduce waiting for more map output: the node's
        return                            # next end is queued instead
    _complete(sim, t)


def _complete(sim: Simulator, t: Task) -> None:
    """A task finished: count it, release reduces waiting for map output, maybe end the job."""
    n = t.node
    job = t.job
    twin = t.twin
    _detach(sim, t)
    if twin is not None:                  # the first copy to finish wins
        sim.n_copies_won += t.is_copy
        kill(sim, twin, outcome="superseded")
    t.state = DONE
    t.remaining = 0.0
    sim.task_log.append((t.start_s, sim.now, job.jid, n, t.phase, "done"))
    length = sim.now - t.first_start_s
    job.len_sum[t.phase] += length
    job.len_n[t.phase] += 1
    job.lens[t.phase].append(length)
    sim.node_done[n] += 1
    occupy(sim, n, t.phase, job.type_idx, -1, shuffling(t))
    if t.phase == MAP:
        job.maps_done += 1
        job.map_state[t.idx] = 2
        job.work_done += job.map_work[t.idx]
        if job.maps_done == job.n_maps:
            end_map_phase(sim, job)
            end_shuffle(sim, job)
        if not job.reduce_ready and job.n_reduces and (
                job.maps_done >= sim.slow_start * job.n_maps):
            job.reduce_ready = True
        if job.running_reduces:
            frac = 1.0 - job.maps_done / job.n_maps
            for r in job.running_reduces:
                sync(sim, r)
                r.floor = job.reduce_work[r.idx] + r.shuffle_s * frac if frac > 0 else 0.0
                schedule_end(sim, r)
    else:
        job.reduces_done += 1
        job.work_done += job.reduce_work[t.idx]
    if job.maps_done == job.n_maps and job.reduces_done == job.n_reduces:
        finish_job(sim, job)
    else:
        refresh_runnable(sim, job)
    rerate(sim, n)


def _enforce_memory(sim: Simulator, n: int) -> None:
    """``memory_overcommit: fail``: kill the newest tasks until memory demand fits."""
    tasks = sim.tasks_on[n]
    while len(tasks) > 1 and sum(t.demand[2] for t in tasks) > 1.0 + EPS:
        victim = max(tasks, key=lambda t: (t.start_s, t.tid))
        sim.n_failed += 1
        kill(sim, victim, cleanup=False, outcome="failed")
