"""coffer: an embedded object database (Python binding over libcoffer).

    import coffer

    class Dog(coffer.Object):
        id: int = coffer.primary_key()
        name: str = coffer.indexed("")
        breed: Optional[str] = None

    with coffer.open("dogs.coffer", schema=[Dog]) as db:
        with db.write():
            db.add(Dog(id=1, name="Rex"))
        for dog in db.objects(Dog).filter("name BEGINSWITH $0", "R").sorted("name"):
            print(dog.name)

Live data: observers are told of every commit, of this or any other
process, with Realm's change sets.

    def on_change(change: coffer.CollectionChange) -> None:
        print(change.initial, change.deletions, change.insertions, change.modifications)

    puppies = db.objects(Dog).filter("age < $0", 2).sorted("name")
    token = puppies.observe(on_change)                # every property counts
    rex_token = rex.observe(print, key_paths=["name"])  # coffer.ObjectChange
    ...
    token.stop()                                      # or `with puppies.observe(...):`

    async for change in puppies.changes():            # on the running asyncio loop
        ...

Threads: callbacks run on the library's notifier thread soon after a
commit (or, with `db.auto_refresh = False`, inside `db.refresh()` on the
thread that calls it); with `loop=` (an asyncio loop) they run on that
loop. A change object holds plain copies (indices, names, values), safe on
any thread. The objects in it and the database handle belong to the
handle's own thread: a callback on the notifier thread that wants to read
data opens its own handle (`coffer.open(db.path, ...)`), or uses `loop=`
to run on the handle's thread. Exceptions a callback raises are logged to
the "coffer" logger and do not stop later notifications. Keep each token:
collecting it stops its observer, and closing the database stops them all.
`with db.write(without_notifying=[token]):` commits without telling those
observers. `db.set_scheduler(loop.call_soon_threadsafe)` delivers every
notification of the handle through the program's own loop instead of the
notifier thread.

Lists, sets and dictionaries are observed like results:
`owner.dogs.observe(...)`, `owner.tags.observe(...)` (positions in the
set's order), `owner.scores.observe(...)` (a coffer.MapChange of keys), a
list seen through a query `owner.dogs.filter("age < 3").observe(...)`, and
a list of values seen sorted `owner.numbers.sorted().observe(...)`.
"""

from . import _capi
from .changes import CollectionChange, DatabaseChange, MapChange, ObjectChange, Origin, PropertyChange
from .database import Database
from .errors import (
    BusyError,
    CofferError,
    CofferMemoryError,
    BufferTooSmallError,
    CancelledError,
    CorruptedError,
    DatabaseClosedError,
    EncryptionError,
    FileAccessError,
    FileFormatError,
    FileTooLargeError,
    FormatVersionError,
    ImmutablePropertyError,
    IntegrityError,
    InternalError,
    InvalidArgumentError,
    InvalidObjectError,
    KeyRequiredError,
    LimitError,
    MapFullError,
    MigrationRequiredError,
    MisuseError,
    NotADatabaseError,
    NotEncryptedError,
    NotFoundError,
    NotInWriteError,
    PrimaryKeyExistsError,
    PropertyNotFoundError,
    PropertyTypeError,
    QueryError,
    QueryInterruptedError,
    SyncTimeoutError,
    ReadOnlyError,
    SchemaError,
    SchemaVersionError,
    Status,
    WrongKeyError,
)
from .containers import Dictionary, List, Set
from .model import EmbeddedObject, Float32, LinkingObjects, Mixed, Object, indexed, linking_objects, primary_key
from .migration import Migration, OldObject
from .notifications import ChangeStream, NotificationToken
from .objectid import ObjectId
from .opening import default_path, open, set_default_path, verify
from .progress import ProgressPhase
from .results import Results
from .views import SortedValues
from .schema import ObjectSchema, PropertySchema
from .stats import ClassStats, FileStats, ReaderInfo
from .durability import Durability
from .auth import App, AuthError, Credentials, User
from .sync import SyncConfig, SyncError, SyncProgress, SyncSession, SyncStateToken
from .subscriptions import MutableSubscriptionSet, Subscription, Subscriptions
from .verification import Finding, FindingKind

__version__ = "0.1.0"

ENCRYPTION_KEY_SIZE: int = _capi.coffer_encryption_key_size()

# Most levels of lists and dicts nested in a mixed value.
MAX_NESTING: int = _capi.MAX_NESTING


def library_version() -> str:
    """The version of the loaded libcoffer, "MAJOR.MINOR.PATCH"."""
    version: bytes = _capi.coffer_version()
    return version.decode("ascii")


def library_path() -> str:
    """Where the loaded libcoffer came from (COFFER_LIBRARY, the bundled
    copy, or the system's name for it)."""
    return _capi.library_path


__all__ = [
    "Durability",
    "ClassStats",
    "FileStats",
    "ReaderInfo",
    "BusyError",
    "ChangeStream",
    "CofferError",
    "CollectionChange",
    "CofferMemoryError",
    "BufferTooSmallError",
    "CancelledError",
    "CorruptedError",
    "Database",
    "Finding",
    "FindingKind",
    "DatabaseChange",
    "Dictionary",
    "EmbeddedObject",
    "DatabaseClosedError",
    "ENCRYPTION_KEY_SIZE",
    "EncryptionError",
    "FileAccessError",
    "FileFormatError",
    "FileTooLargeError",
    "Float32",
    "FormatVersionError",
    "ImmutablePropertyError",
    "IntegrityError",
    "InternalError",
    "InvalidArgumentError",
    "InvalidObjectError",
    "KeyRequiredError",
    "LinkingObjects",
    "List",
    "LimitError",
    "MAX_NESTING",
    "MapChange",
    "MapFullError",
    "Migration",
    "MigrationRequiredError",
    "Mixed",
    "MisuseError",
    "NotADatabaseError",
    "NotEncryptedError",
    "NotFoundError",
    "NotInWriteError",
    "NotificationToken",
    "Object",
    "ObjectChange",
    "ObjectId",
    "ObjectSchema",
    "ProgressPhase",
    "Origin",
    "OldObject",
    "PrimaryKeyExistsError",
    "PropertyChange",
    "PropertyNotFoundError",
    "PropertySchema",
    "PropertyTypeError",
    "QueryError",
    "QueryInterruptedError",
    "SyncConfig",
    "SyncProgress",
    "Subscription",
    "Subscriptions",
    "MutableSubscriptionSet",
    "SyncError",
    "App",
    "AuthError",
    "Credentials",
    "User",
    "SyncSession",
    "SyncStateToken",
    "SyncTimeoutError",
    "ReadOnlyError",
    "Results",
    "SchemaError",
    "SchemaVersionError",
    "Set",
    "SortedValues",
    "Status",
    "WrongKeyError",
    "default_path",
    "indexed",
    "library_path",
    "library_version",
    "linking_objects",
    "open",
    "primary_key",
    "set_default_path",
    "verify",
]
