"""A trained run's numpy export that acts under the rules a shipped agent runs with, so a
candidate is compared with that agent under the same rules (docs/notes/agents.md, "First
training attempt (2026-11-28)").

    python research/tools/with_rules.py runs/general_scale/best_model.npz --like general \
        --out runs/general_scale/candidate.npz

``agent:general`` was trained without rules and is shipped with the affinity mask and the
reduce slow-start rule (its metadata's ``affinity`` and ``slow_start``); a run trained the same
way names no rules, so ``agent:runs/.../best_model.npz`` would play without them. The copy written
here has the same weights and names the shipped agent's rules in its metadata (``rules``, read by
``checkpoint_rules``), so ``agent:OUT`` plays under them.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from mrsched_gym.agents.numpy_policy import META_KEY
from mrsched_gym.agents.pretrained import pretrained_agents
from mrsched_gym.agents.rules import TRAINED_RULES


def copy_with_rules(src: Path, like: str, out: Path) -> dict:
    """Write ``src`` to ``out`` with the rules of the shipped agent ``like``; return them."""
    info = pretrained_agents()[like]
    rules = {k: info[k] for k in TRAINED_RULES if info.get(k) is not None}
    with np.load(src, allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    meta = json.loads(str(arrays[META_KEY]))
    meta["rules"] = rules
    arrays[META_KEY] = np.array(json.dumps(meta))
    with out.open("wb") as f:
        np.savez(f, **arrays)
    return rules


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("src", type=Path, help="a run's best_model.npz")
    ap.add_argument("--like", default="general", help="the shipped agent whose rules to copy")
    ap.add_argument("--out", type=Path, required=True, help="the .npz to write")
    args = ap.parse_args()
    print(f"{args.out}: rules {copy_with_rules(args.src, args.like, args.out)}")


if __name__ == "__main__":
    main()
