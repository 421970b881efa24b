/* test_progress.c — the progress callback of long opens: a seed copy, the
 * compact-on-launch check, the compaction and a migration reported in that
 * order, 0 first and the total last; cancelling from it in each phase
 * leaves the file as it was. And the progress of coffer_db_write_copy_v2. */
#define _GNU_SOURCE
#include "test_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PEOPLE 4000
#define MAX_CALLS 2000

typedef struct report {
    coffer_progress_phase phase;
    uint64_t done, total;
} report;

/* What the callback was told; it cancels at call `cancel_at` of phase
 * `cancel_phase` (0: the first, -1: the one with done == total). */
typedef struct recorder {
    report calls[MAX_CALLS];
    int n;
    coffer_progress_phase cancel_phase;
    int cancel_at;
    int in_phase;
} recorder;

static int record(coffer_progress_phase phase, uint64_t done, uint64_t total, void *ctx)
{
    recorder *r = ctx;
    if (r->n > 0 && r->calls[r->n - 1].phase != phase)
        r->in_phase = 0;
    if (r->n < MAX_CALLS)
        r->calls[r->n++] = (report){phase, done, total};
    int index = r->in_phase++;
    if (phase != r->cancel_phase)
        return 0;
    if (r->cancel_at < 0)
        return done == total;
    return index == r->cancel_at;
}

static int compact_always(uint64_t total, uint64_t used, void *ctx)
{
    (void)total, (void)used, (void)ctx;
    return 1;
}

static coffer_status set_ages(coffer_migration *m, coffer_object *old_obj, coffer_object *new_obj, void *ctx)
{
    (void)m, (void)old_obj;
    coffer_property_id *age = ctx;
    coffer_value seven = coffer_value_int(7);
    return new_obj ? coffer_object_set_value(new_obj, *age, &seven) : COFFER_OK;
}

/* Sets every Person's age to 7. */
static coffer_status migrate(coffer_migration *m, uint64_t old_version, uint64_t new_version, void *ctx)
{
    (void)old_version, (void)new_version, (void)ctx;
    coffer_db *db = coffer_migration_db(m);
    coffer_class_id person;
    coffer_property_id age;
    coffer_status st = coffer_db_find_class(db, "Person", &person);
    if (st == COFFER_OK)
        st = coffer_db_find_property(db, person, "age", &age);
    return st == COFFER_OK ? coffer_migration_enumerate(m, "Person", set_ages, &age) : st;
}

/* As migrate, but going on whatever the enumeration says. */
static coffer_status migrate_stubbornly(coffer_migration *m, uint64_t old_version, uint64_t new_version, void *ctx)
{
    (void)migrate(m, old_version, new_version, ctx);
    return COFFER_OK;
}

/* The way the bindings migrate: collect the keys with
 * COFFER_MIGRATION_COUNT_LATER, then set each age and count it. The
 * recorder passed as the migration's context must show only the first
 * report when the enumeration returns. */
typedef struct collected {
    coffer_object_key keys[PEOPLE];
    size_t n;
} collected;

static coffer_status collect_key(coffer_migration *m, coffer_object *old_obj, coffer_object *new_obj, void *ctx)
{
    (void)m, (void)new_obj;
    collected *c = ctx;
    c->keys[c->n++] = coffer_object_key_of(old_obj);
    return COFFER_OK;
}

static const recorder *counting_later_seen; /* the recorder of the open running migrate_later */
static int calls_in(const recorder *r, coffer_progress_phase phase);

static coffer_status migrate_later(coffer_migration *m, uint64_t old_version, uint64_t new_version, void *ctx)
{
    (void)old_version, (void)new_version, (void)ctx;
    assert_status(coffer_migration_enumerate_v2(m, "Person", collect_key, NULL, 2), COFFER_ERR_INVALID_ARGUMENT);
    assert_error_contains("unknown flags 0x2");
    collected *c = calloc(1, sizeof *c);
    coffer_status st = coffer_migration_enumerate_v2(m, "Person", collect_key, c, COFFER_MIGRATION_COUNT_LATER);
    assert_int_equal(c->n, PEOPLE);
    assert_int_equal(calls_in(counting_later_seen, COFFER_PROGRESS_MIGRATION), 1); /* 0 of PEOPLE, nothing more */
    coffer_class_id person;
    coffer_property_id age;
    assert_ok(coffer_db_find_class(coffer_migration_db(m), "Person", &person));
    assert_ok(coffer_db_find_property(coffer_migration_db(m), person, "age", &age));
    coffer_value seven = coffer_value_int(7);
    for (size_t i = 0; st == COFFER_OK && i < c->n; i++) {
        coffer_object *o = NULL;
        st = coffer_object_get(coffer_migration_txn(m), person, c->keys[i], &o);
        if (st == COFFER_OK)
            st = coffer_object_set_value(o, age, &seven);
        coffer_object_release(o);
        if (st == COFFER_OK)
            st = coffer_migration_count_visited(m, 1);
        /* the reports follow the work: never ahead of the objects done */
        if (st == COFFER_OK && counting_later_seen->n > 0)
            assert_true(counting_later_seen->calls[counting_later_seen->n - 1].done <= i + 1);
    }
    free(c);
    return st;
}

/* A seed of PEOPLE persons at schema version 1 beside env->path. */
static void make_seed(const ts_env *env, char *seed)
{
    ts_join(seed, env->dir, "seed.coffer");
    ts_make_person_file(seed, ts_mode_key(env->mode), PEOPLE);
}

/* Opens env->path with the standard schema at `version`, the progress
 * recorder and, as asked, a seed, compaction on launch and a migration. */
static coffer_status open_reporting(const ts_env *env, const char *seed, int compact, uint64_t version, coffer_migration_fn fn,
                                    recorder *r, coffer_db **out)
{
    coffer_config *cfg = ts_env_config(env);
    assert_ok(coffer_config_set_schema(cfg, ts_std_schema, TS_STD_SCHEMA_COUNT, version));
    if (seed)
        assert_ok(coffer_config_set_seed_path(cfg, seed));
    if (compact)
        assert_ok(coffer_config_set_should_compact_on_launch(cfg, compact_always, NULL));
    if (fn)
        assert_ok(coffer_config_set_migration(cfg, fn, NULL));
    assert_ok(coffer_config_set_progress(cfg, record, r));
    coffer_status st = coffer_open(cfg, out);
    coffer_config_free(cfg);
    return st;
}

/* Checks the reports of each phase: 0 first, growing, below the total in
 * between, the total last; phases in `order`. */
static void check_reports(const recorder *r, const coffer_progress_phase *order, size_t nphases)
{
    size_t phase = 0;
    for (int i = 0; i < r->n; i++) {
        const report *c = &r->calls[i];
        if (i == 0 || c->phase != r->calls[i - 1].phase) {
            assert_true(phase < nphases);
            assert_int_equal(c->phase, order[phase]);
            phase++;
            assert_int_equal(c->done, 0);
        } else {
            assert_int_equal(c->total, r->calls[i - 1].total);
            assert_true(c->done > r->calls[i - 1].done);
        }
        int last = i + 1 == r->n || r->calls[i + 1].phase != c->phase;
        if (last)
            assert_int_equal(c->done, c->total);
        else if (c->done > 0)
            assert_true(c->done < c->total);
    }
    assert_int_equal(phase, nphases);
}

static int calls_in(const recorder *r, coffer_progress_phase phase)
{
    int n = 0;
    for (int i = 0; i < r->n; i++)
        n += r->calls[i].phase == phase;
    return n;
}

static uint64_t total_of(const recorder *r, coffer_progress_phase phase)
{
    for (int i = 0; i < r->n; i++)
        if (r->calls[i].phase == phase)
            return r->calls[i].total;
    return 0;
}

/* The file at env->path holds the PEOPLE persons at schema version
 * `version`, each aged `age` (-1: not checked). */
static void check_people(const ts_env *env, uint64_t version, int64_t age)
{
    coffer_db *db;
    assert_ok(ts_env_open(env, NULL, 0, 0, &db));
    assert_int_equal(coffer_db_schema_version(db), version);
    assert_int_equal(ts_count_of(db, "Person"), PEOPLE);
    if (age >= 0) {
        coffer_txn *txn = ts_begin(db, COFFER_TXN_READ);
        coffer_class_id person = ts_class(db, "Person");
        coffer_iter *it;
        assert_ok(coffer_class_iterate(txn, person, &it));
        coffer_object *obj;
        coffer_value v;
        while (ts_next(it, &obj)) {
            assert_ok(coffer_object_get_value(obj, ts_prop(db, person, "age"), &v));
            assert_int_equal(v.u.integer, age);
        }
        coffer_iter_free(it);
        coffer_txn_free(txn);
    }
    coffer_close(db);
}

TS_ENV_TEST(test_phases_are_reported_in_order)
{
    char seed[TS_PATH_MAX];
    make_seed(env, seed);
    recorder *r = calloc(1, sizeof *r);
    coffer_db *db;
    assert_ok(open_reporting(env, seed, 1, 2, migrate, r, &db));
    coffer_close(db);
    static const coffer_progress_phase order[] = {COFFER_PROGRESS_SEED_COPY, COFFER_PROGRESS_SHOULD_COMPACT,
                                                  COFFER_PROGRESS_COMPACTION, COFFER_PROGRESS_MIGRATION};
    check_reports(r, order, 4);
    assert_int_equal(total_of(r, COFFER_PROGRESS_SEED_COPY), (uint64_t)ts_file_size(seed));
    assert_int_equal(total_of(r, COFFER_PROGRESS_SHOULD_COMPACT), 1);
    assert_true(total_of(r, COFFER_PROGRESS_COMPACTION) > 0);
    assert_int_equal(total_of(r, COFFER_PROGRESS_MIGRATION), PEOPLE);
    /* Between the ends, about once a percent: never once an object. */
    assert_true(calls_in(r, COFFER_PROGRESS_MIGRATION) > 10);
    assert_true(calls_in(r, COFFER_PROGRESS_MIGRATION) <= 102);
    assert_true(calls_in(r, COFFER_PROGRESS_SEED_COPY) >= 3);
    assert_true(calls_in(r, COFFER_PROGRESS_COMPACTION) >= 2);
    check_people(env, 2, 7);

    /* Opened again, nothing is long: nothing is reported but the check. */
    memset(r, 0, sizeof *r);
    assert_ok(open_reporting(env, seed, 0, 2, migrate, r, &db));
    coffer_close(db);
    assert_int_equal(r->n, 0);
    free(r);
}

/* Cancels phase `phase` at call `at` and checks that the open fails and the
 * file is as it was: the seed not copied, the file not compacted, nothing
 * migrated. */
static void cancel_in(const ts_env *env, coffer_progress_phase phase, int at)
{
    char seed[TS_PATH_MAX];
    ts_join(seed, env->dir, "seed.coffer");
    int seeding = phase == COFFER_PROGRESS_SEED_COPY;
    int compacting = phase == COFFER_PROGRESS_SHOULD_COMPACT || phase == COFFER_PROGRESS_COMPACTION;
    if (!seeding && !ts_file_exists(env->path))
        ts_make_person_file(env->path, ts_mode_key(env->mode), PEOPLE);
    size_t size_before = 0;
    unsigned char *before = seeding ? NULL : ts_read_file(env->path, &size_before);
    int entries = ts_count_dir_entries(env->dir);
    recorder *r = calloc(1, sizeof *r);
    r->cancel_phase = phase;
    r->cancel_at = at;
    coffer_db *db = NULL;
    assert_status(open_reporting(env, seeding ? seed : NULL, compacting, 2, seeding ? NULL : migrate, r, &db),
                  COFFER_ERR_CANCELLED);
    assert_null(db);
    assert_error_contains("cancelled");
    assert_int_equal(r->calls[r->n - 1].phase, phase);
    assert_int_equal(ts_count_dir_entries(env->dir), entries);
    if (seeding) {
        assert_error_contains("seed copy");
        assert_false(ts_file_exists(env->path));
    } else {
        size_t size_after;
        unsigned char *after = ts_read_file(env->path, &size_after);
        assert_int_equal(size_after, size_before);
        assert_memory_equal(after, before, size_before);
        free(after);
        check_people(env, 1, -1);
    }
    free(before);
    free(r);
}

static void cancel_everywhere(const ts_env *env, coffer_progress_phase phase)
{
    cancel_in(env, phase, 0);
    if (phase != COFFER_PROGRESS_SHOULD_COMPACT)
        cancel_in(env, phase, 1);
    cancel_in(env, phase, -1);
}

TS_ENV_TEST(test_cancel_seed_copy)
{
    char seed[TS_PATH_MAX];
    make_seed(env, seed);
    cancel_everywhere(env, COFFER_PROGRESS_SEED_COPY);
    /* Without cancelling, the seed is copied. */
    coffer_db *db;
    recorder *r = calloc(1, sizeof *r);
    assert_ok(open_reporting(env, seed, 0, 1, NULL, r, &db));
    coffer_close(db);
    free(r);
    check_people(env, 1, -1);
}

/* Progress counted by the caller after the enumeration
 * (COFFER_MIGRATION_COUNT_LATER): reported as the work is done, in order,
 * and cancelled from coffer_migration_count_visited(). */
TS_ENV_TEST(test_migration_counted_later)
{
    ts_make_person_file(env->path, ts_mode_key(env->mode), PEOPLE);
    recorder *r = calloc(1, sizeof *r);
    counting_later_seen = r;
    coffer_db *db = NULL;
    assert_ok(open_reporting(env, NULL, 0, 2, migrate_later, r, &db));
    coffer_close(db);
    static const coffer_progress_phase order[] = {COFFER_PROGRESS_MIGRATION};
    check_reports(r, order, 1);
    assert_int_equal(total_of(r, COFFER_PROGRESS_MIGRATION), PEOPLE);
    assert_true(calls_in(r, COFFER_PROGRESS_MIGRATION) > 10);
    assert_true(calls_in(r, COFFER_PROGRESS_MIGRATION) <= 102);
    check_people(env, 2, 7);
    free(r);
}

TS_ENV_TEST(test_migration_counted_later_cancelled)
{
    ts_make_person_file(env->path, ts_mode_key(env->mode), PEOPLE);
    recorder *r = calloc(1, sizeof *r);
    r->cancel_phase = COFFER_PROGRESS_MIGRATION;
    r->cancel_at = 5;
    counting_later_seen = r;
    coffer_db *db = NULL;
    assert_status(open_reporting(env, NULL, 0, 2, migrate_later, r, &db), COFFER_ERR_CANCELLED);
    assert_error_contains("migration");
    check_people(env, 1, -1);
    free(r);
}

TS_ENV_TEST(test_cancel_compaction)
{
    cancel_everywhere(env, COFFER_PROGRESS_SHOULD_COMPACT);
    cancel_everywhere(env, COFFER_PROGRESS_COMPACTION);
}

TS_ENV_TEST(test_cancel_migration)
{
    cancel_everywhere(env, COFFER_PROGRESS_MIGRATION);
    /* A migration that ignores the cancelled enumeration is abandoned too. */
    recorder *r = calloc(1, sizeof *r);
    r->cancel_phase = COFFER_PROGRESS_MIGRATION;
    r->cancel_at = 1;
    coffer_db *db = NULL;
    assert_status(open_reporting(env, NULL, 0, 2, migrate_stubbornly, r, &db), COFFER_ERR_CANCELLED);
    assert_error_contains("migration");
    check_people(env, 1, -1);
    /* Then it migrates. */
    memset(r, 0, sizeof *r);
    assert_ok(open_reporting(env, NULL, 0, 2, migrate, r, &db));
    coffer_close(db);
    free(r);
    check_people(env, 2, 7);
}

/* coffer_db_write_copy_v2: the copy reported from 0 to its total, and
 * cancelled at its beginning, in its middle and at its end with nothing
 * left behind; a plain file's copy is LMDB's, an encrypted one's goes entry
 * by entry. */
TS_ENV_TEST(test_write_copy_reports_and_cancels)
{
    const uint8_t *key = ts_mode_key(env->mode);
    size_t key_size = key ? COFFER_ENCRYPTION_KEY_SIZE : 0;
    ts_make_person_file(env->path, key, PEOPLE);
    coffer_db *db;
    assert_ok(ts_env_open(env, NULL, 0, 0, &db));
    char copy[TS_PATH_MAX];
    ts_join(copy, env->dir, "copy.coffer");
    int entries = ts_count_dir_entries(env->dir);
    recorder *r = calloc(1, sizeof *r);
    static const int points[] = {0, 1, -1};
    for (size_t i = 0; i < 3; i++) {
        memset(r, 0, sizeof *r);
        r->cancel_phase = COFFER_PROGRESS_COPY;
        r->cancel_at = points[i];
        assert_status(coffer_db_write_copy_v2(db, copy, key, key_size, record, r), COFFER_ERR_CANCELLED);
        assert_error_contains("copy");
        assert_false(ts_file_exists(copy));
        assert_int_equal(ts_count_dir_entries(env->dir), entries);
    }
    memset(r, 0, sizeof *r);
    assert_ok(coffer_db_write_copy_v2(db, copy, key, key_size, record, r));
    static const coffer_progress_phase order[] = {COFFER_PROGRESS_COPY};
    check_reports(r, order, 1);
    assert_true(r->n >= 3);
    coffer_db *copied;
    assert_ok(ts_open_path(copy, key, 0, NULL, 0, 0, &copied));
    assert_int_equal(ts_count_of(copied, "Person"), PEOPLE);
    coffer_close(copied);
    /* Without a callback it is coffer_db_write_copy(). */
    char second[TS_PATH_MAX];
    ts_join(second, env->dir, "second.coffer");
    assert_ok(coffer_db_write_copy_v2(db, second, key, key_size, NULL, r));
    assert_ok(ts_open_path(second, key, 0, NULL, 0, 0, &copied));
    assert_int_equal(ts_count_of(copied, "Person"), PEOPLE);
    coffer_close(copied);
    assert_status(coffer_db_write_copy_v2(NULL, copy, NULL, 0, record, r), COFFER_ERR_INVALID_ARGUMENT);
    assert_error_contains("coffer_db_write_copy");
    coffer_close(db);
    free(r);
}

TS_ENV_TEST(test_null_callback_clears_it)
{
    char seed[TS_PATH_MAX];
    make_seed(env, seed);
    recorder *r = calloc(1, sizeof *r);
    r->cancel_phase = COFFER_PROGRESS_SEED_COPY;
    coffer_config *cfg = ts_env_config(env);
    assert_ok(coffer_config_set_seed_path(cfg, seed));
    assert_ok(coffer_config_set_progress(cfg, record, r));
    assert_ok(coffer_config_set_progress(cfg, NULL, r));
    coffer_db *db;
    assert_ok(coffer_open(cfg, &db));
    coffer_close(db);
    coffer_config_free(cfg);
    assert_int_equal(r->n, 0);
    free(r);
    check_people(env, 1, -1);
}

TS_ENV_TEST(test_bad_arguments)
{
    (void)env;
    recorder r = {0};
    assert_status(coffer_config_set_progress(NULL, record, &r), COFFER_ERR_INVALID_ARGUMENT);
    assert_error_contains("coffer_config_set_progress");
    assert_error_contains("config is NULL");
    assert_string_equal(coffer_strerror(COFFER_ERR_CANCELLED), "cancelled");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TS_TEST_FILE_MODES_SETUP(test_phases_are_reported_in_order, ts_setup_empty),
        TS_TEST_FILE_MODES_SETUP(test_cancel_seed_copy, ts_setup_empty),
        TS_TEST_FILE_MODES_SETUP(test_cancel_compaction, ts_setup_empty),
        TS_TEST_FILE_MODES_SETUP(test_cancel_migration, ts_setup_empty),
        TS_TEST_FILE_MODES_SETUP(test_migration_counted_later, ts_setup_empty),
        TS_TEST_FILE_MODES_SETUP(test_migration_counted_later_cancelled, ts_setup_empty),
        TS_TEST_FILE_MODES_SETUP(test_write_copy_reports_and_cancels, ts_setup_empty),
        TS_TEST_FILE_MODES_SETUP(test_null_callback_clears_it, ts_setup_empty),
        TS_TEST_EMPTY(test_bad_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
