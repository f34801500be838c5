"""A job-phase's cached candidate row (:class:`JobRow`): the part of a candidate row that
depends only on the job-phase's task counts, which
:meth:`mrsched_gym.encoding.ObservationEncoder._job_row` keeps until they change.

The row's static columns are held as float32 bytes, in the pieces between the columns written
at each observation (the time, the node and the decision kind's own: 2, 7-12, 15, 19-20), so
that a row is written as a few byte copies and the floats of those columns;
:func:`static_row` writes the static columns, once per key. A class of its own, compared field
by field, rather than a tuple of the five counts: the encoder checks the key once per candidate
per observation, and building and comparing a tuple there cost ~2% of a step in the compiled
build (docs/notes/speed.md).
"""

from __future__ import annotations

from mrsched_gym.float_writer import BytesWriter, write_f32_le
from mrsched_gym.sim.state import Job


class JobRow:
    """A job-phase's cached row: its key (the job's task counts and the number of finished
    tasks of the phase), its static columns as float32 bytes (0-1, 3-6, 13-14, 16-18 and 21)
    and the values its time-dependent columns are computed from."""

    def __init__(self, maps_done: int, reduces_done: int, maps_running: int,
                 reduces_running: int, observed: int, static: bytes, due_work: float,
                 deadline: float, arrival: float, has_deadline: float, running: float) -> None:
        self.maps_done = maps_done
        self.reduces_done = reduces_done
        self.maps_running = maps_running
        self.reduces_running = reduces_running
        self.observed = observed
        self.static = static
        #: The static columns in the pieces the row is written from.
        self.cols_0_1 = static[0:8]
        self.cols_3_6 = static[8:24]
        self.cols_13_14 = static[24:32]
        self.cols_16_18 = static[32:44]
        self.col_21 = static[44:48]
        #: Work left before the deadline, the deadline (``inf``: none), the arrival time, and
        #: columns 8 and 11 (has a deadline, running tasks / cluster slots).
        self.due_work = due_work
        self.deadline = deadline
        self.arrival = arrival
        self.has_deadline = has_deadline
        self.running = running

    def __reduce__(self) -> tuple[type[JobRow], tuple[int, int, int, int, int, bytes, float,
                                                       float, float, float, float]]:
        """Copies and pickles are rebuilt from the fields (:mod:`mrsched_gym.sim.native`)."""
        return JobRow, (self.maps_done, self.reduces_done, self.maps_running,
                        self.reduces_running, self.observed, self.static, self.due_work,
                        self.deadline, self.arrival, self.has_deadline, self.running)

    def holds(self, job: Job, phase: int) -> bool:
        """Whether this row is still the job-phase's."""
        return (self.maps_done == job.maps_done and self.maps_running == job.maps_running
                and self.reduces_done == job.reduces_done
                and self.reduces_running == job.reduces_running
                and self.observed == job.len_n[phase])


def static_row(valid: float, is_reduce: float, progress: float, remaining: float,
               mean_len: float, observed: float, priority: float, weight: float, cpu: float,
               io: float, mem: float, alone: float) -> bytes:
    """The static columns 0-1, 3-6, 13-14, 16-18 and 21 of a candidate row, as float32."""
    w = BytesWriter()
    write_f32_le(w, valid)
    write_f32_le(w, is_reduce)
    write_f32_le(w, progress)
    write_f32_le(w, remaining)
    write_f32_le(w, mean_len)
    write_f32_le(w, observed)
    write_f32_le(w, priority)
    write_f32_le(w, weight)
    write_f32_le(w, cpu)
    write_f32_le(w, io)
    write_f32_le(w, mem)
    write_f32_le(w, alone)
    return w.getvalue()


__all__ = ["JobRow", "static_row"]
