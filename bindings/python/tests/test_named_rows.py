"""create_all(..., properties=names): rows as tuples of the values of a few
named properties, as sqlite3's executemany() takes an UPDATE's parameters.
The writes are those of the same rows given as dicts; the errors name what
was wrong."""

from typing import Iterator

import pytest
from models import Dog
from models_rows import Loose, Row, rows

import coffer
from coffer.database import Database


@pytest.fixture
def db(rows_db: Database) -> Iterator[Database]:
    with rows_db.write():
        rows_db.create_all(Row, rows(2500))
    yield rows_db


def test_a_bulk_update_of_named_properties(db: Database) -> None:
    """More rows than one call takes, every scalar kind, in an order that
    is not the schema's; the properties not named keep their values."""
    ids = list(range(2499, -1, -1))
    with db.write():
        n = db.create_all(Row, ((f"t{i}", i, i * 0.25, b"\x00" * (i % 3), i % 3 == 0) for i in ids),
                          update="all", properties=("text", "id", "small", "blob", "flag"))
    assert n == 2500
    for i in (0, 1, 2, 1234, 2499):
        before = rows(i + 1)[i]
        assert db.tuple_for_primary_key(Row, i) == (i, i % 3 == 0, i * 0.25, before["d"], f"t{i}", b"\x00" * (i % 3))
    assert len(db.objects(Row)) == 2500


def test_named_rows_write_what_dicts_write(db_path: str) -> None:
    """New objects and updates alike, against the same rows as dicts in a
    second file; left-out properties of new objects get their defaults."""
    given = [(i, i / 7) for i in range(2495, 2510)]
    results = []
    for named in (True, False):
        with coffer.open(f"{db_path}-{named}", schema=[Row, Loose]) as db:
            with db.write():
                db.create_all(Row, rows(2500))
                if named:
                    db.create_all(Row, given, update="modified", properties=["id", "d"])
                else:
                    db.create_all(Row, ({"id": i, "d": d} for i, d in given), update="modified")
            results.append([db.tuple_for_primary_key(Row, i) for i in range(2490, 2510)])
    assert results[0] == results[1]
    assert results[0][-1] == (2509, False, 0.0, 2509 / 7, "", b"")


def test_named_rows_that_take_the_general_path(db_path: str) -> None:
    """A None for an optional property and an int where a float is
    declared are converted as create() converts them; a class whose
    defaults are not the library's gets them for new objects."""
    with coffer.open(db_path, schema=[Row, Loose, Dog]) as db:
        with db.write():
            db.create_all(Loose, [(1, None), (2, "two")], properties=("id", "note"))
            db.create_all(Row, [(7, 3)], properties=("id", "d"))
            db.create_all(Dog, [("Rex", 5)], properties=("name", "id"))
        assert db.tuple_for_primary_key(Loose, 1) == (1, None)
        assert db.tuple_for_primary_key(Loose, 2) == (2, "two")
        assert db.tuple_for_primary_key(Row, 7)[3] == 3.0
        assert db.object_for_primary_key(Dog, 5).to_dict() == Dog(id=5, name="Rex").to_dict()
        assert Dog(id=5, name="Rex").age == 1  # a default that is not the library's


def test_named_rows_errors(db: Database) -> None:
    with db.write():
        with pytest.raises(coffer.PropertyNotFoundError, match="class 'Row' has no property named 'nope'"):
            db.create_all(Row, [(1, 2)], update="all", properties=("id", "nope"))
        with pytest.raises(coffer.InvalidArgumentError, match="property 'id' is named twice"):
            db.create_all(Row, [(1, 2)], update="all", properties=("id", "id"))
        with pytest.raises(coffer.InvalidArgumentError, match="names no property"):
            db.create_all(Row, [()], properties=())
        with pytest.raises(coffer.InvalidArgumentError, match="object 1: 2 properties named, got 3 values"):
            db.create_all(Row, [(1, 2.0), (2, 3.0, 4)], update="all", properties=("id", "d"))
        with pytest.raises(TypeError, match="object 0: .* must be a tuple or list, got dict"):
            db.create_all(Row, [{"id": 1, "d": 2.0}], update="all", properties=("id", "d"))
        with pytest.raises(coffer.PropertyTypeError, match="'d'"):
            db.create_all(Row, [(1, "not a number")], update="all", properties=("id", "d"))
    # Nothing of the failed block was committed.
    assert db.tuple_for_primary_key(Row, 1) == tuple(rows(2)[1].values())


def test_named_rows_need_a_write_transaction(db: Database) -> None:
    with pytest.raises(coffer.NotInWriteError):
        db.create_all(Row, [(1, 2.0)], update="all", properties=("id", "d"))
