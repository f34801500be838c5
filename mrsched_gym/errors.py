"""The project's own exceptions: one base class, so callers (and the CLI) can tell a bad input
from a bug.

Every subclass also derives from the built-in exception a user would expect (``ValueError`` for
bad values), so ``except ValueError`` keeps working. The ``mrsched-gym`` command prints any
:class:`MRSchedError` as one ``error: ...`` line and exits 2.
"""

from __future__ import annotations


class MRSchedError(Exception):
    """Base class of every error the project raises on purpose (bad input, failed run)."""


class InputError(MRSchedError, ValueError):
    """A bad argument (policy name, seed list, metric, output folder, action...)."""


__all__ = ["InputError", "MRSchedError"]
