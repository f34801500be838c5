"""How an observation is laid out: ``obs["decision"]`` (its kind one-hot and its length in a
world), the ``obs["objective"]`` vector, and the packing of an observation's values as float32
(:func:`packer`); the features themselves are listed in :mod:`mrsched_gym.env.encoding`, which
builds the observations (and re-exports the public names here)."""

from __future__ import annotations

import struct
from collections.abc import Mapping
from typing import Final

import numpy as np

from mrsched_gym.config import REWARD_COMPONENTS, Scenario
from mrsched_gym.env.features import CANDIDATE_COLUMNS, DECISION_TAIL_FEATURES
from mrsched_gym.sim.decision import BASE_KINDS, DecisionKind, posed_kinds

#: Features of ``obs["decision"]`` after the kind one-hot.
DECISION_TAIL = len(DECISION_TAIL_FEATURES)
#: Length of ``obs["decision"]`` in worlds without speculation (the base kinds' one-hot + 7).
DECISION_FEATURES = len(BASE_KINDS) + DECISION_TAIL
#: ``obs["decision"][DECISION_KIND_SLICE]``: the decision kind, one-hot by
#: :class:`~mrsched_gym.sim.decision.DecisionKind` value (all zero once the episode is over), in
#: worlds without speculation; in any world :func:`kind_slice`.
DECISION_KIND_SLICE = slice(0, len(BASE_KINDS))


def decision_features(scenario: Scenario) -> int:
    """Length of ``obs["decision"]`` in ``scenario``'s worlds: one one-hot entry per kind it
    can pose (:func:`~mrsched_gym.sim.decision.posed_kinds`), then :data:`DECISION_TAIL`."""
    return len(posed_kinds(scenario)) + DECISION_TAIL


def objective_vector(weights: Mapping[str, float]) -> np.ndarray:
    """``obs["objective"]``: the reward weights (a mapping component -> weight, missing = 0) in
    :data:`~mrsched_gym.config.REWARD_COMPONENTS` order, divided by the largest absolute weight
    (so in [-1, 1]; all zero when every weight is 0). Tells a policy what is scored: mean time
    in system (``jct``) and the deadline penalty call for different orders of the same queue."""
    w = np.array([float(weights.get(c, 0.0)) for c in REWARD_COMPONENTS], np.float32)
    top = float(np.abs(w).max())
    return w / np.float32(top) if top > 0 else w


def kind_slice(decision: np.ndarray) -> slice:
    """The kind one-hot of a ``decision`` array of any world."""
    return slice(0, len(decision) - DECISION_TAIL)


def decision_kind_slot(kind: DecisionKind) -> int:
    """Index of ``kind``'s one-hot entry in ``obs["decision"]``."""
    return DECISION_KIND_SLICE.start + int(kind)


def observed_kind(decision: np.ndarray) -> DecisionKind | None:
    """The decision kind an observation's ``decision`` array encodes (``None``: the episode is
    over)."""
    hot = np.flatnonzero(decision[kind_slice(decision)] > 0.5)
    return DecisionKind(int(hot[0])) if len(hot) else None


#: Packs a node row without its decision-node column (9 floats) and one float, as the
#: observation is written (little-endian float32, :mod:`mrsched_gym.env.float_writer`). The standard
#: ``<`` formats refuse a value beyond float32's range (``OverflowError``) where the writer
#: makes it infinite; what is packed with them (node rows, flags, one-hots) is in [0, 1].
NODE_ROW: Final = struct.Struct("<9f")
ONE_FLOAT: Final = struct.Struct("<f")
#: A candidate row's bytes.
ROW_BYTES: Final = 4 * len(CANDIDATE_COLUMNS)
_PACKERS: dict[int, struct.Struct] = {}


def packer(n: int) -> struct.Struct:
    """Packs ``n`` floats as little-endian float32 (one per ``n``, kept here: a ``Struct``
    cannot be copied with the encoder)."""
    p = _PACKERS.get(n)
    if p is None:
        p = _PACKERS[n] = struct.Struct(f"<{n}f")
    return p
