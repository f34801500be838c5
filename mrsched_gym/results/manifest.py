"""The manifest of a results folder: the list of files this tool wrote into it.

Every results folder the harness writes (``compare``, ``benchmark``, ``reproduce``) holds a
manifest, the file :data:`~mrsched_gym.results.files.MARKER`, listing every file the run wrote.
Only what a manifest lists is ever replaced or removed: a folder is replaced as a whole only
when everything in it is listed (:func:`foreign_entries` is empty), and any other file (a notes
file the user added, a folder that merely happens to hold a ``records.json``) makes the run an
error that names it, before any episode runs.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path

from mrsched_gym.errors import InputError
from mrsched_gym.results.files import MARKER, durable_write

#: What the first key of a manifest says (a manifest is JSON: ``{"written_by": ..., "files":
#: [relative paths]}``).
WRITTEN_BY = "mrsched-gym"


def folder_entries(folder: Path) -> list[str]:
    """Every file, link and folder under ``folder`` as a relative POSIX path (links are not
    followed), sorted, the manifest itself left out."""
    out = []
    stack = [folder]
    while stack:
        here = stack.pop()
        for p in sorted(here.iterdir()):
            rel = p.relative_to(folder).as_posix()
            if rel == MARKER:
                continue
            if p.is_dir() and not p.is_symlink():
                stack.append(p)
                out.append(rel + "/")
            else:
                out.append(rel)
    return sorted(out)


def write_manifest(folder: Path, also: list[str] | tuple[str, ...] = ()) -> Path:
    """Write the manifest of ``folder``: every entry in it now (:func:`folder_entries`), plus
    ``also`` (entries an earlier run listed and that are still ours)."""
    listed = sorted(set(folder_entries(folder)) | set(also))
    return durable_write(folder / MARKER, json.dumps({"written_by": WRITTEN_BY,
                                                      "files": listed}, indent=1) + "\n")


def listed_entries(folder: Path) -> set[str] | None:
    """The entries the manifest of ``folder`` lists; ``None`` when there is no manifest (or it
    is not one: not JSON, or the bare marker of a version that kept no list)."""
    path = folder / MARKER
    if path.is_symlink() or not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("written_by") != WRITTEN_BY \
            or not isinstance(data.get("files"), list):
        return None
    return {f for f in data["files"] if isinstance(f, str)}


def foreign_entries(folder: Path) -> list[str]:
    """The entries of ``folder`` this tool did not write (not in its manifest; every entry when
    it has none). An empty folder has none."""
    entries = folder_entries(folder)
    listed = listed_entries(folder)
    if listed is None:
        return entries
    return [e for e in entries if e not in listed]


def check_ours(folder: Path, what: str = "the results folder") -> None:
    """Refuse to replace ``folder`` unless everything in it was written by this tool.

    Raises:
        InputError: Naming the first entry the manifest does not list, or saying that the
            folder has no manifest.
    """
    foreign = foreign_entries(folder)
    if not foreign:
        return
    first = folder / foreign[0]
    more = f" (and {len(foreign) - 1} more)" if len(foreign) > 1 else ""
    if listed_entries(folder) is None:
        why = (f"{folder}: a folder this tool did not write (no manifest {MARKER}) is where "
               f"{what} goes, and {first}{more} may be yours")
    else:
        why = (f"{first}{more}: not a file this tool wrote into {what} {folder} (its "
               f"manifest {MARKER} does not list it)")
    raise InputError(f"{why}; nothing is replaced: move it away or use another --out")


def add_to_manifest(folder: Path, written: Iterable[str]) -> Path:
    """List ``written`` (entries this run wrote into ``folder``) in its manifest, with the
    entries it listed before that are still there; nothing else in the folder is listed."""
    keep = {e for e in (listed_entries(folder) or set())
            if (folder / e.rstrip("/")).exists() or (folder / e).is_symlink()}
    listed = sorted(keep | set(written))
    return durable_write(folder / MARKER, json.dumps({"written_by": WRITTEN_BY,
                                                      "files": listed}, indent=1) + "\n")


def check_writable_folder(folder: Path, writes: Iterable[str] = (),
                          what: str = "the results folder") -> None:
    """Check, before anything runs or is written, that ``folder`` can be created or written and
    that none of the entries ``writes`` would replace there is a file this tool did not write
    (the folder's other files are kept).

    Raises:
        InputError: A file where a folder of the path goes, a folder that cannot be written, or
            a file at one of ``writes`` that the folder's manifest does not list, naming it.
    """
    for p in (folder, *folder.parents):
        if p.is_symlink() and p == folder:
            raise InputError(f"{p}: {what} is a symbolic link; it is never followed: remove "
                             "it or use another --out")
        if not os.path.lexists(p):
            continue
        if not p.is_dir():
            raise InputError(f"{p}: a file is where {what} {folder} goes; move it away or use "
                             "another --out")
        if not os.access(p, os.W_OK | os.X_OK):
            raise InputError(f"{p}: cannot write {what} {folder} there (permission denied); "
                             "use another --out")
        break
    if not folder.is_dir():
        return
    listed = listed_entries(folder) or set()
    for name in writes:
        target = folder / name
        if os.path.lexists(target) and name not in listed:
            raise InputError(f"{target}: not a file this tool wrote into {what} {folder} (its "
                             f"manifest {MARKER} does not list it); nothing is replaced: move "
                             "it away or use another --out")


__all__ = ["add_to_manifest", "check_ours", "check_writable_folder", "folder_entries",
           "foreign_entries", "listed_entries", "write_manifest"]
