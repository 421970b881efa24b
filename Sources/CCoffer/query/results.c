/* results — the public query API: compiling a query for a class, running it
 * in a transaction, and what a result offers (count, objects, aggregates,
 * further queries, deleting, recomputing in a newer transaction). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/error.h"
#include "query/observed.h"
#include "query/plan.h"
#include "storage/txn.h"

typedef coffer_status status;

struct coffer_query {
    uint32_t magic;
    cf_bquery *bq;
};

static status no_memory(void) { return cf_error(COFFER_ERR_NO_MEMORY, "query: out of memory"); }

/* ---- queries ------------------------------------------------------------- */

static status check_db(const coffer_db *db)
{
    if (!db || db->magic != CF_DB_MAGIC)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "database handle is NULL or not a database");
    if (db->closed)
        return cf_error(COFFER_ERR_MISUSE, "the database was closed");
    return COFFER_OK;
}

static status check_query(const coffer_query *q)
{
    if (!q || q->magic != CF_QUERY_MAGIC)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "query handle is NULL or not a query");
    return COFFER_OK;
}

COFFER_API coffer_status coffer_query_compile(coffer_db *db, coffer_class_id cls, const char *text, size_t len,
                                              const coffer_value *args, size_t arg_count, coffer_query **out)
{
    if (out)
        *out = NULL;
    status st = check_db(db);
    if (st != COFFER_OK)
        return st;
    if (!out || !text)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "coffer_query_compile: %s is NULL", out ? "text" : "out");
    if (arg_count && !args)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "coffer_query_compile: args is NULL but arg_count is %zu", arg_count);
    if (cls >= db->schema->nclasses)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "coffer_query_compile: no class with id %u (the database has %zu)",
                        cls, db->schema->nclasses);
    if (len == SIZE_MAX)
        len = strlen(text);
    cf_query *parsed;
    st = cf_query_parse(text, len, &parsed, NULL);
    if (st == COFFER_ERR_INVALID_ARGUMENT) {
        char message[512];
        snprintf(message, sizeof message, "%s", coffer_last_error());
        return cf_error(COFFER_ERR_QUERY, "%s", message);
    }
    if (st != COFFER_OK)
        return st;
    /* The handle lives in the query's arena, freed with the bound query. */
    coffer_query *q = cf_qarena_alloc(parsed->arena, sizeof *q);
    st = q ? cf_query_bind(db, cls, parsed, args, arg_count, &q->bq) : no_memory();
    if (st != COFFER_OK) {
        cf_query_free(parsed);
        return st;
    }
    q->magic = CF_QUERY_MAGIC;
    *out = q;
    return COFFER_OK;
}

COFFER_API coffer_status coffer_query_rebind(const coffer_query *query, const coffer_value *args, size_t arg_count,
                                             coffer_query **out)
{
    if (out)
        *out = NULL;
    status st = check_query(query);
    if (st == COFFER_OK)
        st = check_db(query->bq->db);
    if (st != COFFER_OK)
        return st;
    if (!out)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "coffer_query_rebind: out is NULL");
    if (arg_count && !args)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "coffer_query_rebind: args is NULL but arg_count is %zu", arg_count);
    cf_bquery *bq;
    st = cf_query_rebind(query->bq, args, arg_count, &bq);
    if (st != COFFER_OK)
        return st;
    coffer_query *q = cf_qarena_alloc(bq->arena, sizeof *q);
    if (!q) {
        cf_bquery_free(bq);
        return no_memory();
    }
    bq->timeout_ms = __atomic_load_n(&query->bq->timeout_ms, __ATOMIC_RELAXED);
    q->magic = CF_QUERY_MAGIC;
    q->bq = bq;
    *out = q;
    return COFFER_OK;
}

coffer_query *cf_query_spare_take(const coffer_query *query, const coffer_value *args, size_t nargs)
{
    if (check_query(query) != COFFER_OK || !query->bq->patchable || query->bq->db->closed)
        return NULL;
    coffer_query *spare = __atomic_exchange_n(&query->bq->spare, NULL, __ATOMIC_ACQ_REL);
    if (!spare)
        return NULL;
    if (!cf_bquery_patch(spare->bq, args, nargs)) {
        cf_query_spare_put(query, spare);
        return NULL;
    }
    spare->bq->timeout_ms = __atomic_load_n(&query->bq->timeout_ms, __ATOMIC_RELAXED);
    return spare;
}

void cf_query_spare_put(const coffer_query *query, coffer_query *spare)
{
    if (!spare)
        return;
    cf_bquery *bq = spare->bq;
    if (check_query(query) != COFFER_OK) {
        coffer_query_free(spare);
        return;
    }
    if (!query->bq->patchable || !bq->patchable || bq->refs != 1) {
        coffer_query_free(spare);
        return;
    }
    if (bq->source == query->bq) {
        /* Kept by the query, it must not keep the query alive: it uses the
         * query's tree, which lives as long as the query does. */
        bq->source = NULL;
        cf_bquery_free(query->bq); /* the caller holds the query: not the last */
    }
    coffer_query *expected = NULL;
    if (!__atomic_compare_exchange_n(&query->bq->spare, &expected, spare, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        coffer_query_free(spare);
}

COFFER_API void coffer_query_free(coffer_query *q)
{
    if (!q || q->magic != CF_QUERY_MAGIC)
        return;
    q->magic = CF_DEAD_MAGIC;
    cf_bquery_free(q->bq); /* may free q itself */
}

COFFER_API const char *coffer_query_description(const coffer_query *q)
{
    if (check_query(q) != COFFER_OK)
        return NULL;
    /* Printed on first request; threads racing here keep one copy. */
    char *text = __atomic_load_n(&q->bq->text, __ATOMIC_ACQUIRE);
    if (text)
        return text;
    if (cf_query_print(q->bq->parsed, &text) != COFFER_OK)
        return NULL;
    char *expected = NULL;
    if (!__atomic_compare_exchange_n(&q->bq->text, &expected, text, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        free(text);
        return expected;
    }
    return text;
}

COFFER_API coffer_status coffer_query_set_timeout(coffer_query *q, uint64_t milliseconds)
{
    status st = check_query(q);
    if (st != COFFER_OK)
        return st;
    __atomic_store_n(&q->bq->timeout_ms, milliseconds, __ATOMIC_RELAXED);
    return COFFER_OK;
}

COFFER_API uint64_t coffer_query_timeout(const coffer_query *q)
{
    return check_query(q) == COFFER_OK ? __atomic_load_n(&q->bq->timeout_ms, __ATOMIC_RELAXED) : 0;
}

COFFER_API coffer_class_id coffer_query_class(const coffer_query *q)
{
    return check_query(q) == COFFER_OK ? q->bq->cls : UINT32_MAX;
}

/* ---- results ------------------------------------------------------------- */

static status check_handle(const coffer_results *r, int write)
{
    if (!r || r->magic != CF_RESULTS_MAGIC)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "results handle is NULL or not a result");
    if (!r->txn)
        return cf_error(COFFER_ERR_MISUSE, "the transaction of these results has ended; recompute them with "
                                           "coffer_results_rerun()");
    return cf_txn_check(r->txn, write);
}

static status compute(coffer_results *r);

/* Checks the handle and computes its keys if that was put off. */
static status check_results(coffer_results *r, int write)
{
    status st = check_handle(r, write);
    if (st == COFFER_OK && r->pending) {
        st = compute(r);
        r->pending = st != COFFER_OK;
    }
    return st;
}

static status results_new(coffer_txn *txn, coffer_class_id cls, cf_bquery *const *chain, size_t nchain,
                          coffer_results **out)
{
    coffer_results *r = calloc(1, sizeof *r);
    if (!r)
        return no_memory();
    r->chain = nchain <= 1 ? r->first : malloc(nchain * sizeof *r->chain);
    if (!r->chain) {
        free(r);
        return no_memory();
    }
    for (size_t i = 0; i < nchain; i++) {
        r->chain[i] = chain[i];
        cf_bquery_retain(chain[i]);
    }
    r->nchain = nchain;
    r->magic = CF_RESULTS_MAGIC;
    r->cls = cls;
    r->txn = txn;
    r->next_in_txn = txn->results;
    if (txn->results)
        txn->results->prev_in_txn = r;
    txn->results = r;
    *out = r;
    return COFFER_OK;
}

COFFER_API void coffer_results_free(coffer_results *r)
{
    if (!r || r->magic != CF_RESULTS_MAGIC)
        return;
    if (r->txn) {
        if (r->prev_in_txn)
            r->prev_in_txn->next_in_txn = r->next_in_txn;
        else
            r->txn->results = r->next_in_txn;
        if (r->next_in_txn)
            r->next_in_txn->prev_in_txn = r->prev_in_txn;
    }
    for (size_t i = 0; i < r->nchain; i++)
        cf_bquery_free(r->chain[i]);
    r->magic = CF_DEAD_MAGIC;
    if (r->chain != r->first)
        free(r->chain);
    free(r->keys);
    free(r->base);
    free(r);
}

static status set_base(coffer_results *r, const uint64_t *keys, size_t n)
{
    r->base = malloc((n ? n : 1) * sizeof *r->base);
    if (!r->base)
        return no_memory();
    if (n)
        memcpy(r->base, keys, n * sizeof *keys);
    r->nbase = n;
    return COFFER_OK;
}

/* Runs query `bq` over the objects of `keys`, replacing them by the result. */
static status compute_step(coffer_txn *txn, const cf_bquery *bq, cf_qguard *guard, cf_keylist *keys)
{
    static const uint64_t none[1];
    cf_keylist out = {0};
    cf_qguard_set_timeout(guard, __atomic_load_n(&bq->timeout_ms, __ATOMIC_RELAXED));
    status st = cf_query_select(txn, bq, guard, keys->k ? keys->k : none, keys->n, &out);
    if (st == COFFER_OK)
        st = cf_query_post(txn, bq, guard, &out);
    if (st != COFFER_OK) {
        free(out.k);
        return st;
    }
    free(keys->k);
    *keys = out;
    return COFFER_OK;
}

/* Computes the chain from the base: the first query selects from the class
 * (with its indexes) or filters the base keys, the next ones filter what the
 * previous left. */
static status compute(coffer_results *r)
{
    cf_keylist keys = {0};
    status st = COFFER_OK;
    cf_qguard guard;
    cf_qguard_start(&guard, r->txn->db);
    if (r->base) {
        keys.k = malloc((r->nbase ? r->nbase : 1) * sizeof *keys.k);
        if (!keys.k)
            return no_memory();
        if (r->nbase)
            memcpy(keys.k, r->base, r->nbase * sizeof *keys.k);
        keys.n = keys.cap = r->nbase;
    } else {
        cf_bquery all = {0};
        cf_bpred truth = {0};
        truth.kind = CF_BP_TRUE;
        all.cls = r->cls;
        all.where = &truth;
        const cf_bquery *first = r->nchain ? r->chain[0] : &all;
        cf_qguard_set_timeout(&guard, __atomic_load_n(&first->timeout_ms, __ATOMIC_RELAXED));
        st = cf_query_select(r->txn, first, &guard, NULL, 0, &keys);
        if (st == COFFER_OK)
            st = cf_query_post(r->txn, first, &guard, &keys);
    }
    for (size_t i = r->base ? 0 : 1; i < r->nchain && st == COFFER_OK; i++)
        st = compute_step(r->txn, r->chain[i], &guard, &keys);
    if (st != COFFER_OK) {
        free(keys.k);
        return st;
    }
    free(r->keys);
    r->keys = keys.k;
    r->count = keys.n;
    return COFFER_OK;
}

static status check_run(coffer_txn *txn, const coffer_db *qdb)
{
    status st = cf_txn_check(txn, 0);
    if (st != COFFER_OK)
        return st;
    if (txn->db != qdb)
        return cf_error(COFFER_ERR_MISUSE, "the query belongs to another database than the transaction");
    return COFFER_OK;
}

COFFER_API coffer_status coffer_query_run(coffer_txn *txn, const coffer_query *q, coffer_results **out)
{
    if (!out)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "coffer_query_run: out is NULL");
    *out = NULL;
    status st = check_query(q);
    if (st == COFFER_OK)
        st = check_run(txn, q->bq->db);
    coffer_results *r = NULL;
    if (st == COFFER_OK)
        st = results_new(txn, q->bq->cls, &q->bq, 1, &r);
    if (st == COFFER_OK && !txn->write && q->bq->npost == 0 && cf_query_index_countable(txn, q->bq)) {
        r->pending = 1; /* perhaps only counted */
    } else if (st == COFFER_OK && (st = compute(r)) != COFFER_OK) {
        coffer_results_free(r);
        return st;
    }
    *out = r;
    return st;
}

COFFER_API coffer_status coffer_query_explain(coffer_txn *txn, const coffer_query *query, char *buf, size_t size)
{
    if (!buf || size == 0)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "coffer_query_explain: buf is NULL or size is 0");
    buf[0] = 0;
    status st = check_query(query);
    if (st == COFFER_OK)
        st = check_run(txn, query->bq->db);
    return st == COFFER_OK ? cf_query_explain(txn, query->bq, buf, size) : st;
}

COFFER_API coffer_status coffer_results_all(coffer_txn *txn, coffer_class_id cls, coffer_results **out)
{
    if (!out)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "coffer_results_all: out is NULL");
    *out = NULL;
    status st = cf_txn_check(txn, 0);
    if (st != COFFER_OK)
        return st;
    if (cls >= txn->db->schema->nclasses)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "coffer_results_all: no class with id %u (the database has %zu)",
                        cls, txn->db->schema->nclasses);
    coffer_results *r = NULL;
    st = results_new(txn, cls, NULL, 0, &r);
    if (st == COFFER_OK && (st = compute(r)) != COFFER_OK) {
        coffer_results_free(r);
        return st;
    }
    *out = r;
    return st;
}

COFFER_API coffer_status coffer_results_from_keys(coffer_txn *txn, coffer_class_id cls, const coffer_object_key *keys,
                                                  size_t count, coffer_results **out)
{
    if (!out || (count && !keys))
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "coffer_results_from_keys: %s is NULL", out ? "keys" : "out");
    *out = NULL;
    status st = cf_txn_check(txn, 0);
    if (st != COFFER_OK)
        return st;
    if (cls >= txn->db->schema->nclasses)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "coffer_results_from_keys: no class with id %u (the database has "
                        "%zu)", cls, txn->db->schema->nclasses);
    coffer_results *r = NULL;
    st = results_new(txn, cls, NULL, 0, &r);
    if (st == COFFER_OK)
        st = set_base(r, keys, count);
    if (st == COFFER_OK)
        st = compute(r);
    if (st != COFFER_OK) {
        coffer_results_free(r);
        return st;
    }
    *out = r;
    return COFFER_OK;
}

COFFER_API coffer_status coffer_results_filter(coffer_results *r, const coffer_query *q, coffer_results **out)
{
    if (!out)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "coffer_results_filter: out is NULL");
    *out = NULL;
    status st = check_results(r, 0);
    if (st == COFFER_OK)
        st = check_query(q);
    if (st == COFFER_OK)
        st = check_run(r->txn, q->bq->db);
    if (st != COFFER_OK)
        return st;
    if (q->bq->cls != r->cls)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "coffer_results_filter: the query is for class '%s', the results "
                                                     "hold '%s'", r->txn->db->schema->classes[q->bq->cls].name,
                        r->txn->db->schema->classes[r->cls].name);
    coffer_results *f;
    cf_bquery **chain = malloc((r->nchain + 1) * sizeof *chain);
    if (!chain)
        return no_memory();
    if (r->nchain)
        memcpy(chain, r->chain, r->nchain * sizeof *chain);
    chain[r->nchain] = q->bq;
    st = results_new(r->txn, r->cls, chain, r->nchain + 1, &f);
    free(chain);
    if (st == COFFER_OK && r->base && (st = set_base(f, r->base, r->nbase)) != COFFER_OK)
        coffer_results_free(f);
    if (st != COFFER_OK)
        return st;
    /* Only the new query runs, over the keys already computed. */
    cf_keylist keys = {0};
    keys.k = malloc((r->count ? r->count : 1) * sizeof *keys.k);
    if (!keys.k) {
        coffer_results_free(f);
        return no_memory();
    }
    if (r->count)
        memcpy(keys.k, r->keys, r->count * sizeof *keys.k);
    keys.n = keys.cap = r->count;
    cf_qguard guard;
    cf_qguard_start(&guard, r->txn->db);
    st = compute_step(r->txn, q->bq, &guard, &keys);
    if (st != COFFER_OK) {
        free(keys.k);
        coffer_results_free(f);
        return st;
    }
    f->keys = keys.k;
    f->count = keys.n;
    *out = f;
    return COFFER_OK;
}

COFFER_API coffer_status coffer_results_rerun(const coffer_results *r, coffer_txn *txn, coffer_results **out)
{
    if (!out)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "coffer_results_rerun: out is NULL");
    *out = NULL;
    if (!r || r->magic != CF_RESULTS_MAGIC)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "results handle is NULL or not a result");
    status st = cf_txn_check(txn, 0);
    for (size_t i = 0; st == COFFER_OK && i < r->nchain; i++)
        st = check_run(txn, r->chain[i]->db);
    if (st != COFFER_OK)
        return st;
    if (r->cls >= txn->db->schema->nclasses)
        return cf_error(COFFER_ERR_MISUSE, "the results belong to another database than the transaction");
    coffer_results *n = NULL;
    st = results_new(txn, r->cls, r->chain, r->nchain, &n);
    if (st == COFFER_OK && r->base)
        st = set_base(n, r->base, r->nbase);
    if (st == COFFER_OK)
        st = compute(n);
    if (st != COFFER_OK && n) {
        coffer_results_free(n);
        return st;
    }
    *out = n;
    return st;
}

COFFER_API coffer_status coffer_results_count(coffer_results *r, uint64_t *out)
{
    if (!out)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "coffer_results_count: out is NULL");
    status st = check_handle(r, 0);
    if (st == COFFER_OK && r->pending)
        st = cf_query_index_count(r->txn, r->chain[0], &r->count);
    if (st != COFFER_OK)
        return st;
    *out = r->count;
    return COFFER_OK;
}

static status check_index(const coffer_results *r, uint64_t index, const char *fn)
{
    if (index >= r->count)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "%s: index %llu is out of range (the results hold %zu)", fn,
                        (unsigned long long)index, r->count);
    return COFFER_OK;
}

COFFER_API coffer_status coffer_results_key(coffer_results *r, uint64_t index, coffer_object_key *out)
{
    if (!out)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "coffer_results_key: out is NULL");
    status st = check_results(r, 0);
    if (st == COFFER_OK)
        st = check_index(r, index, "coffer_results_key");
    if (st == COFFER_OK)
        *out = r->keys[index];
    return st;
}

COFFER_API coffer_status coffer_results_copy_keys(coffer_results *r, uint64_t start, size_t count,
                                                  coffer_object_key *out)
{
    if (!out && count)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "coffer_results_copy_keys: out is NULL");
    status st = check_results(r, 0);
    if (st != COFFER_OK)
        return st;
    if (start > r->count || count > r->count - start)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "coffer_results_copy_keys: positions %llu..%llu are out of range "
                        "(the results hold %zu)", (unsigned long long)start, (unsigned long long)start + count, r->count);
    if (count)
        memcpy(out, r->keys + start, count * sizeof *out);
    return COFFER_OK;
}

COFFER_API coffer_status coffer_results_get(coffer_results *r, uint64_t index, coffer_object **out)
{
    if (!out)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "coffer_results_get: out is NULL");
    *out = NULL;
    status st = check_results(r, 0);
    if (st == COFFER_OK)
        st = check_index(r, index, "coffer_results_get");
    if (st != COFFER_OK)
        return st;
    return coffer_object_get(r->txn, r->cls, r->keys[index], out);
}

COFFER_API coffer_status coffer_results_aggregate(coffer_results *r, coffer_property_id prop, int aggregate,
                                                  coffer_value *out)
{
    if (!out)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "coffer_results_aggregate: out is NULL");
    status st = check_results(r, 0);
    if (st != COFFER_OK)
        return st;
    static const cf_qpath_elem_kind kinds[] = {CF_QK_MIN, CF_QK_MAX, CF_QK_SUM, CF_QK_AVG};
    static const char *const names[] = {"minimum", "maximum", "sum", "average"};
    if (aggregate < COFFER_AGGREGATE_MIN || aggregate > COFFER_AGGREGATE_AVG)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "coffer_results_aggregate: %d is not a COFFER_AGGREGATE_* value",
                        aggregate);
    const cf_class *c = &r->txn->db->schema->classes[r->cls];
    if (prop >= c->nprops)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "class '%s' has no property with id %u (it has %zu)", c->name,
                        prop, c->nprops);
    const cf_prop *p = &c->props[prop];
    coffer_type t = p->type;
    int numeric = t == COFFER_TYPE_INT || t == COFFER_TYPE_FLOAT || t == COFFER_TYPE_DOUBLE ||
                  t == COFFER_TYPE_DECIMAL128 || t == COFFER_TYPE_MIXED;
    int minmax = aggregate == COFFER_AGGREGATE_MIN || aggregate == COFFER_AGGREGATE_MAX;
    if (cf_prop_is_collection(p) || !(numeric || (minmax && t == COFFER_TYPE_DATE)))
        return cf_error(COFFER_ERR_TYPE, "cannot take the %s of '%s.%s': it holds %s%s, not numbers%s",
                        names[aggregate], c->name, p->name, cf_prop_is_collection(p) ? "a collection of " : "",
                        coffer_type_name(t), minmax ? " or dates" : "");
    coffer_value *vals = malloc((r->count ? r->count : 1) * sizeof *vals);
    if (!vals)
        return no_memory();
    size_t n = 0;
    for (size_t i = 0; i < r->count && st == COFFER_OK; i++) {
        coffer_object *obj;
        st = coffer_object_get(r->txn, r->cls, r->keys[i], &obj);
        if (st == COFFER_ERR_NOT_FOUND) {
            coffer_clear_error(); /* deleted since */
            st = COFFER_OK;
            continue;
        }
        if (st == COFFER_OK && (st = coffer_object_get_value(obj, prop, &vals[n])) == COFFER_OK) {
            /* Only numbers and dates count, and those are not borrowed. */
            if (vals[n].type == COFFER_TYPE_STRING || vals[n].type == COFFER_TYPE_BINARY)
                vals[n] = coffer_value_null();
            n++;
        }
        coffer_object_release(obj);
    }
    if (st == COFFER_OK)
        st = cf_qfold(kinds[aggregate], t, vals, n, out);
    free(vals);
    return st;
}

COFFER_API coffer_status coffer_results_delete_all(coffer_results *r)
{
    status st = check_results(r, 1);
    if (st != COFFER_OK)
        return st;
    for (size_t i = 0; i < r->count; i++) {
        coffer_object *obj;
        st = coffer_object_get(r->txn, r->cls, r->keys[i], &obj);
        if (st == COFFER_ERR_NOT_FOUND) {
            coffer_clear_error(); /* already gone, e.g. with its parent */
            continue;
        }
        if (st == COFFER_OK)
            st = coffer_object_delete(obj);
        coffer_object_release(obj);
        if (st != COFFER_OK)
            return st;
    }
    return COFFER_OK;
}

/* ---- for observers (query/observed.h) ------------------------------------ */

coffer_status cf_query_share(const coffer_query *q, coffer_query **out)
{
    *out = NULL;
    status st = check_query(q);
    if (st != COFFER_OK)
        return st;
    coffer_query *copy = malloc(sizeof *copy);
    if (!copy)
        return no_memory();
    copy->magic = CF_QUERY_MAGIC;
    copy->bq = q->bq;
    cf_bquery_retain(q->bq);
    *out = copy;
    return COFFER_OK;
}

void cf_query_unshare(coffer_query *q)
{
    if (!q)
        return;
    q->magic = CF_DEAD_MAGIC;
    cf_bquery_free(q->bq);
    free(q);
}

int cf_query_ordered(const coffer_query *q) { return q->bq->npost > 0; }

coffer_status cf_query_keys(coffer_txn *txn, const coffer_query *q, uint64_t **keys, size_t *count)
{
    *keys = NULL;
    *count = 0;
    coffer_results *r;
    status st = coffer_query_run(txn, q, &r);
    if (st != COFFER_OK)
        return st;
    if (r->pending)
        st = compute(r);
    if (st == COFFER_OK && r->count) {
        *keys = malloc(r->count * sizeof **keys);
        if (!*keys)
            st = no_memory();
        else
            memcpy(*keys, r->keys, r->count * sizeof **keys);
        *count = r->count;
    }
    coffer_results_free(r);
    return st;
}
