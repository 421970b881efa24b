"""A short run of the sync load test (Benchmarks/sync/load_run.py with the
flexible-sync clients of Benchmarks/sync/flexload.py) against two real
coffer-sync instances on one PostgreSQL, so that the load test keeps working:
every changeset uploaded in the window is integrated and reaches every client
whose subscription it matches, across instances too, and PostgreSQL holds
each object's last update. Bad arguments and a service that refuses the
clients' logins are reported, not hung on."""

import asyncio
import json
import os
import socket
import subprocess
import sys

import pytest
from conftest import ROOT, SERVICE_BIN, Service, service_dump

sys.path.insert(0, str(ROOT / "Benchmarks" / "sync"))
import flexload  # noqa: E402
import load_run as load_run_module  # noqa: E402

LOAD_RUN = ROOT / "Benchmarks" / "sync" / "load_run.py"


def load_run(postgres: str, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "COFFER_PG_URL": postgres, "COFFER_SYNC_BIN": SERVICE_BIN}
    return subprocess.run([sys.executable, str(LOAD_RUN), *args], capture_output=True, text=True, env=env,
                          timeout=300)


def test_twenty_clients_on_two_instances_for_five_seconds(postgres):
    out = load_run(postgres, "--clients", "20", "--seconds", "5", "--rate", "0.4", "--team-size", "5",
                   "--shared-fraction", "0.1", "--drain", "120", "--json")
    assert out.returncode == 0, out.stdout + out.stderr
    r = json.loads(out.stdout.splitlines()[0])
    assert r["errors"] == 0, r
    assert r["instances"] == 2 and r["clients"] == 20
    # One changeset every 2.5 s from each client, from a random phase of its first period.
    assert r["uploaded"] == 20 * 2
    assert r["integrated"] == r["uploaded"]
    assert r["delivered"] == r["due"] >= r["uploaded"] * 4  # at least the four teammates each
    assert r["cross_instance_delivered"] > 0  # teams span both instances
    lat = r["latency_ms"]
    assert 0 < lat["p50"] <= lat["p95"] <= lat["p99"] <= lat["max"]
    assert r["rss_peak_mib"] >= r["rss_idle_mib"] > 0
    assert r["peer_insert_per_s"] > 0
    assert "upload to delivery: p50" in out.stdout and "across instances" in out.stdout


def test_the_service_holds_every_clients_last_update(postgres, services, partition, tmp_path):
    config = tmp_path / "auth.json"
    config.write_text(json.dumps({"auth": {"anonymous": True, "signingSecret": "s" * 32}}))
    a, b = Service(postgres, tmp_path, config=config), Service(postgres, tmp_path, config=config)
    services.extend([a, b])
    r = asyncio.run(flexload.run([a.url, b.url], partition, clients=6, seconds=2, rate=1, team_size=3,
                                 shared_objects=2, shared_fraction=0.0, drain=120))
    assert r["errors"] == 0, r
    assert r["delivered"] == r["due"] == r["uploaded"] * 2
    objects = [json.loads(line) for line in service_dump(postgres, partition)]
    own = {o["pk"]: o["properties"] for o in objects if o["pk"] > 0}
    assert sorted(own) == [1, 2, 3, 4, 5, 6]
    assert sorted(o["pk"] for o in objects if o["pk"] < 0) == [-2, -1]
    for pk, props in own.items():
        # Each client's last UPDATE set n to its version and text to match.
        assert props["text"] == f"c{pk - 1}v{props['n']}" and props["n"] >= 2
        assert props["team"] == (pk - 1) // 3 + 1


def test_clients_that_do_not_subscribe_in_time_are_errors_and_the_others_go_on(postgres, services, partition,
                                                                                tmp_path):
    config = tmp_path / "auth.json"
    config.write_text(json.dumps({"auth": {"anonymous": True, "signingSecret": "s" * 32}}))
    service = Service(postgres, tmp_path, config=config)
    services.append(service)
    with socket.socket() as silent:  # a second "instance" that never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(64)
        dead = f"ws://127.0.0.1:{silent.getsockname()[1]}/sync/v1"
        r = asyncio.run(flexload.run([service.url, dead], partition, clients=4, seconds=1, rate=1, team_size=4,
                                     shared_objects=1, shared_fraction=0.0, drain=60, setup_timeout=45))
    # Clients 1 and 3 were on the silent one; 0 and 2 are teammates on the real one.
    assert r["subscribed"] == 2 and r["not_subscribed"] == 2
    assert r["errors"] == 2, r
    assert "2 of 4 clients had not subscribed within 45 s" in r["first_error"]
    assert r["uploaded"] == 2 and r["delivered"] == r["due"] == 2


def test_a_service_without_anonymous_login_is_an_error_of_the_run(postgres, services, partition, tmp_path):
    service = Service(postgres, tmp_path)  # development mode: /auth/v1/login answers 404
    services.append(service)
    r = asyncio.run(flexload.run([service.url], partition, clients=2, seconds=1, drain=1, setup_timeout=30))
    assert r["errors"] >= 1 and "uploaded" not in r
    assert "404" in r["first_error"], r["first_error"]


def refused(monkeypatch, capsys, postgres: str, *args: str) -> str:
    """load_run's error for these arguments (it exits 2 before starting anything)."""
    monkeypatch.setenv("COFFER_PG_URL", postgres)
    monkeypatch.setattr(sys, "argv", ["load_run.py", *args])
    with pytest.raises(SystemExit) as exit:
        load_run_module.main()
    assert exit.value.code == 2
    return capsys.readouterr().err


def test_bad_arguments_are_refused_by_name(postgres, monkeypatch, capsys):
    assert "--clients must be positive, not 0" in refused(monkeypatch, capsys, postgres, "--clients", "0")
    assert "--rate must be positive, not -1.0" in refused(monkeypatch, capsys, postgres, "--rate", "-1")
    assert "at most 5,000 clients and 600 seconds" in refused(monkeypatch, capsys, postgres, "--seconds", "3600")
    assert "loopback" in refused(monkeypatch, capsys, "postgres://coffer@db.example.com:5432/coffer_sync")
