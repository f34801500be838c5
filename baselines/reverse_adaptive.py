"""The Reverse-Adaptive Scheduler of Polo's thesis (ch. 5.3.4).

s_fit from the reverse fitting of Algorithm 2 over the forecast availability, the three-piece
utility Eq. 14, and the RAS placement (:class:`~mrsched_gym.baselines.ras.RASScheduler`).

Algorithm 2's ``fit(j, a, b)`` returns "the amount of tasks from job j that can be assigned
between time a and b, taking into consideration the profile and resource requirements", and the
scheduler knows "for each tasktracker tt ... its resource capacity at any point in time, Omega_tt
..., since it can be derived from ... f(t)" (5.3.4.2). With ``slots_estimate="waves"`` (the
default, the thesis's reading of Eq. 1) the fit reads each node's forecast capacity over time
(:attr:`~mrsched_gym.sim.view.ClusterView.node_forecast`) and counts whole tasks: in every
stretch in which a node is up, its map slots' capacity-seconds hold floor(capacity / mu) tasks
of the job's length, and no task longer than the stretch (a task cannot outlive the node it runs
on). With ``"fluid"`` the fit is the earlier one: the cluster's map slot-seconds under the
aggregate forecast f(t), divided by mu.

Gaps we filled (documented, tested): the reverse fitting's earliest window starts one task length
from now, so s_fit is the number of maps that must start in the current wave; a job's goal for
its maps is its deadline minus one reduce task length when it has reduces; a node with several
map slots pools their capacity-seconds within a stretch (exact for one slot per node, as in the
thesis's simulation, Table 5.6); Reverse-Adaptive uses the job's submitted profile for mu until
tasks finish (the thesis' job profile) and keeps RAS's s_req (the maps not yet finished over
the whole waves to the goal, "the average number of tasks that should be allocated over time",
5.3.4.2; :func:`~mrsched_gym.baselines.ras.pending_slots`).
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence

import numpy as np

from mrsched_gym.baselines.common import task_len
from mrsched_gym.baselines.ras import RASScheduler, ras_map_utility, reverse_map_utility
from mrsched_gym.sim.native import mypyc_attr
from mrsched_gym.sim.state import MAP, REDUCE, Job, Task
from mrsched_gym.sim.view import ClusterView

#: A job as Algorithm 2 fits it: ``(map goal, jid, mu, pending maps)``.
FitJob = tuple[float, int, float, float]
#: How many windows (:meth:`NodeStretches.window`) and window fits
#: (:meth:`ReverseAdaptiveScheduler.fit_nodes`) are kept between decisions. The repeats are
#: recent (the same heartbeat, the previous decision's windows), and a larger store costs more
#: than it saves: the garbage collector walks every list and tuple it holds (on the thesis ch. 5
#: cases, 4,096 windows and 50,000 fits cost about a quarter of Reverse-Adaptive's time).
WINDOWS_KEPT = 64
FITS_KEPT = 256


class NodeStretches:
    """The stretches in which each node is up under its forecast capacity, with the map
    capacity-seconds any window of time holds in each (thesis 5.3.4.2, Omega_tt over time).

    Args:
        node_forecast: ``[nodes, steps]`` forecast capacity of each node per step.
        map_slots: Map slots of each node.
        step_s: Length of a step (s); beyond the last step its value persists.
    """

    def __init__(self, node_forecast: np.ndarray, map_slots: Sequence[int],
                 step_s: float) -> None:
        cap = np.asarray(node_forecast, dtype=float)
        n, k = cap.shape
        self.step_s = float(step_s)
        self.cap = cap
        self.last = int(k) - 1
        # integral of each node's capacity up to the start of each step
        self.cum = np.concatenate([np.zeros((n, 1)), np.cumsum(cap, axis=1) * step_s], axis=1)
        up = cap > 0
        nodes, starts, ends = [], [], []
        for i in range(n):
            if not map_slots[i]:
                continue
            edges = np.flatnonzero(np.diff(np.concatenate([[0], up[i].astype(int), [0]])))
            for s, e in zip(edges[::2], edges[1::2], strict=True):
                nodes.append(i)
                starts.append(s * step_s)
                ends.append(math.inf if e > self.last else e * step_s)
        self.node = np.asarray(nodes, dtype=int)
        self.start = np.asarray(starts, dtype=float)
        self.end = np.asarray(ends, dtype=float)
        self.slots = np.asarray([map_slots[i] for i in nodes], dtype=float)
        # the integral at each stretch's ends (an open end is never inside a window)
        self.at_start = self.integral(self.node, self.start)
        finite = np.isfinite(self.end)
        self.at_end = np.zeros(len(nodes))
        self.at_end[finite] = self.integral(self.node[finite], self.end[finite])
        # the same values as plain lists: a window reads its stretches one by one
        self.node_list: list[int] = self.node.tolist()
        self.start_list: list[float] = self.start.tolist()
        self.end_list: list[float] = self.end.tolist()
        self.slots_list: list[float] = self.slots.tolist()
        self.at_start_list: list[float] = self.at_start.tolist()
        self.at_end_list: list[float] = self.at_end.tolist()
        self.cum_rows: list[list[float]] = self.cum.tolist()
        self.cap_rows: list[list[float]] = self.cap.tolist()
        # which stretches overlap a window, without scanning them all: those up at its start
        # (by the step it lies in: stretches start and end at whole steps) and those that
        # start inside it (by start time)
        self.up_in_step: list[list[int]] = [[] for _ in range(self.last + 2)]
        for i in range(len(nodes)):
            first = int(round(self.start_list[i] / self.step_s))
            end = self.end_list[i]
            stop = self.last + 2 if math.isinf(end) else int(round(end / self.step_s))
            for step in range(first, stop):
                self.up_in_step[step].append(i)
        self.by_start: list[int] = sorted(range(len(nodes)), key=lambda i: self.start_list[i])
        self.sorted_starts: list[float] = [self.start_list[i] for i in self.by_start]
        self.cache: dict[tuple[float, float], tuple[list[float], list[float]]] = {}

    def integral(self, node: np.ndarray, t: np.ndarray) -> np.ndarray:
        """Integral of each ``node``'s forecast capacity from 0 to ``t`` (elementwise)."""
        k = np.minimum((t // self.step_s).astype(int), self.last)
        return self.cum[node, k] + self.cap[node, k] * (t - k * self.step_s)

    def window(self, a: float, b: float) -> tuple[list[float], list[float]]:
        """The stretches that overlap [a, b] (those outside hold no task): each one's length
        inside [a, b] and the map capacity-seconds it offers there (slots x capacity
        integral); the lists are shared between calls (copy before changing them)."""
        key = (a, b)
        hit = self.cache.get(key)
        if hit is not None:
            return hit
        step_s, last = self.step_s, self.last
        overlapping = list(self.up_in_step[min(int(a // step_s), last + 1)])
        later = self.by_start[bisect.bisect_right(self.sorted_starts, a):
                              bisect.bisect_left(self.sorted_starts, b)]
        if later:
            overlapping.extend(later)
            overlapping.sort()                 # in the stretches' order
        # the integral at a and at b, as :meth:`integral` computes it, read from the step each
        # lies in (the same for every node)
        k_a = min(int(a // step_s), last)
        k_b = min(int(b // step_s), last)
        into_a, into_b = a - k_a * step_s, b - k_b * step_s
        cum, cap = self.cum_rows, self.cap_rows
        lengths: list[float] = []
        rooms: list[float] = []
        for i in overlapping:
            start, end = self.start_list[i], self.end_list[i]
            lo = start if start > a else a
            inside = end if end < b else b
            hi = inside if inside > lo else lo
            lengths.append(hi - lo)
            # the integral at lo and hi: the stretch's own end where it lies inside [a, b],
            # else at a or b
            node = self.node_list[i]
            at_lo = self.at_start_list[i] if start >= a else \
                cum[node][k_a] + cap[node][k_a] * into_a
            at_hi = self.at_end_list[i] if end <= b else \
                cum[node][k_b] + cap[node][k_b] * into_b
            room = self.slots_list[i] * (at_hi - at_lo)
            rooms.append(room if room > 0.0 else 0.0)
        out = (lengths, rooms)
        if len(self.cache) > WINDOWS_KEPT:
            self.cache.clear()
        self.cache[key] = out
        return out


def take_tasks(length: list[float], room: list[float], mu: float, want: float) -> float:
    """Fit up to ``want`` tasks of length ``mu`` into the stretches (first stretches first),
    whole tasks only and none longer than its stretch; ``room`` is reduced in place.

    A stretch holds floor(room / mu) tasks (with 1e-9 of slack for the float sums), and never
    fewer than none: a room a longer task left a hair below zero holds no task of a shorter one.

    Returns:
        The number of tasks fitted.
    """
    if want <= 0:
        return 0.0
    taken = 0.0                         # whole numbers: exact
    for i in range(len(length)):
        if length[i] + 1e-9 < mu:
            continue
        count = float(math.floor(room[i] / mu + 1e-9))
        if count <= 0:
            continue
        if taken + count >= want:       # the request is filled here, this stretch in part
            room[i] = room[i] - (want - taken) * mu
            return want
        room[i] = room[i] - count * mu
        taken += count
    return taken


@mypyc_attr(allow_interpreted_subclasses=True)   # a user may subclass it
class ReverseAdaptiveScheduler(RASScheduler):
    """Reverse-Adaptive Scheduler (thesis ch. 5.3.4): s_fit by reverse fitting over the forecast
    capacity (per node under ``slots_estimate="waves"``, aggregate f(t) under ``"fluid"``)."""

    name = "reverse-adaptive"

    def reset(self, sim: ClusterView, seed: int | None = None) -> None:
        """Take the episode's availability forecast: f(t) and its running integral (fluid), each
        node's forecast capacity in up stretches (waves)."""
        self.s_fit: dict[int, float] = {}
        self.step_s = sim.scenario.availability.step_s
        self.slots = float(sum(sim.map_slots))
        # integral of the forecast f(t) up to the start of each step (prefix sums), so the
        # capacity of any window is O(1); beyond the forecast its last value persists
        fc = np.asarray(sim.forecast_f, dtype=float)
        self.fc = fc
        self.fc_int = np.concatenate([[0.0], np.cumsum(fc) * self.step_s])
        self.stretches = NodeStretches(sim.node_forecast, sim.map_slots, self.step_s) \
            if self.slots_estimate == "waves" else None
        self.fit_memo: dict[tuple, tuple[float, ...]] = {}
        # the previous decision's jobs, windows (a, takes) and shortest task (fit_nodes)
        self.last_fit: tuple[list[FitJob], list[float], list[tuple[float, ...]], float] = \
            ([], [], [], math.nan)

    def forecast_integral(self, t: float) -> float:
        """integral_0^t f(s) ds under the forecast (seconds of full availability)."""
        last = len(self.fc) - 1
        k = min(int(t // self.step_s), last)
        return float(self.fc_int[k] + self.fc[k] * (t - k * self.step_s))

    def capacity(self, sim: ClusterView, a: float, b: float) -> float:
        """Map slot-seconds the cluster offers in [a, b] under the forecast f(t)."""
        if b <= a:
            return 0.0
        return self.slots * (self.forecast_integral(b) - self.forecast_integral(a))

    def fit_jobs(self, sim: ClusterView) -> list[FitJob]:
        """The jobs Algorithm 2 fits: ``(map goal, jid, mu, pending maps)``, latest goal first."""
        jobs: list[FitJob] = []
        all_jobs = sim.jobs
        for jid in sim.runnable:
            job: Job = all_jobs[jid]
            if not math.isfinite(job.deadline_s):
                continue
            mu = task_len(job, MAP)
            goal = job.deadline_s - (task_len(job, REDUCE) if job.n_reduces else 0.0)
            jobs.append((goal, jid, max(mu, 1e-6), float(job.pending_maps)))
        jobs.sort(reverse=True)
        return jobs

    def prepare(self, sim: ClusterView, running: dict[int, list[Task]]) -> None:
        """Algorithm 2: reverse fitting of the pending maps, latest goal first."""
        jobs = self.fit_jobs(sim)
        if self.stretches is None:
            self.s_fit = self.fit_fluid(sim, jobs)
        else:
            self.s_fit = self.fit_nodes(sim, jobs)

    def fit_fluid(self, sim: ClusterView, jobs: list[FitJob]) -> dict[int, float]:
        """Algorithm 2 over the aggregate forecast f(t) (``slots_estimate="fluid"``).

        Each job's window [goal of the next-earlier job, its goal] is filled with the pending
        maps of the jobs fitted so far (later goals first), then its own. Only jobs with maps
        still to fit are visited, and a window stops when its capacity is below the shortest
        task: the same fit as visiting every job, in O(jobs x open jobs) instead of O(jobs^2).
        """
        now = sim.now
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
        return s_fit

    def fit_nodes(self, sim: ClusterView, jobs: list[FitJob]) -> dict[int, float]:
        """Algorithm 2 over each node's forecast capacity (``slots_estimate="waves"``): the
        same windows and order as :meth:`fit_fluid`, with fit(j, a, b) the whole tasks of
        length mu_j the nodes' up stretches hold in [a, b] (:func:`take_tasks`).

        A window's fit depends only on the jobs fitted up to it (later goals first) and on its
        bounds, so the windows of the previous decision are taken over as long as those are
        the same (usually all but the last few: a decision starts one map of one job), and
        the fits of other windows are kept in a memo: the same fit, computed once."""
        now = sim.now
        s_fit = {jid: pend for _, jid, _, pend in jobs}
        if not jobs:
            return s_fit
        shortest = min(mu for _, _, mu, _ in jobs)
        prev_jobs, prev_a, prev_takes, prev_shortest = self.last_fit
        same = prev_shortest == shortest
        window_a: list[float] = []              # each job's window start and fit
        window_takes: list[tuple[float, ...]] = []
        no_takes: tuple[float, ...] = ()
        open_jobs: list[tuple[int, float]] = []
        for k in range(len(jobs)):
            goal, jid, mu, _ = jobs[k]
            a = max(jobs[k + 1][0] if k + 1 < len(jobs) else now + mu, now + mu)
            open_jobs.append((jid, mu))
            if same and (k >= len(prev_jobs) or prev_a[k] != a or prev_jobs[k] != jobs[k]):
                same = False
            window_a.append(a)
            if goal - a < shortest:
                window_takes.append(no_takes)
                continue
            if same:
                takes = prev_takes[k]
            else:
                wants = tuple((pj, pmu, s_fit[pj]) for pj, pmu in open_jobs)
                key = (a, goal, wants)
                memo = self.fit_memo.get(key)
                if memo is None:
                    memo = self.fit_window(a, goal, wants)
                    if len(self.fit_memo) > FITS_KEPT:
                        self.fit_memo.clear()
                    self.fit_memo[key] = memo
                takes = memo
            window_takes.append(takes)
            still_open = []
            for i in range(len(open_jobs)):
                pj = open_jobs[i][0]
                left = s_fit[pj] - takes[i]
                s_fit[pj] = left
                if left > 0:
                    still_open.append(open_jobs[i])
            open_jobs = still_open
        self.last_fit = (jobs, window_a, window_takes, shortest)
        return s_fit

    def fit_window(self, a: float, b: float,
                   wants: tuple[tuple[int, float, float], ...]) -> tuple[float, ...]:
        """The maps of each ``(jid, mu, maps left to fit)`` in ``wants`` (later goals first)
        that the window [a, b] holds, each taking whole tasks from the stretches the ones
        before it left (:func:`take_tasks`). A pure function of its arguments:
        :meth:`fit_nodes` keeps its results, since most windows repeat between decisions."""
        assert self.stretches is not None          # waves: reset made them
        length, shared = self.stretches.window(a, b)
        room = list(shared)
        return tuple(take_tasks(length, room, mu, want) if want > 0 and b - a >= mu else 0.0
                     for _, mu, want in wants)

    def map_utility(self, sim: ClusterView, job: Job, tasks: Sequence[Task],
                    s_alloc: int | None = None) -> float:
        """Utility of ``job``'s map allocation against its reverse-fitted s_fit (thesis Eq. 14);
        a job without a deadline as in RAS with one slot required (``s_alloc`` as in
        :meth:`RASScheduler.map_utility`)."""
        if s_alloc is None:
            s_alloc = sum(1 for t in tasks if t.phase == MAP)
        s_pend = job.n_maps - job.maps_done
        if not math.isfinite(job.deadline_s):
            return ras_map_utility(s_alloc, 1.0, s_pend)
        return reverse_map_utility(s_alloc, self.s_fit.get(job.jid, 0.0),
                                   self.s_req(sim, job, tasks), s_pend)
