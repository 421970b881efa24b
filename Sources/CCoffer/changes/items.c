/* items — what set and map observers are told. A set or map writes no
 * positions to the change log (only its owner's property is modified, and a
 * clear is recorded), so an observer keeps the identities of the elements
 * or entries it last told and compares them with the new contents: a set's
 * change set gives positions in its order, as a list's does; a map's gives
 * keys (deleted, inserted, modified), as Realm's dictionary changes do. */
#include <stdlib.h>
#include <string.h>

#include "changes/hub.h"
#include "crypto/crypto.h"
#include "objects/cell.h"
#include "util/buffer.h"
#include "util/error.h"

static coffer_status no_memory(void) { return cf_error(COFFER_ERR_NO_MEMORY, "out of memory computing changes"); }

static const cf_prop *observed_prop(const cf_observer *obs, coffer_db *db)
{
    return &db->schema->classes[obs->cls].props[obs->prop];
}

/* A nested collection is known by its kind only: a change inside it is no
 * change of the entry holding it. */
void cf_value_identity(const coffer_value *v, uint8_t out[CF_INDEX_HASH_SIZE])
{
    uint8_t head[40];
    size_t hl = 1;
    const void *body = NULL;
    size_t bl = 0;
    if (v->type <= COFFER_TYPE_LINK) {
        cf_cell_identity(v, head, &hl, &body, &bl);
    } else {
        head[0] = (uint8_t)v->type;
    }
    cf_index_hash(NULL, out, head, hl, body, bl);
}

void cf_items_free(cf_item *items, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(items[i].key);
    free(items);
}

/* Fills `item` from element or entry value `v` (and map key `key`). */
static int item_fill(cf_item *item, const coffer_value *v, const coffer_bytes *key)
{
    memset(item, 0, sizeof *item);
    cf_value_identity(v, key ? item->value : item->id);
    if (v->type == COFFER_TYPE_LINK) {
        item->is_link = 1;
        item->link_cls = v->u.link.class_id;
        item->link_key = v->u.link.key;
    }
    if (key) {
        coffer_value k = {.type = COFFER_TYPE_STRING};
        k.u.string.data = (const char *)key->data;
        k.u.string.size = key->size;
        cf_value_identity(&k, item->id);
        item->key = malloc(key->size ? key->size : 1);
        if (!item->key)
            return -1;
        memcpy(item->key, key->data, key->size);
        item->key_len = key->size;
    }
    return 0;
}

/* Reads the elements of the observed set (or entries of the map) in `txn`,
 * in their order. `*deleted` when the owner is gone. */
static coffer_status read_items(const cf_observer *obs, coffer_txn *txn, cf_item **items, size_t *n, int *deleted)
{
    *items = NULL;
    *n = 0;
    coffer_object *owner;
    coffer_status st = cf_observed_owner(obs, txn, &owner);
    *deleted = st == COFFER_OK && !owner;
    if (st != COFFER_OK || !owner)
        return st;
    int is_map = obs->kind == CF_OBS_MAP;
    coffer_set *set = NULL;
    coffer_map *map = NULL;
    uint64_t count = 0;
    st = is_map ? coffer_object_get_map(owner, obs->prop, &map) : coffer_object_get_set(owner, obs->prop, &set);
    if (st == COFFER_OK)
        st = is_map ? coffer_map_count(map, &count) : coffer_set_count(set, &count);
    if (st == COFFER_OK && count && !(*items = calloc(count, sizeof **items)))
        st = no_memory();
    size_t filled = 0;
    for (uint64_t i = 0; st == COFFER_OK && i < count; i++) {
        coffer_value v;
        coffer_bytes key;
        st = is_map ? coffer_map_get_entry(map, i, &key, &v) : coffer_set_get(set, i, &v);
        if (st == COFFER_OK && item_fill(&(*items)[filled++], &v, is_map ? &key : NULL))
            st = no_memory();
    }
    if (set)
        coffer_set_release(set);
    if (map)
        coffer_map_release(map);
    coffer_object_release(owner);
    if (st != COFFER_OK) {
        cf_items_free(*items, filled);
        *items = NULL;
        return st;
    }
    *n = (size_t)count;
    return COFFER_OK;
}

coffer_status cf_items_initial(cf_observer *obs, coffer_txn *txn)
{
    cf_items_free(obs->items, obs->nitems);
    obs->items = NULL;
    obs->nitems = 0;
    int deleted;
    coffer_status st = read_items(obs, txn, &obs->items, &obs->nitems, &deleted);
    obs->finished = deleted;
    return st;
}

/* Whether anything the set or map holds could have changed: its owner's
 * property, a clear of it, or (for links) any class its objects reach. */
static int worth_reading(const cf_observer *obs, coffer_db *db, const cf_changes_read *c)
{
    if (c->gap || !c->ntouched)
        return c->gap;
    const cf_class *cl = &db->schema->classes[obs->cls];
    const cf_prop *p = observed_prop(obs, db);
    if (cf_changes_deleted(c, cl->table, obs->key))
        return 1;
    const cf_mod *m = cf_changes_find(c, cl->table, obs->key);
    if (m && cf_changes_column(m, p->column))
        return 1;
    /* Values other than links change only through the property. */
    return p->type == COFFER_TYPE_LINK || p->type == COFFER_TYPE_MIXED;
}

/* Whether the object a kept element links to changed. */
static bool item_changed(const cf_observer *obs, coffer_txn *txn, const cf_changes_read *c, const cf_item *item)
{
    return item->is_link && !c->gap && cf_object_changed(obs, txn, c, item->link_cls, item->link_key, 1);
}

static int compare_ids(const void *pa, const void *pb)
{
    const cf_item *a = *(const cf_item *const *)pa, *b = *(const cf_item *const *)pb;
    return memcmp(a->id, b->id, sizeof a->id);
}

/* For every new item, the index of the old item with the same identity, or
 * SIZE_MAX (a new one); and for every old item whether it was kept. */
static int match_items(const cf_item *old, size_t nold, const cf_item *now, size_t nnow, size_t *old_of_new, bool *kept)
{
    for (size_t j = 0; j < nnow; j++)
        old_of_new[j] = SIZE_MAX;
    for (size_t i = 0; i < nold; i++)
        kept[i] = false;
    if (!nold || !nnow)
        return 0;
    /* The old identities, sorted, are looked up by binary search. */
    const cf_item **sorted = malloc(nold * sizeof *sorted);
    if (!sorted)
        return -1;
    for (size_t i = 0; i < nold; i++)
        sorted[i] = &old[i];
    qsort(sorted, nold, sizeof *sorted, compare_ids);
    for (size_t j = 0; j < nnow; j++) {
        const cf_item *probe = &now[j];
        const cf_item **found = bsearch(&probe, sorted, nold, sizeof *sorted, compare_ids);
        if (found) {
            size_t i = (size_t)(*found - old);
            old_of_new[j] = i;
            kept[i] = true;
        }
    }
    free(sorted);
    return 0;
}

/* Whether a clear of the observed collection is among the operations. */
static int was_cleared(const cf_observer *obs, coffer_db *db, const cf_changes_read *c)
{
    const cf_class *cl = &db->schema->classes[obs->cls];
    uint32_t column = observed_prop(obs, db)->column;
    for (size_t i = 0; i < c->nops; i++) {
        const cf_log_coll_op *op = &c->ops[i];
        if (op->op == CF_COLL_CLEAR && op->table == cl->table && op->key == obs->key && op->column == column &&
            op->coll_id == 0)
            return 1;
    }
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Sets                                                                      */
/* ------------------------------------------------------------------------ */

typedef struct set_ctx {
    const bool *changed; /* per old element, by its number (old index + 1) */
} set_ctx;

static bool number_changed(uint64_t number, void *ctx)
{
    const set_ctx *k = ctx;
    return number >= 1 && k->changed[number - 1];
}

/* The change set from `old` to `now`: elements are numbered by their old
 * index (new ones after), and the ordered diff reports them, so that even a
 * set assigned whole (whose order may differ) is told consistently. */
static int set_diff(const cf_observer *obs, coffer_txn *txn, const cf_changes_read *c, const cf_item *old, size_t nold,
                    const cf_item *now, size_t nnow, cf_changeset *cs)
{
    size_t *old_of_new = malloc((nnow ? nnow : 1) * sizeof *old_of_new);
    bool *kept = malloc((nold ? nold : 1) * sizeof *kept);
    bool *changed = calloc(nold ? nold : 1, sizeof *changed);
    uint64_t *old_numbers = malloc((nold ? nold : 1) * sizeof *old_numbers);
    uint64_t *new_numbers = malloc((nnow ? nnow : 1) * sizeof *new_numbers);
    int failed = !old_of_new || !kept || !changed || !old_numbers || !new_numbers;
    if (!failed)
        failed = match_items(old, nold, now, nnow, old_of_new, kept);
    if (!failed) {
        for (size_t i = 0; i < nold; i++)
            old_numbers[i] = i + 1;
        for (size_t j = 0; j < nnow; j++) {
            size_t i = old_of_new[j];
            new_numbers[j] = i == SIZE_MAX ? nold + 1 + j : i + 1;
            if (i != SIZE_MAX)
                changed[i] = item_changed(obs, txn, c, &now[j]);
        }
        set_ctx k = {changed};
        failed = cf_changeset_diff(old_numbers, nold, new_numbers, nnow, number_changed, &k, CF_DIFF_ORDERED, cs);
    }
    free(old_of_new);
    free(kept);
    free(changed);
    free(old_numbers);
    free(new_numbers);
    return failed;
}

/* The contents of a new version: the items, or the owner deleted. */
typedef struct contents {
    cf_item *items;
    size_t n;
    int deleted;
} contents;

/* Reads the new contents into `now` when a change could have reached them
 * and returns 1 to go on comparing; returns 0 with `*st` set when there is
 * nothing to compare (no change reached them, or the read failed). Nothing is
 * delivered until a change is found. */
static int read_new_items(const cf_observer *obs, coffer_txn *new_txn, const cf_changes_read *c, contents *now,
                          int *deliver, coffer_status *st)
{
    *deliver = 0;
    memset(now, 0, sizeof *now);
    *st = COFFER_OK;
    if (!worth_reading(obs, new_txn->db, c))
        return 0;
    *st = read_items(obs, new_txn, &now->items, &now->n, &now->deleted);
    return *st == COFFER_OK;
}

coffer_status cf_compute_set(cf_observer *obs, coffer_txn *new_txn, const cf_changes_read *c, int *deliver,
                             cf_changeset *cs)
{
    contents now;
    coffer_status st;
    if (!read_new_items(obs, new_txn, c, &now, deliver, &st))
        return st;
    cf_item *items = now.items;
    size_t n = now.n;
    int failed;
    if (now.deleted) {
        failed = cf_index_set_add_range(&cs->deletions, 0, obs->nitems);
        cs->collection_root_was_deleted = true;
        obs->finished = 1;
    } else {
        failed = set_diff(obs, new_txn, c, obs->items, obs->nitems, items, n, cs);
        cs->collection_was_cleared = !failed && n == 0 && obs->nitems > 0 && was_cleared(obs, new_txn->db, c);
    }
    if (failed) {
        cf_items_free(items, n);
        return no_memory();
    }
    cf_items_free(obs->items, obs->nitems);
    obs->items = items;
    obs->nitems = n;
    *deliver = !cf_changeset_is_empty(cs);
    return COFFER_OK;
}

/* ------------------------------------------------------------------------ */
/* Maps                                                                      */
/* ------------------------------------------------------------------------ */

void cf_map_changes_free(struct coffer_map_changes *mc)
{
    for (int k = 0; k < 3; k++)
        free(mc->keys[k]);
    cf_items_free(mc->retired, mc->nretired);
    memset(mc, 0, sizeof *mc);
}

static void add_key(struct coffer_map_changes *mc, int kind, const cf_item *item)
{
    mc->keys[kind][mc->count[kind]++] = (coffer_bytes){item->key, item->key_len};
}

coffer_status cf_compute_map(cf_observer *obs, coffer_txn *new_txn, const cf_changes_read *c, int *deliver,
                             struct coffer_map_changes *out)
{
    memset(out, 0, sizeof *out);
    contents now;
    coffer_status st;
    if (!read_new_items(obs, new_txn, c, &now, deliver, &st))
        return st;
    cf_item *items = now.items;
    size_t n = now.n, nold = obs->nitems;
    int deleted = now.deleted;
    size_t *old_of_new = malloc((n ? n : 1) * sizeof *old_of_new);
    bool *kept = malloc((nold ? nold : 1) * sizeof *kept);
    for (int k = 0; k < 3; k++)
        out->keys[k] = malloc(((k == COFFER_CHANGE_DELETIONS ? nold : n) + 1) * sizeof *out->keys[k]);
    int failed = !old_of_new || !kept || !out->keys[0] || !out->keys[1] || !out->keys[2];
    if (!failed)
        failed = match_items(obs->items, nold, items, n, old_of_new, kept);
    if (!failed) {
        for (size_t i = 0; i < nold; i++)
            if (!kept[i])
                add_key(out, COFFER_CHANGE_DELETIONS, &obs->items[i]);
        for (size_t j = 0; j < n; j++) {
            size_t i = old_of_new[j];
            if (i == SIZE_MAX)
                add_key(out, COFFER_CHANGE_INSERTIONS, &items[j]);
            else if (memcmp(obs->items[i].value, items[j].value, sizeof items[j].value) != 0 ||
                     item_changed(obs, new_txn, c, &items[j]))
                add_key(out, COFFER_CHANGE_MODIFICATIONS, &items[j]);
        }
        out->root_deleted = deleted;
        out->cleared = !deleted && n == 0 && nold > 0 && was_cleared(obs, new_txn->db, c);
    }
    free(old_of_new);
    free(kept);
    if (failed) {
        cf_map_changes_free(out);
        cf_items_free(items, n);
        return no_memory();
    }
    /* The old entries live until the callback returns: deleted keys point
     * into them. */
    out->retired = obs->items;
    out->nretired = nold;
    obs->items = items;
    obs->nitems = n;
    obs->finished = deleted;
    *deliver = out->count[0] || out->count[1] || out->count[2] || deleted;
    if (!*deliver)
        cf_map_changes_free(out);
    return COFFER_OK;
}

/* ------------------------------------------------------------------------ */
/* Public accessors                                                          */
/* ------------------------------------------------------------------------ */

static int map_kind_ok(int kind)
{
    return kind == COFFER_CHANGE_DELETIONS || kind == COFFER_CHANGE_INSERTIONS || kind == COFFER_CHANGE_MODIFICATIONS;
}

COFFER_API size_t coffer_map_changes_count(const coffer_map_changes *changes, int kind)
{
    return changes && map_kind_ok(kind) ? changes->count[kind] : 0;
}

COFFER_API coffer_status coffer_map_changes_key(const coffer_map_changes *changes, int kind, size_t i, coffer_bytes *key)
{
    if (!changes || !key)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "coffer_map_changes_key: NULL argument");
    if (!map_kind_ok(kind))
        return cf_error(COFFER_ERR_INVALID_ARGUMENT,
                        "coffer_map_changes_key: kind %d is not COFFER_CHANGE_DELETIONS, _INSERTIONS or _MODIFICATIONS",
                        kind);
    if (i >= changes->count[kind])
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "coffer_map_changes_key: key %zu of %zu", i, changes->count[kind]);
    *key = changes->keys[kind][i];
    return COFFER_OK;
}

COFFER_API int coffer_map_changes_cleared(const coffer_map_changes *changes) { return changes && changes->cleared; }

COFFER_API int coffer_map_changes_root_deleted(const coffer_map_changes *changes)
{
    return changes && changes->root_deleted;
}
