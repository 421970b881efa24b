"""Permissions enforced by the real service on a private PostgreSQL
(docs/SYNC.md, "Security model"): two users share a partition whose write
rule keeps each user's tasks their own. A write outside the rules is
refused: it is reverted on the client that made it (compensating write),
reported through SyncConfig(on_error=...) with the class and primary key,
never reaches the other user, `coffer-sync dump` nor the history; the rest
of the upload integrates. A role-based rule admits the users whose custom
JWT lists the role. `serve` refuses a bad rule naming its class, rule and
part."""

import json
import subprocess
import threading
import time
from pathlib import Path
from typing import Any, Callable, Dict, List

import pytest

import coffer
from conftest import SERVICE_BIN, WAIT_S, Service, service_dump
from test_sync_auth import JWT_SECRET, SECRET, hs256, psql


class Task(coffer.Object):
    id: int = coffer.primary_key()
    owner: str = ""
    title: str = ""


class Memo(coffer.Object):
    id: int = coffer.primary_key()
    text: str = ""


RULES: Dict[str, Any] = {
    "rolesClaim": "roles",
    "classes": {
        "Task": {"read": True, "write": "owner == %user.id"},
        "Memo": {"read": True, "write": ["editor"]},
    },
}


def write_config(tmp_path: Path, rules: Any) -> Path:
    config = tmp_path / f"coffer-sync-rules-{time.monotonic_ns()}.json"
    config.write_text(json.dumps({
        "auth": {"anonymous": True, "jwt": {"algorithm": "HS256", "secret": JWT_SECRET}},
        "rules": rules,
    }))
    return config


@pytest.fixture
def rules_service(postgres, tmp_path, services) -> Service:
    service = Service(postgres, tmp_path, config=write_config(tmp_path, RULES),
                      env={"COFFER_SYNC_SIGNING_SECRET": SECRET})
    services.append(service)
    return service


class Reported:
    """What a database's on_error callback was told, thread-safely."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.errors: List[coffer.SyncError] = []

    def __call__(self, error: coffer.SyncError) -> None:
        with self.lock:
            self.errors.append(error)

    def compensating(self) -> List[coffer.SyncError]:
        with self.lock:
            return [e for e in self.errors if e.is_compensating_write]


def open_db(dbs, tmp_path: Path, service: Service, partition: str, user: coffer.User,
            reported: Reported, name: str = "") -> coffer.Database:
    db = coffer.open(str(tmp_path / f"{name or len(dbs)}.coffer"), schema=[Task, Memo],
                     sync=coffer.SyncConfig(url=service.url, partition=partition, transport="builtin",
                                            user=user, on_error=reported))
    dbs.append(db)
    return db


def eventually(what: str, check: Callable[[], bool]) -> None:
    deadline = time.monotonic() + WAIT_S
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def titles(db: coffer.Database) -> Dict[int, str]:
    db.refresh()
    return {t.id: t.title for t in db.objects(Task)}


def dumped(postgres: str, partition: str, class_name: str) -> Dict[Any, Dict[str, Any]]:
    lines = [json.loads(line) for line in service_dump(postgres, partition)]
    return {line["pk"]: line["properties"] for line in lines if line["class"] == class_name}


def history_mentions(postgres: str, partition: str, text: str) -> int:
    return int(psql(postgres, f"SELECT count(*) FROM coffer_sync_history WHERE partition = '{partition}' "
                              f"AND position('{text}'::bytea in changeset) > 0"))


def test_an_illegal_write_is_reverted_reported_and_never_seen(rules_service, postgres, partition, tmp_path, dbs):
    app = coffer.App(rules_service.http_url)
    ada, bob = app.login(coffer.Credentials.anonymous()), app.login(coffer.Credentials.anonymous())
    ada_errors, bob_errors = Reported(), Reported()
    a = open_db(dbs, tmp_path, rules_service, partition, ada, ada_errors)
    b = open_db(dbs, tmp_path, rules_service, partition, bob, bob_errors)
    with a.write():
        a.create(Task, {"id": 1, "owner": ada.id, "title": "ada's"})
    with b.write():
        b.create(Task, {"id": 2, "owner": bob.id, "title": "bob's"})
    for db in (a, b):
        db.sync.wait_for_upload(timeout=WAIT_S)
    eventually("both tasks on both clients", lambda: titles(a) == titles(b) == {1: "ada's", 2: "bob's"})

    # Ada changes Bob's task, creates a task in Bob's name, and changes her own, in one commit.
    with a.write():
        a.object_for_primary_key(Task, 2).title = "hacked by ada"
        a.create(Task, {"id": 3, "owner": bob.id, "title": "forged by ada"})
        a.object_for_primary_key(Task, 1).title = "ada's, edited"
    a.sync.wait_for_upload(timeout=WAIT_S)

    # Reverted on Ada's file, her own edit kept.
    eventually("the compensating write on ada's file", lambda: titles(a) == {1: "ada's, edited", 2: "bob's"})
    # Reported, once per refused object, with the class and primary key.
    eventually("two compensating writes reported", lambda: len(ada_errors.compensating()) == 2)
    refused = sorted((e.class_name, e.primary_key) for e in ada_errors.compensating())
    assert refused == [("Task", 2), ("Task", 3)]
    for e in ada_errors.compensating():
        assert e.code == coffer.SyncError.COMPENSATING_WRITE and e.code_name == "COMPENSATING_WRITE"
        assert not e.fatal
        assert "owner == %user.id" in e.message and f"Task {e.primary_key}" in e.message
    assert a.sync.state == "connected"  # not fatal: the session goes on

    # Bob sees Ada's legal edit, never the illegal ones.
    eventually("ada's legal edit on bob's file", lambda: titles(b) == {1: "ada's, edited", 2: "bob's"})
    assert bob_errors.compensating() == []
    # Nothing of the refused writes is in PostgreSQL.
    tasks = dumped(postgres, partition, "Task")
    assert {pk: p["title"] for pk, p in tasks.items()} == {1: "ada's, edited", 2: "bob's"}
    assert history_mentions(postgres, partition, "hacked by ada") == 0
    assert history_mentions(postgres, partition, "forged by ada") == 0
    assert history_mentions(postgres, partition, "ada''s, edited") == 1

    # Bob may still change his task: the compensating write did not take it from him.
    with b.write():
        b.object_for_primary_key(Task, 2).title = "bob's, edited"
    b.sync.wait_for_upload(timeout=WAIT_S)
    eventually("bob's edit on ada's file", lambda: titles(a).get(2) == "bob's, edited")
    # And Ada cannot delete it either.
    with a.write():
        a.delete(a.object_for_primary_key(Task, 2))
    a.sync.wait_for_upload(timeout=WAIT_S)
    eventually("the deleted task back on ada's file", lambda: titles(a).get(2) == "bob's, edited")
    eventually("the refused delete reported", lambda: len(ada_errors.compensating()) == 3)
    assert titles(b) == {1: "ada's, edited", 2: "bob's, edited"}


def test_a_role_based_rule(rules_service, postgres, partition, tmp_path, dbs):
    app = coffer.App(rules_service.http_url)
    expires = int(time.time()) + 600
    editor = app.login(coffer.Credentials.jwt(hs256({"sub": "eve", "exp": expires, "roles": ["editor"]}, JWT_SECRET)))
    reader = app.login(coffer.Credentials.jwt(hs256({"sub": "rex", "exp": expires, "roles": ["reader"]}, JWT_SECRET)))
    editor_errors, reader_errors = Reported(), Reported()
    e = open_db(dbs, tmp_path, rules_service, partition, editor, editor_errors, name="editor")
    r = open_db(dbs, tmp_path, rules_service, partition, reader, reader_errors)
    with e.write():
        e.create(Memo, {"id": 1, "text": "by the editor"})
    with r.write():
        r.create(Memo, {"id": 2, "text": "by the reader"})
    for db in (e, r):
        db.sync.wait_for_upload(timeout=WAIT_S)
    eventually("the reader's memo refused", lambda: [x.primary_key for x in reader_errors.compensating()] == [2])
    eventually("the reader's memo gone", lambda: r.refresh() or {m.id for m in r.objects(Memo)} == {1})
    assert editor_errors.compensating() == []
    assert {pk: p["text"] for pk, p in dumped(postgres, partition, "Memo").items()} == {1: "by the editor"}
    # The role survives a refresh of the access token.
    editor.refresh()
    with e.write():
        e.object_for_primary_key(Memo, 1).text = "edited after a refresh"
    e.sync.wait_for_upload(timeout=WAIT_S)
    e.close()
    dbs.remove(e)
    e = open_db(dbs, tmp_path, rules_service, partition, editor, editor_errors, name="editor")
    with e.write():
        e.create(Memo, {"id": 3, "text": "after reopening"})
    e.sync.wait_for_upload(timeout=WAIT_S)
    eventually("the editor's memos in the service", lambda: {
        pk: p["text"] for pk, p in dumped(postgres, partition, "Memo").items()
    } == {1: "edited after a refresh", 3: "after reopening"})
    assert editor_errors.compensating() == []


@pytest.mark.parametrize("rules, expected", [
    ({"classes": {"Task": {"read": True, "write": "owner == %user.name"}}},
     ["rules.classes.Task.write", "owner == %user.name", "%user.name"]),
    ({"classes": {"Task": {"read": "owner LIKE 'a*'", "write": True}}},
     ["rules.classes.Task.read", "LIKE"]),
    ({"classes": {"Task": {"read": True}}}, ["rules.classes.Task", "needs both"]),
    ({"classes": {"Task": {"read": True, "write": []}}}, ["rules.classes.Task.write", "list of roles"]),
    ({"clases": {}}, ["rules.clases"]),
])
def test_serve_refuses_a_bad_rule(postgres, tmp_path, rules, expected):
    out = subprocess.run([SERVICE_BIN, "serve", "--postgres", postgres, "--listen", "127.0.0.1:0",
                          "--config", str(write_config(tmp_path, rules))],
                         capture_output=True, text=True, timeout=60,
                         env={"COFFER_SYNC_SIGNING_SECRET": SECRET, "PATH": "/usr/bin:/bin"})
    assert out.returncode != 0
    for text in expected:
        assert text in out.stderr, out.stderr
