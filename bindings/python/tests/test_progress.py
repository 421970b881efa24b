"""coffer.open(..., progress=f): the seed copy, the compact-on-launch check,
the compaction and the migration reported in order, each from 0 to its
total; returning False or raising cancels the open and leaves the file as
it was."""
import os

import pytest

import coffer
from coffer import ProgressPhase
from conftest import make_file

COUNT = 3000

V1 = [{"name": "Item", "properties": {"id": "int", "name": "string"}}]
V2 = [{"name": "Item", "properties": {"id": "int", "name": "string", "label": "string"}}]


def label_items(migration, old_version):
    for old, new in migration.enumerate_objects("Item"):
        new.label = f"label {old.id}"


@pytest.fixture
def seed(tmp_path, key):
    """A seed file at schema version 1 with COUNT items."""

    def fill(db):
        for i in range(COUNT):
            db.create("Item", {"id": i, "name": f"item {i}"})

    return make_file(tmp_path / "seed.coffer", V1, key, fill)


class Recorder:
    """Records the reports; cancels at report `at` of `phase` (-1: the
    last, done == total) by returning False, or by raising `error`."""

    def __init__(self, phase=None, at=0, error=None):
        self.reports = []
        self.phase, self.at, self.error = phase, at, error
        self._index = 0

    def __call__(self, phase, done, total):
        if self.reports and self.reports[-1][0] != phase:
            self._index = 0
        self.reports.append((phase, done, total))
        index, self._index = self._index, self._index + 1
        if phase == self.phase and (index == self.at or (self.at == -1 and done == total)):
            if self.error is not None:
                raise self.error
            return False
        return None

    def phases(self):
        out = []
        for phase, _, _ in self.reports:
            if not out or out[-1] != phase:
                out.append(phase)
        return out

    def of(self, phase):
        return [(done, total) for p, done, total in self.reports if p == phase]


def open_all(path, seed, key, progress):
    return coffer.open(path, schema=V2, schema_version=2, migration=label_items, seed_path=seed,
                       encryption_key=key, should_compact_on_launch=lambda total, used: True, progress=progress)


def test_phases_are_reported_in_order(tmp_path, seed, key):
    path = tmp_path / "app.coffer"
    progress = Recorder()
    with open_all(path, seed, key, progress) as db:
        assert len(db.objects("Item")) == COUNT
        assert db.objects("Item").filter("id == 7")[0].label == "label 7"
    assert progress.phases() == [ProgressPhase.SEED_COPY, ProgressPhase.SHOULD_COMPACT,
                                 ProgressPhase.COMPACTION, ProgressPhase.MIGRATION]
    for phase in progress.phases():
        reports = progress.of(phase)
        assert reports[0][0] == 0
        assert reports[-1][0] == reports[-1][1]
        fractions = [done / total if total else 1.0 for done, total in reports]
        assert fractions == sorted(fractions) and fractions[-1] == 1.0
        assert all(done < total for done, total in reports[1:-1])
    assert progress.of(ProgressPhase.SEED_COPY)[-1][1] == os.path.getsize(seed)
    assert progress.of(ProgressPhase.MIGRATION)[-1][1] == COUNT
    assert 10 < len(progress.of(ProgressPhase.MIGRATION)) <= 102

    # Nothing long the second time.
    again = Recorder()
    with open_all(path, seed, key, again):
        pass
    assert again.phases() == [ProgressPhase.SHOULD_COMPACT, ProgressPhase.COMPACTION]


def test_migration_progress_follows_the_work(tmp_path, seed, key):
    """The migration's fraction grows as the loop over enumerate_objects()
    handles objects, not when the objects are first collected."""
    handled = []
    seen = []

    def migrate(migration, old_version):
        for old, new in migration.enumerate_objects("Item"):
            new.label = f"label {old.id}"
            handled.append(old.id)

    def progress(phase, done, total):
        if phase == ProgressPhase.MIGRATION:
            seen.append((done, total, len(handled)))

    with coffer.open(seed, schema=V2, schema_version=2, migration=migrate, encryption_key=key,
                     progress=progress) as db:
        assert db.objects("Item").filter("id == 9")[0].label == "label 9"
    assert seen[0] == (0, COUNT, 0)
    assert seen[-1] == (COUNT, COUNT, COUNT)
    middle = seen[1:-1]
    assert len(middle) > 10
    assert all(done <= handled_then for done, _, handled_then in middle)
    assert any(handled_then < COUNT // 2 for _, _, handled_then in middle)


@pytest.mark.parametrize("at", [0, 1, -1])
@pytest.mark.parametrize("raising", [False, True], ids=["false", "raise"])
def test_cancel_seed_copy(tmp_path, seed, key, at, raising):
    path = tmp_path / "app.coffer"
    before = sorted(os.listdir(tmp_path))
    progress = Recorder(ProgressPhase.SEED_COPY, at, RuntimeError("stop") if raising else None)
    with pytest.raises(RuntimeError if raising else coffer.CancelledError, match="stop" if raising else "seed copy") as info:
        coffer.open(path, schema=V1, schema_version=1, seed_path=seed, encryption_key=key, progress=progress)
    if raising:
        assert isinstance(info.value.__cause__, coffer.CancelledError)
    assert sorted(os.listdir(tmp_path)) == before
    with coffer.open(path, schema=V1, schema_version=1, seed_path=seed, encryption_key=key) as db:
        assert len(db.objects("Item")) == COUNT


@pytest.mark.parametrize("phase, at", [
    (ProgressPhase.SHOULD_COMPACT, 0), (ProgressPhase.SHOULD_COMPACT, -1),
    (ProgressPhase.COMPACTION, 0), (ProgressPhase.COMPACTION, 1), (ProgressPhase.COMPACTION, -1),
    (ProgressPhase.MIGRATION, 0), (ProgressPhase.MIGRATION, 1), (ProgressPhase.MIGRATION, -1),
])
def test_cancel_leaves_the_file_as_it_was(tmp_path, seed, key, phase, at):
    with open(seed, "rb") as f:
        before = f.read()
    entries = sorted(os.listdir(tmp_path))
    compact = None if phase == ProgressPhase.MIGRATION else (lambda total, used: True)
    progress = Recorder(phase, at)
    with pytest.raises(coffer.CancelledError, match="cancelled"):
        coffer.open(seed, schema=V2, schema_version=2, migration=label_items, encryption_key=key,
                    should_compact_on_launch=compact, progress=progress)
    assert progress.reports[-1][0] == phase
    with open(seed, "rb") as f:
        assert f.read() == before
    assert sorted(os.listdir(tmp_path)) == entries
    with coffer.open(seed, schema=V1, schema_version=1, encryption_key=key) as db:
        assert db.schema_version == 1
        assert len(db.objects("Item")) == COUNT


def test_no_progress_without_long_steps(tmp_path):
    progress = Recorder()
    with coffer.open(tmp_path / "new.coffer", schema=V1, progress=progress):
        pass
    assert progress.reports == []


def test_progress_must_be_callable(tmp_path):
    with pytest.raises(TypeError, match="progress must be callable"):
        coffer.open(tmp_path / "x.coffer", schema=V1, progress=42)


@pytest.mark.parametrize("at", [0, 1, -1])
def test_write_copy_reports_and_cancels(tmp_path, seed, key, at):
    copy = tmp_path / "copy.coffer"
    with coffer.open(seed, encryption_key=key) as db:
        entries = sorted(os.listdir(tmp_path))
        with pytest.raises(coffer.CancelledError, match="copy"):
            db.write_copy(copy, encryption_key=key, progress=Recorder(ProgressPhase.COPY, at))
        with pytest.raises(RuntimeError, match="stop") as info:
            db.write_copy(copy, encryption_key=key, progress=Recorder(ProgressPhase.COPY, at, RuntimeError("stop")))
        assert isinstance(info.value.__cause__, coffer.CancelledError)
        assert sorted(os.listdir(tmp_path)) == entries
        progress = Recorder()
        db.write_copy(copy, encryption_key=key, progress=progress)
    assert progress.phases() == [ProgressPhase.COPY]
    reports = progress.of(ProgressPhase.COPY)
    assert reports[0][0] == 0 and reports[-1][0] == reports[-1][1] and len(reports) >= 3
    with coffer.open(copy, encryption_key=key) as copied:
        assert len(copied.objects("Item")) == COUNT
    other = tmp_path / "other.coffer"
    with coffer.open(seed, encryption_key=key) as db:
        db.write_copy(other, encryption_key=key)  # no progress: as before
    with coffer.open(other, encryption_key=key) as copied:
        assert len(copied.objects("Item")) == COUNT
