"""Read rules enforced by the real service on a private PostgreSQL
(docs/SYNC.md, "Security model"): each user downloads only the objects its
class's read rule (or write rule) lets it read. A fresh client gets exactly
its readable set; an object whose owner changes disappears from one client
and arrives whole (values and lists) on the other; a client that tries to
write another user's object learns nothing of it; a role-based read rule
admits the users with the role, and a role taken away removes the objects
at the next connection. A reader's refused edits of lists, sets and maps
are undone by the compensating write. `coffer-sync dump` shows PostgreSQL
holds everything all along."""

import json
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Set

import pytest

import coffer
from conftest import WAIT_S, Service
from test_sync_auth import JWT_SECRET, SECRET, hs256
from test_sync_permissions import Reported, dumped, eventually, write_config


class Card(coffer.Object):
    id: int = coffer.primary_key()
    owner: str = ""
    title: str = ""
    steps: List[str]
    labels: Set[str]
    meta: Dict[str, str]


class Memo(coffer.Object):
    id: int = coffer.primary_key()
    text: str = ""


RULES: Dict[str, Any] = {
    "rolesClaim": "roles",
    "classes": {
        "Card": {"read": "owner == %user.id OR 'auditor' IN %user.roles",
                 "write": "owner == %user.id OR 'admin' IN %user.roles"},
        "Memo": {"read": ["reader"], "write": ["editor"]},
    },
}


@pytest.fixture
def read_service(postgres, tmp_path, services) -> Service:
    service = Service(postgres, tmp_path, config=write_config(tmp_path, RULES),
                      env={"COFFER_SYNC_SIGNING_SECRET": SECRET})
    services.append(service)
    return service


def open_db(dbs, path: Path, service: Service, partition: str, user: coffer.User,
            reported: Optional[Reported] = None) -> coffer.Database:
    db = coffer.open(str(path), schema=[Card, Memo],
                     sync=coffer.SyncConfig(url=service.url, partition=partition, transport="builtin",
                                            user=user, on_error=reported or Reported()))
    dbs.append(db)
    return db


def cards(db: coffer.Database) -> Dict[int, Dict[str, Any]]:
    db.refresh()
    return {c.id: {"owner": c.owner, "title": c.title, "steps": list(c.steps)} for c in db.objects(Card)}


def memos(db: coffer.Database) -> Dict[int, str]:
    db.refresh()
    return {m.id: m.text for m in db.objects(Memo)}


def settle(*databases: coffer.Database) -> None:
    """Every upload acknowledged and every download integrated."""
    for db in databases:
        db.sync.wait_for_upload(timeout=WAIT_S)
    for db in databases:
        db.sync.wait_for_download(timeout=WAIT_S)
        db.refresh()


def jwt_user(app: coffer.App, subject: str, roles: List[str]) -> coffer.User:
    claims = {"sub": subject, "exp": int(time.time()) + 600, "roles": roles}
    return app.login(coffer.Credentials.jwt(hs256(claims, JWT_SECRET)))


def file_mentions(path: Path, text: str) -> bool:
    return text.encode() in path.read_bytes()


def test_each_user_downloads_only_what_it_may_read(read_service, postgres, partition, tmp_path, dbs):
    app = coffer.App(read_service.http_url)
    ada, bob = app.login(coffer.Credentials.anonymous()), app.login(coffer.Credentials.anonymous())
    a = open_db(dbs, tmp_path / "ada.coffer", read_service, partition, ada)
    b = open_db(dbs, tmp_path / "bob.coffer", read_service, partition, bob)
    with a.write():
        a.create(Card, {"id": 1, "owner": ada.id, "title": "ada's secret", "steps": ["a1", "a2"]})
        a.create(Card, {"id": 2, "owner": ada.id, "title": "ada's other"})
    with b.write():
        b.create(Card, {"id": 3, "owner": bob.id, "title": "bob's secret"})
    settle(a, b)
    # Another change of Ada's after Bob is connected reaches him neither.
    with a.write():
        a.object_for_primary_key(Card, 1).title = "ada's secret, edited"
    settle(a, b)
    with b.write():
        b.object_for_primary_key(Card, 3).steps.append("b1")
    settle(b, a)

    assert set(cards(a)) == {1, 2}
    assert cards(b) == {3: {"owner": bob.id, "title": "bob's secret", "steps": ["b1"]}}
    # PostgreSQL holds everything.
    assert {pk: p["title"] for pk, p in dumped(postgres, partition, "Card").items()} == {
        1: "ada's secret, edited", 2: "ada's other", 3: "bob's secret"}

    # A fresh client of each user gets exactly its readable set, whole.
    a2 = open_db(dbs, tmp_path / "ada-2.coffer", read_service, partition, ada)
    b2 = open_db(dbs, tmp_path / "bob-2.coffer", read_service, partition, bob)
    settle(a2, b2)
    assert cards(a2) == cards(a) == {
        1: {"owner": ada.id, "title": "ada's secret, edited", "steps": ["a1", "a2"]},
        2: {"owner": ada.id, "title": "ada's other", "steps": []},
    }
    assert cards(b2) == cards(b)
    for db in (b, b2):
        db.close()
        dbs.remove(db)
    for name in ("bob.coffer", "bob-2.coffer"):
        assert not file_mentions(tmp_path / name, "ada's"), name


def test_a_write_to_an_unreadable_object_reveals_nothing(read_service, postgres, partition, tmp_path, dbs):
    app = coffer.App(read_service.http_url)
    ada, bob = app.login(coffer.Credentials.anonymous()), app.login(coffer.Credentials.anonymous())
    bob_errors = Reported()
    a = open_db(dbs, tmp_path / "ada.coffer", read_service, partition, ada)
    b = open_db(dbs, tmp_path / "bob.coffer", read_service, partition, bob, bob_errors)
    with a.write():
        a.create(Card, {"id": 1, "owner": ada.id, "title": "ada's secret"})
    settle(a, b)
    # Bob guesses the primary key and writes an object of his own under it.
    with b.write():
        b.create(Card, {"id": 1, "owner": bob.id, "title": "bob's guess"})
    settle(b)
    eventually("the refusal reported", lambda: [e.primary_key for e in bob_errors.compensating()] == [1])
    # The compensating write removes Bob's object instead of showing Ada's.
    eventually("bob's guess removed", lambda: cards(b) == {})
    assert cards(a)[1]["title"] == "ada's secret"
    assert {pk: p["title"] for pk, p in dumped(postgres, partition, "Card").items()} == {1: "ada's secret"}
    b.close()
    dbs.remove(b)
    assert not file_mentions(tmp_path / "bob.coffer", "ada's secret")


def test_an_object_whose_owner_changes_moves_between_clients(read_service, postgres, partition, tmp_path, dbs):
    app = coffer.App(read_service.http_url)
    ada, bob = app.login(coffer.Credentials.anonymous()), app.login(coffer.Credentials.anonymous())
    admin = jwt_user(app, "root", ["admin"])
    a = open_db(dbs, tmp_path / "ada.coffer", read_service, partition, ada)
    b = open_db(dbs, tmp_path / "bob.coffer", read_service, partition, bob)
    root = open_db(dbs, tmp_path / "admin.coffer", read_service, partition, admin)
    with a.write():
        a.create(Card, {"id": 1, "owner": ada.id, "title": "handed over", "steps": ["one", "two"]})
        a.create(Card, {"id": 2, "owner": ada.id, "title": "kept"})
    settle(a, b, root)
    eventually("both cards on the admin's file", lambda: set(cards(root)) == {1, 2})  # it reads what it may write
    assert cards(b) == {}

    # The admin gives card 1 to Bob: it leaves Ada's file and arrives whole on Bob's.
    with root.write():
        root.object_for_primary_key(Card, 1).owner = bob.id
    settle(root)
    eventually("card 1 on bob's file", lambda: cards(b) == {
        1: {"owner": bob.id, "title": "handed over", "steps": ["one", "two"]}})
    eventually("card 1 gone from ada's file", lambda: set(cards(a)) == {2})
    # Bob owns it now: his edits reach the service, and not Ada.
    with b.write():
        b.object_for_primary_key(Card, 1).title = "bob's now"
    settle(b, a, root)
    assert set(cards(a)) == {2}
    assert cards(root)[1]["title"] == "bob's now"

    # And back: it leaves Bob's file and Ada gets it again with Bob's edit.
    with root.write():
        root.object_for_primary_key(Card, 1).owner = ada.id
    settle(root)
    eventually("card 1 back on ada's file", lambda: {k: v["title"] for k, v in cards(a).items()} == {
        1: "bob's now", 2: "kept"})
    eventually("card 1 gone from bob's file", lambda: cards(b) == {})
    assert {pk: (p["owner"], p["title"]) for pk, p in dumped(postgres, partition, "Card").items()} == {
        1: (ada.id, "bob's now"), 2: (ada.id, "kept")}

    # A client that was offline meanwhile catches up to the same sets.
    b.close()
    dbs.remove(b)
    with root.write():
        root.object_for_primary_key(Card, 2).owner = bob.id
    settle(root)
    b = open_db(dbs, tmp_path / "bob.coffer", read_service, partition, bob)
    settle(b)
    eventually("card 2 on bob's reopened file", lambda: {k: v["title"] for k, v in cards(b).items()} == {2: "kept"})
    eventually("card 2 gone from ada's file", lambda: set(cards(a)) == {1})


def test_a_role_based_read_rule(read_service, postgres, partition, tmp_path, dbs):
    app = coffer.App(read_service.http_url)
    editor = jwt_user(app, "eve", ["editor"])
    reader = jwt_user(app, "rex", ["reader"])
    nobody = app.login(coffer.Credentials.anonymous())
    e = open_db(dbs, tmp_path / "editor.coffer", read_service, partition, editor)
    r = open_db(dbs, tmp_path / "reader.coffer", read_service, partition, reader)
    n = open_db(dbs, tmp_path / "nobody.coffer", read_service, partition, nobody)
    with e.write():
        e.create(Memo, {"id": 1, "text": "for readers"})
        e.create(Memo, {"id": 2, "text": "also for readers"})
    settle(e, r, n)
    eventually("the memos on the reader's file", lambda: memos(r) == {1: "for readers", 2: "also for readers"})
    assert memos(e) == memos(r)
    assert memos(n) == {}
    fresh = open_db(dbs, tmp_path / "reader-2.coffer", read_service, partition, reader)
    settle(fresh)
    assert memos(fresh) == memos(r)

    # The role taken away: at the next connection the memos leave the file.
    r.close()
    dbs.remove(r)
    demoted = jwt_user(app, "rex", ["guest"])
    assert demoted.id == reader.id
    r = open_db(dbs, tmp_path / "reader.coffer", read_service, partition, demoted)
    settle(r)
    eventually("the memos gone from the demoted reader's file", lambda: memos(r) == {})
    # Given back, they return.
    r.close()
    dbs.remove(r)
    r = open_db(dbs, tmp_path / "reader.coffer", read_service, partition, jwt_user(app, "rex", ["reader"]))
    settle(r)
    eventually("the memos back on the reader's file", lambda: memos(r) == {1: "for readers", 2: "also for readers"})
    assert {pk: p["text"] for pk, p in dumped(postgres, partition, "Memo").items()} == {
        1: "for readers", 2: "also for readers"}


def test_refused_collection_edits_are_undone(read_service, postgres, partition, tmp_path, dbs):
    app = coffer.App(read_service.http_url)
    ada = app.login(coffer.Credentials.anonymous())
    auditor = jwt_user(app, "audrey", ["auditor"])
    auditor_errors = Reported()
    a = open_db(dbs, tmp_path / "ada.coffer", read_service, partition, ada)
    r = open_db(dbs, tmp_path / "auditor.coffer", read_service, partition, auditor, auditor_errors)
    with a.write():
        card = a.create(Card, {"id": 1, "owner": ada.id, "title": "audited", "steps": ["one", "two"]})
        card.labels.add("kept")
        card.meta["k"] = "v"
    settle(a)

    def state(db: coffer.Database) -> Any:
        db.refresh()
        c = db.object_for_primary_key(Card, 1)
        return None if c is None else (list(c.steps), sorted(c.labels), dict(c.meta))

    original = (["one", "two"], ["kept"], {"k": "v"})
    eventually("the card on the auditor's file", lambda: state(r) == original)
    # The auditor may read the card, not write it: every edit is refused and undone.
    with r.write():
        c = r.object_for_primary_key(Card, 1)
        c.steps.append("forged")
        c.steps[0] = "changed"
        c.labels.add("forged")
        c.labels.discard("kept")
        c.meta["forged"] = "x"
        c.meta["k"] = "w"
    assert state(r) == (["changed", "two", "forged"], ["forged"], {"forged": "x", "k": "w"})
    settle(r)
    eventually("the refusal reported", lambda: [e.primary_key for e in auditor_errors.compensating()] == [1])
    eventually("the auditor's edits undone", lambda: state(r) == original)
    settle(a)
    assert state(a) == original
    dumped_card = dumped(postgres, partition, "Card")[1]
    assert (dumped_card["steps"], dumped_card["labels"], dumped_card["meta"]) == original
