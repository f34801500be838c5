"""Scenario configuration: frozen, typed dataclasses; YAML is only their file format.

A scenario is everything that defines a world: the cluster, the interactive services, availability,
the workload, which decision kinds the policy gets, the reward and the episode limit. Unknown keys
and bad values raise :class:`ConfigError` naming the file and the dotted field path:

* every float field must be a finite number (``.inf`` and ``.nan`` are refused), every field has
  its declared type (bools are not numbers; numpy scalars are accepted), and fields with a fixed
  set of values are ``Literal`` types (a typo such as ``accelerator: cel`` is refused);
* a key repeated in one YAML mapping is an error naming the key and the line
  (:class:`UniqueKeyLoader`);
* a scenario whose episode would exhaust memory or time is refused with the numbers and the
  limit (:func:`episode_size`, ``MAX_*`` below).

Load with :func:`load_scenario` (a path or a bundled name such as ``"hadoop"``); apply overrides
with :func:`with_overrides` (``{"workload": {"load": 0.8}}`` or ``{"workload.load": 0.8}``). A bad
value in a file is reported with the file, its line and the dotted field path.

The package, by seam: the sections (:mod:`~mrsched_gym.config.cluster`,
:mod:`~mrsched_gym.config.services`, :mod:`~mrsched_gym.config.workload`,
:mod:`~mrsched_gym.config.decisions`, :mod:`~mrsched_gym.config.scenario`) are frozen pydantic
dataclasses declared with the field types of :mod:`~mrsched_gym.config.fields`; the episode-size
limits are :mod:`~mrsched_gym.config.limits` (with :mod:`~mrsched_gym.config.sizing`); data ->
objects is :mod:`~mrsched_gym.config.build` (messages: :mod:`~mrsched_gym.config.messages`);
files, YAML and bundled names are :mod:`~mrsched_gym.config.files`; loading and overrides are
:mod:`~mrsched_gym.config.loading`; the JSON Schema of scenario files is
:mod:`~mrsched_gym.config.schema`. Every public name is importable from ``mrsched_gym.config``.
"""

from __future__ import annotations

from mrsched_gym.config.build import from_dict, scenario_from_dict, to_dict
from mrsched_gym.config.cluster import ClusterConfig, NodeGroup
from mrsched_gym.config.decisions import (
    COMPONENT_METRICS,
    REWARD_COMPONENTS,
    DecisionConfig,
    PreemptionConfig,
    RewardConfig,
    SpeculationConfig,
)
from mrsched_gym.config.errors import ConfigError
from mrsched_gym.config.files import (
    CONFIG_KINDS,
    UniqueKeyLoader,
    bundled_names,
    bundled_scenarios,
    config_source,
    line_of,
    parse_yaml,
    read_text_file,
    unknown_name_hint,
)
from mrsched_gym.config.limits import (
    MAX_NODE_DECISIONS,
    MAX_NODES,
    MAX_PERIODIC_STEPS,
    MAX_TASKS,
    MAX_TIME_LIMIT_S,
    MAX_TIMELINE_CELLS,
    episode_size,
)
from mrsched_gym.config.loading import (
    from_yaml_data,
    load_scenario,
    located,
    resolve_relative_paths,
    with_overrides,
)
from mrsched_gym.config.scenario import Scenario
from mrsched_gym.config.services import AvailabilityConfig, InterferenceConfig
from mrsched_gym.config.workload import JobSpec, WorkloadConfig

__all__ = [
    "COMPONENT_METRICS", "CONFIG_KINDS", "MAX_NODES", "MAX_NODE_DECISIONS", "MAX_PERIODIC_STEPS",
    "MAX_TASKS", "MAX_TIMELINE_CELLS", "MAX_TIME_LIMIT_S", "REWARD_COMPONENTS",
    "AvailabilityConfig", "ClusterConfig", "ConfigError", "DecisionConfig", "InterferenceConfig",
    "JobSpec", "NodeGroup", "PreemptionConfig", "RewardConfig", "Scenario", "SpeculationConfig",
    "UniqueKeyLoader", "WorkloadConfig", "bundled_names", "bundled_scenarios", "config_source",
    "episode_size", "from_dict", "from_yaml_data", "line_of", "load_scenario", "located",
    "parse_yaml", "read_text_file", "resolve_relative_paths", "scenario_from_dict", "to_dict",
    "unknown_name_hint", "with_overrides",
]
