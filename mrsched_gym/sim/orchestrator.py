"""The MROrchestrator's CPU division and estimates (MROrchestrator III, Algorithms 1-2): functions
over the simulator's state that the rate model (:mod:`mrsched_gym.sim.rates`, which runs the
orchestrator's epochs) and the simulator's read-only summaries use. What they model is in the
rates module's docstring.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Final

from mrsched_gym.models.contention import processor_share
from mrsched_gym.sim.state import MAP, Task

if TYPE_CHECKING:
    from mrsched_gym.sim.engine import Simulator


#: Smallest CPU estimate REGRESSION gives a task, as a fraction of its CPU demand.
MIN_CPU_SHARE: Final = 0.01


def cpu_factors(tasks: list[Task], capacity: float, usable: list[float]) -> list[float]:
    """MROrchestrator's CPU division of one contended node: each task's allocation / its demand.

    Every task asks for its estimate (``cpu_est``; a task not yet estimated, launched since the
    last epoch, for its demand: the OS share) and never gets more than it can use, its demand
    times ``usable`` (its progress limit from the node's disk and network shares and its data
    node). The capacity is water-filled in proportion to the requests: c_i = min(cap_i,
    lambda x e_i) with sum c_i = capacity (Algorithm 1 moves allocations to the estimates; the
    Performance Balancer arbitrates a node's requests, MROrchestrator III step 4). With every
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
    """UNIFORM CPU estimates (MROrchestrator III-B2, Alg. 2 lines 3-4): every task's entitlement
    is the mean CPU use of its job's tasks of the same phase; we take the job-phase's profile
    mean demand (the mean over its tasks of the usage a profiler sees, as for memory)."""
    out = []
    for t in tasks:
        p = t.job.profile
        out.append((p.map_demand if t.phase == MAP else p.reduce_demand)[0])
    return out


def cpu_contended(sim: Simulator, n: int) -> bool:
    """Whether node ``n``'s running tasks demand more CPU than it has."""
    return sum(t.demand[0] for t in sim.tasks_on[n]) > sim.cap[n]


def usable_fractions(sim: Simulator, n: int, f: float | None = None) -> list[float]:
    """Per task on node ``n``: the fraction of its CPU demand it can use, its progress limit
    from the node's disk and network shares (``f`` when the caller has it) and from its
    data node's disk."""
    if f is None:
        tasks = sim.tasks_on[n]
        sum_io = sim.read_sum[n] + sum(t.demand[1] for t in tasks)
        sum_net = sum(t.demand[3] for t in tasks)
        f = processor_share(sum_io, sum_net)
    io_f = sim.io_f
    return [min(f, io_f[t.src]) if t.src >= 0 else f for t in sim.tasks_on[n]]


def regression_cpu_estimates(sim: Simulator, tasks: list[Task]) -> list[float]:
    """REGRESSION CPU estimates (MROrchestrator III-A Eq. 1-2, III-B1, Algorithm 2 lines 5-7).

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
    now = sim.now
    cur = [t.demand[0] * g for t, g in zip(tasks, cpu_shares(sim, tasks), strict=False)]
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


def cpu_shares(sim: Simulator, tasks: list[Task]) -> list[float]:
    """Each task's current CPU allocation as a fraction of its CPU demand (1 on a node whose
    CPU is not contended; :func:`cpu_factors` under the orchestrator, else the OS's
    capacity / sum of demands)."""
    by_node: dict[int, list[float]] = {}
    out = []
    for t in tasks:
        n = t.node
        if n not in by_node:
            on = sim.tasks_on[n]
            total = sum(x.demand[0] for x in on)
            A = sim.cap[n]
            if total <= A:
                by_node[n] = [1.0] * len(on)
            elif any(x.cpu_est is not None for x in on):
                by_node[n] = cpu_factors(on, A, usable_fractions(sim, n))
            else:
                by_node[n] = [A / total] * len(on)
        out.append(by_node[n][sim.tasks_on[n].index(t)])
    return out
