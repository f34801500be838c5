"""Paper reproductions: each experiment of a source paper as a runnable, checked file.

A reproduction file (``configs/reproductions/<name>.yaml``) holds:

* ``title``, ``source`` (seed and section/figure/table), ``description``;
* ``scenario``: a full scenario mapping (the schema of ``configs/scenarios``), or ``base`` (a
  bundled scenario name or env id) plus ``overrides``;
* ``cases``: the paper's rows, each ``{name, overrides, policies}`` (``policies`` defaults to the
  file's ``policies``); the scenario of a case is the base with the case's overrides;
* ``metrics``: episode metrics to report (see :mod:`mrsched_gym.metrics`); ``job_metrics``:
  per-job quantities keyed by the jobs' labels (``exec_s`` = finish - arrival, ``finish_s``,
  ``beyond_rel`` = time beyond the deadline relative to the execution time, thesis Table 5.7);
* ``seeds`` (full run) and ``quick`` (``{seeds, overrides}``, the reduced CI run);
* ``paper``: the numbers the paper states, each ``{case, policy, metric, value, ref}`` (+
  ``job``; + ``change_vs: POLICY`` when the paper states a relative change, e.g. -0.38 for "38%
  lower JCT than Fair"; + ``source``, which row of the paper, e.g. "thesis Table 5.7 simulated";
  + ``unit``; + ``over_jobs: mean | max`` for the average or largest per-job change); printed
  next to ours with the deviation;
* ``claims``: the qualitative orderings, checked case by case with paired tests over seeds and
  reported as "holds at k of n cases" (:mod:`mrsched_gym.claims` gives the rules and the keys:
  ``text, metric, better, worse, cases, holds_where, tolerance, kind, expect``). ``expect: fail``
  marks a claim we do not reproduce (reported, and the test flags the day it starts to hold);
* ``plot``: ``{kind: bars | line, metric}``: the figure, written next to the results;
* ``notes``: why ours differs from the paper (prose for the generated validation page).

:func:`run_reproduction` runs it (a fork pool over cases x policies x seeds, common random numbers)
and :func:`report` prints the tables; ``mrsched-gym reproduce NAME`` does both.
:func:`summary_json` gives the machine-readable comparisons and claims (``--json PATH``) and
:func:`validation_page` the page ``docs/validation.md`` (``--doc PATH``), both generated from the
runs.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from mrsched_gym.claims import check_claim, claim_cases
from mrsched_gym.config import (
    ConfigError,
    Scenario,
    bundled_names,
    config_source,
    from_dict,
    parse_yaml,
    scenario_from_dict,
    with_overrides,
)
from mrsched_gym.evaluate import check_policy, make_policy, mean_ci95, run_episode, run_parallel

JOB_METRICS = ("exec_s", "finish_s", "beyond_rel", "map_exec_s")


@dataclass(frozen=True)
class Case:
    """One row group of a reproduction: a scenario variant and the policies run on it."""

    name: str
    scenario: Scenario
    policies: tuple[str, ...]


@dataclass
class Reproduction:
    """A parsed reproduction file (see module docstring)."""

    name: str
    title: str
    source: str
    description: str
    cases: list[Case]
    metrics: list[str]
    job_metrics: list[str]
    seeds: int
    paper: list[dict]
    claims: list[dict]
    plot: dict = field(default_factory=dict)
    notes: str = ""
    quick: bool = False


def bundled_reproductions() -> list[str]:
    """Names of the reproduction files shipped in ``configs/reproductions``."""
    return bundled_names("reproductions")


#: Scenario fields added after reproduction records were first fingerprinted, by path (and each
#: job's arrival_jitter_s): left out while at their default, so earlier records stay reusable.
ADDED_LATER = (("decisions", "speculation"), ("workload", "deadline_base"))


def _fingerprinted_scenario(scenario: Scenario) -> dict[str, Any]:
    """``to_dict(scenario)`` without the :data:`ADDED_LATER` fields that have their default."""
    from mrsched_gym.config import to_dict
    data, default = to_dict(scenario), to_dict(Scenario())
    data["workload"]["jobs"] = [{k: v for k, v in j.items() if (k, v) != ("arrival_jitter_s", 0)}
                                for j in data["workload"]["jobs"]]
    for path in ADDED_LATER:
        here, base = data, default
        for key in path[:-1]:
            here, base = here[key], base[key]
        if here.get(path[-1]) == base[path[-1]]:
            del here[path[-1]]
    return data


def run_fingerprint(rep: Reproduction) -> dict[str, Any]:
    """What a run's records depend on besides the simulator's code: every case's resolved
    scenario and policies, the job metrics kept, the number of seeds and the package version
    (``reproduce --reuse`` reuses records only when all of them match; claims, paper numbers and
    notes may change in between)."""
    import hashlib
    import json

    from mrsched_gym import __version__
    worlds = [[c.name, _fingerprinted_scenario(c.scenario), list(c.policies)] for c in rep.cases]
    text = json.dumps([worlds, rep.job_metrics], sort_keys=True, default=str)
    files = input_digests(rep)
    return {"reproduction": rep.name, "cases_sha256": hashlib.sha256(text.encode()).hexdigest(),
            "seeds": rep.seeds, "version": __version__,
            **({"files_sha256": files} if files else {})}


def input_digests(rep: Reproduction) -> dict[str, str]:
    """The content of every file the cases read: the SHA-256 of each trace, and each agent's
    fingerprint (its checkpoint's hash), so ``--reuse`` notices an edited file."""
    from mrsched_gym.config import to_dict
    from mrsched_gym.evaluate import parse_policy, policy_fingerprint
    from mrsched_gym.models.traces import trace_digests
    out: dict[str, str] = {}
    for c in rep.cases:
        out.update(trace_digests(to_dict(c.scenario)))
        for p in c.policies:
            spec = parse_policy(p)
            if spec.kind != "baseline":
                out[spec.label] = policy_fingerprint(spec)
    return out


@dataclass(frozen=True)
class CaseSpec:
    """A case as written in a reproduction file (module docstring)."""

    name: str
    overrides: dict[str, Any] = field(default_factory=dict)
    policies: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class QuickSpec:
    """The reduced CI run of a reproduction: fewer seeds and scenario overrides."""

    seeds: int = 1
    overrides: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ReproductionFile:
    """The schema of a reproduction file (module docstring), read by the package's strict
    builder (:func:`mrsched_gym.config.from_dict`): unknown keys and wrong types are refused."""

    title: str
    cases: list[CaseSpec]
    source: str = ""
    description: str = ""
    scenario: dict[str, Any] | None = None
    base: str | None = None
    overrides: dict[str, Any] = field(default_factory=dict)
    policies: list[str] = field(default_factory=list)
    metrics: list[str] = field(default_factory=list)
    job_metrics: list[str] = field(default_factory=list)
    seeds: int = 5
    quick: QuickSpec = QuickSpec()
    paper: list[dict[str, Any]] = field(default_factory=list)
    claims: list[dict[str, Any]] = field(default_factory=list)
    plot: dict[str, Any] = field(default_factory=dict)
    notes: str = ""


def load_reproduction(name: str, quick: bool = False) -> Reproduction:
    """Parse a bundled reproduction (by name) or a YAML path; ``quick`` applies its CI size."""
    src, text = config_source(name, "reproductions")
    f = from_dict(ReproductionFile, parse_yaml(text, src), src)
    if f.scenario is not None:
        base = scenario_from_dict(f.scenario, source=f"{src}: scenario")
    elif f.base is not None:
        from mrsched_gym.evaluate import scenario_of
        base = scenario_of(f.base)
    else:
        raise ConfigError(f"{src}: needs a scenario or a base")
    base = with_overrides(base, f.overrides)
    if quick:
        base = with_overrides(base, f.quick.overrides)
    cases = []
    for i, c in enumerate(f.cases):
        where = f"{src}: cases[{i}]"
        pols = tuple(c.policies or f.policies)
        if not pols:
            raise ConfigError(f"{where}: no policies")
        for p in pols:
            try:
                check_policy(p)
            except (KeyError, ValueError, TypeError) as e:
                raise ConfigError(f"{where}: policy {p!r}: {e}") from None
        try:
            sc = with_overrides(base, c.overrides)
        except ConfigError as e:
            raise ConfigError(f"{where}: {e}") from None
        cases.append(Case(c.name, sc, pols))
    names = {c.name for c in cases}
    for m in f.job_metrics:
        if m not in JOB_METRICS:
            raise ConfigError(f"{src}: job_metrics: unknown {m!r} "
                              f"(known: {', '.join(JOB_METRICS)})")
    for i, e in enumerate(f.paper):
        if e.get("over_jobs") and (e["over_jobs"] not in ("mean", "max") or not e.get(
                "change_vs") or e["metric"] not in f.job_metrics):
            raise ConfigError(f"{src}: paper[{i}]: over_jobs (mean | max) needs change_vs and a "
                              f"per-job metric listed in job_metrics")
        vs = e.get("change_vs")
        for r in [e.get("case"), *([vs[0]] if isinstance(vs, list) else [])]:
            if r not in names:
                raise ConfigError(f"{src}: paper[{i}]: unknown case {r!r}")
    case_names = [c.name for c in cases]
    for i, e in enumerate(f.claims):
        claim_cases(e, case_names, f"{src}: claims[{i}]")
    return Reproduction(name=Path(name).stem, title=f.title, source=f.source,
                        description=f.description.strip(), cases=cases, metrics=list(f.metrics),
                        job_metrics=list(f.job_metrics),
                        seeds=f.quick.seeds if quick else f.seeds, paper=list(f.paper),
                        claims=list(f.claims), plot=dict(f.plot), notes=f.notes.strip(),
                        quick=quick)


def _job_values(log, names: list[str]) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for i, label in enumerate(log.labels):
        if not label:
            continue
        fin, arr, dl = log.finish_s[i], log.arrival_s[i], log.deadline_s[i]
        ex = fin - arr
        vals = {"exec_s": ex, "finish_s": fin, "map_exec_s": log.map_finish_s[i] - arr,
                "beyond_rel": max(0.0, fin - dl) / ex if math.isfinite(dl) and ex > 0 else 0.0}
        out[label] = {k: float(vals[k]) for k in names}
    return out


def _run_one(task: tuple) -> dict[str, Any]:
    from threadpoolctl import threadpool_limits
    case, policy, seed, job_metrics = task
    with threadpool_limits(limits=1):          # records independent of BLAS threading
        res = run_episode(case.scenario, make_policy(policy), seed, keep_log=bool(job_metrics))
    rec = {"case": case.name, "policy": policy, "seed": seed, **res["metrics"]}
    if job_metrics:
        rec["jobs"] = _job_values(res["log"], job_metrics)
    return rec


def run_reproduction(rep: Reproduction, workers: int | None = None,
                     progress: bool = True) -> list[dict[str, Any]]:
    """Run every case x policy x seed; records in that order."""
    tasks = [(c, p, s, rep.job_metrics) for c in rep.cases for p in c.policies
             for s in range(rep.seeds)]
    return run_parallel(_run_one, tasks, workers, progress, rep.name)


def value_of(records: list[dict], case: str, policy: str, metric: str,
             job: str | None = None) -> tuple[float, float]:
    """Mean and 95% CI half-width of ``metric`` (or a job's metric) over the seeds."""
    vals = []
    for r in records:
        if r["case"] == case and r["policy"] == policy:
            vals.append(r["jobs"][job][metric] if job else r[metric])
    if not vals:
        raise KeyError(f"no records for case {case!r}, policy {policy!r}")
    return mean_ci95(vals)


def paper_counterpart(records: list[dict], e: Mapping) -> float:
    """Our number for a paper entry: the mean of its metric, or with ``change_vs: POLICY`` (or
    ``[CASE, POLICY]``, another world) the relative change against that policy in the same case
    (or that case) (-0.38 = 38% lower). With ``over_jobs: mean | max`` (a per-job metric and
    ``change_vs``): each job's relative change, then their average or the largest reduction."""
    vs = e.get("change_vs")
    case, policy = ((vs[0], vs[1]) if isinstance(vs, (list, tuple)) else (e["case"], vs)) \
        if vs else (None, None)
    if e.get("over_jobs"):                       # per-job changes, then their mean or maximum
        labels = sorted({lab for r in records for lab in r.get("jobs", {})})
        changes = [value_of(records, e["case"], e["policy"], e["metric"], lab)[0]
                   / value_of(records, case, policy, e["metric"], lab)[0] - 1.0
                   for lab in labels]
        return float(np.mean(changes)) if e["over_jobs"] == "mean" else float(min(changes))
    ours = value_of(records, e["case"], e["policy"], e["metric"], e.get("job"))[0]
    if vs:
        base = value_of(records, case, policy, e["metric"], e.get("job"))[0]
        return ours / base - 1.0 if base else math.nan
    return ours


def check_claims(rep: Reproduction, records: list[dict]) -> list[dict[str, Any]]:
    """Evaluate every claim case by case (:func:`mrsched_gym.claims.check_claim`)."""
    names = [c.name for c in rep.cases]
    return [check_claim(c, names, records, f"{rep.name}: claims[{i}]", paired=not rep.quick)
            for i, c in enumerate(rep.claims)]


def unit_of(entry: Mapping) -> str:
    """The unit of a paper entry: its ``unit``, else read off the metric's name."""
    if entry.get("unit"):
        return str(entry["unit"])
    if entry.get("change_vs"):
        return "relative change"
    m = entry["metric"]
    for suffix, unit in (("_pct", "%"), ("_ms", "ms"), ("_h", "job-hours"), ("_s", "s")):
        if m.endswith(suffix):
            return unit
    return "beyond/exec ratio" if m == "beyond_rel" else ""


def paper_comparisons(rep: Reproduction, records: list[dict]) -> list[dict[str, Any]]:
    """The paper's numbers beside ours: ``{reproduction, figure, item, source, paper, ours,
    unit, ...}`` per paper entry."""
    return [{"reproduction": rep.name, "figure": str(e.get("ref", "")),
             "item": str(e.get("job") or (f"{e['over_jobs']} over jobs" if e.get("over_jobs")
                                          else e["case"])),
             "source": str(e.get("source") or rep.source), "paper": float(e["value"]),
             "ours": paper_counterpart(records, e), "unit": unit_of(e),
             "case": e["case"], "policy": e["policy"], "metric": e["metric"],
             "change_vs": e.get("change_vs")} for e in rep.paper]


def summary_json(rep: Reproduction, records: list[dict],
                 claims: list[dict] | None = None) -> dict[str, list[dict]]:
    """The machine-readable results of one reproduction: ``{"comparisons": [...]``
    (:func:`paper_comparisons`), ``"claims": [{reproduction, claim, holds, cases_held,
    cases_total, ...}]}`` (``claims``: :func:`check_claims`'s output, if already computed)."""
    claims = check_claims(rep, records) if claims is None else claims
    return {"comparisons": paper_comparisons(rep, records),
            "claims": [{"reproduction": rep.name, "claim": c["text"], "holds": c["holds"],
                        "cases_held": c["cases_held"], "cases_total": c["cases_total"],
                        "kind": c["kind"], "expect": c["expect"], "metric": c["metric"],
                        "holds_where": c["holds_where"], "per_case": c["per_case"]}
                       for c in claims]}


def claim_line(c: Mapping) -> str:
    """One claim as a Markdown bullet: status, text, and the per-case outcome."""
    status = "reproduced" if c["holds"] else "NOT reproduced"
    if c["expect"] == "fail":
        status += " (known)" if not c["holds"] else " (now holds: update the file)"
    if c["kind"] == "calibration":
        status = "calibration check, " + status
    cases = "; ".join(
        f"{p['case']}: {_fmt(p['better'])} vs {', '.join(_fmt(w) for w in p['worse'])}"
        f"{'' if p['holds'] else ' (no)'}" for p in c["per_case"])
    where = "" if c["cases_total"] == 1 else (
        f", holds at {c['cases_held']} of {c['cases_total']} cases; the paper: at "
        f"{', '.join(c['holds_where'])}")
    return f"- {status}: {c['text']} ({c['metric']}{where}; {cases})"


def _fmt(x: float) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    return f"{x:.3g}" if abs(x) < 1000 else f"{x:.0f}"


def report(rep: Reproduction, records: list[dict]) -> str:
    """Markdown: results per case, the paper's numbers beside ours, and the claims."""
    lines = [f"## {rep.title}", f"Source: {rep.source}. Seeds: {rep.seeds}.", ""]
    cols = rep.metrics
    lines.append("| case | policy | " + " | ".join(cols) + " |")
    lines.append("|---|---|" + "---|" * len(cols))
    for c in rep.cases:
        for p in c.policies:
            cells = []
            for m in cols:
                mu, ci = value_of(records, c.name, p, m)
                cells.append(_fmt(mu) + ("" if math.isnan(ci) else f" ± {_fmt(ci)}"))
            lines.append(f"| {c.name} | {p} | " + " | ".join(cells) + " |")
    if rep.job_metrics:
        labels = sorted({lab for r in records for lab in r.get("jobs", {})},
                        key=lambda s: (len(s), s))
        for m in rep.job_metrics:
            lines += ["", f"Per job: {m}", "",
                      "| case | policy | " + " | ".join(labels) + " |",
                      "|---|---|" + "---|" * len(labels)]
            for c in rep.cases:
                for p in c.policies:
                    cells = [_fmt(value_of(records, c.name, p, m, lab)[0]) for lab in labels]
                    lines.append(f"| {c.name} | {p} | " + " | ".join(cells) + " |")
    if rep.paper:
        lines += ["", "Paper vs ours:", "",
                  "| ref | case | policy | metric | paper | ours | deviation |",
                  "|---|---|---|---|---|---|---|"]
        for e in rep.paper:
            ours = paper_counterpart(records, e)
            pv = float(e["value"])
            dev = ours - pv
            rel = f" ({100 * dev / pv:+.0f}%)" if pv else ""
            what = e["metric"] + (f" [{e['job']}]" if e.get("job") else "")
            if e.get("change_vs"):
                what += f" change vs {e['change_vs']}"
            lines.append(f"| {e.get('ref', '')} | {e['case']} | {e['policy']} | {what} | "
                         f"{_fmt(pv)} | {_fmt(ours)} | {_fmt(dev)}{rel} |")
    claims = check_claims(rep, records)
    if claims:
        lines += ["", "Claims (quick run: on the means, too few seeds for a paired test):" if
                  rep.quick else "Claims (paired over seeds: a difference counts when its 95% CI "
                  "excludes zero):", ""]
        lines += [claim_line(c) for c in claims]
    return "\n".join(lines)


def _count_held(claims: Sequence[Mapping]) -> str:
    return f"{sum(c['holds'] for c in claims)} of {len(claims)}" if claims else "-"


def validation_page(results: Sequence[tuple[Reproduction, list[dict]]]) -> str:
    """``docs/validation.md``: per reproduction its description, paper vs ours, the claims case
    by case and the notes — generated from the runs, never edited by hand."""
    lines = ["# Validation: the source papers' experiments, theirs vs ours", "",
             "Generated by `mrsched-gym reproduce all --json docs/reproductions.json --doc "
             "docs/validation.md` from the runs themselves (do not edit by hand). Each experiment "
             "is a file in `configs/reproductions/`; claims are checked at every case of the "
             "experiment with a paired test over seeds (common random numbers) and reported as "
             "\"holds at k of n cases\"; a claim is reproduced where the paper says it holds.",
             "", "| reproduction | source | claims reproduced | calibration checks passed | "
             "paper numbers compared |", "|---|---|---|---|---|"]
    claims_of = {rep.name: check_claims(rep, records) for rep, records in results}
    for rep, _ in results:
        claims = [c for c in claims_of[rep.name] if c["kind"] != "calibration"]
        checks = [c for c in claims_of[rep.name] if c["kind"] == "calibration"]
        lines.append(f"| [`{rep.name}`](#{rep.name}) | {rep.source} | "
                     f"{_count_held(claims)} | {_count_held(checks)} | {len(rep.paper)} |")
    for rep, records in results:
        lines += ["", f"## {rep.name}", "", f"**{rep.title}** ({rep.source}; {rep.seeds} seeds)",
                  "", rep.description]
        comparisons = paper_comparisons(rep, records)
        if comparisons:
            lines += ["", "| figure | item | source | policy | metric | paper | ours | unit |",
                      "|---|---|---|---|---|---|---|---|"]
            for e in comparisons:
                what = e["metric"] + (f" vs {e['change_vs']}" if e["change_vs"] else "")
                lines.append(f"| {e['figure']} | {e['item']} | {e['source']} | {e['policy']} | "
                             f"{what} | {_fmt(e['paper'])} | {_fmt(e['ours'])} | {e['unit']} |")
        claims = claims_of[rep.name]
        if claims:
            lines += ["", "Claims:", ""] + [claim_line(c) for c in claims]
        if rep.notes:
            lines += ["", "Why ours differs: " + rep.notes]
    return "\n".join(lines) + "\n"


def plot(rep: Reproduction, records: list[dict], path: Path) -> Path | None:
    """The reproduction's figure (bars per case and policy, or lines over the cases)."""
    if not rep.plot:
        return None
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from mrsched_gym.leaderboard import clipped_interval
    m = rep.plot["metric"]
    policies = list(dict.fromkeys(p for c in rep.cases for p in c.policies))
    fig, ax = plt.subplots(figsize=(7, 3.6))
    names = [c.name for c in rep.cases]
    for k, p in enumerate(policies):
        xs, ys, hw = [], [], []
        for i, c in enumerate(rep.cases):
            if p in c.policies:
                mu, ci = value_of(records, c.name, p, m)
                xs.append(i)
                ys.append(mu)
                hw.append(ci)
        lo, hi = clipped_interval(np.asarray(ys), np.asarray(hw), m)
        es = np.maximum(0.0, np.nan_to_num([np.asarray(ys) - lo, hi - np.asarray(ys)]))
        if rep.plot.get("kind") == "line":
            ax.errorbar(xs, ys, yerr=es, marker="o", capsize=3, label=p)
        else:
            w = 0.8 / len(policies)
            ax.bar(np.asarray(xs) + (k - (len(policies) - 1) / 2) * w, ys, w, yerr=es,
                   capsize=2, label=p)
    ax.set_xticks(range(len(names)), names, rotation=30, ha="right", fontsize=8)
    ax.set_ylabel(f"{m}\n(mean, 95% CI clipped to its range)", fontsize=9)
    ax.set_title(rep.title, fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    from mrsched_gym.results import save_figure
    save_figure(fig, path, dpi=110)
    plt.close(fig)
    return path
