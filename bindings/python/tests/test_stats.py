"""Database.stats(): file size and pages, per-class objects and index bytes,
the change log kept for readers, and the reader slots of the process."""

import os

import pytest
from conftest import KEY
from models import Dog

import coffer


@pytest.mark.parametrize("key", [None, KEY], ids=["plain", "encrypted"])
def test_stats_count_objects_indexes_and_pages(db_path, key):
    with coffer.open(db_path, schema=[Dog], encryption_key=key) as db:
        with db.write():
            for i in range(50):
                db.add(Dog(id=i, name=f"dog {i}"))
        stats = db.stats()
        assert isinstance(stats, coffer.FileStats)
        assert stats.file_size == os.path.getsize(db_path)
        assert stats.page_size >= 4096
        assert 0 <= stats.pages_free <= stats.pages_used
        assert stats.version > 0
        dogs = stats.classes["Dog"]
        assert dogs == coffer.ClassStats(50, dogs.object_bytes, 100, dogs.index_bytes)
        assert dogs.object_bytes > 0 and dogs.index_bytes > 0


def test_a_reader_is_listed_with_its_version(db_path):
    with coffer.open(db_path, schema=[Dog]) as db:
        with db.write():
            db.add(Dog(id=1, name="Rex"))
        with coffer.open(db_path, schema=[Dog]) as other:
            # A live result set keeps a read transaction of the other handle open.
            dogs = other.objects(Dog)
            assert len(dogs) == 1
            with db.write():
                db.add(Dog(id=2, name="Fido"))
            stats = db.stats()
            pids = [r.pid for r in stats.readers]
            assert os.getpid() in pids
            assert all(isinstance(r, coffer.ReaderInfo) for r in stats.readers)
            assert stats.changelog_entries >= 1
            assert stats.changelog_bytes > 0


def test_stats_of_a_closed_database(db_path):
    db = coffer.open(db_path, schema=[Dog])
    db.close()
    with pytest.raises(coffer.DatabaseClosedError):
        db.stats()
