/*
 * test_checksums.c — checksummed values in plain files (file format 4):
 * XXH64 against the reference implementation's values; a flipped bit in
 * every kind of stored value (an object's record, a list chunk, the stored
 * schema, an object-key counter) is COFFER_ERR_CORRUPTED naming the
 * checksum, never another value, and verify reports it; files of format 3
 * (Tests/fixtures/format3, written by the library of that format) read as
 * they are read-only and are upgraded in place by a read-write open, plain
 * and encrypted; a newer format is refused.
 */
#include <lmdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_support.h"
#include "storage/checksums.h"
#include "util/checksum.h"

/* ---- XXH64 --------------------------------------------------------------- */

static void test_xxh64_reference_values(void **state)
{
    (void)state;
    /* From the reference implementation (libxxhash 0.8.1, XXH64()). */
    assert_true(cf_xxh64("", 0, 0) == UINT64_C(0xEF46DB3751D8E999));
    assert_true(cf_xxh64("abc", 3, 0) == UINT64_C(0x44BC2CF5AD770999));
    uint8_t b[100];
    for (int i = 0; i < 100; i++)
        b[i] = (uint8_t)(i * 37 + 11);
    assert_true(cf_xxh64(b, sizeof b, 0) == UINT64_C(0x4826E367566EA023));
    assert_true(cf_xxh64(b, sizeof b, 0x1234567) == UINT64_C(0xB3316EDEE21F7171));
}

static void test_checksum_binds_the_place(void **state)
{
    (void)state;
    const uint8_t key[8] = {0, 0, 0, 0, 0, 0, 0, 1}, other[8] = {0, 0, 0, 0, 0, 0, 0, 2};
    uint32_t c = cf_checksum(2, key, 8, (const uint8_t *)"value", 5);
    assert_int_equal(c, cf_checksum(2, key, 8, (const uint8_t *)"value", 5));
    assert_int_not_equal(c, cf_checksum(2, other, 8, (const uint8_t *)"value", 5));
    assert_int_not_equal(c, cf_checksum(4, key, 8, (const uint8_t *)"value", 5));
    assert_int_not_equal(c, cf_checksum(2, key, 8, (const uint8_t *)"valuf", 5));
}

/* ---- raw access to a closed file ------------------------------------------ */

/* Flips bit `bit` of byte `at` (from the value's start; negative: from its
 * end) of the value under `key` (or, with klen 0, of the first value whose
 * key starts with byte `key[0]`) in sub-database `dbname`. */
static void flip_bit(const char *path, const char *dbname, const void *key, size_t klen, long at, int bit)
{
    ts_raw w;
    MDB_dbi dbi = ts_raw_open(&w, path, dbname);
    MDB_val k = {klen, (void *)key}, v;
    if (klen) {
        assert_int_equal(mdb_get(w.txn, dbi, &k, &v), 0);
    } else {
        MDB_cursor *cur;
        assert_int_equal(mdb_cursor_open(w.txn, dbi, &cur), 0);
        k = (MDB_val){1, (void *)key};
        assert_int_equal(mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE), 0);
        assert_int_equal(((const uint8_t *)k.mv_data)[0], ((const uint8_t *)key)[0]);
        mdb_cursor_close(cur);
    }
    uint8_t kcopy[512];
    memcpy(kcopy, k.mv_data, k.mv_size);
    k.mv_data = kcopy;
    uint8_t *copy = malloc(v.mv_size);
    assert_non_null(copy);
    memcpy(copy, v.mv_data, v.mv_size);
    size_t i = at >= 0 ? (size_t)at : v.mv_size - (size_t)-at;
    assert_true(i < v.mv_size);
    copy[i] ^= (uint8_t)(1u << bit);
    v.mv_data = copy;
    assert_int_equal(mdb_put(w.txn, dbi, &k, &v, 0), 0);
    free(copy);
    ts_raw_end(&w, 1);
}

static void set_raw_format(const char *path, uint32_t format)
{
    ts_raw w;
    MDB_dbi meta = ts_raw_open(&w, path, "0");
    MDB_val k = {6, "header"}, v;
    assert_int_equal(mdb_get(w.txn, meta, &k, &v), 0);
    uint8_t h[64];
    assert_int_equal(v.mv_size, sizeof h);
    memcpy(h, v.mv_data, sizeof h);
    for (int i = 0; i < 4; i++)
        h[8 + i] = (uint8_t)(format >> (8 * i));
    v = (MDB_val){sizeof h, h};
    assert_int_equal(mdb_put(w.txn, meta, &k, &v, 0), 0);
    ts_raw_end(&w, 1);
}

/* Whether every value of sub-database `dbname` but the header ends with
 * its checksum. */
static int all_checksummed(const char *path, const char *dbname)
{
    ts_raw w;
    MDB_dbi dbi = ts_raw_open(&w, path, dbname);
    MDB_cursor *cur;
    MDB_val k, v;
    int all = 1;
    size_t n = 0;
    assert_int_equal(mdb_cursor_open(w.txn, dbi, &cur), 0);
    for (int rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); rc == 0; rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
        if (k.mv_size == 6 && memcmp(k.mv_data, "header", 6) == 0)
            continue;
        n++;
        const uint8_t *p = v.mv_data;
        size_t len = v.mv_size - CF_CHECKSUM_SIZE;
        uint32_t stored = (uint32_t)p[len] | (uint32_t)p[len + 1] << 8 | (uint32_t)p[len + 2] << 16 | (uint32_t)p[len + 3] << 24;
        if (v.mv_size < CF_CHECKSUM_SIZE || cf_checksum((uint32_t)atoi(dbname), k.mv_data, k.mv_size, p, len) != stored)
            all = 0;
    }
    mdb_cursor_close(cur);
    ts_raw_end(&w, 0);
    return all && n > 0;
}

/* ---- a flipped bit in each kind of value ---------------------------------- */

enum { T_ID = 0, T_TITLE, T_WORDS, T_COUNT };

static const coffer_property_schema text_props[T_COUNT] = {
    {.name = "id", .type = COFFER_TYPE_INT, .flags = COFFER_PROPERTY_PRIMARY_KEY},
    {.name = "title", .type = COFFER_TYPE_STRING},
    {.name = "words", .type = COFFER_TYPE_STRING, .collection = COFFER_COLLECTION_LIST},
};
static const coffer_class_schema text_schema[] = {
    {.name = "Text", .properties = text_props, .property_count = T_COUNT},
};

static int setup_text(void **state) { return ts_setup_schema(state, text_schema, 1); }

/* Ten objects "title i" with a list of three words each; returns the key
 * of the first. */
static coffer_object_key add_texts(coffer_db *db)
{
    coffer_txn *w = ts_begin(db, COFFER_TXN_WRITE);
    coffer_object_key first = 0;
    for (int64_t i = 0; i < 10; i++) {
        char title[32];
        snprintf(title, sizeof title, "title %lld", (long long)i);
        coffer_field f[2] = {ts_field(T_ID, coffer_value_int(i)), ts_field(T_TITLE, ts_str(title))};
        coffer_object *o = ts_create(w, 0, f, 2);
        coffer_list *l;
        assert_ok(coffer_object_get_list(o, T_WORDS, &l));
        coffer_value word = ts_str("word");
        for (int j = 0; j < 3; j++)
            assert_ok(coffer_list_append(l, &word));
        coffer_list_release(l);
        if (i == 0)
            first = coffer_object_key_of(o);
        coffer_object_release(o);
    }
    ts_commit(w);
    return first;
}

/* verify finds damage, and names the checksum in one of its findings. */
static void assert_verify_names_checksum(const char *path)
{
    coffer_config *config = ts_config_at(path);
    coffer_verify_report *r = NULL;
    assert_ok(coffer_verify(config, &r));
    int named = 0;
    for (size_t i = 0; i < coffer_verify_report_count(r); i++)
        named |= strstr(coffer_verify_report_message(r, i), "checksum") != NULL;
    assert_true(coffer_verify_report_count(r) > 0);
    assert_true(named);
    coffer_verify_report_free(r);
    coffer_config_free(config);
}

TS_ENV_TEST(test_flipped_bit_in_a_record)
{
    TS_RECORDS_ONLY();
    coffer_object_key first = add_texts(env->db);
    ts_env_close(env);
    uint8_t kb[8];
    for (int i = 0; i < 8; i++)
        kb[i] = (uint8_t)(first >> (56 - 8 * i));
    /* A bit of the title's bytes: the record still decodes, as another title. */
    flip_bit(env->path, "2", kb, 8, -6, 0);
    assert_ok(ts_open_path(env->path, NULL, 0, text_schema, 1, 1, &env->db));
    coffer_txn *txn = ts_begin(env->db, COFFER_TXN_READ);
    coffer_object *o = NULL;
    assert_status(coffer_object_get(txn, 0, first, &o), COFFER_ERR_CORRUPTED);
    assert_error_contains("its checksum does not match");
    assert_error_contains("class 'Text'");
    /* A query that scans the titles stops at it, too. */
    coffer_query *q;
    coffer_results *res = NULL;
    assert_ok(coffer_query_compile(env->db, 0, "title BEGINSWITH 'x'", SIZE_MAX, NULL, 0, &q));
    assert_status(coffer_query_run(txn, q, &res), COFFER_ERR_CORRUPTED);
    coffer_query_free(q);
    coffer_results_free(res);
    /* The other objects still read. */
    assert_ok(coffer_object_get(txn, 0, first + 1, &o));
    coffer_object_release(o);
    coffer_txn_free(txn);
    ts_env_close(env);
    assert_verify_names_checksum(env->path);
}

TS_ENV_TEST(test_flipped_bit_in_a_list_chunk)
{
    add_texts(env->db);
    ts_env_close(env);
    /* The first list's first chunk: key 'C' || id || 1 || chunk. */
    uint8_t chunk[1 + 8 + 1 + 4] = {'C', 0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0};
    ts_raw w;
    MDB_dbi graph = ts_raw_open(&w, env->path, "1");
    MDB_cursor *cur;
    MDB_val k = {10, chunk}, v;
    assert_int_equal(mdb_cursor_open(w.txn, graph, &cur), 0);
    assert_int_equal(mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE), 0);
    assert_true(k.mv_size == sizeof chunk && memcmp(k.mv_data, chunk, 10) == 0);
    memcpy(chunk, k.mv_data, sizeof chunk);
    mdb_cursor_close(cur);
    ts_raw_end(&w, 0);
    flip_bit(env->path, "1", chunk, sizeof chunk, -6, 3);

    assert_ok(ts_open_path(env->path, NULL, 0, text_schema, 1, 1, &env->db));
    coffer_txn *txn = ts_begin(env->db, COFFER_TXN_READ);
    int damaged = 0;
    for (coffer_object_key key = 1; key <= 10; key++) {
        coffer_object *o;
        coffer_list *l;
        coffer_value v0;
        assert_ok(coffer_object_get(txn, 0, key, &o));
        assert_ok(coffer_object_get_list(o, T_WORDS, &l));
        coffer_status st = coffer_list_get(l, 0, &v0);
        if (st != COFFER_OK) {
            assert_status(st, COFFER_ERR_CORRUPTED);
            assert_error_contains("its checksum does not match");
            damaged++;
        } else {
            assert_int_equal(v0.u.string.size, 4);
            assert_memory_equal(v0.u.string.data, "word", 4);
        }
        coffer_list_release(l);
        coffer_object_release(o);
    }
    assert_int_equal(damaged, 1);
    coffer_txn_free(txn);
    ts_env_close(env);
    assert_verify_names_checksum(env->path);
}

TS_ENV_TEST(test_flipped_bit_in_the_schema_and_a_counter)
{
    add_texts(env->db);
    ts_env_close(env);
    flip_bit(env->path, "0", "schema", 6, 10, 1);
    coffer_db *db = NULL;
    assert_status(ts_open_path(env->path, NULL, 1, NULL, 0, 0, &db), COFFER_ERR_CORRUPTED);
    assert_error_contains("the stored schema is damaged: its checksum does not match");
    flip_bit(env->path, "0", "schema", 6, 10, 1); /* back as it was */

    /* The object-key counter of table 1 ("k" || 1): read when creating. */
    const uint8_t counter[5] = {'k', 0, 0, 0, 1};
    flip_bit(env->path, "0", counter, sizeof counter, 0, 0);
    assert_ok(ts_open_path(env->path, NULL, 0, text_schema, 1, 1, &env->db));
    coffer_txn *w = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_field f[2] = {ts_field(T_ID, coffer_value_int(100)), ts_field(T_TITLE, ts_str("new"))};
    coffer_object *o = NULL;
    assert_status(coffer_object_create(w, 0, f, 2, COFFER_UPDATE_ERROR, &o), COFFER_ERR_CORRUPTED);
    assert_error_contains("checksum does not match");
    coffer_txn_free(w);
}

/* ---- files of format 3 ------------------------------------------------------ */

#define FIXTURE_ITEMS 120

/* Expects the contents make_fixtures.py wrote (its docstring). */
static void check_fixture_items(coffer_db *db)
{
    coffer_class_id item = ts_class(db, "Item");
    coffer_property_id id = ts_prop(db, item, "id"), name = ts_prop(db, item, "name"), score = ts_prop(db, item, "score"),
                       note = ts_prop(db, item, "note"), data = ts_prop(db, item, "data"),
                       numbers = ts_prop(db, item, "numbers"), previous = ts_prop(db, item, "previous");
    coffer_txn *txn = ts_begin(db, COFFER_TXN_READ);
    uint64_t count;
    assert_ok(coffer_class_count(txn, item, &count));
    assert_int_equal(count, FIXTURE_ITEMS - FIXTURE_ITEMS / 10);
    for (int64_t i = 0; i < FIXTURE_ITEMS; i++) {
        coffer_object *o = NULL;
        coffer_status st = coffer_object_get(txn, item, (coffer_object_key)i + 1, &o);
        if (i % 10 == 9) {
            assert_int_equal(st, COFFER_ERR_NOT_FOUND);
            continue;
        }
        assert_ok(st);
        coffer_value v;
        char want[128];
        assert_ok(coffer_object_get_value(o, id, &v));
        assert_int_equal(v.u.integer, i);
        assert_ok(coffer_object_get_value(o, name, &v));
        snprintf(want, sizeof want, "item %lld", (long long)i);
        assert_int_equal(v.u.string.size, strlen(want));
        assert_memory_equal(v.u.string.data, want, strlen(want));
        assert_ok(coffer_object_get_value(o, score, &v));
        assert_true(v.u.double_value == (double)i * 1.5);
        assert_ok(coffer_object_get_value(o, note, &v));
        if (i % 3 == 0) {
            assert_int_equal(v.type, COFFER_TYPE_NULL);
        } else {
            int n = snprintf(want, sizeof want, "note %lld", (long long)i);
            assert_int_equal(v.u.string.size, (size_t)n * (size_t)(i % 7 + 1));
            for (int64_t r = 0; r < i % 7 + 1; r++)
                assert_memory_equal(v.u.string.data + r * n, want, (size_t)n);
        }
        assert_ok(coffer_object_get_value(o, data, &v));
        assert_int_equal(v.u.binary.size, (size_t)(i % 40));
        for (size_t j = 0; j < v.u.binary.size; j++)
            assert_int_equal(((const uint8_t *)v.u.binary.data)[j], (uint8_t)((i + (int64_t)j) % 256));
        coffer_list *l;
        uint64_t n;
        assert_ok(coffer_object_get_list(o, numbers, &l));
        assert_ok(coffer_list_count(l, &n));
        assert_int_equal(n, 3);
        for (uint64_t j = 0; j < 3; j++) {
            assert_ok(coffer_list_get(l, j, &v));
            assert_int_equal(v.u.integer, i + (int64_t)j);
        }
        coffer_list_release(l);
        assert_ok(coffer_object_get_value(o, previous, &v));
        if (i == 0 || i % 10 == 0) {
            assert_int_equal(v.type, COFFER_TYPE_NULL); /* none, or deleted */
        } else {
            assert_int_equal(v.type, COFFER_TYPE_LINK);
            assert_int_equal(v.u.link.key, (coffer_object_key)i);
        }
        coffer_object_release(o);
    }
    coffer_txn_free(txn);
}

/* The path of `name` in the test's folder. */
static void copy_fixture_path(const ts_env *env, const char *name, char *out)
{
    assert_true((size_t)snprintf(out, TS_PATH_MAX, "%s/%s", env->dir, name) < TS_PATH_MAX);
}

/* Copies fixture `name` into the test's folder; returns its path there. */
static void copy_fixture(ts_env *env, const char *name, char *out)
{
    char from[TS_PATH_MAX];
    assert_true((size_t)snprintf(from, sizeof from, "%s/format3/%s", COFFER_FIXTURES_DIR, name) < sizeof from);
    copy_fixture_path(env, name, out);
    assert_int_equal(ts_copy_file(from, out), 0);
}

static void upgrade_fixture(ts_env *env, const char *name, const uint8_t *key)
{
    char path[TS_PATH_MAX];
    copy_fixture(env, name, path);
    assert_int_equal(ts_raw_format(path), 3);

    /* Read-only, it is read as it is, and stays format 3. */
    coffer_db *db = NULL;
    assert_ok(ts_open_path(path, key, 1, NULL, 0, 0, &db));
    check_fixture_items(db);
    coffer_close(db);
    assert_int_equal(ts_raw_format(path), 3);
    if (!key)
        assert_false(all_checksummed(path, "2"));

    /* Read-write, it is upgraded in place before anything else, to the
     * format the run writes (format 5 re-lays the objects into clusters,
     * whose parts carry their checksums: coffer_verify below checks them). */
    assert_ok(ts_open_path(path, key, 0, NULL, 0, 0, &db));
    check_fixture_items(db);
    coffer_close(db);
    assert_int_equal(ts_raw_format(path), ts_storage_format());
    if (!key) {
        assert_true(all_checksummed(path, "0"));
        assert_true(all_checksummed(path, "1"));
        if (ts_storage_format() == 4)
            assert_true(all_checksummed(path, "2"));
    }
    coffer_config *config = ts_config_at(path);
    if (key)
        assert_ok(coffer_config_set_encryption_key(config, key, COFFER_ENCRYPTION_KEY_SIZE));
    coffer_verify_report *r = NULL;
    assert_ok(coffer_verify(config, &r));
    assert_int_equal(coffer_verify_report_count(r), 0);
    coffer_verify_report_free(r);
    coffer_config_free(config);

    /* And read again, read-only and read-write, writes included. */
    assert_ok(ts_open_path(path, key, 1, NULL, 0, 0, &db));
    check_fixture_items(db);
    coffer_close(db);
    assert_ok(ts_open_path(path, key, 0, NULL, 0, 0, &db));
    coffer_class_id item = ts_class(db, "Item");
    coffer_txn *w = ts_begin(db, COFFER_TXN_WRITE);
    coffer_object *o;
    assert_ok(coffer_object_get(w, item, 1, &o));
    coffer_field f = ts_field(ts_prop(db, item, "name"), ts_str("renamed"));
    assert_ok(coffer_object_set_fields(o, &f, 1));
    coffer_object_release(o);
    ts_commit(w);
    coffer_close(db);
}

TS_ENV_TEST(test_format3_plain_is_upgraded)
{
    ts_env_close(env);
    upgrade_fixture(env, "plain.coffer", NULL);
    /* Upgraded, a flipped bit of a record (format 4), or of the head of
     * the cluster holding object 2 (format 5: cluster 0, its head after the
     * 4-byte size), is now detected. */
    char path[TS_PATH_MAX];
    copy_fixture_path(env, "plain.coffer", path);
    const uint8_t k2[8] = {0, 0, 0, 0, 0, 0, 0, 2}, cluster0[8] = {0};
    if (ts_storage_format() == 5)
        flip_bit(path, "2", cluster0, 8, 6, 2);
    else
        flip_bit(path, "2", k2, 8, -6, 2);
    coffer_db *db = NULL;
    assert_ok(ts_open_path(path, NULL, 1, NULL, 0, 0, &db));
    coffer_txn *txn = ts_begin(db, COFFER_TXN_READ);
    coffer_object *o = NULL;
    assert_status(coffer_object_get(txn, ts_class(db, "Item"), 2, &o), COFFER_ERR_CORRUPTED);
    assert_error_contains("checksum");
    coffer_txn_free(txn);
    coffer_close(db);
}

TS_ENV_TEST(test_format3_encrypted_is_upgraded)
{
    ts_env_close(env);
    uint8_t key[COFFER_ENCRYPTION_KEY_SIZE];
    for (int i = 0; i < COFFER_ENCRYPTION_KEY_SIZE; i++)
        key[i] = (uint8_t)i;
    upgrade_fixture(env, "encrypted.coffer", key);
}

TS_ENV_TEST(test_newer_format_is_refused)
{
    ts_env_close(env);
    set_raw_format(env->path, 7);
    coffer_db *db = NULL;
    assert_status(ts_open_path(env->path, NULL, 0, text_schema, 1, 1, &db), COFFER_ERR_FORMAT_VERSION);
    assert_error_contains("file format 7");
    assert_error_contains("reads up to format 6");
    assert_int_equal(ts_raw_format(env->path), 7);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_xxh64_reference_values),
        cmocka_unit_test(test_checksum_binds_the_place),
        TS_TEST_MODE_SETUP(test_flipped_bit_in_a_record, setup_text, ts_mode_plain, "plain"),
        TS_TEST_MODE_SETUP(test_flipped_bit_in_a_list_chunk, setup_text, ts_mode_plain, "plain"),
        TS_TEST_MODE_SETUP(test_flipped_bit_in_the_schema_and_a_counter, setup_text, ts_mode_plain, "plain"),
        TS_TEST_MODE_SETUP(test_format3_plain_is_upgraded, setup_text, ts_mode_plain, "plain"),
        TS_TEST_MODE_SETUP(test_format3_encrypted_is_upgraded, setup_text, ts_mode_plain, "plain"),
        TS_TEST_MODE_SETUP(test_newer_format_is_refused, setup_text, ts_mode_plain, "plain"),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
