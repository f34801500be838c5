"""Live simulation records: jobs and tasks (plain ``__slots__`` classes, deep-copyable,
picklable)."""

from __future__ import annotations

import math
from typing import Any, Final

from mrsched_gym.sim.native import mypyc_attr
from mrsched_gym.workloads.profiles import JobTypeProfile

MAP: Final = 0
REDUCE: Final = 1
PHASE_NAMES = ("map", "reduce")

# Task states (``Final``: the compiled build inlines them instead of looking them up)
PENDING: Final = 0
RUNNING: Final = 1
SUSPENDED: Final = 2
DONE: Final = 3
# Job states
FUTURE: Final = 0
WAITING_ADMISSION: Final = 1
ACTIVE: Final = 2
FINISHED: Final = 3
REJECTED: Final = 4
# Locality levels of a map launch
NODE_LOCAL: Final = 0
RACK_LOCAL: Final = 1
OFF_RACK: Final = 2
#: Tolerance of the simulator's float comparisons (work left, reservations, memory).
EPS: Final = 1e-9


@mypyc_attr(allow_interpreted_subclasses=True)
class Task:
    """One launched attempt of a map or reduce task.

    Progress is fluid: ``remaining`` work (reference seconds) shrinks at ``rate`` since ``t_last``.
    A reduce task cannot go below ``floor`` (its un-shuffled share plus its reduce work) until the
    job's maps are done (shuffle progresses as map outputs become available).

    Args:
        tid: Task id (attempts are numbered in launch order).
        job: Its job.
        phase: ``MAP`` or ``REDUCE``.
        idx: Index of the task within its job's phase.
        node: Node it runs on.
        work: Total work of this attempt, extras included (reference seconds).
        demand: ``(cpu, io, mem, net)`` fractions of the node it uses.
        now: Launch time (s).
        mem_gb: Memory it occupies.
    """

    __slots__ = ("tid", "job", "phase", "idx", "node", "remaining", "floor", "rate", "t_last",
                 "version", "demand", "work", "start_s", "mem_gb", "swapped_gb", "state",
                 "est", "shuffle_s", "locality", "first_start_s", "src", "read_io",
                 "type_idx", "base", "mem0", "cpu_est", "twin", "is_copy", "end_s", "end_seq",
                 "queued")

    def __init__(self, tid: int, job: Job, phase: int, idx: int, node: int, work: float,
                 demand: tuple[float, float, float, float], now: float, mem_gb: float) -> None:
        self.tid = tid
        self.job = job
        self.phase = phase
        self.idx = idx
        self.node = node
        self.work = work            # total work of this attempt incl. extras (reference s)
        self.remaining = work
        self.floor = 0.0
        self.rate = 0.0
        self.t_last = now
        self.version = 0
        self.demand = demand        # (cpu, io, mem, net) fractions of the node
        self.start_s = now
        self.first_start_s = now
        self.mem_gb = mem_gb
        self.swapped_gb = 0.0
        self.state = RUNNING
        self.est: float | None = None   # orchestrator's memory estimate (None = static share)
        self.cpu_est: float | None = None   # orchestrator's CPU estimate (None = OS share)
        self.shuffle_s = 0.0
        self.locality = NODE_LOCAL
        self.type_idx = job.type_idx
        self.base = 1.0                 # CPU speed x accelerator speed-up on its node
        self.mem0 = 1.0                 # memory allocation before any orchestrator estimate
        self.src = -1                   # data node a remote map reads its block from
        self.read_io = 0.0              # disk demand it puts on that data node
        self.twin: Task | None = None   # the other running copy (speculative execution)
        self.is_copy = False            # a backup copy launched by speculation
        # Its end event (time, sequence number; ``inf``: none) and the version whose event is
        # in the queue (-1: none): only each node's earliest end is queued (sim/rates.py).
        self.end_s = math.inf
        self.end_seq = 0
        self.queued = -1

    @property
    def progress(self) -> float:
        """Fraction of this attempt's work done (as of its last update, ``t_last``)."""
        return 1.0 - self.remaining / self.work if self.work > 0 else 1.0

    def progress_at(self, now: float) -> float:
        """Fraction of this attempt's work done at ``now`` (its current rate carried forward
        from ``t_last``, as the simulator's own update does; read-only)."""
        if self.work <= 0:
            return 1.0
        rem = self.remaining - self.rate * (now - self.t_last)
        if rem < self.floor:
            rem = self.floor
        return 1.0 - rem / self.work


@mypyc_attr(allow_interpreted_subclasses=True)
class Job:
    """A submitted MapReduce job and its live counters.

    Args:
        jid: Job id (its index in arrival order).
        draw: The job as drawn at reset (a :class:`~mrsched_gym.workloads.synthetic.JobDraw`).
        profile: Its job type's profile.
    """

    __slots__ = ("jid", "type_idx", "profile", "arrival_s", "deadline_s", "priority", "weight",
                 "n_maps", "n_reduces", "map_work", "reduce_work", "map_mult", "reduce_mult",
                 "replicas", "label", "state", "maps_done", "reduces_done", "maps_running",
                 "reduces_running", "pending_maps", "pending_reduces", "map_state", "pend_stack",
                 "by_node", "by_rack", "red_stack", "susp", "running_reduces", "reduce_ready",
                 "late", "finish_s", "first_start_s", "len_sum", "len_n", "lens",
                 "locality_counts",
                 "work_done", "total_work", "preempt_budget", "alone_s", "has_map_work",
                 "has_red_work", "est_finish_s", "prior_len", "map_alone_s", "map_finish_s",
                 "est_deadline_finish_s", "expected_len", "schedule_candidates", "map_demand",
                 "reduce_demand", "task_mem_gb", "shuffle_mb_per_map")

    def __init__(self, jid: int, draw: Any, profile: JobTypeProfile) -> None:
        self.jid = jid
        self.type_idx = int(draw.type_idx)
        self.profile = profile
        # The profile's figures read at every launch, held by the job (the compiled build reads
        # its own attributes directly, a profile's through a look-up).
        self.map_demand: tuple[float, ...] = profile.map_demand
        self.reduce_demand: tuple[float, ...] = profile.reduce_demand
        self.task_mem_gb = profile.task_mem_gb
        self.shuffle_mb_per_map = profile.shuffle_mb_per_map
        self.arrival_s = float(draw.arrival_s)
        self.deadline_s = float(draw.deadline_s)
        self.priority = int(draw.priority)
        self.weight = float(draw.weight)
        self.map_work: list[float] = draw.map_work.tolist()     # typed: the compiled build
        self.reduce_work: list[float] = draw.reduce_work.tolist()   # does their arithmetic
        self.map_mult: list[float] = draw.map_mult.tolist()     # on C doubles
        self.reduce_mult: list[float] = draw.reduce_mult.tolist()
        self.replicas = draw.replicas
        self.label = draw.label
        self.n_maps = len(self.map_work)
        self.n_reduces = len(self.reduce_work)
        self.state = FUTURE
        self.maps_done = 0
        self.reduces_done = 0
        self.maps_running = 0
        self.reduces_running = 0
        self.pending_maps = self.n_maps
        self.pending_reduces = self.n_reduces
        self.map_state = bytearray(self.n_maps)            # 0 pending, 1 launched, 2 done
        self.pend_stack: list[int] = []
        self.by_node: dict[int, list[int]] = {}
        self.by_rack: dict[int, list[int]] = {}
        self.red_stack = list(range(self.n_reduces - 1, -1, -1))
        self.susp: list[Task] = []
        self.running_reduces: list[Task] = []
        self.reduce_ready = False
        self.late = False
        self.finish_s = math.nan
        self.first_start_s = math.nan
        self.len_sum = [0.0, 0.0]                          # wall-clock lengths of finished tasks
        self.len_n = [0, 0]
        self.lens: tuple[list[float], list[float]] = ([], [])   # the same lengths, by phase
        self.locality_counts = [0, 0, 0]
        self.work_done = 0.0
        self.total_work = float(sum(self.map_work) + sum(self.reduce_work))
        # the job's trained profile: mean task work per phase on a reference node (s)
        self.prior_len = tuple(sum(w) / len(w) if w else 0.0
                               for w in (self.map_work, self.reduce_work))
        # the mean its task work was drawn around, per phase: what a scheduler can expect
        self.expected_len = (float(draw.map_mean_s), float(draw.reduce_mean_s))
        self.preempt_budget = 0
        self.alone_s = 0.0
        self.map_alone_s = 0.0              # its map phase alone (deadline base, map scope)
        self.map_finish_s = math.nan        # when its last map finished
        self.est_finish_s = math.nan        # estimated completion of an unserved job at the end
        self.est_deadline_finish_s = math.nan   # ... of the part its deadline covers
        self.has_map_work = False
        self.has_red_work = False
        #: Its ``ScheduleCandidate`` tuples, made once and offered again (equal values, so the
        #: same tuple serves): the map phase by locality (``NODE_LOCAL`` to ``OFF_RACK``), then
        #: the reduce phase (``sim/schedule.py``).
        self.schedule_candidates: list[Any] = [None, None, None, None]

    def build_locality(self, racks: list[int]) -> None:
        """Index pending maps by replica node and rack (Hadoop's non-running map cache)."""
        self.pend_stack = list(range(self.n_maps - 1, -1, -1))
        by_node: dict[int, list[int]] = {}
        by_rack: dict[int, list[int]] = {}
        reps: list[list[int]] = self.replicas.tolist()
        for i in range(self.n_maps - 1, -1, -1):
            seen_racks: list[int] = []        # a map's few replica racks, each filed once
            for n in reps[i]:
                stack = by_node.get(n)
                if stack is None:
                    by_node[n] = [i]
                else:
                    stack.append(i)
                r = racks[n]
                if r not in seen_racks:
                    seen_racks.append(r)
                    stack = by_rack.get(r)
                    if stack is None:
                        by_rack[r] = [i]
                    else:
                        stack.append(i)
        self.by_node = by_node
        self.by_rack = by_rack

    def requeue_map(self, i: int, racks: list[int]) -> None:
        """Make map ``i`` pending again (after a kill or a lost node)."""
        self.map_state[i] = 0
        self.pending_maps += 1
        self.pend_stack.append(i)
        seen = set()
        for n in self.replicas[i].tolist():
            self.by_node.setdefault(n, []).append(i)
            r = racks[n]
            if r not in seen:
                seen.add(r)
                self.by_rack.setdefault(r, []).append(i)

    @staticmethod
    def _peek(stack: list[int] | None, state: bytearray) -> int:
        """Top pending map of a lazily-cleaned stack, or -1."""
        if not stack:
            return -1
        while stack and state[stack[-1]] != 0:
            stack.pop()
        return stack[-1] if stack else -1

    def map_locality(self, node: int, rack: int) -> int:
        """Best locality level a pending map of this job has on ``node``."""
        state = self.map_state               # (:meth:`_peek` inlined: this runs per candidate)
        stack = self.by_node.get(node)
        if stack:
            while stack and state[stack[-1]]:
                stack.pop()
            if stack:
                return NODE_LOCAL
        stack = self.by_rack.get(rack)
        if stack:
            while stack and state[stack[-1]]:
                stack.pop()
            if stack:
                return RACK_LOCAL
        return OFF_RACK

    def locality_of(self, i: int, node: int, racks: list[int]) -> int:
        """The locality level of map ``i`` on ``node`` (a replica there, in its rack, or
        neither)."""
        reps = self.replicas[i].tolist()
        if node in reps:
            return NODE_LOCAL
        rack = racks[node]
        return RACK_LOCAL if any(racks[r] == rack for r in reps) else OFF_RACK

    def take_map(self, node: int, rack: int) -> tuple[int, int]:
        """Pick the best-placed pending map for ``node``: returns ``(map index, locality)``."""
        i = self._peek(self.by_node.get(node), self.map_state)
        loc = NODE_LOCAL
        if i < 0:
            i = self._peek(self.by_rack.get(rack), self.map_state)
            loc = RACK_LOCAL
        if i < 0:
            i = self._peek(self.pend_stack, self.map_state)
            loc = OFF_RACK
        self.map_state[i] = 1
        self.pending_maps -= 1
        return i, loc

    def suspended_on(self, node: int, phase: int) -> Task | None:
        """A suspended task of this job on ``node`` in ``phase`` (resume locality), if any."""
        for t in self.susp:
            if t.node == node and t.phase == phase:
                return t
        return None

    @property
    def tasks_done(self) -> int:
        """Finished tasks, both phases."""
        return self.maps_done + self.reduces_done

    def mean_task_len(self, phase: int) -> float:
        """Observed mean wall-clock length of finished tasks of ``phase`` (nan if none yet)."""
        n = self.len_n[phase]
        return self.len_sum[phase] / n if n else math.nan
