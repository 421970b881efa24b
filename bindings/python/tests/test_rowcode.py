"""The generated packers and decoders of whole objects (coffer.rowcode):
they write and read what the general paths write and read, step aside for
every value they do not handle, and the general path then gives its own
result or error."""

from typing import Optional

import pytest

import coffer
from coffer import rowcode


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


@pytest.fixture
def db(db_path):
    with coffer.open(db_path, schema=[Row, Loose]) as database:
        yield database


def rows(n, start=0):
    return [{"id": i, "flag": i % 2 == 0, "small": 0.5 * i, "d": i / 3, "text": f"é{i}" * (i % 7),
             "blob": bytes(range(i % 50))} for i in range(start, start + n)]


def test_packed_objects_read_back_equal(db):
    given = rows(1500)  # more than one chunk, and text beyond the first guess
    given[3]["text"] = "x" * 5000
    with db.write():
        assert db.create_all(Row, given) == 1500
    assert db._class_info(Row).row_packers[tuple(given[0])] is not None  # the generated path ran
    assert db._class_info(Row).layout().decode is not None
    assert [obj.to_dict() for obj in db.objects(Row)] == given
    assert db.object_for_primary_key(Row, 3).text == "x" * 5000


def test_one_object_and_upsert_take_the_same_path(db):
    with db.write():
        db.add(Row(**rows(1)[0]))
        db.create_all(Row, [{"id": 0, "d": 2.5}], update="all")
    assert db.object_for_primary_key(Row, 0).to_dict() == {**rows(1)[0], "d": 2.5}


@pytest.mark.parametrize("field, value", [
    ("d", 1),                 # an int where a float is declared: converted
    ("blob", bytearray(b"ab")),
    ("blob", memoryview(b"cd")),
])
def test_values_the_general_path_converts(db, field, value):
    given = rows(3)
    given[1][field] = value
    with db.write():
        db.create_all(Row, given)
    assert getattr(db.object_for_primary_key(Row, 1), field) == value


@pytest.mark.parametrize("field, value, error", [
    ("text", "a\0b", coffer.InvalidArgumentError),
    ("text", "\ud800", coffer.InvalidArgumentError),
    ("small", 1e300, coffer.InvalidArgumentError),
    ("flag", 1, TypeError),
])
def test_values_the_general_path_rejects(db, field, value, error):
    given = rows(3)
    given[2][field] = value
    with pytest.raises(error) as caught:
        with db.write():
            db.create_all(Row, given)
    assert field in str(caught.value)
    assert len(db.objects(Row)) == 0


def test_nulls_are_written_and_read_by_the_general_path(db):
    with db.write():
        db.create_all(Loose, [{"id": 1, "note": "a"}, {"id": 2, "note": None}])
    assert [obj.to_dict() for obj in db.objects(Loose)] == [{"id": 1, "note": "a"}, {"id": 2, "note": None}]


def test_decoder_steps_aside_for_nulls_and_damaged_text():
    decode = rowcode.decoder([("id", 2, coffer._capi.TYPE_INT), ("note", 4, coffer._capi.TYPE_STRING)])
    assert decode is not None
    tag_int, tag_text = coffer._capi.TYPE_INT, coffer._capi.TYPE_STRING
    assert decode((1, 0, tag_int, 7, tag_text, 0, 2), b"hi") == {"id": 7, "note": "hi"}
    assert decode((1, 0, tag_int, 7, coffer._capi.TYPE_NULL, 0, 0), b"") is None
    assert decode((1, 0, tag_int, 7, tag_text, 0, 1), b"\xff") is None


def test_no_decoder_for_properties_read_through_the_library():
    assert rowcode.decoder([("id", 2, coffer._capi.TYPE_INT), ("when", 4, 0)]) is None
    assert rowcode.decoder([]) is None


def test_positional_rows_are_packed_without_dicts(db):
    given = rows(2500)  # more than two chunks
    with db.write():
        assert db.create_all(Row, [tuple(r.values()) for r in given[:2000]] + [list(r.values()) for r in given[2000:]]) == 2500
    assert db._class_info(Row).positional_packers[tuple(db._class_info(Row).names)] is not None
    assert [obj.to_dict() for obj in db.objects(Row)] == given


def test_positional_upsert_replaces_every_value(db):
    with db.write():
        db.create_all(Row, [tuple(r.values()) for r in rows(3)])
        changed = [(1, True, 8.0, -1.5, "new", b"\1")]
        assert db.create_all(Row, changed, update="all") == 1
        with pytest.raises(coffer.CofferError, match="object 0: .*primary key 2"):
            db.create_all(Row, [(2, True, 0.0, 0.0, "", b"")])
    assert db.object_for_primary_key(Row, 1).to_tuple() == changed[0]
    assert len(db.objects(Row)) == 3


@pytest.mark.parametrize("chunk", [
    [(1, False, 0.0, 0.5, "a", b""), (2, True, 0.0, 0.5, "b")],          # a short row: the rest get defaults
    [(1, False, 0.0, 0.5, "a", b""), {"id": 2, "text": "b"}],           # a dict among the tuples
    [(1, False, 0.0, 1, "a", b""), (2, True, 0.0, 0.5, "b", bytearray(b"x"))],  # values converted
])
def test_positional_rows_the_packer_leaves_to_the_general_path(db, chunk):
    with db.write():
        assert db.create_all(Row, chunk) == 2
    read = [obj.to_dict() for obj in db.objects(Row)]
    assert [r["id"] for r in read] == [1, 2] and read[0]["text"] == "a" and read[1]["text"] == "b"
    assert read[0]["d"] == chunk[0][3]


@pytest.mark.parametrize("bad, error, named", [
    ((1, False, 0.0, 0.5, "a\0b", b""), coffer.InvalidArgumentError, "text"),
    ((1, False, 1e300, 0.5, "a", b""), coffer.InvalidArgumentError, "small"),
    ((1, 1, 0.0, 0.5, "a", b""), TypeError, "flag"),
    ((1, False, 0.0, 0.5, "a", b"", "extra"), coffer.InvalidArgumentError, "6 properties, got 7 values"),
])
def test_positional_rows_with_bad_values_fail_as_before(db, bad, error, named):
    with pytest.raises(error) as caught:
        with db.write():
            db.create_all(Row, [(0, False, 0.0, 0.0, "", b""), bad])
    assert named in str(caught.value)
    assert len(db.objects(Row)) == 0
