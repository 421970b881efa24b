/* index — order-preserving (plain) or hashed (encrypted) index keys, their
 * maintenance, and the index walks of the object store interface
 * (object_store.h): seeks, prefix and range walks, the entries in order. */
#include "storage/index.h"

#include <string.h>

#include "util/error.h"
#include "storage/index_pending.h"
#include "storage/index_tree.h"
#include "storage/object_store.h"
#include "storage/pk_map.h"
#include "storage/txn.h"

/* Plain encoding of a non-null value, order-preserving for fixed widths.
 * Returns its length; strings are written by the caller. */
static size_t encode_fixed(const coffer_value *v, uint8_t *out)
{
    switch (v->type) {
    case COFFER_TYPE_BOOL: out[0] = v->u.boolean ? 1 : 0; return 1;
    case COFFER_TYPE_INT: cf_put_be64(out, (uint64_t)v->u.integer ^ (UINT64_C(1) << 63)); return 8;
    case COFFER_TYPE_DATE:
        cf_put_be64(out, (uint64_t)v->u.date.seconds ^ (UINT64_C(1) << 63));
        cf_put_be32(out + 8, (uint32_t)v->u.date.nanoseconds ^ (UINT32_C(1) << 31));
        return 12;
    case COFFER_TYPE_OBJECT_ID: memcpy(out, v->u.object_id.bytes, 12); return 12;
    case COFFER_TYPE_UUID: memcpy(out, v->u.uuid.bytes, 16); return 16;
    default: return 0;
    }
}

size_t cf_index_prefix(const coffer_db *db, const cf_class *c, const cf_prop *p, const coffer_value *v,
                       uint8_t *out, int *hashed)
{
    cf_put_be16(out, p->column);
    size_t n = 2;
    int is_null = v->type == COFFER_TYPE_NULL;
    if (db->keys && !db->sealed_index) {
        /* Hash of table, column, tag and value: equal values in different
         * columns do not show as equal. */
        uint8_t head[32];
        cf_put_be32(head, c->table);
        cf_put_be16(head + 4, p->column);
        head[6] = is_null ? 0 : 1;
        size_t hl = 7;
        const void *body = NULL;
        size_t bl = 0;
        if (!is_null && v->type == COFFER_TYPE_STRING) {
            body = v->u.string.data;
            bl = v->u.string.size;
        } else if (!is_null) {
            hl += encode_fixed(v, head + hl);
        }
        cf_index_hash(db->keys, out + n, head, hl, body, bl);
        *hashed = 1;
        return n + CF_INDEX_HASH_SIZE;
    }
    *hashed = 0;
    out[n++] = is_null ? 0 : 1;
    if (is_null)
        return n;
    if (v->type != COFFER_TYPE_STRING)
        return n + encode_fixed(v, out + n);
    /* Strings hold no NUL, so a 0 terminator keeps keys prefix-free and in
     * order; a long string keeps its first bytes, then 1 and a hash. */
    size_t len = v->u.string.size;
    if (len <= CF_INDEX_STRING_PREFIX) {
        if (len)
            memcpy(out + n, v->u.string.data, len);
        n += len;
        out[n++] = 0;
        return n;
    }
    memcpy(out + n, v->u.string.data, CF_INDEX_STRING_PREFIX);
    n += CF_INDEX_STRING_PREFIX;
    out[n++] = 1;
    cf_index_hash(NULL, out + n, "", 0, v->u.string.data, len);
    *hashed = 1;
    return n + CF_INDEX_HASH_SIZE;
}

size_t cf_index_entry(const coffer_db *db, const cf_class *c, const cf_prop *p, const coffer_value *v, coffer_object_key key,
                      uint8_t *out)
{
    int hashed;
    size_t n = cf_index_prefix(db, c, p, v, out, &hashed);
    cf_put_be64(out + n, key);
    return n + 8;
}

static size_t entry_key(coffer_txn *txn, coffer_class_id cls, const cf_prop *p, const coffer_value *v,
                        coffer_object_key key, uint8_t *out)
{
    return cf_index_entry(txn->db, &txn->db->schema->classes[cls], p, v, key, out);
}

coffer_status cf_index_add(coffer_txn *txn, coffer_class_id cls, const cf_prop *p, const coffer_value *v,
                           coffer_object_key key)
{
    uint8_t k[CF_INDEX_PREFIX_MAX + 8];
    size_t len = entry_key(txn, cls, p, v, key, k);
    coffer_status st;
    if (cf_index_pending_enabled(txn)) {
        st = cf_index_pending_add(txn, cls, k, len);
    } else if (txn->db->sealed_index) {
        st = cf_itree_insert(txn, cls, k, len);
    } else {
        MDB_val mk = {len, k}, mv = {0, (void *)""};
        int rc = mdb_put(txn->mdb, txn->db->index_dbis[cls], &mk, &mv, 0);
        st = rc ? cf_txn_write_error(txn, rc, "cannot add an index entry") : COFFER_OK;
    }
    if (st == COFFER_OK)
        cf_pk_map_note(txn, cls, k, len, 1);
    return st;
}

coffer_status cf_index_remove(coffer_txn *txn, coffer_class_id cls, const cf_prop *p, const coffer_value *v,
                              coffer_object_key key)
{
    uint8_t k[CF_INDEX_PREFIX_MAX + 8];
    size_t len = entry_key(txn, cls, p, v, key, k);
    coffer_status st = cf_index_pending_flush(txn, cls, cf_index_pending_column(k, len));
    if (st == COFFER_OK && txn->db->sealed_index) {
        st = cf_itree_delete(txn, cls, k, len, NULL);
    } else if (st == COFFER_OK) {
        MDB_val mk = {len, k};
        int rc = mdb_del(txn->mdb, txn->db->index_dbis[cls], &mk, NULL);
        if (rc == MDB_NOTFOUND)
            rc = 0; /* an index built after the object was written */
        st = rc ? cf_txn_write_error(txn, rc, "cannot remove an index entry") : COFFER_OK;
    }
    if (st == COFFER_OK)
        cf_pk_map_note(txn, cls, k, len, 0);
    return st;
}

coffer_status cf_index_seek(coffer_txn *txn, coffer_class_id cls, const uint8_t *prefix, size_t plen, coffer_object_key from,
                            coffer_object_key *found)
{
    uint8_t k[CF_INDEX_PREFIX_MAX + 8];
    memcpy(k, prefix, plen);
    cf_put_be64(k + plen, from);
    coffer_status st = cf_index_pending_flush(txn, cls, cf_index_pending_column(prefix, plen));
    if (st != COFFER_OK)
        return st;
    if (txn->db->sealed_index) {
        cf_itree_cursor tc;
        const uint8_t *e;
        size_t elen;
        st = cf_itree_seek(&tc, txn, cls, k, plen + 8, &e, &elen);
        if (st != COFFER_OK)
            return st;
        if (elen != plen + 8 || memcmp(e, prefix, plen) != 0)
            return COFFER_DONE;
        *found = cf_get_be64(e + plen);
        return COFFER_OK;
    }
    MDB_cursor *cur;
    st = cf_txn_index_cursor(txn, cls, &cur);
    if (st != COFFER_OK)
        return st;
    MDB_val mk = {plen + 8, k}, mv;
    int rc = mdb_cursor_get(cur, &mk, &mv, MDB_SET_RANGE);
    if (rc == MDB_NOTFOUND)
        return COFFER_DONE;
    if (rc != 0)
        return cf_error_mdb(rc, "cannot read an index");
    if (mk.mv_size != plen + 8 || memcmp(mk.mv_data, prefix, plen) != 0)
        return COFFER_DONE;
    *found = cf_get_be64((const uint8_t *)mk.mv_data + plen);
    return COFFER_OK;
}

/* ---- walks --------------------------------------------------------------- */

static coffer_status walk_error(int rc) { return cf_error_mdb(rc, "cannot read an index"); }

/* How a walk ended: stopped by its callback (`st`: COFFER_DONE is success)
 * or by LMDB (`rc`: the end of the index is success). */
static coffer_status walk_end(coffer_status st, int rc)
{
    if (st != COFFER_OK)
        return st == COFFER_DONE ? COFFER_OK : st;
    return rc == 0 || rc == MDB_NOTFOUND ? COFFER_OK : walk_error(rc);
}

/* Byte order of two encoded values, a shorter one first on a tie. */
static int bytes_cmp(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
    int c = memcmp(a, b, alen < blen ? alen : blen);
    return c ? c : (alen > blen) - (alen < blen);
}

/* Hands the object key of entry `k` (its last 8 bytes) to fn. */
static coffer_status take_entry(const MDB_val *k, cf_index_fn fn, void *ctx)
{
    return fn(ctx, cf_get_be64((const uint8_t *)k->mv_data + k->mv_size - 8));
}

/* cf_index_walk_prefix over a sealed tree. */
static coffer_status tree_walk_prefix(coffer_txn *txn, coffer_class_id cls, const uint8_t *prefix, size_t plen, int exact,
                                      cf_index_fn fn, void *ctx)
{
    cf_itree_cursor tc;
    const uint8_t *e;
    size_t len;
    coffer_status st = cf_itree_seek(&tc, txn, cls, prefix, plen, &e, &len);
    while (st == COFFER_OK) {
        if (len < plen + 8 || memcmp(e, prefix, plen) != 0)
            return COFFER_OK;
        if (!exact || len == plen + 8)
            st = fn(ctx, cf_get_be64(e + len - 8));
        if (st == COFFER_OK)
            st = cf_itree_next(&tc, &e, &len);
    }
    return st == COFFER_DONE ? COFFER_OK : st;
}

coffer_status cf_index_walk_prefix(coffer_txn *txn, coffer_class_id cls, const uint8_t *prefix, size_t plen, int exact,
                                   cf_index_fn fn, void *ctx)
{
    coffer_status st = cf_index_pending_flush(txn, cls, cf_index_pending_column(prefix, plen));
    if (st != COFFER_OK)
        return st;
    if (txn->db->sealed_index)
        return tree_walk_prefix(txn, cls, prefix, plen, exact, fn, ctx);
    MDB_cursor *cur;
    st = cf_txn_index_cursor(txn, cls, &cur);
    if (st != COFFER_OK)
        return st;
    /* Entries of one value are adjacent: stop at the first without it. */
    MDB_val k = {plen, (void *)prefix}, v;
    int rc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE);
    while (rc == 0 && st == COFFER_OK) {
        if (k.mv_size < plen + 8 || memcmp(k.mv_data, prefix, plen) != 0)
            break;
        if (!exact || k.mv_size == plen + 8)
            st = take_entry(&k, fn, ctx);
        if (st == COFFER_OK)
            rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT);
    }
    return walk_end(st, rc);
}

/* Whether entry e[0..len) of a range walk is past its upper bound, or (at
 * the start) on an excluded lower one: 1 stop, -1 skip, 0 take. */
static int range_test(const cf_index_range *r, const uint8_t *e, size_t len)
{
    size_t vlen = len - 8;
    if (r->hi) {
        int c = bytes_cmp(e, vlen, r->hi, r->hilen);
        if (c > 0 || (c == 0 && !r->hi_incl))
            return 1;
    }
    if (r->lo && !r->lo_incl && bytes_cmp(e, vlen, r->lo, r->lolen) == 0)
        return -1;
    return 0;
}

/* cf_index_walk_range over a sealed tree. */
static coffer_status tree_walk_range(coffer_txn *txn, coffer_class_id cls, const cf_index_range *r, cf_index_fn fn,
                                     void *ctx)
{
    uint8_t nonnull[3];
    cf_put_be16(nonnull, r->column);
    nonnull[2] = 1;
    cf_itree_cursor tc;
    const uint8_t *e;
    size_t len;
    coffer_status st = r->lo ? cf_itree_seek(&tc, txn, cls, r->lo, r->lolen, &e, &len)
                             : cf_itree_seek(&tc, txn, cls, nonnull, 3, &e, &len);
    while (st == COFFER_OK) {
        if (len < 3 + 8 || memcmp(e, nonnull, 3) != 0)
            return COFFER_OK;
        int t = range_test(r, e, len);
        if (t > 0)
            return COFFER_OK;
        if (t == 0)
            st = fn(ctx, cf_get_be64(e + len - 8));
        if (st == COFFER_OK)
            st = cf_itree_next(&tc, &e, &len);
    }
    return st == COFFER_DONE ? COFFER_OK : st;
}

coffer_status cf_index_walk_range(coffer_txn *txn, coffer_class_id cls, const cf_index_range *r, cf_index_fn fn,
                                  void *ctx)
{
    coffer_status st = cf_index_pending_flush(txn, cls, r->column);
    if (st != COFFER_OK)
        return st;
    if (txn->db->sealed_index)
        return tree_walk_range(txn, cls, r, fn, ctx);
    MDB_cursor *cur;
    st = cf_txn_index_cursor(txn, cls, &cur);
    if (st != COFFER_OK)
        return st;
    /* Non-null values of the column start with column || 1. */
    uint8_t nonnull[3];
    cf_put_be16(nonnull, r->column);
    nonnull[2] = 1;
    MDB_val k = r->lo ? (MDB_val){r->lolen, (void *)r->lo} : (MDB_val){3, nonnull}, v;
    int rc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE);
    while (rc == 0 && st == COFFER_OK) {
        const uint8_t *e = k.mv_data;
        if (k.mv_size < 3 + 8 || memcmp(e, nonnull, 3) != 0)
            break;
        size_t vlen = k.mv_size - 8;
        if (r->hi) {
            int c = bytes_cmp(e, vlen, r->hi, r->hilen);
            if (c > 0 || (c == 0 && !r->hi_incl))
                break;
        }
        if (!r->lo || r->lo_incl || bytes_cmp(e, vlen, r->lo, r->lolen) != 0)
            st = take_entry(&k, fn, ctx);
        if (st == COFFER_OK)
            rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT);
    }
    return walk_end(st, rc);
}

coffer_status cf_index_walk_entries(coffer_txn *txn, coffer_class_id cls, const uint8_t *prefix, size_t plen,
                                    cf_index_bytes_fn fn, void *ctx)
{
    coffer_status st = cf_index_pending_flush(txn, cls, cf_index_pending_column(prefix, plen));
    if (st != COFFER_OK)
        return st;
    if (txn->db->sealed_index) {
        cf_itree_cursor tc;
        const uint8_t *e;
        size_t len;
        st = cf_itree_seek(&tc, txn, cls, prefix, plen, &e, &len);
        while (st == COFFER_OK && len >= plen && memcmp(e, prefix, plen) == 0) {
            st = fn(ctx, e, len);
            if (st == COFFER_OK)
                st = cf_itree_next(&tc, &e, &len);
        }
        return st == COFFER_DONE ? COFFER_OK : st;
    }
    MDB_cursor *cur;
    st = cf_txn_index_cursor(txn, cls, &cur);
    if (st != COFFER_OK)
        return st;
    MDB_val k = {plen, (void *)prefix}, v;
    int rc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE);
    while (rc == 0 && st == COFFER_OK) {
        if (k.mv_size < plen || memcmp(k.mv_data, prefix, plen) != 0)
            break;
        st = fn(ctx, k.mv_data, k.mv_size);
        if (st == COFFER_OK)
            rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT);
    }
    return walk_end(st, rc);
}

coffer_status cf_index_each(coffer_txn *txn, coffer_class_id cls, cf_index_entry_fn fn, void *ctx)
{
    coffer_status st = cf_index_pending_flush(txn, cls, -1);
    if (st != COFFER_OK)
        return st;
    if (txn->db->sealed_index) {
        cf_itree_cursor tc;
        const uint8_t *e;
        size_t len;
        st = cf_itree_seek(&tc, txn, cls, (const uint8_t *)"", 0, &e, &len);
        for (; st == COFFER_OK; st = cf_itree_next(&tc, &e, &len))
            fn(ctx, len >= 2 + 1 + 8 ? (int)(e[0] << 8 | e[1]) : -1, e, len);
        return st == COFFER_DONE ? COFFER_OK : st;
    }
    MDB_cursor *cur;
    st = cf_txn_index_cursor(txn, cls, &cur);
    if (st != COFFER_OK)
        return st;
    MDB_val k, v;
    int rc;
    for (rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); rc == 0; rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
        const uint8_t *e = k.mv_data;
        fn(ctx, k.mv_size >= 2 + 1 + 8 ? (int)(e[0] << 8 | e[1]) : -1, e, k.mv_size);
    }
    return rc == MDB_NOTFOUND ? COFFER_OK : walk_error(rc);
}

coffer_status cf_index_contains(coffer_txn *txn, coffer_class_id cls, const uint8_t *entry, size_t len)
{
    coffer_status st = cf_index_pending_flush(txn, cls, cf_index_pending_column(entry, len));
    if (st != COFFER_OK)
        return st;
    if (txn->db->sealed_index) {
        cf_itree_cursor tc;
        const uint8_t *e;
        size_t elen;
        st = cf_itree_seek(&tc, txn, cls, entry, len, &e, &elen);
        if (st == COFFER_DONE || (st == COFFER_OK && (elen != len || memcmp(e, entry, len) != 0)))
            return COFFER_ERR_NOT_FOUND;
        return st;
    }
    MDB_val k = {len, (void *)entry}, v;
    int rc = mdb_get(txn->mdb, txn->db->index_dbis[cls], &k, &v);
    if (rc == MDB_NOTFOUND)
        return COFFER_ERR_NOT_FOUND;
    return rc ? walk_error(rc) : COFFER_OK;
}

/* cf_index_drop_column over a sealed tree: seeks afresh after each delete. */
static coffer_status tree_drop_column(coffer_txn *txn, coffer_class_id cls, uint16_t column)
{
    uint8_t col[2], e[CF_INDEX_PREFIX_MAX + 8];
    cf_put_be16(col, column);
    for (;;) {
        cf_itree_cursor tc;
        const uint8_t *at;
        size_t len;
        coffer_status st = cf_itree_seek(&tc, txn, cls, col, 2, &at, &len);
        if (st == COFFER_DONE || (st == COFFER_OK && (len < 2 || memcmp(at, col, 2) != 0 || len > sizeof e)))
            return COFFER_OK;
        if (st == COFFER_OK) {
            memcpy(e, at, len);
            st = cf_itree_delete(txn, cls, e, len, NULL);
        }
        if (st != COFFER_OK)
            return st;
    }
}

coffer_status cf_index_drop_column(coffer_txn *txn, coffer_class_id cls, uint16_t column)
{
    cf_pk_map_forget(txn, cls);
    cf_index_pending_discard(txn, cls, column);
    if (txn->db->sealed_index)
        return tree_drop_column(txn, cls, column);
    MDB_cursor *cur;
    int rc = mdb_cursor_open(txn->mdb, txn->db->index_dbis[cls], &cur);
    if (rc != 0)
        return cf_error_mdb(rc, "cannot open a cursor");
    uint8_t col[2];
    cf_put_be16(col, column);
    /* Seek afresh after each delete: simple, and never steps a cursor
     * through pages that the delete rebalanced. */
    for (;;) {
        MDB_val k = {2, col}, v;
        rc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE);
        if (rc != 0)
            break;
        if (k.mv_size < 2 || memcmp(k.mv_data, col, 2) != 0) {
            rc = MDB_NOTFOUND;
            break;
        }
        rc = mdb_cursor_del(cur, 0);
        if (rc != 0)
            break;
    }
    mdb_cursor_close(cur);
    if (rc != 0 && rc != MDB_NOTFOUND)
        return cf_txn_write_error(txn, rc, "cannot drop an index");
    return COFFER_OK;
}

/* Moves every entry of `from` into the sub-database `name` (created, plain
 * keys) and drops `from`; `*to` is the new one. `join` turns a format-2 key
 * and duplicate into one plain key, else entries are copied as they are (in
 * order, so appended). */
static int move_entries(MDB_txn *txn, MDB_dbi from, const char *name, MDB_dbi *to_out, int join)
{
    MDB_dbi to;
    MDB_cursor *cur;
    int rc = mdb_dbi_open(txn, name, MDB_CREATE, &to);
    if (rc == 0)
        rc = mdb_cursor_open(txn, from, &cur);
    if (rc != 0)
        return rc;
    uint8_t buf[CF_INDEX_PREFIX_MAX + 8];
    MDB_val k, v, empty = {0, (void *)""};
    for (rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); rc == 0; rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
        if (join) {
            if (k.mv_size < 2 + 1 || k.mv_size > CF_INDEX_PREFIX_MAX || v.mv_size != 8) {
                rc = MDB_CORRUPTED;
                break;
            }
            memcpy(buf, k.mv_data, k.mv_size);
            memcpy(buf + k.mv_size, v.mv_data, 8);
            k = (MDB_val){k.mv_size + 8, buf};
            v = empty;
        }
        if ((rc = mdb_put(txn, to, &k, &v, join ? 0 : MDB_APPEND)) != 0)
            break;
    }
    mdb_cursor_close(cur);
    if (rc == MDB_NOTFOUND)
        rc = mdb_drop(txn, from, 1);
    if (rc == 0 && to_out)
        *to_out = to;
    return rc;
}

coffer_status cf_index_upgrade(MDB_txn *txn, const char *number, const char *scratch)
{
    MDB_dbi old, tmp;
    unsigned flags;
    int rc = mdb_dbi_open(txn, number, 0, &old);
    if (rc == MDB_NOTFOUND)
        return COFFER_OK; /* a class whose sub-databases a later open creates */
    if (rc == 0)
        rc = mdb_dbi_flags(txn, old, &flags);
    if (rc == 0 && !(flags & MDB_DUPSORT))
        return COFFER_OK;
    /* LMDB cannot rename a sub-database: move the entries out, recreate
     * it with plain keys, move them back. The duplicate-sorted one is only
     * read, then dropped whole. */
    if (rc == 0)
        rc = move_entries(txn, old, scratch, &tmp, 1);
    if (rc == 0)
        rc = move_entries(txn, tmp, number, NULL, 0);
    if (rc == MDB_CORRUPTED)
        return cf_error(COFFER_ERR_CORRUPTED, "index sub-database %s holds an entry that is not a format-2 index entry", number);
    return rc ? cf_error_mdb(rc, "cannot rewrite an index in file format 3") : COFFER_OK;
}
