/* changelog — what each write transaction changed: objects inserted, deleted
 * and modified (with the columns), and the operations on lists, sets and maps.
 * Objects and collections report into the transaction as they write; the
 * commit folds the reports and writes them, in the same LMDB transaction, as
 * one entry under metadata key "L" + version (docs/FORMAT.md). The live
 * database (changes/) and sync read the entries back; entries no reader of
 * any process can still need are trimmed by later commits. */
#ifndef COFFER_CHANGELOG_H
#define COFFER_CHANGELOG_H

#include <stddef.h>
#include <stdint.h>

#include "coffer.h"

struct coffer_txn;

/* What happened to one object (flags; an entry holds one of them after folding). */
enum {
    CF_LOG_INSERT = 1,
    CF_LOG_DELETE = 2,
    CF_LOG_MODIFY = 4,
    CF_LOG_CLEAR = 8 /* every object of the table was deleted (key unused) */
};

/* Operations on a collection, in the order they were made. Positions are
 * those at the time of the operation. Lists report every operation; sets and
 * maps report only CLEAR (their other writes show as a modification of the
 * owner's property, and observers compare their contents). */
enum {
    CF_COLL_INSERT = 1, /* a: position */
    CF_COLL_ERASE = 2,  /* a: position */
    CF_COLL_SET = 3,    /* a: position (element replaced or its value changed) */
    CF_COLL_MOVE = 4,   /* a: from, b: to */
    CF_COLL_SWAP = 5,   /* a, b: the two positions */
    CF_COLL_CLEAR = 6   /* a: the size before */
};

/* One object's change. `columns` lists the modified columns (sorted, each
 * once) for CF_LOG_MODIFY; it points into the entry. */
typedef struct cf_log_object {
    uint32_t table;
    uint32_t kind;
    uint64_t key;
    const uint32_t *columns;
    size_t ncolumns;
} cf_log_object;

/* One collection operation. The collection is the property `column` of
 * object `key` of `table`; `coll_id` is nonzero for a collection nested in a
 * mixed value (then it names the nested collection). */
typedef struct cf_log_coll_op {
    uint32_t table;
    uint32_t column;
    uint64_t key;
    uint64_t coll_id;
    uint32_t op;
    uint64_t a, b;
} cf_log_coll_op;

/* A decoded entry: the changes one commit made. Objects are sorted by
 * (table, key); operations are in the order they were made. Owned by the
 * caller: free with cf_log_entry_free(). */
typedef struct cf_log_entry {
    uint64_t version;
    int origin; /* COFFER_ORIGIN_* */
    cf_log_object *objects;
    size_t nobjects;
    cf_log_coll_op *ops;
    size_t nops;
    uint32_t *columns; /* storage of the objects' column lists */
} cf_log_entry;

/* The changes a write transaction has made so far (owned by the
 * transaction; zero-initialised). */
typedef struct cf_changelog cf_changelog;

/* Reports a change of object `key` of `table` in write transaction `txn`:
 * kind CF_LOG_INSERT, CF_LOG_DELETE, CF_LOG_MODIFY (of `column`) or
 * CF_LOG_CLEAR. COFFER_ERR_NO_MEMORY dooms the transaction (only abort
 * remains), so that no commit goes without its entry. */
coffer_status cf_log_object_change(struct coffer_txn *txn, uint32_t table, uint64_t key, uint32_t kind, uint32_t column);

/* Reports a modification of the columns in `mask` (bit c: column c, each
 * below 64) of object `key` of `table`: the same as one
 * cf_log_object_change(CF_LOG_MODIFY) per column, in one call. */
coffer_status cf_log_object_modified(struct coffer_txn *txn, uint32_t table, uint64_t key, uint64_t mask);

/* Reports an operation on a collection (fields as in cf_log_coll_op). */
coffer_status cf_log_collection_op(struct coffer_txn *txn, uint32_t table, uint32_t column, uint64_t key, uint64_t coll_id,
                                   uint32_t op, uint64_t a, uint64_t b);

/* At commit, before the LMDB commit: folds what was reported (an object
 * inserted and deleted in the transaction never existed; an inserted one is
 * not also modified; a deleted one is not also modified), writes the entry
 * under the transaction's version when anything changed, and deletes the
 * entries no open read transaction of any process still needs. */
coffer_status cf_log_commit(struct coffer_txn *txn);

/* Frees what a transaction reported (at its end, committed or not). */
void cf_log_discard(struct coffer_txn *txn);

/* Reads the entry of `version` in `txn` into `*out`. COFFER_ERR_NOT_FOUND
 * (without a message) when there is none: the commit wrote nothing, was made
 * without a log (a schema change or an older library), or was trimmed;
 * COFFER_ERR_CORRUPTED when it does not decode. */
coffer_status cf_log_read(struct coffer_txn *txn, uint64_t version, cf_log_entry *out);

/* The oldest version that still has an entry in `txn`'s snapshot, or 0. */
coffer_status cf_log_oldest(struct coffer_txn *txn, uint64_t *out);

void cf_log_entry_free(cf_log_entry *entry);

/* The number of entries the log holds in the snapshot of `txn` and their
 * stored bytes (keys and values), for coffer_db_stats(). */
coffer_status cf_log_size(struct coffer_txn *txn, uint64_t *entries, uint64_t *bytes);

#endif
