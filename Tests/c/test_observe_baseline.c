/* test_observe_baseline.c — an observer's first call reports the state at
 * the version of its registration, however late the refresh that delivers
 * it: a commit made right after registering is told as a change after the
 * first call, never folded into it. Made deterministic by turning
 * auto-refresh off, so that the first call comes only from an explicit
 * coffer_db_refresh() after the commit; and checked once more with the
 * notifier racing the commit. */
#define _GNU_SOURCE
#include "test_support.h"
#include "observe_recorder.h"

#include <stdlib.h>
#include <string.h>

enum { DOG_ID = TS_DOG_ID, DOG_NAME = TS_DOG_NAME, DOG_AGE = TS_DOG_AGE, DOG = 0 };

static int setup_kennel(void **state) { return ts_setup_schema(state, ts_dog_kennel, 1); }

static coffer_object_key add_dog(coffer_db *db, int64_t id, const char *name, int64_t age)
{
    return ts_commit_dog(db, DOG, id, name, age);
}

static void set_value(coffer_db *db, coffer_object_key key, coffer_property_id prop, coffer_value v)
{
    coffer_txn *txn = ts_begin(db, COFFER_TXN_WRITE);
    coffer_object *obj;
    assert_ok(coffer_object_get(txn, DOG, key, &obj));
    assert_ok(coffer_object_set_value(obj, prop, &v));
    ts_commit(txn);
}

static uint64_t txn_version_now(coffer_db *db)
{
    coffer_txn *txn = ts_begin(db, COFFER_TXN_READ);
    uint64_t v;
    assert_ok(coffer_txn_version(txn, &v));
    coffer_txn_free(txn);
    return v;
}

/* Records, besides the call, the version of the transaction it was given. */
typedef struct versioned {
    recorder r;
    uint64_t versions[MAX_SEEN];
} versioned;

static void on_object_versioned(void *ctx, coffer_txn *txn, const coffer_object_changes *ch)
{
    versioned *v = ctx;
    int n = calls_of(&v->r);
    if (n < MAX_SEEN)
        assert_ok(coffer_txn_version(txn, &v->versions[n]));
    on_object(&v->r, txn, ch);
}

TS_ENV_TEST(test_object_commit_after_registration_is_a_change)
{
    coffer_db *db = env->db;
    assert_ok(coffer_db_set_auto_refresh(db, 0));
    coffer_object_key rex = add_dog(db, 1, "Rex", 3);
    versioned v;
    memset(&v, 0, sizeof v);
    recorder_init(&v.r);
    coffer_token *token;
    assert_ok(coffer_object_observe(db, DOG, rex, NULL, 0, on_object_versioned, &v, &token));
    uint64_t registered = txn_version_now(db);
    set_value(db, rex, DOG_AGE, coffer_value_int(4)); /* before the notifier ever ran */
    assert_int_equal(calls_of(&v.r), 0);
    assert_ok(coffer_db_refresh(db));
    assert_int_equal(calls_of(&v.r), 2);
    assert_true(v.r.calls[0].initial);
    assert_int_equal(v.versions[0], registered); /* the first call is read at registration */
    assert_int_equal(v.r.calls[1].nprops, 1);
    assert_int_equal(v.r.calls[1].props[0], DOG_AGE);
    assert_int_equal(v.r.calls[1].old_int[0], 3);
    assert_int_equal(v.r.calls[1].new_int[0], 4);
    assert_int_equal(v.versions[1], registered + 1);
    assert_ok(coffer_db_refresh(db)); /* nothing new */
    assert_int_equal(calls_of(&v.r), 2);
    coffer_token_stop(token);
    recorder_destroy(&v.r);
}

TS_ENV_TEST(test_results_insert_after_registration_is_a_change)
{
    coffer_db *db = env->db;
    assert_ok(coffer_db_set_auto_refresh(db, 0));
    add_dog(db, 1, "a", 1);
    coffer_query *q;
    assert_ok(coffer_query_compile(db, DOG, "age < 10", SIZE_MAX, NULL, 0, &q));
    recorder r;
    recorder_init(&r);
    coffer_token *token;
    assert_ok(coffer_query_observe(db, q, NULL, 0, on_collection, &r, &token));
    coffer_query_free(q);
    add_dog(db, 2, "b", 2);
    assert_ok(coffer_db_refresh(db));
    assert_int_equal(calls_of(&r), 2);
    assert_true(r.calls[0].initial);
    EXPECT(r.calls[1].ins, r.calls[1].nins, 1);
    assert_int_equal(r.calls[1].ndel + r.calls[1].nmod, 0);
    coffer_token_stop(token);
    recorder_destroy(&r);
}

/* A handle already observed sits at an older version: a second observer is
 * told neither the commits before its registration nor anything twice. */
TS_ENV_TEST(test_second_observer_starts_at_its_own_registration)
{
    coffer_db *db = env->db;
    assert_ok(coffer_db_set_auto_refresh(db, 0));
    coffer_object_key rex = add_dog(db, 1, "Rex", 3);
    recorder first, second;
    recorder_init(&first);
    recorder_init(&second);
    coffer_token *t1, *t2;
    assert_ok(coffer_object_observe(db, DOG, rex, NULL, 0, on_object, &first, &t1));
    assert_ok(coffer_db_refresh(db));
    assert_int_equal(calls_of(&first), 1);
    set_value(db, rex, DOG_AGE, coffer_value_int(5)); /* before the second registers */
    assert_ok(coffer_object_observe(db, DOG, rex, NULL, 0, on_object, &second, &t2));
    set_value(db, rex, DOG_NAME, ts_str("Max")); /* after */
    assert_ok(coffer_db_refresh(db));

    assert_int_equal(calls_of(&first), 2); /* both commits, as one change */
    assert_int_equal(first.calls[1].nprops, 2);
    assert_int_equal(first.calls[1].props[0], DOG_NAME);
    assert_int_equal(first.calls[1].props[1], DOG_AGE);
    assert_int_equal(first.calls[1].old_int[1], 3);
    assert_int_equal(first.calls[1].new_int[1], 5);

    assert_int_equal(calls_of(&second), 2); /* its first call, then only the name */
    assert_true(second.calls[0].initial);
    assert_int_equal(second.calls[1].nprops, 1);
    assert_int_equal(second.calls[1].props[0], DOG_NAME);
    coffer_token_stop(t1);
    coffer_token_stop(t2);
    recorder_destroy(&first);
    recorder_destroy(&second);
}

/* Stopped inside its first call: the commit after registration is not told. */
TS_ENV_TEST(test_stopped_in_first_call_hears_nothing_more)
{
    coffer_db *db = env->db;
    assert_ok(coffer_db_set_auto_refresh(db, 0));
    coffer_object_key rex = add_dog(db, 1, "Rex", 3);
    recorder r;
    recorder_init(&r);
    r.stop_inside_after = 1;
    assert_ok(coffer_object_observe(db, DOG, rex, NULL, 0, on_object, &r, &r.token));
    set_value(db, rex, DOG_AGE, coffer_value_int(4));
    assert_ok(coffer_db_refresh(db));
    assert_int_equal(calls_of(&r), 1);
    assert_true(r.calls[0].initial);
    recorder_destroy(&r);
}

/* The object deleted right after registration: the first call, then the
 * deletion. */
TS_ENV_TEST(test_deleted_after_registration_is_told)
{
    coffer_db *db = env->db;
    assert_ok(coffer_db_set_auto_refresh(db, 0));
    coffer_object_key rex = add_dog(db, 1, "Rex", 3);
    recorder r;
    recorder_init(&r);
    coffer_token *token;
    assert_ok(coffer_object_observe(db, DOG, rex, NULL, 0, on_object, &r, &token));
    coffer_txn *txn = ts_begin(db, COFFER_TXN_WRITE);
    coffer_object *obj;
    assert_ok(coffer_object_get(txn, DOG, rex, &obj));
    assert_ok(coffer_object_delete(obj));
    ts_commit(txn);
    assert_ok(coffer_db_refresh(db));
    assert_int_equal(calls_of(&r), 2);
    assert_true(r.calls[0].initial);
    assert_true(r.calls[1].object_deleted);
    coffer_token_stop(token);
    recorder_destroy(&r);
}

/* The handle closed before the first callback (whose read transaction ends
 * with the handle), then the token stopped: no call, nothing left behind
 * (ASan's leak check covers the transaction). */
TS_ENV_TEST(test_closed_before_first_call)
{
    assert_ok(coffer_db_set_auto_refresh(env->db, 0));
    coffer_object_key rex = add_dog(env->db, 1, "Rex", 3);
    recorder r;
    recorder_init(&r);
    coffer_token *token;
    assert_ok(coffer_object_observe(env->db, DOG, rex, NULL, 0, on_object, &r, &token));
    ts_env_close(env);
    coffer_token_stop(token);
    assert_int_equal(calls_of(&r), 0);
    recorder_destroy(&r);
}

/* With the notifier running, a commit right after registering races its
 * first cycle; whichever wins, the change comes after the first call. */
TS_ENV_TEST(test_commit_racing_the_notifier_is_told)
{
    coffer_db *db = env->db;
    coffer_object_key rex = add_dog(db, 1, "Rex", 0);
    for (int round = 1; round <= 20; round++) {
        recorder r;
        recorder_init(&r);
        coffer_token *token;
        assert_ok(coffer_object_observe(db, DOG, rex, NULL, 0, on_object, &r, &token));
        set_value(db, rex, DOG_AGE, coffer_value_int(round));
        wait_calls(&r, 2);
        assert_true(r.calls[0].initial);
        assert_int_equal(r.calls[1].nprops, 1);
        assert_int_equal(r.calls[1].new_int[0], round);
        coffer_token_stop(token);
        recorder_destroy(&r);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TS_TEST_ALL_MODES_SETUP(test_object_commit_after_registration_is_a_change, setup_kennel),
        TS_TEST_ALL_MODES_SETUP(test_results_insert_after_registration_is_a_change, setup_kennel),
        TS_TEST_ALL_MODES_SETUP(test_second_observer_starts_at_its_own_registration, setup_kennel),
        TS_TEST_ALL_MODES_SETUP(test_stopped_in_first_call_hears_nothing_more, setup_kennel),
        TS_TEST_ALL_MODES_SETUP(test_deleted_after_registration_is_told, setup_kennel),
        TS_TEST_ALL_MODES_SETUP(test_closed_before_first_call, setup_kennel),
        TS_TEST_ALL_MODES_SETUP(test_commit_racing_the_notifier_is_told, setup_kennel),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
