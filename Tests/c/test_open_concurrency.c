/* test_open_concurrency.c — opens on several threads: a long open of one
 * file (here a migration callback that waits) does not hold up opens of
 * other files; two opens of one file run its migration once; an open whose
 * migration fails leaves the file to the next open. Waits are on conditions
 * with a generous limit, never on the clock: a limit reached fails the test. */
#define _GNU_SOURCE
#include "test_support.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define WAIT_LIMIT_SECONDS 60

/* Flags one thread raises and another waits for. */
typedef struct flags {
    pthread_mutex_t mutex;
    pthread_cond_t changed;
    int migrating;      /* a migration callback is running */
    int other_done;     /* the other thread's open and close are over */
    int second_started; /* the second opener is about to call coffer_open */
    int migrations;     /* migration callbacks run */
    int timed_out;      /* a wait reached its limit */
} flags;

static void flags_init(flags *f)
{
    memset(f, 0, sizeof *f);
    pthread_mutex_init(&f->mutex, NULL);
    pthread_cond_init(&f->changed, NULL);
}

static void flags_destroy(flags *f)
{
    pthread_cond_destroy(&f->changed);
    pthread_mutex_destroy(&f->mutex);
}

static void raise_flag(flags *f, int *flag)
{
    pthread_mutex_lock(&f->mutex);
    *flag = 1;
    pthread_cond_broadcast(&f->changed);
    pthread_mutex_unlock(&f->mutex);
}

/* Waits for *flag; 0 once it is set, -1 (and f->timed_out) at the limit. */
static int wait_flag(flags *f, const int *flag)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += WAIT_LIMIT_SECONDS;
    pthread_mutex_lock(&f->mutex);
    int rc = 0;
    while (!*flag && rc != ETIMEDOUT)
        rc = pthread_cond_timedwait(&f->changed, &f->mutex, &until);
    int set = *flag;
    if (!set)
        f->timed_out = 1;
    pthread_mutex_unlock(&f->mutex);
    return set ? 0 : -1;
}

/* Creates `path` with the standard schema at version 1 and one Person. */
static void make_v1_file(const char *path)
{
    coffer_db *db;
    assert_ok(ts_open_std(path, NULL, 0, 1, &db));
    ts_commit_person(db, ts_class(db, "Person"), 1, "Ann");
    coffer_close(db);
}

static coffer_status open_v2(const char *path, coffer_migration_fn fn, void *ctx, coffer_db **out)
{
    coffer_config *cfg = ts_config_at(path);
    assert_ok(coffer_config_set_schema(cfg, ts_std_schema, TS_STD_SCHEMA_COUNT, 2));
    assert_ok(coffer_config_set_migration(cfg, fn, ctx));
    coffer_status st = coffer_open(cfg, out);
    coffer_config_free(cfg);
    return st;
}

static void count_migration(flags *f)
{
    pthread_mutex_lock(&f->mutex);
    f->migrations++;
    pthread_mutex_unlock(&f->mutex);
}

/* ---- a long open does not hold up other files ----------------------------- */

typedef struct other_file {
    flags *flags;
    const char *path;
    coffer_status opened;
} other_file;

/* Once the migration runs, opens and closes a different file. */
static void *open_other_file(void *arg)
{
    other_file *o = arg;
    o->opened = COFFER_ERR_INTERNAL;
    if (wait_flag(o->flags, &o->flags->migrating) != 0)
        return NULL;
    coffer_db *db = NULL;
    o->opened = ts_open_std(o->path, NULL, 0, 1, &db);
    coffer_close(db);
    raise_flag(o->flags, &o->flags->other_done);
    return NULL;
}

/* Runs until the other thread has opened and closed its file. */
static coffer_status migrate_waiting_for_other(coffer_migration *m, uint64_t old_version, uint64_t new_version, void *ctx)
{
    (void)m, (void)old_version, (void)new_version;
    flags *f = ctx;
    count_migration(f);
    raise_flag(f, &f->migrating);
    return wait_flag(f, &f->other_done) == 0 ? COFFER_OK : COFFER_ERR_BUSY;
}

TS_ENV_TEST(test_migration_does_not_hold_up_other_files)
{
    char migrated[TS_PATH_MAX], other[TS_PATH_MAX];
    ts_join(migrated, env->dir, "migrated.coffer");
    ts_join(other, env->dir, "other.coffer");
    make_v1_file(migrated);
    flags f;
    flags_init(&f);
    other_file o = {.flags = &f, .path = other};
    pthread_t thread;
    assert_int_equal(pthread_create(&thread, NULL, open_other_file, &o), 0);
    coffer_db *db = NULL;
    coffer_status st = open_v2(migrated, migrate_waiting_for_other, &f, &db);
    pthread_join(thread, NULL);
    assert_false(f.timed_out); /* the other open waited for this migration */
    assert_ok(st);
    assert_int_equal(o.opened, COFFER_OK);
    assert_int_equal(f.migrations, 1);
    assert_int_equal(coffer_db_schema_version(db), 2);
    assert_int_equal(ts_count_of(db, "Person"), 1);
    coffer_close(db);
    flags_destroy(&f);
}

/* ---- two opens of one file ----------------------------------------------- */

typedef struct second_open {
    flags *flags;
    const char *path;
    coffer_status opened;
    coffer_db *db;
} second_open;

/* Once the first open's migration runs, opens the same file with the
 * counting callback. */
static coffer_status migrate_counting(coffer_migration *m, uint64_t old_version, uint64_t new_version, void *ctx)
{
    (void)m, (void)old_version, (void)new_version;
    count_migration(ctx);
    return COFFER_OK;
}

static void *open_same_file(void *arg)
{
    second_open *s = arg;
    s->opened = COFFER_ERR_INTERNAL;
    if (wait_flag(s->flags, &s->flags->migrating) != 0)
        return NULL;
    raise_flag(s->flags, &s->flags->second_started);
    s->opened = open_v2(s->path, migrate_counting, s->flags, &s->db);
    return NULL;
}

/* Lets the second opener start, then finishes the migration. */
static coffer_status migrate_letting_second_start(coffer_migration *m, uint64_t old_version, uint64_t new_version, void *ctx)
{
    (void)m, (void)old_version, (void)new_version;
    flags *f = ctx;
    count_migration(f);
    raise_flag(f, &f->migrating);
    return wait_flag(f, &f->second_started) == 0 ? COFFER_OK : COFFER_ERR_BUSY;
}

TS_ENV_TEST(test_two_opens_of_one_file_migrate_once)
{
    make_v1_file(env->path);
    flags f;
    flags_init(&f);
    second_open s = {.flags = &f, .path = env->path};
    pthread_t thread;
    assert_int_equal(pthread_create(&thread, NULL, open_same_file, &s), 0);
    coffer_db *db = NULL;
    coffer_status st = open_v2(env->path, migrate_letting_second_start, &f, &db);
    pthread_join(thread, NULL);
    assert_false(f.timed_out);
    assert_ok(st);
    assert_int_equal(s.opened, COFFER_OK);
    assert_int_equal(f.migrations, 1); /* the second open found the file migrated */
    assert_int_equal(coffer_db_schema_version(db), 2);
    assert_int_equal(coffer_db_schema_version(s.db), 2);
    assert_int_equal(ts_count_of(s.db, "Person"), 1);
    coffer_close(s.db);
    coffer_close(db);
    flags_destroy(&f);
}

/* ---- a failed migration ---------------------------------------------------- */

/* Lets the second opener start, then fails. */
static coffer_status migrate_then_fail(coffer_migration *m, uint64_t old_version, uint64_t new_version, void *ctx)
{
    (void)m, (void)old_version, (void)new_version;
    flags *f = ctx;
    raise_flag(f, &f->migrating);
    wait_flag(f, &f->second_started);
    return COFFER_ERR_INVALID_ARGUMENT;
}

TS_ENV_TEST(test_failed_migration_leaves_the_file_to_the_next_open)
{
    make_v1_file(env->path);
    flags f;
    flags_init(&f);
    second_open s = {.flags = &f, .path = env->path};
    pthread_t thread;
    assert_int_equal(pthread_create(&thread, NULL, open_same_file, &s), 0);
    coffer_db *db = NULL;
    assert_status(open_v2(env->path, migrate_then_fail, &f, &db), COFFER_ERR_INVALID_ARGUMENT);
    assert_null(db);
    pthread_join(thread, NULL);
    assert_false(f.timed_out);
    /* The failure committed nothing: the waiting open migrated the file itself. */
    assert_int_equal(s.opened, COFFER_OK);
    assert_int_equal(f.migrations, 1);
    assert_int_equal(coffer_db_schema_version(s.db), 2);
    assert_int_equal(ts_count_of(s.db, "Person"), 1);
    coffer_close(s.db);

    /* Opens of this file and of others go on as before. */
    assert_ok(open_v2(env->path, migrate_counting, &f, &db));
    assert_int_equal(f.migrations, 1);
    coffer_close(db);
    char other[TS_PATH_MAX];
    assert_ok(ts_open_std(ts_join(other, env->dir, "other.coffer"), NULL, 0, 1, &db));
    coffer_close(db);
    flags_destroy(&f);
}

TS_ENV_TEST(test_failed_migration_alone_leaves_the_registry_usable)
{
    make_v1_file(env->path);
    flags f;
    flags_init(&f);
    f.second_started = 1; /* nobody else opens it */
    coffer_db *db = NULL;
    assert_status(open_v2(env->path, migrate_then_fail, &f, &db), COFFER_ERR_INVALID_ARGUMENT);
    assert_ok(open_v2(env->path, migrate_counting, &f, &db));
    assert_int_equal(f.migrations, 1);
    assert_int_equal(coffer_db_schema_version(db), 2);
    coffer_close(db);
    flags_destroy(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TS_TEST_EMPTY(test_migration_does_not_hold_up_other_files),
        TS_TEST_EMPTY(test_two_opens_of_one_file_migrate_once),
        TS_TEST_EMPTY(test_failed_migration_leaves_the_file_to_the_next_open),
        TS_TEST_EMPTY(test_failed_migration_alone_leaves_the_registry_usable),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
