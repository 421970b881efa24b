"""The cost of deleted objects' tombstones and ghosts to a client integrating
downloads (Sources/CCoffer/sync/integrate.c, ghost.c, state.c). A Python
client with its own Coffer file (the binding, `websockets` transport) syncs
with a stand-in for the service in this process that speaks the protocol of
docs/SYNC.md (wire.py): WELCOME, then DOWNLOAD frames of up to 4,096
changesets (as the service pages its history), each sent once the one
before it is acknowledged. Neither PostgreSQL nor coffer-sync is involved, so
the figure is the client's integration alone: the time from the first
measured DOWNLOAD frame to the DOWNLOAD_ACK of the last, which the client
sends after the batch's write transaction committed.

Runs of one round, each a new file:
- no deletes (the peer): `--changes` one-object CREATE changesets;
- ghosts, then creates: first `--ghosts` objects each created, deleted and
  updated after the delete (leaving a tombstone and a ghost each), not
  measured; then the same creates of other objects (a lookup that finds no
  tombstone);
- ghosts, then updates of them: `--changes` UPDATE changesets of deleted
  objects (each found, its ghost read, changed and written again).

    COFFER_LIBRARY=build/libcoffer.so.0 PYTHONPATH=bindings/python/src \\
        .venv/bin/python Benchmarks/sync/ghost_bench.py [--changes 2000] [--ghosts 10000,50000]

Figures of one run on a shared machine: compare them within a run only."""

import argparse
import asyncio
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import List, Optional

import websockets

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parents[1] / "Tests" / "sync"))
import wire  # noqa: E402
from conftest import PyClient  # noqa: E402

ORIGIN = bytes(range(16))
PAGE = 4096


class Clock:
    def __init__(self) -> None:
        self.now = time.time_ns() // 1_000_000 << 16

    def next(self) -> int:
        self.now += 1
        return self.now


def ghosts(clock: Clock, n: int) -> List[bytes]:
    out = []
    for k in range(n):
        pk = -1 - k
        out.append(wire.changeset(0, clock.next(), [wire.change(wire.CREATE, "Note", pk, [("text", "x")])]))
        out.append(wire.changeset(0, clock.next(), [wire.change(wire.DELETE, "Note", pk)]))
        out.append(wire.changeset(0, clock.next(), [wire.change(wire.UPDATE, "Note", pk, [("text", "later")])]))
    return out


def creates(clock: Clock, n: int) -> List[bytes]:
    return [wire.changeset(0, clock.next(), [wire.change(wire.CREATE, "Note", k, [("text", f"v{k}")])])
            for k in range(n)]


def updates_of_ghosts(clock: Clock, n: int, ghosts_made: int) -> List[bytes]:
    return [wire.changeset(0, clock.next(),
                           [wire.change(wire.UPDATE, "Note", -1 - (k % ghosts_made), [("text", f"u{k}")])])
            for k in range(n)]


class StandIn:
    """Serves one client: `prefix`, then `measured`, as DOWNLOAD frames; the
    server versions number the changesets from 1 (client versions likewise)."""

    def __init__(self, prefix: List[bytes], measured: List[bytes]) -> None:
        self.all = [renumber(cs, i + 1) for i, cs in enumerate(prefix + measured)]
        self.split = len(prefix)
        self.seconds: Optional[float] = None
        self.done = threading.Event()

    async def handle(self, ws) -> None:
        hello = await ws.recv()
        assert hello[0] == wire.HELLO
        latest = len(self.all)
        await ws.send(bytes([wire.WELCOME]) + wire.varint(1) + wire.varint(0) + wire.varint(latest))
        started = None
        for start in list(range(0, self.split, PAGE)) + list(range(self.split, latest, PAGE)):
            end = min(start + PAGE, self.split if start < self.split else latest)
            if start == self.split:
                started = time.monotonic()
            body = b"".join(wire.varint(v + 1) + ORIGIN + self.all[v] for v in range(start, end))
            await ws.send(bytes([wire.DOWNLOAD]) + wire.varint(latest) + wire.varint(end - start) + body)
            while True:
                reply = await ws.recv()
                if reply[0] == wire.DOWNLOAD_ACK and wire.Reader(reply, 1).varint() == end:
                    break
        self.seconds = time.monotonic() - started
        self.done.set()
        await ws.send(bytes([wire.DOWNLOAD]) + wire.varint(latest) + wire.varint(0))
        await ws.wait_closed()


def renumber(cs: bytes, version: int) -> bytes:
    r = wire.Reader(cs)
    r.varint()
    return wire.varint(version) + cs[r.i:]


def measure(work: Path, prefix: List[bytes], measured: List[bytes]) -> float:
    stand_in = StandIn(prefix, measured)
    ready = threading.Event()
    holder = {}

    def serve() -> None:
        async def main() -> None:
            async with websockets.serve(stand_in.handle, "127.0.0.1", 0, max_size=None, compression=None) as server:
                holder["port"] = server.sockets[0].getsockname()[1]
                holder["loop"] = asyncio.get_running_loop()
                holder["stop"] = asyncio.Event()
                ready.set()
                await holder["stop"].wait()
        asyncio.run(main())

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    ready.wait(30)
    reader = PyClient(work / f"ghosts-{time.monotonic_ns()}.coffer", f"ws://127.0.0.1:{holder['port']}/sync/v1",
                      "ghosts")
    try:
        if not stand_in.done.wait(1200):
            raise AssertionError(f"the client did not integrate the downloads: {reader.db.sync.error}")
    finally:
        reader.close()
        holder["loop"].call_soon_threadsafe(holder["stop"].set)
        thread.join(30)
    return stand_in.seconds


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--changes", type=int, default=2000)
    parser.add_argument("--ghosts", default="10000")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    n = args.changes
    counts = [int(x) for x in args.ghosts.split(",")]
    runs = {"none": []}
    for g in counts:
        runs[f"{g} creates"], runs[f"{g} updates"] = [], []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for _ in range(args.rounds):
            runs["none"].append(measure(work, [], creates(Clock(), n)))
            for g in counts:
                clock = Clock()
                runs[f"{g} creates"].append(measure(work, ghosts(clock, g), creates(clock, n)))
                clock = Clock()
                runs[f"{g} updates"].append(measure(work, ghosts(clock, g), updates_of_ghosts(clock, n, g)))
            print({k: [round(x, 3) for x in v] for k, v in runs.items()}, flush=True)
    none = statistics.median(runs["none"])
    print(f"median of {args.rounds} rounds, {n:,} changesets: no deletes {n / none:,.0f} changes/s ({none:.2f} s)")
    for g in counts:
        for kind in ("creates", "updates"):
            t = statistics.median(runs[f"{g} {kind}"])
            what = "creates of other objects" if kind == "creates" else "updates of deleted objects"
            print(f"  {g:,} ghosts present, {what}: {n / t:,.0f} changes/s ({t:.2f} s), "
                  f"{none / t:.2f} of the peer's rate")


if __name__ == "__main__":
    main()
