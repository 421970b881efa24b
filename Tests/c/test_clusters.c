/*
 * test_clusters.c — file format 5, objects in clusters of 256 keys
 * (docs/FORMAT.md, "Clusters"), plain and encrypted, through coffer.h and
 * the raw file: keys 255, 256 and 257 on both sides of a cluster boundary;
 * objects larger than CF_CLUSTER_INLINE_MAX stored outside their cluster;
 * deletes that empty a cluster remove it; a write transaction aborted after
 * changing clusters leaves nothing behind; a damaged or moved cluster, and a
 * damaged object stored outside, are errors naming the objects and
 * coffer_verify findings, never other values; each column block carries its
 * own checksum or seal: a damaged block (fixed-width, offsets, all-null)
 * fails alone (an update in place of another column commits and leaves
 * it as it was; one of its column fails), and a block moved to another
 * cluster or opened as another column or as the head does not open;
 * random operations agree with
 * a model; the format is chosen for new files only, and an unknown one is
 * refused by the setter.
 */
#define COFFER_EXPERIMENTAL_API
#include <lmdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster_item_schema.h"
#include "storage/cluster.h"
#include "storage/cluster_parts.h"
#include "storage/handles.h"

#define ITEM_OBJECTS "2" /* the first class's object table */

/* Commits items 1..count (keys 1..count) with no blobs. */
static void fill(ts_env *env, int count)
{
    coffer_txn *w = ts_begin(env->db, COFFER_TXN_WRITE);
    for (int i = 1; i <= count; i++)
        assert_int_equal(add_item(w, item(env), i, 0), (coffer_object_key)i);
    ts_commit(w);
}

/* The LMDB keys of the object table of a closed file: count of clusters
 * and of objects stored outside. */
static void raw_census(const char *path, int *clusters, int *outside)
{
    ts_raw w;
    MDB_dbi dbi = ts_raw_open(&w, path, ITEM_OBJECTS);
    MDB_cursor *cur;
    assert_int_equal(mdb_cursor_open(w.txn, dbi, &cur), 0);
    MDB_val k, v;
    *clusters = *outside = 0;
    for (int rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); rc == 0; rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
        if (k.mv_size == 8)
            ++*clusters;
        else if (k.mv_size == CF_EXTERNAL_KEY_SIZE && ((uint8_t *)k.mv_data)[0] == CF_EXTERNAL_PREFIX)
            ++*outside;
        else if (k.mv_size == CF_BLOCK_KEY_SIZE && ((uint8_t *)k.mv_data)[0] == CF_BLOCK_PREFIX)
            continue; /* a column block of a cluster (version 4) */
        else
            fail_msg("a key of %zu bytes in the object table", k.mv_size);
    }
    mdb_cursor_close(cur);
    ts_raw_end(&w, 0);
}

/* Flips bit 0 of byte `at` (negative: from the end) of the value under
 * `key` in the object table of a closed file. */
static void flip(const char *path, const uint8_t *key, size_t klen, long at)
{
    ts_raw w;
    MDB_dbi dbi = ts_raw_open(&w, path, ITEM_OBJECTS);
    MDB_val k = {klen, (void *)key}, v;
    assert_int_equal(mdb_get(w.txn, dbi, &k, &v), 0);
    uint8_t *copy = malloc(v.mv_size);
    memcpy(copy, v.mv_data, v.mv_size);
    copy[at < 0 ? (long)v.mv_size + at : at] ^= 1;
    MDB_val nv = {v.mv_size, copy};
    assert_int_equal(mdb_put(w.txn, dbi, &k, &nv, 0), 0);
    free(copy);
    ts_raw_end(&w, 1);
}

static void cluster_key(uint8_t kb[8], uint64_t cid)
{
    for (int i = 7; i >= 0; i--, cid >>= 8)
        kb[i] = (uint8_t)cid;
}

static size_t verify_findings(const ts_env *env, coffer_verify_kind kind, const char *needle)
{
    coffer_verify_report *r = NULL;
    assert_ok(coffer_db_verify(env->db, &r));
    size_t n = 0;
    for (size_t i = 0; i < coffer_verify_report_count(r); i++) {
        print_message("    finding: %s\n", coffer_verify_report_message(r, i));
        if (coffer_verify_report_kind(r, i) == kind && strstr(coffer_verify_report_message(r, i), needle))
            n++;
    }
    size_t total = coffer_verify_report_count(r);
    coffer_verify_report_free(r);
    return needle ? n : total;
}

/* ---- boundaries ---------------------------------------------------------- */

TS_ENV_TEST(test_cluster_boundaries)
{
    fill(env, 300); /* cluster 0 holds keys 1..255, cluster 1 keys 256..300 */
    coffer_txn *r = ts_begin(env->db, COFFER_TXN_READ);
    for (coffer_object_key k = 1; k <= 300; k++)
        check_item(r, item(env), k, (int64_t)k, 0);
    coffer_object *o = NULL;
    assert_status(coffer_object_get(r, item(env), 0, &o), COFFER_ERR_NOT_FOUND);
    assert_status(coffer_object_get(r, item(env), 301, &o), COFFER_ERR_NOT_FOUND);
    assert_status(coffer_object_get(r, item(env), 512 + 7, &o), COFFER_ERR_NOT_FOUND);
    coffer_object_key *keys = NULL;
    assert_int_equal(ts_collect_keys(ts_iterate(r, item(env)), &keys), 300);
    for (int i = 0; i < 300; i++)
        assert_int_equal(keys[i], i + 1);
    free(keys);
    coffer_txn_free(r);

    /* Delete 255, 256 and 257: their neighbours stay, iteration skips them. */
    coffer_txn *w = ts_begin(env->db, COFFER_TXN_WRITE);
    for (coffer_object_key k = 255; k <= 257; k++) {
        assert_ok(coffer_object_get(w, item(env), k, &o));
        assert_ok(coffer_object_delete(o));
        coffer_object_release(o);
    }
    assert_int_equal(ts_count(w, item(env)), 297);
    ts_commit(w);
    r = ts_begin(env->db, COFFER_TXN_READ);
    assert_int_equal(ts_count(r, item(env)), 297);
    check_item(r, item(env), 254, 254, 0);
    check_item(r, item(env), 258, 258, 0);
    assert_status(coffer_object_get(r, item(env), 256, &o), COFFER_ERR_NOT_FOUND);
    assert_int_equal(ts_collect_keys(ts_iterate(r, item(env)), &keys), 297);
    assert_int_equal(keys[253], 254);
    assert_int_equal(keys[254], 258);
    free(keys);
    coffer_txn_free(r);
    if (env->mode != TS_MEMORY) {
        ts_env_close(env);
        int clusters, outside;
        raw_census(env->path, &clusters, &outside);
        assert_int_equal(clusters, 2);
        assert_int_equal(outside, 0);
        ts_env_reopen(env, schema, 1, 1);
    }
    assert_int_equal(verify_findings(env, COFFER_VERIFY_RECORD, NULL), 0);
}

/* ---- objects larger than a cluster keeps --------------------------------- */

TS_ENV_TEST(test_large_objects_are_stored_outside)
{
    const size_t big = 3 * CF_CLUSTER_INLINE_MAX, huge = 1u << 20;
    coffer_txn *w = ts_begin(env->db, COFFER_TXN_WRITE);
    for (int i = 1; i <= 10; i++)
        add_item(w, item(env), i, i == 3 ? big : i == 7 ? huge : i == 5 ? 100 : 0);
    check_item(w, item(env), 7, 7, huge); /* before the commit, from the transaction's clusters */
    ts_commit(w);
    coffer_txn *r = ts_begin(env->db, COFFER_TXN_READ);
    for (int i = 1; i <= 10; i++)
        check_item(r, item(env), (coffer_object_key)i, i, i == 3 ? big : i == 7 ? huge : i == 5 ? 100 : 0);
    coffer_txn_free(r);
    if (env->mode != TS_MEMORY) {
        ts_env_close(env);
        int clusters, outside;
        raw_census(env->path, &clusters, &outside);
        assert_int_equal(clusters, 1);
        assert_int_equal(outside, 2);
        ts_env_reopen(env, schema, 1, 1);
    }
    /* Shrink 3 (back into its cluster), grow 5, delete 7: the records
     * stored outside follow. Another object's change keeps them. */
    w = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_object *o = NULL;
    assert_ok(coffer_object_get(w, item(env), 3, &o));
    coffer_value small = coffer_value_binary("abc", 3);
    assert_ok(coffer_object_set_value(o, I_BLOB, &small));
    coffer_object_release(o);
    assert_ok(coffer_object_get(w, item(env), 5, &o));
    uint8_t *bytes = malloc(big);
    memset(bytes, 5, big);
    coffer_value large = coffer_value_binary(bytes, big);
    assert_ok(coffer_object_set_value(o, I_BLOB, &large));
    coffer_object_release(o);
    free(bytes);
    assert_ok(coffer_object_get(w, item(env), 7, &o));
    assert_ok(coffer_object_delete(o));
    coffer_object_release(o);
    ts_commit(w);
    r = ts_begin(env->db, COFFER_TXN_READ);
    assert_ok(coffer_object_get(r, item(env), 3, &o));
    size_t size;
    assert_memory_equal(ts_get_binary(o, I_BLOB, &size), "abc", 3);
    assert_int_equal(size, 3);
    coffer_object_release(o);
    check_item(r, item(env), 5, 5, big);
    assert_status(coffer_object_get(r, item(env), 7, &o), COFFER_ERR_NOT_FOUND);
    assert_int_equal(ts_count(r, item(env)), 9);
    coffer_txn_free(r);
    if (env->mode != TS_MEMORY) {
        ts_env_close(env);
        int clusters, outside;
        raw_census(env->path, &clusters, &outside);
        assert_int_equal(clusters, 1);
        assert_int_equal(outside, 1); /* 5's */
        ts_env_reopen(env, schema, 1, 1);
    }
    assert_int_equal(verify_findings(env, COFFER_VERIFY_RECORD, NULL), 0);
}

/* ---- deletes that empty a cluster ---------------------------------------- */

TS_ENV_TEST(test_emptied_cluster_is_removed)
{
    fill(env, 600); /* clusters 0, 1 and 2 */
    coffer_txn *w = ts_begin(env->db, COFFER_TXN_WRITE);
    for (coffer_object_key k = 256; k < 512; k++) {
        coffer_object *o = NULL;
        assert_ok(coffer_object_get(w, item(env), k, &o));
        assert_ok(coffer_object_delete(o));
        coffer_object_release(o);
    }
    coffer_object_key *keys = NULL;
    assert_int_equal(ts_collect_keys(ts_iterate(w, item(env)), &keys), 600 - 256);
    assert_int_equal(keys[254], 255);
    assert_int_equal(keys[255], 512);
    free(keys);
    ts_commit(w);
    coffer_txn *r = ts_begin(env->db, COFFER_TXN_READ);
    assert_int_equal(ts_count(r, item(env)), 600 - 256);
    check_item(r, item(env), 255, 255, 0);
    check_item(r, item(env), 512, 512, 0);
    coffer_txn_free(r);
    /* A new object takes a new key, above every key ever used. */
    w = ts_begin(env->db, COFFER_TXN_WRITE);
    assert_int_equal(add_item(w, item(env), 601, 0), 601);
    ts_commit(w);
    if (env->mode != TS_MEMORY) {
        ts_env_close(env);
        int clusters, outside;
        raw_census(env->path, &clusters, &outside);
        assert_int_equal(clusters, 2);
        ts_env_reopen(env, schema, 1, 1);
    }
    /* Clearing the class empties the table and its count. */
    w = ts_begin(env->db, COFFER_TXN_WRITE);
    assert_ok(coffer_class_clear(w, item(env)));
    assert_int_equal(ts_count(w, item(env)), 0);
    assert_int_equal(add_item(w, item(env), 1, 0), 602);
    ts_commit(w);
    r = ts_begin(env->db, COFFER_TXN_READ);
    assert_int_equal(ts_count(r, item(env)), 1);
    check_item(r, item(env), 602, 1, 0);
    coffer_txn_free(r);
}

/* ---- aborts -------------------------------------------------------------- */

TS_ENV_TEST(test_abort_after_changing_clusters)
{
    fill(env, 400);
    long long size_before = env->mode == TS_MEMORY ? 0 : ts_file_size(env->path);
    coffer_txn *w = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_object *o = NULL;
    for (coffer_object_key k = 1; k <= 400; k += 3) { /* update every third, delete the next */
        assert_ok(coffer_object_get(w, item(env), k, &o));
        coffer_value v = coffer_value_int(-(int64_t)k);
        assert_ok(coffer_object_set_value(o, I_N, &v));
        coffer_object_release(o);
        if (k + 1 <= 400) {
            assert_ok(coffer_object_get(w, item(env), k + 1, &o));
            assert_ok(coffer_object_delete(o));
            coffer_object_release(o);
        }
    }
    for (int i = 0; i < 300; i++)
        add_item(w, item(env), 1000 + i, i % 50 == 0 ? 5000 : 0);
    assert_int_equal(ts_count(w, item(env)), 400 - 133 + 300); /* 134 updated, 133 deleted (not 401) */
    assert_ok(coffer_object_get(w, item(env), 1, &o));
    assert_int_equal(ts_get_int(o, I_N), -1);
    coffer_object_release(o);
    assert_ok(coffer_txn_abort(w));
    coffer_txn_free(w);

    coffer_txn *r = ts_begin(env->db, COFFER_TXN_READ);
    assert_int_equal(ts_count(r, item(env)), 400);
    for (coffer_object_key k = 1; k <= 400; k++)
        check_item(r, item(env), k, (int64_t)k, 0);
    assert_status(coffer_object_get(r, item(env), 401, &o), COFFER_ERR_NOT_FOUND);
    coffer_txn_free(r);
    /* The next transaction starts from the committed clusters. */
    w = ts_begin(env->db, COFFER_TXN_WRITE);
    assert_int_equal(add_item(w, item(env), 401, 0), 401);
    ts_commit(w);
    r = ts_begin(env->db, COFFER_TXN_READ);
    check_item(r, item(env), 401, 401, 0);
    check_item(r, item(env), 2, 2, 0);
    coffer_txn_free(r);
    if (env->mode != TS_MEMORY)
        assert_true(ts_file_size(env->path) >= size_before);
}

/* ---- damage -------------------------------------------------------------- */

TS_ENV_TEST(test_damaged_cluster_is_detected)
{
    fill(env, 300);
    ts_env_close(env);
    uint8_t kb[8];
    cluster_key(kb, 1);
    flip(env->path, kb, 8, 40); /* inside cluster 1 (keys 256..300) */
    ts_env_reopen(env, schema, 1, 1);
    coffer_status want = env->mode == TS_ENCRYPTED ? COFFER_ERR_INTEGRITY : COFFER_ERR_CORRUPTED;
    coffer_txn *r = ts_begin(env->db, COFFER_TXN_READ);
    coffer_object *o = NULL;
    assert_status(coffer_object_get(r, item(env), 260, &o), want);
    assert_error_contains("objects 256 to 511 of class 'Item'");
    assert_error_contains(env->mode == TS_ENCRYPTED ? "cluster" : "checksum");
    check_item(r, item(env), 255, 255, 0); /* the other cluster reads */
    coffer_txn_free(r);
    assert_true(verify_findings(env, COFFER_VERIFY_RECORD, "objects 256 to 511") >= 1);
}

TS_ENV_TEST(test_moved_cluster_is_detected)
{
    fill(env, 300);
    ts_env_close(env);
    /* Cluster 0's value stored under cluster 1's key: bound to its place. */
    ts_raw w;
    MDB_dbi dbi = ts_raw_open(&w, env->path, ITEM_OBJECTS);
    uint8_t k0[8], k1[8];
    cluster_key(k0, 0);
    cluster_key(k1, 1);
    MDB_val a = {8, k0}, b = {8, k1}, v;
    assert_int_equal(mdb_get(w.txn, dbi, &a, &v), 0);
    uint8_t *copy = malloc(v.mv_size);
    memcpy(copy, v.mv_data, v.mv_size);
    MDB_val nv = {v.mv_size, copy};
    assert_int_equal(mdb_put(w.txn, dbi, &b, &nv, 0), 0);
    free(copy);
    ts_raw_end(&w, 1);
    ts_env_reopen(env, schema, 1, 1);
    coffer_txn *r = ts_begin(env->db, COFFER_TXN_READ);
    coffer_object *o = NULL;
    assert_status(coffer_object_get(r, item(env), 256, &o),
                  env->mode == TS_ENCRYPTED ? COFFER_ERR_INTEGRITY : COFFER_ERR_CORRUPTED);
    assert_error_contains("objects 256 to 511");
    check_item(r, item(env), 1, 1, 0);
    coffer_txn_free(r);
}

/* Where the block of column `col` of cluster `cid` lies: the LMDB key of
 * the value holding it (kb, klen: its own key in a cluster of version 4),
 * and its offset and stored size (with its checksum or seal) there. */
static void block_place(const ts_env *env, uint64_t cid, uint16_t col, uint8_t kb[CF_BLOCK_KEY_SIZE], size_t *klen,
                        size_t *at, size_t *len)
{
    coffer_txn *r = ts_begin(env->db, COFFER_TXN_READ);
    cluster_key(kb, cid);
    MDB_val k = {8, kb}, v;
    assert_int_equal(mdb_get(r->mdb, r->db->object_dbis[item(env)], &k, &v), 0);
    uint8_t *buf = NULL;
    size_t cap = 0;
    cf_cluster c;
    assert_ok(cf_cluster_open_head(r, 2 * r->db->schema->classes[item(env)].table, cid, &v, &buf, &cap, &c));
    assert_true(col < c.ncols);
    size_t start = col ? (size_t)cf_get_le(c.dir + (size_t)(col - 1) * 4, 4) : 0;
    size_t end = (size_t)cf_get_le(c.dir + (size_t)col * 4, 4);
    *len = end - start + c.overhead;
    if (c.apart) {
        cf_cluster_block_key(kb, col, cid);
        *klen = CF_BLOCK_KEY_SIZE;
        *at = 0;
    } else {
        *klen = 8;
        *at = (size_t)(c.blocks - (const uint8_t *)v.mv_data) + start + (size_t)col * c.overhead;
    }
    free(buf);
    coffer_txn_free(r);
}

/* Reads property `prop` of object `key`: its status. */
static coffer_status read_prop(coffer_txn *r, coffer_class_id cls, coffer_object_key key, coffer_property_id prop)
{
    coffer_object *o = NULL;
    assert_ok(coffer_object_get(r, cls, key, &o));
    coffer_value v;
    coffer_status st = coffer_object_get_value(o, prop, &v);
    coffer_object_release(o);
    return st;
}

/* Column blocks of every kind: fixed-width (n), offsets (name), all null
 * (blob). A damaged one fails when its column is read, and only then. */
TS_ENV_TEST(test_damaged_block_fails_alone)
{
    fill(env, 300);
    size_t at[3], len[3], klen[3];
    uint8_t kb[3][CF_BLOCK_KEY_SIZE];
    for (uint16_t col = 0; col < 3; col++)
        block_place(env, 1, col, kb[col], &klen[col], &at[col], &len[col]);
    coffer_status want = env->mode == TS_ENCRYPTED ? COFFER_ERR_INTEGRITY : COFFER_ERR_CORRUPTED;
    for (coffer_property_id bad = 0; bad < 3; bad++) {
        ts_env_close(env);
        flip(env->path, kb[bad], klen[bad], (long)(at[bad] + len[bad] / 2));
        ts_env_reopen(env, schema, 1, 1);
        coffer_txn *r = ts_begin(env->db, COFFER_TXN_READ);
        for (coffer_property_id p = 0; p < 3; p++) {
            if (p != bad) {
                assert_ok(read_prop(r, item(env), 260, p));
                continue;
            }
            assert_status(read_prop(r, item(env), 260, p), want);
            assert_error_contains("objects 256 to 511 of class 'Item'");
            assert_error_contains(env->mode == TS_ENCRYPTED ? "column" : "checksum");
        }
        check_item(r, item(env), 255, 255, 0); /* the other cluster reads */
        coffer_txn_free(r);
        assert_true(verify_findings(env, COFFER_VERIFY_RECORD, "objects 256 to 511") >= 1);
        ts_env_close(env);
        flip(env->path, kb[bad], klen[bad], (long)(at[bad] + len[bad] / 2)); /* repaired: the next kind */
        ts_env_reopen(env, schema, 1, 1);
        r = ts_begin(env->db, COFFER_TXN_READ);
        check_item(r, item(env), 260, 260, 0);
        coffer_txn_free(r);
    }
}

/* Updates in place (docs/FORMAT.md, "Updates in place") open and check only
 * the blocks of the columns they change, and the commit copies the other
 * blocks as stored: an update of a sound column of a cluster with a
 * damaged block commits, and the damage stays where it was, still
 * detected; an update of the damaged column fails, naming the objects,
 * and leaves the file as it was. */
TS_ENV_TEST(test_damaged_block_and_updates_in_place)
{
    fill(env, 300);
    size_t at, len, klen;
    uint8_t kb[CF_BLOCK_KEY_SIZE];
    block_place(env, 1, I_NAME, kb, &klen, &at, &len);
    coffer_status want = env->mode == TS_ENCRYPTED ? COFFER_ERR_INTEGRITY : COFFER_ERR_CORRUPTED;
    ts_env_close(env);
    flip(env->path, kb, klen, (long)(at + len / 2));
    ts_env_reopen(env, schema, 1, 1);

    coffer_txn *w = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_object *o = NULL;
    assert_ok(coffer_object_get(w, item(env), 260, &o));
    coffer_value n = coffer_value_int(460); /* within the range of the narrowed column (256..511): in place */
    assert_ok(coffer_object_set_value(o, I_N, &n));
    coffer_object_release(o);
    ts_commit(w);

    coffer_txn *r = ts_begin(env->db, COFFER_TXN_READ);
    assert_status(read_prop(r, item(env), 261, I_NAME), want);
    assert_error_contains("objects 256 to 511 of class 'Item'");
    assert_ok(coffer_object_get(r, item(env), 260, &o));
    assert_int_equal(ts_get_int(o, I_N), 460);
    coffer_object_release(o);
    coffer_txn_free(r);
    assert_true(verify_findings(env, COFFER_VERIFY_RECORD, "objects 256 to 511") >= 1);

    w = ts_begin(env->db, COFFER_TXN_WRITE);
    assert_ok(coffer_object_get(w, item(env), 261, &o));
    coffer_value name = ts_str("itex 261"); /* the size of "item 261": in place */
    assert_status(coffer_object_set_value(o, I_NAME, &name), want);
    assert_error_contains("objects 256 to 511 of class 'Item'");
    coffer_object_release(o);
    assert_ok(coffer_txn_abort(w));
    coffer_txn_free(w);

    ts_env_close(env);
    flip(env->path, kb, klen, (long)(at + len / 2)); /* repaired where it was */
    ts_env_reopen(env, schema, 1, 1);
    r = ts_begin(env->db, COFFER_TXN_READ);
    assert_ok(coffer_object_get(r, item(env), 260, &o));
    assert_int_equal(ts_get_int(o, I_N), 460);
    assert_string_equal(ts_get_string(o, I_NAME, NULL), "item 260");
    coffer_object_release(o);
    for (coffer_object_key k = 1; k <= 300; k++)
        if (k != 260)
            check_item(r, item(env), k, (int64_t)k, 0);
    coffer_txn_free(r);
    assert_int_equal(verify_findings(env, COFFER_VERIFY_RECORD, ""), 0);
}

/* An unindexed query tests a cluster's column block as a whole: a damaged
 * block of the compared column fails the query with the cluster's objects
 * named; a query on another column still runs. */
TS_ENV_TEST(test_damaged_block_fails_a_scan)
{
    fill(env, 300);
    size_t at, len, klen;
    uint8_t kb[CF_BLOCK_KEY_SIZE];
    block_place(env, 1, I_NAME, kb, &klen, &at, &len);
    ts_env_close(env);
    flip(env->path, kb, klen, (long)(at + len / 2));
    ts_env_reopen(env, schema, 1, 1);
    coffer_txn *r = ts_begin(env->db, COFFER_TXN_READ);
    coffer_query *q;
    uint64_t n;
    assert_ok(coffer_query_compile(env->db, item(env), "name CONTAINS 'item 2'", SIZE_MAX, NULL, 0, &q));
    assert_status(coffer_query_count(r, q, &n), env->mode == TS_ENCRYPTED ? COFFER_ERR_INTEGRITY : COFFER_ERR_CORRUPTED);
    assert_error_contains("objects 256 to 511 of class 'Item'");
    coffer_query_free(q);
    assert_ok(coffer_query_compile(env->db, item(env), "blob == nil AND n > 100", SIZE_MAX, NULL, 0, &q));
    assert_ok(coffer_query_count(r, q, &n));
    assert_int_equal(n, 200);
    coffer_query_free(q);
    coffer_txn_free(r);
}

/* Swaps `len` bytes at `at_a` of the value under key ka with those at
 * `at_b` of the value under key kb. */
static void swap_bytes(const char *path, const uint8_t *ka, size_t kla, size_t at_a, const uint8_t *kb, size_t klb,
                       size_t at_b, size_t len)
{
    ts_raw w;
    MDB_dbi dbi = ts_raw_open(&w, path, ITEM_OBJECTS);
    MDB_val k1 = {kla, (void *)ka}, k2 = {klb, (void *)kb}, v1, v2;
    assert_int_equal(mdb_get(w.txn, dbi, &k1, &v1), 0);
    assert_int_equal(mdb_get(w.txn, dbi, &k2, &v2), 0);
    uint8_t *c1 = malloc(v1.mv_size), *c2 = malloc(v2.mv_size);
    memcpy(c1, v1.mv_data, v1.mv_size);
    memcpy(c2, v2.mv_data, v2.mv_size);
    memcpy(c1 + at_a, (uint8_t *)v2.mv_data + at_b, len);
    memcpy(c2 + at_b, (uint8_t *)v1.mv_data + at_a, len);
    MDB_val n1 = {v1.mv_size, c1}, n2 = {v2.mv_size, c2};
    assert_int_equal(mdb_put(w.txn, dbi, &k1, &n1, 0), 0);
    assert_int_equal(mdb_put(w.txn, dbi, &k2, &n2, 0), 0);
    free(c1);
    free(c2);
    ts_raw_end(&w, 1);
}

/* Clusters 0 and 1 of the same shape (keys 1..255 and 256..510): their
 * number blocks and their all-null blob blocks, swapped whole, do not open. */
TS_ENV_TEST(test_block_swapped_between_clusters_fails)
{
    fill(env, 510);
    size_t at0[3], at1[3], len[3], len1, kl0[3], kl1[3];
    uint8_t k0[3][CF_BLOCK_KEY_SIZE], k1[3][CF_BLOCK_KEY_SIZE];
    for (uint16_t col = 0; col < 3; col += 2) {
        block_place(env, 0, col, k0[col], &kl0[col], &at0[col], &len[col]);
        block_place(env, 1, col, k1[col], &kl1[col], &at1[col], &len1);
        assert_int_equal(len1, len[col]);
    }
    ts_env_close(env);
    for (uint16_t col = 0; col < 3; col += 2)
        swap_bytes(env->path, k0[col], kl0[col], at0[col], k1[col], kl1[col], at1[col], len[col]);
    ts_env_reopen(env, schema, 1, 1);
    coffer_status want = env->mode == TS_ENCRYPTED ? COFFER_ERR_INTEGRITY : COFFER_ERR_CORRUPTED;
    coffer_txn *r = ts_begin(env->db, COFFER_TXN_READ);
    for (coffer_object_key key = 3; key <= 300; key += 297) {
        assert_status(read_prop(r, item(env), key, I_N), want);
        assert_status(read_prop(r, item(env), key, I_BLOB), want);
        assert_ok(read_prop(r, item(env), key, I_NAME));
    }
    coffer_txn_free(r);
}

/* A block opens only as its own column of its own cluster: not as another
 * column, not as the head, not as the same column of another cluster. */
TS_ENV_TEST(test_block_opens_only_in_its_place)
{
    fill(env, 300);
    size_t at, len, klen;
    uint8_t kb[CF_BLOCK_KEY_SIZE];
    block_place(env, 1, I_NAME, kb, &klen, &at, &len);
    coffer_txn *r = ts_begin(env->db, COFFER_TXN_READ);
    MDB_val k = {klen, kb}, v;
    assert_int_equal(mdb_get(r->mdb, r->db->object_dbis[item(env)], &k, &v), 0);
    uint32_t number = 2 * r->db->schema->classes[item(env)].table;
    const uint8_t *stored = (const uint8_t *)v.mv_data + at;
    coffer_status want = env->mode == TS_ENCRYPTED ? COFFER_ERR_INTEGRITY : COFFER_ERR_CORRUPTED;
    const uint8_t *data;
    size_t dlen, cap = 0;
    uint8_t *buf = NULL;
    assert_ok(cf_cluster_open_part(r, number, 1, I_NAME, stored, len, &data, &dlen, &buf, &cap));
    assert_int_equal(dlen + (env->mode == TS_ENCRYPTED ? 40 : 4), len);
    assert_status(cf_cluster_open_part(r, number, 1, I_N, stored, len, &data, &dlen, &buf, &cap), want);
    assert_status(cf_cluster_open_part(r, number, 1, CF_CLUSTER_HEAD_PART, stored, len, &data, &dlen, &buf, &cap), want);
    assert_status(cf_cluster_open_part(r, number, 0, I_NAME, stored, len, &data, &dlen, &buf, &cap), want);
    assert_status(cf_cluster_open_part(r, number + 2, 1, I_NAME, stored, len, &data, &dlen, &buf, &cap), want);
    free(buf);
    coffer_txn_free(r);
}

TS_ENV_TEST(test_damaged_object_stored_outside_is_detected)
{
    coffer_txn *w = ts_begin(env->db, COFFER_TXN_WRITE);
    add_item(w, item(env), 1, 0);
    add_item(w, item(env), 2, 4 * CF_CLUSTER_INLINE_MAX);
    ts_commit(w);
    ts_env_close(env);
    uint8_t kb[CF_EXTERNAL_KEY_SIZE];
    cf_cluster_external_key(kb, 2);
    flip(env->path, kb, sizeof kb, 100);
    ts_env_reopen(env, schema, 1, 1);
    coffer_txn *r = ts_begin(env->db, COFFER_TXN_READ);
    coffer_object *o = NULL;
    assert_status(coffer_object_get(r, item(env), 2, &o),
                  env->mode == TS_ENCRYPTED ? COFFER_ERR_INTEGRITY : COFFER_ERR_CORRUPTED);
    assert_error_contains("stored outside its cluster");
    check_item(r, item(env), 1, 1, 0);
    coffer_txn_free(r);
    assert_true(verify_findings(env, COFFER_VERIFY_RECORD, "stored outside") >= 1);
}

/* ---- random operations against a model ----------------------------------- */

#define MODEL_MAX 4000

typedef struct model {
    int64_t n[MODEL_MAX + 1]; /* by key; 0: absent */
    size_t blob[MODEL_MAX + 1];
    coffer_object_key next;
} model;

static void model_check(ts_env *env, const model *m)
{
    coffer_txn *r = ts_begin(env->db, COFFER_TXN_READ);
    uint64_t count = 0;
    for (coffer_object_key k = 1; k < m->next; k++) {
        if (!m->n[k]) {
            coffer_object *o = NULL;
            assert_status(coffer_object_get(r, item(env), k, &o), COFFER_ERR_NOT_FOUND);
            continue;
        }
        check_item(r, item(env), k, m->n[k], m->blob[k]);
        count++;
    }
    assert_int_equal(ts_count(r, item(env)), count);
    coffer_object_key *keys = NULL;
    size_t got = ts_collect_keys(ts_iterate(r, item(env)), &keys);
    assert_int_equal(got, count);
    size_t i = 0;
    for (coffer_object_key k = 1; k < m->next; k++)
        if (m->n[k])
            assert_int_equal(keys[i++], k);
    free(keys);
    coffer_txn_free(r);
}

TS_ENV_TEST(test_random_operations_match_a_model)
{
    static model m;
    memset(&m, 0, sizeof m);
    m.next = 1;
    ts_seed(0xC1u + (uint64_t)env->mode);
    for (int round = 0; round < 120; round++) {
        static model before;
        before = m;
        int abort_it = ts_rand_below(8) == 0;
        coffer_txn *w = ts_begin(env->db, COFFER_TXN_WRITE);
        int ops = 1 + (int)ts_rand_below(60);
        for (int op = 0; op < ops; op++) {
            uint64_t what = ts_rand_below(10);
            coffer_object_key k = m.next > 1 ? 1 + ts_rand_below(m.next - 1) : 0;
            if (what < 5 || !k || !m.n[k]) {
                if (m.next > MODEL_MAX)
                    continue;
                int64_t n = (int64_t)ts_rand_below(1u << 30) + 1;
                size_t blob = ts_rand_below(20) == 0 ? CF_CLUSTER_INLINE_MAX + ts_rand_below(3000) : ts_rand_below(4) ? 0 : ts_rand_below(200) + 1;
                assert_int_equal(add_item(w, item(env), n, blob), m.next);
                m.n[m.next] = n;
                m.blob[m.next] = blob;
                m.next++;
            } else if (what < 8) {
                coffer_object *o = NULL;
                assert_ok(coffer_object_get(w, item(env), k, &o));
                int64_t n = (int64_t)ts_rand_below(1u << 30) + 1;
                char name[32];
                name_of(n, name, sizeof name);
                coffer_value vn = coffer_value_int(n), vs = ts_str(name);
                assert_ok(coffer_object_set_value(o, I_N, &vn));
                assert_ok(coffer_object_set_value(o, I_NAME, &vs));
                if (m.blob[k]) { /* the blob's bytes follow n's low byte */
                    uint8_t *bytes = malloc(m.blob[k]);
                    memset(bytes, (int)(n & 0xFF), m.blob[k]);
                    coffer_value vb = coffer_value_binary(bytes, m.blob[k]);
                    assert_ok(coffer_object_set_value(o, I_BLOB, &vb));
                    free(bytes);
                }
                coffer_object_release(o);
                m.n[k] = n;
            } else {
                coffer_object *o = NULL;
                assert_ok(coffer_object_get(w, item(env), k, &o));
                assert_ok(coffer_object_delete(o));
                coffer_object_release(o);
                m.n[k] = 0;
                m.blob[k] = 0;
            }
        }
        if (abort_it) {
            assert_ok(coffer_txn_abort(w));
            coffer_txn_free(w);
            coffer_object_key next = m.next; /* keys taken by an abort are not reused, nor needed */
            m = before;
            (void)next;
        } else {
            ts_commit(w);
        }
        if (round % 10 == 9)
            model_check(env, &m);
    }
    model_check(env, &m);
    if (env->mode != TS_MEMORY) {
        ts_env_reopen(env, schema, 1, 1);
        model_check(env, &m);
    }
    assert_int_equal(verify_findings(env, COFFER_VERIFY_RECORD, NULL), 0);
}

/* ---- choosing the format ------------------------------------------------- */

static unsigned raw_format(const char *path)
{
    ts_raw w;
    MDB_dbi dbi = ts_raw_open(&w, path, "0");
    MDB_val k = {6, (void *)"header"}, v;
    assert_int_equal(mdb_get(w.txn, dbi, &k, &v), 0);
    const uint8_t *h = v.mv_data;
    unsigned f = (unsigned)h[8] | (unsigned)h[9] << 8;
    ts_raw_end(&w, 0);
    return f;
}

TS_ENV_TEST(test_format_is_chosen_for_new_files_only)
{
    coffer_config *cfg = NULL;
    assert_ok(coffer_config_new(&cfg));
    assert_status(coffer_config_set_storage_format(cfg, 3), COFFER_ERR_INVALID_ARGUMENT);
    assert_error_contains("format 3");
    assert_status(coffer_config_set_storage_format(NULL, 5), COFFER_ERR_INVALID_ARGUMENT);
    assert_error_contains("config is NULL");
    coffer_config_free(cfg);

    fill(env, 3);
    ts_env_close(env);
    assert_int_equal(raw_format(env->path), 5);
    /* A file of format 4 stays format 4 for a handle that asks for records,
     * and read-only; a read-write handle that asks for clusters upgrades it
     * (test_upgrade_clusters.c checks what it keeps); a file of format 5 is
     * never turned back into records. */
    char path4[TS_PATH_MAX];
    ts_join(path4, env->dir, "records.coffer");
    cfg = ts_config_at(path4);
    assert_ok(coffer_config_set_storage_format(cfg, COFFER_STORAGE_FORMAT_RECORDS));
    assert_ok(coffer_config_set_schema(cfg, schema, 1, 1));
    coffer_db *db = NULL;
    assert_ok(coffer_open(cfg, &db));
    coffer_txn *w = ts_begin(db, COFFER_TXN_WRITE);
    add_item(w, ts_class(db, "Item"), 1, 0);
    ts_commit(w);
    coffer_close(db);
    assert_ok(coffer_open(cfg, &db));
    coffer_close(db);
    assert_int_equal(raw_format(path4), 4);
    assert_ok(coffer_config_set_storage_format(cfg, COFFER_STORAGE_FORMAT_CLUSTERS));
    assert_ok(coffer_config_set_read_only(cfg, 1));
    assert_ok(coffer_open(cfg, &db));
    coffer_close(db);
    assert_int_equal(raw_format(path4), 4);
    assert_ok(coffer_config_set_read_only(cfg, 0));
    assert_ok(coffer_open(cfg, &db));
    assert_int_equal(raw_format(path4), 5);
    w = ts_begin(db, COFFER_TXN_WRITE);
    add_item(w, ts_class(db, "Item"), 2, 0);
    ts_commit(w);
    assert_int_equal(ts_count_of(db, "Item"), 2);
    coffer_close(db);
    assert_ok(coffer_config_set_storage_format(cfg, COFFER_STORAGE_FORMAT_RECORDS));
    assert_ok(coffer_open(cfg, &db));
    coffer_close(db);
    coffer_config_free(cfg);
    assert_int_equal(raw_format(path4), 5);
    ts_env_reopen(env, schema, 1, 1);
}

int main(void)
{
    setenv("COFFER_TEST_STORAGE_FORMAT", "5", 1); /* every file of this suite: clusters */
    const struct CMUnitTest tests[] = {
        TS_TEST_ALL_MODES_SETUP(test_cluster_boundaries, setup),
        TS_TEST_ALL_MODES_SETUP(test_large_objects_are_stored_outside, setup),
        TS_TEST_ALL_MODES_SETUP(test_emptied_cluster_is_removed, setup),
        TS_TEST_ALL_MODES_SETUP(test_abort_after_changing_clusters, setup),
        TS_TEST_FILE_MODES_SETUP(test_damaged_cluster_is_detected, setup),
        TS_TEST_FILE_MODES_SETUP(test_moved_cluster_is_detected, setup),
        TS_TEST_FILE_MODES_SETUP(test_damaged_object_stored_outside_is_detected, setup),
        TS_TEST_FILE_MODES_SETUP(test_damaged_block_fails_alone, setup),
        TS_TEST_FILE_MODES_SETUP(test_damaged_block_fails_a_scan, setup),
        TS_TEST_FILE_MODES_SETUP(test_damaged_block_and_updates_in_place, setup),
        TS_TEST_FILE_MODES_SETUP(test_block_swapped_between_clusters_fails, setup),
        TS_TEST_FILE_MODES_SETUP(test_block_opens_only_in_its_place, setup),
        TS_TEST_ALL_MODES_SETUP(test_random_operations_match_a_model, setup),
        TS_TEST_MODE_SETUP(test_format_is_chosen_for_new_files_only, setup, ts_mode_plain, "plain"),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
