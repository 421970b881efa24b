"""Model classes with links, embedded objects, collections and mixed values."""

from typing import Dict, List, Optional, Set

import coffer


class Address(coffer.EmbeddedObject):
    street: str
    city: str = "Oslo"


class Owner(coffer.Object):
    name: str = coffer.primary_key()
    pets: List["Pet"]
    best: Optional["Pet"]
    nicknames: Set[str]
    scores: Dict[str, float]
    lucky: List[Optional[int]]
    address: Optional[Address]
    addresses: List[Address]
    extra: coffer.Mixed


class Pet(coffer.Object):
    name: str
    owner: "Owner | None"
    owners: coffer.LinkingObjects = coffer.linking_objects("Owner", "pets")


# The same classes as Realm-JS-style dicts.
DICT_SCHEMA = [
    {
        "name": "Owner",
        "primaryKey": "name",
        "properties": {
            "name": "string",
            "pets": "Pet[]",
            "best": "Pet",
            "nicknames": "string<>",
            "scores": "double{}",
            "lucky": "int?[]",
            "address": {"type": "object", "objectType": "Address"},
            "addresses": {"type": "list", "objectType": "Address"},
            "extra": "mixed",
        },
    },
    {
        "name": "Pet",
        "properties": [
            {"name": "name", "type": "string"},
            {"name": "owner", "type": "object", "objectType": "Owner"},
            {"name": "owners", "type": "linkingObjects", "objectType": "Owner", "property": "pets"},
        ],
    },
    {"name": "Address", "embedded": True, "properties": {"street": "string", "city": {"type": "string", "default": "Oslo"}}},
]
