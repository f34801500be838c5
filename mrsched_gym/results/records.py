"""Episode records: their summary (mean and 95% confidence interval per policy and scenario), the
result files of a sweep, the checks of a journal's lines, and the error of a sweep whose episodes
partly failed."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from mrsched_gym.errors import MRSchedError
from mrsched_gym.results.files import atomic_write, csv_text, excerpt, json_safe


def write_results(records: Sequence[dict], out_dir: str | Path,
                  failures: Sequence[dict] = ()) -> dict[str, Path]:
    """Write records and their summary as JSON and CSV into ``out_dir`` (each file atomically),
    ``jobs.csv`` when records carry their job tables (``evaluate(per_job=True)``: one row per
    policy, scenario, seed and job) and ``failures.json`` when episodes failed."""
    out = Path(out_dir)
    summary = summarize(records)
    clean = [{k: json_safe(v) for k, v in r.items() if not k.startswith("_")} for r in records]
    paths = {"records.json": out / "records.json", "records.csv": out / "records.csv",
             "summary.json": out / "summary.json", "summary.csv": out / "summary.csv"}
    atomic_write(paths["records.json"], json.dumps(clean, indent=1))
    atomic_write(paths["records.csv"], csv_text(records))
    atomic_write(paths["summary.json"], json.dumps(json_safe(summary), indent=1))
    atomic_write(paths["summary.csv"], csv_text(summary))
    if any("_jobs" in r for r in records):
        paths["jobs.csv"] = atomic_write(out / "jobs.csv", csv_text(job_rows(records)))
    if failures:
        paths["failures.json"] = atomic_write(out / "failures.json",
                                              json.dumps(json_safe(list(failures)), indent=1))
    return paths


def job_rows(records: Sequence[dict]) -> list[dict[str, Any]]:
    """The rows of ``jobs.csv``: ``policy``, ``scenario``, ``seed`` and the job's columns, for
    every record that carries its job table (``_jobs``, columns of equal length)."""
    rows = []
    for r in records:
        table = r.get("_jobs")
        if not table:
            continue
        head = {"policy": r["policy"], "scenario": r["scenario"], "seed": r["seed"]}
        cols = list(table)
        rows += [dict(head, **dict(zip(cols, values, strict=True)))
                 for values in zip(*table.values(), strict=True)]
    return rows


def nan_for_null(record: dict[str, Any]) -> dict[str, Any]:
    """A record read back from JSON: the undefined metrics :func:`json_safe` wrote as null are
    NaN again (text fields such as ``error`` and ``traceback`` keep their null)."""
    return {k: (math.nan if v is None and k not in ("error", "traceback") else v)
            for k, v in record.items()}


def mean_ci95(values: Sequence[float]) -> tuple[float, float]:
    """Mean and half-width of the 95% confidence interval (Student's t; nan-aware)."""
    x = np.asarray([v for v in values if v is not None and not math.isnan(v)], dtype=float)
    if len(x) == 0:
        return math.nan, math.nan
    if len(x) == 1:
        return float(x[0]), math.nan
    from scipy.stats import t
    return float(x.mean()), float(t.ppf(0.975, len(x) - 1) * x.std(ddof=1) / math.sqrt(len(x)))


def metric_names(records: Sequence[dict]) -> list[str]:
    """The numeric fields of the records (metrics, steps, return), in first-seen order over all
    records (a field undefined in one record, e.g. NaN read back as null, is still kept)."""
    skip = {"policy", "scenario", "seed"}
    names: dict[str, None] = {}
    for r in records:
        for k, v in r.items():
            if k not in skip and not k.startswith("_") and isinstance(v, (int, float)) \
                    and not isinstance(v, bool):
                names[k] = None
    return list(names)


def summarize(records: Sequence[dict]) -> list[dict[str, Any]]:
    """Per (policy, scenario): ``n`` seeds and ``<metric>_mean`` / ``<metric>_ci95`` of each."""
    groups: dict[tuple, list[dict]] = {}
    for r in records:
        groups.setdefault((r["policy"], r["scenario"]), []).append(r)
    out = []
    names = metric_names(records)
    for (pol, sc), rs in groups.items():
        row: dict[str, Any] = {"policy": pol, "scenario": sc, "n": len(rs)}
        for k in names:
            row[f"{k}_mean"], row[f"{k}_ci95"] = mean_ci95([r.get(k, math.nan) for r in rs])
        out.append(row)
    return out


def task_key(rec: dict) -> tuple:
    """The identity of an episode: (policy, scenario, seed)."""
    return (rec["policy"], rec["scenario"], int(rec["seed"]))


def header_diff(old: Any, new: Any, path: str = "") -> list[str]:
    """What differs between two journal headers, as dotted paths with both values (short)."""
    if isinstance(old, dict) and isinstance(new, dict):
        out = []
        for k in list(dict.fromkeys([*old, *new])):
            sub = f"{path}.{k}" if path else str(k)
            if k not in old:
                out.append(f"{sub} added")
            elif k not in new:
                out.append(f"{sub} removed")
            else:
                out += header_diff(old[k], new[k], sub)
        return out
    if old != new:
        return [f"{path or 'header'} changed ({excerpt(old, 30)} -> {excerpt(new, 30)})"]
    return []


class EpisodeFailures(MRSchedError):
    """Some episodes of a sweep failed; the others finished.

    Args:
        records: The finished episodes' records (kept as ``self.records``).
        failures: One entry per failed episode: policy, scenario, seed, error, traceback (kept
            as ``self.failures``).
    """

    def __init__(self, records: list[dict], failures: list[dict]) -> None:
        self.records = records
        self.failures = failures
        names = "; ".join(f"{f['policy']} on {f['scenario']} seed {f['seed']}: {f['error']}"
                          for f in failures[:5])
        more = f" (and {len(failures) - 5} more)" if len(failures) > 5 else ""
        super().__init__(f"{len(failures)} of {len(records) + len(failures)} episodes failed: "
                         f"{names}{more}")


__all__ = ["EpisodeFailures", "header_diff", "job_rows", "mean_ci95",
           "metric_names", "nan_for_null", "summarize", "task_key", "write_results"]
