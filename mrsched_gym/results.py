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
import errno
import io
import json
import math
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from mrsched_gym.errors import InputError, MRSchedError, OutputError


def file_mode(directory: bool = False) -> int:
    """The mode of a newly created file (e.g. 0644) or folder (0755) under the current umask."""
    mask = os.umask(0)
    os.umask(mask)
    return (0o777 if directory else 0o666) & ~mask


#: A name derived from user data that may become a file or folder name (:func:`safe_child`).
SLUG_CHARS = "A-Za-z0-9._-"
_SLUG = re.compile(f"[{SLUG_CHARS}]+")
#: The file every folder a run writes holds: only such a folder is ever replaced or removed.
MARKER = ".mrsched_gym-run"


def safe_child(out: str | Path, name: object, field: str) -> Path:
    """``out / name`` for a ``name`` taken from user data (a scenario's ``name:``, a run name),
    checked before anything is written: a slug of ``[A-Za-z0-9._-]`` characters, not ``.`` or
    ``..``, that resolves inside ``out``.

    Args:
        out: The output folder (``--out``).
        name: The name to check.
        field: What the name is, for the error (e.g. ``"scenario my.yaml: name"``).

    Raises:
        InputError: Naming ``field`` and the name.
    """
    text = name if isinstance(name, str) else None
    why = None
    if text is None:
        why = f"must be text, got {type(name).__name__}"
    elif not text:
        why = "is empty"
    elif text in (".", ".."):
        why = "is a path step, not a name"
    elif not _SLUG.fullmatch(text) or len(text) > 200:
        why = (f"may hold only the characters {SLUG_CHARS} (at most 200; no '/', spaces or "
               "other path syntax)")
    if why is None:
        root = Path(out).resolve()                  # lexically: a link at the child is
        if Path(os.path.normpath(root / text)).parent != root:   # the caller's to refuse
            why = f"does not resolve inside {out}"
    if why is not None:
        raise InputError(f"{field} {excerpt(name)}: not usable as a file or folder name: it "
                         f"{why}")
    return Path(out) / text


def excerpt(value: object, limit: int = 40) -> str:
    """A short escaped excerpt of ``value`` for an error message (at most ``limit``
    characters of it, as a Python literal, so control characters and odd bytes show escaped)."""
    if isinstance(value, bytes):
        value = value.decode("utf-8", "backslashreplace")
    if not isinstance(value, str):
        text = repr(value)
        return text[:limit] + ("..." if len(text) > limit else "")
    return repr(value[:limit]) + ("..." if len(value) > limit else "")


def fsync_dir(path: str | Path) -> None:
    """Make a rename or a new file in ``path`` durable (a no-op where folders cannot be
    opened, e.g. Windows)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def durable_write(path: str | Path, data: str | bytes | Callable[[str], None],
                  mode: int | None = None) -> Path:
    """The one way the harness writes a file: a temporary file in the same folder, flushed and
    fsynced, renamed over ``path`` (the folder fsynced too). A kill at any instant leaves the
    old file or the new one, never a cut one; the rename replaces a link at ``path`` rather
    than following it. ``data``: the text or bytes, or a function that writes the temporary
    file whose path it is given (``model.save``, ``np.savez``). ``mode``: default that of a
    normally created file (``0666 & ~umask``). Every writer of the package (results, journal,
    plots, training checkpoints, state and config files) goes through it.

    Raises:
        OutputError: The file cannot be written (disk full, no permission, a folder at
            ``path``), naming it; no temporary file is left behind.
    """
    path = Path(path)
    writer = data if callable(data) else None
    raw = b"" if writer is not None else (data.encode("utf-8") if isinstance(data, str)
                                          else bytes(data))
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.is_dir() and not path.is_symlink():
            raise IsADirectoryError(errno.EISDIR, "a folder is in the way", str(path))
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        with os.fdopen(fd, "wb") as f:
            if writer is None:
                f.write(raw)
                f.flush()
            else:
                writer(tmp)                 # writes the file by its name; we sync it here
            os.fsync(f.fileno())
        os.chmod(tmp, file_mode() if mode is None else mode)
        _before_rename(tmp, path)
        os.replace(tmp, path)
        tmp = None
        fsync_dir(path.parent)
    except OSError as e:
        raise OutputError(f"{path}: cannot write it: {e.strerror or e}") from None
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
    return path


def _before_rename(tmp: str, path: Path) -> None:
    """A hook for fault-injection tests (a crash between the write and the rename)."""


def atomic_write(path: str | Path, text: str) -> Path:
    """Write ``text`` to ``path`` atomically and durably (:func:`durable_write`)."""
    return durable_write(path, text)


def save_figure(fig: Any, path: str | Path, **kwargs: Any) -> Path:
    """Save a matplotlib figure with :func:`durable_write` (rendered in memory first), in the
    format of ``path``'s suffix."""
    buf = io.BytesIO()
    fig.savefig(buf, format=Path(path).suffix.lstrip(".") or "png", **kwargs)
    return durable_write(path, buf.getvalue())


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


#: File descriptors of held locks and open journals: a forked worker closes its copies
#: (:func:`close_inherited`) so that the lock ends with the run, not with its last worker.
_HELD_FDS: set[int] = set()


def close_inherited() -> None:
    """In a forked child: close the copies of the parent's lock and journal descriptors."""
    for fd in list(_HELD_FDS):
        try:
            os.close(fd)
        except OSError:
            pass
    _HELD_FDS.clear()


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


def check_record(rec: object) -> str | None:
    """Why a journal line's value is not an episode record (``None`` if it is one): a mapping
    with text ``policy`` and ``scenario`` and an integer ``seed`` >= 0."""
    if not isinstance(rec, dict):
        return f"not a record but {type(rec).__name__} {excerpt(rec)}"
    for k in ("policy", "scenario"):
        if not isinstance(rec.get(k), str):
            return f"{k} is {excerpt(rec.get(k)) if k in rec else 'missing'}, not text"
    seed = rec.get("seed")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        return f"seed is {excerpt(seed) if 'seed' in rec else 'missing'}, not an integer >= 0"
    return None


class RunFolder:
    """The output folder ``parent/name`` of one run, with its lock, journal and staging folder.

    Use as a context manager: entering checks the name (:func:`safe_child`), that the parent
    folder is writable and that nothing this tool did not write is at the folder's, lock's or
    journal's path (a file, a link, a folder without the run marker), and takes the lock (an
    :class:`InputError` if another run holds it), before any episode runs; it then removes the
    staging and old folders an interrupted earlier run left. Leaving removes this run's staging
    folders and the lock file (the lock is taken by the file's identity, so removing it is safe).

    Args:
        parent: The folder that holds the run folder (created if missing).
        name: The run folder's name.
        header: What defines the run (scenario, overrides, file hashes...): a journal is resumed
            only when its header is equal.
        field: What ``name`` is, for errors.
    """

    def __init__(self, parent: str | Path, name: str, header: dict,
                 field: str = "run name") -> None:
        self.parent = Path(parent)
        self.final = safe_child(self.parent, name, field)
        self.name = name
        self.journal_path = self.parent / f".{name}.journal.jsonl"
        self.lock_path = self.parent / f".{name}.lock"
        self.header = json_safe(header)
        self.notes: list[str] = []             # what resuming skipped, said once by the caller
        self._lock_fd: int | None = None
        self._journal_fd: int | None = None
        self._written: list[str] = []          # the journal's lines (to recreate a lost one)
        self._staged: list[Path] = []

    # ------------------------------------------------------------------ lock
    def __enter__(self) -> RunFolder:
        try:
            self.parent.mkdir(parents=True, exist_ok=True)
            probe = tempfile.NamedTemporaryFile(dir=self.parent, prefix=".probe.", delete=True)
            probe.close()
        except OSError as e:
            raise InputError(f"--out {self.parent}: cannot write there ({e.strerror})") from None
        self._check_final()
        for path, what in ((self.lock_path, "lock"), (self.journal_path, "journal")):
            if path.is_symlink() or (path.exists() and not path.is_file()):
                kind = "a symbolic link" if path.is_symlink() else "not a regular file"
                raise InputError(f"{path}: the run's {what} path is {kind} this tool did not "
                                 "create; remove it or use another --out")
        self._lock()
        try:
            self._remove_leftovers()
        except BaseException:
            self._unlock(remove=False)
            raise
        return self

    def _lock(self) -> None:
        import fcntl
        while True:
            try:
                fd = os.open(self.lock_path, os.O_CREAT | os.O_RDWR | os.O_CLOEXEC
                             | getattr(os, "O_NOFOLLOW", 0), file_mode())
            except OSError as e:
                raise InputError(f"{self.lock_path}: cannot open the run's lock: "
                                 f"{e.strerror}") from None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                os.close(fd)
                raise InputError(f"{self.final}: another run is writing to this folder "
                                 f"(lock {self.lock_path}); wait for it or use another "
                                 "--out") from None
            try:                                 # the file may have been removed by the
                same = os.path.samestat(os.fstat(fd), os.stat(self.lock_path))  # run before
            except OSError:
                same = False
            if same:
                self._lock_fd = fd
                _HELD_FDS.add(fd)
                return
            os.close(fd)

    def _unlock(self, remove: bool = True) -> None:
        if self._lock_fd is None:
            return
        import fcntl
        if remove:                     # while holding it: a waiting run re-checks the identity
            try:
                os.unlink(self.lock_path)
            except OSError:
                pass
        _HELD_FDS.discard(self._lock_fd)
        fcntl.flock(self._lock_fd, fcntl.LOCK_UN)
        os.close(self._lock_fd)
        self._lock_fd = None

    def __exit__(self, *exc) -> None:
        self._close_journal()
        for path in self._staged:                   # made by this run (marker or not)
            self._remove_ours(path, checked=True)
        self._staged = []
        self._unlock()

    def _check_final(self) -> None:
        """Refuse a results path that holds what this tool did not write."""
        f = self.final
        if f.is_symlink():
            raise InputError(f"{f}: the results folder is a symbolic link; it is never "
                             "followed or replaced: remove it or use another --out")
        if f.exists() and not f.is_dir():
            raise InputError(f"{f}: a file is where the results folder goes; move it away "
                             "or use another --out")
        if f.is_dir() and not self._ours(f):
            raise InputError(f"{f}: a folder this tool did not write (no {MARKER}, "
                             "records.json or failures.json) is where the results go; move "
                             "it away or use another --out")

    @staticmethod
    def _ours(path: Path) -> bool:
        """A real folder that a run of this tool wrote (its marker; older runs' result files),
        or an empty one."""
        if path.is_symlink() or not path.is_dir():
            return False
        names = {p.name for p in path.iterdir()}
        return not names or bool(names & {MARKER, "records.json", "failures.json"})

    def _remove_ours(self, path: Path, checked: bool = False) -> None:
        """Remove a folder this tool wrote (its marker, or ``checked`` by the caller)."""
        if path.is_symlink() or not path.is_dir() or not (checked or (path / MARKER).is_file()):
            return
        try:
            shutil.rmtree(path)
        except OSError as e:
            print(f"note: could not remove {path}: {e.strerror or e}", file=sys.stderr)

    def _remove_leftovers(self) -> None:
        """Staging and old folders of interrupted earlier runs (held lock: none is in use)."""
        for pattern in (f".{self.name}.staging.*", f".{self.name}.old.*"):
            for path in self.parent.glob(pattern):
                self._remove_ours(path)
        for path in self.parent.glob(f".{self.journal_path.name}.*.tmp"):  # a cut rewrite
            if path.is_file() and not path.is_symlink():
                try:
                    path.unlink()
                except OSError:
                    pass

    # ------------------------------------------------------------------ journal
    def resumable(self) -> list[dict]:
        """Finished episodes of an earlier run with the same header (successes only).

        A line the earlier run's interruption cut (the last, unterminated one) is dropped; a
        line that is not an episode record (corrupt, edited, not UTF-8) is skipped with a note
        in :attr:`notes` naming it, and every valid line before and after it is kept.

        Raises:
            InputError: The journal cannot be read, has no complete header, was written by
                another version or for another run (naming what changed).
        """
        if not self.journal_path.is_file():
            return []
        try:
            data = self.journal_path.read_bytes()
        except OSError as e:
            raise InputError(f"--resume: cannot read the journal {self.journal_path}: "
                             f"{e.strerror}") from None
        where = f"--resume: the journal {self.journal_path}"
        again = "; run without --resume to start afresh"
        lines = data.split(b"\n")
        cut_last = not data.endswith(b"\n")
        if not data.strip():
            raise InputError(f"{where} is empty (no header){again}")
        try:
            head = json.loads(lines[0].decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError):
            state = "cut" if len(lines) == 1 and cut_last else "unreadable"
            raise InputError(f"{where}: its header line is {state} "
                             f"({excerpt(lines[0])}){again}") from None
        if not isinstance(head, dict) or not isinstance(head.get("run"), dict):
            raise InputError(f"{where}: line 1 is not a journal header "
                             f"({excerpt(lines[0])}){again}")
        old = head["run"]
        mine = self.header.get("mrsched_gym")
        if "mrsched_gym" in old and old.get("mrsched_gym") != mine:
            raise InputError(f"{where} was written by mrsched_gym {old.get('mrsched_gym')}, "
                             f"this is {mine}{again}")
        if old != self.header:
            changes = header_diff(old, self.header)
            shown = "; ".join(changes[:4]) + (f" (and {len(changes) - 4} more)"
                                              if len(changes) > 4 else "")
            raise InputError(f"{where} belongs to a different run: {shown}{again}")
        out = []
        body = lines[1:]
        if body and body[-1] == b"":
            body = body[:-1]
        for i, raw in enumerate(body, start=2):
            why = None
            try:
                rec = json.loads(raw.decode("utf-8"))
                why = check_record(rec)
            except UnicodeDecodeError as e:
                why = f"not UTF-8 text (byte {raw[e.start]:#04x})"
            except json.JSONDecodeError:
                if i == len(body) + 1 and cut_last:
                    self.notes.append(f"{self.journal_path}: line {i} was cut by an "
                                      "interruption; its episode runs again")
                    continue
                why = f"not JSON ({excerpt(raw)})"
            if why is not None:
                self.notes.append(f"{self.journal_path}: line {i} skipped: {why}; that "
                                  "episode runs again")
                continue
            if "error" not in rec:
                out.append(nan_for_null(rec))
        return out

    def unfinished_episodes(self) -> int:
        """Episodes recorded in a journal left by an earlier run (0 if none)."""
        try:
            data = self.journal_path.read_bytes()
        except OSError:
            return 0
        return max(0, len([x for x in data.split(b"\n") if x.strip()]) - 1)

    def open_journal(self, keep: Iterable[dict] = ()) -> None:
        """Start the journal: the header, then the ``keep`` records (resumed episodes), written
        as a new file that replaces the old one in one rename (a kill leaves either); from then
        on the journal is only appended to."""
        self._written = [json.dumps({"run": self.header})]
        self._written += [json.dumps(json_safe(rec)) for rec in keep]
        self._rewrite_journal()

    def _rewrite_journal(self) -> None:
        self._close_journal()
        try:
            durable_write(self.journal_path, "".join(x + "\n" for x in self._written))
        except OutputError as e:
            raise OutputError(f"the run's journal: {e}") from None
        try:
            self._journal_fd = os.open(self.journal_path, os.O_WRONLY | os.O_APPEND
                                       | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0))
        except OSError as e:
            raise OutputError(f"{self.journal_path}: cannot open the journal: "
                              f"{e.strerror}") from None
        _HELD_FDS.add(self._journal_fd)

    def _close_journal(self) -> None:
        if self._journal_fd is not None:
            _HELD_FDS.discard(self._journal_fd)
            os.close(self._journal_fd)
            self._journal_fd = None

    def append(self, rec: dict) -> None:
        """Record one finished (or failed) episode now (written and fsynced). A journal whose
        folder was removed during the run is written again in a recreated folder.

        Raises:
            OutputError: The journal cannot be written (e.g. the disk is full), naming it and
                how many episodes it holds.
        """
        line = json.dumps(json_safe(rec))
        self._written.append(line)
        try:
            if self._journal_fd is None or os.fstat(self._journal_fd).st_nlink == 0:
                self._recreate("the journal")
                return
            os.write(self._journal_fd, (line + "\n").encode("utf-8"))
            os.fsync(self._journal_fd)
        except OSError as e:
            raise OutputError(f"cannot append to the journal {self.journal_path}: "
                              f"{e.strerror or e}; it holds the {len(self._written) - 2} "
                              "episodes finished before (--resume keeps them)") from None

    def _recreate(self, what: str) -> None:
        """Write the journal again after its folder or file vanished during the run."""
        if not self.parent.is_dir():
            print(f"note: {self.parent} was removed during the run; {what} and the results "
                  "are written into a recreated folder", file=sys.stderr)
        self._rewrite_journal()

    # ------------------------------------------------------------------ the final folder
    def staging(self) -> Path:
        """A new empty folder beside the final one, to write every output of the run into
        (removed when the run ends, and by the next run if this one was killed). An output
        folder removed during the run is recreated (saying so)."""
        if not self.parent.is_dir():
            print(f"note: {self.parent} was removed during the run; the results go into a "
                  "recreated folder", file=sys.stderr)
        try:
            self.parent.mkdir(parents=True, exist_ok=True)
            path = Path(tempfile.mkdtemp(dir=self.parent, prefix=f".{self.name}.staging."))
            self._staged.append(path)
            os.chmod(path, file_mode(directory=True))
            durable_write(path / MARKER, "written by mrsched-gym\n")
        except OSError as e:
            raise OutputError(f"{self.parent}: cannot write the results: "
                              f"{e.strerror or e}") from None
        return path

    def commit(self, staged: Path, keep_journal: bool = False) -> Path:
        """Put the staged folder in place of the final one (the old one, which this tool wrote,
        is removed after the swap), and drop the journal unless ``keep_journal`` (failed
        episodes to re-run). Something this tool did not write at the final path (a link, a
        file, a foreign folder) is left alone: the error names where the results are instead."""
        try:
            self._check_final()
        except InputError as e:
            self._staged.remove(staged)
            raise OutputError(f"{e}; this run's results are in {staged}") from None
        old = None
        try:
            if self.final.exists():
                old = Path(tempfile.mkdtemp(dir=self.parent, prefix=f".{self.name}.old."))
                os.rmdir(old)
                os.replace(self.final, old)
            os.replace(staged, self.final)
            fsync_dir(self.parent)
        except OSError as e:
            raise OutputError(f"{self.final}: cannot put the results in place: "
                              f"{e.strerror or e}; they are in {staged}") from None
        self._staged.remove(staged)
        if old is not None:
            self._remove_ours(old, checked=True)
        if not keep_journal:
            self._close_journal()
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


__all__ = ["MARKER", "EpisodeFailures", "RunFolder", "atomic_write", "check_record",
           "close_inherited", "csv_text", "durable_write", "excerpt", "file_mode", "fsync_dir",
           "header_diff", "job_rows", "json_safe", "mean_ci95", "metric_names", "nan_for_null",
           "safe_child", "save_figure", "summarize", "task_key", "write_results"]
