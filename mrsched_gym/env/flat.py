"""The flat variants of the registered ids, for RL libraries that know no action mask nor
``Dict`` observation (SB3's ``PPO("MlpPolicy")``, A2C, rl_zoo3, CleanRL, RLlib's defaults).

``mrsched/<Name>-flat-vN`` is the world of ``mrsched/<Name>-vN`` (same scenario, seeds, episode
end, reward and metrics) seen through :class:`FlatChoices`, as Atari's ``-ram`` ids are the same
games seen through another observation:

* **Observation**: one float32 ``Box``: the base observation's ``decision``, its candidate rows
  in the choices' order (below), ``nodes``, ``forecast`` (and ``objective`` where observed),
  each flattened, in that order (not ``FlattenObservation``'s alphabetical order, so the two
  spaces differ and a checkpoint says which it was trained on).
* **Action**: ``Discrete(K + 1)``, every action legal. The decision's legal choices are listed
  in a fixed order, the **choices**: at a schedule decision the candidates by urgency (the
  candidate column "time to deadline", earliest first; a job without a deadline reads 24 h, so
  it comes after those with one; ties in the base order: oldest job first, maps before
  reduces), at the other decisions (admit, preempt, speculate) the candidates in the base
  order; then skip where the base mask offers it (reject, wait, no backup copy; never at a
  schedule decision with a candidate unless ``allow_idle=True``). Action ``a`` plays choice
  ``a mod m`` of the ``m`` choices: no action is ever played as an unintended skip. Candidate
  row ``i`` of the observation is the candidate of choice ``i`` (rows past the candidates are
  zeros, as in the base observation).
* **Info**: the base id's, plus ``played_action`` (the base action ``step`` played),
  ``folded`` (whether the action was ``m`` or more, played as choice ``a mod m``) and
  ``choices`` (the base action of each of the next decision's choices, in order).

Why the urgency order: a default ``PPO("MlpPolicy")`` learns "prefer the first slots" far
sooner than it learns to read deadlines (docs/guide/train.md, "Without an action mask" has the
measured comparison with the base order).

:class:`FlatChoices` is also a function of a base observation and mask alone, so a model
trained on a variant plays the base id's worlds seed for seed in the harness
(``agent:PATH``), and a policy of your own can use :meth:`FlatChoices.observe` and
:meth:`FlatChoices.action` on the base env.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

from mrsched_gym.env import MRSchedEnv
from mrsched_gym.env.env_setup import observation_space
from mrsched_gym.env.features import CANDIDATE_COLUMNS
from mrsched_gym.env.flat_step import F32LE, ChoiceOrder, FlatStepper
from mrsched_gym.env.obs_layout import decision_kind_slot
from mrsched_gym.errors import InputError
from mrsched_gym.sim.decision import SCHEDULE

__all__ = ["FLAT_KEYS", "FlatChoices", "FlatEnv", "FlatPolicy", "base_id", "base_space_of",
           "flat_id", "is_flat_id", "make_flat"]

#: The base observation's keys in the order the flat observation holds them.
FLAT_KEYS = ("decision", "candidates", "nodes", "forecast", "objective")
#: The variant's infix: ``mrsched/Hadoop-v0`` -> ``mrsched/Hadoop-flat-v0``.
INFIX = "-flat"
_SCHEDULE = decision_kind_slot(SCHEDULE)
_NAMES = [f.name for f in CANDIDATE_COLUMNS]
_DEADLINE = _NAMES.index("time to deadline")


def flat_id(env_id: str) -> str:
    """The flat variant's id of a registered id (``mrsched/Hadoop-v0`` ->
    ``mrsched/Hadoop-flat-v0``)."""
    head, sep, version = env_id.rpartition("-v")
    if not sep or not version.isdigit():
        raise ValueError(f"{env_id!r} is not a versioned id (NAME-vN)")
    return f"{head}{INFIX}-v{version}"


def is_flat_id(env_id: str) -> bool:
    """Whether ``env_id`` names a flat variant (``...-flat-vN``)."""
    head, sep, version = env_id.rpartition("-v")
    return bool(sep) and version.isdigit() and head.endswith(INFIX)


def base_id(env_id: str) -> str:
    """The base id of a flat variant's id (the inverse of :func:`flat_id`); other ids as
    given."""
    if not is_flat_id(env_id):
        return env_id
    head, _, version = env_id.rpartition("-v")
    return f"{head[:-len(INFIX)]}-v{version}"


def base_space_of(obs: dict[str, np.ndarray]) -> spaces.Dict:
    """The base env's observation space for observations of ``obs``'s shapes (the bounds
    depend only on the features, :func:`~mrsched_gym.env.env_setup.observation_space`)."""
    return observation_space(obs["candidates"].shape[0], obs["nodes"].shape[0],
                             obs["forecast"].shape[0], obs["decision"].shape[0],
                             "objective" in obs)


class FlatChoices:
    """The flat variant's view of a base env's observations and actions.

    Args:
        base_space: The base env's ``Dict`` observation space.
        order: ``"urgency"`` (the variants' order, see the module) or ``"base"`` (the
            candidates in the base env's order at every decision), for comparisons.
    """

    def __init__(self, base_space: spaces.Dict, order: str = "urgency") -> None:
        if order not in ("urgency", "base"):
            raise InputError(f"order must be 'urgency' or 'base', got {order!r}")
        self.keys = tuple(k for k in FLAT_KEYS if k in base_space.spaces)
        boxes = [base_space[k] for k in self.keys]
        self.K, self.F = base_space["candidates"].shape
        self.D = base_space["decision"].shape[0]
        self.observation_space = spaces.Box(
            np.concatenate([b.low.ravel() for b in boxes]),
            np.concatenate([b.high.ravel() for b in boxes]), dtype=np.float32)
        #: The choices and the rows' order (:class:`~mrsched_gym.env.flat_step.ChoiceOrder`).
        self.order = ChoiceOrder(self.K, self.F, self.D, _DEADLINE, order == "urgency")

    @property
    def choices(self) -> tuple[int, ...]:
        """The base action of each choice of the last observed decision."""
        return self.order.choices

    def observe(self, obs: dict[str, np.ndarray], mask: np.ndarray) -> np.ndarray:
        """The flat observation of a base observation ``obs`` whose action mask is ``mask``
        (``bool[K + 1]``, the env's ``action_masks()``); sets :attr:`choices`."""
        buf = bytearray(np.concatenate([np.asarray(obs[k], F32LE).ravel()
                                        for k in self.keys]).tobytes())
        n = int(np.count_nonzero(mask[:self.K]))
        self.order.arrange(buf, n, bool(mask[self.K]), bool(obs["decision"][_SCHEDULE] > 0.5))
        return np.frombuffer(buf, F32LE).astype(np.float32)

    def action(self, action: Any) -> int:
        """The base action that ``action`` (an integer of ``Discrete(K + 1)``) plays at the last
        observed decision: choice ``action mod m``."""
        return self.order.action(action)


class FlatEnv(MRSchedEnv):
    """A base env seen through :class:`FlatChoices` (what the ``-flat`` ids make): an
    :class:`~mrsched_gym.env.MRSchedEnv` whose ``step`` plays choice ``action mod m`` (every
    action is legal; ``info["played_action"]`` is the base action played, ``info["choices"]``
    the next decision's choices) and whose observations are flat. Its ``allow_idle`` is read at
    each ``reset``. The step is :class:`~mrsched_gym.env.flat_step.FlatStepper`'s, in one layer;
    ``advance`` takes base actions, as the base env's.

    Args:
        order: The choices' order (:class:`FlatChoices`).
        **kwargs: The base env's arguments (scenario, overrides, flags).
    """

    stepper_class = FlatStepper

    def __init__(self, order: str = "urgency", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        #: The base env's observation space (``observation_space`` is the flat ``Box``).
        self.base_observation_space = self.observation_space
        self.view = FlatChoices(self.base_observation_space, order)
        self.observation_space = self.view.observation_space
        stepper = self.stepper
        if not isinstance(stepper, FlatStepper):     # a subclass changed stepper_class
            raise TypeError(f"{type(self).__name__}.stepper_class must derive from FlatStepper")
        #: The env's stepper (:attr:`stepper`), which plays the choices.
        self.flat_stepper = stepper
        stepper.order = self.view.order

    def reset(self, *, seed: int | None = None, options: dict | None = None
              ) -> tuple[np.ndarray, dict[str, Any]]:
        """The base env's ``reset``, observed flat (``info["choices"]`` added)."""
        stepper = self.flat_stepper
        stepper.flat_allow_idle = self.allow_idle       # the base mask's rule, per episode
        _, info = super().reset(seed=seed, options=options)
        flat = stepper.observe_flat()
        info["choices"] = self.view.choices
        return flat, info

    def action_masks(self) -> np.ndarray:
        """Every action is legal (for libraries that ask for a mask anyway; also
        ``info["action_mask"]``): a fresh array at every call; the base env's mask is
        :meth:`base_action_masks`."""
        return self.flat_stepper.all_legal.copy()

    def base_action_masks(self) -> np.ndarray:
        """The base env's action mask (:meth:`MRSchedEnv.action_masks
        <mrsched_gym.env.MRSchedEnv.action_masks>`)."""
        return super().action_masks()


class FlatPolicy:
    """A policy that acts on a flat variant's observation, for the harness (which gives every
    policy the base id's observation): ``act_flat(flat_obs) -> int`` in ``Discrete(K + 1)``,
    e.g. the actor of a network trained with CleanRL on a ``-flat`` id.

    Args:
        act_flat: The function from a flat observation to an action.
        name: The policy's label in records and tables.
    """

    def __init__(self, act_flat: Any, name: str = "flat-policy") -> None:
        self.act_flat = act_flat
        self.name = name
        self.observation = "flat-variant"
        self._view: FlatChoices | None = None
        self._shapes: dict[str, tuple[int, ...]] = {}

    def act(self, obs: dict[str, np.ndarray], mask: np.ndarray) -> int:
        """The base action that ``act_flat`` of this decision's flat observation plays."""
        if self._view is None or self._view.D != obs["decision"].shape[0] or any(
                obs[k].shape != self._shapes[k] for k in obs):
            self._view = FlatChoices(base_space_of(obs))
            self._shapes = {k: v.shape for k, v in obs.items()}
        return self._view.action(self.act_flat(self._view.observe(obs, mask)))


def make_flat(order: str = "urgency", **kwargs: Any) -> FlatEnv:
    """The entry point of the ``-flat`` ids: a :class:`FlatEnv` made with the base id's
    ``kwargs``."""
    return FlatEnv(order=order, **kwargs)
