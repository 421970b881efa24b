"""The convergence test: three to five clients, C and Python, make random
creates, updates, deletes and list edits on a few shared objects while going
offline and online, and the service is killed with -9 and started again (which
cuts every connection) at random points; afterwards every client's objects and
the service's merged state (`coffer-sync dump`) are equal, object by object.

COFFER_SYNC_OPS (default 300) and COFFER_SYNC_SEEDS (comma-separated, default
"1,2") set its length; scripts/sync-soak runs it long with many seeds."""

import os
import random
import time

import pytest
from conftest import CClient, PyClient, Service, converge

OPS = int(os.environ.get("COFFER_SYNC_OPS", "300"))
SEEDS = [int(s) for s in os.environ.get("COFFER_SYNC_SEEDS", "1,2").split(",") if s]


@pytest.mark.parametrize("seed", SEEDS)
def test_random_edits_converge(seed, postgres, services, clients, tmp_path):
    rng = random.Random(seed)
    partition = f"convergence-{seed}-{time.monotonic_ns()}"
    service = Service(postgres, tmp_path)
    services.append(service)
    for i in range(rng.randint(3, 5)):
        kind = CClient if i % 2 == 0 else PyClient
        clients.append(kind(tmp_path / f"client{i}.coffer", service.url, partition))
    offline = set()
    restarts = 0
    for op in range(OPS):
        c = rng.choice(clients)
        note = rng.randrange(12)
        r = rng.random()
        if r < 0.30:
            c.put(note, f"s{seed}op{op}")
        elif r < 0.42:
            c.delete(note)
        elif r < 0.62:
            c.tag(note, rng.randrange(4), f"t{op}")
        elif r < 0.72:
            c.untag(note, rng.randrange(4))
        elif r < 0.84:
            if c in offline:
                c.resume()
                offline.discard(c)
            else:
                c.pause()
                offline.add(c)
        elif r < 0.87:
            service.kill()
            if rng.random() < 0.5:
                time.sleep(rng.uniform(0, 0.3))  # down for a while: clients back off
            service.start()
            restarts += 1
        else:
            time.sleep(rng.uniform(0, 0.02))  # let some of it travel
    for c in offline:
        c.resume()
    state = converge(postgres, partition, clients)
    print(f"seed {seed}: {len(clients)} clients, {OPS} operations, {restarts} restarts, {len(state)} objects")
