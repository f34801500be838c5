"""Loading a scenario file (a path or a bundled name) and applying overrides to a scenario.

A relative file path inside a scenario file (every ``trace:`` field that is not a bundled trace
name) is read relative to the folder of that scenario file, not the working directory
(:func:`resolve_relative_paths` makes it absolute when the file is loaded); a path given as an
override (``--set workload.trace=...``) is relative to the working directory as usual.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeVar

from mrsched_gym.config.build import from_dict, scenario_from_dict, to_dict
from mrsched_gym.config.errors import ConfigError, short
from mrsched_gym.config.files import config_source, line_of, parse_yaml
from mrsched_gym.config.messages import type_at
from mrsched_gym.config.scenario import Scenario
from mrsched_gym.errors import did_you_mean
from mrsched_gym.models.traces import BUNDLED_TRACES

_T = TypeVar("_T")


def _read_yaml(text: str, source: str) -> Mapping[str, Any]:
    data = parse_yaml(text, source)
    if not isinstance(data, Mapping):
        raise ConfigError(f"{source}: top level must be a mapping of scenario fields, got "
                          f"{short(data)}")
    return data


def load_scenario(path_or_name: str | Path) -> Scenario:
    """Load a scenario from a YAML file path or a bundled scenario name (e.g. ``"hadoop"``).

    Raises:
        ConfigError: A missing, unreadable or malformed file; the message names the file, the
            line (YAML errors, duplicate keys) or the dotted field path.
        InputTypeError: ``path_or_name`` is neither a string nor a path.
    """
    source, text = config_source(path_or_name, "scenarios")
    data = _read_yaml(text, source)
    if not source.startswith("configs/"):                 # a file of the user's
        data = resolve_relative_paths(data, Path(source).parent)
    return from_yaml_data(Scenario, data, text, source)


def from_yaml_data(tp: type[_T], data: Any, text: str, source: str) -> _T:
    """:func:`~mrsched_gym.config.build.from_dict` for data parsed from the YAML ``text``: an
    error names ``source``, the line of the bad value and its dotted field path
    (``bad.yaml: line 3: workload.load: must be in (0.0, 5.0], got -1``).

    Raises:
        ConfigError: The data does not fit ``tp``.
    """
    try:
        return from_dict(tp, data, source)
    except ConfigError as e:
        raise located(e, text, source) from None


def located(e: ConfigError, text: str, source: str) -> ConfigError:
    """``e`` (a message that starts with ``source``) with the line of its field in the YAML
    ``text`` after the source, when the field's line is found (``e`` itself otherwise)."""
    line = line_of(text, e.keys)
    if line is None or not str(e).startswith(f"{source}: "):
        return e
    return ConfigError(f"{source}: line {line}: {str(e)[len(source) + 2:]}", e.keys)


def resolve_relative_paths(data: Any, folder: Path) -> Any:
    """``data`` (a scenario file's plain data) with every relative ``trace:`` path that is not
    a bundled trace name made relative to ``folder`` (the scenario file's folder)."""
    if isinstance(data, Mapping):
        out = {}
        for k, v in data.items():
            if k == "trace" and isinstance(v, str) and v and v not in BUNDLED_TRACES \
                    and not Path(v).is_absolute():
                out[k] = os.path.abspath(folder / v)
            else:
                out[k] = resolve_relative_paths(v, folder)
        return out
    return data


def _set_path(d: dict[str, Any], keys: list[str], value: Any, full: str,
              prefix: tuple[str, ...] = ()) -> None:
    for k in keys[:-1]:
        sub = d.get(k)
        if not isinstance(sub, dict):
            raise ConfigError(f"override {full!r}: {k} is not a section")
        d = sub
    if keys[-1] not in d:
        raise ConfigError(f"override {full!r}: unknown key {keys[-1]!r} (known: "
                          f"{', '.join(sorted(d))})" + did_you_mean(keys[-1], d))
    tp = type_at(Scenario, (*prefix, *keys))
    if isinstance(d[keys[-1]], dict) and isinstance(value, Mapping) and \
            dataclasses.is_dataclass(tp):
        for k, v in value.items():                      # a section: merge field by field
            _set_path(d[keys[-1]], [k], v, f"{full}.{k}", (*prefix, *keys))
    else:
        d[keys[-1]] = value                             # a value or a free-form mapping


def with_overrides(scenario: Scenario, overrides: Mapping[str, Any]) -> Scenario:
    """Return a new scenario with ``overrides`` applied.

    Keys are dotted paths (``"workload.load"``), double-underscore paths (``workload__load``, the
    form ``gymnasium.make`` keyword arguments take) or nested mappings (``{"workload": {...}}``).
    """
    if not overrides:
        return scenario
    d = to_dict(scenario)
    for key, value in overrides.items():
        path = key.replace("__", ".").split(".")
        _set_path(d, path, to_dict(value), key)
    return scenario_from_dict(d, source="overrides")
