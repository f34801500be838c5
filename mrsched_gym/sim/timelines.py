"""The world's timelines applied to the cluster as time passes: the interactive load on shared
nodes (interference, MIMP Eq. 1-2) and the availability f(t) (capacity, or nodes that leave and
join). Both were drawn at reset (:mod:`mrsched_gym.sim.world`); each advances one step
per ``step_s`` through its own periodic event.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Final

from mrsched_gym.models.interference import residual_capacity
from mrsched_gym.sim.cluster import capacity, cpu_capacity, occupy, touch
from mrsched_gym.sim.events import EventKind
from mrsched_gym.sim.rates import rerate
from mrsched_gym.sim.tasks import kill, requeue

if TYPE_CHECKING:
    from mrsched_gym.sim.engine import Simulator

_LOAD_CHANGE: Final = int(EventKind.LOAD_CHANGE)
_NODE_CHANGE: Final = int(EventKind.NODE_CHANGE)


def apply_load(sim: Simulator, step: int) -> None:
    """Apply the interactive load of interference step ``step``: residual capacity and
    1/NormTCT of every shared node, and a sample of the web response times."""
    cfg = sim.scenario.interference
    col = min(step, sim.load_u.shape[1] - 1)
    u = sim.load_u[:, col].tolist()
    for k, n in enumerate(sim.shared_nodes):
        r = residual_capacity(u[k], cfg.min_share)
        if r != sim.residual[n]:
            sim.residual[n] = r
            sim.dirty.add(n)
            sim.int_f[n] = _interference_factors(sim, r)
            rerate(sim, n)
    sim.resp_samples.extend(sim.resp_ms[n] for n in sim.shared_nodes)


def _interference_factors(sim: Simulator, r: float) -> list[float]:
    """1 / NormTCT_j(r) for every job type (MIMP Eq. 1-2)."""
    out = []
    for (a, b, c, d), ded in zip(sim.tct, sim.tct_dedicated, strict=False):
        out.append(ded / (a * math.exp(b * r) + c * math.exp(d * r)))
    return out


def on_load_change(sim: Simulator, step: int) -> None:
    """The ``LOAD_CHANGE`` event: apply step ``step`` and schedule the next."""
    apply_load(sim, step)
    sim.queue.push((step + 1) * sim.scenario.interference.step_s, _LOAD_CHANGE, step + 1)


def apply_avail(sim: Simulator, step: int) -> None:
    """Apply availability step ``step``: every node's CPU capacity (capacity mode) or which
    nodes are up (nodes mode)."""
    col = min(step, len(sim.avail_f) - 1)
    if sim.node_up is None:                       # capacity mode
        f = float(sim.avail_f[col])
        for n in range(sim.n_nodes):
            if sim.cap[n] != f:
                sim.cap[n] = f
                rerate(sim, n)
                touch(sim, n)
        sim.capacity = capacity(sim)
        sim.cpu_capacity = cpu_capacity(sim)
        return
    ups = sim.node_up[:, col].tolist()
    changed = False
    for n in range(sim.n_nodes):
        if ups[n] != sim.up[n]:
            changed = True
            if ups[n]:
                sim.up[n] = True
                touch(sim, n)
            else:
                _node_down(sim, n)
    if changed:
        sim.capacity = capacity(sim)
        sim.cpu_capacity = cpu_capacity(sim)


def _node_down(sim: Simulator, n: int) -> None:
    """A node leaves: running and suspended tasks are lost and return to pending."""
    for t in list(sim.tasks_on[n]):
        kill(sim, t, cleanup=False, outcome="lost")
        sim.n_lost += 1
    for t in list(sim.susp_on[n]):
        sim.susp_on[n].remove(t)
        t.job.susp.remove(t)
        sim.wasted_s += t.work - t.remaining
        sim.n_lost += 1
        requeue(sim, t)
    for t in list(sim.readers[n]):      # HDFS switches them to another replica
        sim.readers[n].remove(t)
        t.src = -1
        rerate(sim, t.node)
    sim.io_f[n] = 1.0
    sim.read_sum[n] = 0.0
    sim.susp_resident_gb[n] = 0.0
    for phase, type_idx in sim.cleanups[n]:
        occupy(sim, n, phase, type_idx, -1)
    sim.cleanups[n].clear()
    sim.departures[n] += 1              # their end events, still queued, now free nothing
    sim.up[n] = False
    touch(sim, n)                       # no longer idle (and its row changed)


def on_node_change(sim: Simulator, step: int) -> None:
    """The ``NODE_CHANGE`` event: apply step ``step`` and schedule the next."""
    apply_avail(sim, step)
    sim.queue.push((step + 1) * sim.scenario.availability.step_s, _NODE_CHANGE, step + 1)
