"""The folder of one ``compare`` run (:class:`RunFolder`): its lock, its journal of finished
episodes and its staging folder, put in place in one step."""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path

from mrsched_gym.errors import InputError, OutputError
from mrsched_gym.results.files import (
    MARKER,
    durable_write,
    excerpt,
    file_mode,
    fsync_dir,
    json_safe,
    safe_child,
)
from mrsched_gym.results.manifest import check_ours, write_manifest
from mrsched_gym.results.record_checks import check_record, sealed_line, unseal
from mrsched_gym.results.records import header_diff, nan_for_null, task_key

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


class RunFolder:
    """The output folder ``parent/name`` of one run, with its lock, journal and staging folder.

    Use as a context manager: entering checks the name (:func:`safe_child`), that the parent
    folder is writable and that nothing this tool did not write is at the folder's, lock's or
    journal's path (a file, a link, a folder holding anything its manifest does not list:
    :func:`~mrsched_gym.results.manifest.check_ours`), and takes the lock (an
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
        if f.is_dir():
            check_ours(f)

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
        line that is not an episode record (corrupt, edited, not UTF-8, a metric of the wrong
        type or out of its range: :func:`~mrsched_gym.results.record_checks.check_record`) is
        skipped with a note in :attr:`notes` naming it, and every valid line before and after
        it is kept. An episode recorded twice counts once (identical lines) or not at all (lines
        that differ: it runs again). The result holds each episode once.

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
        body = lines[1:]
        if body and body[-1] == b"":
            body = body[:-1]
        kept: dict[tuple, tuple[int, dict]] = {}     # episode -> (line, record)
        dropped: set[tuple] = set()                  # episodes whose lines disagree
        for i, raw in enumerate(body, start=2):
            why = None
            try:
                rec = json.loads(raw.decode("utf-8"))
                why = check_record(rec) or unseal(rec)
            except UnicodeDecodeError as e:
                why = f"not UTF-8 text (byte {raw[e.start]:#04x})"
            except json.JSONDecodeError:
                if i == len(body) + 1 and cut_last:
                    self.notes.append(f"{self.journal_path}: line {i} was cut by an "
                                      "interruption; its episode runs again")
                    continue
                why = f"not JSON ({excerpt(raw)})"
            except RecursionError:
                why = "nested too deeply"
            if why is not None:
                self.notes.append(f"{self.journal_path}: line {i} skipped: {why}; that "
                                  "episode runs again")
                continue
            if "error" in rec:
                continue
            key = task_key(rec)
            if key in dropped:
                continue
            if key in kept:
                first, other = kept[key]
                if other != rec:
                    del kept[key]
                    dropped.add(key)
                    self.notes.append(f"{self.journal_path}: lines {first} and {i} hold "
                                      f"different records of {key[0]} seed {key[2]}; neither "
                                      "is kept, that episode runs again")
                else:
                    self.notes.append(f"{self.journal_path}: line {i} repeats line {first} "
                                      f"({key[0]} seed {key[2]}); counted once")
                continue
            kept[key] = (i, rec)
        return [nan_for_null(rec) for _, rec in kept.values()]

    def unfinished_episodes(self) -> int:
        """Finished episodes a journal on disk holds (0 if none): its valid lines, each episode
        once (the count every message gives)."""
        try:
            data = self.journal_path.read_bytes()
        except OSError:
            return 0
        keys = set()
        for raw in data.split(b"\n")[1:]:
            try:
                rec = json.loads(raw.decode("utf-8"))
            except (UnicodeDecodeError, ValueError, RecursionError):
                continue
            if check_record(rec) is None and unseal(rec) is None and "error" not in rec:
                keys.add(task_key(rec))
        return len(keys)

    def open_journal(self, keep: Iterable[dict] = ()) -> None:
        """Start the journal: the header, then the ``keep`` records (resumed episodes), written
        as a new file that replaces the old one in one rename (a kill leaves either); from then
        on the journal is only appended to."""
        self._written = [json.dumps({"run": self.header})]
        self._written += [sealed_line(json_safe(rec)) for rec in keep]
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
        line = sealed_line(json_safe(rec))
        self._written.append(line)
        try:
            if self._journal_fd is None or os.fstat(self._journal_fd).st_nlink == 0:
                self._recreate("the journal")
                return
            os.write(self._journal_fd, (line + "\n").encode("utf-8"))
            os.fsync(self._journal_fd)
        except OSError as e:
            kept = self.unfinished_episodes()
            raise OutputError(f"cannot append to the journal {self.journal_path}: "
                              f"{e.strerror or e}; it holds {kept} finished episode"
                              f"{'' if kept == 1 else 's'} (--resume keeps them)") from None

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
        episodes to re-run). The staged folder's manifest lists every file in it. Something
        this tool did not write at the final path (a link, a file, a folder holding a file its
        manifest does not list) is left alone: the error names where the results are
        instead."""
        try:
            write_manifest(staged)
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


__all__ = ["RunFolder", "close_inherited"]
