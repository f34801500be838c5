"""Real simulator objects for the baselines' unit tests: a :class:`~mrsched_gym.sim.state.Job`,
its running :class:`~mrsched_gym.sim.state.Task` and its schedule candidates, set to the state a
test describes. The compiled build checks these types where the code declares them (a stand-in
object is refused there), so the tests build the real ones and hold in both builds."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np

from mrsched_gym.sim.decision import Decision, DecisionKind, ScheduleCandidate
from mrsched_gym.sim.state import MAP, REDUCE, Job, Task
from mrsched_gym.workloads.profiles import PROFILES


def real_job(deadline_s: float, n_maps: int, mu: float, *, jid: int = 0, maps_done: int = 0,
             pending_maps: int | None = None, n_reduces: int = 0,
             pending_reduces: int | None = None, reduces_done: int = 0, mu_r: float = math.nan,
             prior_m: float | None = None, prior_r: float | None = None) -> Job:
    """A job of ``n_maps`` maps and ``n_reduces`` reduces due at ``deadline_s``, with
    ``maps_done`` maps finished and ``pending_maps`` (default: the rest) not started.

    Its profile (``prior_len``) is ``prior_m`` per map (default ``mu``) and ``prior_r`` per
    reduce (default ``mu_r``, else 0); its finished tasks' mean length is ``mu`` for the maps and
    ``mu_r`` for the reduces (nan: none finished yet)."""
    map_work = prior_m if prior_m is not None else (0.0 if math.isnan(mu) else mu)
    red_work = prior_r if prior_r is not None else (0.0 if math.isnan(mu_r) else mu_r)
    draw = SimpleNamespace(
        type_idx=0, arrival_s=0.0, deadline_s=deadline_s, priority=0, weight=1.0,
        map_work=np.full(n_maps, map_work), reduce_work=np.full(n_reduces, red_work),
        map_mult=np.ones(n_maps), reduce_mult=np.ones(n_reduces),
        replicas=np.zeros((n_maps, 1), dtype=int), label="", map_mean_s=map_work,
        reduce_mean_s=red_work)
    job = Job(jid, draw, PROFILES["wordcount"])
    job.maps_done = maps_done
    job.pending_maps = n_maps - maps_done if pending_maps is None else pending_maps
    job.pending_reduces = n_reduces if pending_reduces is None else pending_reduces
    job.reduces_done = reduces_done
    job.len_sum = [0.0 if math.isnan(mu) else mu, 0.0 if math.isnan(mu_r) else mu_r]
    job.len_n = [0 if math.isnan(mu) else 1, 0 if math.isnan(mu_r) else 1]
    return job


def running_task(job: Job, phase: int = MAP, start_s: float = 0.0, node: int = 0) -> Task:
    """A task of ``job`` in ``phase`` running on ``node`` since ``start_s``."""
    work = job.prior_len[phase]
    return Task(0, job, phase, 0, node, work, (0.1, 0.1, 0.1, 0.1), start_s, 1.0)


def map_candidates(*jobs: Job) -> tuple[ScheduleCandidate, ...]:
    """A schedule decision's candidates: one map of each job, in order."""
    return tuple(ScheduleCandidate(job, MAP, 0) for job in jobs)


def schedule_decision(node: int, candidates: tuple[ScheduleCandidate, ...],
                      now: float = 0.0) -> Decision:
    """A schedule decision on ``node`` offering ``candidates``."""
    return Decision(DecisionKind.SCHEDULE, now, node, None, candidates)


__all__ = ["MAP", "REDUCE", "map_candidates", "real_job", "running_task", "schedule_decision"]
