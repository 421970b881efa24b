/* columnar — a conjunction of simple comparisons evaluated over batches of
 * objects kept column by column (columnar.h). An int property compared with
 * one int constant (==, !=, <, <=, >, >=, BETWEEN) is a range test in a
 * loop over the column's values; a string property against one string
 * without modifiers (==, !=, BEGINSWITH, ENDSWITH, CONTAINS), a byte
 * comparison of each value in place, CONTAINS one search through all the
 * batch's strings at once when it tests them all; any other comparison
 * decodes each value it tests onto the stack and compares it as the
 * evaluator does. A double or float property against one constant of its
 * type is a range test too, a NaN value (which sorts before every number)
 * answered once per query. A null value (or a required property the
 * batch's objects lack, read as its default) gives the same answer for
 * every object, found once per query. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/error.h"
#include "objects/object.h"
#include "query/columnar.h"
#include "query/engine.h"
#include "query/text.h"

typedef coffer_status status;

typedef struct column_test {
    const cf_bpred *pred;
    const cf_prop *prop;
    int null_match;      /* what a null value gives */
    int int_range;       /* tested by the int loop: lo <= v <= hi, negated by `negate` */
    int negate;
    int64_t lo, hi;
    int real_range;      /* tested by the real loop: lo <(=) v <(=) hi, negated by `negate` */
    double rlo, rhi;
    int lo_incl, hi_incl;
    int nan_match;       /* what a NaN value gives */
    int text;            /* tested by byte comparisons: op against needle[0 .. nlen) */
    const uint8_t *needle;
    size_t nlen;
    uint64_t tested, kept; /* objects so far: how selective it is */
} column_test;

struct cf_columnar {
    cf_qrun *run;
    size_t n;
    size_t *order; /* of `tests`: the most selective (for its cost) first */
    column_test tests[];
};

static status no_memory(void) { return cf_error(COFFER_ERR_NO_MEMORY, "query: out of memory"); }

/* Sets t's int range when its comparison is one the int loop answers. */
static void plan_int_range(column_test *t)
{
    const cf_bpred *p = t->pred;
    size_t want = p->op == CF_QC_BETWEEN ? 2 : 1;
    if (t->prop->type != COFFER_TYPE_INT || p->modifiers || p->right.type_names || p->right.nconsts != want)
        return;
    for (size_t i = 0; i < want; i++)
        if (p->right.consts[i].type != COFFER_TYPE_INT)
            return;
    int64_t c = p->right.consts[0].u.integer;
    t->lo = INT64_MIN;
    t->hi = INT64_MAX;
    switch (p->op) {
    case CF_QC_EQ: t->lo = t->hi = c; break;
    case CF_QC_NE: t->lo = t->hi = c; t->negate = 1; break;
    case CF_QC_GT: if (c == INT64_MAX) t->lo = 1, t->hi = 0; else t->lo = c + 1; break; /* lo > hi: none */
    case CF_QC_GE: t->lo = c; break;
    case CF_QC_LT: if (c == INT64_MIN) t->lo = 1, t->hi = 0; else t->hi = c - 1; break;
    case CF_QC_LE: t->hi = c; break;
    case CF_QC_BETWEEN: t->lo = c; t->hi = p->right.consts[1].u.integer; break;
    default: return;
    }
    t->int_range = 1;
}

/* Sets t's real range when its comparison is one the real loop answers: a
 * double (float) property against doubles (floats) that are not NaN. */
static void plan_real_range(column_test *t)
{
    const cf_bpred *p = t->pred;
    coffer_type type = t->prop->type;
    size_t want = p->op == CF_QC_BETWEEN ? 2 : 1;
    if ((type != COFFER_TYPE_DOUBLE && type != COFFER_TYPE_FLOAT) || p->modifiers || p->right.type_names ||
        p->right.nconsts != want)
        return;
    double c[2];
    for (size_t i = 0; i < want; i++) {
        const coffer_value *v = &p->right.consts[i];
        if (v->type != type)
            return;
        c[i] = type == COFFER_TYPE_DOUBLE ? v->u.double_value : (double)v->u.float_value;
        if (isnan(c[i]))
            return;
    }
    t->rlo = -INFINITY;
    t->rhi = INFINITY;
    t->lo_incl = t->hi_incl = 1;
    switch (p->op) {
    case CF_QC_EQ: t->rlo = t->rhi = c[0]; break;
    case CF_QC_NE: t->rlo = t->rhi = c[0]; t->negate = 1; break;
    case CF_QC_GT: t->rlo = c[0]; t->lo_incl = 0; break;
    case CF_QC_GE: t->rlo = c[0]; break;
    case CF_QC_LT: t->rhi = c[0]; t->hi_incl = 0; break;
    case CF_QC_LE: t->rhi = c[0]; break;
    case CF_QC_BETWEEN: t->rlo = c[0]; t->rhi = c[1]; break;
    default: return;
    }
    t->real_range = 1;
}

/* Sets t's needle when its comparison is one the byte loops answer exactly
 * as the evaluator does: no modifiers, one string holding no NUL (which
 * ends every stored string, so that a match never crosses two values). */
static void plan_text(column_test *t)
{
    const cf_bpred *p = t->pred;
    if (t->prop->type != COFFER_TYPE_STRING || p->modifiers || p->right.type_names || p->right.nconsts != 1 ||
        p->right.consts[0].type != COFFER_TYPE_STRING)
        return;
    if (p->op != CF_QC_EQ && p->op != CF_QC_NE && p->op != CF_QC_BEGINSWITH && p->op != CF_QC_ENDSWITH &&
        p->op != CF_QC_CONTAINS)
        return;
    const coffer_bytes *s = &p->right.consts[0].u.string;
    if (s->size == 0 || memchr(s->data, 0, s->size))
        return;
    t->needle = s->data;
    t->nlen = s->size;
    t->text = 1;
}

/* The comparison of a value read from a batch, with a required property's
 * missing value read as its default, as a scan of objects reads it. */
static int compare(cf_qrun *run, const column_test *t, coffer_value v)
{
    if (v.type == COFFER_TYPE_NULL && !cf_prop_optional(t->prop))
        v = cf_value_default(t->prop->type);
    return cf_qrun_compare_value(run, t->pred, &v);
}

coffer_status cf_columnar_new(coffer_txn *txn, cf_qrun *run, coffer_class_id cls, const cf_bpred *const *conj, size_t n,
                              cf_columnar **out)
{
    const cf_class *c = &txn->db->schema->classes[cls];
    cf_columnar *cs = calloc(1, sizeof *cs + n * sizeof cs->tests[0]);
    if (!cs || !(cs->order = malloc(n * sizeof *cs->order))) {
        free(cs);
        return no_memory();
    }
    cs->run = run;
    cs->n = n;
    for (size_t i = 0; i < n; i++) {
        column_test *t = &cs->tests[i];
        t->pred = conj[i];
        t->prop = &c->props[conj[i]->left.steps[0].prop];
        t->null_match = compare(run, t, (coffer_value){.type = COFFER_TYPE_NULL});
        if (t->null_match < 0) {
            cf_columnar_free(cs);
            return coffer_last_status();
        }
        plan_int_range(t);
        plan_real_range(t);
        plan_text(t);
        if (t->real_range) {
            coffer_value nan = {.type = t->prop->type};
            if (nan.type == COFFER_TYPE_DOUBLE)
                nan.u.double_value = NAN;
            else
                nan.u.float_value = NAN;
            if ((t->nan_match = compare(run, t, nan)) < 0) {
                cf_columnar_free(cs);
                return coffer_last_status();
            }
        }
        cs->order[i] = i;
    }
    *out = cs;
    return COFFER_OK;
}

void cf_columnar_free(cf_columnar *cs)
{
    if (cs)
        free(cs->order);
    free(cs);
}

/* Keeps, of the positions sel[0..*nsel), those whose value in `col` passes
 * int test `t`. All of the batch's positions (the first test) are read
 * straight, without going through `sel`. */
static void keep_ints(const column_test *t, const cf_column *col, uint16_t *sel, size_t *nsel)
{
    size_t kept = 0;
    const int64_t lo = t->lo, hi = t->hi;
    const int negate = t->negate, null_match = t->null_match;
    if (*nsel == col->n && !col->some_null) { /* the common first test: a plain loop */
        for (uint16_t i = 0; i < col->n; i++) {
            int64_t v = cf_column_int(col, i);
            sel[kept] = i;
            kept += (size_t)(((v >= lo) & (v <= hi)) ^ negate);
        }
    } else if (*nsel == col->n) {
        for (uint16_t i = 0; i < col->n; i++) {
            int64_t v = cf_column_int(col, i);
            int m = cf_column_is_null(col, i) ? null_match : ((v >= lo) & (v <= hi)) ^ negate;
            sel[kept] = i;
            kept += (size_t)m;
        }
    } else {
        for (size_t k = 0; k < *nsel; k++) {
            uint16_t i = sel[k];
            int64_t v = cf_column_int(col, i);
            int m = cf_column_is_null(col, i) ? null_match : ((v >= lo) & (v <= hi)) ^ negate;
            sel[kept] = i;
            kept += (size_t)m;
        }
    }
    *nsel = kept;
}

/* The same for real test `t`: a NaN value gives nan_match. */
static void keep_reals(const column_test *t, const cf_column *col, uint16_t *sel, size_t *nsel)
{
    size_t kept = 0;
    const double lo = t->rlo, hi = t->rhi;
    for (size_t k = 0; k < *nsel; k++) {
        uint16_t i = sel[k];
        double v = cf_column_real(col, i);
        int m;
        if (cf_column_is_null(col, i))
            m = t->null_match;
        else if (isnan(v))
            m = t->nan_match;
        else
            m = ((t->lo_incl ? v >= lo : v > lo) & (t->hi_incl ? v <= hi : v < hi)) ^ t->negate;
        sel[kept] = i;
        kept += (size_t)m;
    }
    *nsel = kept;
}

/* Marks in hit[] the values of `col` that contain t's needle: one search
 * through the values one after another, going on after each match from
 * the end of the value it is in. */
static void find_in_column(const column_test *t, const cf_column *col, uint8_t *hit)
{
    const uint8_t *values = cf_column_values(col);
    size_t total = cf_column_values_len(col), pos = 0;
    uint16_t i = 0;
    memset(hit, 0, col->n);
    while (pos < total) {
        const uint8_t *h = cf_text_find(values + pos, total - pos, t->needle, t->nlen);
        if (!h)
            break;
        size_t at = (size_t)(h - values);
        while (cf_column_end(col, i) <= at) /* at < total: some value ends after it */
            i++;
        hit[i] = 1;
        pos = cf_column_end(col, i);
    }
}

/* Whether text[0 .. len) passes byte test `t`. */
static int text_matches(const column_test *t, const uint8_t *text, size_t len)
{
    switch (t->pred->op) {
    case CF_QC_EQ: return len == t->nlen && memcmp(text, t->needle, len) == 0;
    case CF_QC_NE: return !(len == t->nlen && memcmp(text, t->needle, len) == 0);
    case CF_QC_BEGINSWITH: return len >= t->nlen && memcmp(text, t->needle, t->nlen) == 0;
    case CF_QC_ENDSWITH: return len >= t->nlen && memcmp(text + len - t->nlen, t->needle, t->nlen) == 0;
    default: return cf_text_find(text, len, t->needle, t->nlen) != NULL;
    }
}

/* The same for byte test `t` on a string column. A value without its NUL
 * is damaged: cf_batch_value says so. */
static status keep_texts(const column_test *t, const cf_object_batch *b, const cf_column *col, uint16_t *sel,
                         size_t *nsel)
{
    uint8_t hit[CF_OBJECT_BATCH_MAX];
    int searched = t->pred->op == CF_QC_CONTAINS && *nsel == col->n;
    if (searched)
        find_in_column(t, col, hit);
    const uint8_t *values = cf_column_values(col);
    size_t kept = 0, start = 0, end;
    for (size_t k = 0; k < *nsel; k++, start = end) {
        uint16_t i = sel[k];
        int m = t->null_match;
        if (searched) /* every position in turn: a value starts where the one before ends */
            end = cf_column_end(col, i);
        else
            cf_column_span(col, i, &start, &end);
        if (!cf_column_is_null(col, i)) {
            if (end == start || values[end - 1] != 0) {
                coffer_value v;
                return cf_batch_value(b, col, i, &v);
            }
            m = searched ? hit[i] : text_matches(t, values + start, end - start - 1);
        }
        sel[kept] = i;
        kept += (size_t)m;
    }
    *nsel = kept;
    return COFFER_OK;
}

/* The same for any other test: each value decoded and compared. */
static status keep_values(cf_columnar *cs, const column_test *t, const cf_object_batch *b, const cf_column *col,
                          uint16_t *sel, size_t *nsel)
{
    size_t kept = 0;
    for (size_t k = 0; k < *nsel; k++) {
        uint16_t i = sel[k];
        int m = t->null_match;
        if (!cf_column_is_null(col, i)) {
            coffer_value v;
            status st = cf_batch_value(b, col, i, &v);
            if (st != COFFER_OK)
                return st;
            if ((m = compare(cs->run, t, v)) < 0)
                return coffer_last_status();
        }
        sel[kept] = i;
        kept += (size_t)m;
    }
    *nsel = kept;
    return COFFER_OK;
}

static status keep(cf_columnar *cs, column_test *t, const cf_object_batch *b, uint16_t *sel, size_t *nsel)
{
    cf_column col;
    status st = cf_batch_column(b, t->prop->column, t->prop->type, &col);
    if (st != COFFER_OK)
        return st;
    t->tested += *nsel;
    if (col.all_null) {
        *nsel = t->null_match ? *nsel : 0;
    } else if (t->int_range && cf_column_has_ints(&col)) {
        keep_ints(t, &col, sel, nsel);
    } else if (t->real_range && cf_column_has_reals(&col)) {
        keep_reals(t, &col, sel, nsel);
    } else if (t->text) {
        if ((st = keep_texts(t, b, &col, sel, nsel)) != COFFER_OK)
            return st;
    } else if ((st = keep_values(cs, t, b, &col, sel, nsel)) != COFFER_OK) {
        return st;
    }
    t->kept += *nsel;
    return COFFER_OK;
}

/* Whether test `a` should run before `b`: the smaller share of objects kept,
 * weighed by what testing one costs (a byte comparison about twice an int
 * loop's, decoding a value about eight times). */
static int runs_before(const column_test *a, const column_test *b)
{
    double ca = a->int_range || a->real_range ? 1 : a->text ? 2 : 8;
    double cb = b->int_range || b->real_range ? 1 : b->text ? 2 : 8;
    return ca * (double)(a->kept + 1) / (double)(a->tested + 2) < cb * (double)(b->kept + 1) / (double)(b->tested + 2);
}

static void reorder(cf_columnar *cs)
{
    for (size_t i = 1; i < cs->n; i++)
        for (size_t j = i; j > 0 && runs_before(&cs->tests[cs->order[j]], &cs->tests[cs->order[j - 1]]); j--) {
            size_t x = cs->order[j];
            cs->order[j] = cs->order[j - 1];
            cs->order[j - 1] = x;
        }
}

static status reserve(cf_keylist *out, size_t more)
{
    if (out->n + more <= out->cap)
        return COFFER_OK;
    size_t cap = out->cap ? out->cap : 64;
    while (cap < out->n + more)
        cap *= 2;
    uint64_t *k = realloc(out->k, cap * sizeof *k);
    if (!k)
        return no_memory();
    out->k = k;
    out->cap = cap;
    return COFFER_OK;
}

coffer_status cf_columnar_select(cf_columnar *cs, const cf_object_batch *batch, cf_keylist *out)
{
    status st = cf_qrun_check(cs->run);
    uint16_t sel[CF_OBJECT_BATCH_MAX];
    size_t nsel = batch->n;
    for (uint16_t i = 0; i < batch->n; i++)
        sel[i] = i;
    for (size_t i = 0; i < cs->n && nsel && st == COFFER_OK; i++)
        st = keep(cs, &cs->tests[cs->order[i]], batch, sel, &nsel);
    if (st == COFFER_OK)
        st = reserve(out, nsel);
    if (st != COFFER_OK)
        return st;
    for (size_t k = 0; k < nsel; k++)
        out->k[out->n++] = batch->base | batch->lows[sel[k]];
    reorder(cs);
    return COFFER_OK;
}
