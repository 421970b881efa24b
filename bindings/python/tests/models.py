"""Model classes shared by the tests."""

import datetime
import decimal
import uuid
from typing import ClassVar, Optional

import coffer


class Dog(coffer.Object):
    id: int = coffer.primary_key()
    name: str = coffer.indexed("")
    breed: Optional[str] = None
    age: int = 1
    kind: ClassVar[str] = "not a property"


class Everything(coffer.Object):
    id: coffer.ObjectId = coffer.primary_key()
    flag: bool
    count: int
    ratio: coffer.Float32
    amount: float
    text: str
    blob: bytes
    when: datetime.datetime
    oid: coffer.ObjectId
    uid: uuid.UUID
    money: decimal.Decimal
    maybe_flag: Optional[bool]
    maybe_count: Optional[int]
    maybe_ratio: Optional[coffer.Float32]
    maybe_amount: Optional[float]
    maybe_text: Optional[str]
    maybe_blob: Optional[bytes]
    maybe_when: Optional[datetime.datetime]
    maybe_oid: Optional[coffer.ObjectId]
    maybe_uid: Optional[uuid.UUID]
    maybe_money: Optional[decimal.Decimal]


PERSON = {
    "name": "Person",
    "primaryKey": "name",
    "properties": {"name": "string", "age": "int?", "email": {"type": "string", "optional": True, "indexed": True}},
}
