"""The plain-PPO reference: what learning from scratch gives before you try anything else.

sb3-contrib's ``MaskablePPO`` with its default settings, exactly as the newcomer tutorial
(``docs/guide/train.md``) writes it: ``MaskablePPO("MultiInputPolicy", gym.make(env_id),
seed=seed).learn(steps)`` with one torch thread, trained for the same fixed budget of
environment steps on every id of the benchmark suite, one checkpoint per id::

    python -m mrsched_gym.agents.training.plain_ppo --steps 30000 --out results/plain-ppo
    mrsched-gym benchmark --agents "agent:results/plain-ppo/{id}.zip"

The benchmark replaces ``{id}`` by each world's id name (``Hadoop-v0``, ...) and ranks the
per-id checkpoints as one row (``agent:results/plain-ppo/{id}``). Nothing here is tuned: the
point of the row is the out-of-the-box setting. The checkpoints are SB3 zips (pickles: load
trusted files only). ``plain-ppo.json`` records, per id, the steps, the PPO seed, the wall time,
the file's SHA-256 and the versions; an id whose checkpoint is there with the same steps and seed
is not trained again, so an interrupted run continues where it stopped.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

#: The tutorial's budget (docs/guide/train.md): 30,000 environment steps.
DEFAULT_STEPS = 30_000
MANIFEST = "plain-ppo.json"


def read_manifest(out: Path) -> dict[str, Any]:
    """The manifest of ``out`` (an empty one if there is none yet).

    Raises:
        InputError: The manifest is not valid JSON (naming the file).
    """
    from mrsched_gym.errors import InputError
    path = out / MANIFEST
    if not path.is_file():
        return {"ids": {}}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise InputError(f"{path}: not a plain-PPO manifest ({e}); remove it to start over"
                         ) from None
    if not isinstance(data, dict) or not isinstance(data.get("ids"), dict):
        raise InputError(f"{path}: not a plain-PPO manifest (no 'ids' table)")
    return data


def train_one(env_id: str, steps: int, seed: int, path: Path) -> dict[str, Any]:
    """Train the tutorial's default MaskablePPO on ``env_id`` for ``steps`` steps and save it
    durably to ``path``; returns its manifest entry."""
    import gymnasium as gym
    import torch
    from sb3_contrib import MaskablePPO

    from mrsched_gym.results import durable_write
    torch.set_num_threads(1)
    t0 = time.perf_counter()
    model = MaskablePPO("MultiInputPolicy", gym.make(env_id), seed=seed)
    model.learn(steps)
    durable_write(path, model.save)
    return {"file": path.name, "steps": steps, "seed": seed,
            "seconds": round(time.perf_counter() - t0, 1),
            "sha256": hashlib.sha256(path.read_bytes()).hexdigest()}


def train_all(env_ids: Sequence[str], steps: int, seed: int, out: Path,
              log=print) -> dict[str, Any]:
    """Train one checkpoint per id into ``out`` (``<id name>.zip``), skipping an id whose
    checkpoint is there with the same steps and seed and the recorded hash; the manifest is
    rewritten after every id. Returns the manifest."""
    import sb3_contrib
    import torch

    from mrsched_gym import __version__
    from mrsched_gym.evaluate.benchmark import id_name
    from mrsched_gym.results import durable_write
    manifest = read_manifest(out)
    manifest.update({"recipe": "MaskablePPO('MultiInputPolicy', gym.make(env_id), seed=seed)"
                               ".learn(steps), torch.set_num_threads(1)",
                     "mrsched_gym": __version__, "sb3_contrib": sb3_contrib.__version__,
                     "torch": torch.__version__})
    for env_id in env_ids:
        path = out / f"{id_name(env_id)}.zip"
        old = manifest["ids"].get(env_id)
        if (old and old.get("steps") == steps and old.get("seed") == seed and path.is_file()
                and hashlib.sha256(path.read_bytes()).hexdigest() == old.get("sha256")):
            log(f"{env_id}: trained already ({path})")
            continue
        log(f"{env_id}: training {steps} steps (seed {seed})")
        manifest["ids"][env_id] = train_one(env_id, steps, seed, path)
        durable_write(out / MANIFEST, json.dumps(manifest, indent=1) + "\n")
        log(f"{env_id}: {manifest['ids'][env_id]['seconds']} s -> {path}")
    durable_write(out / MANIFEST, json.dumps(manifest, indent=1) + "\n")
    return manifest


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m mrsched_gym.agents.training.plain_ppo``: train the plain-PPO reference of
    every suite id."""
    from mrsched_gym.errors import InputError, MRSchedError, install_hint
    from mrsched_gym.evaluate.benchmark import SUITE
    from mrsched_gym.registration import ENV_IDS
    p = argparse.ArgumentParser(prog="python -m mrsched_gym.agents.training.plain_ppo",
                                description=__doc__.split("\n\n")[0])
    p.add_argument("--steps", type=int, default=DEFAULT_STEPS,
                   help=f"environment steps per id (default {DEFAULT_STEPS}, the tutorial's)")
    p.add_argument("--seed", type=int, default=0, help="MaskablePPO's seed (default 0)")
    p.add_argument("--ids", nargs="*", help="ids to train (default: the benchmark suite)")
    p.add_argument("--out", default="results/plain-ppo", help="output folder")
    args = p.parse_args(argv)
    try:
        if args.steps < 1 or args.seed < 0:
            raise InputError("--steps must be >= 1 and --seed >= 0")
        ids = args.ids or list(SUITE)
        unknown = [i for i in ids if i not in ENV_IDS]
        if unknown:
            raise InputError(f"--ids: unknown id(s) {', '.join(unknown)}; registered: "
                             f"{', '.join(ENV_IDS)}")
        try:
            import sb3_contrib  # noqa: F401
        except ImportError:
            raise InputError(f"training needs the rl extra ({install_hint('rl')})") from None
        train_all(ids, args.steps, args.seed, Path(args.out))
    except MRSchedError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
