"""The small strict builder kept for plain (standard-library) dataclasses: the training config
(``mrsched_gym.agents.training.train.TrainConfig``) and the reproduction files
(``mrsched_gym.reproduce.ReproductionFile``).

pydantic checks a plain dataclass's ``int``, ``float``, ``bool`` and ``str`` fields in its lax
mode (``"3"`` for an int, ``1`` for a bool) and its strict mode refuses a mapping for a nested
dataclass, so these files, declared with plain types by their own modules, are read here with the
rules the scenario's sections get from :mod:`mrsched_gym.config.fields`: types checked, bools not
numbers, numpy scalars accepted, unknown keys refused with the known ones listed.
"""

from __future__ import annotations

import collections.abc
import dataclasses
import numbers
import types
import typing
from collections.abc import Mapping
from typing import Any, Literal, Union, cast

import numpy as np

from mrsched_gym.config.errors import ConfigError, short, split_path
from mrsched_gym.frozen import FrozenDict


def is_number(value: Any) -> bool:
    """A real number that is not a bool (numpy scalars included)."""
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


def is_integer(value: Any) -> bool:
    """An integer that is not a bool (numpy integer scalars included)."""
    return isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))


def build_plain(tp: type, data: Any) -> Any:
    """Plain data -> the plain dataclass ``tp``; a :class:`ConfigError` carries the field's
    path as keys (every message here starts with the dotted path).

    Raises:
        ConfigError: The data does not fit ``tp``.
    """
    try:
        return build(tp, data, "")
    except ConfigError as e:
        raise ConfigError(str(e), split_path(str(e).split(": ", 1)[0])) from None


def build(tp: Any, value: Any, path: str) -> Any:
    """Plain data at ``path`` as type ``tp``: converts, checks types, names the path in errors.

    Numbers accept numpy scalars (``np.float64(0.9)``, ``np.int64(3)``) but never bools; lists
    accept 1-d numpy arrays. Ranges and choices are checked by the dataclasses themselves.
    """
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin in (Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        inner = [a for a in args if a is not type(None)]
        return build(inner[0], value, path)
    if dataclasses.is_dataclass(tp):
        return _build_dataclass(cast(type, tp), value, path)
    if origin is Literal:
        return str(value) if isinstance(value, str) else value    # checked by the class
    if origin is tuple:
        if isinstance(value, np.ndarray) and value.ndim == 1:
            value = value.tolist()
        if not isinstance(value, (list, tuple)):
            raise ConfigError(f"{path}: expected a list, got {short(value)}")
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(build(args[0], v, f"{path}[{i}]") for i, v in enumerate(value))
        if len(value) != len(args):
            raise ConfigError(f"{path}: expected {len(args)} values, got {len(value)}")
        return tuple(build(a, v, f"{path}[{i}]")
                     for i, (a, v) in enumerate(zip(args, value, strict=False)))
    if origin is list:
        if isinstance(value, np.ndarray) and value.ndim == 1:
            value = value.tolist()
        if not isinstance(value, (list, tuple)):
            raise ConfigError(f"{path}: expected a list, got {short(value)}")
        return [build(args[0] if args else Any, v, f"{path}[{i}]") for i, v in enumerate(value)]
    if origin in (collections.abc.Mapping, dict) or tp is Mapping:
        if not isinstance(value, Mapping):
            raise ConfigError(f"{path}: expected a mapping, got {short(value)}")
        vt = args[1] if args else Any
        items = {str(k): build(vt, v, f"{path}.{k}") for k, v in value.items()}
        return items if origin is dict else FrozenDict(items)   # a plain dict where declared
    return _build_scalar(tp, value, path)


def _build_dataclass(tp: type, value: Any, path: str) -> Any:
    """A config section from a mapping: unknown keys are refused, listing the known ones."""
    if isinstance(value, tp):
        return value
    if not isinstance(value, Mapping):
        raise ConfigError(f"{path or 'scenario'}: expected a mapping, got {short(value)}")
    hints = typing.get_type_hints(tp)
    names = {f.name for f in dataclasses.fields(tp)}
    unknown = sorted((k for k in value if k not in names), key=str)
    if unknown:
        raise ConfigError(f"{path + '.' if path else ''}{unknown[0]}: unknown key "
                          f"(known: {', '.join(sorted(names))})")
    missing = [f.name for f in dataclasses.fields(tp) if f.name not in value
               and f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING]
    if missing:
        raise ConfigError(f"{path + '.' if path else ''}{missing[0]}: required")
    kwargs = {k: build(hints[k], v, f"{path}.{k}" if path else k) for k, v in value.items()}
    try:
        return tp(**kwargs)
    except ConfigError as e:
        raise ConfigError(f"{path + '.' if path else ''}{e}") from None


def _build_scalar(tp: Any, value: Any, path: str) -> Any:
    """A bool, int, float or str field; numpy scalars become their Python equivalents."""
    if tp is bool:
        if not isinstance(value, (bool, np.bool_)):
            raise ConfigError(f"{path}: expected true/false, got {short(value)}")
        return bool(value)
    if tp is int:
        if not is_integer(value):
            raise ConfigError(f"{path}: expected an integer, got {short(value)}")
        return int(value)
    if tp is float:
        if not is_number(value):
            raise ConfigError(f"{path}: expected a number, got {short(value)}")
        try:
            return float(value)
        except OverflowError:
            raise ConfigError(f"{path}: {short(value)} is too large for a number") from None
    if tp is str:
        if not isinstance(value, str):
            raise ConfigError(f"{path}: expected a string, got {short(value)}")
        return str(value)
    return value
