"""Queries with bounded cost: nested SUBQUERYs 50 deep finish, a query that
would never end is stopped by Database.interrupt() from another thread or by
its timeout, and the database works normally afterwards."""

import threading
import time

import pytest

import coffer

SCHEMA = [{"name": "Node", "properties": {"v": "int", "next": "Node[]"}}]


@pytest.fixture
def graph(db_path):
    """40 nodes: node i has value 9 on every 37th node (else i % 9) and,
    unless i is a multiple of 5, links to three others."""
    with coffer.open(db_path, schema=SCHEMA) as db:
        n = 40
        with db.write():
            nodes = [db.create("Node", {"v": 9 if i % 37 == 0 else i % 9}) for i in range(n)]
            for i, node in enumerate(nodes):
                if i % 5:
                    node.next.extend([nodes[(i * 7 + 1) % n], nodes[(i * 13 + 5) % n], nodes[(i + 1) % n]])
        yield db


def chain(depth, innermost):
    """SUBQUERY(next, $a0, SUBQUERY($a0.next, $a1, ... innermost ...)), `depth` levels."""
    head = "".join("SUBQUERY(next, $a0, " if k == 0 else f"SUBQUERY($a{k - 1}.next, $a{k}, " for k in range(depth))
    return head + innermost + ").@count > 0" * depth


def endless():
    """20 levels whose innermost condition reads every outer variable: 3^20
    paths from each node, none shared."""
    return chain(20, " OR ".join(f"$a19.v != $a{k}.v" for k in range(19)))


def test_deep_nesting_finishes(graph):
    reach = [9 if i % 37 == 0 else i % 9 for i in range(40)]
    deep = graph.objects("Node").filter(chain(50, "$a49.v == 9"))
    # The same question asked one level at a time from the innermost.
    nodes = list(graph.objects("Node"))
    ok = {node: reach[i] == 9 for i, node in enumerate(nodes)}
    for _ in range(49):
        ok = {node: any(ok[n] for n in node.next) for node in nodes}
    assert list(deep) == [node for node in nodes if any(ok[n] for n in node.next)]


def test_interrupt_from_another_thread(graph):
    results = graph.objects("Node").filter(endless())
    graph.interrupt()  # nothing running: no effect on later queries
    done = threading.Event()

    def keep_interrupting():
        while not done.is_set():
            graph.interrupt()
            time.sleep(0.005)

    thread = threading.Thread(target=keep_interrupting)
    thread.start()
    try:
        with pytest.raises(coffer.QueryInterruptedError, match=r"interrupted by coffer_interrupt\(\)") as info:
            len(results)
    finally:
        done.set()
        thread.join()
    assert info.value.status == coffer.Status.INTERRUPTED
    assert isinstance(info.value, coffer.CofferError)
    assert len(graph.objects("Node").filter("v == 9")) == 2


def test_timeout(graph):
    slow = graph.objects("Node").filter(endless(), timeout=0.05)
    with pytest.raises(coffer.QueryInterruptedError, match="timeout of 50 ms"):
        list(slow)
    # The same text compiled again without a timeout is prepared from the
    # first but does not inherit it; a generous timeout changes nothing.
    assert len(graph.objects("Node").filter("v == $0", 9, timeout=60)) == 2
    untimed = graph.objects("Node").filter("v == $0", 9)
    assert coffer._capi.coffer_query_timeout(untimed._queries[0].handle) == 0
    assert len(untimed) == 2


@pytest.mark.parametrize("bad", [0, -1, float("nan"), float("inf")])
def test_timeout_must_be_positive(graph, bad):
    with pytest.raises(coffer.InvalidArgumentError, match="timeout must be a positive"):
        graph.objects("Node").filter("v == 1", timeout=bad)


def test_timeout_must_be_a_number(graph):
    with pytest.raises(TypeError, match="timeout must be a number"):
        graph.objects("Node").filter("v == 1", timeout="1")


def test_interrupt_after_close_does_nothing(db_path):
    db = coffer.open(db_path, schema=SCHEMA)
    db.close()
    db.interrupt()
