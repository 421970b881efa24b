"""The sync load test: two `coffer-sync serve` instances with anonymous
authentication on one PostgreSQL, and N simulated flexible-sync clients
(flexload.py) split between them, for a bounded time, on loopback only.

Reports changesets uploaded and integrated per second, changesets delivered
per second, the latency from an UPLOAD to its arrival at another client
(p50/p95/p99/max, also for the deliveries that crossed instances), errors,
the services' resident memory, and beside them the peers of the same run:

- PostgreSQL's own insert rate for the same rows: the window's history rows
  inserted again through one psql connection, one transaction per changeset
  (as the clients sent them), into a copy of the table with its indexes;
- the services' resident memory before any client connected;
- the load average (1 minute) before and after.

    scripts/sync-load [--clients 1000] [--seconds 60] [--instances 2] [--rate 0.2] [--json]

(scripts/sync-load starts the private PostgreSQL; this script expects
COFFER_PG_URL and COFFER_SYNC_BIN, as under `scripts/postgres run`.)
Exits 1 when a run had errors."""

import argparse
import asyncio
import json
import os
import resource
import secrets
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
import flexload  # noqa: E402
from conftest import SERVICE_BIN, Service  # noqa: E402
from scale_bench import psql, rss_kib  # noqa: E402


class RSSSampler(threading.Thread):
    """The services' summed resident memory every 100 ms: peak and last."""

    def __init__(self, pids: List[int]) -> None:
        super().__init__(daemon=True)
        self.pids, self.peak, self.last, self.running = pids, 0, 0, True

    def run(self) -> None:
        while self.running:
            self.last = sum(rss_kib(p) for p in self.pids)
            self.peak = max(self.peak, self.last)
            time.sleep(0.1)


def peer_insert_rate(postgres: str, partition: str) -> float:
    """History rows of the partition's window (client version above 1: the
    creates and markers came before it) inserted again through one psql
    connection, one transaction each; rows per second."""
    lit = partition.replace("'", "''")
    psql(postgres, "-c", "DROP TABLE IF EXISTS peer_history; "
                         "CREATE TABLE peer_history (LIKE coffer_sync_history INCLUDING INDEXES)")
    rows = psql(postgres, "-c", f"SELECT format('BEGIN; INSERT INTO peer_history SELECT (%L::coffer_sync_history).*; "
                                f"COMMIT;', h) FROM coffer_sync_history h WHERE partition = '{lit}' "
                                f"AND client_version > 1 ORDER BY server_version").splitlines()
    if not rows:
        return 0.0
    started = time.monotonic()
    psql(postgres, "-f", "-", stdin="\n".join(rows))
    seconds = time.monotonic() - started
    psql(postgres, "-c", "DROP TABLE peer_history")
    return len(rows) / seconds


def write_config(directory: Path) -> Path:
    config = directory / "coffer-sync-load.json"
    config.write_text(json.dumps({"auth": {"anonymous": True, "signingSecret": secrets.token_hex(32)}}))
    return config


def one_run(postgres: str, work: Path, args) -> dict:
    config = write_config(work)
    services = [Service(postgres, work, config=config) for _ in range(args.instances)]
    try:
        pids = [s.proc.pid for s in services]
        time.sleep(0.5)
        idle = sum(rss_kib(p) for p in pids)
        sampler = RSSSampler(pids)
        sampler.start()
        load_before = os.getloadavg()[0]
        partition = f"load-{args.clients}-{time.monotonic_ns()}"
        result = asyncio.run(flexload.run([s.url for s in services], partition, args.clients, args.seconds,
                                          rate=args.rate, team_size=args.team_size,
                                          shared_fraction=args.shared_fraction, drain=args.drain,
                                          setup_timeout=args.setup_timeout, progress=True))
        sampler.running = False
        sampler.join()
        result.update(load_before=load_before, load_after=os.getloadavg()[0], rss_idle_mib=idle / 1024,
                      rss_peak_mib=sampler.peak / 1024, rss_end_mib=sampler.last / 1024)
        for s in services:
            if s.proc.poll() is not None:
                result["errors"] += 1
                result.setdefault("first_error", f"coffer-sync exited with {s.proc.returncode}; log {s.log}")
        if result.get("uploaded"):
            result["peer_insert_per_s"] = peer_insert_rate(postgres, partition)
        return result
    finally:
        for s in services:
            s.stop()


def report(r: dict) -> str:
    lines = [f"{r['clients']:,} clients on {r['instances']} instances, {r['seconds']:g} s at {r['rate']:g} "
             f"changesets/s each (teams of {r['team_size']}, {r['shared_fraction']:.0%} to shared objects); "
             f"load average {r['load_before']:.2f} before, {r['load_after']:.2f} after"]
    if "uploaded" not in r:
        lines.append(f"did not finish: {r['subscribed']:,} of {r['clients']:,} clients subscribed in "
                     f"{r['setup_s']:.1f} s; {r.get('first_error')}")
        return "\n".join(lines)
    lat, cross = r["latency_ms"], r["cross_instance_latency_ms"]
    peer = r.get("peer_insert_per_s") or 0.0
    lines += [
        f"setup (login, subscribe, complete, create): {r['setup_s']:.1f} s for {r['subscribed']:,} clients",
        f"uploaded: {r['uploaded']:,} changesets, {r['uploaded_per_s']:,.1f}/s",
        f"integrated: {r['integrated']:,}, {r['integrated_per_s']:,.1f}/s; peer, the same history rows by psql "
        f"(one transaction each): {peer:,.0f}/s; ratio {r['integrated_per_s'] / peer if peer else 0:.3f}",
        f"delivered: {r['delivered']:,} of {r['due']:,} due, {r['delivered_per_s']:,.1f}/s "
        f"({r['cross_instance_delivered']:,} across instances); changesets in DOWNLOAD frames, with those the "
        f"subscriptions emptied: {r['received_changesets']:,}",
        f"upload to delivery: p50 {lat['p50']:.1f} ms, p95 {lat['p95']:.1f} ms, p99 {lat['p99']:.1f} ms, "
        f"max {lat['max']:.1f} ms",
        f"across instances:   p50 {cross['p50']:.1f} ms, p95 {cross['p95']:.1f} ms, p99 {cross['p99']:.1f} ms, "
        f"max {cross['max']:.1f} ms",
        f"RSS of the services: idle {r['rss_idle_mib']:.0f} MiB, peak {r['rss_peak_mib']:.0f} MiB "
        f"({r['rss_peak_mib'] / max(r['rss_idle_mib'], 1e-9):.1f}x idle), at the end {r['rss_end_mib']:.0f} MiB",
        f"errors: {r['errors']} (clients not subscribed {r['not_subscribed']}, missing deliveries {r['missing']}, "
        f"not integrated {r['not_integrated']}, "
        f"client failures {r['client_failures']}, compensating writes {r['compensating_writes']}, "
        f"unexpected {r['unexpected']}); drain {r['drain_s']:.1f} s",
    ]
    if r.get("first_error"):
        lines.append(f"first error: {r['first_error']}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description="The sync load test (Benchmarks/sync/load_run.py).")
    parser.add_argument("--clients", type=int, default=1000)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--instances", type=int, default=2)
    parser.add_argument("--rate", type=float, default=0.2, help="changesets per second per client")
    parser.add_argument("--team-size", type=int, default=10)
    parser.add_argument("--shared-fraction", type=float, default=0.02)
    parser.add_argument("--drain", type=float, default=60, help="seconds to wait for deliveries after the window")
    parser.add_argument("--setup-timeout", type=float, default=600,
                        help="seconds for every client to log in, subscribe and create its object")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON too")
    args = parser.parse_args()
    for name, value in (("--clients", args.clients), ("--seconds", args.seconds), ("--instances", args.instances),
                        ("--rate", args.rate), ("--team-size", args.team_size),
                        ("--setup-timeout", args.setup_timeout)):
        if value <= 0:
            parser.error(f"{name} must be positive, not {value}")
    if args.clients > 5000 or args.seconds > 600:
        parser.error("the load test is bounded: at most 5,000 clients and 600 seconds")
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))  # the clients' sockets, here and in the services
    postgres = os.environ.get("COFFER_PG_URL")
    if not postgres:
        parser.error("COFFER_PG_URL is not set: run through scripts/sync-load (or scripts/postgres run)")
    if not postgres.startswith("postgres://") or not any(h in postgres for h in ("@127.0.0.1", "@localhost", "@[::1]")):
        parser.error(f"COFFER_PG_URL must be a loopback postgres:// URL, not {postgres}")
    subprocess.run([SERVICE_BIN, "migrate", "--postgres", postgres], check=True, capture_output=True)
    with tempfile.TemporaryDirectory() as tmp:
        r = one_run(postgres, Path(tmp), args)
    if args.json:
        print(json.dumps(r))
    print(report(r))
    sys.exit(1 if r["errors"] else 0)


if __name__ == "__main__":
    main()
