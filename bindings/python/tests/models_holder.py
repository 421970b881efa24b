"""Model classes of the collection-observer tests: a holder with a set and a
dictionary of values and of objects, a list of numbers and a mixed value."""

from typing import Dict, List, Optional, Set

import coffer


class Toy(coffer.Object):
    id: int = coffer.primary_key()
    name: str = ""
    size: int = 0


class Holder(coffer.Object):
    id: int = coffer.primary_key()
    tags: Set[str]
    toys: Set[Toy]
    scores: Dict[str, int]
    named_toys: Dict[str, Optional[Toy]]
    numbers: List[int]
    extra: coffer.Mixed


SHELF = [Holder, Toy]
