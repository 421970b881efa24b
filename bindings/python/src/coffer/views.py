"""SortedValues: a list property of values seen sorted and/or distinct,
as Realm's `list.sorted(ascending:)` and `list.distinct()`, readable as a
sequence and observable (rows are positions of the list, so a value
replaced in place is a modification, and one that moves in the sorted
order a deletion plus an insertion, as realm-core reports it)."""

from __future__ import annotations

import asyncio
import collections.abc
from typing import Any, Callable, Iterator, List, Optional, Sequence, Tuple, Union, overload

from . import _capi, observing
from .changes import CollectionChange
from .errors import InvalidArgumentError
from .notifications import ChangeStream, NotificationToken


def _self_only(key_paths: Sequence[Any], what: str) -> None:
    for path in key_paths:
        if path != "self":
            raise InvalidArgumentError(
                f"{what}: a list of values is {what.split('(')[0]}ed by its values, \"self\", not {path!r}"
            )


def _sort_key(value: Any) -> Tuple[bool, Any]:
    # None first, as the library's SORT orders values.
    return (value is not None, value)


class SortedValues(collections.abc.Sequence):  # type: ignore[type-arg]
    """The values of a list property seen distinct (equal values once, the
    first in the list's order) and then sorted (stably), live: reading it
    reads the list's current values."""

    def __init__(self, values: Any, order: int = _capi.SORT_NONE, distinct: bool = False) -> None:
        self._values = values
        self._order = order
        self._distinct = distinct

    def sorted(self, prop: Union[str, Sequence[Any]] = "self", ascending: bool = True) -> "SortedValues":
        """These values sorted, smallest first unless `ascending` is False.
        `prop` may only be "self" (or [("self", ascending)])."""
        if not isinstance(prop, str):
            keys = list(prop)
            if len(keys) != 1:
                raise InvalidArgumentError("sorted(): a list of values sorts by one key, \"self\"")
            prop, ascending = keys[0] if isinstance(keys[0], tuple) else (keys[0], ascending)
        _self_only([prop], "sorted()")
        order = _capi.SORT_ASCENDING if ascending else _capi.SORT_DESCENDING
        return SortedValues(self._values, order, self._distinct)

    def distinct(self, *key_paths: str) -> "SortedValues":
        """These values with equal ones once (the first in the list's order).
        `key_paths` may only be "self"."""
        _self_only(key_paths, "distinct()")
        return SortedValues(self._values, self._order, True)

    def _rows(self) -> List[Any]:
        values = list(self._values)
        if self._distinct:
            kept: List[Any] = []
            for value in values:
                if not any(type(value) is type(seen) and value == seen for seen in kept):
                    kept.append(value)
            values = kept
        if self._order != _capi.SORT_NONE:
            values.sort(key=_sort_key, reverse=self._order == _capi.SORT_DESCENDING)
        return values

    def __len__(self) -> int:
        return len(self._rows())

    @overload
    def __getitem__(self, index: int) -> Any: ...

    @overload
    def __getitem__(self, index: slice) -> List[Any]: ...

    def __getitem__(self, index: Union[int, slice]) -> Any:
        return self._rows()[index]

    def __iter__(self) -> Iterator[Any]:
        return iter(self._rows())

    def __repr__(self) -> str:
        return f"<coffer.SortedValues {self._rows()!r}>"

    def observe(self, callback: Callable[[CollectionChange], None],
                loop: Optional[asyncio.AbstractEventLoop] = None) -> NotificationToken:
        """Calls `callback(change)` with a coffer.CollectionChange each time
        these values change: first with `initial` True, then with the rows
        deleted, inserted and modified in this order (never moves). When
        the owning object is deleted the last call has `root_deleted` True.
        See the coffer module for threads and loops. Keep the token:
        collecting it stops the observer."""
        values = self._values
        return observing.observe_list_values(values._db, values._info, values._key, values._prop, self._order,
                                             self._distinct, callback, loop)

    def changes(self) -> "ChangeStream[CollectionChange]":
        """The changes of observe() as an async iterator on the running loop."""
        return ChangeStream(lambda put, loop: self.observe(put, loop))
