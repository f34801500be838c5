"""An immutable, hashable, picklable mapping (``types.MappingProxyType`` cannot be pickled)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any


class FrozenDict(Mapping):
    """A read-only dict for frozen configs and tables."""

    __slots__ = ("_d",)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        object.__setattr__(self, "_d", dict(*args, **kwargs))

    def __getitem__(self, key: Any) -> Any:
        return self._d[key]

    def __iter__(self) -> Iterator:
        return iter(self._d)

    def __len__(self) -> int:
        return len(self._d)

    def __hash__(self) -> int:
        return hash(tuple(sorted(self._d.items(), key=repr)))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Mapping) and dict(self._d) == dict(other)

    def __repr__(self) -> str:
        return f"FrozenDict({self._d!r})"

    def __reduce__(self):
        return (FrozenDict, (self._d,))

    def __deepcopy__(self, memo: dict) -> FrozenDict:
        return self

    def __copy__(self) -> FrozenDict:
        return self
