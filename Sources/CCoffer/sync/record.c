/* record — the commit hook of synced files. For a local commit it reads the
 * commit's change-log entry and writes, in the same transaction, one outbox
 * changeset with the values as the commit left them, stamped with the next
 * hybrid-logical-clock value; and it keeps each object's merge state in step
 * (creation stamp, property stamps; lists, sets and maps in
 * record_collections.c). A remote commit (an integration) writes only the
 * merge state the integration changed. Also the first sync of a file. */
#include "sync/record.h"

#include <stdlib.h>
#include <string.h>

#include "crypto/crypto.h"
#include "storage/changelog.h"
#include "storage/record.h"
#include "sync/ghost.h"
#include "sync/hlc.h"
#include "sync/recorder.h"
#include "sync/state.h"
#include "sync/values.h"
#include "util/error.h"

int cf_sync_class_of_table(const coffer_db *db, uint32_t table)
{
    for (size_t i = 0; i < db->schema->nclasses; i++)
        if (db->schema->classes[i].table == table)
            return (int)i;
    return -1;
}

int cf_sync_prop_of_column(const coffer_db *db, int cls, uint32_t column)
{
    const cf_class *c = &db->schema->classes[cls];
    for (size_t i = 0; i < c->nprops; i++)
        if (c->props[i].column == column && c->props[i].type != COFFER_TYPE_LINKING_OBJECTS)
            return (int)i;
    return -1;
}

/* ------------------------------------------------------------------------ */
/* Objects                                                                   */
/* ------------------------------------------------------------------------ */

static int is_synced_scalar(const cf_class *c, size_t i)
{
    const cf_prop *p = &c->props[i];
    return (int)i != c->pk && p->type != COFFER_TYPE_LINKING_OBJECTS && !cf_prop_is_collection(p);
}

/* Emits CREATE or UPDATE of the scalar properties `want` selects. */
static coffer_status emit_fields(recorder *r, coffer_object *obj, cf_sync_obj *o, uint8_t op, const uint8_t *want)
{
    coffer_class_id cls = coffer_object_class(obj);
    const cf_class *c = &r->txn->db->schema->classes[cls];
    uint64_t n = 0;
    coffer_status st = COFFER_OK;
    r->val.len = 0;
    for (size_t i = 0; i < c->nprops && st == COFFER_OK; i++) {
        if (!want[i] || !is_synced_scalar(c, i))
            continue;
        cf_wire_string(&r->val, c->props[i].name, strlen(c->props[i].name));
        st = cf_sync_encode_prop(obj, (coffer_property_id)i, &r->val);
        cf_sync_prop *p = cf_sync_prop_of(o, c->props[i].name);
        if (!p)
            return no_memory();
        p->stamp = r->stamp;
        n++;
    }
    if (st != COFFER_OK || (n == 0 && op == CF_OP_UPDATE))
        return st;
    cf_cs_begin_change(&r->cs, op, c->name, pk_of(o));
    cf_wire_varint(&r->cs.body, n);
    cf_buf_put(&r->cs.body, r->val.p, r->val.len);
    o->dirty = 1;
    return COFFER_OK;
}

static coffer_status record_collections(recorder *r, coffer_object *obj, cf_sync_obj *o, const uint8_t *want, int fresh)
{
    const cf_class *c = &r->txn->db->schema->classes[coffer_object_class(obj)];
    coffer_status st = COFFER_OK;
    for (size_t i = 0; i < c->nprops && st == COFFER_OK; i++) {
        const cf_prop *p = &c->props[i];
        if (!want[i] || p->type == COFFER_TYPE_LINKING_OBJECTS || !cf_prop_is_collection(p))
            continue;
        if (p->collection == COFFER_COLLECTION_LIST)
            st = cf_rec_list(r, obj, o, (coffer_property_id)i, fresh);
        else
            st = cf_rec_set_or_map(r, obj, o, (coffer_property_id)i);
    }
    return st;
}

/* A local create of an object whose ghost kept values of a concurrent
 * life (stamped above its tombstone): the service would show them in this
 * new life, which starts here without them, so the create removes them (a
 * list erase, a set or map remove each) and keeps the list's element ids as
 * anchors of later inserts; then the ghost goes. */
static coffer_status supersede_ghost(recorder *r, coffer_class_id cls, cf_sync_obj *o)
{
    const cf_class *c = &r->txn->db->schema->classes[cls];
    cf_sync_obj *g;
    coffer_status st = cf_sync_ghost_get(r->txn, c->table, pk_of(o), &g);
    if (st != COFFER_OK || !g)
        return st;
    for (size_t i = 0; i < g->nprops && st == COFFER_OK; i++) {
        cf_sync_prop *gp = &g->props[i];
        int prop = cf_sync_prop_named(c, (cf_slice){(const uint8_t *)gp->name, strlen(gp->name)});
        cf_sync_prop *p = prop >= 0 && (gp->nelems || gp->nitems) ? cf_sync_prop_of(o, gp->name) : NULL;
        if (prop < 0 || (!gp->nelems && !gp->nitems))
            continue;
        if (!p) {
            st = no_memory();
            break;
        }
        /* The new elements have the largest ids: the ghost's follow them. */
        for (size_t e = 0; e < gp->nelems; e++) {
            cf_sync_elem *el = cf_sync_elem_insert(p, p->nelems);
            if (!el) {
                st = no_memory();
                break;
            }
            el->id = gp->elems[e].id;
            el->stamp = gp->elems[e].stamp;
            el->erased = 1;
            if (gp->elems[e].erased || !gp->elems[e].value)
                continue;
            cf_cs_begin_change(&r->cs, CF_OP_LIST_ERASE, class_name(r, cls), pk_of(o));
            cf_wire_string(&r->cs.body, gp->name, strlen(gp->name));
            cf_cs_elem_id(&r->cs.body, &el->id);
        }
        int is_map = c->props[prop].collection == COFFER_COLLECTION_MAP;
        for (size_t e = 0; e < gp->nitems && st == COFFER_OK; e++) {
            cf_sync_item *gi = &gp->items[e];
            cf_sync_item *it = cf_sync_item_find(p, gi->key, gi->key_len, 0);
            if (!gi->present || (it && it->present))
                continue; /* the create's own add is later */
            if (!(it = cf_sync_item_find(p, gi->key, gi->key_len, 1))) {
                st = no_memory();
                break;
            }
            it->present = 0;
            it->stamp = r->stamp;
            cf_cs_begin_change(&r->cs, is_map ? CF_OP_MAP_REMOVE : CF_OP_SET_REMOVE, class_name(r, cls), pk_of(o));
            cf_wire_string(&r->cs.body, gp->name, strlen(gp->name));
            if (is_map)
                cf_wire_bytes(&r->cs.body, gi->key, gi->key_len);
            else
                cf_buf_put(&r->cs.body, gi->key, gi->key_len);
        }
    }
    if (st == COFFER_OK)
        st = cf_sync_ghost_del(r->txn, c->table, pk_of(o));
    cf_sync_obj_free(g);
    return st;
}

static coffer_status record_insert(recorder *r, coffer_object *obj)
{
    coffer_class_id cls = coffer_object_class(obj);
    const cf_class *c = &r->txn->db->schema->classes[cls];
    cf_buf pk = {0};
    cf_sync_obj *o;
    coffer_status st = cf_sync_encode_pk(obj, &pk);
    if (st == COFFER_OK)
        st = cf_sync_obj_make(r->cache, c->table, coffer_object_key_of(obj), (cf_slice){pk.p, pk.len}, &o);
    free(pk.p);
    if (st != COFFER_OK)
        return st;
    o->created = r->stamp;
    /* The tombstone stays: changes stamped below it are of an earlier life. */
    uint8_t *all = malloc(c->nprops + 1);
    if (!all)
        return no_memory();
    memset(all, 1, c->nprops + 1);
    if (st == COFFER_OK)
        st = emit_fields(r, obj, o, CF_OP_CREATE, all);
    if (st == COFFER_OK)
        st = record_collections(r, obj, o, all, 1);
    if (st == COFFER_OK)
        st = supersede_ghost(r, cls, o);
    free(all);
    return st;
}

static coffer_status record_delete(recorder *r, uint32_t table, uint64_t key, int cls)
{
    cf_sync_obj *o;
    coffer_status st = cf_sync_obj_get(r->txn, r->cache, table, key, &o);
    if (st != COFFER_OK || !o)
        return st;
    cf_cs_begin_change(&r->cs, CF_OP_DELETE, class_name(r, (coffer_class_id)cls), pk_of(o));
    o->gone = 1;
    o->dirty = 1;
    if ((st = cf_sync_tombstone_put(r->txn, table, pk_of(o), &r->stamp)) != COFFER_OK)
        return st;
    /* Its lists' element ids stay, as a ghost: inserts made concurrently by
     * clients that had not seen the delete are anchored on them. */
    cf_sync_obj *g;
    if ((st = cf_sync_ghost_make(table, pk_of(o), &g)) != COFFER_OK)
        return st;
    for (size_t i = 0; i < o->nprops && st == COFFER_OK; i++) {
        cf_sync_prop *gp = o->props[i].nelems ? cf_sync_prop_of(g, o->props[i].name) : NULL;
        for (size_t e = 0; gp && e < o->props[i].nelems; e++) {
            cf_sync_elem *el = cf_sync_elem_insert(gp, gp->nelems);
            if (!el) {
                st = no_memory();
                break;
            }
            el->id = o->props[i].elems[e].id;
            el->stamp = o->props[i].elems[e].stamp;
            el->erased = o->props[i].elems[e].erased;
        }
        if (o->props[i].nelems && !gp)
            st = no_memory();
    }
    if (st == COFFER_OK)
        st = cf_sync_ghost_put(r->txn, g);
    cf_sync_obj_free(g);
    return st;
}

/* Every object of `table` was deleted: each one that has a state. */
static coffer_status record_clear(recorder *r, uint32_t table, int cls)
{
    uint64_t *keys = NULL;
    size_t n = 0, cap = 0;
    MDB_cursor *cur;
    int rc = mdb_cursor_open(r->txn->mdb, r->txn->db->meta_dbi, &cur);
    if (rc != 0)
        return cf_error_mdb(rc, "cannot read the sync object states");
    uint8_t first[6] = {'S', 's'};
    cf_put_be32(first + 2, table);
    MDB_val k = {sizeof first, first}, v;
    coffer_status st = COFFER_OK;
    for (rc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE); rc == 0; rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
        if (k.mv_size != 14 || memcmp(k.mv_data, first, 6) != 0)
            break;
        uint64_t *grown = cf_grow(keys, n, &cap, sizeof *keys, 64);
        if (!grown) {
            st = no_memory();
            break;
        }
        keys = grown;
        keys[n++] = cf_get_be64((const uint8_t *)k.mv_data + 6);
    }
    mdb_cursor_close(cur);
    for (size_t i = 0; i < n && st == COFFER_OK; i++)
        st = record_delete(r, table, keys[i], cls);
    free(keys);
    return st;
}

static coffer_status record_modify(recorder *r, const cf_log_object *lo, int cls)
{
    coffer_object *obj;
    coffer_status st = coffer_object_get(r->txn, (coffer_class_id)cls, lo->key, &obj);
    if (st == COFFER_ERR_NOT_FOUND) {
        coffer_clear_error();
        return COFFER_OK;
    }
    if (st != COFFER_OK)
        return st;
    const cf_class *c = &r->txn->db->schema->classes[cls];
    cf_sync_obj *o;
    if ((st = cf_sync_obj_get(r->txn, r->cache, c->table, lo->key, &o)) != COFFER_OK)
        return st;
    if (!o) /* not recorded before (written without sync): all of it is new */
        return record_insert(r, obj);
    uint8_t *want = calloc(c->nprops + 1, 1);
    if (!want)
        return no_memory();
    for (size_t i = 0; i < lo->ncolumns; i++) {
        int p = cf_sync_prop_of_column(r->txn->db, cls, lo->columns[i]);
        if (p >= 0)
            want[p] = 1;
    }
    st = emit_fields(r, obj, o, CF_OP_UPDATE, want);
    if (st == COFFER_OK)
        st = record_collections(r, obj, o, want, 0);
    free(want);
    coffer_object_release(obj);
    return st;
}

/* ------------------------------------------------------------------------ */
/* Embedded objects: a change is a change of the top-level owner's property  */
/* ------------------------------------------------------------------------ */

/* The object that holds embedded object `obj`, and through which property. */
static coffer_status owner_of(coffer_txn *txn, coffer_object *obj, coffer_object **owner, coffer_property_id *prop)
{
    const cf_schema *s = txn->db->schema;
    coffer_class_id cls = coffer_object_class(obj);
    for (size_t c = 0; c < s->nclasses; c++)
        for (size_t p = 0; p < s->classes[c].nprops; p++) {
            const cf_prop *cp = &s->classes[c].props[p];
            if (cp->type != COFFER_TYPE_LINK || cp->target != (int)cls)
                continue;
            coffer_iter *it;
            coffer_status st = coffer_object_backlinks_from(obj, (coffer_class_id)c, (coffer_property_id)p, &it);
            if (st != COFFER_OK)
                return st;
            coffer_object *o = NULL;
            st = coffer_iter_next(it, &o);
            if (st == COFFER_OK && o) {
                coffer_class_id oc = coffer_object_class(o);
                coffer_object_key ok = coffer_object_key_of(o);
                coffer_iter_free(it);
                *prop = (coffer_property_id)p;
                return coffer_object_get(txn, oc, ok, owner);
            }
            coffer_iter_free(it);
        }
    return COFFER_ERR_NOT_FOUND;
}

static int logged_as(const cf_log_entry *e, uint32_t table, uint64_t key, uint32_t kinds)
{
    for (size_t i = 0; i < e->nobjects; i++)
        if (e->objects[i].table == table && e->objects[i].key == key && (e->objects[i].kind & kinds))
            return 1;
    return 0;
}

static coffer_status record_embedded(recorder *r, const cf_log_object *lo, int cls)
{
    coffer_object *obj, *owner = NULL;
    coffer_property_id prop = 0;
    coffer_status st = coffer_object_get(r->txn, (coffer_class_id)cls, lo->key, &obj);
    while (st == COFFER_OK) {
        st = owner_of(r->txn, obj, &owner, &prop);
        if (st != COFFER_OK)
            break;
        if (!cf_class_embedded(&r->txn->db->schema->classes[coffer_object_class(owner)]))
            break;
        obj = owner;
    }
    if (st == COFFER_ERR_NOT_FOUND) { /* deleted with its owner, or an orphan */
        coffer_clear_error();
        return COFFER_OK;
    }
    if (st != COFFER_OK)
        return st;
    const cf_class *oc = &r->txn->db->schema->classes[coffer_object_class(owner)];
    uint64_t okey = coffer_object_key_of(owner);
    /* A new or deleted owner is recorded whole; a changed property of it is recorded through its own column. */
    if (logged_as(r->entry, oc->table, okey, CF_LOG_INSERT | CF_LOG_DELETE))
        return COFFER_OK;
    for (size_t i = 0; i < r->entry->nobjects; i++) {
        const cf_log_object *e = &r->entry->objects[i];
        if (e->table == oc->table && e->key == okey && e->kind == CF_LOG_MODIFY)
            for (size_t k = 0; k < e->ncolumns; k++)
                if (e->columns[k] == oc->props[prop].column)
                    return COFFER_OK;
    }
    cf_sync_obj *o;
    if ((st = cf_sync_obj_get(r->txn, r->cache, oc->table, okey, &o)) != COFFER_OK || !o)
        return st;
    if (!cf_prop_is_collection(&oc->props[prop])) {
        uint8_t *want = calloc(oc->nprops + 1, 1);
        if (!want)
            return no_memory();
        want[prop] = 1;
        st = emit_fields(r, owner, o, CF_OP_UPDATE, want);
        free(want);
        return st;
    }
    /* A map of embedded objects: the entry's value changed, which the map's diff finds. */
    if (oc->props[prop].collection == COFFER_COLLECTION_MAP)
        return cf_rec_set_or_map(r, owner, o, prop);
    /* An element of a list of embedded objects: set it again. */
    coffer_list *list;
    uint64_t n;
    if ((st = coffer_object_get_list(owner, prop, &list)) != COFFER_OK)
        return st;
    st = coffer_list_count(list, &n);
    cf_sync_prop *p = cf_sync_prop_of(o, oc->props[prop].name);
    for (uint64_t i = 0; i < n && st == COFFER_OK && p; i++) {
        coffer_value v;
        if ((st = coffer_list_get(list, i, &v)) != COFFER_OK || v.type != COFFER_TYPE_LINK || v.u.link.key != coffer_object_key_of(obj))
            continue;
        pendings pd = {0};
        if ((st = cf_rec_list_touch(r, p, i, CF_OP_LIST_SET, &pd)) == COFFER_OK)
            st = cf_rec_emit_list(r, coffer_object_class(owner), o, p, list, &pd);
        free(pd.items);
        o->dirty = 1;
        break;
    }
    coffer_list_release(list);
    return st == COFFER_OK && !p ? no_memory() : st;
}

/* ------------------------------------------------------------------------ */
/* The commit hook                                                           */
/* ------------------------------------------------------------------------ */

static coffer_status record_entry(recorder *r)
{
    coffer_status st = COFFER_OK;
    const cf_log_entry *e = r->entry;
    for (size_t i = 0; i < e->nobjects && st == COFFER_OK; i++) {
        const cf_log_object *lo = &e->objects[i];
        int cls = cf_sync_class_of_table(r->txn->db, lo->table);
        if (cls < 0)
            continue; /* a class this handle does not see */
        if (cf_class_embedded(&r->txn->db->schema->classes[cls])) {
            if (lo->kind == CF_LOG_MODIFY || lo->kind == CF_LOG_INSERT)
                st = record_embedded(r, lo, cls);
            continue;
        }
        switch (lo->kind) {
        case CF_LOG_INSERT: {
            coffer_object *obj;
            st = coffer_object_get(r->txn, (coffer_class_id)cls, lo->key, &obj);
            if (st == COFFER_OK)
                st = record_insert(r, obj);
            else if (st == COFFER_ERR_NOT_FOUND) {
                coffer_clear_error();
                st = COFFER_OK;
            }
            break;
        }
        case CF_LOG_DELETE:
            st = record_delete(r, lo->table, lo->key, cls);
            break;
        case CF_LOG_CLEAR:
            st = record_clear(r, lo->table, cls);
            break;
        default:
            st = record_modify(r, lo, cls);
            break;
        }
    }
    return st;
}

/* Records `entry` as the local changeset of `version`. */
static coffer_status record_local(coffer_txn *txn, cf_sync_cache *cache, const uint8_t client[CF_SYNC_ID_SIZE],
                                  const cf_log_entry *entry, uint64_t version)
{
    cf_sync_progress prog;
    coffer_status st = cf_sync_progress_read(txn, &prog);
    if (st != COFFER_OK)
        return st;
    recorder r = {.txn = txn, .cache = cache, .entry = entry};
    r.stamp.clock = cf_hlc_next(prog.clock);
    memcpy(r.stamp.client, client, CF_SYNC_ID_SIZE);
    r.cs.version = version;
    r.cs.clock = r.stamp.clock;
    st = record_entry(&r);
    if (st == COFFER_OK && r.cs.count > 0) {
        cf_buf out = {0};
        st = cf_sync_cs_finish(&r.cs, &out);
        /* A changeset no frame can carry would stop every upload after it. */
        if (st == COFFER_OK && out.len > CF_SYNC_MAX_CHANGESET_BYTES)
            st = cf_error(COFFER_ERR_LIMIT,
                          "the commit's sync changeset is %zu bytes, above the %u-byte limit of a sync frame (64 MiB); "
                          "commit the change in smaller transactions",
                          out.len, CF_SYNC_MAX_CHANGESET_BYTES);
        if (st == COFFER_OK)
            st = cf_sync_outbox_put(txn, version, out.p, out.len);
        free(out.p);
        prog.clock = r.stamp.clock;
        if (st == COFFER_OK)
            st = cf_sync_progress_write(txn, &prog);
    }
    if (st == COFFER_OK && (r.val.failed || r.key.failed || r.cs.body.failed))
        st = no_memory();
    cf_sync_cs_builder_free(&r.cs);
    free(r.val.p);
    free(r.key.p);
    return st;
}

coffer_status cf_sync_commit_hook(coffer_txn *txn)
{
    uint8_t client[CF_SYNC_ID_SIZE];
    int has, claimed;
    /* A bundle's first local commit gives the file its own client id. */
    coffer_status st = txn->origin == COFFER_ORIGIN_LOCAL ? cf_sync_client_id_claim(txn, client, &has, &claimed)
                                                          : cf_sync_client_id(txn, client, &has);
    if (st != COFFER_OK || !has)
        return st;
    cf_sync_cache local = {0};
    cf_sync_cache *cache = txn->sync_cache ? txn->sync_cache : &local;
    if (txn->origin == COFFER_ORIGIN_LOCAL) {
        uint64_t version = (uint64_t)mdb_txn_id(txn->mdb);
        cf_log_entry entry;
        st = cf_log_read(txn, version, &entry);
        if (st == COFFER_OK) {
            st = record_local(txn, cache, client, &entry, version);
            cf_log_entry_free(&entry);
        } else if (st == COFFER_ERR_NOT_FOUND) {
            st = COFFER_OK; /* the commit changed no object */
        }
    }
    if (st == COFFER_OK)
        st = cf_sync_cache_flush(txn, cache);
    cf_sync_cache_free(&local);
    if (st != COFFER_OK)
        cf_error_prefix("sync: the commit could not be recorded");
    return st;
}

/* ------------------------------------------------------------------------ */
/* The first sync of a file                                                  */
/* ------------------------------------------------------------------------ */

static coffer_status check_schema(const coffer_db *db)
{
    for (size_t i = 0; i < db->schema->nclasses; i++) {
        const cf_class *c = &db->schema->classes[i];
        if (!cf_class_embedded(c) && c->pk < 0)
            return cf_error(COFFER_ERR_SCHEMA,
                            "class '%s' has no primary key: every top-level class of a synced file needs one", c->name);
    }
    return COFFER_OK;
}

/* A log entry that lists every object of the file as inserted. */
static coffer_status everything_inserted(coffer_txn *txn, cf_log_entry *e)
{
    size_t cap = 0;
    memset(e, 0, sizeof *e);
    coffer_status st = COFFER_OK;
    for (size_t c = 0; c < txn->db->schema->nclasses && st == COFFER_OK; c++) {
        if (cf_class_embedded(&txn->db->schema->classes[c]))
            continue;
        coffer_iter *it;
        if ((st = coffer_class_iterate(txn, (coffer_class_id)c, &it)) != COFFER_OK)
            break;
        coffer_object *o;
        while ((st = coffer_iter_next(it, &o)) == COFFER_OK && o) {
            cf_log_object *grown = cf_grow(e->objects, e->nobjects, &cap, sizeof *grown, 64);
            if (!grown) {
                st = no_memory();
                break;
            }
            e->objects = grown;
            e->objects[e->nobjects++] = (cf_log_object){txn->db->schema->classes[c].table, CF_LOG_INSERT,
                                                        coffer_object_key_of(o), NULL, 0};
        }
        if (st == COFFER_DONE)
            st = COFFER_OK;
        coffer_iter_free(it);
    }
    return st;
}

coffer_status cf_sync_enable(coffer_db *db, const char *partition)
{
    coffer_status st = check_schema(db);
    if (st != COFFER_OK)
        return st;
    coffer_txn *txn;
    if ((st = coffer_txn_begin(db, COFFER_TXN_WRITE, &txn)) != COFFER_OK)
        return st;
    txn->log_always = 1; /* observers see a remote commit, never a gap in the log */
    uint8_t client[CF_SYNC_ID_SIZE];
    int has;
    char *stored = NULL;
    int claimed;
    st = cf_sync_client_id_claim(txn, client, &has, &claimed);
    if (st == COFFER_OK && has) {
        st = cf_sync_partition(txn, &stored);
        if (st == COFFER_OK && stored && strcmp(stored, partition) != 0)
            st = cf_error(COFFER_ERR_INVALID_ARGUMENT,
                          "this file syncs partition '%s'; it cannot sync partition '%s' too", stored, partition);
        free(stored);
        /* A file made from a bundle keeps the id it just claimed. */
        if (st == COFFER_OK && claimed)
            return cf_sync_txn_finish(txn, coffer_txn_set_origin(txn, COFFER_ORIGIN_REMOTE));
        coffer_txn_abort(txn);
        coffer_txn_free(txn);
        return st;
    }
    if (st == COFFER_OK) {
        cf_random(client, CF_SYNC_ID_SIZE);
        st = cf_sync_set_identity(txn, client, partition);
    }
    cf_log_entry all = {0};
    if (st == COFFER_OK)
        st = everything_inserted(txn, &all);
    cf_sync_cache cache = {0};
    if (st == COFFER_OK && all.nobjects) {
        uint64_t version;
        if ((st = coffer_txn_version(txn, &version)) == COFFER_OK)
            st = record_local(txn, &cache, client, &all, version);
        if (st == COFFER_OK)
            st = cf_sync_cache_flush(txn, &cache);
    }
    cf_sync_cache_free(&cache);
    free(all.objects);
    /* Remote origin: the hook records nothing more for this commit. */
    if (st == COFFER_OK)
        st = coffer_txn_set_origin(txn, COFFER_ORIGIN_REMOTE);
    return cf_sync_txn_finish(txn, st);
}
