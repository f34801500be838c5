"""Policies on one world at several cluster sizes, paired with a reference policy per size
(docs/notes/agents.md, "Does the generalist keep up as the cluster grows?").

    python research/tools/scale_sweep.py --records runs/scale --sizes 12 24 48 100 \
        --duration 86400 --seeds 5 --workers 1

The world is ``--env`` (default ``thesis_scale``: dedicated nodes, Poisson arrivals at load 1.0,
a diurnal capacity f(t)) with only its node count changed (``cluster.nodes[0].count``) and, with
``--duration``, its arrival window (``workload.duration_s``; the time limit keeps the scenario's
margin past it). Its load is relative to the cluster's capacity, so the arrival rate grows with
the size. Each size's records go to ``--records/<size>.json`` (a policy already there for those
seeds is not run again). Then prints, per size and policy: the mean of the headline metric and
the paired difference policy - ``--against`` over the same seeds (Student's t 95% interval, the
seeds are common random numbers) with the seeds on which the policy is lower, and the same
against ``--also``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from mrsched_gym.config import to_dict
from mrsched_gym.evaluate import evaluate, mean_ci95, parse_policy, scenario_of

POLICIES = ["agent:general", "agent:hadoop-v0", "srpt-slowstart", "capacity", "edf", "fifo"]


def overrides_for(env: str, size: int, duration: float | None) -> dict:
    """The scenario overrides of one size (module docstring)."""
    sc = scenario_of(env)
    nodes = to_dict(sc)["cluster"]["nodes"]
    nodes[0]["count"] = size
    out: dict = {"cluster.nodes": nodes}
    if duration is not None:
        out["workload.duration_s"] = duration
        out["time_limit_s"] = duration + (sc.time_limit_s - sc.workload.duration_s)
    return out


def run(args) -> dict[int, list[dict]]:
    """Every size's records, running what ``--records`` lacks."""
    args.records.mkdir(parents=True, exist_ok=True)
    seeds = list(range(args.seed_start, args.seed_start + args.seeds))
    out = {}
    for size in args.sizes:
        f = args.records / f"{size}.json"
        old = json.loads(f.read_text()) if f.is_file() else []
        have = {(r["policy"], r["seed"]) for r in old}
        todo = [p for p in args.policies
                if any((parse_policy(p).label, s) not in have for s in seeds)]
        if todo:
            mine = {parse_policy(p).label for p in todo}
            old = [r for r in old if r["policy"] not in mine]
            recs = evaluate(todo, [args.env], seeds, workers=args.workers, progress=False,
                            env_kwargs=overrides_for(args.env, size, args.duration))
            for r in recs:
                r.pop("_jct_s", None)
            old += recs
            f.write_text(json.dumps(old, default=float))
            print(f"{size} nodes: ran {', '.join(todo)}", flush=True)
        out[size] = old
    return out


def fmt(x: float) -> str:
    """A number to three significant digits, thousands as integers with separators."""
    return f"{x:+,.0f}" if abs(x) >= 1000 else f"{x:+.3g}"


def paired(recs: list[dict], metric: str, a: str, b: str) -> str:
    """``a - b`` per seed: mean [95% interval], lower on k/n."""
    ref = {r["seed"]: r[metric] for r in recs if r["policy"] == b}
    d = [r[metric] - ref[r["seed"]] for r in recs if r["policy"] == a and r["seed"] in ref]
    if not d or a == b:
        return "-"
    m, c = mean_ci95(d)
    lower = sum(v < 0 for v in d)
    return f"{fmt(m)} [{fmt(m - c)}, {fmt(m + c)}], lower on {lower}/{len(d)}"


def table(all_recs: dict[int, list[dict]], metric: str, against: str, also: str) -> str:
    """The markdown table of the module docstring."""
    lines = [f"| nodes | policy | mean {metric} | policy - {against} (95% CI) | "
             f"policy - {also} (95% CI) |", "|---|---|---|---|---|"]
    for size, recs in all_recs.items():
        labels = list(dict.fromkeys(r["policy"] for r in recs))
        for p in labels:
            vals = [r[metric] for r in recs if r["policy"] == p]
            mean = sum(vals) / len(vals)
            lines.append(f"| {size} | {p} | {fmt(mean).lstrip('+')} | "
                         f"{paired(recs, metric, p, against)} | {paired(recs, metric, p, also)} |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--env", default="thesis_scale")
    ap.add_argument("--records", type=Path, required=True)
    ap.add_argument("--sizes", type=int, nargs="+", default=[12, 24, 48, 100])
    ap.add_argument("--duration", type=float, default=None,
                    help="arrival window in seconds (default: the scenario's)")
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--seed-start", type=int, default=100)
    ap.add_argument("--policies", nargs="+", default=POLICIES)
    ap.add_argument("--against", default="srpt-slowstart")
    ap.add_argument("--also", default="capacity")
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--metric", default=None, help="default: the scenario's headline")
    args = ap.parse_args()
    recs = run(args)
    metric = args.metric or scenario_of(args.env).reward.headline
    print(table(recs, metric, args.against, args.also))


if __name__ == "__main__":
    main()
