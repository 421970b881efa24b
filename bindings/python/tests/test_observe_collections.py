"""Observers of sets and dictionaries (positions in a set's order, keys of a
dictionary), lists seen through a query and lists of values seen sorted or
distinct; the deletion of the owning object; in-memory and encrypted
databases; what cannot be observed; delivery through a scheduler; and the
origin of commits."""

import asyncio
import logging
import threading

import pytest
from conftest import KEY
from models_holder import SHELF, Holder, Toy
from observe_recorder import Recorder, observed, told

import coffer

@pytest.fixture
def manual(db_path):
    """A database whose observers are told only by refresh(), on this thread."""
    with coffer.open(db_path, schema=SHELF) as db:
        db.auto_refresh = False
        yield db


def holder_with(db, **values):
    with db.write():
        return db.add(Holder(id=1, **values))


# ---- sets --------------------------------------------------------------------


def test_a_set_reports_positions_in_its_order(manual):
    holder = holder_with(manual, tags={"brown", "small"})
    recorder, token = observed(manual, holder.tags)
    with manual.write():
        holder.tags.add("loud")
    change = told(manual, recorder, 2)
    assert change.insertions == [list(holder.tags).index("loud")]
    assert change.deletions == change.modifications == change.moves == []

    small = list(holder.tags).index("small")
    with manual.write():
        holder.tags.discard("small")
        holder.scores["unrelated"] = 1  # another property: not this set's change
    assert told(manual, recorder, 3).deletions == [small]

    with manual.write():
        holder.tags.clear()
    change = told(manual, recorder, 4)
    assert change.deletions == [0, 1] and change.cleared

    with manual.write():
        holder.tags.add("new")
    told(manual, recorder, 5)
    with manual.write():
        manual.delete(holder)
    change = told(manual, recorder, 6)
    assert change.root_deleted and change.deletions == [0]
    assert coffer.CollectionChange(root_deleted=True).root_deleted
    token.stop()


def test_a_set_of_objects_reports_changed_objects_by_key_path(manual):
    holder = holder_with(manual, toys={Toy(id=1, name="ball"), Toy(id=2, name="kite")})
    everything, t1 = observed(manual, holder.toys)
    by_name, t2 = observed(manual, holder.toys, ["name"])
    kite = manual.object_for_primary_key(Toy, 2)
    at = list(holder.toys).index(kite)
    with manual.write():
        kite.size = 3
    change = told(manual, everything, 2)
    assert (change.modifications, change.modifications_new) == ([at], [at])
    assert len(by_name.changes) == 1
    with manual.write():
        kite.name = "big kite"
    assert told(manual, by_name, 2).modifications == [at]
    with manual.write():
        manual.delete(kite)
    assert told(manual, everything, 4).deletions == [at]
    t1.stop()
    t2.stop()


def test_results_of_a_set_cannot_be_observed(manual):
    holder = holder_with(manual, toys={Toy(id=1)})
    with pytest.raises(coffer.InvalidArgumentError, match="observe the set itself"):
        holder.toys.filter("size > 1").observe(Recorder())


# ---- dictionaries ----------------------------------------------------------


def test_a_dictionary_reports_keys(manual):
    holder = holder_with(manual, scores={"x": 1, "y": 2})
    recorder, token = observed(manual, holder.scores)
    assert recorder.changes[0] == coffer.MapChange(initial=True)
    with manual.write():
        holder.scores["z"] = 3
        holder.scores["x"] = 5
        del holder.scores["y"]
    change = told(manual, recorder, 2)
    assert (change.deletions, change.insertions, change.modifications) == (["y"], ["z"], ["x"])
    assert not change.cleared and not change.root_deleted
    with manual.write():
        holder.scores["x"] = 5  # the same value: nothing changed
    manual.refresh()
    assert len(recorder.changes) == 2
    with manual.write():
        holder.scores.clear()
    change = told(manual, recorder, 3)
    assert sorted(change.deletions) == ["x", "z"] and change.cleared
    with manual.write():
        holder.scores["w"] = 1
    told(manual, recorder, 4)
    with manual.write():
        manual.delete(holder)
    assert told(manual, recorder, 5) == coffer.MapChange(deletions=["w"], root_deleted=True)
    token.stop()


def test_a_dictionary_of_objects_reports_changed_and_deleted_objects(manual):
    holder = holder_with(manual, named_toys={"first": Toy(id=1), "second": Toy(id=2)})
    recorder, token = observed(manual, holder.named_toys, ["name"])
    second = manual.object_for_primary_key(Toy, 2)
    with manual.write():
        second.size = 9  # not on the key path
    manual.refresh()
    assert len(recorder.changes) == 1
    with manual.write():
        second.name = "two"
    assert told(manual, recorder, 2).modifications == ["second"]
    with manual.write():
        manual.delete(manual.object_for_primary_key(Toy, 1))  # the entry stays, as None
    assert told(manual, recorder, 3).modifications == ["first"]
    assert holder.named_toys["first"] is None
    token.stop()


# ---- lists seen sorted or through a query ----------------------------------


def test_a_list_of_values_seen_sorted_and_distinct(manual):
    holder = holder_with(manual, numbers=[3, 1, 2, 1])
    descending = holder.numbers.sorted(ascending=False)
    distinct = holder.numbers.distinct()
    assert list(descending) == [3, 2, 1, 1] and list(distinct) == [3, 1, 2]
    assert list(holder.numbers.sorted("self").distinct("self")) == [1, 2, 3]
    sorted_changes, t1 = observed(manual, descending)
    distinct_changes, t2 = observed(manual, distinct)
    with manual.write():
        holder.numbers.append(9)
    assert told(manual, sorted_changes, 2).insertions == [0]
    assert distinct_changes.changes[-1].insertions == [3]
    with manual.write():
        holder.numbers[0] = 2  # 2 1 2 1 9
    change = told(manual, sorted_changes, 3)
    assert (change.deletions, change.insertions, change.modifications) == ([], [], [1])
    change = distinct_changes.changes[-1]
    assert (change.deletions, change.modifications, change.modifications_new) == ([2], [0], [0])
    with manual.write():
        manual.delete(holder)
    assert told(manual, sorted_changes, 4).root_deleted
    t1.stop()
    t2.stop()


def test_what_a_list_of_values_cannot_be_seen_through(manual):
    holder = holder_with(manual, numbers=[1], extra=[1, 2])
    with pytest.raises(coffer.InvalidArgumentError, match="\"self\""):
        holder.numbers.sorted("age")
    with pytest.raises(coffer.InvalidArgumentError, match="\"self\""):
        holder.numbers.distinct("age")
    with pytest.raises(coffer.PropertyTypeError, match="only lists and sets of objects"):
        holder.numbers.filter("self > 1")
    with pytest.raises(coffer.PropertyTypeError, match="not collections nested"):
        holder.extra.observe(Recorder())


# ---- other databases and the asyncio stream --------------------------------


@pytest.mark.parametrize("options", ["memory", "encrypted"])
def test_sets_and_dictionaries_of_in_memory_and_encrypted_databases(db_path, memory_id, options):
    kwargs = {"in_memory_identifier": memory_id} if options == "memory" else {"path": db_path, "encryption_key": KEY}
    with coffer.open(schema=SHELF, **kwargs) as db:
        with db.write():
            holder = db.add(Holder(id=1, tags={"a"}, scores={"a": 1}))
        tags, scores = Recorder(), Recorder()
        with holder.tags.observe(tags), holder.scores.observe(scores):
            tags.wait(1)
            scores.wait(1)
            with db.write():
                holder.tags.add("b")
                holder.scores["b"] = 2
            assert tags.wait(2).insertions == [list(holder.tags).index("b")]
            assert scores.wait(2).insertions == ["b"]
            with db.write():
                db.delete(holder)
            assert tags.wait(3).root_deleted and scores.wait(3).root_deleted


def test_async_iteration_of_a_dictionary_ends_with_its_owner(db_path):
    with coffer.open(db_path, schema=SHELF) as db:
        holder = holder_with(db, scores={"a": 1})

        async def main():
            seen = []
            async with holder.scores.changes() as stream:
                async for change in stream:
                    seen.append(change)
                    if change.initial:
                        with db.write():
                            db.delete(holder)
            return seen

        seen = asyncio.run(asyncio.wait_for(main(), 5))
        assert [c.initial for c in seen] == [True, False] and seen[1].root_deleted


# ---- a scheduler -----------------------------------------------------------


def test_a_scheduler_delivers_on_the_programs_own_thread(db_path):
    with coffer.open(db_path, schema=SHELF) as db:
        posted = []
        ready = threading.Event()

        def post(work):
            posted.append(work)
            ready.set()

        db.set_scheduler(post)
        recorder = Recorder()
        with db.objects(Toy).observe(recorder):
            assert ready.wait(5)  # the first call is due: work was posted, nothing ran yet
            assert recorder.changes == []
            ready.clear()
            posted.pop()()
            assert recorder.changes[0].initial and recorder.threads == [threading.get_ident()]
            with db.write():
                db.add(Toy(id=1))
            assert ready.wait(5)
            posted.pop()()
            assert recorder.changes[1].insertions == [0]
            assert recorder.threads[1] == threading.get_ident()
            db.set_scheduler(None)  # back to the notifier thread
            with db.write():
                db.add(Toy(id=2))
            assert recorder.wait(3).insertions == [1] and recorder.threads[2] != threading.get_ident()
        assert posted == []


def test_a_scheduler_on_an_asyncio_loop(db_path):
    with coffer.open(db_path, schema=SHELF) as db:

        async def main():
            loop = asyncio.get_running_loop()
            db.set_scheduler(loop.call_soon_threadsafe)
            got = asyncio.Queue()
            with db.objects(Toy).observe(lambda change: got.put_nowait((change, threading.get_ident()))):
                first, thread = await asyncio.wait_for(got.get(), 5)
                assert first.initial and thread == threading.get_ident()
                with db.write():
                    db.add(Toy(id=1))
                change, thread = await asyncio.wait_for(got.get(), 5)
                assert change.insertions == [0] and thread == threading.get_ident()

        asyncio.run(main())


def test_a_failing_scheduler_is_logged_and_the_notifier_delivers(db_path, caplog):
    def broken(work):
        raise RuntimeError("no loop")

    with coffer.open(db_path, schema=SHELF) as db:
        db.set_scheduler(broken)
        recorder = Recorder()
        with caplog.at_level(logging.ERROR, logger="coffer"):
            with db.objects(Toy).observe(recorder):
                assert recorder.wait(1).initial
                with db.write():
                    db.add(Toy(id=1))
                assert recorder.wait(2).insertions == [0]
        assert any("scheduler raised" in r.getMessage() for r in caplog.records)
        with pytest.raises(TypeError, match="callable"):
            db.set_scheduler(42)


# ---- the origin of commits -------------------------------------------------


def test_commits_carry_their_origin(db_path):
    with coffer.open(db_path, schema=SHELF) as db:
        with db.write():
            db.add(Toy(id=1))
        assert db.commit_origin() is coffer.Origin.LOCAL
        with db.write(origin=coffer.Origin.REMOTE):
            db.add(Toy(id=2))
        assert db.commit_origin() is coffer.Origin.REMOTE
        recorder = Recorder()
        with db.observe(recorder):
            with db.write(origin=coffer.Origin.REMOTE):
                db.add(Toy(id=3))
            change = recorder.wait(1)
            assert db.commit_origin(change.new_version) is coffer.Origin.REMOTE
            with db.write():
                db.add(Toy(id=4))
            change = recorder.wait(2)
            assert db.commit_origin(change.new_version) is coffer.Origin.LOCAL
        with pytest.raises(coffer.NotFoundError):
            db.commit_origin(10 ** 9)
        with pytest.raises(TypeError, match="coffer.Origin"):
            with db.write(origin="remote"):
                pass
        with pytest.raises(TypeError, match="version"):
            db.commit_origin(-1)
