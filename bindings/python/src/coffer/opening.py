"""coffer.open(): the configuration of a new handle (path or in-memory
identifier, key, schema and version, migration, compaction and size
limits), and the process's default path. It sits above database.py and
migration.py, since opening may run a migration, which needs a Database."""

from __future__ import annotations

import ctypes
import os
from typing import Any, Callable, List, Optional, Sequence

from . import _capi, verification
from .database import Database, PathType, key_buffer, path_bytes
from .durability import Durability, DurabilityLike, durability_value
from .errors import CofferError, InvalidArgumentError
from .verification import Finding
from .migration import install as install_migration
from .progress import ProgressCallback, install as install_progress
from .model import parse_schema
from .schema import CSchema, DeclaredClass
from .sync import SyncConfig, configure as configure_sync


def _count(value: Any, what: str, limit: int = 2**64 - 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{what} must be an int, got {type(value).__name__}")
    if not 0 <= value <= limit:
        raise InvalidArgumentError(f"{what} must be between 0 and {limit}, got {value}")
    return value


def _configure(
    config: _capi.ConfigP,
    path: Optional[PathType],
    in_memory_identifier: Optional[str],
    encryption_key: Optional[bytes],
    read_only: bool,
    seed_path: Optional[PathType],
    classes: Optional[List[DeclaredClass]],
    schema_version: int,
    class_subset: Optional[Sequence[str]],
    max_file_size: Optional[int],
) -> None:
    if in_memory_identifier is not None:
        if not isinstance(in_memory_identifier, str):
            raise TypeError(f"in_memory_identifier must be a str, got {type(in_memory_identifier).__name__}")
        _capi.coffer_config_set_in_memory_identifier(config, in_memory_identifier.encode("utf-8"))
    elif path is not None:
        _capi.coffer_config_set_path(config, path_bytes(path, "path"))
    _capi.coffer_config_set_read_only(config, 1 if read_only else 0)
    if seed_path is not None:
        _capi.coffer_config_set_seed_path(config, path_bytes(seed_path, "seed_path"))
    if encryption_key is not None:
        buf, size = key_buffer(encryption_key, "encryption_key")
        try:
            _capi.coffer_config_set_encryption_key(config, buf, size)
        finally:
            ctypes.memset(buf, 0, ctypes.sizeof(buf))
    if classes is not None:
        c_schema = CSchema([c.schema for c in classes])
        _capi.coffer_config_set_schema(config, c_schema.classes, c_schema.count, schema_version)
    if class_subset is not None:
        if isinstance(class_subset, (str, bytes)) or not all(isinstance(n, str) for n in class_subset):
            raise TypeError("class_subset must be a list of class names")
        names = [n.encode("utf-8") for n in class_subset]
        array = (ctypes.c_char_p * max(len(names), 1))(*names)
        _capi.coffer_config_set_class_subset(config, array, len(names))
    if max_file_size is not None:
        _capi.coffer_config_set_max_file_size(config, _count(max_file_size, "max_file_size"))


def open(
    path: Optional[PathType] = None,
    *,
    schema: Optional[Sequence[Any]] = None,
    in_memory_identifier: Optional[str] = None,
    encryption_key: Optional[bytes] = None,
    read_only: bool = False,
    schema_version: int = 0,
    migration: Optional[Callable[[Any, int], None]] = None,
    delete_if_migration_needed: bool = False,
    seed_path: Optional[PathType] = None,
    class_subset: Optional[Sequence[str]] = None,
    max_file_size: Optional[int] = None,
    should_compact_on_launch: Optional[Callable[[int, int], bool]] = None,
    max_active_versions: Optional[int] = None,
    verify_on_open: bool = False,
    sync: Optional[SyncConfig] = None,
    durability: DurabilityLike = Durability.FULL,
    progress: Optional[ProgressCallback] = None,
) -> "Database":
    """Opens (creating it unless read-only) a database and returns it.

    path: the file; None means the default path (coffer.default_path()).
    schema: a list of coffer.Object subclasses and Realm-JS-style dicts;
        None uses the schema stored in the file.
    in_memory_identifier: open an in-memory database shared by every handle
        in this process with the same identifier (instead of a file).
    encryption_key: 64 bytes; the file is encrypted with it.
    read_only: open without writing; the file must exist.
    schema_version: the version of `schema`; a higher one than the file's
        applies the schema, a lower one is an error.
    migration: called as f(migration, old_version) when schema_version is
        higher than the file's, inside the write transaction that applies
        the new schema (see coffer.Migration). Whatever it raises aborts the
        open, leaves the file as it was, and is raised here, chained from
        the CofferError of the open.
    delete_if_migration_needed: delete the file and start empty when opening
        would need a migration: the schema version differs from the file's,
        or the schema differs at the same version. A file open elsewhere in
        this process is never deleted (BusyError).
    seed_path: a file copied to `path` when `path` does not exist yet.
    class_subset: open only these classes of the file.
    max_file_size: a cap on the file size in bytes.
    should_compact_on_launch: called as f(total_bytes, used_bytes) when the
        file is first opened in this process; a true result compacts the
        file in place (unless another process has it open).
    max_active_versions: a write transaction fails with LimitError when its
        commit would keep more versions of the file alive than this.
    verify_on_open: check the whole file first (coffer.verify()) and refuse
        a damaged one with CorruptedError naming the first finding. A seed
        file is always checked before it is copied.
    durability: a coffer.Durability or its name ("full", "normal",
        "none"): how much a returned commit survives a system crash (an
        application crash loses none at any level). FULL, the default,
        keeps every commit; NORMAL may lose the last ones but never damages
        the file; NONE may lose recent commits and damage the file. Every
        handle of a file in this process that can write must ask for the
        same level (BusyError otherwise); read-only and in-memory databases
        ignore it.
    sync: a coffer.SyncConfig: the database syncs with that service and
        partition in the background (db.sync waits, pauses, resumes and
        tells the state). Every top-level class needs a primary key.
    progress: called as f(phase, done, total) on the opening thread while
        the long steps of the open run, in this order: copying the seed file
        (coffer.ProgressPhase.SEED_COPY, in bytes), the compact-on-launch
        check (SHOULD_COMPACT), the compaction (COMPACTION, in bytes) and
        the migration (MIGRATION, in objects). Each step that runs is
        reported first with done 0 and last with done == total (total may
        be 0), at most about once a percent in between. Returning False
        cancels the open with coffer.CancelledError; an exception it raises
        cancels it too and is raised here, chained from the CancelledError.
        Either way the file is left as it was: no half-copied seed, no
        half-compacted or half-migrated file.
    """
    if path is not None and in_memory_identifier is not None:
        raise InvalidArgumentError("give either path or in_memory_identifier, not both")
    if read_only and delete_if_migration_needed:
        raise InvalidArgumentError("delete_if_migration_needed cannot be used with read_only")
    version = _count(schema_version, "schema_version")
    if schema is None and version:
        # Without a schema the file's stored one is used as it is.
        raise InvalidArgumentError("schema_version needs a schema")
    classes = parse_schema(schema) if schema is not None else None

    config = _capi.ConfigP()
    _capi.coffer_config_new(ctypes.byref(config))
    try:
        _configure(config, path, in_memory_identifier, encryption_key, bool(read_only), seed_path,
                   classes, version, class_subset, max_file_size)
        _capi.coffer_config_set_delete_if_migration_needed(config, 1 if delete_if_migration_needed else 0)
        _capi.coffer_config_set_verify_on_open(config, 1 if verify_on_open else 0)
        _capi.coffer_config_set_durability(config, durability_value(durability))
        if max_active_versions is not None:
            _capi.coffer_config_set_max_active_versions(config, _count(max_active_versions, "max_active_versions"))
        transport = configure_sync(config, sync) if sync is not None else None
        failures: List[BaseException] = []
        migration_fn = None
        if migration is not None:
            migration_fn = install_migration(config, migration, classes or [], failures)
        progress_fn = install_progress(config, progress, failures) if progress is not None else None
        compact_fn = None
        if should_compact_on_launch is not None:
            if not callable(should_compact_on_launch):
                raise TypeError("should_compact_on_launch must be callable")

            def ask(total: int, used: int, _ctx: Any) -> int:
                try:
                    return 1 if should_compact_on_launch(total, used) else 0
                except BaseException as exc:  # re-raised once coffer_open returns
                    failures.append(exc)
                    return 0

            compact_fn = _capi.SHOULD_COMPACT_FN(ask)
            _capi.coffer_config_set_should_compact_on_launch(config, compact_fn, None)
        db = _capi.DbP()
        try:
            _capi.coffer_open(config, ctypes.byref(db))
        except CofferError as exc:
            if failures:
                # The callback's own exception, with the open's failure as its cause.
                raise failures[0] from exc
            raise
        if failures:
            _capi.coffer_close(db)
            raise failures[0]
    finally:
        _capi.coffer_config_free(config)
    database = Database(db, classes or [])
    if sync is not None:
        database._attach_sync(transport)
    return database


def verify(
    path: Optional[PathType] = None,
    *,
    encryption_key: Optional[bytes] = None,
    in_memory_identifier: Optional[str] = None,
) -> List[Finding]:
    """Checks a database file for damage and returns what is wrong with it:
    an empty list when it is sound.

    The storage engine's pages are walked with a bounds-checked reader
    (meta pages, page headers, nodes, key order, overflow pages, the free
    list, every sub-database); if they are sound, the file is opened with
    its stored schema (a missing or damaged one is a finding), every object
    is decoded (authenticated, when encrypted) and indexes, primary keys,
    links, backlinks, counters and the change log are checked against the
    data.
    The file may be open in this or other processes. A damaged file, even
    one that is not a database at all, gives findings, never a crash.

    path: the file (None: the default path); in_memory_identifier: an
    in-memory database open in this process instead. encryption_key: the
    file's 64-byte key, needed to check an encrypted file's contents.
    Raises NotFoundError (no such file), KeyRequiredError, WrongKeyError,
    NotEncryptedError (the key does not fit the file), FormatVersionError
    (a format this library does not read), ReadOnlyError (no lock file can
    be made beside the file), FileAccessError, CofferMemoryError.
    """
    if path is not None and in_memory_identifier is not None:
        raise InvalidArgumentError("give either path or in_memory_identifier, not both")
    config = _capi.ConfigP()
    _capi.coffer_config_new(ctypes.byref(config))
    try:
        _configure(config, path, in_memory_identifier, encryption_key, False, None, None, 0, None, None)
        return verification.run(lambda out: _capi.coffer_verify(config, out))
    finally:
        _capi.coffer_config_free(config)


def default_path() -> str:
    """The path used when coffer.open() gets no path."""
    return os.fsdecode(_capi.coffer_default_path())


def set_default_path(path: Optional[PathType]) -> None:
    """Changes the default path for this process; None restores
    "default.coffer" in the current directory."""
    _capi.coffer_set_default_path(None if path is None else path_bytes(path, "path"))
