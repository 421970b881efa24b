"""How much a returned commit survives: coffer.open(durability=...)."""

import enum
from typing import Union


class Durability(enum.IntEnum):
    """The durability of commits (coffer_durability in C).

    Whatever the level, an application crash (the process killed, even with
    SIGKILL) loses no commit that returned. The levels differ in a crash of
    the system (kernel panic, power loss).
    """

    #: The default: a commit that returned survives a system crash (its
    #: pages and then the page that makes it current are flushed to disk).
    FULL = 0
    #: The data pages are flushed at every commit, the page that makes it
    #: current with the next commit: a system crash may lose the last
    #: commit(s) but never damages the file.
    NORMAL = 1
    #: Nothing is flushed by a commit: a system crash can lose recent
    #: commits and, on file systems that reorder writes, damage the file.
    #: Only for data that can be rebuilt.
    NONE = 2


DurabilityLike = Union[Durability, str]


def durability_value(value: DurabilityLike) -> int:
    """The C value of a Durability or of its name ("full", "normal", "none")."""
    if isinstance(value, Durability):
        return int(value)
    if isinstance(value, str):
        try:
            return int(Durability[value.upper()])
        except KeyError:
            pass
        raise ValueError(f"durability must be 'full', 'normal' or 'none', got {value!r}")
    raise TypeError(f"durability must be a coffer.Durability or its name, got {type(value).__name__}")
