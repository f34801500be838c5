"""Train SB3's default PPO("MlpPolicy") (no action mask) on a flat variant and score it on the
test seeds: the measurements of docs/guide/train.md, "Without an action mask".

    python research/tools/flat_ppo.py --env mrsched/Hadoop-flat-v0 --steps 50000 --seed 0
    python research/tools/flat_ppo.py --order base ...   # the base candidate order, to compare
    python research/tools/flat_ppo.py --algo a2c ...

Prints one JSON line: the PPO seed, steps, seconds, and the mean headline over the seeds.
"""

import argparse
import json
import time

import gymnasium as gym
import numpy as np
import torch

import mrsched_gym  # noqa: F401  (registers the ids)


def score(model, env_id: str, seeds, order: str) -> list[float]:
    out = []
    for s in seeds:
        env = gym.make(env_id, order=order)
        obs, info = env.reset(seed=s)
        done = False
        while not done:
            action, _ = model.predict(obs, deterministic=True)
            obs, _, terminated, truncated, info = env.step(action)
            done = terminated or truncated
        out.append(info["metrics"][env.unwrapped.headline_metric])
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--env", default="mrsched/Hadoop-flat-v0")
    ap.add_argument("--steps", type=int, default=50_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--order", default="urgency", choices=("urgency", "base"))
    ap.add_argument("--algo", default="ppo", choices=("ppo", "a2c"))
    ap.add_argument("--save", default=None, help="save the model to this .zip")
    a = ap.parse_args()
    torch.set_num_threads(1)
    from stable_baselines3 import A2C, PPO
    algo = {"ppo": PPO, "a2c": A2C}[a.algo]
    env = gym.make(a.env, order=a.order)
    model = algo("MlpPolicy", env, seed=a.seed, device="cpu")
    t = time.process_time()
    model.learn(a.steps)
    secs = time.process_time() - t
    if a.save:
        model.save(a.save)
    scores = score(model, a.env, range(5), a.order)
    print(json.dumps({"env": a.env, "algo": a.algo, "order": a.order, "seed": a.seed,
                      "steps": a.steps, "cpu_s": round(secs, 1),
                      "mean": round(float(np.mean(scores)), 3),
                      "per_seed": [round(x, 3) for x in scores]}), flush=True)


if __name__ == "__main__":
    main()
