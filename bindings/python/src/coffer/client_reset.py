"""Client reset modes of a synced database (docs/SYNC.md, "Client reset"):
what the session does when the service answers CLIENT_RESET (the file missed
more history than the service's maximum offline time allows, or is behind
what its client id acknowledged)."""

from __future__ import annotations

from typing import Any, Callable, Optional

from . import _capi

#: The modes by name, as SyncConfig(client_reset=...) takes them.
MODES = {
    "recover": _capi.CLIENT_RESET_RECOVER_UNSYNCED,
    "discard": _capi.CLIENT_RESET_DISCARD_UNSYNCED,
    "manual": _capi.CLIENT_RESET_MANUAL,
}


class ResetNotifier:
    """The core's coffer_client_reset_fn over two Python callables, each
    called without arguments on the database's sync thread: `before_reset`
    before the file is reset, `after_reset` once the first download after it
    is integrated. An exception either raises goes to sys.unraisablehook."""

    def __init__(self, before_reset: Optional[Callable[[], None]],
                 after_reset: Optional[Callable[[], None]]) -> None:
        self.before_reset = before_reset
        self.after_reset = after_reset
        self.fn = _capi.CLIENT_RESET_FN(self._notify)

    def _notify(self, _ctx: Any, _db: Any, after: int) -> None:
        fn = self.after_reset if after else self.before_reset
        if fn is None:
            return
        fn()  # an exception is reported by ctypes as unraisable, not unwound into C


def configure(config: _capi.ConfigP, mode: str, before_reset: Optional[Callable[[], None]],
              after_reset: Optional[Callable[[], None]]) -> Optional[ResetNotifier]:
    """Sets the reset mode (and callbacks) on a C config; returns what the
    handle must keep alive (None without callbacks)."""
    notifier = ResetNotifier(before_reset, after_reset) if before_reset or after_reset else None
    _capi.coffer_config_set_sync_client_reset(config, MODES[mode], notifier.fn if notifier else _capi.CLIENT_RESET_FN(),
                                              None)
    return notifier
