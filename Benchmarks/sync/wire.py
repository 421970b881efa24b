"""The frames of docs/SYNC.md ("Wire protocol") that a simulated client
needs, written from the document: HELLO, UPLOAD, DOWNLOAD_ACK and SUBSCRIBE
encoded, WELCOME, UPLOAD_ACK, DOWNLOAD, SUBSCRIPTION_COMPLETE and ERROR
decoded, and changesets of CREATE, UPDATE, DELETE (and, downloaded, EVICT)
changes with scalar values."""

import struct
from typing import List, Sequence, Tuple

HELLO, WELCOME, UPLOAD, UPLOAD_ACK, DOWNLOAD, DOWNLOAD_ACK, ERROR, SUBSCRIBE, SUBSCRIPTION_COMPLETE = range(1, 10)
CREATE, UPDATE, DELETE, EVICT = 1, 2, 3, 11
TYPE_BOOL, TYPE_INT, TYPE_STRING = 1, 2, 5  # coffer_type (include/coffer.h)
INDEXED = 16  # a property's flag in the schema


def varint(n: int) -> bytes:
    out = bytearray()
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def string(s: str) -> bytes:
    b = s.encode()
    return varint(len(b)) + b


def value(v) -> bytes:
    """An int or a string value."""
    if isinstance(v, int):
        return b"\x02" + varint((v << 1) ^ (v >> 63))
    return b"\x05" + string(v)


def schema(classes: Sequence[Tuple[str, str, Sequence[Tuple]]]) -> bytes:
    """(class name, primary key name, [(property name, coffer_type[, flags])]),
    all properties required scalars (flags: INDEXED or 0)."""
    out = varint(len(classes))
    for name, pk, props in classes:
        out += string(name) + b"\x00" + string(pk) + varint(len(props))
        for prop, kind, *flags in props:
            out += string(prop) + varint(kind) + bytes([flags[0] if flags else 0]) + string("")
    return out


def change(op: int, cls: str, pk, props: Sequence[Tuple[str, object]] = ()) -> bytes:
    out = bytes([op]) + string(cls) + value(pk)
    if op in (CREATE, UPDATE):
        out += varint(len(props)) + b"".join(string(n) + value(v) for n, v in props)
    return out


def changeset(version: int, clock: int, changes: Sequence[bytes]) -> bytes:
    return varint(version) + struct.pack("<Q", clock) + varint(len(changes)) + b"".join(changes)


def hello(client_id: bytes, partition: str, last_server_version: int, schema_bytes: bytes,
          version: int = 1, token: str = "") -> bytes:
    """Protocol `version` 3 is a flexible-sync session: SUBSCRIBE follows."""
    return bytes([HELLO]) + varint(version) + client_id + string(partition) + string(token) + \
        varint(last_server_version) + schema_bytes


def subscribe(set_version: int, queries: Sequence[Tuple[str, str, str]]) -> bytes:
    """A subscription set: (name, class, query) each."""
    return bytes([SUBSCRIBE]) + varint(set_version) + varint(len(queries)) + \
        b"".join(string(n) + string(c) + string(q) for n, c, q in queries)


def upload(changesets: Sequence[bytes]) -> bytes:
    return bytes([UPLOAD]) + varint(len(changesets)) + b"".join(changesets)


def download_ack(server_version: int) -> bytes:
    return bytes([DOWNLOAD_ACK]) + varint(server_version)


class Reader:
    __slots__ = ("data", "i")

    def __init__(self, data: bytes, i: int = 0) -> None:
        self.data, self.i = data, i

    def varint(self) -> int:
        n = shift = 0
        data = self.data
        while True:
            b = data[self.i]
            self.i += 1
            n |= (b & 0x7F) << shift
            if b < 0x80:
                return n
            shift += 7

    def skip_string(self) -> None:
        n = self.varint()
        self.i += n

    def string(self) -> str:
        n = self.varint()
        self.i += n
        return self.data[self.i - n:self.i].decode()

    def skip_value(self) -> None:
        tag = self.data[self.i]
        self.i += 1
        if tag == 1:
            self.i += 1
        elif tag == 2:
            self.varint()
        elif tag == 5:
            self.skip_string()
        elif tag != 0:
            raise ValueError(f"value tag {tag} is not one this client writes")

    def skip_changeset(self) -> int:
        """Steps over a changeset of CREATE, UPDATE and DELETE changes and
        returns its client version."""
        version = self.varint()
        self.i += 8
        for _ in range(self.varint()):
            op = self.data[self.i]
            self.i += 1
            self.skip_string()
            self.skip_value()
            if op in (CREATE, UPDATE):
                for _ in range(self.varint()):
                    self.skip_string()
                    self.skip_value()
            elif op not in (DELETE, EVICT):
                raise ValueError(f"change op {op} is not one this client writes")
        return version


def download(frame: bytes) -> Tuple[int, List[Tuple[int, bytes, int]]]:
    """A DOWNLOAD frame's latest server version and its changesets as
    (server version, origin client id, client version)."""
    r = Reader(frame, 1)
    latest = r.varint()
    out = []
    for _ in range(r.varint()):
        sv = r.varint()
        origin = frame[r.i:r.i + 16]
        r.i += 16
        out.append((sv, origin, r.skip_changeset()))
    return latest, out


def download_changes(frame: bytes) -> List[Tuple[int, bytes, int, int]]:
    """A DOWNLOAD frame's changesets as (server version, origin client id,
    client version, change count): a changeset that the service's read
    filter emptied for this client has no changes."""
    r = Reader(frame, 1)
    r.varint()
    out = []
    for _ in range(r.varint()):
        sv = r.varint()
        origin = frame[r.i:r.i + 16]
        r.i += 16
        start = r.i
        r.varint()
        r.i += 8
        count = r.varint()
        r.i = start
        out.append((sv, origin, r.skip_changeset(), count))
    return out


def welcome(frame: bytes) -> Tuple[int, int]:
    """(the last client version integrated, the latest server version)."""
    r = Reader(frame, 1)
    r.varint()
    return r.varint(), r.varint()


def upload_ack(frame: bytes) -> Tuple[int, int]:
    r = Reader(frame, 1)
    return r.varint(), r.varint()


def subscription_complete(frame: bytes) -> Tuple[int, int]:
    """(the subscription set's version, the server version it took effect at)."""
    r = Reader(frame, 1)
    return r.varint(), r.varint()


def error(frame: bytes) -> str:
    r = Reader(frame, 1)
    code = r.varint()
    return f"ERROR {code}: {r.string()}"
