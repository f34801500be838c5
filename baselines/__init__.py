"""Classical schedulers as fixed-policy baselines, registered by name in :data:`BASELINES`.

Every entry is a zero-argument factory returning a fresh :class:`Scheduler` with the paper's
default parameters; :func:`make_baseline` also accepts keyword overrides
(``make_baseline("fair", delay=0)``).
"""

import numbers
import types
import typing
from functools import partial

import numpy as np

from mrsched_gym.baselines.adaptive import AdaptiveScheduler
from mrsched_gym.baselines.affinity import EDFAffinityScheduler
from mrsched_gym.baselines.base import Scheduler
from mrsched_gym.baselines.fair import CapacityScheduler, DRFScheduler, FairScheduler
from mrsched_gym.baselines.forecast_rule import SRPTForecastScheduler
from mrsched_gym.baselines.mimp import MPAdmissionScheduler, MPScheduler
from mrsched_gym.baselines.preemption import PriorityPreemptionScheduler
from mrsched_gym.baselines.ras import RASScheduler
from mrsched_gym.baselines.rds import RDSScheduler
from mrsched_gym.baselines.reverse_adaptive import ReverseAdaptiveScheduler
from mrsched_gym.baselines.simple import (
    ATCScheduler,
    EDFScheduler,
    FIFOScheduler,
    RandomScheduler,
    ReferenceRule,
    SRPTScheduler,
)
from mrsched_gym.baselines.slow_start import EDFSlowStartScheduler, SRPTSlowStartScheduler
from mrsched_gym.baselines.speculation import HadoopSpeculationScheduler, LATEScheduler
from mrsched_gym.frozen import FrozenDict

#: name -> (factory, source) (one explicit table).
BASELINES = FrozenDict({
    "random": RandomScheduler,
    "fifo": FIFOScheduler,
    "fair": FairScheduler,
    "capacity": CapacityScheduler,
    "drf": DRFScheduler,
    "edf": EDFScheduler,
    "mp": MPScheduler,
    "mp+ac": MPAdmissionScheduler,
    "preempt-kill": partial(PriorityPreemptionScheduler, primitive="kill"),
    "preempt-wait": partial(PriorityPreemptionScheduler, primitive="wait"),
    "preempt-suspend": partial(PriorityPreemptionScheduler, primitive="suspend"),
    "rds": RDSScheduler,
    "adaptive": AdaptiveScheduler,
    "adaptive-data": partial(AdaptiveScheduler, affinity="data"),
    "adaptive-hardware": partial(AdaptiveScheduler, affinity="hardware"),
    "ras": RASScheduler,
    "reverse-adaptive": ReverseAdaptiveScheduler,
    "late": LATEScheduler,
    "hadoop-speculative": HadoopSpeculationScheduler,
    "srpt": SRPTScheduler,                      # a reference rule, ranked only when named
    "atc": ATCScheduler,                        # a reference rule, ranked only when named
    "edf-affinity": EDFAffinityScheduler,       # a reference rule, ranked only when named
    "edf-slowstart": EDFSlowStartScheduler,     # a reference rule, ranked only when named
    "srpt-slowstart": SRPTSlowStartScheduler,   # a reference rule, ranked only when named
    "srpt-forecast": SRPTForecastScheduler,     # a reference rule, ranked only when named
})


def _cls(name: str):
    f = BASELINES[name]
    return f.func if isinstance(f, partial) else f


def make_baseline(name: str, **params) -> Scheduler:
    """Instantiate the baseline called ``name`` (with optional parameter overrides, checked by
    :func:`check_parameters`).

    Raises:
        KeyError: An unknown name.
        ValueError, TypeError: A bad parameter (named in the message).
    """
    try:
        factory = BASELINES[name]
    except KeyError:
        raise KeyError(f"unknown baseline {name!r}; known: {', '.join(BASELINES)}") from None
    check_parameters(name, params)
    sched = factory(**params)
    sched.name = name
    return sched


def _is_integer(v) -> bool:
    return isinstance(v, numbers.Integral) and not isinstance(v, (bool, np.bool_))


def _is_number(v) -> bool:
    return isinstance(v, numbers.Real) and not isinstance(v, (bool, np.bool_))


#: The plain types a parameter's annotation may name, and the values each accepts (a bool is
#: not a number here, and a float is not an integer, even 2.0: ``delay=1.5`` must not become 1;
#: numpy's scalars are accepted as the Python types they stand for).
PARAMETER_TYPES = {
    int: (_is_integer, "an integer"),
    float: (_is_number, "a number"),
    bool: (lambda v: isinstance(v, (bool, np.bool_)), "true or false"),
    str: (lambda v: isinstance(v, str), "a string"),
}


def check_parameters(name: str, params: dict) -> None:
    """Check ``params`` against the baseline's constructor: every name is one of its
    parameters, not one its registered name fixes (``preempt-kill`` fixes ``primitive``), and
    every value has the type the parameter is annotated with (``int``, ``float``, ``bool``,
    ``str``, optionally ``| None`` or ``Optional``; other annotations, such as mappings, are the
    constructor's to check).

    Raises:
        TypeError: An unknown or fixed parameter, or a value of the wrong type.
    """
    factory = BASELINES[name]
    fixed = factory.keywords if isinstance(factory, partial) else {}
    check_constructor_parameters(_cls(name), params, name, fixed)


def check_constructor_parameters(cls: type, params: dict, name: str,
                                 fixed: dict | None = None) -> None:
    """:func:`check_parameters` for any scheduler class ``cls`` (errors say ``name``; ``fixed``
    holds the parameters its registered name sets)."""
    import inspect

    fixed = fixed or {}
    # the class's own signature: a compiled class (RAS, Reverse-Adaptive in the compiled build)
    # gives its parameters there, not on its __init__, and keeps no annotations
    sig = inspect.signature(cls)
    try:
        hints = typing.get_type_hints(cls.__init__)
    except TypeError:
        hints = {}
    known = [p for p in sig.parameters.values()
             if p.name != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
             and p.name not in fixed]
    by_name = {p.name: p for p in known}
    for key, value in params.items():
        if key in fixed:
            raise TypeError(f"{name}: parameter {key!r} is set by the name {name!r} "
                            f"({key}={fixed[key]!r})")
        if key not in by_name:
            raise TypeError(f"{name}: unknown parameter {key!r}; known: "
                            f"{', '.join(by_name) or 'none'}")
        hint = hints.get(key)
        members = typing.get_args(hint) if typing.get_origin(hint) in (
            typing.Union, types.UnionType) else (hint,)
        optional = type(None) in members
        plain = [m for m in members if m is not type(None)]
        check = PARAMETER_TYPES.get(plain[0]) if len(plain) == 1 else None
        if check is None or (optional and value is None):
            continue
        accepts, what = check
        if not accepts(value):
            raise TypeError(f"{name}: parameter {key!r} must be {what}, got "
                            f"{type(value).__name__} {value!r}")


def applicable_baselines(scenario) -> list[str]:
    """Names of the baselines that belong in ``scenario``'s leaderboard."""
    return [n for n in BASELINES if _cls(n).applies_to(scenario)]


def is_reference_rule(name: str) -> bool:
    """Whether the baseline called ``name`` is a reference rule (a textbook rule outside the
    classical baselines, :class:`~mrsched_gym.baselines.simple.ReferenceRule`: ranked only when
    named)."""
    return name in BASELINES and issubclass(_cls(name), ReferenceRule)


__all__ = ["BASELINES", "PARAMETER_TYPES", "Scheduler", "applicable_baselines",
           "check_constructor_parameters", "check_parameters",
           "is_reference_rule", "make_baseline"]
