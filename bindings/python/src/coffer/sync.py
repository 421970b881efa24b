"""Sync (docs/SYNC.md): SyncConfig, which coffer.open(..., sync=...) takes;
the session a synced Database offers as db.sync (waits, pause, resume,
state); SyncError, what SyncConfig(on_error=...) is told of the service's
errors (a compensating write among them); and the WebSocket transport Python supplies to the core, made with
the `websockets` package (pip install "coffer[sync]"). It sits above
_capi and errors and below database.py, which holds a session; it never
imports database.py."""

from __future__ import annotations

import ctypes
import ssl
import threading
from dataclasses import dataclass
from typing import Any, Callable, Dict, Optional

from . import _capi, client_reset, values
from .auth import AuthError, User
from .errors import InvalidArgumentError, MisuseError, Status

STATES = {
    _capi.SYNC_OFF: "off",
    _capi.SYNC_DISCONNECTED: "disconnected",
    _capi.SYNC_CONNECTING: "connecting",
    _capi.SYNC_CONNECTED: "connected",
    _capi.SYNC_PAUSED: "paused",
    _capi.SYNC_FAILED: "failed",
}


class SyncError(Exception):
    """An ERROR frame of the sync service (docs/SYNC.md, "Errors"), as
    SyncConfig(on_error=...) receives it.

    code: the service's error code (COMPENSATING_WRITE is 10).
    code_name: its name ("COMPENSATING_WRITE", "AUTH", ...).
    message: the service's message.
    fatal: whether the service closed the session with it.
    class_name, primary_key: for a compensating write, the object whose
        write the permission rules refused (the session reverts it to the
        service's state); None for other errors.
    """

    COMPENSATING_WRITE = _capi.SYNC_ERROR_COMPENSATING_WRITE

    def __init__(self, code: int, code_name: str, message: str, fatal: bool,
                 class_name: Optional[str] = None, primary_key: Any = None) -> None:
        super().__init__(f"{code_name}: {message}")
        self.code = code
        self.code_name = code_name
        self.message = message
        self.fatal = fatal
        self.class_name = class_name
        self.primary_key = primary_key

    @property
    def is_compensating_write(self) -> bool:
        """Whether a write was refused by the service's permission rules."""
        return self.code == self.COMPENSATING_WRITE


@dataclass(frozen=True)
class SyncConfig:
    """Where and what a database syncs.

    url: the service, "ws://HOST:PORT/sync/v1" ("wss://" too with the
        websockets transport).
    partition: the partition value whose objects this file holds; a file
        syncs one partition for good.
    transport: "websockets" (the default: Python's own, with the
        `websockets` package) or "builtin" (the core's small ws:// client,
        no TLS).
    user: a coffer.User (App.login()) for a service that authenticates
        its clients: the session sends its access token and refreshes it
        by itself when the service says it expired. None for a service in
        development mode.
    token: a fixed access token instead of `user` (it is not refreshed).
    ssl_context: the ssl.SSLContext of wss:// connections made by the
        websockets transport; None uses the system's trust roots. To trust
        a self-hosted service's own CA:
        `ssl.create_default_context(cafile="ca.pem")`.
    on_error: called with a SyncError for every ERROR the service sends
        (a compensating write, or an error that stops the session). It runs
        on the database's sync thread, which waits for it: it must return
        soon, and must not close the database nor wait for sync. An
        exception it raises is kept in the session's `callback_exception`
        and otherwise ignored.
    flexible: flexible sync (query subscriptions, db.subscriptions): the
        file holds the objects of `partition`'s data set that match its
        subscriptions, not all of them.
    download_before_open: "never" (the default: open at once), "once" (a
        file that never synced waits at open for everything the service
        has) or "always" (every open waits), as Realm's downloadBeforeOpen.
        An open that waits raises SyncTimeoutError when the download takes
        longer than `download_timeout` seconds (None: no limit), and
        MisuseError when the service refuses the session.
    client_reset: what the session does when the service answers
        CLIENT_RESET (docs/SYNC.md, "Client reset"): "recover" (the
        default: keep the file's objects and its commits not uploaded yet,
        upload them again as a new client and download the partition again),
        "discard" (delete the file's synced objects and unsynced commits and
        download the service's state afresh) or "manual" (change nothing; the
        session fails and `on_error` is told).
    before_reset, after_reset: called without arguments on the sync thread
        before a "recover" or "discard" reset changes the file, and once the
        first download after it is integrated; an exception goes to
        sys.unraisablehook.
    """

    url: str
    partition: str
    transport: str = "websockets"
    user: Optional[User] = None
    token: Optional[str] = None
    ssl_context: Optional[ssl.SSLContext] = None
    on_error: Optional[Callable[[SyncError], None]] = None
    flexible: bool = False
    download_before_open: str = "never"
    download_timeout: Optional[float] = None
    client_reset: str = "recover"
    before_reset: Optional[Callable[[], None]] = None
    after_reset: Optional[Callable[[], None]] = None

    def __post_init__(self) -> None:
        if self.download_before_open not in _DOWNLOAD_MODES:
            raise InvalidArgumentError(
                f"SyncConfig: download_before_open must be 'never', 'once' or 'always', got {self.download_before_open!r}"
            )
        if self.client_reset not in client_reset.MODES:
            raise InvalidArgumentError(
                f"SyncConfig: client_reset must be 'recover', 'discard' or 'manual', got {self.client_reset!r}"
            )
        for name in ("before_reset", "after_reset"):
            fn = getattr(self, name)
            if fn is not None and not callable(fn):
                raise InvalidArgumentError(f"SyncConfig: {name} must be callable, got {type(fn).__name__}")
        if not isinstance(self.url, str) or not self.url.startswith(("ws://", "wss://")):
            raise InvalidArgumentError(f"SyncConfig: url must be a ws:// or wss:// URL, got {self.url!r}")
        if not isinstance(self.partition, str) or not self.partition:
            raise InvalidArgumentError("SyncConfig: partition must be a non-empty str")
        if self.user is not None and not isinstance(self.user, User):
            raise InvalidArgumentError(f"SyncConfig: user must be a coffer.User, got {type(self.user).__name__}")
        if self.token is not None and not isinstance(self.token, str):
            raise InvalidArgumentError(f"SyncConfig: token must be a str, got {type(self.token).__name__}")
        if self.on_error is not None and not callable(self.on_error):
            raise InvalidArgumentError(f"SyncConfig: on_error must be callable, got {type(self.on_error).__name__}")
        if self.transport not in ("websockets", "builtin"):
            raise InvalidArgumentError(
                f"SyncConfig: transport must be 'websockets' or 'builtin', got {self.transport!r}"
            )
        if self.ssl_context is not None and not isinstance(self.ssl_context, ssl.SSLContext):
            raise InvalidArgumentError(
                f"SyncConfig: ssl_context must be an ssl.SSLContext, got {type(self.ssl_context).__name__}"
            )
        if self.ssl_context is not None and self.transport == "builtin":
            raise InvalidArgumentError("SyncConfig: the builtin transport has no TLS; ssl_context needs 'websockets'")


class WebSocketTransport:
    """The core's transport interface (coffer_sync_transport) over the
    `websockets` package's synchronous client. Its callbacks run on the
    database's sync thread; an exception in one closes the connection (the
    session reconnects) and is kept in `last_exception`."""

    def __init__(self, open_timeout: float = 10.0, ssl_context: Optional[ssl.SSLContext] = None) -> None:
        try:
            from websockets.sync.client import connect  # an optional dependency, loaded when used
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise MisuseError('sync needs the websockets package: pip install "coffer[sync]"') from exc
        self._connect = connect
        self._open_timeout = open_timeout
        self._ssl_context = ssl_context
        self._connections: Dict[int, Any] = {}
        self._last_frames: Dict[int, Any] = {}
        self._next_id = 1
        self._lock = threading.Lock()
        self.last_exception: Optional[BaseException] = None
        self._callbacks = (
            _capi.SYNC_OPEN_FN(self._open),
            _capi.SYNC_SEND_FN(self._send),
            _capi.SYNC_RECEIVE_FN(self._receive),
            _capi.SYNC_CLOSE_FN(self._close),
        )
        self.struct = _capi.coffer_sync_transport(None, *self._callbacks)

    def _failed(self, exc: BaseException) -> int:
        self.last_exception = exc
        # The session's error (db.sync.error) names the failure.
        message = f"websockets: {type(exc).__name__}: {exc}"
        return int(_capi.coffer_sync_transport_fail(int(Status.IO), message.encode("utf-8", "replace")))

    def _open(self, _ctx: Any, url: bytes, out: Any) -> int:
        try:
            # Entered as a context manager: how every version of the package connects.
            text = url.decode("utf-8")
            tls: Dict[str, Any] = (
                {"ssl": self._ssl_context} if self._ssl_context is not None and text.startswith("wss://") else {}
            )
            ws = self._connect(text, open_timeout=self._open_timeout, max_size=None,
                               compression=None, **tls).__enter__()
        except BaseException as exc:  # every failure is a failed connection
            return self._failed(exc)
        with self._lock:
            conn_id = self._next_id
            self._next_id += 1
            self._connections[conn_id] = ws
        out[0] = conn_id
        return int(Status.OK)

    def _send(self, _ctx: Any, conn: Optional[int], frame: Any, size: int) -> int:
        try:
            self._connections[conn or 0].send(ctypes.string_at(frame, size))
        except BaseException as exc:
            return self._failed(exc)
        return int(Status.OK)

    def _receive(self, _ctx: Any, conn: Optional[int], timeout_ms: int, frame: Any, size: Any) -> int:
        try:
            data = self._connections[conn or 0].recv(timeout=max(timeout_ms, 0) / 1000.0)
        except TimeoutError:
            return int(Status.TIMEOUT)
        except BaseException as exc:
            return self._failed(exc)
        if isinstance(data, str):
            return self._failed(ValueError("the sync service sent a text message"))
        buf = (ctypes.c_uint8 * max(len(data), 1)).from_buffer_copy(data or b"\0")
        self._last_frames[conn or 0] = buf  # valid until the next receive or close
        frame[0] = ctypes.cast(buf, ctypes.POINTER(ctypes.c_uint8))
        size[0] = len(data)
        return int(Status.OK)

    def _close(self, _ctx: Any, conn: Optional[int]) -> None:
        with self._lock:
            ws = self._connections.pop(conn or 0, None)
            self._last_frames.pop(conn or 0, None)
        if ws is not None:
            try:
                ws.close()
            except BaseException:  # closing a broken connection
                pass


class TokenSource:
    """The core's token callback (coffer_sync_token_fn) over a User: runs
    on the database's sync thread before every connection. A refresh the
    service refuses (the user logged out) stops the session; a service that
    cannot be reached is retried. The last failure is kept in
    `last_exception`."""

    def __init__(self, user: User) -> None:
        self.user = user
        self.last_exception: Optional[BaseException] = None
        self.fn = _capi.SYNC_TOKEN_FN(self._supply)

    def _supply(self, _ctx: Any, refresh: int, buf: Any, size: int) -> int:
        try:
            token = self.user.token_for_session(bool(refresh)).encode("utf-8")
        except AuthError as exc:
            self.last_exception = exc
            return int(Status.IO) if exc.http_status == 0 or exc.http_status >= 500 else int(Status.MISUSE)
        except BaseException as exc:  # a failure of the callback is a refused token
            self.last_exception = exc
            return int(Status.MISUSE)
        if len(token) >= size:
            self.last_exception = ValueError(f"the access token has {len(token)} bytes, more than {size - 1}")
            return int(Status.MISUSE)
        ctypes.memmove(buf, token + b"\0", len(token) + 1)
        return int(Status.OK)


StateCallback = Callable[[str, str], None]
"""A sync state callback: called with the old and the new state, each one of
the names of SyncSession.state."""


class StateListeners:
    """The core's state callback (coffer_sync_state_fn) of one synced
    handle, passing every change on to the callables of
    SyncSession.on_state_change(). The core calls it on the session's
    thread, or on a thread calling pause(), resume() or close(), one change
    at a time and in order."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._callbacks: Dict[int, StateCallback] = {}
        self._next = 0
        self.fn = _capi.SYNC_STATE_FN(self._told)

    def add(self, callback: StateCallback) -> "SyncStateToken":
        with self._lock:
            self._next += 1
            key = self._next
            self._callbacks[key] = callback
        return SyncStateToken(self, key)

    def remove(self, key: int) -> None:
        with self._lock:
            self._callbacks.pop(key, None)

    def _told(self, _ctx: Any, old: int, new: int) -> None:
        with self._lock:
            callbacks = list(self._callbacks.values())
        failure: Optional[BaseException] = None
        for callback in callbacks:
            try:
                callback(STATES.get(old, "off"), STATES.get(new, "off"))
            except BaseException as exc:  # the others still hear of the change
                failure = failure or exc
        if failure is not None:
            raise failure  # reported by ctypes as an unraisable exception


class SyncStateToken:
    """Returned by SyncSession.on_state_change(): cancel() stops the calls."""

    def __init__(self, listeners: StateListeners, key: int) -> None:
        self._listeners = listeners
        self._key = key

    def cancel(self) -> None:
        """Stops calling the callback. A call already running on another
        thread finishes; none starts after this returns. Cancelling twice
        does nothing."""
        self._listeners.remove(self._key)

    def __enter__(self) -> "SyncStateToken":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.cancel()


class ErrorSink:
    """The core's sync error callback (coffer_sync_error_fn) over a Python
    callable: turns each event into a SyncError on the database's sync
    thread. An exception of the callable is kept in `last_exception`."""

    def __init__(self, on_error: Callable[[SyncError], None]) -> None:
        self.on_error = on_error
        self.last_exception: Optional[BaseException] = None
        self.fn = _capi.SYNC_ERROR_FN(self._report)

    def _report(self, _ctx: Any, event_p: Any) -> None:
        try:
            event = event_p.contents
            primary_key = None
            if event.class_name is not None and event.primary_key:
                primary_key = values.from_c(event.primary_key.contents, "the refused object's primary key")
            error = SyncError(
                int(event.code),
                (event.code_name or b"unknown").decode("utf-8", "replace"),
                (event.message or b"").decode("utf-8", "replace"),
                bool(event.fatal),
                event.class_name.decode("utf-8", "replace") if event.class_name is not None else None,
                primary_key,
            )
            self.on_error(error)
        except BaseException as exc:  # a callback must not unwind into C
            self.last_exception = exc


class SyncKeepAlive:
    """What a synced handle keeps alive for the core: its transport, its
    token source and its error sink (each None when not used), and its
    state listeners."""

    def __init__(self, transport: Optional[WebSocketTransport], tokens: Optional[TokenSource],
                 states: Optional[StateListeners] = None, errors: Optional[ErrorSink] = None,
                 resets: Optional[client_reset.ResetNotifier] = None) -> None:
        self.transport = transport
        self.tokens = tokens
        self.states = states if states is not None else StateListeners()
        self.errors = errors
        self.resets = resets


def configure(config: _capi.ConfigP, sync: SyncConfig) -> SyncKeepAlive:
    """Sets `sync` on a C config; returns what the handle must keep alive."""
    if not isinstance(sync, SyncConfig):
        raise TypeError(f"sync must be a coffer.SyncConfig, got {type(sync).__name__}")
    _capi.coffer_config_set_sync(config, sync.url.encode("utf-8"), sync.partition.encode("utf-8"))
    if sync.flexible:
        _capi.coffer_config_set_sync_flexible(config, 1)
    _capi.coffer_config_set_sync_download_before_open(
        config, _DOWNLOAD_MODES[sync.download_before_open],
        0 if sync.download_timeout is None else max(1, _millis(sync.download_timeout)))
    tokens = None
    if sync.user is not None:
        tokens = TokenSource(sync.user)
        _capi.coffer_config_set_sync_token_callback(config, tokens.fn, None)
    elif sync.token is not None:
        _capi.coffer_config_set_sync_token(config, sync.token.encode("utf-8"))
    states = StateListeners()
    _capi.coffer_config_set_sync_state_callback(config, states.fn, None)
    errors = None
    if sync.on_error is not None:
        errors = ErrorSink(sync.on_error)
        _capi.coffer_config_set_sync_error_callback(config, errors.fn, None)
    resets = client_reset.configure(config, sync.client_reset, sync.before_reset, sync.after_reset)
    if sync.transport == "builtin":
        return SyncKeepAlive(None, tokens, states, errors, resets)
    transport = WebSocketTransport(ssl_context=sync.ssl_context)
    _capi.coffer_config_set_sync_transport(config, ctypes.byref(transport.struct))
    return SyncKeepAlive(transport, tokens, states, errors, resets)


_DOWNLOAD_MODES = {"never": 0, "once": 1, "always": 2}
_DIRECTIONS = {"upload": 0, "download": 1}


@dataclass(frozen=True)
class SyncProgress:
    """How far one direction of a sync session has come (db.sync.progress()),
    as Realm's SyncSession.Progress: changeset bytes since the database was
    opened. `transferable_bytes` counts those transferred and those known to
    be left (uploads: the commits not acknowledged yet; downloads: what the
    service said is left)."""

    transferred_bytes: int
    transferable_bytes: int

    @property
    def progress_estimate(self) -> float:
        """transferred over transferable, from 0 to 1 (1 when nothing is transferable)."""
        if self.transferable_bytes <= 0:
            return 1.0
        return min(1.0, self.transferred_bytes / self.transferable_bytes)

    @property
    def is_transfer_complete(self) -> bool:
        """Whether everything known is transferred."""
        return self.transferred_bytes >= self.transferable_bytes


def _millis(timeout: Optional[float]) -> int:
    if timeout is None:
        return 2**63 - 1
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout < 0:
        raise InvalidArgumentError(f"timeout must be a number of seconds >= 0, got {timeout!r}")
    return int(timeout * 1000)


class SyncSession:
    """The sync session of a Database opened with sync=SyncConfig(...):
    db.sync. Its thread uploads local commits and integrates downloads in
    the background; these calls wait for it, pause it, resume it and tell its
    state. They may be called from any thread."""

    def __init__(self, handle: Callable[[], _capi.DbP], states: Optional[StateListeners] = None,
                 errors: Optional[ErrorSink] = None) -> None:
        self._handle = handle
        self._states = states if states is not None else StateListeners()
        self._errors = errors

    @property
    def callback_exception(self) -> Optional[BaseException]:
        """The last exception SyncConfig(on_error=...) raised (None when none)."""
        return self._errors.last_exception if self._errors is not None else None

    def wait_for_upload(self, timeout: Optional[float] = None) -> None:
        """Returns once the service has every local commit made before the
        call. Raises SyncTimeoutError after `timeout` seconds (None: no
        limit), MisuseError if the service refused the session for good."""
        _capi.coffer_sync_wait_for_upload(self._handle(), _millis(timeout))

    def progress(self, direction: str) -> SyncProgress:
        """The progress of "upload" or "download" (a SyncProgress). Raises
        InvalidArgumentError for another direction."""
        if direction not in _DIRECTIONS:
            raise InvalidArgumentError(f"progress: direction must be 'upload' or 'download', got {direction!r}")
        done, total = ctypes.c_uint64(0), ctypes.c_uint64(0)
        _capi.coffer_sync_progress_get(self._handle(), _DIRECTIONS[direction], ctypes.byref(done), ctypes.byref(total))
        return SyncProgress(int(done.value), int(total.value))

    def wait_for_download(self, timeout: Optional[float] = None) -> None:
        """Returns once the session is connected and has integrated every
        change the service had sent. Raises as wait_for_upload()."""
        _capi.coffer_sync_wait_for_download(self._handle(), _millis(timeout))

    def pause(self) -> None:
        """Closes the connection until resume(); local writes go on.

        Returns at once: the session closes its connection after the frame it
        is handling, if any. `state` is "paused" as soon as this returns, and
        the state callbacks have been told."""
        _capi.coffer_sync_pause(self._handle())

    def resume(self) -> None:
        """Connects again after pause(), or after the service refused the session."""
        _capi.coffer_sync_resume(self._handle())

    @property
    def state(self) -> str:
        """"connecting", "connected", "disconnected" (waiting to retry),
        "paused" or "failed" (refused for good; see `error`)."""
        return STATES.get(_capi.coffer_sync_state(self._handle()), "off")

    def on_state_change(self, callback: StateCallback) -> SyncStateToken:
        """Calls `callback(old, new)` on every change of `state` from now on,
        until the returned token's cancel() (or the token used as a context
        manager ends). The states are the names `state` gives; closing the
        database tells a last change, to "off".

        The callback runs on the session's own thread, or on the thread that
        calls pause(), resume() or close() (the change such a call makes has
        been told when it returns). Calls never overlap and come in the order
        of the changes. It may read `state` and `error` and call pause() and
        resume(); it must not close the database, wait for sync
        (wait_for_upload(), wait_for_download()), write, or block for long:
        the session makes no progress while it runs. An exception it raises
        is reported as unraisable (sys.unraisablehook) and the session goes
        on. Thread-safe code only: hand the change to your own thread or
        event loop (loop.call_soon_threadsafe) for anything more."""
        if not callable(callback):
            raise TypeError(f"on_state_change needs a callable, got {type(callback).__name__}")
        return self._states.add(callback)

    @property
    def error(self) -> str:
        """The last error of the session ("" when none)."""
        buf = ctypes.create_string_buffer(512)
        _capi.coffer_sync_error(self._handle(), buf, len(buf))
        return buf.value.decode("utf-8", "replace")


def set_clock_source(clock: Optional[Callable[[], int]]) -> None:
    """Experimental, for tests: every sync clock of the process reads
    `clock()` (milliseconds since 1970) instead of the system clock; None
    restores it. Simulates a client offline for days."""
    global _clock_keepalive
    if clock is None:
        _capi.coffer_sync_set_clock_source(_capi.CLOCK_FN(), None)
        _clock_keepalive = None
        return
    fn = _capi.CLOCK_FN(lambda _ctx: int(clock()))
    _capi.coffer_sync_set_clock_source(fn, None)
    _clock_keepalive = fn


_clock_keepalive: Any = None
