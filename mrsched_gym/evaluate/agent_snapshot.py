"""An agent file as it was when a run started: read once, checked against the run's digest,
and loaded from those bytes, so a file replaced while it is read (a trainer writing
``best_model.zip`` with ``os.replace``, or any swap and swap back) can never be played under the
run's version."""

from __future__ import annotations

import hashlib
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from mrsched_gym.errors import InputError

_T = TypeVar("_T")

#: An agent file larger than this cannot be one (its archive may unpack to 512 MiB at most,
#: and unpacks to at least its own size); it is refused before it is read.
MAX_AGENT_FILE_BYTES = 512 * 2**20


def load_as_started(target: str, digest: str | None, label: str,
                    load: Callable[[str], _T]) -> _T:
    """``load(path)`` of a private copy of the bytes of ``target`` read once, after checking
    that they hash to ``digest`` (the first 16 hex digits of their SHA-256 when the run
    started; ``None``: no check). The copy keeps the file's name; errors name ``target``.

    Raises:
        InputError: The file is gone, too large, or changed since the run started.
    """
    try:
        size = Path(target).stat().st_size
        if size > MAX_AGENT_FILE_BYTES:
            raise InputError(f"policy {label!r}: agent file {target} holds {size:,} bytes, more "
                             f"than an agent file can ({MAX_AGENT_FILE_BYTES:,})")
        data = Path(target).read_bytes()
    except OSError as e:
        raise InputError(f"policy {label!r}: agent file {target} cannot be read any more "
                         f"({e.strerror}); it was there when the run started") from None
    now = hashlib.sha256(data).hexdigest()[:16]
    if digest is not None and now != digest:
        raise InputError(f"policy {label!r}: agent file {target} changed during the run (sha256 "
                         f"{digest}... at the start, {now}... now); one run uses one version "
                         "of a file: run again (--resume re-runs the episodes that failed)")
    with tempfile.TemporaryDirectory(prefix="mrsched-agent-") as folder:
        copy = Path(folder) / Path(target).name
        copy.write_bytes(data)
        try:
            return load(str(copy))
        except InputError as e:
            raise InputError(str(e).replace(str(copy), target)) from None
        except FileNotFoundError as e:
            raise InputError(str(e).replace(str(copy), target)) from None

