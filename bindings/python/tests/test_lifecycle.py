"""Compaction on launch, copies with any key, the active-version limit and
deletion when a migration is needed, through the C core."""
import os

import pytest

import coffer

KEY = bytes(range(64))
OTHER_KEY = bytes(reversed(range(64)))


class Item(coffer.Object):
    id: int = coffer.primary_key()
    name: str = coffer.indexed("")
    blob: bytes = b""


def fill(path, key=None, count=20):
    with coffer.open(path, schema=[Item], encryption_key=key) as db:
        with db.write():
            for i in range(count):
                db.add(Item(id=i, name=f"item {i}", blob=b"x" * 10000))


@pytest.mark.parametrize("source_key", [None, KEY])
@pytest.mark.parametrize("copy_key", [None, KEY, OTHER_KEY])
def test_write_copy_with_every_key(tmp_path, source_key, copy_key):
    source = tmp_path / "source.coffer"
    fill(source, source_key)
    copy = tmp_path / "copy.coffer"
    with coffer.open(source, schema=[Item], encryption_key=source_key) as db:
        db.write_copy(copy, encryption_key=copy_key)
        with pytest.raises(coffer.CofferError, match="already exists"):
            db.write_copy(copy)
    if copy_key is not None:
        with pytest.raises(coffer.WrongKeyError):
            coffer.open(copy, encryption_key=OTHER_KEY if copy_key == KEY else KEY)
    with coffer.open(copy, schema=[Item], encryption_key=copy_key) as db:
        items = sorted(db.objects(Item), key=lambda item: item.id)
        assert [(i.id, i.name, len(i.blob)) for i in items] == [(i, f"item {i}", 10000) for i in range(20)]
        assert db.object_for_primary_key(Item, 7).name == "item 7"


def test_should_compact_on_launch(tmp_path):
    path = tmp_path / "big.coffer"
    fill(path, count=100)
    with coffer.open(path, schema=[Item]) as db:
        with db.write():
            db.delete([item for item in db.objects(Item) if item.id >= 5])
    before = os.path.getsize(path)
    calls = []
    with coffer.open(path, schema=[Item], should_compact_on_launch=lambda total, used: calls.append((total, used)) or True) as db:
        assert len(db.objects(Item)) == 5
    assert calls and calls[0][0] == before and calls[0][1] < before
    assert os.path.getsize(path) < before / 4

    def broken(total, used):
        raise RuntimeError("no decision")

    with pytest.raises(RuntimeError, match="no decision"):
        coffer.open(path, schema=[Item], should_compact_on_launch=broken)


def test_max_active_versions(tmp_path):
    path = tmp_path / "v.coffer"
    with coffer.open(path, schema=[Item], max_active_versions=1) as db:
        assert db.active_versions == 1
        with db.write():
            db.add(Item(id=1))
        assert len(db.objects(Item)) == 1  # keeps a read snapshot open
        with pytest.raises(coffer.LimitError, match="limit of 1"):
            with db.write():
                db.add(Item(id=2))


def test_delete_if_migration_needed_on_a_higher_version(tmp_path):
    path = tmp_path / "m.coffer"
    fill(path, count=3)
    with coffer.open(path, schema=[Item], schema_version=2, delete_if_migration_needed=True) as db:
        assert len(db.objects(Item)) == 0
        assert db.schema_version == 2
