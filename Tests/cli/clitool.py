"""What the command-line tool's tests share: the built `coffer` binary,
running it, keys, and files made through the Python binding (with every
property type, links, embedded objects, collections and mixed values) and
through the C API (a small C program compiled against the library). The
fixtures are registered by conftest.py; this module's name is its own, so
that these tests can run in one pytest session with the binding's."""

from __future__ import annotations

import datetime
import decimal
import os
import subprocess
import uuid
from pathlib import Path
from typing import Dict, List, Optional

import pytest

import coffer

ROOT = Path(__file__).resolve().parents[2]
KEY = bytes(range(64))
OTHER_KEY = bytes(range(64, 128))


def cli_path() -> str:
    """The coffer binary: $COFFER_CLI, else the one `swift build` made."""
    explicit = os.environ.get("COFFER_CLI")
    if explicit:
        return explicit
    out = subprocess.run(["swift", "build", "--show-bin-path"], cwd=ROOT, capture_output=True, text=True, check=True)
    return str(Path(out.stdout.strip()) / "coffer")


CLI = cli_path()


class Run:
    """What one run of the tool did."""

    def __init__(self, proc: subprocess.CompletedProcess):
        self.code = proc.returncode
        self.out = proc.stdout
        self.err = proc.stderr

    def __repr__(self) -> str:
        return f"exit {self.code}\nstdout: {self.out}\nstderr: {self.err}"


def run(*args: str, stdin: Optional[str] = None, env: Optional[Dict[str, str]] = None, cwd=None) -> Run:
    """Runs `coffer ARGS` with stdin (text) and extra environment."""
    full_env = {k: v for k, v in os.environ.items() if k != "COFFER_KEY"}
    full_env.update(env or {})
    proc = subprocess.run([CLI, *args], input=stdin, capture_output=True, text=True, env=full_env, cwd=cwd, timeout=120)
    return Run(proc)


def ok(*args: str, **kw) -> str:
    """Runs the tool, asserts exit 0 and an empty stderr, returns stdout."""
    r = run(*args, **kw)
    assert r.code == 0, r
    assert r.err == "", r
    return r.out


@pytest.fixture
def key_files(tmp_path):
    """KEY as a hex file and OTHER_KEY as a raw 64-byte file."""
    hex_file = tmp_path / "key.hex"
    hex_file.write_text(KEY.hex() + "\n")
    raw_file = tmp_path / "other.key"
    raw_file.write_bytes(OTHER_KEY)
    return str(hex_file), str(raw_file)


# ---- a file with everything ---------------------------------------------------

SCALARS = ["bool", "int", "float", "double", "string", "data", "date", "objectId", "uuid", "decimal128"]

RICH_SCHEMA = [
    {
        "name": "Everything",
        "primaryKey": "id",
        "properties": {
            "id": "int",
            **{f"r_{t}": t for t in SCALARS},
            **{f"o_{t}": f"{t}?" for t in SCALARS},
            "ints": "int[]",
            "maybe_strings": "string?[]",
            "dates": "date<>",
            "doubles": "double{}",
            "blobs": "data?{}",
            "tags": "string<>",
            "floats": "float[]",
            "bools": "bool?[]",
            "uuids": "uuid<>",
            "oids": "objectId?[]",
            "decimals": "decimal128{}",
            "stamps": "date?{}",
            "friend": "Everything",
            "friends": "Everything[]",
            "pals": "Everything<>",
            "by_name": "Everything{}",
            "plain": "Plain",
            "address": {"type": "object", "objectType": "Address"},
            "addresses": {"type": "list", "objectType": "Address"},
            "address_map": {"type": "dictionary", "objectType": "Address"},
            "any": "mixed",
            "anys": "mixed[]",
            "any_map": "mixed{}",
        },
    },
    {
        "name": "Plain",
        "properties": {
            "label": "string",
            "back": "Everything",
            "linked_from": {"type": "linkingObjects", "objectType": "Everything", "property": "plain"},
        },
    },
    {
        "name": "Address",
        "embedded": True,
        "properties": {"street": "string", "resident": "Plain", "note": "mixed"},
    },
]

UTC = datetime.timezone.utc


def fill_rich(db) -> None:
    """Objects that use every property of RICH_SCHEMA, with edge values."""
    with db.write():
        p1 = db.create("Plain", {"label": "first"})
        p2 = db.create("Plain", {"label": "second \u00e9\u4e2d\n\t\"quoted\""})
        a = db.create("Everything", {
            "id": 1,
            "r_bool": True, "r_int": -(2 ** 63), "r_float": coffer.Float32(1.5), "r_double": 0.1,
            "r_string": "caf\u00e9 \U0001F600 \x01", "r_data": b"\x00\xff\x10", "r_date": datetime.datetime(1969, 12, 31, 23, 59, 59, 500000, tzinfo=UTC),
            "r_objectId": coffer.ObjectId("0123456789abcdef01234567"), "r_uuid": uuid.UUID("12345678-1234-5678-9abc-def012345678"),
            "r_decimal128": decimal.Decimal("-12.50"),
            "o_int": 2 ** 63 - 1, "o_double": float("inf"), "o_float": coffer.Float32(float("nan")), "o_string": "",
            "o_data": b"", "o_date": datetime.datetime(2262, 4, 11, tzinfo=UTC), "o_decimal128": decimal.Decimal("1E+6144"),
            "ints": [3, 1, 2, 2], "maybe_strings": ["x", None, ""], "dates": {datetime.datetime(2000, 1, 1, tzinfo=UTC)},
            "doubles": {"a": 1.0, "b": -0.0, "c": 1e300}, "blobs": {"k": b"bytes", "none": None}, "tags": {"red", "green"},
            "floats": [coffer.Float32(0.5), coffer.Float32(-3.25)], "bools": [True, None, False],
            "uuids": {uuid.UUID(int=1), uuid.UUID(int=2 ** 128 - 1)},
            "oids": [coffer.ObjectId("ffffffffffffffffffffffff"), None],
            "decimals": {"pi": decimal.Decimal("3.141592653589793238462643383279502"), "neg": decimal.Decimal("-0.00")},
            "stamps": {"old": datetime.datetime(1, 1, 1, tzinfo=UTC), "none": None},
            "plain": p1,
            "address": {"street": "Main 1", "resident": p2, "note": [1, "two"]},
            "addresses": [{"street": "S1", "resident": None, "note": None}, {"street": "S2", "resident": p1, "note": {"k": 2.5}}],
            "address_map": {"home": {"street": "H", "resident": None, "note": True}},
            "any": {"nested": [1, 2.5, "s", None, True, b"\x01", {"deep": [coffer.ObjectId("aaaaaaaaaaaaaaaaaaaaaaaa")]}],
                    "when": datetime.datetime(2024, 2, 29, 12, 0, 0, 1, tzinfo=UTC), "num": decimal.Decimal("3.14"),
                    "id": uuid.UUID("00000000-0000-0000-0000-000000000001"), "f": coffer.Float32(0.25), "whole": 2.0,
                    "link": p2},
            "anys": [1, "x", None, [], {}, p1],
            "any_map": {"i": 7, "l": [[1], {"m": None}]},
        })
        b = db.create("Everything", {"id": 2, "friend": a, "friends": [a, a], "pals": [a], "by_name": {"me": None, "a": a},
                                     "any": 42, "plain": p2})
        a.friend = b
        a.friends.append(b)
        a.friends.append(a)
        a.by_name["self"] = a
        p1.back = b
        db.create("Everything", {"id": 3, "any": None})


def make_rich_file(path: str, key: Optional[bytes] = None) -> None:
    with coffer.open(path, schema=RICH_SCHEMA, encryption_key=key) as db:
        fill_rich(db)


DOG_SCHEMA = [
    {
        "name": "Dog",
        "primaryKey": "id",
        "properties": {"id": "int", "name": {"type": "string", "indexed": True}, "age": "int", "owner": "Person"},
    },
    {"name": "Person", "primaryKey": "name", "properties": {"name": "string", "city": "string?"}},
]


def make_dog_file(path: str, key: Optional[bytes] = None, dogs: int = 5) -> None:
    with coffer.open(path, schema=DOG_SCHEMA, encryption_key=key) as db:
        with db.write():
            ann = db.create("Person", {"name": "Ann", "city": "Oslo, Norway"})
            for i in range(dogs):
                db.create("Dog", {"id": i, "name": f"dog{i}", "age": i % 4, "owner": ann if i % 2 else None})


# ---- a file made by the C API -----------------------------------------------------

C_PROGRAM = r"""
#include <coffer.h>
#include <stdio.h>
#include <string.h>
#define CHECK(x) do { if ((x) != COFFER_OK) { fprintf(stderr, "%s: %s\n", #x, coffer_last_error()); return 1; } } while (0)
static const coffer_property_schema props[] = {
    {"sku", COFFER_TYPE_STRING, COFFER_PROPERTY_PRIMARY_KEY, 0, NULL, NULL, {NULL, NULL}},
    {"qty", COFFER_TYPE_INT, COFFER_PROPERTY_INDEXED, 0, NULL, NULL, {NULL, NULL}},
    {"sizes", COFFER_TYPE_DOUBLE, 0, COFFER_COLLECTION_LIST, NULL, NULL, {NULL, NULL}},
};
static const coffer_class_schema classes[] = {{"Item", props, 3, 0, {NULL, NULL}}};
int main(int argc, char **argv)
{
    coffer_config *cfg;
    coffer_db *db;
    coffer_txn *txn;
    CHECK(coffer_config_new(&cfg));
    CHECK(coffer_config_set_path(cfg, argv[1]));
    if (argc > 2) {
        unsigned char key[64];
        for (int i = 0; i < 64; i++) key[i] = (unsigned char)i;
        CHECK(coffer_config_set_encryption_key(cfg, key, 64));
    }
    CHECK(coffer_config_set_schema(cfg, classes, 1, 3));
    CHECK(coffer_open(cfg, &db));
    coffer_config_free(cfg);
    CHECK(coffer_txn_begin(db, COFFER_TXN_WRITE, &txn));
    for (int i = 0; i < 3; i++) {
        char sku[16];
        snprintf(sku, sizeof sku, "sku-%d", i);
        coffer_value sizes[2] = {coffer_value_double(i + 0.5), coffer_value_double(-1)};
        coffer_field f[3] = {{0, coffer_value_string(sku, SIZE_MAX)}, {1, coffer_value_int(i * 10)},
                             {2, coffer_value_list(sizes, 2)}};
        CHECK(coffer_object_create(txn, 0, f, 3, COFFER_UPDATE_ERROR, NULL));
    }
    CHECK(coffer_txn_commit(txn));
    coffer_txn_free(txn);
    coffer_close(db);
    return 0;
}
"""


@pytest.fixture(scope="session")
def c_maker(tmp_path_factory) -> str:
    """A program that writes a file through the C API: `maker PATH [encrypt]`."""
    build = Path(os.environ.get("COFFER_BUILD_DIR", ROOT / "build"))
    library = build / "libcoffer.so"
    if not library.exists():
        pytest.skip(f"the C library is not built in {build}")
    folder = tmp_path_factory.mktemp("c-maker")
    source = folder / "maker.c"
    source.write_text(C_PROGRAM)
    binary = folder / "maker"
    cc = os.environ.get("CC", "cc")
    subprocess.run([cc, "-std=c11", "-o", str(binary), str(source), f"-I{ROOT / 'include'}", f"-L{build}", "-lcoffer",
                    f"-Wl,-rpath,{build}"], check=True)
    return str(binary)


def files_named(folder: Path, name: str) -> List[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith(name))
