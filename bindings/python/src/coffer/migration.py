"""Migrations: the callback coffer.open(..., migration=f) runs when the
schema version goes up, and the Migration object it gets."""
from __future__ import annotations

import ctypes
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple, Union

from . import _capi
from .database import Database
from .errors import CofferError, MisuseError, ReadOnlyError, Status
from .model import Object
from .schema import DeclaredClass

MigrationCallback = Callable[["Migration", int], None]


class OldObject:
    """An object as it was before the migration: its old properties, read by
    name as `old["name"]` or `old.name`; `keys()`, `get()`, `to_dict()` and
    `in` work as on a dict. Links read as OldObjects too. It cannot be
    changed (ReadOnlyError)."""

    __slots__ = ("_object",)

    def __init__(self, obj: Object) -> None:
        object.__setattr__(self, "_object", obj)

    @staticmethod
    def _wrap(value: Any) -> Any:
        return OldObject(value) if isinstance(value, Object) else value

    def __getitem__(self, name: str) -> Any:
        return self._wrap(self._object[name])

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return self._wrap(getattr(self._object, name))

    def __setitem__(self, name: str, value: Any) -> None:
        raise ReadOnlyError(f"{self.class_name}.{name} of the old object cannot be changed; set it on the new object")

    def __setattr__(self, name: str, value: Any) -> None:
        self[name] = value

    def keys(self) -> List[str]:
        """The old schema's property names."""
        return list(self._object._property_names())

    def __iter__(self) -> Iterator[str]:
        return iter(self.keys())

    def __contains__(self, name: object) -> bool:
        return name in self.keys()

    def get(self, name: str, default: Any = None) -> Any:
        return self[name] if name in self.keys() else default

    def to_dict(self) -> Dict[str, Any]:
        return {name: self[name] for name in self.keys()}

    @property
    def class_name(self) -> str:
        name: str = self._object._class_name()
        return name

    def __repr__(self) -> str:
        return f"<old {self.class_name} {self._object._key}>"


class Migration:
    """A running migration, given to the migration callback with the file's
    old schema version. It is usable only while the callback runs.

    - `db`: the database with the new schema, inside the migration's write
      transaction: db.objects(), db.create(), db.delete() and object
      properties work as usual, without `with db.write():`.
    - `enumerate_objects(class_name)` yields an (old, new) pair per object
      that existed before: `old` an OldObject, `new` a coffer.Object of the
      new schema (None if the new schema drops the class or the object was
      deleted).
    - `rename_property`, `delete_data`, `create`, `delete`.

    Whatever the callback raises aborts the open and leaves the file as it
    was, at its old version."""

    def __init__(self, handle: int, declared: List[DeclaredClass]) -> None:
        self._handle: Optional[int] = handle
        self._db = Database(_capi.coffer_migration_db(handle), declared, migration_role="new")
        self._db._handles.write_txn = _capi.coffer_migration_txn(handle)
        self._old_db = Database(_capi.coffer_migration_old_db(handle), [], migration_role="old")
        self._old_db._handles.read_txn = _capi.coffer_migration_old_txn(handle)

    def _running(self) -> int:
        if self._handle is None:
            raise MisuseError("the migration has ended; a Migration is usable only inside its callback")
        return self._handle

    @property
    def db(self) -> Database:
        """The database with the new schema (the one coffer.open() returns)."""
        self._running()
        return self._db

    def enumerate_objects(self, class_name: str) -> Iterator[Tuple[OldObject, Optional[Object]]]:
        """Yields (old, new) for every object of `class_name` that existed
        before the migration, in creation order. Objects created during the
        migration are not visited. NotFoundError if neither schema has the
        class."""
        handle = self._running()
        keys: List[int] = []

        def collect(_migration: Any, old: Any, _new: Any, _ctx: Any) -> int:
            keys.append(int(_capi.coffer_object_key_of(old)))
            return Status.OK

        callback = _capi.MIGRATION_ENUMERATE_FN(collect)
        # Collected without counting: each object counts in the open's progress
        # once the caller's loop has handled it (the generator resumes).
        _capi.coffer_migration_enumerate_v2(
            handle, class_name.encode("utf-8"), callback, None, _capi.MIGRATION_COUNT_LATER
        )
        old_info = self._old_db._classes.get(class_name)
        new_info = self._db._classes.get(class_name)
        for key in keys:
            self._running()
            old = OldObject(old_info.make(self._old_db, key)) if old_info is not None else None
            new = None
            if new_info is not None and self._db._object_exists(new_info, key):
                new = new_info.make(self._db, key)
            yield old, new  # type: ignore[misc]
            _capi.coffer_migration_count_visited(self._running(), 1)

    def rename_property(self, class_name: str, old_name: str, new_name: str) -> None:
        """Renames property `old_name` of `class_name` (old schema) to
        `new_name` (new schema), keeping its values and index. Call it before
        writing any object. SchemaError if the two differ in type."""
        _capi.coffer_migration_rename_property(
            self._running(), class_name.encode("utf-8"), old_name.encode("utf-8"), new_name.encode("utf-8")
        )

    def delete_data(self, class_name: str) -> None:
        """Deletes every object of `class_name`; if the new schema drops the
        class, it leaves the file too. NotFoundError if neither schema has it."""
        _capi.coffer_migration_delete_data(self._running(), class_name.encode("utf-8"))

    def create(self, class_name: Union[str, type], values: Any = None, update: Any = False) -> Object:
        """Creates an object with the new schema, as Database.create()."""
        self._running()
        return self._db.create(class_name, values, update)

    def delete(self, target: Any) -> None:
        """Deletes new objects, as Database.delete()."""
        self._running()
        self._db.delete(target)

    def _end(self) -> None:
        self._handle = None
        for db in (self._db, self._old_db):
            db._detach()


def install(config: _capi.ConfigP, callback: MigrationCallback, declared: List[DeclaredClass],
            failures: List[BaseException]) -> Any:
    """Registers `callback` on `config`; returns the ctypes function, which
    the caller keeps referenced until coffer_open() returns. What the
    callback raises lands in `failures`."""
    if not callable(callback):
        raise TypeError(f"migration must be callable, got {type(callback).__name__}")

    def run(handle: int, old_version: int, _new_version: int, _ctx: Any) -> int:
        migration = Migration(handle, declared)
        try:
            callback(migration, int(old_version))
        except BaseException as exc:  # re-raised once coffer_open() returns
            failures.append(exc)
            return exc.status if isinstance(exc, CofferError) else Status.MIGRATION_REQUIRED
        finally:
            migration._end()
        return Status.OK

    c_callback = _capi.MIGRATION_FN(run)
    _capi.coffer_config_set_migration(config, c_callback, None)
    return c_callback
