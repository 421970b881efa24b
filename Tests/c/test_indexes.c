/* test_indexes.c — coffer_index_find on every indexable type, nulls, long
 * strings, updates, deletes, clear; compared with a brute-force scan.
 * Every test runs on plain, encrypted and in-memory databases. */
#define _GNU_SOURCE
#include "test_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    IX_BOOL = 0,
    IX_INT,
    IX_STRING,
    IX_DATE,
    IX_OID,
    IX_UUID,
    IX_OPT_BOOL,
    IX_OPT_INT,
    IX_OPT_STRING,
    IX_OPT_DATE,
    IX_OPT_OID,
    IX_OPT_UUID,
    IX_PLAIN,
    IX_COUNT
};

#define IDX COFFER_PROPERTY_INDEXED
#define OPT COFFER_PROPERTY_OPTIONAL

static const coffer_property_schema indexed_props[IX_COUNT] = {
    {.name = "bIdx", .type = COFFER_TYPE_BOOL, .flags = IDX},
    {.name = "iIdx", .type = COFFER_TYPE_INT, .flags = IDX},
    {.name = "sIdx", .type = COFFER_TYPE_STRING, .flags = IDX},
    {.name = "dIdx", .type = COFFER_TYPE_DATE, .flags = IDX},
    {.name = "oidIdx", .type = COFFER_TYPE_OBJECT_ID, .flags = IDX},
    {.name = "uuidIdx", .type = COFFER_TYPE_UUID, .flags = IDX},
    {.name = "optBIdx", .type = COFFER_TYPE_BOOL, .flags = IDX | OPT},
    {.name = "optIIdx", .type = COFFER_TYPE_INT, .flags = IDX | OPT},
    {.name = "optSIdx", .type = COFFER_TYPE_STRING, .flags = IDX | OPT},
    {.name = "optDIdx", .type = COFFER_TYPE_DATE, .flags = IDX | OPT},
    {.name = "optOidIdx", .type = COFFER_TYPE_OBJECT_ID, .flags = IDX | OPT},
    {.name = "optUuidIdx", .type = COFFER_TYPE_UUID, .flags = IDX | OPT},
    {.name = "plainValue", .type = COFFER_TYPE_INT},
};

static const coffer_class_schema index_schema[] = {
    {.name = "Indexed", .properties = indexed_props, .property_count = IX_COUNT},
};

static coffer_class_id g_cls;

static int ix_setup(void **state)
{
    if (ts_setup_schema(state, index_schema, 1) != 0)
        return -1;
    ts_env *env = *state;
    if (coffer_db_find_class(env->db, "Indexed", &g_cls) != COFFER_OK)
        return -1;
    return 0;
}

#define IX_TEST_ALL_MODES(f) TS_TEST_ALL_MODES_SETUP(f, ix_setup)

/* ------------------------------------------------------------------------ */
/* Value domains: small, so that values repeat                               */
/* ------------------------------------------------------------------------ */

#define DOMAIN 8
static char *g_strings[DOMAIN];
static uint8_t g_oids[DOMAIN][12];
static uint8_t g_uuids[DOMAIN][16];

static void init_domains(void)
{
    static int done = 0;
    if (done)
        return;
    done = 1;
    /* strings: empty, short, multi-byte, and long ones sharing long prefixes */
    const size_t long_sizes[] = {600, 600, 2000, 5000, 5000};
    g_strings[0] = strdup("");
    g_strings[1] = strdup("short");
    g_strings[2] = strdup("\xc3\xa9t\xc3\xa9 \xe6\x97\xa5");
    for (int i = 0; i < 5; i++) {
        size_t n = long_sizes[i];
        char *s = malloc(n + 1);
        for (size_t j = 0; j < n; j++)
            s[j] = (char)('a' + (j % 26));
        s[n] = 0;
        s[n - 1] = (char)('0' + i); /* differ in the last byte only */
        g_strings[3 + i] = s;
    }
    for (int i = 0; i < DOMAIN; i++) {
        memset(g_oids[i], 0, 12);
        g_oids[i][11] = (uint8_t)i;
        g_oids[i][0] = (uint8_t)(0x60 + i);
        memset(g_uuids[i], 0xee, 16);
        g_uuids[i][15] = (uint8_t)i;
    }
}

/* The i-th value (0..DOMAIN-1) of property p; DOMAIN means null for
 * optional properties. */
static coffer_value domain_value(coffer_property_id p, int i)
{
    int opt = p >= IX_OPT_BOOL && p <= IX_OPT_UUID;
    if (opt && i == DOMAIN)
        return coffer_value_null();
    switch (p) {
    case IX_BOOL:
    case IX_OPT_BOOL: return coffer_value_bool(i % 2);
    case IX_INT:
    case IX_OPT_INT: {
        static const int64_t ints[DOMAIN] = {0, 1, -1, INT64_MIN, INT64_MAX, 256, -256, 1000000007};
        return coffer_value_int(ints[i]);
    }
    case IX_STRING:
    case IX_OPT_STRING: return coffer_value_string(g_strings[i], strlen(g_strings[i]));
    case IX_DATE:
    case IX_OPT_DATE: {
        /* same seconds, different nanoseconds; negatives */
        static const coffer_timestamp dates[DOMAIN] = {{0, 0},   {0, 1},       {1, 0},          {-1, 0},
                                                       {-1, -1}, {1700000000, 0}, {1700000000, 999}, {-86400, 0}};
        return coffer_value_date(dates[i].seconds, dates[i].nanoseconds);
    }
    case IX_OID:
    case IX_OPT_OID: return coffer_value_object_id(g_oids[i]);
    case IX_UUID:
    case IX_OPT_UUID: return coffer_value_uuid(g_uuids[i]);
    case IX_PLAIN: return coffer_value_int(i);
    }
    return coffer_value_null();
}

static int domain_size(coffer_property_id p)
{
    int opt = p >= IX_OPT_BOOL && p <= IX_OPT_UUID;
    if (p == IX_BOOL || p == IX_OPT_BOOL)
        return opt ? 3 : 2; /* false, true (, null handled below) */
    return opt ? DOMAIN + 1 : DOMAIN;
}

static coffer_value domain_pick(coffer_property_id p, int i)
{
    if ((p == IX_OPT_BOOL) && i == 2)
        return coffer_value_null();
    return domain_value(p, i);
}

static void random_fields(coffer_field *f)
{
    for (coffer_property_id p = 0; p < IX_COUNT; p++)
        f[p] = ts_field(p, domain_pick(p, (int)ts_rand_below((uint64_t)domain_size(p))));
}

/* ------------------------------------------------------------------------ */
/* Comparison with a brute-force scan                                        */
/* ------------------------------------------------------------------------ */

static size_t scan_keys(coffer_txn *txn, coffer_property_id p, const coffer_value *v, coffer_object_key *out)
{
    coffer_iter *it = NULL;
    assert_ok(coffer_class_iterate(txn, g_cls, &it));
    size_t n = 0;
    coffer_object *obj = NULL;
    while (ts_next(it, &obj)) {
        coffer_value got;
        assert_ok(coffer_object_get_value(obj, p, &got));
        if (ts_value_equal(&got, v))
            out[n++] = coffer_object_key_of(obj);
    }
    coffer_iter_free(it);
    return n;
}

static void compare_all(coffer_txn *txn, size_t max_objects)
{
    coffer_object_key *expect = calloc(max_objects + 1, sizeof *expect);
    size_t total_hits = 0;
    for (coffer_property_id p = 0; p < IX_PLAIN; p++) {
        for (int i = 0; i < domain_size(p); i++) {
            coffer_value v = domain_pick(p, i);
            size_t n = scan_keys(txn, p, &v, expect);
            coffer_iter *it = NULL;
            assert_ok(coffer_index_find(txn, g_cls, p, &v, &it));
            coffer_object_key *got = NULL;
            size_t m = ts_collect_keys(it, &got);
            if (m != n || (n && memcmp(got, expect, n * sizeof *got) != 0)) {
                char desc[160];
                print_error("index_find(%s, %s): %zu objects, the scan finds %zu\n", indexed_props[p].name,
                            ts_value_describe(&v, desc, sizeof desc), m, n);
                free(got);
                free(expect);
                fail();
            }
            total_hits += n;
            free(got);
        }
    }
    free(expect);
    assert_true(total_hits > 0);
}

/* compare_all in the write transaction txn, which is then committed, and
 * again in a new read transaction. */
static void compare_all_and_committed(coffer_db *db, coffer_txn *txn, size_t max_objects)
{
    compare_all(txn, max_objects);
    ts_commit(txn);
    txn = ts_begin(db, COFFER_TXN_READ);
    compare_all(txn, max_objects);
    coffer_txn_free(txn);
}

TS_ENV_TEST(test_random_vs_scan)
{
    init_domains();
    ts_seed(1234 + (uint64_t)env->mode);
    enum { N = 300 };
    coffer_object_key keys[N];
    coffer_txn *txn = ts_begin(env->db, COFFER_TXN_WRITE);
    for (int i = 0; i < N; i++) {
        coffer_field f[IX_COUNT];
        random_fields(f);
        f[IX_PLAIN] = ts_field(IX_PLAIN, coffer_value_int(i));
        coffer_object *obj = ts_create(txn, g_cls, f, IX_COUNT);
        keys[i] = coffer_object_key_of(obj);
    }
    /* inside the write transaction, then committed */
    compare_all_and_committed(env->db, txn, N);

    /* random updates (single values and set_fields) and deletes */
    txn = ts_begin(env->db, COFFER_TXN_WRITE);
    int deleted[N] = {0};
    for (int r = 0; r < 150; r++) {
        int i = (int)ts_rand_below(N);
        if (deleted[i])
            continue;
        coffer_object *obj = NULL;
        assert_ok(coffer_object_get(txn, g_cls, keys[i], &obj));
        if (r % 5 == 0) {
            assert_ok(coffer_object_delete(obj));
            deleted[i] = 1;
        } else if (r % 5 == 1) {
            coffer_field f[IX_COUNT];
            random_fields(f);
            assert_ok(coffer_object_set_fields(obj, f, IX_PLAIN));
        } else {
            coffer_property_id p = (coffer_property_id)ts_rand_below(IX_PLAIN);
            coffer_value v = domain_pick(p, (int)ts_rand_below((uint64_t)domain_size(p)));
            assert_ok(coffer_object_set_value(obj, p, &v));
        }
        coffer_object_release(obj);
    }
    compare_all_and_committed(env->db, txn, N);

    /* an aborted batch of updates leaves the index as committed */
    txn = ts_begin(env->db, COFFER_TXN_WRITE);
    for (int i = 0; i < N; i += 2) {
        if (deleted[i])
            continue;
        coffer_object *obj = NULL;
        assert_ok(coffer_object_get(txn, g_cls, keys[i], &obj));
        coffer_value v = domain_value(IX_STRING, 1);
        assert_ok(coffer_object_set_value(obj, IX_STRING, &v));
        coffer_object_release(obj);
    }
    assert_ok(coffer_txn_abort(txn));
    coffer_txn_free(txn);
    txn = ts_begin(env->db, COFFER_TXN_READ);
    compare_all(txn, N);
    coffer_txn_free(txn);

    /* class_clear empties every index */
    txn = ts_begin(env->db, COFFER_TXN_WRITE);
    assert_ok(coffer_class_clear(txn, g_cls));
    for (coffer_property_id p = 0; p < IX_PLAIN; p++) {
        for (int i = 0; i < domain_size(p); i++) {
            coffer_value v = domain_pick(p, i);
            assert_int_equal(ts_index_count(txn, g_cls, p, &v), 0);
        }
    }
    ts_commit(txn);
    /* and the indexes work again afterwards */
    txn = ts_begin(env->db, COFFER_TXN_WRITE);
    for (int i = 0; i < 40; i++) {
        coffer_field f[IX_COUNT];
        random_fields(f);
        assert_ok(coffer_object_create(txn, g_cls, f, IX_COUNT, COFFER_UPDATE_ERROR, NULL));
    }
    ts_commit(txn);
    txn = ts_begin(env->db, COFFER_TXN_READ);
    compare_all(txn, 40);
    coffer_txn_free(txn);
}

static size_t find_count(coffer_txn *txn, coffer_property_id p, coffer_value v, coffer_object_key *first)
{
    coffer_iter *it = NULL;
    assert_ok(coffer_index_find(txn, g_cls, p, &v, &it));
    coffer_object_key *keys = NULL;
    size_t n = ts_collect_keys(it, &keys);
    for (size_t i = 1; i < n; i++)
        assert_true(keys[i] > keys[i - 1]); /* key order */
    if (first && n)
        *first = keys[0];
    free(keys);
    return n;
}

TS_ENV_TEST(test_update_moves_entry)
{
    init_domains();
    coffer_txn *txn = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_field f[] = {ts_field(IX_STRING, ts_str("old name")), ts_field(IX_INT, coffer_value_int(5)),
                        ts_field(IX_OPT_STRING, ts_str("nick"))};
    coffer_object *obj = ts_create(txn, g_cls, f, 3);
    coffer_object_key key = coffer_object_key_of(obj);
    ts_commit(txn);

    txn = ts_begin(env->db, COFFER_TXN_WRITE);
    assert_ok(coffer_object_get(txn, g_cls, key, &obj));
    coffer_value v = ts_str("new name");
    assert_ok(coffer_object_set_value(obj, IX_STRING, &v));
    coffer_value n = coffer_value_null();
    assert_ok(coffer_object_set_value(obj, IX_OPT_STRING, &n));
    coffer_field sf[] = {ts_field(IX_INT, coffer_value_int(6))};
    assert_ok(coffer_object_set_fields(obj, sf, 1));
    /* visible in the write transaction */
    assert_int_equal(find_count(txn, IX_STRING, ts_str("old name"), NULL), 0);
    assert_int_equal(find_count(txn, IX_STRING, ts_str("new name"), NULL), 1);
    assert_int_equal(find_count(txn, IX_INT, coffer_value_int(5), NULL), 0);
    assert_int_equal(find_count(txn, IX_INT, coffer_value_int(6), NULL), 1);
    assert_int_equal(find_count(txn, IX_OPT_STRING, ts_str("nick"), NULL), 0);
    assert_int_equal(find_count(txn, IX_OPT_STRING, coffer_value_null(), NULL), 1);
    ts_commit(txn);

    txn = ts_begin(env->db, COFFER_TXN_READ);
    coffer_object_key first = 0;
    assert_int_equal(find_count(txn, IX_STRING, ts_str("old name"), NULL), 0);
    assert_int_equal(find_count(txn, IX_STRING, ts_str("new name"), &first), 1);
    assert_int_equal(first, key);
    assert_int_equal(find_count(txn, IX_INT, coffer_value_int(6), NULL), 1);
    assert_int_equal(find_count(txn, IX_OPT_STRING, coffer_value_null(), NULL), 1);
    /* required string default "" is indexed too */
    assert_int_equal(find_count(txn, IX_OPT_INT, coffer_value_null(), NULL), 1);
    assert_int_equal(find_count(txn, IX_BOOL, coffer_value_bool(false), NULL), 1);
    assert_int_equal(find_count(txn, IX_DATE, coffer_value_date(0, 0), NULL), 1);
    static const uint8_t zeros[16] = {0};
    assert_int_equal(find_count(txn, IX_OID, coffer_value_object_id(zeros), NULL), 1);
    assert_int_equal(find_count(txn, IX_UUID, coffer_value_uuid(zeros), NULL), 1);
    coffer_txn_free(txn);

    /* setting the same value again keeps exactly one entry */
    txn = ts_begin(env->db, COFFER_TXN_WRITE);
    assert_ok(coffer_object_get(txn, g_cls, key, &obj));
    assert_ok(coffer_object_set_value(obj, IX_STRING, &v));
    assert_ok(coffer_object_set_value(obj, IX_STRING, &v));
    assert_int_equal(find_count(txn, IX_STRING, ts_str("new name"), NULL), 1);
    /* delete: gone from every index */
    assert_ok(coffer_object_delete(obj));
    assert_int_equal(find_count(txn, IX_STRING, ts_str("new name"), NULL), 0);
    assert_int_equal(find_count(txn, IX_INT, coffer_value_int(6), NULL), 0);
    assert_int_equal(find_count(txn, IX_OPT_STRING, coffer_value_null(), NULL), 0);
    ts_commit(txn);
    txn = ts_begin(env->db, COFFER_TXN_READ);
    assert_int_equal(find_count(txn, IX_STRING, ts_str("new name"), NULL), 0);
    assert_int_equal(find_count(txn, IX_BOOL, coffer_value_bool(false), NULL), 0);
    coffer_txn_free(txn);
}

TS_ENV_TEST(test_long_strings)
{
    /* 20 strings of 3000 bytes sharing a 2990-byte prefix, some repeated */
    enum { N = 20 };
    char *s[N];
    for (int i = 0; i < N; i++) {
        s[i] = malloc(3001);
        memset(s[i], 'Q', 3000);
        s[i][3000] = 0;
        snprintf(s[i] + 2990, 11, "%010d", i % 7);
    }
    coffer_txn *txn = ts_begin(env->db, COFFER_TXN_WRITE);
    for (int i = 0; i < N; i++) {
        coffer_field f[] = {ts_field(IX_STRING, ts_str(s[i])), ts_field(IX_OPT_STRING, ts_str(s[i])),
                            ts_field(IX_PLAIN, coffer_value_int(i))};
        assert_ok(coffer_object_create(txn, g_cls, f, 3, COFFER_UPDATE_ERROR, NULL));
    }
    ts_commit(txn);
    txn = ts_begin(env->db, COFFER_TXN_READ);
    for (int k = 0; k < 7; k++) {
        size_t expect = 0;
        for (int i = 0; i < N; i++)
            expect += (i % 7 == k);
        assert_int_equal(find_count(txn, IX_STRING, ts_str(s[k]), NULL), expect);
        assert_int_equal(find_count(txn, IX_OPT_STRING, ts_str(s[k]), NULL), expect);
    }
    /* a prefix of them, and the same length with another ending: none */
    char *p = strndup(s[0], 2995);
    assert_int_equal(find_count(txn, IX_STRING, ts_str(p), NULL), 0);
    char *q = strdup(s[0]);
    q[2999] = 'x';
    assert_int_equal(find_count(txn, IX_STRING, ts_str(q), NULL), 0);
    coffer_txn_free(txn);
    free(p);
    free(q);
    for (int i = 0; i < N; i++)
        free(s[i]);
}

TS_ENV_TEST(test_errors)
{
    coffer_txn *txn = ts_begin(env->db, COFFER_TXN_READ);
    coffer_iter *it = NULL;
    coffer_value v = coffer_value_int(1);
    assert_status(coffer_index_find(txn, g_cls, IX_PLAIN, &v, &it), COFFER_ERR_INVALID_ARGUMENT);
    assert_error_contains("plainValue");
    v = ts_str("x");
    assert_status(coffer_index_find(txn, g_cls, IX_INT, &v, &it), COFFER_ERR_TYPE);
    v = coffer_value_int(1);
    assert_status(coffer_index_find(txn, g_cls, IX_STRING, &v, &it), COFFER_ERR_TYPE);
    v = coffer_value_null();
    assert_status(coffer_index_find(txn, g_cls, IX_INT, &v, &it), COFFER_ERR_TYPE);
    v = coffer_value_int(1);
    assert_status(coffer_index_find(txn, g_cls, IX_COUNT, &v, &it), COFFER_ERR_INVALID_ARGUMENT);
    assert_status(coffer_index_find(txn, 5, IX_INT, &v, &it), COFFER_ERR_INVALID_ARGUMENT);
    assert_status(coffer_index_find(txn, g_cls, IX_INT, NULL, &it), COFFER_ERR_INVALID_ARGUMENT);
    assert_status(coffer_index_find(txn, g_cls, IX_INT, &v, NULL), COFFER_ERR_INVALID_ARGUMENT);
    assert_status(coffer_index_find(NULL, g_cls, IX_INT, &v, &it), COFFER_ERR_INVALID_ARGUMENT);
    /* empty result */
    assert_ok(coffer_index_find(txn, g_cls, IX_INT, &v, &it));
    coffer_object *obj = NULL;
    assert_status(coffer_iter_next(it, &obj), COFFER_DONE);
    coffer_iter_free(it);
    coffer_txn_free(txn);
}

/* The standard schema's Person.name index (on the env's own schema). */
TS_ENV_TEST(test_person_name_index)
{
    coffer_db *db = NULL;
    /* a separate file/identifier for the standard schema */
    ts_env other = *env;
    other.db = NULL;
    strcat(other.path, ".person");
    strcat(other.ident, "-person");
    assert_ok(ts_env_open(&other, ts_std_schema, TS_STD_SCHEMA_COUNT, 1, &db));
    coffer_class_id person = ts_class(db, "Person");
    coffer_txn *txn = ts_begin(db, COFFER_TXN_WRITE);
    const char *names[] = {"Ann", "Bob", "Ann", "Cy", "Ann"};
    for (int i = 0; i < 5; i++)
        ts_add_person(txn, person, i, names[i]);
    ts_commit(txn);
    txn = ts_begin(db, COFFER_TXN_READ);
    coffer_iter *it = NULL;
    coffer_value v = ts_str("Ann");
    assert_ok(coffer_index_find(txn, person, PERSON_NAME, &v, &it));
    int seen = 0;
    coffer_object *obj = NULL;
    int64_t expect_ids[] = {0, 2, 4};
    while (coffer_iter_next(it, &obj) == COFFER_OK) {
        assert_true(seen < 3);
        assert_int_equal(ts_get_int(obj, PERSON_ID), expect_ids[seen]);
        seen++;
    }
    assert_int_equal(seen, 3);
    coffer_iter_free(it);
    coffer_txn_free(txn);
    /* an upsert that changes the indexed name moves the entry */
    txn = ts_begin(db, COFFER_TXN_WRITE);
    coffer_field u[] = {ts_field(PERSON_ID, coffer_value_int(2)), ts_field(PERSON_NAME, ts_str("Zed"))};
    assert_ok(coffer_object_create(txn, person, u, 2, COFFER_UPDATE_ALL, NULL));
    coffer_field m[] = {ts_field(PERSON_ID, coffer_value_int(4)), ts_field(PERSON_NAME, ts_str("Zed"))};
    assert_ok(coffer_object_create(txn, person, m, 2, COFFER_UPDATE_MODIFIED, NULL));
    ts_commit(txn);
    txn = ts_begin(db, COFFER_TXN_READ);
    v = ts_str("Ann");
    assert_int_equal(ts_index_count(txn, person, PERSON_NAME, &v), 1);
    v = ts_str("Zed");
    assert_int_equal(ts_index_count(txn, person, PERSON_NAME, &v), 2);
    /* a non-indexed property of Person */
    v = coffer_value_int(1);
    assert_status(coffer_index_find(txn, person, PERSON_AGE, &v, &it), COFFER_ERR_INVALID_ARGUMENT);
    assert_error_contains("age");
    coffer_txn_free(txn);
    coffer_close(db);
}

/* Many objects with one value: the iterator walks them all in key order. */
TS_ENV_TEST(test_many_duplicates)
{
    enum { N = 3000 };
    coffer_txn *txn = ts_begin(env->db, COFFER_TXN_WRITE);
    for (int i = 0; i < N; i++) {
        coffer_field f[] = {ts_field(IX_BOOL, coffer_value_bool(i % 3 == 0)), ts_field(IX_INT, coffer_value_int(7)),
                            ts_field(IX_PLAIN, coffer_value_int(i))};
        assert_ok(coffer_object_create(txn, g_cls, f, 3, COFFER_UPDATE_ERROR, NULL));
    }
    ts_commit(txn);
    txn = ts_begin(env->db, COFFER_TXN_READ);
    assert_int_equal(find_count(txn, IX_INT, coffer_value_int(7), NULL), N);
    assert_int_equal(find_count(txn, IX_BOOL, coffer_value_bool(true), NULL), N / 3);
    assert_int_equal(find_count(txn, IX_BOOL, coffer_value_bool(false), NULL), N - N / 3);
    coffer_txn_free(txn);
}

/* Iterating an index result while moving each visited object out of it:
 * every object is visited exactly once and the loop ends. */
TS_ENV_TEST(test_index_iterate_while_updating)
{
    enum { N = 150 };
    coffer_txn *txn = ts_begin(env->db, COFFER_TXN_WRITE);
    for (int i = 0; i < N; i++) {
        coffer_field f[] = {ts_field(IX_INT, coffer_value_int(i % 2 ? 7 : 9)), ts_field(IX_PLAIN, coffer_value_int(i))};
        assert_ok(coffer_object_create(txn, g_cls, f, 2, COFFER_UPDATE_ERROR, NULL));
    }
    ts_commit(txn);
    txn = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_iter *it = NULL;
    coffer_value seven = coffer_value_int(7);
    assert_ok(coffer_index_find(txn, g_cls, IX_INT, &seven, &it));
    coffer_object_key seen[N];
    int n = 0;
    coffer_object *obj = NULL;
    while (ts_next(it, &obj)) {
        assert_true(n < N);
        coffer_object_key k = coffer_object_key_of(obj);
        for (int j = 0; j < n; j++)
            assert_true(seen[j] != k);
        seen[n++] = k;
        assert_int_equal(ts_get_int(obj, IX_INT), 7);
        coffer_value v = coffer_value_int(n % 2 ? 8 : 6); /* before and after 7 */
        assert_ok(coffer_object_set_value(obj, IX_INT, &v));
    }
    coffer_iter_free(it);
    assert_int_equal(n, N / 2);
    assert_int_equal(find_count(txn, IX_INT, seven, NULL), 0);
    /* the same with deletes */
    coffer_value nine = coffer_value_int(9);
    assert_ok(coffer_index_find(txn, g_cls, IX_INT, &nine, &it));
    n = 0;
    while (ts_next(it, &obj)) {
        assert_true(n < N);
        assert_ok(coffer_object_delete(obj));
        n++;
    }
    coffer_iter_free(it);
    assert_int_equal(n, N / 2);
    assert_int_equal(ts_count(txn, g_cls), N / 2);
    ts_commit(txn);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        IX_TEST_ALL_MODES(test_random_vs_scan),
        IX_TEST_ALL_MODES(test_update_moves_entry),
        IX_TEST_ALL_MODES(test_long_strings),
        IX_TEST_ALL_MODES(test_errors),
        IX_TEST_ALL_MODES(test_person_name_index),
        IX_TEST_ALL_MODES(test_many_duplicates),
        IX_TEST_ALL_MODES(test_index_iterate_while_updating),
    };
    return cmocka_run_group_tests_name("indexes", tests, NULL, NULL);
}
