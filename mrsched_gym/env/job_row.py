"""A job-phase's cached candidate row (:class:`JobRow`): the part of a candidate row that
depends only on the job-phase's task counts, which
:meth:`mrsched_gym.env.encoding.ObservationEncoder._job_row` keeps until they change.

The row's static columns are held as float32 bytes, in the pieces between the columns written
at each observation (the time, the node and the decision kind's own: 2, 7-12, 15, 19-20), so
that a row is written as a few byte copies and the floats of those columns;
:func:`static_row` writes the static columns, once per key. A class of its own, compared field
by field, rather than a tuple of the five counts: the encoder checks the key once per candidate
per observation, and building and comparing a tuple there cost ~2% of a step in the compiled
build (docs/notes/speed.md).
"""

from __future__ import annotations

import struct
import sys
from types import FunctionType
from typing import Final

from mrsched_gym.env.float_writer import BytesWriter, write_f32_le
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


def write_row(w: BytesWriter, r: JobRow, locality: float, to_deadline: float, required: float,
              speed: float, wait: float, resumes: float, col_19: float, col_20: float) -> None:
    """Write a candidate row into ``w``: ``r``'s static columns, columns 8 and 11 from ``r``
    and the columns of this observation (2: ``locality``, 7: ``to_deadline``, 9: ``required``,
    10: ``speed``, 12: ``wait``, 15: ``resumes``, 19 and 20), as float32, value by value (the
    compiled build makes each a store)."""
    w.write(r.cols_0_1)
    write_f32_le(w, locality)
    w.write(r.cols_3_6)
    write_f32_le(w, to_deadline)
    write_f32_le(w, r.has_deadline)
    write_f32_le(w, required)
    write_f32_le(w, speed)
    write_f32_le(w, r.running)
    write_f32_le(w, wait)
    w.write(r.cols_13_14)
    write_f32_le(w, resumes)
    w.write(r.cols_16_18)
    write_f32_le(w, col_19)
    write_f32_le(w, col_20)
    w.write(r.col_21)


#: A whole candidate row as one ``struct`` (the static pieces as bytes, the other columns as
#: native ``f``: the C cast, as ``write_f32_le``; every piece is a multiple of 4 bytes, so native
#: alignment adds no padding).
ROW_STRUCT: Final = struct.Struct("8sf16s6f8sf12s2f4s")


def pack_row(w: BytesWriter, r: JobRow, locality: float, to_deadline: float, required: float,
             speed: float, wait: float, resumes: float, col_19: float, col_20: float) -> None:
    """:func:`write_row` with one ``struct`` call: the same bytes on a little-endian machine,
    and what the interpreted build runs there (one C call per row instead of fifteen)."""
    w.write(ROW_STRUCT.pack(r.cols_0_1, locality, r.cols_3_6, to_deadline, r.has_deadline,
                            required, speed, r.running, wait, r.cols_13_14, resumes,
                            r.cols_16_18, col_19, col_20, r.col_21))


#: The value-by-value writer, whichever build runs (its test compares the two).
WRITTEN_OUT: Final = write_row

if isinstance(write_row, FunctionType) and sys.byteorder == "little":   # interpreted
    globals().update(write_row=pack_row)


__all__ = ["ROW_STRUCT", "WRITTEN_OUT", "JobRow", "pack_row", "static_row", "write_row"]
