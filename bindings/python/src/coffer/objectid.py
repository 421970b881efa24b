"""coffer.ObjectId: the 12-byte ObjectId type (4-byte big-endian seconds,
5 random bytes per process, a 3-byte counter), as BSON and Realm use it."""

from __future__ import annotations

import datetime
from typing import Union

from . import _capi
from .errors import InvalidArgumentError


class ObjectId:
    """An ObjectId. `ObjectId()` generates a fresh one; `ObjectId("24 hex
    digits")`, `ObjectId(bytes12)` or `ObjectId(other)` give a given one."""

    __slots__ = ("_bytes",)

    def __init__(self, value: Union[str, bytes, "ObjectId", None] = None) -> None:
        if value is None:
            raw = _capi.coffer_object_id()
            _capi.coffer_object_id_generate(raw)
            self._bytes = bytes(raw.bytes)
        elif isinstance(value, ObjectId):
            self._bytes = value._bytes
        elif isinstance(value, str):
            if len(value) != 24 or any(c not in "0123456789abcdefABCDEF" for c in value):
                raise InvalidArgumentError(f"ObjectId: {value!r} is not 24 hexadecimal digits")
            self._bytes = bytes.fromhex(value)
        elif isinstance(value, (bytes, bytearray, memoryview)):
            raw_bytes = bytes(value)
            if len(raw_bytes) != 12:
                raise InvalidArgumentError(f"ObjectId: expected 12 bytes, got {len(raw_bytes)}")
            self._bytes = raw_bytes
        else:
            raise TypeError(f"ObjectId: expected a str, bytes or ObjectId, got {type(value).__name__}")

    @property
    def binary(self) -> bytes:
        """The 12 bytes."""
        return self._bytes

    @property
    def generation_time(self) -> datetime.datetime:
        """The creation time stored in the first four bytes, in UTC."""
        seconds = int.from_bytes(self._bytes[:4], "big")
        return datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc)

    def __str__(self) -> str:
        return self._bytes.hex()

    def __repr__(self) -> str:
        return f"ObjectId('{self._bytes.hex()}')"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, ObjectId):
            return self._bytes == other._bytes
        return NotImplemented

    def __lt__(self, other: "ObjectId") -> bool:
        if isinstance(other, ObjectId):
            return self._bytes < other._bytes
        return NotImplemented

    def __le__(self, other: "ObjectId") -> bool:
        if isinstance(other, ObjectId):
            return self._bytes <= other._bytes
        return NotImplemented

    def __gt__(self, other: "ObjectId") -> bool:
        if isinstance(other, ObjectId):
            return self._bytes > other._bytes
        return NotImplemented

    def __ge__(self, other: "ObjectId") -> bool:
        if isinstance(other, ObjectId):
            return self._bytes >= other._bytes
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._bytes)
