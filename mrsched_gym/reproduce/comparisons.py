"""A reproduction's results against its paper: our value of each paper number (a mean, or a
relative change), the claims checked case by case (:mod:`mrsched_gym.reproduce.claims`), and both as
the
machine-readable summary."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from mrsched_gym.evaluate import mean_ci95
from mrsched_gym.reproduce.cases import Reproduction
from mrsched_gym.reproduce.claims import check_claim


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
    """Evaluate every claim case by case (:func:`mrsched_gym.reproduce.claims.check_claim`)."""
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

