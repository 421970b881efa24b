/* test_map_growth.c — the map never shows: writes to 4 GiB go through on
 * the first attempt (crossing 1 and 2 GiB, where the map used to be full)
 * while a read transaction stays open, as an observed database always has
 * one, so the map cannot be remapped; a map started small grows before it
 * fills, in every storage mode; a process adopts a file another process grew
 * beyond its map; and the configured maximum file size is the only limit a
 * writer meets, with its own error. */
#define _GNU_SOURCE
#include "test_support.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* 4 GiB in 16 MiB values, 128 MiB per transaction, with a read transaction
 * of the process open all along: every write succeeds the first time. */
TS_ENV_TEST(test_write_4_gib)
{
    const size_t size = COFFER_MAX_VALUE_SIZE;
    const int per_txn = 8, txns = 32; /* 256 values: 4 GiB */
    unsigned char *buf = malloc(size);
    assert_non_null(buf);
    coffer_db *reader = NULL;
    assert_ok(ts_open_std(env->path, ts_mode_key(env->mode), 0, 0, &reader));
    coffer_txn *pinned = ts_begin(reader, COFFER_TXN_READ);
    for (int t = 0; t < txns; t++) {
        coffer_status st = ts_write_tagged_blobs(env->db, buf, size, (int64_t)t * per_txn, per_txn);
        if (st != COFFER_OK)
            fail_msg("transaction %d (%lld MiB written): status %d: %s", t, (long long)t * per_txn * 16, (int)st,
                     coffer_last_error());
    }
    assert_int_equal(ts_count(pinned, env->all_types), 0);
    coffer_txn_free(pinned);
    coffer_close(reader);
    free(buf);
    long long file = ts_file_size(env->path);
    print_message("    file size %lld bytes\n", file);
    assert_true(file >= (4LL << 30));
    ts_check_tagged_blobs(env->db, (int64_t)txns * per_txn, size, 64);
    ts_env_close(env);
    assert_int_equal(unlink(env->path), 0); /* 4 GiB back at once */
}

/* A map started at 4 MiB (the COFFER_INITIAL_MAP_SIZE hook) grows, again
 * and again, before each transaction that could fill it: 48 MiB written in
 * 256 KiB values with no error, then everything read back after reopening.
 * (A single transaction larger than half the map cannot be helped: the
 * real reservation is 64 GiB.) */
TS_ENV_TEST(test_small_map_grows_before_it_fills)
{
    ts_env_close(env);
    setenv("COFFER_INITIAL_MAP_SIZE", "4194304", 1);
    coffer_status st = ts_env_open(env, ts_std_schema, TS_STD_SCHEMA_COUNT, 1, &env->db);
    unsetenv("COFFER_INITIAL_MAP_SIZE");
    assert_ok(st);
    const size_t size = 256u << 10;
    unsigned char *buf = malloc(size);
    for (int i = 0; i < 192; i++)
        assert_ok(ts_write_tagged_blobs(env->db, buf, size, i, 1));
    free(buf);
    ts_check_tagged_blobs(env->db, 192, size, 8);
    coffer_db *keep = ts_env_keep(env);
    ts_env_reopen(env, NULL, 0, 0);
    ts_check_tagged_blobs(env->db, 192, size, 8);
    coffer_close(keep);
}

/* Another process grows the file far beyond this process's (small) map
 * while this process holds a read transaction: the snapshot stays as it
 * was; a transaction begun with none open adopts the file's size and reads
 * and writes without error. A transaction begun while the old one is still
 * open cannot remap and says so. */
TS_ENV_TEST(test_map_grown_by_another_process)
{
    const uint8_t *key = ts_mode_key(env->mode);
    const size_t size = 256u << 10;
    /* the child starts before this process opens the file: a forked child
     * must not inherit an open environment */
    ts_fork child;
    pid_t pid = ts_fork_with_pipes(&child);
    if (pid == 0) {
        coffer_db *cdb = NULL;
        unsigned char *buf = malloc(size);
        char go = 0;
        if (read(child.recv, &go, 1) != 1 || !buf || ts_open_std(env->path, key, 0, 1, &cdb) != COFFER_OK)
            _exit(10);
        for (int i = 0; i < 192; i++)
            if (ts_write_tagged_blobs(cdb, buf, size, i, 1) != COFFER_OK) {
                fprintf(stderr, "growing process: %s\n", coffer_last_error());
                _exit(11);
            }
        coffer_close(cdb);
        free(buf);
        _exit(0);
    }
    ts_env_close(env);
    setenv("COFFER_INITIAL_MAP_SIZE", "4194304", 1);
    coffer_db *db = NULL;
    coffer_status st = ts_open_std(env->path, key, 0, 1, &db);
    unsetenv("COFFER_INITIAL_MAP_SIZE");
    if (st != COFFER_OK)
        kill(pid, SIGKILL);
    assert_ok(st);
    coffer_txn *old = ts_begin(db, COFFER_TXN_READ);
    assert_int_equal(write(child.send, "G", 1), 1);
    int status = 0;
    assert_int_equal(ts_wait_pid(pid, &status), 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        fail_msg("the growing process failed (wait status %#x)", status);
    ts_fork_close(&child);
    assert_int_equal(ts_count(old, ts_class(db, "AllTypes")), 0);

    coffer_txn *second = NULL;
    assert_status(coffer_txn_begin(db, COFFER_TXN_READ, &second), COFFER_ERR_BUSY);
    assert_error_contains("transactions of this process stayed open");
    coffer_txn_free(old);

    ts_check_tagged_blobs(db, 192, size, 8);
    unsigned char *buf = malloc(size);
    for (int i = 192; i < 256; i++)
        assert_ok(ts_write_tagged_blobs(db, buf, size, i, 1));
    free(buf);
    ts_check_tagged_blobs(db, 256, size, 8);
    coffer_close(db);
}

/* With a maximum file size the writer meets that limit and only it: the
 * map grows up to it from a small start, the write that would pass it gives
 * COFFER_ERR_FILE_TOO_LARGE naming it (never the map), what was committed
 * stays, and the file is not larger than the maximum. */
TS_ENV_TEST(test_max_file_size_is_the_only_limit)
{
    ts_env_close(env);
    const uint64_t max = 24u << 20;
    for (int small_start = 0; small_start < 2; small_start++) {
        char path[TS_PATH_MAX];
        ts_join(path, env->dir, small_start ? "small.coffer" : "capped.coffer");
        coffer_config *cfg = ts_config_at(path);
        if (ts_mode_key(env->mode))
            assert_ok(coffer_config_set_encryption_key(cfg, ts_mode_key(env->mode), COFFER_ENCRYPTION_KEY_SIZE));
        assert_ok(coffer_config_set_schema(cfg, ts_std_schema, TS_STD_SCHEMA_COUNT, 1));
        assert_ok(coffer_config_set_max_file_size(cfg, max));
        if (small_start)
            setenv("COFFER_INITIAL_MAP_SIZE", "4194304", 1);
        coffer_db *db = NULL;
        coffer_status st = coffer_open(cfg, &db);
        unsetenv("COFFER_INITIAL_MAP_SIZE");
        coffer_config_free(cfg);
        assert_ok(st);
        const size_t size = 512u << 10;
        unsigned char *buf = malloc(size);
        int written = 0;
        for (; written < 128; written++) {
            st = ts_write_tagged_blobs(db, buf, size, written, 1);
            if (st != COFFER_OK)
                break;
        }
        free(buf);
        print_message("    %d values of 512 KiB committed before the %llu-byte limit\n", written, (unsigned long long)max);
        assert_status(st, COFFER_ERR_FILE_TOO_LARGE);
        assert_error_contains("maximum size");
        assert_true(written >= 32);
        ts_check_tagged_blobs(db, written, size, 4);
        coffer_close(db);
        assert_true((uint64_t)ts_file_size(path) <= max);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TS_TEST_MODE(test_write_4_gib, ts_mode_plain, "plain"),
        TS_TEST_ALL_MODES(test_small_map_grows_before_it_fills),
        TS_TEST_FILE_MODES(test_map_grown_by_another_process),
        TS_TEST_FILE_MODES(test_max_file_size_is_the_only_limit),
    };
    return cmocka_run_group_tests_name("map growth", tests, NULL, NULL);
}
