"""How a run of the command line ends: signals, and worker processes that end with their parent.

* :func:`handle_termination` makes SIGTERM (and SIGHUP) end the run as Ctrl-C does: a
  ``KeyboardInterrupt`` in the main thread, so every ``finally`` and context manager runs (the
  lock is released, this run's staging folders are removed) and the command prints one line and
  exits ``128 + signal`` (130 for Ctrl-C).
* :func:`worker_init` is the initializer of every worker pool of the harness: a worker ignores
  Ctrl-C (its parent handles it and terminates the pool), closes its copies of the parent's lock
  and journal descriptors (so the lock ends with the run) and ends itself as soon as its parent
  is gone (a portable check of the parent's pid, not Linux's ``prctl``).
* :class:`ParentGuard` wraps a pool's task function so that a worker whose parent died while the
  task ran exits quietly instead of printing a broken-pipe traceback.
"""

from __future__ import annotations

import contextlib
import gc
import os
import signal
import threading
import time
from collections.abc import Iterator

#: How often (s) a worker checks that its parent still runs.
PARENT_CHECK_S = 0.2

_PARENT: int | None = None


#: The process that installed :func:`_terminate` (a forked child inherits the handler, not
#: the role: there the signal keeps its default meaning).
_HANDLER_PID: int | None = None


#: When this process last received SIGINT, SIGTERM or SIGHUP through :func:`_terminate`
#: (``time.monotonic()``), so that a ``KeyboardInterrupt`` a policy raises itself is told apart
#: from a real interrupt (:func:`interrupt_is_real`).
_SIGNALLED: list[float] = []


def _terminate(signum, frame) -> None:
    if os.getpid() != _HANDLER_PID:         # a forked child (any pool, ours or a user's):
        signal.signal(signum, signal.SIG_DFL)           # end as the signal says, at once
        os.kill(os.getpid(), signum)
        return
    _SIGNALLED.append(time.monotonic())
    raise KeyboardInterrupt(signum)


def interrupt_is_real() -> bool:
    """Whether a ``KeyboardInterrupt`` caught now stands for a signal rather than for code that
    raised it itself (a policy's ``raise KeyboardInterrupt``, which the harness reports as that
    policy's failure).

    In a process whose SIGINT, SIGTERM and SIGHUP go through :func:`handle_termination` (the
    command line), only a received signal counts. A harness worker ignores SIGINT, so any
    ``KeyboardInterrupt`` there is raised by code. Elsewhere (Python's own SIGINT handler, e.g.
    :func:`~mrsched_gym.evaluate.evaluate` called from a script) the two cannot be told apart
    and every ``KeyboardInterrupt`` counts as real: it ends the run.
    """
    if _SIGNALLED:
        return True
    handler = signal.getsignal(signal.SIGINT)
    if handler is signal.SIG_IGN:                   # no Ctrl-C reaches this process
        return False
    return not (handler is _terminate and os.getpid() == _HANDLER_PID)


def handle_termination() -> dict[int, object]:
    """SIGINT, SIGTERM and SIGHUP raise ``KeyboardInterrupt`` in this process, each noted as
    received (:func:`interrupt_is_real`; only from the main thread; elsewhere a no-op; an
    ignored SIGINT stays ignored). Returns the handlers it replaced, for
    :func:`restore_termination`; a process forked meanwhile ends on these signals as usual."""
    global _HANDLER_PID
    if threading.current_thread() is not threading.main_thread():
        return {}
    _HANDLER_PID = os.getpid()
    previous: dict[int, object] = {}
    for name in ("SIGINT", "SIGTERM", "SIGHUP"):
        sig = getattr(signal, name, None)
        if sig is not None and not (name == "SIGINT"
                                    and signal.getsignal(sig) is signal.SIG_IGN):
            previous[sig] = signal.signal(sig, _terminate)     # an ignored SIGINT stays so
    _SIGNALLED.clear()
    return previous


def default_termination() -> None:
    """A pool initializer: SIGTERM and SIGHUP end this worker as the signals say, whatever
    handler it inherited from its parent (Ray's driver, :func:`handle_termination`), so that
    ``Pool.terminate()`` never waits on a worker that caught the signal."""
    for name in ("SIGTERM", "SIGHUP"):
        sig = getattr(signal, name, None)
        if sig is not None:
            signal.signal(sig, signal.SIG_DFL)


@contextlib.contextmanager
def forking_with_default_termination() -> Iterator[None]:
    """Around the creation of a fork pool: SIGTERM and SIGHUP at their defaults in this process,
    so that every worker starts without an inherited handler, even before its initializer runs.
    A worker that never reaches its initializer (stuck at fork in a lock that one of the
    parent's threads held, e.g. a library's) would otherwise catch ``Pool.terminate()``'s SIGTERM
    with the parent's handler (Ray's driver, :func:`handle_termination`), and the pool would wait
    for it forever. Only in the main thread, where handlers can be set; a handler installed
    outside Python (which could not be put back) is left alone; the handlers are restored as
    soon as the pool exists (a signal in between ends the process as the signal says)."""
    previous: dict[int, object] = {}
    if threading.current_thread() is threading.main_thread():
        for name in ("SIGTERM", "SIGHUP"):
            sig = getattr(signal, name, None)
            if sig is not None and signal.getsignal(sig) is not None:
                previous[sig] = signal.signal(sig, signal.SIG_DFL)
    try:
        yield
    finally:
        restore_termination(previous)


def restore_termination(previous: dict[int, object]) -> None:
    """Put back the handlers :func:`handle_termination` replaced (the command line does when a
    command ends, so that calling ``main`` in a process leaves its signals as they were)."""
    for sig, handler in previous.items():
        signal.signal(sig, handler)  # type: ignore[arg-type]


def signal_number(exc: BaseException) -> int:
    """The signal a ``KeyboardInterrupt`` stands for (SIGINT unless :func:`_terminate` raised
    it)."""
    if exc.args and isinstance(exc.args[0], int):
        return exc.args[0]
    return int(signal.SIGINT)


def _watch_parent(parent: int) -> None:
    while True:
        time.sleep(PARENT_CHECK_S)
        if os.getppid() != parent:
            os._exit(1)


def worker_init() -> None:
    """The initializer of a harness worker process (see the module docstring)."""
    global _PARENT
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for name in ("SIGTERM", "SIGHUP"):
        sig = getattr(signal, name, None)
        if sig is not None:
            signal.signal(sig, signal.SIG_DFL)
    from mrsched_gym.results import close_inherited
    close_inherited()
    # What the parent imported lives as long as the worker: out of the collector's sight, so
    # that no full collection walks it during the first episodes (one, 25-50 ms, landed in
    # every fresh worker's first episodes; docs/notes/speed.md, "A full collection").
    gc.freeze()
    _PARENT = os.getppid()
    threading.Thread(target=_watch_parent, args=(_PARENT,), daemon=True,
                     name="parent-watch").start()


class ParentGuard:
    """``fn`` for a pool task: a worker whose parent ended while ``fn`` ran exits at once (its
    result has nobody to go to) instead of failing to send it."""

    def __init__(self, fn) -> None:
        self.fn = fn

    def __call__(self, task):
        """``fn(task)``, unless the parent ended meanwhile."""
        out = self.fn(task)
        if _PARENT is not None and os.getppid() != _PARENT:
            os._exit(1)
        return out


__all__ = ["PARENT_CHECK_S", "ParentGuard", "default_termination", "handle_termination",
           "interrupt_is_real",
           "restore_termination", "signal_number", "worker_init"]
