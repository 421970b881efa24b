"""SQLite through the standard library's sqlite3, set up as the C harness sets
up SQLite: one table with the same columns and indexes, WAL, synchronous=FULL,
a 64 MiB page cache, the same transaction boundaries."""
import os
import sqlite3

from workload import Entity, Workload, check_add, check_ordered, each_found

COLUMNS = "id, flag, i32, i64, f, d, text, blob, grp, name"


class SqliteEngine:
    def __init__(self, directory: str) -> None:
        # Autocommit mode: transactions are begun and committed explicitly.
        self.db = sqlite3.connect(os.path.join(directory, "bench.sqlite"), isolation_level=None)
        self.db.executescript(
            "PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA cache_size = -65536;"
            "CREATE TABLE entity (id INTEGER PRIMARY KEY, flag INTEGER NOT NULL, i32 INTEGER NOT NULL,"
            " i64 INTEGER NOT NULL, f REAL NOT NULL, d REAL NOT NULL, text TEXT NOT NULL, blob BLOB NOT NULL,"
            " grp INTEGER NOT NULL, name TEXT NOT NULL);"
            "CREATE INDEX entity_grp ON entity (grp); CREATE INDEX entity_name ON entity (name);")

    def close(self) -> None:
        self.db.close()

    def _count(self) -> int:
        return self.db.execute("SELECT count(*) FROM entity").fetchone()[0]

    @staticmethod
    def _entity(row: tuple) -> Entity:
        return Entity(row[0], bool(row[1]), *row[2:])

    def insert_bulk(self, w: Workload) -> int:
        self.db.execute("BEGIN")
        self.db.executemany(f"INSERT INTO entity ({COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                            w.entities[:w.n])
        self.db.execute("COMMIT")
        return self._count()

    def read_by_primary_key(self, w: Workload) -> int:
        check = 0
        select = f"SELECT {COLUMNS} FROM entity WHERE id = ?"
        self.db.execute("BEGIN")
        get = lambda id: self.db.execute(select, (id,)).fetchone()  # noqa: E731
        for _, row in each_found(w.order, get, "no row with id {id}"):
            check = check_add(check, self._entity(row))
        self.db.execute("COMMIT")
        return check

    def update_all(self, w: Workload) -> int:
        self.db.execute("BEGIN")
        cursor = self.db.executemany("UPDATE entity SET i64 = ?, d = ? WHERE id = ?",
                                     ((*w.updates[id], id) for id in w.order))
        self.db.execute("COMMIT")
        return cursor.rowcount

    def read_all_in_order(self, w: Workload) -> int:
        check = 0
        for position, row in enumerate(self.db.execute(f"SELECT {COLUMNS} FROM entity ORDER BY id")):
            check = check_ordered(check, position, self._entity(row))
        return check

    def _counts(self, sql: str, arguments: list) -> int:
        # One read transaction; sqlite3 keeps the statement prepared between calls.
        self.db.execute("BEGIN")
        total = sum(self.db.execute(sql, (argument,)).fetchone()[0] for argument in arguments)
        self.db.execute("COMMIT")
        return total

    def indexed_equality_query(self, w: Workload) -> int:
        return self._counts("SELECT count(*) FROM entity WHERE grp = ?", w.query_groups)

    def unindexed_filter_scan(self, w: Workload) -> int:
        return self._counts("SELECT count(*) FROM entity WHERE i64 > ?", w.scan_thresholds)

    def string_prefix_query(self, w: Workload) -> int:
        # GLOB is case-sensitive like a prefix match and can use the index.
        return self._counts("SELECT count(*) FROM entity WHERE name GLOB ?", [p + "*" for p in w.prefixes])

    def delete_all(self, w: Workload) -> int:
        self.db.execute("BEGIN")
        self.db.execute("DELETE FROM entity")
        self.db.execute("COMMIT")
        return self._count()

    def single_object_write_transactions(self, w: Workload) -> int:
        insert = f"INSERT INTO entity ({COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
        for e in w.entities[w.n:]:
            self.db.execute("BEGIN")
            self.db.execute(insert, e)
            self.db.execute("COMMIT")
        return self._count()
