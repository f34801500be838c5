"""Policies on registered ids, each paired with a reference policy over the same seeds
(docs/notes/agents.md, "First training attempt (2026-11-28)").

    python research/tools/paired_ids.py --records runs/paired_val.json \
        --ids mrsched/Hadoop-v0 mrsched/Dynamic-v0 --seeds 500 509 \
        --policies agent:general agent:runs/general_scale/candidate.npz srpt-slowstart \
        --against agent:general

Records are kept in ``--records`` (a policy already there for an id and seed is not run again).
Prints per id and policy: the mean headline and the paired difference policy - ``--against``
(Student's t 95% interval, the seeds are common random numbers) with the seeds on which the
policy is lower.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from scale_sweep import fmt, paired

from mrsched_gym.evaluate import evaluate, parse_policy, scenario_of


def run(args) -> list[dict]:
    """Every record the table needs, running what ``--records`` lacks."""
    seeds = list(range(args.seeds[0], args.seeds[1] + 1))
    old = json.loads(args.records.read_text()) if args.records.is_file() else []
    have = {(r["scenario"], r["policy"], r["seed"]) for r in old}
    for env_id in args.ids:
        todo = [p for p in args.policies
                if any((env_id, parse_policy(p).label, s) not in have for s in seeds)]
        if todo:
            mine = {parse_policy(p).label for p in todo}
            old = [r for r in old if not (r["scenario"] == env_id and r["policy"] in mine)]
            for r in evaluate(todo, [env_id], seeds, workers=args.workers, progress=False):
                r.pop("_jct_s", None)
                old.append(r)
            args.records.write_text(json.dumps(old, default=float))
            print(f"{env_id}: ran {', '.join(todo)}", flush=True)
    return old


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--records", type=Path, required=True)
    ap.add_argument("--ids", nargs="+", required=True)
    ap.add_argument("--seeds", type=int, nargs=2, default=[500, 509], metavar=("FIRST", "LAST"))
    ap.add_argument("--policies", nargs="+", required=True)
    ap.add_argument("--against", required=True)
    ap.add_argument("--workers", type=int, default=1)
    args = ap.parse_args()
    recs = run(args)
    against = parse_policy(args.against).label
    labels = [parse_policy(p).label for p in args.policies]
    print(f"| id | policy | mean | policy - {against} (95% CI) |\n|---|---|---|---|")
    for env_id in args.ids:
        hl = scenario_of(env_id).reward.headline
        mine = [r for r in recs if r["scenario"] == env_id]
        for p in labels:
            vals = [r[hl] for r in mine if r["policy"] == p]
            print(f"| {env_id.split('/')[-1]} | {p} | {fmt(sum(vals) / len(vals)).lstrip('+')} | "
                  f"{paired(mine, hl, p, against)} |")


if __name__ == "__main__":
    main()
