"""Flexible sync's query subscriptions (docs/SYNC.md, "Flexible sync"):
db.subscriptions of a database opened with
sync=coffer.SyncConfig(..., flexible=True). A subscription names the objects
of one class that the file should hold (a query of the subset the service
evaluates); the set is stored in the file, versioned, and sent to the
service, which answers with the objects now in view and removes those that
left it. It sits above _capi and errors and below database.py."""

from __future__ import annotations

import ctypes
from dataclasses import dataclass
from typing import Any, Callable, Iterator, List, Optional

from . import _capi
from .errors import InvalidArgumentError, MisuseError
from .sync import _millis

STATES = {
    _capi.SUBSCRIPTION_PENDING: "pending",
    _capi.SUBSCRIPTION_BOOTSTRAPPING: "bootstrapping",
    _capi.SUBSCRIPTION_COMPLETE: "complete",
    _capi.SUBSCRIPTION_ERROR: "error",
    _capi.SUBSCRIPTION_SUPERSEDED: "superseded",
}


@dataclass(frozen=True)
class Subscription:
    """One subscription: its name ("" when unnamed), class and query."""

    name: str
    class_name: str
    query: str


def _read(handle: Any) -> List[Subscription]:
    found: List[Subscription] = []
    for index in range(_capi.coffer_subscription_set_count(handle)):
        name, cls, query = ctypes.c_char_p(), ctypes.c_char_p(), ctypes.c_char_p()
        _capi.coffer_subscription_set_at(handle, index, ctypes.byref(name), ctypes.byref(cls), ctypes.byref(query))
        found.append(Subscription((name.value or b"").decode(), (cls.value or b"").decode(),
                                  (query.value or b"").decode()))
    return found


class MutableSubscriptionSet:
    """An update of the subscriptions, as `with db.subscriptions.update() as
    subs:` gives it; stored as a new version when the block ends without an
    exception, dropped otherwise."""

    def __init__(self, handle: Any, class_name: Callable[[Any], str]) -> None:
        self._handle: Optional[Any] = handle
        self._class_name = class_name
        self.version: Optional[int] = None

    def _live(self) -> Any:
        if self._handle is None:
            raise MisuseError("this subscription update has ended: begin another with db.subscriptions.update()")
        return self._handle

    def append(self, cls: Any, query: str, name: Optional[str] = None) -> None:
        """Subscribes to the objects of `cls` (a model class or a class name)
        matching `query` ("age > 2"; "TRUEPREDICATE" for all of them).
        Raises PrimaryKeyExistsError when `name` is taken by another query,
        SchemaError for a class the database does not have."""
        if not isinstance(query, str):
            raise InvalidArgumentError(f"append: query must be a str, got {type(query).__name__}")
        if name is not None and not isinstance(name, str):
            raise InvalidArgumentError(f"append: name must be a str or None, got {type(name).__name__}")
        _capi.coffer_subscription_set_append(self._live(), name.encode() if name else None,
                                             self._class_name(cls).encode(), query.encode())

    def remove(self, name: str) -> bool:
        """Removes the subscription named `name`; whether there was one."""
        removed = ctypes.c_int()
        _capi.coffer_subscription_set_remove_named(self._live(), name.encode(), ctypes.byref(removed))
        return bool(removed.value)

    def remove_all(self, cls: Any = None) -> int:
        """Removes every subscription (of `cls` only, when given); how many."""
        removed = ctypes.c_size_t()
        if cls is None:
            _capi.coffer_subscription_set_remove_all(self._live(), ctypes.byref(removed))
        else:
            _capi.coffer_subscription_set_remove_class(self._live(), self._class_name(cls).encode(),
                                                       ctypes.byref(removed))
        return removed.value

    def __iter__(self) -> Iterator[Subscription]:
        return iter(_read(self._live()))

    def __len__(self) -> int:
        return int(_capi.coffer_subscription_set_count(self._live()))

    def _finish(self, commit: bool) -> None:
        handle, self._handle = self._handle, None
        try:
            if commit and handle is not None:
                version = ctypes.c_uint64()
                _capi.coffer_subscription_set_commit(handle, ctypes.byref(version))
                self.version = version.value
        finally:
            _capi.coffer_subscription_set_free(handle)


class _Update:
    def __init__(self, subscriptions: "Subscriptions") -> None:
        self._subscriptions = subscriptions
        self._set: Optional[MutableSubscriptionSet] = None

    def __enter__(self) -> MutableSubscriptionSet:
        out = ctypes.c_void_p()
        _capi.coffer_subscriptions_update(self._subscriptions._db(), ctypes.byref(out))
        self._set = MutableSubscriptionSet(out, self._subscriptions._class_name)
        return self._set

    def __exit__(self, exc_type: Any, *rest: Any) -> None:
        assert self._set is not None
        self._set._finish(commit=exc_type is None)


class Subscriptions:
    """db.subscriptions: the file's latest subscription set (it survives
    reopening). Read it as a sequence of Subscription; change it with
    `with db.subscriptions.update() as subs: subs.append(Dog, "age > 2",
    name="dogs")`; wait_for_complete() returns once the file holds what it
    gives."""

    def __init__(self, db: Callable[[], Any], class_name: Callable[[Any], str]) -> None:
        self._db = db
        self._class_name = class_name

    def _snapshot(self) -> Any:
        out = ctypes.c_void_p()
        _capi.coffer_subscriptions_latest(self._db(), ctypes.byref(out))
        return out

    def _with_snapshot(self, read: Callable[[Any], Any]) -> Any:
        handle = self._snapshot()
        try:
            return read(handle)
        finally:
            _capi.coffer_subscription_set_free(handle)

    def update(self) -> _Update:
        """A context manager giving a MutableSubscriptionSet; its changes are
        committed as the next version when the block ends."""
        return _Update(self)

    @property
    def version(self) -> int:
        """The latest set's version (0 before any update)."""
        return int(self._with_snapshot(_capi.coffer_subscription_set_version))

    @property
    def state(self) -> str:
        """"pending", "bootstrapping", "complete" or "error"."""
        return STATES.get(self._with_snapshot(_capi.coffer_subscription_set_state), "pending")

    @property
    def error(self) -> str:
        """For the "error" state, the service's message naming the query and the part it cannot evaluate."""
        return (self._with_snapshot(_capi.coffer_subscription_set_error) or b"").decode()

    def find(self, name: str) -> Optional[Subscription]:
        """The subscription named `name`, or None."""
        return next((s for s in self if s.name == name), None)

    def __iter__(self) -> Iterator[Subscription]:
        return iter(self._with_snapshot(_read))

    def __len__(self) -> int:
        return int(self._with_snapshot(_capi.coffer_subscription_set_count))

    def wait_for_complete(self, timeout: Optional[float] = None, version: Optional[int] = None) -> None:
        """Returns once the set `version` (default: the latest) is complete.
        Raises QueryError with the service's message when it refused the set,
        SyncTimeoutError after `timeout` seconds (None: no limit)."""
        target = self.version if version is None else version
        _capi.coffer_subscriptions_wait(self._db(), target, _millis(timeout))
