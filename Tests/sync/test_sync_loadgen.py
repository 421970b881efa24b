"""A short run of the simulated protocol clients of Benchmarks/sync/loadgen.py
(the load generator of the sync figures) against a real service: five
clients connect, one commits a few changesets that reach every other client,
then all upload concurrently, and every changeset is integrated once and
delivered to every other client. A client that speaks out of turn is refused."""

import asyncio
import sys
from pathlib import Path

from conftest import Service, service_dump

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "Benchmarks" / "sync"))
import loadgen  # noqa: E402
import wire  # noqa: E402


def test_simulated_clients_upload_and_receive(postgres, services, partition, tmp_path):
    service = Service(postgres, tmp_path)
    services.append(service)
    r = asyncio.run(loadgen.run([service.url], partition, clients=5, samples=5, changes=60, batch=4, timeout=60))
    assert r["failures"] == 0, r.get("first_failure")
    assert not r.get("timed_out"), r
    assert r["latency_samples"] == 5 * 4
    assert r["delivered"] == r["delivered_expected"] == 60 * 4
    assert r["upload_per_s"] > 0 and r["latency_p99_ms"] >= r["latency_median_ms"] > 0
    # Each changeset created one object: the service has all of them, once.
    assert len(service_dump(postgres, partition)) == 5 + 60


def test_a_repeated_upload_is_acknowledged_and_ignored(postgres, services, partition, tmp_path):
    service = Service(postgres, tmp_path)
    services.append(service)

    async def scenario():
        c = loadgen.Client(service.url, partition, loadgen.Tracker(0), 0)
        await c.connect()
        batch = [c.next_changeset(1), c.next_changeset(2)]
        await c.upload(batch)
        c.version = 2
        await c.upload(batch)  # a lost acknowledgement: the same batch again
        await c.close()
        return c.acked

    assert asyncio.run(scenario()) == 2
    assert len(service_dump(postgres, partition)) == 2


def test_an_upload_before_hello_is_refused(postgres, services, partition, tmp_path):
    service = Service(postgres, tmp_path)
    services.append(service)

    async def scenario():
        import websockets
        async with websockets.connect(service.url) as ws:
            await ws.send(wire.upload([]))
            return await ws.recv()

    reply = asyncio.run(scenario())
    assert reply[0] == wire.ERROR and "HELLO" in wire.error(reply)
