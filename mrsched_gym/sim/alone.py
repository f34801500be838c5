"""Deadlines from the time alone on the simulated cluster (``workload.deadline_base: alone``).

The thesis sets a deadline as a factor "relative to completion time of jobs when executed in
isolation" (Table 5.6), RDS as "2.5 times of the job completion time in dedicated cluster with
sufficient resources" (IV). The analytic base (:func:`~mrsched_gym.workloads.synthetic.
deadline_base_s`) estimates that time in closed form and misses what the simulator charges a lone
job: interactive load on shared nodes, remote reads, reduces overlapping the maps, the last
wave's stragglers. With ``deadline_base: alone`` every deadline given as a factor is re-based on
the job's simulated time alone:

* **The run alone.** The job (its drawn task work, demand multipliers and block replicas) is
  submitted at time 0 to the scenario's cluster with no other job, every node available (RDS's
  "sufficient resources": availability f(t) is what a scheduler must adapt to, not part of the
  base) and the interactive load of shared nodes constant at its mean (``interference.mean``,
  no noise: the web services are part of a hybrid cluster, MIMP 3.1). It runs under Hadoop's
  default FIFO (candidate 0: its maps before its reduces, best-placed block first); no
  admission, preemption or speculation decision is posed. Its completion time, or its map
  phase's end with ``deadline_scope: map``, is the base; a job not finished within the
  scenario's ``time_limit_s`` gets the time limit (a lower bound; such a job cannot meet any
  deadline in the episode anyway).
* **Deadline.** ``deadline_s = arrival_s + deadline_factor x base``; the draw's ``alone_s`` and
  ``map_alone_s`` become the simulated ones, so the charge for unserved jobs and the slowdown
  metric use the same time alone. Deadlines given in seconds (``deadline_s`` of a job list)
  and jobs without one are left alone.
* **Deterministic and cached.** Nothing is drawn (the run alone has no random input), so the
  base depends only on the job draw and the scenario; it is cached per (scenario, job draw)
  in a bounded in-process table, so the policies of a seed (common random numbers) simulate
  each job once.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from mrsched_gym.config import (
    AvailabilityConfig,
    DecisionConfig,
    JobSpec,
    Scenario,
    WorkloadConfig,
)
from mrsched_gym.workloads.synthetic import JobDraw

if TYPE_CHECKING:
    from mrsched_gym.sim.engine import Simulator

#: Entries of the (scenario, job draw) -> (time alone, map phase alone) cache.
CACHE_SIZE = 50_000
_cache: OrderedDict[tuple[Scenario, bytes], tuple[float, float]] = OrderedDict()
_alone_scenarios: dict[Scenario, Scenario] = {}


def alone_scenario(sc: Scenario) -> Scenario:
    """The scenario a job runs alone in: ``sc``'s cluster and time limit, every node available,
    the interactive load constant at its mean, no decision but scheduling, and a one-job
    placeholder workload (the job itself is passed to ``Simulator.reset``)."""
    if sc not in _alone_scenarios:
        it = dataclasses.replace(sc.interference, load="constant", noise=0.0, trace=None)
        wl = WorkloadConfig(kind="jobs", jobs=(JobSpec(type="wordcount", n_maps=1),),
                            deadline_scope=sc.workload.deadline_scope)
        _alone_scenarios[sc] = dataclasses.replace(
            sc, name=f"{sc.name}-alone", interference=it,
            availability=AvailabilityConfig(generator="none"), workload=wl,
            decisions=DecisionConfig(max_candidates=sc.decisions.max_candidates,
                                     slow_start=sc.decisions.slow_start),
            stats_window_s=None)
    return _alone_scenarios[sc]


def _key(sc: Scenario, draw: JobDraw) -> tuple[Scenario, bytes]:
    h = hashlib.blake2b(digest_size=20)
    h.update(repr((draw.type_idx, draw.map_work.shape, draw.reduce_work.shape)).encode())
    for a in (draw.map_work, draw.reduce_work, draw.map_mult, draw.reduce_mult, draw.replicas):
        h.update(np.ascontiguousarray(a).tobytes())
    return sc, h.digest()


def simulate_alone(sim: Simulator, draw: JobDraw) -> tuple[float, float]:
    """``(completion, map phase end)`` of ``draw`` submitted at 0 alone on ``sim``'s cluster
    (``sim`` built on :func:`alone_scenario`); an unfinished time is the time limit."""
    job = dataclasses.replace(draw, arrival_s=0.0, deadline_s=math.inf, priority=0)
    sim.reset(np.random.default_rng(0), jobs=[job])
    while not sim.done:
        sim.act(0 if sim.decision.candidates else sim.K)
    j = sim.jobs[0]
    limit = sim.scenario.time_limit_s
    done = j.finish_s if math.isfinite(j.finish_s) else limit
    maps = j.map_finish_s if math.isfinite(j.map_finish_s) else limit
    return float(done), float(maps)


def rebase_deadlines(sc: Scenario, draws: list[JobDraw],
                     make_sim: Callable[[Scenario], Simulator]) -> list[JobDraw]:
    """``draws`` with every factor-given deadline re-based on the time alone simulated (see the
    module docstring); ``make_sim`` builds a simulator for a scenario (the engine passes its
    class, so this module does not import it)."""
    sim: Simulator | None = None
    out = []
    for d in draws:
        key = _key(sc, d)
        if key not in _cache:
            if sim is None:
                sim = make_sim(alone_scenario(sc))
            _cache[key] = simulate_alone(sim, d)
            if len(_cache) > CACHE_SIZE:
                _cache.popitem(last=False)
        alone, map_alone = _cache[key]
        if math.isfinite(d.deadline_factor) and math.isfinite(d.deadline_s):
            base = map_alone if sc.workload.deadline_scope == "map" else alone
            d = dataclasses.replace(d, deadline_s=d.arrival_s + d.deadline_factor * base,
                                    alone_s=alone, map_alone_s=map_alone)
        else:
            d = dataclasses.replace(d, alone_s=alone, map_alone_s=map_alone)
        out.append(d)
    return out


def episode_jobs(sc: Scenario, draws: list[JobDraw],
                 make_sim: Callable[[Scenario], Simulator]) -> list[JobDraw]:
    """The episode's jobs: ``draws`` as drawn (``deadline_base: analytic``) or re-based
    (``alone``, :func:`rebase_deadlines`)."""
    if sc.workload.deadline_base != "alone":
        return draws
    return rebase_deadlines(sc, draws, make_sim)
