"""Sync figures of one run against a real `coffer-sync serve` on a private
PostgreSQL (the pieces of Tests/sync/conftest.py): upload and download
throughput in changes per second, the latency from a commit on one client to
the observer callback on another (median and p99) with 10 and 100 connected
clients (Python clients in this process, each with its own file and session),
and PostgreSQL's rows and bytes per object.

    scripts/postgres run env COFFER_SYNC_BIN=.build/release/coffer-sync \\
        COFFER_LIBRARY=build/libcoffer.so.0 .venv/bin/python Benchmarks/sync/sync_bench.py [--clients 10,100]

Figures of one run on a shared machine: compare them within a run only."""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "Tests" / "sync"))
from conftest import SERVICE_BIN, Note, PyClient, Service, service_dump  # noqa: E402


def sql(url: str, statement: str) -> str:
    return subprocess.run(["psql", url, "-q", "-At", "-c", statement], capture_output=True, text=True,
                          check=True).stdout.strip()


def throughput(url: str, postgres: str, work: Path, n: int) -> None:
    partition = f"bench-throughput-{time.monotonic_ns()}"
    writer = PyClient(work / "writer.coffer", url, partition)
    writer.wait_download()
    writer.pause()
    for i in range(n):
        writer.put(i, f"value{i}")
    started = time.monotonic()
    writer.resume()
    writer.wait_upload()
    upload = time.monotonic() - started
    started = time.monotonic()
    reader = PyClient(work / "reader.coffer", url, partition)
    while len(reader.db.objects(Note)) < n:
        reader.wait_download()
    download = time.monotonic() - started
    print(f"upload:   {n} changes in {upload:.2f} s = {n / upload:,.0f} changes/s")
    print(f"download: {n} changes in {download:.2f} s = {n / download:,.0f} changes/s (a new client, from its open)")
    tables = sql(postgres, "SELECT string_agg(relname, ',') FROM pg_class WHERE relname LIKE 'coffer_sync_%' AND relkind = 'r'")
    rows = sum(int(sql(postgres, f"SELECT count(*) FROM {t}")) for t in tables.split(","))
    size = sum(int(sql(postgres, f"SELECT pg_total_relation_size('{t}')")) for t in tables.split(","))
    objects = len(service_dump(postgres, partition))
    print(f"PostgreSQL: {rows} rows, {size:,} bytes (tables and indexes) for {objects} objects of one string "
          f"property = {rows / objects:.1f} rows, {size / objects:,.0f} bytes per object")
    writer.close()
    reader.close()


def latency(url: str, work: Path, clients: int, samples: int) -> None:
    partition = f"bench-latency-{clients}-{time.monotonic_ns()}"
    writer = PyClient(work / f"lw{clients}.coffer", url, partition)
    watchers = [PyClient(work / f"l{clients}-{i}.coffer", url, partition) for i in range(clients - 1)]
    for w in watchers:
        w.wait_download()
    watched = watchers[0]
    arrived = threading.Event()
    token = watched.db.observe(lambda change: arrived.set())
    delays = []
    for i in range(samples):
        arrived.clear()
        started = time.monotonic()
        writer.put(i, f"l{i}")
        while not arrived.is_set():
            arrived.wait(0.001)
            watched.db.refresh()
        delays.append(time.monotonic() - started)
    del token
    delays.sort()
    print(f"{clients} connected clients: commit to callback median {statistics.median(delays) * 1000:.1f} ms, "
          f"p99 {delays[int(len(delays) * 0.99) - 1] * 1000:.1f} ms ({samples} commits)")
    for c in [writer, *watchers]:
        c.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--changes", type=int, default=5000)
    parser.add_argument("--clients", default="10,100")
    parser.add_argument("--samples", type=int, default=200)
    args = parser.parse_args()
    postgres = os.environ["COFFER_PG_URL"]
    subprocess.run([SERVICE_BIN, "migrate", "--postgres", postgres], check=True, capture_output=True)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        service = Service(postgres, work)
        try:
            throughput(service.url, postgres, work, args.changes)
            for n in (int(c) for c in args.clients.split(",")):
                latency(service.url, work, n, args.samples)
        finally:
            service.stop()


if __name__ == "__main__":
    main()
