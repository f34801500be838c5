"""pydantic's validation errors as the package's messages: the dotted field path and what was
wrong, in the words the hand-written builder used (``workload.load: expected a number, got
'0.5'``), with the path as keys for the YAML line (:attr:`ConfigError.keys`)."""

from __future__ import annotations

import dataclasses
import types
import typing
from typing import Any, Union

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from mrsched_gym.config.errors import ConfigError, short
from mrsched_gym.errors import did_you_mean

_MAPPING_ERRORS = {"dataclass_type", "dataclass_args_type", "dict_type", "mapping_type",
                   "model_type", "model_attributes_type"}
_WORDS = {
    "int_type": "expected an integer", "int_from_float": "expected an integer",
    "int_parsing": "expected an integer", "bool_type": "expected true/false",
    "bool_parsing": "expected true/false", "string_type": "expected a string",
    "tuple_type": "expected a list", "list_type": "expected a list",
}


def dotted(keys: tuple[str | int, ...]) -> str:
    """``("cluster", "nodes", 0, "count")`` -> ``"cluster.nodes[0].count"``."""
    out = ""
    for k in keys:
        out += f"[{k}]" if isinstance(k, int) else (f".{k}" if out else str(k))
    return out


def _strip(tp: Any) -> Any:
    """The type inside ``Annotated`` and ``Optional``."""
    while True:
        if typing.get_origin(tp) is typing.Annotated:
            tp = typing.get_args(tp)[0]
        elif typing.get_origin(tp) in (Union, types.UnionType):
            tp = [a for a in typing.get_args(tp) if a is not type(None)][0]
        else:
            return tp


def type_at(tp: Any, keys: tuple[str | int, ...]) -> Any:
    """The declared type at ``keys`` below the config class ``tp`` (``None`` off the schema)."""
    for k in keys:
        tp = _strip(tp)
        if dataclasses.is_dataclass(tp) and isinstance(k, str):
            tp = typing.get_type_hints(tp, include_extras=True).get(k)
        elif typing.get_origin(tp) in (tuple, list) and isinstance(k, int):
            args = typing.get_args(tp)
            tp = args[0] if len(args) == 2 and args[1] is Ellipsis else (
                args[k] if k < len(args) else None)
        else:
            return None
    return _strip(tp)


def _unknown_key(top: type, loc: tuple[str | int, ...]) -> str:
    owner = type_at(top, loc[:-1])
    known = sorted(f.name for f in dataclasses.fields(owner)) if dataclasses.is_dataclass(
        owner) else []
    return f"unknown key (known: {', '.join(known)})" + did_you_mean(str(loc[-1]), known)


def message(err: ErrorDetails, top: type) -> tuple[str, tuple[str | int, ...]]:
    """``(message, keys)`` of one pydantic error on data for the config class ``top``."""
    loc = tuple(k for k in err["loc"] if k != "[key]")
    kind, value = err["type"], err.get("input")
    cause = (err.get("ctx") or {}).get("error")
    if kind in ("value_error", "assertion_error") and cause is not None:
        inner = getattr(cause, "keys", ())
        text = str(cause)
        if not loc:
            return text, inner
        return f"{dotted(loc)}{'.' if inner else ': '}{text}", loc + inner
    if kind == "invalid_key" and loc:                # a key that is not a string (``1: 2``)
        loc = (*loc[:-1], str(loc[-1]))
        kind = "extra_forbidden"
    if kind in ("unexpected_keyword_argument", "extra_forbidden"):
        text = _unknown_key(top, loc)
    elif kind in ("missing", "missing_argument", "missing_keyword_only_argument"):
        text = "required"
    elif kind == "literal_error":
        choices = (err.get("ctx") or {}).get("expected", "")
        choices = ", ".join(repr(c) for c in typing.get_args(type_at(top, loc))) or choices
        if loc and isinstance(loc[-1], int):        # an item of a list of choices
            return (f"{dotted(loc[:-1])}: unknown value {value!r}; allowed: {choices}", loc)
        text = f"must be one of {choices}; got {value!r}"
    elif kind == "finite_number":
        text = f"must be a finite number, got {value!r}"
    elif kind in ("float_type", "float_parsing"):
        text = (f"{short(value)} is too large for a number" if isinstance(value, int)
                and not isinstance(value, bool) else f"expected a number, got {short(value)}")
    elif kind in _MAPPING_ERRORS:
        text = f"expected a mapping, got {short(value)}"
    elif kind in ("too_short", "too_long"):
        ctx = err.get("ctx") or {}
        text = f"expected {ctx.get('max_length', ctx.get('min_length'))} values, got " \
               f"{ctx.get('actual_length')}"
    elif kind in _WORDS:
        text = f"{_WORDS[kind]}, got {short(value)}"
    else:
        text = f"{err['msg']}, got {short(value)}"
    return (f"{dotted(loc)}: {text}" if loc else f"{top.__name__}: {text}"), loc


def error_of(e: ValidationError, top: type) -> ConfigError:
    """The :class:`ConfigError` of the first error of ``e`` (validating data for ``top``)."""
    text, keys = message(e.errors()[0], top)
    return ConfigError(text, keys)
