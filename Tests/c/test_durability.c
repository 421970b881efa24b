/* test_durability.c — coffer_config_set_durability(): every level opens,
 * commits and reads back its level; a bad value is refused by name; handles
 * of one file in a process must agree on the level; an application killed
 * with SIGKILL right after a commit at COFFER_DURABILITY_NORMAL keeps it;
 * coffer_db_sync(). */
#define _GNU_SOURCE
#include "test_support.h"

#include <signal.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct fixture {
    char dir[TS_PATH_MAX];
    char path[TS_PATH_MAX];
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    if (!f || ts_make_temp_dir(f->dir) != 0)
        return -1;
    ts_join(f->path, f->dir, "durable.coffer");
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    ts_remove_tree(f->dir);
    free(f);
    return 0;
}

/* Opens `path` (or the in-memory store `ident`) with the standard schema at
 * `durability`. */
static coffer_status open_at(const char *path, const char *ident, int durability, coffer_db **out)
{
    coffer_config *c = NULL;
    coffer_status st = coffer_config_new(&c);
    if (st == COFFER_OK)
        st = ident ? coffer_config_set_in_memory_identifier(c, ident) : coffer_config_set_path(c, path);
    if (st == COFFER_OK)
        st = coffer_config_set_schema(c, ts_std_schema, TS_STD_SCHEMA_COUNT, 1);
    if (st == COFFER_OK)
        st = coffer_config_set_durability(c, (coffer_durability)durability);
    if (st == COFFER_OK)
        st = coffer_open(c, out);
    coffer_config_free(c);
    return st;
}

static coffer_status add_person(coffer_db *db, int64_t id)
{
    coffer_class_id person;
    coffer_status st = coffer_db_find_class(db, "Person", &person);
    if (st != COFFER_OK)
        return st;
    coffer_txn *txn = NULL;
    if ((st = coffer_txn_begin(db, COFFER_TXN_WRITE, &txn)) != COFFER_OK)
        return st;
    coffer_field f[] = {ts_field(PERSON_ID, coffer_value_int(id)), ts_field(PERSON_NAME, ts_str("p"))};
    coffer_object *obj = NULL;
    st = coffer_object_create(txn, person, f, 2, COFFER_UPDATE_ERROR, &obj);
    coffer_object_release(obj);
    st = st == COFFER_OK ? coffer_txn_commit(txn) : st;
    coffer_txn_free(txn);
    return st;
}

static uint64_t count_persons(coffer_db *db)
{
    coffer_class_id person;
    coffer_txn *txn = NULL;
    uint64_t n = UINT64_MAX;
    assert_ok(coffer_db_find_class(db, "Person", &person));
    assert_ok(coffer_txn_begin(db, COFFER_TXN_READ, &txn));
    assert_ok(coffer_class_count(txn, person, &n));
    coffer_txn_free(txn);
    return n;
}

static void each_level_commits_and_reads_back(void **state)
{
    fixture *f = *state;
    const int levels[] = {COFFER_DURABILITY_FULL, COFFER_DURABILITY_NORMAL, COFFER_DURABILITY_NONE};
    for (size_t i = 0; i < 3; i++) {
        coffer_db *db = NULL;
        assert_ok(open_at(f->path, NULL, levels[i], &db));
        coffer_durability got = (coffer_durability)-1;
        assert_ok(coffer_db_durability(db, &got));
        assert_int_equal(got, levels[i]);
        assert_ok(add_person(db, (int64_t)i + 1));
        assert_ok(coffer_db_sync(db));
        coffer_close(db);
        /* reopened at the default level, every commit is there */
        assert_ok(open_at(f->path, NULL, COFFER_DURABILITY_FULL, &db));
        assert_int_equal(count_persons(db), i + 1);
        assert_ok(coffer_db_durability(db, &got));
        assert_int_equal(got, COFFER_DURABILITY_FULL);
        coffer_close(db);
    }
}

static void default_is_full(void **state)
{
    fixture *f = *state;
    coffer_db *db = NULL;
    assert_ok(ts_open_std(f->path, NULL, 0, 1, &db));
    coffer_durability got = (coffer_durability)-1;
    assert_ok(coffer_db_durability(db, &got));
    assert_int_equal(got, COFFER_DURABILITY_FULL);
    coffer_close(db);
}

static void bad_value_is_refused(void **state)
{
    (void)state;
    coffer_config *c = NULL;
    assert_ok(coffer_config_new(&c));
    assert_status(coffer_config_set_durability(c, (coffer_durability)7), COFFER_ERR_INVALID_ARGUMENT);
    assert_error_contains("7 is not a durability");
    assert_status(coffer_config_set_durability(c, (coffer_durability)-1), COFFER_ERR_INVALID_ARGUMENT);
    assert_error_contains("-1 is not a durability");
    coffer_config_free(c);
    assert_status(coffer_config_set_durability(NULL, COFFER_DURABILITY_FULL), COFFER_ERR_INVALID_ARGUMENT);
    assert_error_contains("config is NULL");
    assert_status(coffer_db_durability(NULL, NULL), COFFER_ERR_INVALID_ARGUMENT);
    assert_status(coffer_db_sync(NULL), COFFER_ERR_INVALID_ARGUMENT);
}

/* The handles of a file in a process share one environment: a second
 * handle that can write must ask for the level the first fixed; a
 * read-only one takes the file's. */
static void second_handle_must_agree(void **state)
{
    fixture *f = *state;
    coffer_db *a = NULL, *b = NULL, *r = NULL;
    assert_ok(open_at(f->path, NULL, COFFER_DURABILITY_NORMAL, &a));
    assert_status(open_at(f->path, NULL, COFFER_DURABILITY_FULL, &b), COFFER_ERR_BUSY);
    assert_error_contains("durability normal and cannot also be opened with durability full");
    assert_null(b);
    assert_ok(open_at(f->path, NULL, COFFER_DURABILITY_NORMAL, &b));
    assert_ok(ts_open_std(f->path, NULL, 1, 0, &r));
    coffer_durability got = (coffer_durability)-1;
    assert_ok(coffer_db_durability(r, &got));
    assert_int_equal(got, COFFER_DURABILITY_NORMAL);
    assert_ok(add_person(b, 1));
    assert_int_equal(count_persons(a), 1);
    coffer_close(b);
    coffer_close(a);
    coffer_close(r);
    /* all closed: the next handle fixes the level afresh */
    assert_ok(open_at(f->path, NULL, COFFER_DURABILITY_NONE, &a));
    assert_ok(coffer_db_durability(a, &got));
    assert_int_equal(got, COFFER_DURABILITY_NONE);
    coffer_close(a);
}

/* A read-only handle opened first does not fix the level: the first
 * handle that can write does. */
static void read_only_first_does_not_fix(void **state)
{
    fixture *f = *state;
    coffer_db *db = NULL, *r = NULL, *w = NULL;
    assert_ok(open_at(f->path, NULL, COFFER_DURABILITY_FULL, &db));
    coffer_close(db);
    assert_ok(ts_open_std(f->path, NULL, 1, 0, &r));
    assert_ok(open_at(f->path, NULL, COFFER_DURABILITY_NORMAL, &w));
    coffer_durability got = (coffer_durability)-1;
    assert_ok(coffer_db_durability(w, &got));
    assert_int_equal(got, COFFER_DURABILITY_NORMAL);
    assert_ok(add_person(w, 9));
    assert_ok(coffer_db_sync(r)); /* nothing to do, but not an error */
    coffer_close(w);
    coffer_close(r);
}

static void memory_is_none(void **state)
{
    (void)state;
    coffer_db *db = NULL;
    assert_ok(open_at(NULL, "durability-memory", COFFER_DURABILITY_FULL, &db));
    coffer_durability got = (coffer_durability)-1;
    assert_ok(coffer_db_durability(db, &got));
    assert_int_equal(got, COFFER_DURABILITY_NONE);
    assert_ok(add_person(db, 1));
    assert_ok(coffer_db_sync(db));
    coffer_close(db);
}

/* An application crash loses nothing at NORMAL (nor at NONE): a child
 * commits, tells the parent, and is killed with SIGKILL before it can
 * close or flush anything. */
static void sigkill_after_commit_keeps_it(void **state)
{
    fixture *f = *state;
    const int levels[] = {COFFER_DURABILITY_NORMAL, COFFER_DURABILITY_NONE};
    for (size_t i = 0; i < 2; i++) {
        ts_fork child;
        if (ts_fork_with_pipes(&child) == 0) {
            coffer_db *db = NULL;
            if (open_at(f->path, NULL, levels[i], &db) != COFFER_OK)
                _exit(10);
            if (add_person(db, 100 + (int64_t)i) != COFFER_OK)
                _exit(11);
            char c = 'c';
            if (write(child.send, &c, 1) != 1)
                _exit(12);
            pause(); /* killed here, the handle still open */
            _exit(13);
        }
        char c = 0;
        assert_int_equal(ts_recv_bytes(child.recv, &c, 1, 30000), 1);
        assert_int_equal(c, 'c');
        kill(child.pid, SIGKILL);
        int ws = 0;
        assert_int_equal(ts_wait_pid(child.pid, &ws), 0);
        assert_true(WIFSIGNALED(ws) && WTERMSIG(ws) == SIGKILL);
        ts_fork_close(&child);
        coffer_db *db = NULL;
        assert_ok(open_at(f->path, NULL, COFFER_DURABILITY_FULL, &db));
        assert_int_equal(count_persons(db), i + 1);
        coffer_close(db);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(each_level_commits_and_reads_back, setup, teardown),
        cmocka_unit_test_setup_teardown(default_is_full, setup, teardown),
        cmocka_unit_test(bad_value_is_refused),
        cmocka_unit_test_setup_teardown(second_handle_must_agree, setup, teardown),
        cmocka_unit_test_setup_teardown(read_only_first_does_not_fix, setup, teardown),
        cmocka_unit_test(memory_is_none),
        cmocka_unit_test_setup_teardown(sigkill_after_commit_keeps_it, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
