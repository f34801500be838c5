"""Running a reproduction: every case x policy x seed over a fork pool (common random numbers),
and the fingerprint of a run that ``reproduce --reuse`` compares."""

from __future__ import annotations

import math
from typing import Any

from mrsched_gym.config import Scenario
from mrsched_gym.evaluate import make_policy, run_episode, run_parallel
from mrsched_gym.reproduce.cases import Reproduction

#: Scenario fields added after reproduction records were first fingerprinted, by path (and each
#: job's arrival_jitter_s): left out while at their default, so earlier records stay reusable.
ADDED_LATER = (("decisions", "speculation"), ("workload", "deadline_base"))


def _fingerprinted_scenario(scenario: Scenario) -> dict[str, Any]:
    """``to_dict(scenario)`` without the :data:`ADDED_LATER` fields that have their default."""
    from mrsched_gym.config import to_dict
    data, default = to_dict(scenario), to_dict(Scenario())
    data["workload"]["jobs"] = [{k: v for k, v in j.items() if (k, v) != ("arrival_jitter_s", 0)}
                                for j in data["workload"]["jobs"]]
    for path in ADDED_LATER:
        here, base = data, default
        for key in path[:-1]:
            here, base = here[key], base[key]
        if here.get(path[-1]) == base[path[-1]]:
            del here[path[-1]]
    return data


def run_fingerprint(rep: Reproduction) -> dict[str, Any]:
    """What a run's records depend on besides the simulator's code: every case's resolved
    scenario and policies, the job metrics kept, the number of seeds and the package version
    (``reproduce --reuse`` reuses records only when all of them match; claims, paper numbers and
    notes may change in between)."""
    import hashlib
    import json

    from mrsched_gym import __version__
    worlds = [[c.name, _fingerprinted_scenario(c.scenario), list(c.policies)] for c in rep.cases]
    text = json.dumps([worlds, rep.job_metrics], sort_keys=True, default=str)
    files = input_digests(rep)
    return {"reproduction": rep.name, "cases_sha256": hashlib.sha256(text.encode()).hexdigest(),
            "seeds": rep.seeds, "version": __version__,
            **({"files_sha256": files} if files else {})}


def input_digests(rep: Reproduction) -> dict[str, str]:
    """The content of every file the cases read: the SHA-256 of each trace, and each agent's
    fingerprint (its checkpoint's hash), so ``--reuse`` notices an edited file."""
    from mrsched_gym.config import to_dict
    from mrsched_gym.evaluate import parse_policy, policy_fingerprint
    from mrsched_gym.models.traces import trace_digests
    out: dict[str, str] = {}
    for c in rep.cases:
        out.update(trace_digests(to_dict(c.scenario)))
        for p in c.policies:
            spec = parse_policy(p)
            if spec.kind != "baseline":
                out[spec.label] = policy_fingerprint(spec)
    return out


def _job_values(log, names: list[str]) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for i, label in enumerate(log.labels):
        if not label:
            continue
        fin, arr, dl = log.finish_s[i], log.arrival_s[i], log.deadline_s[i]
        ex = fin - arr
        vals = {"exec_s": ex, "finish_s": fin, "map_exec_s": log.map_finish_s[i] - arr,
                "beyond_rel": max(0.0, fin - dl) / ex if math.isfinite(dl) and ex > 0 else 0.0}
        out[label] = {k: float(vals[k]) for k in names}
    return out


def _run_one(task: tuple) -> dict[str, Any]:
    from threadpoolctl import threadpool_limits
    case, policy, seed, job_metrics = task
    with threadpool_limits(limits=1):          # records independent of BLAS threading
        res = run_episode(case.scenario, make_policy(policy), seed, keep_log=bool(job_metrics))
    rec = {"case": case.name, "policy": policy, "seed": seed, **res["metrics"]}
    if job_metrics:
        rec["jobs"] = _job_values(res["log"], job_metrics)
    return rec


def run_reproduction(rep: Reproduction, workers: int | None = None,
                     progress: bool = True) -> list[dict[str, Any]]:
    """Run every case x policy x seed; records in that order."""
    tasks = [(c, p, s, rep.job_metrics) for c in rep.cases for p in c.policies
             for s in range(rep.seeds)]
    return run_parallel(_run_one, tasks, workers, progress, rep.name)

