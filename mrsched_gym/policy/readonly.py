"""The world as an outside policy sees it: read-only proxies of the simulator's live state.

A baseline of this package decides from the simulator itself (typed as its read-only
:class:`~mrsched_gym.sim.view.ClusterView`; mypy holds it to that). An outside policy (a policy
file, a policy object, a :class:`~mrsched_gym.baselines.base.Scheduler` subclass of its own) is
code the harness did not write, so it gets :class:`GuardedView` instead: the same names, every
value read-only or a copy.

* The view exposes exactly the :class:`~mrsched_gym.sim.view.ClusterView` protocol; any other
  name of the simulator is refused (``AttributeError``).
* Jobs, tasks and other objects come as read-only proxies (:mod:`mrsched_gym.policy.proxies`):
  reading an attribute works as on the object (``isinstance(job, Job)`` holds; the same job is
  the same proxy within an episode), setting or deleting one raises :class:`ReadOnlyError`
  naming it, and the methods that change a job (``take_map``, ``requeue_map``,
  ``build_locality``) are refused; no attribute reaches the live object.
* Lists come as :class:`~mrsched_gym.policy.proxies.SeqView` (a read-only, live ``Sequence``), dicts
  as :class:`~mrsched_gym.policy.proxies.MapView` (a read-only ``Mapping``), ``bytearray`` as
  ``bytes``, sets as ``frozenset``, and numpy arrays as read-only copies (an array fixed for
  the episode is copied once per episode).
* The :class:`~mrsched_gym.sim.decision.Decision` comes as
  :class:`~mrsched_gym.policy.proxies.DecisionView`: its candidates are the same named tuples
  holding proxies.

What it costs: a read of a number through a proxy or the view is a C-level getter (no Python
frame); a decision's view is made in C from cached candidates (``docs/notes/speed.md``).

This guards against a policy that writes to what it is handed (by mistake or to game a
leaderboard); it is no sandbox: Python code in the same process that digs into the interpreter
(``gc``, frames, the proxy types' hidden slot descriptors) can still reach the simulator.
Run code you do not trust in a container.
"""

from __future__ import annotations

import operator
from typing import Any

from mrsched_gym.policy.guard import Guard
from mrsched_gym.policy.policy_failures import reraise
from mrsched_gym.policy.proxies import (
    DecisionView,
    MapView,
    ReadOnly,
    SeqView,
    decision_view,
    unwrap,
)
from mrsched_gym.policy.proxy_base import Explained, ReadOnlyError, hidden, hide_slots, refuse
from mrsched_gym.sim.view import ClusterView

#: What a policy's view may read: the names of the ClusterView protocol.
VIEW_NAMES = frozenset(n for n in vars(ClusterView) if not n.startswith("_"))
#: The view's arrays that are drawn at reset and fixed for the episode (copied once).
EPISODE_ARRAYS = frozenset({"avail_f", "forecast_f", "node_forecast"})
#: Return annotations of the protocol's properties that name an immutable scalar.
SCALAR_ANNOTATIONS = frozenset({"int", "float", "bool", "str", "DecisionKind"})


class EpisodeConstants(Explained):
    """The view's values fixed for an episode, held in slots of its own (a read is a slot
    read), set by :func:`reset_view`.

    Attributes:
        K: Candidate slots; action ``K`` is skip.
    """

    __slots__ = ("K",)


#: The protocol's names the view holds as episode constants (a copy per episode).
CONSTANTS = EpisodeConstants.__slots__
SET_CONSTANTS = tuple(vars(EpisodeConstants)[n].__set__ for n in CONSTANTS)
GET_CONSTANTS = operator.attrgetter(*CONSTANTS) if len(CONSTANTS) > 1 else (
    lambda sim: (getattr(sim, CONSTANTS[0]),))


@hide_slots
class GuardedView(EpisodeConstants):
    """The :class:`~mrsched_gym.sim.view.ClusterView` of a simulator for an outside policy
    (see the module docstring); one per policy, :func:`reset_view` at each episode.

    Args:
        sim: The simulator (or its view).
    """

    __slots__ = ("guard",)

    def __init__(self, sim: ClusterView) -> None:
        reset_view(self, sim)

    def __setattr__(self, name: str, value: Any) -> None:
        raise refuse("the cluster view", name)

    def __delattr__(self, name: str) -> None:
        raise refuse("the cluster view", name)

    def __getattr__(self, name: str) -> Any:
        raise AttributeError(f"a policy's view has no {name!r}: it offers what "
                             f"mrsched_gym.sim.view.ClusterView lists")

    def __dir__(self) -> list[str]:
        return sorted(VIEW_NAMES)

    def __repr__(self) -> str:
        return f"<read-only cluster view at t={guard_of(self).sim.now:.1f} s>"

    def __reduce__(self) -> Any:
        raise TypeError("a policy's view of the simulator cannot be pickled or copied")


#: The :class:`~mrsched_gym.policy.guard.Guard` of a view (for the harness; no policy reaches it).
guard_of = GuardedView.__dict__[hidden("guard")].__get__


def reset_view(view: GuardedView, sim: ClusterView) -> None:
    """Point ``view`` at ``sim`` (a new episode): the proxies of the last one are dropped and
    the episode's constants copied."""
    GuardedView.__dict__[hidden("guard")].__set__(view, Guard(sim))
    for set_slot, value in zip(SET_CONSTANTS, GET_CONSTANTS(sim), strict=True):
        set_slot(view, value)


def current_decision(view: GuardedView) -> DecisionView:
    """The pending decision, its job and candidates wrapped (one per decision)."""
    guard = guard_of(view)
    return decision_view(guard, guard.sim.decision)


def view_member(name: str) -> Any:
    """What ``GuardedView`` offers for the protocol's ``name``: a C-level getter for a scalar
    property (by its annotation), a wrapping getter for the others, a wrapping method for a
    method."""
    member = vars(ClusterView)[name]
    if name == "decision":
        return property(current_decision, doc=member.__doc__)
    if name in ("job", "candidates"):
        return property(lambda view: getattr(current_decision(view), name), doc=member.__doc__)
    if isinstance(member, property) or not callable(member):
        # a property (a getset descriptor once the compiled build has compiled the protocol)
        fget = getattr(member, "fget", None)
        if fget is not None and fget.__annotations__.get("return") in SCALAR_ANNOTATIONS:
            getter = operator.attrgetter(f"{hidden('guard')}.sim.{name}")
            return property(getter, doc=member.__doc__)
        if name in EPISODE_ARRAYS:
            def episode_array(view: GuardedView) -> Any:
                guard = guard_of(view)
                if name not in guard.arrays:
                    guard.arrays[name] = guard.wrap(getattr(guard.sim, name))
                return guard.arrays[name]
            return property(episode_array, doc=member.__doc__)
        return property(lambda view: guard_of(view).wrap(getattr(guard_of(view).sim, name)),
                        doc=member.__doc__)

    def method(view: GuardedView, *args: Any, **kwargs: Any) -> Any:
        guard = guard_of(view)
        return guard.wrap(getattr(guard.sim, name)(*args, **kwargs))
    method.__name__, method.__doc__ = name, member.__doc__
    return method


for _name in sorted(VIEW_NAMES - set(CONSTANTS)):
    setattr(GuardedView, _name, view_member(_name))
del _name


class GuardedScheduler:
    """A :class:`~mrsched_gym.baselines.base.Scheduler` subclass of another package (an outside
    policy) as the harness runs it: ``reset`` and ``decide`` get a :class:`GuardedView`, and
    anything they raise fails the episode naming the policy and the phase
    (:mod:`mrsched_gym.policy.policy_failures`).

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
        reset_view(self.view, sim)
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
           "ReadOnlyError", "SeqView", "current_decision", "decision_view", "guard_of",
           "reset_view", "unwrap"]
