"""A time budget per decision for outside policies: a policy stuck in one decision fails.

An outside policy (a code file or a policy object) may loop forever in ``reset``, ``decide`` or
``act``; without a budget that hangs ``compare``, ``evaluate`` and ``benchmark`` for good.
:func:`decision_watchdog` arms a timer (``SIGALRM``, in the main thread of the process that runs
the episode: the harness's own with ``--workers 1``, each worker's otherwise) that ticks a few
times per budget and reads how many steps the episode loop (:func:`~mrsched_gym.evaluate.
running.run_episode`) has made. When the count has not moved for ``budget_s`` seconds it raises
:class:`DecisionBudgetExceeded` inside whatever code runs, which fails that episode as the
policy's (phase ``"decide"``; the other episodes and policies go on), and it raises again at
every later tick while the count stays put, so a policy that catches it is interrupted again.
A policy that still has not returned after twice its budget (it catches the interruption and
goes on) ends its process when that is a worker (:data:`BUDGET_EXIT_CODE`, one line on
stderr): the parent records the episode as failed, "ended by the decision budget", and a fresh
worker takes the next episodes. In the harness's own process (``--workers 1``) nothing can end
it but the user.

Nothing is done per decision: an honest policy's records are the same with or without the
budget. The default (:data:`DEFAULT_BUDGET_S`, 60 s for one decision, or for ``reset``) is far
above what any honest policy needs, so results never depend on the machine's speed. Not
covered: a policy stuck in C code that does not return to Python (signals are handled between
bytecodes), an episode run outside the main thread (no timer there), and policy code that
replaces the ``SIGALRM`` handler.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from types import FrameType

from mrsched_gym.errors import InputError
from mrsched_gym.processes.workers import BUDGET_EXIT_CODE, WORKER, mark_worker

#: The default budget in seconds: one decision (or the policy's ``reset``) taking longer fails.
DEFAULT_BUDGET_S = 60.0
#: The budget in seconds of a policy file's import and construction when the harness loads it
#: (``--policies FILE.py:Class``), whatever ``--decision-budget`` says: a file that never
#: finishes loading fails, named (read when a file is loaded).
LOAD_BUDGET_S = DEFAULT_BUDGET_S
#: ``os._exit`` as imported, before any episode: while one runs, the harness makes a policy's
#: own ``os._exit`` raise instead (:func:`mrsched_gym.policy.policy_failures.no_process_exit`).
END_PROCESS = os._exit


class DecisionBudgetExceeded(Exception):
    """A policy spent longer than its budget on one decision (or on ``reset``)."""


def check_budget(budget_s: float | None) -> float | None:
    """``budget_s`` as a float > 0, or None (no budget).

    Raises:
        InputError: naming ``decision_budget_s``.
    """
    if budget_s is None:
        return None
    if isinstance(budget_s, bool) or not isinstance(budget_s, (int, float)) or not budget_s > 0:
        raise InputError(f"decision_budget_s must be a number of seconds > 0 or None, got "
                         f"{budget_s!r}")
    return float(budget_s)


def episode_steps(frame: FrameType | None, loop_code) -> int | None:
    """The ``steps`` local of the innermost running frame of ``loop_code`` above ``frame``: the
    decisions made so far, -1 during the policy's ``reset`` (None: no such frame, or no
    ``loop_code``)."""
    while frame is not None and loop_code is not None:
        if frame.f_code is loop_code:
            steps = frame.f_locals.get("steps")
            return steps if isinstance(steps, int) else None
        frame = frame.f_back
    return None


@contextlib.contextmanager
def decision_watchdog(budget_s: float | None, label: str, loop_code,
                      outside: str = "construction") -> Iterator[None]:
    """While the block runs, fail a decision of ``label`` that takes longer than ``budget_s``.

    Args:
        budget_s: Seconds one decision may take (None: no budget, the block runs as is).
        label: The policy, named in the error.
        loop_code: The code object of the episode loop whose ``steps`` local counts decisions
            (``run_episode.__code__``; None: the block runs no episode).
        outside: What the policy is doing while no episode loop runs (the error names it):
            its ``"construction"``, or its ``"import or construction"`` when a policy file is
            loaded (both under :data:`LOAD_BUDGET_S`). Watchdogs nest: the inner one's budget
            holds while it runs.
    """
    if budget_s is None or threading.current_thread() is not threading.main_thread():
        yield
        return
    tick = min(1.0, budget_s / 4)
    in_worker = WORKER["harness"]
    rule, outcome = (("the load budget, LOAD_BUDGET_S", "it fails") if loop_code is None else
                     ("the decision budget, decision_budget_s / --decision-budget",
                      "its episode fails"))
    state = {"steps": None, "since": time.monotonic()}

    def on_tick(signum: int, frame: FrameType | None) -> None:
        steps = episode_steps(frame, loop_code)
        now = time.monotonic()
        if steps != state["steps"]:
            state["steps"], state["since"] = steps, now
            return
        if now - state["since"] > budget_s:
            where = outside if steps is None else "reset" if steps < 0 else \
                f"decision {steps + 1}"
            message = f"policy {label!r} spent more than {budget_s:g} s on {where} ({rule})"
            if now - state["since"] > 2 * budget_s and in_worker:
                print(f"mrsched-gym: {message} and more than twice that after being "
                      f"interrupted; its worker process ends", file=sys.stderr, flush=True)
                END_PROCESS(BUDGET_EXIT_CODE)
            raise DecisionBudgetExceeded(f"{message}; {outcome}")

    previous = signal.signal(signal.SIGALRM, on_tick)
    outer = signal.setitimer(signal.ITIMER_REAL, tick, tick)
    try:
        yield
    finally:                        # a watchdog around this one ticks on (its clock paused)
        signal.setitimer(signal.ITIMER_REAL, 0, 0)
        signal.signal(signal.SIGALRM, previous)
        if outer[1] > 0:
            signal.setitimer(signal.ITIMER_REAL, outer[1], outer[1])


__all__ = ["BUDGET_EXIT_CODE", "DEFAULT_BUDGET_S", "LOAD_BUDGET_S", "DecisionBudgetExceeded",
           "check_budget", "decision_watchdog", "episode_steps", "mark_worker"]
