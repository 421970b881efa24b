/*
 * cluster_item_schema.h — the one-class schema the tests of file format 5's
 * clusters share: Item(n: indexed int, name: string, blob: optional
 * binary), a cmocka setup that opens it, and its class id.
 */
#ifndef COFFER_TESTS_CLUSTER_ITEM_SCHEMA_H
#define COFFER_TESTS_CLUSTER_ITEM_SCHEMA_H

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

#endif
