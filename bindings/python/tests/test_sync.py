"""Sync from Python: coffer.open(..., sync=coffer.SyncConfig(...)), db.sync's
waits, pause, resume, state and error, with Python's own WebSocket
transport (the `websockets` package) and with the core's built-in ws://
client. The peer is a small WebSocket relay in this file that speaks the
protocol of docs/SYNC.md, written from the document (its own decoding of
frames and changesets), and keeps a history and each client's progress as
a service does; the real service is tested against the same document on its
own."""

import shutil
import ssl
import struct
import subprocess
import sys
import threading
import time
from typing import Dict, List, Optional, Tuple

import pytest

import coffer

websockets_server = pytest.importorskip("websockets.sync.server")


class Note(coffer.Object):
    id: int = coffer.primary_key()
    text: str = ""
    blob: bytes = b""


class Loose(coffer.Object):
    x: int = 0


# ---- the protocol, from docs/SYNC.md ---------------------------------------


def varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


class Reader:
    def __init__(self, data: bytes) -> None:
        self.data, self.i = data, 0

    def u8(self) -> int:
        self.i += 1
        return self.data[self.i - 1]

    def raw(self, n: int) -> bytes:
        if self.i + n > len(self.data):
            raise ValueError("truncated")
        self.i += n
        return self.data[self.i - n:self.i]

    def varint(self) -> int:
        n = shift = 0
        while True:
            b = self.u8()
            n |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                return n

    def string(self) -> bytes:
        return self.raw(self.varint())

    def value(self) -> None:
        tag = self.u8()
        fixed = {0: 0, 1: 1, 3: 4, 4: 8, 8: 12, 9: 16, 10: 16}
        if tag in fixed:
            self.raw(fixed[tag])
        elif tag == 2:
            self.varint()
        elif tag in (5, 6):
            self.string()
        elif tag == 7:
            self.varint()
            self.varint()
        elif tag == 11:
            self.string()
            self.value()
        elif tag == 12:
            self.string()
            for _ in range(self.varint()):
                self.string()
                self.value()
        elif tag == 13:
            for _ in range(self.varint()):
                self.value()
        elif tag == 14:
            for _ in range(self.varint()):
                self.string()
                self.value()
        else:
            raise ValueError(f"value tag {tag}")

    def elem_id(self) -> None:
        self.raw(8 + 16)
        self.varint()

    def changeset(self) -> Tuple[int, bytes]:
        start = self.i
        version = self.varint()
        self.raw(8)
        for _ in range(self.varint()):
            op = self.u8()
            self.string()
            self.value()
            if op in (1, 2):
                for _ in range(self.varint()):
                    self.string()
                    self.value()
            elif op == 3:
                pass
            else:
                self.string()
                if op == 4:
                    self.elem_id()
                    if self.u8():
                        self.elem_id()
                    self.value()
                elif op == 5:
                    self.elem_id()
                elif op == 6:
                    self.elem_id()
                    self.value()
                elif op in (7, 8):
                    self.value()
                elif op == 9:
                    self.string()
                    self.value()
                elif op == 10:
                    self.string()
        return version, self.data[start:self.i]


class Relay:
    """One partition's history and its clients' progress, served over WebSocket."""

    def __init__(self, tls: Optional[ssl.SSLContext] = None) -> None:
        self.lock = threading.Lock()
        self.history: List[Tuple[int, bytes, bytes]] = []  # server version, origin, changeset
        self.last: Dict[bytes, int] = {}
        self.queues: Dict[bytes, List[bytes]] = {}
        self.upload_frames = 0
        # (class, int primary key): answer every upload with ERROR COMPENSATING_WRITE naming it.
        self.compensate: Optional[Tuple[bytes, int]] = None
        self.server = websockets_server.serve(self.handle, "127.0.0.1", 0, compression=None, max_size=None, ssl=tls)
        self.port = self.server.socket.getsockname()[1]
        self.scheme = "wss" if tls is not None else "ws"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"{self.scheme}://127.0.0.1:{self.port}/sync/v1"

    def download(self, entries: List[Tuple[int, bytes, bytes]]) -> bytes:
        latest = self.history[-1][0] if self.history else 0
        body = b"".join(varint(v) + origin + cs for v, origin, cs in entries)
        return b"\x05" + varint(latest) + varint(len(entries)) + body

    def handle(self, ws) -> None:
        r = Reader(ws.recv())
        assert r.u8() == 1
        protocol = r.varint()
        # 4 is 2 with PROGRESS frames, which this relay does not send: it answers 2.
        assert protocol in (1, 2, 4)
        protocol = min(protocol, 2)
        client = r.raw(16)
        assert r.string() == b"team-1"
        r.string()
        after = r.varint()
        with self.lock:
            self.queues[client] = []
            ws.send(b"\x02" + varint(protocol) + varint(self.last.get(client, 0)) +
                    varint(self.history[-1][0] if self.history else 0))
            ws.send(self.download([e for e in self.history if e[0] > after and e[1] != client]))
        try:
            while True:
                with self.lock:
                    pending, self.queues[client] = self.queues[client], []
                for frame in pending:
                    ws.send(frame)
                try:
                    data = ws.recv(timeout=0.02)
                except TimeoutError:
                    continue
                r = Reader(data)
                kind = r.u8()
                if kind == 6:
                    continue
                assert kind == 3
                with self.lock:
                    self.upload_frames += 1
                    for _ in range(r.varint()):
                        version, cs = r.changeset()
                        if version <= self.last.get(client, 0):
                            continue
                        self.last[client] = version
                        entry = (len(self.history) + 1, client, cs)
                        self.history.append(entry)
                        for other, queue in self.queues.items():
                            if other != client:
                                queue.append(self.download([entry]))
                    ws.send(b"\x04" + varint(self.last.get(client, 0)) + varint(len(self.history)))
                    if self.compensate is not None:
                        cls, pk = self.compensate
                        message = b"write to Note %d refused by the write rule of Note (false)" % pk
                        ws.send(b"\x07" + varint(10) + varint(len(message)) + message + b"\x00" +
                                varint(len(cls)) + cls + b"\x02" + varint((pk << 1) ^ (pk >> 63)))
        except Exception:  # the client went away
            pass

    def stop(self) -> None:
        self.server.shutdown()
        self.thread.join(5)


@pytest.fixture
def relay():
    r = Relay()
    yield r
    r.stop()


def arrives(db, check, attempts=200):
    """Waits for the download until `check()` holds: a change pushed by the
    service may still be on its way when a wait begins."""
    for _ in range(attempts):
        db.sync.wait_for_download(timeout=20)
        db.refresh()
        if check():
            return
        time.sleep(0.05)
    raise AssertionError("the change never arrived")


def open_synced(path, url, transport="websockets"):
    return coffer.open(str(path), schema=[Note],
                       sync=coffer.SyncConfig(url=url, partition="team-1", transport=transport))


# ---- tests -----------------------------------------------------------------


@pytest.mark.parametrize("transport", ["websockets", "builtin"])
def test_two_clients_converge(tmp_path, relay, transport):
    a = open_synced(tmp_path / "a.coffer", relay.url, transport)
    b = open_synced(tmp_path / "b.coffer", relay.url, transport)
    try:
        with a.write():
            a.create(Note, {"id": 1, "text": "from A", "blob": bytes(200000)})
        with b.write():
            b.create(Note, {"id": 2, "text": "from B"})
        a.sync.wait_for_upload(timeout=20)
        b.sync.wait_for_upload(timeout=20)
        arrives(a, lambda: a.object_for_primary_key(Note, 2) is not None)
        arrives(b, lambda: b.object_for_primary_key(Note, 1) is not None)
        assert b.object_for_primary_key(Note, 1).text == "from A"
        assert len(b.object_for_primary_key(Note, 1).blob) == 200000
        assert a.object_for_primary_key(Note, 2).text == "from B"
        assert a.sync.state == "connected"
        assert a.sync.error == ""
        # An update and a delete travel too.
        with a.write():
            a.object_for_primary_key(Note, 2).text = "edited by A"
            a.delete(a.object_for_primary_key(Note, 1))
        a.sync.wait_for_upload(timeout=20)
        arrives(b, lambda: b.object_for_primary_key(Note, 1) is None)
        assert b.object_for_primary_key(Note, 2).text == "edited by A"
        assert b.object_for_primary_key(Note, 1) is None
    finally:
        a.close()
        b.close()


def test_pause_resume_and_timeouts(tmp_path, relay):
    db = open_synced(tmp_path / "a.coffer", relay.url)
    try:
        db.sync.wait_for_download(timeout=20)
        db.sync.pause()
        with db.write():
            db.create(Note, {"id": 1})
        with pytest.raises(coffer.SyncTimeoutError, match="did not finish"):
            db.sync.wait_for_upload(timeout=0.1)
        assert db.sync.state == "paused"
        assert relay.history == []
        db.sync.resume()
        db.sync.wait_for_upload(timeout=20)
        assert len(relay.history) == 1
        with pytest.raises(coffer.InvalidArgumentError, match="timeout"):
            db.sync.wait_for_upload(timeout=-1)
    finally:
        db.close()


class StateLog:
    """What a state callback saw, and on which threads."""

    def __init__(self) -> None:
        self.changes: List[Tuple[str, str]] = []
        self.threads: List[int] = []
        self.cond = threading.Condition()

    def __call__(self, old: str, new: str) -> None:
        with self.cond:
            self.changes.append((old, new))
            self.threads.append(threading.get_ident())
            self.cond.notify_all()

    def wait_for(self, state: str, after: int = 0, timeout: float = 20) -> int:
        with self.cond:
            found = self.cond.wait_for(
                lambda: any(new == state for _, new in self.changes[after:]), timeout)
            assert found, f"never told of {state!r}: {self.changes}"
            return next(i for i in range(after, len(self.changes)) if self.changes[i][1] == state)


@pytest.mark.parametrize("transport", ["websockets", "builtin"])
def test_state_changes_are_told(tmp_path, relay, transport):
    db = open_synced(tmp_path / "a.coffer", relay.url, transport)
    log = StateLog()
    token = db.sync.on_state_change(log)
    try:
        log.wait_for("connected")
        assert db.sync.state == "connected"
        before = len(log.changes)
        db.sync.pause()
        # Paused as soon as pause() returns, and told before it returned.
        assert db.sync.state == "paused"
        assert log.changes[before] == ("connected", "paused")
        db.sync.resume()
        at = log.wait_for("connecting", before + 1)
        assert log.changes[at] == ("paused", "connecting")
        log.wait_for("connected", at)
        assert threading.get_ident() not in log.threads[at:]  # told on the session's thread
        # Every change starts where the one before ended.
        for (_, new), (old, _) in zip(log.changes, log.changes[1:]):
            assert new == old
        # Once cancelled, nothing more is told.
        token.cancel()
        token.cancel()
        told = len(log.changes)
        db.sync.pause()
        db.sync.resume()
        db.sync.wait_for_download(timeout=20)
        assert len(log.changes) == told
    finally:
        db.close()


def test_the_last_state_change_is_to_off_and_bad_callbacks(tmp_path, relay, monkeypatch):
    reported: List[BaseException] = []
    monkeypatch.setattr(sys, "unraisablehook", lambda args: reported.append(args.exc_value))
    db = open_synced(tmp_path / "a.coffer", relay.url)
    log = StateLog()
    failing_calls = []

    def failing(old: str, new: str) -> None:
        failing_calls.append(new)
        raise RuntimeError("a broken callback")

    with pytest.raises(TypeError, match="callable"):
        db.sync.on_state_change("not a function")  # type: ignore[arg-type]
    with db.sync.on_state_change(failing):
        db.sync.on_state_change(log)
        db.sync.wait_for_download(timeout=20)
        # A callback that raises does not stop the session nor the others.
        log.wait_for("connected")
        db.sync.pause()
        assert log.changes[-1] == ("connected", "paused")
        assert failing_calls[-1] == "paused"
    assert any(isinstance(exc, RuntimeError) and "a broken callback" in str(exc) for exc in reported)
    db.sync.resume()
    db.sync.wait_for_download(timeout=20)
    db.close()
    # Closing ends the connection, then the session.
    assert log.changes[-1][1] == "off"
    assert log.threads[-1] == threading.get_ident()
    assert failing_calls[-1] == "paused"


def throwaway_certificates(folder) -> Dict[str, str]:
    """A CA and a server certificate for 127.0.0.1 signed by it, and another
    CA that signed nothing, made by openssl in `folder`."""
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed (scripts/setup installs it)")

    def openssl(*args: str) -> None:
        subprocess.run(["openssl", *args], cwd=folder, check=True, capture_output=True)

    for ca in ("ca", "other-ca"):
        openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", f"/CN=Coffer test {ca}",
                "-keyout", f"{ca}.key", "-out", f"{ca}.pem")
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1", "-keyout", "server.key",
            "-out", "server.csr")
    (folder / "san.ext").write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
            "-days", "2", "-extfile", "san.ext", "-out", "server.pem")
    return {name: str(folder / name) for name in ("ca.pem", "other-ca.pem", "server.pem", "server.key")}


def test_wss_with_a_ca_of_its_own_and_a_wrong_ca_named(tmp_path):
    files = throwaway_certificates(tmp_path)
    server_tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_tls.load_cert_chain(files["server.pem"], files["server.key"])
    tls_relay = Relay(tls=server_tls)
    try:
        assert tls_relay.url.startswith("wss://")
        trusted = ssl.create_default_context(cafile=files["ca.pem"])
        a = coffer.open(str(tmp_path / "a.coffer"), schema=[Note],
                        sync=coffer.SyncConfig(url=tls_relay.url, partition="team-1", ssl_context=trusted))
        b = coffer.open(str(tmp_path / "b.coffer"), schema=[Note],
                        sync=coffer.SyncConfig(url=tls_relay.url, partition="team-1", ssl_context=trusted))
        try:
            with a.write():
                a.create(Note, {"id": 1, "text": "over TLS"})
            a.sync.wait_for_upload(timeout=20)
            arrives(b, lambda: b.object_for_primary_key(Note, 1) is not None)
            assert b.object_for_primary_key(Note, 1).text == "over TLS"
        finally:
            a.close()
            b.close()

        # Another CA: refused, and the session's error names the certificate problem.
        wrong = ssl.create_default_context(cafile=files["other-ca.pem"])
        c = coffer.open(str(tmp_path / "c.coffer"), schema=[Note],
                        sync=coffer.SyncConfig(url=tls_relay.url, partition="team-1", ssl_context=wrong))
        try:
            with c.write():
                c.create(Note, {"id": 2})
            with pytest.raises(coffer.SyncTimeoutError):
                c.sync.wait_for_upload(timeout=1)
            assert "CERTIFICATE_VERIFY_FAILED" in c.sync.error or "certificate verify failed" in c.sync.error
            assert c.sync.state in ("connecting", "disconnected")
        finally:
            c.close()
        assert len(tls_relay.history) == 1  # nothing came through the refused connection

        # The builtin transport has no TLS: refused at open, naming the URL.
        with pytest.raises(coffer.InvalidArgumentError, match="no TLS"):
            coffer.open(str(tmp_path / "d.coffer"), schema=[Note],
                        sync=coffer.SyncConfig(url=tls_relay.url, partition="team-1", transport="builtin"))
        with pytest.raises(coffer.InvalidArgumentError, match="ssl_context"):
            coffer.SyncConfig(url=tls_relay.url, partition="p", transport="builtin", ssl_context=trusted)
    finally:
        tls_relay.stop()


def test_no_service_is_a_timeout_never_a_hang(tmp_path):
    db = open_synced(tmp_path / "a.coffer", "ws://127.0.0.1:9/sync/v1")
    try:
        with db.write():
            db.create(Note, {"id": 1})
        started = time.monotonic()
        with pytest.raises(coffer.SyncTimeoutError):
            db.sync.wait_for_upload(timeout=0.3)
        with pytest.raises(TimeoutError):  # SyncTimeoutError is a TimeoutError
            db.sync.wait_for_download(timeout=0.1)
        assert time.monotonic() - started < 30
        assert db.sync.state in ("connecting", "disconnected")
        assert "websockets:" in db.sync.error  # the transport's own failure, by name
    finally:
        db.close()


def test_offline_for_a_week(tmp_path, relay):
    now = [1_700_000_000_000]
    coffer.sync.set_clock_source(lambda: now[0])
    try:
        a = open_synced(tmp_path / "a.coffer", relay.url)
        a.sync.pause()
        for i in range(200):
            now[0] += 3_000_000  # 50 minutes: a week in all
            with a.write():
                a.create(Note, {"id": i % 20, "text": f"note {i}"}, update="modified")
        a.sync.resume()
        a.sync.wait_for_upload(timeout=60)
        b = open_synced(tmp_path / "b.coffer", relay.url)
        b.sync.wait_for_download(timeout=60)
        b.refresh()
        assert len(b.objects(Note)) == 20
        assert b.object_for_primary_key(Note, 19).text == "note 199"
        a.close()
        b.close()
    finally:
        coffer.sync.set_clock_source(None)


def test_configuration_errors(tmp_path):
    with pytest.raises(coffer.InvalidArgumentError, match="ws:// or wss://"):
        coffer.SyncConfig(url="http://x", partition="p")
    with pytest.raises(coffer.InvalidArgumentError, match="partition"):
        coffer.SyncConfig(url="ws://x", partition="")
    with pytest.raises(coffer.InvalidArgumentError, match="transport"):
        coffer.SyncConfig(url="ws://x", partition="p", transport="carrier pigeon")
    with pytest.raises(TypeError, match="SyncConfig"):
        coffer.open(str(tmp_path / "x.coffer"), schema=[Note], sync={"url": "ws://x"})
    with pytest.raises(coffer.SchemaError, match="'Loose' has no primary key"):
        coffer.open(str(tmp_path / "loose.coffer"), schema=[Loose],
                    sync=coffer.SyncConfig(url="ws://127.0.0.1:9/sync/v1", partition="p"))
    with coffer.open(str(tmp_path / "plain.coffer"), schema=[Note]) as db:
        with pytest.raises(coffer.MisuseError, match="does not sync"):
            db.sync


def test_a_commit_too_large_to_sync_is_refused(tmp_path):
    db = open_synced(tmp_path / "a.coffer", "ws://127.0.0.1:9/sync/v1")
    try:
        blob = bytes(13 << 20)
        with pytest.raises(coffer.LimitError, match="64 MiB"):
            with db.write():
                for i in range(5):
                    db.create(Note, {"id": i, "blob": blob})
        # Nothing of it was committed, and the file goes on.
        assert len(db.objects(Note)) == 0
        with db.write():
            db.create(Note, {"id": 9, "text": "small"})
        assert db.object_for_primary_key(Note, 9).text == "small"
    finally:
        db.close()


def test_a_file_restored_from_a_backup_becomes_a_new_client(tmp_path, relay):
    a = open_synced(tmp_path / "a.coffer", relay.url)
    with a.write():
        a.create(Note, {"id": 1, "text": "before the backup"})
    a.sync.wait_for_upload(timeout=20)
    a.close()
    (tmp_path / "backup.coffer").write_bytes((tmp_path / "a.coffer").read_bytes())
    a = open_synced(tmp_path / "a.coffer", relay.url)
    for i in (2, 3):
        with a.write():
            a.create(Note, {"id": i, "text": "after the backup"})
    a.sync.wait_for_upload(timeout=20)
    a.close()
    restored = open_synced(tmp_path / "backup.coffer", relay.url)
    try:
        with restored.write():
            restored.create(Note, {"id": 4, "text": "only in the restored file"})
        restored.sync.wait_for_upload(timeout=20)
        arrives(restored, lambda: restored.object_for_primary_key(Note, 3) is not None)
        # Its commit reached the service under a new client id, not dropped
        # as a repeat of the original's version.
        assert len(relay.last) == 2
        assert any(b"only in the restored file" in cs for _, _, cs in relay.history)
    finally:
        restored.close()


def test_on_error_is_told_of_a_compensating_write(tmp_path, relay):
    reported: List[coffer.SyncError] = []
    relay.compensate = (b"Note", 7)
    db = coffer.open(str(tmp_path / "a.coffer"), schema=[Note],
                     sync=coffer.SyncConfig(url=relay.url, partition="team-1", on_error=reported.append))
    try:
        with db.write():
            db.create(Note, {"id": 7, "text": "refused"})
        db.sync.wait_for_upload(timeout=20)
        deadline = time.monotonic() + 20
        while not reported:
            assert time.monotonic() < deadline, "the compensating write was not reported"
            time.sleep(0.01)
        error = reported[0]
        assert isinstance(error, coffer.SyncError) and isinstance(error, Exception)
        assert error.is_compensating_write and error.code == coffer.SyncError.COMPENSATING_WRITE == 10
        assert error.code_name == "COMPENSATING_WRITE" and not error.fatal
        assert (error.class_name, error.primary_key) == ("Note", 7)
        assert "write to Note 7 refused" in error.message and "COMPENSATING_WRITE" in str(error)
        assert db.sync.state == "connected"  # not fatal: the session goes on
        assert db.sync.callback_exception is None
    finally:
        db.close()


def test_an_on_error_that_raises_is_kept_not_propagated(tmp_path, relay):
    def fails(error: coffer.SyncError) -> None:
        raise RuntimeError(f"the app could not handle {error.code_name}")

    relay.compensate = (b"Note", 1)
    db = coffer.open(str(tmp_path / "a.coffer"), schema=[Note],
                     sync=coffer.SyncConfig(url=relay.url, partition="team-1", on_error=fails))
    try:
        with db.write():
            db.create(Note, {"id": 1, "text": "x"})
        db.sync.wait_for_upload(timeout=20)
        deadline = time.monotonic() + 20
        while db.sync.callback_exception is None:
            assert time.monotonic() < deadline, "the callback was not called"
            time.sleep(0.01)
        assert "could not handle COMPENSATING_WRITE" in str(db.sync.callback_exception)
        with db.write():
            db.create(Note, {"id": 2, "text": "y"})
        db.sync.wait_for_upload(timeout=20)  # the session goes on
    finally:
        db.close()


def test_on_error_must_be_callable():
    with pytest.raises(coffer.InvalidArgumentError, match="on_error must be callable"):
        coffer.SyncConfig(url="ws://x", partition="p", on_error="print")
