/* test_observe.c — observers and refresh: database, results, object and list
 * observers with exact change sets; delivery on the notifier thread, inside
 * coffer_db_refresh() and through a scheduler; tokens stopped from inside
 * their callback and from another thread; commits without notifying; a
 * commit of another process delivered without the observer calling
 * anything; and the errors of bad input. */
#define _GNU_SOURCE
#include "test_support.h"
#include "observe_recorder.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { DOG_ID = 0, DOG_NAME, DOG_AGE, DOG_OWNER };
enum { OWNER_ID = 0, OWNER_NAME, OWNER_DOGS };

static const coffer_property_schema dog_props[] = {
    {.name = "id", .type = COFFER_TYPE_INT, .flags = COFFER_PROPERTY_PRIMARY_KEY},
    {.name = "name", .type = COFFER_TYPE_STRING},
    {.name = "age", .type = COFFER_TYPE_INT},
    {.name = "owner", .type = COFFER_TYPE_LINK, .flags = COFFER_PROPERTY_OPTIONAL, .object_class = "Owner"},
};
static const coffer_property_schema owner_props[] = {
    {.name = "id", .type = COFFER_TYPE_INT, .flags = COFFER_PROPERTY_PRIMARY_KEY},
    {.name = "name", .type = COFFER_TYPE_STRING},
    {.name = "dogs", .type = COFFER_TYPE_LINK, .collection = COFFER_COLLECTION_LIST, .object_class = "Dog"},
};
static const coffer_class_schema kennel[] = {
    {.name = "Dog", .properties = dog_props, .property_count = 4},
    {.name = "Owner", .properties = owner_props, .property_count = 3},
};
enum { DOG = 0, OWNER = 1 };

static int setup_kennel(void **state) { return ts_setup_schema(state, kennel, 2); }

/* ------------------------------------------------------------------------ */
/* Writing                                                                    */
/* ------------------------------------------------------------------------ */

static coffer_object_key add_dog(coffer_db *db, int64_t id, const char *name, int64_t age)
{
    coffer_field f[] = {ts_field(DOG_ID, coffer_value_int(id)), ts_field(DOG_NAME, ts_str(name)),
                        ts_field(DOG_AGE, coffer_value_int(age))};
    return ts_commit_object(db, DOG, f, 3);
}

static void set_age(coffer_db *db, coffer_object_key key, int64_t age)
{
    coffer_txn *txn = ts_begin(db, COFFER_TXN_WRITE);
    coffer_object *obj;
    coffer_value v = coffer_value_int(age);
    assert_ok(coffer_object_get(txn, DOG, key, &obj));
    assert_ok(coffer_object_set_value(obj, DOG_AGE, &v));
    ts_commit(txn);
}

static void delete_dog(coffer_db *db, coffer_object_key key)
{
    coffer_txn *txn = ts_begin(db, COFFER_TXN_WRITE);
    coffer_object *obj;
    assert_ok(coffer_object_get(txn, DOG, key, &obj));
    assert_ok(coffer_object_delete(obj));
    ts_commit(txn);
}

static coffer_query *compile(coffer_db *db, const char *text)
{
    coffer_query *q;
    assert_ok(coffer_query_compile(db, DOG, text, SIZE_MAX, NULL, 0, &q));
    return q;
}

/* ------------------------------------------------------------------------ */
/* Tests                                                                      */
/* ------------------------------------------------------------------------ */

TS_ENV_TEST(test_results_in_table_order)
{
    coffer_db *db = env->db;
    coffer_object_key a = add_dog(db, 1, "a", 1), b = add_dog(db, 2, "b", 2);
    add_dog(db, 3, "c", 30); /* does not match */
    recorder r;
    recorder_init(&r);
    coffer_query *q = compile(db, "age < 10");
    coffer_token *token;
    assert_ok(coffer_query_observe(db, q, NULL, 0, on_collection, &r, &token));
    coffer_query_free(q); /* the observer keeps its own */
    wait_calls(&r, 1);
    assert_true(r.calls[0].initial);

    add_dog(db, 4, "d", 4); /* inserted at the end */
    wait_calls(&r, 2);
    EXPECT(r.calls[1].ins, r.calls[1].nins, 2);
    assert_int_equal(r.calls[1].ndel + r.calls[1].nmod, 0);

    set_age(db, b, 5); /* modified, still matching */
    wait_calls(&r, 3);
    EXPECT(r.calls[2].mod, r.calls[2].nmod, 1);
    EXPECT(r.calls[2].mod_new, r.calls[2].nmod_new, 1);

    delete_dog(db, a);
    wait_calls(&r, 4);
    EXPECT(r.calls[3].del, r.calls[3].ndel, 0);

    add_dog(db, 5, "e", 50); /* matches nothing observed: no call */
    expect_quiet(&r, 200);
    coffer_token_stop(token);
    recorder_destroy(&r);
}

TS_ENV_TEST(test_sorted_results_report_reorders)
{
    coffer_db *db = env->db;
    coffer_object_key k[3];
    for (int i = 0; i < 3; i++)
        k[i] = add_dog(db, i, "dog", 10 * (i + 1)); /* ages 10, 20, 30 */
    recorder r;
    recorder_init(&r);
    coffer_query *q = compile(db, "TRUEPREDICATE SORT(age ASC)");
    coffer_token *token;
    assert_ok(coffer_query_observe(db, q, NULL, 0, on_collection, &r, &token));
    coffer_query_free(q);
    wait_calls(&r, 1);
    set_age(db, k[0], 25); /* 20, 25, 30: row 0 moves to 1, reported as delete + insert */
    wait_calls(&r, 2);
    seen_call *c = &r.calls[1];
    assert_int_equal(c->nmoves, 0);
    assert_int_equal(c->ndel, 1);
    assert_int_equal(c->nins, 1);
    assert_int_equal(c->nmod, 0); /* a moved row is not also modified */
    set_age(db, k[2], 31); /* no reorder: a modification */
    wait_calls(&r, 3);
    EXPECT(r.calls[2].mod, r.calls[2].nmod, 2);
    coffer_token_stop(token);
    recorder_destroy(&r);
}

TS_ENV_TEST(test_object_changes_with_values)
{
    coffer_db *db = env->db;
    coffer_object_key rex = add_dog(db, 1, "Rex", 3);
    recorder r;
    recorder_init(&r);
    coffer_token *token;
    assert_ok(coffer_object_observe(db, DOG, rex, NULL, 0, on_object, &r, &token));
    wait_calls(&r, 1);
    assert_true(r.calls[0].initial);
    set_age(db, rex, 4);
    wait_calls(&r, 2);
    assert_int_equal(r.calls[1].nprops, 1);
    assert_int_equal(r.calls[1].props[0], DOG_AGE);
    assert_int_equal(r.calls[1].old_int[0], 3);
    assert_int_equal(r.calls[1].new_int[0], 4);
    add_dog(db, 2, "other", 1); /* another object: nothing */
    expect_quiet(&r, 200);
    delete_dog(db, rex);
    wait_calls(&r, 3);
    assert_true(r.calls[2].object_deleted);
    coffer_token_stop(token);
    recorder_destroy(&r);
}

TS_ENV_TEST(test_list_moves_and_element_changes)
{
    coffer_db *db = env->db;
    coffer_object_key dogs[4];
    for (int i = 0; i < 4; i++)
        dogs[i] = add_dog(db, i, "dog", i);
    coffer_txn *txn = ts_begin(db, COFFER_TXN_WRITE);
    coffer_field f[] = {ts_field(OWNER_ID, coffer_value_int(1)), ts_field(OWNER_NAME, ts_str("Ann"))};
    coffer_object *owner = ts_create(txn, OWNER, f, 2);
    coffer_object_key ann = coffer_object_key_of(owner);
    coffer_list *list;
    assert_ok(coffer_object_get_list(owner, OWNER_DOGS, &list));
    for (int i = 0; i < 4; i++) {
        coffer_value link = coffer_value_link(DOG, dogs[i]);
        assert_ok(coffer_list_append(list, &link));
    }
    ts_commit(txn);

    recorder r;
    recorder_init(&r);
    coffer_token *token;
    assert_ok(coffer_list_observe(db, OWNER, ann, OWNER_DOGS, NULL, 0, on_collection, &r, &token));
    wait_calls(&r, 1);

    txn = ts_begin(db, COFFER_TXN_WRITE);
    assert_ok(coffer_object_get(txn, OWNER, ann, &owner));
    assert_ok(coffer_object_get_list(owner, OWNER_DOGS, &list));
    assert_ok(coffer_list_move(list, 0, 2));
    ts_commit(txn);
    wait_calls(&r, 2);
    assert_int_equal(r.calls[1].nmoves, 1);
    assert_int_equal(r.calls[1].from[0], 0);
    assert_int_equal(r.calls[1].to[0], 2);

    set_age(db, dogs[3], 99); /* an element's object changed: a modification at 3 */
    wait_calls(&r, 3);
    EXPECT(r.calls[2].mod, r.calls[2].nmod, 3);

    txn = ts_begin(db, COFFER_TXN_WRITE);
    assert_ok(coffer_object_get(txn, OWNER, ann, &owner));
    assert_ok(coffer_object_delete(owner));
    ts_commit(txn);
    wait_calls(&r, 4);
    assert_true(r.calls[3].root_deleted);
    EXPECT(r.calls[3].del, r.calls[3].ndel, 0, 1, 2, 3);
    coffer_token_stop(token);
    recorder_destroy(&r);
}

TS_ENV_TEST(test_key_paths_filter)
{
    coffer_db *db = env->db;
    coffer_object_key rex = add_dog(db, 1, "Rex", 3);
    recorder by_name, shallow;
    recorder_init(&by_name);
    recorder_init(&shallow);
    coffer_query *q = compile(db, "TRUEPREDICATE");
    const char *name_path[] = {"name"};
    coffer_token *t1, *t2;
    assert_ok(coffer_query_observe(db, q, name_path, 1, on_collection, &by_name, &t1));
    assert_ok(coffer_query_observe(db, q, name_path, 0, on_collection, &shallow, &t2));
    wait_calls(&by_name, 1);
    wait_calls(&shallow, 1);
    set_age(db, rex, 4); /* not on the path */
    add_dog(db, 2, "Fido", 1); /* an insertion counts for both */
    wait_calls(&by_name, 2);
    wait_calls(&shallow, 2);
    expect_quiet(&by_name, 200);
    /* Both saw only the insertion; the age change went untold. */
    for (int i = 1; i < calls_of(&by_name); i++)
        assert_int_equal(by_name.calls[i].nmod, 0);
    coffer_token_stop(t1);
    coffer_token_stop(t2);

    const char *bad[] = {"owner.nmae"};
    coffer_token *t3;
    assert_status(coffer_query_observe(db, q, bad, 1, on_collection, &by_name, &t3), COFFER_ERR_QUERY);
    assert_error_contains("owner.nmae");
    assert_error_contains("nmae");
    const char *not_link[] = {"name.length"};
    assert_status(coffer_query_observe(db, q, not_link, 1, on_collection, &by_name, &t3), COFFER_ERR_QUERY);
    assert_error_contains("not a link");
    coffer_query_free(q);
    recorder_destroy(&by_name);
    recorder_destroy(&shallow);
}

TS_ENV_TEST(test_delivery_inside_refresh)
{
    coffer_db *db = env->db;
    assert_ok(coffer_db_set_auto_refresh(db, 0));
    assert_int_equal(coffer_db_auto_refresh(db), 0);
    recorder r;
    recorder_init(&r);
    coffer_token *token;
    assert_ok(coffer_db_observe(db, on_db, &r, &token)); /* fixes the handle's version */
    uint64_t before, after;
    assert_ok(coffer_db_version(db, &before));
    add_dog(db, 1, "a", 1);
    expect_quiet(&r, 200); /* nothing without a refresh */
    assert_ok(coffer_db_refresh(db));
    assert_int_equal(calls_of(&r), 1);
    add_dog(db, 2, "b", 2);
    assert_ok(coffer_db_refresh(db));
    assert_ok(coffer_db_refresh(db)); /* nothing new: no call */
    assert_int_equal(calls_of(&r), 2);
    assert_true(pthread_equal(r.calls[0].thread, pthread_self()));
    assert_true(pthread_equal(r.calls[1].thread, pthread_self()));
    assert_ok(coffer_db_version(db, &after));
    assert_int_equal(after, before + 2);
    /* The handle pins its version while observed, and not after. */
    add_dog(db, 3, "c", 3);
    uint64_t live;
    assert_ok(coffer_db_active_versions(db, &live));
    assert_int_equal(live, 2);
    coffer_token_stop(token);
    assert_ok(coffer_db_active_versions(db, &live));
    assert_int_equal(live, 1);
    recorder_destroy(&r);
}

/* A scheduler that queues work for the test's own loop. */
typedef struct queue {
    pthread_mutex_t lock;
    coffer_work_fn work[16];
    void *arg[16];
    int n;
} queue;

static void post_to_queue(void *ctx, coffer_work_fn work, void *arg)
{
    queue *q = ctx;
    pthread_mutex_lock(&q->lock);
    q->work[q->n] = work;
    q->arg[q->n] = arg;
    q->n++;
    pthread_mutex_unlock(&q->lock);
}

static int run_queue(queue *q)
{
    pthread_mutex_lock(&q->lock);
    int n = q->n;
    coffer_work_fn work[16];
    void *arg[16];
    memcpy(work, q->work, sizeof work);
    memcpy(arg, q->arg, sizeof arg);
    q->n = 0;
    pthread_mutex_unlock(&q->lock);
    for (int i = 0; i < n; i++)
        work[i](arg[i]);
    return n;
}

TS_ENV_TEST(test_delivery_through_a_scheduler)
{
    coffer_db *db = env->db;
    queue q = {.n = 0};
    pthread_mutex_init(&q.lock, NULL);
    assert_ok(coffer_db_set_scheduler(db, post_to_queue, &q));
    recorder r;
    recorder_init(&r);
    coffer_token *token;
    coffer_query *query = compile(db, "TRUEPREDICATE");
    assert_ok(coffer_query_observe(db, query, NULL, 0, on_collection, &r, &token));
    coffer_query_free(query);
    for (int i = 0; i < 250 && !run_queue(&q); i++)
        usleep(20000);
    assert_int_equal(calls_of(&r), 1);
    assert_true(pthread_equal(r.calls[0].thread, pthread_self()));
    add_dog(db, 1, "a", 1);
    for (int i = 0; i < 250 && calls_of(&r) < 2; i++) {
        run_queue(&q);
        usleep(20000);
    }
    assert_int_equal(calls_of(&r), 2);
    EXPECT(r.calls[1].ins, r.calls[1].nins, 0);
    assert_true(pthread_equal(r.calls[1].thread, pthread_self()));
    coffer_token_stop(token);
    /* Work posted before closing does nothing once it runs. */
    add_dog(db, 2, "b", 2);
    usleep(100000);
    ts_env_close(env);
    run_queue(&q);
    pthread_mutex_destroy(&q.lock);
    recorder_destroy(&r);
}

TS_ENV_TEST(test_stop_inside_and_from_another_thread)
{
    coffer_db *db = env->db;
    /* Stopped by its own callback at its second call: no third. */
    recorder self;
    recorder_init(&self);
    self.stop_inside_after = 2;
    assert_ok(coffer_db_observe(db, on_db, &self, &self.token));
    add_dog(db, 1, "a", 1);
    wait_calls(&self, 1);
    add_dog(db, 2, "b", 2);
    wait_calls(&self, 2);
    add_dog(db, 3, "c", 3);
    expect_quiet(&self, 300);

    /* Stopped while its callback runs on the notifier thread: the stop waits
     * for it, and nothing comes after. */
    recorder slow;
    recorder_init(&slow);
    slow.sleep_ms = 300;
    coffer_token *token;
    assert_ok(coffer_db_observe(db, on_db, &slow, &token));
    add_dog(db, 4, "d", 4);
    while (!slow.in_callback)
        usleep(1000);
    coffer_token_stop(token);
    assert_false(slow.in_callback);
    int calls = calls_of(&slow);
    add_dog(db, 5, "e", 5);
    expect_quiet(&slow, 300);
    assert_int_equal(calls_of(&slow), calls);
    recorder_destroy(&self);
    recorder_destroy(&slow);
}

TS_ENV_TEST(test_commit_without_notifying)
{
    coffer_db *db = env->db;
    coffer_query *q = compile(db, "TRUEPREDICATE");
    recorder told, untold;
    recorder_init(&told);
    recorder_init(&untold);
    coffer_token *t_told, *t_untold;
    assert_ok(coffer_query_observe(db, q, NULL, 0, on_collection, &told, &t_told));
    assert_ok(coffer_query_observe(db, q, NULL, 0, on_collection, &untold, &t_untold));
    coffer_query_free(q);
    wait_calls(&told, 1);
    wait_calls(&untold, 1);
    coffer_object_key a = add_dog(db, 1, "a", 1);
    wait_calls(&told, 2);
    wait_calls(&untold, 2);
    coffer_txn *txn = ts_begin(db, COFFER_TXN_WRITE);
    coffer_object *obj;
    coffer_value v = coffer_value_int(7);
    assert_ok(coffer_object_get(txn, DOG, a, &obj));
    assert_ok(coffer_object_set_value(obj, DOG_AGE, &v));
    assert_ok(coffer_txn_commit_without_notifying(txn, &t_untold, 1));
    coffer_txn_free(txn);
    wait_calls(&told, 3);
    expect_quiet(&untold, 300);
    EXPECT(told.calls[2].mod, told.calls[2].nmod, 0);
    coffer_token_stop(t_told);
    coffer_token_stop(t_untold);
    recorder_destroy(&told);
    recorder_destroy(&untold);
}

/* A commit of another process wakes the observer; this thread calls nothing. */
TS_ENV_TEST(test_commit_of_another_process)
{
    if (env->mode == TS_MEMORY)
        skip(); /* an in-memory store lives in one process */
    coffer_db *db = env->db;
    recorder r;
    recorder_init(&r);
    coffer_token *token;
    assert_ok(coffer_db_observe(db, on_db, &r, &token));
    usleep(50000);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        coffer_db *other;
        if (ts_env_open(env, kennel, 2, 1, &other) != COFFER_OK)
            _exit(2);
        coffer_txn *txn;
        coffer_field f[] = {{DOG_ID, coffer_value_int(77)}, {DOG_NAME, coffer_value_string("far", SIZE_MAX)}};
        if (coffer_txn_begin(other, COFFER_TXN_WRITE, &txn) != COFFER_OK ||
            coffer_object_create(txn, DOG, f, 2, COFFER_UPDATE_ERROR, NULL) != COFFER_OK ||
            coffer_txn_commit(txn) != COFFER_OK)
            _exit(3);
        coffer_txn_free(txn);
        coffer_close(other);
        _exit(0);
    }
    int status;
    waitpid(child, &status, 0);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    wait_calls(&r, 1);
    coffer_token_stop(token);
    recorder_destroy(&r);
}

/* A token outlives its closed handle: stopping it later is safe and frees it. */
TS_ENV_TEST(test_token_stopped_after_close)
{
    recorder r;
    recorder_init(&r);
    coffer_token *token;
    coffer_query *q = compile(env->db, "TRUEPREDICATE");
    assert_ok(coffer_query_observe(env->db, q, NULL, 0, on_collection, &r, &token));
    coffer_query_free(q);
    wait_calls(&r, 1);
    ts_env_close(env);
    int calls = calls_of(&r);
    coffer_token_stop(token);
    assert_int_equal(calls_of(&r), calls);
    recorder_destroy(&r);
}

TS_ENV_TEST(test_bad_input)
{
    coffer_db *db = env->db;
    recorder r;
    recorder_init(&r);
    coffer_token *token = (coffer_token *)1;
    assert_status(coffer_db_observe(NULL, on_db, &r, &token), COFFER_ERR_INVALID_ARGUMENT);
    assert_status(coffer_db_observe(db, NULL, &r, &token), COFFER_ERR_INVALID_ARGUMENT);
    assert_null(token);
    assert_status(coffer_object_observe(db, 9, 1, NULL, 0, on_object, &r, &token), COFFER_ERR_INVALID_ARGUMENT);
    assert_status(coffer_object_observe(db, DOG, 12345, NULL, 0, on_object, &r, &token), COFFER_ERR_NOT_FOUND);
    assert_error_contains("12345");
    assert_status(coffer_list_observe(db, DOG, 1, DOG_NAME, NULL, 0, on_collection, &r, &token), COFFER_ERR_TYPE);
    assert_error_contains("not a list");
    assert_status(coffer_list_observe(db, OWNER, 1, 9, NULL, 0, on_collection, &r, &token),
                  COFFER_ERR_INVALID_ARGUMENT);
    coffer_collection_changes *none = NULL;
    assert_int_equal(coffer_collection_changes_count(none, COFFER_CHANGE_DELETIONS), 0);
    uint64_t from, to;
    assert_status(coffer_collection_changes_move(none, 0, &from, &to), COFFER_ERR_INVALID_ARGUMENT);
    assert_status(coffer_db_version(db, NULL), COFFER_ERR_INVALID_ARGUMENT);
    coffer_token_stop(NULL);
    recorder_destroy(&r);
}

int main(void)
{
    if (getenv("OBSERVE_FILTER"))
        cmocka_set_test_filter(getenv("OBSERVE_FILTER"));
    const struct CMUnitTest tests[] = {
        TS_TEST_ALL_MODES_SETUP(test_results_in_table_order, setup_kennel),
        TS_TEST_ALL_MODES_SETUP(test_sorted_results_report_reorders, setup_kennel),
        TS_TEST_ALL_MODES_SETUP(test_object_changes_with_values, setup_kennel),
        TS_TEST_ALL_MODES_SETUP(test_list_moves_and_element_changes, setup_kennel),
        TS_TEST_ALL_MODES_SETUP(test_key_paths_filter, setup_kennel),
        TS_TEST_ALL_MODES_SETUP(test_delivery_inside_refresh, setup_kennel),
        TS_TEST_ALL_MODES_SETUP(test_delivery_through_a_scheduler, setup_kennel),
        TS_TEST_ALL_MODES_SETUP(test_stop_inside_and_from_another_thread, setup_kennel),
        TS_TEST_ALL_MODES_SETUP(test_commit_without_notifying, setup_kennel),
        TS_TEST_ALL_MODES_SETUP(test_commit_of_another_process, setup_kennel),
        TS_TEST_ALL_MODES_SETUP(test_token_stopped_after_close, setup_kennel),
        TS_TEST_ALL_MODES_SETUP(test_bad_input, setup_kennel),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
