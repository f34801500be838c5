"""Fine-tuning under the shipped rules: the variants of docs/notes/agents.md ("Fine-tuning under
the rules"), trained and drawn.

    python research/tools/rules_finetune.py --variant base --out runs/rules
    python research/tools/rules_finetune.py --variant slow --out runs/rules
    python research/tools/rules_finetune.py --variant specialist --out runs/rules
    python research/tools/rules_finetune.py --variant trace --out runs/rules
    python research/tools/rules_finetune.py --plot runs/rules --figure curves.png

Every variant is the bundled ``general_rules`` config (PPO on a pool of one world, under the
affinity mask and the slow-start rule, from the shipped generalist, value warm-up first) with one
or two changes: ``slow`` a smaller step and longer rollouts, ``specialist`` the Hadoop-v0
specialist's weights, ``trace`` HadoopTrace-v0 scored against ``srpt-slowstart``. Validation:
seeds 500-509, the agent's mean over the better of the run's two evaluation baselines (~4 min per
variant on one core). ``--plot`` draws the runs' validation curves.
"""

from __future__ import annotations

import argparse
import csv
from pathlib import Path

VARIANTS: dict[str, dict] = {
    "base": {},
    "slow": {"ppo.learning_rate": 0.00001, "ppo.n_steps": 2048, "ppo.batch_size": 1024},
    "specialist": {"init_from": "agent:hadoop-v0"},
    "trace": {"env": "mrsched/HadoopTrace-v0", "total_timesteps": 500_000,
              "value_warmup_steps": 100_000, "eval.every_steps": 50_000,
              "eval.baselines": ["edf", "srpt-slowstart"],
              "worlds": {"ids": ["mrsched/HadoopTrace-v0"], "max_nodes": 25,
                         "reward_scale": {"mrsched/HadoopTrace-v0": 30.0},
                         "observe_objective": True}},
}


def plot(root: Path, figure: Path) -> None:
    """Each run's validation score (agent / the better baseline) against env steps."""
    from mrsched_gym.agents.training.learning_curves import plot_learning_curves
    histories = {}
    for f in sorted(root.glob("*/evaluations.csv")):
        with f.open() as fh:
            histories[f.parent.name] = [{"step": int(r["step"]), "mean": float(r["mean"]),
                                         "ci95": None} for r in csv.DictReader(fh)]
    plot_learning_curves(histories, {"the better baseline (score 1)": 1.0}, figure,
                         title="PPO under the shipped rules, from a fitted policy",
                         metric="validation score: agent mean / the better\n"
                                "of its two baselines (lower is better)")
    print(f"wrote {figure}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--variant", choices=sorted(VARIANTS))
    p.add_argument("--out", default="runs/rules")
    p.add_argument("--plot", type=Path, help="draw the runs in this folder instead")
    p.add_argument("--figure", type=Path, default=Path("rules_finetune.png"))
    args = p.parse_args()
    if args.plot:
        return plot(args.plot, args.figure)
    if not args.variant:
        p.error("--variant or --plot")
    import torch
    torch.set_num_threads(1)
    from mrsched_gym.agents.training.train import load_config, train
    cfg = load_config("general_rules", name=args.variant, **VARIANTS[args.variant])
    res = train(cfg, args.out)
    print(f"{args.variant}: best validation score {res['best']:.3f}")


if __name__ == "__main__":
    main()
