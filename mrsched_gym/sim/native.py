"""``mypyc_attr``: the class decorator the optional compiled build (``setup.py``, mypyc) reads.

The simulator's classes are marked ``@mypyc_attr(serializable=True)`` so that, compiled, they
copy and pickle as they do in Python (``copy.deepcopy`` of a simulator: the rollout teachers;
pickling: worker processes): a compiled class otherwise runs ``__init__`` when it is copied.
Without mypy installed (the default, pure-Python install) the decorator does nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

try:
    from mypy_extensions import mypyc_attr
except ImportError:  # pragma: no cover - the pure-Python install without mypy
    def mypyc_attr(*attrs: str, **kwattrs: object) -> Callable[[T], T]:
        """Nothing to do in Python: the attributes are for the compiler."""
        def keep(cls: T) -> T:
            return cls
        return keep

__all__ = ["mypyc_attr"]
