"""The progress of a long open (coffer.open(progress=...)): the phases the C
library reports while it copies a seed file, decides on and runs a
compaction and runs a migration, and the callback that may cancel them."""

from __future__ import annotations

import enum
from typing import Any, Callable, List, Optional

from . import _capi


class ProgressPhase(enum.IntEnum):
    """A step of coffer.open() that can take long, in the order they run
    (the values of the C enum coffer_progress_phase)."""

    #: Copying the seed file; units are bytes of the seed file.
    SEED_COPY = 1
    #: Measuring the file and asking should_compact_on_launch: 0 of 1, then 1 of 1.
    SHOULD_COMPACT = 2
    #: Writing the compacted copy; units are bytes of the pages in use.
    COMPACTION = 3
    #: Running the migration; units are objects of the file before it,
    #: counting those Migration.enumerate_objects() has visited.
    MIGRATION = 4
    #: Writing a copy (Database.write_copy()): bytes for a plain copy of a
    #: plain file, else entries of the file.
    COPY = 5


#: f(phase, done, total): False (not None) or an exception cancels the open.
ProgressCallback = Callable[[ProgressPhase, int, int], Optional[bool]]


def install(config: _capi.ConfigP, progress: ProgressCallback, failures: List[BaseException]) -> Any:
    """Sets `progress` as the configuration's progress callback. An exception
    it raises cancels the open and is kept in `failures`, to be raised by
    coffer.open(). Returns the C callback, which must outlive the open."""
    fn = c_callback(progress, failures)
    _capi.coffer_config_set_progress(config, fn, None)
    return fn


def c_callback(progress: ProgressCallback, failures: List[BaseException]) -> Any:
    """The C progress callback calling `progress`: False or an exception
    cancels, the exception kept in `failures` to be raised once the C call
    returns. It must outlive the C call it is given to."""
    if not callable(progress):
        raise TypeError(f"progress must be callable, got {type(progress).__name__}")

    def report(phase: int, done: int, total: int, _ctx: Any) -> int:
        try:
            try:
                named = ProgressPhase(phase)
            except ValueError:  # a phase newer than this package
                return 0
            return 1 if progress(named, done, total) is False else 0
        except BaseException as exc:  # re-raised once coffer_open returns
            failures.append(exc)
            return 1

    return _capi.PROGRESS_FN(report)
