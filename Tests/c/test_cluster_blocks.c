/*
 * test_cluster_blocks.c — clusters of version 4, whose column blocks are
 * LMDB values of their own (docs/FORMAT.md, "Clusters (format 5)"), plain
 * and encrypted, through coffer.h and the raw file: an update of one
 * property writes that property's blocks and leaves the head and the other
 * blocks where they were (the same pages of the map, the same bytes); an
 * emptied cluster takes its blocks with it; a block that is missing, or
 * stored under another column's key, is an error naming the objects and
 * the column, and a coffer_verify finding; a head of a newer cluster
 * version than the library reads is a clear error.
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
#include "storage/txn.h"

#define ITEM_OBJECTS "2" /* the first class's object table */

/* Commits items 1..count (keys 1..count) with no blobs. */
static void fill(ts_env *env, int count)
{
    coffer_txn *w = ts_begin(env->db, COFFER_TXN_WRITE);
    for (int i = 1; i <= count; i++)
        assert_int_equal(add_item(w, item(env), i, 0), (coffer_object_key)i);
    ts_commit(w);
}

/* A stored value as a read transaction sees it: where LMDB maps it, and a
 * copy of its bytes. */
typedef struct seen {
    const void *at;
    uint8_t *bytes;
    size_t len;
} seen;

static void look(coffer_txn *r, coffer_class_id cls, const uint8_t *key, size_t klen, seen *out)
{
    MDB_val k = {klen, (void *)key}, v;
    assert_int_equal(mdb_get(r->mdb, r->db->object_dbis[cls], &k, &v), 0);
    out->at = v.mv_data;
    out->len = v.mv_size;
    out->bytes = malloc(v.mv_size);
    memcpy(out->bytes, v.mv_data, v.mv_size);
}

static int same(const seen *a, const seen *b)
{
    return a->at == b->at && a->len == b->len && memcmp(a->bytes, b->bytes, a->len) == 0;
}

/* The head and the three column blocks of cluster `cid`, as stored now. */
static void look_cluster(ts_env *env, uint64_t cid, seen out[4])
{
    coffer_txn *r = ts_begin(env->db, COFFER_TXN_READ);
    uint8_t kb[CF_BLOCK_KEY_SIZE];
    cf_put_be64(kb, cid);
    look(r, item(env), kb, 8, &out[0]);
    for (uint16_t col = 0; col < 3; col++) {
        cf_cluster_block_key(kb, col, cid);
        look(r, item(env), kb, sizeof kb, &out[1 + col]);
    }
    coffer_txn_free(r);
}

static void forget(seen s[4])
{
    for (int i = 0; i < 4; i++)
        free(s[i].bytes);
}

/* Sets `prop` of objects from..to (cluster 1, keys 256..511) in one
 * transaction: n to 767 - n (in place: within the narrowed block's range,
 * 256..511), or the name to one of the same length. */
static void update(ts_env *env, coffer_object_key from, coffer_object_key to, coffer_property_id prop)
{
    coffer_txn *w = ts_begin(env->db, COFFER_TXN_WRITE);
    for (coffer_object_key k = from; k <= to; k++) {
        coffer_object *o = NULL;
        assert_ok(coffer_object_get(w, item(env), k, &o));
        char name[32];
        snprintf(name, sizeof name, "itex %llu", (unsigned long long)k);
        coffer_value v = prop == I_N ? coffer_value_int(767 - (int64_t)k) : ts_str(name);
        assert_ok(coffer_object_set_value(o, prop, &v));
        coffer_object_release(o);
    }
    ts_commit(w);
}

/* Cluster 1 holds keys 256..511; its name block (about 2.3 KB) lies on
 * overflow pages of its own, so whether LMDB wrote it again shows in where
 * the map holds it. */
TS_ENV_TEST(test_update_writes_only_its_blocks)
{
    fill(env, 600);
    seen before[4], after[4];
    look_cluster(env, 1, before);
    update(env, 256, 511, I_N);
    look_cluster(env, 1, after);
    /* The head: as it was (its leaf page, shared with the numbers' blocks,
     * may be copied by LMDB, so only its bytes are compared). */
    assert_memory_equal(before[0].bytes, after[0].bytes, before[0].len);
    assert_true(same(&before[1 + I_NAME], &after[1 + I_NAME])); /* not written again */
    assert_memory_equal(before[1 + I_BLOB].bytes, after[1 + I_BLOB].bytes, before[1 + I_BLOB].len);
    assert_int_equal(before[1 + I_N].len, after[1 + I_N].len);
    assert_memory_not_equal(before[1 + I_N].bytes, after[1 + I_N].bytes, before[1 + I_N].len);
    forget(before);
    /* The other way round: the names written, the numbers' block as it was. */
    update(env, 256, 511, I_NAME);
    look_cluster(env, 1, before);
    assert_false(same(&after[1 + I_NAME], &before[1 + I_NAME]));
    assert_memory_equal(after[1 + I_N].bytes, before[1 + I_N].bytes, after[1 + I_N].len);
    assert_memory_equal(after[0].bytes, before[0].bytes, after[0].len);
    forget(before);
    forget(after);
    coffer_txn *r = ts_begin(env->db, COFFER_TXN_READ);
    for (coffer_object_key k = 250; k <= 520; k++) {
        coffer_object *o = NULL;
        assert_ok(coffer_object_get(r, item(env), k, &o));
        int moved = k >= 256 && k <= 511;
        assert_int_equal(ts_get_int(o, I_N), moved ? 767 - (int64_t)k : (int64_t)k);
        char name[32];
        snprintf(name, sizeof name, moved ? "itex %llu" : "item %llu", (unsigned long long)k);
        assert_string_equal(ts_get_string(o, I_NAME, NULL), name);
        coffer_object_release(o);
    }
    coffer_txn_free(r);
}

/* The keys of column blocks in the object table of a closed file. */
static int raw_blocks(const char *path)
{
    ts_raw w;
    MDB_dbi dbi = ts_raw_open(&w, path, ITEM_OBJECTS);
    MDB_cursor *cur;
    assert_int_equal(mdb_cursor_open(w.txn, dbi, &cur), 0);
    MDB_val k, v;
    int n = 0;
    for (int rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); rc == 0; rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT))
        n += k.mv_size == CF_BLOCK_KEY_SIZE && ((uint8_t *)k.mv_data)[0] == CF_BLOCK_PREFIX;
    mdb_cursor_close(cur);
    ts_raw_end(&w, 0);
    return n;
}

TS_ENV_TEST(test_emptied_cluster_takes_its_blocks)
{
    fill(env, 600); /* clusters 0, 1 and 2, three columns each */
    ts_env_close(env);
    assert_int_equal(raw_blocks(env->path), 9);
    ts_env_reopen(env, schema, 1, 1);
    coffer_txn *w = ts_begin(env->db, COFFER_TXN_WRITE);
    for (coffer_object_key k = 256; k < 512; k++) {
        coffer_object *o = NULL;
        assert_ok(coffer_object_get(w, item(env), k, &o));
        assert_ok(coffer_object_delete(o));
        coffer_object_release(o);
    }
    ts_commit(w);
    ts_env_close(env);
    assert_int_equal(raw_blocks(env->path), 6);
    ts_env_reopen(env, schema, 1, 1);
    w = ts_begin(env->db, COFFER_TXN_WRITE);
    assert_ok(coffer_class_clear(w, item(env)));
    assert_int_equal(add_item(w, item(env), 7, 0), 601);
    ts_commit(w);
    ts_env_close(env);
    assert_int_equal(raw_blocks(env->path), 3);
    ts_env_reopen(env, schema, 1, 1);
    coffer_txn *r = ts_begin(env->db, COFFER_TXN_READ);
    assert_int_equal(ts_count(r, item(env)), 1);
    check_item(r, item(env), 601, 7, 0);
    coffer_txn_free(r);
}

static size_t verify_findings(const ts_env *env, const char *needle)
{
    coffer_verify_report *r = NULL;
    assert_ok(coffer_db_verify(env->db, &r));
    size_t n = 0;
    for (size_t i = 0; i < coffer_verify_report_count(r); i++) {
        print_message("    finding: %s\n", coffer_verify_report_message(r, i));
        n += strstr(coffer_verify_report_message(r, i), needle) != NULL;
    }
    coffer_verify_report_free(r);
    return n;
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

TS_ENV_TEST(test_missing_block_is_detected)
{
    fill(env, 300);
    ts_env_close(env);
    ts_raw w;
    MDB_dbi dbi = ts_raw_open(&w, env->path, ITEM_OBJECTS);
    uint8_t kb[CF_BLOCK_KEY_SIZE];
    cf_cluster_block_key(kb, I_NAME, 1);
    MDB_val k = {sizeof kb, kb};
    assert_int_equal(mdb_del(w.txn, dbi, &k, NULL), 0);
    ts_raw_end(&w, 1);
    ts_env_reopen(env, schema, 1, 1);
    coffer_txn *r = ts_begin(env->db, COFFER_TXN_READ);
    assert_status(read_prop(r, item(env), 260, I_NAME), COFFER_ERR_CORRUPTED);
    assert_error_contains("objects 256 to 511 of class 'Item'");
    assert_error_contains("column 1 of the cluster is damaged: its block is missing");
    assert_ok(read_prop(r, item(env), 260, I_N)); /* the other columns read */
    check_item(r, item(env), 255, 255, 0);
    coffer_txn_free(r);
    assert_true(verify_findings(env, "objects 256 to 511") >= 1);
}

/* Column 0's block stored under column 2's key of the same cluster: of
 * another size than the head gives that block (COFFER_ERR_CORRUPTED), or,
 * were it of the same size, bound to column 0 by its checksum or seal. */
TS_ENV_TEST(test_block_under_another_columns_key_fails)
{
    fill(env, 300);
    ts_env_close(env);
    ts_raw w;
    MDB_dbi dbi = ts_raw_open(&w, env->path, ITEM_OBJECTS);
    uint8_t from[CF_BLOCK_KEY_SIZE], to[CF_BLOCK_KEY_SIZE];
    cf_cluster_block_key(from, I_N, 1);
    cf_cluster_block_key(to, I_BLOB, 1);
    MDB_val kf = {sizeof from, from}, kt = {sizeof to, to}, v;
    assert_int_equal(mdb_get(w.txn, dbi, &kf, &v), 0);
    uint8_t *copy = malloc(v.mv_size);
    memcpy(copy, v.mv_data, v.mv_size);
    MDB_val nv = {v.mv_size, copy};
    assert_int_equal(mdb_put(w.txn, dbi, &kt, &nv, 0), 0);
    free(copy);
    ts_raw_end(&w, 1);
    ts_env_reopen(env, schema, 1, 1);
    coffer_txn *r = ts_begin(env->db, COFFER_TXN_READ);
    assert_status(read_prop(r, item(env), 260, I_BLOB), COFFER_ERR_CORRUPTED);
    assert_error_contains("column 2 of the cluster is damaged: its block has");
    assert_error_contains("objects 256 to 511 of class 'Item'");
    assert_ok(read_prop(r, item(env), 260, I_N));
    coffer_txn_free(r);
}

/* A head that says version 5, stored as the library would store it (its
 * checksum or seal valid): COFFER_ERR_FORMAT_VERSION naming the version. */
TS_ENV_TEST(test_newer_cluster_version_is_refused)
{
    fill(env, 300);
    coffer_txn *w = ts_begin(env->db, COFFER_TXN_WRITE);
    uint8_t kb[8], pk[CF_CLUSTER_PART_KEY_SIZE];
    cf_put_be64(kb, 1);
    MDB_val k = {8, kb}, v;
    assert_int_equal(mdb_get(w->mdb, w->db->object_dbis[item(env)], &k, &v), 0);
    uint32_t number = 2 * w->db->schema->classes[item(env)].table;
    const uint8_t *head;
    size_t hlen, cap = 0;
    uint8_t *buf = NULL;
    size_t ovh = cf_store_overhead(w->db), stored_head = (size_t)cf_get_le(v.mv_data, 4);
    memcpy(pk, kb, 8);
    pk[8] = pk[9] = 0xFF;
    assert_ok(cf_cluster_open_part(w, number, 1, CF_CLUSTER_HEAD_PART, (const uint8_t *)v.mv_data + 4, stored_head + ovh,
                                   &head, &hlen, &buf, &cap));
    uint8_t *plain = malloc(hlen), *out = malloc(4 + hlen + ovh);
    memcpy(plain, head, hlen);
    plain[0] = CF_CLUSTER_VERSION + 1;
    memcpy(out, v.mv_data, 4);
    cf_store_wrap(w->db, number, pk, sizeof pk, out + 4, plain, hlen);
    MDB_val nv = {4 + hlen + ovh, out};
    assert_int_equal(mdb_put(w->mdb, w->db->object_dbis[item(env)], &k, &nv, 0), 0);
    ts_commit(w);
    free(plain);
    free(out);
    free(buf);
    coffer_txn *r = ts_begin(env->db, COFFER_TXN_READ);
    coffer_object *o = NULL;
    assert_status(coffer_object_get(r, item(env), 260, &o), COFFER_ERR_FORMAT_VERSION);
    assert_error_contains("cluster has version 5; this library reads versions 2 to 4");
    check_item(r, item(env), 255, 255, 0); /* the other cluster reads */
    coffer_txn_free(r);
}

int main(void)
{
    setenv("COFFER_TEST_STORAGE_FORMAT", "5", 1); /* every file of this suite: clusters */
    const struct CMUnitTest tests[] = {
        TS_TEST_FILE_MODES_SETUP(test_update_writes_only_its_blocks, setup),
        TS_TEST_FILE_MODES_SETUP(test_emptied_cluster_takes_its_blocks, setup),
        TS_TEST_FILE_MODES_SETUP(test_missing_block_is_detected, setup),
        TS_TEST_FILE_MODES_SETUP(test_block_under_another_columns_key_fails, setup),
        TS_TEST_ALL_MODES_SETUP(test_newer_cluster_version_is_refused, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
