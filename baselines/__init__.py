"""Classical schedulers as fixed-policy baselines, registered by name in :data:`BASELINES`.

Every entry is a zero-argument factory returning a fresh :class:`Scheduler` with the paper's
default parameters; :func:`make_baseline` also accepts keyword overrides
(``make_baseline("fair", delay=0)``).
"""

from functools import partial

from mrsched_gym.baselines.adaptive import AdaptiveScheduler, RASScheduler, ReverseAdaptiveScheduler
from mrsched_gym.baselines.affinity import EDFAffinityScheduler
from mrsched_gym.baselines.base import Scheduler
from mrsched_gym.baselines.fair import CapacityScheduler, DRFScheduler, FairScheduler
from mrsched_gym.baselines.mimp import MPAdmissionScheduler, MPScheduler
from mrsched_gym.baselines.preemption import PriorityPreemptionScheduler
from mrsched_gym.baselines.rds import RDSScheduler
from mrsched_gym.baselines.simple import (
    ATCScheduler,
    EDFScheduler,
    FIFOScheduler,
    RandomScheduler,
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
})


def _cls(name: str):
    f = BASELINES[name]
    return f.func if isinstance(f, partial) else f


def make_baseline(name: str, **params) -> Scheduler:
    """Instantiate the baseline called ``name`` (with optional parameter overrides)."""
    try:
        factory = BASELINES[name]
    except KeyError:
        raise KeyError(f"unknown baseline {name!r}; known: {', '.join(BASELINES)}") from None
    sched = factory(**params)
    sched.name = name
    return sched


def applicable_baselines(scenario) -> list[str]:
    """Names of the baselines that belong in ``scenario``'s leaderboard (SPEC 4)."""
    return [n for n in BASELINES if _cls(n).applies_to(scenario)]


__all__ = ["BASELINES", "Scheduler", "applicable_baselines", "make_baseline"]
