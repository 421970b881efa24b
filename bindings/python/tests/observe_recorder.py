"""What observers' callbacks were told, for the observer tests: a Recorder
keeps every change (and the thread it arrived on), waits for changes and
checks that no more come; told() refreshes by hand and returns the latest
change; observed() starts an observation and takes its initial call."""

import threading
from typing import Any, Callable, List, Optional, Sequence, Tuple

QUIET = 0.3  # how long "nothing more arrives" is watched


class Recorder:
    """A callback that keeps what it was given, and on which thread."""

    def __init__(self, then: Optional[Callable[[Any], None]] = None) -> None:
        self.changes: List[Any] = []
        self.threads: List[int] = []
        self.then = then
        self.cond = threading.Condition()

    def __call__(self, change: Any) -> None:
        with self.cond:
            self.changes.append(change)
            self.threads.append(threading.get_ident())
            self.cond.notify_all()
        if self.then is not None:
            self.then(change)

    def wait(self, count: int, timeout: float = 5.0) -> Any:
        """The count-th change, waiting for it at most `timeout` seconds."""
        with self.cond:
            arrived = self.cond.wait_for(lambda: len(self.changes) >= count, timeout)
            assert arrived, f"waited {timeout} s for {count} changes, saw {self.changes}"
            return self.changes[count - 1]

    def stays_at(self, count: int) -> bool:
        """No change beyond the count-th arrives for a while."""
        with self.cond:
            more = self.cond.wait_for(lambda: len(self.changes) > count, QUIET)
            assert not more, self.changes[count:]
        return True


def told(db: Any, recorder: Recorder, count: int) -> Any:
    """Refreshes and returns the count-th change, which refresh() delivered."""
    db.refresh()
    assert len(recorder.changes) == count, recorder.changes
    return recorder.changes[-1]


def observed(db: Any, target: Any, key_paths: Optional[Sequence[str]] = None) -> Tuple[Recorder, Any]:
    """Observes `target` (results, an object or a collection) into a new
    Recorder and checks the initial call; returns the recorder and token."""
    recorder = Recorder()
    token = target.observe(recorder) if key_paths is None else target.observe(recorder, key_paths)
    assert told(db, recorder, 1).initial
    return recorder, token
