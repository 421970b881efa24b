/* cluster_store — the object store interface (object_store.h) on file
 * format 5, where objects sit in clusters (storage/cluster.h) kept open by
 * the transaction (storage/cluster_cache.h). object_store.c hands a call
 * here when the file is clustered; the contracts are object_store.h's. */
#ifndef COFFER_CLUSTER_STORE_H
#define COFFER_CLUSTER_STORE_H

#include "storage/object_store.h"

coffer_status cf_cstore_get(coffer_txn *txn, coffer_class_id cls, coffer_object_key key, cf_row *row);
coffer_status cf_cstore_put(coffer_txn *txn, coffer_class_id cls, coffer_object_key key, const coffer_value *slots,
                            uint16_t ncols);
coffer_status cf_cstore_patch(coffer_txn *txn, coffer_class_id cls, coffer_object_key key, const uint16_t *cols,
                              const coffer_value *vals, size_t n);
coffer_status cf_cstore_delete(coffer_txn *txn, coffer_class_id cls, coffer_object_key key);
coffer_status cf_cstore_clear(coffer_txn *txn, coffer_class_id cls);
coffer_status cf_cstore_count(coffer_txn *txn, coffer_class_id cls, uint64_t *out);
coffer_status cf_cstore_seek(cf_object_cursor *c, coffer_object_key from, coffer_object_key *key, cf_row *row);
coffer_status cf_cstore_next(cf_object_cursor *c, coffer_object_key *key, cf_row *row);
coffer_status cf_cstore_scan(coffer_txn *txn, coffer_class_id cls, const uint16_t *columns, const coffer_type *types,
                             size_t n, coffer_value *values, cf_scan_fn fn, cf_batch_fn batch_fn, void *ctx);

/* The highest key stored in LMDB for class `cls` (*found 0 when none), for
 * the object-key counter. */
coffer_status cf_cstore_last_key(coffer_txn *txn, coffer_class_id cls, coffer_object_key *last, int *found);

#endif
