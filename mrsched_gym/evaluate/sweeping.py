"""Many episodes: :func:`evaluate` (policies x scenarios x seeds, common random numbers),
:func:`sweep_tasks` (every input checked before the first episode), the reuse of finished
records on resume, and :func:`run_parallel` (worker processes with a progress bar; a worker that
dies fails its episode, named, and the sweep goes on)."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

import numpy as np

from mrsched_gym.errors import InputError
from mrsched_gym.evaluate.agent_kinds import agent_kinds
from mrsched_gym.evaluate.pinning import WorldPins
from mrsched_gym.evaluate.policy_specs import (
    PolicySpec,
    check_policy,
    make_policy,
    policy_fingerprint,
    unique_labels,
)
from mrsched_gym.evaluate.running import (
    SweepTask,
    failure_record,
    make_env,
    run_task,
    scenario_of,
)
from mrsched_gym.policy.decision_budget import DEFAULT_BUDGET_S, check_budget
from mrsched_gym.results import EpisodeFailures, check_record, json_safe, task_key

Record = dict[str, Any]
_T = TypeVar("_T")
_R = TypeVar("_R")


def reusable_records(tasks: Sequence[SweepTask], done: Sequence[Record],
                     per_job: bool = False, worlds: dict[str, str] | None = None
                     ) -> dict[tuple[str, str, int], Record]:
    """The records of ``done`` that a sweep of ``tasks`` may reuse, keyed by (policy,
    scenario, seed): finished episodes' records that pass
    :func:`~mrsched_gym.results.check_record` (NaN: undefined, as null in a journal), of the
    same policy fingerprint, of the sweep's
    world (``worlds``: scenario -> the world fingerprint its episodes must carry,
    :class:`~mrsched_gym.evaluate.pinning.WorldPins`; ``None``: not checked) and, with
    ``per_job``, carrying their job table."""
    fps = {t[0].label: policy_fingerprint(t[0]) for t in tasks}
    return {task_key(r): r for r in done
            if check_record(json_safe(r)) is None and "error" not in r
            and r.get("_policy_fp") == fps.get(r["policy"])
            and (worlds is None or r.get("_world_fp") == worlds.get(r["scenario"]))
            and (not per_job or "_jobs" in r)}


def pinned_reusable(tasks: Sequence[SweepTask], done: Sequence[Record], per_job: bool,
                    env_kwargs: dict[str, Any] | None
                    ) -> tuple[WorldPins, dict[tuple[str, str, int], Record]]:
    """A sweep's :class:`WorldPins` (every scenario's world, fixed at its start) and the records
    of ``done`` it reuses (:func:`reusable_records` of those worlds)."""
    pins = WorldPins(list(dict.fromkeys(t[1] for t in tasks)), env_kwargs, make_env)
    return pins, reusable_records(tasks, done, per_job, pins.expected)


def collect_records(tasks: Sequence[SweepTask],
                    finished: dict[tuple[str, str, int], Record]) -> list[Record]:
    """The records of ``tasks`` in task order; raises :class:`EpisodeFailures` (holding the
    others) if any episode failed."""
    ordered = [finished[(t[0].label, t[1], t[2])] for t in tasks]
    failures = [r for r in ordered if "error" in r]
    records = [r for r in ordered if "error" not in r]
    if failures:
        raise EpisodeFailures(records, failures)
    return records


def evaluate(policies: Sequence[Any], scenarios: Sequence[str],
             seeds: Iterable[int], workers: int | None = None, progress: bool = True,
             env_kwargs: dict[str, Any] | None = None, done: Sequence[Record] = (),
             on_result: Callable[[Record], object] | None = None,
             per_job: bool = False,
             decision_budget_s: float | None = DEFAULT_BUDGET_S) -> list[Record]:
    """Run every policy on every scenario and seed (common random numbers across policies).

    Args:
        policies: Policy strings or specs (see :func:`parse_policy`), or policy objects (the
            contract of :mod:`mrsched_gym.policy.contract`; labelled by their ``name`` attribute,
            else their class name). An object is pickled once and every episode runs on a fresh copy
            of it (in a worker process, or here with ``workers=1``); one that does not pickle runs
            its episodes in this process, each on a deep copy
            (:mod:`mrsched_gym.policy.policy_files`).
        scenarios: Env ids, bundled scenario names or YAML paths.
        seeds: Episode seeds.
        workers: Processes (default: the machine's cores; 1 = in this process). With 2 or
            more, episodes always run in worker processes, even when there is only one: a
            policy that ends its process (a signal, ``ctypes``, a crash in C) fails its
            episodes, named, never the run.
        progress: Show a progress bar (tqdm) on stderr.
        env_kwargs: Scenario overrides applied to every run.
        done: Records of episodes already finished (e.g. from a journal): not run again when
            the same policy (same parameters; for an agent, the same checkpoint file and bytes;
            for a code policy, the same source file bytes; for an object, the same pickle and
            class source) ran them in the same world (the record's world fingerprint), and the
            record passes :func:`~mrsched_gym.results.check_record`; any other runs again.
            Every scenario's env is built once at the start to take its fingerprint (its
            traces read), even one whose episodes are all done.
        on_result: Called with each record (or failure record) the moment it finishes. A
            record of an episode whose scenario or trace file changed since the sweep started
            (:mod:`~mrsched_gym.evaluate.pinning`) is a failure record.
        per_job: Keep every episode's job table (:func:`~mrsched_gym.env.metrics.job_table`)
            under ``_jobs``; :func:`write_results` writes it as ``jobs.csv``.
        decision_budget_s: Seconds an outside policy (a code file or a policy object) may
            spend on one decision or its ``reset``; beyond it that episode fails as the
            policy's (:mod:`~mrsched_gym.policy.decision_budget`; None: no budget). Built-in
            baselines and agents have none.

    Returns:
        One record per (policy, scenario, seed), sorted in that order: ``policy``, ``scenario``,
        ``seed``, ``steps``, ``return``, ``wall_s`` and every metric by name (plus the
        finished jobs' completion times under ``_jct_s``, and ``_jobs`` with ``per_job``; the
        ``_`` fields are left out of ``records.json`` and ``records.csv``).

    Raises:
        EpisodeFailures: After every episode ran, if some failed (it holds the records of the
            others and the failures).
    """
    decision_budget_s = check_budget(decision_budget_s)
    tasks = sweep_tasks(policies, scenarios, seeds, env_kwargs)
    pins, finished = pinned_reusable(tasks, done, per_job, env_kwargs)
    todo = [t for t in tasks if (t[0].label, t[1], t[2]) not in finished]

    def pinned(r: Record) -> Record:
        """The record, checked against the files' versions at the sweep's start (journaled
        and kept as checked)."""
        r = pins.check(r)
        if on_result is not None:
            on_result(r)
        return r
    fn = functools.partial(run_task, per_job=per_job, decision_budget_s=decision_budget_s)
    here = [t for t in todo if in_process_only(t[0])]       # objects that do not pickle
    pooled = [t for t in todo if not in_process_only(t[0])]
    isolate = (workers or os.cpu_count() or 1) > 1            # asked for: even for one task
    for r in run_parallel(fn, pooled, workers, progress, "episodes", pinned, worker_died,
                          isolate=isolate):
        r = pins.check(r)
        finished[task_key(r)] = r
    for r in (run_parallel(fn, here, 1, progress, "episodes (in this process)", pinned)
              if here else ()):                       # no empty progress bar
        r = pins.check(r)
        finished[task_key(r)] = r
    return collect_records(tasks, finished)


def worker_died(task: SweepTask, how: str) -> Record:
    """The failure record of an episode whose worker process died (:func:`run_parallel`)."""
    return failure_record(task, f"WorkerDied: the worker process running this episode {how} "
                          f"(the policy's code ended its process: os._exit, a signal or a "
                          f"crash in a C extension; its phase is not known); the other "
                          f"episodes went on in a fresh worker",
                          f"No Python traceback: the worker process running this episode "
                          f"{how} without raising a Python exception, so where it stopped "
                          f"(import, construction, reset or a decision) is not known.\n")


def in_process_only(spec: PolicySpec) -> bool:
    """Whether ``spec`` is a policy object that does not pickle, so its episodes run in the
    process that holds it."""
    return spec.kind == "object" and spec.payload is None


def sweep_tasks(policies: Sequence[Any], scenarios: Sequence[str],
                seeds: Iterable[int], env_kwargs: dict[str, Any] | None = None
                ) -> list[SweepTask]:
    """The :func:`run_task` arguments of a sweep, in record order (policy, scenario, seed), after
    checking every scenario, policy and seed: a bad one fails before anything runs. Policy labels
    are unique (two checkpoints with the same file name are labelled by their paths)."""
    seed_list = list(seeds)
    if not seed_list:
        raise InputError("seeds: at least one seed is needed")
    for sd in seed_list:
        if isinstance(sd, bool) or not isinstance(sd, (int, np.integer)) or sd < 0:
            raise InputError(f"seeds: every seed must be an integer >= 0, got {sd!r}")
    if len(set(seed_list)) != len(seed_list):
        raise InputError(f"seeds: repeated seeds in {seed_list}")
    for s in scenarios:
        scenario_of(s)
    specs = unique_labels([check_policy(p) for p in policies])
    for sp in specs:
        check_agent_fits(sp, scenarios, env_kwargs)
    return [(sp, sc, int(sd), env_kwargs) for sp in specs for sc in scenarios
            for sd in seed_list]


def check_agent_fits(spec: PolicySpec, scenarios: Sequence[str],
                     env_kwargs: dict[str, Any] | None = None) -> None:
    """Check that an agent checkpoint can act in every scenario, so a sweep with one that
    cannot fails before any episode runs: an SB3 checkpoint's algorithm and, for a flat
    network, its input shapes; an RLlib checkpoint's module (the set module runs on any
    cluster); an outside policy's own ``check_fits`` if it has one (an SB3 model object's
    observation space); an agent's numpy weights (``.npz``): every key, shape, dtype and
    weight, and their input widths against each scenario's observations. Baselines pass."""
    if spec.kind not in ("code", "object"):
        kind = agent_kinds().get(spec.kind)
        if kind is not None and kind.check_fits is not None:
            kind.check_fits(spec, scenarios, env_kwargs)
        return
    agent = make_policy(spec)
    if hasattr(agent, "check_fits"):
        check_fits_in(agent, spec.label, scenarios, env_kwargs)


def check_fits_in(agent: Any, label: str, scenarios: Sequence[str],
                  env_kwargs: dict[str, Any] | None) -> None:
    """``agent.check_fits(observation_space, where)`` on each scenario's env, an
    :class:`~mrsched_gym.errors.InputError` naming the policy ``label`` if it does not fit."""
    for sc in scenarios:
        env = make_env(sc, env_kwargs)
        try:
            agent.check_fits(env.observation_space, f"scenario {sc!r}")
        except InputError as e:
            raise InputError(f"policy {label!r}: {e}") from None
        finally:
            env.close()


def run_parallel(fn: Callable[[_T], _R], tasks: Sequence[_T], workers: int | None = None,
                 progress: bool = True, desc: str = "episodes",
                 on_result: Callable[[_R], object] | None = None,
                 on_death: Callable[[_T, str], _R] | None = None,
                 isolate: bool = False) -> list[_R]:
    """``[fn(t) for t in tasks]`` in task order, over fork worker processes (``workers``,
    default the machine's cores; 1 = in this process, unless ``isolate``: then one worker
    process, as when one task is left for 2 or more workers) with a tqdm bar on stderr;
    ``on_result(r)`` is called as each result arrives (in task order).

    A worker process that dies (``os._exit``, a signal, a segfault) is detected at once
    (:func:`~mrsched_gym.processes.workers.pool_results`): its task's result is ``on_death(task,
    how)`` and the run carries on with a fresh worker; without ``on_death`` the run ends with
    :class:`~mrsched_gym.processes.workers.WorkerDied` naming the task.
    """
    workers = min(workers or os.cpu_count() or 1, len(tasks)) or 1
    from tqdm.auto import tqdm
    out: list[_R] = []
    with tqdm(total=len(tasks), desc=desc, disable=not progress, unit="ep") as bar:
        if workers <= 1 and not (isolate and tasks):
            for t in tasks:
                out.append(fn(t))
                if on_result is not None:
                    on_result(out[-1])
                bar.update()
            return out
        from mrsched_gym.processes.workers import pool_results
        for r in pool_results(fn, tasks, workers, on_death):
            out.append(r)
            if on_result is not None:
                on_result(r)
            bar.update()
    return out
