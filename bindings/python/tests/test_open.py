import os
import shutil

import pytest
from conftest import files_in
from models import PERSON, Dog

import coffer


def test_open_path_creates_the_file(db_path, tmp_path):
    with coffer.open(db_path, schema=[Dog]) as db:
        assert db.path == db_path
        assert not db.is_read_only and not db.is_encrypted
        assert db.schema_version == 0
    # The file, its lock file, and the note file commits wake observers through.
    assert files_in(tmp_path) == ["test.coffer", "test.coffer-lock", "test.coffer-note"]


def test_path_may_be_a_path_object(tmp_path):
    with coffer.open(tmp_path / "p.coffer", schema=[Dog]) as db:
        assert db.path == str(tmp_path / "p.coffer")


def test_default_path(in_cwd):
    assert coffer.default_path() == "default.coffer"
    with coffer.open(schema=[Dog]) as db:
        assert db.path == "default.coffer"
    assert os.path.exists(in_cwd / "default.coffer")
    coffer.set_default_path(str(in_cwd / "elsewhere.coffer"))
    try:
        assert coffer.default_path() == str(in_cwd / "elsewhere.coffer")
        with coffer.open(schema=[Dog]) as db:
            assert db.path == str(in_cwd / "elsewhere.coffer")
    finally:
        coffer.set_default_path(None)
    assert coffer.default_path() == "default.coffer"


def test_data_survives_reopening(db_path):
    with coffer.open(db_path, schema=[Dog]) as db:
        with db.write():
            db.add(Dog(id=1, name="Rex"))
    with coffer.open(db_path, schema=[Dog]) as db:
        assert db.object_for_primary_key(Dog, 1).name == "Rex"


def test_open_without_schema_uses_the_stored_one(db_path):
    with coffer.open(db_path, schema=[Dog, PERSON]) as db:
        with db.write():
            db.create("Person", {"name": "Ann", "age": 3})
    with coffer.open(db_path) as db:
        assert [s.name for s in db.schema] == ["Dog", "Person"]
        ann = db.objects("Person")[0]
        assert type(ann) is coffer.Object and ann.age == 3
        with pytest.raises(coffer.NotFoundError):
            db.objects(Dog)  # models need the schema they belong to


def test_in_memory_databases_share_by_identifier_and_leave_no_file(memory_id, in_cwd):
    first = coffer.open(in_memory_identifier=memory_id, schema=[Dog])
    assert first.path is None
    with first.write():
        first.add(Dog(id=1, name="Rex"))
    with coffer.open(in_memory_identifier=memory_id, schema=[Dog]) as second:
        assert second.object_for_primary_key(Dog, 1).name == "Rex"
    first.close()
    # The last handle closed: the data is gone.
    with coffer.open(in_memory_identifier=memory_id, schema=[Dog]) as third:
        assert len(third.objects(Dog)) == 0
    assert files_in(in_cwd) == []


def test_path_and_in_memory_identifier_exclude_each_other(db_path, memory_id):
    with pytest.raises(coffer.InvalidArgumentError, match="either path or in_memory_identifier"):
        coffer.open(db_path, in_memory_identifier=memory_id, schema=[Dog])


def test_empty_in_memory_identifier_is_an_error():
    with pytest.raises(coffer.InvalidArgumentError):
        coffer.open(in_memory_identifier="", schema=[Dog])


def test_read_only(db_path):
    with pytest.raises(coffer.NotFoundError, match="test.coffer"):
        coffer.open(db_path, read_only=True, schema=[Dog])
    with coffer.open(db_path, schema=[Dog]) as db:
        with db.write():
            db.add(Dog(id=1, name="Rex"))
    with coffer.open(db_path, read_only=True, schema=[Dog]) as db:
        assert db.is_read_only
        assert db.objects(Dog)[0].name == "Rex"
        with pytest.raises(coffer.ReadOnlyError):
            with db.write():
                pass
    # A schema that would have to be written cannot be applied read-only.
    with pytest.raises(coffer.ReadOnlyError, match="read-only"):
        coffer.open(db_path, read_only=True, schema=[Dog, PERSON], schema_version=1)


def test_read_only_and_delete_if_migration_needed_exclude_each_other(db_path):
    with pytest.raises(coffer.InvalidArgumentError, match="delete_if_migration_needed cannot be used with read_only"):
        coffer.open(db_path, read_only=True, delete_if_migration_needed=True, schema=[Dog])


def test_seed_file_is_copied_only_when_the_path_is_new(tmp_path):
    seed = str(tmp_path / "seed.coffer")
    with coffer.open(seed, schema=[Dog]) as db:
        with db.write():
            db.add(Dog(id=1, name="Seeded"))
    target = str(tmp_path / "target.coffer")
    with coffer.open(target, seed_path=seed, schema=[Dog]) as db:
        assert db.objects(Dog)[0].name == "Seeded"
        with db.write():
            db.objects(Dog)[0].name = "Changed"
    with coffer.open(target, seed_path=seed, schema=[Dog]) as db:
        assert db.objects(Dog)[0].name == "Changed"
    with coffer.open(seed, schema=[Dog]) as db:
        assert db.objects(Dog)[0].name == "Seeded"


def test_missing_seed_file_is_an_error(tmp_path):
    with pytest.raises(coffer.NotFoundError, match="missing.coffer"):
        coffer.open(str(tmp_path / "t.coffer"), seed_path=str(tmp_path / "missing.coffer"), schema=[Dog])


def test_class_subset(db_path):
    with coffer.open(db_path, schema=[Dog, PERSON]) as db:
        with db.write():
            db.create("Person", {"name": "Ann"})
    with coffer.open(db_path, class_subset=["Person"]) as db:
        assert [s.name for s in db.schema] == ["Person"]
        with pytest.raises(coffer.NotFoundError):
            db.objects("Dog")
        assert db.objects("Person")[0].name == "Ann"
    with pytest.raises(coffer.NotFoundError, match="'Cat'"):
        coffer.open(db_path, schema=[Dog, PERSON], class_subset=["Cat"])
    with pytest.raises(TypeError):
        coffer.open(db_path, class_subset="Person")


def test_max_file_size_stops_a_write_and_keeps_what_was_committed(db_path):
    with coffer.open(db_path, schema=[PERSON]) as db:
        with db.write():
            db.create("Person", {"name": "kept"})
    with coffer.open(db_path, schema=[PERSON], max_file_size=os.path.getsize(db_path) + 64 * 1024) as db:
        with pytest.raises(coffer.FileTooLargeError, match="nothing of this transaction was committed"):
            with db.write():
                for i in range(200):
                    db.create("Person", {"name": f"p{i}", "email": "x" * 4000})
        assert [p.name for p in db.objects("Person")] == ["kept"]


def test_bad_argument_types(db_path):
    with pytest.raises(TypeError, match="path must be a str"):
        coffer.open(42, schema=[Dog])
    with pytest.raises(TypeError, match="schema_version must be an int"):
        coffer.open(db_path, schema=[Dog], schema_version="1")
    with pytest.raises(coffer.InvalidArgumentError, match="schema_version must be between"):
        coffer.open(db_path, schema=[Dog], schema_version=-1)
    with pytest.raises(coffer.InvalidArgumentError, match="max_file_size must be between"):
        coffer.open(db_path, schema=[Dog], max_file_size=-5)
    with pytest.raises(coffer.InvalidArgumentError, match="schema_version needs a schema"):
        coffer.open(db_path, schema_version=2)
    with pytest.raises(TypeError, match="in_memory_identifier must be a str"):
        coffer.open(in_memory_identifier=5, schema=[Dog])


def test_not_a_database(tmp_path):
    path = tmp_path / "text.coffer"
    path.write_bytes(b"hello, this is not a database at all" * 200)
    with pytest.raises(coffer.NotADatabaseError, match="text.coffer' is not a Coffer database") as info:
        coffer.open(str(path), schema=[Dog])
    assert info.value.status == coffer.Status.NOT_A_DATABASE


def test_missing_folder_gives_a_file_access_error(tmp_path):
    with pytest.raises(coffer.FileAccessError, match="No such file or directory") as info:
        coffer.open(str(tmp_path / "no" / "such" / "dir" / "x.coffer"), schema=[Dog])
    assert isinstance(info.value, OSError) and info.value.status == coffer.Status.IO


def test_copying_a_closed_file_keeps_its_data(tmp_path, db_path):
    with coffer.open(db_path, schema=[Dog]) as db:
        with db.write():
            db.add(Dog(id=7, name="Copy"))
    copy = str(tmp_path / "copy.coffer")
    shutil.copyfile(db_path, copy)
    with coffer.open(copy, schema=[Dog]) as db:
        assert db.object_for_primary_key(Dog, 7).name == "Copy"
