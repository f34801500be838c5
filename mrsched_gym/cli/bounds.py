"""The bounds of what the command line accepts, checked before any work: the counts
(:func:`count`) and the paths it writes (:func:`writable_path`). Documented in
docs/leaderboard.md, "Bounds"."""

from __future__ import annotations

import argparse
import os

from mrsched_gym.config.limits import MAX_SEED, MAX_TRAIN_STEPS
from mrsched_gym.errors import special_kind

#: The upper bounds of the command's counts, checked before any work (docs/leaderboard.md,
#: "Bounds"), far above any run this machine class finishes (seeds: ``MAX_SEED``, numpy's and
#: torch's seed range).
MAX_SEEDS = 100_000
MAX_WORKERS = 1_024
#: The longest path (bytes) and path component the command accepts for a file it writes
#: (Linux's PATH_MAX and NAME_MAX).
MAX_PATH_BYTES = 4_095
MAX_NAME_BYTES = 255


def count(lo: int, hi: int):
    """An argparse ``type=``: an integer in ``[lo, hi]``."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
        if not lo <= value <= hi:
            raise argparse.ArgumentTypeError(f"must be from {lo:,} to {hi:,}, got {value:,}")
        return value
    return parse


def writable_path(text: str) -> str:
    """An argparse ``type=``: a path the file system can hold (no component longer than
    :data:`MAX_NAME_BYTES`, the whole not longer than :data:`MAX_PATH_BYTES`) and that is not a
    device, a named pipe, a socket or a symbolic link loop."""
    encoded = os.fsencode(os.path.abspath(text)) if text else b""
    longest = max((len(part) for part in encoded.split(b"/")), default=0)
    if len(encoded) > MAX_PATH_BYTES or longest > MAX_NAME_BYTES:
        shown = text if len(text) <= 60 else text[:60] + f"... ({len(text):,} characters)"
        raise argparse.ArgumentTypeError(
            f"{shown!r} is a path too long for the file system (at most {MAX_NAME_BYTES} bytes "
            f"per name and {MAX_PATH_BYTES:,} in all)")
    kind = special_kind(text) if text else None
    if kind is not None:
        raise argparse.ArgumentTypeError(f"{text!r} is {kind}: the command writes files and "
                                         "folders only")
    return text


__all__ = ["MAX_NAME_BYTES", "MAX_PATH_BYTES", "MAX_SEED", "MAX_SEEDS", "MAX_TRAIN_STEPS",
           "MAX_WORKERS", "count", "writable_path"]
