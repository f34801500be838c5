"""Reading traces: time series (interactive load, availability) and job-arrival traces.

Bundled traces (compact copies of real data with their attribution in
``mrsched_gym/data/traces/ATTRIBUTION.md``) are named in :data:`BUNDLED_TRACES`; a trace can
equally be any file path in the same format, so users bring their own. Files may be gzipped
(``.gz``).

* **Time series**: a header line whose first column is ``time_s``, then rows ``time_s,value`` with
  time in seconds, strictly increasing. Values are sampled piecewise-constantly (the last row at or
  before each step start).
* **Job traces**: either our CSV (header ``submit_s,map_input_bytes,shuffle_bytes,output_bytes``)
  or the SWIM TSV format (no header; ``job_id, submit_s, gap_s, map_input_bytes, shuffle_bytes,
  output_bytes``, tab-separated). Submit times must not decrease; bytes must be >= 0.

Every error names the file and the line (:class:`TraceError`).
"""

from __future__ import annotations

import gzip
import math
from importlib import resources
from pathlib import Path
from typing import IO

import numpy as np

from mrsched_gym.errors import MRSchedError

#: Bundled trace name -> file in ``mrsched_gym/data/traces``.
BUNDLED_TRACES: dict[str, str] = {
    "swim-fb2009-day0": "swim_fb2009_day0.csv.gz",
    "swim-fb2009-day1": "swim_fb2009_day1.csv.gz",
    "nasa-http-1995": "nasa_http_1995_5min.csv.gz",
    "google-2019-cpu": "google2019_cpu_5min.csv.gz",
    "pvwatts-golden": "pvwatts_golden_hourly.csv.gz",
    "aloja-hibench-tasks": "aloja_hibench_tasks.csv.gz",
    "aloja-hibench-execs": "aloja_hibench_execs.csv.gz",
    "rds-table1-capacity": "rds_table1_capacity.csv",
}

JOB_COLUMNS = ("submit_s", "map_input_bytes", "shuffle_bytes", "output_bytes")


class TraceError(MRSchedError, ValueError):
    """A trace file is malformed; the message names the file and line."""


def resolve_trace(name_or_path: str | Path) -> Path:
    """The file behind a bundled trace name or a path (a missing file is a :class:`TraceError`)."""
    key = str(name_or_path)
    if key in BUNDLED_TRACES:
        res = resources.files("mrsched_gym.data").joinpath("traces", BUNDLED_TRACES[key])
        return Path(str(res))
    p = Path(name_or_path)
    if not p.is_file():
        raise TraceError(f"{p}: trace file not found (bundled traces: "
                         f"{', '.join(BUNDLED_TRACES)})")
    return p


def open_trace(p: Path) -> IO[str]:
    """Open a trace file as text (gzip when it ends in ``.gz``)."""
    if p.suffix == ".gz":
        return gzip.open(p, "rt")
    return p.open()


def _numbers(p: Path, lineno: int, parts: list[str], n: int, line: str) -> list[float]:
    if len(parts) < n:
        raise TraceError(f"{p}:{lineno}: expected {n} columns, got {len(parts)}")
    try:
        vals = [float(x) for x in parts[:n]]
    except ValueError:
        raise TraceError(f"{p}:{lineno}: not a number: {line!r}") from None
    if not all(math.isfinite(v) for v in vals):
        raise TraceError(f"{p}:{lineno}: non-finite value")
    return vals


def read_series(path: str | Path) -> tuple[np.ndarray, np.ndarray]:
    """Read ``(time_s [T], value [T])`` from a two-column CSV file (or a bundled name)."""
    p = resolve_trace(path)
    times: list[float] = []
    values: list[float] = []
    with open_trace(p) as fh:
        header = fh.readline().strip().split(",")
        if len(header) < 2 or header[0].strip() != "time_s":
            raise TraceError(f"{p}:1: header must start with 'time_s,<value column>'")
        for lineno, line in enumerate(fh, start=2):
            line = line.strip()
            if not line:
                continue
            t, v = _numbers(p, lineno, line.split(","), 2, line)
            if times and t <= times[-1]:
                raise TraceError(f"{p}:{lineno}: time {t} is not after {times[-1]}")
            times.append(t)
            values.append(v)
    if not times:
        raise TraceError(f"{p}: no data rows")
    return np.asarray(times), np.asarray(values)


def read_job_trace(path: str | Path) -> np.ndarray:
    """Read a job trace (our CSV or SWIM TSV, see module doc) as ``[J, 4]``: submit_s,
    map_input_bytes, shuffle_bytes, output_bytes."""
    p = resolve_trace(path)
    rows: list[list[float]] = []
    with open_trace(p) as fh:
        first = fh.readline()
        swim = "\t" in first
        if swim:
            lines = [(1, first)]
        else:
            cols = [c.strip() for c in first.strip().split(",")]
            if tuple(cols[:4]) != JOB_COLUMNS:
                raise TraceError(f"{p}:1: header must be {','.join(JOB_COLUMNS)} "
                                 "(or give a SWIM TSV file)")
            lines = []
        for lineno, line in [*lines, *enumerate(fh, start=2)]:
            line = line.strip()
            if not line:
                continue
            if swim:
                parts = line.split("\t")
                if len(parts) != 6:
                    raise TraceError(f"{p}:{lineno}: expected 6 tab-separated SWIM columns "
                                     f"(job, submit, gap, input, shuffle, output), "
                                     f"got {len(parts)}")
                vals = _numbers(p, lineno, [parts[1], *parts[3:6]], 4, line)
            else:
                vals = _numbers(p, lineno, line.split(","), 4, line)
            if min(vals) < 0:
                raise TraceError(f"{p}:{lineno}: negative value")
            if rows and vals[0] < rows[-1][0]:
                raise TraceError(f"{p}:{lineno}: submit time {vals[0]} is before "
                                 f"{rows[-1][0]}")
            rows.append(vals)
    if not rows:
        raise TraceError(f"{p}: no data rows")
    return np.asarray(rows, dtype=float)


def sample_steps(times: np.ndarray, values: np.ndarray, step_s: float, n_steps: int,
                 offset_s: float = 0.0) -> np.ndarray:
    """Value in force at the start of each step, the episode's time 0 being ``offset_s`` in the
    trace (before the first row: the first value)."""
    starts = offset_s + np.arange(n_steps) * step_s
    idx = np.searchsorted(times, starts, side="right") - 1
    return values[np.clip(idx, 0, len(values) - 1)]
