"""The project's own exceptions: one base class, so callers (and the CLI) can tell a bad input
from a bug.

Every subclass also derives from the built-in exception a user would expect (``ValueError`` for
bad values), so ``except ValueError`` keeps working. The ``mrsched-gym`` command prints any
:class:`MRSchedError` as one ``error: ...`` line and exits 2.
"""

from __future__ import annotations

import difflib
import errno
import os
import stat
from collections.abc import Iterable


class MRSchedError(Exception):
    """Base class of every error the project raises on purpose (bad input, failed run)."""


class InputError(MRSchedError, ValueError):
    """A bad argument (policy name, seed list, metric, output folder, action...)."""


class InputTypeError(MRSchedError, TypeError):
    """An argument of the wrong type (an action that is not an integer, a flag that is not a
    bool, a scenario that is neither a path, a name nor a ``Scenario``)."""


class EpisodeStateError(MRSchedError, RuntimeError):
    """A call out of order: ``step()`` or ``action_masks()`` before ``reset()``, or ``step()``
    after the episode has ended."""


class MissingExtraError(MRSchedError, ImportError):
    """A call needs an optional extra (``rl``: torch and SB3; ``ray``) that is not installed;
    the message says how to install it (:func:`install_hint`)."""


class OutputError(MRSchedError, OSError):
    """A result, journal or lock file cannot be written (disk full, a folder where a file goes,
    a path this run did not create); the message names the path and what is kept where."""


def install_hint(extra: str) -> str:
    """How to install the optional ``extra``: from the clone (the package is on no package
    index), with the constraints file that pins torch's version (its CPU build comes from
    PyTorch's CPU index: ``PIP_EXTRA_INDEX_URL``, see constraints.txt)."""
    return (f"pip install -c constraints.txt -e '.[{extra}]' in the clone (for torch's CPU "
            f"build, first: export PIP_EXTRA_INDEX_URL=https://download.pytorch.org/whl/cpu)")


def did_you_mean(word: str, known: Iterable[str]) -> str:
    """``"; did you mean 'x'?"`` naming the known name closest to a misspelt ``word`` (difflib's
    ratio at least 0.6), or ``""``: the tail of an error message about an unknown name."""
    close = difflib.get_close_matches(word, list(known), n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""


__all__ = ["EpisodeStateError", "InputError", "InputTypeError", "MRSchedError",
           "MissingExtraError", "OutputError", "did_you_mean", "install_hint"]


def unreachable(error: OSError, what: str) -> str:
    """Why a path that ``os.stat`` refused with ``error`` cannot be read as ``what``."""
    if error.errno == errno.ELOOP:
        return f"is a symbolic link loop (links that lead back to themselves), not a {what}"
    if error.errno == errno.ENAMETOOLONG:
        return f"is a path too long for the file system (a {what}'s path must be shorter)"
    if error.errno == errno.EACCES:
        return f"cannot be reached (permission denied); a {what} must be readable"
    if error.errno == errno.ENOTDIR:
        return f"{what} not found (a part of the path is a file, not a folder)"
    return f"{what} not found"


def special_kind(path: os.PathLike[str] | str) -> str | None:
    """What ``path`` is when it exists and is neither a regular file, a folder nor a link to
    one of them: ``"a device"``, ``"a named pipe (FIFO)"``, ``"a socket"``, ``"a symbolic link
    loop"``; None otherwise (missing, a file, a folder)."""
    try:
        mode = os.stat(path).st_mode
    except OSError as e:
        return "a symbolic link loop" if e.errno == errno.ELOOP else None
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return None
    return ("a named pipe (FIFO)" if stat.S_ISFIFO(mode) else "a device"
            if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "a socket")


def not_a_file(path: os.PathLike[str] | str, what: str) -> str:
    """Why ``path`` cannot be read as ``what`` (e.g. "trace file") when it is not a regular file:
    "not found", or what it is instead (a directory, a named pipe, a device, a socket)."""
    try:
        mode = os.stat(path).st_mode
    except OSError as e:
        return unreachable(e, what)
    kind = ("a directory" if stat.S_ISDIR(mode) else "a named pipe (FIFO)" if stat.S_ISFIFO(mode)
            else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
            else "a socket" if stat.S_ISSOCK(mode) else "not a regular file")
    return f"is {kind}, not a {what}" if kind.startswith("a ") else f"{kind}; a {what} is one"
