"""Policy-free reference points: Random, Hadoop's default FIFO scheduler, EDF, and two textbook
rules outside the source papers: shortest remaining work first (SRPT) and the apparent tardiness
cost rule (ATC)."""

from __future__ import annotations

import math
import numbers

import numpy as np

from mrsched_gym.baselines.base import Scheduler, default_action
from mrsched_gym.baselines.common import (
    argmin_candidate,
    edf_key,
    remaining_slot_seconds,
    running_by_job,
    task_len,
)
from mrsched_gym.sim.state import MAP, REDUCE


class RandomScheduler(Scheduler):
    """Uniform over the legal candidates (never skips when a candidate exists).

    Its generator is seeded from the episode seed, so a run is reproducible.
    """

    name = "random"

    def __init__(self) -> None:
        self.rng = np.random.default_rng(0)

    def reset(self, sim, seed: int | None = None) -> None:
        """Reseed the generator from the episode seed."""
        self.rng = np.random.default_rng(seed)

    def decide(self, sim) -> int:
        """A uniformly random candidate, or skip when there is none."""
        n = len(sim.decision.candidates)
        return int(self.rng.integers(n)) if n else sim.K


class FIFOScheduler(Scheduler):
    """Hadoop's default JobQueueTaskScheduler: the oldest job first, locality-greedy.

    Candidates come oldest job first (maps before reduces), and launching a map takes the
    best-placed pending block of that job (node-local, then rack-local, then any), which is what
    Hadoop's FIFO does within the head job. Admission: accept. Preemption: wait.
    """

    name = "fifo"

    def decide(self, sim) -> int:
        """Candidate 0 (the oldest job's); accept, wait or skip where :func:`default_action`
        decides."""
        a = default_action(sim)
        return 0 if a is None else a


class EDFScheduler(Scheduler):
    """Earliest Deadline First at task boundaries (MIMP 5.2 "EDF Scheduler"; RDS's comparison).

    The free slot goes to the candidate job with the earliest deadline (jobs without one come
    last, oldest first); that job keeps getting slots until it finishes or an earlier deadline
    arrives. Admission: accept. Preemption: wait (Hadoop's EDF preempts only between tasks).
    """

    name = "edf"

    def decide(self, sim) -> int:
        """The candidate of the job with the earliest deadline (:func:`edf_key`)."""
        a = default_action(sim)
        if a is not None:
            return a
        return argmin_candidate(sim.decision.candidates, edf_key)


class ReferenceRule(Scheduler):
    """A textbook rule outside the source papers: ranked in no leaderboard by default
    (:meth:`applies_to` is False), only when named. It picks among the schedule candidates
    (:meth:`pick`); admission: accept, preemption: wait (:func:`default_action`)."""

    @classmethod
    def applies_to(cls, scenario) -> bool:
        """Never by default (a reference rule outside the classical baselines)."""
        return False

    def decide(self, sim) -> int:
        """:func:`default_action` where it decides, else :meth:`pick`."""
        a = default_action(sim)
        return self.pick(sim, running_by_job(sim)) if a is None else a

    def pick(self, sim, running: dict) -> int:
        """The index of the chosen candidate (``running``: running tasks by job id)."""
        raise NotImplementedError


class SRPTScheduler(ReferenceRule):
    """Shortest remaining work first (SRPT at task boundaries), a reference rule, not a paper's.

    None of the source papers compares against it, but it is the textbook rule for mean time in
    system (Schrage 1968: optimal on one machine with preemption), so it is the natural check
    of what an agent learned where that is scored. The free slot goes to the candidate job
    with the least remaining work: the thesis Eq. 1 numerator
    (:func:`~mrsched_gym.baselines.common.remaining_slot_seconds`: pending and suspended tasks
    times the observed mean task length, or the job's profile before a task finished, plus
    what its running tasks have left), ties to the oldest job, maps first. Admission: accept.
    Preemption: wait.

    It ranks in no leaderboard by default (:meth:`applies_to` is False: the leaderboards hold
    the classical baselines); name it to compare with it (``--policies srpt``). docs/notes/agents.md
    reports it beside the generalist.
    """

    name = "srpt"

    def pick(self, sim, running: dict) -> int:
        """The candidate of the job with the least remaining work (:meth:`key`)."""
        return argmin_candidate(sim.decision.candidates, lambda c: self.key(sim, running, c))

    @staticmethod
    def key(sim, running: dict, c) -> tuple:
        """Remaining work of the candidate's job, then the oldest job, maps first."""
        job = c.job
        work = remaining_slot_seconds(job, running.get(job.jid, ()), sim.now,
                                      task_len(job, MAP), task_len(job, REDUCE))
        return (work, job.jid, c.phase)


class ATCScheduler(ReferenceRule):
    """Apparent Tardiness Cost (Vepsalainen & Morton 1987), a reference rule, not a paper's.

    The textbook dispatching rule for total weighted tardiness, which is what
    ``deadline_penalty_h`` integrates (the weights of the jobs past their deadlines, over time).
    None of the source papers compares against it. The free slot goes to the candidate job with
    the largest index

        I_j = w_j / p_j * exp(-max(s_j, 0) / (k * p_bar))

    with ``p_j`` the job's remaining work (the thesis Eq. 1 numerator, as :class:`SRPTScheduler`
    counts it; with ``deadline_scope: map`` only the maps' share, since the deadline judges the
    map phase), ``s_j = d_j - now - p_j / m_j`` its slack (``m_j`` the tasks it still has,
    capped at the cluster's slots: the fastest it could finish), ``p_bar`` the mean of
    ``p_j / m_j`` over the candidate jobs, and ``k`` the look-ahead parameter (ATC's own; 4 by
    default, chosen on the validation seeds, docs/notes/agents.md). Jobs that cannot make their
    deadline even at full parallelism (``s_j <= 0``) are ranked by weighted shortest remaining
    work (WSPT); jobs with slack are discounted by it, so the rule moves between WSPT under
    overload and a slack-driven, EDF-like order under light load. Our choices where the
    original (one machine, known processing times) is silent: the parallel slack ``p_j / m_j``
    above; jobs without a deadline (or, with ``deadline_scope: map``, whose maps have all
    finished) get index 0, so they come after every job with a positive index, by remaining
    work (where no job has a deadline, ATC is SRPT); with ``deadline_scope: map`` a reduce
    candidate of a job whose maps are unfinished gets index 0 too (its work cannot help the
    map deadline). Ties: less remaining work, then the oldest job, maps first.
    Admission: accept. Preemption: wait.

    It ranks in no leaderboard by default (:meth:`applies_to` is False), like ``srpt``.
    """

    name = "atc"

    def __init__(self, k: float = 4.0) -> None:
        if isinstance(k, bool) or not isinstance(k, numbers.Real) or not (
                math.isfinite(k) and k > 0):
            raise ValueError(f"atc: k must be a positive finite number, got {k!r}")
        self.k = float(k)

    def pick(self, sim, running: dict) -> int:
        """The candidate with the largest ATC index."""
        now = sim.now
        cap = max(sim.total_slots, 1.0)
        map_scope = sim.map_scope
        rows = {}                  # jid -> (job, work, deadline work, deadline, parallelism)
        for c in sim.decision.candidates:
            job = c.job
            if job.jid in rows:
                continue
            tasks = running.get(job.jid, ())
            mu_m, mu_r = task_len(job, MAP), task_len(job, REDUCE)
            work = remaining_slot_seconds(job, tasks, now, mu_m, mu_r)
            n_left = len(tasks) + job.pending_maps + job.pending_reduces + len(job.susp)
            work_d, due = work, job.deadline_s
            if map_scope:
                if job.maps_done == job.n_maps:
                    due = math.inf                  # the deadline is settled
                else:                               # the maps' share (reduces at 0 s)
                    maps = [t for t in tasks if t.phase == MAP]
                    work_d = remaining_slot_seconds(job, maps, now, mu_m, 0.0)
                    n_left = len(maps) + job.pending_maps + sum(
                        1 for t in job.susp if t.phase == MAP)
            rows[job.jid] = (job, work, work_d, due, max(min(n_left, cap), 1.0))
        durs = [wd / m for _, _, wd, _, m in rows.values()]
        p_bar = max(sum(durs) / len(durs), 1e-9)
        index = {}
        for jid, (job, _, work_d, due, m) in rows.items():
            if math.isfinite(due):
                slack = max(due - now - work_d / m, 0.0)
                index[jid] = -job.weight / max(work_d, 1e-9) * math.exp(
                    -slack / (self.k * p_bar))
            else:
                index[jid] = 0.0

        def key(c) -> tuple:
            i = 0.0 if map_scope and c.phase == REDUCE else index[c.job.jid]
            return (i, rows[c.job.jid][1], c.job.jid, c.phase)
        return argmin_candidate(sim.decision.candidates, key)
