/* index — primary-key and secondary index entries. An entry is a plain LMDB
 * key, column || encoded value || object key (u64 BE), with an empty value:
 * no MDB_DUPSORT, whose cursor deletes and MDB_CURRENT puts are unreliable
 * in the LMDB releases Coffer builds on. The objects of one value sit
 * together, in key order. Plain files encode values so that byte order is
 * value order; encrypted files put a keyed hash in place of the value. */
#ifndef COFFER_INDEX_H
#define COFFER_INDEX_H

#include "storage/handles.h"

/* Strings longer than this are indexed by this prefix plus a hash. */
#define CF_INDEX_STRING_PREFIX 400
#define CF_INDEX_PREFIX_MAX (2 + 1 + CF_INDEX_STRING_PREFIX + 1 + CF_INDEX_HASH_SIZE)

/* Writes the prefix (column || encoded value) of `v` for property `p` of
 * class `c` into `out` and returns its length. *hashed is set when it holds
 * a hash, so a match must be confirmed by comparing the stored value. */
size_t cf_index_prefix(const coffer_db *db, const cf_class *c, const cf_prop *p, const coffer_value *v,
                       uint8_t *out, int *hashed);

/* Writes the whole entry (prefix || object key `key`) into `out`, which
 * holds CF_INDEX_PREFIX_MAX + 8 bytes, and returns its length. */
size_t cf_index_entry(const coffer_db *db, const cf_class *c, const cf_prop *p, const coffer_value *v, coffer_object_key key,
                      uint8_t *out);

coffer_status cf_index_add(coffer_txn *txn, coffer_class_id cls, const cf_prop *p, const coffer_value *v,
                           coffer_object_key key);
coffer_status cf_index_remove(coffer_txn *txn, coffer_class_id cls, const cf_prop *p, const coffer_value *v,
                              coffer_object_key key);

/* The first object of class `cls` whose entry has `prefix` and whose key is
 * at least `from`: COFFER_OK with *found, or COFFER_DONE. Each call seeks
 * afresh, so writes between calls are harmless. */
coffer_status cf_index_seek(coffer_txn *txn, coffer_class_id cls, const uint8_t *prefix, size_t plen, coffer_object_key from,
                            coffer_object_key *found);

/* Called once per entry of cf_index_walk_entries with its bytes (prefix ‖
 * object key), valid until the transaction writes; anything but COFFER_OK
 * stops the walk (COFFER_DONE as a success). */
typedef coffer_status (*cf_index_bytes_fn)(void *ctx, const uint8_t *entry, size_t len);

/* Walks the entries of class `cls` that begin with `prefix`, in order. */
coffer_status cf_index_walk_entries(coffer_txn *txn, coffer_class_id cls, const uint8_t *prefix, size_t plen,
                                    cf_index_bytes_fn fn, void *ctx);

/* Removes every entry of `column` from the index of class `cls`. */
coffer_status cf_index_drop_column(coffer_txn *txn, coffer_class_id cls, uint16_t column);

/* Rewrites index sub-database `number` from the duplicate-sorted layout of
 * file format 2 (key column || value, one 8-byte duplicate per object) into
 * plain keys, through scratch sub-database `scratch`. Nothing to do when it
 * has plain keys already (formats 1 and 3). */
coffer_status cf_index_upgrade(MDB_txn *txn, const char *number, const char *scratch);

#endif
