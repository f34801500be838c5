"""One policy process, from the harness's side: :class:`Child` starts it (forked where that is
safe, else afresh), holds its channel and ends it with its whole process group
(:mod:`mrsched_gym.policy.process` runs policies in it)."""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
import weakref
from dataclasses import asdict

from mrsched_gym.policy import channel, decision_budget
from mrsched_gym.policy.limits import PolicyLimits

EXIT_GRACE_S = 0.5     #: How long a policy process may take to exit after ``end`` (s).


class Child:
    """One policy process and the harness's end of its channel.

    Args:
        limits: Its resource limits.
    """

    def __init__(self, limits: PolicyLimits) -> None:
        ours, theirs = socket.socketpair()
        self.popen: subprocess.Popen[bytes] | None = None
        self.status: int | None = None
        if can_fork():
            for stream in (sys.stdout, sys.stderr):
                with contextlib.suppress(OSError, ValueError, AttributeError):
                    stream.flush()
            pid = os.fork()
            if pid == 0:                                  # the policy process
                code = 0
                try:
                    os.setsid()
                    die_with_parent()
                    ours.close()
                    from mrsched_gym.policy.host import run
                    run(theirs.detach(), limits)
                except BaseException:                     # noqa: BLE001 - nothing to report to
                    code = 3
                finally:                  # the real _exit: the harness may have replaced it
                    decision_budget.END_PROCESS(code)
            self.pid = pid
        else:
            self.popen = spawn(theirs.fileno(), limits)
            self.pid = self.popen.pid
        theirs.close()
        ours.setblocking(False)
        self.sock = ours
        self.reader = channel.Reader(ours)
        LIVE.add(self)

    def exit_code(self, timeout: float) -> int | None:
        """Its exit code once it ended (negative: the signal), within ``timeout`` s."""
        if self.status is not None:
            return self.status
        end = time.monotonic() + timeout
        while True:
            if self.popen is not None:
                code = self.popen.poll()
            else:
                try:
                    pid, status = os.waitpid(self.pid, os.WNOHANG)
                except ChildProcessError:
                    return None
                code = os.waitstatus_to_exitcode(status) if pid else None
            if code is not None:
                self.status = code
                return code
            if time.monotonic() >= end:
                return None
            time.sleep(0.005)

    def end(self, polite: bool = True) -> None:
        """End it and everything it started: ``end``, a short wait, then ``SIGKILL`` to its
        process group (threads or processes it left behind go with it)."""
        if polite and self.status is None:
            try:
                channel.send_frame(self.sock, channel.dump(("end",)),
                                   time.monotonic() + 0.1)
            except channel.ChannelError:
                pass
            self.exit_code(EXIT_GRACE_S)
        for kill in (os.killpg, os.kill):
            try:
                kill(self.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        self.exit_code(5.0)
        self.sock.close()
        LIVE.discard(self)


#: Libraries whose threads a forked child cannot use (a policy process forked after one was
#: imported here could hang in it): with one of them loaded, policy processes start afresh.
#: (torch is forked from: the policy process sets its intra-op threads to one first, as the
#: harness runs episodes.)
FORK_UNSAFE = ("tensorflow", "jax", "ray")


def can_fork() -> bool:
    """Whether to fork the policy process from this one: not where forking is unsafe (no
    ``fork``, a library of :data:`FORK_UNSAFE` loaded, or ``MRSCHED_GYM_POLICY_START=spawn``).
    """
    if not hasattr(os, "fork") or os.environ.get("MRSCHED_GYM_POLICY_START") == "spawn":
        return False
    return not any(name in sys.modules for name in FORK_UNSAFE)


def spawn(fd: int, limits: PolicyLimits) -> subprocess.Popen[bytes]:
    """A policy process started afresh on the channel ``fd``, with this process's
    ``sys.path`` (a module a policy names is found where the harness would find it)."""
    import json
    package_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(
        __file__))))
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [package_root,
                                                      env.get("PYTHONPATH", "")]))
    try:
        err = sys.stderr.fileno()
    except (OSError, ValueError, AttributeError):
        err = subprocess.DEVNULL
    return subprocess.Popen(
        [sys.executable, "-m", "mrsched_gym.policy.host", str(fd), json.dumps(asdict(limits)),
         json.dumps(sys.path)],
        pass_fds=(fd,), start_new_session=True, stdin=subprocess.DEVNULL, stdout=err,
        stderr=err, env=env)


def die_with_parent() -> None:
    """Linux: this process is killed when the process that forked it ends (best effort)."""
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)                  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


@atexit.register
def end_all() -> None:
    """End every policy process still running (the harness is exiting)."""
    for child in list(LIVE):
        child.end(polite=False)


#: Every policy process still running (ended at exit).
LIVE: weakref.WeakSet[Child] = weakref.WeakSet()


def how_it_ended(code: int | None) -> str:
    """A policy process's end in words."""
    from mrsched_gym.processes.workers import how_it_ended as worker_end
    text = worker_end(code)
    if code == -signal.SIGXCPU:
        text += " (its CPU-time limit, MRSCHED_GYM_POLICY_CPU_S)"
    return text


__all__ = ["EXIT_GRACE_S", "FORK_UNSAFE", "LIVE", "Child", "can_fork", "end_all",
           "how_it_ended"]
