"""MIMP's Maximum Progress (MP) scheduler and admission control (Zhang et al.).

MP (Section 5.2) at every free slot:

1. **Deadline check** (Eq. 3): a job with ``t_remaining`` seconds to its deadline completes
   ``sum_i t_remaining / TCT_j(R_i)`` more tasks on the slots ``i`` it holds; if that is below its
   remaining tasks it is predicted to miss. If any job is, the slot goes to the one with the
   closest deadline.
2. **Maximum progress**: otherwise the job with the smallest NormTCT_j(r) on this node (Eq. 2,
   the residual capacity r of the offered node) gets it, so CPU-hungry jobs (Pi) run on dedicated
   nodes and I/O-bound ones (Sort) on shared ones. Ties (e.g. every job on a dedicated node, where
   NormTCT = 1) go to the earliest deadline, i.e. MP refines EDF.
3. **I/O guard** (Eq. 5): before assigning, the read load the new map adds to its data node,
   IO_j(r) = read90_j / NormTCT_j(r), must not push that node's disk over its bandwidth; else the
   next job is considered. The paper does not say what happens when every job would overload a
   data node; we launch the best one rather than idle (idling wastes the slot's CPU, while an
   overloaded disk in the simulator only slows its readers down).

Admission control (Section 5.3, Eq. 6-7): a new job is accepted iff the jobs with a deadline no
later than its own, itself included, fit before its deadline when each runs alone on the cluster:
sum_i JCT_i <= Deadline_new - now, with JCT(j, R) = n_remaining x mean_i TCT_j(R_i) / n (Eq. 6)
over the cluster's n slots at their current residual capacity.

TCT_j(R_i) everywhere (Eq. 2, 3, 5, 6) is the model trained on the task completions the
scheduler observes (MIMP 5.1; :mod:`mrsched_gym.baselines.mimp_model`): Eq. 1's shape in the
residual capacity, scaled by the node, with its scale fitted per (job type, node class, phase)
as completions arrive, the uncontended reference being only the prior. ``trained=False`` keeps
the reference alone (the untrained model, for comparison).

Gaps we filled (the paper's setup has map-only deadlines on a hybrid cluster):

* TCT_j(R_i) = trained correction x the job's mean task work / (node CPU speed x accelerator
  speed-up) x NormTCT_j(r_i): the TCT model scaled by the node (the paper's nodes are identical
  VMs).
* Reduce tasks count in Eq. 3 and Eq. 6 with the reduce TCT on the job's reduce slots when the
  deadlines cover the whole job; with MIMP's own map-phase deadlines
  (``workload.deadline_scope: map``, the simulator's ``map_scope``) only maps count, as in the
  paper.
* read90_j is the profile's map read demand (half its disk demand, the simulator's
  ``READ_FRACTION``); the data node of a node-local map is the node itself, of a remote map the
  least-loaded node (in the rack for rack-local), which is where HDFS would read from.
* A job's "slot allocation" R is the set of slots its tasks currently run on.
"""

from __future__ import annotations

import math

from mrsched_gym.baselines.base import Scheduler, default_action
from mrsched_gym.baselines.common import edf_key, running_by_job
from mrsched_gym.baselines.mimp_model import PRIOR_WEIGHT, TCTModel, reference_tct
from mrsched_gym.sim.decision import ADMIT
from mrsched_gym.sim.engine import READ_FRACTION
from mrsched_gym.sim.state import ACTIVE, MAP, NODE_LOCAL, RACK_LOCAL, REDUCE


class MPScheduler(Scheduler):
    """MIMP Maximum Progress scheduler; with ``admission=True`` also MIMP admission control.

    Args:
        admission: Decide ADMIT decisions with Eq. 7 (otherwise accept every job).
        io_guard: Apply the Eq. 5 data-node I/O guard.
        trained: Train the TCT model on the completions observed (MIMP 5.1); ``False``: the
            uncontended reference prediction throughout.
        prior_weight: Observations the model's prior counts as (:class:`TCTModel`).
    """

    name = "mp"

    def __init__(self, admission: bool = False, io_guard: bool = True, trained: bool = True,
                 prior_weight: float = PRIOR_WEIGHT) -> None:
        self.admission = admission
        self.io_guard = io_guard
        self.trained = trained
        self.model = TCTModel(prior_weight)
        if admission:
            self.name = "mp+ac"

    def reset(self, sim, seed: int | None = None) -> None:
        """A new episode: the TCT model starts again from its prior."""
        self.model.reset()

    def tct(self, sim, job, phase: int, n: int) -> float:
        """TCT_j of ``job``'s ``phase`` task on node ``n`` now (s): trained, or the reference."""
        if self.trained:
            return self.model.tct(sim, job, phase, n)
        return reference_tct(sim, job, phase, n)

    def norm_tct(self, sim, job, n: int) -> float:
        """NormTCT_j on node ``n`` (Eq. 2)."""
        if self.trained:
            return self.model.norm_tct(sim, job, n)
        return 1.0 / max(sim.int_f[n][job.type_idx], 1e-9)

    # ---------------------------------------------------------------- scheduling
    def on_track(self, sim, job, tasks) -> bool:
        """Eq. 3: can the job finish its remaining tasks on the slots it holds before its
        deadline?"""
        if not math.isfinite(job.deadline_s):
            return True
        left = job.deadline_s - sim.now
        if left <= 0:
            return False
        remaining = {MAP: job.n_maps - job.maps_done,
                     REDUCE: 0 if sim.map_scope else job.n_reduces - job.reduces_done}
        done = {MAP: 0.0, REDUCE: 0.0}
        for t in tasks:
            done[t.phase] += left / max(self.tct(sim, job, t.phase, t.node), 1e-9)
        return done[MAP] >= remaining[MAP] and done[REDUCE] >= remaining[REDUCE]

    def _io_ok(self, sim, job, n: int, loc: int) -> bool:
        """Eq. 5: would this map's reads overload its data node?"""
        read = job.profile.map_demand[1] * READ_FRACTION / self.norm_tct(sim, job, n)
        if loc == NODE_LOCAL:
            src = n
        else:
            nodes = [m for m in range(sim.n_nodes) if sim.up[m] and m != n and
                     (loc != RACK_LOCAL or sim.rack[m] == sim.rack[n])]
            if not nodes:
                return True
            src = min(nodes, key=sim.disk_load)
        return sim.disk_load(src) + read <= 1.0

    def decide(self, sim) -> int:
        """Maximum Progress: among jobs that cannot meet their deadline on the slots they hold
        (:meth:`on_track`), the earliest deadline; otherwise the job type this node slows least
        (largest 1/NormTCT), earliest deadline next, passing over maps that would overload their
        data node (Eq. 5). ADMIT, with admission control: :meth:`admit`."""
        if self.trained:
            self.model.update(sim)
        d = sim.decision
        if d.kind == ADMIT and self.admission:
            return 0 if self.admit(sim, d.job) else sim.K
        a = default_action(sim)
        if a is not None:
            return a
        cands = d.candidates
        running = running_by_job(sim)
        n = d.node
        missing = [i for i, c in enumerate(cands)
                   if not self.on_track(sim, c.job, running.get(c.job.jid, ()))]
        if missing:
            return min(missing, key=lambda i: edf_key(cands[i]))
        order = sorted(range(len(cands)), key=lambda i: (
            self.norm_tct(sim, cands[i].job, n), cands[i].job.deadline_s, cands[i].job.jid,
            cands[i].phase))
        for i in order:
            c = cands[i]
            if c.phase != MAP or not self.io_guard or self._io_ok(sim, c.job, n, c.locality):
                return i
        return order[0]        # every job would overload a data node: the best one anyway

    # ---------------------------------------------------------------- admission control
    def jct_alone(self, sim, job, slots: list[tuple[int, int]]) -> float:
        """Eq. 6: the job's remaining time if it ran alone on the cluster's slots."""
        total = 0.0
        for phase, left in ((MAP, job.n_maps - job.maps_done),
                            (REDUCE, 0 if sim.map_scope else job.n_reduces - job.reduces_done)):
            nodes = [m for m, ph in slots if ph == phase]
            if left <= 0 or not nodes:
                continue
            mean_tct = sum(self.tct(sim, job, phase, m) for m in nodes) / len(nodes)
            total += left * mean_tct / len(nodes)
        return total

    def admit(self, sim, new) -> bool:
        """Eq. 7: accept iff the jobs due no later than ``new`` (and ``new``) fit before its
        deadline."""
        if not math.isfinite(new.deadline_s):
            return True
        slots = [(m, MAP) for m in range(sim.n_nodes) if sim.up[m]
                 for _ in range(sim.map_slots[m])]
        slots += [(m, REDUCE) for m in range(sim.n_nodes) if sim.up[m]
                  for _ in range(sim.red_slots[m])]
        due = [j for j in sim.jobs if j.state == ACTIVE and j.deadline_s <= new.deadline_s]
        need = sum(self.jct_alone(sim, j, slots) for j in due + [new])
        return need <= new.deadline_s - sim.now


class MPAdmissionScheduler(MPScheduler):
    """MP with MIMP admission control (only meaningful where the scenario poses ADMIT decisions).

    Args:
        io_guard: Apply the Eq. 5 data-node I/O guard.
        trained: As for :class:`MPScheduler`.
        prior_weight: As for :class:`MPScheduler`.
    """

    def __init__(self, io_guard: bool = True, trained: bool = True,
                 prior_weight: float = PRIOR_WEIGHT) -> None:
        super().__init__(admission=True, io_guard=io_guard, trained=trained,
                         prior_weight=prior_weight)

    @classmethod
    def applies_to(cls, scenario) -> bool:
        """Whether ``scenario`` poses ADMIT decisions (``decisions.admission``)."""
        return bool(scenario.decisions.admission)

