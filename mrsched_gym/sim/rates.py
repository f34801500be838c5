"""The rate model: how fast every running task progresses (fluid, recomputed per node whenever
anything on it changes), and the MROrchestrator's CPU and memory estimates that feed it.

rate = cpu_speed x accelerator speed-up x f_share x f_mem x 1/NormTCT_j(r)

* f_share: CPU, disk I/O and network are shared work-conservingly (the OS scheduler): with
  demands D_r summed over the node's running tasks and capacity A_r (CPU: f(t) in capacity mode),
  f_share = min(1, A_cpu/D_cpu, 1/D_io, 1/D_net) (processor sharing on the bottleneck resource,
  :func:`~mrsched_gym.models.contention.processor_share`).
  MROrchestrator ``uniform``/``regression`` also divides a contended node's CPU (D_cpu > A_cpu):
  task i gets c_i = min(d_i x its disk/network/data-node limit, lambda x e_i), the capacity
  water-filled in proportion to the orchestrator's estimates e_i
  (:func:`~mrsched_gym.sim.orchestrator.cpu_factors`), and its CPU factor is c_i / d_i in
  place of A_cpu/D_cpu. UNIFORM: e_i = the job-phase's mean CPU demand (Algorithm 2 line 4).
  REGRESSION: e_i = alpha x the current allocation with alpha = the mean progress rate of the
  task's job-phase over its own (Eq. 1-2: tasks behind their peers get more, those ahead less),
  at most d_i (:func:`~mrsched_gym.sim.orchestrator.regression_cpu_estimates`).
  Estimates are set at each epoch for every running task; a task launched since the last epoch
  keeps the OS share until the next (like the memory estimate).
* f_mem: each task gets a memory allocation m. Slots mode without an orchestrator: a static
  1/(map+reduce slots) share (Hadoop 1 slot-level sharing: a fixed child heap per slot,
  MROrchestrator II); containers: the container's reservation (profile demand); MROrchestrator
  ``uniform``/``regression``: the node's memory divided in proportion to the estimate (the
  job-phase mean demand / the task's own demand, i.e. the converged Algorithm 1-2 estimate),
  applied at the next epoch. A task whose demand exceeds m spills:
  f_mem = 1 / (1 + swap_slowdown * (1 - m / demand))
  (:func:`~mrsched_gym.models.contention.spill_slowdown`). When the node's total memory demand
  exceeds its memory, ``swap`` caps every allocation at demand / total (all tasks thrash) and
  ``fail`` kills the newest tasks until it fits. This gives the thesis Fig. 4.3 trade-off: more
  slots use CPU and disk better but shrink each slot's memory.
* NormTCT_j(r): interference on shared nodes (MIMP Eq. 2, :mod:`mrsched_gym.models.interference`).
* Remote map reads add block_mb / net_mb_s (x off_rack_factor off-rack) of work and raise the
  task's network demand, so concurrent remote reads contend.
* Data-node I/O (MIMP 5.1, "Data Node I/O"): half of a map's disk demand is reading its input
  block (``READ_FRACTION``), half writing its output locally. A remote map reads from the least
  loaded replica (in its rack when rack-local), so its read demand loads that *data node's* disk;
  when a data node's disk demand exceeds its capacity every task reading from it slows down too
  (f_share also takes min(1, 1/D_io) of the data node). MIMP's Eq. 5 predictor of this load
  belongs to the MP baseline; the simulator models the overload itself.
* A reduce task's work is its shuffle (its share of map output / net_mb_s) plus its reduce work;
  it stalls at its un-shuffled share until more maps finish.

A rate change re-schedules the task's end (:func:`schedule_end`): its time and sequence
number are kept on the task, and only each node's earliest end is queued
(:func:`queue_node_end`, after the node's re-rating). :func:`sync` brings a task's remaining
work up to now before its rate or state changes.

Gaps we filled (documented choices): the MROrchestrator's estimators are the converged forms of
Algorithm 2 where the fluid model makes the regression trivial: a task's memory need is its own
demand (REGRESSION) or its job-phase's mean (UNIFORM); its CPU use per unit of progress is
constant, so REGRESSION's "allocation required to meet the target finish time" is taken with the
target at its job-phase's mean progress rate (the GRM's "in sync" check, III step 3). Targets
set at the job-phase's mean *finish time* instead starve tasks that are nearly done while a new
wave of the same phase starts (JCT +11% on the mrorchestrator reproduction), so we balance rates;
disk and network are not orchestrated (the paper controls CPU and memory, III).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Final

from mrsched_gym.models.interference import response_time_ms
from mrsched_gym.sim.events import EventKind, push_event
from mrsched_gym.sim.orchestrator import MIN_CPU_SHARE as MIN_CPU_SHARE
from mrsched_gym.sim.orchestrator import cpu_contended, regression_cpu_estimates, usable_fractions
from mrsched_gym.sim.orchestrator import cpu_factors as cpu_factors
from mrsched_gym.sim.orchestrator import cpu_shares as cpu_shares
from mrsched_gym.sim.orchestrator import uniform_cpu_estimates as uniform_cpu_estimates
from mrsched_gym.sim.state import EPS, MAP, RUNNING, Task

# MIN_CPU_SHARE, cpu_factors, cpu_shares and uniform_cpu_estimates are re-exported (``as``):
# the simulator imports them from here, where they were before the orchestrator module.

if TYPE_CHECKING:
    from mrsched_gym.sim.engine import Simulator

_TASK_END: Final = int(EventKind.TASK_END)
_ORCHESTRATE: Final = int(EventKind.ORCHESTRATE)


def rerate(sim: Simulator, n: int) -> None:
    """Recompute the progress rate of every task on node ``n`` (see module docstring).

    Also recomputes ``n``'s disk factor as a data node; when it changes, the nodes of the
    remote maps reading from ``n`` are re-rated too (demands are fixed, so this stops there).
    This runs several times per decision: :func:`processor_share`,
    :func:`~mrsched_gym.models.contention.spill_slowdown` and :func:`sync` are inlined (the
    same float operations in the same order), a node without orchestrator estimates takes a
    shorter loop, and the web response time and CPU use are updated only when they changed.
    """
    tasks = sim.tasks_on[n]
    read_io = 0.0
    for t in sim.readers[n]:
        read_io += t.read_io
    sim.read_sum[n] = read_io
    if not tasks:
        sim.own_io[n] = 0.0
        if sim.io_f[n] != (1.0 if read_io <= 1.0 else 1.0 / read_io):
            _set_io_factor(sim, n, read_io)
        if sim.shared[n] and sim.hcpu[n] != 0.0:
            _set_hcpu(sim, n, 0.0)
        if sim.cpu_used_on[n] != 0.0:
            _set_cpu_used(sim, n, 0.0)
        return
    A = sim.cap[n]
    sum_cpu = sum_io = sum_mem = sum_net = 0.0
    for t in tasks:
        d = t.demand
        sum_cpu += d[0]
        sum_io += d[1]
        sum_mem += d[2]
        sum_net += d[3]
    # CPU, disk and network: work-conserving processor sharing (the OS scheduler).
    sim.own_io[n] = sum_io
    sum_io += read_io
    f = 1.0                                   # processor_share(sum_io, sum_net)
    if sum_io > 1.0:
        f = 1.0 / sum_io
    if sum_net > 1.0 and 1.0 / sum_net < f:
        f = 1.0 / sum_net
    swap_all = sum_mem > 1.0 and sim.swap_mode
    if sim.orchestrated:
        cpu_used = _rerate_orchestrated(sim, n, f, sum_cpu, sum_mem, swap_all)
    else:
        if sum_cpu > A and A / sum_cpu < f:
            f = A / sum_cpu
        # Memory: the per-slot static share or the container's reservation (t.mem0).
        spill = sim.spill
        io_f = sim.io_f
        intf = sim.int_f[n]
        now = sim.now
        cpu_used = 0.0
        for t in tasks:
            d = t.demand
            ft = f
            src = t.src
            if src >= 0 and io_f[src] < ft:
                ft = io_f[src]                # its data node is overloaded
            cpu_used += d[0] * ft
            rate = t.base * ft * intf[t.type_idx]
            m = t.mem0
            d_mem = d[2]
            if swap_all and m * sum_mem > d_mem:
                m = d_mem / sum_mem           # node-level overcommit: everyone thrashes
            if m < d_mem:
                rate /= 1.0 + spill * (1.0 - m / d_mem)    # spill_slowdown(m, d_mem, spill)
            if rate != t.rate:
                _set_rate(sim, t, rate, now)
    if sim.shared[n]:
        h = sum_cpu if sum_cpu < A else A
        if h != sim.hcpu[n]:
            _set_hcpu(sim, n, h)
    if cpu_used != sim.cpu_used_on[n]:
        _set_cpu_used(sim, n, cpu_used)
    if (1.0 if sum_io <= 1.0 else 1.0 / sum_io) != sim.io_f[n]:
        _set_io_factor(sim, n, sum_io)
    queue_node_end(sim, n)


def _rerate_orchestrated(sim: Simulator, n: int, f: float, sum_cpu: float, sum_mem: float,
                         swap_all: bool) -> float:
    """:func:`rerate`'s loop over node ``n``'s tasks under the MROrchestrator (its memory and
    CPU estimates), from the node's disk and network factor ``f`` and sums. Returns the CPU the
    tasks use."""
    tasks = sim.tasks_on[n]
    A = sim.cap[n]
    sum_est = 0.0
    n_static = 0
    n_cpu_est = 0
    for t in tasks:
        est = t.est
        if est is None:
            n_static += 1
        else:
            sum_est += est
        if t.cpu_est is not None:
            n_cpu_est += 1
    cpu_g = None
    if sum_cpu > A:
        if n_cpu_est:                         # MROrchestrator divides a contended CPU
            cpu_g = cpu_factors(tasks, A, usable_fractions(sim, n, f))
        elif A / sum_cpu < f:
            f = A / sum_cpu
    # Memory: per-slot static share, container reservation or orchestrator estimate
    # (t.mem0 holds the first two, fixed at launch).
    if sum_est > 0:
        pool = max(0.0, 1.0 - n_static * sim.static_share[n]) if sim.slots_mode else 1.0
        est_scale = pool / sum_est
    else:
        est_scale = 0.0
    spill = sim.spill
    io_f = sim.io_f
    intf = sim.int_f[n]
    now = sim.now
    cpu_used = 0.0
    for k, t in enumerate(tasks):
        d = t.demand
        d_mem = d[2]
        est = t.est
        m = t.mem0 if est is None else est * est_scale
        if swap_all and m * sum_mem > d_mem:
            m = d_mem / sum_mem               # node-level overcommit: everyone thrashes
        ft = f
        if cpu_g is not None and cpu_g[k] < ft:
            ft = cpu_g[k]                     # its orchestrated CPU share
        src = t.src
        if src >= 0 and io_f[src] < ft:
            ft = io_f[src]                    # its data node is overloaded
        cpu_used += d[0] * ft
        rate = t.base * ft * intf[t.type_idx]
        if m < d_mem:
            rate /= 1.0 + spill * (1.0 - m / d_mem)    # spill_slowdown(m, d_mem, spill)
        if rate != t.rate:
            _set_rate(sim, t, rate, now)
    return cpu_used


def _set_rate(sim: Simulator, t: Task, rate: float, now: float) -> None:
    """Task ``t``'s rate changes to ``rate`` at ``now``: its progress is synced (:func:`sync`)
    and its end re-scheduled (:func:`schedule_end`, inlined; the caller, :func:`rerate`, queues
    the node's earliest end once its loop is done)."""
    dt = now - t.t_last
    if dt > 0:
        rem = t.remaining - t.rate * dt
        t.remaining = rem if rem > t.floor else t.floor
    t.t_last = now
    t.rate = rate
    t.version += 1
    t.end_s = math.inf
    if rate > 0:
        left = t.remaining - t.floor
        if left > EPS:
            queue = sim.queue
            queue.seq += 1
            t.end_s = now + left / rate
            t.end_seq = queue.seq
        elif t.floor == 0:
            queue = sim.queue
            queue.seq += 1
            t.end_s = now
            t.end_seq = queue.seq


def _set_cpu_used(sim: Simulator, n: int, used: float) -> None:
    """The CPU node ``n``'s running tasks use: each task's CPU demand times the share of it
    its progress factor lets it use (what ``cpu_utilisation`` integrates; MROrchestrator Fig. 7)."""
    sim.cpu_used += used - sim.cpu_used_on[n]
    sim.cpu_used_on[n] = used


def _set_io_factor(sim: Simulator, n: int, sum_io: float) -> None:
    """Node ``n``'s disk share as a data node; when it changes, its remote readers' nodes are
    re-rated."""
    f = 1.0 if sum_io <= 1.0 else 1.0 / sum_io
    if f != sim.io_f[n]:
        sim.io_f[n] = f
        readers = sim.readers[n]
        if len(readers) == 1:                 # the common case, without a set
            m = readers[0].node
            if m != n:
                rerate(sim, m)
            return
        for m in sorted({t.node for t in readers}):
            if m != n:
                rerate(sim, m)


def _set_hcpu(sim: Simulator, n: int, h: float) -> None:
    """The MapReduce CPU use ``h`` of shared node ``n``, and the web response time it causes
    (the caller checks that ``n`` is shared)."""
    cfg = sim.scenario.interference
    old = sim.resp_ms[n]
    new = response_time_ms(cfg, h)
    sim.hcpu[n] = h
    if new != old:
        sim.resp_ms[n] = new
        sim.resp_sum += new - old
        sim.n_slo_viol += (new > cfg.slo_ms) - (old > cfg.slo_ms)


def sync(sim: Simulator, t: Task) -> None:
    """Bring a task's remaining work up to ``now``."""
    dt = sim.now - t.t_last
    if dt > 0:
        rem = t.remaining - t.rate * dt
        t.remaining = rem if rem > t.floor else t.floor
        t.t_last = sim.now


def schedule_end(sim: Simulator, t: Task) -> None:
    """(Re-)schedule the task's end for its current rate (a queued old one goes stale) and
    queue its node's earliest end (:func:`queue_node_end`)."""
    t.version += 1
    t.end_s = math.inf
    rate = t.rate
    if rate > 0:
        left = t.remaining - t.floor
        if left > EPS:
            queue = sim.queue
            queue.seq += 1
            t.end_s = sim.now + left / rate
            t.end_seq = queue.seq
        elif t.floor == 0:
            queue = sim.queue
            queue.seq += 1
            t.end_s = sim.now
            t.end_seq = queue.seq
    queue_node_end(sim, t.node)


def queue_node_end(sim: Simulator, n: int) -> None:
    """Queue the end event of node ``n``'s earliest-ending task (by time, then sequence
    number) unless it is queued already. Each task's end has its time and sequence number as
    if every end were queued (``Task.end_s``, ``Task.end_seq``), but only each node's earliest
    is: the queue's earliest live event is then the one it would be with all of them queued,
    so events are handled in the same order, ties included, with fewer entries pushed and
    dropped stale. Called after anything that changes a task end on ``n``: re-rating, a
    re-scheduled end, a task's end or stall handled."""
    best: Task | None = None
    best_s = math.inf
    best_seq = 0
    for t in sim.tasks_on[n]:
        e = t.end_s
        if e < best_s or (e == best_s and best is not None and t.end_seq < best_seq):
            best, best_s, best_seq = t, e, t.end_seq
    if best is not None and best.queued != best.version:
        best.queued = best.version
        push_event(sim.queue.heap, (best_s, _TASK_END, best_seq, best.tid, best.version))


def orchestrate(sim: Simulator) -> None:
    """MROrchestrator epoch (MROrchestrator III, Algorithms 1-2): memory estimates for the tasks
    launched since the last epoch, then new CPU estimates for every running task."""
    uniform = sim.scenario.cluster.orchestrator == "uniform"
    nodes = set()
    for t in sim.new_tasks:
        if t.state != RUNNING:
            continue
        p = t.job.profile
        mean = (p.map_demand if t.phase == MAP else p.reduce_demand)[2]
        t.est = mean if uniform else t.demand[2]
        nodes.add(t.node)
    sim.new_tasks = []
    tasks = [t for n in range(sim.n_nodes) for t in sim.tasks_on[n]]
    new = uniform_cpu_estimates(tasks) if uniform else regression_cpu_estimates(sim, tasks)
    for t, e in zip(tasks, new, strict=False):
        if e != t.cpu_est:
            t.cpu_est = e
            if t.node not in nodes and cpu_contended(sim, t.node):
                nodes.add(t.node)             # CPU estimates matter where CPU is contended
    for n in sorted(nodes):
        rerate(sim, n)
    sim.queue.push(sim.now + sim.scenario.cluster.orchestrator_epoch_s, _ORCHESTRATE)


