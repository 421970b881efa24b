/* plan — chooses how to find the objects a predicate matches: through the
 * primary-key or a secondary index for ==, IN (and, in plain files, ranges
 * and BEGINSWITH, whose index keys keep the values' order), picking the
 * conjunct whose index gives the fewest candidates; otherwise a scan. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "util/buffer.h"
#include "util/error.h"
#include "storage/index.h"
#include "objects/object.h"
#include "storage/record.h"
#include "query/engine.h"
#include "query/plan.h"
#include "storage/txn.h"

typedef coffer_status status;

static status no_memory(void) { return cf_error(COFFER_ERR_NO_MEMORY, "query: out of memory"); }

coffer_status cf_keylist_push(cf_keylist *keys, uint64_t key)
{
    uint64_t *k = cf_grow(keys->k, keys->n, &keys->cap, sizeof *k, 64);
    if (!k)
        return no_memory();
    keys->k = k;
    keys->k[keys->n++] = key;
    return COFFER_OK;
}

static int key_order(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void sort_unique(cf_keylist *keys)
{
    if (keys->n < 2)
        return;
    qsort(keys->k, keys->n, sizeof *keys->k, key_order);
    size_t w = 1;
    for (size_t i = 1; i < keys->n; i++)
        if (keys->k[i] != keys->k[w - 1])
            keys->k[w++] = keys->k[i];
    keys->n = w;
}

/* ---- index walks --------------------------------------------------------- */

/* What one conjunct asks of an index: entries whose value part equals one
 * of the conjunct's constants (or starts with its string), or lies between
 * two bounds. Prefixes are encoded when walking, so nothing is allocated. */
typedef struct index_walk {
    const cf_bpred *pred;
    const cf_class *cls;
    const cf_prop *prop;
    int range;                 /* else: the constants' prefixes */
    int starts_with;           /* BEGINSWITH: the string is a prefix of the value */
    size_t lolen, hilen;
    int has_lo, has_hi, lo_incl, hi_incl;
    int recheck;               /* hashed keys: the conjunct must be evaluated too */
    /* Last, and never cleared or copied as a whole: they are large. */
    uint8_t lo[CF_INDEX_PREFIX_MAX], hi[CF_INDEX_PREFIX_MAX];
} index_walk;

static int bytes_cmp(const uint8_t *a, size_t an, const uint8_t *b, size_t bn)
{
    size_t n = an < bn ? an : bn;
    int c = memcmp(a, b, n);
    if (c)
        return c;
    return an < bn ? -1 : an > bn;
}

static status index_error(int rc) { return cf_error_mdb(rc, "query: cannot read an index"); }

/* Counts the entry `cur` is on (key `k`, whose last 8 bytes are the object
 * key), and collects it into `keys` when not NULL. */
static status take_object(const MDB_val *k, cf_keylist *keys, size_t *count)
{
    ++*count;
    if (keys && cf_keylist_push(keys, cf_get_be64((const uint8_t *)k->mv_data + k->mv_size - 8)) != COFFER_OK)
        return COFFER_ERR_NO_MEMORY;
    return COFFER_OK;
}

/* The objects whose value is `p` exactly (`exact`) or starts with it,
 * counted until more than `limit`. Entries of one value are adjacent, so
 * the walk stops at the first key without the prefix. */
static status walk_prefix(MDB_cursor *cur, const uint8_t *p, size_t plen, int exact, cf_keylist *keys, size_t limit,
                          size_t *count)
{
    MDB_val k = {plen, (void *)p}, v;
    int rc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE);
    while (rc == 0 && *count <= limit) {
        if (k.mv_size < plen + 8 || memcmp(k.mv_data, p, plen) != 0)
            break;
        if (!exact || k.mv_size == plen + 8) {
            status st = take_object(&k, keys, count);
            if (st != COFFER_OK)
                return st;
        }
        rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT);
    }
    return rc == 0 || rc == MDB_NOTFOUND ? COFFER_OK : index_error(rc);
}

static status walk_range(MDB_cursor *cur, const index_walk *w, const uint8_t *column, cf_keylist *keys, size_t limit,
                         size_t *count)
{
    /* Non-null values of the column start with column || 1. */
    uint8_t nonnull[3] = {column[0], column[1], 1};
    MDB_val k = w->has_lo ? (MDB_val){w->lolen, (void *)w->lo} : (MDB_val){3, nonnull}, v;
    int rc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE);
    while (rc == 0 && *count <= limit) {
        const uint8_t *e = k.mv_data;
        if (k.mv_size < 3 + 8 || memcmp(e, nonnull, 3) != 0)
            break;
        size_t vlen = k.mv_size - 8;
        if (w->has_hi) {
            int c = bytes_cmp(e, vlen, w->hi, w->hilen);
            if (c > 0 || (c == 0 && !w->hi_incl))
                break;
        }
        if (!w->has_lo || w->lo_incl || bytes_cmp(e, vlen, w->lo, w->lolen) != 0) {
            status st = take_object(&k, keys, count);
            if (st != COFFER_OK)
                return st;
        }
        rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT);
    }
    return rc == 0 || rc == MDB_NOTFOUND ? COFFER_OK : index_error(rc);
}

static status walk(coffer_txn *txn, coffer_class_id cls, const index_walk *w, cf_keylist *keys, size_t limit,
                   size_t *count)
{
    MDB_cursor *cur;
    status st = cf_txn_index_cursor(txn, cls, &cur);
    if (st != COFFER_OK)
        return st;
    *count = 0;
    if (w->range) {
        uint8_t column[2];
        cf_put_be16(column, w->prop->column);
        return walk_range(cur, w, column, keys, limit, count);
    }
    uint8_t prefix[CF_INDEX_PREFIX_MAX];
    if (w->starts_with) {
        const coffer_value *needle = &w->pred->right.consts[0];
        cf_put_be16(prefix, w->prop->column);
        prefix[2] = 1;
        if (needle->u.string.size)
            memcpy(prefix + 3, needle->u.string.data, needle->u.string.size);
        return walk_prefix(cur, prefix, 3 + needle->u.string.size, 0, keys, limit, count);
    }
    for (size_t i = 0; i < w->pred->right.nconsts && st == COFFER_OK && *count <= limit; i++) {
        int hashed;
        size_t len = cf_index_prefix(txn->db, w->cls, w->prop, &w->pred->right.consts[i], prefix, &hashed);
        st = walk_prefix(cur, prefix, len, 1, keys, limit, count);
    }
    return st;
}

/* ---- which conjuncts an index can answer --------------------------------- */

static int exact_type(const cf_prop *p, const coffer_value *v)
{
    return v->type == p->type || (v->type == COFFER_TYPE_NULL && cf_prop_optional(p));
}

/* Sets the lower (or, when `upper`, the upper) bound of range walk `w` to
 * constant `v` of its property, inclusive when `incl`. */
static void set_bound(coffer_txn *txn, index_walk *w, int upper, const coffer_value *v, int incl)
{
    int hashed;
    size_t len = cf_index_prefix(txn->db, w->cls, w->prop, v, upper ? w->hi : w->lo, &hashed);
    if (upper) {
        w->has_hi = 1;
        w->hi_incl = incl;
        w->hilen = len;
    } else {
        w->has_lo = 1;
        w->lo_incl = incl;
        w->lolen = len;
    }
}

/* Fills `w` if conjunct `p` can be answered by an index; 0 otherwise. */
static int indexable(coffer_txn *txn, const cf_bquery *bq, const cf_bpred *p, index_walk *w)
{
    memset(w, 0, offsetof(index_walk, lo));
    if (p->kind != CF_BP_COMPARE || p->left.kind != CF_BO_PATH || p->left.var >= 0 || p->left.nsteps != 1 ||
        p->right.kind != CF_BO_CONST || p->left.type_names || p->right.nconsts == 0 ||
        (p->right.quantifier != CF_QQ_NONE_GIVEN && p->right.quantifier != CF_QQ_ANY))
        return 0;
    const cf_bstep *s = &p->left.steps[0];
    const cf_class *c = &txn->db->schema->classes[bq->cls];
    if (s->kind != CF_BS_PROPERTY || s->cls != bq->cls)
        return 0;
    const cf_prop *prop = &c->props[s->prop];
    if (!cf_prop_indexed(prop) || cf_prop_is_collection(prop) || prop->type == COFFER_TYPE_MIXED)
        return 0;
    for (size_t i = 0; i < p->right.nconsts; i++)
        if (!exact_type(prop, &p->right.consts[i]))
            return 0;
    int plain = txn->db->keys == NULL;
    w->pred = p;
    w->cls = c;
    w->prop = prop;
    if (p->op == CF_QC_EQ && !p->modifiers) {
        /* A long string in a plain file is indexed by its first bytes and an
         * unkeyed hash: its matches are checked against the stored value.
         * An encrypted file's keyed 128-bit hash is taken as the value's
         * identity (docs/ENCRYPTION.md), so counting opens no record. */
        for (size_t i = 0; i < p->right.nconsts; i++) {
            const coffer_value *v = &p->right.consts[i];
            if (plain && v->type == COFFER_TYPE_STRING && v->u.string.size > CF_INDEX_STRING_PREFIX)
                w->recheck = 1;
        }
        return 1;
    }
    if (!plain || p->modifiers)
        return 0;
    if (p->op == CF_QC_BEGINSWITH && prop->type == COFFER_TYPE_STRING &&
        p->right.consts[0].u.string.size <= CF_INDEX_STRING_PREFIX) {
        w->starts_with = 1;
        return 1;
    }
    int ordered = prop->type == COFFER_TYPE_INT || prop->type == COFFER_TYPE_DATE || prop->type == COFFER_TYPE_BOOL;
    if (!ordered || p->right.consts[0].type == COFFER_TYPE_NULL)
        return 0;
    w->range = 1;
    switch (p->op) {
    case CF_QC_GT:
    case CF_QC_GE:
        set_bound(txn, w, 0, &p->right.consts[0], p->op == CF_QC_GE);
        return 1;
    case CF_QC_LT:
    case CF_QC_LE:
        set_bound(txn, w, 1, &p->right.consts[0], p->op == CF_QC_LE);
        return 1;
    case CF_QC_BETWEEN:
        set_bound(txn, w, 0, &p->right.consts[0], 1);
        set_bound(txn, w, 1, &p->right.consts[1], 1);
        return 1;
    default: return 0;
    }
}

/* ---- selecting ----------------------------------------------------------- */

static status all_keys(coffer_txn *txn, coffer_class_id cls, cf_keylist *out)
{
    MDB_cursor *cur;
    int rc = mdb_cursor_open(txn->mdb, txn->db->object_dbis[cls], &cur);
    if (rc != 0)
        return cf_error_mdb(rc, "query: cannot read a class");
    MDB_val k, v;
    status st = COFFER_OK;
    for (rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); rc == 0 && st == COFFER_OK;
         rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
        if (k.mv_size != 8) {
            st = cf_error(COFFER_ERR_CORRUPTED, "class '%s' holds a key of %zu bytes",
                          txn->db->schema->classes[cls].name, k.mv_size);
            break;
        }
        st = cf_keylist_push(out, cf_get_be64(k.mv_data));
    }
    mdb_cursor_close(cur);
    if (st == COFFER_OK && rc != 0 && rc != MDB_NOTFOUND)
        st = cf_error_mdb(rc, "query: cannot read a class");
    return st;
}

/* A scan for conjunctions of simple comparisons: records are read with a
 * cursor and their columns compared in place, without object handles. */
static status scan_simple(coffer_txn *txn, cf_qrun *run, const cf_bquery *bq, const cf_bpred *const *conj, size_t n,
                          cf_keylist *out)
{
    const cf_class *c = &txn->db->schema->classes[bq->cls];
    MDB_cursor *cur;
    int rc = mdb_cursor_open(txn->mdb, txn->db->object_dbis[bq->cls], &cur);
    if (rc != 0)
        return cf_error_mdb(rc, "query: cannot read a class");
    uint8_t *buf = NULL;
    size_t cap = 0;
    status st = COFFER_OK;
    MDB_val k, v;
    for (rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); rc == 0 && st == COFFER_OK;
         rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
        const uint8_t *data;
        size_t len;
        cf_record rec;
        if (k.mv_size != 8) {
            st = cf_error(COFFER_ERR_CORRUPTED, "class '%s' holds a key of %zu bytes", c->name, k.mv_size);
            break;
        }
        st = cf_store_open(txn, 2 * c->table, &k, &v, &data, &len, &buf, &cap, "the record");
        if (st == COFFER_OK)
            st = cf_record_parse(data, len, &rec);
        if (st != COFFER_OK) {
            cf_error_prefix("object %llu of class '%s'", (unsigned long long)cf_get_be64(k.mv_data), c->name);
            break;
        }
        if ((st = cf_qrun_check(run)) != COFFER_OK)
            break;
        int m = 1;
        for (size_t i = 0; i < n && m == 1; i++) {
            const cf_prop *p = &c->props[conj[i]->left.steps[0].prop];
            coffer_value val;
            if ((st = cf_record_get(&rec, p->column, p->type, &val)) != COFFER_OK)
                break;
            if (val.type == COFFER_TYPE_NULL && !cf_prop_optional(p)) {
                /* A required column added by a schema change: its default. */
                val = cf_value_default(p->type);
            }
            m = cf_qrun_compare_value(run, conj[i], &val);
        }
        if (st != COFFER_OK)
            break;
        if (m < 0) {
            st = coffer_last_status();
            break;
        }
        if (m)
            st = cf_keylist_push(out, cf_get_be64(k.mv_data));
    }
    mdb_cursor_close(cur);
    free(buf);
    if (st == COFFER_OK && rc != 0 && rc != MDB_NOTFOUND)
        st = cf_error_mdb(rc, "query: cannot read a class");
    return st;
}

static status scan(coffer_txn *txn, cf_qrun *run, const cf_bquery *bq, cf_keylist *out)
{
    coffer_iter *it;
    status st = coffer_class_iterate(txn, bq->cls, &it);
    if (st != COFFER_OK)
        return st;
    coffer_object *obj;
    while ((st = coffer_iter_next(it, &obj)) == COFFER_OK) {
        if ((st = cf_qrun_check(run)) != COFFER_OK)
            break;
        int m = cf_qrun_matches(run, obj);
        if (m < 0) {
            st = coffer_last_status();
            break;
        }
        if (m && (st = cf_keylist_push(out, obj->key)) != COFFER_OK)
            break;
    }
    coffer_iter_free(it);
    return st == COFFER_DONE ? COFFER_OK : st;
}

/* Keeps the keys of `in` whose object matches every conjunct but `skip`.
 * Keys an index of this snapshot gave (`from_index`) must have objects; a
 * caller's keys may be of objects deleted since. */
static status filter_keys(coffer_txn *txn, cf_qrun *run, const cf_bquery *bq, const cf_bpred *const *conj, size_t n,
                          size_t skip, const uint64_t *in, size_t nin, int from_index, cf_keylist *out)
{
    for (size_t i = 0; i < nin; i++) {
        coffer_object *obj;
        status st = cf_qrun_check(run);
        if (st != COFFER_OK)
            return st;
        st = coffer_object_get(txn, bq->cls, in[i], &obj);
        if (st == COFFER_ERR_NOT_FOUND && from_index)
            return cf_error(COFFER_ERR_CORRUPTED, "an index entry of class '%s' names object %llu, which does not exist: "
                            "the file is damaged", txn->db->schema->classes[bq->cls].name, (unsigned long long)in[i]);
        if (st == COFFER_ERR_NOT_FOUND) {
            coffer_clear_error(); /* deleted since: not a match */
            continue;
        }
        if (st != COFFER_OK)
            return st;
        int m = 1;
        for (size_t c = 0; c < n && m == 1; c++)
            if (c != skip)
                m = cf_qrun_eval(run, conj[c], obj);
        coffer_object_release(obj);
        if (m < 0)
            return coffer_last_status();
        if (m && (st = cf_keylist_push(out, in[i])) != COFFER_OK)
            return st;
    }
    return COFFER_OK;
}

/* Fills `w` when the index alone answers `bq` and each of its entries is a
 * distinct match: one conjunct, no re-check, one value or one range (IN
 * lists may repeat a value). */
static int index_countable(coffer_txn *txn, const cf_bquery *bq, index_walk *w)
{
    if (bq->where->kind == CF_BP_TRUE || bq->where->kind == CF_BP_AND || !indexable(txn, bq, bq->where, w))
        return 0;
    return !w->recheck && (w->range || w->starts_with || w->pred->right.nconsts == 1);
}

int cf_query_index_countable(coffer_txn *txn, const cf_bquery *bq)
{
    index_walk w;
    return index_countable(txn, bq, &w);
}

coffer_status cf_query_index_count(coffer_txn *txn, const cf_bquery *bq, size_t *count)
{
    index_walk w;
    *count = 0;
    if (!index_countable(txn, bq, &w))
        return cf_error(COFFER_ERR_INTERNAL, "query: counted through an index that does not answer it");
    return walk(txn, bq->cls, &w, NULL, SIZE_MAX, count);
}

coffer_status cf_query_select(coffer_txn *txn, const cf_bquery *bq, cf_qguard *guard, const uint64_t *within,
                              size_t nwithin, cf_keylist *out)
{
    const cf_bpred *where = bq->where;
    const cf_bpred *const *conj = where->kind == CF_BP_AND ? where->items : &bq->where;
    size_t n = where->kind == CF_BP_AND ? where->count : 1;
    if (!within && where->kind == CF_BP_TRUE)
        return all_keys(txn, bq->cls, out);
    cf_qrun *run = NULL;
    status st;
    if (within) {
        st = cf_qrun_new(txn, bq, guard, &run);
        if (st == COFFER_OK)
            st = filter_keys(txn, run, bq, conj, n, SIZE_MAX, within, nwithin, 0, out);
        cf_qrun_free(run);
        return st;
    }
    /* The conjunct whose index yields the fewest candidates (counting them
     * is only needed when there is a choice). */
    size_t best = SIZE_MAX, best_count = SIZE_MAX, nindexable = 0;
    index_walk walks[2], *best_walk = NULL, *w = &walks[0];
    st = COFFER_OK;
    for (size_t i = 0; i < n; i++)
        if (indexable(txn, bq, conj[i], w) && nindexable++ == 0) {
            best_walk = w;
            best = i;
            w = &walks[1];
        }
    for (size_t i = 0; i < n && st == COFFER_OK && nindexable > 1; i++) {
        if (!indexable(txn, bq, conj[i], w))
            continue;
        size_t count = 0;
        st = walk(txn, bq->cls, w, NULL, best_count, &count);
        if (st == COFFER_OK && count < best_count) {
            index_walk *was = best_walk;
            best_walk = w;
            w = was;
            best = i;
            best_count = count;
        }
    }
    if (st != COFFER_OK)
        return st;
    if (best == SIZE_MAX) {
        int all_simple = 1;
        for (size_t i = 0; i < n; i++)
            all_simple &= conj[i]->simple;
        st = cf_qrun_new(txn, bq, guard, &run);
        if (st == COFFER_OK)
            st = all_simple ? scan_simple(txn, run, bq, conj, n, out) : scan(txn, run, bq, out);
        cf_qrun_free(run);
        return st;
    }
    cf_keylist cand = {0};
    size_t count;
    st = walk(txn, bq->cls, best_walk, &cand, SIZE_MAX, &count);
    /* One exact prefix yields keys in key order already. */
    if (best_walk->range || best_walk->starts_with || best_walk->pred->right.nconsts > 1)
        sort_unique(&cand);
    size_t skip = best_walk->recheck ? SIZE_MAX : best;
    if (st == COFFER_OK && n == 1 && skip == best) {
        free(out->k);
        *out = cand; /* the index answers it all */
        return COFFER_OK;
    }
    if (st == COFFER_OK)
        st = cf_qrun_new(txn, bq, guard, &run);
    if (st == COFFER_OK)
        st = filter_keys(txn, run, bq, conj, n, skip, cand.k, cand.n, 1, out);
    cf_qrun_free(run);
    free(cand.k);
    return st;
}
