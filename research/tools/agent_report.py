"""The numbers behind docs/notes/agents.md: held-out result, generalisation, learning curves.

    python research/tools/agent_report.py --runs runs/hadoop_set runs/hadoop_flat \
        > docs/agents_results.md

1. The agent and every applicable baseline on 20 held-out seeds (0-19) of mrsched/Hadoop-v0:
   the leaderboard table, whether the agent's 95% CI lies entirely below the best baseline's,
   and the paired per-seed difference (common random numbers) with its 95% CI.
2. Generalisation: the agent (trained on Hadoop-v0 only) against FIFO, Fair and EDF on the
   other scenario families and the trace-driven scenarios, each on its headline metric.
3. Learning curves of the given training runs (their evaluations.csv) in one figure.
"""

from __future__ import annotations

import argparse
import csv
import json
from pathlib import Path

from mrsched_gym.baselines import applicable_baselines
from mrsched_gym.evaluate import evaluate, mean_ci95, scenario_of
from mrsched_gym.evaluate.leaderboard import ranked, table

GENERALISATION = ["mrsched/Dedicated-v0", "mrsched/Heterogeneous-v0", "mrsched/Shared-v1",
                  "mrsched/Dynamic-v0", "mrsched/Preemption-v0", "mrsched/Admission-v1",
                  "mrsched/HadoopTrace-v0", "mrsched/GreenTrace-v0"]


def held_out(agent: str, env: str, seeds: list[int], workers: int) -> str:
    sc = scenario_of(env)
    h = sc.reward.headline
    recs = evaluate(applicable_baselines(sc) + [agent], [env], seeds, workers=workers,
                    progress=False)
    rows = ranked(recs, h)
    best = next(r for r in rows if r["policy"] != agent)
    a = next(r for r in rows if r["policy"] == agent)
    per = {p: {r["seed"]: r[h] for r in recs if r["policy"] == p}
           for p in (agent, best["policy"])}
    diff = [per[agent][s] - per[best["policy"]][s] for s in seeds]
    dm, dc = mean_ci95(diff)
    wins = sum(d < 0 for d in diff)
    sep = a[f"{h}_mean"] + a[f"{h}_ci95"] < best[f"{h}_mean"] - best[f"{h}_ci95"]
    out = [f"### {env}: {len(seeds)} held-out seeds ({seeds[0]}-{seeds[-1]})", "",
           table(recs, h), "",
           f"- agent {a[f'{h}_mean']:.3f} ± {a[f'{h}_ci95']:.3f} vs best baseline "
           f"{best['policy']} {best[f'{h}_mean']:.3f} ± {best[f'{h}_ci95']:.3f}: 95% CIs "
           f"{'do not overlap (agent better)' if sep else 'overlap'}",
           f"- paired difference agent - {best['policy']} (same worlds per seed): "
           f"{dm:.3f} ± {dc:.3f}; agent better on {wins}/{len(seeds)} seeds",
           "- per seed (agent / best baseline): " + ", ".join(
               f"{s}: {per[agent][s]:.2f}/{per[best['policy']][s]:.2f}" for s in seeds)]
    return "\n".join(out)


def generalisation(agent: str, envs: list[str], seeds: list[int], workers: int) -> str:
    lines = ["| scenario | headline | FIFO | Fair | EDF | agent | agent rank (of 4) |",
             "|---|---|---|---|---|---|---|"]
    for env in envs:
        sc = scenario_of(env)
        h = sc.reward.headline
        pols = ["fifo", "fair", "edf", agent]
        recs = evaluate(pols, [env], seeds, workers=workers, progress=False)
        rows = {r["policy"]: r for r in ranked(recs, h)}
        order = [r["policy"] for r in ranked(recs, h)]
        cells = [f"{rows[p][f'{h}_mean']:.2f} ± {rows[p][f'{h}_ci95']:.2f}" for p in pols]
        lines.append(f"| {env} | {h} | " + " | ".join(cells)
                     + f" | {order.index(agent) + 1} |")
    return "\n".join(lines)


def curves(runs: list[str], out: Path) -> str:
    from mrsched_gym.agents.training.train import plot_learning_curves
    hist, base = {}, {}
    lines = ["| run | evaluations | best validation mean (step) | last |", "|---|---|---|---|"]
    for r in runs:
        p = Path(r)
        with open(p / "evaluations.csv") as f:
            h = [{k: float(v) for k, v in row.items()} for row in csv.DictReader(f)]
        hist[p.name] = h
        base = json.loads((p / "baselines.json").read_text())["means"]
        b = min(h, key=lambda x: x["mean"])
        lines.append(f"| {p.name} | {len(h)} | {b['mean']:.3f} ({int(b['step'])}) | "
                     f"{h[-1]['mean']:.3f} ({int(h[-1]['step'])}) |")
    import yaml
    ev = yaml.safe_load((Path(runs[0]) / "config.yaml").read_text())
    e = ev["eval"]
    plot_learning_curves(hist, base, out, title=f"{ev['env']}, validation seeds "
                         f"{e['seed_start']}-{e['seed_start'] + e['n_seeds'] - 1}",
                         metric="deadline_penalty_h (job-hours)")
    lines.append("\nbaselines on the same validation seeds: "
                 + ", ".join(f"{k} {v:.3f}" for k, v in base.items()))
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--agent", default="agent:hadoop-v0")
    ap.add_argument("--env", default="mrsched/Hadoop-v0")
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--gen-seeds", type=int, default=10)
    ap.add_argument("--runs", nargs="*", default=[])
    ap.add_argument("--figure", default="docs/figures/learning_curves.png")
    ap.add_argument("--workers", type=int, default=None)
    ap.add_argument("--skip", nargs="*", default=[], choices=["held-out", "gen", "curves"])
    a = ap.parse_args()
    if "held-out" not in a.skip:
        print(held_out(a.agent, a.env, list(range(a.seeds)), a.workers), "\n", flush=True)
    if "gen" not in a.skip:
        print(f"### Generalisation ({a.gen_seeds} seeds each; mean ± 95% CI of the headline)\n")
        print(generalisation(a.agent, GENERALISATION, list(range(a.gen_seeds)), a.workers),
              "\n", flush=True)
    if a.runs and "curves" not in a.skip:
        print("### Learning curves\n")
        print(curves(a.runs, Path(a.figure)))


if __name__ == "__main__":
    main()
