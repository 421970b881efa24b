/* test_migration.c — the migration callback: old values beside the new
 * schema, renames, class deletion, failure leaving the file untouched, and
 * deleting the file when a migration is needed. */
#define _GNU_SOURCE
#include "test_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define P(n, t, f) {.name = (n), .type = (t), .flags = (f)}
#define PL(n, t, f, c) {.name = (n), .type = (t), .flags = (f), .collection = (c)}
#define LINK(n, cls) {.name = (n), .type = COFFER_TYPE_LINK, .flags = COFFER_PROPERTY_OPTIONAL, .object_class = (cls)}
#define BACK(n, cls, origin) {.name = (n), .type = COFFER_TYPE_LINKING_OBJECTS, .object_class = (cls), .link_origin_property = (origin)}

/* Version 1: Dog(id pk, name indexed, age, weight as text, tags list, owner link) and Person. */
static const coffer_property_schema dog_v1[] = {
    P("id", COFFER_TYPE_INT, COFFER_PROPERTY_PRIMARY_KEY),
    P("name", COFFER_TYPE_STRING, COFFER_PROPERTY_INDEXED),
    P("age", COFFER_TYPE_INT, 0),
    P("weight", COFFER_TYPE_STRING, 0),
    PL("tags", COFFER_TYPE_STRING, 0, COFFER_COLLECTION_LIST),
    LINK("owner", "Person"),
    LINK("vet", "Person"),
};
static const coffer_property_schema person_v1[] = {
    P("id", COFFER_TYPE_INT, COFFER_PROPERTY_PRIMARY_KEY),
    BACK("dogs", "Dog", "owner"),
};
static const coffer_property_schema toy_v1[] = {P("label", COFFER_TYPE_STRING, 0)};
static const coffer_class_schema schema_v1[] = {
    {.name = "Dog", .properties = dog_v1, .property_count = 7},
    {.name = "Person", .properties = person_v1, .property_count = 2},
    {.name = "Toy", .properties = toy_v1, .property_count = 1},
};

/* Version 2: name renamed title, weight retyped double, age replaced by
 * ageText, tags renamed labels, owner renamed master, vet removed, Toy gone. */
static const coffer_property_schema dog_v2[] = {
    P("id", COFFER_TYPE_INT, COFFER_PROPERTY_PRIMARY_KEY),
    P("title", COFFER_TYPE_STRING, COFFER_PROPERTY_INDEXED),
    P("weight", COFFER_TYPE_DOUBLE, 0),
    P("ageText", COFFER_TYPE_STRING, 0),
    PL("labels", COFFER_TYPE_STRING, 0, COFFER_COLLECTION_LIST),
    LINK("master", "Person"),
};
static const coffer_property_schema person_v2[] = {
    P("id", COFFER_TYPE_INT, COFFER_PROPERTY_PRIMARY_KEY),
    BACK("dogs", "Dog", "master"),
};
static const coffer_class_schema schema_v2[] = {
    {.name = "Dog", .properties = dog_v2, .property_count = 6},
    {.name = "Person", .properties = person_v2, .property_count = 2},
};

static coffer_status open_with(const ts_env *env, const coffer_class_schema *classes, size_t n, uint64_t version,
                               coffer_migration_fn fn, void *ctx, coffer_db **out)
{
    coffer_config *cfg = ts_env_config(env);
    assert_ok(coffer_config_set_schema(cfg, classes, n, version));
    assert_ok(coffer_config_set_migration(cfg, fn, ctx));
    coffer_status st = coffer_open(cfg, out);
    coffer_config_free(cfg);
    return st;
}

/* Two people and three dogs at version 1. */
static void fill_v1(ts_env *env)
{
    coffer_db *db;
    assert_ok(ts_env_open(env, schema_v1, 3, 1, &db));
    coffer_txn *txn = ts_begin(db, COFFER_TXN_WRITE);
    coffer_class_id dog = ts_class(db, "Dog"), person = ts_class(db, "Person"), toy = ts_class(db, "Toy");
    for (int i = 0; i < 2; i++) {
        coffer_field f = ts_field(0, coffer_value_int(100 + i));
        assert_ok(coffer_object_create(txn, person, &f, 1, COFFER_UPDATE_ERROR, NULL));
    }
    static const char *names[] = {"Rex", "Fido", "Bella"};
    static const char *weights[] = {"12.5", "7.25", "30"};
    for (int i = 0; i < 3; i++) {
        coffer_value tags[2] = {ts_str(names[i]), ts_str("good")};
        coffer_field f[] = {
            ts_field(0, coffer_value_int(i)),
            ts_field(1, ts_str(names[i])),
            ts_field(2, coffer_value_int(3 + i)),
            ts_field(3, ts_str(weights[i])),
            ts_field(4, coffer_value_list(tags, 2)),
            ts_field(5, coffer_value_link(person, 1 + (i % 2))),
            ts_field(6, coffer_value_link(person, 1)),
        };
        assert_ok(coffer_object_create(txn, dog, f, 7, COFFER_UPDATE_ERROR, NULL));
    }
    coffer_field tf = ts_field(0, ts_str("ball"));
    assert_ok(coffer_object_create(txn, toy, &tf, 1, COFFER_UPDATE_ERROR, NULL));
    ts_commit(txn);
    coffer_close(db);
}

typedef struct mig_state {
    int calls;
    uint64_t old_version, new_version;
    int visited;
    coffer_property_id old_weight, old_age, new_weight, new_age_text;
} mig_state;

static coffer_status convert_dog(coffer_migration *m, coffer_object *old_obj, coffer_object *new_obj, void *ctx)
{
    mig_state *s = ctx;
    (void)m;
    s->visited++;
    if (!new_obj)
        return COFFER_OK;
    coffer_value w, age;
    coffer_status st = coffer_object_get_value(old_obj, s->old_weight, &w);
    if (st == COFFER_OK)
        st = coffer_object_get_value(old_obj, s->old_age, &age);
    if (st != COFFER_OK)
        return st;
    char text[32];
    snprintf(text, sizeof text, "%lld years", (long long)age.u.integer);
    coffer_field f[] = {
        ts_field(s->new_weight, coffer_value_double(strtod(w.u.string.data, NULL))),
        ts_field(s->new_age_text, ts_str(text)),
    };
    return coffer_object_set_fields(new_obj, f, 2);
}

static coffer_status migrate_v2(coffer_migration *m, uint64_t old_version, uint64_t new_version, void *ctx)
{
    mig_state *s = ctx;
    s->calls++;
    s->old_version = old_version;
    s->new_version = new_version;
    coffer_status st = coffer_migration_rename_property(m, "Dog", "name", "title");
    if (st == COFFER_OK)
        st = coffer_migration_rename_property(m, "Dog", "tags", "labels");
    if (st == COFFER_OK)
        st = coffer_migration_rename_property(m, "Dog", "owner", "master");
    if (st != COFFER_OK)
        return st;
    coffer_db *old_db = coffer_migration_old_db(m), *db = coffer_migration_db(m);
    coffer_class_id old_dog, dog;
    if ((st = coffer_db_find_class(old_db, "Dog", &old_dog)) != COFFER_OK || (st = coffer_db_find_class(db, "Dog", &dog)) != COFFER_OK ||
        (st = coffer_db_find_property(old_db, old_dog, "weight", &s->old_weight)) != COFFER_OK ||
        (st = coffer_db_find_property(old_db, old_dog, "age", &s->old_age)) != COFFER_OK ||
        (st = coffer_db_find_property(db, dog, "weight", &s->new_weight)) != COFFER_OK ||
        (st = coffer_db_find_property(db, dog, "ageText", &s->new_age_text)) != COFFER_OK)
        return st;
    if ((st = coffer_migration_enumerate(m, "Dog", convert_dog, s)) != COFFER_OK)
        return st;
    return coffer_migration_delete_data(m, "Toy");
}

TS_ENV_TEST(test_migration_renames_converts_and_deletes)
{
    fill_v1(env);
    mig_state s = {0};
    coffer_db *db;
    assert_ok(open_with(env, schema_v2, 2, 2, migrate_v2, &s, &db));
    assert_int_equal(s.calls, 1);
    assert_int_equal(s.old_version, 1);
    assert_int_equal(s.new_version, 2);
    assert_int_equal(s.visited, 3);
    assert_int_equal(coffer_db_schema_version(db), 2);

    coffer_class_id dog = ts_class(db, "Dog"), person = ts_class(db, "Person");
    coffer_property_id title = ts_prop(db, dog, "title"), weight = ts_prop(db, dog, "weight"), age_text = ts_prop(db, dog, "ageText"),
                       labels = ts_prop(db, dog, "labels"), master = ts_prop(db, dog, "master");
    coffer_txn *txn = ts_begin(db, COFFER_TXN_READ);
    static const char *names[] = {"Rex", "Fido", "Bella"};
    static const double weights[] = {12.5, 7.25, 30};
    for (int i = 0; i < 3; i++) {
        coffer_value pk = coffer_value_int(i);
        coffer_object *obj;
        assert_ok(coffer_object_find(txn, dog, &pk, &obj));
        assert_string_equal(ts_get_string(obj, title, NULL), names[i]);
        assert_true(ts_get_double(obj, weight) == weights[i]);
        char text[32];
        snprintf(text, sizeof text, "%d years", 3 + i);
        assert_string_equal(ts_get_string(obj, age_text, NULL), text);
        coffer_list *list;
        assert_ok(coffer_object_get_list(obj, labels, &list));
        uint64_t n;
        assert_ok(coffer_list_count(list, &n));
        assert_int_equal(n, 2);
        coffer_value v;
        assert_ok(coffer_list_get(list, 0, &v));
        assert_memory_equal(v.u.string.data, names[i], strlen(names[i]));
        assert_ok(coffer_object_get_value(obj, master, &v));
        assert_int_equal(v.type, COFFER_TYPE_LINK);
        assert_int_equal(v.u.link.key, 1 + (i % 2));
        /* The renamed index answers lookups by the new name. */
        coffer_value t = ts_str(names[i]);
        assert_int_equal(ts_index_count(txn, dog, title, &t), 1);
    }
    /* Backlinks follow the renamed link; the removed "vet" link is released. */
    coffer_object *p1;
    assert_ok(coffer_object_get(txn, person, 1, &p1));
    uint64_t n;
    assert_ok(coffer_object_backlink_count(p1, ts_prop(db, person, "dogs"), &n));
    assert_int_equal(n, 2);
    assert_ok(coffer_object_backlink_count_all(p1, &n));
    assert_int_equal(n, 2);
    coffer_txn_free(txn);
    coffer_close(db);

    /* The migration ran once; Toy is gone from the file's schema. */
    assert_ok(open_with(env, schema_v2, 2, 2, migrate_v2, &s, &db));
    assert_int_equal(s.calls, 1);
    coffer_close(db);
    assert_ok(ts_env_open(env, NULL, 0, 0, &db));
    coffer_class_id toy;
    assert_status(coffer_db_find_class(db, "Toy", &toy), COFFER_ERR_NOT_FOUND);
    coffer_close(db);
}

static coffer_status write_then_fail(coffer_migration *m, uint64_t old_version, uint64_t new_version, void *ctx)
{
    (void)old_version;
    (void)new_version;
    int *calls = ctx;
    ++*calls;
    coffer_class_id dog;
    coffer_status st = coffer_db_find_class(coffer_migration_db(m), "Dog", &dog);
    if (st == COFFER_OK)
        st = coffer_class_clear(coffer_migration_txn(m), dog);
    if (st != COFFER_OK)
        return st;
    /* The migration's transaction and handles cannot be ended or reused. */
    if (coffer_txn_commit(coffer_migration_txn(m)) != COFFER_ERR_MISUSE)
        return COFFER_ERR_INTERNAL;
    coffer_txn *t;
    if (coffer_txn_begin(coffer_migration_db(m), COFFER_TXN_READ, &t) != COFFER_ERR_MISUSE)
        return COFFER_ERR_INTERNAL;
    return COFFER_ERR_INVALID_ARGUMENT;
}

TS_ENV_TEST(test_migration_failure_leaves_file_untouched)
{
    fill_v1(env);
    size_t before_size, after_size;
    unsigned char *before = ts_read_file(env->path, &before_size);
    assert_non_null(before);
    int calls = 0;
    coffer_db *db = NULL;
    assert_status(open_with(env, schema_v2, 2, 2, write_then_fail, &calls, &db), COFFER_ERR_INVALID_ARGUMENT);
    assert_error_contains("migration callback");
    assert_error_contains("returned");
    assert_null(db);
    assert_int_equal(calls, 1);
    unsigned char *after = ts_read_file(env->path, &after_size);
    assert_non_null(after);
    assert_int_equal(before_size, after_size);
    assert_memory_equal(before, after, before_size);
    free(before);
    free(after);
    /* Still openable at the old version, with everything in it. */
    assert_ok(ts_env_open(env, schema_v1, 3, 1, &db));
    assert_int_equal(coffer_db_schema_version(db), 1);
    assert_int_equal(ts_count_of(db, "Dog"), 3);
    assert_int_equal(ts_count_of(db, "Toy"), 1);
    coffer_close(db);
}

/* A primary key the migration must fill: duplicates are refused at the end. */
static const coffer_property_schema toy_v3[] = {
    P("label", COFFER_TYPE_STRING, 0),
    P("serial", COFFER_TYPE_INT, COFFER_PROPERTY_PRIMARY_KEY),
};
static const coffer_class_schema schema_toy_pk[] = {
    {.name = "Dog", .properties = dog_v1, .property_count = 7},
    {.name = "Person", .properties = person_v1, .property_count = 2},
    {.name = "Toy", .properties = toy_v3, .property_count = 2},
};

static coffer_status number_toys(coffer_migration *m, coffer_object *old_obj, coffer_object *new_obj, void *ctx)
{
    (void)m;
    (void)old_obj;
    int *next = ctx;
    coffer_field f = ts_field(1, coffer_value_int((*next)++));
    return coffer_object_set_fields(new_obj, &f, 1);
}

static coffer_status add_toys(coffer_migration *m, uint64_t old_version, uint64_t new_version, void *ctx)
{
    (void)old_version;
    (void)new_version;
    int *unique = ctx;
    coffer_class_id toy;
    coffer_status st = coffer_db_find_class(coffer_migration_db(m), "Toy", &toy);
    for (int i = 0; st == COFFER_OK && i < 2; i++) {
        coffer_field f[] = {ts_field(0, ts_str("new")), ts_field(1, coffer_value_int(50 + i))};
        st = coffer_object_create(coffer_migration_txn(m), toy, f, 2, COFFER_UPDATE_ERROR, NULL);
    }
    /* The old toy's new key: unique, or the same as a new toy's. */
    int next = *unique ? 1 : 50;
    if (st == COFFER_OK)
        st = coffer_migration_enumerate(m, "Toy", number_toys, &next);
    return st;
}

TS_ENV_TEST(test_migration_checks_new_primary_keys)
{
    fill_v1(env);
    int unique = 0;
    coffer_db *db = NULL;
    /* The old toy gets the serial of a new one. */
    assert_status(open_with(env, schema_toy_pk, 3, 2, add_toys, &unique, &db), COFFER_ERR_MIGRATION_REQUIRED);
    assert_error_contains("after the migration");
    assert_error_contains("serial");
    unique = 1;
    assert_ok(open_with(env, schema_toy_pk, 3, 2, add_toys, &unique, &db));
    assert_int_equal(ts_count_of(db, "Toy"), 3);
    coffer_txn *txn = ts_begin(db, COFFER_TXN_READ);
    coffer_value pk = coffer_value_int(1);
    coffer_object *obj;
    assert_ok(coffer_object_find(txn, ts_class(db, "Toy"), &pk, &obj));
    assert_string_equal(ts_get_string(obj, 0, NULL), "ball");
    coffer_txn_free(txn);
    coffer_close(db);
}

static coffer_status bad_renames(coffer_migration *m, uint64_t old_version, uint64_t new_version, void *ctx)
{
    (void)old_version;
    (void)new_version;
    (void)ctx;
    /* weight was text and is now a double. */
    if (coffer_migration_rename_property(m, "Dog", "weight", "title") != COFFER_ERR_SCHEMA)
        return COFFER_ERR_INTERNAL;
    if (coffer_migration_rename_property(m, "Dog", "nope", "title") != COFFER_ERR_NOT_FOUND)
        return COFFER_ERR_INTERNAL;
    if (coffer_migration_rename_property(m, "Dog", "name", "nope") != COFFER_ERR_NOT_FOUND)
        return COFFER_ERR_INTERNAL;
    if (coffer_migration_rename_property(m, "Cat", "name", "title") != COFFER_ERR_NOT_FOUND)
        return COFFER_ERR_INTERNAL;
    if (coffer_migration_delete_data(m, "Cat") != COFFER_ERR_NOT_FOUND)
        return COFFER_ERR_INTERNAL;
    /* After a write, renaming would lose what was written. */
    coffer_class_id person;
    coffer_status st = coffer_db_find_class(coffer_migration_db(m), "Person", &person);
    coffer_field f = ts_field(0, coffer_value_int(999));
    if (st == COFFER_OK)
        st = coffer_object_create(coffer_migration_txn(m), person, &f, 1, COFFER_UPDATE_ERROR, NULL);
    if (st != COFFER_OK)
        return st;
    return coffer_migration_rename_property(m, "Dog", "name", "title");
}

TS_ENV_TEST(test_migration_rename_errors)
{
    fill_v1(env);
    coffer_db *db = NULL;
    assert_status(open_with(env, schema_v2, 2, 2, bad_renames, NULL, &db), COFFER_ERR_MISUSE);
    assert_error_contains("rename properties first");
    assert_null(db);
    assert_ok(ts_env_open(env, NULL, 0, 0, &db));
    assert_int_equal(coffer_db_schema_version(db), 1);
    assert_int_equal(ts_count_of(db, "Person"), 2);
    coffer_close(db);
}

TS_ENV_TEST(test_migration_not_called_without_version_change)
{
    fill_v1(env);
    mig_state s = {0};
    coffer_db *db;
    assert_ok(open_with(env, schema_v1, 3, 1, migrate_v2, &s, &db));
    coffer_close(db);
    assert_int_equal(s.calls, 0);
    /* A lower version is still an error, with or without a callback. */
    assert_status(open_with(env, schema_v1, 3, 0, migrate_v2, &s, &db), COFFER_ERR_SCHEMA_VERSION);
    assert_int_equal(s.calls, 0);
}

/* ---- delete if migration needed ----------------------------------------- */

static void add_person(coffer_db *db, int64_t id)
{
    coffer_txn *txn = ts_begin(db, COFFER_TXN_WRITE);
    coffer_field f = ts_field(0, coffer_value_int(id));
    assert_ok(coffer_object_create(txn, ts_class(db, "Person"), &f, 1, COFFER_UPDATE_ERROR, NULL));
    ts_commit(txn);
}

static coffer_status open_deleting(const ts_env *env, const coffer_class_schema *classes, size_t n, uint64_t version, int read_only,
                                   coffer_db **out)
{
    coffer_config *cfg = ts_env_config(env);
    assert_ok(coffer_config_set_schema(cfg, classes, n, version));
    assert_ok(coffer_config_set_delete_if_migration_needed(cfg, 1));
    assert_ok(coffer_config_set_read_only(cfg, read_only));
    coffer_status st = coffer_open(cfg, out);
    coffer_config_free(cfg);
    return st;
}

TS_ENV_TEST(test_delete_if_migration_needed)
{
    fill_v1(env);
    coffer_db *db;
    /* Same schema and version: nothing is deleted. */
    assert_ok(open_deleting(env, schema_v1, 3, 1, 0, &db));
    assert_int_equal(ts_count_of(db, "Dog"), 3);
    /* Open elsewhere in the process: refused, nothing deleted. */
    coffer_db *other;
    assert_status(open_deleting(env, schema_v2, 2, 2, 0, &other), COFFER_ERR_BUSY);
    assert_error_contains("is open in this process");
    assert_error_contains("schema version 2 differs");
    coffer_close(db);
    /* Read-only cannot delete. */
    assert_status(open_deleting(env, schema_v2, 2, 2, 1, &db), COFFER_ERR_INVALID_ARGUMENT);
    /* A wrong key never deletes. */
    if (env->mode == TS_ENCRYPTED) {
        coffer_config *cfg = ts_env_config(env);
        assert_ok(coffer_config_set_encryption_key(cfg, ts_other_key, 64));
        assert_ok(coffer_config_set_schema(cfg, schema_v2, 2, 2));
        assert_ok(coffer_config_set_delete_if_migration_needed(cfg, 1));
        assert_status(coffer_open(cfg, &db), COFFER_ERR_WRONG_KEY);
        coffer_config_free(cfg);
        assert_true(ts_file_exists(env->path));
    }
    /* A higher version: the file is created afresh. */
    assert_ok(open_deleting(env, schema_v2, 2, 2, 0, &db));
    assert_int_equal(coffer_db_schema_version(db), 2);
    assert_int_equal(ts_count_of(db, "Dog"), 0);
    add_person(db, 7);
    coffer_close(db);
    /* A lower version, and a changed schema at the same version, too. */
    assert_ok(open_deleting(env, schema_v1, 3, 1, 0, &db));
    assert_int_equal(coffer_db_schema_version(db), 1);
    assert_int_equal(ts_count_of(db, "Person"), 0);
    add_person(db, 8);
    coffer_close(db);
    assert_ok(open_deleting(env, schema_v2, 2, 1, 0, &db));
    assert_int_equal(ts_count_of(db, "Person"), 0);
    coffer_close(db);
}

/* ---- classes a higher version leaves out --------------------------------- */

/* Version 2 without Dog, which links to Person: Dog may go once it is empty. */
static const coffer_property_schema person_alone[] = {P("id", COFFER_TYPE_INT, COFFER_PROPERTY_PRIMARY_KEY)};
static const coffer_class_schema schema_without_dog[] = {
    {.name = "Person", .properties = person_alone, .property_count = 1},
    {.name = "Toy", .properties = toy_v1, .property_count = 1},
};

static coffer_status count_calls(coffer_migration *m, uint64_t old_version, uint64_t new_version, void *ctx)
{
    (void)m;
    (void)old_version;
    (void)new_version;
    ++*(int *)ctx;
    return COFFER_OK;
}

static coffer_status delete_dogs(coffer_migration *m, uint64_t old_version, uint64_t new_version, void *ctx)
{
    (void)old_version;
    (void)new_version;
    ++*(int *)ctx;
    return coffer_migration_delete_data(m, "Dog");
}

static void assert_file_unchanged(const ts_env *env, const unsigned char *before, size_t before_size)
{
    size_t after_size;
    unsigned char *after = ts_read_file(env->path, &after_size);
    assert_non_null(after);
    assert_int_equal(before_size, after_size);
    assert_memory_equal(before, after, before_size);
    free(after);
}

TS_ENV_TEST(test_left_out_class_with_objects_is_refused)
{
    fill_v1(env);
    size_t size;
    unsigned char *before = ts_read_file(env->path, &size);
    assert_non_null(before);
    coffer_db *db = NULL;
    /* Without a callback, and with one that leaves the dogs in place. */
    assert_status(open_with(env, schema_without_dog, 2, 2, NULL, NULL, &db), COFFER_ERR_SCHEMA);
    assert_error_contains("leaves out class 'Dog'");
    assert_error_contains("still has 3 objects");
    assert_error_contains("property 'owner'");
    assert_error_contains("delete its data in the migration");
    assert_error_contains("keep 'Dog' in the schema");
    assert_null(db);
    int calls = 0;
    assert_status(open_with(env, schema_without_dog, 2, 2, count_calls, &calls, &db), COFFER_ERR_SCHEMA);
    assert_error_contains("leaves out class 'Dog'");
    assert_int_equal(calls, 1);
    assert_file_unchanged(env, before, size);
    free(before);
    /* Everything is still there at the old version. */
    assert_ok(ts_env_open(env, schema_v1, 3, 1, &db));
    assert_int_equal(coffer_db_schema_version(db), 1);
    assert_int_equal(ts_count_of(db, "Dog"), 3);
    coffer_close(db);
}

TS_ENV_TEST(test_left_out_class_emptied_by_migration_is_dropped)
{
    fill_v1(env);
    int calls = 0;
    coffer_db *db = NULL;
    assert_ok(open_with(env, schema_without_dog, 2, 2, delete_dogs, &calls, &db));
    assert_int_equal(calls, 1);
    assert_int_equal(coffer_db_schema_version(db), 2);
    assert_int_equal(ts_count_of(db, "Person"), 2);
    assert_int_equal(ts_count_of(db, "Toy"), 1);
    /* The dogs' links went with them. */
    coffer_txn *txn = ts_begin(db, COFFER_TXN_READ);
    coffer_object *p1;
    uint64_t n;
    assert_ok(coffer_object_get(txn, ts_class(db, "Person"), 1, &p1));
    assert_ok(coffer_object_backlink_count_all(p1, &n));
    assert_int_equal(n, 0);
    coffer_txn_free(txn);
    coffer_close(db);
    /* Dog is gone from the file: the stored schema opens alone, and the
     * same schema opens again without a migration. */
    assert_ok(ts_env_open(env, NULL, 0, 0, &db));
    coffer_class_id dog;
    assert_status(coffer_db_find_class(db, "Dog", &dog), COFFER_ERR_NOT_FOUND);
    assert_int_equal(coffer_db_class_count(db), 2);
    coffer_close(db);
    assert_ok(open_with(env, schema_without_dog, 2, 2, delete_dogs, &calls, &db));
    assert_int_equal(calls, 1);
    coffer_close(db);
}

TS_ENV_TEST(test_left_out_empty_class_is_dropped_without_callback)
{
    coffer_db *db = NULL;
    assert_ok(ts_env_open(env, schema_v1, 3, 1, &db));
    add_person(db, 5);
    coffer_close(db);
    assert_ok(open_with(env, schema_without_dog, 2, 2, NULL, NULL, &db));
    assert_int_equal(ts_count_of(db, "Person"), 1);
    coffer_close(db);
    assert_ok(ts_env_open(env, NULL, 0, 0, &db));
    assert_int_equal(coffer_db_class_count(db), 2);
    coffer_close(db);
}

/* Not a migration: the same version, or an explicit subset, is refused
 * before anything runs. */
TS_ENV_TEST(test_left_out_class_refused_without_migration)
{
    fill_v1(env);
    coffer_db *db = NULL;
    int calls = 0;
    assert_status(open_with(env, schema_without_dog, 2, 1, count_calls, &calls, &db), COFFER_ERR_SCHEMA);
    assert_error_contains("the class subset leaves out class 'Dog'");
    coffer_config *cfg = ts_env_config(env);
    static const char *const no_dog[] = {"Person", "Toy"};
    const coffer_class_schema with_dog[] = {schema_without_dog[0], schema_without_dog[1], schema_v1[0]};
    assert_ok(coffer_config_set_schema(cfg, with_dog, 3, 2));
    assert_ok(coffer_config_set_migration(cfg, delete_dogs, &calls));
    assert_ok(coffer_config_set_class_subset(cfg, no_dog, 2));
    assert_status(coffer_open(cfg, &db), COFFER_ERR_SCHEMA);
    assert_error_contains("the class subset leaves out class 'Dog'");
    coffer_config_free(cfg);
    assert_int_equal(calls, 0);
    assert_ok(ts_env_open(env, NULL, 0, 0, &db));
    assert_int_equal(coffer_db_schema_version(db), 1);
    assert_int_equal(ts_count_of(db, "Dog"), 3);
    coffer_close(db);
}

/* Owner <- Pet <- Tag: leaving out Pet and Tag, Pet can go only with Tag,
 * which names it. */
static const coffer_property_schema owner_props[] = {P("name", COFFER_TYPE_STRING, 0)};
static const coffer_property_schema pet_props[] = {LINK("owner", "Owner")};
static const coffer_property_schema tag_props[] = {LINK("pet", "Pet")};
static const coffer_class_schema schema_pets[] = {
    {.name = "Owner", .properties = owner_props, .property_count = 1},
    {.name = "Pet", .properties = pet_props, .property_count = 1},
    {.name = "Tag", .properties = tag_props, .property_count = 1},
};

static coffer_status delete_named(coffer_migration *m, uint64_t old_version, uint64_t new_version, void *ctx)
{
    (void)old_version;
    (void)new_version;
    coffer_status st = COFFER_OK;
    for (const char *const *name = ctx; st == COFFER_OK && *name; name++)
        st = coffer_migration_delete_data(m, *name);
    return st;
}

TS_ENV_TEST(test_left_out_class_named_by_another_stays)
{
    coffer_db *db = NULL;
    assert_ok(ts_env_open(env, schema_pets, 3, 1, &db));
    coffer_txn *txn = ts_begin(db, COFFER_TXN_WRITE);
    coffer_field owner = ts_field(0, ts_str("Ann")), pet = ts_field(0, coffer_value_link(ts_class(db, "Owner"), 1)),
                 tag = ts_field(0, coffer_value_link(ts_class(db, "Pet"), 1));
    assert_ok(coffer_object_create(txn, ts_class(db, "Owner"), &owner, 1, COFFER_UPDATE_ERROR, NULL));
    assert_ok(coffer_object_create(txn, ts_class(db, "Pet"), &pet, 1, COFFER_UPDATE_ERROR, NULL));
    assert_ok(coffer_object_create(txn, ts_class(db, "Tag"), &tag, 1, COFFER_UPDATE_ERROR, NULL));
    ts_commit(txn);
    coffer_close(db);
    static const char *const pets_only[] = {"Pet", NULL};
    assert_status(open_with(env, schema_pets, 1, 2, delete_named, (void *)pets_only, &db), COFFER_ERR_SCHEMA);
    assert_error_contains("class 'Pet' cannot leave");
    assert_error_contains("class 'Tag'");
    assert_ok(ts_env_open(env, NULL, 0, 0, &db));
    assert_int_equal(ts_count_of(db, "Pet"), 1);
    coffer_close(db);
    static const char *const both[] = {"Tag", "Pet", NULL};
    assert_ok(open_with(env, schema_pets, 1, 2, delete_named, (void *)both, &db));
    coffer_close(db);
    assert_ok(ts_env_open(env, NULL, 0, 0, &db));
    assert_int_equal(coffer_db_class_count(db), 1);
    assert_int_equal(ts_count_of(db, "Owner"), 1);
    coffer_close(db);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TS_TEST_FILE_MODES_SETUP(test_migration_renames_converts_and_deletes, ts_setup_empty),
        TS_TEST_FILE_MODES_SETUP(test_migration_failure_leaves_file_untouched, ts_setup_empty),
        TS_TEST_FILE_MODES_SETUP(test_migration_checks_new_primary_keys, ts_setup_empty),
        TS_TEST_FILE_MODES_SETUP(test_migration_rename_errors, ts_setup_empty),
        TS_TEST_FILE_MODES_SETUP(test_migration_not_called_without_version_change, ts_setup_empty),
        TS_TEST_FILE_MODES_SETUP(test_delete_if_migration_needed, ts_setup_empty),
        TS_TEST_FILE_MODES_SETUP(test_left_out_class_with_objects_is_refused, ts_setup_empty),
        TS_TEST_FILE_MODES_SETUP(test_left_out_class_emptied_by_migration_is_dropped, ts_setup_empty),
        TS_TEST_FILE_MODES_SETUP(test_left_out_empty_class_is_dropped_without_callback, ts_setup_empty),
        TS_TEST_FILE_MODES_SETUP(test_left_out_class_refused_without_migration, ts_setup_empty),
        TS_TEST_FILE_MODES_SETUP(test_left_out_class_named_by_another_stays, ts_setup_empty),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
