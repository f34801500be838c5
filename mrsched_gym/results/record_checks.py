"""What an episode record may hold: :func:`metric_range` of every metric and :func:`check_record`,
the checks a journal line (or a reused record) must pass to count as a finished episode, the
same facts a fresh record satisfies by construction."""

from __future__ import annotations

import hashlib
import json
import math

from mrsched_gym.env.metrics import METRIC_NAMES, RECORD_METRICS
from mrsched_gym.results.files import excerpt

#: Metrics that can be negative (every other metric is >= 0); ``*_pct`` metrics lie in
#: [0, 100] and :data:`UNIT_METRICS` in [0, 1].
SIGNED_METRICS = frozenset({"return", "objective", "mean_distance_to_deadline_s",
                            "relative_lateness"})
UNIT_METRICS = frozenset({"utilisation", "cpu_utilisation", "jain_fairness"})
#: Metrics that count (jobs, tasks, decisions): whole numbers.
COUNT_METRICS = frozenset({"steps", "n_jobs", "jobs_finished", "jobs_unfinished", "truncated",
                           "deadline_misses", "accepted_deadline_misses", "killed_tasks",
                           "suspended_tasks", "lost_tasks", "speculative_copies",
                           "speculative_wins", "invalid_actions", "rejections"})
#: Counts of jobs, which cannot exceed the workload's size ``n_jobs``.
JOB_COUNTS = ("jobs_finished", "jobs_unfinished", "deadline_misses", "accepted_deadline_misses",
              "rejections")


def metric_range(metric: str) -> tuple[float, float]:
    """The values ``metric`` can take: ``(0, 100)`` for percentages, ``(0, 1)`` for shares,
    unbounded for :data:`SIGNED_METRICS`, else ``(0, inf)``."""
    if metric in SIGNED_METRICS:
        return -math.inf, math.inf
    if metric.endswith("_pct"):
        return 0.0, 100.0
    if metric in UNIT_METRICS:
        return 0.0, 1.0
    return 0.0, math.inf


def check_record(rec: object) -> str | None:
    """Why a journal line's value is not an episode record (``None`` if it is one).

    A record is a mapping with text ``policy`` and ``scenario`` and an integer ``seed`` >= 0. A
    failed episode's record (it has ``error``) needs no more. A finished one holds every metric
    of :data:`~mrsched_gym.env.metrics.METRIC_NAMES` and ``return``, ``steps``, ``objective``, each
    a number (``null``: undefined) within :func:`metric_range`, counts whole, and no count of
    jobs above ``n_jobs``. A metric a record holds that this version does not know is kept.
    """
    if not isinstance(rec, dict):
        return f"not a record but {type(rec).__name__} {excerpt(rec)}"
    for k in ("policy", "scenario"):
        if not isinstance(rec.get(k), str):
            return f"{k} is {excerpt(rec.get(k)) if k in rec else 'missing'}, not text"
    seed = rec.get("seed")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        return f"seed is {excerpt(seed) if 'seed' in rec else 'missing'}, not an integer >= 0"
    if "error" in rec:
        return None if isinstance(rec["error"], str) else "error is not text"
    for k in ("return", "steps", "objective", *METRIC_NAMES):
        if k not in rec:
            return f"metric {k} is missing"
    for k in RECORD_METRICS:
        why = _metric_problem(k, rec.get(k))
        if why is not None:
            return f"metric {k} {why}"
    n_jobs = rec["n_jobs"]
    for k in JOB_COUNTS:
        v = rec.get(k)
        if n_jobs is not None and v is not None and v > n_jobs:
            return f"metric {k} is {v:g}, more than n_jobs {n_jobs:g}"
    return None


#: A journal line's own checksum: the first 16 hex digits of the SHA-256 of the line's JSON
#: without it (:func:`sealed_line`, :func:`unseal`).
SEAL = "_sha256"


def sealed_line(rec: dict) -> str:
    """A record (JSON-safe) as a journal line: its JSON with :data:`SEAL` appended, so a line
    edited since the tool wrote it is told from the lines it wrote."""
    rec = {k: v for k, v in rec.items() if k != SEAL}     # a record read back with its seal
    text = json.dumps(rec)
    return json.dumps({**rec, SEAL: hashlib.sha256(text.encode()).hexdigest()[:16]})


def unseal(rec: object) -> str | None:
    """Remove a journal line's checksum from its record (:func:`sealed_line`): why the line is
    not as the tool wrote it, ``None`` if it is (or if it is no mapping:
    :func:`check_record` says why)."""
    if not isinstance(rec, dict):
        return None
    seal = rec.pop(SEAL, None)
    if seal is None:
        return "it has no checksum (written by hand, or by an earlier version)"
    if hashlib.sha256(json.dumps(rec).encode()).hexdigest()[:16] != seal:
        return "it was edited since it was written (its checksum does not match)"
    return None


def _metric_problem(name: str, v: object) -> str | None:
    """Why ``v`` is not a value of metric ``name`` (``None``: fine; null means undefined)."""
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return f"is {excerpt(v)}, not a number"
    if not math.isfinite(v):
        return f"is {v}, not finite"
    lo, hi = metric_range(name)
    if not lo <= v <= hi:
        return f"is {v:g}, outside its range [{lo:g}, {hi:g}]"
    if name in COUNT_METRICS and v != int(v):
        return f"is {v:g}, not a whole count"
    return None


__all__ = ["COUNT_METRICS", "SEAL", "SIGNED_METRICS", "UNIT_METRICS", "check_record",
           "metric_range", "sealed_line", "unseal"]
