"""The training-run table of docs/ray.md: PPO with RLlib's set module on mrsched/Hadoop-v0.

    python research/tools/rllib_set_curve.py --iterations 40 --every 5 \
        [--runners 1] [--address auto]

Trains with :func:`mrsched_gym.ray_backend.rllib_ppo_config` (its defaults: batch 4000 env
steps per iteration) and, every ``--every`` iterations, evaluates the greedy module with the local
harness on the validation seeds 500-504 (mean ``deadline_penalty_h``). Prints one JSON line per
iteration, after a line with the untrained module and the baselines on the same seeds.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

SCENARIO = "mrsched/Hadoop-v0"
SEEDS = range(500, 505)


def validate(policy) -> float:
    """Mean ``deadline_penalty_h`` of ``policy`` on the validation seeds."""
    from mrsched_gym.evaluate import run_episode
    return float(np.mean([run_episode(SCENARIO, policy, s)["metrics"]["deadline_penalty_h"]
                          for s in SEEDS]))


def main() -> None:
    """Run the training and print the curve."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--iterations", type=int, default=40)
    ap.add_argument("--every", type=int, default=5)
    ap.add_argument("--runners", type=int, default=1, help="num_env_runners")
    ap.add_argument("--address", default=None, help="a Ray cluster ('auto'); default: local")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    import torch

    from mrsched_gym.agents.rllib_module import RLlibPolicy
    from mrsched_gym.evaluate import make_policy
    from mrsched_gym.ray_backend import init_ray, rllib_ppo_config
    torch.set_num_threads(1)
    init_ray(address=args.address, num_cpus=None if args.address else args.runners + 1,
             runtime_env={"env_vars": {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}})
    algo = rllib_ppo_config(SCENARIO, num_env_runners=args.runners, seed=args.seed).build_algo()
    head = {b: validate(make_policy(b)) for b in ("edf", "fifo", "random")}
    head["untrained"] = validate(RLlibPolicy(algo.get_module()))
    print(json.dumps({"iteration": 0, "val_penalty_h": head}), flush=True)
    t0 = time.time()
    try:
        for i in range(1, args.iterations + 1):
            r = algo.train()
            rec = {"iteration": i,
                   "env_steps": int(r["env_runners"]["num_env_steps_sampled_lifetime"]),
                   "wall_s": round(time.time() - t0)}
            if i % args.every == 0:
                rec["val_penalty_h"] = validate(RLlibPolicy(algo.get_module()))
            print(json.dumps(rec), flush=True)
    finally:
        algo.stop()


if __name__ == "__main__":
    main()
