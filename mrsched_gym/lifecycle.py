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

import os
import signal
import threading
import time

#: How often (s) a worker checks that its parent still runs.
PARENT_CHECK_S = 0.2

_PARENT: int | None = None


def _terminate(signum, frame) -> None:
    raise KeyboardInterrupt(signum)


def handle_termination() -> None:
    """SIGTERM and SIGHUP raise ``KeyboardInterrupt`` (only from the main thread; elsewhere a
    no-op)."""
    if threading.current_thread() is not threading.main_thread():
        return
    for name in ("SIGTERM", "SIGHUP"):
        sig = getattr(signal, name, None)
        if sig is not None:
            signal.signal(sig, _terminate)


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


__all__ = ["PARENT_CHECK_S", "ParentGuard", "handle_termination", "signal_number",
           "worker_init"]
