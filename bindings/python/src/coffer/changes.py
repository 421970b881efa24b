"""The change sets observers receive (CollectionChange, MapChange,
ObjectChange with its PropertyChanges, DatabaseChange), and reading them out of the C change
sets, which are borrowed for the duration of one callback: everything is
copied into plain Python values before the callback returns."""

from __future__ import annotations

import ctypes
import dataclasses
import enum
from typing import Any, Callable, List, Tuple

from . import _capi


@dataclasses.dataclass(frozen=True)
class CollectionChange:
    """What changed in observed results, an observed list or set, or a list
    seen sorted or through a query, since the previous call, as Realm
    reports it. For a set the indices are positions in its iteration order.

    `deletions` and `modifications` are indices in the old collection,
    `insertions` and `modifications_new` in the new one (the same rows as
    `modifications`). Apply deletions (descending), then insertions
    (ascending) to an old copy to get the new one. Lists report `moves`
    ((old, new) pairs, each also a deletion and an insertion); results
    report a reordering as a deletion plus an insertion. `initial` is True
    for the first call, which reports the initial state (every list empty).
    `cleared` says a list was cleared; `root_deleted` that the object owning
    an observed list was deleted (the last call: every element is deleted)."""

    deletions: List[int] = dataclasses.field(default_factory=list)
    insertions: List[int] = dataclasses.field(default_factory=list)
    modifications: List[int] = dataclasses.field(default_factory=list)
    modifications_new: List[int] = dataclasses.field(default_factory=list)
    moves: List[Tuple[int, int]] = dataclasses.field(default_factory=list)
    initial: bool = False
    cleared: bool = False
    root_deleted: bool = False


@dataclasses.dataclass(frozen=True)
class MapChange:
    """What changed in an observed dictionary since the previous call, as
    Realm reports a map's changes: by key. `deletions` are keys that were in
    the old dictionary and are gone, `insertions` keys that are new,
    `modifications` keys kept with another value (or, for a dictionary of
    objects, whose object changed). `initial` is True for the first call;
    `cleared` says the dictionary was cleared; `root_deleted` that the
    object owning it was deleted (the last call: every key is deleted)."""

    deletions: List[str] = dataclasses.field(default_factory=list)
    insertions: List[str] = dataclasses.field(default_factory=list)
    modifications: List[str] = dataclasses.field(default_factory=list)
    initial: bool = False
    cleared: bool = False
    root_deleted: bool = False


@dataclasses.dataclass(frozen=True)
class PropertyChange:
    """One changed property of an observed object: its name and its values
    before and after, converted as reading the property converts them,
    except that list, set and map properties give None for both (their
    contents are read from the object itself)."""

    name: str
    old_value: Any
    new_value: Any


@dataclasses.dataclass(frozen=True)
class ObjectChange:
    """What changed in an observed object: the changed properties, in schema
    order, or `deleted` (the last call, with no properties). `initial` is
    True for the first call, which reports the initial state."""

    deleted: bool = False
    changes: List[PropertyChange] = dataclasses.field(default_factory=list)
    initial: bool = False


class Origin(enum.IntEnum):
    """Where the changes of a commit came from, as the change log records
    it (Database.write(origin=...), Database.commit_origin())."""

    LOCAL = _capi.ORIGIN_LOCAL
    """Made by this program (the default)."""
    REMOTE = _capi.ORIGIN_REMOTE
    """Applied from elsewhere, e.g. by sync."""


@dataclasses.dataclass(frozen=True)
class DatabaseChange:
    """The database handle moved from `old_version` to `new_version` (a
    commit of this or any other process)."""

    old_version: int
    new_version: int


def is_last(change: object) -> bool:
    """True for the last change an observer gets: its object, or the object
    owning its list, was deleted."""
    if isinstance(change, ObjectChange):
        return change.deleted
    return isinstance(change, (CollectionChange, MapChange)) and change.root_deleted


def _indices(changes: _capi.CollectionChangesP, kind: int) -> List[int]:
    count = _capi.coffer_collection_changes_count(changes, kind)
    out = (ctypes.c_uint64 * max(count, 1))()
    copied = _capi.coffer_collection_changes_copy(changes, kind, out)
    return list(out[:copied])


def read_collection_change(changes: _capi.CollectionChangesP) -> CollectionChange:
    """A copy of a C collection change set; NULL is the initial call."""
    if not changes:
        return CollectionChange(initial=True)
    moves = []
    source, target = ctypes.c_uint64(), ctypes.c_uint64()
    for i in range(_capi.coffer_collection_changes_move_count(changes)):
        _capi.coffer_collection_changes_move(changes, i, ctypes.byref(source), ctypes.byref(target))
        moves.append((source.value, target.value))
    return CollectionChange(
        deletions=_indices(changes, _capi.CHANGE_DELETIONS),
        insertions=_indices(changes, _capi.CHANGE_INSERTIONS),
        modifications=_indices(changes, _capi.CHANGE_MODIFICATIONS),
        modifications_new=_indices(changes, _capi.CHANGE_MODIFICATIONS_NEW),
        moves=moves,
        cleared=bool(_capi.coffer_collection_changes_cleared(changes)),
        root_deleted=bool(_capi.coffer_collection_changes_root_deleted(changes)),
    )


def _keys(changes: _capi.MapChangesP, kind: int) -> List[str]:
    found = []
    key = _capi.coffer_bytes()
    for i in range(_capi.coffer_map_changes_count(changes, kind)):
        _capi.coffer_map_changes_key(changes, kind, i, ctypes.byref(key))
        found.append(ctypes.string_at(key.data, key.size).decode("utf-8"))
    return found


def read_map_change(changes: _capi.MapChangesP) -> MapChange:
    """A copy of a C map change set; NULL is the initial call."""
    if not changes:
        return MapChange(initial=True)
    return MapChange(
        deletions=_keys(changes, _capi.CHANGE_DELETIONS),
        insertions=_keys(changes, _capi.CHANGE_INSERTIONS),
        modifications=_keys(changes, _capi.CHANGE_MODIFICATIONS),
        cleared=bool(_capi.coffer_map_changes_cleared(changes)),
        root_deleted=bool(_capi.coffer_map_changes_root_deleted(changes)),
    )


# Makes a PropertyChange of property id, old and new C value.
PropertyReader = Callable[[int, _capi.coffer_value, _capi.coffer_value], PropertyChange]


def read_object_change(changes: _capi.ObjectChangesP, read_property: PropertyReader) -> ObjectChange:
    """A copy of a C object change set; NULL is the initial call."""
    if not changes:
        return ObjectChange(initial=True)
    if _capi.coffer_object_changes_deleted(changes):
        return ObjectChange(deleted=True)
    found = []
    prop = ctypes.c_uint32()
    old, new = _capi.coffer_value(), _capi.coffer_value()
    for i in range(_capi.coffer_object_changes_count(changes)):
        _capi.coffer_object_changes_property(changes, i, ctypes.byref(prop), ctypes.byref(old), ctypes.byref(new))
        found.append(read_property(prop.value, old, new))
    return ObjectChange(changes=found)
