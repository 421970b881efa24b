"""The model classes and rows of the tests of whole-object reads and writes
(test_rowcode.py, test_tuples.py): a class of every scalar kind the
generated code packs and decodes, and one with an optional string."""

from typing import Any, Dict, List, Optional

import coffer


class Row(coffer.Object):
    id: int = coffer.primary_key()
    flag: bool = False
    small: coffer.Float32 = coffer.Float32(0)
    d: float = 0.0
    text: str = ""
    blob: bytes = b""


class Loose(coffer.Object):
    id: int = coffer.primary_key()
    note: Optional[str] = None


def rows(n: int, start: int = 0) -> List[Dict[str, Any]]:
    """`n` rows of Row as dicts in schema order, ids from `start`: non-ASCII
    text of several lengths, bytes of up to 49 bytes."""
    return [{"id": i, "flag": i % 2 == 0, "small": 0.5 * i, "d": i / 3, "text": f"é{i}" * (i % 7),
             "blob": bytes(range(i % 50))} for i in range(start, start + n)]
