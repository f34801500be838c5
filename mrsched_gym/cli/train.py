"""``mrsched-gym train``: train an agent from a config."""

from __future__ import annotations

import argparse
from pathlib import Path


def train_command(args: argparse.Namespace) -> int:
    """Train an agent from a bundled or given config (:mod:`mrsched_gym.agents.training.train`)."""
    from mrsched_gym.agents.training.train import bundled_configs, load_config, train

    if args.list:
        for name in bundled_configs():
            print(name)
        return 0
    overrides = {"seed": args.seed, "total_timesteps": args.steps, "n_envs": args.n_envs,
                 "name": args.name}
    cfg = load_config(args.config, **overrides)
    print(f"training {cfg.name}: {cfg.algo} / {cfg.policy} network on {cfg.env}, "
          f"{cfg.total_timesteps} steps, {cfg.n_envs} envs, seed {cfg.seed} -> "
          f"{Path(args.out) / cfg.name}", flush=True)
    res = train(cfg, args.out, resume=args.resume, progress=not args.quiet,
                overwrite=args.overwrite, allow_changes=args.allow_changes)
    base = ", ".join(f"{k} {v:.3f}" for k, v in res["baselines"].items()
                     if not isinstance(v, dict)) or "per id in baselines.json"
    print(f"best validation mean {res['best']:.3f} at step {res['best_step']} "
          f"(baselines on the same seeds: {base})")
    numpy = f", {res['best_numpy']} (no pickle)" if res.get("best_numpy") else ""
    print(f"wrote {res['best_model']}{numpy}, {res['final_model']}, "
          f"{res['out']}/evaluations.csv")
    return 0
