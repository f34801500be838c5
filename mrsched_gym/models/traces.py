"""Reading time series (interactive load, availability) from CSV files.

Format: a header line naming the columns, then rows ``time_s,value`` with time in seconds,
strictly increasing. Values are sampled piecewise-constantly (the last row at or before each step
start). Errors name the file and the line.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np


class TraceError(ValueError):
    """A trace file is malformed; the message names the file and line."""


def read_series(path: str | Path) -> tuple[np.ndarray, np.ndarray]:
    """Read ``(time_s [T], value [T])`` from a two-column CSV file."""
    p = Path(path)
    if not p.is_file():
        raise TraceError(f"{p}: trace file not found")
    times: list[float] = []
    values: list[float] = []
    with p.open() as fh:
        header = fh.readline().strip().split(",")
        if len(header) < 2 or header[0].strip() != "time_s":
            raise TraceError(f"{p}:1: header must start with 'time_s,<value column>'")
        for lineno, line in enumerate(fh, start=2):
            line = line.strip()
            if not line:
                continue
            parts = line.split(",")
            if len(parts) < 2:
                raise TraceError(f"{p}:{lineno}: expected 2 columns, got {len(parts)}")
            try:
                t, v = float(parts[0]), float(parts[1])
            except ValueError:
                raise TraceError(f"{p}:{lineno}: not a number: {line!r}") from None
            if not (math.isfinite(t) and math.isfinite(v)):
                raise TraceError(f"{p}:{lineno}: non-finite value")
            if times and t <= times[-1]:
                raise TraceError(f"{p}:{lineno}: time {t} is not after {times[-1]}")
            times.append(t)
            values.append(v)
    if not times:
        raise TraceError(f"{p}: no data rows")
    return np.asarray(times), np.asarray(values)


def sample_steps(times: np.ndarray, values: np.ndarray, step_s: float, n_steps: int
                 ) -> np.ndarray:
    """Value in force at the start of each step (before the first row: the first value)."""
    starts = np.arange(n_steps) * step_s
    idx = np.searchsorted(times, starts, side="right") - 1
    return values[np.clip(idx, 0, len(values) - 1)]
