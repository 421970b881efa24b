"""The sync load test's clients: N flexible-sync clients simulated at the
protocol level (wire.py) in one asyncio process, against one or more
`coffer-sync serve` instances with authentication, on loopback. Each client
does what a Coffer flexible-sync client does, frame for frame:

- logs in as a new anonymous user (`POST /auth/v1/login`) for its access token;
- says HELLO (protocol 3, the token) and SUBSCRIBE right after it, with one
  subscription of

      Item {id: int (primary key), team: int (indexed), owner: string, n: int, text: string}

  `team == T OR team == 0`: the objects of its team (its share of the data)
  and the shared objects (team 0);
- creates its own object once its set is complete (`SUBSCRIPTION_COMPLETE`);
- then, for `seconds`, uploads one changeset per `UPLOAD` at `rate` per second
  (each an UPDATE of `n` and `text`: of its own object, or with probability
  `shared_fraction` of a shared one), without waiting for acknowledgements,
  as a client uploads its commits;
- acknowledges every DOWNLOAD as it arrives.

Clients are numbered 0..N-1, client i is on instance i mod the instance count
and in team i // team_size + 1, so every team has members on every instance
and a change travels both within an instance and across instances (through
PostgreSQL's NOTIFY). A change of a client's own object is due at its
teammates; a change of a shared object at every other client. After the
upload window the run waits up to `drain` seconds for every due delivery;
what did not arrive is counted as missing.

    python Benchmarks/sync/flexload.py --url ws://127.0.0.1:7800/sync/v1 --url ws://... \\
        --clients 20 --seconds 5
(the services need `auth.anonymous`; Benchmarks/sync/load_run.py starts them.)
"""

import argparse
import asyncio
import json
import os
import random
import sys
import time
import urllib.request
from typing import Dict, List, Optional, Tuple

import websockets

import wire

CLASS = "Item"
SCHEMA = wire.schema([(CLASS, "id", [("id", wire.TYPE_INT), ("team", wire.TYPE_INT, wire.INDEXED),
                                     ("owner", wire.TYPE_STRING), ("n", wire.TYPE_INT),
                                     ("text", wire.TYPE_STRING)])])
MAX_FRAME = 64 << 20
SHARED_TEAM = 0


def percentile(ordered: List[float], p: float) -> float:
    """The nearest-rank percentile of an already sorted list."""
    if not ordered:
        return 0.0
    return ordered[min(len(ordered) - 1, max(0, int(round(p * len(ordered))) - 1))]


class Tracker:
    """Every changeset uploaded in the window: when, by which instance, and
    how many clients it is due at; and every arrival."""

    def __init__(self) -> None:
        self.sent: Dict[Tuple[bytes, int], Tuple[float, int, int]] = {}  # key -> (time, instance, due)
        self.arrived_count: Dict[Tuple[bytes, int], int] = {}
        self.latencies: List[float] = []
        self.cross_latencies: List[float] = []  # uploaded through one instance, delivered by another
        self.due = 0
        self.delivered = 0
        self.received = 0  # changesets in DOWNLOAD frames, with those emptied by the filter
        self.unexpected = 0  # arrivals of a tracked changeset beyond those due
        self.first_sent = 0.0
        self.last_arrival = 0.0
        self.last_ack = 0.0  # the last UPLOAD_ACK of a changeset of the window

    def upload(self, key: Tuple[bytes, int], now: float, instance: int, due: int) -> None:
        if not self.sent:
            self.first_sent = now
        self.sent[key] = (now, instance, due)
        self.due += due

    def arrived(self, key: Tuple[bytes, int], now: float, instance: int) -> None:
        entry = self.sent.get(key)
        if entry is None:
            return  # made before the window (creates, shared seeds) or a marker
        n = self.arrived_count.get(key, 0) + 1
        self.arrived_count[key] = n
        if n > entry[2]:
            self.unexpected += 1
            return
        self.delivered += 1
        self.last_arrival = now
        latency = now - entry[0]
        self.latencies.append(latency)
        if instance != entry[1]:
            self.cross_latencies.append(latency)


class Client:
    """One simulated flexible-sync client."""

    def __init__(self, number: int, urls: List[str], partition: str, team: int, tracker: Tracker) -> None:
        self.number, self.partition, self.team, self.tracker = number, partition, team, tracker
        self.instance = number % len(urls)
        self.url = urls[self.instance]
        self.http = self.url.replace("ws://", "http://", 1).split("/sync/", 1)[0]
        self.id = os.urandom(16)
        self.version = 0
        self.acked = 0
        self.acked_in_window = 0
        self.ack_event = asyncio.Event()
        self.complete = asyncio.Event()
        self.failure: Optional[str] = None
        self.compensations = 0
        self.closing = False
        self.ws = None
        self.reader: Optional[asyncio.Task] = None
        self.window_from_version = 1 << 62  # versions above it were uploaded in the window (set at its start)

    def fail(self, why: str) -> None:
        if self.failure is None:
            self.failure = f"client {self.number} (instance {self.instance}): {why}"
        self.complete.set()
        self.ack_event.set()

    def login(self, timeout: float = 60.0) -> str:
        """A new anonymous user's access token (blocking: run in a thread)."""
        request = urllib.request.Request(f"{self.http}/auth/v1/login", data=json.dumps({"provider": "anonymous"}).encode(),
                                         headers={"Content-Type": "application/json"}, method="POST")
        with urllib.request.urlopen(request, timeout=timeout) as answer:
            return json.loads(answer.read())["accessToken"]

    async def connect(self, token: str, query: str) -> None:
        """HELLO, SUBSCRIBE, then WELCOME; the set completes later (`complete`)."""
        self.ws = await websockets.connect(self.url, max_size=MAX_FRAME, compression=None, open_timeout=120,
                                           ping_interval=None, close_timeout=1)
        await self.ws.send(wire.hello(self.id, self.partition, 0, SCHEMA, version=3, token=token))
        await self.ws.send(wire.subscribe(1, [("load", CLASS, query)]))
        first = await self.ws.recv()
        if first[0] != wire.WELCOME:
            raise RuntimeError(wire.error(first) if first[0] == wire.ERROR else f"frame {first[0]} before WELCOME")
        self.reader = asyncio.create_task(self.read())

    async def read(self) -> None:
        try:
            async for frame in self.ws:
                kind = frame[0]
                if kind == wire.DOWNLOAD:
                    now = time.monotonic()
                    changesets = wire.download_changes(frame)
                    if not changesets:
                        continue
                    if self.tracker.sent:  # in the window
                        self.tracker.received += len(changesets)
                    for _, origin, version, count in changesets:
                        if count:  # an empty one is a change the subscription filtered out
                            self.tracker.arrived((origin, version), now, self.instance)
                    await self.ws.send(wire.download_ack(changesets[-1][0]))
                elif kind == wire.UPLOAD_ACK:
                    last = wire.upload_ack(frame)[0]
                    newly = max(0, last - max(self.acked, self.window_from_version))
                    if newly:
                        self.acked_in_window += newly
                        self.tracker.last_ack = time.monotonic()
                    self.acked = max(self.acked, last)
                    self.ack_event.set()
                elif kind == wire.SUBSCRIPTION_COMPLETE:
                    self.complete.set()
                elif kind == wire.ERROR:
                    message = wire.error(frame)
                    if message.startswith("ERROR 10:"):  # COMPENSATING_WRITE: not fatal
                        self.compensations += 1
                    else:
                        self.fail(message)
        except websockets.ConnectionClosed as e:
            if not self.closing:
                self.fail(f"connection closed: {e}")
        except Exception as e:  # a frame this client cannot read is a failure of the run
            self.fail(f"{type(e).__name__}: {e}")
        finally:
            self.complete.set()
            self.ack_event.set()

    def changeset(self, op: int, pk: int, props: List[Tuple[str, object]]) -> bytes:
        self.version += 1
        clock = (int(time.time() * 1000) << 16) + (self.number * 7919 + self.version) % 0xFFFF
        return wire.changeset(self.version, clock, [wire.change(op, CLASS, pk, props)])

    async def send_and_wait(self, changeset: bytes) -> None:
        target = self.version
        await self.ws.send(wire.upload([changeset]))
        while self.acked < target and self.failure is None:
            self.ack_event.clear()
            if self.acked < target:
                await self.ack_event.wait()
        if self.failure:
            raise RuntimeError(self.failure)

    async def create_own(self) -> None:
        await self.send_and_wait(self.changeset(wire.CREATE, self.number + 1, [
            ("team", self.team), ("owner", f"c{self.number}"), ("n", 0), ("text", "")]))

    async def upload_window(self, start: float, seconds: float, rate: float, shared: List[int],
                            shared_fraction: float, teammates: int, others: int, rng: random.Random) -> None:
        """One UPDATE per UPLOAD at `rate` per second from `start` for `seconds`."""
        self.window_from_version = self.version
        period = 1.0 / rate
        at = start + rng.random() * period  # spread the clients' phases
        end = start + seconds
        while at < end and self.failure is None:
            delay = at - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
            if shared and rng.random() < shared_fraction:
                pk, due = rng.choice(shared), others
            else:
                pk, due = self.number + 1, teammates
            v = self.version + 1  # the changeset's client version: n and text name it
            cs = self.changeset(wire.UPDATE, pk, [("n", v), ("text", f"c{self.number}v{v}")])
            now = time.monotonic()
            self.tracker.upload((self.id, self.version), now, self.instance, due)
            await self.ws.send(wire.upload([cs]))
            at += period

    async def close(self) -> None:
        self.closing = True
        if self.ws is not None:
            await self.ws.close()
        if self.reader is not None:
            await asyncio.gather(self.reader, return_exceptions=True)


async def run(urls: List[str], partition: str, clients: int, seconds: float, rate: float = 0.2,
              team_size: int = 10, shared_objects: int = 10, shared_fraction: float = 0.02,
              drain: float = 60.0, setup_timeout: float = 600.0, connect_parallel: int = 50,
              seed: int = 1, progress: bool = False) -> dict:
    """Runs the load and returns its figures (see the module's docstring)."""
    rng = random.Random(seed)
    tracker = Tracker()
    query_of = lambda team: f"team == {team} OR team == {SHARED_TEAM}"  # noqa: E731
    teams = [i // team_size + 1 for i in range(clients)]
    cs = [Client(i, urls, partition, teams[i], tracker) for i in range(clients)]
    shared_pks = [-(k + 1) for k in range(shared_objects)]
    result: dict = {"clients": clients, "instances": len(urls), "seconds": seconds, "rate": rate,
                    "team_size": team_size, "shared_objects": shared_objects, "shared_fraction": shared_fraction}
    gate = asyncio.Semaphore(connect_parallel)
    seeder = Client(clients, urls[:1], partition, SHARED_TEAM, Tracker())
    errors: List[str] = []
    ready: List[int] = []

    async def setup(c: Client) -> None:
        async with gate:
            token = await asyncio.to_thread(c.login, min(60.0, setup_timeout))
            await c.connect(token, query_of(c.team))
            await c.complete.wait()
            if c.failure:
                raise RuntimeError(c.failure)
            await c.create_own()
        ready.append(c.number)
        if progress and (len(ready) % 100 == 0 or len(ready) == clients):
            print(f"flexload: {len(ready)} of {clients} clients subscribed, {time.monotonic() - started:.1f} s",
                  file=sys.stderr, flush=True)

    started = time.monotonic()
    try:
        # The shared objects, made by a client of their own before the others connect.
        token = await asyncio.to_thread(seeder.login, min(60.0, setup_timeout))
        await asyncio.wait_for(seeder.connect(token, f"team == {SHARED_TEAM}"), setup_timeout)
        await asyncio.wait_for(seeder.complete.wait(), setup_timeout)
        for pk in shared_pks:
            await asyncio.wait_for(seeder.send_and_wait(seeder.changeset(wire.CREATE, pk, [
                ("team", SHARED_TEAM), ("owner", "shared"), ("n", 0), ("text", "")])), setup_timeout)
        await seeder.close()

        # Clients that have not subscribed when the setup time is up are left out of
        # the window, and counted as errors; the others go on.
        tasks = [asyncio.create_task(setup(c)) for c in cs]
        done, pending = await asyncio.wait(tasks, timeout=setup_timeout)
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
        for task in done:
            if task.exception() is not None:
                errors.append(f"{type(task.exception()).__name__}: {task.exception()}")
        result["setup_s"] = time.monotonic() - started
        active = [cs[i] for i in sorted(ready)]
        result["not_subscribed"] = clients - len(active)
        if pending:
            errors.append(f"{len(pending)} of {clients} clients had not subscribed within {setup_timeout:g} s")
        await asyncio.gather(*(c.close() for c in cs if c.number not in set(ready)), return_exceptions=True)
        if not active:
            raise RuntimeError("no client subscribed")
        members = {t: sum(1 for c in active if c.team == t) for t in set(teams)}
        await asyncio.sleep(1.0)  # the creates' deliveries settle before the window

        start = time.monotonic() + 0.5
        await asyncio.gather(*(c.upload_window(start, seconds, rate, shared_pks, shared_fraction,
                                               members[c.team] - 1, len(active) - 1, random.Random(rng.random()))
                               for c in active))
        window_end = time.monotonic()
        deadline = window_end + drain
        while time.monotonic() < deadline and (tracker.delivered < tracker.due or
                                               any(c.acked < c.version for c in active if not c.failure)):
            if all(c.failure for c in active):
                break
            await asyncio.sleep(0.05)
        result["drain_s"] = time.monotonic() - window_end
        uploaded = len(tracker.sent)
        integrated = sum(c.acked_in_window for c in cs)
        lat = sorted(tracker.latencies)
        cross = sorted(tracker.cross_latencies)
        span = max(1e-9, tracker.last_arrival - tracker.first_sent)
        result.update(
            uploaded=uploaded, uploaded_per_s=uploaded / seconds,
            integrated=integrated,
            integrated_per_s=integrated / max(1e-9, tracker.last_ack - tracker.first_sent),
            due=tracker.due, delivered=tracker.delivered, delivered_per_s=tracker.delivered / span,
            cross_instance_delivered=len(cross), received_changesets=tracker.received,
            latency_ms={name: percentile(lat, p) * 1000 for name, p in
                        (("p50", 0.5), ("p95", 0.95), ("p99", 0.99), ("max", 1.0))},
            cross_instance_latency_ms={name: percentile(cross, p) * 1000 for name, p in
                                       (("p50", 0.5), ("p95", 0.95), ("p99", 0.99), ("max", 1.0))},
            missing=tracker.due - tracker.delivered, unexpected=tracker.unexpected,
            not_integrated=sum(max(0, c.version - c.acked) for c in active),
            compensating_writes=sum(c.compensations for c in cs))
    except asyncio.TimeoutError:
        errors.append(f"the shared objects were not made within {setup_timeout:g} s")
    except (RuntimeError, OSError, websockets.WebSocketException) as e:
        errors.append(f"{type(e).__name__}: {e}")
    finally:
        failures = [c.failure for c in cs if c.failure and not c.closing]
        await asyncio.gather(*(c.close() for c in cs), return_exceptions=True)
    result["subscribed"] = len(ready)
    if "setup_s" not in result:
        result["setup_s"] = time.monotonic() - started
    errors.extend(failures)
    result["client_failures"] = len(failures)
    # Each client that did not subscribe, failed, or lost a delivery or an upload is
    # an error; a run that did not reach its window is one more.
    result["errors"] = len(failures) + sum(result.get(k, 0) for k in (
        "not_subscribed", "missing", "not_integrated", "compensating_writes", "unexpected")) + \
        (0 if "uploaded" in result else 1)
    if errors:
        result["first_error"] = errors[0]
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", action="append", required=True, help="a service's ws:// URL (repeat for several)")
    parser.add_argument("--partition", default=f"load-{time.monotonic_ns()}")
    parser.add_argument("--clients", type=int, default=1000)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--rate", type=float, default=0.2, help="changesets per second per client")
    parser.add_argument("--team-size", type=int, default=10)
    parser.add_argument("--shared-fraction", type=float, default=0.02)
    parser.add_argument("--drain", type=float, default=60)
    parser.add_argument("--setup-timeout", type=float, default=600)
    args = parser.parse_args()
    print(json.dumps(asyncio.run(run(args.url, args.partition, args.clients, args.seconds, args.rate,
                                     args.team_size, shared_fraction=args.shared_fraction, drain=args.drain,
                                     setup_timeout=args.setup_timeout, progress=True))))


if __name__ == "__main__":
    main()
