"""Conversion between Python values and coffer_value, keyed by coffer_type.

Each property type has one function that fills a coffer_value from a Python
value and one that reads a Python value back. Link, mixed and collection
types add entries to the two tables.
"""

from __future__ import annotations

import ctypes
import datetime
import decimal
import math
import operator
import uuid
from typing import Any, Callable, Dict, List

from . import _capi
from .errors import CorruptedError, InvalidArgumentError, PropertyTypeError
from .objectid import ObjectId

EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1

# Python types a property of each coffer type accepts, for messages.
ACCEPTED = {
    _capi.TYPE_BOOL: "bool",
    _capi.TYPE_INT: "int",
    _capi.TYPE_FLOAT: "float or int",
    _capi.TYPE_DOUBLE: "float or int",
    _capi.TYPE_STRING: "str",
    _capi.TYPE_BINARY: "bytes",
    _capi.TYPE_DATE: "datetime.datetime",
    _capi.TYPE_OBJECT_ID: "coffer.ObjectId",
    _capi.TYPE_UUID: "uuid.UUID",
    _capi.TYPE_DECIMAL128: "decimal.Decimal or int",
}


def _address(data: bytes) -> int:
    # c_char_p points at the bytes object's own buffer; the caller keeps the
    # bytes object alive for as long as the coffer_value is used.
    return ctypes.cast(ctypes.c_char_p(data), ctypes.c_void_p).value or 0


def _not_bool(value: Any) -> None:
    if isinstance(value, bool):
        raise TypeError


# ---- Python -> C -----------------------------------------------------------


def _bool_to_c(value: Any, out: _capi.coffer_value, keep: List[Any]) -> None:
    if not isinstance(value, bool):
        raise TypeError
    out.u.boolean = value


def _int_to_c(value: Any, out: _capi.coffer_value, keep: List[Any]) -> None:
    _not_bool(value)
    number = operator.index(value)  # TypeError for floats and others
    if not INT64_MIN <= number <= INT64_MAX:
        raise ValueError(f"{number} is outside the 64-bit integer range")
    out.u.integer = number


def _real(value: Any) -> float:
    _not_bool(value)
    if isinstance(value, float):
        return value
    if isinstance(value, int):
        try:
            return float(value)
        except OverflowError:
            raise ValueError(f"{value} is too large for a floating-point number") from None
    raise TypeError


def _float_to_c(value: Any, out: _capi.coffer_value, keep: List[Any]) -> None:
    real = _real(value)
    if math.isfinite(real) and math.isinf(ctypes.c_float(real).value):
        raise ValueError(f"{value!r} does not fit in a 32-bit float")
    out.u.float_value = real


def _double_to_c(value: Any, out: _capi.coffer_value, keep: List[Any]) -> None:
    out.u.double_value = _real(value)


def _string_to_c(value: Any, out: _capi.coffer_value, keep: List[Any]) -> None:
    if not isinstance(value, str):
        raise TypeError
    try:
        data = value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError(f"the string cannot be encoded as UTF-8 ({exc.reason})") from None
    if b"\0" in data:
        raise ValueError("strings cannot contain NUL characters")
    keep.append(data)
    out.u.string.data = _address(data)
    out.u.string.size = len(data)


def _binary_to_c(value: Any, out: _capi.coffer_value, keep: List[Any]) -> None:
    if not isinstance(value, (bytes, bytearray, memoryview)):
        raise TypeError
    data = bytes(value)
    keep.append(data)
    out.u.binary.data = _address(data)
    out.u.binary.size = len(data)


def _date_to_c(value: Any, out: _capi.coffer_value, keep: List[Any]) -> None:
    if not isinstance(value, datetime.datetime):
        raise TypeError
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError(
            f"{value.isoformat()} is a naive datetime; give a timezone-aware one "
            "(for example with tzinfo=datetime.timezone.utc)"
        )
    delta = value - EPOCH
    micros = (delta.days * 86400 + delta.seconds) * 1_000_000 + delta.microseconds
    seconds, rest = divmod(micros, 1_000_000)
    if seconds < 0 and rest:
        # The C type wants the nanoseconds to carry the sign of the seconds.
        seconds += 1
        rest -= 1_000_000
    out.u.date.seconds = seconds
    out.u.date.nanoseconds = rest * 1000


def _object_id_to_c(value: Any, out: _capi.coffer_value, keep: List[Any]) -> None:
    if not isinstance(value, ObjectId):
        raise TypeError
    ctypes.memmove(out.u.object_id.bytes, value.binary, 12)


def _uuid_to_c(value: Any, out: _capi.coffer_value, keep: List[Any]) -> None:
    if not isinstance(value, uuid.UUID):
        raise TypeError
    ctypes.memmove(out.u.uuid.bytes, value.bytes, 16)


def _decimal_to_c(value: Any, out: _capi.coffer_value, keep: List[Any]) -> None:
    _not_bool(value)
    if isinstance(value, int):
        value = decimal.Decimal(value)
    if not isinstance(value, decimal.Decimal):
        raise TypeError
    if value.is_snan():
        raise ValueError("signalling NaN cannot be stored as decimal128")
    try:
        _capi.coffer_decimal128_from_string(str(value).encode("ascii"), ctypes.byref(out.u.decimal128))
    except InvalidArgumentError as exc:
        raise ValueError(exc.message) from None


TO_C: Dict[int, Callable[[Any, _capi.coffer_value, List[Any]], None]] = {
    _capi.TYPE_BOOL: _bool_to_c,
    _capi.TYPE_INT: _int_to_c,
    _capi.TYPE_FLOAT: _float_to_c,
    _capi.TYPE_DOUBLE: _double_to_c,
    _capi.TYPE_STRING: _string_to_c,
    _capi.TYPE_BINARY: _binary_to_c,
    _capi.TYPE_DATE: _date_to_c,
    _capi.TYPE_OBJECT_ID: _object_id_to_c,
    _capi.TYPE_UUID: _uuid_to_c,
    _capi.TYPE_DECIMAL128: _decimal_to_c,
}


def to_c(coffer_type: int, value: Any, out: _capi.coffer_value, keep: List[Any], where: str) -> None:
    """Fills `out` with `value` for a property of `coffer_type`. Buffers that
    `out` points into are appended to `keep`, which must outlive the C call.
    None becomes null; whether null is allowed is the C library's check.
    `where` names the property in error messages."""
    if value is None:
        out.type = _capi.TYPE_NULL
        return
    convert = TO_C.get(coffer_type)
    if convert is None:
        raise PropertyTypeError(f"{where}: properties of type {_capi.type_name(coffer_type)} are not supported")
    try:
        convert(value, out, keep)
    except TypeError:
        raise PropertyTypeError(
            f"{where}: expected {ACCEPTED[coffer_type]}, got {type(value).__name__}"
        ) from None
    except ValueError as exc:
        raise InvalidArgumentError(f"{where}: {exc}") from None
    out.type = coffer_type


# ---- C -> Python -----------------------------------------------------------


def _bytes_of(b: _capi.coffer_bytes) -> bytes:
    return ctypes.string_at(b.data, b.size) if b.size else b""


def _date_from_c(value: _capi.coffer_value) -> datetime.datetime:
    stamp = value.u.date
    nanos = stamp.seconds * 1_000_000_000 + stamp.nanoseconds
    # Floor to microseconds, the precision of datetime, so order is kept.
    try:
        return EPOCH + datetime.timedelta(microseconds=nanos // 1000)
    except OverflowError:
        raise InvalidArgumentError(
            f"the date {stamp.seconds}s {stamp.nanoseconds}ns since 1970 is outside the range of datetime"
        ) from None


def _decimal_from_c(value: _capi.coffer_value) -> decimal.Decimal:
    buf = ctypes.create_string_buffer(_capi.DECIMAL128_STRING_SIZE)
    _capi.coffer_decimal128_to_string(ctypes.byref(value.u.decimal128), buf)
    return decimal.Decimal(buf.value.decode("ascii"))


FROM_C: Dict[int, Callable[[_capi.coffer_value], Any]] = {
    _capi.TYPE_NULL: lambda v: None,
    _capi.TYPE_BOOL: lambda v: bool(v.u.boolean),
    _capi.TYPE_INT: lambda v: int(v.u.integer),
    _capi.TYPE_FLOAT: lambda v: float(v.u.float_value),
    _capi.TYPE_DOUBLE: lambda v: float(v.u.double_value),
    _capi.TYPE_STRING: lambda v: _bytes_of(v.u.string).decode("utf-8"),
    _capi.TYPE_BINARY: lambda v: _bytes_of(v.u.binary),
    _capi.TYPE_DATE: _date_from_c,
    _capi.TYPE_OBJECT_ID: lambda v: ObjectId(bytes(v.u.object_id.bytes)),
    _capi.TYPE_UUID: lambda v: uuid.UUID(bytes=bytes(v.u.uuid.bytes)),
    _capi.TYPE_DECIMAL128: _decimal_from_c,
}


def damaged_text(where: str, exc: UnicodeDecodeError) -> CorruptedError:
    """The error for a stored string that is not UTF-8: the library only
    stores UTF-8, so the file was damaged."""
    return CorruptedError(
        f"{where}: the stored string is not valid UTF-8 (at byte {exc.start}): the file is damaged"
    )


def text_from_storage(data: bytes, where: str) -> str:
    """`data`, a string read from the database, as str; CorruptedError
    naming `where` when it is not UTF-8."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise damaged_text(where, exc) from None


def from_c(value: _capi.coffer_value, where: str) -> Any:
    """The Python value of `value`, copied out of any borrowed buffer."""
    convert = FROM_C.get(value.type)
    if convert is None:
        raise PropertyTypeError(f"{where}: values of type {_capi.type_name(value.type)} are not supported")
    try:
        return convert(value)
    except InvalidArgumentError as exc:
        raise InvalidArgumentError(f"{where}: {exc.message}") from None
    except UnicodeDecodeError as exc:
        raise damaged_text(where, exc) from None


# The value the C library gives a required property that was not set.
ZERO_VALUES: Dict[int, Any] = {
    _capi.TYPE_BOOL: False,
    _capi.TYPE_INT: 0,
    _capi.TYPE_FLOAT: 0.0,
    _capi.TYPE_DOUBLE: 0.0,
    _capi.TYPE_STRING: "",
    _capi.TYPE_BINARY: b"",
    _capi.TYPE_DATE: EPOCH,
    _capi.TYPE_OBJECT_ID: ObjectId(bytes(12)),
    _capi.TYPE_UUID: uuid.UUID(int=0),
    _capi.TYPE_DECIMAL128: decimal.Decimal(0),
}
