"""The registered environment ids: ``mrsched/<Name>-v0`` -> bundled scenario file (and the
overrides of its variants). :mod:`mrsched_gym.registration` registers them with Gymnasium; the
config reads them to tell a registered id from a scenario name in its messages."""

from __future__ import annotations

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
