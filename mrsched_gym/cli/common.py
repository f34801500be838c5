"""What several subcommands share: the key metrics of a table, the pickle notice, checking a
world before its episodes, resume notes, ``--set`` overrides and the results folder's name."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path

KEY_METRICS = ("deadline_penalty_h", "deadline_miss_pct", "mean_jct_s", "p95_jct_s",
               "utilisation", "data_locality_pct", "web_response_mean_ms", "wasted_work_s")
PICKLE_NOTICE = ("note: {what}: SB3 checkpoints (.zip) are Python pickles: loading one runs any "
                 "code it holds; load trusted files only (the shipped agents are numpy "
                 "weights and JSON)")
noticed: list[bool] = []


def pickle_notice(policies: Sequence[str]) -> None:
    """Say once per process that an SB3 checkpoint loaded by path is a pickle (finding 14)."""
    zips = [p for p in policies if isinstance(p, str) and p.endswith(".zip")]
    if zips and not noticed:
        noticed.append(True)
        print(PICKLE_NOTICE.format(what=", ".join(zips)), file=sys.stderr)


def check_world(env: str, overrides: dict | None = None) -> None:
    """Build the env of ``env`` once, so that what only building reads (trace files and their
    values) fails before the first episode, not in every episode."""
    from mrsched_gym.evaluate import make_env
    make_env(env, overrides).close()


def say_notes(folder, done: Sequence[dict], policies: Sequence, scenario: str,
              seeds: Sequence[int] | None = None) -> int:
    """Print what resuming skips: journal lines that were not records (naming the line), and
    agents and policy files whose content changed since the journal (their episodes run again);
    ``policies``: names or parsed specs. Returns how many episodes of ``done`` this run of
    ``policies`` on ``scenario`` (and ``seeds``, if given) reuses: the count to report."""
    from mrsched_gym.evaluate import parse_policy, policy_fingerprint, unique_labels
    for note in folder.notes:
        print(f"note: {note}", file=sys.stderr)
    folder.notes.clear()
    specs = unique_labels([parse_policy(p) if isinstance(p, str) else p for p in policies])
    fps = {sp.label: policy_fingerprint(sp) for sp in specs}
    for sp in specs:
        stale = [r for r in done if r["policy"] == sp.label and r["scenario"] == scenario
                 and r.get("_policy_fp") != fps[sp.label]]
        if stale and sp.kind != "baseline":
            print(f"note: {sp.label}: its file changed since the journal (file hash); its "
                  f"{len(stale)} resumed episodes run again", file=sys.stderr)
    wanted = None if seeds is None else set(seeds)
    asked = [r for r in done if r["scenario"] == scenario and r["policy"] in fps
             and (wanted is None or r["seed"] in wanted)]
    kept = {id(r) for r in asked}
    other = [r for r in done if r["scenario"] == scenario and id(r) not in kept]
    if other:
        names = sorted({r["policy"] for r in other})
        more = ", ..." if len(names) > 6 else ""
        print(f"note: the journal holds {len(other)} finished episodes of policies or seeds "
              f"this run does not ask for ({', '.join(names[:6])}{more}); they are not in its "
              "results: resume with the first run's --policies and --seeds to have them",
              file=sys.stderr)
    return sum(1 for r in asked if r.get("_policy_fp") == fps[r["policy"]])


def parse_settings(items: list[str]) -> dict[str, object]:
    """``--set KEY=VALUE`` items as scenario overrides: dotted keys (``workload.load``), values
    read as YAML (``0.9``, ``true``, ``[1, 2]``, ``diurnal``); a key given twice is an error. A
    ``trace`` path relative to the working directory is made absolute (as a scenario file's are
    made relative to its folder), so the run's records say which file it read."""
    import yaml

    from mrsched_gym.config import resolve_relative_paths
    from mrsched_gym.config.bounded_yaml import BoundedLoader
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
            value = yaml.load(text, Loader=BoundedLoader) if text.strip() else ""  # noqa: S506
        except yaml.YAMLError as e:
            raise InputError(f"--set {item!r}: the value is not YAML: "
                             f"{str(e).splitlines()[0]}") from None
        out[key] = as_number(value)
        tail = key.rsplit(".", 1)[-1]             # a trace key, or a section holding some
        out[key] = resolve_relative_paths({tail: out[key]}, Path.cwd())[tail]
    return out


def as_number(value: object) -> object:
    """A string that reads as a number (YAML 1.1 reads ``9e2`` as text) as that float, also as
    an item of a list (``[0, 1e-9]``)."""
    if isinstance(value, list):
        return [as_number(v) for v in value]
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


#: The phases at which a policy fails before its first episode (its code, at load).
LOAD_PHASES = ("import", "construction")


def failure_lines(failures: Sequence[dict], where: str = "") -> list[str]:
    """The error lines of a sweep's failures: one per failed episode, and one per policy whose
    own code failed at import or construction (naming the policy and the phase; its episodes
    did not run). ``where``: what to add to each line (where the tracebacks are)."""
    lines: list[str] = []
    said: set[str] = set()
    for f in failures:
        phase = f.get("phase")
        if phase in LOAD_PHASES:
            if f["policy"] not in said:
                said.add(f["policy"])
                what = str(f["error"]).removeprefix(f"policy {f['policy']!r}: ")
                lines.append(f"error: policy {f['policy']} failed at {phase}: {what}{where}")
            continue
        lines.append(f"error: episode failed: {f['policy']} on {f['scenario']} seed "
                     f"{f['seed']}: {f['error']}{where}")
    return lines
