/*
 * coffer_queries.c — the benchmark's queries on Coffer, through the query
 * API: each query is compiled with its argument (as an application would
 * write it), run in the read transaction, and its result counted.
 *
 *   indexed equality  "group == $0"          answered from the index
 *   filter scan       "i64 > $0"             every object read
 *   prefix            "name BEGINSWITH $0"   an index range (plain files)
 */
#include <string.h>

#include "coffer_engine.h"

const char *coffer_bench_plan(bench_op op)
{
    (void)op;
    return NULL; /* every query goes through the query engine */
}

/* Compiles `text` with one argument, runs it and adds its count. */
static int count_query(coffer_bench *b, coffer_txn *txn, const char *text, const coffer_value *arg, uint64_t *check)
{
    coffer_query *q;
    coffer_results *r;
    uint64_t n;
    coffer_status st = coffer_query_compile(b->db, b->cls, text, SIZE_MAX, arg, 1, &q);
    if (st != COFFER_OK)
        return coffer_bench_fail("coffer_query_compile", st);
    st = coffer_query_run(txn, q, &r);
    coffer_query_free(q);
    if (st != COFFER_OK)
        return coffer_bench_fail("coffer_query_run", st);
    st = coffer_results_count(r, &n);
    coffer_results_free(r);
    if (st != COFFER_OK)
        return coffer_bench_fail("coffer_results_count", st);
    *check += n;
    return 0;
}

/* Runs `count` queries, the i-th with the argument `make_arg` gives. */
static int queries(void *state, uint64_t count, const char *text,
                   coffer_value (*make_arg)(const bench_workload *w, uint64_t i, char *buf), const bench_workload *w,
                   uint64_t *check)
{
    coffer_bench *b = state;
    coffer_txn *txn;
    if (coffer_bench_begin(b, COFFER_TXN_READ, &txn))
        return -1;
    for (uint64_t i = 0; i < count; i++) {
        char buf[BENCH_PREFIX_LEN + 1];
        coffer_value arg = make_arg(w, i, buf);
        if (count_query(b, txn, text, &arg, check)) {
            coffer_txn_free(txn);
            return -1;
        }
    }
    coffer_txn_free(txn);
    return 0;
}

static coffer_value group_arg(const bench_workload *w, uint64_t i, char *buf)
{
    (void)buf;
    return coffer_value_int(bench_query_group(w, i));
}

static coffer_value threshold_arg(const bench_workload *w, uint64_t i, char *buf)
{
    (void)buf;
    return coffer_value_int(bench_scan_threshold(w, i));
}

static coffer_value prefix_arg(const bench_workload *w, uint64_t i, char *buf)
{
    bench_query_prefix(w, i, buf);
    return coffer_value_string(buf, BENCH_PREFIX_LEN);
}

int coffer_bench_query_indexed_eq(void *state, const bench_workload *w, uint64_t *check)
{
    return queries(state, w->queries, "group == $0", group_arg, w, check);
}

int coffer_bench_scan_filter(void *state, const bench_workload *w, uint64_t *check)
{
    return queries(state, w->scans, "i64 > $0", threshold_arg, w, check);
}

int coffer_bench_query_prefix(void *state, const bench_workload *w, uint64_t *check)
{
    return queries(state, w->prefix_queries, "name BEGINSWITH $0", prefix_arg, w, check);
}
