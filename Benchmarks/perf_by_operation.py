#!/usr/bin/env python3
"""Splits a perf profile of coffer-bench by benchmark operation.

    perf record -e cpu-clock -F 500 --call-graph dwarf -o bench.perf \\
        build-bench/Benchmarks/coffer-bench --engines coffer
    perf script -i bench.perf | python3 Benchmarks/perf_by_operation.py [TOP]

Each sample is charged to the operation whose engine function is on its
stack (insert_bulk, read_by_pk, ...; profile one engine at a time, since the
engines use the same function names) and, within it, to the function where
the time was spent (its library in brackets; in a library without symbols,
the nearest named function above it). Prints the TOP (default 8)
functions of every operation with their share of that operation's samples.
"""
import collections
import re
import sys

OPERATIONS = ["insert_bulk", "read_by_pk", "update_all", "read_all", "coffer_bench_query_indexed_eq",
              "query_indexed_eq", "coffer_bench_scan_filter", "scan_filter",
              "coffer_bench_scan_contains", "scan_contains", "coffer_bench_query_prefix",
              "query_prefix", "delete_all", "single_writes", "coffer_bench_list_append", "list_append",
              "coffer_bench_list_read", "list_read"]
FRAME = re.compile(r"^\s+[0-9a-f]+\s+(\S+?)(?:\+0x[0-9a-f]+)?\s+\((.*)\)\s*$")


def samples(lines):
    stack = []
    for line in lines:
        if not line.strip():
            if stack:
                yield stack
            stack = []
            continue
        m = FRAME.match(line)
        if m:
            symbol, dso = m.group(1), m.group(2).rsplit("/", 1)[-1]
            stack.append((symbol, dso))
    if stack:
        yield stack


def main(argv):
    top = int(argv[1]) if len(argv) > 1 else 8
    per_op = collections.defaultdict(collections.Counter)
    for stack in samples(sys.stdin):
        op = next((s for s, _ in stack if s in OPERATIONS), None)
        if op:
            leaf, dso = stack[0]
            if leaf == "[unknown]":
                # Libraries without symbols (LMDB): name the nearest named
                # function up the stack instead.
                named = next((f for f in stack if f[0] != "[unknown]"), None)
                leaf = f"inside {named[0]}" if named else leaf
            per_op[op][f"{leaf} [{dso}]"] += 1
    for op in OPERATIONS:
        counts = per_op.get(op)
        if not counts:
            continue
        total = sum(counts.values())
        print(f"{op}: {total} samples")
        for name, n in counts.most_common(top):
            print(f"  {100 * n / total:5.1f}%  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
