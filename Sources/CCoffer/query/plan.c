/* plan — chooses how to find the objects a predicate matches: through the
 * primary-key or a secondary index for ==, IN (and, where the index keeps
 * the values' order — plain files, and encrypted files of format 6 with
 * their sealed index trees — ranges and BEGINSWITH), picking the
 * conjunct whose index gives the fewest candidates; otherwise a scan. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/buffer.h"
#include "util/error.h"
#include "storage/index.h"
#include "storage/object_store.h"
#include "objects/object.h"
#include "query/columnar.h"
#include "query/engine.h"
#include "query/plan.h"

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

/* Where a walk puts what it finds: counted until more than `limit`, and
 * collected into `keys` when not NULL. */
typedef struct walk_sink {
    cf_keylist *keys;
    size_t limit;
    size_t count;
} walk_sink;

static status take_object(void *ctx, coffer_object_key key)
{
    walk_sink *sink = ctx;
    ++sink->count;
    if (sink->keys && cf_keylist_push(sink->keys, key) != COFFER_OK)
        return COFFER_ERR_NO_MEMORY;
    return sink->count > sink->limit ? COFFER_DONE : COFFER_OK;
}

static status walk(coffer_txn *txn, coffer_class_id cls, const index_walk *w, cf_keylist *keys, size_t limit,
                   size_t *count)
{
    walk_sink sink = {keys, limit, 0};
    status st = COFFER_OK;
    if (w->range) {
        cf_index_range r = {.column = w->prop->column, .lo = w->has_lo ? w->lo : NULL, .hi = w->has_hi ? w->hi : NULL,
                            .lolen = w->lolen, .hilen = w->hilen, .lo_incl = w->lo_incl, .hi_incl = w->hi_incl};
        st = cf_index_walk_range(txn, cls, &r, take_object, &sink);
    } else if (w->starts_with) {
        uint8_t prefix[CF_INDEX_PREFIX_MAX];
        const coffer_value *needle = &w->pred->right.consts[0];
        cf_put_be16(prefix, w->prop->column);
        prefix[2] = 1;
        if (needle->u.string.size)
            memcpy(prefix + 3, needle->u.string.data, needle->u.string.size);
        st = cf_index_walk_prefix(txn, cls, prefix, 3 + needle->u.string.size, 0, take_object, &sink);
    } else {
        uint8_t prefix[CF_INDEX_PREFIX_MAX];
        for (size_t i = 0; i < w->pred->right.nconsts && st == COFFER_OK && sink.count <= limit; i++) {
            int hashed;
            size_t len = cf_index_prefix(txn->db, w->cls, w->prop, &w->pred->right.consts[i], prefix, &hashed);
            st = cf_index_walk_prefix(txn, cls, prefix, len, 1, take_object, &sink);
        }
    }
    *count = sink.count;
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
    /* Plain files and sealed index trees hold values in order; the keyed
     * hashes of older encrypted files do not. */
    int plain = txn->db->keys == NULL || txn->db->sealed_index;
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
    cf_object_cursor cur;
    status st = cf_object_cursor_open(txn, cls, &cur);
    coffer_object_key key;
    for (st = st == COFFER_OK ? cf_object_cursor_next(&cur, &key, NULL) : st; st == COFFER_OK;
         st = cf_object_cursor_next(&cur, &key, NULL))
        if ((st = cf_keylist_push(out, key)) != COFFER_OK)
            break;
    cf_object_cursor_close(&cur);
    return st == COFFER_DONE ? COFFER_OK : st;
}

/* What a simple scan compares each object's scanned columns with. */
typedef struct simple_scan {
    cf_qrun *run;
    const cf_class *c;
    const cf_bpred *const *conj;
    size_t n;
    cf_keylist *out;
    cf_columnar *columnar; /* for the objects the store hands over in batches */
} simple_scan;

static status scan_batch(void *ctx, const cf_object_batch *batch)
{
    simple_scan *s = ctx;
    return cf_columnar_select(s->columnar, batch, s->out);
}

static status scan_one(void *ctx, coffer_object_key key, const coffer_value *values)
{
    simple_scan *s = ctx;
    status st = cf_qrun_check(s->run);
    if (st != COFFER_OK)
        return st;
    int m = 1;
    for (size_t i = 0; i < s->n && m == 1; i++) {
        coffer_value val = values[i];
        const cf_prop *p = &s->c->props[s->conj[i]->left.steps[0].prop];
        if (val.type == COFFER_TYPE_NULL && !cf_prop_optional(p))
            val = cf_value_default(p->type); /* a required column added by a schema change */
        m = cf_qrun_compare_value(s->run, s->conj[i], &val);
    }
    if (m < 0)
        return coffer_last_status();
    return m ? cf_keylist_push(s->out, key) : COFFER_OK;
}

/* A scan for conjunctions of simple comparisons: the store hands over the
 * compared columns of each object, compared in place, without object
 * handles, or of a batch of objects kept column by column, compared column
 * by column (columnar.h). */
static status scan_simple(coffer_txn *txn, cf_qrun *run, const cf_bquery *bq, const cf_bpred *const *conj, size_t n,
                          cf_keylist *out)
{
    const cf_class *c = &txn->db->schema->classes[bq->cls];
    uint16_t columns_stack[16];
    coffer_type types_stack[16];
    uint16_t *columns = n <= 16 ? columns_stack : malloc(n * sizeof *columns);
    coffer_type *types = n <= 16 ? types_stack : malloc(n * sizeof *types);
    status st = columns && types ? COFFER_OK : no_memory();
    for (size_t i = 0; st == COFFER_OK && i < n; i++) {
        const cf_prop *p = &c->props[conj[i]->left.steps[0].prop];
        columns[i] = p->column;
        types[i] = p->type;
    }
    simple_scan s = {run, c, conj, n, out, NULL};
    if (st == COFFER_OK)
        st = cf_columnar_new(txn, run, bq->cls, conj, n, &s.columnar);
    if (st == COFFER_OK)
        st = cf_objects_scan_batches(txn, bq->cls, columns, types, n, scan_one, scan_batch, &s);
    cf_columnar_free(s.columnar);
    if (columns != columns_stack)
        free(columns);
    if (types != types_stack)
        free(types);
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

/* The conjunct of conj[0 .. n) that cf_query_select() walks: the only
 * indexable one, or the one whose index yields the fewest candidates
 * (counting them only when there is a choice). Its walk is in one of
 * walks[0..1], *best_walk (NULL when none is indexable), its position in
 * *best (SIZE_MAX when none). */
static status choose_walk(coffer_txn *txn, const cf_bquery *bq, const cf_bpred *const *conj, size_t n,
                          index_walk walks[2], index_walk **best_walk, size_t *best)
{
    size_t best_count = SIZE_MAX, nindexable = 0;
    index_walk *w = &walks[0];
    *best_walk = NULL;
    *best = SIZE_MAX;
    status st = COFFER_OK;
    for (size_t i = 0; i < n; i++)
        if (indexable(txn, bq, conj[i], w) && nindexable++ == 0) {
            *best_walk = w;
            *best = i;
            w = &walks[1];
        }
    for (size_t i = 0; i < n && st == COFFER_OK && nindexable > 1; i++) {
        if (!indexable(txn, bq, conj[i], w))
            continue;
        size_t count = 0;
        st = walk(txn, bq->cls, w, NULL, best_count, &count);
        if (st == COFFER_OK && count < best_count) {
            index_walk *was = *best_walk;
            *best_walk = w;
            w = was;
            *best = i;
            best_count = count;
        }
    }
    return st;
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
    size_t best;
    index_walk walks[2], *best_walk;
    st = choose_walk(txn, bq, conj, n, walks, &best_walk, &best);
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

coffer_status cf_query_explain(coffer_txn *txn, const cf_bquery *bq, char *buf, size_t size)
{
    const cf_bpred *where = bq->where;
    const cf_bpred *const *conj = where->kind == CF_BP_AND ? where->items : &bq->where;
    size_t n = where->kind == CF_BP_AND ? where->count : 1;
    /* The conjunct cf_query_select() walks. */
    index_walk walks[2], *best_walk = NULL;
    size_t best;
    status st = where->kind == CF_BP_TRUE ? COFFER_OK : choose_walk(txn, bq, conj, n, walks, &best_walk, &best);
    if (st != COFFER_OK)
        return st;
    const cf_class *c = &txn->db->schema->classes[bq->cls];
    int len;
    if (where->kind == CF_BP_TRUE)
        len = snprintf(buf, size, "all objects of '%s'", c->name);
    else if (!best_walk)
        len = snprintf(buf, size, "scan of '%s'", c->name);
    else
        len = snprintf(buf, size, "index of '%s.%s' (%s)%s", c->name, best_walk->prop->name,
                       best_walk->range ? "range" : best_walk->starts_with ? "prefix" : "equality",
                       n > 1 || best_walk->recheck ? ", then a filter" : "");
    if (len < 0 || (size_t)len >= size) {
        buf[0] = 0;
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "coffer_query_explain: the buffer of %zu bytes is too small for the plan", size);
    }
    return COFFER_OK;
}
