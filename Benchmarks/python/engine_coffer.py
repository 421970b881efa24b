"""Coffer through the Python binding (`import coffer`), plain and encrypted."""
import os
from typing import Any, Optional, Tuple

import coffer

from workload import Entity, Workload, check_add, check_ordered, each_found

# The same fixed 64-byte key as the C harness: the benchmark measures the
# cipher, not key management.
KEY = bytes((i * 37 + 11) & 0xFF for i in range(64))


class CofferEntity(coffer.Object):
    id: int = coffer.primary_key()
    flag: bool = False
    i32: int = 0
    i64: int = 0
    f: coffer.Float32 = coffer.Float32(0)
    d: float = 0.0
    text: str = ""
    blob: bytes = b""
    group: int = coffer.indexed(0)
    name: str = coffer.indexed("")


# Rows as tuples in schema order, which is Entity's field order, as a
# sqlite3 cursor gives them.
_entity = Entity._make


class CofferEngine:
    encrypted = False

    def __init__(self, directory: str) -> None:
        key = KEY if self.encrypted else None
        self.db = coffer.open(os.path.join(directory, "bench.coffer"), schema=[CofferEntity], encryption_key=key)

    def close(self) -> None:
        self.db.close()

    def _count(self) -> int:
        self.db.refresh()
        return len(self.db.objects(CofferEntity))

    def insert_bulk(self, w: Workload) -> int:
        # Rows positional in schema order, many per call, as sqlite3's executemany.
        with self.db.write():
            self.db.create_all(CofferEntity, w.entities[:w.n])
        return self._count()

    def _get(self, id: int) -> Optional[Tuple[Any, ...]]:
        return self.db.tuple_for_primary_key(CofferEntity, id)

    def read_by_primary_key(self, w: Workload) -> int:
        # Every field of the object as a tuple in schema order, as a sqlite3
        # cursor gives a row: one C call finds and packs it, no object made.
        check = 0
        for _, row in each_found(w.order, self._get, "no object with id {id}"):
            check = check_add(check, _entity(row))
        return check

    def update_all(self, w: Workload) -> int:
        # The bulk update by primary key: an upsert of the changed values,
        # rows of the named properties as sqlite3's executemany takes them.
        updates = w.updates
        with self.db.write():
            updated = self.db.create_all(CofferEntity, ((*updates[id], id) for id in w.order), update="all",
                                         properties=("i64", "d", "id"))
        if self._count() != w.n:
            raise RuntimeError("the update created objects: an id was missing")
        return updated

    def read_all_in_order(self, w: Workload) -> int:
        check = 0
        # Objects come in creation order, which is id order here; each
        # row's values as a tuple, a page of them per call into the library.
        for position, row in enumerate(self.db.objects(CofferEntity).tuples()):
            check = check_ordered(check, position, _entity(row))
        return check

    # Each query is a filter of the class's results, compiled from its text
    # and counted by the C library (no object is read).
    def indexed_equality_query(self, w: Workload) -> int:
        # A prepared text counted with a new argument in one call, as
        # sqlite3's execute() of a cached statement.
        count = self.db.objects(CofferEntity).count_matching
        return sum(count("group == $0", group) for group in w.query_groups)

    def unindexed_filter_scan(self, w: Workload) -> int:
        entities = self.db.objects(CofferEntity)
        return sum(len(entities.filter("i64 > $0", threshold)) for threshold in w.scan_thresholds)

    def string_prefix_query(self, w: Workload) -> int:
        entities = self.db.objects(CofferEntity)
        return sum(len(entities.filter("name BEGINSWITH $0", prefix)) for prefix in w.prefixes)

    def delete_all(self, w: Workload) -> int:
        with self.db.write():
            self.db.delete(self.db.objects(CofferEntity))
        return self._count()

    def single_object_write_transactions(self, w: Workload) -> int:
        for e in w.entities[w.n:]:
            with self.db.write():
                self.db.add(CofferEntity(**e._asdict()))
        return self._count()


class EncryptedCofferEngine(CofferEngine):
    encrypted = True
