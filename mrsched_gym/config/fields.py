"""The field types every config section is declared with, and the checks beyond a type.

Each section is a frozen pydantic dataclass (:func:`section`): pydantic checks a field's declared
type (the aliases below), unknown and missing keys, ``Literal`` choices and nesting, and gives the
JSON Schema; the section's ``__post_init__`` checks ranges and cross-field rules with
:func:`check`, whose :class:`ConfigError` names the field. :mod:`mrsched_gym.config.messages` words
pydantic's errors as the package's messages.

The scalar aliases are strict (a bool is not a number, ``"0.5"`` is not a number, ``2.5`` is not
an integer) and accept numpy scalars (``np.float64(0.9)``, ``np.int64(3)``), as plain Python
values; floats must be finite and at most ``MAX_MAGNITUDE`` (1e12) in magnitude. Sequences
accept lists, tuples and 1-d numpy arrays.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Mapping
from typing import Annotated, Any, TypeVar, cast

import numpy as np
from pydantic import AfterValidator, BeforeValidator, ConfigDict, Strict, ValidationError
from pydantic.dataclasses import dataclass as pydantic_dataclass
from typing_extensions import dataclass_transform

from mrsched_gym.config.errors import ConfigError, short
from mrsched_gym.config.messages import error_of
from mrsched_gym.frozen import FrozenDict


def _plain_scalar(value: Any) -> Any:
    """A numpy scalar as its Python value (``np.bool_`` -> ``bool``), anything else as is."""
    return value.item() if isinstance(value, np.generic) else value


def _sequence(value: Any) -> Any:
    """A 1-d numpy array as a list; a list or tuple as is; anything else is refused."""
    if isinstance(value, np.ndarray) and value.ndim == 1:
        return value.tolist()
    if not isinstance(value, (list, tuple)):
        raise ConfigError(f"expected a list, got {short(value)}")
    return value


def _pair(value: Any) -> Any:
    value = _sequence(value)
    if len(value) != 2:
        raise ConfigError(f"expected 2 values, got {len(value)}")
    return value


def _mapping(value: Any) -> Any:
    """A mapping with its keys as strings (YAML may give ``1:`` for ``"1":``)."""
    if not isinstance(value, Mapping):
        raise ConfigError(f"expected a mapping, got {short(value)}")
    return {str(k): v for k, v in value.items()}


#: The largest magnitude a config number may have: far beyond any real setting (1e12 s is 31,700
#: years), and far enough below the float maximum (about 1.8e308) that the simulator's products
#: and sums of them stay finite: near that maximum a weight, a task's work or a response time
#: overflowed to ``inf`` and the rewards and observations to ``nan``.
MAX_MAGNITUDE = 1e12


def _bounded(value: float) -> float:
    """``value`` if its magnitude is at most :data:`MAX_MAGNITUDE`."""
    if not -MAX_MAGNITUDE <= value <= MAX_MAGNITUDE:
        raise ConfigError(f"must be at most {MAX_MAGNITUDE:g} in magnitude, got {value!r}")
    return value


#: A finite number (int or float; not a bool, not a string) of magnitude at most
#: :data:`MAX_MAGNITUDE`; stored as ``float``.
Float = Annotated[float, Strict(), BeforeValidator(_plain_scalar), AfterValidator(_bounded)]
#: An integer (not a bool, not ``2.0``).
Int = Annotated[int, Strict(), BeforeValidator(_plain_scalar)]
#: ``true`` or ``false``.
Bool = Annotated[bool, Strict(), BeforeValidator(_plain_scalar)]
#: A string.
Text = Annotated[str, Strict()]
#: Two finite numbers (a list of two in YAML).
FloatPair = Annotated[tuple[Float, Float], BeforeValidator(_pair)]
#: A mapping of names to finite numbers, stored read-only.
FloatMap = Annotated[Mapping[str, Float], BeforeValidator(_mapping),
                     AfterValidator(lambda d: FrozenDict(d))]
#: A mapping of names to strings, stored read-only.
TextMap = Annotated[Mapping[str, Text], BeforeValidator(_mapping),
                    AfterValidator(lambda d: FrozenDict(d))]

#: Marks a variable-length tuple field (``Annotated[tuple[X, ...], AS_LIST]``): a list in YAML;
#: lists, tuples and 1-d numpy arrays are accepted.
AS_LIST = BeforeValidator(_sequence)

_T = TypeVar("_T")


#: What every section is validated with: unknown keys are errors, floats must be finite, and an
#: instance of a section is taken as it is (it was checked when it was made).
SECTION_CONFIG = ConfigDict(extra="forbid", allow_inf_nan=False, revalidate_instances="never")


@dataclass_transform(frozen_default=True, field_specifiers=(dataclasses.field,))
def section(cls: type[_T]) -> type[_T]:
    """Make ``cls`` a frozen, validated config section (a pydantic dataclass: still a dataclass,
    picklable, hashable, ``dataclasses.replace`` re-validates).

    Building a section directly (``NodeGroup(count=0)``, ``dataclasses.replace``) raises
    :class:`ConfigError` with the package's message, as building it from data does.
    """
    out: Any = pydantic_dataclass(frozen=True, config=SECTION_CONFIG)(cls)
    validated_init: Callable[..., None] = out.__init__

    @functools.wraps(validated_init)
    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        try:
            validated_init(self, *args, **kwargs)
        except ValidationError as e:
            raise error_of(e, type(self)) from None

    out.__init__ = __init__
    return cast(type[_T], out)
