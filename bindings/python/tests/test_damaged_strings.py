"""A stored string that is not UTF-8 (a damaged plain file) raises the
library's CorruptedError naming where it was read, whichever way it is read:
a property, the whole object, a list element, a mixed value, a map key."""

import pytest

import coffer

SCHEMA = [{"name": "P", "properties": {"name": "string", "tags": "string[]", "m": "mixed", "d": "int{}"}}]


def marker(i):
    return f"MARKER-\u00e9-{i}"


@pytest.fixture
def damaged(db_path):
    """A plain file whose four stored strings had their 'é' replaced by two
    bytes that are not UTF-8."""
    with coffer.open(db_path, schema=SCHEMA) as db:
        with db.write():
            db.create("P", {"name": marker(1), "tags": [marker(2)], "m": marker(3), "d": {marker(4): 1}})
    with open(db_path, "rb") as f:
        data = f.read()
    for i in range(1, 5):
        text = marker(i).encode()
        assert text in data
        data = data.replace(text, text.replace("\u00e9".encode(), b"\xff\xfe"))
    with open(db_path, "wb") as f:
        f.write(data)
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
