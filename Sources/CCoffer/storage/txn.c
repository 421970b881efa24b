/* txn — transactions over the shared LMDB environment, and sealing. */
#define _GNU_SOURCE
#include "storage/txn.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "storage/changelog.h"
#include "storage/checksums.h"
#include "storage/cluster_cache.h"
#include "storage/cluster_store.h"
#include "storage/index_pending.h"
#include "storage/index_tree.h"
#include "storage/object_store.h"
#include "storage/pk_map.h"
#include "storage/reserve.h"
#include "util/error.h"

/* Additional data of a sealed value: file id, sub-database, key. A value
 * copied to another key, sub-database or file fails to open. */
static size_t make_ad(const coffer_db *db, uint32_t number, const void *key, size_t klen, uint8_t *ad)
{
    memcpy(ad, db->file_id, CF_FILE_ID_SIZE);
    cf_put_be32(ad + CF_FILE_ID_SIZE, number);
    memcpy(ad + CF_FILE_ID_SIZE + 4, key, klen);
    return CF_FILE_ID_SIZE + 4 + klen;
}

#define AD_MAX (CF_FILE_ID_SIZE + 4 + 512)

coffer_status cf_txn_check(const coffer_txn *txn, int write)
{
    if (!txn || txn->magic != CF_TXN_MAGIC)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "transaction handle is NULL or not a transaction");
    if (!txn->active)
        return cf_error(COFFER_ERR_MISUSE, txn->db->closed ? "the database of this transaction was closed"
                                                           : "the transaction has already ended");
    if (write && !txn->write)
        return cf_error(COFFER_ERR_NOT_IN_WRITE, "cannot modify objects outside of a write transaction");
    if (write && txn->failed)
        return cf_error(COFFER_ERR_MISUSE, "an earlier write of this transaction failed; it can only be aborted");
    return COFFER_OK;
}

coffer_status cf_txn_scratch(coffer_txn *txn, size_t n, uint8_t **out)
{
    if (n > txn->scratch_cap) {
        size_t cap = txn->scratch_cap ? txn->scratch_cap : 256;
        while (cap < n)
            cap *= 2;
        uint8_t *p = realloc(txn->scratch, cap);
        if (!p)
            return cf_error(COFFER_ERR_NO_MEMORY, "out of memory (%zu bytes)", n);
        txn->scratch = p;
        txn->scratch_cap = cap;
    }
    *out = txn->scratch;
    return COFFER_OK;
}

static coffer_status grow(uint8_t **buf, size_t *cap, size_t n)
{
    if (n <= *cap)
        return COFFER_OK;
    size_t c = *cap ? *cap : 128;
    while (c < n)
        c *= 2;
    uint8_t *p = realloc(*buf, c);
    if (!p)
        return cf_error(COFFER_ERR_NO_MEMORY, "out of memory (%zu bytes)", n);
    *buf = p;
    *cap = c;
    return COFFER_OK;
}

coffer_status cf_store_open(coffer_txn *txn, uint32_t number, const MDB_val *k, const MDB_val *v,
                            const uint8_t **data, size_t *len, uint8_t **buf, size_t *cap, const char *what)
{
    const coffer_db *db = txn->db;
    if (!db->keys) {
        if (db->checksums)
            return cf_checksum_open(number, k, v, data, len, what);
        *data = v->mv_data;
        *len = v->mv_size;
        return COFFER_OK;
    }
    if (v->mv_size < CF_SEAL_OVERHEAD)
        return cf_error(COFFER_ERR_INTEGRITY, "%s failed authentication: it is too short to be sealed", what);
    size_t n = v->mv_size - CF_SEAL_OVERHEAD;
    coffer_status st = grow(buf, cap, n ? n : 1);
    if (st != COFFER_OK)
        return st;
    uint8_t ad[AD_MAX];
    size_t adlen = make_ad(db, number, k->mv_data, k->mv_size, ad);
    st = cf_unseal(db->keys, *buf, v->mv_data, v->mv_size, ad, adlen, what);
    if (st != COFFER_OK)
        return st;
    *data = *buf;
    *len = n;
    return COFFER_OK;
}

coffer_status cf_store_get(coffer_txn *txn, MDB_dbi dbi, uint32_t number, const uint8_t *key, size_t klen,
                           const uint8_t **data, size_t *len, uint8_t **buf, size_t *cap, const char *what)
{
    MDB_val k = {klen, (void *)key}, v;
    int rc = mdb_get(txn->mdb, dbi, &k, &v);
    if (rc == MDB_NOTFOUND)
        return COFFER_ERR_NOT_FOUND;
    if (rc != 0)
        return cf_error_mdb(rc, what);
    return cf_store_open(txn, number, &k, &v, data, len, buf, cap, what);
}

coffer_status cf_txn_write_error(coffer_txn *txn, int rc, const char *what)
{
    if (rc == MDB_MAP_FULL) {
        txn->failed = 1;
        return cf_env_map_full(txn->db->env, what);
    }
    /* LMDB leaves a write transaction unusable after any failure but these. */
    if (rc != MDB_KEYEXIST && rc != MDB_NOTFOUND && rc != MDB_BAD_VALSIZE && rc != EINVAL)
        txn->failed = 1;
    return cf_error_write(txn->db->env->mdb, rc, what); /* a put may write: LMDB spills pages */
}

size_t cf_store_overhead(const coffer_db *db)
{
    return db->keys ? CF_SEAL_OVERHEAD : db->checksums ? CF_CHECKSUM_SIZE : 0;
}

void cf_store_wrap(const coffer_db *db, uint32_t number, const uint8_t *key, size_t klen, uint8_t *out,
                   const uint8_t *plain, size_t len)
{
    if (db->keys) {
        uint8_t ad[AD_MAX];
        size_t adlen = make_ad(db, number, key, klen, ad);
        cf_seal(db->keys, out, plain, len, ad, adlen);
        return;
    }
    if (len && out != plain)
        memmove(out, plain, len);
    if (db->checksums)
        cf_put_le(out + len, cf_checksum(number, key, klen, out, len), CF_CHECKSUM_SIZE);
}

coffer_status cf_store_put(coffer_txn *txn, MDB_dbi dbi, uint32_t number, const uint8_t *key, size_t klen,
                           const uint8_t *plain, size_t len, unsigned flags, const char *what)
{
    MDB_val k = {klen, (void *)key};
    MDB_val v = {len + cf_store_overhead(txn->db), NULL};
    int rc = mdb_put(txn->mdb, dbi, &k, &v, flags | MDB_RESERVE);
    if (rc != 0)
        return cf_txn_write_error(txn, rc, what);
    cf_store_wrap(txn->db, number, key, klen, v.mv_data, plain, len);
    return COFFER_OK;
}

size_t cf_meta_next_key(uint32_t table, uint8_t out[5])
{
    out[0] = 'k';
    cf_put_be32(out + 1, table);
    return 5;
}

/* A counter of the meta sub-database under `key`; 1 when it was never stored. */
static coffer_status read_counter(coffer_txn *txn, const uint8_t *key, size_t klen, const char *what, uint64_t *out)
{
    const uint8_t *data;
    size_t len;
    uint8_t *buf = NULL;
    size_t cap = 0;
    *out = 1;
    coffer_status st = cf_store_get(txn, txn->db->meta_dbi, CF_META_DBI, key, klen, &data, &len, &buf, &cap, what);
    if (st == COFFER_OK && len == 8)
        *out = cf_get_be64(data);
    free(buf);
    return st == COFFER_ERR_NOT_FOUND ? COFFER_OK : st;
}

/* The highest key of class `cls` stored in file format 4 (*found 0 when
 * the class is empty). */
static coffer_status last_record_key(coffer_txn *txn, coffer_class_id cls, uint64_t *last, int *found)
{
    MDB_cursor *cur;
    int rc = mdb_cursor_open(txn->mdb, txn->db->object_dbis[cls], &cur);
    if (rc != 0)
        return cf_error_mdb(rc, "cannot open a cursor");
    MDB_val k, v;
    *found = mdb_cursor_get(cur, &k, &v, MDB_LAST) == 0 && k.mv_size == 8;
    if (*found)
        *last = cf_get_be64(k.mv_data);
    mdb_cursor_close(cur);
    return COFFER_OK;
}

/* The next key is the larger of the stored counter and the last key + 1, so
 * keys are never reused, not even after the newest object was deleted. */
coffer_status cf_txn_class_state(coffer_txn *txn, coffer_class_id cls, cf_class_state **out)
{
    cf_class_state *s = &txn->state[cls];
    if (!s->loaded) {
        coffer_db *db = txn->db;
        const cf_class *c = &db->schema->classes[cls];
        uint64_t next;
        uint8_t mk[5];
        size_t mklen = cf_meta_next_key(c->table, mk);
        coffer_status st = read_counter(txn, mk, mklen, "the object-key counter", &next);
        if (st != COFFER_OK)
            return st;
        uint64_t last;
        int found;
        st = db->clustered ? cf_cstore_last_key(txn, cls, &last, &found) : last_record_key(txn, cls, &last, &found);
        if (st != COFFER_OK)
            return st;
        if (found && last + 1 > next)
            next = last + 1;
        s->next_key = next;
        s->loaded = 1;
    }
    *out = s;
    return COFFER_OK;
}

static coffer_status save_class_states(coffer_txn *txn)
{
    coffer_db *db = txn->db;
    for (size_t i = 0; i < db->schema->nclasses; i++) {
        if (!txn->state[i].dirty)
            continue;
        uint8_t mk[5], v[8];
        size_t mklen = cf_meta_next_key(db->schema->classes[i].table, mk);
        cf_put_be64(v, txn->state[i].next_key);
        coffer_status st = cf_store_put(txn, db->meta_dbi, CF_META_DBI, mk, mklen, v, 8, 0, "cannot commit");
        if (st != COFFER_OK)
            return st;
    }
    return COFFER_OK;
}

COFFER_API coffer_status coffer_txn_begin(coffer_db *db, int mode, coffer_txn **out)
{
    if (!out)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "coffer_txn_begin: out is NULL");
    *out = NULL;
    if (!db || db->magic != CF_DB_MAGIC)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "coffer_txn_begin: database handle is NULL or not a database");
    if (db->closed)
        return cf_error(COFFER_ERR_MISUSE, "the database is closed");
    if (mode != COFFER_TXN_READ && mode != COFFER_TXN_WRITE)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "transaction mode %d is neither COFFER_TXN_READ nor COFFER_TXN_WRITE", mode);
    if (mode == COFFER_TXN_WRITE && db->read_only)
        return cf_error(COFFER_ERR_READ_ONLY, "cannot begin a write transaction: the database was opened read-only");
    if (db->in_migration)
        return cf_error(COFFER_ERR_MISUSE, "cannot begin a transaction on a database lent to a migration; use its transactions");
    if (mode == COFFER_TXN_WRITE && db->max_active_versions) {
        coffer_status vst = cf_check_active_versions(db);
        if (vst != COFFER_OK)
            return vst;
    }
    coffer_txn *txn = calloc(1, sizeof *txn);
    if (!txn)
        return cf_error(COFFER_ERR_NO_MEMORY, "out of memory beginning a transaction");
    txn->db = db;
    if (cf_txn_alloc_state(txn, db->schema->nclasses) != COFFER_OK) {
        free(txn);
        return COFFER_ERR_NO_MEMORY;
    }
    coffer_status st = cf_env_txn_begin(db->env, mode == COFFER_TXN_WRITE, &txn->mdb);
    if (st != COFFER_OK) {
        free(txn->state);
        free(txn->index_cursors);
        free(txn);
        return st;
    }
    txn->magic = CF_TXN_MAGIC;
    txn->db = db;
    txn->write = mode == COFFER_TXN_WRITE;
    txn->reuse_clusters = txn->write; /* the handle outlives it (storage/cluster_cache.h) */
    txn->defer_index = txn->write;    /* its commit writes them (storage/index_pending.h) */
    txn->active = 1;
    txn->thread = pthread_self();
    pthread_mutex_lock(&db->lock);
    txn->next_in_db = db->txns;
    db->txns = txn;
    db->ntxns++;
    pthread_mutex_unlock(&db->lock);
    *out = txn;
    return COFFER_OK;
}

void cf_txn_close_cursors(coffer_txn *txn)
{
    for (cf_pooled *h = txn->colls.all; h; h = h->next) {
        cf_coll *c = (cf_coll *)h;
        if (c->cursor)
            mdb_cursor_close(c->cursor);
        c->cursor = NULL;
        c->cursor_valid = 0;
    }
    for (coffer_iter *it = txn->iters; it; it = it->next) {
        cf_object_cursor_close(&it->objects);
        if (it->backlinks)
            mdb_cursor_close(it->backlinks);
        it->backlinks = NULL;
    }
    for (size_t i = 0; txn->index_cursors && i < txn->db->schema->nclasses; i++) {
        if (txn->index_cursors[i])
            mdb_cursor_close(txn->index_cursors[i]);
        txn->index_cursors[i] = NULL;
    }
}

coffer_status cf_txn_alloc_state(coffer_txn *txn, size_t nclasses)
{
    txn->state = calloc(nclasses + 1, sizeof *txn->state);
    txn->index_cursors = calloc(nclasses + 1, sizeof *txn->index_cursors);
    if (!txn->state || !txn->index_cursors) {
        free(txn->state);
        free(txn->index_cursors);
        txn->state = NULL;
        txn->index_cursors = NULL;
        return cf_error(COFFER_ERR_NO_MEMORY, "out of memory beginning a transaction");
    }
    return COFFER_OK;
}

coffer_status cf_txn_index_cursor(coffer_txn *txn, coffer_class_id cls, MDB_cursor **out)
{
    if (!txn->index_cursors[cls]) {
        int rc = mdb_cursor_open(txn->mdb, txn->db->index_dbis[cls], &txn->index_cursors[cls]);
        if (rc != 0)
            return cf_error_mdb(rc, "cannot open an index cursor");
    }
    *out = txn->index_cursors[cls];
    return COFFER_OK;
}

static const uint8_t META_COLLECTION_COUNTER[] = {'c'};

coffer_status cf_txn_next_collection_id(coffer_txn *txn, uint64_t *out)
{
    if (!txn->collection_loaded) {
        uint64_t next;
        coffer_status st = read_counter(txn, META_COLLECTION_COUNTER, 1, "the collection counter", &next);
        if (st != COFFER_OK)
            return st;
        txn->next_collection = next;
        txn->collection_loaded = 1;
    }
    *out = txn->next_collection++;
    txn->collection_dirty = 1;
    return COFFER_OK;
}

static coffer_status save_collection_counter(coffer_txn *txn)
{
    if (!txn->collection_dirty)
        return COFFER_OK;
    uint8_t v[8];
    cf_put_be64(v, txn->next_collection);
    return cf_store_put(txn, txn->db->meta_dbi, CF_META_DBI, META_COLLECTION_COUNTER, 1, v, 8, 0, "cannot commit");
}

static void free_iters(coffer_txn *txn)
{
    for (coffer_iter *it = txn->iters, *next; it; it = next) {
        next = it->next;
        it->magic = CF_DEAD_MAGIC;
        free(it->value_copy);
        free(it);
    }
    txn->iters = NULL;
}

coffer_status cf_txn_flush_deferred(coffer_txn *txn)
{
    return txn->deferred_flush ? txn->deferred_flush(txn) : COFFER_OK;
}

static void drop_deferred(coffer_txn *txn)
{
    if (txn->deferred_drop)
        txn->deferred_drop(txn);
    txn->deferred = NULL;
    txn->deferred_flush = NULL;
    txn->deferred_drop = NULL;
}

static void end_txn(coffer_txn *txn, int commit, int *rc_out)
{
    drop_deferred(txn);
    cf_txn_close_cursors(txn);
    int rc = 0;
    if (commit)
        rc = mdb_txn_commit(txn->mdb);
    else
        mdb_txn_abort(txn->mdb);
    cf_clusters_free(txn); /* after LMDB's end: plain clusters borrowed its map until then */
    cf_itree_free(txn);
    cf_pk_map_free(txn);
    cf_index_pending_free(txn);
    txn->mdb = NULL;
    txn->active = 0;
    cf_log_discard(txn);
    cf_env_txn_end(txn->db->env, txn->write);
    if (rc_out)
        *rc_out = rc;
}

/* Checks that the caller may end `txn` through `call`: it is active, not a
 * migration's, and (a write one) on its own thread. `does`/`done` are the
 * verb of the call ("commits"/"committed"). */
static coffer_status check_ending(const coffer_txn *txn, const char *call, const char *does, const char *done)
{
    if (!txn || txn->magic != CF_TXN_MAGIC)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "%s: transaction handle is NULL or not a transaction", call);
    if (!txn->active)
        return cf_error(COFFER_ERR_MISUSE, txn->db->closed ? "the database of this transaction was closed"
                                                           : "the transaction has already ended");
    if (txn->borrowed)
        return cf_error(COFFER_ERR_MISUSE, "this transaction belongs to a migration, which %s it", does);
    if (txn->write && !pthread_equal(txn->thread, pthread_self()))
        return cf_error(COFFER_ERR_MISUSE, "a write transaction must be %s on the thread that began it", done);
    return COFFER_OK;
}

COFFER_API coffer_status coffer_txn_commit(coffer_txn *txn)
{
    coffer_status st = check_ending(txn, "coffer_txn_commit", "commits", "committed");
    if (st != COFFER_OK)
        return st;
    if (txn->failed) {
        end_txn(txn, 0, NULL);
        return cf_error(COFFER_ERR_MISUSE, "an earlier write of this transaction failed; it was aborted and nothing was committed");
    }
    st = txn->write ? cf_txn_flush_deferred(txn) : COFFER_OK;
    if (st == COFFER_OK && txn->write)
        st = cf_clusters_flush(txn);
    if (st == COFFER_OK && txn->write)
        st = cf_index_pending_flush_all(txn);
    if (st == COFFER_OK && txn->write)
        st = cf_itree_flush(txn);
    if (st == COFFER_OK && txn->write)
        st = save_class_states(txn);
    if (st == COFFER_OK && txn->write)
        st = save_collection_counter(txn);
    if (st == COFFER_OK && txn->write)
        st = cf_log_commit(txn);
    if (st == COFFER_OK && txn->write && txn->db->commit_hook)
        st = txn->db->commit_hook(txn);
    /* Last, for any entry added since (nothing adds one after this), and
     * the sealed nodes they changed. */
    if (st == COFFER_OK && txn->write)
        st = cf_index_pending_flush_all(txn);
    if (st == COFFER_OK && txn->write)
        st = cf_itree_flush(txn);
    if (st != COFFER_OK) {
        end_txn(txn, 0, NULL);
        return st;
    }
    int rc;
    cf_env *env = txn->db->env;
    int wrote = txn->write;
    end_txn(txn, 1, &rc);
    if (rc == 0 && wrote) {
        /* Observers of every process look (cf_signal_commit); the hook does
         * it and may refresh this handle's own observers here. */
        if (txn->db->committed_hook)
            txn->db->committed_hook(txn->db);
        else
            cf_signal_commit(env->signal);
    }
    if (rc == MDB_MAP_FULL)
        return cf_env_map_full(txn->db->env, "commit failed");
    if (rc != 0)
        return cf_error_write(env->mdb, rc, "commit failed; nothing of the transaction was committed");
    return COFFER_OK;
}

COFFER_API coffer_status coffer_txn_abort(coffer_txn *txn)
{
    coffer_status st = check_ending(txn, "coffer_txn_abort", "ends", "aborted");
    if (st == COFFER_OK)
        end_txn(txn, 0, NULL);
    return st;
}

COFFER_API int coffer_txn_is_write(const coffer_txn *txn)
{
    return txn && txn->magic == CF_TXN_MAGIC && txn->active && txn->write;
}

COFFER_API int coffer_txn_is_active(const coffer_txn *txn)
{
    return txn && txn->magic == CF_TXN_MAGIC && txn->active;
}

void cf_txn_free_handles(coffer_txn *txn)
{
    cf_log_discard(txn); /* the internal transactions of opening and migrating */
    drop_deferred(txn);
    cf_clusters_free(txn);
    cf_itree_free(txn);
    cf_pk_map_free(txn);
    cf_index_pending_free(txn);
    free_iters(txn);
    /* Results outlive their transaction, unusable but safe to free. */
    for (struct coffer_results *r = txn->results, *next; r; r = next) {
        next = r->next_in_txn;
        r->txn = NULL;
        r->prev_in_txn = r->next_in_txn = NULL;
    }
    txn->results = NULL;
    for (cf_pooled *h = txn->objects.all, *next; h; h = next) {
        coffer_object *o = (coffer_object *)h;
        next = h->next;
        o->magic = CF_DEAD_MAGIC;
        cf_row_free(&o->row);
        free(o);
    }
    txn->objects = (cf_pool){0};
    for (cf_pooled *h = txn->colls.all, *next; h; h = next) {
        cf_coll *c = (cf_coll *)h;
        next = h->next;
        c->magic = CF_DEAD_MAGIC;
        free(c->chunk_no);
        free(c->ends);
        free(c->buf);
        free(c->rchunk);
        free(c);
    }
    txn->colls = (cf_pool){0};
    free(txn->scratch);
    txn->scratch = NULL;
    txn->scratch_cap = 0;
    free(txn->state);
    free(txn->index_cursors);
    txn->state = NULL;
    txn->index_cursors = NULL;
}

COFFER_API void coffer_txn_free(coffer_txn *txn)
{
    if (!txn || txn->magic != CF_TXN_MAGIC || txn->borrowed)
        return;
    if (txn->active)
        end_txn(txn, 0, NULL);
    cf_txn_free_handles(txn);
    coffer_db *db = txn->db;
    pthread_mutex_lock(&db->lock);
    for (coffer_txn **p = &db->txns; *p; p = &(*p)->next_in_db) {
        if (*p == txn) {
            *p = txn->next_in_db;
            break;
        }
    }
    int last = --db->ntxns == 0 && db->closed;
    pthread_mutex_unlock(&db->lock);
    txn->magic = CF_DEAD_MAGIC;
    free(txn);
    if (last)
        cf_db_destroy(db);
}

void cf_txn_abort_all(coffer_db *db)
{
    pthread_mutex_lock(&db->lock);
    for (coffer_txn *t = db->txns; t; t = t->next_in_db)
        if (t->active)
            end_txn(t, 0, NULL);
    pthread_mutex_unlock(&db->lock);
}

void cf_db_destroy(coffer_db *db)
{
    db->magic = CF_DEAD_MAGIC;
    cf_clusters_pool_free(db);
    cf_itree_pool_free(db);
    cf_keys_free(db->keys);
    cf_schema_free(db->schema);
    free(db->object_dbis);
    free(db->index_dbis);
    pthread_mutex_destroy(&db->lock);
    free(db);
}

/* The checks of call `fn` that reads from `txn` into `out` (named `what`). */
static coffer_status check_read_into(const coffer_txn *txn, const void *out, const char *fn, const char *what)
{
    if (!out)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "%s: %s is NULL", fn, what);
    return cf_txn_check(txn, 0);
}

COFFER_API coffer_status coffer_txn_version(const coffer_txn *txn, uint64_t *out)
{
    coffer_status st = check_read_into(txn, out, "coffer_txn_version", "out");
    if (st == COFFER_OK)
        *out = (uint64_t)mdb_txn_id(txn->mdb);
    return st;
}

COFFER_API coffer_status coffer_txn_set_origin(coffer_txn *txn, int origin)
{
    coffer_status st = cf_txn_check(txn, 1);
    if (st != COFFER_OK)
        return st;
    if (origin != COFFER_ORIGIN_LOCAL && origin != COFFER_ORIGIN_REMOTE)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "commit origin %d is neither COFFER_ORIGIN_LOCAL nor COFFER_ORIGIN_REMOTE",
                        origin);
    txn->origin = origin;
    return COFFER_OK;
}

COFFER_API coffer_status coffer_txn_commit_origin(coffer_txn *txn, uint64_t version, int *origin)
{
    coffer_status st = check_read_into(txn, origin, "coffer_txn_commit_origin", "origin");
    if (st != COFFER_OK)
        return st;
    cf_log_entry entry;
    st = cf_log_read(txn, version, &entry);
    if (st == COFFER_ERR_NOT_FOUND)
        return cf_error(COFFER_ERR_NOT_FOUND, "the change log has no entry for version %llu", (unsigned long long)version);
    if (st != COFFER_OK)
        return st;
    *origin = entry.origin;
    cf_log_entry_free(&entry);
    return COFFER_OK;
}
