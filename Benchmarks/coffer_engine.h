/*
 * coffer_engine.h — state shared by the Coffer engine's CRUD operations
 * (engine_coffer.c) and its queries (coffer_queries.c).
 */
#ifndef BENCH_COFFER_ENGINE_H
#define BENCH_COFFER_ENGINE_H

#include <coffer.h>

#include "engine.h"

/* Property ids: positions in the schema of engine_coffer.c. */
enum {
    PROP_ID, PROP_FLAG, PROP_I32, PROP_I64, PROP_F, PROP_D,
    PROP_TEXT, PROP_BLOB, PROP_GROUP, PROP_NAME, PROP_COUNT
};

/* Property ids of ListOwner, the class that holds the list. */
enum { OWNER_PROP_ITEMS };

typedef struct coffer_bench {
    coffer_db *db;
    char path[4096];
    int encrypted;
    unsigned format;             /* the file format of the store; 0: the default */
    coffer_class_id cls;         /* Entity */
    int has_list_class;          /* the schema has ListOwner */
    coffer_class_id owner_cls;
    int has_owner;               /* the first list append created it */
    coffer_object_key owner;
} coffer_bench;

/* Records a failed Coffer call with the library's message; returns -1. */
int coffer_bench_fail(const char *what, coffer_status st);

/* Begins a transaction, recording a failure. */
int coffer_bench_begin(coffer_bench *b, int mode, coffer_txn **txn);

/* Reopens the database with ListOwner added to the schema, if it is not
 * there yet. */
int coffer_bench_add_list_class(coffer_bench *b);

/* Commits and frees; a failed commit is recorded. */
int coffer_bench_commit(coffer_txn *txn);

/* The three queries, answered today by scanning through the C API. */
int coffer_bench_query_indexed_eq(void *state, const bench_workload *w, uint64_t *check);
int coffer_bench_scan_filter(void *state, const bench_workload *w, uint64_t *check);
int coffer_bench_scan_contains(void *state, const bench_workload *w, uint64_t *check);
int coffer_bench_query_prefix(void *state, const bench_workload *w, uint64_t *check);
const char *coffer_bench_plan(bench_op op);

/* The list operations (coffer_lists.c), and the schema they need, added
 * before they are timed. */
int coffer_bench_prepare(void *state, const bench_workload *w, bench_op op);
int coffer_bench_list_append(void *state, const bench_workload *w, uint64_t *check);
int coffer_bench_list_read(void *state, const bench_workload *w, uint64_t *check);

#endif
