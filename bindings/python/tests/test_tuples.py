"""Objects read as tuples (Object.to_tuple, Results.tuples): the values of
to_dict() in schema order, decoded from a packed row where the generated
code handles every value, read through the object otherwise, with the same
values and errors either way."""

import pytest
from models import Everything
from models_links import Address, Owner, Pet
from models_rows import Loose, Row, rows
from test_whole_objects import everything

import coffer
from coffer import rowcode


@pytest.fixture
def db(rows_db):
    return rows_db


@pytest.mark.parametrize("encrypted", [False, True])
def test_tuples_are_the_dicts_values_in_schema_order(db_path, encrypted):
    given = rows(600)  # more than two pages
    given[5]["text"] = "x" * 5000
    with coffer.open(db_path, schema=[Row, Loose], encryption_key=bytes(range(64)) if encrypted else None) as db:
        with db.write():
            db.create_all(Row, given)
        expected = [tuple(g.values()) for g in given]
        assert db._class_info(Row).layout().decode_tuple is not None  # the generated path runs
        assert list(db.objects(Row).tuples()) == expected
        assert [obj.to_tuple() for obj in db.objects(Row)] == expected
        assert db.object_for_primary_key(Row, 5).to_tuple() == expected[5]
        first = next(iter(db.objects(Row).tuples()))
        assert type(first[1]) is bool and type(first[4]) is str and type(first[5]) is bytes
        assert list(db.objects(Row).filter("id >= 590").tuples()) == expected[590:]
        assert list(db.objects(Row).filter("id < 0").tuples()) == []


def test_nulls_are_read_through_the_object(db):
    with db.write():
        db.create_all(Loose, [{"id": 1, "note": "a"}, {"id": 2, "note": None}])
    assert list(db.objects(Loose).tuples()) == [(1, "a"), (2, None)]
    assert db.object_for_primary_key(Loose, 2).to_tuple() == (2, None)


def test_every_scalar_type_as_a_tuple(db_path):
    values = everything()
    with coffer.open(db_path, schema=[Everything]) as db:
        with db.write():
            db.add(Everything(**values))
        assert list(db.objects(Everything).tuples()) == [tuple(values.values())]
        assert db.objects(Everything)[0].to_tuple() == tuple(values.values())


def test_links_collections_and_linking_objects_as_to_dict_gives_them(db_path):
    with coffer.open(db_path, schema=[Owner, Pet, Address]) as db:
        with db.write():
            rex = db.create(Pet, {"name": "Rex"})
            ann = db.create(Owner, {"name": "Ann", "pets": [rex], "best": rex, "extra": 7})
        (row,) = list(db.objects(Owner).tuples())
        names = [p.name for p in ann.object_schema.properties]
        assert row[names.index("best")] == rex and row[names.index("extra")] == 7
        assert [p.name for p in row[names.index("pets")]] == ["Rex"]
        assert ann.to_tuple()[names.index("name")] == "Ann"


def test_an_unmanaged_object_gives_its_values_and_defaults():
    assert Row(id=3, text="t").to_tuple() == (3, False, 0.0, 0.0, "t", b"")


def test_objects_written_during_the_loop_read_current_values(db):
    with db.write():
        db.create_all(Row, rows(300))
        seen = []
        for row in db.objects(Row).tuples():
            seen.append(row[3])
            if row[0] == 0:
                db.object_for_primary_key(Row, 299).d = -1.0  # on the second page
        assert seen[299] == -1.0


def test_a_deleted_object_or_closed_database_is_an_error(db_path):
    with coffer.open(db_path, schema=[Row, Loose]) as db:
        with db.write():
            db.create_all(Row, rows(300))
            obj = db.object_for_primary_key(Row, 1)
            db.delete(obj)
            with pytest.raises(coffer.InvalidObjectError, match="deleted"):
                obj.to_tuple()
            loop = db.objects(Row).tuples()
            next(loop)
            db.delete(db.object_for_primary_key(Row, 2))  # in the loop's first page, read already
            assert next(loop)[0] == 2
            db.delete(db.object_for_primary_key(Row, 280))  # in its second page, not read yet
            with pytest.raises(coffer.InvalidObjectError, match="deleted"):
                list(loop)
        loop = db.objects(Row).tuples()
        next(loop)
    with pytest.raises(coffer.DatabaseClosedError):
        list(loop)


def test_tuple_decoder_steps_aside_for_nulls_and_damaged_text():
    decode = rowcode.tuple_decoder([("id", 2, coffer._capi.TYPE_INT), ("note", 4, coffer._capi.TYPE_STRING)])
    assert decode is not None
    tag_int, tag_text = coffer._capi.TYPE_INT, coffer._capi.TYPE_STRING
    assert decode((1, 0, tag_int, 7, tag_text, 0, 2), b"hi") == (7, "hi")
    assert decode((1, 0, tag_int, 7, coffer._capi.TYPE_NULL, 0, 0), b"") is None
    assert decode((1, 0, tag_int, 7, tag_text, 0, 1), b"\xff") is None
    single = rowcode.tuple_decoder([("id", 2, coffer._capi.TYPE_INT)])
    assert single is not None and single((1, 0, tag_int, 7), b"") == (7,)
    assert rowcode.tuple_decoder([("id", 2, coffer._capi.TYPE_INT), ("when", 4, 0)]) is None
    assert rowcode.tuple_decoder([]) is None


def test_page_decoder_gives_every_row_or_steps_aside_for_the_page():
    tag_int, tag_text = coffer._capi.TYPE_INT, coffer._capi.TYPE_STRING
    decode = rowcode.page_decoder([("id", 2, tag_int), ("note", 4, tag_text)])
    assert decode is not None
    page = [(1, 0, tag_int, 7, tag_text, 0, 2), (2, 0, tag_int, 8, tag_text, 2, 3)]
    assert decode(page, b"hiyou") == [(7, "hi"), (8, "you")]
    assert decode([], b"") == []
    assert decode([page[0], (3, 0, tag_int, 9, coffer._capi.TYPE_NULL, 0, 0)], b"hi") is None  # a null
    assert decode([page[0], (3, 0, tag_int, 9, tag_text, 2, 1)], b"hi\xff") is None  # damaged text
    assert decode([(4, coffer._capi.PACK_ROW_DELETED, 0, 0, 0, 0, 0)], b"") is None  # a deleted object
    single = rowcode.page_decoder([("id", 2, tag_int)])
    assert single is not None and single([(1, 0, tag_int, 7), (2, 0, tag_int, 8)], b"") == [(7,), (8,)]
    assert single([(1, 0, coffer._capi.TYPE_NULL, 0)], b"") is None
    assert rowcode.page_decoder([("id", 2, tag_int), ("when", 4, 0)]) is None
    assert rowcode.page_decoder([]) is None


def test_a_page_with_a_null_is_read_row_by_row(db):
    with db.write():
        db.create_all(Loose, [{"id": i, "note": None if i == 300 else f"n{i}"} for i in range(600)])
    got = list(db.objects(Loose).tuples())
    assert got == [(i, None if i == 300 else f"n{i}") for i in range(600)]


def test_payload_page_decoder_reads_payloads_without_tags():
    tag_int, tag_text, tag_bytes = coffer._capi.TYPE_INT, coffer._capi.TYPE_STRING, coffer._capi.TYPE_BINARY
    decode = rowcode.payload_page_decoder([(0, tag_int), (1, tag_text), (3, tag_bytes)])
    page = [(7, 0, 2, 2, 1), (8, 3, 3, 0, 0)]
    got = decode(iter(page), b"hixyou")
    assert got == [(7, "hi", b"x"), (8, "you", b"")]
    assert type(got[0][2]) is bytes
    assert decode(iter([]), b"") == []
    assert decode(iter([(9, 0, 1, 0, 0)]), b"\xff") is None  # damaged text

