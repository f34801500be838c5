"""An agent file as it was when a run started: read once, checked against the run's digest,
and loaded from those bytes, so a file replaced while it is read (a trainer writing
``best_model.zip`` with ``os.replace``, or any swap and swap back) can never be played under the
run's version."""

from __future__ import annotations

import hashlib
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from mrsched_gym.agents.agent_files import MAX_UNPACKED_BYTES
from mrsched_gym.errors import InputError

_T = TypeVar("_T")



def max_agent_file_bytes() -> int:
    """The largest agent file :func:`~mrsched_gym.agents.agent_files.open_archive` accepts; a
    larger one is refused before it is read."""
    return int(MAX_UNPACKED_BYTES) + (1 << 20)


def load_as_started(target: str, digest: str | None, label: str,
                    load: Callable[[str], _T]) -> _T:
    """``load(path)`` of a private copy of the bytes of ``target`` read once, after checking
    that they hash to ``digest`` (the first 16 hex digits of their SHA-256 when the run
    started; ``None``: no check). The copy keeps the file's name; errors name ``target``.

    Raises:
        InputError: The file is gone, too large, or changed since the run started.
    """
    try:
        cap = max_agent_file_bytes()
        with open(target, "rb") as fh:
            data = fh.read(cap + 1)             # bounded, even if it grows meanwhile
        if len(data) > cap:
            raise InputError(f"policy {label!r}: agent file {target} holds more than an agent "
                             f"file can ({cap:,} bytes)")
    except OSError as e:
        raise InputError(f"policy {label!r}: agent file {target} cannot be read any more "
                         f"({e.strerror}); it was there when the run started") from None
    now = hashlib.sha256(data).hexdigest()[:16]
    if digest is not None and now != digest:
        raise InputError(f"policy {label!r}: agent file {target} changed during the run (sha256 "
                         f"{digest}... at the start, {now}... now); one run uses one version "
                         "of a file: run again (--resume re-runs the episodes that failed)")
    folder: Path | None = None
    try:
        folder = Path(tempfile.mkdtemp(prefix="mrsched-agent-"))
        copy = folder / Path(target).name
        copy.write_bytes(data)
    except OSError as e:
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)
        raise InputError(f"policy {label!r}: agent file {target}: cannot make its private copy "
                         f"in the temporary directory ({e.strerror or e})") from None
    try:
        try:
            return load(str(copy))
        except Exception as e:              # noqa: BLE001 - re-raised, naming the user's file
            text = str(e)
            if str(copy) not in text:
                raise
            try:
                named = type(e)(text.replace(str(copy), target))
            except Exception:                # noqa: BLE001 - an exception type of other args
                raise e from None
            raise named from None
    finally:
        shutil.rmtree(folder, ignore_errors=True)
