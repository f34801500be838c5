"""The Adaptive, RAS and Reverse-Adaptive schedulers of Polo's thesis (seed ``004``).

Adaptive Scheduler (ch. 3.4):

* **basic** (3.4.1): the priority of a job is s_req (Eq. 1), the slots it still needs
  concurrently to meet its completion time goal: (sum of running tasks' remaining time delta_i +
  |U| x mu) / (T_goal - T_curr) - |R|, with mu the observed mean task length and delta_i = mu -
  beta_i (3.4). Jobs that already missed their goal come first (the one with the fewest running
  tasks, which equalises them), then jobs with no finished task yet (oldest first: no data to
  estimate), then the highest s_req. Priorities are recomputed at every decision, so excess slots
  spread across jobs.
* **data affinity** (3.4.2): when the chosen job's next map is not node-local and the job already
  holds enough slots to meet its goal (s_req <= 0), the task is deferred, up to ``max_delays``
  times (the thesis evaluates 1-3; default 3); when every job defers, the slot waits.
* **hardware affinity** (3.4.3): jobs are calibrated by running at least one map on each pool
  (accelerated / regular); a job whose observed speed-up mu_reg / mu_acc exceeds
  ``accel_threshold`` is accelerable. On accelerated nodes accelerable jobs come first, by
  s_req,acc (Eq. 2, with mu_acc); on regular nodes an accelerable job competes with
  s_req,extra = mu_reg / mu_acc x (s_req,acc - accelerated slots) (Eq. 3) minus the regular
  slots it holds.

RAS (ch. 4.2): utility u_j = u_M + u_R (Eq. 5) with u_M = log(s_alloc)/log(s_req) - 1 below the
requirement and (s_alloc - s_req)/(s_pend - s_req) above it (Eq. 6), u_R = log(r_alloc)/log(r_pend)
- 1 (Eq. 7); the placement maximises the minimum utility (Eq. 8) under each node's resource
capacity (Eq. 9-10). At a heartbeat this is the inner loop of Algorithm 1: reducers first, spread
(a job's reduce goes to a node that runs none of its reduces while its u_R < 0), then the map of
the job with the lowest utility among those with room on the node. Room is the simulator's own
capacity check (a free slot, or in containers mode the job's demand profile fitting the node's
free resources), so RAS runs with dynamic job slots when the scenario is in containers mode.

Reverse-Adaptive (ch. 5.3.4): s_fit from the reverse fitting of Algorithm 2 over the forecast
availability f(t), the three-piece utility Eq. 14, and the RAS placement.

Gaps we filled (documented, tested): u_R uses log(1 + r) so it is defined for one reduce
(range [-1, 0] as the thesis states); s_pend counts the job's maps not yet finished; the reverse
fitting's earliest window starts one task length from now, so s_fit is the number of maps that
must start in the current wave; a job's goal for its maps is its deadline minus one reduce task
length when it has reduces; RAS and Reverse-Adaptive use the job's submitted profile for mu until
tasks finish (the thesis' job profile), the Adaptive Scheduler does not (3.4.1).
"""

from __future__ import annotations

import math
from typing import Optional

import numpy as np

from mrsched_gym.baselines.base import Scheduler, default_action
from mrsched_gym.baselines.common import required_slots, running_by_job, task_len
from mrsched_gym.sim.state import MAP, NODE_LOCAL, REDUCE


def _log_ratio(a: float, b: float) -> float:
    """log(a) / log(b) - 1 for a < b, -inf at a = 0 (the thesis' "at least one slot")."""
    if a <= 0:
        return -math.inf
    if b <= 1:
        return 0.0
    return math.log(a) / math.log(b) - 1.0


def ras_map_utility(s_alloc: float, s_req: float, s_pend: float) -> float:
    """Thesis Eq. 6."""
    if s_alloc < s_req:
        return _log_ratio(s_alloc, s_req)
    if s_pend <= s_req:
        return 1.0
    return min(1.0, (s_alloc - s_req) / (s_pend - s_req))


def reduce_utility(r_alloc: float, r_pend: float) -> float:
    """Thesis Eq. 7 / 15 with log(1 + r): -1 with no reducer running, 0 with all of them."""
    if r_pend <= 0:
        return 0.0
    return math.log1p(min(r_alloc, r_pend)) / math.log1p(r_pend) - 1.0


def reverse_map_utility(s_alloc: float, s_fit: float, s_req: float, s_pend: float) -> float:
    """Thesis Eq. 14 (three pieces; the last when s_req <= s_fit)."""
    if s_alloc < s_fit:
        return _log_ratio(s_alloc, s_fit)
    if s_req <= s_fit:
        return 1.0 if s_pend <= s_fit else min(1.0, (s_alloc - s_fit) / (s_pend - s_fit))
    if s_alloc < s_req:
        return (s_alloc - s_fit) / (2.0 * (s_req - s_fit))
    if s_pend <= s_req:
        return 1.0
    return min(1.0, 0.5 + (s_alloc - s_req) / (2.0 * (s_pend - s_req)))


class AdaptiveScheduler(Scheduler):
    """Polo's Adaptive Scheduler: ``affinity`` = ``"none"`` (basic), ``"data"`` or ``"hardware"``.

    Args:
        affinity: Which extension of 3.4.2-3.4.3 to use.
        max_delays: Data affinity: deferrals allowed per job between launches.
        accel_threshold: Hardware affinity: speed-up above which a job is accelerable.
    """

    def __init__(self, affinity: str = "none", max_delays: int = 3,
                 accel_threshold: float = 1.5) -> None:
        if affinity not in ("none", "data", "hardware"):
            raise ValueError(f"affinity must be none, data or hardware, got {affinity!r}")
        self.affinity = affinity
        self.max_delays = int(max_delays)
        self.accel_threshold = float(accel_threshold)
        self.name = "adaptive" if affinity == "none" else f"adaptive-{affinity}"

    def reset(self, sim, seed: Optional[int] = None) -> None:
        self.delays: dict[int, int] = {}
        self.log_pos = 0
        # per job: [sum, count] of finished map lengths on regular / accelerated nodes
        self.pool_len: dict[int, list[list[float]]] = {}
        self.acc_nodes = [n for n in range(sim.n_nodes) if sim.accel[n]]
        self.acc_slots = sum(sim.map_slots[n] for n in self.acc_nodes)

    # ---------------------------------------------------------------- estimates
    def _observe(self, sim) -> None:
        """Fold newly finished maps into the per-pool task lengths (hardware affinity)."""
        log = sim.task_log
        for k in range(self.log_pos, len(log)):
            s, e, jid, node, phase, outcome = log[k]
            if phase == MAP and outcome == "done":
                p = self.pool_len.setdefault(jid, [[0.0, 0], [0.0, 0]])[1 if sim.accel[node] else 0]
                p[0] += e - s
                p[1] += 1
        self.log_pos = len(log)

    def _pool_mu(self, jid: int, acc: int) -> float:
        p = self.pool_len.get(jid)
        return p[acc][0] / p[acc][1] if p and p[acc][1] else math.nan

    def need(self, sim, job, tasks) -> tuple:
        """Priority key (smaller first): (class, -need, jid)."""
        if math.isfinite(job.deadline_s) and job.deadline_s <= sim.now:
            return (0, len(tasks), job.jid)
        s_req = required_slots(job, tasks, sim.now, prior=False)
        if math.isnan(s_req):
            return (1, 0.0, job.jid)
        return (2, -(s_req - len(tasks)), job.jid)

    def _hw_need(self, sim, job, tasks, on_acc: bool) -> tuple:
        mu_reg, mu_acc = self._pool_mu(job.jid, 0), self._pool_mu(job.jid, 1)
        if self.acc_nodes and (math.isnan(mu_reg) or math.isnan(mu_acc)):
            missing = math.isnan(mu_acc) if on_acc else math.isnan(mu_reg)
            if missing:                       # calibration: one map on each pool first
                return (1, 0.0, job.jid)
        base = self.need(sim, job, tasks)
        if not self.acc_nodes or math.isnan(mu_acc) or mu_reg / mu_acc <= self.accel_threshold:
            # a regular job: preferably on regular nodes
            return base if not on_acc else (base[0] + 3, base[1], job.jid)
        if base[0] == 0:
            return base
        left = job.deadline_s - sim.now
        acc_tasks = sum(1 for t in tasks if sim.accel[t.node])
        work = job.pending_maps * mu_acc + sum(max(mu_acc - (sim.now - t.start_s), 0.0)
                                               for t in tasks if t.phase == MAP)
        s_req_acc = work / left if math.isfinite(left) else 1.0        # Eq. 2 (total)
        if on_acc:
            return (1 if base[0] == 1 else 2, -(s_req_acc - acc_tasks), job.jid)
        extra = mu_reg / mu_acc * (s_req_acc - self.acc_slots)          # Eq. 3
        return (2, -(extra - (len(tasks) - acc_tasks)), job.jid)

    # ---------------------------------------------------------------- decision
    def decide(self, sim) -> int:
        a = default_action(sim)
        if a is not None:
            return a
        running = running_by_job(sim)
        cands = sim.candidates
        if self.affinity == "hardware":
            self._observe(sim)
            on_acc = bool(sim.accel[sim.node])
            key = lambda i: self._hw_need(sim, cands[i][0], running.get(cands[i][0].jid, ()),  # noqa: E731
                                          on_acc) + (cands[i][1],)
        else:
            key = lambda i: self.need(sim, cands[i][0], running.get(cands[i][0].jid, ())) + (  # noqa: E731
                cands[i][1],)
        order = sorted(range(len(cands)), key=key)
        if self.affinity != "data":
            return order[0]
        for i in order:
            job, phase, loc = cands[i]
            if phase != MAP or loc == NODE_LOCAL:
                self.delays[job.jid] = 0
                return i
            tasks = running.get(job.jid, ())
            s_req = required_slots(job, tasks, sim.now, prior=False)
            safe = not math.isnan(s_req) and s_req - len(tasks) <= 0
            d = self.delays.get(job.jid, 0)
            if not safe or d >= self.max_delays:
                self.delays[job.jid] = 0
                return i
            self.delays[job.jid] = d + 1
        return sim.K


class RASScheduler(Scheduler):
    """Resource-aware Adaptive Scheduler (thesis ch. 4): max-min utility placement."""

    name = "ras"

    def map_utility(self, sim, job, tasks) -> float:
        s_alloc = sum(1 for t in tasks if t.phase == MAP)
        s_req = self.s_req(sim, job, tasks)
        return ras_map_utility(s_alloc, s_req, job.n_maps - job.maps_done)

    def s_req(self, sim, job, tasks) -> float:
        r = required_slots(job, tasks, sim.now, prior=True)
        return min(r, float(job.n_maps - job.maps_done)) if math.isfinite(r) else \
            float(job.n_maps - job.maps_done)

    def decide(self, sim) -> int:
        a = default_action(sim)
        if a is not None:
            return a
        running = running_by_job(sim)
        n = sim.node
        self.prepare(sim, running)
        best, best_key = 0, None
        for i, (job, phase, _) in enumerate(sim.candidates):
            tasks = running.get(job.jid, ())
            r_alloc = sum(1 for t in tasks if t.phase == REDUCE)
            u_r = reduce_utility(r_alloc, job.n_reduces - job.reduces_done)
            if phase == REDUCE:
                if any(t.node == n and t.phase == REDUCE for t in tasks) or u_r >= 0:
                    continue
                key = (0, u_r, job.deadline_s, job.jid)      # reducers first (Algorithm 1)
            else:
                key = (1, self.map_utility(sim, job, tasks) + u_r, job.deadline_s, job.jid)
            if best_key is None or key < best_key:
                best, best_key = i, key
        return best

    def prepare(self, sim, running) -> None:
        """Hook for per-decision precomputation (Reverse-Adaptive's s_fit)."""


class ReverseAdaptiveScheduler(RASScheduler):
    """Reverse-Adaptive Scheduler (thesis ch. 5.3.4): s_fit by reverse fitting over f(t)."""

    name = "reverse-adaptive"

    def reset(self, sim, seed: Optional[int] = None) -> None:
        self.s_fit: dict[int, float] = {}
        self.step_s = sim.scenario.availability.step_s
        self.slots = float(sum(sim.map_slots))
        # integral of the forecast f(t) up to the start of each step (prefix sums), so the
        # capacity of any window is O(1); beyond the forecast its last value persists
        fc = np.asarray(sim.forecast_f, dtype=float)
        self.fc = fc
        self.fc_int = np.concatenate([[0.0], np.cumsum(fc) * self.step_s])

    def forecast_integral(self, t: float) -> float:
        """integral_0^t f(s) ds under the forecast (seconds of full availability)."""
        last = len(self.fc) - 1
        k = min(int(t // self.step_s), last)
        return float(self.fc_int[k] + self.fc[k] * (t - k * self.step_s))

    def capacity(self, sim, a: float, b: float) -> float:
        """Map slot-seconds the cluster offers in [a, b] under the forecast f(t)."""
        if b <= a:
            return 0.0
        return self.slots * (self.forecast_integral(b) - self.forecast_integral(a))

    def prepare(self, sim, running) -> None:
        """Algorithm 2: reverse fitting of the pending maps, latest goal first.

        Each job's window [goal of the next-earlier job, its goal] is filled with the pending
        maps of the jobs fitted so far (later goals first), then its own. Only jobs with maps
        still to fit are visited, and a window stops when its capacity is below the shortest
        task: the same fit as visiting every job, in O(jobs x open jobs) instead of O(jobs^2).
        """
        now = sim.now
        jobs = []
        for jid in sim.runnable:
            job = sim.jobs[jid]
            if not math.isfinite(job.deadline_s):
                continue
            mu = task_len(job, MAP)
            goal = job.deadline_s - (task_len(job, REDUCE) if job.n_reduces else 0.0)
            jobs.append((goal, jid, max(mu, 1e-6), float(job.pending_maps)))
        jobs.sort(reverse=True)
        s_fit = {jid: pend for _, jid, _, pend in jobs}
        shortest = min((mu for _, _, mu, _ in jobs), default=math.inf)
        open_jobs: list[tuple[int, float]] = []         # fitted so far, with maps left to fit
        for k, (goal, jid, mu, _) in enumerate(jobs):
            a = jobs[k + 1][0] if k + 1 < len(jobs) else now + mu
            cap = self.capacity(sim, max(a, now + mu), goal)
            open_jobs.append((jid, mu))
            if cap <= 0 or cap < shortest:
                continue
            still_open = []
            for i, (pj, pmu) in enumerate(open_jobs):   # later goals first, then this job
                if cap < shortest:                      # nothing fits any more: keep the rest
                    still_open.extend(open_jobs[i:])
                    break
                if s_fit[pj] > 0:
                    fit = min(s_fit[pj], math.floor(cap / pmu))
                    s_fit[pj] -= fit
                    cap -= fit * pmu
                if s_fit[pj] > 0:
                    still_open.append((pj, pmu))
            open_jobs = still_open
        self.s_fit = s_fit

    def map_utility(self, sim, job, tasks) -> float:
        s_alloc = sum(1 for t in tasks if t.phase == MAP)
        s_pend = job.n_maps - job.maps_done
        if not math.isfinite(job.deadline_s):
            return ras_map_utility(s_alloc, 1.0, s_pend)
        return reverse_map_utility(s_alloc, self.s_fit.get(job.jid, 0.0),
                                   self.s_req(sim, job, tasks), s_pend)
