"""Vector envs side by side (not a test): N worlds of one id, stepped with a legal random action.

Usage::

    python benchmarks/vector_envs.py                 # N = 8, Hadoop-v0, 5 interleaved rounds
    python benchmarks/vector_envs.py --rounds 3 --steps 500 --train 4096

Rows, each in its own process, in interleaved rounds (round 1: every row, round 2: every row...):

* ``native``: ``gymnasium.make_vec(ID, num_envs=N)``, the native vector env (one process),
  masks from ``action_masks()``;
* ``sync``: the same through Gymnasium's ``SyncVectorEnv`` (``vectorization_mode="sync"``),
  masks from the batched ``info["action_mask"]``;
* ``sb3-dummy``: SB3's ``DummyVecEnv`` (``make_vec_env``), masks by ``env_method``;
* ``sb3-subproc``: SB3's ``SubprocVecEnv`` (N worker processes), masks by ``env_method``, one
  round trip to every worker per step, as sb3-contrib's ``get_action_masks`` asks;
* ``sb3-subproc-kept``: the same wrapped in ``MasksFromInfos``: the masks the workers sent with
  the step.

Each row reports env steps (N per vector step) per CPU-second of its process and its children
(``resource.getrusage``: the subprocess rows' workers count) and per wall-second. With
``--train T``: MaskablePPO (``MultiInputPolicy``, ``n_steps`` 2048 / N, one torch thread)
learning T steps on the SB3 rows, in steps per wall-second and per CPU-second.

The figures in docs/notes/speed.md ("Vector envs") come from this script: state the machine
and the library versions it prints with any figure you quote.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(var, "1")

ROWS = ["native", "sync", "sb3-dummy", "sb3-subproc", "sb3-subproc-kept"]


def cpu_s() -> float:
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def make(row: str, env_id: str, n: int):
    import gymnasium as gym

    import mrsched_gym  # noqa: F401
    if row == "native":
        return gym.make_vec(env_id, num_envs=n)
    if row == "sync":
        return gym.make_vec(env_id, num_envs=n, vectorization_mode="sync")
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv
    if row == "sb3-dummy":
        return make_vec_env(env_id, n_envs=n, vec_env_cls=DummyVecEnv)
    venv = make_vec_env(env_id, n_envs=n, vec_env_cls=SubprocVecEnv,
                        vec_env_kwargs={"start_method": "fork"})
    if row == "sb3-subproc-kept":
        from mrsched_gym.agents.vec_masks import MasksFromInfos
        return MasksFromInfos(venv)
    return venv


def step_rate(row: str, env_id: str, n: int, steps: int) -> dict:
    import numpy as np
    rng = np.random.default_rng(0)
    venv = make(row, env_id, n)
    gymnasium_api = row in ("native", "sync")
    if gymnasium_api:
        _, info = venv.reset(seed=0)
    else:
        venv.seed(0)
        venv.reset()
    c0, w0 = cpu_s(), time.perf_counter()
    for _ in range(steps):
        if row == "native":
            masks = venv.action_masks()
        elif row == "sync":
            masks = info["action_mask"]
        else:
            masks = np.stack(venv.env_method("action_masks"))
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        if gymnasium_api:
            _, _, _, _, info = venv.step(actions)
        else:
            venv.step(actions)
    cpu, wall = cpu_s() - c0, time.perf_counter() - w0
    venv.close()
    return {"row": row, "env_steps_per_cpu_s": steps * n / cpu,
            "env_steps_per_wall_s": steps * n / wall}


def train_rate(row: str, env_id: str, n: int, total: int) -> dict:
    import torch
    torch.set_num_threads(1)
    from sb3_contrib import MaskablePPO
    venv = make(row, env_id, n)
    model = MaskablePPO("MultiInputPolicy", venv, n_steps=max(2048 // n, 8), batch_size=256,
                        seed=0, device="cpu")
    c0, w0 = cpu_s(), time.perf_counter()
    model.learn(total)
    cpu, wall = cpu_s() - c0, time.perf_counter() - w0
    venv.close()
    return {"row": row, "train_steps_per_cpu_s": total / cpu,
            "train_steps_per_wall_s": total / wall}


def child(args: argparse.Namespace) -> None:
    if args.mode == "step":
        out = step_rate(args.row, args.id, args.n, args.steps)
    else:
        out = train_rate(args.row, args.id, args.n, args.train)
    print(json.dumps(out))


def run(args: argparse.Namespace, row: str, mode: str) -> dict:
    cmd = [sys.executable, __file__, "--child", "--row", row, "--mode", mode, "--id", args.id,
           "--n", str(args.n), "--steps", str(args.steps), "--train", str(args.train)]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def versions() -> str:
    import gymnasium
    import numpy
    import sb3_contrib
    import stable_baselines3
    import torch

    import mrsched_gym
    return (f"mrsched-gym {mrsched_gym.__version__} ({mrsched_gym.acceleration()}), gymnasium "
            f"{gymnasium.__version__}, SB3 {stable_baselines3.__version__}, sb3-contrib "
            f"{sb3_contrib.__version__}, torch {torch.__version__}, numpy {numpy.__version__}, "
            f"Python {sys.version.split()[0]}, {os.cpu_count()} cores")


def report(results: dict[str, list[float]], unit: str, base_row: str) -> None:
    """Each row's best round, its range, and its ratio to ``base_row`` round by round."""
    base = results[base_row]
    for row, rates in results.items():
        best, low = max(rates), min(rates)
        line = f"  {row:18s} {best:9.0f} {unit} (rounds {low:.0f}-{best:.0f})"
        if row != base_row:
            ratios = [r / b for r, b in zip(rates, base, strict=True)]
            line += f", x{min(ratios):.2f}-{max(ratios):.2f} vs {base_row}"
        print(line)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--id", default="mrsched/Hadoop-v0")
    p.add_argument("--n", type=int, default=8)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--steps", type=int, default=1000, help="vector steps per row and round")
    p.add_argument("--train", type=int, default=0, help="MaskablePPO steps (0: skip)")
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--row", help=argparse.SUPPRESS)
    p.add_argument("--mode", default="step", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        child(args)
        return
    print(versions())
    print(f"{args.id}, N = {args.n}, {args.steps} vector steps per row, {args.rounds} rounds")
    steps: dict[str, list[float]] = {r: [] for r in ROWS}
    for _ in range(args.rounds):
        for row in ROWS:
            steps[row].append(run(args, row, "step")["env_steps_per_cpu_s"])
    print("env steps per CPU-second (process + workers):")
    report(steps, "steps/CPU-s", "sync")
    kept = [k / s for k, s in zip(steps["sb3-subproc-kept"], steps["sb3-subproc"], strict=True)]
    print(f"  sb3-subproc-kept vs sb3-subproc: x{min(kept):.2f}-{max(kept):.2f} (per round)")
    if args.train:
        train_rows = ["sb3-dummy", "sb3-subproc", "sb3-subproc-kept"]
        wall: dict[str, list[float]] = {r: [] for r in train_rows}
        cpu: dict[str, list[float]] = {r: [] for r in train_rows}
        for _ in range(args.rounds):
            for row in train_rows:
                out = run(args, row, "train")
                wall[row].append(out["train_steps_per_wall_s"])
                cpu[row].append(out["train_steps_per_cpu_s"])
        print(f"MaskablePPO, {args.train} steps: training steps per wall-second:")
        report(wall, "steps/s", "sb3-subproc")
        print("... and per CPU-second (process + workers):")
        report(cpu, "steps/CPU-s", "sb3-subproc")


if __name__ == "__main__":
    main()
