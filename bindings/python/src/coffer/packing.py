"""Whole objects in one C call, with their scalar values packed and unpacked
by `struct` straight in the memory of coffer_value arrays.

Setting a ctypes structure field costs about as much as a C call, and an
object has a field per property, so writes and reads of whole objects go
through here: a create fills one coffer_field array (strings and bytes
copied behind it in the same buffer), and a read takes every property with
one coffer_object_get_values() call and one unpack. Only values whose
conversion cannot fail take this path; any other value (a link, a
collection, a date, an int where a float is declared, a string with a NUL)
goes through codec.py as before, so results and error messages are the
same either way."""

from __future__ import annotations

import ctypes
import struct
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Sequence, Tuple

from . import _capi
from .values import INT64_MAX, INT64_MIN, damaged_text

if TYPE_CHECKING:
    from .codec import Writer
    from .database import Database, _ClassInfo, _PropInfo

# The layout the formats below assume: a 4-byte type tag, then a 16-byte
# union at offset 8; a field is a 4-byte property id, then a value at
# offset 8; pointers and sizes are 8 bytes. Elsewhere packing stays off.
ENABLED = (
    ctypes.sizeof(_capi.coffer_value) == 24
    and _capi.coffer_value.u.offset == 8
    and ctypes.sizeof(_capi.coffer_field) == 32
    and _capi.coffer_field.value.offset == 8
    and ctypes.sizeof(ctypes.c_void_p) == 8
    and ctypes.sizeof(ctypes.c_size_t) == 8
)
FIELD_SIZE = 32

_T = _capi
# Union members by property type, as `struct` formats of 16 bytes (also the
# payloads of packed values, pages.py).
PAYLOADS = {
    _T.TYPE_BOOL: "?15x",
    _T.TYPE_INT: "q8x",
    _T.TYPE_FLOAT: "f12x",
    _T.TYPE_DOUBLE: "d8x",
    _T.TYPE_STRING: "QQ",
    _T.TYPE_BINARY: "QQ",
}
# How many items each union format unpacks to.
_WIDTHS = {t: 2 if f == "QQ" else 1 for t, f in PAYLOADS.items()}

_FIELD = {t: struct.Struct("=I4xi4x" + f) for t, f in PAYLOADS.items()}
_NULL_FIELD = struct.Struct("=I4xi4x16x")
_FLOAT32 = struct.Struct("=f")


def _python_c_function(name: str, restype: Any, argtypes: List[Any]) -> Any:
    function = getattr(ctypes.pythonapi, name)
    function.restype = restype
    function.argtypes = argtypes
    return function


try:
    # Straight from C memory to str and bytes, without an intermediate copy.
    _decode_utf8: Callable[[int, int, None], str] = _python_c_function(
        "PyUnicode_DecodeUTF8", ctypes.py_object, [ctypes.c_void_p, ctypes.c_ssize_t, ctypes.c_char_p])
    _copy_bytes: Callable[[int, int], bytes] = _python_c_function(
        "PyBytes_FromStringAndSize", ctypes.py_object, [ctypes.c_void_p, ctypes.c_ssize_t])
except AttributeError:  # a Python without its C API in ctypes.pythonapi
    def _decode_utf8(address: int, size: int, errors: None) -> str:
        return ctypes.string_at(address, size).decode("utf-8")

    def _copy_bytes(address: int, size: int) -> bytes:
        return ctypes.string_at(address, size)


# ---- writing ---------------------------------------------------------------


def object_fields(writer: "Writer", info: "_ClassInfo",
                  values: Dict[str, Any]) -> "Optional[Tuple[ctypes.Array[_capi.coffer_field], int]]":
    """The coffer_field array of `values` (property name to value, in the
    order given), or None when a name is not a property (the caller's
    general path then raises in the same order as always)."""
    if not values:
        return None
    return objects_fields(writer, info, [values])


def objects_fields(writer: "Writer", info: "_ClassInfo",
                   rows: Sequence[Dict[str, Any]]) -> "Optional[Tuple[ctypes.Array[_capi.coffer_field], int]]":
    """One coffer_field array holding the fields of every object of `rows`
    in turn, and the number of fields per object, for objects that list the
    same properties in the same order (None otherwise, or when a name is
    not a property, or when packing is off). Values of the common scalar
    kinds are packed; the others are converted by `writer` into their
    fields afterwards, in order, raising what they always raise. The
    buffers stay alive in writer.keep."""
    if not ENABLED or not rows:
        return None
    names = tuple(rows[0])
    count = len(names)
    properties = info.properties
    found = [properties.get(name) for name in names]
    props = [prop for prop in found if prop is not None]
    if count == 0 or len(props) != count:
        return None
    total = count * len(rows)
    buf = bytearray(total * FIELD_SIZE)
    texts: List[Tuple[int, int, int, int, int]] = []  # offset, property id, type, start, size
    chunks: List[bytes] = []
    size = 0
    others: List[Tuple[int, Any, Any]] = []
    offset = 0
    for values in rows:
        if len(values) != count or (len(rows) > 1 and tuple(values) != names):
            return None
        for prop, value in zip(props, values.values()):
            kind = prop.type
            if prop.collection:
                others.append((offset, prop, value))
            elif value is None and kind != _T.TYPE_LINKING_OBJECTS:
                _NULL_FIELD.pack_into(buf, offset, prop.id, _T.TYPE_NULL)
            elif kind == _T.TYPE_INT and type(value) is int and INT64_MIN <= value <= INT64_MAX:
                _FIELD[kind].pack_into(buf, offset, prop.id, kind, value)
            elif kind == _T.TYPE_STRING and isinstance(value, str):
                try:
                    data = value.encode("utf-8")
                except UnicodeEncodeError:
                    data = b"\0"  # codec.py names the problem
                if b"\0" in data:
                    others.append((offset, prop, value))
                else:
                    texts.append((offset, prop.id, kind, size, len(data)))
                    chunks.append(data)
                    size += len(data)
            elif kind == _T.TYPE_DOUBLE and isinstance(value, float):
                _FIELD[kind].pack_into(buf, offset, prop.id, kind, value)
            elif kind == _T.TYPE_BOOL and type(value) is bool:
                _FIELD[kind].pack_into(buf, offset, prop.id, kind, value)
            elif kind == _T.TYPE_FLOAT and isinstance(value, float):
                try:
                    _FIELD[kind].pack_into(buf, offset, prop.id, kind, value)
                except OverflowError:  # finite but beyond float32: codec.py says so
                    others.append((offset, prop, value))
            elif kind == _T.TYPE_BINARY and isinstance(value, (bytes, bytearray, memoryview)):
                data = value if type(value) is bytes else bytes(value)
                texts.append((offset, prop.id, kind, size, len(data)))
                chunks.append(data)
                size += len(data)
            else:
                others.append((offset, prop, value))
            offset += FIELD_SIZE
    if chunks:
        buf += b"".join(chunks)
    array = (_capi.coffer_field * total).from_buffer(buf)
    writer.keep.append(array)  # which keeps buf
    base = ctypes.addressof(array) + total * FIELD_SIZE
    for offset, prop_id, kind, start, length in texts:
        _FIELD[kind].pack_into(buf, offset, prop_id, kind, base + start, length)
    for offset, prop, value in others:
        field = array[offset // FIELD_SIZE]
        field.property = prop.id
        writer.property_value(info, prop, value, field.value)
    return array, count


def scalar_value(kind: int, value: Any, out: _capi.coffer_value) -> bool:
    """Fills `out` with a bool, int or float `value` of a property of type
    `kind` and returns True, or returns False (having changed nothing) for
    anything else, which the caller converts with codec.py."""
    if kind == _T.TYPE_INT:
        if type(value) is not int or not INT64_MIN <= value <= INT64_MAX:
            return False
        out.u.integer = value
    elif kind == _T.TYPE_DOUBLE:
        if not isinstance(value, float):
            return False
        out.u.double_value = value
    elif kind == _T.TYPE_BOOL:
        if type(value) is not bool:
            return False
        out.u.boolean = value
    elif kind == _T.TYPE_FLOAT:
        if not isinstance(value, float):
            return False
        try:
            _FLOAT32.pack(value)
        except OverflowError:
            return False
        out.u.float_value = value
    else:
        return False
    out.type = kind
    return True


# ---- reading ---------------------------------------------------------------


class ObjectReader:
    """Reads every property of objects of one class: one C call fills a
    coffer_value per stored property, one unpack gives their scalars, and
    the rest (nulls, links, collections, mixed values, dates and the other
    fixed-size types) are read as codec.py reads them. Linking-objects
    properties are results, made without the C library reading anything."""

    def __init__(self, info: "_ClassInfo") -> None:
        self.info = info
        stored = [p for p in info.properties.values() if p.type != _T.TYPE_LINKING_OBJECTS]
        self.count = len(stored)
        self.ids = (ctypes.c_uint32 * max(self.count, 1))(*(p.id for p in stored))
        # Reused: an object is read completely before the next one.
        self.out = (_capi.coffer_value * max(self.count, 1))()
        formats = ["="]
        # Per property in schema order: (name, slot or -1 for linking
        # objects, type expected in the fast case or 0, position of the
        # type tag in the unpacked tuple).
        self.plan: List[Tuple[str, int, int, int]] = []
        position = 0
        slot_of = {p.name: i for i, p in enumerate(stored)}
        for name in info.names:
            prop = info.properties[name]
            slot = slot_of.get(name, -1)
            if slot < 0:
                self.plan.append((name, -1, 0, 0))
                continue
            fast = 0 if prop.collection else prop.type
            payload = PAYLOADS.get(fast)
            if payload is None:
                fast = 0
                formats.append("i20x")
                self.plan.append((name, slot, 0, position))
                position += 1
            else:
                formats.append("i4x" + payload)
                self.plan.append((name, slot, fast, position))
                position += 1 + _WIDTHS[fast]
        self.unpack = struct.Struct("".join(formats)).unpack_from
        self.by_slot: List["_PropInfo"] = stored

    def read(self, db: "Database", handle: _capi.ObjectP, key: int) -> Dict[str, Any]:
        out = self.out
        _capi.coffer_object_get_values(handle, self.ids, self.count, out)
        raw = self.unpack(out)
        info = self.info
        values: Dict[str, Any] = {}
        for name, slot, fast, at in self.plan:
            kind = raw[at] if slot >= 0 else -1
            if kind == fast and kind:
                if kind == _T.TYPE_STRING:
                    size = raw[at + 2]
                    try:
                        values[name] = _decode_utf8(raw[at + 1], size, None) if size else ""
                    except UnicodeDecodeError as exc:
                        raise damaged_text(info.where(name), exc) from None
                elif kind == _T.TYPE_BINARY:
                    size = raw[at + 2]
                    values[name] = _copy_bytes(raw[at + 1], size) if size else b""
                else:
                    values[name] = raw[at + 1]
            elif kind == _T.TYPE_NULL:
                values[name] = None
            elif slot < 0:
                prop = info.properties[name]
                assert prop.target is not None and prop.origin is not None
                values[name] = db._backlinks_from(info, key, prop.target, prop.origin)
            else:
                values[name] = self._general(db, key, slot, name)
        return values

    def _general(self, db: "Database", key: int, slot: int, name: str) -> Any:
        """Slot `slot` of the last read, as codec.py reads any value (the
        database reads it: a link or a collection needs its layer)."""
        return db._stored_value(self.info, key, self.by_slot[slot], self.out[slot])
