/*
 * test_query_columnar.c — unindexed queries on file format 5, whose scans
 * test a batch of objects column by column (query/columnar.c): every result
 * equals the one the object-by-object evaluator gives for the same
 * predicate ("(q) OR FALSEPREDICATE" is evaluated object by object), for
 * every property type, null values, optional properties, deleted objects,
 * a partly filled cluster, objects stored outside their cluster, clusters
 * changed by the transaction that queries, encrypted files and a property
 * added by a migration; and a scan allocates nothing per object (the
 * library's malloc, calloc and realloc are counted: this test is linked
 * with --wrap for them).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_support.h"

/* ---- counting the library's allocations --------------------------------- */

void *__real_malloc(size_t size);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t size);

static size_t allocations;

void *__wrap_malloc(size_t size)
{
    allocations++;
    return __real_malloc(size);
}

void *__wrap_calloc(size_t n, size_t size)
{
    allocations++;
    return __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t size)
{
    allocations++;
    return __real_realloc(p, size);
}

/* ---- the data ------------------------------------------------------------ */

/* The properties of class T at version 1. */
#define T_PROPS_V1                                                                    \
    {.name = "i", .type = COFFER_TYPE_INT},                                           \
    {.name = "oi", .type = COFFER_TYPE_INT, .flags = COFFER_PROPERTY_OPTIONAL},       \
    {.name = "d", .type = COFFER_TYPE_DOUBLE},                                        \
    {.name = "od", .type = COFFER_TYPE_DOUBLE, .flags = COFFER_PROPERTY_OPTIONAL},    \
    {.name = "f", .type = COFFER_TYPE_FLOAT},                                         \
    {.name = "b", .type = COFFER_TYPE_BOOL},                                          \
    {.name = "ob", .type = COFFER_TYPE_BOOL, .flags = COFFER_PROPERTY_OPTIONAL},      \
    {.name = "s", .type = COFFER_TYPE_STRING},                                        \
    {.name = "os", .type = COFFER_TYPE_STRING, .flags = COFFER_PROPERTY_OPTIONAL},    \
    {.name = "dt", .type = COFFER_TYPE_DATE},                                         \
    {.name = "dec", .type = COFFER_TYPE_DECIMAL128},                                  \
    {.name = "oid", .type = COFFER_TYPE_OBJECT_ID},                                   \
    {.name = "u", .type = COFFER_TYPE_UUID, .flags = COFFER_PROPERTY_OPTIONAL},       \
    {.name = "bin", .type = COFFER_TYPE_BINARY, .flags = COFFER_PROPERTY_OPTIONAL}

static const coffer_property_schema t_props[] = {T_PROPS_V1};
enum { NPROPS = sizeof t_props / sizeof t_props[0] };
static const coffer_class_schema schema_v1[] = {{.name = "T", .properties = t_props, .property_count = NPROPS}};

/* Version 2 adds a required int and an optional string, which the
 * clusters written before do not hold. */
static const coffer_property_schema t_props_v2[] = {
    T_PROPS_V1,
    {.name = "added", .type = COFFER_TYPE_INT},
    {.name = "added_s", .type = COFFER_TYPE_STRING, .flags = COFFER_PROPERTY_OPTIONAL},
};
static const coffer_class_schema schema_v2[] = {
    {.name = "T", .properties = t_props_v2, .property_count = sizeof t_props_v2 / sizeof t_props_v2[0]}};

static int setup(void **state) { return ts_setup_schema(state, schema_v1, 1); }

/* A decimal128 of integer value k (BID, exponent 0). */
static coffer_value decimal(int64_t k)
{
    return k < 0 ? coffer_value_decimal128((uint64_t)-k, 0xB040000000000000ull)
                 : coffer_value_decimal128((uint64_t)k, 0x3040000000000000ull);
}

static const char *const words[] = {"Alpha", "alpha", "beta", "", "gamma ray", "ALPHABET", "delta-1", "x"};

/* Object n's values; `big` stores a binary large enough to keep the object
 * outside its cluster. */
static void create_one(coffer_txn *w, coffer_class_id cls, int64_t n, int big)
{
    char s[48], os[48];
    snprintf(s, sizeof s, "%s-%lld", words[n % 8], (long long)(n % 23));
    snprintf(os, sizeof os, "opt %s", words[(n / 3) % 8]);
    uint8_t oid[12] = {0}, uuid[16] = {0};
    oid[11] = (uint8_t)(n % 5);
    uuid[0] = (uint8_t)(n % 3);
    static uint8_t blob[2048];
    memset(blob, (int)(n & 0x7f), sizeof blob);
    double d = n % 50 == 0 ? NAN : (double)(n % 41) * 0.5 - 10;
    coffer_field fields[] = {
        {0, coffer_value_int((n * 37) % 101 - 50)},
        {1, n % 3 == 0 ? coffer_value_null() : coffer_value_int(n % 17 - 8)},
        {2, coffer_value_double(d)},
        {3, n % 4 == 0 ? coffer_value_null() : coffer_value_double((double)(n % 9))},
        {4, coffer_value_float((float)(n % 13) - 6.5f)},
        {5, coffer_value_bool(n % 2 == 0)},
        {6, n % 5 == 0 ? coffer_value_null() : coffer_value_bool(n % 3 == 0)},
        {7, coffer_value_string(s, strlen(s))},
        {8, n % 4 == 1 ? coffer_value_null() : coffer_value_string(os, strlen(os))},
        {9, coffer_value_date(1700000000 + (n % 29) * 3600, (int32_t)(n % 2) * 500)},
        {10, decimal(n % 19 - 9)},
        {11, coffer_value_object_id(oid)},
        {12, n % 6 == 0 ? coffer_value_null() : coffer_value_uuid(uuid)},
        {13, big ? coffer_value_binary(blob, sizeof blob)
                 : n % 2 ? coffer_value_null() : coffer_value_binary(blob, (size_t)(n % 7))},
    };
    coffer_object_release(ts_create(w, cls, fields, sizeof fields / sizeof fields[0]));
}

/* 700 objects (two full clusters and a partly filled one), one stored
 * outside its cluster, then every seventh deleted. */
static void fill(ts_env *env)
{
    coffer_class_id cls = ts_class(env->db, "T");
    coffer_txn *w = ts_begin(env->db, COFFER_TXN_WRITE);
    for (int64_t n = 1; n <= 700; n++)
        create_one(w, cls, n, n == 300);
    ts_commit(w);
    w = ts_begin(env->db, COFFER_TXN_WRITE);
    for (coffer_object_key k = 7; k <= 700; k += 7) {
        coffer_object *obj;
        assert_ok(coffer_object_get(w, cls, k, &obj));
        assert_ok(coffer_object_delete(obj));
        coffer_object_release(obj);
    }
    ts_commit(w);
}

/* The most matches a query of these tests has. */
enum { MAX_KEYS = 2048 };

/* The database the queries of the running test are compiled for. */
static coffer_db *test_db;

/* The keys query `text` matches, in result order. */
static size_t run_keys(coffer_txn *txn, coffer_class_id cls, const char *text, coffer_object_key *keys, size_t cap)
{
    coffer_query *q;
    coffer_results *r;
    uint64_t n;
    coffer_status st = coffer_query_compile(test_db, cls, text, SIZE_MAX, NULL, 0, &q);
    if (st != COFFER_OK)
        fail_msg("query \"%s\" does not compile: %s", text, coffer_last_error());
    assert_ok(coffer_query_run(txn, q, &r));
    assert_ok(coffer_results_count(r, &n));
    assert_true(n <= cap);
    if (n)
        assert_ok(coffer_results_copy_keys(r, 0, (size_t)n, keys));
    coffer_results_free(r);
    coffer_query_free(q);
    return (size_t)n;
}

/* Runs `text` and its object-by-object twin and checks they agree;
 * returns the number of matches. */
static size_t check_query(coffer_txn *txn, coffer_class_id cls, const char *text)
{
    static coffer_object_key got[MAX_KEYS], want[MAX_KEYS];
    char twin[512];
    snprintf(twin, sizeof twin, "(%s) OR FALSEPREDICATE", text);
    size_t n = run_keys(txn, cls, text, got, MAX_KEYS);
    size_t m = run_keys(txn, cls, twin, want, MAX_KEYS);
    if (n != m)
        fail_msg("\"%s\": %zu matches, the object-by-object evaluation %zu", text, n, m);
    for (size_t i = 0; i < n; i++)
        if (got[i] != want[i])
            fail_msg("\"%s\": match %zu is object %llu, the object-by-object evaluation's %llu", text, i,
                     (unsigned long long)got[i], (unsigned long long)want[i]);
    return n;
}

static const char *const queries[] = {
    "i > 10", "i >= 10", "i < -3", "i <= -3", "i == 7", "i != 7", "i BETWEEN {-5, 5}", "i IN {1, 2, 3}",
    "i > 10.5", "i > 9223372036854775807", "i < -9223372036854775808", "i == nil", "i != nil",
    "oi == nil", "oi != nil", "oi > 0", "oi <= 0", "oi BETWEEN {-2, 2}",
    "d > 3.5", "d == 0", "d < 0", "d != 1.5", "od == nil", "od >= 4", "f < 1", "f == -0.5",
    "d BETWEEN {-1.5, 2.0}", "d <= -10", "d >= -10", "d < 1e300", "od < 5 AND d > -3", "od != 4.0", "f > -0.5",
    "f BETWEEN {-2.5, 2.5}", "f != 0.5", "d > 3", "f < 1.0",
    "b == true", "b == false", "ob == nil", "ob == false", "ob != true",
    "s CONTAINS 'lph'", "s CONTAINS[c] 'ALPHA'", "s BEGINSWITH 'alpha-1'", "s ENDSWITH '9'",
    "s ==[c] 'ALPHA-0'", "s LIKE '*a-1?'", "s == '-0'", "s BEGINSWITH ''", "s > 'beta'",
    "os == nil", "os CONTAINS 'al'", "os ENDSWITH[c] 'RAY'", "os != nil", "os == 'opt beta'", "os != 'opt beta'",
    "os BEGINSWITH 'opt g'", "s != 'x-0'", "s CONTAINS '-1'", "s CONTAINS 'a-1' AND i > 0", "i > 0 AND s CONTAINS 'a-1'",
    "dt > T1700036000:0", "dt == T1700003600:500", "dt <= T1700003600:0", "dec > 5", "dec == -3",
    "oid == oid(000000000000000000000003)", "u == nil", "u != uuid(00000000-0000-0000-0000-000000000000)",
    "bin == nil", "bin != nil",
    "i > 0 AND s CONTAINS '1'", "s CONTAINS '1' AND i > 0 AND b == true", "oi > 0 AND d < 10 AND os == nil",
    "i > -100 AND i < 100 AND oi == nil", "b == true AND b == false",
};

static void check_all(coffer_txn *txn, coffer_class_id cls)
{
    for (size_t i = 0; i < sizeof queries / sizeof queries[0]; i++)
        check_query(txn, cls, queries[i]);
}

/* ---- tests --------------------------------------------------------------- */

TS_ENV_TEST(test_every_type_matches_the_object_evaluator)
{
    test_db = env->db;
    fill(env);
    coffer_class_id cls = ts_class(env->db, "T");
    coffer_txn *r = ts_begin(env->db, COFFER_TXN_READ);
    check_all(r, cls);
    /* Some answers known independently: 600 objects left, half of them
     * with an even n (b), none of them of key 7. */
    coffer_object_key keys[MAX_KEYS];
    assert_int_equal(run_keys(r, cls, "TRUEPREDICATE", keys, MAX_KEYS), 600);
    assert_int_equal(check_query(r, cls, "i != nil"), 600);
    size_t even = 0;
    for (int64_t n = 1; n <= 700; n++)
        even += n % 7 != 0 && n % 2 == 0;
    assert_int_equal(check_query(r, cls, "b == true"), even);
    size_t positive = 0;
    for (int64_t n = 1; n <= 700; n++)
        positive += n % 7 != 0 && (n * 37) % 101 - 50 > 10;
    assert_int_equal(check_query(r, cls, "i > 10"), positive);
    coffer_txn_free(r);
}

TS_ENV_TEST(test_clusters_changed_by_the_transaction)
{
    test_db = env->db;
    fill(env);
    coffer_class_id cls = ts_class(env->db, "T");
    coffer_txn *w = ts_begin(env->db, COFFER_TXN_WRITE);
    /* A change in the first cluster, a deletion in the second, new objects
     * in the third: those go object by object, the rest in batches. */
    coffer_object *obj;
    assert_ok(coffer_object_get(w, cls, 2, &obj));
    coffer_value v = coffer_value_int(99);
    assert_ok(coffer_object_set_value(obj, 0, &v));
    coffer_object_release(obj);
    assert_ok(coffer_object_get(w, cls, 260, &obj));
    assert_ok(coffer_object_delete(obj));
    coffer_object_release(obj);
    for (int64_t n = 701; n <= 720; n++)
        create_one(w, cls, n, 0);
    check_all(w, cls);
    coffer_object_key keys[MAX_KEYS];
    size_t n = run_keys(w, cls, "i == 99", keys, MAX_KEYS);
    assert_int_equal(n, 1);
    assert_int_equal(keys[0], 2);
    assert_int_equal(run_keys(w, cls, "i > -1000", keys, MAX_KEYS), 600 - 1 + 20);
    ts_commit(w);
    coffer_txn *r = ts_begin(env->db, COFFER_TXN_READ);
    check_all(r, cls);
    coffer_txn_free(r);
    /* Appends that fill clusters write them inside the transaction, which
     * then queries them. */
    w = ts_begin(env->db, COFFER_TXN_WRITE);
    for (int64_t n = 721; n <= 1300; n++)
        create_one(w, cls, n, 0);
    check_all(w, cls);
    assert_int_equal(run_keys(w, cls, "i > -1000", keys, MAX_KEYS), 600 - 1 + 20 + 580);
    coffer_txn_abort(w);
    coffer_txn_free(w);
}

TS_ENV_TEST(test_property_added_by_a_migration)
{
    fill(env);
    coffer_db *keep = ts_env_keep(env);
    ts_env_reopen(env, schema_v2, 1, 2);
    test_db = env->db;
    coffer_class_id cls = ts_class(env->db, "T");
    coffer_txn *w = ts_begin(env->db, COFFER_TXN_WRITE);
    for (int64_t n = 0; n < 300; n++) { /* new clusters, with the new columns */
        coffer_field fields[] = {{0, coffer_value_int(n)}, {14, coffer_value_int(n % 5)},
                                 {15, n % 2 ? coffer_value_null() : coffer_value_string("new", 3)}};
        coffer_object_release(ts_create(w, cls, fields, 3));
    }
    ts_commit(w);
    coffer_txn *r = ts_begin(env->db, COFFER_TXN_READ);
    /* The 600 older objects read the required int as 0, the optional string as null. */
    assert_int_equal(check_query(r, cls, "added == 0"), 600 + 60);
    assert_int_equal(check_query(r, cls, "added > 0"), 240);
    assert_int_equal(check_query(r, cls, "added != 0"), 240);
    assert_int_equal(check_query(r, cls, "added_s == nil"), 600 + 150);
    assert_int_equal(check_query(r, cls, "added_s == 'new'"), 150);
    assert_int_equal(check_query(r, cls, "added_s CONTAINS 'ew'"), 150); /* values of one size: a fixed-width block */
    assert_int_equal(check_query(r, cls, "added_s != 'new'"), 750);
    assert_int_equal(check_query(r, cls, "added_s ENDSWITH 'w' AND added > 1"), 90);
    assert_int_equal(check_query(r, cls, "added_s CONTAINS ''"), 150); /* null contains nothing */
    assert_int_equal(check_query(r, cls, "added < 3 AND i > 100"), 119);
    check_query(r, cls, "added >= 0 AND added_s != nil AND i BETWEEN {10, 20}");
    check_all(r, cls);
    coffer_txn_free(r);
    if (keep)
        coffer_close(keep);
}

/* Counts the library's allocations while `text` runs and is counted. */
static size_t allocations_of(coffer_txn *txn, coffer_class_id cls, const char *text, uint64_t *matches)
{
    coffer_query *q;
    coffer_results *r;
    assert_ok(coffer_query_compile(test_db, cls, text, SIZE_MAX, NULL, 0, &q));
    size_t before = allocations;
    assert_ok(coffer_query_run(txn, q, &r));
    assert_ok(coffer_results_count(r, matches));
    size_t made = allocations - before;
    coffer_results_free(r);
    coffer_query_free(q);
    return made;
}

TS_ENV_TEST(test_a_scan_allocates_nothing_per_object)
{
    test_db = env->db;
    coffer_class_id cls = ts_class(env->db, "T");
    coffer_txn *w = ts_begin(env->db, COFFER_TXN_WRITE);
    for (int64_t n = 1; n <= 5000; n++)
        create_one(w, cls, n, 0);
    ts_commit(w);
    coffer_txn *r = ts_begin(env->db, COFFER_TXN_READ);
    uint64_t matches;
    /* The first scan opens the clusters (per cluster, not per object);
     * the next ones of the same snapshot find them open. */
    assert_true(allocations_of(r, cls, "i > 1000 AND s CONTAINS 'lph'", &matches) > 0); /* the counter counts */
    assert_int_equal(matches, 0);
    static const char *const scans[] = {"i > 1000", "i > -1000", "s CONTAINS 'lph'", "s CONTAINS[c] 'ALPHA'",
                                        "d > 3.5", "oi == nil AND i > 0", "s BEGINSWITH 'alpha' AND b == false"};
    for (size_t i = 0; i < sizeof scans / sizeof scans[0]; i++) {
        size_t made = allocations_of(r, cls, scans[i], &matches);
        /* Results grow by doubling: about log2(5000) reallocations at most. */
        if (made > 40)
            fail_msg("\"%s\" (%llu matches of 5000) made %zu allocations", scans[i], (unsigned long long)matches, made);
    }
    assert_int_equal(matches, 625); /* n % 8 == 1, all odd: the last scan counted what it should */
    coffer_txn_free(r);
}

int main(void)
{
    setenv("COFFER_TEST_STORAGE_FORMAT", "5", 1); /* every file of this suite: clusters */
    const struct CMUnitTest tests[] = {
        TS_TEST_ALL_MODES_SETUP(test_every_type_matches_the_object_evaluator, setup),
        TS_TEST_ALL_MODES_SETUP(test_clusters_changed_by_the_transaction, setup),
        TS_TEST_ALL_MODES_SETUP(test_property_added_by_a_migration, setup),
        TS_TEST_ALL_MODES_SETUP(test_a_scan_allocates_nothing_per_object, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
