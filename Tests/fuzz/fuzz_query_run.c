/* fuzz_query_run — any text, compiled for a class of a small database with
 * links, collections, maps, mixed values and backlinks, and run when it
 * compiles: the binder and the evaluator must reject or answer every input,
 * never crash, leak or read out of bounds. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "coffer.h"

static const coffer_property_schema person_props[] = {
    {.name = "id", .type = COFFER_TYPE_INT, .flags = COFFER_PROPERTY_PRIMARY_KEY},
    {.name = "name", .type = COFFER_TYPE_STRING, .flags = COFFER_PROPERTY_INDEXED},
    {.name = "age", .type = COFFER_TYPE_INT, .flags = COFFER_PROPERTY_INDEXED},
    {.name = "score", .type = COFFER_TYPE_DOUBLE, .flags = COFFER_PROPERTY_OPTIONAL},
    {.name = "born", .type = COFFER_TYPE_DATE, .flags = COFFER_PROPERTY_OPTIONAL},
    {.name = "blob", .type = COFFER_TYPE_BINARY},
    {.name = "tags", .type = COFFER_TYPE_STRING, .collection = COFFER_COLLECTION_LIST},
    {.name = "nums", .type = COFFER_TYPE_INT, .collection = COFFER_COLLECTION_SET},
    {.name = "attrs", .type = COFFER_TYPE_MIXED, .flags = COFFER_PROPERTY_OPTIONAL, .collection = COFFER_COLLECTION_MAP},
    {.name = "mixed", .type = COFFER_TYPE_MIXED, .flags = COFFER_PROPERTY_OPTIONAL},
    {.name = "dog", .type = COFFER_TYPE_LINK, .flags = COFFER_PROPERTY_OPTIONAL, .object_class = "Dog"},
    {.name = "friends", .type = COFFER_TYPE_LINK, .collection = COFFER_COLLECTION_LIST, .object_class = "Person"},
};
static const coffer_property_schema dog_props[] = {
    {.name = "name", .type = COFFER_TYPE_STRING},
    {.name = "owners", .type = COFFER_TYPE_LINKING_OBJECTS, .object_class = "Person", .link_origin_property = "dog"},
};
static const coffer_class_schema schema[] = {
    {.name = "Person", .properties = person_props, .property_count = sizeof person_props / sizeof person_props[0]},
    {.name = "Dog", .properties = dog_props, .property_count = 2},
};

static coffer_db *db;

static void fail(const char *what)
{
    fprintf(stderr, "fuzz_query_run: %s: %s\n", what, coffer_last_error());
    abort();
}

static void fill(void)
{
    coffer_config *config;
    if (coffer_config_new(&config) || coffer_config_set_in_memory_identifier(config, "fuzz_query_run") ||
        coffer_config_set_schema(config, schema, 2, 1) || coffer_open(config, &db))
        fail("opening");
    coffer_config_free(config);
    coffer_txn *txn;
    if (coffer_txn_begin(db, COFFER_TXN_WRITE, &txn))
        abort();
    coffer_field dog[] = {{0, coffer_value_string("Rex", SIZE_MAX)}};
    coffer_object *rex;
    if (coffer_object_create(txn, 1, dog, 1, COFFER_UPDATE_ERROR, &rex))
        fail("creating a dog");
    coffer_object_key first = 0;
    for (int i = 0; i < 6; i++) {
        coffer_value tags[] = {coffer_value_string(i % 2 ? "Red" : "blüe", SIZE_MAX), coffer_value_string("x", 1)};
        coffer_value nums[] = {coffer_value_int(i), coffer_value_int(-i - 1)};
        coffer_map_entry inner[] = {{{"k", 1}, coffer_value_double(i * 0.5)}};
        coffer_value list[] = {coffer_value_int(i), coffer_value_map(inner, 1)};
        coffer_map_entry attrs[] = {{{"a", 1}, coffer_value_int(i)}, {{"b", 1}, coffer_value_list(list, 2)}};
        coffer_value friends[] = {coffer_value_link(0, first)};
        coffer_field f[] = {
            {0, coffer_value_int(i)},
            {1, coffer_value_string(i % 3 ? "Ann" : "Éva", SIZE_MAX)},
            {2, coffer_value_int(20 + i)},
            {3, i % 2 ? coffer_value_double(i / 3.0) : coffer_value_null()},
            {4, coffer_value_date(i * 1000, 0)},
            {5, coffer_value_binary("\x01\xff\x00", 3)},
            {6, coffer_value_list(tags, (size_t)(i % 3))},
            {7, coffer_value_list(nums, 2)},
            {8, coffer_value_map(attrs, (size_t)(i % 3))},
            {9, i % 2 ? coffer_value_list(list, 2) : coffer_value_string("m", 1)},
            {10, i % 2 ? coffer_value_object(rex) : coffer_value_null()},
            {11, coffer_value_list(friends, i ? 1 : 0)},
        };
        coffer_object *person;
        if (coffer_object_create(txn, 0, f, sizeof f / sizeof f[0], COFFER_UPDATE_ERROR, &person))
            fail("creating a person");
        if (i == 0)
            first = coffer_object_key_of(person);
        coffer_object_release(person);
    }
    if (coffer_txn_commit(txn))
        abort();
    coffer_txn_free(txn);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!db)
        fill();
    coffer_value items[] = {coffer_value_int(1), coffer_value_int(2)};
    coffer_value args[] = {coffer_value_int(21), coffer_value_string("a", 1), coffer_value_list(items, 2),
                           coffer_value_link(1, 1), coffer_value_null()};
    coffer_class_id cls = size && (data[0] & 1) ? 1 : 0;
    coffer_query *q;
    if (coffer_query_compile(db, cls, (const char *)data, size, args, 5, &q) != COFFER_OK)
        return 0;
    (void)coffer_query_description(q);
    /* A query may be built to run for ages (SUBQUERYs nested deep, each
     * reading every outer variable): the timeout stops it like any caller. */
    coffer_query_set_timeout(q, 2000);
    coffer_txn *txn;
    coffer_results *r;
    if (coffer_txn_begin(db, COFFER_TXN_READ, &txn) == COFFER_OK) {
        if (coffer_query_run(txn, q, &r) == COFFER_OK) {
            uint64_t n;
            coffer_value v;
            coffer_results_count(r, &n);
            coffer_results_aggregate(r, 0, COFFER_AGGREGATE_SUM, &v);
            coffer_results *f;
            if (coffer_results_filter(r, q, &f) == COFFER_OK)
                coffer_results_free(f);
            coffer_results_free(r);
        }
        coffer_txn_free(txn);
    }
    coffer_query_free(q);
    return 0;
}
