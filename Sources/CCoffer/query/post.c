/* post — SORT, DISTINCT and LIMIT, applied in the order written, as Realm
 * does: each SORT is a stable sort of what the steps before it left, each
 * DISTINCT keeps the first object of every distinct tuple of values. */
#include <stdlib.h>
#include <string.h>

#include "util/error.h"
#include "query/plan.h"

typedef coffer_status status;

typedef struct rows {
    coffer_value *vals; /* nrows * nkeys */
    size_t nkeys;
    const cf_bsort *keys;
    int use_direction;  /* SORT: ascending/descending per key; DISTINCT: any order */
    void **copies;      /* bytes copied out of the objects */
    size_t ncopies;
} rows;

static status no_memory(void) { return cf_error(COFFER_ERR_NO_MEMORY, "query: out of memory"); }

static void rows_free(rows *r)
{
    for (size_t i = 0; i < r->ncopies; i++)
        free(r->copies[i]);
    free(r->copies);
    free(r->vals);
}

/* Reads every key path of every object, keeping copies of strings. */
static status rows_read(coffer_txn *txn, const cf_bquery *bq, cf_qguard *guard, const cf_bpost *post,
                        const cf_keylist *keys, rows *r)
{
    memset(r, 0, sizeof *r);
    r->nkeys = post->count;
    r->keys = post->keys;
    r->use_direction = post->kind == CF_QO_SORT;
    size_t total = keys->n * post->count;
    r->vals = calloc(total ? total : 1, sizeof *r->vals);
    r->copies = calloc(total ? total : 1, sizeof *r->copies);
    if (!r->vals || !r->copies)
        return no_memory();
    cf_qrun *run;
    status st = cf_qrun_new(txn, bq, guard, &run);
    if (st != COFFER_OK)
        return st;
    cf_qvals vals = {0};
    for (size_t i = 0; i < keys->n && st == COFFER_OK; i++) {
        coffer_object *obj = NULL;
        if ((st = cf_qrun_check(run)) != COFFER_OK)
            break;
        st = coffer_object_get(txn, bq->cls, keys->k[i], &obj);
        if (st == COFFER_ERR_NOT_FOUND) {
            coffer_clear_error(); /* deleted since: its values sort as null */
            st = COFFER_OK;
            continue;
        }
        for (size_t k = 0; k < post->count && st == COFFER_OK; k++) {
            st = cf_qrun_path(run, obj, post->keys[k].steps, post->keys[k].nsteps, &vals);
            coffer_value *v = &r->vals[i * r->nkeys + k];
            *v = vals.n ? vals.v[0] : coffer_value_null();
            if (st == COFFER_OK && (v->type == COFFER_TYPE_STRING || v->type == COFFER_TYPE_BINARY) && v->u.string.size) {
                void *copy = malloc(v->u.string.size);
                if (!copy) {
                    st = no_memory();
                    break;
                }
                memcpy(copy, v->u.string.data, v->u.string.size);
                v->u.string.data = copy;
                r->copies[r->ncopies++] = copy;
            }
        }
        cf_qrun_release(run);
        coffer_object_release(obj);
    }
    free(vals.v);
    cf_qrun_free(run);
    return st;
}

static int row_compare(const rows *r, size_t a, size_t b)
{
    for (size_t k = 0; k < r->nkeys; k++) {
        int c = cf_qvalue_sort_compare(&r->vals[a * r->nkeys + k], &r->vals[b * r->nkeys + k]);
        if (c)
            return r->use_direction && !r->keys[k].ascending ? -c : c;
    }
    return 0;
}

/* A stable merge sort of row numbers. */
static void merge_sort(const rows *r, size_t *idx, size_t *tmp, size_t n)
{
    if (n < 2)
        return;
    size_t half = n / 2;
    merge_sort(r, idx, tmp, half);
    merge_sort(r, idx + half, tmp, n - half);
    size_t i = 0, j = half, o = 0;
    while (i < half && j < n)
        tmp[o++] = row_compare(r, idx[j], idx[i]) < 0 ? idx[j++] : idx[i++];
    while (i < half)
        tmp[o++] = idx[i++];
    while (j < n)
        tmp[o++] = idx[j++];
    memcpy(idx, tmp, n * sizeof *idx);
}

static status sort_or_distinct(coffer_txn *txn, const cf_bquery *bq, cf_qguard *guard, const cf_bpost *post,
                               cf_keylist *keys)
{
    rows r;
    size_t n = keys->n;
    size_t *idx = malloc((n ? n : 1) * sizeof *idx), *tmp = malloc((n ? n : 1) * sizeof *tmp);
    uint64_t *out = malloc((n ? n : 1) * sizeof *out);
    status st = idx && tmp && out ? rows_read(txn, bq, guard, post, keys, &r) : no_memory();
    if (st == COFFER_OK) {
        for (size_t i = 0; i < n; i++)
            idx[i] = i;
        merge_sort(&r, idx, tmp, n);
        size_t w = 0;
        if (post->kind == CF_QO_SORT) {
            for (size_t i = 0; i < n; i++)
                out[w++] = keys->k[idx[i]];
        } else {
            /* The first row of each run of equal tuples is the earliest. */
            unsigned char *keep = calloc(n ? n : 1, 1);
            if (!keep) {
                st = no_memory();
            } else {
                for (size_t i = 0; i < n; i++)
                    keep[idx[i]] = i == 0 || row_compare(&r, idx[i - 1], idx[i]) != 0;
                for (size_t i = 0; i < n; i++)
                    if (keep[i])
                        out[w++] = keys->k[i];
                free(keep);
            }
        }
        if (st == COFFER_OK) {
            if (w) /* an empty result may have no array at all */
                memcpy(keys->k, out, w * sizeof *out);
            keys->n = w;
        }
    }
    if (idx && tmp && out)
        rows_free(&r);
    free(idx);
    free(tmp);
    free(out);
    return st;
}

coffer_status cf_query_post(coffer_txn *txn, const cf_bquery *bq, cf_qguard *guard, cf_keylist *keys)
{
    for (size_t i = 0; i < bq->npost; i++) {
        const cf_bpost *post = &bq->post[i];
        if (post->kind == CF_QO_LIMIT) {
            if (post->limit < keys->n)
                keys->n = (size_t)post->limit;
            continue;
        }
        status st = sort_or_distinct(txn, bq, guard, post, keys);
        if (st != COFFER_OK)
            return st;
    }
    return COFFER_OK;
}
