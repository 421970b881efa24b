"""Many objects per call into the library: create_all() and add_all() write
in chunks, Results.set_value() updates a property over a result set,
iteration reads objects a page at a time and object_for_primary_key() packs
the object it finds. The values are those the one-object paths give; rows
read from a page are not used once the database has moved on; failures
name the object and leave the ones before it written."""

import datetime
import threading
from typing import Optional

import pytest
from models import Everything
from test_whole_objects import everything, one_by_one

import coffer
from coffer import _capi, pages


class Dog(coffer.Object):
    id: int = coffer.primary_key()
    name: str = coffer.indexed("")
    age: int = 0
    nick: Optional[str] = None


class Cat(coffer.Object):
    id: int = coffer.primary_key()
    name: str = "unnamed"   # not what the library gives a left-out string
    lives: int = 9


@pytest.fixture
def db(db_path):
    with coffer.open(db_path, schema=[Dog, Cat, Everything]) as database:
        yield database


def dogs(n, start=0):
    return [{"id": i, "name": f"dog {i}", "age": i % 20} for i in range(start, start + n)]


def test_create_all_many_chunks_dicts_and_rows(db):
    with db.write():
        assert db.create_all(Dog, dogs(2500)) == 2500
        assert db.create_all("Dog", [(5000, "positional", 3), (5001, "row", 4, "nick")]) == 2
        assert db.create_all(Dog, iter(())) == 0
    assert len(db.objects(Dog)) == 2502
    rex = db.object_for_primary_key(Dog, 1234)
    assert (rex.name, rex.age, rex.nick) == ("dog 1234", 1234 % 20, None)
    assert db.object_for_primary_key(Dog, 5001).to_dict() == {"id": 5001, "name": "row", "age": 4, "nick": "nick"}
    assert len(db.objects(Dog).filter("name == $0", "dog 77")) == 1   # indexed


def test_create_all_runs_of_different_properties(db):
    rows = [{"id": 1, "name": "a"}, {"id": 2, "name": "b"}, {"name": "c", "id": 3}, {"id": 4, "age": 5},
            {"id": 5, "nick": None}]
    with db.write():
        assert db.create_all(Dog, rows) == 5
    assert [d.to_dict() for d in db.objects(Dog)] == [
        {"id": 1, "name": "a", "age": 0, "nick": None}, {"id": 2, "name": "b", "age": 0, "nick": None},
        {"id": 3, "name": "c", "age": 0, "nick": None}, {"id": 4, "name": "", "age": 5, "nick": None},
        {"id": 5, "name": "", "age": 0, "nick": None}]


def test_create_all_every_type_as_create_does(db):
    values = [everything(), everything(maybe_text=None, text="plain"), everything()]
    with db.write():
        db.create_all(Everything, values)
    stored = list(db.objects(Everything))
    assert len(stored) == 3
    for obj, given in zip(stored, values):
        assert obj.to_dict() == given
        assert one_by_one(obj) == given


def test_bulk_update_by_primary_key_keeps_what_is_not_given(db):
    with db.write():
        db.create_all(Cat, [{"id": 1, "name": "Tom", "lives": 3}])
        # an existing cat keeps its name; a new one gets the declared default
        db.create_all(Cat, [{"id": 1, "lives": 2}, {"id": 2, "lives": 1}], update="all")
    assert [c.to_dict() for c in db.objects(Cat)] == [{"id": 1, "name": "Tom", "lives": 2},
                                                      {"id": 2, "name": "unnamed", "lives": 1}]
    with db.write():
        db.create_all(Dog, dogs(10))
        db.create_all(Dog, ({"id": i, "age": 100 + i} for i in range(10)), update="modified")
    assert [(d.name, d.age) for d in db.objects(Dog)][:2] == [("dog 0", 100), ("dog 1", 101)]


def test_create_all_stops_at_the_failing_object(db):
    rows = dogs(5) + [{"id": 2, "name": "again"}] + dogs(3, start=10)
    with pytest.raises(coffer.PrimaryKeyExistsError) as info:
        with db.write():
            db.create_all(Dog, rows)
    assert "create_all(): object 5: class 'Dog' already has an object with primary key 2" in str(info.value)
    assert len(db.objects(Dog)) == 0   # the block rolled back
    with db.write():
        with pytest.raises(coffer.PropertyTypeError, match="'age'"):
            db.create_all(Dog, dogs(2) + [{"id": 9, "age": "old"}])
        assert len(db.objects(Dog)) == 2   # the ones before it are written
    with pytest.raises(coffer.NotInWriteError):
        db.create_all(Dog, dogs(1, start=50))


def test_add_all_binds_objects(db):
    kept = Dog(id=10_000, name="kept")
    with db.write():
        db.add(kept)
        batch = [Dog(id=i, name=f"d{i}") for i in range(300)] + [Cat(id=1), kept]
        out = db.add_all(batch)
    assert out == batch
    assert all(o.is_managed for o in batch)
    assert batch[299].name == "d299" and batch[300].name == "unnamed" and batch[300].lives == 9
    with db.write():
        batch[5].age = 55
    assert db.object_for_primary_key(Dog, 5).age == 55
    with pytest.raises(TypeError, match="add_all"):
        with db.write():
            db.add_all([Dog(id=20_000), "not an object"])


def test_add_all_failure_binds_only_what_was_written(db):
    batch = [Dog(id=1), Dog(id=2), Dog(id=1), Dog(id=3)]
    with db.write():
        with pytest.raises(coffer.PrimaryKeyExistsError):
            db.add_all(batch)
        assert [o.is_managed for o in batch] == [True, True, False, False]


def test_set_value_over_results(db):
    with db.write():
        db.create_all(Dog, dogs(100))
    young = db.objects(Dog).filter("age < $0", 5)
    with db.write():
        young.set_value("nick", "pup")
        young.set_value("age", 0)
    assert len(db.objects(Dog).filter("nick == 'pup'")) == 25
    assert db.objects(Dog).filter("age == 0").sum("age") == 0
    with db.write():
        with pytest.raises(coffer.PropertyTypeError):
            db.objects(Dog).set_value("age", "old")
        with pytest.raises(coffer.ImmutablePropertyError, match="primary key"):
            db.objects(Dog).set_value("id", 1)
        with pytest.raises(coffer.PropertyNotFoundError):
            db.objects(Dog).set_value("colour", 1)
    assert len(db.objects(Dog).filter("age == 0")) == 25
    with pytest.raises(coffer.NotInWriteError):
        young.set_value("age", 1)


def test_iteration_reads_pages(db):
    n = pages.ROWS_PER_PAGE * 2 + 7
    with db.write():
        db.create_all(Dog, dogs(n))
    seen = [(d.id, d.name, d.age, d.nick) for d in db.objects(Dog)]
    assert seen == [(i, f"dog {i}", i % 20, None) for i in range(n)]
    backwards = db.objects(Dog).sorted("id", ascending=False)
    assert [d.id for d in backwards] == list(range(n - 1, -1, -1))
    assert [d.to_dict()["name"] for d in db.objects(Dog).filter("id >= $0", n - 3)] == [
        f"dog {i}" for i in range(n - 3, n)]


def test_rows_are_not_used_after_the_database_moves_on(db):
    with db.write():
        db.create_all(Dog, dogs(600))
    objs = list(db.objects(Dog))
    with db.write():
        db.object_for_primary_key(Dog, 599).name = "renamed"
        db.delete(db.object_for_primary_key(Dog, 598))
    assert objs[599].name == "renamed"
    with pytest.raises(coffer.InvalidObjectError):
        objs[598].to_dict()
    # writes inside the loop are seen by the objects that come after them
    with db.write():
        names = []
        for dog in db.objects(Dog):
            if dog.id == 0:
                db.object_for_primary_key(Dog, 400).name = "changed in the loop"
            names.append(dog.name)
    assert names[400] == "changed in the loop"


def test_rows_of_another_thread_are_not_used(db):
    with db.write():
        db.create_all(Dog, dogs(3))
    dog = next(iter(db.objects(Dog)))
    outcome = []

    def read():
        try:
            outcome.append(dog.name)
        except coffer.MisuseError:
            outcome.append("misuse")

    thread = threading.Thread(target=read)
    thread.start()
    thread.join()
    assert outcome == ["misuse"]


def test_types_decoded_elsewhere_come_from_the_library(db):
    when = datetime.datetime(2020, 1, 2, tzinfo=datetime.timezone.utc)
    with db.write():
        db.create_all(Everything, [everything(when=when, maybe_when=when)])
    obj = next(iter(db.objects(Everything)))
    assert obj.when == when and obj.maybe_when == when
    assert obj.to_dict() == one_by_one(obj)


def test_closed_database(db_path):
    database = coffer.open(db_path, schema=[Dog])
    with database.write():
        database.create_all(Dog, dogs(3))
    dog = database.object_for_primary_key(Dog, 1)
    database.close()
    with pytest.raises(coffer.DatabaseClosedError):
        dog.name


def test_packed_header(db):
    with db.write():
        db.create_all(Dog, dogs(3))
    info = db._class_info(Dog)
    with db.objects(Dog)._c_results(db._txn()) as handle:
        buf, rows = info.layout().pack_page(handle, 1, 2)
    magic, version, flags, count, values, row_size, size = pages.header(buf)
    assert (magic, version, flags, count, values) == (_capi.PACK_MAGIC, _capi.PACK_VERSION, 0, 2, 4)
    assert row_size == 16 + 24 * 4 and size <= len(buf)
    assert [r[0] for r in rows] == [db.object_for_primary_key(Dog, i)._key for i in (1, 2)]


class Tag(coffer.Object):
    code: str = coffer.primary_key()
    note: str = ""
    data: bytes = b""


def test_object_for_primary_key_in_one_call(db_path):
    with coffer.open(db_path, schema=[Dog, Tag, Everything]) as database:
        big = "x" * 10_000  # more than the reused buffer holds at first: it grows to the size named
        with database.write():
            database.create_all(Dog, dogs(5))
            database.create_all(Tag, [{"code": "a", "note": "é", "data": b"\0\1"}, {"code": "b", "note": big}])
            database.create_all(Everything, [everything()])
        assert database.object_for_primary_key(Dog, 3).to_dict() == {"id": 3, "name": "dog 3", "age": 3, "nick": None}
        assert database.object_for_primary_key(Dog, 99) is None
        assert database.object_for_primary_key(Dog, -2**63) is None
        assert database.object_for_primary_key(Tag, "a").to_dict() == {"code": "a", "note": "é", "data": b"\0\1"}
        assert database.object_for_primary_key(Tag, "b").note == big
        assert database.object_for_primary_key(Tag, "c") is None
        # every type, through the one call, equals what reading one value at a time gives
        stored = next(iter(database.objects(Everything)))
        found = database.object_for_primary_key(Everything, stored.id)
        assert found.to_dict() == one_by_one(found)
        # a key of the wrong type, or out of range: the error names the property
        with pytest.raises(coffer.PropertyTypeError, match="class 'Tag', property 'code': expected str, got int"):
            database.object_for_primary_key(Tag, 1)
        with pytest.raises(coffer.PropertyTypeError, match="property 'id'"):
            database.object_for_primary_key(Dog, "3")
        with pytest.raises(coffer.CofferError, match="property 'id'"):
            database.object_for_primary_key(Dog, 2**63)


def test_object_for_primary_key_sees_its_snapshot_and_writes(db):
    with db.write():
        db.create_all(Dog, dogs(3))
    before = db.object_for_primary_key(Dog, 1)
    assert before.name == "dog 1"
    with db.write():
        db.object_for_primary_key(Dog, 1).name = "renamed"
        assert db.object_for_primary_key(Dog, 1).name == "renamed"   # the write's own state
        db.create_all(Dog, [{"id": 10, "name": "new"}])
        assert db.object_for_primary_key(Dog, 10).name == "new"
    assert db.object_for_primary_key(Dog, 1).to_dict()["name"] == "renamed"
    assert before.name == "renamed"   # a row read before the write is not used after it


def test_len_of_one_query_counts_in_one_call(db):
    with db.write():
        db.create_all(Dog, dogs(300))
    dogs_ = db.objects(Dog)
    for age in (0, 7, 19, 20):
        expected = sum(1 for i in range(300) if i % 20 == age)
        assert len(dogs_.filter("age == $0", age)) == expected          # scanned
        assert len(dogs_.filter("name == $0", f"dog {age}")) == (1 if age < 300 else 0)   # indexed
    assert len(dogs_.filter("age > 5 SORT(id DESC) LIMIT(4)")) == 4
    assert len(dogs_.filter("age == 3").filter("id < 100")) == 5      # two queries: the results path
    with pytest.raises(coffer.QueryError):
        dogs_.filter("age == $0", "three")
    with db.write():
        db.create_all(Dog, [{"id": 1000, "name": "dog 7", "age": 7}])
        assert len(dogs_.filter("name == $0", "dog 7")) == 2            # the write's own state
    assert len(dogs_.filter("name == $0", "dog 7")) == 2


def test_prepared_query_with_arguments_of_its_types_binds_when_needed(db):
    with db.write():
        db.create_all(Dog, dogs(300))
    dogs_ = db.objects(Dog)
    assert len(dogs_.filter("age == $0 AND name BEGINSWITH $1", 3, "dog")) == 15   # compiled, then prepared
    # same argument types: counted with the prepared query in one call, no query handle made
    again = dogs_.filter("age == $0 AND name BEGINSWITH $1", 7, "dog 2")
    query = again._queries[0]
    assert query._owned is None
    assert len(again) == sum(1 for i in range(200, 300) if i % 20 == 7) + 1   # dog 27 and dog 2xx
    assert query._owned is None
    # what needs the handle binds it then, with this query's arguments
    assert [d.id for d in again] == [27, 207, 227, 247, 267, 287]
    assert query._owned is not None
    assert "$0" in query.description and "$1" in query.description
    # other argument types bind at once, so a mistyped one fails in filter()
    with pytest.raises(coffer.QueryError):
        dogs_.filter("age == $0 AND name BEGINSWITH $1", "seven", "dog")
    assert dogs_.filter("age == $0 AND name BEGINSWITH $1", 7.0, "dog")._queries[0]._owned is not None
    # an own timeout binds at once too, and keeps the prepared query's as it was
    timed = dogs_.filter("age == $0 AND name BEGINSWITH $1", 1, "dog", timeout=30)
    assert timed._queries[0]._owned is not None and len(timed) == 15
    assert len(dogs_.filter("age == $0 AND name BEGINSWITH $1", 1, "dog")) == 15
    # a count follows the transaction: a write's own objects, then the new snapshot
    with db.write():
        db.create_all(Dog, [{"id": 1000, "name": "dog 7", "age": 7}])
        assert len(dogs_.filter("age == $0 AND name BEGINSWITH $1", 7, "dog 7")) == 2
    assert len(dogs_.filter("age == $0 AND name BEGINSWITH $1", 7, "dog 7")) == 2
    db.close()
    with pytest.raises(coffer.DatabaseClosedError):
        len(again)


def test_prepared_query_with_one_int_argument(db):
    with db.write():
        db.create_all(Dog, dogs(300))
    dogs_ = db.objects(Dog)
    assert len(dogs_.filter("age == $0", 3)) == 15                       # compiled, then prepared
    again = dogs_.filter("age == $0", 7)
    assert again._queries[0]._owned is None and again._queries[0].args == (7,)
    assert len(again) == 15 and [d.id for d in again][:2] == [7, 27]      # iteration binds it then
    assert len(dogs_.filter("age == $0", 2**63 - 1)) == 0
    with pytest.raises(coffer.CofferError, match=r"\$0"):
        dogs_.filter("age == $0", 2**63)                                   # beyond int64: the general path names it
    assert len(dogs_.filter("age == $0", 5, timeout=30)) == 15           # an own timeout: bound at once
    assert len(dogs_.filter("age == $0", 5)) == 15
    with db.write():
        db.create_all(Dog, [{"id": 1000, "name": "dog x", "age": 5}])
        assert len(dogs_.filter("age == $0", 5)) == 16                   # the write's own state
    errors = []

    def elsewhere():
        try:
            dogs_.filter("age == $0", 5)
        except coffer.CofferError as exc:
            errors.append(exc)
        try:
            len(again)
        except coffer.CofferError as exc:
            errors.append(exc)
    thread = threading.Thread(target=elsewhere)
    thread.start()
    thread.join()
    assert [type(e) for e in errors] == [coffer.MisuseError, coffer.MisuseError]
    db.close()
    with pytest.raises(coffer.DatabaseClosedError):
        dogs_.filter("age == $0", 5)
    with pytest.raises(coffer.DatabaseClosedError):
        len(again)
