"""The per-step work of the flat variants (:mod:`mrsched_gym.env.flat`): the choices' order and a
:class:`~mrsched_gym.env.env_step.Stepper` whose ``step`` plays a choice and observes flat.

It lives apart from ``flat.py`` (the env, the spaces, the policy adapter) for the same reason as
``env_step.py``: the optional compiled build (``setup.py``) compiles it with the simulator, so
a variant's step costs no more than its base id's (docs/notes/speed.md, "The flat variants").
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any

import numpy as np

from mrsched_gym.env.encoding import ObservationEncoder
from mrsched_gym.env.env_setup import action_index
from mrsched_gym.env.env_step import Stepper, play
from mrsched_gym.env.rewards import RewardTracker
from mrsched_gym.errors import InputError
from mrsched_gym.sim.decision import SCHEDULE
from mrsched_gym.sim.engine import Simulator
from mrsched_gym.sim.native import mypyc_attr

#: The flat observation's float type (little-endian float32, the encoder's bytes).
F32LE = np.dtype("<f4")
_NATIVE_LE = F32LE.isnative


@mypyc_attr(allow_interpreted_subclasses=True)      # copies and pickles: sim/native.py
class ChoiceOrder:
    """The legal choices of a decision in the flat variants' order, and the candidate rows of
    its observation moved into that order (``mrsched_gym.env.flat``'s module docstring).

    Args:
        K: Candidate rows of the observation.
        F: Features per candidate row.
        D: Features of the ``decision`` vector (the rows start after it).
        deadline: The candidate column "time to deadline".
        urgent: Order a schedule decision's candidates by time to deadline (earliest first,
            ties in the base order); ``False``: the base order at every decision.
    """

    def __init__(self, K: int, F: int, D: int, deadline: int, urgent: bool) -> None:
        self.K = K
        self.F = F
        self.D = D
        self.deadline = deadline
        self.urgent = urgent
        self.deadline_offset = 4 * (D + deadline)
        #: The choices with ``n`` candidates: ``plain[n]`` without skip, ``with_skip[n]`` with.
        self.plain: list[tuple[int, ...]] = [tuple(range(n)) for n in range(K + 1)]
        self.with_skip: list[tuple[int, ...]] = [(*range(n), K) for n in range(K + 1)]
        #: Reads the ``n`` candidates' "time to deadline" values at once (``read_deadlines[n]``,
        #: a bound ``Struct.unpack_from``: no attribute look-up per step).
        pad = f"{4 * (F - 1)}x"
        self.read_deadlines: list[Callable[[bytearray, int], tuple[float, ...]]] = [
            struct.Struct("<" + f"f{pad}" * (n - 1) + "f" if n else "<").unpack_from
            for n in range(K + 1)]
        #: Read and write the ``n`` candidate rows as ``n`` byte strings (``read_rows[n]``,
        #: ``write_rows[n]``: bound ``unpack_from`` and ``pack_into``).
        rows = [struct.Struct(f"{4 * F}s" * n) for n in range(K + 1)]
        self.read_rows: list[Callable[[bytearray, int], tuple[bytes, ...]]] = [
            r.unpack_from for r in rows]
        self.write_rows: list[Callable[..., None]] = [r.pack_into for r in rows]
        self.rows_offset = 4 * D
        #: The base action of each choice of the last observed decision.
        self.choices: tuple[int, ...] = (K,)
        #: Whether the last :meth:`action` was folded: ``a >= m``, played as choice ``a mod m``.
        self.folded = False

    def __reduce__(self) -> tuple[Any, tuple[int, int, int, int, bool, tuple[int, ...]]]:
        """Pickles and copies by its arguments and its last choices (the bound ``struct``
        readers are made again: they do not pickle)."""
        return rebuilt_order, (self.K, self.F, self.D, self.deadline, self.urgent, self.choices)

    def arrange(self, buf: bytearray, n: int, skip: bool, schedule: bool) -> None:
        """Order the ``n`` candidate rows of ``buf`` (a flat observation's little-endian float32
        bytes in the base order, changed in place) as the choices, which it sets
        (:attr:`choices`, a tuple of base actions; skip last if ``skip``). Done on the bytes,
        before any array is made: one ``struct`` call reads the deadlines, an insertion sort
        of at most ``K`` values orders them (no key calls: native in the compiled build), one
        call reads the rows and one writes them back in the choices' order."""
        if n > 1 and schedule and self.urgent:
            ttd: tuple[float, ...] = self.read_deadlines[n](buf, self.deadline_offset)
            order: list[int] = [0]
            moved = False
            for i in range(1, n):       # insertion sort, stable: ties keep the base order
                t = ttd[i]
                j = i
                while j > 0 and ttd[order[j - 1]] > t:
                    j -= 1
                if j == i:
                    order.append(i)
                else:
                    order.insert(j, i)
                    moved = True
            if moved:
                at = self.rows_offset
                rows = self.read_rows[n](buf, at)
                self.write_rows[n](buf, at, *[rows[i] for i in order])
                if skip:
                    order.append(self.K)
                self.choices = tuple(order)
                return
        self.choices = self.with_skip[n] if skip else self.plain[n]

    def action(self, action: Any) -> int:
        """The base action that ``action`` (an integer of ``Discrete(K + 1)``) plays at the last
        arranged decision: choice ``action mod m`` of its ``m`` choices."""
        a: int = action if type(action) is int else action_index(action, self.K)
        if not 0 <= a <= self.K:
            raise InputError(f"action {a} is outside Discrete({self.K + 1})")
        choices = self.choices
        m = len(choices)
        self.folded = a >= m
        return choices[a % m]


def rebuilt_order(K: int, F: int, D: int, deadline: int, urgent: bool,
                  choices: tuple[int, ...]) -> ChoiceOrder:
    """A :class:`ChoiceOrder` as pickled: made again, with its last choices."""
    order = ChoiceOrder(K, F, D, deadline, urgent)
    order.choices = choices
    return order


@mypyc_attr(allow_interpreted_subclasses=True)      # copies and pickles: sim/native.py
class FlatStepper(Stepper):
    """A flat variant's :class:`~mrsched_gym.env.env_step.Stepper`: ``step`` plays choice
    ``action mod m`` of :attr:`order` and returns the next decision's flat observation, in one
    layer (no ``Dict`` made, the base ``step`` not called through). ``advance`` is the base
    one (base actions). The env sets :attr:`order` and, at each reset, :attr:`flat_allow_idle`.

    Args:
        The base :class:`~mrsched_gym.env.env_step.Stepper`'s.
    """

    def __init__(self, sim: Simulator, encoder: ObservationEncoder, rewards: RewardTracker,
                 masks: list[np.ndarray],
                 work_masks: list[np.ndarray], objective: np.ndarray | None) -> None:
        super().__init__(sim, encoder, rewards, masks, work_masks, objective)
        #: The choices' order (the env's :class:`ChoiceOrder`, shared with its view).
        self.order = ChoiceOrder(self.K, 1, 0, 0, False)
        #: Whether skip is a choice at a schedule decision with a candidate (the base mask's
        #: rule), read by the env at each reset.
        self.flat_allow_idle = False
        all_legal = np.ones(self.K + 1, dtype=bool)
        all_legal.setflags(write=False)
        #: Every action legal: ``info["action_mask"]`` is a fresh copy of it at every step (a
        #: caller may keep or change the infos it is given; gymnasium's checker warns about
        #: infos that share an array).
        self.all_legal = all_legal

    def observe_flat(self) -> np.ndarray:
        """The current decision, flat (the encoder's buffer, rows in the choices' order), the
        objective vector appended if observed; sets the order's choices."""
        sim = self.sim
        buf = self.encoder.observe_bytes()
        if sim.done:
            self.order.arrange(buf, 0, True, False)
        else:
            d = sim.decision
            n = len(d.candidates)
            schedule = d.kind == SCHEDULE
            self.order.arrange(buf, n, n == 0 or not schedule or self.flat_allow_idle, schedule)
        flat: np.ndarray = np.frombuffer(buf, F32LE)
        if not _NATIVE_LE:                            # pragma: no cover - big-endian machines
            flat = flat.astype(np.float32)
        if self.objective is not None:
            flat = np.concatenate((flat, self.objective))
        return flat

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """Play choice ``action mod m`` (:meth:`ChoiceOrder.action`; ``info["played_action"]``
        is the base action played, ``info["folded"]`` whether ``action >= m`` was folded onto
        it, ``info["choices"]`` the next decision's choices), then observe flat."""
        order = self.order
        played = order.action(action)
        if self.strict_actions and not self.sim.is_legal(played):
            raise InputError(f"action {played} is not legal now (mask {self.mask()})")
        reward, terminated, truncated, info = play(self.sim, self.rewards, played,
                                                   self.lean_info, self.masks,
                                                   self.work_masks, self.allow_idle,
                                                   self.all_legal.copy())
        flat = self.observe_flat()
        info["played_action"] = played
        info["folded"] = order.folded
        info["choices"] = order.choices
        return flat, reward, terminated, truncated, info


__all__ = ["ChoiceOrder", "F32LE", "FlatStepper"]
