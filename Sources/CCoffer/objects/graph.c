/* graph — links and backlinks, and the checks and side effects of storing a
 * value that may be a link, a nested object or a nested collection. Shares
 * sub-database 1 with the collections (docs/FORMAT.md): backlink keys
 * start with 'B'. */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "objects/cell.h"
#include "util/error.h"
#include "objects/graph.h"
#include "storage/object_store.h"
#include "storage/txn.h"

#define TAG_BACKLINK 'B'

static const cf_class *class_at(const coffer_txn *txn, coffer_class_id cls) { return &txn->db->schema->classes[cls]; }
static const cf_prop *prop_of(const coffer_txn *txn, const cf_slot *s) { return &class_at(txn, s->cls)->props[s->prop]; }

/* ---- storage ------------------------------------------------------------- */

coffer_status cf_graph_present(const coffer_txn *txn)
{
    if (!txn->db->has_graph)
        return COFFER_ERR_NOT_FOUND; /* a read-only file without collections */
    return COFFER_OK;
}

coffer_status cf_graph_get(coffer_txn *txn, const uint8_t *key, size_t klen, const uint8_t **data, size_t *len,
                               uint8_t **buf, size_t *cap, const char *what)
{
    coffer_status st = cf_graph_present(txn);
    if (st != COFFER_OK)
        return st;
    return cf_store_get(txn, txn->db->graph_dbi, CF_GRAPH_DBI, key, klen, data, len, buf, cap, what);
}

coffer_status cf_graph_put(coffer_txn *txn, const uint8_t *key, size_t klen, const uint8_t *data, size_t len)
{
    return cf_store_put(txn, txn->db->graph_dbi, CF_GRAPH_DBI, key, klen, data, len, 0, "cannot write a collection");
}

coffer_status cf_graph_del(coffer_txn *txn, const uint8_t *key, size_t klen)
{
    MDB_val k = {klen, (void *)key};
    int rc = mdb_del(txn->mdb, txn->db->graph_dbi, &k, NULL);
    if (rc == MDB_NOTFOUND)
        return COFFER_OK;
    return rc ? cf_txn_write_error(txn, rc, "cannot delete from a collection") : COFFER_OK;
}

coffer_status cf_graph_seek(MDB_cursor *cur, const uint8_t *key, size_t klen, MDB_val *k, MDB_val *v)
{
    *k = (MDB_val){klen, (void *)key};
    int rc = mdb_cursor_get(cur, k, v, MDB_SET_RANGE);
    if (rc == MDB_NOTFOUND)
        return COFFER_DONE;
    return rc ? cf_error_mdb(rc, "cannot read a collection") : COFFER_OK;
}

/* The first key in the graph at or after `prefix` that starts with it. */
coffer_status cf_graph_first(coffer_txn *txn, MDB_cursor *cur, const uint8_t *prefix, size_t plen, MDB_val *k, MDB_val *v)
{
    (void)txn;
    coffer_status st = cf_graph_seek(cur, prefix, plen, k, v);
    if (st == COFFER_OK && (k->mv_size < plen || memcmp(k->mv_data, prefix, plen) != 0))
        return COFFER_DONE;
    return st;
}

coffer_status cf_graph_cursor(coffer_txn *txn, MDB_cursor **cur)
{
    int rc = mdb_cursor_open(txn->mdb, txn->db->graph_dbi, cur);
    return rc ? cf_error_mdb(rc, "cannot open a collection cursor") : COFFER_OK;
}

void cf_graph_cursor_close(MDB_cursor *cur)
{
    if (cur)
        mdb_cursor_close(cur);
}

/* ---- messages ------------------------------------------------------------ */

const char *cf_slot_where(const coffer_txn *txn, const cf_slot *s, char *buf, size_t size)
{
    snprintf(buf, size, "class '%s', property '%s'", class_at(txn, s->cls)->name, prop_of(txn, s)->name);
    return buf;
}

int cf_graph_class_of_table(const coffer_db *db, uint32_t table)
{
    for (size_t i = 0; i < db->schema->nclasses; i++)
        if (db->schema->classes[i].table == table)
            return (int)i;
    return -1;
}

/* ---- backlinks ----------------------------------------------------------- */

size_t cf_backlink_prefix(uint32_t ttable, coffer_object_key tkey, int with_origin, uint32_t otable, uint16_t ocol, uint8_t *out)
{
    out[0] = TAG_BACKLINK;
    cf_put_be32(out + 1, ttable);
    cf_put_be64(out + 5, tkey);
    if (!with_origin)
        return 13;
    cf_put_be32(out + 13, otable);
    cf_put_be16(out + 17, ocol);
    return 19;
}

coffer_status cf_backlink_entry(coffer_txn *txn, const MDB_val *k, const MDB_val *v, cf_backlink *out)
{
    if (k->mv_size != 27)
        return cf_error(COFFER_ERR_CORRUPTED, "a backlink entry of %zu bytes", k->mv_size);
    const uint8_t *p = k->mv_data;
    out->otable = cf_get_be32(p + 13);
    out->ocol = (uint16_t)(p[17] << 8 | p[18]);
    out->okey = cf_get_be64(p + 19);
    const uint8_t *data;
    size_t len;
    uint8_t *buf = NULL;
    size_t cap = 0;
    coffer_status st = cf_store_open(txn, CF_GRAPH_DBI, k, v, &data, &len, &buf, &cap, "a backlink");
    if (st == COFFER_OK && len != 4)
        st = cf_error(COFFER_ERR_CORRUPTED, "a backlink count of %zu bytes", len);
    if (st == COFFER_OK)
        out->count = (uint32_t)cf_get_le(data, 4);
    free(buf);
    return st;
}

/* One cursor finds the entry and changes it where it lies: a count keeps
 * its size, so it is rewritten in place (MDB_CURRENT) without a second
 * search of the tree. */
coffer_status cf_backlink_change(coffer_txn *txn, uint32_t ttable, coffer_object_key tkey, uint32_t otable, uint16_t ocol,
                                 coffer_object_key okey, int delta)
{
    coffer_status st = COFFER_OK;
    uint8_t key[27];
    cf_backlink_prefix(ttable, tkey, 1, otable, ocol, key);
    cf_put_be64(key + 19, okey);
    MDB_cursor *cur;
    int rc = mdb_cursor_open(txn->mdb, txn->db->graph_dbi, &cur);
    if (rc != 0)
        return cf_error_mdb(rc, "cannot open a collection cursor");
    MDB_val k = {sizeof key, key}, v;
    rc = mdb_cursor_get(cur, &k, &v, MDB_SET_KEY);
    int found = rc == 0;
    uint32_t count = 0;
    if (found) {
        const uint8_t *data;
        size_t len;
        uint8_t *buf = NULL;
        size_t cap = 0;
        st = cf_store_open(txn, CF_GRAPH_DBI, &k, &v, &data, &len, &buf, &cap, "a backlink");
        if (st == COFFER_OK && len == 4)
            count = (uint32_t)cf_get_le(data, 4);
        free(buf);
    } else if (rc != MDB_NOTFOUND) {
        st = cf_error_mdb(rc, "a backlink");
    }
    if (st != COFFER_OK || (delta < 0 && count == 0)) { /* nothing to drop */
        mdb_cursor_close(cur);
        return st;
    }
    count = delta < 0 ? count - 1 : count + 1;
    if (count == 0) {
        rc = mdb_cursor_del(cur, 0);
    } else {
        uint8_t plain[4];
        cf_put_le(plain, count, 4);
        k = (MDB_val){sizeof key, key};
        v = (MDB_val){sizeof plain + cf_store_overhead(txn->db), NULL};
        rc = mdb_cursor_put(cur, &k, &v, (found ? MDB_CURRENT : 0) | MDB_RESERVE);
        if (rc == 0)
            cf_store_wrap(txn->db, CF_GRAPH_DBI, key, sizeof key, v.mv_data, plain, sizeof plain);
    }
    mdb_cursor_close(cur);
    return rc ? cf_txn_write_error(txn, rc, count ? "cannot write a collection" : "cannot delete from a collection") : COFFER_OK;
}

coffer_status cf_backlink_count(coffer_txn *txn, uint32_t ttable, coffer_object_key tkey, int with_origin, uint32_t otable,
                                uint16_t ocol, uint64_t *out)
{
    *out = 0;
    if (cf_graph_present(txn) != COFFER_OK)
        return COFFER_OK;
    uint8_t prefix[27];
    size_t plen = cf_backlink_prefix(ttable, tkey, with_origin, otable, ocol, prefix);
    MDB_cursor *cur;
    coffer_status st = cf_graph_cursor(txn, &cur);
    if (st != COFFER_OK)
        return st;
    MDB_val k, v;
    st = cf_graph_first(txn, cur, prefix, plen, &k, &v);
    while (st == COFFER_OK) {
        cf_backlink e;
        st = cf_backlink_entry(txn, &k, &v, &e);
        if (st != COFFER_OK)
            break;
        *out += e.count;
        int rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT);
        if (rc == MDB_NOTFOUND || (rc == 0 && (k.mv_size < plen || memcmp(k.mv_data, prefix, plen) != 0)))
            st = COFFER_DONE;
        else if (rc != 0)
            st = cf_error_mdb(rc, "cannot read backlinks");
    }
    mdb_cursor_close(cur);
    return st == COFFER_DONE ? COFFER_OK : st;
}

coffer_status cf_graph_unlink_all(coffer_txn *txn, uint32_t ttable, coffer_object_key tkey)
{
    if (cf_graph_present(txn) != COFFER_OK)
        return COFFER_OK;
    uint8_t prefix[27];
    size_t plen = cf_backlink_prefix(ttable, tkey, 0, 0, 0, prefix);
    MDB_cursor *cur;
    coffer_status st = cf_graph_cursor(txn, &cur);
    if (st != COFFER_OK)
        return st;
    for (;;) {
        MDB_val k, v;
        st = cf_graph_first(txn, cur, prefix, plen, &k, &v);
        if (st != COFFER_OK)
            break;
        uint8_t entry[27];
        memcpy(entry, k.mv_data, 27 <= k.mv_size ? 27 : k.mv_size);
        cf_backlink e;
        st = cf_backlink_entry(txn, &k, &v, &e);
        if (st != COFFER_OK)
            break;
        int ocls = cf_graph_class_of_table(txn->db, e.otable);
        if (ocls >= 0)
            st = cf_object_unlink(txn, (coffer_class_id)ocls, e.ocol, e.okey, ttable, tkey);
        if (st != COFFER_OK && st != COFFER_ERR_NOT_FOUND)
            break;
        /* Whatever is left of the entry (an origin that is gone) goes too. */
        st = cf_graph_del(txn, entry, sizeof entry);
        if (st != COFFER_OK)
            break;
    }
    mdb_cursor_close(cur);
    return st == COFFER_DONE ? COFFER_OK : st;
}

/* ---- checking values ----------------------------------------------------- */


static int is_scalar(coffer_type t) { return t >= COFFER_TYPE_BOOL && t <= COFFER_TYPE_DECIMAL128; }

/* Resolves a link value (link or object handle) to class and key. */
coffer_status cf_graph_link_target(coffer_txn *txn, const cf_slot *s, const coffer_value *v, coffer_class_id *cls,
                                 coffer_object_key *key)
{
    char w[200];
    if (v->type == COFFER_TYPE_OBJECT) {
        const coffer_object *o = v->u.object;
        if (!o || o->magic != CF_OBJ_MAGIC || !o->in_use)
            return cf_error(COFFER_ERR_INVALID_ARGUMENT, "%s: the object handle is NULL, released or not an object",
                            cf_slot_where(txn, s, w, sizeof w));
        if (o->txn != txn)
            return cf_error(COFFER_ERR_MISUSE, "%s: the object belongs to another %s", cf_slot_where(txn, s, w, sizeof w),
                            o->txn && o->txn->db == txn->db ? "transaction" : "database");
        if (o->deleted)
            return cf_error(COFFER_ERR_NOT_FOUND, "%s: the object was deleted", cf_slot_where(txn, s, w, sizeof w));
        *cls = o->cls;
        *key = o->key;
        return COFFER_OK;
    }
    if (v->u.link.class_id >= txn->db->schema->nclasses)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "%s: link to class id %u, which is out of range", cf_slot_where(txn, s, w, sizeof w),
                        v->u.link.class_id);
    *cls = v->u.link.class_id;
    *key = v->u.link.key;
    return COFFER_OK;
}

static coffer_status check_link(coffer_txn *txn, const cf_slot *s, const coffer_value *v, int any_class)
{
    const cf_prop *p = prop_of(txn, s);
    char w[200];
    coffer_class_id cls = 0;
    coffer_object_key key = 0;
    coffer_status st = cf_graph_link_target(txn, s, v, &cls, &key);
    if (st != COFFER_OK)
        return st;
    const cf_class *t = class_at(txn, cls);
    if (!any_class && (int)cls != p->target)
        return cf_error(COFFER_ERR_TYPE, "%s: expected an object of class '%s', got one of class '%s'", cf_slot_where(txn, s, w, sizeof w),
                        p->object_class, t->name);
    if (cf_class_embedded(t))
        return cf_error(COFFER_ERR_TYPE, "%s: cannot link to an existing embedded object of class '%s'; give its fields to create one",
                        cf_slot_where(txn, s, w, sizeof w), t->name);
    coffer_status found = cf_objects_exists(txn, cls, key);
    if (found == COFFER_ERR_NOT_FOUND)
        return cf_error(COFFER_ERR_NOT_FOUND, "%s: class '%s' has no object with key %" PRIu64, cf_slot_where(txn, s, w, sizeof w), t->name,
                        key);
    return found;
}

static coffer_status check_nested_items(coffer_txn *txn, const cf_slot *s, const coffer_value *v, int depth)
{
    char w[200];
    if (depth > COFFER_MAX_NESTING)
        return cf_error(COFFER_ERR_LIMIT, "%s: collections nest %d levels deep; the limit is %d", cf_slot_where(txn, s, w, sizeof w), depth,
                        COFFER_MAX_NESTING);
    cf_slot e = *s;
    e.depth = depth;
    e.element = 1;
    if (v->type == COFFER_TYPE_LIST) {
        if (v->u.list.count && !v->u.list.items)
            return cf_error(COFFER_ERR_INVALID_ARGUMENT, "%s: list items are NULL but count is %zu", cf_slot_where(txn, s, w, sizeof w),
                            v->u.list.count);
        for (size_t i = 0; i < v->u.list.count; i++) {
            coffer_status st = cf_graph_check(txn, &e, &v->u.list.items[i]);
            if (st != COFFER_OK)
                return st;
        }
        return COFFER_OK;
    }
    if (v->u.map.count && !v->u.map.entries)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "%s: map entries are NULL but count is %zu", cf_slot_where(txn, s, w, sizeof w),
                        v->u.map.count);
    for (size_t i = 0; i < v->u.map.count; i++) {
        coffer_status st = cf_map_key_check(txn, s, &v->u.map.entries[i].key);
        if (st == COFFER_OK)
            st = cf_graph_check(txn, &e, &v->u.map.entries[i].value);
        if (st != COFFER_OK)
            return st;
    }
    return COFFER_OK;
}

coffer_status cf_graph_check(coffer_txn *txn, const cf_slot *s, const coffer_value *v)
{
    const cf_class *c = class_at(txn, s->cls);
    const cf_prop *p = prop_of(txn, s);
    char w[200];
    if (!s->element && !s->mixed && cf_prop_is_collection(p)) {
        int want = p->collection == COFFER_COLLECTION_MAP ? COFFER_TYPE_MAP : COFFER_TYPE_LIST;
        if (v->type == COFFER_TYPE_NULL)
            return COFFER_OK; /* empties it */
        if ((int)v->type != want)
            return cf_error(COFFER_ERR_TYPE, "%s: expected a %s value, got %s", cf_slot_where(txn, s, w, sizeof w),
                            want == COFFER_TYPE_MAP ? "map" : "list", coffer_type_name(v->type));
        return check_nested_items(txn, s, v, 1);
    }
    coffer_type t = s->mixed ? COFFER_TYPE_MIXED : p->type;
    if (v->type == COFFER_TYPE_NULL) {
        int nullable = s->mixed || t == COFFER_TYPE_MIXED || cf_prop_optional(p);
        if (!nullable)
            return cf_error(COFFER_ERR_TYPE, "%s: null is not allowed in %s", cf_slot_where(txn, s, w, sizeof w),
                            s->element ? "this collection" : "a required property");
        return COFFER_OK;
    }
    if (t == COFFER_TYPE_LINK) {
        if (v->type == COFFER_TYPE_LINK || v->type == COFFER_TYPE_OBJECT)
            return check_link(txn, s, v, 0);
        if (v->type == COFFER_TYPE_FIELDS)
            return cf_object_check_fields(txn, (coffer_class_id)p->target, v->u.fields.fields, v->u.fields.count, s->policy,
                                          s->depth);
        return cf_error(COFFER_ERR_TYPE, "%s: expected a link to class '%s', got %s", cf_slot_where(txn, s, w, sizeof w), p->object_class,
                        coffer_type_name(v->type));
    }
    if (t == COFFER_TYPE_MIXED) {
        if (v->type == COFFER_TYPE_LINK || v->type == COFFER_TYPE_OBJECT)
            return check_link(txn, s, v, 1);
        if (v->type == COFFER_TYPE_LIST || v->type == COFFER_TYPE_MAP) {
            cf_slot e = *s;
            e.mixed = 1;
            return check_nested_items(txn, &e, v, s->depth + 1);
        }
        if (!is_scalar(v->type))
            return cf_error(COFFER_ERR_TYPE, "%s: a mixed value cannot hold %s", cf_slot_where(txn, s, w, sizeof w), coffer_type_name(v->type));
        cf_prop as = *p;
        as.type = v->type;
        return cf_value_check_scalar(c, &as, v);
    }
    if (v->type != t)
        return cf_error(COFFER_ERR_TYPE, "%s: expected %s, got %s", cf_slot_where(txn, s, w, sizeof w), coffer_type_name(t),
                        coffer_type_name(v->type));
    return cf_value_check_scalar(c, p, v);
}

/* ---- storing and releasing values ---------------------------------------- */

static uint16_t origin_column(const coffer_txn *txn, const cf_slot *s) { return prop_of(txn, s)->column; }

coffer_status cf_graph_store(coffer_txn *txn, const cf_slot *s, const coffer_value *v, coffer_value *out)
{
    const cf_prop *p = prop_of(txn, s);
    uint32_t otable = class_at(txn, s->cls)->table;
    coffer_status st;
    switch (v->type) {
    case COFFER_TYPE_LINK:
    case COFFER_TYPE_OBJECT:
    case COFFER_TYPE_FIELDS: {
        coffer_class_id cls = 0;
        coffer_object_key key = 0;
        if (v->type == COFFER_TYPE_FIELDS) {
            cls = (coffer_class_id)p->target;
            st = cf_object_create_nested(txn, cls, v->u.fields.fields, v->u.fields.count, s->policy, s->depth, &key);
        } else {
            st = cf_graph_link_target(txn, s, v, &cls, &key);
        }
        if (st != COFFER_OK)
            return st;
        uint32_t ttable = class_at(txn, cls)->table;
        st = cf_backlink_change(txn, ttable, key, otable, origin_column(txn, s), s->key, +1);
        *out = cf_stored_link(ttable, key);
        return st;
    }
    case COFFER_TYPE_LIST:
    case COFFER_TYPE_MAP: {
        uint64_t id;
        cf_slot e = *s;
        e.mixed = 1;
        st = cf_collection_create(txn, &e, v->type == COFFER_TYPE_LIST ? COFFER_COLLECTION_LIST : COFFER_COLLECTION_MAP,
                                  s->depth + 1, v, &id);
        *out = cf_stored_nested(v->type, id);
        return st;
    }
    default:
        *out = *v;
        return COFFER_OK;
    }
}

coffer_status cf_graph_release(coffer_txn *txn, const cf_slot *s, const coffer_value *v)
{
    if (v->type == COFFER_TYPE_LINK) {
        uint32_t otable = class_at(txn, s->cls)->table;
        coffer_status st = cf_backlink_change(txn, v->u.link.class_id, v->u.link.key, otable, origin_column(txn, s), s->key, -1);
        if (st != COFFER_OK)
            return st;
        int cls = cf_graph_class_of_table(txn->db, v->u.link.class_id);
        int being_deleted = txn->deleting_table == v->u.link.class_id && txn->deleting_key == v->u.link.key;
        if (cls >= 0 && cf_class_embedded(class_at(txn, (coffer_class_id)cls)) && !being_deleted) {
            st = cf_object_delete_key(txn, (coffer_class_id)cls, v->u.link.key);
            return st == COFFER_ERR_NOT_FOUND ? COFFER_OK : st;
        }
        return COFFER_OK;
    }
    if (v->type == COFFER_TYPE_LIST || v->type == COFFER_TYPE_MAP) {
        cf_slot e = *s;
        e.mixed = 1;
        return cf_collection_delete(txn, &e, v->u.link.key);
    }
    return COFFER_OK;
}

coffer_status cf_graph_public(coffer_txn *txn, coffer_value *v)
{
    if (v->type == COFFER_TYPE_LINK) {
        int cls = cf_graph_class_of_table(txn->db, v->u.link.class_id);
        v->u.link.class_id = cls < 0 ? UINT32_MAX : (uint32_t)cls;
        return COFFER_OK;
    }
    if (v->type == COFFER_TYPE_LIST || v->type == COFFER_TYPE_MAP) {
        uint64_t n;
        coffer_status st = cf_collection_count(txn, v->u.link.key, &n);
        if (st != COFFER_OK)
            return st;
        coffer_type t = v->type;
        memset(&v->u, 0, sizeof v->u);
        v->type = t;
        if (t == COFFER_TYPE_LIST)
            v->u.list.count = (size_t)n;
        else
            v->u.map.count = (size_t)n;
    }
    return COFFER_OK;
}

/* ---- map keys ------------------------------------------------------------ */

coffer_status cf_map_key_check(const coffer_txn *txn, const cf_slot *s, const coffer_bytes *key)
{
    char w[200], q[96];
    const unsigned char *k = key->data;
    if (!k && key->size)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "%s: map key is NULL", cf_slot_where(txn, s, w, sizeof w));
    if (key->size == 0)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "%s: map keys must not be empty", cf_slot_where(txn, s, w, sizeof w));
    if (key->size > COFFER_MAX_VALUE_SIZE)
        return cf_error(COFFER_ERR_LIMIT, "%s: a map key of %zu bytes is too long", cf_slot_where(txn, s, w, sizeof w), key->size);
    if (k[0] == '$')
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "%s: map key %s starts with '$'", cf_slot_where(txn, s, w, sizeof w),
                        cf_quote(q, sizeof q, key->data, key->size < 48 ? key->size : 48));
    if (memchr(k, '.', key->size))
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "%s: map key %s contains '.'", cf_slot_where(txn, s, w, sizeof w),
                        cf_quote(q, sizeof q, key->data, key->size < 48 ? key->size : 48));
    cf_prop as = *prop_of(txn, s);
    as.type = COFFER_TYPE_STRING;
    coffer_value kv = {.type = COFFER_TYPE_STRING};
    kv.u.string = *key;
    coffer_status st = cf_value_check_scalar(class_at(txn, s->cls), &as, &kv);
    if (st != COFFER_OK)
        return cf_error(st, "%s: map key is not valid UTF-8 or contains NUL", cf_slot_where(txn, s, w, sizeof w));
    return COFFER_OK;
}
