"""`coffer verify` on sound and damaged files, plain and encrypted: exit 0
with a summary when sound; exit 1 with one line per finding on stdout and
a count on stderr when damaged; key errors named; never a crash. And
`coffer import`, which refuses to write into a damaged file."""

import os

import pytest
from clitool import KEY, make_dog_file, make_rich_file, ok, run

MODES = pytest.mark.parametrize("encrypted", [False, True], ids=["plain", "encrypted"])
PAGE = 4096


def key_args(encrypted, key_files):
    return ["--key-file", key_files[0]] if encrypted else []


@MODES
def test_sound_file(tmp_path, key_files, encrypted):
    path = str(tmp_path / "dogs.coffer")
    make_dog_file(path, KEY if encrypted else None, dogs=30)
    out = ok("verify", path, *key_args(encrypted, key_files))
    assert out == f"{path}: sound (2 classes, 31 objects, {os.path.getsize(path)} bytes)\n"


def test_sound_file_with_every_kind_of_value(tmp_path):
    path = str(tmp_path / "rich.coffer")
    make_rich_file(path)
    assert ": sound (" in ok("verify", path)


@MODES
def test_zeroed_page_is_reported(tmp_path, key_files, encrypted):
    path = str(tmp_path / "dogs.coffer")
    make_dog_file(path, KEY if encrypted else None, dogs=400)
    data = open(path, "rb").read()
    assert len(data) // PAGE > 4
    # Zero the pages past the two meta pages one at a time (on a fresh
    # copy each time) until one in use is hit: free pages are not damage.
    for page in range(2, len(data) // PAGE):
        damaged = bytearray(data)
        damaged[page * PAGE:(page + 1) * PAGE] = bytes(PAGE)
        open(path, "wb").write(damaged)
        r = run("verify", path, *key_args(encrypted, key_files))
        assert r.code in (0, 1), r  # never a crash
        if r.code == 1:
            break
    else:
        pytest.fail("no zeroed page was reported")
    findings = r.out.splitlines()
    assert findings and all(": " in line for line in findings)
    assert any(" page " in line for line in findings)
    assert f"{path} is damaged: {len(findings)} finding" in r.err


def damage_a_dog_record(path, key_file):
    """Flips a byte near the end of each page of an encrypted dog file (on a
    fresh copy each time) until verify names a damaged Dog: the pages stay
    sound, so the finding comes from the object check. A flip in an index
    page names a Dog too; the loop goes on to the page of the Dog objects
    (their records, or their clusters in format 5). Returns verify's run."""
    data = bytearray(open(path, "rb").read())
    r = None
    for page in range(2, len(data) // PAGE):
        damaged = bytearray(data)
        damaged[page * PAGE + PAGE - 40] ^= 0x55
        open(path, "wb").write(damaged)
        r = run("verify", path, "--key-file", key_file)
        assert r.code in (0, 1), r  # never a crash
        # A record names its object; a cluster (format 5) the range of objects it holds.
        if r.code == 1 and any(line.startswith("record ") and (" class Dog object " in line or
                                                                " class Dog: objects " in line)
                               for line in r.out.splitlines()):
            return r
    pytest.fail(f"no flip gave a record finding naming a Dog: {r}")


def test_damaged_record_names_class_and_object(tmp_path, key_files):
    path = str(tmp_path / "dogs.coffer")
    make_dog_file(path, KEY, dogs=50)
    r = damage_a_dog_record(path, key_files[0])
    assert "record" in r.out


def test_import_refuses_a_damaged_file_and_leaves_it_as_it_was(tmp_path, key_files):
    source = str(tmp_path / "source.coffer")
    make_dog_file(source, KEY, dogs=3)
    export = ok("export", source, "--key-file", key_files[0])
    target = str(tmp_path / "target.coffer")
    make_dog_file(target, KEY, dogs=50)
    damage_a_dog_record(target, key_files[0])
    before = open(target, "rb").read()
    r = run("import", target, "--key-file", key_files[0], stdin=export)
    assert r.code == 1, r
    assert f"{target} is damaged" in r.err and "run `coffer verify`" in r.err
    assert open(target, "rb").read() == before
    # A sound file takes the same import, and is sound after it.
    fresh = str(tmp_path / "fresh.coffer")
    ok("import", fresh, "--key-file", key_files[0], stdin=export)
    assert ": sound (2 classes, 4 objects" in ok("verify", fresh, "--key-file", key_files[0])


def test_not_a_database_is_a_finding(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("shopping list\n" * 1000)
    r = run("verify", str(path))
    assert r.code == 1 and r.out and "is damaged" in r.err


def test_errors(tmp_path, key_files):
    r = run("verify", str(tmp_path / "none.coffer"))
    assert r.code == 1 and "no such file" in r.err
    path = str(tmp_path / "secret.coffer")
    make_dog_file(path, KEY)
    r = run("verify", path)
    assert r.code == 1 and "encrypted and no key was given" in r.err and r.out == ""
    r = run("verify", path, "--key-file", key_files[1])
    assert r.code == 1 and "wrong key" in r.err
    r = run("verify")
    assert r.code == 2
