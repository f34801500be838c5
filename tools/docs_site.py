"""MkDocs hooks: the site's generated pages, built from the code and data at every build.

``mkdocs.yml`` names this file under ``hooks:``. ``on_files`` adds pages that cannot go stale
because nothing of them is committed: one page per registered env id (from the registry and the
scenario files), the baselines by paper with how faithful each reproduction is (from
``docs/reproductions.json`` and ``configs/reproductions/``), the scenario-file reference (from
the config classes, :mod:`docs_config_reference`) and the CLI (from argparse's help). Each env
page shows its world's rendered frame, ``docs/figures/envs/<slug>.png``: images, so committed,
drawn by ``python tools/env_frames.py`` (:mod:`env_frames`; a test redraws one and compares).
``python tools/docs_site.py OUT`` writes them to a folder, for reading without a build.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))

import docs_config_reference  # noqa: E402
from env_frames import CAPTION, env_slug, frame_path  # noqa: E402

#: Short names of the source papers, in the order of the baselines page.
PAPERS = (
    ("MIMP", "Zhang et al., *Minimizing Interference and Maximizing Progress for Hadoop Virtual "
     "Machines*", ("edf", "mp", "mp+ac"), ("mimp-interference", "mimp-scheduling")),
    ("MROrchestrator", "Sharma et al., *MROrchestrator: A Fine-Grained Resource Orchestration "
     "Framework for Hadoop MapReduce*", ("drf",), ("mrorchestrator",)),
    ("Pastorelli et al.", "Pastorelli, Dell'Amico and Michiardi, *OS-Assisted Task Preemption "
     "for Hadoop*", ("preempt-kill", "preempt-wait", "preempt-suspend"),
     ("pastorelli-preemption",)),
    ("RDS", "Cheng et al., *Resource and Deadline-aware Job Scheduling in Dynamic Hadoop "
     "Clusters*", ("rds",), ("rds-case-study", "rds-evaluation")),
    ("Thesis ch. 3", "Polo, *Multi-constraint Scheduling of MapReduce Workloads* (PhD thesis), "
     "chapter 3: the Adaptive Scheduler", ("adaptive", "adaptive-data", "adaptive-hardware"),
     ("thesis-ch3-adaptive",)),
    ("Thesis ch. 4", "Polo, thesis, chapter 4: the Resource-aware Adaptive Scheduler (RAS)",
     ("ras",), ("thesis-ch4-ras",)),
    ("Thesis ch. 5", "Polo, thesis, chapter 5: the Reverse-Adaptive Scheduler for shared "
     "environments", ("reverse-adaptive",), ("thesis-ch5-reverse",)),
    ("Hadoop and the LATE paper", "Hadoop's own schedulers and speculation, and Zaharia et al., "
     "*Improving MapReduce Performance in Heterogeneous Environments* (OSDI 2008)",
     ("random", "fifo", "fair", "capacity", "late", "hadoop-speculative"),
     ("late-speculation",)),
    ("Reference rules (no source paper)", "Textbook rules, ranked only when named, never the "
     "best baseline that sets a benchmark score of 1",
     ("srpt", "atc", "edf-affinity", "edf-slowstart", "srpt-slowstart", "srpt-forecast"), ()),
)


def _first_paragraph(obj) -> str:
    """The docstring's first paragraph on one line, Sphinx roles shown as code."""
    import inspect
    text = (inspect.getdoc(obj) or "").split("\n\n")[0].replace("\n", " ")
    return re.sub(r":\w+:`~?([^`]*)`", r"`\1`", text)


def feature_table(obs_space) -> str:
    """Every feature of the observation by key and index, with its bounds."""
    from mrsched_gym.env import features as ft

    n_kinds = obs_space["decision"].shape[0] - len(ft.DECISION_TAIL_FEATURES)
    for key, feats in (("candidates", ft.CANDIDATE_COLUMNS), ("nodes", ft.NODE_COLUMNS)):
        if obs_space[key].shape[-1] != len(feats):   # the table and the space disagree
            raise RuntimeError(f"obs[{key!r}] has {obs_space[key].shape[-1]} columns, the "
                               f"feature table {len(feats)}")
    columns = {
        "decision": [ft.Feature(f"{ft.KIND_FEATURE.name} ({n_kinds} entries: schedule, admit, "
                                f"preempt{', speculate' if n_kinds > 3 else ''})",
                                ft.KIND_FEATURE.low, ft.KIND_FEATURE.high)] * n_kinds
                    + list(ft.DECISION_TAIL_FEATURES),
        "candidates": list(ft.CANDIDATE_COLUMNS), "nodes": list(ft.NODE_COLUMNS),
        "forecast": [ft.FORECAST_FEATURE], "objective": list(ft.OBJECTIVE_FEATURES)}
    rows = ["| key | index | feature | low | high |", "|---|---|---|---|---|"]
    for key, feats in columns.items():
        for i, f in enumerate(feats):
            if key == "decision" and 0 < i < n_kinds:
                continue                      # the one-hot's entries share one row
            index = f"0-{n_kinds - 1}" if key == "decision" and i == 0 else str(i)
            if key == "forecast":
                index = "each step"
            rows.append(f"| `{key}` | {index} | {f.name} | {f.low:g} | {f.high:g} |")
    return "\n".join(rows)


def _return_line(sc) -> str:
    """What an id's episode return equals: minus its headline when the reward weights only the
    headline's component (every registered id), else minus the weighted objective."""
    from mrsched_gym.config import COMPONENT_METRICS
    component = {m: c for c, m in COMPONENT_METRICS.items()}[sc.reward.headline]
    if dict(sc.reward.weights) == {component: 1.0}:
        return (f'The episode return equals `-info["metrics"]["{sc.reward.headline}"]`, minus the '
                f"headline metric the leaderboard ranks.")
    return ('The episode return equals `-info["metrics"]["objective"]`; the headline metric the '
            f"leaderboard ranks is `{sc.reward.headline}`.")


def env_page(env_id: str) -> str:
    """One env id in Gymnasium's env-page shape."""
    import gymnasium as gym

    from mrsched_gym.baselines import applicable_baselines, is_reference_rule
    from mrsched_gym.config.env_ids import VERSION_HISTORY
    from mrsched_gym.env.flat import flat_id
    from mrsched_gym.registration import ENV_IDS, ENV_OVERRIDES, scenario_for

    sc = scenario_for(env_id)
    history = "\n".join(f"* {line}" for line in VERSION_HISTORY.get(
        env_id, ("v0: initial release (mrsched-gym 0.1.0).",)))
    flat_size = gym.make(flat_id(env_id)).observation_space.shape[0]
    env = gym.make(env_id)
    obs_space = env.observation_space
    k = env.action_space.n - 1
    env.close()
    overrides = dict(ENV_OVERRIDES.get(env_id, {}))
    weights = ", ".join(f"`{n}` x {w:g}" for n, w in sc.reward.weights.items())
    kinds = ["schedule"] + [name for name, on in (
        ("admit", sc.decisions.admission), ("preempt", sc.decisions.preemption.enabled),
        ("speculate", sc.decisions.speculation.enabled)) if on]
    baselines = [n for n in applicable_baselines(sc) if not is_reference_rule(n)]
    rows = "\n".join(f"| `{key}` | `{box.shape}` | `{box.dtype}` |"
                     for key, box in obs_space.spaces.items())
    over = (f" with {', '.join(f'`{p}: {v}`' for p, v in overrides.items())}"
            if overrides else "")
    name = env_id.split('/', 1)[1]
    frame = frame_path(env_id).relative_to(ROOT / "docs").as_posix()
    return f"""# {name}

![A rendered frame of {name}: tasks running per job over time](../{frame})

{CAPTION}

| | |
|---|---|
| id | `{env_id}` |
| scenario | `{ENV_IDS[env_id]}` (`configs/scenarios/{ENV_IDS[env_id]}.yaml`){over} |
| action space | `{env.action_space}` |
| observation space | `Dict` of float32 `Box` arrays (below) |
| decisions | {', '.join(kinds)} |
| headline metric | `{sc.reward.headline}` (lower is better) |
| import | `gymnasium.make("{env_id}")` after `import mrsched_gym` |

## Description

{sc.description.strip() or _first_paragraph(sc)}

Baselines that apply here: {', '.join(f'`{b}`' for b in baselines)}.

## Action Space

`Discrete({k + 1})`: action `i < {k}` picks candidate `i` of the current decision, action `{k}` is
**skip** (schedule: leave the node idle until the next event; admit: reject; preempt: wait;
speculate: launch no copy). `env.unwrapped.action_masks()` and `info["action_mask"]` give the
legal actions; an illegal integer is treated as skip and flagged in `info["invalid_action"]`
(`strict_actions=True` raises instead).

## Observation Space

| key | shape | dtype |
|---|---|---|
{rows}

With `observe_objective=True` the dict also holds `objective` (6): the reward weights. Every
feature, with its bounds (from `mrsched_gym.env.features`):

{feature_table(obs_space)}

## Rewards

Minus the weighted increments of the reward components since the previous decision: {weights}.
{_return_line(sc)}

## Starting State

`reset(seed=...)` draws the whole world from the env's `np_random` (jobs, per-task work,
interactive load, availability and its forecast); `step` is deterministic, so every policy sees
the same world for a seed.

## Episode End

Terminated when every job has finished or been rejected; truncated at `time_limit_s` =
{sc.time_limit_s:,.0f} s of simulated time. The last step's `info["metrics"]` holds every metric.

## Arguments

```python
gymnasium.make("{env_id}", scenario=None, render_mode=None, strict_actions=False,
               observe_objective=False, lean_info=False, allow_idle=False, **overrides)
```

`overrides` set scenario fields by path, e.g. `workload__load=0.9`; every field is in the
[scenario file reference](../reference/scenario-file.md). `render_mode` is `"ansi"` or
`"rgb_array"`. `allow_idle=True` puts skip (the last action) in the action mask at every
decision, so an agent may leave free slots idle; by default a schedule decision with a
candidate masks skip (work-conserving). The others are described in
[the environment](../env.md).

## Flat variant

`gymnasium.make("{flat_id(env_id)}")` is this world for libraries without an action mask or
`Dict` observations (SB3's `PPO("MlpPolicy")`, A2C, rl_zoo3, CleanRL): one float32 `Box` of
{flat_size} values (`decision`, the candidate rows in the choices' order, `nodes`, `forecast`) and
`Discrete({k + 1})` with every action legal. The decision's legal choices are listed in a fixed
order: at a schedule decision the candidates by time to deadline (earliest first, ties in the
base order), at the other decisions the candidates in the base order; then skip where the base
mask offers it. Action `a` plays choice `a mod m` of the `m` choices; `info["played_action"]`
is the base action played, `info["folded"]` whether `a >= m` was folded, and `info["choices"]`
the next decision's choices. Same worlds,
seeds, episode end, reward and headline as `{env_id}` (tested); a model trained on it ranks
on `{env_id}` as `agent:PATH` (the
[training guide](../guide/train.md#without-an-action-mask-the-flat-variants)).
For tools that take only an id string: `mrsched_gym:{flat_id(env_id)}`.

## Version History

{history}
"""


def envs_index() -> str:
    """The table of registered ids."""
    from mrsched_gym.registration import ENV_IDS, scenario_for
    lines = ["# Environments", "", "Every id is registered when `mrsched_gym` is imported. "
             "One page per id below, generated from its scenario file. Each id has a flat "
             "variant, `mrsched/<Name>-flat-vN` (one `Box` observation, every action legal, the "
             "same worlds; its page's \"Flat variant\"), for libraries without action masks; "
             "tools that take only an id string use `mrsched_gym:ID`. Earlier versions stay "
             "registered with their old behaviour: `mrsched/Shared-v0` and "
             "`mrsched/Admission-v0` (their pages' \"Version History\").", "",
             "| id | scenario | headline | nodes | candidates K |", "|---|---|---|---|---|"]
    for env_id, name in ENV_IDS.items():
        sc = scenario_for(env_id)
        lines.append(f"| [`{env_id}`]({env_slug(env_id)}.md) | `{name}` | "
                     f"`{sc.reward.headline}` | {sc.cluster.n_nodes} | "
                     f"{sc.decisions.max_candidates} |")
    return "\n".join(lines) + "\n"


def _fmt(x) -> str:
    if x is None:
        return "-"
    if isinstance(x, float):
        return f"{x:.3g}"
    return str(x)


def readings_section() -> list[str]:
    """The table that chose each thesis scheduler's reading of Eq. 1 (``docs/readings.json``,
    written by ``tools/compare_readings.py``)."""
    data = json.loads((ROOT / "docs" / "readings.json").read_text())
    lines = ["## Where the thesis is ambiguous: its own numbers choose", "",
             "The thesis does not say how Eq. 1's division is rounded: `slots_estimate: fluid` "
             "divides the remaining work by the time left, `waves` counts the time left in "
             "whole waves of task length. Each scheduler uses the reading under which its own "
             "chapter's numbers come out closer; the other stays an option. Defaults: "
             + ", ".join(f"`{k}` {v}" for k, v in data["defaults"].items())
             + f". Measured by `{data['command']}`:", "",
             "| chapter | scheduler | measure | thesis | fluid | waves |",
             "|---|---|---|---|---|---|"]
    for r in data["rows"]:
        measure = r["measure"].replace("|", "\\|")
        lines.append(f"| {r['chapter']} | `{r['scheduler']}` | {measure} | "
                     f"{_fmt(r.get('thesis'))} | {_fmt(r.get('fluid'))} | "
                     f"{_fmt(r.get('waves'))} |")
    return lines + [""]


def baselines_page() -> str:
    """The baselines, one section per source paper, with how faithful each reproduction is."""
    from mrsched_gym.baselines import BASELINES
    from mrsched_gym.reproduce import load_reproduction

    summary = json.loads((ROOT / "docs" / "reproductions.json").read_text())
    lines = ["# Baselines", "",
             "Each baseline is a small class acting through the same decision interface as an "
             "agent (`decide(view)` reads the read-only cluster view and returns the action "
             "index), with its paper's parameters as defaults: `make_baseline(\"fair\", "
             "delay=0)` overrides one, and on the command line `fair:delay=0`. Every "
             "gap-filling choice is written in its module's docstring "
             "(see the [API reference](reference/api.md#baselines)).", "",
             "*How faithful* comes from the paper's own experiments re-run in the simulator "
             "(`mrsched-gym reproduce`): the claims that hold as the paper says, and the paper's "
             "numbers beside ours. This page is generated from `docs/reproductions.json` when "
             "the site is built; [Validation](validation.md) has every case.", ""]
    lines += readings_section()
    for short, title, names, reproductions in PAPERS:
        lines += [f"## {short}", "", title + ".", "", "| name | class | what it does |",
                  "|---|---|---|"]
        for n in names:
            factory = BASELINES[n]
            cls = getattr(factory, "func", factory)   # a partial names its class
            bound = ", ".join(f"`{k}={v!r}`" for k, v in getattr(factory, "keywords", {}).items())
            what = _first_paragraph(cls).replace("|", "/") + (f" Here: {bound}." if bound else "")
            lines.append(f"| `{n}` | `{cls.__name__}` | {what} |")
        for rep_name in reproductions:
            rep = load_reproduction(rep_name)
            claims = [c for c in summary["claims"] if c["reproduction"] == rep_name]
            comps = [c for c in summary["comparisons"] if c["reproduction"] == rep_name]
            held = [c for c in claims if c["kind"] != "calibration"]
            ok = sum(1 for c in held if c["holds"] == (c.get("expect", "hold") == "hold"))
            checks = [c for c in claims if c["kind"] == "calibration"]
            tally = []
            if held:
                tally.append(f"claims reproduced: {sum(c['holds'] for c in held)} of "
                             f"{len(held)} ({ok} of {len(held)} as this project expects)")
            if checks:
                tally.append(f"calibration checks passed: {sum(c['holds'] for c in checks)} "
                             f"of {len(checks)}")
            lines += ["", f"### How faithful: `{rep_name}`", "",
                      f"**{rep.title}** ({rep.seeds} seeds). {'; '.join(tally).capitalize()}.",
                      ""]
            causes = {c["text"]: c.get("cause") for c in rep.claims}
            for c in claims:
                mark = "holds" if c["holds"] else "does not hold"
                cause = causes.get(c["claim"]) if not c["holds"] else None
                lines.append(f"- {mark} ({c['cases_held']} of {c['cases_total']} cases): "
                             f"{c['claim']}" + (f". *Measured cause:* {cause.rstrip('.')}."
                                                if cause else ""))
            if comps:
                lines += ["", "| figure | item | policy | metric | paper | ours | unit |",
                          "|---|---|---|---|---|---|---|"]
                for c in comps[:8]:
                    lines.append(f"| {c['figure']} | {c['item']} | {c['policy']} | "
                                 f"{c['metric']} | {_fmt(c['paper'])} | {_fmt(c['ours'])} | "
                                 f"{c['unit']} |")
                if len(comps) > 8:
                    lines.append(f"\n{len(comps) - 8} more numbers on the "
                                 f"[validation page](validation.md#{rep_name}).")
            if rep.notes:
                lines += ["", "Why ours differs: " + rep.notes.strip()]
        lines.append("")
    return "\n".join(lines)


def _parser() -> argparse.ArgumentParser:
    """The ``mrsched-gym`` parser (:func:`mrsched_gym.cli.build_parser`)."""
    from mrsched_gym.cli import build_parser
    return build_parser()


def cli_page() -> str:
    """``mrsched-gym --help`` and every subcommand's help."""
    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "100"
    try:
        parser = _parser()
        lines = ["# Command line", "", "`mrsched-gym` (also `python -m mrsched_gym` where "
                 "available). Generated from the parser's help when the site is built.", "",
                 "```text", parser.format_help().rstrip(), "```", ""]
        for action in parser._actions:   # noqa: SLF001 - argparse has no public accessor
            if isinstance(action, argparse._SubParsersAction):   # noqa: SLF001
                for name, sub in action.choices.items():
                    lines += [f"## `{name}`", "", "```text", sub.format_help().rstrip(),
                              "```", ""]
        return "\n".join(lines)
    finally:
        if old is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = old


def generated_pages() -> dict[str, str]:
    """Site path -> Markdown of every generated page."""
    from mrsched_gym.registration import ENV_IDS
    with contextlib.redirect_stdout(io.StringIO()):
        pages = {"envs/index.md": envs_index(), "baselines.md": baselines_page(),
                 "reference/scenario-file.md": docs_config_reference.page(),
                 "reference/cli.md": cli_page()}
        for env_id in ENV_IDS:
            pages[f"envs/{env_slug(env_id)}.md"] = env_page(env_id)
    return pages


def on_files(files, config):
    """MkDocs hook: add the generated pages to the site's files."""
    from mkdocs.structure.files import File
    for path, text in generated_pages().items():
        files.append(File.generated(config, path, content=text))
    return files


if __name__ == "__main__":
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "generated-docs")
    for path, text in generated_pages().items():
        (out / path).parent.mkdir(parents=True, exist_ok=True)
        (out / path).write_text(text, encoding="utf-8")
        print(out / path)
