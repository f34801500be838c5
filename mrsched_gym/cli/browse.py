"""``mrsched-gym demo | show-scenario | list``: one episode per policy, a scenario's definition,
what is available."""

from __future__ import annotations

import argparse
import json

from mrsched_gym.cli.common import KEY_METRICS, pickle_notice


def demo_command(args: argparse.Namespace) -> int:
    """One episode per policy (by default the baselines that apply to the scenario), every
    policy and the scenario checked before the first episode."""
    from mrsched_gym.baselines import applicable_baselines
    from mrsched_gym.evaluate import make_env, make_policy, run_episode, scenario_of, sweep_tasks

    pickle_notice(args.policies or [])
    names = args.policies or list(dict.fromkeys(["random",
                                                  *applicable_baselines(scenario_of(args.env))]))
    tasks = sweep_tasks(names, [args.env], [args.seed])
    make_env(args.env).close()          # a bad trace fails here, before the table's header
    width = max(10, *(len(spec.label) for spec, *_ in tasks))
    print(f"{args.env}  seed={args.seed}  (one episode per policy; the leaderboard with "
          "confidence intervals is: mrsched-gym compare)")
    print(f"{'policy':{width}s} {'steps':>7s} " + " ".join(f"{k:>22s}" for k in KEY_METRICS))
    for spec, *_ in tasks:
        res = run_episode(args.env, make_policy(spec), args.seed)
        m = res["metrics"]
        print(f"{spec.label:{width}s} {res['steps']:7d} "
              + " ".join(f"{m[k]:22.3f}" for k in KEY_METRICS))
    return 0


def show_command(args: argparse.Namespace) -> int:
    """Print a scenario's full definition as YAML, then read and check its trace files: a bad
    one is an error naming the field, file and line (exit 2), as when an env is made, after the
    definition that names the files it expects."""
    import yaml

    from mrsched_gym.config import to_dict
    from mrsched_gym.env.env_setup import check_trace_inputs
    from mrsched_gym.evaluate import scenario_of
    scenario = scenario_of(args.scenario)
    print(yaml.safe_dump(to_dict(scenario), sort_keys=False), flush=True)
    check_trace_inputs(scenario)
    return 0


def list_data() -> dict:
    """What ``list --json`` prints: registered ids with their scenario names, bundled scenarios,
    baselines and the shipped agents (name -> the ids it was trained for, whether its numpy
    weights let it run without the rl extra, its training config)."""
    from mrsched_gym import ENV_IDS
    from mrsched_gym.agents.pretrained import pretrained_agents
    from mrsched_gym.baselines import BASELINES
    from mrsched_gym.config import bundled_scenarios
    agents = {name: {"envs": list(info.get("envs") or [info.get("env")]),
                     "config": info.get("config"), "algo": info.get("algo"),
                     "runs_without_torch": bool(info.get("numpy_path")),
                     "superseded_by": info.get("superseded_by")}
              for name, info in pretrained_agents().items()}
    from mrsched_gym.registration import EARLIER_IDS, FLAT_IDS
    return {"env_ids": dict(ENV_IDS), "flat_ids": dict(FLAT_IDS),
            "earlier_ids": {i: name for i, (name, _) in EARLIER_IDS.items()},
            "scenarios": bundled_scenarios(), "baselines": list(BASELINES), "agents": agents}


def list_table() -> str:
    """The readable form of ``list``: one row per registered id (scenario, headline metric,
    applicable baselines, shipped agents), then the bundled scenarios and the shipped agents."""
    import textwrap

    from mrsched_gym.agents.pretrained import agents_for
    from mrsched_gym.baselines import applicable_baselines, is_reference_rule
    from mrsched_gym.evaluate import scenario_of
    data = list_data()
    refs = [b for b in data["baselines"] if is_reference_rule(b)]
    rules = [b for b in data["baselines"] if b not in refs]
    per_id = {e: applicable_baselines(scenario_of(e)) for e in data["env_ids"]}
    common = [b for b in next(iter(per_id.values())) if all(b in v for v in per_id.values())]
    rows = [("id", "scenario", "headline", "baselines", "shipped agents")]
    for e, name in data["env_ids"].items():
        extra = [b for b in per_id[e] if b not in common]
        base = f"{len(per_id[e])}: common" + (" + " + ", ".join(extra) if extra else "")
        agents = ", ".join(a[len("agent:"):] for a in agents_for(e)) or "-"
        rows.append((e, name, scenario_of(e).reward.headline, base, agents))
    widths = [max(len(r[k]) for r in rows) for k in range(len(rows[0]))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()
             for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    lines.append("")
    flat = ", ".join(data["flat_ids"])
    lines += textwrap.wrap(
        f"flat variants ({len(data['flat_ids'])}; one Box observation, every action legal, the "
        f"same worlds, for libraries without action masks): {flat}", 100,
        subsequent_indent="    ", break_on_hyphens=False)
    lines += textwrap.wrap(
        "earlier versions (registered with their old behaviour, outside the suite): "
        + ", ".join(data["earlier_ids"]), 100, subsequent_indent="    ",
        break_on_hyphens=False)
    lines.append("")
    for head, names in ((f"common baselines ({len(common)})", common),
                        (f"every baseline ({len(rules)})", rules),
                        (f"reference rules ({len(refs)}, ranked beside agents, never the "
                         "score's anchor)", refs),
                        ("bundled scenarios", data["scenarios"])):
        lines += textwrap.wrap(f"{head}: {', '.join(names)}", 100, subsequent_indent="    ",
                               break_on_hyphens=False)
    lines += ["", "shipped agents (use as --policies agent:NAME):"]
    for name, info in data["agents"].items():
        envs = info["envs"]
        where = envs[0] if len(envs) == 1 else f"{len(envs)} ids ({envs[0]}, ...)"
        torch = "" if info["runs_without_torch"] else "  [needs the rl extra]"
        newer = f"  [superseded by {info['superseded_by']}]" if info["superseded_by"] else ""
        lines.append(f"  {name:12s} trained for {where}, config {info['config']}{torch}{newer}")
    lines += ["", "mrsched-gym list --json prints the same as JSON."]
    return "\n".join(lines)


def list_command(args: argparse.Namespace) -> int:
    """Print what is available: scenarios, ids, baselines, agents (a table, or JSON)."""
    print(json.dumps(list_data(), indent=2) if args.json else list_table())
    return 0
