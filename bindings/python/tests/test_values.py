import ctypes
import datetime
import decimal
import math
import uuid

import pytest
from models import Everything

import coffer
from coffer import _capi, values

UTC = datetime.timezone.utc


@pytest.fixture
def db(db_path):
    with coffer.open(db_path, schema=[Everything]) as database:
        yield database


def roundtrip(db, name, value):
    """Stores `value` in property `name` of a new object and reads it back
    from a fresh snapshot."""
    oid = coffer.ObjectId()
    with db.write():
        db.create(Everything, {"id": oid, name: value})
    db.refresh()
    return db.object_for_primary_key(Everything, oid)[name]


def test_defaults_of_unset_properties(db):
    with db.write():
        obj = db.create(Everything, {"id": coffer.ObjectId()})
    values_read = obj.to_dict()
    assert values_read["flag"] is False and values_read["count"] == 0
    assert values_read["ratio"] == 0.0 and values_read["amount"] == 0.0
    assert values_read["text"] == "" and values_read["blob"] == b""
    assert values_read["when"] == datetime.datetime(1970, 1, 1, tzinfo=UTC)
    assert values_read["oid"] == coffer.ObjectId(bytes(12))
    assert values_read["uid"] == uuid.UUID(int=0)
    assert str(values_read["money"]) == "0"
    assert all(values_read[name] is None for name in values_read if name.startswith("maybe_"))
    # An unmanaged object reports the same defaults before it is stored.
    assert Everything().to_dict() == {**values_read, "id": coffer.ObjectId(bytes(12))}


@pytest.mark.parametrize(
    "name, value",
    [
        ("flag", True),
        ("count", 2**63 - 1),
        ("count", -(2**63)),
        ("ratio", 1.5),
        ("amount", 1e308),
        ("amount", -0.0),
        ("amount", math.inf),
        ("text", "héllo ✓ 𝄞"),
        ("text", ""),
        ("blob", b"\x00\x01\xff"),
        ("oid", coffer.ObjectId("0123456789abcdef01234567")),
        ("uid", uuid.UUID("12345678-1234-5678-1234-567812345678")),
        ("maybe_count", 0),
        ("maybe_text", None),
    ],
)
def test_scalar_roundtrips(db, name, value):
    got = roundtrip(db, name, value)
    assert got == value and type(got) is type(value)


def test_nan_roundtrips(db):
    assert math.isnan(roundtrip(db, "amount", math.nan))


def test_float32_rounds_and_rejects_overflow(db):
    assert roundtrip(db, "ratio", 0.1) == ctypes.c_float(0.1).value
    assert roundtrip(db, "ratio", 3) == 3.0
    with db.write():
        with pytest.raises(coffer.InvalidArgumentError, match="property 'ratio': 1e\\+39 does not fit in a 32-bit float"):
            db.create(Everything, {"id": coffer.ObjectId(), "ratio": 1e39})


def test_ints_out_of_range_and_bools_are_rejected(db):
    with db.write():
        with pytest.raises(coffer.InvalidArgumentError, match="outside the 64-bit integer range"):
            db.create(Everything, {"id": coffer.ObjectId(), "count": 2**63})
        with pytest.raises(coffer.PropertyTypeError, match="property 'count': expected int, got bool"):
            db.create(Everything, {"id": coffer.ObjectId(), "count": True})
        with pytest.raises(coffer.PropertyTypeError, match="expected int, got float"):
            db.create(Everything, {"id": coffer.ObjectId(), "count": 1.0})
        with pytest.raises(coffer.PropertyTypeError, match="expected bool, got int"):
            db.create(Everything, {"id": coffer.ObjectId(), "flag": 1})
        with pytest.raises(coffer.InvalidArgumentError, match="too large"):
            db.create(Everything, {"id": coffer.ObjectId(), "amount": 10**400})
    assert len(db.objects(Everything)) == 0


def test_strings_must_be_valid_text(db):
    with db.write():
        with pytest.raises(coffer.InvalidArgumentError, match="property 'text': strings cannot contain NUL"):
            db.create(Everything, {"id": coffer.ObjectId(), "text": "a\0b"})
        with pytest.raises(coffer.InvalidArgumentError, match="cannot be encoded as UTF-8"):
            db.create(Everything, {"id": coffer.ObjectId(), "text": "\ud800"})
        with pytest.raises(coffer.PropertyTypeError, match="expected str, got bytes"):
            db.create(Everything, {"id": coffer.ObjectId(), "text": b"abc"})


def test_binary_accepts_bytes_like_values(db):
    assert roundtrip(db, "blob", bytearray(b"ab")) == b"ab"
    assert roundtrip(db, "blob", memoryview(b"cd")) == b"cd"
    assert roundtrip(db, "blob", bytes(100_000)) == bytes(100_000)
    with db.write():
        with pytest.raises(coffer.PropertyTypeError, match="expected bytes, got str"):
            db.create(Everything, {"id": coffer.ObjectId(), "blob": "text"})


def test_large_values_hit_the_c_limit(db):
    with db.write():
        with pytest.raises(coffer.LimitError, match="exceeds the limit"):
            db.create(Everything, {"id": coffer.ObjectId(), "blob": bytes(16 * 1024 * 1024 + 1)})


@pytest.mark.parametrize(
    "when",
    [
        datetime.datetime(2024, 2, 29, 12, 30, 1, 123456, tzinfo=UTC),
        datetime.datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
        datetime.datetime(1900, 1, 1, 0, 0, 0, 1, tzinfo=UTC),
        datetime.datetime(1, 1, 1, tzinfo=UTC),
        datetime.datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
    ],
)
def test_dates_roundtrip_in_utc(db, when):
    got = roundtrip(db, "when", when)
    assert got == when and got.tzinfo is UTC


def test_aware_dates_in_other_zones_come_back_as_utc(db):
    plus_two = datetime.timezone(datetime.timedelta(hours=2))
    got = roundtrip(db, "when", datetime.datetime(2020, 1, 1, 2, 0, tzinfo=plus_two))
    assert got == datetime.datetime(2020, 1, 1, 0, 0, tzinfo=UTC) and got.tzinfo is UTC


def test_naive_dates_are_rejected(db):
    with db.write():
        with pytest.raises(coffer.InvalidArgumentError, match="naive datetime"):
            db.create(Everything, {"id": coffer.ObjectId(), "when": datetime.datetime(2020, 1, 1)})
        with pytest.raises(coffer.PropertyTypeError, match="expected datetime.datetime, got date"):
            db.create(Everything, {"id": coffer.ObjectId(), "when": datetime.date(2020, 1, 1)})


def test_dates_before_1970_carry_the_sign_in_both_fields():
    out = _capi.coffer_value()
    values.to_c(_capi.TYPE_DATE, datetime.datetime(1969, 12, 31, 23, 59, 59, 500000, tzinfo=UTC), out, [], "x")
    assert (out.u.date.seconds, out.u.date.nanoseconds) == (0, -500_000_000)
    values.to_c(_capi.TYPE_DATE, datetime.datetime(1969, 12, 31, 23, 59, 58, 250000, tzinfo=UTC), out, [], "x")
    assert (out.u.date.seconds, out.u.date.nanoseconds) == (-1, -750_000_000)


def _date_value(seconds, nanoseconds):
    value = _capi.coffer_value()
    value.type = _capi.TYPE_DATE
    value.u.date.seconds = seconds
    value.u.date.nanoseconds = nanoseconds
    return value


def test_nanoseconds_floor_to_microseconds_exactly():
    epoch = datetime.datetime(1970, 1, 1, tzinfo=UTC)
    us = datetime.timedelta(microseconds=1)
    assert values.from_c(_date_value(0, 1999), "x") == epoch + us
    assert values.from_c(_date_value(0, -1), "x") == epoch - us
    assert values.from_c(_date_value(-1, -999_999_999), "x") == epoch - 2_000_000 * us
    # Large seconds stay exact (no float rounding on the way).
    assert values.from_c(_date_value(253402300799, 999_999_999), "x") == datetime.datetime(
        9999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC
    )


def test_dates_outside_datetime_range_raise():
    with pytest.raises(coffer.InvalidArgumentError, match="x: the date 253402300800s 0ns .* outside the range"):
        values.from_c(_date_value(253402300800, 0), "x")


def test_object_ids():
    a, b = coffer.ObjectId(), coffer.ObjectId()
    assert a != b and len(a.binary) == 12
    assert coffer.ObjectId(str(a)) == a == coffer.ObjectId(a.binary) == coffer.ObjectId(a)
    assert repr(a) == f"ObjectId('{a}')"
    now = datetime.datetime.now(UTC)
    assert abs((a.generation_time - now).total_seconds()) < 5
    assert sorted([b, a]) == sorted([a, b])
    with pytest.raises(coffer.InvalidArgumentError, match="'xyz' is not 24 hexadecimal digits"):
        coffer.ObjectId("xyz")
    with pytest.raises(coffer.InvalidArgumentError, match="expected 12 bytes, got 3"):
        coffer.ObjectId(b"abc")
    with pytest.raises(TypeError):
        coffer.ObjectId(12)


def test_object_id_and_uuid_properties_need_their_types(db):
    with db.write():
        with pytest.raises(coffer.PropertyTypeError, match="expected coffer.ObjectId, got str"):
            db.create(Everything, {"id": coffer.ObjectId(), "oid": "0123456789abcdef01234567"})
        with pytest.raises(coffer.PropertyTypeError, match="expected uuid.UUID, got str"):
            db.create(Everything, {"id": coffer.ObjectId(), "uid": str(uuid.uuid4())})


@pytest.mark.parametrize("text", ["1.50", "-3E-7", "0", "-0", "1E-6176", "12345678901234567890123456789012.34"])
def test_decimals_keep_their_precision(db, text):
    got = roundtrip(db, "money", decimal.Decimal(text))
    assert str(got) == str(decimal.Decimal(text))


def test_decimal_specials_and_ints(db):
    # The largest exponent is stored with the coefficient padded, as BSON does.
    assert roundtrip(db, "money", decimal.Decimal("1E+6144")) == decimal.Decimal("1E+6144")
    assert roundtrip(db, "money", decimal.Decimal("Infinity")) == decimal.Decimal("Infinity")
    assert roundtrip(db, "money", decimal.Decimal("-Infinity")) == decimal.Decimal("-Infinity")
    assert roundtrip(db, "money", decimal.Decimal("NaN")).is_nan()
    assert roundtrip(db, "money", 42) == decimal.Decimal(42)


def test_decimals_that_do_not_fit_are_rejected(db):
    with db.write():
        with pytest.raises(coffer.InvalidArgumentError, match="property 'money'"):
            db.create(Everything, {"id": coffer.ObjectId(), "money": decimal.Decimal("1" * 35)})
        with pytest.raises(coffer.InvalidArgumentError, match="signalling NaN"):
            db.create(Everything, {"id": coffer.ObjectId(), "money": decimal.Decimal("sNaN")})
        with pytest.raises(coffer.PropertyTypeError, match="expected decimal.Decimal or int, got float"):
            db.create(Everything, {"id": coffer.ObjectId(), "money": 1.5})


def test_none_for_required_and_optional_properties(db):
    with db.write():
        obj = db.create(Everything, {"id": coffer.ObjectId(), "maybe_when": datetime.datetime.now(UTC)})
        obj.maybe_when = None
        with pytest.raises(coffer.PropertyTypeError, match="property 'when': null is not allowed"):
            obj.when = None
    assert obj.maybe_when is None
