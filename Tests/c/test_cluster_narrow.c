/*
 * test_cluster_narrow.c — narrowed int columns of a cluster (cluster version
 * 3, docs/FORMAT.md "Clusters (format 5)"): an int column whose values lie
 * within 2^32 of one another is stored as its smallest value and each
 * value's distance from it in 1, 2 or 4 bytes. Every width (and the
 * columns that stay 8 bytes wide: a range beyond 2^32, extremes of int64,
 * one object) comes back value for value, nulls included, through
 * cf_cluster_get and cf_cluster_raw; only the columns the class names as
 * ints are narrowed (a double or a binary of 8 bytes never is); a
 * narrowed cluster encoded again from its own blocks gives the same bytes;
 * the bytes FORMAT.md gives; a cluster of version 2 is still read; a
 * damaged narrowed block (a width it may not have, too short, read as
 * another type) is COFFER_ERR_CORRUPTED, never a value.
 */
#include <stdlib.h>
#include <string.h>

#include "test_support.h"
#include "storage/cluster.h"
#include "storage/cluster_encode.h"

#define N 200

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

/* A class whose properties have the given types, column i for property i. */
typedef struct fake_class {
    cf_class cl;
    cf_prop props[16];
} fake_class;

static void fake_class_init(fake_class *f, const coffer_type *types, size_t n)
{
    memset(f, 0, sizeof *f);
    for (size_t i = 0; i < n; i++)
        f->props[i] = (cf_prop){.type = types[i], .column = (uint16_t)i};
    f->cl.nprops = n;
    f->cl.props = f->props;
}

/* Encodes members m[0..n) for class `cl` (NULL: no int columns) into a new
 * buffer of *len bytes. */
static uint8_t *encode(const cf_class *cl, const cf_cluster_member *m, uint16_t n, size_t *len)
{
    cf_cluster_encoder enc = {0};
    assert_ok(cf_cluster_encoder_set_class(&enc, cl));
    assert_ok(cf_cluster_plan(&enc, m, n, len));
    uint8_t *out = malloc(*len);
    assert_non_null(out);
    cf_cluster_encode(&enc, out);
    cf_cluster_encoder_free(&enc);
    return out;
}

/* Column `col`'s block kind and width byte. */
static void block_kind(const cf_cluster *c, uint16_t col, uint8_t *kind, uint8_t *width)
{
    const uint8_t *b;
    size_t len;
    assert_ok(cf_cluster_block_of(c, col, &b, &len));
    assert_true(len >= CF_BLOCK_HEADER);
    *kind = b[0];
    *width = b[1];
}

enum { C_BYTE, C_SHORT, C_I32, C_WIDE, C_EXTREMES, C_SAME, C_DOUBLE, C_BLOB, C_TEXT, C_NULLS, NCOLS };

static const coffer_type col_types[NCOLS] = {
    COFFER_TYPE_INT, COFFER_TYPE_INT,    COFFER_TYPE_INT,    COFFER_TYPE_INT,    COFFER_TYPE_INT,
    COFFER_TYPE_INT, COFFER_TYPE_DOUBLE, COFFER_TYPE_BINARY, COFFER_TYPE_STRING, COFFER_TYPE_INT,
};

static const uint8_t zeros8[8] = {0};

/* The value of object i in column col (null for some). */
static coffer_value value_at(int i, int col)
{
    switch (col) {
    case C_BYTE: return i % 7 == 3 ? coffer_value_null() : coffer_value_int(-1000 + (i * 37) % 256);
    case C_SHORT: return coffer_value_int(i % 2 ? -32768 + i : 32767 - i);
    case C_I32: return coffer_value_int(i == 0 ? INT32_MIN : i == 1 ? INT32_MAX : (int64_t)i * 104729 - 7777777);
    case C_WIDE: return coffer_value_int(i % 2 ? (int64_t)i << 33 : -(int64_t)i);
    case C_EXTREMES: return coffer_value_int(i % 3 == 0 ? INT64_MIN : i % 3 == 1 ? INT64_MAX : 0);
    case C_SAME: return coffer_value_int(INT64_MIN);
    case C_DOUBLE: return coffer_value_double(i % 2 ? 0.0 : 1.0 / (i + 1)); /* 0.0 is 8 zero bytes */
    case C_BLOB: return coffer_value_binary(zeros8, 8);                  /* always 8 zero bytes */
    case C_TEXT: return i % 5 ? ts_str("né") : ts_str("");
    default: return coffer_value_null();
    }
}

static void assert_cluster_values(const cf_cluster *c, uint16_t n)
{
    for (uint16_t i = 0; i < n; i++) {
        for (uint16_t col = 0; col < NCOLS; col++) {
            coffer_value got, want = value_at(i, col);
            assert_ok(cf_cluster_get(c, i, col, col_types[col], &got));
            if (!ts_value_equal(&got, &want))
                fail_msg("object %u column %u differs", i, col);
            const uint8_t *p;
            size_t len;
            uint8_t wide[8];
            int present = cf_cluster_raw(c, i, col, &p, &len, wide);
            assert_int_equal(present, want.type != COFFER_TYPE_NULL);
            if (present && col_types[col] == COFFER_TYPE_INT) {
                assert_int_equal(len, 8);
                assert_int_equal((int64_t)cf_get_le(p, 8), want.u.integer);
            }
        }
    }
}

static void test_every_width_round_trips(void **state)
{
    (void)state;
    static cf_cluster_member m[N];
    static uint8_t *bufs[N];
    for (int i = 0; i < N; i++) {
        coffer_value v[NCOLS];
        for (int col = 0; col < NCOLS; col++)
            v[col] = value_at(i, col);
        bufs[i] = record_of(v, NCOLS, &m[i].rec);
        m[i].low = (uint8_t)(i + 10);
    }
    fake_class f;
    fake_class_init(&f, col_types, NCOLS);
    size_t len, plain_len;
    uint8_t *data = encode(&f.cl, m, N, &len);
    uint8_t *plain = encode(NULL, m, N, &plain_len); /* no int columns named: nothing narrowed */
    cf_cluster c, pc;
    assert_ok(cf_cluster_parse(data, len, &c));
    assert_ok(cf_cluster_parse(plain, plain_len, &pc));
    assert_int_equal(data[0], CF_CLUSTER_VERSION);
    static const struct { uint8_t kind, width; } want[NCOLS] = {
        [C_BYTE] = {CF_BLOCK_NARROW, 1},    [C_SHORT] = {CF_BLOCK_NARROW, 2}, [C_I32] = {CF_BLOCK_NARROW, 4},
        [C_WIDE] = {CF_BLOCK_FIXED, 8},     [C_EXTREMES] = {CF_BLOCK_FIXED, 8}, [C_SAME] = {CF_BLOCK_NARROW, 1},
        [C_DOUBLE] = {CF_BLOCK_FIXED, 8},   [C_BLOB] = {CF_BLOCK_FIXED, 8},   [C_TEXT] = {CF_BLOCK_ENDS16, 0},
        [C_NULLS] = {CF_BLOCK_NULL, 0},
    };
    for (uint16_t col = 0; col < NCOLS; col++) {
        uint8_t kind, width;
        block_kind(&c, col, &kind, &width);
        if (kind != want[col].kind || width != want[col].width)
            fail_msg("column %u: kind %u width %u, want %u %u", col, kind, width, want[col].kind, want[col].width);
        block_kind(&pc, col, &kind, &width);
        assert_int_not_equal(kind, CF_BLOCK_NARROW);
    }
    /* 7 + 6 + 4 bytes saved per object in the three narrowed columns, 7 in
     * the constant one, less a base of 8 bytes per narrowed block. */
    assert_int_equal(plain_len - len, (size_t)N * (7 + 6 + 4 + 7) - 4 * CF_NARROW_BASE);
    assert_cluster_values(&c, N);
    assert_cluster_values(&pc, N);

    /* Encoded again from its own blocks (values widened, then narrowed
     * again): the same bytes. Without the class: the plain encoding. */
    static cf_cluster_member again[N];
    for (uint16_t i = 0; i < N; i++)
        again[i] = (cf_cluster_member){.low = (uint8_t)(i + 10), .src = &c, .at = i};
    size_t again_len;
    uint8_t *again_data = encode(&f.cl, again, N, &again_len);
    assert_int_equal(again_len, len);
    assert_memory_equal(again_data, data, len);
    free(again_data);
    again_data = encode(NULL, again, N, &again_len);
    assert_int_equal(again_len, plain_len);
    assert_memory_equal(again_data, plain, plain_len);
    free(again_data);
    free(data);
    free(plain);
    for (int i = 0; i < N; i++)
        free(bufs[i]);
}

/* One object: a base of 8 bytes would cost more than it saves, so the
 * column stays 8 bytes wide; two objects 5 apart narrow to one byte. */
static void test_small_clusters(void **state)
{
    (void)state;
    coffer_type types[1] = {COFFER_TYPE_INT};
    fake_class f;
    fake_class_init(&f, types, 1);
    coffer_value a = coffer_value_int(12345), b = coffer_value_int(12350);
    cf_cluster_member m[2] = {{.low = 0}, {.low = 1}};
    uint8_t *ba = record_of(&a, 1, &m[0].rec), *bb = record_of(&b, 1, &m[1].rec);
    size_t len;
    uint8_t *one = encode(&f.cl, m, 1, &len);
    cf_cluster c;
    assert_ok(cf_cluster_parse(one, len, &c));
    uint8_t kind, width;
    block_kind(&c, 0, &kind, &width);
    assert_int_equal(kind, CF_BLOCK_FIXED);
    free(one);
    uint8_t *two = encode(&f.cl, m, 2, &len);
    assert_ok(cf_cluster_parse(two, len, &c));
    block_kind(&c, 0, &kind, &width);
    assert_int_equal(kind, CF_BLOCK_NARROW);
    assert_int_equal(width, 1);
    coffer_value got;
    assert_ok(cf_cluster_get(&c, 1, 0, COFFER_TYPE_INT, &got));
    assert_int_equal(got.u.integer, 12350);
    free(two);
    free(ba);
    free(bb);
}

/* The bytes FORMAT.md gives for a narrowed column of two objects. */
static void test_bytes_as_specified(void **state)
{
    (void)state;
    coffer_type types[1] = {COFFER_TYPE_INT};
    fake_class f;
    fake_class_init(&f, types, 1);
    coffer_value a = coffer_value_int(-2), b = coffer_value_int(300), c3 = coffer_value_null();
    cf_cluster_member m[3] = {{.low = 1}, {.low = 2}, {.low = 7}};
    uint8_t *ba = record_of(&a, 1, &m[0].rec), *bb = record_of(&b, 1, &m[1].rec), *bc = record_of(&c3, 1, &m[2].rec);
    static const uint8_t want[] = {
        4, 0, 3, 0, 1, 0,                         /* version 4, flags, 3 objects, 1 column */
        1, 2, 7,                                  /* the keys' low bytes */
        17, 0, 0, 0,                              /* the block's end */
        4, 2, 0x04,                               /* narrowed, 2 bytes a value; the third null */
        0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, /* base -2 */
        0, 0, 0x2E, 0x01, 0, 0,                   /* -2 + 0, -2 + 302, null (zeros) */
    };
    size_t len;
    uint8_t *data = encode(&f.cl, m, 3, &len);
    assert_int_equal(len, sizeof want);
    assert_memory_equal(data, want, sizeof want);
    free(data);
    free(ba);
    free(bb);
    free(bc);
}

static void test_damage_and_versions(void **state)
{
    (void)state;
    coffer_type types[2] = {COFFER_TYPE_INT, COFFER_TYPE_STRING};
    fake_class f;
    fake_class_init(&f, types, 2);
    coffer_value v[2] = {coffer_value_int(40), ts_str("x")}, w[2] = {coffer_value_int(41), ts_str("y")};
    cf_cluster_member m[2] = {{.low = 0}, {.low = 1}};
    uint8_t *b0 = record_of(v, 2, &m[0].rec), *b1 = record_of(w, 2, &m[1].rec);
    size_t len;
    uint8_t *data = encode(&f.cl, m, 2, &len);
    uint8_t *copy = malloc(len);
    cf_cluster c;
    coffer_value got;

    /* A cluster of version 2 (written before narrowing) is read; one of
     * version 1 was never released: damage. */
    memcpy(copy, data, len);
    copy[0] = 2;
    assert_ok(cf_cluster_parse(copy, len, &c));
    copy[0] = 3;
    assert_ok(cf_cluster_parse(copy, len, &c));
    copy[0] = 1;
    assert_status(cf_cluster_parse(copy, len, &c), COFFER_ERR_CORRUPTED);
    copy[0] = CF_CLUSTER_VERSION + 1;
    assert_status(cf_cluster_parse(copy, len, &c), COFFER_ERR_FORMAT_VERSION);
    assert_error_contains("versions 2 to 4");

    assert_ok(cf_cluster_parse(data, len, &c));
    size_t block = (size_t)(c.blocks - data);
    assert_int_equal(data[block], CF_BLOCK_NARROW);
    /* A width a narrowed block may not have. */
    for (unsigned bad = 0; bad < 9; bad++) {
        if (cf_narrow_width_ok(bad))
            continue;
        memcpy(copy, data, len);
        copy[block + 1] = (uint8_t)bad;
        assert_ok(cf_cluster_parse(copy, len, &c));
        assert_status(cf_cluster_get(&c, 1, 0, COFFER_TYPE_INT, &got), COFFER_ERR_CORRUPTED);
        assert_error_contains("cluster column 0");
    }
    /* A width too large for the block's bytes. */
    memcpy(copy, data, len);
    copy[block + 1] = 4;
    assert_ok(cf_cluster_parse(copy, len, &c));
    assert_status(cf_cluster_get(&c, 1, 0, COFFER_TYPE_INT, &got), COFFER_ERR_CORRUPTED);
    /* A narrowed block read as a string: damage, never bytes borrowed from
     * a widened copy. */
    memcpy(copy, data, len);
    assert_ok(cf_cluster_parse(copy, len, &c));
    assert_status(cf_cluster_get(&c, 0, 0, COFFER_TYPE_STRING, &got), COFFER_ERR_CORRUPTED);
    assert_ok(cf_cluster_get(&c, 0, 0, COFFER_TYPE_INT, &got));
    assert_int_equal(got.u.integer, 40);
    free(copy);
    free(data);
    free(b0);
    free(b1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_width_round_trips),
        cmocka_unit_test(test_small_clusters),
        cmocka_unit_test(test_bytes_as_specified),
        cmocka_unit_test(test_damage_and_versions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
