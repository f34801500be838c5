"""Observation encoding: the simulator's state as a flat ``Dict`` of fixed-shape float32 boxes.

Keys and features (all float32; times in hours unless said; each clipped to its bounds in the
feature table, :mod:`mrsched_gym.env.features`, which names them by the same index and words):

``decision`` [D = 10; 11 with speculation]
    0-2 decision kind one-hot (schedule, admit, preempt; :data:`DECISION_KIND_SLICE`, entry
    ``decision_kind_slot(kind)``; all zero once the episode is over; with
    ``decisions.speculation.enabled`` a fourth entry, speculate, and the entries below move up
    by one) | 3 time / time limit | 4 f(t) now | 5 active jobs / K | 6 runnable jobs / K |
    7 free map slots of the decision node / its map slots (containers: free CPU) | 8 free reduce
    slots / reduce slots (containers: free memory) | 9 has a decision node

``candidates`` [K, F = 22] (row i describes action i; rows past the candidates are zero; each
decision kind fills them its own way, :attr:`ObservationEncoder.CANDIDATE_ROWS`)
    0 valid | 1 is reduce | 2 locality (0 node-local, 0.5 rack-local, 1 off-rack) |
    3 job progress (tasks done / tasks) | 4 remaining tasks / cluster slots |
    5 observed mean task length of this phase (h; before any task of it finished, the mean its
    task work was drawn around, ``Job.expected_len``: the job's submitted estimate) |
    6 a task of this phase has finished (the length is observed) |
    7 time to deadline (h, clipped to [-24, 24]; 24 if none) | 8 has a deadline (with
    ``workload.deadline_scope: map``: a deadline whose map phase is still running; features 7-9
    then count the remaining maps only) |
    9 estimated slots required to meet the deadline (thesis Eq. 1: remaining tasks x mean task
    length / time to deadline) / cluster slots | 10 expected speed of this job's tasks on the
    decision node (CPU speed x accelerator x 1/NormTCT(r)) | 11 running tasks / cluster slots |
    12 waiting time since arrival (h) | 13 priority / 9 | 14 weight / 10 | 15 resumes a
    suspended task | 16 CPU, 17 I/O, 18 memory demand of one task of this phase |
    19 preemption: primitive is suspend; speculation: the running task's estimated time left
    (h, LATE's ``(1 - progress) / progress rate``, clipped to 24) | 20 the task's progress
    (preemption: the victim; speculation: the task to copy) | 21 job completion time alone (h)

``nodes`` [N, G = 10]
    0 up | 1 CPU capacity multiplier | 2 CPU speed / max speed | 3 shared | 4 accelerated |
    5 free map slots fraction (containers: free CPU) | 6 free reduce slots fraction (0 on a
    maps-only node; containers: free memory) | 7 residual CPU after the interactive load |
    8 suspended tasks / 4 | 9 is the decision node

``forecast`` [W]
    forecast of f(t) for the next W availability steps.

``objective`` [6] (only in an env made with ``observe_objective=True``)
    0 weight of jct | 1 weight of deadline | 2 weight of slo | 3 weight of wasted | 4 weight of
    idle | 5 weight of rejection: the scenario's reward weights
    (:data:`~mrsched_gym.config.REWARD_COMPONENTS`) divided by the largest absolute weight,
    what the episode is scored on (:func:`objective_vector`); constant over an episode. A new
    key rather than more ``decision`` entries, and off by default, for the reason below.

The decision kind is read from the observation by name, never by a bare index:
``obs["decision"][kind_slice(obs["decision"])]`` is the one-hot (:data:`DECISION_KIND_SLICE`
in worlds without speculation), ``decision_kind_slot(SCHEDULE)`` the schedule entry
(:func:`observed_kind`). It stays inside the ``decision`` array rather than in a key of its own:
a new key changes the ``Dict`` space, and SB3 refuses to load a trained agent into an env whose
space differs from the one it was trained on. For the same reason the one-hot has an entry for
speculation only in worlds that pose it: agents trained without it keep their shape.
"""

from __future__ import annotations

import math
import sys
from typing import ClassVar, Final

import numpy as np

from mrsched_gym.env.features import (
    CANDIDATE_COLUMNS,
    DEADLINE_HOURS,
    HOURS_MAX,
    NODE_COLUMNS,
    RATIO_MAX,
    SPEED_MAX,
    TASK_HOURS_MAX,
)
from mrsched_gym.env.float_writer import BytesWriter, write_f32_le
from mrsched_gym.env.job_row import JobRow, static_row, write_row
from mrsched_gym.env.node_rows import pack_changed_rows
from mrsched_gym.env.obs_layout import (
    DECISION_FEATURES,
    DECISION_KIND_SLICE,
    DECISION_TAIL,
    ONE_FLOAT,
    ROW_BYTES,
    decision_features,
    decision_kind_slot,
    kind_slice,
    objective_vector,
    observed_kind,
    packer,
)
from mrsched_gym.sim.decision import (
    ADMIT,
    PREEMPT,
    SCHEDULE,
    SPECULATE,
    SUSPEND,
    AdmitCandidate,
    Decision,
    DecisionKind,
    PreemptCandidate,
    ScheduleCandidate,
    SpeculateCandidate,
    posed_kinds,
)
from mrsched_gym.sim.engine import Simulator
from mrsched_gym.sim.native import mypyc_attr
from mrsched_gym.sim.speculation import time_left
from mrsched_gym.sim.state import MAP, REDUCE, Job

CANDIDATE_FEATURES: Final = len(CANDIDATE_COLUMNS)
NODE_FEATURES: Final = len(NODE_COLUMNS)
#: Column 2, locality: 0, 0.5 and 1 for node-local, rack-local and off-rack (0, 1 and 2).
_LOC_SCALE: Final = 0.5
#: The observation's bytes: little-endian float32 (``float_writer``); a big-endian machine
#: converts the arrays to its own order.
_F32LE: Final = np.dtype("<f4")
_LITTLE_ENDIAN: Final = sys.byteorder == "little"
#: A candidate row of zeros (the rows past the candidates).
_ZERO_ROW: Final = bytes(ROW_BYTES)
#: ``np.ndarray``, held here: the compiled build would look it up on the module at every call.
_NDARRAY: Final = np.ndarray


@mypyc_attr(allow_interpreted_subclasses=True)
class ObservationEncoder:
    """Builds observations for one simulator, incrementally: node rows are rebuilt only for
    nodes the simulator marked changed (``Simulator.dirty``), the part of a candidate row that
    depends only on its job-phase (:meth:`_job_row`) is cached until the job's task counts
    change. Every value is computed as a fresh build would (the same double-precision
    expressions, rounded to float32 once), so the observations are identical.

    Args:
        sim: The simulator to observe (its scenario fixes K, N and W).
    """

    def __init__(self, sim: Simulator) -> None:
        self.sim = sim
        sc = sim.scenario
        self.K = sc.decisions.max_candidates
        self.N = sim.n_nodes
        self.W = sc.availability.forecast_steps
        #: The node rows, packed as float32, and each node's free map and reduce capacity
        #: (columns 5 and 6); a row is rewritten only when the simulator marks its node changed.
        self._node_bytes = bytearray(4 * self.N * NODE_FEATURES)
        self._free_map, self._free_red = [0.0] * self.N, [0.0] * self.N
        self.max_speed = max(sim.speed)
        self.total_slots = max(sim.total_slots if sim.slots_mode else float(self.N) * 2, 1.0)
        self.map_scope = sim.map_scope
        self.limit_s = sc.time_limit_s
        kinds = posed_kinds(sc)
        D = len(kinds) + DECISION_TAIL
        #: An observation's buffer as one record: one array made from the buffer, whose four
        #: fields are the observation's arrays (views), instead of four arrays from the buffer.
        self._record = np.dtype([("decision", _F32LE, (D,)),
                                 ("candidates", _F32LE, (self.K, CANDIDATE_FEATURES)),
                                 ("nodes", _F32LE, (self.N, NODE_FEATURES)),
                                 ("forecast", _F32LE, (self.W,))])
        self._record_bytes = self._record.itemsize
        #: The kind one-hot of ``obs["decision"]`` by kind, and once the episode is over, packed.
        one_hot = packer(len(kinds))
        self._one_hot = {kind: bytearray(one_hot.pack(*(float(kind == k) for k in kinds)))
                         for kind in kinds}
        self._no_kind = bytearray(4 * len(kinds))
        self._fc_step = -1
        self._fc = bytes(4 * self.W)
        self._prev_node = -1
        self._forget_jobs()

    def reset(self) -> None:
        """Mark every node row and cached job row stale (after the simulator's reset)."""
        self._node_bytes = bytearray(4 * self.N * NODE_FEATURES)
        self._free_map, self._free_red = [0.0] * self.N, [0.0] * self.N
        self.sim.dirty.update(range(self.N))
        self._fc_step = -1
        self._prev_node = -1
        self._forget_jobs()

    def _forget_jobs(self) -> None:
        """Drop the cached job-phase rows (slot ``2 x job id + phase``): new jobs."""
        jobs = getattr(self.sim, "jobs", [])
        self._jobs = jobs
        self._rows: list[JobRow | None] = [None] * (2 * len(jobs))

    def _resize_cache(self, n: int) -> None:
        """Keep the first ``n`` job-phase slots (a dropped job id may return) and add empty ones."""
        extra = max(0, n - len(self._rows))
        del self._rows[n:]
        self._rows.extend([None] * extra)

    # ------------------------------------------------------------------ per-part builders
    def _forecast(self) -> bytes:
        s = self.sim
        step = int(s.now // s.avail_step_s)
        if step != self._fc_step:
            self._fc_step = step
            self._fc = s.forecast_window(self.W).astype(_F32LE).tobytes()
        return self._fc

    def _job_row(self, job: Job, phase: int) -> JobRow:
        """A job-phase's cached row (:class:`~mrsched_gym.env.job_row.JobRow`), brought up to date:
        every feature but those written at each observation (the time's, the node's and the
        decision kind's own columns). Its key: the job's task counts."""
        i = 2 * job.jid + phase
        row = self._rows[i]
        if row is not None and row.holds(job, phase):
            return row
        expected = job.expected_len        # what a scheduler expects before it observes any
        slots = self.total_slots
        n_tasks = job.n_maps + job.n_reduces
        remaining = n_tasks - job.maps_done - job.reduces_done
        obs_n = job.len_n[phase]
        if obs_n:
            mlen = job.len_sum[phase] / obs_n
        else:
            mlen = expected[phase]
        dl = job.deadline_s
        has_dl = -math.inf < dl < math.inf   # isfinite(dl) without a call (compiled build)
        if self.map_scope:                 # the deadline covers the map phase (MIMP 3.1)
            due = job.n_maps - job.maps_done
            n_map = job.len_n[MAP]
            due_work = due * (job.len_sum[MAP] / n_map if n_map else expected[MAP])
            has_dl = has_dl and due > 0    # met or missed once the maps are done
        else:
            due_work = remaining * mlen
        dem = job.map_demand if phase == MAP else job.reduce_demand
        rem_s = remaining / slots
        run_s = (job.maps_running + job.reduces_running) / slots
        running = run_s if run_s < RATIO_MAX else RATIO_MAX
        mlen_h = mlen / 3600.0
        alone_h = job.alone_s / 3600.0
        static = static_row(
            1.0, float(phase == REDUCE), (n_tasks - remaining) / n_tasks,
            rem_s if rem_s < RATIO_MAX else RATIO_MAX,
            mlen_h if mlen_h < TASK_HOURS_MAX else TASK_HOURS_MAX, float(obs_n > 0),
            job.priority / 9.0, job.weight / 10.0 if job.weight < 10.0 else 1.0,
            dem[0], dem[1], dem[2], alone_h if alone_h < HOURS_MAX else HOURS_MAX)
        row = JobRow(job.maps_done, job.reduces_done, job.maps_running, job.reduces_running,
                     obs_n, static, due_work, dl if has_dl else math.inf, job.arrival_s,
                     float(has_dl), running)
        self._rows[i] = row
        return row

    def _write_job_row(self, w: BytesWriter, job: Job, phase: int, n: int, now: float,
                       locality: float, resumes: float, col_19: float, col_20: float) -> None:
        """Write a job-phase's row on node ``n`` (-1: none) at ``now``: its cached columns
        (:meth:`_job_row`), the time's and the node's (7-12) and the decision kind's own
        (2: ``locality``, 15: ``resumes``, 19 and 20)."""
        r = self._job_row(job, phase)
        dl = r.deadline
        if dl != math.inf:
            left = dl - now
            ttd = left / 3600.0
            to_deadline = (DEADLINE_HOURS if ttd > DEADLINE_HOURS else
                           (-DEADLINE_HOURS if ttd < -DEADLINE_HOURS else ttd))
            sreq = r.due_work / left / self.total_slots if left > 1.0 else RATIO_MAX
            required = sreq if sreq < RATIO_MAX else RATIO_MAX
        else:                                       # no deadline
            to_deadline, required = DEADLINE_HOURS, 0.0
        if n >= 0:
            s, ti = self.sim, job.type_idx
            sp = s.speed[n] * s.accel_mult[n][ti] * s.int_f[n][ti]
            speed = sp if sp < SPEED_MAX else SPEED_MAX
        else:
            speed = 1.0
        wait = (now - r.arrival) / 3600.0
        write_row(w, r, locality, to_deadline, required, speed,
                  wait if wait < HOURS_MAX else HOURS_MAX, resumes, col_19, col_20)

    # ------------------------------------------------------------------ candidate rows by kind
    def _schedule_rows(self, w: BytesWriter, d: Decision, node: int, now: float) -> None:
        """Each candidate job-phase on the decision node: its locality, and whether it resumes
        a suspended task there."""
        for c in d.candidates:
            assert isinstance(c, ScheduleCandidate)
            job = c.job
            phase = c.phase
            resumes = 0.0
            if job.susp and job.suspended_on(node, phase) is not None:
                resumes = 1.0
            self._write_job_row(w, job, phase, node, now, _LOC_SCALE * c.locality, resumes,
                                0.0, 0.0)

    def _admit_rows(self, w: BytesWriter, d: Decision, node: int, now: float) -> None:
        """The arrived job (as its map phase, on no node)."""
        c = d.candidates[0]
        assert isinstance(c, AdmitCandidate)
        self._write_job_row(w, c.job, MAP, -1, now, 0.0, 0.0, 0.0, 0.0)

    def _preempt_rows(self, w: BytesWriter, d: Decision, node: int, now: float) -> None:
        """Each victim's job on the victim's node, the primitive and the victim's progress."""
        for c in d.candidates:
            assert isinstance(c, PreemptCandidate)
            task = c.task
            rem = task.remaining - task.rate * (now - task.t_last)
            self._write_job_row(w, task.job, task.phase, task.node, now, 0.0, 0.0,
                                float(c.primitive == SUSPEND),
                                max(0.0, 1.0 - rem / task.work) if task.work > 0 else 1.0)

    def _speculate_rows(self, w: BytesWriter, d: Decision, node: int, now: float) -> None:
        """Each running task to copy: its job on the decision node (where the copy would run),
        the copy's locality, the task's estimated time left and its progress."""
        rack = self.sim.rack
        for c in d.candidates:
            assert isinstance(c, SpeculateCandidate)
            task = c.task
            job = task.job
            loc = _LOC_SCALE * job.locality_of(task.idx, node, rack) if task.phase == MAP else 0.0
            left = time_left(task, now) / 3600.0
            self._write_job_row(w, job, task.phase, node, now, loc, 0.0,
                                left if left < DEADLINE_HOURS else DEADLINE_HOURS,
                                task.progress_at(now))

    #: Each kind's candidate-row builder, by name (a held method would not follow a copy).
    CANDIDATE_ROWS: ClassVar[dict[DecisionKind, str]] = {
        SCHEDULE: "_schedule_rows", ADMIT: "_admit_rows", PREEMPT: "_preempt_rows",
        SPECULATE: "_speculate_rows"}

    # ------------------------------------------------------------------ the observation
    def observe(self) -> dict[str, np.ndarray]:
        """The current decision's observation (the fields of a record over observe_bytes)."""
        record = _NDARRAY((), self._record, self.observe_bytes())
        obs = {"decision": record["decision"], "candidates": record["candidates"],
               "nodes": record["nodes"], "forecast": record["forecast"]}
        if not _LITTLE_ENDIAN:                        # pragma: no cover - big-endian machines
            obs = {k: v.astype(np.float32) for k, v in obs.items()}
        return obs

    def observe_bytes(self) -> bytearray:
        """The current decision's observation as one new buffer of little-endian float32: the
        decision, the candidate rows, node rows, forecast (:mod:`~mrsched_gym.env.float_writer`)."""
        s = self.sim
        now = s.now
        if s.jobs is not self._jobs:           # a new world without reset(): drop the cache
            self._forget_jobs()
        elif 2 * len(s.jobs) != len(self._rows):  # jobs added (Simulator.add_job) or dropped
            self._resize_cache(2 * len(s.jobs))
        packed = self._node_bytes
        if s.dirty:
            pack_changed_rows(s, packed, self._free_map, self._free_red, self.max_speed)
        d = s.decision
        kind = d.kind
        node = d.node if ((kind == SCHEDULE or kind == SPECULATE) and not s.done) else -1
        prev = self._prev_node
        if prev != node:
            if prev >= 0:
                ONE_FLOAT.pack_into(packed, 4 * (prev * NODE_FEATURES + 9), 0.0)
            if node >= 0:
                ONE_FLOAT.pack_into(packed, 4 * (node * NODE_FEATURES + 9), 1.0)
            self._prev_node = node
        t_frac = now / self.limit_s
        act = s.n_active / self.K
        run = len(s.runnable) / self.K
        w = BytesWriter()
        w.write(self._no_kind if s.done else self._one_hot[kind])
        write_f32_le(w, t_frac if t_frac < 1.0 else 1.0)
        write_f32_le(w, s.availability_now())
        write_f32_le(w, act if act < RATIO_MAX else RATIO_MAX)
        write_f32_le(w, run if run < RATIO_MAX else RATIO_MAX)
        if node >= 0:
            write_f32_le(w, self._free_map[node])
            write_f32_le(w, self._free_red[node])
            write_f32_le(w, 1.0)
        else:
            write_f32_le(w, 0.0)
            write_f32_le(w, 0.0)
            write_f32_le(w, 0.0)
        rows = 0
        if not s.done:
            if kind == SCHEDULE:                                           # the usual
                self._schedule_rows(w, d, node, now)
            else:
                getattr(self, self.CANDIDATE_ROWS[kind])(w, d, node, now)
            rows = len(d.candidates)
        for _ in range(rows, self.K):                 # zeros: the rows past the candidates
            w.write(_ZERO_ROW)
        w.write(packed)
        w.write(self._forecast())
        buf = bytearray(w.getvalue())                 # writable arrays
        if len(buf) != self._record_bytes:            # pragma: no cover - a layout bug
            raise RuntimeError(f"observation of {len(buf)} bytes, {self._record_bytes} "
                               "expected: the row builders and the layout disagree")
        return buf


__all__ = ["CANDIDATE_FEATURES", "DECISION_FEATURES", "DECISION_KIND_SLICE", "DECISION_TAIL",
           "NODE_FEATURES", "ObservationEncoder", "decision_features", "decision_kind_slot",
           "kind_slice", "objective_vector", "observed_kind"]   # with obs_layout's names
