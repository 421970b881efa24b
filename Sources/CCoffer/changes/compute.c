/* compute — what each observer is told after a refresh: the change log of the
 * new versions gathered per object, key paths resolved and followed, and the
 * change set of a result, a list or an object (with old and new values). */
#include <stdlib.h>
#include <string.h>

#include "changes/hub.h"
#include "query/observed.h"
#include "util/buffer.h"
#include "util/error.h"

/* Ranges longer than this are read as a gap: recomputed, not replayed. */
#define MAX_REPLAYED_COMMITS 10000

static coffer_status no_memory(void) { return cf_error(COFFER_ERR_NO_MEMORY, "out of memory computing changes"); }

/* ------------------------------------------------------------------------ */
/* Gathering the log                                                         */
/* ------------------------------------------------------------------------ */

static int compare_mods(const void *pa, const void *pb)
{
    const cf_mod *a = pa, *b = pb;
    if (a->table != b->table)
        return a->table < b->table ? -1 : 1;
    return a->key < b->key ? -1 : a->key > b->key;
}

static int compare_u32(const void *pa, const void *pb)
{
    uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
    return a < b ? -1 : a > b;
}

static int push_table(uint32_t **arr, size_t *n, size_t *cap, uint32_t table)
{
    uint32_t *grown = cf_grow(*arr, *n, cap, sizeof **arr, 8);
    if (!grown)
        return -1;
    *arr = grown;
    (*arr)[(*n)++] = table;
    return 0;
}

static void sort_unique(uint32_t *arr, size_t *n)
{
    if (!*n)
        return; /* arr may be NULL, which qsort must not be given */
    qsort(arr, *n, sizeof *arr, compare_u32);
    size_t kept = 0;
    for (size_t i = 0; i < *n; i++)
        if (!kept || arr[kept - 1] != arr[i])
            arr[kept++] = arr[i];
    *n = kept;
}

/* Adds one entry's objects and operations. */
static int gather_entry(cf_changes_read *c, const cf_log_entry *e, int skip, size_t *mods_cap, size_t *cleared_cap,
                        size_t *ops_cap, size_t *touched_cap)
{
    for (size_t i = 0; i < e->nobjects; i++) {
        const cf_log_object *o = &e->objects[i];
        if (push_table(&c->touched, &c->ntouched, touched_cap, o->table))
            return -1;
        if (o->kind == CF_LOG_CLEAR) {
            if (push_table(&c->cleared, &c->ncleared, cleared_cap, o->table))
                return -1;
            continue;
        }
        if (skip && o->kind == CF_LOG_MODIFY)
            continue; /* not told to this observer, but still part of the version */
        cf_mod *grown = cf_grow(c->mods, c->nmods, mods_cap, sizeof *c->mods, 16);
        if (!grown)
            return -1;
        c->mods = grown;
        cf_mod *m = &c->mods[c->nmods++];
        memset(m, 0, sizeof *m);
        m->table = o->table;
        m->key = o->key;
        m->kinds = o->kind;
        for (size_t k = 0; k < o->ncolumns; k++) {
            if (o->columns[k] < 64)
                m->mask |= UINT64_C(1) << o->columns[k];
            else
                m->big = 1;
        }
    }
    for (size_t i = 0; i < e->nops; i++) {
        cf_log_coll_op *grown = cf_grow(c->ops, c->nops, ops_cap, sizeof *c->ops, 16);
        if (!grown)
            return -1;
        c->ops = grown;
        c->ops[c->nops++] = e->ops[i];
    }
    return 0;
}

/* Merges the reports of one object across commits: kinds and columns add up. */
static void merge_mods(cf_changes_read *c)
{
    if (!c->nmods)
        return;
    /* A stable order keeps the commits' order within one object. */
    qsort(c->mods, c->nmods, sizeof *c->mods, compare_mods);
    size_t kept = 0;
    for (size_t i = 0; i < c->nmods; i++) {
        if (kept && c->mods[kept - 1].table == c->mods[i].table && c->mods[kept - 1].key == c->mods[i].key) {
            cf_mod *m = &c->mods[kept - 1];
            m->kinds |= c->mods[i].kinds;
            m->mask |= c->mods[i].mask;
            m->big |= c->mods[i].big;
        } else {
            c->mods[kept++] = c->mods[i];
        }
    }
    c->nmods = kept;
}

coffer_status cf_changes_gather(coffer_txn *txn, uint64_t from, uint64_t to, uint64_t skip, cf_changes_read *out)
{
    memset(out, 0, sizeof *out);
    if (to <= from)
        return COFFER_OK;
    if (to - from > MAX_REPLAYED_COMMITS) {
        out->gap = 1;
        return COFFER_OK;
    }
    size_t mods_cap = 0, cleared_cap = 0, ops_cap = 0, touched_cap = 0;
    for (uint64_t v = from + 1; v <= to; v++) {
        cf_log_entry e;
        coffer_status st = cf_log_read(txn, v, &e);
        if (st == COFFER_ERR_NOT_FOUND) {
            out->gap = 1; /* a schema change, an older library, or trimmed */
            continue;
        }
        if (st != COFFER_OK) {
            cf_changes_release(out);
            return st;
        }
        int failed = gather_entry(out, &e, v == skip, &mods_cap, &cleared_cap, &ops_cap, &touched_cap);
        cf_log_entry_free(&e);
        if (failed) {
            cf_changes_release(out);
            return no_memory();
        }
    }
    merge_mods(out);
    sort_unique(out->cleared, &out->ncleared);
    sort_unique(out->touched, &out->ntouched);
    return COFFER_OK;
}

void cf_changes_release(cf_changes_read *c)
{
    free(c->mods);
    free(c->cleared);
    free(c->ops);
    free(c->touched);
    memset(c, 0, sizeof *c);
}

const cf_mod *cf_changes_find(const cf_changes_read *c, uint32_t table, uint64_t key)
{
    size_t lo = 0, hi = c->nmods;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const cf_mod *m = &c->mods[mid];
        if (m->table < table || (m->table == table && m->key < key))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < c->nmods && c->mods[lo].table == table && c->mods[lo].key == key ? &c->mods[lo] : NULL;
}

static int table_in(const uint32_t *tables, size_t n, uint32_t table)
{
    return n && bsearch(&table, tables, n, sizeof *tables, compare_u32) != NULL;
}

int cf_changes_deleted(const cf_changes_read *c, uint32_t table, uint64_t key)
{
    if (table_in(c->cleared, c->ncleared, table))
        return 1;
    const cf_mod *m = cf_changes_find(c, table, key);
    return m && (m->kinds & CF_LOG_DELETE);
}

int cf_changes_column(const cf_mod *m, uint16_t column)
{
    if (!(m->kinds & CF_LOG_MODIFY))
        return 0;
    return column < 64 ? (int)((m->mask >> column) & 1) : m->big;
}

/* ------------------------------------------------------------------------ */
/* Key paths                                                                 */
/* ------------------------------------------------------------------------ */

static const cf_class *class_at(coffer_db *db, coffer_class_id cls) { return &db->schema->classes[cls]; }

/* The class a property leads to, or -1 when it is not a link. */
static int link_target(const cf_prop *p)
{
    if (p->type == COFFER_TYPE_LINK || p->type == COFFER_TYPE_LINKING_OBJECTS)
        return p->target;
    return -1;
}

coffer_status cf_keypaths_resolve(coffer_db *db, coffer_class_id cls, const char *const *paths, size_t count,
                                  cf_keypath **out)
{
    *out = NULL;
    if (!count)
        return COFFER_OK;
    cf_keypath *kps = calloc(count, sizeof *kps);
    if (!kps)
        return no_memory();
    for (size_t i = 0; i < count; i++) {
        const char *path = paths[i];
        if (!path) {
            free(kps);
            return cf_error(COFFER_ERR_INVALID_ARGUMENT, "key path %zu is NULL", i);
        }
        coffer_class_id at = cls;
        const char *part = path;
        for (;;) {
            const char *dot = strchr(part, '.');
            size_t len = dot ? (size_t)(dot - part) : strlen(part);
            const cf_class *cl = class_at(db, at);
            int found = -1;
            for (size_t p = 0; p < cl->nprops; p++)
                if (strlen(cl->props[p].name) == len && memcmp(cl->props[p].name, part, len) == 0)
                    found = (int)p;
            if (found < 0 || len == 0) {
                free(kps);
                return cf_error(COFFER_ERR_QUERY, "key path '%s': class '%s' has no property '%.*s'", path, cl->name,
                                (int)len, part);
            }
            if (kps[i].nsteps == sizeof kps[i].steps / sizeof kps[i].steps[0]) {
                free(kps);
                return cf_error(COFFER_ERR_QUERY, "key path '%s' is longer than %zu properties", path,
                                sizeof kps[i].steps / sizeof kps[i].steps[0]);
            }
            kps[i].steps[kps[i].nsteps].cls = at;
            kps[i].steps[kps[i].nsteps].prop = (coffer_property_id)found;
            kps[i].nsteps++;
            if (!dot)
                break;
            int next = link_target(&cl->props[found]);
            if (next < 0) {
                free(kps);
                return cf_error(COFFER_ERR_QUERY, "key path '%s': '%s.%s' is not a link, so nothing follows it", path,
                                cl->name, cl->props[found].name);
            }
            at = (coffer_class_id)next;
            part = dot + 1;
        }
    }
    *out = kps;
    return COFFER_OK;
}

/* The objects property `prop` of object `key` links to in `txn` (a link, a
 * list or set of links, or linking objects), in `*keys` (malloc'ed). */
static coffer_status targets_of(coffer_txn *txn, coffer_class_id cls, coffer_object_key key, coffer_property_id prop,
                                uint64_t **keys, size_t *n)
{
    *keys = NULL;
    *n = 0;
    const cf_prop *p = &class_at(txn->db, cls)->props[prop];
    coffer_object *obj;
    coffer_status st = coffer_object_get(txn, cls, key, &obj);
    if (st == COFFER_ERR_NOT_FOUND)
        return COFFER_OK;
    if (st != COFFER_OK)
        return st;
    size_t cap = 0;
    if (p->type == COFFER_TYPE_LINKING_OBJECTS) {
        coffer_iter *it;
        st = coffer_object_backlinks(obj, prop, &it);
        coffer_object *origin;
        while (st == COFFER_OK && (st = coffer_iter_next(it, &origin)) == COFFER_OK) {
            uint64_t *grown = cf_grow(*keys, *n, &cap, sizeof **keys, 8);
            if (!grown) {
                st = no_memory();
                break;
            }
            *keys = grown;
            (*keys)[(*n)++] = coffer_object_key_of(origin);
        }
        if (st == COFFER_DONE)
            st = COFFER_OK;
        coffer_iter_free(it);
    } else if (p->collection == COFFER_COLLECTION_LIST) {
        coffer_list *list;
        uint64_t count = 0;
        st = coffer_object_get_list(obj, prop, &list);
        if (st == COFFER_OK)
            st = coffer_list_count(list, &count);
        if (st == COFFER_OK && count && !(*keys = malloc(count * sizeof **keys)))
            st = no_memory();
        for (uint64_t i = 0; st == COFFER_OK && i < count; i++) {
            coffer_value v;
            st = coffer_list_get(list, i, &v);
            if (st == COFFER_OK && v.type == COFFER_TYPE_LINK)
                (*keys)[(*n)++] = v.u.link.key;
        }
        if (st == COFFER_OK)
            coffer_list_release(list);
    } else if (p->collection == COFFER_COLLECTION_NONE && p->type == COFFER_TYPE_LINK) {
        coffer_value v;
        st = coffer_object_get_value(obj, prop, &v);
        if (st == COFFER_OK && v.type == COFFER_TYPE_LINK) {
            if (!(*keys = malloc(sizeof **keys)))
                st = no_memory();
            else
                (*keys)[(*n)++] = v.u.link.key;
        }
    }
    coffer_object_release(obj);
    if (st != COFFER_OK) {
        free(*keys);
        *keys = NULL;
        *n = 0;
    }
    return st;
}

/* Along key path `kp` from step `i` (object `key` of the step's class). A
 * failure to read counts as a change: telling too much beats missing one. */
static bool path_changed(const cf_changes_read *c, coffer_txn *txn, const cf_keypath *kp, size_t i, coffer_object_key key)
{
    coffer_class_id cls = kp->steps[i].cls;
    const cf_class *cl = class_at(txn->db, cls);
    const cf_prop *p = &cl->props[kp->steps[i].prop];
    const cf_mod *m = cf_changes_find(c, cl->table, key);
    if (i > 0 && m && (m->kinds & CF_LOG_INSERT))
        return true; /* a new object on the path */
    int backlinks = p->type == COFFER_TYPE_LINKING_OBJECTS;
    if (m && !backlinks && cf_changes_column(m, p->column))
        return true;
    /* A path ending in linking objects changes when a new object links
     * here: the objects are followed one step further for that. */
    if (i + 1 >= kp->nsteps && !backlinks)
        return false;
    uint64_t *keys;
    size_t n;
    if (targets_of(txn, cls, key, kp->steps[i].prop, &keys, &n) != COFFER_OK)
        return true;
    uint32_t origin_table = backlinks && p->target >= 0 ? class_at(txn->db, (coffer_class_id)p->target)->table : 0;
    bool changed = false;
    for (size_t t = 0; !changed && t < n; t++) {
        if (i + 1 < kp->nsteps) {
            changed = path_changed(c, txn, kp, i + 1, keys[t]);
        } else {
            const cf_mod *om = cf_changes_find(c, origin_table, keys[t]);
            changed = om && (om->kinds & CF_LOG_INSERT);
        }
    }
    free(keys);
    return changed;
}

/* Any property of the object, or (up to `depth` more links) of what it links to. */
static bool reach_changed(const cf_changes_read *c, coffer_txn *txn, coffer_class_id cls, coffer_object_key key, int depth)
{
    const cf_class *cl = class_at(txn->db, cls);
    const cf_mod *m = cf_changes_find(c, cl->table, key);
    if (m && (m->kinds & CF_LOG_MODIFY))
        return true;
    if (depth == 0)
        return false;
    for (size_t p = 0; p < cl->nprops; p++) {
        const cf_prop *prop = &cl->props[p];
        if (prop->type != COFFER_TYPE_LINK || prop->target < 0 || prop->collection == COFFER_COLLECTION_MAP ||
            prop->collection == COFFER_COLLECTION_SET)
            continue;
        if (!table_in(c->touched, c->ntouched, class_at(txn->db, (coffer_class_id)prop->target)->table) && depth == 1)
            continue; /* its target class did not change at all */
        uint64_t *keys;
        size_t n;
        if (targets_of(txn, cls, key, (coffer_property_id)p, &keys, &n) != COFFER_OK)
            return true;
        bool changed = false;
        for (size_t t = 0; !changed && t < n; t++)
            changed = reach_changed(c, txn, (coffer_class_id)prop->target, keys[t], depth - 1);
        free(keys);
        if (changed)
            return true;
    }
    return false;
}

bool cf_object_changed(const cf_observer *obs, coffer_txn *txn, const cf_changes_read *c, coffer_class_id cls,
                       coffer_object_key key, int follow_links)
{
    if (obs->filtered) {
        for (size_t i = 0; i < obs->npaths; i++)
            if (path_changed(c, txn, &obs->paths[i], 0, key))
                return true;
        return false;
    }
    /* Links are followed only if some other class changed at all. */
    uint32_t own = class_at(txn->db, cls)->table;
    int others = c->ntouched > 1 || (c->ntouched == 1 && c->touched[0] != own);
    return reach_changed(c, txn, cls, key, follow_links && others ? 3 : 0);
}

/* ------------------------------------------------------------------------ */
/* Collections                                                               */
/* ------------------------------------------------------------------------ */

typedef struct changed_ctx {
    const cf_observer *obs;
    coffer_txn *txn;
    const cf_changes_read *c;
    coffer_class_id cls;
} changed_ctx;

static bool key_changed(uint64_t key, void *ctx)
{
    changed_ctx *k = ctx;
    return cf_object_changed(k->obs, k->txn, k->c, k->cls, key, 1);
}

coffer_status cf_observed_owner(const cf_observer *obs, coffer_txn *txn, coffer_object **owner)
{
    coffer_status st = coffer_object_get(txn, obs->cls, obs->key, owner);
    if (st == COFFER_ERR_NOT_FOUND) {
        *owner = NULL;
        return COFFER_OK;
    }
    return st;
}

coffer_status cf_list_keys(const cf_observer *obs, coffer_txn *txn, uint64_t **keys, size_t *n, int *deleted)
{
    *keys = NULL;
    *n = 0;
    coffer_object *owner;
    coffer_status st = cf_observed_owner(obs, txn, &owner);
    *deleted = st == COFFER_OK && !owner;
    if (st != COFFER_OK || !owner)
        return st;
    coffer_list *list;
    uint64_t count = 0;
    st = coffer_object_get_list(owner, obs->prop, &list);
    if (st == COFFER_OK)
        st = coffer_list_count(list, &count);
    if (st == COFFER_OK && count && !(*keys = calloc(count, sizeof **keys)))
        st = no_memory();
    for (uint64_t i = 0; st == COFFER_OK && i < count; i++) {
        coffer_value v;
        st = coffer_list_get(list, i, &v);
        if (st == COFFER_OK && v.type == COFFER_TYPE_LINK)
            (*keys)[i] = v.u.link.key;
    }
    if (st == COFFER_OK) {
        coffer_list_release(list);
        *n = (size_t)count;
    } else {
        free(*keys);
        *keys = NULL;
    }
    coffer_object_release(owner);
    return st;
}

static const cf_prop *observed_prop(const cf_observer *obs, coffer_db *db)
{
    return &class_at(db, obs->cls)->props[obs->prop];
}

coffer_status cf_compute_initial(cf_observer *obs, coffer_txn *new_txn)
{
    free(obs->keys);
    obs->keys = NULL;
    obs->nkeys = 0;
    if (obs->kind == CF_OBS_RESULTS)
        return cf_query_keys(new_txn, obs->query, &obs->keys, &obs->nkeys);
    if (obs->kind == CF_OBS_LIST) {
        int deleted;
        coffer_status st = cf_list_keys(obs, new_txn, &obs->keys, &obs->nkeys, &deleted);
        obs->finished = deleted;
        return st;
    }
    if (obs->kind == CF_OBS_LIST_VIEW)
        return cf_view_initial(obs, new_txn);
    if (obs->kind == CF_OBS_SET || obs->kind == CF_OBS_MAP)
        return cf_items_initial(obs, new_txn);
    if (obs->kind == CF_OBS_OBJECT) {
        coffer_object *obj;
        coffer_status st = coffer_object_get(new_txn, obs->cls, obs->key, &obj);
        if (st == COFFER_ERR_NOT_FOUND) {
            obs->finished = 1;
            return COFFER_OK;
        }
        if (st == COFFER_OK)
            coffer_object_release(obj);
        return st;
    }
    return COFFER_OK;
}

/* Ends a collection's computation: on success the new keys are what the
 * observer saw last, and the change set is told unless empty. */
static coffer_status remember_keys(cf_observer *obs, int failed, uint64_t *keys, size_t n, const cf_changeset *cs,
                                   int *deliver)
{
    if (failed) {
        free(keys);
        return no_memory();
    }
    free(obs->keys);
    obs->keys = keys;
    obs->nkeys = n;
    *deliver = !cf_changeset_is_empty(cs) || cs->collection_root_was_deleted;
    return COFFER_OK;
}

static coffer_status compute_results(cf_observer *obs, coffer_txn *new_txn, const cf_changes_read *c, int *deliver,
                                     cf_changeset *cs)
{
    /* Untouched classes need no new run: any class the query's class reaches
     * could matter, so only a change-free range is skipped. */
    if (!c->gap && !c->ntouched)
        return COFFER_OK;
    uint64_t *keys;
    size_t n;
    coffer_status st = cf_query_keys(new_txn, obs->query, &keys, &n);
    if (st != COFFER_OK)
        return st;
    changed_ctx k = {obs, new_txn, c, obs->cls};
    int failed = cf_changeset_diff(obs->keys, obs->nkeys, keys, n, c->gap ? NULL : key_changed, &k,
                                   obs->ordered ? CF_DIFF_ORDERED : CF_DIFF_TABLE_ORDER, cs);
    return remember_keys(obs, failed, keys, n, cs, deliver);
}

static int op_is_observed(const cf_observer *obs, coffer_db *db, const cf_log_coll_op *op)
{
    const cf_class *cl = class_at(db, obs->cls);
    return op->table == cl->table && op->key == obs->key && op->column == cl->props[obs->prop].column && op->coll_id == 0;
}

static int replay_op(cf_list_changes *b, const cf_log_coll_op *op)
{
    switch (op->op) {
    case CF_COLL_INSERT: return cf_list_changes_insert(b, op->a);
    case CF_COLL_ERASE: return cf_list_changes_erase(b, op->a);
    case CF_COLL_SET: return cf_list_changes_modify(b, op->a);
    case CF_COLL_MOVE: return cf_list_changes_move(b, op->a, op->b);
    case CF_COLL_SWAP: return cf_list_changes_swap(b, op->a, op->b);
    case CF_COLL_CLEAR: return cf_list_changes_clear(b, op->a);
    }
    return 0;
}

coffer_status cf_list_compute(cf_observer *obs, coffer_txn *new_txn, const cf_changes_read *c, const uint64_t *keys,
                              size_t n, int deleted, cf_changeset *cs)
{
    coffer_db *db = new_txn->db;
    const cf_class *owner = class_at(db, obs->cls);
    const cf_prop *p = observed_prop(obs, db);
    cf_list_changes b;
    cf_list_changes_init(&b);
    int failed = 0;
    if (deleted) {
        failed = cf_list_changes_root_deleted(&b, obs->nkeys);
        obs->finished = 1;
    } else {
        const cf_mod *m = cf_changes_find(c, owner->table, obs->key);
        size_t replayed = 0;
        for (size_t i = 0; !failed && i < c->nops; i++)
            if (op_is_observed(obs, db, &c->ops[i])) {
                failed = replay_op(&b, &c->ops[i]);
                replayed++;
            }
        int reassigned = !replayed && m && cf_changes_column(m, p->column);
        if (!failed && (c->gap || reassigned)) {
            /* No operations to replay (the list was assigned whole, or the
             * log has a gap): compare the elements instead. */
            cf_list_changes_free(&b);
            if (p->type == COFFER_TYPE_LINK && p->target >= 0) {
                changed_ctx k = {obs, new_txn, c, (coffer_class_id)p->target};
                failed = cf_changeset_diff(obs->keys, obs->nkeys, keys, n, c->gap ? NULL : key_changed, &k,
                                           CF_DIFF_ORDERED, cs);
            } else { /* values have no identity: all of them were replaced */
                failed = cf_index_set_add_range(&cs->deletions, 0, obs->nkeys) ||
                         cf_index_set_add_range(&cs->insertions, 0, n);
            }
            return failed ? no_memory() : COFFER_OK;
        }
        /* Elements whose objects changed, at their new positions. */
        if (!failed && p->type == COFFER_TYPE_LINK && p->target >= 0)
            for (size_t i = 0; !failed && i < n; i++)
                if (cf_object_changed(obs, new_txn, c, (coffer_class_id)p->target, keys[i], 1))
                    failed = cf_list_changes_modify(&b, i);
    }
    if (!failed)
        failed = cf_list_changes_finish(&b, cs);
    cf_list_changes_free(&b);
    return failed ? no_memory() : COFFER_OK;
}

static coffer_status compute_list(cf_observer *obs, coffer_txn *new_txn, const cf_changes_read *c, int *deliver,
                                  cf_changeset *cs)
{
    uint64_t *keys;
    size_t n;
    int deleted;
    coffer_status st = cf_list_keys(obs, new_txn, &keys, &n, &deleted);
    if (st == COFFER_OK)
        st = cf_list_compute(obs, new_txn, c, keys, n, deleted, cs);
    if (st != COFFER_OK) {
        free(keys);
        return st;
    }
    return remember_keys(obs, 0, keys, n, cs, deliver);
}

coffer_status cf_compute_collection(cf_observer *obs, coffer_txn *old_txn, coffer_txn *new_txn, const cf_changes_read *c,
                                    int *deliver, struct coffer_collection_changes *out)
{
    (void)old_txn;
    *deliver = 0;
    cf_changeset_init(&out->cs);
    coffer_status st;
    switch (obs->kind) {
    case CF_OBS_RESULTS: st = compute_results(obs, new_txn, c, deliver, &out->cs); break;
    case CF_OBS_LIST_VIEW: st = cf_compute_view(obs, new_txn, c, deliver, &out->cs); break;
    case CF_OBS_SET: st = cf_compute_set(obs, new_txn, c, deliver, &out->cs); break;
    default: st = compute_list(obs, new_txn, c, deliver, &out->cs); break;
    }
    if (st != COFFER_OK || !*deliver)
        cf_changeset_free(&out->cs);
    out->has_keys = obs->kind == CF_OBS_RESULTS;
    out->keys = obs->keys;
    out->nkeys = obs->nkeys;
    return st;
}

/* ------------------------------------------------------------------------ */
/* Objects                                                                   */
/* ------------------------------------------------------------------------ */

void cf_object_changes_free(struct coffer_object_changes *oc)
{
    free(oc->props);
    free(oc->old_values);
    free(oc->new_values);
    memset(oc, 0, sizeof *oc);
}

/* Whether property `p` (index `i`) of the observed object is reported. */
static bool property_changed(const cf_observer *obs, coffer_txn *new_txn, const cf_changes_read *c, const cf_class *cl,
                             size_t i, const coffer_value *old_v, const coffer_value *new_v)
{
    const cf_prop *p = &cl->props[i];
    /* Linking objects are no value of the object: they count only when a
     * key path goes through them. */
    if (p->type == COFFER_TYPE_LINKING_OBJECTS && (c->gap || !obs->filtered))
        return false;
    if (c->gap)
        return old_v && new_v && !coffer_value_equal(old_v, new_v);
    if (obs->filtered) {
        for (size_t k = 0; k < obs->npaths; k++)
            if (obs->paths[k].steps[0].prop == i && path_changed(c, new_txn, &obs->paths[k], 0, obs->key))
                return true;
        return false;
    }
    const cf_mod *m = cf_changes_find(c, cl->table, obs->key);
    return m && cf_changes_column(m, p->column);
}

coffer_status cf_compute_object(cf_observer *obs, coffer_txn *old_txn, coffer_txn *new_txn, const cf_changes_read *c,
                                int *deliver, struct coffer_object_changes *out)
{
    memset(out, 0, sizeof *out);
    *deliver = 0;
    const cf_class *cl = class_at(new_txn->db, obs->cls);
    if (!c->gap && !c->ntouched)
        return COFFER_OK;
    coffer_object *now = NULL, *before = NULL;
    coffer_status st = coffer_object_get(new_txn, obs->cls, obs->key, &now);
    if (st == COFFER_ERR_NOT_FOUND) {
        out->deleted = 1;
        obs->finished = 1;
        *deliver = 1;
        return COFFER_OK;
    }
    if (st != COFFER_OK)
        return st;
    st = coffer_object_get(old_txn, obs->cls, obs->key, &before);
    if (st == COFFER_ERR_NOT_FOUND)
        st = COFFER_OK;
    out->props = calloc(cl->nprops ? cl->nprops : 1, sizeof *out->props);
    out->old_values = calloc(cl->nprops ? cl->nprops : 1, sizeof *out->old_values);
    out->new_values = calloc(cl->nprops ? cl->nprops : 1, sizeof *out->new_values);
    if (st == COFFER_OK && (!out->props || !out->old_values || !out->new_values))
        st = no_memory();
    for (size_t i = 0; st == COFFER_OK && i < cl->nprops; i++) {
        coffer_value old_v = {.type = COFFER_TYPE_NULL}, new_v = {.type = COFFER_TYPE_NULL};
        int readable = cl->props[i].type != COFFER_TYPE_LINKING_OBJECTS;
        if (readable && before && coffer_object_get_value(before, (coffer_property_id)i, &old_v) != COFFER_OK)
            old_v.type = COFFER_TYPE_NULL;
        if (readable && coffer_object_get_value(now, (coffer_property_id)i, &new_v) != COFFER_OK)
            new_v.type = COFFER_TYPE_NULL;
        if (!property_changed(obs, new_txn, c, cl, i, &old_v, &new_v))
            continue;
        out->props[out->count] = (coffer_property_id)i;
        out->old_values[out->count] = old_v;
        out->new_values[out->count] = new_v;
        out->count++;
    }
    if (st != COFFER_OK) {
        cf_object_changes_free(out);
        return st;
    }
    *deliver = out->count > 0;
    if (!*deliver)
        cf_object_changes_free(out);
    return COFFER_OK;
}

/* ------------------------------------------------------------------------ */
/* Public accessors                                                          */
/* ------------------------------------------------------------------------ */

static const cf_index_set *index_set(const coffer_collection_changes *ch, int kind)
{
    switch (kind) {
    case COFFER_CHANGE_DELETIONS: return &ch->cs.deletions;
    case COFFER_CHANGE_INSERTIONS: return &ch->cs.insertions;
    case COFFER_CHANGE_MODIFICATIONS: return &ch->cs.modifications;
    case COFFER_CHANGE_MODIFICATIONS_NEW: return &ch->cs.modifications_new;
    }
    return NULL;
}

COFFER_API size_t coffer_collection_changes_count(const coffer_collection_changes *changes, int kind)
{
    const cf_index_set *s = changes ? index_set(changes, kind) : NULL;
    return s ? (size_t)cf_index_set_size(s) : 0;
}

COFFER_API size_t coffer_collection_changes_copy(const coffer_collection_changes *changes, int kind, uint64_t *out)
{
    const cf_index_set *s = changes ? index_set(changes, kind) : NULL;
    if (!s || !out)
        return 0;
    cf_index_set_copy_to(s, out);
    return (size_t)cf_index_set_size(s);
}

COFFER_API int coffer_collection_changes_result_keys(const coffer_collection_changes *changes, const uint64_t **keys,
                                                     size_t *count)
{
    int has = changes && changes->has_keys;
    if (keys)
        *keys = has ? changes->keys : NULL;
    if (count)
        *count = has ? changes->nkeys : 0;
    return has;
}

COFFER_API size_t coffer_collection_changes_move_count(const coffer_collection_changes *changes)
{
    return changes ? changes->cs.move_count : 0;
}

COFFER_API coffer_status coffer_collection_changes_move(const coffer_collection_changes *changes, size_t i,
                                                       uint64_t *from, uint64_t *to)
{
    if (!changes || !from || !to)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "coffer_collection_changes_move: NULL argument");
    if (i >= changes->cs.move_count)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "coffer_collection_changes_move: move %zu of %zu", i,
                        changes->cs.move_count);
    *from = changes->cs.moves[i].from;
    *to = changes->cs.moves[i].to;
    return COFFER_OK;
}

COFFER_API int coffer_collection_changes_cleared(const coffer_collection_changes *changes)
{
    return changes && changes->cs.collection_was_cleared;
}

COFFER_API int coffer_collection_changes_root_deleted(const coffer_collection_changes *changes)
{
    return changes && changes->cs.collection_root_was_deleted;
}

COFFER_API int coffer_object_changes_deleted(const coffer_object_changes *changes)
{
    return changes && changes->deleted;
}

COFFER_API size_t coffer_object_changes_count(const coffer_object_changes *changes)
{
    return changes ? changes->count : 0;
}

COFFER_API coffer_status coffer_object_changes_property(const coffer_object_changes *changes, size_t i,
                                                       coffer_property_id *prop, coffer_value *old_value,
                                                       coffer_value *new_value)
{
    if (!changes)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "coffer_object_changes_property: changes is NULL");
    if (i >= changes->count)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "coffer_object_changes_property: property %zu of %zu changed", i,
                        changes->count);
    if (prop)
        *prop = changes->props[i];
    if (old_value)
        *old_value = changes->old_values[i];
    if (new_value)
        *new_value = changes->new_values[i];
    return COFFER_OK;
}
