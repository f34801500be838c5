"""The resource limits of a policy process (:mod:`mrsched_gym.policy.process`).

Each policy process runs one episode of one policy file or module under these limits, set in
the process before the policy's code is loaded (``setrlimit``: the policy cannot raise a hard
limit). Raise one by its environment variable, in the shell that runs the harness (workers and
policy processes inherit it):

=====================================  =========  ==================================================
variable                               default    what it bounds
=====================================  =========  ==================================================
``MRSCHED_GYM_POLICY_CPU_S``           3600       CPU seconds of one episode's policy process
                                                  (past it: ended by ``SIGXCPU``)
``MRSCHED_GYM_POLICY_MEMORY_MB``       4096       address space it may add to what it starts with
                                                  (past it: its allocations fail, ``MemoryError``)
``MRSCHED_GYM_POLICY_FILES``           256        open file descriptors
``MRSCHED_GYM_POLICY_PROCESSES``       256        processes of its user (``RLIMIT_NPROC``; the
                                                  kernel does not apply it to root)
=====================================  =========  ==================================================

A value is a whole number from 1 to :data:`CEILING`; anything else is refused before any work,
naming the variable. Core dumps are off. Wall time per decision is the decision budget's
(``--decision-budget``), enforced from the harness.
"""

from __future__ import annotations

import os
import resource
from dataclasses import dataclass

from mrsched_gym.errors import InputError

#: The largest value any limit takes.
CEILING = 10 ** 9
#: The variables, their defaults and the field of :class:`PolicyLimits` they set.
VARIABLES = {
    "MRSCHED_GYM_POLICY_CPU_S": ("cpu_s", 3600),
    "MRSCHED_GYM_POLICY_MEMORY_MB": ("memory_mb", 4096),
    "MRSCHED_GYM_POLICY_FILES": ("files", 256),
    "MRSCHED_GYM_POLICY_PROCESSES": ("processes", 256),
}


@dataclass(frozen=True)
class PolicyLimits:
    """The limits of a policy process (see the module docstring)."""

    cpu_s: int = 3600
    memory_mb: int = 4096
    files: int = 256
    processes: int = 256


def limits_from_env() -> PolicyLimits:
    """The limits the environment sets (the defaults where it sets none).

    Raises:
        InputError: A variable that is not a whole number from 1 to :data:`CEILING`, named.
    """
    values = {}
    for variable, (field, _default) in VARIABLES.items():
        text = os.environ.get(variable)
        if text is None or not text.strip():
            continue
        text = text.strip()
        if not (text.isascii() and text.isdigit()) or not 1 <= int(text) <= CEILING:
            raise InputError(f"{variable}={text[:40]!r}: a policy process limit is a whole "
                             f"number from 1 to {CEILING:,}")
        values[field] = int(text)
    return PolicyLimits(**values)


def address_space_now() -> int:
    """This process's virtual memory size in bytes (0 where ``/proc`` does not say)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[0]) * resource.getpagesize()
    except (OSError, ValueError, IndexError):
        return 0


def apply_limits(limits: PolicyLimits) -> None:
    """Set ``limits`` on this process, soft and hard (called in the policy process before the
    policy's code loads). A limit the system refuses (above a hard limit set from outside) is
    left as it is."""
    used = int(sum(resource.getrusage(resource.RUSAGE_SELF)[:2]))
    wanted = [
        (resource.RLIMIT_CPU, used + limits.cpu_s),
        (resource.RLIMIT_NOFILE, limits.files),
        (resource.RLIMIT_NPROC, limits.processes),
        (resource.RLIMIT_CORE, 0),
    ]
    start = address_space_now()
    if start:                                       # what it starts with, plus the allowance
        wanted.append((resource.RLIMIT_AS, start + limits.memory_mb * (1 << 20)))
    for which, value in wanted:
        _soft, hard = resource.getrlimit(which)
        if hard != resource.RLIM_INFINITY:
            value = min(value, hard)
        try:
            resource.setrlimit(which, (value, value))
        except (ValueError, OSError):
            pass


__all__ = ["CEILING", "VARIABLES", "PolicyLimits", "address_space_now", "apply_limits",
           "limits_from_env"]
