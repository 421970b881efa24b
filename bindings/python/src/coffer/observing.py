"""Registering observers of a database handle, an object, a list, set or
map property, a list seen sorted or through a query, and query results
with the C library, and reading the values of an
object's changed properties. Database, Object, List and Results call these
through their observe() and changes() methods; notifications.py delivers."""

from __future__ import annotations

import asyncio
import ctypes
from typing import TYPE_CHECKING, Any, Callable, Dict, Optional, Sequence, Tuple

from . import _capi
from .changes import (
    CollectionChange,
    DatabaseChange,
    ObjectChange,
    PropertyChange,
    PropertyReader,
    read_collection_change,
    read_map_change,
    read_object_change,
)
from .codec import Reader
from .errors import CofferError, MisuseError
from .notifications import (
    COLLECTION_CALLBACK,
    DB_CALLBACK,
    MAP_CALLBACK,
    OBJECT_CALLBACK,
    NotificationToken,
    Registration,
)
from .query import CompiledQuery, combined

if TYPE_CHECKING:
    from .database import Database, _ClassInfo, _PropInfo

Loop = Optional[asyncio.AbstractEventLoop]
# The C observe call with the handle, the callback's context and where the
# token goes filled in last.
_Observe = Callable[[_capi.DbP, ctypes.c_void_p, Any], None]

_COLLECTIONS = (_capi.TYPE_LIST, _capi.TYPE_SET, _capi.TYPE_MAP)


def _register(db: "Database", callback: Callable[[Any], None], read: Callable[..., Any], loop: Loop,
              observe: _Observe) -> NotificationToken:
    if not callable(callback):
        raise TypeError(f"the callback must be callable, got {type(callback).__name__}")
    if loop is not None and not isinstance(loop, asyncio.AbstractEventLoop):
        raise TypeError(f"loop must be an asyncio event loop, got {type(loop).__name__}")
    handles = db._open_handles()
    assert handles.db is not None
    if db._migration_role is not None:
        raise MisuseError("the databases of a running migration cannot be observed")
    registration = Registration(callback, read, loop, handles.observers)
    token = _capi.TokenP()
    try:
        observe(handles.db, ctypes.c_void_p(registration.id), ctypes.byref(token))
    except BaseException:
        registration.abandon()
        raise
    registration.attach(token)
    return NotificationToken(registration)


def _key_paths(key_paths: Optional[Sequence[str]]) -> Tuple[Any, int]:
    """The C array of `key_paths` and its length; (None, 0) for None. An
    empty list gives an array too: for collections it means no property."""
    if key_paths is None:
        return None, 0
    if isinstance(key_paths, str):
        raise TypeError("key_paths must be a list of key paths, not one str")
    paths = list(key_paths)
    for path in paths:
        if not isinstance(path, str):
            raise TypeError(f"a key path must be a str, got {type(path).__name__}")
    array = (ctypes.c_char_p * max(len(paths), 1))(*(p.encode("utf-8") for p in paths))
    return array, len(paths)


def observe_database(db: "Database", callback: Callable[[DatabaseChange], None], loop: Loop) -> NotificationToken:
    def observe(c_db: _capi.DbP, ctx: ctypes.c_void_p, token: Any) -> None:
        _capi.coffer_db_observe(c_db, DB_CALLBACK, ctx, token)

    return _register(db, callback, DatabaseChange, loop, observe)


def observe_object(db: "Database", info: "_ClassInfo", key: int, key_paths: Optional[Sequence[str]],
                   callback: Callable[[ObjectChange], None], loop: Loop) -> NotificationToken:
    paths, count = _key_paths(key_paths)
    read_property = _property_reader(db, info)

    def observe(c_db: _capi.DbP, ctx: ctypes.c_void_p, token: Any) -> None:
        _capi.coffer_object_observe(c_db, info.class_id, key, paths, count, OBJECT_CALLBACK, ctx, token)

    return _register(db, callback, lambda changes: read_object_change(changes, read_property), loop, observe)


# The C observe function of each kind of collection property, its C
# callback, and the reader of its change sets.
_PROPERTY_OBSERVERS: Dict[int, Tuple[Any, Any, Callable[..., Any]]] = {
    _capi.TYPE_LIST: (_capi.coffer_list_observe, COLLECTION_CALLBACK, read_collection_change),
    _capi.TYPE_SET: (_capi.coffer_set_observe, COLLECTION_CALLBACK, read_collection_change),
    _capi.TYPE_MAP: (_capi.coffer_map_observe, MAP_CALLBACK, read_map_change),
}


def observe_collection(db: "Database", info: "_ClassInfo", key: int, prop: "_PropInfo", kind: int,
                       key_paths: Optional[Sequence[str]], callback: Callable[[Any], None],
                       loop: Loop) -> NotificationToken:
    """Observes list, set or map property `prop` (`kind` TYPE_LIST, TYPE_SET
    or TYPE_MAP) of object `key`: CollectionChanges, or MapChanges for a map."""
    paths, count = _key_paths(key_paths)
    c_observe, c_callback, read = _PROPERTY_OBSERVERS[kind]

    def observe(c_db: _capi.DbP, ctx: ctypes.c_void_p, token: Any) -> None:
        c_observe(c_db, info.class_id, key, prop.id, paths, count, c_callback, ctx, token)

    return _register(db, callback, read, loop, observe)


def observe_list_query(db: "Database", info: "_ClassInfo", key: int, prop: "_PropInfo", objects: "_ClassInfo",
                       queries: Sequence[CompiledQuery], key_paths: Optional[Sequence[str]],
                       callback: Callable[[CollectionChange], None], loop: Loop) -> NotificationToken:
    """Observes list-of-objects property `prop` of object `key` through
    `queries` (of the element class `objects`) applied in turn."""
    paths, count = _key_paths(key_paths)
    query = combined(db, objects, queries) if queries else CompiledQuery(db, objects, "TRUEPREDICATE", ())

    def observe(c_db: _capi.DbP, ctx: ctypes.c_void_p, token: Any) -> None:
        _capi.coffer_list_query_observe(c_db, info.class_id, key, prop.id, query.handle, paths, count,
                                        COLLECTION_CALLBACK, ctx, token)

    return _register(db, callback, read_collection_change, loop, observe)


def observe_list_values(db: "Database", info: "_ClassInfo", key: int, prop: "_PropInfo", order: int, distinct: bool,
                        callback: Callable[[CollectionChange], None], loop: Loop) -> NotificationToken:
    """Observes list-of-values property `prop` of object `key` seen
    distinct and/or sorted (`order` a SORT_* constant)."""

    def observe(c_db: _capi.DbP, ctx: ctypes.c_void_p, token: Any) -> None:
        _capi.coffer_list_values_observe(c_db, info.class_id, key, prop.id, order, int(distinct),
                                         COLLECTION_CALLBACK, ctx, token)

    return _register(db, callback, read_collection_change, loop, observe)


def observe_query(db: "Database", info: "_ClassInfo", queries: Sequence[CompiledQuery],
                  key_paths: Optional[Sequence[str]], callback: Callable[[CollectionChange], None],
                  loop: Loop) -> NotificationToken:
    """Observes the objects of class `info` that `queries` select in turn
    (every object when there is none)."""
    paths, count = _key_paths(key_paths)
    query = combined(db, info, queries) if queries else CompiledQuery(db, info, "TRUEPREDICATE", ())

    def observe(c_db: _capi.DbP, ctx: ctypes.c_void_p, token: Any) -> None:
        _capi.coffer_query_observe(c_db, query.handle, paths, count, COLLECTION_CALLBACK, ctx, token)

    return _register(db, callback, read_collection_change, loop, observe)


def _property_reader(db: "Database", info: "_ClassInfo") -> PropertyReader:
    """Reads a changed property of an object of class `info`: its values
    copied (strings and bytes are borrowed from C), links as objects of
    `db`, collections as None."""
    names = {prop.id: prop.name for prop in info.properties.values()}
    reader = Reader(db)

    def value(c_value: _capi.coffer_value, where: str) -> Any:
        if c_value.type in _COLLECTIONS:
            return None
        try:
            return reader.value(c_value, where, lambda kind: None)
        except CofferError:  # a link to a class this handle does not open
            return None

    def read(prop_id: int, old: _capi.coffer_value, new: _capi.coffer_value) -> PropertyChange:
        name = names[prop_id]
        where = info.where(name)
        return PropertyChange(name, value(old, where), value(new, where))

    return read
