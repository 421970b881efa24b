/* test_observe_commit.c — what makes a commit reach its callback soon.
 * Refresh on commit (coffer_db_set_refresh_on_commit()):
 * a commit through an observed handle delivers that handle's callbacks on
 * the committing thread before coffer_txn_commit() returns, with the change
 * sets the notifier would have computed; off by default, and left to the
 * notifier when auto-refresh is off, a scheduler is set, or a refresh runs
 * (a callback committing through its own handle). Commits of another
 * handle still come through the notifier, in order with the others. And
 * the result keys a results observer's callback gets
 * (coffer_collection_changes_result_keys()), which are the query's rows at
 * the callback's version. */
#define _GNU_SOURCE
#include "test_support.h"
#include "observe_recorder.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { DOG_ID = TS_DOG_ID, DOG_NAME = TS_DOG_NAME, DOG_AGE = TS_DOG_AGE, DOG = 0 };

static int setup_kennel(void **state) { return ts_setup_schema(state, ts_dog_kennel, 1); }

static coffer_object_key add_dog(coffer_db *db, int64_t id, const char *name, int64_t age)
{
    return ts_commit_dog(db, DOG, id, name, age);
}

static coffer_txn *begin_set_age(coffer_db *db, coffer_object_key key, int64_t age)
{
    coffer_txn *txn = ts_begin(db, COFFER_TXN_WRITE);
    coffer_object *obj;
    assert_ok(coffer_object_get(txn, DOG, key, &obj));
    coffer_value v = coffer_value_int(age);
    assert_ok(coffer_object_set_value(obj, DOG_AGE, &v));
    return txn;
}

static void set_age(coffer_db *db, coffer_object_key key, int64_t age) { ts_commit(begin_set_age(db, key, age)); }

/* Observes the results of "age < 100" and waits for the first call; the
 * notifier is idle when it returns (the refresh waits for its cycle). */
static coffer_token *observe_dogs(coffer_db *db, recorder *r)
{
    coffer_query *q;
    assert_ok(coffer_query_compile(db, DOG, "age < 100 SORT(age ASC)", SIZE_MAX, NULL, 0, &q));
    coffer_token *token;
    assert_ok(coffer_query_observe(db, q, NULL, 0, on_collection, r, &token));
    coffer_query_free(q);
    wait_calls(r, 1);
    assert_true(r->calls[0].initial);
    assert_ok(coffer_db_refresh(db));
    return token;
}

TS_ENV_TEST(test_off_by_default_and_the_notifier_delivers)
{
    coffer_db *db = env->db;
    assert_int_equal(coffer_db_refresh_on_commit(db), 0);
    add_dog(db, 1, "a", 1);
    recorder r;
    recorder_init(&r);
    coffer_token *token = observe_dogs(db, &r);
    assert_int_equal(coffer_db_refresh_on_commit(db), 0);
    add_dog(db, 2, "b", 2);
    wait_calls(&r, 2);
    EXPECT(r.calls[1].ins, r.calls[1].nins, 1);
    assert_false(pthread_equal(r.calls[1].thread, pthread_self())); /* the notifier's */
    coffer_token_stop(token);
    recorder_destroy(&r);
}

TS_ENV_TEST(test_commit_delivers_on_the_committing_thread)
{
    coffer_db *db = env->db;
    coffer_object_key a = add_dog(db, 1, "a", 1);
    add_dog(db, 2, "b", 2);
    recorder r;
    recorder_init(&r);
    coffer_token *token = observe_dogs(db, &r);
    assert_ok(coffer_db_set_refresh_on_commit(db, 1));
    assert_int_equal(coffer_db_refresh_on_commit(db), 1);

    add_dog(db, 3, "c", 0); /* first in age order */
    assert_int_equal(calls_of(&r), 2); /* told before the commit returned */
    assert_true(pthread_equal(r.calls[1].thread, pthread_self()));
    EXPECT(r.calls[1].ins, r.calls[1].nins, 0);
    assert_int_equal(r.calls[1].ndel + r.calls[1].nmod, 0);

    set_age(db, a, 5); /* a moves from 1 to 2: a deletion plus an insertion */
    assert_int_equal(calls_of(&r), 3);
    EXPECT(r.calls[2].del, r.calls[2].ndel, 1);
    EXPECT(r.calls[2].ins, r.calls[2].nins, 2);
    assert_int_equal(r.calls[2].nmod, 0);

    set_age(db, a, 6); /* stays last: a modification */
    assert_int_equal(calls_of(&r), 4);
    EXPECT(r.calls[3].mod, r.calls[3].nmod, 2);

    /* Nothing more comes from the notifier the commits woke. */
    expect_quiet(&r, 100);
    assert_ok(coffer_db_set_refresh_on_commit(db, 0));
    add_dog(db, 4, "d", 50);
    wait_calls(&r, 5);
    assert_false(pthread_equal(r.calls[4].thread, pthread_self()));
    coffer_token_stop(token);
    recorder_destroy(&r);
}

TS_ENV_TEST(test_without_notifying_holds_on_commit)
{
    coffer_db *db = env->db;
    coffer_object_key a = add_dog(db, 1, "a", 1);
    recorder r;
    recorder_init(&r);
    coffer_token *token = observe_dogs(db, &r);
    assert_ok(coffer_db_set_refresh_on_commit(db, 1));
    coffer_txn *txn = begin_set_age(db, a, 2);
    assert_ok(coffer_txn_commit_without_notifying(txn, &token, 1));
    coffer_txn_free(txn);
    expect_quiet(&r, 100);
    assert_int_equal(calls_of(&r), 1);
    set_age(db, a, 3);
    assert_int_equal(calls_of(&r), 2);
    EXPECT(r.calls[1].mod, r.calls[1].nmod, 0);
    coffer_token_stop(token);
    recorder_destroy(&r);
}

static void post_nothing(void *scheduler_ctx, coffer_work_fn work, void *arg)
{
    (void)scheduler_ctx;
    work(arg); /* runs it at once, on the notifier thread */
}

TS_ENV_TEST(test_auto_refresh_off_or_a_scheduler_leave_it_to_them)
{
    coffer_db *db = env->db;
    coffer_object_key a = add_dog(db, 1, "a", 1);
    recorder r;
    recorder_init(&r);
    coffer_token *token = observe_dogs(db, &r);
    assert_ok(coffer_db_set_refresh_on_commit(db, 1));

    assert_ok(coffer_db_set_auto_refresh(db, 0));
    set_age(db, a, 2);
    expect_quiet(&r, 100);
    assert_ok(coffer_db_refresh(db));
    assert_int_equal(calls_of(&r), 2);
    assert_ok(coffer_db_set_auto_refresh(db, 1));

    assert_ok(coffer_db_set_scheduler(db, post_nothing, NULL));
    set_age(db, a, 3);
    wait_calls(&r, 3);
    assert_false(pthread_equal(r.calls[2].thread, pthread_self())); /* posted by the notifier */
    coffer_token_stop(token);
    recorder_destroy(&r);
}

/* A callback run by a commit commits again through the same handle: that
 * commit finds the refresh under way and is told by the notifier. */
typedef struct committing {
    recorder r;
    coffer_db *db;
    coffer_object_key key;
    _Atomic int nested;
} committing;

static void on_collection_committing(void *ctx, coffer_txn *txn, const coffer_collection_changes *ch)
{
    committing *c = ctx;
    on_collection(&c->r, txn, ch);
    if (ch && atomic_exchange(&c->nested, 0))
        set_age(c->db, c->key, 42);
}

TS_ENV_TEST(test_callback_committing_through_its_handle)
{
    coffer_db *db = env->db;
    committing c;
    memset(&c, 0, sizeof c);
    recorder_init(&c.r);
    c.db = db;
    c.key = add_dog(db, 1, "a", 1);
    coffer_query *q;
    assert_ok(coffer_query_compile(db, DOG, "age < 100", SIZE_MAX, NULL, 0, &q));
    coffer_token *token;
    assert_ok(coffer_query_observe(db, q, NULL, 0, on_collection_committing, &c, &token));
    coffer_query_free(q);
    wait_calls(&c.r, 1);
    assert_ok(coffer_db_refresh(db));
    assert_ok(coffer_db_set_refresh_on_commit(db, 1));
    c.nested = 1;
    add_dog(db, 2, "b", 2);
    assert_true(calls_of(&c.r) >= 2); /* the insertion, on this thread */
    EXPECT(c.r.calls[1].ins, c.r.calls[1].nins, 1);
    assert_true(pthread_equal(c.r.calls[1].thread, pthread_self()));
    wait_calls(&c.r, 3); /* the nested commit, from the notifier (which may already have told it) */
    EXPECT(c.r.calls[2].mod, c.r.calls[2].nmod, 0);
    assert_false(pthread_equal(c.r.calls[2].thread, pthread_self()));
    coffer_token_stop(token);
    recorder_destroy(&c.r);
}

/* Commits through the observing handle (told at commit) interleaved with
 * commits of another handle (told by the notifier): every value is told, in
 * commit order. */
/* The other handle's thread checks its calls itself (the test helpers keep
 * their last error in one buffer, for the main thread): nonzero on failure. */
static int set_age_raw(coffer_db *db, coffer_object_key key, int64_t age)
{
    coffer_txn *txn;
    if (coffer_txn_begin(db, COFFER_TXN_WRITE, &txn) != COFFER_OK)
        return 1;
    coffer_object *obj;
    coffer_value v = coffer_value_int(age);
    int failed = coffer_object_get(txn, DOG, key, &obj) != COFFER_OK || coffer_object_set_value(obj, DOG_AGE, &v) != COFFER_OK;
    failed = failed ? (coffer_txn_abort(txn), 1) : coffer_txn_commit(txn) != COFFER_OK;
    coffer_txn_free(txn);
    return failed;
}

typedef struct other_handle {
    coffer_db *db;
    coffer_object_key key;
    int failures;
} other_handle;

static void *commit_from_other_handle(void *arg)
{
    other_handle *o = arg;
    for (int i = 0; i < 10; i++)
        o->failures += set_age_raw(o->db, o->key, 1000 + i);
    return NULL;
}

TS_ENV_TEST(test_interleaved_with_another_handle_in_order)
{
    coffer_db *db = env->db;
    coffer_object_key a = add_dog(db, 1, "a", 0);
    recorder r;
    recorder_init(&r);
    coffer_token *token;
    assert_ok(coffer_object_observe(db, DOG, a, NULL, 0, on_object, &r, &token));
    wait_calls(&r, 1);
    assert_ok(coffer_db_refresh(db));
    assert_ok(coffer_db_set_refresh_on_commit(db, 1));
    other_handle o = {.key = a};
    assert_ok(ts_env_open(env, ts_dog_kennel, 1, 1, &o.db));
    pthread_t other;
    assert_int_equal(pthread_create(&other, NULL, commit_from_other_handle, &o), 0);
    for (int i = 0; i < 10; i++)
        set_age(db, a, 1 + i);
    pthread_join(other, NULL);
    coffer_close(o.db);
    assert_int_equal(o.failures, 0);
    /* The last commit is told at the latest by the notifier. */
    for (int waited = 0; waited < 500; waited++) {
        int n = calls_of(&r);
        pthread_mutex_lock(&r.lock);
        int64_t last = n > 1 ? r.calls[n - 1].new_int[0] : -1;
        pthread_mutex_unlock(&r.lock);
        coffer_txn *txn = ts_begin(db, COFFER_TXN_READ);
        coffer_object *obj;
        assert_ok(coffer_object_get(txn, DOG, a, &obj));
        coffer_value v;
        assert_ok(coffer_object_get_value(obj, DOG_AGE, &v));
        coffer_txn_free(txn);
        if (last == v.u.integer)
            break;
        usleep(10000);
    }
    int n = calls_of(&r);
    assert_true(n >= 2);
    /* Each call moves on from the value the one before told. */
    for (int i = 1; i < n; i++) {
        assert_int_equal(r.calls[i].nprops, 1);
        if (i > 1)
            assert_int_equal(r.calls[i].old_int[0], r.calls[i - 1].new_int[0]);
    }
    coffer_token_stop(token);
    recorder_destroy(&r);
}

typedef struct keyed {
    int calls;
    int has[4];
    uint64_t keys[4][8];
    size_t nkeys[4];
    uint64_t version[4];
} keyed;

static void on_collection_keyed(void *ctx, coffer_txn *txn, const coffer_collection_changes *ch)
{
    keyed *k = ctx;
    if (k->calls >= 4)
        return;
    int i = k->calls++;
    const uint64_t *keys = (const uint64_t *)1;
    size_t n = 99;
    k->has[i] = coffer_collection_changes_result_keys(ch, &keys, &n);
    if (!k->has[i]) {
        assert_null(keys);
        assert_int_equal(n, 0);
    }
    for (size_t j = 0; j < n && j < 8; j++)
        k->keys[i][j] = keys[j];
    k->nkeys[i] = n;
    assert_ok(coffer_txn_version(txn, &k->version[i]));
}

static void query_keys(coffer_db *db, const char *text, uint64_t *out, size_t *n)
{
    coffer_query *q;
    assert_ok(coffer_query_compile(db, DOG, text, SIZE_MAX, NULL, 0, &q));
    coffer_txn *txn = ts_begin(db, COFFER_TXN_READ);
    coffer_results *res;
    assert_ok(coffer_query_run(txn, q, &res));
    uint64_t count;
    assert_ok(coffer_results_count(res, &count));
    assert_true(count <= 8);
    assert_ok(coffer_results_copy_keys(res, 0, (size_t)count, out));
    *n = (size_t)count;
    coffer_results_free(res);
    coffer_txn_free(txn);
    coffer_query_free(q);
}

TS_ENV_TEST(test_result_keys_are_the_rows_at_the_new_version)
{
    coffer_db *db = env->db;
    assert_ok(coffer_db_set_auto_refresh(db, 0));
    coffer_object_key a = add_dog(db, 1, "a", 5);
    add_dog(db, 2, "b", 3);
    const char *text = "age < 10 SORT(age DESC)";
    coffer_query *q;
    assert_ok(coffer_query_compile(db, DOG, text, SIZE_MAX, NULL, 0, &q));
    keyed k;
    memset(&k, 0, sizeof k);
    coffer_token *token;
    assert_ok(coffer_query_observe(db, q, NULL, 0, on_collection_keyed, &k, &token));
    coffer_query_free(q);
    assert_ok(coffer_db_refresh(db));
    assert_int_equal(k.calls, 1);
    assert_int_equal(k.has[0], 0); /* the first call has no change set */

    add_dog(db, 3, "c", 4);
    set_age(db, a, 1);
    assert_ok(coffer_db_refresh(db));
    assert_int_equal(k.calls, 2);
    assert_int_equal(k.has[1], 1);
    uint64_t want[8];
    size_t nwant;
    query_keys(db, text, want, &nwant);
    assert_int_equal(k.nkeys[1], 3);
    assert_int_equal(k.nkeys[1], nwant);
    assert_memory_equal(k.keys[1], want, nwant * sizeof want[0]);
    assert_int_equal(k.keys[1][2], a); /* last in age order now */
    assert_int_equal(k.version[1], ts_version_of(db));

    /* No change set, no keys. */
    assert_int_equal(coffer_collection_changes_result_keys(NULL, NULL, NULL), 0);
    coffer_token_stop(token);
}

TS_ENV_TEST(test_bad_handles)
{
    (void)env;
    assert_status(coffer_db_set_refresh_on_commit(NULL, 1), COFFER_ERR_INVALID_ARGUMENT);
    assert_int_equal(coffer_db_refresh_on_commit(NULL), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TS_TEST_ALL_MODES_SETUP(test_off_by_default_and_the_notifier_delivers, setup_kennel),
        TS_TEST_ALL_MODES_SETUP(test_commit_delivers_on_the_committing_thread, setup_kennel),
        TS_TEST_ALL_MODES_SETUP(test_without_notifying_holds_on_commit, setup_kennel),
        TS_TEST_ALL_MODES_SETUP(test_auto_refresh_off_or_a_scheduler_leave_it_to_them, setup_kennel),
        TS_TEST_ALL_MODES_SETUP(test_callback_committing_through_its_handle, setup_kennel),
        TS_TEST_ALL_MODES_SETUP(test_interleaved_with_another_handle_in_order, setup_kennel),
        TS_TEST_ALL_MODES_SETUP(test_result_keys_are_the_rows_at_the_new_version, setup_kennel),
        TS_TEST_MODE_SETUP(test_bad_handles, setup_kennel, ts_mode_plain, "plain"),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
