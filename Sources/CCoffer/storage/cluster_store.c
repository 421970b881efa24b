/* cluster_store — rows, writes, counts, cursors and scans of file format 5:
 * object k of a class is object (k & 255) of cluster k >> 8, stored under
 * that cluster's 8-byte big-endian number in sub-database 2t. Reads go
 * through the transaction's open clusters, writes change them there, and a
 * changed cluster is written when appends fill it or at the commit
 * (storage/cluster_cache.h). */
#define _GNU_SOURCE
#include "storage/cluster_store.h"

#include <inttypes.h>

#include "storage/cluster_cache.h"
#include "storage/index_pending.h"
#include "storage/index_tree.h"
#include "storage/txn.h"
#include "util/error.h"

#define LOW_MASK ((coffer_object_key)CF_CLUSTER_MAX - 1)

static const cf_class *class_of(const coffer_txn *txn, coffer_class_id cls) { return &txn->db->schema->classes[cls]; }

/* The position of object `key` in its cluster (*e NULL or -1 when absent). */
static coffer_status locate(coffer_txn *txn, coffer_class_id cls, coffer_object_key key, int create, cf_cluster_entry **e,
                            int *pos)
{
    *pos = -1;
    coffer_status st = cf_clusters_find(txn, cls, key >> CF_CLUSTER_BITS, NULL, create, e);
    if (st == COFFER_OK && *e) {
        int p = cf_cluster_entry_seek(*e, (unsigned)(key & LOW_MASK));
        if (p >= 0 && cf_cluster_entry_low(*e, p) == (key & LOW_MASK))
            *pos = p;
    }
    return st;
}

coffer_status cf_cstore_get(coffer_txn *txn, coffer_class_id cls, coffer_object_key key, cf_row *row)
{
    cf_cluster_entry *e;
    int pos;
    coffer_status st = locate(txn, cls, key, 0, &e, &pos);
    if (st != COFFER_OK)
        return st;
    if (pos < 0)
        return COFFER_ERR_NOT_FOUND;
    st = cf_cluster_entry_row(txn, e, pos, row); /* the caller names the object */
    if (st == COFFER_OK && row->cl)
        cf_cluster_prefetch(row->cl, row->at); /* a row is mostly read whole */
    return st;
}

coffer_status cf_cstore_put(coffer_txn *txn, coffer_class_id cls, coffer_object_key key, const coffer_value *slots,
                            uint16_t ncols)
{
    cf_cluster_entry *e;
    coffer_status st = cf_clusters_find(txn, cls, key >> CF_CLUSTER_BITS, NULL, 1, &e);
    if (st == COFFER_OK)
        st = cf_clusters_change(txn, e);
    size_t size = cf_record_size(slots, ncols);
    uint8_t *buf = NULL;
    if (st == COFFER_OK)
        st = cf_txn_scratch(txn, size, &buf);
    if (st == COFFER_OK) {
        cf_record_write(buf, slots, ncols);
        st = cf_clusters_set(txn, e, (unsigned)(key & LOW_MASK), buf, size);
    }
    return st == COFFER_OK ? st : cf_error_prefix("object %" PRIu64 " of class '%s'", key, class_of(txn, cls)->name);
}

coffer_status cf_cstore_patch(coffer_txn *txn, coffer_class_id cls, coffer_object_key key, const uint16_t *cols,
                              const coffer_value *vals, size_t n)
{
    cf_cluster_entry *e;
    int pos;
    coffer_status st = locate(txn, cls, key, 0, &e, &pos);
    if (st == COFFER_OK && pos < 0)
        return COFFER_DONE; /* the whole write says what is missing */
    if (st == COFFER_OK)
        st = cf_clusters_patch(txn, e, (unsigned)(key & LOW_MASK), cols, vals, n);
    return st == COFFER_OK || st == COFFER_DONE
               ? st
               : cf_error_prefix("object %" PRIu64 " of class '%s'", key, class_of(txn, cls)->name);
}

coffer_status cf_cstore_delete(coffer_txn *txn, coffer_class_id cls, coffer_object_key key)
{
    cf_cluster_entry *e;
    int pos;
    coffer_status st = locate(txn, cls, key, 0, &e, &pos);
    if (st == COFFER_OK && pos < 0)
        return cf_txn_write_error(txn, MDB_NOTFOUND, "cannot delete an object");
    if (st == COFFER_OK)
        st = cf_clusters_change(txn, e);
    return st == COFFER_OK ? cf_clusters_set(txn, e, (unsigned)(key & LOW_MASK), NULL, 0) : st;
}

coffer_status cf_cstore_clear(coffer_txn *txn, coffer_class_id cls)
{
    int rc = mdb_drop(txn->mdb, txn->db->object_dbis[cls], 0);
    if (rc == 0)
        rc = mdb_drop(txn->mdb, txn->db->index_dbis[cls], 0);
    cf_index_pending_discard(txn, cls, -1);
    if (rc != 0)
        return cf_txn_write_error(txn, rc, "cannot delete the objects of a class");
    cf_clusters_drop_class(txn, cls);
    cf_itree_forget_class(txn, cls);
    return cf_clusters_write_count(txn, class_of(txn, cls)->table, 0);
}

coffer_status cf_cstore_count(coffer_txn *txn, coffer_class_id cls, uint64_t *out)
{
    coffer_status st = cf_clusters_stored_count(txn, class_of(txn, cls)->table, out);
    if (st == COFFER_OK)
        *out = (uint64_t)((int64_t)*out + cf_clusters_count_change(txn, cls));
    return st;
}

/* The first cluster at or after `from` holding an object: among those LMDB
 * holds (through cursor `cur`) and those changed in this transaction.
 * COFFER_DONE when there is none; on a damaged cluster, its error with
 * *bad set to its number. */
static coffer_status next_cluster(coffer_txn *txn, coffer_class_id cls, MDB_cursor *cur, uint64_t from,
                                  cf_cluster_entry **out, uint64_t *bad)
{
    for (;;) {
        uint8_t kb[8];
        cf_put_be64(kb, from);
        MDB_val k = {8, kb}, v;
        int rc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE);
        if (rc != 0 && rc != MDB_NOTFOUND)
            return cf_error_mdb(rc, "cannot iterate a class");
        if (rc == 0 && ((k.mv_size == CF_EXTERNAL_KEY_SIZE && *(const uint8_t *)k.mv_data == CF_EXTERNAL_PREFIX) ||
                        (k.mv_size == CF_BLOCK_KEY_SIZE && *(const uint8_t *)k.mv_data == CF_BLOCK_PREFIX)))
            rc = MDB_NOTFOUND; /* past the clusters: objects stored outside them, column blocks stored apart */
        if (rc == 0 && k.mv_size != 8) {
            *bad = from;
            return cf_error(COFFER_ERR_CORRUPTED, "class '%s' holds a key of %zu bytes (keys are 8 bytes)",
                            class_of(txn, cls)->name, k.mv_size);
        }
        uint64_t stored = rc == 0 ? cf_get_be64(k.mv_data) : 0, changed = 0;
        int has_changed = cf_clusters_next_changed(txn, cls, from, &changed);
        if (rc != 0 && !has_changed)
            return COFFER_DONE;
        uint64_t cid = rc != 0 ? changed : has_changed && changed < stored ? changed : stored;
        cf_cluster_entry *e;
        coffer_status st = cf_clusters_find(txn, cls, cid, rc == 0 && cid == stored ? &v : NULL, 0, &e);
        if (st != COFFER_OK) {
            *bad = cid;
            return st;
        }
        if (e && cf_cluster_entry_seek(e, 0) >= 0) {
            *out = e;
            return COFFER_OK;
        }
        if (cid == UINT64_MAX >> CF_CLUSTER_BITS)
            return COFFER_DONE;
        from = cid + 1;
    }
}

static coffer_status take(cf_object_cursor *c, cf_cluster_entry *e, int pos, coffer_object_key *key, cf_row *row);

coffer_status cf_cstore_seek(cf_object_cursor *c, coffer_object_key from, coffer_object_key *key, cf_row *row)
{
    cf_cluster_entry *e;
    int pos;
    coffer_status st = locate(c->txn, c->cls, from, 0, &e, &pos);
    uint64_t bad = from >> CF_CLUSTER_BITS;
    if (st == COFFER_OK && e)
        pos = cf_cluster_entry_seek(e, (unsigned)(from & LOW_MASK));
    if (st == COFFER_OK && pos < 0) {
        if ((from >> CF_CLUSTER_BITS) == UINT64_MAX >> CF_CLUSTER_BITS)
            return COFFER_DONE;
        st = next_cluster(c->txn, c->cls, c->cur, (from >> CF_CLUSTER_BITS) + 1, &e, &bad);
        if (st == COFFER_OK)
            pos = cf_cluster_entry_seek(e, 0);
    }
    if (st == COFFER_DONE)
        return st;
    if (st != COFFER_OK) {
        /* cf_cstore_next goes on after the damaged cluster */
        c->pos = bad << CF_CLUSTER_BITS | LOW_MASK;
        c->has_pos = 1;
        c->entry = NULL;
        return st;
    }
    return take(c, e, pos, key, row);
}

/* Makes the object at `pos` of cluster `e` the cursor's current one. */
static coffer_status take(cf_object_cursor *c, cf_cluster_entry *e, int pos, coffer_object_key *key, cf_row *row)
{
    *key = e->cid << CF_CLUSTER_BITS | cf_cluster_entry_low(e, pos);
    c->pos = *key;
    c->has_pos = 1;
    c->entry = e;
    c->entry_changes = e->changes;
    if (!row)
        return COFFER_OK;
    coffer_status st = cf_cluster_entry_row(c->txn, e, pos, row);
    return st == COFFER_OK ? st : cf_error_prefix("object %" PRIu64 " of class '%s'", *key, class_of(c->txn, c->cls)->name);
}

coffer_status cf_cstore_next(cf_object_cursor *c, coffer_object_key *key, cf_row *row)
{
    if (!c->has_pos)
        return cf_cstore_seek(c, 0, key, row);
    if (c->pos == UINT64_MAX)
        return COFFER_DONE;
    /* The next object of the same, unchanged cluster, without finding it again. */
    unsigned low = (unsigned)(c->pos & LOW_MASK);
    if (c->entry && c->entry->changes == c->entry_changes && low + 1 < CF_CLUSTER_MAX) {
        int pos = cf_cluster_entry_seek(c->entry, low + 1);
        if (pos >= 0)
            return take(c, c->entry, pos, key, row);
    }
    return cf_cstore_seek(c, c->pos + 1, key, row);
}

/* Column values of the object at `pos` of cluster `e`. */
static coffer_status values_of(coffer_txn *txn, cf_cluster_entry *e, int pos, const uint16_t *columns,
                               const coffer_type *types, size_t n, coffer_value *values)
{
    cf_row row = {0};
    coffer_status st = cf_cluster_entry_row(txn, e, pos, &row);
    for (size_t i = 0; i < n && st == COFFER_OK; i++)
        st = row.cl ? cf_cluster_get(row.cl, row.at, columns[i], types[i], &values[i])
                    : cf_record_get(&row.rec, columns[i], types[i], &values[i]);
    return st;
}

/* Hands the objects of cluster `e` to `fn` one by one. */
static coffer_status scan_objects(coffer_txn *txn, coffer_class_id cls, cf_cluster_entry *e, const uint16_t *columns,
                                  const coffer_type *types, size_t n, coffer_value *values, cf_scan_fn fn, void *ctx)
{
    coffer_status st = COFFER_OK;
    for (int pos = cf_cluster_entry_seek(e, 0); pos >= 0 && st == COFFER_OK;) {
        unsigned low = cf_cluster_entry_low(e, pos);
        coffer_object_key key = e->cid << CF_CLUSTER_BITS | low;
        st = values_of(txn, e, pos, columns, types, n, values);
        if (st != COFFER_OK)
            cf_error_prefix("object %" PRIu64 " of class '%s'", key, class_of(txn, cls)->name);
        else
            st = fn(ctx, key, values);
        pos = low + 1 < CF_CLUSTER_MAX ? cf_cluster_entry_seek(e, low + 1) : -1;
    }
    return st;
}

/* Whether the objects of cluster `e` can go to a scan as one batch: stored,
 * unchanged by the transaction, none of them stored outside. */
static int batchable(const cf_cluster_entry *e)
{
    return !e->slots && e->view.n && !e->view.external;
}

coffer_status cf_cstore_scan(coffer_txn *txn, coffer_class_id cls, const uint16_t *columns, const coffer_type *types,
                             size_t n, coffer_value *values, cf_scan_fn fn, cf_batch_fn batch_fn, void *ctx)
{
    MDB_cursor *cur;
    int rc = mdb_cursor_open(txn->mdb, txn->db->object_dbis[cls], &cur);
    if (rc != 0)
        return cf_error_mdb(rc, "cannot open a cursor");
    coffer_status st;
    cf_cluster_entry *e;
    uint64_t bad, from = 0;
    while ((st = next_cluster(txn, cls, cur, from, &e, &bad)) == COFFER_OK) {
        if (batch_fn && batchable(e)) {
            cf_object_batch b = {.base = e->cid << CF_CLUSTER_BITS, .lows = e->view.lows, .n = e->view.n,
                                 .cluster = &e->view, .class_name = class_of(txn, cls)->name};
            st = batch_fn(ctx, &b);
        } else {
            st = scan_objects(txn, cls, e, columns, types, n, values, fn, ctx);
        }
        if (st != COFFER_OK || e->cid == UINT64_MAX >> CF_CLUSTER_BITS)
            break;
        from = e->cid + 1;
    }
    mdb_cursor_close(cur);
    return st == COFFER_DONE ? COFFER_OK : st;
}

coffer_status cf_cstore_last_key(coffer_txn *txn, coffer_class_id cls, coffer_object_key *last, int *found)
{
    *found = 0;
    MDB_cursor *cur;
    int rc = mdb_cursor_open(txn->mdb, txn->db->object_dbis[cls], &cur);
    if (rc != 0)
        return cf_error_mdb(rc, "cannot open a cursor");
    /* The last cluster comes before the first object stored outside. */
    uint8_t first_external = CF_EXTERNAL_PREFIX;
    MDB_val k = {1, &first_external}, v;
    rc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE);
    rc = rc == 0 ? mdb_cursor_get(cur, &k, &v, MDB_PREV) : mdb_cursor_get(cur, &k, &v, MDB_LAST);
    coffer_status st = COFFER_OK;
    if (rc == 0 && k.mv_size == 8) {
        cf_cluster_entry *e;
        st = cf_clusters_find(txn, cls, cf_get_be64(k.mv_data), &v, 0, &e);
        if (st == COFFER_OK && e && e->view.n) {
            *last = e->cid << CF_CLUSTER_BITS | e->view.lows[e->view.n - 1];
            *found = 1;
        } else if (st == COFFER_OK && e && e->slots) { /* written by this transaction when appends filled it */
            for (int low = CF_CLUSTER_MAX - 1; low >= 0 && !*found; low--)
                if (e->slots[low].rec || e->slots[low].kept || e->slots[low].stored) {
                    *last = e->cid << CF_CLUSTER_BITS | (unsigned)low;
                    *found = 1;
                }
        }
    }
    mdb_cursor_close(cur);
    return st;
}
