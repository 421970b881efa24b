/* test_batch_write.c — coffer_objects_create(), coffer_objects_set_fields()
 * and coffer_results_set_value(): many objects written in one call do what
 * the one-object calls do; a failure stops at the object named in the
 * message, leaving the ones before it written (and nothing of it); values
 * checked before a result set is written; bad arguments. Every test runs on
 * plain, encrypted and in-memory databases. */
#define _GNU_SOURCE
#include "test_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MANY = 100 };

/* Fields of Person i (id, name, age) into f[0..2]; names live in `names`. */
static void person_fields(coffer_field *f, int64_t id, char *name, size_t size)
{
    snprintf(name, size, "person %lld", (long long)id);
    f[0] = ts_field(PERSON_ID, coffer_value_int(id));
    f[1] = ts_field(PERSON_NAME, ts_str(name));
    f[2] = ts_field(PERSON_AGE, coffer_value_int(id % 90));
}

/* Persons 0..MANY-1 created in one call and committed; their keys in `keys`. */
static void create_people(coffer_db *db, coffer_class_id person, coffer_object_key keys[MANY])
{
    static coffer_field f[MANY * 3];
    static char names[MANY][32];
    for (int i = 0; i < MANY; i++)
        person_fields(&f[i * 3], i, names[i], sizeof names[i]);
    size_t done = 0;
    coffer_txn *txn = ts_begin(db, COFFER_TXN_WRITE);
    assert_ok(coffer_objects_create(txn, person, f, 3, MANY, COFFER_UPDATE_ERROR, keys, &done));
    assert_int_equal(done, MANY);
    ts_commit(txn);
}

static int64_t age_of(coffer_txn *txn, coffer_class_id person, coffer_object_key key)
{
    coffer_object *obj = NULL;
    assert_ok(coffer_object_get(txn, person, key, &obj));
    int64_t age = ts_get_int(obj, PERSON_AGE);
    coffer_object_release(obj);
    return age;
}

TS_ENV_TEST(test_create_many)
{
    static coffer_field f[MANY * 3];
    static char names[MANY][32];
    for (int i = 0; i < MANY; i++)
        person_fields(&f[i * 3], i, names[i], sizeof names[i]);
    coffer_object_key keys[MANY];
    size_t done = 99;
    coffer_txn *txn = ts_begin(env->db, COFFER_TXN_WRITE);
    assert_ok(coffer_objects_create(txn, env->person, f, 3, MANY, COFFER_UPDATE_ERROR, keys, &done));
    assert_int_equal(done, MANY);
    ts_commit(txn);

    txn = ts_begin(env->db, COFFER_TXN_READ);
    assert_int_equal(ts_count(txn, env->person), MANY);
    for (int i = 0; i < MANY; i++) {
        coffer_object *obj = NULL;
        assert_ok(coffer_object_get(txn, env->person, keys[i], &obj));
        assert_int_equal(ts_get_int(obj, PERSON_ID), i);
        size_t size = 0;
        assert_string_equal(ts_get_string(obj, PERSON_NAME, &size), names[i]);
        assert_int_equal(ts_get_int(obj, PERSON_AGE), i % 90);
        assert_true(ts_get_is_null(obj, PERSON_NICKNAME));
        if (i)
            assert_true(keys[i] > keys[i - 1]);
        coffer_object_release(obj);
    }
    /* the index knows them */
    coffer_value name = ts_str("person 42");
    assert_int_equal(ts_index_count(txn, env->person, PERSON_NAME, &name), 1);
    coffer_txn_free(txn);

    /* an update policy upserts by primary key; keys may be left out */
    coffer_field upd[2 * 2] = {ts_field(PERSON_ID, coffer_value_int(5)), ts_field(PERSON_AGE, coffer_value_int(500)),
                               ts_field(PERSON_ID, coffer_value_int(1000)), ts_field(PERSON_AGE, coffer_value_int(1))};
    txn = ts_begin(env->db, COFFER_TXN_WRITE);
    assert_ok(coffer_objects_create(txn, env->person, upd, 2, 2, COFFER_UPDATE_ALL, NULL, &done));
    assert_int_equal(done, 2);
    assert_int_equal(ts_count(txn, env->person), MANY + 1);
    assert_int_equal(age_of(txn, env->person, keys[5]), 500);
    /* zero objects, or objects of no fields */
    assert_ok(coffer_objects_create(txn, env->person, NULL, 0, 0, COFFER_UPDATE_ERROR, NULL, &done));
    assert_int_equal(done, 0);
    ts_commit(txn);
}

/* A failure stops at the object that failed: the ones before it stay
 * written, it is not, and the message names its position. */
TS_ENV_TEST(test_create_stops_at_failure)
{
    coffer_field f[6 * 3];
    char names[6][32];
    for (int i = 0; i < 6; i++)
        person_fields(&f[i * 3], i, names[i], sizeof names[i]);
    f[4 * 3].value = coffer_value_int(1); /* object 4 repeats the id of object 1 */
    coffer_txn *txn = ts_begin(env->db, COFFER_TXN_WRITE);
    size_t done = 99;
    assert_status(coffer_objects_create(txn, env->person, f, 3, 6, COFFER_UPDATE_ERROR, NULL, &done),
                  COFFER_ERR_PRIMARY_KEY_EXISTS);
    assert_error_contains("coffer_objects_create: object 4 of 6");
    assert_error_contains("primary key 1");
    assert_int_equal(done, 4);
    assert_int_equal(ts_count(txn, env->person), 4);

    /* a value of the wrong type */
    f[2 * 3 + 2].value = ts_str("old");
    for (int i = 0; i < 6; i++)
        f[i * 3].value = coffer_value_int(100 + i);
    assert_status(coffer_objects_create(txn, env->person, f, 3, 6, COFFER_UPDATE_ERROR, NULL, &done), COFFER_ERR_TYPE);
    assert_error_contains("object 2 of 6");
    assert_error_contains("'age'");
    assert_int_equal(done, 2);
    assert_int_equal(ts_count(txn, env->person), 6);
    ts_commit(txn);

    /* aborting undoes the objects before the failure */
    txn = ts_begin(env->db, COFFER_TXN_WRITE);
    for (int i = 0; i < 6; i++)
        f[i * 3].value = coffer_value_int(200 + i);
    assert_status(coffer_objects_create(txn, env->person, f, 3, 6, COFFER_UPDATE_ERROR, NULL, &done), COFFER_ERR_TYPE);
    assert_int_equal(done, 2);
    assert_ok(coffer_txn_abort(txn));
    coffer_txn_free(txn);
    assert_int_equal(ts_count_of(env->db, "Person"), 6);
}

TS_ENV_TEST(test_create_bad_arguments)
{
    coffer_field f[3];
    char name[32];
    person_fields(f, 1, name, sizeof name);
    size_t done = 99;
    coffer_txn *txn = ts_begin(env->db, COFFER_TXN_READ);
    assert_status(coffer_objects_create(txn, env->person, f, 3, 1, COFFER_UPDATE_ERROR, NULL, &done),
                  COFFER_ERR_NOT_IN_WRITE);
    assert_int_equal(done, 0);
    coffer_txn_free(txn);
    txn = ts_begin(env->db, COFFER_TXN_WRITE);
    assert_status(coffer_objects_create(txn, env->person, f, 3, 1, COFFER_UPDATE_ERROR, NULL, NULL),
                  COFFER_ERR_INVALID_ARGUMENT);
    assert_error_contains("done is NULL");
    assert_status(coffer_objects_create(txn, env->person, NULL, 3, 2, COFFER_UPDATE_ERROR, NULL, &done),
                  COFFER_ERR_INVALID_ARGUMENT);
    assert_error_contains("fields is NULL but 2 objects of 3 fields are given");
    assert_status(coffer_objects_create(txn, env->person, f, 3, SIZE_MAX / 2, COFFER_UPDATE_ERROR, NULL, &done),
                  COFFER_ERR_INVALID_ARGUMENT);
    assert_error_contains("overflow");
    assert_status(coffer_objects_create(txn, 99, f, 3, 1, COFFER_UPDATE_ERROR, NULL, &done),
                  COFFER_ERR_INVALID_ARGUMENT);
    assert_error_contains("object 0 of 1");
    assert_status(coffer_objects_create(NULL, env->person, f, 3, 1, COFFER_UPDATE_ERROR, NULL, &done),
                  COFFER_ERR_INVALID_ARGUMENT);
    assert_int_equal(ts_count(txn, env->person), 0);
    ts_commit(txn);
}

TS_ENV_TEST(test_set_fields_many)
{
    coffer_object_key keys[MANY];
    create_people(env->db, env->person, keys);
    size_t done = 0;
    coffer_txn *txn;

    /* every object gets its own age and nickname, in any order */
    coffer_field g[MANY * 2];
    coffer_object_key order[MANY];
    for (int i = 0; i < MANY; i++) {
        int j = (i * 37) % MANY;
        order[i] = keys[j];
        g[i * 2] = ts_field(PERSON_AGE, coffer_value_int(1000 + j));
        g[i * 2 + 1] = ts_field(PERSON_NICKNAME, j % 2 ? ts_str("odd") : coffer_value_null());
    }
    txn = ts_begin(env->db, COFFER_TXN_WRITE);
    assert_ok(coffer_objects_set_fields(txn, env->person, order, MANY, g, 2, &done));
    assert_int_equal(done, MANY);
    ts_commit(txn);
    txn = ts_begin(env->db, COFFER_TXN_READ);
    for (int i = 0; i < MANY; i++) {
        coffer_object *obj = NULL;
        assert_ok(coffer_object_get(txn, env->person, keys[i], &obj));
        assert_int_equal(ts_get_int(obj, PERSON_AGE), 1000 + i);
        assert_int_equal(ts_get_is_null(obj, PERSON_NICKNAME), i % 2 == 0);
        coffer_object_release(obj);
    }
    coffer_txn_free(txn);

    /* a missing key and a wrong type stop there, named */
    txn = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_object_key some[3] = {keys[0], keys[1], 999999};
    assert_status(coffer_objects_set_fields(txn, env->person, some, 3, g, 2, &done), COFFER_ERR_NOT_FOUND);
    assert_error_contains("object 2 of 3 (key 999999)");
    assert_int_equal(done, 2);
    g[2] = ts_field(PERSON_AGE, ts_str("x"));
    assert_status(coffer_objects_set_fields(txn, env->person, some, 2, g, 2, &done), COFFER_ERR_TYPE);
    assert_int_equal(done, 1);
    /* the primary key is immutable */
    coffer_field pk = ts_field(PERSON_ID, coffer_value_int(-1));
    assert_status(coffer_objects_set_fields(txn, env->person, keys, 1, &pk, 1, &done), COFFER_ERR_IMMUTABLE);
    assert_status(coffer_objects_set_fields(txn, env->person, NULL, 1, &pk, 1, &done), COFFER_ERR_INVALID_ARGUMENT);
    assert_error_contains("keys is NULL");
    assert_ok(coffer_txn_abort(txn));
    coffer_txn_free(txn);
}

/* One property over a result set. */
TS_ENV_TEST(test_results_set_value)
{
    coffer_object_key keys[MANY];
    create_people(env->db, env->person, keys);
    coffer_txn *txn;

    coffer_query *q = NULL;
    assert_ok(coffer_query_compile(env->db, env->person, "id < 10", SIZE_MAX, NULL, 0, &q));
    txn = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_results *r = NULL;
    assert_ok(coffer_query_run(txn, q, &r));
    /* one of them is deleted after the results were computed: skipped */
    coffer_object *gone = NULL;
    assert_ok(coffer_results_get(r, 4, &gone));
    assert_ok(coffer_object_delete(gone));
    coffer_object_release(gone);
    coffer_value nick = ts_str("young");
    assert_ok(coffer_results_set_value(r, PERSON_NICKNAME, &nick));
    coffer_value age = coffer_value_int(-1);
    assert_ok(coffer_results_set_value(r, PERSON_AGE, &age));

    /* checked before anything is written */
    coffer_value wrong = ts_str("old");
    assert_status(coffer_results_set_value(r, PERSON_AGE, &wrong), COFFER_ERR_TYPE);
    assert_status(coffer_results_set_value(r, PERSON_ID, &age), COFFER_ERR_IMMUTABLE);
    assert_error_contains("'Person.id' is the primary key");
    assert_status(coffer_results_set_value(r, PERSON_COUNT, &age), COFFER_ERR_INVALID_ARGUMENT);
    assert_error_contains("no property with id 4");
    assert_status(coffer_results_set_value(r, PERSON_AGE, NULL), COFFER_ERR_INVALID_ARGUMENT);
    assert_status(coffer_results_set_value(NULL, PERSON_AGE, &age), COFFER_ERR_INVALID_ARGUMENT);
    coffer_results_free(r);
    ts_commit(txn);

    txn = ts_begin(env->db, COFFER_TXN_READ);
    coffer_iter *it = ts_iterate(txn, env->person);
    coffer_object *obj;
    int young = 0;
    while (ts_next(it, &obj)) {
        int64_t id = ts_get_int(obj, PERSON_ID);
        assert_true(id != 4);
        assert_int_equal(ts_get_int(obj, PERSON_AGE), id < 10 ? -1 : id % 90);
        if (!ts_get_is_null(obj, PERSON_NICKNAME)) {
            size_t size = 0;
            assert_string_equal(ts_get_string(obj, PERSON_NICKNAME, &size), "young");
            young++;
        }
    }
    coffer_iter_free(it);
    assert_int_equal(young, 9);
    /* a read transaction cannot */
    assert_ok(coffer_query_run(txn, q, &r));
    assert_status(coffer_results_set_value(r, PERSON_AGE, &age), COFFER_ERR_NOT_IN_WRITE);
    coffer_results_free(r);
    coffer_txn_free(txn);
    coffer_query_free(q);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TS_TEST_ALL_MODES(test_create_many),
        TS_TEST_ALL_MODES(test_create_stops_at_failure),
        TS_TEST_ALL_MODES(test_create_bad_arguments),
        TS_TEST_ALL_MODES(test_set_fields_many),
        TS_TEST_ALL_MODES(test_results_set_value),
    };
    return cmocka_run_group_tests_name("batch_write", tests, NULL, NULL);
}
