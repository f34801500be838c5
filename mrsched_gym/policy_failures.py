"""Every way an outside policy's code can end, reported as that policy's failure.

A policy is code the harness did not write: at import, construction, ``reset`` or ``decide``
(``act``, ``predict``) it may raise anything, ``BaseException`` included: ``SystemExit``
(``sys.exit()``), ``GeneratorExit``, or a ``KeyboardInterrupt`` that no signal sent. None of
these may end a run silently (``sys.exit(0)`` would exit 0 with nothing written) or skip the
other policies' results. :func:`policy_failure` turns any of them into a
:class:`PolicyCodeError` (an ``Exception``, so the harness records it like any failed
episode) whose message names the policy and the phase; a real interrupt (Ctrl-C, SIGTERM;
:func:`~mrsched_gym.lifecycle.interrupt_is_real`) passes through and ends the run as usual.
"""

from __future__ import annotations

import traceback
from pathlib import Path
from typing import NoReturn

#: The phases of a policy's life that the messages name.
PHASES = ("import", "construction", "reset", "decide")


class PolicyCodeError(RuntimeError):
    """An outside policy's own code raised (anything, ``BaseException`` included) or exited.

    Attributes:
        label: The policy.
        phase: One of :data:`PHASES`.
    """

    def __init__(self, message: str, label: str, phase: str) -> None:
        super().__init__(message)
        self.label = label
        self.phase = phase


def describe(exc: BaseException) -> str:
    """``Type: message`` of ``exc``, plus where the innermost frame outside the harness raised
    it (``(my_policy.py line 12)``), so one line says where to look."""
    text = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    if isinstance(exc, SystemExit):
        text = f"SystemExit({exc.code!r}): the policy called sys.exit()"
    frames = traceback.extract_tb(exc.__traceback__)
    package = Path(__file__).resolve().parent
    own = [f for f in frames if not Path(f.filename).resolve().is_relative_to(package)
           and "importlib" not in f.filename]
    if own:
        text += f" ({Path(own[-1].filename).name} line {own[-1].lineno})"
    return text


def policy_failure(label: str, phase: str, exc: BaseException) -> BaseException:
    """What to raise for ``exc``, raised by policy ``label``'s code in ``phase``: the
    exception itself if it is a real interrupt or already a :class:`PolicyCodeError`, else a
    :class:`PolicyCodeError` naming the policy and the phase (raise it ``from exc``: the
    original traceback stays in the failure's traceback)."""
    if isinstance(exc, PolicyCodeError):
        return exc
    if isinstance(exc, KeyboardInterrupt):
        from mrsched_gym.lifecycle import interrupt_is_real
        if interrupt_is_real():
            return exc
    return PolicyCodeError(f"policy {label}: its {phase} raised {describe(exc)}", label, phase)


def reraise(label: str, phase: str, exc: BaseException) -> NoReturn:
    """Raise what :func:`policy_failure` makes of ``exc`` (the original as its cause)."""
    failure = policy_failure(label, phase, exc)
    if failure is exc:
        raise exc
    raise failure from exc


__all__ = ["PHASES", "PolicyCodeError", "describe", "policy_failure", "reraise"]
