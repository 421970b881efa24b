/* eval — evaluates a bound predicate on one object: key paths to lists of
 * values, quantifiers, operators, SUBQUERY counts (nested ones memoized for
 * the run) and aggregates. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/decimal128.h"
#include "util/buffer.h"
#include "util/error.h"
#include "query/engine.h"
#include "query/memo.h"
#include "query/text.h"

typedef coffer_status status;

/* Internal value types for a nested list or map of a mixed value that a
 * following step opens; the handle travels in u.object. Never compared. */
#define CF_QTYPE_LIST_HANDLE ((coffer_type)64)
#define CF_QTYPE_MAP_HANDLE ((coffer_type)65)

typedef struct opened {
    int kind; /* 0 object, 1 list, 2 set, 3 map, 4 bytes, 5 iterator */
    void *p;
} opened;

struct cf_qrun {
    coffer_txn *txn;
    const cf_bquery *bq;
    cf_text_pattern **patterns;
    opened *open;
    size_t nopen, capopen;
    cf_qvals **pool; /* value lists, reused; a stack */
    size_t npool, usedpool;
    coffer_value *vars;
    coffer_object *root;
    cf_qguard *guard;
    cf_qmemo *memo; /* made when a nested SUBQUERY is first counted */
    cf_buf key;     /* the memo key being built */
    coffer_value **refs; /* per slot: constants with obj() found, made on first use */
};

static status no_memory(void) { return cf_error(COFFER_ERR_NO_MEMORY, "query: out of memory"); }

static status track(cf_qrun *run, int kind, void *p)
{
    opened *o = cf_grow(run->open, run->nopen, &run->capopen, sizeof *o, 16);
    if (!o)
        return no_memory();
    run->open = o;
    run->open[run->nopen].kind = kind;
    run->open[run->nopen].p = p;
    run->nopen++;
    return COFFER_OK;
}

void cf_qrun_release(cf_qrun *run)
{
    for (size_t i = run->nopen; i-- > 0;) {
        void *p = run->open[i].p;
        switch (run->open[i].kind) {
        case 0: coffer_object_release(p); break;
        case 1: coffer_list_release(p); break;
        case 2: coffer_set_release(p); break;
        case 3: coffer_map_release(p); break;
        case 4: free(p); break;
        default: coffer_iter_free(p); break;
        }
    }
    run->nopen = 0;
}

/* Strings read from collections are borrowed only until the next read on
 * the handle: keep a copy for the rest of the evaluation. */
static status keep_bytes(cf_qrun *run, coffer_value *v)
{
    if (v->type != COFFER_TYPE_STRING && v->type != COFFER_TYPE_BINARY)
        return COFFER_OK;
    char *p = malloc(v->u.string.size + 1);
    if (!p)
        return no_memory();
    if (v->u.string.size)
        memcpy(p, v->u.string.data, v->u.string.size);
    p[v->u.string.size] = 0;
    v->u.string.data = p;
    return track(run, 4, p);
}

coffer_status cf_qrun_new(coffer_txn *txn, const cf_bquery *bq, cf_qguard *guard, cf_qrun **out)
{
    /* One block: the run, its variables, pattern and obj() slots. */
    size_t npat = (size_t)bq->npatterns, nvar = (size_t)bq->max_var + 1, nrefs = (size_t)bq->nrefs;
    cf_qrun *run = calloc(1, sizeof *run + nvar * sizeof *run->vars + npat * sizeof *run->patterns +
                                 nrefs * sizeof *run->refs);
    if (!run)
        return no_memory();
    run->txn = txn;
    run->bq = bq;
    run->guard = guard;
    run->vars = (coffer_value *)(run + 1);
    run->patterns = (cf_text_pattern **)(run->vars + nvar);
    run->refs = (coffer_value **)(run->patterns + npat);
    *out = run;
    return COFFER_OK;
}

void cf_qrun_free(cf_qrun *run)
{
    if (!run)
        return;
    cf_qrun_release(run);
    for (int i = 0; i < run->bq->npatterns; i++)
        cf_text_pattern_free(run->patterns[i]);
    for (int i = 0; i < run->bq->nrefs; i++)
        free(run->refs[i]);
    for (size_t i = 0; i < run->npool; i++) {
        free(run->pool[i]->v);
        free(run->pool[i]);
    }
    free(run->pool);
    free(run->open);
    cf_qmemo_free(run->memo);
    free(run->key.p);
    free(run);
}

coffer_status cf_qrun_check(cf_qrun *run) { return cf_qguard_check(run->guard); }

/* A value list from the pool (lists never move); give it back with
 * put_vals in LIFO order. */
static cf_qvals *get_vals(cf_qrun *run)
{
    if (run->usedpool == run->npool) {
        cf_qvals **p = realloc(run->pool, (run->npool + 1) * sizeof *p);
        if (!p)
            return NULL;
        run->pool = p;
        if (!(p[run->npool] = calloc(1, sizeof **p)))
            return NULL;
        run->npool++;
    }
    cf_qvals *v = run->pool[run->usedpool++];
    v->n = 0;
    return v;
}

static void put_vals(cf_qrun *run) { run->usedpool--; }

static status push(cf_qvals *out, const coffer_value *v) { return cf_qvals_push(out, v) ? no_memory() : COFFER_OK; }

/* ---- objects and collections --------------------------------------------- */

static status object_for(cf_qrun *run, const coffer_value *link, coffer_object **obj)
{
    coffer_object *root = run->root;
    if (root && link->u.link.class_id == root->cls && link->u.link.key == root->key) {
        *obj = root;
        return COFFER_OK;
    }
    status st = coffer_object_get(run->txn, link->u.link.class_id, link->u.link.key, obj);
    if (st == COFFER_ERR_NOT_FOUND) /* deleting an object removes every link to it */
        return cf_error(COFFER_ERR_CORRUPTED, "a stored link names object %llu of class '%s', which does not exist: the "
                        "file is damaged", (unsigned long long)link->u.link.key,
                        run->txn->db->schema->classes[link->u.link.class_id].name);
    if (st != COFFER_OK)
        return st;
    return track(run, 0, *obj);
}

static status open_list(cf_qrun *run, coffer_object *obj, coffer_property_id prop, coffer_list **out)
{
    status st = coffer_object_get_list(obj, prop, out);
    return st == COFFER_OK ? track(run, 1, *out) : st;
}

static status open_map(cf_qrun *run, coffer_object *obj, coffer_property_id prop, coffer_map **out)
{
    status st = coffer_object_get_map(obj, prop, out);
    return st == COFFER_OK ? track(run, 3, *out) : st;
}

/* Appends the elements of open collection `coll` of `kind` (1 list, 2 set,
 * 3 map, as in track(); of a map its values, or its keys when `keys`), each
 * kept for the run. */
static status elements(cf_qrun *run, int kind, void *coll, int keys, cf_qvals *out)
{
    uint64_t n;
    status st = kind == 1 ? coffer_list_count(coll, &n) : kind == 2 ? coffer_set_count(coll, &n) : coffer_map_count(coll, &n);
    for (uint64_t i = 0; st == COFFER_OK && i < n; i++) {
        coffer_value v;
        coffer_bytes key;
        if (kind == 1)
            st = coffer_list_get(coll, i, &v);
        else if (kind == 2)
            st = coffer_set_get(coll, i, &v);
        else if ((st = coffer_map_get_entry(coll, i, &key, &v)) == COFFER_OK && keys)
            v = coffer_value_string(key.data, key.size);
        if (st == COFFER_OK)
            st = keep_bytes(run, &v);
        if (st == COFFER_OK)
            st = push(out, &v);
    }
    return st;
}

static status collection_elements(cf_qrun *run, coffer_object *obj, coffer_property_id prop, int keys, cf_qvals *out)
{
    const cf_prop *p = &run->txn->db->schema->classes[obj->cls].props[prop];
    status st;
    if (p->collection == COFFER_COLLECTION_LIST) {
        coffer_list *l;
        st = open_list(run, obj, prop, &l);
        return st == COFFER_OK ? elements(run, 1, l, 0, out) : st;
    }
    if (p->collection == COFFER_COLLECTION_SET) {
        coffer_set *s;
        st = coffer_object_get_set(obj, prop, &s);
        if (st == COFFER_OK)
            st = track(run, 2, s);
        return st == COFFER_OK ? elements(run, 2, s, 0, out) : st;
    }
    coffer_map *m;
    st = open_map(run, obj, prop, &m);
    return st == COFFER_OK ? elements(run, 3, m, keys, out) : st;
}

static int resolve_index(uint64_t index, uint64_t n, uint64_t *at)
{
    if (n == 0)
        return 0;
    *at = index == CF_AT_FIRST ? 0 : index == CF_AT_LAST ? n - 1 : index;
    return *at < n;
}

/* A nested collection in a mixed value is opened when a step needs it. */
static status keep_nested(cf_qrun *run, coffer_value *v, int open_next, coffer_list *pl, coffer_map *pm,
                          uint64_t index, const char *key, size_t key_size)
{
    if (!open_next || (v->type != COFFER_TYPE_LIST && v->type != COFFER_TYPE_MAP))
        return keep_bytes(run, v);
    status st;
    if (v->type == COFFER_TYPE_LIST) {
        coffer_list *l;
        st = pl ? coffer_list_get_list(pl, index, &l) : coffer_map_get_list(pm, key, key_size, &l);
        if (st == COFFER_OK && (st = track(run, 1, l)) == COFFER_OK) {
            v->type = CF_QTYPE_LIST_HANDLE;
            v->u.object = (const coffer_object *)(void *)l;
        }
    } else {
        coffer_map *m;
        st = pl ? coffer_list_get_map(pl, index, &m) : coffer_map_get_map(pm, key, key_size, &m);
        if (st == COFFER_OK && (st = track(run, 3, m)) == COFFER_OK) {
            v->type = CF_QTYPE_MAP_HANDLE;
            v->u.object = (const coffer_object *)(void *)m;
        }
    }
    return st;
}

/* Appends the element of list `l` (of `n`) at step index `index`, if it has one. */
static status list_value(cf_qrun *run, coffer_list *l, uint64_t n, uint64_t index, int open_next, cf_qvals *out)
{
    uint64_t at;
    if (!resolve_index(index, n, &at))
        return COFFER_OK;
    coffer_value v;
    status st = coffer_list_get(l, at, &v);
    if (st == COFFER_OK)
        st = keep_nested(run, &v, open_next, l, NULL, at, NULL, 0);
    return st == COFFER_OK ? push(out, &v) : st;
}

/* Appends the value under step `s`'s key in map `m`: null when there is none. */
static status map_value(cf_qrun *run, coffer_map *m, const cf_bstep *s, int open_next, cf_qvals *out)
{
    coffer_value v;
    status st = coffer_map_get(m, s->key, s->key_size, &v);
    if (st == COFFER_ERR_NOT_FOUND) {
        coffer_clear_error();
        v = coffer_value_null();
    } else if (st != COFFER_OK || (st = keep_nested(run, &v, open_next, NULL, m, 0, s->key, s->key_size)) != COFFER_OK) {
        return st;
    }
    return push(out, &v);
}

static int step_opens_nested(const cf_bstep *next)
{
    return next && (next->kind == CF_BS_MIXED_AT || next->kind == CF_BS_MIXED_KEY || next->kind == CF_BS_MIXED_SIZE ||
                    next->kind == CF_BS_MIXED_ELEMENTS);
}

/* The mixed property itself: a nested collection opens from the object. */
static status mixed_property(cf_qrun *run, coffer_object *obj, coffer_property_id prop, coffer_value *v)
{
    status st;
    if (v->type == COFFER_TYPE_LIST) {
        coffer_list *l;
        st = open_list(run, obj, prop, &l);
        v->type = CF_QTYPE_LIST_HANDLE;
        v->u.object = (const coffer_object *)(void *)l;
    } else if (v->type == COFFER_TYPE_MAP) {
        coffer_map *m;
        st = open_map(run, obj, prop, &m);
        v->type = CF_QTYPE_MAP_HANDLE;
        v->u.object = (const coffer_object *)(void *)m;
    } else {
        st = COFFER_OK;
    }
    return st;
}

/* ---- steps --------------------------------------------------------------- */

static status backlinks(coffer_object *obj, const cf_bstep *s, cf_qvals *out)
{
    coffer_iter *it;
    status st = coffer_object_backlinks_from(obj, s->origin_cls, s->origin_prop, &it);
    if (st != COFFER_OK)
        return st;
    coffer_object *o;
    while ((st = coffer_iter_next(it, &o)) == COFFER_OK) {
        coffer_value v = coffer_value_link(s->origin_cls, coffer_object_key_of(o));
        if ((st = push(out, &v)) != COFFER_OK)
            break;
    }
    coffer_iter_free(it);
    return st == COFFER_DONE ? COFFER_OK : st;
}

/* Applies a per-value step to `in`, appending to `out`. */
static status step_value(cf_qrun *run, const cf_bstep *s, const cf_bstep *next, const coffer_value *in, cf_qvals *out)
{
    coffer_value v;
    status st;
    if (s->kind == CF_BS_LENGTH) {
        if (in->type == COFFER_TYPE_STRING)
            v = coffer_value_int((int64_t)cf_text_length(in->u.string.data, in->u.string.size));
        else if (in->type == COFFER_TYPE_BINARY)
            v = coffer_value_int((int64_t)in->u.binary.size);
        else
            return COFFER_OK;
        return push(out, &v);
    }
    if (s->kind == CF_BS_TYPE)
        return push(out, in);
    if (s->kind >= CF_BS_MIXED_AT && s->kind <= CF_BS_MIXED_ELEMENTS) {
        int open_next = step_opens_nested(next);
        if (in->type == CF_QTYPE_LIST_HANDLE) {
            coffer_list *l = (coffer_list *)(void *)in->u.object;
            uint64_t n;
            if ((st = coffer_list_count(l, &n)) != COFFER_OK)
                return st;
            if (s->kind == CF_BS_MIXED_SIZE) {
                v = coffer_value_int((int64_t)n);
                return push(out, &v);
            }
            if (s->kind == CF_BS_MIXED_ELEMENTS)
                return elements(run, 1, l, 0, out);
            return s->kind == CF_BS_MIXED_AT ? list_value(run, l, n, s->index, open_next, out) : COFFER_OK;
        }
        if (in->type == CF_QTYPE_MAP_HANDLE) {
            coffer_map *m = (coffer_map *)(void *)in->u.object;
            if (s->kind == CF_BS_MIXED_SIZE) {
                uint64_t n;
                if ((st = coffer_map_count(m, &n)) != COFFER_OK)
                    return st;
                v = coffer_value_int((int64_t)n);
                return push(out, &v);
            }
            if (s->kind == CF_BS_MIXED_ELEMENTS)
                return elements(run, 3, m, 0, out);
            return s->kind == CF_BS_MIXED_KEY ? map_value(run, m, s, open_next, out) : COFFER_OK;
        }
        return COFFER_OK; /* not a nested collection: no value */
    }
    /* The remaining steps read a property of an object. */
    if (in->type != COFFER_TYPE_LINK) {
        if (in->type == COFFER_TYPE_NULL && (s->kind == CF_BS_PROPERTY || s->kind == CF_BS_KEY))
            return push(out, in); /* through a null link: null */
        if (in->type == COFFER_TYPE_NULL && s->kind == CF_BS_SIZE) {
            v = coffer_value_int(0);
            return push(out, &v);
        }
        return COFFER_OK;
    }
    coffer_object *obj;
    if ((st = object_for(run, in, &obj)) != COFFER_OK)
        return st;
    switch (s->kind) {
    case CF_BS_PROPERTY:
        if ((st = coffer_object_get_value(obj, s->prop, &v)) != COFFER_OK)
            return st;
        if (step_opens_nested(next) && (st = mixed_property(run, obj, s->prop, &v)) != COFFER_OK)
            return st;
        return push(out, &v);
    case CF_BS_ELEMENTS: return collection_elements(run, obj, s->prop, 0, out);
    case CF_BS_KEYS: return collection_elements(run, obj, s->prop, 1, out);
    case CF_BS_SIZE:
        if ((st = coffer_object_get_value(obj, s->prop, &v)) != COFFER_OK)
            return st;
        v = coffer_value_int(v.type == COFFER_TYPE_MAP ? (int64_t)v.u.map.count
                             : v.type == COFFER_TYPE_NULL ? 0 : (int64_t)v.u.list.count);
        return push(out, &v);
    case CF_BS_AT: {
        coffer_list *l;
        uint64_t n;
        if ((st = open_list(run, obj, s->prop, &l)) != COFFER_OK || (st = coffer_list_count(l, &n)) != COFFER_OK)
            return st;
        return list_value(run, l, n, s->index, step_opens_nested(next), out);
    }
    case CF_BS_KEY: {
        coffer_map *m;
        if ((st = open_map(run, obj, s->prop, &m)) != COFFER_OK)
            return st;
        return map_value(run, m, s, step_opens_nested(next), out);
    }
    case CF_BS_LINKING: return backlinks(obj, s, out);
    case CF_BS_BACKLINK_COUNT: {
        uint64_t n;
        if ((st = coffer_object_backlink_count_all(obj, &n)) != COFFER_OK)
            return st;
        v = coffer_value_int((int64_t)n);
        return push(out, &v);
    }
    default: return cf_error(COFFER_ERR_INTERNAL, "query: unexpected step %d", (int)s->kind);
    }
}

/* ---- aggregates ---------------------------------------------------------- */

static int numeric(const coffer_value *v)
{
    return v->type == COFFER_TYPE_INT || v->type == COFFER_TYPE_FLOAT || v->type == COFFER_TYPE_DOUBLE ||
           v->type == COFFER_TYPE_DECIMAL128;
}

static double number_of(const coffer_value *v)
{
    switch (v->type) {
    case COFFER_TYPE_INT: return (double)v->u.integer;
    case COFFER_TYPE_FLOAT: return v->u.float_value;
    case COFFER_TYPE_DOUBLE: return v->u.double_value;
    default: return cf_decimal128_to_double(&v->u.decimal128);
    }
}

coffer_status cf_qfold(cf_qpath_elem_kind agg, coffer_type type, const coffer_value *vals, size_t n, coffer_value *out)
{
    if (agg == CF_QK_MIN || agg == CF_QK_MAX) {
        *out = coffer_value_null();
        for (size_t i = 0; i < n; i++) {
            const coffer_value *v = &vals[i];
            if (!numeric(v) && v->type != COFFER_TYPE_DATE)
                continue;
            int c;
            if (out->type == COFFER_TYPE_NULL)
                *out = *v;
            else if (cf_qvalue_compare(v, out, &c) == 0 && (agg == CF_QK_MIN ? c < 0 : c > 0))
                *out = *v;
        }
        return COFFER_OK;
    }
    /* Sums of ints stay ints unless they overflow; others add as doubles. */
    int64_t isum = 0;
    int all_int = 1, any_decimal = type == COFFER_TYPE_DECIMAL128;
    double dsum = 0;
    size_t count = 0;
    for (size_t i = 0; i < n; i++) {
        const coffer_value *v = &vals[i];
        if (!numeric(v))
            continue;
        count++;
        dsum += number_of(v);
        if (v->type == COFFER_TYPE_DECIMAL128)
            any_decimal = 1;
        if (v->type != COFFER_TYPE_INT || __builtin_add_overflow(isum, v->u.integer, &isum))
            all_int = 0;
    }
    if (agg == CF_QK_AVG) {
        if (!count) {
            *out = coffer_value_null();
            return COFFER_OK;
        }
        double avg = all_int ? (double)isum / (double)count : dsum / (double)count;
        if (any_decimal) {
            out->type = COFFER_TYPE_DECIMAL128;
            return cf_decimal128_from_double(avg, &out->u.decimal128);
        }
        *out = coffer_value_double(avg);
        return COFFER_OK;
    }
    if (any_decimal) {
        out->type = COFFER_TYPE_DECIMAL128;
        return cf_decimal128_from_double(dsum, &out->u.decimal128);
    }
    if (all_int && (type == COFFER_TYPE_INT || type == COFFER_TYPE_MIXED))
        *out = coffer_value_int(isum);
    else
        *out = coffer_value_double(dsum);
    return COFFER_OK;
}

static status fold(cf_qrun *run, const cf_bstep *s, cf_qvals *vals)
{
    coffer_value v;
    if (s->kind == CF_BS_COUNT) {
        v = coffer_value_int((int64_t)vals->n);
    } else {
        coffer_type type = COFFER_TYPE_MIXED;
        if (s->has_prop) {
            /* Replace each object by its property's value. */
            const cf_prop *p = &run->txn->db->schema->classes[s->cls].props[s->prop];
            type = p->type;
            for (size_t i = 0; i < vals->n; i++) {
                coffer_object *obj;
                status st = object_for(run, &vals->v[i], &obj);
                if (st == COFFER_OK)
                    st = coffer_object_get_value(obj, s->prop, &vals->v[i]);
                if (st != COFFER_OK)
                    return st;
            }
        } else if (vals->n) {
            type = vals->v[0].type;
            for (size_t i = 1; i < vals->n; i++)
                if (vals->v[i].type != type)
                    type = COFFER_TYPE_MIXED;
        }
        status st = cf_qfold(s->aggregate, type, vals->v, vals->n, &v);
        if (st != COFFER_OK)
            return st;
    }
    vals->n = 0;
    return push(vals, &v);
}

/* ---- paths --------------------------------------------------------------- */

static status eval_steps(cf_qrun *run, const coffer_value *start, const cf_bstep *steps, size_t nsteps, cf_qvals *out)
{
    out->n = 0;
    status st = push(out, start);
    cf_qvals *tmp = get_vals(run);
    if (!tmp)
        return no_memory();
    for (size_t i = 0; st == COFFER_OK && i < nsteps; i++) {
        const cf_bstep *s = &steps[i];
        if (s->kind == CF_BS_COUNT || s->kind == CF_BS_AGGREGATE) {
            st = fold(run, s, out);
            continue;
        }
        tmp->n = 0;
        const cf_bstep *next = i + 1 < nsteps ? &steps[i + 1] : NULL;
        for (size_t k = 0; st == COFFER_OK && k < out->n; k++)
            st = step_value(run, s, next, &out->v[k], tmp);
        cf_qvals swap = *out;
        *out = *tmp;
        *tmp = swap;
    }
    put_vals(run);
    return st;
}

coffer_status cf_qrun_path(cf_qrun *run, coffer_object *obj, const cf_bstep *steps, size_t nsteps, cf_qvals *out)
{
    run->root = obj;
    coffer_value start = coffer_value_link(obj->cls, obj->key);
    return eval_steps(run, &start, steps, nsteps, out);
}

/* ---- predicates ---------------------------------------------------------- */

static int eval_pred(cf_qrun *run, const cf_bpred *p);

static coffer_value root_value(const cf_qrun *run)
{
    return run->root ? coffer_value_link(run->root->cls, run->root->key) : coffer_value_null();
}

/* SUBQUERY: counts the elements from `start` for which the predicate holds. */
static status subquery_count(cf_qrun *run, const cf_boperand *o, const coffer_value *start, cf_qvals *out,
                             int64_t *count)
{
    status st = eval_steps(run, start, o->steps, o->nsteps, out);
    *count = 0;
    for (size_t i = 0; st == COFFER_OK && i < out->n; i++) {
        if ((st = cf_qrun_check(run)) != COFFER_OK)
            break;
        run->vars[o->sub_var] = out->v[i];
        int m = eval_pred(run, o->where);
        if (m < 0)
            return coffer_last_status();
        *count += m;
    }
    return st;
}

/* The memo key of SUBQUERY `o` from `start`: which subquery, where it
 * starts, and the outer values it reads. 0 if one of them cannot be part
 * of a key. */
static int subquery_key(cf_qrun *run, const cf_boperand *o, const coffer_value *start)
{
    run->key.len = 0;
    run->key.failed = 0;
    cf_buf_put(&run->key, &o, sizeof o);
    int ok = cf_qmemo_key_value(&run->key, start);
    for (size_t i = 0; ok && i < o->ndeps; i++) {
        coffer_value root = root_value(run);
        ok = cf_qmemo_key_value(&run->key, o->deps[i] < 0 ? &root : &run->vars[o->deps[i]]);
    }
    return ok && !run->key.failed;
}

/* A SUBQUERY nested in another is met once per element of the enclosing
 * one: its counts are kept for the run, so each is computed once. */
static status subquery_value(cf_qrun *run, const cf_boperand *o, const coffer_value *start, cf_qvals *out)
{
    int64_t count;
    status st = COFFER_OK;
    int memoize = o->sub_var > 0 && subquery_key(run, o, start);
    if (memoize && !run->memo && !(run->memo = cf_qmemo_new()))
        return no_memory();
    if (!memoize || !cf_qmemo_find(run->memo, &run->key, &count)) {
        st = subquery_count(run, o, start, out, &count);
        /* Nested counts reused the key buffer: make it again. */
        if (st == COFFER_OK && memoize && subquery_key(run, o, start))
            st = cf_qmemo_put(run->memo, &run->key, count);
    }
    if (st != COFFER_OK)
        return st;
    out->n = 0;
    coffer_value v = coffer_value_int(count);
    return push(out, &v);
}

static status operand_values(cf_qrun *run, const cf_boperand *o, cf_qvals *out)
{
    coffer_value start = o->var >= 0 ? run->vars[o->var] : root_value(run);
    if (o->kind == CF_BO_PATH)
        return eval_steps(run, &start, o->steps, o->nsteps, out);
    return subquery_value(run, o, &start, out);
}

/* A text operator where either side is null, as Realm decides it: a null
 * string is equal to ([c]) and LIKE only null; as a pattern of BEGINSWITH,
 * ENDSWITH and CONTAINS it is found in every string and in null (but for
 * CONTAINS[c] in binary data, only in values that are not null); a NULL
 * constant on the left contains, begins and ends with nothing. */
static int text_null(const cf_bpred *p, cf_qcompare_op op, const coffer_value *l, const coffer_value *r)
{
    int lnull = l->type == COFFER_TYPE_NULL, rnull = r->type == COFFER_TYPE_NULL;
    int lbytes = l->type == COFFER_TYPE_STRING || l->type == COFFER_TYPE_BINARY;
    if (op == CF_QC_EQ || op == CF_QC_LIKE)
        return lnull && rnull;
    if (!rnull || (!lnull && !lbytes) || p->left.kind == CF_BO_CONST)
        return 0;
    if (lnull && op == CF_QC_CONTAINS && (p->modifiers & CF_QM_CASE_INSENSITIVE) && p->left.type == COFFER_TYPE_BINARY)
        return 0;
    return 1;
}

static int text_compare(cf_qrun *run, const cf_bpred *p, const coffer_value *l, const coffer_value *r)
{
    cf_qcompare_op op = p->op == CF_QC_NE ? CF_QC_EQ : p->op;
    if (l->type == COFFER_TYPE_NULL || r->type == COFFER_TYPE_NULL)
        return text_null(p, op, l, r);
    int lb = l->type == COFFER_TYPE_STRING || l->type == COFFER_TYPE_BINARY;
    int rb = r->type == COFFER_TYPE_STRING || r->type == COFFER_TYPE_BINARY;
    if (!lb || !rb)
        return 0;
    if (p->pattern >= 0 && r == &p->right.consts[0]) {
        cf_text_pattern **slot = &run->patterns[p->pattern];
        if (!*slot && cf_text_pattern_new(op, p->modifiers, r->u.string.data, r->u.string.size, slot) != COFFER_OK)
            return -1;
        return cf_text_pattern_match(*slot, l->u.string.data, l->u.string.size);
    }
    return cf_text_match(op, p->modifiers, l->u.string.data, l->u.string.size, r->u.string.data, r->u.string.size);
}

static int type_name_equal(const cf_bpred *p, const coffer_value *l, const coffer_value *r)
{
    const coffer_value *v = p->left.type_names ? l : r, *name = p->left.type_names ? r : l;
    if (name->type != COFFER_TYPE_STRING)
        return 0;
    return cf_qtype_name_matches(v, name->u.string.data, name->u.string.size);
}

/* One left value against one right value: 1, 0, or -1 on error. */
static int compare_one(cf_qrun *run, const cf_bpred *p, const coffer_value *l, const coffer_value *r)
{
    int c, eq;
    switch (p->op) {
    case CF_QC_EQ:
    case CF_QC_NE:
        if (p->left.type_names || p->right.type_names)
            eq = type_name_equal(p, l, r);
        else if (p->modifiers)
            eq = text_compare(run, p, l, r);
        else
            eq = cf_qvalue_equal(l, r);
        if (eq < 0)
            return -1;
        return p->op == CF_QC_EQ ? eq : !eq;
    case CF_QC_LT: return cf_qvalue_compare(l, r, &c) == 0 && c < 0;
    case CF_QC_LE: return cf_qvalue_compare(l, r, &c) == 0 && c <= 0;
    case CF_QC_GT: return cf_qvalue_compare(l, r, &c) == 0 && c > 0;
    case CF_QC_GE: return cf_qvalue_compare(l, r, &c) == 0 && c >= 0;
    case CF_QC_BETWEEN: {
        int lo, hi;
        return cf_qvalue_compare(l, &p->right.consts[0], &lo) == 0 && lo >= 0 &&
               cf_qvalue_compare(l, &p->right.consts[1], &hi) == 0 && hi <= 0;
    }
    default: return text_compare(run, p, l, r);
    }
}

/* Whether `v` (on the quantified side) matches any value of the other side. */
static int matches_any(cf_qrun *run, const cf_bpred *p, const coffer_value *v, const cf_qvals *others, int v_is_left)
{
    if (p->op == CF_QC_BETWEEN)
        return compare_one(run, p, v, NULL);
    for (size_t i = 0; i < others->n; i++) {
        const coffer_value *o = &others->v[i];
        int m = v_is_left ? compare_one(run, p, v, o) : compare_one(run, p, o, v);
        if (m != 0)
            return m;
    }
    return 0;
}

/* The common case: one property of the object against constants. No value
 * lists and no handles: the value is read straight from the record. */
static int simple_compare(cf_qrun *run, const cf_bpred *p)
{
    coffer_value v;
    if (coffer_object_get_value(run->root, p->left.steps[0].prop, &v) != COFFER_OK)
        return -1;
    return cf_qrun_compare_value(run, p, &v);
}

int cf_qrun_compare_value(cf_qrun *run, const cf_bpred *p, const coffer_value *value)
{
    const coffer_value v = *value;
    for (size_t i = 0; i < p->right.nconsts; i++) {
        int m = compare_one(run, p, &v, &p->right.consts[i]);
        if (m != 0)
            return m;
        if (p->op == CF_QC_BETWEEN)
            break;
    }
    return 0;
}

int cf_bpred_is_simple(const cf_bpred *p, coffer_class_id cls)
{
    return p->kind == CF_BP_COMPARE && p->left.kind == CF_BO_PATH && p->left.var < 0 && p->left.nsteps == 1 &&
           p->left.steps[0].kind == CF_BS_PROPERTY && p->left.steps[0].cls == cls && p->left.type != COFFER_TYPE_LINK &&
           p->left.type != COFFER_TYPE_MIXED && !p->left.type_names && p->right.kind == CF_BO_CONST &&
           p->right.nconsts > 0 && p->right.quantifier == CF_QQ_NONE_GIVEN;
}

/* The object obj('Class', key) names in this run's snapshot, as a link; a
 * link to no object (key UINT64_MAX, never given) when there is none. */
static status find_object(cf_qrun *run, const coffer_value *ref, coffer_value *out)
{
    coffer_class_id cls = (coffer_class_id)ref->u.list.count;
    coffer_object *obj;
    status st = coffer_object_find(run->txn, cls, ref->u.list.items, &obj);
    if (st == COFFER_ERR_NOT_FOUND) {
        coffer_clear_error();
        *out = coffer_value_link(cls, UINT64_MAX);
        return COFFER_OK;
    }
    if (st != COFFER_OK)
        return st;
    *out = coffer_value_link(cls, coffer_object_key_of(obj));
    coffer_object_release(obj);
    return COFFER_OK;
}

/* The constants of `o`, with its obj() constants found once per run; NULL
 * on error. */
static const coffer_value *run_consts(cf_qrun *run, const cf_bpred *p, const cf_boperand *o)
{
    if (p->ref_slot < 0)
        return o->consts;
    coffer_value **slot = &run->refs[p->ref_slot];
    if (*slot)
        return *slot;
    coffer_value *v = malloc((o->nconsts ? o->nconsts : 1) * sizeof *v);
    if (!v) {
        no_memory();
        return NULL;
    }
    for (size_t i = 0; i < o->nconsts; i++) {
        v[i] = o->consts[i];
        if (v[i].type == CF_QTYPE_OBJECT_REF && find_object(run, &o->consts[i], &v[i]) != COFFER_OK) {
            free(v);
            return NULL;
        }
    }
    return *slot = v;
}

/* The values of one side of `p`: its constants (in `consts`), or what its
 * path or SUBQUERY gives (in the pooled list `*vals`). */
static status side_values(cf_qrun *run, const cf_bpred *p, const cf_boperand *o, cf_qvals *consts, cf_qvals **vals)
{
    if (o->kind != CF_BO_CONST)
        return operand_values(run, o, *vals);
    const coffer_value *c = run_consts(run, p, o);
    if (!c)
        return coffer_last_status();
    *consts = (cf_qvals){(coffer_value *)c, o->nconsts, o->nconsts};
    *vals = consts;
    return COFFER_OK;
}

static int eval_compare(cf_qrun *run, const cf_bpred *p)
{
    if (p->simple && run->root)
        return simple_compare(run, p);
    cf_qvals *lv = get_vals(run);
    cf_qvals *rv = lv ? get_vals(run) : NULL;
    cf_qvals lconst, rconst;
    int result = -1;
    if (!rv) {
        if (lv)
            put_vals(run);
        no_memory();
        return -1;
    }
    const cf_boperand *l = &p->left, *r = &p->right;
    if (side_values(run, p, l, &lconst, &lv) != COFFER_OK || side_values(run, p, r, &rconst, &rv) != COFFER_OK)
        goto done;
    /* The quantifier is the left side's unless only the right has one. */
    int right_q = l->quantifier == CF_QQ_NONE_GIVEN && r->quantifier != CF_QQ_NONE_GIVEN;
    cf_qquantifier q = right_q ? r->quantifier : l->quantifier;
    const cf_qvals *qs = right_q ? rv : lv, *os = right_q ? lv : rv;
    int all = 1, any = 0;
    for (size_t i = 0; i < qs->n; i++) {
        int m = matches_any(run, p, &qs->v[i], os, !right_q);
        if (m < 0)
            goto done;
        any |= m;
        all &= m;
        if ((m && q != CF_QQ_ALL) || (!m && q == CF_QQ_ALL))
            break;
    }
    result = q == CF_QQ_ALL ? all : q == CF_QQ_NONE ? !any : any;
done:
    put_vals(run);
    put_vals(run);
    return result;
}

static int eval_pred(cf_qrun *run, const cf_bpred *p)
{
    switch (p->kind) {
    case CF_BP_TRUE: return 1;
    case CF_BP_FALSE: return 0;
    case CF_BP_NOT: {
        int m = eval_pred(run, p->operand);
        return m < 0 ? m : !m;
    }
    case CF_BP_AND:
    case CF_BP_OR:
        for (size_t i = 0; i < p->count; i++) {
            int m = eval_pred(run, p->items[i]);
            if (m < 0)
                return m;
            if (m == (p->kind == CF_BP_OR))
                return m;
        }
        return p->kind == CF_BP_AND;
    case CF_BP_COMPARE: return eval_compare(run, p);
    }
    return 0;
}

int cf_qrun_eval(cf_qrun *run, const cf_bpred *p, coffer_object *obj)
{
    run->root = obj;
    int m = eval_pred(run, p);
    cf_qrun_release(run);
    return m;
}

int cf_qrun_matches(cf_qrun *run, coffer_object *obj) { return cf_qrun_eval(run, run->bq->where, obj); }
