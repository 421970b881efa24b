/* batch — the object calls of coffer.h's batch entry points: one object
 * packed into a caller's buffer (from its handle, or found by its primary
 * key), many objects created, many objects' fields set, each in one call. Written on the object module's public
 * calls (create, get, set fields, get values), so they do what those do,
 * whatever the storage below. */
#include <inttypes.h>

#include "objects/pack.h"
#include "storage/txn.h"

COFFER_API coffer_status coffer_object_pack(coffer_object *obj, const coffer_property_id *props, size_t count, int flags,
                                            void *buf, size_t capacity, size_t *needed)
{
    if (needed)
        *needed = 0;
    /* Reading no property checks the handle and its transaction. */
    coffer_status st = coffer_object_get_values(obj, NULL, 0, NULL);
    if (st != COFFER_OK)
        return st;
    cf_packer pk;
    st = cf_pack_begin(&pk, "coffer_object_pack", obj->txn, obj->cls, props, count, flags, buf, capacity, 1, needed);
    if (st != COFFER_OK)
        return st;
    st = cf_pack_row(&pk, 0, obj, obj->key, props);
    return cf_pack_end(&pk, "coffer_object_pack", st, needed);
}

static coffer_status pack_by_primary_key(const char *fn, coffer_txn *txn, coffer_class_id cls, const coffer_value *pk,
                                         const coffer_property_id *props, size_t count, int flags, void *buf,
                                         size_t capacity, size_t *needed, coffer_object **out)
{
    if (needed)
        *needed = 0;
    if (out)
        *out = NULL;
    if (!pk || !needed)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "%s: %s is NULL", fn, pk ? "needed" : "pk");
    /* The handle comes from the transaction's pool and goes back to it. */
    coffer_object *obj = NULL;
    coffer_status st = coffer_object_find(txn, cls, pk, &obj);
    if (st != COFFER_OK)
        return cf_error_prefix("%s", fn);
    cf_packer packer;
    st = cf_pack_begin(&packer, fn, txn, cls, props, count, flags, buf, capacity, 1, needed);
    if (st == COFFER_OK)
        st = cf_pack_end(&packer, fn, cf_pack_row(&packer, 0, obj, obj->key, props), needed);
    if (st != COFFER_OK) {
        coffer_object_release(obj);
        return st;
    }
    if (out)
        *out = obj;
    else
        coffer_object_release(obj);
    return COFFER_OK;
}

COFFER_API coffer_status coffer_object_pack_by_primary_key(coffer_txn *txn, coffer_class_id cls,
                                                           const coffer_value *pk, const coffer_property_id *props,
                                                           size_t count, int flags, void *buf, size_t capacity,
                                                           size_t *needed, coffer_object **out)
{
    return pack_by_primary_key("coffer_object_pack_by_primary_key", txn, cls, pk, props, count, flags, buf, capacity,
                               needed, out);
}

COFFER_API coffer_status coffer_pack_request_run(coffer_txn *txn, coffer_pack_request *request)
{
    static const char fn[] = "coffer_pack_request_run";
    if (!request)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "%s: request is NULL", fn);
    return pack_by_primary_key(fn, txn, request->cls, &request->key, request->props, request->count, request->flags,
                               request->buf, request->capacity, &request->needed, NULL);
}

/* The checks common to the writes of many objects. */
static coffer_status check_many(coffer_txn *txn, const char *fn, const void *fields, size_t fields_per_object,
                                size_t object_count, size_t *done)
{
    if (!done)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "%s: done is NULL", fn);
    *done = 0;
    if (!fields && fields_per_object && object_count)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "%s: fields is NULL but %zu objects of %zu fields are given", fn,
                        object_count, fields_per_object);
    if (fields_per_object && object_count > SIZE_MAX / fields_per_object)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "%s: %zu objects of %zu fields overflow the address space", fn,
                        object_count, fields_per_object);
    return cf_txn_check(txn, 1);
}

COFFER_API coffer_status coffer_objects_create(coffer_txn *txn, coffer_class_id cls, const coffer_field *fields,
                                               size_t fields_per_object, size_t object_count, int update_policy,
                                               coffer_object_key *keys, size_t *done)
{
    coffer_status st = check_many(txn, "coffer_objects_create", fields, fields_per_object, object_count, done);
    for (size_t i = 0; st == COFFER_OK && i < object_count; i++) {
        coffer_object *obj = NULL;
        st = coffer_object_create(txn, cls, fields + i * fields_per_object, fields_per_object, update_policy,
                                  keys ? &obj : NULL);
        if (st != COFFER_OK)
            return cf_error_prefix("coffer_objects_create: object %zu of %zu", i, object_count);
        if (keys) {
            keys[i] = coffer_object_key_of(obj);
            coffer_object_release(obj);
        }
        *done = i + 1;
    }
    return st;
}

COFFER_API coffer_status coffer_objects_set_fields(coffer_txn *txn, coffer_class_id cls, const coffer_object_key *keys,
                                                   size_t object_count, const coffer_field *fields,
                                                   size_t fields_per_object, size_t *done)
{
    coffer_status st = check_many(txn, "coffer_objects_set_fields", fields, fields_per_object, object_count, done);
    if (st == COFFER_OK && !keys && object_count)
        st = cf_error(COFFER_ERR_INVALID_ARGUMENT, "coffer_objects_set_fields: keys is NULL but object_count is %zu",
                      object_count);
    for (size_t i = 0; st == COFFER_OK && i < object_count; i++) {
        coffer_object *obj = NULL;
        st = coffer_object_get(txn, cls, keys[i], &obj);
        if (st == COFFER_OK)
            st = coffer_object_set_fields(obj, fields + i * fields_per_object, fields_per_object);
        coffer_object_release(obj);
        if (st != COFFER_OK)
            return cf_error_prefix("coffer_objects_set_fields: object %zu of %zu (key %" PRIu64 ")", i, object_count,
                                   keys[i]);
        *done = i + 1;
    }
    return st;
}
