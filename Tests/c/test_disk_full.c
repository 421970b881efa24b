/* test_disk_full.c — a full disk is an error, never a crash, and never costs
 * committed data: creating a database, writing and committing, compacting on
 * launch and writing a copy on a small tmpfs that a filler file has filled.
 * Each gives COFFER_ERR_IO naming the cause, leaves no file behind, keeps
 * what was committed, and works again once space is freed. The process's
 * file size limit (RLIMIT_FSIZE: EFBIG, not ENOSPC) is checked alike.
 *
 * The filesystem is real: the suite moves into a mount namespace of its own
 * (as root, or through a user namespace) and mounts a tmpfs per test, which
 * disappears with the process. Where neither is allowed the tests are
 * skipped with the reason printed. */
#define _GNU_SOURCE
#include "test_support.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#define DISK_SIZE "16m"

static char no_tmpfs[512]; /* why a tmpfs cannot be mounted, or "" */

static int write_text(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = write(fd, text, strlen(text));
    close(fd);
    return n == (ssize_t)strlen(text) ? 0 : -1;
}

/* Moves this (still single-threaded) process into a mount namespace of its
 * own whose mounts do not propagate back; as an ordinary user through a new
 * user namespace in which it is root. */
static void enter_private_mounts(void)
{
    if (unshare(CLONE_NEWNS) != 0) {
        int first = errno;
        char map[64];
        uid_t uid = getuid();
        gid_t gid = getgid();
        if (unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0) {
            snprintf(no_tmpfs, sizeof no_tmpfs, "no mount namespace: unshare(CLONE_NEWNS): %s; with a user namespace: %s",
                     strerror(first), strerror(errno));
            return;
        }
        snprintf(map, sizeof map, "0 %u 1", (unsigned)uid);
        int ok = write_text("/proc/self/setgroups", "deny") == 0 || errno == ENOENT;
        ok = ok && write_text("/proc/self/uid_map", map) == 0;
        snprintf(map, sizeof map, "0 %u 1", (unsigned)gid);
        ok = ok && write_text("/proc/self/gid_map", map) == 0;
        if (!ok) {
            snprintf(no_tmpfs, sizeof no_tmpfs, "cannot map this user into a user namespace: %s", strerror(errno));
            return;
        }
    }
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
        snprintf(no_tmpfs, sizeof no_tmpfs, "cannot make the mounts private: %s", strerror(errno));
}

/* ts_setup_empty, then a small tmpfs over the test's directory. */
static int setup_disk(void **state)
{
    if (ts_setup_empty(state) != 0)
        return -1;
    ts_env *env = *state;
    if (!no_tmpfs[0] && mount("tmpfs", env->dir, "tmpfs", MS_NOSUID | MS_NODEV, "size=" DISK_SIZE ",mode=0700") != 0)
        snprintf(no_tmpfs, sizeof no_tmpfs, "mount -t tmpfs: %s", strerror(errno));
    return 0;
}

static int teardown_disk(void **state)
{
    ts_env *env = *state;
    coffer_close(env->db);
    env->db = NULL;
    if (!no_tmpfs[0])
        umount2(env->dir, MNT_DETACH);
    return ts_teardown(state);
}

static void require_tmpfs(void)
{
    if (no_tmpfs[0]) {
        print_message("    skipped: no small filesystem to fill (%s)\n", no_tmpfs);
        skip();
    }
}

/* Writes `filler` until the filesystem has no room left. */
static void fill_disk(const char *filler)
{
    int fd = open(filler, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    assert_true(fd >= 0);
    static char chunk[65536];
    for (size_t size = sizeof chunk; size >= 1; size /= 2) {
        ssize_t n;
        while ((n = write(fd, chunk, size)) > 0)
            ;
        if (n < 0 && errno != ENOSPC)
            fail_msg("filling the disk: %s", strerror(errno));
    }
    close(fd);
}

/* Gives `bytes` of the filler back (0: keeps it). */
static void free_disk(const char *filler, long long bytes)
{
    long long size = ts_file_size(filler);
    assert_int_equal(truncate(filler, size > bytes ? size - bytes : 0), 0);
}

static void assert_disk_full_error(coffer_status st)
{
    const char *msg = coffer_last_error();
    if (st != COFFER_ERR_IO || !strstr(msg, strerror(ENOSPC)))
        fail_msg("expected COFFER_ERR_IO naming '%s', got status %d: %s", strerror(ENOSPC), (int)st, msg);
}

/* Removes a database's data, lock and note files. */
static void remove_database(const char *path)
{
    static const char *const suffixes[] = {"", "-lock", "-note"};
    for (size_t i = 0; i < 3; i++) {
        char name[TS_PATH_MAX + 8];
        snprintf(name, sizeof name, "%s%s", path, suffixes[i]);
        unlink(name);
    }
}

static coffer_status write_tagged_blob(coffer_db *db, size_t size, int64_t tag)
{
    unsigned char *buf = malloc(size);
    coffer_status st = ts_write_tagged_blobs(db, buf, size, tag, 1);
    free(buf);
    return st;
}

/* The size of the blobs the tests on a full disk commit. */
#define BLOB_SIZE ((size_t)64 * 1024)

/* How the tests on a full disk start: on a small tmpfs of their own (else
 * skipped), with `filler` named in it, and the database opened with the
 * standard schema holding `blobs` tagged blobs (tags 0 to blobs - 1). */
static void open_with_blobs(ts_env *env, char filler[TS_PATH_MAX], int blobs)
{
    require_tmpfs();
    ts_join(filler, env->dir, "filler");
    assert_ok(ts_open_path(env->path, ts_mode_key(env->mode), 0, ts_std_schema, TS_STD_SCHEMA_COUNT, 1, &env->db));
    for (int i = 0; i < blobs; i++)
        assert_ok(write_tagged_blob(env->db, BLOB_SIZE, i));
}

/* Deletes the AllTypes objects tagged `first` or more, in one commit. */
static void delete_tagged_from(coffer_db *db, int64_t first)
{
    coffer_txn *w = ts_begin(db, COFFER_TXN_WRITE);
    coffer_object *obj = NULL;
    coffer_iter *it = ts_iterate(w, ts_class(db, "AllTypes"));
    while (ts_next(it, &obj))
        if (ts_get_int(obj, AT_INT) >= first)
            assert_ok(coffer_object_delete(obj));
    coffer_iter_free(it);
    ts_commit(w);
}

/* Creating a database with no room at all and with every amount of room up
 * to what it needs: each attempt either succeeds or gives the disk-full
 * error, and a failed one leaves nothing but the filler. */
TS_ENV_TEST(test_create_on_full_disk)
{
    require_tmpfs();
    char filler[TS_PATH_MAX], path[TS_PATH_MAX];
    ts_join(filler, env->dir, "filler");
    ts_join(path, env->dir, "new.coffer");
    int failed = 0, created = 0;
    for (long long room = 0; room <= 256 * 1024; room += room < 64 * 1024 ? 4096 : 32768) {
        fill_disk(filler);
        free_disk(filler, room);
        coffer_db *db = NULL;
        coffer_status st = ts_open_path(path, ts_mode_key(env->mode), 0, ts_std_schema, TS_STD_SCHEMA_COUNT, 1, &db);
        if (st == COFFER_OK) {
            created++;
            coffer_close(db);
            assert_ok(ts_open_path(path, ts_mode_key(env->mode), 0, NULL, 0, 0, &db));
            coffer_close(db);
            remove_database(path);
        } else {
            failed++;
            assert_disk_full_error(st);
            assert_null(db);
            assert_int_equal(ts_count_dir_entries(env->dir), 1);
        }
        unlink(filler);
    }
    print_message("    %d creates failed cleanly, %d succeeded\n", failed, created);
    assert_true(failed > 0);
    assert_true(created > 0);
}

/* Writes on a full disk fail at commit with the disk-full error; what was
 * committed before stays readable (in the process and after reopening), and
 * writing resumes once space is freed. */
TS_ENV_TEST(test_write_on_full_disk)
{
    char filler[TS_PATH_MAX];
    int n = 10;
    open_with_blobs(env, filler, n);
    fill_disk(filler);
    int failures = 0;
    for (int attempt = 0; attempt < 40 && failures < 3; attempt++) {
        coffer_status st = write_tagged_blob(env->db, BLOB_SIZE * 4, 1000 + attempt);
        if (st == COFFER_OK) {
            delete_tagged_from(env->db, 1000); /* the free pages of earlier commits took it */
            continue;
        }
        assert_disk_full_error(st);
        failures++;
    }
    assert_int_equal(failures, 3);
    ts_check_tagged_blobs(env->db, n, BLOB_SIZE, 1);
    coffer_close(env->db);
    env->db = NULL;
    assert_ok(ts_open_path(env->path, ts_mode_key(env->mode), 0, NULL, 0, 0, &env->db));
    ts_check_tagged_blobs(env->db, n, BLOB_SIZE, 1);
    /* space back: writing resumes in the same handle */
    unlink(filler);
    for (; n < 20; n++)
        assert_ok(write_tagged_blob(env->db, BLOB_SIZE, n));
    ts_check_tagged_blobs(env->db, n, BLOB_SIZE, 1);
}

static int always_compact(uint64_t total, uint64_t used, void *ctx)
{
    (void)total;
    (void)used;
    ++*(int *)ctx;
    return 1;
}

static coffer_status open_compacting(const ts_env *env, int *calls, coffer_db **out)
{
    coffer_config *cfg = ts_env_config(env);
    assert_ok(coffer_config_set_should_compact_on_launch(cfg, always_compact, calls));
    coffer_status st = coffer_open(cfg, out);
    coffer_config_free(cfg);
    return st;
}

/* Compacting on launch with no room for the compacted copy: the open fails
 * with the disk-full error, no temporary copy stays, the file keeps every
 * object; with room again the compaction shrinks it. */
TS_ENV_TEST(test_compact_on_full_disk)
{
    char filler[TS_PATH_MAX];
    open_with_blobs(env, filler, 40);
    delete_tagged_from(env->db, 5);
    ts_env_close(env);
    long long before = ts_file_size(env->path);
    int entries = ts_count_dir_entries(env->dir);

    fill_disk(filler);
    int calls = 0;
    coffer_db *db = NULL;
    assert_disk_full_error(open_compacting(env, &calls, &db));
    assert_int_equal(calls, 1);
    assert_int_equal(ts_count_dir_entries(env->dir), entries + 1);
    assert_int_equal(ts_file_size(env->path), before);
    unlink(filler);

    assert_ok(ts_open_path(env->path, ts_mode_key(env->mode), 0, NULL, 0, 0, &env->db));
    ts_check_tagged_blobs(env->db, 5, BLOB_SIZE, 1);
    ts_env_close(env);
    assert_ok(open_compacting(env, &calls, &env->db));
    assert_int_equal(calls, 2);
    ts_check_tagged_blobs(env->db, 5, BLOB_SIZE, 1);
    print_message("    %lld bytes before, %lld after compacting\n", before, ts_file_size(env->path));
    assert_true(ts_file_size(env->path) < before);
}

/* Writing a copy (plain, encrypted, re-keyed) with no room for it: the
 * disk-full error, no copy and no temporary file; with room, a copy that
 * holds every object. */
TS_ENV_TEST(test_write_copy_on_full_disk)
{
    char filler[TS_PATH_MAX], copy[TS_PATH_MAX];
    open_with_blobs(env, filler, 20);
    ts_join(copy, env->dir, "copy.coffer");
    int entries = ts_count_dir_entries(env->dir);
    const uint8_t *keys[] = {NULL, ts_mode_key(TS_ENCRYPTED)};
    for (size_t k = 0; k < 2; k++) {
        for (long long room = 0; room <= 512 * 1024; room += 256 * 1024) {
            fill_disk(filler);
            free_disk(filler, room);
            coffer_status st = coffer_db_write_copy(env->db, copy, keys[k], keys[k] ? COFFER_ENCRYPTION_KEY_SIZE : 0);
            assert_disk_full_error(st);
            assert_int_equal(ts_count_dir_entries(env->dir), entries + 1);
            unlink(filler);
        }
        assert_ok(coffer_db_write_copy(env->db, copy, keys[k], keys[k] ? COFFER_ENCRYPTION_KEY_SIZE : 0));
        coffer_db *db = NULL;
        assert_ok(ts_open_path(copy, keys[k], 0, NULL, 0, 0, &db));
        ts_check_tagged_blobs(db, 20, BLOB_SIZE, 1);
        coffer_close(db);
        remove_database(copy);
    }
    ts_check_tagged_blobs(env->db, 20, BLOB_SIZE, 1);
}

/* In a child: the process may write files of at most 4 MiB (SIGXFSZ
 * ignored, so a write past it fails with EFBIG or is cut short). Writes
 * 256 KiB values until one fails; returns how many were committed, or 100
 * and up when the failure was not COFFER_ERR_IO naming "File too large". */
static int write_under_file_size_limit(void *arg)
{
    const ts_env *env = arg;
    struct rlimit limit;
    signal(SIGXFSZ, SIG_IGN);
    if (getrlimit(RLIMIT_FSIZE, &limit) != 0)
        return 100;
    limit.rlim_cur = 4u << 20;
    if (setrlimit(RLIMIT_FSIZE, &limit) != 0)
        return 101;
    coffer_db *db = NULL;
    if (ts_open_path(env->path, ts_mode_key(env->mode), 0, ts_std_schema, TS_STD_SCHEMA_COUNT, 1, &db) != COFFER_OK)
        return 102;
    const size_t size = 256u << 10;
    unsigned char *buf = malloc(size);
    coffer_status st = COFFER_OK;
    int n = 0;
    for (; n < 64 && st == COFFER_OK; n++)
        if ((st = ts_write_tagged_blobs(db, buf, size, n, 1)) != COFFER_OK)
            break;
    free(buf);
    int good = st == COFFER_ERR_IO && strstr(coffer_last_error(), strerror(EFBIG));
    if (!good)
        fprintf(stderr, "under a file size limit: status %d: %s\n", (int)st, coffer_last_error());
    coffer_close(db);
    return good ? n : 103;
}

/* The process's file size limit (RLIMIT_FSIZE) is not a full disk, but
 * stops writes alike: COFFER_ERR_IO naming "File too large", and what was
 * committed stays; without the limit, writing goes on. */
TS_ENV_TEST(test_file_size_limit)
{
    int n = ts_run_in_child(write_under_file_size_limit, env, "writing under a file size limit");
    print_message("    %d values of 256 KiB committed under a 4 MiB file size limit\n", n);
    assert_true(n >= 4 && n < 64);
    const size_t size = 256u << 10;
    assert_ok(ts_open_path(env->path, ts_mode_key(env->mode), 0, NULL, 0, 0, &env->db));
    ts_check_tagged_blobs(env->db, n, size, 1);
    unsigned char *buf = malloc(size);
    assert_ok(ts_write_tagged_blobs(env->db, buf, size, n, 8));
    free(buf);
    ts_check_tagged_blobs(env->db, n + 8, size, 1);
}

/* Both file modes, each on its own small filesystem. */
#define DISK_TESTS(f)                                                                  \
    {#f "[plain]", f, setup_disk, teardown_disk, (void *)&ts_mode_plain},             \
    {#f "[encrypted]", f, setup_disk, teardown_disk, (void *)&ts_mode_encrypted}

int main(void)
{
    enter_private_mounts();
    const struct CMUnitTest tests[] = {
        DISK_TESTS(test_create_on_full_disk),
        DISK_TESTS(test_write_on_full_disk),
        DISK_TESTS(test_compact_on_full_disk),
        DISK_TESTS(test_write_copy_on_full_disk),
        DISK_TESTS(test_file_size_limit),
    };
    return cmocka_run_group_tests_name("disk full", tests, NULL, NULL);
}
