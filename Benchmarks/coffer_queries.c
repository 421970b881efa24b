/*
 * coffer_queries.c — the benchmark's queries on Coffer, through the query
 * API: each query text is compiled once, as SQLite prepares its statement
 * once; every query rebinds its argument (coffer_query_rebind), runs in the
 * read transaction, and its result is counted.
 *
 *   indexed equality  "group == $0"          answered from the index
 *   filter scan       "i64 > $0"             every object read
 *   contains scan     "text CONTAINS $0"     every object's text read
 *   prefix            "name BEGINSWITH $0"   an index range (plain files)
 */
#include <string.h>

#include "coffer_engine.h"

const char *coffer_bench_plan(bench_op op)
{
    (void)op;
    return NULL; /* every query goes through the query engine */
}

/* Rebinds `prepared` to `arg`, runs it and adds its count. */
static int count_query(coffer_txn *txn, const coffer_query *prepared, const coffer_value *arg, uint64_t *check)
{
    coffer_query *q;
    coffer_results *r;
    uint64_t n;
    coffer_status st = coffer_query_rebind(prepared, arg, 1, &q);
    if (st != COFFER_OK)
        return coffer_bench_fail("coffer_query_rebind", st);
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
    coffer_query *prepared;
    char buf[(BENCH_PREFIX_LEN > BENCH_NEEDLE_LEN ? BENCH_PREFIX_LEN : BENCH_NEEDLE_LEN) + 1];
    coffer_value arg = make_arg(w, 0, buf);
    coffer_status st = coffer_query_compile(b->db, b->cls, text, SIZE_MAX, &arg, 1, &prepared);
    if (st != COFFER_OK)
        return coffer_bench_fail("coffer_query_compile", st);
    if (coffer_bench_begin(b, COFFER_TXN_READ, &txn)) {
        coffer_query_free(prepared);
        return -1;
    }
    int rc = 0;
    for (uint64_t i = 0; i < count && rc == 0; i++) {
        arg = make_arg(w, i, buf);
        rc = count_query(txn, prepared, &arg, check);
    }
    coffer_txn_free(txn);
    coffer_query_free(prepared);
    return rc;
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

static coffer_value needle_arg(const bench_workload *w, uint64_t i, char *buf)
{
    bench_scan_needle(w, i, buf);
    return coffer_value_string(buf, BENCH_NEEDLE_LEN);
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

int coffer_bench_scan_contains(void *state, const bench_workload *w, uint64_t *check)
{
    return queries(state, w->scans, "text CONTAINS $0", needle_arg, w, check);
}

int coffer_bench_query_prefix(void *state, const bench_workload *w, uint64_t *check)
{
    return queries(state, w->prefix_queries, "name BEGINSWITH $0", prefix_arg, w, check);
}
