"""Copy a training run's best checkpoint into the package as a shipped agent.

    python tools/ship_agent.py runs/hadoop_set hadoop-v0 --config hadoop_set

writes ``agents/pretrained/NAME.zip`` (the checkpoint), ``NAME.npz`` (the actor's weights for the
numpy forward pass, so the shipped agent runs without torch) and ``NAME.json`` (env — and for a
generalist trained on a pool of worlds ``envs``, the ids it applies to —, config, step,
validation result, the command that reproduces it, and ``params_sha256``: a hash of the policy
weights, which a re-run of the command reproduces exactly — compare with
``python -c "from mrsched_gym.agents.pretrained import params_sha256; print(params_sha256(P))"``).
"""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

from mrsched_gym.agents.pretrained import params_sha256

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run", help="training output folder (OUT/NAME)")
    ap.add_argument("name", help="shipped agent name, e.g. hadoop-v0")
    ap.add_argument("--config", required=True, help="bundled config name that produced the run")
    ap.add_argument("--speculation", default=None,
                    help="baseline whose rule makes the agent's speculation decisions (e.g. "
                         "hadoop-speculative; default: the agent skips them)")
    ap.add_argument("--affinity", type=float, default=None,
                    help="the affinity mask's speed ratio (baselines/affinity.py, e.g. 0.55: "
                         "keep a job off a node where it runs below 0.55 of its best speed; "
                         "default: no mask)")
    ap.add_argument("--slow-start", type=float, default=None,
                    help="the reduce slow-start rule's fraction (baselines/slow_start.py, e.g. "
                         "1.0: a job's reduces wait for all its maps; default: no rule)")
    a = ap.parse_args()
    if a.affinity is not None:                 # fail now, not at every later load
        from mrsched_gym.baselines.affinity import check_min_ratio
        check_min_ratio(a.affinity)
    if a.slow_start is not None:
        from mrsched_gym.baselines.slow_start import check_fraction
        check_fraction(a.slow_start)
    if a.speculation:                          # fail now, not at every later load
        from mrsched_gym.agents.policy import speculation_rule
        speculation_rule(a.speculation)
    run = Path(a.run)
    from mrsched_gym.config.files import parse_yaml, read_text_file
    from mrsched_gym.errors import MRSchedError
    try:                                       # bounded: size, nesting, aliases (one line)
        config = run / "config.yaml"
        cfg = parse_yaml(read_text_file(config, "training config"), str(config))
    except MRSchedError as e:
        raise SystemExit(f"error: {e}") from None
    if not isinstance(cfg, dict):
        raise SystemExit(f"error: {run / 'config.yaml'}: not a training config (a mapping)")
    state = json.loads((run / "state.json").read_text())
    best = next(h for h in state["history"] if h["step"] == state["best_step"])
    base = json.loads((run / "baselines.json").read_text())
    dest = ROOT / "agents" / "pretrained"
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(run / "best_model.zip", dest / f"{a.name}.zip")
    from mrsched_gym.agents.policy import load_sb3
    from mrsched_gym.agents.training.numpy_export import export_numpy
    export_numpy(load_sb3(dest / f"{a.name}.zip"), dest / f"{a.name}.npz")
    meta = {
        "env": cfg["env"],
        "config": a.config,
        "algo": cfg["algo"],
        "policy": cfg["policy"],
        "seed": cfg["seed"],
        "total_timesteps": cfg["total_timesteps"],
        "checkpoint_step": state["best_step"],
        "command": f"mrsched-gym train {a.config} --out runs   "
                   f"# then runs/{cfg['name']}/best_model.zip",
        "validation": {"seeds": [cfg["eval"]["seed_start"],
                                 cfg["eval"]["seed_start"] + cfg["eval"]["n_seeds"] - 1],
                       "headline": base["headline"], "mean": best["mean"],
                       "ci95": best["ci95"], "baselines": base["means"]},
        "params_sha256": params_sha256(dest / f"{a.name}.zip"),
    }
    if cfg.get("worlds"):                      # a generalist: every id of its pool
        meta["envs"] = list(cfg["worlds"]["ids"])
        meta["validation"]["headline"] = "mean over ids of agent / best of the baselines"
        meta["validation"]["per_id"] = {k[len("ratio_"):]: v for k, v in best.items()
                                        if k.startswith("ratio_")}
    if a.affinity is not None:                 # AffinityDelegate (agents/affinity.py)
        meta["affinity"] = a.affinity
    if a.slow_start is not None:               # SlowStartDelegate (agents/slow_start.py)
        meta["slow_start"] = a.slow_start
    rules = [r for r, v in (("the affinity mask", a.affinity),
                            ("the slow-start rule", a.slow_start)) if v is not None]
    if rules:
        meta["validation"]["note"] = (f"the network alone, as trained: without "
                                      f"{' and '.join(rules)} it is shipped with "
                                      f"(docs/notes/agents.md has both)")
    if a.speculation:                          # SpeculationDelegate (agents/policy.py)
        meta["speculation"] = a.speculation
    (dest / f"{a.name}.json").write_text(json.dumps(meta, indent=1) + "\n")
    print(json.dumps(meta, indent=1))


if __name__ == "__main__":
    main()
