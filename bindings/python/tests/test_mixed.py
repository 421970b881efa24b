import datetime
import decimal
import uuid

import pytest
from models_links import Address, Owner, Pet

import coffer


@pytest.fixture
def db(db_path):
    with coffer.open(db_path, schema=[Owner, Pet, Address]) as database:
        yield database


def nested(depth):
    value = "bottom"
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize(
    "value",
    [
        None,
        True,
        7,
        2.5,
        "text",
        b"\x00bytes",
        datetime.datetime(2024, 5, 1, 12, 30, tzinfo=datetime.timezone.utc),
        coffer.ObjectId(bytes(range(12))),
        uuid.UUID(int=42),
        decimal.Decimal("1.25"),
    ],
)
def test_mixed_scalars_round_trip(db, value):
    with db.write():
        ann = db.create(Owner, {"name": "Ann", "extra": value})
    assert ann.extra == value and type(ann.extra) is type(value)


def test_mixed_nested_lists_and_dicts_round_trip(db):
    value = [1, "two", {"three": [3.0, None, {"four": True}]}, []]
    with db.write():
        ann = db.create(Owner, {"name": "Ann", "extra": value})
    assert ann.extra == value
    assert isinstance(ann.extra, coffer.List) and isinstance(ann.extra[2], coffer.Dictionary)
    assert ann.extra[2]["three"][2]["four"] is True
    with db.write():
        ann.extra[2]["three"].append({"five": 5})
        ann.extra[3].extend([1, 2])
        ann.extra[0] = {"replaced": []}
        del ann.extra[1]
    assert ann.extra == [{"replaced": []}, {"three": [3.0, None, {"four": True}, {"five": 5}]}, [1, 2]]
    with db.write():
        ann.extra = {"now": "a map"}
    assert ann.extra == {"now": "a map"}


def test_mixed_links(db):
    with db.write():
        rex = db.create(Pet, {"name": "Rex"})
        ann = db.create(Owner, {"name": "Ann", "extra": {"pets": [rex]}})
    assert ann.extra["pets"][0] == rex
    assert [o.name for o in rex.linking_objects("Owner", "extra")] == ["Ann"]
    with pytest.raises(coffer.InvalidArgumentError, match="stored objects"):
        with db.write():
            ann.extra = Pet(name="new")


def test_nesting_to_the_limit_and_past_it(db):
    with db.write():
        ann = db.create(Owner, {"name": "Ann", "extra": nested(coffer.MAX_NESTING)})
    value = ann.extra
    for _ in range(coffer.MAX_NESTING):
        value = value[0]
    assert value == "bottom"
    # One level too deep: the C library refuses, naming the property.
    with pytest.raises(coffer.LimitError, match="extra") as info:
        with db.write():
            ann.extra = nested(coffer.MAX_NESTING + 1)
    assert info.value.status == coffer.Status.LIMIT
    with pytest.raises(coffer.LimitError, match="extra"):
        with db.write():
            db.create(Owner, {"name": "Bob", "extra": nested(5000)})
    assert len(db.objects(Owner)) == 1


def test_mixed_rejects_values_it_cannot_hold(db):
    with pytest.raises(coffer.PropertyTypeError, match="class 'Owner', property 'extra': a mixed value cannot hold complex"):
        with db.write():
            db.create(Owner, {"name": "Ann", "extra": 1j})
    with pytest.raises(coffer.InvalidArgumentError, match="extra"):
        with db.write():
            db.create(Owner, {"name": "Ann", "extra": {"a.b": 1}})
    assert len(db.objects(Owner)) == 0


def test_nested_collection_replaced_under_a_handle(db):
    with db.write():
        ann = db.create(Owner, {"name": "Ann", "extra": [[1, 2]]})
    inner = ann.extra[0]
    with db.write():
        ann.extra[0] = "scalar"
    with pytest.raises(coffer.CofferError):
        list(inner)
    assert not inner.is_valid
