/* state — what a synced file keeps for sync in its metadata (docs/FORMAT.md,
 * "Sync"): the client id, partition, clock and progress; the outbox of
 * changesets waiting for upload; and, per object, the merge state the rules
 * of docs/SYNC.md compare against (the creation stamp, per-property stamps,
 * list element ids in sequence order with their tombstones, set elements and
 * map entries with their stamps), plus the tombstones of deleted objects.
 * Object states are loaded into a per-transaction cache, changed there by
 * recording and integration, and written back by the commit hook before
 * LMDB's commit. */
#ifndef COFFER_SYNC_STATE_H
#define COFFER_SYNC_STATE_H

#include <stddef.h>
#include <stdint.h>

#include "crypto/crypto.h"
#include "storage/handles.h"
#include "sync/frames.h"

/* Commits `txn` when `st` is COFFER_OK, else aborts it; frees it either
 * way and returns the outcome. */
coffer_status cf_sync_txn_finish(coffer_txn *txn, coffer_status st);

/* Durable progress. */
typedef struct cf_sync_progress {
    uint64_t acked_client_version;  /* the service integrated every outbox changeset up to this */
    uint64_t server_version;        /* the last server changeset integrated */
    uint64_t clock;                 /* the hybrid logical clock's last value */
} cf_sync_progress;

typedef struct cf_sync_elem {
    cf_elem_id id;
    cf_stamp stamp; /* of the value */
    uint8_t erased;
    uint8_t *value; /* a ghost's: the encoded value (NULL: none kept) */
    size_t value_len;
} cf_sync_elem;

/* A set element (key: its encoded value) or map entry (key: the map key). */
typedef struct cf_sync_item {
    uint8_t *key;
    size_t key_len;
    uint8_t present;
    cf_stamp stamp;
    uint8_t *value; /* map: the encoded value last recorded (for local diffs) */
    size_t value_len;
} cf_sync_item;

typedef struct cf_sync_prop {
    char *name;
    cf_stamp stamp; /* last writer of the property's value */
    uint8_t *value; /* a ghost's: the encoded value (NULL: none kept) */
    size_t value_len;
    cf_sync_elem *elems;
    size_t nelems, elems_cap;
    cf_sync_item *items;
    size_t nitems, items_cap;
} cf_sync_prop;

typedef struct cf_sync_obj {
    uint32_t table;
    uint64_t key;
    uint8_t *pk; /* encoded primary key */
    size_t pk_len;
    cf_stamp created;
    cf_sync_prop *props;
    size_t nprops, props_cap;
    int dirty;
    int gone; /* deleted: its record is removed at flush */
} cf_sync_obj;

/* The objects' states a transaction loaded (a hash table on table and key). */
typedef struct cf_sync_cache {
    cf_sync_obj **slots;
    size_t cap, count;
} cf_sync_cache;

/* Whether the file of `txn` has a client id (*out all zero otherwise). */
coffer_status cf_sync_client_id(coffer_txn *txn, uint8_t out[CF_SYNC_ID_SIZE], int *has);
coffer_status cf_sync_set_identity(coffer_txn *txn, const uint8_t id[CF_SYNC_ID_SIZE], const char *partition);
/* cf_sync_client_id in a write transaction, claiming a bundle's identity: a
 * copy of a synced file (coffer_db_write_copy) keeps its progress with an
 * all-zero client id, and the first commit or sync open of each file made
 * from it gives that file a random id of its own, stored in `txn`; *claimed
 * is then 1. */
coffer_status cf_sync_client_id_claim(coffer_txn *txn, uint8_t out[CF_SYNC_ID_SIZE], int *has, int *claimed);
/* Removes the outbox and every object's merge state, tombstone and ghost
 * (a client reset that discards the file's synced state). */
coffer_status cf_sync_forget_state(coffer_txn *txn);
/* The number of outbox changesets the service has not acknowledged. */
coffer_status cf_sync_outbox_pending(coffer_txn *txn, uint64_t *count);
/* The stored partition (malloc'd), or NULL when none (COFFER_OK). */
coffer_status cf_sync_partition(coffer_txn *txn, char **out);

coffer_status cf_sync_progress_read(coffer_txn *txn, cf_sync_progress *out);
coffer_status cf_sync_progress_write(coffer_txn *txn, const cf_sync_progress *p);

/* The outbox: changesets by client version. */
coffer_status cf_sync_outbox_put(coffer_txn *txn, uint64_t version, const uint8_t *cs, size_t len);
/* Calls fn for each changeset with a version above `after`, in order, until
 * fn returns nonzero or they run out. The bytes are valid during the call. */
typedef int (*cf_outbox_fn)(void *ctx, uint64_t version, const uint8_t *cs, size_t len);
coffer_status cf_sync_outbox_each(coffer_txn *txn, uint64_t after, cf_outbox_fn fn, void *ctx);
/* Removes the changesets up to and including `version`. */
coffer_status cf_sync_outbox_trim(coffer_txn *txn, uint64_t version);

/* Object states. cf_sync_obj_get finds the state of object `key` of
 * `table` in the cache, loading it from the file; *out is NULL when the
 * object has none. cf_sync_obj_make makes an empty one (in the cache). */
coffer_status cf_sync_obj_get(coffer_txn *txn, cf_sync_cache *cache, uint32_t table, uint64_t key, cf_sync_obj **out);
coffer_status cf_sync_obj_make(cf_sync_cache *cache, uint32_t table, uint64_t key, cf_slice pk, cf_sync_obj **out);
/* The state of property `name`, made when absent. */
cf_sync_prop *cf_sync_prop_of(cf_sync_obj *o, const char *name);
cf_sync_elem *cf_sync_elem_insert(cf_sync_prop *p, size_t at);
cf_sync_item *cf_sync_item_find(cf_sync_prop *p, const uint8_t *key, size_t len, int make);
coffer_status cf_sync_item_set_value(cf_sync_item *it, cf_slice value);

/* Writes every dirty state of the cache (removing those of deleted objects). */
coffer_status cf_sync_cache_flush(coffer_txn *txn, cf_sync_cache *cache);
void cf_sync_cache_free(cf_sync_cache *cache);

/* Stamps as stored: clock (u64le), then client id. */
void cf_sync_put_stamp(cf_buf *b, const cf_stamp *s);
coffer_status cf_sync_get_stamp(cf_wreader *r, cf_stamp *s);
/* Frees an object state that is in no cache (a ghost). */
void cf_sync_obj_free(cf_sync_obj *o);
/* The metadata entry `key` (malloc'd into *out, *has 0 when absent); `what`
 * names it in errors. */
coffer_status cf_sync_meta_get(coffer_txn *txn, const uint8_t *key, size_t klen, uint8_t **out, size_t *len, int *has,
                               const char *what);

/* Tombstones: the delete stamp of (table, primary key). */
coffer_status cf_sync_tombstone_get(coffer_txn *txn, uint32_t table, cf_slice pk, cf_stamp *out, int *has);
coffer_status cf_sync_tombstone_put(coffer_txn *txn, uint32_t table, cf_slice pk, const cf_stamp *stamp);
coffer_status cf_sync_tombstone_del(coffer_txn *txn, uint32_t table, cf_slice pk);

#define CF_SYNC_TOMB_KEY_SIZE (6 + CF_INDEX_HASH_SIZE)
/* The metadata key of the tombstone of (table, primary key) in a file with
 * `keys` (NULL: plain); a ghost's key is the same with `kind` 'g' for 't'. */
void cf_sync_tombstone_key(const cf_keys *keys, uint32_t table, cf_slice pk, uint8_t k[CF_SYNC_TOMB_KEY_SIZE]);
void cf_sync_pk_key(const cf_keys *keys, uint8_t kind, uint32_t table, cf_slice pk, uint8_t k[CF_SYNC_TOMB_KEY_SIZE]);
/* Writes the bytes of `b` as the entry of `kind` ('t' a tombstone, 'g' a
 * ghost) of (table, primary key), then frees them (a failed buffer is out
 * of memory); removes that entry (absent is no error). `noun` names the
 * entry in errors ("a sync tombstone"). */
coffer_status cf_sync_pk_put(coffer_txn *txn, uint8_t kind, uint32_t table, cf_slice pk, cf_buf *b, const char *noun);
coffer_status cf_sync_pk_del(coffer_txn *txn, uint8_t kind, uint32_t table, cf_slice pk, const char *noun);

/* How a write-copy (copy/) treats metadata entry `key` = `value`. A copy is
 * a new client that starts from the same progress: its outbox is left out
 * (the original uploads those changesets), its client id is all zero (in
 * `newid`: each file made from the copy claims its own, cf_sync_client_id_claim),
 * and tombstone keys are hashed again under the copy's keys `to`
 * (into `newkey`, `*newklen`). */
enum { CF_SYNC_COPY_AS_IS, CF_SYNC_COPY_SKIP, CF_SYNC_COPY_NEW_ID, CF_SYNC_COPY_NEW_KEY };
int cf_sync_copy_entry(const cf_keys *to, const uint8_t *key, size_t klen, const uint8_t *value, size_t vlen,
                       uint8_t *newkey, size_t *newklen, uint8_t newid[CF_SYNC_ID_SIZE]);

#endif
