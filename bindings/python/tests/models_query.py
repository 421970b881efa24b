"""A schema and data set for the query tests: people with scalars of every
aggregatable type, links, a list and a set of links, and backlinks."""

import datetime
import decimal

import pytest
from conftest import KEY

import coffer

SCHEMA = [
    {
        "name": "Person",
        "primaryKey": "id",
        "properties": {
            "id": "int",
            "name": {"type": "string", "indexed": True},
            "age": "int?",
            "height": "float?",
            "weight": "double?",
            "balance": "decimal128?",
            "born": "date?",
            "extra": "mixed",
            "photo": "data?",
            "tag": "objectId?",
            "token": "uuid?",
            "dogs": "Dog[]",
            "friends": "Person<>",
            "best": "Dog",
        },
    },
    {
        "name": "Dog",
        "primaryKey": "name",
        "properties": {
            "name": "string",
            "age": "int",
            "vet": "Vet",
            "owners": {"type": "linkingObjects", "objectType": "Person", "property": "dogs"},
        },
    },
    {"name": "Vet", "properties": {"name": "string", "city": "string"}},
]


def year(y):
    return datetime.datetime(y, 1, 1, tzinfo=datetime.timezone.utc)


def fill(db):
    """Ann, Bob, Cid, Dee and the dogs Rex (age 3, vet Ola in Oslo), Fido
    (5, vet Kim in Bergen) and Spot (1, no vet)."""
    with db.write():
        ola = db.create("Vet", {"name": "Ola", "city": "Oslo"})
        kim = db.create("Vet", {"name": "Kim", "city": "Bergen"})
        rex = db.create("Dog", {"name": "Rex", "age": 3, "vet": ola})
        fido = db.create("Dog", {"name": "Fido", "age": 5, "vet": kim})
        spot = db.create("Dog", {"name": "Spot", "age": 1})
        ann = db.create("Person", {"id": 1, "name": "Ann", "age": 30, "height": 1.5, "weight": 60.5,
                                   "balance": decimal.Decimal("10.25"), "born": year(1990), "extra": 3,
                                   "photo": b"\x01\x02", "dogs": [rex, fido], "best": fido})
        bob = db.create("Person", {"id": 2, "name": "Bob", "age": None, "extra": "text",
                                   "dogs": [rex], "friends": [ann], "best": rex})
        cid = db.create("Person", {"id": 3, "name": "Cid", "age": 20, "height": 2.0, "weight": 80.0,
                                   "balance": decimal.Decimal("1.5"), "born": year(2000), "extra": 2.5,
                                   "dogs": [spot, rex], "friends": [ann, bob], "best": spot})
        db.create("Person", {"id": 4, "name": "Dee", "age": 40, "weight": 70.0, "extra": None})
    return {"ann": ann, "bob": bob, "cid": cid, "rex": rex, "fido": fido, "spot": spot, "ola": ola, "kim": kim}


def raises_each(cases):
    """Table-driven error checks: for each (call, args, error, message) of
    `cases`, call(*args) raises `error` with a message matching `message`."""
    for call, args, error, message in cases:
        with pytest.raises(error, match=message):
            call(*args)


def names(objects):
    return [o.name for o in objects]


@pytest.fixture(params=["plain", "encrypted", "in-memory"])
def kind(request):
    return request.param


@pytest.fixture
def db(kind, db_path, memory_id):
    if kind == "plain":
        database = coffer.open(db_path, schema=SCHEMA)
    elif kind == "encrypted":
        database = coffer.open(db_path, schema=SCHEMA, encryption_key=KEY)
    else:
        database = coffer.open(schema=SCHEMA, in_memory_identifier=memory_id)
    with database:
        yield database
