"""Compiled queries: a query text and its arguments, compiled once by the
C library for one class, and the texts that sorted(), distinct() and
limit() compile to."""

from __future__ import annotations

import collections.abc
import ctypes
import math
import re
import struct
from typing import TYPE_CHECKING, Any, List, Optional, Sequence, Tuple, Union

from . import _capi, codec, packing
from .codec import MIXED_TYPES, Writer
from .errors import CofferError, InvalidArgumentError, QueryError, error_for
from .model import Object
from .values import INT64_MAX, INT64_MIN, to_c

if TYPE_CHECKING:
    from .database import Database, _ClassInfo

# A key path as the query language reads one: names of letters, digits,
# '_' and any non-ASCII character, joined by '.'. Checked before a name is
# put into a query text, so that it cannot change the query around it.
_NAME = "[A-Za-z_\u0080-\U0010ffff][A-Za-z0-9_\u0080-\U0010ffff]*"
_KEY_PATH = re.compile(f"{_NAME}(?:\\.{_NAME})*")

SortKey = Union[str, Tuple[str, bool]]


# How many query texts a database keeps compiled for rebinding; it starts
# afresh when full.
_PREPARED_CAPACITY = 64
# Argument types whose conversion depends on the type alone, so that a
# prepared query that accepted them accepts them again: a rebinding with
# these may wait.
_REBOUND_LATER = frozenset({int, float, str, bytes, bool, type(None)})
# Called with ctypes objects only: pre-built sizes for the argument counts.
_count_rebound = _capi.coffer_query_count_rebound_unconverted
_SIZES = tuple(ctypes.c_size_t(i) for i in range(8))
_Count = ctypes.c_uint64
_byref = ctypes.byref


class _OwnedQuery:
    """A C query handle of a CompiledQuery, freed when collected. A query
    handle holds no database resource, so freeing it when the object goes
    (or never, at interpreter exit) is always safe; a weakref.finalize would
    cost more than a short query's run. Queries bound only when needed have
    none until then, and nothing to free."""

    __slots__ = ("handle",)

    def __init__(self, handle: "ctypes._Pointer[_capi._Query]") -> None:
        self.handle = handle

    def __del__(self) -> None:
        _capi.coffer_query_free(self.handle)


class CompiledQuery:
    """One query compiled for class `info` of `db`. The C handle is freed
    when the object is collected (the Results that use it hold it).

    A text is parsed once per database: compiling a text seen before rebinds
    that query to the new arguments (coffer_query_rebind), as a prepared
    statement is. When the new arguments are of the same Python types as
    the prepared query's (which the library accepted), the rebinding waits
    until a handle is needed, and a count needs none: count() asks the
    library to count the prepared query with the new arguments in one call
    (coffer_query_count_rebound). `timeout` (seconds, None for none) bounds
    every run of the query (coffer_query_set_timeout)."""

    __slots__ = ("info", "timeout", "timeout_ms", "args", "arg_types", "_owned", "_prepared", "_values", "_keep")

    info: "_ClassInfo"
    timeout: Optional[float]
    timeout_ms: int
    args: Tuple[Any, ...]
    arg_types: Tuple[type, ...]
    _owned: Optional[_OwnedQuery]
    _prepared: "Optional[CompiledQuery]"
    _values: "Optional[ctypes.Array[_capi.coffer_value]]"
    _keep: Optional[List[Any]]

    def __init__(self, db: "Database", info: "_ClassInfo", text: str, args: Sequence[Any],
                 timeout: Optional[float] = None) -> None:
        if timeout is None and type(text) is str and len(args) == 1 and type(args[0]) is int \
                and INT64_MIN <= args[0] <= INT64_MAX and packing.ENABLED:
            # The common prepared-statement case, a text seen before with one
            # int argument and no timeout, with the steps below that it
            # needs inlined: this runs once per query.
            seen: "Optional[CompiledQuery]" = db._prepared_queries.get((info.class_id, text))
            if seen is not None and seen.timeout_ms == 0 and seen.arg_types == _ONE_INT:
                db._open_handles()
                self.info = info
                self.timeout = None
                self.timeout_ms = 0
                self.args = tuple(args)
                self.arg_types = _ONE_INT
                self._owned = None
                self._prepared = seen
                self._values = _ONE_VALUE.from_buffer_copy(_INT_VALUE.pack(_capi.TYPE_INT, args[0]))
                self._keep = None
                return
        if type(text) is not str and not isinstance(text, str):
            raise TypeError(f"a query must be a str, got {type(text).__name__}")
        timeout_ms = 0 if timeout is None else timeout_milliseconds(timeout)
        handles = db._open_handles()
        # `keep` holds the buffers `values` points into until the library
        # has copied them (the rebinding, or the count of count()).
        values, keep = arguments(db, args)
        self.info = info
        self.timeout = timeout
        self.timeout_ms = timeout_ms
        # Kept to combine this query with others (combined()).
        self.args = tuple(args)
        self.arg_types = tuple(map(type, self.args))
        self._owned = None
        key = (info.class_id, text)
        prepared: "CompiledQuery | None" = db._prepared_queries.get(key)
        if prepared is not None and prepared.arg_types == self.arg_types and prepared.timeout_ms == timeout_ms \
                and _REBOUND_LATER.issuperset(self.arg_types):
            # Arguments of the types the prepared query was bound with bind
            # the same way: bound when a handle is needed, if ever.
            self._prepared = prepared
            self._values = values
            self._keep = keep
            return
        self._prepared = self._values = self._keep = None
        handle = _capi.QueryP()
        if prepared is not None:
            # A text seen before: parsed once, bound again (it encoded then).
            _capi.coffer_query_rebind(prepared.handle, values, len(args), ctypes.byref(handle))
        else:
            try:
                data = text.encode("utf-8")
            except UnicodeEncodeError as exc:
                raise QueryError(f"query: the text cannot be encoded as UTF-8 ({exc.reason})") from None
            _capi.coffer_query_compile(
                handles.db, info.class_id, data, len(data), values, len(args), ctypes.byref(handle)
            )
        self._owned = _OwnedQuery(handle)
        # A rebound query starts with the prepared one's timeout: set only
        # when it differs (a compiled one starts with none).
        if timeout_ms != (prepared.timeout_ms if prepared is not None else 0):
            _capi.coffer_query_set_timeout(handle, timeout_ms)
        if prepared is None:
            if len(db._prepared_queries) >= _PREPARED_CAPACITY:
                db._prepared_queries.clear()
            db._prepared_queries[key] = self

    @property
    def handle(self) -> "ctypes._Pointer[_capi._Query]":
        """The C query, bound to this query's arguments on first use."""
        owned = self._owned
        if owned is None:
            prepared = self._prepared
            assert prepared is not None and self._values is not None
            handle = _capi.QueryP()
            _capi.coffer_query_rebind(prepared.handle, self._values, len(self.args), ctypes.byref(handle))
            owned = self._owned = _OwnedQuery(handle)
            self._prepared = self._values = self._keep = None
        return owned.handle

    def count(self, txn: _capi.TxnP) -> int:
        """The number of objects of the class the query matches in `txn`:
        one C call, which binds the arguments too when that is still to do."""
        n = _Count()
        prepared = self._prepared
        if prepared is not None:
            assert prepared._owned is not None  # a prepared query is bound when made
            count = len(self.args)
            status = _count_rebound(txn, prepared._owned.handle, self._values,
                                    _SIZES[count] if count < len(_SIZES) else ctypes.c_size_t(count), _byref(n))
            if status:
                raise error_for(status, _capi.last_error_message())
        else:
            _capi.coffer_query_count(txn, self.handle, _byref(n))
        return n.value


    @property
    def description(self) -> str:
        """The query in canonical form."""
        raw = _capi.coffer_query_description(self.handle)
        return raw.decode("utf-8") if raw is not None else ""


def timeout_milliseconds(timeout: Optional[float]) -> int:
    """A query timeout in seconds as whole milliseconds for the C library
    (rounded up, so that a short timeout never becomes none); 0 for None."""
    if timeout is None:
        return 0
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)):
        raise TypeError(f"timeout must be a number of seconds or None, got {type(timeout).__name__}")
    if not timeout > 0 or math.isinf(timeout):
        raise InvalidArgumentError(f"timeout must be a positive, finite number of seconds, got {timeout!r}")
    return max(1, math.ceil(timeout * 1000))


_ONE_VALUE = _capi.coffer_value * 1
_ONE_INT: Tuple[type, ...] = (int,)
# A coffer_value holding an int, in the layout packing.py checks (ENABLED).
_INT_VALUE = struct.Struct("=i4xq8x")


def arguments(db: "Database", args: Sequence[Any]) -> "Tuple[ctypes.Array[_capi.coffer_value], List[Any]]":
    """The coffer_values of query arguments $0, $1, ..., and the buffers
    they point into (to keep until the C call returns)."""
    if len(args) == 1 and type(args[0]) is int and INT64_MIN <= args[0] <= INT64_MAX:
        # The common prepared-statement case, without a Writer: the value's
        # bytes packed by `struct` and copied into place in one call.
        if packing.ENABLED:
            return _ONE_VALUE.from_buffer_copy(_INT_VALUE.pack(_capi.TYPE_INT, args[0])), []
        one = _ONE_VALUE()
        value = one[0]
        value.type = _capi.TYPE_INT
        value.u.integer = args[0]
        return one, []
    values = (_capi.coffer_value * max(len(args), 1))()
    writer = Writer(db, _capi.UPDATE_ERROR)
    for i, arg in enumerate(args):
        where = f"query argument ${i}"
        if _is_collection(arg):
            items = list(arg)
            array = (_capi.coffer_value * max(len(items), 1))()
            writer.keep.append(array)
            for j, item in enumerate(items):
                if _is_collection(item) or isinstance(item, collections.abc.Mapping):
                    raise QueryError(f"{where}: item {j} is a collection; a list argument holds single values (for IN)")
                _scalar(writer, item, array[j], f"{where}, item {j}")
            values[i].type = _capi.TYPE_LIST
            values[i].u.list.items = array
            values[i].u.list.count = len(items)
        else:
            _scalar(writer, arg, values[i], where)
    return values, writer.keep


# What else a list argument (for IN) may be: coffer.Results, defined a
# layer up in results.py, adds itself.
_ARGUMENT_LISTS: Tuple[type, ...] = ()


def accept_as_argument_lists(*types: type) -> None:
    """Makes values of `types` acceptable as list arguments, besides the
    sequences codec.py accepts."""
    global _ARGUMENT_LISTS
    _ARGUMENT_LISTS += types


def _is_collection(value: Any) -> bool:
    return codec.is_sequence(value) or isinstance(value, _ARGUMENT_LISTS)


def _scalar(writer: Writer, value: Any, out: _capi.coffer_value, where: str) -> None:
    if value is None:
        out.type = _capi.TYPE_NULL
        return
    if isinstance(value, Object):
        if value._db is None:
            raise QueryError(f"{where}: the {type(value).__name__} object is not stored; add it to the database first")
        if value._db is not writer.db:
            raise QueryError(f"{where}: the {value._info.name} object belongs to another database handle")
        writer.stored_link(value, out, where)
        return
    for python_type, code in MIXED_TYPES:
        if isinstance(value, python_type):
            try:
                to_c(code, value, out, writer.keep, where)
            except CofferError as exc:
                raise QueryError(exc.message) from None
            return
    raise QueryError(
        f"{where}: {type(value).__name__} values cannot be query arguments (use None, bool, int, float, str, "
        "bytes, datetime, ObjectId, UUID, Decimal, a stored object, or a list of them for IN)"
    )


def key_path(value: Any) -> str:
    """`value` checked as a key path ("name", "owner.name")."""
    if not isinstance(value, str):
        raise TypeError(f"a key path must be a str, got {type(value).__name__}")
    if not _KEY_PATH.fullmatch(value):
        raise QueryError(f"query: {value!r} is not a key path (property names joined by '.')")
    return value


def sort_text(key_paths: Union[str, Sequence[SortKey]], ascending: bool) -> str:
    """The query of sorted(): TRUEPREDICATE SORT(a ASC, b DESC)."""
    if not isinstance(ascending, bool):
        raise TypeError(f"ascending must be a bool, got {type(ascending).__name__}")
    if isinstance(key_paths, str):
        keys: List[Tuple[str, bool]] = [(key_path(key_paths), ascending)]
    elif isinstance(key_paths, collections.abc.Sequence):
        if not ascending:
            raise TypeError("with a list of sort keys, give the direction in each: [(key_path, ascending), ...]")
        keys = [_sort_key(item) for item in key_paths]
        if not keys:
            raise QueryError("query: sorted() needs at least one key path")
    else:
        raise TypeError(f"sorted() takes a key path or a list of them, got {type(key_paths).__name__}")
    order = ", ".join(f"{path} {'ASC' if up else 'DESC'}" for path, up in keys)
    return f"TRUEPREDICATE SORT({order})"


def _sort_key(item: Any) -> Tuple[str, bool]:
    if isinstance(item, str):
        return key_path(item), True
    if isinstance(item, tuple) and len(item) == 2 and isinstance(item[1], bool):
        return key_path(item[0]), item[1]
    raise TypeError(f"a sort key is a key path or a (key_path, ascending) pair, got {item!r}")


def distinct_text(key_paths: Sequence[Any]) -> str:
    """The query of distinct(): TRUEPREDICATE DISTINCT(a, b)."""
    if not key_paths:
        raise QueryError("query: distinct() needs at least one key path")
    return f"TRUEPREDICATE DISTINCT({', '.join(key_path(p) for p in key_paths)})"


def limit_text(count: Any) -> str:
    """The query of limit(): TRUEPREDICATE LIMIT(n)."""
    if isinstance(count, bool) or not isinstance(count, int):
        raise TypeError(f"limit() takes an int, got {type(count).__name__}")
    if count < 0:
        raise QueryError(f"query: limit() needs a count of 0 or more, got {count}")
    return f"TRUEPREDICATE LIMIT({count})"


# Where the descriptors of a canonical query text start, and its arguments.
_DESCRIPTOR = re.compile(r" (?:SORT|DISTINCT|LIMIT)\(")
_ARGUMENT = re.compile(r"\$([0-9]+)")


def _outside_strings(text: str) -> List[Tuple[int, int]]:
    """The (start, end) spans of `text` that are not inside a quoted
    string literal (with backslash escapes)."""
    spans: List[Tuple[int, int]] = []
    start, i, quote = 0, 0, ""
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == "\\":
                i += 1
            elif ch == quote:
                quote, start = "", i + 1
        elif ch in "\"'":
            spans.append((start, i))
            quote = ch
        i += 1
    if not quote:
        spans.append((start, len(text)))
    return spans


def _split(text: str) -> Tuple[str, str]:
    """A canonical query text as (predicate, descriptors)."""
    for start, end in _outside_strings(text):
        found = _DESCRIPTOR.search(text, start, end)
        if found:
            return text[: found.start()], text[found.start() + 1:]
    return text, ""


def _renumbered(text: str, offset: int) -> str:
    """`text` with argument $i as $(i + offset), outside string literals."""
    out, last = [], 0
    for start, end in _outside_strings(text):
        out.append(text[last:start])
        out.append(_ARGUMENT.sub(lambda m: f"${int(m.group(1)) + offset}", text[start:end]))
        last = end
    out.append(text[last:])
    return "".join(out)


def combined(db: "Database", info: "_ClassInfo", queries: Sequence[CompiledQuery]) -> CompiledQuery:
    """One query that selects what `queries` applied in turn select: their
    predicates joined by AND, then their SORT, DISTINCT and LIMIT in order.
    Raises QueryError when a predicate follows a SORT, DISTINCT or LIMIT,
    which one query cannot say."""
    if len(queries) == 1:
        return queries[0]
    predicates: List[str] = []
    descriptors: List[str] = []
    args: List[Any] = []
    for query in queries:
        predicate, ordering = _split(_renumbered(query.description, len(args)))
        if predicate != "TRUEPREDICATE":
            if descriptors:
                raise QueryError(
                    f"query: {query.description!r} filters after a sort, distinct or limit; one query cannot say "
                    "that, so these results cannot be observed (filter first)"
                )
            predicates.append(f"({predicate})")
        if ordering:
            descriptors.append(ordering)
        args.extend(query.args)
    text = " AND ".join(predicates) or "TRUEPREDICATE"
    # The one query does the work of all: it gets the time they had together.
    timeouts = [query.timeout for query in queries if query.timeout is not None]
    return CompiledQuery(db, info, " ".join([text] + descriptors), args, sum(timeouts) if timeouts else None)
