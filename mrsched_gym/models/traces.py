"""Reading traces: time series (interactive load, availability) and job-arrival traces.

Bundled traces (compact copies of real data with their attribution in
``mrsched_gym/data/traces/ATTRIBUTION.md``) are named in :data:`BUNDLED_TRACES`; a trace can
equally be any file path in the same format, so users bring their own.

* **Files** are UTF-8 CSV text, plain or gzipped; gzip is recognised by its content (whatever the
  name). A UTF-8 byte-order mark (spreadsheet exports write one) is skipped. Binary files,
  UTF-16 text, other compressions (bzip2, xz, zip, zstd) and corrupt or truncated gzip data are
  refused with a :class:`TraceError`.
* **Time series**: a header line whose first column is ``time_s``, then rows ``time_s,value`` with
  time in seconds, strictly increasing. Values are sampled piecewise-constantly (the last row at or
  before each step start). What a value may be depends on its use: :func:`check_series` reads a
  series with a field's value range (e.g. usage fractions in [0, 1] for an inverted
  availability trace).
* **Job traces**: either our CSV (header ``submit_s,map_input_bytes,shuffle_bytes,output_bytes``)
  or the SWIM TSV format (no header; ``job_id, submit_s, gap_s, map_input_bytes, shuffle_bytes,
  output_bytes``, tab-separated). Submit times must not decrease; bytes must be >= 0.

* **Bounds**, checked while reading (a gzip file is never decompressed beyond them): a line
  holds at most :data:`MAX_TRACE_LINE_BYTES` bytes, a file at most :data:`MAX_TRACE_LINES` lines
  and :data:`MAX_TRACE_BYTES` bytes of text (after decompression). A field may be quoted
  (``"3600"``), as CSV allows.

Every error names the file and, where there is one, the line (:class:`TraceError`).
"""

from __future__ import annotations

import csv
import functools
import gzip
import math
import zlib
from collections.abc import Iterator
from importlib import resources
from pathlib import Path
from typing import IO

import numpy as np

from mrsched_gym.errors import MRSchedError, not_a_file

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

#: Plausibility bounds of trace values (a finite but absurd value, e.g. 1e300 bytes, would give
#: tasks of ~1e290 s): a job's bytes (1 PB; the bundled SWIM days peak below 1e13), a time in a
#: trace (about 31 years) and a series value (web load, capacity, usage).
MAX_JOB_BYTES = 1e15
MAX_TRACE_TIME_S = 1e9
MAX_SERIES_VALUE = 1e9
#: Bounds of a trace file's text, checked while reading: bytes per line (newline included; a row
#: holds a few numbers, the bundled traces' longest line has 51 bytes), lines per file (a month
#: of a large cluster's jobs is about a million) and bytes of text after decompression.
MAX_TRACE_LINE_BYTES = 4096
MAX_TRACE_LINES = 2_000_000
MAX_TRACE_BYTES = 256 * 1024 * 1024


def _excerpt(line: str, limit: int = 40) -> str:
    """A short escaped excerpt of an offending line for an error message."""
    return repr(line[:limit]) + ("..." if len(line) > limit else "")

_GZIP_MAGIC = b"\x1f\x8b"
_UTF8_BOM = b"\xef\xbb\xbf"
#: Leading bytes of file formats a trace cannot be, and what to call them in the error.
_REFUSED_MAGIC = (
    (b"BZh", "bzip2-compressed data"), (b"\xfd7zXZ\x00", "xz-compressed data"),
    (b"PK\x03\x04", "a zip archive"), (b"\x28\xb5\x2f\xfd", "zstd-compressed data"),
    (b"7z\xbc\xaf\x27\x1c", "a 7z archive"), (b"\xff\xfe", "UTF-16 text"),
    (b"\xfe\xff", "UTF-16 text"),
)


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
        what = not_a_file(p, "trace file")
        where = "" if p.is_absolute() else f", relative to the working directory {Path.cwd()}"
        raise TraceError(f"{p}: {what}{where} (bundled traces: {', '.join(BUNDLED_TRACES)})")
    return p


def trace_fields(data: object, path: str = "") -> dict[str, str]:
    """Every ``trace`` field of a scenario's plain data (:func:`~mrsched_gym.config.to_dict`):
    dotted field path -> the bundled name or path it holds."""
    out: dict[str, str] = {}
    if isinstance(data, dict):
        for k, v in data.items():
            sub = f"{path}.{k}" if path else str(k)
            if k == "trace" and isinstance(v, str) and v:
                out[sub] = v
            else:
                out.update(trace_fields(v, sub))
    return out


def file_sha256(path: str | Path) -> str:
    """The SHA-256 of a file's bytes (hex)."""
    import hashlib
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def trace_digests(data: object) -> dict[str, str]:
    """``{trace as given: SHA-256 of its file}`` for every trace a scenario (plain data)
    reads, so that a resumed run notices a trace whose content changed.

    Raises:
        TraceError: A trace file is missing, naming the field.
    """
    out = {}
    for fieldname, name in trace_fields(data).items():
        try:
            p = resolve_trace(name)
            out[name] = file_sha256(p)
        except TraceError as e:
            raise TraceError(f"{fieldname}: {e}") from None
        except OSError as e:
            raise TraceError(f"{fieldname}: {name}: cannot read the trace: {e.strerror}"
                             ) from None
    return out


def _open_bytes(p: Path) -> IO[bytes]:
    """Open a trace as bytes, decompressing gzip; refuse formats that are not CSV text."""
    with p.open("rb") as fh:
        head = fh.read(8)
    for magic, what in _REFUSED_MAGIC:
        if head.startswith(magic):
            raise TraceError(f"{p}: {what}; a trace is UTF-8 CSV text, plain or gzipped (.gz)")
    if head.startswith(_GZIP_MAGIC):
        return gzip.open(p, "rb")
    return p.open("rb")


def trace_lines(p: Path) -> Iterator[tuple[int, str]]:
    """``(line number, text)`` of every line of a trace file, decoded and checked.

    Reads one bounded line at a time, so a file over the bounds (:data:`MAX_TRACE_LINE_BYTES`,
    :data:`MAX_TRACE_LINES`, :data:`MAX_TRACE_BYTES`) is refused after reading at most the
    bound, however large it is once decompressed.

    Raises:
        TraceError: Not CSV text (binary data, another encoding or compression), corrupt or
            truncated gzip data, or over a bound, naming the file and line.
    """
    lineno = 0
    total = 0
    try:
        with _open_bytes(p) as fh:
            while raw := fh.readline(MAX_TRACE_LINE_BYTES + 1):
                lineno += 1
                total += len(raw)
                if b"\x00" in raw:
                    raise TraceError(f"{p}:{lineno}: binary data (a NUL byte); a trace is CSV "
                                     "text")
                if b"\r" in raw.rstrip(b"\r\n"):
                    raise TraceError(f"{p}:{lineno}: a carriage return inside the line: its "
                                     "lines end in a carriage return alone (old Mac text); end "
                                     "them in LF or CRLF")
                _check_bounds(p, lineno, len(raw), total)
                if lineno == 1 and raw.startswith(_UTF8_BOM):
                    raw = raw[len(_UTF8_BOM):]
                try:
                    text = raw.decode("utf-8")
                except UnicodeDecodeError as e:
                    raise TraceError(f"{p}:{lineno}: not UTF-8 text (byte {raw[e.start]:#04x} "
                                     f"at column {e.start + 1}); a trace is CSV text") from None
                yield lineno, text
    except (EOFError, zlib.error, gzip.BadGzipFile) as e:
        raise TraceError(f"{p}:{lineno + 1}: corrupt or truncated gzip data ({e})") from None
    except OSError as e:
        raise TraceError(f"{p}: cannot read the trace: {e.strerror or e}") from None


def _check_bounds(p: Path, lineno: int, line_bytes: int, total_bytes: int) -> None:
    """Refuse a line or a file over the bounds of a trace (module doc)."""
    if line_bytes > MAX_TRACE_LINE_BYTES:
        raise TraceError(f"{p}:{lineno}: a line longer than {MAX_TRACE_LINE_BYTES:,} bytes; a "
                         "trace row holds a few numbers")
    if lineno > MAX_TRACE_LINES:
        raise TraceError(f"{p}:{lineno}: more than {MAX_TRACE_LINES:,} lines, a trace's limit")
    if total_bytes > MAX_TRACE_BYTES:
        raise TraceError(f"{p}:{lineno}: more than {MAX_TRACE_BYTES:,} bytes of text "
                         "(decompressed), a trace's limit")


def csv_fields(line: str) -> list[str]:
    """The fields of one CSV line, quotes removed (``"3600",12`` -> ``['3600', '12']``)."""
    if '"' not in line:
        return line.split(",")
    return next(csv.reader([line]), [])


def _numbers(p: Path, lineno: int, parts: list[str], n: int, line: str) -> list[float]:
    if len(parts) < n:
        raise TraceError(f"{p}:{lineno}: expected {n} columns, got {len(parts)}")
    try:
        if any("_" in x or not x.isascii() for x in parts[:n]):   # float() reads Python's
            raise ValueError                                         # 1_000 and other digits
        vals = [float(x) for x in parts[:n]]
    except ValueError:
        raise TraceError(f"{p}:{lineno}: not a number: {_excerpt(line)}") from None
    if not all(math.isfinite(v) for v in vals):
        raise TraceError(f"{p}:{lineno}: non-finite value in {_excerpt(line)}")
    return vals


def read_series(path: str | Path, value_range: tuple[float, float] | None = None,
                rule: str = "") -> tuple[np.ndarray, np.ndarray]:
    """Read ``(time_s [T], value [T])`` from a two-column CSV file (or a bundled name).

    Args:
        path: A bundled trace name or a file path.
        value_range: ``(lo, hi)``: every value must lie in it (inclusive); ``None``: any finite
            value.
        rule: Why the range holds, quoted in the error.

    Raises:
        TraceError: A malformed file or a value out of range, naming the file and line.
    """
    p = resolve_trace(path)
    times: list[float] = []
    values: list[float] = []
    lines = trace_lines(p)
    _, header = next(lines, (1, ""))
    cols = csv_fields(header.strip())
    if len(cols) < 2 or cols[0].strip() != "time_s":
        raise TraceError(f"{p}:1: header must start with 'time_s,<value column>', got "
                         f"{_excerpt(header.strip())}")
    for lineno, line in lines:
        line = line.strip()
        if not line:
            continue
        t, v = _numbers(p, lineno, csv_fields(line), 2, line)
        if times and t <= times[-1]:
            raise TraceError(f"{p}:{lineno}: time {t} is not after {times[-1]}")
        if not -MAX_TRACE_TIME_S <= t <= MAX_TRACE_TIME_S:
            raise TraceError(f"{p}:{lineno}: time_s {t:g} is implausible (beyond "
                             f"{MAX_TRACE_TIME_S:g} s)")
        if abs(v) > MAX_SERIES_VALUE:
            raise TraceError(f"{p}:{lineno}: value {v:g} is implausible (beyond "
                             f"{MAX_SERIES_VALUE:g}); a series holds loads, fractions or "
                             "capacities")
        if value_range is not None and not value_range[0] <= v <= value_range[1]:
            raise TraceError(f"{p}:{lineno}: value {v:g} is outside [{value_range[0]:g}, "
                             f"{value_range[1]:g}]" + (f" ({rule})" if rule else ""))
        times.append(t)
        values.append(v)
    if not times:
        raise TraceError(f"{p}: no data rows")
    return np.asarray(times), np.asarray(values)


def check_series(path: str | Path, value_range: tuple[float, float] | None = None,
                 rule: str = "") -> float:
    """Read a series as :func:`read_series` does and return its last time (s).

    Cached per :func:`file_version`, so checking the same trace for many environments reads it
    once.
    """
    return series_extent(path, value_range, rule)[0]


def file_version(path: str | Path) -> tuple[str, int, int, int, int]:
    """What tells one version of a file from another, for caches keyed by it: its resolved
    path, size, modification and status-change times and inode. The status-change time is set
    by the system at every write or rename and cannot be set back, so a file rewritten to the
    same size with its old modification time restored (``cp -p``, ``rsync -t``) is a new
    version (unless within one tick of a coarse file-system clock)."""
    p = Path(path)
    st = p.stat()
    return str(p.resolve()), st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino


def series_extent(path: str | Path, value_range: tuple[float, float] | None = None,
                  rule: str = "") -> tuple[float, float, float]:
    """``(last time, smallest value, largest value)`` of a series checked as
    :func:`check_series` checks it (cached the same way)."""
    return _checked_series(str(path), file_version(resolve_trace(path)), value_range, rule)


@functools.lru_cache(maxsize=64)
def _checked_series(name: str, version: tuple[str, int, int, int, int],
                    value_range: tuple[float, float] | None, rule: str
                    ) -> tuple[float, float, float]:
    """:func:`series_extent` per :func:`file_version` (``name`` as given, for the errors'
    wording)."""
    times, values = read_series(name, value_range, rule)
    return float(times[-1]), float(values.min()), float(values.max())


def read_job_trace(path: str | Path) -> np.ndarray:
    """Read a job trace (our CSV or SWIM TSV, see module doc) as ``[J, 4]``: submit_s,
    map_input_bytes, shuffle_bytes, output_bytes."""
    p = resolve_trace(path)
    rows: list[list[float]] = []
    lines = trace_lines(p)
    first = next(lines, (1, ""))
    swim = "\t" in first[1]
    if not swim:
        cols = [c.strip() for c in csv_fields(first[1].strip())]
        if tuple(cols[:4]) != JOB_COLUMNS:
            raise TraceError(f"{p}:1: header must be {','.join(JOB_COLUMNS)} "
                             "(or give a SWIM TSV file)")
    if swim:
        rows.append(_job_row(p, first[0], first[1], swim, rows))
    for lineno, line in lines:
        if line.strip():
            rows.append(_job_row(p, lineno, line, swim, rows))
    if not rows:
        raise TraceError(f"{p}: no data rows")
    return np.asarray(rows, dtype=float)


def _job_row(p: Path, lineno: int, line: str, swim: bool, rows: list[list[float]]
             ) -> list[float]:
    """One job trace row: four numbers >= 0, the submit time not before the previous row's."""
    line = line.strip()
    if swim:
        parts = line.split("\t")
        if len(parts) != 6:
            raise TraceError(f"{p}:{lineno}: expected 6 tab-separated SWIM columns "
                             f"(job, submit, gap, input, shuffle, output), got {len(parts)}")
        vals = _numbers(p, lineno, [parts[1], *parts[3:6]], 4, line)
    else:
        vals = _numbers(p, lineno, csv_fields(line), 4, line)
    for col, v in zip(JOB_COLUMNS, vals, strict=False):
        if v < 0:
            raise TraceError(f"{p}:{lineno}: negative value {v:g} of {col}")
        limit = MAX_TRACE_TIME_S if col == "submit_s" else MAX_JOB_BYTES
        if v > limit:
            raise TraceError(f"{p}:{lineno}: {col} {v:g} is implausible (more than "
                             f"{limit:g}{' s' if col == 'submit_s' else ' bytes, 1 PB'})")
    if rows and vals[0] < rows[-1][0]:
        raise TraceError(f"{p}:{lineno}: submit time {vals[0]} is before {rows[-1][0]}")
    return vals


def sample_steps(times: np.ndarray, values: np.ndarray, step_s: float, n_steps: int,
                 offset_s: float = 0.0) -> np.ndarray:
    """Value in force at the start of each step, the episode's time 0 being ``offset_s`` in the
    trace (before the first row: the first value)."""
    starts = offset_s + np.arange(n_steps) * step_s
    idx = np.searchsorted(times, starts, side="right") - 1
    return values[np.clip(idx, 0, len(values) - 1)]
