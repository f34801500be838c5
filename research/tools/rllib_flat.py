"""RLlib's default PPO module on a flat variant, scored on the test seeds: docs/ray.md, "The flat
ids".

    python research/tools/rllib_flat.py --iterations 12 [--runners 1] [--seed 0]

Trains :func:`mrsched_gym.ray_backend.rllib_ppo_config` on ``mrsched/Hadoop-flat-v0`` with
``module="mlp"`` (RLlib's default PPO module; the variant's observation is one ``Box`` and every
action is legal, so it needs no mask), then ranks the greedy module on the base id's seeds 0-4
beside ``edf`` with the harness, through :class:`~mrsched_gym.env.flat.FlatPolicy` (the
harness gives every policy the base observation; ``FlatPolicy`` turns it into the variant's
and the variant's action into the base one). Prints one JSON line: iterations, env steps,
wall and CPU seconds of training (the driver and its finished children), and the scores.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import time

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(var, "1")

FLAT_ID = "mrsched/Hadoop-flat-v0"
BASE_ID = "mrsched/Hadoop-v0"


def cpu_s() -> float:
    """CPU seconds of this process and its finished children."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def greedy(module):
    """The greedy action of RLlib ``module`` for one flat observation."""
    import numpy as np
    import torch

    def act(flat_obs) -> int:
        with torch.no_grad():
            out = module.forward_inference({"obs": torch.as_tensor(flat_obs[None])})
        return int(np.argmax(out["action_dist_inputs"][0].numpy()))
    return act


def main() -> None:
    """Train, score, print."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--iterations", type=int, default=12)
    ap.add_argument("--runners", type=int, default=1, help="num_env_runners")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    import numpy as np
    import torch

    from mrsched_gym.env.flat import FlatPolicy
    from mrsched_gym.evaluate import evaluate
    from mrsched_gym.ray_backend import init_ray, rllib_ppo_config
    torch.set_num_threads(1)
    init_ray(num_cpus=args.runners + 1,
             runtime_env={"env_vars": {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}})
    cpu0, t0 = cpu_s(), time.time()
    algo = rllib_ppo_config(FLAT_ID, num_env_runners=args.runners, seed=args.seed,
                            module="mlp").build_algo()
    steps = 0
    for _ in range(args.iterations):
        r = algo.train()
        steps = int(r["env_runners"]["num_env_steps_sampled_lifetime"])
    wall, driver_cpu = time.time() - t0, cpu_s() - cpu0
    policy = FlatPolicy(greedy(algo.get_module()), name="rllib-flat")
    records = evaluate([policy, "edf"], [BASE_ID], seeds=range(5), workers=1, progress=False)
    algo.stop()
    scores: dict[str, list[float]] = {}
    for rec in records:
        scores.setdefault(rec["policy"], []).append(round(rec["deadline_penalty_h"], 3))
    print(json.dumps({"env": FLAT_ID, "iterations": args.iterations, "env_steps": steps,
                      "seed": args.seed, "runners": args.runners,
                      "train_wall_s": round(wall), "driver_cpu_s": round(driver_cpu),
                      "mean": {k: round(float(np.mean(v)), 3) for k, v in scores.items()},
                      "per_seed": scores}), flush=True)


if __name__ == "__main__":
    main()
