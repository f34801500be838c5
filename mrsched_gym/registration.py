"""Registered environment ids: one table, ``mrsched/<Name>-v0`` -> bundled scenario file."""

from __future__ import annotations

import gymnasium as gym

from mrsched_gym.frozen import FrozenDict

#: id -> bundled scenario name (``configs/scenarios/<name>.yaml``).
ENV_IDS = FrozenDict({
    "mrsched/Hadoop-v0": "hadoop",                 # the default benchmark
    "mrsched/Dedicated-v0": "dedicated",           # dedicated homogeneous cluster
    "mrsched/Heterogeneous-v0": "heterogeneous",   # heterogeneous CPUs + accelerators
    "mrsched/Shared-v0": "shared",                 # shared nodes with interactive interference
    "mrsched/Dynamic-v0": "dynamic",               # dynamic availability
    "mrsched/Preemption-v0": "preemption",         # priorities with kill/suspend preemption
    "mrsched/Admission-v0": "admission",           # admission control under overload
    "mrsched/ThesisScale-v0": "thesis_scale",      # thesis ch. 5 scale: 100 nodes, 7 days
    "mrsched/HadoopTrace-v0": "hadoop_trace",      # SWIM + NASA-HTTP + Google 2019 + ALOJA traces
    "mrsched/GreenTrace-v0": "green_trace",        # SWIM + PVWatts solar availability + ALOJA
    "mrsched/Stragglers-v0": "stragglers",         # stragglers + speculative execution (LATE)
    # The same worlds with MROrchestrator's node-level resource re-division (REGRESSION
    # estimator) in the resource manager: a property of the cluster, so every policy, agents
    # included, runs under it and one leaderboard ranks them in one world.
    "mrsched/HadoopOrchestrated-v0": "hadoop",
    "mrsched/DedicatedOrchestrated-v0": "dedicated",
    "mrsched/HadoopTraceOrchestrated-v0": "hadoop_trace",
})

#: id -> scenario overrides on top of its bundled scenario (the orchestrated variants).
ENV_OVERRIDES = FrozenDict({
    env_id: FrozenDict({"cluster.orchestrator": "regression"})
    for env_id in ENV_IDS if env_id.endswith("Orchestrated-v0")
})


def scenario_for(env_id: str):
    """The :class:`~mrsched_gym.config.Scenario` behind a registered id (overrides applied)."""
    from mrsched_gym.config import load_scenario, with_overrides
    return with_overrides(load_scenario(ENV_IDS[env_id]), dict(ENV_OVERRIDES.get(env_id, {})))


def register_envs() -> None:
    """Register every id of :data:`ENV_IDS` (idempotent)."""
    for env_id, scenario in ENV_IDS.items():
        if env_id in gym.registry:
            continue
        overrides = {k.replace(".", "__"): v for k, v in ENV_OVERRIDES.get(env_id, {}).items()}
        gym.register(id=env_id, entry_point="mrsched_gym.env:MRSchedEnv",
                     kwargs={"scenario": scenario, **overrides})
