"""Policies on trace worlds in regimes beyond the registered ones, each paired with reference
policies over the same seeds (docs/notes/agents.md, "Third training attempt: trace regimes").

    python research/tools/trace_regimes.py --records runs/regimes.json --seeds 500 519 \
        --ids mrsched/HadoopTrace-v0 mrsched/GreenTrace-v0 \
        --regime rate1.5 '{"workload.trace_rate_scale": 1.5}' \
        --regime rate2 '{"workload.trace_rate_scale": 2.0}' \
        --policies agent:general-v2 agent:runs/general_traces/cand.npz edf srpt-slowstart \
        --against edf srpt-slowstart

A regime is a name and scenario overrides (JSON) applied to every id; ``as-registered`` (no
overrides) is always played. Records are kept in ``--records`` (a policy already there for an
id, regime and seed is not run again). Prints per id, regime and policy: the mean headline and
the paired differences policy - each ``--against`` (Student's t 95% interval over the seeds,
which are common random numbers) with the seeds on which the policy is lower.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from scale_sweep import fmt, paired

from mrsched_gym.evaluate import evaluate, parse_policy, scenario_of


def run(args, regimes: dict[str, dict]) -> list[dict]:
    """Every record the table needs, running what ``--records`` lacks (each record's
    ``regime`` names its overrides)."""
    seeds = list(range(args.seeds[0], args.seeds[1] + 1))
    old = json.loads(args.records.read_text()) if args.records.is_file() else []
    have = {(r["scenario"], r["regime"], r["policy"], r["seed"]) for r in old}
    for env_id in args.ids:
        for name, overrides in regimes.items():
            todo = [p for p in args.policies
                    if any((env_id, name, parse_policy(p).label, s) not in have for s in seeds)]
            if not todo:
                continue
            mine = {parse_policy(p).label for p in todo}
            old = [r for r in old if not (r["scenario"] == env_id and r["regime"] == name
                                          and r["policy"] in mine)]
            for r in evaluate(todo, [env_id], seeds, workers=args.workers, progress=False,
                              env_kwargs=overrides):
                r.pop("_jct_s", None)
                old.append(dict(r, regime=name))
            args.records.write_text(json.dumps(old, default=float))
            print(f"{env_id} {name}: ran {', '.join(todo)}", flush=True)
    return old


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--records", type=Path, required=True)
    ap.add_argument("--ids", nargs="+", required=True)
    ap.add_argument("--seeds", type=int, nargs=2, default=[500, 519], metavar=("FIRST", "LAST"))
    ap.add_argument("--regime", nargs=2, action="append", default=[],
                    metavar=("NAME", "OVERRIDES_JSON"))
    ap.add_argument("--policies", nargs="+", required=True)
    ap.add_argument("--against", nargs="+", required=True)
    ap.add_argument("--workers", type=int, default=1)
    args = ap.parse_args()
    regimes = {"as-registered": {}, **{n: json.loads(o) for n, o in args.regime}}
    recs = run(args, regimes)
    against = [parse_policy(p).label for p in args.against]
    labels = [parse_policy(p).label for p in args.policies]
    print("| id | regime | policy | mean | " + " | ".join(f"policy - {a} (95% CI)"
                                                     for a in against) + " |")
    print("|---|---|---|---|" + "---|" * len(against))
    for env_id in args.ids:
        hl = scenario_of(env_id).reward.headline
        for name in regimes:
            mine = [r for r in recs if r["scenario"] == env_id and r["regime"] == name]
            for p in labels:
                vals = [r[hl] for r in mine if r["policy"] == p]
                cells = " | ".join(paired(mine, hl, p, a) for a in against)
                print(f"| {env_id.split('/')[-1]} | {name} | {p} | "
                      f"{fmt(sum(vals) / len(vals)).lstrip('+')} | {cells} |")


if __name__ == "__main__":
    main()
