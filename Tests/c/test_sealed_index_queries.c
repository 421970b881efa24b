/*
 * test_sealed_index_queries.c — queries answered from the sealed index
 * trees of an encrypted file (format 6) give the plain file's answers:
 * one random history (creates, updates through the primary key, deletes)
 * is written to a plain and an encrypted file, then ==, IN, BEGINSWITH,
 * BETWEEN, <, <=, >, >= on strings, ints, dates, optional values and nulls
 * (alone and in conjunctions) are compared, as sets of object keys and as
 * counts. coffer_query_explain() says the encrypted file uses the index
 * for prefixes and ranges; an encrypted file of format 4 (hashed index
 * keys) still scans for them and answers the same. Primary-key uniqueness
 * and lookups go through the tree; a wrong key is refused at open. An
 * older encrypted file (the format-4 fixture, upgraded to format 5) keeps
 * its hashed keys, and its write-copy is of format 6 and answers alike.
 */
#define COFFER_EXPERIMENTAL_API
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_support.h"

static const coffer_property_schema entry_props[] = {
    {.name = "id", .type = COFFER_TYPE_INT, .flags = COFFER_PROPERTY_PRIMARY_KEY},
    {.name = "name", .type = COFFER_TYPE_STRING, .flags = COFFER_PROPERTY_INDEXED},
    {.name = "nick", .type = COFFER_TYPE_STRING, .flags = COFFER_PROPERTY_INDEXED | COFFER_PROPERTY_OPTIONAL},
    {.name = "n", .type = COFFER_TYPE_INT, .flags = COFFER_PROPERTY_INDEXED},
    {.name = "maybe", .type = COFFER_TYPE_INT, .flags = COFFER_PROPERTY_INDEXED | COFFER_PROPERTY_OPTIONAL},
    {.name = "when", .type = COFFER_TYPE_DATE, .flags = COFFER_PROPERTY_INDEXED},
    {.name = "plain", .type = COFFER_TYPE_INT, .flags = 0},
};
static const coffer_class_schema schema[] = {{.name = "Entry", .properties = entry_props, .property_count = 7}};
enum { P_ID, P_NAME, P_NICK, P_N, P_MAYBE, P_WHEN, P_PLAIN };

static uint64_t rng;
static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static void random_word(char *out, size_t *len)
{
    size_t n = rnd() % 7 == 0 ? 0 : 1 + rnd() % 8;
    if (rnd() % 40 == 0)
        n = 420 + rnd() % 60; /* longer than an index key keeps */
    for (size_t i = 0; i < n; i++)
        out[i] = (char)('a' + (i < 2 ? rnd() % 4 : rnd() % 26));
    out[n] = 0;
    *len = n;
}

/* Writes the same random history to each of dbs[0..ndb). */
static void write_history(coffer_db *const *dbs, size_t ndb, int ops)
{
    char name[512], nick[512];
    for (size_t d = 0; d < ndb; d++) {
        rng = 0x1234567;
        coffer_class_id cls = ts_class(dbs[d], "Entry");
        coffer_txn *txn;
        assert_ok(coffer_txn_begin(dbs[d], COFFER_TXN_WRITE, &txn));
        for (int i = 0; i < ops; i++) {
            int64_t id = (int64_t)(rnd() % 1500);
            if (rnd() % 6 == 0) {
                coffer_value pk = coffer_value_int(id);
                coffer_object *obj;
                coffer_status st = coffer_object_find(txn, cls, &pk, &obj);
                if (st == COFFER_OK)
                    assert_ok(coffer_object_delete(obj));
                else
                    assert_int_equal(st, COFFER_ERR_NOT_FOUND);
                continue;
            }
            size_t nl, kl;
            random_word(name, &nl);
            random_word(nick, &kl);
            int has_nick = rnd() % 3 != 0, has_maybe = rnd() % 3 != 0;
            coffer_field f[] = {
                {P_ID, coffer_value_int(id)},
                {P_NAME, coffer_value_string(name, nl)},
                {P_NICK, has_nick ? coffer_value_string(nick, kl) : coffer_value_null()},
                {P_N, coffer_value_int((int64_t)(rnd() % 200) - 100)},
                {P_MAYBE, has_maybe ? coffer_value_int((int64_t)(rnd() % 50)) : coffer_value_null()},
                {P_WHEN, coffer_value_date((int64_t)(rnd() % 100), (int32_t)(rnd() % 3) * 1000)},
                {P_PLAIN, coffer_value_int((int64_t)(rnd() % 10))},
            };
            assert_ok(coffer_object_create(txn, cls, f, 7, COFFER_UPDATE_ALL, NULL));
            if (rnd() % 300 == 0) { /* and a commit now and then */
                assert_ok(coffer_txn_commit(txn));
                coffer_txn_free(txn);
                assert_ok(coffer_txn_begin(dbs[d], COFFER_TXN_WRITE, &txn));
            }
        }
        assert_ok(coffer_txn_commit(txn));
        coffer_txn_free(txn);
    }
}

/* The keys (sorted) and count of `text` bound to args in `db`. */
static uint64_t *run_keys(coffer_db *db, const char *text, const coffer_value *args, size_t nargs, uint64_t *n)
{
    coffer_class_id cls = ts_class(db, "Entry");
    coffer_query *q;
    assert_ok(coffer_query_compile(db, cls, text, SIZE_MAX, args, nargs, &q));
    coffer_txn *txn;
    assert_ok(coffer_txn_begin(db, COFFER_TXN_READ, &txn));
    uint64_t count;
    assert_ok(coffer_query_count(txn, q, &count));
    coffer_results *r;
    assert_ok(coffer_query_run(txn, q, &r));
    assert_ok(coffer_results_count(r, n));
    assert_int_equal(count, *n);
    uint64_t *keys = malloc((*n ? *n : 1) * sizeof *keys);
    assert_non_null(keys);
    if (*n)
        assert_ok(coffer_results_copy_keys(r, 0, (size_t)*n, keys));
    coffer_results_free(r);
    coffer_txn_free(txn);
    coffer_query_free(q);
    return keys;
}

static int key_order(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Every query of the list, with several arguments, answers alike in
 * `plain` and `enc`; returns how many matched something. */
static int compare_queries(coffer_db *plain, coffer_db *enc)
{
    static const char *const texts[] = {
        "name == $0",          "name BEGINSWITH $0",  "nick BEGINSWITH $0",  "nick == $0",
        "name IN {$0, 'ab'}",  "n == $1",             "n > $1",              "n >= $1",
        "n < $1",              "n <= $1",             "n BETWEEN {$1, $2}",  "maybe > $1",
        "maybe == nil",        "maybe < $2",          "nick == nil",         "when > $3",
        "when BETWEEN {$3, $4}", "when <= $4",        "id == $1",            "id > $2",
        "name BEGINSWITH $0 AND n > $1",              "n BETWEEN {$1, $2} AND plain == 3",
        "name BEGINSWITH $0 AND maybe == nil",        "nick BEGINSWITH $0 OR n < $1",
    };
    int nonempty = 0;
    char word[512];
    for (int round = 0; round < 12; round++) {
        size_t wl;
        random_word(word, &wl);
        if (wl > 2 && round % 2)
            wl = 1 + round % 2; /* a short prefix */
        int64_t a = (int64_t)(rnd() % 200) - 100, b = a + (int64_t)(rnd() % 60);
        int64_t s = (int64_t)(rnd() % 100);
        coffer_value args[] = {
            coffer_value_string(word, wl), coffer_value_int(a), coffer_value_int(b),
            coffer_value_date(s, 0),       coffer_value_date(s + (int64_t)(rnd() % 30), 1000),
        };
        for (size_t i = 0; i < sizeof texts / sizeof *texts; i++) {
            uint64_t np, ne;
            uint64_t *kp = run_keys(plain, texts[i], args, 5, &np);
            uint64_t *ke = run_keys(enc, texts[i], args, 5, &ne);
            if (np != ne)
                fail_msg("'%s' with '%s', %lld, %lld: %llu plain, %llu encrypted", texts[i], word, (long long)a, (long long)b,
                         (unsigned long long)np, (unsigned long long)ne);
            qsort(kp, (size_t)np, sizeof *kp, key_order);
            qsort(ke, (size_t)ne, sizeof *ke, key_order);
            if (np)
                assert_memory_equal(kp, ke, (size_t)np * sizeof *kp);
            nonempty += np > 0;
            free(kp);
            free(ke);
        }
    }
    return nonempty;
}

static void explain(coffer_db *db, const char *text, const coffer_value *args, size_t nargs, char *out, size_t size)
{
    coffer_query *q;
    assert_ok(coffer_query_compile(db, ts_class(db, "Entry"), text, SIZE_MAX, args, nargs, &q));
    coffer_txn *txn;
    assert_ok(coffer_txn_begin(db, COFFER_TXN_READ, &txn));
    assert_ok(coffer_query_explain(txn, q, out, size));
    coffer_txn_free(txn);
    coffer_query_free(q);
}

/* Opens dir/name with `key` (NULL: plain) in storage format `format`. */
static coffer_db *open_at(const ts_env *env, const char *name, const uint8_t *key, uint32_t format)
{
    char path[TS_PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/%s", env->dir, name);
    coffer_config *config = ts_config_at(path);
    if (key)
        assert_ok(coffer_config_set_encryption_key(config, key, COFFER_ENCRYPTION_KEY_SIZE));
    assert_ok(coffer_config_set_storage_format(config, format));
    assert_ok(coffer_config_set_schema(config, schema, 1, 1));
    coffer_db *db;
    assert_ok(coffer_open(config, &db));
    coffer_config_free(config);
    return db;
}

TS_ENV_TEST(test_encrypted_answers_match_plain)
{
    coffer_db *dbs[3] = {
        open_at(env, "plain.coffer", NULL, COFFER_STORAGE_FORMAT_CLUSTERS),
        open_at(env, "sealed.coffer", ts_key, COFFER_STORAGE_FORMAT_CLUSTERS),
        open_at(env, "hashed.coffer", ts_key, COFFER_STORAGE_FORMAT_RECORDS),
    };
    write_history(dbs, 3, 6000);
    assert_true(compare_queries(dbs[0], dbs[1]) > 100);
    compare_queries(dbs[0], dbs[2]);
    char plan[256];
    coffer_value args[] = {coffer_value_string("ab", 2), coffer_value_int(3), coffer_value_int(9)};
    /* The sealed tree answers prefixes and ranges; hashed keys cannot. */
    explain(dbs[1], "name BEGINSWITH $0", args, 3, plan, sizeof plan);
    assert_string_equal(plan, "index of 'Entry.name' (prefix)");
    explain(dbs[1], "n BETWEEN {$1, $2}", args, 3, plan, sizeof plan);
    assert_string_equal(plan, "index of 'Entry.n' (range)");
    explain(dbs[1], "n == $1", args, 3, plan, sizeof plan);
    assert_string_equal(plan, "index of 'Entry.n' (equality)");
    explain(dbs[1], "plain == $1", args, 3, plan, sizeof plan);
    assert_string_equal(plan, "scan of 'Entry'");
    explain(dbs[0], "name BEGINSWITH $0", args, 3, plan, sizeof plan);
    assert_string_equal(plan, "index of 'Entry.name' (prefix)");
    explain(dbs[2], "name BEGINSWITH $0", args, 3, plan, sizeof plan);
    assert_string_equal(plan, "scan of 'Entry'");
    explain(dbs[2], "n == $1", args, 3, plan, sizeof plan);
    assert_string_equal(plan, "index of 'Entry.n' (equality)");
    /* Too small a buffer is an error, and leaves an empty string. */
    coffer_query *q;
    assert_ok(coffer_query_compile(dbs[1], ts_class(dbs[1], "Entry"), "n == $1", SIZE_MAX, args, 3, &q));
    coffer_txn *txn;
    assert_ok(coffer_txn_begin(dbs[1], COFFER_TXN_READ, &txn));
    assert_status(coffer_query_explain(txn, q, plan, 8), COFFER_ERR_INVALID_ARGUMENT);
    assert_string_equal(plan, "");
    assert_status(coffer_query_explain(txn, q, NULL, 8), COFFER_ERR_INVALID_ARGUMENT);
    coffer_txn_free(txn);
    coffer_query_free(q);
    /* Unique primary keys are checked through the tree. */
    coffer_class_id cls = ts_class(dbs[1], "Entry");
    assert_ok(coffer_txn_begin(dbs[1], COFFER_TXN_WRITE, &txn));
    coffer_value pk = coffer_value_int(5000);
    coffer_field f[] = {{P_ID, pk}, {P_NAME, coffer_value_string("zz", 2)}};
    assert_ok(coffer_object_create(txn, cls, f, 2, COFFER_UPDATE_ERROR, NULL));
    assert_status(coffer_object_create(txn, cls, f, 2, COFFER_UPDATE_ERROR, NULL), COFFER_ERR_PRIMARY_KEY_EXISTS);
    coffer_object *obj;
    assert_ok(coffer_object_find(txn, cls, &pk, &obj));
    assert_ok(coffer_txn_commit(txn));
    coffer_txn_free(txn);
    for (int i = 0; i < 3; i++)
        coffer_close(dbs[i]);
    /* The sealed file is of format 6, the hashed one of format 4. */
    char path[TS_PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/sealed.coffer", env->dir);
    assert_int_equal(ts_raw_format(path), 6);
    snprintf(path, sizeof path, "%s/hashed.coffer", env->dir);
    assert_int_equal(ts_raw_format(path), 4);
    /* Another key does not open it. */
    uint8_t wrong[COFFER_ENCRYPTION_KEY_SIZE];
    memcpy(wrong, ts_key, sizeof wrong);
    wrong[0] ^= 1;
    snprintf(path, sizeof path, "%s/sealed.coffer", env->dir);
    coffer_db *db = NULL;
    assert_status(ts_open_path(path, wrong, 0, schema, 1, 1, &db), COFFER_ERR_WRONG_KEY);
    /* Reopened with its key, it answers as before. */
    assert_ok(ts_open_path(path, ts_key, 1, schema, 1, 1, &db));
    uint64_t n;
    coffer_value zz = coffer_value_string("zz", 2);
    free(run_keys(db, "name BEGINSWITH $0", &zz, 1, &n));
    assert_true(n >= 1);
    coffer_close(db);
}

/* Copies file `from` to `to`. */
static void copy_file(const char *from, const char *to)
{
    FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
    assert_non_null(in);
    assert_non_null(out);
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0)
        assert_int_equal(fwrite(buf, 1, n, out), n);
    fclose(in);
    assert_int_equal(fclose(out), 0);
}

/* Counts `text` (one string argument) on the class Item of `db`. */
static uint64_t count_items(coffer_db *db, const char *text, const char *arg)
{
    coffer_query *q;
    coffer_value v = coffer_value_string(arg, strlen(arg));
    assert_ok(coffer_query_compile(db, ts_class(db, "Item"), text, SIZE_MAX, &v, 1, &q));
    coffer_txn *txn;
    assert_ok(coffer_txn_begin(db, COFFER_TXN_READ, &txn));
    uint64_t n;
    assert_ok(coffer_query_count(txn, q, &n));
    char plan[256];
    assert_ok(coffer_query_explain(txn, q, plan, sizeof plan));
    coffer_txn_free(txn);
    coffer_query_free(q);
    return n;
}

/* An encrypted file written before format 6 (the committed format-4 fixture,
 * upgraded to format 5 by a read-write open) keeps its hashed index keys;
 * a write-copy with its key is of format 6 and answers alike, now from
 * the sealed tree, also after writes. */
TS_ENV_TEST(test_older_encrypted_file_copied_to_format_6)
{
    uint8_t key[COFFER_ENCRYPTION_KEY_SIZE];
    for (int i = 0; i < COFFER_ENCRYPTION_KEY_SIZE; i++)
        key[i] = (uint8_t)i;
    char old_path[TS_PATH_MAX + 32], new_path[TS_PATH_MAX + 32];
    snprintf(old_path, sizeof old_path, "%s/old.coffer", env->dir);
    snprintf(new_path, sizeof new_path, "%s/new.coffer", env->dir);
    copy_file(COFFER_FIXTURES_DIR "/format4/encrypted.coffer", old_path);
    coffer_db *old = NULL, *copy = NULL;
    /* A handle that wants format 5, whatever the run's default. */
    coffer_config *config = ts_config_at(old_path);
    assert_ok(coffer_config_set_encryption_key(config, key, COFFER_ENCRYPTION_KEY_SIZE));
    assert_ok(coffer_config_set_storage_format(config, COFFER_STORAGE_FORMAT_CLUSTERS));
    assert_ok(coffer_open(config, &old));
    coffer_config_free(config);
    assert_ok(coffer_db_write_copy(old, new_path, key, COFFER_ENCRYPTION_KEY_SIZE));
    assert_ok(ts_open_path(new_path, key, 0, NULL, 0, 0, &copy));
    static const char *const prefixes[] = {"item 1", "renamed", "item", "x", "item 29"};
    for (size_t i = 0; i < sizeof prefixes / sizeof *prefixes; i++) {
        assert_int_equal(count_items(old, "name BEGINSWITH $0", prefixes[i]),
                         count_items(copy, "name BEGINSWITH $0", prefixes[i]));
        assert_int_equal(count_items(old, "name == $0", prefixes[i]), count_items(copy, "name == $0", prefixes[i]));
        assert_int_equal(count_items(old, "name > $0", prefixes[i]), count_items(copy, "name > $0", prefixes[i]));
    }
    assert_true(count_items(copy, "name BEGINSWITH $0", "item 1") > 10);
    coffer_close(old);
    coffer_close(copy);
    assert_int_equal(ts_raw_format(old_path), 5);
    assert_int_equal(ts_raw_format(new_path), 6);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TS_TEST_MODE_SETUP(test_encrypted_answers_match_plain, ts_setup_empty, ts_mode_plain, "files"),
        TS_TEST_MODE_SETUP(test_older_encrypted_file_copied_to_format_6, ts_setup_empty, ts_mode_plain, "fixture"),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
