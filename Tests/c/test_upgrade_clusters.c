/*
 * test_upgrade_clusters.c — a file of format 4 (one record per object)
 * upgraded to format 5 (clusters) by the first read-write open of a handle
 * that wants format 5. The files are copies of the committed fixtures
 * Tests/fixtures/format4/ (plain and encrypted, written by a library of
 * format 4; make_fixtures.py describes their contents). After the upgrade
 * every object, index, list, set, map, link, backlink and the change log
 * read as before: the objects through the API (a dump of every value,
 * compared with the one a read-only open made of the file as it was) and
 * every sub-database but the object tables byte for byte. A read-only open
 * does not upgrade; an upgrade that fails half-way (a damaged record, the
 * file's size limit) or is killed with SIGKILL leaves the file as it was.
 * The fixtures of Tests/fixtures/format5/ (the same contents, in clusters of
 * version 2, written before int columns were narrowed) read as the
 * format-4 ones do, and a write rewrites their clusters in version 3.
 */
#define _GNU_SOURCE
#define COFFER_EXPERIMENTAL_API
#include "test_support.h"

#include <inttypes.h>
#include <lmdb.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define ITEMS 300
#define LIVE_ITEMS (ITEMS - ITEMS / 10)
#define BOXES 5

static uint8_t fixture_key[COFFER_ENCRYPTION_KEY_SIZE];

static const uint8_t *key_of(const ts_env *env) { return env->mode == TS_ENCRYPTED ? fixture_key : NULL; }

/* ---- text buffers ----------------------------------------------------------- */

typedef struct text {
    char *data;
    size_t len, cap;
} text;

static void add(text *t, const void *bytes, size_t n)
{
    if (t->len + n + 1 > t->cap) {
        size_t cap = t->cap ? t->cap : 4096;
        while (t->len + n + 1 > cap)
            cap *= 2;
        t->data = realloc(t->data, cap);
        assert_non_null(t->data);
        t->cap = cap;
    }
    memcpy(t->data + t->len, bytes, n);
    t->len += n;
    t->data[t->len] = 0;
}

static void addf(text *t, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    assert_true(n >= 0 && (size_t)n < sizeof buf);
    add(t, buf, (size_t)n);
}

static void add_hex(text *t, const void *bytes, size_t n)
{
    for (size_t i = 0; i < n; i++)
        addf(t, "%02x", ((const uint8_t *)bytes)[i]);
}

static void text_free(text *t)
{
    free(t->data);
    *t = (text){0};
}

/* ---- the objects, through the API --------------------------------------------- */

static void dump_value(text *t, const coffer_value *v)
{
    char buf[256];
    switch (v->type) {
    case COFFER_TYPE_STRING:
        addf(t, "string(%zu) ", v->u.string.size);
        add(t, v->u.string.data, v->u.string.size);
        break;
    case COFFER_TYPE_BINARY:
        addf(t, "binary(%zu) ", v->u.binary.size);
        add_hex(t, v->u.binary.data, v->u.binary.size);
        break;
    case COFFER_TYPE_LINK: addf(t, "link %u:%" PRIu64, v->u.link.class_id, v->u.link.key); break;
    default: addf(t, "%s", ts_value_describe(v, buf, sizeof buf));
    }
    add(t, ";", 1);
}

/* Every value of property `p` of `o`, collections element by element and
 * linking objects by their keys. */
static void dump_property(text *t, coffer_object *o, coffer_property_id p, const coffer_property_schema *ps)
{
    addf(t, " %s=", ps->name);
    coffer_value v;
    uint64_t n;
    if (ps->type == COFFER_TYPE_LINKING_OBJECTS) {
        coffer_iter *it;
        assert_ok(coffer_object_backlinks(o, p, &it));
        coffer_object *from;
        while (coffer_iter_next(it, &from) == COFFER_OK) {
            addf(t, "<-%" PRIu64 ";", coffer_object_key_of(from));
            coffer_object_release(from);
        }
        coffer_iter_free(it);
    } else if (ps->collection == COFFER_COLLECTION_LIST) {
        coffer_list *l;
        assert_ok(coffer_object_get_list(o, p, &l));
        assert_ok(coffer_list_count(l, &n));
        for (uint64_t i = 0; i < n; i++) {
            assert_ok(coffer_list_get(l, i, &v));
            dump_value(t, &v);
        }
        coffer_list_release(l);
    } else if (ps->collection == COFFER_COLLECTION_SET) {
        coffer_set *s;
        assert_ok(coffer_object_get_set(o, p, &s));
        assert_ok(coffer_set_count(s, &n));
        for (uint64_t i = 0; i < n; i++) {
            assert_ok(coffer_set_get(s, i, &v));
            dump_value(t, &v);
        }
        coffer_set_release(s);
    } else if (ps->collection == COFFER_COLLECTION_MAP) {
        coffer_map *m;
        assert_ok(coffer_object_get_map(o, p, &m));
        assert_ok(coffer_map_count(m, &n));
        for (uint64_t i = 0; i < n; i++) {
            coffer_bytes k;
            assert_ok(coffer_map_get_entry(m, i, &k, &v));
            add(t, k.data, k.size);
            add(t, ":", 1);
            dump_value(t, &v);
        }
        coffer_map_release(m);
    } else {
        assert_ok(coffer_object_get_value(o, p, &v));
        dump_value(t, &v);
    }
}

/* What the indexes give for object `o`: its primary key's and its indexed
 * properties' lookups (each must find it). */
static void dump_indexes(text *t, coffer_txn *txn, coffer_class_id cls, coffer_object *o, const coffer_class_schema *cs)
{
    for (size_t p = 0; p < cs->property_count; p++) {
        const coffer_property_schema *ps = &cs->properties[p];
        if (!(ps->flags & (COFFER_PROPERTY_INDEXED | COFFER_PROPERTY_PRIMARY_KEY)))
            continue;
        coffer_value v;
        assert_ok(coffer_object_get_value(o, (coffer_property_id)p, &v));
        coffer_iter *it;
        assert_ok(coffer_index_find(txn, cls, (coffer_property_id)p, &v, &it));
        addf(t, " index %s:", ps->name);
        coffer_object *hit;
        int found = 0;
        while (coffer_iter_next(it, &hit) == COFFER_OK) {
            addf(t, "%" PRIu64 ";", coffer_object_key_of(hit));
            found |= coffer_object_key_of(hit) == coffer_object_key_of(o);
            coffer_object_release(hit);
        }
        coffer_iter_free(it);
        assert_true(found);
        if (ps->flags & COFFER_PROPERTY_PRIMARY_KEY) {
            coffer_object *byk;
            assert_ok(coffer_object_find(txn, cls, &v, &byk));
            assert_int_equal(coffer_object_key_of(byk), coffer_object_key_of(o));
            coffer_object_release(byk);
        }
    }
}

/* Every object of the fixture's classes, in key order, with every value. */
static void dump_objects(coffer_db *db, text *t)
{
    static const char *const classes[] = {"Item", "Box"};
    coffer_txn *txn = ts_begin(db, COFFER_TXN_READ);
    for (size_t c = 0; c < 2; c++) {
        coffer_class_id cls = ts_class(db, classes[c]);
        const coffer_class_schema *cs = coffer_db_class_schema(db, cls);
        uint64_t count;
        assert_ok(coffer_class_count(txn, cls, &count));
        addf(t, "class %s: %" PRIu64 " objects\n", classes[c], count);
        coffer_iter *it;
        assert_ok(coffer_class_iterate(txn, cls, &it));
        coffer_object *o;
        uint64_t seen = 0;
        while (coffer_iter_next(it, &o) == COFFER_OK) {
            addf(t, "%" PRIu64 ":", coffer_object_key_of(o));
            for (size_t p = 0; p < cs->property_count; p++)
                dump_property(t, o, (coffer_property_id)p, &cs->properties[p]);
            dump_indexes(t, txn, cls, o, cs);
            add(t, "\n", 1);
            coffer_object_release(o);
            seen++;
        }
        coffer_iter_free(it);
        assert_int_equal(seen, count);
    }
    coffer_txn_free(txn);
}

/* A few of the values make_fixtures.py wrote, recomputed. */
static void check_contents(coffer_db *db)
{
    coffer_txn *txn = ts_begin(db, COFFER_TXN_READ);
    coffer_class_id item = ts_class(db, "Item"), box = ts_class(db, "Box");
    assert_int_equal(ts_count(txn, item), LIVE_ITEMS);
    assert_int_equal(ts_count(txn, box), BOXES);
    coffer_property_id name = ts_prop(db, item, "name"), data = ts_prop(db, item, "data"),
                       boxes = ts_prop(db, item, "boxes");
    for (int64_t i = 0; i < ITEMS; i++) {
        coffer_object *o = NULL;
        coffer_status st = coffer_object_get(txn, item, (coffer_object_key)i + 1, &o);
        if (i % 10 == 9) {
            assert_int_equal(st, COFFER_ERR_NOT_FOUND);
            continue;
        }
        assert_ok(st);
        char want[64];
        snprintf(want, sizeof want, i % 50 == 0 ? "renamed %" PRId64 : "item %" PRId64, i);
        coffer_value want_name = ts_str(want);
        assert_value(o, name, &want_name);
        coffer_value v;
        assert_ok(coffer_object_get_value(o, data, &v));
        assert_int_equal(v.u.binary.size, i % 97 == 5 ? 1500 : (size_t)(i % 60));
        for (size_t j = 0; j < v.u.binary.size; j++)
            assert_int_equal(((const uint8_t *)v.u.binary.data)[j], (uint8_t)((i * 7 + (int64_t)j) % 256));
        coffer_iter *it;
        assert_ok(coffer_object_backlinks(o, boxes, &it));
        uint64_t n = 0;
        coffer_object *from;
        while (coffer_iter_next(it, &from) == COFFER_OK) {
            n++;
            coffer_object_release(from);
        }
        coffer_iter_free(it);
        assert_int_equal(n, i < 100 ? 1 : 0);
        coffer_object_release(o);
    }
    coffer_txn_free(txn);
}

/* ---- the file, through LMDB ---------------------------------------------------- */

/* Object tables are sub-databases 2t (t >= 1): even numbers from 2. */
static int is_object_table(const char *name, size_t len)
{
    if (len == 0 || len > 9)
        return 0;
    unsigned long n = 0;
    for (size_t i = 0; i < len; i++) {
        if (name[i] < '0' || name[i] > '9')
            return 0;
        n = n * 10 + (unsigned long)(name[i] - '0');
    }
    return n >= 2 && n % 2 == 0;
}

/* Index sub-databases are 2t + 1 (t >= 1): odd numbers from 3. */
static int is_index_table(const char *name, size_t len)
{
    if (len == 0 || len > 9 || strspn(name, "0123456789") != len)
        return 0;
    unsigned long n = strtoul(name, NULL, 10);
    return n >= 3 && n % 2 == 1;
}

/* Metadata that differs between the formats: the header (its format) and
 * the object counts format 5 keeps ("n" ‖ table, 5 bytes). */
static int is_layout_meta(const MDB_val *k)
{
    return (k->mv_size == 6 && memcmp(k->mv_data, "header", 6) == 0) ||
           (k->mv_size == 5 && ((const char *)k->mv_data)[0] == 'n');
}

/* Every key and value of every sub-database of the closed file, in order;
 * with `but_layout`, the object tables and the layout metadata left out,
 * and with `but_layout` 2 the index sub-databases too (format 6 builds
 * them anew).
 * *log_entries counts the change log's entries ("L" ‖ version). */
static void dump_raw(const char *path, int but_layout, text *t, size_t *log_entries)
{
    MDB_env *env;
    MDB_txn *txn;
    MDB_dbi main_dbi;
    assert_int_equal(mdb_env_create(&env), 0);
    assert_int_equal(mdb_env_set_maxdbs(env, 64), 0);
    assert_int_equal(mdb_env_open(env, path, MDB_NOSUBDIR | MDB_RDONLY | MDB_NOLOCK, 0644), 0);
    assert_int_equal(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn), 0);
    assert_int_equal(mdb_dbi_open(txn, NULL, 0, &main_dbi), 0);
    MDB_cursor *names;
    assert_int_equal(mdb_cursor_open(txn, main_dbi, &names), 0);
    MDB_val nk, nv;
    if (log_entries)
        *log_entries = 0;
    for (int rc = mdb_cursor_get(names, &nk, &nv, MDB_FIRST); rc == 0; rc = mdb_cursor_get(names, &nk, &nv, MDB_NEXT)) {
        char name[64];
        assert_true(nk.mv_size < sizeof name);
        memcpy(name, nk.mv_data, nk.mv_size);
        name[nk.mv_size] = 0;
        if ((but_layout && is_object_table(name, nk.mv_size)) || (but_layout == 2 && is_index_table(name, nk.mv_size)))
            continue;
        addf(t, "[%s]\n", name);
        MDB_dbi dbi;
        assert_int_equal(mdb_dbi_open(txn, name, 0, &dbi), 0);
        MDB_cursor *cur;
        assert_int_equal(mdb_cursor_open(txn, dbi, &cur), 0);
        MDB_val k, v;
        for (int r = mdb_cursor_get(cur, &k, &v, MDB_FIRST); r == 0; r = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
            int meta = strcmp(name, "0") == 0;
            if (meta && but_layout && is_layout_meta(&k))
                continue;
            if (meta && log_entries && k.mv_size == 9 && ((const char *)k.mv_data)[0] == 'L')
                (*log_entries)++;
            add_hex(t, k.mv_data, k.mv_size);
            add(t, "=", 1);
            add_hex(t, v.mv_data, v.mv_size);
            add(t, "\n", 1);
        }
        mdb_cursor_close(cur);
    }
    mdb_cursor_close(names);
    mdb_txn_abort(txn);
    mdb_env_close(env);
}

static void assert_same_text(const text *a, const text *b)
{
    if (a->len != b->len || memcmp(a->data, b->data, a->len) != 0) {
        size_t i = 0;
        while (i < a->len && i < b->len && a->data[i] == b->data[i])
            i++;
        size_t from = i > 200 ? i - 200 : 0;
        print_error("differs at byte %zu:\n  before: %.400s\n  after:  %.400s\n", i, a->data + from, b->data + from);
        fail();
    }
}

/* ---- fixtures ------------------------------------------------------------------ */

static void copy_fixture_from(const ts_env *env, const char *folder, const char *as, char *out)
{
    char from[TS_PATH_MAX];
    const char *name = env->mode == TS_ENCRYPTED ? "encrypted.coffer" : "plain.coffer";
    assert_true((size_t)snprintf(from, sizeof from, "%s/%s/%s", COFFER_FIXTURES_DIR, folder, name) < sizeof from);
    ts_join(out, env->dir, as);
    assert_int_equal(ts_copy_file(from, out), 0);
}

static void copy_fixture(const ts_env *env, const char *as, char *out)
{
    copy_fixture_from(env, "format4", as, out);
}

static coffer_status open_file(const ts_env *env, const char *path, int read_only, uint64_t max_size, coffer_db **out)
{
    coffer_config *config = ts_config_at(path);
    if (key_of(env))
        assert_ok(coffer_config_set_encryption_key(config, key_of(env), COFFER_ENCRYPTION_KEY_SIZE));
    assert_ok(coffer_config_set_read_only(config, read_only));
    if (max_size)
        assert_ok(coffer_config_set_max_file_size(config, max_size));
    coffer_status st = coffer_open(config, out);
    coffer_config_free(config);
    return st;
}

/* The objects of the file as a read-only open reads them. */
static void dump_read_only(const ts_env *env, const char *path, text *t)
{
    coffer_db *db = NULL;
    assert_ok(open_file(env, path, 1, 0, &db));
    dump_objects(db, t);
    coffer_close(db);
}

static void assert_verifies(const ts_env *env, const char *path)
{
    coffer_config *config = ts_config_at(path);
    if (key_of(env))
        assert_ok(coffer_config_set_encryption_key(config, key_of(env), COFFER_ENCRYPTION_KEY_SIZE));
    coffer_verify_report *r = NULL;
    assert_ok(coffer_verify(config, &r));
    assert_int_equal(coffer_verify_report_count(r), 0);
    coffer_verify_report_free(r);
    coffer_config_free(config);
}

/* What the fixture holds before its upgrade: its objects (read-only), its
 * sub-databases but the layout's, and all of its bytes as LMDB sees them. */
typedef struct before {
    text objects, kept, kept_but_indexes, whole;
    size_t log_entries;
} before;

static void read_before(const ts_env *env, const char *path, before *b)
{
    *b = (before){0};
    dump_read_only(env, path, &b->objects);
    dump_raw(path, 1, &b->kept, &b->log_entries);
    dump_raw(path, 2, &b->kept_but_indexes, NULL);
    dump_raw(path, 0, &b->whole, NULL);
    assert_true(b->log_entries > 0); /* the change log is compared too */
}

static void before_free(before *b)
{
    text_free(&b->objects);
    text_free(&b->kept);
    text_free(&b->kept_but_indexes);
    text_free(&b->whole);
}

/* The file is exactly as the fixture was: format 4, every byte LMDB holds. */
static void assert_as_before(const char *path, const before *b)
{
    assert_int_equal(ts_raw_format(path), 4);
    text whole = {0};
    dump_raw(path, 0, &whole, NULL);
    assert_same_text(&b->whole, &whole);
    text_free(&whole);
}

/* The format a read-write open brings the fixture to: 5, or 6 for the
 * encrypted one (its indexes then sealed trees). */
static uint32_t upgraded_format(const ts_env *env) { return env->mode == TS_ENCRYPTED ? 6 : 5; }

/* The file is the fixture upgraded to `format` (5, or 6 when encrypted):
 * the same objects, indexes (found through the API), collections,
 * backlinks and change log, and nothing damaged. */
static void assert_upgraded_to(const ts_env *env, const char *path, const before *b, uint32_t format)
{
    assert_int_equal(ts_raw_format(path), format);
    text kept = {0}, objects = {0};
    size_t log_entries;
    dump_raw(path, format == 6 ? 2 : 1, &kept, &log_entries);
    assert_same_text(format == 6 ? &b->kept_but_indexes : &b->kept, &kept);
    assert_int_equal(log_entries, b->log_entries);
    dump_read_only(env, path, &objects);
    assert_same_text(&b->objects, &objects);
    text_free(&kept);
    text_free(&objects);
    assert_verifies(env, path);
}

static void assert_upgraded(const ts_env *env, const char *path, const before *b)
{
    assert_upgraded_to(env, path, b, upgraded_format(env));
}

/* After a failed or killed upgrade: the file is as the fixture was, or (an
 * encrypted one) of format 5 when only the sealing of its indexes did not
 * commit, which reads as the fixture did. */
static void assert_as_before_or_clustered(const ts_env *env, const char *path, const before *b)
{
    if (ts_raw_format(path) == 4) {
        assert_as_before(path, b);
        return;
    }
    assert_int_equal(env->mode, TS_ENCRYPTED);
    assert_upgraded_to(env, path, b, 5);
}

/* ---- tests --------------------------------------------------------------------- */

TS_ENV_TEST(test_upgrade_keeps_everything)
{
    char path[TS_PATH_MAX];
    copy_fixture(env, "upgraded.coffer", path);
    assert_int_equal(ts_raw_format(path), 4);
    before b;
    read_before(env, path, &b);

    /* Read-only, it is read as it is and stays format 4. */
    coffer_db *db = NULL;
    assert_ok(open_file(env, path, 1, 0, &db));
    check_contents(db);
    coffer_close(db);
    assert_as_before(path, &b);

    /* Read-write, it is upgraded before anything else. */
    assert_ok(open_file(env, path, 0, 0, &db));
    check_contents(db);
    coffer_close(db);
    assert_upgraded(env, path, &b);

    /* It goes on from there: writes take new keys above the old ones, and
     * the upgraded file reads them back after a reopen. */
    assert_ok(open_file(env, path, 0, 0, &db));
    coffer_class_id item = ts_class(db, "Item");
    coffer_txn *w = ts_begin(db, COFFER_TXN_WRITE);
    coffer_field f[] = {ts_field(ts_prop(db, item, "id"), coffer_value_int(ITEMS)),
                        ts_field(ts_prop(db, item, "name"), ts_str("added"))};
    coffer_object *o;
    assert_ok(coffer_object_create(w, item, f, 2, COFFER_UPDATE_ERROR, &o));
    assert_int_equal(coffer_object_key_of(o), ITEMS + 1);
    coffer_object_release(o);
    assert_ok(coffer_object_get(w, item, 2, &o));
    assert_ok(coffer_object_delete(o));
    ts_commit(w);
    coffer_close(db);
    assert_int_equal(ts_raw_format(path), upgraded_format(env));
    assert_ok(open_file(env, path, 1, 0, &db));
    coffer_txn *txn = ts_begin(db, COFFER_TXN_READ);
    assert_int_equal(ts_count(txn, item), LIVE_ITEMS);
    coffer_value added = ts_str("added");
    assert_ok(coffer_object_find(txn, item, &(coffer_value){.type = COFFER_TYPE_INT, .u.integer = ITEMS}, &o));
    assert_value(o, ts_prop(db, item, "name"), &added);
    coffer_txn_free(txn);
    coffer_close(db);
    assert_verifies(env, path);
    before_free(&b);
}

/* A handle that asks for format 4 keeps the file in format 4. */
TS_ENV_TEST(test_records_handle_does_not_upgrade)
{
    char path[TS_PATH_MAX];
    copy_fixture(env, "kept.coffer", path);
    before b;
    read_before(env, path, &b);
    coffer_config *config = ts_config_at(path);
    if (key_of(env))
        assert_ok(coffer_config_set_encryption_key(config, key_of(env), COFFER_ENCRYPTION_KEY_SIZE));
    assert_ok(coffer_config_set_storage_format(config, COFFER_STORAGE_FORMAT_RECORDS));
    coffer_db *db = NULL;
    assert_ok(coffer_open(config, &db));
    check_contents(db);
    coffer_close(db);
    coffer_config_free(config);
    assert_as_before(path, &b);
    before_free(&b);
}

/* Moves a bit of the record of object `key` of table 1 (sub-database "2"). */
static void damage_record(const char *path, coffer_object_key key)
{
    ts_raw w;
    MDB_dbi dbi = ts_raw_open(&w, path, "2");
    uint8_t kb[8];
    for (int i = 0; i < 8; i++)
        kb[i] = (uint8_t)(key >> (56 - 8 * i));
    MDB_val k = {8, kb}, v;
    assert_int_equal(mdb_get(w.txn, dbi, &k, &v), 0);
    uint8_t *copy = malloc(v.mv_size);
    assert_non_null(copy);
    memcpy(copy, v.mv_data, v.mv_size);
    copy[v.mv_size / 2] ^= 0x10;
    v.mv_data = copy;
    assert_int_equal(mdb_put(w.txn, dbi, &k, &v, 0), 0);
    free(copy);
    ts_raw_end(&w, 1);
}

/* A damaged record half-way through the objects stops the upgrade, names
 * the object and leaves the file as it was. */
TS_ENV_TEST(test_damaged_record_stops_the_upgrade)
{
    char path[TS_PATH_MAX];
    copy_fixture(env, "damaged.coffer", path);
    damage_record(path, 201);
    before b = {0};
    dump_raw(path, 0, &b.whole, NULL);
    coffer_db *db = NULL;
    assert_status(open_file(env, path, 0, 0, &db), key_of(env) ? COFFER_ERR_INTEGRITY : COFFER_ERR_CORRUPTED);
    assert_error_contains("upgrading");
    assert_error_contains("from file format 4 to 5");
    assert_error_contains("object 201 of class 'Item'");
    assert_null(db);
    assert_as_before(path, &b);
    before_free(&b);
}

/* A file size limit that the upgrade's pages reach fails it with
 * COFFER_ERR_FILE_TOO_LARGE, at its first object or further on; the file is
 * as it was each time, and once the limit leaves room it upgrades. */
TS_ENV_TEST(test_size_limit_stops_the_upgrade)
{
    char path[TS_PATH_MAX];
    copy_fixture(env, "limited.coffer", path);
    before b;
    read_before(env, path, &b);
    coffer_db *db = NULL;
    long long size = ts_file_size(path);
    assert_true(size > 0);
    int failures = 0, past_the_first = 0;
    coffer_status st;
    for (uint64_t limit = (uint64_t)size + 8192; (st = open_file(env, path, 0, limit, &db)) != COFFER_OK; limit += 16384) {
        assert_status(st, COFFER_ERR_FILE_TOO_LARGE);
        assert_error_contains(ts_raw_format(path) == 4 ? "from file format 4 to 5" : "from file format 5 to 6");
        past_the_first |= strstr(coffer_last_error(), "object 1 of class") == NULL;
        assert_null(db);
        assert_as_before_or_clustered(env, path, &b);
        failures++;
    }
    coffer_close(db);
    assert_true(failures > 1);
    assert_true(past_the_first);
    assert_upgraded(env, path, &b);
    before_free(&b);
}

/* The child: reports 1 as it starts the read-write open (the upgrade),
 * 2 once the open returned, then waits to be killed. */
static void upgrading_child(const ts_env *env, const char *path, int report_fd)
{
    int32_t step = 1;
    if (write(report_fd, &step, sizeof step) != (ssize_t)sizeof step)
        _exit(3);
    coffer_db *db = NULL;
    if (open_file(env, path, 0, 0, &db) != COFFER_OK)
        _exit(2);
    step = 2;
    if (write(report_fd, &step, sizeof step) != (ssize_t)sizeof step)
        _exit(3);
    for (;;)
        pause();
}

/* Kills the upgrading child with SIGKILL at moments spread over an upgrade's
 * length: whenever it dies, the file is either as it was or upgraded whole,
 * and upgraded when the child had reported its open done. */
TS_ENV_TEST(test_killed_upgrade_leaves_the_file_whole)
{
    char path[TS_PATH_MAX];
    copy_fixture(env, "timed.coffer", path);
    before b;
    read_before(env, path, &b);
    /* How long one upgrade takes here, to spread the kills over it. */
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    coffer_db *db = NULL;
    assert_ok(open_file(env, path, 0, 0, &db));
    coffer_close(db);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    long span_us = (t1.tv_sec - t0.tv_sec) * 1000000L + (t1.tv_nsec - t0.tv_nsec) / 1000L;
    int rounds = 12, upgraded = 0, kept = 0;
    for (int round = 0; round < rounds; round++) {
        char name[64];
        snprintf(name, sizeof name, "killed-%d.coffer", round);
        copy_fixture(env, name, path);
        ts_fork child;
        if (ts_fork_with_pipes(&child) == 0)
            upgrading_child(env, path, child.send);
        int32_t reported = ts_kill_writer(&child, 1, 0, 2 * span_us + 1, 200);
        assert_true(reported >= 1);
        if (ts_raw_format(path) != upgraded_format(env)) {
            assert_int_equal(reported, 1); /* an open that returned had committed its upgrade */
            assert_as_before_or_clustered(env, path, &b);
            kept++;
        } else {
            assert_upgraded(env, path, &b);
            upgraded++;
        }
        /* Either way, the next read-write open finishes the upgrade. */
        assert_ok(open_file(env, path, 0, 0, &db));
        coffer_close(db);
        assert_upgraded(env, path, &b);
    }
    print_message("    %d rounds killed before the upgrade committed, %d after\n", kept, upgraded);
    before_free(&b);
}

/* How many clusters of each version (0 to 4) the object tables of the
 * closed plain file hold: a stored cluster starts with its head's size
 * (u32), then the head, whose first byte is its version. */
static void count_cluster_versions(const char *path, unsigned counts[5])
{
    MDB_env *e;
    MDB_txn *txn;
    MDB_dbi main_dbi;
    memset(counts, 0, 5 * sizeof *counts);
    assert_int_equal(mdb_env_create(&e), 0);
    assert_int_equal(mdb_env_set_maxdbs(e, 64), 0);
    assert_int_equal(mdb_env_open(e, path, MDB_NOSUBDIR | MDB_RDONLY | MDB_NOLOCK, 0644), 0);
    assert_int_equal(mdb_txn_begin(e, NULL, MDB_RDONLY, &txn), 0);
    assert_int_equal(mdb_dbi_open(txn, NULL, 0, &main_dbi), 0);
    MDB_cursor *names, *cur;
    MDB_val nk, nv, k, v;
    assert_int_equal(mdb_cursor_open(txn, main_dbi, &names), 0);
    for (int rc = mdb_cursor_get(names, &nk, &nv, MDB_FIRST); rc == 0; rc = mdb_cursor_get(names, &nk, &nv, MDB_NEXT)) {
        char name[64];
        if (nk.mv_size >= sizeof name || !is_object_table(nk.mv_data, nk.mv_size))
            continue;
        memcpy(name, nk.mv_data, nk.mv_size);
        name[nk.mv_size] = 0;
        MDB_dbi dbi;
        assert_int_equal(mdb_dbi_open(txn, name, 0, &dbi), 0);
        assert_int_equal(mdb_cursor_open(txn, dbi, &cur), 0);
        for (int r = mdb_cursor_get(cur, &k, &v, MDB_FIRST); r == 0; r = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
            if (k.mv_size != 8)
                continue; /* an object stored outside its cluster */
            assert_true(v.mv_size > 4);
            uint8_t version = ((const uint8_t *)v.mv_data)[4];
            counts[version <= 4 ? version : 0]++;
        }
        mdb_cursor_close(cur);
    }
    mdb_cursor_close(names);
    mdb_txn_abort(txn);
    mdb_env_close(e);
}

/* Halves the score of every Item, in one write transaction: every cluster
 * of Item is written again. */
static void halve_scores(const ts_env *env, const char *path)
{
    coffer_db *db = NULL;
    assert_ok(open_file(env, path, 0, 0, &db));
    check_contents(db);
    coffer_class_id item = ts_class(db, "Item");
    coffer_property_id score = ts_prop(db, item, "score");
    coffer_txn *txn = ts_begin(db, COFFER_TXN_WRITE);
    for (coffer_object_key key = 1; key <= ITEMS; key++) {
        coffer_object *o = NULL;
        if (coffer_object_get(txn, item, key, &o) != COFFER_OK)
            continue;
        coffer_value v;
        assert_ok(coffer_object_get_value(o, score, &v));
        coffer_field f = ts_field(score, coffer_value_double(v.u.double_value / 2));
        assert_ok(coffer_object_set_fields(o, &f, 1));
        coffer_object_release(o);
    }
    ts_commit(txn);
    coffer_close(db);
}

/* The fixture in `folder` (clusters of `version`, 2 or 3, file format
 * `format`) reads as the format-4 fixture does, read-only and read-write,
 * and verifies; rewritten, its clusters of Item become version 4 (each
 * column block a value of its own) and it still reads alike. */
static void check_older_clusters(ts_env *env, const char *folder, unsigned version, unsigned format)
{
    char records[TS_PATH_MAX], clusters[TS_PATH_MAX];
    copy_fixture_from(env, "format4", "records.coffer", records);
    copy_fixture_from(env, folder, "clusters.coffer", clusters);
    assert_int_equal(ts_raw_format(clusters), format);
    unsigned versions[5];
    if (env->mode == TS_PLAIN) {
        count_cluster_versions(clusters, versions);
        assert_true(versions[version] >= 3); /* two of Item, one of Box */
        assert_int_equal(versions[4], 0);
    }
    /* As written: the same objects, indexes and collections as the
     * format-4 fixture, read-only and read-write, and nothing damaged. */
    text want = {0}, got = {0};
    dump_read_only(env, records, &want);
    dump_read_only(env, clusters, &got);
    assert_same_text(&want, &got);
    assert_verifies(env, clusters);
    /* Rewritten (the format-4 file upgraded on the way): still alike. */
    halve_scores(env, records);
    halve_scores(env, clusters);
    text_free(&want);
    text_free(&got);
    want = (text){0};
    got = (text){0};
    dump_read_only(env, records, &want);
    dump_read_only(env, clusters, &got);
    assert_same_text(&want, &got);
    assert_verifies(env, clusters);
    if (env->mode == TS_PLAIN) {
        count_cluster_versions(clusters, versions);
        assert_true(versions[4] >= 2); /* Item's, rewritten */
        assert_int_equal(versions[version] + versions[4], 3);
    }
    text_free(&want);
    text_free(&got);
}

TS_ENV_TEST(test_version2_clusters_read_and_rewrite) { check_older_clusters(env, "format5", 2, 5); }

/* Clusters of version 3 (head and blocks in one value), written by the
 * library of before: plain of format 5, encrypted of format 6. */
TS_ENV_TEST(test_version3_clusters_read_and_rewrite)
{
    check_older_clusters(env, "clusters3", 3, env->mode == TS_ENCRYPTED ? 6 : 5);
}

/* ---- encrypted format 5 to format 6 ---------------------------------------------- */

static const char *const fixture_queries[] = {
    "name == 'item 12'",          "name == 'renamed 50'",      "name BEGINSWITH 'item 1'", "name BEGINSWITH 'renamed'",
    "name BEGINSWITH 'nothing'", "name > 'item 95'",           "name < 'item 100'",        "id BETWEEN {10, 40}",
    "id > 250",                  "id <= 4",                    "id IN {3, 19, 77, 299}",   "name == 'item 12' OR id == 7",
};
enum { QUERY_COUNT = sizeof fixture_queries / sizeof fixture_queries[0] };

/* The keys each query of Item finds, in order, and how the encrypted file
 * plans the prefix query (in `plan`). */
static void dump_queries(coffer_db *db, text *t, char *plan, size_t plan_size)
{
    coffer_class_id item = ts_class(db, "Item");
    coffer_txn *txn = ts_begin(db, COFFER_TXN_READ);
    for (size_t i = 0; i < QUERY_COUNT; i++) {
        coffer_query *q;
        assert_ok(coffer_query_compile(db, item, fixture_queries[i], strlen(fixture_queries[i]), NULL, 0, &q));
        if (i == 2)
            assert_ok(coffer_query_explain(txn, q, plan, plan_size));
        coffer_results *r;
        assert_ok(coffer_query_run(txn, q, &r));
        uint64_t n;
        assert_ok(coffer_results_count(r, &n));
        addf(t, "%s: %" PRIu64 ":", fixture_queries[i], n);
        for (uint64_t j = 0; j < n; j++) {
            coffer_object_key k;
            assert_ok(coffer_results_key(r, j, &k));
            addf(t, " %" PRIu64, k);
        }
        add(t, "\n", 1);
        coffer_results_free(r);
        coffer_query_free(q);
    }
    coffer_txn_free(txn);
}

static void dump_queries_read_only(const ts_env *env, const char *path, text *t, char *plan, size_t plan_size)
{
    coffer_db *db = NULL;
    assert_ok(open_file(env, path, 1, 0, &db));
    dump_queries(db, t, plan, plan_size);
    coffer_close(db);
}

/* An encrypted file of format 5 (the committed fixture, whose indexes are
 * keyed hashes) is brought to format 6 by its first read-write open: its
 * objects, index lookups and the answers of equality, prefix, range and
 * IN queries are those of before, its prefix query now walks the index,
 * and it takes writes. A size limit that stops the sealing leaves a file of
 * format 5 that still reads as before and upgrades once there is room. A
 * plain file of format 5 stays format 5. */
TS_ENV_TEST(test_encrypted_format5_seals_its_indexes)
{
    char path[TS_PATH_MAX], plan[256];
    copy_fixture_from(env, "format5", "sealed.coffer", path);
    assert_int_equal(ts_raw_format(path), 5);
    text objects = {0}, queries = {0}, kept = {0};
    dump_read_only(env, path, &objects);
    dump_queries_read_only(env, path, &queries, plan, sizeof plan);
    dump_raw(path, 2, &kept, NULL);
    if (env->mode == TS_ENCRYPTED)
        assert_null(strstr(plan, "(prefix)")); /* hashed keys: no prefix walk */

    coffer_db *db = NULL;
    coffer_status st;
    int failures = 0;
    long long size = ts_file_size(path);
    for (uint64_t limit = (uint64_t)size; (st = open_file(env, path, 0, limit, &db)) != COFFER_OK; limit += 8192) {
        assert_int_equal(env->mode, TS_ENCRYPTED);
        assert_status(st, COFFER_ERR_FILE_TOO_LARGE);
        assert_error_contains("from file format 5 to 6");
        assert_null(db);
        assert_int_equal(ts_raw_format(path), 5);
        text again = {0};
        dump_queries_read_only(env, path, &again, plan, sizeof plan);
        assert_same_text(&queries, &again);
        text_free(&again);
        failures++;
    }
    coffer_close(db);
    if (env->mode == TS_PLAIN) {
        assert_int_equal(ts_raw_format(path), 5);
    } else {
        assert_true(failures > 0);
        assert_int_equal(ts_raw_format(path), 6);
    }
    text after = {0};
    dump_read_only(env, path, &after);
    assert_same_text(&objects, &after);
    text_free(&after);
    after = (text){0};
    dump_queries_read_only(env, path, &after, plan, sizeof plan);
    assert_same_text(&queries, &after);
    text_free(&after);
    after = (text){0};
    dump_raw(path, 2, &after, NULL);
    if (env->mode == TS_ENCRYPTED) {
        assert_non_null(strstr(plan, "(prefix)"));
        /* Only the header and the indexes changed. */
        assert_same_text(&kept, &after);
    }
    text_free(&after);
    assert_verifies(env, path);

    /* It takes writes, which its indexes follow. */
    assert_ok(open_file(env, path, 0, 0, &db));
    coffer_class_id item = ts_class(db, "Item");
    coffer_txn *w = ts_begin(db, COFFER_TXN_WRITE);
    coffer_object *o;
    assert_ok(coffer_object_get(w, item, 13, &o)); /* id 12 */
    coffer_field f = ts_field(ts_prop(db, item, "name"), ts_str("item 12 again"));
    assert_ok(coffer_object_set_fields(o, &f, 1));
    coffer_object_release(o);
    ts_commit(w);
    coffer_close(db);
    after = (text){0};
    dump_queries_read_only(env, path, &after, plan, sizeof plan);
    assert_non_null(strstr(after.data, "name == 'item 12': 0:"));
    assert_non_null(strstr(after.data, "name == 'item 12' OR id == 7: 1: 8\n"));
    text_free(&after);
    assert_verifies(env, path);
    text_free(&objects);
    text_free(&queries);
    text_free(&kept);
}

/* While another handle of this process has the encrypted format-5 file
 * open (reading hashed index keys), a read-write open leaves it of format
 * 5 and both answer as before; the next read-write open, alone, upgrades. */
TS_ENV_TEST(test_format5_open_elsewhere_is_not_sealed)
{
    char path[TS_PATH_MAX], plan[256];
    copy_fixture_from(env, "format5", "shared.coffer", path);
    text want = {0};
    dump_queries_read_only(env, path, &want, plan, sizeof plan);
    coffer_db *first = NULL, *second = NULL;
    assert_ok(open_file(env, path, 1, 0, &first));
    assert_ok(open_file(env, path, 0, 0, &second));
    assert_int_equal(ts_raw_format(path), 5);
    text a = {0}, b = {0};
    dump_queries(first, &a, plan, sizeof plan);
    dump_queries(second, &b, plan, sizeof plan);
    assert_same_text(&want, &a);
    assert_same_text(&want, &b);
    coffer_close(second);
    coffer_close(first);
    assert_int_equal(ts_raw_format(path), 5);
    assert_ok(open_file(env, path, 0, 0, &second));
    coffer_close(second);
    assert_int_equal(ts_raw_format(path), upgraded_format(env));
    text_free(&b);
    b = (text){0};
    dump_queries_read_only(env, path, &b, plan, sizeof plan);
    assert_same_text(&want, &b);
    text_free(&want);
    text_free(&a);
    text_free(&b);
}

int main(void)
{
    /* Handles of this suite want format 5, so that a read-write open
     * upgrades the format-4 fixtures. */
    ts_pin_storage_format(5);
    for (int i = 0; i < COFFER_ENCRYPTION_KEY_SIZE; i++)
        fixture_key[i] = (uint8_t)i;
    const struct CMUnitTest tests[] = {
        TS_TEST_FILE_MODES_SETUP(test_upgrade_keeps_everything, ts_setup_empty),
        TS_TEST_FILE_MODES_SETUP(test_records_handle_does_not_upgrade, ts_setup_empty),
        TS_TEST_FILE_MODES_SETUP(test_damaged_record_stops_the_upgrade, ts_setup_empty),
        TS_TEST_FILE_MODES_SETUP(test_size_limit_stops_the_upgrade, ts_setup_empty),
        TS_TEST_FILE_MODES_SETUP(test_killed_upgrade_leaves_the_file_whole, ts_setup_empty),
        TS_TEST_FILE_MODES_SETUP(test_version2_clusters_read_and_rewrite, ts_setup_empty),
        TS_TEST_FILE_MODES_SETUP(test_version3_clusters_read_and_rewrite, ts_setup_empty),
        TS_TEST_FILE_MODES_SETUP(test_encrypted_format5_seals_its_indexes, ts_setup_empty),
        TS_TEST_FILE_MODES_SETUP(test_format5_open_elsewhere_is_not_sealed, ts_setup_empty),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
