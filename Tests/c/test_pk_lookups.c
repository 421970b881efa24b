/* test_pk_lookups.c — lookups by primary key through a transaction's map of
 * the primary-key entries (storage/pk_map.h), compared with a model.
 *
 * For each key type (int, an optional int with a null key and INT64_MIN,
 * string of short, 7-byte, medium and long (hashed) keys, object id, uuid)
 * and each storage mode: keys created in order, looked up in order and
 * shuffled, present and absent; deletes, re-creates under the same key
 * (another object key), upserts, updates; across a commit, in a read
 * transaction, after an aborted transaction, after a class clear. Every
 * transaction that looks up more than a sixteenth of the class must hold a
 * map (cf_pk_map_active), so the answers checked are the map's; a
 * transaction with few lookups must not build one. */
#define _GNU_SOURCE
#include "test_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "storage/pk_map.h"

#define KEYS 700   /* created */
#define ABSENT 60  /* never created: indexes KEYS .. KEYS + ABSENT - 1 */
#define ALL (KEYS + ABSENT)

enum { P_PK = 0, P_VALUE, P_LABEL };
enum { T_INT, T_OPT_INT, T_STRING, T_OID, T_UUID, T_COUNT };

#define KEY_CLASS(cname, ptype, extra)                                                   \
    static const coffer_property_schema cname##_props[] = {                             \
        {.name = "k", .type = ptype, .flags = COFFER_PROPERTY_PRIMARY_KEY | (extra)},   \
        {.name = "value", .type = COFFER_TYPE_INT},                                     \
        {.name = "label", .type = COFFER_TYPE_STRING, .flags = COFFER_PROPERTY_INDEXED}, \
    };

KEY_CLASS(IntK, COFFER_TYPE_INT, 0)
KEY_CLASS(OptIntK, COFFER_TYPE_INT, COFFER_PROPERTY_OPTIONAL)
KEY_CLASS(StrK, COFFER_TYPE_STRING, 0)
KEY_CLASS(OidK, COFFER_TYPE_OBJECT_ID, 0)
KEY_CLASS(UuidK, COFFER_TYPE_UUID, 0)

static const coffer_class_schema schema[] = {
    {.name = "IntK", .properties = IntK_props, .property_count = 3},
    {.name = "OptIntK", .properties = OptIntK_props, .property_count = 3},
    {.name = "StrK", .properties = StrK_props, .property_count = 3},
    {.name = "OidK", .properties = OidK_props, .property_count = 3},
    {.name = "UuidK", .properties = UuidK_props, .property_count = 3},
};

static int setup(void **state) { return ts_setup_schema(state, schema, sizeof schema / sizeof schema[0]); }

/* The key of index i of key type t; `buf` holds a string's or id's bytes. */
static coffer_value key_of(int t, int i, char *buf)
{
    switch (t) {
    case T_INT: return coffer_value_int((int64_t)i * 7919 - 900000); /* negative and positive */
    case T_OPT_INT:
        if (i == 0)
            return coffer_value_null();
        if (i == 1)
            return coffer_value_int(INT64_MIN); /* encoded as zero: a hashed word */
        if (i == 2)
            return coffer_value_int(INT64_MAX);
        return coffer_value_int((int64_t)i * 13 - 4000);
    case T_STRING:
        switch (i % 4) {
        case 0: snprintf(buf, 512, "k%d", i); break;
        case 1: snprintf(buf, 512, "s%06d", i); break; /* 7 bytes: an 8-byte word with its NUL */
        case 2: snprintf(buf, 512, "medium key number %d of the string class", i); break;
        default: /* longer than the index keeps: prefix + hash, all with one prefix */
            memset(buf, 'x', 450);
            snprintf(buf + 450, 62, "#%d", i);
        }
        return coffer_value_string(buf, SIZE_MAX);
    case T_OID:
        memset(buf, 0x5a, 12);
        buf[8] = (char)(i >> 24), buf[9] = (char)(i >> 16), buf[10] = (char)(i >> 8), buf[11] = (char)i;
        return coffer_value_object_id((const uint8_t *)buf);
    default:
        for (int j = 0; j < 16; j++)
            buf[j] = (char)(i * 31 + j * 7);
        buf[0] = (char)(i >> 8), buf[1] = (char)i;
        return coffer_value_uuid((const uint8_t *)buf);
    }
}

typedef struct model {
    int present[ALL];
    int64_t value[ALL];
} model;

/* Looks up index i and compares with the model. */
static void check_one(coffer_txn *txn, coffer_class_id cls, int t, const model *m, int i)
{
    char buf[512];
    coffer_value k = key_of(t, i, buf);
    coffer_object *obj = NULL;
    if (!m->present[i]) {
        assert_status(coffer_object_find(txn, cls, &k, &obj), COFFER_ERR_NOT_FOUND);
        return;
    }
    assert_ok(coffer_object_find(txn, cls, &k, &obj));
    coffer_value got;
    assert_ok(coffer_object_get_value(obj, P_PK, &got));
    assert_true(ts_value_equal(&got, &k));
    assert_ok(coffer_object_get_value(obj, P_VALUE, &got));
    assert_int_equal(got.type, COFFER_TYPE_INT);
    assert_int_equal(got.u.integer, m->value[i]);
    coffer_object_release(obj);
}

/* Looks up every index, in order or in a shuffled order. */
static void check_all(coffer_txn *txn, coffer_class_id cls, int t, const model *m, int shuffled)
{
    static int order[ALL];
    for (int i = 0; i < ALL; i++)
        order[i] = i;
    for (int i = ALL - 1; shuffled && i > 0; i--) {
        int j = (int)((unsigned)(i * 2654435761u + 17u) % (unsigned)(i + 1));
        int tmp = order[i];
        order[i] = order[j];
        order[j] = tmp;
    }
    for (int i = 0; i < ALL; i++)
        check_one(txn, cls, t, m, order[i]);
}

static void create(coffer_txn *txn, coffer_class_id cls, int t, model *m, int i, int64_t value, int policy)
{
    char buf[512], label[32];
    snprintf(label, sizeof label, "l%d", i % 50);
    coffer_field f[3] = {{P_PK, key_of(t, i, buf)}, {P_VALUE, coffer_value_int(value)}, {P_LABEL, ts_str(label)}};
    coffer_object *obj = NULL;
    assert_ok(coffer_object_create(txn, cls, f, 3, policy, &obj));
    coffer_object_release(obj);
    m->present[i] = 1;
    m->value[i] = value;
}

static void delete_one(coffer_txn *txn, coffer_class_id cls, int t, model *m, int i)
{
    char buf[512];
    coffer_value k = key_of(t, i, buf);
    coffer_object *obj = NULL;
    assert_ok(coffer_object_find(txn, cls, &k, &obj));
    assert_ok(coffer_object_delete(obj));
    coffer_object_release(obj);
    m->present[i] = 0;
}

static void set_value(coffer_txn *txn, coffer_class_id cls, int t, model *m, int i, int64_t value)
{
    char buf[512];
    coffer_value k = key_of(t, i, buf);
    coffer_object *obj = NULL;
    assert_ok(coffer_object_find(txn, cls, &k, &obj));
    coffer_field f = {P_VALUE, coffer_value_int(value)};
    assert_ok(coffer_object_set_fields(obj, &f, 1));
    coffer_object_release(obj);
    m->value[i] = value;
}

static void run_type(ts_env *env, int t)
{
    coffer_class_id cls = ts_class(env->db, schema[t].name);
    model *m = calloc(1, sizeof *m);
    assert_non_null(m);

    /* A few lookups build no map. */
    coffer_txn *txn = ts_begin(env->db, COFFER_TXN_WRITE);
    for (int i = 0; i < 5; i++)
        check_one(txn, cls, t, m, i);
    assert_false(cf_pk_map_active(txn, cls));

    /* Creates in order (each checks its key first), then lookups. */
    for (int i = 0; i < KEYS; i++)
        create(txn, cls, t, m, i, (int64_t)i * 3, COFFER_UPDATE_ERROR);
    assert_true(cf_pk_map_active(txn, cls));
    check_all(txn, cls, t, m, 0);
    check_all(txn, cls, t, m, 1);

    /* A key taken is refused, through the map. */
    char buf[512], label[8] = "dup";
    coffer_field dup[3] = {{P_PK, key_of(t, 10, buf)}, {P_VALUE, coffer_value_int(1)}, {P_LABEL, ts_str(label)}};
    coffer_object *obj = NULL;
    assert_status(coffer_object_create(txn, cls, dup, 3, COFFER_UPDATE_ERROR, &obj), COFFER_ERR_PRIMARY_KEY_EXISTS);

    /* Deletes, re-creates under the same keys, upserts, updates. */
    for (int i = 0; i < KEYS; i += 3)
        delete_one(txn, cls, t, m, i);
    check_all(txn, cls, t, m, 1);
    for (int i = 0; i < KEYS; i += 6)
        create(txn, cls, t, m, i, (int64_t)i * 5, COFFER_UPDATE_ERROR);
    for (int i = 1; i < ALL; i += 5)
        create(txn, cls, t, m, i, (int64_t)i * 11, COFFER_UPDATE_ALL);
    for (int i = 2; i < KEYS; i += 7)
        if (m->present[i])
            set_value(txn, cls, t, m, i, -(int64_t)i);
    check_all(txn, cls, t, m, 1);
    ts_commit(txn);

    /* A new transaction: read, then write; its map is its own. */
    txn = ts_begin(env->db, COFFER_TXN_READ);
    check_all(txn, cls, t, m, 1);
    assert_true(cf_pk_map_active(txn, cls));
    coffer_txn_free(txn);

    /* An aborted transaction changes nothing. */
    model *before = malloc(sizeof *before);
    assert_non_null(before);
    memcpy(before, m, sizeof *m);
    txn = ts_begin(env->db, COFFER_TXN_WRITE);
    check_all(txn, cls, t, m, 0);
    for (int i = 0; i < KEYS; i += 4)
        if (m->present[i])
            delete_one(txn, cls, t, m, i);
    for (int i = KEYS; i < ALL; i += 2)
        if (!m->present[i])
            create(txn, cls, t, m, i, 77, COFFER_UPDATE_ERROR);
    check_all(txn, cls, t, m, 1);
    assert_ok(coffer_txn_abort(txn));
    coffer_txn_free(txn);
    memcpy(m, before, sizeof *m);
    free(before);
    txn = ts_begin(env->db, COFFER_TXN_WRITE);
    check_all(txn, cls, t, m, 1);

    /* A class cleared while the map is held, then written again. */
    assert_true(cf_pk_map_active(txn, cls));
    assert_ok(coffer_class_clear(txn, cls));
    memset(m->present, 0, sizeof m->present);
    check_all(txn, cls, t, m, 0);
    for (int i = ALL - 1; i >= KEYS - 100; i--)
        create(txn, cls, t, m, i, (int64_t)i + 1, COFFER_UPDATE_ERROR);
    check_all(txn, cls, t, m, 1);
    ts_commit(txn);
    txn = ts_begin(env->db, COFFER_TXN_READ);
    check_all(txn, cls, t, m, 0);
    coffer_txn_free(txn);
    free(m);
}

TS_ENV_TEST(test_int_keys) { run_type(env, T_INT); }
TS_ENV_TEST(test_optional_int_keys) { run_type(env, T_OPT_INT); }
TS_ENV_TEST(test_string_keys) { run_type(env, T_STRING); }
TS_ENV_TEST(test_object_id_keys) { run_type(env, T_OID); }
TS_ENV_TEST(test_uuid_keys) { run_type(env, T_UUID); }

/* Keys of two classes in one transaction, interleaved: each class has its
 * own map, and a key of one class is absent from the other. */
TS_ENV_TEST(test_two_classes)
{
    coffer_class_id a = ts_class(env->db, "IntK"), b = ts_class(env->db, "OptIntK");
    model *ma = calloc(1, sizeof *ma), *mb = calloc(1, sizeof *mb);
    assert_non_null(ma);
    assert_non_null(mb);
    coffer_txn *txn = ts_begin(env->db, COFFER_TXN_WRITE);
    for (int i = 0; i < KEYS; i++) {
        if (i % 2)
            create(txn, a, T_INT, ma, i, i, COFFER_UPDATE_ERROR);
        else
            create(txn, b, T_OPT_INT, mb, i, -i, COFFER_UPDATE_ERROR);
    }
    check_all(txn, a, T_INT, ma, 1);
    check_all(txn, b, T_OPT_INT, mb, 1);
    char buf[512];
    coffer_value k = key_of(T_INT, 1, buf);
    coffer_object *obj = NULL;
    assert_status(coffer_object_find(txn, b, &k, &obj), COFFER_ERR_NOT_FOUND);
    assert_true(cf_pk_map_active(txn, a));
    assert_true(cf_pk_map_active(txn, b));
    ts_commit(txn);
    free(ma);
    free(mb);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TS_TEST_ALL_MODES_SETUP(test_int_keys, setup),       TS_TEST_ALL_MODES_SETUP(test_optional_int_keys, setup),
        TS_TEST_ALL_MODES_SETUP(test_string_keys, setup),    TS_TEST_ALL_MODES_SETUP(test_object_id_keys, setup),
        TS_TEST_ALL_MODES_SETUP(test_uuid_keys, setup),      TS_TEST_ALL_MODES_SETUP(test_two_classes, setup),
    };
    return cmocka_run_group_tests_name("pk_lookups", tests, NULL, NULL);
}
