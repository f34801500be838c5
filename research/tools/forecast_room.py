"""Is there room to use the capacity forecast? The forecast-aware reference rule
``srpt-forecast`` against ``srpt-slowstart`` (the best rule on both ids) and the shipped
generalist on the worlds whose observation holds the forecast (docs/notes/agents.md, "Room in
the forecast").

    python research/tools/forecast_room.py --records runs/forecast --seeds 100 109

Runs ``--policies`` on ``--ids`` and the seeds ``--seeds FIRST LAST`` (default the test seeds
100-109; tune on the validation seeds 500-509 instead), keeping the records in
``--records/<Id>-<first>-<last>.json`` (a policy already there is not run again). Prints per id
and policy: the mean headline and the paired difference (mean [95% interval, Student's t over
the seeds, common random numbers], the seeds on which the first is lower) with each of
``--against``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from scale_sweep import fmt, paired

from mrsched_gym.evaluate import evaluate, parse_policy, scenario_of

IDS = ["mrsched/Dynamic-v0", "mrsched/GreenTrace-v0"]
POLICIES = ["srpt-slowstart", "srpt-forecast", "agent:general", "capacity", "edf"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--records", type=Path, required=True)
    ap.add_argument("--ids", nargs="+", default=IDS)
    ap.add_argument("--seeds", type=int, nargs=2, default=[100, 109], metavar=("FIRST", "LAST"))
    ap.add_argument("--policies", nargs="+", default=POLICIES)
    ap.add_argument("--against", nargs="+", default=["srpt-slowstart", "srpt-forecast"])
    ap.add_argument("--workers", type=int, default=1)
    args = ap.parse_args()
    args.records.mkdir(parents=True, exist_ok=True)
    seeds = list(range(args.seeds[0], args.seeds[1] + 1))
    for env_id in args.ids:
        f = args.records / f"{env_id.split('/')[-1]}-{seeds[0]}-{seeds[-1]}.json"
        recs = json.loads(f.read_text()) if f.is_file() else []
        have = {r["policy"] for r in recs}
        todo = [p for p in args.policies if parse_policy(p).label not in have]
        if todo:
            new = evaluate(todo, [env_id], seeds, workers=args.workers, progress=False)
            for r in new:
                r.pop("_jct_s", None)
            recs += new
            f.write_text(json.dumps(recs, default=float))
        metric = scenario_of(env_id).reward.headline
        print(f"\n{env_id}, seeds {seeds[0]}-{seeds[-1]}, {metric}\n")
        print("| policy | mean | " + " | ".join(f"- {a} (95% CI)" for a in args.against)
              + " |\n|---|---|" + "---|" * len(args.against))
        for p in [parse_policy(q).label for q in args.policies]:
            vals = [r[metric] for r in recs if r["policy"] == p]
            print(f"| {p} | {fmt(sum(vals) / len(vals)).lstrip('+')} | "
                  + " | ".join(paired(recs, metric, p, a) for a in args.against) + " |")


if __name__ == "__main__":
    main()
