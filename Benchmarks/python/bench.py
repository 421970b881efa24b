#!/usr/bin/env python3
"""The Python benchmark: Coffer's binding (plain and encrypted) against
sqlite3 (standard library), py-lmdb and ObjectBox on the CRUD workload and
its queries.

  python3 Benchmarks/python/bench.py [--n N] [--single-writes N] [--seed S]
      [--queries Q] [--scans S] [--prefix-queries P]
      [--repeat R] [--engines coffer,coffer_encrypted,sqlite3,lmdb,objectbox]
      [--workdir DIR] [--json PATH] [--machine TEXT] [--library libcoffer.so.0]

Run with any Python 3.9+: it creates build-bench/python-venv, installs `lmdb`
and `objectbox` there from PyPI and runs itself in it (not when neither is
among --engines). `coffer` is imported
from bindings/python/src with the library given by --library (by default
build-bench/libcoffer.so.0, which scripts/bench builds). Each engine runs in
its own process, --repeat times in turn (each round starting with the next
engine); the fastest run of each operation counts. An engine that cannot be installed or started here is reported as
unavailable, with the reason, and left out of the figures.
"""
import argparse
import datetime
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
VENV = os.path.join(ROOT, "build-bench", "python-venv")
ENGINES = {
    "coffer": ("engine_coffer", "CofferEngine"),
    "coffer_encrypted": ("engine_coffer", "EncryptedCofferEngine"),
    "sqlite3": ("engine_sqlite", "SqliteEngine"),
    "lmdb": ("engine_lmdb", "LmdbEngine"),
    "objectbox": ("engine_objectbox", "ObjectBoxEngine"),
}
PACKAGES = {"lmdb": "lmdb", "objectbox": "objectbox"}
RATIOS = [("coffer", "sqlite3"), ("coffer", "lmdb"), ("coffer", "objectbox"), ("coffer_encrypted", "coffer")]
UNAVAILABLE = 3  # exit status of a child whose engine cannot be imported or opened


def parse(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])

    def positive(text, low=1):
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
        if v < low:
            raise argparse.ArgumentTypeError(f"{v} is below {low}")
        return v

    def engines(text):
        names = [e for e in text.split(",") if e]
        unknown = [e for e in names if e not in ENGINES]
        if unknown or not names:
            raise argparse.ArgumentTypeError(f"unknown engine {unknown[0] if unknown else '(none)'}; "
                                             f"known: {', '.join(ENGINES)}")
        return names

    p.add_argument("--n", type=positive, default=100_000)
    p.add_argument("--single-writes", type=lambda t: positive(t, 0), default=1_000)
    p.add_argument("--seed", type=lambda t: positive(t, 0), default=42)
    p.add_argument("--queries", type=positive, default=1_000, help="indexed equality queries")
    p.add_argument("--scans", type=positive, default=10, help="unindexed filter scans")
    p.add_argument("--prefix-queries", type=positive, default=100, help="string prefix queries")
    p.add_argument("--repeat", type=positive, default=3)
    p.add_argument("--engines", type=engines, default=list(ENGINES))
    p.add_argument("--workdir", default=os.path.join(ROOT, "build-bench"))
    p.add_argument("--json")
    p.add_argument("--machine")
    p.add_argument("--library", default=os.path.join(ROOT, "build-bench", "libcoffer.so.0"))
    p.add_argument("--child", choices=list(ENGINES), help=argparse.SUPPRESS)
    return p.parse_args(argv)


# ---- the venv -------------------------------------------------------------

def in_venv():
    return os.path.realpath(sys.prefix) == os.path.realpath(VENV)


def enter_venv(argv):
    """Creates the venv, installs the PyPI engines, and re-runs in it. Returns
    the packages that could not be installed, by engine."""
    python = os.path.join(VENV, "bin", "python")
    if not os.path.exists(python):
        subprocess.run([sys.executable, "-m", "venv", VENV], check=True)
    failed = {}
    for engine, package in PACKAGES.items():
        done = subprocess.run([python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", package],
                              capture_output=True, text=True)
        if done.returncode != 0:
            lines = (done.stderr or done.stdout).strip().splitlines()
            failed[engine] = f"pip install {package} failed: {lines[-1] if lines else 'no output'}"
    env = dict(os.environ, COFFER_BENCH_PIP_FAILED=json.dumps(failed))
    os.execve(python, [python, os.path.abspath(__file__), *argv], env)


# ---- one engine, one run (in a child process) -----------------------------

def peak_rss():
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def directory_size(path):
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, files in os.walk(path) for f in files)


def run_child(args):
    sys.path.insert(0, HERE)
    from workload import OPERATIONS, Workload
    w = Workload(args.seed, args.n, args.single_writes, args.queries, args.scans, args.prefix_queries)
    expected = w.expected_checks()
    harness = peak_rss()
    module, name = ENGINES[args.child]
    try:
        engine_class = getattr(__import__(module), name)
        engine = engine_class(args.workdir)
    except Exception as e:
        if args.child not in PACKAGES:
            raise  # Coffer and sqlite3 must run
        # A PyPI engine that cannot start on this machine: reported, not fatal.
        print(f"{args.child} is unavailable: {type(e).__name__}: {e}", file=sys.stderr)
        return UNAVAILABLE
    seconds, file_size = {}, 0
    try:
        for op, _ in OPERATIONS:
            start = time.perf_counter()
            check = getattr(engine, op)(w)
            seconds[op] = time.perf_counter() - start
            if check != expected[op]:
                print(f"{args.child}: {op} gave {check}, expected {expected[op]}", file=sys.stderr)
                return 1
            if op == "read_all_in_order":
                file_size = directory_size(args.workdir)
    finally:
        engine.close()
    print(json.dumps({"seconds": seconds, "peak_rss_bytes": peak_rss(), "harness_rss_bytes": harness,
                      "file_size_bytes": file_size}))
    return 0


# ---- all engines, all runs ------------------------------------------------

def load_average():
    return round(os.getloadavg()[0], 2)


def run_all(args, unavailable):
    import shutil
    data_root = os.path.join(args.workdir, "python-bench-data")
    env = dict(os.environ, COFFER_LIBRARY=os.path.abspath(args.library),
               PYTHONPATH=os.pathsep.join(filter(None, [os.path.join(ROOT, "bindings", "python", "src"),
                                                        os.environ.get("PYTHONPATH")])))
    best = {}
    for run in range(1, args.repeat + 1):
        # Each round starts with another engine, so that none always runs
        # first (after the harness starts) or always right after the same one.
        shift = (run - 1) % len(args.engines)
        for engine in args.engines[shift:] + args.engines[:shift]:
            if engine in unavailable:
                continue
            directory = os.path.join(data_root, engine)
            shutil.rmtree(directory, ignore_errors=True)
            os.makedirs(directory)
            print(f"run {run}/{args.repeat}: {engine}", file=sys.stderr, flush=True)
            child = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", engine,
                                    "--workdir", directory, "--n", str(args.n),
                                    "--single-writes", str(args.single_writes), "--seed", str(args.seed),
                                    "--queries", str(args.queries), "--scans", str(args.scans),
                                    "--prefix-queries", str(args.prefix_queries)],
                                   env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            shutil.rmtree(directory, ignore_errors=True)
            sys.stderr.write(child.stderr)
            if child.returncode == UNAVAILABLE:
                unavailable[engine] = child.stderr.strip().splitlines()[-1]
                continue
            if child.returncode != 0:
                raise SystemExit(f"bench.py: {engine} failed (exit {child.returncode}); its error is above")
            report = json.loads(child.stdout)
            kept = best.setdefault(engine, report)
            for op, s in report["seconds"].items():
                kept["seconds"][op] = min(kept["seconds"][op], s)
            kept["peak_rss_bytes"] = max(kept["peak_rss_bytes"], report["peak_rss_bytes"])
    shutil.rmtree(data_root, ignore_errors=True)
    return best


def engine_versions(engines):
    """The version of each library under test, for the record."""
    import importlib.metadata
    import sqlite3
    versions = {"sqlite3": sqlite3.sqlite_version}
    for engine in ("lmdb", "objectbox"):
        try:
            versions[engine] = importlib.metadata.version(engine)
        except importlib.metadata.PackageNotFoundError:
            pass
    return {e: v for e, v in versions.items() if e in engines}


def results(args, machine, best, unavailable, date, load_before):
    sys.path.insert(0, HERE)
    from workload import OPERATIONS, operation_counts
    units = operation_counts(args.n, args.single_writes, args.queries, args.scans, args.prefix_queries)
    engines = [e for e in args.engines if e in best]
    operations = {op: {e: round(units[op] / best[e]["seconds"][op], 1) for e in engines
                       if best[e]["seconds"][op] > 0} for op, _ in OPERATIONS}
    ratios, targets = {}, []
    for op, rates in operations.items():
        ratios[op] = {f"{a}/{b}": float(f"{rates[a] / rates[b]:.4g}") for a, b in RATIOS if a in rates and b in rates}
        for b in ("sqlite3", "objectbox"):
            if f"coffer/{b}" in ratios[op]:
                r = ratios[op][f"coffer/{b}"]
                targets.append({"target": f"coffer >= 2x {b}", "operation": op, "ratio": r, "met": r >= 2})
        if "coffer_encrypted/coffer" in ratios[op]:
            r = ratios[op]["coffer_encrypted/coffer"]
            targets.append({"target": "encrypted within 2x of plain", "operation": op, "ratio": r, "met": r >= 0.5})
    per_engine = lambda key: {e: best[e][key] for e in engines}
    return {
        "machine": machine, "n": args.n, "operations": operations, "language": "python", "date": date,
        "repeat": args.repeat, "seed": args.seed, "verified": True,
        "load_average": {"before": load_before, "after": load_average()},
        "operation_counts": units, "operation_titles": dict(OPERATIONS), "ratios": ratios,
        "peak_rss_bytes": per_engine("peak_rss_bytes"), "harness_rss_bytes": per_engine("harness_rss_bytes"),
        "file_size_bytes": per_engine("file_size_bytes"), "targets": targets,
        "python": sys.version.split()[0], "engine_versions": engine_versions(engines),
        "unavailable": unavailable,
    }


def table(data):
    engines = list(data["peak_rss_bytes"])
    pairs = [p for p in (f"{a}/{b}" for a, b in RATIOS) if any(p in r for r in data["ratios"].values())]
    lines = [data["machine"], f"n = {data['n']:,}, fastest of {data['repeat']} runs, load average "
             f"{data['load_average']['before']} before, {data['load_average']['after']} after", "",
             " | ".join(["operation", *engines, *pairs])]
    for op, rates in data["operations"].items():
        lines.append(" | ".join([op, *(f"{rates[e]:,.0f}" if e in rates else "-" for e in engines),
                                 *(f"{data['ratios'][op][p]:.2f}x" if p in data["ratios"][op] else "-"
                                   for p in pairs)]))
    for e in engines:
        lines.append(f"{e}: peak RSS {data['peak_rss_bytes'][e] / 1048576:.1f} MiB (harness "
                     f"{data['harness_rss_bytes'][e] / 1048576:.1f} MiB), file {data['file_size_bytes'][e] / 1048576:.1f} MiB")
    for e, why in data["unavailable"].items():
        lines.append(f"{e}: not measured: {why}")
    return "\n".join(lines)


def main(argv):
    args = parse(argv)
    if args.child:
        return run_child(args)
    if not in_venv() and any(e in PACKAGES for e in args.engines):
        enter_venv(argv)
    unavailable = json.loads(os.environ.get("COFFER_BENCH_PIP_FAILED", "{}"))
    unavailable = {e: why for e, why in unavailable.items() if e in args.engines}
    if not os.path.exists(args.library):
        print(f"bench.py: no Coffer library at {args.library}; build it (scripts/bench does) or pass --library",
              file=sys.stderr)
        return 1
    sys.path.insert(0, HERE)
    from machine import describe
    os.makedirs(args.workdir, exist_ok=True)
    machine = args.machine or describe(args.workdir)
    load_before = load_average()
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    best = run_all(args, unavailable)
    if not best:
        print("bench.py: no engine could run: " + "; ".join(unavailable.values()), file=sys.stderr)
        return 1
    data = results(args, machine, best, unavailable, date, load_before)
    print(table(data))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(data, f, indent=1)
            f.write("\n")
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
