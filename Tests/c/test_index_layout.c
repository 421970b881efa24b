/*
 * test_index_layout.c — the index as plain keys: many objects per value
 * (entries of one value across several pages), null and long-string values,
 * changes and rollbacks keeping the index exact; files of older formats:
 * format 2 (duplicate-sorted indexes) rewritten on the first read-write
 * open, format 1 (format 3's layout: today's without checksums) read as it
 * is; both brought to format 4 (checksummed values in plain files).
 */
#include <lmdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_support.h"

enum { ITEM_ID = 0, ITEM_TAG, ITEM_LABEL, ITEM_COUNT };

static const coffer_property_schema item_properties[ITEM_COUNT] = {
    {.name = "id", .type = COFFER_TYPE_INT, .flags = COFFER_PROPERTY_PRIMARY_KEY},
    {.name = "tag", .type = COFFER_TYPE_INT, .flags = COFFER_PROPERTY_INDEXED},
    {.name = "label", .type = COFFER_TYPE_STRING, .flags = COFFER_PROPERTY_INDEXED | COFFER_PROPERTY_OPTIONAL},
};
static const coffer_class_schema item_schema[] = {
    {.name = "Item", .properties = item_properties, .property_count = ITEM_COUNT},
};

/* 1,500 objects: tag i % 2 (750 per value, more than the 512 object keys
 * of one page), a label null for every fifth, a 450-byte label (a long,
 * hashed index key) sharing its first 400 bytes for every seventh. */
#define ITEMS 1500
#define LONG_LABEL_SIZE 450

static void long_label(int64_t id, char *out)
{
    memset(out, 'x', LONG_LABEL_SIZE);
    snprintf(out + 400, LONG_LABEL_SIZE - 400 + 1, "%050lld", (long long)id);
}

static coffer_value label_of(int64_t id, char *buf)
{
    if (id % 5 == 0)
        return coffer_value_null();
    if (id % 7 == 0) {
        long_label(id, buf);
        return coffer_value_string(buf, LONG_LABEL_SIZE);
    }
    snprintf(buf, 32, "label %lld", (long long)(id % 10));
    return coffer_value_string(buf, SIZE_MAX);
}

static void add_items(coffer_db *db)
{
    coffer_class_id item = ts_class(db, "Item");
    coffer_txn *w = ts_begin(db, COFFER_TXN_WRITE);
    for (int64_t id = 0; id < ITEMS; id++) {
        char buf[LONG_LABEL_SIZE + 1];
        coffer_field f[ITEM_COUNT] = {ts_field(ITEM_ID, coffer_value_int(id)), ts_field(ITEM_TAG, coffer_value_int(id % 2)),
                                      ts_field(ITEM_LABEL, label_of(id, buf))};
        coffer_object *obj;
        assert_ok(coffer_object_create(w, item, f, ITEM_COUNT, COFFER_UPDATE_ERROR, &obj));
        coffer_object_release(obj);
    }
    ts_commit(w);
}

static int setup(void **state) { return ts_setup_schema(state, item_schema, 1); }

/* The number of objects `text` (with one argument, or none) matches. */
static uint64_t count_query(coffer_db *db, coffer_txn *txn, const char *text, const coffer_value *arg)
{
    coffer_query *q;
    coffer_results *r;
    uint64_t n;
    assert_ok(coffer_query_compile(db, ts_class(db, "Item"), text, SIZE_MAX, arg, arg ? 1 : 0, &q));
    assert_ok(coffer_query_run(txn, q, &r));
    assert_ok(coffer_results_count(r, &n));
    coffer_results_free(r);
    coffer_query_free(q);
    return n;
}

/* Checks what every kind of index lookup gives on the items of add_items,
 * where `removed` ids (if any) have been deleted. */
static void check_items(coffer_db *db, int (*removed)(int64_t id))
{
    coffer_txn *r = ts_begin(db, COFFER_TXN_READ);
    coffer_class_id item = ts_class(db, "Item");
    uint64_t tag1 = 0, tag0 = 0, nulls = 0, longs = 0, label3 = 0;
    for (int64_t id = 0; id < ITEMS; id++) {
        if (removed && removed(id))
            continue;
        if (id % 2)
            tag1++;
        else
            tag0++;
        nulls += id % 5 == 0;
        longs += id % 5 != 0 && id % 7 == 0;
        label3 += id % 5 != 0 && id % 7 != 0 && id % 10 == 3;
    }
    coffer_value one = coffer_value_int(1);
    assert_int_equal(count_query(db, r, "tag == $0", &one), tag1);
    assert_int_equal(count_query(db, r, "tag == 0", NULL), tag0);
    assert_int_equal(count_query(db, r, "tag IN {0, 1}", NULL), tag0 + tag1);
    assert_int_equal(count_query(db, r, "tag > 0", NULL), tag1);
    assert_int_equal(count_query(db, r, "tag BETWEEN {0, 0}", NULL), tag0);
    assert_int_equal(count_query(db, r, "label == nil", NULL), nulls);
    assert_int_equal(count_query(db, r, "label == 'label 3'", NULL), label3);
    assert_int_equal(count_query(db, r, "label BEGINSWITH 'xxxx'", NULL), longs);
    assert_int_equal(count_query(db, r, "tag == 1 AND label == 'label 3'", NULL), label3);

    /* The objects of one value come in key order, each with that value. */
    coffer_query *q;
    coffer_results *res;
    uint64_t n;
    assert_ok(coffer_query_compile(db, item, "tag == 1", SIZE_MAX, NULL, 0, &q));
    assert_ok(coffer_query_run(r, q, &res));
    assert_ok(coffer_results_count(res, &n));
    coffer_object_key last = 0;
    for (uint64_t i = 0; i < n; i++) {
        coffer_object_key k;
        coffer_object *obj;
        assert_ok(coffer_results_key(res, i, &k));
        assert_true(i == 0 || k > last);
        last = k;
        assert_ok(coffer_results_get(res, i, &obj));
        assert_int_equal(ts_get_int(obj, ITEM_TAG), 1);
        coffer_object_release(obj);
    }
    coffer_results_free(res);
    coffer_query_free(q);

    /* Every object by primary key, long labels by their whole value. */
    for (int64_t id = 0; id < ITEMS; id++) {
        coffer_value pk = coffer_value_int(id);
        coffer_object *obj = NULL;
        coffer_status st = coffer_object_find(r, item, &pk, &obj);
        if (removed && removed(id)) {
            assert_int_equal(st, COFFER_ERR_NOT_FOUND);
            continue;
        }
        assert_ok(st);
        assert_int_equal(ts_get_int(obj, ITEM_ID), id);
        coffer_object_release(obj);
        if (id % 5 != 0 && id % 7 == 0 && id < 100) {
            char buf[LONG_LABEL_SIZE + 1];
            coffer_value label = label_of(id, buf);
            assert_int_equal(count_query(db, r, "label == $0", &label), 1);
        }
    }
    coffer_txn_free(r);
}

static int every_third_odd(int64_t id) { return id % 2 == 1 && id % 3 == 0; }

TS_ENV_TEST(test_many_objects_per_value)
{
    add_items(env->db);
    check_items(env->db, NULL);

    /* A second object with an existing primary key is refused. */
    coffer_class_id item = ts_class(env->db, "Item");
    coffer_txn *w = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_field dup[2] = {ts_field(ITEM_ID, coffer_value_int(7)), ts_field(ITEM_TAG, coffer_value_int(0))};
    coffer_object *obj;
    assert_status(coffer_object_create(w, item, dup, 2, COFFER_UPDATE_ERROR, &obj), COFFER_ERR_PRIMARY_KEY_EXISTS);

    /* Deleting removes exactly the deleted objects from every index. */
    for (int64_t id = 0; id < ITEMS; id++)
        if (every_third_odd(id)) {
            coffer_value pk = coffer_value_int(id);
            assert_ok(coffer_object_find(w, item, &pk, &obj));
            assert_ok(coffer_object_delete(obj));
            coffer_object_release(obj);
        }
    ts_commit(w);
    check_items(env->db, every_third_odd);

    /* A change that is rolled back leaves the index as it was. */
    w = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_value pk = coffer_value_int(1), zero = coffer_value_int(0);
    assert_ok(coffer_object_find(w, item, &pk, &obj));
    assert_ok(coffer_object_set_value(obj, ITEM_TAG, &zero));
    coffer_object_release(obj);
    assert_ok(coffer_txn_abort(w));
    coffer_txn_free(w);
    check_items(env->db, every_third_odd);

    /* A committed change moves the object to its new value. */
    w = ts_begin(env->db, COFFER_TXN_WRITE);
    assert_ok(coffer_object_find(w, item, &pk, &obj));
    assert_ok(coffer_object_set_value(obj, ITEM_TAG, &zero));
    coffer_object_release(obj);
    ts_commit(w);
    coffer_txn *r = ts_begin(env->db, COFFER_TXN_READ);
    assert_int_equal(count_query(env->db, r, "tag == 0", NULL), ITEMS / 2 + 1);
    assert_int_equal(count_query(env->db, r, "tag == 0 AND id == 1", NULL), 1);
    coffer_txn_free(r);
}

/* ---- files of older formats --------------------------------------------- */

/* The raw LMDB environment of a closed database file. */
static MDB_env *open_raw(const char *path)
{
    MDB_env *menv;
    assert_int_equal(mdb_env_create(&menv), 0);
    assert_int_equal(mdb_env_set_maxdbs(menv, 16), 0);
    assert_int_equal(mdb_env_open(menv, path, MDB_NOSUBDIR, 0644), 0);
    return menv;
}

/* The index sub-database of the file's only class (table 1). */
#define ITEM_INDEX_DBI "3"

static uint32_t header_format(MDB_txn *txn, MDB_dbi meta)
{
    MDB_val k = {6, "header"}, v;
    assert_int_equal(mdb_get(txn, meta, &k, &v), 0);
    const uint8_t *h = v.mv_data;
    return (uint32_t)h[8] | (uint32_t)h[9] << 8 | (uint32_t)h[10] << 16 | (uint32_t)h[11] << 24;
}

static void set_header_format(MDB_txn *txn, MDB_dbi meta, uint32_t format)
{
    MDB_val k = {6, "header"}, v;
    assert_int_equal(mdb_get(txn, meta, &k, &v), 0);
    uint8_t h[64];
    assert_int_equal(v.mv_size, sizeof h);
    memcpy(h, v.mv_data, sizeof h);
    for (int i = 0; i < 4; i++)
        h[8 + i] = (uint8_t)(format >> (8 * i));
    v = (MDB_val){sizeof h, h};
    assert_int_equal(mdb_put(txn, meta, &k, &v, 0), 0);
}

/* Removes the 4-byte checksum that ends every value of sub-database `name`
 * (a plain file of format 4), but the header's: values as formats 1 to 3
 * wrote them. */
static void strip_checksums(MDB_txn *txn, const char *name)
{
    MDB_dbi dbi;
    if (mdb_dbi_open(txn, name, 0, &dbi) == MDB_NOTFOUND)
        return;
    MDB_cursor *cur;
    MDB_val k, v;
    assert_int_equal(mdb_cursor_open(txn, dbi, &cur), 0);
    size_t n = 0, cap = 4096;
    uint8_t(*keys)[512] = malloc(cap * sizeof *keys);
    size_t *sizes = malloc(cap * sizeof *sizes);
    assert_non_null(keys);
    assert_non_null(sizes);
    for (int rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); rc == 0; rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
        if (k.mv_size == 6 && memcmp(k.mv_data, "header", 6) == 0)
            continue;
        assert_true(n < cap);
        memcpy(keys[n], k.mv_data, k.mv_size);
        sizes[n++] = k.mv_size;
    }
    mdb_cursor_close(cur);
    for (size_t i = 0; i < n; i++) {
        k = (MDB_val){sizes[i], keys[i]};
        assert_int_equal(mdb_get(txn, dbi, &k, &v), 0);
        assert_true(v.mv_size >= 4);
        uint8_t *copy = malloc(v.mv_size);
        assert_non_null(copy);
        memcpy(copy, v.mv_data, v.mv_size);
        v = (MDB_val){v.mv_size - 4, copy};
        assert_int_equal(mdb_put(txn, dbi, &k, &v, 0), 0);
        free(copy);
    }
    free(keys);
    free(sizes);
}

/* Rewrites the file's header as format `format`, and a plain file's values
 * without their checksums; with `dupsort`, also its index as format 2 wrote
 * it: duplicate-sorted, key column || value, the object key as the
 * duplicate. With `damage`, a key too short to be an index key is added. */
static void rewrite_as(const char *path, int plain, uint32_t format, int dupsort, int damage)
{
    MDB_env *menv = open_raw(path);
    MDB_txn *txn;
    MDB_dbi meta, index;
    assert_int_equal(mdb_txn_begin(menv, NULL, 0, &txn), 0);
    assert_int_equal(mdb_dbi_open(txn, "0", 0, &meta), 0);
    assert_int_equal(mdb_dbi_open(txn, ITEM_INDEX_DBI, 0, &index), 0);
    unsigned flags;
    assert_int_equal(mdb_dbi_flags(txn, index, &flags), 0);
    assert_false(flags & MDB_DUPSORT);

    size_t n = 0, cap = 3 * ITEMS; /* three indexed properties */
    uint8_t (*keys)[512] = malloc(cap * sizeof *keys);
    size_t *sizes = malloc(cap * sizeof *sizes);
    assert_non_null(keys);
    assert_non_null(sizes);
    MDB_cursor *cur;
    MDB_val k, v;
    assert_int_equal(mdb_cursor_open(txn, index, &cur), 0);
    for (int rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); rc == 0; rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
        assert_true(n < cap);
        assert_int_equal(v.mv_size, 0);
        memcpy(keys[n], k.mv_data, k.mv_size);
        sizes[n++] = k.mv_size;
    }
    mdb_cursor_close(cur);
    assert_int_equal(n, cap);
    if (dupsort) {
        assert_int_equal(mdb_drop(txn, index, 1), 0);
        assert_int_equal(mdb_dbi_open(txn, ITEM_INDEX_DBI, MDB_CREATE | MDB_DUPSORT | MDB_DUPFIXED, &index), 0);
        for (size_t i = 0; i < n; i++) {
            k = (MDB_val){sizes[i] - 8, keys[i]};
            v = (MDB_val){8, keys[i] + sizes[i] - 8};
            assert_int_equal(mdb_put(txn, index, &k, &v, 0), 0);
        }
        if (damage) {
            k = (MDB_val){2, "\0\1"};
            v = (MDB_val){8, "12345678"};
            assert_int_equal(mdb_put(txn, index, &k, &v, 0), 0);
        }
    }
    if (plain) {
        strip_checksums(txn, "0");
        strip_checksums(txn, "1");
        strip_checksums(txn, "2");
    }
    set_header_format(txn, meta, format);
    assert_int_equal(mdb_txn_commit(txn), 0);
    mdb_env_close(menv);
    free(keys);
    free(sizes);
}

/* The header's format and whether the index is duplicate-sorted. */
static void raw_state(const char *path, uint32_t *format, int *dupsort)
{
    MDB_env *menv = open_raw(path);
    MDB_txn *txn;
    MDB_dbi meta, index;
    unsigned flags;
    assert_int_equal(mdb_txn_begin(menv, NULL, MDB_RDONLY, &txn), 0);
    assert_int_equal(mdb_dbi_open(txn, "0", 0, &meta), 0);
    assert_int_equal(mdb_dbi_open(txn, ITEM_INDEX_DBI, 0, &index), 0);
    assert_int_equal(mdb_dbi_flags(txn, index, &flags), 0);
    *format = header_format(txn, meta);
    *dupsort = (flags & MDB_DUPSORT) != 0;
    mdb_txn_abort(txn);
    mdb_env_close(menv);
}

/* The header's format and whether the index is duplicate-sorted match;
 * want_dupsort < 0 leaves the index flags unchecked. */
static void assert_layout(const char *path, uint32_t want_format, int want_dupsort)
{
    uint32_t format;
    int dupsort;
    raw_state(path, &format, &dupsort);
    assert_int_equal(format, want_format);
    if (want_dupsort >= 0)
        assert_int_equal(dupsort, want_dupsort);
}

/* A read-write open brings an older file to format 4 (no duplicate-sorted
 * index, checksummed values in plain files), and the items read as before. */
static void assert_reopen_upgrades(ts_env *env)
{
    ts_env_reopen(env, item_schema, 1, 1);
    check_items(env->db, NULL);
    ts_env_close(env);
    assert_layout(env->path, 4, 0);
}

TS_ENV_TEST(test_rewrite_format2)
{
    add_items(env->db);
    ts_env_close(env);
    assert_layout(env->path, 4, 0);
    rewrite_as(env->path, ts_mode_key(env->mode) == NULL, 2, 1, 0);
    assert_layout(env->path, 2, 1);

    /* Read-only, the file cannot be rewritten and is not read as it is. */
    coffer_db *db = NULL;
    assert_status(ts_open_path(env->path, ts_mode_key(env->mode), 1, item_schema, 1, 1, &db), COFFER_ERR_FORMAT_VERSION);
    assert_error_contains("file format 2");
    assert_error_contains("read-write");
    assert_layout(env->path, 2, -1);

    /* Read-write, it is rewritten in place and reads as before. */
    assert_reopen_upgrades(env);

    /* Once rewritten, read-only opens work. */
    assert_ok(ts_open_path(env->path, ts_mode_key(env->mode), 1, item_schema, 1, 1, &db));
    check_items(db, NULL);
    coffer_close(db);
}

TS_ENV_TEST(test_rewrite_damaged_index)
{
    add_items(env->db);
    ts_env_close(env);
    rewrite_as(env->path, ts_mode_key(env->mode) == NULL, 2, 1, 1);

    coffer_db *db = NULL;
    assert_status(ts_open_path(env->path, ts_mode_key(env->mode), 0, item_schema, 1, 1, &db), COFFER_ERR_CORRUPTED);
    assert_error_contains("upgrading");
    assert_error_contains("not a format-2 index entry");
    /* Nothing changed: still format 2, still duplicate-sorted. */
    assert_layout(env->path, 2, 1);
}

TS_ENV_TEST(test_format1_reads_as_is)
{
    add_items(env->db);
    ts_env_close(env);
    rewrite_as(env->path, ts_mode_key(env->mode) == NULL, 1, 0, 0);

    /* Format 1 has today's layout without checksums: read-only opens read it
     * unchanged. */
    coffer_db *db = NULL;
    assert_ok(ts_open_path(env->path, ts_mode_key(env->mode), 1, item_schema, 1, 1, &db));
    check_items(db, NULL);
    coffer_close(db);
    assert_layout(env->path, 1, -1);

    /* A read-write open brings it up to date. */
    assert_reopen_upgrades(env);
}

int main(void)
{
    /* Formats 1 to 3, which these files are turned into, are format 4's record
     * layout: the files start as format 4 (format 5's upgrade: test_upgrade_clusters.c). */
    ts_pin_storage_format(4);
    const struct CMUnitTest tests[] = {
        TS_TEST_ALL_MODES_SETUP(test_many_objects_per_value, setup),
        TS_TEST_FILE_MODES_SETUP(test_rewrite_format2, setup),
        TS_TEST_FILE_MODES_SETUP(test_rewrite_damaged_index, setup),
        TS_TEST_FILE_MODES_SETUP(test_format1_reads_as_is, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
