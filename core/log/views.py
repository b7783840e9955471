"""Read-only views of the first n items of a sequence that only grows: items made when
they are first read (a log's events, a replay's message views)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TypeVar, overload

T = TypeVar("T")


class PrefixView(Sequence[T]):
    """The first `n` items, item i made by `_item(i)`; equal to any sequence of equal
    items, unhashable like a list."""

    __slots__ = ("_n",)

    def __init__(self, n: int) -> None:
        self._n = n

    def _item(self, i: int) -> T:
        raise NotImplementedError

    def __len__(self) -> int:
        return self._n

    @overload
    def __getitem__(self, index: int) -> T: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[T, ...]: ...
    def __getitem__(self, index: int | slice) -> T | tuple[T, ...]:
        if isinstance(index, slice):
            return tuple(self._item(i) for i in range(*index.indices(self._n)))
        return self._item(position(index, self._n))

    def __iter__(self) -> Iterator[T]:
        item = self._item
        for i in range(self._n):
            yield item(i)

    def __reversed__(self) -> Iterator[T]:
        item = self._item
        for i in range(self._n - 1, -1, -1):
            yield item(i)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, str | bytes):
            return NotImplemented
        return len(other) == self._n and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]


def position(index: int, n: int) -> int:
    """`index` into a sequence of n items as a position 0..n-1 (negative counts back)."""
    at = index + n if index < 0 else index
    if not 0 <= at < n:
        raise IndexError("index out of range")
    return at
