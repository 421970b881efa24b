/* test_open_concurrency.c — opens on several threads: a long open of one
 * file (here a migration callback that waits) does not hold up opens of
 * other files; two opens of one file run its migration once; an open whose
 * migration fails leaves the file to the next open; a fork() taken while a
 * thread opens a file can open files in the child. Waits are on conditions
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

/* A migration callback that runs until a flag is raised. */
typedef struct waiting_migration {
    flags *flags;
    int *until;            /* the flag it waits for */
    coffer_status outcome; /* what it returns then */
} waiting_migration;

static coffer_status migrate_waiting(coffer_migration *m, uint64_t old_version, uint64_t new_version, void *ctx)
{
    (void)m, (void)old_version, (void)new_version;
    waiting_migration *w = ctx;
    count_migration(w->flags);
    raise_flag(w->flags, &w->flags->migrating);
    return wait_flag(w->flags, w->until) == 0 ? w->outcome : COFFER_ERR_BUSY;
}

static coffer_status migrate_counting(coffer_migration *m, uint64_t old_version, uint64_t new_version, void *ctx)
{
    (void)m, (void)old_version, (void)new_version;
    count_migration(ctx);
    return COFFER_OK;
}

/* Another thread's open, begun once a migration runs. */
typedef struct opener {
    flags *flags;
    const char *path;
    int migrate;   /* opens at version 2 with the counting callback, else at version 1 */
    int *started;  /* raised just before it opens, or NULL */
    int *finished; /* raised once it has opened and closed, or NULL (it keeps the handle) */
    coffer_status opened;
    coffer_db *db;
} opener;

static void *run_opener(void *arg)
{
    opener *o = arg;
    o->opened = COFFER_ERR_INTERNAL;
    if (wait_flag(o->flags, &o->flags->migrating) != 0)
        return NULL;
    if (o->started)
        raise_flag(o->flags, o->started);
    o->opened = o->migrate ? open_v2(o->path, migrate_counting, o->flags, &o->db) : ts_open_std(o->path, NULL, 0, 1, &o->db);
    if (o->finished) {
        coffer_close(o->db);
        o->db = NULL;
        raise_flag(o->flags, o->finished);
    }
    return NULL;
}

/* Opens `path` at version 2 with `migration` on this thread while `o` runs
 * on another; returns this open's status. */
static coffer_status open_beside(const char *path, waiting_migration *migration, opener *o, coffer_db **out)
{
    pthread_t thread;
    assert_int_equal(pthread_create(&thread, NULL, run_opener, o), 0);
    coffer_status st = open_v2(path, migrate_waiting, migration, out);
    pthread_join(thread, NULL);
    assert_false(migration->flags->timed_out);
    return st;
}

TS_ENV_TEST(test_migration_does_not_hold_up_other_files)
{
    char migrated[TS_PATH_MAX], other[TS_PATH_MAX];
    ts_join(migrated, env->dir, "migrated.coffer");
    ts_join(other, env->dir, "other.coffer");
    make_v1_file(migrated);
    flags f;
    flags_init(&f);
    waiting_migration migration = {.flags = &f, .until = &f.other_done, .outcome = COFFER_OK};
    opener o = {.flags = &f, .path = other, .finished = &f.other_done};
    coffer_db *db = NULL;
    /* An open of the other file that waited for this migration would time it out. */
    assert_ok(open_beside(migrated, &migration, &o, &db));
    assert_int_equal(o.opened, COFFER_OK);
    assert_int_equal(f.migrations, 1);
    assert_int_equal(coffer_db_schema_version(db), 2);
    assert_int_equal(ts_count_of(db, "Person"), 1);
    coffer_close(db);
    flags_destroy(&f);
}

TS_ENV_TEST(test_two_opens_of_one_file_migrate_once)
{
    make_v1_file(env->path);
    flags f;
    flags_init(&f);
    waiting_migration migration = {.flags = &f, .until = &f.second_started, .outcome = COFFER_OK};
    opener o = {.flags = &f, .path = env->path, .migrate = 1, .started = &f.second_started};
    coffer_db *db = NULL;
    assert_ok(open_beside(env->path, &migration, &o, &db));
    assert_int_equal(o.opened, COFFER_OK);
    assert_int_equal(f.migrations, 1); /* the second open found the file migrated */
    assert_int_equal(coffer_db_schema_version(db), 2);
    assert_int_equal(coffer_db_schema_version(o.db), 2);
    assert_int_equal(ts_count_of(o.db, "Person"), 1);
    coffer_close(o.db);
    coffer_close(db);
    flags_destroy(&f);
}

TS_ENV_TEST(test_failed_migration_leaves_the_file_to_the_next_open)
{
    make_v1_file(env->path);
    flags f;
    flags_init(&f);
    waiting_migration migration = {.flags = &f, .until = &f.second_started, .outcome = COFFER_ERR_INVALID_ARGUMENT};
    opener o = {.flags = &f, .path = env->path, .migrate = 1, .started = &f.second_started};
    coffer_db *db = NULL;
    assert_status(open_beside(env->path, &migration, &o, &db), COFFER_ERR_INVALID_ARGUMENT);
    assert_null(db);
    /* The failure committed nothing: the waiting open ran its own migration. */
    assert_int_equal(o.opened, COFFER_OK);
    assert_int_equal(f.migrations, 2);
    assert_int_equal(coffer_db_schema_version(o.db), 2);
    assert_int_equal(ts_count_of(o.db, "Person"), 1);
    coffer_close(o.db);

    /* Opens of this file and of others go on as before. */
    assert_ok(open_v2(env->path, migrate_counting, &f, &db));
    assert_int_equal(f.migrations, 2);
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
    waiting_migration failing = {.flags = &f, .until = &f.second_started, .outcome = COFFER_ERR_INVALID_ARGUMENT};
    coffer_db *db = NULL;
    assert_status(open_v2(env->path, migrate_waiting, &failing, &db), COFFER_ERR_INVALID_ARGUMENT);
    assert_ok(open_v2(env->path, migrate_counting, &f, &db));
    assert_int_equal(f.migrations, 2);
    assert_int_equal(coffer_db_schema_version(db), 2);
    coffer_close(db);
    flags_destroy(&f);
}

/* ---- fork() during an open ----------------------------------------------- */

typedef struct migrating_open {
    const char *path;
    waiting_migration *migration;
    coffer_status opened;
    coffer_db *db;
} migrating_open;

static void *run_migrating_open(void *arg)
{
    migrating_open *m = arg;
    m->opened = open_v2(m->path, migrate_waiting, m->migration, &m->db);
    return NULL;
}

typedef struct child_files {
    const char *migrating; /* the file the parent is migrating */
    const char *other;
} child_files;

/* In the child: the file the parent is opening and another one open. */
static int open_in_child(void *arg)
{
    const child_files *c = arg;
    coffer_db *db = NULL;
    coffer_status st = ts_open_std(c->migrating, NULL, 0, 1, &db); /* version 1: the migration is not committed */
    if (st == COFFER_OK && coffer_db_schema_version(db) != 1)
        st = COFFER_ERR_INTERNAL;
    coffer_close(db);
    db = NULL;
    if (st == COFFER_OK)
        st = ts_open_std(c->other, NULL, 0, 1, &db);
    coffer_close(db);
    return st;
}

TS_ENV_TEST(test_a_fork_during_an_open_opens_files_in_the_child)
{
    char other[TS_PATH_MAX];
    ts_join(other, env->dir, "other.coffer");
    make_v1_file(env->path);
    flags f;
    flags_init(&f);
    waiting_migration migration = {.flags = &f, .until = &f.other_done, .outcome = COFFER_OK};
    migrating_open m = {.path = env->path, .migration = &migration};
    pthread_t thread;
    assert_int_equal(pthread_create(&thread, NULL, run_migrating_open, &m), 0);
    int child = -1;
    if (wait_flag(&f, &f.migrating) == 0) {
        /* The child does not wait for the gate this process's open holds (its
         * holder does not exist there); it fails by its alarm if it does. */
        child_files files = {.migrating = env->path, .other = other};
        child = ts_run_in_child(open_in_child, &files, "opening in a fork() taken during an open");
    }
    raise_flag(&f, &f.other_done);
    pthread_join(thread, NULL);
    assert_false(f.timed_out);
    assert_int_equal(child, COFFER_OK);
    assert_ok(m.opened);
    assert_int_equal(coffer_db_schema_version(m.db), 2);
    coffer_close(m.db);
    flags_destroy(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TS_TEST_EMPTY(test_migration_does_not_hold_up_other_files),
        TS_TEST_EMPTY(test_two_opens_of_one_file_migrate_once),
        TS_TEST_EMPTY(test_failed_migration_leaves_the_file_to_the_next_open),
        TS_TEST_EMPTY(test_failed_migration_alone_leaves_the_registry_usable),
        TS_TEST_EMPTY(test_a_fork_during_an_open_opens_files_in_the_child),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
