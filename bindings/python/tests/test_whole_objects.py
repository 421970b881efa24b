"""Whole objects are written with one packed field array and read with one
C call: the values are those property-by-property access gives, and bad
values fail as they always did, naming the property, with nothing stored."""

import datetime
import decimal
import uuid

import pytest
from models import Everything
from models_links import Address, Owner, Pet

import coffer

WHEN = datetime.datetime(2024, 5, 6, 7, 8, 9, 123456, tzinfo=datetime.timezone.utc)


def everything(**changes):
    values = dict(id=coffer.ObjectId(), flag=True, count=-(2**63), ratio=coffer.Float32(1.5), amount=-2.5e300,
                  text="h\u00e9llo \u65e5\u672c \U0001f389", blob=b"\0\1\0\xff", when=WHEN, oid=coffer.ObjectId(),
                  uid=uuid.uuid4(), money=decimal.Decimal("-3E-7"), maybe_flag=False, maybe_count=2**63 - 1,
                  maybe_ratio=None, maybe_amount=0.1, maybe_text="", maybe_blob=b"", maybe_when=None,
                  maybe_oid=None, maybe_uid=None, maybe_money=decimal.Decimal(5))
    values.update(changes)
    return values


@pytest.fixture
def db(db_path):
    with coffer.open(db_path, schema=[Everything]) as database:
        yield database


@pytest.fixture
def links_db(db_path):
    with coffer.open(db_path, schema=[Owner, Pet, Address]) as database:
        yield database


def one_by_one(obj):
    """Each property read on its own (one C call per property)."""
    return {name: obj[name] for name in obj}


@pytest.mark.parametrize("encrypted", [False, True])
def test_every_scalar_type_reads_back_as_given(db_path, encrypted):
    values = everything()
    with coffer.open(db_path, schema=[Everything], encryption_key=bytes(range(64)) if encrypted else None) as db:
        with db.write():
            db.add(Everything(**values))
        obj = db.objects(Everything)[0]
        read = obj.to_dict()
        assert read == values
        assert list(read) == [p.name for p in obj.object_schema.properties]  # schema order
        assert read == one_by_one(obj)
        assert type(read["flag"]) is bool and type(read["blob"]) is bytes and type(read["text"]) is str


def test_defaults_fill_what_is_not_given(db):
    with db.write():
        obj = db.create(Everything, {"id": coffer.ObjectId()})
    read = obj.to_dict()
    assert read["count"] == 0 and read["text"] == "" and read["blob"] == b"" and read["ratio"] == 0.0
    assert read["maybe_text"] is None and read["maybe_count"] is None
    assert read == one_by_one(obj)


def test_values_of_other_python_types_are_converted_as_before(db):
    class Text(str):
        pass

    with db.write():
        obj = db.add(Everything(**everything(ratio=3, amount=7, text=Text("sub"), blob=bytearray(b"ab\0"),
                                             maybe_blob=memoryview(b"view"), maybe_amount=coffer.Float32(0.5))))
    read = obj.to_dict()
    assert read["ratio"] == 3.0 and type(read["ratio"]) is float
    assert read["amount"] == 7.0 and type(read["amount"]) is float
    assert read["text"] == "sub" and read["blob"] == b"ab\0" and read["maybe_blob"] == b"view"
    assert read["maybe_amount"] == 0.5


def test_a_float32_rounds_as_the_c_library_stores_it(db):
    with db.write():
        obj = db.add(Everything(**everything(ratio=0.1, maybe_ratio=3.4028235e38)))
    assert obj.ratio == pytest.approx(0.1, rel=1e-7) and obj.ratio != 0.1
    assert obj.to_dict()["ratio"] == obj.ratio
    assert obj.maybe_ratio == 3.4028234663852886e38


@pytest.mark.parametrize("changes, error, message", [
    ({"text": "a\0b"}, coffer.InvalidArgumentError, "property 'text': strings cannot contain NUL characters"),
    ({"text": "\ud800"}, coffer.InvalidArgumentError, "property 'text': the string cannot be encoded as UTF-8"),
    ({"ratio": 1e39}, coffer.InvalidArgumentError, "property 'ratio': 1e\\+39 does not fit in a 32-bit float"),
    ({"count": 2**63}, coffer.InvalidArgumentError, "property 'count': 9223372036854775808 is outside"),
    ({"count": True}, coffer.PropertyTypeError, "property 'count': expected int, got bool"),
    ({"flag": 1}, coffer.PropertyTypeError, "property 'flag': expected bool, got int"),
    ({"amount": "1"}, coffer.PropertyTypeError, "property 'amount': expected float or int, got str"),
    ({"blob": "text"}, coffer.PropertyTypeError, "property 'blob': expected bytes, got str"),
    ({"when": datetime.datetime(2024, 1, 1)}, coffer.InvalidArgumentError, "property 'when': .* is a naive datetime"),
    ({"text": None}, coffer.PropertyTypeError, "null"),
])
def test_bad_values_fail_naming_the_property_and_store_nothing(db, changes, error, message):
    with db.write():
        with pytest.raises(error, match=message):
            db.add(Everything(**everything(**changes)))
    assert len(db.objects(Everything)) == 0


def test_the_first_bad_value_in_order_is_the_one_named(db):
    with db.write():
        with pytest.raises(coffer.InvalidArgumentError, match="property 'text'"):
            db.create(Everything, {"id": coffer.ObjectId(), "text": "nul\0", "count": 2**64})
        with pytest.raises(coffer.PropertyNotFoundError, match="'nope'"):
            db.create(Everything, {"id": coffer.ObjectId(), "nope": 1, "count": 2**64})
        with pytest.raises(coffer.InvalidArgumentError, match="property 'count'"):
            db.create(Everything, {"id": coffer.ObjectId(), "count": 2**64, "nope": 1})
    assert len(db.objects(Everything)) == 0


def test_assignments_convert_and_check_as_before(db):
    with db.write():
        obj = db.add(Everything(**everything()))
        obj.count, obj.amount, obj.ratio, obj.flag = 5, 3, coffer.Float32(2.25), False
        obj.maybe_count = None
        with pytest.raises(coffer.PropertyTypeError, match="property 'count': expected int, got bool"):
            obj.count = True
        with pytest.raises(coffer.InvalidArgumentError, match="property 'ratio': .* does not fit in a 32-bit float"):
            obj.ratio = -1e300
        with pytest.raises(coffer.PropertyTypeError, match="property 'flag': expected bool, got int"):
            obj.flag = 0
    read = obj.to_dict()
    assert (read["count"], read["amount"], read["ratio"], read["flag"], read["maybe_count"]) == (5, 3.0, 2.25, False, None)
    assert type(read["amount"]) is float


def test_links_collections_mixed_and_linking_objects_read_as_one_by_one(links_db):
    db = links_db
    with db.write():
        rex = db.create(Pet, {"name": "Rex"})
        ann = db.create(Owner, {"name": "Ann", "pets": [rex, {"name": "Tom"}], "best": rex, "nicknames": {"a", "b"},
                                "scores": {"x": 1.5}, "lucky": [1, None], "address": {"street": "Main"},
                                "extra": {"nested": [1, "two"]}})
        db.create(Owner, {"name": "Bob", "pets": [rex], "extra": 7})
    read = ann.to_dict()
    single = one_by_one(ann)
    assert read["best"] == rex == single["best"]
    assert list(read["pets"]) == list(single["pets"]) and [p.name for p in read["pets"]] == ["Rex", "Tom"]
    assert set(read["nicknames"]) == {"a", "b"} and dict(read["scores"]) == {"x": 1.5}
    assert list(read["lucky"]) == [1, None] and read["address"].street == "Main"
    assert read["extra"]["nested"][1] == "two"
    owners = rex.to_dict()["owners"]
    assert isinstance(owners, coffer.Results) and sorted(o.name for o in owners) == ["Ann", "Bob"]
    assert db.objects(Owner).filter("name == 'Bob'")[0].to_dict()["extra"] == 7


def test_reading_a_deleted_object_is_an_error(db):
    with db.write():
        obj = db.add(Everything(**everything()))
        db.delete(obj)
        with pytest.raises(coffer.InvalidObjectError, match="deleted"):
            obj.to_dict()


def test_lookup_by_primary_key_checks_the_key_type(db_path):
    with coffer.open(db_path, schema=[Pet, Owner, Address]) as db:
        with db.write():
            db.create(Owner, {"name": "Ann"})
        assert db.object_for_primary_key(Owner, "Ann").name == "Ann"
        assert db.object_for_primary_key(Owner, "Zed") is None
        with pytest.raises(coffer.PropertyTypeError, match="property 'name': expected str, got int"):
            db.object_for_primary_key(Owner, 1)


def test_query_counts_follow_writes(db):
    with db.write():
        for i in range(5):
            db.add(Everything(**everything(count=i)))
    big = db.objects(Everything).filter("count >= $0", 2)
    assert len(big) == 3 == len(list(big))
    with db.write():
        db.add(Everything(**everything(count=9)))
    assert len(big) == 4 and [o.count for o in big] == [2, 3, 4, 9]
