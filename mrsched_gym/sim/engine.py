"""The discrete-event simulator of a Hadoop/MapReduce cluster (SPEC section 2).

No Gymnasium here: the simulator imports only the standard library, numpy and the project's
config/model modules. One event loop (:meth:`Simulator._run`) is the only place time advances.

Decision interface
------------------
:meth:`Simulator.reset` draws the world and runs to the first decision; :meth:`Simulator.act`
applies the policy's choice and runs to the next. The current decision is
:attr:`Simulator.decision`, a :class:`~mrsched_gym.sim.decision.Decision` (the contract and its
kinds: :mod:`mrsched_gym.sim.decision`). Each kind is one small module (posing and applying it),
registered in :data:`DECISION_PARTS`: :mod:`~mrsched_gym.sim.schedule`,
:mod:`~mrsched_gym.sim.admission`, :mod:`~mrsched_gym.sim.preemption`.

Rate model (fluid, recomputed per node whenever anything on it changes)
-----------------------------------------------------------------------
rate = cpu_speed x accelerator speed-up x f_share x f_mem x 1/NormTCT_j(r)

* f_share: CPU, disk I/O and network are shared work-conservingly (the OS scheduler): with
  demands D_r summed over the node's running tasks and capacity A_r (CPU: f(t) in capacity mode),
  f_share = min(1, A_cpu/D_cpu, 1/D_io, 1/D_net) (processor sharing on the bottleneck resource).
  MROrchestrator ``uniform``/``regression`` also divides a contended node's CPU (D_cpu > A_cpu):
  task i gets c_i = min(d_i x its disk/network/data-node limit, lambda x e_i), the capacity
  water-filled in proportion to the orchestrator's estimates e_i (:func:`cpu_factors`), and its
  CPU factor is c_i / d_i in place of A_cpu/D_cpu. UNIFORM: e_i = the job-phase's mean CPU
  demand (Algorithm 2 line 4). REGRESSION: e_i = alpha x the current allocation with alpha =
  the mean progress rate of the task's job-phase over its own (Eq. 1-2: tasks behind their
  peers get more, those ahead less), at most d_i (:meth:`Simulator._regression_cpu_estimates`).
  Estimates are set at each epoch for every running task; a task launched since the last epoch
  keeps the OS share until the next (like the memory estimate).
* f_mem: each task gets a memory allocation m. Slots mode without an orchestrator: a static
  1/(map+reduce slots) share (Hadoop 1 slot-level sharing: a fixed child heap per slot,
  MROrchestrator II); containers: the container's reservation (profile demand); MROrchestrator
  ``uniform``/``regression``: the node's memory divided in proportion to the estimate (the
  job-phase mean demand / the task's own demand, i.e. the converged Algorithm 1-2 estimate),
  applied at the next epoch. A task whose demand exceeds m spills:
  f_mem = 1 / (1 + swap_slowdown * (1 - m / demand)). When the node's total memory demand exceeds
  its memory, ``swap`` caps every allocation at demand / total (all tasks thrash) and ``fail``
  kills the newest tasks until it fits. This gives the thesis Fig. 4.3 trade-off: more slots use
  CPU and disk better but shrink each slot's memory.
* NormTCT_j(r): interference on shared nodes (MIMP Eq. 2, :mod:`mrsched_gym.models.interference`).
* Remote map reads add block_mb / net_mb_s (x off_rack_factor off-rack) of work and raise the
  task's network demand, so concurrent remote reads contend (SPEC 2.4).
* Data-node I/O (MIMP 5.1, "Data Node I/O"): half of a map's disk demand is reading its input
  block (``READ_FRACTION``), half writing its output locally. A remote map reads from the least
  loaded replica (in its rack when rack-local), so its read demand loads that *data node's* disk;
  when a data node's disk demand exceeds its capacity every task reading from it slows down too
  (f_share also takes min(1, 1/D_io) of the data node). MIMP's Eq. 5 predictor of this load
  belongs to the MP baseline; the simulator models the overload itself.
* A reduce task's work is its shuffle (its share of map output / net_mb_s) plus its reduce work;
  it stalls at its un-shuffled share until more maps finish (SPEC 2.5).

Episode accounting (what a metric may not reward)
-------------------------------------------------
The integrals behind rewards and metrics (time in system, weighted lateness) run over every job
in the system: accepted jobs until they finish, **rejected jobs too** — a rejected job is charged
as if it had been accepted and never run. When the episode ends (every job finished or rejected,
or the time limit), every arrived job that did not finish gets the estimated completion
``time_limit_s + remaining_alone_s`` (as if it waited unserved until the time limit, then ran
alone: its completion time alone on the cluster times its share of work not done) and is charged
to that time: lateness w_j (y_j - d_j)^+ and time in system y_j - a_j
(:meth:`Simulator._close_books`). So rejecting a job never scores better than accepting it and
never running it, leaving work unfinished never costs less than finishing it right after the
limit, and the last step's reward carries the charge (the return stays exactly minus the
objective).

Deadline scope (``workload.deadline_scope``): a deadline covers the whole job, or with ``map`` its
map phase (MIMP 3.1): the lateness counter w_late drops a job when its last map finishes, and
:meth:`Simulator._close_books` charges an unserved job's lateness to the time limit plus its
remaining map work alone (:meth:`Simulator.deadline_remaining_alone_s`); metrics use the same
rule (``EpisodeLog.deadline_finish_s``).

Gaps we filled (documented choices): the MROrchestrator's estimators are the converged forms of
Algorithm 2 where the fluid model makes the regression trivial: a task's memory need is its own
demand (REGRESSION) or its job-phase's mean (UNIFORM); its CPU use per unit of progress is
constant, so REGRESSION's "allocation required to meet the target finish time" is taken with the
target at its job-phase's mean progress rate (the GRM's "in sync" check, III step 3). Targets
set at the job-phase's mean *finish time* instead starve tasks that are nearly done while a new
wave of the same phase starts (JCT +11% on the mrorchestrator reproduction), so we balance rates;
disk and network are not orchestrated (the paper controls CPU and memory, III). Suspended tasks
can only resume on their node (a restart elsewhere is a kill + relaunch).
"""

from __future__ import annotations

import bisect
import heapq
import math
from typing import Any

import numpy as np

from mrsched_gym.config import Scenario
from mrsched_gym.models.availability import (
    availability_fraction,
    forecast_series,
    node_up_from_fraction,
)
from mrsched_gym.models.interference import residual_capacity, response_time_ms, web_load_series
from mrsched_gym.models.traces import TraceError, read_series, sample_steps
from mrsched_gym.sim import admission, preemption, schedule
from mrsched_gym.sim.decision import (
    ADMIT,
    DECISION_NAMES,
    KILL,
    PREEMPT,
    PRIMITIVE_NAMES,
    SCHEDULE,
    SUSPEND,
    Candidate,
    Decision,
    DecisionKind,
    DecisionPart,
)
from mrsched_gym.sim.events import EventKind, EventQueue
from mrsched_gym.sim.state import (
    ACTIVE,
    DONE,
    FINISHED,
    FUTURE,
    MAP,
    NODE_LOCAL,
    OFF_RACK,
    PENDING,
    RACK_LOCAL,
    REDUCE,
    REJECTED,
    RUNNING,
    SUSPENDED,
    WAITING_ADMISSION,
    Job,
    Task,
)
from mrsched_gym.workloads.profiles import PROFILES, TYPE_NAMES
from mrsched_gym.workloads.synthetic import draw_jobs
from mrsched_gym.workloads.trace import check_trace_reduces, trace_window

#: The decision kinds, in the order they are posed when several are due: an arrived job's
#: admission first, then a waiting high-priority job's preemption, then free capacity. A new kind
#: is one module with its ``PART`` and one entry here (and its rows in the observation encoding).
DECISION_PARTS: tuple[DecisionPart, ...] = (admission.PART, preemption.PART, schedule.PART)
_APPLY = {part.kind: part.apply for part in DECISION_PARTS}
#: The decision constants, importable from here as before (defined in ``sim.decision``).
__all__ = ["ADMIT", "DECISION_NAMES", "DECISION_PARTS", "KILL", "MIN_CPU_SHARE", "PREEMPT",
           "PRIMITIVE_NAMES", "READ_FRACTION", "SCHEDULE", "SUSPEND", "Simulator", "cpu_factors",
           "uniform_cpu_estimates"]
_EPS = 1e-9
#: Share of a map task's disk demand that is reading its input block (the rest is local output).
READ_FRACTION = 0.5

_NODE_CHANGE = int(EventKind.NODE_CHANGE)
_LOAD_CHANGE = int(EventKind.LOAD_CHANGE)
_TASK_END = int(EventKind.TASK_END)
_CLEANUP_END = int(EventKind.CLEANUP_END)
_ORCHESTRATE = int(EventKind.ORCHESTRATE)
_DEADLINE = int(EventKind.DEADLINE)
_ARRIVAL = int(EventKind.ARRIVAL)


#: Smallest CPU estimate REGRESSION gives a task, as a fraction of its CPU demand.
MIN_CPU_SHARE = 0.01


def cpu_factors(tasks: list[Task], capacity: float, usable: list[float]) -> list[float]:
    """MROrchestrator's CPU division of one contended node: each task's allocation / its demand.

    Every task asks for its estimate (``cpu_est``; a task not yet estimated, launched since the
    last epoch, for its demand: the OS share) and never gets more than it can use, its demand
    times ``usable`` (its progress limit from the node's disk and network shares and its data
    node). The capacity is water-filled in proportion to the requests: c_i = min(cap_i,
    lambda x e_i) with sum c_i = capacity (Algorithm 1 moves allocations to the estimates; the
    Performance Balancer arbitrates a node's requests, seed 001 III step 4). With every
    estimate equal to its demand and nothing else limiting, this is the OS share
    capacity / sum of demands.

    Args:
        tasks: The node's running tasks (CPU demand ``demand[0]``, estimate ``cpu_est``).
        capacity: The node's CPU capacity (below the sum of demands).
        usable: Per task, the fraction of its demand it can use (<= 1).

    Returns:
        Per task, in order, c_i / d_i (<= 1).
    """
    demand = [t.demand[0] for t in tasks]
    want = [d if t.cpu_est is None else t.cpu_est for t, d in zip(tasks, demand, strict=False)]
    cap = [d * u for d, u in zip(demand, usable, strict=False)]
    lam = capacity / sum(want)
    if all(lam * w <= c for w, c in zip(want, cap, strict=False)):     # no request reaches its cap
        return [lam * w / d if d > 0 else 1.0 for w, d in zip(want, demand, strict=False)]
    order = sorted(range(len(tasks)), key=lambda i: cap[i] / want[i] if want[i] > 0
                   else math.inf)
    g = [1.0] * len(tasks)
    left, weight = capacity, sum(want)
    k = 0
    while k < len(order) and weight > 0:         # requests that fit under their cap in full
        i = order[k]
        if cap[i] > left / weight * want[i]:
            break
        g[i] = usable[i]
        left -= cap[i]
        weight -= want[i]
        k += 1
    lam = left / weight if weight > 0 else 0.0
    for i in order[k:]:
        g[i] = lam * want[i] / demand[i] if demand[i] > 0 else 1.0
    return g


def uniform_cpu_estimates(tasks: list[Task]) -> list[float]:
    """UNIFORM CPU estimates (seed 001 III-B2, Algorithm 2 lines 3-4): every task's entitlement
    is the mean CPU use of its job's tasks of the same phase; we take the job-phase's profile
    mean demand (the mean over its tasks of the usage a profiler sees, as for memory)."""
    out = []
    for t in tasks:
        p = t.job.profile
        out.append((p.map_demand if t.phase == MAP else p.reduce_demand)[0])
    return out


class Simulator:
    """A Hadoop cluster simulation for one scenario; :meth:`reset` draws a new world.

    Args:
        scenario: The scenario; its trace files are read now, so a bad trace fails here.

    What policies may read (never mutate) is :class:`~mrsched_gym.sim.view.ClusterView`: the
    current :attr:`decision` and the documented cluster state. The mutating methods
    (:meth:`launch`, :meth:`accept`, :meth:`reject`, :meth:`kill`, :meth:`suspend`) are for the
    decision parts (:data:`DECISION_PARTS`), not for policies.
    """

    def __init__(self, scenario: Scenario) -> None:
        self.scenario = scenario
        self.K = scenario.decisions.max_candidates
        self._build_cluster()
        # Read trace files now, so a bad trace fails at construction, not mid-run.
        horizon = scenario.time_limit_s
        if scenario.interference.load == "trace":
            self._trace(scenario.interference, horizon)
        if scenario.availability.generator in ("trace", "transactional"):
            self._trace(scenario.availability, horizon)
        if scenario.workload.kind == "trace":
            trace_window(scenario.workload)      # a bad trace or an empty window fails now
            check_trace_reduces(scenario.workload, scenario.cluster)
        #: Whether deadlines cover the map phase only (``workload.deadline_scope: map``).
        self.map_scope = scenario.workload.deadline_scope == "map"
        self.done = True
        self.truncated = False

    # ------------------------------------------------------------------ world construction
    def _build_cluster(self) -> None:
        c = self.scenario.cluster
        self.n_nodes = n = c.n_nodes
        self.slots_mode = c.resource_mode == "slots"
        self.speed: list[float] = []
        self.accel: list[str | None] = []
        self.shared: list[bool] = []
        self.map_slots: list[int] = []
        self.red_slots: list[int] = []
        self.mem_gb: list[float] = []
        self.disk_mb_s: list[float] = []
        self.net_mb_s: list[float] = []
        self.cores: list[int] = []
        for g in c.nodes:
            for _ in range(g.count):
                self.speed.append(g.cpu_speed)
                self.accel.append(g.accelerator)
                self.shared.append(g.kind == "shared")
                self.map_slots.append(g.effective_map_slots)
                self.red_slots.append(g.effective_reduce_slots)
                self.mem_gb.append(g.mem_gb)
                self.disk_mb_s.append(g.disk_mb_s)
                self.net_mb_s.append(g.net_mb_s)
                self.cores.append(g.cpu_cores)
        self.rack = [i % c.racks for i in range(n)]
        self.shared_nodes = [i for i in range(n) if self.shared[i]]
        self.shared_pos = [-1] * n
        for k, i in enumerate(self.shared_nodes):
            self.shared_pos[i] = k
        self.static_share = [1.0 / (self.map_slots[i] + self.red_slots[i]) for i in range(n)]
        self.total_slots = float(sum(self.map_slots) + sum(self.red_slots))
        # accelerator speed-up per node and type: [n][type]
        self.accel_mult = [[PROFILES[t].accel_speedup.get(acc, 1.0) if acc
                            else 1.0 for t in TYPE_NAMES] for acc in self.accel]
        self.tct = [PROFILES[t].tct for t in TYPE_NAMES]
        self.spill = self.scenario.cluster.swap_slowdown
        self.swap_mode = self.scenario.cluster.memory_overcommit == "swap"
        self.tct_dedicated = [PROFILES[t].tct_s(1.0) for t in TYPE_NAMES]

    def reset(self, rng: np.random.Generator) -> None:
        """Draw a new world from ``rng`` and run to the first decision.

        The generator is split into independent streams (cluster layout, arrivals, task work,
        block placement, interactive load, availability, forecast), so e.g. a different
        availability setting does not change the jobs drawn for the same seed.
        """
        sc = self.scenario
        (r_jobs, r_tasks, r_place, r_load, r_avail, r_nodes, r_fc) = rng.spawn(7)
        n = self.n_nodes
        horizon = sc.time_limit_s
        self.now = 0.0
        self.done = False
        self.truncated = False
        self.queue = EventQueue()
        # --- node state
        self.used_map = [0] * n
        self.used_red = [0] * n
        self.res = [[0.0, 0.0, 0.0] for _ in range(n)]    # containers: reserved cpu, io, mem
        self.up = [True] * n
        self.cap = [1.0] * n
        self.residual = [1.0] * n
        ones = [1.0] * len(TYPE_NAMES)
        self.int_f = [ones for _ in range(n)]  # 1/NormTCT per node and type (shared nodes)
        self.tasks_on: list[list[Task]] = [[] for _ in range(n)]
        self.susp_on: list[list[Task]] = [[] for _ in range(n)]
        self.readers: list[list[Task]] = [[] for _ in range(n)]   # remote maps reading from n
        self.io_f = [1.0] * n                 # disk share factor of each node (as a data node)
        self.own_io = [0.0] * n               # disk demand of the node's own running tasks
        self.read_sum = [0.0] * n             # disk demand of remote maps reading from it
        self.mem_used_gb = [0.0] * n          # running tasks' memory
        self.susp_resident_gb = [0.0] * n     # suspended tasks' memory still in RAM
        self.cleanups: list[list[tuple[int, int]]] = [[] for _ in range(n)]
        self.hcpu = [0.0] * n
        self.resp_ms = [sc.interference.response_alone_ms if s else 0.0 for s in self.shared]
        # --- timelines drawn at reset
        self.load_u = web_load_series(sc.interference, len(self.shared_nodes), horizon, r_load,
                                      trace=self._trace(sc.interference, horizon))
        self.avail_f, up_matrix = availability_fraction(
            sc.availability, horizon, r_avail, n,
            trace=self._trace(sc.availability, horizon))
        self.node_up: np.ndarray | None
        if sc.availability.generator != "none" and sc.availability.mode == "nodes":
            self.node_up = up_matrix if up_matrix is not None else node_up_from_fraction(
                self.avail_f, n, r_nodes)
        else:
            self.node_up = None
        self.forecast_f = forecast_series(self.avail_f, sc.availability.forecast_noise, r_fc)
        # --- jobs
        draws = draw_jobs(sc.workload, sc.cluster, r_jobs, r_tasks, r_place)
        self.jobs = [Job(i, d, PROFILES[TYPE_NAMES[d.type_idx]]) for i, d in enumerate(draws)]
        for j, d in zip(self.jobs, draws, strict=False):
            j.alone_s = d.alone_s
            j.map_alone_s = d.map_alone_s
            self.queue.push(j.arrival_s, _ARRIVAL, j.jid)
        self.n_jobs = len(self.jobs)
        self.n_closed = 0                     # finished + rejected
        self.runnable: list[int] = []
        self._runnable_set: set[int] = set()
        self.n_map_jobs = 0                   # runnable jobs with map work / reduce work
        self.n_red_jobs = 0
        self.running: dict[int, Task] = {}
        self.next_tid = 0
        self.new_tasks: list[Task] = []
        self.admit_queue: list[int] = []
        self.preempt_queue: list[int] = []
        self.offer: list[int] = []
        self.idle: set[int] = set(range(n))
        self.task_log: list[tuple[Any, ...]] = []       # (start, end, jid, node, phase, outcome)
        self.resp_samples: list[float] = []   # web response times at each interference step
        self.dirty: set[int] = set(range(n))  # nodes whose observable state changed
        # --- integrals and counters for rewards and metrics
        self.n_active = 0
        self.w_late = 0.0                     # sum of weights of active jobs past deadline
        self.busy = 0.0                       # running tasks (slots) or reserved CPU (containers)
        self.capacity = self._capacity()
        self.n_slo_viol = 0
        self.resp_sum = sum(self.resp_ms[i] for i in self.shared_nodes)
        self.I_active = 0.0
        self.I_late = 0.0
        self.I_busy = 0.0
        self.I_cap = 0.0
        self.I_slo = 0.0
        self.I_resp = 0.0
        self.wasted_s = 0.0
        self.swap_s = 0.0
        self.n_rejected = 0
        self.n_unserved = 0                   # jobs charged by _close_books
        self.n_killed = 0
        self.n_suspended = 0
        self.n_lost = 0
        self.invalid_actions = 0
        # --- periodic events
        if self.shared_nodes:
            self._apply_load(0)
            self.queue.push(sc.interference.step_s, _LOAD_CHANGE, 1)
        if sc.availability.generator != "none":
            self._apply_avail(0)
            self.queue.push(sc.availability.step_s, _NODE_CHANGE, 1)
        if sc.cluster.orchestrator != "none":
            self.queue.push(sc.cluster.orchestrator_epoch_s, _ORCHESTRATE)
        self.decision = Decision(SCHEDULE, 0.0, -1, None, ())
        self._run()

    def _trace(self, cfg: Any, horizon: float) -> np.ndarray | None:
        """The trace of an interference or availability config, sampled at its ``step_s`` from its
        ``trace_offset_s`` (read once per simulator, then cached)."""
        if not cfg.trace:
            return None
        cache: dict[tuple[Any, ...], np.ndarray] = self.__dict__.setdefault("_trace_cache", {})
        key = (cfg.trace, cfg.step_s, cfg.trace_offset_s)
        if key not in cache:
            times, values = read_series(cfg.trace)
            if cfg.trace_offset_s > times[-1]:
                raise TraceError(f"{cfg.trace}: trace_offset_s={cfg.trace_offset_s} is past the "
                                 f"trace's last row (time {times[-1]})")
            cache[key] = sample_steps(times, values, cfg.step_s,
                                      int(math.ceil(horizon / cfg.step_s)) + 1, cfg.trace_offset_s)
        return cache[key]

    # ------------------------------------------------------------------ capacity helpers
    def _capacity(self) -> float:
        if self.slots_mode:
            return float(sum(self.map_slots[i] + self.red_slots[i]
                             for i in range(self.n_nodes) if self.up[i]))
        return float(sum(self.cap[i] for i in range(self.n_nodes) if self.up[i]))

    def has_free(self, n: int) -> bool:
        """Whether node ``n`` is up with a free slot (containers: CPU, I/O and memory left)."""
        if not self.up[n]:
            return False
        if self.slots_mode:
            return self.used_map[n] < self.map_slots[n] or self.used_red[n] < self.red_slots[n]
        r = self.res[n]
        return r[0] < self.cap[n] - 0.01 and r[1] < 0.99 and r[2] < 0.99

    def _touch(self, n: int) -> None:
        self.dirty.add(n)
        if self.has_free(n):
            self.idle.add(n)
        else:
            self.idle.discard(n)

    def fits(self, n: int, demand: tuple[float, ...]) -> bool:
        """Whether a container of ``demand`` (cpu, io, mem, ...) fits node ``n``'s reservations."""
        r = self.res[n]
        return bool(r[0] + demand[0] <= self.cap[n] + _EPS and r[1] + demand[1] <= 1.0 + _EPS
                and r[2] + demand[2] <= 1.0 + _EPS)

    def _refresh_runnable(self, job: Job) -> None:
        active = job.state == ACTIVE
        has_m = active and (job.pending_maps > 0 or any(t.phase == MAP for t in job.susp))
        has_r = active and ((job.reduce_ready and job.pending_reduces > 0) or any(
            t.phase == REDUCE for t in job.susp))
        self.n_map_jobs += has_m - job.has_map_work
        self.n_red_jobs += has_r - job.has_red_work
        job.has_map_work = has_m
        job.has_red_work = has_r
        ok = has_m or has_r
        jid = job.jid
        if ok and jid not in self._runnable_set:
            self._runnable_set.add(jid)
            bisect.insort(self.runnable, jid)
        elif not ok and jid in self._runnable_set:
            self._runnable_set.discard(jid)
            del self.runnable[bisect.bisect_left(self.runnable, jid)]

    # ------------------------------------------------------------------ time and integrals
    def _advance_to(self, t: float) -> None:
        dt = t - self.now
        if dt > 0:
            self.I_active += (self.n_active + self.n_rejected) * dt
            self.I_late += self.w_late * dt
            self.I_busy += self.busy * dt
            self.I_cap += self.capacity * dt
            self.I_slo += self.n_slo_viol * dt
            self.I_resp += self.resp_sum * dt
            self.now = t

    # ------------------------------------------------------------------ the event loop
    def _run(self) -> None:
        """Run events until a decision is pending or the episode ends (the one place time moves)."""
        q = self.queue
        limit = self.scenario.time_limit_s
        while True:
            if self._pose_decision():
                return
            if self.n_closed == self.n_jobs:
                self.done = True
                self._end_decision(SCHEDULE)
                self._close_books()
                return
            # Drop stale task events (superseded by a rate change) without a batch round trip.
            heap = q.heap
            running = self.running
            while heap and heap[0][1] == _TASK_END:
                e = heap[0]
                task = running.get(e[3])
                if task is not None and task.version == e[4]:
                    break
                heapq.heappop(heap)
            t = heap[0][0] if heap else math.inf
            if t > limit:
                self._advance_to(limit)
                self.done = True
                self.truncated = True
                self._end_decision(self.decision.kind)
                self._close_books()
                return
            self._advance_to(t)
            # Handle every event at this instant before offering capacity again.
            while q.heap and q.heap[0][0] <= t:
                _, kind, _, a, b = q.pop()
                if kind == _TASK_END:
                    self._on_task_end(a, b)
                elif kind == _ARRIVAL:
                    self._on_arrival(a)
                elif kind == _LOAD_CHANGE:
                    self._on_load_change(a)
                elif kind == _NODE_CHANGE:
                    self._on_node_change(a)
                elif kind == _CLEANUP_END:
                    self._on_cleanup_end(a)
                elif kind == _DEADLINE:
                    self._on_deadline(a)
                elif kind == _ORCHESTRATE:
                    self._on_orchestrate()
            if self.runnable and self.idle:
                self.offer = sorted(self.idle, reverse=True)   # pop() gives lowest index first

    def _pose_decision(self) -> bool:
        """Set up the next decision if one is due; returns whether one is pending."""
        for part in DECISION_PARTS:
            decision = part.pose(self)
            if decision is not None:
                self.decision = decision
                return True
        return False

    def _end_decision(self, kind: DecisionKind) -> None:
        """The episode is over: no candidates left (the last decision's node and job stay)."""
        d = self.decision
        self.decision = Decision(kind, self.now, d.node, d.job, ())

    # Shorthands for the current decision's fields (read-only).
    @property
    def kind(self) -> DecisionKind:
        """``decision.kind``."""
        return self.decision.kind

    @property
    def node(self) -> int:
        """``decision.node``."""
        return self.decision.node

    @property
    def job(self) -> Job | None:
        """``decision.job``."""
        return self.decision.job

    @property
    def candidates(self) -> tuple[Candidate, ...]:
        """``decision.candidates``."""
        return self.decision.candidates

    # ------------------------------------------------------------------ acting
    def is_legal(self, action: int) -> bool:
        """Whether ``action`` is legal now: a filled candidate slot, or skip (always legal)."""
        return 0 <= action < len(self.decision.candidates) or action == self.K

    def act(self, action: int) -> bool:
        """Apply ``action`` (index into the candidates; K = skip) and run to the next decision.

        Returns:
            Whether the action was valid. An invalid action (out of range or an empty candidate
            slot) is treated as skip and counted in :attr:`invalid_actions`.
        """
        if self.done:
            raise RuntimeError("act() called on a finished episode; call reset()")
        valid = self.is_legal(action)
        if not valid:
            self.invalid_actions += 1
            action = self.K
        _APPLY[self.decision.kind](self, self.decision, action)
        self._run()
        return valid

    # ------------------------------------------------------------------ job life cycle
    def _on_arrival(self, jid: int) -> None:
        job = self.jobs[jid]
        if self.scenario.decisions.admission:
            job.state = WAITING_ADMISSION
            self.admit_queue.append(jid)
        else:
            self.accept(job)

    def accept(self, job: Job) -> None:
        """Accept an arrived job: it becomes active and its tasks runnable."""
        job.state = ACTIVE
        job.build_locality(self.rack)
        self.n_active += 1
        if job.deadline_s <= self.now:
            job.late = True
            self.w_late += job.weight
        elif math.isfinite(job.deadline_s):
            self.queue.push(job.deadline_s, _DEADLINE, job.jid)
        if job.n_reduces and self.scenario.decisions.slow_start * job.n_maps <= 0:
            job.reduce_ready = True
        self._refresh_runnable(job)
        if self.scenario.decisions.preemption.enabled and job.priority > 0:
            job.preempt_budget = job.n_maps
            self.preempt_queue.append(job.jid)
        if self.idle:
            self.offer = sorted(self.idle, reverse=True)

    def reject(self, job: Job) -> None:
        """Reject an arriving job. It is charged as if accepted and never run (see
        :meth:`_close_books`): it stays in the time-in-system and lateness integrals."""
        job.state = REJECTED
        self.n_rejected += 1
        self.n_closed += 1
        if job.deadline_s <= self.now:
            job.late = True
            self.w_late += job.weight
        elif math.isfinite(job.deadline_s):
            self.queue.push(job.deadline_s, _DEADLINE, job.jid)

    def _on_deadline(self, jid: int) -> None:
        job = self.jobs[jid]
        if job.state in (ACTIVE, REJECTED) and not job.late and not (
                self.map_scope and job.maps_done == job.n_maps):
            job.late = True
            self.w_late += job.weight

    def _end_map_phase(self, job: Job) -> None:
        """The job's last map finished: with ``deadline_scope: map`` its deadline is settled
        (met, or its lateness stops accruing here)."""
        job.map_finish_s = self.now
        if self.map_scope and job.late:
            job.late = False
            self.w_late -= job.weight

    def _finish_job(self, job: Job) -> None:
        job.state = FINISHED
        job.finish_s = self.now
        self.n_active -= 1
        if job.late:
            self.w_late -= job.weight
        self.n_closed += 1
        self._refresh_runnable(job)

    def remaining_alone_s(self, job: Job) -> float:
        """Estimated time the job still needs, run alone on the cluster: its completion time alone
        (the deadline base with ``deadline_scope: job``) times the fraction of its work not yet
        done (finished tasks count; running ones count as not done). A rejected or
        never-started job needs all of it."""
        if job.state == FINISHED:
            return 0.0
        done = job.work_done / job.total_work if job.total_work > 0 else 0.0
        return job.alone_s * max(0.0, 1.0 - done)

    def deadline_remaining_alone_s(self, job: Job) -> float:
        """Estimated time, run alone, until the part of the job its deadline covers is done:
        :meth:`remaining_alone_s` (``deadline_scope: job``), or with ``deadline_scope: map`` its
        map phase alone times the fraction of its map work not yet done (0 once its maps are
        done)."""
        if not self.map_scope:
            return self.remaining_alone_s(job)
        if job.maps_done == job.n_maps:
            return 0.0
        total = sum(job.map_work)
        done = sum(w for w, st in zip(job.map_work, job.map_state, strict=False) if st == 2)
        return job.map_alone_s * max(0.0, 1.0 - done / total) if total > 0 else job.map_alone_s

    def _close_books(self) -> None:
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
        end = self.now
        limit = max(self.scenario.time_limit_s, end)
        for job in self.jobs:
            if job.state in (FINISHED, FUTURE):
                continue
            done_at = limit + self.remaining_alone_s(job)
            job.est_finish_s = done_at
            self.I_active += done_at - end        # the integral ran to the end already
            due_at = done_at
            if self.map_scope:
                due_at = limit + self.deadline_remaining_alone_s(job) \
                    if job.maps_done < job.n_maps else math.nan
            job.est_deadline_finish_s = due_at
            d = job.deadline_s
            if math.isfinite(d) and not math.isnan(due_at):
                self.I_late += job.weight * (max(due_at - d, 0.0) - max(end - d, 0.0))
            self.n_unserved += 1

    # ------------------------------------------------------------------ task life cycle
    def launch(self, job: Job, phase: int, n: int) -> None:
        """Start a task of ``job`` in ``phase`` on node ``n``: resume its suspended one there,
        else its best-placed pending map (node-local, rack-local, any) or its next reduce."""
        now = self.now
        t = job.suspended_on(n, phase) if job.susp else None
        if t is not None:
            self._resume(t)
            return
        p = job.profile
        if phase == MAP:
            i, loc = job.take_map(n, self.rack[n])
            work = job.map_work[i]
            mult = job.map_mult[i]
            d = p.map_demand
            extra = 0.0
            net = d[3] * mult
            io = d[1] * mult
            src = -1
            if loc != NODE_LOCAL:
                extra = self.scenario.cluster.block_mb / self.net_mb_s[n]
                if loc == OFF_RACK:
                    extra *= self.scenario.cluster.off_rack_factor
                net += extra / (work + extra)
                src = self._pick_source(job.replicas[i].tolist(), self.rack[n], loc)
            job.locality_counts[loc] += 1
            job.maps_running += 1
            t = Task(self.next_tid, job, MAP, i, n, work + extra,
                     (d[0] * mult, io * (1.0 - READ_FRACTION) if src >= 0 else io,
                      d[2] * mult, net), now, p.task_mem_gb)
            t.locality = loc
            if src >= 0:
                t.src = src
                t.read_io = io * READ_FRACTION
        else:
            i = job.red_stack.pop()
            job.pending_reduces -= 1
            mult = job.reduce_mult[i]
            d = p.reduce_demand
            shuffle = p.shuffle_mb_per_map * job.n_maps / max(job.n_reduces, 1) / self.net_mb_s[n]
            red = job.reduce_work[i]
            job.reduces_running += 1
            t = Task(self.next_tid, job, REDUCE, i, n, shuffle + red,
                     (d[0] * mult, d[1] * mult, d[2] * mult, d[3] * mult), now, p.task_mem_gb)
            t.shuffle_s = shuffle
            if job.maps_done < job.n_maps:
                t.floor = red + shuffle * (1.0 - job.maps_done / job.n_maps)
            job.running_reduces.append(t)
        self.next_tid += 1
        if math.isnan(job.first_start_s):
            job.first_start_s = now
        # Page out suspended tasks if this launch over-commits memory (Pastorelli III).
        self.mem_used_gb[n] += t.mem_gb
        self._page_out(n, t)
        self._place(t, n)
        self._refresh_runnable(job)

    def _place(self, t: Task, n: int) -> None:
        """Occupy capacity on ``n`` for a running task and recompute the node's rates."""
        t.state = RUNNING
        t.t_last = self.now
        t.rate = 0.0                          # forces _rerate to schedule its end event
        ti = t.job.type_idx
        t.type_idx = ti
        t.base = self.speed[n] * self.accel_mult[n][ti]
        if self.slots_mode:
            t.mem0 = self.static_share[n]     # Hadoop 1: a fixed heap per slot
        else:
            p = t.job.profile                 # containers: the reservation
            t.mem0 = (p.map_demand if t.phase == MAP else p.reduce_demand)[2]
        self.running[t.tid] = t
        self.tasks_on[n].append(t)
        self._occupy(n, t.phase, t.job.type_idx, +1)
        if t.src >= 0:
            if self.up[t.src]:
                self.readers[t.src].append(t)
                self._reads_changed(t.src, t.read_io)
            else:
                t.src = -1                   # HDFS would switch replica; the read stays local
        if self.scenario.cluster.orchestrator != "none":
            self.new_tasks.append(t)
        if self.scenario.cluster.memory_overcommit == "fail":
            self._enforce_memory(n)
        self._rerate(n)

    def _occupy(self, n: int, phase: int, type_idx: int, sign: int) -> None:
        if self.slots_mode:
            if phase == MAP:
                self.used_map[n] += sign
            else:
                self.used_red[n] += sign
            self.busy += sign
        else:
            p = PROFILES[TYPE_NAMES[type_idx]]
            d = p.map_demand if phase == MAP else p.reduce_demand
            r = self.res[n]
            r[0] += sign * d[0]
            r[1] += sign * d[1]
            r[2] += sign * d[2]
            self.busy += sign * d[0]
        self._touch(n)

    def _page_out(self, n: int, t: Task) -> None:
        excess = self.mem_used_gb[n] + self.susp_resident_gb[n] - self.mem_gb[n]
        if excess <= _EPS or not self.susp_on[n]:
            return
        swapped = 0.0
        for s in self.susp_on[n]:                       # oldest suspended first
            resident = s.mem_gb - s.swapped_gb
            take = min(resident, excess - swapped)
            if take > 0:
                s.swapped_gb += take
                swapped += take
            if swapped >= excess - _EPS:
                break
        self.susp_resident_gb[n] -= swapped
        cost = swapped * 1024.0 / self.disk_mb_s[n]
        t.work += cost
        t.remaining += cost
        self.swap_s += cost

    def _resume(self, t: Task) -> None:
        n = t.node
        job = t.job
        self.susp_on[n].remove(t)
        job.susp.remove(t)
        self.susp_resident_gb[n] -= t.mem_gb - t.swapped_gb
        cost = t.swapped_gb * 1024.0 / self.disk_mb_s[n]    # page-in (Pastorelli Fig. 4)
        t.swapped_gb = 0.0
        t.work += cost
        t.remaining += cost
        self.swap_s += cost
        self.mem_used_gb[n] += t.mem_gb
        if t.phase == MAP:
            job.maps_running += 1
        else:
            job.reduces_running += 1
            job.running_reduces.append(t)
            if job.maps_done >= job.n_maps:
                t.floor = 0.0
        self._page_out(n, t)
        self._place(t, n)
        self._refresh_runnable(job)

    def _detach(self, t: Task) -> None:
        """Take a running task off its node (progress synced; slot accounting is the caller's)."""
        n = t.node
        self._sync(t)
        del self.running[t.tid]
        self.tasks_on[n].remove(t)
        self.mem_used_gb[n] -= t.mem_gb
        t.version += 1
        self._drop_reader(t)
        job = t.job
        if t.phase == MAP:
            job.maps_running -= 1
        else:
            job.reduces_running -= 1
            job.running_reduces.remove(t)

    def _pick_source(self, replicas: list[int], rack: int, loc: int) -> int:
        """The replica a remote map reads from: least-loaded, in-rack when rack-local."""
        best, best_key = -1, None
        for r in replicas:
            if not self.up[r] or (loc == RACK_LOCAL and self.rack[r] != rack):
                continue
            key = (len(self.readers[r]), r)
            if best_key is None or key < best_key:
                best, best_key = r, key
        return best

    def _drop_reader(self, t: Task) -> None:
        src = t.src
        if src >= 0 and t in self.readers[src]:
            self.readers[src].remove(t)
            self._reads_changed(src, -t.read_io)

    def _reads_changed(self, n: int, delta: float) -> None:
        """Re-rate data node ``n`` only if its disk was or becomes over-committed."""
        self.read_sum[n] += delta
        if not self.readers[n]:
            self.read_sum[n] = 0.0            # no drift from repeated float updates
        total = self.own_io[n] + self.read_sum[n]
        if total > 1.0 or total - delta > 1.0:
            self._rerate(n)

    def _requeue(self, t: Task) -> None:
        job = t.job
        if t.phase == MAP:
            job.requeue_map(t.idx, self.rack)
        else:
            job.red_stack.append(t.idx)
            job.pending_reduces += 1
        t.state = PENDING
        self._refresh_runnable(job)

    def kill(self, t: Task, cleanup: bool = True, outcome: str = "killed") -> None:
        """Kill a running task: its work is lost and it returns to pending (SPEC 2.6)."""
        n = t.node
        self._detach(t)
        done = t.work - t.remaining
        self.wasted_s += done
        self.n_killed += outcome == "killed"
        self.task_log.append((t.start_s, self.now, t.job.jid, n, t.phase, outcome))
        cleanup_s = self.scenario.decisions.preemption.kill_cleanup_s if cleanup else 0.0
        if cleanup_s > 0:
            self.cleanups[n].append((t.phase, t.job.type_idx))
            self.queue.push(self.now + cleanup_s, _CLEANUP_END, n)
        else:
            self._occupy(n, t.phase, t.job.type_idx, -1)
        self._requeue(t)
        self._rerate(n)

    def suspend(self, t: Task) -> None:
        """Suspend a running task: it keeps its memory on its node (Pastorelli III)."""
        n = t.node
        self._detach(t)
        self.task_log.append((t.start_s, self.now, t.job.jid, n, t.phase, "suspended"))
        self._occupy(n, t.phase, t.job.type_idx, -1)
        t.state = SUSPENDED
        self.susp_on[n].append(t)
        self.susp_resident_gb[n] += t.mem_gb
        t.job.susp.append(t)
        t.start_s = self.now                  # the next log segment starts at resume
        self.n_suspended += 1
        self._refresh_runnable(t.job)
        self._rerate(n)

    def _on_cleanup_end(self, n: int) -> None:
        if not self.cleanups[n]:
            return                            # the node left meanwhile; nothing to free
        phase, type_idx = self.cleanups[n].pop(0)
        self._occupy(n, phase, type_idx, -1)

    def _sync(self, t: Task) -> None:
        """Bring a task's remaining work up to ``now``."""
        dt = self.now - t.t_last
        if dt > 0:
            rem = t.remaining - t.rate * dt
            t.remaining = rem if rem > t.floor else t.floor
            t.t_last = self.now

    def _schedule_end(self, t: Task) -> None:
        t.version += 1
        left = t.remaining - t.floor
        if t.rate > 0 and left > _EPS:
            self.queue.push(self.now + left / t.rate, _TASK_END, t.tid, t.version)
        elif t.rate > 0 and t.floor == 0:
            self.queue.push(self.now, _TASK_END, t.tid, t.version)

    def _on_task_end(self, tid: int, version: int) -> None:
        t = self.running.get(tid)
        if t is None or t.version != version:
            return                            # stale event (rate changed or task gone)
        self._sync(t)
        if t.floor > 0:
            return                            # a reduce waiting for more map output
        self._complete(t)

    def _complete(self, t: Task) -> None:
        n = t.node
        job = t.job
        self._detach(t)
        t.state = DONE
        t.remaining = 0.0
        self.task_log.append((t.start_s, self.now, job.jid, n, t.phase, "done"))
        job.len_sum[t.phase] += self.now - t.first_start_s
        job.len_n[t.phase] += 1
        self._occupy(n, t.phase, job.type_idx, -1)
        if t.phase == MAP:
            job.maps_done += 1
            job.map_state[t.idx] = 2
            job.work_done += job.map_work[t.idx]
            if job.maps_done == job.n_maps:
                self._end_map_phase(job)
            if not job.reduce_ready and job.n_reduces and (
                    job.maps_done >= self.scenario.decisions.slow_start * job.n_maps):
                job.reduce_ready = True
            if job.running_reduces:
                frac = 1.0 - job.maps_done / job.n_maps
                for r in job.running_reduces:
                    self._sync(r)
                    r.floor = job.reduce_work[r.idx] + r.shuffle_s * frac if frac > 0 else 0.0
                    self._schedule_end(r)
        else:
            job.reduces_done += 1
            job.work_done += job.reduce_work[t.idx]
        if job.maps_done == job.n_maps and job.reduces_done == job.n_reduces:
            self._finish_job(job)
        else:
            self._refresh_runnable(job)
        self._rerate(n)

    def _enforce_memory(self, n: int) -> None:
        """``memory_overcommit: fail``: kill the newest tasks until memory demand fits."""
        tasks = self.tasks_on[n]
        while len(tasks) > 1 and sum(t.demand[2] for t in tasks) > 1.0 + _EPS:
            victim = max(tasks, key=lambda t: (t.start_s, t.tid))
            self.kill(victim, cleanup=False, outcome="failed")

    # ------------------------------------------------------------------ the rate model
    def _rerate(self, n: int) -> None:
        """Recompute the progress rate of every task on node ``n`` (see module docstring).

        Also recomputes ``n``'s disk factor as a data node; when it changes, the nodes of the
        remote maps reading from ``n`` are re-rated too (demands are fixed, so this stops there).
        """
        tasks = self.tasks_on[n]
        self.dirty.add(n)
        read_io = 0.0
        for t in self.readers[n]:
            read_io += t.read_io
        self.read_sum[n] = read_io
        if not tasks:
            self.own_io[n] = 0.0
            self._set_io_factor(n, read_io)
            self._set_hcpu(n, 0.0)
            return
        A = self.cap[n]
        sum_cpu = sum_io = sum_mem = sum_net = sum_est = 0.0
        n_static = 0
        n_cpu_est = 0
        for t in tasks:
            d = t.demand
            sum_cpu += d[0]
            sum_io += d[1]
            sum_mem += d[2]
            sum_net += d[3]
            if t.est is None:
                n_static += 1
            else:
                sum_est += t.est
            if t.cpu_est is not None:
                n_cpu_est += 1
        # CPU, disk and network: work-conserving processor sharing (the OS scheduler).
        self.own_io[n] = sum_io
        sum_io += read_io
        f = 1.0
        if sum_io > 1.0:
            f = 1.0 / sum_io
        if sum_net > 1.0 and 1.0 / sum_net < f:
            f = 1.0 / sum_net
        cpu_g = None
        if sum_cpu > A:
            if n_cpu_est:                         # MROrchestrator divides a contended CPU
                cpu_g = cpu_factors(tasks, A, self._usable(n, f))
            elif A / sum_cpu < f:
                f = A / sum_cpu
        # Memory: per-slot static share, container reservation or orchestrator estimate
        # (t.mem0 holds the first two, fixed at launch).
        if sum_est > 0:
            pool = max(0.0, 1.0 - n_static * self.static_share[n]) if self.slots_mode else 1.0
            est_scale = pool / sum_est
        else:
            est_scale = 0.0
        spill = self.spill
        swap_all = sum_mem > 1.0 and self.swap_mode
        io_f = self.io_f
        intf = self.int_f[n]
        now = self.now
        for k, t in enumerate(tasks):
            d_mem = t.demand[2]
            m = t.mem0 if t.est is None else t.est * est_scale
            if swap_all and m * sum_mem > d_mem:
                m = d_mem / sum_mem               # node-level overcommit: everyone thrashes
            ft = f
            if cpu_g is not None and cpu_g[k] < ft:
                ft = cpu_g[k]                     # its orchestrated CPU share
            src = t.src
            if src >= 0 and io_f[src] < ft:
                ft = io_f[src]                    # its data node is overloaded
            rate = t.base * ft * intf[t.type_idx]
            if m < d_mem:
                rate /= 1.0 + spill * (1.0 - m / d_mem)
            if rate != t.rate:
                dt = now - t.t_last
                if dt > 0:
                    rem = t.remaining - t.rate * dt
                    t.remaining = rem if rem > t.floor else t.floor
                t.t_last = now
                t.rate = rate
                self._schedule_end(t)
        self._set_hcpu(n, sum_cpu if sum_cpu < A else A)
        self._set_io_factor(n, sum_io)

    def _cpu_contended(self, n: int) -> bool:
        """Whether node ``n``'s running tasks demand more CPU than it has."""
        return sum(t.demand[0] for t in self.tasks_on[n]) > self.cap[n]

    def _usable(self, n: int, f: float | None = None) -> list[float]:
        """Per task on node ``n``: the fraction of its CPU demand it can use, its progress limit
        from the node's disk and network shares (``f`` when the caller has it) and from its
        data node's disk."""
        if f is None:
            tasks = self.tasks_on[n]
            sum_io = self.read_sum[n] + sum(t.demand[1] for t in tasks)
            sum_net = sum(t.demand[3] for t in tasks)
            f = min(1.0, 1.0 / sum_io if sum_io > 1.0 else 1.0,
                    1.0 / sum_net if sum_net > 1.0 else 1.0)
        io_f = self.io_f
        return [min(f, io_f[t.src]) if t.src >= 0 else f for t in self.tasks_on[n]]

    def _set_io_factor(self, n: int, sum_io: float) -> None:
        f = 1.0 if sum_io <= 1.0 else 1.0 / sum_io
        if f != self.io_f[n]:
            self.io_f[n] = f
            for m in sorted({t.node for t in self.readers[n]}):
                if m != n:
                    self._rerate(m)

    def _set_hcpu(self, n: int, h: float) -> None:
        if not self.shared[n]:
            return
        cfg = self.scenario.interference
        old = self.resp_ms[n]
        new = response_time_ms(cfg, h)
        self.hcpu[n] = h
        if new != old:
            self.resp_ms[n] = new
            self.resp_sum += new - old
            self.n_slo_viol += (new > cfg.slo_ms) - (old > cfg.slo_ms)

    # ------------------------------------------------------------------ periodic models
    def _apply_load(self, step: int) -> None:
        cfg = self.scenario.interference
        col = min(step, self.load_u.shape[1] - 1)
        u = self.load_u[:, col].tolist()
        for k, n in enumerate(self.shared_nodes):
            r = residual_capacity(u[k], cfg.min_share)
            if r != self.residual[n]:
                self.residual[n] = r
                self.int_f[n] = self._interference_factors(r)
                self._rerate(n)
        self.resp_samples.extend(self.resp_ms[n] for n in self.shared_nodes)

    def _interference_factors(self, r: float) -> list[float]:
        """1 / NormTCT_j(r) for every job type (MIMP Eq. 1-2)."""
        out = []
        for (a, b, c, d), ded in zip(self.tct, self.tct_dedicated, strict=False):
            out.append(ded / (a * math.exp(b * r) + c * math.exp(d * r)))
        return out

    def _on_load_change(self, step: int) -> None:
        self._apply_load(step)
        self.queue.push((step + 1) * self.scenario.interference.step_s, _LOAD_CHANGE, step + 1)

    def _apply_avail(self, step: int) -> None:
        col = min(step, len(self.avail_f) - 1)
        if self.node_up is None:                       # capacity mode
            f = float(self.avail_f[col])
            for n in range(self.n_nodes):
                if self.cap[n] != f:
                    self.cap[n] = f
                    self._rerate(n)
                    self._touch(n)
            self.capacity = self._capacity()
            return
        ups = self.node_up[:, col].tolist()
        changed = False
        for n in range(self.n_nodes):
            if ups[n] != self.up[n]:
                changed = True
                if ups[n]:
                    self.up[n] = True
                    self._touch(n)
                else:
                    self._node_down(n)
        if changed:
            self.capacity = self._capacity()

    def _node_down(self, n: int) -> None:
        """A node leaves: running and suspended tasks are lost and return to pending (SPEC 2.3)."""
        for t in list(self.tasks_on[n]):
            self.kill(t, cleanup=False, outcome="lost")
            self.n_lost += 1
        for t in list(self.susp_on[n]):
            self.susp_on[n].remove(t)
            t.job.susp.remove(t)
            self.wasted_s += t.work - t.remaining
            self.n_lost += 1
            self._requeue(t)
        for t in list(self.readers[n]):      # HDFS switches them to another replica
            self.readers[n].remove(t)
            t.src = -1
            self._rerate(t.node)
        self.io_f[n] = 1.0
        self.read_sum[n] = 0.0
        self.susp_resident_gb[n] = 0.0
        for phase, type_idx in self.cleanups[n]:
            self._occupy(n, phase, type_idx, -1)
        self.cleanups[n].clear()
        self.up[n] = False
        self.idle.discard(n)
        self.dirty.add(n)

    def _on_node_change(self, step: int) -> None:
        self._apply_avail(step)
        self.queue.push((step + 1) * self.scenario.availability.step_s, _NODE_CHANGE, step + 1)

    def _on_orchestrate(self) -> None:
        """MROrchestrator epoch (seed 001 III, Algorithms 1-2): memory estimates for the tasks
        launched since the last epoch, then new CPU estimates for every running task."""
        uniform = self.scenario.cluster.orchestrator == "uniform"
        nodes = set()
        for t in self.new_tasks:
            if t.state != RUNNING:
                continue
            p = t.job.profile
            mean = (p.map_demand if t.phase == MAP else p.reduce_demand)[2]
            t.est = mean if uniform else t.demand[2]
            nodes.add(t.node)
        self.new_tasks = []
        tasks = [t for n in range(self.n_nodes) for t in self.tasks_on[n]]
        new = uniform_cpu_estimates(tasks) if uniform else self._regression_cpu_estimates(tasks)
        for t, e in zip(tasks, new, strict=False):
            if e != t.cpu_est:
                t.cpu_est = e
                if t.node not in nodes and self._cpu_contended(t.node):
                    nodes.add(t.node)             # CPU estimates matter where CPU is contended
        for n in sorted(nodes):
            self._rerate(n)
        self.queue.push(self.now + self.scenario.cluster.orchestrator_epoch_s, _ORCHESTRATE)

    def _regression_cpu_estimates(self, tasks: list[Task]) -> list[float]:
        """REGRESSION CPU estimates (seed 001 III-A Eq. 1-2, III-B1, Algorithm 2 lines 5-7).

        A task's progress rate is its progress score over its elapsed time, P / T (Eq. 1:
        T_hat = (1 - P) / P x T at that pace; the straggler test of [26] that the GRM uses,
        III). The target finish time is the one the task would have at the mean progress rate
        of the running tasks of its job and phase across the cluster (the GRM's global view:
        an adjustment must be "in sync" with the other tasks of the same phase and job, III
        step 3), so alpha = T_hat / T_target = mean rate / own rate (Eq. 2: alpha > 1 is a
        deficit, alpha < 1 an excess), and the estimate is alpha x the current allocation
        (Algorithm 1), at most the task's CPU demand (CPU it cannot use does not speed it up)
        and at least 1% of it. A reduce waiting for map output (its progress bound by the
        shuffle, not by CPU), or a task without progress yet, keeps its allocation and does not
        count in the mean.
        """
        now = self.now
        cur = [t.demand[0] * g for t, g in zip(tasks, self.cpu_shares(tasks), strict=False)]
        pace = [0.0] * len(tasks)
        groups: dict[tuple[int, int], list[int]] = {}
        for i, t in enumerate(tasks):
            elapsed = now - t.first_start_s
            if t.floor > 0 or t.work <= 0 or elapsed <= 0:
                continue
            left = t.remaining - t.rate * (now - t.t_last)
            pace[i] = (1.0 - max(left, 0.0) / t.work) / elapsed
            if pace[i] > 0:
                groups.setdefault((t.job.jid, t.phase), []).append(i)
        out = list(cur)
        for members in groups.values():
            mean = sum(pace[i] for i in members) / len(members)
            for i in members:
                d = tasks[i].demand[0]
                out[i] = min(d, max(MIN_CPU_SHARE * d, cur[i] * mean / pace[i]))
        return out

    def cpu_shares(self, tasks: list[Task]) -> list[float]:
        """Each task's current CPU allocation as a fraction of its CPU demand (1 on a node whose
        CPU is not contended; :func:`cpu_factors` under the orchestrator, else the OS's
        capacity / sum of demands)."""
        by_node: dict[int, list[float]] = {}
        out = []
        for t in tasks:
            n = t.node
            if n not in by_node:
                on = self.tasks_on[n]
                total = sum(x.demand[0] for x in on)
                A = self.cap[n]
                if total <= A:
                    by_node[n] = [1.0] * len(on)
                elif any(x.cpu_est is not None for x in on):
                    by_node[n] = cpu_factors(on, A, self._usable(n))
                else:
                    by_node[n] = [A / total] * len(on)
            out.append(by_node[n][self.tasks_on[n].index(t)])
        return out

    # ------------------------------------------------------------------ read-only summaries
    def availability_now(self) -> float:
        """f(t) at the current time."""
        step = int(self.now // self.scenario.availability.step_s)
        return float(self.avail_f[min(step, len(self.avail_f) - 1)])

    def disk_load(self, n: int) -> float:
        """Disk demand on node ``n`` as a data node: its own tasks plus remote maps reading from it
        (1.0 = its disk bandwidth; above 1 the node is overloaded, MIMP 5.1)."""
        return self.own_io[n] + self.read_sum[n]

    def forecast_window(self, steps: int) -> np.ndarray:
        """Forecast of f(t) for the next ``steps`` availability steps (clamped at the horizon)."""
        step = int(self.now // self.scenario.availability.step_s) + 1
        idx = np.minimum(np.arange(step, step + steps), len(self.forecast_f) - 1)
        return self.forecast_f[idx]

    def counters(self) -> dict[str, Any]:
        """Integrals and counters (for rewards and metrics)."""
        return {
            "time_s": self.now, "I_active": self.I_active, "I_late": self.I_late,
            "I_busy": self.I_busy, "I_cap": self.I_cap, "I_slo": self.I_slo,
            "I_resp": self.I_resp, "wasted_s": self.wasted_s, "swap_s": self.swap_s,
            "n_rejected": self.n_rejected, "n_unserved": self.n_unserved,
            "n_killed": self.n_killed,
            "n_suspended": self.n_suspended, "n_lost": self.n_lost,
            "invalid_actions": self.invalid_actions,
        }
