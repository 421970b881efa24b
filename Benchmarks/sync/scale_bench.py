"""Sync with 10, 100 and 1,000 connected clients: simulated protocol clients
(loadgen.py, one asyncio process) against `coffer-sync serve` instances on a
private PostgreSQL, one partition per run. Per run: integrated changesets per
second, the latency from an UPLOAD to the changeset's arrival at every other
client (median, p99), changesets delivered per second, and the services'
resident memory. Each figure has its peer of the same run beside it:

- upload: the same history, object and property rows written straight into
  PostgreSQL through one connection (psql), one INSERT per row and one
  transaction per UPLOAD the clients sent;
- memory: the same services' resident memory before any client connected.

    scripts/postgres run env COFFER_SYNC_BIN=.build/release/coffer-sync \\
        COFFER_LIBRARY=build/libcoffer.so.0 .venv/bin/python Benchmarks/sync/scale_bench.py \\
        [--clients 10,100,1000] [--instances 1,2]

Figures of one run on a shared machine: compare them within a run only."""

import argparse
import asyncio
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import List

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parents[1] / "Tests" / "sync"))
import loadgen  # noqa: E402
from conftest import SERVICE_BIN, Service  # noqa: E402

TABLES = ("coffer_sync_history", "coffer_sync_objects", "coffer_sync_properties")


def psql(url: str, *args: str, stdin: str = None) -> str:
    return subprocess.run(["psql", url, "-q", "-At", "-v", "ON_ERROR_STOP=1", *args], input=stdin,
                          capture_output=True, text=True, check=True).stdout


def rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


class PeakRSS(threading.Thread):
    def __init__(self, pids: List[int]) -> None:
        super().__init__(daemon=True)
        self.pids, self.peak, self.running = pids, 0, True

    def run(self) -> None:
        while self.running:
            self.peak = max(self.peak, sum(rss_kib(p) for p in self.pids))
            time.sleep(0.1)


def peer_upload(postgres: str, partition: str, batch: int) -> tuple:
    """Seconds to write the partition's rows of TABLES again through one
    psql connection: one INSERT per row, one transaction per `batch`
    changesets."""
    psql(postgres, "-c", ";".join(f"DROP TABLE IF EXISTS peer_{t}; CREATE TABLE peer_{t} (LIKE {t} INCLUDING INDEXES)"
                                  for t in TABLES))
    lit = partition.replace("'", "''")
    statements = []
    for t in TABLES:
        statements.append(psql(postgres, "-c",
                               f"SELECT format('INSERT INTO peer_{t} SELECT (%L::{t}).*;', r) FROM {t} r "
                               f"WHERE partition = '{lit}'").splitlines())
    per_changeset = list(zip(*statements))  # one history, object and property row each
    script = []
    for i in range(0, len(per_changeset), batch):
        script.append("BEGIN;")
        script.extend(s for group in per_changeset[i:i + batch] for s in group)
        script.append("COMMIT;")
    started = time.monotonic()
    psql(postgres, "-f", "-", stdin="\n".join(script))
    seconds = time.monotonic() - started
    psql(postgres, "-c", ";".join(f"DROP TABLE peer_{t}" for t in TABLES))
    return seconds, len(per_changeset)


def one_run(postgres: str, work: Path, clients: int, instances: int, args) -> dict:
    services = [Service(postgres, work) for _ in range(instances)]
    try:
        pids = [s.proc.pid for s in services]
        time.sleep(0.5)
        idle = sum(rss_kib(p) for p in pids)
        sampler = PeakRSS(pids)
        sampler.start()
        partition = f"scale-{clients}-{instances}-{time.monotonic_ns()}"
        result = asyncio.run(loadgen.run([s.url for s in services], partition, clients, args.samples,
                                         args.changes, args.batch, args.timeout))
        sampler.running = False
        sampler.join()
        result.update(idle_rss_mib=idle / 1024, peak_rss_mib=sampler.peak / 1024)
        if "upload_per_s" in result:
            seconds, rows = peer_upload(postgres, partition, args.batch)
            result.update(peer_upload_per_s=rows / seconds)
        return result
    finally:
        for s in services:
            s.stop()


def table(results: List[dict]) -> str:
    lines = ["| clients | instances | upload (integrated changesets/s) | peer: same rows by psql | ratio "
             "| commit → other clients, median / p99 | to the last client, median | delivered changesets/s "
             "| RSS peak (idle) | ratio |",
             "|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|"]
    for r in results:
        if r.get("timed_out") or "upload_per_s" not in r:
            lines.append(f"| {r['clients']:,} | {r['instances']} | timed out | | | | | | | |")
            continue
        lines.append(
            f"| {r['clients']:,} | {r['instances']} | {r['upload_per_s']:,.0f} | {r['peer_upload_per_s']:,.0f} "
            f"| {r['upload_per_s'] / r['peer_upload_per_s']:.2f} "
            f"| {r['latency_median_ms']:.1f} / {r['latency_p99_ms']:.1f} ms | {r['to_all_median_ms']:.1f} ms "
            f"| {r['delivered_per_s']:,.0f} | {r['peak_rss_mib']:.0f} MiB ({r['idle_rss_mib']:.0f}) "
            f"| {r['peak_rss_mib'] / r['idle_rss_mib']:.1f} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--clients", default="10,100,1000")
    parser.add_argument("--instances", default="1,2")
    parser.add_argument("--samples", type=int, default=50)
    parser.add_argument("--changes", type=int, default=2000)
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=300)
    args = parser.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))  # 1,000 sockets here and in the service
    postgres = os.environ["COFFER_PG_URL"]
    subprocess.run([SERVICE_BIN, "migrate", "--postgres", postgres], check=True, capture_output=True)
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for instances in (int(i) for i in args.instances.split(",")):
            for clients in (int(c) for c in args.clients.split(",")):
                r = one_run(postgres, Path(tmp), clients, instances, args)
                print(r, flush=True)
                results.append(r)
    print(table(results))


if __name__ == "__main__":
    main()
