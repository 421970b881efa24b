"""The frames of docs/SYNC.md ("Wire protocol") that a simulated client
needs, written from the document: HELLO, UPLOAD and DOWNLOAD_ACK encoded,
WELCOME, UPLOAD_ACK, DOWNLOAD and ERROR decoded, and changesets of CREATE,
UPDATE and DELETE changes with scalar values."""

import struct
from typing import List, Sequence, Tuple

HELLO, WELCOME, UPLOAD, UPLOAD_ACK, DOWNLOAD, DOWNLOAD_ACK, ERROR = range(1, 8)
CREATE, UPDATE, DELETE = 1, 2, 3
TYPE_INT, TYPE_STRING = 2, 5  # coffer_type (include/coffer.h)


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


def schema(classes: Sequence[Tuple[str, str, Sequence[Tuple[str, int]]]]) -> bytes:
    """(class name, primary key name, [(property name, coffer_type)]), all
    properties required scalars."""
    out = varint(len(classes))
    for name, pk, props in classes:
        out += string(name) + b"\x00" + string(pk) + varint(len(props))
        for prop, kind in props:
            out += string(prop) + varint(kind) + b"\x00" + string("")
    return out


def change(op: int, cls: str, pk, props: Sequence[Tuple[str, object]] = ()) -> bytes:
    out = bytes([op]) + string(cls) + value(pk)
    if op in (CREATE, UPDATE):
        out += varint(len(props)) + b"".join(string(n) + value(v) for n, v in props)
    return out


def changeset(version: int, clock: int, changes: Sequence[bytes]) -> bytes:
    return varint(version) + struct.pack("<Q", clock) + varint(len(changes)) + b"".join(changes)


def hello(client_id: bytes, partition: str, last_server_version: int, schema_bytes: bytes) -> bytes:
    return bytes([HELLO]) + varint(1) + client_id + string(partition) + string("") + \
        varint(last_server_version) + schema_bytes


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
        if tag == 2:
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
            elif op != DELETE:
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


def welcome(frame: bytes) -> Tuple[int, int]:
    """(the last client version integrated, the latest server version)."""
    r = Reader(frame, 1)
    r.varint()
    return r.varint(), r.varint()


def upload_ack(frame: bytes) -> Tuple[int, int]:
    r = Reader(frame, 1)
    return r.varint(), r.varint()


def error(frame: bytes) -> str:
    r = Reader(frame, 1)
    code = r.varint()
    return f"ERROR {code}: {r.string()}"
