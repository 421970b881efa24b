/*
 * test_clusters_filled.c — file format 5 writes a cluster as soon as
 * appends fill it (its object of low byte 255 is created), not at the
 * commit (storage/cluster_cache.h): the filled cluster is in LMDB's
 * transaction before the commit, with the bytes the commit would have
 * written; objects of a written cluster updated or deleted in the same
 * transaction, or grown into and shrunk out of records stored outside,
 * are written again at the commit; a transaction aborted after filling
 * clusters leaves nothing behind; a stored cluster first read between
 * two written ones reads the same after more are written; a write
 * transaction's cache is kept on the handle for the next one, within its
 * bound, and what the next ones write is right; plain, encrypted and in
 * memory.
 */
#define COFFER_EXPERIMENTAL_API
#include <lmdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster_item_schema.h"
#include "storage/cluster.h"
#include "storage/cluster_cache.h"
#include "storage/cluster_parts.h"
#include "storage/handles.h"

#define BIG (3 * CF_CLUSTER_INLINE_MAX)

static void set_blob(coffer_txn *w, coffer_class_id cls, coffer_object_key key, size_t blob)
{
    coffer_object *o = NULL;
    assert_ok(coffer_object_get(w, cls, key, &o));
    uint8_t *bytes = malloc(blob + 1);
    memset(bytes, (int)(ts_get_int(o, I_N) & 0xFF), blob + 1);
    coffer_value v = blob ? coffer_value_binary(bytes, blob) : coffer_value_null();
    assert_ok(coffer_object_set_value(o, I_BLOB, &v));
    coffer_object_release(o);
    free(bytes);
}

static void delete_item(coffer_txn *w, coffer_class_id cls, coffer_object_key key)
{
    coffer_object *o = NULL;
    assert_ok(coffer_object_get(w, cls, key, &o));
    assert_ok(coffer_object_delete(o));
    coffer_object_release(o);
}

/* Cluster `cid` of the class as LMDB's transaction holds it, opened whole
 * (plain bytes, whatever the file's key): a new buffer of *len bytes, or
 * NULL when LMDB holds none. */
static uint8_t *stored_cluster(coffer_txn *txn, coffer_class_id cls, uint64_t cid, size_t *len)
{
    uint8_t kb[8];
    cf_put_be64(kb, cid);
    MDB_val k = {8, kb}, v;
    if (mdb_get(txn->mdb, txn->db->object_dbis[cls], &k, &v) != 0)
        return NULL;
    uint8_t *buf = NULL;
    size_t cap = 0;
    assert_ok(cf_cluster_open_whole(txn, txn->db->object_dbis[cls], 2 * txn->db->schema->classes[cls].table, cid, &v, &buf,
                                    &cap, len));
    return buf;
}

/* Whether LMDB's transaction holds the record of `key` stored outside. */
static int stored_outside(coffer_txn *txn, coffer_class_id cls, coffer_object_key key)
{
    uint8_t kb[CF_EXTERNAL_KEY_SIZE];
    cf_cluster_external_key(kb, key);
    MDB_val k = {sizeof kb, kb}, v;
    return mdb_get(txn->mdb, txn->db->object_dbis[cls], &k, &v) == 0;
}

static size_t verify_findings(const ts_env *env)
{
    coffer_verify_report *r = NULL;
    assert_ok(coffer_db_verify(env->db, &r));
    size_t total = coffer_verify_report_count(r);
    for (size_t i = 0; i < total; i++)
        print_message("    finding: %s\n", coffer_verify_report_message(r, i));
    coffer_verify_report_free(r);
    return total;
}

/* Makes object `key` item n: its n and its name. */
static void update_n(coffer_txn *w, coffer_class_id cls, coffer_object_key key, int64_t n)
{
    coffer_object *o = NULL;
    assert_ok(coffer_object_get(w, cls, key, &o));
    char name[32];
    name_of(n, name, sizeof name);
    coffer_value v = coffer_value_int(n), s = ts_str(name);
    assert_ok(coffer_object_set_value(o, I_N, &v));
    assert_ok(coffer_object_set_value(o, I_NAME, &s));
    coffer_object_release(o);
}

TS_ENV_TEST(test_filled_cluster_is_written_before_the_commit)
{
    coffer_txn *w = ts_begin(env->db, COFFER_TXN_WRITE);
    for (int i = 1; i <= 254; i++)
        add_item(w, item(env), i, i == 100 ? BIG : 0);
    size_t len;
    assert_null(stored_cluster(w, item(env), 0, &len)); /* not full yet */
    add_item(w, item(env), 255, 0);                     /* key 255 fills cluster 0 */
    uint8_t *filled = stored_cluster(w, item(env), 0, &len);
    assert_non_null(filled);
    assert_true(stored_outside(w, item(env), 100));
    cf_cluster c;
    assert_ok(cf_cluster_parse(filled, len, &c));
    assert_int_equal(c.n, 255);
    for (int i = 256; i <= 600; i++)
        add_item(w, item(env), i, 0);
    size_t len1;
    uint8_t *second = stored_cluster(w, item(env), 1, &len1);
    assert_non_null(second);
    free(second);
    assert_null(stored_cluster(w, item(env), 2, &len1)); /* 512..600: at the commit */
    check_item(w, item(env), 100, 100, BIG);
    check_item(w, item(env), 300, 300, 0);
    assert_int_equal(ts_count(w, item(env)), 600);
    ts_commit(w);

    /* The bytes written when it was filled are those the commit writes. */
    coffer_txn *r = ts_begin(env->db, COFFER_TXN_READ);
    size_t len2;
    uint8_t *committed = stored_cluster(r, item(env), 0, &len2);
    coffer_txn_free(r);
    assert_non_null(committed);
    size_t flen;
    assert_int_equal(len2, len);
    assert_memory_equal(committed, filled, len);
    free(committed);
    /* Encoded again at a commit from the same values: the same bytes. */
    w = ts_begin(env->db, COFFER_TXN_WRITE);
    set_blob(w, item(env), 1, 0); /* no change of value, but a change */
    ts_commit(w);
    r = ts_begin(env->db, COFFER_TXN_READ);
    committed = stored_cluster(r, item(env), 0, &flen);
    assert_int_equal(flen, len);
    assert_memory_equal(committed, filled, len);
    for (int i = 1; i <= 600; i++)
        check_item(r, item(env), (coffer_object_key)i, i, i == 100 ? BIG : 0);
    coffer_txn_free(r);
    free(committed);
    free(filled);
    assert_int_equal(verify_findings(env), 0);
}

TS_ENV_TEST(test_objects_of_a_filled_cluster_change_before_the_commit)
{
    coffer_txn *w = ts_begin(env->db, COFFER_TXN_WRITE);
    for (int i = 1; i <= 700; i++)
        add_item(w, item(env), i, i == 10 || i == 20 || i == 300 ? BIG : 0);
    /* Clusters 0 and 1 are written; now change them. */
    update_n(w, item(env), 5, -5);
    delete_item(w, item(env), 7);
    set_blob(w, item(env), 10, 3);    /* back into its cluster: its record outside goes */
    delete_item(w, item(env), 20);    /* its record outside goes */
    set_blob(w, item(env), 30, BIG);  /* out of its cluster */
    set_blob(w, item(env), 300, BIG + 5); /* outside, rewritten */
    delete_item(w, item(env), 255);   /* the object that filled cluster 0 */
    assert_int_equal(ts_count(w, item(env)), 697);
    check_item(w, item(env), 10, 10, 3);
    check_item(w, item(env), 30, 30, BIG);
    check_item(w, item(env), 5, -5, 0);
    coffer_object *o = NULL;
    assert_status(coffer_object_get(w, item(env), 20, &o), COFFER_ERR_NOT_FOUND);
    ts_commit(w);

    coffer_txn *r = ts_begin(env->db, COFFER_TXN_READ);
    assert_int_equal(ts_count(r, item(env)), 697);
    for (int i = 1; i <= 700; i++) {
        if (i == 7 || i == 20 || i == 255) {
            assert_status(coffer_object_get(r, item(env), (coffer_object_key)i, &o), COFFER_ERR_NOT_FOUND);
            continue;
        }
        size_t blob = i == 10 ? 3 : i == 30 ? BIG : i == 300 ? BIG + 5 : 0;
        check_item(r, item(env), (coffer_object_key)i, i == 5 ? -5 : i, blob);
    }
    assert_false(stored_outside(r, item(env), 10));
    assert_false(stored_outside(r, item(env), 20));
    assert_true(stored_outside(r, item(env), 30));
    assert_true(stored_outside(r, item(env), 300));
    coffer_object_key *keys = NULL;
    assert_int_equal(ts_collect_keys(ts_iterate(r, item(env)), &keys), 697);
    assert_int_equal(keys[251], 254); /* 7, 20 and 255 deleted */
    assert_int_equal(keys[252], 256);
    free(keys);
    coffer_txn_free(r);
    /* Keys go on above every key used. */
    w = ts_begin(env->db, COFFER_TXN_WRITE);
    assert_int_equal(add_item(w, item(env), 701, 0), 701);
    ts_commit(w);
    assert_int_equal(verify_findings(env), 0);
}

TS_ENV_TEST(test_abort_after_filling_clusters)
{
    coffer_txn *w = ts_begin(env->db, COFFER_TXN_WRITE);
    for (int i = 1; i <= 10; i++)
        add_item(w, item(env), i, 0);
    ts_commit(w);
    w = ts_begin(env->db, COFFER_TXN_WRITE);
    for (int i = 11; i <= 800; i++)
        add_item(w, item(env), i, i % 100 == 0 ? BIG : 0);
    size_t len;
    uint8_t *filled = stored_cluster(w, item(env), 1, &len);
    assert_non_null(filled); /* written before the commit */
    free(filled);
    assert_true(stored_outside(w, item(env), 300));
    assert_ok(coffer_txn_abort(w));
    coffer_txn_free(w);

    coffer_txn *r = ts_begin(env->db, COFFER_TXN_READ);
    assert_int_equal(ts_count(r, item(env)), 10);
    for (int i = 1; i <= 10; i++)
        check_item(r, item(env), (coffer_object_key)i, i, 0);
    coffer_object *o = NULL;
    assert_status(coffer_object_get(r, item(env), 11, &o), COFFER_ERR_NOT_FOUND);
    assert_status(coffer_object_get(r, item(env), 300, &o), COFFER_ERR_NOT_FOUND);
    assert_null(stored_cluster(r, item(env), 1, &len));
    assert_false(stored_outside(r, item(env), 300));
    coffer_txn_free(r);
    /* Clearing the class after its clusters were written removes them. */
    w = ts_begin(env->db, COFFER_TXN_WRITE);
    assert_int_equal(add_item(w, item(env), 11, 0), 11);
    for (int i = 12; i <= 600; i++)
        add_item(w, item(env), i, 0);
    assert_ok(coffer_class_clear(w, item(env))); /* after clusters 0 and 1 were written */
    assert_int_equal(ts_count(w, item(env)), 0);
    assert_int_equal(add_item(w, item(env), 1, 0), 601);
    ts_commit(w);
    r = ts_begin(env->db, COFFER_TXN_READ);
    assert_int_equal(ts_count(r, item(env)), 1);
    assert_null(stored_cluster(r, item(env), 0, &len));
    assert_null(stored_cluster(r, item(env), 1, &len));
    check_item(r, item(env), 601, 1, 0);
    coffer_txn_free(r);
    assert_int_equal(verify_findings(env), 0);
}

TS_ENV_TEST(test_clusters_read_between_filled_ones)
{
    coffer_txn *w = ts_begin(env->db, COFFER_TXN_WRITE);
    for (int i = 1; i <= 300; i++)
        add_item(w, item(env), i, i == 30 ? BIG : 0);
    ts_commit(w);
    /* Cluster 0 is first read after cluster 1 was written, in pages that
     * writing more clusters changes again: what was read stays. */
    w = ts_begin(env->db, COFFER_TXN_WRITE);
    for (int i = 301; i <= 511; i++)
        add_item(w, item(env), i, 0);
    coffer_object *held = NULL;
    assert_ok(coffer_object_get(w, item(env), 40, &held));
    check_item(w, item(env), 30, 30, BIG);
    for (int i = 512; i <= 3000; i++)
        add_item(w, item(env), i, i % 7 == 0 ? BIG : 0);
    assert_int_equal(ts_get_int(held, I_N), 40);
    coffer_object_release(held);
    for (int i = 1; i <= 3000; i++)
        check_item(w, item(env), (coffer_object_key)i, i, i == 30 || (i > 511 && i % 7 == 0) ? BIG : 0);
    ts_commit(w);
    coffer_txn *r = ts_begin(env->db, COFFER_TXN_READ);
    assert_int_equal(ts_count(r, item(env)), 3000);
    for (int i = 1; i <= 3000; i++)
        check_item(r, item(env), (coffer_object_key)i, i, i == 30 || (i > 511 && i % 7 == 0) ? BIG : 0);
    coffer_txn_free(r);
    assert_int_equal(verify_findings(env), 0);
}

/* ---- the cache reused by the next write transaction ----------------------- */

TS_ENV_TEST(test_write_transactions_reuse_a_bounded_cache)
{
    enum { CLUSTERS = CF_CLUSTER_POOL_ENTRIES + 36, COUNT = CLUSTERS * CF_CLUSTER_MAX - 1 };
    assert_int_equal(cf_clusters_pool_entries(env->db), -1);
    coffer_txn *w = ts_begin(env->db, COFFER_TXN_WRITE);
    for (int i = 1; i <= COUNT; i++)
        add_item(w, item(env), i, 0);
    ts_commit(w);
    /* Kept on the handle, with no more than its bound of entries. */
    assert_int_equal(cf_clusters_pool_entries(env->db), CF_CLUSTER_POOL_ENTRIES);
    coffer_txn *r = ts_begin(env->db, COFFER_TXN_READ);
    assert_int_equal(ts_count(r, item(env)), COUNT);
    coffer_txn_free(r);
    assert_int_equal(cf_clusters_pool_entries(env->db), CF_CLUSTER_POOL_ENTRIES); /* reads make their own */

    /* A write transaction takes it; the next ones start empty from it. */
    w = ts_begin(env->db, COFFER_TXN_WRITE);
    update_n(w, item(env), 5, -5);
    assert_int_equal(cf_clusters_pool_entries(env->db), -1);
    update_n(w, item(env), 300, -300);
    delete_item(w, item(env), 301);
    assert_int_equal(add_item(w, item(env), COUNT + 1, BIG), COUNT + 1);
    ts_commit(w);
    assert_true(cf_clusters_pool_entries(env->db) >= 0);
    w = ts_begin(env->db, COFFER_TXN_WRITE);
    for (int k = 1; k <= COUNT; k += CF_CLUSTER_MAX)
        update_n(w, item(env), (coffer_object_key)k + 1, 0); /* every cluster, then abort */
    assert_ok(coffer_txn_abort(w));
    coffer_txn_free(w);
    assert_int_equal(cf_clusters_pool_entries(env->db), CF_CLUSTER_POOL_ENTRIES);
    w = ts_begin(env->db, COFFER_TXN_WRITE);
    update_n(w, item(env), 6, -6);
    check_item(w, item(env), 5, -5, 0);
    check_item(w, item(env), 2, 2, 0);
    coffer_object *o = NULL;
    assert_status(coffer_object_get(w, item(env), 301, &o), COFFER_ERR_NOT_FOUND);
    ts_commit(w);

    r = ts_begin(env->db, COFFER_TXN_READ);
    assert_int_equal(ts_count(r, item(env)), COUNT);
    for (int i = 1; i <= COUNT + 1; i++) {
        if (i == 301)
            continue;
        int64_t n = i == 5 || i == 6 || i == 300 ? -i : i;
        check_item(r, item(env), (coffer_object_key)i, n, i == COUNT + 1 ? BIG : 0);
    }
    coffer_txn_free(r);
    assert_int_equal(verify_findings(env), 0);
}

int main(void)
{
    setenv("COFFER_TEST_STORAGE_FORMAT", "5", 1); /* every file of this suite: clusters */
    const struct CMUnitTest tests[] = {
        TS_TEST_ALL_MODES_SETUP(test_filled_cluster_is_written_before_the_commit, setup),
        TS_TEST_ALL_MODES_SETUP(test_objects_of_a_filled_cluster_change_before_the_commit, setup),
        TS_TEST_ALL_MODES_SETUP(test_abort_after_filling_clusters, setup),
        TS_TEST_ALL_MODES_SETUP(test_clusters_read_between_filled_ones, setup),
        TS_TEST_ALL_MODES_SETUP(test_write_transactions_reuse_a_bounded_cache, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
