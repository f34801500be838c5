"""What a rollout teacher's copy of the world knows of the future: the jobs still to arrive
dropped (:func:`drop_future_arrivals`, the myopic rollout), drawn afresh from the workload
(:func:`sample_future_arrivals`, the sampled rollout), or what no scheduler observes replaced by
an estimate made from what it knows (:func:`estimate_the_unknown`, the fair myopic rollout).
See :mod:`mrsched_gym.agents.research.rollout`."""

from __future__ import annotations

import heapq
import math

import numpy as np

from mrsched_gym.sim.events import EventKind
from mrsched_gym.sim.state import FUTURE
from mrsched_gym.workloads.synthetic import draw_jobs

_ARRIVAL = int(EventKind.ARRIVAL)
_LOAD_CHANGE = int(EventKind.LOAD_CHANGE)
_NODE_CHANGE = int(EventKind.NODE_CHANGE)


def drop_future_arrivals(sim) -> int:
    """Remove the jobs that have not arrived yet from ``sim`` (a copy): their arrival events,
    and their entries at the end of ``sim.jobs`` (job ids are in arrival order); the episode
    then ends when the jobs already in the system close. Returns how many were removed.

    ``sim.n_jobs`` becomes the number kept, so a time-in-system cost (divided by it) is on
    another scale than the whole episode's: the same for every candidate of one decision."""
    heap = sim.queue.heap
    future = [e[3] for e in heap if e[1] == _ARRIVAL]
    if not future:
        return 0
    first = min(future)
    if sorted(future) != list(range(first, len(sim.jobs))):
        raise RuntimeError("pending arrivals are not the last job ids")
    heap[:] = [e for e in heap if e[1] != _ARRIVAL]
    heapq.heapify(heap)
    del sim.jobs[first:]
    sim.n_jobs = first
    return len(future)


def sample_future_arrivals(sim, rng: np.random.Generator, horizon_s: float = math.inf) -> int:
    """Replace the jobs that have not arrived yet in ``sim`` (a copy) by a sample of the
    scenario's workload: draw a fresh job list from ``rng`` (the workload generator the world
    was drawn with, :func:`~mrsched_gym.workloads.synthetic.draw_jobs`) and add the drawn jobs
    that arrive after ``now`` and at most ``horizon_s`` later. Returns how many were added.

    For the synthetic workloads (a homogeneous Poisson process of jobs over the workload's
    duration) the drawn jobs after ``now`` are a sample of the jobs to come given the past,
    since the arrivals to come do not depend on those gone by. A trace workload draws another
    window of its trace: a sample of the workload, not of this window's continuation. A fixed
    job list, or a trace replayed from a fixed window, would give back the world's own jobs:
    refused (:class:`ValueError`)."""
    sc = sim.scenario
    w = sc.workload
    if w.kind == "jobs" or (w.kind == "trace" and not w.trace_random_window):
        raise ValueError(f"workload.kind={w.kind!r}"
                         + ("" if w.kind == "jobs" else " with trace_random_window false")
                         + ": its jobs are the same in every draw, so a sample of the jobs "
                           "to come would be the world's own future")
    drop_future_arrivals(sim)
    job_rng, task_rng, place_rng = rng.spawn(3)
    end = sim.now + horizon_s
    added = 0
    for draw in draw_jobs(sc.workload, sc.cluster, job_rng, task_rng, place_rng):
        if sim.now < draw.arrival_s <= end:
            sim.add_job(draw)
            added += 1
    return added


def estimate_the_unknown(sim) -> None:
    """Replace, in ``sim`` (a copy), what no scheduler observes by an estimate of it.

    The estimates are made from what a scheduler knows (certainty equivalence), so that a
    play-out in the copy does not use the world's draw of it:

    - *Pending tasks* of the jobs in the system (maps and reduces not launched, and attempts
      killed or lost and requeued): their work becomes the mean the job's task work was drawn
      around (``Job.expected_len``: the job's expected task work, from which the
      observation's time alone is estimated, not the mean of its draw), their demand
      multipliers 1 (the multipliers' mean).
    - *Running and suspended attempts* keep their remaining work and demand, an assumption:
      Hadoop reports a running task's progress and its resource use is measured on its node,
      and in this fluid model a LATE-style estimate (progress over progress rate) gives the
      remaining work exactly while the rate holds.
    - *The interactive load* of the shared nodes stays at its current value from now on
      (persistence; the observation shows the current residual CPU, not the load to come).
    - *The availability*: in ``capacity`` mode f(t) follows the forecast the observation shows
      (the next ``forecast_steps`` steps), then stays at the forecast's last visible value.
      In ``nodes`` mode the nodes up now stay up and those down stay down, and f(t) stays at
      its current value. Either way the copy's forecast is cut after its last visible value,
      so its base never sees further.

    The jobs still to come are left as they are: drop or sample them first
    (:func:`drop_future_arrivals`, :func:`sample_future_arrivals`); sampled jobs are draws,
    not the world's, and keep their drawn task lengths."""
    for job in sim.jobs:
        if job.state == FUTURE:
            continue
        mean_map, mean_reduce = job.expected_len
        if not (math.isfinite(mean_map) and math.isfinite(mean_reduce)):
            raise ValueError(f"job {job.jid}: expected_len {job.expected_len} is not finite "
                             "(its JobDraw has no map_mean_s/reduce_mean_s)")
        changed = False
        for i, st in enumerate(job.map_state):
            if st == 0:
                job.map_work[i] = mean_map
                job.map_mult[i] = 1.0
                changed = True
        for i in job.red_stack:
            job.reduce_work[i] = mean_reduce
            job.reduce_mult[i] = 1.0
            changed = True
        if changed:
            job.total_work = math.fsum(job.map_work) + math.fsum(job.reduce_work)
    load_step = _pending_step(sim, _LOAD_CHANGE)
    if load_step is not None and sim.load_u.size:
        sim.load_u = sim.load_u.copy()
        sim.load_u[:, load_step:] = sim.load_u[:, [min(load_step - 1, sim.load_u.shape[1] - 1)]]
    avail_step = _pending_step(sim, _NODE_CHANGE)
    if avail_step is None:
        return
    now_step = avail_step - 1
    last_seen = min(now_step + sim.scenario.availability.forecast_steps, len(sim.forecast_f) - 1)
    forecast = sim.forecast_f.copy()
    forecast[last_seen + 1:] = forecast[last_seen]
    avail = sim.avail_f.copy()
    if sim.node_up is None:
        avail[avail_step:] = forecast[avail_step:len(avail)]
    else:
        avail[avail_step:] = avail[min(now_step, len(avail) - 1)]
        sim.node_up = sim.node_up.copy()
        sim.node_up[:, avail_step:] = sim.node_up[:, [min(now_step, sim.node_up.shape[1] - 1)]]
    sim.forecast_f, sim.avail_f = forecast, avail


def _pending_step(sim, kind: int) -> int | None:
    """The step argument of ``sim``'s pending periodic event of ``kind`` (the next timeline
    step to apply), or None if there is none."""
    steps = [e[3] for e in sim.queue.heap if e[1] == kind]
    return min(steps) if steps else None
