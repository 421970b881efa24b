"""Simulated sync clients: N WebSocket connections in one asyncio process
that speak the protocol of docs/SYNC.md themselves (wire.py), each with its
own client id and no Coffer file, against one or more `coffer-sync serve`
instances on loopback. Each client sends HELLO, acknowledges every DOWNLOAD
as it arrives, and uploads CREATE changesets of one class

    Note {id: int (primary key), text: string}

when told to. Every phase is bounded by a timeout; a phase that runs out
says so in its result instead of hanging.

Phases of `run()`:
- connect: N clients, each to the next service URL in turn, until each has
  its first DOWNLOAD (count 0: caught up);
- latency: one client commits `samples` one-change changesets, one at a
  time; for each, the time from sending its UPLOAD to its arrival in a
  DOWNLOAD at every other connected client;
- throughput: every client uploads its share of `changes` changesets
  concurrently, `batch` changesets per UPLOAD, waiting for each UPLOAD_ACK;
  integrated changesets per second (first UPLOAD to the last acknowledgement)
  and changesets delivered per second to the other clients (to the last
  arrival).

    python Benchmarks/sync/loadgen.py --url ws://127.0.0.1:7800/sync/v1 --clients 10
"""

import argparse
import asyncio
import os
import statistics
import time
from typing import Dict, List, Optional, Tuple

import websockets

import wire

SCHEMA = wire.schema([("Note", "id", [("id", wire.TYPE_INT), ("text", wire.TYPE_STRING)])])
MAX_FRAME = 64 << 20


class Tracker:
    """When each changeset was sent, and how many clients have it."""

    def __init__(self, receivers: int) -> None:
        self.receivers = receivers
        self.sent: Dict[Tuple[bytes, int], float] = {}
        self.count: Dict[Tuple[bytes, int], int] = {}
        self.latencies: Optional[List[float]] = None  # collected while not None
        self.delivered = 0
        self.last_arrival = 0.0
        self.all_arrived: Dict[Tuple[bytes, int], asyncio.Event] = {}

    def arrived(self, key: Tuple[bytes, int], now: float) -> None:
        self.delivered += 1
        self.last_arrival = now
        sent = self.sent.get(key)
        if sent is None:
            return
        if self.latencies is not None:
            self.latencies.append(now - sent)
        n = self.count.get(key, 0) + 1
        self.count[key] = n
        if n == self.receivers and key in self.all_arrived:
            self.all_arrived[key].set()


class Client:
    def __init__(self, url: str, partition: str, tracker: Tracker, number: int) -> None:
        self.url, self.partition, self.tracker = url, partition, tracker
        self.id = os.urandom(16)
        self.number = number
        self.version = 0
        self.acked = 0
        self.ack_event = asyncio.Event()
        self.caught_up = asyncio.Event()
        self.failure: Optional[str] = None
        self.ws = None
        self.reader: Optional[asyncio.Task] = None

    async def connect(self) -> None:
        self.ws = await websockets.connect(self.url, max_size=MAX_FRAME, compression=None, open_timeout=60,
                                           ping_interval=None, close_timeout=1)
        await self.ws.send(wire.hello(self.id, self.partition, 0, SCHEMA))
        first = await self.ws.recv()
        if first[0] != wire.WELCOME:
            raise RuntimeError(wire.error(first) if first[0] == wire.ERROR else f"frame {first[0]} before WELCOME")
        self.reader = asyncio.create_task(self.read())

    async def read(self) -> None:
        try:
            async for frame in self.ws:
                now = time.monotonic()
                kind = frame[0]
                if kind == wire.DOWNLOAD:
                    _, changesets = wire.download(frame)
                    if not changesets:
                        self.caught_up.set()
                        continue
                    for _, origin, version in changesets:
                        self.tracker.arrived((origin, version), now)
                    await self.ws.send(wire.download_ack(changesets[-1][0]))
                elif kind == wire.UPLOAD_ACK:
                    self.acked = wire.upload_ack(frame)[0]
                    self.ack_event.set()
                elif kind == wire.ERROR:
                    self.failure = wire.error(frame)
        except websockets.ConnectionClosed as e:
            if self.failure is None:
                self.failure = f"connection closed: {e}"
        finally:
            self.ack_event.set()
            self.caught_up.set()

    def next_changeset(self, key: int) -> bytes:
        self.version += 1
        clock = (int(time.time() * 1000) << 16) + self.version % 0xFFFF
        return wire.changeset(self.version, clock,
                              [wire.change(wire.CREATE, "Note", key, [("text", f"c{self.number}v{self.version}")])])

    async def upload(self, changesets: List[bytes]) -> None:
        """Sends one UPLOAD and waits for the UPLOAD_ACK of its last changeset."""
        target = self.version
        now = time.monotonic()
        for v in range(target - len(changesets) + 1, target + 1):
            self.tracker.sent[(self.id, v)] = now
        await self.ws.send(wire.upload(changesets))
        while self.acked < target:
            if self.failure:
                raise RuntimeError(self.failure)
            self.ack_event.clear()
            if self.acked < target:
                await self.ack_event.wait()

    async def close(self) -> None:
        if self.ws is not None:
            await self.ws.close()
        if self.reader is not None:
            await asyncio.gather(self.reader, return_exceptions=True)


def percentile(values: List[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, int(round(p * len(ordered))) - 1))]


async def run(urls: List[str], partition: str, clients: int, samples: int, changes: int, batch: int,
              timeout: float, connect_parallel: int = 50) -> dict:
    tracker = Tracker(clients - 1)
    cs = [Client(urls[i % len(urls)], partition, tracker, i) for i in range(clients)]
    result: dict = {"clients": clients, "instances": len(urls)}
    gate = asyncio.Semaphore(connect_parallel)

    async def connect(c: Client) -> None:
        async with gate:
            await c.connect()
        await c.caught_up.wait()

    started = time.monotonic()
    try:
        await asyncio.wait_for(asyncio.gather(*(connect(c) for c in cs)), timeout)
        result["connect_s"] = time.monotonic() - started

        # Latency: one writer, one changeset at a time, every other client receives it.
        writer = cs[0]
        tracker.latencies = []
        to_all = []
        for i in range(samples):
            cset = writer.next_changeset(i)
            key = (writer.id, writer.version)
            tracker.all_arrived[key] = asyncio.Event()
            t0 = time.monotonic()
            await asyncio.wait_for(writer.upload([cset]), timeout)
            await asyncio.wait_for(tracker.all_arrived[key].wait(), timeout)
            to_all.append(time.monotonic() - t0)
        lat = tracker.latencies
        tracker.latencies = None
        result.update(latency_median_ms=statistics.median(lat) * 1000, latency_p99_ms=percentile(lat, 0.99) * 1000,
                      latency_samples=len(lat), to_all_median_ms=statistics.median(to_all) * 1000,
                      to_all_p99_ms=percentile(to_all, 0.99) * 1000)

        # Throughput: every client uploads its share concurrently.
        share = [changes // clients + (1 if i < changes % clients else 0) for i in range(clients)]
        delivered_before = tracker.delivered
        expected = sum(share) * (clients - 1)

        async def upload_share(c: Client, n: int) -> None:
            done = 0
            while done < n:
                k = min(batch, n - done)
                await c.upload([c.next_changeset(1_000_000 * (c.number + 1) + done + j) for j in range(k)])
                done += k

        t0 = time.monotonic()
        await asyncio.wait_for(asyncio.gather(*(upload_share(c, n) for c, n in zip(cs, share) if n)), timeout)
        upload_s = time.monotonic() - t0
        deadline = time.monotonic() + timeout
        while tracker.delivered - delivered_before < expected and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        got = tracker.delivered - delivered_before
        download_s = tracker.last_arrival - t0
        result.update(changes=sum(share), batch=batch, upload_s=upload_s, upload_per_s=sum(share) / upload_s,
                      delivered=got, delivered_expected=expected, download_s=download_s,
                      delivered_per_s=got / download_s if download_s > 0 else 0.0)
    except asyncio.TimeoutError:
        result["timed_out"] = True
    finally:
        failures = [c.failure for c in cs if c.failure]
        await asyncio.gather(*(c.close() for c in cs), return_exceptions=True)
    result["failures"] = len(failures)
    if failures:
        result["first_failure"] = failures[0]
    return result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", action="append", required=True, help="a service's ws:// URL (repeat for several)")
    parser.add_argument("--partition", default=f"loadgen-{time.monotonic_ns()}")
    parser.add_argument("--clients", type=int, default=10)
    parser.add_argument("--samples", type=int, default=50)
    parser.add_argument("--changes", type=int, default=2000)
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=120)
    args = parser.parse_args()
    print(asyncio.run(run(args.url, args.partition, args.clients, args.samples, args.changes, args.batch,
                          args.timeout)))


if __name__ == "__main__":
    main()
