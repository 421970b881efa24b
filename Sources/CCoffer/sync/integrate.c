/* integrate — merging server changesets into the file by the rules of
 * docs/SYNC.md: per-property last writer wins by stamp, a delete beats
 * updates, a create of a tombstoned object starts a new life only with a
 * newer stamp, lists as replicated growable arrays, sets and maps per
 * element, links to missing objects as null. The merge state it compares
 * against is changed in the transaction's cache and written by the commit
 * hook; the writes go through the public object calls, so observers see
 * ordinary changes. */
#include "sync/integrate.h"

#include <stdlib.h>
#include <string.h>

#include "sync/ghost.h"
#include "sync/hlc.h"
#include "sync/record.h"
#include "sync/state.h"
#include "sync/values.h"
#include "util/error.h"

typedef struct applier {
    coffer_txn *txn;
    cf_sync_cache *cache;
    cf_stamp stamp;
    cf_arena arena;
} applier;

static coffer_status no_memory(void)
{
    return cf_error(COFFER_ERR_NO_MEMORY, "out of memory integrating a sync changeset");
}

static coffer_status find_class(applier *a, cf_slice name, int *out)
{
    int i = cf_sync_class_named(a->txn->db->schema, name);
    if (i < 0 || cf_class_embedded(&a->txn->db->schema->classes[i]))
        return cf_error(COFFER_ERR_SCHEMA, "sync: a change of class '%.*s', which this file has no top-level class of",
                        (int)name.n, (const char *)name.p);
    *out = i;
    return COFFER_OK;
}

static coffer_status find_prop(applier *a, int cls, cf_slice name, int *out)
{
    const cf_class *c = &a->txn->db->schema->classes[cls];
    int i = cf_sync_prop_named(c, name);
    if (i < 0 || i == c->pk || c->props[i].type == COFFER_TYPE_LINKING_OBJECTS)
        return cf_error(COFFER_ERR_SCHEMA, "sync: a change of property '%.*s' of class '%s', which this file cannot take",
                        (int)name.n, (const char *)name.p, c->name);
    *out = i;
    return COFFER_OK;
}

static coffer_status decode(applier *a, cf_slice enc, coffer_value *out, int *missing)
{
    return cf_sync_decode_value(a->txn, enc, &a->arena, out, missing);
}

/* Sets each (name, value) pair whose stamp beats the property's. */
static coffer_status apply_fields(applier *a, int cls, coffer_object *obj, cf_sync_obj *o, const cf_sync_change *c)
{
    cf_wreader r = cf_wreader_make(c->fields.p, c->fields.n, "a changeset's properties");
    coffer_status st = COFFER_OK;
    for (uint64_t i = 0; i < c->nfields && st == COFFER_OK; i++) {
        cf_slice name, value;
        int prop = 0, missing = 0;
        coffer_value v;
        if ((st = cf_sync_change_field(&r, &name, &value)) != COFFER_OK || (st = find_prop(a, cls, name, &prop)) != COFFER_OK)
            break;
        const cf_prop *cp = &a->txn->db->schema->classes[cls].props[prop];
        cf_sync_prop *p = cf_sync_prop_of(o, cp->name);
        if (!p)
            return no_memory();
        if (cf_stamp_cmp(&a->stamp, &p->stamp) <= 0)
            continue;
        if ((st = decode(a, value, &v, &missing)) != COFFER_OK)
            break;
        if ((st = coffer_object_set_value(obj, (coffer_property_id)prop, &v)) != COFFER_OK)
            break;
        p->stamp = a->stamp;
        o->dirty = 1;
    }
    return st;
}

static int64_t elem_index(const cf_sync_prop *p, const cf_elem_id *id)
{
    for (size_t i = 0; i < p->nelems; i++)
        if (cf_elem_id_cmp(&p->elems[i].id, id) == 0)
            return (int64_t)i;
    return -1;
}

static uint64_t visible_before(const cf_sync_prop *p, size_t i)
{
    uint64_t n = 0;
    for (size_t k = 0; k < i; k++)
        n += !p->elems[k].erased;
    return n;
}

/* Whether list element `id` was inserted at or below `stamp`. */
static int inserted_by(const cf_elem_id *id, const cf_stamp *stamp)
{
    cf_stamp s = {.clock = id->clock};
    memcpy(s.client, id->client, CF_SYNC_ID_SIZE);
    return cf_stamp_cmp(&s, stamp) <= 0;
}

/* Whether `stamp` is above the tombstone of (class, pk): always without one. */
static coffer_status after_tombstone(applier *a, int cls, cf_slice pk, int *after)
{
    cf_stamp tomb;
    int has;
    coffer_status st = cf_sync_tombstone_get(a->txn, a->txn->db->schema->classes[cls].table, pk, &tomb, &has);
    *after = st == COFFER_OK && (!has || cf_stamp_cmp(&a->stamp, &tomb) > 0);
    return st;
}

/* The field of property `prop` among the first `n` of `fields`, made when absent. */
static coffer_field *field_of(coffer_field *fields, size_t *n, int prop)
{
    for (size_t i = 0; i < *n; i++)
        if ((int)fields[i].property == prop)
            return &fields[i];
    fields[*n].property = (coffer_property_id)prop;
    return &fields[(*n)++];
}

/* A new life's set elements and map entries kept by the ghost. */
static coffer_status revive_items(applier *a, coffer_object *obj, int prop, const cf_sync_prop *gp, cf_sync_prop *p)
{
    coffer_status st = COFFER_OK;
    const cf_prop *cp = &a->txn->db->schema->classes[coffer_object_class(obj)].props[prop];
    for (size_t e = 0; e < gp->nitems && st == COFFER_OK; e++) {
        const cf_sync_item *g = &gp->items[e];
        cf_sync_item *it = cf_sync_item_find(p, g->key, g->key_len, 1);
        if (!it)
            return no_memory();
        it->present = g->present;
        it->stamp = g->stamp;
        if (g->value && (st = cf_sync_item_set_value(it, (cf_slice){g->value, g->value_len})) != COFFER_OK)
            break;
        if (!g->present)
            continue;
        coffer_value v;
        int missing = 0;
        if (cp->collection == COFFER_COLLECTION_MAP) {
            coffer_map *map;
            if ((st = decode(a, (cf_slice){g->value, g->value_len}, &v, &missing)) == COFFER_OK &&
                (st = coffer_object_get_map(obj, (coffer_property_id)prop, &map)) == COFFER_OK) {
                st = coffer_map_set(map, (const char *)g->key, g->key_len, &v);
                coffer_map_release(map);
            }
        } else {
            coffer_set *set;
            int changed;
            if ((st = decode(a, (cf_slice){g->key, g->key_len}, &v, &missing)) == COFFER_OK && !missing &&
                (st = coffer_object_get_set(obj, (coffer_property_id)prop, &set)) == COFFER_OK) {
                st = coffer_set_insert(set, &v, &changed);
                coffer_set_release(set);
            }
        }
    }
    return st;
}

/* A new life's list: the ghost's elements in order, those inserted above
 * the tombstone (and not erased) shown, the others kept as anchors. */
static coffer_status revive_list(applier *a, coffer_object *obj, int prop, const cf_sync_prop *gp, cf_sync_prop *p,
                                 const cf_stamp *tomb)
{
    coffer_list *list;
    coffer_status st = coffer_object_get_list(obj, (coffer_property_id)prop, &list);
    if (st != COFFER_OK)
        return st;
    uint64_t pos = 0;
    for (size_t e = 0; e < gp->nelems && st == COFFER_OK; e++) {
        const cf_sync_elem *ge = &gp->elems[e];
        cf_sync_elem *el = cf_sync_elem_insert(p, p->nelems);
        if (!el) {
            st = no_memory();
            break;
        }
        el->id = ge->id;
        el->stamp = ge->stamp;
        el->erased = 1;
        coffer_value v;
        int missing = 0;
        if (ge->erased || !ge->value || (tomb && inserted_by(&ge->id, tomb)))
            continue;
        if ((st = decode(a, (cf_slice){ge->value, ge->value_len}, &v, &missing)) != COFFER_OK || missing)
            continue;
        if ((st = coffer_list_insert(list, pos++, &v)) == COFFER_OK)
            el->erased = 0;
    }
    coffer_list_release(list);
    return st;
}

/* A create of an object that is not live: a new life, in which the values
 * its ghost kept (stamped above the tombstone) count with their stamps. */
static coffer_status create(applier *a, int cls, const cf_sync_change *c, coffer_value pk)
{
    const cf_class *k = &a->txn->db->schema->classes[cls];
    cf_sync_obj *g = NULL;
    coffer_status st = cf_sync_ghost_get(a->txn, k->table, c->pk, &g);
    if (st != COFFER_OK)
        return st;
    size_t room = (size_t)c->nfields + 1 + (g ? g->nprops : 0);
    coffer_field *fields = cf_arena_alloc(&a->arena, room * sizeof *fields);
    cf_stamp *stamps = cf_arena_alloc(&a->arena, room * sizeof *stamps);
    if (!fields || !stamps) {
        cf_sync_obj_free(g);
        return no_memory();
    }
    fields[0] = (coffer_field){(coffer_property_id)k->pk, pk};
    size_t n = 1;
    cf_wreader r = cf_wreader_make(c->fields.p, c->fields.n, "a changeset's properties");
    for (uint64_t i = 0; i < c->nfields && st == COFFER_OK; i++) {
        cf_slice name, value;
        int prop = 0, missing = 0;
        if ((st = cf_sync_change_field(&r, &name, &value)) != COFFER_OK || (st = find_prop(a, cls, name, &prop)) != COFFER_OK)
            break;
        coffer_field *f = field_of(fields, &n, prop);
        stamps[f - fields] = a->stamp;
        st = decode(a, value, &f->value, &missing);
    }
    for (size_t i = 0; g && i < g->nprops && st == COFFER_OK; i++) {
        const cf_sync_prop *gp = &g->props[i];
        int prop = cf_sync_prop_named(k, (cf_slice){(const uint8_t *)gp->name, strlen(gp->name)});
        if (!gp->value || prop < 0 || cf_stamp_cmp(&gp->stamp, &a->stamp) <= 0)
            continue;
        size_t before = n;
        coffer_field *f = field_of(fields, &n, prop);
        int missing = 0;
        if (n == before && cf_stamp_cmp(&gp->stamp, &stamps[f - fields]) <= 0)
            continue;
        stamps[f - fields] = gp->stamp;
        st = decode(a, (cf_slice){gp->value, gp->value_len}, &f->value, &missing);
    }
    coffer_object *obj = NULL;
    if (st == COFFER_OK)
        st = coffer_object_create(a->txn, (coffer_class_id)cls, fields, n, COFFER_UPDATE_ERROR, &obj);
    cf_sync_obj *o;
    if (st == COFFER_OK)
        st = cf_sync_obj_make(a->cache, k->table, coffer_object_key_of(obj), c->pk, &o);
    if (st == COFFER_OK) {
        o->created = a->stamp;
        for (size_t i = 1; i < n && st == COFFER_OK; i++) {
            cf_sync_prop *p = cf_sync_prop_of(o, k->props[fields[i].property].name);
            if (!p)
                st = no_memory();
            else
                p->stamp = stamps[i];
        }
        cf_stamp tomb;
        int has_tomb = 0;
        if (g)
            st = cf_sync_tombstone_get(a->txn, k->table, c->pk, &tomb, &has_tomb);
        for (size_t i = 0; g && i < g->nprops && st == COFFER_OK; i++) {
            const cf_sync_prop *gp = &g->props[i];
            int prop = cf_sync_prop_named(k, (cf_slice){(const uint8_t *)gp->name, strlen(gp->name)});
            if (prop < 0 || (!gp->nitems && !gp->nelems))
                continue;
            cf_sync_prop *p = cf_sync_prop_of(o, gp->name);
            if (!p)
                st = no_memory();
            else if (gp->nelems)
                st = revive_list(a, obj, prop, gp, p, has_tomb ? &tomb : NULL);
            else
                st = revive_items(a, obj, prop, gp, p);
        }
    }
    if (obj)
        coffer_object_release(obj);
    if (st == COFFER_OK && g)
        st = cf_sync_ghost_del(a->txn, k->table, c->pk);
    cf_sync_obj_free(g);
    return st;
}

/* A list change of an object that is not live, on its ghost's elements:
 * an insert is placed as on a live list (RGA) and keeps its value if
 * stamped above the tombstone; an erase and a replacement apply as usual. */
static coffer_status ghost_list_change(applier *a, cf_sync_prop *p, const cf_sync_change *c, int after)
{
    int64_t at = elem_index(p, &c->elem);
    if (c->op == CF_OP_LIST_INSERT) {
        if (at >= 0)
            return COFFER_OK;
        size_t i = 0;
        if (c->has_anchor) {
            int64_t anchor = elem_index(p, &c->anchor);
            if (anchor < 0)
                return COFFER_OK;
            i = (size_t)anchor + 1;
        }
        while (i < p->nelems && cf_elem_id_cmp(&p->elems[i].id, &c->elem) > 0)
            i++;
        cf_sync_elem *e = cf_sync_elem_insert(p, i);
        if (!e)
            return no_memory();
        e->id = c->elem;
        e->stamp = a->stamp;
        if (after && !(e->value = malloc(c->value.n ? c->value.n : 1)))
            return no_memory();
        if (after) {
            memcpy(e->value, c->value.p, c->value.n);
            e->value_len = c->value.n;
        }
        return COFFER_OK;
    }
    if (at < 0 || p->elems[at].erased)
        return COFFER_OK;
    cf_sync_elem *e = &p->elems[at];
    if (c->op == CF_OP_LIST_ERASE) {
        e->erased = 1;
    } else if (cf_stamp_cmp(&a->stamp, &e->stamp) > 0) {
        e->stamp = a->stamp;
        if (e->value) {
            uint8_t *v = malloc(c->value.n ? c->value.n : 1);
            if (!v)
                return no_memory();
            memcpy(v, c->value.p, c->value.n);
            free(e->value);
            e->value = v;
            e->value_len = c->value.n;
        }
    }
    return COFFER_OK;
}

/* A change of an object that is not live, stamped above its tombstone: its
 * ghost keeps it, last writer wins, for a later life. List changes are not
 * kept (docs/SYNC.md). */
static coffer_status keep_in_ghost(applier *a, int cls, const cf_sync_change *c)
{
    const cf_class *k = &a->txn->db->schema->classes[cls];
    int after, is_list = c->op == CF_OP_LIST_INSERT || c->op == CF_OP_LIST_ERASE || c->op == CF_OP_LIST_SET;
    coffer_status st = after_tombstone(a, cls, c->pk, &after);
    if (st != COFFER_OK || (!after && !is_list))
        return st;
    cf_sync_obj *g;
    if ((st = cf_sync_ghost_get(a->txn, k->table, c->pk, &g)) != COFFER_OK)
        return st;
    if (!g && (st = cf_sync_ghost_make(k->table, c->pk, &g)) != COFFER_OK)
        return st;
    if (is_list) {
        int prop = 0;
        cf_sync_prop *p = NULL;
        if ((st = find_prop(a, cls, c->prop, &prop)) == COFFER_OK && !(p = cf_sync_prop_of(g, k->props[prop].name)))
            st = no_memory();
        if (st == COFFER_OK)
            st = ghost_list_change(a, p, c, after);
    } else if (c->op == CF_OP_UPDATE) {
        cf_wreader r = cf_wreader_make(c->fields.p, c->fields.n, "a changeset's properties");
        for (uint64_t i = 0; i < c->nfields && st == COFFER_OK; i++) {
            cf_slice name, value;
            int prop = 0;
            if ((st = cf_sync_change_field(&r, &name, &value)) != COFFER_OK || (st = find_prop(a, cls, name, &prop)) != COFFER_OK)
                break;
            cf_sync_prop *p = cf_sync_prop_of(g, k->props[prop].name);
            if (!p) {
                st = no_memory();
                break;
            }
            if (p->value && cf_stamp_cmp(&a->stamp, &p->stamp) <= 0)
                continue;
            p->stamp = a->stamp;
            st = cf_sync_prop_set_value(p, value);
        }
    } else {
        int prop = 0;
        int is_map = c->op == CF_OP_MAP_PUT || c->op == CF_OP_MAP_REMOVE;
        cf_slice id = is_map ? c->key : c->value;
        cf_sync_prop *p = NULL;
        cf_sync_item *it = NULL;
        if ((st = find_prop(a, cls, c->prop, &prop)) == COFFER_OK && (!(p = cf_sync_prop_of(g, k->props[prop].name)) ||
                                                                       !(it = cf_sync_item_find(p, id.p, id.n, 1))))
            st = no_memory();
        if (st == COFFER_OK && cf_stamp_cmp(&a->stamp, &it->stamp) > 0) {
            it->stamp = a->stamp;
            it->present = (uint8_t)(c->op == CF_OP_SET_ADD || c->op == CF_OP_MAP_PUT);
            if (c->op == CF_OP_MAP_PUT)
                st = cf_sync_item_set_value(it, c->value);
        }
    }
    if (st == COFFER_OK)
        st = cf_sync_ghost_put(a->txn, g);
    cf_sync_obj_free(g);
    return st;
}

/* The merge state of a live object (made empty if it has none). */
static coffer_status state_of(applier *a, int cls, coffer_object *obj, cf_slice pk, cf_sync_obj **out)
{
    uint32_t table = a->txn->db->schema->classes[cls].table;
    coffer_status st = cf_sync_obj_get(a->txn, a->cache, table, coffer_object_key_of(obj), out);
    if (st == COFFER_OK && !*out)
        st = cf_sync_obj_make(a->cache, table, coffer_object_key_of(obj), pk, out);
    return st;
}

/* Before `obj` is deleted: the list elements, set elements and map values
 * that link to it go with it (as the core removes them), in the merge state
 * of the objects holding them. */
static coffer_status forget_links_to(applier *a, coffer_object *obj, cf_slice pk)
{
    const cf_schema *s = a->txn->db->schema;
    coffer_class_id cls = coffer_object_class(obj);
    cf_buf link = {0};
    cf_wire_u8(&link, CF_SV_LINK);
    cf_wire_string(&link, s->classes[cls].name, strlen(s->classes[cls].name));
    cf_buf_put(&link, pk.p, pk.n);
    coffer_status st = link.failed ? no_memory() : COFFER_OK;
    for (size_t c = 0; c < s->nclasses && st == COFFER_OK; c++)
        for (size_t p = 0; p < s->classes[c].nprops && st == COFFER_OK; p++) {
            const cf_prop *cp = &s->classes[c].props[p];
            if (cp->type != COFFER_TYPE_LINK || cp->target != (int)cls || !cf_prop_is_collection(cp) ||
                cf_class_embedded(&s->classes[c]))
                continue;
            coffer_iter *it;
            if ((st = coffer_object_backlinks_from(obj, (coffer_class_id)c, (coffer_property_id)p, &it)) != COFFER_OK)
                break;
            coffer_object *origin;
            uint64_t last = UINT64_MAX;
            while (st == COFFER_OK && (st = coffer_iter_next(it, &origin)) == COFFER_OK) {
                if (coffer_object_key_of(origin) == last)
                    continue;
                last = coffer_object_key_of(origin);
                cf_sync_obj *o;
                if ((st = cf_sync_obj_get(a->txn, a->cache, s->classes[c].table, last, &o)) != COFFER_OK || !o)
                    continue;
                cf_sync_prop *sp = cf_sync_prop_of(o, cp->name);
                if (!sp) {
                    st = no_memory();
                    break;
                }
                o->dirty = 1;
                if (cp->collection == COFFER_COLLECTION_LIST) {
                    coffer_list *list;
                    uint64_t n, vis = 0;
                    if ((st = coffer_object_get_list(origin, (coffer_property_id)p, &list)) != COFFER_OK ||
                        (st = coffer_list_count(list, &n)) != COFFER_OK)
                        break;
                    for (size_t e = 0; e < sp->nelems && st == COFFER_OK; e++) {
                        if (sp->elems[e].erased)
                            continue;
                        coffer_value v;
                        if (vis < n && (st = coffer_list_get(list, vis, &v)) == COFFER_OK && v.type == COFFER_TYPE_LINK &&
                            v.u.link.key == coffer_object_key_of(obj))
                            sp->elems[e].erased = 1;
                        vis++;
                    }
                    coffer_list_release(list);
                } else {
                    for (size_t e = 0; e < sp->nitems; e++) {
                        cf_sync_item *item = &sp->items[e];
                        int is_set = cp->collection == COFFER_COLLECTION_SET;
                        const uint8_t *what = is_set ? item->key : item->value;
                        size_t len = is_set ? item->key_len : item->value_len;
                        if (!item->present || len != link.len || memcmp(what, link.p, len) != 0)
                            continue;
                        if (is_set)
                            item->present = 0;
                        else if ((st = cf_sync_item_set_value(item, (cf_slice){(const uint8_t *)"\0", 1})) != COFFER_OK)
                            break;
                    }
                }
            }
            if (st == COFFER_DONE)
                st = COFFER_OK;
            coffer_iter_free(it);
        }
    free(link.p);
    return st;
}

/* A live list into the ghost: every element id in order (the anchors of
 * later inserts), with the values of those inserted above the delete. */
static coffer_status ghost_list(applier *a, coffer_object *obj, int prop, const cf_sync_prop *lp, cf_sync_obj *g)
{
    cf_sync_prop *gp = cf_sync_prop_of(g, lp->name);
    coffer_list *list;
    if (!gp)
        return no_memory();
    coffer_status st = coffer_object_get_list(obj, (coffer_property_id)prop, &list);
    uint64_t pos = 0;
    for (size_t e = 0; e < lp->nelems && st == COFFER_OK; e++) {
        cf_sync_elem *el = cf_sync_elem_insert(gp, gp->nelems);
        if (!el) {
            st = no_memory();
            break;
        }
        el->id = lp->elems[e].id;
        el->stamp = lp->elems[e].stamp;
        el->erased = lp->elems[e].erased;
        if (el->erased)
            continue;
        if (!inserted_by(&el->id, &a->stamp)) {
            cf_buf b = {0};
            if ((st = cf_sync_encode_list_elem(list, pos, &b)) == COFFER_OK && b.failed)
                st = no_memory();
            el->value = b.p;
            el->value_len = b.len;
        }
        pos++;
    }
    if (st == COFFER_OK || list)
        coffer_list_release(list);
    return st;
}

/* Before a live object is deleted by a delete stamped below some of its
 * values (changed concurrently, with larger clocks): its ghost keeps them. */
static coffer_status ghost_of_live(applier *a, int cls, coffer_object *obj, const cf_sync_obj *o)
{
    const cf_class *k = &a->txn->db->schema->classes[cls];
    cf_sync_obj *g = NULL;
    coffer_status st = cf_sync_ghost_make(k->table, (cf_slice){o->pk, o->pk_len}, &g);
    for (size_t i = 0; i < o->nprops && st == COFFER_OK; i++) {
        const cf_sync_prop *lp = &o->props[i];
        int prop = cf_sync_prop_named(k, (cf_slice){(const uint8_t *)lp->name, strlen(lp->name)});
        if (prop < 0)
            continue;
        cf_sync_prop *gp = NULL;
        if (k->props[prop].collection == COFFER_COLLECTION_LIST) {
            st = ghost_list(a, obj, prop, lp, g);
            continue;
        }
        if (k->props[prop].collection == COFFER_COLLECTION_NONE) {
            if (cf_stamp_cmp(&lp->stamp, &a->stamp) <= 0)
                continue;
            cf_buf b = {0};
            if (!(gp = cf_sync_prop_of(g, lp->name)))
                st = no_memory();
            else if ((st = cf_sync_encode_prop(obj, (coffer_property_id)prop, &b)) == COFFER_OK)
                st = b.failed ? no_memory() : cf_sync_prop_set_value(gp, (cf_slice){b.p, b.len});
            if (gp)
                gp->stamp = lp->stamp;
            free(b.p);
            continue;
        }
        for (size_t e = 0; e < lp->nitems && st == COFFER_OK; e++) {
            const cf_sync_item *li = &lp->items[e];
            if (cf_stamp_cmp(&li->stamp, &a->stamp) <= 0)
                continue;
            cf_sync_item *gi = NULL;
            if (!(gp = gp ? gp : cf_sync_prop_of(g, lp->name)) || !(gi = cf_sync_item_find(gp, li->key, li->key_len, 1))) {
                st = no_memory();
                break;
            }
            gi->present = li->present;
            gi->stamp = li->stamp;
            if (li->value)
                st = cf_sync_item_set_value(gi, (cf_slice){li->value, li->value_len});
        }
    }
    if (st == COFFER_OK)
        st = cf_sync_ghost_put(a->txn, g);
    cf_sync_obj_free(g);
    return st;
}

/* A delete of an earlier life of a live object, arriving late: the values
 * stamped below it are gone all the same (its collections' elements; its
 * scalars were all set by the create of this life). */
static coffer_status purge_earlier_life(applier *a, int cls, coffer_object *obj, cf_sync_obj *o)
{
    const cf_class *k = &a->txn->db->schema->classes[cls];
    coffer_status st = COFFER_OK;
    for (size_t i = 0; i < o->nprops && st == COFFER_OK; i++) {
        cf_sync_prop *p = &o->props[i];
        int prop = cf_sync_prop_named(k, (cf_slice){(const uint8_t *)p->name, strlen(p->name)});
        if (prop < 0 || k->props[prop].collection == COFFER_COLLECTION_NONE)
            continue;
        if (k->props[prop].collection == COFFER_COLLECTION_LIST) {
            coffer_list *list;
            if ((st = coffer_object_get_list(obj, (coffer_property_id)prop, &list)) != COFFER_OK)
                break;
            uint64_t pos = 0;
            for (size_t e = 0; e < p->nelems && st == COFFER_OK; e++) {
                if (p->elems[e].erased)
                    continue;
                if (!inserted_by(&p->elems[e].id, &a->stamp)) {
                    pos++;
                    continue;
                }
                if ((st = coffer_list_remove(list, pos)) == COFFER_OK)
                    p->elems[e].erased = 1;
                o->dirty = 1;
            }
            coffer_list_release(list);
            continue;
        }
        for (size_t e = 0; e < p->nitems && st == COFFER_OK; e++) {
            cf_sync_item *it = &p->items[e];
            if (!it->present || cf_stamp_cmp(&it->stamp, &a->stamp) > 0)
                continue;
            it->present = 0;
            o->dirty = 1;
            int removed;
            coffer_value v;
            int missing = 0;
            if (k->props[prop].collection == COFFER_COLLECTION_MAP) {
                coffer_map *map;
                if ((st = coffer_object_get_map(obj, (coffer_property_id)prop, &map)) == COFFER_OK) {
                    st = coffer_map_remove(map, (const char *)it->key, it->key_len, &removed);
                    coffer_map_release(map);
                }
            } else if ((st = decode(a, (cf_slice){it->key, it->key_len}, &v, &missing)) == COFFER_OK && !missing) {
                coffer_set *set;
                if ((st = coffer_object_get_set(obj, (coffer_property_id)prop, &set)) == COFFER_OK) {
                    st = coffer_set_remove(set, &v, &removed);
                    coffer_set_release(set);
                }
            }
        }
    }
    return st;
}

static coffer_status delete_object(applier *a, int cls, coffer_object *obj, cf_slice pk)
{
    uint32_t table = a->txn->db->schema->classes[cls].table;
    cf_sync_obj *o;
    coffer_status st = cf_sync_obj_get(a->txn, a->cache, table, coffer_object_key_of(obj), &o);
    if (st != COFFER_OK)
        return st;
    if (obj) {
        if (o && cf_stamp_cmp(&o->created, &a->stamp) > 0)
            return purge_earlier_life(a, cls, obj, o);
        if ((o && (st = ghost_of_live(a, cls, obj, o)) != COFFER_OK) || (st = forget_links_to(a, obj, pk)) != COFFER_OK ||
            (st = coffer_object_delete(obj)) != COFFER_OK)
            return st;
        if (o) {
            o->gone = 1;
            o->dirty = 1;
        }
    }
    return COFFER_OK;
}

/* EVICT (flexible sync): the object left this client's view. It goes from
 * the file as if it had never been given (its state, tombstone and ghost
 * too), so that when it comes back the service's restatement of it, list
 * elements included, shows whole. */
static coffer_status evict(applier *a, int cls, coffer_object *obj, cf_slice pk)
{
    uint32_t table = a->txn->db->schema->classes[cls].table;
    coffer_status st = COFFER_OK;
    if (obj) {
        cf_sync_obj *o;
        if ((st = cf_sync_obj_get(a->txn, a->cache, table, coffer_object_key_of(obj), &o)) != COFFER_OK ||
            (st = forget_links_to(a, obj, pk)) != COFFER_OK || (st = coffer_object_delete(obj)) != COFFER_OK)
            return st;
        if (o) {
            o->gone = 1;
            o->dirty = 1;
        }
    }
    if ((st = cf_sync_tombstone_del(a->txn, table, pk)) != COFFER_OK)
        return st;
    return cf_sync_ghost_del(a->txn, table, pk);
}

static coffer_status keep_tombstone(applier *a, int cls, cf_slice pk)
{
    uint32_t table = a->txn->db->schema->classes[cls].table;
    cf_stamp old;
    int has;
    coffer_status st = cf_sync_tombstone_get(a->txn, table, pk, &old, &has);
    if (st != COFFER_OK || (has && cf_stamp_cmp(&old, &a->stamp) >= 0))
        return st;
    if ((st = cf_sync_tombstone_put(a->txn, table, pk, &a->stamp)) != COFFER_OK)
        return st;
    cf_sync_obj *g;
    if ((st = cf_sync_ghost_get(a->txn, table, pk, &g)) != COFFER_OK || !g)
        return st;
    cf_sync_ghost_prune(g, &a->stamp);
    st = cf_sync_ghost_put(a->txn, g);
    cf_sync_obj_free(g);
    return st;
}

/* `after`: the change is stamped above the object's tombstone; an element
 * inserted below it is kept (later inserts may be anchored on it) but never
 * shows, as on the service. */
static coffer_status apply_list(applier *a, coffer_object *obj, int prop, cf_sync_prop *p, const cf_sync_change *c, int after)
{
    coffer_list *list;
    coffer_status st = coffer_object_get_list(obj, (coffer_property_id)prop, &list);
    if (st != COFFER_OK)
        return st;
    int64_t at = elem_index(p, &c->elem);
    coffer_value v;
    int missing = 0;
    if (c->op == CF_OP_LIST_INSERT && at < 0) {
        size_t i = 0;
        if (c->has_anchor) {
            int64_t anchor = elem_index(p, &c->anchor);
            if (anchor < 0)
                goto done; /* the anchor belongs to an earlier life of the object */
            i = (size_t)anchor + 1;
        }
        /* RGA: past the elements inserted after the anchor with larger ids. */
        while (i < p->nelems && cf_elem_id_cmp(&p->elems[i].id, &c->elem) > 0)
            i++;
        if ((st = decode(a, c->value, &v, &missing)) != COFFER_OK)
            goto done;
        missing |= !after;
        if (!missing && (st = coffer_list_insert(list, visible_before(p, i), &v)) != COFFER_OK)
            goto done;
        cf_sync_elem *e = cf_sync_elem_insert(p, i);
        if (!e) {
            st = no_memory();
            goto done;
        }
        e->id = c->elem;
        e->stamp = a->stamp;
        e->erased = (uint8_t)missing;
    } else if (at >= 0 && !p->elems[at].erased) {
        cf_sync_elem *e = &p->elems[at];
        uint64_t pos = visible_before(p, (size_t)at);
        if (c->op == CF_OP_LIST_ERASE) {
            if ((st = coffer_list_remove(list, pos)) == COFFER_OK)
                e->erased = 1;
        } else if (c->op == CF_OP_LIST_SET && cf_stamp_cmp(&a->stamp, &e->stamp) > 0) {
            if ((st = decode(a, c->value, &v, &missing)) != COFFER_OK)
                goto done;
            st = missing ? coffer_list_remove(list, pos) : coffer_list_set(list, pos, &v);
            e->stamp = a->stamp;
            e->erased = (uint8_t)missing;
        }
    }
done:
    coffer_list_release(list);
    return st;
}

static coffer_status apply_item(applier *a, coffer_object *obj, int prop, cf_sync_prop *p, const cf_sync_change *c)
{
    int is_map = c->op == CF_OP_MAP_PUT || c->op == CF_OP_MAP_REMOVE;
    int add = c->op == CF_OP_SET_ADD || c->op == CF_OP_MAP_PUT;
    cf_slice id = is_map ? c->key : c->value;
    cf_sync_item *it = cf_sync_item_find(p, id.p, id.n, 1);
    if (!it)
        return no_memory();
    if (cf_stamp_cmp(&a->stamp, &it->stamp) <= 0)
        return COFFER_OK;
    it->stamp = a->stamp;
    it->present = (uint8_t)add;
    coffer_value v = coffer_value_null();
    int missing = 0;
    coffer_status st = COFFER_OK;
    if (c->op != CF_OP_MAP_REMOVE && (st = decode(a, c->value, &v, &missing)) != COFFER_OK)
        return st;
    if (is_map) {
        coffer_map *map;
        char *key = cf_slice_strdup(c->key);
        if (!key)
            return no_memory();
        if ((st = coffer_object_get_map(obj, (coffer_property_id)prop, &map)) == COFFER_OK) {
            int removed;
            st = add ? coffer_map_set(map, key, c->key.n, &v) : coffer_map_remove(map, key, c->key.n, &removed);
            coffer_map_release(map);
        }
        free(key);
        if (st == COFFER_OK && add)
            st = cf_sync_item_set_value(it, c->value);
        return st;
    }
    coffer_set *set;
    if ((st = coffer_object_get_set(obj, (coffer_property_id)prop, &set)) != COFFER_OK)
        return st;
    int changed;
    if (!missing)
        st = add ? coffer_set_insert(set, &v, &changed) : coffer_set_remove(set, &v, &changed);
    coffer_set_release(set);
    return st;
}

static coffer_status apply_change(applier *a, const cf_sync_change *c)
{
    int cls = 0;
    coffer_value pk;
    coffer_status st = find_class(a, c->cls, &cls);
    if (st == COFFER_OK)
        st = cf_sync_decode_scalar(c->pk, &pk);
    if (st != COFFER_OK)
        return st;
    coffer_object *obj = NULL;
    st = coffer_object_find(a->txn, (coffer_class_id)cls, &pk, &obj);
    if (st == COFFER_ERR_NOT_FOUND) {
        coffer_clear_error();
        obj = NULL;
    } else if (st != COFFER_OK) {
        return st;
    }
    if (c->op == CF_OP_DELETE) {
        if (obj && (st = delete_object(a, cls, obj, c->pk)) != COFFER_OK)
            return st;
        return keep_tombstone(a, cls, c->pk);
    }
    if (c->op == CF_OP_EVICT)
        return evict(a, cls, obj, c->pk);
    int after;
    if ((st = after_tombstone(a, cls, c->pk, &after)) != COFFER_OK)
        return st;
    if (!obj) {
        if (c->op != CF_OP_CREATE)
            return keep_in_ghost(a, cls, c); /* the delete wins, for now */
        if (!after)
            return COFFER_OK; /* created before it was deleted */
        return create(a, cls, c, pk);
    }
    if (!after && c->op != CF_OP_LIST_ERASE && c->op != CF_OP_LIST_SET && c->op != CF_OP_LIST_INSERT)
        return COFFER_OK; /* a value of an earlier life */
    cf_sync_obj *o;
    if ((st = state_of(a, cls, obj, c->pk, &o)) != COFFER_OK)
        return st;
    /* A live object's largest create decides which deletes it outlives. */
    if (c->op == CF_OP_CREATE && cf_stamp_cmp(&a->stamp, &o->created) > 0) {
        o->created = a->stamp;
        o->dirty = 1;
    }
    if (c->op == CF_OP_CREATE || c->op == CF_OP_UPDATE)
        return apply_fields(a, cls, obj, o, c);
    int prop = 0;
    if ((st = find_prop(a, cls, c->prop, &prop)) != COFFER_OK)
        return st;
    const cf_prop *cp = &a->txn->db->schema->classes[cls].props[prop];
    int want = c->op <= CF_OP_LIST_SET ? COFFER_COLLECTION_LIST
               : c->op <= CF_OP_SET_REMOVE ? COFFER_COLLECTION_SET
                                            : COFFER_COLLECTION_MAP;
    if (cp->collection != want)
        return cf_error(COFFER_ERR_SCHEMA, "sync: a collection change of property '%s' of class '%s', which is not a %s",
                        cp->name, a->txn->db->schema->classes[cls].name,
                        want == COFFER_COLLECTION_LIST ? "list" : want == COFFER_COLLECTION_SET ? "set" : "map");
    cf_sync_prop *p = cf_sync_prop_of(o, cp->name);
    if (!p)
        return no_memory();
    o->dirty = 1;
    if (want == COFFER_COLLECTION_LIST)
        return apply_list(a, obj, prop, p, c, after);
    return apply_item(a, obj, prop, p, c);
}

coffer_status cf_sync_integrate_in(coffer_txn *txn, cf_sync_cache *cache, const cf_server_changeset *changesets,
                                   size_t n, uint64_t *server_version)
{
    cf_sync_progress prog;
    coffer_status st = cf_sync_progress_read(txn, &prog);
    applier a = {.txn = txn, .cache = cache};
    for (size_t i = 0; i < n && st == COFFER_OK; i++) {
        const cf_server_changeset *s = &changesets[i];
        if (s->server_version <= prog.server_version)
            continue; /* integrated before a lost acknowledgement */
        a.stamp.clock = s->cs.clock;
        memcpy(a.stamp.client, s->origin, CF_SYNC_ID_SIZE);
        for (size_t k = 0; k < s->cs.nchanges && st == COFFER_OK; k++) {
            st = apply_change(&a, &s->cs.changes[k]);
            cf_arena_free(&a.arena);
        }
        if (st != COFFER_OK) {
            cf_error_prefix("sync: server changeset %llu (client version %llu)", (unsigned long long)s->server_version,
                            (unsigned long long)s->cs.version);
            break;
        }
        prog.clock = cf_hlc_observe(prog.clock, s->cs.clock);
        prog.server_version = s->server_version;
    }
    cf_arena_free(&a.arena);
    if (st == COFFER_OK)
        st = cf_sync_progress_write(txn, &prog);
    if (st == COFFER_OK && server_version)
        *server_version = prog.server_version;
    return st;
}

coffer_status cf_sync_integrate(coffer_db *db, const cf_server_changeset *changesets, size_t n, uint64_t *server_version)
{
    coffer_txn *txn;
    coffer_status st = coffer_txn_begin(db, COFFER_TXN_WRITE, &txn);
    if (st != COFFER_OK)
        return st;
    cf_sync_cache cache = {0};
    txn->log_always = 1; /* observers see a remote commit, never a gap in the log */
    st = coffer_txn_set_origin(txn, COFFER_ORIGIN_REMOTE);
    if (st == COFFER_OK)
        st = cf_sync_integrate_in(txn, &cache, changesets, n, server_version);
    txn->sync_cache = &cache;
    st = cf_sync_txn_finish(txn, st);
    cf_sync_cache_free(&cache);
    return st;
}
