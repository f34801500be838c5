"""The cluster section of a scenario: node groups, racks, resource mode, HDFS placement,
memory overcommit and MROrchestrator's re-allocation."""

from __future__ import annotations

from typing import Annotated, Literal

from mrsched_gym.config.errors import check, in_range, lower_bound
from mrsched_gym.config.fields import AS_LIST, Float, Int, Text, section
from mrsched_gym.config.limits import MAX_NODES
from mrsched_gym.workloads.profiles import ACCELERATORS


@section
class NodeGroup:
    """A group of identical nodes.

    Attributes:
        count: Number of nodes in the group.
        cpu_cores: CPU cores per node.
        mem_gb: Memory per node (GB).
        disk_mb_s: Disk bandwidth per node (MB/s); page-in/out of suspended tasks runs at this rate.
        net_mb_s: Network bandwidth per node (MB/s); remote block reads and shuffle use it.
        disk_gb: Disk space (GB), used only by the default slot rule.
        cpu_speed: Relative CPU speed (reference node = 1.0).
        accelerator: Accelerator kind on these nodes or ``None``; one of the kinds job profiles
            are sped up by (:data:`~mrsched_gym.workloads.profiles.ACCELERATORS`: ``"cell"``).
        kind: ``"dedicated"`` or ``"shared"`` (co-hosts an interactive service, MIMP 3.1).
        map_slots: Map slots per node (slots mode); ``None`` = MROrchestrator rule
            min{C-1, (M-2)/2, D/50} (MROrchestrator footnote 1).
        reduce_slots: Reduce slots per node (slots mode); ``None`` = half the map slots, at least 1.
            ``0`` = the nodes run maps only (MIMP 3.1: shared nodes run map tasks, reduces run
            on dedicated nodes); slots mode only, and some node of the cluster must keep reduce
            slots when the workload has reduce tasks (:class:`Scenario` refuses it otherwise).
    """

    count: Int = 1
    cpu_cores: Int = 8
    mem_gb: Float = 16.0
    disk_mb_s: Float = 100.0
    net_mb_s: Float = 125.0
    disk_gb: Float = 500.0
    cpu_speed: Float = 1.0
    accelerator: Text | None = None
    kind: Literal["dedicated", "shared"] = "dedicated"
    map_slots: Int | None = None
    reduce_slots: Int | None = None

    def __post_init__(self) -> None:
        lower_bound(self.count, 1, "count")
        check(self.count <= MAX_NODES, "count",
               f"{self.count:,} nodes, more than the limit of {MAX_NODES:,}")
        lower_bound(self.cpu_cores, 1, "cpu_cores")
        lower_bound(self.mem_gb, 0, "mem_gb", lo_open=True)
        for name in ("disk_mb_s", "net_mb_s", "disk_gb"):
            lower_bound(getattr(self, name), 0, name, lo_open=True)
        in_range(self.cpu_speed, 0.001, 1000.0, "cpu_speed")
        check(self.accelerator is None or self.accelerator in ACCELERATORS, "accelerator",
               f"unknown accelerator {self.accelerator!r}; known: {', '.join(ACCELERATORS)} "
               "(the kinds job profiles are sped up by), or null for none")
        check(self.map_slots is None or 1 <= self.map_slots <= 64, "map_slots",
               f"must be null or in [1, 64], got {self.map_slots}")
        check(self.reduce_slots is None or 0 <= self.reduce_slots <= 64, "reduce_slots",
               f"must be null or in [0, 64] (0 = maps only), got {self.reduce_slots}")

    @property
    def effective_map_slots(self) -> int:
        """Map slots per node: configured, or MROrchestrator's Hadoop rule (MROrchestrator,
        footnote 1)."""
        if self.map_slots is not None:
            return self.map_slots
        rule = min(self.cpu_cores - 1, (self.mem_gb - 2) / 2, self.disk_gb / 50)
        return max(1, int(rule))

    @property
    def effective_reduce_slots(self) -> int:
        """Reduce slots per node: configured (0 = maps only), or half the map slots (at least
        one)."""
        if self.reduce_slots is not None:
            return self.reduce_slots
        return max(1, self.effective_map_slots // 2)


@section
class ClusterConfig:
    """The cluster: node groups, racks, resource mode, locality and contention settings.

    Attributes:
        nodes: Node groups; nodes are numbered group by group.
        racks: Number of racks; node i sits in rack i % racks.
        resource_mode: ``"slots"`` (Hadoop 1 map/reduce slots) or ``"containers"`` (YARN / RAS job
            slots: a task fits where its per-phase demand fits in the free capacity).
        replication: HDFS replicas per input block (distinct nodes; at most one per node).
        hdfs_on: Nodes that are HDFS data nodes, i.e. hold block replicas: ``"all"`` or
            ``"dedicated"`` (only nodes of ``kind: dedicated``; MIMP 3.1: "we use dedicated
            servers to run both the shared Hadoop file system and all reduce tasks", so every
            map on a shared node reads its block remotely and loads a dedicated data node, MIMP
            5.1 "Data Node I/O"). Replicas are spread over the data nodes only, at most one per
            node (:attr:`effective_replication`).
        block_mb: HDFS block size (MB): what a map task reads.
        off_rack_factor: Cost multiplier of an off-rack read relative to a rack-local one.
        memory_overcommit: ``"swap"`` (tasks slow down) or ``"fail"`` (newest task is killed
            and returns to pending; its node is offered again at the next event).
        swap_slowdown: Slowdown per unit of relative memory shortfall (spill or swap): a task
            with allocation m below its demand d runs at 1 / (1 + swap_slowdown * (1 - m/d)).
        orchestrator: MROrchestrator setting: ``"none"``, ``"uniform"`` or ``"regression"``
            (MROrchestrator III, Algorithms 1-2): every ``orchestrator_epoch_s`` the node-level
            orchestrator re-divides each node's memory and, on a node whose CPU is contended,
            its CPU among the running tasks, by the UNIFORM (job-phase mean) or REGRESSION
            (per-task need; CPU by progress rate relative to the job-phase) estimates (module
            docstring of :mod:`mrsched_gym.sim.rates`). ``"none"``: static per-slot memory,
            CPU in proportion to demand.
        orchestrator_epoch_s: Re-allocation period of the orchestrator (MROrchestrator: 20 s).
        task_demand_cv: Per-task variation of resource demand around its profile (lognormal cv).
    """

    nodes: Annotated[tuple[NodeGroup, ...], AS_LIST] = (NodeGroup(count=10),)
    racks: Int = 1
    resource_mode: Literal["slots", "containers"] = "slots"
    replication: Int = 3
    hdfs_on: Literal["all", "dedicated"] = "all"
    block_mb: Float = 128.0
    off_rack_factor: Float = 2.0
    memory_overcommit: Literal["swap", "fail"] = "swap"
    swap_slowdown: Float = 3.0
    orchestrator: Literal["none", "uniform", "regression"] = "none"
    orchestrator_epoch_s: Float = 20.0
    task_demand_cv: Float = 0.25

    def __post_init__(self) -> None:
        check(len(self.nodes) >= 1, "nodes", "needs at least one node group")
        check(self.n_nodes <= MAX_NODES, "nodes",
               f"{self.n_nodes:,} nodes in all, more than the limit of {MAX_NODES:,}")
        check(1 <= self.racks <= self.n_nodes, "racks",
               f"must be in [1, n_nodes={self.n_nodes}], got {self.racks}")
        check(1 <= self.replication <= 16, "replication",
               f"must be in [1, 16], got {self.replication}")
        check(self.block_mb >= 1, "block_mb", f"must be >= 1 (HDFS's smallest block), got "
               f"{self.block_mb!r}")
        lower_bound(self.off_rack_factor, 1, "off_rack_factor")
        in_range(self.swap_slowdown, 0.0, 1000.0, "swap_slowdown")
        lower_bound(self.orchestrator_epoch_s, 0, "orchestrator_epoch_s", lo_open=True)
        in_range(self.task_demand_cv, 0.0, 2.0, "task_demand_cv")
        check(self.hdfs_on == "all" or any(g.kind == "dedicated" for g in self.nodes),
               "hdfs_on", "'dedicated' needs at least one node group of kind 'dedicated'")
        for i, g in enumerate(self.nodes):
            check(g.reduce_slots != 0 or self.resource_mode == "slots",
                   f"nodes[{i}].reduce_slots",
                   "0 (maps only) needs resource_mode 'slots' (containers place reduces by "
                   "their demand, not by slots)")

    @property
    def n_nodes(self) -> int:
        """Total number of nodes."""
        return sum(g.count for g in self.nodes)

    @property
    def data_nodes(self) -> tuple[int, ...]:
        """Indices of the nodes holding HDFS block replicas (all, or the dedicated ones with
        ``hdfs_on: dedicated``), numbered group by group as the simulator numbers nodes."""
        out: list[int] = []
        first = 0
        for g in self.nodes:
            if self.hdfs_on == "all" or g.kind == "dedicated":
                out.extend(range(first, first + g.count))
            first += g.count
        return tuple(out)

    @property
    def n_data_nodes(self) -> int:
        """Number of HDFS data nodes (:attr:`data_nodes`)."""
        if self.hdfs_on == "all":
            return self.n_nodes
        return sum(g.count for g in self.nodes if g.kind == "dedicated")

    @property
    def effective_replication(self) -> int:
        """Replicas actually placed: HDFS cannot place more than one per data node."""
        return min(self.replication, self.n_data_nodes)

    @property
    def has_reduce_slots(self) -> bool:
        """Whether some node can run reduce tasks (containers: always)."""
        return self.resource_mode != "slots" or any(
            g.effective_reduce_slots > 0 for g in self.nodes)
