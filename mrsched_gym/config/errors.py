"""The config's error and the checks a section makes beyond its fields' types."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from mrsched_gym.errors import MRSchedError


class ConfigError(MRSchedError, ValueError):
    """A scenario file or object is malformed. The message names the file (if any) and field.

    Attributes:
        keys: The path of the field the error is about, as keys and list indices from the top of
            the data (``("cluster", "nodes", 0, "count")``); ``()`` when unknown. It locates the
            bad value's line in a YAML file.
    """

    def __init__(self, message: str, keys: tuple[str | int, ...] = ()) -> None:
        super().__init__(message)
        self.keys = keys


def check(cond: bool, fld: str, msg: str) -> None:
    """Raise :class:`ConfigError` ``"<fld>: <msg>"`` unless ``cond`` (``fld`` is a field name or
    a dotted path below the section, e.g. ``nodes[0].reduce_slots``)."""
    if not cond:
        raise ConfigError(f"{fld}: {msg}", split_path(fld))


def in_range(value: float, lo: float, hi: float, fld: str, *, lo_open: bool = False) -> None:
    """Check ``lo <= value <= hi`` (``lo < value`` with ``lo_open``), naming the interval."""
    ok = (value > lo if lo_open else value >= lo) and value <= hi and math.isfinite(value)
    bracket = "(" if lo_open else "["
    check(ok, fld, f"must be in {bracket}{lo}, {hi}], got {value!r}")


def lower_bound(value: float, lo: float, fld: str, *, lo_open: bool = False) -> None:
    """Check ``value >= lo`` (``value > lo`` with ``lo_open``): ``"<fld>: must be >= <lo>, got
    <value>"``. The schema reads a call with ``fld`` written out as a bound of that field
    (:func:`mrsched_gym.config.schema.field_checks`)."""
    op = ">" if lo_open else ">="
    check(value > lo if lo_open else value >= lo, fld, f"must be {op} {lo}, got {value!r}")


def exact_keys(mapping: Mapping[str, object], keys: Sequence[str], fld: str) -> None:
    """Check that ``mapping`` has exactly ``keys``, naming the missing and the unknown ones:
    ``"<fld>: needs exactly the keys a, b, c; missing b; unknown x"``."""
    missing = [k for k in keys if k not in mapping]
    unknown = sorted(str(k) for k in mapping if k not in keys)
    msg = f"needs exactly the keys {', '.join(keys)}"
    if missing:
        msg += f"; missing {', '.join(missing)}"
    if unknown:
        msg += f"; unknown {', '.join(unknown)}"
    check(not missing and not unknown, fld, msg)


def split_path(path: str) -> tuple[str | int, ...]:
    """``"nodes[0].count"`` -> ``("nodes", 0, "count")``."""
    out: list[str | int] = []
    for part in path.split("."):
        name, *indices = part.split("[")
        if name:
            out.append(name)
        out.extend(int(i.rstrip("]")) for i in indices if i.rstrip("]").isdigit())
    return tuple(out)


def short(value: Any, limit: int = 60) -> str:
    """``repr(value)`` on one line, cut to ``limit`` characters, for error messages (numpy
    scalars print as plain values)."""
    r = " ".join((str(value) if isinstance(value, np.generic) else repr(value)).split())
    return r if len(r) <= limit else r[: limit - 3] + "..."
