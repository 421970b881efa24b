"""Exceptions raised by coffer, one class per C status code.

Every failure of a C call becomes an instance of a CofferError subclass that
carries the C status and the C message (which names the class, property,
value or file at fault). Errors detected in Python before calling C use the
same classes and the status C would have reported.
"""

from __future__ import annotations

import enum
from typing import Any, Dict, Tuple, Type


class Status(enum.IntEnum):
    """The values of the C enum coffer_status."""

    OK = 0
    DONE = 1
    INVALID_ARGUMENT = 2
    NO_MEMORY = 3
    IO = 4
    NOT_FOUND = 5
    MISUSE = 6
    NOT_IN_WRITE = 7
    READ_ONLY = 8
    SCHEMA = 9
    MIGRATION_REQUIRED = 10
    SCHEMA_VERSION = 11
    TYPE = 12
    PRIMARY_KEY_EXISTS = 13
    IMMUTABLE = 14
    MAP_FULL = 15
    FILE_TOO_LARGE = 16
    NOT_A_DATABASE = 17
    FORMAT_VERSION = 18
    CORRUPTED = 19
    INTEGRITY = 20
    KEY_REQUIRED = 21
    WRONG_KEY = 22
    NOT_ENCRYPTED = 23
    LIMIT = 24
    BUSY = 25
    INTERNAL = 26
    QUERY = 27
    INTERRUPTED = 28
    TIMEOUT = 29
    BUFFER_TOO_SMALL = 30
    CANCELLED = 31


class CofferError(Exception):
    """Base class of every coffer error. `status` is the C status code
    (a Status, or a plain int for codes newer than this package) and
    `message` the C message."""

    default_status: Status = Status.INTERNAL

    def __init__(self, message: str, status: "Status | int | None" = None) -> None:
        super().__init__(message)
        if status is None:
            status = self.default_status
        try:
            status = Status(status)
        except ValueError:
            pass
        self.status = status
        self.message = message

    def __str__(self) -> str:
        return self.message

    def __reduce__(self) -> Tuple[Any, Tuple[str, int]]:  # keeps (message, status) through pickling
        return (type(self), (self.message, int(self.status)))


class InvalidArgumentError(CofferError, ValueError):
    """A bad value or argument: out of range, malformed, the wrong size."""

    default_status = Status.INVALID_ARGUMENT


class CofferMemoryError(CofferError, MemoryError):
    default_status = Status.NO_MEMORY


class FileAccessError(CofferError, OSError):
    """A file system call failed; the message has the path and the reason."""

    default_status = Status.IO


class NotFoundError(CofferError, LookupError):
    """No object, class, property or file by that name, key or value."""

    default_status = Status.NOT_FOUND


class PropertyNotFoundError(NotFoundError, KeyError, AttributeError):
    """The class has no property of that name (raised by obj.name and obj["name"])."""

    def __str__(self) -> str:  # KeyError would quote the message
        return self.message


class InvalidObjectError(NotFoundError):
    """The object was deleted, or its database was closed."""


class MisuseError(CofferError, RuntimeError):
    """The call does not fit the current state (closed database, nested write...)."""

    default_status = Status.MISUSE


class DatabaseClosedError(MisuseError):
    """The database was closed."""


class NotInWriteError(CofferError, RuntimeError):
    """A change was attempted outside `with db.write():`."""

    default_status = Status.NOT_IN_WRITE


class ReadOnlyError(CofferError):
    """The database was opened read-only, or its file cannot be written."""

    default_status = Status.READ_ONLY


class SchemaError(CofferError):
    """The schema given is invalid or not supported."""

    default_status = Status.SCHEMA


class MigrationRequiredError(CofferError):
    """The schema differs from the file's in a way that needs a migration."""

    default_status = Status.MIGRATION_REQUIRED


class SchemaVersionError(CofferError):
    """The schema version given is lower than the file's."""

    default_status = Status.SCHEMA_VERSION


class PropertyTypeError(CofferError, TypeError):
    """A value of the wrong type for a property, or None for a required one."""

    default_status = Status.TYPE


class PrimaryKeyExistsError(CofferError):
    """An object with that primary key already exists in the class."""

    default_status = Status.PRIMARY_KEY_EXISTS


class ImmutablePropertyError(CofferError):
    """The property cannot be changed once set (primary keys)."""

    default_status = Status.IMMUTABLE


class MapFullError(CofferError):
    """One write transaction needed more than the room left in the file's map.

    Ordinary writes never raise it: the map is grown before it fills. It is
    left for a single transaction larger than half the map (32 GiB or more by
    default) while other transactions of the process stay open. Nothing of it
    was committed; retrying once they have ended succeeds.
    """

    default_status = Status.MAP_FULL


class FileTooLargeError(CofferError):
    """The file reached the configured maximum file size."""

    default_status = Status.FILE_TOO_LARGE


class FileFormatError(CofferError):
    """Base of the errors about a file's contents."""


class NotADatabaseError(FileFormatError):
    default_status = Status.NOT_A_DATABASE


class FormatVersionError(FileFormatError):
    default_status = Status.FORMAT_VERSION


class CorruptedError(FileFormatError):
    default_status = Status.CORRUPTED


class IntegrityError(FileFormatError):
    """A sealed value failed authentication: it was modified or moved."""

    default_status = Status.INTEGRITY


class EncryptionError(CofferError):
    """Base of the errors about encryption keys."""


class KeyRequiredError(EncryptionError):
    """The file is encrypted and no key was given."""

    default_status = Status.KEY_REQUIRED


class WrongKeyError(EncryptionError):
    """The key given does not open the file."""

    default_status = Status.WRONG_KEY


class NotEncryptedError(EncryptionError):
    """A key was given for a file that is not encrypted."""

    default_status = Status.NOT_ENCRYPTED


class LimitError(CofferError):
    """A limit was reached: too many classes or readers, a value too large."""

    default_status = Status.LIMIT


class BusyError(CofferError):
    """The file is held in a way this call cannot share."""

    default_status = Status.BUSY


class InternalError(CofferError):
    """An unexpected failure of the storage engine."""

    default_status = Status.INTERNAL


class QueryError(CofferError, ValueError):
    """A query that cannot run: a syntax error (the message gives the
    1-based character offset), an unknown class or property, a comparison
    of incompatible types, a missing or mistyped argument."""

    default_status = Status.QUERY


class QueryInterruptedError(CofferError):
    """A running query was stopped before it ended: by Database.interrupt()
    (from another thread) or because it ran past its `timeout`. The message
    says which. Nothing was changed; the query can be run again."""

    default_status = Status.INTERRUPTED


class SyncTimeoutError(CofferError, TimeoutError):
    """A sync wait (db.sync.wait_for_upload(), wait_for_download()) ran past
    its timeout. Nothing was lost: uploading and downloading go on."""

    default_status = Status.TIMEOUT


class BufferTooSmallError(CofferError):
    """A buffer given to a batch read of the C library was too small. The
    binding sizes its buffers itself and retries, so this reaches a caller
    only through a binding bug."""

    default_status = Status.BUFFER_TOO_SMALL


class CancelledError(CofferError):
    """A progress callback (coffer.open(progress=...)) asked to stop: the
    open was abandoned and the file left as it was. The message names the
    step that was under way."""

    default_status = Status.CANCELLED


ERROR_CLASSES: Dict[int, Type[CofferError]] = {
    Status.INVALID_ARGUMENT: InvalidArgumentError,
    Status.NO_MEMORY: CofferMemoryError,
    Status.IO: FileAccessError,
    Status.NOT_FOUND: NotFoundError,
    Status.MISUSE: MisuseError,
    Status.NOT_IN_WRITE: NotInWriteError,
    Status.READ_ONLY: ReadOnlyError,
    Status.SCHEMA: SchemaError,
    Status.MIGRATION_REQUIRED: MigrationRequiredError,
    Status.SCHEMA_VERSION: SchemaVersionError,
    Status.TYPE: PropertyTypeError,
    Status.PRIMARY_KEY_EXISTS: PrimaryKeyExistsError,
    Status.IMMUTABLE: ImmutablePropertyError,
    Status.MAP_FULL: MapFullError,
    Status.FILE_TOO_LARGE: FileTooLargeError,
    Status.NOT_A_DATABASE: NotADatabaseError,
    Status.FORMAT_VERSION: FormatVersionError,
    Status.CORRUPTED: CorruptedError,
    Status.INTEGRITY: IntegrityError,
    Status.KEY_REQUIRED: KeyRequiredError,
    Status.WRONG_KEY: WrongKeyError,
    Status.NOT_ENCRYPTED: NotEncryptedError,
    Status.LIMIT: LimitError,
    Status.BUSY: BusyError,
    Status.INTERNAL: InternalError,
    Status.QUERY: QueryError,
    Status.INTERRUPTED: QueryInterruptedError,
    Status.TIMEOUT: SyncTimeoutError,
    Status.BUFFER_TOO_SMALL: BufferTooSmallError,
    Status.CANCELLED: CancelledError,
}


def error_for(status: int, message: str) -> CofferError:
    """The exception for a C status; unknown codes give a plain CofferError."""
    cls = ERROR_CLASSES.get(status, CofferError)
    return cls(message or f"coffer status {status}", status)
