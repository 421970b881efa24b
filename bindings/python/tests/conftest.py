import os
import uuid

import pytest

import coffer

KEY = bytes(range(64))
OTHER_KEY = bytes(range(1, 65))


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
