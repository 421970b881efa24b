"""Observer registrations and their delivery: the C callbacks (one ctypes
function per kind, made once, so none is ever freed while C may call it),
the NotificationToken that stops an observer, delivery on the notifier
thread or an asyncio loop, ChangeStream for `async for`, and logging of
exceptions raised by callbacks (they must never reach ctypes).

Registering an observer (Results.observe() and the like, through
observing.py) makes a Registration, whose integer id is the C callback's
context; the C callback looks the registration up and does nothing once
it is gone."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import threading
import weakref
from typing import Any, AsyncIterator, Callable, Dict, Iterable, Iterator, List, Optional, Set, TypeVar

from . import _capi
from .changes import is_last

logger = logging.getLogger("coffer")

C = TypeVar("C")

# The live registrations by id. Reads need no lock (a dict lookup is atomic);
# adding, removing and taking a C token out do.
_registrations: Dict[int, "Registration"] = {}
_ids = itertools.count(1)
_lock = threading.Lock()


class Registration:
    """One observer: the callback, how its change objects are read from the
    C arguments (`read`), where they are delivered, and its C token while it
    runs. `owner` is the set of registrations of its database handle, which
    stops them before the handle closes."""

    def __init__(self, callback: Callable[[Any], None], read: Callable[..., Any],
                 loop: Optional[asyncio.AbstractEventLoop], owner: Set["Registration"]) -> None:
        self.callback = callback
        self.read = read
        self.loop = loop
        self.owner = owner
        self.token: Optional[_capi.TokenP] = None
        self.attached = False
        self.stopped = False
        # Set once coffer_token_stop() returned: the handle may close then.
        self.done = threading.Event()
        with _lock:
            self.id = next(_ids)
            _registrations[self.id] = self

    def attach(self, token: _capi.TokenP) -> None:
        """Takes the C token coffer_*_observe() returned; stops it at once
        if stop() came first (from a callback that ran meanwhile)."""
        with _lock:
            self.attached = True
            stop_now = self.stopped
            if not stop_now:
                self.token = token
                self.owner.add(self)
        if stop_now:
            self._stop_c(token)

    def abandon(self) -> None:
        """Forgets a registration whose C observe call failed."""
        with _lock:
            self.stopped = True
            _registrations.pop(self.id, None)
        self.done.set()

    def stop(self) -> None:
        """Stops the observer; idempotent, from any thread, also from inside
        its own callback. Once it returns the callback is not called again
        (on a loop: when called on that loop's thread)."""
        with _lock:
            self.stopped = True
            token, self.token = self.token, None
        if token is not None:
            self._stop_c(token)

    def _stop_c(self, token: _capi.TokenP) -> None:
        # Waits for a callback running on another thread; ctypes releases
        # the GIL meanwhile, so that callback can finish.
        _capi.coffer_token_stop(token)
        with _lock:
            _registrations.pop(self.id, None)
            self.owner.discard(self)
        self.done.set()

    def stop_and_wait(self) -> None:
        """stop(), then waits until whichever thread stops the C token has
        done so (what a handle must do before it closes)."""
        self.stop()
        if self.attached:
            self.done.wait()

    def deliver(self, change: Any) -> None:
        if self.loop is None:
            self.call(change)
            return
        try:
            self.loop.call_soon_threadsafe(self.call, change)
        except RuntimeError:  # the loop is closed
            logger.warning("coffer: a change was dropped because the observer's event loop is closed")

    def call(self, change: Any) -> None:
        if self.stopped:
            return  # stopped after the change was posted to the loop
        try:
            self.callback(change)
        except Exception:
            logger.exception("coffer: an observer's callback raised")


@contextlib.contextmanager
def held_tokens(registrations: Iterable[Registration]) -> Iterator[List[_capi.TokenP]]:
    """The C tokens of the registrations still running, which no thread can
    stop (and so free) until the block ends."""
    with _lock:
        yield [r.token for r in registrations if r.token is not None]


def _dispatch(ctx: Optional[int], *args: Any) -> None:
    # Runs on the notifier thread, inside a refresh, or on a scheduler's
    # loop: nothing may escape into ctypes.
    try:
        registration = _registrations.get(ctx or 0)
        if registration is None or registration.stopped:
            return
        registration.deliver(registration.read(*args))
    except BaseException:
        logger.exception("coffer: reading a change for an observer failed")


def _on_db(ctx: Optional[int], txn: Any, old_version: int, new_version: int) -> None:
    _dispatch(ctx, old_version, new_version)


def _on_changes(ctx: Optional[int], txn: Any, changes: Any) -> None:
    # Collections, objects and maps alike: the change set is read by the
    # registration's own reader.
    _dispatch(ctx, changes)


# Schedulers given to Database.set_scheduler(), by id (the C scheduler
# context): each takes a function to run later on the program's loop.
_schedulers: Dict[int, Callable[[Callable[[], None]], Any]] = {}


def add_scheduler(post: Callable[[Callable[[], None]], Any]) -> int:
    with _lock:
        scheduler_id = next(_ids)
        _schedulers[scheduler_id] = post
    return scheduler_id


def remove_scheduler(scheduler_id: int) -> None:
    with _lock:
        _schedulers.pop(scheduler_id, None)


def _post(ctx: Optional[int], work: Optional[int], arg: Optional[int]) -> None:
    # Called on the notifier thread. The work must run exactly once: if the
    # scheduler is gone or raises, it runs here instead.
    work_fn = _capi.WORK_FN(work or 0)

    def run() -> None:
        work_fn(arg)

    post = _schedulers.get(ctx or 0)
    if post is None:
        run()
        return
    try:
        post(run)
    except BaseException:
        logger.exception("coffer: a scheduler raised; notifications were delivered on the notifier thread")
        run()


# The C callbacks, alive as long as the module.
DB_CALLBACK = _capi.DB_CALLBACK(_on_db)
COLLECTION_CALLBACK = _capi.COLLECTION_CALLBACK(_on_changes)
OBJECT_CALLBACK = _capi.OBJECT_CALLBACK(_on_changes)
MAP_CALLBACK = _capi.MAP_CALLBACK(_on_changes)
POST_CALLBACK = _capi.POST_FN(_post)


class NotificationToken:
    """Keeps an observer running; stop() ends it. Used as a context manager
    it stops on exit. When the token is garbage collected the observer
    stops too, so keep it as long as notifications are wanted; closing the
    database stops every observer of it."""

    def __init__(self, registration: Registration) -> None:
        self._registration = registration
        self._finalizer = weakref.finalize(self, registration.stop)

    def stop(self) -> None:
        """Stops the observer: from any thread, also from inside its own
        callback; stopping twice does nothing. Once it returns, the
        callback is not called again (for loop delivery: when called on the
        loop's thread)."""
        self._finalizer()

    @property
    def is_active(self) -> bool:
        """False once stopped (or its database closed)."""
        return not self._registration.stopped

    def __enter__(self) -> "NotificationToken":
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"<coffer.NotificationToken {'active' if self.is_active else 'stopped'}>"


# Ends a ChangeStream's iteration.
_END: Any = object()


class ChangeStream(AsyncIterator[C]):
    """The changes of an observer as an asynchronous iterator, delivered on
    the running asyncio loop:

        async with results.changes() as stream:
            async for change in stream:
                ...

    Iteration ends after the last change of a deleted object or list, or
    once stop() was called; leaving `async with` stops the observer (so
    does collecting the stream)."""

    def __init__(self, start: Callable[[Callable[[C], None], asyncio.AbstractEventLoop], NotificationToken]) -> None:
        self._loop = asyncio.get_running_loop()
        self._queue: "asyncio.Queue[C]" = asyncio.Queue()
        self._ended = False
        self.token = start(self._queue.put_nowait, self._loop)

    def __aiter__(self) -> "ChangeStream[C]":
        return self

    async def __anext__(self) -> C:
        if self._ended:
            raise StopAsyncIteration
        change = await self._queue.get()
        if change is _END:
            self._ended = True
            raise StopAsyncIteration
        if is_last(change):
            self._ended = True
            self.token.stop()
        return change

    def stop(self) -> None:
        """Stops the observer and ends the iteration (after the changes
        already queued); from any thread."""
        self.token.stop()
        try:
            self._loop.call_soon_threadsafe(self._queue.put_nowait, _END)
        except RuntimeError:  # the loop is closed: nobody iterates
            pass

    async def aclose(self) -> None:
        self.stop()

    async def __aenter__(self) -> "ChangeStream[C]":
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        self.stop()
