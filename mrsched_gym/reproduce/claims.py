"""Qualitative claims of a reproduction, checked case by case with paired tests over seeds.

A claim compares one policy's metric with others' (lower is better). Two forms:

* **one case** (``better: [case, policy]``, ``worse: [[case, policy], ...]``): the sides may lie
  in different cases (e.g. Fair with vs without the orchestrator);
* **over a sweep** (``better: policy``, ``worse: [policy, ...]``, ``cases: all | [case, ...]``):
  the claim is evaluated at every listed case of the experiment and reported as "holds at k of n
  cases"; ``holds_where`` lists the cases where the paper says it holds (default: all of them).
  The claim is *reproduced* when it holds at every case of ``holds_where``; the other cases are
  shown, not hidden.

At one case, the per-seed differences ``d_s = better_s - (1 + tolerance) * worse_s`` pair the
same worlds (common random numbers):

* without ``tolerance`` ("lower"), the claim holds when the paired 95% confidence interval of
  the mean difference lies below 0 — a significant difference, not just a lower mean (with one
  seed or identical differences: when the difference is negative);
* with a negative ``tolerance`` ("at least 36% lower"), the same test on the margin's
  differences: the interval must lie below 0;
* with a positive ``tolerance`` ("at most 10% higher", non-inferiority), the interval's upper end
  must be <= 0: the data must show ``better <= (1 + tolerance) x worse`` with 95% confidence, not
  merely a mean that happens to fall on the right side.

Where the paired interval cannot separate the two sides but the mean difference lies on the
claim's side, the outcome is no verdict: :func:`seeds_needed` estimates the seeds a paired
interval would need to separate them, were the mean and spread of the differences as measured,
and the reports print it ("not separated: about N seeds needed"). A mean difference on the
other side needs no power estimate: more seeds would only confirm it.

A quick run (the reduced CI size, one or two seeds) has too few seeds for the paired interval:
there ``paired=False`` compares the mean difference alone, and reports say so.

``kind: calibration`` marks a check whose outcome is fixed by calibrated constants rather than
produced by the mechanism (reported as such). ``expect: fail`` marks a claim we know we do not
reproduce. ``cause`` states, in one sentence, the measured cause of a claim that does not
hold (shown beside it on the Baselines page).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from mrsched_gym.config import ConfigError

CLAIM_KEYS = ("text", "metric", "job", "better", "worse", "cases", "holds_where", "tolerance",
              "kind", "expect", "cause")


def claim_cases(claim: Mapping, case_names: Sequence[str], where: str) -> list[dict]:
    """The comparisons of a claim, one per case: ``{case, better: (case, policy), worse:
    [(case, policy), ...]}``; checks names and keys (``ConfigError`` naming ``where``)."""
    for k in claim:
        if k not in CLAIM_KEYS:
            raise ConfigError(f"{where}: {k}: unknown key (known: {', '.join(CLAIM_KEYS)})")
    for k in ("text", "metric", "better", "worse"):
        if k not in claim:
            raise ConfigError(f"{where}: {k}: required")
    if claim.get("kind", "claim") not in ("claim", "calibration"):
        raise ConfigError(f"{where}: kind: must be 'claim' or 'calibration'")
    if claim.get("expect", "hold") not in ("hold", "fail"):
        raise ConfigError(f"{where}: expect: must be 'hold' or 'fail'")
    if not isinstance(claim.get("cause", ""), str):
        raise ConfigError(f"{where}: cause: must be one sentence of text")
    better, worse = claim["better"], claim["worse"]
    if "cases" in claim:
        if not isinstance(better, str) or not all(isinstance(w, str) for w in worse):
            raise ConfigError(f"{where}: with 'cases', better is a policy and worse a list of "
                              "policies")
        cases = list(case_names) if claim["cases"] == "all" else list(claim["cases"])
        out = [{"case": c, "better": (c, better), "worse": [(c, w) for w in worse]}
               for c in cases]
    else:
        if "holds_where" in claim:
            raise ConfigError(f"{where}: holds_where needs 'cases'")
        out = [{"case": better[0], "better": tuple(better), "worse": [tuple(w) for w in worse]}]
    for cmp in out:
        for c, _ in [cmp["better"], *cmp["worse"]]:
            if c not in case_names:
                raise ConfigError(f"{where}: unknown case {c!r}")
    for c in claim.get("holds_where") or []:
        if c not in {cmp["case"] for cmp in out}:
            raise ConfigError(f"{where}: holds_where: {c!r} is not one of the claim's cases")
    return out


def paired_values(records: Sequence[dict], side: tuple, metric: str, job=None) -> dict[int, float]:
    """Per-seed values of ``metric`` (or a job's metric) for ``(case, policy)``."""
    case, policy = side
    out = {}
    for r in records:
        if r["case"] == case and r["policy"] == policy:
            out[int(r["seed"])] = float(r["jobs"][job][metric] if job else r[metric])
    if not out:
        raise KeyError(f"no records for case {case!r}, policy {policy!r}")
    return out


#: The largest number of seeds :func:`seeds_needed` reports (a larger need is reported as this).
MAX_SEEDS = 10_000


def seeds_needed(diffs: Sequence[float], tolerance: float) -> int | None:
    """The seeds a paired 95% interval would need to show the claim, were the per-seed
    differences' mean and standard deviation those of ``diffs``: the smallest n (at most
    :data:`MAX_SEEDS`) with t_{0.975, n-1} x sd / sqrt(n) below -mean (at most -mean for a
    positive ``tolerance``, as :func:`paired_test` decides).

    Returns:
        ``None`` when the mean difference is not on the claim's side (no number of seeds shows
        it) or fewer than two differences are given.
    """
    d = np.asarray(diffs, dtype=float)
    if len(d) < 2:
        return None
    mean, sd = float(d.mean()), float(d.std(ddof=1))
    if mean > 0 or (mean == 0 and tolerance <= 0):
        return None
    if sd == 0:
        return len(d)
    from scipy.stats import t
    n = 2
    while n < MAX_SEEDS:
        half = t.ppf(0.975, n - 1) * sd / math.sqrt(n)
        if (mean + half <= 0) if tolerance > 0 else (mean + half < 0):
            return n
        n = n + 1 if n < 100 else int(n * 1.05) + 1
    return MAX_SEEDS


def paired_test(better: dict[int, float], worse: dict[int, float], tolerance: float,
                paired: bool = True) -> dict[str, Any]:
    """The paired comparison at one case (module docstring): mean and 95% CI of the per-seed
    differences, whether the claim holds (``paired=False``: on the mean alone) and, for a
    paired test that does not hold, the seeds a paired interval would need
    (``seeds_needed``, :func:`seeds_needed`; ``None`` otherwise)."""
    from mrsched_gym.results import mean_ci95
    seeds = sorted(set(better) & set(worse))
    d = np.array([better[s] - (1.0 + tolerance) * worse[s] for s in seeds])
    d = d[~np.isnan(d)]
    if len(d) == 0:
        return {"diff_mean": math.nan, "diff_ci95": math.nan, "n": 0, "holds": False,
                "seeds_needed": None}
    mean, ci = mean_ci95(list(d))
    upper = mean if not paired or math.isnan(ci) or ci == 0 else mean + ci
    holds = upper <= 0 if tolerance > 0 else upper < 0
    need = seeds_needed(d, tolerance) if paired and not holds else None
    return {"diff_mean": mean, "diff_ci95": ci, "n": int(len(d)), "holds": bool(holds),
            "seeds_needed": need}


def check_claim(claim: Mapping, case_names: Sequence[str], records: Sequence[dict],
                where: str = "claim", paired: bool = True) -> dict[str, Any]:
    """Evaluate one claim at each of its cases.

    Returns:
        ``{text, metric, kind, expect, holds, cases_held, cases_total, holds_where, per_case}``;
        ``per_case`` has, per case, the means of both sides, the paired difference, the seeds
        compared (``n``), whether it holds there and, per worse side, whether it holds against
        that side (``holds_vs``) and the seeds a paired interval would need where it does not
        (``seeds_needed``). ``holds`` (reproduced): it holds at every case of ``holds_where``.
    """
    from mrsched_gym.results import mean_ci95
    metric, job = claim["metric"], claim.get("job")
    tol = float(claim.get("tolerance", 0.0))
    per_case = []
    for cmp in claim_cases(claim, case_names, where):
        b = paired_values(records, cmp["better"], metric, job)
        tests = [paired_test(b, paired_values(records, w, metric, job), tol, paired)
                 for w in cmp["worse"]]
        per_case.append({
            "case": cmp["case"], "better": mean_ci95(list(b.values()))[0],
            "worse": [mean_ci95(list(paired_values(records, w, metric, job).values()))[0]
                      for w in cmp["worse"]],
            "diff_mean": [t["diff_mean"] for t in tests],
            "diff_ci95": [t["diff_ci95"] for t in tests],
            "holds_vs": [t["holds"] for t in tests],
            "seeds_needed": [t["seeds_needed"] for t in tests],
            "n": min(t["n"] for t in tests),
            "holds": all(t["holds"] for t in tests)})
    where_cases = list(claim.get("holds_where") or [p["case"] for p in per_case])
    held = [p["case"] for p in per_case if p["holds"]]
    return {"text": claim["text"], "metric": metric, "kind": claim.get("kind", "claim"),
            "expect": claim.get("expect", "hold"),
            "holds": all(c in held for c in where_cases),
            "cases_held": len(held), "cases_total": len(per_case), "holds_where": where_cases,
            "per_case": per_case}


__all__ = ["CLAIM_KEYS", "MAX_SEEDS", "check_claim", "claim_cases", "paired_test",
           "paired_values", "seeds_needed"]
