/* test_storage.c — files and storage: shared handles, in-memory stores,
 * read-only, seed files, schema versions and migrations, class subsets,
 * maximum file size, map growth, foreign, truncated and empty files. */
#define _GNU_SOURCE
#include "test_support.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <lmdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *person_name(coffer_txn *txn, coffer_db *db, int64_t id)
{
    coffer_object *obj = NULL;
    coffer_value k = coffer_value_int(id);
    assert_ok(coffer_object_find(txn, ts_class(db, "Person"), &k, &obj));
    return ts_get_string(obj, ts_prop(db, ts_class(db, "Person"), "name"), NULL);
}

/* ------------------------------------------------------------------------ */
/* Several handles                                                           */
/* ------------------------------------------------------------------------ */

TS_ENV_TEST(test_two_handles_one_file)
{
    coffer_db *b = NULL;
    assert_ok(ts_env_open(env, ts_std_schema, TS_STD_SCHEMA_COUNT, 1, &b));
    if (env->mode != TS_MEMORY) {
        assert_non_null(coffer_db_path(b));
        assert_string_equal(coffer_db_path(b), env->path);
    }
    ts_commit_person(env->db, env->person, 1, "from a");
    assert_int_equal(ts_count_of(b, "Person"), 1);
    ts_commit_person(b, ts_class(b, "Person"), 2, "from b");
    assert_int_equal(ts_count_of(env->db, "Person"), 2);

    /* closing one leaves the other working */
    ts_env_close(env);
    coffer_txn *r = ts_begin(b, COFFER_TXN_READ);
    assert_string_equal(person_name(r, b, 1), "from a");
    assert_string_equal(person_name(r, b, 2), "from b");
    coffer_txn_free(r);
    ts_commit_person(b, ts_class(b, "Person"), 3, "after close");
    /* and a third handle opened now sees everything */
    coffer_db *c = NULL;
    assert_ok(ts_env_open(env, NULL, 0, 0, &c));
    assert_int_equal(ts_count_of(c, "Person"), 3);
    coffer_close(b);
    assert_int_equal(ts_count_of(c, "Person"), 3);
    coffer_close(c);
    if (env->mode != TS_MEMORY) {
        assert_ok(ts_env_open(env, NULL, 0, 0, &env->db));
        assert_int_equal(ts_count_of(env->db, "Person"), 3);
    }
}

/* The same file through another spelling of its path (and a symlink) is the
 * same storage. */
TS_ENV_TEST(test_same_file_other_path)
{
    char dotted[TS_PATH_MAX + 32], link[TS_PATH_MAX];
    snprintf(dotted, sizeof dotted, "%s/./test.coffer", env->dir);
    ts_join(link, env->dir, "link.coffer");
    assert_int_equal(symlink(env->path, link), 0);
    coffer_db *b = NULL, *c = NULL;
    assert_ok(ts_open_path(dotted, ts_mode_key(env->mode), 0, NULL, 0, 0, &b));
    assert_ok(ts_open_path(link, ts_mode_key(env->mode), 0, NULL, 0, 0, &c));
    ts_commit_person(b, ts_class(b, "Person"), 1, "x");
    assert_int_equal(ts_count_of(c, "Person"), 1);
    assert_int_equal(ts_count_of(env->db, "Person"), 1);
    /* a write transaction through one blocks a second on the same thread
     * through another: they are one file */
    coffer_txn *w = ts_begin(c, COFFER_TXN_WRITE);
    coffer_txn *w2 = NULL;
    assert_status(coffer_txn_begin(b, COFFER_TXN_WRITE, &w2), COFFER_ERR_MISUSE);
    ts_commit(w);
    coffer_close(b);
    ts_env_close(env);
    ts_commit_person(c, ts_class(c, "Person"), 2, "y");
    assert_int_equal(ts_count_of(c, "Person"), 2);
    coffer_close(c);
}

/* ------------------------------------------------------------------------ */
/* In-memory                                                                 */
/* ------------------------------------------------------------------------ */

TS_ENV_TEST(test_in_memory)
{
    char old_cwd[TS_PATH_MAX];
    assert_non_null(getcwd(old_cwd, sizeof old_cwd));
    char work[TS_PATH_MAX];
    ts_join(work, env->dir, "cwd");
    assert_int_equal(mkdir(work, 0755), 0);
    assert_int_equal(chdir(work), 0);

    char id1[300], id2[300];
    snprintf(id1, sizeof id1, "%s-one", env->ident);
    snprintf(id2, sizeof id2, "%s-two", env->ident);
    coffer_db *a = NULL, *b = NULL, *c = NULL;
    coffer_status st1 = ts_open_memory(id1, ts_std_schema, TS_STD_SCHEMA_COUNT, 1, &a);
    coffer_status st2 = ts_open_memory(id1, NULL, 0, 0, &b);
    coffer_status st3 = ts_open_memory(id2, ts_std_schema, TS_STD_SCHEMA_COUNT, 1, &c);
    int entries_open = ts_count_dir_entries(work);
    assert_int_equal(chdir(old_cwd), 0);
    assert_ok(st1);
    assert_ok(st2);
    assert_ok(st3);
    assert_null(coffer_db_path(a));
    assert_int_equal(coffer_db_is_encrypted(a), 0);
    assert_int_equal(coffer_db_class_count(b), 2);

    ts_commit_person(a, ts_class(a, "Person"), 1, "shared");
    assert_int_equal(ts_count_of(b, "Person"), 1);
    assert_int_equal(ts_count_of(c, "Person"), 0);
    ts_commit_person(b, ts_class(b, "Person"), 2, "from b");
    coffer_txn *r = ts_begin(a, COFFER_TXN_READ);
    assert_string_equal(person_name(r, a, 2), "from b");
    coffer_txn_free(r);

    /* closing one keeps the data for the other */
    coffer_close(a);
    assert_int_equal(ts_count_of(b, "Person"), 2);
    a = NULL;
    assert_ok(ts_open_memory(id1, NULL, 0, 0, &a));
    assert_int_equal(ts_count_of(a, "Person"), 2);
    coffer_close(a);
    /* after the last close the identifier starts empty */
    coffer_close(b);
    a = NULL;
    assert_ok(ts_open_memory(id1, NULL, 0, 0, &a));
    assert_int_equal(coffer_db_class_count(a), 0);
    coffer_close(a);
    a = NULL;
    assert_ok(ts_open_memory(id1, ts_std_schema, TS_STD_SCHEMA_COUNT, 1, &a));
    assert_int_equal(ts_count_of(a, "Person"), 0);
    coffer_close(a);
    coffer_close(c);

    /* no file was created in the working directory */
    int entries_after = ts_count_dir_entries(work);
    assert_int_equal(entries_open, 0);
    assert_int_equal(entries_after, 0);
}

/* Identifiers are opaque strings: slashes, dots and long ones work. */
TS_ENV_TEST(test_in_memory_odd_identifiers)
{
    char longid[1200];
    memset(longid, 'L', sizeof longid - 1);
    longid[sizeof longid - 1] = 0;
    const char *ids[] = {"a/b/c", "../escape", ".", "with space \xc3\xa9", longid};
    coffer_db *dbs[5] = {0};
    for (int i = 0; i < 5; i++) {
        assert_ok(ts_open_memory(ids[i], ts_std_schema, TS_STD_SCHEMA_COUNT, 1, &dbs[i]));
        coffer_txn *w = ts_begin(dbs[i], COFFER_TXN_WRITE);
        for (int k = 0; k <= i; k++)
            ts_add_person(w, ts_class(dbs[i], "Person"), k, "x");
        ts_commit(w);
    }
    for (int i = 0; i < 5; i++) {
        coffer_db *again = NULL;
        assert_ok(ts_open_memory(ids[i], NULL, 0, 0, &again));
        assert_int_equal(ts_count_of(again, "Person"), (uint64_t)i + 1);
        coffer_close(again);
        coffer_close(dbs[i]);
    }
    (void)env;
    assert_false(ts_file_exists("a"));
    assert_false(ts_file_exists("../escape"));
}

/* Many writes in memory, larger than one would keep in a small buffer. */
TS_ENV_TEST(test_in_memory_larger)
{
    coffer_db *db = NULL;
    assert_ok(ts_open_memory(env->ident, ts_std_schema, TS_STD_SCHEMA_COUNT, 1, &db));
    coffer_class_id at = ts_class(db, "AllTypes");
    char *buf = malloc(1 << 20);
    memset(buf, 'm', 1 << 20);
    for (int t = 0; t < 10; t++) {
        coffer_txn *w = ts_begin(db, COFFER_TXN_WRITE);
        for (int i = 0; i < 4; i++) {
            coffer_field f[] = {ts_field(AT_BINARY, coffer_value_binary(buf, 1 << 20))};
            assert_ok(coffer_object_create(w, at, f, 1, COFFER_UPDATE_ERROR, NULL));
        }
        ts_commit(w);
    }
    assert_int_equal(ts_count_of(db, "AllTypes"), 40);
    coffer_close(db);
    free(buf);
}

/* ------------------------------------------------------------------------ */
/* Read-only                                                                 */
/* ------------------------------------------------------------------------ */

TS_ENV_TEST(test_read_only_missing)
{
    char path[TS_PATH_MAX];
    ts_join(path, env->dir, "missingFile.coffer");
    coffer_db *db = NULL;
    assert_status(ts_open_path(path, NULL, 1, ts_std_schema, TS_STD_SCHEMA_COUNT, 1, &db), COFFER_ERR_NOT_FOUND);
    assert_error_contains("missingFile.coffer");
    assert_status(ts_open_path(path, NULL, 1, NULL, 0, 0, &db), COFFER_ERR_NOT_FOUND);
    assert_false(ts_file_exists(path));
}

TS_ENV_TEST(test_read_only)
{
    ts_env_close(env);
    ts_make_person_file(env->path, ts_mode_key(env->mode), 5);
    for (int with_schema = 0; with_schema < 2; with_schema++) {
        coffer_db *db = NULL;
        assert_ok(ts_open_std(env->path, ts_mode_key(env->mode), 1, with_schema, &db));
        assert_int_equal(coffer_db_is_read_only(db), 1);
        coffer_txn *r = ts_begin(db, COFFER_TXN_READ);
        assert_int_equal(ts_count(r, ts_class(db, "Person")), 5);
        assert_string_equal(person_name(r, db, 3), "person 3");
        coffer_iter *it = NULL;
        coffer_value v = ts_str("person 4");
        assert_ok(coffer_index_find(r, ts_class(db, "Person"), PERSON_NAME, &v, &it));
        coffer_object *obj = NULL;
        assert_ok(coffer_iter_next(it, &obj));
        coffer_iter_free(it);
        coffer_txn_free(r);
        coffer_txn *w = NULL;
        assert_status(coffer_txn_begin(db, COFFER_TXN_WRITE, &w), COFFER_ERR_READ_ONLY);
        assert_null(w);
        coffer_close(db);
    }
}

/* A read-only open that would have to write the schema fails. */
TS_ENV_TEST(test_read_only_schema_write_needed)
{
    ts_env_close(env);
    ts_make_person_file(env->path, ts_mode_key(env->mode), 1);
    static const coffer_property_schema extra_props[] = {{.name = "x", .type = COFFER_TYPE_INT}};
    coffer_class_schema more[3] = {ts_std_schema[0], ts_std_schema[1],
                                   {.name = "Extra", .properties = extra_props, .property_count = 1}};
    coffer_db *db = NULL;
    assert_status(ts_open_path(env->path, ts_mode_key(env->mode), 1, more, 3, 1, &db), COFFER_ERR_READ_ONLY);
    assert_status(ts_open_path(env->path, ts_mode_key(env->mode), 1, more, 3, 2, &db), COFFER_ERR_READ_ONLY);
    /* the file is unchanged */
    assert_ok(ts_open_path(env->path, ts_mode_key(env->mode), 1, NULL, 0, 0, &db));
    assert_int_equal(coffer_db_class_count(db), 2);
    assert_int_equal(coffer_db_schema_version(db), 1);
    coffer_close(db);
}

TS_ENV_TEST(test_read_only_and_read_write_in_process)
{
    ts_env_close(env);
    ts_make_person_file(env->path, ts_mode_key(env->mode), 1);
    /* read-write first, then read-only: the read-only handle cannot write */
    coffer_db *rw = NULL, *ro = NULL;
    assert_ok(ts_open_path(env->path, ts_mode_key(env->mode), 0, NULL, 0, 0, &rw));
    assert_ok(ts_open_path(env->path, ts_mode_key(env->mode), 1, NULL, 0, 0, &ro));
    assert_int_equal(coffer_db_is_read_only(ro), 1);
    coffer_txn *w = NULL;
    assert_status(coffer_txn_begin(ro, COFFER_TXN_WRITE, &w), COFFER_ERR_READ_ONLY);
    ts_commit_person(rw, ts_class(rw, "Person"), 10, "rw");
    assert_int_equal(ts_count_of(ro, "Person"), 2);
    coffer_close(rw);
    assert_int_equal(ts_count_of(ro, "Person"), 2);
    assert_status(coffer_txn_begin(ro, COFFER_TXN_WRITE, &w), COFFER_ERR_READ_ONLY);
    /* read-only first, then read-write: a read-only handle on a writable
     * file does not block read-write ones; the read-write handle works fully
     * while the read-only one stays read-only (COFFER_ERR_BUSY is only for a
     * file that could not be written when first opened: see
     * test_unwritable_file) */
    coffer_db *rw2 = NULL;
    coffer_status st = ts_open_path(env->path, ts_mode_key(env->mode), 0, NULL, 0, 0, &rw2);
    assert_ok(st);
    {
        assert_int_equal(coffer_db_is_read_only(rw2), 0);
        ts_commit_person(rw2, ts_class(rw2, "Person"), 77, "joined");
        assert_int_equal(ts_count_of(ro, "Person"), 3);
        assert_status(coffer_txn_begin(ro, COFFER_TXN_WRITE, &w), COFFER_ERR_READ_ONLY);
        coffer_close(rw2);
        rw2 = NULL;
        assert_int_equal(ts_count_of(ro, "Person"), 3);
    }
    coffer_close(ro);
    assert_ok(ts_open_path(env->path, ts_mode_key(env->mode), 0, NULL, 0, 0, &rw2));
    coffer_close(rw2);
}

typedef struct unwritable_ctx {
    const char *path;
    const uint8_t *key;
} unwritable_ctx;

/* unwritable_checks' result when uid 65534 cannot reach the file at all:
 * a parent of $TMPDIR is closed to other users */
#define UNWRITABLE_UNREACHABLE 60

/* Runs as an unprivileged user on a file it cannot write (but whose lock
 * file it can). Returns 0, UNWRITABLE_UNREACHABLE, or 50 + the failing step. */
static int unwritable_checks(void *arg)
{
    unwritable_ctx *c = arg;
    if (geteuid() == 0 && (setgroups(0, NULL) != 0 || setgid(65534) != 0 || setuid(65534) != 0))
        return 50;
    if (access(c->path, R_OK) != 0)
        return errno == EACCES ? UNWRITABLE_UNREACHABLE : 57;
    if (access(c->path, W_OK) == 0)
        return 51;
    coffer_db *db = NULL;
    coffer_status st = ts_open_path(c->path, c->key, 0, NULL, 0, 0, &db);
    if (st != COFFER_ERR_READ_ONLY) {
        fprintf(stderr, "read-write open of an unwritable file: %d (%s)\n", (int)st, coffer_last_error());
        return 52;
    }
    coffer_db *ro = NULL;
    st = ts_open_path(c->path, c->key, 1, NULL, 0, 0, &ro);
    if (st != COFFER_OK) {
        fprintf(stderr, "read-only open of an unwritable file: %d (%s)\n", (int)st, coffer_last_error());
        return 53;
    }
    coffer_txn *r = NULL;
    uint64_t n = 0;
    coffer_class_id person;
    if (coffer_txn_begin(ro, COFFER_TXN_READ, &r) != COFFER_OK || coffer_db_find_class(ro, "Person", &person) != COFFER_OK ||
        coffer_class_count(r, person, &n) != COFFER_OK || n != 2)
        return 54;
    coffer_txn_free(r);
    coffer_txn *w = NULL;
    if (coffer_txn_begin(ro, COFFER_TXN_WRITE, &w) != COFFER_ERR_READ_ONLY)
        return 55;
    /* open in this process through a read-only mapping (the file could not
     * be written when first opened) and now wanted for writing: busy */
    st = ts_open_path(c->path, c->key, 0, NULL, 0, 0, &db);
    if (st != COFFER_ERR_BUSY) {
        fprintf(stderr, "read-write open while open read-only: %d (%s)\n", (int)st, coffer_last_error());
        return 56;
    }
    coffer_close(ro);
    return 0;
}

TS_ENV_TEST(test_unwritable_file)
{
    ts_env_close(env);
    /* root runs the checks as uid 65534, which must reach the file: the
     * working tree may be under a private home directory, so the file gets
     * a directory of its own under $TMPDIR (or /tmp) */
    char path[TS_PATH_MAX], lock[TS_PATH_MAX + 8];
    ts_join(path, ts_env_shared_dir(env), "test.coffer");
    ts_make_person_file(path, ts_mode_key(env->mode), 2);
    snprintf(lock, sizeof lock, "%s-lock", path);
    assert_int_equal(chmod(path, 0444), 0);
    if (geteuid() == 0) {
        /* an unprivileged user may read the file and use the lock file */
        assert_int_equal(chown(lock, 65534, 65534), 0);
    }
    unwritable_ctx c = {path, ts_mode_key(env->mode)};
    int rc = ts_run_in_child(unwritable_checks, &c, "unwritable file checks");
    chmod(path, 0644);
    if (rc == UNWRITABLE_UNREACHABLE) {
        print_message("    skipped: uid 65534 cannot reach %s (a parent directory is closed to it)\n", path);
        skip();
    }
    assert_int_equal(rc, 0);
}

/* ------------------------------------------------------------------------ */
/* Seed files                                                                */
/* ------------------------------------------------------------------------ */

TS_ENV_TEST(test_seed_file)
{
    ts_env_close(env);
    char seed[TS_PATH_MAX], target[TS_PATH_MAX];
    ts_join(seed, env->dir, "seed.coffer");
    ts_join(target, env->dir, "target.coffer");
    ts_make_person_file(seed, ts_mode_key(env->mode), 3);
    long long seed_size = ts_file_size(seed);

    coffer_config *cfg = ts_config_new();
    assert_ok(coffer_config_set_path(cfg, target));
    assert_ok(coffer_config_set_seed_path(cfg, seed));
    if (ts_mode_key(env->mode))
        assert_ok(coffer_config_set_encryption_key(cfg, ts_key, 64));
    assert_ok(coffer_config_set_schema(cfg, ts_std_schema, TS_STD_SCHEMA_COUNT, 1));
    coffer_db *db = NULL;
    assert_ok(coffer_open(cfg, &db));
    assert_true(ts_file_exists(target));
    assert_int_equal(ts_count_of(db, "Person"), 3);
    /* modify the copy */
    ts_commit_person(db, ts_class(db, "Person"), 100, "added to the copy");
    coffer_close(db);

    /* reopen with the seed still configured: not copied again */
    db = NULL;
    assert_ok(coffer_open(cfg, &db));
    assert_int_equal(ts_count_of(db, "Person"), 4);
    coffer_txn *r = ts_begin(db, COFFER_TXN_READ);
    assert_string_equal(person_name(r, db, 100), "added to the copy");
    coffer_txn_free(r);
    coffer_close(db);
    coffer_config_free(cfg);

    /* the seed itself is unchanged */
    db = NULL;
    assert_ok(ts_open_path(seed, ts_mode_key(env->mode), 1, NULL, 0, 0, &db));
    assert_int_equal(ts_count_of(db, "Person"), 3);
    coffer_close(db);
    assert_true(ts_file_size(seed) == seed_size);
}

TS_ENV_TEST(test_seed_missing)
{
    char seed[TS_PATH_MAX], target[TS_PATH_MAX];
    ts_join(seed, env->dir, "noSuchSeed.coffer");
    ts_join(target, env->dir, "target.coffer");
    coffer_config *cfg = ts_config_new();
    assert_ok(coffer_config_set_path(cfg, target));
    assert_ok(coffer_config_set_seed_path(cfg, seed));
    coffer_db *db = NULL;
    assert_status(coffer_open(cfg, &db), COFFER_ERR_NOT_FOUND);
    assert_error_contains("noSuchSeed.coffer");
    assert_null(db);
    assert_false(ts_file_exists(target));
    coffer_config_free(cfg);
}

/* ------------------------------------------------------------------------ */
/* Schema versions                                                           */
/* ------------------------------------------------------------------------ */

#define OPT COFFER_PROPERTY_OPTIONAL

static const coffer_property_schema evolving_v1[] = {
    {.name = "keepProp", .type = COFFER_TYPE_INT},
    {.name = "removedProp", .type = COFFER_TYPE_STRING},
    {.name = "typeProp", .type = COFFER_TYPE_INT},
    {.name = "optProp", .type = COFFER_TYPE_STRING},
    {.name = "wasOptional", .type = COFFER_TYPE_INT, .flags = OPT},
};

static coffer_class_schema evolving_class(const coffer_property_schema *props, size_t n)
{
    coffer_class_schema c;
    memset(&c, 0, sizeof c);
    c.name = "Evolving";
    c.properties = props;
    c.property_count = n;
    return c;
}

static coffer_object_key write_evolving_v1(coffer_db *db)
{
    coffer_field f[] = {ts_field(0, coffer_value_int(41)), ts_field(1, ts_str("to be removed")),
                        ts_field(2, coffer_value_int(7)), ts_field(3, ts_str("text")),
                        ts_field(4, coffer_value_int(9))};
    return ts_commit_object(db, ts_class(db, "Evolving"), f, 5);
}

TS_ENV_TEST(test_schema_same_and_lower_version)
{
    coffer_class_schema v1 = evolving_class(evolving_v1, 5);
    ts_env_reopen(env, &v1, 1, 5);
    write_evolving_v1(env->db);
    assert_int_equal(coffer_db_schema_version(env->db), 5);
    coffer_db *keep = ts_env_keep(env);
    ts_env_close(env);

    coffer_db *db = NULL;
    assert_ok(ts_env_open(env, &v1, 1, 5, &db));
    assert_int_equal(coffer_db_schema_version(db), 5);
    assert_int_equal(ts_count_of(db, "Evolving"), 1);
    coffer_close(db);
    db = NULL;
    assert_status(ts_env_open(env, &v1, 1, 4, &db), COFFER_ERR_SCHEMA_VERSION);
    assert_null(db);
    assert_status(ts_env_open(env, &v1, 1, 0, &db), COFFER_ERR_SCHEMA_VERSION);
    /* still fine afterwards */
    assert_ok(ts_env_open(env, &v1, 1, 5, &env->db));
    coffer_close(keep);
}

typedef struct schema_diff_case {
    const char *what;
    coffer_property_schema props[6];
    size_t n;
    const char *names[4];
} schema_diff_case;

TS_ENV_TEST(test_schema_diff_same_version)
{
    coffer_class_schema v1 = evolving_class(evolving_v1, 5);
    ts_env_reopen(env, &v1, 1, 3);
    write_evolving_v1(env->db);

    const schema_diff_case cases[] = {
        {"property added",
         {evolving_v1[0], evolving_v1[1], evolving_v1[2], evolving_v1[3], evolving_v1[4],
          {.name = "addedProp", .type = COFFER_TYPE_INT}},
         6,
         {"addedProp"}},
        {"property removed", {evolving_v1[0], evolving_v1[2], evolving_v1[3], evolving_v1[4]}, 4, {"removedProp"}},
        {"type changed",
         {evolving_v1[0], evolving_v1[1], {.name = "typeProp", .type = COFFER_TYPE_STRING}, evolving_v1[3],
          evolving_v1[4]},
         5,
         {"typeProp"}},
        {"made optional",
         {evolving_v1[0], evolving_v1[1], evolving_v1[2], {.name = "optProp", .type = COFFER_TYPE_STRING, .flags = OPT},
          evolving_v1[4]},
         5,
         {"optProp"}},
        {"made required",
         {evolving_v1[0], evolving_v1[1], evolving_v1[2], evolving_v1[3], {.name = "wasOptional", .type = COFFER_TYPE_INT}},
         5,
         {"wasOptional"}},
        {"all at once",
         {evolving_v1[0], {.name = "typeProp", .type = COFFER_TYPE_DOUBLE},
          {.name = "optProp", .type = COFFER_TYPE_STRING, .flags = OPT}, evolving_v1[4],
          {.name = "addedProp", .type = COFFER_TYPE_BOOL}},
         5,
         {"removedProp", "typeProp", "optProp", "addedProp"}},
    };
    /* keep a handle open for memory mode so the data persists */
    coffer_db *keep = ts_env_keep(env);
    ts_env_close(env);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        print_message("    %s\n", cases[i].what);
        coffer_class_schema cls = evolving_class(cases[i].props, cases[i].n);
        coffer_db *db = NULL;
        assert_status(ts_env_open(env, &cls, 1, 3, &db), COFFER_ERR_MIGRATION_REQUIRED);
        assert_null(db);
        assert_error_contains("Evolving");
        for (int k = 0; k < 4 && cases[i].names[k]; k++)
            assert_error_contains(cases[i].names[k]);
    }
    /* nothing was changed: the original schema still opens and reads */
    assert_ok(ts_env_open(env, &v1, 1, 3, &env->db));
    coffer_txn *r = ts_begin(env->db, COFFER_TXN_READ);
    coffer_class_id cls = ts_class(env->db, "Evolving");
    assert_int_equal(ts_count(r, cls), 1);
    coffer_object *obj = NULL;
    assert_ok(coffer_object_get(r, cls, 1, &obj));
    assert_string_equal(ts_get_string(obj, 1, NULL), "to be removed");
    coffer_txn_free(r);
    coffer_close(keep);
}

TS_ENV_TEST(test_schema_new_class_same_version)
{
    coffer_db *keep = ts_env_keep(env);
    ts_commit_person(env->db, env->person, 1, "before");
    ts_env_close(env);

    static const coffer_property_schema extra_props[] = {{.name = "label", .type = COFFER_TYPE_STRING,
                                                          .flags = COFFER_PROPERTY_INDEXED}};
    coffer_class_schema more[3] = {ts_std_schema[0], ts_std_schema[1],
                                   {.name = "AddedClass", .properties = extra_props, .property_count = 1}};
    assert_ok(ts_env_open(env, more, 3, 1, &env->db));
    assert_int_equal(coffer_db_class_count(env->db), 3);
    coffer_class_id added = ts_class(env->db, "AddedClass");
    coffer_txn *w = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_field f[] = {ts_field(0, ts_str("new"))};
    assert_ok(coffer_object_create(w, added, f, 1, COFFER_UPDATE_ERROR, NULL));
    ts_commit(w);
    coffer_txn *r = ts_begin(env->db, COFFER_TXN_READ);
    assert_string_equal(person_name(r, env->db, 1), "before");
    coffer_txn_free(r);
    ts_env_close(env);
    /* reopening with no schema shows the added class */
    assert_ok(ts_env_open(env, NULL, 0, 0, &env->db));
    assert_int_equal(coffer_db_class_count(env->db), 3);
    assert_int_equal(ts_count_of(env->db, "AddedClass"), 1);
    coffer_close(keep);
}

TS_ENV_TEST(test_schema_index_change_same_version)
{
    static const coffer_property_schema plain[] = {
        {.name = "code", .type = COFFER_TYPE_STRING},
        {.name = "num", .type = COFFER_TYPE_INT, .flags = COFFER_PROPERTY_INDEXED},
    };
    static const coffer_property_schema indexed[] = {
        {.name = "code", .type = COFFER_TYPE_STRING, .flags = COFFER_PROPERTY_INDEXED},
        {.name = "num", .type = COFFER_TYPE_INT},
    };
    coffer_class_schema v_plain = {.name = "Coded", .properties = plain, .property_count = 2};
    coffer_class_schema v_indexed = {.name = "Coded", .properties = indexed, .property_count = 2};
    ts_env_reopen(env, &v_plain, 1, 2);
    coffer_db *keep = ts_env_keep(env);
    coffer_class_id cls = ts_class(env->db, "Coded");
    coffer_txn *w = ts_begin(env->db, COFFER_TXN_WRITE);
    for (int i = 0; i < 50; i++) {
        char code[16];
        snprintf(code, sizeof code, "code-%d", i % 10);
        coffer_field f[] = {ts_field(0, ts_str(code)), ts_field(1, coffer_value_int(i % 5))};
        assert_ok(coffer_object_create(w, cls, f, 2, COFFER_UPDATE_ERROR, NULL));
    }
    ts_commit(w);
    ts_env_close(env);

    /* add an index on code and remove the one on num, same version */
    assert_ok(ts_env_open(env, &v_indexed, 1, 2, &env->db));
    cls = ts_class(env->db, "Coded");
    const coffer_class_schema *s = coffer_db_class_schema(env->db, cls);
    assert_true(s->properties[0].flags & COFFER_PROPERTY_INDEXED);
    assert_false(s->properties[1].flags & COFFER_PROPERTY_INDEXED);
    coffer_txn *r = ts_begin(env->db, COFFER_TXN_READ);
    coffer_iter *it = NULL;
    coffer_value v = ts_str("code-3");
    assert_int_equal(ts_index_count(r, cls, 0, &v), 5);
    v = coffer_value_int(1);
    assert_status(coffer_index_find(r, cls, 1, &v, &it), COFFER_ERR_INVALID_ARGUMENT);
    assert_error_contains("num");
    coffer_txn_free(r);
    /* the new index is maintained */
    w = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_field f[] = {ts_field(0, ts_str("code-3")), ts_field(1, coffer_value_int(0))};
    assert_ok(coffer_object_create(w, cls, f, 2, COFFER_UPDATE_ERROR, NULL));
    ts_commit(w);
    r = ts_begin(env->db, COFFER_TXN_READ);
    v = ts_str("code-3");
    assert_int_equal(ts_index_count(r, cls, 0, &v), 6);
    coffer_txn_free(r);
    ts_env_close(env);

    /* and back: the index on num is rebuilt and includes the new object */
    assert_ok(ts_env_open(env, &v_plain, 1, 2, &env->db));
    r = ts_begin(env->db, COFFER_TXN_READ);
    v = coffer_value_int(0);
    assert_int_equal(ts_index_count(r, cls, 1, &v), 11);
    coffer_txn_free(r);
    coffer_close(keep);
}

TS_ENV_TEST(test_schema_upgrade)
{
    coffer_class_schema v1 = evolving_class(evolving_v1, 5);
    ts_env_reopen(env, &v1, 1, 1);
    coffer_db *keep = ts_env_keep(env);
    coffer_object_key key = write_evolving_v1(env->db);
    ts_env_close(env);

    /* v2: removedProp removed; four properties added */
    static const coffer_property_schema v2props[] = {
        {.name = "keepProp", .type = COFFER_TYPE_INT},
        {.name = "typeProp", .type = COFFER_TYPE_INT},
        {.name = "optProp", .type = COFFER_TYPE_STRING},
        {.name = "wasOptional", .type = COFFER_TYPE_INT, .flags = OPT},
        {.name = "addedInt", .type = COFFER_TYPE_INT},
        {.name = "addedString", .type = COFFER_TYPE_STRING},
        {.name = "addedOptional", .type = COFFER_TYPE_STRING, .flags = OPT},
        {.name = "addedIndexed", .type = COFFER_TYPE_INT, .flags = COFFER_PROPERTY_INDEXED},
    };
    coffer_class_schema v2 = evolving_class(v2props, 8);
    assert_ok(ts_env_open(env, &v2, 1, 2, &env->db));
    assert_int_equal(coffer_db_schema_version(env->db), 2);
    coffer_class_id cls = ts_class(env->db, "Evolving");
    coffer_property_id pid;
    assert_status(coffer_db_find_property(env->db, cls, "removedProp", &pid), COFFER_ERR_NOT_FOUND);
    coffer_txn *r = ts_begin(env->db, COFFER_TXN_READ);
    coffer_object *obj = NULL;
    assert_ok(coffer_object_get(r, cls, key, &obj));
    assert_int_equal(ts_get_int(obj, ts_prop(env->db, cls, "keepProp")), 41);
    assert_int_equal(ts_get_int(obj, ts_prop(env->db, cls, "typeProp")), 7);
    assert_string_equal(ts_get_string(obj, ts_prop(env->db, cls, "optProp"), NULL), "text");
    assert_int_equal(ts_get_int(obj, ts_prop(env->db, cls, "wasOptional")), 9);
    assert_int_equal(ts_get_int(obj, ts_prop(env->db, cls, "addedInt")), 0);
    assert_string_equal(ts_get_string(obj, ts_prop(env->db, cls, "addedString"), NULL), "");
    assert_true(ts_get_is_null(obj, ts_prop(env->db, cls, "addedOptional")));
    /* the added index covers the existing object (default 0) */
    coffer_value zero = coffer_value_int(0);
    assert_int_equal(ts_index_count(r, cls, ts_prop(env->db, cls, "addedIndexed"), &zero), 1);
    coffer_txn_free(r);
    /* new values can be written */
    coffer_txn *w = ts_begin(env->db, COFFER_TXN_WRITE);
    assert_ok(coffer_object_get(w, cls, key, &obj));
    coffer_value s = ts_str("set after upgrade");
    assert_ok(coffer_object_set_value(obj, ts_prop(env->db, cls, "addedString"), &s));
    ts_commit(w);
    ts_env_close(env);

    /* the stored schema is now v2 */
    assert_ok(ts_env_open(env, NULL, 0, 0, &env->db));
    assert_int_equal(coffer_db_schema_version(env->db), 2);
    cls = ts_class(env->db, "Evolving");
    assert_int_equal(coffer_db_class_schema(env->db, cls)->property_count, 8);
    r = ts_begin(env->db, COFFER_TXN_READ);
    assert_ok(coffer_object_get(r, cls, key, &obj));
    assert_string_equal(ts_get_string(obj, ts_prop(env->db, cls, "addedString"), NULL), "set after upgrade");
    coffer_txn_free(r);
    /* reopening at v2 with v1's schema is now a migration at a lower version */
    coffer_db *db = NULL;
    assert_status(ts_env_open(env, &v1, 1, 1, &db), COFFER_ERR_SCHEMA_VERSION);
    coffer_close(keep);
}

TS_ENV_TEST(test_open_without_schema)
{
    coffer_db *keep = ts_env_keep(env);
    coffer_txn *w = ts_begin(env->db, COFFER_TXN_WRITE);
    ts_add_person(w, env->person, 1, "stored");
    coffer_field f[] = {ts_field(AT_STRING, ts_str("all types"))};
    assert_ok(coffer_object_create(w, env->all_types, f, 1, COFFER_UPDATE_ERROR, NULL));
    ts_commit(w);
    ts_env_close(env);

    coffer_db *db = NULL;
    assert_ok(ts_env_open(env, NULL, 0, 0, &db));
    assert_int_equal(coffer_db_class_count(db), 2);
    assert_int_equal(coffer_db_schema_version(db), 1);
    coffer_class_id at = ts_class(db, "AllTypes");
    for (coffer_property_id p = 0; p < AT_COUNT; p++)
        assert_int_equal(ts_prop(db, at, ts_all_types_properties[p].name), p);
    coffer_txn *r = ts_begin(db, COFFER_TXN_READ);
    assert_string_equal(person_name(r, db, 1), "stored");
    coffer_object *obj = NULL;
    assert_ok(coffer_object_get(r, at, 1, &obj));
    assert_string_equal(ts_get_string(obj, AT_STRING, NULL), "all types");
    coffer_txn_free(r);
    coffer_close(db);
    coffer_close(keep);
}

/* A higher version with an identical schema is accepted and stored. */
TS_ENV_TEST(test_version_bump_same_schema)
{
    coffer_db *keep = ts_env_keep(env);
    ts_commit_person(env->db, env->person, 1, "versioned");
    ts_env_close(env);
    assert_ok(ts_env_open(env, ts_std_schema, TS_STD_SCHEMA_COUNT, 7, &env->db));
    assert_int_equal(coffer_db_schema_version(env->db), 7);
    ts_env_close(env);
    assert_ok(ts_env_open(env, NULL, 0, 0, &env->db));
    assert_int_equal(coffer_db_schema_version(env->db), 7);
    assert_int_equal(ts_count_of(env->db, "Person"), 1);
    coffer_db *db = NULL;
    assert_status(ts_env_open(env, ts_std_schema, TS_STD_SCHEMA_COUNT, 6, &db), COFFER_ERR_SCHEMA_VERSION);
    coffer_close(keep);
}

/* A file at schema version 3 opened with no schema (and so version 0 in the
 * configuration) uses the file's schema as it is. */
TS_ENV_TEST(test_open_without_schema_higher_version)
{
    ts_env_reopen(env, ts_std_schema, TS_STD_SCHEMA_COUNT, 3);
    coffer_db *db = NULL;
    assert_ok(ts_env_open(env, NULL, 0, 0, &db));
    assert_int_equal(coffer_db_schema_version(db), 3);
    assert_int_equal(coffer_db_class_count(db), 2);
    coffer_close(db);
}

/* ------------------------------------------------------------------------ */
/* Class subset                                                              */
/* ------------------------------------------------------------------------ */

TS_ENV_TEST(test_class_subset)
{
    coffer_db *keep = ts_env_keep(env);
    coffer_txn *w = ts_begin(env->db, COFFER_TXN_WRITE);
    ts_add_person(w, env->person, 1, "p1");
    for (int i = 0; i < 10; i++) {
        coffer_field f[] = {ts_field(AT_INT, coffer_value_int(i)), ts_field(AT_STRING, ts_str("kept intact"))};
        assert_ok(coffer_object_create(w, env->all_types, f, 2, COFFER_UPDATE_ERROR, NULL));
    }
    ts_commit(w);
    ts_env_close(env);

    for (int with_schema = 0; with_schema < 2; with_schema++) {
        coffer_config *cfg = ts_env_config(env);
        if (with_schema)
            assert_ok(coffer_config_set_schema(cfg, ts_std_schema, TS_STD_SCHEMA_COUNT, 1));
        const char *names[] = {"Person"};
        assert_ok(coffer_config_set_class_subset(cfg, names, 1));
        coffer_db *db = NULL;
        assert_ok(coffer_open(cfg, &db));
        coffer_config_free(cfg);
        assert_int_equal(coffer_db_class_count(db), 1);
        coffer_class_id id;
        assert_status(coffer_db_find_class(db, "AllTypes", &id), COFFER_ERR_NOT_FOUND);
        assert_error_contains("AllTypes");
        coffer_class_id person = ts_class(db, "Person");
        assert_non_null(coffer_db_class_schema(db, person));
        assert_null(coffer_db_class_schema(db, 1));
        w = ts_begin(db, COFFER_TXN_WRITE);
        assert_int_equal(ts_count(w, person), (uint64_t)with_schema + 1);
        ts_add_person(w, person, 10 + with_schema, "through subset");
        ts_commit(w);
        coffer_close(db);
    }

    /* the full file: the other class's data is intact */
    assert_ok(ts_env_open(env, ts_std_schema, TS_STD_SCHEMA_COUNT, 1, &env->db));
    assert_int_equal(ts_count_of(env->db, "Person"), 3);
    coffer_txn *r = ts_begin(env->db, COFFER_TXN_READ);
    coffer_class_id at = ts_class(env->db, "AllTypes");
    assert_int_equal(ts_count(r, at), 10);
    coffer_iter *it = NULL;
    assert_ok(coffer_class_iterate(r, at, &it));
    coffer_object *obj = NULL;
    int i = 0;
    while (coffer_iter_next(it, &obj) == COFFER_OK) {
        assert_int_equal(ts_get_int(obj, AT_INT), i);
        assert_string_equal(ts_get_string(obj, AT_STRING, NULL), "kept intact");
        i++;
    }
    assert_int_equal(i, 10);
    coffer_iter_free(it);
    coffer_txn_free(r);
    coffer_close(keep);
}

/* ------------------------------------------------------------------------ */
/* Sizes                                                                     */
/* ------------------------------------------------------------------------ */

TS_ENV_TEST(test_max_file_size)
{
    ts_env_close(env);
    const uint64_t cap = 1u << 20;
    coffer_config *cfg = ts_env_config(env);
    assert_ok(coffer_config_set_schema(cfg, ts_std_schema, TS_STD_SCHEMA_COUNT, 1));
    assert_ok(coffer_config_set_max_file_size(cfg, cap));
    coffer_db *db = NULL;
    assert_ok(coffer_open(cfg, &db));
    coffer_class_id at = ts_class(db, "AllTypes");
    unsigned char small[1000];
    memset(small, 's', sizeof small);
    assert_ok(ts_write_blob(db, at, small, sizeof small, 1));

    /* 2 MiB in one write: too large, nothing committed */
    size_t big_size = 2u << 20;
    unsigned char *big = malloc(big_size);
    ts_seed(5);
    ts_rand_bytes(big, big_size);
    assert_status(ts_write_blob(db, at, big, big_size, 2), COFFER_ERR_FILE_TOO_LARGE);
    assert_int_equal(ts_count_of(db, "AllTypes"), 1);
    /* still works for small writes */
    assert_ok(ts_write_blob(db, at, small, sizeof small, 3));
    assert_int_equal(ts_count_of(db, "AllTypes"), 2);

    /* a transaction with a small write and a too large one commits
     * nothing: the large write fails at create or at commit */
    {
        coffer_txn *w = ts_begin(db, COFFER_TXN_WRITE);
        coffer_field fs[] = {ts_field(AT_BINARY, coffer_value_binary(small, sizeof small)),
                             ts_field(AT_INT, coffer_value_int(50))};
        assert_ok(coffer_object_create(w, at, fs, 2, COFFER_UPDATE_ERROR, NULL));
        coffer_field fb[] = {ts_field(AT_BINARY, coffer_value_binary(big, big_size)),
                             ts_field(AT_INT, coffer_value_int(51))};
        coffer_status cst = coffer_object_create(w, at, fb, 2, COFFER_UPDATE_ERROR, NULL);
        if (cst == COFFER_OK) {
            assert_status(coffer_txn_commit(w), COFFER_ERR_FILE_TOO_LARGE);
            assert_int_equal(coffer_txn_is_active(w), 0);
            assert_status(coffer_txn_abort(w), COFFER_ERR_MISUSE);
        } else {
            assert_status(cst, COFFER_ERR_FILE_TOO_LARGE);
            /* the transaction can only be aborted */
            assert_not_ok(coffer_txn_commit(w));
            coffer_txn_abort(w);
        }
        coffer_txn_free(w);
        assert_int_equal(ts_count_of(db, "AllTypes"), 2);
    }

    /* fill it with 64 KiB values until it refuses */
    coffer_status st = COFFER_OK;
    int written = 0;
    for (int i = 0; i < 100 && st == COFFER_OK; i++) {
        st = ts_write_blob(db, at, big + i * 1024, 64 * 1024, 100 + i);
        if (st == COFFER_OK)
            written++;
    }
    assert_status(st, COFFER_ERR_FILE_TOO_LARGE);
    assert_true(written >= 4);
    assert_true(written < 16);
    coffer_close(db);
    long long size = ts_file_size(env->path);
    print_message("    file size %lld after %d blobs\n", size, written);
    assert_true(size <= (long long)cap);

    /* everything committed is intact after reopening */
    db = NULL;
    assert_ok(coffer_open(cfg, &db));
    coffer_txn *r = ts_begin(db, COFFER_TXN_READ);
    assert_int_equal(ts_count(r, at), (uint64_t)(2 + written));
    coffer_iter *it = ts_iterate(r, at);
    coffer_object *obj = NULL;
    int seen = 0;
    while (ts_next(it, &obj)) {
        int64_t tag = ts_get_int(obj, AT_INT);
        size_t size;
        const void *data = ts_get_binary(obj, AT_BINARY, &size);
        if (tag >= 100) {
            assert_int_equal(size, 64 * 1024);
            assert_memory_equal(data, big + (tag - 100) * 1024, 64 * 1024);
        } else {
            assert_int_equal(size, sizeof small);
        }
        seen++;
    }
    assert_int_equal(seen, 2 + written);
    coffer_iter_free(it);
    coffer_txn_free(r);
    coffer_close(db);
    coffer_config_free(cfg);
    free(big);
}

/* Writes well beyond any initial map size succeed (growing the map when
 * COFFER_ERR_MAP_FULL is reported, after a retry). */
TS_ENV_TEST(test_map_growth)
{
    const size_t blob = 1u << 20;
    const int per_txn = 4;
    const int txns = env->mode == TS_PLAIN ? 50 : 15; /* 200 MB plain, 60 MB encrypted/memory */
    unsigned char *data = malloc(blob + 4096);
    ts_seed(77);
    ts_rand_bytes(data, blob + 4096);
    time_t start = time(NULL);
    int map_full = 0;
    for (int t = 0; t < txns; t++) {
        coffer_status st = COFFER_ERR_MAP_FULL;
        for (int attempt = 0; attempt < 3 && st == COFFER_ERR_MAP_FULL; attempt++) {
            coffer_txn *w = ts_begin(env->db, COFFER_TXN_WRITE);
            st = COFFER_OK;
            for (int i = 0; i < per_txn && st == COFFER_OK; i++) {
                int tag = t * per_txn + i;
                coffer_field f[] = {ts_field(AT_BINARY, coffer_value_binary(data + (tag % 4096), blob)),
                                    ts_field(AT_INT, coffer_value_int(tag))};
                st = coffer_object_create(w, env->all_types, f, 2, COFFER_UPDATE_ERROR, NULL);
            }
            if (st == COFFER_OK)
                st = coffer_txn_commit(w);
            else
                coffer_txn_abort(w);
            coffer_txn_free(w);
            if (st == COFFER_ERR_MAP_FULL)
                map_full++;
        }
        assert_ok(st);
    }
    print_message("    %d MB in %ld s, %d map-full retries\n", txns * per_txn, (long)(time(NULL) - start), map_full);
    coffer_txn *r = ts_begin(env->db, COFFER_TXN_READ);
    assert_int_equal(ts_count(r, env->all_types), (uint64_t)(txns * per_txn));
    coffer_iter *it = NULL;
    assert_ok(coffer_class_iterate(r, env->all_types, &it));
    coffer_object *obj = NULL;
    int n = 0;
    while (coffer_iter_next(it, &obj) == COFFER_OK) {
        int64_t tag = ts_get_int(obj, AT_INT);
        assert_int_equal(tag, n);
        if (n % 7 == 0) {
            coffer_value v;
            assert_ok(coffer_object_get_value(obj, AT_BINARY, &v));
            assert_int_equal(v.u.binary.size, blob);
            assert_memory_equal(v.u.binary.data, data + (tag % 4096), blob);
        }
        n++;
    }
    coffer_iter_free(it);
    coffer_txn_free(r);
    assert_int_equal(n, txns * per_txn);
    free(data);
    if (env->mode != TS_MEMORY) {
        long long size = ts_file_size(env->path);
        print_message("    file size %lld\n", size);
        assert_true(size >= (long long)txns * per_txn * (long long)blob);
    }
}

/* With a small initial map (the implementation's COFFER_INITIAL_MAP_SIZE
 * hook; harmless if ignored) the map must grow: a write that reports
 * COFFER_ERR_MAP_FULL succeeds when retried. A read transaction held open
 * meanwhile keeps its snapshot; once it ends, retrying succeeds. */
TS_ENV_TEST(test_map_growth_small_map)
{
    ts_env_close(env);
    setenv("COFFER_INITIAL_MAP_SIZE", "1048576", 1);
    char path[TS_PATH_MAX];
    ts_join(path, env->dir, "small-map.coffer");
    coffer_db *db = NULL;
    coffer_status st = ts_open_path(path, ts_mode_key(env->mode), 0, ts_std_schema, TS_STD_SCHEMA_COUNT, 1, &db);
    unsetenv("COFFER_INITIAL_MAP_SIZE");
    assert_ok(st);
    coffer_class_id at = ts_class(db, "AllTypes");
    const size_t blob = 512 * 1024;
    unsigned char *data = malloc(blob);
    ts_seed(17);
    ts_rand_bytes(data, blob);
    int retries = 0;
    for (int t = 0; t < 40; t++) {
        st = ts_write_blob(db, at, data, blob, t);
        assert_ok(st);
    }
    (void)retries;
    assert_int_equal(ts_count_of(db, "AllTypes"), 40);

    /* a reader holds a snapshot while the writer fills the map */
    coffer_db *other = NULL;
    assert_ok(ts_open_path(path, ts_mode_key(env->mode), 0, NULL, 0, 0, &other));
    coffer_txn *r = ts_begin(other, COFFER_TXN_READ);
    int full_while_reading = 0;
    int t = 40;
    for (; t < 120; t++) {
        coffer_txn *w = NULL;
        st = coffer_txn_begin(db, COFFER_TXN_WRITE, &w);
        assert_ok(st);
        coffer_field f[] = {ts_field(AT_BINARY, coffer_value_binary(data, blob)), ts_field(AT_INT, coffer_value_int(t))};
        st = coffer_object_create(w, at, f, 2, COFFER_UPDATE_ERROR, NULL);
        if (st == COFFER_OK)
            st = coffer_txn_commit(w);
        else
            coffer_txn_abort(w);
        coffer_txn_free(w);
        if (st == COFFER_ERR_MAP_FULL) {
            full_while_reading++;
            if (full_while_reading > 3)
                break;
            continue;
        }
        assert_ok(st);
    }
    print_message("    map full %d times while a reader was open (%d objects written)\n", full_while_reading,
                  t);
    assert_int_equal(ts_count(r, at), 40);
    coffer_object *obj = NULL;
    assert_ok(coffer_object_get(r, at, 40, &obj));
    coffer_value v;
    assert_ok(coffer_object_get_value(obj, AT_BINARY, &v));
    assert_int_equal(v.u.binary.size, blob);
    assert_memory_equal(v.u.binary.data, data, blob);
    coffer_txn_free(r);
    /* without the reader, the writes go through (after at most a retry) */
    for (int k = 0; k < 20; k++)
        assert_ok(ts_write_blob(db, at, data, blob, 1000 + k));
    coffer_close(other);
    r = ts_begin(db, COFFER_TXN_READ);
    uint64_t n = ts_count(r, at);
    coffer_txn_free(r);
    coffer_close(db);
    free(data);
    /* reopen (map size from the file) and read everything */
    db = NULL;
    assert_ok(ts_open_path(path, ts_mode_key(env->mode), 0, NULL, 0, 0, &db));
    assert_int_equal(ts_count_of(db, "AllTypes"), n);
    coffer_close(db);
}

/* ------------------------------------------------------------------------ */
/* Foreign, damaged and empty files                                          */
/* ------------------------------------------------------------------------ */

typedef struct probe {
    const char *path;
    const uint8_t *key;
    int read_all;
} probe;

/* In a child process: opens the file and (optionally) reads every object of
 * every class. Exits with the first non-OK status, or 0. */
static int probe_child(void *arg)
{
    probe *p = arg;
    coffer_db *db = NULL;
    coffer_status st = ts_open_path(p->path, p->key, 0, NULL, 0, 0, &db);
    if (st != COFFER_OK)
        return (int)st;
    if (!p->read_all) {
        coffer_close(db);
        return 0;
    }
    coffer_status worst = COFFER_OK;
    coffer_txn *r = NULL;
    st = coffer_txn_begin(db, COFFER_TXN_READ, &r);
    if (st != COFFER_OK)
        return (int)st;
    for (coffer_class_id c = 0; c < coffer_db_class_count(db); c++) {
        const coffer_class_schema *s = coffer_db_class_schema(db, c);
        uint64_t n = 0;
        st = coffer_class_count(r, c, &n);
        if (st != COFFER_OK && worst == COFFER_OK)
            worst = st;
        coffer_iter *it = NULL;
        st = coffer_class_iterate(r, c, &it);
        if (st != COFFER_OK) {
            if (worst == COFFER_OK)
                worst = st;
            continue;
        }
        for (;;) {
            coffer_object *obj = NULL;
            st = coffer_iter_next(it, &obj);
            if (st == COFFER_DONE)
                break;
            if (st != COFFER_OK) {
                if (worst == COFFER_OK)
                    worst = st;
                break;
            }
            for (coffer_property_id pr = 0; s && pr < s->property_count; pr++) {
                coffer_value v;
                st = coffer_object_get_value(obj, pr, &v);
                if (st != COFFER_OK && worst == COFFER_OK)
                    worst = st;
            }
        }
        coffer_iter_free(it);
    }
    coffer_txn_free(r);
    coffer_close(db);
    return (int)worst;
}

/* Runs probe_child; fails the test if the child crashed. Returns its status. */
static int run_probe(const char *path, const uint8_t *key, int read_all)
{
    probe p = {path, key, read_all};
    char what[TS_PATH_MAX + 32];
    snprintf(what, sizeof what, "opening %s", path);
    return ts_run_in_child(probe_child, &p, what);
}

static void check_not_a_database(const char *path, const void *content, size_t size)
{
    assert_int_equal(ts_write_file(path, content, size), 0);
    int st = run_probe(path, NULL, 0);
    if (st != COFFER_ERR_NOT_A_DATABASE)
        print_error("%s: status %d, expected COFFER_ERR_NOT_A_DATABASE\n", path, st);
    assert_int_equal(st, COFFER_ERR_NOT_A_DATABASE);
    /* the message names the file; the file is untouched */
    coffer_db *db = NULL;
    assert_status(ts_open_path(path, NULL, 0, NULL, 0, 0, &db), COFFER_ERR_NOT_A_DATABASE);
    const char *base = strrchr(path, '/') + 1;
    assert_error_contains(base);
    /* with a schema, and read-only, and with a key: the same */
    assert_status(ts_open_path(path, NULL, 0, ts_std_schema, TS_STD_SCHEMA_COUNT, 1, &db), COFFER_ERR_NOT_A_DATABASE);
    assert_status(ts_open_path(path, NULL, 1, NULL, 0, 0, &db), COFFER_ERR_NOT_A_DATABASE);
    assert_status(ts_open_path(path, ts_key, 0, NULL, 0, 0, &db), COFFER_ERR_NOT_A_DATABASE);
    size_t got_size = 0;
    unsigned char *got = ts_read_file(path, &got_size);
    assert_non_null(got);
    assert_int_equal(got_size, size);
    assert_memory_equal(got, content, size);
    free(got);
}

TS_ENV_TEST(test_not_a_database)
{
    char path[TS_PATH_MAX];
    size_t n = 64 * 1024;
    unsigned char *junk = malloc(n);
    ts_seed(99);
    ts_rand_bytes(junk, n);
    ts_join(path, env->dir, "randomBytes.coffer");
    check_not_a_database(path, junk, n);

    ts_join(path, env->dir, "textFile.coffer");
    const char *text = "This is a plain text file.\nIt is certainly not a database.\n";
    char *many = malloc(40000);
    many[0] = 0;
    while (strlen(many) + strlen(text) < 39000)
        strcat(many, text);
    check_not_a_database(path, many, strlen(many));

    ts_join(path, env->dir, "tinyText.coffer");
    check_not_a_database(path, "hello\n", 6);

    /* zeros, one page and more */
    memset(junk, 0, n);
    ts_join(path, env->dir, "zeroPages.coffer");
    check_not_a_database(path, junk, 16384);
    free(junk);
    free(many);
}

TS_ENV_TEST(test_foreign_lmdb)
{
    char path[TS_PATH_MAX];
    ts_join(path, env->dir, "foreignLmdb.coffer");
    MDB_env *menv = NULL;
    assert_int_equal(mdb_env_create(&menv), 0);
    assert_int_equal(mdb_env_set_maxdbs(menv, 8), 0);
    assert_int_equal(mdb_env_set_mapsize(menv, 16u << 20), 0);
    assert_int_equal(mdb_env_open(menv, path, MDB_NOSUBDIR, 0644), 0);
    MDB_txn *txn = NULL;
    assert_int_equal(mdb_txn_begin(menv, NULL, 0, &txn), 0);
    MDB_dbi dbi;
    assert_int_equal(mdb_dbi_open(txn, "someTable", MDB_CREATE, &dbi), 0);
    for (int i = 0; i < 100; i++) {
        char k[32], v[64];
        snprintf(k, sizeof k, "key%03d", i);
        snprintf(v, sizeof v, "value number %d", i);
        MDB_val key = {strlen(k), k}, val = {strlen(v), v};
        assert_int_equal(mdb_put(txn, dbi, &key, &val, 0), 0);
    }
    assert_int_equal(mdb_txn_commit(txn), 0);
    mdb_env_close(menv);

    size_t before_size = 0;
    unsigned char *before = ts_read_file(path, &before_size);
    assert_non_null(before);
    int st = run_probe(path, NULL, 0);
    assert_int_equal(st, COFFER_ERR_NOT_A_DATABASE);
    coffer_db *db = NULL;
    assert_status(ts_open_path(path, NULL, 0, ts_std_schema, TS_STD_SCHEMA_COUNT, 1, &db),
                  COFFER_ERR_NOT_A_DATABASE);
    assert_error_contains("foreignLmdb.coffer");
    assert_status(ts_open_path(path, ts_key, 0, NULL, 0, 0, &db), COFFER_ERR_NOT_A_DATABASE);
    size_t after_size = 0;
    unsigned char *after = ts_read_file(path, &after_size);
    assert_int_equal(after_size, before_size);
    assert_memory_equal(after, before, before_size);
    free(before);
    free(after);

    /* a foreign LMDB file with only the main database used */
    ts_join(path, env->dir, "foreignMain.coffer");
    ts_write_foreign_lmdb(path, "hello", "world");
    st = run_probe(path, NULL, 0);
    assert_int_equal(st, COFFER_ERR_NOT_A_DATABASE);
}

TS_ENV_TEST(test_truncated)
{
    /* a few MB of incompressible data in several transactions */
    size_t blob = 200 * 1024;
    unsigned char *data = malloc(blob);
    ts_seed(3);
    ts_rand_bytes(data, blob);
    for (int t = 0; t < 5; t++) {
        coffer_txn *w = ts_begin(env->db, COFFER_TXN_WRITE);
        for (int i = 0; i < 4; i++) {
            coffer_field f[] = {ts_field(AT_BINARY, coffer_value_binary(data, blob)),
                                ts_field(AT_INT, coffer_value_int(t * 4 + i))};
            assert_ok(coffer_object_create(w, env->all_types, f, 2, COFFER_UPDATE_ERROR, NULL));
        }
        for (int i = 0; i < 50; i++)
            ts_add_person(w, env->person, t * 50 + i, "someone with a name");
        ts_commit(w);
    }
    free(data);
    ts_env_close(env);
    long long size = ts_file_size(env->path);
    print_message("    file size %lld, truncating to %lld\n", size, size / 2);
    assert_true(size > 3 * 1024 * 1024);
    assert_int_equal(truncate(env->path, size / 2), 0);

    int st = run_probe(env->path, ts_mode_key(env->mode), 1);
    if (st != COFFER_ERR_CORRUPTED)
        print_error("truncated file: status %d, expected COFFER_ERR_CORRUPTED (%d)\n", st, COFFER_ERR_CORRUPTED);
    assert_int_equal(st, COFFER_ERR_CORRUPTED);
}

TS_ENV_TEST(test_zero_length_file)
{
    ts_env_close(env);
    char path[TS_PATH_MAX];
    ts_join(path, env->dir, "empty.coffer");
    assert_int_equal(ts_write_file(path, "", 0), 0);
    coffer_db *db = NULL;
    assert_ok(ts_open_path(path, ts_mode_key(env->mode), 0, ts_std_schema, TS_STD_SCHEMA_COUNT, 1, &db));
    assert_int_equal(coffer_db_class_count(db), 2);
    assert_int_equal(coffer_db_is_encrypted(db), env->mode == TS_ENCRYPTED);
    ts_commit_person(db, ts_class(db, "Person"), 1, "in a once empty file");
    coffer_close(db);
    db = NULL;
    assert_ok(ts_open_path(path, ts_mode_key(env->mode), 0, NULL, 0, 0, &db));
    coffer_txn *r = ts_begin(db, COFFER_TXN_READ);
    assert_string_equal(person_name(r, db, 1), "in a once empty file");
    coffer_txn_free(r);
    coffer_close(db);

    /* without a schema, too */
    ts_join(path, env->dir, "empty2.coffer");
    assert_int_equal(ts_write_file(path, "", 0), 0);
    db = NULL;
    assert_ok(ts_open_path(path, ts_mode_key(env->mode), 0, NULL, 0, 0, &db));
    assert_int_equal(coffer_db_class_count(db), 0);
    coffer_close(db);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TS_TEST_ALL_MODES(test_two_handles_one_file),
        TS_TEST_FILE_MODES(test_same_file_other_path),
        TS_TEST_EMPTY(test_in_memory),
        TS_TEST_EMPTY(test_in_memory_larger),
        TS_TEST_EMPTY(test_in_memory_odd_identifiers),
        TS_TEST_EMPTY(test_read_only_missing),
        TS_TEST_FILE_MODES(test_read_only),
        TS_TEST_FILE_MODES(test_read_only_schema_write_needed),
        TS_TEST_FILE_MODES(test_read_only_and_read_write_in_process),
        TS_TEST_FILE_MODES(test_unwritable_file),
        TS_TEST_FILE_MODES(test_seed_file),
        TS_TEST_EMPTY(test_seed_missing),
        TS_TEST_ALL_MODES(test_schema_same_and_lower_version),
        TS_TEST_ALL_MODES(test_schema_diff_same_version),
        TS_TEST_ALL_MODES(test_schema_new_class_same_version),
        TS_TEST_ALL_MODES(test_schema_index_change_same_version),
        TS_TEST_ALL_MODES(test_schema_upgrade),
        TS_TEST_ALL_MODES(test_open_without_schema),
        TS_TEST_ALL_MODES(test_open_without_schema_higher_version),
        TS_TEST_ALL_MODES(test_version_bump_same_schema),
        TS_TEST_ALL_MODES(test_class_subset),
        TS_TEST_FILE_MODES(test_max_file_size),
        TS_TEST_ALL_MODES(test_map_growth),
        TS_TEST_FILE_MODES(test_map_growth_small_map),
        TS_TEST_EMPTY(test_not_a_database),
        TS_TEST_EMPTY(test_foreign_lmdb),
        TS_TEST_FILE_MODES(test_truncated),
        TS_TEST_FILE_MODES(test_zero_length_file),
    };
    return cmocka_run_group_tests_name("storage", tests, NULL, NULL);
}
