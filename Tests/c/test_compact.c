/* test_compact.c — compaction on launch and the active-version limit. */
#define _GNU_SOURCE
#include "test_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct compact_call {
    int calls;
    int answer;
    uint64_t total, used;
} compact_call;

static int should_compact(uint64_t total, uint64_t used, void *ctx)
{
    compact_call *c = ctx;
    c->calls++;
    c->total = total;
    c->used = used;
    return c->answer;
}

static coffer_status open_compacting(const ts_env *env, compact_call *call, int read_only, coffer_db **out)
{
    coffer_config *cfg = ts_env_config(env);
    assert_ok(coffer_config_set_schema(cfg, ts_std_schema, TS_STD_SCHEMA_COUNT, 1));
    assert_ok(coffer_config_set_should_compact_on_launch(cfg, should_compact, call));
    assert_ok(coffer_config_set_read_only(cfg, read_only));
    coffer_status st = coffer_open(cfg, out);
    coffer_config_free(cfg);
    return st;
}

/* Many large objects, then all but `keep` deleted: mostly free pages. */
static void fill_and_thin(ts_env *env, int keep)
{
    unsigned char blob[16384];
    memset(blob, 0x5a, sizeof blob);
    for (int i = 0; i < 150; i++)
        assert_ok(ts_write_blob(env->db, env->all_types, blob, sizeof blob, i));
    coffer_txn *txn = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_iter *it;
    assert_ok(coffer_class_iterate(txn, env->all_types, &it));
    coffer_object *obj;
    int n = 0;
    while (ts_next(it, &obj))
        if (n++ >= keep)
            assert_ok(coffer_object_delete(obj));
    ts_commit(txn);
    ts_env_close(env);
}

/* LMDB's compacting copy starts again at transaction 1; the compacted file
 * goes on from the version it had, and stays a sound file for LMDB. */
TS_ENV_TEST(test_compact_on_launch_keeps_the_version)
{
    fill_and_thin(env, 5);
    compact_call call = {0, 0, 0, 0};
    coffer_db *db;
    assert_ok(open_compacting(env, &call, 0, &db));
    uint64_t before = ts_version_of(db);
    assert_true(before > 150);
    coffer_close(db);
    long long size = ts_file_size(env->path);
    call.answer = 1;
    assert_ok(open_compacting(env, &call, 0, &db));
    assert_true(ts_file_size(env->path) < size / 4);
    assert_int_equal(ts_version_of(db), before);
    unsigned char blob[100] = {0};
    for (int i = 0; i < 3; i++) {
        assert_ok(ts_write_blob(db, env->all_types, blob, sizeof blob, 1000 + i));
        assert_int_equal(ts_version_of(db), before + 1 + (uint64_t)i);
    }
    coffer_verify_report *report;
    assert_ok(coffer_db_verify(db, &report));
    assert_int_equal(coffer_verify_report_count(report), 0);
    coffer_verify_report_free(report);
    coffer_close(db);
    /* Compacted again, from the raised version: still going up. */
    assert_ok(open_compacting(env, &call, 0, &db));
    assert_int_equal(ts_version_of(db), before + 3);
    assert_int_equal(ts_count_of(db, "AllTypes"), 8);
    coffer_close(db);
}

TS_ENV_TEST(test_compact_on_launch_shrinks_the_file)
{
    fill_and_thin(env, 5);
    long long before = ts_file_size(env->path);
    /* Declined: nothing changes. */
    compact_call call = {0, 0, 0, 0};
    coffer_db *db;
    assert_ok(open_compacting(env, &call, 0, &db));
    assert_int_equal(call.calls, 1);
    assert_int_equal(call.total, (uint64_t)before);
    assert_true(call.used > 0 && call.used < call.total / 4);
    coffer_close(db);
    assert_int_equal(ts_file_size(env->path), before);
    /* Accepted: the file shrinks and keeps its objects. */
    call.answer = 1;
    assert_ok(open_compacting(env, &call, 0, &db));
    assert_int_equal(call.calls, 2);
    long long after = ts_file_size(env->path);
    assert_true(after < before / 4);
    assert_int_equal(ts_count_of(db, "AllTypes"), 5);
    /* Not the first open in the process: not asked again. */
    coffer_db *second;
    assert_ok(open_compacting(env, &call, 0, &second));
    assert_int_equal(call.calls, 2);
    coffer_close(second);
    coffer_close(db);
    /* The compacted file is an ordinary database. */
    assert_ok(ts_env_open(env, ts_std_schema, TS_STD_SCHEMA_COUNT, 1, &db));
    ts_commit_person(db, ts_class(db, "Person"), 1, "after");
    assert_int_equal(ts_count_of(db, "AllTypes"), 5);
    coffer_close(db);
    assert_status(open_compacting(env, &call, 1, &db), COFFER_ERR_INVALID_ARGUMENT);
    assert_error_contains("read-only");
}

TS_ENV_TEST(test_compact_skipped_while_another_process_has_it_open)
{
    fill_and_thin(env, 5);
    long long before = ts_file_size(env->path);
    ts_fork f;
    if (ts_fork_with_pipes(&f) == 0) {
        coffer_db *db;
        coffer_status st = ts_env_open(env, ts_std_schema, TS_STD_SCHEMA_COUNT, 1, &db);
        char c = st == COFFER_OK ? 'o' : 'e';
        if (write(f.send, &c, 1) != 1 || read(f.recv, &c, 1) != 1)
            _exit(2);
        coffer_close(db);
        _exit(0);
    }
    char c = 0;
    assert_int_equal(read(f.recv, &c, 1), 1);
    assert_int_equal(c, 'o');
    compact_call call = {0, 1, 0, 0};
    coffer_db *db;
    assert_ok(open_compacting(env, &call, 0, &db));
    assert_int_equal(call.calls, 0);
    assert_int_equal(ts_file_size(env->path), before);
    assert_int_equal(ts_count_of(db, "AllTypes"), 5);
    coffer_close(db);
    assert_int_equal(write(f.send, "q", 1), 1);
    int status;
    assert_int_equal(ts_wait_pid(f.pid, &status), 0);
    ts_fork_close(&f);
    assert_int_equal(status, 0);
}

static coffer_status open_limited(const ts_env *env, uint64_t limit, coffer_db **out)
{
    coffer_config *cfg = ts_env_config(env);
    assert_ok(coffer_config_set_schema(cfg, ts_std_schema, TS_STD_SCHEMA_COUNT, 1));
    assert_ok(coffer_config_set_max_active_versions(cfg, limit));
    coffer_status st = coffer_open(cfg, out);
    coffer_config_free(cfg);
    return st;
}

TS_ENV_TEST(test_max_active_versions)
{
    coffer_db *db;
    assert_ok(open_limited(env, 2, &db));
    coffer_class_id person = ts_class(db, "Person");
    uint64_t n;
    assert_ok(coffer_db_active_versions(db, &n));
    assert_int_equal(n, 1);
    coffer_txn *r1 = ts_begin(db, COFFER_TXN_READ);
    assert_ok(coffer_db_active_versions(db, &n));
    assert_int_equal(n, 1);
    ts_commit_person(db, person, 1, "one"); /* r1's version and the new one */
    assert_ok(coffer_db_active_versions(db, &n));
    assert_int_equal(n, 2);
    coffer_txn *r2 = ts_begin(db, COFFER_TXN_READ);
    coffer_txn *w = NULL;
    assert_status(coffer_txn_begin(db, COFFER_TXN_WRITE, &w), COFFER_ERR_LIMIT);
    assert_error_contains("limit of 2");
    assert_error_contains("3 versions");
    assert_null(w);
    /* Another handle without a limit is not bound by this one's. */
    coffer_db *free_db;
    assert_ok(ts_env_open(env, ts_std_schema, TS_STD_SCHEMA_COUNT, 1, &free_db));
    ts_commit_person(free_db, person, 2, "two");
    coffer_close(free_db);
    /* Ending the oldest reader makes room again. */
    coffer_txn_free(r1);
    coffer_txn_free(r2);
    ts_commit_person(db, person, 3, "three");
    assert_int_equal(ts_count_of(db, "Person"), 3);
    coffer_close(db);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TS_TEST_FILE_MODES(test_compact_on_launch_shrinks_the_file),
        TS_TEST_FILE_MODES(test_compact_on_launch_keeps_the_version),
        TS_TEST_FILE_MODES(test_compact_skipped_while_another_process_has_it_open),
        TS_TEST_ALL_MODES_SETUP(test_max_active_versions, ts_setup_empty),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
