/* test_open_leftovers.c — the files an open puts beside a path: the lock
 * file's space is reserved (the size LMDB gives it, every block allocated),
 * and an open that fails removes what it created (a `-lock` and `-note`
 * beside a text file, an LMDB file of another program or an encrypted file
 * opened with the wrong key), but never a lock file another process is using
 * nor a data file holding committed data; and an opener left waiting for a
 * lock file that was removed opens again. */
#define _GNU_SOURCE
#include "test_support.h"

#include <dirent.h>
#include <lmdb.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "storage/lifecycle.h"
#include "storage/reserve.h"

static char *sidecar(char *out, const char *path, const char *suffix)
{
    if (snprintf(out, TS_PATH_MAX, "%s%s", path, suffix) >= TS_PATH_MAX)
        fail_msg("path too long: %s", path);
    return out;
}

/* Fails unless the directory holds exactly `n` entries (printed). */
static void assert_entries(const char *dir, int n)
{
    assert_int_equal(ts_count_dir_entries(dir), n);
}

/* An LMDB environment of another program at `path` (one key, committed),
 * without its lock file. */
static void make_foreign_lmdb(const char *path)
{
    ts_write_foreign_lmdb(path, "key", "value");
    char lock[TS_PATH_MAX];
    unlink(sidecar(lock, path, "-lock"));
}

/* The lock file is exactly as large as LMDB makes it (compared with one
 * made by LMDB alone) and fully allocated, so LMDB's stores into its
 * mapping can never meet a hole the disk cannot fill. */
TS_ENV_TEST(test_lock_file_is_reserved)
{
    char raw[TS_PATH_MAX], raw_lock[TS_PATH_MAX], lock[TS_PATH_MAX], note[TS_PATH_MAX];
    ts_join(raw, env->dir, "raw.mdb");
    MDB_env *menv;
    assert_int_equal(mdb_env_create(&menv), 0);
    long long computed = (long long)cf_lock_file_size(menv);
    assert_int_equal(mdb_env_open(menv, raw, MDB_NOSUBDIR, 0644), 0);
    mdb_env_close(menv);
    long long lmdb_size = ts_file_size(sidecar(raw_lock, raw, "-lock"));
    print_message("    LMDB's lock file: %lld bytes; computed: %lld\n", lmdb_size, computed);
    assert_int_equal(computed, lmdb_size);

    struct stat sb;
    assert_int_equal(stat(sidecar(lock, env->path, "-lock"), &sb), 0);
    assert_int_equal((long long)sb.st_size, lmdb_size);
    assert_true((long long)sb.st_blocks * 512 >= (long long)sb.st_size);
    assert_int_equal(stat(sidecar(note, env->path, "-note"), &sb), 0);
    assert_true((long long)sb.st_blocks * 512 >= (long long)sb.st_size);
}

static int compact_always(uint64_t total, uint64_t used, void *ctx)
{
    (void)total;
    (void)used;
    ++*(int *)ctx;
    return 1;
}

/* A text file is refused, read-write, read-only and with compaction on
 * launch, and nothing is left beside it; the text is untouched. */
TS_ENV_TEST(test_text_file_leaves_no_lock)
{
    for (int size = 0; size < 2; size++) {
        char path[TS_PATH_MAX];
        ts_join(path, env->dir, "notes.txt");
        size_t len = size ? 20000 : 14;
        char *text = malloc(len);
        for (size_t i = 0; i < len; i++)
            text[i] = "a few notes.\n"[i % 13];
        assert_int_equal(ts_write_file(path, text, len), 0);
        for (int read_only = 0; read_only < 2; read_only++) {
            coffer_db *db = NULL;
            assert_status(ts_open_std(path, NULL, read_only, 1, &db), COFFER_ERR_NOT_A_DATABASE);
            assert_null(db);
            assert_entries(env->dir, 1);
        }
        /* compaction on launch looks at the file first, under its own lock */
        int calls = 0;
        coffer_config *cfg = ts_config_at(path);
        assert_ok(coffer_config_set_should_compact_on_launch(cfg, compact_always, &calls));
        coffer_db *db = NULL;
        assert_status(coffer_open(cfg, &db), COFFER_ERR_NOT_A_DATABASE);
        coffer_config_free(cfg);
        assert_entries(env->dir, 1);
        size_t got_len;
        unsigned char *got = ts_read_file(path, &got_len);
        assert_int_equal(got_len, len);
        assert_memory_equal(got, text, len);
        free(got);
        free(text);
        unlink(path);
    }
}

/* An LMDB file of another program: refused, nothing left beside it, its
 * data untouched. */
TS_ENV_TEST(test_foreign_lmdb_leaves_no_lock)
{
    char path[TS_PATH_MAX];
    ts_join(path, env->dir, "other.mdb");
    make_foreign_lmdb(path);
    long long size = ts_file_size(path);
    coffer_db *db = NULL;
    assert_status(ts_open_std(path, NULL, 0, 1, &db), COFFER_ERR_NOT_A_DATABASE);
    assert_entries(env->dir, 1);
    assert_int_equal(ts_file_size(path), size);
}

/* An encrypted database copied without its lock and note files, opened
 * with the wrong key: refused, nothing left beside it, and it still opens
 * with its own key. */
TS_ENV_TEST(test_wrong_key_leaves_no_lock)
{
    ts_env_close(env);
    char copy[TS_PATH_MAX];
    ts_join(copy, env->dir, "copy.coffer");
    ts_make_person_file(copy, ts_mode_key(TS_ENCRYPTED), 3);
    char lock[TS_PATH_MAX], note[TS_PATH_MAX];
    unlink(sidecar(lock, copy, "-lock"));
    unlink(sidecar(note, copy, "-note"));
    uint8_t wrong[COFFER_ENCRYPTION_KEY_SIZE];
    memset(wrong, 7, sizeof wrong);
    coffer_db *db = NULL;
    assert_status(ts_open_std(copy, wrong, 0, 0, &db), COFFER_ERR_WRONG_KEY);
    assert_false(ts_file_exists(lock));
    assert_false(ts_file_exists(note));
    assert_ok(ts_open_std(copy, ts_mode_key(TS_ENCRYPTED), 0, 0, &db));
    assert_int_equal(ts_count_of(db, "Person"), 3);
    coffer_close(db);
}

/* A failed open beside a database this process has open (through another
 * handle) removes nothing. */
TS_ENV_TEST(test_failed_open_keeps_files_in_use)
{
    char lock[TS_PATH_MAX], note[TS_PATH_MAX];
    uint8_t key[COFFER_ENCRYPTION_KEY_SIZE];
    memset(key, 7, sizeof key);
    coffer_db *db = NULL;
    coffer_status want = env->mode == TS_ENCRYPTED ? COFFER_ERR_WRONG_KEY : COFFER_ERR_NOT_ENCRYPTED;
    assert_status(ts_open_std(env->path, key, 0, 0, &db), want);
    assert_true(ts_file_exists(sidecar(lock, env->path, "-lock")));
    assert_true(ts_file_exists(sidecar(note, env->path, "-note")));
    ts_commit_person(env->db, env->person, 1, "still here");
    assert_int_equal(ts_count_of(env->db, "Person"), 1);
}

/* The removal itself: nothing while another process has the database open
 * (it holds the lock file's shared lock); once it has closed, the lock and
 * note files go but the data file, which holds committed data, stays; an
 * empty data file goes. */
TS_ENV_TEST(test_leftovers_respect_other_processes)
{
    ts_env_close(env);
    const uint8_t *key = ts_mode_key(env->mode);
    char lock[TS_PATH_MAX], note[TS_PATH_MAX];
    int to_child[2], to_parent[2];
    assert_int_equal(pipe(to_child), 0);
    assert_int_equal(pipe(to_parent), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        alarm(60);
        coffer_db *db = NULL;
        char c = 0;
        if (ts_open_std(env->path, key, 0, 1, &db) != COFFER_OK)
            _exit(10);
        if (write(to_parent[1], "o", 1) != 1 || read(to_child[0], &c, 1) != 1)
            _exit(11);
        coffer_close(db);
        _exit(0);
    }
    char c = 0;
    assert_int_equal(read(to_parent[0], &c, 1), 1);
    cf_remove_leftovers(env->path, CF_CREATED_DATA | CF_CREATED_LOCK | CF_CREATED_NOTE);
    int kept = ts_file_exists(env->path) && ts_file_exists(sidecar(lock, env->path, "-lock")) &&
               ts_file_exists(sidecar(note, env->path, "-note"));
    assert_int_equal(write(to_child[1], "c", 1), 1);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    assert_true(kept);

    cf_remove_leftovers(env->path, CF_CREATED_DATA | CF_CREATED_LOCK | CF_CREATED_NOTE);
    assert_true(ts_file_exists(env->path));
    assert_false(ts_file_exists(lock));
    assert_false(ts_file_exists(note));
    coffer_db *db = NULL;
    assert_ok(ts_open_std(env->path, key, 0, 1, &db));
    coffer_close(db);

    char empty[TS_PATH_MAX];
    ts_join(empty, env->dir, "empty.coffer");
    assert_int_equal(ts_write_file(empty, "", 0), 0);
    cf_remove_leftovers(empty, CF_CREATED_DATA);
    assert_false(ts_file_exists(empty));
    close(to_child[0]);
    close(to_child[1]);
    close(to_parent[0]);
    close(to_parent[1]);
}

/* Whether process `pid` has a descriptor of a removed file whose name ends
 * in "-lock". */
static int holds_removed_lock(pid_t pid)
{
    char dir[64];
    snprintf(dir, sizeof dir, "/proc/%d/fd", (int)pid);
    DIR *d = opendir(dir);
    assert_non_null(d);
    int found = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        char link[512], target[TS_PATH_MAX];
        snprintf(link, sizeof link, "%s/%s", dir, e->d_name);
        ssize_t n = readlink(link, target, sizeof target - 1);
        if (n <= 0)
            continue;
        target[n] = '\0';
        if (strstr(target, "-lock (deleted)"))
            found = 1;
    }
    closedir(d);
    return found;
}

/* A process opening a database while a failed open elsewhere removes its
 * lock file (holding the exclusion lock, so the opener waits inside LMDB
 * with the old file) notices the file was replaced and opens again: it
 * ends up on the same lock file as every later opener. */
TS_ENV_TEST(test_opener_waiting_for_a_removed_lock_opens_again)
{
    ts_env_close(env);
    const uint8_t *key = ts_mode_key(env->mode);
    char lock[TS_PATH_MAX];
    sidecar(lock, env->path, "-lock");
    int missing = 0;
    int excl = cf_exclusion_lock(env->path, 0, &missing);
    assert_true(excl >= 0);
    ts_fork child;
    pid_t pid = ts_fork_with_pipes(&child);
    if (pid == 0) {
        coffer_db *db = NULL;
        char c = 0;
        close(excl); /* the parent's, inherited */
        if (ts_open_std(env->path, key, 0, 1, &db) != COFFER_OK)
            _exit(10);
        if (write(child.send, "o", 1) != 1 || read(child.recv, &c, 1) != 1)
            _exit(11);
        coffer_close(db);
        _exit(0);
    }
    /* give the child time to wait for the lock (if it is not waiting yet,
     * it simply opens the new file) */
    struct timespec pause = {0, 300 * 1000000L};
    nanosleep(&pause, NULL);
    assert_int_equal(unlink(lock), 0);
    close(excl);
    char c = 0;
    assert_int_equal(read(child.recv, &c, 1), 1);
    int stale = holds_removed_lock(pid);
    coffer_db *db = NULL;
    coffer_status st = ts_open_std(env->path, key, 0, 1, &db);
    ts_commit_person(db, ts_class(db, "Person"), 7, "after");
    coffer_close(db);
    assert_int_equal(write(child.send, "c", 1), 1);
    int status = 0;
    assert_int_equal(ts_wait_pid(pid, &status), 0);
    ts_fork_close(&child);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    assert_false(stale);
    assert_ok(st);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TS_TEST_FILE_MODES(test_lock_file_is_reserved),
        TS_TEST_EMPTY(test_text_file_leaves_no_lock),
        TS_TEST_EMPTY(test_foreign_lmdb_leaves_no_lock),
        TS_TEST_EMPTY(test_wrong_key_leaves_no_lock),
        TS_TEST_FILE_MODES(test_failed_open_keeps_files_in_use),
        TS_TEST_FILE_MODES_SETUP(test_leftovers_respect_other_processes, ts_setup_empty),
        TS_TEST_FILE_MODES(test_opener_waiting_for_a_removed_lock_opens_again),
    };
    return cmocka_run_group_tests_name("open leftovers", tests, NULL, NULL);
}
