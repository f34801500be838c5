"""Result files: atomic, world-readable writes, JSON/CSV helpers and the run folder of a sweep.

* :func:`atomic_write` writes a file via a temporary file and a rename (readers never see half a
  file), with the permissions of a normally created file (``0666 & ~umask``).
* :func:`json_safe` / :func:`csv_text` turn records into JSON (NaN -> null) and CSV.
* :func:`summarize` aggregates records by policy and scenario: mean and 95% confidence interval
  (Student's t over seeds, :func:`mean_ci95`) of every metric.
* :func:`write_results` writes ``records``/``summary`` as JSON and CSV.
* :class:`RunFolder` is the folder of one ``compare`` run: a lock so that two runs cannot write
  into one folder at once, a journal that receives every episode's record the moment it finishes
  (so an interrupted or failing run loses nothing and ``--resume`` skips finished episodes), and
  a staging folder in which data and plots of one run are written together and then put in place
  in one step (the previous folder's files are never mixed with the new run's).
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import shutil
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from mrsched_gym.errors import InputError, MRSchedError


def file_mode(directory: bool = False) -> int:
    """The mode of a newly created file (e.g. 0644) or folder (0755) under the current umask."""
    mask = os.umask(0)
    os.umask(mask)
    return (0o777 if directory else 0o666) & ~mask


def atomic_write(path: str | Path, text: str) -> Path:
    """Write ``text`` to ``path`` atomically (temporary file + rename), world-readable as a
    normally created file would be."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(text)
        os.chmod(tmp, file_mode())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path


def json_safe(x: Any) -> Any:
    """``x`` with non-finite floats as ``None`` (valid JSON), recursively."""
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if isinstance(x, dict):
        return {k: json_safe(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [json_safe(v) for v in x]
    return x


def csv_text(rows: Sequence[dict]) -> str:
    """CSV of ``rows`` (columns of the first row; keys starting with ``_`` left out)."""
    buf = io.StringIO()
    if rows:
        keys = list(dict.fromkeys(k for r in rows for k in r if not k.startswith("_")))
        w = csv.DictWriter(buf, fieldnames=keys, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow({k: r.get(k) for k in keys})
    return buf.getvalue()


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


class RunFolder:
    """The output folder ``parent/name`` of one run, with its lock, journal and staging folder.

    Use as a context manager: entering takes the lock (an :class:`InputError` if another run
    holds it) and checks that the parent folder is writable, before any episode runs.

    Args:
        parent: The folder that holds the run folder (created if missing).
        name: The run folder's name.
        header: What defines the run (scenario, overrides, ...): a journal is resumed only when
            its header is equal.
    """

    def __init__(self, parent: str | Path, name: str, header: dict) -> None:
        self.parent = Path(parent)
        self.name = name
        self.final = self.parent / name
        self.journal_path = self.parent / f".{name}.journal.jsonl"
        self.lock_path = self.parent / f".{name}.lock"
        self.header = json_safe(header)
        self._lock_fd: int | None = None
        self._journal = None

    # ------------------------------------------------------------------ lock
    def __enter__(self) -> RunFolder:
        try:
            self.parent.mkdir(parents=True, exist_ok=True)
            probe = tempfile.NamedTemporaryFile(dir=self.parent, prefix=".probe.", delete=True)
            probe.close()
        except OSError as e:
            raise InputError(f"--out {self.parent}: cannot write there ({e.strerror})") from None
        import fcntl
        fd = os.open(self.lock_path, os.O_CREAT | os.O_RDWR, file_mode())
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise InputError(f"{self.final}: another run is writing to this folder "
                             f"(lock {self.lock_path}); wait for it or use another --out") from None
        self._lock_fd = fd
        return self

    def __exit__(self, *exc) -> None:
        if self._journal is not None:
            self._journal.close()
            self._journal = None
        if self._lock_fd is not None:
            import fcntl
            fcntl.flock(self._lock_fd, fcntl.LOCK_UN)
            os.close(self._lock_fd)
            self._lock_fd = None
            # the lock file stays: unlinking it would let two later runs lock two different files

    # ------------------------------------------------------------------ journal
    def resumable(self) -> list[dict]:
        """Finished episodes of an earlier run with the same header (successes only)."""
        if not self.journal_path.is_file():
            return []
        with open(self.journal_path, encoding="utf-8") as f:
            lines = f.read().splitlines()
        try:
            head = json.loads(lines[0]) if lines else None
        except json.JSONDecodeError:
            head = None
        if head != {"run": self.header}:
            raise InputError(f"--resume: the journal {self.journal_path} belongs to a different "
                             "run (other scenario or overrides); run without --resume to start "
                             "afresh")
        out = []
        for line in lines[1:]:
            try:
                rec = json.loads(line)
            except json.JSONDecodeError:
                break                                 # a line cut by an interruption: drop it
            if "error" not in rec:
                out.append(nan_for_null(rec))
        return out

    def unfinished_episodes(self) -> int:
        """Episodes recorded in a journal left by an earlier run (0 if none)."""
        if not self.journal_path.is_file():
            return 0
        with open(self.journal_path, encoding="utf-8") as f:
            return max(0, sum(1 for _ in f) - 1)

    def open_journal(self, keep: Iterable[dict] = ()) -> None:
        """Start the journal: the header, then the ``keep`` records (resumed episodes)."""
        self._journal = open(self.journal_path, "w", encoding="utf-8")
        os.chmod(self.journal_path, file_mode())
        self._journal.write(json.dumps({"run": self.header}) + "\n")
        for rec in keep:
            self._journal.write(json.dumps(json_safe(rec)) + "\n")
        self._sync()

    def append(self, rec: dict) -> None:
        """Record one finished (or failed) episode now."""
        self._journal.write(json.dumps(json_safe(rec)) + "\n")
        self._sync()

    def _sync(self) -> None:
        self._journal.flush()
        os.fsync(self._journal.fileno())

    # ------------------------------------------------------------------ the final folder
    def staging(self) -> Path:
        """A new empty folder beside the final one, to write every output of the run into."""
        path = Path(tempfile.mkdtemp(dir=self.parent, prefix=f".{self.name}.staging."))
        os.chmod(path, file_mode(directory=True))
        return path

    def commit(self, staged: Path, keep_journal: bool = False) -> Path:
        """Put the staged folder in place of the final one (the old one is removed after the
        swap), and drop the journal unless ``keep_journal`` (failed episodes to re-run)."""
        old = None
        if self.final.exists():
            old = Path(tempfile.mkdtemp(dir=self.parent, prefix=f".{self.name}.old."))
            os.rmdir(old)
            os.replace(self.final, old)
        os.replace(staged, self.final)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
        if not keep_journal:
            if self._journal is not None:
                self._journal.close()
                self._journal = None
            try:
                os.unlink(self.journal_path)
            except OSError:
                pass
        return self.final


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


__all__ = ["EpisodeFailures", "RunFolder", "atomic_write", "csv_text", "file_mode", "job_rows",
           "json_safe", "mean_ci95", "metric_names", "nan_for_null", "summarize", "task_key",
           "write_results"]
