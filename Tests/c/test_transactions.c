/* test_transactions.c — snapshots, commit/abort state machine, misuse,
 * NULL handles, closed databases and threads.
 * Most tests run on plain, encrypted and in-memory databases. */
#define _GNU_SOURCE
#include "test_support.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* ------------------------------------------------------------------------ */

TS_ENV_TEST(test_snapshot_isolation)
{
    ts_commit_person(env->db, env->person, 1, "one");

    coffer_txn *old = ts_begin(env->db, COFFER_TXN_READ);
    assert_int_equal(ts_count(old, env->person), 1);

    /* a write in progress is invisible to readers */
    coffer_txn *w = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_object_key k2 = ts_add_person(w, env->person, 2, "two");
    coffer_object *p1 = NULL;
    coffer_value one = coffer_value_int(1);
    assert_ok(coffer_object_find(w, env->person, &one, &p1));
    coffer_value renamed = ts_str("ONE");
    assert_ok(coffer_object_set_value(p1, PERSON_NAME, &renamed));
    coffer_txn *during = ts_begin(env->db, COFFER_TXN_READ);
    assert_int_equal(ts_count(during, env->person), 1);
    ts_commit(w);

    /* the old snapshots do not see the commit */
    assert_int_equal(ts_count(old, env->person), 1);
    assert_int_equal(ts_count(during, env->person), 1);
    coffer_object *obj = NULL;
    assert_status(coffer_object_get(old, env->person, k2, &obj), COFFER_ERR_NOT_FOUND);
    assert_ok(coffer_object_find(old, env->person, &one, &obj));
    assert_string_equal(ts_get_string(obj, PERSON_NAME, NULL), "one");
    coffer_value two = coffer_value_int(2);
    assert_status(coffer_object_find(during, env->person, &two, &obj), COFFER_ERR_NOT_FOUND);
    coffer_iter *it = NULL;
    coffer_value name = ts_str("ONE");
    assert_ok(coffer_index_find(old, env->person, PERSON_NAME, &name, &it));
    assert_status(coffer_iter_next(it, &obj), COFFER_DONE);
    coffer_iter_free(it);

    /* a new one does */
    coffer_txn *fresh = ts_begin(env->db, COFFER_TXN_READ);
    assert_int_equal(ts_count(fresh, env->person), 2);
    assert_ok(coffer_object_get(fresh, env->person, k2, &obj));
    assert_ok(coffer_object_find(fresh, env->person, &one, &obj));
    assert_string_equal(ts_get_string(obj, PERSON_NAME, NULL), "ONE");
    coffer_txn_free(fresh);
    coffer_txn_free(during);
    coffer_txn_free(old);
}

/* Two handles on the same storage: snapshots across handles. */
TS_ENV_TEST(test_snapshot_across_handles)
{
    coffer_db *other = NULL;
    assert_ok(ts_env_open(env, ts_std_schema, TS_STD_SCHEMA_COUNT, 1, &other));
    coffer_txn *old = ts_begin(other, COFFER_TXN_READ);
    ts_commit_person(env->db, env->person, 1, "x");
    assert_int_equal(ts_count(old, env->person), 0);
    coffer_txn *fresh = ts_begin(other, COFFER_TXN_READ);
    assert_int_equal(ts_count(fresh, env->person), 1);
    coffer_txn_free(fresh);
    coffer_txn_free(old);
    coffer_close(other);
}

TS_ENV_TEST(test_abort_discards)
{
    ts_commit_person(env->db, env->person, 1, "kept");

    coffer_txn *w = ts_begin(env->db, COFFER_TXN_WRITE);
    ts_add_person(w, env->person, 2, "discarded");
    coffer_object *obj = NULL;
    coffer_value one = coffer_value_int(1);
    assert_ok(coffer_object_find(w, env->person, &one, &obj));
    coffer_value v = ts_str("changed");
    assert_ok(coffer_object_set_value(obj, PERSON_NAME, &v));
    assert_ok(coffer_class_clear(w, env->all_types));
    assert_int_equal(coffer_txn_is_active(w), 1);
    assert_int_equal(coffer_txn_is_write(w), 1);
    assert_ok(coffer_txn_abort(w));
    assert_int_equal(coffer_txn_is_active(w), 0);
    assert_int_equal(coffer_txn_is_write(w), 0);
    coffer_txn_free(w);

    coffer_txn *r = ts_begin(env->db, COFFER_TXN_READ);
    assert_int_equal(ts_count(r, env->person), 1);
    assert_ok(coffer_object_find(r, env->person, &one, &obj));
    assert_string_equal(ts_get_string(obj, PERSON_NAME, NULL), "kept");
    coffer_value two = coffer_value_int(2);
    assert_status(coffer_object_find(r, env->person, &two, &obj), COFFER_ERR_NOT_FOUND);
    coffer_txn_free(r);

    /* freeing an active write transaction aborts it and releases the lock */
    w = ts_begin(env->db, COFFER_TXN_WRITE);
    ts_add_person(w, env->person, 3, "freed");
    coffer_txn_free(w);
    w = ts_begin(env->db, COFFER_TXN_WRITE);
    assert_int_equal(ts_count(w, env->person), 1);
    ts_commit(w);
}

TS_ENV_TEST(test_state_machine)
{
    coffer_txn *w = ts_begin(env->db, COFFER_TXN_WRITE);
    assert_int_equal(coffer_txn_is_write(w), 1);
    assert_int_equal(coffer_txn_is_active(w), 1);
    ts_add_person(w, env->person, 1, "a");
    assert_ok(coffer_txn_commit(w));
    assert_int_equal(coffer_txn_is_active(w), 0);
    assert_int_equal(coffer_txn_is_write(w), 0);
    assert_status(coffer_txn_commit(w), COFFER_ERR_MISUSE);
    assert_status(coffer_txn_abort(w), COFFER_ERR_MISUSE);
    /* the ended transaction's calls give MISUSE */
    uint64_t n;
    assert_status(coffer_class_count(w, env->person, &n), COFFER_ERR_MISUSE);
    coffer_object *obj = NULL;
    assert_status(coffer_object_get(w, env->person, 1, &obj), COFFER_ERR_MISUSE);
    assert_status(coffer_object_create(w, env->all_types, NULL, 0, COFFER_UPDATE_ERROR, NULL), COFFER_ERR_MISUSE);
    coffer_txn_free(w);

    w = ts_begin(env->db, COFFER_TXN_WRITE);
    assert_ok(coffer_txn_abort(w));
    assert_status(coffer_txn_abort(w), COFFER_ERR_MISUSE);
    assert_status(coffer_txn_commit(w), COFFER_ERR_MISUSE);
    coffer_txn_free(w);

    /* read transactions: commit just ends them */
    coffer_txn *r = ts_begin(env->db, COFFER_TXN_READ);
    assert_int_equal(coffer_txn_is_write(r), 0);
    assert_int_equal(coffer_txn_is_active(r), 1);
    assert_int_equal(ts_count(r, env->person), 1);
    assert_ok(coffer_txn_commit(r));
    assert_int_equal(coffer_txn_is_active(r), 0);
    assert_status(coffer_txn_commit(r), COFFER_ERR_MISUSE);
    assert_status(coffer_txn_abort(r), COFFER_ERR_MISUSE);
    assert_status(coffer_class_count(r, env->person, &n), COFFER_ERR_MISUSE);
    coffer_txn_free(r);

    r = ts_begin(env->db, COFFER_TXN_READ);
    assert_ok(coffer_txn_abort(r));
    assert_status(coffer_txn_abort(r), COFFER_ERR_MISUSE);
    coffer_txn_free(r);
}

/* Objects and iterators of an ended transaction give MISUSE. */
TS_ENV_TEST(test_handles_after_end)
{
    coffer_txn *w = ts_begin(env->db, COFFER_TXN_WRITE);
    for (int i = 0; i < 3; i++)
        ts_add_person(w, env->person, i, "p");
    ts_commit(w);

    coffer_txn *r = ts_begin(env->db, COFFER_TXN_READ);
    coffer_object *obj = NULL;
    assert_ok(coffer_object_get(r, env->person, 1, &obj));
    coffer_iter *it = NULL;
    assert_ok(coffer_class_iterate(r, env->person, &it));
    coffer_object *step = NULL;
    assert_ok(coffer_iter_next(it, &step));
    assert_ok(coffer_txn_commit(r));
    coffer_value v;
    assert_status(coffer_object_get_value(obj, PERSON_NAME, &v), COFFER_ERR_MISUSE);
    assert_status(coffer_iter_next(it, &step), COFFER_ERR_MISUSE);
    assert_int_equal(coffer_object_is_valid(obj), 0);
    coffer_object_release(obj);
    coffer_iter_free(it);
    coffer_txn_free(r);

    w = ts_begin(env->db, COFFER_TXN_WRITE);
    assert_ok(coffer_object_get(w, env->person, 1, &obj));
    assert_ok(coffer_txn_abort(w));
    coffer_value nv = ts_str("late");
    assert_status(coffer_object_set_value(obj, PERSON_NAME, &nv), COFFER_ERR_MISUSE);
    assert_status(coffer_object_delete(obj), COFFER_ERR_MISUSE);
    coffer_field f[] = {ts_field(PERSON_NAME, nv)};
    assert_status(coffer_object_set_fields(obj, f, 1), COFFER_ERR_MISUSE);
    assert_status(coffer_object_get_value(obj, PERSON_NAME, &v), COFFER_ERR_MISUSE);
    coffer_txn_free(w);
}

TS_ENV_TEST(test_writes_in_read_txn)
{
    ts_commit_person(env->db, env->person, 1, "a");

    coffer_txn *r = ts_begin(env->db, COFFER_TXN_READ);
    coffer_field f[] = {ts_field(PERSON_ID, coffer_value_int(2))};
    assert_status(coffer_object_create(r, env->person, f, 1, COFFER_UPDATE_ERROR, NULL), COFFER_ERR_NOT_IN_WRITE);
    assert_status(coffer_object_create(r, env->person, f, 1, COFFER_UPDATE_ALL, NULL), COFFER_ERR_NOT_IN_WRITE);
    coffer_object *obj = NULL;
    assert_ok(coffer_object_get(r, env->person, 1, &obj));
    coffer_value v = ts_str("b");
    assert_status(coffer_object_set_value(obj, PERSON_NAME, &v), COFFER_ERR_NOT_IN_WRITE);
    coffer_field g[] = {ts_field(PERSON_NAME, v)};
    assert_status(coffer_object_set_fields(obj, g, 1), COFFER_ERR_NOT_IN_WRITE);
    assert_status(coffer_object_delete(obj), COFFER_ERR_NOT_IN_WRITE);
    assert_status(coffer_class_clear(r, env->person), COFFER_ERR_NOT_IN_WRITE);
    /* nothing changed, and the read transaction still works */
    assert_int_equal(coffer_object_is_valid(obj), 1);
    assert_string_equal(ts_get_string(obj, PERSON_NAME, NULL), "a");
    assert_int_equal(ts_count(r, env->person), 1);
    assert_ok(coffer_txn_commit(r));
    coffer_txn_free(r);
}

TS_ENV_TEST(test_second_write_same_thread)
{
    coffer_txn *w = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_txn *w2 = NULL;
    assert_status(coffer_txn_begin(env->db, COFFER_TXN_WRITE, &w2), COFFER_ERR_MISUSE);
    assert_null(w2);
    /* also through a second handle on the same storage */
    coffer_db *other = NULL;
    assert_ok(ts_env_open(env, NULL, 0, 0, &other));
    assert_status(coffer_txn_begin(other, COFFER_TXN_WRITE, &w2), COFFER_ERR_MISUSE);
    /* reads are fine meanwhile, on both handles */
    coffer_txn *r = ts_begin(env->db, COFFER_TXN_READ);
    coffer_txn *r2 = ts_begin(other, COFFER_TXN_READ);
    ts_add_person(w, env->person, 1, "a");
    assert_int_equal(ts_count(r, env->person), 0);
    ts_commit(w);
    assert_int_equal(ts_count(r2, env->person), 0);
    coffer_txn_free(r);
    coffer_txn_free(r2);
    /* after the commit a new write transaction is fine, on either handle */
    w = ts_begin(other, COFFER_TXN_WRITE);
    assert_int_equal(ts_count(w, env->person), 1);
    ts_commit(w);
    w = ts_begin(env->db, COFFER_TXN_WRITE);
    assert_ok(coffer_txn_abort(w));
    coffer_txn_free(w);
    coffer_close(other);
}

TS_ENV_TEST(test_many_read_txns)
{
    enum { N = 20 };
    coffer_txn *r[N];
    for (int i = 0; i < N; i++) {
        r[i] = ts_begin(env->db, COFFER_TXN_READ);
        ts_commit_person(env->db, env->person, i, "x");
    }
    for (int i = 0; i < N; i++)
        assert_int_equal(ts_count(r[i], env->person), (uint64_t)i);
    for (int i = 0; i < N; i++)
        coffer_txn_free(r[i]);
}

/* Read transactions up to the reader limit: beyond it COFFER_ERR_LIMIT (or
 * success if the limit is high), never a crash; afterwards all is normal. */
TS_ENV_TEST(test_many_readers)
{
    enum { N = 300 };
    coffer_txn **r = calloc(N, sizeof *r);
    int opened = 0;
    coffer_status st = COFFER_OK;
    for (; opened < N; opened++) {
        st = coffer_txn_begin(env->db, COFFER_TXN_READ, &r[opened]);
        if (st != COFFER_OK)
            break;
    }
    if (st != COFFER_OK) {
        print_message("    %d read transactions at once; then status %d\n", opened, (int)st);
        assert_status(st, COFFER_ERR_LIMIT);
        assert_true(opened >= 100);
    }
    for (int i = 0; i < opened; i++)
        assert_int_equal(ts_count(r[i], env->person), 0);
    for (int i = 0; i < opened; i++)
        coffer_txn_free(r[i]);
    free(r);
    ts_commit_person(env->db, env->person, 1, "after many readers");
    assert_int_equal(ts_count_of(env->db, "Person"), 1);
}

/* Closing the database makes its transactions and objects unusable. */
TS_ENV_TEST(test_use_after_close)
{
    ts_commit_person(env->db, env->person, 1, "a");

    coffer_db *db = NULL;
    assert_ok(ts_env_open(env, ts_std_schema, TS_STD_SCHEMA_COUNT, 1, &db));
    coffer_txn *r = ts_begin(db, COFFER_TXN_READ);
    coffer_object *obj = NULL;
    assert_ok(coffer_object_get(r, env->person, 1, &obj));
    coffer_iter *it = NULL;
    assert_ok(coffer_class_iterate(r, env->person, &it));
    coffer_txn *w = ts_begin(db, COFFER_TXN_WRITE);
    coffer_object *wobj = NULL;
    assert_ok(coffer_object_get(w, env->person, 1, &wobj));
    coffer_value v = ts_str("not committed");
    assert_ok(coffer_object_set_value(wobj, PERSON_NAME, &v));

    coffer_close(db);

    coffer_value got;
    assert_status(coffer_object_get_value(obj, PERSON_NAME, &got), COFFER_ERR_MISUSE);
    coffer_object *step = NULL;
    assert_status(coffer_iter_next(it, &step), COFFER_ERR_MISUSE);
    uint64_t n;
    assert_status(coffer_class_count(r, env->person, &n), COFFER_ERR_MISUSE);
    assert_status(coffer_object_get(r, env->person, 1, &step), COFFER_ERR_MISUSE);
    assert_status(coffer_txn_commit(r), COFFER_ERR_MISUSE);
    assert_status(coffer_object_set_value(wobj, PERSON_NAME, &v), COFFER_ERR_MISUSE);
    assert_status(coffer_object_create(w, env->person, NULL, 0, COFFER_UPDATE_ERROR, NULL), COFFER_ERR_MISUSE);
    assert_status(coffer_txn_commit(w), COFFER_ERR_MISUSE);
    assert_status(coffer_txn_abort(w), COFFER_ERR_MISUSE);
    assert_int_equal(coffer_txn_is_active(w), 0);
    assert_int_equal(coffer_txn_is_active(r), 0);
    coffer_object_release(obj);
    coffer_iter_free(it);
    coffer_txn_free(r);
    coffer_txn_free(w);

    /* the other handle is unaffected; the aborted write did not land and
     * the write lock is free */
    r = ts_begin(env->db, COFFER_TXN_READ);
    assert_ok(coffer_object_get(r, env->person, 1, &obj));
    assert_string_equal(ts_get_string(obj, PERSON_NAME, NULL), "a");
    coffer_txn_free(r);
    ts_commit_person(env->db, env->person, 2, "b");
}

/* Closing the only handle (the storage is released) with transactions open. */
TS_ENV_TEST(test_close_last_handle_with_open_txns)
{
    coffer_txn *r = ts_begin(env->db, COFFER_TXN_READ);
    coffer_txn *w = ts_begin(env->db, COFFER_TXN_WRITE);
    ts_add_person(w, env->person, 1, "a");
    ts_env_close(env);
    uint64_t n;
    assert_status(coffer_class_count(r, env->person, &n), COFFER_ERR_MISUSE);
    assert_status(coffer_txn_commit(w), COFFER_ERR_MISUSE);
    coffer_txn_free(w);
    coffer_txn_free(r);
    /* reopen: the write was not committed */
    assert_ok(ts_env_open(env, ts_std_schema, TS_STD_SCHEMA_COUNT, 1, &env->db));
    assert_int_equal(ts_count_of(env->db, "Person"), 0);
    ts_commit_person(env->db, env->person, 1, "a");
}

TS_ENV_TEST(test_null_handles)
{
    coffer_txn *txn = NULL;
    assert_status(coffer_txn_begin(NULL, COFFER_TXN_READ, &txn), COFFER_ERR_INVALID_ARGUMENT);
    assert_status(coffer_txn_begin(env->db, COFFER_TXN_READ, NULL), COFFER_ERR_INVALID_ARGUMENT);
    assert_status(coffer_txn_begin(env->db, 2, &txn), COFFER_ERR_INVALID_ARGUMENT);
    assert_status(coffer_txn_begin(env->db, -1, &txn), COFFER_ERR_INVALID_ARGUMENT);
    assert_status(coffer_txn_commit(NULL), COFFER_ERR_INVALID_ARGUMENT);
    assert_status(coffer_txn_abort(NULL), COFFER_ERR_INVALID_ARGUMENT);
    coffer_txn_free(NULL);
    assert_int_equal(coffer_txn_is_write(NULL), 0);
    assert_int_equal(coffer_txn_is_active(NULL), 0);

    coffer_object *obj = NULL;
    coffer_value v = coffer_value_int(1);
    coffer_field f[] = {ts_field(0, v)};
    assert_status(coffer_object_create(NULL, env->person, f, 1, COFFER_UPDATE_ERROR, &obj),
                  COFFER_ERR_INVALID_ARGUMENT);
    assert_status(coffer_object_get(NULL, env->person, 1, &obj), COFFER_ERR_INVALID_ARGUMENT);
    assert_status(coffer_object_find(NULL, env->person, &v, &obj), COFFER_ERR_INVALID_ARGUMENT);
    coffer_object_release(NULL);
    (void)coffer_object_key_of(NULL);
    (void)coffer_object_class(NULL);
    assert_status(coffer_object_get_value(NULL, 0, &v), COFFER_ERR_INVALID_ARGUMENT);
    assert_status(coffer_object_set_value(NULL, 0, &v), COFFER_ERR_INVALID_ARGUMENT);
    assert_status(coffer_object_set_fields(NULL, f, 1), COFFER_ERR_INVALID_ARGUMENT);
    assert_status(coffer_object_delete(NULL), COFFER_ERR_INVALID_ARGUMENT);
    assert_int_equal(coffer_object_is_valid(NULL), 0);
    uint64_t n;
    assert_status(coffer_class_count(NULL, env->person, &n), COFFER_ERR_INVALID_ARGUMENT);
    assert_status(coffer_class_clear(NULL, env->person), COFFER_ERR_INVALID_ARGUMENT);
    coffer_iter *it = NULL;
    assert_status(coffer_class_iterate(NULL, env->person, &it), COFFER_ERR_INVALID_ARGUMENT);
    assert_status(coffer_index_find(NULL, env->person, PERSON_NAME, &v, &it), COFFER_ERR_INVALID_ARGUMENT);
    assert_status(coffer_iter_next(NULL, &obj), COFFER_ERR_INVALID_ARGUMENT);
    coffer_iter_free(NULL);

    coffer_txn *r = ts_begin(env->db, COFFER_TXN_READ);
    assert_ok(coffer_class_iterate(r, env->person, &it));
    assert_status(coffer_iter_next(it, NULL), COFFER_ERR_INVALID_ARGUMENT);
    coffer_txn_free(r);

    assert_null(coffer_db_path(NULL));
    (void)coffer_db_schema_version(NULL);
    assert_int_equal(coffer_db_is_encrypted(NULL), 0);
    (void)coffer_db_is_read_only(NULL);
    assert_int_equal(coffer_db_class_count(NULL), 0);
    coffer_class_id cid;
    assert_status(coffer_db_find_class(NULL, "Person", &cid), COFFER_ERR_INVALID_ARGUMENT);
    assert_null(coffer_db_class_schema(NULL, 0));
    coffer_property_id pid;
    assert_status(coffer_db_find_property(NULL, 0, "id", &pid), COFFER_ERR_INVALID_ARGUMENT);
    assert_status(coffer_db_primary_key(NULL, 0, &pid), COFFER_ERR_INVALID_ARGUMENT);
}

/* A failed call inside a write transaction leaves it usable. */
TS_ENV_TEST(test_error_keeps_txn_usable)
{
    coffer_txn *w = ts_begin(env->db, COFFER_TXN_WRITE);
    ts_add_person(w, env->person, 1, "a");
    coffer_field dup[] = {ts_field(PERSON_ID, coffer_value_int(1))};
    assert_status(coffer_object_create(w, env->person, dup, 1, COFFER_UPDATE_ERROR, NULL),
                  COFFER_ERR_PRIMARY_KEY_EXISTS);
    coffer_field bad[] = {ts_field(PERSON_ID, ts_str("x"))};
    assert_status(coffer_object_create(w, env->person, bad, 1, COFFER_UPDATE_ERROR, NULL), COFFER_ERR_TYPE);
    assert_int_equal(coffer_txn_is_active(w), 1);
    ts_add_person(w, env->person, 2, "b");
    ts_commit(w);
    assert_int_equal(ts_count_of(env->db, "Person"), 2);
}

/* ------------------------------------------------------------------------ */
/* Threads                                                                   */
/* ------------------------------------------------------------------------ */

/* Failures seen by a worker thread: how many, and the last one. */
typedef struct thread_failures {
    int count;
    char last[256];
} thread_failures;

static void note_failure(thread_failures *f, coffer_status st)
{
    f->count++;
    snprintf(f->last, sizeof f->last, "%d: %s", (int)st, coffer_last_error());
}

static void assert_no_failures(const thread_failures *f, int thread)
{
    if (f->count)
        print_error("thread %d: %d failures, last %s\n", thread, f->count, f->last);
    assert_int_equal(f->count, 0);
}

typedef struct thread_ctx {
    coffer_db *db;
    coffer_class_id person;
    coffer_txn *txn;          /* for cross-thread use */
    atomic_int first_committed;
    atomic_int began;
    int saw_committed_flag;   /* 1 if first_committed was set when begin returned */
    coffer_status st_begin, st_commit, st_abort, st_create;
    uint64_t count_seen;
    char err[512];
} thread_ctx;

static void *second_writer(void *arg)
{
    thread_ctx *c = arg;
    coffer_txn *txn = NULL;
    c->st_begin = coffer_txn_begin(c->db, COFFER_TXN_WRITE, &txn);
    atomic_store(&c->began, 1);
    c->saw_committed_flag = atomic_load(&c->first_committed);
    if (c->st_begin != COFFER_OK) {
        snprintf(c->err, sizeof c->err, "%s", coffer_last_error());
        return NULL;
    }
    coffer_class_count(txn, c->person, &c->count_seen);
    coffer_field f[] = {ts_field(PERSON_ID, coffer_value_int(1000))};
    c->st_create = coffer_object_create(txn, c->person, f, 1, COFFER_UPDATE_ERROR, NULL);
    c->st_commit = coffer_txn_commit(txn);
    coffer_txn_free(txn);
    return NULL;
}

TS_ENV_TEST(test_write_waits_for_other_thread)
{
    thread_ctx c;
    memset(&c, 0, sizeof c);
    c.db = env->db;
    c.person = env->person;
    coffer_txn *w = ts_begin(env->db, COFFER_TXN_WRITE);
    ts_add_person(w, env->person, 1, "first");
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, second_writer, &c), 0);
    sleep_ms(300);
    /* the other thread is still waiting */
    int began_early = atomic_load(&c.began);
    atomic_store(&c.first_committed, 1);
    coffer_status st = coffer_txn_commit(w);
    pthread_join(th, NULL);
    coffer_txn_free(w);
    assert_ok(st);
    assert_false(began_early);
    if (c.st_begin != COFFER_OK)
        print_error("second writer: %d %s\n", (int)c.st_begin, c.err);
    assert_int_equal(c.st_begin, COFFER_OK);
    assert_true(c.saw_committed_flag);
    assert_int_equal(c.count_seen, 1);
    assert_int_equal(c.st_create, COFFER_OK);
    assert_int_equal(c.st_commit, COFFER_OK);
    assert_int_equal(ts_count_of(env->db, "Person"), 2);
}

static void *commit_foreign(void *arg)
{
    thread_ctx *c = arg;
    c->st_commit = coffer_txn_commit(c->txn);
    c->st_abort = coffer_txn_abort(c->txn);
    snprintf(c->err, sizeof c->err, "%s", coffer_last_error());
    return NULL;
}

TS_ENV_TEST(test_commit_from_other_thread)
{
    thread_ctx c;
    memset(&c, 0, sizeof c);
    c.db = env->db;
    c.txn = ts_begin(env->db, COFFER_TXN_WRITE);
    ts_add_person(c.txn, env->person, 1, "a");
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, commit_foreign, &c), 0);
    pthread_join(th, NULL);
    assert_int_equal(c.st_commit, COFFER_ERR_MISUSE);
    assert_int_equal(c.st_abort, COFFER_ERR_MISUSE);
    /* the owning thread can still end it; afterwards writing works again */
    coffer_status st = coffer_txn_commit(c.txn);
    assert_true(st == COFFER_OK || st == COFFER_ERR_MISUSE);
    coffer_txn_free(c.txn);
    ts_commit_person(env->db, env->person, 2, "b");
    coffer_txn *r = ts_begin(env->db, COFFER_TXN_READ);
    uint64_t n = ts_count(r, env->person);
    assert_true(n == 1 || n == 2);
    if (st == COFFER_OK)
        assert_int_equal(n, 2);
    coffer_txn_free(r);
}

static void *read_in_thread(void *arg)
{
    thread_ctx *c = arg;
    c->st_begin = coffer_class_count(c->txn, c->person, &c->count_seen);
    coffer_object *obj = NULL;
    c->st_create = coffer_object_get(c->txn, c->person, 1, &obj);
    return NULL;
}

/* A read transaction is not tied to its thread (MDB_NOTLS). */
TS_ENV_TEST(test_read_txn_other_thread)
{
    ts_commit_person(env->db, env->person, 1, "a");
    thread_ctx c;
    memset(&c, 0, sizeof c);
    c.person = env->person;
    c.txn = ts_begin(env->db, COFFER_TXN_READ);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, read_in_thread, &c), 0);
    pthread_join(th, NULL);
    assert_int_equal(c.st_begin, COFFER_OK);
    assert_int_equal(c.count_seen, 1);
    assert_int_equal(c.st_create, COFFER_OK);
    assert_ok(coffer_txn_commit(c.txn));
    coffer_txn_free(c.txn);
}

static void *error_in_thread(void *arg)
{
    char *out = arg;
    coffer_status st = coffer_config_set_path(NULL, "x");
    snprintf(out, 256, "%d|%s", (int)st, coffer_last_error());
    coffer_clear_error();
    return NULL;
}

typedef struct open_close_ctx {
    const ts_env *env;
    int id;
    thread_failures failures;
} open_close_ctx;

static void *open_close_thread(void *arg)
{
    open_close_ctx *c = arg;
    for (int i = 0; i < 40; i++) {
        coffer_db *db = NULL;
        coffer_status st = ts_env_open(c->env, i % 2 ? ts_std_schema : NULL, i % 2 ? TS_STD_SCHEMA_COUNT : 0,
                                       i % 2 ? 1 : 0, &db);
        coffer_txn *txn = NULL;
        if (st == COFFER_OK)
            st = coffer_txn_begin(db, i % 5 == 0 ? COFFER_TXN_WRITE : COFFER_TXN_READ, &txn);
        if (st == COFFER_OK) {
            coffer_class_id person = 0;
            st = coffer_db_find_class(db, "Person", &person);
            uint64_t n = 0;
            if (st == COFFER_OK)
                st = coffer_class_count(txn, person, &n);
            if (st == COFFER_OK && coffer_txn_is_write(txn)) {
                coffer_field f[] = {ts_field(PERSON_ID, coffer_value_int(c->id * 1000 + i))};
                st = coffer_object_create(txn, person, f, 1, COFFER_UPDATE_ERROR, NULL);
                if (st == COFFER_OK)
                    st = coffer_txn_commit(txn);
            }
            coffer_txn_free(txn);
        }
        if (st != COFFER_OK)
            note_failure(&c->failures, st);
        coffer_close(db);
    }
    return NULL;
}

/* Threads opening and closing handles on one storage concurrently, while the
 * test's own handle stays open. */
TS_ENV_TEST(test_concurrent_open_close)
{
    enum { T = 4 };
    open_close_ctx c[T];
    pthread_t th[T];
    for (int i = 0; i < T; i++) {
        memset(&c[i], 0, sizeof c[i]);
        c[i].env = env;
        c[i].id = i;
        assert_int_equal(pthread_create(&th[i], NULL, open_close_thread, &c[i]), 0);
    }
    for (int i = 0; i < T; i++)
        pthread_join(th[i], NULL);
    for (int i = 0; i < T; i++)
        assert_no_failures(&c[i].failures, i);
    assert_int_equal(ts_count_of(env->db, "Person"), T * 8);
}

/* The last error is per thread. */
TS_ENV_TEST(test_last_error_thread_local)
{
    coffer_class_id id;
    assert_status(coffer_db_find_class(env->db, "ThreadLocalMarker", &id), COFFER_ERR_NOT_FOUND);
    char other[256] = {0};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, error_in_thread, other), 0);
    pthread_join(th, NULL);
    assert_int_equal(coffer_last_status(), COFFER_ERR_NOT_FOUND);
    assert_non_null(strstr(coffer_last_error(), "ThreadLocalMarker"));
    assert_int_equal(atoi(other), COFFER_ERR_INVALID_ARGUMENT);
    assert_null(strstr(other, "ThreadLocalMarker"));
}

typedef struct counter_ctx {
    coffer_db *db;
    coffer_class_id cls;
    int id;
    int rounds;
    thread_failures failures;
} counter_ctx;

static void *counter_thread(void *arg)
{
    counter_ctx *c = arg;
    for (int i = 0; i < c->rounds; i++) {
        coffer_txn *txn = NULL;
        coffer_status st = coffer_txn_begin(c->db, COFFER_TXN_WRITE, &txn);
        if (st == COFFER_OK) {
            coffer_field f[] = {ts_field(AT_INT, coffer_value_int(c->id * 100000 + i))};
            st = coffer_object_create(txn, c->cls, f, 1, COFFER_UPDATE_ERROR, NULL);
            if (st == COFFER_OK)
                st = coffer_txn_commit(txn);
            coffer_txn_free(txn);
        }
        if (st != COFFER_OK)
            note_failure(&c->failures, st);
    }
    return NULL;
}

/* Several threads writing concurrently, each with its own handle or the
 * shared one: every commit lands. */
TS_ENV_TEST(test_concurrent_writers)
{
    enum { T = 4, R = 40 };
    counter_ctx c[T];
    pthread_t th[T];
    coffer_db *extra[T] = {0};
    for (int i = 0; i < T; i++) {
        memset(&c[i], 0, sizeof c[i]);
        if (i % 2) {
            assert_ok(ts_env_open(env, NULL, 0, 0, &extra[i]));
            c[i].db = extra[i];
        } else {
            c[i].db = env->db;
        }
        c[i].cls = env->all_types;
        c[i].id = i;
        c[i].rounds = R;
    }
    for (int i = 0; i < T; i++)
        assert_int_equal(pthread_create(&th[i], NULL, counter_thread, &c[i]), 0);
    /* readers meanwhile */
    for (int k = 0; k < 20; k++) {
        coffer_txn *r = ts_begin(env->db, COFFER_TXN_READ);
        uint64_t n = ts_count(r, env->all_types);
        assert_true(n <= T * R);
        coffer_txn_free(r);
    }
    for (int i = 0; i < T; i++)
        pthread_join(th[i], NULL);
    for (int i = 0; i < T; i++) {
        assert_no_failures(&c[i].failures, i);
        coffer_close(extra[i]);
    }
    assert_int_equal(ts_count_of(env->db, "AllTypes"), T * R);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TS_TEST_ALL_MODES(test_snapshot_isolation),
        TS_TEST_ALL_MODES(test_snapshot_across_handles),
        TS_TEST_ALL_MODES(test_abort_discards),
        TS_TEST_ALL_MODES(test_state_machine),
        TS_TEST_ALL_MODES(test_handles_after_end),
        TS_TEST_ALL_MODES(test_writes_in_read_txn),
        TS_TEST_ALL_MODES(test_second_write_same_thread),
        TS_TEST_ALL_MODES(test_many_read_txns),
        TS_TEST_ALL_MODES(test_many_readers),
        TS_TEST_ALL_MODES(test_use_after_close),
        TS_TEST_ALL_MODES(test_close_last_handle_with_open_txns),
        TS_TEST_ALL_MODES(test_null_handles),
        TS_TEST_ALL_MODES(test_error_keeps_txn_usable),
        TS_TEST_ALL_MODES(test_write_waits_for_other_thread),
        TS_TEST_ALL_MODES(test_commit_from_other_thread),
        TS_TEST_ALL_MODES(test_read_txn_other_thread),
        TS_TEST_ALL_MODES(test_concurrent_writers),
        TS_TEST_MODE(test_last_error_thread_local, ts_mode_plain, "plain"),
        TS_TEST_ALL_MODES(test_concurrent_open_close),
    };
    return cmocka_run_group_tests_name("transactions", tests, NULL, NULL);
}
