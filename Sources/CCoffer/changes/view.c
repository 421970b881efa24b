/* view — what an observer of a list seen through a query (a list of
 * objects: the query's predicate, SORT, DISTINCT and LIMIT applied to the
 * list's elements in the list's order) or through a sort or distinct of its
 * values (a list of values) is told. A row of the view is a position of the
 * list: the list's own change set (replayed from the change log) says which
 * old position each element now comes from, and the view's old and new
 * rows, known by those positions, are compared as ordered results are (a
 * row that changes places is a deletion plus an insertion, never a move),
 * as realm-core does for `list.filter(...)` and `list.sorted(...)`. */
#include <stdlib.h>
#include <string.h>

#include "changes/hub.h"
#include "crypto/crypto.h"
#include "query/engine.h"
#include "util/error.h"

static coffer_status no_memory(void) { return cf_error(COFFER_ERR_NO_MEMORY, "out of memory computing changes"); }

/* ------------------------------------------------------------------------ */
/* The rows of a view                                                        */
/* ------------------------------------------------------------------------ */

/* The list positions of `found` (keys the query kept, each occurrence of a
 * key in list order: filtering, a stable sort, DISTINCT and LIMIT keep the
 * first occurrences of an object first). */
static int positions_of(const uint64_t *keys, size_t n, const uint64_t *found, size_t nfound, uint64_t *rows)
{
    cf_keyed_row *pairs = cf_sorted_rows(keys, n);
    size_t *used = calloc(n ? n : 1, sizeof *used);
    if (!pairs || !used) {
        free(pairs);
        free(used);
        return -1;
    }
    for (size_t r = 0; r < nfound; r++) {
        size_t lo = 0, hi = n;
        while (lo < hi) { /* the first pair of the key */
            size_t mid = lo + (hi - lo) / 2;
            if (pairs[mid].key < found[r])
                lo = mid + 1;
            else
                hi = mid;
        }
        size_t at = lo + used[lo]++;
        rows[r] = at < n && pairs[at].key == found[r] ? pairs[at].index : 0;
    }
    free(pairs);
    free(used);
    return 0;
}

/* A list of objects through the observer's query. */
static coffer_status object_rows(const cf_observer *obs, coffer_txn *txn, const uint64_t *keys, size_t n, uint64_t **rows,
                                 size_t *nrows)
{
    coffer_results *all = NULL, *seen = NULL;
    uint64_t count = 0;
    uint64_t *found = NULL;
    coffer_status st = coffer_results_from_keys(txn, coffer_query_class(obs->query), keys, n, &all);
    if (st == COFFER_OK)
        st = coffer_results_filter(all, obs->query, &seen);
    if (st == COFFER_OK)
        st = coffer_results_count(seen, &count);
    if (st == COFFER_OK && (!(found = malloc((count ? count : 1) * sizeof *found)) ||
                            !(*rows = malloc((count ? count : 1) * sizeof **rows))))
        st = no_memory();
    if (st == COFFER_OK && count)
        st = coffer_results_copy_keys(seen, 0, (size_t)count, found);
    if (st == COFFER_OK && positions_of(keys, n, found, (size_t)count, *rows))
        st = no_memory();
    coffer_results_free(seen);
    coffer_results_free(all);
    free(found);
    if (st != COFFER_OK) {
        free(*rows);
        *rows = NULL;
        return st;
    }
    *nrows = (size_t)count;
    return COFFER_OK;
}

/* One element of a list of values, copied out of its handle. */
typedef struct held {
    coffer_value v;
    uint8_t id[CF_INDEX_HASH_SIZE];
    uint64_t pos;
    int descending;
} held;

static int compare_held(const void *pa, const void *pb)
{
    const held *a = pa, *b = pb;
    int c = cf_qvalue_sort_compare(&a->v, &b->v);
    if (a->descending)
        c = -c;
    if (c)
        return c;
    return a->pos < b->pos ? -1 : a->pos > b->pos; /* stable */
}

static int compare_held_ids(const void *pa, const void *pb)
{
    const held *a = pa, *b = pb;
    int c = memcmp(a->id, b->id, sizeof a->id);
    if (c)
        return c;
    return a->pos < b->pos ? -1 : a->pos > b->pos;
}

static int compare_held_pos(const void *pa, const void *pb)
{
    const held *a = pa, *b = pb;
    return a->pos < b->pos ? -1 : a->pos > b->pos;
}

static void held_free(held *h, size_t n)
{
    for (size_t i = 0; h && i < n; i++)
        if (h[i].v.type == COFFER_TYPE_STRING || h[i].v.type == COFFER_TYPE_BINARY)
            free((void *)h[i].v.u.binary.data);
    free(h);
}

/* Reads the values of `list` into `out` (copies), sorted descending when
 * `descending` is set. */
static coffer_status read_list_values(coffer_list *list, int descending, held **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    uint64_t count = 0;
    coffer_status st = coffer_list_count(list, &count);
    held *h = NULL;
    if (st == COFFER_OK && !(h = calloc(count ? count : 1, sizeof *h)))
        st = no_memory();
    size_t filled = 0;
    for (uint64_t i = 0; st == COFFER_OK && i < count; i++, filled++) {
        held *e = &h[i];
        st = coffer_list_get(list, i, &e->v);
        if (st != COFFER_OK)
            break;
        e->pos = i;
        e->descending = descending;
        cf_value_identity(&e->v, e->id);
        if (e->v.type == COFFER_TYPE_STRING || e->v.type == COFFER_TYPE_BINARY) {
            size_t size = e->v.u.binary.size;
            uint8_t *copy = malloc(size ? size : 1);
            if (!copy) {
                e->v.type = COFFER_TYPE_NULL;
                st = no_memory();
                break;
            }
            memcpy(copy, e->v.u.binary.data, size);
            e->v.u.binary.data = copy;
        }
    }
    if (st != COFFER_OK) {
        held_free(h, filled);
        return st;
    }
    *out = h;
    *n = (size_t)count;
    return COFFER_OK;
}

/* `h` (n values of a list, in list order) through DISTINCT, which keeps the
 * first of equal values in list order, then a stable sort by `order`. */
static void order_values(held *h, size_t *n, int order, int distinct)
{
    if (distinct && *n) {
        qsort(h, *n, sizeof *h, compare_held_ids);
        size_t kept = 0;
        for (size_t i = 0; i < *n; i++) {
            if (kept && memcmp(h[kept - 1].id, h[i].id, sizeof h[i].id) == 0) {
                if (h[i].v.type == COFFER_TYPE_STRING || h[i].v.type == COFFER_TYPE_BINARY)
                    free((void *)h[i].v.u.binary.data);
                continue;
            }
            h[kept++] = h[i];
        }
        *n = kept;
        qsort(h, *n, sizeof *h, compare_held_pos);
    }
    if (order != COFFER_SORT_NONE && *n)
        qsort(h, *n, sizeof *h, compare_held);
}

/* A list of values through the observer's distinct and sort. */
static coffer_status value_rows(const cf_observer *obs, coffer_txn *txn, uint64_t **rows, size_t *nrows)
{
    held *h = NULL;
    size_t n = 0;
    coffer_object *owner;
    coffer_status st = cf_observed_owner(obs, txn, &owner);
    if (st != COFFER_OK || !owner)
        return st; /* a deleted owner has no view: its rows are all deleted */
    coffer_list *list;
    st = coffer_object_get_list(owner, obs->prop, &list);
    if (st == COFFER_OK) {
        st = read_list_values(list, obs->value_order == COFFER_SORT_DESCENDING, &h, &n);
        coffer_list_release(list);
    }
    coffer_object_release(owner);
    if (st != COFFER_OK)
        return st;
    order_values(h, &n, obs->value_order, obs->value_distinct);
    *rows = malloc((n ? n : 1) * sizeof **rows);
    if (!*rows) {
        held_free(h, n);
        return no_memory();
    }
    for (size_t i = 0; i < n; i++)
        (*rows)[i] = h[i].pos;
    *nrows = n;
    held_free(h, n);
    return COFFER_OK;
}

COFFER_API coffer_status coffer_list_values_view(coffer_list *list, int order, int distinct, uint64_t *positions,
                                                 size_t capacity, size_t *count)
{
    if (count)
        *count = 0;
    if (!list || !count || (capacity && !positions))
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "coffer_list_values_view: list, positions or count is NULL");
    if (order != COFFER_SORT_NONE && order != COFFER_SORT_ASCENDING && order != COFFER_SORT_DESCENDING)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "coffer_list_values_view: order %d is not a coffer_sort_order", order);
    held *h = NULL;
    size_t n = 0;
    coffer_status st = read_list_values(list, order == COFFER_SORT_DESCENDING, &h, &n);
    if (st != COFFER_OK)
        return st;
    order_values(h, &n, order, distinct);
    if (n > capacity) {
        held_free(h, n);
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "coffer_list_values_view: %zu positions do not fit in %zu", n,
                        capacity);
    }
    for (size_t i = 0; i < n; i++)
        positions[i] = h[i].pos;
    *count = n;
    held_free(h, n);
    return COFFER_OK;
}

static coffer_status view_rows(const cf_observer *obs, coffer_txn *txn, const uint64_t *keys, size_t n, uint64_t **rows,
                               size_t *nrows)
{
    *rows = NULL;
    *nrows = 0;
    return obs->query ? object_rows(obs, txn, keys, n, rows, nrows) : value_rows(obs, txn, rows, nrows);
}

coffer_status cf_view_initial(cf_observer *obs, coffer_txn *txn)
{
    free(obs->keys);
    free(obs->rows);
    obs->keys = obs->rows = NULL;
    obs->nkeys = obs->nrows = 0;
    int deleted;
    coffer_status st = cf_list_keys(obs, txn, &obs->keys, &obs->nkeys, &deleted);
    obs->finished = deleted;
    if (st == COFFER_OK && !deleted)
        st = view_rows(obs, txn, obs->keys, obs->nkeys, &obs->rows, &obs->nrows);
    return st;
}

/* ------------------------------------------------------------------------ */
/* The change set of a view                                                  */
/* ------------------------------------------------------------------------ */

#define NO_ROW UINT64_MAX

/* For every new position of the list, the old position its element comes
 * from (NO_ROW: inserted), and whether it was changed, from the list's
 * change set: kept elements keep their relative order, moves are explicit. */
static void trace_positions(const cf_changeset *list_cs, size_t nold, size_t nnew, uint64_t *old_of_new, bool *changed)
{
    size_t i = 0;
    for (size_t j = 0; j < nnew; j++) {
        changed[j] = false;
        if (cf_index_set_contains(&list_cs->insertions, j)) {
            old_of_new[j] = NO_ROW;
            continue;
        }
        while (i < nold && cf_index_set_contains(&list_cs->deletions, i))
            i++;
        old_of_new[j] = i < nold ? i++ : NO_ROW;
    }
    for (size_t m = 0; m < list_cs->move_count; m++)
        if (list_cs->moves[m].to < nnew)
            old_of_new[list_cs->moves[m].to] = list_cs->moves[m].from;
    for (size_t j = 0; j < nnew; j++)
        changed[j] = cf_index_set_contains(&list_cs->modifications_new, j) ||
                     cf_index_set_contains(&list_cs->modified_insertions, j);
}

typedef struct row_ctx {
    const bool *changed; /* by old position */
    size_t nold;
} row_ctx;

/* Rows are numbered by their old position + 1; new elements after. */
static bool row_changed(uint64_t number, void *ctx)
{
    const row_ctx *k = ctx;
    return number >= 1 && number <= k->nold && k->changed[number - 1];
}

coffer_status cf_compute_view(cf_observer *obs, coffer_txn *new_txn, const cf_changes_read *c, int *deliver,
                              cf_changeset *cs)
{
    *deliver = 0;
    uint64_t *keys = NULL, *rows = NULL;
    size_t n = 0, nrows = 0;
    int deleted;
    cf_changeset list_cs;
    cf_changeset_init(&list_cs);
    coffer_status st = cf_list_keys(obs, new_txn, &keys, &n, &deleted);
    if (st == COFFER_OK)
        st = cf_list_compute(obs, new_txn, c, keys, n, deleted, &list_cs);
    if (st == COFFER_OK && deleted) {
        if (cf_index_set_add_range(&cs->deletions, 0, obs->nrows))
            st = no_memory();
        cs->collection_root_was_deleted = true;
    } else if (st == COFFER_OK) {
        st = view_rows(obs, new_txn, keys, n, &rows, &nrows);
    }
    uint64_t *old_of_new = NULL, *old_numbers = NULL, *new_numbers = NULL;
    bool *changed_new = NULL, *changed_old = NULL;
    if (st == COFFER_OK && !deleted) {
        size_t nold = obs->nkeys;
        old_of_new = malloc((n ? n : 1) * sizeof *old_of_new);
        changed_new = malloc((n ? n : 1) * sizeof *changed_new);
        changed_old = calloc(nold ? nold : 1, sizeof *changed_old);
        old_numbers = malloc((obs->nrows ? obs->nrows : 1) * sizeof *old_numbers);
        new_numbers = malloc((nrows ? nrows : 1) * sizeof *new_numbers);
        if (!old_of_new || !changed_new || !changed_old || !old_numbers || !new_numbers)
            st = no_memory();
        if (st == COFFER_OK) {
            trace_positions(&list_cs, nold, n, old_of_new, changed_new);
            for (size_t j = 0; j < n; j++)
                if (old_of_new[j] != NO_ROW && old_of_new[j] < nold)
                    changed_old[old_of_new[j]] = changed_new[j];
            for (size_t r = 0; r < obs->nrows; r++)
                old_numbers[r] = obs->rows[r] + 1;
            for (size_t r = 0; r < nrows; r++) {
                uint64_t from = old_of_new[rows[r]];
                new_numbers[r] = from == NO_ROW ? nold + 1 + rows[r] : from + 1;
            }
            row_ctx k = {changed_old, nold};
            if (cf_changeset_diff(old_numbers, obs->nrows, new_numbers, nrows, row_changed, &k, CF_DIFF_ORDERED, cs))
                st = no_memory();
        }
    }
    free(old_of_new);
    free(changed_new);
    free(changed_old);
    free(old_numbers);
    free(new_numbers);
    cf_changeset_free(&list_cs);
    if (st != COFFER_OK) {
        free(keys);
        free(rows);
        return st;
    }
    free(obs->keys);
    free(obs->rows);
    obs->keys = keys;
    obs->nkeys = n;
    obs->rows = rows;
    obs->nrows = nrows;
    *deliver = !cf_changeset_is_empty(cs) || cs->collection_root_was_deleted;
    return COFFER_OK;
}
