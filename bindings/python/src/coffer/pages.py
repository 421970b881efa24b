"""Objects read many at a time: a whole object, or a page of results (a
range of positions), packed by one C call into one buffer in the layout
include/coffer.h documents ("Batch reads and writes"), unpacked in one pass
by `struct`, and decoded field by field when a field is read.

A PackedRow is one object's row of a page. It answers reads only while the
database is in the state it was packed in (its generation: any write,
refresh, new snapshot or close moves on) and on the database's thread;
otherwise, and for values it does not decode itself (links, collections,
dates and the other fixed-size types, linking objects), the caller reads
through the C library as before, so values and errors are the same either
way. A row keeps a copy of the bytes its page packed."""

from __future__ import annotations

import ctypes
import dataclasses
import struct
import sys
import threading
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Tuple

from . import _capi, rowcode
from .errors import Status, error_for
from .packing import PAYLOADS
from .values import damaged_text

if TYPE_CHECKING:
    from .database import Database, _ClassInfo

_T = _capi
# The sentinel model.py tests for: a value this module does not decode.
MISSING: Any = dataclasses.MISSING

# A packed value is a type tag, 4 bytes (`extra`) and a 16-byte payload
# laid out as coffer_value's union, so the payload formats of packing.py
# read the types decoded here, but for a bool, which the packed layout stores
# as a uint64 0 or 1: its byte that is set comes first on little-endian
# machines, last on big-endian ones.
_PAYLOADS = dict(PAYLOADS)
_PAYLOADS[_T.TYPE_BOOL] = "?15x" if sys.byteorder == "little" else "7x?8x"
_ROW_HEAD = "QI4x"  # key, row flags, reserved
_HEADER = struct.Struct("=IHHIIQQ")
# Objects per page when results are iterated.
ROWS_PER_PAGE = 256


class Layout:
    """How objects of one class are packed and unpacked: every stored
    property (linking objects are not stored) in schema order, one
    struct.Struct for a whole row, and where each property's type tag sits
    in the unpacked tuple. Pack calls write into one scratch buffer of the
    layout, grown to the size the library asks for; each page keeps a copy
    of the bytes used."""

    def __init__(self, info: "_ClassInfo") -> None:
        stored = [p for p in info.properties.values() if p.type != _T.TYPE_LINKING_OBJECTS]
        self.count = len(stored)
        self.ids = (ctypes.c_uint32 * max(self.count, 1))(*(p.id for p in stored))
        self.row_size = _T.PACK_ROW_HEAD_SIZE + _T.PACK_VALUE_SIZE * self.count
        formats = ["=", _ROW_HEAD]
        # Property name -> (position of its type tag, type decoded here or 0).
        self.plan: Dict[str, Tuple[int, int]] = {}
        position = 2
        for prop in stored:
            fast = 0 if prop.collection else prop.type
            payload = _PAYLOADS.get(fast)
            if payload is None:
                fast, payload = 0, "16x"
            formats.append("I4x" + payload)
            self.plan[prop.name] = (position, fast)
            position += 1 + (2 if payload == "QQ" else 0 if fast == 0 else 1)
        self.row = struct.Struct("".join(formats))
        assert self.row.size == self.row_size
        # Every property in schema order: (name, tag position or -1, fast type).
        self.order = [(name, *self.plan.get(name, (-1, 0))) for name in info.names]
        # as_dict's common case in one generated expression, if the class allows it.
        self.decode = rowcode.decoder(self.order)
        # The same as a tuple in schema order (Object.to_tuple, Results.tuples).
        self.decode_tuple = rowcode.tuple_decoder(self.order)
        # A page of them in one expression (Results.tuples).
        self.decode_page = rowcode.page_decoder(self.order)
        # The same from the payloads alone (no row head, no type tags, so
        # fewer Python objects per row), the page's tags checked column by
        # column first (page_tuples).
        self._payload_row: Optional[struct.Struct] = None
        self._tag_columns: List[Tuple[int, bytes]] = []
        self.decode_payloads: Optional[rowcode.PayloadPageDecoder] = None
        if self.decode_page is not None:
            payload_formats = ["=", "16x"]
            payload_order = []
            at = 0
            for index, prop in enumerate(stored):
                payload = _PAYLOADS[prop.type]
                payload_formats.append("8x" + payload)
                payload_order.append((at, prop.type))
                at += 2 if payload == "QQ" else 1
                # The tag of value `index` as the 4-byte word of the rows.
                word = (_T.PACK_ROW_HEAD_SIZE + _T.PACK_VALUE_SIZE * index) // 4
                self._tag_columns.append((word, struct.pack("=I", prop.type)))
            self._payload_row = struct.Struct("".join(payload_formats))
            assert self._payload_row.size == self.row_size
            self.decode_payloads = rowcode.payload_page_decoder(payload_order)
        self._needed = ctypes.c_size_t()
        self._needed_ref = ctypes.byref(self._needed)
        # The lookup by primary key (coffer_pack_request_run): every argument
        # set once here and in _grow, the key written before each run; its
        # payload (a view of the request's key) is what the caller writes
        # for an int key, the type staying TYPE_INT between lookups.
        self.request = _capi.coffer_pack_request(cls=info.class_id, props=self.ids, count=self.count,
                                                 flags=_T.PACK_COPY)
        self.request.key.type = _T.TYPE_INT
        self.request_key = self.request.key
        self.key_payload = self.request_key.u
        self._request_ref = ctypes.byref(self.request)
        # lookup_tuple's code, compiled again for each scratch buffer.
        self._lookup_source = rowcode.lookup_source(self.order, _T.PACK_HEADER_SIZE)
        self.lookup_tuple: Optional[Callable[[_capi.TxnP, int], Any]] = None
        self._grow(4096)

    def _grow(self, size: int) -> None:
        self._scratch = bytearray(size)
        self._scratch_c = (ctypes.c_char * size).from_buffer(self._scratch)
        self.request.buf = ctypes.addressof(self._scratch_c)
        self.request.capacity = size
        if self._lookup_source is not None:
            # lookup_tuple(txn, key) for an int key in the int64 range: the
            # tuple of every property, None when no object has the key, or
            # MISSING for the general path (Database.tuple_for_primary_key).
            self.lookup_tuple = rowcode.compile_lookup(self._lookup_source, {
                "payload": self.key_payload, "run": _run_request, "ref": self._request_ref, "request": self.request,
                "unpack": self.row.unpack_from, "scratch": self._scratch, "view": memoryview(self._scratch),
                "kinds": tuple(fast for _, _, fast in self.order), "NOT_FOUND": _NOT_FOUND, "MISSING": MISSING})

    def pack_object(self, handle: _capi.ObjectP) -> Tuple[bytes, Tuple[Any, ...]]:
        """The row of one open object: the bytes packed and its values."""
        for _ in range(2):
            status = _capi.coffer_object_pack(handle, self.ids, self.count, _T.PACK_COPY, self._scratch_c,
                                              len(self._scratch), self._needed_ref)
            if status == Status.OK:
                return self._used(), self.row.unpack_from(self._scratch, _T.PACK_HEADER_SIZE)
            self._retry(status)
        raise AssertionError("unreachable")  # _retry raises on the second failure

    def pack_by_request(self, txn: _capi.TxnP) -> Optional[Tuple[bytes, Tuple[Any, ...]]]:
        """The row of the object of the class whose primary key the caller
        wrote into `request.key` (through `key_payload` for an int), found
        and packed by one C call (coffer_pack_request_run) that passes the
        transaction and the request: the bytes packed and its values; None
        if no object has that key. Other errors (a key of the wrong type)
        raise."""
        for _ in range(2):
            status = _run_request(txn, self._request_ref)
            if status == _OK:
                scratch = self._scratch
                return bytes(memoryview(scratch)[:self.request.needed]), self.row.unpack_from(scratch, _T.PACK_HEADER_SIZE)
            if status == _NOT_FOUND:
                return None
            self._needed.value = self.request.needed
            self._retry(status)  # grows the buffer to the size named, or raises
        raise AssertionError("unreachable")  # _retry raises on the second failure

    def pack_page(self, results: _capi.ResultsP, start: int, rows: int) -> Tuple[bytes, List[Tuple[Any, ...]]]:
        """Positions start .. start+rows-1 of C results: the bytes packed and
        the unpacked values of every row, in one pass."""
        for _ in range(2):
            status = _capi.coffer_results_pack(results, start, rows, self.ids, self.count, _T.PACK_COPY,
                                               self._scratch_c, len(self._scratch), self._needed_ref)
            if status == Status.OK:
                end = _T.PACK_HEADER_SIZE + rows * self.row_size
                unpacked = list(self.row.iter_unpack(memoryview(self._scratch)[_T.PACK_HEADER_SIZE:end]))
                return self._used(), unpacked
            self._retry(status)
        raise AssertionError("unreachable")

    def page_tuples(self, results: _capi.ResultsP, start: int, rows: int
                    ) -> Tuple[bytes, Optional[List[Tuple[Any, ...]]]]:
        """Positions start .. start+rows-1 of C results, packed by one C call,
        as tuples of every property in schema order (Results.tuples): the
        bytes packed and the tuples, or None for them when a row is not of
        the common case (a null, a deleted object, a string that is not
        UTF-8; the caller then unpacks the bytes with unpack_page). Every
        row's type tags are checked before anything is unpacked, one
        comparison per property for the whole page; then only the payloads
        are unpacked, and decoded in one expression."""
        for _ in range(2):
            status = _capi.coffer_results_pack(results, start, rows, self.ids, self.count, _T.PACK_COPY,
                                               self._scratch_c, len(self._scratch), self._needed_ref)
            if status == Status.OK:
                break
            self._retry(status)
        else:
            raise AssertionError("unreachable")  # _retry raises on the second failure
        data = self._used()
        payload_row, decode = self._payload_row, self.decode_payloads
        if payload_row is None or decode is None or rows == 0:
            return data, None
        end = _T.PACK_HEADER_SIZE + rows * self.row_size
        with memoryview(data) as whole, whole[_T.PACK_HEADER_SIZE:end] as body, body.cast("I") as words:
            step = self.row_size // 4
            for word, tag in self._tag_columns:
                if words[word::step] != memoryview(tag * rows).cast("I"):
                    return data, None
            return data, decode(payload_row.iter_unpack(body), data)

    def unpack_page(self, data: bytes, rows: int) -> List[Tuple[Any, ...]]:
        """Every row of packed bytes (from page_tuples), unpacked whole, as
        pack_page gives them."""
        end = _T.PACK_HEADER_SIZE + rows * self.row_size
        return list(self.row.iter_unpack(memoryview(data)[_T.PACK_HEADER_SIZE:end]))

    def _used(self) -> bytes:
        return bytes(memoryview(self._scratch)[:self._needed.value])

    def _retry(self, status: int) -> None:
        """Grows the scratch buffer to the size the library named, or raises
        the error of any other status."""
        needed = self._needed.value
        if status != Status.BUFFER_TOO_SMALL or needed <= len(self._scratch):
            raise error_for(status, _capi.last_error_message())
        self._grow(needed)


class PackedRow:
    """One object's packed values, decoded one field at a time."""

    __slots__ = ("data", "values", "generation", "thread", "layout")

    def __init__(self, data: bytes, values: Tuple[Any, ...], generation: int, thread: int, layout: Layout) -> None:
        self.data = data
        self.values = values
        self.generation = generation
        self.thread = thread
        self.layout = layout

    def current(self, db: "Database") -> bool:
        """Whether the database is still in the state the row was read in,
        on this thread."""
        return db._generation == self.generation and threading.get_ident() == self.thread

    def get(self, name: str, info: "_ClassInfo") -> Any:
        """The value of property `name`, or MISSING where the caller reads it
        through the C library."""
        at, fast = self.layout.plan.get(name, (-1, 0))
        if at < 0:
            return MISSING
        values = self.values
        kind = values[at]
        if kind == fast and kind:
            if kind == _T.TYPE_STRING:
                start = values[at + 1]
                try:
                    return str(self.data[start:start + values[at + 2]], "utf-8")
                except UnicodeDecodeError as exc:
                    raise damaged_text(info.where(name), exc) from None
            if kind == _T.TYPE_BINARY:
                start = values[at + 1]
                return self.data[start:start + values[at + 2]]
            return values[at + 1]
        if kind == _T.TYPE_NULL:
            return None
        return MISSING

    def as_dict(self, info: "_ClassInfo") -> Optional[Dict[str, Any]]:
        """Every property in schema order, or None if any needs the C
        library (the caller then reads the whole object that way)."""
        values, data = self.values, self.data
        decode = self.layout.decode
        if decode is not None:
            whole = decode(values, data)
            if whole is not None:
                return whole
        out: Dict[str, Any] = {}
        for name, at, fast in self.layout.order:
            kind = values[at] if at >= 0 else -1
            if kind == fast and kind:
                if kind == _STRING:
                    start = values[at + 1]
                    try:
                        out[name] = str(data[start:start + values[at + 2]], "utf-8")
                    except UnicodeDecodeError as exc:
                        raise damaged_text(info.where(name), exc) from None
                elif kind == _BINARY:
                    start = values[at + 1]
                    out[name] = data[start:start + values[at + 2]]
                else:
                    out[name] = values[at + 1]
            elif kind == _NULL:
                out[name] = None
            else:
                return None
        return out


_STRING, _BINARY, _NULL = _T.TYPE_STRING, _T.TYPE_BINARY, _T.TYPE_NULL
_OK, _NOT_FOUND = int(Status.OK), int(Status.NOT_FOUND)
_run_request = _capi.coffer_pack_request_run_unconverted


def row_of_object(db: "Database", layout: Layout, handle: _capi.ObjectP) -> PackedRow:
    """The packed row of one open object, read in the current transaction."""
    data, values = layout.pack_object(handle)
    return PackedRow(data, values, db._generation, threading.get_ident(), layout)


def header(buf: bytes) -> Tuple[int, ...]:
    """The packed header: magic, version, flags, row count, value count,
    row size, size (for tests and checks)."""
    return _HEADER.unpack_from(buf, 0)
