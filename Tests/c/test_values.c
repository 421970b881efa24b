/*
 * test_values.c — value constructors and equality, type names, ObjectIds,
 * limits, the version, and decimal128 parsing, formatting, comparison and
 * conversions (including vectors from the BSON corpus, decimal128-1.json of
 * mongodb/specifications).
 */
#define _POSIX_C_SOURCE 200809L

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "coffer.h"
#include "test_support.h"
/* Internal helpers under test; a relative path, since the tests' include
 * path has only include/ and Tests/c/. */
#include "../../Sources/CCoffer/util/decimal128.h"

/* ------------------------------------------------------------------------ */
/* Helpers                                                                   */
/* ------------------------------------------------------------------------ */

#define assert_error_has(needle)                                                          \
    do {                                                                                  \
        const char *msg_ = coffer_last_error();                                           \
        if (strstr(msg_, (needle)) == NULL)                                               \
            fail_msg("last error \"%s\" does not contain \"%s\"", msg_, (needle));        \
    } while (0)

static const char *dec_str(const coffer_decimal128 *d, char *buf)
{
    coffer_decimal128_to_string(d, buf);
    return buf;
}

static void check_round_trip(const char *in, const char *expected_out)
{
    char buf[COFFER_DECIMAL128_STRING_SIZE];
    coffer_decimal128 d = ts_dec(in);
    dec_str(&d, buf);
    if (strcmp(buf, expected_out) != 0)
        fail_msg("\"%s\" formats as \"%s\", expected \"%s\"", in, buf, expected_out);
}

static void check_encoding(const char *in, uint64_t high, uint64_t low)
{
    coffer_decimal128 d = ts_dec(in);
    if (d.w[1] != high || d.w[0] != low)
        fail_msg("\"%s\" encodes as %016llx %016llx, expected %016llx %016llx", in,
                 (unsigned long long)d.w[1], (unsigned long long)d.w[0], (unsigned long long)high,
                 (unsigned long long)low);
}

static void check_parse_fails(const char *in, const char *message_part)
{
    coffer_decimal128 d = {{0x1234, 0x5678}};
    coffer_clear_error();
    coffer_status st = coffer_decimal128_from_string(in, &d);
    if (st != COFFER_ERR_INVALID_ARGUMENT)
        fail_msg("decimal128_from_string(\"%s\") = %d, expected INVALID_ARGUMENT", in, (int)st);
    assert_int_equal(coffer_last_status(), COFFER_ERR_INVALID_ARGUMENT);
    assert_error_has("decimal128");
    assert_error_has(message_part);
    /* The output is untouched on failure. */
    assert_true(d.w[0] == 0x1234 && d.w[1] == 0x5678);
}

/* ------------------------------------------------------------------------ */
/* Version and limits                                                        */
/* ------------------------------------------------------------------------ */

static void test_version_and_limits(void **state)
{
    (void)state;
    assert_string_equal(coffer_version(), COFFER_VERSION_STRING);
    assert_string_equal(coffer_version(), "0.1.0");
    assert_int_equal(coffer_version_number(), COFFER_VERSION_NUMBER);
    assert_int_equal(coffer_version_number(),
                     COFFER_VERSION_MAJOR * 10000 + COFFER_VERSION_MINOR * 100 + COFFER_VERSION_PATCH);
    assert_int_equal(coffer_max_class_name(), COFFER_MAX_CLASS_NAME);
    assert_int_equal(coffer_max_class_name(), 57);
    assert_int_equal(coffer_max_property_name(), COFFER_MAX_PROPERTY_NAME);
    assert_int_equal(coffer_max_property_name(), 63);
    assert_int_equal(coffer_encryption_key_size(), COFFER_ENCRYPTION_KEY_SIZE);
    assert_int_equal(coffer_encryption_key_size(), 64);
}

/* ------------------------------------------------------------------------ */
/* Constructors                                                              */
/* ------------------------------------------------------------------------ */

static void test_constructors(void **state)
{
    (void)state;
    coffer_value v;

    v = coffer_value_null();
    assert_int_equal(v.type, COFFER_TYPE_NULL);

    v = coffer_value_bool(true);
    assert_int_equal(v.type, COFFER_TYPE_BOOL);
    assert_true(v.u.boolean);
    v = coffer_value_bool(false);
    assert_false(v.u.boolean);

    v = coffer_value_int(INT64_MIN);
    assert_int_equal(v.type, COFFER_TYPE_INT);
    assert_true(v.u.integer == INT64_MIN);
    v = coffer_value_int(INT64_MAX);
    assert_true(v.u.integer == INT64_MAX);

    v = coffer_value_float(1.5f);
    assert_int_equal(v.type, COFFER_TYPE_FLOAT);
    assert_true(v.u.float_value == 1.5f);

    v = coffer_value_double(-2.25);
    assert_int_equal(v.type, COFFER_TYPE_DOUBLE);
    assert_true(v.u.double_value == -2.25);

    const char *text = "hello, wörld";
    v = coffer_value_string(text, SIZE_MAX);
    assert_int_equal(v.type, COFFER_TYPE_STRING);
    assert_ptr_equal(v.u.string.data, text);
    assert_int_equal(v.u.string.size, strlen(text));
    v = coffer_value_string(text, 5);
    assert_ptr_equal(v.u.string.data, text);
    assert_int_equal(v.u.string.size, 5);
    v = coffer_value_string("", SIZE_MAX);
    assert_int_equal(v.u.string.size, 0);
    /* NULL with size 0 (or SIZE_MAX) is the empty string, never a NULL pointer. */
    v = coffer_value_string(NULL, 0);
    assert_int_equal(v.type, COFFER_TYPE_STRING);
    assert_int_equal(v.u.string.size, 0);
    assert_non_null(v.u.string.data);
    v = coffer_value_string(NULL, SIZE_MAX);
    assert_int_equal(v.u.string.size, 0);
    assert_non_null(v.u.string.data);

    const uint8_t blob[4] = {0, 1, 0xfe, 0xff};
    v = coffer_value_binary(blob, sizeof blob);
    assert_int_equal(v.type, COFFER_TYPE_BINARY);
    assert_ptr_equal(v.u.binary.data, blob);
    assert_int_equal(v.u.binary.size, 4);
    v = coffer_value_binary(NULL, 0);
    assert_int_equal(v.type, COFFER_TYPE_BINARY);
    assert_int_equal(v.u.binary.size, 0);
    assert_non_null(v.u.binary.data);

    v = coffer_value_date(-5, -123456789);
    assert_int_equal(v.type, COFFER_TYPE_DATE);
    assert_true(v.u.date.seconds == -5);
    assert_int_equal(v.u.date.nanoseconds, -123456789);

    const uint8_t oid[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
    v = coffer_value_object_id(oid);
    assert_int_equal(v.type, COFFER_TYPE_OBJECT_ID);
    assert_memory_equal(v.u.object_id.bytes, oid, 12);

    const uint8_t uuid[16] = {0xde, 0xad, 0xbe, 0xef, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
    v = coffer_value_uuid(uuid);
    assert_int_equal(v.type, COFFER_TYPE_UUID);
    assert_memory_equal(v.u.uuid.bytes, uuid, 16);

    v = coffer_value_decimal128(1, 0x3040000000000000ULL);
    assert_int_equal(v.type, COFFER_TYPE_DECIMAL128);
    assert_true(v.u.decimal128.w[0] == 1);
    assert_true(v.u.decimal128.w[1] == 0x3040000000000000ULL);
}

/* ------------------------------------------------------------------------ */
/* Equality                                                                  */
/* ------------------------------------------------------------------------ */

static int eq(coffer_value a, coffer_value b)
{
    int r = coffer_value_equal(&a, &b);
    /* Symmetric. */
    assert_int_equal(r, coffer_value_equal(&b, &a));
    return r;
}

static void test_value_equal(void **state)
{
    (void)state;
    coffer_value n = coffer_value_null();

    assert_true(coffer_value_equal(NULL, NULL));
    assert_false(coffer_value_equal(&n, NULL));
    assert_false(coffer_value_equal(NULL, &n));
    assert_true(coffer_value_equal(&n, &n));

    assert_true(eq(coffer_value_null(), coffer_value_null()));
    assert_true(eq(coffer_value_bool(true), coffer_value_bool(true)));
    assert_false(eq(coffer_value_bool(true), coffer_value_bool(false)));
    assert_true(eq(coffer_value_int(42), coffer_value_int(42)));
    assert_false(eq(coffer_value_int(42), coffer_value_int(-42)));

    /* Different types never compare equal, even with "equal" contents. */
    assert_false(eq(coffer_value_int(0), coffer_value_null()));
    assert_false(eq(coffer_value_int(1), coffer_value_bool(true)));
    assert_false(eq(coffer_value_int(1), coffer_value_double(1.0)));
    assert_false(eq(coffer_value_float(1.0f), coffer_value_double(1.0)));
    assert_false(eq(coffer_value_string("", 0), coffer_value_binary("", 0)));
    assert_false(eq(coffer_value_string(NULL, 0), coffer_value_null()));

    /* Floating point: NaN equals NaN, otherwise ordinary ==. */
    assert_true(eq(coffer_value_float(1.25f), coffer_value_float(1.25f)));
    assert_false(eq(coffer_value_float(1.25f), coffer_value_float(1.5f)));
    assert_true(eq(coffer_value_float(NAN), coffer_value_float(NAN)));
    assert_true(eq(coffer_value_float(NAN), coffer_value_float(-NAN)));
    assert_false(eq(coffer_value_float(NAN), coffer_value_float(0.0f)));
    assert_true(eq(coffer_value_float(INFINITY), coffer_value_float(INFINITY)));
    assert_false(eq(coffer_value_float(INFINITY), coffer_value_float(-INFINITY)));
    assert_true(eq(coffer_value_double(0.1), coffer_value_double(0.1)));
    assert_false(eq(coffer_value_double(0.1), coffer_value_double(0.1 + 1e-17 * 2)));
    assert_true(eq(coffer_value_double(NAN), coffer_value_double(NAN)));
    assert_false(eq(coffer_value_double(NAN), coffer_value_double(1.0)));
    assert_false(eq(coffer_value_double(NAN), coffer_value_double(INFINITY)));
    assert_true(eq(coffer_value_double(-0.0), coffer_value_double(0.0)));

    /* Strings: size, then bytes; borrowed storage does not matter. */
    char a[] = "abc", b[] = "abc", c[] = "abd";
    assert_true(eq(coffer_value_string(a, SIZE_MAX), coffer_value_string(b, SIZE_MAX)));
    assert_false(eq(coffer_value_string(a, SIZE_MAX), coffer_value_string(c, SIZE_MAX)));
    assert_false(eq(coffer_value_string(a, 2), coffer_value_string(b, 3)));
    assert_true(eq(coffer_value_string(a, 2), coffer_value_string(c, 2)));
    assert_true(eq(coffer_value_string(NULL, 0), coffer_value_string("", SIZE_MAX)));
    assert_true(eq(coffer_value_string(a, 0), coffer_value_string(NULL, 0)));
    /* Hand-built values with NULL data and size 0 equal the empty string. */
    coffer_value raw_empty = {.type = COFFER_TYPE_STRING, .u.string = {NULL, 0}};
    assert_true(eq(raw_empty, coffer_value_string("", 0)));
    coffer_value raw_bad = {.type = COFFER_TYPE_STRING, .u.string = {NULL, 3}};
    assert_false(eq(raw_bad, coffer_value_string(a, 3)));
    /* Embedded bytes past a NUL count for binaries. */
    const uint8_t x[3] = {0, 1, 2}, y[3] = {0, 1, 3};
    assert_true(eq(coffer_value_binary(x, 3), coffer_value_binary(x, 3)));
    assert_false(eq(coffer_value_binary(x, 3), coffer_value_binary(y, 3)));
    assert_true(eq(coffer_value_binary(x, 2), coffer_value_binary(y, 2)));
    assert_false(eq(coffer_value_binary(x, 2), coffer_value_binary(x, 3)));
    assert_true(eq(coffer_value_binary(NULL, 0), coffer_value_binary(x, 0)));
    coffer_value raw_bin = {.type = COFFER_TYPE_BINARY, .u.binary = {NULL, 0}};
    assert_true(eq(raw_bin, coffer_value_binary(y, 0)));

    assert_true(eq(coffer_value_date(10, 5), coffer_value_date(10, 5)));
    assert_false(eq(coffer_value_date(10, 5), coffer_value_date(10, 6)));
    assert_false(eq(coffer_value_date(10, 5), coffer_value_date(11, 5)));

    uint8_t o1[12] = {0}, o2[12] = {0};
    o2[11] = 1;
    assert_true(eq(coffer_value_object_id(o1), coffer_value_object_id(o1)));
    assert_false(eq(coffer_value_object_id(o1), coffer_value_object_id(o2)));
    uint8_t u1[16] = {0}, u2[16] = {0};
    u2[0] = 0x80;
    assert_true(eq(coffer_value_uuid(u1), coffer_value_uuid(u1)));
    assert_false(eq(coffer_value_uuid(u1), coffer_value_uuid(u2)));

    /* Decimals compare by value: a cohort is equal, -0 == 0, NaN == NaN. */
    coffer_decimal128 one = ts_dec("1"), one0 = ts_dec("1.0"), two = ts_dec("2"), z = ts_dec("0"), mz = ts_dec("-0.00");
    coffer_decimal128 nan1 = ts_dec("NaN"), nan2 = {{0x12, 0xFE00000000000000ULL}};
    assert_true(eq(coffer_value_decimal128(one.w[0], one.w[1]), coffer_value_decimal128(one0.w[0], one0.w[1])));
    assert_false(eq(coffer_value_decimal128(one.w[0], one.w[1]), coffer_value_decimal128(two.w[0], two.w[1])));
    assert_true(eq(coffer_value_decimal128(z.w[0], z.w[1]), coffer_value_decimal128(mz.w[0], mz.w[1])));
    assert_true(eq(coffer_value_decimal128(nan1.w[0], nan1.w[1]), coffer_value_decimal128(nan2.w[0], nan2.w[1])));
    assert_false(eq(coffer_value_decimal128(nan1.w[0], nan1.w[1]), coffer_value_decimal128(z.w[0], z.w[1])));

    /* Types outside the enum are never equal. */
    coffer_value odd1 = {.type = (coffer_type)19}, odd2 = {.type = (coffer_type)19};
    assert_false(coffer_value_equal(&odd1, &odd2));
}

/* ------------------------------------------------------------------------ */
/* Type names                                                                */
/* ------------------------------------------------------------------------ */

static void test_type_name(void **state)
{
    (void)state;
    assert_string_equal(coffer_type_name(COFFER_TYPE_NULL), "null");
    assert_string_equal(coffer_type_name(COFFER_TYPE_BOOL), "bool");
    assert_string_equal(coffer_type_name(COFFER_TYPE_INT), "int");
    assert_string_equal(coffer_type_name(COFFER_TYPE_FLOAT), "float");
    assert_string_equal(coffer_type_name(COFFER_TYPE_DOUBLE), "double");
    assert_string_equal(coffer_type_name(COFFER_TYPE_STRING), "string");
    assert_string_equal(coffer_type_name(COFFER_TYPE_BINARY), "data");
    assert_string_equal(coffer_type_name(COFFER_TYPE_DATE), "date");
    assert_string_equal(coffer_type_name(COFFER_TYPE_OBJECT_ID), "objectId");
    assert_string_equal(coffer_type_name(COFFER_TYPE_UUID), "uuid");
    assert_string_equal(coffer_type_name(COFFER_TYPE_DECIMAL128), "decimal128");
    assert_string_equal(coffer_type_name(COFFER_TYPE_LINK), "link");
    assert_string_equal(coffer_type_name(COFFER_TYPE_MIXED), "mixed");
    assert_string_equal(coffer_type_name(COFFER_TYPE_LINKING_OBJECTS), "linkingObjects");
    assert_string_equal(coffer_type_name(COFFER_TYPE_LIST), "list");
    assert_string_equal(coffer_type_name(COFFER_TYPE_SET), "set");
    assert_string_equal(coffer_type_name(COFFER_TYPE_MAP), "map");
    assert_string_equal(coffer_type_name((coffer_type)19), "unknown");
    assert_string_equal(coffer_type_name((coffer_type)31), "unknown");
    assert_string_equal(coffer_type_name((coffer_type)1000), "unknown");
    assert_string_equal(coffer_type_name((coffer_type)-1), "unknown");
}

/* ------------------------------------------------------------------------ */
/* ObjectId                                                                  */
/* ------------------------------------------------------------------------ */

static uint32_t oid_seconds(const coffer_object_id *o)
{
    return (uint32_t)o->bytes[0] << 24 | (uint32_t)o->bytes[1] << 16 | (uint32_t)o->bytes[2] << 8 |
           o->bytes[3];
}

static uint32_t oid_counter(const coffer_object_id *o)
{
    return (uint32_t)o->bytes[9] << 16 | (uint32_t)o->bytes[10] << 8 | o->bytes[11];
}

static void test_object_id_strings(void **state)
{
    (void)state;
    coffer_object_id oid;
    char buf[COFFER_OBJECT_ID_STRING_SIZE];
    const uint8_t expected[12] = {0x50, 0x7f, 0x1f, 0x77, 0xbc, 0xf8, 0x6c, 0xd7, 0x99, 0x43, 0x90, 0x11};

    assert_int_equal(coffer_object_id_from_string("507f1f77bcf86cd799439011", &oid), COFFER_OK);
    assert_memory_equal(oid.bytes, expected, 12);
    coffer_object_id_to_string(&oid, buf);
    assert_string_equal(buf, "507f1f77bcf86cd799439011");

    /* Upper and mixed case parse; output is lowercase. */
    assert_int_equal(coffer_object_id_from_string("507F1F77BCF86CD799439011", &oid), COFFER_OK);
    assert_memory_equal(oid.bytes, expected, 12);
    assert_int_equal(coffer_object_id_from_string("507f1F77bCf86cD799439011", &oid), COFFER_OK);
    assert_memory_equal(oid.bytes, expected, 12);
    coffer_object_id_to_string(&oid, buf);
    assert_string_equal(buf, "507f1f77bcf86cd799439011");

    assert_int_equal(coffer_object_id_from_string("000000000000000000000000", &oid), COFFER_OK);
    coffer_object_id_to_string(&oid, buf);
    assert_string_equal(buf, "000000000000000000000000");
    assert_int_equal(coffer_object_id_from_string("ffffffffffffffffffffffff", &oid), COFFER_OK);
    for (int i = 0; i < 12; i++)
        assert_int_equal(oid.bytes[i], 0xff);
    coffer_object_id_to_string(&oid, buf);
    assert_string_equal(buf, "ffffffffffffffffffffffff");

    /* Every byte value round-trips. */
    for (int base = 0; base < 256; base += 12) {
        coffer_object_id a, b;
        for (int i = 0; i < 12; i++)
            a.bytes[i] = (uint8_t)(base + i);
        coffer_object_id_to_string(&a, buf);
        assert_int_equal(strlen(buf), 24);
        assert_int_equal(coffer_object_id_from_string(buf, &b), COFFER_OK);
        assert_memory_equal(a.bytes, b.bytes, 12);
    }

    /* Failures leave the output untouched and name the input. */
    static const char *const bad[] = {
        "",
        "xyz",
        "507f1f77bcf86cd79943901",   /* 23 digits */
        "507f1f77bcf86cd7994390111", /* 25 digits */
        "507f1f77bcf86cd79943901g",
        "g07f1f77bcf86cd799439011",
        " 507f1f77bcf86cd79943901",
        "507f1f77bcf86cd79943901 ",
        "507f1f77-bcf86cd7994390",
        "0x507f1f77bcf86cd7994390",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        coffer_object_id out;
        memset(&out, 0xAA, sizeof out);
        coffer_clear_error();
        if (coffer_object_id_from_string(bad[i], &out) != COFFER_ERR_INVALID_ARGUMENT)
            fail_msg("ObjectId \"%s\" was accepted", bad[i]);
        assert_int_equal(coffer_last_status(), COFFER_ERR_INVALID_ARGUMENT);
        char quoted[64];
        snprintf(quoted, sizeof quoted, "'%s'", bad[i]);
        assert_error_has(quoted);
        assert_error_has("ObjectId");
        assert_error_has("24 hexadecimal digits");
        for (int k = 0; k < 12; k++)
            assert_int_equal(out.bytes[k], 0xAA);
    }
    coffer_object_id_from_string("xyz", &oid);
    assert_string_equal(coffer_last_error(), "ObjectId: 'xyz' is not 24 hexadecimal digits");

    /* Control characters are escaped in the message. */
    assert_int_equal(coffer_object_id_from_string("ab\ncd", &oid), COFFER_ERR_INVALID_ARGUMENT);
    assert_error_has("'ab\\x0acd'");

    /* A long input is truncated in the message, not overflowing it. */
    char longer[300];
    memset(longer, 'a', sizeof longer - 1);
    longer[sizeof longer - 1] = '\0';
    assert_int_equal(coffer_object_id_from_string(longer, &oid), COFFER_ERR_INVALID_ARGUMENT);
    assert_error_has("'aaaa");

    assert_int_equal(coffer_object_id_from_string(NULL, &oid), COFFER_ERR_INVALID_ARGUMENT);
    assert_error_has("ObjectId");
    assert_int_equal(coffer_object_id_from_string("507f1f77bcf86cd799439011", NULL),
                     COFFER_ERR_INVALID_ARGUMENT);

    /* NULL arguments to to_string do not crash. */
    coffer_object_id_to_string(&oid, NULL);
    strcpy(buf, "x");
    coffer_object_id_to_string(NULL, buf);
    assert_string_equal(buf, "");
}

static void test_object_id_generate(void **state)
{
    (void)state;
    enum { N = 20000 };
    coffer_object_id *ids = malloc(N * sizeof *ids);
    assert_non_null(ids);

    uint32_t before = (uint32_t)time(NULL);
    for (int i = 0; i < N; i++)
        assert_int_equal(coffer_object_id_generate(&ids[i]), COFFER_OK);
    uint32_t after = (uint32_t)time(NULL);

    for (int i = 0; i < N; i++) {
        /* 4-byte big-endian seconds near now. */
        uint32_t s = oid_seconds(&ids[i]);
        assert_true(s >= before && s <= after);
        /* The 5 process-random bytes are the same in every id. */
        assert_memory_equal(ids[i].bytes + 4, ids[0].bytes + 4, 5);
        /* The 3-byte big-endian counter goes up by one each time (mod 2^24). */
        if (i > 0)
            assert_int_equal(oid_counter(&ids[i]), (oid_counter(&ids[i - 1]) + 1) & 0xFFFFFF);
    }
    /* All distinct: the counter alone makes them so within 2^24 calls. */
    for (int i = 1; i < N; i++)
        assert_memory_not_equal(ids[i].bytes, ids[i - 1].bytes, 12);

    /* The random part is not all zeros (probability 2^-40). */
    static const uint8_t zeros[5] = {0};
    assert_memory_not_equal(ids[0].bytes + 4, zeros, 5);

    /* Strings of generated ids round-trip. */
    char buf[COFFER_OBJECT_ID_STRING_SIZE];
    coffer_object_id back;
    coffer_object_id_to_string(&ids[N - 1], buf);
    assert_int_equal(coffer_object_id_from_string(buf, &back), COFFER_OK);
    assert_memory_equal(back.bytes, ids[N - 1].bytes, 12);

    assert_int_equal(coffer_object_id_generate(NULL), COFFER_ERR_INVALID_ARGUMENT);
    assert_error_has("ObjectId");
    free(ids);
}

enum { THREADS = 8, PER_THREAD = 5000 };

static void *generate_many(void *arg)
{
    coffer_object_id *ids = arg;
    for (int i = 0; i < PER_THREAD; i++)
        if (coffer_object_id_generate(&ids[i]) != COFFER_OK)
            memset(&ids[i], 0, sizeof ids[i]);
    return NULL;
}

static int compare_counter(const void *a, const void *b)
{
    uint32_t x = oid_counter(a), y = oid_counter(b);
    return x < y ? -1 : x > y;
}

static void test_object_id_threads(void **state)
{
    (void)state;
    coffer_object_id *ids = calloc(THREADS * PER_THREAD, sizeof *ids);
    pthread_t threads[THREADS];
    assert_non_null(ids);
    coffer_object_id first;
    assert_int_equal(coffer_object_id_generate(&first), COFFER_OK);
    for (int t = 0; t < THREADS; t++)
        assert_int_equal(pthread_create(&threads[t], NULL, generate_many, ids + t * PER_THREAD), 0);
    for (int t = 0; t < THREADS; t++)
        assert_int_equal(pthread_join(threads[t], NULL), 0);

    /* Every counter value is distinct and they are consecutive after `first`
     * (mod 2^24): no increment was lost or duplicated. */
    size_t n = THREADS * PER_THREAD;
    uint32_t base = (oid_counter(&first) + 1) & 0xFFFFFF;
    for (size_t i = 0; i < n; i++) {
        assert_memory_equal(ids[i].bytes + 4, first.bytes + 4, 5);
        uint32_t c = (oid_counter(&ids[i]) - base) & 0xFFFFFF;
        ids[i].bytes[9] = (uint8_t)(c >> 16);
        ids[i].bytes[10] = (uint8_t)(c >> 8);
        ids[i].bytes[11] = (uint8_t)c;
    }
    qsort(ids, n, sizeof *ids, compare_counter);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(oid_counter(&ids[i]), i);
    free(ids);
}

static void test_object_id_fork(void **state)
{
    (void)state;
    coffer_object_id parent, parent2, child;
    int fds[2];
    assert_int_equal(coffer_object_id_generate(&parent), COFFER_OK);
    assert_int_equal(pipe(fds), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        int ok = coffer_object_id_generate(&child) == COFFER_OK &&
                 write(fds[1], &child, sizeof child) == (ssize_t)sizeof child;
        _exit(ok ? 0 : 1);
    }
    close(fds[1]);
    assert_int_equal(read(fds[0], &child, sizeof child), (ssize_t)sizeof child);
    close(fds[0]);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    /* The child drew its own random bytes; the parent kept its own. */
    assert_memory_not_equal(child.bytes + 4, parent.bytes + 4, 5);
    assert_int_equal(coffer_object_id_generate(&parent2), COFFER_OK);
    assert_memory_equal(parent2.bytes + 4, parent.bytes + 4, 5);
    assert_int_equal(oid_counter(&parent2), (oid_counter(&parent) + 1) & 0xFFFFFF);
}

/* ------------------------------------------------------------------------ */
/* decimal128: BSON corpus vectors                                           */
/* ------------------------------------------------------------------------ */

/* From decimal128-1.json: `input` is the degenerate form when there is one
 * (NULL: parse the canonical string); high/low the canonical BSON bytes;
 * lossy entries are only checked in the bytes -> string direction (and the
 * degenerate string must parse). */
struct corpus_entry {
    const char *input;
    const char *canonical;
    uint64_t high, low;
    int lossy;
};

static const struct corpus_entry corpus[] = {
    {NULL, "NaN", 0x7C00000000000000ULL, 0x0000000000000000ULL, 0},
    {NULL, "NaN", 0xFC00000000000000ULL, 0x0000000000000000ULL, 1},
    {"-NaN", "NaN", 0xFC00000000000000ULL, 0x0000000000000000ULL, 1},
    {NULL, "NaN", 0x7E00000000000000ULL, 0x0000000000000000ULL, 1},
    {NULL, "NaN", 0xFE00000000000000ULL, 0x0000000000000000ULL, 1},
    {NULL, "NaN", 0x7E00000000000000ULL, 0x0000000000000012ULL, 1},
    {NULL, "Infinity", 0x7800000000000000ULL, 0x0000000000000000ULL, 0},
    {NULL, "-Infinity", 0xF800000000000000ULL, 0x0000000000000000ULL, 0},
    {NULL, "0", 0x6C10000000000000ULL, 0x0000000000000000ULL, 1},
    {NULL, "-0", 0xEC10000000EFBEADULL, 0xDE1032547698BADCULL, 1},
    {NULL, "0E+3", 0x6C11FFFFFFFFFFFFULL, 0xFFFFFFFFFFFFFFFFULL, 1},
    {NULL, "0.000001234567890123456789012345678901234", 0x2FF23CDE6FFF9732ULL, 0xDE825CD07E96AFF2ULL, 0},
    {NULL, "0.001234", 0x3034000000000000ULL, 0x00000000000004D2ULL, 0},
    {NULL, "0.00123400000", 0x302A000000000000ULL, 0x00000000075AEF40ULL, 0},
    {NULL, "0.1", 0x303E000000000000ULL, 0x0000000000000001ULL, 0},
    {NULL, "0.1234567890123456789012345678901234", 0x2FFC3CDE6FFF9732ULL, 0xDE825CD07E96AFF2ULL, 0},
    {NULL, "0", 0x3040000000000000ULL, 0x0000000000000000ULL, 0},
    {NULL, "-0", 0xB040000000000000ULL, 0x0000000000000000ULL, 0},
    {NULL, "-0.0", 0xB03E000000000000ULL, 0x0000000000000000ULL, 0},
    {NULL, "2", 0x3040000000000000ULL, 0x0000000000000002ULL, 0},
    {NULL, "2.000", 0x303A000000000000ULL, 0x00000000000007D0ULL, 0},
    {NULL, "1234567890123456789012345678901234", 0x30403CDE6FFF9732ULL, 0xDE825CD07E96AFF2ULL, 0},
    {NULL, "9.999999999999999999999999999999999E-6143", 0x0001ED09BEAD87C0ULL, 0x378D8E63FFFFFFFFULL, 0},
    {NULL, "1E-6176", 0x0000000000000000ULL, 0x0000000000000001ULL, 0},
    {NULL, "-1E-6176", 0x8000000000000000ULL, 0x0000000000000001ULL, 0},
    {NULL, "1.234567890123456789012345678901234E-7", 0x2FF03CDE6FFF9732ULL, 0xDE825CD07E96AFF2ULL, 0},
    {NULL, "-1.00E-8", 0xB02C000000000000ULL, 0x0000000000000064ULL, 0},
    {NULL, "0E+6000", 0x5F20000000000000ULL, 0x0000000000000000ULL, 0},
    {NULL, "0E-611", 0x2B7A000000000000ULL, 0x0000000000000000ULL, 0},
    {NULL, "1E+3", 0x3046000000000000ULL, 0x0000000000000001ULL, 0},
    {NULL, "1.050E+4", 0x3042000000000000ULL, 0x000000000000041AULL, 0},
    {NULL, "1.05E+3", 0x3042000000000000ULL, 0x0000000000000069ULL, 0},
    {NULL, "5192296858534827628530496329220095", 0x3040FFFFFFFFFFFFULL, 0xFFFFFFFFFFFFFFFFULL, 0},
    {NULL, "1.000000000000000000000000000000000E+6144", 0x5FFE314DC6448D93ULL, 0x38C15B0A00000000ULL, 0},
    {NULL, "9.999999999999999999999999999999999E+6144", 0x5FFFED09BEAD87C0ULL, 0x378D8E63FFFFFFFFULL, 0},
    {"-100E-10", "-1.00E-8", 0xB02C000000000000ULL, 0x0000000000000064ULL, 0},
    {"1E3", "1E+3", 0x3046000000000000ULL, 0x0000000000000001ULL, 0},
    {"1e+3", "1E+3", 0x3046000000000000ULL, 0x0000000000000001ULL, 0},
    {"12345689012345789012345E+12", "1.2345689012345789012345E+34", 0x305800000000029DULL, 0x42DA3A76F9E0D979ULL, 0},
    {"+1234567890123456789012345678901234", "1234567890123456789012345678901234", 0x30403CDE6FFF9732ULL, 0xDE825CD07E96AFF2ULL, 0},
    {"nan", "NaN", 0x7C00000000000000ULL, 0x0000000000000000ULL, 0},
    {"nAn", "NaN", 0x7C00000000000000ULL, 0x0000000000000000ULL, 0},
    {"+infinity", "Infinity", 0x7800000000000000ULL, 0x0000000000000000ULL, 0},
    {"infinity", "Infinity", 0x7800000000000000ULL, 0x0000000000000000ULL, 0},
    {"infiniTY", "Infinity", 0x7800000000000000ULL, 0x0000000000000000ULL, 0},
    {"inf", "Infinity", 0x7800000000000000ULL, 0x0000000000000000ULL, 0},
    {"inF", "Infinity", 0x7800000000000000ULL, 0x0000000000000000ULL, 0},
    {"-infinity", "-Infinity", 0xF800000000000000ULL, 0x0000000000000000ULL, 0},
    {"-infiniTy", "-Infinity", 0xF800000000000000ULL, 0x0000000000000000ULL, 0},
    {"-Infinity", "-Infinity", 0xF800000000000000ULL, 0x0000000000000000ULL, 0},
    {"-inf", "-Infinity", 0xF800000000000000ULL, 0x0000000000000000ULL, 0},
    {"-inF", "-Infinity", 0xF800000000000000ULL, 0x0000000000000000ULL, 0},
    {"10E-6177", "1E-6176", 0x0000000000000000ULL, 0x0000000000000001ULL, 0},
    {"1E6112", "1.0E+6112", 0x5FFE000000000000ULL, 0x000000000000000AULL, 0},
    {"0E+9999999999", "0E+6111", 0x5FFE000000000000ULL, 0x0000000000000000ULL, 0},
    {"0E-9999999999", "0E-6176", 0x0000000000000000ULL, 0x0000000000000000ULL, 0},
    {"-0E+9999999999", "-0E+6111", 0xDFFE000000000000ULL, 0x0000000000000000ULL, 0},
    {"-0E-9999999999", "-0E-6176", 0x8000000000000000ULL, 0x0000000000000000ULL, 0},

};

static void test_decimal_corpus(void **state)
{
    (void)state;
    char buf[COFFER_DECIMAL128_STRING_SIZE];
    for (size_t i = 0; i < sizeof corpus / sizeof corpus[0]; i++) {
        const struct corpus_entry *e = &corpus[i];
        coffer_decimal128 bytes = {{e->low, e->high}};
        /* bytes -> canonical string */
        dec_str(&bytes, buf);
        if (strcmp(buf, e->canonical) != 0)
            fail_msg("corpus %zu: %016llx %016llx formats as \"%s\", expected \"%s\"", i,
                     (unsigned long long)e->high, (unsigned long long)e->low, buf, e->canonical);
        /* string -> bytes */
        const char *in = e->input ? e->input : e->canonical;
        coffer_decimal128 parsed = ts_dec(in);
        if (!e->lossy)
            check_encoding(in, e->high, e->low);
        dec_str(&parsed, buf);
        if (strcmp(buf, e->canonical) != 0)
            fail_msg("corpus %zu: \"%s\" formats as \"%s\", expected \"%s\"", i, in, buf, e->canonical);
    }
}

/* The two long strings of the corpus. */
static void test_decimal_corpus_long(void **state)
{
    (void)state;
    char buf[COFFER_DECIMAL128_STRING_SIZE];
    char *text = malloc(1100);
    assert_non_null(text);

    /* "Non-Canonical Parsing - Long Decimal String": "." 998 zeros "1". */
    text[0] = '.';
    memset(text + 1, '0', 998);
    strcpy(text + 999, "1");
    coffer_decimal128 d = ts_dec(text);
    assert_true(d.w[1] == 0x2872000000000000ULL && d.w[0] == 1);
    assert_string_equal(dec_str(&d, buf), "1E-999");

    /* "Exact rounding": "1" then 999 zeros. */
    text[0] = '1';
    memset(text + 1, '0', 999);
    text[1000] = '\0';
    d = ts_dec(text);
    assert_true(d.w[1] == 0x37CC314DC6448D93ULL && d.w[0] == 0x38C15B0A00000000ULL);
    assert_string_equal(dec_str(&d, buf), "1.000000000000000000000000000000000E+999");

    /* The same with a non-zero digit at the end cannot be exact. */
    text[999] = '1';
    check_parse_fails(text, "more than 34 significant digits");
    free(text);
}

/* ------------------------------------------------------------------------ */
/* decimal128: parsing and formatting                                        */
/* ------------------------------------------------------------------------ */

static void test_decimal_known_encodings(void **state)
{
    (void)state;
    check_encoding("0", 0x3040000000000000ULL, 0);
    check_encoding("-0", 0xB040000000000000ULL, 0);
    check_encoding("1", 0x3040000000000000ULL, 1);
    check_encoding("-1", 0xB040000000000000ULL, 1);
    check_encoding("0.1", 0x303E000000000000ULL, 1);
    check_encoding("1.0", 0x303E000000000000ULL, 10);
    check_encoding("1.00", 0x303C000000000000ULL, 100);
    check_encoding("NaN", 0x7C00000000000000ULL, 0);
    check_encoding("Infinity", 0x7800000000000000ULL, 0);
    check_encoding("Inf", 0x7800000000000000ULL, 0);
    check_encoding("-Infinity", 0xF800000000000000ULL, 0);
    check_encoding("1E-6176", 0, 1);
    check_encoding("9.999999999999999999999999999999999E+6144", 0x5FFFED09BEAD87C0ULL, 0x378D8E63FFFFFFFFULL);
    check_encoding("1.23E+40", 0x308C000000000000ULL, 123);
    check_encoding("0.000001", 0x3034000000000000ULL, 1);
    check_encoding("1E-7", 0x3032000000000000ULL, 1);
    check_encoding("1E+3", 0x3046000000000000ULL, 1);
    check_encoding("-9223372036854775808", 0xB040000000000000ULL, 0x8000000000000000ULL);
    check_encoding("18446744073709551616", 0x3040000000000001ULL, 0); /* 2^64 */
    /* Leading zeros are not significant; "." may lead or trail. */
    check_encoding("000000000000000000000000000000000000000001", 0x3040000000000000ULL, 1);
    check_encoding(".5", 0x303E000000000000ULL, 5);
    check_encoding("5.", 0x3040000000000000ULL, 5);
    check_encoding("-.0", 0xB03E000000000000ULL, 0);
    check_encoding("0.", 0x3040000000000000ULL, 0);
}

static void test_decimal_round_trips(void **state)
{
    (void)state;
    /* Canonical strings come back unchanged. */
    static const char *const same[] = {
        "0", "-0", "1", "-1", "0.1", "-0.1", "1.0", "1.00", "-1.00", "0.0", "-0.0", "0.00",
        "10", "100", "123", "12.5", "-12.50", "0.5", "0.001234", "0.000001", "0.000000",
        "0.0000010", "1E-7", "-1E-7", "1.0E-7", "1E+3", "1.0E+3", "1.23E+40", "-1.23E+40",
        "1E+1", "0E+1", "0E-7", "-0E-7", "1.5E-10", "1234567890123456789012345678901234",
        "-1234567890123456789012345678901234", "1.234567890123456789012345678901234E-7",
        "0.1234567890123456789012345678901234", "9999999999999999999999999999999999",
        "9.999999999999999999999999999999999E+6144", "-9.999999999999999999999999999999999E+6144",
        "1E-6176", "-1E-6176", "0E-6176", "0E+6111", "1E+6111", "1.000000000000000000000000000000000E+6144",
        "9.999999999999999999999999999999999E-6143", "NaN", "Infinity", "-Infinity",
        "9223372036854775807", "-9223372036854775808", "3.14159265358979323846264338327950",
        "0.000123", "123.456", "-0.000001",
    };
    for (size_t i = 0; i < sizeof same / sizeof same[0]; i++)
        check_round_trip(same[i], same[i]);

    /* Other spellings come back in canonical form. */
    static const char *const pairs[][2] = {
        {"+1", "1"},
        {"+0", "0"},
        {"1e3", "1E+3"},
        {"1E3", "1E+3"},
        {"1e+03", "1E+3"},
        {"1E-07", "1E-7"},
        {"0.0000001", "1E-7"},
        {"0.00000012", "1.2E-7"},
        {"100E-2", "1.00"},
        {"12345E-10", "0.0000012345"},
        {"12345E-11", "1.2345E-7"},
        {"1.5e1", "15"},
        {"1.50e1", "15.0"},
        {"1.5e2", "1.5E+2"},
        {"0.1e1", "1"},
        {"0.10e1", "1.0"},
        {"123.0e-2", "1.230"},
        {"0e0", "0"},
        {"0.000e3", "0"},
        {"0.000e4", "0E+1"},
        {"-0e-0", "-0"},
        {"007", "7"},
        {"00.70", "0.70"},
        {"NAN", "NaN"},
        {"-nan", "NaN"},
        {"+NaN", "NaN"},
        {"INF", "Infinity"},
        {"-INFINITY", "-Infinity"},
        {"+Inf", "Infinity"},
        {"1E+6144", "1.000000000000000000000000000000000E+6144"},
        {"1E+6112", "1.0E+6112"},
        {"0E+6112", "0E+6111"},
        {"0E-6177", "0E-6176"},
        {"100E-6178", "1E-6176"},
        /* 35 and more digits whose extra digits are zeros: exact. */
        {"12345678901234567890123456789012340", "1.234567890123456789012345678901234E+34"},
        {"1.0000000000000000000000000000000000", "1.000000000000000000000000000000000"},
        {"0.00000000000000000000000000000000000000000000000001", "1E-50"},
        {"1E+000000000000000000000000000000000000000003", "1E+3"},
    };
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++)
        check_round_trip(pairs[i][0], pairs[i][1]);
}

static void test_decimal_parse_errors(void **state)
{
    (void)state;
    static const char *const not_numbers[] = {
        "", "abc", ".", "..", "..1", ".1.", "1..2", "1.2.3", "+", "-", "+-1", "--1", "e", "E3",
        "e3", ".e", ".e3", "1e", "1E", "1e+", "1e-", "1e+-3", "1e3.5", "1e3e4", " 1", "1 ", " 1 ",
        "\t1", "1\n", "1,5", "1_000", "0x10", "1abc", "1.24abc", "1.3e+02ab2", "Na", "NaNa",
        "NaN1", "In", "Infin", "Infinit", "Infinityy", "infinity ", " inf", "-", "++1",
        "sNaN", "-sNaN", "1-", "1+1", "1.5f", "١",
    };
    for (size_t i = 0; i < sizeof not_numbers / sizeof not_numbers[0]; i++) {
        check_parse_fails(not_numbers[i], "is not a number");
        if (strcmp(not_numbers[i], "١") == 0)
            continue; /* non-ASCII is printed as-is; nothing more to check */
        char quoted[64];
        int printable = 1;
        for (const char *s = not_numbers[i]; *s; s++)
            if ((unsigned char)*s < 0x20)
                printable = 0;
        if (printable) {
            snprintf(quoted, sizeof quoted, "'%s'", not_numbers[i]);
            assert_error_has(quoted);
        }
    }
    coffer_decimal128 d;
    assert_int_equal(coffer_decimal128_from_string("abc", &d), COFFER_ERR_INVALID_ARGUMENT);
    assert_string_equal(coffer_last_error(), "decimal128: 'abc' is not a number");
    assert_int_equal(coffer_decimal128_from_string("1\n", &d), COFFER_ERR_INVALID_ARGUMENT);
    assert_error_has("'1\\x0a'");

    /* 35 significant digits that are not all exact. */
    check_parse_fails("12345678901234567890123456789012345", "more than 34 significant digits");
    assert_error_has("'12345678901234567890123456789012345'");
    check_parse_fails("-12345678901234567890123456789012345", "more than 34 significant digits");
    check_parse_fails("1.2345678901234567890123456789012345", "more than 34 significant digits");
    check_parse_fails("0.00012345678901234567890123456789012345", "more than 34 significant digits");
    check_parse_fails("1000000000000000000000000000000000001", "more than 34 significant digits");
    check_parse_fails("10000000000000000000000000000000000.1", "more than 34 significant digits");
    check_parse_fails("12345678901234567890123456789012345E-10", "more than 34 significant digits");
    assert_int_equal(coffer_decimal128_from_string("12345678901234567890123456789012345", &d),
                     COFFER_ERR_INVALID_ARGUMENT);
    assert_string_equal(coffer_last_error(),
                        "decimal128: '12345678901234567890123456789012345' has more than 34 significant digits");

    /* Out of range after every exact normalisation. */
    check_parse_fails("1E+6145", "too large");
    assert_error_has("'1E+6145'");
    check_parse_fails("1E+6112000", "too large");
    check_parse_fails("1E+99999999999999999999999", "too large");
    check_parse_fails("10E+6144", "too large");
    check_parse_fails("9999999999999999999999999999999999E+6112", "too large");
    check_parse_fails("-1E+6145", "too large");
    check_parse_fails("1E-6177", "too small");
    assert_error_has("'1E-6177'");
    check_parse_fails("11E-6177", "too small");
    check_parse_fails("0.1E-6176", "too small");
    check_parse_fails("1E-99999999999999999999999", "too small");

    /* NULL arguments. */
    assert_int_equal(coffer_decimal128_from_string(NULL, &d), COFFER_ERR_INVALID_ARGUMENT);
    assert_error_has("decimal128");
    assert_int_equal(coffer_decimal128_from_string("1", NULL), COFFER_ERR_INVALID_ARGUMENT);
    assert_error_has("decimal128");
}

static void test_decimal_to_string_edges(void **state)
{
    (void)state;
    char buf[COFFER_DECIMAL128_STRING_SIZE];

    /* The longest outputs fit the documented buffer size. */
    static const char *const longest[] = {
        "-9.999999999999999999999999999999999E-6143",
        "-1.234567890123456789012345678901234E-6143",
        "-0.000001234567890123456789012345678901234",
        "-1234567890123456789012345678901234",
        "-123456789012345678901234567890.1234",
    };
    for (size_t i = 0; i < sizeof longest / sizeof longest[0]; i++) {
        memset(buf, 0x7f, sizeof buf);
        check_round_trip(longest[i], longest[i]);
        coffer_decimal128 d = ts_dec(longest[i]);
        dec_str(&d, buf);
        assert_true(strlen(buf) < COFFER_DECIMAL128_STRING_SIZE);
    }

    /* Every exponent and a few coefficients format and parse back bit for bit. */
    for (int exp = -6176; exp <= 6111; exp += 7) {
        static const char *const coefs[] = {"0", "1", "7", "12", "100", "1234567890123456789012345678901234"};
        for (size_t k = 0; k < sizeof coefs / sizeof coefs[0]; k++) {
            char in[80];
            for (int neg = 0; neg < 2; neg++) {
                snprintf(in, sizeof in, "%s%sE%d", neg ? "-" : "", coefs[k], exp);
                coffer_decimal128 d = ts_dec(in);
                dec_str(&d, buf);
                coffer_decimal128 back = ts_dec(buf);
                if (back.w[0] != d.w[0] || back.w[1] != d.w[1])
                    fail_msg("\"%s\" -> \"%s\" does not parse back to the same bits", in, buf);
            }
        }
    }

    /* Non-canonical coefficients (above 10^34 - 1) read as zero. */
    coffer_decimal128 big = {{0xFFFFFFFFFFFFFFFFULL, 0x3041FFFFFFFFFFFFULL}};
    assert_string_equal(dec_str(&big, buf), "0");
    coffer_decimal128 just_over = {{0x378D8E6400000000ULL, 0x3041ED09BEAD87C0ULL}}; /* 10^34 */
    assert_string_equal(dec_str(&just_over, buf), "0");
    coffer_decimal128 just_under = {{0x378D8E63FFFFFFFFULL, 0x3041ED09BEAD87C0ULL}};
    assert_string_equal(dec_str(&just_under, buf), "9999999999999999999999999999999999");

    /* NULL arguments. */
    strcpy(buf, "x");
    coffer_decimal128_to_string(NULL, buf);
    assert_string_equal(buf, "");
    coffer_decimal128 one = ts_dec("1");
    coffer_decimal128_to_string(&one, NULL);
}

/* ------------------------------------------------------------------------ */
/* decimal128: comparison and conversions                                    */
/* ------------------------------------------------------------------------ */

static void test_decimal_compare(void **state)
{
    (void)state;
    /* Groups in increasing order; members of a group are equal. */
    static const char *const groups[][4] = {
        {"NaN", "-NaN", "nan", NULL},
        {"-Infinity", NULL},
        {"-9.999999999999999999999999999999999E+6144", NULL},
        {"-1E+100", "-10E+99", "-1.000E+100", NULL},
        {"-1234567890123456789012345678901234", NULL},
        {"-2", "-2.0", "-2.000000", NULL},
        {"-1.5", "-1.50", "-15E-1", NULL},
        {"-1", "-1.0", "-1.00", "-0.1E1"},
        {"-0.9999999999999999999999999999999999", NULL},
        {"-1E-6176", NULL},
        {"0", "-0", "0.000", "0E+6111"},
        {"1E-6176", "10E-6177", NULL},
        {"2E-6176", NULL},
        {"1E-100", NULL},
        {"0.000001", "1E-6", "0.0000010", NULL},
        {"0.1", "0.10", "1E-1", NULL},
        {"0.1000000000000000000000000000000001", NULL},
        {"0.9999999999999999999999999999999999", NULL},
        {"1", "1.0", "1.00", "1.000000000000000000000000000000000"},
        {"1.000000000000000000000000000000001", NULL},
        {"1.5", "15E-1", NULL},
        {"2", NULL},
        {"9", NULL},
        {"10", "1E+1", "1.0E+1", NULL},
        {"11", NULL},
        {"99", NULL},
        {"1E+2", "100", NULL},
        {"9223372036854775807", NULL},
        {"9223372036854775808", NULL},
        {"1234567890123456789012345678901234", NULL},
        {"1234567890123456789012345678901235", NULL},
        {"9999999999999999999999999999999999", NULL},
        {"1E+34", "10000000000000000000000000000000000", NULL},
        {"1E+100", NULL},
        {"9.999999999999999999999999999999999E+6144", NULL},
        {"Infinity", "inf", NULL},
    };
    size_t ngroups = sizeof groups / sizeof groups[0];
    for (size_t g1 = 0; g1 < ngroups; g1++)
        for (size_t m1 = 0; m1 < 4 && groups[g1][m1]; m1++)
            for (size_t g2 = 0; g2 < ngroups; g2++)
                for (size_t m2 = 0; m2 < 4 && groups[g2][m2]; m2++) {
                    coffer_decimal128 a = ts_dec(groups[g1][m1]), b = ts_dec(groups[g2][m2]);
                    int want = g1 < g2 ? -1 : g1 > g2 ? 1 : 0;
                    int got = cf_decimal128_compare(&a, &b);
                    if (got != want)
                        fail_msg("compare(%s, %s) = %d, expected %d", groups[g1][m1], groups[g2][m2], got,
                                 want);
                }

    /* Signalling NaN and NaN with a payload are NaN too; non-canonical is 0. */
    coffer_decimal128 snan = {{0x12, 0x7E00000000000000ULL}}, nan = ts_dec("NaN"), zero = ts_dec("0");
    coffer_decimal128 noncanon = {{0, 0x6C10000000000000ULL}};
    assert_int_equal(cf_decimal128_compare(&snan, &nan), 0);
    assert_int_equal(cf_decimal128_compare(&snan, &zero), -1);
    assert_int_equal(cf_decimal128_compare(&noncanon, &zero), 0);
}

static void test_decimal_to_double(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        double value;
    } cases[] = {
        {"0", 0.0},
        {"1", 1.0},
        {"-1", -1.0},
        {"0.1", 0.1},
        {"1.0", 1.0},
        {"1.25", 1.25},
        {"-3E-7", -3e-7},
        {"1.23E+40", 1.23e40},
        {"123456789012345678901234567890", 123456789012345678901234567890.0},
        {"1.7976931348623157E+308", DBL_MAX},
        {"2.2250738585072014E-308", DBL_MIN},
        {"4.9406564584124654E-324", 4.9406564584124654e-324},
        {"1E-400", 0.0},
        {"9223372036854775807", 9223372036854775807.0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        coffer_decimal128 d = ts_dec(cases[i].text);
        double got = cf_decimal128_to_double(&d);
        if (got != cases[i].value)
            fail_msg("to_double(%s) = %.17g, expected %.17g", cases[i].text, got, cases[i].value);
    }
    coffer_decimal128 d = ts_dec("-0");
    double v = cf_decimal128_to_double(&d);
    assert_true(v == 0.0 && signbit(v));
    d = ts_dec("1E+400");
    assert_true(isinf(cf_decimal128_to_double(&d)) && cf_decimal128_to_double(&d) > 0);
    d = ts_dec("-1E+400");
    assert_true(isinf(cf_decimal128_to_double(&d)) && cf_decimal128_to_double(&d) < 0);
    d = ts_dec("Infinity");
    assert_true(isinf(cf_decimal128_to_double(&d)) && cf_decimal128_to_double(&d) > 0);
    d = ts_dec("-Infinity");
    assert_true(isinf(cf_decimal128_to_double(&d)) && cf_decimal128_to_double(&d) < 0);
    d = ts_dec("NaN");
    assert_true(isnan(cf_decimal128_to_double(&d)));
    d = ts_dec("-1E-400");
    v = cf_decimal128_to_double(&d);
    assert_true(v == 0.0 && signbit(v));
}

static void test_decimal_from_double(void **state)
{
    (void)state;
    static const struct {
        double value;
        const char *text;
    } cases[] = {
        {0.0, "0"},
        {-0.0, "-0"},
        {1.0, "1"},
        {-1.0, "-1"},
        {0.1, "0.1"},
        {0.5, "0.5"},
        {1.25, "1.25"},
        {123.456, "123.456"},
        {100.0, "1E+2"},
        {1e20, "1E+20"},
        {1.5e300, "1.5E+300"},
        {1e-7, "1E-7"},
        {0.3, "0.3"},
        {0.1 + 0.2, "0.30000000000000004"},
        {1.0 / 3.0, "0.3333333333333333"},
        {DBL_MAX, "1.7976931348623157E+308"},
        {DBL_MIN, "2.2250738585072014E-308"},
        {4.9406564584124654e-324, "5E-324"},
        {9007199254740993.0, "9007199254740992"},
    };
    char buf[COFFER_DECIMAL128_STRING_SIZE];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        coffer_decimal128 d;
        assert_int_equal(cf_decimal128_from_double(cases[i].value, &d), COFFER_OK);
        dec_str(&d, buf);
        if (strcmp(buf, cases[i].text) != 0)
            fail_msg("from_double(%.17g) = \"%s\", expected \"%s\"", cases[i].value, buf, cases[i].text);
    }
    coffer_decimal128 d;
    assert_int_equal(cf_decimal128_from_double(NAN, &d), COFFER_OK);
    assert_true(d.w[1] == 0x7C00000000000000ULL && d.w[0] == 0);
    assert_int_equal(cf_decimal128_from_double(INFINITY, &d), COFFER_OK);
    assert_true(d.w[1] == 0x7800000000000000ULL && d.w[0] == 0);
    assert_int_equal(cf_decimal128_from_double(-INFINITY, &d), COFFER_OK);
    assert_true(d.w[1] == 0xF800000000000000ULL && d.w[0] == 0);
    assert_int_equal(cf_decimal128_from_double(1.0, NULL), COFFER_ERR_INVALID_ARGUMENT);

    /* Random doubles survive double -> decimal -> double exactly. */
    uint64_t x = 0x9E3779B97F4A7C15ULL;
    for (int i = 0; i < 20000; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        double v;
        memcpy(&v, &x, sizeof v);
        if (isnan(v))
            continue;
        assert_int_equal(cf_decimal128_from_double(v, &d), COFFER_OK);
        double back = cf_decimal128_to_double(&d);
        if (!(back == v && signbit(back) == signbit(v)))
            fail_msg("%.17g came back as %.17g", v, back);
    }
}

static void test_decimal_from_int64(void **state)
{
    (void)state;
    char buf[COFFER_DECIMAL128_STRING_SIZE];
    static const struct {
        int64_t value;
        const char *text;
    } cases[] = {
        {0, "0"},
        {1, "1"},
        {-1, "-1"},
        {42, "42"},
        {1000, "1000"},
        {INT64_MAX, "9223372036854775807"},
        {INT64_MIN, "-9223372036854775808"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        coffer_decimal128 d, parsed = ts_dec(cases[i].text);
        cf_decimal128_from_int64(cases[i].value, &d);
        assert_string_equal(dec_str(&d, buf), cases[i].text);
        assert_true(d.w[0] == parsed.w[0] && d.w[1] == parsed.w[1]);
    }
    cf_decimal128_from_int64(5, NULL); /* no crash */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_version_and_limits),
        cmocka_unit_test(test_constructors),
        cmocka_unit_test(test_value_equal),
        cmocka_unit_test(test_type_name),
        cmocka_unit_test(test_object_id_strings),
        cmocka_unit_test(test_object_id_generate),
        cmocka_unit_test(test_object_id_threads),
        cmocka_unit_test(test_object_id_fork),
        cmocka_unit_test(test_decimal_corpus),
        cmocka_unit_test(test_decimal_corpus_long),
        cmocka_unit_test(test_decimal_known_encodings),
        cmocka_unit_test(test_decimal_round_trips),
        cmocka_unit_test(test_decimal_parse_errors),
        cmocka_unit_test(test_decimal_to_string_edges),
        cmocka_unit_test(test_decimal_compare),
        cmocka_unit_test(test_decimal_to_double),
        cmocka_unit_test(test_decimal_from_double),
        cmocka_unit_test(test_decimal_from_int64),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
