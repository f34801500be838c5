"""The key of a cached candidate row (:class:`RowKey`): what the part of a job-phase's row that
:meth:`mrsched_gym.encoding.ObservationEncoder._job_slot` caches depends on.

A class of its own, compared field by field, rather than a tuple of the five counts: the
encoder checks the key once per candidate per observation, and building and comparing a tuple
there cost ~2% of a step in the compiled build (docs/notes/speed.md).
"""

from __future__ import annotations

from mrsched_gym.sim.state import Job


class RowKey:
    """What a cached job-phase row depends on (``ObservationEncoder._job_slot``): the job's
    task counts and the number of finished tasks of the phase, compared field by field (no tuple
    is built per candidate)."""

    def __init__(self, maps_done: int, reduces_done: int, maps_running: int,
                 reduces_running: int, observed: int) -> None:
        self.maps_done = maps_done
        self.reduces_done = reduces_done
        self.maps_running = maps_running
        self.reduces_running = reduces_running
        self.observed = observed

    def __reduce__(self) -> tuple[type[RowKey], tuple[int, int, int, int, int]]:
        """Copies and pickles are rebuilt from the fields (:mod:`mrsched_gym.sim.native`)."""
        return RowKey, (self.maps_done, self.reduces_done, self.maps_running,
                        self.reduces_running, self.observed)

    def holds(self, job: Job, phase: int) -> bool:
        """Whether the row cached under this key is still the job-phase's."""
        return (self.maps_done == job.maps_done and self.maps_running == job.maps_running
                and self.reduces_done == job.reduces_done
                and self.reduces_running == job.reduces_running
                and self.observed == job.len_n[phase])


__all__ = ["RowKey"]
