"""Code generated once per class layout for the two loops that run per
object: packing the fields of many objects into one coffer_field array
(writes), and turning a packed row into a dict (reads of whole objects).

Each generated function handles only the common case: every property of the
layout is a scalar of a kind packing.py packs (bool, int, float, double,
string, bytes) and every value is of the plain Python type the general path
would pack without conversion. Anything else (a None, a
link, a collection, an int where a float is declared, a string with a NUL,
a float beyond float32, a null read, damaged UTF-8) makes the generated
function give up (None), and the caller takes the general path of
packing.py or pages.py, which gives the same results and raises the same
errors as always. The speed comes from one struct call per object, values
named by local variables instead of looked up per field, and no branching
on the property type at run time."""

from __future__ import annotations

import ctypes
import operator
import struct
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

from . import _capi
from .packing import ENABLED, FIELD_SIZE, PAYLOADS

if TYPE_CHECKING:
    from .codec import Writer
    from .database import _ClassInfo

_T = _capi
# The test each packed kind's value passes, as packing.objects_fields makes it.
_CHECKS = {
    _T.TYPE_BOOL: "type({v}) is bool",
    # An int beyond int64 makes struct raise, which gives the general path.
    _T.TYPE_INT: "type({v}) is int",
    _T.TYPE_FLOAT: "isinstance({v}, float)",
    _T.TYPE_DOUBLE: "isinstance({v}, float)",
    _T.TYPE_STRING: "isinstance({v}, str)",
    _T.TYPE_BINARY: "isinstance({v}, (bytes, bytearray, memoryview))",
}
_TEXT_KINDS = (_T.TYPE_STRING, _T.TYPE_BINARY)
# Bytes of text reserved per string or bytes field before the first pack;
# later packs reserve what the class used last time, with room to spare.
_TEXT_GUESS = 128

RowPacker = Callable[[Sequence[Dict[str, Any]], bytearray, bytearray, int], Optional[int]]
RowDecoder = Callable[[Tuple[Any, ...], bytes], Optional[Dict[str, Any]]]
TupleDecoder = Callable[[Tuple[Any, ...], bytes], Optional[Tuple[Any, ...]]]
PageDecoder = Callable[[List[Tuple[Any, ...]], bytes], Optional[List[Tuple[Any, ...]]]]
PayloadPageDecoder = Callable[[Iterator[Tuple[Any, ...]], bytes], Optional[List[Tuple[Any, ...]]]]


def _compile(source: str, name: str, namespace: Dict[str, Any]) -> Any:
    exec(compile(source, f"<coffer.rowcode {name}>", "exec"), namespace)
    return namespace[name]


# ---- writes ----------------------------------------------------------------


def _packer_source(kinds: List[int], ids: List[int], positional: bool = False) -> str:
    """A function pack(rows, buf, text, base) that writes the fields of every
    row into buf, the bytes of strings and binaries into text (whose address
    is base), and returns how many text bytes it used; -1 when text is too
    small, None when a value needs the general path. Rows are dicts, or
    with `positional` tuples or lists of every value in order."""
    n = len(kinds)
    names = [f"v{i}" for i in range(n)]
    lines = [
        # put and len as default arguments: locals, faster than globals per row.
        "def pack(rows, buf, text, base, put=put, len=len, isinstance=isinstance, sequence=(tuple, list)):",
        "    off = 0",
        "    size = 0",
        "    cap = len(text)",
        "    for values in rows:",
    ]
    if positional:
        lines += [f"        if not isinstance(values, sequence) or len(values) != {n}:", "            return None",
                  f"        {', '.join(names)}{',' if n == 1 else ''} = values"]
    else:
        lines += [f"        if len(values) != {n}:", "            return None",
                  f"        {', '.join(names)}{',' if n == 1 else ''} = values.values()"]
    args: List[str] = []
    texts: List[int] = []
    for i, kind in enumerate(kinds):
        v = names[i]
        lines += [f"        if not ({_CHECKS[kind].format(v=v)}):", "            return None"]
        if kind == _T.TYPE_STRING:
            lines += [f"        d{i} = {v}.encode('utf-8')", f"        if b'\\0' in d{i}:", "            return None"]
        elif kind == _T.TYPE_BINARY:
            lines += [f"        d{i} = {v} if type({v}) is bytes else bytes({v})"]
        if kind in _TEXT_KINDS:
            lines += [f"        n{i} = len(d{i})", f"        s{i} = size", f"        size += n{i}"]
            texts.append(i)
            args += [str(ids[i]), str(kind), f"base + s{i}", f"n{i}"]
        else:
            args += [str(ids[i]), str(kind), v]
    if texts:
        lines += ["        if size > cap:", "            return -1"]
        lines += [f"        text[s{i}:s{i} + n{i}] = d{i}" for i in texts]
    lines += [f"        put(buf, off, {', '.join(args)})", f"        off += {n * FIELD_SIZE}", "    return size"]
    return "\n".join(lines) + "\n"


class _Packer:
    """The generated packer of one list of property names, and how much
    text space its objects needed last time."""

    __slots__ = ("pack", "texts", "per_row")

    def __init__(self, pack: RowPacker, texts: int) -> None:
        self.pack = pack
        self.texts = texts
        self.per_row = _TEXT_GUESS * texts


def _packer(info: "_ClassInfo", names: Tuple[str, ...], positional: bool = False) -> Optional[_Packer]:
    """The packer for objects of `info` giving `names` in this order (as
    dicts, or with `positional` as tuples or lists), made on first use;
    None when a property is not of a packed kind."""
    cache = info.positional_packers if positional else info.row_packers
    if names in cache:
        cached: Optional[_Packer] = cache[names]
        return cached
    made: Optional[_Packer] = None
    props = [info.properties.get(name) for name in names]
    if ENABLED and names and all(p is not None and not p.collection and p.type in _CHECKS for p in props):
        kinds = [p.type for p in props if p is not None]
        ids = [p.id for p in props if p is not None]
        put = struct.Struct("=" + "".join("I4xi4x" + PAYLOADS[k] for k in kinds)).pack_into
        pack = _compile(_packer_source(kinds, ids, positional), "pack", {"put": put})
        made = _Packer(pack, sum(k in _TEXT_KINDS for k in kinds))
    cache[names] = made
    return made


def pack_rows(writer: "Writer", info: "_ClassInfo", rows: Sequence[Dict[str, Any]]
              ) -> "Optional[Tuple[ctypes.Array[_capi.coffer_field], int]]":
    """What packing.objects_fields gives for `rows`, which all list the same
    property names in the same order, when every value is of the common
    case; None otherwise (nothing is kept then). The field array and the
    text buffer stay alive in writer.keep."""
    if not rows:
        return None
    return _pack_with(writer, rows, _packer(info, tuple(rows[0])), len(rows[0]))


def pack_positional(writer: "Writer", info: "_ClassInfo", rows: Sequence[Any],
                    names: Optional[Tuple[str, ...]] = None
                    ) -> "Optional[Tuple[ctypes.Array[_capi.coffer_field], int]]":
    """As pack_rows(), for rows given as tuples or lists of a value for
    every property in schema order (as sqlite3's executemany takes them),
    or for each of `names` in that order, without a dict per row; None when
    a row is anything else or a value is not of the common case."""
    if names is None:
        names = tuple(info.names)
    if not rows or not names:
        return None
    return _pack_with(writer, rows, _packer(info, names, positional=True), len(names))


def _pack_with(writer: "Writer", rows: Sequence[Any], packer: Optional[_Packer], count: int
               ) -> "Optional[Tuple[ctypes.Array[_capi.coffer_field], int]]":
    if packer is None:
        return None
    total = count * len(rows)
    buf = bytearray(total * FIELD_SIZE)
    for _ in range(4):
        text = bytearray(max(packer.per_row * len(rows), 1))
        text_c = (ctypes.c_char * len(text)).from_buffer(text)
        try:
            used = packer.pack(rows, buf, text, ctypes.addressof(text_c))
        except (UnicodeEncodeError, OverflowError, struct.error):
            return None  # the general path names the value
        if used is None:
            return None
        if used >= 0:
            # Room for objects like these next time, a quarter more.
            packer.per_row = max(packer.per_row, (used * 5 // 4) // len(rows) + 1)
            array = (_capi.coffer_field * total).from_buffer(buf)
            writer.keep.append(array)
            writer.keep.append(text_c)  # which keeps text
            return array, count
        packer.per_row *= 4
    return None


# ---- reads -----------------------------------------------------------------


def _decoder_source(order: Sequence[Tuple[str, int, int]], name: str, opening: str, closing: str,
                    entry: str) -> str:
    """The source of a function name(values, data) that checks the type tag
    of every property and builds `opening` ... `closing` of one `entry`
    (formatted with the property's name and value expression) per property."""
    tags = [at for _, at, _ in order]
    entries = []
    for prop, at, fast in order:
        if fast == _T.TYPE_STRING:
            value = f"str(data[values[{at + 1}]:values[{at + 1}] + values[{at + 2}]], 'utf-8')"
        elif fast == _T.TYPE_BINARY:
            value = f"data[values[{at + 1}]:values[{at + 1}] + values[{at + 2}]]"
        else:
            value = f"values[{at + 1}]"
        entries.append("        " + entry.format(name=repr(prop), value=value))
    return "\n".join([
        # kinds and str as default arguments: locals, faster than globals per row.
        f"def {name}(values, data, kinds=kinds, str=str):",
        f"    if ({', '.join(f'values[{at}]' for at in tags)},) != kinds:",
        "        return None",
        "    try:",
        f"        return {opening}",
        *entries,
        f"        {closing}",
        "    except UnicodeDecodeError:",
        "        return None",
    ]) + "\n"


def _decodable(order: Sequence[Tuple[str, int, int]]) -> bool:
    return bool(order) and all(at >= 0 and fast for _, at, fast in order)


def decoder(order: Sequence[Tuple[str, int, int]]) -> Optional[RowDecoder]:
    """A function decode(values, data) for rows unpacked by a pages.Layout
    whose properties are `order` ((name, position of the type tag, kind
    decoded there) in schema order): the dict of every property, or None
    when a value is null or not of its kind, or a string is not UTF-8 (the
    caller's general loop then decides). None when a property is never
    decoded from the page."""
    if not _decodable(order):
        return None
    kinds = tuple(fast for _, _, fast in order)
    source = _decoder_source(order, "decode", "{", "}", "{name}: {value},")
    decode: RowDecoder = _compile(source, "decode", {"kinds": kinds})
    return decode


def tuple_decoder(order: Sequence[Tuple[str, int, int]]) -> Optional[TupleDecoder]:
    """As decoder(), a function decode_tuple(values, data) giving the values
    of every property as a tuple in schema order instead of a dict; None
    for the same rows and classes."""
    if not _decodable(order):
        return None
    kinds = tuple(fast for _, _, fast in order)
    source = _decoder_source(order, "decode_tuple", "(", ")", "{value},")
    decode: TupleDecoder = _compile(source, "decode_tuple", {"kinds": kinds})
    return decode


def lookup_source(order: Sequence[Tuple[str, int, int]], header_size: int) -> Optional[str]:
    """The source of a function lookup(txn, key) for a pages.Layout whose
    properties are `order` (as decoder() takes it): it writes the int `key`
    into the layout's lookup request, runs it (one C call), and gives the
    tuple of every property in schema order decoded straight from the
    layout's scratch buffer (one copy of the bytes used, no object); None
    when no object has that key; MISSING when the caller must take the
    general path (any other status, a null, a value not of its kind, a
    string that is not UTF-8). Its globals (payload, run, ref, request,
    unpack, scratch, view, kinds, NOT_FOUND, MISSING) are the layout's, bound
    when compiled. None for the classes decoder() gives None for."""
    if not _decodable(order):
        return None
    tags = [at for _, at, _ in order]
    values = []
    for _, at, fast in order:
        if fast == _T.TYPE_STRING:
            values.append(f"str(data[values[{at + 1}]:values[{at + 1}] + values[{at + 2}]], 'utf-8')")
        elif fast == _T.TYPE_BINARY:
            values.append(f"data[values[{at + 1}]:values[{at + 1}] + values[{at + 2}]]")
        else:
            values.append(f"values[{at + 1}]")
    return "\n".join([
        # Everything it uses as default arguments: locals, faster than globals.
        "def lookup(txn, key, payload=payload, run=run, ref=ref, request=request, unpack=unpack, scratch=scratch,",
        "           view=view, kinds=kinds, NOT_FOUND=NOT_FOUND, MISSING=MISSING, str=str, bytes=bytes):",
        "    payload.integer = key",
        "    status = run(txn, ref)",
        "    if status:",
        "        return None if status == NOT_FOUND else MISSING",
        f"    values = unpack(scratch, {header_size})",
        f"    if ({', '.join(f'values[{at}]' for at in tags)},) != kinds:",
        "        return MISSING",
        "    # One copy of the bytes used: slices of bytes decode faster than",
        "    # slices of the buffer or of a view of it.",
        "    data = bytes(view[:request.needed])",
        "    try:",
        f"        return ({', '.join(values)},)",
        "    except UnicodeDecodeError:",
        "        return MISSING",
    ]) + "\n"


def compile_lookup(source: str, namespace: Dict[str, Any]) -> Callable[[Any, int], Any]:
    """The function lookup_source() wrote, its names bound to `namespace`."""
    lookup: Callable[[Any, int], Any] = _compile(source, "lookup", dict(namespace))
    return lookup


def payload_page_decoder(order: Sequence[Tuple[int, int]]) -> PayloadPageDecoder:
    """A function decode_payloads(rows, data) for rows of a page unpacked
    without their row head and type tags (pages.Layout.page_tuples), whose
    tags were checked to be `order`'s kinds ((position of the property's
    first payload item, kind) in schema order): the tuple of every row in
    one list comprehension, or None when a string is not UTF-8."""
    values = []
    for at, kind in order:
        if kind == _T.TYPE_STRING:
            values.append(f"str(data[v[{at}]:v[{at}] + v[{at + 1}]], 'utf-8')")
        elif kind == _T.TYPE_BINARY:
            values.append(f"data[v[{at}]:v[{at}] + v[{at + 1}]]")
        else:
            values.append(f"v[{at}]")
    source = "\n".join([
        "def decode_payloads(rows, data, str=str):",
        "    try:",
        f"        return [({', '.join(values)},) for v in rows]",
        "    except UnicodeDecodeError:",
        "        return None",
    ]) + "\n"
    decode: PayloadPageDecoder = _compile(source, "decode_payloads", {})
    return decode


def page_decoder(order: Sequence[Tuple[str, int, int]]) -> Optional[PageDecoder]:
    """As tuple_decoder(), for a whole page: a function decode_page(rows,
    data) giving the tuple of every unpacked row of `rows` in one list
    comprehension (no Python call per row), or None when any row is one
    tuple_decoder() gives None for (the caller then decodes that page row by
    row). None for the same classes as tuple_decoder()."""
    if not _decodable(order):
        return None
    kinds = tuple(fast for _, _, fast in order)
    values = []
    for _, at, fast in order:
        if fast == _T.TYPE_STRING:
            values.append(f"str(data[v[{at + 1}]:v[{at + 1}] + v[{at + 2}]], 'utf-8')")
        elif fast == _T.TYPE_BINARY:
            values.append(f"data[v[{at + 1}]:v[{at + 1}] + v[{at + 2}]]")
        else:
            values.append(f"v[{at + 1}]")
    source = "\n".join([
        # kinds, tags and str as default arguments: locals, faster than globals.
        "def decode_page(rows, data, kinds=kinds, tags=tags, str=str, len=len):",
        "    try:",
        f"        out = [({', '.join(values)},) for v in rows if tags(v) == kinds]",
        "    except UnicodeDecodeError:",
        "        return None",
        "    return out if len(out) == len(rows) else None",
    ]) + "\n"
    # One C call gives every tag of a row, as a tuple (itemgetter of one
    # position gives the value alone: compared with a one-element tuple).
    tag_positions = [at for _, at, _ in order]
    tags = operator.itemgetter(*tag_positions)
    decode: PageDecoder = _compile(source, "decode_page", {"kinds": kinds if len(kinds) > 1 else kinds[0],
                                                           "tags": tags})
    return decode
