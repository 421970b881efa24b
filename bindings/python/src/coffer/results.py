"""Results: the objects of a class, of a collection or of backlinks,
filtered, sorted, made distinct and limited by queries, read from the
database's current snapshot."""

from __future__ import annotations

import array as _array
import asyncio
import contextlib
import ctypes
import dataclasses
import itertools
import threading
from typing import TYPE_CHECKING, Any, Callable, Iterator, List, Optional, Sequence, Tuple, TypeVar, Union, overload

from . import _capi, observing, packing, pages
from .codec import Writer
from .changes import CollectionChange
from .errors import InvalidArgumentError, Status
from .model import Object
from .notifications import ChangeStream, NotificationToken
from .query import (CompiledQuery, SortKey, accept_as_argument_lists, count_prepared_one_int, distinct_text, limit_text,
                    sort_text)
from .values import INT64_MAX, INT64_MIN, from_c

if TYPE_CHECKING:
    from .database import Database, _ClassInfo

T = TypeVar("T", bound="Object")


class ClassSource:
    """Every object of one class, in creation order."""

    def __init__(self, info: "_ClassInfo") -> None:
        self.info = info

    def count(self, txn: _capi.TxnP) -> int:
        n = ctypes.c_uint64()
        _capi.coffer_class_count(txn, self.info.class_id, ctypes.byref(n))
        return n.value

    def keys(self, txn: _capi.TxnP) -> List[int]:
        handle = self.c_results(txn, None)
        try:
            return _keys_of(handle)
        finally:
            _capi.coffer_results_free(handle)

    def delete_all(self, txn: _capi.TxnP) -> None:
        _capi.coffer_class_clear(txn, self.info.class_id)

    def c_results(self, txn: _capi.TxnP, first: Optional[CompiledQuery]) -> _capi.ResultsP:
        """C results of the class, filtered by `first` if given (which can
        then use the class's indexes)."""
        out = _capi.ResultsP()
        if first is None:
            _capi.coffer_results_all(txn, self.info.class_id, ctypes.byref(out))
        else:
            _capi.coffer_query_run(txn, first.handle, ctypes.byref(out))
        return out


class KeySource:
    """A source whose objects are the keys it reads (backlinks,
    collections): its C results are made from those keys."""

    # The class of the objects.
    objects: "_ClassInfo"

    def keys(self, txn: _capi.TxnP) -> List[int]:
        raise NotImplementedError

    def c_results(self, txn: _capi.TxnP, first: Optional[CompiledQuery]) -> _capi.ResultsP:
        keys = self.keys(txn)
        array = (ctypes.c_uint64 * max(len(keys), 1))(*keys)
        out = _capi.ResultsP()
        _capi.coffer_results_from_keys(txn, self.objects.class_id, array, len(keys), ctypes.byref(out))
        if first is not None:
            out = _filtered(out, first)
        return out

    def delete_all(self, txn: _capi.TxnP) -> None:
        handle = self.c_results(txn, None)
        try:
            _capi.coffer_results_delete_all(handle)
        finally:
            _capi.coffer_results_free(handle)


@dataclasses.dataclass(eq=False)
class BacklinkSource(KeySource):
    """The objects of class `origin` that link to object `key` of class
    `info` through origin property `prop_id`, in order of origin key (an
    origin that links n times appears n times)."""

    db: "Database"
    info: "_ClassInfo"
    key: int
    origin: "_ClassInfo"
    prop_id: int

    def __post_init__(self) -> None:
        self.objects = self.origin

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


class CollectionSource(KeySource):
    """The objects a list or set of links holds, in its order."""

    def __init__(self, objects: "_ClassInfo", collection: Any) -> None:
        self.objects = objects
        self.collection = collection

    def count(self, txn: _capi.TxnP) -> int:
        return len(self.collection)

    def keys(self, txn: _capi.TxnP) -> List[int]:
        keys: List[int] = self.collection._link_keys()
        return keys


def _keys_of(handle: _capi.ResultsP) -> List[int]:
    """Every key of C results, copied in one call."""
    n = ctypes.c_uint64()
    _capi.coffer_results_count(handle, ctypes.byref(n))
    keys = (ctypes.c_uint64 * max(n.value, 1))()
    _capi.coffer_results_copy_keys(handle, 0, n.value, keys)
    return keys[: n.value]


def _current_txn(db: "Database") -> _capi.TxnP:
    """db._txn(), which checks that the database is open and on its thread
    and may start a new snapshot, with its common case inlined: counts run
    it once per query."""
    handles = db._handles
    if handles.db is None or threading.get_ident() != db._thread:
        db._open_handles()  # raises what it raises
    txn = handles.write_txn
    if txn is None:
        txn = handles.read_txn
        if txn is None:
            txn = db._txn()
    return txn


def _filtered(handle: _capi.ResultsP, query: CompiledQuery) -> _capi.ResultsP:
    """New C results: `handle` filtered by `query`. Frees `handle`."""
    try:
        out = _capi.ResultsP()
        _capi.coffer_results_filter(handle, query.handle, ctypes.byref(out))
        return out
    finally:
        _capi.coffer_results_free(handle)


Source = Union[ClassSource, BacklinkSource, CollectionSource]


class Results(Sequence[T]):
    """A sequence of objects: every object of a class, of a list or set of
    links, or of backlinks, narrowed by the queries of filter(), sorted(),
    distinct() and limit(). Each of those returns new Results and leaves
    this one as it is.

    Results are lazy: their contents are computed from the database's
    current snapshot on first use and again after the database writes or is
    refreshed; they stay fixed while one iteration runs."""

    def __init__(self, db: "Database", info: "_ClassInfo", source: Source,
                 queries: Tuple[CompiledQuery, ...] = ()) -> None:
        self._db = db
        self._info = info
        self._source = source
        self._queries = queries
        self._keys: Optional[List[int]] = None
        self._generation = -1

    # ---- queries -----------------------------------------------------------

    def _then(self, text: str, args: Sequence[Any], timeout: Optional[float] = None) -> "Results[T]":
        query = CompiledQuery(self._db, self._info, text, args, timeout)
        return Results(self._db, self._info, self._source, self._queries + (query,))

    def filter(self, query: str, *args: Any, timeout: Optional[float] = None) -> "Results[T]":
        """The objects that match `query`, a string in the Realm Query
        Language: `dogs.filter("age > $0 AND name BEGINSWITH[c] $1", 2, "r")`.
        $0, $1, ... are `args`: None, bool, int, float, str, bytes, datetime,
        ObjectId, UUID, Decimal, a stored object (for links), or a list,
        tuple or set of them (for IN). The query may end with SORT(...),
        DISTINCT(...) and LIMIT(n). Raises QueryError naming the position
        of a syntax error, an unknown property, a type mismatch or a missing
        argument.

        `timeout` (seconds) bounds each run of this query: one that runs
        longer raises QueryInterruptedError from the call that needed the
        results (len(), iteration, indexing). Database.interrupt() stops a
        query from another thread, timeout or not."""
        compiled = CompiledQuery(self._db, self._info, query, args, timeout)
        return Results(self._db, self._info, self._source, self._queries + (compiled,))

    def count_matching(self, query: str, *args: Any) -> int:
        """The number of these objects that match `query` with `args`: what
        `len(self.filter(query, *args))` gives, with the same errors. For a
        query text counted before over every object of a class, with one
        int argument (a prepared statement's common case: `"group == $0"`),
        it is one C call that binds the argument and counts, from the index
        alone where the query is an indexed `==`, range or prefix, and no
        query or results object is made."""
        db = self._db
        if not self._queries and len(args) == 1 and type(args[0]) is int and type(query) is str \
                and INT64_MIN <= args[0] <= INT64_MAX and isinstance(self._source, ClassSource):
            counted = count_prepared_one_int(db, self._info, query, args[0], _current_txn(db))
            if counted is not None:
                return counted
        return len(self.filter(query, *args))

    def sorted(self, prop: Union[str, Sequence[SortKey]], ascending: bool = True) -> "Results[T]":
        """These objects sorted by property `prop` ("age", or a key path
        such as "owner.name" through links), or by a list of key paths and
        (key_path, ascending) pairs, the first deciding and the next
        breaking ties. The sort is stable: objects with equal keys keep
        their order, so sorting again by another key makes the earlier sort
        a tie-breaker."""
        return self._then(sort_text(prop, ascending), ())

    def distinct(self, *key_paths: str) -> "Results[T]":
        """The first object of each distinct combination of values at
        `key_paths`, in order."""
        return self._then(distinct_text(key_paths), ())

    def limit(self, count: int) -> "Results[T]":
        """The first `count` objects."""
        return self._then(limit_text(count), ())

    @property
    def description(self) -> str:
        """The queries of these results in canonical form, in the order they
        apply, joined by " then " (arguments stay $0, $1, ... of each
        query); "TRUEPREDICATE" when there are none."""
        if not self._queries:
            return "TRUEPREDICATE"
        return " then ".join(q.description for q in self._queries)

    def _c_results_handle(self, txn: _capi.TxnP) -> _capi.ResultsP:
        """These results computed by the C library in `txn`; the caller
        frees them with coffer_results_free()."""
        first = self._queries[0] if self._queries else None
        handle = self._source.c_results(txn, first)
        for query in self._queries[1:]:
            handle = _filtered(handle, query)
        return handle

    @contextlib.contextmanager
    def _c_results(self, txn: _capi.TxnP) -> Iterator[_capi.ResultsP]:
        """These results computed by the C library in `txn`, freed on exit."""
        handle = self._c_results_handle(txn)
        try:
            yield handle
        finally:
            _capi.coffer_results_free(handle)

    # ---- notifications -----------------------------------------------------

    def observe(self, callback: Callable[[CollectionChange], None], key_paths: Optional[Sequence[str]] = None,
                loop: Optional[asyncio.AbstractEventLoop] = None) -> NotificationToken:
        """Calls `callback(change)` with a coffer.CollectionChange each time
        these results change: first with `initial` True, then with the
        indices of deleted, inserted and modified objects (under the
        results' sort, distinct and limit). A change of a property of a
        result object, or of an object it links to, is a modification;
        `key_paths` ("name", "owner.name") restricts that to those paths,
        and [] to none (only insertions and deletions count). An unknown
        key path raises QueryError naming it.

        Results of a class, or of a list property (`owner.dogs.filter(...)`:
        the list's objects in its order, then the queries; an object the
        list holds twice is two rows, and a row that changes places is a
        deletion plus an insertion), with every filter before any sort,
        distinct or limit; not of a set or of backlinks.
        See the coffer module for threads and loops. Keep the token:
        collecting it stops the observer."""
        source = self._source
        if isinstance(source, ClassSource):
            return observing.observe_query(self._db, self._info, self._queries, key_paths, callback, loop)
        owner = getattr(source, "collection", None)
        if owner is not None and owner._kind == _capi.TYPE_LIST and not owner._steps:
            return observing.observe_list_query(self._db, owner._info, owner._key, owner._prop, self._info,
                                                self._queries, key_paths, callback, loop)
        raise InvalidArgumentError(
            "only results of a class or of a list property can be observed; observe the set itself, or the object "
            "holding the backlinks"
        )

    def changes(self, key_paths: Optional[Sequence[str]] = None) -> "ChangeStream[CollectionChange]":
        """The changes of observe() as an async iterator on the running
        loop: `async for change in results.changes():`."""
        return ChangeStream(lambda put, loop: self.observe(put, key_paths, loop))

    # ---- aggregates --------------------------------------------------------

    def _aggregate(self, prop: str, aggregate: int) -> Any:
        if not isinstance(prop, str):
            raise TypeError(f"aggregates take a property name, got {type(prop).__name__}")
        info = self._info.prop(prop)
        with self._c_results(self._db._txn()) as handle:
            value = _capi.coffer_value()
            _capi.coffer_results_aggregate(handle, info.id, aggregate, ctypes.byref(value))
            return from_c(value, self._info.where(prop))

    def min(self, prop: str) -> Any:
        """The smallest value of property `prop` (numbers or dates),
        ignoring nulls; None when there is none."""
        return self._aggregate(prop, _capi.AGGREGATE_MIN)

    def max(self, prop: str) -> Any:
        """The largest value of property `prop` (numbers or dates),
        ignoring nulls; None when there is none."""
        return self._aggregate(prop, _capi.AGGREGATE_MAX)

    def sum(self, prop: str) -> Any:
        """The sum of property `prop`, ignoring nulls: an int for ints, a
        float for floats and doubles, a Decimal for decimals; 0 when there
        are no values."""
        return self._aggregate(prop, _capi.AGGREGATE_SUM)

    def average(self, prop: str) -> Any:
        """The average of property `prop`, ignoring nulls: a float (a
        Decimal for decimals); None when there are no values."""
        return self._aggregate(prop, _capi.AGGREGATE_AVG)

    # ---- the sequence ------------------------------------------------------

    def _fresh_keys(self) -> Optional[List[int]]:
        self._db._txn()  # checks that the database is open; may start a new snapshot
        if self._keys is not None and self._generation == self._db._generation:
            return self._keys
        return None

    def _snapshot(self) -> List[int]:
        keys = self._fresh_keys()
        if keys is None:
            txn = self._db._txn()
            if self._queries:
                with self._c_results(txn) as handle:
                    keys = _keys_of(handle)
            else:
                keys = self._source.keys(txn)
            self._keys = keys
            self._generation = self._db._generation
        return keys

    def __len__(self) -> int:
        """The number of objects. One query over a class is counted by one
        C call (coffer_query_count), from the index alone where the query
        is an `==`, range or prefix on an indexed property; no object is
        read and no key copied out."""
        db = self._db
        txn = _current_txn(db)
        keys = self._keys
        if keys is not None and self._generation == db._generation:
            return len(keys)
        queries = self._queries
        if len(queries) == 1 and isinstance(self._source, ClassSource):
            # One query over a class: counted in one C call, from the index
            # alone where it can; no results, no key copied out.
            return queries[0].count(txn)
        if queries:
            # Counted by the C library: no key is copied out.
            handle = self._c_results_handle(txn)
            try:
                n = ctypes.c_uint64()
                _capi.coffer_results_count(handle, ctypes.byref(n))
                return n.value
            finally:
                _capi.coffer_results_free(handle)
        return self._source.count(txn)

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
        obj: T = self._info.make(self._db, key)
        return obj

    def __iter__(self) -> Iterator[T]:
        # The keys are fixed when iteration starts; the objects are read a
        # page at a time (one C call each), when the loop reaches the page.
        keys = list(self._snapshot())
        db, info = self._db, self._info
        managed: Callable[..., T] = (info.model or Object)._managed  # type: ignore[assignment]  # info.make, looked up once
        deleted = _capi.PACK_ROW_DELETED
        for start in range(0, len(keys), pages.ROWS_PER_PAGE):
            chunk = keys[start:start + pages.ROWS_PER_PAGE]
            if db.is_closed:
                for key in chunk:
                    yield managed(db, info, key, None)
                continue
            data, unpacked = self._page(chunk)
            layout = info.layout()
            generation, thread = db._generation, threading.get_ident()
            # Each row and its object made when the loop reaches it: fewer
            # objects alive at once, less for the garbage collector to visit.
            for values in unpacked:
                row = None if values[1] & deleted else pages.PackedRow(data, values, generation, thread, layout)
                yield managed(db, info, values[0], row)

    def tuples(self) -> Iterator[Tuple[Any, ...]]:
        """Each object's property values as a tuple in schema order (what
        `obj.to_tuple()` gives), as iteration would give the objects, but
        without making them: a page of objects is read per C call and each
        row decoded into its tuple in one generated expression, as a
        sqlite3 cursor gives rows. The keys are fixed when the loop starts;
        a row the generated code does not decode (a null, a link, a
        collection, another type) is read through its object, with the
        same values and errors as `to_tuple()`."""
        # The pages are made by a generator; the rows of each are handed out
        # by chain's C loop, with no Python frame resumed per row.
        return itertools.chain.from_iterable(self._tuple_pages())

    def _tuple_pages(self) -> Iterator[List[Tuple[Any, ...]]]:
        """The rows of tuples(), a page of them at a time."""
        keys = list(self._snapshot())
        db, info = self._db, self._info
        managed: Callable[..., Any] = (info.model or Object)._managed
        layout = info.layout()
        decode = layout.decode_tuple
        deleted = _capi.PACK_ROW_DELETED
        for start in range(0, len(keys), pages.ROWS_PER_PAGE):
            page_keys = keys[start:start + pages.ROWS_PER_PAGE]
            data, whole = self._page_tuples(page_keys)
            if whole is not None:
                yield whole
                continue
            # A row the page's expression does not decode: row by row.
            generation, thread = db._generation, threading.get_ident()
            rows = []
            for values in layout.unpack_page(data, len(page_keys)):
                row = decode(values, data) if decode is not None else None
                if row is None:
                    packed = None if values[1] & deleted else pages.PackedRow(data, values, generation, thread, layout)
                    row = managed(db, info, values[0], packed).to_tuple()
                rows.append(row)
            yield rows

    def _results_of_keys(self, keys: List[int]) -> _capi.ResultsP:
        """C results of the objects of `keys` in the current transaction, to
        be freed by the caller."""
        array = (ctypes.c_uint64 * len(keys)).from_buffer(_array.array("Q", keys))
        handle = _capi.ResultsP()
        _capi.coffer_results_from_keys(self._db._txn(), self._info.class_id, array, len(keys), ctypes.byref(handle))
        return handle

    def _page_tuples(self, keys: List[int]) -> Tuple[bytes, Optional[List[Tuple[Any, ...]]]]:
        """The objects of `keys` packed in one buffer, in the current
        transaction: the bytes packed and the rows as tuples, or None for
        them (as pages.Layout.page_tuples gives them)."""
        handle = self._results_of_keys(keys)
        try:
            return self._info.layout().page_tuples(handle, 0, len(keys))
        finally:
            _capi.coffer_results_free(handle)

    def _page(self, keys: List[int]) -> Tuple[bytes, List[Tuple[Any, ...]]]:
        """The objects of `keys` packed in one buffer, in the current
        transaction: the bytes packed and each row's unpacked values (as
        pages.Layout.pack_page gives them)."""
        handle = self._results_of_keys(keys)
        try:
            return self._info.layout().pack_page(handle, 0, len(keys))
        finally:
            _capi.coffer_results_free(handle)

    def __bool__(self) -> bool:
        return len(self) > 0

    def __repr__(self) -> str:
        if self._db.is_closed:
            return f"<coffer.Results of {self._info.name} (database closed)>"
        return f"<coffer.Results of {self._info.name}: {len(self)} objects>"

    def set_value(self, prop: str, value: Any) -> None:
        """Sets property `prop` to `value` in every object of these results,
        in one call into the library (inside `with db.write():`), as
        assigning it to each object would: `dogs.filter("age > 10").set_value("senior", True)`.
        A value of the wrong type, the primary key or a read-only property
        raise before anything is written."""
        db, info = self._db, self._info
        target = info.prop(prop)
        txn = db._write_txn(f"setting {info.name}.{prop}")
        c_value = _capi.coffer_value()
        # `writer` keeps the buffers c_value points into until the call returns.
        writer = Writer(db, _capi.UPDATE_ALL)
        if target.collection or not packing.scalar_value(target.type, value, c_value):
            writer.property_value(info, target, value, c_value)
        db._generation += 1
        with self._c_results(txn) as handle:
            _capi.coffer_results_set_value(handle, target.id, ctypes.byref(c_value))

    def _delete_all(self, txn: _capi.TxnP) -> None:
        if not self._queries:
            self._source.delete_all(txn)
            return
        with self._c_results(txn) as handle:
            _capi.coffer_results_delete_all(handle)


# Results are list arguments of queries too (for IN).
accept_as_argument_lists(Results)
