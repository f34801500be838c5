"""The reproduction files: their schema, read strictly, and the cases they resolve to.

A reproduction file (``configs/reproductions/<name>.yaml``) holds:

* ``title``, ``source`` (seed and section/figure/table), ``description``;
* ``scenario``: a full scenario mapping (the schema of ``configs/scenarios``), or ``base`` (a
  bundled scenario name or env id) plus ``overrides``;
* ``cases``: the paper's rows, each ``{name, overrides, policies}`` (``policies`` defaults to the
  file's ``policies``); the scenario of a case is the base with the case's overrides;
* ``metrics``: episode metrics to report (see :mod:`mrsched_gym.env.metrics`); ``job_metrics``:
  per-job quantities keyed by the jobs' labels (``exec_s`` = finish - arrival, ``finish_s``,
  ``beyond_rel`` = time beyond the deadline relative to the execution time, thesis Table 5.7);
* ``seeds`` (full run) and ``quick`` (``{seeds, overrides}``, the reduced CI run);
* ``paper``: the numbers the paper states, each ``{case, policy, metric, value, ref}`` (+
  ``job``; + ``change_vs: POLICY`` when the paper states a relative change, e.g. -0.38 for "38%
  lower JCT than Fair"; + ``source``, which row of the paper, e.g. "thesis Table 5.7 simulated";
  + ``unit``; + ``over_jobs: mean | max`` for the average or largest per-job change); printed
  next to ours with the deviation;
* ``claims``: the qualitative orderings, checked case by case with paired tests over seeds and
  reported as "holds at k of n cases" (:mod:`mrsched_gym.reproduce.claims` gives the rules and the
  keys: ``text, metric, better, worse, cases, holds_where, tolerance, kind, expect``). ``expect:
  fail`` marks a claim we do not reproduce (reported, and the test flags the day it starts to hold);
* ``plot``: ``{kind: bars | line, metric}``: the figure, written next to the results;
* ``notes``: why ours differs from the paper (prose for the generated validation page).

:func:`load_reproduction` reads one into a :class:`Reproduction`, every case's scenario resolved
and every policy, paper entry and claim checked against the cases.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mrsched_gym.config import (
    ConfigError,
    Scenario,
    bundled_names,
    config_source,
    from_yaml_data,
    parse_yaml,
    scenario_from_dict,
    with_overrides,
)
from mrsched_gym.evaluate import check_policy
from mrsched_gym.reproduce.claims import claim_cases

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
    f = from_yaml_data(ReproductionFile, parse_yaml(text, src), text, src)
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
