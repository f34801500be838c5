"""``mrsched-gym compare``: the leaderboard of policies x seeds on a scenario, with result files
and plots."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from mrsched_gym.cli.common import (
    check_world,
    failure_lines,
    parse_settings,
    pickle_notice,
    results_name,
    say_notes,
)


def compare_command(args: argparse.Namespace) -> int:
    """Every argument is checked before the first episode; each finished episode goes to the
    run's journal at once; data and plots of one run are put in place together; failed episodes
    are reported (exit 1) after the others finished and were written."""
    import time

    from mrsched_gym import __version__
    from mrsched_gym.agents.pretrained import agents_for, pretrained_numpy_path, rl_available
    from mrsched_gym.baselines import applicable_baselines
    from mrsched_gym.cli.bounds import MAX_SEED
    from mrsched_gym.config import to_dict, with_overrides
    from mrsched_gym.env.metrics import RECORD_METRICS
    from mrsched_gym.errors import InputError, did_you_mean, install_hint
    from mrsched_gym.evaluate import evaluate, scenario_of, sweep_tasks
    from mrsched_gym.models.traces import trace_digests
    from mrsched_gym.results import (
        EpisodeFailures,
        RunFolder,
        atomic_write,
        json_safe,
        safe_child,
    )
    if args.seed_start + args.seeds - 1 > MAX_SEED:
        raise InputError(f"--seed-start {args.seed_start} with --seeds {args.seeds} goes past "
                         f"the last seed, 2**32 - 1 = {MAX_SEED:,}")
    seeds = list(range(args.seed_start, args.seed_start + args.seeds))
    overrides = parse_settings(args.set or [])
    pickle_notice(args.policies or [])
    plans = []
    for env in args.env:                       # check everything before any episode runs
        sc = with_overrides(scenario_of(env), overrides)
        check_world(env, overrides)
        policies = args.policies or applicable_baselines(sc)
        if not args.policies and not args.no_agents and agents_for(env):
            runnable = [a for a in agents_for(env)
                        if rl_available() or pretrained_numpy_path(a[len("agent:"):])]
            policies = policies + runnable
            if len(runnable) < len(agents_for(env)):
                print("note: shipped agents without numpy weights skipped: they need the rl "
                      f"extra ({install_hint('rl')})")
        headline = args.metric or sc.reward.headline
        if headline not in RECORD_METRICS:
            raise InputError(f"--metric {headline!r}: unknown metric; known: "
                             f"{', '.join(RECORD_METRICS)}"
                             + did_you_mean(headline, RECORD_METRICS))
        specs = {t[0].label: t[0] for t in sweep_tasks(policies, [env], seeds, overrides)}
        policies = list(specs.values())         # parsed once: a policy file is loaded once
        out_name = results_name(sc, bool(overrides))
        safe_child(args.out, out_name, f"scenario {env}: name")
        plans.append((env, sc, policies, headline, out_name))
    if len({plan[-1] for plan in plans}) < len(plans):
        raise InputError("--env: two scenarios with the same name would share one output folder")
    failed = 0
    for env, sc, policies, headline, out_name in plans:
        t0 = time.perf_counter()
        edits = " with " + ", ".join(f"{k}={v}" for k, v in overrides.items()) if overrides \
            else ""
        print(f"== {env} ({sc.name}){edits}: {len(policies)} policies x {len(seeds)} seeds, "
              f"headline {headline}", flush=True)
        world = to_dict(sc)
        files = trace_digests(world)
        header = {"scenario": env, "world": world, "mrsched_gym": __version__,
                  **({"overrides": overrides} if overrides else {}),
                  **({"files_sha256": files} if files else {})}
        with RunFolder(args.out, out_name, header, f"scenario {env}: name") as folder:
            done = folder.resumable() if args.resume else []
            reused = say_notes(folder, done, policies, env, seeds)
            if done:
                print(f"resuming: {reused} finished episodes from {folder.journal_path}")
            elif folder.unfinished_episodes():
                print(f"note: starting afresh; the journal of an earlier unfinished run "
                      f"({folder.unfinished_episodes()} episodes) is replaced (--resume keeps "
                      "it)", file=sys.stderr)
            folder.open_journal(keep=done)
            try:
                if args.backend == "ray":
                    from mrsched_gym.ray_backend import evaluate_ray
                    records = evaluate_ray(policies, [env], seeds, env_kwargs=overrides,
                                           progress=not args.quiet, done=done,
                                           on_result=folder.append, per_job=True)
                else:
                    records = evaluate(policies, [env], seeds, workers=args.workers,
                                       progress=not args.quiet, done=done,
                                       on_result=folder.append, per_job=True,
                                       env_kwargs=overrides,
                                       decision_budget_s=args.decision_budget)
                failures: list = []
            except EpisodeFailures as e:
                records, failures = e.records, e.failures
            if records and all(undefined(r.get(headline)) for r in records):
                staged = folder.staging()
                from mrsched_gym.results import write_results
                write_results(records, staged, failures)
                folder.commit(staged, keep_journal=bool(failures))
                raise InputError(f"--metric {headline}: undefined for every policy on {env} "
                                 f"(no episode defines it), so nothing can be ranked; the "
                                 f"records are in {folder.final}; choose another --metric")
            if records:
                paths = write_leaderboard(args, env, sc, records, failures, headline, seeds,
                                           folder, overrides,
                                           {sp.label: sp for sp in policies})
                print(f"wrote {folder.final}: {', '.join(p.name for p in paths)}")
            else:                                   # every episode failed: keep the tracebacks
                staged = folder.staging()
                atomic_write(staged / "failures.json",
                             json.dumps(json_safe(list(failures)), indent=1))
                folder.commit(staged, keep_journal=True)
        for line in failure_lines(failures, f" (traceback in {folder.final / 'failures.json'}; "
                                  "--resume re-runs only the failed episodes)"):
            print(line, file=sys.stderr)
        failed += len(failures)
        print(f"({time.perf_counter() - t0:.1f} s)")
    return 1 if failed else 0


def undefined(value: object) -> bool:
    """Whether a metric value is missing (None or NaN)."""
    import math
    return value is None or (isinstance(value, float) and math.isnan(value))


def window_note(window: tuple[float, float], headline: str, records: list[dict]) -> str:
    """What a statistics window means for the table: the job statistics count the jobs in it,
    the reward components (and so a headline that is one) the whole episode; a window that
    held no job in any episode is said to be empty."""
    from mrsched_gym.config import COMPONENT_METRICS
    whole = {"return", "objective", *COMPONENT_METRICS.values()}
    a, b = window
    text = (f"stats_window_s [{a:g}, {b:g}) s: the job statistics (n_jobs, deadline and JCT "
            f"metrics) count only the jobs submitted or completed in it; {headline} covers "
            + ("the whole episode (a reward component)" if headline in whole
               else "the jobs in the window"))
    if all(not r.get("n_jobs") for r in records):
        text += ("; no episode had a job in the window, so the job statistics are 0 or "
                 "undefined (-)")
    return text


def write_leaderboard(args, env, sc, records, failures, headline, seeds, folder,
                       overrides=None, specs=None) -> list:
    """Print the table, then write data and plots into a staging folder and put it in place
    (``specs``: the policies by label, for the Gantt chart's episode of the best one)."""
    from mrsched_gym import __version__
    from mrsched_gym.evaluate import make_policy, run_episode
    from mrsched_gym.evaluate.leaderboard import (
        paired_vs_best,
        plot_bars,
        plot_gantt,
        plot_jct_cdf,
        ranked,
        table,
    )
    from mrsched_gym.results import atomic_write, write_results

    print(table(records, headline))
    for line in paired_vs_best(records, headline):
        print(line)
    if sc.stats_window_s is not None:
        print(window_note(sc.stats_window_s, headline, records))
    staged = folder.staging()       # removed by the folder if anything below fails
    paths = write_results(records, staged, failures)
    atomic_write(staged / "run.json", json.dumps({
        "scenario": env, "scenario_name": sc.name, "overrides": overrides or {},
        "headline": headline,
        "policies": sorted({r["policy"] for r in records}), "seeds": seeds,
        "failed_episodes": len(failures), "mrsched_gym": __version__,
        "command": "mrsched-gym " + " ".join(sys.argv[1:])}, indent=1))
    paths["run.json"] = staged / "run.json"
    if not args.no_plots:
        best = ranked(records, headline)[0]["policy"]
        seed = min(r["seed"] for r in records if r["policy"] == best)
        res = run_episode(env, make_policy((specs or {}).get(best, best)), seed, overrides,
                          keep_log=True)
        paths["bars"] = plot_bars(records, headline, staged / "metrics.png")
        paths["cdf"] = plot_jct_cdf(records, staged / "jct_cdf.png", headline=headline)
        paths["gantt"] = plot_gantt(res["log"], f"{sc.name}, {best} (best by {headline}), "
                                    f"seed {seed}: when each job's tasks ran",
                                    staged / "gantt.png")
    folder.commit(staged, keep_journal=bool(failures))
    return [folder.final / Path(p).name for p in paths.values()]
