"""Policy files and modules run in a process of their own: :class:`ProcessPolicy`.

Every spec that names user code (``FILE.py:Class``, ``package.module:Class``) runs each episode
in a fresh **policy process** (:mod:`mrsched_gym.policy.host`), never in the harness's process
nor in a worker that plays baselines: nothing the policy's code does (rebinding a function of
this package, patching numpy, digging through the interpreter, ignoring signals, closing its
streams, ``chdir``, ``sys.exit``, crashing) reaches another policy's records. Per decision the
harness sends a copy of the decision; the policy reads the rest of the view by name and gets
copies (:mod:`mrsched_gym.policy.serving`, :mod:`mrsched_gym.policy.mirror`); its action comes
back as JSON, checked again here.

Budgets are kept from this side. A load past
:data:`~mrsched_gym.policy.decision_budget.LOAD_BUDGET_S`, or a ``reset`` or decision past
``--decision-budget``, ends the policy process's whole process group with ``SIGKILL`` (which no
code can catch or ignore); the episode is recorded as failed, with its phase, and the sweep goes
on. The process's resource limits are :mod:`mrsched_gym.policy.limits`'.

It is forked from the harness's process (or worker) where that is safe, else started afresh
(``python -m mrsched_gym.policy.host``; :mod:`mrsched_gym.policy.child`): the same policy, the
same answers. Its start is not the policy's time: the load budget starts when it says it is
ready.
"""

from __future__ import annotations

import time
from typing import Any

from mrsched_gym.errors import InputError
from mrsched_gym.policy import channel, decision_budget
from mrsched_gym.policy.child import Child, how_it_ended
from mrsched_gym.policy.limits import limits_from_env
from mrsched_gym.policy.policy_failures import PolicyLoadError, RemoteFailure
from mrsched_gym.policy.serving import WorldServer

#: How long a policy process may take to start (fork or a fresh interpreter, and this
#: package's imports) before the load budget starts (s).
STARTUP_S = 120.0
#: The requests a policy process may make while it decides.
REQUESTS = frozenset({"get", "call", "scalars", "tail"})

class ProcessPolicy:
    """A policy file or module as the harness runs it: one policy process per episode, started
    at ``reset`` (see the module docstring). :meth:`close` ends it (the harness does after
    every episode).

    Args:
        label: The policy's label.
        spec: Its code spec as given (``FILE.py:Class``, without parameters).
        params: The class's parameters.
        source: The policy file's bytes as the run read them (None: a module).
        path: The policy file's absolute path (None: a module).
        budget_s: Seconds one ``reset`` or decision may take (None: no budget).
    """

    def __init__(self, label: str, spec: str, params: tuple[tuple[str, Any], ...],
                 source: bytes | None, path: str | None, budget_s: float | None) -> None:
        self.name = label
        self.spec = spec
        self.params = params
        self.source = source
        self.path = path
        self.budget_s = budget_s
        self.limits = limits_from_env()
        self.child: Child | None = None
        self.server: WorldServer | None = None
        self.steps = 0
        self.kind = ""

    # ------------------------------------------------------------------ the process
    def start(self) -> str:
        """Start a policy process and load the policy in it; return its kind.

        Raises:
            InputError: The spec is bad (its class is missing, refuses its parameters, is no
                policy).
            PolicyLoadError: Its code raised at import or construction, its process ended or
                ran past the load budget.
        """
        self.close()
        self.child = Child(self.limits)
        load = ("load", self.spec, list(self.params), self.source, self.path)
        try:
            self.await_ready()
            reply = self.exchange(load, decision_budget.LOAD_BUDGET_S, "import")
        except RemoteFailure as e:
            self.close()
            raise PolicyLoadError(e.text.partition(": ")[2], self.name, e.phase,
                                  e.trace) from None
        if reply[0] == "loaded":
            self.kind, name = reply[2], str(reply[1])
            return name
        self.close()
        if reply[0] == "input_error":
            raise InputError(reply[1])
        if reply[0] == "load_error":
            raise PolicyLoadError(reply[2], self.name, reply[1], reply[3])
        raise PolicyLoadError(f"policy {self.spec!r}: its process answered its load with "
                              f"{reply[0]!r}", self.name, "import", "")

    def await_ready(self) -> None:
        """Wait for the policy process to say it runs (within :data:`STARTUP_S`; its start is
        this package's time, not the policy's load budget).

        Raises:
            RemoteFailure: It ended, or said something else, or was not ready in time.
        """
        child = self.child
        assert child is not None
        try:
            reply = channel.decode(child.reader.frame(time.monotonic() + STARTUP_S,
                                                      channel.MAX_FROM_POLICY))
            if reply != ["ready"]:
                raise channel.ChannelError(f"it began with {reply[0]!r}")
        except channel.ChannelTimeout:
            child.end(polite=False)
            raise RemoteFailure(f"PolicyProcessEnded: policy {self.name!r}: its process did "
                                f"not start within {STARTUP_S:g} s (an overloaded machine?)",
                                self.name, "import") from None
        except channel.ChannelClosed:
            code = child.exit_code(2.0)
            child.end(polite=False)
            raise RemoteFailure(f"PolicyProcessEnded: policy {self.name!r}: its process "
                                f"{how_it_ended(code)} as it started", self.name,
                                "import") from None
        except channel.ChannelError as e:
            child.end(polite=False)
            raise RemoteFailure(f"PolicyProtocolError: policy {self.name!r}: as it started "
                                f"{e}; its process was ended", self.name, "import") from None

    def exchange(self, message: tuple[Any, ...], budget_s: float | None,
                 where: str) -> list[Any]:
        """Send ``message``, answer the policy's requests, return its reply (by the budget).

        Raises:
            RemoteFailure: The budget passed, the process ended, or it broke the protocol
                (the process is ended).
        """
        child = self.child
        assert child is not None
        deadline = None if budget_s is None else time.monotonic() + budget_s
        phase = where if where in ("reset", "import") else "decide"
        try:
            channel.send_frame(child.sock, channel.dump(message), deadline)
            while True:
                reply = channel.decode(child.reader.frame(deadline, channel.MAX_FROM_POLICY))
                if reply[0] == "phase" and message[0] == "load" and where == "import" and \
                        reply[1] == "construction":
                    where = phase = "construction"          # its file or module imported
                    continue
                if reply[0] not in REQUESTS:
                    if reply[0] in ("act", "phase") and message[0] == "load":
                        raise channel.ChannelError(f"it answered its load with {reply[0]!r}")
                    if reply[0] == "phase":
                        raise channel.ChannelError("it named a phase out of turn")
                    return reply
                if self.server is None:
                    raise channel.ChannelError("it asked for the view while loading")
                channel.send_frame(child.sock, channel.dump(self.server.answer(reply)),
                                   deadline)
        except channel.ChannelTimeout:
            child.end(polite=False)
            rule = ("the load budget, LOAD_BUDGET_S" if message[0] == "load" else
                    "the decision budget, decision_budget_s / --decision-budget")
            raise RemoteFailure(
                f"DecisionBudgetExceeded: policy {self.name!r} spent more than "
                f"{budget_s:g} s on {where} ({rule}); its process was ended (SIGKILL) and "
                f"its episode fails", self.name, phase) from None
        except channel.ChannelClosed:
            code = child.exit_code(2.0)
            child.end(polite=False)
            raise RemoteFailure(f"PolicyProcessEnded: policy {self.name!r}: its process "
                                f"{how_it_ended(code)} during {where}", self.name,
                                phase) from None
        except channel.ChannelError as e:
            child.end(polite=False)
            raise RemoteFailure(f"PolicyProtocolError: policy {self.name!r}: during {where} "
                                f"{e}; its process was ended", self.name, phase) from None

    def close(self) -> None:
        """End the policy process, if one runs."""
        if self.child is not None:
            self.child.end()
            self.child = None
        self.server = None

    # ------------------------------------------------------------------ the episode
    def reset(self, sim: Any, seed: int | None = None) -> None:
        """A new episode: a fresh policy process, its policy loaded, then its ``reset``."""
        self.start()
        self.server = WorldServer(sim)
        self.steps = 0
        self.outcome(self.exchange(("reset", seed, sim.K, sim.now), self.budget_s, "reset"),
                     "ok")

    def outcome(self, reply: list[Any], expected: str) -> list[Any]:
        """``reply`` if it is ``expected``; a ``fail`` reply raised as the policy's failure.

        Raises:
            RemoteFailure: The policy's code failed (or answered out of turn).
        """
        if reply[0] == expected:
            return reply
        self.close()
        if reply[0] == "fail":
            raise RemoteFailure(reply[2], self.name, reply[1], reply[3])
        raise RemoteFailure(f"PolicyProtocolError: policy {self.name!r}: its process answered "
                            f"{reply[0]!r} out of turn", self.name, "decide")

    def action(self, message: tuple[Any, ...]) -> int:
        """The policy's action for ``message`` (a decision or an observation)."""
        self.steps += 1
        action: int = self.outcome(self.exchange(message, self.budget_s,
                                                 f"decision {self.steps}"), "act")[1]
        return action

    def illegal(self, action: int, what: str) -> RemoteFailure:
        """The failure of an action the policy process sent that its own check refuses (only
        a process that bypassed the check sends one)."""
        self.close()
        shown = str(action) if action.bit_length() < 64 else f"of {action.bit_length()} bits"
        return RemoteFailure(f"PolicyActionError: policy {self.name}: returned action {shown} "
                             f"at {what}: return a candidate's index or skip", self.name,
                             "decide")


class ProcessRule(ProcessPolicy):
    """A rule policy or scheduler in its own process: ``decide(sim)``."""

    def decide(self, sim: Any) -> int:
        """The policy's action for the pending decision."""
        server = self.server
        assert server is not None
        fields = server.decision()
        action = self.action(("decide", fields, sim.now))
        k = len(fields[4])
        if self.kind == "rule" and not (0 <= action < k or action == sim.K):
            raise self.illegal(action, f"a decision with {k} candidates")
        if not -(1 << 63) <= action < 1 << 63:
            raise self.illegal(action, "a decision")
        return action


class ProcessObservation(ProcessPolicy):
    """An observation policy or a model in its own process: ``act(obs, mask)``."""

    def act(self, obs: Any, mask: Any) -> int:
        """The policy's action for ``obs``."""
        action = self.action(("act", obs, mask))
        skip = len(mask) - 1
        if self.kind == "observation" and not (
                action == skip or (0 <= action < skip and bool(mask[action]))):
            raise self.illegal(action, "a decision of that mask")
        if not -(1 << 63) <= action < 1 << 63:
            raise self.illegal(action, "a decision")
        return action


def load_code_spec(label: str, spec: str, params: tuple[tuple[str, Any], ...],
                   source: bytes | None, path: str | None) -> tuple[str, str]:
    """Load a code spec once in a policy process: ``(name, kind)``, the policy's own name and
    what it is (``"rule"``, ``"scheduler"``, ``"observation"``, ``"model"``).

    Raises:
        InputError: A bad spec (:meth:`ProcessPolicy.start`).
        PolicyLoadError: Its code failed to load.
    """
    probe = ProcessPolicy(label, spec, params, source, path, None)
    try:
        return probe.start(), probe.kind
    finally:
        probe.close()


def process_policy(label: str, kind: str, spec: str, params: tuple[tuple[str, Any], ...],
                   source: bytes | None, path: str | None,
                   budget_s: float | None) -> ProcessPolicy:
    """The :class:`ProcessPolicy` of a code spec whose ``kind`` :func:`load_code_spec` found."""
    cls = ProcessObservation if kind in ("observation", "model") else ProcessRule
    return cls(label, spec, params, source, path, budget_s)


__all__ = ["ProcessObservation", "ProcessPolicy", "ProcessRule",
           "load_code_spec", "process_policy"]
