"""Bundled synced files against a real `coffer-sync serve` on a private
PostgreSQL: a device writes a copy of its synced file (`write_copy`), the
service moves on, and devices that open the copy through `seed_path` download
only the changes made since the copy, each as a client of its own, and
converge with the device that wrote it. A copy is refused while the device has
commits the service has not acknowledged. Bytes are counted by a TCP relay
between the devices and the service (what the service sends them)."""

import socket
import threading
from pathlib import Path
from typing import List, Optional

import pytest

import coffer
from conftest import Note, PyClient, Service, converge

OBJECTS = 5_000
CHANGED = 10
LONG_WAIT_S = 600  # moving 5,000 objects through a debug build of the service on a loaded machine


class Relay:
    """A loopback TCP relay to the service that counts the bytes the service
    sends through it (its answers, downloads included)."""

    def __init__(self, port: int) -> None:
        self.target = port
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.downloaded = 0
        self.lock = threading.Lock()
        self.sockets: List[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/sync/v1"

    def _accept(self) -> None:
        while True:
            try:
                down, _ = self.listener.accept()
            except OSError:
                return
            up = socket.create_connection(("127.0.0.1", self.target))
            self.sockets += [down, up]
            threading.Thread(target=self._pump, args=(down, up, False), daemon=True).start()
            threading.Thread(target=self._pump, args=(up, down, True), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket, counted: bool) -> None:
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                if counted:
                    with self.lock:
                        self.downloaded += len(data)
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def close(self) -> None:
        self.listener.close()
        for s in self.sockets:
            s.close()


class Device(PyClient):
    """A Python client whose file may be made from a bundle (`seed`)."""

    def __init__(self, path: Path, url: str, partition: str, seed: Optional[Path] = None) -> None:
        self.db = coffer.open(str(path), schema=[Note], seed_path=str(seed) if seed else None,
                              sync=coffer.SyncConfig(url=url, partition=partition))


@pytest.fixture
def relays():
    made: List[Relay] = []
    yield made
    for r in made:
        r.close()


def caught_up(device: PyClient) -> None:
    """Reconnects `device` and waits for the download: the caught-up frame of
    its new session moves its progress past its own uploads, where a bundle
    it writes then starts."""
    device.pause()
    device.resume()
    device.db.sync.wait_for_download(timeout=LONG_WAIT_S)


def fill(device: Device, count: int) -> None:
    for start in range(0, count, 1_000):
        with device.db.write():
            for i in range(start, min(count, start + 1_000)):
                device.db.create(Note, {"id": i, "text": f"note {i} " + "x" * 40})


def test_a_bundle_downloads_only_the_changes_made_since_the_copy(postgres, partition, services, clients, relays,
                                                                 tmp_path):
    services.append(Service(postgres, tmp_path))
    service = services[0]
    # Device A syncs its data and writes the bundle once it is caught up.
    a = Device(tmp_path / "a.coffer", service.url, partition)
    clients.append(a)
    fill(a, OBJECTS)
    a.db.sync.wait_for_upload(timeout=LONG_WAIT_S)
    caught_up(a)
    bundle = tmp_path / "bundle.coffer"
    a.db.write_copy(str(bundle))
    # The service moves on: A changes a few objects after the copy.
    with a.db.write():
        for i in range(CHANGED):
            a.db.create(Note, {"id": i, "text": f"changed {i}"}, update="modified")
    a.wait_upload()
    # A device without the bundle downloads everything; one with it, the delta.
    full_relay, delta_relay, second_relay = Relay(service.port), Relay(service.port), Relay(service.port)
    relays += [full_relay, delta_relay, second_relay]
    fresh = Device(tmp_path / "fresh.coffer", full_relay.url(), partition)
    clients.append(fresh)
    fresh.db.sync.wait_for_download(timeout=LONG_WAIT_S)
    fresh.db.refresh()
    b = Device(tmp_path / "b.coffer", delta_relay.url(), partition, seed=bundle)
    clients.append(b)
    b.wait_download()
    assert len(fresh.db.objects(Note)) == OBJECTS
    assert len(b.db.objects(Note)) == OBJECTS
    assert b.db.object_for_primary_key(Note, 3).text == "changed 3"
    assert b.db.object_for_primary_key(Note, CHANGED).text == f"note {CHANGED} " + "x" * 40
    full, delta = full_relay.downloaded, delta_relay.downloaded
    print(f"downloaded: without the bundle {full} bytes, with it {delta} bytes ({delta / full:.4f})")
    # The delta is about the 10 changes (plus the session's own frames), not the 5,000 objects.
    assert delta < full / 50, (full, delta)
    assert delta < 64 * CHANGED + 4_096, delta
    # Every device made from the bundle is a client of its own: their
    # writes reach the others, none taken for a repeat of A's or of each other's.
    second = Device(tmp_path / "second.coffer", second_relay.url(), partition, seed=bundle)
    clients.append(second)
    b.put(OBJECTS + 1, "from B")
    second.put(OBJECTS + 2, "from the second device")
    a.put(OBJECTS + 3, "from A")
    state = converge(postgres, partition, [a, b, second, fresh])
    assert len(state) == OBJECTS + 3
    assert second.db.object_for_primary_key(Note, 3).text == "changed 3"


def test_a_copy_waits_for_the_upload_of_local_changes(postgres, partition, services, clients, tmp_path):
    services.append(Service(postgres, tmp_path))
    a = Device(tmp_path / "a.coffer", services[0].url, partition)
    clients.append(a)
    a.put(1, "synced")
    a.wait_upload()
    caught_up(a)
    a.pause()
    a.put(2, "not uploaded")
    copy = tmp_path / "copy.coffer"
    with pytest.raises(coffer.MisuseError, match="1 local commit not uploaded yet"):
        a.db.write_copy(str(copy))
    assert not copy.exists()
    a.resume()
    a.wait_upload()
    a.db.write_copy(str(copy))
    # The copy holds both, and uploads neither again: it converges as is.
    b = Device(tmp_path / "b.coffer", services[0].url, partition, seed=copy)
    clients.append(b)
    assert converge(postgres, partition, [a, b]) == b.dump()
    assert len(b.dump()) == 2
