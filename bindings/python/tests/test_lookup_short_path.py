"""Database.tuple_for_primary_key() once a class has been read that way: an
int key is written into the class's lookup request, the one C call runs, and
one generated expression decodes the tuple from the reused buffer. Each test
reads a class once first (the general path, which sets up the short one),
then checks that the short path gives what the general path gives: every
scalar type, nulls, a miss, a row larger than the buffer, the transaction
the read is pinned to, and the errors of keys it does not take."""

from typing import Any, Iterator

import pytest
from models_rows import Loose, Row, rows

import coffer
from coffer.database import Database


@pytest.fixture
def db(rows_db: Database) -> Iterator[Database]:
    with rows_db.write():
        rows_db.create_all(Row, rows(20))
        rows_db.create_all(Loose, [{"id": 1, "note": None}, {"id": 2, "note": "n"}])
    # The first read of each class takes the general path and sets up the short one.
    assert rows_db.tuple_for_primary_key(Row, 0) == tuple(rows(1)[0].values())
    assert rows_db.tuple_for_primary_key(Loose, 2) == (2, "n")
    yield rows_db


def no_general_path(db: Database, monkeypatch: pytest.MonkeyPatch) -> None:
    """Makes the general path fail, so a read that reaches it shows."""
    def general(*args: Any) -> None:
        raise AssertionError("the general path was taken")
    monkeypatch.setattr(db, "_packed_by_primary_key", general)


def test_every_scalar_type_by_the_short_path(db: Database, monkeypatch: pytest.MonkeyPatch) -> None:
    expected = [tuple(r.values()) for r in rows(20)]
    no_general_path(db, monkeypatch)
    for want in reversed(expected):
        got = db.tuple_for_primary_key(Row, want[0])
        assert got == want
        assert [type(v) for v in got] == [int, bool, float, float, str, bytes]
    assert db.tuple_for_primary_key(Row, 20) is None  # a miss answers without the general path
    assert db.tuple_for_primary_key(Row, -(2**63)) is None
    assert db.tuple_for_primary_key(Row, 2**63 - 1) is None


def test_the_short_path_answers_what_the_object_answers(db: Database) -> None:
    for key in range(20):
        assert db.tuple_for_primary_key(Row, key) == db.object_for_primary_key(Row, key).to_tuple()
    # The class by its name has a short path of its own, with the same answers.
    assert db.tuple_for_primary_key("Row", 5) == db.tuple_for_primary_key("Row", 5) == tuple(rows(6)[5].values())


def test_a_null_goes_through_the_object(db: Database) -> None:
    assert db.tuple_for_primary_key(Loose, 1) == (1, None)
    assert db.tuple_for_primary_key(Loose, 2) == (2, "n")
    assert db.tuple_for_primary_key(Loose, 1) == (1, None)


def test_a_row_larger_than_the_buffer(db: Database) -> None:
    """A row that does not fit the reused buffer is read by the general
    path, which grows the buffer; the short path then reads from the new
    buffer, for rows large and small."""
    big = "ü" * 6000
    with db.write():
        db.object_for_primary_key(Row, 3).text = big
    layout = db._class_info(Row).layout()
    before = layout.lookup_tuple
    assert db.tuple_for_primary_key(Row, 3)[4] == big
    assert layout.lookup_tuple is not before  # compiled again for the grown buffer
    assert layout.request.capacity >= 12000
    assert db.tuple_for_primary_key(Row, 4) == tuple(rows(5)[4].values())
    assert db.tuple_for_primary_key(Row, 3)[4] == big


def test_reads_stay_pinned_to_the_read_transaction(db: Database, db_path: str) -> None:
    """A commit made through another handle is not seen until refresh(); the
    short path reads in the transaction the handle holds."""
    assert db.tuple_for_primary_key(Row, 6)[4] == rows(7)[6]["text"]
    with coffer.open(db_path, schema=[Row, Loose]) as other:
        with other.write():
            other.object_for_primary_key(Row, 6).text = "new"
            other.delete(other.object_for_primary_key(Row, 7))
            other.create(Row, {"id": 99, "text": "added"})
    assert db.tuple_for_primary_key(Row, 6)[4] == rows(7)[6]["text"]
    assert db.tuple_for_primary_key(Row, 7) == tuple(rows(8)[7].values())
    assert db.tuple_for_primary_key(Row, 99) is None
    db.refresh()
    assert db.tuple_for_primary_key(Row, 6)[4] == "new"
    assert db.tuple_for_primary_key(Row, 7) is None
    assert db.tuple_for_primary_key(Row, 99)[4] == "added"


def test_the_short_path_sees_the_write_transaction(db: Database) -> None:
    with db.write():
        db.object_for_primary_key(Row, 1).text = "written"
        assert db.tuple_for_primary_key(Row, 1)[4] == "written"
        db.delete(db.object_for_primary_key(Row, 2))
        assert db.tuple_for_primary_key(Row, 2) is None
        db.create(Row, {"id": 50, "blob": b"\x00\x01"})
        assert db.tuple_for_primary_key(Row, 50) == (50, False, 0.0, 0.0, "", b"\x00\x01")
    assert db.tuple_for_primary_key(Row, 1)[4] == "written"


def test_keys_the_short_path_does_not_take(db: Database) -> None:
    """Keys that are not ints of the int64 range, or of the wrong type, get
    the general path's errors; the next int key still reads."""
    for wrong in (2**63, -(2**63) - 1, True, "3", 3.0):
        if isinstance(wrong, int) and not isinstance(wrong, bool):
            with pytest.raises((coffer.InvalidArgumentError, OverflowError)):
                db.tuple_for_primary_key(Row, wrong)
        else:
            with pytest.raises(coffer.PropertyTypeError, match="'id'"):
                db.tuple_for_primary_key(Row, wrong)
        assert db.tuple_for_primary_key(Row, 3) == tuple(rows(4)[3].values())


def test_the_short_path_after_close_and_on_another_thread(db: Database) -> None:
    import threading

    errors = []

    def read() -> None:
        try:
            db.tuple_for_primary_key(Row, 1)
        except coffer.CofferError as exc:
            errors.append(exc)

    thread = threading.Thread(target=read)
    thread.start()
    thread.join()
    assert len(errors) == 1 and "thread" in str(errors[0])
    db.close()
    with pytest.raises(coffer.DatabaseClosedError):
        db.tuple_for_primary_key(Row, 1)
