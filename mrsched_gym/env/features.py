"""The observation's feature table: every feature of every key, by position, with its bounds.

One table is the source of the observation's layout. :mod:`mrsched_gym.env.encoding` clips each
feature to these bounds (with the constants below) and documents each by the same index and name;
:class:`~mrsched_gym.env.MRSchedEnv` builds its ``Box`` spaces from them (:func:`box_bounds`: a
key's Box spans its features' bounds). ``tests/test_features.py`` checks that the encoding's
docstring names every feature at its index, and that every value the encoder writes lies within
its feature's bounds.
"""

from __future__ import annotations

from typing import Final, NamedTuple

from mrsched_gym.config import REWARD_COMPONENTS

#: Clip of ratios to the cluster's slots or to K (remaining tasks, running tasks, slots required,
#: queue lengths).
RATIO_MAX: Final = 10.0
#: Clip of times in hours that can grow without bound (waiting time, completion time alone).
HOURS_MAX: Final = 100.0
#: Clip of task lengths (h).
TASK_HOURS_MAX: Final = 10.0
#: Clip of the time to a deadline, either way (h), and of a task's estimated time left (h).
DEADLINE_HOURS: Final = 24.0
#: Clip of the expected speed of a job's tasks on a node (CPU speed x accelerator x 1/NormTCT).
SPEED_MAX: Final = 30.0


class Feature(NamedTuple):
    """One feature: its name (as the encoding's docstring starts it) and its bounds."""

    name: str
    low: float
    high: float


def _unit(*names: str) -> tuple[Feature, ...]:
    """Features in [0, 1]."""
    return tuple(Feature(n, 0.0, 1.0) for n in names)


#: ``obs["decision"]`` after the kind one-hot (whose entries are in [0, 1]).
DECISION_TAIL_FEATURES: tuple[Feature, ...] = (
    *_unit("time / time limit", "f(t) now"),
    Feature("active jobs / K", 0.0, RATIO_MAX),
    Feature("runnable jobs / K", 0.0, RATIO_MAX),
    *_unit("free map slots of the decision node", "free reduce slots", "has a decision node"),
)

#: ``obs["candidates"]`` columns.
CANDIDATE_COLUMNS: tuple[Feature, ...] = (
    *_unit("valid", "is reduce", "locality", "job progress"),
    Feature("remaining tasks / cluster slots", 0.0, RATIO_MAX),
    Feature("observed mean task length", 0.0, TASK_HOURS_MAX),
    *_unit("a task of this phase has finished"),
    Feature("time to deadline", -DEADLINE_HOURS, DEADLINE_HOURS),
    *_unit("has a deadline"),
    Feature("estimated slots required", 0.0, RATIO_MAX),
    Feature("expected speed", 0.0, SPEED_MAX),
    Feature("running tasks / cluster slots", 0.0, RATIO_MAX),
    Feature("waiting time since arrival", 0.0, HOURS_MAX),
    *_unit("priority / 9", "weight / 10", "resumes a suspended task", "CPU", "I/O", "memory"),
    Feature("preemption: primitive is suspend; speculation: the running task's estimated time "
            "left", 0.0, DEADLINE_HOURS),
    *_unit("the task's progress"),
    Feature("job completion time alone", 0.0, HOURS_MAX),
)

#: ``obs["nodes"]`` columns.
NODE_COLUMNS: tuple[Feature, ...] = _unit(
    "up", "CPU capacity multiplier", "CPU speed / max speed", "shared", "accelerated",
    "free map slots fraction", "free reduce slots fraction", "residual CPU", "suspended tasks / 4",
    "is the decision node")

#: ``obs["forecast"]``: each step's forecast of f(t).
FORECAST_FEATURE = Feature("forecast of f(t)", 0.0, 1.0)


def box_bounds(features: tuple[Feature, ...]) -> tuple[float, float]:
    """The ``(low, high)`` of a Box holding ``features`` (one scalar pair per key, the span of
    its features' bounds: a trained agent's saved space compares equal)."""
    return min(f.low for f in features), max(f.high for f in features)


#: ``obs["objective"]`` (only with ``observe_objective=True``): the reward weight of each
#: component (:data:`mrsched_gym.config.REWARD_COMPONENTS` order) / the largest absolute weight.
OBJECTIVE_FEATURES: tuple[Feature, ...] = tuple(
    Feature(f"weight of {c}", -1.0, 1.0) for c in REWARD_COMPONENTS)

#: The kind one-hot's entries (any number of them).
KIND_FEATURE = Feature("decision kind one-hot", 0.0, 1.0)
