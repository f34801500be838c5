"""Classical schedulers as fixed-policy baselines, registered by name in :data:`BASELINES`."""

from mrsched_gym.frozen import FrozenDict

from mrsched_gym.baselines.base import Scheduler
from mrsched_gym.baselines.simple import EDFScheduler, FIFOScheduler, RandomScheduler

#: name -> scheduler class (one explicit table).
BASELINES = FrozenDict({
    "random": RandomScheduler,
    "fifo": FIFOScheduler,
    "edf": EDFScheduler,
})


def make_baseline(name: str) -> Scheduler:
    """Instantiate the baseline called ``name``."""
    try:
        return BASELINES[name]()
    except KeyError:
        raise KeyError(f"unknown baseline {name!r}; known: {', '.join(BASELINES)}") from None


__all__ = ["BASELINES", "Scheduler", "make_baseline"]
