"""C and Python clients against a real `coffer-sync serve` on a private
PostgreSQL: creates, updates, deletes and list edits propagate between them; a
client offline catches up when it comes back; the service killed with -9 and
started again mid-stream loses nothing; clients of two service instances on one
PostgreSQL converge. After each, every client holds exactly what
`coffer-sync dump` prints."""

import time

from conftest import CClient, PyClient, Service, converge, service_dump


def test_edits_propagate_between_c_and_python_clients(postgres, partition, services, clients, tmp_path):
    services.append(Service(postgres, tmp_path))
    url = services[0].url
    c = CClient(tmp_path / "c.coffer", url, partition)
    p = PyClient(tmp_path / "p.coffer", url, partition)
    clients += [c, p]
    c.put(1, "fromC")
    p.put(2, "fromPython")
    c.tag(1, 0, "first")
    state = converge(postgres, partition, clients)
    assert len(state) == 2
    p.tag(1, 1, "second")
    p.put(1, "editedInPython")
    c.delete(2)
    c.put(3, "three")
    c.untag(1, 0)
    state = converge(postgres, partition, clients)
    assert state == {
        '{"class":"Note","pk":1,"properties":{"tags":["second"],"text":"editedInPython"}}',
        '{"class":"Note","pk":3,"properties":{"tags":[],"text":"three"}}',
    }


def test_a_client_offline_catches_up(postgres, partition, services, clients, tmp_path):
    services.append(Service(postgres, tmp_path))
    url = services[0].url
    online = CClient(tmp_path / "online.coffer", url, partition)
    offline = PyClient(tmp_path / "offline.coffer", url, partition)
    clients += [online, offline]
    converge(postgres, partition, clients)
    offline.pause()
    for i in range(50):
        online.put(i, f"n{i}")
        offline.put(100 + i, f"off{i}")
    online.delete(7)
    time.sleep(0.01)
    offline.put(7, "offlineEdit")  # a create of a new life, stamped after the delete
    online.wait_upload()
    assert len(offline.dump()) == 51  # its own, nothing of the others
    offline.resume()
    state = converge(postgres, partition, clients)
    assert len(state) == 100
    assert '{"class":"Note","pk":7,"properties":{"tags":[],"text":"offlineEdit"}}' in state


def test_the_service_killed_and_restarted_mid_stream_loses_nothing(postgres, partition, services, clients, tmp_path):
    service = Service(postgres, tmp_path)
    services.append(service)
    writer = PyClient(tmp_path / "w.coffer", service.url, partition)
    reader = CClient(tmp_path / "r.coffer", service.url, partition)
    clients += [writer, reader]
    for i in range(300):
        writer.put(i, f"v{i}")
        if i == 150:
            service.kill()  # whatever it was doing, with -9
        if i == 220:
            service.start()
    state = converge(postgres, partition, clients)
    assert len(state) == 300
    assert '{"class":"Note","pk":299,"properties":{"tags":[],"text":"v299"}}' in state


def test_clients_of_two_instances_on_one_postgresql_converge(postgres, partition, services, clients, tmp_path):
    one, two = Service(postgres, tmp_path), Service(postgres, tmp_path)
    services += [one, two]
    a = CClient(tmp_path / "a.coffer", one.url, partition)
    b = PyClient(tmp_path / "b.coffer", two.url, partition)
    c = CClient(tmp_path / "c.coffer", two.url, partition)
    clients += [a, b, c]
    a.put(1, "viaOne")
    b.put(2, "viaTwo")
    c.put(3, "alsoViaTwo")
    a.tag(1, 0, "x")
    state = converge(postgres, partition, clients)
    assert len(state) == 3
    b.delete(1)
    a.put(4, "later")
    state = converge(postgres, partition, clients)
    assert {line.split(',"properties"')[0] for line in state} == {
        '{"class":"Note","pk":2', '{"class":"Note","pk":3', '{"class":"Note","pk":4'}
    assert service_dump(postgres, partition) == state
