"""The data set of the Python benchmark and the answers each operation must give.

The objects follow the C harness's rules (Benchmarks/workload.h): an int64 id
1..n, a bool, an int32, an int64, a float32, a double, 0-99 random characters,
0-99 random bytes, an indexed int shared by about 10 objects and an indexed
6-letter string. They come from Python's own generator (seeded, so every
engine's process gets the same objects); the C generator written in pure
Python would take longer than the engines it feeds.
"""
import hashlib
import random
import string
import struct
from collections import Counter
from typing import Callable, Dict, Iterator, List, NamedTuple, Optional, Tuple, TypeVar

TEXT_ALPHABET = string.ascii_letters + string.digits + " "
OPERATIONS = [
    ("insert_bulk", "bulk insert, one transaction (objects/s)"),
    ("read_by_primary_key", "read by primary key, all fields (objects/s)"),
    ("update_all", "update every object, one transaction (objects/s)"),
    ("read_all_in_order", "read all in order, all fields (objects/s)"),
    ("indexed_equality_query", "indexed int equality query, count (queries/s)"),
    ("unindexed_filter_scan", "unindexed filter i64 > x, count (scans/s)"),
    ("string_prefix_query", "indexed string prefix query, count (queries/s)"),
    ("delete_all", "delete all, one transaction (objects/s)"),
    ("single_object_write_transactions", "single-object write transactions (commits/s)"),
]
MASK = (1 << 64) - 1
_FIXED = struct.Struct("<q?iqfd")


class Entity(NamedTuple):
    id: int
    flag: bool
    i32: int
    i64: int
    f: float   # exactly representable as a float32
    d: float   # exactly representable as a double
    text: str
    blob: bytes
    group: int
    name: str


FIELDS = Entity._fields


def entity_hash(e: Entity) -> int:
    """A 64-bit hash of every field, equal for equal objects on every engine."""
    h = hashlib.blake2b(digest_size=8)
    h.update(_FIXED.pack(e.id, e.flag, e.i32, e.i64, e.f, e.d))
    text = e.text.encode()
    h.update(struct.pack("<B", len(text)) + text + struct.pack("<B", len(e.blob)) + e.blob)
    h.update(struct.pack("<q", e.group) + e.name.encode())
    return int.from_bytes(h.digest(), "little")


def check_add(check: int, e: Entity) -> int:
    """Reads by key: hashes added up, in any order."""
    return (check + entity_hash(e)) & MASK


def check_ordered(check: int, position: int, e: Entity) -> int:
    """Reads in order: each hash weighted by the position it was read at."""
    return (check + entity_hash(e) * (2 * position + 1)) & MASK


Found = TypeVar("Found")


def each_found(ids: List[int], get: Callable[[int], Optional[Found]], missing: str) -> Iterator[Tuple[int, Found]]:
    """(id, get(id)) for each of `ids`, in order: the reads by key and the
    updates of every engine. A LookupError (`missing`, with {id} filled in)
    when get() finds nothing, so that no engine skips an object silently."""
    for id in ids:
        found = get(id)
        if found is None:
            raise LookupError(missing.format(id=id))
        yield id, found


PREFIX_LEN = 2  # prefix queries ask for the first 2 letters of `name`


class Workload:
    def __init__(self, seed: int, n: int, single_writes: int, queries: int = 1000, scans: int = 10,
                 prefix_queries: int = 100) -> None:
        self.seed, self.n, self.single_writes = seed, n, single_writes
        rng = random.Random(f"{seed}/entities")
        groups = max(n // 10, 1)
        self.entities: List[Entity] = [self._make(rng, i + 1, groups) for i in range(n + single_writes)]
        # The arguments of the queries: a group for each equality query, an
        # i64 threshold for each scan, a two-letter prefix for each prefix query.
        arguments = random.Random(f"{seed}/queries")
        self.query_groups = [arguments.randrange(groups) for _ in range(queries)]
        self.scan_thresholds = [arguments.getrandbits(64) - (1 << 63) for _ in range(scans)]
        self.prefixes = ["".join(arguments.choices(string.ascii_lowercase, k=PREFIX_LEN))
                         for _ in range(prefix_queries)]
        self.order = list(range(1, n + 1))
        random.Random(f"{seed}/order").shuffle(self.order)
        updates = random.Random(f"{seed}/updates")
        # The values the update writes into object id: i64 and d.
        self.updates: Dict[int, Tuple[int, float]] = {
            i: (updates.getrandbits(64) - (1 << 63), updates.getrandbits(53) / 4096) for i in range(1, n + 1)}

    @staticmethod
    def _make(rng: random.Random, id: int, groups: int) -> Entity:
        return Entity(
            id=id,
            flag=bool(rng.getrandbits(1)),
            i32=rng.getrandbits(32) - (1 << 31),
            i64=rng.getrandbits(64) - (1 << 63),
            f=rng.getrandbits(24) / 1024,
            d=rng.getrandbits(53) / 4096,
            text="".join(rng.choices(TEXT_ALPHABET, k=rng.randrange(100))),
            blob=rng.randbytes(rng.randrange(100)),
            group=rng.randrange(groups),
            name="".join(rng.choices(string.ascii_lowercase, k=6)),
        )

    def units(self, op: str) -> int:
        return operation_counts(self.n, self.single_writes, len(self.query_groups), len(self.scan_thresholds),
                                len(self.prefixes))[op]

    def expected_checks(self) -> Dict[str, int]:
        """What each operation returns: objects written or counted, hashes
        of what was read, and for the queries the sum of their counts."""
        by_key = in_order = 0
        group_sizes: Counter[int] = Counter()
        prefix_sizes: Counter[str] = Counter()
        updated_i64 = []
        for position, e in enumerate(self.entities[:self.n]):
            by_key = check_add(by_key, e)
            i64, d = self.updates[e.id]
            in_order = check_ordered(in_order, position, e._replace(i64=i64, d=d))
            group_sizes[e.group] += 1
            prefix_sizes[e.name[:PREFIX_LEN]] += 1
            updated_i64.append(i64)
        # The queries run after the update: the scan sees the new i64 values.
        scanned = sum(sum(1 for v in updated_i64 if v > t) for t in self.scan_thresholds)
        return {"insert_bulk": self.n, "read_by_primary_key": by_key, "update_all": self.n,
                "read_all_in_order": in_order,
                "indexed_equality_query": sum(group_sizes[g] for g in self.query_groups),
                "unindexed_filter_scan": scanned,
                "string_prefix_query": sum(prefix_sizes[p] for p in self.prefixes),
                "delete_all": 0, "single_object_write_transactions": self.single_writes}


def operation_counts(n: int, single_writes: int, queries: int, scans: int, prefix_queries: int) -> Dict[str, int]:
    """How many operations one run of each performs (objects, queries, scans, commits)."""
    counts = dict.fromkeys((op for op, _ in OPERATIONS), n)
    counts.update(indexed_equality_query=queries, unindexed_filter_scan=scans, string_prefix_query=prefix_queries,
                  single_object_write_transactions=single_writes)
    return counts
