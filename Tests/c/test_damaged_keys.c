/* test_damaged_keys.c — an object whose key was damaged in the file (its
 * record moved to another key, as a flipped bit in the key would leave it)
 * while indexes, links and backlinks still name the old key: every read
 * that follows one of those names reports COFFER_ERR_CORRUPTED, never "the
 * object was deleted" and never a silently shorter result. An object really
 * deleted still reads as not found. The moved record itself fails its
 * checksum, which is bound to its key. */
#include <lmdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_support.h"

enum { P_ID = 0, P_NAME, P_TAG, P_BEST, P_FANS, P_COUNT };

static const coffer_property_schema person_props[P_COUNT] = {
    {.name = "id", .type = COFFER_TYPE_INT, .flags = COFFER_PROPERTY_PRIMARY_KEY},
    {.name = "name", .type = COFFER_TYPE_STRING},
    {.name = "tag", .type = COFFER_TYPE_INT, .flags = COFFER_PROPERTY_INDEXED},
    {.name = "best", .type = COFFER_TYPE_LINK, .flags = COFFER_PROPERTY_OPTIONAL, .object_class = "Person"},
    {.name = "fans", .type = COFFER_TYPE_LINKING_OBJECTS, .object_class = "Person", .link_origin_property = "best"},
};

static const coffer_class_schema person_schema[] = {
    {.name = "Person", .properties = person_props, .property_count = P_COUNT},
};

/* The object sub-database of the file's only class (table 1). */
#define PERSON_OBJECTS_DBI "2"

static coffer_class_id PERSON;

static int setup(void **state)
{
    static const char *const names[] = {"Person"};
    static coffer_class_id *const ids[] = {&PERSON};
    return ts_setup_schema_classes(state, person_schema, 1, 1, names, ids);
}

/* Ann (id 1, tag 1) and Bob (id 2, tag 1, best friend Ann); their keys. */
static void add_people(ts_env *env, coffer_object_key *ann, coffer_object_key *bob)
{
    coffer_txn *txn = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_field a[] = {ts_field(P_ID, coffer_value_int(1)), ts_field(P_NAME, ts_str("Ann")),
                        ts_field(P_TAG, coffer_value_int(1))};
    coffer_object *o = ts_create(txn, PERSON, a, 3);
    *ann = coffer_object_key_of(o);
    coffer_object_release(o);
    coffer_field b[] = {ts_field(P_ID, coffer_value_int(2)), ts_field(P_NAME, ts_str("Bob")),
                        ts_field(P_TAG, coffer_value_int(1)), ts_field(P_BEST, coffer_value_link(PERSON, *ann))};
    o = ts_create(txn, PERSON, b, 4);
    *bob = coffer_object_key_of(o);
    coffer_object_release(o);
    ts_commit(txn);
}

/* Moves the record of object `key` to key `key + 1000` in the closed file,
 * leaving everything that names it as it is. */
static void move_record(const char *path, coffer_object_key key)
{
    MDB_env *menv;
    MDB_txn *txn;
    MDB_dbi dbi;
    assert_int_equal(mdb_env_create(&menv), 0);
    assert_int_equal(mdb_env_set_maxdbs(menv, 16), 0);
    assert_int_equal(mdb_env_open(menv, path, MDB_NOSUBDIR, 0644), 0);
    assert_int_equal(mdb_txn_begin(menv, NULL, 0, &txn), 0);
    assert_int_equal(mdb_dbi_open(txn, PERSON_OBJECTS_DBI, 0, &dbi), 0);
    uint8_t from[8], to[8];
    for (int i = 0; i < 8; i++) {
        from[i] = (uint8_t)(key >> (56 - 8 * i));
        to[i] = (uint8_t)((key + 1000) >> (56 - 8 * i));
    }
    MDB_val k = {8, from}, v;
    assert_int_equal(mdb_get(txn, dbi, &k, &v), 0);
    void *copy = malloc(v.mv_size);
    assert_non_null(copy);
    memcpy(copy, v.mv_data, v.mv_size);
    MDB_val record = {v.mv_size, copy}, moved = {8, to};
    assert_int_equal(mdb_put(txn, dbi, &moved, &record, 0), 0);
    assert_int_equal(mdb_del(txn, dbi, &k, NULL), 0);
    assert_int_equal(mdb_txn_commit(txn), 0);
    mdb_env_close(menv);
    free(copy);
}

static void damage(ts_env *env, coffer_object_key key)
{
    ts_env_close(env);
    move_record(env->path, key);
    assert_ok(ts_open_path(env->path, NULL, 0, person_schema, 1, 1, &env->db));
}

static coffer_status run_count(coffer_db *db, coffer_txn *txn, const char *text, uint64_t *count)
{
    coffer_query *q;
    coffer_results *r = NULL;
    assert_ok(coffer_query_compile(db, PERSON, text, SIZE_MAX, NULL, 0, &q));
    coffer_status st = coffer_query_run(txn, q, &r);
    if (st == COFFER_OK)
        st = coffer_results_count(r, count);
    coffer_results_free(r);
    coffer_query_free(q);
    return st;
}

TS_ENV_TEST(test_indexes_and_links_naming_a_damaged_key)
{
    coffer_object_key ann, bob;
    add_people(env, &ann, &bob);
    damage(env, ann);
    coffer_txn *txn = ts_begin(env->db, COFFER_TXN_READ);

    /* The primary-key index names Ann's old key. */
    coffer_object *o = NULL;
    coffer_value one = coffer_value_int(1);
    assert_status(coffer_object_find(txn, PERSON, &one, &o), COFFER_ERR_CORRUPTED);
    assert_error_contains("the primary-key index of class 'Person' names object");
    assert_error_contains("the file is damaged");
    assert_null(o);

    /* So does the index of `tag`, read alone or as candidates of a query. */
    coffer_iter *it;
    assert_ok(coffer_index_find(txn, PERSON, P_TAG, &one, &it));
    coffer_status st;
    while ((st = coffer_iter_next(it, &o)) == COFFER_OK)
        ;
    assert_status(st, COFFER_ERR_CORRUPTED);
    assert_error_contains("an index entry of class 'Person'");
    coffer_iter_free(it);
    uint64_t count;
    assert_status(run_count(env->db, txn, "tag == 1 AND name != 'Zed'", &count), COFFER_ERR_CORRUPTED);
    assert_error_contains("an index entry of class 'Person' names object");

    /* Bob's link to Ann, followed by a query. */
    assert_status(run_count(env->db, txn, "best.name == 'Ann'", &count), COFFER_ERR_CORRUPTED);
    assert_error_contains("a stored link names object");

    /* The moved record itself is refused: its checksum binds it to its key,
     * as the seal of an encrypted file does. */
    assert_status(coffer_object_get(txn, PERSON, ann + 1000, &o), COFFER_ERR_CORRUPTED);
    assert_error_contains("its checksum does not match");
    assert_null(o);
    coffer_txn_free(txn);
}

TS_ENV_TEST(test_backlink_naming_a_damaged_key)
{
    coffer_object_key ann, bob;
    add_people(env, &ann, &bob);
    damage(env, bob);
    coffer_txn *txn = ts_begin(env->db, COFFER_TXN_READ);
    coffer_object *a, *o;
    assert_ok(coffer_object_get(txn, PERSON, ann, &a));
    coffer_iter *it;
    assert_ok(coffer_object_backlinks(a, P_FANS, &it));
    assert_status(coffer_iter_next(it, &o), COFFER_ERR_CORRUPTED);
    assert_error_contains("a backlink of class 'Person' names object");
    coffer_iter_free(it);
    coffer_object_release(a);
    uint64_t count;
    assert_status(run_count(env->db, txn, "fans.@count > 0 AND ANY fans.name == 'Bob'", &count),
                  COFFER_ERR_CORRUPTED);
    coffer_txn_free(txn);
}

/* Deleting through the library removes every name of the object: what
 * reads it afterwards is told it was deleted, and nothing is damaged. */
TS_ENV_TEST(test_deleted_objects_still_read_as_not_found)
{
    coffer_object_key ann, bob;
    add_people(env, &ann, &bob);
    coffer_txn *txn = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_object *o;
    assert_ok(coffer_object_get(txn, PERSON, ann, &o));
    assert_ok(coffer_object_delete(o));
    coffer_object_release(o);
    ts_commit(txn);

    txn = ts_begin(env->db, COFFER_TXN_READ);
    assert_status(coffer_object_get(txn, PERSON, ann, &o), COFFER_ERR_NOT_FOUND);
    coffer_value one = coffer_value_int(1);
    assert_status(coffer_object_find(txn, PERSON, &one, &o), COFFER_ERR_NOT_FOUND);
    uint64_t count;
    assert_ok(run_count(env->db, txn, "tag == 1 AND name != 'Zed'", &count));
    assert_int_equal(count, 1);
    assert_ok(run_count(env->db, txn, "best == nil", &count));
    assert_int_equal(count, 1);
    coffer_txn_free(txn);
}

int main(void)
{
    /* It moves format 4's records; a moved cluster of format 5 is
     * test_clusters.c's test_moved_cluster_is_detected. */
    ts_pin_storage_format(4);
    const struct CMUnitTest tests[] = {
        TS_TEST_MODE_SETUP(test_indexes_and_links_naming_a_damaged_key, setup, ts_mode_plain, "plain"),
        TS_TEST_MODE_SETUP(test_backlink_naming_a_damaged_key, setup, ts_mode_plain, "plain"),
        TS_TEST_ALL_MODES_SETUP(test_deleted_objects_still_read_as_not_found, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
