"""Learning with and without the trainer's ``input_driven`` option, same budget.

    python research/tools/input_driven_curve.py --variant plain --seed 0 --out runs/input_driven
    python research/tools/input_driven_curve.py --variant baseline --seed 0 --out runs/input_driven
    python research/tools/input_driven_curve.py --variant full --seed 0 --out runs/input_driven

Trains ``hadoop_set`` from scratch (``numerics: fast``, 4 envs, ``n_steps`` 512, learning rate
3e-4 decayed linearly, 49,152 steps) with: ``plain`` (GAE), ``baseline`` (``input_driven:
{rollouts_per_input: 2}``) or ``full`` (the same with the differential reward and a curriculum
of 1800 s + 60 s per episode), validating on seeds 500-509 every 16,384 steps beside EDF, and
prints the learning curve (docs/notes/agents.md, "Variance reduction for input-driven
environments").
"""

from __future__ import annotations

import argparse

VARIANTS = {
    "plain": None,
    "baseline": {"rollouts_per_input": 2},
    "full": {"rollouts_per_input": 2, "differential_reward": True, "curriculum_start_s": 1800.0,
             "curriculum_growth_s": 60.0},
}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--variant", choices=sorted(VARIANTS), required=True)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--steps", type=int, default=49_152)
    p.add_argument("--out", default="runs/input_driven")
    args = p.parse_args()
    import torch
    torch.set_num_threads(1)
    from mrsched_gym.agents.training.train import load_config, train
    kw = dict(name=f"{args.variant}_s{args.seed}", seed=args.seed, total_timesteps=args.steps,
              n_envs=4, tensorboard=False, numerics="fast",
              **{"ppo.n_steps": 512, "ppo.batch_size": 512, "ppo.learning_rate": 0.0003,
                 "eval.n_seeds": 10, "eval.seed_start": 500, "eval.every_steps": 16384,
                 "eval.baselines": ["edf"]})
    if VARIANTS[args.variant] is not None:
        kw["input_driven"] = VARIANTS[args.variant]
    res = train(load_config("hadoop_set", **kw), args.out, progress=False, overwrite=True)
    for h in res["history"]:
        print(f"step {h['step']:7d}  validation mean {h['mean']:.3f} +- {h['ci95']:.3f}")
    print("baselines:", res["baselines"])


if __name__ == "__main__":
    main()
