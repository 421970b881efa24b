"""File statistics (`Database.stats()`): the file's size and pages, the
objects and bytes of each class and its indexes, collections, the change
log, and the reader slots of every process with the version each reads.
A thin layer over coffer_db_stats, coffer_db_class_stats and
coffer_db_readers."""

from __future__ import annotations

import ctypes
from dataclasses import dataclass, field
from typing import Any, Dict, List

from . import _capi


@dataclass(frozen=True)
class ClassStats:
    """One class: its objects and the bytes of its records and indexes
    (index_entries counts one entry per indexed property of each object)."""

    objects: int
    object_bytes: int
    index_entries: int
    index_bytes: int


@dataclass(frozen=True)
class ReaderInfo:
    """A reader slot of any process: its pid and thread, and the version its
    read transaction reads (0 when it has none open)."""

    pid: int
    thread: int
    version: int


@dataclass(frozen=True)
class FileStats:
    """What a file is made of, read in one read transaction."""

    file_size: int
    page_size: int
    pages_used: int
    pages_free: int
    map_size: int
    version: int
    changelog_entries: int
    changelog_bytes: int
    collection_bytes: int
    metadata_bytes: int
    max_readers: int
    readers: List[ReaderInfo] = field(default_factory=list)
    classes: Dict[str, ClassStats] = field(default_factory=dict)


def read_stats(db: Any, class_names: List[str]) -> FileStats:
    """The statistics of the open database handle `db`, whose classes (by
    id) are `class_names`."""
    raw = _capi.coffer_stats()
    _capi.coffer_db_stats(db, ctypes.byref(raw))
    classes: Dict[str, ClassStats] = {}
    for class_id, name in enumerate(class_names):
        c = _capi.coffer_class_stats()
        _capi.coffer_db_class_stats(db, class_id, ctypes.byref(c))
        classes[name] = ClassStats(c.objects, c.object_bytes, c.index_entries, c.index_bytes)
    return FileStats(
        file_size=raw.file_size,
        page_size=raw.page_size,
        pages_used=raw.pages_used,
        pages_free=raw.pages_free,
        map_size=raw.map_size,
        version=raw.version,
        changelog_entries=raw.changelog_entries,
        changelog_bytes=raw.changelog_bytes,
        collection_bytes=raw.collection_bytes,
        metadata_bytes=raw.metadata_bytes,
        max_readers=raw.max_readers,
        readers=_readers(db),
        classes=classes,
    )


def _readers(db: Any) -> List[ReaderInfo]:
    count = ctypes.c_size_t()
    _capi.coffer_db_readers(db, None, 0, ctypes.byref(count))
    # Room for readers that appear between the two calls.
    room = count.value + 8
    slots = (_capi.coffer_reader * room)()
    _capi.coffer_db_readers(db, slots, room, ctypes.byref(count))
    return [ReaderInfo(r.pid, r.thread, r.version) for r in slots[: min(count.value, room)]]
