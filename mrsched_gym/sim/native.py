"""What lets the simulator's classes copy and pickle alike in Python and in the optional
compiled build (``setup.py``, mypyc): ``copy.deepcopy`` of a simulator (the rollout teachers)
and pickles (worker processes).

A compiled class runs ``__init__`` whenever it is created, copies included, unless it is marked
``@mypyc_attr(allow_interpreted_subclasses=True)`` (then it is created as a Python class is); a
frozen dataclass, whose copy cannot set its fields after creation, is rebuilt from its fields
instead (:func:`rebuild_args`, from its ``__reduce__``). Without mypy installed (the default,
pure-Python install) the decorator does nothing.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

try:
    from mypy_extensions import mypyc_attr
except ImportError:  # pragma: no cover - the pure-Python install without mypy
    def mypyc_attr(*attrs: str, **kwattrs: object) -> Callable[[T], T]:
        """Nothing to do in Python: the attributes are for the compiler."""
        def keep(cls: T) -> T:
            return cls
        return keep



def rebuild_args(obj: Any) -> tuple[Any, tuple[Any, ...]]:
    """``__reduce__`` of a frozen dataclass: its class and its fields in order (copies and
    unpickling call the constructor, as a compiled class requires)."""
    return type(obj), tuple(getattr(obj, f.name) for f in dataclasses.fields(obj))


__all__ = ["mypyc_attr", "rebuild_args"]
