/*
 * coffer_queries.c — the benchmark's queries on Coffer.
 *
 * Coffer's C API has no query language yet, so the equality query walks the
 * index with coffer_index_find() and the filter and prefix queries scan the
 * class with coffer_class_iterate() + coffer_object_get_value(). Once the
 * query API exists, these three functions switch to it (and coffer_bench_plan()
 * stops labelling them); nothing else in the harness changes.
 */
#include <string.h>

#include "coffer_engine.h"

const char *coffer_bench_plan(bench_op op)
{
    switch (op) {
    case BENCH_OP_QUERY_INDEXED_EQ: return "index walk via coffer_index_find";
    case BENCH_OP_SCAN_FILTER: return "scan via C API";
    case BENCH_OP_QUERY_PREFIX: return "scan via C API";
    default: return NULL;
    }
}

/* Counts the objects an iterator yields, then frees it. */
static int drain(coffer_iter *it, uint64_t *count)
{
    coffer_object *obj;
    coffer_status st;
    while ((st = coffer_iter_next(it, &obj)) == COFFER_OK)
        ++*count;
    coffer_iter_free(it);
    return st == COFFER_DONE ? 0 : coffer_bench_fail("coffer_iter_next", st);
}

int coffer_bench_query_indexed_eq(void *state, const bench_workload *w, uint64_t *check)
{
    coffer_bench *b = state;
    coffer_txn *txn;
    if (coffer_bench_begin(b, COFFER_TXN_READ, &txn))
        return -1;
    for (uint64_t q = 0; q < w->queries; q++) {
        coffer_value group = coffer_value_int(bench_query_group(w, q));
        coffer_iter *it;
        coffer_status st = coffer_index_find(txn, b->cls, PROP_GROUP, &group, &it);
        if (st != COFFER_OK) {
            coffer_txn_free(txn);
            return coffer_bench_fail("coffer_index_find", st);
        }
        if (drain(it, check)) {
            coffer_txn_free(txn);
            return -1;
        }
    }
    coffer_txn_free(txn);
    return 0;
}

/* One pass over the class, reading property `prop` of every object and
 * counting those `match` accepts. */
typedef int (*match_fn)(const coffer_value *v, const void *arg);

static int scan(coffer_bench *b, coffer_txn *txn, coffer_property_id prop, match_fn match, const void *arg,
                uint64_t *count)
{
    coffer_iter *it;
    coffer_object *obj;
    coffer_status st = coffer_class_iterate(txn, b->cls, &it);
    if (st != COFFER_OK)
        return coffer_bench_fail("coffer_class_iterate", st);
    while ((st = coffer_iter_next(it, &obj)) == COFFER_OK) {
        coffer_value v;
        if ((st = coffer_object_get_value(obj, prop, &v)) != COFFER_OK) {
            coffer_iter_free(it);
            return coffer_bench_fail("coffer_object_get_value", st);
        }
        *count += (uint64_t)match(&v, arg);
    }
    coffer_iter_free(it);
    return st == COFFER_DONE ? 0 : coffer_bench_fail("coffer_iter_next", st);
}

static int greater_than(const coffer_value *v, const void *arg)
{
    return v->type == COFFER_TYPE_INT && v->u.integer > *(const int64_t *)arg;
}

static int starts_with(const coffer_value *v, const void *arg)
{
    return v->type == COFFER_TYPE_STRING && bench_has_prefix(v->u.string.data, v->u.string.size, arg);
}

/* Runs `count` scans with the argument `make_arg` gives for each. */
static int scans(void *state, uint64_t count, coffer_property_id prop, match_fn match,
                 void (*make_arg)(const bench_workload *w, uint64_t s, void *arg), const bench_workload *w,
                 uint64_t *check)
{
    coffer_bench *b = state;
    coffer_txn *txn;
    if (coffer_bench_begin(b, COFFER_TXN_READ, &txn))
        return -1;
    for (uint64_t s = 0; s < count; s++) {
        union { int64_t threshold; char prefix[BENCH_PREFIX_LEN + 1]; } arg;
        make_arg(w, s, &arg);
        if (scan(b, txn, prop, match, &arg, check)) {
            coffer_txn_free(txn);
            return -1;
        }
    }
    coffer_txn_free(txn);
    return 0;
}

static void threshold_arg(const bench_workload *w, uint64_t s, void *arg)
{
    *(int64_t *)arg = bench_scan_threshold(w, s);
}

static void prefix_arg(const bench_workload *w, uint64_t q, void *arg)
{
    bench_query_prefix(w, q, arg);
}

int coffer_bench_scan_filter(void *state, const bench_workload *w, uint64_t *check)
{
    return scans(state, w->scans, PROP_I64, greater_than, threshold_arg, w, check);
}

int coffer_bench_query_prefix(void *state, const bench_workload *w, uint64_t *check)
{
    return scans(state, w->prefix_queries, PROP_NAME, starts_with, prefix_arg, w, check);
}
