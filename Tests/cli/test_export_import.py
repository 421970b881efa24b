"""export → import round trips of every property type, links (forward,
backward, cycles, in collections and mixed values), embedded objects,
collections and mixed values, plain and encrypted; and imports that fail
at a line leave the file exactly as it was."""

import json

import pytest
from clitool import KEY, files_named, make_dog_file, make_rich_file, ok, run

import coffer


@pytest.mark.parametrize("encrypted", [False, True], ids=["plain", "encrypted"])
def test_round_trip_of_every_kind_of_value(tmp_path, key_files, encrypted):
    keys = ["--key-file", key_files[0]] if encrypted else []
    source = str(tmp_path / "rich.coffer")
    make_rich_file(source, KEY if encrypted else None)
    exported = ok("export", source, *keys)
    lines = exported.splitlines()
    header = json.loads(lines[0])
    assert header["coffer"] == "export" and header["format"] == 1
    assert len(lines) == 1 + 3 + 2  # three Everything, two Plain; Address is embedded
    target = str(tmp_path / "copy.coffer")
    ok("import", target, *keys, stdin=exported)
    again = ok("export", target, *keys)
    if encrypted:
        # Sets and maps of an encrypted file keep an order of their own.
        assert [canonical(l) for l in again.splitlines()] == [canonical(l) for l in lines]
    else:
        assert again == exported
    # The values as the binding reads them, not only as the tool prints them.
    with coffer.open(target, encryption_key=KEY if encrypted else None) as b:
        first = b.object_for_primary_key("Everything", 1)
        assert first.friend.id == 2 and first.friend.friend.id == 1  # a cycle
        assert [f.id for f in first.friends] == [2, 1]
        assert first.address.resident.label.startswith("second")
        assert first.any["link"].label.startswith("second")
        assert first.r_int == -(2 ** 63) and first.o_int == 2 ** 63 - 1
        assert first.r_data == b"\x00\xff\x10"
        assert list(first.floats) == [0.5, -3.25]
        assert list(first.bools) == [True, None, False]
        assert str(first.decimals["pi"]) == "3.141592653589793238462643383279502"
        assert first.stamps["old"].year == 1


def test_export_to_a_file_and_import_from_one(tmp_path):
    source = str(tmp_path / "dogs.coffer")
    make_dog_file(source, dogs=3)
    out = tmp_path / "dogs.jsonl"
    assert ok("export", source, "Dog", "Person", "--output", str(out)) == ""
    target = str(tmp_path / "again.coffer")
    ok("import", target, "--input", str(out))
    assert ok("count", target, "Dog") == "3\n"
    assert json.loads(ok("query", target, "Dog", "id == 1", "--format", "json"))[0]["owner"] == "Ann"


def test_export_of_chosen_classes(tmp_path):
    source = str(tmp_path / "dogs.coffer")
    make_dog_file(source, dogs=2)
    lines = ok("export", source, "Person").splitlines()
    assert len(lines) == 2 and json.loads(lines[1])["$class"] == "Person"
    r = run("export", source, "Cat", "--output", str(tmp_path / "cats.jsonl"))
    assert r.code == 1 and "Cat" in r.err
    assert not (tmp_path / "cats.jsonl").exists()


def test_import_into_an_existing_file_adds_objects(tmp_path):
    source = str(tmp_path / "dogs.coffer")
    make_dog_file(source, dogs=2)
    dogs_only = "\n".join(l for l in ok("export", source).splitlines() if '"Person"' not in l or "schema" in l)
    target = str(tmp_path / "target.coffer")
    make_dog_file(target, dogs=0)
    # The dogs link to Ann, who is not in the input: the import fails whole.
    r = run("import", target, stdin=dogs_only.replace('"id":0', '"id":10').replace('"id":1,', '"id":11,'))
    assert r.code == 1 and "not in the input" in r.err and "line 3" in r.err
    assert ok("count", target, "Dog") == "0\n"


SETS = {"dates", "tags", "pals", "uuids"}


def canonical(line: str):
    """An export line with the elements of sets sorted."""
    obj = json.loads(line)
    for name in SETS & obj.keys():
        obj[name] = sorted(obj[name], key=json.dumps)
    return obj


def bad_lines(exported: str, line: str) -> str:
    return exported + line + "\n"


@pytest.mark.parametrize("bad, message", [
    ('{"$class":"Dog","$key":99,"id":99,"name":5}', "Dog.name: expected a value of type string"),
    ('{"$class":"Dog","$key":99,"id":99,"colour":"red"}', "no property 'colour'"),
    ('{"$class":"Cat","$key":1}', "no class 'Cat'"),
    ('{"$class":"Dog","$key":1,"id":77}', "appears twice"),
    ('{"$class":"Dog","$key":99,"id":0}', "Dog"),  # a duplicate primary key, named by the core
    ('{"$class":"Dog","$key":99,"id":99,"owner":12345}', "not in the input"),
    ('{"$class":"Dog", "$key": 99, "id": ', "invalid JSON at character"),
    ('{"id":1}', "$class"),
])
def test_a_bad_line_names_its_number_and_writes_nothing(tmp_path, bad, message):
    source = str(tmp_path / "dogs.coffer")
    make_dog_file(source, dogs=4)
    exported = ok("export", source)
    bad_line_number = len(exported.splitlines()) + 1
    # Into a new file: no file is left behind.
    r = run("import", str(tmp_path / "new.coffer"), stdin=bad_lines(exported, bad))
    assert r.code == 1, r
    assert f"line {bad_line_number}" in r.err and message in r.err, r.err
    assert files_named(tmp_path, "new.coffer") == []
    # Into a file that has objects already: it is left as it was, although
    # every line before the bad one was fine.
    target = str(tmp_path / "existing.coffer")
    make_dog_file(target, dogs=3)
    before = ok("export", target)
    shifted = exported.replace('"id":', '"id":10').replace('"Ann"', '"Zed"')
    r = run("import", target, stdin=bad_lines(shifted, bad))
    assert r.code == 1 and f"line {bad_line_number}" in r.err, r
    assert ok("export", target) == before
    # Without the bad line the same import goes through.
    ok("import", target, stdin=shifted)
    assert ok("count", target, "Dog") == "7\n"


def test_bad_headers(tmp_path):
    target = str(tmp_path / "x.coffer")
    for text, message in [("", "line 1: the input is empty"), ("{}\n", "line 1: not the header"),
                          ('{"coffer":"export","format":9,"schema":{}}\n', "format 9"),
                          ("not json\n", "line 1: invalid JSON"),
                          ('{"coffer":"export","format":1,"schema":{"schemaVersion":0,"classes":[{"name":"A",'
                           '"properties":[{"name":"b","type":"link","objectClass":"Nowhere"}]}]}}\n', "Nowhere")]:
        r = run("import", target, stdin=text)
        assert r.code == 1 and message in r.err, (text, r)
        assert files_named(tmp_path, "x.coffer") == []


def test_import_into_a_file_with_another_schema(tmp_path):
    source = str(tmp_path / "dogs.coffer")
    make_dog_file(source, dogs=1)
    other = str(tmp_path / "rich.coffer")
    make_rich_file(other)
    before = ok("export", other)
    r = run("import", other, stdin=ok("export", source))
    assert r.code == 1 and "line 1" in r.err and "Dog" in r.err
    assert ok("export", other) == before
