"""The policy contract: what an outside policy implements to run in the harness.

Any of these objects runs in :func:`~mrsched_gym.evaluate.run_episode` and
:func:`~mrsched_gym.evaluate.evaluate` beside the baselines' names, and on the command line as
``--policies path/to/file.py:Class`` or ``package.module:Class``
(:mod:`mrsched_gym.policy.policy_files`):

* a **rule-based policy** (:class:`RulePolicy`): ``decide(decision, view) -> int``, given the
  pending :class:`~mrsched_gym.sim.decision.Decision` and the read-only
  :class:`~mrsched_gym.sim.view.ClusterView` of the simulator (candidate ``i`` is action
  ``i``; action ``view.K`` is skip);
* an **observation-based policy** (:class:`ObservationPolicy`): ``act(obs, mask) -> int``,
  given the env's observation and its action mask (``env.unwrapped.action_masks()``);
* a **plain callable** ``(obs, mask) -> int`` (:class:`ObservationFunction`);
* a **stable-baselines3 / sb3-contrib model** (:class:`ModelPolicy`, anything with
  ``predict``): deterministic actions; a model whose ``predict`` takes ``action_masks``
  (MaskablePPO) gets the env's mask;
* a :class:`~mrsched_gym.baselines.base.Scheduler` subclass (the baselines' own interface,
  ``decide(view)``).

Each may have a ``reset(view, seed)`` method (:class:`Resettable`): it is called after every env
reset, before the first decision, with the new episode's :class:`ClusterView` and its seed.

:func:`as_policy` turns any of these into what the harness runs; :func:`policy_label` names it
(its ``name`` attribute, else its class name).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias, runtime_checkable

import numpy as np

from mrsched_gym.errors import InputTypeError
from mrsched_gym.policy.policy_actions import PolicyActionError, check_action
from mrsched_gym.policy.policy_failures import reraise
from mrsched_gym.policy.readonly import GuardedView
from mrsched_gym.policy.rule_adapter import RuleAdapter

if TYPE_CHECKING:
    from mrsched_gym.sim.decision import Decision
    from mrsched_gym.sim.view import ClusterView


# ---------------------------------------------------------------------- the protocols
@runtime_checkable
class RulePolicy(Protocol):
    """A rule-based policy: decides from the pending decision and the cluster view."""

    def decide(self, decision: Decision, view: ClusterView) -> int:
        """Return the action for ``decision``.

        Args:
            decision: The pending decision (``view.decision``): its ``kind``, ``time_s``,
                ``node``, ``job`` and ``candidates``.
            view: The simulator as a read-only :class:`~mrsched_gym.sim.view.ClusterView`
                (read it, never mutate it).

        Returns:
            A candidate index ``i`` (action ``i``) or ``view.K`` (skip).
        """


@runtime_checkable
class ObservationPolicy(Protocol):
    """An observation-based policy: acts on the env's observation and action mask."""

    def act(self, obs: dict[str, np.ndarray], mask: np.ndarray) -> int:
        """Return the action for ``obs``.

        Args:
            obs: The env's observation (its ``Dict`` space).
            mask: The env's action mask (``env.unwrapped.action_masks()``), ``K + 1`` bools.

        Returns:
            An action in ``0 .. K`` (``K`` is skip).
        """


@runtime_checkable
class ObservationFunction(Protocol):
    """A plain function ``(obs, mask) -> int``, as :meth:`ObservationPolicy.act`."""

    def __call__(self, obs: dict[str, np.ndarray], mask: np.ndarray) -> int:
        """Return the action for ``obs`` within ``mask``."""


@runtime_checkable
class ModelPolicy(Protocol):
    """A stable-baselines3 / sb3-contrib model (PPO, MaskablePPO, DQN, ...)."""

    def predict(self, observation: Any, state: Any = None, episode_start: Any = None,
                deterministic: bool = False) -> tuple[Any, Any]:
        """SB3's ``predict``; MaskablePPO's also takes ``action_masks``."""


@runtime_checkable
class Resettable(Protocol):
    """The optional ``reset`` of any policy kind."""

    def reset(self, view: ClusterView, seed: int | None = None) -> None:
        """Called after every env reset, before the first decision.

        Args:
            view: The new episode's :class:`~mrsched_gym.sim.view.ClusterView`.
            seed: The episode's seed (seed your own random generator from it for
                reproducible episodes).
        """


#: The one verdict on a trained model's illegal actions (an SB3 model that ignores the mask,
#: as plain PPO does): the env plays them as skip, as it did in training, and the records count
#: them (``invalid_actions``). A model object handed to ``evaluate`` (:class:`ModelAdapter`)
#: and an agent loaded by name (``agent:PATH``, whose class sets ``illegal_actions`` to this)
#: are treated alike. Rules and observation policies are held to the contract: an illegal
#: action fails their episode (:func:`~mrsched_gym.policy.policy_actions.check_action`).
ILLEGAL_AS_SKIP = "skip"

#: Anything :func:`as_policy` accepts.
PolicyLike: TypeAlias = RulePolicy | ObservationPolicy | ObservationFunction | ModelPolicy


# ---------------------------------------------------------------------- adapters
class ObservationAdapter:
    """An :class:`ObservationPolicy` or an :class:`ObservationFunction` as the harness runs it
    (``act(obs, mask)``, checked by :func:`check_action`, and ``reset``).

    Args:
        act: The ``act`` method or the function.
        name: Its label.
        reset: The policy's own ``reset(view, seed)``, if it has one.
    """

    def __init__(self, act: Callable[[dict[str, np.ndarray], np.ndarray], int],
                 name: str, reset: Callable[..., None] | None = None,
                 checked: bool = True) -> None:
        self.fn = act
        self.name = name
        self.reset_fn = reset
        #: False for a trained model (:data:`ILLEGAL_AS_SKIP`): its illegal actions go to the
        #: env, which plays them as skip and counts them (``invalid_actions``).
        self.checked = checked

    def reset(self, sim: ClusterView, seed: int | None = None) -> None:
        """The policy's own ``reset(view, seed)``, if it has one (given a read-only view)."""
        if self.reset_fn is not None:
            try:
                self.reset_fn(GuardedView(sim), seed=seed)
            except BaseException as e:              # noqa: BLE001 - reported, named
                reraise(self.name, "reset", e)

    def act(self, obs: dict[str, np.ndarray], mask: np.ndarray) -> int:
        """The function's action, checked against ``mask`` (skip, the last action, is always
        accepted, as ``step()`` accepts it). The policy gets a copy of the mask (the
        observation's arrays are fresh at every step)."""
        skip = len(mask) - 1
        try:
            action = self.fn(obs, mask.copy())
        except BaseException as e:                  # noqa: BLE001 - reported, named
            reraise(self.name, "decide", e)
        if not self.checked:
            return check_action(action, lambda a: a.bit_length() < 64, self.name,
                                lambda: "a decision (an action is a 64-bit integer)")
        return check_action(action,
                            lambda a: a == skip or (0 <= a < skip and bool(mask[a])), self.name,
                            lambda: f"a decision whose mask offers "
                            f"{np.flatnonzero(mask).tolist()} (skip {skip} is always accepted)")


class ModelAdapter:
    """An SB3 model as the harness runs it: ``model.predict(obs, deterministic=True)``, with
    ``action_masks=mask`` when its ``predict`` takes it (MaskablePPO).

    Args:
        model: The model.
        name: Its label.
    """

    def __init__(self, model: Any, name: str) -> None:
        self.model = model
        self.name = name
        self.masked = "action_masks" in inspect.signature(model.predict).parameters

    def reset(self, sim: ClusterView, seed: int | None = None) -> None:
        """Nothing to reset (deterministic actions; a recurrent model's state is not kept)."""

    def act(self, obs: dict[str, np.ndarray], mask: np.ndarray) -> int:
        """The model's deterministic action."""
        try:
            if self.masked:
                action, _ = self.model.predict(obs, deterministic=True,
                                               action_masks=mask.copy())
            else:
                action, _ = self.model.predict(obs, deterministic=True)
        except BaseException as e:                  # noqa: BLE001 - reported, named
            reraise(self.name, "decide", e)
        return int(np.asarray(action).reshape(-1)[0])

    def check_fits(self, space: Any, where: str) -> None:
        """Raise :class:`~mrsched_gym.errors.InputError` if the model was built for another
        observation space than ``space`` (that of the world ``where``)."""
        from mrsched_gym.errors import InputError
        own = getattr(self.model, "observation_space", None)
        if own is None:
            return
        shapes = {k: s.shape for k, s in getattr(own, "spaces", {}).items()} or own.shape
        theirs = {k: s.shape for k, s in getattr(space, "spaces", {}).items()} or space.shape
        if shapes != theirs:
            raise InputError(f"the model was built for observations {shapes}; {where} gives "
                             f"{theirs} (train it on that env, or run it on the env it was "
                             f"trained on)")


def policy_label(obj: Any) -> str:
    """The label of a policy object in records and tables: its ``name`` attribute, else its class
    name (a function: its ``__name__``). A :class:`~mrsched_gym.baselines.base.Scheduler`
    subclass that does not set ``name`` itself is labelled by its class name, not by the name it
    inherits.

    Raises:
        InputTypeError: ``name`` is not a non-empty string of at most :data:`MAX_LABEL`
            printable characters.
    """
    from mrsched_gym.baselines.base import Scheduler
    if isinstance(obj, Scheduler):
        own = "name" in vars(obj) or "name" in vars(type(obj))
        name = obj.name if own else type(obj).__name__
    elif inspect.isfunction(obj) or inspect.ismethod(obj):
        name = getattr(obj, "name", obj.__name__)
    else:
        name = getattr(obj, "name", type(obj).__name__)
    if not isinstance(name, str) or not name.strip():
        raise InputTypeError(f"policy {type(obj).__name__}: its name attribute must be a "
                             f"non-empty string, got {repr(name)[:80]}")
    if not name.isprintable() or len(name) > MAX_LABEL:
        raise InputTypeError(f"policy {type(obj).__name__}: its name attribute must be one line "
                             f"of at most {MAX_LABEL} printable characters (it labels table "
                             f"rows and files), got {repr(name)[:80]}")
    return name


#: The longest label a policy's ``name`` may give.
MAX_LABEL = 100


def as_policy(obj: Any, name: str | None = None) -> Any:
    """What the harness runs for ``obj``: ``reset(sim, seed)`` plus ``decide(sim)`` (a
    scheduler) or ``act(obs, mask)``.

    The kinds are tried in this order: a :class:`~mrsched_gym.baselines.base.Scheduler` of this
    package or an adapter of this module (returned as it is; a ``Scheduler`` subclass of
    another package is wrapped by :class:`~mrsched_gym.policy.readonly.GuardedScheduler`);
    ``decide`` (:class:`RulePolicy`, wrapped by :class:`RuleAdapter`); ``act``
    (:class:`ObservationPolicy`, wrapped by :class:`ObservationAdapter` with its ``reset``);
    ``predict`` (:class:`ModelPolicy`, :class:`ModelAdapter`); any other callable
    (:class:`ObservationFunction`).

    Args:
        obj: The policy object (an instance, not a class).
        name: Its label (default :func:`policy_label`).

    Raises:
        InputTypeError: ``obj`` fits none of the kinds (the message says what is missing), is a
            class rather than an instance, or its ``decide`` or ``reset`` cannot be called as
            the contract calls it.
    """
    from mrsched_gym.baselines.base import Scheduler
    if isinstance(obj, type):
        raise InputTypeError(f"policy {obj.__name__}: pass an instance ({obj.__name__}(...)), "
                             f"not the class")
    from mrsched_gym.policy.readonly import GuardedScheduler
    if isinstance(obj, Scheduler) and not type(obj).__module__.startswith("mrsched_gym."):
        return GuardedScheduler(obj, name or policy_label(obj))   # an outside Scheduler
    if isinstance(obj, (Scheduler, RuleAdapter, ObservationAdapter, ModelAdapter,
                        GuardedScheduler)):
        return obj                                  # what the harness runs already
    label = name or policy_label(obj)
    if hasattr(obj, "reset"):
        check_call(obj.reset, 1, "reset(view, seed=None)", label, keyword="seed")
    if hasattr(obj, "decide"):
        check_call(obj.decide, 2, "decide(decision, view)", label,
                   hint=" (or subclass mrsched_gym.baselines.Scheduler, whose decide(view) "
                   "takes the view only)")
        return RuleAdapter(obj, label)
    if hasattr(obj, "act"):
        check_call(obj.act, 2, "act(obs, mask)", label)
        return ObservationAdapter(obj.act, label, getattr(obj, "reset", None),
                                  checked=getattr(obj, "illegal_actions", None) != ILLEGAL_AS_SKIP)
    if hasattr(obj, "predict"):
        check_call(obj.predict, 1, "predict(obs, deterministic=True) (an SB3 model's)", label,
                   keyword="deterministic")
        return ModelAdapter(obj, label)
    if callable(obj):
        check_call(obj, 2, "a function (obs, mask) -> int", label)
        return ObservationAdapter(obj, label)
    raise InputTypeError(
        f"policy {label}: not a policy: a {type(obj).__name__} has no decide(decision, view), "
        f"act(obs, mask) or predict(obs) method and is not callable as (obs, mask) "
        f"(see mrsched_gym.policy.contract)")


def check_call(fn: Callable[..., Any], n_args: int, contract: str, label: str,
               keyword: str | None = None, hint: str = "") -> None:
    """Raise :class:`InputTypeError` unless ``fn`` can be called with ``n_args`` positional
    arguments (and ``keyword=``), as the contract calls it; a function whose signature cannot
    be read passes."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return
    args = [None] * n_args
    try:
        sig.bind(*args, **({keyword: None} if keyword else {}))
    except TypeError:
        raise InputTypeError(f"policy {label}: {getattr(fn, '__name__', 'it')}{sig} cannot be "
                             f"called as {contract}{hint}") from None


__all__ = ["ILLEGAL_AS_SKIP", "ModelAdapter", "ModelPolicy", "ObservationAdapter",
           "ObservationFunction", "ObservationPolicy", "PolicyActionError", "PolicyLike",
           "Resettable", "RuleAdapter", "RulePolicy", "as_policy", "check_action", "check_call",
           "policy_label"]
