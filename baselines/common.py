"""Estimates several baselines share: task lengths, remaining work, required slots (thesis Eq. 1).

All of these read the simulator's read-only view (:class:`~mrsched_gym.sim.view.ClusterView`:
``sim.jobs``, ``sim.running``, ``sim.now`` and the per-node lists) and never mutate it.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from mrsched_gym.sim.decision import ScheduleCandidate
from mrsched_gym.sim.state import MAP, REDUCE, Job, Task
from mrsched_gym.sim.view import ClusterView

C = TypeVar("C")


def running_by_job(sim: ClusterView) -> dict[int, list[Task]]:
    """Running tasks grouped by job id (one pass over the running tasks)."""
    out: dict[int, list[Task]] = {}
    for t in sim.running.values():
        out.setdefault(t.job.jid, []).append(t)
    return out


def prior_task_len(job: Job, phase: int) -> float:
    """The job's trained profile: mean task work on a reference node (s).

    Used by the schedulers whose papers assume trained models or submitted profiles (MIMP's TCT
    models, RDS's offline-trained progress model, RAS's job profile).
    """
    return job.prior_len[phase]


def task_len(job: Job, phase: int, prior: bool = True) -> float:
    """Observed mean wall-clock length of the job's finished ``phase`` tasks (thesis mu_m).

    Before any task finished: the profile prior (``prior=True``) or ``nan`` (the thesis' Adaptive
    Scheduler has no data for a new job, 3.4.1).
    """
    mu = job.mean_task_len(phase)
    if math.isnan(mu) and prior:
        mu = prior_task_len(job, phase)
    return mu


def remaining_slot_seconds(job: Job, tasks: Sequence[Task], now: float, mu_map: float,
                           mu_red: float) -> float:
    """Thesis Eq. 1 numerator: sum over running tasks of delta_i plus |U| * mu.

    delta_i = max(mu - beta_i, 0) with beta_i the elapsed time of running task i (thesis 3.4:
    every task is assumed to last the observed mean mu). Reduce work is counted too (the thesis
    tracks maps; our deadlines cover the whole job, so the reduce phase must fit as well).
    """
    s = 0.0
    for t in tasks:
        mu = mu_map if t.phase == MAP else mu_red
        s += max(mu - (now - t.start_s), 0.0)
    s += job.pending_maps * mu_map + job.pending_reduces * mu_red
    s += sum((mu_map if t.phase == MAP else mu_red) for t in job.susp)
    return s


#: Readings of thesis Eq. 1's division (see :func:`eq1_slots`); ``waves`` is the thesis's.
SLOTS_ESTIMATES = ("waves", "fluid")


def check_slots_estimate(value: object) -> str:
    """``value`` as one of :data:`SLOTS_ESTIMATES` (a scheduler's ``slots_estimate``).

    Raises:
        ValueError: Another value (the message names the parameter and the choices).
    """
    if value not in SLOTS_ESTIMATES:
        raise ValueError(f"slots_estimate must be one of {', '.join(SLOTS_ESTIMATES)}, "
                         f"got {value!r}")
    return str(value)


def eq1_slots(work: float, left: float, mu: float, unstarted: float,
              estimate: str = "waves") -> float:
    """Thesis Eq. 1's division: the slots a job needs concurrently for ``work`` slot-seconds
    (sum of delta_i + |U| x mu) in the ``left`` seconds before its goal.

    ``waves`` (the reading of the equation as the thesis writes it; this function's default,
    RAS's and Reverse-Adaptive's, not Adaptive's: each chapter's numbers chose): the time left
    counted in whole waves of task length, ``work / (floor(left / mu) x mu)``. The extracted Eq.
    1 reads "(sum_R delta_i + |U| mu) / (T_goal - T_curr ... * mu) - |R|": a denominator
    multiplied by mu only differs from T_goal - T_curr if the time left is first divided by mu
    and rounded to whole task executions; Fig. 3.2's s(d, l) = (100 / l) / (d / l), which 3.4.6
    describes as "comparing the number of sequential task executions, or waves", depends on the
    task length l only with the number of waves rounded down, and 3.4.6's single-wave jobs
    ("there is little the scheduler can do") are the ones whose time left holds one wave. Two
    cases the formula leaves open (our choices):

    * no whole wave fits (``left < mu``) while tasks are still unstarted: a task started now
      ends after the goal whatever the slots, so the job cannot meet its goal: ``inf``, the
      treatment the thesis gives a job that missed its goal (3.4.1);
    * no whole wave fits and every task is running (``unstarted == 0``): the job needs only the
      slots its running tasks hold, ``work / mu`` (at most ``|R|``; one wave taken).

    ``fluid``: ``work / left``, the plain division (the reading before the waves one).
    ``inf`` when ``left <= 0`` under both readings; a non-positive ``mu`` falls back to fluid.
    """
    if left <= 0:
        return math.inf
    if estimate == "fluid" or not mu > 0:
        return work / left
    waves = math.floor(left / mu + 1e-9)       # whole task executions before the goal
    if waves >= 1:
        return work / (waves * mu)
    return math.inf if unstarted > 0 else work / mu


def required_slots(job: Job, tasks: Sequence[Task], now: float, prior: bool = True,
                   estimate: str = "waves") -> float:
    """Slots the job needs concurrently from now on to meet its goal (thesis Eq. 1 without -|R|,
    :func:`eq1_slots` under ``estimate``).

    The whole job's remaining work (maps and reduces, :func:`remaining_slot_seconds`) over the
    time left; the waves are counted in map task lengths while maps remain, in reduce task
    lengths after (our choice: the tasks still to run set the wave). ``inf`` when the goal has
    passed (or, under ``waves``, when an unstarted task can no longer finish by it); ``nan``
    when the map task length is unknown (``prior=False`` and no map has finished); 1 for a job
    without a goal (it only needs to progress).
    """
    if not math.isfinite(job.deadline_s):
        return 1.0
    left = job.deadline_s - now
    if left <= 0:
        return math.inf
    mu_m = task_len(job, MAP, prior)
    if math.isnan(mu_m):
        return math.nan
    # Reduces finish last, so their observed length is unknown during the map phase: the
    # reduce term (our addition to Eq. 1) always uses the profile until reduces finish.
    mu_r = task_len(job, REDUCE, True) if job.n_reduces else 0.0
    work = remaining_slot_seconds(job, tasks, now, mu_m, mu_r)
    unstarted = job.pending_maps + job.pending_reduces + len(job.susp)
    maps_left = job.pending_maps > 0 or any(t.phase == MAP for t in tasks) or any(
        t.phase == MAP for t in job.susp)
    return eq1_slots(work, left, mu_m if maps_left or not job.n_reduces else mu_r, unstarted,
                     estimate)


def argmin_candidate(cands: Sequence[C], key: Callable[[C], Any]) -> int:
    """Index of the candidate with the smallest key (first on ties)."""
    best, best_key = 0, None
    for i, c in enumerate(cands):
        k = key(c)
        if best_key is None or k < best_key:
            best, best_key = i, k
    return best


def edf_key(c: ScheduleCandidate) -> tuple:
    """Earliest deadline first, then oldest job, maps before reduces."""
    return (c.job.deadline_s, c.job.jid, c.phase)


def check_unit_share(value: float, what: str) -> float:
    """``value`` as a float in (0, 1] (a ratio or share parameter; ``what`` names it in the
    error, e.g. ``"affinity: min_ratio"``).

    Raises:
        ValueError: Not a real number in (0, 1].
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not (
            math.isfinite(value) and 0.0 < value <= 1.0):
        raise ValueError(f"{what} must be a number in (0, 1], got {value!r}")
    return float(value)
