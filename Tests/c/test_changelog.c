/* test_changelog.c — the change log: what each commit records (inserted,
 * deleted and modified objects with their columns, list operations in order,
 * the origin), folding inside one transaction, trimming under load and with
 * readers, sealing in encrypted files, damaged entries, and entries that
 * survive a writer killed mid-transaction. */
#define _GNU_SOURCE
#include "test_support.h"

#include <lmdb.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../Sources/CCoffer/storage/changelog.h"

enum { OWNER_ID = 0, OWNER_NAME, OWNER_DOGS };

static const coffer_property_schema owner_props[] = {
    {.name = "id", .type = COFFER_TYPE_INT, .flags = COFFER_PROPERTY_PRIMARY_KEY},
    {.name = "name", .type = COFFER_TYPE_STRING},
    {.name = "dogs", .type = COFFER_TYPE_LINK, .collection = COFFER_COLLECTION_LIST, .object_class = "Dog"},
};
static const coffer_property_schema tag_props[] = {
    {.name = "label", .type = COFFER_TYPE_STRING},
};
/* Tag: a class nothing links to, which a clear drops whole. */
static const coffer_class_schema kennel[] = {
    {.name = "Dog", .properties = ts_dog_properties, .property_count = TS_DOG_COUNT},
    {.name = "Owner", .properties = owner_props, .property_count = 3},
    {.name = "Tag", .properties = tag_props, .property_count = 1},
};

static int setup_kennel(void **state) { return ts_setup_schema(state, kennel, 3); }

typedef struct kennel_ids {
    coffer_class_id dog, owner;
    uint32_t dog_table, owner_table;
} kennel_ids;

static kennel_ids ids_of(coffer_db *db)
{
    kennel_ids k;
    k.dog = ts_class(db, "Dog");
    k.owner = ts_class(db, "Owner");
    /* Table numbers are assigned in the order classes are first stored. */
    k.dog_table = 1;
    k.owner_table = 2;
    return k;
}

static coffer_object_key add_dog(coffer_txn *txn, const kennel_ids *k, int64_t id, const char *name)
{
    coffer_field f[] = {ts_field(TS_DOG_ID, coffer_value_int(id)), ts_field(TS_DOG_NAME, ts_str(name))};
    coffer_object *obj = ts_create(txn, k->dog, f, 2);
    return coffer_object_key_of(obj);
}

/* Commits `txn` and returns the version it made. */
static uint64_t commit_version(coffer_txn *txn)
{
    uint64_t version;
    assert_ok(coffer_txn_version(txn, &version));
    ts_commit(txn);
    return version;
}

/* The entry of `version`, read in a new read transaction (freed by the caller). */
static cf_log_entry read_entry(coffer_db *db, uint64_t version)
{
    coffer_txn *txn = ts_begin(db, COFFER_TXN_READ);
    cf_log_entry entry;
    assert_ok(cf_log_read(txn, version, &entry));
    coffer_txn_free(txn);
    return entry;
}

static const cf_log_object *find_object(const cf_log_entry *e, uint32_t table, uint64_t key)
{
    for (size_t i = 0; i < e->nobjects; i++)
        if (e->objects[i].table == table && e->objects[i].key == key)
            return &e->objects[i];
    return NULL;
}

TS_ENV_TEST(test_inserts_modifications_and_deletions)
{
    kennel_ids k = ids_of(env->db);
    coffer_txn *txn = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_object_key rex = add_dog(txn, &k, 1, "Rex");
    coffer_object_key fido = add_dog(txn, &k, 2, "Fido");
    uint64_t v1 = commit_version(txn);

    cf_log_entry e = read_entry(env->db, v1);
    assert_int_equal(e.version, v1);
    assert_int_equal(e.origin, COFFER_ORIGIN_LOCAL);
    assert_int_equal(e.nobjects, 2);
    assert_int_equal(e.objects[0].kind, CF_LOG_INSERT);
    assert_int_equal(e.objects[0].key, rex);
    assert_int_equal(e.objects[1].key, fido);
    assert_int_equal(e.objects[1].table, k.dog_table);
    cf_log_entry_free(&e);

    /* Two properties of Rex (reported in reverse column order), Fido deleted. */
    txn = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_object *obj;
    assert_ok(coffer_object_get(txn, k.dog, rex, &obj));
    coffer_value age = coffer_value_int(3), name = ts_str("Rex II");
    assert_ok(coffer_object_set_value(obj, TS_DOG_AGE, &age));
    assert_ok(coffer_object_set_value(obj, TS_DOG_NAME, &name));
    assert_ok(coffer_object_get(txn, k.dog, fido, &obj));
    assert_ok(coffer_object_delete(obj));
    uint64_t v2 = commit_version(txn);
    assert_true(v2 > v1);

    e = read_entry(env->db, v2);
    assert_int_equal(e.nobjects, 2);
    const cf_log_object *m = find_object(&e, k.dog_table, rex);
    assert_non_null(m);
    assert_int_equal(m->kind, CF_LOG_MODIFY);
    assert_int_equal(m->ncolumns, 2);
    assert_int_equal(m->columns[0], TS_DOG_NAME); /* columns follow the array, sorted */
    assert_int_equal(m->columns[1], TS_DOG_AGE);
    const cf_log_object *d = find_object(&e, k.dog_table, fido);
    assert_non_null(d);
    assert_int_equal(d->kind, CF_LOG_DELETE);
    assert_int_equal(d->ncolumns, 0);
    cf_log_entry_free(&e);
}

TS_ENV_TEST(test_folding_inside_one_transaction)
{
    kennel_ids k = ids_of(env->db);
    coffer_txn *txn = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_object_key old = add_dog(txn, &k, 1, "Old");
    ts_commit(txn);

    txn = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_object_key born = add_dog(txn, &k, 2, "Born");    /* inserted, then modified */
    coffer_object_key gone = add_dog(txn, &k, 3, "Gone");    /* inserted, then deleted */
    coffer_object *obj;
    coffer_value v = coffer_value_int(9);
    assert_ok(coffer_object_get(txn, k.dog, born, &obj));
    assert_ok(coffer_object_set_value(obj, TS_DOG_AGE, &v));
    assert_ok(coffer_object_get(txn, k.dog, gone, &obj));
    assert_ok(coffer_object_delete(obj));
    assert_ok(coffer_object_get(txn, k.dog, old, &obj));     /* modified, then deleted */
    assert_ok(coffer_object_set_value(obj, TS_DOG_AGE, &v));
    assert_ok(coffer_object_delete(obj));
    uint64_t version = commit_version(txn);

    cf_log_entry e = read_entry(env->db, version);
    assert_int_equal(e.nobjects, 2);
    assert_int_equal(find_object(&e, k.dog_table, born)->kind, CF_LOG_INSERT);
    assert_int_equal(find_object(&e, k.dog_table, old)->kind, CF_LOG_DELETE);
    assert_null(find_object(&e, k.dog_table, gone));
    cf_log_entry_free(&e);

    /* A transaction that creates and deletes the same object writes no entry. */
    txn = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_object_key brief = add_dog(txn, &k, 4, "Brief");
    assert_ok(coffer_object_get(txn, k.dog, brief, &obj));
    assert_ok(coffer_object_delete(obj));
    version = commit_version(txn);
    coffer_txn *r = ts_begin(env->db, COFFER_TXN_READ);
    int origin;
    assert_status(coffer_txn_commit_origin(r, version, &origin), COFFER_ERR_NOT_FOUND);
    assert_error_contains("no entry for version");
    coffer_txn_free(r);
}

TS_ENV_TEST(test_list_operations_in_order)
{
    kennel_ids k = ids_of(env->db);
    coffer_txn *txn = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_object_key dogs[3];
    for (int i = 0; i < 3; i++)
        dogs[i] = add_dog(txn, &k, i, "dog");
    coffer_field f[] = {ts_field(OWNER_ID, coffer_value_int(1)), ts_field(OWNER_NAME, ts_str("Ann"))};
    coffer_object *owner = ts_create(txn, k.owner, f, 2);
    coffer_object_key ann = coffer_object_key_of(owner);
    ts_commit(txn);

    txn = ts_begin(env->db, COFFER_TXN_WRITE);
    assert_ok(coffer_object_get(txn, k.owner, ann, &owner));
    coffer_list *list;
    assert_ok(coffer_object_get_list(owner, OWNER_DOGS, &list));
    for (int i = 0; i < 3; i++) {
        coffer_value link = coffer_value_link(k.dog, dogs[i]);
        assert_ok(coffer_list_append(list, &link));
    }
    assert_ok(coffer_list_move(list, 0, 2));
    assert_ok(coffer_list_swap(list, 0, 1));
    assert_ok(coffer_list_remove(list, 1));
    coffer_value first = coffer_value_link(k.dog, dogs[0]);
    assert_ok(coffer_list_set(list, 0, &first));
    assert_ok(coffer_list_clear(list));
    assert_ok(coffer_txn_set_origin(txn, COFFER_ORIGIN_REMOTE));
    uint64_t version = commit_version(txn);

    cf_log_entry e = read_entry(env->db, version);
    assert_int_equal(e.origin, COFFER_ORIGIN_REMOTE);
    static const struct { uint32_t op; uint64_t a, b; } want[] = {
        {CF_COLL_INSERT, 0, 0}, {CF_COLL_INSERT, 1, 0}, {CF_COLL_INSERT, 2, 0}, {CF_COLL_MOVE, 0, 2},
        {CF_COLL_SWAP, 0, 1},   {CF_COLL_ERASE, 1, 0},  {CF_COLL_SET, 0, 0},    {CF_COLL_CLEAR, 2, 0},
    };
    assert_int_equal(e.nops, sizeof want / sizeof want[0]);
    for (size_t i = 0; i < e.nops; i++) {
        assert_int_equal(e.ops[i].op, want[i].op);
        assert_int_equal(e.ops[i].a, want[i].a);
        assert_int_equal(e.ops[i].b, want[i].b);
        assert_int_equal(e.ops[i].table, k.owner_table);
        assert_int_equal(e.ops[i].key, ann);
        assert_int_equal(e.ops[i].column, OWNER_DOGS);
        assert_int_equal(e.ops[i].coll_id, 0);
    }
    /* The owner's list property counts as modified. */
    const cf_log_object *o = find_object(&e, k.owner_table, ann);
    assert_non_null(o);
    assert_int_equal(o->kind, CF_LOG_MODIFY);
    assert_int_equal(o->ncolumns, 1);
    assert_int_equal(o->columns[0], OWNER_DOGS);
    cf_log_entry_free(&e);

    coffer_txn *r = ts_begin(env->db, COFFER_TXN_READ);
    int origin = -1;
    assert_ok(coffer_txn_commit_origin(r, version, &origin));
    assert_int_equal(origin, COFFER_ORIGIN_REMOTE);
    coffer_txn_free(r);
}

static coffer_object_key add_tag(coffer_txn *txn, coffer_class_id tag, const char *label)
{
    coffer_field f[] = {ts_field(0, ts_str(label))};
    return coffer_object_key_of(ts_create(txn, tag, f, 1));
}

/* A class nothing links to is dropped whole and logged as cleared; one in
 * the object graph is deleted (and logged) object by object. */
TS_ENV_TEST(test_clearing_a_class)
{
    kennel_ids k = ids_of(env->db);
    coffer_class_id tag = ts_class(env->db, "Tag");
    coffer_txn *txn = ts_begin(env->db, COFFER_TXN_WRITE);
    add_tag(txn, tag, "a");
    coffer_object_key old_dog = add_dog(txn, &k, 1, "a");
    ts_commit(txn);
    txn = ts_begin(env->db, COFFER_TXN_WRITE);
    add_tag(txn, tag, "b"); /* gone again with the clear */
    add_dog(txn, &k, 2, "b");
    assert_ok(coffer_class_clear(txn, tag));
    assert_ok(coffer_class_clear(txn, k.dog));
    coffer_object_key after = add_tag(txn, tag, "c");
    uint64_t version = commit_version(txn);

    cf_log_entry e = read_entry(env->db, version);
    assert_int_equal(e.nobjects, 3);
    assert_int_equal(e.objects[0].kind, CF_LOG_DELETE); /* Dog 1 (Dog 2 never existed outside) */
    assert_int_equal(e.objects[0].table, k.dog_table);
    assert_int_equal(e.objects[0].key, old_dog);
    assert_int_equal(e.objects[1].kind, CF_LOG_CLEAR);
    assert_int_equal(e.objects[1].table, 3);
    assert_int_equal(e.objects[2].kind, CF_LOG_INSERT);
    assert_int_equal(e.objects[2].key, after);
    cf_log_entry_free(&e);
}

static uint64_t oldest_entry(coffer_db *db)
{
    coffer_txn *txn = ts_begin(db, COFFER_TXN_READ);
    uint64_t oldest;
    assert_ok(cf_log_oldest(txn, &oldest));
    coffer_txn_free(txn);
    return oldest;
}

/* Entries stay while a reader needs them and go once none does; a steady
 * write load keeps the log (and the file) bounded. */
TS_ENV_TEST(test_trimmed_after_readers)
{
    kennel_ids k = ids_of(env->db);
    coffer_txn *txn = ts_begin(env->db, COFFER_TXN_WRITE);
    add_dog(txn, &k, 0, "first");
    uint64_t v0 = commit_version(txn);
    assert_int_equal(oldest_entry(env->db), v0);

    coffer_txn *reader = ts_begin(env->db, COFFER_TXN_READ);
    uint64_t pinned;
    assert_ok(coffer_txn_version(reader, &pinned));
    uint64_t last = 0;
    for (int i = 1; i <= 20; i++) {
        txn = ts_begin(env->db, COFFER_TXN_WRITE);
        add_dog(txn, &k, i, "more");
        last = commit_version(txn);
    }
    /* The reader at `pinned` needs every entry after it. */
    assert_int_equal(oldest_entry(env->db), pinned + 1);
    coffer_txn_free(reader);
    txn = ts_begin(env->db, COFFER_TXN_WRITE);
    add_dog(txn, &k, 100, "after");
    last = commit_version(txn);
    assert_int_equal(oldest_entry(env->db), last);

    /* 2,000 commits under a reader that moves on every 100: bounded. */
    long long size_at_500 = 0;
    coffer_txn *moving = NULL;
    for (int i = 0; i < 2000; i++) {
        if (i % 100 == 0) {
            coffer_txn_free(moving);
            moving = ts_begin(env->db, COFFER_TXN_READ);
        }
        txn = ts_begin(env->db, COFFER_TXN_WRITE);
        coffer_object *obj;
        coffer_value age = coffer_value_int(i);
        coffer_value pk = coffer_value_int(0);
        assert_ok(coffer_object_find(txn, k.dog, &pk, &obj));
        assert_ok(coffer_object_set_value(obj, TS_DOG_AGE, &age));
        last = commit_version(txn);
        assert_true(last - oldest_entry(env->db) <= 100);
        if (i == 500 && env->mode != TS_MEMORY)
            size_at_500 = ts_file_size(env->path);
    }
    coffer_txn_free(moving);
    if (env->mode != TS_MEMORY)
        assert_true(ts_file_size(env->path) <= size_at_500 + 256 * 1024);
}

/* In an encrypted file an entry is sealed to its place: moved elsewhere it
 * fails to open; a plain entry that does not decode is reported damaged. */
TS_ENV_TEST(test_damaged_and_moved_entries)
{
    kennel_ids k = ids_of(env->db);
    coffer_txn *txn = ts_begin(env->db, COFFER_TXN_WRITE);
    add_dog(txn, &k, 1, "Rex");
    uint64_t version = commit_version(txn);
    coffer_txn *reader = ts_begin(env->db, COFFER_TXN_READ); /* keeps the entry */
    coffer_txn_free(reader);

    /* Rewrite the entry's value with raw LMDB, beside the library. */
    MDB_env *raw;
    assert_int_equal(mdb_env_create(&raw), 0);
    assert_int_equal(mdb_env_set_maxdbs(raw, 8), 0);
    assert_int_equal(mdb_env_set_mapsize(raw, (size_t)1 << 30), 0);
    ts_env_close(env);
    assert_int_equal(mdb_env_open(raw, env->path, MDB_NOSUBDIR, 0644), 0);
    MDB_txn *w;
    MDB_dbi meta;
    assert_int_equal(mdb_txn_begin(raw, NULL, 0, &w), 0);
    assert_int_equal(mdb_dbi_open(w, "0", 0, &meta), 0);
    uint8_t key[9] = {'L'};
    for (int i = 0; i < 8; i++)
        key[1 + i] = (uint8_t)(version >> (56 - 8 * i));
    MDB_val kv = {9, key}, v;
    assert_int_equal(mdb_get(w, meta, &kv, &v), 0);
    uint8_t *copy = malloc(v.mv_size);
    memcpy(copy, v.mv_data, v.mv_size);
    copy[v.mv_size - 1] ^= 0x40; /* the last byte of the plain varints, or the seal */
    MDB_val nv = {v.mv_size, copy};
    assert_int_equal(mdb_put(w, meta, &kv, &nv, 0), 0);
    assert_int_equal(mdb_txn_commit(w), 0);
    mdb_env_close(raw);
    free(copy);

    ts_env_reopen(env, kennel, 3, 1);
    coffer_txn *r = ts_begin(env->db, COFFER_TXN_READ);
    int origin;
    coffer_status st = coffer_txn_commit_origin(r, version, &origin);
    if (env->mode == TS_ENCRYPTED)
        assert_int_equal(st, COFFER_ERR_INTEGRITY);
    else
        assert_int_equal(st, COFFER_ERR_CORRUPTED);
    coffer_txn_free(r);
    /* The data itself is untouched. */
    assert_int_equal(ts_count_of(env->db, "Dog"), 1);
}

/* A writer killed in the middle of a transaction leaves the committed
 * entries and data as they were, and no entry of the lost transaction. */
TS_ENV_TEST(test_killed_writer)
{
    kennel_ids k = ids_of(env->db);
    coffer_txn *txn = ts_begin(env->db, COFFER_TXN_WRITE);
    add_dog(txn, &k, 1, "kept");
    uint64_t kept = commit_version(txn);
    coffer_txn *reader = ts_begin(env->db, COFFER_TXN_READ); /* keeps entries after `kept` - 1 */
    int ready[2];
    assert_int_equal(pipe(ready), 0);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        coffer_db *db;
        if (ts_env_open(env, kennel, 3, 1, &db) != COFFER_OK)
            _exit(2);
        kennel_ids ck = ids_of(db);
        coffer_txn *t;
        if (coffer_txn_begin(db, COFFER_TXN_WRITE, &t) != COFFER_OK)
            _exit(3);
        for (int i = 10; i < 500; i++) {
            coffer_field f[] = {{TS_DOG_ID, coffer_value_int(i)}, {TS_DOG_NAME, coffer_value_string("lost", SIZE_MAX)}};
            if (coffer_object_create(t, ck.dog, f, 2, COFFER_UPDATE_ERROR, NULL) != COFFER_OK)
                _exit(4);
        }
        char c = 'x';
        if (write(ready[1], &c, 1) != 1)
            _exit(5);
        for (;;)
            pause();
    }
    close(ready[1]);
    char c;
    assert_int_equal(read(ready[0], &c, 1), 1);
    close(ready[0]);
    kill(child, SIGKILL);
    int status;
    waitpid(child, &status, 0);
    assert_true(WIFSIGNALED(status));

    coffer_txn_free(reader);
    coffer_txn *r = ts_begin(env->db, COFFER_TXN_READ);
    uint64_t now;
    assert_ok(coffer_txn_version(r, &now));
    assert_int_equal(now, kept);
    int origin;
    assert_ok(coffer_txn_commit_origin(r, kept, &origin));
    assert_status(coffer_txn_commit_origin(r, kept + 1, &origin), COFFER_ERR_NOT_FOUND);
    assert_int_equal(ts_count(r, k.dog), 1);
    coffer_txn_free(r);
}

TS_ENV_TEST(test_origin_and_version_errors)
{
    uint64_t v;
    int origin;
    assert_status(coffer_txn_version(NULL, &v), COFFER_ERR_INVALID_ARGUMENT);
    coffer_txn *r = ts_begin(env->db, COFFER_TXN_READ);
    assert_status(coffer_txn_version(r, NULL), COFFER_ERR_INVALID_ARGUMENT);
    assert_status(coffer_txn_set_origin(r, COFFER_ORIGIN_REMOTE), COFFER_ERR_NOT_IN_WRITE);
    assert_status(coffer_txn_commit_origin(r, 1, NULL), COFFER_ERR_INVALID_ARGUMENT);
    coffer_txn_free(r);
    coffer_txn *w = ts_begin(env->db, COFFER_TXN_WRITE);
    assert_status(coffer_txn_set_origin(w, 7), COFFER_ERR_INVALID_ARGUMENT);
    assert_error_contains("origin 7");
    assert_ok(coffer_txn_abort(w));
    assert_status(coffer_txn_version(w, &v), COFFER_ERR_MISUSE);
    assert_status(coffer_txn_commit_origin(w, 1, &origin), COFFER_ERR_MISUSE);
    coffer_txn_free(w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TS_TEST_ALL_MODES_SETUP(test_inserts_modifications_and_deletions, setup_kennel),
        TS_TEST_ALL_MODES_SETUP(test_folding_inside_one_transaction, setup_kennel),
        TS_TEST_ALL_MODES_SETUP(test_list_operations_in_order, setup_kennel),
        TS_TEST_ALL_MODES_SETUP(test_clearing_a_class, setup_kennel),
        TS_TEST_ALL_MODES_SETUP(test_trimmed_after_readers, setup_kennel),
        TS_TEST_FILE_MODES_SETUP(test_damaged_and_moved_entries, setup_kennel),
        TS_TEST_FILE_MODES_SETUP(test_killed_writer, setup_kennel),
        TS_TEST_ALL_MODES_SETUP(test_origin_and_version_errors, setup_kennel),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
