"""db.subscriptions without a service: updates committed as versions that
survive reopening, removal by name, class and all, the errors of bad
calls, and an update dropped when its block raises. Flexible sync against
the real service is Tests/sync/test_sync_flexible.py."""

from typing import List

import pytest

import coffer


class Dog(coffer.Object):
    id: int = coffer.primary_key()
    age: int = 0
    toys: List[str]


class Cat(coffer.Object):
    id: int = coffer.primary_key()
    name: str = ""


def test_updates_are_versioned_and_survive_reopening(tmp_path):
    path = str(tmp_path / "subs.coffer")
    with coffer.open(path, schema=[Dog, Cat]) as db:
        assert db.subscriptions.version == 0 and len(db.subscriptions) == 0
        assert db.subscriptions.state == "complete"
        with db.subscriptions.update() as subs:
            subs.append(Dog, "age > 2", name="older")
            subs.append("Cat", "TRUEPREDICATE")
            subs.append(Dog, "age > 2", name="older")  # the same: nothing new
            assert len(subs) == 2
        assert subs.version == 1
        assert db.subscriptions.state == "pending"
        with db.subscriptions.update() as subs:
            assert subs.remove("older") is True
            assert subs.remove("older") is False
            subs.append(Dog, "age < 10", name="young")
        assert db.subscriptions.version == 2
    with coffer.open(path, schema=[Dog, Cat]) as db:
        assert list(db.subscriptions) == [coffer.Subscription("", "Cat", "TRUEPREDICATE"),
                                          coffer.Subscription("young", "Dog", "age < 10")]
        assert db.subscriptions.find("young").query == "age < 10"
        assert db.subscriptions.find("none") is None
        with db.subscriptions.update() as subs:
            assert subs.remove_all(Cat) == 1
        with db.subscriptions.update() as subs:
            assert subs.remove_all() == 1
        assert db.subscriptions.version == 4 and len(db.subscriptions) == 0


def test_bad_calls_raise_and_a_failed_update_commits_nothing(tmp_path):
    with coffer.open(str(tmp_path / "bad.coffer"), schema=[Dog, Cat]) as db:
        with pytest.raises(RuntimeError):
            with db.subscriptions.update() as subs:
                subs.append(Dog, "age > 1", name="a")
                raise RuntimeError("changed my mind")
        assert db.subscriptions.version == 0
        with db.subscriptions.update() as subs:
            with pytest.raises(coffer.PrimaryKeyExistsError, match="'a' exists already"):
                subs.append(Dog, "age > 1", name="a")
                subs.append(Dog, "age > 2", name="a")
            with pytest.raises(coffer.InvalidArgumentError, match="query is empty"):
                subs.append(Dog, "")
            with pytest.raises(coffer.NotFoundError):
                subs.append("Bird", "TRUEPREDICATE")
        assert [s.name for s in db.subscriptions] == ["a"]
        with pytest.raises(coffer.MisuseError, match="has ended"):
            subs.append(Dog, "age > 3")
        # Waiting needs a database that syncs flexibly.
        with pytest.raises(coffer.MisuseError):
            db.subscriptions.wait_for_complete(timeout=0.1)
