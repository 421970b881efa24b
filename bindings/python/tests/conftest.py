import os
import uuid

import pytest

import coffer

KEY = bytes(range(64))
OTHER_KEY = bytes(range(1, 65))


@pytest.fixture(params=[None, KEY], ids=["plain", "encrypted"])
def key(request):
    """The encryption key of a test run on a plain and an encrypted file: None, then KEY."""
    return request.param


def make_file(path, schema, key, fill, schema_version=1):
    """Creates the database at `path` with `schema` at `schema_version`
    (encrypted with `key` unless None), calls fill(db) in one write
    transaction, and returns `path`."""
    with coffer.open(path, schema=schema, schema_version=schema_version, encryption_key=key) as db:
        with db.write():
            fill(db)
    return path


@pytest.fixture
def db_path(tmp_path):
    """A path for a new database file inside a fresh folder."""
    return str(tmp_path / "test.coffer")


@pytest.fixture
def memory_id():
    """An in-memory identifier no other test uses."""
    return f"test-{uuid.uuid4()}"


@pytest.fixture
def in_cwd(tmp_path, monkeypatch):
    """Runs the test inside a fresh folder."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


def files_in(folder):
    return sorted(os.listdir(folder))
