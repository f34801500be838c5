"""``mrsched-gym benchmark``: the benchmark protocol over the suite, and the checks of its agents
and references."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from mrsched_gym.cli.common import check_world, failure_lines, pickle_notice, say_notes


def benchmark_command(args: argparse.Namespace) -> int:
    """The benchmark protocol (:mod:`mrsched_gym.evaluate.benchmark`): every id of the suite on the
    test seeds, normalised scores, IQM and probability of improvement with bootstrap CIs."""
    import time

    from mrsched_gym import __version__
    from mrsched_gym.agents.pretrained import current_agents
    from mrsched_gym.baselines import applicable_baselines
    from mrsched_gym.config import to_dict
    from mrsched_gym.errors import InputError
    from mrsched_gym.evaluate import evaluate, scenario_of, sweep_tasks
    from mrsched_gym.evaluate.benchmark import (
        SUITE,
        TEST_SEEDS,
        agent_in_world,
        aggregate,
        normalised_scores,
        paired_rows,
        paired_table,
        plot_iqm,
        table,
    )
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
        f"agent:{n}" for n, info in current_agents().items() if info.get("numpy_path")]
    check_agents(agents, ids)
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
                                       *(agent_in_world(a, env_id) for a in agents),
                                       *references]))
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
                                    on_result=folder.append,
                                    decision_budget_s=args.decision_budget)
            except EpisodeFailures as e:
                records += e.records
                failures += e.failures
        if failures:
            for line in failure_lines(failures):
                print(line, file=sys.stderr)
            raise InputError(f"{len(failures)} episodes failed; the journal keeps the others "
                             "(--resume re-runs the failed ones); no scores written")
        scores = normalised_scores(records)
        rows = aggregate(scores)
        text = table(rows, ids)
        paired = paired_rows(records)
        if paired:
            text += ("\n\nPer id, each agent paired with the best reference rule and the best "
                     "baseline of that world (headline metric, lower is better; seeds are "
                     "common random numbers):\n\n" + paired_table(paired))
        version = {"mrsched_gym": __version__, "ids": ids, "seeds": seeds,
                   "normalisation": "(random - x) / (random - best baseline), per id",
                   "agents": agent_versions(agents, ids), "references": references}
        print(text)
        staged = folder.staging()       # removed by the folder if anything below fails
        write_results(records, staged)
        atomic_write(staged / "benchmark.json", json.dumps(json_safe(
            {"suite": version, "aggregate": rows, "paired": paired}), indent=1))
        atomic_write(staged / "scores.csv", csv_text(
            [{"scenario": i, "policy": p, "seed": s, "score": float(v)}
             for i, by in scores.items() for p, vals in by.items()
             for s, v in zip(seeds, vals, strict=False)]))
        atomic_write(staged / "benchmark.md", f"suite: {json.dumps(version)}\n\n{text}\n")
        if not args.no_plots:
            plot_iqm(rows, staged / "iqm.png", ids=ids, seeds=seeds)
        folder.commit(staged)
    print(f"wrote {folder.final} ({time.perf_counter() - t0:.1f} s)")
    return 0


def check_agents(agents: Sequence[str], ids: Sequence[str]) -> None:
    """Refuse a benchmark ``--agents`` entry that is not an agent (a baseline there would be
    scored as a baseline, and could become the anchor of the score's 1), and a per-id entry
    (``{id}`` in it) whose checkpoint is missing for one of ``ids``.

    Raises:
        InputError: Naming the entry (and the id).
    """
    from mrsched_gym.errors import InputError
    from mrsched_gym.evaluate import AGENT, parse_policy, policy_role
    from mrsched_gym.evaluate.benchmark import agent_in_world
    for a in agents:
        for env_id in ids:
            try:
                agent_in_world(a, env_id)
            except InputError as e:
                raise InputError(f"--agents {a!r} for {env_id}: {e}") from None
        spec = agent_in_world(a, ids[0])
        if policy_role(parse_policy(spec).label if isinstance(spec, str) else spec.label) \
                != AGENT:
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


def agent_versions(agents: Sequence[str], ids: Sequence[str] = ()) -> dict[str, dict]:
    """What identifies each agent of a benchmark: its file's hash (the first 16 hex digits of
    its SHA-256), a shipped agent's ``params_sha256`` and the decision rules its metadata adds
    (affinity mask, slow-start rule, speculation rule), so that a cited table names the weights
    it measured; for a per-id agent (``{id}`` in it), that of each id's checkpoint by id name."""
    from mrsched_gym.evaluate import parse_policy
    from mrsched_gym.evaluate.benchmark import ID_FIELD, agent_in_world, id_name
    out: dict[str, dict] = {}
    for a in agents:
        if ID_FIELD in a and ids:
            out[agent_in_world(a, ids[0]).label] = {
                id_name(i): agent_version(a.replace(ID_FIELD, id_name(i))) for i in ids}
        else:
            out[parse_policy(a).label] = agent_version(a)
    return out


def agent_version(agent: str) -> dict:
    """:func:`agent_versions`' entry of one agent string."""
    from mrsched_gym.agents.pretrained import pretrained_agents
    from mrsched_gym.evaluate import file_digest, parse_policy, policy_fingerprint
    spec = parse_policy(agent)
    target = Path(spec.target)
    if not target.is_file():                    # an RLlib folder, a policy in code
        return {"fingerprint": policy_fingerprint(spec)}
    entry = {"file": target.name,
             "file_sha256_16": file_digest(str(target)),
             **dict(spec.params)}
    info = pretrained_agents().get(agent[len("agent:"):]) if agent.startswith("agent:") else None
    if info and str(target) in (str(info.get("numpy_path")), str(info.get("path"))) \
            and info.get("params_sha256"):          # the shipped file, not a local one
        entry["params_sha256"] = info["params_sha256"]
    return entry
