"""The pieces of the end-to-end sync tests: a private PostgreSQL (scripts/postgres),
`coffer-sync serve` processes that can be killed with -9 and started again on the
same port, and clients of both kinds behind one interface: the C client
(build/Tests/c/sync_client, the core's built-in ws:// transport) and the Python
binding (its `websockets` transport). Every client and the service print their
state as `coffer-sync dump` lines, which the tests compare as sets.

Environment: COFFER_SYNC_BIN (the coffer-sync executable, default
.build/debug/coffer-sync), COFFER_SYNC_CLIENT (default build/Tests/c/sync_client),
COFFER_PG_URL (a cluster already running, as under `scripts/postgres run`)."""

import json
import os
import re
import socket
import subprocess
import time
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Set

import pytest

import coffer

ROOT = Path(__file__).resolve().parents[2]
SERVICE_BIN = os.environ.get("COFFER_SYNC_BIN", str(ROOT / ".build" / "debug" / "coffer-sync"))
C_CLIENT = os.environ.get("COFFER_SYNC_CLIENT", str(ROOT / "build" / "Tests" / "c" / "sync_client"))
WAIT_S = 60


class Note(coffer.Object):
    id: int = coffer.primary_key()
    tags: List[str]
    text: str = ""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Service:
    """One `coffer-sync serve` on a fixed port, so that clients find it again
    after a restart; `config` is a configuration file (--config) and `env`
    more environment variables."""

    def __init__(self, postgres: str, log_dir: Path, port: Optional[int] = None,
                 config: Optional[Path] = None, env: Optional[Dict[str, str]] = None) -> None:
        self.postgres = postgres
        self.config = config
        self.env = env
        self.port = port or free_port()
        self.log = log_dir / f"coffer-sync-{self.port}.log"
        self.proc: Optional[subprocess.Popen] = None
        self.start()

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/sync/v1"

    @property
    def http_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        args = [SERVICE_BIN, "serve", "--postgres", self.postgres, "--listen", f"127.0.0.1:{self.port}"]
        if self.config is not None:
            args += ["--config", str(self.config)]
        env = {**os.environ, **self.env} if self.env else None
        with open(self.log, "a") as log:
            self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=log, text=True, env=env)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if "listening" not in line:
            raise AssertionError(f"coffer-sync did not start: {line!r}; its log: {self.log.read_text()[-2000:]}")

    def kill(self) -> None:
        """SIGKILL: no graceful end."""
        if self.proc:
            self.proc.kill()
            self.proc.wait()
            self.proc = None

    def stop(self) -> None:
        if self.proc:
            self.proc.terminate()
            self.proc.wait(30)
            self.proc = None


class ClientError(Exception):
    pass


class CClient:
    """The C client: one process, one command per line."""

    kind = "C"

    def __init__(self, path: Path, url: str, partition: str, token: Optional[str] = None) -> None:
        self.proc = subprocess.Popen([C_CLIENT], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
        if token is not None:
            self._cmd(f"token {token}")
        self._cmd(f"open {path} {url} {partition}")

    def _cmd(self, line: str) -> None:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        reply = self.proc.stdout.readline().strip()
        if reply != "ok":
            raise ClientError(f"C client: {line}: {reply or 'no answer (it exited)'}")

    def put(self, id: int, text: str) -> None:
        self._cmd(f"put {id} {text}")

    def delete(self, id: int) -> None:
        self._cmd(f"del {id}")

    def tag(self, id: int, pos: int, text: str) -> None:
        self._cmd(f"tag {id} {pos} {text}")

    def untag(self, id: int, pos: int) -> None:
        self._cmd(f"untag {id} {pos}")

    def pause(self) -> None:
        self._cmd("pause")

    def resume(self) -> None:
        self._cmd("resume")

    def wait_upload(self) -> None:
        self._cmd(f"wait_upload {WAIT_S * 1000}")

    def wait_download(self) -> None:
        self._cmd(f"wait_download {WAIT_S * 1000}")

    def dump(self) -> Set[str]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write("dump\n")
        self.proc.stdin.flush()
        lines = set()
        while True:
            line = self.proc.stdout.readline().strip()
            if line == "ok":
                return lines
            if not line.startswith("{"):
                raise ClientError(f"C client: dump: {line}")
            lines.add(line)

    def close(self) -> None:
        if self.proc.poll() is None:
            self._cmd("close")
            assert self.proc.stdin is not None
            self.proc.stdin.close()
            self.proc.wait(30)


class PyClient:
    """The Python binding with its own transport."""

    kind = "Python"

    def __init__(self, path: Path, url: str, partition: str) -> None:
        self.db = coffer.open(str(path), schema=[Note], sync=coffer.SyncConfig(url=url, partition=partition))

    def _note(self, id: int) -> Optional[Note]:
        return self.db.object_for_primary_key(Note, id)

    def put(self, id: int, text: str) -> None:
        with self.db.write():
            self.db.create(Note, {"id": id, "text": text}, update="modified")

    def delete(self, id: int) -> None:
        with self.db.write():
            note = self._note(id)
            if note is not None:
                self.db.delete(note)

    def tag(self, id: int, pos: int, text: str) -> None:
        with self.db.write():
            note = self._note(id)
            if note is not None:
                note.tags.insert(min(pos, len(note.tags)), text)

    def untag(self, id: int, pos: int) -> None:
        with self.db.write():
            note = self._note(id)
            if note is not None and len(note.tags):
                del note.tags[pos % len(note.tags)]

    def pause(self) -> None:
        # pause() returns at once; the session closes its connection after
        # the frame it is handling: wait for that, as the tests rely on it.
        self.db.sync.pause()
        deadline = time.monotonic() + WAIT_S
        while self.db.sync.state != "paused":
            assert time.monotonic() < deadline, f"the session did not pause: {self.db.sync.state}"
            time.sleep(0.005)

    def resume(self) -> None:
        self.db.sync.resume()

    def wait_upload(self) -> None:
        self.db.sync.wait_for_upload(timeout=WAIT_S)

    def wait_download(self) -> None:
        self.db.sync.wait_for_download(timeout=WAIT_S)
        self.db.refresh()

    def dump(self) -> Set[str]:
        self.db.refresh()
        return {json.dumps({"class": "Note", "pk": n.id, "properties": {"tags": list(n.tags), "text": n.text}},
                           separators=(",", ":"))
                for n in self.db.objects(Note)}

    def close(self) -> None:
        self.db.close()


def service_dump(postgres: str, partition: str) -> Set[str]:
    out = subprocess.run([SERVICE_BIN, "dump", "--postgres", postgres, "--partition", partition],
                         capture_output=True, text=True, timeout=120)
    if out.returncode != 0:
        if "does not exist" in out.stderr:
            return set()
        raise AssertionError(f"coffer-sync dump failed: {out.stderr}")
    return {line for line in out.stdout.splitlines() if line}


def converge(postgres: str, partition: str, clients: List, attempts: int = 60) -> Set[str]:
    """Waits until every client uploaded, then until every client's objects are
    the service's, and returns them; fails naming the first difference."""
    for c in clients:
        c.wait_upload()
    diff = ""
    for _ in range(attempts):
        want = service_dump(postgres, partition)
        diff = ""
        for c in clients:
            c.wait_download()
            got = c.dump()
            if got != want:
                diff = (f"{c.kind} client differs from the service: only in the client "
                        f"{sorted(got - want)[:3]}, only in the service {sorted(want - got)[:3]}")
                break
        if not diff:
            return want
        time.sleep(0.25)
    raise AssertionError(diff)


@pytest.fixture(scope="session")
def postgres(tmp_path_factory) -> Iterator[str]:
    for path in (SERVICE_BIN, C_CLIENT):
        if not os.access(path, os.X_OK):
            raise AssertionError(f"{path} is missing: build it (swift build --product coffer-sync; "
                                 "cmake --build build --target sync_client)")
    url = os.environ.get("COFFER_PG_URL")
    started = None
    if not url:
        out = subprocess.run([str(ROOT / "scripts" / "postgres"), "start", "--watch", str(os.getpid())],
                             capture_output=True, text=True, timeout=300)
        if out.returncode != 0:
            raise AssertionError(f"scripts/postgres start failed: {out.stderr}")
        url = re.search(r"COFFER_PG_URL=(\S+)", out.stdout).group(1)
        started = re.search(r"COFFER_PG_DIR=(\S+)", out.stdout).group(1)
    migrate = subprocess.run([SERVICE_BIN, "migrate", "--postgres", url], capture_output=True, text=True, timeout=120)
    assert migrate.returncode == 0, migrate.stderr
    yield url
    if started:
        subprocess.run([str(ROOT / "scripts" / "postgres"), "stop", started], timeout=120)


@pytest.fixture
def partition(request) -> str:
    return re.sub(r"\W", "-", request.node.name) + f"-{time.monotonic_ns()}"


@pytest.fixture
def services(postgres, tmp_path) -> Iterator[List[Service]]:
    """Started services, stopped after the test."""
    started: List[Service] = []
    yield started
    for s in started:
        s.stop()


@pytest.fixture
def dbs() -> Iterator[List[coffer.Database]]:
    """Databases the test opened, closed after it."""
    opened: List[coffer.Database] = []
    yield opened
    for db in opened:
        db.close()


@pytest.fixture
def clients() -> Iterator[List]:
    opened: List = []
    yield opened
    for c in opened:
        c.close()
