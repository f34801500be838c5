"""Read-only proxies of the simulator's objects, the parts of :mod:`mrsched_gym.policy.readonly`'s
guarded view (jobs, tasks, lists, dicts, arrays).

What a proxy holds (the live object, the episode's :class:`Guard`) sits in slots whose keys are
not identifiers and are salted per process (:func:`hidden`): no ``proxy.name`` reaches them,
and the private names a policy might try (``_target``) raise ``AttributeError``. The proxy
types override no ``__getattribute__``: a read of a field that holds a number or a string (a
job's ``deadline_s``, ``jid``...) is a C-level ``property(operator.attrgetter(...))``, no
Python frame; any other name of a job or a task is a property that wraps the value
(:meth:`Guard.wrap`), and an object of another class is a :class:`ReadOnly`, whose
``__getattr__`` does the same. Writes and deletes raise :class:`ReadOnlyError` naming the
attribute.
"""

from __future__ import annotations

import operator
from collections import namedtuple
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from mrsched_gym.policy.proxy_base import (
    FROZEN_FIELDS,
    MUTATORS,
    SCALAR_FIELDS,
    Explained,
    ReadOnlyError,
    Sealed,
    absent,
    hidden,
    hide_slots,
    refuse,
)
from mrsched_gym.sim.decision import Decision


@hide_slots
class Proxy(Sealed):
    """A read-only proxy of one object (a job, a task, a config section...): reads work as on
    the object (``isinstance(proxy, Job)`` holds), values wrapped by :meth:`Guard.wrap`;
    methods that change it (:data:`MUTATORS`) are refused. Made by :meth:`Guard.wrap` only:
    :class:`ReadOnly`, or for the classes of :data:`SCALAR_FIELDS` a type of their own
    (:func:`proxy_type`)."""

    __slots__ = ("target", "guard")

    def __dir__(self) -> list[str]:
        return [n for n in dir(TARGET(self)) if not n.startswith("_")]

    def __eq__(self, other: object) -> bool:
        return bool(TARGET(self) == unwrap(other))

    def __hash__(self) -> int:
        return hash(TARGET(self))

    def __repr__(self) -> str:
        return f"<read-only {TARGET(self)!r}>"

    def __reduce__(self) -> Any:
        raise TypeError("a read-only proxy of the simulator's state cannot be pickled or copied")


TARGET = Proxy.__dict__[hidden("target")].__get__
GUARD = Proxy.__dict__[hidden("guard")].__get__


def read(proxy: Proxy, name: str) -> Any:
    """``proxy.name`` read from its object: wrapped, or a method as a :class:`ReadOnlyMethod`."""
    target = TARGET(proxy)
    value = getattr(target, name)
    guard = GUARD(proxy)
    if callable(value) and not isinstance(value, type):
        if name in MUTATORS.get(type(target), ()):
            raise ReadOnlyError(f"cannot call {name}() of a {type(target).__name__}: it "
                                f"changes the simulator's state, which is its own")
        method = object.__new__(ReadOnlyMethod)
        SET_METHOD_PROXY(method, proxy)
        SET_METHOD_NAME(method, name)
        return method
    return guard.wrap(value)


@hide_slots
class ReadOnlyMethod(Explained):
    """A method of a simulator object as a policy may call it (:func:`read`): its arguments
    unwrapped, its result wrapped. It holds the proxy and the method's name, never the bound
    method (whose ``__self__`` is the live object): the method is looked up at each call."""

    __slots__ = ("proxy", "name")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """The live method's answer, wrapped (proxies passed in are unwrapped)."""
        proxy = METHOD_PROXY(self)
        method = getattr(TARGET(proxy), METHOD_NAME(self))
        return GUARD(proxy).wrap(method(*map(unwrap, args),
                                        **{k: unwrap(v) for k, v in kwargs.items()}))

    def __repr__(self) -> str:
        return f"<read-only method {METHOD_NAME(self)} of {METHOD_PROXY(self)!r}>"

    def __reduce__(self) -> Any:
        raise TypeError("a read-only method of the simulator's state cannot be pickled or copied")


METHOD_PROXY = ReadOnlyMethod.__dict__[hidden("proxy")].__get__
METHOD_NAME = ReadOnlyMethod.__dict__[hidden("name")].__get__
SET_METHOD_PROXY = ReadOnlyMethod.__dict__[hidden("proxy")].__set__
SET_METHOD_NAME = ReadOnlyMethod.__dict__[hidden("name")].__set__


class ReadOnly(Proxy, Explained):
    """The proxy of an object of any class: every read goes through ``__getattr__``."""

    __slots__ = ()

    @property  # type: ignore[misc]
    def __class__(self) -> type:
        return type(TARGET(self))

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise absent(type(TARGET(self)).__name__, name)
        return read(self, name)


def proxy_type(cls: type) -> type:
    """The proxy type of ``cls``'s objects: a slot per field of :data:`FROZEN_FIELDS` (a copy
    made with the proxy), a property per other public name of ``cls`` (a C-level
    ``operator.attrgetter`` for the fields of :data:`SCALAR_FIELDS`, :func:`read` for the
    others), no ``__getattr__``, and ``isinstance(proxy, cls)`` answered without a look-up."""
    frozen = FROZEN_FIELDS.get(cls, ())
    namespace: dict[str, Any] = {"__slots__": frozen, "__class__": property(lambda self: cls),
                                 "__doc__": f"A read-only {cls.__name__}."}
    scalars = SCALAR_FIELDS.get(cls, ())
    for name in dir(cls):
        if name.startswith("_") or name in frozen:
            continue
        if name in scalars:
            namespace[name] = property(operator.attrgetter(f"{hidden('target')}.{name}"))
        else:
            namespace[name] = property(lambda self, name=name: read(self, name))
    return type(f"ReadOnly{cls.__name__}", (Proxy,), namespace)


#: Makes a tuple subclass's instance (a named tuple, a DecisionView) from a tuple in one C call.
NEW_TUPLE = tuple.__new__
#: The proxy type of each class with its own (built once); any other class gets ReadOnly.
PROXY_TYPES: dict[type, type] = {cls: proxy_type(cls) for cls in SCALAR_FIELDS}
#: For each proxy type with frozen fields: a getter of their values (one C call) and the
#: setters of its slots, in the same order.
FILLERS: dict[type, tuple[Any, tuple[Any, ...]]] = {
    PROXY_TYPES[cls]: (operator.attrgetter(*names),
                       tuple(vars(PROXY_TYPES[cls])[n].__set__ for n in names))
    for cls, names in FROZEN_FIELDS.items() if len(names) > 1
}


def unwrap(value: Any) -> Any:
    """The object behind a proxy (for comparisons and calls), else ``value``."""
    return TARGET(value) if isinstance(value, Proxy) else value


class NamedCache(dict[Any, Any]):
    """A decision's candidates (named tuples) as a policy gets them, made on first sight: the
    same type holding wrapped items. Keyed by value: the simulator offers the same tuples
    again (equal ones share one entry; the simulator's candidate types never hold equal
    values), so ``tuple(map(cache.__getitem__, candidates))`` runs in C once all were met."""

    __slots__ = ("guard",)

    def __init__(self, guard: Any) -> None:
        super().__init__()
        self.guard = guard

    def __missing__(self, key: Any) -> Any:
        wrapped = self.guard.wrap(key)
        self[key] = wrapped
        return wrapped


@hide_slots
class SeqView(Explained, Sequence[Any]):
    """A read-only, live view of a list (items wrapped as they are read)."""

    __slots__ = ("target", "guard")

    def __getitem__(self, i: Any) -> Any:
        wrap = SEQ_GUARD(self).wrap
        if isinstance(i, slice):
            return tuple(map(wrap, SEQ_ITEMS(self)[i]))
        return wrap(SEQ_ITEMS(self)[i])

    def __len__(self) -> int:
        return len(SEQ_ITEMS(self))

    def __iter__(self) -> Iterator[Any]:
        return map(SEQ_GUARD(self).wrap, tuple(SEQ_ITEMS(self)))

    def __contains__(self, value: object) -> bool:
        return unwrap(value) in SEQ_ITEMS(self)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, SeqView):
            return bool(SEQ_ITEMS(self) == SEQ_ITEMS(other))
        return isinstance(other, (list, tuple)) and list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        return np.array(SEQ_ITEMS(self), dtype=dtype)

    def __dir__(self) -> list[str]:
        return ["count", "index"]

    def __repr__(self) -> str:
        return f"SeqView({SEQ_ITEMS(self)!r})"

    def __reduce__(self) -> Any:
        return list, (list(self),)


SEQ_ITEMS = SeqView.__dict__[hidden("target")].__get__
SEQ_GUARD = SeqView.__dict__[hidden("guard")].__get__


@hide_slots
class MapView(Explained, Mapping[Any, Any]):
    """A read-only, live view of a dict (values wrapped as they are read)."""

    __slots__ = ("target", "guard")

    def __getitem__(self, key: Any) -> Any:
        return MAP_GUARD(self).wrap(MAP_ITEMS(self)[key])

    def __len__(self) -> int:
        return len(MAP_ITEMS(self))

    def __iter__(self) -> Iterator[Any]:
        return iter(tuple(MAP_ITEMS(self)))

    def __contains__(self, key: object) -> bool:
        return key in MAP_ITEMS(self)

    def __dir__(self) -> list[str]:
        return ["get", "items", "keys", "values"]

    def __repr__(self) -> str:
        return f"MapView({MAP_ITEMS(self)!r})"

    def __reduce__(self) -> Any:
        return dict, (dict(self.items()),)


MAP_ITEMS = MapView.__dict__[hidden("target")].__get__
MAP_GUARD = MapView.__dict__[hidden("guard")].__get__
#: The setters of the two hidden slots (target, guard) of each type :func:`make` makes.
HIDDEN_SETTERS: dict[type, tuple[Any, Any]] = {
    cls: (getattr(cls, hidden("target")).__set__, getattr(cls, hidden("guard")).__set__)
    for cls in (*PROXY_TYPES.values(), ReadOnly, SeqView, MapView)
}


#: The fields of a decision as a named tuple (read by C-level getters).
DecisionFields = namedtuple("DecisionFields", Decision.__match_args__)  # noqa: PYI024


class DecisionView(DecisionFields):
    """A :class:`~mrsched_gym.sim.decision.Decision` as a policy gets it: the same fields (its
    job and candidates wrapped), read-only, ``isinstance(d, Decision)`` holds. A named tuple
    of its fields underneath (made in one C call per decision); made by
    :func:`decision_view` only.

    Attributes:
        kind: What it asks.
        time_s: Simulated time it was posed at.
        node: The node it concerns (or -1).
        job: Its job (read-only), or ``None``.
        candidates: Its candidates (read-only).
    """

    __slots__ = ()
    __match_args__ = Decision.__match_args__

    @property  # type: ignore[misc]
    def __class__(self) -> type:
        return Decision

    def as_tuple(self) -> tuple[Any, ...]:
        """The fields, in order (as :meth:`Decision.as_tuple`)."""
        return tuple(self)

    def __setattr__(self, name: str, value: Any) -> None:
        raise refuse("the decision", name)

    def __delattr__(self, name: str) -> None:
        raise refuse("the decision", name)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Decision):
            return self.as_tuple() == other.as_tuple()
        return NotImplemented

    def __ne__(self, other: object) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    __hash__ = tuple.__hash__

    def __repr__(self) -> str:
        return (f"Decision(kind={self.kind!r}, time_s={self.time_s!r}, node={self.node!r}, "
                f"job={self.job!r}, candidates={self.candidates!r})")

    def __reduce__(self) -> Any:
        raise TypeError("a read-only decision cannot be pickled or copied")


def decision_view(guard: Any, decision: Decision) -> DecisionView:
    """``decision`` (the simulator's pending one) as a policy gets it, made once per decision:
    its job and candidates wrapped by ``guard`` (a :class:`~mrsched_gym.policy.guard.Guard`)."""
    if decision is guard.seen:
        return guard.made  # type: ignore[no-any-return]
    candidates = decision.candidates
    if candidates:
        candidates = tuple(map(guard.candidate, candidates))
    job = decision.job
    made = NEW_TUPLE(DecisionView, (decision.kind, decision.time_s, decision.node,
                                    job if job is None else guard.wrap(job), candidates))
    guard.seen = decision
    guard.made = made
    return made

