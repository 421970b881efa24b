/*
 * test_cluster_codec.c — the encoding of a cluster (file format 5,
 * storage/cluster.h): values of every type come back from their columns as
 * written, nulls and absent columns read as null, fixed-width and
 * variable-width blocks (16- and 32-bit ends), objects stored outside,
 * objects encoded again from a parsed cluster next to new records, the
 * bytes FORMAT.md specifies for a small cluster, a full cluster encoded
 * again from its own blocks giving the same bytes as from its records (an
 * encoder reused between clusters of other shapes), and
 * a damaged header, key order, directory or block is COFFER_ERR_CORRUPTED
 * (a newer version COFFER_ERR_FORMAT_VERSION), never a wrong value.
 */
#include <stdlib.h>
#include <string.h>

#include "test_support.h"
#include "storage/cluster.h"
#include "storage/cluster_encode.h"

/* A record of values[0..n), owned by the caller. */
static uint8_t *record_of(const coffer_value *values, uint16_t n, cf_record *rec)
{
    size_t size = cf_record_size(values, n);
    uint8_t *buf = malloc(size);
    assert_non_null(buf);
    cf_record_write(buf, values, n);
    assert_ok(cf_record_parse(buf, size, rec));
    return buf;
}

/* Encodes members m[0..n) into a new buffer of *len bytes. */
static uint8_t *encode(const cf_cluster_member *m, uint16_t n, size_t *len)
{
    cf_cluster_encoder enc = {0};
    assert_ok(cf_cluster_plan(&enc, m, n, len));
    uint8_t *out = malloc(*len);
    assert_non_null(out);
    cf_cluster_encode(&enc, out);
    cf_cluster_encoder_free(&enc);
    return out;
}

static void test_values_round_trip(void **state)
{
    (void)state;
    enum { N = 3 };
    coffer_value rows[N][5] = {
        {coffer_value_int(-7), ts_str("short"), coffer_value_double(2.5), coffer_value_null(), coffer_value_bool(1)},
        {coffer_value_int(1LL << 40), ts_str(""), coffer_value_null(), coffer_value_binary("\0\1\2", 3), coffer_value_bool(0)},
        {coffer_value_null(), ts_str("a longer string"), coffer_value_double(-1e300), coffer_value_binary("", 0),
         coffer_value_null()},
    };
    uint16_t widths[N] = {5, 5, 3}; /* the third object has no columns 3 and 4 */
    cf_cluster_member m[N] = {0};
    uint8_t *bufs[N];
    const uint8_t lows[N] = {0, 17, 255};
    for (int i = 0; i < N; i++) {
        bufs[i] = record_of(rows[i], widths[i], &m[i].rec);
        m[i].low = lows[i];
        m[i].external = 0;
    }
    size_t len;
    uint8_t *data = encode(m, N, &len);
    cf_cluster c;
    assert_ok(cf_cluster_parse(data, len, &c));
    assert_int_equal(c.n, N);
    assert_int_equal(c.ncols, 5);
    const coffer_type types[5] = {COFFER_TYPE_INT, COFFER_TYPE_STRING, COFFER_TYPE_DOUBLE, COFFER_TYPE_BINARY,
                                  COFFER_TYPE_BOOL};
    for (uint16_t i = 0; i < N; i++) {
        assert_int_equal(c.lows[i], lows[i]);
        for (uint16_t col = 0; col < 6; col++) {
            coffer_value got;
            assert_ok(cf_cluster_get(&c, i, col, col < 5 ? types[col] : COFFER_TYPE_INT, &got));
            coffer_value want = col < widths[i] ? rows[i][col] : coffer_value_null();
            assert_true(ts_value_equal(&got, &want));
        }
    }
    assert_int_equal(cf_cluster_seek(&c, 0), 0);
    assert_int_equal(cf_cluster_seek(&c, 1), 1);
    assert_int_equal(cf_cluster_seek(&c, 17), 1);
    assert_int_equal(cf_cluster_seek(&c, 18), 2);
    assert_int_equal(cf_cluster_seek(&c, 256), 3);

    /* Encoded again from the parsed cluster, object by object (as a commit
     * keeps the unchanged objects of a changed cluster), it is the same. */
    cf_cluster_member again[N] = {0};
    for (uint16_t i = 0; i < N; i++)
        again[i] = (cf_cluster_member){.low = lows[i], .src = &c, .at = i};
    size_t again_len;
    uint8_t *again_data = encode(again, N, &again_len);
    assert_int_equal(again_len, len);
    assert_memory_equal(again_data, data, len);
    free(again_data);

    /* Mixed with a new record in the middle and one object left out. */
    coffer_value fresh[2] = {coffer_value_int(99), ts_str("fresh")};
    cf_cluster_member mixed[N] = {{.low = lows[0], .src = &c, .at = 0}, {.low = 18}, {.low = lows[2], .src = &c, .at = 2}};
    uint8_t *fresh_buf = record_of(fresh, 2, &mixed[1].rec);
    uint8_t *mixed_data = encode(mixed, N, &again_len);
    cf_cluster mc;
    assert_ok(cf_cluster_parse(mixed_data, again_len, &mc));
    assert_int_equal(mc.ncols, 5);
    for (uint16_t col = 0; col < 5; col++) {
        coffer_value got;
        assert_ok(cf_cluster_get(&mc, 0, col, types[col], &got));
        assert_true(ts_value_equal(&got, &rows[0][col]));
        assert_ok(cf_cluster_get(&mc, 2, col, types[col], &got));
        coffer_value want = col < widths[2] ? rows[2][col] : coffer_value_null();
        assert_true(ts_value_equal(&got, &want));
        assert_ok(cf_cluster_get(&mc, 1, col, types[col], &got));
        want = col < 2 ? fresh[col] : coffer_value_null();
        assert_true(ts_value_equal(&got, &want));
    }
    assert_int_equal(mc.lows[1], 18);
    free(mixed_data);
    free(fresh_buf);
    for (int i = 0; i < N; i++)
        free(bufs[i]);
    free(data);
}

/* 256 objects whose strings together pass 64 KiB need 32-bit ends. */
static void test_full_cluster_with_wide_ends(void **state)
{
    (void)state;
    static cf_cluster_member m[CF_CLUSTER_MAX];
    static uint8_t *bufs[CF_CLUSTER_MAX];
    char text[600];
    memset(text, 'x', sizeof text - 1);
    text[sizeof text - 1] = 0;
    for (int i = 0; i < CF_CLUSTER_MAX; i++) {
        text[0] = (char)('a' + i % 26);
        coffer_value v[2] = {coffer_value_int(i), coffer_value_string(text, (size_t)(200 + i))};
        bufs[i] = record_of(v, 2, &m[i].rec);
        m[i].low = (uint8_t)i;
        m[i].external = i == 100;
    }
    size_t len;
    uint8_t *data = encode(m, CF_CLUSTER_MAX, &len);
    assert_true(len > 65536);
    cf_cluster c;
    assert_ok(cf_cluster_parse(data, len, &c));
    assert_int_equal(c.n, CF_CLUSTER_MAX);
    for (uint16_t i = 0; i < CF_CLUSTER_MAX; i++) {
        coffer_value a, b;
        assert_int_equal(cf_cluster_is_external(&c, i), i == 100);
        assert_ok(cf_cluster_get(&c, i, 0, COFFER_TYPE_INT, &a));
        assert_ok(cf_cluster_get(&c, i, 1, COFFER_TYPE_STRING, &b));
        if (i == 100) { /* stored outside: its columns here are null */
            assert_int_equal(a.type, COFFER_TYPE_NULL);
            continue;
        }
        assert_int_equal(a.u.integer, i);
        assert_int_equal(b.u.string.size, 200 + i);
        assert_int_equal(((const char *)b.u.string.data)[0], 'a' + i % 26);
    }
    for (int i = 0; i < CF_CLUSTER_MAX; i++)
        free(bufs[i]);
    free(data);
}

/* The bytes FORMAT.md gives for two objects: an int column (fixed width, a
 * null), a string column (16-bit ends), a column only the first has. */
static void test_bytes_as_specified(void **state)
{
    (void)state;
    coffer_value a[3] = {coffer_value_int(1), ts_str("ab"), coffer_value_bool(1)};
    coffer_value b[2] = {coffer_value_null(), ts_str("")};
    cf_cluster_member m[2] = {{.low = 3}, {.low = 9}};
    uint8_t *ba = record_of(a, 3, &m[0].rec), *bb = record_of(b, 2, &m[1].rec);
    static const uint8_t want[] = {
        4, 0, 2, 0, 3, 0,             /* version, flags, 2 objects, 3 columns */
        3, 9,                         /* the keys' low bytes */
        19, 0, 0, 0, 30, 0, 0, 0, 35, 0, 0, 0, /* block ends */
        1, 8, 0x02, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* ints: the second null */
        2, 0, 0x00, 3, 0, 4, 0, 'a', 'b', 0, 0, /* strings "ab" and "", ends 3 and 4 */
        1, 1, 0x02, 1, 0,             /* bools: the second has no column 2 */
    };
    size_t len;
    uint8_t *data = encode(m, 2, &len);
    assert_int_equal(len, sizeof want);
    assert_memory_equal(data, want, sizeof want);
    free(data);
    free(ba);
    free(bb);
}

/* A cluster encoded from records and encoded again from its own blocks
 * (objects kept where they are stored) is the same bytes; one encoder
 * reused for clusters of other shapes writes what a fresh one writes. */
static void test_encodings_agree(void **state)
{
    (void)state;
    static cf_cluster_member m[CF_CLUSTER_MAX], again[CF_CLUSTER_MAX];
    static uint8_t *bufs[CF_CLUSTER_MAX];
    char text[300];
    memset(text, 'y', sizeof text);
    for (int i = 0; i < CF_CLUSTER_MAX; i++) {
        uint16_t width = (uint16_t)(i % 5 == 0 ? 2 : 4);
        coffer_value v[4] = {i % 3 ? coffer_value_int(i * 1000003LL) : coffer_value_null(),
                             coffer_value_string(text, (size_t)(i % 7 ? i : 0)), coffer_value_double(i / 3.0),
                             i % 2 ? coffer_value_binary(text, (size_t)i % 17) : coffer_value_null()};
        bufs[i] = record_of(v, width, &m[i].rec);
        m[i].low = (uint8_t)i;
        m[i].external = i == 77 || i == 200;
    }
    cf_cluster_encoder enc = {0};
    size_t len, len2;
    assert_ok(cf_cluster_plan(&enc, m, CF_CLUSTER_MAX, &len));
    uint8_t *data = malloc(len);
    cf_cluster_encode(&enc, data);
    cf_cluster c;
    assert_ok(cf_cluster_parse(data, len, &c));
    for (uint16_t i = 0; i < CF_CLUSTER_MAX; i++)
        again[i] = (cf_cluster_member){.low = (uint8_t)i, .external = m[i].external, .src = &c, .at = i};
    /* The same encoder, after a smaller cluster of fewer columns. */
    size_t small_len;
    uint8_t *small = encode(m + 10, 3, &small_len);
    assert_ok(cf_cluster_plan(&enc, m + 10, 3, &len2));
    assert_int_equal(len2, small_len);
    uint8_t *small2 = malloc(len2);
    cf_cluster_encode(&enc, small2);
    assert_memory_equal(small, small2, len2);
    assert_ok(cf_cluster_plan(&enc, again, CF_CLUSTER_MAX, &len2));
    assert_int_equal(len2, len);
    uint8_t *data2 = malloc(len2);
    cf_cluster_encode(&enc, data2);
    assert_memory_equal(data, data2, len);
    cf_cluster_encoder_free(&enc);
    free(small);
    free(small2);
    free(data2);
    free(data);
    for (int i = 0; i < CF_CLUSTER_MAX; i++)
        free(bufs[i]);
}

static void test_damage_is_an_error(void **state)
{
    (void)state;
    coffer_value v[2] = {coffer_value_int(42), ts_str("forty-two")};
    coffer_value w[2] = {coffer_value_int(43), ts_str("forty-three")}; /* strings of two sizes: 16-bit ends */
    cf_cluster_member m[2] = {0};
    uint8_t *b0 = record_of(v, 2, &m[0].rec), *b1 = record_of(w, 2, &m[1].rec);
    m[0].low = 3;
    m[1].low = 9;
    m[0].external = m[1].external = 0;
    size_t len;
    uint8_t *data = encode(m, 2, &len);
    uint8_t *copy = malloc(len);
    cf_cluster c;

    assert_status(cf_cluster_parse(data, 5, &c), COFFER_ERR_CORRUPTED);
    assert_error_contains("too short");
    memcpy(copy, data, len);
    copy[0] = CF_CLUSTER_VERSION + 1;
    assert_status(cf_cluster_parse(copy, len, &c), COFFER_ERR_FORMAT_VERSION);
    assert_error_contains("version");
    memcpy(copy, data, len);
    copy[1] = 0x80;
    assert_status(cf_cluster_parse(copy, len, &c), COFFER_ERR_CORRUPTED);
    assert_error_contains("flags");
    memcpy(copy, data, len);
    copy[2] = 0; /* no objects */
    assert_status(cf_cluster_parse(copy, len, &c), COFFER_ERR_CORRUPTED);
    assert_error_contains("holds 0 objects");
    memcpy(copy, data, len);
    copy[6] = 9; /* keys 9, 9 */
    assert_status(cf_cluster_parse(copy, len, &c), COFFER_ERR_CORRUPTED);
    assert_error_contains("out of order");
    memcpy(copy, data, len);
    copy[8] = 0xFF; /* the first column's end past the cluster */
    assert_status(cf_cluster_parse(copy, len, &c), COFFER_ERR_CORRUPTED);
    assert_error_contains("outside the cluster");
    assert_status(cf_cluster_parse(data, len - 1, &c), COFFER_ERR_CORRUPTED);

    /* A block kind this library does not know: an error, not a value. */
    memcpy(copy, data, len);
    assert_ok(cf_cluster_parse(copy, len, &c));
    size_t first_block = (size_t)(c.blocks - copy);
    copy[first_block] = 7;
    assert_ok(cf_cluster_parse(copy, len, &c));
    coffer_value got;
    assert_status(cf_cluster_get(&c, 0, 0, COFFER_TYPE_INT, &got), COFFER_ERR_CORRUPTED);
    assert_error_contains("cluster column 0");
    /* The string's end offsets pointing past its values. */
    memcpy(copy, data, len);
    assert_ok(cf_cluster_parse(copy, len, &c));
    size_t second_block = (size_t)(c.blocks - copy) + (size_t)cf_get_le(c.dir, 4);
    copy[second_block + 2 + 1 + 2 * 1] = 0xFF;
    assert_ok(cf_cluster_parse(copy, len, &c));
    assert_status(cf_cluster_get(&c, 1, 1, COFFER_TYPE_STRING, &got), COFFER_ERR_CORRUPTED);
    /* A value of the wrong size for its type. */
    assert_ok(cf_cluster_parse(data, len, &c));
    assert_status(cf_cluster_get(&c, 0, 1, COFFER_TYPE_INT, &got), COFFER_ERR_CORRUPTED);
    assert_error_contains("cluster column 1");
    free(copy);
    free(data);
    free(b0);
    free(b1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_values_round_trip),
        cmocka_unit_test(test_full_cluster_with_wide_ends),
        cmocka_unit_test(test_bytes_as_specified),
        cmocka_unit_test(test_encodings_agree),
        cmocka_unit_test(test_damage_is_an_error),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
