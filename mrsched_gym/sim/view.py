"""What a policy may read of the simulator: :class:`ClusterView`, a read-only protocol.

A scheduler's ``decide(view)`` gets the :class:`~mrsched_gym.sim.engine.Simulator` typed as
this view: the current :class:`~mrsched_gym.sim.decision.Decision` plus the cluster state a
scheduler's paper assumes it knows (a heartbeat's slot counts, the jobs' progress, the
interactive load it measures, ...). Everything here is live simulator state: read it, never
mutate it. The simulator's other attributes and methods are its own. The engine checks (under
mypy) that the simulator satisfies this protocol.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from mrsched_gym.config import Scenario
from mrsched_gym.sim.decision import Candidate, Decision, DecisionKind
from mrsched_gym.sim.state import Job, Task

if TYPE_CHECKING:
    from mrsched_gym.sim.engine import Simulator


class ClusterView(Protocol):
    """The read-only view of the simulator that policies decide from.

    Per-node sequences are indexed by node id (``0 .. n_nodes - 1``).
    """

    # ---------------------------------------------------------------- the decision
    @property
    def decision(self) -> Decision:
        """The pending decision."""

    @property
    def K(self) -> int:
        """Candidate slots; action ``K`` is skip."""

    @property
    def kind(self) -> DecisionKind:
        """``decision.kind``."""

    @property
    def node(self) -> int:
        """``decision.node``."""

    @property
    def job(self) -> Job | None:
        """``decision.job``."""

    @property
    def candidates(self) -> Sequence[Candidate]:
        """``decision.candidates``."""

    # ---------------------------------------------------------------- time, scenario, jobs
    @property
    def now(self) -> float:
        """Current simulated time (s)."""

    @property
    def scenario(self) -> Scenario:
        """The scenario."""

    @property
    def jobs(self) -> Sequence[Job]:
        """All jobs of the episode; index = job id = arrival order (future ones included)."""

    @property
    def runnable(self) -> Sequence[int]:
        """Sorted ids of the jobs with launchable or resumable tasks."""

    @property
    def running(self) -> dict[int, Task]:
        """Running tasks by task id."""

    @property
    def n_active(self) -> int:
        """Accepted jobs not yet finished."""

    @property
    def map_scope(self) -> bool:
        """Whether deadlines cover the map phase only (``workload.deadline_scope: map``, MIMP
        3.1): a job meets its deadline when its last map finishes (``job.map_finish_s``)."""

    # ---------------------------------------------------------------- the nodes
    @property
    def n_nodes(self) -> int:
        """Number of nodes."""

    @property
    def slots_mode(self) -> bool:
        """Hadoop 1 slots (``True``) or YARN containers (``False``)."""

    @property
    def total_slots(self) -> float:
        """Map + reduce slots of the whole cluster."""

    @property
    def rack(self) -> Sequence[int]:
        """Rack of each node."""

    @property
    def speed(self) -> Sequence[float]:
        """CPU speed of each node (1 = the reference node)."""

    @property
    def accel(self) -> Sequence[str | None]:
        """Accelerator of each node (``None``: none)."""

    @property
    def accel_mult(self) -> Sequence[Sequence[float]]:
        """Accelerator speed-up per node and job type."""

    @property
    def shared(self) -> Sequence[bool]:
        """Whether each node is shared with interactive services."""

    @property
    def cores(self) -> Sequence[int]:
        """CPU cores of each node."""

    @property
    def mem_gb(self) -> Sequence[float]:
        """Memory of each node (GB)."""

    @property
    def disk_mb_s(self) -> Sequence[float]:
        """Disk bandwidth of each node (MB/s)."""

    @property
    def map_slots(self) -> Sequence[int]:
        """Map slots of each node."""

    @property
    def red_slots(self) -> Sequence[int]:
        """Reduce slots of each node."""

    @property
    def used_map(self) -> Sequence[int]:
        """Busy map slots of each node."""

    @property
    def used_red(self) -> Sequence[int]:
        """Busy reduce slots of each node."""

    @property
    def res(self) -> Sequence[Sequence[float]]:
        """Containers: reserved (CPU, I/O, memory) fractions of each node."""

    @property
    def up(self) -> Sequence[bool]:
        """Whether each node is up."""

    @property
    def cap(self) -> Sequence[float]:
        """CPU capacity multiplier of each node (availability, capacity mode)."""

    @property
    def residual(self) -> Sequence[float]:
        """Residual CPU of each shared node after the interactive load (1 on dedicated ones)."""

    @property
    def int_f(self) -> Sequence[Sequence[float]]:
        """1/NormTCT per node and job type (MIMP Eq. 2; 1 on dedicated nodes)."""

    @property
    def tasks_on(self) -> Sequence[Sequence[Task]]:
        """Running tasks of each node."""

    @property
    def susp_on(self) -> Sequence[Sequence[Task]]:
        """Suspended tasks of each node."""

    @property
    def cleanups(self) -> Sequence[Sequence[tuple[int, int]]]:
        """Slots of each node still held by a killed task's clean-up ``(phase, type)``."""

    @property
    def node_done(self) -> Sequence[int]:
        """Tasks finished on each node so far (LATE's node progress counts them)."""

    @property
    def task_log(self) -> Sequence[tuple[Any, ...]]:
        """The task reports so far, in order: ``(start_s, end_s, job id, node, phase, outcome)``
        per task segment (``outcome``: ``"done"``, ``"suspended"`` or why it was killed), what
        a JobTracker's task completion reports tell it (MIMP 5.1 trains on them)."""

    # ---------------------------------------------------------------- availability
    @property
    def avail_f(self) -> np.ndarray:
        """f(t) per availability step, drawn at reset (schedulers that know the past read the
        steps before now)."""

    @property
    def forecast_f(self) -> np.ndarray:
        """The forecast of f(t) per availability step."""

    # ---------------------------------------------------------------- summaries
    def availability_now(self) -> float:
        """f(t) at the current time."""

    def disk_load(self, n: int) -> float:
        """Disk demand on node ``n`` as a data node (1.0 = its bandwidth; MIMP 5.1)."""

    def forecast_window(self, steps: int) -> np.ndarray:
        """Forecast of f(t) for the next ``steps`` availability steps."""


def as_view(sim: Simulator) -> ClusterView:
    """``sim`` typed as its read-only view (the type checker verifies that it conforms)."""
    return sim
