"""The world as a policy process sees it: copies of what the harness's view shows, fetched as
the policy reads them (the policy-process side of :mod:`mrsched_gym.policy.process`).

A policy in its own process gets a :class:`CopiedView`: the names and fields of the
:class:`~mrsched_gym.sim.view.ClusterView` contract as the read-only view in the harness offers
them (:mod:`mrsched_gym.policy.readonly`): a policy file written for it runs unchanged.

* the decision (``view.decision``, ``view.job``, ``view.candidates``...) comes with each
  decision, its candidates the simulator's named tuples (``isinstance(d, Decision)`` holds);
* a job or a task is a read-only proxy (``isinstance(job, Job)`` holds, the same job is the same
  proxy within an episode, a write raises :class:`~mrsched_gym.policy.proxy_base.ReadOnlyError`);
  its fields set at its making come with it, the others are fetched on first read in a decision
  (all of a job's or a task's number fields in one round trip) and kept until the next one;
* the view's other names are fetched on first read in a decision (those fixed for the episode,
  :data:`EPISODE_NAMES`, once per episode; the two lists that only grow, ``jobs`` and
  ``task_log``, by their new items only);
* lists come as tuples, dicts as read-only mappings, arrays as read-only copies.

Nothing here reaches the harness's objects: every value is a copy the harness sent.
"""

from __future__ import annotations

import pickle
import socket
import types
from collections.abc import Callable
from typing import Any

import numpy as np

from mrsched_gym.policy import channel
from mrsched_gym.policy.proxies import DecisionView
from mrsched_gym.policy.proxy_base import (
    FROZEN_FIELDS,
    MUTATORS,
    SCALAR_FIELDS,
    ReadOnlyError,
    Sealed,
    absent,
    hidden,
    hide_slots,
)
from mrsched_gym.sim.decision import (
    AdmitCandidate,
    DecisionKind,
    PreemptCandidate,
    Primitive,
    ScheduleCandidate,
    SpeculateCandidate,
)
from mrsched_gym.sim.state import Job, Task
from mrsched_gym.sim.view import ClusterView

#: What a policy's view may read: the names of the ClusterView protocol.
VIEW_NAMES = frozenset(n for n in vars(ClusterView) if not n.startswith("_"))
#: The view's names fixed for an episode (fetched once per episode).
EPISODE_NAMES = frozenset({"K", "scenario", "n_nodes", "slots_mode", "map_scope", "rack",
                           "speed", "accel", "accel_mult", "shared", "cores", "mem_gb",
                           "disk_mb_s", "avail_f", "forecast_f", "node_forecast"})
#: The view's lists that only grow during an episode (fetched by their new items).
GROWING = frozenset({"jobs", "task_log"})
#: The view's methods.
VIEW_METHODS = frozenset({"availability_now", "disk_load", "forecast_window"})
#: The errors the harness may answer a read with, re-raised here as the same type.
ERRORS: dict[str, type[Exception]] = {
    "AttributeError": AttributeError, "ReadOnlyError": ReadOnlyError, "TypeError": TypeError,
    "ValueError": ValueError, "IndexError": IndexError, "KeyError": KeyError,
    "ZeroDivisionError": ZeroDivisionError, "OverflowError": OverflowError,
}


class Link:
    """The policy process's end of the channel, and what it keeps of the world: the proxies of
    the episode (by handle), the values read in this decision, the episode's fixed values.

    Args:
        sock: The channel.
    """

    #: The link of this process (one policy per process), read by :func:`materialize`.
    current: Link | None = None

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.reader = channel.Reader(sock)
        self.proxies: dict[int, Any] = {}
        self.candidates: dict[tuple[Any, ...], Any] = {}
        #: The handles of the decision's job and its candidates' jobs and tasks.
        self.batch: list[int] = []
        self.values: dict[tuple[int, str], Any] = {}
        self.episode: dict[str, Any] = {}
        self.grown: dict[str, tuple[Any, ...]] = {}
        Link.current = self

    def new_episode(self) -> None:
        """Forget the last episode's objects and values."""
        self.proxies.clear()
        self.candidates.clear()
        self.values.clear()
        self.episode.clear()
        self.grown.clear()

    def new_decision(self) -> None:
        """Forget the values read in the last decision."""
        self.values.clear()

    def send(self, message: list[Any]) -> None:
        """Send a message to the harness."""
        channel.send_frame(self.sock, channel.encode(message))

    def receive(self) -> Any:
        """The next message from the harness (a pickle: the harness is trusted here)."""
        return pickle.loads(self.reader.frame())  # noqa: S301 - from the harness

    def ask(self, message: list[Any]) -> Any:
        """Send a request and return the harness's answer (or raise the error it answers)."""
        self.send(message)
        reply = self.receive()
        if reply[0] == "value":
            return reply[1]
        if reply[0] == "error":
            raise ERRORS.get(reply[1], AttributeError)(reply[2])
        raise channel.ChannelError(f"unexpected reply {reply[0]!r}")

    def get(self, handle: int, name: str) -> Any:
        """``name`` of the object ``handle`` (0: the view) in this decision."""
        key = (handle, name)
        values = self.values
        if key in values:
            return values[key]
        value = values[key] = self.ask(["get", handle, name])
        return value

    def scalar(self, handle: int, name: str) -> Any:
        """A number field of a job or a task: all of its number fields come in one request,
        with those of the decision's other jobs and tasks (read together, as a rule)."""
        key = (handle, "")
        got = self.values.get(key)
        if got is None:
            batch = self.batch if handle in self.batch else [handle]
            for h, fields in self.ask(["scalars", batch]).items():
                self.values[h, ""] = fields
            got = self.values[key]
        return got[name]


def materialize(kind: str, handle: int, frozen: tuple[Any, ...] | None) -> Any:
    """The proxy of the job (``kind`` ``"J"``) or task (``"T"``) ``handle``, made on first sight
    with its fixed fields ``frozen`` (what a harness's reference unpickles to)."""
    link = Link.current
    assert link is not None
    proxy = link.proxies.get(handle)
    if proxy is None:
        cls = REMOTE_TYPES[kind]
        proxy = object.__new__(cls)
        SET_HANDLE[cls](proxy, handle)
        if frozen is not None:
            for set_slot, value in zip(FROZEN_SETTERS[cls], frozen, strict=True):
                set_slot(proxy, value)
        link.proxies[handle] = proxy
    return proxy


#: The candidate types, by the code a decision's copy names them with, and how each field
#: comes: ``"J"`` a job's handle, ``"T"`` a task's, else the type an ``int`` becomes.
CANDIDATE_TYPES: tuple[tuple[type, tuple[Any, ...]], ...] = (
    (ScheduleCandidate, ("J", int, int)),
    (AdmitCandidate, ("J",)),
    (PreemptCandidate, ("T", Primitive)),
    (SpeculateCandidate, ("T",)),
)
CANDIDATE_CODES: dict[type, int] = {cls: i for i, (cls, _) in enumerate(CANDIDATE_TYPES)}
KINDS_BY_VALUE = tuple(DecisionKind)


def candidate(link: Link, code: tuple[Any, ...]) -> Any:
    """The candidate a decision's copy encodes as ``code`` (kept by value for the episode)."""
    made = link.candidates.get(code)
    if made is None:
        cls, fields = CANDIDATE_TYPES[code[0]]
        proxies = link.proxies
        made = link.candidates[code] = tuple.__new__(cls, [
            proxies[v] if how == "J" or how == "T" else how(v)
            for how, v in zip(fields, code[1:], strict=True)])
    return made


def decision_of(link: Link, frame: tuple[Any, ...]) -> DecisionView:
    """The decision a harness's copy (:meth:`~mrsched_gym.policy.serving.WorldServer.decision`)
    stands for, as the in-process view gives it (a
    :class:`~mrsched_gym.policy.proxies.DecisionView`)."""
    kind, time_s, node, job, codes, fresh = frame
    for made in fresh:
        materialize(*made)
    look = link.candidates.get
    candidates = tuple([look(c) or candidate(link, c) for c in codes])
    batch = [c[1] for c in codes]
    if job >= 0:
        batch.append(job)
    link.batch = batch
    return tuple.__new__(DecisionView, (KINDS_BY_VALUE[kind], time_s, node,
                                        None if job < 0 else link.proxies[job], candidates))


def readonly_array(array: np.ndarray) -> np.ndarray:
    """``array``, read-only (what a harness's array unpickles to)."""
    array.flags.writeable = False
    return array


def readonly_map(items: dict[Any, Any]) -> types.MappingProxyType[Any, Any]:
    """``items`` as a read-only mapping (what a harness's dict unpickles to)."""
    return types.MappingProxyType(items)


@hide_slots
class RemoteProxy(Sealed):
    """A job or a task of the harness's simulator, as a policy process reads it."""

    __slots__ = ("handle",)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and HANDLE(other) == HANDLE(self)

    def __hash__(self) -> int:
        return hash((type(self).__name__, HANDLE(self)))

    def __repr__(self) -> str:
        return f"<read-only {self.__class__.__name__} {HANDLE(self)}>"

    def __reduce__(self) -> Any:
        raise TypeError("a read-only proxy of the simulator's state cannot be pickled or copied")


HANDLE = RemoteProxy.__dict__[hidden("handle")].__get__


class RemoteMethod:
    """A method of a job or a task, called in the harness (its arguments: numbers, strings,
    lists of them)."""

    __slots__ = ("handle", "name")

    def __init__(self, handle: int, name: str) -> None:
        self.handle = handle
        self.name = name

    def __call__(self, *args: Any) -> Any:
        """The method's answer, computed in the harness (a copy)."""
        link = Link.current
        assert link is not None
        return link.ask(["call", self.handle, self.name, [plain(a) for a in args]])


def plain(value: Any) -> Any:
    """An argument of a remote call as JSON can carry it (numpy numbers as Python's)."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


def remote_type(cls: type) -> type:
    """The proxy type of ``cls``'s objects in a policy process (see the module docstring)."""
    frozen = FROZEN_FIELDS.get(cls, ())
    scalars = frozenset(SCALAR_FIELDS.get(cls, ())) - frozenset(frozen)
    mutators = MUTATORS.get(cls, frozenset())
    namespace: dict[str, Any] = {"__slots__": frozen, "__class__": property(lambda self: cls),
                                 "__doc__": f"A read-only {cls.__name__}."}

    def refused(name: str) -> Callable[[Any], Any]:
        def read(self: Any) -> Any:
            raise ReadOnlyError(f"cannot call {name}() of a {cls.__name__}: it changes the "
                                f"simulator's state, which is its own")
        return read

    def scalar(name: str) -> Callable[[Any], Any]:
        def read(self: Any) -> Any:
            link = Link.current
            assert link is not None
            return link.scalar(HANDLE(self), name)
        return read

    def method(name: str) -> Callable[[Any], Any]:
        return lambda self: RemoteMethod(HANDLE(self), name)

    def field(name: str) -> Callable[[Any], Any]:
        def read(self: Any) -> Any:
            link = Link.current
            assert link is not None
            return link.get(HANDLE(self), name)
        return read

    for name in dir(cls):
        if name.startswith("_") or name in frozen:
            continue
        member = getattr(cls, name)
        if name in mutators:
            namespace[name] = property(refused(name))
        elif name in scalars:
            namespace[name] = property(scalar(name))
        elif callable(member) and not isinstance(member, type):
            namespace[name] = property(method(name))
        else:
            namespace[name] = property(field(name))
    namespace["__getattr__"] = lambda self, name: (_ for _ in ()).throw(absent(cls.__name__,
                                                                               name))
    return type(f"ReadOnly{cls.__name__}", (RemoteProxy,), namespace)


#: The proxy types of jobs and tasks, by the harness's reference kind.
REMOTE_TYPES: dict[str, type] = {"J": remote_type(Job), "T": remote_type(Task)}
SET_HANDLE = {cls: getattr(cls, hidden("handle")).__set__ for cls in REMOTE_TYPES.values()}
FROZEN_SETTERS = {cls: tuple(vars(cls)[n].__set__ for n in vars(cls)["__slots__"])
                  for cls in REMOTE_TYPES.values()}


@hide_slots
class CopiedView(Sealed):
    """The :class:`~mrsched_gym.sim.view.ClusterView` of the harness's simulator, in a policy
    process (see the module docstring). Made by the policy process, one per episode."""

    __slots__ = ("link", "decision")

    def __getattr__(self, name: str) -> Any:
        raise AttributeError(f"a policy's view has no {name!r}: it offers what "
                             f"mrsched_gym.sim.view.ClusterView lists")

    def __dir__(self) -> list[str]:
        return sorted(VIEW_NAMES)

    def __repr__(self) -> str:
        return "<read-only cluster view (a copy, in the policy's process)>"

    def __reduce__(self) -> Any:
        raise TypeError("a policy's view of the simulator cannot be pickled or copied")


VIEW_LINK = CopiedView.__dict__[hidden("link")].__get__
VIEW_DECISION = CopiedView.__dict__[hidden("decision")].__get__
SET_VIEW_LINK = CopiedView.__dict__[hidden("link")].__set__
SET_VIEW_DECISION = CopiedView.__dict__[hidden("decision")].__set__


def view_member(name: str) -> Any:
    """What :class:`CopiedView` offers for the protocol's ``name``."""
    doc = getattr(vars(ClusterView)[name], "__doc__", None)
    if name == "decision":
        return property(VIEW_DECISION, doc=doc)
    if name in ("kind", "node", "job", "candidates"):
        return property(lambda view: getattr(VIEW_DECISION(view), name), doc=doc)
    if name in VIEW_METHODS:
        def method(view: CopiedView, *args: Any) -> Any:
            return VIEW_LINK(view).ask(["call", 0, name, [plain(a) for a in args]])
        method.__name__, method.__doc__ = name, doc
        return method
    if name in EPISODE_NAMES:
        def fixed(view: CopiedView) -> Any:
            episode = VIEW_LINK(view).episode
            if name not in episode:
                episode[name] = VIEW_LINK(view).ask(["get", 0, name])
            return episode[name]
        return property(fixed, doc=doc)
    if name in GROWING:
        def grown(view: CopiedView) -> Any:
            link = VIEW_LINK(view)
            key = (0, name)
            if key not in link.values:
                known = link.grown.get(name, ())
                new = link.ask(["tail", name, len(known)])
                link.grown[name] = link.values[key] = known + new if new else known
            return link.values[key]
        return property(grown, doc=doc)
    return property(lambda view: VIEW_LINK(view).get(0, name), doc=doc)


for _name in sorted(VIEW_NAMES):
    setattr(CopiedView, _name, view_member(_name))
del _name


def new_view(link: Link) -> CopiedView:
    """A view for a new episode."""
    view = object.__new__(CopiedView)
    SET_VIEW_LINK(view, link)
    SET_VIEW_DECISION(view, None)
    return view


def set_decision(view: CopiedView, decision: DecisionView | None) -> None:
    """The view's pending decision (one per decision)."""
    SET_VIEW_DECISION(view, decision)


__all__ = ["CANDIDATE_CODES", "CANDIDATE_TYPES", "EPISODE_NAMES", "GROWING", "KINDS_BY_VALUE",
           "VIEW_METHODS", "VIEW_NAMES", "CopiedView", "Link", "RemoteMethod", "RemoteProxy",
           "candidate", "decision_of", "materialize", "new_view", "readonly_array", "readonly_map",
           "remote_type", "set_decision"]
