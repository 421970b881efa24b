/* index_pending — the index entries a write transaction adds, kept in
 * memory per class and column and written to LMDB in key order: when the
 * transaction commits, or as soon as anything reads or removes entries of
 * that column (the functions of storage/index.h call cf_index_pending_flush
 * first), so that every read sees them.
 *
 * Written in order, entries that sort after every stored one are appended
 * (MDB_APPEND), and LMDB fills its leaf pages to the brim when keys come in
 * order at the end of a tree; added one by one as objects are written, the
 * entries of several columns interleave (each column's entries are inserted
 * before the next column's), and LMDB leaves a page it splits half full
 * (docs/PERFORMANCE.md, "File size"). The entries stored are the same bytes
 * (docs/FORMAT.md, "Index entries"): only their pages are fuller.
 *
 * In an encrypted file of format 6 the entries go into the class's sealed
 * tree (storage/index_tree.h) as one sorted run (cf_itree_insert_run: one
 * descent per leaf reached, not per entry), where a leaf that takes an
 * entry at its end splits off only a quarter of a node. Only the write transactions
 * begun by coffer_txn_begin keep entries here; every other transaction
 * writes them at once. */
#ifndef COFFER_INDEX_PENDING_H
#define COFFER_INDEX_PENDING_H

#include "storage/handles.h"

/* A column's pending entries are written early, sorted, once they take
 * this many bytes. */
#define CF_INDEX_PENDING_MAX_BYTES (32u * 1024u * 1024u)
/* A column with fewer entries pending than this writes them as they came,
 * without sorting (a transaction of a few objects). */
#define CF_INDEX_PENDING_FEW 16

/* Whether cf_index_add keeps entries of `txn` pending. */
int cf_index_pending_enabled(const coffer_txn *txn);

/* Keeps entry e[0..len) (column ‖ encoded value ‖ object key) of class
 * `cls` to be written later; the bytes are copied. COFFER_ERR_NO_MEMORY, or
 * the error of an early write when the column's entries reach
 * CF_INDEX_PENDING_MAX_BYTES. */
coffer_status cf_index_pending_add(coffer_txn *txn, coffer_class_id cls, const uint8_t *e, size_t len);

/* Writes the pending entries of class `cls` in column `column` (every
 * column when `column` is negative) to LMDB, in key order, and forgets
 * them. COFFER_OK at once when there are none. */
coffer_status cf_index_pending_flush(coffer_txn *txn, coffer_class_id cls, int column);

/* The column that index prefix p[0..plen) belongs to, or -1 when it is
 * shorter than a column number (a walk over every column). */
int cf_index_pending_column(const uint8_t *p, size_t plen);

/* Writes every pending entry of the transaction (before its commit). */
coffer_status cf_index_pending_flush_all(coffer_txn *txn);

/* Forgets the pending entries of class `cls` in column `column` (every
 * column when negative): the column was dropped or the class cleared. */
void cf_index_pending_discard(coffer_txn *txn, coffer_class_id cls, int column);

/* Frees what the transaction keeps (at its end; a commit flushes first). */
void cf_index_pending_free(coffer_txn *txn);

#endif
