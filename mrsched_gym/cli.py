"""Command line: mrsched-gym compare | benchmark | train | reproduce | demo | show-scenario |
list (python -m mrsched_gym works the same)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

KEY_METRICS = ("deadline_penalty_h", "deadline_miss_pct", "mean_jct_s", "p95_jct_s",
               "utilisation", "data_locality_pct", "web_response_mean_ms", "wasted_work_s")


def _demo(args: argparse.Namespace) -> int:
    """One episode per policy (by default the baselines that apply to the scenario), every
    policy and the scenario checked before the first episode."""
    from mrsched_gym.baselines import applicable_baselines
    from mrsched_gym.evaluate import make_policy, run_episode, scenario_of, sweep_tasks

    pickle_notice(args.policies or [])
    names = args.policies or list(dict.fromkeys(["random",
                                                  *applicable_baselines(scenario_of(args.env))]))
    tasks = sweep_tasks(names, [args.env], [args.seed])
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


def _compare(args: argparse.Namespace) -> int:
    """Every argument is checked before the first episode; each finished episode goes to the
    run's journal at once; data and plots of one run are put in place together; failed episodes
    are reported (exit 1) after the others finished and were written."""
    import time

    from mrsched_gym import __version__
    from mrsched_gym.agents.pretrained import agents_for, pretrained_numpy_path, rl_available
    from mrsched_gym.baselines import applicable_baselines
    from mrsched_gym.config import to_dict, with_overrides
    from mrsched_gym.errors import InputError, install_hint
    from mrsched_gym.evaluate import evaluate, scenario_of, sweep_tasks
    from mrsched_gym.metrics import RECORD_METRICS
    from mrsched_gym.models.traces import trace_digests
    from mrsched_gym.results import (
        EpisodeFailures,
        RunFolder,
        atomic_write,
        json_safe,
        safe_child,
    )

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
                             f"{', '.join(RECORD_METRICS)}")
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
            say_notes(folder, done, policies, env)
            if done:
                print(f"resuming: {len(done)} finished episodes from {folder.journal_path}")
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
                                       env_kwargs=overrides)
                failures: list = []
            except EpisodeFailures as e:
                records, failures = e.records, e.failures
            if records and all(_undefined(r.get(headline)) for r in records):
                staged = folder.staging()
                from mrsched_gym.results import write_results
                write_results(records, staged, failures)
                folder.commit(staged, keep_journal=bool(failures))
                raise InputError(f"--metric {headline}: undefined for every policy on {env} "
                                 f"(no episode defines it), so nothing can be ranked; the "
                                 f"records are in {folder.final}; choose another --metric")
            if records:
                paths = _write_leaderboard(args, env, sc, records, failures, headline, seeds,
                                           folder, overrides,
                                           {sp.label: sp for sp in policies})
                print(f"wrote {folder.final}: {', '.join(p.name for p in paths)}")
            else:                                   # every episode failed: keep the tracebacks
                staged = folder.staging()
                atomic_write(staged / "failures.json",
                             json.dumps(json_safe(list(failures)), indent=1))
                folder.commit(staged, keep_journal=True)
        for f in failures:
            print(f"error: episode failed: {f['policy']} on {f['scenario']} seed {f['seed']}: "
                  f"{f['error']} (traceback in {folder.final / 'failures.json'}; "
                  "--resume re-runs only the failed episodes)", file=sys.stderr)
        failed += len(failures)
        print(f"({time.perf_counter() - t0:.1f} s)")
    return 1 if failed else 0


_PICKLE_NOTICE = ("note: {what}: SB3 checkpoints (.zip) are Python pickles: loading one runs any "
                  "code it holds; load trusted files only (the shipped agents are numpy "
                  "weights and JSON)")
_noticed: list[bool] = []


def pickle_notice(policies: Sequence[str]) -> None:
    """Say once per process that an SB3 checkpoint loaded by path is a pickle (finding 14)."""
    zips = [p for p in policies if isinstance(p, str) and p.endswith(".zip")]
    if zips and not _noticed:
        _noticed.append(True)
        print(_PICKLE_NOTICE.format(what=", ".join(zips)), file=sys.stderr)


def check_world(env: str, overrides: dict | None = None) -> None:
    """Build the env of ``env`` once, so that what only building reads (trace files and their
    values) fails before the first episode, not in every episode."""
    from mrsched_gym.evaluate import make_env
    make_env(env, overrides).close()


def say_notes(folder, done: Sequence[dict], policies: Sequence, scenario: str) -> None:
    """Print what resuming skips: journal lines that were not records (naming the line), and
    agents and policy files whose content changed since the journal (their episodes run again);
    ``policies``: names or parsed specs."""
    from mrsched_gym.evaluate import parse_policy, policy_fingerprint, unique_labels
    for note in folder.notes:
        print(f"note: {note}", file=sys.stderr)
    folder.notes.clear()
    specs = unique_labels([parse_policy(p) if isinstance(p, str) else p for p in policies])
    fps = {sp.label: policy_fingerprint(sp) for sp in specs if sp.kind != "baseline"}
    for label, fp in fps.items():
        stale = [r for r in done if r["policy"] == label and r["scenario"] == scenario
                 and r.get("_policy_fp") != fp]
        if stale:
            print(f"note: {label}: its file changed since the journal (file hash); its "
                  f"{len(stale)} resumed episodes run again", file=sys.stderr)


def _undefined(value: object) -> bool:
    import math
    return value is None or (isinstance(value, float) and math.isnan(value))


def parse_settings(items: list[str]) -> dict[str, object]:
    """``--set KEY=VALUE`` items as scenario overrides: dotted keys (``workload.load``), values
    read as YAML (``0.9``, ``true``, ``[1, 2]``, ``diurnal``); a key given twice is an error."""
    import yaml

    from mrsched_gym.errors import InputError
    out: dict[str, object] = {}
    for item in items:
        key, eq, text = item.partition("=")
        key = key.strip()
        if not eq or not key:
            raise InputError(f"--set {item!r}: expected KEY=VALUE (e.g. workload.load=0.9)")
        if key in out:
            raise InputError(f"--set: {key!r} given more than once")
        try:
            value = yaml.safe_load(text) if text.strip() else ""
        except yaml.YAMLError as e:
            raise InputError(f"--set {item!r}: the value is not YAML: "
                             f"{str(e).splitlines()[0]}") from None
        out[key] = as_number(value)
    return out


def as_number(value: object) -> object:
    """A string that reads as a number (YAML 1.1 reads ``9e2`` as text) as that float."""
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return value
    return value


def results_name(sc, edited: bool = False) -> str:
    """The output folder of a scenario's leaderboard: its name, plus the orchestrator when that
    world has one (``hadoop``, ``hadoop_orch-regression``). A world that takes a bundled
    scenario's name but is none of the registered or bundled worlds (``show-scenario hadoop >
    my.yaml`` with the load edited), and any world ``edited`` by ``compare --set`` (even back to
    a default), gets the first 8 hex digits of its definition's SHA-256 too
    (``hadoop-1a2b3c4d``), so that it never replaces the unedited world's leaderboard and each
    value of a varied factor has a folder of its own."""
    import hashlib

    from mrsched_gym.config import bundled_scenarios, load_scenario, to_dict
    from mrsched_gym.registration import ENV_IDS, scenario_for
    from mrsched_gym.results import json_safe
    orch = sc.cluster.orchestrator
    name = sc.name if orch == "none" else f"{sc.name}_orch-{orch}"
    world = to_dict(sc)
    if not edited:
        if sc.name not in bundled_scenarios():
            return name                                 # a name of its own
        if to_dict(load_scenario(sc.name)) == world or any(
                to_dict(scenario_for(i)) == world for i in ENV_IDS):
            return name
    text = json.dumps(json_safe(world), sort_keys=True)
    return f"{name}-{hashlib.sha256(text.encode()).hexdigest()[:8]}"


def _write_leaderboard(args, env, sc, records, failures, headline, seeds, folder,
                       overrides=None, specs=None) -> list:
    """Print the table, then write data and plots into a staging folder and put it in place
    (``specs``: the policies by label, for the Gantt chart's episode of the best one)."""
    from mrsched_gym import __version__
    from mrsched_gym.evaluate import make_policy, run_episode
    from mrsched_gym.leaderboard import (
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


def _benchmark(args: argparse.Namespace) -> int:
    """The benchmark protocol (:mod:`mrsched_gym.benchmark`): every id of the suite on the test
    seeds, normalised scores, IQM and probability of improvement with bootstrap CIs."""
    import time

    from mrsched_gym import __version__
    from mrsched_gym.agents.pretrained import pretrained_agents
    from mrsched_gym.baselines import applicable_baselines
    from mrsched_gym.benchmark import (
        SUITE,
        TEST_SEEDS,
        aggregate,
        normalised_scores,
        plot_iqm,
        table,
    )
    from mrsched_gym.config import to_dict
    from mrsched_gym.errors import InputError
    from mrsched_gym.evaluate import evaluate, scenario_of, sweep_tasks
    from mrsched_gym.models.traces import trace_digests
    from mrsched_gym.results import (
        EpisodeFailures,
        RunFolder,
        atomic_write,
        csv_text,
        json_safe,
        write_results,
    )

    ids = args.ids or list(SUITE)
    seeds = list(TEST_SEEDS[: args.seeds]) if args.seeds <= len(TEST_SEEDS) else \
        list(range(TEST_SEEDS[0], TEST_SEEDS[0] + args.seeds))
    agents = args.agents if args.agents is not None else [
        f"agent:{n}" for n, info in pretrained_agents().items() if info.get("numpy_path")]
    check_agents(agents)
    pickle_notice(agents)
    references = reference_labels(args.references)
    plan = []
    worlds: dict[str, dict] = {}
    files: dict[str, str] = {}
    for env_id in ids:                          # everything checked before the first episode
        sc = scenario_of(env_id)
        check_world(env_id)
        worlds[env_id] = to_dict(sc)
        files.update(trace_digests(worlds[env_id]))
        policies = list(dict.fromkeys(["random", *applicable_baselines(sc),
                                       *agents, *references]))
        sweep_tasks(policies, [env_id], seeds)
        plan.append((env_id, policies))
    t0 = time.perf_counter()
    records: list[dict] = []
    failures: list[dict] = []
    header = {"ids": ids, "seeds": seeds, "mrsched_gym": __version__, "worlds": worlds,
              **({"files_sha256": files} if files else {})}
    with RunFolder(args.out, "benchmark", header) as folder:
        done = folder.resumable() if args.resume else []
        for env_id, policies in plan:
            say_notes(folder, done, policies, env_id)
        folder.open_journal(keep=done)
        for env_id, policies in plan:
            print(f"== {env_id}: {len(policies)} policies x {len(seeds)} seeds", flush=True)
            try:
                records += evaluate(policies, [env_id], seeds, workers=args.workers,
                                    progress=not args.quiet, done=done,
                                    on_result=folder.append)
            except EpisodeFailures as e:
                records += e.records
                failures += e.failures
        if failures:
            for f in failures:
                print(f"error: episode failed: {f['policy']} on {f['scenario']} seed "
                      f"{f['seed']}: {f['error']}", file=sys.stderr)
            raise InputError(f"{len(failures)} episodes failed; the journal keeps the others "
                             "(--resume re-runs the failed ones); no scores written")
        scores = normalised_scores(records)
        rows = aggregate(scores)
        text = table(rows, ids)
        version = {"mrsched_gym": __version__, "ids": ids, "seeds": seeds,
                   "normalisation": "(random - x) / (random - best baseline), per id",
                   "agents": agent_versions(agents), "references": references}
        print(text)
        staged = folder.staging()       # removed by the folder if anything below fails
        write_results(records, staged)
        atomic_write(staged / "benchmark.json", json.dumps(json_safe(
            {"suite": version, "aggregate": rows}), indent=1))
        atomic_write(staged / "scores.csv", csv_text(
            [{"scenario": i, "policy": p, "seed": s, "score": float(v)}
             for i, by in scores.items() for p, vals in by.items()
             for s, v in zip(seeds, vals, strict=False)]))
        atomic_write(staged / "benchmark.md", f"suite: {json.dumps(version)}\n\n{text}\n")
        if not args.no_plots:
            plot_iqm(rows, staged / "iqm.png")
        folder.commit(staged)
    print(f"wrote {folder.final} ({time.perf_counter() - t0:.1f} s)")
    return 0


def check_agents(agents: Sequence[str]) -> None:
    """Refuse a benchmark ``--agents`` entry that is not an agent (a baseline there would be
    scored as a baseline, and could become the anchor of the score's 1).

    Raises:
        InputError: Naming the entry.
    """
    from mrsched_gym.errors import InputError
    from mrsched_gym.evaluate import AGENT, parse_policy, policy_role
    for a in agents:
        if policy_role(parse_policy(a).label) != AGENT:
            raise InputError(f"--agents {a!r}: not an agent (agent:NAME, agent:PATH.zip, "
                             f"rllib:FOLDER, FILE.py:Class); reference rules go in "
                             f"--references, and the classical baselines are in the suite already")


def reference_labels(references: Sequence[str]) -> list[str]:
    """The labels of the benchmark's ``--references``, each checked to be a reference rule
    (:func:`~mrsched_gym.evaluate.policy_role`).

    Raises:
        InputError: Naming what is not a reference rule: an unknown name, one of the classical
            baselines (the suite runs them already) or an agent (``--agents``).
    """
    from mrsched_gym.baselines import BASELINES, is_reference_rule
    from mrsched_gym.errors import InputError
    from mrsched_gym.evaluate import REFERENCE, parse_policy, policy_role
    out = []
    for ref in references:
        spec = parse_policy(ref)
        if policy_role(spec.label) != REFERENCE:
            known = ", ".join(n for n in BASELINES if is_reference_rule(n))
            raise InputError(f"--references {ref!r}: not a reference rule (known: {known}); "
                             f"the classical baselines are in the suite already and agents go "
                             f"in --agents")
        out.append(spec.label)
    return list(dict.fromkeys(out))


def agent_versions(agents: Sequence[str]) -> dict[str, dict]:
    """What identifies each agent of a benchmark: its file's hash (the first 16 hex digits of
    its SHA-256), a shipped agent's ``params_sha256`` and the decision rules its metadata adds
    (affinity mask, slow-start rule, speculation rule), so that a cited table names the weights
    it measured."""
    from mrsched_gym.agents.pretrained import pretrained_agents
    from mrsched_gym.evaluate import file_digest, parse_policy, policy_fingerprint
    shipped = pretrained_agents()
    out: dict[str, dict] = {}
    for a in agents:
        spec = parse_policy(a)
        target = Path(spec.target)
        if not target.is_file():                    # an RLlib folder, a policy in code
            out[spec.label] = {"fingerprint": policy_fingerprint(spec)}
            continue
        st = target.stat()
        entry = {"file": target.name,
                 "file_sha256_16": file_digest(str(target), st.st_mtime_ns, st.st_size),
                 **dict(spec.params)}
        info = shipped.get(a[len("agent:"):]) if a.startswith("agent:") else None
        if info and str(target) in (str(info.get("numpy_path")), str(info.get("path"))) \
                and info.get("params_sha256"):          # the shipped file, not a local one
            entry["params_sha256"] = info["params_sha256"]
        out[spec.label] = entry
    return out


def _train(args: argparse.Namespace) -> int:
    from mrsched_gym.agents.train import bundled_configs, load_config, train

    if args.list:
        for name in bundled_configs():
            print(name)
        return 0
    overrides = {"seed": args.seed, "total_timesteps": args.steps, "n_envs": args.n_envs,
                 "name": args.name}
    cfg = load_config(args.config, **overrides)
    print(f"training {cfg.name}: {cfg.algo} / {cfg.policy} network on {cfg.env}, "
          f"{cfg.total_timesteps} steps, {cfg.n_envs} envs, seed {cfg.seed} -> "
          f"{Path(args.out) / cfg.name}", flush=True)
    res = train(cfg, args.out, resume=args.resume, progress=not args.quiet,
                overwrite=args.overwrite)
    base = ", ".join(f"{k} {v:.3f}" for k, v in res["baselines"].items()
                     if not isinstance(v, dict)) or "per id in baselines.json"
    print(f"best validation mean {res['best']:.3f} at step {res['best_step']} "
          f"(baselines on the same seeds: {base})")
    print(f"wrote {res['best_model']}, {res['final_model']}, {res['out']}/evaluations.csv")
    return 0


def _reproduce(args: argparse.Namespace) -> int:
    import time

    from mrsched_gym.reproduce import (
        bundled_reproductions,
        check_claims,
        load_reproduction,
        plot,
        report,
        run_fingerprint,
        run_reproduction,
        summary_json,
        validation_page,
    )
    from mrsched_gym.results import atomic_write, json_safe, safe_child

    if args.list or not args.names:
        for name in bundled_reproductions():
            rep = load_reproduction(name)
            print(f"{name:24s} {rep.title}  [{rep.source}]")
        return 0
    names = bundled_reproductions() if args.names == ["all"] else args.names
    reps = [load_reproduction(name, quick=args.quick) for name in names]   # all checked first
    failed = 0
    results = []
    summary: dict[str, list] = {"comparisons": [], "claims": []}
    for rep in reps:
        if args.seeds:
            rep.seeds = args.seeds
        t0 = time.perf_counter()
        out = safe_child(args.out, rep.name, "reproduction name")
        fingerprint = run_fingerprint(rep)
        records = reusable_reproduction(out, fingerprint) if args.reuse else None
        if records is None:
            records = run_reproduction(rep, workers=args.workers, progress=not args.quiet)
        text = report(rep, records)
        print(text)
        atomic_write(out / "records.json", json.dumps(json_safe(records), indent=1))
        atomic_write(out / "run.json", json.dumps(fingerprint, indent=1))
        atomic_write(out / "report.md", text + "\n")
        written = [out / "records.json", out / "report.md"]
        if not args.no_plots:
            p = plot(rep, records, out / "figure.png")
            if p:
                written.append(p)
        print(f"wrote {', '.join(str(p) for p in written)} ({time.perf_counter() - t0:.1f} s)\n")
        claims = check_claims(rep, records)
        failed += sum(c["holds"] != (c["expect"] != "fail") for c in claims)
        results.append((rep, records))
        for key, rows in summary_json(rep, records, claims).items():
            summary[key] += rows
    if args.json:
        print(f"wrote {atomic_write(args.json, json.dumps(json_safe(summary), indent=1))}")
    if args.doc:
        print(f"wrote {atomic_write(args.doc, validation_page(results))}")
    return 1 if failed and args.strict else 0


def reusable_reproduction(out: Path, fingerprint: dict) -> list[dict] | None:
    """The records of an earlier run in ``out`` when its ``run.json`` equals ``fingerprint``
    (same cases, seeds, version and file contents), else ``None``, saying why it is not reused
    (what changed, or which file is unreadable or cut)."""
    from mrsched_gym.results import check_record, header_diff, nan_for_null
    run, recs = out / "run.json", out / "records.json"
    if not run.is_file() or not recs.is_file():
        return None
    try:
        old = json.loads(run.read_text(encoding="utf-8"))
        records = json.loads(recs.read_text(encoding="utf-8"), object_hook=nan_for_null)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        where = f" (line {e.lineno})" if isinstance(e, json.JSONDecodeError) else ""
        print(f"note: not reusing {out}: {getattr(e, 'filename', None) or 'a file'} there is "
              f"unreadable or cut{where}: {type(e).__name__}; running again", file=sys.stderr)
        return None
    if old != fingerprint:
        changes = header_diff(old, fingerprint) if isinstance(old, dict) else ["run.json"]
        print(f"note: not reusing {out}: {'; '.join(changes[:4])}; running again",
              file=sys.stderr)
        return None
    bad = [i for i, r in enumerate(records if isinstance(records, list) else [None])
           if not isinstance(r, dict) or check_record({"scenario": r.get("case"), **r})]
    if bad:
        print(f"note: not reusing {out}: records.json entry {bad[0]} is not an episode "
              "record; running again", file=sys.stderr)
        return None
    print(f"reusing the records of {out} (same cases, seeds, version and file contents)")
    return records


def _show(args: argparse.Namespace) -> int:
    import yaml

    from mrsched_gym.config import to_dict
    from mrsched_gym.evaluate import scenario_of
    print(yaml.safe_dump(to_dict(scenario_of(args.scenario)), sort_keys=False))
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
                     "runs_without_torch": bool(info.get("numpy_path"))}
              for name, info in pretrained_agents().items()}
    return {"env_ids": dict(ENV_IDS), "scenarios": bundled_scenarios(),
            "baselines": list(BASELINES), "agents": agents}


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
        lines.append(f"  {name:12s} trained for {where}, config {info['config']}{torch}")
    lines += ["", "mrsched-gym list --json prints the same as JSON."]
    return "\n".join(lines)


def _list(args: argparse.Namespace) -> int:
    print(json.dumps(list_data(), indent=2) if args.json else list_table())
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The ``mrsched-gym`` argument parser, one subparser per subcommand."""
    def at_least(lo: int):
        """An argparse ``type=``: an integer >= ``lo``."""
        def parse(text: str) -> int:
            try:
                value = int(text)
            except ValueError:
                raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
            if value < lo:
                raise argparse.ArgumentTypeError(f"must be >= {lo}, got {value}")
            return value
        return parse

    p = argparse.ArgumentParser(prog="mrsched-gym", description=__doc__)
    from mrsched_gym import __version__
    p.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = p.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("compare", help="the leaderboard: policies x seeds on a scenario, ranked "
                       "by its headline metric, with result files and plots")
    c.add_argument("--env", nargs="+", default=["mrsched/Hadoop-v0"],
                   help="env ids, bundled scenario names or scenario YAML paths")
    c.add_argument("--policies", nargs="*", help="baseline names (name:key=value,...), "
                   "agent:PATH.zip (an SB3 zip is a pickle: loading it runs code, so load "
                   "trusted files only), rllib:FOLDER, or your own policy as FILE.py:Class or "
                   "package.module:Class (:key=value,... for its parameters); default: every "
                   "baseline that applies to the scenario")
    c.add_argument("--seeds", type=at_least(1), default=10, help="number of seeds (default 10)")
    c.add_argument("--seed-start", type=at_least(0), default=0, help="first seed (default 0)")
    c.add_argument("--workers", type=at_least(1), default=None,
                   help="processes (default: all cores)")
    c.add_argument("--metric", help="ranking metric (default: the scenario's headline)")
    c.add_argument("--out", default="results", help="output folder (default ./results)")
    c.add_argument("--no-plots", action="store_true", help="skip the PNG plots")
    c.add_argument("--quiet", action="store_true", help="no progress bar")
    c.add_argument("--resume", action="store_true",
                   help="skip the episodes an interrupted or failed run into the same --out "
                   "already finished (its journal); re-run the rest")
    c.add_argument("--no-agents", action="store_true",
                   help="leave out the shipped agents trained for the env (default: included)")
    c.add_argument("--set", nargs="+", action="extend", metavar="KEY=VALUE",
                   help="scenario overrides for every env, e.g. --set workload.load=0.9 "
                   "cluster.racks=2 (values read as YAML): vary one factor and compare; the "
                   "results go to a folder of their own, results/NAME-<hash of the world>")
    c.add_argument("--backend", choices=("local", "ray"), default="local",
                   help="run the episodes in local processes or as Ray tasks (the ray extra; "
                   "joins a running cluster with RAY_ADDRESS)")
    c.set_defaults(fn=_compare)
    b = sub.add_parser("benchmark", help="the benchmark protocol: every id on fixed test seeds, "
                       "normalised scores (0 = random, 1 = best baseline), IQM and probability "
                       "of improvement with bootstrap CIs")
    b.add_argument("--ids", nargs="+", help="env ids (default: the suite, every id but "
                   "ThesisScale-v0 and Stragglers-v0)")
    b.add_argument("--agents", nargs="*", help="agents to score (agent:NAME, agent:PATH.zip, "
                   "rllib:FOLDER, or your own policy as FILE.py:Class or package.module:Class; "
                   "default: the shipped agents; an SB3 zip is a pickle: load trusted files "
                   "only)")
    b.add_argument("--references", nargs="*", default=[],
                   help="reference rules to score and rank beside the agents (srpt, atc, "
                   "srpt-slowstart, edf-affinity:slow_start=1, ...), never the best baseline "
                   "that anchors the score's 1 (default: none)")
    b.add_argument("--seeds", type=at_least(1), default=10,
                   help="number of test seeds from 100 (default 10)")
    b.add_argument("--workers", type=at_least(1), default=None,
                   help="processes (default: all cores)")
    b.add_argument("--out", default="results", help="output parent folder (default ./results)")
    b.add_argument("--resume", action="store_true", help="skip the episodes a previous run "
                   "into the same --out finished")
    b.add_argument("--no-plots", action="store_true", help="skip the PNG plot")
    b.add_argument("--quiet", action="store_true", help="no progress bar")
    b.set_defaults(fn=_benchmark)
    t = sub.add_parser("train", help="train an agent (MaskablePPO / PPO) from a YAML config")
    t.add_argument("config", nargs="?", default="hadoop_set",
                   help="config YAML path or bundled name (default hadoop_set; --list)")
    t.add_argument("--out", default="runs", help="output parent folder (default ./runs)")
    t.add_argument("--resume", help="checkpoint to continue from (OUT/NAME/last_model.zip)")
    t.add_argument("--overwrite", action="store_true", help="replace the run that OUT/NAME "
                   "holds (without it, or --resume, such a folder is refused)")
    t.add_argument("--steps", type=at_least(1), help="override total_timesteps")
    t.add_argument("--seed", type=at_least(0), help="override seed")
    t.add_argument("--n-envs", type=at_least(1), help="override n_envs")
    t.add_argument("--name", help="override the run name")
    t.add_argument("--list", action="store_true", help="list the bundled configs")
    t.add_argument("--quiet", action="store_true", help="no progress bar")
    t.set_defaults(fn=_train)
    d = sub.add_parser("demo", help="run one episode of each policy (default: random and the "
                       "baselines that apply) and print key metrics")
    d.add_argument("--env", default="mrsched/Hadoop-v0",
                   help="env id, bundled scenario name or YAML path (default mrsched/Hadoop-v0)")
    d.add_argument("--seed", type=at_least(0), default=0)
    d.add_argument("--policies", nargs="*", help="policies as in compare (default: random and "
                   "the baselines that apply to the scenario)")
    d.set_defaults(fn=_demo)
    r = sub.add_parser("reproduce", help="run a source paper's experiment and print the paper's "
                       "numbers next to ours (--list names them)")
    r.add_argument("names", nargs="*", help="reproduction names (or 'all'); none = --list")
    r.add_argument("--list", action="store_true", help="list the reproductions")
    r.add_argument("--quick", action="store_true", help="the reduced CI size (fewer seeds/jobs)")
    r.add_argument("--seeds", type=at_least(1), help="override the number of seeds")
    r.add_argument("--workers", type=at_least(1), default=None,
                   help="processes (default: all cores)")
    r.add_argument("--out", default="results/reproductions", help="output folder")
    r.add_argument("--no-plots", action="store_true", help="skip the figure")
    r.add_argument("--quiet", action="store_true", help="no progress bar")
    r.add_argument("--json", help="also write every comparison (paper vs ours) and claim "
                   "outcome of the run into this JSON file")
    r.add_argument("--doc", help="also write the validation page (Markdown) generated from "
                   "the run, e.g. docs/validation.md")
    r.add_argument("--reuse", action="store_true",
                   help="take a reproduction's records from an earlier run into the same --out "
                   "when its file, size and package version are unchanged (the simulator's code "
                   "is trusted not to have changed since)")
    r.add_argument("--strict", action="store_true",
                   help="exit 1 when a claim's outcome differs from the file's expectation")
    r.set_defaults(fn=_reproduce)
    s = sub.add_parser("show-scenario", help="print a scenario with every default filled in")
    s.add_argument("scenario", help="registered id, bundled name or YAML path")
    s.set_defaults(fn=_show)
    ls = sub.add_parser("list", help="list registered ids (scenario, headline, baselines, "
                        "shipped agents), bundled scenarios and baselines")
    ls.add_argument("--json", action="store_true", help="print JSON (for scripts) instead of "
                    "the table")
    ls.set_defaults(fn=_list)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``mrsched-gym`` command (and of ``python -m mrsched_gym``).

    Bad arguments are refused by argparse (usage and an ``error:`` line, exit 2). The project's
    own errors (:class:`~mrsched_gym.errors.MRSchedError`: a bad scenario, trace, policy name...)
    print as one ``error: <message>`` line on stderr and exit 2; anything else is a bug and keeps
    its traceback. A reader that closes the pipe early (``... | head``) ends the command quietly
    (exit 1).
    """
    from mrsched_gym.errors import MRSchedError

    args = build_parser().parse_args(argv)
    from mrsched_gym.lifecycle import handle_termination, signal_number
    handle_termination()
    try:
        code = args.fn(args)
        sys.stdout.flush()
        return code
    except MRSchedError as e:
        print("error: " + " ".join(str(e).split("\n")), file=sys.stderr)
        return 2
    except BrokenPipeError:
        # the reader closed the pipe early (mrsched-gym show-scenario hadoop | head): end quietly.
        # Python flushes stdout again at exit; point it at devnull so that flush cannot fail
        # (the recipe of the Python docs, "Note on SIGPIPE").
        import os
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    except KeyboardInterrupt as e:
        import signal
        sig = signal_number(e)
        print(f"\ninterrupted ({signal.Signals(sig).name}): finished episodes are in the run's "
              "journal (--resume continues)", file=sys.stderr)
        return 128 + sig


if __name__ == "__main__":
    sys.exit(main())
