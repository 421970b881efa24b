/* test_encryption.c — what an encrypted file reveals, key errors, and
 * tampering detected through the raw LMDB layout:
 *   LMDB, MDB_NOSUBDIR; sub-database "0" holds metadata; classes get table
 *   numbers 1, 2, 3... in the order they are first created; the objects of
 *   table t live in the sub-database named "<2*t>" (indexes in "<2*t+1>"),
 *   keyed by the 8-byte big-endian object key (first object: key 1). */
#define _GNU_SOURCE
#include "test_support.h"

#include <fcntl.h>
#include <lmdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const coffer_property_schema secret_props[] = {
    {.name = "secretKeyProp", .type = COFFER_TYPE_STRING, .flags = COFFER_PROPERTY_PRIMARY_KEY},
    {.name = "hiddenPropertyName", .type = COFFER_TYPE_STRING, .flags = COFFER_PROPERTY_INDEXED},
    {.name = "secretNumber", .type = COFFER_TYPE_INT},
    {.name = "secretBlob", .type = COFFER_TYPE_BINARY, .flags = COFFER_PROPERTY_OPTIONAL},
};
static const coffer_property_schema other_props[] = {
    {.name = "otherValue", .type = COFFER_TYPE_STRING},
};
static const coffer_class_schema secret_schema[] = {
    {.name = "SecretClassName", .properties = secret_props, .property_count = 4},
    {.name = "OtherSecretClass", .properties = other_props, .property_count = 1},
};

static const char *const markers[] = {
    "ZebraMarker123",     "SecretClassName", "hiddenPropertyName", "secretKeyProp", "KeyMarkerQuartz77",
    "BinaryMarkerXyz",    "OtherSecretClass", "otherValue",        "OtherValueMarkerPlum", "secretNumber",
    "LongIndexedMarker_",
};
#define N_MARKERS (sizeof markers / sizeof markers[0])

/* Opens `path` with the secret schema. */
static coffer_status open_path(const char *path, const uint8_t *key, int read_only, coffer_db **out)
{
    return ts_open_path(path, key, read_only, secret_schema, 2, 1, out);
}

static char *long_marker(void)
{
    size_t n = 3000;
    char *s = malloc(n + 1);
    for (size_t i = 0; i < n; i += 18)
        memcpy(s + i, "LongIndexedMarker_", n - i < 18 ? n - i : 18);
    s[n] = 0;
    return s;
}

/* Creates the file `name` in `dir` (its path into `path`, TS_PATH_MAX) with
 * 5 SecretClassName objects (keys 1..5) and one OtherSecretClass. */
static void write_secrets(char *path, const char *dir, const char *name, const uint8_t *key)
{
    ts_join(path, dir, name);
    coffer_db *db = NULL;
    assert_ok(open_path(path, key, 0, &db));
    assert_int_equal(coffer_db_is_encrypted(db), key != NULL);
    coffer_class_id cls = ts_class(db, "SecretClassName");
    coffer_class_id other = ts_class(db, "OtherSecretClass");
    char *lm = long_marker();
    coffer_txn *w = ts_begin(db, COFFER_TXN_WRITE);
    for (int i = 0; i < 5; i++) {
        char pk[64];
        snprintf(pk, sizeof pk, "KeyMarkerQuartz77-%d", i);
        coffer_field f[] = {ts_field(0, ts_str(pk)),
                            ts_field(1, ts_str(i == 4 ? lm : "ZebraMarker123")),
                            ts_field(2, coffer_value_int(1000 + i)),
                            ts_field(3, coffer_value_binary("BinaryMarkerXyz", 15))};
        coffer_object *obj = ts_create(w, cls, f, 4);
        assert_int_equal(coffer_object_key_of(obj), (coffer_object_key)i + 1);
    }
    coffer_field g[] = {ts_field(0, ts_str("OtherValueMarkerPlum"))};
    assert_ok(coffer_object_create(w, other, g, 1, COFFER_UPDATE_ERROR, NULL));
    ts_commit(w);
    coffer_close(db);
    free(lm);
}

static int file_contains(const char *path, const char *needle)
{
    size_t size = 0;
    unsigned char *data = ts_read_file(path, &size);
    if (data == NULL)
        return 0;
    int found = ts_memmem(data, size, needle, strlen(needle)) != NULL;
    free(data);
    return found;
}

/* ------------------------------------------------------------------------ */

TS_ENV_TEST(test_no_plaintext_in_file)
{
    char enc[TS_PATH_MAX], plain[TS_PATH_MAX], lock[TS_PATH_MAX + 8];
    write_secrets(enc, env->dir, "secret.coffer", ts_key);
    write_secrets(plain, env->dir, "plain.coffer", NULL);

    /* the method works: the plain file shows the value */
    assert_true(file_contains(plain, "ZebraMarker123"));

    snprintf(lock, sizeof lock, "%s-lock", enc);
    assert_true(ts_file_exists(lock));
    for (size_t i = 0; i < N_MARKERS; i++) {
        if (file_contains(enc, markers[i]))
            print_error("the encrypted file contains \"%s\"\n", markers[i]);
        assert_false(file_contains(enc, markers[i]));
        assert_false(file_contains(lock, markers[i]));
    }

    /* reopen with the key and read everything back */
    coffer_db *db = NULL;
    assert_ok(open_path(enc, ts_key, 0, &db));
    assert_int_equal(coffer_db_is_encrypted(db), 1);
    coffer_class_id cls = ts_class(db, "SecretClassName");
    coffer_txn *r = ts_begin(db, COFFER_TXN_READ);
    assert_int_equal(ts_count(r, cls), 5);
    char *lm = long_marker();
    for (int i = 0; i < 5; i++) {
        char pk[64];
        snprintf(pk, sizeof pk, "KeyMarkerQuartz77-%d", i);
        coffer_value k = ts_str(pk);
        coffer_object *obj = NULL;
        assert_ok(coffer_object_find(r, cls, &k, &obj));
        assert_string_equal(ts_get_string(obj, 1, NULL), i == 4 ? lm : "ZebraMarker123");
        assert_int_equal(ts_get_int(obj, 2), 1000 + i);
        coffer_value b = coffer_value_binary("BinaryMarkerXyz", 15);
        assert_value(obj, 3, &b);
    }
    coffer_value z = ts_str("ZebraMarker123");
    assert_int_equal(ts_index_count(r, cls, 1, &z), 4);
    coffer_iter *it = NULL;
    coffer_value l = ts_str(lm);
    assert_ok(coffer_index_find(r, cls, 1, &l, &it));
    coffer_object_key *keys = NULL;
    assert_int_equal(ts_collect_keys(it, &keys), 1);
    assert_int_equal(keys[0], 5);
    free(keys);
    coffer_txn_free(r);
    coffer_close(db);
    free(lm);

    /* after more writes and deletes (freed pages), still nothing visible */
    db = NULL;
    assert_ok(open_path(enc, ts_key, 0, &db));
    coffer_txn *w = ts_begin(db, COFFER_TXN_WRITE);
    coffer_object *obj = NULL;
    assert_ok(coffer_object_get(w, cls, 2, &obj));
    coffer_value v = ts_str("ZebraMarker123 updated");
    assert_ok(coffer_object_set_value(obj, 1, &v));
    assert_ok(coffer_object_get(w, cls, 3, &obj));
    assert_ok(coffer_object_delete(obj));
    ts_commit(w);
    coffer_close(db);
    for (size_t i = 0; i < N_MARKERS; i++)
        assert_false(file_contains(enc, markers[i]));
}

TS_ENV_TEST(test_key_errors)
{
    char enc[TS_PATH_MAX], plain[TS_PATH_MAX];
    write_secrets(enc, env->dir, "encryptedFile.coffer", ts_key);
    write_secrets(plain, env->dir, "plainFile.coffer", NULL);
    coffer_db *db = NULL;

    assert_status(open_path(enc, NULL, 0, &db), COFFER_ERR_KEY_REQUIRED);
    assert_error_contains("encryptedFile.coffer");
    assert_null(db);
    assert_status(open_path(enc, ts_other_key, 0, &db), COFFER_ERR_WRONG_KEY);
    assert_error_contains("encryptedFile.coffer");
    assert_status(open_path(plain, ts_key, 0, &db), COFFER_ERR_NOT_ENCRYPTED);
    assert_error_contains("plainFile.coffer");
    /* read-only, the same */
    assert_status(open_path(enc, NULL, 1, &db), COFFER_ERR_KEY_REQUIRED);
    assert_status(open_path(enc, ts_other_key, 1, &db), COFFER_ERR_WRONG_KEY);
    assert_status(open_path(plain, ts_key, 1, &db), COFFER_ERR_NOT_ENCRYPTED);
    /* a key differing in one bit only */
    uint8_t close_key[64];
    memcpy(close_key, ts_key, 64);
    close_key[63] ^= 1;
    assert_status(open_path(enc, close_key, 0, &db), COFFER_ERR_WRONG_KEY);

    /* while the file is open with the right key in this process, the
     * shared storage still checks every open's key */
    coffer_db *good = NULL;
    assert_ok(open_path(enc, ts_key, 0, &good));
    assert_status(open_path(enc, ts_other_key, 0, &db), COFFER_ERR_WRONG_KEY);
    assert_null(db);
    assert_status(open_path(enc, NULL, 0, &db), COFFER_ERR_KEY_REQUIRED);
    coffer_db *plain_db = NULL;
    assert_ok(open_path(plain, NULL, 0, &plain_db));
    assert_status(open_path(plain, ts_key, 0, &db), COFFER_ERR_NOT_ENCRYPTED);
    assert_int_equal(coffer_db_is_encrypted(plain_db), 0);
    coffer_close(plain_db);
    /* the good handle is unaffected */
    assert_int_equal(ts_count_of(good, "SecretClassName"), 5);
    coffer_close(good);

    /* failed attempts left the file intact */
    assert_ok(open_path(enc, ts_key, 0, &db));
    assert_int_equal(ts_count_of(db, "SecretClassName"), 5);
    coffer_close(db);
}

/* ------------------------------------------------------------------------ */
/* Raw LMDB access                                                           */
/* ------------------------------------------------------------------------ */

static void be64(uint64_t v, unsigned char out[8])
{
    for (int i = 7; i >= 0; i--) {
        out[i] = (unsigned char)(v & 0xff);
        v >>= 8;
    }
}

/* The file offset of `addr`, an address inside a file mapping of this
 * process (LMDB's map). LMDB 0.9.24's mdb_env_info() reports me_mapaddr as
 * the meta page's mm_address, which is 0 unless MDB_FIXEDMAP was used, so the
 * map's base address is taken from /proc/self/maps instead (falling back to
 * me_mapaddr when it is set). Returns -1 if not found. */
static long long map_offset(const void *addr, const void *me_mapaddr)
{
    if (me_mapaddr != NULL)
        return (long long)((const char *)addr - (const char *)me_mapaddr);
    FILE *f = fopen("/proc/self/maps", "r");
    if (f == NULL)
        return -1;
    char line[8192];
    long long result = -1;
    uintptr_t a = (uintptr_t)addr;
    while (fgets(line, sizeof line, f)) {
        unsigned long long start, end, off;
        char perms[8];
        if (sscanf(line, "%llx-%llx %7s %llx", &start, &end, perms, &off) != 4)
            continue;
        if (a >= start && a < end) {
            result = (long long)(a - start + off);
            break;
        }
    }
    fclose(f);
    return result;
}

typedef struct raw_loc {
    long long offset;
    size_t size;
} raw_loc;

/* A sub-database of the file opened with raw LMDB, in a transaction. */
typedef struct raw_db {
    MDB_env *env;
    MDB_txn *txn;
    MDB_dbi dbi;
} raw_db;

/* Opens sub-database `dbname` of the file at `path` in a read-only
 * (MDB_RDONLY) or write (0) transaction. Returns 0, or an LMDB error with
 * nothing left open. */
static int raw_open(const char *path, const char *dbname, unsigned int rdonly, raw_db *r)
{
    r->txn = NULL;
    int rc = mdb_env_create(&r->env);
    if (rc)
        return rc;
    mdb_env_set_maxdbs(r->env, 256);
    rc = mdb_env_open(r->env, path, MDB_NOSUBDIR | rdonly, 0644);
    if (rc == 0)
        rc = mdb_txn_begin(r->env, NULL, rdonly, &r->txn);
    if (rc == 0) {
        rc = mdb_dbi_open(r->txn, dbname, 0, &r->dbi);
        if (rc)
            mdb_txn_abort(r->txn);
    }
    if (rc)
        mdb_env_close(r->env);
    return rc;
}

/* Aborts the transaction and closes the environment. */
static void raw_close(raw_db *r)
{
    mdb_txn_abort(r->txn);
    mdb_env_close(r->env);
}

/* Finds the bytes of record `key` in sub-database `dbname`: their offset in
 * the file and size. Optionally copies them. Returns 0 or an LMDB error. */
static int raw_find(const char *path, const char *dbname, uint64_t key, raw_loc *loc, unsigned char **copy)
{
    raw_db r;
    int rc = raw_open(path, dbname, MDB_RDONLY, &r);
    if (rc)
        return rc;
    unsigned char k[8];
    be64(key, k);
    MDB_val kv = {8, k}, val;
    rc = mdb_get(r.txn, r.dbi, &kv, &val);
    if (rc == 0) {
        MDB_envinfo info;
        mdb_env_info(r.env, &info);
        loc->offset = map_offset(val.mv_data, info.me_mapaddr);
        loc->size = val.mv_size;
        if (copy) {
            *copy = malloc(val.mv_size);
            memcpy(*copy, val.mv_data, val.mv_size);
        }
    }
    raw_close(&r);
    return rc;
}

/* Writes `value` as record `key` of sub-database `dbname` with raw LMDB. */
static int raw_put(const char *path, const char *dbname, uint64_t key, const void *value, size_t size)
{
    raw_db r;
    int rc = raw_open(path, dbname, 0, &r);
    if (rc)
        return rc;
    unsigned char k[8];
    be64(key, k);
    MDB_val kv = {8, k}, val = {size, (void *)value};
    rc = mdb_put(r.txn, r.dbi, &kv, &val, 0);
    if (rc == 0)
        rc = mdb_txn_commit(r.txn);
    else
        mdb_txn_abort(r.txn);
    mdb_env_close(r.env);
    return rc;
}

static void flip_byte(const char *path, long long offset)
{
    assert_true(offset >= 0 && offset < ts_file_size(path));
    int fd = open(path, O_RDWR);
    assert_true(fd >= 0);
    unsigned char b;
    assert_int_equal(pread(fd, &b, 1, offset), 1);
    b ^= 0x5a;
    assert_int_equal(pwrite(fd, &b, 1, offset), 1);
    fsync(fd);
    close(fd);
}

/* Reads every property of object `key`: the first non-OK status (of get or
 * of get_value), or COFFER_OK. */
static coffer_status read_object(coffer_txn *txn, coffer_class_id cls, coffer_object_key key, size_t props)
{
    coffer_object *obj = NULL;
    coffer_status st = coffer_object_get(txn, cls, key, &obj);
    if (st != COFFER_OK)
        return st;
    for (coffer_property_id p = 0; p < props; p++) {
        coffer_value v;
        st = coffer_object_get_value(obj, p, &v);
        if (st != COFFER_OK)
            return st;
    }
    coffer_object_release(obj);
    return COFFER_OK;
}

TS_ENV_TEST(test_layout_as_documented)
{
    TS_RECORDS_ONLY();
    char path[TS_PATH_MAX];
    write_secrets(path, env->dir, "layout.coffer", ts_key);
    raw_loc loc;
    for (uint64_t k = 1; k <= 5; k++)
        assert_int_equal(raw_find(path, "2", k, &loc, NULL), 0);
    assert_int_equal(raw_find(path, "2", 6, &loc, NULL), MDB_NOTFOUND);
    assert_int_equal(raw_find(path, "4", 1, &loc, NULL), 0); /* OtherSecretClass, table 2 */
    raw_db meta;
    assert_int_equal(raw_open(path, "0", MDB_RDONLY, &meta), 0);
    raw_close(&meta);
}

TS_ENV_TEST(test_tamper_flip)
{
    TS_RECORDS_ONLY();
    char path[TS_PATH_MAX];
    write_secrets(path, env->dir, "tamper.coffer", ts_key);

    /* flip the first byte of record 2, a middle byte of 3, the last of 4 */
    raw_loc l2, l3, l4;
    assert_int_equal(raw_find(path, "2", 2, &l2, NULL), 0);
    assert_int_equal(raw_find(path, "2", 3, &l3, NULL), 0);
    assert_int_equal(raw_find(path, "2", 4, &l4, NULL), 0);
    print_message("    record 3 at offset %lld, %zu bytes\n", l3.offset, l3.size);
    flip_byte(path, l2.offset);
    flip_byte(path, l3.offset + (long long)l3.size / 2);
    flip_byte(path, l4.offset + (long long)l4.size - 1);

    coffer_db *db = NULL;
    assert_ok(open_path(path, ts_key, 0, &db));
    coffer_class_id cls = ts_class(db, "SecretClassName");
    coffer_txn *r = ts_begin(db, COFFER_TXN_READ);
    for (coffer_object_key k = 2; k <= 4; k++) {
        print_message("    object %llu\n", (unsigned long long)k);
        assert_status(read_object(r, cls, k, 4), COFFER_ERR_INTEGRITY);
    }
    assert_ok(read_object(r, cls, 1, 4));
    assert_ok(read_object(r, cls, 5, 4));
    coffer_object *obj = NULL;
    assert_ok(coffer_object_get(r, cls, 1, &obj));
    assert_string_equal(ts_get_string(obj, 1, NULL), "ZebraMarker123");
    /* a lookup through the primary key of a tampered object fails too */
    coffer_value pk = ts_str("KeyMarkerQuartz77-2");
    coffer_status st = coffer_object_find(r, cls, &pk, &obj);
    if (st == COFFER_OK) {
        coffer_value v;
        st = coffer_object_get_value(obj, 1, &v);
    }
    assert_status(st, COFFER_ERR_INTEGRITY);
    /* iterating reports the damage instead of returning the data */
    coffer_iter *it = NULL;
    assert_ok(coffer_class_iterate(r, cls, &it));
    int ok = 0, integrity = 0;
    for (int guard = 0; guard < 10; guard++) {
        coffer_object *o = NULL;
        st = coffer_iter_next(it, &o);
        if (st == COFFER_DONE)
            break;
        if (st == COFFER_ERR_INTEGRITY) {
            integrity++;
            continue;
        }
        assert_ok(st);
        coffer_value v;
        st = coffer_object_get_value(o, 1, &v);
        if (st == COFFER_ERR_INTEGRITY)
            integrity++;
        else {
            assert_ok(st);
            ok++;
        }
    }
    coffer_iter_free(it);
    assert_true(integrity >= 1);
    assert_true(ok <= 2);
    coffer_txn_free(r);
    coffer_close(db);
}

/* A record damaged under an open handle: the handle reads its record again
 * after a write elsewhere in the transaction, and a batch read then reports
 * the damage and returns nothing. */
TS_ENV_TEST(test_tamper_under_batch_read)
{
    TS_RECORDS_ONLY();
    char path[TS_PATH_MAX];
    write_secrets(path, env->dir, "batch.coffer", ts_key);
    raw_loc l3;
    assert_int_equal(raw_find(path, "2", 3, &l3, NULL), 0);

    coffer_db *db = NULL;
    assert_ok(open_path(path, ts_key, 0, &db));
    coffer_class_id cls = ts_class(db, "SecretClassName");
    coffer_class_id other = ts_class(db, "OtherSecretClass");
    coffer_txn *w = ts_begin(db, COFFER_TXN_WRITE);
    coffer_object *obj = NULL;
    assert_ok(coffer_object_get(w, cls, 3, &obj));
    const coffer_property_id props[] = {0, 1, 2, 3};
    coffer_value out[4];
    assert_ok(coffer_object_get_values(obj, props, 4, out));
    assert_int_equal(out[2].u.integer, 1002);

    coffer_field g[] = {ts_field(0, ts_str("written elsewhere"))};
    assert_ok(coffer_object_create(w, other, g, 1, COFFER_UPDATE_ERROR, NULL));
    flip_byte(path, l3.offset + (long long)l3.size / 2);
    assert_status(coffer_object_get_values(obj, props, 4, out), COFFER_ERR_INTEGRITY);
    for (int i = 0; i < 4; i++)
        assert_int_equal(out[i].type, COFFER_TYPE_NULL);
    coffer_txn_free(w);
    coffer_close(db);
}

TS_ENV_TEST(test_tamper_moved_record)
{
    TS_RECORDS_ONLY();
    char path[TS_PATH_MAX];
    write_secrets(path, env->dir, "moved.coffer", ts_key);
    raw_loc l1;
    unsigned char *rec1 = NULL;
    assert_int_equal(raw_find(path, "2", 1, &l1, &rec1), 0);
    /* record 1's value onto key 2 of the same table */
    assert_int_equal(raw_put(path, "2", 2, rec1, l1.size), 0);
    /* and onto key 1 of the other class's table */
    assert_int_equal(raw_put(path, "4", 1, rec1, l1.size), 0);
    free(rec1);

    coffer_db *db = NULL;
    assert_ok(open_path(path, ts_key, 0, &db));
    coffer_class_id cls = ts_class(db, "SecretClassName");
    coffer_class_id other = ts_class(db, "OtherSecretClass");
    coffer_txn *r = ts_begin(db, COFFER_TXN_READ);
    assert_status(read_object(r, cls, 2, 4), COFFER_ERR_INTEGRITY);
    assert_status(read_object(r, other, 1, 1), COFFER_ERR_INTEGRITY);
    assert_ok(read_object(r, cls, 1, 4));
    assert_ok(read_object(r, cls, 3, 4));
    coffer_txn_free(r);
    coffer_close(db);
}

/* A record copied from another encrypted file with the same key (same
 * table and key) does not open either: values are bound to their file. */
TS_ENV_TEST(test_tamper_record_from_other_file)
{
    TS_RECORDS_ONLY();
    char a[TS_PATH_MAX], b[TS_PATH_MAX];
    write_secrets(a, env->dir, "fileA.coffer", ts_key);
    write_secrets(b, env->dir, "fileB.coffer", ts_key);
    raw_loc l;
    unsigned char *rec = NULL;
    assert_int_equal(raw_find(a, "2", 3, &l, &rec), 0);
    assert_int_equal(raw_put(b, "2", 3, rec, l.size), 0);
    free(rec);
    coffer_db *db = NULL;
    assert_ok(open_path(b, ts_key, 0, &db));
    coffer_txn *r = ts_begin(db, COFFER_TXN_READ);
    assert_status(read_object(r, ts_class(db, "SecretClassName"), 3, 4), COFFER_ERR_INTEGRITY);
    coffer_txn_free(r);
    coffer_close(db);
}

/* ------------------------------------------------------------------------ */
/* Plain files: damage never crashes                                         */
/* ------------------------------------------------------------------------ */

typedef struct probe {
    const char *path;
} probe;

static int read_everything_child(void *arg)
{
    probe *p = arg;
    coffer_db *db = NULL;
    coffer_status st = open_path(p->path, NULL, 0, &db);
    if (st != COFFER_OK)
        return (int)st;
    coffer_txn *r = NULL;
    if (coffer_txn_begin(db, COFFER_TXN_READ, &r) != COFFER_OK)
        return 100;
    coffer_class_id cls = 0;
    if (coffer_db_find_class(db, "SecretClassName", &cls) != COFFER_OK)
        return 101;
    coffer_status worst = COFFER_OK;
    for (coffer_object_key k = 1; k <= 5; k++) {
        st = read_object(r, cls, k, 4);
        if (st != COFFER_OK && worst == COFFER_OK)
            worst = st;
    }
    coffer_iter *it = NULL;
    if (coffer_class_iterate(r, cls, &it) == COFFER_OK) {
        coffer_object *o = NULL;
        for (int guard = 0; guard < 20 && coffer_iter_next(it, &o) == COFFER_OK; guard++) {
            coffer_value v;
            coffer_object_get_value(o, 1, &v);
        }
        coffer_iter_free(it);
    }
    coffer_value z = ts_str("ZebraMarker123");
    if (coffer_index_find(r, cls, 1, &z, &it) == COFFER_OK) {
        coffer_object *o = NULL;
        for (int guard = 0; guard < 20 && coffer_iter_next(it, &o) == COFFER_OK; guard++) {
            coffer_value v;
            coffer_object_get_value(o, 0, &v);
        }
        coffer_iter_free(it);
    }
    coffer_txn_free(r);
    coffer_close(db);
    return (int)worst;
}

/* Flips the byte at `off`, reads everything in a child (which must not
 * crash), restores the byte and counts the child's status in statuses[32]. */
static void probe_flipped_byte(const char *path, long long off, const char *what, int statuses[32])
{
    flip_byte(path, off);
    probe p = {path};
    int st = ts_run_in_child(read_everything_child, &p, what);
    flip_byte(path, off); /* restore */
    statuses[st < 32 ? st : 31]++;
}

static void print_statuses(const int statuses[32])
{
    for (int s = 0; s < 32; s++)
        if (statuses[s])
            print_message("    status %d: %d times\n", s, statuses[s]);
}

TS_ENV_TEST(test_plain_flip_never_crashes)
{
    TS_RECORDS_ONLY();
    char path[TS_PATH_MAX];
    write_secrets(path, env->dir, "plainDamage.coffer", NULL);
    raw_loc l;
    assert_int_equal(raw_find(path, "2", 3, &l, NULL), 0);
    print_message("    plain record 3: %zu bytes at %lld\n", l.size, l.offset);
    size_t positions = l.size < 400 ? l.size : 400;
    int statuses[32] = {0};
    for (size_t i = 0; i < positions; i++) {
        long long off = l.offset + (long long)(l.size <= 400 ? i : i * l.size / 400);
        char what[128];
        snprintf(what, sizeof what, "reading after flipping byte %lld of record 3", off - l.offset);
        probe_flipped_byte(path, off, what, statuses);
    }
    print_statuses(statuses);
}

/* Damage to the metadata records (schema) of a plain file never crashes. */
TS_ENV_TEST(test_plain_metadata_damage_never_crashes)
{
    char path[TS_PATH_MAX];
    write_secrets(path, env->dir, "plainMeta.coffer", NULL);
    /* list the records of sub-database "0" */
    raw_db meta;
    assert_int_equal(raw_open(path, "0", MDB_RDONLY, &meta), 0);
    MDB_cursor *cur = NULL;
    assert_int_equal(mdb_cursor_open(meta.txn, meta.dbi, &cur), 0);
    MDB_envinfo info;
    mdb_env_info(meta.env, &info);
    enum { MAXREC = 32 };
    long long offs[MAXREC];
    size_t sizes[MAXREC];
    int nrec = 0;
    MDB_val k, v;
    int rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST);
    while (rc == 0 && nrec < MAXREC) {
        offs[nrec] = map_offset(v.mv_data, info.me_mapaddr);
        assert_true(offs[nrec] >= 0);
        sizes[nrec] = v.mv_size;
        nrec++;
        rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT);
    }
    mdb_cursor_close(cur);
    raw_close(&meta);
    assert_true(nrec > 0);
    int probes = 0;
    int statuses[32] = {0};
    for (int r = 0; r < nrec; r++) {
        size_t step = sizes[r] > 64 ? sizes[r] / 64 : 1;
        for (size_t i = 0; i < sizes[r]; i += step) {
            char what[128];
            snprintf(what, sizeof what, "reading after flipping byte %zu of metadata record %d", i, r);
            probe_flipped_byte(path, offs[r] + (long long)i, what, statuses);
            probes++;
        }
    }
    print_message("    %d probes over %d metadata records\n", probes, nrec);
    print_statuses(statuses);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TS_TEST_EMPTY(test_no_plaintext_in_file),
        TS_TEST_EMPTY(test_key_errors),
        TS_TEST_EMPTY(test_layout_as_documented),
        TS_TEST_EMPTY(test_tamper_flip),
        TS_TEST_EMPTY(test_tamper_under_batch_read),
        TS_TEST_EMPTY(test_tamper_moved_record),
        TS_TEST_EMPTY(test_tamper_record_from_other_file),
        TS_TEST_EMPTY(test_plain_flip_never_crashes),
        TS_TEST_EMPTY(test_plain_metadata_damage_never_crashes),
    };
    return cmocka_run_group_tests_name("encryption", tests, NULL, NULL);
}
