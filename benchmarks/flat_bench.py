"""The flat variants' cost per step against their base ids, side by side in one process
(``python benchmarks/bench.py --flat``).

For each id the same episodes run through both: the variant plays action 0 (the most urgent
choice) and records the base action it played; the base id replays those actions. Rounds
alternate base / variant; each round times the whole loop (``env.step`` of what
``gym.make`` gives, with its wrappers) in CPU seconds, and the figure is the median per-step
time and the median of the rounds' ratios variant / base.
"""

from __future__ import annotations

import statistics
import time

import gymnasium as gym

import mrsched_gym  # noqa: F401
from mrsched_gym.flat import flat_id

IDS = ("mrsched/Hadoop-v0", "mrsched/Admission-v1", "mrsched/Preemption-v0",
       "mrsched/Stragglers-v0")


def played_actions(env_id: str, seeds) -> list[list[int]]:
    env = gym.make(flat_id(env_id))
    out = []
    for s in seeds:
        env.reset(seed=s)
        acts, done = [], False
        while not done:
            _, _, te, tr, info = env.step(0)
            acts.append(info["played_action"])
            done = te or tr
        out.append(acts)
    return out


def timed_loop(env, seeds, actions) -> tuple[float, int]:
    steps = 0
    t = time.process_time()
    for s, acts in zip(seeds, actions, strict=True):
        env.reset(seed=s)
        for a in acts:
            env.step(a)
        steps += len(acts)
    return time.process_time() - t, steps


def bench_flat(ids=IDS, rounds: int = 5, seeds=(0, 1)) -> list[dict]:
    rows = []
    for env_id in ids:
        acts = played_actions(env_id, seeds)
        zeros = [[0] * len(a) for a in acts]
        base, flat = gym.make(env_id), gym.make(flat_id(env_id))
        b_us, f_us, ratios = [], [], []
        for _ in range(rounds):
            tb, n = timed_loop(base, seeds, acts)
            tf, _ = timed_loop(flat, seeds, zeros)
            b_us.append(1e6 * tb / n)
            f_us.append(1e6 * tf / n)
            ratios.append(tf / tb)
        rows.append({"env": env_id, "steps": n, "base_us_per_step": statistics.median(b_us),
                     "flat_us_per_step": statistics.median(f_us),
                     "ratio": statistics.median(ratios), "ratio_min": min(ratios),
                     "ratio_max": max(ratios), "rounds": rounds})
    return rows


def print_rows(rows: list[dict]) -> None:
    print(f"flat variant vs base id, same episodes, {rows[0]['rounds']} alternating rounds "
          f"(CPU time, medians; ratio min-max over the rounds)")
    print(f"{'id':24s} {'steps':>6s} {'base us/step':>12s} {'flat us/step':>12s} "
          f"{'flat / base':>11s} {'(min-max)':>11s}")
    for r in rows:
        print(f"{r['env']:24s} {r['steps']:6d} {r['base_us_per_step']:12.1f} "
              f"{r['flat_us_per_step']:12.1f} {r['ratio']:10.3f}x "
              f"({r['ratio_min']:.3f}-{r['ratio_max']:.3f})")
