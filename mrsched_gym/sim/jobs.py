"""The job life cycle: arrival, admission (accept or reject), deadlines, the end of the map phase
and of the job, and the set of runnable jobs the schedule decision draws its candidates from.

A job arrives (``FUTURE`` -> ``WAITING_ADMISSION`` with admission control, else ``ACTIVE``), is
accepted (``ACTIVE``) or rejected (``REJECTED``, charged as if accepted and never run), and
finishes (``FINISHED``) when its last task does. ``w_late`` sums the weights of the jobs past
their deadline, for the lateness integral (:mod:`mrsched_gym.sim.accounting`).
"""

from __future__ import annotations

import bisect
import math
from typing import TYPE_CHECKING, Final

from mrsched_gym.sim.cluster import reoffer
from mrsched_gym.sim.events import EventKind
from mrsched_gym.sim.state import (
    ACTIVE,
    FINISHED,
    MAP,
    REDUCE,
    REJECTED,
    WAITING_ADMISSION,
    Job,
)

if TYPE_CHECKING:
    from mrsched_gym.sim.engine import Simulator

_DEADLINE: Final = int(EventKind.DEADLINE)


def on_arrival(sim: Simulator, jid: int) -> None:
    """Job ``jid`` is submitted: it waits for admission (``decisions.admission``) or is
    accepted."""
    job = sim.jobs[jid]
    if sim.admission_enabled:
        job.state = WAITING_ADMISSION
        sim.admit_queue.append(jid)
    else:
        accept(sim, job)


def _watch_deadline(sim: Simulator, job: Job) -> None:
    """Count the job in the lateness integral if its deadline has passed, else schedule the
    deadline event that will."""
    if job.deadline_s <= sim.now:
        job.late = True
        sim.w_late += job.weight
    elif math.isfinite(job.deadline_s):
        sim.queue.push(job.deadline_s, _DEADLINE, job.jid)


def accept(sim: Simulator, job: Job) -> None:
    """Accept an arrived job: it becomes active and its tasks runnable."""
    job.state = ACTIVE
    job.build_locality(sim.rack)
    sim.n_active += 1
    _watch_deadline(sim, job)
    if job.n_reduces and sim.slow_start * job.n_maps <= 0:
        job.reduce_ready = True
    refresh_runnable(sim, job)
    if sim.preemption_enabled and job.priority > 0:
        job.preempt_budget = job.n_maps
        sim.preempt_queue.append(job.jid)
    if sim.idle:
        reoffer(sim)


def reject(sim: Simulator, job: Job) -> None:
    """Reject an arriving job. It is charged as if accepted and never run (see
    :func:`~mrsched_gym.sim.accounting.close_books`): it stays in the time-in-system and
    lateness integrals."""
    job.state = REJECTED
    sim.n_rejected += 1
    sim.n_closed += 1
    _watch_deadline(sim, job)


def on_deadline(sim: Simulator, jid: int) -> None:
    """Job ``jid`` passes its deadline: its weight joins the lateness counter (unless it is done,
    or with ``deadline_scope: map`` its maps are)."""
    job = sim.jobs[jid]
    if job.state in (ACTIVE, REJECTED) and not job.late and not (
            sim.map_scope and job.maps_done == job.n_maps):
        job.late = True
        sim.w_late += job.weight


def end_map_phase(sim: Simulator, job: Job) -> None:
    """The job's last map finished: with ``deadline_scope: map`` its deadline is settled
    (met, or its lateness stops accruing here)."""
    job.map_finish_s = sim.now
    if sim.map_scope and job.late:
        job.late = False
        sim.w_late -= job.weight


def finish_job(sim: Simulator, job: Job) -> None:
    """The job's last task finished."""
    job.state = FINISHED
    job.finish_s = sim.now
    sim.n_active -= 1
    if job.late:
        sim.w_late -= job.weight
    sim.n_closed += 1
    refresh_runnable(sim, job)


def refresh_runnable(sim: Simulator, job: Job) -> None:
    """Re-file ``job`` after a change: whether it has map or reduce work to launch or resume
    (``Simulator.runnable``, sorted by job id, and the counts of jobs with map / reduce work)."""
    active = job.state == ACTIVE
    susp = job.susp
    has_m = active and (job.pending_maps > 0 or (
        any(t.phase == MAP for t in susp) if susp else False))
    has_r = active and ((job.reduce_ready and job.pending_reduces > 0) or (
        any(t.phase == REDUCE for t in susp) if susp else False))
    if has_m == job.has_map_work and has_r == job.has_red_work:
        return                            # filed as it was
    sim.n_map_jobs += has_m - job.has_map_work
    sim.n_red_jobs += has_r - job.has_red_work
    job.has_map_work = has_m
    job.has_red_work = has_r
    ok = has_m or has_r
    jid = job.jid
    if ok and jid not in sim.runnable_set:
        sim.runnable_set.add(jid)
        bisect.insort(sim.runnable, jid)
    elif not ok and jid in sim.runnable_set:
        sim.runnable_set.discard(jid)
        del sim.runnable[bisect.bisect_left(sim.runnable, jid)]
