/*
 * engine.h — what an engine implements to take part in the benchmark.
 *
 * An engine stores bench_entity objects with `id` as primary key and indexes
 * on `group` and `name`, and runs each operation as one timed call. Every
 * call reports a check value, compared with the oracle of workload.c:
 *
 *   insert_bulk             objects in the store afterwards (n)
 *   read_by_primary_key     bench_check_add() over every object read, ids in
 *                           bench_shuffled_ids() order
 *   update_all              objects found and updated (n); sets i64 and d to
 *                           bench_entity_updated_values(), ids in shuffled order
 *   read_all_in_order       bench_check_ordered() over all objects, in id order
 *   indexed_equality_query  sum of the counts of group == bench_query_group(q)
 *   unindexed_filter_scan   sum of the counts of i64 > bench_scan_threshold(s)
 *   string_prefix_query     sum of the counts of names starting with
 *                           bench_query_prefix(q)
 *   delete_all              objects in the store afterwards (0)
 *   single_object_write_transactions
 *                           objects in the store afterwards: one durable
 *                           commit per object, objects n .. n + writes - 1
 *   list_append             elements of the list afterwards (list_length):
 *                           one owner object's list of links to Entity
 *                           objects grows by one link per append, to the
 *                           object with id w->list_targets[i], found by
 *                           that id; one durable write transaction per
 *                           BENCH_LIST_BATCH appends
 *   list_read_in_order      bench_check_list() over the list in order, with
 *                           the id read from the object each link leads to
 *
 * A NULL operation means the engine cannot do it; it is left out of the
 * results. Functions return 0, or -1 after bench_fail() said what went wrong.
 */
#ifndef BENCH_ENGINE_H
#define BENCH_ENGINE_H

#include "workload.h"

typedef struct bench_engine bench_engine;

typedef int (*bench_op_fn)(void *state, const bench_workload *w, uint64_t *check);

struct bench_engine {
    /* The JSON key: "coffer", "coffer_encrypted", "lmdb", "sqlite",
     * "coffer_clusters", "coffer_clusters_encrypted". */
    const char *key;
    /* Opens a fresh store in the empty directory `dir`. */
    int (*open)(const char *dir, void **state);
    void (*close)(void *state);
    bench_op_fn ops[BENCH_OP_COUNT];
    /* Untimed setup before an operation, or NULL: what the operation needs
     * that must not slow the operations before it (the list's class, the
     * list table's foreign key). */
    int (*prepare)(void *state, const bench_workload *w, bench_op op);
    /* How the engine answers an operation when it is not the obvious way
     * (e.g. "scan via C API"), or NULL. Shown in the table and the JSON. */
    const char *(*plan)(bench_op op);
};

/* The ops-table entries of the operations that every engine runs, for an
 * engine whose static functions carry these names (lmdb, sqlite). */
#define BENCH_CORE_OPS                                    \
    [BENCH_OP_INSERT_BULK] = insert_bulk,                 \
    [BENCH_OP_READ_BY_PK] = read_by_pk,                   \
    [BENCH_OP_UPDATE_ALL] = update_all,                   \
    [BENCH_OP_READ_ALL] = read_all,                       \
    [BENCH_OP_QUERY_INDEXED_EQ] = query_indexed_eq,       \
    [BENCH_OP_SCAN_FILTER] = scan_filter,                 \
    [BENCH_OP_SCAN_CONTAINS] = scan_contains,             \
    [BENCH_OP_QUERY_PREFIX] = query_prefix,               \
    [BENCH_OP_DELETE_ALL] = delete_all,                   \
    [BENCH_OP_SINGLE_WRITES] = single_writes

extern const bench_engine bench_engine_coffer;
extern const bench_engine bench_engine_coffer_encrypted;
extern const bench_engine bench_engine_coffer_clusters; /* file format 5 (experimental) */
extern const bench_engine bench_engine_coffer_clusters_encrypted;
extern const bench_engine bench_engine_lmdb;
extern const bench_engine bench_engine_sqlite;

/* Records the reason of a failure (printf-style); returns -1. */
int bench_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The last reason recorded, or "". */
const char *bench_failure(void);

#endif
