"""mrsched_gym: a Gymnasium environment for scheduling MapReduce jobs on a simulated Hadoop cluster.

Importing the package registers the ``mrsched/*`` ids with Gymnasium (no other side effects;
with a compiled build it first checks that build against its sources, :mod:`mrsched_gym.compiled`).
"""

from mrsched_gym.compiled import acceleration  # first: checks a compiled build on import
from mrsched_gym.config import ConfigError, Scenario, load_scenario, with_overrides
from mrsched_gym.policies import (
    ModelPolicy,
    ObservationFunction,
    ObservationPolicy,
    PolicyLike,
    Resettable,
    RulePolicy,
    as_policy,
)
from mrsched_gym.registration import ENV_IDS, register_envs

# The one version source: pyproject.toml reads it statically, importlib.metadata reports it.
__version__ = "0.4.0"

register_envs()

__all__ = ["ConfigError", "ENV_IDS", "ModelPolicy", "ObservationFunction", "ObservationPolicy",
           "PolicyLike", "Resettable", "RulePolicy", "Scenario", "acceleration", "as_policy",
           "load_scenario", "with_overrides", "__version__"]
