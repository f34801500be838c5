"""Every way an outside policy's code can end, reported as that policy's failure.

A policy is code the harness did not write: at import, construction, ``reset`` or ``decide``
(``act``, ``predict``) it may raise anything, ``BaseException`` included: ``SystemExit``
(``sys.exit()``), ``GeneratorExit``, or a ``KeyboardInterrupt`` that no signal sent. None of
these may end a run silently (``sys.exit(0)`` would exit 0 with nothing written) or skip the
other policies' results. :func:`policy_failure` turns any of them into a
:class:`PolicyCodeError` (an ``Exception``, so the harness records it like any failed
episode) whose message names the policy and the phase; a real interrupt (Ctrl-C, SIGTERM;
:func:`~mrsched_gym.processes.lifecycle.interrupt_is_real`) passes through and ends the run as
usual.
"""

from __future__ import annotations

import contextlib
import os
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import NoReturn

from mrsched_gym.errors import InputError

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


class PolicyLoadError(InputError):
    """An outside policy's own code raised (anything, ``BaseException`` included) at import or
    construction. One run of one policy (``make_policy``, ``demo``) refuses it as any bad
    input; a sweep records it as that policy's failure and runs the other policies
    (:func:`~mrsched_gym.evaluate.running.run_task`).

    Attributes:
        label: The policy as given (its code spec).
        phase: ``"import"`` or ``"construction"``.
        trace: The traceback of what the policy's code raised.
    """

    def __init__(self, message: str, label: str, phase: str, trace: str) -> None:
        super().__init__(message)
        self.label = label
        self.phase = phase
        self.trace = trace


class RemoteFailure(PolicyCodeError):
    """A policy's failure in its own process (:mod:`mrsched_gym.policy.process`): what its
    code raised there, its budget running out, or its process ending.

    Attributes:
        text: The failure record's ``error``, as the policy process wrote it (``Type: message
            [notes]``, as :func:`error_text` writes it in this process).
        trace: The traceback from the policy process (empty if none).
    """

    def __init__(self, text: str, label: str, phase: str, trace: str = "") -> None:
        super().__init__(text.partition(": ")[2] or text, label, phase)
        self.text = text
        self.trace = trace


class ProcessExitCalled(SystemExit):
    """Raised in place of ``os._exit(code)`` while an episode runs (:func:`no_process_exit`)."""


@contextlib.contextmanager
def no_process_exit() -> Iterator[None]:
    """While the block runs, ``os._exit`` (and ``posix._exit``) raise
    :class:`ProcessExitCalled` instead of ending the process at once: a policy that calls it
    in the harness's own process (``--workers 1``) fails its episode, named, where it would
    have ended the run with its own exit code and nothing written. Only in the thread that
    runs the block: another thread's ``os._exit`` (the harness's own, a worker's parent watch)
    ends the process as always. Code that ends the process by other means (a signal,
    ``ctypes``, another thread) still does; worker processes (``--workers 2``) are what
    isolates the harness from it."""
    import posix
    import threading

    saved = os._exit
    owner = threading.get_ident()

    def refused(code: int = 0) -> None:
        if threading.get_ident() != owner:
            saved(code)                               # ends the process
            return
        raise ProcessExitCalled(code)
    os._exit = posix._exit = refused                  # type: ignore[assignment]
    try:
        yield
    finally:
        os._exit = posix._exit = saved                # type: ignore[assignment]


def location(exc: BaseException) -> str:
    """`` (my_policy.py line 12)``: where the innermost frame outside the harness raised
    ``exc`` (empty if none is known)."""
    frames = traceback.extract_tb(exc.__traceback__)
    package = Path(__file__).resolve().parent
    own = [f for f in frames if not Path(f.filename).resolve().is_relative_to(package)
           and "importlib" not in f.filename]
    return f" ({Path(own[-1].filename).name} line {own[-1].lineno})" if own else ""


def describe(exc: BaseException) -> str:
    """``Type: message`` of ``exc``, plus :func:`location`, so one line says where to look."""
    text = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    if isinstance(exc, ProcessExitCalled):
        text = f"os._exit({exc.code!r}): the policy called os._exit()"
    elif isinstance(exc, SystemExit):
        text = f"SystemExit({exc.code!r}): the policy called sys.exit()"
    return text + location(exc)


def is_real_interrupt(exc: BaseException) -> bool:
    """Whether ``exc`` is a ``KeyboardInterrupt`` that a signal sent (Ctrl-C, SIGTERM), which
    ends a run, rather than one that code raised."""
    if not isinstance(exc, KeyboardInterrupt):
        return False
    from mrsched_gym.processes.lifecycle import interrupt_is_real
    return interrupt_is_real()


def policy_failure(label: str, phase: str, exc: BaseException) -> BaseException:
    """What to raise for ``exc``, raised by policy ``label``'s code in ``phase``.

    An ``Exception`` is kept as it is (callers may catch its type), with a note naming the
    policy and the phase (PEP 678: in its traceback, and in the error of its failure record);
    a real interrupt and a :class:`PolicyCodeError` are kept as they are; any other
    ``BaseException`` (``SystemExit``, ``GeneratorExit``, a raised ``KeyboardInterrupt``)
    becomes a :class:`PolicyCodeError` naming the policy and the phase (raise it ``from exc``:
    the original traceback stays in the failure's traceback)."""
    if isinstance(exc, PolicyCodeError) or is_real_interrupt(exc):
        return exc
    if isinstance(exc, Exception):
        note = f"policy {label}: its {phase} raised it"
        if not any(n.startswith(note) for n in getattr(exc, "__notes__", ())):
            exc.add_note(note + location(exc))
        return exc
    return PolicyCodeError(f"policy {label}: its {phase} raised {describe(exc)}", label, phase)


def error_text(exc: BaseException) -> str:
    """``Type: message`` of ``exc`` plus its notes (the policy and phase of a policy's
    failure), as a failure record's ``error`` (a :class:`RemoteFailure`'s text as it is)."""
    if isinstance(exc, RemoteFailure):
        return exc.text
    notes = [n for n in getattr(exc, "__notes__", ()) if isinstance(n, str)]
    return f"{type(exc).__name__}: {exc}" + "".join(f" [{n}]" for n in notes)


def reraise(label: str, phase: str, exc: BaseException) -> NoReturn:
    """Raise what :func:`policy_failure` makes of ``exc`` (the original as its cause)."""
    failure = policy_failure(label, phase, exc)
    if failure is exc:
        raise exc
    raise failure from exc


__all__ = ["PHASES", "PolicyCodeError", "PolicyLoadError", "ProcessExitCalled", "RemoteFailure",
           "describe",
           "error_text", "is_real_interrupt", "location", "no_process_exit", "policy_failure",
           "reraise"]
