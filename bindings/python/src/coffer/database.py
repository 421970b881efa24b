"""Database, an open handle: its C handles and their lifetime,
transactions, refresh and observers of the whole handle, classes, and the
object operations (create, add, find, delete, property reads and writes)
that objects, collections and results call back into. coffer.open(), which
makes one, is in opening.py; registering observers is in observing.py."""

from __future__ import annotations

import asyncio
import collections.abc
import contextlib
import ctypes
import itertools
import math
import os
import re
import threading
import weakref
from typing import (
    Any,
    Callable,
    Dict,
    Iterable,
    Iterator,
    List,
    Mapping,
    Optional,
    Sequence,
    Set,
    Tuple,
    Type,
    TypeVar,
    Union,
    overload,
)

from . import _capi, observing, packing, pages, rowcode, verification
from .changes import DatabaseChange, Origin
from .durability import Durability
from .progress import ProgressCallback, c_callback
from .stats import FileStats, read_stats
from .sync import SyncKeepAlive, SyncSession
from .subscriptions import Subscriptions
from .errors import (
    CofferError,
    DatabaseClosedError,
    InvalidArgumentError,
    InvalidObjectError,
    MisuseError,
    NotFoundError,
    NotInWriteError,
    PropertyNotFoundError,
    ReadOnlyError,
)
from .codec import Reader, Writer
from .containers import managed
from .model import Object
from .notifications import (
    POST_CALLBACK,
    ChangeStream,
    NotificationToken,
    Registration,
    add_scheduler,
    held_tokens,
    remove_scheduler,
)
from .query import CompiledQuery
from .results import BacklinkSource, ClassSource, Results
from .schema import (
    COLLECTION_CODES,
    TYPE_CODES,
    DeclaredClass,
    ObjectSchema,
    PropertySchema,
    read_class_schema,
)
from .values import INT64_MAX as _INT64_MAX, INT64_MIN as _INT64_MIN, to_c

T = TypeVar("T", bound=Object)
PathType = Union[str, "os.PathLike[str]"]

_UPDATE_POLICIES = {"all": _capi.UPDATE_ALL, "modified": _capi.UPDATE_MODIFIED}


class _PropInfo:
    __slots__ = ("id", "name", "type", "optional", "collection", "target", "origin", "where")

    def __init__(self, prop_id: int, prop: PropertySchema, class_name: str) -> None:
        self.id = prop_id
        self.name = prop.name
        # What error messages about the property start with.
        self.where = f"class '{class_name}', property '{prop.name}'"
        self.type = TYPE_CODES[prop.type]
        self.optional = prop.optional
        self.collection = COLLECTION_CODES[prop.collection]
        # The target class of a link, the origin class of linking objects.
        self.target = prop.object_type
        self.origin = prop.origin_property


class _ClassInfo:
    """One class of an open database: its C ids, and the model class and
    defaults declared for it in Python, if any."""

    def __init__(self, class_id: int, schema: ObjectSchema, declared: Optional[DeclaredClass]) -> None:
        self.class_id = class_id
        self.schema = schema
        self.name = schema.name
        self.names = [p.name for p in schema.properties]
        self.properties = {
            p.name: _PropInfo(i, p, schema.name) for i, p in enumerate(schema.properties)
        }
        pk = schema.primary_key
        self.primary_key = self.properties[pk] if pk is not None else None
        self.model: Optional[Type[Object]] = declared.model if declared is not None else None
        self.defaults = dict(declared.defaults) if declared is not None else {}
        self._reader: Optional[packing.ObjectReader] = None
        self._layout: Optional[pages.Layout] = None
        # Generated packers by the property names objects give (rowcode.py),
        # for dicts and for rows positional in schema order.
        self.row_packers: Dict[Tuple[str, ...], Any] = {}
        self.positional_packers: Dict[Tuple[str, ...], Any] = {}
        # Whether the declared defaults are what the C library gives a
        # property left out (null, false, 0, "", b""): then a batch upsert
        # need not look up which objects exist to fill in defaults.
        self.defaults_are_zero = all(_is_zero(v) for v in self.defaults.values())

    def reader(self) -> packing.ObjectReader:
        """What reads whole objects of the class, made on first use."""
        if self._reader is None:
            self._reader = packing.ObjectReader(self)
        return self._reader

    def layout(self) -> pages.Layout:
        """How objects of the class are packed in pages, made on first use."""
        if self._layout is None:
            self._layout = pages.Layout(self)
        return self._layout

    def where(self, prop: str) -> str:
        return f"class '{self.name}', property '{prop}'"

    def prop(self, name: str) -> _PropInfo:
        try:
            return self.properties[name]
        except (KeyError, TypeError):
            raise PropertyNotFoundError(f"class '{self.name}' has no property named {name!r}") from None

    def make(self, db: "Database", key: int, row: Optional[pages.PackedRow] = None) -> Any:
        return (self.model or Object)._managed(db, self, key, row)


def _is_zero(value: Any) -> bool:
    """Whether a declared default equals the C library's default."""
    if value is None or value is False:
        return True
    if type(value) in (int, str, bytes):
        return not value
    return isinstance(value, float) and value == 0.0 and math.copysign(1.0, value) > 0


class _Handles:
    """The C handles of one Database; what its finalizer frees. Holds no
    reference to the Database, so that the finalizer can run."""

    __slots__ = ("db", "read_txn", "write_txn", "file_id", "observers", "scheduler", "lock", "sync_transport")

    def __init__(self, db: _capi.DbP, file_id: Optional[Tuple[int, int]]) -> None:
        self.db: Optional[_capi.DbP] = db
        self.read_txn: Optional[_capi.TxnP] = None
        self.write_txn: Optional[_capi.TxnP] = None
        self.file_id = file_id
        # The running observers, stopped before the handle closes (a C
        # token outliving its handle cannot be stopped safely).
        self.observers: Set[Registration] = set()
        # The id of the scheduler set with set_scheduler(), if any.
        self.scheduler: Optional[int] = None
        # Held while `db` is closed, so that interrupt() from another thread
        # never reaches a closed C handle.
        self.lock = threading.Lock()
        # The sync transport whose callbacks the C session calls: kept until
        # the handle is closed (which stops the session's thread).
        self.sync_transport: Optional[SyncKeepAlive] = None


# Files this package has open, by (device, inode), so that
# delete_if_migration_needed never deletes a file that is in use here.
_open_files: Dict[Tuple[int, int], int] = {}
_open_files_lock = threading.Lock()


def _file_id(path: bytes) -> Optional[Tuple[int, int]]:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


def _register(file_id: Optional[Tuple[int, int]], delta: int) -> None:
    if file_id is None:
        return
    with _open_files_lock:
        count = _open_files.get(file_id, 0) + delta
        if count > 0:
            _open_files[file_id] = count
        else:
            _open_files.pop(file_id, None)


def _release(handles: _Handles) -> None:
    """Frees every handle; safe to call more than once."""
    for registration in list(handles.observers):
        registration.stop_and_wait()
    if handles.write_txn is not None:
        _capi.coffer_txn_free(handles.write_txn)  # aborts it
        handles.write_txn = None
    if handles.read_txn is not None:
        _capi.coffer_txn_free(handles.read_txn)
        handles.read_txn = None
    if handles.db is not None:
        with handles.lock:
            _capi.coffer_close(handles.db)
            handles.db = None
        handles.sync_transport = None
        _register(handles.file_id, -1)
    if handles.scheduler is not None:
        remove_scheduler(handles.scheduler)  # work it posted before closing does nothing
        handles.scheduler = None


def path_bytes(value: Any, what: str) -> bytes:
    if isinstance(value, (str, os.PathLike)):
        return os.fsencode(value)
    raise TypeError(f"{what} must be a str or a path, got {type(value).__name__}")


# Objects written per C call by create_all() and add_all().
_CHUNK = 1000
# How coffer_objects_create() names the object that failed.
_BATCH_POSITION = re.compile(r"^coffer_objects_create: object \d+ of \d+: ")


def _update_policy(update: Any) -> int:
    if update is False:
        return _capi.UPDATE_ERROR
    if isinstance(update, str) and update in _UPDATE_POLICIES:
        return _UPDATE_POLICIES[update]
    raise InvalidArgumentError(f"update must be False, 'modified' or 'all', got {update!r}")


def key_buffer(key: Any, what: str) -> Any:
    if not isinstance(key, (bytes, bytearray, memoryview)):
        raise TypeError(f"{what} must be bytes, got {type(key).__name__}")
    data = bytes(key)
    return (ctypes.c_char * max(len(data), 1)).from_buffer_copy(data.ljust(1, b"\0")), len(data)


class Database:
    """An open database. Close it with close() or use it as a context
    manager. Reads come from a snapshot that advances when this handle
    writes or calls refresh(). A Database is used by the thread that opened
    it; other threads open their own (cheap: handles share the storage)."""

    def __init__(self, db: _capi.DbP, declared: List[DeclaredClass], migration_role: Optional[str] = None) -> None:
        # "new" or "old" for the handles a running migration lends; those are
        # never freed here and end with the migration.
        self._migration_role = migration_role
        raw_path = _capi.coffer_db_path(db)
        file_id = _file_id(raw_path) if raw_path is not None and migration_role is None else None
        _register(file_id, +1)
        self._handles = _Handles(db, file_id)
        self._finalizer = weakref.finalize(self, _release, self._handles)
        self._generation = 0
        # The C transactions of a handle serve one thread at a time, and a
        # write must end on the thread that began it.
        self._thread = threading.get_ident()
        by_name = {d.schema.name: d for d in declared}
        self._classes: Dict[str, _ClassInfo] = {}
        for class_id in range(_capi.coffer_db_class_count(db)):
            schema = read_class_schema(_capi.coffer_db_class_schema(db, class_id).contents)
            self._classes[schema.name] = _ClassInfo(class_id, schema, by_name.get(schema.name))
        self._classes_by_id = {info.class_id: info for info in self._classes.values()}
        # The declared model classes, looked up first by _class_info().
        self._classes_by_model: Dict[Any, _ClassInfo] = {
            info.model: info for info in self._classes.values() if info.model is not None}
        # Compiled queries by class and text, rebound for new arguments.
        self._prepared_queries: Dict[Tuple[int, str], CompiledQuery] = {}
        # Layouts of classes with an int primary key whose lookups
        # tuple_for_primary_key() decodes in one generated call, by the
        # class or name it was given.
        self._int_key_layouts: Dict[Any, pages.Layout] = {}
        self._sync: Optional[SyncSession] = None

    # ---- lifetime ----------------------------------------------------------

    def close(self) -> None:
        """Closes the database, aborting an open write transaction. Objects
        and results of it become unusable. Closing twice is allowed."""
        if not self.is_closed:
            self._check_thread()
            if self._migration_role is not None:
                raise MisuseError("the database of a running migration cannot be closed; coffer.open() returns it")
        self._finalizer()
        self._prepared_queries.clear()
        self._generation += 1

    def __enter__(self) -> "Database":
        self._open_handles()
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()

    @property
    def is_closed(self) -> bool:
        return self._handles.db is None

    # ---- sync --------------------------------------------------------------

    def _attach_sync(self, transport: Optional[SyncKeepAlive]) -> None:
        self._handles.sync_transport = transport
        self._sync = SyncSession(self._sync_handle, transport.states if transport is not None else None,
                                 transport.errors if transport is not None else None)

    def _sync_handle(self) -> _capi.DbP:
        db = self._handles.db
        if db is None:
            raise DatabaseClosedError("the database is closed")
        return db

    @property
    def sync(self) -> SyncSession:
        """The sync session of a database opened with sync=coffer.SyncConfig(...)
        (MisuseError otherwise): wait_for_upload(), wait_for_download(),
        pause(), resume(), state and error."""
        if self._sync is None:
            raise MisuseError("this database does not sync: open it with sync=coffer.SyncConfig(url=..., partition=...)")
        return self._sync

    @property
    def subscriptions(self) -> Subscriptions:
        """The query subscriptions of flexible sync (docs/SYNC.md, "Flexible
        sync"): `with db.subscriptions.update() as subs: subs.append(Dog,
        "age > 2", name="dogs")`, then db.subscriptions.wait_for_complete().
        They are stored in the file; a database opened with
        SyncConfig(..., flexible=True) syncs them."""
        return Subscriptions(self._sync_handle, lambda cls: self._class_info(cls).name)

    def _check_thread(self) -> None:
        if threading.get_ident() != self._thread:
            raise MisuseError(
                "this Database was opened on another thread; open one in each thread that uses it"
            )

    def _detach(self) -> None:
        """Forgets handles lent by a migration that has ended."""
        self._handles.db = None
        self._handles.read_txn = None
        self._handles.write_txn = None
        self._generation += 1

    def _open_handles(self) -> _Handles:
        if self._handles.db is None:
            raise DatabaseClosedError("the database is closed")
        self._check_thread()
        return self._handles

    def interrupt(self) -> None:
        """Stops every query this database is running, as sqlite3_interrupt()
        does: the call running it raises QueryInterruptedError. Unlike the
        other methods, it may be called from any thread (that is its use:
        the thread that runs the query is busy). Queries that begin after
        the call run normally; with no query running, or once the database
        is closed, it does nothing."""
        handles = self._handles
        with handles.lock:
            if handles.db is not None:
                _capi.coffer_interrupt(handles.db)

    # ---- copies and versions -----------------------------------------------

    def write_copy(self, path: PathType, encryption_key: Optional[bytes] = None, *,
                   progress: Optional[ProgressCallback] = None) -> None:
        """Writes a compacted copy of the last committed state to a new file
        at `path` (which must not exist), encrypted with `encryption_key`
        (64 bytes) or plain when it is None, whatever this database uses.

        progress: called as f(coffer.ProgressPhase.COPY, done, total) on this
        thread, 0 first and total last; returning False cancels the copy
        with CancelledError, raising cancels it and is raised here, chained
        from the CancelledError. Nothing is left at `path` then.

        A copy of a synced database is a bundle (docs/SYNC.md, "Bundled
        files"): it keeps the sync progress but not the client id, so every
        file opened from it with `coffer.open(..., seed_path=copy, sync=...)`
        is a new client that downloads only what changed since the copy. With
        local commits not uploaded yet it raises MisuseError naming how many:
        call `db.sync.wait_for_upload()` first."""
        handles = self._open_handles()
        target = path_bytes(path, "path")
        failures: List[BaseException] = []
        fn = c_callback(progress, failures) if progress is not None else _capi.PROGRESS_FN()  # NULL: none
        buf, size = key_buffer(encryption_key, "encryption_key") if encryption_key is not None else (None, 0)
        try:
            _capi.coffer_db_write_copy_v2(handles.db, target, buf, size, fn, None)
        except CofferError as exc:
            if failures:
                raise failures[0] from exc
            raise
        finally:
            if buf is not None:
                ctypes.memset(buf, 0, ctypes.sizeof(buf))

    def verify(self) -> List["verification.Finding"]:
        """Checks this database's file (or in-memory store) for damage, as
        coffer.verify() does, with this handle's key and the classes it
        sees, and returns what is wrong: an empty list when it is sound.
        Reads the whole file; a damaged file gives findings, never a crash."""
        db = self._open_handles().db
        return verification.run(lambda out: _capi.coffer_db_verify(db, out))

    @property
    def active_versions(self) -> int:
        """The number of versions of the file that read transactions keep alive."""
        out = ctypes.c_uint64()
        _capi.coffer_db_active_versions(self._open_handles().db, ctypes.byref(out))
        return out.value

    @property
    def durability(self) -> Durability:
        """The durability of this handle's commits (coffer.open(durability=)):
        Durability.NONE for an in-memory database."""
        out = ctypes.c_int()
        _capi.coffer_db_durability(self._open_handles().db, ctypes.byref(out))
        return Durability(out.value)

    def flush_to_disk(self) -> None:
        """Flushes every commit of the file so far to the disk, whatever the
        durability: they then survive a system crash. Raises a coffer.CofferError
        naming the reason when the flush fails."""
        _capi.coffer_db_sync(self._open_handles().db)

    def stats(self) -> FileStats:
        """The file's statistics at its newest version: size, used and free
        pages, objects and bytes per class with their indexes, collections,
        the change log, and the reader slots of every process with the
        version each reads (coffer_db_stats)."""
        handles = self._open_handles()
        names = [info.schema.name for info in sorted(self._classes.values(), key=lambda i: i.class_id)]
        return read_stats(handles.db, names)

    # ---- facts -------------------------------------------------------------

    @property
    def path(self) -> Optional[str]:
        """The file's path, or None for an in-memory database."""
        raw = _capi.coffer_db_path(self._open_handles().db)
        return os.fsdecode(raw) if raw is not None else None

    @property
    def schema_version(self) -> int:
        return int(_capi.coffer_db_schema_version(self._open_handles().db))

    @property
    def is_encrypted(self) -> bool:
        return bool(_capi.coffer_db_is_encrypted(self._open_handles().db))

    @property
    def is_read_only(self) -> bool:
        return bool(_capi.coffer_db_is_read_only(self._open_handles().db))

    @property
    def schema(self) -> List[ObjectSchema]:
        """The classes visible through this handle, as stored."""
        self._open_handles()
        return [info.schema for info in self._classes.values()]

    # ---- transactions ------------------------------------------------------

    @property
    def in_transaction(self) -> bool:
        """True inside `with db.write():`."""
        return self._handles.write_txn is not None

    def _txn(self) -> _capi.TxnP:
        """The transaction reads use: the write transaction if one is open,
        else the current snapshot, begun on first use."""
        handles = self._open_handles()
        if handles.write_txn is not None:
            return handles.write_txn
        if handles.read_txn is None:
            txn = _capi.TxnP()
            _capi.coffer_txn_begin(handles.db, _capi.TXN_READ, ctypes.byref(txn))
            handles.read_txn = txn
            self._generation += 1
        return handles.read_txn

    def _write_txn(self, what: str) -> _capi.TxnP:
        handles = self._open_handles()
        if self._migration_role == "old":
            raise ReadOnlyError(f"{what}: the database as it was before the migration is read-only")
        if handles.write_txn is None:
            raise NotInWriteError(f"{what} needs a write transaction: use `with db.write():`")
        return handles.write_txn

    def refresh(self) -> None:
        """Moves reads to the latest committed state (outside a write). When
        the handle has observers, also moves them to the newest version and
        runs, on this thread before returning, the callbacks of those whose
        data changed (with auto_refresh off, the only way they are told);
        callbacks given a loop are posted to it instead. Not allowed inside
        a callback run by refresh()."""
        handles = self._open_handles()
        if self._migration_role is not None:
            return  # a migration's snapshots are fixed
        self._new_snapshot()
        if handles.observers:
            _capi.coffer_db_refresh(handles.db)

    def _new_snapshot(self) -> None:
        """Reads start from the latest committed state on next use."""
        handles = self._handles
        if handles.read_txn is not None:
            _capi.coffer_txn_free(handles.read_txn)
            handles.read_txn = None
            self._generation += 1

    @contextlib.contextmanager
    def write(self, without_notifying: Sequence[NotificationToken] = (),
              origin: Origin = Origin.LOCAL) -> Iterator["Database"]:
        """`with db.write():` runs the block in a write transaction that
        commits when the block ends and rolls back if it raises.

        The observers of the tokens in `without_notifying` (of this handle)
        are not told of this commit: their next change starts after it
        (Realm's `write(withoutNotifying:)`), e.g. for a change the user
        interface made itself. Stopped tokens are ignored.

        `origin` marks the commit in the change log: coffer.Origin.LOCAL
        (the default) or coffer.Origin.REMOTE for changes applied from
        elsewhere (sync); commit_origin() reads it back."""
        handles = self._open_handles()
        skipped = self._registrations(without_notifying)
        if not isinstance(origin, Origin):
            raise TypeError(f"origin must be a coffer.Origin, got {type(origin).__name__}")
        if self._migration_role is not None:
            raise MisuseError("a migration writes in its own transaction: change objects without `with db.write():`")
        if handles.write_txn is not None:
            raise MisuseError("a write transaction is already open on this database")
        txn = _capi.TxnP()
        _capi.coffer_txn_begin(handles.db, _capi.TXN_WRITE, ctypes.byref(txn))
        handles.write_txn = txn
        self._generation += 1
        try:
            if origin != Origin.LOCAL:
                _capi.coffer_txn_set_origin(txn, int(origin))
            yield self
        except BaseException:
            self._end_write(txn, commit=False)
            raise
        self._end_write(txn, commit=True, skipped=skipped)

    def _registrations(self, tokens: Sequence[NotificationToken]) -> List[Registration]:
        if isinstance(tokens, NotificationToken) or not isinstance(tokens, Sequence):
            raise TypeError("without_notifying takes a list of notification tokens")
        found = []
        for token in tokens:
            if not isinstance(token, NotificationToken):
                raise TypeError(f"without_notifying takes notification tokens, got {type(token).__name__}")
            registration = token._registration
            if registration.owner is not self._handles.observers:
                raise InvalidArgumentError("without_notifying: the token observes another database handle")
            found.append(registration)
        return found

    def _commit(self, txn: _capi.TxnP, skipped: Sequence[Registration]) -> None:
        if not skipped:
            _capi.coffer_txn_commit(txn)
            return
        with held_tokens(skipped) as tokens:
            array = (_capi.TokenP * max(len(tokens), 1))(*tokens)
            _capi.coffer_txn_commit_without_notifying(txn, array, len(tokens))

    def _end_write(self, txn: _capi.TxnP, commit: bool, skipped: Sequence[Registration] = ()) -> None:
        handles = self._handles
        if handles.write_txn is not txn:
            # close() inside the block already aborted and freed it.
            if commit:
                raise DatabaseClosedError("the database was closed inside the write block; nothing was committed")
            return
        handles.write_txn = None
        try:
            if commit:
                self._commit(txn, skipped)
            elif _capi.coffer_txn_is_active(txn):
                _capi.coffer_txn_abort(txn)
        finally:
            _capi.coffer_txn_free(txn)
            self._new_snapshot()
            self._generation += 1

    # ---- live data ---------------------------------------------------------

    @property
    def auto_refresh(self) -> bool:
        """Whether observers are told of commits (of any process) by
        themselves, on the library's notifier thread (True, the default);
        when False only refresh() tells them."""
        return bool(_capi.coffer_db_auto_refresh(self._open_handles().db))

    @auto_refresh.setter
    def auto_refresh(self, on: bool) -> None:
        if not isinstance(on, bool):
            raise TypeError(f"auto_refresh must be a bool, got {type(on).__name__}")
        _capi.coffer_db_set_auto_refresh(self._open_handles().db, int(on))

    @property
    def version(self) -> int:
        """The version of the file this handle's observers were last told
        of (0 before the first refresh); every commit that writes makes the
        next version."""
        out = ctypes.c_uint64()
        _capi.coffer_db_version(self._open_handles().db, ctypes.byref(out))
        return out.value

    def commit_origin(self, version: Optional[int] = None) -> Origin:
        """Where the commit that made `version` came from (coffer.Origin),
        as the change log recorded it; None asks about the newest version.
        Raises NotFoundError when the log has no entry for that version: the
        commit changed no object, or no reader needed its entry any more and
        a later commit trimmed it."""
        handles = self._open_handles()
        if version is not None and (isinstance(version, bool) or not isinstance(version, int) or version < 0):
            raise TypeError(f"version must be a non-negative int or None, got {version!r}")
        txn = _capi.TxnP()
        _capi.coffer_txn_begin(handles.db, _capi.TXN_READ, ctypes.byref(txn))
        try:
            if version is None:
                newest = ctypes.c_uint64()
                _capi.coffer_txn_version(txn, ctypes.byref(newest))
                version = newest.value
            origin = ctypes.c_int()
            _capi.coffer_txn_commit_origin(txn, version, ctypes.byref(origin))
        finally:
            _capi.coffer_txn_free(txn)
        return Origin(origin.value)

    def set_scheduler(self, post: Optional[Callable[[Callable[[], None]], Any]]) -> None:
        """Delivers this handle's notifications through `post`, a function
        that takes a function and arranges for it to run soon, once, on the
        program's own loop: `db.set_scheduler(loop.call_soon_threadsafe)`.
        When a commit is seen, the library's notifier thread calls `post`;
        the function it is given then refreshes this handle's observers and
        runs their callbacks where it runs (observers given a `loop=` still
        post to theirs). None goes back to the notifier thread. If `post`
        raises, the exception is logged and the notifications are
        delivered on the notifier thread; work posted before the database
        closed does nothing when it runs."""
        handles = self._open_handles()
        if post is not None and not callable(post):
            raise TypeError(f"the scheduler must be callable or None, got {type(post).__name__}")
        new_id = add_scheduler(post) if post is not None else None
        try:
            if new_id is None:
                _capi.coffer_db_set_scheduler(handles.db, _capi.POST_FN(), None)
            else:
                _capi.coffer_db_set_scheduler(handles.db, POST_CALLBACK, new_id)
        except BaseException:
            if new_id is not None:
                remove_scheduler(new_id)
            raise
        if handles.scheduler is not None:
            remove_scheduler(handles.scheduler)
        handles.scheduler = new_id

    def observe(self, callback: Callable[[DatabaseChange], None],
                loop: Optional[asyncio.AbstractEventLoop] = None) -> NotificationToken:
        """Calls `callback(change)` with a coffer.DatabaseChange (old and
        new version) after each refresh that moved this handle to a newer
        version: a commit of this or any other process. See the coffer
        module for threads and loops. Keep the token: collecting it stops
        the observer."""
        return observing.observe_database(self, callback, loop)

    def changes(self) -> "ChangeStream[DatabaseChange]":
        """The changes of observe() as an async iterator on the running
        loop: `async for change in db.changes():`."""
        return ChangeStream(lambda put, loop: self.observe(put, loop))

    # ---- classes -----------------------------------------------------------

    def _class_info(self, cls: Union[str, Type[Object]]) -> _ClassInfo:
        self._open_handles()
        try:
            known = self._classes_by_model.get(cls)
        except TypeError:  # unhashable: the checks below name it
            known = None
        if known is not None:
            return known
        if isinstance(cls, str):
            info = self._classes.get(cls)
            if info is None:
                raise NotFoundError(f"no class named '{cls}' in this database")
            return info
        if isinstance(cls, type) and issubclass(cls, Object) and cls is not Object:
            info = self._classes.get(cls.__name__)
            if info is None or info.model is not cls:
                raise NotFoundError(f"the model class {cls.__name__} is not part of the schema this database was opened with")
            return info
        raise TypeError(f"expected a class name or a coffer.Object subclass, got {cls!r}")

    def _class_by_id(self, class_id: int) -> Optional[_ClassInfo]:
        return self._classes_by_id.get(class_id)

    @overload
    def objects(self, cls: Type[T]) -> Results[T]: ...

    @overload
    def objects(self, cls: str) -> Results[Object]: ...

    def objects(self, cls: Union[str, Type[Object]]) -> Results[Any]:
        """Every object of a class, in creation order."""
        info = self._class_info(cls)
        return Results(self, info, ClassSource(info))

    # ---- objects -----------------------------------------------------------

    @staticmethod
    def _named_values(info: _ClassInfo, names: Tuple[str, ...], position: int, values: Any,
                      what: str) -> Dict[str, Any]:
        """The dict of a row given with create_all(properties=names)."""
        if not isinstance(values, (list, tuple)):
            raise TypeError(f"{what}: object {position}: with properties, a row of class '{info.name}' "
                            f"must be a tuple or list, got {type(values).__name__}")
        if len(values) != len(names):
            raise InvalidArgumentError(f"{what}: object {position}: {len(names)} properties named, "
                                       f"got {len(values)} values")
        return dict(zip(names, values))

    def _values_dict(self, info: _ClassInfo, values: Any) -> Dict[str, Any]:
        if values is None:
            return {}
        # collections.abc's Mapping: typing's checks instances in Python, per row.
        if type(values) is dict or isinstance(values, collections.abc.Mapping):
            return dict(values)
        if isinstance(values, (list, tuple)):
            if len(values) > len(info.names):
                raise InvalidArgumentError(
                    f"class '{info.name}' has {len(info.names)} properties, got {len(values)} values"
                )
            return dict(zip(info.names, values))
        raise TypeError(f"values for class '{info.name}' must be a dict or a list, got {type(values).__name__}")

    def _find(self, txn: _capi.TxnP, info: _ClassInfo, pk: Any) -> Optional[_capi.ObjectP]:
        """The handle of the object whose primary key is `pk` (the caller
        releases it), or None."""
        assert info.primary_key is not None
        value = _capi.coffer_value()
        keep: List[Any] = []
        if not packing.scalar_value(info.primary_key.type, pk, value):
            to_c(info.primary_key.type, pk, value, keep, info.primary_key.where)
        handle = _capi.ObjectP()
        try:
            _capi.coffer_object_find(txn, info.class_id, ctypes.byref(value), ctypes.byref(handle))
        except NotFoundError:
            return None
        return handle

    def _find_key(self, txn: _capi.TxnP, info: _ClassInfo, pk: Any) -> Optional[int]:
        handle = self._find(txn, info, pk)
        if handle is None:
            return None
        try:
            return int(_capi.coffer_object_key_of(handle))
        finally:
            _capi.coffer_object_release(handle)

    def _store(self, info: _ClassInfo, given: Dict[str, Any], update: Any, what: str) -> int:
        policy = _update_policy(update)
        txn = self._write_txn(what)
        # Declared defaults fill a new object; an update touches only what is given.
        writer = Writer(self, policy)
        fields, count = writer.object_fields(info, given)
        handle = _capi.ObjectP()
        self._generation += 1
        _capi.coffer_object_create(txn, info.class_id, fields, count, policy, ctypes.byref(handle))
        try:
            return int(_capi.coffer_object_key_of(handle))
        finally:
            _capi.coffer_object_release(handle)

    @overload
    def create(self, cls: Type[T], values: Any = None, update: Any = False) -> T: ...

    @overload
    def create(self, cls: str, values: Any = None, update: Any = False) -> Object: ...

    def create(self, cls: Union[str, Type[T]], values: Any = None, update: Any = False) -> Any:
        """Creates an object of `cls` (a class name or model class) from a
        dict, or a list positional in schema order, and returns it. A dict
        or list given for a link creates the linked object too (or, with a
        primary key that exists and `update`, updates it). update=False makes a duplicate primary key an error; "all" updates
        the existing object with every given value, "modified" only with the
        values that differ."""
        info = self._class_info(cls)
        key = self._store(info, self._values_dict(info, values), update, "create()")
        return info.make(self, key)

    def add(self, obj: T, update: Any = False) -> T:
        """Stores an unmanaged model object; it becomes managed by this
        database. Adding an object it already manages does nothing."""
        if not isinstance(obj, Object) or type(obj) is Object:
            raise TypeError(f"add() takes an instance of a coffer.Object subclass, got {type(obj).__name__}")
        if obj._db is self:
            self._write_txn("add()")
            return obj
        if obj._db is not None:
            raise InvalidArgumentError("the object is managed by another database handle")
        info = self._class_info(type(obj))
        key = self._store(info, obj._values, update, "add()")
        obj._bind(self, info, key)
        return obj

    def create_all(self, cls: Union[str, Type[Object]], values: Iterable[Any], update: Any = False,
                   properties: Optional[Sequence[str]] = None) -> int:
        """Creates an object of `cls` from each dict, or list positional in
        schema order, of `values`, as create() does, many per call into the
        library; returns how many were written. With update="all" or
        "modified" an object whose primary key exists is updated with the
        values given, which makes this the bulk update by primary key:
        `db.create_all(Dog, ({"id": i, "age": 3} for i in ids), update="modified")`.

        With `properties` (names of properties of `cls`, each once), every
        row of `values` is a tuple or list of one value for each of them, in
        that order, as sqlite3's executemany() takes the parameters of
        `UPDATE ... SET age = ? WHERE id = ?`: the bulk update of a few
        properties without a dict per row,
        `db.create_all(Dog, ((i, 3) for i in ids), update="all", properties=("id", "age"))`.
        An unknown name raises PropertyNotFoundError, a name given twice or a
        row of another length InvalidArgumentError.

        On an error the objects before the one that failed stay written in
        the transaction (the `with db.write():` block rolls back when the
        error leaves it)."""
        info = self._class_info(cls)
        if properties is not None:
            names = tuple(properties)
            for name in names:
                info.prop(name)  # raises PropertyNotFoundError naming it
            if len(set(names)) != len(names):
                twice = next(n for n in names if names.count(n) > 1)
                raise InvalidArgumentError(f"create_all(): property '{twice}' is named twice in properties")
            if not names:
                raise InvalidArgumentError("create_all(): properties names no property")
            return self._store_many(info, values, update, "create_all()", None, as_given=True, names=names)
        # Rows go to _store_chunk as given: a chunk of tuples or lists of
        # every property is packed without a dict per row.
        return self._store_many(info, values, update, "create_all()", None, as_given=True)

    def add_all(self, objects: Iterable[T], update: Any = False) -> List[T]:
        """Stores unmanaged model objects, as add() does, many per call into
        the library, and returns them, managed. Objects this database
        already manages are left as they are. On an error the objects
        before the one that failed are stored and managed."""
        added: List[T] = []
        by_class: Dict[Type[Object], List[Object]] = {}
        for obj in objects:
            if not isinstance(obj, Object) or type(obj) is Object:
                raise TypeError(f"add_all() takes instances of coffer.Object subclasses, got {type(obj).__name__}")
            if obj._db is not None and obj._db is not self:
                raise InvalidArgumentError("an object is managed by another database handle")
            added.append(obj)
            if obj._db is None:
                by_class.setdefault(type(obj), []).append(obj)
        self._write_txn("add_all()")
        for model, pending in by_class.items():
            info = self._class_info(model)
            self._store_many(info, (obj._values for obj in pending), update, "add_all()", pending)
        return added

    def _store_many(self, info: _ClassInfo, rows: Iterable[Any], update: Any, what: str,
                    objects: Optional[List[Object]], as_given: bool = False,
                    names: Optional[Tuple[str, ...]] = None) -> int:
        """Writes objects of one class, a chunk per C call: runs of objects
        that list the same properties in the same order share one field
        array. Binds objects[i] to the key of the i-th object written.
        Rows are dicts, or with `as_given` what create_all() takes (dicts,
        or lists and tuples positional in schema order, or with `names`
        tuples and lists of those properties' values)."""
        policy = _update_policy(update)
        txn = self._write_txn(what)
        written = 0
        given = iter(rows)
        while True:
            chunk: List[Any] = list(itertools.islice(given, _CHUNK))
            if not chunk:
                return written
            written += self._store_chunk(txn, info, chunk, policy, objects, written, what, as_given, names)

    def _store_chunk(self, txn: _capi.TxnP, info: _ClassInfo, chunk: List[Any], policy: int,
                     objects: Optional[List[Object]], first: int, what: str, as_given: bool = False,
                     names: Optional[Tuple[str, ...]] = None) -> int:
        writer = Writer(self, policy)
        positional = None
        if names is not None:
            # Rows of the values of `names`: one field array without a dict
            # per row when every row is of the common case and left-out
            # properties of new objects get their defaults from C; otherwise
            # each row becomes a dict and takes the paths below.
            if info.defaults_are_zero:
                positional = rowcode.pack_positional(writer, info, chunk, names)
            if positional is None:
                chunk = [self._named_values(info, names, first + i, v, what) for i, v in enumerate(chunk)]
        elif as_given:
            # Every row a tuple or list of every property, of the common
            # case: one field array without a dict per row. Otherwise each
            # row becomes a dict and takes the paths below.
            positional = rowcode.pack_positional(writer, info, chunk)
            if positional is None:
                # A dict is only read from here on (with_defaults copies it).
                values_dict = self._values_dict
                chunk = [v if type(v) is dict else values_dict(info, v) for v in chunk]
        if positional is not None:
            complete = chunk
        elif info.defaults_are_zero:
            complete = chunk  # left-out properties get the same values from C
        else:
            complete = [writer.with_defaults(info, given) for given in chunk]
        n = len(complete)
        keys = (ctypes.c_uint64 * n)() if objects is not None else None
        done = ctypes.c_size_t()
        stored = 0
        failed = False

        def create(fields: Any, count: int, many: int) -> None:
            out = ctypes.byref(keys, stored * 8) if keys is not None else None
            try:
                _capi.coffer_objects_create(txn, info.class_id, fields, count, many, policy, out, ctypes.byref(done))
            except CofferError as exc:
                # Named by its position among the objects given, not in the call.
                detail = _BATCH_POSITION.sub("", exc.message, count=1)
                raise type(exc)(f"{what}: object {first + stored + done.value}: {detail}", exc.status) from None

        self._generation += 1
        try:
            if positional is not None:
                create(positional[0], positional[1], n)
                stored = n
            while stored < n:
                end = stored + 1
                names = tuple(complete[stored])
                while end < n and tuple(complete[end]) == names:
                    end += 1
                group = complete[stored:end]
                packed = rowcode.pack_rows(writer, info, group) or packing.objects_fields(writer, info, group)
                if packed is not None:
                    create(packed[0], packed[1], end - stored)
                    stored = end
                    continue
                for values in complete[stored:end]:  # values only the general path converts, in order
                    fields, count = writer.field_array(info, values)
                    create(fields, count, 1)
                    stored += 1
        except BaseException:
            failed = True
            raise
        finally:
            if keys is not None and objects is not None:
                for i in range(stored + (done.value if failed else 0)):
                    objects[first + i]._bind(self, info, keys[i])
        return n

    @overload
    def object_for_primary_key(self, cls: Type[T], primary_key: Any) -> Optional[T]: ...

    @overload
    def object_for_primary_key(self, cls: str, primary_key: Any) -> Optional[Object]: ...

    def object_for_primary_key(self, cls: Union[str, Type[T]], primary_key: Any) -> Optional[Any]:
        """The object of `cls` whose primary key equals `primary_key`, or None.

        One C call (coffer_pack_request_run) finds the object and
        packs every stored property into the class's reused buffer; the
        object's fields are decoded from those bytes when read, and
        `to_dict()` builds its dict in one generated expression. Raises
        InvalidArgumentError for a class without a primary key and the
        error of the C library (PropertyTypeError naming the property) for
        a key of the wrong type."""
        found = self._packed_by_primary_key(cls, primary_key)
        if found is None:
            return None
        info, layout, data, values = found
        row = pages.PackedRow(data, values, self._generation, threading.get_ident(), layout)
        return (info.model or Object)._managed(self, info, values[0], row)

    @overload
    def tuple_for_primary_key(self, cls: Type[T], primary_key: Any) -> Optional[Tuple[Any, ...]]: ...

    @overload
    def tuple_for_primary_key(self, cls: str, primary_key: Any) -> Optional[Tuple[Any, ...]]: ...

    def tuple_for_primary_key(self, cls: Union[str, Type[T]], primary_key: Any) -> Optional[Tuple[Any, ...]]:
        """Every property value of the object of `cls` whose primary key
        equals `primary_key`, as a tuple in schema order (what
        `object_for_primary_key(cls, primary_key).to_tuple()` gives, as a
        sqlite3 cursor gives a row), or None when no object has that key.

        The same one C call as object_for_primary_key() finds and packs the
        object, and one generated expression decodes the tuple from the
        packed bytes; no object is made unless a value needs the library
        (a null, a link, a collection), which then reads it as to_tuple()
        does. Raises what object_for_primary_key() raises.

        For an int key of a class whose properties are all scalars, once the
        class has been read this way, the call is a dict lookup, the checks
        of the open database, its thread and its transaction, the one C call
        and one generated expression that decodes the tuple from the
        layout's reused buffer (pages.Layout.lookup_tuple)."""
        if type(primary_key) is int and _INT64_MIN <= primary_key <= _INT64_MAX:
            handles = self._handles
            txn = handles.write_txn
            if txn is None:
                txn = handles.read_txn
            if txn is not None and handles.db is not None and threading.get_ident() == self._thread:
                try:
                    lookup = self._int_key_layouts[cls].lookup_tuple
                except (KeyError, TypeError):  # not read this way yet, or unhashable: the general path
                    lookup = None
                if lookup is not None:
                    row = lookup(txn, primary_key)
                    if row is not pages.MISSING:
                        return row  # type: ignore[no-any-return]
        found = self._packed_by_primary_key(cls, primary_key)
        if found is None:
            return None
        info, layout, data, values = found
        if layout.lookup_tuple is not None and info.primary_key is not None \
                and info.primary_key.type == _capi.TYPE_INT:
            self._int_key_layouts[cls] = layout  # the next int key takes the short path above
        decode = layout.decode_tuple
        if decode is not None:
            whole: Optional[Tuple[Any, ...]] = decode(values, data)
            if whole is not None:
                return whole
        row = pages.PackedRow(data, values, self._generation, threading.get_ident(), layout)
        obj: Object = (info.model or Object)._managed(self, info, values[0], row)
        return obj.to_tuple()

    def _packed_by_primary_key(self, cls: Union[str, Type[Any]], primary_key: Any
                               ) -> "Optional[Tuple[_ClassInfo, pages.Layout, bytes, Tuple[Any, ...]]]":
        """The class, its layout and the packed row (bytes and unpacked
        values) of the object of `cls` whose primary key is `primary_key`,
        found and packed by one C call; None if there is none."""
        # _class_info() and _txn() with their common case inlined: this runs
        # once per lookup.
        handles = self._handles
        thread = threading.get_ident()
        if handles.db is None or thread != self._thread:
            self._open_handles()  # raises what it raises
        try:
            info: Optional[_ClassInfo] = self._classes_by_model.get(cls)
        except TypeError:  # unhashable: _class_info names it
            info = None
        if info is None:
            info = self._class_info(cls)
        pk = info.primary_key
        if pk is None:
            raise InvalidArgumentError(f"class '{info.name}' has no primary key")
        # One C call finds the object and packs its values, decoded when read:
        # the layout's request holds every argument but the key.
        layout = info.layout()
        keep: List[Any] = []
        general = not (pk.type == _capi.TYPE_INT and type(primary_key) is int
                       and _INT64_MIN <= primary_key <= _INT64_MAX)
        if general:
            value = _capi.coffer_value()
            if not packing.scalar_value(pk.type, primary_key, value):
                to_c(pk.type, primary_key, value, keep, pk.where)
        txn = handles.write_txn
        if txn is None:
            txn = handles.read_txn
            if txn is None:
                txn = self._txn()
        if not general:
            layout.key_payload.integer = primary_key  # the request's key type is TYPE_INT between lookups
            found = layout.pack_by_request(txn)
        else:
            key = layout.request_key
            ctypes.memmove(ctypes.addressof(key), ctypes.addressof(value), ctypes.sizeof(value))
            try:
                found = layout.pack_by_request(txn)
            finally:
                key.type = _capi.TYPE_INT  # what the int path leaves in place
        if found is None:
            return None
        return info, layout, found[0], found[1]

    def delete(self, target: Union[Object, Results[Any], Iterable[Object]]) -> None:
        """Deletes an object, every object of a Results, or each object of
        an iterable."""
        txn = self._write_txn("delete()")
        self._generation += 1
        if isinstance(target, Results):
            if target._db is not self:
                raise InvalidArgumentError("the results belong to another database handle")
            target._delete_all(txn)
        elif isinstance(target, Object):
            self._delete_object(txn, target)
        elif isinstance(target, Iterable) and not isinstance(target, (str, bytes, Mapping)):
            for obj in list(target):
                if not isinstance(obj, Object):
                    raise TypeError(f"delete() takes objects, got {type(obj).__name__}")
                self._delete_object(txn, obj)
        else:
            raise TypeError(f"delete() takes an object, results or objects, got {type(target).__name__}")

    def _delete_object(self, txn: _capi.TxnP, obj: Object) -> None:
        if obj._db is None:
            raise InvalidArgumentError("an unmanaged object is not in a database and cannot be deleted")
        if obj._db is not self:
            raise InvalidArgumentError("the object belongs to another database handle")
        handle = self._handle(txn, obj._info, obj._key)
        try:
            _capi.coffer_object_delete(handle)
        finally:
            _capi.coffer_object_release(handle)

    # ---- property access for Object ---------------------------------------

    def _handle(self, txn: _capi.TxnP, info: _ClassInfo, key: int) -> _capi.ObjectP:
        handle = _capi.ObjectP()
        try:
            _capi.coffer_object_get(txn, info.class_id, key, ctypes.byref(handle))
        except NotFoundError:
            raise InvalidObjectError(f"the {info.name} object was deleted") from None
        return handle

    def _object_exists(self, info: _ClassInfo, key: int) -> bool:
        if self.is_closed:
            return False
        try:
            _capi.coffer_object_release(self._handle(self._txn(), info, key))
        except InvalidObjectError:
            return False
        return True

    def _value_of(self, handle: _capi.ObjectP, info: _ClassInfo, key: int, prop: _PropInfo) -> Any:
        if prop.type == _capi.TYPE_LINKING_OBJECTS:
            assert prop.target is not None and prop.origin is not None
            return self._backlinks_from(info, key, prop.target, prop.origin)
        value = _capi.coffer_value()
        _capi.coffer_object_get_value(handle, prop.id, ctypes.byref(value))
        return self._stored_value(info, key, prop, value)

    def _stored_value(self, info: _ClassInfo, key: int, prop: _PropInfo, value: _capi.coffer_value) -> Any:
        """The Python value of `value`, read from `prop` of object `key`: a
        linked object, a managed collection, or a scalar."""
        return Reader(self).value(value, info.where(prop.name), lambda kind: managed(self, info, key, prop, kind))

    def _read_property(self, info: _ClassInfo, key: int, name: str) -> Any:
        prop = info.prop(name)
        handle = self._handle(self._txn(), info, key)
        try:
            return self._value_of(handle, info, key, prop)
        finally:
            _capi.coffer_object_release(handle)

    def _read_object(self, info: _ClassInfo, key: int) -> Dict[str, Any]:
        handle = self._handle(self._txn(), info, key)
        try:
            return info.reader().read(self, handle, key)
        finally:
            _capi.coffer_object_release(handle)

    def _write_property(self, info: _ClassInfo, key: int, name: str, value: Any) -> None:
        prop = info.prop(name)
        txn = self._handles.write_txn
        if txn is None or self._migration_role == "old" or threading.get_ident() != self._thread:
            txn = self._write_txn(f"setting {info.name}.{name}")
        c_value = _capi.coffer_value()
        # `writer` keeps the buffers c_value points into until the call returns.
        writer = Writer(self, _capi.UPDATE_ALL)
        if prop.collection or not packing.scalar_value(prop.type, value, c_value):
            writer.property_value(info, prop, value, c_value)
        handle = self._handle(txn, info, key)
        try:
            self._generation += 1
            _capi.coffer_object_set_value(handle, prop.id, ctypes.byref(c_value))
        finally:
            _capi.coffer_object_release(handle)

    def _observe_object(self, info: _ClassInfo, key: int, key_paths: Optional[Sequence[str]],
                        callback: Callable[[Any], None], loop: Optional[asyncio.AbstractEventLoop]) -> NotificationToken:
        try:
            return observing.observe_object(self, info, key, key_paths, callback, loop)
        except NotFoundError:
            raise InvalidObjectError(f"the {info.name} object was deleted") from None

    def _backlinks_from(self, info: _ClassInfo, key: int, origin_class: str, origin_property: str) -> Results[Any]:
        """The objects of origin_class that link to (info, key) through
        origin_property."""
        origin = self._class_info(origin_class)
        prop = origin.prop(origin_property)
        source = BacklinkSource(self, info, key, origin, prop.id)
        source.count(self._txn())  # the C library checks the property here, not at first use
        return Results(self, origin, source)
