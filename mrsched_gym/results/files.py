"""Result files written durably: a temporary file, fsync and a rename (:func:`durable_write`, the
package's one writer), the permissions of a normally created file, names from user data checked
(:func:`safe_child`), and the JSON / CSV forms of records."""

from __future__ import annotations

import csv
import errno
import io
import math
import os
import re
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from mrsched_gym.errors import InputError, OutputError, special_kind


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
        kind = special_kind(out)                # a regular file: RunFolder names it
        if kind is not None:
            raise InputError(f"{out} is {kind}, not a folder: results go into a folder")
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
        kind = special_kind(path)
        if kind is not None:                    # never renamed over: /dev/full stays a device
            raise OutputError(f"{path}: cannot write it: it is {kind}, not a file (results are "
                              "written as files only)")
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
    except OutputError:
        raise
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


__all__ = ["MARKER", "SLUG_CHARS", "atomic_write", "csv_text", "durable_write", "excerpt",
           "file_mode", "fsync_dir", "json_safe", "safe_child", "save_figure"]
