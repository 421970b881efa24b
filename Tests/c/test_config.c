/* test_config.c — configuration setters, default path, in-memory vs path,
 * class subset, version and limits. */
#define _GNU_SOURCE
#include "test_support.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static size_t str_ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* ------------------------------------------------------------------------ */

static void test_version_and_limits(void **state)
{
    (void)state;
    assert_string_equal(coffer_version(), COFFER_VERSION_STRING);
    assert_int_equal(coffer_version_number(), COFFER_VERSION_NUMBER);
    assert_int_equal(COFFER_VERSION_NUMBER,
                     COFFER_VERSION_MAJOR * 10000 + COFFER_VERSION_MINOR * 100 + COFFER_VERSION_PATCH);
    assert_int_equal(coffer_max_class_name(), COFFER_MAX_CLASS_NAME);
    assert_int_equal(coffer_max_property_name(), COFFER_MAX_PROPERTY_NAME);
    assert_int_equal(coffer_encryption_key_size(), COFFER_ENCRYPTION_KEY_SIZE);
    assert_int_equal(COFFER_ENCRYPTION_KEY_SIZE, 64);
    for (int s = COFFER_OK; s <= COFFER_ERR_INTERNAL; s++) {
        const char *text = coffer_strerror((coffer_status)s);
        assert_non_null(text);
        assert_true(strlen(text) > 0);
    }
    assert_non_null(coffer_strerror((coffer_status)999));
}

static void test_last_error_clear(void **state)
{
    (void)state;
    assert_status(coffer_config_new(NULL), COFFER_ERR_INVALID_ARGUMENT);
    assert_int_equal(coffer_last_status(), COFFER_ERR_INVALID_ARGUMENT);
    assert_true(strlen(coffer_last_error()) > 0);
    coffer_clear_error();
    assert_int_equal(coffer_last_status(), COFFER_OK);
    assert_string_equal(coffer_last_error(), "");
}

static void test_null_config_everywhere(void **state)
{
    (void)state;
    assert_status(coffer_config_new(NULL), COFFER_ERR_INVALID_ARGUMENT);
    coffer_config_free(NULL);
    assert_status(coffer_config_set_path(NULL, "x.coffer"), COFFER_ERR_INVALID_ARGUMENT);
    assert_null(coffer_config_path(NULL));
    assert_status(coffer_config_set_in_memory_identifier(NULL, "x"), COFFER_ERR_INVALID_ARGUMENT);
    assert_status(coffer_config_set_read_only(NULL, 1), COFFER_ERR_INVALID_ARGUMENT);
    assert_status(coffer_config_set_seed_path(NULL, "seed"), COFFER_ERR_INVALID_ARGUMENT);
    assert_status(coffer_config_set_encryption_key(NULL, ts_key, 64), COFFER_ERR_INVALID_ARGUMENT);
    assert_status(coffer_config_set_schema(NULL, ts_std_schema, TS_STD_SCHEMA_COUNT, 1),
                  COFFER_ERR_INVALID_ARGUMENT);
    const char *names[] = {"Person"};
    assert_status(coffer_config_set_class_subset(NULL, names, 1), COFFER_ERR_INVALID_ARGUMENT);
    assert_status(coffer_config_set_max_file_size(NULL, 1 << 20), COFFER_ERR_INVALID_ARGUMENT);

    coffer_db *db = NULL;
    assert_status(coffer_open(NULL, &db), COFFER_ERR_INVALID_ARGUMENT);
    assert_null(db);
    coffer_config *cfg = ts_config_new();
    assert_status(coffer_open(cfg, NULL), COFFER_ERR_INVALID_ARGUMENT);
    coffer_config_free(cfg);
    coffer_close(NULL);
}

static void test_empty_identifier(void **state)
{
    (void)state;
    coffer_config *cfg = ts_config_new();
    assert_status(coffer_config_set_in_memory_identifier(cfg, ""), COFFER_ERR_INVALID_ARGUMENT);
    assert_true(strlen(ts_saved_error()) > 0);
    /* the configuration is unchanged: still the default path */
    assert_non_null(coffer_config_path(cfg));
    coffer_config_free(cfg);
}

static void test_key_sizes(void **state)
{
    (void)state;
    uint8_t big[128];
    memset(big, 7, sizeof big);
    coffer_config *cfg = ts_config_new();
    assert_status(coffer_config_set_encryption_key(cfg, big, 32), COFFER_ERR_INVALID_ARGUMENT);
    assert_error_contains("32");
    assert_status(coffer_config_set_encryption_key(cfg, big, 63), COFFER_ERR_INVALID_ARGUMENT);
    assert_error_contains("63");
    assert_status(coffer_config_set_encryption_key(cfg, big, 65), COFFER_ERR_INVALID_ARGUMENT);
    assert_error_contains("65");
    assert_status(coffer_config_set_encryption_key(cfg, big, 128), COFFER_ERR_INVALID_ARGUMENT);
    assert_error_contains("128");
    assert_status(coffer_config_set_encryption_key(cfg, NULL, 64), COFFER_ERR_INVALID_ARGUMENT);
    assert_ok(coffer_config_set_encryption_key(cfg, big, 64));
    /* NULL with size 0 removes the key */
    assert_ok(coffer_config_set_encryption_key(cfg, NULL, 0));
    coffer_config_free(cfg);
}

/* A key that was rejected leaves the configuration without a key: the file is
 * created unencrypted. A removed key, likewise. */
TS_ENV_TEST(test_key_removed_gives_plain_file)
{
    coffer_config *cfg = ts_config_at(env->path);
    assert_ok(coffer_config_set_encryption_key(cfg, ts_key, 64));
    assert_ok(coffer_config_set_encryption_key(cfg, NULL, 0));
    assert_status(coffer_config_set_encryption_key(cfg, ts_key, 16), COFFER_ERR_INVALID_ARGUMENT);
    assert_ok(coffer_config_set_schema(cfg, ts_std_schema, TS_STD_SCHEMA_COUNT, 1));
    coffer_db *db = NULL;
    assert_ok(coffer_open(cfg, &db));
    assert_int_equal(coffer_db_is_encrypted(db), 0);
    coffer_close(db);

    /* with a key set, the file is encrypted */
    char path2[TS_PATH_MAX];
    ts_join(path2, env->dir, "enc.coffer");
    assert_ok(coffer_config_set_path(cfg, path2));
    assert_ok(coffer_config_set_encryption_key(cfg, ts_key, 64));
    assert_ok(coffer_open(cfg, &db));
    assert_int_equal(coffer_db_is_encrypted(db), 1);
    coffer_close(db);
    coffer_config_free(cfg);
}

TS_ENV_TEST(test_default_path)
{
    const char *def = coffer_default_path();
    assert_non_null(def);
    assert_true(str_ends_with(def, "default.coffer"));

    /* a configuration created before the change, with no path set */
    coffer_config *early = NULL;
    assert_ok(coffer_config_new(&early));

    char path[TS_PATH_MAX];
    ts_join(path, env->dir, "my-default.coffer");
    assert_ok(coffer_set_default_path(path));
    assert_string_equal(coffer_default_path(), path);

    coffer_config *cfg = ts_config_new();
    assert_non_null(coffer_config_path(cfg));
    assert_string_equal(coffer_config_path(cfg), path);
    assert_non_null(coffer_config_path(early));
    assert_string_equal(coffer_config_path(early), path);

    assert_ok(coffer_config_set_schema(cfg, ts_std_schema, TS_STD_SCHEMA_COUNT, 1));
    coffer_db *db = NULL;
    assert_ok(coffer_open(cfg, &db));
    assert_true(ts_file_exists(path));
    assert_non_null(coffer_db_path(db));
    assert_string_equal(coffer_db_path(db), path);
    coffer_txn *txn = ts_begin(db, COFFER_TXN_WRITE);
    coffer_field f[] = {ts_field(PERSON_ID, coffer_value_int(7))};
    assert_ok(coffer_object_create(txn, ts_class(db, "Person"), f, 1, COFFER_UPDATE_ERROR, NULL));
    ts_commit(txn);
    coffer_close(db);

    /* the early configuration opens the same file */
    db = NULL;
    assert_ok(coffer_open(early, &db));
    txn = ts_begin(db, COFFER_TXN_READ);
    assert_int_equal(ts_count(txn, ts_class(db, "Person")), 1);
    coffer_txn_free(txn);
    coffer_close(db);

    /* a path set explicitly is not affected by the default */
    char other[TS_PATH_MAX];
    ts_join(other, env->dir, "explicit.coffer");
    assert_ok(coffer_config_set_path(cfg, other));
    char path2[TS_PATH_MAX];
    ts_join(path2, env->dir, "second-default.coffer");
    assert_ok(coffer_set_default_path(path2));
    assert_string_equal(coffer_config_path(cfg), other);
    /* NULL path restores the (current) default path */
    assert_ok(coffer_config_set_path(cfg, NULL));
    assert_string_equal(coffer_config_path(cfg), path2);

    /* NULL restores "default.coffer" */
    assert_ok(coffer_set_default_path(NULL));
    assert_true(str_ends_with(coffer_default_path(), "default.coffer"));
    assert_true(str_ends_with(coffer_config_path(cfg), "default.coffer"));

    coffer_config_free(cfg);
    coffer_config_free(early);
}

/* A string coffer_default_path() returned stays readable while other
 * threads set new default paths (each value set is kept). */
static void *set_default_paths(void *arg)
{
    const char *base = arg;
    char path[TS_PATH_MAX + 32];
    for (int i = 0; i < 2000; i++) {
        snprintf(path, sizeof path, "%s/set-%d.coffer", base, i);
        if (coffer_set_default_path(path) != COFFER_OK)
            return (void *)1;
    }
    return NULL;
}

TS_ENV_TEST(test_default_path_read_while_set)
{
    char first[TS_PATH_MAX];
    ts_join(first, env->dir, "first.coffer");
    assert_ok(coffer_set_default_path(first));
    const char *held = coffer_default_path();
    pthread_t setter;
    assert_int_equal(pthread_create(&setter, NULL, set_default_paths, env->dir), 0);
    size_t seen = 0;
    for (int i = 0; i < 2000; i++) {
        const char *now = coffer_default_path();
        assert_non_null(now);
        assert_non_null(strstr(now, ".coffer"));
        seen += strlen(now);
    }
    void *failed = NULL;
    assert_int_equal(pthread_join(setter, &failed), 0);
    assert_null(failed);
    assert_true(seen > 0);
    assert_string_equal(held, first); /* not freed or changed by the later sets */
    char last[TS_PATH_MAX + 32];
    snprintf(last, sizeof last, "%s/set-1999.coffer", env->dir);
    assert_string_equal(coffer_default_path(), last);
    assert_ok(coffer_set_default_path(NULL));
    assert_true(str_ends_with(coffer_default_path(), "default.coffer"));
    assert_string_equal(held, first);
}

/* The default "default.coffer" is relative to the current directory. */
TS_ENV_TEST(test_default_path_in_cwd)
{
    char old_cwd[TS_PATH_MAX];
    assert_non_null(getcwd(old_cwd, sizeof old_cwd));
    assert_int_equal(chdir(env->dir), 0);
    assert_ok(coffer_set_default_path(NULL));
    coffer_config *cfg = ts_config_new();
    coffer_db *db = NULL;
    coffer_status st = coffer_open(cfg, &db);
    int exists = ts_file_exists("default.coffer");
    coffer_close(db);
    coffer_config_free(cfg);
    assert_int_equal(chdir(old_cwd), 0);
    assert_ok(st);
    assert_true(exists);
}

TS_ENV_TEST(test_path_and_identifier_exclusive)
{
    coffer_config *cfg = ts_config_at(env->path);
    assert_string_equal(coffer_config_path(cfg), env->path);

    assert_ok(coffer_config_set_in_memory_identifier(cfg, env->ident));
    assert_null(coffer_config_path(cfg));

    /* open: in memory, so no file at env->path */
    assert_ok(coffer_config_set_schema(cfg, ts_std_schema, TS_STD_SCHEMA_COUNT, 1));
    coffer_db *db = NULL;
    assert_ok(coffer_open(cfg, &db));
    assert_null(coffer_db_path(db));
    coffer_close(db);
    assert_false(ts_file_exists(env->path));

    /* setting a path clears the identifier */
    assert_ok(coffer_config_set_path(cfg, env->path));
    assert_string_equal(coffer_config_path(cfg), env->path);
    db = NULL;
    assert_ok(coffer_open(cfg, &db));
    assert_non_null(coffer_db_path(db));
    coffer_close(db);
    assert_true(ts_file_exists(env->path));

    /* NULL identifier returns to the default path */
    assert_ok(coffer_config_set_in_memory_identifier(cfg, env->ident));
    assert_null(coffer_config_path(cfg));
    assert_ok(coffer_config_set_in_memory_identifier(cfg, NULL));
    assert_non_null(coffer_config_path(cfg));
    assert_string_equal(coffer_config_path(cfg), coffer_default_path());
    coffer_config_free(cfg);
}

TS_ENV_TEST(test_config_independent_of_db)
{
    coffer_config *cfg = ts_config_at(env->path);
    assert_ok(coffer_config_set_encryption_key(cfg, ts_key, 64));
    assert_ok(coffer_config_set_schema(cfg, ts_std_schema, TS_STD_SCHEMA_COUNT, 3));
    coffer_db *db = NULL;
    assert_ok(coffer_open(cfg, &db));
    coffer_config_free(cfg);

    assert_string_equal(coffer_db_path(db), env->path);
    assert_int_equal(coffer_db_schema_version(db), 3);
    assert_int_equal(coffer_db_is_encrypted(db), 1);
    assert_int_equal(coffer_db_is_read_only(db), 0);
    assert_int_equal(coffer_db_class_count(db), 2);
    coffer_txn *txn = ts_begin(db, COFFER_TXN_WRITE);
    coffer_field f[] = {ts_field(PERSON_ID, coffer_value_int(1)), ts_field(PERSON_NAME, ts_str("Ann"))};
    assert_ok(coffer_object_create(txn, ts_class(db, "Person"), f, 2, COFFER_UPDATE_ERROR, NULL));
    ts_commit(txn);
    coffer_close(db);
}

TS_ENV_TEST(test_paths_are_copied)
{
    char buf[TS_PATH_MAX];
    snprintf(buf, sizeof buf, "%s", env->path);
    coffer_config *cfg = ts_config_new();
    assert_ok(coffer_config_set_path(cfg, buf));
    memset(buf, 'x', 20);
    assert_string_equal(coffer_config_path(cfg), env->path);

    char ident[300];
    snprintf(ident, sizeof ident, "%s", env->ident);
    assert_ok(coffer_config_set_in_memory_identifier(cfg, ident));
    coffer_db *a = NULL, *b = NULL;
    assert_ok(coffer_config_set_schema(cfg, ts_std_schema, TS_STD_SCHEMA_COUNT, 1));
    assert_ok(coffer_open(cfg, &a));
    memset(ident, 'y', 10);
    assert_ok(coffer_open(cfg, &b));
    /* both use the original identifier: they share data */
    coffer_txn *txn = ts_begin(a, COFFER_TXN_WRITE);
    coffer_field f[] = {ts_field(PERSON_ID, coffer_value_int(1))};
    assert_ok(coffer_object_create(txn, ts_class(a, "Person"), f, 1, COFFER_UPDATE_ERROR, NULL));
    ts_commit(txn);
    txn = ts_begin(b, COFFER_TXN_READ);
    assert_int_equal(ts_count(txn, ts_class(b, "Person")), 1);
    coffer_txn_free(txn);
    coffer_close(a);
    coffer_close(b);
    coffer_config_free(cfg);
}

TS_ENV_TEST(test_class_subset_basic)
{
    /* create both classes with data */
    coffer_db *db = NULL;
    assert_ok(ts_open_path(env->path, NULL, 0, ts_std_schema, TS_STD_SCHEMA_COUNT, 1, &db));
    coffer_txn *txn = ts_begin(db, COFFER_TXN_WRITE);
    coffer_field p[] = {ts_field(PERSON_ID, coffer_value_int(5))};
    assert_ok(coffer_object_create(txn, ts_class(db, "Person"), p, 1, COFFER_UPDATE_ERROR, NULL));
    coffer_field a[] = {ts_field(AT_INT, coffer_value_int(55))};
    assert_ok(coffer_object_create(txn, ts_class(db, "AllTypes"), a, 1, COFFER_UPDATE_ERROR, NULL));
    ts_commit(txn);
    coffer_close(db);

    coffer_config *cfg = ts_config_at(env->path);
    assert_ok(coffer_config_set_schema(cfg, ts_std_schema, TS_STD_SCHEMA_COUNT, 1));
    const char *names[] = {"Person"};
    assert_ok(coffer_config_set_class_subset(cfg, names, 1));
    db = NULL;
    assert_ok(coffer_open(cfg, &db));
    assert_int_equal(coffer_db_class_count(db), 1);
    coffer_class_id id;
    assert_status(coffer_db_find_class(db, "AllTypes", &id), COFFER_ERR_NOT_FOUND);
    assert_error_contains("AllTypes");
    coffer_class_id person = ts_class(db, "Person");
    txn = ts_begin(db, COFFER_TXN_READ);
    assert_int_equal(ts_count(txn, person), 1);
    coffer_txn_free(txn);
    coffer_close(db);

    /* count 0 clears the subset */
    assert_ok(coffer_config_set_class_subset(cfg, NULL, 0));
    db = NULL;
    assert_ok(coffer_open(cfg, &db));
    assert_int_equal(coffer_db_class_count(db), 2);
    coffer_close(db);
    coffer_config_free(cfg);
}

/* With a schema set, every subset name must be one of its classes: the error
 * comes from the setter or from coffer_open and names the class. */
TS_ENV_TEST(test_class_subset_unknown_name)
{
    coffer_config *cfg = ts_config_at(env->path);
    assert_ok(coffer_config_set_schema(cfg, ts_std_schema, TS_STD_SCHEMA_COUNT, 1));
    const char *names[] = {"Person", "NoSuchClassXyz"};
    coffer_status st = coffer_config_set_class_subset(cfg, names, 2);
    if (st == COFFER_OK) {
        coffer_db *db = NULL;
        st = coffer_open(cfg, &db);
        if (st == COFFER_OK)
            coffer_close(db);
    }
    assert_not_ok(st);
    assert_error_contains("NoSuchClassXyz");
    coffer_config_free(cfg);
}

static void test_class_subset_null_names(void **state)
{
    (void)state;
    coffer_config *cfg = ts_config_new();
    assert_status(coffer_config_set_class_subset(cfg, NULL, 2), COFFER_ERR_INVALID_ARGUMENT);
    const char *names[] = {"Person", NULL};
    assert_status(coffer_config_set_class_subset(cfg, names, 2), COFFER_ERR_INVALID_ARGUMENT);
    coffer_config_free(cfg);
}

TS_ENV_TEST(test_read_only_flag)
{
    coffer_db *db = NULL;
    assert_ok(ts_open_path(env->path, NULL, 0, ts_std_schema, TS_STD_SCHEMA_COUNT, 1, &db));
    coffer_close(db);
    coffer_config *cfg = ts_config_at(env->path);
    assert_ok(coffer_config_set_read_only(cfg, 1));
    db = NULL;
    assert_ok(coffer_open(cfg, &db));
    assert_int_equal(coffer_db_is_read_only(db), 1);
    coffer_close(db);
    assert_ok(coffer_config_set_read_only(cfg, 0));
    db = NULL;
    assert_ok(coffer_open(cfg, &db));
    assert_int_equal(coffer_db_is_read_only(db), 0);
    coffer_close(db);
    coffer_config_free(cfg);
}

static void test_max_file_size_setter(void **state)
{
    (void)state;
    coffer_config *cfg = ts_config_new();
    assert_ok(coffer_config_set_max_file_size(cfg, 0));
    assert_ok(coffer_config_set_max_file_size(cfg, 64ull << 20));
    assert_ok(coffer_config_set_seed_path(cfg, "/nonexistent/seed.coffer"));
    assert_ok(coffer_config_set_seed_path(cfg, NULL));
    coffer_config_free(cfg);
}

/* A new config has no schema: a fresh file opens with no classes. */
TS_ENV_TEST(test_defaults_open_empty)
{
    coffer_config *cfg = ts_config_at(env->path);
    coffer_db *db = NULL;
    assert_ok(coffer_open(cfg, &db));
    assert_int_equal(coffer_db_class_count(db), 0);
    assert_int_equal(coffer_db_schema_version(db), 0);
    assert_int_equal(coffer_db_is_encrypted(db), 0);
    assert_int_equal(coffer_db_is_read_only(db), 0);
    char lock[TS_PATH_MAX + 8];
    snprintf(lock, sizeof lock, "%s-lock", env->path);
    assert_true(ts_file_exists(env->path));
    assert_true(ts_file_exists(lock));
    coffer_close(db);
    coffer_config_free(cfg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_version_and_limits),
        cmocka_unit_test(test_last_error_clear),
        cmocka_unit_test(test_null_config_everywhere),
        cmocka_unit_test(test_empty_identifier),
        cmocka_unit_test(test_key_sizes),
        TS_TEST_EMPTY(test_key_removed_gives_plain_file),
        TS_TEST_EMPTY(test_default_path),
        TS_TEST_EMPTY(test_default_path_in_cwd),
        TS_TEST_EMPTY(test_default_path_read_while_set),
        TS_TEST_EMPTY(test_path_and_identifier_exclusive),
        TS_TEST_EMPTY(test_config_independent_of_db),
        TS_TEST_EMPTY(test_paths_are_copied),
        TS_TEST_EMPTY(test_class_subset_basic),
        TS_TEST_EMPTY(test_class_subset_unknown_name),
        cmocka_unit_test(test_class_subset_null_names),
        TS_TEST_EMPTY(test_read_only_flag),
        cmocka_unit_test(test_max_file_size_setter),
        TS_TEST_EMPTY(test_defaults_open_empty),
    };
    return cmocka_run_group_tests_name("config", tests, NULL, NULL);
}
