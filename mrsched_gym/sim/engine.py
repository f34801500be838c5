"""The discrete-event simulator of a Hadoop/MapReduce cluster : the facade.

No Gymnasium here: the simulator imports only the standard library, numpy and the project's
config/model modules. One event loop (:func:`mrsched_gym.sim.loop.run`) is the only place time
advances.

:meth:`Simulator.reset` draws the world and runs to the first decision; :meth:`Simulator.act`
applies the policy's choice and runs to the next. The current decision is
:attr:`Simulator.decision`, a :class:`~mrsched_gym.sim.decision.Decision` (the contract and its
kinds: :mod:`mrsched_gym.sim.decision`); what a policy may read is
:class:`~mrsched_gym.sim.view.ClusterView`.

The simulator in parts (each a module of functions over the simulator's state, which this
class holds):

* :mod:`~mrsched_gym.sim.world`: the cluster's layout and the world drawn at reset (jobs,
  interactive load, availability and its forecast).
* :mod:`~mrsched_gym.sim.decision` and one module per decision kind, registered in
  :data:`DECISION_PARTS`: :mod:`~mrsched_gym.sim.schedule`, :mod:`~mrsched_gym.sim.admission`,
  :mod:`~mrsched_gym.sim.preemption`, :mod:`~mrsched_gym.sim.speculation` (posing a decision
  and applying the choice).
* :mod:`~mrsched_gym.sim.jobs` and :mod:`~mrsched_gym.sim.tasks`: the job and task life cycles.
* :mod:`~mrsched_gym.sim.cluster`: slot / container bookkeeping and data nodes.
* :mod:`~mrsched_gym.sim.rates`: the contention and rate model, and the MROrchestrator's epoch
  (its CPU division and estimates: :mod:`~mrsched_gym.sim.orchestrator`).
* :mod:`~mrsched_gym.sim.timelines`: the drawn load and availability applied as time passes.
* :mod:`~mrsched_gym.sim.accounting`: the integrals behind rewards and metrics, and the charge
  for unserved jobs.
* :mod:`~mrsched_gym.sim.events` (the queue) and :mod:`~mrsched_gym.sim.state` (jobs, tasks).
"""

from __future__ import annotations

import math
from typing import Any, Final

import numpy as np

from mrsched_gym.config import Scenario
from mrsched_gym.models.interference import check_replayed
from mrsched_gym.sim import admission, preemption, schedule, speculation
from mrsched_gym.sim.accounting import (
    counters,
    deadline_remaining_alone_s,
    remaining_alone_s,
)
from mrsched_gym.sim.alone import episode_jobs
from mrsched_gym.sim.cluster import capacity, cpu_capacity
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
from mrsched_gym.sim.loop import MIN_COMPACT, run
from mrsched_gym.sim.native import mypyc_attr
from mrsched_gym.sim.rates import (
    MIN_CPU_SHARE,
    cpu_factors,
    cpu_shares,
    uniform_cpu_estimates,
)
from mrsched_gym.sim.state import Job, Task
from mrsched_gym.sim.tasks import READ_FRACTION
from mrsched_gym.sim.timelines import apply_avail, apply_load
from mrsched_gym.sim.world import TraceCache, draw_world, node_layout
from mrsched_gym.workloads.profiles import PROFILES, TYPE_NAMES
from mrsched_gym.workloads.synthetic import JobDraw
from mrsched_gym.workloads.trace import check_trace_reduces, trace_window

#: The decision kinds, in the order they are posed when several are due: an arrived job's
#: admission first, then a waiting high-priority job's preemption, then free capacity (a backup
#: copy only where no pending task can use it). A new kind is one module with its ``PART`` and
#: one entry here (and its rows in the observation encoding).
DECISION_PARTS: tuple[DecisionPart, ...] = (admission.PART, preemption.PART, speculation.PART,
                                            schedule.PART)
_APPLY: Final = {part.kind: part.apply for part in DECISION_PARTS}
#: Names importable from here as before the engine was split (defined in the parts).
__all__ = ["ADMIT", "DECISION_NAMES", "DECISION_PARTS", "KILL", "MIN_CPU_SHARE", "PREEMPT",
           "PRIMITIVE_NAMES", "READ_FRACTION", "SCHEDULE", "SUSPEND", "Simulator", "cpu_factors",
           "uniform_cpu_estimates"]

_ARRIVAL: Final = int(EventKind.ARRIVAL)
_NODE_CHANGE: Final = int(EventKind.NODE_CHANGE)
_LOAD_CHANGE: Final = int(EventKind.LOAD_CHANGE)
_ORCHESTRATE: Final = int(EventKind.ORCHESTRATE)


@mypyc_attr(allow_interpreted_subclasses=True)
class Simulator:
    """A Hadoop cluster simulation for one scenario; :meth:`reset` draws a new world.

    It holds the simulation's state (per-node lists, jobs, running tasks, the event queue, the
    integrals); the parts listed in the module docstring act on it. What policies may read
    (never mutate) is :class:`~mrsched_gym.sim.view.ClusterView`: the current :attr:`decision`
    and the documented cluster state.

    Args:
        scenario: The scenario; its trace files are read now, so a bad trace fails here.
    """

    def __init__(self, scenario: Scenario) -> None:
        self.scenario = scenario
        self.K = scenario.decisions.max_candidates
        c = scenario.cluster
        nodes = node_layout(c)
        self.n_nodes = len(nodes.speed)
        self.speed = nodes.speed
        self.accel = nodes.accel
        self.shared = nodes.shared
        self.map_slots = nodes.map_slots
        self.red_slots = nodes.red_slots
        self.mem_gb = nodes.mem_gb
        self.disk_mb_s = nodes.disk_mb_s
        self.net_mb_s = nodes.net_mb_s
        self.cores = nodes.cores
        self.rack = nodes.rack
        self.shared_nodes = nodes.shared_nodes
        self.static_share = nodes.static_share
        self.total_slots = nodes.total_slots
        self.accel_mult = nodes.accel_mult     # [n][type]
        self.slots_mode = c.resource_mode == "slots"
        self.spill = c.swap_slowdown
        self.swap_mode = c.memory_overcommit == "swap"
        # Settings read at every event, held as plain attributes (the scenario is frozen; the
        # compiled build reads these directly, the scenario's through attribute look-ups).
        self.orchestrated = c.orchestrator != "none"
        self.fail_on_overcommit = c.memory_overcommit == "fail"
        self.block_mb = c.block_mb
        self.off_rack_factor = c.off_rack_factor
        self.slow_start = scenario.decisions.slow_start
        self.time_limit_s = scenario.time_limit_s
        self.avail_step_s = scenario.availability.step_s
        self.admission_enabled = scenario.decisions.admission
        self.preemption_enabled = scenario.decisions.preemption.enabled
        self.tct = [PROFILES[t].tct for t in TYPE_NAMES]
        self.tct_dedicated = [PROFILES[t].tct_s(1.0) for t in TYPE_NAMES]
        # Read trace files now, so a bad trace fails at construction, not mid-run.
        self.traces = TraceCache()
        horizon = scenario.time_limit_s
        if scenario.interference.load == "trace":
            check_replayed(scenario.interference, self.traces.get(scenario.interference, horizon))
        if scenario.availability.generator in ("trace", "transactional"):
            self.traces.get(scenario.availability, horizon)
        if scenario.workload.kind == "trace":
            trace_window(scenario.workload, rows=self.traces.job_rows(scenario.workload))
            check_trace_reduces(scenario.workload, scenario.cluster)
        #: Whether deadlines cover the map phase only (``workload.deadline_scope: map``).
        self.map_scope = scenario.workload.deadline_scope == "map"
        #: Whether speculation decisions are posed (``decisions.speculation.enabled``).
        self.speculation = scenario.decisions.speculation.enabled
        #: Whether the offer holds only the nodes a schedule decision can use (slots mode,
        #: :func:`~mrsched_gym.sim.cluster.reoffer`): only where no decision frees a slot or
        #: returns a task to pending between two events (no preemption, no speculation, no
        #: ``memory_overcommit: fail``), so the nodes left out would have been dropped unused.
        self.narrow_offer = (self.slots_mode and not self.preemption_enabled
                             and not self.speculation and not self.fail_on_overcommit)
        #: The decision parts this scenario can pose, in ``DECISION_PARTS`` order.
        self.parts = tuple(part for part in DECISION_PARTS if part.enabled(scenario))
        self.done = True
        self.truncated = False

    # ------------------------------------------------------------------ reset
    def reset(self, rng: np.random.Generator, jobs: list[JobDraw] | None = None) -> None:
        """Draw a new world from ``rng`` (:func:`~mrsched_gym.sim.world.draw_world`) with its jobs
        (or ``jobs``: :func:`~mrsched_gym.sim.alone.episode_jobs`); run to the first decision."""
        sc = self.scenario
        n = self.n_nodes
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
        self.departures = [0] * n             # times each node has left (clean-ups' epochs)
        self.hcpu = [0.0] * n
        self.cpu_used_on = [0.0] * n          # CPU the node's running tasks use (node fraction)
        self.resp_ms = [sc.interference.response_alone_ms if s else 0.0 for s in self.shared]
        # --- the world: timelines and jobs
        self.world = world = draw_world(sc, n, len(self.shared_nodes), rng, self.traces)
        self.load_u, self.avail_f, self.node_up = world.load_u, world.avail_f, world.node_up
        self.forecast_f, self.node_forecast = world.forecast_f, world.node_forecast
        draws = jobs if jobs is not None else episode_jobs(sc, world.jobs, Simulator)
        self.jobs: list[Job] = []
        for d in draws:
            self.add_job(d)
        self.n_closed = 0                     # finished + rejected
        self.runnable: list[int] = []
        self.runnable_set: set[int] = set()   # the same ids, for membership tests
        self.n_map_jobs = 0                   # runnable jobs with map work / reduce work
        self.n_red_jobs = 0
        self.running: dict[int, Task] = {}
        self.next_tid = 0
        self.new_tasks: list[Task] = []
        self.admit_queue: list[int] = []
        self.preempt_queue: list[int] = []
        self.offer: list[int] = []
        self.idle: set[int] = set(range(n))
        #: Slots mode: the idle nodes with a free map slot / a free reduce slot, as sets and
        #: in increasing order (kept by :func:`~mrsched_gym.sim.cluster.touch`).
        self.map_order: list[int] = [i for i in range(n) if self.map_slots[i] > 0]
        self.red_order: list[int] = [i for i in range(n) if self.red_slots[i] > 0]
        self.map_idle: set[int] = set(self.map_order)
        self.red_idle: set[int] = set(self.red_order)
        self.task_log: list[tuple[Any, ...]] = []       # (start, end, jid, node, phase, outcome)
        self.resp_samples: list[float] = []   # web response times at each interference step
        self.dirty: set[int] = set(range(n))  # nodes whose observation row changed
        # --- integrals and counters for rewards and metrics
        self.n_active = 0
        self.w_late = 0.0                     # sum of weights of active jobs past deadline
        self.busy = 0.0                       # running tasks (slots) or reserved CPU (containers)
        self.capacity = capacity(self)
        self.cpu_used = 0.0                   # sum of cpu_used_on
        self.cpu_capacity = cpu_capacity(self)
        self.n_slo_viol = 0
        self.resp_sum = sum(self.resp_ms[i] for i in self.shared_nodes)
        self.I_active = 0.0
        self.I_late = 0.0
        self.I_busy = 0.0
        self.I_cap = 0.0
        self.I_cpu_used = 0.0
        self.I_cpu_cap = 0.0
        self.I_slo = 0.0
        self.I_resp = 0.0
        self.wasted_s = 0.0
        self.swap_s = 0.0
        self.n_rejected = 0
        self.n_unserved = 0                   # jobs charged by close_books
        self.n_killed = 0
        self.n_failed = 0                     # tasks killed by memory_overcommit: fail
        self.n_suspended = 0
        self.n_lost = 0
        self.n_copies = 0                     # speculative copies launched
        self.n_copies_won = 0                 # ... that finished before their original
        self.node_done = [0] * n              # tasks finished on each node (LATE's node progress)
        self.invalid_actions = 0
        # --- periodic events
        if self.shared_nodes:
            apply_load(self, 0)
            self.queue.push(sc.interference.step_s, _LOAD_CHANGE, 1)
        if sc.availability.generator != "none":
            apply_avail(self, 0)
            self.queue.push(sc.availability.step_s, _NODE_CHANGE, 1)
        if sc.cluster.orchestrator != "none":
            self.queue.push(sc.cluster.orchestrator_epoch_s, _ORCHESTRATE)
        self.decision = Decision(SCHEDULE, 0.0, -1, None, ())
        #: Queue length that triggers dropping stale events (:func:`~mrsched_gym.sim.loop.run`).
        self.compact_at = MIN_COMPACT
        run(self)

    def add_job(self, draw: JobDraw) -> int:
        """Append the job ``draw`` (a :class:`~mrsched_gym.workloads.synthetic.JobDraw` that
        arrives at or after ``now``) with the next job id, schedule its arrival and count it in
        ``n_jobs``; its id. Reset adds the world's jobs this way; a planner's copy adds jobs it
        samples."""
        if draw.arrival_s < self.now:
            raise ValueError(f"job arrival_s={draw.arrival_s} is before now={self.now}")
        for field in ("map_mean_s", "reduce_mean_s"):     # the observation shows them
            v = getattr(draw, field)
            if not (math.isfinite(v) and v >= 0.0):
                raise ValueError(f"job {field}={v}: the mean its task work was drawn around "
                                 f"must be finite and >= 0 (make_job sets it)")
        job = Job(len(self.jobs), draw, PROFILES[TYPE_NAMES[draw.type_idx]])
        job.alone_s = draw.alone_s
        job.map_alone_s = draw.map_alone_s
        self.jobs.append(job)
        self.queue.push(job.arrival_s, _ARRIVAL, job.jid)
        self.n_jobs = len(self.jobs)
        return job.jid

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
        run(self)
        return valid

    # ------------------------------------------------------------------ read-only summaries
    def availability_now(self) -> float:
        """f(t) at the current time."""
        f = self.avail_f
        step = int(self.now // self.avail_step_s)
        last = len(f) - 1
        return float(f[last if last < step else step])

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
        return counters(self)

    def remaining_alone_s(self, job: Job) -> float:
        """The job's estimated remaining time alone on the cluster
        (:func:`~mrsched_gym.sim.accounting.remaining_alone_s`)."""
        return remaining_alone_s(self, job)

    def deadline_remaining_alone_s(self, job: Job) -> float:
        """The same for the part of the job its deadline covers
        (:func:`~mrsched_gym.sim.accounting.deadline_remaining_alone_s`)."""
        return deadline_remaining_alone_s(self, job)

    def cpu_shares(self, tasks: list[Task]) -> list[float]:
        """Each task's current CPU allocation as a fraction of its CPU demand
        (:func:`~mrsched_gym.sim.rates.cpu_shares`)."""
        return cpu_shares(self, tasks)
