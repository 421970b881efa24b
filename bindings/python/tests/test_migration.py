"""coffer.open(..., migration=f): reading old values, writing new ones,
renames, deletions, creations, and failures that leave the file as it was."""
import gc

import pytest

import coffer
from conftest import make_file

V1 = [
    {"name": "Person", "properties": {"first": "string", "last": "string", "age": "int"}},
    {"name": "Pet", "properties": {"name": "string", "owner": "Person?"}},
    {"name": "Tag", "properties": {"label": "string"}},
]
V2 = [
    {"name": "Person", "properties": {"full": "string", "age": "int", "weight": "double"}},
    {"name": "Pet", "properties": {"name": "string", "owner": "Person?"}},
]


@pytest.fixture
def v1_path(tmp_path, key):
    """A file at schema version 1 with two people, a pet owned by Ada and a tag."""

    def fill(db):
        ada = db.create("Person", {"first": "Ada", "last": "Lovelace", "age": 36})
        db.create("Person", {"first": "Alan", "last": "Turing", "age": 41})
        db.create("Pet", {"name": "Rex", "owner": ada})
        db.create("Tag", {"label": "old"})

    return make_file(tmp_path / "people.coffer", V1, key, fill)


def assert_untouched_v1(path, key):
    # A version-1 open of a file migrated to version 2 would raise SchemaVersionError.
    with coffer.open(path, schema=V1, schema_version=1, encryption_key=key) as db:
        assert db.schema_version == 1
        assert [(p.first, p.last, p.age) for p in db.objects("Person")] == [
            ("Ada", "Lovelace", 36),
            ("Alan", "Turing", 41),
        ]
        assert db.objects("Pet")[0].owner.first == "Ada"


def test_migration_reads_old_values_and_writes_new_ones(v1_path, key):
    seen = []

    def migrate(migration, old_version):
        seen.append(old_version)
        for old, new in migration.enumerate_objects("Person"):
            assert isinstance(new, coffer.Object)
            assert sorted(old.keys()) == ["age", "first", "last"]
            assert "first" in old and "full" not in old
            new.full = f"{old['first']} {old.last}"
            new["weight"] = old.get("age") * 2.0
        for old, new in migration.enumerate_objects("Pet"):
            # Links read as old objects on the old side, as new objects on the new one.
            assert isinstance(old.owner, coffer.OldObject)
            assert old.owner.first == "Ada"
            assert new.owner.full == "Ada Lovelace"

    with coffer.open(v1_path, schema=V2, schema_version=2, migration=migrate, encryption_key=key) as db:
        assert seen == [1]
        assert db.schema_version == 2
        assert [(p.full, p.age, p.weight) for p in db.objects("Person")] == [
            ("Ada Lovelace", 36, 72.0),
            ("Alan Turing", 41, 82.0),
        ]
        assert db.objects("Pet")[0].owner.full == "Ada Lovelace"


def test_old_objects_are_read_only(v1_path, key):
    def migrate(migration, old_version):
        for old, _new in migration.enumerate_objects("Person"):
            assert old.to_dict()["last"] in ("Lovelace", "Turing")
            with pytest.raises(coffer.ReadOnlyError, match="old object"):
                old.first = "x"
            with pytest.raises(coffer.PropertyNotFoundError, match="full"):
                old["full"]

    with coffer.open(v1_path, schema=V2, schema_version=2, migration=migrate, encryption_key=key):
        pass


def test_rename_keeps_data(v1_path, key):
    renamed = [
        {"name": "Person", "properties": {"first": "string", "surname": "string", "age": "int"}},
        V1[1],
    ]

    def migrate(migration, old_version):
        migration.rename_property("Person", "last", "surname")
        for old, new in migration.enumerate_objects("Person"):
            assert old.last == new.surname

    with coffer.open(v1_path, schema=renamed, schema_version=2, migration=migrate, encryption_key=key) as db:
        assert [p.surname for p in db.objects("Person")] == ["Lovelace", "Turing"]


def test_rename_errors_name_what_is_wrong(v1_path, key):
    def to_other_type(migration, old_version):
        migration.rename_property("Person", "first", "weight")

    with pytest.raises(coffer.SchemaError, match="first.*weight|weight.*first"):
        coffer.open(v1_path, schema=V2, schema_version=2, migration=to_other_type, encryption_key=key)

    def unknown(migration, old_version):
        migration.rename_property("Person", "nickname", "full")

    with pytest.raises(coffer.NotFoundError, match="nickname"):
        coffer.open(v1_path, schema=V2, schema_version=2, migration=unknown, encryption_key=key)
    assert_untouched_v1(v1_path, key)


def test_create_delete_and_delete_data(v1_path, key):
    # Tag is dropped; Dog is new.
    schema = [
        V2[0],
        V2[1],
        {"name": "Dog", "primaryKey": "name", "properties": {"name": "string", "owner": "Person?"}},
    ]

    def migrate(migration, old_version):
        pets = [old.name for old, new in migration.enumerate_objects("Pet")]
        assert pets == ["Rex"]
        migration.delete_data("Pet")
        assert [new for _old, new in migration.enumerate_objects("Pet")] == [None]
        assert [old.label for old, new in migration.enumerate_objects("Tag")] == ["old"]
        migration.delete_data("Tag")
        with pytest.raises(coffer.NotFoundError, match="Unicorn"):
            migration.delete_data("Unicorn")
        for old, new in migration.enumerate_objects("Person"):
            if old.first == "Alan":
                migration.delete(new)
            else:
                migration.create("Dog", {"name": "Rex", "owner": new})
        # Deleted objects come back as None on a second pass.
        assert [new is None for _old, new in migration.enumerate_objects("Person")] == [False, True]
        assert len(migration.db.objects("Dog")) == 1

    with coffer.open(v1_path, schema=schema, schema_version=2, migration=migrate, encryption_key=key) as db:
        assert [p.age for p in db.objects("Person")] == [36]
        assert db.object_for_primary_key("Dog", "Rex").owner.age == 36
        assert len(db.objects("Pet")) == 0
    # The dropped class left the file: a later schema may add it afresh.
    tag = {"name": "Tag", "properties": {"label": "int"}}
    with coffer.open(v1_path, schema=schema + [tag], schema_version=3, encryption_key=key) as db:
        assert len(db.objects("Tag")) == 0


def test_raising_callback_leaves_the_file_at_the_old_version(v1_path, key):
    class Stop(Exception):
        pass

    def migrate(migration, old_version):
        for old, new in migration.enumerate_objects("Person"):
            new.full = "written, then rolled back"
            if old.first == "Alan":
                raise Stop("no Alan")

    with pytest.raises(Stop, match="no Alan") as raised:
        coffer.open(v1_path, schema=V2, schema_version=2, migration=migrate, encryption_key=key)
    assert isinstance(raised.value.__cause__, coffer.CofferError)
    assert_untouched_v1(v1_path, key)

    # The same migration without the failure succeeds afterwards.
    def fixed(migration, old_version):
        for _old, new in migration.enumerate_objects("Person"):
            new.full = "done"

    with coffer.open(v1_path, schema=V2, schema_version=2, migration=fixed, encryption_key=key) as db:
        assert [p.full for p in db.objects("Person")] == ["done", "done"]


def test_failed_c_call_in_the_callback_propagates_as_its_error(v1_path, key):
    def migrate(migration, old_version):
        for _old, new in migration.enumerate_objects("Person"):
            new.age = "old"

    with pytest.raises(coffer.PropertyTypeError, match="'Person', property 'age'") as raised:
        coffer.open(v1_path, schema=V2, schema_version=2, migration=migrate, encryption_key=key)
    assert isinstance(raised.value, TypeError)
    assert isinstance(raised.value.__cause__, coffer.CofferError)
    assert_untouched_v1(v1_path, key)


def test_migration_is_unusable_after_the_callback(v1_path, key):
    kept = []

    def migrate(migration, old_version):
        kept.append(migration)
        kept.append(next(iter(migration.enumerate_objects("Person")))[1])
        with pytest.raises(coffer.MisuseError, match="own transaction"):
            with migration.db.write():
                pass
        with pytest.raises(coffer.MisuseError, match="cannot be closed"):
            migration.db.close()

    with coffer.open(v1_path, schema=V2, schema_version=2, migration=migrate, encryption_key=key) as db:
        assert len(db.objects("Person")) == 2
    migration, new = kept
    with pytest.raises(coffer.MisuseError, match="migration has ended"):
        migration.enumerate_objects("Person").__next__()
    with pytest.raises(coffer.DatabaseClosedError):
        new.full
    with pytest.raises(coffer.MisuseError, match="migration has ended"):
        migration.db


def test_callback_is_kept_alive_and_not_called_without_a_version_change(tmp_path):
    calls = []
    path = tmp_path / "new.coffer"
    # A new file needs no migration.
    with coffer.open(path, schema=V1, schema_version=3, migration=lambda m, v: calls.append(v)):
        pass
    with coffer.open(path, schema=V1, schema_version=3, migration=lambda m, v: calls.append(v)):
        pass
    assert calls == []

    def make_callback():
        def migrate(migration, old_version):
            gc.collect()
            calls.append(old_version)

        return migrate

    with coffer.open(path, schema=V2, schema_version=4, migration=make_callback()):
        pass
    assert calls == [3]


def test_migration_must_be_callable(tmp_path):
    with pytest.raises(TypeError, match="migration must be callable"):
        coffer.open(tmp_path / "x.coffer", schema=V1, migration="not a function")


# Pet links to Person: leaving it out needs its data deleted; Tag, unlinked, may stay.
WITHOUT_PET = [V1[0]]


def test_leaving_out_a_linking_class_needs_its_data_deleted(v1_path, key):
    calls = []
    with pytest.raises(coffer.SchemaError) as info:
        coffer.open(v1_path, schema=WITHOUT_PET, schema_version=2, encryption_key=key,
                    migration=lambda migration, old: calls.append(old))
    assert calls == [1]
    assert info.value.status == coffer.Status.SCHEMA
    assert "leaves out class 'Pet'" in info.value.message
    assert "delete its data in the migration" in info.value.message
    assert_untouched_v1(v1_path, key)

    def migrate(migration, old_version):
        migration.delete_data("Pet")

    with coffer.open(v1_path, schema=WITHOUT_PET, schema_version=2, encryption_key=key, migration=migrate) as db:
        assert [p.first for p in db.objects("Person")] == ["Ada", "Alan"]
    with coffer.open(v1_path, encryption_key=key) as db:
        assert sorted(c.name for c in db.schema) == ["Person", "Tag"]
        assert len(db.objects("Tag")) == 1
