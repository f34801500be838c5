"""Worker processes that cannot end unnoticed: :func:`pool_results`.

``multiprocessing.Pool`` replaces a worker that dies (``os._exit``, a signal, a segfault in a C
extension) but loses the task it ran: the parent then waits for that result forever. Here each
worker has a pipe of its own and the parent waits on the pipes and on the processes' sentinels
together, so a worker that ends without answering is seen at once, and its task is named:

* with ``on_death``, the task's result is ``on_death(task, how)`` (the sweep records the episode
  as failed: "the worker process running it ended: killed by signal SIGSEGV"), a fresh worker
  takes the next tasks and the run carries on;
* without it, :class:`WorkerDied` ends the run (one line naming the task and how).

A worker ignores Ctrl-C and ends with its parent
(:func:`~mrsched_gym.processes.lifecycle.worker_init`); the parent ends every worker it started on
its way out, whatever the way.
"""

from __future__ import annotations

import signal
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from multiprocessing.connection import Connection, wait
from typing import Any, TypeVar

from mrsched_gym.errors import MRSchedError

#: The exit code of a worker process whose policy ignored its decision budget twice over
#: (:mod:`mrsched_gym.policy.decision_budget` ends it so; :func:`how_it_ended` names it).
BUDGET_EXIT_CODE = 124
#: Whether this process is one of the harness's workers (:func:`mark_worker`), whose end the
#: harness sees and names.
WORKER = {"harness": False}


def mark_worker() -> None:
    """Mark this process as a worker of the harness (:func:`pool_results`' workers do, at their
    start): a policy that ignores its decision budget twice over may end it."""
    WORKER["harness"] = True


_T = TypeVar("_T")
_R = TypeVar("_R")


class WorkerDied(MRSchedError):
    """A worker process ended without returning its task's result (and no ``on_death``)."""


def how_it_ended(exitcode: int | None) -> str:
    """A worker's end in words: ``exited with code 3`` or ``was killed by signal SIGSEGV``
    (or ended by the decision budget, :data:`BUDGET_EXIT_CODE`)."""
    if exitcode is None:
        return "ended (no exit status)"
    if exitcode == BUDGET_EXIT_CODE:
        return (f"was ended by the decision budget (exit code {exitcode}: its policy went on "
                f"past twice the budget after being interrupted)")
    if exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = str(-exitcode)
        return f"was killed by signal {name}"
    return f"exited with code {exitcode}"


def _serve(fn: Callable[[Any], Any], conn: Connection) -> None:
    """A worker's loop: receive ``(index, task)``, send ``(index, ok, result or error)``."""
    from mrsched_gym.processes.lifecycle import ParentGuard, worker_init
    worker_init()
    mark_worker()
    guarded = ParentGuard(fn)
    while True:
        try:
            msg = conn.recv()
        except EOFError:
            return
        if msg is None:
            return
        index, task = msg
        try:
            out: tuple[int, bool, Any] = (index, True, guarded(task))
        except Exception as e:                      # noqa: BLE001 - re-raised in the parent
            out = (index, False, e)
        try:
            conn.send(out)
        except Exception as e:                      # noqa: BLE001 - e.g. a result that fails
            conn.send((index, False, RuntimeError(f"its result could not be sent back: "
                                                  f"{type(e).__name__}: {e}")))


class Worker:
    """One worker process and the parent's end of its pipe."""

    def __init__(self, ctx: Any, fn: Callable[[Any], Any]) -> None:
        from mrsched_gym.processes.lifecycle import forking_with_default_termination
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_serve, args=(fn, child), daemon=True)
        with forking_with_default_termination():
            self.proc.start()
        child.close()
        self.job: tuple[int, Any] | None = None

    def give(self, index: int, task: Any) -> None:
        """Send it a task."""
        self.job = (index, task)
        self.conn.send((index, task))

    def stop(self) -> None:
        """End it (a polite word, then SIGTERM, then SIGKILL)."""
        try:
            self.conn.send(None)
        except (OSError, ValueError):
            pass
        self.proc.join(0.5)
        if self.proc.is_alive():
            self.proc.terminate()
            self.proc.join(2)
        if self.proc.is_alive():
            self.proc.kill()
            self.proc.join()
        self.conn.close()


def pool_results(fn: Callable[[_T], _R], tasks: Sequence[_T], workers: int,
                 on_death: Callable[[_T, str], _R] | None = None) -> Iterator[_R]:
    """``fn(t)`` for every task, in task order, over ``workers`` fork (else spawn) processes;
    a worker that dies is detected at once (see the module docstring).

    Raises:
        WorkerDied: A worker ended without its task's result and there is no ``on_death``.
        Exception: What ``fn`` raised in a worker.
    """
    import multiprocessing as mp
    ctx = mp.get_context("fork" if "fork" in mp.get_all_start_methods() else "spawn")
    todo = deque(enumerate(tasks))
    done: dict[int, _R] = {}
    pool: list[Worker] = []
    next_out = 0
    try:
        for _ in range(min(workers, len(tasks))):
            w = Worker(ctx, fn)
            pool.append(w)
            w.give(*todo.popleft())
        while next_out < len(tasks):
            busy = [w for w in pool if w.job is not None]
            ready = wait([w.conn for w in busy] + [w.proc.sentinel for w in busy])
            for w in busy:
                if w.conn in ready or (w.proc.sentinel in ready and w.conn.poll()):
                    try:
                        index, ok, value = w.conn.recv()
                    except (EOFError, OSError):
                        w.proc.join(1)
                    else:
                        if not ok:
                            raise value
                        done[index] = value
                        w.job = None
                        if todo:
                            w.give(*todo.popleft())
                        continue
                if w.proc.sentinel in ready or not w.proc.is_alive():
                    w.proc.join(1)
                    assert w.job is not None
                    index, task = w.job
                    how = how_it_ended(w.proc.exitcode)
                    if on_death is None:
                        raise WorkerDied(f"a worker process {how} while it ran task {index + 1} "
                                         f"of {len(tasks)}; the run stops")
                    done[index] = on_death(task, how)
                    w.job = None
                    w.conn.close()
                    pool.remove(w)
                    if todo:                       # a fresh worker for the rest
                        fresh = Worker(ctx, fn)
                        pool.append(fresh)
                        fresh.give(*todo.popleft())
            while next_out in done:
                yield done.pop(next_out)
                next_out += 1
    finally:
        for w in pool:
            w.stop()


__all__ = ["WorkerDied", "how_it_ended", "pool_results"]
