"""The read-only commands on files made by Python and by the C API, plain
and encrypted: schema, count, query (every format, --limit, errors), stats,
help and exit statuses."""

import csv
import io
import json

import pytest
from clitool import KEY, DOG_SCHEMA, make_dog_file, make_rich_file, ok, run

MODES = pytest.mark.parametrize("encrypted", [False, True], ids=["plain", "encrypted"])


def key_args(encrypted, key_files):
    return ["--key-file", key_files[0]] if encrypted else []


@MODES
def test_schema_text_and_json(tmp_path, key_files, encrypted):
    path = str(tmp_path / "dogs.coffer")
    make_dog_file(path, KEY if encrypted else None)
    text = ok("schema", path, *key_args(encrypted, key_files))
    assert text.splitlines()[0] == "schema version 0"
    assert "class Dog" in text and "class Person" in text
    dog_block = text.split("class Person")[0]
    dog_lines = {line.split()[0]: line for line in dog_block.splitlines() if line.startswith("  ")}
    assert "primary key" in dog_lines["id"]
    assert "indexed" in dog_lines["name"]
    assert "Person?" in dog_lines["owner"]
    schema = json.loads(ok("schema", path, "--json", *key_args(encrypted, key_files)))
    assert [c["name"] for c in schema["classes"]] == ["Dog", "Person"]
    props = {p["name"]: p for p in schema["classes"][0]["properties"]}
    assert props["id"] == {"name": "id", "type": "int", "primaryKey": True}
    assert props["owner"] == {"name": "owner", "type": "link", "optional": True, "objectClass": "Person"}


@MODES
def test_count(tmp_path, key_files, encrypted):
    path = str(tmp_path / "dogs.coffer")
    make_dog_file(path, KEY if encrypted else None, dogs=7)
    assert ok("count", path, "Dog", *key_args(encrypted, key_files)) == "7\n"
    lines = ok("count", path, *key_args(encrypted, key_files)).split("\n")
    assert lines[:2] == ["Dog     7", "Person  1"]
    r = run("count", path, "Cat", *key_args(encrypted, key_files))
    assert r.code == 1 and "no class 'Cat'" in r.err and r.out == ""


@MODES
def test_query_formats(tmp_path, key_files, encrypted):
    path = str(tmp_path / "dogs.coffer")
    make_dog_file(path, KEY if encrypted else None, dogs=6)
    keys = key_args(encrypted, key_files)
    rows = json.loads(ok("query", path, "Dog", "age >= 2 SORT(id DESC)", "--format", "json", *keys))
    assert [r["id"] for r in rows] == [3, 2]
    # Links print as the target's primary key.
    assert rows[0] == {"id": 3, "name": "dog3", "age": 3, "owner": "Ann"}
    assert rows[1]["owner"] is None
    lines = ok("query", path, "Dog", "TRUEPREDICATE", "--format", "jsonl", "--limit", "2", *keys).splitlines()
    assert [json.loads(l)["id"] for l in lines] == [0, 1]
    table = ok("query", path, "Dog", "name BEGINSWITH 'dog' LIMIT(3)", *keys).splitlines()
    assert table[0].split(" | ")[:2] == ["id", "name"]
    assert set(table[1]) <= {"-", "+"}
    assert table[-1] == "(3 objects)"
    limited = ok("query", path, "Dog", "age < 3", "--limit", "2", *keys).splitlines()
    assert limited[-1] == "(2 of 5 objects)" and len(limited) == 2 + 2 + 1
    people = list(csv.reader(io.StringIO(ok("query", path, "Person", "--format", "csv", *keys))))
    assert people == [["name", "city"], ["Ann", "Oslo, Norway"]]


def test_query_errors(tmp_path):
    path = str(tmp_path / "dogs.coffer")
    make_dog_file(path)
    r = run("query", path, "Dog", "age > ")
    assert r.code == 1 and r.out == ""
    assert "offset" in r.err and "expected" in r.err
    r = run("query", path, "Dog", "colour == 'red'")
    assert r.code == 1 and "colour" in r.err
    r = run("query", path, "Cat", "TRUEPREDICATE")
    assert r.code == 1 and "Cat" in r.err
    r = run("query", path, "Dog", "--format", "xml")
    assert r.code == 2 and "xml" in r.err
    r = run("query", path, "Dog", "--limit", "-1")
    assert r.code == 2


def test_usage_errors_and_help(tmp_path):
    r = run()
    assert r.code == 2 and "USAGE" in r.err and r.out == ""
    r = run("frobnicate")
    assert r.code == 2 and "frobnicate" in r.err
    r = run("schema")
    assert r.code == 2 and "file" in r.err
    help_text = ok("help")
    for command in ["schema", "count", "query", "export", "import", "stats", "compact", "copy", "shell"]:
        assert command in help_text
    assert "Exit status" in help_text
    assert "--limit" in ok("query", "--help")
    assert ok("--version").startswith("coffer ")


def test_missing_file(tmp_path):
    r = run("count", str(tmp_path / "none.coffer"))
    assert r.code == 1 and "no such file" in r.err
    assert not (tmp_path / "none.coffer").exists()


def test_keys_missing_wrong_malformed_and_unneeded(tmp_path, key_files):
    hex_key, raw_other = key_files
    path = str(tmp_path / "secret.coffer")
    make_dog_file(path, KEY)
    r = run("count", path)
    assert r.code == 1 and "encrypted and no key was given" in r.err
    r = run("count", path, "--key-file", raw_other)
    assert r.code == 1 and "wrong key" in r.err and raw_other in r.err
    bad = tmp_path / "bad.key"
    bad.write_text("abc")
    r = run("count", path, "--key-file", str(bad))
    assert r.code == 1 and "is not a key" in r.err and "128 hex digits" in r.err
    r = run("count", path, env={"COFFER_KEY": "zz" * 64})
    assert r.code == 1 and "COFFER_KEY" in r.err
    r = run("count", path, "--key-file", str(tmp_path / "missing.key"))
    assert r.code == 1 and "cannot read key file" in r.err
    # Hex from the environment, raw bytes from a file.
    assert ok("count", path, "Dog", env={"COFFER_KEY": KEY.hex().upper()}) == "5\n"
    raw = tmp_path / "raw.key"
    raw.write_bytes(KEY)
    assert ok("count", path, "Dog", "--key-file", str(raw)) == "5\n"
    plain = str(tmp_path / "plain.coffer")
    make_dog_file(plain)
    r = run("count", plain, "--key-file", hex_key)
    assert r.code == 1 and "not encrypted" in r.err


@MODES
def test_stats(tmp_path, key_files, encrypted):
    path = str(tmp_path / "dogs.coffer")
    make_dog_file(path, KEY if encrypted else None, dogs=20)
    text = ok("stats", path, *key_args(encrypted, key_files))
    fields = {line[:18].strip(): line[18:] for line in text.splitlines() if not line.startswith(" ")}
    assert fields["encrypted"] == ("yes" if encrypted else "no")
    assert fields["file size"].startswith(str((tmp_path / "dogs.coffer").stat().st_size))
    assert "entries" in fields["change log"]
    table = [line.split() for line in text.splitlines()]
    header = next(i for i, row in enumerate(table) if row[:2] == ["class", "objects"])
    rows = {row[0]: row for row in table[header + 1:]}
    assert rows["Dog"][1] == "20"
    # Two index entries per dog: the primary key and the indexed name.
    assert "40" in rows["Dog"]
    assert rows["Person"][1] == "1"


def test_file_made_by_the_c_api(tmp_path, c_maker, key_files):
    import subprocess

    plain = str(tmp_path / "c.coffer")
    subprocess.run([c_maker, plain], check=True)
    assert "schema version 3" in ok("schema", plain)
    rows = json.loads(ok("query", plain, "Item", "qty > 5 SORT(sku ASC)", "--format", "json"))
    assert rows == [{"sku": "sku-1", "qty": 10, "sizes": [1.5, -1.0]}, {"sku": "sku-2", "qty": 20, "sizes": [2.5, -1.0]}]
    encrypted = str(tmp_path / "c-enc.coffer")
    subprocess.run([c_maker, encrypted, "encrypt"], check=True)
    assert ok("count", encrypted, "Item", "--key-file", key_files[0]) == "3\n"


def test_rich_file_queries_show_every_kind_of_value(tmp_path):
    path = str(tmp_path / "rich.coffer")
    make_rich_file(path)
    rows = json.loads(ok("query", path, "Everything", "id == 1", "--format", "json"))
    row = rows[0]
    assert row["friend"] == 2  # a link, by primary key
    assert row["friends"] == [2, 1]
    assert row["address"]["street"] == "Main 1"
    assert row["r_date"] == "1969-12-31T23:59:59.5Z"
    assert row["o_double"] == "Infinity"
    assert row["any"]["link"] == "Plain#2"
    plain = json.loads(ok("query", path, "Plain", "label == 'first'", "--format", "json"))
    assert plain[0]["linked_from"] == 1  # linking objects, by count
