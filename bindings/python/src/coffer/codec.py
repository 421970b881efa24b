"""Values that need the database to convert: links (to stored objects, or
new ones described by dicts and unmanaged objects), lists, sets and maps,
and mixed values with nested collections. Scalars go through values.py."""

from __future__ import annotations

import collections.abc
import ctypes
import datetime
import decimal
import uuid
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from . import _capi, packing, rowcode
from .errors import InvalidArgumentError, LimitError, NotFoundError, PropertyTypeError
from .model import Object
from .objectid import ObjectId
from .values import from_c, to_c

if TYPE_CHECKING:
    from .database import Database, _ClassInfo, _PropInfo

# The scalar type of a Python value stored in a mixed property; bool comes
# before int because bool is a subclass of int.
MIXED_TYPES = (
    (bool, _capi.TYPE_BOOL),
    (int, _capi.TYPE_INT),
    (float, _capi.TYPE_DOUBLE),
    (str, _capi.TYPE_STRING),
    ((bytes, bytearray, memoryview), _capi.TYPE_BINARY),
    (datetime.datetime, _capi.TYPE_DATE),
    (ObjectId, _capi.TYPE_OBJECT_ID),
    (uuid.UUID, _capi.TYPE_UUID),
    (decimal.Decimal, _capi.TYPE_DECIMAL128),
)

UINT32_MAX = 2**32 - 1


# The Python types a list or set value may be given as. containers.py, a
# layer up, adds its managed List and Set when it defines them.
SEQUENCE_TYPES: Tuple[type, ...] = (list, tuple, set, frozenset)


def accept_as_sequences(*types: type) -> None:
    """Makes values of `types` acceptable as lists and sets of values."""
    global SEQUENCE_TYPES
    SEQUENCE_TYPES += types


def is_sequence(value: Any) -> bool:
    return isinstance(value, SEQUENCE_TYPES)


def _is_mapping(value: Any) -> bool:
    return isinstance(value, collections.abc.Mapping)  # typing's Mapping checks in Python


def map_key(key: Any, where: str) -> bytes:
    """A map key as UTF-8; the C library checks the rest (non-empty, no
    '.', no leading '$')."""
    if not isinstance(key, str):
        raise PropertyTypeError(f"{where}: map keys must be str, got {type(key).__name__}")
    try:
        return key.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidArgumentError(f"{where}: the key {key!r} cannot be encoded as UTF-8 ({exc.reason})") from None


class Writer:
    """Fills coffer_values for one C call. Every buffer the values point
    into is kept in `keep`, which lives as long as the Writer."""

    def __init__(self, db: "Database", policy: int) -> None:
        self.db = db
        self.policy = policy
        self.keep: List[Any] = []

    def property_value(self, info: "_ClassInfo", prop: "_PropInfo", value: Any, out: _capi.coffer_value) -> None:
        """`value` for the whole property: a collection for a collection
        property, else one element."""
        where = prop.where
        if prop.collection == _capi.COLLECTION_MAP:
            if not _is_mapping(value):
                raise PropertyTypeError(f"{where}: expected a dict, got {type(value).__name__}")
            self.map_value(value, out, where, lambda v, o: self.element(info, prop, v, o, 1))
        elif prop.collection != _capi.COLLECTION_NONE:
            if not is_sequence(value):
                kind = "list" if prop.collection == _capi.COLLECTION_LIST else "set"
                raise PropertyTypeError(f"{where}: expected a {kind} (or another iterable of values), got {type(value).__name__}")
            self.list_value(list(value), out, lambda v, o: self.element(info, prop, v, o, 1))
        else:
            self.element(info, prop, value, out, 0)

    def element(self, info: "_ClassInfo", prop: "_PropInfo", value: Any, out: _capi.coffer_value, depth: int) -> None:
        """One value of the property's type (an element of its collection)."""
        where = prop.where
        if prop.type == _capi.TYPE_LINK:
            self.link(prop.target, value, out, where)
        elif prop.type == _capi.TYPE_MIXED:
            self.mixed(value, out, where, depth)
        elif prop.type == _capi.TYPE_LINKING_OBJECTS:
            raise PropertyTypeError(f"{where}: linking objects are read-only")
        else:
            to_c(prop.type, value, out, self.keep, where)

    def list_value(self, items: Sequence[Any], out: _capi.coffer_value,
                   convert: Callable[[Any, _capi.coffer_value], None]) -> None:
        array = (_capi.coffer_value * max(len(items), 1))()
        self.keep.append(array)
        for i, item in enumerate(items):
            convert(item, array[i])
        out.type = _capi.TYPE_LIST
        out.u.list.items = array
        out.u.list.count = len(items)

    def map_value(self, mapping: Mapping[Any, Any], out: _capi.coffer_value, where: str,
                  convert: Callable[[Any, _capi.coffer_value], None]) -> None:
        entries = (_capi.coffer_map_entry * max(len(mapping), 1))()
        self.keep.append(entries)
        for i, (key, item) in enumerate(mapping.items()):
            data = map_key(key, where)
            self.keep.append(data)
            entries[i].key.data = ctypes.cast(ctypes.c_char_p(data), ctypes.c_void_p).value or 0
            entries[i].key.size = len(data)
            convert(item, entries[i].value)
        out.type = _capi.TYPE_MAP
        out.u.map.entries = entries
        out.u.map.count = len(mapping)

    def mixed(self, value: Any, out: _capi.coffer_value, where: str, depth: int) -> None:
        if value is None:
            out.type = _capi.TYPE_NULL
        elif isinstance(value, Object):
            self.stored_link(value, out, where)
        elif _is_mapping(value) or is_sequence(value):
            if depth > _capi.MAX_NESTING:
                # One level past the limit reaches the C library, which
                # names the property; deeper ones stop here.
                raise LimitError(f"{where}: collections in a mixed value nest more than {_capi.MAX_NESTING} levels")
            convert = lambda v, o: self.mixed(v, o, where, depth + 1)  # noqa: E731
            if _is_mapping(value):
                self.map_value(value, out, where, convert)
            else:
                self.list_value(list(value), out, convert)
        else:
            for python_type, code in MIXED_TYPES:
                if isinstance(value, python_type):
                    to_c(code, value, out, self.keep, where)
                    return
            raise PropertyTypeError(f"{where}: a mixed value cannot hold {type(value).__name__}")

    def stored_link(self, obj: Object, out: _capi.coffer_value, where: str) -> None:
        if obj._db is None:
            raise InvalidArgumentError(f"{where}: a mixed value links only to stored objects; add the {type(obj).__name__} first")
        if obj._db is not self.db:
            raise InvalidArgumentError(f"{where}: the {obj._info.name} object belongs to another database handle")
        out.type = _capi.TYPE_LINK
        out.u.link.class_id = obj._info.class_id
        out.u.link.key = obj._key

    def link(self, target: Optional[str], value: Any, out: _capi.coffer_value, where: str) -> None:
        """A link to an object of class `target`: a stored object (the C
        library checks its class), or a dict, a list or tuple positional in
        schema order, or an unmanaged object that describes a new one."""
        assert target is not None
        if value is None:
            out.type = _capi.TYPE_NULL
        elif isinstance(value, Object) and value._db is not None:
            self.stored_link(value, out, where)
        elif isinstance(value, Object):
            if type(value).__name__ != target:
                raise PropertyTypeError(f"{where}: expected a {target} object, got a {type(value).__name__}")
            self.fields(self.db._class_info(target), value._values, out)
        elif _is_mapping(value) or isinstance(value, (list, tuple)):
            info = self.db._class_info(target)
            self.fields(info, self.db._values_dict(info, value), out)
        else:
            raise PropertyTypeError(f"{where}: expected a {target} object, a dict or list describing one, or None, "
                                    f"got {type(value).__name__}")

    def fields(self, info: "_ClassInfo", given: Mapping[str, Any], out: _capi.coffer_value) -> None:
        array, count = self.object_fields(info, given)
        out.type = _capi.TYPE_FIELDS
        out.u.fields.fields = array
        out.u.fields.count = count

    def object_fields(self, info: "_ClassInfo", given: Mapping[str, Any]) -> "Tuple[ctypes.Array[_capi.coffer_field], int]":
        """The fields of a new object (or an upsert): given values, and the
        declared defaults unless the object exists and is being updated."""
        return self.field_array(info, self.with_defaults(info, given))

    def with_defaults(self, info: "_ClassInfo", given: Mapping[str, Any]) -> Dict[str, Any]:
        """The values of a new object (or an upsert): `given`, and the
        declared defaults unless the object exists and is being updated."""
        values = dict(given)
        if not info.defaults.keys() <= values.keys() and not self._updates_existing(info, values):
            for name, default in info.defaults.items():
                values.setdefault(name, default)
        return values

    def field_array(self, info: "_ClassInfo", values: Dict[str, Any]) -> "Tuple[ctypes.Array[_capi.coffer_field], int]":
        """The coffer_field array of `values`, in their order."""
        packed = rowcode.pack_rows(self, info, [values]) or packing.object_fields(self, info, values)
        if packed is not None:
            return packed
        array = (_capi.coffer_field * max(len(values), 1))()
        self.keep.append(array)
        for i, (name, value) in enumerate(values.items()):
            prop = info.prop(name)
            array[i].property = prop.id
            self.property_value(info, prop, value, array[i].value)
        return array, len(values)

    def _updates_existing(self, info: "_ClassInfo", values: Mapping[str, Any]) -> bool:
        pk = info.primary_key
        if self.policy == _capi.UPDATE_ERROR or pk is None or pk.name not in values:
            return False
        return self.db._find_key(self.db._write_txn("create()"), info, values[pk.name]) is not None


class Reader:
    """Python values of coffer_values read from one object property."""

    def __init__(self, db: "Database") -> None:
        self.db = db

    def value(self, value: _capi.coffer_value, where: str, nested: Callable[[int], Any]) -> Any:
        """The Python value; `nested(kind)` makes the managed collection for
        a list, set or map value."""
        if value.type == _capi.TYPE_LINK:
            return self.link(value.u.link.class_id, value.u.link.key, where)
        if value.type in (_capi.TYPE_LIST, _capi.TYPE_SET, _capi.TYPE_MAP):
            return nested(value.type)
        return from_c(value, where)

    def link(self, class_id: int, key: int, where: str) -> Object:
        info = self.db._class_by_id(class_id)
        if info is None:
            raise NotFoundError(f"{where}: the value links to an object of a class this handle does not open "
                                "(see class_subset)")
        obj: Object = info.make(self.db, key)
        return obj

