/* page — the results calls of coffer.h's batch entry points: a page of
 * results (a range of positions) packed into a caller's buffer, and one
 * property set over every object of results, each in one call. Written on
 * the object module's public calls and the results' keys, never on record
 * bytes. */
#include <inttypes.h>

#include "objects/pack.h"
#include "storage/txn.h"

/* Checks `results` and computes keys put off until needed (copying no key
 * does both), then checks positions start .. start+count-1. */
static coffer_status check_range(coffer_results *r, uint64_t start, size_t count, const char *fn)
{
    coffer_status st = coffer_results_copy_keys(r, 0, 0, NULL);
    if (st != COFFER_OK)
        return st;
    if (start > r->count || count > r->count - start)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "%s: positions %" PRIu64 "..%" PRIu64 " are out of range (the "
                        "results hold %zu)", fn, start, start + count, r->count);
    return COFFER_OK;
}

COFFER_API coffer_status coffer_results_pack(coffer_results *r, uint64_t start, size_t row_count,
                                             const coffer_property_id *props, size_t count, int flags, void *buf,
                                             size_t capacity, size_t *needed)
{
    static const char fn[] = "coffer_results_pack";
    if (needed)
        *needed = 0;
    coffer_status st = check_range(r, start, row_count, fn);
    if (st != COFFER_OK)
        return st;
    cf_packer pk;
    st = cf_pack_begin(&pk, fn, r->txn, r->cls, props, count, flags, buf, capacity, row_count, needed);
    if (st != COFFER_OK)
        return st;
    for (size_t i = 0; st == COFFER_OK && i < row_count; i++) {
        coffer_object_key key = r->keys[start + i];
        coffer_object *obj = NULL;
        st = coffer_object_get(r->txn, r->cls, key, &obj);
        if (st == COFFER_ERR_NOT_FOUND) {
            coffer_clear_error(); /* deleted since the results were computed */
            st = cf_pack_row(&pk, i, NULL, key, props);
            continue;
        }
        if (st == COFFER_OK)
            st = cf_pack_row(&pk, i, obj, key, props);
        coffer_object_release(obj);
    }
    return cf_pack_end(&pk, fn, st, needed);
}

COFFER_API coffer_status coffer_results_set_value(coffer_results *r, coffer_property_id prop, const coffer_value *value)
{
    static const char fn[] = "coffer_results_set_value";
    if (!value)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "%s: value is NULL", fn);
    coffer_status st = check_range(r, 0, 0, fn);
    if (st == COFFER_OK)
        st = cf_txn_check(r->txn, 1);
    if (st != COFFER_OK)
        return st;
    const cf_class *c = &r->txn->db->schema->classes[r->cls];
    if (prop >= c->nprops)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "%s: class '%s' has no property with id %u (it has %zu)", fn,
                        c->name, prop, c->nprops);
    const cf_prop *p = &c->props[prop];
    if (c->pk == (int)prop)
        return cf_error(COFFER_ERR_IMMUTABLE, "%s: '%s.%s' is the primary key, which cannot be changed", fn, c->name,
                        p->name);
    coffer_field field = {prop, *value};
    for (size_t i = 0; i < r->count; i++) {
        coffer_object *obj = NULL;
        st = coffer_object_get(r->txn, r->cls, r->keys[i], &obj);
        if (st == COFFER_ERR_NOT_FOUND) {
            coffer_clear_error(); /* deleted since the results were computed */
            continue;
        }
        if (st == COFFER_OK)
            st = coffer_object_set_fields(obj, &field, 1);
        coffer_object_release(obj);
        if (st != COFFER_OK)
            return st;
    }
    return COFFER_OK;
}
