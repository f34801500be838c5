"""Train SB3's default PPO("MlpPolicy") (no action mask) on a flat variant and score it on the
test seeds: the measurements of docs/guide/train.md, "Without an action mask".

    python research/tools/flat_ppo.py --env mrsched/Hadoop-flat-v0 --steps 50000 --seed 0
    python research/tools/flat_ppo.py --order base ...   # the base candidate order, to compare
    python research/tools/flat_ppo.py --algo a2c ...
    python research/tools/flat_ppo.py --overflow clip ...  # a >= m plays choice m - 1

Prints one JSON line: the PPO seed, steps, seconds, the mean headline over the seeds, and the
share of the scored decisions whose action was m or more (folded, or with ``--overflow clip``
clipped).
"""

import argparse
import json
import time

import gymnasium as gym
import numpy as np
import torch

import mrsched_gym  # noqa: F401  (registers the ids)


class Clipped(gym.Wrapper):
    """The flat variant with action ``a >= m`` played as the last choice ``m - 1`` (clipped)
    instead of choice ``a mod m`` (folded); ``info["folded"]`` then says it was clipped."""

    def reset(self, **kwargs):
        obs, info = self.env.reset(**kwargs)
        self.m = len(info["choices"])
        return obs, info

    def step(self, action):
        a = int(action)
        obs, reward, terminated, truncated, info = self.env.step(min(a, self.m - 1))
        info["folded"] = a >= self.m
        self.m = len(info.get("choices", ())) or 1
        return obs, reward, terminated, truncated, info


def make(env_id: str, order: str, overflow: str):
    env = gym.make(env_id, order=order)
    return Clipped(env) if overflow == "clip" else env


def score(model, env_id: str, seeds, order: str, overflow: str) -> tuple[list[float], float]:
    out, folded, n = [], 0, 0
    for s in seeds:
        env = make(env_id, order, overflow)
        obs, info = env.reset(seed=s)
        done = False
        while not done:
            action, _ = model.predict(obs, deterministic=True)
            obs, _, terminated, truncated, info = env.step(action)
            folded += bool(info["folded"])
            n += 1
            done = terminated or truncated
        out.append(info["metrics"][env.unwrapped.headline_metric])
    return out, folded / max(n, 1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--env", default="mrsched/Hadoop-flat-v0")
    ap.add_argument("--steps", type=int, default=50_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--order", default="urgency", choices=("urgency", "base"))
    ap.add_argument("--algo", default="ppo", choices=("ppo", "a2c"))
    ap.add_argument("--overflow", default="fold", choices=("fold", "clip"),
                    help="how an action past the choices is played (the variants fold)")
    ap.add_argument("--save", default=None, help="save the model to this .zip")
    a = ap.parse_args()
    torch.set_num_threads(1)
    from stable_baselines3 import A2C, PPO
    algo = {"ppo": PPO, "a2c": A2C}[a.algo]
    env = make(a.env, a.order, a.overflow)
    model = algo("MlpPolicy", env, seed=a.seed, device="cpu")
    t = time.process_time()
    model.learn(a.steps)
    secs = time.process_time() - t
    if a.save:
        model.save(a.save)
    scores, folded = score(model, a.env, range(5), a.order, a.overflow)
    print(json.dumps({"env": a.env, "algo": a.algo, "order": a.order,
                      "overflow": a.overflow, "folded_share": round(folded, 4), "seed": a.seed,
                      "steps": a.steps, "cpu_s": round(secs, 1),
                      "mean": round(float(np.mean(scores)), 3),
                      "per_seed": [round(x, 3) for x in scores]}), flush=True)


if __name__ == "__main__":
    main()
