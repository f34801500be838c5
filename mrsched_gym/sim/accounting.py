"""Episode accounting: the integrals and counters behind rewards and metrics, and the charge
for the jobs an episode leaves unserved (what a metric may not reward).

The integrals behind rewards and metrics (time in system, weighted lateness) run over every job
in the system: accepted jobs until they finish, **rejected jobs too** — a rejected job is charged
as if it had been accepted and never run. When the episode ends (every job finished or rejected,
or the time limit), every arrived job that did not finish gets the estimated completion
``time_limit_s + remaining_alone_s`` (as if it waited unserved until the time limit, then ran
alone: its completion time alone on the cluster times its share of work not done) and is charged
to that time: lateness w_j (y_j - d_j)^+ and time in system y_j - a_j
(:func:`close_books`). So rejecting a job never scores better than accepting it and
never running it, leaving work unfinished never costs less than finishing it right after the
limit, and the last step's reward carries the charge (the return stays exactly minus the
objective).

Deadline scope (``workload.deadline_scope``): a deadline covers the whole job, or with ``map`` its
map phase (MIMP 3.1): the lateness counter w_late drops a job when its last map finishes, and
:func:`close_books` charges an unserved job's lateness to the time limit plus its
remaining map work alone (:func:`deadline_remaining_alone_s`); metrics use the same
rule (``EpisodeLog.deadline_finish_s``).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from mrsched_gym.sim.state import FINISHED, FUTURE, Job

if TYPE_CHECKING:
    from mrsched_gym.sim.engine import Simulator


def advance_to(sim: Simulator, t: float) -> None:
    """Move the clock to ``t``, integrating the counters over the interval."""
    dt = t - sim.now
    if dt > 0:
        sim.I_active += (sim.n_active + sim.n_rejected) * dt
        sim.I_late += sim.w_late * dt
        sim.I_busy += sim.busy * dt
        sim.I_cap += sim.capacity * dt
        sim.I_cpu_used += sim.cpu_used * dt
        sim.I_cpu_cap += sim.cpu_capacity * dt
        sim.I_slo += sim.n_slo_viol * dt
        sim.I_resp += sim.resp_sum * dt
        sim.now = t


def remaining_alone_s(sim: Simulator, job: Job) -> float:
    """Estimated time the job still needs, run alone on the cluster: its completion time alone
    (the deadline base with ``deadline_scope: job``) times the fraction of its work not yet
    done (finished tasks count; running ones count as not done). A rejected or
    never-started job needs all of it."""
    if job.state == FINISHED:
        return 0.0
    done = job.work_done / job.total_work if job.total_work > 0 else 0.0
    return job.alone_s * max(0.0, 1.0 - done)


def deadline_remaining_alone_s(sim: Simulator, job: Job) -> float:
    """Estimated time, run alone, until the part of the job its deadline covers is done:
    :func:`remaining_alone_s` (``deadline_scope: job``), or with ``deadline_scope: map`` its
    map phase alone times the fraction of its map work not yet done (0 once its maps are
    done)."""
    if not sim.map_scope:
        return remaining_alone_s(sim, job)
    if job.maps_done == job.n_maps:
        return 0.0
    total = sum(job.map_work)
    done = sum(w for w, st in zip(job.map_work, job.map_state, strict=False) if st == 2)
    return job.map_alone_s * max(0.0, 1.0 - done / total) if total > 0 else job.map_alone_s


def close_books(sim: Simulator) -> None:
    """Charge the jobs the episode leaves unserved (documented rule, see module docstring).

    Every arrived job that did not finish — running or waiting at the time limit, rejected at
    admission, or waiting for admission — gets the estimated completion
    ``y_j = time_limit_s + remaining_alone_s(j)``: as if it waited unserved until the time
    limit and then ran alone. Its lateness w_j (y_j - d_j)^+ and time in system y_j - a_j are
    charged in full. (An unfinished job exists only when the time limit cut the episode, so
    for it the limit is the end; a rejected job is charged what a scheduler that accepted it
    and never ran it would pay, so rejecting never scores better than deprioritising.) The
    integrals already hold everything up to the end; the rest is added here, and the last
    step's reward carries it, so the return stays exactly minus the objective.

    With ``deadline_scope: map`` the lateness is judged at the map phase's end: a job whose
    maps all finished has had its lateness counted up to then, and one whose map phase is
    unfinished is charged to ``time_limit_s + deadline_remaining_alone_s(j)`` (its
    ``est_deadline_finish_s``); time in system still runs to ``y_j``.
    """
    end = sim.now
    limit = max(sim.scenario.time_limit_s, end)
    for job in sim.jobs:
        if job.state in (FINISHED, FUTURE):
            continue
        done_at = limit + remaining_alone_s(sim, job)
        job.est_finish_s = done_at
        sim.I_active += done_at - end        # the integral ran to the end already
        due_at = done_at
        if sim.map_scope:
            due_at = limit + deadline_remaining_alone_s(sim, job) \
                if job.maps_done < job.n_maps else math.nan
        job.est_deadline_finish_s = due_at
        d = job.deadline_s
        if math.isfinite(d) and not math.isnan(due_at):
            sim.I_late += job.weight * (max(due_at - d, 0.0) - max(end - d, 0.0))
        sim.n_unserved += 1


def counters(sim: Simulator) -> dict[str, Any]:
    """Integrals and counters (for rewards and metrics)."""
    return {
        "time_s": sim.now, "I_active": sim.I_active, "I_late": sim.I_late,
        "I_busy": sim.I_busy, "I_cap": sim.I_cap, "I_slo": sim.I_slo,
        "I_cpu_used": sim.I_cpu_used, "I_cpu_cap": sim.I_cpu_cap,
        "I_resp": sim.I_resp, "wasted_s": sim.wasted_s, "swap_s": sim.swap_s,
        "n_rejected": sim.n_rejected, "n_unserved": sim.n_unserved,
        "n_killed": sim.n_killed,
        "n_suspended": sim.n_suspended, "n_lost": sim.n_lost,
        "n_copies": sim.n_copies, "n_copies_won": sim.n_copies_won,
        "invalid_actions": sim.invalid_actions,
    }
