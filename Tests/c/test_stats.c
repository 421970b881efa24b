/* test_stats.c — file statistics: sizes and pages, per-class objects and
 * index bytes, the change log kept for readers, and the reader slots with
 * the versions they read; bad arguments. */
#define _GNU_SOURCE
#include "test_support.h"

#include <string.h>
#include <unistd.h>

TS_ENV_TEST(test_stats_of_a_new_file)
{
    coffer_stats s;
    assert_ok(coffer_db_stats(env->db, &s));
    assert_true(s.page_size >= 4096);
    assert_true(s.pages_used > 0);
    assert_true(s.pages_free <= s.pages_used);
    assert_true(s.map_size >= s.pages_used * s.page_size);
    assert_true(s.metadata_bytes > 0);
    if (env->mode != TS_MEMORY)
        assert_int_equal(s.file_size, (uint64_t)ts_file_size(env->path));
    coffer_class_stats c;
    assert_ok(coffer_db_class_stats(env->db, env->person, &c));
    assert_int_equal(c.objects, 0);
    assert_int_equal(c.index_entries, 0);
}

TS_ENV_TEST(test_class_stats_count_objects_and_index_entries)
{
    for (int i = 0; i < 200; i++)
        ts_commit_person(env->db, env->person, i, "a person with a name long enough to fill pages");
    coffer_class_stats c;
    assert_ok(coffer_db_class_stats(env->db, env->person, &c));
    assert_int_equal(c.objects, 200);
    /* Person has a primary key and an indexed name: two entries each. */
    assert_int_equal(c.index_entries, 400);
    assert_true(c.object_bytes > 0);
    assert_true(c.index_bytes > 0);
    coffer_class_stats other;
    assert_ok(coffer_db_class_stats(env->db, env->all_types, &other));
    assert_int_equal(other.objects, 0);
    assert_int_equal(other.object_bytes, 0);
}

TS_ENV_TEST(test_deleting_frees_pages_and_the_version_moves)
{
    unsigned char blob[16384];
    memset(blob, 0x33, sizeof blob);
    for (int i = 0; i < 40; i++)
        assert_ok(ts_write_blob(env->db, env->all_types, blob, sizeof blob, i));
    coffer_stats before;
    assert_ok(coffer_db_stats(env->db, &before));
    coffer_txn *txn = ts_begin(env->db, COFFER_TXN_WRITE);
    assert_ok(coffer_class_clear(txn, env->all_types));
    ts_commit(txn);
    /* A second commit lets LMDB put the first one's pages on the free list. */
    ts_commit_person(env->db, env->person, 1, "one");
    coffer_stats after;
    assert_ok(coffer_db_stats(env->db, &after));
    assert_true(after.version > before.version);
    assert_true(after.pages_free > before.pages_free);
    assert_true(after.pages_free * after.page_size >= 20 * sizeof blob);
    coffer_class_stats c;
    assert_ok(coffer_db_class_stats(env->db, env->all_types, &c));
    assert_int_equal(c.objects, 0);
}

TS_ENV_TEST(test_a_reader_keeps_change_log_entries_and_is_listed)
{
    ts_commit_person(env->db, env->person, 1, "one");
    coffer_txn *reader = ts_begin(env->db, COFFER_TXN_READ);
    uint64_t pinned;
    assert_ok(coffer_txn_version(reader, &pinned));
    for (int i = 2; i < 6; i++)
        ts_commit_person(env->db, env->person, i, "more");
    coffer_stats s;
    assert_ok(coffer_db_stats(env->db, &s));
    /* The entries after the reader's version are kept for it. */
    assert_true(s.changelog_entries >= 4);
    assert_true(s.changelog_bytes > s.changelog_entries * 9);
    assert_true(s.readers >= 1);
    size_t count = 0;
    assert_ok(coffer_db_readers(env->db, NULL, 0, &count));
    assert_true(count >= 1);
    coffer_reader readers[16];
    size_t n = 0;
    assert_ok(coffer_db_readers(env->db, readers, 16, &n));
    assert_int_equal(n, count);
    int found = 0;
    for (size_t i = 0; i < n && i < 16; i++)
        if (readers[i].pid == (int64_t)getpid() && readers[i].version == pinned)
            found = 1;
    assert_true(found);
    coffer_txn_free(reader);
    /* Without readers a commit trims the log to its own entry. */
    ts_commit_person(env->db, env->person, 9, "last");
    assert_ok(coffer_db_stats(env->db, &s));
    assert_int_equal(s.changelog_entries, 1);
    assert_ok(coffer_db_readers(env->db, readers, 16, &n));
    for (size_t i = 0; i < n && i < 16; i++)
        if (readers[i].pid == (int64_t)getpid())
            assert_int_equal(readers[i].version, 0);
}

TS_ENV_TEST(test_stats_bad_arguments)
{
    coffer_stats s;
    coffer_class_stats c;
    size_t n;
    assert_status(coffer_db_stats(NULL, &s), COFFER_ERR_INVALID_ARGUMENT);
    assert_status(coffer_db_stats(env->db, NULL), COFFER_ERR_INVALID_ARGUMENT);
    assert_status(coffer_db_class_stats(env->db, 99, &c), COFFER_ERR_INVALID_ARGUMENT);
    assert_error_contains("99");
    assert_status(coffer_db_readers(env->db, NULL, 4, &n), COFFER_ERR_INVALID_ARGUMENT);
    assert_status(coffer_db_readers(env->db, NULL, 0, NULL), COFFER_ERR_INVALID_ARGUMENT);
    assert_status(coffer_db_readers(NULL, NULL, 0, &n), COFFER_ERR_INVALID_ARGUMENT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TS_TEST_ALL_MODES(test_stats_of_a_new_file),
        TS_TEST_ALL_MODES(test_class_stats_count_objects_and_index_entries),
        TS_TEST_FILE_MODES(test_deleting_frees_pages_and_the_version_moves),
        TS_TEST_ALL_MODES(test_a_reader_keeps_change_log_entries_and_is_listed),
        TS_TEST_ALL_MODES(test_stats_bad_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
