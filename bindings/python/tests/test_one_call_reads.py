"""Reads that answer in one call into the library without making a Python
object per answer: Database.tuple_for_primary_key() (an object's values as a
tuple) and Results.count_matching() (a count of a prepared query with a new
argument). Each gives what the longer way gives (object_for_primary_key()
then to_tuple(); len() of filter()), with the same errors."""

import pytest
from models import Dog
from models_links import Address, Owner, Pet
from models_rows import Loose, Row, rows

import coffer


@pytest.fixture
def db(rows_db):
    return rows_db


@pytest.mark.parametrize("encrypted", [False, True])
def test_a_tuple_by_primary_key_is_the_objects_tuple(db_path, encrypted):
    given = rows(50)
    given[7]["text"] = "x" * 9000  # beyond the reused buffer's first size
    with coffer.open(db_path, schema=[Row, Loose], encryption_key=bytes(range(64)) if encrypted else None) as db:
        with db.write():
            db.create_all(Row, given)
        for g in given:
            row = db.tuple_for_primary_key(Row, g["id"])
            assert row == tuple(g.values()) == db.object_for_primary_key(Row, g["id"]).to_tuple()
        row = db.tuple_for_primary_key("Row", 3)
        assert [type(v) for v in row] == [int, bool, float, float, str, bytes]
        assert db.tuple_for_primary_key(Row, 50) is None
        assert db.tuple_for_primary_key(Row, -1) is None


def test_a_tuple_by_primary_key_reads_nulls_through_the_object(db):
    with db.write():
        db.create_all(Loose, [{"id": 1, "note": None}, {"id": 2, "note": "n"}])
    assert db.tuple_for_primary_key(Loose, 1) == (1, None)
    assert db.tuple_for_primary_key(Loose, 2) == (1 + 1, "n")


def test_a_tuple_by_primary_key_of_links_and_collections(db_path):
    with coffer.open(db_path, schema=[Owner, Pet, Address]) as db:
        with db.write():
            rex = db.create(Pet, {"name": "Rex"})
            ann = db.create(Owner, {"name": "Ann", "pets": [rex], "best": rex, "extra": 7})
        row = db.tuple_for_primary_key(Owner, "Ann")
        assert row == ann.to_tuple()
        names = [p.name for p in ann.object_schema.properties]
        assert row[names.index("best")] == rex and [p.name for p in row[names.index("pets")]] == ["Rex"]
        assert db.tuple_for_primary_key(Owner, "Bob") is None


def test_a_tuple_by_primary_key_sees_the_write_transaction(db):
    with db.write():
        db.create_all(Row, rows(3))
        db.object_for_primary_key(Row, 1).text = "changed"
        assert db.tuple_for_primary_key(Row, 1)[4] == "changed"
        db.delete(db.object_for_primary_key(Row, 2))
        assert db.tuple_for_primary_key(Row, 2) is None


def test_a_tuple_by_primary_key_rejects_what_a_lookup_rejects(db_path):
    with coffer.open(db_path, schema=[Row, Loose, Owner, Pet, Address]) as db:
        with pytest.raises(coffer.InvalidArgumentError, match="class 'Pet' has no primary key"):
            db.tuple_for_primary_key(Pet, 1)
        with pytest.raises(coffer.PropertyTypeError, match="'id'"):
            db.tuple_for_primary_key(Row, "one")
        with pytest.raises(coffer.NotFoundError, match="Dog is not part of the schema"):
            db.tuple_for_primary_key(Dog, 1)
        with pytest.raises(coffer.NotFoundError, match="no class named 'Nowhere'"):
            db.tuple_for_primary_key("Nowhere", 1)
    with pytest.raises(coffer.DatabaseClosedError):
        db.tuple_for_primary_key(Row, 1)


def test_a_lookup_after_a_rejected_key_reads_the_next_key(db):
    """The class's lookup request keeps an int key's type between lookups;
    a key that takes the general path (a string, an int beyond int64) leaves
    it as it was."""
    with db.write():
        db.create_all(Row, rows(5))
    for wrong in ("one", 2**64, 1.5):
        with pytest.raises((coffer.PropertyTypeError, coffer.InvalidArgumentError, OverflowError, TypeError)):
            db.tuple_for_primary_key(Row, wrong)
        assert db.tuple_for_primary_key(Row, 3) == tuple(rows(5)[3].values())
        assert db.object_for_primary_key(Row, 4).id == 4
    assert db.tuple_for_primary_key(Row, 2**63 - 1) is None


def test_count_matching_with_arguments_of_changing_types(db):
    """A prepared query counted with an argument of another type than the
    last (rebound afresh) and then of the same type again (rewritten in
    place) counts what filter() counts each time."""
    with db.write():
        db.create_all(Row, rows(100))
    objects = db.objects(Row)
    for arg in (10.0, 10, 20.5, 20, None, 30.0, "x", 40.0, 41.0):
        if arg is None or isinstance(arg, str):
            with pytest.raises(coffer.QueryError, match="'d'"):
                objects.count_matching("d > $0", arg)
            continue
        assert objects.count_matching("d > $0", arg) == len(objects.filter("d > $0", arg))
    for text in ("text == $0", "text == $0", "text BEGINSWITH $0"):
        for arg in ("é1", "é2", "nothing", "é1"):
            assert objects.count_matching(text, arg) == len(objects.filter(text, arg))


@pytest.mark.parametrize("encrypted", [False, True])
def test_count_matching_counts_as_len_of_filter(db_path, encrypted):
    with coffer.open(db_path, schema=[Row, Loose], encryption_key=bytes(range(64)) if encrypted else None) as db:
        with db.write():
            db.create_all(Row, rows(200))
        objects = db.objects(Row)
        for text in ("id < $0", "id == $0", "id >= $0"):
            for arg in (-5, 0, 17, 199, 1000, 2**63 - 1, -2**63):
                assert objects.count_matching(text, arg) == len(objects.filter(text, arg))
        assert objects.count_matching("id < $0", 10) == 10  # the prepared path
        assert objects.count_matching("d > $0", 10.0) == len([r for r in rows(200) if r["d"] > 10.0])
        assert objects.count_matching("text BEGINSWITH $0 AND id < $1", "é1", 100) == \
            len(objects.filter("text BEGINSWITH $0 AND id < $1", "é1", 100))
        with pytest.raises(coffer.QueryError, match="outside the 64-bit integer range"):
            objects.count_matching("id < $0", 2**64)  # beyond int64: the general path names it
        assert objects.filter("flag == true").count_matching("id < $0", 10) == 5  # filtered results


def test_count_matching_sees_the_write_transaction_and_new_snapshots(db):
    objects = db.objects(Row)
    with db.write():
        db.create_all(Row, rows(10))
        assert objects.count_matching("id < $0", 100) == 10
        db.create_all(Row, rows(5, start=10))
        assert objects.count_matching("id < $0", 100) == 15
    assert objects.count_matching("id < $0", 100) == 15
    with db.write():
        db.delete(db.objects(Row).filter("id < 3"))
    assert objects.count_matching("id < $0", 100) == 12


def test_count_matching_errors_name_what_was_wrong(db):
    objects = db.objects(Row)
    with pytest.raises(coffer.QueryError, match="nope"):
        objects.count_matching("nope == $0", 1)
    objects.count_matching("id == $0", 1)  # prepared with an int
    with pytest.raises(coffer.QueryError):
        objects.count_matching("id == $0", "one")
    with pytest.raises(coffer.QueryError):
        objects.count_matching("text == $0", 1)  # an int for a string property
    with pytest.raises(coffer.QueryError, match=r"\$1"):
        objects.count_matching("id == $1", 1)
    with pytest.raises(TypeError):
        objects.count_matching(b"id == $0", 1)
    db.close()
    with pytest.raises(coffer.DatabaseClosedError):
        objects.count_matching("id == $0", 1)
