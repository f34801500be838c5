"""Command line: ``mrsched-gym demo | show-scenario | list``."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Optional, Sequence

KEY_METRICS = ("deadline_penalty_h", "deadline_miss_pct", "mean_jct_s", "p95_jct_s",
               "utilisation", "data_locality_pct", "web_response_mean_ms", "wasted_work_s")


def _demo(args: argparse.Namespace) -> int:
    from mrsched_gym.baselines import BASELINES, make_baseline
    from mrsched_gym.evaluate import run_episode

    names = args.policies or list(BASELINES)
    print(f"{args.env}  seed={args.seed}  (one episode per policy; the leaderboard with "
          f"confidence intervals is `mrsched-gym compare`, issue 3)")
    header = f"{'policy':10s} {'steps':>7s} " + " ".join(f"{k:>22s}" for k in KEY_METRICS)
    print(header)
    for name in names:
        res = run_episode(args.env, make_baseline(name), args.seed)
        m = res["metrics"]
        print(f"{name:10s} {res['steps']:7d} " + " ".join(f"{m[k]:22.3f}" for k in KEY_METRICS))
    return 0



def _show(args: argparse.Namespace) -> int:
    import yaml

    from mrsched_gym.config import load_scenario, to_dict
    print(yaml.safe_dump(to_dict(load_scenario(args.scenario)), sort_keys=False))
    return 0


def _list(args: argparse.Namespace) -> int:
    from mrsched_gym import ENV_IDS
    from mrsched_gym.baselines import BASELINES
    from mrsched_gym.config import bundled_scenarios
    print(json.dumps({"env_ids": dict(ENV_IDS), "scenarios": bundled_scenarios(),
                      "baselines": list(BASELINES)}, indent=2))
    return 0


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Entry point of the ``mrsched-gym`` command."""
    p = argparse.ArgumentParser(prog="mrsched-gym", description=__doc__)
    sub = p.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("demo", help="run one episode of each baseline and print key metrics")
    d.add_argument("--env", default="mrsched/Hadoop-v0")
    d.add_argument("--seed", type=int, default=0)
    d.add_argument("--policies", nargs="*")
    d.set_defaults(fn=_demo)
    s = sub.add_parser("show-scenario", help="print a scenario with every default filled in")
    s.add_argument("scenario", help="bundled name or YAML path")
    s.set_defaults(fn=_show)
    ls = sub.add_parser("list", help="list registered ids, scenarios and baselines")
    ls.set_defaults(fn=_list)
    args = p.parse_args(argv)
    return args.fn(args)


if __name__ == "__main__":
    sys.exit(main())
