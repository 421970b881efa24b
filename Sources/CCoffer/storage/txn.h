/* txn — read and write transactions, snapshots, and sealed storage access
 * (every value written to LMDB goes through here). */
#ifndef COFFER_TXN_H
#define COFFER_TXN_H

#include "storage/handles.h"

/* Checks that `txn` is a live transaction (and a write one if `write`). */
coffer_status cf_txn_check(const coffer_txn *txn, int write);

/* A scratch buffer of at least `n` bytes owned by the transaction, valid
 * until the next call. */
coffer_status cf_txn_scratch(coffer_txn *txn, size_t n, uint8_t **out);

/* Reads the value of `key` in sub-database `number` (handle `dbi`). For an
 * encrypted file the value is opened into *buf (grown as needed; the caller
 * owns it) and `what` names it in an integrity error; in a plain file with
 * checksums, its checksum is checked in place (COFFER_ERR_CORRUPTED naming
 * `what` when it does not match). COFFER_ERR_NOT_FOUND
 * without a message when the key is absent. */
coffer_status cf_store_get(coffer_txn *txn, MDB_dbi dbi, uint32_t number, const uint8_t *key, size_t klen,
                           const uint8_t **data, size_t *len, uint8_t **buf, size_t *cap, const char *what);

/* Opens a value read by a cursor (same rules as cf_store_get). */
coffer_status cf_store_open(coffer_txn *txn, uint32_t number, const MDB_val *k, const MDB_val *v,
                            const uint8_t **data, size_t *len, uint8_t **buf, size_t *cap, const char *what);

/* Writes `len` bytes of `plain` as the value of `key`, sealed when the file
 * is encrypted, followed by its checksum in a plain file with checksums. `flags` are mdb_put flags (MDB_APPEND, MDB_NOOVERWRITE). */
coffer_status cf_store_put(coffer_txn *txn, MDB_dbi dbi, uint32_t number, const uint8_t *key, size_t klen,
                           const uint8_t *plain, size_t len, unsigned flags, const char *what);

/* The bytes a stored value adds to its plain bytes: its seal in an
 * encrypted file, its checksum in a plain file with checksums, else 0. */
size_t cf_store_overhead(const coffer_db *db);

/* Writes `len` bytes of `plain`, stored under `key` in sub-database
 * `number`, into out[0 .. len + cf_store_overhead) as cf_store_put stores
 * them: sealed or followed by their checksum, bound to that place. */
void cf_store_wrap(const coffer_db *db, uint32_t number, const uint8_t *key, size_t klen, uint8_t *out,
                   const uint8_t *plain, size_t len);

/* Turns an LMDB failure inside a write into a status; map-full failures
 * doom the transaction (only abort remains). */
coffer_status cf_txn_write_error(coffer_txn *txn, int rc, const char *what);

/* Allocates the per-class state and cursor slots of a transaction. */
coffer_status cf_txn_alloc_state(coffer_txn *txn, size_t nclasses);

/* The transaction's cursor on the index sub-database of class `cls`, opened
 * on first use and closed when the transaction ends. */
coffer_status cf_txn_index_cursor(coffer_txn *txn, coffer_class_id cls, MDB_cursor **out);

/* Closes every cursor of the transaction: none may outlive the LMDB txn. */
void cf_txn_close_cursors(coffer_txn *txn);

/* Writes what a layer above deferred to the commit (txn->deferred), before
 * a transaction is committed; a failure leaves only abort. */
coffer_status cf_txn_flush_deferred(coffer_txn *txn);

/* Frees the object handles, iterators, state and scratch memory of an ended
 * transaction (coffer_txn_free does this, and so does opening, whose
 * transaction is internal). */
void cf_txn_free_handles(coffer_txn *txn);

/* Ends every transaction of a closing database. */
void cf_txn_abort_all(coffer_db *db);

/* Frees a closed database's memory once no transaction refers to it. */
void cf_db_destroy(coffer_db *db);

/* Object-key state of class `cls` in a write transaction. */
coffer_status cf_txn_class_state(coffer_txn *txn, coffer_class_id cls, cf_class_state **out);

/* A new collection id (the counter is saved at commit). */
coffer_status cf_txn_next_collection_id(coffer_txn *txn, uint64_t *out);

/* COFFER_ERR_LIMIT if a commit now would make more versions live than the
 * handle's limit (versions.c). */
coffer_status cf_check_active_versions(coffer_db *db);

/* Calls `fn` once per reader slot in use by any process of `env`: its pid,
 * thread, and the version its read transaction reads (0 when the slot has
 * no transaction open). Returns mdb_reader_list's result (< 0 on failure). */
typedef void (*cf_reader_fn)(int64_t pid, uint64_t thread, uint64_t version, void *ctx);
int cf_each_reader(MDB_env *env, cf_reader_fn fn, void *ctx);

/* Meta keys: "k" + table (next object key). */
size_t cf_meta_next_key(uint32_t table, uint8_t out[5]);

#endif
