"""Plain data (a parsed YAML mapping, ``gym.make`` keyword arguments) -> config objects, and back.

Scenario sections are pydantic dataclasses (:mod:`mrsched_gym.config.fields`): pydantic
validates the data and :mod:`mrsched_gym.config.messages` words its first error. Plain
dataclasses (training configs, reproduction files) go through :mod:`mrsched_gym.config.plain`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, TypeVar, cast

from pydantic import ValidationError
from pydantic.dataclasses import is_pydantic_dataclass

from mrsched_gym.config.errors import ConfigError
from mrsched_gym.config.messages import error_of
from mrsched_gym.config.plain import build_plain
from mrsched_gym.config.scenario import Scenario

_T = TypeVar("_T")


def from_dict(tp: type[_T], data: Any, source: str = "<dict>") -> _T:
    """The strict builder: plain data (a parsed YAML mapping) -> the config dataclass ``tp``.

    One entry for every config of the package (scenarios, training configs, reproduction
    files): field types convert and check the values (``Literal`` choices, numbers, lists,
    nested dataclasses), unknown keys are refused with the known ones listed, and errors name
    ``source`` and the dotted field path (:attr:`ConfigError.keys` holds the path as keys).

    Raises:
        ConfigError: The data does not fit ``tp``.
    """
    try:
        if is_pydantic_dataclass(tp):
            if isinstance(data, tp):
                return cast(_T, data)
            try:
                return cast(_T, tp.__pydantic_validator__.validate_python(plain_mappings(data)))
            except ValidationError as e:
                raise error_of(e, tp) from None
        return cast(_T, build_plain(tp, data))
    except ConfigError as e:
        raise ConfigError(f"{source}: {e}", e.keys) from None


def plain_mappings(data: Any) -> Any:
    """``data`` with every mapping as a ``dict`` (pydantic takes only dicts for a section; the
    builder takes any mapping: a ``FrozenDict``, a ``MappingProxyType``)."""
    if isinstance(data, Mapping):
        return {k: plain_mappings(v) for k, v in data.items()}
    if isinstance(data, list):
        return [plain_mappings(v) for v in data]
    if isinstance(data, tuple):
        return tuple(plain_mappings(v) for v in data)
    return data


def scenario_from_dict(data: Mapping[str, Any], *, source: str = "<dict>") -> Scenario:
    """Build a :class:`Scenario` from plain data, naming ``source`` in any error."""
    return from_dict(Scenario, data, source)


def to_dict(obj: Any) -> Any:
    """Plain-data form of a config object (round-trips through :func:`scenario_from_dict`)."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: to_dict(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, Mapping):
        return {k: to_dict(v) for k, v in obj.items()}
    if isinstance(obj, tuple):
        return [to_dict(v) for v in obj]
    return obj

