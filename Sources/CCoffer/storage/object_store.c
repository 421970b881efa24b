/* object_store — the objects of a class as LMDB sees them (file format 4,
 * docs/FORMAT.md "Objects"): one record per object under its 8-byte
 * big-endian key in sub-database 2t, sealed as a whole in encrypted files.
 * Rows, writes, counts, cursors and scans of object_store.h; a file of
 * format 5 (clusters) is handed to cluster_store.c. Nothing above storage/
 * knows either layout. */
#define _GNU_SOURCE
#include "storage/object_store.h"

#include <inttypes.h>
#include <stdlib.h>

#include "storage/cluster.h"
#include "storage/cluster_cache.h"
#include "storage/cluster_store.h"
#include "storage/env.h"
#include "storage/index_pending.h"
#include "storage/pk_map.h"
#include "storage/txn.h"
#include "util/error.h"

#define SCAN_VALUES_ON_STACK 16

static const cf_class *class_of(const coffer_txn *txn, coffer_class_id cls) { return &txn->db->schema->classes[cls]; }

static uint32_t table_number(const coffer_txn *txn, coffer_class_id cls) { return 2 * class_of(txn, cls)->table; }

/* Opens (encrypted) and parses the record `v` stored under `k` into row. */
static coffer_status row_take(coffer_txn *txn, coffer_class_id cls, const MDB_val *k, const MDB_val *v, cf_row *row)
{
    const uint8_t *data;
    size_t len;
    coffer_status st = cf_store_open(txn, table_number(txn, cls), k, v, &data, &len, &row->buf, &row->buf_cap, "the record");
    return st == COFFER_OK ? cf_record_parse(data, len, &row->rec) : st;
}

/* Finds object `key` of class `cls`: `k` (over kb) and `v` are its LMDB key
 * and value. COFFER_ERR_NOT_FOUND without a message when absent. */
static coffer_status lookup(coffer_txn *txn, coffer_class_id cls, coffer_object_key key, uint8_t kb[8], MDB_val *k, MDB_val *v)
{
    cf_put_be64(kb, key);
    *k = (MDB_val){8, kb};
    int rc = mdb_get(txn->mdb, txn->db->object_dbis[cls], k, v);
    if (rc == MDB_NOTFOUND)
        return COFFER_ERR_NOT_FOUND;
    return rc ? cf_error_mdb(rc, "cannot read an object") : COFFER_OK;
}

coffer_status cf_objects_get(coffer_txn *txn, coffer_class_id cls, coffer_object_key key, cf_row *row)
{
    if (txn->db->clustered)
        return cf_cstore_get(txn, cls, key, row);
    row->cl = NULL;
    uint8_t kb[8];
    MDB_val k, v;
    coffer_status st = lookup(txn, cls, key, kb, &k, &v);
    return st == COFFER_OK ? row_take(txn, cls, &k, &v, row) : st;
}

coffer_status cf_objects_exists(coffer_txn *txn, coffer_class_id cls, coffer_object_key key)
{
    if (txn->db->clustered) {
        cf_row row = {0};
        return cf_cstore_get(txn, cls, key, &row); /* points into the cache: nothing to free */
    }
    uint8_t kb[8];
    MDB_val k, v;
    return lookup(txn, cls, key, kb, &k, &v);
}

coffer_status cf_row_get(const cf_row *row, uint16_t column, coffer_type type, coffer_value *out)
{
    if (row->cl)
        return cf_cluster_get(row->cl, row->at, column, type, out);
    return cf_record_get(&row->rec, column, type, out);
}

void cf_row_free(cf_row *row)
{
    free(row->buf);
    row->buf = NULL;
    row->buf_cap = 0;
}

/* ---- writes -------------------------------------------------------------- */

coffer_status cf_objects_put(coffer_txn *txn, coffer_class_id cls, coffer_object_key key, const coffer_value *slots,
                             uint16_t ncols, int append)
{
    if (txn->db->clustered)
        return cf_cstore_put(txn, cls, key, slots, ncols);
    const cf_class *c = class_of(txn, cls);
    size_t size = cf_record_size(slots, ncols);
    uint8_t *buf;
    coffer_status st = cf_txn_scratch(txn, size, &buf);
    if (st != COFFER_OK)
        return st;
    cf_record_write(buf, slots, ncols);
    uint8_t kb[8];
    cf_put_be64(kb, key);
    st = cf_store_put(txn, txn->db->object_dbis[cls], 2 * c->table, kb, 8, buf, size, append ? MDB_APPEND : 0,
                      "cannot write an object");
    return st == COFFER_OK ? st : cf_error_prefix("object %" PRIu64 " of class '%s'", key, c->name);
}

coffer_status cf_objects_patch(coffer_txn *txn, coffer_class_id cls, coffer_object_key key, const uint16_t *cols,
                               const coffer_value *vals, size_t n)
{
    return txn->db->clustered ? cf_cstore_patch(txn, cls, key, cols, vals, n) : COFFER_DONE;
}

coffer_status cf_objects_delete(coffer_txn *txn, coffer_class_id cls, coffer_object_key key)
{
    if (txn->db->clustered)
        return cf_cstore_delete(txn, cls, key);
    uint8_t kb[8];
    cf_put_be64(kb, key);
    MDB_val k = {8, kb};
    int rc = mdb_del(txn->mdb, txn->db->object_dbis[cls], &k, NULL);
    return rc ? cf_txn_write_error(txn, rc, "cannot delete an object") : COFFER_OK;
}

coffer_status cf_objects_clear(coffer_txn *txn, coffer_class_id cls)
{
    cf_pk_map_forget(txn, cls);
    if (txn->db->clustered)
        return cf_cstore_clear(txn, cls);
    int rc = mdb_drop(txn->mdb, txn->db->object_dbis[cls], 0);
    if (rc == 0)
        rc = mdb_drop(txn->mdb, txn->db->index_dbis[cls], 0);
    cf_index_pending_discard(txn, cls, -1);
    return rc ? cf_txn_write_error(txn, rc, "cannot delete the objects of a class") : COFFER_OK;
}

void cf_objects_place(const coffer_txn *txn, coffer_object_key key, uint8_t out[8])
{
    cf_put_be64(out, txn->db->clustered ? key >> CF_CLUSTER_BITS : key);
}

/* ---- counts -------------------------------------------------------------- */

static coffer_status count_dbi(coffer_txn *txn, MDB_dbi dbi, uint64_t *out)
{
    MDB_stat ms;
    int rc = mdb_stat(txn->mdb, dbi, &ms);
    if (rc != 0)
        return cf_error_mdb(rc, "cannot count objects");
    *out = ms.ms_entries;
    return COFFER_OK;
}

coffer_status cf_objects_count(coffer_txn *txn, coffer_class_id cls, uint64_t *out)
{
    if (txn->db->clustered)
        return cf_cstore_count(txn, cls, out);
    return count_dbi(txn, txn->db->object_dbis[cls], out);
}

coffer_status cf_objects_count_table(coffer_txn *txn, uint32_t table, const char *name, uint64_t *out)
{
    MDB_dbi dbi;
    coffer_status st = cf_env_dbi(txn->db->env, txn->mdb, 2 * table, 0, &dbi);
    if (st == COFFER_ERR_NOT_FOUND)
        return cf_error(COFFER_ERR_CORRUPTED, "the objects of class '%s' are missing from the file", name);
    if (st == COFFER_OK && txn->db->clustered)
        return cf_clusters_stored_count(txn, table, out);
    return st == COFFER_OK ? count_dbi(txn, dbi, out) : st;
}

/* ---- cursors ------------------------------------------------------------- */

coffer_status cf_object_cursor_open(coffer_txn *txn, coffer_class_id cls, cf_object_cursor *out)
{
    *out = (cf_object_cursor){.txn = txn, .cls = cls};
    int rc = mdb_cursor_open(txn->mdb, txn->db->object_dbis[cls], &out->cur);
    if (rc != 0) {
        out->cur = NULL;
        return cf_error_mdb(rc, "cannot open a cursor");
    }
    return COFFER_OK;
}

/* The entry the cursor reached with LMDB status `rc`: its key and, when
 * asked, its row. */
static coffer_status cursor_take(cf_object_cursor *c, int rc, MDB_val *k, MDB_val *v, coffer_object_key *key, cf_row *row)
{
    if (rc == MDB_NOTFOUND)
        return COFFER_DONE;
    if (rc != 0)
        return cf_error_mdb(rc, "cannot iterate a class");
    const cf_class *cl = class_of(c->txn, c->cls);
    if (k->mv_size != 8)
        return cf_error(COFFER_ERR_CORRUPTED, "class '%s' holds a key of %zu bytes (keys are 8 bytes)", cl->name, k->mv_size);
    *key = cf_get_be64(k->mv_data);
    if (!row)
        return COFFER_OK;
    coffer_status st = row_take(c->txn, c->cls, k, v, row);
    return st == COFFER_OK ? st : cf_error_prefix("object %" PRIu64 " of class '%s'", *key, cl->name);
}

coffer_status cf_object_cursor_seek(cf_object_cursor *c, coffer_object_key from, coffer_object_key *key, cf_row *row)
{
    if (c->txn->db->clustered)
        return cf_cstore_seek(c, from, key, row);
    if (row)
        row->cl = NULL;
    uint8_t kb[8];
    cf_put_be64(kb, from);
    MDB_val k = {8, kb}, v;
    int rc = mdb_cursor_get(c->cur, &k, &v, from ? MDB_SET_RANGE : MDB_FIRST);
    return cursor_take(c, rc, &k, &v, key, row);
}

coffer_status cf_object_cursor_next(cf_object_cursor *c, coffer_object_key *key, cf_row *row)
{
    if (c->txn->db->clustered)
        return cf_cstore_next(c, key, row);
    if (row)
        row->cl = NULL;
    MDB_val k, v;
    int rc = mdb_cursor_get(c->cur, &k, &v, MDB_NEXT);
    return cursor_take(c, rc, &k, &v, key, row);
}

void cf_object_cursor_close(cf_object_cursor *c)
{
    if (c->cur)
        mdb_cursor_close(c->cur);
    c->cur = NULL;
}

/* ---- scans --------------------------------------------------------------- */

coffer_status cf_objects_scan(coffer_txn *txn, coffer_class_id cls, const uint16_t *columns, const coffer_type *types,
                              size_t n, cf_scan_fn fn, void *ctx)
{
    return cf_objects_scan_batches(txn, cls, columns, types, n, fn, NULL, ctx);
}

coffer_status cf_objects_scan_batches(coffer_txn *txn, coffer_class_id cls, const uint16_t *columns,
                                      const coffer_type *types, size_t n, cf_scan_fn fn, cf_batch_fn batch_fn, void *ctx)
{
    coffer_value stack[SCAN_VALUES_ON_STACK];
    coffer_value *values = n <= SCAN_VALUES_ON_STACK ? stack : malloc(n * sizeof *values);
    if (!values)
        return cf_error(COFFER_ERR_NO_MEMORY, "out of memory scanning a class");
    if (txn->db->clustered) {
        coffer_status st = cf_cstore_scan(txn, cls, columns, types, n, values, fn, batch_fn, ctx);
        if (values != stack)
            free(values);
        return st;
    }
    cf_object_cursor c;
    cf_row row = {0};
    coffer_status st = cf_object_cursor_open(txn, cls, &c);
    coffer_object_key key;
    for (st = st == COFFER_OK ? cf_object_cursor_next(&c, &key, &row) : st; st == COFFER_OK;
         st = cf_object_cursor_next(&c, &key, &row)) {
        for (size_t i = 0; i < n && st == COFFER_OK; i++)
            st = cf_record_get(&row.rec, columns[i], types[i], &values[i]);
        if (st != COFFER_OK) {
            cf_error_prefix("object %" PRIu64 " of class '%s'", key, class_of(txn, cls)->name);
            break;
        }
        if ((st = fn(ctx, key, values)) != COFFER_OK)
            break;
    }
    cf_object_cursor_close(&c);
    cf_row_free(&row);
    if (values != stack)
        free(values);
    return st == COFFER_DONE ? COFFER_OK : st;
}
