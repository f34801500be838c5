"""The registered environment ids: ``mrsched/<Name>-vN`` -> bundled scenario file (and the
overrides of its variants), the earlier versions still registered, and each id's version
history. :mod:`mrsched_gym.registration` registers them with Gymnasium; the
config reads them to tell a registered id from a scenario name in its messages."""

from __future__ import annotations

from mrsched_gym.frozen import FrozenDict

#: id -> bundled scenario name (``configs/scenarios/<name>.yaml``).
ENV_IDS = FrozenDict({
    "mrsched/Hadoop-v0": "hadoop",                 # the default benchmark
    "mrsched/Dedicated-v0": "dedicated",           # dedicated homogeneous cluster
    "mrsched/Heterogeneous-v0": "heterogeneous",   # heterogeneous CPUs + accelerators
    "mrsched/Shared-v1": "shared",                 # shared nodes with interactive interference
    "mrsched/Dynamic-v0": "dynamic",               # dynamic availability
    "mrsched/Preemption-v0": "preemption",         # priorities with kill/suspend preemption
    "mrsched/Admission-v1": "admission",           # admission control under overload
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

#: Earlier versions of ids of :data:`ENV_IDS`, registered with their old behaviour so that a
#: published number stays tied to one behaviour (Gymnasium's convention), but outside the suite:
#: id -> (bundled scenario name, overrides that restore the old behaviour).
EARLIER_IDS = FrozenDict({
    "mrsched/Shared-v0": ("shared", FrozenDict({"reward.weights": {"deadline": 1.0,
                                                                   "slo": 0.1}})),
    "mrsched/Admission-v0": ("admission", FrozenDict({"reward.weights": {"deadline": 1.0,
                                                                         "rejection": 0.5}})),
})

#: What changed in each version of an id, newest first (the env pages' "Version History"; an
#: id without an entry is at its first version). tests/test_versions.py fails when an id's
#: behaviour changes without a new version here or a changelog line naming it.
VERSION_HISTORY = FrozenDict({
    "mrsched/Shared-v1": (
        "v1 (0.5.0): the reward weights the headline alone (`deadline` x 1), so the return is "
        "minus `deadline_penalty_h`; the web SLO stays a reported metric. Worlds, observations "
        "and the headline are those of v0.",
        "v0 (0.1.0): the reward also weighted the web SLO (`slo` x 0.1); still registered as "
        "`mrsched/Shared-v0`."),
    "mrsched/Admission-v1": (
        "v1 (0.5.0): the reward weights the headline alone (`deadline` x 1); a rejected job is "
        "charged in it as a missed deadline, no longer a further 0.5 per rejection. Worlds, "
        "observations and the headline are those of v0.",
        "v0 (0.1.0): the reward also weighted each rejection (`rejection` x 0.5); still "
        "registered as `mrsched/Admission-v0`."),
})
