"""The training guide's first path: sb3-contrib's MaskablePPO with the set network, default
hyperparameters, one torch thread, scored on the test seeds 0-4 with the harness (the table of
docs/guide/train.md, "Start here").

    python research/tools/set_policy_ppo.py --seed 0 --steps 100000 --save set0.zip

Prints one JSON line: the PPO seed, steps, CPU seconds and the mean headline over seeds 0-4.
"""

import argparse
import json
import time

import gymnasium as gym
import numpy as np
import torch
from sb3_contrib import MaskablePPO
from stable_baselines3.common.env_util import make_vec_env
from stable_baselines3.common.vec_env import VecNormalize

import mrsched_gym  # noqa: F401  (registers the ids)
from mrsched_gym.agents import BestOnValidation, SetPolicy
from mrsched_gym.evaluate import evaluate


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--env", default="mrsched/Hadoop-v0")
    ap.add_argument("--steps", type=int, default=100_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--save", required=True)
    ap.add_argument("--policy", default="set", choices=("set", "multiinput"))
    ap.add_argument("--gamma", type=float, default=0.99, help="PPO's discount (SB3's default 0.99)")
    ap.add_argument("--every", type=int, default=0,
                    help="also save and score a checkpoint every this many steps")
    ap.add_argument("--work-conserving", action="store_true",
                    help="SetPolicy(work_conserving=True): no skip while a candidate can run")
    ap.add_argument("--best-every", type=int, default=0,
                    help="keep the best model on the validation seeds 1000-1004 "
                         "(BestOnValidation, scored every this many steps) at SAVE's "
                         "name with _best, and score it on seeds 0-4 too")
    ap.add_argument("--ppo", default="{}",
                    help='other MaskablePPO arguments as JSON, e.g. \'{"ent_coef": 0.01}\'')
    ap.add_argument("--lr-linear", type=float, default=0.0,
                    help="learning_rate=lambda f: X * f (decays linearly to 0 over the run)")
    ap.add_argument("--n-envs", type=int, default=1,
                    help="train on make_vec_env(ENV, n_envs=N) (N > 1: pass n_steps in --ppo)")
    ap.add_argument("--norm-reward", action="store_true",
                    help="wrap the envs in VecNormalize(norm_obs=False, norm_reward=True)")
    ap.add_argument("--val-seeds", type=int, default=5,
                    help="BestOnValidation scores on seeds 1000 .. 1000+N-1")
    a = ap.parse_args()
    torch.set_num_threads(1)
    policy = SetPolicy if a.policy == "set" else "MultiInputPolicy"
    extra = json.loads(a.ppo)
    if a.lr_linear:
        extra["learning_rate"] = lambda f, lr=a.lr_linear: lr * f
    if a.work_conserving:
        extra["policy_kwargs"] = dict(work_conserving=True)
    env = gym.make(a.env) if a.n_envs == 1 and not a.norm_reward else \
        make_vec_env(a.env, n_envs=a.n_envs)
    if a.norm_reward:
        env = VecNormalize(env, norm_obs=False, gamma=a.gamma)
    model = MaskablePPO(policy, env, gamma=a.gamma, seed=a.seed, device="cpu", **extra)
    head = gym.make(a.env).unwrapped.headline_metric
    chunk = a.every or a.steps
    best = None
    if a.best_every:
        best = BestOnValidation(a.env, a.save.replace(".zip", "_best.zip"), every=a.best_every,
                                seeds=range(1000, 1000 + a.val_seeds), verbose=1)
    t = time.process_time()
    done = 0
    while done < a.steps:
        model.learn(min(chunk, a.steps - done), reset_num_timesteps=False, callback=best)
        done = model.num_timesteps
        secs = time.process_time() - t
        path = a.save if done >= a.steps else a.save.replace(".zip", f"_{done}.zip")
        model.save(path)
        recs = evaluate([f"agent:{path}"], [a.env], seeds=range(5), progress=False,
                        workers=1)
        scores = [r[head] for r in recs]
        print(json.dumps({"env": a.env, "policy": a.policy, "wc": a.work_conserving,
                          "ppo": a.ppo, "lr_linear": a.lr_linear, "n_envs": a.n_envs,
                          "norm_reward": a.norm_reward,
                          "seed": a.seed, "steps": done,
                          "cpu_s": round(secs, 1), "mean": round(float(np.mean(scores)), 3),
                          "per_seed": [round(x, 3) for x in scores]}), flush=True)
    if best is not None:
        recs = evaluate([f"agent:{best.best_path}"], [a.env], seeds=range(5), progress=False,
                        workers=1)
        scores = [r[head] for r in recs]
        print(json.dumps({"best_on_validation": True, "seed": a.seed, "steps": done,
                          "cpu_s": round(time.process_time() - t, 1),
                          "best_step": best.best_step, "validation": round(best.best_score, 3),
                          "mean": round(float(np.mean(scores)), 3),
                          "per_seed": [round(x, 3) for x in scores],
                          "history": [[h["step"], round(h["score"], 3)] for h in best.history]}),
              flush=True)


if __name__ == "__main__":
    main()
