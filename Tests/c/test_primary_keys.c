/* test_primary_keys.c — primary keys of every allowed type, uniqueness,
 * find, immutability, upsert policies and long string keys.
 * Every test runs on plain, encrypted and in-memory databases. */
#define _GNU_SOURCE
#include "test_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Each class: property 0 is the primary key, 1 "value" int, 2 "label" string. */
enum { K_PK = 0, K_VALUE, K_LABEL };

#define PK_CLASS(cname, pname, ptype, extra)                                                          \
    static const coffer_property_schema cname##_props[] = {                                          \
        {.name = pname, .type = ptype, .flags = COFFER_PROPERTY_PRIMARY_KEY | (extra)},              \
        {.name = "value", .type = COFFER_TYPE_INT},                                                  \
        {.name = "label", .type = COFFER_TYPE_STRING},                                               \
    };

PK_CLASS(IntKey, "intKey", COFFER_TYPE_INT, 0)
PK_CLASS(StrKey, "strKey", COFFER_TYPE_STRING, 0)
PK_CLASS(OidKey, "oidKey", COFFER_TYPE_OBJECT_ID, 0)
PK_CLASS(UuidKey, "uuidKey", COFFER_TYPE_UUID, 0)
PK_CLASS(OptIntKey, "optIntKey", COFFER_TYPE_INT, COFFER_PROPERTY_OPTIONAL)
PK_CLASS(OptStrKey, "optStrKey", COFFER_TYPE_STRING, COFFER_PROPERTY_OPTIONAL)
PK_CLASS(OptOidKey, "optOidKey", COFFER_TYPE_OBJECT_ID, COFFER_PROPERTY_OPTIONAL)
PK_CLASS(OptUuidKey, "optUuidKey", COFFER_TYPE_UUID, COFFER_PROPERTY_OPTIONAL)

static const coffer_property_schema NoKey_props[] = {
    {.name = "value", .type = COFFER_TYPE_INT},
    {.name = "label", .type = COFFER_TYPE_STRING},
};

static const coffer_class_schema pk_schema[] = {
    {.name = "IntKey", .properties = IntKey_props, .property_count = 3},
    {.name = "StrKey", .properties = StrKey_props, .property_count = 3},
    {.name = "OidKey", .properties = OidKey_props, .property_count = 3},
    {.name = "UuidKey", .properties = UuidKey_props, .property_count = 3},
    {.name = "OptIntKey", .properties = OptIntKey_props, .property_count = 3},
    {.name = "OptStrKey", .properties = OptStrKey_props, .property_count = 3},
    {.name = "OptOidKey", .properties = OptOidKey_props, .property_count = 3},
    {.name = "OptUuidKey", .properties = OptUuidKey_props, .property_count = 3},
    {.name = "NoKey", .properties = NoKey_props, .property_count = 2},
};
#define PK_SCHEMA_COUNT (sizeof pk_schema / sizeof pk_schema[0])

static int pk_setup(void **state) { return ts_setup_schema(state, pk_schema, PK_SCHEMA_COUNT); }

#define PK_TEST_ALL_MODES(f) TS_TEST_ALL_MODES_SETUP(f, pk_setup)

/* Three distinct keys for a class, and a human-readable marker that the
 * duplicate-key message must contain (NULL to skip that check). */
typedef struct pk_case {
    const char *cls;
    const char *pkname;
    coffer_value keys[3];
    const char *marker;
    coffer_value wrong; /* a value of another type */
    coffer_class_id id; /* the class in the database, set by case_in */
} pk_case;

static const uint8_t OIDS[3][12] = {
    {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12},
    {0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff, 0, 1, 2, 3, 4, 5},
    {0},
};
static const uint8_t UUIDS[3][16] = {
    {0x55, 0x0e, 0x84, 0x00, 0xe2, 0x9b, 0x41, 0xd4, 0xa7, 0x16, 0x44, 0x66, 0x55, 0x44, 0x00, 0x00},
    {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16},
    {0},
};

/* Cases 0..3 are the required key types int, string, object id and UUID;
 * 4..7 their optional twins, with the same keys. */
static const struct {
    const char *cls;
    const char *pkname;
    const char *marker;
} case_names[8] = {
    {"IntKey", "intKey", "424242"},           {"StrKey", "strKey", "alphaKeyValue"},
    {"OidKey", "oidKey", NULL},               {"UuidKey", "uuidKey", NULL},
    {"OptIntKey", "optIntKey", "424242"},     {"OptStrKey", "optStrKey", "alphaKeyValue"},
    {"OptOidKey", "optOidKey", NULL},         {"OptUuidKey", "optUuidKey", NULL},
};

static pk_case make_case(int i)
{
    pk_case c;
    memset(&c, 0, sizeof c);
    c.cls = case_names[i].cls;
    c.pkname = case_names[i].pkname;
    c.marker = case_names[i].marker;
    switch (i % 4) {
    case 0:
        c.keys[0] = coffer_value_int(424242);
        c.keys[1] = coffer_value_int(-7);
        c.keys[2] = coffer_value_int(0);
        c.wrong = ts_str("424242");
        break;
    case 1:
        c.keys[0] = ts_str("alphaKeyValue");
        c.keys[1] = ts_str("");
        c.keys[2] = ts_str("\xe6\x97\xa5\xe6\x9c\xac");
        c.wrong = coffer_value_int(1);
        break;
    case 2:
        for (int k = 0; k < 3; k++)
            c.keys[k] = coffer_value_object_id(OIDS[k]);
        c.wrong = coffer_value_uuid(UUIDS[0]);
        break;
    default:
        for (int k = 0; k < 3; k++)
            c.keys[k] = coffer_value_uuid(UUIDS[k]);
        c.wrong = coffer_value_object_id(OIDS[0]);
        break;
    }
    return c;
}

/* make_case(i) with its class looked up in db. */
static pk_case case_in(coffer_db *db, int i)
{
    pk_case c = make_case(i);
    c.id = ts_class(db, c.cls);
    return c;
}

/* ------------------------------------------------------------------------ */

TS_ENV_TEST(test_create_find_each_type)
{
    for (int i = 0; i < 8; i++) {
        pk_case c = case_in(env->db, i);
        coffer_property_id pk;
        assert_ok(coffer_db_primary_key(env->db, c.id, &pk));
        assert_int_equal(pk, K_PK);

        coffer_txn *txn = ts_begin(env->db, COFFER_TXN_WRITE);
        coffer_object_key keys[3];
        for (int j = 0; j < 3; j++) {
            coffer_field f[] = {ts_field(K_PK, c.keys[j]), ts_field(K_VALUE, coffer_value_int(j * 10))};
            coffer_object *obj = ts_create(txn, c.id, f, 2);
            keys[j] = coffer_object_key_of(obj);
            assert_value(obj, K_PK, &c.keys[j]);
        }
        /* find inside the write transaction */
        for (int j = 0; j < 3; j++) {
            coffer_object *obj = NULL;
            assert_ok(coffer_object_find(txn, c.id, &c.keys[j], &obj));
            assert_int_equal(coffer_object_key_of(obj), keys[j]);
        }
        /* duplicate in the same transaction */
        coffer_field dup[] = {ts_field(K_PK, c.keys[0]), ts_field(K_VALUE, coffer_value_int(99))};
        assert_status(coffer_object_create(txn, c.id, dup, 2, COFFER_UPDATE_ERROR, NULL),
                      COFFER_ERR_PRIMARY_KEY_EXISTS);
        assert_error_contains(c.cls);
        if (c.marker)
            assert_error_contains(c.marker);
        assert_int_equal(ts_count(txn, c.id), 3);
        ts_commit(txn);

        txn = ts_begin(env->db, COFFER_TXN_READ);
        for (int j = 0; j < 3; j++) {
            coffer_object *obj = NULL;
            assert_ok(coffer_object_find(txn, c.id, &c.keys[j], &obj));
            assert_int_equal(coffer_object_key_of(obj), keys[j]);
            assert_int_equal(ts_get_int(obj, K_VALUE), j * 10);
            assert_value(obj, K_PK, &c.keys[j]);
        }
        coffer_txn_free(txn);

        /* duplicate against a committed object */
        txn = ts_begin(env->db, COFFER_TXN_WRITE);
        assert_status(coffer_object_create(txn, c.id, dup, 2, COFFER_UPDATE_ERROR, NULL),
                      COFFER_ERR_PRIMARY_KEY_EXISTS);
        assert_error_contains(c.cls);
        if (c.marker)
            assert_error_contains(c.marker);
        /* wrong type for the key */
        coffer_object *obj = NULL;
        assert_status(coffer_object_find(txn, c.id, &c.wrong, &obj), COFFER_ERR_TYPE);
        coffer_field wf[] = {ts_field(K_PK, c.wrong)};
        assert_status(coffer_object_create(txn, c.id, wf, 1, COFFER_UPDATE_ERROR, NULL), COFFER_ERR_TYPE);
        assert_error_contains(c.pkname);
        assert_int_equal(ts_count(txn, c.id), 3);
        ts_commit(txn);
    }
}

TS_ENV_TEST(test_find_miss)
{
    coffer_class_id ik = ts_class(env->db, "IntKey");
    coffer_class_id sk = ts_class(env->db, "StrKey");
    coffer_txn *txn = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_field f[] = {ts_field(K_PK, coffer_value_int(1))};
    assert_ok(coffer_object_create(txn, ik, f, 1, COFFER_UPDATE_ERROR, NULL));
    coffer_field g[] = {ts_field(K_PK, ts_str("abc"))};
    assert_ok(coffer_object_create(txn, sk, g, 1, COFFER_UPDATE_ERROR, NULL));
    ts_commit(txn);

    txn = ts_begin(env->db, COFFER_TXN_READ);
    coffer_object *obj = NULL;
    coffer_value v = coffer_value_int(2);
    assert_status(coffer_object_find(txn, ik, &v, &obj), COFFER_ERR_NOT_FOUND);
    v = coffer_value_int(-1);
    assert_status(coffer_object_find(txn, ik, &v, &obj), COFFER_ERR_NOT_FOUND);
    v = ts_str("ab");
    assert_status(coffer_object_find(txn, sk, &v, &obj), COFFER_ERR_NOT_FOUND);
    v = ts_str("abcd");
    assert_status(coffer_object_find(txn, sk, &v, &obj), COFFER_ERR_NOT_FOUND);
    v = ts_str("ABC");
    assert_status(coffer_object_find(txn, sk, &v, &obj), COFFER_ERR_NOT_FOUND);
    /* null on a required key: not of the key's type */
    v = coffer_value_null();
    assert_status(coffer_object_find(txn, ik, &v, &obj), COFFER_ERR_TYPE);
    /* NULL arguments */
    v = coffer_value_int(1);
    assert_status(coffer_object_find(txn, ik, NULL, &obj), COFFER_ERR_INVALID_ARGUMENT);
    assert_status(coffer_object_find(txn, ik, &v, NULL), COFFER_ERR_INVALID_ARGUMENT);
    assert_status(coffer_object_find(txn, 999, &v, &obj), COFFER_ERR_INVALID_ARGUMENT);
    assert_status(coffer_object_find(NULL, ik, &v, &obj), COFFER_ERR_INVALID_ARGUMENT);
    assert_ok(coffer_object_find(txn, ik, &v, &obj));
    coffer_txn_free(txn);
}

TS_ENV_TEST(test_find_without_primary_key)
{
    coffer_class_id nk = ts_class(env->db, "NoKey");
    coffer_property_id pk;
    assert_status(coffer_db_primary_key(env->db, nk, &pk), COFFER_ERR_NOT_FOUND);
    coffer_txn *txn = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_field f[] = {ts_field(0, coffer_value_int(1))};
    assert_ok(coffer_object_create(txn, nk, f, 1, COFFER_UPDATE_ERROR, NULL));
    /* the same values twice are fine without a primary key */
    assert_ok(coffer_object_create(txn, nk, f, 1, COFFER_UPDATE_ERROR, NULL));
    /* upsert policies on a class without a primary key just create */
    assert_ok(coffer_object_create(txn, nk, f, 1, COFFER_UPDATE_ALL, NULL));
    assert_int_equal(ts_count(txn, nk), 3);
    coffer_object *obj = NULL;
    coffer_value v = coffer_value_int(1);
    assert_status(coffer_object_find(txn, nk, &v, &obj), COFFER_ERR_NOT_FOUND);
    assert_error_contains("NoKey");
    ts_commit(txn);
}

TS_ENV_TEST(test_optional_null_key)
{
    const char *classes[] = {"OptIntKey", "OptStrKey", "OptOidKey", "OptUuidKey"};
    for (int i = 0; i < 4; i++) {
        coffer_class_id cls = ts_class(env->db, classes[i]);
        coffer_txn *txn = ts_begin(env->db, COFFER_TXN_WRITE);
        /* not listed: the key is null */
        coffer_field f[] = {ts_field(K_VALUE, coffer_value_int(1))};
        coffer_object *obj = ts_create(txn, cls, f, 1);
        assert_true(ts_get_is_null(obj, K_PK));
        coffer_object_key nkey = coffer_object_key_of(obj);
        /* a second null key is a duplicate */
        coffer_field n[] = {ts_field(K_PK, coffer_value_null()), ts_field(K_VALUE, coffer_value_int(2))};
        assert_status(coffer_object_create(txn, cls, n, 2, COFFER_UPDATE_ERROR, NULL),
                      COFFER_ERR_PRIMARY_KEY_EXISTS);
        assert_error_contains(classes[i]);
        assert_status(coffer_object_create(txn, cls, f, 1, COFFER_UPDATE_ERROR, NULL),
                      COFFER_ERR_PRIMARY_KEY_EXISTS);
        /* non-null keys alongside */
        pk_case c = make_case(4 + i);
        coffer_field k[] = {ts_field(K_PK, c.keys[0])};
        assert_ok(coffer_object_create(txn, cls, k, 1, COFFER_UPDATE_ERROR, NULL));
        ts_commit(txn);

        txn = ts_begin(env->db, COFFER_TXN_READ);
        coffer_value nv = coffer_value_null();
        assert_ok(coffer_object_find(txn, cls, &nv, &obj));
        assert_int_equal(coffer_object_key_of(obj), nkey);
        assert_int_equal(ts_get_int(obj, K_VALUE), 1);
        assert_ok(coffer_object_find(txn, cls, &c.keys[0], &obj));
        assert_true(coffer_object_key_of(obj) != nkey);
        coffer_txn_free(txn);

        if (i == 1) {
            /* the empty string is a different key from null */
            coffer_field e[] = {ts_field(K_PK, ts_str("")), ts_field(K_VALUE, coffer_value_int(3))};
            txn = ts_begin(env->db, COFFER_TXN_WRITE);
            coffer_object *eo = ts_create(txn, cls, e, 2);
            assert_true(coffer_object_key_of(eo) != nkey);
            coffer_value ev = ts_str("");
            assert_ok(coffer_object_find(txn, cls, &ev, &obj));
            assert_int_equal(ts_get_int(obj, K_VALUE), 3);
            assert_ok(coffer_object_find(txn, cls, &nv, &obj));
            assert_int_equal(ts_get_int(obj, K_VALUE), 1);
            assert_ok(coffer_object_delete(eo));
            ts_commit(txn);
        }
        /* upsert onto the null key */
        txn = ts_begin(env->db, COFFER_TXN_WRITE);
        coffer_field u[] = {ts_field(K_PK, coffer_value_null()), ts_field(K_VALUE, coffer_value_int(5))};
        assert_ok(coffer_object_create(txn, cls, u, 2, COFFER_UPDATE_ALL, &obj));
        assert_int_equal(coffer_object_key_of(obj), nkey);
        assert_int_equal(ts_get_int(obj, K_VALUE), 5);
        assert_int_equal(ts_count(txn, cls), 2);
        /* deleting the null-key object frees the null key */
        assert_ok(coffer_object_delete(obj));
        assert_status(coffer_object_find(txn, cls, &nv, &obj), COFFER_ERR_NOT_FOUND);
        assert_ok(coffer_object_create(txn, cls, n, 2, COFFER_UPDATE_ERROR, NULL));
        ts_commit(txn);
    }
}

TS_ENV_TEST(test_missing_required_key)
{
    const char *classes[] = {"IntKey", "StrKey", "OidKey", "UuidKey"};
    const char *pks[] = {"intKey", "strKey", "oidKey", "uuidKey"};
    coffer_txn *txn = ts_begin(env->db, COFFER_TXN_WRITE);
    for (int i = 0; i < 4; i++) {
        coffer_class_id cls = ts_class(env->db, classes[i]);
        coffer_field f[] = {ts_field(K_VALUE, coffer_value_int(1))};
        assert_not_ok(coffer_object_create(txn, cls, f, 1, COFFER_UPDATE_ERROR, NULL));
        assert_error_contains(classes[i]);
        assert_error_contains(pks[i]);
        assert_not_ok(coffer_object_create(txn, cls, NULL, 0, COFFER_UPDATE_ERROR, NULL));
        assert_error_contains(pks[i]);
        assert_int_equal(ts_count(txn, cls), 0);
    }
    ts_commit(txn);
}

/* Creates an object with primary key `pk`, value 1 and a label in a write
 * transaction of its own; returns its key. */
static coffer_object_key commit_first(coffer_db *db, coffer_class_id cls, coffer_value pk, const char *label)
{
    coffer_field f[] = {ts_field(K_PK, pk), ts_field(K_VALUE, coffer_value_int(1)), ts_field(K_LABEL, ts_str(label))};
    return ts_commit_object(db, cls, f, 3);
}

TS_ENV_TEST(test_immutable)
{
    for (int i = 0; i < 8; i++) {
        pk_case c = case_in(env->db, i);
        commit_first(env->db, c.id, c.keys[0], "orig");

        coffer_txn *txn = ts_begin(env->db, COFFER_TXN_WRITE);
        coffer_object *obj = NULL;
        assert_ok(coffer_object_find(txn, c.id, &c.keys[0], &obj));
        /* another value: immutable */
        assert_status(coffer_object_set_value(obj, K_PK, &c.keys[1]), COFFER_ERR_IMMUTABLE);
        assert_error_contains(c.cls);
        assert_error_contains(c.pkname);
        /* the same value: fine */
        assert_ok(coffer_object_set_value(obj, K_PK, &c.keys[0]));
        /* set_fields: same key + other fields is fine */
        coffer_field same[] = {ts_field(K_VALUE, coffer_value_int(2)), ts_field(K_PK, c.keys[0])};
        assert_ok(coffer_object_set_fields(obj, same, 2));
        assert_int_equal(ts_get_int(obj, K_VALUE), 2);
        /* set_fields with a different key: nothing changes */
        coffer_field diff[] = {ts_field(K_VALUE, coffer_value_int(3)), ts_field(K_LABEL, ts_str("changed")),
                               ts_field(K_PK, c.keys[1])};
        assert_status(coffer_object_set_fields(obj, diff, 3), COFFER_ERR_IMMUTABLE);
        assert_error_contains(c.pkname);
        assert_int_equal(ts_get_int(obj, K_VALUE), 2);
        assert_string_equal(ts_get_string(obj, K_LABEL, NULL), "orig");
        if (i >= 4) {
            coffer_value nv = coffer_value_null();
            assert_status(coffer_object_set_value(obj, K_PK, &nv), COFFER_ERR_IMMUTABLE);
        }
        ts_commit(txn);

        txn = ts_begin(env->db, COFFER_TXN_READ);
        assert_ok(coffer_object_find(txn, c.id, &c.keys[0], &obj));
        assert_int_equal(ts_get_int(obj, K_VALUE), 2);
        assert_status(coffer_object_find(txn, c.id, &c.keys[1], &obj), COFFER_ERR_NOT_FOUND);
        coffer_txn_free(txn);
    }
}

TS_ENV_TEST(test_upsert_policies)
{
    for (int i = 0; i < 8; i++) {
        pk_case c = case_in(env->db, i);
        coffer_object_key key = commit_first(env->db, c.id, c.keys[0], "first");

        /* UPDATE_ALL updates the existing object: listed fields change, the
         * others stay */
        coffer_txn *txn = ts_begin(env->db, COFFER_TXN_WRITE);
        coffer_object *obj = NULL;
        coffer_field u[] = {ts_field(K_PK, c.keys[0]), ts_field(K_VALUE, coffer_value_int(2))};
        assert_ok(coffer_object_create(txn, c.id, u, 2, COFFER_UPDATE_ALL, &obj));
        assert_int_equal(coffer_object_key_of(obj), key);
        assert_int_equal(ts_get_int(obj, K_VALUE), 2);
        assert_string_equal(ts_get_string(obj, K_LABEL, NULL), "first");
        assert_int_equal(ts_count(txn, c.id), 1);
        /* UPDATE_MODIFIED: the same */
        coffer_field m[] = {ts_field(K_LABEL, ts_str("second")), ts_field(K_PK, c.keys[0]),
                            ts_field(K_VALUE, coffer_value_int(2))};
        assert_ok(coffer_object_create(txn, c.id, m, 3, COFFER_UPDATE_MODIFIED, &obj));
        assert_int_equal(coffer_object_key_of(obj), key);
        assert_int_equal(ts_get_int(obj, K_VALUE), 2);
        assert_string_equal(ts_get_string(obj, K_LABEL, NULL), "second");
        assert_int_equal(ts_count(txn, c.id), 1);
        /* with a new key, both policies create */
        coffer_field n1[] = {ts_field(K_PK, c.keys[1]), ts_field(K_VALUE, coffer_value_int(10))};
        assert_ok(coffer_object_create(txn, c.id, n1, 2, COFFER_UPDATE_ALL, &obj));
        assert_true(coffer_object_key_of(obj) > key);
        coffer_field n2[] = {ts_field(K_PK, c.keys[2]), ts_field(K_VALUE, coffer_value_int(20))};
        assert_ok(coffer_object_create(txn, c.id, n2, 2, COFFER_UPDATE_MODIFIED, &obj));
        assert_int_equal(ts_count(txn, c.id), 3);
        /* an upsert with a wrong type changes nothing */
        coffer_field bad[] = {ts_field(K_PK, c.keys[0]), ts_field(K_VALUE, ts_str("x"))};
        assert_status(coffer_object_create(txn, c.id, bad, 2, COFFER_UPDATE_ALL, &obj), COFFER_ERR_TYPE);
        assert_error_contains("value");
        /* UPDATE_ERROR still refuses */
        assert_status(coffer_object_create(txn, c.id, u, 2, COFFER_UPDATE_ERROR, NULL),
                      COFFER_ERR_PRIMARY_KEY_EXISTS);
        ts_commit(txn);

        txn = ts_begin(env->db, COFFER_TXN_READ);
        assert_int_equal(ts_count(txn, c.id), 3);
        assert_ok(coffer_object_find(txn, c.id, &c.keys[0], &obj));
        assert_int_equal(coffer_object_key_of(obj), key);
        assert_int_equal(ts_get_int(obj, K_VALUE), 2);
        assert_string_equal(ts_get_string(obj, K_LABEL, NULL), "second");
        assert_ok(coffer_object_find(txn, c.id, &c.keys[1], &obj));
        assert_int_equal(ts_get_int(obj, K_VALUE), 10);
        assert_ok(coffer_object_find(txn, c.id, &c.keys[2], &obj));
        assert_int_equal(ts_get_int(obj, K_VALUE), 20);
        coffer_txn_free(txn);
    }
}

/* Deleting an object frees its key for a new object. */
TS_ENV_TEST(test_key_reusable_after_delete)
{
    coffer_class_id cls = ts_class(env->db, "StrKey");
    coffer_value k = ts_str("recycled");
    coffer_txn *txn = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_field f[] = {ts_field(K_PK, k), ts_field(K_VALUE, coffer_value_int(1))};
    coffer_object *obj = ts_create(txn, cls, f, 2);
    coffer_object_key first = coffer_object_key_of(obj);
    ts_commit(txn);
    txn = ts_begin(env->db, COFFER_TXN_WRITE);
    assert_ok(coffer_object_find(txn, cls, &k, &obj));
    assert_ok(coffer_object_delete(obj));
    assert_status(coffer_object_find(txn, cls, &k, &obj), COFFER_ERR_NOT_FOUND);
    coffer_field g[] = {ts_field(K_PK, k), ts_field(K_VALUE, coffer_value_int(2))};
    assert_ok(coffer_object_create(txn, cls, g, 2, COFFER_UPDATE_ERROR, &obj));
    assert_true(coffer_object_key_of(obj) > first);
    ts_commit(txn);
    txn = ts_begin(env->db, COFFER_TXN_WRITE);
    assert_ok(coffer_object_find(txn, cls, &k, &obj));
    assert_int_equal(ts_get_int(obj, K_VALUE), 2);
    /* class_clear removes the keys too */
    assert_ok(coffer_class_clear(txn, cls));
    assert_status(coffer_object_find(txn, cls, &k, &obj), COFFER_ERR_NOT_FOUND);
    assert_ok(coffer_object_create(txn, cls, g, 2, COFFER_UPDATE_ERROR, &obj));
    ts_commit(txn);
}

static char *long_key(size_t size, size_t prefix_len, char tail)
{
    char *s = malloc(size + 1);
    for (size_t i = 0; i < size; i++)
        s[i] = (char)('A' + (i % 23));
    for (size_t i = prefix_len; i < size; i++)
        s[i] = tail;
    s[size] = 0;
    return s;
}

TS_ENV_TEST(test_long_string_keys)
{
    coffer_class_id cls = ts_class(env->db, "StrKey");
    /* 5000-byte keys sharing a 4000-byte prefix, and keys around the LMDB
     * key size limit */
    char *a = long_key(5000, 4000, 'a');
    char *b = long_key(5000, 4000, 'b');
    char *c = long_key(5000, 4000, 'a'); /* differs from a only at the last byte */
    char *d = long_key(4000, 4000, 'x'); /* the shared prefix alone */
    char *e = long_key(511, 511, 'x');
    char *f = long_key(512, 512, 'x');
    char *g = long_key(500, 500, 'x');
    char *h = long_key(1000, 999, 'y');
    c[4999] = 'c';
    const char *keys[] = {a, b, c, d, e, f, g, h};
    const size_t n = sizeof keys / sizeof keys[0];
    coffer_object_key okeys[8];
    coffer_txn *txn = ts_begin(env->db, COFFER_TXN_WRITE);
    for (size_t i = 0; i < n; i++) {
        coffer_field fl[] = {ts_field(K_PK, ts_str(keys[i])), ts_field(K_VALUE, coffer_value_int((int64_t)i))};
        coffer_object *obj = ts_create(txn, cls, fl, 2);
        okeys[i] = coffer_object_key_of(obj);
    }
    /* duplicates of long keys are detected */
    for (size_t i = 0; i < n; i++) {
        coffer_field fl[] = {ts_field(K_PK, ts_str(keys[i]))};
        assert_status(coffer_object_create(txn, cls, fl, 1, COFFER_UPDATE_ERROR, NULL),
                      COFFER_ERR_PRIMARY_KEY_EXISTS);
    }
    ts_commit(txn);

    txn = ts_begin(env->db, COFFER_TXN_READ);
    assert_int_equal(ts_count(txn, cls), n);
    for (size_t i = 0; i < n; i++) {
        coffer_value k = ts_str(keys[i]);
        coffer_object *obj = NULL;
        assert_ok(coffer_object_find(txn, cls, &k, &obj));
        assert_int_equal(coffer_object_key_of(obj), okeys[i]);
        assert_int_equal(ts_get_int(obj, K_VALUE), (int64_t)i);
        size_t size;
        const char *s = ts_get_string(obj, K_PK, &size);
        assert_int_equal(size, strlen(keys[i]));
        assert_memory_equal(s, keys[i], size);
    }
    /* misses that share the long prefix */
    char *miss1 = long_key(5000, 4000, 'z');
    char *miss2 = long_key(4999, 4000, 'a');
    char *miss3 = long_key(5001, 4000, 'a');
    const char *misses[] = {miss1, miss2, miss3};
    for (int i = 0; i < 3; i++) {
        coffer_value k = ts_str(misses[i]);
        coffer_object *obj = NULL;
        assert_status(coffer_object_find(txn, cls, &k, &obj), COFFER_ERR_NOT_FOUND);
    }
    coffer_txn_free(txn);

    /* upsert through a long key */
    txn = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_field u[] = {ts_field(K_PK, ts_str(b)), ts_field(K_VALUE, coffer_value_int(1000))};
    coffer_object *obj = NULL;
    assert_ok(coffer_object_create(txn, cls, u, 2, COFFER_UPDATE_ALL, &obj));
    assert_int_equal(coffer_object_key_of(obj), okeys[1]);
    assert_int_equal(ts_count(txn, cls), n);
    /* delete a long key, the neighbour with the same prefix stays */
    coffer_value ka = ts_str(a);
    assert_ok(coffer_object_find(txn, cls, &ka, &obj));
    assert_ok(coffer_object_delete(obj));
    assert_status(coffer_object_find(txn, cls, &ka, &obj), COFFER_ERR_NOT_FOUND);
    coffer_value kc = ts_str(c);
    assert_ok(coffer_object_find(txn, cls, &kc, &obj));
    assert_int_equal(coffer_object_key_of(obj), okeys[2]);
    ts_commit(txn);

    free(a), free(b), free(c), free(d), free(e), free(f), free(g), free(h);
    free(miss1), free(miss2), free(miss3);
}

/* Many keys: every one is found, no false hits. */
TS_ENV_TEST(test_many_keys)
{
    coffer_class_id ik = ts_class(env->db, "IntKey");
    coffer_class_id sk = ts_class(env->db, "StrKey");
    enum { N = 3000 };
    coffer_txn *txn = ts_begin(env->db, COFFER_TXN_WRITE);
    for (int i = 0; i < N; i++) {
        int64_t key = (int64_t)i * 7919 - 10000000; /* negatives and positives */
        coffer_field f[] = {ts_field(K_PK, coffer_value_int(key)), ts_field(K_VALUE, coffer_value_int(i))};
        assert_ok(coffer_object_create(txn, ik, f, 2, COFFER_UPDATE_ERROR, NULL));
        char buf[32];
        snprintf(buf, sizeof buf, "key-%d", i);
        coffer_field g[] = {ts_field(K_PK, ts_str(buf)), ts_field(K_VALUE, coffer_value_int(i))};
        assert_ok(coffer_object_create(txn, sk, g, 2, COFFER_UPDATE_ERROR, NULL));
    }
    ts_commit(txn);
    txn = ts_begin(env->db, COFFER_TXN_READ);
    for (int i = 0; i < N; i++) {
        coffer_object *obj = NULL;
        coffer_value v = coffer_value_int((int64_t)i * 7919 - 10000000);
        assert_ok(coffer_object_find(txn, ik, &v, &obj));
        assert_int_equal(ts_get_int(obj, K_VALUE), i);
        coffer_object_release(obj);
        v = coffer_value_int((int64_t)i * 7919 - 10000000 + 1);
        assert_status(coffer_object_find(txn, ik, &v, &obj), COFFER_ERR_NOT_FOUND);
        char buf[32];
        snprintf(buf, sizeof buf, "key-%d", i);
        v = ts_str(buf);
        assert_ok(coffer_object_find(txn, sk, &v, &obj));
        assert_int_equal(ts_get_int(obj, K_VALUE), i);
        coffer_object_release(obj);
    }
    coffer_txn_free(txn);
}

/* coffer_index_find works on a primary-key property. */
TS_ENV_TEST(test_index_find_on_primary_key)
{
    coffer_class_id sk = ts_class(env->db, "StrKey");
    coffer_txn *txn = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_field f[] = {ts_field(K_PK, ts_str("pk-one"))};
    coffer_object *obj = ts_create(txn, sk, f, 1);
    coffer_object_key key = coffer_object_key_of(obj);
    ts_commit(txn);
    txn = ts_begin(env->db, COFFER_TXN_READ);
    coffer_iter *it = NULL;
    coffer_value v = ts_str("pk-one");
    assert_ok(coffer_index_find(txn, sk, K_PK, &v, &it));
    coffer_object_key *keys = NULL;
    assert_int_equal(ts_collect_keys(it, &keys), 1);
    assert_int_equal(keys[0], key);
    free(keys);
    v = ts_str("pk-two");
    assert_int_equal(ts_index_count(txn, sk, K_PK, &v), 0);
    coffer_txn_free(txn);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        PK_TEST_ALL_MODES(test_create_find_each_type),
        PK_TEST_ALL_MODES(test_find_miss),
        PK_TEST_ALL_MODES(test_find_without_primary_key),
        PK_TEST_ALL_MODES(test_optional_null_key),
        PK_TEST_ALL_MODES(test_missing_required_key),
        PK_TEST_ALL_MODES(test_immutable),
        PK_TEST_ALL_MODES(test_upsert_policies),
        PK_TEST_ALL_MODES(test_key_reusable_after_delete),
        PK_TEST_ALL_MODES(test_long_string_keys),
        PK_TEST_ALL_MODES(test_many_keys),
        PK_TEST_ALL_MODES(test_index_find_on_primary_key),
    };
    return cmocka_run_group_tests_name("primary_keys", tests, NULL, NULL);
}
