"""Model classes of the observer tests: dogs with owners, owners with
lists of dogs (also opened by the child process of the cross-process test)."""

from typing import List, Optional

import coffer


class Owner(coffer.Object):
    id: int = coffer.primary_key()
    name: str = ""
    dogs: List["Dog"]


class Dog(coffer.Object):
    id: int = coffer.primary_key()
    name: str = ""
    age: int = 0
    owner: Optional[Owner] = None


KENNEL = [Owner, Dog]
