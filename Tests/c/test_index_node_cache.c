/*
 * test_index_node_cache.c — the decrypted nodes of an encrypted file's
 * sealed index trees (format 6) kept for the life of a read snapshot and
 * passed on to the next read transaction of the handle
 * (storage/index_tree.h, cf_itree_free): answers equal a plain file's
 * across commits and aborts, in a read snapshot held across them and in
 * fresh ones; readers in several threads at different snapshots, each
 * holding its transaction while others begin and end, see their own
 * snapshot's answers; a node tampered with after a commit is detected
 * whether the commit rewrote it or not (the kept node is taken again only
 * when its stored value is byte for byte the one it was opened from); what
 * is kept stays within CF_ITREE_POOL_BYTES; and a lookup in nodes already
 * open allocates nothing (the library's malloc, calloc and realloc are
 * counted: this test is linked with --wrap for them).
 */
#define COFFER_EXPERIMENTAL_API
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>

#include "test_support.h"
#include "storage/handles.h"
#include "storage/index_tree.h"

/* ---- counting the library's allocations --------------------------------- */

void *__real_malloc(size_t size);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t size);

static _Thread_local size_t allocations;

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

static const coffer_property_schema item_props[] = {
    {.name = "id", .type = COFFER_TYPE_INT, .flags = COFFER_PROPERTY_PRIMARY_KEY},
    {.name = "n", .type = COFFER_TYPE_INT, .flags = COFFER_PROPERTY_INDEXED},
    {.name = "name", .type = COFFER_TYPE_STRING, .flags = COFFER_PROPERTY_INDEXED},
};
static const coffer_class_schema schema[] = {{.name = "Item", .properties = item_props, .property_count = 3}};
enum { P_ID, P_N, P_NAME };

static coffer_db *open_at(const ts_env *env, const char *name, const uint8_t *key)
{
    char path[TS_PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/%s", env->dir, name);
    coffer_config *config = ts_config_at(path);
    if (key)
        assert_ok(coffer_config_set_encryption_key(config, key, COFFER_ENCRYPTION_KEY_SIZE));
    assert_ok(coffer_config_set_storage_format(config, COFFER_STORAGE_FORMAT_CLUSTERS));
    assert_ok(coffer_config_set_schema(config, schema, 1, 1));
    coffer_db *db;
    assert_ok(coffer_open(config, &db));
    coffer_config_free(config);
    return db;
}

/* The name of object `id` at version `v`: `len` letters, its first two
 * from a small alphabet, so prefixes match many. */
static size_t item_name(int64_t id, int v, char *out, size_t len)
{
    uint64_t x = (uint64_t)(id * 2654435761u + (uint64_t)v * 40503u) | 1;
    for (size_t i = 0; i < len; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        out[i] = (char)('a' + (i < 2 ? x % 4 : x % 26));
    }
    return len;
}

static int64_t item_n(int64_t id, int v) { return (id * 7 + v) % 37; }

/* Writes objects 0..count) at version `v` (creating or updating them). */
static void write_version(coffer_txn *txn, coffer_class_id cls, int64_t count, int v, size_t name_len)
{
    char name[512];
    for (int64_t id = 0; id < count; id++) {
        size_t nl = item_name(id, v, name, name_len);
        coffer_field f[] = {{P_ID, coffer_value_int(id)}, {P_N, coffer_value_int(item_n(id, v))},
                            {P_NAME, coffer_value_string(name, nl)}};
        assert_ok(coffer_object_create(txn, cls, f, 3, COFFER_UPDATE_ALL, NULL));
    }
}

static void commit_version(coffer_db *db, int64_t count, int v, int abort)
{
    coffer_txn *txn;
    assert_ok(coffer_txn_begin(db, COFFER_TXN_WRITE, &txn));
    write_version(txn, ts_class(db, "Item"), count, v, 8);
    if (abort)
        coffer_txn_abort(txn);
    else
        assert_ok(coffer_txn_commit(txn));
    coffer_txn_free(txn);
}

static uint64_t count_of(coffer_txn *txn, const char *text, coffer_value arg)
{
    coffer_query *q;
    coffer_db *db = txn->db;
    assert_ok(coffer_query_compile(db, ts_class(db, "Item"), text, SIZE_MAX, &arg, 1, &q));
    uint64_t n;
    assert_ok(coffer_query_count(txn, q, &n));
    coffer_query_free(q);
    return n;
}

/* The answers of a set of equality, prefix and range queries in `txn`,
 * into out[0..QUERIES). */
#define QUERIES 48
static void answers(coffer_txn *txn, uint64_t *out)
{
    static const char *const prefixes[] = {"a", "ab", "bc", "dd", "ca", "ba", "cc", "ad"};
    size_t k = 0;
    for (int64_t v = 0; v < 37; v += 2)
        out[k++] = count_of(txn, "n == $0", coffer_value_int(v));
    for (size_t i = 0; i < 8; i++)
        out[k++] = count_of(txn, "name BEGINSWITH $0", coffer_value_string(prefixes[i], strlen(prefixes[i])));
    for (int64_t v = 0; v < 37 && k < QUERIES; v += 3) {
        out[k++] = count_of(txn, "n > $0", coffer_value_int(v));
        if (k < QUERIES)
            out[k++] = count_of(txn, "n <= $0", coffer_value_int(v));
    }
    assert_int_equal(k, QUERIES);
}

static void same_answers(coffer_txn *a, coffer_txn *b)
{
    uint64_t x[QUERIES], y[QUERIES];
    answers(a, x);
    answers(b, y);
    for (size_t i = 0; i < QUERIES; i++)
        if (x[i] != y[i])
            fail_msg("query %zu: %llu in the plain file, %llu in the encrypted one", i, (unsigned long long)x[i],
                     (unsigned long long)y[i]);
}

static void fresh_answers_match(coffer_db *plain, coffer_db *enc)
{
    coffer_txn *a = ts_begin(plain, COFFER_TXN_READ), *b = ts_begin(enc, COFFER_TXN_READ);
    same_answers(a, b);
    coffer_txn_free(a);
    coffer_txn_free(b);
}

TS_ENV_TEST(test_answers_match_plain_across_commits_and_aborts)
{
    coffer_db *plain = open_at(env, "plain.coffer", NULL), *enc = open_at(env, "sealed.coffer", ts_key);
    coffer_db *dbs[2] = {plain, enc};
    for (int d = 0; d < 2; d++)
        commit_version(dbs[d], 3000, 0, 0);
    /* A snapshot held across everything below keeps its answers. */
    coffer_txn *held[2] = {ts_begin(plain, COFFER_TXN_READ), ts_begin(enc, COFFER_TXN_READ)};
    uint64_t before[QUERIES];
    answers(held[1], before);
    same_answers(held[0], held[1]);
    for (int v = 1; v <= 6; v++) {
        fresh_answers_match(plain, enc); /* the kept nodes of the last version */
        int abort = v % 3 == 0;
        for (int d = 0; d < 2; d++)
            commit_version(dbs[d], 3000 + 200 * v, v, abort);
        fresh_answers_match(plain, enc);
        /* A write transaction's own changes, seen by itself, then dropped. */
        coffer_txn *w[2];
        for (int d = 0; d < 2; d++) {
            w[d] = ts_begin(dbs[d], COFFER_TXN_WRITE);
            write_version(w[d], ts_class(dbs[d], "Item"), 1500, 100 + v, 8);
        }
        same_answers(w[0], w[1]);
        for (int d = 0; d < 2; d++) {
            coffer_txn_abort(w[d]);
            coffer_txn_free(w[d]);
        }
        fresh_answers_match(plain, enc);
        same_answers(held[0], held[1]);
    }
    uint64_t after[QUERIES];
    answers(held[1], after);
    assert_memory_equal(before, after, sizeof before);
    for (int d = 0; d < 2; d++)
        coffer_txn_free(held[d]);
    fresh_answers_match(plain, enc);
    coffer_close(plain);
    coffer_close(enc);
}

/* ---- readers in threads at different snapshots --------------------------- */

#define VERSIONS 5
#define READERS 4

typedef struct reader {
    coffer_db *db;
    coffer_txn *txn; /* begun at version `v` by the main thread's order */
    int v;
    int failures;
} reader;

static int64_t count_at(int v) { return 1000 + 150 * v; }

/* The count of `n == value` among objects 0..count) at version v. */
static uint64_t expected_eq_count(int64_t count, int v, int64_t value)
{
    uint64_t c = 0;
    for (int64_t id = 0; id < count; id++)
        c += item_n(id, v) == value;
    return c;
}

/* The count of `n == value` at version v of the threads' history. */
static uint64_t expected_eq(int v, int64_t value) { return expected_eq_count(count_at(v), v, value); }

static void *read_snapshot(void *arg)
{
    reader *r = arg;
    for (int round = 0; round < 6; round++) {
        for (int64_t value = round % 2; value < 37; value += 5)
            if (count_of(r->txn, "n == $0", coffer_value_int(value)) != expected_eq(r->v, value))
                r->failures++;
        if (count_of(r->txn, "n >= $0", coffer_value_int(0)) != (uint64_t)count_at(r->v))
            r->failures++;
        /* A nested read of the latest version, begun and ended while this
         * one is held: it takes and leaves the kept nodes. */
        coffer_txn *latest;
        if (coffer_txn_begin(r->db, COFFER_TXN_READ, &latest) != COFFER_OK) {
            r->failures++;
            continue;
        }
        if (count_of(latest, "n == $0", coffer_value_int(3)) != expected_eq(VERSIONS - 1, 3))
            r->failures++;
        coffer_txn_free(latest);
    }
    return NULL;
}

TS_ENV_TEST(test_readers_in_threads_see_their_snapshots)
{
    coffer_db *enc = open_at(env, "sealed.coffer", ts_key);
    reader readers[VERSIONS * READERS / 2];
    size_t nr = 0;
    for (int v = 0; v < VERSIONS; v++) {
        commit_version(enc, count_at(v), v, 0);
        for (int i = 0; i < READERS / 2; i++) {
            readers[nr] = (reader){.db = enc, .txn = ts_begin(enc, COFFER_TXN_READ), .v = v};
            /* The held snapshot opens its nodes before the next commit. */
            assert_int_equal(count_of(readers[nr].txn, "n == $0", coffer_value_int(1)), expected_eq(v, 1));
            nr++;
        }
    }
    pthread_t threads[VERSIONS * READERS / 2];
    for (size_t i = 0; i < nr; i++)
        assert_int_equal(pthread_create(&threads[i], NULL, read_snapshot, &readers[i]), 0);
    for (size_t i = 0; i < nr; i++) {
        assert_int_equal(pthread_join(threads[i], NULL), 0);
        if (readers[i].failures)
            fail_msg("the reader at version %d saw %d wrong answers", readers[i].v, readers[i].failures);
        coffer_txn_free(readers[i].txn);
    }
    coffer_close(enc);
}

/* ---- tampering after a commit --------------------------------------------- */

/* Flips one byte in the middle of the stored value of node `id` of class
 * `cls`, in the file, while the handle stays open (as something outside
 * the library would): in every place the file holds those bytes (pages
 * LMDB copied on write keep old copies). flip_back() undoes it. */
typedef struct flipped {
    long long off[16];
    size_t n;
} flipped;

static void flip_at(const char *path, const flipped *f)
{
    int fd = open(path, O_RDWR);
    assert_true(fd >= 0);
    for (size_t i = 0; i < f->n; i++) {
        uint8_t b;
        assert_int_equal(pread(fd, &b, 1, f->off[i]), 1);
        b ^= 0x10;
        assert_int_equal(pwrite(fd, &b, 1, f->off[i]), 1);
    }
    close(fd);
}

static void sealed_path(const ts_env *env, char *out, size_t cap) { snprintf(out, cap, "%s/sealed.coffer", env->dir); }

static flipped flip_node_byte(const ts_env *env, coffer_db *db, coffer_class_id cls, uint64_t id)
{
    coffer_txn *txn = ts_begin(db, COFFER_TXN_READ);
    uint8_t key[8];
    for (int i = 0; i < 8; i++)
        key[i] = (uint8_t)(id >> (56 - 8 * i));
    MDB_val k = {8, key}, v;
    assert_int_equal(mdb_get(txn->mdb, db->index_dbis[cls], &k, &v), 0);
    uint8_t *value = malloc(v.mv_size);
    assert_non_null(value);
    memcpy(value, v.mv_data, v.mv_size);
    size_t vlen = v.mv_size;
    coffer_txn_free(txn);
    char path[TS_PATH_MAX + 32];
    sealed_path(env, path, sizeof path);
    size_t size;
    unsigned char *file = ts_read_file(path, &size);
    assert_non_null(file);
    flipped f = {.n = 0};
    for (const uint8_t *at = file; (at = ts_memmem(at, size - (size_t)(at - file), value, vlen)) != NULL; at += vlen) {
        assert_true(f.n < 16);
        f.off[f.n++] = (long long)(at - file) + (long long)vlen / 2;
    }
    assert_true(f.n > 0);
    free(file);
    free(value);
    flip_at(path, &f);
    return f;
}

static void flip_back(const ts_env *env, const flipped *f)
{
    char path[TS_PATH_MAX + 32];
    sealed_path(env, path, sizeof path);
    flip_at(path, f);
}

/* Every node id of class `cls`'s tree. */
static size_t node_ids(coffer_db *db, coffer_class_id cls, uint64_t *ids, size_t cap)
{
    coffer_txn *txn = ts_begin(db, COFFER_TXN_READ);
    MDB_cursor *cur;
    assert_int_equal(mdb_cursor_open(txn->mdb, db->index_dbis[cls], &cur), 0);
    MDB_val k, v;
    size_t n = 0;
    for (int rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); rc == 0 && n < cap; rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT))
        if (k.mv_size == 8) {
            uint64_t id = 0;
            for (int i = 0; i < 8; i++)
                id = id << 8 | ((const uint8_t *)k.mv_data)[i];
            ids[n++] = id;
        }
    mdb_cursor_close(cur);
    coffer_txn_free(txn);
    return n;
}

static char walk_error[512];

/* Checks (and so opens) every node of the tree in a read transaction; an
 * error's message is kept in walk_error. */
static coffer_status walk_all(coffer_db *db, uint64_t *count)
{
    coffer_txn *txn = ts_begin(db, COFFER_TXN_READ);
    coffer_status st = cf_itree_check(txn, ts_class(db, "Item"), count);
    snprintf(walk_error, sizeof walk_error, "%s", st == COFFER_OK ? "" : coffer_last_error());
    coffer_txn_free(txn);
    return st;
}

TS_ENV_TEST(test_tampering_after_a_commit_is_detected)
{
    coffer_db *enc = open_at(env, "sealed.coffer", ts_key);
    coffer_class_id cls = ts_class(enc, "Item");
    commit_version(enc, 3000, 0, 0);
    uint64_t entries;
    assert_ok(walk_all(enc, &entries)); /* every node opened, and left for the next reader */
    assert_true(cf_itree_pool_bytes(enc) > 0);
    /* A commit that rewrites only the nodes of the last object's entries. */
    coffer_txn *w = ts_begin(enc, COFFER_TXN_WRITE);
    coffer_field f[] = {{P_ID, coffer_value_int(2999)}, {P_N, coffer_value_int(36)}};
    assert_ok(coffer_object_create(w, cls, f, 2, COFFER_UPDATE_MODIFIED, NULL));
    ts_commit(w);
    uint64_t ids[4096];
    size_t n = node_ids(enc, cls, ids, 4096);
    assert_true(n > 20);
    /* Each node in turn (some rewritten by the commit, most not): a byte
     * flipped in its stored value fails the next walk, and once flipped
     * back the walk succeeds again with every entry. */
    for (size_t i = 0; i < n; i += n / 10) {
        flipped f = flip_node_byte(env, enc, cls, ids[i]);
        uint64_t c;
        coffer_status st = walk_all(enc, &c);
        if (st != COFFER_ERR_INTEGRITY)
            fail_msg("node %llu changed in the file: the walk gave %d", (unsigned long long)ids[i], (int)st);
        if (!strstr(walk_error, "index node"))
            fail_msg("the error does not name the node: %s", walk_error);
        flip_back(env, &f);
        assert_ok(walk_all(enc, &c));
        assert_int_equal(c, entries);
    }
    coffer_close(enc);
}

/* ---- memory ---------------------------------------------------------------- */

TS_ENV_TEST(test_kept_nodes_stay_within_their_bound)
{
    coffer_db *enc = open_at(env, "sealed.coffer", ts_key);
    coffer_class_id cls = ts_class(enc, "Item");
    /* Long names: an index of about twice the bound once opened. */
    coffer_txn *w = ts_begin(enc, COFFER_TXN_WRITE);
    write_version(w, cls, 30000, 0, 400);
    ts_commit(w);
    uint64_t entries;
    assert_ok(walk_all(enc, &entries));
    assert_int_equal(entries, 3 * 30000);
    long long kept = cf_itree_pool_bytes(enc);
    assert_true(kept > 0); /* the inner nodes stay */
    assert_true(kept <= (long long)CF_ITREE_POOL_BYTES);
    /* A few lookups keep a few leaves, and answer as before. */
    coffer_txn *r = ts_begin(enc, COFFER_TXN_READ);
    assert_int_equal(count_of(r, "n == $0", coffer_value_int(5)), expected_eq_count(30000, 0, 5));
    coffer_txn_free(r);
    long long after = cf_itree_pool_bytes(enc);
    assert_true(after > kept && after <= (long long)CF_ITREE_POOL_BYTES);
    coffer_close(enc);
}

/* ---- allocations ------------------------------------------------------------ */

/* Allocations of `count` equality lookups (n == 0..36, round and round)
 * through the tree in `txn`, each walking its entries. */
static size_t lookup_allocations(coffer_txn *txn, coffer_class_id cls, int count, uint64_t *seen)
{
    uint8_t key[16];
    size_t before = allocations;
    for (int i = 0; i < count; i++) {
        /* column 1 (n) as the index encodes it: the first entry at or past
         * the column's start, then its neighbours. */
        key[0] = 0;
        key[1] = (uint8_t)(i % 37);
        cf_itree_cursor cur;
        const uint8_t *e;
        size_t len;
        coffer_status st = cf_itree_seek(&cur, txn, cls, key, 2, &e, &len);
        for (int step = 0; step < 8 && st == COFFER_OK; step++) {
            (*seen)++;
            st = cf_itree_next(&cur, &e, &len);
        }
        assert_true(st == COFFER_OK || st == COFFER_DONE);
    }
    return allocations - before;
}

/* Allocations of `count` queries `n == x` through the query API. */
static size_t query_allocations(coffer_txn *txn, int count)
{
    coffer_db *db = txn->db;
    coffer_query *q;
    coffer_value arg = coffer_value_int(0);
    assert_ok(coffer_query_compile(db, ts_class(db, "Item"), "n == $0", SIZE_MAX, &arg, 1, &q));
    size_t before = allocations;
    for (int i = 0; i < count; i++) {
        coffer_query *b;
        arg = coffer_value_int(i % 37);
        assert_ok(coffer_query_rebind(q, &arg, 1, &b));
        uint64_t n;
        assert_ok(coffer_query_count(txn, b, &n));
        coffer_query_free(b);
    }
    size_t made = allocations - before;
    coffer_query_free(q);
    return made;
}

TS_ENV_TEST(test_a_lookup_in_open_nodes_allocates_nothing)
{
    coffer_db *plain = open_at(env, "plain.coffer", NULL), *enc = open_at(env, "sealed.coffer", ts_key);
    commit_version(plain, 5000, 0, 0);
    commit_version(enc, 5000, 0, 0);
    coffer_class_id cls = ts_class(enc, "Item");
    coffer_txn *r = ts_begin(enc, COFFER_TXN_READ);
    uint64_t seen = 0;
    assert_true(lookup_allocations(r, cls, 37, &seen) > 0); /* opening nodes allocates: the counter counts */
    assert_int_equal(lookup_allocations(r, cls, 2000, &seen), 0);
    coffer_txn_free(r);
    /* The next read transaction takes the nodes again without allocating. */
    r = ts_begin(enc, COFFER_TXN_READ);
    assert_int_equal(lookup_allocations(r, cls, 2000, &seen), 0);
    assert_true(seen > 2000);
    /* Through the query API, an encrypted file's lookup allocates no more
     * than a plain file's. */
    query_allocations(r, 37);
    size_t e = query_allocations(r, 370);
    coffer_txn_free(r);
    r = ts_begin(plain, COFFER_TXN_READ);
    query_allocations(r, 37);
    size_t p = query_allocations(r, 370);
    coffer_txn_free(r);
    if (e > p)
        fail_msg("370 lookups allocated %zu times in the encrypted file, %zu in the plain one", e, p);
    coffer_close(plain);
    coffer_close(enc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TS_TEST_EMPTY(test_answers_match_plain_across_commits_and_aborts),
        TS_TEST_EMPTY(test_readers_in_threads_see_their_snapshots),
        TS_TEST_EMPTY(test_tampering_after_a_commit_is_detected),
        TS_TEST_EMPTY(test_kept_nodes_stay_within_their_bound),
        TS_TEST_EMPTY(test_a_lookup_in_open_nodes_allocates_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
