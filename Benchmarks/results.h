/*
 * results.h — checking the engines' answers against the oracle, and the
 * human table and bench-results.json of a run.
 */
#ifndef BENCH_RESULTS_H
#define BENCH_RESULTS_H

#include <stdio.h>

#include "runner.h"

/* Compares every check of every engine with `expected`; prints one line per
 * mismatch to `err` naming the engine, the operation, the value and the
 * expected value. Returns the number of mismatches. */
int bench_verify(const bench_result *results, size_t count, const uint64_t expected[BENCH_OP_COUNT], FILE *err);

/* Merges another run of the same engine into `best`: each operation keeps
 * its shorter time, the peak RSS its larger value. A run that did not
 * complete replaces `best`, so that its error is reported. */
void bench_keep_fastest(bench_result *best, const bench_result *run);

/* The key of a result's engine, or NULL if that engine did not run. */
const bench_result *bench_find_result(const bench_result *results, size_t count, const char *key);

/* ops/s of engine `a` divided by those of `b` for `op`; 0 if either is missing. */
double bench_ratio(const bench_result *results, size_t count, const bench_workload *w, bench_op op, const char *a,
                   const char *b);

/* The targets the harness reports (not asserts). */
typedef struct bench_target {
    const char *description; /* "coffer >= 2x sqlite" */
    const char *numerator, *denominator;
    double minimum;          /* the ratio must be at least this */
    int only_op;             /* -1: every operation, else one bench_op */
    int also_op;             /* -1, or a second operation */
} bench_target;
extern const bench_target bench_targets[];
extern const size_t bench_target_count;

/* Context of a run for the outputs. */
typedef struct bench_run_info {
    const char *machine;
    const char *date;        /* ISO 8601, UTC */
    double load_before, load_after;
    uint64_t repeat;         /* runs per engine; the fastest of each operation counts */
    int verified;            /* every check matched */
} bench_run_info;

void bench_print_table(FILE *out, const bench_result *results, size_t count, const bench_workload *w,
                       const bench_run_info *info);
/* Writes the JSON; 0, or -1 with a message on stderr. */
int bench_write_json(const char *path, const bench_result *results, size_t count, const bench_workload *w,
                     const bench_run_info *info);

#endif
