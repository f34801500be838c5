"""Public checkers: simulator invariants, determinism and common random numbers.

Used by the project's own tests and available to users who extend the simulator or write
scenarios (``from mrsched_gym.testing import check_invariants``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np

from mrsched_gym.sim.cluster import reservation, shuffling
from mrsched_gym.sim.engine import Simulator
from mrsched_gym.sim.events import EventKind
from mrsched_gym.sim.state import FINISHED, MAP, REDUCE, RUNNING, SUSPENDED

_TOL = 1e-6
_CLEANUP_END = int(EventKind.CLEANUP_END)


def check_invariants(sim: Simulator) -> None:
    """Assert the simulator's state is consistent (raises ``AssertionError`` naming the breach).

    * no over-commit: used slots within the node's slots (slots mode) and reservations within
      capacity (containers mode); down nodes hold nothing;
    * slot accounting: used slots = running tasks + pending clean-ups per node and phase;
    * clean-ups: a down node holds none, and each pending one has its own queued end event
      from the node's current stay (one begun before the node last left ends nothing);
    * every running task is on its node's list, progresses at a non-negative rate and has
      remaining work within [floor, work];
    * speculative copies: a task and its copy are each other's twin, both running, the same
      map or reduce of the same job, on different nodes;
    * jobs: counters add up (done + running + pending + suspended = tasks, a task running twice
      counted once), reduces finish only after all maps, finished jobs finished every task;
    * time is finite and not beyond the time limit.
    """
    assert math.isfinite(sim.now) and sim.now <= sim.scenario.time_limit_s + _TOL, sim.now
    running_by_node = [[0, 0] for _ in range(sim.n_nodes)]
    doubled = [[0, 0] for _ in sim.jobs]          # tasks of a job running as two attempts
    for t in sim.running.values():
        assert t.state == RUNNING, f"task {t.tid} in running has state {t.state}"
        assert t in sim.tasks_on[t.node], f"task {t.tid} missing from node {t.node}"
        assert t.rate >= 0, f"task {t.tid} negative rate"
        # projected progress (a reduce waiting for map output stalls at its floor)
        rem = max(t.remaining - t.rate * (sim.now - t.t_last), t.floor)
        assert rem >= -1e-6 * max(1.0, t.work), f"task {t.tid} overran its end ({rem})"
        assert t.remaining >= t.floor - 1e-9 * max(1.0, t.work), f"task {t.tid} below floor"
        assert t.remaining <= t.work + _TOL, (t.tid, t.remaining, t.work)
        running_by_node[t.node][t.phase] += 1
        if t.twin is not None:
            c = t.twin
            assert c.twin is t and c.state == RUNNING and c.tid in sim.running, f"twin of {t.tid}"
            assert (c.job, c.phase, c.idx) == (t.job, t.phase, t.idx) and c.node != t.node, \
                f"task {t.tid} and its copy {c.tid} differ"
            doubled[t.job.jid][t.phase] += t.tid < c.tid      # (each pair once)
    cleanup_ends = [0] * sim.n_nodes            # queued clean-up ends of each node's stay
    for _, kind, _, a, b in sim.queue.heap:
        if kind == _CLEANUP_END and b == sim.departures[a]:
            cleanup_ends[a] += 1
    for n in range(sim.n_nodes):
        assert len(sim.tasks_on[n]) == sum(running_by_node[n]), f"node {n} task list mismatch"
        if not sim.up[n]:
            assert not sim.tasks_on[n] and not sim.susp_on[n], f"down node {n} holds tasks"
            assert not sim.cleanups[n], f"down node {n} holds clean-ups"
        assert cleanup_ends[n] == len(sim.cleanups[n]), \
            f"node {n}: {len(sim.cleanups[n])} clean-ups, {cleanup_ends[n]} end events"
        if sim.slots_mode:
            cm = sum(1 for ph, _ in sim.cleanups[n] if ph == MAP)
            cr = len(sim.cleanups[n]) - cm
            assert sim.used_map[n] == running_by_node[n][MAP] + cm, f"node {n} map slots"
            assert sim.used_red[n] == running_by_node[n][REDUCE] + cr, f"node {n} reduce slots"
            assert 0 <= sim.used_map[n] <= sim.map_slots[n], f"node {n} map over-commit"
            assert 0 <= sim.used_red[n] <= sim.red_slots[n], f"node {n} reduce over-commit"
        else:
            r = sim.res[n]
            assert r[0] >= -_TOL and r[1] >= -_TOL and r[2] >= -_TOL, f"node {n} negative"
            # each running task holds its phase's reservation (a reducer its shuffle one until
            # its job's maps are done), clean-ups a whole task's
            held = [reservation(t.phase, t.job.type_idx, shuffling(t)) for t in sim.tasks_on[n]]
            held += [reservation(ph, ti) for ph, ti in sim.cleanups[n]]
            for k in range(3):
                assert abs(r[k] - sum(h[k] for h in held)) <= _TOL, f"node {n} reservation {k}"
            # capacity may shrink below what is reserved (then tasks slow down), and reducers
            # switching to their reduce reservation may overbook a node (thesis 4.2.5); new
            # launches are only offered where they fit, which the candidate check enforces
            grown = [sum(reservation(REDUCE, t.job.type_idx)[k]
                         - reservation(REDUCE, t.job.type_idx, True)[k]
                         for t in sim.tasks_on[n] if t.phase == REDUCE and not shuffling(t))
                     for k in range(3)]
            assert r[1] <= 1.0 + grown[1] + _TOL and r[2] <= 1.0 + grown[2] + _TOL, \
                f"node {n} container over-commit"
        for t in sim.susp_on[n]:
            assert t.state == SUSPENDED and t.node == n
        for t in sim.readers[n]:
            assert t.state == RUNNING and t.src == n and t.node != n, f"reader list of {n}"
            assert sim.up[n], f"down node {n} serves reads"
    for job in sim.jobs:
        susp_m = sum(1 for t in job.susp if t.phase == MAP)
        susp_r = len(job.susp) - susp_m
        two = doubled[job.jid]
        assert (job.maps_done + job.maps_running - two[MAP] + job.pending_maps + susp_m
                == job.n_maps), f"job {job.jid} map accounting"
        assert (job.reduces_done + job.reduces_running - two[REDUCE] + job.pending_reduces
                + susp_r == job.n_reduces), f"job {job.jid} reduce accounting"
        if job.reduces_done:
            assert job.maps_done == job.n_maps, f"job {job.jid} reduce finished before maps"
        if job.state == FINISHED:
            assert job.tasks_done == job.n_maps + job.n_reduces, f"job {job.jid} finished early"
            assert job.finish_s >= job.arrival_s - _TOL
        # conservation of work: the job's completed work is exactly its completed tasks' work
        done_maps = sum(w for w, st in zip(job.map_work, job.map_state, strict=False) if st == 2)
        open_reds = set(job.red_stack) | {t.idx for t in job.running_reduces} | {
            t.idx for t in job.susp if t.phase == REDUCE}
        done_reds = sum(w for i, w in enumerate(job.reduce_work) if i not in open_reds)
        assert abs(job.work_done - done_maps - done_reds) <= 1e-6 * max(1.0, job.total_work), \
            f"job {job.jid} work not conserved"
        assert len(open_reds) + job.reduces_done == job.n_reduces, f"job {job.jid} reduce ids"
    assert sim.wasted_s >= 0 and sim.swap_s >= 0


def check_task_log(sim: Simulator) -> None:
    """Every task of a finished job completed exactly once, and only after it started.

    Also checks reduce-after-map (a job's reduces finish after its last map) and that segments
    are well-formed (start <= end).
    """
    done: dict[tuple[int, int], int] = {}
    last_map_end: dict[int, float] = {}
    for start, end, jid, _node, phase, outcome in sim.task_log:
        assert start <= end + _TOL, (start, end)
        if outcome == "done":
            done[(jid, phase)] = done.get((jid, phase), 0) + 1
            if phase == MAP:
                last_map_end[jid] = max(last_map_end.get(jid, -math.inf), end)
    for _start, end, jid, _node, phase, outcome in sim.task_log:
        if outcome == "done" and phase == REDUCE:
            assert end >= last_map_end.get(jid, math.inf) - _TOL, f"job {jid} reduce before maps"
    for job in sim.jobs:
        assert done.get((job.jid, MAP), 0) == job.maps_done, f"job {job.jid} map log"
        assert done.get((job.jid, REDUCE), 0) == job.reduces_done, f"job {job.jid} reduce log"


def rollout(env: gym.Env, policy: Callable[[gym.Env, Any], int], seed: int,
            max_steps: int = 10_000) -> list[tuple]:
    """Run one episode; returns ``[(obs, reward, terminated, truncated, info), ...]``.

    ``info["episode_log"]`` is dropped so records compare with ``==``-style helpers.
    """
    obs, info = env.reset(seed=seed)
    out = [(obs, 0.0, False, False, info)]
    for _ in range(max_steps):
        obs, r, term, trunc, info = env.step(policy(env, obs))
        info = {k: v for k, v in info.items() if k != "episode_log"}
        out.append((obs, r, term, trunc, info))
        if term or trunc:
            break
    return out


def first_legal(env: gym.Env, obs: Any) -> int:
    """A policy: the first legal action (FIFO-like)."""
    return int(np.flatnonzero(env.unwrapped.action_masks())[0])


def random_legal(seed: int) -> Callable[[gym.Env, Any], int]:
    """A policy: uniform over the actions the env's mask offers (skip where the mask offers it:
    see the env's ``allow_idle``), from its own generator."""
    rng = np.random.default_rng(seed)

    def policy(env: gym.Env, obs: Any) -> int:
        return int(rng.choice(np.flatnonzero(env.unwrapped.action_masks())))

    return policy


def assert_same_record(a: Any, b: Any, path: str = "") -> None:
    """Deep equality of rollout records (arrays compared exactly, NaN == NaN)."""
    if isinstance(a, dict):
        assert isinstance(b, dict) and a.keys() == b.keys(), f"{path}: keys differ"
        for k in a:
            assert_same_record(a[k], b[k], f"{path}.{k}")
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), f"{path}: lengths differ"
        for i, (x, y) in enumerate(zip(a, b, strict=False)):
            assert_same_record(x, y, f"{path}[{i}]")
    elif isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and a.shape == b.shape, f"{path}: array meta differ"
        assert a.tobytes() == b.tobytes(), f"{path}: arrays differ"
    elif isinstance(a, float) and math.isnan(a):
        assert isinstance(b, float) and math.isnan(b), f"{path}: {a} != {b}"
    else:
        assert a == b, f"{path}: {a!r} != {b!r}"


def world_fingerprint(sim: Simulator) -> dict[str, np.ndarray]:
    """What must be identical for two policies on one seed: jobs, task work, replicas, timelines."""
    jobs = sim.jobs
    return {
        "arrival": np.array([j.arrival_s for j in jobs]),
        "deadline": np.array([j.deadline_s for j in jobs]),
        "map_work": np.concatenate([np.asarray(j.map_work) for j in jobs]) if jobs else np.zeros(0),
        "reduce_work": np.concatenate([np.asarray(j.reduce_work) for j in jobs] + [np.zeros(0)]),
        "replicas": np.concatenate([j.replicas for j in jobs]) if jobs else np.zeros((0, 1)),
        "load": np.asarray(sim.load_u),
        "avail": np.asarray(sim.avail_f),
        "forecast": np.asarray(sim.forecast_f),
        "node_up": np.asarray(sim.node_up) if sim.node_up is not None else np.zeros(0),
    }
