/*
 * test_index_tree.c — the B+tree of sealed index nodes (file format 6,
 * storage/index_tree.h), driven directly and compared with a simple model:
 * random inserts and deletes (long and short entries, shared prefixes,
 * duplicates, absent entries) in write transactions that commit or abort,
 * so that nodes split and merge and the root grows and shrinks; after each
 * transaction the whole tree is checked (order, separators, leaf depth,
 * fill) and walked, and random seeks are compared with the model's, also
 * inside the write transaction before it commits. In a plain file (nodes
 * with checksums) and an encrypted one (sealed nodes). A byte flipped in a
 * stored node is COFFER_ERR_INTEGRITY (encrypted) or COFFER_ERR_CORRUPTED
 * (plain) naming the node, never a wrong answer.
 *
 * COFFER_ITREE_OPS sets the number of operations (100,000 by default).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_support.h"
#include "storage/handles.h"
#include "storage/index_tree.h"

static const coffer_property_schema node_props[] = {
    {.name = "label", .type = COFFER_TYPE_STRING, .flags = 0},
};
static const coffer_class_schema schema[] = {{.name = "Holder", .properties = node_props, .property_count = 1}};

static int setup(void **state) { return ts_setup_schema(state, schema, 1); }

/* ---- the model: a sorted array of entries -------------------------------- */

typedef struct blob {
    uint16_t len;
    uint8_t b[];
} blob;

typedef struct model {
    blob **e;
    size_t n, cap;
    blob **all; /* every blob made, freed at the end */
    size_t nall, capall;
} model;

static int blob_cmp(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
    int c = memcmp(a, b, alen < blen ? alen : blen);
    return c ? c : (alen > blen) - (alen < blen);
}

/* The first index whose entry is not below key. */
static size_t model_lower(const model *m, const uint8_t *key, size_t len)
{
    size_t lo = 0, hi = m->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (blob_cmp(m->e[mid]->b, m->e[mid]->len, key, len) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static int model_has(const model *m, const blob *b, size_t *at)
{
    *at = model_lower(m, b->b, b->len);
    return *at < m->n && blob_cmp(m->e[*at]->b, m->e[*at]->len, b->b, b->len) == 0;
}

static void model_insert(model *m, blob *b)
{
    size_t at;
    if (model_has(m, b, &at))
        return;
    if (m->n == m->cap) {
        m->cap = m->cap ? m->cap * 2 : 1024;
        m->e = realloc(m->e, m->cap * sizeof *m->e);
        assert_non_null(m->e);
    }
    memmove(m->e + at + 1, m->e + at, (m->n - at) * sizeof *m->e);
    m->e[at] = b;
    m->n++;
}

static int model_delete(model *m, const blob *b)
{
    size_t at;
    if (!model_has(m, b, &at))
        return 0;
    memmove(m->e + at, m->e + at + 1, (m->n - at - 1) * sizeof *m->e);
    m->n--;
    return 1;
}

static uint64_t rng_state;
static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* A random entry shaped like an index entry: a column, a value with shared
 * prefixes (sometimes long), an object key. */
static blob *random_blob(model *m)
{
    size_t tail = rnd() % 50 == 0 ? 100 + rnd() % 380 : rnd() % 24;
    size_t len = 2 + 1 + 2 + tail + 8;
    blob *b = malloc(sizeof *b + len);
    assert_non_null(b);
    b->len = (uint16_t)len;
    b->b[0] = 0;
    b->b[1] = (uint8_t)(rnd() % 3);
    b->b[2] = rnd() % 20 ? 1 : 0;
    b->b[3] = (uint8_t)('a' + rnd() % 4);
    b->b[4] = (uint8_t)('a' + rnd() % 26);
    for (size_t i = 0; i < tail; i++)
        b->b[5 + i] = (uint8_t)('a' + rnd() % 26);
    uint64_t key = rnd() % 1000000;
    for (int i = 0; i < 8; i++)
        b->b[len - 8 + i] = (uint8_t)(key >> (56 - 8 * i));
    if (m->nall == m->capall) {
        m->capall = m->capall ? m->capall * 2 : 1024;
        m->all = realloc(m->all, m->capall * sizeof *m->all);
        assert_non_null(m->all);
    }
    m->all[m->nall++] = b;
    return b;
}

static void model_free(model *m)
{
    for (size_t i = 0; i < m->nall; i++)
        free(m->all[i]);
    free(m->all);
    free(m->e);
}

/* ---- comparing ------------------------------------------------------------ */

/* Random seeks in `txn` give the model's answers. */
static void compare_seeks(coffer_txn *txn, coffer_class_id cls, model *m, int count)
{
    for (int i = 0; i < count; i++) {
        uint8_t key[16];
        size_t klen = 1 + rnd() % sizeof key;
        for (size_t j = 0; j < klen; j++)
            key[j] = j == 0 ? 0 : j == 1 ? (uint8_t)(rnd() % 3) : j == 2 ? (uint8_t)(rnd() % 2) : (uint8_t)('a' + rnd() % 26);
        if (rnd() % 2 && m->n) { /* or an entry that is there */
            blob *b = m->e[rnd() % m->n];
            klen = b->len;
            if (klen > sizeof key)
                klen = sizeof key;
            memcpy(key, b->b, klen);
        }
        cf_itree_cursor cur;
        const uint8_t *e;
        size_t len;
        coffer_status st = cf_itree_seek(&cur, txn, cls, key, klen, &e, &len);
        size_t at = model_lower(m, key, klen);
        if (at == m->n) {
            assert_int_equal(st, COFFER_DONE);
            continue;
        }
        assert_int_equal(st, COFFER_OK);
        assert_int_equal(len, m->e[at]->len);
        assert_memory_equal(e, m->e[at]->b, len);
        /* And a few steps on. */
        for (int s = 0; s < 5; s++) {
            st = cf_itree_next(&cur, &e, &len);
            if (++at == m->n) {
                assert_int_equal(st, COFFER_DONE);
                break;
            }
            assert_int_equal(st, COFFER_OK);
            assert_int_equal(len, m->e[at]->len);
            assert_memory_equal(e, m->e[at]->b, len);
        }
    }
}

/* The committed tree, checked whole and walked, equals the model. */
static void compare_all(coffer_db *db, coffer_class_id cls, model *m)
{
    coffer_txn *txn;
    assert_ok(coffer_txn_begin(db, COFFER_TXN_READ, &txn));
    uint64_t count;
    assert_ok(cf_itree_check(txn, cls, &count));
    assert_int_equal(count, m->n);
    cf_itree_cursor cur;
    const uint8_t *e;
    size_t len, i = 0;
    coffer_status st = cf_itree_seek(&cur, txn, cls, (const uint8_t *)"", 0, &e, &len);
    for (; st == COFFER_OK; st = cf_itree_next(&cur, &e, &len), i++) {
        assert_true(i < m->n);
        assert_int_equal(len, m->e[i]->len);
        assert_memory_equal(e, m->e[i]->b, len);
    }
    assert_int_equal(st, COFFER_DONE);
    assert_int_equal(i, m->n);
    compare_seeks(txn, cls, m, 50);
    coffer_txn_free(txn);
}

TS_ENV_TEST(test_random_operations_match_the_model)
{
    coffer_class_id cls = ts_class(env->db, "Holder");
    const char *ops_env = getenv("COFFER_ITREE_OPS");
    uint64_t total = ops_env ? strtoull(ops_env, NULL, 10) : 100000;
    rng_state = 0x9E3779B97F4A7C15u ^ (uint64_t)env->mode;
    model m = {0};
    uint64_t done = 0, splits_seen = 0;
    int target_phase = 0;
    while (done < total) {
        /* Grow to about 20,000 entries, shrink to a few, grow again. */
        size_t target = target_phase % 2 == 0 ? 20000 : 50;
        model saved = m;
        saved.e = malloc((m.n ? m.n : 1) * sizeof *saved.e);
        assert_non_null(saved.e);
        if (m.n)
            memcpy(saved.e, m.e, m.n * sizeof *m.e);
        coffer_txn *txn;
        assert_ok(coffer_txn_begin(env->db, COFFER_TXN_WRITE, &txn));
        uint64_t n = 1 + rnd() % 3000;
        for (uint64_t i = 0; i < n && done < total; i++, done++) {
            int grow = m.n < target ? rnd() % 100 < 70 : rnd() % 100 < 30;
            if (grow) {
                blob *b = rnd() % 20 == 0 && m.n ? m.e[rnd() % m.n] : random_blob(&m);
                assert_ok(cf_itree_insert(txn, cls, b->b, b->len));
                model_insert(&m, b);
            } else {
                blob *b = rnd() % 10 == 0 || !m.n ? random_blob(&m) : m.e[rnd() % m.n];
                int found, want = model_delete(&m, b);
                assert_ok(cf_itree_delete(txn, cls, b->b, b->len, &found));
                assert_int_equal(found, want);
            }
            if (rnd() % 500 == 0)
                compare_seeks(txn, cls, &m, 3);
        }
        if (m.n >= target && target_phase % 2 == 0)
            target_phase++;
        else if (m.n <= target && target_phase % 2 == 1)
            target_phase++;
        if (m.n > 2000)
            splits_seen = 1;
        if (rnd() % 8 == 0) {
            assert_ok(coffer_txn_abort(txn));
            coffer_txn_free(txn);
            free(m.e);
            m.e = saved.e;
            m.n = saved.n;
            m.cap = saved.n ? saved.n : 1;
            /* blobs made meanwhile stay in m.all */
        } else {
            assert_ok(coffer_txn_commit(txn));
            coffer_txn_free(txn);
            free(saved.e);
        }
        compare_all(env->db, cls, &m);
    }
    assert_true(splits_seen);
    assert_true(target_phase >= 1 || total < 50000);
    /* Reopened, the tree is as committed. */
    ts_env_reopen(env, schema, 1, 1);
    compare_all(env->db, ts_class(env->db, "Holder"), &m);
    /* Emptied, the tree has no node left. */
    coffer_txn *txn;
    assert_ok(coffer_txn_begin(env->db, COFFER_TXN_WRITE, &txn));
    while (m.n) {
        blob *b = m.e[m.n - 1];
        int found;
        assert_ok(cf_itree_delete(txn, cls, b->b, b->len, &found));
        assert_true(found);
        m.n--;
    }
    assert_ok(coffer_txn_commit(txn));
    coffer_txn_free(txn);
    compare_all(env->db, cls, &m);
    coffer_class_stats s;
    assert_ok(coffer_db_class_stats(env->db, cls, &s));
    assert_int_equal(s.index_bytes, 0);
    model_free(&m);
}

/* The sub-database of class `cls`'s index, as LMDB names it. */
static void index_dbname(coffer_db *db, coffer_class_id cls, char *out, size_t cap)
{
    snprintf(out, cap, "%u", 2 * db->schema->classes[cls].table + 1);
}

TS_ENV_TEST(test_flipped_byte_in_a_node_is_an_error)
{
    coffer_class_id cls = ts_class(env->db, "Holder");
    rng_state = 12345;
    model m = {0};
    coffer_txn *txn;
    assert_ok(coffer_txn_begin(env->db, COFFER_TXN_WRITE, &txn));
    for (int i = 0; i < 3000; i++) {
        blob *b = random_blob(&m);
        assert_ok(cf_itree_insert(txn, cls, b->b, b->len));
        model_insert(&m, b);
    }
    assert_ok(coffer_txn_commit(txn));
    coffer_txn_free(txn);
    char dbname[16];
    index_dbname(env->db, cls, dbname, sizeof dbname);
    ts_env_close(env);
    /* Flip one byte in the middle of every stored node but the root, in
     * turn: the seek that reaches it fails. Here: node 2, a leaf. */
    ts_raw w;
    MDB_dbi dbi = ts_raw_open(&w, env->path, dbname);
    uint8_t key[8] = {0, 0, 0, 0, 0, 0, 0, 2};
    MDB_val k = {8, key}, v;
    assert_int_equal(mdb_get(w.txn, dbi, &k, &v), 0);
    uint8_t *copy = malloc(v.mv_size);
    assert_non_null(copy);
    memcpy(copy, v.mv_data, v.mv_size);
    copy[v.mv_size / 2] ^= 0x20;
    v.mv_data = copy;
    assert_int_equal(mdb_put(w.txn, dbi, &k, &v, 0), 0);
    free(copy);
    ts_raw_end(&w, 1);
    ts_env_reopen(env, schema, 1, 1);
    cls = ts_class(env->db, "Holder");
    assert_ok(coffer_txn_begin(env->db, COFFER_TXN_READ, &txn));
    uint64_t count;
    assert_status(cf_itree_check(txn, cls, &count), env->mode == TS_ENCRYPTED ? COFFER_ERR_INTEGRITY : COFFER_ERR_CORRUPTED);
    assert_error_contains("index node 2");
    /* A walk over everything reaches it too, and stops with the error. */
    cf_itree_cursor cur;
    const uint8_t *e;
    size_t len;
    coffer_status st = cf_itree_seek(&cur, txn, cls, (const uint8_t *)"", 0, &e, &len);
    size_t seen = 0;
    while (st == COFFER_OK) {
        assert_memory_equal(e, m.e[seen]->b, len);
        seen++;
        st = cf_itree_next(&cur, &e, &len);
    }
    assert_int_equal(st, env->mode == TS_ENCRYPTED ? COFFER_ERR_INTEGRITY : COFFER_ERR_CORRUPTED);
    assert_true(seen < m.n);
    coffer_txn_free(txn);
    model_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TS_TEST_FILE_MODES_SETUP(test_random_operations_match_the_model, setup),
        TS_TEST_FILE_MODES_SETUP(test_flipped_byte_in_a_node_is_an_error, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
