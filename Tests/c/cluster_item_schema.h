/*
 * cluster_item_schema.h — the one-class schema the tests of file format 5's
 * clusters share: Item(n: indexed int, name: string, blob: optional
 * binary), a cmocka setup that opens it, its class id, and helpers that
 * add an item and check one.
 */
#ifndef COFFER_TESTS_CLUSTER_ITEM_SCHEMA_H
#define COFFER_TESTS_CLUSTER_ITEM_SCHEMA_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_support.h"

static const coffer_property_schema item_props[] = {
    {.name = "n", .type = COFFER_TYPE_INT, .flags = COFFER_PROPERTY_INDEXED},
    {.name = "name", .type = COFFER_TYPE_STRING, .flags = 0},
    {.name = "blob", .type = COFFER_TYPE_BINARY, .flags = COFFER_PROPERTY_OPTIONAL},
};
static const coffer_class_schema schema[] = {{.name = "Item", .properties = item_props, .property_count = 3}};
enum { I_N, I_NAME, I_BLOB };

static int setup(void **state) { return ts_setup_schema(state, schema, 1); }

static coffer_class_id item(const ts_env *env) { return ts_class(env->db, "Item"); }

/* The contents of item n: its name, and a blob of `blob` bytes (none: 0). */
static inline void name_of(int64_t n, char *out, size_t size) { snprintf(out, size, "item %lld", (long long)n); }

static inline coffer_object_key add_item(coffer_txn *w, coffer_class_id cls, int64_t n, size_t blob)
{
    char name[32];
    name_of(n, name, sizeof name);
    uint8_t *bytes = malloc(blob + 1);
    memset(bytes, (int)(n & 0xFF), blob + 1);
    coffer_field f[3] = {ts_field(I_N, coffer_value_int(n)), ts_field(I_NAME, ts_str(name)),
                         ts_field(I_BLOB, blob ? coffer_value_binary(bytes, blob) : coffer_value_null())};
    coffer_object *o = ts_create(w, cls, f, 3);
    coffer_object_key key = coffer_object_key_of(o);
    coffer_object_release(o);
    free(bytes);
    return key;
}

/* Asserts object `key` holds item n with a blob of `blob` bytes. */
static inline void check_item(coffer_txn *r, coffer_class_id cls, coffer_object_key key, int64_t n, size_t blob)
{
    coffer_object *o = NULL;
    assert_ok(coffer_object_get(r, cls, key, &o));
    assert_int_equal(ts_get_int(o, I_N), n);
    char name[32];
    name_of(n, name, sizeof name);
    assert_string_equal(ts_get_string(o, I_NAME, NULL), name);
    if (!blob) {
        assert_true(ts_get_is_null(o, I_BLOB));
    } else {
        size_t size;
        const uint8_t *b = ts_get_binary(o, I_BLOB, &size);
        assert_int_equal(size, blob);
        assert_int_equal(b[0], n & 0xFF);
        assert_int_equal(b[blob - 1], n & 0xFF);
    }
    coffer_object_release(o);
}

#endif
