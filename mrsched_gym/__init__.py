"""mrsched_gym: a Gymnasium environment for scheduling MapReduce jobs on a simulated Hadoop cluster.

Importing the package registers the ``mrsched/*`` ids with Gymnasium (no other side effects;
with a compiled build it first checks that build against its sources, :mod:`mrsched_gym.compiled`).
"""

from mrsched_gym import old_names

old_names.install()  # first: the import paths of modules that moved in 0.4.0 keep working

from mrsched_gym.compiled import acceleration  # noqa: E402  checks a compiled build on import
from mrsched_gym.config import ConfigError, Scenario, load_scenario, with_overrides  # noqa: E402
from mrsched_gym.policy.contract import (  # noqa: E402
    ModelPolicy,
    ObservationFunction,
    ObservationPolicy,
    PolicyLike,
    Resettable,
    RulePolicy,
    as_policy,
)
from mrsched_gym.registration import ENV_IDS, register_envs  # noqa: E402

# The one version source: pyproject.toml reads it statically, importlib.metadata reports it.
__version__ = "0.4.0"

register_envs()

__all__ = ["ConfigError", "ENV_IDS", "ModelPolicy", "ObservationFunction", "ObservationPolicy",
           "PolicyLike", "Resettable", "RulePolicy", "Scenario", "acceleration", "as_policy",
           "load_scenario", "with_overrides", "__version__"]
