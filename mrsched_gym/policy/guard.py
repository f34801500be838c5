"""The proxies of one episode (:class:`Guard`): what :mod:`mrsched_gym.policy.proxies`' read-only
views are made by and cached in, one per episode of an outside policy
(:mod:`mrsched_gym.policy.readonly`).

Compiled with the simulator in the compiled build (``setup.py``'s ``COMPILED``), as
:mod:`mrsched_gym.policy.rule_adapter` is: wrapping a job, a task or a candidate the first time a
policy meets it is most of what the read-only view costs per decision there
(``docs/notes/speed.md``). The pure-Python build runs the same code.
"""

from __future__ import annotations

from typing import Any, Final

import numpy as np

from mrsched_gym.policy.proxies import (
    FILLERS,
    HIDDEN_SETTERS,
    PROXY_TYPES,
    DecisionView,
    MapView,
    NamedCache,
    ReadOnly,
    SeqView,
)
from mrsched_gym.policy.proxy_base import SCALAR_TYPES, SCALARS, Sealed

#: Makes a named tuple of a type from a list in one C call (its own ``__new__`` is Python).
NEW_TUPLE: Final = tuple.__new__


class Guard:
    """The proxies of one episode, so that one object is always the same proxy (``is`` and
    ``==`` work as on the objects), and the decision last wrapped; kept until the next reset.

    Args:
        sim: The simulator (or its view) whose objects it wraps.
    """

    sim: Any
    #: The proxy of each object met, by ``id`` (with the object, so that its id stays its own).
    proxies: dict[int, tuple[Any, Any]]
    #: The episode's fixed arrays, copied once (:data:`mrsched_gym.policy.readonly.EPISODE_ARRAYS`).
    arrays: dict[str, Any]
    #: The candidates met, as a policy gets them, keyed by value (a NamedCache).
    named: Any
    #: ``named.__getitem__``: a candidate as a policy gets it (made on first sight).
    candidate: Any
    #: The last decision wrapped (``sim.decision``) and its view.
    seen: Any
    made: Any

    def __init__(self, sim: Any) -> None:
        self.sim = sim
        self.proxies = {}
        self.arrays = {}
        self.named = NamedCache(self)
        self.candidate = self.named.__getitem__
        self.seen = None
        self.made = None

    def wrap(self, value: Any) -> Any:
        """``value`` as a policy may hold it: scalars as they are, objects as proxies, lists
        as :class:`~mrsched_gym.policy.proxies.SeqView`, dicts as
        :class:`~mrsched_gym.policy.proxies.MapView`, named tuples with their items wrapped, numpy
        arrays as read-only copies, ``bytearray`` as ``bytes``, sets as ``frozenset``."""
        if type(value) in SCALAR_TYPES:
            return value
        found = self.proxies.get(id(value))
        if found is not None:
            return found[1]
        cls = PROXY_TYPES.get(type(value))
        if cls is not None:                         # a job or a task met for the first time
            return self.keep(value, make(cls, value, self))
        if isinstance(value, SCALARS):
            return value
        if isinstance(value, (Sealed, DecisionView)):
            return value
        if isinstance(value, tuple):
            if hasattr(value, "_fields"):           # a named tuple: the same type
                return NEW_TUPLE(type(value), [self.wrap(v) for v in value])
            if all(isinstance(v, SCALARS) for v in value):
                return value
            return tuple([self.wrap(v) for v in value])
        if isinstance(value, list):
            return make(SeqView, value, self)
        if isinstance(value, dict):
            return make(MapView, value, self)
        if isinstance(value, np.ndarray):
            out = value.copy()
            out.flags.writeable = False
            return out
        if isinstance(value, (bytearray, memoryview)):
            return bytes(value)
        if isinstance(value, (set, frozenset)):
            return frozenset([self.wrap(v) for v in value])
        return self.keep(value, make(ReadOnly, value, self))

    def keep(self, value: Any, proxy: Any) -> Any:
        """Remember ``proxy`` as ``value``'s (holding ``value``: its id stays its own)."""
        self.proxies[id(value)] = (value, proxy)
        return proxy


def make(cls: Any, target: Any, guard: Guard) -> Any:
    """A new ``cls`` proxy of ``target`` (the slots set from outside: a proxy has no
    ``__init__`` a policy could call again)."""
    proxy = object.__new__(cls)
    set_target, set_guard = HIDDEN_SETTERS[cls]
    set_target(proxy, target)
    set_guard(proxy, guard)
    filler = FILLERS.get(cls)
    if filler is not None:
        values, setters = filler
        for set_slot, value in zip(setters, values(target), strict=True):
            set_slot(proxy, value)
    return proxy


__all__ = ["Guard", "make"]
