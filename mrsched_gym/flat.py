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
* **Info**: the base id's, plus ``played_action`` (the base action ``step`` played) and
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

import struct
from typing import Any

import numpy as np
from gymnasium import spaces

from mrsched_gym.env import MRSchedEnv
from mrsched_gym.env_setup import action_index, observation_space
from mrsched_gym.errors import InputError
from mrsched_gym.features import CANDIDATE_COLUMNS
from mrsched_gym.obs_layout import decision_kind_slot, objective_vector
from mrsched_gym.sim.decision import SCHEDULE

__all__ = ["FLAT_KEYS", "FlatChoices", "FlatEnv", "FlatPolicy", "base_id", "base_space_of",
           "flat_id", "is_flat_id", "make_flat"]

#: The base observation's keys in the order the flat observation holds them.
FLAT_KEYS = ("decision", "candidates", "nodes", "forecast", "objective")
#: The variant's infix: ``mrsched/Hadoop-v0`` -> ``mrsched/Hadoop-flat-v0``.
INFIX = "-flat"
_SCHEDULE = decision_kind_slot(SCHEDULE)
_F32LE = np.dtype("<f4")
_NATIVE_LE = _F32LE.isnative
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
    depend only on the features, :func:`~mrsched_gym.env_setup.observation_space`)."""
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
        self.urgent = order == "urgency"
        self.keys = tuple(k for k in FLAT_KEYS if k in base_space.spaces)
        boxes = [base_space[k] for k in self.keys]
        self.K, self.F = base_space["candidates"].shape
        self.D = base_space["decision"].shape[0]
        self.observation_space = spaces.Box(
            np.concatenate([b.low.ravel() for b in boxes]),
            np.concatenate([b.high.ravel() for b in boxes]), dtype=np.float32)
        #: The choices with ``n`` candidates: ``plain[n]`` without skip, ``with_skip[n]`` with.
        self.plain = [tuple(range(n)) for n in range(self.K + 1)]
        self.with_skip = [(*range(n), self.K) for n in range(self.K + 1)]
        #: Reads the ``n`` candidates' "time to deadline" values (``_deadlines[n]``) at once.
        pad = f"{4 * (self.F - 1)}x"
        self._deadlines = [struct.Struct("<" + f"f{pad}" * (n - 1) + "f" if n else "<")
                           for n in range(self.K + 1)]
        #: The base action of each choice of the last observed decision.
        self.choices: tuple[int, ...] = (self.K,)

    def arrange(self, buf: bytearray, n: int, skip: bool, schedule: bool) -> None:
        """Order the ``n`` candidate rows of ``buf`` (a flat observation's little-endian float32
        bytes in the base order, changed in place) as the choices, which it sets
        (:attr:`choices`, a tuple of base actions; skip last if ``skip``). Done on the bytes,
        before any array is made: one ``struct`` call reads the deadlines, a row move is a
        slice assignment."""
        if n > 1 and schedule and self.urgent:
            ttd = self._deadlines[n].unpack_from(buf, 4 * (self.D + _DEADLINE))
            if list(ttd) != sorted(ttd):              # most decisions come in order already
                order = sorted(range(n), key=ttd.__getitem__)   # stable: ties keep base order
                row, start = 4 * self.F, 4 * self.D
                buf[start:start + n * row] = b"".join(
                    [buf[start + i * row:start + (i + 1) * row] for i in order])
                self.choices = (*order, self.K) if skip else tuple(order)
                return
        self.choices = self.with_skip[n] if skip else self.plain[n]

    def observe(self, obs: dict[str, np.ndarray], mask: np.ndarray) -> np.ndarray:
        """The flat observation of a base observation ``obs`` whose action mask is ``mask``
        (``bool[K + 1]``, the env's ``action_masks()``); sets :attr:`choices`."""
        buf = bytearray(np.concatenate([np.asarray(obs[k], _F32LE).ravel()
                                        for k in self.keys]).tobytes())
        n = int(np.count_nonzero(mask[:self.K]))
        self.arrange(buf, n, bool(mask[self.K]), bool(obs["decision"][_SCHEDULE] > 0.5))
        return np.frombuffer(buf, _F32LE).astype(np.float32)

    def action(self, action: Any) -> int:
        """The base action that ``action`` (an integer of ``Discrete(K + 1)``) plays at the last
        observed decision: choice ``action mod m``."""
        a = action if type(action) is int else action_index(action, self.K)
        if not 0 <= a <= self.K:
            raise InputError(f"action {a} is outside Discrete({self.K + 1})")
        choices = self.choices
        return choices[a % len(choices)]


class FlatEnv(MRSchedEnv):
    """A base env seen through :class:`FlatChoices` (what the ``-flat`` ids make): an
    :class:`~mrsched_gym.env.MRSchedEnv` whose ``step`` plays choice ``action mod m`` and whose
    observations are flat. Its ``allow_idle`` is read at each ``reset``.

    Args:
        order: The choices' order (:class:`FlatChoices`).
        **kwargs: The base env's arguments (scenario, overrides, flags).
    """

    def __init__(self, order: str = "urgency", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        #: The base env's observation space (``observation_space`` is the flat ``Box``).
        self.base_observation_space = self.observation_space
        self.view = FlatChoices(self.base_observation_space, order)
        self.observation_space = self.view.observation_space
        self.flat_allow_idle = False
        #: The ``objective`` values appended to each observation (``observe_objective=True``).
        self.objective_values = (objective_vector(self.scenario.reward.weights)
                                 if "objective" in self.base_observation_space.spaces else None)
        self.all_legal = np.ones(self.view.K + 1, dtype=bool)
        self.all_legal.setflags(write=False)

    def _observe_flat(self) -> np.ndarray:
        """The current decision, flat (the encoder's buffer, no ``Dict`` made)."""
        sim = self.sim
        buf = self.encoder.observe_bytes()
        if sim.done:
            self.view.arrange(buf, 0, True, False)
        else:
            d = sim.decision
            n = len(d.candidates)
            schedule = d.kind == SCHEDULE
            self.view.arrange(buf, n, n == 0 or not schedule or self.flat_allow_idle, schedule)
        flat = np.frombuffer(buf, _F32LE)
        if not _NATIVE_LE:                            # pragma: no cover - big-endian machines
            flat = flat.astype(np.float32)
        if self.objective_values is not None:
            flat = np.concatenate((flat, self.objective_values))
        return flat

    def reset(self, *, seed: int | None = None, options: dict | None = None
              ) -> tuple[np.ndarray, dict[str, Any]]:
        """The base env's ``reset``, observed flat (``info["choices"]`` added)."""
        self.flat_allow_idle = self.allow_idle          # the base mask's rule, per episode
        _, info = super().reset(seed=seed, options=options)
        flat = self._observe_flat()
        info["choices"] = self.view.choices
        return flat, info

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """Play choice ``action mod m`` (every action is legal; ``info["played_action"]`` is
        the base action played, ``info["choices"]`` the next decision's choices)."""
        played = self.view.action(action)
        reward, terminated, truncated, info = self.advance(played)
        flat = self._observe_flat()
        info["played_action"] = played
        info["choices"] = self.view.choices
        if not self.lean_info:
            info["action_mask"] = self.all_legal
        return flat, reward, terminated, truncated, info

    def action_masks(self) -> np.ndarray:
        """Every action is legal (for libraries that ask for a mask anyway; also
        ``info["action_mask"]``, read-only); the base env's mask is :meth:`base_action_masks`."""
        return self.all_legal

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
