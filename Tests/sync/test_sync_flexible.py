"""Flexible sync (docs/SYNC.md, "Flexible sync") against the real service
and PostgreSQL: a client holds exactly the objects matching its
subscriptions, as they are added, narrowed and removed; a query the service
cannot evaluate puts the set in the error state with a message naming the
part; a write outside every subscription is refused with a compensating
write; subscriptions survive reopening the file; with read rules, a client
gets what its rules allow AND its subscriptions match."""

from pathlib import Path
from typing import Dict, List, Optional

import pytest

import coffer
from conftest import WAIT_S, Service
from test_sync_auth import SECRET
from test_sync_permissions import Reported, dumped, eventually, write_config


class Dog(coffer.Object):
    id: int = coffer.primary_key()
    name: str = ""
    age: int = 0
    owner: str = ""
    toys: List[str]


class Person(coffer.Object):
    id: int = coffer.primary_key()
    name: str = ""


@pytest.fixture
def service(postgres, tmp_path, services) -> Service:
    started = Service(postgres, tmp_path)
    services.append(started)
    return started


def open_flexible(dbs, path: Path, service: Service, partition: str, reported: Optional[Reported] = None,
                  user: Optional[coffer.User] = None) -> coffer.Database:
    db = coffer.open(str(path), schema=[Dog, Person],
                     sync=coffer.SyncConfig(url=service.url, partition=partition, transport="builtin",
                                            flexible=True, user=user, on_error=reported or Reported()))
    dbs.append(db)
    return db


def subscribe(db: coffer.Database, *queries) -> int:
    """Replaces the subscriptions with (name, class, query) triples and waits until they are complete."""
    with db.subscriptions.update() as subs:
        subs.remove_all()
        for name, cls, query in queries:
            subs.append(cls, query, name=name)
    db.subscriptions.wait_for_complete(timeout=WAIT_S)
    db.refresh()
    assert subs.version == db.subscriptions.version
    return subs.version


def dogs(db: coffer.Database) -> Dict[int, int]:
    db.refresh()
    return {d.id: d.age for d in db.objects(Dog)}


def people(db: coffer.Database) -> Dict[int, str]:
    db.refresh()
    return {p.id: p.name for p in db.objects(Person)}


def test_subscriptions_added_narrowed_and_removed(service, postgres, partition, tmp_path, dbs):
    writer = open_flexible(dbs, tmp_path / "writer.coffer", service, partition)
    subscribe(writer, ("all dogs", Dog, "TRUEPREDICATE"), ("all people", Person, "TRUEPREDICATE"))
    with writer.write():
        for i, age in enumerate([1, 3, 5, 7, 9]):
            writer.create(Dog, {"id": i, "name": f"dog{i}", "age": age, "toys": [f"toy{i}a", f"toy{i}b"]})
        writer.create(Person, {"id": 1, "name": "Ada"})
    writer.sync.wait_for_upload(timeout=WAIT_S)

    reader = open_flexible(dbs, tmp_path / "reader.coffer", service, partition)
    # Nothing subscribed: nothing arrives.
    reader.sync.wait_for_download(timeout=WAIT_S)
    assert dogs(reader) == {} and people(reader) == {}
    assert reader.subscriptions.state == "complete" and len(reader.subscriptions) == 0

    subscribe(reader, ("older", Dog, "age > 2"))
    assert dogs(reader) == {1: 3, 2: 5, 3: 7, 4: 9}
    assert people(reader) == {}
    assert list(reader.object_for_primary_key(Dog, 2).toys) == ["toy2a", "toy2b"]

    # Narrowed: the dogs that left the view are removed from the file.
    subscribe(reader, ("older", Dog, "age >= 7"))
    assert dogs(reader) == {3: 7, 4: 9}

    # Changes of other clients move objects into and out of the view; dog 2,
    # which the reader lost when the set narrowed, comes back whole with the
    # list element added meanwhile.
    with writer.write():
        writer.object_for_primary_key(Dog, 0).age = 8
        writer.object_for_primary_key(Dog, 4).age = 2
        regained = writer.object_for_primary_key(Dog, 2)
        regained.toys.append("toy2c")
        del regained.toys[0]
        regained.age = 8
    writer.sync.wait_for_upload(timeout=WAIT_S)
    eventually("the view to follow the ages", lambda: dogs(reader) == {0: 8, 2: 8, 3: 7})
    assert list(reader.object_for_primary_key(Dog, 0).toys) == ["toy0a", "toy0b"]
    assert list(reader.object_for_primary_key(Dog, 2).toys) == ["toy2b", "toy2c"]

    # Added: another class alongside.
    subscribe(reader, ("older", Dog, "age >= 7"), ("ada", Person, "name BEGINSWITH 'A'"))
    assert dogs(reader) == {0: 8, 2: 8, 3: 7} and people(reader) == {1: "Ada"}
    assert reader.subscriptions.find("ada") == coffer.Subscription("ada", "Person", "name BEGINSWITH 'A'")

    # Removed: everything leaves the file; the service keeps it all.
    subscribe(reader)
    assert dogs(reader) == {} and people(reader) == {}
    assert set(dumped(postgres, partition, "Dog")) == {0, 1, 2, 3, 4}
    assert dogs(writer) == {0: 8, 1: 3, 2: 8, 3: 7, 4: 2}


def test_an_unsupported_query_is_an_error_naming_the_part(service, partition, tmp_path, dbs):
    writer = open_flexible(dbs, tmp_path / "writer.coffer", service, partition)
    subscribe(writer, ("all", Dog, "TRUEPREDICATE"))
    with writer.write():
        writer.create(Dog, {"id": 1, "age": 1})
        writer.create(Dog, {"id": 2, "age": 5})
    writer.sync.wait_for_upload(timeout=WAIT_S)
    path = tmp_path / "bad.coffer"
    reported = Reported()
    db = open_flexible(dbs, path, service, partition, reported)
    good = subscribe(db, ("older", Dog, "age > 2"))
    assert dogs(db) == {2: 5}
    with db.subscriptions.update() as subs:
        subs.append(Dog, "name LIKE 'R*'", name="like")
    with pytest.raises(coffer.QueryError) as raised:
        db.subscriptions.wait_for_complete(timeout=WAIT_S)
    assert "'like'" in str(raised.value) and "LIKE" in str(raised.value)
    assert db.subscriptions.state == "error"
    assert "LIKE" in db.subscriptions.error and "offset" in db.subscriptions.error
    assert db.subscriptions.version == good + 1
    with reported.lock:
        told = [e for e in reported.errors if e.code_name == "SUBSCRIPTION"]
    assert len(told) == 1 and not told[0].fatal and "LIKE" in told[0].message
    # The session goes on with the set before it, also after reopening the
    # file, and a later good set completes.
    assert db.sync.state == "connected"
    with writer.write():
        writer.create(Dog, {"id": 3, "age": 9})
    writer.sync.wait_for_upload(timeout=WAIT_S)
    eventually("the new dog under the set before", lambda: dogs(db) == {2: 5, 3: 9})
    db.close()
    db = open_flexible(dbs, path, service, partition)
    assert db.subscriptions.state == "error"
    with writer.write():
        writer.create(Dog, {"id": 4, "age": 7})
        writer.create(Dog, {"id": 5, "age": 2})
    writer.sync.wait_for_upload(timeout=WAIT_S)
    eventually("the reopened file to follow the set before", lambda: dogs(db) == {2: 5, 3: 9, 4: 7})
    subscribe(db, ("older", Dog, "age > 6"))
    assert db.subscriptions.state == "complete"
    assert dogs(db) == {3: 9, 4: 7}


def test_a_write_outside_the_subscriptions_is_compensated(service, postgres, partition, tmp_path, dbs):
    reported = Reported()
    db = open_flexible(dbs, tmp_path / "outside.coffer", service, partition, reported)
    subscribe(db, ("older", Dog, "age > 2"))
    with db.write():
        db.create(Dog, {"id": 10, "name": "in view", "age": 4})
        db.create(Dog, {"id": 11, "name": "puppy", "age": 1})
        db.create(Person, {"id": 5, "name": "not subscribed"})
    db.sync.wait_for_upload(timeout=WAIT_S)
    eventually("the compensating writes", lambda: len(reported.compensating()) == 2)
    refused = sorted((e.class_name, e.primary_key) for e in reported.compensating())
    assert refused == [("Dog", 11), ("Person", 5)]
    assert "subscriptions: age > 2" in reported.compensating()[0].message
    eventually("the refused objects to be removed", lambda: dogs(db) == {10: 4} and people(db) == {})
    assert set(dumped(postgres, partition, "Dog")) == {10}
    assert dumped(postgres, partition, "Person") == {}


def test_subscriptions_survive_reopening(service, partition, tmp_path, dbs):
    path = tmp_path / "reopen.coffer"
    db = open_flexible(dbs, path, service, partition)
    version = subscribe(db, ("older", Dog, "age > 2"), ("", Person, "TRUEPREDICATE"))
    db.close()
    again = open_flexible(dbs, path, service, partition)
    assert again.subscriptions.version == version
    assert list(again.subscriptions) == [coffer.Subscription("older", "Dog", "age > 2"),
                                         coffer.Subscription("", "Person", "TRUEPREDICATE")]
    assert again.subscriptions.state == "complete"
    again.subscriptions.wait_for_complete(timeout=WAIT_S)
    with pytest.raises(coffer.PrimaryKeyExistsError):
        with again.subscriptions.update() as subs:
            subs.append(Dog, "age > 5", name="older")
    assert again.subscriptions.version == version


RULES = {"classes": {"Dog": {"read": "owner == %user.id", "write": "owner == %user.id"},
                     "Person": {"read": True, "write": True}}}


def test_subscriptions_narrow_what_the_read_rules_allow(postgres, partition, tmp_path, services, dbs):
    service = Service(postgres, tmp_path, config=write_config(tmp_path, RULES),
                      env={"COFFER_SYNC_SIGNING_SECRET": SECRET})
    services.append(service)
    app = coffer.App(service.http_url)
    ada, bob = app.login(coffer.Credentials.anonymous()), app.login(coffer.Credentials.anonymous())
    a = open_flexible(dbs, tmp_path / "ada.coffer", service, partition, user=ada)
    b = open_flexible(dbs, tmp_path / "bob.coffer", service, partition, user=bob)
    subscribe(a, ("all", Dog, "TRUEPREDICATE"))
    subscribe(b, ("all", Dog, "TRUEPREDICATE"))
    with a.write():
        a.create(Dog, {"id": 1, "owner": ada.id, "age": 1})
        a.create(Dog, {"id": 2, "owner": ada.id, "age": 5, "toys": ["ball"]})
    with b.write():
        b.create(Dog, {"id": 3, "owner": bob.id, "age": 6})
    for db in (a, b):
        db.sync.wait_for_upload(timeout=WAIT_S)
    a2 = open_flexible(dbs, tmp_path / "ada2.coffer", service, partition, user=ada)
    subscribe(a2, ("older", Dog, "age > 2"))
    # Bob's dog matches the query but not the read rule; Ada's first dog the rule but not the query.
    assert dogs(a2) == {2: 5}
    assert list(a2.object_for_primary_key(Dog, 2).toys) == ["ball"]
    b.sync.wait_for_download(timeout=WAIT_S)
    assert dogs(b) == {3: 6}
    eventually("Ada's first file to hold her dogs", lambda: dogs(a) == {1: 1, 2: 5})
    # Widening the query never widens the rule.
    subscribe(a2, ("everything", Dog, "TRUEPREDICATE"))
    assert dogs(a2) == {1: 1, 2: 5}
