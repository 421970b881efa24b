import gc
import os
import subprocess
import sys
import textwrap

import pytest
from models import Dog

import coffer


def test_closed_database_raises_instead_of_crashing(db_path):
    db = coffer.open(db_path, schema=[Dog])
    with db.write():
        rex = db.add(Dog(id=1, name="Rex"))
    dogs = db.objects(Dog)
    db.close()
    db.close()  # closing twice is allowed
    assert db.is_closed and not rex.is_valid
    calls = [
        lambda: db.objects(Dog),
        lambda: db.write().__enter__(),
        lambda: db.create(Dog, {"id": 2}),
        lambda: db.object_for_primary_key(Dog, 1),
        lambda: db.delete(rex),
        lambda: db.path,
        lambda: db.schema,
        lambda: db.refresh(),
        lambda: rex.name,
        lambda: rex.to_dict(),
        lambda: rex.to_tuple(),
        lambda: list(dogs.tuples()),
        lambda: dogs.filter("id == $0", 1),
        lambda: len(dogs),
        lambda: list(dogs),
        lambda: dogs[0],
    ]
    for call in calls:
        with pytest.raises(coffer.DatabaseClosedError, match="the database is closed"):
            call()
    assert repr(rex) == "<Dog (database closed)>"
    assert "closed" in repr(dogs)


def test_context_manager_closes(db_path):
    with coffer.open(db_path, schema=[Dog]) as db:
        pass
    assert db.is_closed
    with pytest.raises(coffer.DatabaseClosedError):
        with db:
            pass


def test_close_inside_a_write_commits_nothing(db_path):
    db = coffer.open(db_path, schema=[Dog])
    with pytest.raises(coffer.DatabaseClosedError, match="nothing was committed"):
        with db.write():
            db.add(Dog(id=1))
            db.close()
    with coffer.open(db_path, schema=[Dog]) as again:
        assert len(again.objects(Dog)) == 0


def test_exception_after_close_inside_a_write_propagates(db_path):
    db = coffer.open(db_path, schema=[Dog])
    with pytest.raises(KeyError, match="mine"):
        with db.write():
            db.close()
            raise KeyError("mine")


def test_finalizer_closes_a_forgotten_database(memory_id):
    db = coffer.open(in_memory_identifier=memory_id, schema=[Dog])
    with db.write():
        db.add(Dog(id=1))
    assert len(db.objects(Dog)) == 1  # also holds a read snapshot open
    finalizer = db._finalizer
    del db
    gc.collect()
    assert not finalizer.alive
    # The in-memory store is discarded when its last handle closes.
    with coffer.open(in_memory_identifier=memory_id, schema=[Dog]) as again:
        assert len(again.objects(Dog)) == 0


def test_objects_keep_their_database_alive(memory_id):
    db = coffer.open(in_memory_identifier=memory_id, schema=[Dog])
    with db.write():
        rex = db.add(Dog(id=1, name="Rex"))
    del db
    gc.collect()
    assert rex.name == "Rex"


def test_interpreter_exit_with_open_handles_is_clean(tmp_path):
    path = str(tmp_path / "exit.coffer")
    script = textwrap.dedent(
        f"""
        import coffer
        schema = [{{"name": "Item", "properties": {{"n": "int"}}}}]
        db = coffer.open({path!r}, schema=schema)
        with db.write():
            db.create("Item", {{"n": 1}})
        items = db.objects("Item")
        assert len(items) == 1
        writer = db.write()
        writer.__enter__()
        db.create("Item", {{"n": 2}})
        # Exit with a read snapshot and an uncommitted write still open.
        """
    )
    env = dict(os.environ)
    run = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    with coffer.open(path) as db:
        assert [item.n for item in db.objects("Item")] == [1]


def test_a_database_is_used_by_the_thread_that_opened_it(db_path):
    import threading

    db = coffer.open(db_path, schema=[Dog])
    with db.write():
        db.add(Dog(id=1, name="Rex"))
    rex = db.objects(Dog)[0]
    dogs = db.objects(Dog)
    assert len(dogs.filter("id == $0", 1)) == 1  # prepared: the next filter() with an int is the short path
    errors = []

    def elsewhere():
        for call in (lambda: db.objects(Dog), lambda: rex.name, db.close, lambda: db.write().__enter__(),
                     lambda: db.object_for_primary_key(Dog, 1), lambda: dogs.filter("id == $0", 1),
                     lambda: len(dogs), lambda: list(dogs.tuples())):
            try:
                call()
            except coffer.MisuseError as exc:
                errors.append(str(exc))
        # A handle of its own works in this thread.
        with coffer.open(db_path, schema=[Dog]) as own:
            errors.append(own.objects(Dog)[0].name)

    worker = threading.Thread(target=elsewhere)
    worker.start()
    worker.join()
    assert errors[:8] == ["this Database was opened on another thread; open one in each thread that uses it"] * 8
    assert errors[8] == "Rex"
    assert rex.name == "Rex"
    db.close()
