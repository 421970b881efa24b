"""Results: the objects of a class (later: of a query), read from the
database's current snapshot."""

from __future__ import annotations

import ctypes
from typing import TYPE_CHECKING, Iterator, List, Optional, Sequence, TypeVar, Union, overload

from . import _capi
from .errors import Status

if TYPE_CHECKING:
    from .database import Database, _ClassInfo
    from .model import Object

T = TypeVar("T", bound="Object")


class ClassSource:
    """Every object of one class, in creation order. A query result will be
    another source with the same three methods."""

    def __init__(self, info: "_ClassInfo") -> None:
        self.info = info

    def count(self, txn: _capi.TxnP) -> int:
        n = ctypes.c_uint64()
        _capi.coffer_class_count(txn, self.info.class_id, ctypes.byref(n))
        return n.value

    def keys(self, txn: _capi.TxnP) -> List[int]:
        it = _capi.IterP()
        _capi.coffer_class_iterate(txn, self.info.class_id, ctypes.byref(it))
        keys = []
        try:
            obj = _capi.ObjectP()
            while _capi.coffer_iter_next(it, ctypes.byref(obj)) == Status.OK:
                keys.append(_capi.coffer_object_key_of(obj))
        finally:
            _capi.coffer_iter_free(it)
        return keys

    def delete_all(self, txn: _capi.TxnP) -> None:
        _capi.coffer_class_clear(txn, self.info.class_id)


class BacklinkSource:
    """The objects of class `origin` that link to one object through
    origin property `prop_id`, in order of origin key (an origin that links
    n times appears n times)."""

    def __init__(self, db: "Database", info: "_ClassInfo", key: int, origin: "_ClassInfo", prop_id: int) -> None:
        self.db = db
        self.info = info
        self.key = key
        self.origin = origin
        self.prop_id = prop_id

    def count(self, txn: _capi.TxnP) -> int:
        n = ctypes.c_uint64()
        handle = self.db._handle(txn, self.info, self.key)
        try:
            _capi.coffer_object_backlink_count_from(handle, self.origin.class_id, self.prop_id, ctypes.byref(n))
        finally:
            _capi.coffer_object_release(handle)
        return n.value

    def keys(self, txn: _capi.TxnP) -> List[int]:
        handle = self.db._handle(txn, self.info, self.key)
        it = _capi.IterP()
        keys = []
        try:
            _capi.coffer_object_backlinks_from(handle, self.origin.class_id, self.prop_id, ctypes.byref(it))
            obj = _capi.ObjectP()
            while _capi.coffer_iter_next(it, ctypes.byref(obj)) == Status.OK:
                keys.append(_capi.coffer_object_key_of(obj))
        finally:
            _capi.coffer_iter_free(it)
            _capi.coffer_object_release(handle)
        return keys

    def delete_all(self, txn: _capi.TxnP) -> None:
        for key in dict.fromkeys(self.keys(txn)):
            origin = self.db._handle(txn, self.origin, key)
            try:
                _capi.coffer_object_delete(origin)
            finally:
                _capi.coffer_object_release(origin)


class Results(Sequence[T]):
    """A sequence of objects. Its contents come from the database's current
    snapshot: they change when the database writes or is refreshed, and stay
    fixed while one iteration runs."""

    def __init__(self, db: "Database", info: "_ClassInfo", source: Union[ClassSource, BacklinkSource]) -> None:
        self._db = db
        self._info = info
        self._source = source
        self._keys: Optional[List[int]] = None
        self._generation = -1

    def _fresh_keys(self) -> Optional[List[int]]:
        self._db._txn()  # checks that the database is open; may start a new snapshot
        if self._keys is not None and self._generation == self._db._generation:
            return self._keys
        return None

    def _snapshot(self) -> List[int]:
        keys = self._fresh_keys()
        if keys is None:
            keys = self._source.keys(self._db._txn())
            self._keys = keys
            self._generation = self._db._generation
        return keys

    def __len__(self) -> int:
        keys = self._fresh_keys()
        if keys is not None:
            return len(keys)
        return self._source.count(self._db._txn())

    @overload
    def __getitem__(self, index: int) -> T: ...

    @overload
    def __getitem__(self, index: slice) -> List[T]: ...

    def __getitem__(self, index: Union[int, slice]) -> Union[T, List[T]]:
        keys = self._snapshot()
        if isinstance(index, slice):
            return [self._info.make(self._db, key) for key in keys[index]]
        try:
            key = keys[index]
        except IndexError:
            raise IndexError(f"index {index} is out of range for {len(keys)} {self._info.name} objects") from None
        except TypeError:
            raise TypeError(f"Results indices must be integers or slices, not {type(index).__name__}") from None
        return self._info.make(self._db, key)

    def __iter__(self) -> Iterator[T]:
        for key in list(self._snapshot()):
            yield self._info.make(self._db, key)

    def __bool__(self) -> bool:
        return len(self) > 0

    def __repr__(self) -> str:
        if self._db.is_closed:
            return f"<coffer.Results of {self._info.name} (database closed)>"
        return f"<coffer.Results of {self._info.name}: {len(self)} objects>"

    def _delete_all(self, txn: _capi.TxnP) -> None:
        self._source.delete_all(txn)
