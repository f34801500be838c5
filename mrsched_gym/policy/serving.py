"""What the harness answers a policy process: copies of the simulator's state, read by name
(the harness side of :mod:`mrsched_gym.policy.mirror`).

A policy process names what it reads: a name of the view (``["get", 0, "used_map"]``), a
field of a job or a task it was given (``["get", 7, "maps_done"]``, by the handle the harness
gave it), all number fields of one (``["scalars", 7]``), the new items of a list that only
grows (``["tail", "task_log", 120]``) or a method's result (``["call", 0, "disk_load", [3]]``).
:class:`WorldServer` answers with copies (:meth:`WorldServer.export`): numbers and strings as
they are, jobs and tasks as references the policy process turns into read-only proxies, lists
as tuples, dicts as read-only mappings, arrays as read-only copies, the scenario and job
profiles as copies. Only the names of the :class:`~mrsched_gym.sim.view.ClusterView` protocol
and the public names of a job or a task are read; no method that changes a job
(:data:`~mrsched_gym.policy.proxy_base.MUTATORS`) is called; a call's arguments are numbers
(at most :data:`MAX_ARGUMENT` in size), strings and lists of them. Whatever a request asks,
the policy process only ever holds copies: nothing it does reaches the simulator.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from mrsched_gym.config import Scenario
from mrsched_gym.policy.mirror import (
    CANDIDATE_CODES,
    EPISODE_NAMES,
    GROWING,
    VIEW_METHODS,
    VIEW_NAMES,
    materialize,
    readonly_array,
    readonly_map,
)
from mrsched_gym.policy.proxy_base import FROZEN_FIELDS, MUTATORS, SCALAR_FIELDS, SCALARS
from mrsched_gym.sim.state import Job, Task
from mrsched_gym.workloads.profiles import JobTypeProfile

#: The largest number a call's argument may be (``forecast_window(10**9)`` would make the
#: harness build a huge array).
MAX_ARGUMENT = 1 << 20
#: The most jobs and tasks one request reads the number fields of.
MAX_BATCH = 1024
#: The view's names a policy process reads from its copy of the decision, never asked for.
DECISION_NAMES = frozenset({"decision", "kind", "node", "job", "candidates"})
#: The view's names a policy process may ask for.
READABLE = (VIEW_NAMES - DECISION_NAMES - VIEW_METHODS) | EPISODE_NAMES
#: The classes copied whole (fixed for the episode, holding no simulator object).
COPIED = (Scenario, JobTypeProfile)
#: Each class's reference kind, its public names, and the getters of its fixed and number
#: fields.
KINDS: dict[type, str] = {Job: "J", Task: "T"}
PUBLIC: dict[type, frozenset[str]] = {
    cls: frozenset(n for n in dir(cls) if not n.startswith("_")) - MUTATORS[cls]
    for cls in KINDS}
FROZEN_GET: dict[type, Callable[[Any], tuple[Any, ...]]] = {
    cls: operator.attrgetter(*FROZEN_FIELDS[cls]) for cls in KINDS}
MUTABLE_SCALARS: dict[type, tuple[str, ...]] = {
    cls: tuple(n for n in SCALAR_FIELDS[cls] if n not in FROZEN_FIELDS[cls]) for cls in KINDS}
SCALARS_GET: dict[type, Any] = {cls: operator.attrgetter(*names)
                                for cls, names in MUTABLE_SCALARS.items()}


class Refused(Exception):
    """A request the harness does not answer (the policy process gets ``error_type``)."""

    def __init__(self, message: str, error_type: str = "AttributeError") -> None:
        super().__init__(message)
        self.error_type = error_type


class Reference:
    """A job or a task in a message: the policy process unpickles it as its read-only proxy
    (:func:`~mrsched_gym.policy.mirror.materialize`)."""

    __slots__ = ("args",)

    def __init__(self, kind: str, handle: int, frozen: tuple[Any, ...] | None) -> None:
        self.args = (kind, handle, frozen)

    def __reduce__(self) -> Any:
        return materialize, self.args


class Wrapped:
    """A value the policy process unpickles through ``maker`` (a read-only array or map)."""

    __slots__ = ("args", "maker")

    def __init__(self, maker: Callable[..., Any], value: Any) -> None:
        self.maker = maker
        self.args = (value,)

    def __reduce__(self) -> Any:
        return self.maker, self.args


class WorldServer:
    """The harness's answers to one policy process over one episode of ``sim``.

    Args:
        sim: The simulator.
    """

    def __init__(self, sim: Any) -> None:
        self.sim = sim
        self.objects: list[Any] = [sim]
        self.handles: dict[int, int] = {}
        self.candidates: dict[Any, Any] = {}
        self.fresh: list[tuple[str, int, tuple[Any, ...]]] = []

    # ------------------------------------------------------------------ copies
    def reference(self, obj: Any) -> Reference:
        """``obj`` (a job or a task) as a reference; its fixed fields go with its first."""
        cls = type(obj)
        handle = self.handles.get(id(obj))
        if handle is not None:
            return Reference(KINDS[cls], handle, None)
        handle = self.handles[id(obj)] = len(self.objects)
        self.objects.append(obj)
        return Reference(KINDS[cls], handle, FROZEN_GET[cls](obj))

    def export(self, value: Any) -> Any:
        """A copy of ``value`` as the policy process gets it (see the module docstring)."""
        kind = type(value)
        if kind in KINDS:
            return self.reference(value)
        if isinstance(value, SCALARS):
            return value
        if isinstance(value, tuple):
            items = [self.export(v) for v in value]
            return kind._make(items) if hasattr(value, "_fields") else tuple(items)
        if isinstance(value, list):
            return tuple([self.export(v) for v in value])
        if isinstance(value, dict):
            return Wrapped(readonly_map, {self.export(k): self.export(v)
                                          for k, v in value.items()})
        if isinstance(value, np.ndarray):
            return Wrapped(readonly_array, value.copy())
        if isinstance(value, (bytearray, memoryview)):
            return bytes(value)
        if isinstance(value, (set, frozenset)):
            return frozenset(self.export(v) for v in value)
        if isinstance(value, COPIED):
            return value
        raise Refused(f"a {type(value).__name__} is not offered to a policy process")

    def handle(self, obj: Any) -> int:
        """The handle of ``obj`` (a job or a task); one met for the first time is listed in
        :attr:`fresh` with its fixed fields, for the next decision to carry."""
        handle = self.handles.get(id(obj))
        if handle is None:
            cls = type(obj)
            handle = self.handles[id(obj)] = len(self.objects)
            self.objects.append(obj)
            self.fresh.append((KINDS[cls], handle, FROZEN_GET[cls](obj)))
        return handle

    def decision(self) -> tuple[Any, ...]:
        """The pending decision, as plain numbers: ``(kind, time_s, node, job handle or -1,
        candidates, fresh)``, each candidate ``(type code, field, ...)`` with its job or task
        as a handle (:data:`~mrsched_gym.policy.mirror.CANDIDATE_TYPES`; kept by value), and
        the jobs and tasks met for the first time (:meth:`handle`)."""
        live = self.sim.decision
        job = live.job
        cached = self.candidates
        candidates = []
        for c in live.candidates:
            made = cached.get(c)
            if made is None:
                made = cached[c] = (CANDIDATE_CODES[type(c)], *[
                    self.handle(v) if type(v) in KINDS else int(v) for v in c])
            candidates.append(made)
        fresh = self.fresh
        frame = (int(live.kind), live.time_s, live.node, -1 if job is None else self.handle(job),
                 tuple(candidates), tuple(fresh))
        fresh.clear()
        return frame

    # ------------------------------------------------------------------ requests
    def answer(self, message: list[Any]) -> tuple[Any, ...]:
        """The reply to a request: ``("value", copy)`` or ``("error", type name, text)``."""
        try:
            return ("value", self.serve(message))
        except Refused as e:
            return ("error", e.error_type, str(e))
        except (AttributeError, TypeError, ValueError, IndexError, KeyError,
                ZeroDivisionError, OverflowError) as e:
            return ("error", type(e).__name__, str(e)[:2000])

    def serve(self, message: list[Any]) -> Any:
        """The copy a request asks for (see the module docstring).

        Raises:
            Refused: A name or handle the request may not read.
        """
        tag = message[0]
        if tag == "tail":
            name, start = message[1], message[2]
            if name not in GROWING or start < 0:
                raise Refused(f"no list {name!r} grows")
            return self.export(getattr(self.sim, name)[start:])
        if tag == "scalars":
            return {h: self.scalars(h) for h in message[1][:MAX_BATCH]}
        obj = self.target(message[1])
        name = message[2]
        self.check_name(obj, name, call=tag == "call")
        if tag == "get":
            value = getattr(obj, name)
            if callable(value) and not isinstance(value, type):
                raise Refused(f"{name} is a method: call it")
            return self.export(value)
        args = [checked_argument(a) for a in message[3]]
        return self.export(getattr(obj, name)(*args))

    def scalars(self, handle: Any) -> dict[str, Any]:
        """The number fields of the job or task ``handle`` that change (by name)."""
        obj = self.target(handle) if type(handle) is int else None
        if type(obj) not in KINDS:
            raise Refused(f"no job or task {str(handle)[:30]} was given to the policy")
        names = MUTABLE_SCALARS[type(obj)]
        return dict(zip(names, SCALARS_GET[type(obj)](obj), strict=True))

    def target(self, handle: int) -> Any:
        """The object of ``handle`` (0: the simulator)."""
        if not 0 <= handle < len(self.objects):
            raise Refused(f"no object {handle} was given to the policy")
        return self.objects[handle]

    def check_name(self, obj: Any, name: str, call: bool) -> None:
        """Refuse a name the policy may not read (or call) on ``obj``."""
        if obj is self.sim:
            allowed = VIEW_METHODS if call else READABLE
            what = "the view"
        else:
            allowed = PUBLIC[type(obj)]
            what = f"a {type(obj).__name__}"
            if name in MUTATORS[type(obj)]:
                raise Refused(f"cannot call {name}() of a {type(obj).__name__}: it changes "
                              f"the simulator's state, which is its own", "ReadOnlyError")
        if name not in allowed:
            raise Refused(f"{what} has no {name!r} a policy may {'call' if call else 'read'}")


def checked_argument(value: Any) -> Any:
    """A call's argument: a number of at most :data:`MAX_ARGUMENT` in size, a string, None, or
    a list of them.

    Raises:
        Refused: Anything else (``TypeError`` or ``ValueError`` in the policy process).
    """
    if isinstance(value, list):
        return [checked_argument(v) for v in value]
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, (int, float)):
        if not abs(value) <= MAX_ARGUMENT:
            raise Refused(f"an argument of {str(value)[:30]} is out of range (at most "
                          f"{MAX_ARGUMENT:,} in size)", "ValueError")
        return value
    raise Refused(f"an argument of type {type(value).__name__} cannot be passed", "TypeError")


__all__ = ["COPIED", "MAX_ARGUMENT", "READABLE", "Reference", "Refused", "WorldServer",
           "Wrapped", "checked_argument"]
