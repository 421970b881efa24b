/* test_commit_flushes.c — what a single-object write transaction asks of the
 * disk, plain and encrypted: at COFFER_DURABILITY_FULL a commit flushes its
 * data pages and then writes its meta page synchronously, before
 * coffer_txn_commit() returns (nothing of it is left to a later flush); at
 * NORMAL the meta page is written without a flush; at NONE nothing is
 * flushed. The file's writes and flushes are seen by wrapping the C
 * library's write and flush calls in this executable (LMDB, a shared
 * library, calls them through the dynamic linker, which finds these first).
 * A writer killed with SIGKILL right after commits returned keeps every
 * one of them, plain and encrypted. */
#define _GNU_SOURCE
#include "test_support.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

/* ------------------------------------------------------------------------ */
/* The data file's writes and flushes, in order                              */
/* ------------------------------------------------------------------------ */

enum { EV_WRITE = 'w', EV_SYNC_WRITE = 'D', EV_FLUSH = 'S' };

static struct {
    int on;           /* recording */
    dev_t dev;        /* the data file */
    ino_t ino;
    char events[4096];
    size_t count;
} rec;

static int is_data_file(int fd)
{
    struct stat sb;
    return rec.on && fstat(fd, &sb) == 0 && sb.st_dev == rec.dev && sb.st_ino == rec.ino;
}

/* A write to the data file: synchronous if its descriptor was opened with
 * O_DSYNC (or O_SYNC, which includes it). */
static void note_write(int fd)
{
    if (!is_data_file(fd) || rec.count >= sizeof rec.events - 1)
        return;
    int fl = fcntl(fd, F_GETFL);
    rec.events[rec.count++] = (fl >= 0 && (fl & O_DSYNC) == O_DSYNC) ? EV_SYNC_WRITE : EV_WRITE;
}

static void note_flush(int fd)
{
    if (is_data_file(fd) && rec.count < sizeof rec.events - 1)
        rec.events[rec.count++] = EV_FLUSH;
}

#define REAL(name, type) ((type)dlsym(RTLD_NEXT, name))

ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
    note_write(fd);
    return REAL("pwrite", ssize_t (*)(int, const void *, size_t, off_t))(fd, buf, n, off);
}

ssize_t write(int fd, const void *buf, size_t n)
{
    note_write(fd);
    return REAL("write", ssize_t (*)(int, const void *, size_t))(fd, buf, n);
}

ssize_t writev(int fd, const struct iovec *iov, int n)
{
    note_write(fd);
    return REAL("writev", ssize_t (*)(int, const struct iovec *, int))(fd, iov, n);
}

ssize_t pwritev(int fd, const struct iovec *iov, int n, off_t off)
{
    note_write(fd);
    return REAL("pwritev", ssize_t (*)(int, const struct iovec *, int, off_t))(fd, iov, n, off);
}

int fdatasync(int fd)
{
    note_flush(fd);
    return REAL("fdatasync", int (*)(int))(fd);
}

int fsync(int fd)
{
    note_flush(fd);
    return REAL("fsync", int (*)(int))(fd);
}

/* ------------------------------------------------------------------------ */
/* Fixture                                                                    */
/* ------------------------------------------------------------------------ */

/* The recorder is turned off before the environment goes. */
static int teardown(void **state)
{
    rec.on = 0;
    return ts_teardown(state);
}

static coffer_status open_at(const char *path, int durability, const uint8_t *key, coffer_db **out)
{
    coffer_config *c = NULL;
    coffer_status st = coffer_config_new(&c);
    if (st == COFFER_OK)
        st = coffer_config_set_path(c, path);
    if (st == COFFER_OK)
        st = coffer_config_set_schema(c, ts_std_schema, TS_STD_SCHEMA_COUNT, 1);
    if (st == COFFER_OK)
        st = coffer_config_set_durability(c, (coffer_durability)durability);
    if (st == COFFER_OK && key)
        st = coffer_config_set_encryption_key(c, key, 64);
    if (st == COFFER_OK)
        st = coffer_open(c, out);
    coffer_config_free(c);
    return st;
}

/* One write transaction adding Person `id`; the events of its commit are
 * recorded when `record` is set. */
static coffer_status add_person(coffer_db *db, int64_t id, int record)
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
    rec.count = 0;
    rec.on = record;
    st = st == COFFER_OK ? coffer_txn_commit(txn) : st;
    rec.on = 0;
    rec.events[rec.count] = '\0';
    coffer_txn_free(txn);
    return st;
}

static int has_person(coffer_db *db, int64_t id)
{
    coffer_class_id person;
    coffer_txn *txn = NULL;
    coffer_object *obj = NULL;
    coffer_value pk = coffer_value_int(id);
    assert_ok(coffer_db_find_class(db, "Person", &person));
    assert_ok(coffer_txn_begin(db, COFFER_TXN_READ, &txn));
    coffer_status st = coffer_object_find(txn, person, &pk, &obj);
    coffer_object_release(obj);
    coffer_txn_free(txn);
    assert_true(st == COFFER_OK || st == COFFER_ERR_NOT_FOUND);
    return st == COFFER_OK;
}

static int is_sync_point(char e) { return e == EV_FLUSH || e == EV_SYNC_WRITE; }

/* Opens the file at `durability` (plain or encrypted), makes a few commits
 * so the file has its shape, and records the events of the next one. */
static void record_commit(ts_env *f, int durability, const uint8_t *key)
{
    coffer_db *db = NULL;
    assert_ok(open_at(f->path, durability, key, &db));
    struct stat sb;
    assert_int_equal(stat(f->path, &sb), 0);
    rec.dev = sb.st_dev;
    rec.ino = sb.st_ino;
    for (int64_t id = 1; id <= 20; id++)
        assert_ok(add_person(db, id, 0));
    assert_ok(add_person(db, 21, 1));
    coffer_close(db);
}

/* FULL: the data pages are written and flushed, then the meta page is
 * written synchronously (or written and flushed): the commit ends on a
 * flush, with a flush between the data pages and the meta page. */
static void full_commit_flushes_data_then_meta(const uint8_t *key, ts_env *f)
{
    record_commit(f, COFFER_DURABILITY_FULL, key);
    const char *ev = rec.events;
    size_t n = strlen(ev);
    print_message("%s commit at FULL: %s\n", key ? "encrypted" : "plain", ev);
    assert_true(n >= 2);
    assert_true(is_sync_point(ev[n - 1])); /* the meta page, on the disk */
    /* The last write before the meta page is followed by a flush that
     * precedes the meta page: the data it points to is on the disk first. */
    size_t meta = n - 1;
    while (meta > 0 && ev[meta] == EV_FLUSH)
        meta--; /* the meta write itself */
    assert_true(ev[meta] == EV_WRITE || ev[meta] == EV_SYNC_WRITE);
    size_t i = meta;
    int flushed_before = 0;
    while (i-- > 0 && !flushed_before)
        flushed_before = ev[i] == EV_FLUSH;
    assert_true(flushed_before);
    assert_non_null(memchr(ev, EV_WRITE, meta)); /* data pages were written */
}

static void full_plain(void **state) { full_commit_flushes_data_then_meta(NULL, *state); }

static void full_encrypted(void **state) { full_commit_flushes_data_then_meta(ts_key, *state); }

/* NORMAL: the data pages are flushed, the meta page is not (a system crash
 * may lose the last commit); NONE: no flush at all. Both show the
 * recording tells the levels apart. */
static void weaker_levels(const uint8_t *key, ts_env *f)
{
    record_commit(f, COFFER_DURABILITY_NORMAL, key);
    size_t n = strlen(rec.events);
    print_message("%s commit at NORMAL: %s\n", key ? "encrypted" : "plain", rec.events);
    assert_true(n >= 2);
    assert_int_equal(rec.events[n - 1], EV_WRITE);
    assert_non_null(strchr(rec.events, EV_FLUSH));
    assert_null(strchr(rec.events, EV_SYNC_WRITE));
    ts_remove_tree(f->dir);
    assert_int_equal(ts_make_temp_dir(f->dir), 0);
    ts_join(f->path, f->dir, "test.coffer");
    record_commit(f, COFFER_DURABILITY_NONE, key);
    print_message("%s commit at NONE: %s\n", key ? "encrypted" : "plain", rec.events);
    assert_true(strlen(rec.events) >= 1);
    assert_null(strchr(rec.events, EV_FLUSH));
    assert_null(strchr(rec.events, EV_SYNC_WRITE));
}

static void weaker_plain(void **state) { weaker_levels(NULL, *state); }

static void weaker_encrypted(void **state) { weaker_levels(ts_key, *state); }

/* A writer commits one object per transaction and reports each id once its
 * commit returned; killed with SIGKILL at a random moment after the 30th,
 * every reported object is in the file reopened. */
static void sigkill_keeps_reported(const uint8_t *key, ts_env *f)
{
    ts_fork child;
    if (ts_fork_with_pipes(&child) == 0) {
        coffer_db *db = NULL;
        if (open_at(f->path, COFFER_DURABILITY_FULL, key, &db) != COFFER_OK)
            _exit(10);
        for (int32_t id = 1; id < 1000000; id++) {
            if (add_person(db, id, 0) != COFFER_OK)
                _exit(11);
            if (write(child.send, &id, sizeof id) != (ssize_t)sizeof id)
                _exit(12);
        }
        _exit(13);
    }
    int32_t last = ts_kill_writer(&child, 30, 0, 20000, 200);
    assert_true(last >= 30);
    coffer_db *db = NULL;
    assert_ok(open_at(f->path, COFFER_DURABILITY_FULL, key, &db));
    for (int32_t id = 1; id <= last; id++)
        if (!has_person(db, id))
            fail_msg("object %d was committed before the kill and is missing", (int)id);
    coffer_close(db);
}

static void sigkill_plain(void **state) { sigkill_keeps_reported(NULL, *state); }

static void sigkill_encrypted(void **state) { sigkill_keeps_reported(ts_key, *state); }

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_prestate_setup_teardown(full_plain, ts_setup_empty, teardown, &ts_mode_plain),
        cmocka_unit_test_prestate_setup_teardown(full_encrypted, ts_setup_empty, teardown, &ts_mode_plain),
        cmocka_unit_test_prestate_setup_teardown(weaker_plain, ts_setup_empty, teardown, &ts_mode_plain),
        cmocka_unit_test_prestate_setup_teardown(weaker_encrypted, ts_setup_empty, teardown, &ts_mode_plain),
        cmocka_unit_test_prestate_setup_teardown(sigkill_plain, ts_setup_empty, teardown, &ts_mode_plain),
        cmocka_unit_test_prestate_setup_teardown(sigkill_encrypted, ts_setup_empty, teardown, &ts_mode_plain),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
