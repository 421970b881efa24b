"""Runs the README's Python observing block, with the quick start's Dog model."""
import datetime
from typing import Optional

import coffer


class Dog(coffer.Object):
    id: int = coffer.primary_key()
    name: str = coffer.indexed("")
    breed: Optional[str] = None
    born: Optional[datetime.datetime] = None


# readme: python-observe
assert told.is_set(), "the observer was not told of the commit"
