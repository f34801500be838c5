"""The policy process's own code: it loads one policy file or module and answers the harness's
requests (:mod:`mrsched_gym.policy.process` starts it).

Before any of the policy's code runs it leaves the harness's process behind: a session of its
own (the harness ends its whole process group), default signal handlers, no descriptor but
its channel (standard input is ``/dev/null``; its standard output and error are the harness's
standard error, so a policy's prints show without mixing into the harness's tables), and its
resource limits (:mod:`mrsched_gym.policy.limits`). Then, per message of the harness:

* ``("load", spec, params, source, path)``: execute the policy file's bytes ``source`` (as the
  run read them) or import the module, build the policy, answer ``["loaded", label, kind]``
  (``kind``: ``"rule"``, ``"scheduler"``, ``"observation"`` or ``"model"``), or the error;
* ``("reset", seed, K, now)``: a new episode: the policy's ``reset(view, seed)``;
* ``("decide", fields, now)``: a decision (a rule or a scheduler): its action;
* ``("act", obs, mask)``: an observation (an observation policy or a model): its action;
* ``("end",)``: exit.

Whatever the policy's code raises (``BaseException`` included) is answered as its failure,
named by phase, with its traceback (:mod:`mrsched_gym.policy.policy_failures`).
"""

from __future__ import annotations

import io
import json
import os
import signal
import socket
import sys
import traceback
from typing import Any

from mrsched_gym.policy import channel
from mrsched_gym.policy.decision_budget import END_PROCESS
from mrsched_gym.policy.limits import PolicyLimits, apply_limits
from mrsched_gym.policy.mirror import KINDS_BY_VALUE, Link, decision_of, new_view, set_decision

#: Exit code of a policy process whose channel broke while it answered.
CHANNEL_BROKEN = 3


def leave_harness(fd: int, limits: PolicyLimits) -> None:
    """Make this (new) process a policy process: see the module docstring."""
    import posix
    os._exit = posix._exit = END_PROCESS        # the harness's episode may have replaced it
    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGALRM, signal.SIGCHLD, signal.SIGUSR1,
                signal.SIGUSR2):
        signal.signal(sig, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.setitimer(signal.ITIMER_REAL, 0, 0)
    null = os.open(os.devnull, os.O_RDWR)
    out = os.dup(2) if is_open(2) else os.dup(null)
    os.dup2(null, 0)
    os.dup2(out, 1)
    os.dup2(out, 2)
    keep = sorted({0, 1, 2, fd})
    for low, high in zip(keep, [*keep[1:], 1 << 20], strict=True):
        if high > low + 1:
            os.closerange(low + 1, high)
    sys.stdin = io.TextIOWrapper(io.FileIO(0, "r", closefd=False))
    sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), line_buffering=True,
                                  errors="backslashreplace")
    sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), line_buffering=True,
                                  errors="backslashreplace")
    torch = sys.modules.get("torch")
    if torch is not None:           # its thread pool was the parent's: one thread, no pool
        torch.set_num_threads(1)
    apply_limits(limits)


def is_open(fd: int) -> bool:
    """Whether descriptor ``fd`` is open."""
    try:
        os.fstat(fd)
    except OSError:
        return False
    return True


class Host:
    """The loaded policy and its view (one per policy process).

    Args:
        sock: The channel.
    """

    def __init__(self, sock: socket.socket) -> None:
        self.link = Link(sock)
        self.label = ""
        self.kind = ""
        self.target: Any = None
        self.adapter: Any = None
        self.view: Any = None
        self.K = 0

    def serve(self) -> None:
        """Answer the harness until it says ``end`` or the channel closes."""
        while True:
            try:
                message = self.link.receive()
            except (channel.ChannelError, OSError, EOFError):
                return
            tag = message[0]
            if tag == "end":
                return
            reply = self.handle(tag, message)
            try:
                if reply[0] == "act" and type(reply[1]) is int:
                    channel.send_frame(self.link.sock, b'["act",%d]' % reply[1])
                else:
                    self.link.send(reply)
            except (channel.ChannelError, OSError, ValueError, TypeError):
                END_PROCESS(CHANNEL_BROKEN)

    def handle(self, tag: str, message: tuple[Any, ...]) -> list[Any]:
        """The answer to one message of the harness."""
        if tag == "load":
            return self.load(*message[1:])
        phase = "reset" if tag == "reset" else "decide"
        try:
            if tag == "reset":
                self.reset(*message[1:])
                return ["ok"]
            return ["act", self.decide(tag, message)]
        except BaseException as e:                  # noqa: BLE001 - the policy's failure
            return failure(self.label, phase, e)

    def load(self, spec: str, params: list[tuple[str, Any]], source: bytes | None,
             path: str | None) -> list[Any]:
        """Load the policy (see the module docstring)."""
        from mrsched_gym.baselines.base import Scheduler
        from mrsched_gym.errors import InputError
        from mrsched_gym.policy.contract import ModelAdapter, ObservationAdapter, as_policy
        from mrsched_gym.policy.policy_failures import PolicyLoadError, describe
        from mrsched_gym.policy.policy_files import checked_label, load_code_object, load_failure
        from mrsched_gym.policy.readonly import GuardedScheduler
        from mrsched_gym.policy.rule_adapter import RuleAdapter
        try:
            obj = load_code_object(spec, dict(params), source, resolved=path,
                                   imported=lambda: self.link.send(["phase", "construction"]))
            try:
                name = checked_label(obj, spec)
            except InputError:
                raise
            except BaseException as e:               # noqa: BLE001 - its name or methods
                raise load_failure(spec, "construction", f"reading its name or methods "
                                   f"raised {describe(e)}", e) from None
            label = name + (":" + ",".join(f"{k}={v}" for k, v in params) if params else "")
            adapter = as_policy(obj, label)
        except PolicyLoadError as e:
            return ["load_error", e.phase, cut(str(e)), cut(e.trace)]
        except InputError as e:
            return ["input_error", cut(str(e))]
        except BaseException as e:                   # noqa: BLE001 - the policy's failure
            return ["load_error", "construction", cut(f"policy {spec!r}: {describe(e)}"),
                    cut("".join(traceback.format_exception(e)))]
        self.label, self.adapter = label, adapter
        if isinstance(adapter, RuleAdapter):
            self.kind, self.target = "rule", adapter.policy
        elif isinstance(adapter, GuardedScheduler):
            self.kind, self.target = "scheduler", adapter.scheduler
        elif isinstance(adapter, Scheduler):
            self.kind, self.target = "scheduler", adapter
        elif isinstance(adapter, ObservationAdapter):
            self.kind, self.target = "observation", None
        else:
            assert isinstance(adapter, ModelAdapter)
            self.kind, self.target = "model", None
        return ["loaded", name, self.kind]

    def reset(self, seed: int, K: int, now: float) -> None:
        """A new episode: the policy's own ``reset(view, seed)``, if it has one."""
        link = self.link
        link.new_episode()
        link.episode["K"] = K
        self.K = K
        self.view = view = new_view(link)
        link.values[0, "now"] = now
        if self.kind == "observation":
            reset = self.adapter.reset_fn
        elif self.kind == "model":
            reset = None
        else:
            reset = getattr(self.target, "reset", None)
        if reset is not None:
            reset(view, seed=seed)

    def decide(self, tag: str, message: tuple[Any, ...]) -> int:
        """The policy's action for a decision or an observation, checked as in the harness's
        own process."""
        from mrsched_gym.policy.policy_actions import check_action
        if tag == "act":
            return int(self.adapter.act(message[1], message[2]))
        link = self.link
        link.new_decision()
        frame, now = message[1], message[2]
        link.values[0, "now"] = now
        decision = decision_of(link, frame)
        set_decision(self.view, decision)
        K, k = self.K, len(frame[4])
        if self.kind == "rule":
            action = self.target.decide(decision, self.view)
            if type(action) is int and (0 <= action < k or action == K):
                return action

            def legal(a: int) -> bool:
                return a == K or 0 <= a < k
        else:
            action = self.target.decide(self.view)

            def legal(a: int) -> bool:
                return True
        kind = KINDS_BY_VALUE[frame[0]].name.lower()
        return check_action(action, legal, self.label,
                            lambda: f"a {kind} decision with {k} candidates (actions 0-{k - 1} "
                            f"and skip {K})" if k else
                            f"a {kind} decision with no candidate (only skip, {K})")


def failure(label: str, phase: str, exc: BaseException) -> list[Any]:
    """The ``fail`` message of ``exc``, raised by the policy's code in ``phase``."""
    from mrsched_gym.policy.policy_failures import error_text, policy_failure
    try:
        text = error_text(policy_failure(label, phase, exc))
    except BaseException:                            # noqa: BLE001 - its str() raised
        text = f"{type(exc).__name__} (its message could not be read)"
    try:
        trace = "".join(traceback.format_exception(exc))
    except BaseException:                            # noqa: BLE001
        trace = ""
    return ["fail", phase, cut(text), cut(trace)]


def cut(text: str) -> str:
    """``text`` cut to :data:`~mrsched_gym.policy.channel.MAX_TEXT` characters (its end kept:
    a traceback's last lines say the most)."""
    limit = channel.MAX_TEXT
    return text if len(text) <= limit else "..." + text[-limit:]


def run(fd: int, limits: PolicyLimits) -> None:
    """The policy process's life: leave the harness behind, then serve."""
    leave_harness(fd, limits)
    sock = socket.socket(fileno=fd)
    sock.setblocking(True)
    host = Host(sock)
    preload()
    host.link.send(["ready"])      # the load budget starts now: it is the policy's time only
    host.serve()


def preload() -> None:
    """Import what loading a policy needs (a process started afresh has not), so that the
    load budget times the policy's own import and construction."""
    import importlib
    for name in ("mrsched_gym.baselines.base", "mrsched_gym.errors", "mrsched_gym.policy.contract",
                 "mrsched_gym.policy.policy_failures", "mrsched_gym.policy.policy_files"):
        importlib.import_module(name)


def main() -> None:
    """``python -m mrsched_gym.policy.host FD LIMITS-JSON SYS-PATH-JSON`` (a policy process
    started afresh, where the harness cannot fork, with the harness's ``sys.path``)."""
    fd = int(sys.argv[1])
    limits = PolicyLimits(**json.loads(sys.argv[2]))
    sys.path[:] = [str(p) for p in json.loads(sys.argv[3])]
    code = 0
    try:
        run(fd, limits)
    except BaseException:                            # noqa: BLE001
        code = CHANNEL_BROKEN
    END_PROCESS(code)


if __name__ == "__main__":
    main()
