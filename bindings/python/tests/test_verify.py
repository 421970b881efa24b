"""coffer.verify() and Database.verify(): sound files of every object kind
give no findings (plain, encrypted, in memory, open or closed); damaged
pages and files give findings naming the page, never a crash; open with
verify_on_open refuses a damaged file."""
import os
import struct

import pytest

import coffer
from models_links import Address, Owner, Pet

KEY = bytes(range(64))
PAGE = 4096


class Item(coffer.Object):
    id: int = coffer.primary_key()
    name: str = coffer.indexed("")
    blob: bytes = b""


SCHEMA = [Owner, Pet, Address, Item]


def fill(db, count=60):
    with db.write():
        for i in range(count):
            pets = [Pet(name=f"pet {i}-{j}") for j in range(2)]
            db.add(Owner(name=f"owner {i}", pets=pets, best=pets[0], nicknames={"a", f"n{i}"},
                         scores={"x": i / 2}, lucky=[i, None], address=Address(street=f"{i} Main"),
                         addresses=[Address(street="Side")], extra=[i, "text", {"k": [1, 2]}] if i % 2 else "plain"))
            db.add(Item(id=i, name=f"item {i}", blob=b"z" * (9000 if i == 3 else 10)))


def make(path, key=None, count=60):
    with coffer.open(path, schema=SCHEMA, encryption_key=key) as db:
        fill(db, count)


@pytest.mark.parametrize("key", [None, KEY])
def test_sound_file_every_kind(db_path, key):
    make(db_path, key)
    assert coffer.verify(db_path, encryption_key=key) == []
    with coffer.open(db_path, schema=SCHEMA, encryption_key=key) as db:
        assert db.verify() == []
        assert coffer.verify(db_path, encryption_key=key) == []  # open in this process


def test_sound_in_memory(memory_id):
    with coffer.open(in_memory_identifier=memory_id, schema=SCHEMA) as db:
        fill(db, 10)
        assert db.verify() == []
        assert coffer.verify(in_memory_identifier=memory_id) == []
    with pytest.raises(coffer.NotFoundError):
        coffer.verify(in_memory_identifier=memory_id)


def test_errors(tmp_path, db_path):
    with pytest.raises(coffer.NotFoundError):
        coffer.verify(tmp_path / "missing.coffer")
    make(db_path, KEY, 3)
    with pytest.raises(coffer.KeyRequiredError):
        coffer.verify(db_path)
    with pytest.raises(coffer.WrongKeyError):
        coffer.verify(db_path, encryption_key=bytes(64))
    with pytest.raises(coffer.InvalidArgumentError):
        coffer.verify(db_path, in_memory_identifier="x")


def compacted(tmp_path):
    """A compacted file (no free pages: every page is in use) and its bytes."""
    source, path = tmp_path / "source.coffer", tmp_path / "c.coffer"
    make(source, None, 200)
    with coffer.open(source) as db:
        db.write_copy(path)
    return path, bytearray(path.read_bytes())


def leaf_pages(data):
    for pgno in range(2, len(data) // PAGE):
        number, _, flags, lower = struct.unpack_from("<QHHH", data, pgno * PAGE)
        if number == pgno and flags == 0x02 and lower > 20:
            yield pgno


def test_zeroed_page_is_found(tmp_path):
    path, data = compacted(tmp_path)
    pgno = next(leaf_pages(data))
    data[pgno * PAGE:(pgno + 1) * PAGE] = bytes(PAGE)
    path.write_bytes(data)
    findings = coffer.verify(path)
    assert findings, "a zeroed page in use must be found"
    first = findings[0]
    assert isinstance(first, coffer.Finding)
    assert first.kind == coffer.FindingKind.PAGE and first.page == pgno
    assert f"page {pgno}" in str(first)
    with pytest.raises(coffer.CorruptedError, match=f"page header \\(page {pgno}\\)"):
        coffer.open(path, verify_on_open=True)


def test_truncated_and_foreign_files(tmp_path):
    path, data = compacted(tmp_path)
    path.write_bytes(data[: len(data) // 2])
    findings = coffer.verify(path)
    assert [f.kind for f in findings] == [coffer.FindingKind.FILE]
    assert "truncated" in findings[0].message and findings[0].page is None
    notes = tmp_path / "notes.txt"
    notes.write_text("not a database\n")
    assert coffer.verify(notes)[0].kind == coffer.FindingKind.FILE
    assert not os.path.exists(str(notes) + "-lock")


def test_every_bit_flip_in_one_page_gives_findings_or_nothing(tmp_path):
    # Never an exception other than findings: a flip anywhere in a leaf page.
    path, data = compacted(tmp_path)
    pgno = next(leaf_pages(data))
    for offset in range(0, PAGE, 97):
        damaged = bytearray(data)
        damaged[pgno * PAGE + offset] ^= 0x10
        path.write_bytes(damaged)
        for finding in coffer.verify(path):
            assert finding.message and isinstance(finding.kind, coffer.FindingKind)
