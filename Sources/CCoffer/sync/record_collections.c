/* record_collections — recording a commit's changes to lists, sets and
 * maps: a list's logged operations are replayed on its recorded element ids
 * (an insert gets a new id, anchored after the element before it; a move is
 * an erase and an insert; a swap sets both elements) and emitted with the
 * values the commit left; a set or map is compared with what was recorded
 * and its differences emitted as adds, removes, puts. */
#include <stdlib.h>
#include <string.h>

#include "sync/recorder.h"
#include "sync/values.h"

/* ------------------------------------------------------------------------ */
/* Lists                                                                     */
/* ------------------------------------------------------------------------ */

/* The sequence index of visible element `pos` (nelems when pos == count). */
static size_t seq_of_visible(const cf_sync_prop *p, uint64_t pos)
{
    for (size_t i = 0; i < p->nelems; i++)
        if (!p->elems[i].erased && pos-- == 0)
            return i;
    return p->nelems;
}

static uint64_t visible_count(const cf_sync_prop *p)
{
    uint64_t n = 0;
    for (size_t i = 0; i < p->nelems; i++)
        n += !p->elems[i].erased;
    return n;
}

/* Where element `id` is visible now, or -1. */
static int64_t visible_pos(const cf_sync_prop *p, const cf_elem_id *id)
{
    int64_t pos = 0;
    for (size_t i = 0; i < p->nelems; i++) {
        if (cf_elem_id_cmp(&p->elems[i].id, id) == 0)
            return p->elems[i].erased ? -1 : pos;
        pos += !p->elems[i].erased;
    }
    return -1;
}

static coffer_status push(pendings *ps, pending p)
{
    pending *items = cf_grow(ps->items, ps->n, &ps->cap, sizeof *items, 8);
    if (!items)
        return no_memory();
    ps->items = items;
    items[ps->n++] = p;
    return COFFER_OK;
}

/* A local insert at visible position `pos`: right after the element before
 * it (it has the largest id of all, so every replica puts it there). */
static coffer_status list_insert(recorder *r, cf_sync_prop *p, uint64_t pos, pendings *out)
{
    pending pd = {CF_OP_LIST_INSERT, new_elem_id(r), 0, {0}};
    size_t at = 0;
    if (pos > 0) {
        size_t before = seq_of_visible(p, pos - 1);
        if (before == p->nelems)
            return cf_error(COFFER_ERR_INTERNAL, "sync: a list insert at %llu past the recorded elements",
                            (unsigned long long)pos);
        pd.has_anchor = 1;
        pd.anchor = p->elems[before].id;
        at = before + 1;
    }
    cf_sync_elem *e = cf_sync_elem_insert(p, at);
    if (!e)
        return no_memory();
    e->id = pd.id;
    e->stamp = r->stamp;
    return push(out, pd);
}

coffer_status cf_rec_list_touch(recorder *r, cf_sync_prop *p, uint64_t pos, uint8_t op, pendings *out)
{
    size_t i = seq_of_visible(p, pos);
    if (i == p->nelems)
        return cf_error(COFFER_ERR_INTERNAL, "sync: a list operation at %llu past the recorded elements",
                        (unsigned long long)pos);
    if (op == CF_OP_LIST_ERASE)
        p->elems[i].erased = 1;
    else
        p->elems[i].stamp = r->stamp;
    return push(out, (pending){op, p->elems[i].id, 0, {0}});
}

static coffer_status replay_op(recorder *r, cf_sync_prop *p, const cf_log_coll_op *op, pendings *out)
{
    coffer_status st = COFFER_OK;
    switch (op->op) {
    case CF_COLL_INSERT:
        return list_insert(r, p, op->a, out);
    case CF_COLL_ERASE:
        return cf_rec_list_touch(r, p, op->a, CF_OP_LIST_ERASE, out);
    case CF_COLL_SET:
        return cf_rec_list_touch(r, p, op->a, CF_OP_LIST_SET, out);
    case CF_COLL_MOVE:
        if ((st = cf_rec_list_touch(r, p, op->a, CF_OP_LIST_ERASE, out)) == COFFER_OK)
            st = list_insert(r, p, op->b, out);
        return st;
    case CF_COLL_SWAP:
        if ((st = cf_rec_list_touch(r, p, op->a, CF_OP_LIST_SET, out)) == COFFER_OK)
            st = cf_rec_list_touch(r, p, op->b, CF_OP_LIST_SET, out);
        return st;
    case CF_COLL_CLEAR:
        for (size_t i = 0; i < p->nelems && st == COFFER_OK; i++)
            if (!p->elems[i].erased) {
                p->elems[i].erased = 1;
                st = push(out, (pending){CF_OP_LIST_ERASE, p->elems[i].id, 0, {0}});
            }
        return st;
    default:
        return COFFER_OK;
    }
}

static void begin_list_change(recorder *r, uint8_t op, coffer_class_id cls, const cf_sync_obj *o, const char *prop,
                              const cf_elem_id *id)
{
    cf_cs_begin_change(&r->cs, op, class_name(r, cls), pk_of(o));
    cf_wire_string(&r->cs.body, prop, strlen(prop));
    cf_cs_elem_id(&r->cs.body, id);
}

/* Emits the changes of `pd`, with the values the commit left. */
coffer_status cf_rec_emit_list(recorder *r, coffer_class_id cls, const cf_sync_obj *o, const cf_sync_prop *p,
                               coffer_list *list, const pendings *pd)
{
    coffer_status st = COFFER_OK;
    for (size_t i = 0; i < pd->n && st == COFFER_OK; i++) {
        const pending *x = &pd->items[i];
        int64_t pos = visible_pos(p, &x->id);
        r->val.len = 0;
        if (pos >= 0 && x->op != CF_OP_LIST_ERASE)
            st = cf_sync_encode_list_elem(list, (uint64_t)pos, &r->val);
        else
            cf_wire_u8(&r->val, CF_SV_NULL);
        if (st != COFFER_OK)
            break;
        if (x->op == CF_OP_LIST_SET && pos < 0)
            continue; /* erased later in the commit */
        begin_list_change(r, x->op, cls, o, p->name, &x->id);
        if (x->op == CF_OP_LIST_INSERT) {
            cf_wire_u8(&r->cs.body, (uint8_t)x->has_anchor);
            if (x->has_anchor)
                cf_cs_elem_id(&r->cs.body, &x->anchor);
        }
        if (x->op != CF_OP_LIST_ERASE)
            cf_buf_put(&r->cs.body, r->val.p, r->val.len);
    }
    return st;
}

/* Records every element of a list as inserted, in order. */
static coffer_status list_all_inserted(recorder *r, cf_sync_prop *p, uint64_t n, pendings *out)
{
    coffer_status st = COFFER_OK;
    for (uint64_t i = 0; i < n && st == COFFER_OK; i++)
        st = list_insert(r, p, i, out);
    return st;
}

coffer_status cf_rec_list(recorder *r, coffer_object *obj, cf_sync_obj *o, coffer_property_id prop, int fresh)
{
    coffer_class_id cls = coffer_object_class(obj);
    const cf_class *c = &r->txn->db->schema->classes[cls];
    const cf_prop *cp = &c->props[prop];
    cf_sync_prop *p = cf_sync_prop_of(o, cp->name);
    if (!p)
        return no_memory();
    coffer_list *list;
    uint64_t n;
    coffer_status st = coffer_object_get_list(obj, prop, &list);
    if (st != COFFER_OK)
        return st;
    if ((st = coffer_list_count(list, &n)) != COFFER_OK) {
        coffer_list_release(list);
        return st;
    }
    pendings pd = {0};
    if (fresh) {
        st = list_all_inserted(r, p, n, &pd);
    } else {
        for (size_t i = 0; i < r->entry->nops && st == COFFER_OK; i++)
            if (op_matches(&r->entry->ops[i], c->table, cp->column, o->key))
                st = replay_op(r, p, &r->entry->ops[i], &pd);
        /* Should the recorded elements not match the list (it was changed
         * without a log entry, by a migration), start its elements again. */
        if (st != COFFER_OK || visible_count(p) != n) {
            coffer_clear_error();
            pd.n = 0;
            st = replay_op(r, p, &(cf_log_coll_op){.op = CF_COLL_CLEAR}, &pd);
            if (st == COFFER_OK)
                st = list_all_inserted(r, p, n, &pd);
        }
    }
    if (st == COFFER_OK)
        st = cf_rec_emit_list(r, cls, o, p, list, &pd);
    o->dirty = 1;
    free(pd.items);
    coffer_list_release(list);
    return st;
}

/* ------------------------------------------------------------------------ */
/* Sets and maps                                                             */
/* ------------------------------------------------------------------------ */

coffer_status cf_rec_set_or_map(recorder *r, coffer_object *obj, cf_sync_obj *o, coffer_property_id prop)
{
    coffer_class_id cls = coffer_object_class(obj);
    const cf_prop *cp = &r->txn->db->schema->classes[cls].props[prop];
    int is_map = cp->collection == COFFER_COLLECTION_MAP;
    cf_sync_prop *p = cf_sync_prop_of(o, cp->name);
    if (!p)
        return no_memory();
    coffer_set *set = NULL;
    coffer_map *map = NULL;
    uint64_t n;
    coffer_status st = is_map ? coffer_object_get_map(obj, prop, &map) : coffer_object_get_set(obj, prop, &set);
    if (st != COFFER_OK)
        return st;
    st = is_map ? coffer_map_count(map, &n) : coffer_set_count(set, &n);
    uint8_t *marks = calloc(p->nitems + n + 1, 1);
    if (!marks && st == COFFER_OK)
        st = no_memory();
    for (uint64_t i = 0; i < n && st == COFFER_OK; i++) {
        r->val.len = r->key.len = 0;
        st = is_map ? cf_sync_encode_map_entry(map, i, &r->key, &r->val) : cf_sync_encode_set_elem(set, i, &r->val);
        if (st != COFFER_OK)
            break;
        /* A set element is identified by its encoding; a map entry by its key. */
        cf_slice id = is_map ? (cf_slice){r->key.p, r->key.len} : (cf_slice){r->val.p, r->val.len};
        cf_wreader kr = cf_wreader_make(id.p, id.n, "a map key");
        cf_slice mkey = id;
        if (is_map && (st = cf_wire_get_bytes(&kr, &mkey, "a map key")) != COFFER_OK)
            break;
        cf_sync_item *it = cf_sync_item_find(p, mkey.p, mkey.n, 1);
        if (!it) {
            st = no_memory();
            break;
        }
        marks[it - p->items] = 1;
        int same = it->present && (!is_map || (it->value_len == r->val.len && memcmp(it->value, r->val.p, r->val.len) == 0));
        if (same)
            continue;
        it->present = 1;
        it->stamp = r->stamp;
        if (is_map && (st = cf_sync_item_set_value(it, (cf_slice){r->val.p, r->val.len})) != COFFER_OK)
            break;
        cf_cs_begin_change(&r->cs, is_map ? CF_OP_MAP_PUT : CF_OP_SET_ADD, class_name(r, cls), pk_of(o));
        cf_wire_string(&r->cs.body, cp->name, strlen(cp->name));
        if (is_map)
            cf_buf_put(&r->cs.body, r->key.p, r->key.len);
        cf_buf_put(&r->cs.body, r->val.p, r->val.len);
    }
    for (size_t i = 0; i < p->nitems && st == COFFER_OK; i++) {
        cf_sync_item *it = &p->items[i];
        if (!it->present || marks[i])
            continue;
        it->present = 0;
        it->stamp = r->stamp;
        cf_cs_begin_change(&r->cs, is_map ? CF_OP_MAP_REMOVE : CF_OP_SET_REMOVE, class_name(r, cls), pk_of(o));
        cf_wire_string(&r->cs.body, cp->name, strlen(cp->name));
        if (is_map)
            cf_wire_bytes(&r->cs.body, it->key, it->key_len);
        else
            cf_buf_put(&r->cs.body, it->key, it->key_len);
    }
    free(marks);
    o->dirty = 1;
    if (map)
        coffer_map_release(map);
    if (set)
        coffer_set_release(set);
    return st;
}
