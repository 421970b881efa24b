#!/usr/bin/env python3
"""Smoke test of the Python benchmark on a few hundred objects: every
operation runs and is verified on Coffer (plain and encrypted) and sqlite3,
wrong answers and bad options are refused, and report.py accepts, charts and
publishes the results. Needs `coffer` importable (bindings/python/src) and
COFFER_LIBRARY; py-lmdb and ObjectBox are tried only where installed.

  smoke_test.py WORK_DIR
"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.join(HERE, "bench.py")
REPORT = os.path.join(os.path.dirname(HERE), "report.py")
SIZES = ["--n", "300", "--single-writes", "5", "--seed", "7", "--queries", "20", "--scans", "2", "--prefix-queries", "10"]


def run(*args, expect=0):
    done = subprocess.run([sys.executable, *args], capture_output=True, text=True)
    if done.returncode != expect:
        raise AssertionError(f"{' '.join(args)}: exit {done.returncode}, expected {expect}\n{done.stdout}{done.stderr}")
    return done


def main(work):
    os.makedirs(work, exist_ok=True)
    engines = ["coffer", "coffer_encrypted", "sqlite3"]
    for optional in ("lmdb", "objectbox"):
        try:
            __import__(optional)
            engines.append(optional)
        except ImportError:
            pass

    # Each engine, once, in a child: every operation timed and verified.
    for engine in engines:
        with tempfile.TemporaryDirectory(dir=work) as data:
            report = json.loads(run(BENCH, "--child", engine, "--workdir", data, *SIZES).stdout)
            assert len(report["seconds"]) == 9, report
            assert report["file_size_bytes"] > 0 and report["peak_rss_bytes"] > 0, report

    # A wrong answer is an error naming the operation: the oracle of another
    # seed does not match what the engine read.
    sys.path.insert(0, HERE)
    from engine_sqlite import SqliteEngine
    from workload import Workload
    with tempfile.TemporaryDirectory(dir=work) as data:
        w, other = Workload(7, 50, 2), Workload(8, 50, 2)
        engine = SqliteEngine(data)
        engine.insert_bulk(w)
        assert engine.read_by_primary_key(w) == w.expected_checks()["read_by_primary_key"]
        assert engine.read_by_primary_key(w) != other.expected_checks()["read_by_primary_key"]
        for query in ("indexed_equality_query", "string_prefix_query"):
            assert getattr(engine, query)(w) == w.expected_checks()[query]
            assert getattr(engine, query)(other) != other.expected_checks()[query], query
        engine.close()

    # Bad options name what was wrong.
    assert "unknown engine nosuch" in run(BENCH, "--engines", "coffer,nosuch", expect=2).stderr
    assert "0 is below 1" in run(BENCH, "--n", "0", expect=2).stderr
    assert "no Coffer library" in run(BENCH, "--engines", "sqlite3", "--library", os.path.join(work, "none.so"),
                                      expect=1).stderr

    # The whole run (no PyPI engine, so no venv), then report.py on its results.
    results = os.path.join(work, "bench-results-python.json")
    out = run(BENCH, "--engines", "coffer,coffer_encrypted,sqlite3", "--repeat", "2", "--workdir", work,
              "--library", os.environ["COFFER_LIBRARY"], "--json", results, *SIZES).stdout
    assert "coffer/sqlite3" in out, out
    with open(results, encoding="utf-8") as f:
        data = json.load(f)
    assert data["language"] == "python" and data["verified"] is True and data["n"] == 300
    assert set(data["operations"]["insert_bulk"]) == {"coffer", "coffer_encrypted", "sqlite3"}
    assert data["operation_counts"]["single_object_write_transactions"] == 5
    run(REPORT, "check", results)
    doc = os.path.join(work, "PERFORMANCE.md")
    with open(doc, "w", encoding="utf-8") as f:
        f.write("# x\n<!-- figures-python:begin -->\nold\n<!-- figures-python:end -->\n")
    run(REPORT, "publish", results, doc, os.path.join(work, "chart-python.svg"))
    with open(doc, encoding="utf-8") as f:
        text = f.read()
    assert "old" not in text and "| Coffer/sqlite3 |" in text and "N = 300" in text, text
    print("python benchmark smoke test: passed")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp())
