"""A stored string that is not UTF-8 (a damaged plain file) raises the
library's CorruptedError naming where it was read, whichever way it is read:
a property, the whole object, a list element, a mixed value, a map key. The
damaged file is of file format 3, whose values carry no checksum (the
committed Tests/fixtures/format3/damaged_strings.coffer; opening it upgrades
it to format 4 with the damage in place); in today's format the same damage
fails the values' checksums first, which is CorruptedError too."""

import os
import shutil

import pytest

import coffer

FIXTURE = os.path.join(os.path.dirname(__file__), "..", "..", "..", "Tests", "fixtures", "format3",
                       "damaged_strings.coffer")

SCHEMA = [{"name": "P", "properties": {"name": "string", "tags": "string[]", "m": "mixed", "d": "int{}"}}]


def marker(i):
    return f"MARKER-\u00e9-{i}"


def damage(path):
    """Replaces the 'é' of the four stored strings by two bytes that are not
    UTF-8, in place."""
    with open(path, "rb") as f:
        data = f.read()
    for i in range(1, 5):
        text = marker(i).encode()
        assert text in data
        data = data.replace(text, text.replace("\u00e9".encode(), b"\xff\xfe"))
    with open(path, "wb") as f:
        f.write(data)


@pytest.fixture
def damaged(db_path):
    """A plain file of format 3 whose four stored strings had their 'é'
    replaced by two bytes that are not UTF-8."""
    shutil.copyfile(FIXTURE, db_path)
    with coffer.open(db_path, schema=SCHEMA) as db:
        yield db.objects("P")[0]


@pytest.mark.parametrize(
    "read, where",
    [
        (lambda o: o.name, "class 'P', property 'name'"),
        (lambda o: o.to_dict(), "class 'P', property 'name'"),
        (lambda o: list(o.tags), "class 'P', property 'tags'"),
        (lambda o: o.m, "class 'P', property 'm'"),
        (lambda o: dict(o.d), "a key of class 'P', property 'd'"),
    ],
    ids=["property", "object", "list", "mixed", "map key"],
)
def test_invalid_utf8_is_corruption(damaged, read, where):
    with pytest.raises(coffer.CorruptedError) as info:
        read(damaged)
    assert not isinstance(info.value, UnicodeDecodeError)
    assert info.value.status == coffer.Status.CORRUPTED
    assert str(info.value).startswith(where)
    assert "not valid UTF-8" in str(info.value) and "the file is damaged" in str(info.value)


def test_the_same_damage_fails_the_checksum_in_todays_format(db_path):
    with coffer.open(db_path, schema=SCHEMA) as db:
        with db.write():
            db.create("P", {"name": marker(1), "tags": [marker(2)], "m": marker(3), "d": {marker(4): 1}})
    damage(db_path)
    with coffer.open(db_path, schema=SCHEMA) as db:
        with pytest.raises(coffer.CorruptedError) as info:
            db.objects("P")[0].name
        assert info.value.status == coffer.Status.CORRUPTED
        assert "class 'P'" in str(info.value) and "checksum does not match" in str(info.value)
