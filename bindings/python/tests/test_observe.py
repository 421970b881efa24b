"""Observers: exact change sets of results (under sort, distinct, limit and
chained queries), objects and lists; key paths; delivery on the notifier
thread, inside refresh(), on an asyncio loop and through `async for`;
commits of another process; tokens stopped from their callback, from
another thread, by the garbage collector and by closing; commits without
notifying; in-memory and encrypted files; exceptions in callbacks."""

import asyncio
import gc
import logging
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from conftest import KEY
from models_observe import KENNEL, Dog, Owner
from observe_recorder import QUIET, Recorder, observed, told

import coffer

@pytest.fixture
def db(db_path):
    with coffer.open(db_path, schema=KENNEL) as handle:
        yield handle


@pytest.fixture
def manual(db):
    """A database whose observers are told only by refresh(), on this thread."""
    db.auto_refresh = False
    return db


def add_dogs(db, *ages):
    with db.write():
        last = db.objects(Dog).max("id")
        start = 0 if last is None else last + 1
        return [db.add(Dog(id=start + i, name=f"dog{start + i}", age=age)) for i, age in enumerate(ages)]


def indices(change):
    return change.deletions, change.insertions, change.modifications, change.modifications_new


# ---- results ---------------------------------------------------------------


def test_results_report_insertions_modifications_and_deletions(manual):
    a, b, _ = add_dogs(manual, 1, 2, 30)
    recorder, token = observed(manual, manual.objects(Dog).filter("age < $0", 10))
    add_dogs(manual, 4)
    assert indices(told(manual, recorder, 2)) == ([], [2], [], [])
    with manual.write():
        b.age = 5
    assert indices(told(manual, recorder, 3)) == ([], [], [1], [1])
    with manual.write():
        manual.delete(a)
    assert indices(told(manual, recorder, 4)) == ([0], [], [], [])
    add_dogs(manual, 50)  # matches nothing observed
    told(manual, recorder, 4)
    token.stop()


def test_sorted_results_report_a_reorder_as_deletion_and_insertion(manual):
    dogs = add_dogs(manual, 10, 20, 30)
    recorder, _token = observed(manual, manual.objects(Dog).sorted("age"))
    with manual.write():
        dogs[0].age = 25  # 20, 25, 30
    change = told(manual, recorder, 2)
    assert indices(change) == ([0], [1], [], []) and change.moves == []
    with manual.write():
        dogs[2].age = 31  # stays last
    assert indices(told(manual, recorder, 3)) == ([], [], [2], [2])


def test_distinct_results_report_the_first_of_each_value(manual):
    dogs = add_dogs(manual, 1, 1, 2)
    recorder, _token = observed(manual, manual.objects(Dog).distinct("age"))
    with manual.write():
        manual.delete(dogs[0])  # dogs[1] now stands for age 1
    assert indices(told(manual, recorder, 2)) == ([0], [0], [], [])
    add_dogs(manual, 3)
    assert indices(told(manual, recorder, 3)) == ([], [2], [], [])


def test_limited_sorted_filtered_results_are_observed_as_one_query(manual):
    dogs = add_dogs(manual, 5, 15, 25, 35)
    results = manual.objects(Dog).filter("age > $0", 10).sorted("age", ascending=False).limit(2)
    assert [d.age for d in results] == [35, 25]
    recorder, _token = observed(manual, results)
    add_dogs(manual, 30)  # 35, 30: 25 drops out of the limit
    assert indices(told(manual, recorder, 2)) == ([1], [1], [], [])
    with manual.write():
        dogs[3].age = 12  # 30, 25
    assert indices(told(manual, recorder, 3)) == ([0], [1], [], [])


def test_chained_filters_keep_their_arguments_and_string_literals(manual):
    add_dogs(manual, 1, 2, 3)
    results = manual.objects(Dog).filter("name != $0 AND name != 'x $0 SORT(a)'", "dog0").filter("age < $0", 3)
    recorder, _token = observed(manual, results)
    add_dogs(manual, 0, 9)  # dog3 matches, dog4 does not
    assert indices(told(manual, recorder, 2)) == ([], [1], [], [])


def test_a_filter_after_a_limit_cannot_be_observed(db):
    with pytest.raises(coffer.QueryError, match="filter first"):
        db.objects(Dog).limit(2).filter("age > 1").observe(Recorder())


def test_results_of_a_list_are_observed_in_the_lists_order(manual):
    with manual.write():
        owner = manual.add(Owner(id=1, dogs=[Dog(id=1, age=5), Dog(id=2, age=1), Dog(id=3, age=4)]))
    recorder, token = observed(manual, owner.dogs.filter("age > 2"))  # dogs 1 and 3
    with manual.write():
        owner.dogs[0].age = 0
    assert indices(told(manual, recorder, 2)) == ([0], [], [], [])
    with manual.write():
        owner.dogs.append(Dog(id=4, age=9))
        owner.dogs[2].age = 7
    assert indices(told(manual, recorder, 3)) == ([], [1], [0], [0])
    token.stop()


# ---- key paths -------------------------------------------------------------


def test_key_paths_restrict_modifications(manual):
    with manual.write():
        rex = manual.add(Dog(id=1, name="Rex", owner=Owner(id=1, name="Ann")))
    by_name, _t1 = observed(manual, manual.objects(Dog), ["name"])
    by_owner, _t2 = observed(manual, manual.objects(Dog), ["owner.name"])
    none, _t3 = observed(manual, manual.objects(Dog), [])
    with manual.write():
        rex.age = 4  # on no path
    manual.refresh()
    assert [len(r.changes) for r in (by_name, by_owner, none)] == [1, 1, 1]
    with manual.write():
        rex.name = "Rexy"
    assert indices(told(manual, by_name, 2)) == ([], [], [0], [0])
    with manual.write():
        rex.owner.name = "Anna"
    assert indices(told(manual, by_owner, 2)) == ([], [], [0], [0])
    add_dogs(manual, 1)  # an insertion counts for every observer
    manual.refresh()
    assert [len(r.changes) for r in (by_name, by_owner, none)] == [3, 3, 2]


def test_a_key_path_through_a_list(manual):
    with manual.write():
        owner = manual.add(Owner(id=1, dogs=[Dog(id=1), Dog(id=2)]))
    recorder, _token = observed(manual, manual.objects(Owner), ["dogs.age"])
    with manual.write():
        owner.dogs[1].name = "not on the path"
    told(manual, recorder, 1)
    with manual.write():
        owner.dogs[1].age = 7
    assert indices(told(manual, recorder, 2)) == ([], [], [0], [0])


@pytest.mark.parametrize("observe", [
    lambda db: db.objects(Dog).observe(Recorder(), ["owner.nmae"]),
    lambda db: db.objects(Dog)[0].observe(Recorder(), ["owner.nmae"]),
    lambda db: db.objects(Owner)[0].dogs.observe(Recorder(), ["owner.nmae"]),
])
def test_an_unknown_key_path_is_named(db, observe):
    with db.write():
        db.add(Owner(id=1, dogs=[Dog(id=1)]))
    with pytest.raises(coffer.QueryError, match="nmae"):
        observe(db)


# ---- objects ---------------------------------------------------------------


def test_object_changes_carry_old_and_new_values(manual):
    with manual.write():
        rex = manual.add(Dog(id=1, name="Rex", age=3))
        ann = manual.add(Owner(id=2, name="Ann"))
    recorder, _token = observed(manual, rex)
    with manual.write():
        rex.age = 4
        rex.name = "Rexy"
        rex.owner = ann
    change = told(manual, recorder, 2)
    assert not change.deleted and not change.initial
    assert [(c.name, c.old_value, c.new_value) for c in change.changes] == [
        ("name", "Rex", "Rexy"), ("age", 3, 4), ("owner", None, ann)]
    add_dogs(manual, 1)  # another object
    told(manual, recorder, 2)
    with manual.write():
        manual.delete(rex)
    change = told(manual, recorder, 3)
    assert change.deleted and change.changes == []


def test_object_key_paths_and_list_properties(manual):
    with manual.write():
        owner = manual.add(Owner(id=1, name="Ann", dogs=[Dog(id=1)]))
    by_name, _t1 = observed(manual, owner, ["name"])
    every, _t2 = observed(manual, owner)
    with manual.write():
        owner.dogs.append(Dog(id=2))
    assert told(manual, by_name, 1) and len(every.changes) == 2
    # A collection's values are read from the object, not carried along.
    assert [(c.name, c.old_value, c.new_value) for c in every.changes[1].changes] == [("dogs", None, None)]


def test_a_deleted_or_unmanaged_object_cannot_be_observed(db):
    (dog,) = add_dogs(db, 1)
    with db.write():
        db.delete(dog)
    with pytest.raises(coffer.InvalidObjectError):
        dog.observe(Recorder())
    with pytest.raises(coffer.InvalidObjectError):
        Dog(id=9).observe(Recorder())


# ---- lists -----------------------------------------------------------------


def test_list_moves_element_changes_clearing_and_deletion(manual):
    with manual.write():
        owner = manual.add(Owner(id=1, dogs=[Dog(id=i, age=i) for i in range(4)]))
    recorder, _token = observed(manual, owner.dogs)
    ages, _t2 = observed(manual, owner.dogs, ["age"])
    with manual.write():
        owner.dogs.move(0, 2)
    assert told(manual, recorder, 2).moves == [(0, 2)]
    with manual.write():
        owner.dogs[3].name = "renamed"  # not on the path of `ages`
    assert indices(told(manual, recorder, 3)) == ([], [], [3], [3])
    assert len(ages.changes) == 2
    with manual.write():
        owner.dogs.clear()
    assert told(manual, recorder, 4).cleared
    with manual.write():
        owner.dogs.extend(manual.objects(Dog))
        owner.dogs.append(manual.objects(Dog)[0])
    assert told(manual, recorder, 5).insertions == [0, 1, 2, 3, 4]
    with manual.write():
        manual.delete(owner)
    change = told(manual, recorder, 6)
    assert change.root_deleted and change.deletions == [0, 1, 2, 3, 4]


# ---- delivery --------------------------------------------------------------


def test_notifier_thread_delivers_without_the_observer_calling_anything(db):
    recorder = Recorder()
    with db.objects(Dog).observe(recorder):
        assert recorder.wait(1).initial
        add_dogs(db, 1)
        assert recorder.wait(2).insertions == [0]
    assert threading.get_ident() not in recorder.threads


CHILD = """
import sys
sys.path[:0] = [{tests!r}]
import coffer
from models_observe import KENNEL, Dog
with coffer.open({path!r}, schema=KENNEL) as db:
    with db.write():
        db.add(Dog(id=77, name="far"))
"""


def test_a_commit_of_another_process_is_delivered(db, db_path):
    recorder = Recorder()
    token = db.observe(recorder)
    code = CHILD.format(tests=str(Path(__file__).parent), path=db_path)
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60,
                   env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
    change = recorder.wait(1)
    assert change.new_version > change.old_version
    token.stop()
    db.refresh()
    assert db.objects(Dog)[0].name == "far"


def test_refresh_delivers_on_the_calling_thread_when_auto_refresh_is_off(manual):
    assert manual.auto_refresh is False
    recorder = Recorder()
    token = manual.observe(recorder)
    before = manual.version
    add_dogs(manual, 1)
    assert recorder.stays_at(0)  # nothing without a refresh
    change = told(manual, recorder, 1)
    assert (change.old_version, change.new_version) == (before, before + 1) == (before, manual.version)
    told(manual, recorder, 1)  # nothing new
    assert recorder.threads == [threading.get_ident()]
    token.stop()
    manual.auto_refresh = True
    assert manual.auto_refresh is True


def test_tokens_stop_inside_their_callback(db):
    def stop_at_second(change):
        if len(recorder.changes) == 2:
            token.stop()
    recorder = Recorder(then=stop_at_second)
    token = db.observe(recorder)
    add_dogs(db, 1)
    recorder.wait(1)
    add_dogs(db, 2)
    recorder.wait(2)
    add_dogs(db, 3)
    assert recorder.stays_at(2) and not token.is_active


def test_a_token_stopped_from_another_thread_waits_for_its_running_callback(db):
    running, leave = threading.Event(), threading.Event()
    finished = []

    def slow(change):
        running.set()
        leave.wait(5)
        finished.append(change)

    token = db.observe(slow)
    add_dogs(db, 1)
    assert running.wait(5)
    stopper = threading.Thread(target=token.stop)
    stopper.start()
    stopper.join(0.1)
    assert stopper.is_alive()  # waits for the callback
    leave.set()
    stopper.join(5)
    assert not stopper.is_alive() and len(finished) == 1
    add_dogs(db, 2)
    time.sleep(QUIET)
    assert len(finished) == 1


def test_a_collected_token_and_closing_stop_observers(db):
    recorder = Recorder()
    db.objects(Dog).observe(recorder)  # the token is dropped at once
    gc.collect()
    # The notifier thread may have delivered the initial call before the
    # token was collected; once collected, nothing more arrives.
    seen = len(recorder.changes)
    assert seen <= 1 and all(change.initial for change in recorder.changes), recorder.changes
    add_dogs(db, 1)
    assert recorder.stays_at(seen)
    with db.objects(Dog).observe(recorder) as token:
        assert recorder.wait(seen + 1).initial
    assert not token.is_active
    kept = db.observe(recorder)
    db.close()
    assert not kept.is_active
    kept.stop()  # after closing: nothing to do


def test_commits_without_notifying_skip_the_given_observers(manual):
    (dog,) = add_dogs(manual, 1)
    told_, told_token = observed(manual, manual.objects(Dog))
    untold, untold_token = observed(manual, manual.objects(Dog))
    with manual.write(without_notifying=[untold_token]):
        dog.age = 7
    assert indices(told(manual, told_, 2)) == ([], [], [0], [0])
    assert len(untold.changes) == 1
    add_dogs(manual, 2)
    assert told(manual, untold, 2).insertions == [1]
    with pytest.raises(TypeError):
        with manual.write(without_notifying=told_token):
            pass


@pytest.mark.parametrize("options", ["memory", "encrypted"])
def test_observers_of_in_memory_and_encrypted_databases(db_path, memory_id, options):
    kwargs = {"in_memory_identifier": memory_id} if options == "memory" else {"path": db_path, "encryption_key": KEY}
    with coffer.open(schema=KENNEL, **kwargs) as db:
        recorder = Recorder()
        with db.objects(Dog).sorted("age").observe(recorder):
            recorder.wait(1)
            add_dogs(db, 5, 3)
            assert recorder.wait(2).insertions == [0, 1]
            rex = db.objects(Dog)[0]
            with rex.observe(recorder):
                recorder.wait(3)
                with db.write():
                    rex.name = "Rex"
                assert recorder.wait(5) is not None


def test_exceptions_in_callbacks_are_logged_and_later_changes_still_come(db, caplog):
    def failing(change):
        if not change.initial:
            raise ValueError("boom")
    recorder = Recorder(then=failing)
    with caplog.at_level(logging.ERROR, logger="coffer"):
        with db.objects(Dog).observe(recorder):
            recorder.wait(1)
            add_dogs(db, 1)
            recorder.wait(2)
            add_dogs(db, 2)
            assert recorder.wait(3).insertions == [1]
    failures = [r for r in caplog.records if r.name == "coffer" and r.exc_info]
    assert len(failures) == 2 and "boom" in str(failures[0].exc_info[1])


# ---- asyncio ---------------------------------------------------------------


def test_loop_delivery_runs_callbacks_on_the_loop(db):
    async def main():
        loop = asyncio.get_running_loop()
        got = asyncio.Queue()
        with db.objects(Dog).observe(lambda change: got.put_nowait((change, threading.get_ident())), loop=loop):
            first, thread = await asyncio.wait_for(got.get(), 5)
            assert first.initial and thread == threading.get_ident()
            add_dogs(db, 1)
            change, thread = await asyncio.wait_for(got.get(), 5)
            assert change.insertions == [0] and thread == threading.get_ident()

    asyncio.run(main())


def test_async_iteration_of_results_objects_lists_and_the_database(db):
    with db.write():
        owner = db.add(Owner(id=1, dogs=[Dog(id=1)]))
    dog = db.objects(Dog)[0]

    async def main():
        async with db.objects(Dog).changes() as results, dog.changes() as dog_changes, \
                owner.dogs.changes() as dogs, db.changes() as versions:
            assert (await anext_(results)).initial and (await anext_(dog_changes)).initial
            assert (await anext_(dogs)).initial
            with db.write():
                dog.age = 3
            assert (await anext_(results)).modifications == [0]
            assert [c.name for c in (await anext_(dog_changes)).changes] == ["age"]
            assert (await anext_(dogs)).modifications == [0]
            assert (await anext_(versions)).new_version == db.version
            with db.write():
                db.delete(dog)
            assert (await anext_(dog_changes)).deleted
            assert (await anext_(versions)).new_version == db.version
            assert [c async for c in dog_changes] == []  # ended by the deletion
            versions.stop()
            assert [c async for c in versions] == []

    asyncio.run(main())


async def anext_(stream):
    return await asyncio.wait_for(stream.__anext__(), 5)
