"""The cost of deleted objects' tombstones and ghosts to a client integrating
downloads (Sources/CCoffer/sync/ghost.c, integrate.c): a Python client with
its own Coffer file downloads `--changes` one-object CREATE changesets, first
in a partition where nothing was ever deleted (the peer), then in one where it
already integrated `--ghosts` objects that were created, deleted and updated
after the delete (each leaving a tombstone and a ghost in its file). Both
batches are uploaded by a simulated protocol client (loadgen.py) while the
reader is connected, 500 changesets per UPLOAD; the figure is the time from
the first UPLOAD to the last object showing in the reader's file.

    scripts/postgres run env COFFER_SYNC_BIN=.build/release/coffer-sync \\
        COFFER_LIBRARY=build/libcoffer.so.0 .venv/bin/python Benchmarks/sync/ghost_bench.py

Figures of one run on a shared machine: compare them within a run only."""

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import List

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parents[1] / "Tests" / "sync"))
import loadgen  # noqa: E402
import wire  # noqa: E402
from conftest import SERVICE_BIN, Note, PyClient, Service  # noqa: E402

BATCH = 500
MARKER = -(1 << 40)


def clock() -> int:
    return time.time_ns() // 1_000_000 << 16


def ghost_changesets(first_version: int, n: int) -> List[bytes]:
    """Per object: a create, a delete, and an update stamped after the delete;
    then the marker object."""
    out, v = [], first_version
    for k in range(n):
        pk = -1 - k
        for change in (wire.change(wire.CREATE, "Note", pk, [("text", "x")]), wire.change(wire.DELETE, "Note", pk),
                       wire.change(wire.UPDATE, "Note", pk, [("text", "after the delete")])):
            out.append(wire.changeset(v, clock() + v, [change]))
            v += 1
    # A live marker last: once the reader has it, it has integrated the rest.
    out.append(wire.changeset(v, clock() + v, [wire.change(wire.CREATE, "Note", MARKER, [("text", "marker")])]))
    return out


def create_changesets(first_version: int, n: int) -> List[bytes]:
    return [wire.changeset(first_version + k, clock() + first_version + k,
                           [wire.change(wire.CREATE, "Note", k, [("text", f"v{k}")])]) for k in range(n)]


async def upload(url: str, partition: str, changesets: List[bytes]) -> None:
    """Uploads through a new simulated client, BATCH changesets per UPLOAD."""
    c = loadgen.Client(url, partition, loadgen.Tracker(0), 0)
    await c.connect()
    try:
        for i in range(0, len(changesets), BATCH):
            part = changesets[i:i + BATCH]
            c.version = i + len(part)
            await c.upload(part)
    finally:
        await c.close()


def measure(url: str, work: Path, ghosts: int, changes: int) -> float:
    partition = f"ghosts-{ghosts}-{time.monotonic_ns()}"
    reader = PyClient(work / f"{partition}.coffer", url, partition)
    try:
        reader.wait_download()
        if ghosts:
            asyncio.run(upload(url, partition, ghost_changesets(1, ghosts)))
            settle(reader, ghosts)  # the reader integrates them before the measured batch
        started = time.monotonic()
        asyncio.run(upload(url, partition, create_changesets(1, changes)))
        wait_for_objects(reader, changes + (1 if ghosts else 0))
        return time.monotonic() - started
    finally:
        reader.close()


def settle(reader: PyClient, ghosts: int) -> None:
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        reader.wait_download()
        time.sleep(0.2)
        if reader.db.object_for_primary_key(Note, MARKER) is not None:
            return
    raise AssertionError("the reader did not integrate the deletes")


def wait_for_objects(reader: PyClient, n: int) -> None:
    deadline = time.monotonic() + 600
    while len(reader.db.objects(Note)) < n:
        assert time.monotonic() < deadline, "the reader did not get every object"
        reader.db.sync.wait_for_download(timeout=60)
        reader.db.refresh()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--changes", type=int, default=2000)
    parser.add_argument("--ghosts", type=int, default=10000)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    postgres = os.environ["COFFER_PG_URL"]
    subprocess.run([SERVICE_BIN, "migrate", "--postgres", postgres], check=True, capture_output=True)
    with tempfile.TemporaryDirectory() as tmp:
        service = Service(postgres, Path(tmp))
        try:
            for _ in range(args.rounds):
                none = measure(service.url, Path(tmp), 0, args.changes)
                many = measure(service.url, Path(tmp), args.ghosts, args.changes)
                print(f"{args.changes} creates integrated: no deletes {args.changes / none:,.0f} changes/s "
                      f"({none:.2f} s); {args.ghosts:,} tombstones and ghosts present "
                      f"{args.changes / many:,.0f} changes/s ({many:.2f} s); ratio {none / many:.2f}", flush=True)
        finally:
            service.stop()


if __name__ == "__main__":
    main()
