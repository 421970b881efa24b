"""Managed lists, sets and maps: a list, set or map property of a stored
object, or a list or map nested in a mixed value. They read and write the
database on each use, through the database's current transaction, and
behave like Python's list, set and dict."""

from __future__ import annotations

import asyncio
import collections.abc
import contextlib
import ctypes
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, List as _PyList, Optional, Sequence, Tuple, Union

from . import _capi, observing
from .codec import Reader, Writer, accept_as_sequences, map_key
from .errors import NotFoundError, PropertyTypeError
from .model import brief
from .notifications import ChangeStream, NotificationToken
from .results import CollectionSource, Results
from .values import text_from_storage
from .views import SortedValues

if TYPE_CHECKING:
    from .database import Database, _ClassInfo, _PropInfo

# One step from a collection to one nested in it: (index or key, kind).
Step = Tuple[Union[int, str], int]

_OPEN_ROOT = {
    _capi.TYPE_LIST: (_capi.coffer_object_get_list, _capi.ListP),
    _capi.TYPE_SET: (_capi.coffer_object_get_set, _capi.SetP),
    _capi.TYPE_MAP: (_capi.coffer_object_get_map, _capi.MapP),
}
_RELEASE = {
    _capi.TYPE_LIST: _capi.coffer_list_release,
    _capi.TYPE_SET: _capi.coffer_set_release,
    _capi.TYPE_MAP: _capi.coffer_map_release,
}


class _Managed:
    """Where a managed collection lives: an object's property, then steps
    into nested collections. `root` is the kind of the property's own
    collection, `kind` this one's: TYPE_LIST, TYPE_SET or TYPE_MAP."""

    def __init__(self, db: "Database", info: "_ClassInfo", key: int, prop: "_PropInfo",
                 root: int, steps: Tuple[Step, ...], kind: int) -> None:
        self._db = db
        self._root = root
        self._info = info
        self._key = key
        self._prop = prop
        self._steps = steps
        self._kind = kind

    @property
    def _where(self) -> str:
        where = self._info.where(self._prop.name)
        for step, _ in self._steps:
            where += f"[{step!r}]"
        return where

    @contextlib.contextmanager
    def _open(self, write: bool = False) -> Iterator[Any]:
        """The C handle of this collection, in the current transaction (the
        write transaction for a write)."""
        db = self._db
        txn = db._write_txn(f"changing {self._where}") if write else db._txn()
        obj = db._handle(txn, self._info, self._key)
        opened: _PyList[Tuple[int, Any]] = []
        try:
            root_kind = self._root
            open_fn, handle_type = _OPEN_ROOT[root_kind]
            handle = handle_type()
            open_fn(obj, self._prop.id, ctypes.byref(handle))
            opened.append((root_kind, handle))
            kind = root_kind
            for step, child_kind in self._steps:
                handle = _open_child(handle, kind, step, child_kind)
                opened.append((child_kind, handle))
                kind = child_kind
            if write:
                db._generation += 1
            yield handle
        finally:
            for kind, handle in reversed(opened):
                _RELEASE[kind](handle)
            _capi.coffer_object_release(obj)

    def _size(self, count_fn: Any) -> int:
        with self._open() as handle:
            return _count(count_fn, handle)

    def _elements(self, count_fn: Any, get_fn: Any,
                  read: Callable[[_capi.coffer_value, int], Any]) -> _PyList[Any]:
        """Every element of a list or set (counted by count_fn, fetched by
        get_fn), as read(value, index) makes it."""
        with self._open() as handle:
            value = _capi.coffer_value()
            out = []
            for i in range(_count(count_fn, handle)):
                get_fn(handle, i, ctypes.byref(value))
                out.append(read(value, i))
            return out

    def _read(self, value: _capi.coffer_value, step: Union[int, str]) -> Any:
        return Reader(self._db).value(value, self._where, lambda kind: self._child(step, kind))

    def _child(self, step: Union[int, str], kind: int) -> Any:
        cls = List if kind == _capi.TYPE_LIST else Dictionary
        return cls(self._db, self._info, self._key, self._prop, self._root, self._steps + ((step, kind),), kind)

    def _element(self, value: Any, writer: Writer, out: _capi.coffer_value) -> None:
        # Collections nested in a mixed value hold mixed values.
        writer.element(self._info, self._prop, value, out, len(self._steps) + 1)

    def _c_value(self, value: Any) -> Tuple[_capi.coffer_value, Writer]:
        writer = Writer(self._db, _capi.UPDATE_ALL)
        out = _capi.coffer_value()
        self._element(value, writer, out)
        return out, writer

    @property
    def is_valid(self) -> bool:
        """False once the object was deleted or the collection replaced
        (a nested one also when its place now holds another kind of value)."""
        try:
            with self._open():
                return True
        except (NotFoundError, PropertyTypeError):
            return False

    def __repr__(self) -> str:
        try:
            inner = brief(self._python())
        except NotFoundError:
            inner = "(deleted)"
        return f"<coffer.{type(self).__name__} {self._where}: {inner}>"

    def _python(self) -> Any:
        raise NotImplementedError


class _ObjectQueries:
    """filter() and sorted() for a list or set property of links: they give
    coffer.Results over the objects it holds, in its order."""

    def _object_results(self) -> Any:
        coll: Any = self
        prop = coll._prop
        if prop.type != _capi.TYPE_LINK or coll._steps:
            raise PropertyTypeError(
                f"{coll._where}: only lists and sets of objects can be filtered and sorted, "
                f"this one holds {_capi.type_name(prop.type)} values"
            )
        info = coll._db._class_info(prop.target)
        return Results(coll._db, info, CollectionSource(info, self))

    def filter(self, query: str, *args: Any) -> Any:
        """The objects of this collection that match `query` (see
        coffer.Results.filter), as coffer.Results in the collection's order."""
        return self._object_results().filter(query, *args)

    def sorted(self, prop: Any, ascending: bool = True) -> Any:
        """The objects of this collection sorted by `prop` (see
        coffer.Results.sorted), as coffer.Results."""
        return self._object_results().sorted(prop, ascending)

    def distinct(self, *key_paths: str) -> Any:
        """The first object of this collection for each distinct combination
        of values at `key_paths` (see coffer.Results.distinct)."""
        return self._object_results().distinct(*key_paths)

    def _link_keys(self) -> _PyList[int]:
        """The keys of the linked objects, without making Python objects."""
        coll: Any = self
        count_fn, get_fn = ((_capi.coffer_list_count, _capi.coffer_list_get) if isinstance(self, List)
                            else (_capi.coffer_set_count, _capi.coffer_set_get))
        keys: _PyList[int] = coll._elements(count_fn, get_fn, lambda value, i: int(value.u.link.key))
        return keys


class _Observable:
    """observe() and changes() for a list, set or dictionary property."""

    def observe(self, callback: Callable[[Any], None], key_paths: Optional[Sequence[str]] = None,
                loop: Optional[asyncio.AbstractEventLoop] = None) -> NotificationToken:
        """Calls `callback(change)` each time this list, set or dictionary
        property changes: first with `initial` True, then with what changed.
        A list or set gives a coffer.CollectionChange (a list: insertions,
        deletions, moves, replaced elements; a set: positions in its
        iteration order); a dictionary a coffer.MapChange (keys deleted,
        inserted and modified). For collections of objects a change of an
        object held is a modification, filtered by `key_paths` from the
        element class ("age", or [] for none). When the owning object is
        deleted, the last call has `root_deleted` True. Collections nested
        in mixed values cannot be observed. See the coffer module for
        threads and loops. Keep the token: collecting it stops the
        observer."""
        coll: Any = self
        if coll._steps or coll._prop.type == _capi.TYPE_MIXED:
            raise PropertyTypeError(
                f"{coll._where}: only list, set and dictionary properties can be observed, not collections "
                "nested in mixed values (observe the object holding it)"
            )
        return observing.observe_collection(coll._db, coll._info, coll._key, coll._prop, coll._kind, key_paths,
                                            callback, loop)

    def changes(self, key_paths: Optional[Sequence[str]] = None) -> "ChangeStream[Any]":
        """The changes of observe() as an async iterator on the running
        loop: `async for change in owner.dogs.changes():`."""
        return ChangeStream(lambda put, loop: self.observe(put, key_paths, loop))


def _count(count_fn: Any, handle: Any) -> int:
    """The number of elements of a list, set or map handle."""
    n = ctypes.c_uint64()
    count_fn(handle, ctypes.byref(n))
    return n.value


def _open_child(handle: Any, kind: int, step: Union[int, str], child_kind: int) -> Any:
    child = _capi.ListP() if child_kind == _capi.TYPE_LIST else _capi.MapP()
    if kind == _capi.TYPE_LIST:
        fn = _capi.coffer_list_get_list if child_kind == _capi.TYPE_LIST else _capi.coffer_list_get_map
        fn(handle, step, ctypes.byref(child))
    else:
        data = str(step).encode("utf-8")
        fn = _capi.coffer_map_get_list if child_kind == _capi.TYPE_LIST else _capi.coffer_map_get_map
        fn(handle, data, len(data), ctypes.byref(child))
    return child


def _python_value(value: Any) -> Any:
    """A plain Python copy of a value read from a collection."""
    return value._python() if isinstance(value, _Managed) else value


class List(_Managed, _ObjectQueries, _Observable, collections.abc.MutableSequence):  # type: ignore[type-arg]
    """A managed list. Indexes may be negative; slices read a Python list."""

    def __len__(self) -> int:
        return self._size(_capi.coffer_list_count)

    def _index(self, index: Any, size: int, insert: bool = False) -> int:
        if isinstance(index, bool) or not isinstance(index, int):
            raise TypeError(f"list indices must be integers or slices, not {type(index).__name__}")
        position = index + size if index < 0 else index
        if insert:
            return min(max(position, 0), size)
        if not 0 <= position < size:
            raise IndexError(f"index {index} is out of range for {self._where} of {size} elements")
        return position

    def _all(self) -> _PyList[Any]:
        return self._elements(_capi.coffer_list_count, _capi.coffer_list_get, self._read)

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return self._all()[index]
        with self._open() as handle:
            position = self._index(index, _count(_capi.coffer_list_count, handle))
            value = _capi.coffer_value()
            _capi.coffer_list_get(handle, position, ctypes.byref(value))
            return self._read(value, position)

    def __iter__(self) -> Iterator[Any]:
        return iter(self._all())

    def __setitem__(self, index: Any, value: Any) -> None:
        if isinstance(index, slice):
            raise TypeError(f"{self._where}: assign elements one at a time (slice assignment is not supported)")
        c_value, writer = self._c_value(value)
        with self._open(write=True) as handle:
            _capi.coffer_list_set(handle, self._index(index, _count(_capi.coffer_list_count, handle)), ctypes.byref(c_value))

    def __delitem__(self, index: Any) -> None:
        if isinstance(index, slice):
            raise TypeError(f"{self._where}: delete elements one at a time (slice deletion is not supported)")
        with self._open(write=True) as handle:
            _capi.coffer_list_remove(handle, self._index(index, _count(_capi.coffer_list_count, handle)))

    def insert(self, index: int, value: Any) -> None:
        c_value, writer = self._c_value(value)
        with self._open(write=True) as handle:
            _capi.coffer_list_insert(handle, self._index(index, _count(_capi.coffer_list_count, handle), insert=True), ctypes.byref(c_value))

    def append(self, value: Any) -> None:
        c_value, writer = self._c_value(value)
        with self._open(write=True) as handle:
            _capi.coffer_list_append(handle, ctypes.byref(c_value))

    def extend(self, values: Iterable[Any]) -> None:
        items = list(values)  # may be this list itself
        converted = [self._c_value(v) for v in items]
        with self._open(write=True) as handle:
            for c_value, _ in converted:
                _capi.coffer_list_append(handle, ctypes.byref(c_value))

    def clear(self) -> None:
        with self._open(write=True) as handle:
            _capi.coffer_list_clear(handle)

    def move(self, from_index: int, to_index: int) -> None:
        """Moves the element at from_index so that it ends up at to_index."""
        with self._open(write=True) as handle:
            size = _count(_capi.coffer_list_count, handle)
            _capi.coffer_list_move(handle, self._index(from_index, size), self._index(to_index, size))

    def swap(self, a: int, b: int) -> None:
        """Swaps the elements at a and b."""
        with self._open(write=True) as handle:
            size = _count(_capi.coffer_list_count, handle)
            _capi.coffer_list_swap(handle, self._index(a, size), self._index(b, size))

    def _values_view(self, what: str) -> SortedValues:
        if self._prop.type == _capi.TYPE_LINK or self._prop.type == _capi.TYPE_MIXED or self._steps:
            raise PropertyTypeError(f"{self._where}: {what} of the values of a list of "
                                    f"{_capi.type_name(self._prop.type)} values is not supported")
        return SortedValues(self)

    def sorted(self, prop: Any = "self", ascending: bool = True) -> Any:
        """A list of objects sorted by `prop` (see coffer.Results.sorted),
        as coffer.Results; a list of values sorted by its values ("self"),
        as a coffer.SortedValues."""
        if self._prop.type == _capi.TYPE_LINK:
            return _ObjectQueries.sorted(self, prop, ascending)
        return self._values_view("sorting").sorted(prop, ascending)

    def distinct(self, *key_paths: str) -> Any:
        """A list of objects narrowed to the first object per distinct
        values at `key_paths` (coffer.Results); a list of values with equal
        values once ("self"), as a coffer.SortedValues."""
        if self._prop.type == _capi.TYPE_LINK:
            return _ObjectQueries.distinct(self, *key_paths)
        return self._values_view("distinct").distinct(*key_paths)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (list, tuple, List)):
            return self._all() == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def _python(self) -> _PyList[Any]:
        return [_python_value(v) for v in self._all()]


class Set(_Managed, _ObjectQueries, _Observable, collections.abc.MutableSet):  # type: ignore[type-arg]
    """A managed set (of a set property). Order is stable but unspecified."""

    def __len__(self) -> int:
        return self._size(_capi.coffer_set_count)

    def _all(self) -> _PyList[Any]:
        return self._elements(_capi.coffer_set_count, _capi.coffer_set_get, self._read)

    def __iter__(self) -> Iterator[Any]:
        return iter(self._all())

    def __contains__(self, value: object) -> bool:
        try:
            c_value, writer = self._c_value(value)
        except (PropertyTypeError, ValueError):
            return False  # a value the set cannot hold is not in it
        found = ctypes.c_int()
        with self._open() as handle:
            try:
                _capi.coffer_set_contains(handle, ctypes.byref(c_value), ctypes.byref(found))
            except PropertyTypeError:
                return False
        return bool(found.value)

    def _change(self, fn: Any, value: Any) -> bool:
        c_value, writer = self._c_value(value)
        changed = ctypes.c_int()
        with self._open(write=True) as handle:
            fn(handle, ctypes.byref(c_value), ctypes.byref(changed))
        return bool(changed.value)

    def add(self, value: Any) -> None:
        self._change(_capi.coffer_set_insert, value)

    def discard(self, value: Any) -> None:
        self._change(_capi.coffer_set_remove, value)

    def remove(self, value: Any) -> None:
        if not self._change(_capi.coffer_set_remove, value):
            raise KeyError(value)

    def clear(self) -> None:
        with self._open(write=True) as handle:
            _capi.coffer_set_clear(handle)

    def update(self, *others: Iterable[Any]) -> None:
        self._apply(_capi.coffer_set_union, others, self._add_all)

    def intersection_update(self, *others: Iterable[Any]) -> None:
        self._apply(_capi.coffer_set_intersect, others, self._keep_only)

    def difference_update(self, *others: Iterable[Any]) -> None:
        self._apply(_capi.coffer_set_subtract, others, self._discard_all)

    def _add_all(self, other: Iterable[Any]) -> None:
        for value in list(other):
            self.add(value)

    def _keep_only(self, other: Iterable[Any]) -> None:
        keep = list(other)
        for value in self._all():
            if value not in keep:
                self.discard(value)

    def _discard_all(self, other: Iterable[Any]) -> None:
        for value in list(other):
            self.discard(value)

    @classmethod
    def _from_iterable(cls, values: Iterable[Any]) -> Any:
        # `a | b`, `a & b`, `a - b` and `a ^ b` make a plain Python set.
        return set(values)

    def _apply(self, fn: Any, others: Tuple[Iterable[Any], ...], fallback: Callable[[Iterable[Any]], None]) -> None:
        """Runs the C set operation `fn` with each of `others` that is a
        managed set of the same database, and fallback(other), in Python,
        with any other iterable."""
        for other in others:
            if isinstance(other, Set) and other._db is self._db:
                with self._open(write=True) as handle, other._open() as other_handle:
                    fn(handle, other_handle)
            else:
                fallback(other)

    def __ior__(self, other: Any) -> "Set":  # type: ignore[misc]
        self.update(other)
        return self

    def __iand__(self, other: Any) -> "Set":  # type: ignore[misc]
        self.intersection_update(other)
        return self

    def __isub__(self, other: Any) -> "Set":  # type: ignore[misc]
        self.difference_update(other)
        return self

    __hash__ = None  # type: ignore[assignment]

    def _python(self) -> Any:
        return self._all()


class Dictionary(_Managed, _Observable, collections.abc.MutableMapping):  # type: ignore[type-arg]
    """A managed map from str keys. A plain file keeps keys in UTF-8 byte
    order; an encrypted one in a stable, unspecified order."""

    def __len__(self) -> int:
        return self._size(_capi.coffer_map_count)

    def _entries(self) -> _PyList[Tuple[str, Any]]:
        with self._open() as handle:
            key = _capi.coffer_bytes()
            value = _capi.coffer_value()
            out = []
            for i in range(_count(_capi.coffer_map_count, handle)):
                _capi.coffer_map_get_entry(handle, i, ctypes.byref(key), ctypes.byref(value))
                name = text_from_storage(ctypes.string_at(key.data, key.size), f"a key of {self._where}")
                out.append((name, self._read(value, name)))
            return out

    def __getitem__(self, key: Any) -> Any:
        data = map_key(key, self._where)
        with self._open() as handle:
            value = _capi.coffer_value()
            try:
                _capi.coffer_map_get(handle, data, len(data), ctypes.byref(value))
            except NotFoundError:
                raise KeyError(key) from None
            return self._read(value, key)

    def __contains__(self, key: object) -> bool:
        if not isinstance(key, str):
            return False
        data = key.encode("utf-8", "surrogatepass")
        found = ctypes.c_int()
        with self._open() as handle:
            _capi.coffer_map_contains(handle, data, len(data), ctypes.byref(found))
        return bool(found.value)

    def __setitem__(self, key: Any, value: Any) -> None:
        data = map_key(key, self._where)
        c_value, writer = self._c_value(value)
        with self._open(write=True) as handle:
            _capi.coffer_map_set(handle, data, len(data), ctypes.byref(c_value))

    def __delitem__(self, key: Any) -> None:
        data = map_key(key, self._where)
        removed = ctypes.c_int()
        with self._open(write=True) as handle:
            _capi.coffer_map_remove(handle, data, len(data), ctypes.byref(removed))
        if not removed.value:
            raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        return iter([k for k, _ in self._entries()])

    def keys(self) -> Any:
        return [k for k, _ in self._entries()]

    def values(self) -> Any:
        return [v for _, v in self._entries()]

    def items(self) -> Any:
        return self._entries()

    def clear(self) -> None:
        with self._open(write=True) as handle:
            _capi.coffer_map_clear(handle)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, collections.abc.Mapping):
            return dict(self._entries()) == dict(other.items())
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def _python(self) -> Any:
        return {k: _python_value(v) for k, v in self._entries()}


# A managed List or Set may be given wherever a list or set value is taken.
accept_as_sequences(List, Set)


def managed(db: "Database", info: "_ClassInfo", key: int, prop: "_PropInfo", kind: int) -> Any:
    """The managed collection of a property whose value reads as `kind`."""
    cls = {_capi.TYPE_LIST: List, _capi.TYPE_SET: Set, _capi.TYPE_MAP: Dictionary}[kind]
    return cls(db, info, key, prop, kind, (), kind)
