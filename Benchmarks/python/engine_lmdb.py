"""Raw LMDB through py-lmdb, as a Python program would use it: each object a
packed record under its id (8 bytes, big-endian, so keys sort by id), and the
two indexed fields kept in sorted-duplicate index databases by hand."""
import os
import struct

import lmdb

from workload import Entity, Workload, check_add, check_ordered, each_found

_ID = struct.Struct(">q")
_FIXED = struct.Struct("<q?iqfd")
_GROUP = struct.Struct(">q")
_I64 = struct.Struct("<13xq")  # i64 in a record: after the id, flag and i32 of _FIXED


def encode(e: Entity) -> bytes:
    text = e.text.encode()
    return b"".join((_FIXED.pack(e.id, e.flag, e.i32, e.i64, e.f, e.d), bytes((len(text),)), text,
                     bytes((len(e.blob),)), e.blob, _GROUP.pack(e.group), e.name.encode()))


def decode(record: bytes) -> Entity:
    id, flag, i32, i64, f, d = _FIXED.unpack_from(record)
    at = _FIXED.size
    text_end = at + 1 + record[at]
    text = record[at + 1:text_end].decode()
    blob_end = text_end + 1 + record[text_end]
    blob = record[text_end + 1:blob_end]
    (group,) = _GROUP.unpack_from(record, blob_end)
    return Entity(id, flag, i32, i64, f, d, text, blob, group, record[blob_end + 8:].decode())


class LmdbEngine:
    def __init__(self, directory: str) -> None:
        self.env = lmdb.open(os.path.join(directory, "bench.lmdb"), map_size=4 << 30, max_dbs=3)
        self.records = self.env.open_db(b"records", integerkey=False)
        self.by_group = self.env.open_db(b"group", dupsort=True)
        self.by_name = self.env.open_db(b"name", dupsort=True)

    def close(self) -> None:
        self.env.close()

    def _count(self) -> int:
        with self.env.begin() as txn:
            return txn.stat(self.records)["entries"]

    def _put(self, txn: lmdb.Transaction, e: Entity, append: bool) -> None:
        key = _ID.pack(e.id)
        txn.put(key, encode(e), db=self.records, append=append, overwrite=False)
        txn.put(_GROUP.pack(e.group), key, db=self.by_group, dupdata=True)
        txn.put(e.name.encode(), key, db=self.by_name, dupdata=True)

    def insert_bulk(self, w: Workload) -> int:
        with self.env.begin(write=True) as txn:
            for e in w.entities[:w.n]:
                self._put(txn, e, append=True)
        return self._count()

    def read_by_primary_key(self, w: Workload) -> int:
        check = 0
        with self.env.begin() as txn:
            get = lambda id: txn.get(_ID.pack(id), db=self.records)  # noqa: E731
            for _, record in each_found(w.order, get, "no record with id {id}"):
                check = check_add(check, decode(record))
        return check

    def update_all(self, w: Workload) -> int:
        updated = 0
        with self.env.begin(write=True) as txn:
            get = lambda id: txn.get(_ID.pack(id), db=self.records)  # noqa: E731
            for id, old in each_found(w.order, get, "no record with id {id} to update"):
                record = bytearray(old)
                _, flag, i32, _, f, _ = _FIXED.unpack_from(record)
                i64, d = w.updates[id]
                _FIXED.pack_into(record, 0, id, flag, i32, i64, f, d)
                txn.put(_ID.pack(id), record, db=self.records)
                updated += 1
        return updated

    def read_all_in_order(self, w: Workload) -> int:
        check = 0
        with self.env.begin() as txn:
            for position, record in enumerate(txn.cursor(db=self.records).iternext(keys=False)):
                check = check_ordered(check, position, decode(record))
        return check

    def indexed_equality_query(self, w: Workload) -> int:
        total = 0
        with self.env.begin() as txn:
            cursor = txn.cursor(db=self.by_group)
            for group in w.query_groups:
                if cursor.set_key(_GROUP.pack(group)):
                    total += cursor.count()
        return total

    def unindexed_filter_scan(self, w: Workload) -> int:
        total = 0
        with self.env.begin() as txn:
            for threshold in w.scan_thresholds:
                for record in txn.cursor(db=self.records).iternext(keys=False):
                    if _I64.unpack_from(record)[0] > threshold:
                        total += 1
        return total

    def string_prefix_query(self, w: Workload) -> int:
        # The index keys of the prefix, each counted with its duplicates.
        total = 0
        with self.env.begin() as txn:
            cursor = txn.cursor(db=self.by_name)
            for prefix in w.prefixes:
                start = prefix.encode()
                found = cursor.set_range(start)
                while found and cursor.key().startswith(start):
                    total += cursor.count()
                    found = cursor.next_nodup()
        return total

    def delete_all(self, w: Workload) -> int:
        with self.env.begin(write=True) as txn:
            for db in (self.records, self.by_group, self.by_name):
                txn.drop(db, delete=False)
        return self._count()

    def single_object_write_transactions(self, w: Workload) -> int:
        for e in w.entities[w.n:]:
            with self.env.begin(write=True) as txn:
                self._put(txn, e, append=False)
        return self._count()
