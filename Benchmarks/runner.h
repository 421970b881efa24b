/*
 * runner.h — runs every operation of one engine in a child process of its
 * own, so that each engine's peak RSS is its own and a crash in one engine
 * is reported instead of ending the run.
 */
#ifndef BENCH_RUNNER_H
#define BENCH_RUNNER_H

#include "engine.h"

typedef struct bench_result {
    const bench_engine *engine;
    int completed;                    /* every supported operation ran */
    char error[512];                  /* why not, naming the operation */
    int supported[BENCH_OP_COUNT];
    double seconds[BENCH_OP_COUNT];
    uint64_t check[BENCH_OP_COUNT];
    uint64_t file_bytes;              /* files of the store with all n objects */
    uint64_t peak_rss_bytes;          /* of the child process */
    uint64_t harness_rss_bytes;       /* the child's RSS before the store opened */
} bench_result;

/* Runs `engine` on a fresh store in a new directory under `workdir`, which
 * is removed afterwards. Fills `out`; returns 0 if every operation ran. */
int bench_run_engine(const bench_engine *engine, const bench_workload *w, const char *workdir, bench_result *out);

/* ops/s of an operation, or 0 if it did not run. */
double bench_ops_per_second(const bench_result *r, const bench_workload *w, bench_op op);

#endif
