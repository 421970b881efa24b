/* test_processes.c — several processes on one file: snapshots across
 * processes, the inter-process write lock, and crash safety (a writer killed
 * with SIGKILL in the middle of a loop of write transactions).
 *
 * The library opens each file once per process, so every child forks before
 * the parent opens the file and opens its own handles. Children never use
 * cmocka assertions: they report through exit codes and pipes. */
#define _GNU_SOURCE
#include "test_support.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Writes one byte; returns 0 or -1. */
static int send_byte(int fd, char c) { return write(fd, &c, 1) == 1 ? 0 : -1; }

static uint64_t child_count(coffer_txn *txn, coffer_db *db)
{
    coffer_class_id person;
    if (coffer_db_find_class(db, "Person", &person) != COFFER_OK)
        return UINT64_MAX;
    uint64_t n = UINT64_MAX;
    if (coffer_class_count(txn, person, &n) != COFFER_OK)
        return UINT64_MAX;
    return n;
}

/* In a child: waits for the parent's go-ahead byte, then opens the file
 * (with no schema). Exits with 10 or 11 if either fails. */
static coffer_db *child_open_on_go(const ts_fork *child, const char *path, const uint8_t *key)
{
    char c;
    if (ts_recv_bytes(child->recv, &c, 1, 30000) != 1)
        _exit(10);
    coffer_db *db = NULL;
    if (ts_open_std(path, key, 0, 0, &db) != COFFER_OK)
        _exit(11);
    return db;
}

static void assert_child_ok(pid_t pid, const char *what)
{
    int ws = 0;
    assert_int_equal(ts_wait_pid(pid, &ws), 0);
    if (WIFSIGNALED(ws)) {
        print_error("%s: child killed by signal %d (%s)\n", what, WTERMSIG(ws), strsignal(WTERMSIG(ws)));
        fail();
    }
    if (WEXITSTATUS(ws) != 0)
        print_error("%s: child exited with %d\n", what, WEXITSTATUS(ws));
    assert_int_equal(WEXITSTATUS(ws), 0);
}

/* ------------------------------------------------------------------------ */
/* Snapshots across processes                                                */
/* ------------------------------------------------------------------------ */

TS_ENV_TEST(test_child_reader_keeps_snapshot)
{
    const uint8_t *key = ts_mode_key(env->mode);
    ts_make_person_file(env->path, key, 1);
    ts_fork child;
    if (ts_fork_with_pipes(&child) == 0) {
        coffer_db *db = NULL;
        if (ts_open_std(env->path, key, 0, 1, &db) != COFFER_OK)
            _exit(10);
        coffer_txn *old = NULL;
        if (coffer_txn_begin(db, COFFER_TXN_READ, &old) != COFFER_OK)
            _exit(11);
        if (child_count(old, db) != 1)
            _exit(12);
        send_byte(child.send, 'R');
        char c;
        if (ts_recv_bytes(child.recv, &c, 1, 30000) != 1 || c != 'C')
            _exit(13);
        if (child_count(old, db) != 1)
            _exit(14); /* the old snapshot must not see the commit */
        coffer_txn *fresh = NULL;
        if (coffer_txn_begin(db, COFFER_TXN_READ, &fresh) != COFFER_OK)
            _exit(15);
        if (child_count(fresh, db) != 2)
            _exit(16);
        coffer_class_id person;
        coffer_db_find_class(db, "Person", &person);
        coffer_value k = coffer_value_int(1);
        coffer_object *obj = NULL;
        if (coffer_object_find(fresh, person, &k, &obj) != COFFER_OK)
            _exit(17);
        coffer_value v;
        if (coffer_object_get_value(obj, PERSON_NAME, &v) != COFFER_OK || v.type != COFFER_TYPE_STRING ||
            strcmp(v.u.string.data, "from the parent") != 0)
            _exit(18);
        if (coffer_object_find(old, person, &k, &obj) != COFFER_ERR_NOT_FOUND)
            _exit(19);
        coffer_txn_free(fresh);
        coffer_txn_free(old);
        coffer_close(db);
        _exit(0);
    }
    char c = 0;
    int got = ts_recv_bytes(child.recv, &c, 1, 30000);
    coffer_db *db = NULL;
    assert_ok(ts_open_std(env->path, key, 0, 1, &db));
    if (got == 1) {
        ts_commit_person(db, ts_class(db, "Person"), 1, "from the parent");
        send_byte(child.send, 'C');
    }
    ts_close_fd(&child.send);
    assert_child_ok(child.pid, "child reader");
    ts_fork_close(&child);
    assert_int_equal(got, 1);
    coffer_close(db);
}

TS_ENV_TEST(test_parent_reader_sees_child_commit)
{
    const uint8_t *key = ts_mode_key(env->mode);
    ts_make_person_file(env->path, key, 1);
    ts_fork child;
    if (ts_fork_with_pipes(&child) == 0) {
        coffer_db *db = child_open_on_go(&child, env->path, key);
        coffer_class_id person;
        if (coffer_db_find_class(db, "Person", &person) != COFFER_OK)
            _exit(12);
        for (int i = 0; i < 10; i++) {
            coffer_txn *w = NULL;
            if (coffer_txn_begin(db, COFFER_TXN_WRITE, &w) != COFFER_OK)
                _exit(13);
            coffer_field f[] = {ts_field(PERSON_ID, coffer_value_int(100 + i)), ts_field(PERSON_NAME, ts_str("child"))};
            if (coffer_object_create(w, person, f, 2, COFFER_UPDATE_ERROR, NULL) != COFFER_OK)
                _exit(14);
            if (coffer_txn_commit(w) != COFFER_OK)
                _exit(15);
            coffer_txn_free(w);
        }
        coffer_close(db);
        send_byte(child.send, 'D');
        _exit(0);
    }
    coffer_db *db = NULL;
    assert_ok(ts_open_std(env->path, key, 0, 1, &db));
    coffer_txn *old = ts_begin(db, COFFER_TXN_READ);
    assert_int_equal(ts_count(old, ts_class(db, "Person")), 1);
    send_byte(child.send, 'G');
    char c = 0;
    int got = ts_recv_bytes(child.recv, &c, 1, 30000);
    assert_child_ok(child.pid, "child writer");
    assert_int_equal(got, 1);
    assert_int_equal(ts_count(old, ts_class(db, "Person")), 1);
    coffer_txn *fresh = ts_begin(db, COFFER_TXN_READ);
    assert_int_equal(ts_count(fresh, ts_class(db, "Person")), 11);
    coffer_txn_free(fresh);
    coffer_txn_free(old);
    /* and the parent can write after the child's writes */
    coffer_txn *w = ts_begin(db, COFFER_TXN_WRITE);
    coffer_field f[] = {ts_field(PERSON_ID, coffer_value_int(500))};
    assert_ok(coffer_object_create(w, ts_class(db, "Person"), f, 1, COFFER_UPDATE_ERROR, NULL));
    ts_commit(w);
    coffer_close(db);
    ts_fork_close(&child);
}

/* A write transaction in another process waits for the parent's. */
TS_ENV_TEST(test_write_lock_across_processes)
{
    const uint8_t *key = ts_mode_key(env->mode);
    ts_make_person_file(env->path, key, 1);
    ts_fork child;
    if (ts_fork_with_pipes(&child) == 0) {
        coffer_db *db = child_open_on_go(&child, env->path, key);
        send_byte(child.send, 'O');
        coffer_txn *w = NULL;
        if (coffer_txn_begin(db, COFFER_TXN_WRITE, &w) != COFFER_OK)
            _exit(12);
        uint64_t n = child_count(w, db);
        char report = (char)('0' + (n < 10 ? n : 9));
        send_byte(child.send, report);
        coffer_class_id person;
        coffer_db_find_class(db, "Person", &person);
        coffer_field f[] = {ts_field(PERSON_ID, coffer_value_int(200))};
        if (coffer_object_create(w, person, f, 1, COFFER_UPDATE_ERROR, NULL) != COFFER_OK)
            _exit(13);
        if (coffer_txn_commit(w) != COFFER_OK)
            _exit(14);
        coffer_txn_free(w);
        coffer_close(db);
        _exit(0);
    }
    coffer_db *db = NULL;
    assert_ok(ts_open_std(env->path, key, 0, 1, &db));
    coffer_txn *w = ts_begin(db, COFFER_TXN_WRITE);
    coffer_field f[] = {ts_field(PERSON_ID, coffer_value_int(100))};
    assert_ok(coffer_object_create(w, ts_class(db, "Person"), f, 1, COFFER_UPDATE_ERROR, NULL));
    send_byte(child.send, 'G');
    char c = 0;
    int opened = ts_recv_bytes(child.recv, &c, 1, 5000);
    /* the child must not get its write transaction while we hold ours */
    char early = 0;
    int began_early = ts_recv_bytes(child.recv, &early, 1, 400);
    coffer_status st = coffer_txn_commit(w);
    coffer_txn_free(w);
    char report = 0;
    int got = began_early == 1 ? 1 : ts_recv_bytes(child.recv, &report, 1, 30000);
    if (began_early == 1)
        report = early;
    assert_child_ok(child.pid, "second writer process");
    assert_ok(st);
    if (opened != 1)
        print_message("    note: the child's open waited for the parent's write transaction\n");
    assert_int_not_equal(began_early, 1);
    assert_int_equal(got, 1);
    assert_int_equal(report, '2'); /* it saw the parent's commit */
    assert_int_equal(ts_count_of(db, "Person"), 3);
    coffer_close(db);
    ts_fork_close(&child);
}

/* Two processes writing concurrently: every commit lands exactly once. */
TS_ENV_TEST(test_concurrent_writer_processes)
{
    const uint8_t *key = ts_mode_key(env->mode);
    ts_make_person_file(env->path, key, 0);
    enum { P = 3, R = 25 };
    pid_t pids[P];
    fflush(NULL);
    for (int p = 0; p < P; p++) {
        pids[p] = fork();
        assert_true(pids[p] >= 0);
        if (pids[p] == 0) {
            alarm(60);
            coffer_db *db = NULL;
            if (ts_open_std(env->path, key, 0, p % 2, &db) != COFFER_OK)
                _exit(10);
            coffer_class_id person;
            if (coffer_db_find_class(db, "Person", &person) != COFFER_OK)
                _exit(11);
            for (int i = 0; i < R; i++) {
                coffer_txn *w = NULL;
                if (coffer_txn_begin(db, COFFER_TXN_WRITE, &w) != COFFER_OK)
                    _exit(12);
                coffer_field f[] = {ts_field(PERSON_ID, coffer_value_int(p * 1000 + i)),
                                    ts_field(PERSON_AGE, coffer_value_int(p))};
                if (coffer_object_create(w, person, f, 2, COFFER_UPDATE_ERROR, NULL) != COFFER_OK)
                    _exit(13);
                if (coffer_txn_commit(w) != COFFER_OK)
                    _exit(14);
                coffer_txn_free(w);
            }
            coffer_close(db);
            _exit(0);
        }
    }
    for (int p = 0; p < P; p++)
        assert_child_ok(pids[p], "concurrent writer");
    coffer_db *db = NULL;
    assert_ok(ts_open_std(env->path, key, 0, 1, &db));
    coffer_txn *r = ts_begin(db, COFFER_TXN_READ);
    coffer_class_id person = ts_class(db, "Person");
    assert_int_equal(ts_count(r, person), P * R);
    for (int p = 0; p < P; p++)
        for (int i = 0; i < R; i++) {
            coffer_value k = coffer_value_int(p * 1000 + i);
            coffer_object *obj = NULL;
            assert_ok(coffer_object_find(r, person, &k, &obj));
            assert_int_equal(ts_get_int(obj, PERSON_AGE), p);
            coffer_object_release(obj);
        }
    coffer_txn_free(r);
    coffer_close(db);
}

/* ------------------------------------------------------------------------ */
/* kill -9 in the middle of writing                                          */
/* ------------------------------------------------------------------------ */

enum { OBJS_PER_TXN = 5 };

static void payload(char *buf, int txn, int j)
{
    /* varied sizes, up to ~6 KB (overflow pages sometimes) */
    int len = snprintf(buf, 64, "txn %d obj %d ", txn, j);
    int extra = ((txn * 131 + j * 17) % 7) * 900;
    for (int i = 0; i < extra; i++)
        buf[len + i] = (char)('a' + (txn + i) % 26);
    buf[len + extra] = 0;
}

/* Runs in a child of ts_fork_with_pipes. */
static void writer_child(const char *path, const uint8_t *key, int report_fd)
{
    coffer_db *db = NULL;
    if (ts_open_std(path, key, 0, 0, &db) != COFFER_OK)
        _exit(10);
    coffer_class_id at;
    if (coffer_db_find_class(db, "AllTypes", &at) != COFFER_OK)
        _exit(11);
    static char buf[8192];
    for (int t = 0; t < 100000; t++) {
        coffer_txn *w = NULL;
        if (coffer_txn_begin(db, COFFER_TXN_WRITE, &w) != COFFER_OK)
            _exit(12);
        for (int j = 0; j < OBJS_PER_TXN; j++) {
            payload(buf, t, j);
            coffer_field f[] = {ts_field(AT_INT, coffer_value_int(t)), ts_field(AT_OPT_INT, coffer_value_int(j)),
                                ts_field(AT_STRING, ts_str(buf))};
            if (coffer_object_create(w, at, f, 3, COFFER_UPDATE_ERROR, NULL) != COFFER_OK)
                _exit(13);
        }
        if (coffer_txn_commit(w) != COFFER_OK)
            _exit(14);
        coffer_txn_free(w);
        int32_t done = t;
        if (write(report_fd, &done, sizeof done) != (ssize_t)sizeof done)
            _exit(15);
    }
    _exit(0);
}

static void check_after_kill(const char *path, const uint8_t *key, int max_reported)
{
    coffer_db *db = NULL;
    assert_ok(ts_open_std(path, key, 0, 1, &db));
    coffer_class_id at = ts_class(db, "AllTypes");
    coffer_txn *r = ts_begin(db, COFFER_TXN_READ);
    uint64_t n = ts_count(r, at);
    assert_int_equal(n % OBJS_PER_TXN, 0);
    int64_t txns = (int64_t)(n / OBJS_PER_TXN);
    print_message("    %lld transactions in the file, %d reported\n", (long long)txns, max_reported + 1);
    /* every reported commit is there; at most one more finished unreported */
    assert_true(txns >= max_reported + 1);
    assert_true(txns <= max_reported + 2);
    int *per_txn = calloc((size_t)txns + 1, sizeof *per_txn);
    coffer_iter *it = NULL;
    assert_ok(coffer_class_iterate(r, at, &it));
    uint64_t seen = 0;
    static char expect[8192];
    coffer_object *obj = NULL;
    while (ts_next(it, &obj)) {
        int64_t t = ts_get_int(obj, AT_INT);
        int64_t j = ts_get_int(obj, AT_OPT_INT);
        assert_true(t >= 0 && t < txns);
        assert_true(j >= 0 && j < OBJS_PER_TXN);
        payload(expect, (int)t, (int)j);
        assert_string_equal(ts_get_string(obj, AT_STRING, NULL), expect);
        per_txn[t]++;
        seen++;
    }
    coffer_iter_free(it);
    assert_int_equal(seen, n);
    for (int64_t t = 0; t < txns; t++)
        assert_int_equal(per_txn[t], OBJS_PER_TXN);
    free(per_txn);
    coffer_txn_free(r);
    /* the write lock was recovered: a new write works */
    coffer_txn *w = ts_begin(db, COFFER_TXN_WRITE);
    coffer_field f[] = {ts_field(AT_INT, coffer_value_int(-5))};
    assert_ok(coffer_object_create(w, at, f, 1, COFFER_UPDATE_ERROR, NULL));
    assert_ok(coffer_txn_abort(w));
    coffer_txn_free(w);
    coffer_close(db);
}

TS_ENV_TEST(test_kill_writer)
{
    const uint8_t *key = ts_mode_key(env->mode);
    uint64_t seed = (uint64_t)time(NULL) ^ (uint64_t)getpid();
    print_message("    random kill moments, seed %llu\n", (unsigned long long)seed);
    ts_seed(seed);
    for (int round = 0; round < 4; round++) {
        char path[TS_PATH_MAX];
        char name[64];
        snprintf(name, sizeof name, "killed-%d.coffer", round);
        ts_join(path, env->dir, name);
        ts_make_person_file(path, key, 0);
        ts_fork child;
        if (ts_fork_with_pipes(&child) == 0)
            writer_child(path, key, child.send);
        int target = 3 + (int)ts_rand_below(30);
        int max_reported = ts_kill_writer(&child, target, -1, 4000, 1000);
        print_message("    round %d: killed after %d reported commits\n", round, max_reported + 1);
        assert_true(max_reported >= target);
        check_after_kill(path, key, max_reported);
        /* and once more after a reopen */
        check_after_kill(path, key, max_reported);
    }
}

/* A reader process killed while holding a read transaction does not block
 * writers or leave the file unusable. */
TS_ENV_TEST(test_kill_reader)
{
    const uint8_t *key = ts_mode_key(env->mode);
    ts_make_person_file(env->path, key, 1);
    ts_fork child;
    if (ts_fork_with_pipes(&child) == 0) {
        coffer_db *db = NULL;
        if (ts_open_std(env->path, key, 0, 0, &db) != COFFER_OK)
            _exit(10);
        coffer_txn *r = NULL;
        if (coffer_txn_begin(db, COFFER_TXN_READ, &r) != COFFER_OK)
            _exit(11);
        send_byte(child.send, 'R');
        pause();
        _exit(0);
    }
    char c = 0;
    assert_int_equal(ts_recv_bytes(child.recv, &c, 1, 30000), 1);
    kill(child.pid, SIGKILL);
    int ws;
    ts_wait_pid(child.pid, &ws);
    ts_fork_close(&child);
    coffer_db *db = NULL;
    assert_ok(ts_open_std(env->path, key, 0, 1, &db));
    coffer_class_id at = ts_class(db, "AllTypes");
    char *buf = malloc(100000);
    memset(buf, 'r', 99999);
    buf[99999] = 0;
    for (int t = 0; t < 30; t++) {
        coffer_txn *w = ts_begin(db, COFFER_TXN_WRITE);
        assert_ok(coffer_class_clear(w, at));
        coffer_field f[] = {ts_field(AT_STRING, ts_str(buf))};
        assert_ok(coffer_object_create(w, at, f, 1, COFFER_UPDATE_ERROR, NULL));
        ts_commit(w);
    }
    free(buf);
    coffer_txn *r = ts_begin(db, COFFER_TXN_READ);
    assert_int_equal(ts_count(r, at), 1);
    assert_int_equal(ts_count(r, ts_class(db, "Person")), 1);
    coffer_txn_free(r);
    coffer_close(db);
    /* the stale reader does not pin old pages forever: the file stayed small */
    long long size = ts_file_size(env->path);
    print_message("    file size after 30 rewrites of 100 KB: %lld\n", size);
    assert_true(size < 2 * 1024 * 1024);
}

/* Another process grows the map (starting from a small initial map, through
 * the implementation's COFFER_INITIAL_MAP_SIZE hook; harmless if ignored):
 * this process's next transactions adopt the new size (MDB_MAP_RESIZED) and
 * read everything. */
TS_ENV_TEST(test_map_grown_by_other_process)
{
    const uint8_t *key = ts_mode_key(env->mode);
    ts_make_person_file(env->path, key, 1);
    setenv("COFFER_INITIAL_MAP_SIZE", "1048576", 1);
    ts_fork child;
    if (ts_fork_with_pipes(&child) == 0) {
        coffer_db *db = child_open_on_go(&child, env->path, key);
        coffer_class_id at;
        if (coffer_db_find_class(db, "AllTypes", &at) != COFFER_OK)
            _exit(12);
        static unsigned char blob[256 * 1024];
        for (int t = 0; t < 60; t++) {
            memset(blob, 'a' + t % 26, sizeof blob);
            if (ts_write_blob(db, at, blob, sizeof blob, t) != COFFER_OK)
                _exit(14);
        }
        coffer_close(db);
        send_byte(child.send, 'D');
        _exit(0);
    }
    coffer_db *db = NULL;
    coffer_status st = ts_open_std(env->path, key, 0, 1, &db);
    unsetenv("COFFER_INITIAL_MAP_SIZE");
    if (st != COFFER_OK) {
        kill(child.pid, SIGKILL);
        waitpid(child.pid, NULL, 0);
    }
    assert_ok(st);
    coffer_class_id at = ts_class(db, "AllTypes");
    coffer_txn *old = ts_begin(db, COFFER_TXN_READ);
    send_byte(child.send, 'G');
    char c = 0;
    int got = ts_recv_bytes(child.recv, &c, 1, 60000);
    assert_child_ok(child.pid, "growing writer");
    assert_int_equal(got, 1);
    assert_int_equal(ts_count(old, at), 0);
    coffer_txn_free(old);
    coffer_txn *r = ts_begin(db, COFFER_TXN_READ);
    assert_int_equal(ts_count(r, at), 60);
    coffer_iter *it = ts_iterate(r, at);
    coffer_object *obj = NULL;
    int n = 0;
    while (ts_next(it, &obj)) {
        int64_t t = ts_get_int(obj, AT_INT);
        size_t size;
        const unsigned char *b = ts_get_binary(obj, AT_BINARY, &size);
        assert_int_equal(size, 256 * 1024);
        assert_int_equal(b[0], 'a' + t % 26);
        assert_int_equal(b[size - 1], 'a' + t % 26);
        n++;
    }
    coffer_iter_free(it);
    coffer_txn_free(r);
    assert_int_equal(n, 60);
    /* and this process can write after the growth too */
    coffer_txn *w = ts_begin(db, COFFER_TXN_WRITE);
    static unsigned char more[512 * 1024];
    coffer_field f[] = {ts_field(AT_BINARY, coffer_value_binary(more, sizeof more))};
    st = coffer_object_create(w, at, f, 1, COFFER_UPDATE_ERROR, NULL);
    if (st == COFFER_OK)
        st = coffer_txn_commit(w);
    coffer_txn_free(w);
    if (st == COFFER_ERR_MAP_FULL) {
        w = ts_begin(db, COFFER_TXN_WRITE);
        assert_ok(coffer_object_create(w, at, f, 1, COFFER_UPDATE_ERROR, NULL));
        st = coffer_txn_commit(w);
        coffer_txn_free(w);
    }
    assert_ok(st);
    coffer_close(db);
    ts_fork_close(&child);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TS_TEST_FILE_MODES_SETUP(test_child_reader_keeps_snapshot, ts_setup_empty),
        TS_TEST_FILE_MODES_SETUP(test_parent_reader_sees_child_commit, ts_setup_empty),
        TS_TEST_FILE_MODES_SETUP(test_write_lock_across_processes, ts_setup_empty),
        TS_TEST_FILE_MODES_SETUP(test_concurrent_writer_processes, ts_setup_empty),
        TS_TEST_FILE_MODES_SETUP(test_kill_writer, ts_setup_empty),
        TS_TEST_FILE_MODES_SETUP(test_map_grown_by_other_process, ts_setup_empty),
        TS_TEST_FILE_MODES_SETUP(test_kill_reader, ts_setup_empty),
    };
    return cmocka_run_group_tests_name("processes", tests, NULL, NULL);
}
