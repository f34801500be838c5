"""The manifest of a results folder: the list of files this tool wrote into it.

Every results folder the harness writes (``compare``, ``benchmark``, ``reproduce``) holds a
manifest, the file :data:`~mrsched_gym.results.files.MARKER`, listing every file the run wrote.
Only what a manifest lists is ever replaced or removed: a folder is replaced as a whole only
when everything in it is listed (:func:`foreign_entries` is empty), and any other file (a notes
file the user added, a folder that merely happens to hold a ``records.json``) makes the run an
error that names it, before any episode runs. The manifest also records each file's SHA-256: a
file this tool wrote that was edited since (a user's own ``records.json`` over ours) is no
longer ours either, and is named the same way.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable
from pathlib import Path

from mrsched_gym.errors import InputError
from mrsched_gym.results.files import MARKER, durable_write

#: What the first key of a manifest says (a manifest is JSON: ``{"written_by": ..., "files":
#: [relative paths], "sha256": {relative path of a file: its SHA-256}}``; a manifest without
#: ``sha256``, of an older version, lists its files without their contents).
WRITTEN_BY = "mrsched-gym"


def file_digest(path: Path) -> str | None:
    """The SHA-256 of a regular file (not a link), else ``None``."""
    if path.is_symlink() or not path.is_file():
        return None
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def manifest_text(folder: Path, listed: list[str], known: dict[str, str],
                  fresh: set[str] | None = None) -> str:
    """The manifest of ``folder`` listing ``listed``: the digest of each file of ``fresh`` (just
    written; default every listed entry) as it is now, of the others as ``known`` (an earlier
    manifest's) has it."""
    digests = {}
    for e in listed:
        d = None
        if (fresh is None or e in fresh) and not e.endswith("/"):
            d = file_digest(folder / e)
        if d is None:
            d = known.get(e)
        if d is not None:
            digests[e] = d
    return json.dumps({"written_by": WRITTEN_BY, "files": listed, "sha256": digests},
                      indent=1) + "\n"


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
    return durable_write(folder / MARKER, manifest_text(folder, listed, {}))


def read_manifest(folder: Path) -> dict | None:
    """The manifest of ``folder`` as JSON; ``None`` when there is none (or it is not one: not
    JSON, or the bare marker of a version that kept no list)."""
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
    return data


def listed_entries(folder: Path) -> set[str] | None:
    """The entries the manifest of ``folder`` lists; ``None`` when there is no manifest."""
    data = read_manifest(folder)
    if data is None:
        return None
    return {f for f in data["files"] if isinstance(f, str)}


def recorded_digests(folder: Path) -> dict[str, str]:
    """The SHA-256 of each file the manifest of ``folder`` records (none for an older one)."""
    data = read_manifest(folder)
    digests = data.get("sha256") if data is not None else None
    if not isinstance(digests, dict):
        return {}
    return {k: v for k, v in digests.items() if isinstance(k, str) and isinstance(v, str)}


def is_ours(folder: Path, entry: str, listed: set[str], digests: dict[str, str]) -> bool:
    """Whether ``entry`` of ``folder`` is as this tool wrote it: listed, and a file whose
    content is the recorded one (when the manifest records it)."""
    if entry not in listed:
        return False
    recorded = digests.get(entry)
    return recorded is None or file_digest(folder / entry) == recorded


def foreign_entries(folder: Path) -> list[str]:
    """The entries of ``folder`` this tool did not write (not in its manifest, or changed
    since it wrote them; every entry when it has none). An empty folder has none."""
    entries = folder_entries(folder)
    listed = listed_entries(folder)
    if listed is None:
        return entries
    digests = recorded_digests(folder)
    return [e for e in entries if not is_ours(folder, e, listed, digests)]


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
    elif foreign[0] in listed_entries(folder):
        why = (f"{first}{more}: changed since this tool wrote it into {what} {folder} (its "
               f"manifest {MARKER} records other contents)")
    else:
        why = (f"{first}{more}: not a file this tool wrote into {what} {folder} (its "
               f"manifest {MARKER} does not list it)")
    raise InputError(f"{why}; nothing is replaced: move it away or use another --out")


def add_to_manifest(folder: Path, written: Iterable[str]) -> Path:
    """List ``written`` (entries this run wrote into ``folder``) in its manifest, with the
    entries it listed before that are still there; nothing else in the folder is listed."""
    keep = {e for e in (listed_entries(folder) or set())
            if (folder / e.rstrip("/")).exists() or (folder / e).is_symlink()}
    written = set(written)
    listed = sorted(keep | written)
    # what this run wrote is recorded as it is now; what it kept, as the manifest had it
    return durable_write(folder / MARKER,
                         manifest_text(folder, listed, recorded_digests(folder), written))


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
    digests = recorded_digests(folder)
    for name in writes:
        target = folder / name
        if os.path.lexists(target) and not is_ours(folder, name, listed, digests):
            why = ("changed since this tool wrote it" if name in listed else
                   "not a file this tool wrote")
            raise InputError(f"{target}: {why} into {what} {folder} (its manifest {MARKER} "
                             f"{'records other contents' if name in listed else 'does not list it'}"
                             f"); nothing is replaced: move it away or use another --out")


__all__ = ["add_to_manifest", "check_ours", "check_writable_folder", "file_digest",
           "folder_entries", "foreign_entries", "is_ours", "listed_entries", "read_manifest",
           "recorded_digests", "write_manifest"]
