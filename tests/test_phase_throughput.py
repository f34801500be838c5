"""``config.sizing.phase_throughput`` keeps each cluster's results (a job draw asks for the same
few thousands of times, keyed by the cluster's id): what it returns is what computing it afresh
gives, for clusters made and dropped one after another (the cache keeps each one it holds alive,
so no new cluster gets a held cluster's id)."""

from __future__ import annotations

import dataclasses

import numpy as np

from mrsched_gym.config.loading import load_scenario
from mrsched_gym.config.sizing import compute_phase_throughput, phase_throughput
from mrsched_gym.workloads.profiles import PROFILES


def test_kept_results_are_the_computed_ones_for_clusters_made_and_dropped():
    base = load_scenario("hadoop").cluster
    rng = np.random.default_rng(0)
    demands = [p.map_demand for p in PROFILES.values()] + [p.reduce_demand
                                                           for p in PROFILES.values()]
    for _ in range(300):
        group = dataclasses.replace(base.nodes[0], count=int(rng.integers(4, 40)),
                                    cpu_speed=float(rng.uniform(0.5, 2.0)))
        cluster = dataclasses.replace(base, nodes=(group,),
                                      resource_mode=str(rng.choice(["slots", "containers"])))
        for demand in demands[:4]:
            for reduce in (False, True):
                assert phase_throughput(cluster, demand, reduce) == \
                    compute_phase_throughput(cluster, demand, reduce)
        del cluster, group                      # its id may go to the next one
