/* test_object_get_values.c — coffer_object_get_values(): several properties
 * read in one call give exactly what coffer_object_get_value() gives one by
 * one (scalars, links, collections, mixed values, linking objects), and every
 * error returns nothing. Every test runs on plain, encrypted and in-memory
 * databases. */
#define _GNU_SOURCE
#include "test_support.h"

#include <stdio.h>
#include <string.h>

#define OPT COFFER_PROPERTY_OPTIONAL

enum { N_NAME = 0, N_NEXT, N_TAGS, N_ANY, N_PREVIOUS, N_COUNT };

static const coffer_property_schema node_props[N_COUNT] = {
    {.name = "name", .type = COFFER_TYPE_STRING},
    {.name = "next", .type = COFFER_TYPE_LINK, .flags = OPT, .object_class = "Node"},
    {.name = "tags", .type = COFFER_TYPE_STRING, .collection = COFFER_COLLECTION_LIST},
    {.name = "any", .type = COFFER_TYPE_MIXED, .flags = OPT},
    {.name = "previous", .type = COFFER_TYPE_LINKING_OBJECTS, .object_class = "Node", .link_origin_property = "next"},
};
static const coffer_class_schema node_schema[] = {
    {.name = "Node", .properties = node_props, .property_count = N_COUNT},
};

static int setup_nodes(void **state) { return ts_setup_schema(state, node_schema, 1); }

/* Fills every value with a non-null pattern, so that a test sees whether
 * the call wrote them. */
static void scribble(coffer_value *out, size_t n)
{
    for (size_t i = 0; i < n; i++)
        out[i] = coffer_value_int(0x5a5a5a5a);
}

static void assert_all_null(const coffer_value *out, size_t n)
{
    for (size_t i = 0; i < n; i++)
        assert_int_equal(out[i].type, COFFER_TYPE_NULL);
}

/* Each out[i] equals what coffer_object_get_value gives for props[i]. */
static void assert_same_as_one_by_one(coffer_object *obj, const coffer_property_id *props, const coffer_value *out,
                                      size_t n)
{
    for (size_t i = 0; i < n; i++) {
        coffer_value one;
        assert_ok(coffer_object_get_value(obj, props[i], &one));
        if (!ts_value_equal(&one, &out[i])) {
            char a[128], b[128];
            fail_msg("position %zu (property %u): batch read %s, one by one %s", i, props[i],
                     ts_value_describe(&out[i], a, sizeof a), ts_value_describe(&one, b, sizeof b));
        }
    }
}

/* Every AllTypes property, set and null (optional ones) or default. */
/* A new Person, read back as an object handle of `txn`. */
static coffer_object *person_object(ts_env *env, coffer_txn *txn, int64_t id, const char *name)
{
    coffer_object_key key = ts_add_person(txn, env->person, id, name);
    coffer_object *obj = NULL;
    assert_ok(coffer_object_get(txn, env->person, key, &obj));
    return obj;
}

TS_ENV_TEST(test_all_scalar_types)
{
    coffer_txn *txn = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_field f[] = {
        ts_field(AT_BOOL, coffer_value_bool(true)),        ts_field(AT_INT, coffer_value_int(-1234567890123ll)),
        ts_field(AT_FLOAT, coffer_value_float(3.25f)),     ts_field(AT_DOUBLE, coffer_value_double(-2.5e300)),
        ts_field(AT_STRING, ts_str("h\xc3\xa9llo")),       ts_field(AT_BINARY, coffer_value_binary("\0\1\0\2", 4)),
        ts_field(AT_DATE, coffer_value_date(-5, -250)),    ts_field(AT_OPT_INT, coffer_value_int(7)),
        ts_field(AT_OPT_STRING, ts_str("optional text")),
    };
    coffer_object *obj = NULL;
    assert_ok(coffer_object_create(txn, env->all_types, f, sizeof f / sizeof f[0], COFFER_UPDATE_ERROR, &obj));
    coffer_object_key key = coffer_object_key_of(obj);
    ts_commit(txn);

    txn = ts_begin(env->db, COFFER_TXN_READ);
    assert_ok(coffer_object_get(txn, env->all_types, key, &obj));
    coffer_property_id props[AT_COUNT];
    coffer_value out[AT_COUNT];
    for (coffer_property_id p = 0; p < AT_COUNT; p++)
        props[p] = AT_COUNT - 1 - p; /* any order */
    scribble(out, AT_COUNT);
    assert_ok(coffer_object_get_values(obj, props, AT_COUNT, out));
    assert_same_as_one_by_one(obj, props, out, AT_COUNT);
    assert_int_equal(out[AT_COUNT - 1 - AT_INT].u.integer, -1234567890123ll);
    assert_int_equal(out[AT_COUNT - 1 - AT_OPT_BOOL].type, COFFER_TYPE_NULL);
    const coffer_value *s = &out[AT_COUNT - 1 - AT_STRING];
    assert_int_equal(s->type, COFFER_TYPE_STRING);
    assert_int_equal(s->u.string.size, 6);
    assert_memory_equal(s->u.string.data, "h\xc3\xa9llo", 6);
    coffer_txn_free(txn);
}

/* A property may be asked for more than once; count 0 reads nothing. */
TS_ENV_TEST(test_repeats_and_empty)
{
    coffer_txn *txn = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_object *obj = person_object(env, txn, 42, "Ada");
    const coffer_property_id props[] = {PERSON_NAME, PERSON_ID, PERSON_NAME, PERSON_NICKNAME};
    coffer_value out[4];
    assert_ok(coffer_object_get_values(obj, props, 4, out));
    assert_same_as_one_by_one(obj, props, out, 4);
    assert_int_equal(out[1].u.integer, 42);
    assert_memory_equal(out[0].u.string.data, "Ada", 3);
    assert_memory_equal(out[2].u.string.data, "Ada", 3);
    assert_int_equal(out[3].type, COFFER_TYPE_NULL);

    assert_ok(coffer_object_get_values(obj, NULL, 0, NULL));
    scribble(out, 1);
    assert_ok(coffer_object_get_values(obj, props, 0, out));
    assert_int_equal(out[0].type, COFFER_TYPE_INT); /* untouched */
    ts_commit(txn);
}

/* Links, lists, mixed values and linking objects read as get_value reads them. */
TS_ENV_TEST(test_graph_properties)
{
    coffer_class_id node = ts_class(env->db, "Node");
    coffer_txn *txn = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_object *tail = NULL, *head = NULL;
    coffer_field tf[] = {ts_field(N_NAME, ts_str("tail")), ts_field(N_ANY, ts_str("mixed text"))};
    assert_ok(coffer_object_create(txn, node, tf, 2, COFFER_UPDATE_ERROR, &tail));
    coffer_value tags[] = {ts_str("a"), ts_str("b"), ts_str("c")};
    coffer_value link = coffer_value_link(node, coffer_object_key_of(tail));
    coffer_field hf[] = {ts_field(N_NAME, ts_str("head")), ts_field(N_NEXT, link),
                         ts_field(N_TAGS, coffer_value_list(tags, 3)), ts_field(N_ANY, coffer_value_int(5))};
    assert_ok(coffer_object_create(txn, node, hf, 4, COFFER_UPDATE_ERROR, &head));
    ts_commit(txn);

    txn = ts_begin(env->db, COFFER_TXN_READ);
    coffer_iter *it = NULL;
    assert_ok(coffer_class_iterate(txn, node, &it));
    const coffer_property_id props[] = {N_NAME, N_NEXT, N_TAGS, N_ANY, N_PREVIOUS};
    coffer_object *obj;
    int seen = 0;
    while (ts_next(it, &obj)) {
        coffer_value out[N_COUNT];
        assert_ok(coffer_object_get_values(obj, props, N_COUNT, out));
        assert_same_as_one_by_one(obj, props, out, N_COUNT);
        if (seen == 0) { /* tail: no next, no tags, one previous */
            assert_int_equal(out[N_NEXT].type, COFFER_TYPE_NULL);
            assert_int_equal(out[N_TAGS].type, COFFER_TYPE_LIST);
            assert_int_equal(out[N_TAGS].u.list.count, 0);
            assert_int_equal(out[N_ANY].type, COFFER_TYPE_STRING);
            assert_int_equal(out[N_PREVIOUS].type, COFFER_TYPE_LIST);
            assert_int_equal(out[N_PREVIOUS].u.list.count, 1);
        } else {
            assert_int_equal(out[N_NEXT].type, COFFER_TYPE_LINK);
            assert_int_equal(out[N_NEXT].u.link.class_id, node);
            assert_int_equal(out[N_TAGS].u.list.count, 3);
            assert_int_equal(out[N_ANY].u.integer, 5);
            assert_int_equal(out[N_PREVIOUS].u.list.count, 0);
        }
        seen++;
    }
    coffer_iter_free(it);
    assert_int_equal(seen, 2);
    coffer_txn_free(txn);
}

/* Bad arguments: nothing is read and every value is null. */
TS_ENV_TEST(test_invalid_arguments)
{
    coffer_txn *txn = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_object *obj = person_object(env, txn, 1, "Bo");
    coffer_value out[3];
    const coffer_property_id good[] = {PERSON_ID, PERSON_NAME, PERSON_AGE};

    scribble(out, 3);
    assert_status(coffer_object_get_values(NULL, good, 3, out), COFFER_ERR_INVALID_ARGUMENT);
    assert_all_null(out, 3);

    assert_status(coffer_object_get_values(obj, NULL, 3, out), COFFER_ERR_INVALID_ARGUMENT);
    assert_error_contains("props is NULL");
    assert_all_null(out, 3);
    assert_status(coffer_object_get_values(obj, good, 3, NULL), COFFER_ERR_INVALID_ARGUMENT);
    assert_error_contains("out is NULL");

    /* a bad id anywhere: named with its position, and nothing read */
    const coffer_property_id bad[] = {PERSON_ID, PERSON_NAME, PERSON_COUNT};
    scribble(out, 3);
    assert_status(coffer_object_get_values(obj, bad, 3, out), COFFER_ERR_INVALID_ARGUMENT);
    assert_error_contains("class 'Person' has no property with id 4");
    assert_error_contains("at position 2");
    assert_all_null(out, 3);

    /* a released handle */
    coffer_object_release(obj);
    scribble(out, 3);
    assert_status(coffer_object_get_values(obj, good, 3, out), COFFER_ERR_INVALID_ARGUMENT);
    assert_error_contains("released");
    assert_all_null(out, 3);
    ts_commit(txn);
}

/* A deleted object and an ended transaction: errors, nothing read. */
TS_ENV_TEST(test_deleted_and_ended)
{
    coffer_txn *txn = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_object_key k1 = ts_add_person(txn, env->person, 1, "One");
    coffer_object_key k2 = ts_add_person(txn, env->person, 2, "Two");
    coffer_object *gone = NULL, *other = NULL;
    assert_ok(coffer_object_get(txn, env->person, k1, &gone));
    assert_ok(coffer_object_get(txn, env->person, k1, &other));
    assert_ok(coffer_object_delete(other));
    const coffer_property_id props[] = {PERSON_ID, PERSON_NAME};
    coffer_value out[2];
    scribble(out, 2);
    assert_status(coffer_object_get_values(gone, props, 2, out), COFFER_ERR_NOT_FOUND);
    assert_all_null(out, 2);
    coffer_object_release(gone);
    coffer_object_release(other);
    ts_commit(txn);

    txn = ts_begin(env->db, COFFER_TXN_READ);
    coffer_object *obj = NULL;
    assert_ok(coffer_object_get(txn, env->person, k2, &obj));
    assert_ok(coffer_object_get_values(obj, props, 2, out));
    assert_int_equal(out[0].u.integer, 2);
    assert_ok(coffer_txn_abort(txn));
    scribble(out, 2);
    assert_status(coffer_object_get_values(obj, props, 2, out), COFFER_ERR_MISUSE);
    assert_all_null(out, 2);
    coffer_txn_free(txn);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TS_TEST_ALL_MODES(test_all_scalar_types),
        TS_TEST_ALL_MODES(test_repeats_and_empty),
        TS_TEST_ALL_MODES_SETUP(test_graph_properties, setup_nodes),
        TS_TEST_ALL_MODES(test_invalid_arguments),
        TS_TEST_ALL_MODES(test_deleted_and_ended),
    };
    return cmocka_run_group_tests_name("object_get_values", tests, NULL, NULL);
}
