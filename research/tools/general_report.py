"""The per-family table of the generalist (docs/notes/agents.md, "The generalist").

    python research/tools/general_report.py --records runs/general_test --workers 2

On every registered id but ThesisScale-v0 and on the test seeds 100-119 (never used in training,
whose pools are seeded from 1,000,000, nor in validation, 500-502), runs every baseline of that
world (``applicable_baselines``: the leaderboard's set) and the agents, keeping each id's
records in ``--records/<Id>.json`` (an id already there is not run again; ``--agents-only``
re-runs only the agents, for a new checkpoint). Then prints, per id: the agent's mean, the best
baseline's (the baseline with the lowest mean on these seeds), the paired difference agent -
best baseline over the same worlds with its 95% CI (Student's t), the seeds won, the ratio of
the means, and the specialist ``agent:hadoop-v0`` beside it (and any ``--reference`` policy,
e.g. ``srpt``, which is never counted as a baseline; ``--shown`` adds the column of a label
already in the records, e.g. a former checkpoint's, without running it: "-" where it is absent).
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

from mrsched_gym.baselines import applicable_baselines
from mrsched_gym.evaluate import evaluate, mean_ci95, parse_policy, scenario_of
from mrsched_gym.registration import ENV_IDS

IDS = [i for i in ENV_IDS if i != "mrsched/ThesisScale-v0"]
SEEDS = list(range(100, 120))


def run(records: Path, agents: list[str], workers: int, agents_only: bool,
        references: list[str]) -> None:
    records.mkdir(parents=True, exist_ok=True)
    for env_id in IDS:
        f = records / f"{env_id.split('/')[1]}.json"
        old = json.loads(f.read_text()) if f.is_file() else []
        have = {r["policy"] for r in old}
        if agents_only:
            mine = {parse_policy(p).label for p in agents}
            old = [r for r in old if r["policy"] not in mine]
            todo = agents + [p for p in references if parse_policy(p).label not in have]
        else:
            todo = [p for p in applicable_baselines(scenario_of(env_id)) + agents + references
                    if parse_policy(p).label not in have]
        if not todo:
            continue
        recs = evaluate(todo, [env_id], SEEDS, workers=workers, progress=False)
        for r in recs:
            r.pop("_jct_s", None)
        f.write_text(json.dumps(old + recs, default=float))
        print(f"{env_id}: ran {', '.join(todo)}", flush=True)


def fmt(x: float) -> str:
    return f"{x:.3g}" if abs(x) < 1000 else f"{x:.0f}"


def mean_of(per: dict[str, dict[int, float]], policy: str) -> str:
    """``policy``'s mean over its seeds in ``per`` (policy -> seed -> value), or "-"."""
    v = per.get(policy)
    return fmt(sum(v.values()) / len(v)) if v else "-"


def table(records: Path, agent: str, specialist: str, references: list[str]) -> str:
    """The markdown table: one row per id; ``references`` (named policies outside the id's
    baselines, e.g. ``srpt``) get a column each and are never the best baseline."""
    lines = [f"| id | headline | {agent} | best baseline | paired diff (95% CI) | "
             f"seeds won | ratio | verdict | {specialist} |"
             + "".join(f" {r} |" for r in references),
             "|---|---|---|---|---|---|---|---|---|" + "---|" * len(references)]
    for env_id in IDS:
        f = records / f"{env_id.split('/')[1]}.json"
        if not f.is_file():
            lines.append(f"| {env_id} | (not run) |" + " |" * (7 + len(references)))
            continue
        recs = json.loads(f.read_text())
        h = scenario_of(env_id).reward.headline
        per: dict[str, dict[int, float]] = {}
        for r in recs:
            per.setdefault(r["policy"], {})[r["seed"]] = r[h]
        baselines = set(applicable_baselines(scenario_of(env_id)))
        base = [p for p in per if p in baselines]
        best = min(base, key=lambda p: sum(per[p].values()) / len(per[p]))
        a = [per[agent][s] for s in SEEDS]
        b = [per[best][s] for s in SEEDS]
        d = [x - y for x, y in zip(a, b, strict=True)]
        dm, dc = mean_ci95(d)
        am, bm = sum(a) / len(a), sum(b) / len(b)
        won = sum(x < y for x, y in zip(a, b, strict=True))
        verdict = ("**wins**" if dm + dc < 0 else "loses" if dm - dc > 0 else "n.s.")
        ratio = am / bm if bm else math.nan
        lines.append(f"| {env_id} | {h} | {fmt(am)} | {best} {fmt(bm)} | "
                     f"{fmt(dm)} ± {fmt(dc)} | {won}/20 | {ratio:.2f} | {verdict} | "
                     f"{mean_of(per, specialist)} |"
                     + "".join(f" {mean_of(per, r)} |" for r in references))
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--records", required=True, help="folder of the per-id record files")
    ap.add_argument("--agent", default="agent:general",
                    help="the agent (agent:NAME or a checkpoint path; its label names it)")
    ap.add_argument("--specialist", default="agent:hadoop-v0")
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--reference", action="append", default=[],
                    help="a named policy outside the baselines to show beside (e.g. srpt); "
                         "repeatable")
    ap.add_argument("--shown", action="append", default=[],
                    help="the label of a policy already in the records (e.g. a former "
                         "checkpoint's) to show beside, never run; repeatable")
    ap.add_argument("--agents-only", action="store_true",
                    help="re-run only the agents (a new checkpoint), keep the baselines")
    ap.add_argument("--no-run", action="store_true", help="only print the table")
    a = ap.parse_args()
    if not a.no_run:
        run(Path(a.records), [a.agent, a.specialist], a.workers, a.agents_only, a.reference)
    agent, specialist = (parse_policy(p).label for p in (a.agent, a.specialist))
    print(table(Path(a.records), agent, specialist,
                [parse_policy(p).label for p in a.reference] + a.shown))


if __name__ == "__main__":
    main()
