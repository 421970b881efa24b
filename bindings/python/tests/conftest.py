import ctypes
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


def _new_files_in_storage_format(storage_format: int) -> None:
    """Makes every database the tests open a new file of `storage_format`
    (as COFFER_TEST_STORAGE_FORMAT does for the C suites): the
    configuration the binding creates gets it before anything else."""
    from coffer import _capi

    set_format = _capi._status("coffer_config_set_storage_format", _capi.ConfigP, ctypes.c_uint)
    new_config = _capi.coffer_config_new

    def new_config_in_format(out: "ctypes._CArgObject") -> None:
        new_config(out)
        set_format(out._obj, storage_format)

    _capi.coffer_config_new = new_config_in_format


if os.environ.get("COFFER_TEST_STORAGE_FORMAT"):
    _new_files_in_storage_format(int(os.environ["COFFER_TEST_STORAGE_FORMAT"]))


@pytest.fixture
def rows_db(db_path):
    """An open database of models_rows' classes, Row and Loose."""
    from models_rows import Loose, Row

    with coffer.open(db_path, schema=[Row, Loose]) as database:
        yield database
