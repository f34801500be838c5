"""One episode: :func:`make_env`, :func:`scenario_of`, :func:`run_episode`, and :func:`run_task`
(one episode of a sweep, with one BLAS/OpenMP thread, its failure recorded)."""

from __future__ import annotations

import time
import traceback
from typing import TYPE_CHECKING, Any, cast

import gymnasium as gym
import numpy as np

import mrsched_gym  # noqa: F401  (registers the ids)
from mrsched_gym.config import Scenario, load_scenario
from mrsched_gym.env.metrics import job_table
from mrsched_gym.evaluate.pinning import world_fingerprint
from mrsched_gym.evaluate.policy_specs import PolicySpec, make_policy, policy_fingerprint
from mrsched_gym.policy.contract import as_policy
from mrsched_gym.policy.decision_budget import DEFAULT_BUDGET_S, decision_watchdog
from mrsched_gym.policy.policy_failures import (
    PolicyLoadError,
    RemoteFailure,
    error_text,
    is_real_interrupt,
    no_process_exit,
)
from mrsched_gym.policy.process import ProcessPolicy
from mrsched_gym.registration import FLAT_IDS, is_registered, scenario_for

if TYPE_CHECKING:
    from mrsched_gym.env import MRSchedEnv

DEFAULT_ENV = "mrsched/Hadoop-v0"

#: One episode of a sweep: (policy, scenario, seed, scenario overrides), :func:`run_task`'s
#: argument.
SweepTask = tuple[PolicySpec, str, int, "dict[str, Any] | None"]


def make_env(scenario: str, overrides: dict[str, Any] | None = None) -> gym.Env[Any, Any]:
    """A registered id, a bundled scenario name or a scenario YAML path, with overrides (a
    ``-flat`` id makes its base id: the same world, which every policy observes as it is made
    to, :mod:`mrsched_gym.env.flat`)."""
    kw = dict(overrides or {})
    scenario = FLAT_IDS.get(scenario, scenario) if isinstance(scenario, str) else scenario
    if isinstance(scenario, str) and scenario in gym.registry:
        return gym.make(scenario, **kw)
    return gym.make(DEFAULT_ENV, scenario=scenario, **kw)


def scenario_of(scenario: str | Scenario) -> Scenario:
    """The :class:`~mrsched_gym.config.Scenario` behind an id, name or path."""
    if isinstance(scenario, Scenario):
        return scenario
    return scenario_for(scenario) if is_registered(scenario) else load_scenario(scenario)


def run_episode(scenario: str, policy: Any, seed: int, env_kwargs: dict[str, Any] | None = None,
                keep_log: bool = False, keep_jobs: bool = False) -> dict[str, Any]:
    """Run ``policy`` for one episode on ``scenario`` (an id, name or path) with ``seed``.

    ``policy`` is a policy string (:func:`parse_policy`) or any object of the contract of
    :mod:`mrsched_gym.policy.contract` (run as it is: its state carries over between calls; its
    ``reset(view, seed)`` is called first).

    A policy never changes the world: every policy of a comparison runs the same scenario (a
    cluster mechanism such as the MROrchestrator is part of the scenario, e.g.
    ``mrsched/HadoopOrchestrated-v0``).

    Returns:
        ``{"metrics", "return", "steps", "wall_s", "jct_s", "world_fp"}`` (the last: the
        :func:`~mrsched_gym.evaluate.pinning.world_fingerprint` of its world; + ``"log"``, the
        :class:`~mrsched_gym.sim.log.EpisodeLog`, with ``keep_log``; + ``"jobs"``, one row per
        job as :func:`~mrsched_gym.env.metrics.job_table` columns, with ``keep_jobs``).
    """
    if isinstance(policy, (str, PolicySpec)):
        policy = make_policy(policy)
    elif not isinstance(policy, ProcessPolicy):
        policy = as_policy(policy)
    try:
        return play_episode(scenario, policy, seed, env_kwargs, keep_log, keep_jobs)
    finally:
        if isinstance(policy, ProcessPolicy):        # its policy process ends with the episode
            policy.close()


def play_episode(scenario: str, policy: Any, seed: int, env_kwargs: dict[str, Any] | None,
                 keep_log: bool, keep_jobs: bool) -> dict[str, Any]:
    """:func:`run_episode` of a policy the harness runs (``reset(sim, seed)`` and
    ``decide(sim)`` or ``act(obs, mask)``)."""
    env = make_env(scenario, env_kwargs)
    world_fp = world_fingerprint(cast("MRSchedEnv", env.unwrapped).scenario)
    t0 = time.perf_counter()
    obs, info = env.reset(seed=seed)
    base = cast("MRSchedEnv", env.unwrapped)
    sim = base.sim
    # -1 in reset, then decisions made (mrsched_gym.policy.decision_budget reads it from this
    # frame: nothing to do per decision)
    steps = -1
    policy.reset(sim, seed=seed)
    uses_obs = hasattr(policy, "act")
    total, steps = 0.0, 0
    while True:
        if uses_obs:
            obs, r, term, trunc, info = env.step(policy.act(obs, base.action_masks()))
        else:          # a baseline decides from the simulator: no observation to build (the
            # wrappers gym.make adds check only reset and the first step; no id sets a step
            # limit, which a TimeLimit wrapper would enforce)
            r, term, trunc, info = base.advance(policy.decide(sim))
        total += cast(float, r)
        steps += 1
        if term or trunc:
            break
    out = {"metrics": info["metrics"], "return": total, "steps": steps,
           "wall_s": time.perf_counter() - t0, "world_fp": world_fp}
    log = info["episode_log"]
    fin = ~np.isnan(log.finish_s)
    out["jct_s"] = (log.finish_s - log.arrival_s)[fin].tolist()
    if keep_log:
        out["log"] = log
    if keep_jobs:
        out["jobs"] = job_table(log)
    env.close()
    return out


def failure_record(task: SweepTask, exc: BaseException | str, trace: str) -> dict[str, Any]:
    """The failure record ``{policy, scenario, seed, error, traceback}`` of ``task`` (``exc``:
    what was raised, or a description of how the episode ended)."""
    policy_spec, scenario, seed, _ = task
    error = exc if isinstance(exc, str) else error_text(exc)
    try:
        fp = policy_fingerprint(policy_spec)
    except OSError:                              # an agent file removed meanwhile
        fp = "unknown"
    return {"policy": policy_spec.label, "scenario": scenario, "seed": seed,
            "error": error, "traceback": trace, "_policy_fp": fp}


def run_task(task: SweepTask, per_job: bool = False,
             decision_budget_s: float | None = DEFAULT_BUDGET_S) -> dict[str, Any]:
    """Run one episode of a sweep (a :func:`sweep_tasks` entry) with one BLAS/OpenMP thread.
    An outside policy (a code file or a policy object) that spends longer than
    ``decision_budget_s`` on one decision fails its episode
    (:mod:`~mrsched_gym.policy.decision_budget`; None: no budget).

    Returns its record (with ``per_job``, the episode's job table under ``_jobs``), or, if
    anything fails, a failure record ``{policy, scenario, seed, error, traceback}`` — the sweep
    goes on (a policy whose code raised at import or construction, a ``"failed"`` spec, fails
    every episode so, with ``phase`` ``"import"`` or ``"construction"``, and nothing runs).
    Anything counts, ``BaseException`` included (a policy's ``sys.exit()``), except a real
    interrupt (:func:`~mrsched_gym.processes.lifecycle.interrupt_is_real`), which ends the sweep.
    """
    from threadpoolctl import threadpool_limits
    policy_spec, scenario, seed, env_kwargs = task
    if policy_spec.failure is not None:          # its code raised at import or construction
        phase, error, trace = policy_spec.failure
        return {**failure_record(task, error, trace), "phase": phase}
    # a policy object runs here, under the watchdog; a code policy in its own process, whose
    # budget its ProcessPolicy keeps
    budget = decision_budget_s if policy_spec.kind == "object" else None
    try:
        with threadpool_limits(limits=1), no_process_exit():
            policy = make_policy(policy_spec, decision_budget_s)
            with decision_watchdog(budget, policy_spec.label, play_episode.__code__):
                res = run_episode(scenario, policy, seed, env_kwargs, keep_jobs=per_job)
    except BaseException as e:                 # noqa: BLE001 (recorded, with its traceback)
        if is_real_interrupt(e):
            raise                                # a real interrupt ends the run
        if isinstance(e, RemoteFailure):         # the policy process's traceback and phase
            return {**failure_record(task, e, e.trace), "phase": e.phase}
        record = failure_record(task, e, traceback.format_exc())
        if isinstance(e, PolicyLoadError):
            record["phase"] = e.phase
        return record
    rec = {"policy": policy_spec.label, "scenario": scenario, "seed": seed,
           "steps": res["steps"], "return": res["return"], "wall_s": res["wall_s"]}
    rec.update(res["metrics"])
    seen = getattr(policy, "observation", None)     # an agent on a flat observation says which
    if isinstance(seen, str):
        rec["observation"] = seen
    rec["_jct_s"] = res["jct_s"]
    if per_job:
        rec["_jobs"] = res["jobs"]
    rec["_policy_fp"] = policy_fingerprint(policy_spec)
    rec["_world_fp"] = res["world_fp"]
    return rec
