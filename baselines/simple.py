"""Policy-free reference points: Random, Hadoop's default FIFO scheduler, EDF, and the textbook
shortest-remaining-work rule (SRPT)."""

from __future__ import annotations

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


class SRPTScheduler(Scheduler):
    """Shortest remaining work first (SRPT at task boundaries), a reference rule, not a paper's.

    None of the seed papers compares against it, but it is the textbook rule for mean time in
    system (Schrage 1968: optimal on one machine with preemption), so it is the natural check
    of what an agent learned where that is scored. The free slot goes to the candidate job
    with the least remaining work: the thesis Eq. 1 numerator
    (:func:`~mrsched_gym.baselines.common.remaining_slot_seconds`: pending and suspended tasks
    times the observed mean task length, or the job's profile before a task finished, plus
    what its running tasks have left), ties to the oldest job, maps first. Admission: accept.
    Preemption: wait.

    It ranks in no leaderboard by default (:meth:`applies_to` is False: the leaderboards hold
    the spec's baselines); name it to compare with it (``--policies srpt``). docs/agents.md
    reports it beside the generalist.
    """

    name = "srpt"

    @classmethod
    def applies_to(cls, scenario) -> bool:
        """Never by default (a reference rule outside the spec's baselines)."""
        return False

    def decide(self, sim) -> int:
        """The candidate of the job with the least remaining work."""
        a = default_action(sim)
        if a is not None:
            return a
        running = running_by_job(sim)
        now = sim.now

        def key(c) -> tuple:
            job = c.job
            work = remaining_slot_seconds(job, running.get(job.jid, ()), now,
                                          task_len(job, MAP), task_len(job, REDUCE))
            return (work, job.jid, c.phase)
        return argmin_candidate(sim.decision.candidates, key)
