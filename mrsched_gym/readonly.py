"""The world as an outside policy sees it: read-only proxies of the simulator's live state.

A baseline of this package decides from the simulator itself (typed as its read-only
:class:`~mrsched_gym.sim.view.ClusterView`; mypy holds it to that). An outside policy (a policy
file, a policy object, a :class:`~mrsched_gym.baselines.base.Scheduler` subclass of its own) is
code the harness did not write, so it gets :class:`GuardedView` instead: the same names, every
value read-only or a copy.

* The view exposes exactly the :class:`~mrsched_gym.sim.view.ClusterView` protocol; any other
  name of the simulator is refused (``AttributeError``).
* Jobs, tasks and other objects come as :class:`ReadOnly` proxies: reading an attribute works
  as on the object (``isinstance(job, Job)`` holds; the same job is the same proxy within an
  episode), setting or deleting one raises :class:`ReadOnlyError` naming it, and the methods
  that change a job (``take_map``, ``requeue_map``, ``build_locality``) are refused.
* Lists come as :class:`SeqView` (a read-only, live ``Sequence``), dicts as :class:`MapView`
  (a read-only ``Mapping``), ``bytearray`` as ``bytes``, sets as ``frozenset``, and numpy
  arrays as read-only copies (an array fixed for the episode is copied once per episode).
* The :class:`~mrsched_gym.sim.decision.Decision` comes as :class:`DecisionView`: its candidates
  are the same named tuples holding proxies.

This guards against a policy that writes to what it is handed (by mistake or to game a
leaderboard); it is no sandbox: Python code in the same process that digs into the interpreter
(``gc``, frames, ``object.__getattribute__`` on a proxy's slot) can still reach the simulator.
Run code you do not trust in a container.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from enum import Enum
from typing import Any

import numpy as np

from mrsched_gym.policy_failures import reraise
from mrsched_gym.sim.decision import Decision
from mrsched_gym.sim.state import Job, Task
from mrsched_gym.sim.view import ClusterView

#: Values returned as they are: immutable scalars.
SCALARS = (type(None), bool, int, float, str, bytes, complex, Enum, np.generic)
#: Methods that change the object they belong to, refused on a proxy.
MUTATORS: dict[type, frozenset[str]] = {
    Job: frozenset({"build_locality", "requeue_map", "take_map"}),
    Task: frozenset(),
}
#: What a policy's view may read: the names of the ClusterView protocol.
VIEW_NAMES = frozenset(n for n in vars(ClusterView) if not n.startswith("_"))
#: The view's arrays that are drawn at reset and fixed for the episode (copied once).
EPISODE_ARRAYS = frozenset({"avail_f", "forecast_f", "node_forecast"})


_get = object.__getattribute__


def private(name: str) -> bool:
    """A private name (``_x``, not a dunder): never readable through a proxy (a proxy keeps
    the live object in one)."""
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


class ReadOnlyError(AttributeError):
    """A policy tried to change what it was given (the message names the attribute)."""


def refuse(what: str, name: str) -> ReadOnlyError:
    """The error for a write to ``name`` of ``what``."""
    return ReadOnlyError(f"cannot change {name!r} of {what}: what a policy is given is "
                         f"read-only (the simulator's state is its own)")


class Guard:
    """The proxies of one episode, so that one object is always the same proxy (``is`` and
    ``==`` work as on the objects); kept until the next reset."""

    __slots__ = ("proxies", "arrays")

    def __init__(self) -> None:
        self.proxies: dict[int, tuple[Any, Any]] = {}
        self.arrays: dict[str, np.ndarray] = {}

    def wrap(self, value: Any) -> Any:
        """``value`` as a policy may hold it (see the module docstring)."""
        if isinstance(value, SCALARS):
            return value
        found = self.proxies.get(id(value))
        if found is not None:
            return found[1]
        if isinstance(value, tuple) and hasattr(value, "_fields"):
            # a candidate: the simulator offers the same tuples again (kept, so ids stay)
            wrapped = type(value)._make([self.wrap(v) for v in value])
            self.proxies[id(value)] = (value, wrapped)
            return wrapped
        if isinstance(value, tuple):
            if all(isinstance(v, SCALARS) for v in value):
                return value
            return tuple([self.wrap(v) for v in value])
        if isinstance(value, list):
            return SeqView(value, self)
        if isinstance(value, dict):
            return MapView(value, self)
        if isinstance(value, np.ndarray):
            out = value.copy()
            out.flags.writeable = False
            return out
        if isinstance(value, (bytearray, memoryview)):
            return bytes(value)
        if isinstance(value, (set, frozenset)):
            return frozenset(self.wrap(v) for v in value)
        if isinstance(value, (ReadOnly, SeqView, MapView, DecisionView)):
            return value
        proxy = ReadOnly(value, self)
        self.proxies[id(value)] = (value, proxy)        # holds value: its id stays its own
        return proxy


def unwrap(value: Any) -> Any:
    """The object behind a proxy (for comparisons), else ``value``."""
    if type(value) is ReadOnly:
        return _get(value, "_target")
    return value


class Sealed:
    """What every proxy shares: private names cannot be read, no attribute can be set."""

    __slots__ = ()

    def __getattribute__(self, name: str) -> Any:
        if private(name):
            raise AttributeError(f"{type(self).__name__}: {name!r} is private")
        return _get(self, name)

    def __setattr__(self, name: str, value: Any) -> None:
        raise refuse(f"a {type(self).__name__}", name)

    def __delattr__(self, name: str) -> None:
        raise refuse(f"a {type(self).__name__}", name)


class ReadOnly(Sealed):
    """A read-only proxy of one object (a job, a task, a config section...)."""

    __slots__ = ("_target", "_guard")

    def __init__(self, target: Any, guard: Guard) -> None:
        object.__setattr__(self, "_target", target)
        object.__setattr__(self, "_guard", guard)

    def __getattribute__(self, name: str) -> Any:
        target = _get(self, "_target")
        if name[0] != "_":
            value = getattr(target, name)
            kind = type(value)
            if kind is float or kind is int or kind is bool or kind is str:
                return value                        # the common case, first
        if name.startswith("_"):
            if name == "__class__":                 # isinstance(proxy, Job) holds
                return type(target)
            if private(name) or name in ("__dict__", "__init__"):
                raise AttributeError(f"{type(target).__name__} proxy: {name!r} is private")
            return _get(self, name)
        guard = _get(self, "_guard")
        if callable(value) and not isinstance(value, type):
            if name in MUTATORS.get(type(target), ()):
                raise ReadOnlyError(f"cannot call {name}() of a {type(target).__name__}: it "
                                    f"changes the simulator's state, which is its own")
            return lambda *a, **k: guard.wrap(value(*(unwrap(x) for x in a), **k))
        return guard.wrap(value)

    def __setattr__(self, name: str, value: Any) -> None:
        raise refuse(f"a {type(_get(self, '_target')).__name__}", name)

    def __delattr__(self, name: str) -> None:
        raise refuse(f"a {type(_get(self, '_target')).__name__}", name)

    def __eq__(self, other: object) -> bool:
        return bool(_get(self, "_target") == unwrap(other))

    def __hash__(self) -> int:
        return hash(_get(self, "_target"))

    def __repr__(self) -> str:
        return f"<read-only {_get(self, '_target')!r}>"

    def __reduce__(self) -> Any:
        raise TypeError("a read-only proxy of the simulator's state cannot be pickled or copied")


class SeqView(Sealed, Sequence[Any]):
    """A read-only, live view of a list (items wrapped as they are read)."""

    __slots__ = ("_items", "_guard")

    def __init__(self, items: list[Any], guard: Guard) -> None:
        object.__setattr__(self, "_items", items)
        object.__setattr__(self, "_guard", guard)

    def __getitem__(self, i: Any) -> Any:
        wrap = _get(self, "_guard").wrap
        if isinstance(i, slice):
            return tuple(wrap(v) for v in _get(self, "_items")[i])
        return wrap(_get(self, "_items")[i])

    def __len__(self) -> int:
        return len(_get(self, "_items"))

    def __iter__(self) -> Iterator[Any]:
        wrap = _get(self, "_guard").wrap
        return (wrap(v) for v in _get(self, "_items"))

    def __contains__(self, value: object) -> bool:
        return unwrap(value) in _get(self, "_items")

    def __eq__(self, other: object) -> bool:
        if isinstance(other, SeqView):
            return bool(_get(self, "_items") == _get(other, "_items"))
        return isinstance(other, (list, tuple)) and list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        return np.array(_get(self, "_items"), dtype=dtype)

    def __repr__(self) -> str:
        return f"SeqView({_get(self, '_items')!r})"

    def __reduce__(self) -> Any:
        return list, (list(self),)


class MapView(Sealed, Mapping[Any, Any]):
    """A read-only, live view of a dict (values wrapped as they are read)."""

    __slots__ = ("_items", "_guard")

    def __init__(self, items: dict[Any, Any], guard: Guard) -> None:
        object.__setattr__(self, "_items", items)
        object.__setattr__(self, "_guard", guard)

    def __getitem__(self, key: Any) -> Any:
        return _get(self, "_guard").wrap(_get(self, "_items")[key])

    def __len__(self) -> int:
        return len(_get(self, "_items"))

    def __iter__(self) -> Iterator[Any]:
        return iter(tuple(_get(self, "_items")))

    def __contains__(self, key: object) -> bool:
        return key in _get(self, "_items")

    def __repr__(self) -> str:
        return f"MapView({_get(self, '_items')!r})"

    def __reduce__(self) -> Any:
        return dict, (dict(self.items()),)


class DecisionView(Sealed):
    """A :class:`~mrsched_gym.sim.decision.Decision` whose job and candidates are proxies
    (``isinstance(d, Decision)`` holds; fields cannot be set)."""

    __slots__ = ("kind", "time_s", "node", "job", "candidates")

    def __init__(self, decision: Decision, guard: Guard) -> None:
        object.__setattr__(self, "kind", decision.kind)
        object.__setattr__(self, "time_s", decision.time_s)
        object.__setattr__(self, "node", decision.node)
        object.__setattr__(self, "job", guard.wrap(decision.job))
        object.__setattr__(self, "candidates", guard.wrap(decision.candidates))

    @property  # type: ignore[misc]
    def __class__(self) -> type:
        return Decision

    def as_tuple(self) -> tuple[Any, ...]:
        """The fields, in order (as :meth:`Decision.as_tuple`)."""
        return (self.kind, self.time_s, self.node, self.job, self.candidates)

    def __setattr__(self, name: str, value: Any) -> None:
        raise refuse("the decision", name)

    def __delattr__(self, name: str) -> None:
        raise refuse("the decision", name)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DecisionView) and self.as_tuple() == other.as_tuple()

    def __hash__(self) -> int:
        return hash(self.as_tuple())

    def __repr__(self) -> str:
        return (f"Decision(kind={self.kind!r}, time_s={self.time_s!r}, node={self.node!r}, "
                f"job={self.job!r}, candidates={self.candidates!r})")


class GuardedView(Sealed):
    """The :class:`~mrsched_gym.sim.view.ClusterView` of a simulator for an outside policy
    (see the module docstring); one per policy, ``GuardedView.reset(view, sim)`` at each episode
    (called on the class: the policy's view offers the protocol's names only).

    Args:
        sim: The simulator (or its view).
    """

    __slots__ = ("_sim", "_guard", "_decision", "_seen")

    def __init__(self, sim: ClusterView) -> None:
        GuardedView.reset(self, sim)

    def reset(self, sim: ClusterView) -> None:
        """Look at ``sim`` (a new episode): the proxies of the last one are dropped."""
        object.__setattr__(self, "_sim", sim)
        object.__setattr__(self, "_guard", Guard())
        object.__setattr__(self, "_decision", None)
        object.__setattr__(self, "_seen", None)

    def current_decision(self) -> DecisionView:
        """The pending decision, its job and candidates as proxies (one per decision)."""
        current = _get(self, "_sim").decision
        if current is not _get(self, "_seen"):
            object.__setattr__(self, "_decision", DecisionView(current, _get(self, "_guard")))
            object.__setattr__(self, "_seen", current)
        return _get(self, "_decision")  # type: ignore[no-any-return]

    def __getattribute__(self, name: str) -> Any:
        if name == "decision":
            return GuardedView.current_decision(self)
        if name in ("job", "candidates"):
            return getattr(GuardedView.current_decision(self), name)
        if name.startswith("__") and name.endswith("__"):
            return _get(self, name)
        if name not in VIEW_NAMES:
            raise AttributeError(f"a policy's view has no {name!r}: it offers what "
                                 f"mrsched_gym.sim.view.ClusterView lists")
        guard = _get(self, "_guard")
        sim = _get(self, "_sim")
        if name in EPISODE_ARRAYS:                 # fixed for the episode: copied once
            if name not in guard.arrays:
                guard.arrays[name] = guard.wrap(getattr(sim, name))
            return guard.arrays[name]
        value = getattr(sim, name)
        if callable(value):
            return lambda *a, **k: guard.wrap(value(*a, **k))
        return guard.wrap(value)

    def __setattr__(self, name: str, value: Any) -> None:
        raise refuse("the cluster view", name)

    def __delattr__(self, name: str) -> None:
        raise refuse("the cluster view", name)

    def __repr__(self) -> str:
        return f"<read-only cluster view at t={_get(self, '_sim').now:.1f} s>"


class GuardedScheduler:
    """A :class:`~mrsched_gym.baselines.base.Scheduler` subclass of another package (an outside
    policy) as the harness runs it: ``reset`` and ``decide`` get a :class:`GuardedView`, and
    anything they raise fails the episode naming the policy and the phase
    (:mod:`mrsched_gym.policy_failures`).

    Args:
        scheduler: The scheduler.
        name: Its label.
    """

    def __init__(self, scheduler: Any, name: str) -> None:
        self.scheduler = scheduler
        self.name = name
        self.view: GuardedView | None = None

    def reset(self, sim: ClusterView, seed: int | None = None) -> None:
        """The scheduler's ``reset(view, seed)``."""
        if self.view is None:
            self.view = GuardedView(sim)
        GuardedView.reset(self.view, sim)
        try:
            self.scheduler.reset(self.view, seed=seed)
        except BaseException as e:                  # noqa: BLE001 - reported, named
            reraise(self.name, "reset", e)

    def decide(self, sim: ClusterView) -> int:
        """The scheduler's ``decide(view)``."""
        view = self.view
        if view is None:
            view = self.view = GuardedView(sim)
        try:
            return self.scheduler.decide(view)  # type: ignore[no-any-return]
        except BaseException as e:                  # noqa: BLE001 - reported, named
            reraise(self.name, "decide", e)


__all__ = ["DecisionView", "Guard", "GuardedScheduler", "GuardedView", "MapView", "ReadOnly",
           "ReadOnlyError", "SeqView", "unwrap"]
