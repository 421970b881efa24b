/* test_objects.c — object create/get/set/delete, every scalar type,
 * defaults, type errors, keys, count, iterate, clear, handles, limits.
 * Every test runs on plain, encrypted and in-memory databases. */
#define _GNU_SOURCE
#include "test_support.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const uint8_t BIN_WITH_NULS[] = {0x00, 0x01, 0x00, 0x00, 0xff, 0x00, 0x7f, 0x00};
static const char UTF8_TEXT[] = "h\xc3\xa9llo w\xc3\xb6rld \xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e \xf0\x9f\x8e\x89!";

/* decimal128 1.25 and -3E-7 (BID) */
#define DEC_1_25_LO 125u
#define DEC_1_25_HI 0x303C000000000000ull
#define DEC_M3E7_LO 3u
#define DEC_M3E7_HI 0xB032000000000000ull

static coffer_object_key create_obj(coffer_txn *txn, coffer_class_id cls, const coffer_field *f, size_t n)
{
    coffer_object *obj = ts_create(txn, cls, f, n);
    assert_non_null(obj);
    assert_int_equal(coffer_object_class(obj), cls);
    return coffer_object_key_of(obj);
}

/* A new AllTypes object whose AT_INT is `value`. */
static coffer_object *int_object(coffer_txn *txn, coffer_class_id cls, int64_t value)
{
    coffer_field f[] = {ts_field(AT_INT, coffer_value_int(value))};
    return ts_create(txn, cls, f, 1);
}

/* Creates n AllTypes objects whose AT_INT is 0..n-1; their keys go to
 * keys[0..n) unless keys is NULL. */
static void create_int_objects(coffer_txn *txn, coffer_class_id cls, int n, coffer_object_key *keys)
{
    for (int i = 0; i < n; i++) {
        coffer_field f[] = {ts_field(AT_INT, coffer_value_int(i))};
        coffer_object_key key = create_obj(txn, cls, f, 1);
        if (keys)
            keys[i] = key;
    }
}

static coffer_object *get_obj(coffer_txn *txn, coffer_class_id cls, coffer_object_key key)
{
    coffer_object *obj = NULL;
    assert_ok(coffer_object_get(txn, cls, key, &obj));
    assert_non_null(obj);
    assert_int_equal(coffer_object_key_of(obj), key);
    return obj;
}

/* A non-null sample value for every AllTypes property. */
static coffer_value sample_value(coffer_property_id p)
{
    switch (ts_all_types_type(p)) {
    case COFFER_TYPE_BOOL: return coffer_value_bool(true);
    case COFFER_TYPE_INT: return coffer_value_int(p < 10 ? 1234567890123ll : -987654321ll);
    case COFFER_TYPE_FLOAT: return coffer_value_float(p < 10 ? 3.25f : -0.125f);
    case COFFER_TYPE_DOUBLE: return coffer_value_double(p < 10 ? -2.5e300 : 1.0 / 3.0);
    case COFFER_TYPE_STRING: return p < 10 ? coffer_value_string(UTF8_TEXT, SIZE_MAX) : ts_str("optional text");
    case COFFER_TYPE_BINARY: return coffer_value_binary(BIN_WITH_NULS, sizeof BIN_WITH_NULS);
    case COFFER_TYPE_DATE: return p < 10 ? coffer_value_date(1700000000, 123456789) : coffer_value_date(-5, -250);
    case COFFER_TYPE_OBJECT_ID: return coffer_value_object_id(p < 10 ? OID_A : OID_B);
    case COFFER_TYPE_UUID: return coffer_value_uuid(p < 10 ? UUID_A : UUID_B);
    case COFFER_TYPE_DECIMAL128:
        return p < 10 ? coffer_value_decimal128(DEC_1_25_LO, DEC_1_25_HI)
                      : coffer_value_decimal128(DEC_M3E7_LO, DEC_M3E7_HI);
    default: break;
    }
    return coffer_value_null();
}

/* A second, different value of the same type. */
static coffer_value other_value(coffer_property_id p)
{
    switch (ts_all_types_type(p)) {
    case COFFER_TYPE_BOOL: return coffer_value_bool(false);
    case COFFER_TYPE_INT: return coffer_value_int(-42);
    case COFFER_TYPE_FLOAT: return coffer_value_float(1e-3f);
    case COFFER_TYPE_DOUBLE: return coffer_value_double(6.02214076e23);
    case COFFER_TYPE_STRING: return ts_str("changed");
    case COFFER_TYPE_BINARY: return coffer_value_binary("\x01\x02\x03", 3);
    case COFFER_TYPE_DATE: return coffer_value_date(86400, 1);
    case COFFER_TYPE_OBJECT_ID: return coffer_value_object_id(OID_B);
    case COFFER_TYPE_UUID: return coffer_value_uuid(UUID_B);
    case COFFER_TYPE_DECIMAL128: return coffer_value_decimal128(DEC_M3E7_LO, DEC_M3E7_HI);
    default: break;
    }
    return coffer_value_null();
}

/* A value of a type other than the property's. */
static coffer_value wrong_value(coffer_property_id p)
{
    switch (ts_all_types_type(p)) {
    case COFFER_TYPE_STRING: return coffer_value_int(5);
    case COFFER_TYPE_BINARY: return coffer_value_bool(true);
    default: return ts_str("not the right type");
    }
}

/* Creates an AllTypes object with sample_value in every property. */
static coffer_object *create_sample(coffer_txn *txn, coffer_class_id cls)
{
    coffer_field fields[AT_COUNT];
    for (coffer_property_id p = 0; p < AT_COUNT; p++)
        fields[p] = ts_field(p, sample_value(p));
    coffer_object *obj = ts_create(txn, cls, fields, AT_COUNT);
    return obj;
}

/* Asserts that every property of obj holds value_of(property). */
static void assert_all_values(coffer_object *obj, coffer_value (*value_of)(coffer_property_id))
{
    for (coffer_property_id p = 0; p < AT_COUNT; p++) {
        coffer_value v = value_of(p);
        assert_value(obj, p, &v);
    }
}

/* ------------------------------------------------------------------------ */

TS_ENV_TEST(test_roundtrip_all_types)
{
    coffer_txn *txn = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_object *obj = create_sample(txn, env->all_types);
    coffer_object_key key = coffer_object_key_of(obj);
    /* read back in the same write transaction */
    assert_all_values(obj, sample_value);
    ts_commit(txn);

    txn = ts_begin(env->db, COFFER_TXN_READ);
    obj = get_obj(txn, env->all_types, key);
    assert_int_equal(coffer_object_class(obj), env->all_types);
    assert_all_values(obj, sample_value);
    coffer_txn_free(txn);

    /* and after closing and reopening the file */
    if (env->mode != TS_MEMORY) {
        ts_env_reopen(env, NULL, 0, 0);
        env->all_types = ts_class(env->db, "AllTypes");
        txn = ts_begin(env->db, COFFER_TXN_READ);
        obj = get_obj(txn, env->all_types, key);
        assert_all_values(obj, sample_value);
        coffer_txn_free(txn);
    }
}

/* Fields may be listed in any order. */
TS_ENV_TEST(test_fields_any_order)
{
    coffer_field fields[AT_COUNT];
    for (coffer_property_id p = 0; p < AT_COUNT; p++)
        fields[p] = ts_field(AT_COUNT - 1 - p, sample_value(AT_COUNT - 1 - p));
    coffer_txn *txn = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_object_key key = create_obj(txn, env->all_types, fields, AT_COUNT);
    ts_commit(txn);
    txn = ts_begin(env->db, COFFER_TXN_READ);
    coffer_object *obj = get_obj(txn, env->all_types, key);
    assert_all_values(obj, sample_value);
    coffer_txn_free(txn);
}

/* The default decimal is zero: any BID encoding of +0 (coefficient 0, not
 * NaN or infinity, positive sign), e.g. 0E+0 or all bits zero. */
static void assert_decimal_zero(coffer_object *obj, coffer_property_id p)
{
    coffer_value v;
    assert_ok(coffer_object_get_value(obj, p, &v));
    assert_int_equal(v.type, COFFER_TYPE_DECIMAL128);
    uint64_t hi = v.u.decimal128.w[1], lo = v.u.decimal128.w[0];
    assert_int_equal(hi >> 63, 0);               /* positive */
    assert_true((hi >> 61 & 3) != 3);            /* not a special or large-coefficient form */
    assert_int_equal(lo, 0);
    assert_int_equal(hi & 0x0001FFFFFFFFFFFFull, 0); /* coefficient 0 */
}

TS_ENV_TEST(test_defaults)
{
    coffer_txn *txn = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_object_key k1 = create_obj(txn, env->all_types, NULL, 0);
    coffer_field one[] = {ts_field(AT_STRING, ts_str("only this"))};
    coffer_object_key k2 = create_obj(txn, env->all_types, one, 1);
    ts_commit(txn);

    static const uint8_t zeros[16] = {0};
    coffer_value defaults[AT_COUNT] = {
        coffer_value_bool(false),
        coffer_value_int(0),
        coffer_value_float(0.0f),
        coffer_value_double(0.0),
        ts_str(""),
        coffer_value_binary("", 0),
        coffer_value_date(0, 0),
        coffer_value_object_id(zeros),
        coffer_value_uuid(zeros),
        coffer_value_decimal128(0, 0),
    };
    for (int p = 10; p < AT_COUNT; p++)
        defaults[p] = coffer_value_null();

    txn = ts_begin(env->db, COFFER_TXN_READ);
    coffer_object *obj = get_obj(txn, env->all_types, k1);
    for (coffer_property_id p = 0; p < AT_COUNT; p++)
        if (p != AT_DECIMAL)
            assert_value(obj, p, &defaults[p]);
    assert_decimal_zero(obj, AT_DECIMAL);
    obj = get_obj(txn, env->all_types, k2);
    for (coffer_property_id p = 0; p < AT_COUNT; p++) {
        if (p == AT_DECIMAL) {
            assert_decimal_zero(obj, AT_DECIMAL);
        } else if (p == AT_STRING) {
            coffer_value v = ts_str("only this");
            assert_value(obj, p, &v);
        } else {
            assert_value(obj, p, &defaults[p]);
        }
    }
    coffer_txn_free(txn);
}

/* Writes each value into property p of a new object, reads it back in the
 * write transaction and in a new read transaction. */
static void roundtrip_values(ts_env *env, coffer_property_id p, const coffer_value *vals, size_t n)
{
    coffer_object_key *keys = calloc(n, sizeof *keys);
    coffer_txn *txn = ts_begin(env->db, COFFER_TXN_WRITE);
    for (size_t i = 0; i < n; i++) {
        coffer_field f[] = {ts_field(p, vals[i])};
        coffer_object *obj = ts_create(txn, env->all_types, f, 1);
        keys[i] = coffer_object_key_of(obj);
        assert_value(obj, p, &vals[i]);
    }
    ts_commit(txn);
    txn = ts_begin(env->db, COFFER_TXN_READ);
    for (size_t i = 0; i < n; i++) {
        coffer_object *obj = get_obj(txn, env->all_types, keys[i]);
        assert_value(obj, p, &vals[i]);
        coffer_object_release(obj);
    }
    coffer_txn_free(txn);
    free(keys);
}

TS_ENV_TEST(test_int_extremes)
{
    coffer_value v[] = {coffer_value_int(INT64_MIN), coffer_value_int(INT64_MAX), coffer_value_int(0),
                        coffer_value_int(-1),        coffer_value_int(1),         coffer_value_int(INT64_MIN + 1),
                        coffer_value_int(256),       coffer_value_int(-129)};
    roundtrip_values(env, AT_INT, v, sizeof v / sizeof v[0]);
    roundtrip_values(env, AT_OPT_INT, v, sizeof v / sizeof v[0]);
}

TS_ENV_TEST(test_bool_values)
{
    coffer_value v[] = {coffer_value_bool(true), coffer_value_bool(false)};
    roundtrip_values(env, AT_BOOL, v, 2);
    roundtrip_values(env, AT_OPT_BOOL, v, 2);
}

TS_ENV_TEST(test_float_special)
{
    coffer_value f[] = {coffer_value_float(NAN),      coffer_value_float(INFINITY), coffer_value_float(-INFINITY),
                        coffer_value_float(-0.0f),    coffer_value_float(0.0f),     coffer_value_float(FLT_MAX),
                        coffer_value_float(-FLT_MIN), coffer_value_float(1e-45f) /* denormal */};
    roundtrip_values(env, AT_FLOAT, f, sizeof f / sizeof f[0]);
    roundtrip_values(env, AT_OPT_FLOAT, f, sizeof f / sizeof f[0]);
    coffer_value d[] = {coffer_value_double(NAN),      coffer_value_double(INFINITY), coffer_value_double(-INFINITY),
                        coffer_value_double(-0.0),     coffer_value_double(0.0),      coffer_value_double(DBL_MAX),
                        coffer_value_double(-DBL_MIN), coffer_value_double(4.9e-324), coffer_value_double(M_PI)};
    roundtrip_values(env, AT_DOUBLE, d, sizeof d / sizeof d[0]);
    roundtrip_values(env, AT_OPT_DOUBLE, d, sizeof d / sizeof d[0]);

    /* -0 keeps its sign */
    coffer_txn *txn = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_field fl[] = {ts_field(AT_DOUBLE, coffer_value_double(-0.0))};
    coffer_object *obj = ts_create(txn, env->all_types, fl, 1);
    double got = ts_get_double(obj, AT_DOUBLE);
    assert_true(got == 0.0 && signbit(got));
    ts_commit(txn);
}

TS_ENV_TEST(test_strings)
{
    size_t big_size = 100 * 1024;
    char *big = malloc(big_size + 1);
    for (size_t i = 0; i < big_size; i++)
        big[i] = (char)('a' + (i * 7 + i / 26) % 26);
    big[big_size] = 0;
    /* a string whose source buffer is not NUL-terminated */
    char unterminated[5] = {'a', 'b', 'c', 'd', 'e'};
    coffer_value v[] = {
        ts_str(""),
        ts_str("x"),
        coffer_value_string(UTF8_TEXT, SIZE_MAX),
        coffer_value_string(big, big_size),
        coffer_value_string(unterminated, 3),
        ts_str("with\ttabs\nand newlines"),
    };
    assert_int_equal(v[2].u.string.size, strlen(UTF8_TEXT));
    roundtrip_values(env, AT_STRING, v, sizeof v / sizeof v[0]);
    roundtrip_values(env, AT_OPT_STRING, v, sizeof v / sizeof v[0]);

    /* the empty string is not null on an optional property, and is
     * NUL-terminated when read back */
    coffer_txn *txn = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_field f[] = {ts_field(AT_OPT_STRING, ts_str(""))};
    coffer_object_key key = create_obj(txn, env->all_types, f, 1);
    ts_commit(txn);
    txn = ts_begin(env->db, COFFER_TXN_READ);
    coffer_object *obj = get_obj(txn, env->all_types, key);
    size_t size = 99;
    const char *s = ts_get_string(obj, AT_OPT_STRING, &size);
    assert_int_equal(size, 0);
    assert_string_equal(s, "");
    s = ts_get_string(obj, AT_STRING, &size);
    assert_int_equal(size, 0);
    coffer_txn_free(txn);
    free(big);
}

TS_ENV_TEST(test_binary)
{
    size_t big_size = 300 * 1024;
    unsigned char *big = malloc(big_size);
    ts_seed(11);
    ts_rand_bytes(big, big_size);
    unsigned char zeros[100] = {0};
    coffer_value v[] = {
        coffer_value_binary("", 0),
        coffer_value_binary(NULL, 0),
        coffer_value_binary(BIN_WITH_NULS, sizeof BIN_WITH_NULS),
        coffer_value_binary(zeros, sizeof zeros),
        coffer_value_binary(big, big_size),
    };
    coffer_value expect[] = {
        coffer_value_binary("", 0),
        coffer_value_binary("", 0),
        v[2],
        v[3],
        v[4],
    };
    coffer_object_key keys[5];
    coffer_txn *txn = ts_begin(env->db, COFFER_TXN_WRITE);
    for (int i = 0; i < 5; i++) {
        coffer_field f[] = {ts_field(AT_BINARY, v[i]), ts_field(AT_OPT_BINARY, v[i])};
        keys[i] = create_obj(txn, env->all_types, f, 2);
    }
    ts_commit(txn);
    txn = ts_begin(env->db, COFFER_TXN_READ);
    for (int i = 0; i < 5; i++) {
        coffer_object *obj = get_obj(txn, env->all_types, keys[i]);
        assert_value(obj, AT_BINARY, &expect[i]);
        assert_value(obj, AT_OPT_BINARY, &expect[i]);
    }
    coffer_txn_free(txn);
    free(big);
}

TS_ENV_TEST(test_dates)
{
    coffer_value v[] = {
        coffer_value_date(0, 0),
        coffer_value_date(-1, -500000000),
        coffer_value_date(-62135596800, 0),
        coffer_value_date(0, -1),
        coffer_value_date(0, 999999999),
        coffer_value_date(1700000000, 5),
        coffer_value_date(INT64_MAX, 999999999),
        coffer_value_date(INT64_MIN, -999999999),
        coffer_value_date(-86400 * 365, -123456789),
    };
    roundtrip_values(env, AT_DATE, v, sizeof v / sizeof v[0]);
    roundtrip_values(env, AT_OPT_DATE, v, sizeof v / sizeof v[0]);
}

TS_ENV_TEST(test_object_id_uuid_decimal)
{
    static const uint8_t zeros[16] = {0};
    static const uint8_t ones[16] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                     0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    coffer_object_id gen;
    assert_ok(coffer_object_id_generate(&gen));
    coffer_value o[] = {coffer_value_object_id(OID_A), coffer_value_object_id(OID_B), coffer_value_object_id(zeros),
                        coffer_value_object_id(ones), coffer_value_object_id(gen.bytes)};
    roundtrip_values(env, AT_OID, o, 5);
    roundtrip_values(env, AT_OPT_OID, o, 5);
    coffer_value u[] = {coffer_value_uuid(UUID_A), coffer_value_uuid(UUID_B), coffer_value_uuid(zeros),
                        coffer_value_uuid(ones)};
    roundtrip_values(env, AT_UUID, u, 4);
    roundtrip_values(env, AT_OPT_UUID, u, 4);
    coffer_decimal128 parsed;
    assert_ok(coffer_decimal128_from_string("-123.456E+10", &parsed));
    coffer_value d[] = {coffer_value_decimal128(DEC_1_25_LO, DEC_1_25_HI),
                        coffer_value_decimal128(DEC_M3E7_LO, DEC_M3E7_HI),
                        coffer_value_decimal128(0, 0x3040000000000000ull),
                        coffer_value_decimal128(0, 0x7C00000000000000ull), /* NaN */
                        coffer_value_decimal128(parsed.w[0], parsed.w[1])};
    roundtrip_values(env, AT_DECIMAL, d, 5);
    roundtrip_values(env, AT_OPT_DECIMAL, d, 5);
}

TS_ENV_TEST(test_optional_null)
{
    coffer_field fields[AT_COUNT - 10];
    for (int p = 10; p < AT_COUNT; p++)
        fields[p - 10] = ts_field(p, coffer_value_null());
    coffer_txn *txn = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_object *obj = NULL;
    assert_ok(coffer_object_create(txn, env->all_types, fields, AT_COUNT - 10, COFFER_UPDATE_ERROR, &obj));
    coffer_object_key key = coffer_object_key_of(obj);
    for (int p = 10; p < AT_COUNT; p++)
        assert_true(ts_get_is_null(obj, p));
    /* set each to a value and back to null */
    for (int p = 10; p < AT_COUNT; p++) {
        coffer_value v = sample_value(p);
        assert_ok(coffer_object_set_value(obj, p, &v));
        assert_value(obj, p, &v);
    }
    ts_commit(txn);
    txn = ts_begin(env->db, COFFER_TXN_WRITE);
    obj = get_obj(txn, env->all_types, key);
    for (int p = 10; p < AT_COUNT; p++) {
        coffer_value v = sample_value(p);
        assert_value(obj, p, &v);
        coffer_value n = coffer_value_null();
        assert_ok(coffer_object_set_value(obj, p, &n));
    }
    ts_commit(txn);
    txn = ts_begin(env->db, COFFER_TXN_READ);
    obj = get_obj(txn, env->all_types, key);
    for (int p = 10; p < AT_COUNT; p++)
        assert_true(ts_get_is_null(obj, p));
    coffer_txn_free(txn);
}

TS_ENV_TEST(test_wrong_types)
{
    coffer_txn *txn = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_object *obj = int_object(txn, env->all_types, 77);
    coffer_object_key key = coffer_object_key_of(obj);

    for (coffer_property_id p = 0; p < AT_COUNT; p++) {
        coffer_value bad = wrong_value(p);
        const char *pname = ts_all_types_properties[p].name;
        /* create */
        coffer_field f[] = {ts_field(AT_INT, coffer_value_int(1)), ts_field(p == AT_INT ? AT_STRING : p, bad)};
        if (p == AT_INT)
            f[0] = ts_field(AT_INT, bad), f[1] = ts_field(AT_STRING, ts_str("fine"));
        assert_status(coffer_object_create(txn, env->all_types, f, 2, COFFER_UPDATE_ERROR, NULL), COFFER_ERR_TYPE);
        assert_error_contains("AllTypes");
        assert_error_contains(pname);
        assert_error_contains(coffer_type_name(bad.type));
        /* set_value */
        assert_status(coffer_object_set_value(obj, p, &bad), COFFER_ERR_TYPE);
        assert_error_contains("AllTypes");
        assert_error_contains(pname);
        /* set_fields */
        coffer_field sf[] = {ts_field(p, bad)};
        assert_status(coffer_object_set_fields(obj, sf, 1), COFFER_ERR_TYPE);
        assert_error_contains(pname);
    }
    /* int given to float/double properties and float given to int */
    coffer_value i = coffer_value_int(3);
    assert_status(coffer_object_set_value(obj, AT_BOOL, &i), COFFER_ERR_TYPE);
    coffer_value d = coffer_value_double(1.5);
    assert_status(coffer_object_set_value(obj, AT_INT, &d), COFFER_ERR_TYPE);
    assert_error_contains("intValue");
    coffer_value s = ts_str("x");
    assert_status(coffer_object_set_value(obj, AT_BINARY, &s), COFFER_ERR_TYPE);
    coffer_value b = coffer_value_binary("x", 1);
    assert_status(coffer_object_set_value(obj, AT_STRING, &b), COFFER_ERR_TYPE);
    coffer_value u = coffer_value_uuid(UUID_A);
    assert_status(coffer_object_set_value(obj, AT_OID, &u), COFFER_ERR_TYPE);
    coffer_value o = coffer_value_object_id(OID_A);
    assert_status(coffer_object_set_value(obj, AT_UUID, &o), COFFER_ERR_TYPE);

    /* an unknown type tag */
    coffer_value weird;
    memset(&weird, 0, sizeof weird);
    weird.type = (coffer_type)77;
    assert_status2(coffer_object_set_value(obj, AT_INT, &weird), COFFER_ERR_TYPE, COFFER_ERR_INVALID_ARGUMENT);

    /* nothing was written by the failed calls */
    assert_int_equal(ts_count(txn, env->all_types), 1);
    assert_int_equal(ts_get_int(obj, AT_INT), 77);
    ts_commit(txn);
    txn = ts_begin(env->db, COFFER_TXN_READ);
    assert_int_equal(ts_count(txn, env->all_types), 1);
    obj = get_obj(txn, env->all_types, key);
    assert_int_equal(ts_get_int(obj, AT_INT), 77);
    size_t size;
    ts_get_string(obj, AT_STRING, &size);
    assert_int_equal(size, 0);
    coffer_txn_free(txn);
}

TS_ENV_TEST(test_null_into_required)
{
    coffer_txn *txn = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_object *obj = NULL;
    coffer_field init[] = {ts_field(AT_STRING, ts_str("keep"))};
    assert_ok(coffer_object_create(txn, env->all_types, init, 1, COFFER_UPDATE_ERROR, &obj));
    for (coffer_property_id p = 0; p < 10; p++) {
        const char *pname = ts_all_types_properties[p].name;
        coffer_value n = coffer_value_null();
        coffer_field f[] = {ts_field(p, n)};
        assert_status(coffer_object_create(txn, env->all_types, f, 1, COFFER_UPDATE_ERROR, NULL), COFFER_ERR_TYPE);
        assert_error_contains("AllTypes");
        assert_error_contains(pname);
        assert_status(coffer_object_set_value(obj, p, &n), COFFER_ERR_TYPE);
        assert_error_contains(pname);
        assert_status(coffer_object_set_fields(obj, f, 1), COFFER_ERR_TYPE);
        assert_error_contains(pname);
    }
    /* null into the required primary key of Person */
    coffer_field pf[] = {ts_field(PERSON_ID, coffer_value_null())};
    assert_status(coffer_object_create(txn, env->person, pf, 1, COFFER_UPDATE_ERROR, NULL), COFFER_ERR_TYPE);
    assert_error_contains("Person");
    assert_int_equal(ts_count(txn, env->all_types), 1);
    assert_int_equal(ts_count(txn, env->person), 0);
    size_t size;
    assert_string_equal(ts_get_string(obj, AT_STRING, &size), "keep");
    ts_commit(txn);
}

TS_ENV_TEST(test_invalid_arguments)
{
    coffer_txn *txn = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_object *obj = NULL;
    /* bad property id */
    coffer_field f1[] = {ts_field(AT_COUNT, coffer_value_int(1))};
    assert_status(coffer_object_create(txn, env->all_types, f1, 1, COFFER_UPDATE_ERROR, &obj),
                  COFFER_ERR_INVALID_ARGUMENT);
    coffer_field f2[] = {ts_field(100000, coffer_value_int(1))};
    assert_status(coffer_object_create(txn, env->all_types, f2, 1, COFFER_UPDATE_ERROR, &obj),
                  COFFER_ERR_INVALID_ARGUMENT);
    /* a property listed twice */
    coffer_field f3[] = {ts_field(AT_INT, coffer_value_int(1)), ts_field(AT_STRING, ts_str("a")),
                         ts_field(AT_INT, coffer_value_int(2))};
    assert_status(coffer_object_create(txn, env->all_types, f3, 3, COFFER_UPDATE_ERROR, &obj),
                  COFFER_ERR_INVALID_ARGUMENT);
    assert_error_contains("intValue");
    /* bad class id */
    assert_status(coffer_object_create(txn, 2, NULL, 0, COFFER_UPDATE_ERROR, &obj), COFFER_ERR_INVALID_ARGUMENT);
    assert_status(coffer_object_create(txn, 12345, NULL, 0, COFFER_UPDATE_ERROR, &obj),
                  COFFER_ERR_INVALID_ARGUMENT);
    /* NULL fields with a count */
    assert_status(coffer_object_create(txn, env->all_types, NULL, 2, COFFER_UPDATE_ERROR, &obj),
                  COFFER_ERR_INVALID_ARGUMENT);
    /* bad update policy */
    assert_status(coffer_object_create(txn, env->all_types, NULL, 0, 7, &obj), COFFER_ERR_INVALID_ARGUMENT);
    assert_int_equal(ts_count(txn, env->all_types), 0);

    /* out may be NULL; fields NULL with count 0 is fine */
    assert_ok(coffer_object_create(txn, env->all_types, NULL, 0, COFFER_UPDATE_ERROR, NULL));
    assert_ok(coffer_object_create(txn, env->all_types, NULL, 0, COFFER_UPDATE_ERROR, &obj));
    assert_int_equal(ts_count(txn, env->all_types), 2);

    /* object calls with bad ids and NULL pointers */
    coffer_value v;
    assert_status(coffer_object_get_value(obj, AT_COUNT, &v), COFFER_ERR_INVALID_ARGUMENT);
    assert_status(coffer_object_get_value(obj, AT_INT, NULL), COFFER_ERR_INVALID_ARGUMENT);
    coffer_value one = coffer_value_int(1);
    assert_status(coffer_object_set_value(obj, AT_COUNT, &one), COFFER_ERR_INVALID_ARGUMENT);
    assert_status(coffer_object_set_value(obj, AT_INT, NULL), COFFER_ERR_INVALID_ARGUMENT);
    assert_status(coffer_object_set_fields(obj, f1, 1), COFFER_ERR_INVALID_ARGUMENT);
    assert_status(coffer_object_set_fields(obj, f3, 3), COFFER_ERR_INVALID_ARGUMENT);
    assert_status(coffer_object_set_fields(obj, NULL, 1), COFFER_ERR_INVALID_ARGUMENT);
    assert_ok(coffer_object_set_fields(obj, NULL, 0));
    assert_int_equal(ts_get_int(obj, AT_INT), 0);

    coffer_object *got = NULL;
    assert_status(coffer_object_get(txn, 99, 1, &got), COFFER_ERR_INVALID_ARGUMENT);
    assert_status(coffer_object_get(txn, env->all_types, 1, NULL), COFFER_ERR_INVALID_ARGUMENT);
    assert_status(coffer_object_get(txn, env->all_types, 0, &got), COFFER_ERR_NOT_FOUND);
    assert_status(coffer_object_get(txn, env->all_types, 999999, &got), COFFER_ERR_NOT_FOUND);
    assert_status(coffer_object_get(txn, env->all_types, UINT64_MAX, &got), COFFER_ERR_NOT_FOUND);
    uint64_t n;
    assert_status(coffer_class_count(txn, 99, &n), COFFER_ERR_INVALID_ARGUMENT);
    assert_status(coffer_class_count(txn, env->all_types, NULL), COFFER_ERR_INVALID_ARGUMENT);
    coffer_iter *it = NULL;
    assert_status(coffer_class_iterate(txn, 99, &it), COFFER_ERR_INVALID_ARGUMENT);
    assert_status(coffer_class_iterate(txn, env->all_types, NULL), COFFER_ERR_INVALID_ARGUMENT);
    assert_status(coffer_class_clear(txn, 99), COFFER_ERR_INVALID_ARGUMENT);
    ts_commit(txn);
}

/* Values that break the value rules: a date whose nanoseconds are out of
 * range or of the other sign than its seconds, bytes with a NULL pointer
 * and a size, strings that are not UTF-8 or contain NUL. Each is refused
 * with an error naming the property (or, for the strings, stored exactly),
 * and never crashes. */
TS_ENV_TEST(test_malformed_values)
{
    coffer_txn *txn = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_value dates[] = {coffer_value_date(1, -5), coffer_value_date(-1, 5), coffer_value_date(0, 1000000000),
                            coffer_value_date(5, -1000000000), coffer_value_date(0, -1000000000),
                            coffer_value_date(3, 2000000000)};
    for (size_t i = 0; i < sizeof dates / sizeof dates[0]; i++) {
        coffer_field f[] = {ts_field(AT_DATE, dates[i])};
        assert_status2(coffer_object_create(txn, env->all_types, f, 1, COFFER_UPDATE_ERROR, NULL),
                       COFFER_ERR_INVALID_ARGUMENT, COFFER_ERR_TYPE);
        assert_error_contains("dateValue");
    }
    coffer_value nullbin;
    memset(&nullbin, 0, sizeof nullbin);
    nullbin.type = COFFER_TYPE_BINARY;
    nullbin.u.binary.data = NULL;
    nullbin.u.binary.size = 5;
    coffer_field fb[] = {ts_field(AT_BINARY, nullbin)};
    assert_status(coffer_object_create(txn, env->all_types, fb, 1, COFFER_UPDATE_ERROR, NULL),
                  COFFER_ERR_INVALID_ARGUMENT);
    assert_error_contains("binaryValue");
    coffer_value nullstr = nullbin;
    nullstr.type = COFFER_TYPE_STRING;
    coffer_field fs[] = {ts_field(AT_OPT_STRING, nullstr)};
    assert_status(coffer_object_create(txn, env->all_types, fs, 1, COFFER_UPDATE_ERROR, NULL),
                  COFFER_ERR_INVALID_ARGUMENT);
    assert_error_contains("optStringValue");
    assert_int_equal(ts_count(txn, env->all_types), 0);

    const char *bad_strings[] = {"ab\0cd", "\xff\xfe", "\xc3", "abc\xe6\x97", "\xed\xa0\x80" /* surrogate */};
    const size_t bad_sizes[] = {5, 2, 1, 5, 3};
    for (size_t i = 0; i < 5; i++) {
        coffer_value v = coffer_value_string(bad_strings[i], bad_sizes[i]);
        coffer_field f[] = {ts_field(AT_STRING, v)};
        coffer_object *obj = NULL;
        coffer_status st = coffer_object_create(txn, env->all_types, f, 1, COFFER_UPDATE_ERROR, &obj);
        if (st == COFFER_OK) {
            assert_value(obj, AT_STRING, &v);
        } else {
            assert_status2(st, COFFER_ERR_INVALID_ARGUMENT, COFFER_ERR_TYPE);
            assert_error_contains("stringValue");
        }
    }
    ts_commit(txn);
}

/* A failed create inside a transaction writes nothing; the transaction
 * carries on and commits the other writes. */
TS_ENV_TEST(test_failed_create_keeps_txn)
{
    coffer_txn *txn = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_field a[] = {ts_field(AT_INT, coffer_value_int(1))};
    create_obj(txn, env->all_types, a, 1);
    coffer_field bad[] = {ts_field(AT_INT, coffer_value_int(2)), ts_field(AT_BOOL, ts_str("nope"))};
    assert_status(coffer_object_create(txn, env->all_types, bad, 2, COFFER_UPDATE_ERROR, NULL), COFFER_ERR_TYPE);
    coffer_field c[] = {ts_field(AT_INT, coffer_value_int(3))};
    create_obj(txn, env->all_types, c, 1);
    ts_commit(txn);
    txn = ts_begin(env->db, COFFER_TXN_READ);
    assert_int_equal(ts_count(txn, env->all_types), 2);
    coffer_iter *it = NULL;
    assert_ok(coffer_class_iterate(txn, env->all_types, &it));
    coffer_object *obj;
    assert_ok(coffer_iter_next(it, &obj));
    assert_int_equal(ts_get_int(obj, AT_INT), 1);
    assert_ok(coffer_iter_next(it, &obj));
    assert_int_equal(ts_get_int(obj, AT_INT), 3);
    assert_status(coffer_iter_next(it, &obj), COFFER_DONE);
    coffer_iter_free(it);
    coffer_txn_free(txn);
}

TS_ENV_TEST(test_set_value)
{
    coffer_txn *txn = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_object *obj = create_sample(txn, env->all_types);
    coffer_object_key key = coffer_object_key_of(obj);
    ts_commit(txn);

    txn = ts_begin(env->db, COFFER_TXN_WRITE);
    obj = get_obj(txn, env->all_types, key);
    for (coffer_property_id p = 0; p < AT_COUNT; p++) {
        coffer_value v = other_value(p);
        assert_ok(coffer_object_set_value(obj, p, &v));
        assert_value(obj, p, &v);
        /* the others are untouched */
        for (coffer_property_id q = p + 1; q < AT_COUNT; q++) {
            coffer_value w = sample_value(q);
            assert_value(obj, q, &w);
        }
    }
    ts_commit(txn);
    txn = ts_begin(env->db, COFFER_TXN_READ);
    obj = get_obj(txn, env->all_types, key);
    assert_all_values(obj, other_value);
    coffer_txn_free(txn);

    /* a set that is aborted leaves the committed value */
    txn = ts_begin(env->db, COFFER_TXN_WRITE);
    obj = get_obj(txn, env->all_types, key);
    coffer_value v = coffer_value_int(555);
    assert_ok(coffer_object_set_value(obj, AT_INT, &v));
    assert_ok(coffer_txn_abort(txn));
    coffer_txn_free(txn);
    txn = ts_begin(env->db, COFFER_TXN_READ);
    obj = get_obj(txn, env->all_types, key);
    assert_int_equal(ts_get_int(obj, AT_INT), -42);
    coffer_txn_free(txn);
}

/* A string grows from empty to large and shrinks again, many times. */
TS_ENV_TEST(test_set_value_resizes)
{
    coffer_txn *txn = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_object *obj = ts_create(txn, env->all_types, NULL, 0);
    coffer_object_key key = coffer_object_key_of(obj);
    char *buf = malloc(70000);
    size_t sizes[] = {0, 10, 5000, 3, 65000, 0, 4097, 1};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        memset(buf, 'a' + (int)i, sizes[i]);
        coffer_value v = coffer_value_string(buf, sizes[i]);
        assert_ok(coffer_object_set_value(obj, AT_STRING, &v));
        coffer_value b = coffer_value_binary(buf, sizes[i]);
        assert_ok(coffer_object_set_value(obj, AT_OPT_BINARY, &b));
        coffer_value n = coffer_value_int((int64_t)i);
        assert_ok(coffer_object_set_value(obj, AT_INT, &n));
        assert_value(obj, AT_STRING, &v);
        assert_value(obj, AT_OPT_BINARY, &b);
        assert_int_equal(ts_get_int(obj, AT_INT), (int64_t)i);
    }
    ts_commit(txn);
    txn = ts_begin(env->db, COFFER_TXN_READ);
    obj = get_obj(txn, env->all_types, key);
    size_t size;
    const char *s = ts_get_string(obj, AT_STRING, &size);
    assert_int_equal(size, 1);
    assert_int_equal(s[0], 'a' + 7);
    coffer_txn_free(txn);
    free(buf);
}

TS_ENV_TEST(test_set_fields)
{
    coffer_txn *txn = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_field init[] = {ts_field(AT_INT, coffer_value_int(1)), ts_field(AT_STRING, ts_str("one")),
                           ts_field(AT_DOUBLE, coffer_value_double(1.5))};
    coffer_object *obj = ts_create(txn, env->all_types, init, 3);
    coffer_object_key key = coffer_object_key_of(obj);

    /* success: several fields at once */
    coffer_field upd[] = {ts_field(AT_STRING, ts_str("two")), ts_field(AT_INT, coffer_value_int(2)),
                          ts_field(AT_OPT_INT, coffer_value_int(22))};
    assert_ok(coffer_object_set_fields(obj, upd, 3));
    assert_int_equal(ts_get_int(obj, AT_INT), 2);
    assert_int_equal(ts_get_int(obj, AT_OPT_INT), 22);
    assert_string_equal(ts_get_string(obj, AT_STRING, NULL), "two");
    assert_true(ts_get_double(obj, AT_DOUBLE) == 1.5);
    ts_commit(txn);

    /* all or nothing: the last field is wrong */
    txn = ts_begin(env->db, COFFER_TXN_WRITE);
    obj = get_obj(txn, env->all_types, key);
    coffer_field bad[] = {ts_field(AT_INT, coffer_value_int(3)), ts_field(AT_STRING, ts_str("three")),
                          ts_field(AT_DOUBLE, ts_str("not a double"))};
    assert_status(coffer_object_set_fields(obj, bad, 3), COFFER_ERR_TYPE);
    assert_error_contains("doubleValue");
    assert_int_equal(ts_get_int(obj, AT_INT), 2);
    assert_string_equal(ts_get_string(obj, AT_STRING, NULL), "two");
    assert_true(ts_get_double(obj, AT_DOUBLE) == 1.5);
    /* the first field is wrong */
    coffer_field bad2[] = {ts_field(AT_BOOL, coffer_value_null()), ts_field(AT_INT, coffer_value_int(4))};
    assert_status(coffer_object_set_fields(obj, bad2, 2), COFFER_ERR_TYPE);
    assert_int_equal(ts_get_int(obj, AT_INT), 2);
    /* a value too large in the middle */
    size_t big = (size_t)COFFER_MAX_VALUE_SIZE + 1;
    char *huge = malloc(big);
    memset(huge, 'h', big);
    coffer_field bad3[] = {ts_field(AT_INT, coffer_value_int(5)), ts_field(AT_STRING, coffer_value_string(huge, big)),
                           ts_field(AT_OPT_INT, coffer_value_int(55))};
    assert_status(coffer_object_set_fields(obj, bad3, 3), COFFER_ERR_LIMIT);
    free(huge);
    assert_int_equal(ts_get_int(obj, AT_INT), 2);
    assert_int_equal(ts_get_int(obj, AT_OPT_INT), 22);
    ts_commit(txn);

    txn = ts_begin(env->db, COFFER_TXN_READ);
    obj = get_obj(txn, env->all_types, key);
    assert_int_equal(ts_get_int(obj, AT_INT), 2);
    assert_string_equal(ts_get_string(obj, AT_STRING, NULL), "two");
    assert_int_equal(ts_get_int(obj, AT_OPT_INT), 22);
    coffer_txn_free(txn);
}

TS_ENV_TEST(test_delete)
{
    coffer_txn *txn = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_object_key keys[3];
    create_int_objects(txn, env->all_types, 3, keys);
    ts_commit(txn);

    txn = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_object *obj = get_obj(txn, env->all_types, keys[1]);
    assert_int_equal(coffer_object_is_valid(obj), 1);
    assert_ok(coffer_object_delete(obj));
    assert_int_equal(coffer_object_is_valid(obj), 0);
    coffer_value v;
    assert_status(coffer_object_get_value(obj, AT_INT, &v), COFFER_ERR_NOT_FOUND);
    coffer_value one = coffer_value_int(1);
    assert_status(coffer_object_set_value(obj, AT_INT, &one), COFFER_ERR_NOT_FOUND);
    coffer_field f[] = {ts_field(AT_INT, one)};
    assert_status(coffer_object_set_fields(obj, f, 1), COFFER_ERR_NOT_FOUND);
    assert_status(coffer_object_delete(obj), COFFER_ERR_NOT_FOUND);
    coffer_object *again = NULL;
    assert_status(coffer_object_get(txn, env->all_types, keys[1], &again), COFFER_ERR_NOT_FOUND);
    assert_int_equal(ts_count(txn, env->all_types), 2);

    /* a second handle to the same object sees the deletion too */
    coffer_object *h0 = get_obj(txn, env->all_types, keys[0]);
    coffer_object *h0b = get_obj(txn, env->all_types, keys[0]);
    assert_ok(coffer_object_delete(h0));
    assert_int_equal(coffer_object_is_valid(h0b), 0);
    assert_status(coffer_object_get_value(h0b, AT_INT, &v), COFFER_ERR_NOT_FOUND);
    assert_status(coffer_object_delete(h0b), COFFER_ERR_NOT_FOUND);
    coffer_object_release(obj);
    coffer_object_release(h0);
    coffer_object_release(h0b);
    ts_commit(txn);

    txn = ts_begin(env->db, COFFER_TXN_READ);
    assert_status(coffer_object_get(txn, env->all_types, keys[1], &again), COFFER_ERR_NOT_FOUND);
    assert_status(coffer_object_get(txn, env->all_types, keys[0], &again), COFFER_ERR_NOT_FOUND);
    assert_int_equal(ts_count(txn, env->all_types), 1);
    obj = get_obj(txn, env->all_types, keys[2]);
    assert_int_equal(ts_get_int(obj, AT_INT), 2);
    coffer_iter *it = NULL;
    assert_ok(coffer_class_iterate(txn, env->all_types, &it));
    coffer_object_key *got = NULL;
    assert_int_equal(ts_collect_keys(it, &got), 1);
    assert_int_equal(got[0], keys[2]);
    free(got);
    coffer_txn_free(txn);

    /* a deletion that is aborted leaves the object */
    txn = ts_begin(env->db, COFFER_TXN_WRITE);
    obj = get_obj(txn, env->all_types, keys[2]);
    assert_ok(coffer_object_delete(obj));
    assert_ok(coffer_txn_abort(txn));
    coffer_txn_free(txn);
    txn = ts_begin(env->db, COFFER_TXN_READ);
    obj = get_obj(txn, env->all_types, keys[2]);
    assert_int_equal(coffer_object_is_valid(obj), 1);
    coffer_txn_free(txn);
}

/* A read transaction's handle becomes invalid for the deletion only in a
 * transaction that sees it. */
TS_ENV_TEST(test_delete_in_other_txn)
{
    coffer_txn *txn = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_object_key key = create_obj(txn, env->all_types, NULL, 0);
    ts_commit(txn);
    coffer_txn *rd = ts_begin(env->db, COFFER_TXN_READ);
    coffer_object *r = get_obj(rd, env->all_types, key);
    txn = ts_begin(env->db, COFFER_TXN_WRITE);
    assert_ok(coffer_object_delete(get_obj(txn, env->all_types, key)));
    ts_commit(txn);
    assert_int_equal(coffer_object_is_valid(r), 1);
    assert_int_equal(ts_get_int(r, AT_INT), 0);
    coffer_txn_free(rd);
}

TS_ENV_TEST(test_keys_increase_never_reused)
{
    coffer_txn *txn = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_object_key prev = 0, last = 0;
    for (int i = 0; i < 20; i++) {
        coffer_object_key k = create_obj(txn, env->all_types, NULL, 0);
        assert_true(k > prev);
        prev = k;
    }
    last = prev;
    ts_commit(txn);

    /* delete the last object, create another: a new, larger key */
    txn = ts_begin(env->db, COFFER_TXN_WRITE);
    assert_ok(coffer_object_delete(get_obj(txn, env->all_types, last)));
    coffer_object_key k = create_obj(txn, env->all_types, NULL, 0);
    assert_true(k > last);
    last = k;
    ts_commit(txn);

    txn = ts_begin(env->db, COFFER_TXN_WRITE);
    assert_ok(coffer_object_delete(get_obj(txn, env->all_types, last)));
    ts_commit(txn);
    txn = ts_begin(env->db, COFFER_TXN_WRITE);
    k = create_obj(txn, env->all_types, NULL, 0);
    assert_true(k > last);
    last = k;
    assert_ok(coffer_object_delete(get_obj(txn, env->all_types, last)));
    ts_commit(txn);

    /* reopen (for memory keep a second handle so the data stays) */
    coffer_db *keep = ts_env_keep(env);
    ts_env_reopen(env, ts_std_schema, TS_STD_SCHEMA_COUNT, 1);
    env->all_types = ts_class(env->db, "AllTypes");
    txn = ts_begin(env->db, COFFER_TXN_WRITE);
    k = create_obj(txn, env->all_types, NULL, 0);
    assert_true(k > last);
    ts_commit(txn);
    coffer_close(keep);

    /* keys of different classes are independent; the first key of a class is 1 */
    txn = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_field f[] = {ts_field(PERSON_ID, coffer_value_int(1))};
    coffer_object *p = ts_create(txn, env->person, f, 1);
    assert_int_equal(coffer_object_key_of(p), 1);
    ts_commit(txn);
}

/* Keys are not reused after class_clear either, nor after every object
 * was deleted one by one, even across a reopen. */
TS_ENV_TEST(test_keys_after_clear)
{
    coffer_db *keep = ts_env_keep(env);
    coffer_txn *txn = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_object_key last = 0;
    for (int i = 0; i < 5; i++)
        last = create_obj(txn, env->all_types, NULL, 0);
    coffer_field pf[] = {ts_field(PERSON_ID, coffer_value_int(1))};
    coffer_object *p = ts_create(txn, env->person, pf, 1);
    coffer_object_key plast = coffer_object_key_of(p);
    ts_commit(txn);
    txn = ts_begin(env->db, COFFER_TXN_WRITE);
    assert_ok(coffer_class_clear(txn, env->all_types));
    assert_ok(coffer_object_delete(get_obj(txn, env->person, plast)));
    ts_commit(txn);
    txn = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_object_key k = create_obj(txn, env->all_types, NULL, 0);
    assert_true(k > last);
    last = k;
    assert_ok(coffer_class_clear(txn, env->all_types));
    ts_commit(txn);

    /* both classes are empty now; reopen */
    ts_env_reopen(env, ts_std_schema, TS_STD_SCHEMA_COUNT, 1);
    env->all_types = ts_class(env->db, "AllTypes");
    env->person = ts_class(env->db, "Person");
    txn = ts_begin(env->db, COFFER_TXN_WRITE);
    assert_int_equal(ts_count(txn, env->all_types), 0);
    assert_int_equal(ts_count(txn, env->person), 0);
    k = create_obj(txn, env->all_types, NULL, 0);
    assert_true(k > last);
    assert_ok(coffer_object_create(txn, env->person, pf, 1, COFFER_UPDATE_ERROR, &p));
    assert_true(coffer_object_key_of(p) > plast);
    ts_commit(txn);
    coffer_close(keep);
}

/* Two handles on one object in one transaction see each other's writes. */
TS_ENV_TEST(test_two_handles_same_object)
{
    coffer_txn *txn = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_field f[] = {ts_field(AT_INT, coffer_value_int(1)), ts_field(AT_STRING, ts_str("one"))};
    coffer_object_key key = create_obj(txn, env->all_types, f, 2);
    ts_commit(txn);

    txn = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_object *a = get_obj(txn, env->all_types, key);
    coffer_object *b = get_obj(txn, env->all_types, key);
    assert_int_equal(ts_get_int(a, AT_INT), 1);
    assert_string_equal(ts_get_string(a, AT_STRING, NULL), "one");
    coffer_value two = coffer_value_int(2);
    assert_ok(coffer_object_set_value(b, AT_INT, &two));
    coffer_value s = ts_str("two, and a longer string than before");
    assert_ok(coffer_object_set_value(b, AT_STRING, &s));
    assert_int_equal(ts_get_int(a, AT_INT), 2);
    assert_string_equal(ts_get_string(a, AT_STRING, NULL), "two, and a longer string than before");
    coffer_field g[] = {ts_field(AT_INT, coffer_value_int(3))};
    assert_ok(coffer_object_set_fields(a, g, 1));
    assert_int_equal(ts_get_int(b, AT_INT), 3);
    /* a handle from an iterator, too */
    coffer_iter *it = NULL;
    assert_ok(coffer_class_iterate(txn, env->all_types, &it));
    coffer_object *c = NULL;
    assert_ok(coffer_iter_next(it, &c));
    assert_int_equal(ts_get_int(c, AT_INT), 3);
    coffer_value four = coffer_value_int(4);
    assert_ok(coffer_object_set_value(c, AT_INT, &four));
    assert_int_equal(ts_get_int(a, AT_INT), 4);
    assert_int_equal(ts_get_int(b, AT_INT), 4);
    coffer_iter_free(it);
    ts_commit(txn);
    txn = ts_begin(env->db, COFFER_TXN_READ);
    coffer_object *r = get_obj(txn, env->all_types, key);
    assert_int_equal(ts_get_int(r, AT_INT), 4);
    assert_string_equal(ts_get_string(r, AT_STRING, NULL), "two, and a longer string than before");
    coffer_txn_free(txn);
}

TS_ENV_TEST(test_count_iterate)
{
    enum { N = 2000 };
    coffer_txn *txn = ts_begin(env->db, COFFER_TXN_READ);
    assert_int_equal(ts_count(txn, env->all_types), 0);
    coffer_iter *it = NULL;
    coffer_object *obj = NULL;
    assert_ok(coffer_class_iterate(txn, env->all_types, &it));
    assert_status(coffer_iter_next(it, &obj), COFFER_DONE);
    coffer_iter_free(it);
    coffer_txn_free(txn);

    coffer_object_key *keys = calloc(N, sizeof *keys);
    txn = ts_begin(env->db, COFFER_TXN_WRITE);
    for (int i = 0; i < N; i++) {
        char name[32];
        snprintf(name, sizeof name, "obj-%d", i);
        coffer_field f[] = {ts_field(AT_INT, coffer_value_int(i)), ts_field(AT_STRING, ts_str(name))};
        keys[i] = create_obj(txn, env->all_types, f, 2);
        if (i % 500 == 0)
            assert_int_equal(ts_count(txn, env->all_types), (uint64_t)i + 1);
    }
    assert_int_equal(ts_count(txn, env->all_types), N);
    ts_commit(txn);

    /* delete every third */
    txn = ts_begin(env->db, COFFER_TXN_WRITE);
    int remaining = N;
    for (int i = 0; i < N; i += 3) {
        coffer_object *o = get_obj(txn, env->all_types, keys[i]);
        assert_ok(coffer_object_delete(o));
        coffer_object_release(o);
        remaining--;
    }
    assert_int_equal(ts_count(txn, env->all_types), (uint64_t)remaining);
    ts_commit(txn);

    txn = ts_begin(env->db, COFFER_TXN_READ);
    assert_int_equal(ts_count(txn, env->all_types), (uint64_t)remaining);
    assert_ok(coffer_class_iterate(txn, env->all_types, &it));
    int seen = 0;
    int expect_i = 1;
    coffer_object_key prev = 0;
    while (ts_next(it, &obj)) {
        coffer_object_key k = coffer_object_key_of(obj);
        assert_true(k > prev);
        prev = k;
        assert_int_equal(coffer_object_class(obj), env->all_types);
        assert_int_equal(ts_get_int(obj, AT_INT), expect_i);
        char name[32];
        snprintf(name, sizeof name, "obj-%d", expect_i);
        assert_string_equal(ts_get_string(obj, AT_STRING, NULL), name);
        seen++;
        expect_i++;
        if (expect_i % 3 == 0)
            expect_i++;
    }
    assert_int_equal(seen, remaining);
    /* after COFFER_DONE it stays done */
    assert_status(coffer_iter_next(it, &obj), COFFER_DONE);
    coffer_iter_free(it);

    /* an iterator freed early; two iterators at once */
    coffer_iter *a = NULL, *b = NULL;
    assert_ok(coffer_class_iterate(txn, env->all_types, &a));
    assert_ok(coffer_class_iterate(txn, env->all_types, &b));
    coffer_object *oa, *ob;
    assert_ok(coffer_iter_next(a, &oa));
    assert_ok(coffer_iter_next(b, &ob));
    assert_int_equal(coffer_object_key_of(oa), coffer_object_key_of(ob));
    assert_ok(coffer_iter_next(a, &oa));
    assert_true(coffer_object_key_of(oa) > coffer_object_key_of(ob));
    coffer_iter_free(a);
    assert_ok(coffer_iter_next(b, &ob));
    assert_int_equal(ts_get_int(ob, AT_INT), 2);
    /* an iterator left for coffer_txn_free */
    coffer_txn_free(txn);
    free(keys);
}

TS_ENV_TEST(test_class_clear)
{
    coffer_txn *txn = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_object_key keys[100];
    create_int_objects(txn, env->all_types, 100, keys);
    coffer_field pf[] = {ts_field(PERSON_ID, coffer_value_int(1)), ts_field(PERSON_NAME, ts_str("Zed"))};
    assert_ok(coffer_object_create(txn, env->person, pf, 2, COFFER_UPDATE_ERROR, NULL));
    ts_commit(txn);

    /* clear and abort: nothing changes */
    txn = ts_begin(env->db, COFFER_TXN_WRITE);
    assert_ok(coffer_class_clear(txn, env->all_types));
    assert_int_equal(ts_count(txn, env->all_types), 0);
    assert_ok(coffer_txn_abort(txn));
    coffer_txn_free(txn);
    assert_int_equal(ts_count_of(env->db, "AllTypes"), 100);

    txn = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_object *held = get_obj(txn, env->all_types, keys[5]);
    assert_ok(coffer_class_clear(txn, env->all_types));
    assert_int_equal(ts_count(txn, env->all_types), 0);
    assert_int_equal(coffer_object_is_valid(held), 0);
    coffer_object *obj = NULL;
    assert_status(coffer_object_get(txn, env->all_types, keys[0], &obj), COFFER_ERR_NOT_FOUND);
    /* clearing an empty class is fine */
    assert_ok(coffer_class_clear(txn, env->all_types));
    ts_commit(txn);

    txn = ts_begin(env->db, COFFER_TXN_READ);
    assert_int_equal(ts_count(txn, env->all_types), 0);
    for (int i = 0; i < 100; i += 17)
        assert_status(coffer_object_get(txn, env->all_types, keys[i], &obj), COFFER_ERR_NOT_FOUND);
    coffer_iter *it = NULL;
    assert_ok(coffer_class_iterate(txn, env->all_types, &it));
    assert_status(coffer_iter_next(it, &obj), COFFER_DONE);
    coffer_iter_free(it);
    /* the other class is untouched */
    assert_int_equal(ts_count(txn, env->person), 1);
    coffer_value pk = coffer_value_int(1);
    assert_ok(coffer_object_find(txn, env->person, &pk, &obj));
    assert_string_equal(ts_get_string(obj, PERSON_NAME, NULL), "Zed");
    coffer_txn_free(txn);

    /* the class is usable after clearing */
    txn = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_field f[] = {ts_field(AT_INT, coffer_value_int(1000))};
    coffer_object_key k = create_obj(txn, env->all_types, f, 1);
    assert_true(k > keys[99]);
    assert_int_equal(ts_count(txn, env->all_types), 1);
    ts_commit(txn);
}

/* Iterating in a write transaction while updating, deleting and creating
 * objects: it terminates and no object is seen twice. */
TS_ENV_TEST(test_iterate_while_writing)
{
    enum { N = 200 };
    coffer_txn *txn = ts_begin(env->db, COFFER_TXN_WRITE);
    create_int_objects(txn, env->all_types, N, NULL);
    ts_commit(txn);

    txn = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_iter *it = NULL;
    assert_ok(coffer_class_iterate(txn, env->all_types, &it));
    coffer_object_key *seen = calloc(4 * N, sizeof *seen);
    int n = 0, created = 0;
    char big[3000];
    memset(big, 'g', sizeof big - 1);
    big[sizeof big - 1] = 0;
    coffer_object *obj = NULL;
    while (ts_next(it, &obj)) {
        assert_true(n < 4 * N);
        coffer_object_key k = coffer_object_key_of(obj);
        for (int j = 0; j < n; j++)
            assert_true(seen[j] != k);
        seen[n++] = k;
        int64_t i = ts_get_int(obj, AT_INT);
        if (i >= N)
            continue; /* created during the iteration */
        if (i % 3 == 0) {
            /* grow the record a lot */
            coffer_value v = ts_str(big);
            assert_ok(coffer_object_set_value(obj, AT_STRING, &v));
        } else if (i % 3 == 1) {
            assert_ok(coffer_object_delete(obj));
        }
        if (created < 20 && i % 10 == 5) {
            coffer_field f[] = {ts_field(AT_INT, coffer_value_int(100000 + created))};
            assert_ok(coffer_object_create(txn, env->all_types, f, 1, COFFER_UPDATE_ERROR, NULL));
            created++;
        }
    }
    coffer_iter_free(it);
    free(seen);
    assert_true(n >= N);
    assert_true(n <= N + created);
    ts_commit(txn);
    assert_int_equal(ts_count_of(env->db, "AllTypes"), (uint64_t)(N - (N + 1) / 3 + created));
}

/* Borrowed values stay valid until the documented events only. */
TS_ENV_TEST(test_borrowed_values_lifetime)
{
    coffer_txn *txn = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_field f1[] = {ts_field(AT_STRING, ts_str("first string value")),
                         ts_field(AT_BINARY, coffer_value_binary("first-binary", 12))};
    coffer_field f2[] = {ts_field(AT_STRING, ts_str("second string value")),
                         ts_field(AT_BINARY, coffer_value_binary("second-binary", 13))};
    coffer_object_key k1 = create_obj(txn, env->all_types, f1, 2);
    coffer_object_key k2 = create_obj(txn, env->all_types, f2, 2);
    ts_commit(txn);

    txn = ts_begin(env->db, COFFER_TXN_READ);
    coffer_object *o1 = get_obj(txn, env->all_types, k1);
    coffer_object *o2 = get_obj(txn, env->all_types, k2);
    coffer_value s1, b1, s2, b2, i1;
    assert_ok(coffer_object_get_value(o1, AT_STRING, &s1));
    assert_ok(coffer_object_get_value(o1, AT_BINARY, &b1));
    assert_ok(coffer_object_get_value(o1, AT_INT, &i1));
    assert_ok(coffer_object_get_value(o2, AT_STRING, &s2));
    assert_ok(coffer_object_get_value(o2, AT_BINARY, &b2));
    coffer_object *o1b = get_obj(txn, env->all_types, k1);
    coffer_value s1b;
    assert_ok(coffer_object_get_value(o1b, AT_STRING, &s1b));
    /* all of them still valid */
    assert_int_equal(s1.u.string.size, strlen("first string value"));
    assert_memory_equal(s1.u.string.data, "first string value", s1.u.string.size + 1);
    assert_memory_equal(b1.u.binary.data, "first-binary", 12);
    assert_memory_equal(s2.u.string.data, "second string value", s2.u.string.size + 1);
    assert_memory_equal(b2.u.binary.data, "second-binary", 13);
    assert_memory_equal(s1b.u.string.data, "first string value", s1b.u.string.size + 1);
    coffer_object_release(o1b);
    /* releasing another handle does not affect o1's values */
    assert_memory_equal(s1.u.string.data, "first string value", s1.u.string.size + 1);
    coffer_txn_free(txn);
}

/* An object handle stays usable across other writes in the transaction. */
TS_ENV_TEST(test_handle_survives_writes)
{
    coffer_txn *txn = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_field f[] = {ts_field(AT_INT, coffer_value_int(10)), ts_field(AT_STRING, ts_str("ten"))};
    coffer_object *a = ts_create(txn, env->all_types, f, 2);
    for (int i = 0; i < 300; i++) {
        char buf[64];
        snprintf(buf, sizeof buf, "filler %d", i);
        coffer_field g[] = {ts_field(AT_INT, coffer_value_int(i)), ts_field(AT_STRING, ts_str(buf))};
        assert_ok(coffer_object_create(txn, env->all_types, g, 2, COFFER_UPDATE_ERROR, NULL));
    }
    assert_int_equal(ts_get_int(a, AT_INT), 10);
    assert_string_equal(ts_get_string(a, AT_STRING, NULL), "ten");
    coffer_value v = ts_str("TEN");
    assert_ok(coffer_object_set_value(a, AT_STRING, &v));
    assert_string_equal(ts_get_string(a, AT_STRING, NULL), "TEN");
    ts_commit(txn);
}

TS_ENV_TEST(test_object_release)
{
    coffer_txn *txn = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_object *obj = int_object(txn, env->all_types, 99);
    coffer_object_key key = coffer_object_key_of(obj);
    coffer_object_release(obj);
    coffer_object_release(NULL);
    ts_commit(txn);

    txn = ts_begin(env->db, COFFER_TXN_READ);
    for (int i = 0; i < 20000; i++) {
        obj = get_obj(txn, env->all_types, key);
        if (i % 1000 == 0)
            assert_int_equal(ts_get_int(obj, AT_INT), 99);
        coffer_object_release(obj);
    }
    obj = get_obj(txn, env->all_types, key);
    assert_int_equal(ts_get_int(obj, AT_INT), 99);
    coffer_txn_free(txn);
}

TS_ENV_TEST(test_value_too_large)
{
    size_t big = (size_t)COFFER_MAX_VALUE_SIZE + 1;
    char *huge = malloc(big);
    memset(huge, 's', big);
    coffer_txn *txn = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_field f1[] = {ts_field(AT_STRING, coffer_value_string(huge, big))};
    assert_status(coffer_object_create(txn, env->all_types, f1, 1, COFFER_UPDATE_ERROR, NULL), COFFER_ERR_LIMIT);
    assert_error_contains("stringValue");
    coffer_field f2[] = {ts_field(AT_OPT_BINARY, coffer_value_binary(huge, big))};
    assert_status(coffer_object_create(txn, env->all_types, f2, 1, COFFER_UPDATE_ERROR, NULL), COFFER_ERR_LIMIT);
    assert_error_contains("optBinaryValue");
    coffer_object *obj = ts_create(txn, env->all_types, NULL, 0);
    coffer_value v = coffer_value_binary(huge, big);
    assert_status(coffer_object_set_value(obj, AT_BINARY, &v), COFFER_ERR_LIMIT);
    assert_int_equal(ts_count(txn, env->all_types), 1);

    /* exactly the maximum is accepted */
    coffer_value exact = coffer_value_binary(huge, COFFER_MAX_VALUE_SIZE);
    assert_ok(coffer_object_set_value(obj, AT_BINARY, &exact));
    coffer_object_key key = coffer_object_key_of(obj);
    ts_commit(txn);
    txn = ts_begin(env->db, COFFER_TXN_READ);
    obj = get_obj(txn, env->all_types, key);
    assert_value(obj, AT_BINARY, &exact);
    coffer_txn_free(txn);
    free(huge);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TS_TEST_ALL_MODES(test_roundtrip_all_types),
        TS_TEST_ALL_MODES(test_fields_any_order),
        TS_TEST_ALL_MODES(test_defaults),
        TS_TEST_ALL_MODES(test_int_extremes),
        TS_TEST_ALL_MODES(test_bool_values),
        TS_TEST_ALL_MODES(test_float_special),
        TS_TEST_ALL_MODES(test_strings),
        TS_TEST_ALL_MODES(test_binary),
        TS_TEST_ALL_MODES(test_dates),
        TS_TEST_ALL_MODES(test_object_id_uuid_decimal),
        TS_TEST_ALL_MODES(test_optional_null),
        TS_TEST_ALL_MODES(test_wrong_types),
        TS_TEST_ALL_MODES(test_null_into_required),
        TS_TEST_ALL_MODES(test_invalid_arguments),
        TS_TEST_ALL_MODES(test_failed_create_keeps_txn),
        TS_TEST_ALL_MODES(test_malformed_values),
        TS_TEST_ALL_MODES(test_set_value),
        TS_TEST_ALL_MODES(test_set_value_resizes),
        TS_TEST_ALL_MODES(test_set_fields),
        TS_TEST_ALL_MODES(test_delete),
        TS_TEST_ALL_MODES(test_delete_in_other_txn),
        TS_TEST_ALL_MODES(test_keys_increase_never_reused),
        TS_TEST_ALL_MODES(test_keys_after_clear),
        TS_TEST_ALL_MODES(test_count_iterate),
        TS_TEST_ALL_MODES(test_class_clear),
        TS_TEST_ALL_MODES(test_iterate_while_writing),
        TS_TEST_ALL_MODES(test_two_handles_same_object),
        TS_TEST_ALL_MODES(test_borrowed_values_lifetime),
        TS_TEST_ALL_MODES(test_handle_survives_writes),
        TS_TEST_ALL_MODES(test_object_release),
        TS_TEST_ALL_MODES(test_value_too_large),
    };
    return cmocka_run_group_tests_name("objects", tests, NULL, NULL);
}
