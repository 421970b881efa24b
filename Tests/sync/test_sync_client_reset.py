"""Client reset against a real `coffer-sync serve` (maximum offline time 2 s,
COFFER_SYNC_MAX_OFFLINE_TIME) on a private PostgreSQL: a bundle copied before
a change that is now older than the limit is refused with CLIENT_RESET, and
the device that opens it resets as its mode says. Each device writes to its
file from the bundle before it first connects (local commits not uploaded):
"discard" ends with exactly the service's objects, "recover" keeps and
uploads its local writes, "manual" changes nothing and fails the session."""

import time
from pathlib import Path
from typing import List, Set

import pytest

import coffer
from conftest import Note, PyClient, Service, converge, service_dump
from test_sync_bundle import caught_up

MAX_OFFLINE_S = 2.0


class Device(PyClient):
    def __init__(self, path: Path, url: str, partition: str, mode: str, events: List[str]) -> None:
        errors: List[coffer.SyncError] = []
        self.errors = errors
        self.db = coffer.open(str(path), schema=[Note], sync=coffer.SyncConfig(
            url=url, partition=partition, client_reset=mode, on_error=errors.append,
            before_reset=lambda: events.append("before"), after_reset=lambda: events.append("after")))


def texts(db: coffer.Database) -> Set[str]:
    db.refresh()
    return {f"{n.id}:{n.text}" for n in db.objects(Note)}


@pytest.fixture
def too_old_bundle(postgres, partition, services, clients, tmp_path):
    """A bundle of notes 1-3 and a service that moved on: note 1 deleted and
    note 2 changed longer ago than the maximum offline time, then note 4."""
    services.append(Service(postgres, tmp_path, env={"COFFER_SYNC_MAX_OFFLINE_TIME": str(MAX_OFFLINE_S)}))
    url = services[0].url
    a = PyClient(tmp_path / "a.coffer", url, partition)
    clients.append(a)
    for i in (1, 2, 3):
        a.put(i, f"note {i}")
    a.wait_upload()
    caught_up(a)
    bundle = tmp_path / "bundle.coffer"
    a.db.write_copy(str(bundle))
    a.delete(1)
    a.put(2, "changed on the service")
    a.wait_upload()
    time.sleep(MAX_OFFLINE_S + 0.5)
    a.put(4, "note 4")
    a.wait_upload()
    return url, bundle


def offline_writes(path: Path, bundle: Path) -> None:
    """The device's file from the bundle, with writes made before it syncs."""
    with coffer.open(str(path), schema=[Note], seed_path=str(bundle)) as db:
        with db.write():
            db.create(Note, {"id": 3, "text": "edited offline"}, update="modified")
            db.create(Note, {"id": 5, "text": "created offline"})


SERVICE_STATE = {"2:changed on the service", "3:note 3", "4:note 4"}


def wait_for(predicate, what: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def test_discard_unsynced_changes_gives_exactly_the_service_state(postgres, partition, too_old_bundle, clients,
                                                                  tmp_path):
    url, bundle = too_old_bundle
    offline_writes(tmp_path / "b.coffer", bundle)
    events: List[str] = []
    b = Device(tmp_path / "b.coffer", url, partition, "discard", events)
    clients.append(b)
    wait_for(lambda: events == ["before", "after"], f"the reset callbacks: {events}")
    b.wait_download()
    assert texts(b.db) == SERVICE_STATE
    assert any(e.code_name == "CLIENT_RESET" and "maximum offline time" in e.message for e in b.errors)
    # The discarded writes never reach the service; the device syncs on.
    b.put(6, "after the reset")
    state = converge(postgres, partition, [b])
    assert {line.split('"pk":')[1].split(",")[0] for line in state} == {"2", "3", "4", "6"}


def test_recover_unsynced_changes_keeps_and_uploads_the_local_writes(postgres, partition, too_old_bundle, clients,
                                                                     tmp_path):
    url, bundle = too_old_bundle
    offline_writes(tmp_path / "b.coffer", bundle)
    events: List[str] = []
    b = Device(tmp_path / "b.coffer", url, partition, "recover", events)
    clients.append(b)
    wait_for(lambda: events == ["before", "after"], f"the reset callbacks: {events}")
    b.wait_upload()
    b.wait_download()
    want = {"2:changed on the service", "3:edited offline", "4:note 4", "5:created offline"}
    assert texts(b.db) == want
    converge(postgres, partition, [b])
    assert {f"{n.id}:{n.text}" for n in b.db.objects(Note)} == want
    assert len(service_dump(postgres, partition)) == 4


def test_manual_changes_nothing_and_fails_the_session(postgres, partition, too_old_bundle, clients, tmp_path):
    url, bundle = too_old_bundle
    offline_writes(tmp_path / "b.coffer", bundle)
    events: List[str] = []
    b = Device(tmp_path / "b.coffer", url, partition, "manual", events)
    clients.append(b)
    wait_for(lambda: b.db.sync.state == "failed", f"the session did not fail: {b.db.sync.state}")
    assert "maximum offline time" in (b.db.sync.error or "")
    assert [e.code_name for e in b.errors] == ["CLIENT_RESET"]
    assert events == []
    assert texts(b.db) == {"1:note 1", "2:note 2", "3:edited offline", "5:created offline"}
    assert {line.split('"pk":')[1].split(",")[0] for line in service_dump(postgres, partition)} == {"2", "3", "4"}


def test_a_bundle_within_the_maximum_offline_time_is_not_reset(postgres, partition, services, clients, tmp_path):
    services.append(Service(postgres, tmp_path, env={"COFFER_SYNC_MAX_OFFLINE_TIME": "600"}))
    url = services[0].url
    a = PyClient(tmp_path / "a.coffer", url, partition)
    clients.append(a)
    a.put(1, "one")
    a.wait_upload()
    caught_up(a)
    bundle = tmp_path / "bundle.coffer"
    a.db.write_copy(str(bundle))
    a.put(2, "two")
    a.wait_upload()
    events: List[str] = []
    offline_writes(tmp_path / "b.coffer", bundle)
    b = Device(tmp_path / "b.coffer", url, partition, "discard", events)
    clients.append(b)
    converge(postgres, partition, [a, b])
    assert events == [] and b.errors == []
    assert texts(b.db) == {"1:one", "2:two", "3:edited offline", "5:created offline"}
