"""The building blocks of :mod:`mrsched_gym.policy.proxies`: which values and fields are immutable,
the errors a write or an absent name raises, the hidden slots a proxy keeps its target in, and
the sealed base classes (no attribute can be set or deleted)."""

from __future__ import annotations

import secrets
from enum import Enum
from typing import Any

import numpy as np

from mrsched_gym.sim.state import Job, Task

#: Values returned as they are: immutable scalars.
SCALARS = (type(None), bool, int, float, str, bytes, complex, Enum, np.generic)
#: The exact types of :data:`SCALARS` met on the hot path (a set look-up before ``isinstance``).
SCALAR_TYPES = frozenset({type(None), bool, int, float, str})
#: Methods that change the object they belong to, refused on a proxy.
MUTATORS: dict[type, frozenset[str]] = {
    Job: frozenset({"build_locality", "requeue_map", "take_map"}),
    Task: frozenset(),
}
#: The fields (and properties) of a job or a task that always hold a number, a string, ``None``
#: or a tuple of numbers: read through a C-level getter (``tests/test_policy_readonly.py``
#: checks, over episodes of several scenarios, that each holds nothing else). Any other name
#: is wrapped as it is read.
SCALAR_FIELDS: dict[type, tuple[str, ...]] = {
    Job: ("jid", "type_idx", "arrival_s", "deadline_s", "priority", "weight", "n_maps",
          "n_reduces", "label", "state", "maps_done", "reduces_done", "maps_running",
          "reduces_running", "pending_maps", "pending_reduces", "reduce_ready", "late",
          "finish_s", "first_start_s", "work_done", "total_work", "preempt_budget", "alone_s",
          "has_map_work", "has_red_work", "est_finish_s", "map_alone_s", "map_finish_s",
          "est_deadline_finish_s", "task_mem_gb", "shuffle_mb_per_map", "map_demand",
          "reduce_demand", "prior_len", "expected_len", "tasks_done"),
    Task: ("tid", "phase", "idx", "node", "remaining", "floor", "rate", "t_last", "version",
           "work", "start_s", "mem_gb", "swapped_gb", "state", "est", "shuffle_s", "locality",
           "first_start_s", "src", "read_io", "type_idx", "base", "mem0", "cpu_est", "is_copy",
           "demand", "progress"),
}

#: The fields of :data:`SCALAR_FIELDS` that the simulator sets once, when it makes the object
#: (before any policy sees it), and never again: a proxy holds a copy of each in a slot of its
#: own, filled when it is made, and a read is a slot read (as fast as on the live object).
#: ``tests/test_policy_readonly.py`` checks, at every decision of episodes of several
#: scenarios, that the copies equal the live values.
FROZEN_FIELDS: dict[type, tuple[str, ...]] = {
    Job: ("jid", "type_idx", "arrival_s", "deadline_s", "priority", "weight", "n_maps",
          "n_reduces", "label", "task_mem_gb", "shuffle_mb_per_map", "map_demand",
          "reduce_demand", "prior_len", "expected_len", "total_work", "alone_s", "map_alone_s"),
    Task: ("tid", "phase", "idx", "work"),
}


def private(name: str) -> bool:
    """A private name (``_x``, not a dunder): never readable through a proxy."""
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


class ReadOnlyError(AttributeError):
    """A policy tried to change what it was given (the message names the attribute)."""


def refuse(what: str, name: str) -> ReadOnlyError:
    """The error for a write to ``name`` of ``what``."""
    return ReadOnlyError(f"cannot change {name!r} of {what}: what a policy is given is "
                         f"read-only (the simulator's state is its own)")


#: Drawn once per process: the hidden slots' keys cannot be guessed from this source.
KEY_SALT = secrets.token_hex(8)


def hidden(name: str) -> str:
    """The key a hidden slot ``name`` is kept under: not an identifier, and salted."""
    return f"<{name} {KEY_SALT}>"


def hide_slots(cls: type) -> type:
    """Class decorator: move the descriptors of ``cls``'s own slots to keys that are not
    identifiers (:func:`hidden`), so that no ``obj.x`` and no guessed name reaches them."""
    for name in cls.__dict__.get("__slots__", ()):
        descriptor = cls.__dict__[name]
        delattr(cls, name)
        setattr(cls, hidden(name), descriptor)
    return cls


class Sealed:
    """What every proxy shares: no attribute can be set or deleted."""

    __slots__ = ()

    def __setattr__(self, name: str, value: Any) -> None:
        raise refuse(f"a {self.__class__.__name__}", name)

    def __delattr__(self, name: str) -> None:
        raise refuse(f"a {self.__class__.__name__}", name)


class Explained(Sealed):
    """A :class:`Sealed` proxy whose missing names are refused with a message (private names
    as private). ``__getattr__`` makes every read of the type a little slower, so the proxies
    of jobs and tasks (read at every decision) go without."""

    __slots__ = ()

    def __getattr__(self, name: str) -> Any:
        raise absent(self.__class__.__name__, name)


def absent(what: str, name: str) -> AttributeError:
    """The error for a read of ``name`` that a proxy of a ``what`` does not offer."""
    if private(name):
        return AttributeError(f"{what} proxy: {name!r} is private")
    return AttributeError(f"a read-only {what} has no {name!r}")
