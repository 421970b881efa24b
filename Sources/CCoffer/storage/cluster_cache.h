/* cluster_cache — the clusters a transaction has opened (file format 5).
 * A cluster read from LMDB is opened head first, then block by block as
 * its columns are read (each block's checksum checked or seal opened once,
 * storage/cluster_parts.h), and kept for the life of the transaction: in a
 * plain file it borrows LMDB's map, in an encrypted one the cache owns the
 * opened bytes.
 * A write transaction changes clusters here, decoded object by object, and
 * encodes and writes each changed cluster when appends fill it or when it
 * commits (cf_clusters_flush), again at the commit if it changed after it
 * was filled; an abort drops them with the rest. */
#ifndef COFFER_CLUSTER_CACHE_H
#define COFFER_CLUSTER_CACHE_H

#include "storage/cluster.h"
#include "storage/handles.h"

/* An object of a changed cluster: its new record (in the entry's arena),
 * or `stored` when it is unchanged in the cluster as stored, at position
 * `at` of the view (encoded again from there at the commit, never decoded
 * into a record), or `kept` when it is stored outside the cluster and
 * unchanged (with `rec` too when this transaction wrote it there, when
 * appends filled its cluster); `drop` when the record stored outside is to
 * be deleted or written again. */
typedef struct cf_cluster_slot {
    uint8_t *rec;
    uint32_t len, cap;
    uint16_t at;
    uint8_t kept, drop, stored;
} cf_cluster_slot;

/* Memory for the new records of a changed cluster: chunks that never move,
 * freed with the transaction's clusters. */
typedef struct cf_arena_chunk cf_arena_chunk;

/* An object stored outside its cluster, once opened. */
typedef struct cf_external {
    const uint8_t *data;
    size_t len;
    uint8_t *buf; /* encrypted files: the opened record */
    size_t cap;
    int opened;
} cf_external;

typedef struct cf_cluster_entry {
    coffer_class_id cls;
    uint64_t cid;          /* the objects whose keys k have k >> 8 == cid */
    cf_cluster view;       /* as stored (view.n == 0: not stored) */
    uint8_t *buf;          /* the opened head of an encrypted file, or NULL */
    uint8_t *copy;         /* a plain file's stored value, copied when the transaction writes clusters early */
    size_t cap;
    uint8_t *blocks;       /* the opened blocks of an encrypted file, or NULL */
    coffer_txn *txn;       /* opens the blocks */
    cf_cluster_slot *slots; /* changed: one per low byte; NULL while unchanged */
    cf_arena_chunk *arena;  /* the new records of `slots` */
    cf_external *external;  /* per low byte, made when one is first read */
    const uint8_t *stored;  /* the stored value (view.n > 0), as read */
    size_t stored_len;
    uint8_t **own_blocks;   /* per column: a block copied out of LMDB's map to take changed values, or NULL */
    uint8_t *patched;       /* per column: 1 when values changed in place in its block; NULL when none did */
    uint8_t all_open;       /* every block opened and checked (cf_clusters_set needs them) */
    uint32_t changes;       /* bumped by every change: positions held elsewhere expire */
    uint32_t written_at;    /* `changes` when it was written, once appends filled it */
    uint8_t written;        /* written to LMDB before the commit (as of written_at) */
    uint16_t apart_ncols;   /* the column blocks LMDB holds under keys of their own (cluster version 4) */
    /* Kept from an entry of an earlier write transaction (see below). */
    cf_cluster_slot *spare_slots;
    cf_arena_chunk *spare_chunk;
    struct cf_cluster_entry *next_spare;
} cf_cluster_entry;

/* Cluster `cid` of class `cls`: the cached one, else the one LMDB holds
 * (`stored` is its value when the caller already read it, else NULL). *out
 * is NULL when the cluster exists nowhere, unless `create` (a write), which
 * makes it. COFFER_ERR_CORRUPTED or COFFER_ERR_INTEGRITY naming the
 * cluster's objects when its bytes are damaged. */
coffer_status cf_clusters_find(coffer_txn *txn, coffer_class_id cls, uint64_t cid, const MDB_val *stored, int create,
                               cf_cluster_entry **out);

/* Makes cluster `e` changeable: each object stays where it is stored (in
 * the cluster or outside) until changed; then it is written at the commit.
 * Its blocks are opened and checked when an object is first set or
 * removed (all of them, which the commit encodes the cluster from) or a
 * value changed in place (that column's): a cluster whose values only
 * changed in place is written with its other parts copied as stored. */
coffer_status cf_clusters_change(coffer_txn *txn, cf_cluster_entry *e);

/* Sets (rec != NULL) or removes the object of low byte `low` in changed
 * cluster `e`; the record is copied. Setting the last object of a cluster
 * (low byte 255, an append that fills it) encodes and writes the cluster
 * at once, so that the commit has only the clusters changed after that to
 * write; an abort still drops it with LMDB's transaction. */
coffer_status cf_clusters_set(coffer_txn *txn, cf_cluster_entry *e, unsigned low, const uint8_t *rec, size_t len);

/* Changes columns cols[0..n) of the object of low byte `low` of cluster
 * `e` to vals[0..n) (encoded as cf_scalar_write does; type NULL = null) in
 * place, without a new record: in the cluster's opened column blocks when
 * the object is unchanged in the cluster as stored (a block that borrows
 * LMDB's map is copied once, then changed value by value; the commit
 * encodes the cluster from these blocks), or in its new record when this
 * transaction wrote one. Only a value of the same encoded size as the one
 * it replaces fits in place, or a null in a column block. The cluster is
 * made changeable first (cf_clusters_change). COFFER_DONE (no message),
 * with nothing changed, when some value does not fit: the caller writes
 * the object whole instead. */
coffer_status cf_clusters_patch(coffer_txn *txn, cf_cluster_entry *e, unsigned low, const uint16_t *cols,
                                const coffer_value *vals, size_t n);

/* The smallest cid at least `from` of a changed cluster of class `cls` (1),
 * or 0 when there is none. */
int cf_clusters_next_changed(const coffer_txn *txn, coffer_class_id cls, uint64_t from, uint64_t *cid);

/* Forgets every cluster of class `cls` (its table was emptied). */
void cf_clusters_drop_class(coffer_txn *txn, coffer_class_id cls);

/* The change to the number of objects of class `cls` not yet written. */
int64_t cf_clusters_count_change(const coffer_txn *txn, coffer_class_id cls);

/* Writes every changed cluster (deleting the emptied ones) and the object
 * counts of their classes: once per write transaction, before its commit. */
coffer_status cf_clusters_flush(coffer_txn *txn);

/* Frees the transaction's clusters (at its end). A write transaction's
 * cache is kept on its handle instead, for the next write transaction:
 * emptied, with the memory of at most CF_CLUSTER_POOL_ENTRIES entries
 * (their changed-slot tables, 4 KiB, and one 16 KiB chunk of records
 * each), its hash table and change lists while they stay under
 * CF_CLUSTER_POOL_TABLE slots and its encoder's plan under
 * CF_CLUSTER_POOL_ENCODER bytes: about 1.5 MiB at most. Larger parts are
 * released. A handle keeps one such cache; a second one (write
 * transactions of one handle that end together) is freed, and so is the
 * cache of a transaction not begun by coffer_txn_begin (those of opening
 * and migrating a file, whose handles may not last). */
#define CF_CLUSTER_POOL_ENTRIES 64
#define CF_CLUSTER_POOL_TABLE 1024
#define CF_CLUSTER_POOL_ENCODER (256u * 1024u)
void cf_clusters_free(coffer_txn *txn);

/* The number of entries the cache kept on handle `db` holds for reuse, or
 * -1 when it keeps none (for the tests; only while no write transaction
 * of the handle ends). */
int cf_clusters_pool_entries(coffer_db *db);

/* Frees the cache kept on handle `db` (when it is destroyed). */
void cf_clusters_pool_free(coffer_db *db);

/* ---- a position in a cluster ---------------------------------------------
 * Positions are what cf_cluster_entry_seek gives: the first object whose
 * key's low byte is at least `low`, or -1 when there is none. */
int cf_cluster_entry_seek(const cf_cluster_entry *e, unsigned low);
unsigned cf_cluster_entry_low(const cf_cluster_entry *e, int pos);
/* Points `row` at the object at `pos`; its values stay in the cache (an
 * object stored outside is read and kept there on first use). */
coffer_status cf_cluster_entry_row(coffer_txn *txn, cf_cluster_entry *e, int pos, cf_row *row);

/* Meta keys: "n" + table (number of objects of a class, file format 5). */
size_t cf_meta_object_count(uint32_t table, uint8_t out[5]);

/* The number of objects of table `table` as last committed. */
coffer_status cf_clusters_stored_count(coffer_txn *txn, uint32_t table, uint64_t *out);

/* Writes the number of objects of table `table`. */
coffer_status cf_clusters_write_count(coffer_txn *txn, uint32_t table, uint64_t count);

#endif
