"""coffer.open(durability=...): every level commits and reads back its level,
bad values are refused by name, handles of a file must agree."""
import pytest

import coffer
from coffer import Durability


class Item(coffer.Object):
    id: int = coffer.primary_key()


@pytest.mark.parametrize("level", [Durability.FULL, Durability.NORMAL, Durability.NONE, "normal", "None"])
def test_each_level_commits_and_reads_back(tmp_path, level):
    path = tmp_path / "d.coffer"
    with coffer.open(path, schema=[Item], durability=level) as db:
        expected = level if isinstance(level, Durability) else Durability[level.upper()]
        assert db.durability is expected
        with db.write():
            db.add(Item(id=1))
        db.flush_to_disk()
    with coffer.open(path, schema=[Item]) as db:
        assert db.durability is Durability.FULL
        assert len(db.objects(Item)) == 1


def test_default_is_full_and_memory_is_none(tmp_path):
    with coffer.open(tmp_path / "d.coffer", schema=[Item]) as db:
        assert db.durability is Durability.FULL
    with coffer.open(in_memory_identifier="durability-py", schema=[Item], durability="full") as db:
        assert db.durability is Durability.NONE


def test_bad_values_are_refused(tmp_path):
    with pytest.raises(ValueError, match="'sometimes'"):
        coffer.open(tmp_path / "d.coffer", schema=[Item], durability="sometimes")
    with pytest.raises(TypeError, match="int"):
        coffer.open(tmp_path / "d.coffer", schema=[Item], durability=1)


def test_second_handle_must_agree(tmp_path):
    path = tmp_path / "d.coffer"
    with coffer.open(path, schema=[Item], durability=Durability.NORMAL):
        with pytest.raises(coffer.BusyError, match="durability normal .* durability full"):
            coffer.open(path, schema=[Item])
        with coffer.open(path, schema=[Item], durability="normal") as second:
            assert second.durability is Durability.NORMAL
