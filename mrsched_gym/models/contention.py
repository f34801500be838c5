"""Contention on a node's shared resources: the formulas the simulator's rate model
(:mod:`mrsched_gym.sim.rates`) and the workload's analytic completion times
(:func:`mrsched_gym.workloads.synthetic.phase_throughput`) share.

Loads are demands summed over a node's running tasks, relative to the resource's capacity (1 =
exactly full).
"""

from __future__ import annotations


def processor_share(io_load: float, net_load: float, cpu_load: float = 0.0) -> float:
    """The progress fraction every task gets when resources are shared work-conservingly
    (processor sharing on the bottleneck): min(1, 1 / load) over the loads. The simulator
    divides the CPU itself (its capacity varies and an orchestrator may divide it unevenly) and
    leaves ``cpu_load`` out."""
    share = 1.0
    if io_load > 1.0:
        share = 1.0 / io_load
    if net_load > 1.0 and 1.0 / net_load < share:
        share = 1.0 / net_load
    if cpu_load > 1.0 and 1.0 / cpu_load < share:
        share = 1.0 / cpu_load
    return share


def spill_slowdown(alloc: float, demand: float, swap_slowdown: float) -> float:
    """How many times slower a task runs when its memory allocation ``alloc`` is below its
    ``demand`` (it spills to disk): 1 + swap_slowdown x (1 - alloc / demand), so f_mem = 1 /
    this (thesis Fig. 4.3)."""
    return 1.0 + swap_slowdown * (1.0 - alloc / demand)
