/* test_verify.c — coffer_verify() on sound files of every object kind (plain,
 * encrypted, in memory, open or closed) and on each kind of damage it
 * detects, with the page and kind of the finding (damage to the stored
 * schema and the header included, which are findings, never errors);
 * verify-on-open and seed files refused when damaged. Damage is made either in the raw bytes of the
 * file (pages) or through raw LMDB writes (contents). */
#define _GNU_SOURCE
#include "test_support.h"
#include "storage/checksums.h"
#include "storage/lmdb_layout.h"

#include <fcntl.h>
#include <lmdb.h>
#include <signal.h>
#include <sys/wait.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define P(n, t, f) {.name = (n), .type = (t), .flags = (f)}
#define PL(n, t, f, c) {.name = (n), .type = (t), .flags = (f), .collection = (c)}

static const coffer_property_schema owner_props[] = {
    P("id", COFFER_TYPE_STRING, COFFER_PROPERTY_PRIMARY_KEY),
    P("score", COFFER_TYPE_INT, COFFER_PROPERTY_INDEXED),
    P("note", COFFER_TYPE_STRING, COFFER_PROPERTY_OPTIONAL),
    PL("nums", COFFER_TYPE_INT, 0, COFFER_COLLECTION_LIST),
    PL("words", COFFER_TYPE_STRING, 0, COFFER_COLLECTION_SET),
    PL("attrs", COFFER_TYPE_STRING, COFFER_PROPERTY_OPTIONAL, COFFER_COLLECTION_MAP),
    P("any", COFFER_TYPE_MIXED, COFFER_PROPERTY_OPTIONAL),
    {.name = "friend", .type = COFFER_TYPE_LINK, .flags = COFFER_PROPERTY_OPTIONAL, .object_class = "Owner"},
    {.name = "fans", .type = COFFER_TYPE_LINKING_OBJECTS, .object_class = "Owner", .link_origin_property = "friend"},
    {.name = "pals", .type = COFFER_TYPE_LINK, .collection = COFFER_COLLECTION_LIST, .object_class = "Owner"},
    {.name = "home", .type = COFFER_TYPE_LINK, .flags = COFFER_PROPERTY_OPTIONAL, .object_class = "Address"},
    P("blob", COFFER_TYPE_BINARY, COFFER_PROPERTY_OPTIONAL),
};
static const coffer_property_schema address_props[] = {
    P("street", COFFER_TYPE_STRING, 0),
    P("number", COFFER_TYPE_INT, 0),
};
static const coffer_class_schema schema[] = {
    {.name = "Owner", .properties = owner_props, .property_count = 12},
    {.name = "Address", .properties = address_props, .property_count = 2, .flags = COFFER_CLASS_EMBEDDED},
};
enum { O_ID, O_SCORE, O_NOTE, O_NUMS, O_WORDS, O_ATTRS, O_ANY, O_FRIEND, O_FANS, O_PALS, O_HOME, O_BLOB };

/* Sub-databases of the file: Owner is table 1, Address table 2. */
#define OWNER_OBJECTS "2"
#define OWNER_INDEX "3"

/* Objects of every kind: scalars, strings, links, lists of links, sets,
 * maps, embedded objects, mixed values with nested lists and maps, indexes
 * and a primary key, and (with `blob`) a value kept on overflow pages. */
static void fill(coffer_db *db, int n, size_t blob)
{
    coffer_txn *txn = ts_begin(db, COFFER_TXN_WRITE);
    coffer_class_id owner = ts_class(db, "Owner");
    unsigned char *bytes = calloc(1, blob + 1);
    assert_non_null(bytes);
    for (int i = 0; i < n; i++) {
        char id[32], note[32], w1[16];
        snprintf(id, sizeof id, "owner-%04d", i);
        snprintf(note, sizeof note, "note %d", i);
        snprintf(w1, sizeof w1, "w%d", i % 7);
        coffer_value nums[3] = {coffer_value_int(i), coffer_value_int(i * 2), coffer_value_int(-i)};
        coffer_value words[2] = {ts_str(w1), ts_str("common")};
        coffer_map_entry attrs[2] = {{{"colour", 6}, ts_str(i % 2 ? "red" : "blue")}, {{"size", 4}, coffer_value_null()}};
        coffer_value inner[3] = {coffer_value_int(i), ts_str("nested"), coffer_value_link(owner, 1)};
        coffer_map_entry inner_map[1] = {{{"k", 1}, coffer_value_list(inner, 2)}};
        coffer_value any = i % 3 == 0 ? coffer_value_list(inner, i ? 3 : 2)
                         : i % 3 == 1 ? coffer_value_map(inner_map, 1) : ts_str(note);
        coffer_value pals[2] = {coffer_value_link(owner, 1), coffer_value_link(owner, 1 + (uint64_t)(i / 2))};
        coffer_field home_fields[2] = {ts_field(0, ts_str("Main Street")), ts_field(1, coffer_value_int(i))};
        coffer_field f[] = {
            ts_field(O_ID, ts_str(id)), ts_field(O_SCORE, coffer_value_int(i % 5)),
            ts_field(O_NOTE, i % 4 ? ts_str(note) : coffer_value_null()), ts_field(O_NUMS, coffer_value_list(nums, 3)),
            ts_field(O_WORDS, coffer_value_list(words, 2)), ts_field(O_ATTRS, coffer_value_map(attrs, 2)), ts_field(O_ANY, any),
            ts_field(O_FRIEND, i >= 3 ? coffer_value_link(owner, 1 + (uint64_t)(i % 3)) : coffer_value_null()),
            ts_field(O_PALS, i ? coffer_value_list(pals, 2) : coffer_value_list(NULL, 0)),
            ts_field(O_HOME, coffer_value_fields(home_fields, 2)),
            ts_field(O_BLOB, i == 1 && blob ? coffer_value_binary(bytes, blob) : coffer_value_null()),
        };
        assert_ok(coffer_object_create(txn, owner, f, 11, COFFER_UPDATE_ERROR, NULL));
    }
    free(bytes);
    ts_commit(txn);
    /* A second commit deletes one: the file gets free pages and a log entry. */
    txn = ts_begin(db, COFFER_TXN_WRITE);
    coffer_object *obj;
    assert_ok(coffer_object_get(txn, owner, (uint64_t)n, &obj));
    assert_ok(coffer_object_delete(obj));
    ts_commit(txn);
}

static coffer_verify_report *verify_env(const ts_env *env)
{
    coffer_config *config = ts_env_config(env);
    coffer_verify_report *r = NULL;
    assert_ok(coffer_verify(config, &r));
    coffer_config_free(config);
    assert_non_null(r);
    return r;
}

static void print_report(const coffer_verify_report *r)
{
    for (size_t i = 0; i < coffer_verify_report_count(r); i++)
        fprintf(stderr, "  finding %zu: %s, page %lld, class %s, key %llu: %s\n", i,
                coffer_verify_kind_name(coffer_verify_report_kind(r, i)), (long long)coffer_verify_report_page(r, i),
                coffer_verify_report_class(r, i) ? coffer_verify_report_class(r, i) : "-",
                (unsigned long long)coffer_verify_report_object_key(r, i), coffer_verify_report_message(r, i));
}

static void assert_sound(coffer_verify_report *r)
{
    if (coffer_verify_report_count(r) != 0)
        print_report(r);
    assert_int_equal(coffer_verify_report_count(r), 0);
    assert_int_equal(coffer_verify_report_omitted(r), 0);
    coffer_verify_report_free(r);
}

/* The index of the first finding of `kind` (and `page` unless NO_PAGE);
 * fails the test, printing the report, if there is none. */
static size_t find_finding(const coffer_verify_report *r, coffer_verify_kind kind, uint64_t page)
{
    for (size_t i = 0; i < coffer_verify_report_count(r); i++)
        if (coffer_verify_report_kind(r, i) == kind && (page == COFFER_VERIFY_NO_PAGE || coffer_verify_report_page(r, i) == page))
            return i;
    fprintf(stderr, "no finding of kind '%s' on page %lld among:\n", coffer_verify_kind_name(kind), (long long)page);
    print_report(r);
    fail();
    return 0;
}

static int setup(void **state) { return ts_setup_schema(state, schema, 2); }

TS_ENV_TEST(test_sound_every_kind)
{
    fill(env->db, 120, 9000);
    /* Open in this process (and for in-memory, the only way it exists). */
    assert_sound(verify_env(env));
    coffer_verify_report *r = NULL;
    assert_ok(coffer_db_verify(env->db, &r));
    assert_sound(r);
    /* With a write transaction open on this thread, uncommitted writes are
     * not what is checked. */
    coffer_txn *txn = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_field f[] = {ts_field(O_ID, ts_str("pending")), ts_field(O_HOME, coffer_value_null())};
    assert_ok(coffer_object_create(txn, ts_class(env->db, "Owner"), f, 1, COFFER_UPDATE_ERROR, NULL));
    assert_ok(coffer_db_verify(env->db, &r));
    assert_sound(r);
    assert_ok(coffer_txn_abort(txn));
    coffer_txn_free(txn);
    if (env->mode == TS_MEMORY)
        return;
    ts_env_close(env);
    assert_sound(verify_env(env));
    /* Verifying leaves the file as it was and openable. */
    ts_env_reopen(env, schema, 2, 1);
    assert_int_equal(ts_count_of(env->db, "Owner"), 119);
}

TS_ENV_TEST(test_sound_empty_and_large)
{
    assert_sound(verify_env(env)); /* a new file: schema only */
    fill(env->db, 2500, 70000);
    assert_sound(verify_env(env));
    /* A smaller value replacing one on overflow pages keeps its longer run. */
    coffer_txn *txn = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_object *obj;
    assert_ok(coffer_object_get(txn, ts_class(env->db, "Owner"), 2, &obj));
    static const unsigned char smaller[6000];
    coffer_value v = coffer_value_binary(smaller, sizeof smaller);
    assert_ok(coffer_object_set_value(obj, O_BLOB, &v));
    ts_commit(txn);
    assert_sound(verify_env(env));
}

static void test_errors_without_report(void **state)
{
    ts_env *env = *state;
    coffer_verify_report *r = (coffer_verify_report *)1;
    assert_status(coffer_verify(NULL, &r), COFFER_ERR_INVALID_ARGUMENT);
    assert_null(r);
    coffer_config *config = ts_config_new();
    assert_status(coffer_verify(config, NULL), COFFER_ERR_INVALID_ARGUMENT);
    char path[TS_PATH_MAX];
    assert_ok(coffer_config_set_path(config, ts_join(path, env->dir, "missing.coffer")));
    assert_status(coffer_verify(config, &r), COFFER_ERR_NOT_FOUND);
    assert_null(r);
    assert_false(ts_file_exists(path));
    assert_ok(coffer_config_set_path(config, env->dir));
    assert_status(coffer_verify(config, &r), COFFER_ERR_IO);
    assert_error_contains("not a regular file");
    assert_ok(coffer_config_set_in_memory_identifier(config, "verify-nobody"));
    assert_status(coffer_verify(config, &r), COFFER_ERR_NOT_FOUND);
    assert_error_contains("verify-nobody");
    /* The key must fit the file to check its contents. */
    ts_make_person_file(ts_join(path, env->dir, "enc.coffer"), ts_key, 3);
    assert_ok(coffer_config_set_path(config, path));
    assert_status(coffer_verify(config, &r), COFFER_ERR_KEY_REQUIRED);
    assert_ok(coffer_config_set_encryption_key(config, ts_other_key, 64));
    assert_status(coffer_verify(config, &r), COFFER_ERR_WRONG_KEY);
    assert_ok(coffer_config_set_encryption_key(config, ts_key, 64));
    assert_ok(coffer_verify(config, &r));
    assert_sound(r);
    coffer_config_free(config);
    /* Out-of-range getters. */
    assert_int_equal(coffer_verify_report_count(NULL), 0);
    assert_int_equal(coffer_verify_report_kind(NULL, 0), COFFER_VERIFY_NONE);
    assert_true(coffer_verify_report_page(NULL, 3) == COFFER_VERIFY_NO_PAGE);
    assert_null(coffer_verify_report_message(NULL, 0));
    assert_string_equal(coffer_verify_kind_name(COFFER_VERIFY_OVERFLOW), "overflow pages");
    coffer_verify_report_free(NULL);
}

/* ---- damage to pages ----------------------------------------------------- */

#define PSIZE 4096u

static uint16_t u16_at(const unsigned char *p) { return (uint16_t)(p[0] | p[1] << 8); }
static void put_u16(unsigned char *p, uint16_t v) { p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); }
static void put_u64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++, v >>= 8)
        p[i] = (uint8_t)v;
}
static uint64_t u64_at(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

/* A closed plain file of 400 objects with an overflow value; its bytes. It
 * is a compacted copy, without free pages: every page is in use, so that
 * damage to any of them must be found. */
static unsigned char *damage_fixture(ts_env *env, size_t *size)
{
    fill(env->db, 400, 20000);
    char copy[TS_PATH_MAX + 8];
    snprintf(copy, sizeof copy, "%s.copy", env->path);
    assert_ok(coffer_db_write_copy(env->db, copy, NULL, 0));
    ts_env_close(env);
    assert_int_equal(rename(copy, env->path), 0);
    unsigned char *data = ts_read_file(env->path, size);
    assert_non_null(data);
    assert_int_equal(*size % PSIZE, 0);
    return data;
}

/* The first page (after the metas) whose header has `flags`, and at least
 * `min_keys` nodes for tree pages. */
static uint64_t find_page(const unsigned char *data, size_t size, uint16_t flags, int min_keys)
{
    for (uint64_t p = 2; p < size / PSIZE; p++) {
        const unsigned char *pg = data + p * PSIZE;
        if (u64_at(pg) == p && u16_at(pg + 10) == flags && (flags == 4 || (u16_at(pg + 12) - 16) / 2 >= min_keys))
            return p;
    }
    fail_msg("no page with flags 0x%x", flags);
    return 0;
}

static coffer_verify_report *verify_bytes(ts_env *env, const unsigned char *data, size_t size)
{
    assert_int_equal(ts_write_file(env->path, data, size), 0);
    return verify_env(env);
}

/* Writes `data` as the file, verifies it and fails unless a finding of
 * `kind` names `page`. */
static void expect_finding_in_bytes(ts_env *env, const unsigned char *data, size_t size, coffer_verify_kind kind,
                                    uint64_t page)
{
    coffer_verify_report *r = verify_bytes(env, data, size);
    find_finding(r, kind, page);
    coffer_verify_report_free(r);
}

TS_ENV_TEST(test_damaged_meta)
{
    size_t size;
    unsigned char *data = damage_fixture(env, &size);
    memset(data + 16, 0, 8); /* meta page 0: magic and version */
    coffer_verify_report *r = verify_bytes(env, data, size);
    size_t i = find_finding(r, COFFER_VERIFY_META, 0);
    assert_non_null(strstr(coffer_verify_report_message(r, i), "magic"));
    coffer_verify_report_free(r);
    /* Both metas gone: not a database at all, and no lock file is made. */
    memset(data + PSIZE + 16, 0, 8);
    char lock[TS_PATH_MAX + 8];
    snprintf(lock, sizeof lock, "%s-lock", env->path);
    unlink(lock);
    r = verify_bytes(env, data, size);
    find_finding(r, COFFER_VERIFY_META, 1);
    assert_false(ts_file_exists(lock));
    coffer_verify_report_free(r);
    free(data);
}

/* Verifies env's file (in a child) and returns 0 if a meta-page finding
 * on page *arg names the page the newest transaction belongs on, else 1. */
static const ts_env *wrong_page_env;
static int verify_finds_wrong_meta_page(void *arg)
{
    coffer_config *config = ts_env_config(wrong_page_env);
    coffer_verify_report *r = NULL;
    if (coffer_verify(config, &r) != COFFER_OK)
        return 2;
    int found = 0;
    for (size_t i = 0; i < coffer_verify_report_count(r); i++)
        found |= coffer_verify_report_kind(r, i) == COFFER_VERIFY_META && coffer_verify_report_page(r, i) == *(uint64_t *)arg &&
                 strstr(coffer_verify_report_message(r, i), "belongs on meta page") != NULL;
    if (!found)
        print_report(r);
    coffer_verify_report_free(r);
    coffer_config_free(config);
    return !found;
}

/* LMDB keeps transaction t's meta on page t & 1, and an open file's readers
 * read the page the newest id names. The newest id moved to the other page
 * makes them read the page the walk would not: here one whose catalogue
 * lies past the end of the file, where a reader faults (SIGBUS). */
TS_ENV_TEST(test_meta_on_the_wrong_page)
{
    size_t size;
    unsigned char *data = damage_fixture(env, &size);
    unsigned char *m0 = data + LMDB_PAGE_HEADER, *m1 = data + PSIZE + LMDB_PAGE_HEADER;
    uint64_t t0 = u64_at(m0 + LMDB_META_TXNID_OFF), t1 = u64_at(m1 + LMDB_META_TXNID_OFF);
    int newest = t1 > t0;
    unsigned char *read = newest ? m1 : m0, *other = newest ? m0 : m1;
    uint64_t t = newest ? t1 : t0;
    assert_int_equal(t & 1, (uint64_t)newest);
    put_u64(read + LMDB_META_LAST_PG_OFF, size / PSIZE + 200);
    put_u64(read + LMDB_META_MAIN_DB_OFF + LMDB_DB_ROOT, size / PSIZE + 100);
    put_u64(other + LMDB_META_TXNID_OFF, t + 2);
    assert_int_equal(ts_write_file(env->path, data, size), 0);
    wrong_page_env = env;
    uint64_t page = (uint64_t)!newest;
    assert_int_equal(ts_run_in_child(verify_finds_wrong_meta_page, &page, "verifying a meta on the wrong page"), 0);
    free(data);
}

TS_ENV_TEST(test_truncated_and_foreign)
{
    size_t size;
    unsigned char *data = damage_fixture(env, &size);
    coffer_verify_report *r = verify_bytes(env, data, size / 2);
    size_t i = find_finding(r, COFFER_VERIFY_FILE, COFFER_VERIFY_NO_PAGE);
    assert_non_null(strstr(coffer_verify_report_message(r, i), "truncated"));
    coffer_verify_report_free(r);
    r = verify_bytes(env, (const unsigned char *)"just some notes\n", 16);
    find_finding(r, COFFER_VERIFY_FILE, COFFER_VERIFY_NO_PAGE);
    coffer_verify_report_free(r);
    memset(data, 0, size); /* zeros: two damaged metas */
    expect_finding_in_bytes(env, data, size, COFFER_VERIFY_META, 0);
    free(data);
}

TS_ENV_TEST(test_damaged_page_header)
{
    size_t size;
    unsigned char *data = damage_fixture(env, &size);
    uint64_t leaf = find_page(data, size, 2, 2);
    data[leaf * PSIZE] ^= 0x40; /* the page number in its header */
    coffer_verify_report *r = verify_bytes(env, data, size);
    find_finding(r, COFFER_VERIFY_PAGE, leaf);
    coffer_verify_report_free(r);
    data[leaf * PSIZE] ^= 0x40;
    put_u16(data + leaf * PSIZE + 14, PSIZE + 8); /* upper bound past the page */
    expect_finding_in_bytes(env, data, size, COFFER_VERIFY_PAGE, leaf);
    memset(data + leaf * PSIZE, 0, PSIZE); /* a zeroed page */
    expect_finding_in_bytes(env, data, size, COFFER_VERIFY_PAGE, leaf);
    free(data);
}

/* A leaf page whose nodes are plain key/value pairs (no sub-databases): a
 * page of a numbered sub-database, found by its first node's flags. */
static uint64_t find_plain_leaf(const unsigned char *data, size_t size)
{
    for (uint64_t p = 2; p < size / PSIZE; p++) {
        const unsigned char *pg = data + p * PSIZE;
        if (u64_at(pg) != p || u16_at(pg + 10) != 2 || (u16_at(pg + 12) - 16) / 2 < 3)
            continue;
        const unsigned char *node = pg + u16_at(pg + 16);
        if (u16_at(node + 4) == 0 && u16_at(node + 6) == 8)
            return p; /* 8-byte keys: objects or free-list entries */
    }
    fail_msg("no plain leaf page");
    return 0;
}

TS_ENV_TEST(test_damaged_node_flags_and_order)
{
    TS_RECORDS_ONLY();
    size_t size;
    unsigned char *data = damage_fixture(env, &size);
    uint64_t leaf = find_plain_leaf(data, size);
    unsigned char *pg = data + leaf * PSIZE;
    unsigned char *node = pg + u16_at(pg + 16 + 2);
    node[4] |= 0x04; /* F_DUPDATA on a database without duplicates */
    coffer_verify_report *r = verify_bytes(env, data, size);
    find_finding(r, COFFER_VERIFY_NODE, leaf);
    coffer_verify_report_free(r);
    node[4] &= (unsigned char)~0x04;
    /* Two node offsets swapped: keys out of order. */
    uint16_t a = u16_at(pg + 16), b = u16_at(pg + 18);
    put_u16(pg + 16, b);
    put_u16(pg + 18, a);
    expect_finding_in_bytes(env, data, size, COFFER_VERIFY_KEY_ORDER, leaf);
    put_u16(pg + 16, a);
    put_u16(pg + 18, b);
    /* A key size that runs off the page. */
    put_u16(node + 6, 4000);
    expect_finding_in_bytes(env, data, size, COFFER_VERIFY_NODE, leaf);
    free(data);
}

TS_ENV_TEST(test_damaged_overflow_and_shared_page)
{
    TS_RECORDS_ONLY();
    size_t size;
    unsigned char *data = damage_fixture(env, &size);
    uint64_t ov = find_page(data, size, 4, 0);
    unsigned char *pg = data + ov * PSIZE;
    pg[12] ^= 0x01; /* its page count */
    coffer_verify_report *r = verify_bytes(env, data, size);
    find_finding(r, COFFER_VERIFY_OVERFLOW, ov);
    coffer_verify_report_free(r);
    pg[12] ^= 0x01;
    /* A branch whose second child is also its first: a page reached twice. */
    uint64_t br = find_page(data, size, 1, 3);
    pg = data + br * PSIZE;
    unsigned char *n0 = pg + u16_at(pg + 16), *n1 = pg + u16_at(pg + 18);
    uint64_t child = u16_at(n0) | (uint64_t)u16_at(n0 + 2) << 16;
    memcpy(n1, n0, 6);
    expect_finding_in_bytes(env, data, size, COFFER_VERIFY_PAGE_SHARED, child);
    free(data);
}

TS_ENV_TEST(test_verify_on_open_and_seed)
{
    size_t size;
    unsigned char *data = damage_fixture(env, &size);
    /* Sound: verify-on-open opens it. */
    coffer_config *config = ts_env_config(env);
    assert_ok(coffer_config_set_verify_on_open(config, 1));
    coffer_db *db;
    assert_ok(coffer_open(config, &db));
    coffer_close(db);
    /* A damaged leaf: refused, naming the finding; without the option the
     * open itself goes on (LMDB reads only what it needs). */
    uint64_t leaf = find_page(data, size, 2, 2);
    unsigned char saved = data[leaf * PSIZE + 10];
    data[leaf * PSIZE + 10] = 0x01; /* a leaf that says it is a branch */
    assert_int_equal(ts_write_file(env->path, data, size), 0);
    assert_status(coffer_open(config, &db), COFFER_ERR_CORRUPTED);
    assert_error_contains("page header (page ");
    assert_error_contains(env->path);
    coffer_config_free(config);
    /* The same file as a seed: not copied. */
    char target[TS_PATH_MAX];
    config = ts_config_at(ts_join(target, env->dir, "from-seed.coffer"));
    assert_ok(coffer_config_set_seed_path(config, env->path));
    int entries = ts_count_dir_entries(env->dir);
    assert_status(coffer_open(config, &db), COFFER_ERR_CORRUPTED);
    assert_error_contains("the seed file");
    assert_int_equal(ts_count_dir_entries(env->dir), entries); /* no copy, lock or note left */
    assert_false(ts_file_exists(target));
    char side[TS_PATH_MAX + 8];
    snprintf(side, sizeof side, "%s-lock", target);
    assert_false(ts_file_exists(side));
    /* Repaired, it is copied and opens. */
    data[leaf * PSIZE + 10] = saved;
    assert_int_equal(ts_write_file(env->path, data, size), 0);
    assert_ok(coffer_open(config, &db));
    assert_int_equal(ts_count_of(db, "Owner"), 399);
    coffer_close(db);
    coffer_config_free(config);
    free(data);
}

/* Reads every object of the file in a child whose stderr goes to `log`;
 * returns the child's wait status. */
static int read_all_in_child(const char *path, const char *log)
{
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        alarm(60);
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(fd, 2);
        coffer_db *db;
        if (ts_open_path(path, NULL, 1, NULL, 0, 0, &db) == COFFER_OK) {
            coffer_class_id owner;
            coffer_txn *txn;
            coffer_iter *it;
            coffer_object *obj;
            if (coffer_db_find_class(db, "Owner", &owner) == COFFER_OK && coffer_txn_begin(db, COFFER_TXN_READ, &txn) == COFFER_OK &&
                coffer_class_iterate(txn, owner, &it) == COFFER_OK)
                while (coffer_iter_next(it, &obj) == COFFER_OK)
                    ;
        }
        _exit(0);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    return status;
}

TS_ENV_TEST(test_lmdb_assertion_names_the_file)
{
    TS_RECORDS_ONLY();
    size_t size;
    unsigned char *data = damage_fixture(env, &size);
    char log[TS_PATH_MAX + 8], damaged[TS_PATH_MAX + 8];
    snprintf(log, sizeof log, "%s.log", env->path);
    snprintf(damaged, sizeof damaged, "%s.damaged", env->path);
    /* A leaf of the objects that is not the first: a scan walks into it
     * from its sibling, where LMDB asserts that it is a leaf. */
    int aborted = 0;
    for (uint64_t p = 2; p < size / PSIZE && !aborted; p++) {
        const unsigned char *pg = data + p * PSIZE;
        if (u64_at(pg) != p || u16_at(pg + 10) != 2)
            continue;
        unsigned char *copy = malloc(size);
        memcpy(copy, data, size);
        memset(copy + p * PSIZE + 8, 0, PSIZE - 8); /* the page keeps its number, loses its type */
        assert_int_equal(ts_write_file(damaged, copy, size), 0);
        free(copy);
        int status = read_all_in_child(damaged, log);
        if (WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT) {
            aborted = 1;
            size_t n;
            char *text = (char *)ts_read_file(log, &n);
            assert_non_null(text);
            assert_non_null(strstr(text, damaged));
            assert_non_null(strstr(text, "coffer verify"));
            free(text);
        }
        char side[TS_PATH_MAX + 16];
        snprintf(side, sizeof side, "%s-lock", damaged);
        unlink(side);
    }
    assert_true(aborted); /* some damaged leaf made LMDB assert */
    free(data);
}

/* ---- damage to contents (through raw LMDB) ------------------------------- */

static void object_key(uint8_t k[8], uint64_t key)
{
    for (int i = 7; i >= 0; i--, key >>= 8)
        k[i] = (uint8_t)key;
}

/* Replaces the stored record of Owner `key` by `f` applied to a copy. */
static void damage_record(const char *path, uint64_t key, size_t at, uint8_t xor)
{
    ts_raw w;
    MDB_dbi dbi = ts_raw_open(&w, path, OWNER_OBJECTS);
    uint8_t kb[8];
    object_key(kb, key);
    MDB_val k = {8, kb}, v;
    assert_int_equal(mdb_get(w.txn, dbi, &k, &v), 0);
    uint8_t *copy = malloc(v.mv_size);
    memcpy(copy, v.mv_data, v.mv_size);
    copy[at < v.mv_size ? at : v.mv_size - 1] ^= xor;
    v.mv_data = copy;
    assert_int_equal(mdb_put(w.txn, dbi, &k, &v, 0), 0);
    free(copy);
    ts_raw_end(&w, 1);
}

TS_ENV_TEST(test_damaged_record)
{
    TS_RECORDS_ONLY();
    fill(env->db, 50, 0);
    ts_env_close(env);
    /* Plain: the record's version byte; encrypted: any byte fails its tag. */
    damage_record(env->path, 7, env->mode == TS_PLAIN ? 0 : 30, 0x55);
    coffer_verify_report *r = verify_env(env);
    size_t i = find_finding(r, COFFER_VERIFY_RECORD, COFFER_VERIFY_NO_PAGE);
    assert_string_equal(coffer_verify_report_class(r, i), "Owner");
    assert_int_equal(coffer_verify_report_object_key(r, i), 7);
    uint64_t page = coffer_verify_report_page(r, i);
    assert_true(page != COFFER_VERIFY_NO_PAGE && page >= 2);
    coffer_verify_report_free(r);
    /* Through an open handle, which needs no key. */
    ts_env_reopen(env, schema, 2, 1);
    assert_ok(coffer_db_verify(env->db, &r));
    i = find_finding(r, COFFER_VERIFY_RECORD, page);
    assert_int_equal(coffer_verify_report_object_key(r, i), 7);
    coffer_verify_report_free(r);
    assert_status(coffer_db_verify(NULL, &r), COFFER_ERR_INVALID_ARGUMENT);
}

TS_ENV_TEST(test_invalid_utf8_string)
{
    TS_RECORDS_ONLY();
    fill(env->db, 20, 0);
    ts_env_close(env);
    /* "owner-0004" ends the record's first string column: make a byte of it
     * a lone continuation byte, which decodes but is not UTF-8. */
    ts_raw w;
    MDB_dbi dbi = ts_raw_open(&w, env->path, OWNER_OBJECTS);
    uint8_t kb[8];
    object_key(kb, 5);
    MDB_val k = {8, kb}, v;
    assert_int_equal(mdb_get(w.txn, dbi, &k, &v), 0);
    uint8_t *copy = malloc(v.mv_size);
    memcpy(copy, v.mv_data, v.mv_size);
    uint8_t *at = (uint8_t *)ts_memmem(copy, v.mv_size, "owner-0004", 10);
    assert_non_null(at);
    at[3] = 0x80;
    /* The record's checksum (plain files) is made to match the edit, so the
     * string check itself is what finds it. */
    cf_put_le(copy + v.mv_size - CF_CHECKSUM_SIZE,
              cf_checksum((uint32_t)atoi(OWNER_OBJECTS), kb, 8, copy, v.mv_size - CF_CHECKSUM_SIZE), CF_CHECKSUM_SIZE);
    v.mv_data = copy;
    assert_int_equal(mdb_put(w.txn, dbi, &k, &v, 0), 0);
    free(copy);
    ts_raw_end(&w, 1);
    coffer_verify_report *r = verify_env(env);
    size_t i = find_finding(r, COFFER_VERIFY_RECORD, COFFER_VERIFY_NO_PAGE);
    assert_int_equal(coffer_verify_report_object_key(r, i), 5);
    assert_non_null(strstr(coffer_verify_report_message(r, i), "UTF-8"));
    coffer_verify_report_free(r);
}

/* Deletes the first key of `dbname` whose bytes start with `prefix`. */
static void delete_first(const char *path, const char *dbname, const void *prefix, size_t plen)
{
    ts_raw w;
    MDB_dbi dbi = ts_raw_open(&w, path, dbname);
    MDB_cursor *cur;
    assert_int_equal(mdb_cursor_open(w.txn, dbi, &cur), 0);
    MDB_val k = {plen, (void *)prefix}, v;
    assert_int_equal(mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE), 0);
    assert_true(k.mv_size >= plen && memcmp(k.mv_data, prefix, plen) == 0);
    assert_int_equal(mdb_cursor_del(cur, 0), 0);
    mdb_cursor_close(cur);
    ts_raw_end(&w, 1);
}

TS_ENV_TEST(test_missing_index_entry)
{
    fill(env->db, 30, 0);
    ts_env_close(env);
    const uint8_t score_column[2] = {0, 1}; /* "score" is column 1 */
    /* An encrypted file's index is a tree of sealed nodes (format 6): its
     * root (node 1, the first key) goes, and every entry with it. */
    const uint8_t root_node[8] = {0, 0, 0, 0, 0, 0, 0, 1};
    if (ts_raw_format(env->path) == 6)
        delete_first(env->path, OWNER_INDEX, root_node, 8);
    else
        delete_first(env->path, OWNER_INDEX, score_column, 2);
    coffer_verify_report *r = verify_env(env);
    size_t i = find_finding(r, COFFER_VERIFY_INDEX, COFFER_VERIFY_NO_PAGE);
    while (i + 1 < coffer_verify_report_count(r) && !strstr(coffer_verify_report_message(r, i), "score"))
        i++;
    assert_string_equal(coffer_verify_report_class(r, i), "Owner");
    assert_int_equal(coffer_verify_report_kind(r, i), COFFER_VERIFY_INDEX);
    assert_non_null(strstr(coffer_verify_report_message(r, i), "score"));
    coffer_verify_report_free(r);
}

TS_ENV_TEST(test_primary_key_entry_missing)
{
    fill(env->db, 30, 0);
    ts_env_close(env);
    const uint8_t id_column[2] = {0, 0};
    delete_first(env->path, OWNER_INDEX, id_column, 2);
    coffer_verify_report *r = verify_env(env);
    find_finding(r, COFFER_VERIFY_INDEX, COFFER_VERIFY_NO_PAGE);
    find_finding(r, COFFER_VERIFY_PRIMARY_KEY, COFFER_VERIFY_NO_PAGE);
    coffer_verify_report_free(r);
}

TS_ENV_TEST(test_dangling_link_and_backlinks)
{
    TS_RECORDS_ONLY();
    fill(env->db, 30, 0);
    ts_env_close(env);
    /* Object 2 disappears under the links that point to it. */
    uint8_t kb[8];
    object_key(kb, 2);
    delete_first(env->path, OWNER_OBJECTS, kb, 8);
    coffer_verify_report *r = verify_env(env);
    size_t i = find_finding(r, COFFER_VERIFY_LINK, COFFER_VERIFY_NO_PAGE);
    assert_non_null(strstr(coffer_verify_report_message(r, i), "object 2 of class 'Owner'"));
    find_finding(r, COFFER_VERIFY_INDEX, COFFER_VERIFY_NO_PAGE); /* its index entries stay */
    coffer_verify_report_free(r);
    /* A backlink entry removed. */
    ts_env_reopen(env, schema, 2, 1);
    ts_env_close(env);
    delete_first(env->path, "1", "B", 1);
    r = verify_env(env);
    find_finding(r, COFFER_VERIFY_BACKLINK, COFFER_VERIFY_NO_PAGE);
    coffer_verify_report_free(r);
}

TS_ENV_TEST(test_damaged_counter_and_log)
{
    fill(env->db, 30, 0);
    ts_env_close(env);
    ts_raw w;
    MDB_dbi dbi = ts_raw_open(&w, env->path, "0");
    /* A change-log entry that does not decode. */
    MDB_cursor *cur;
    assert_int_equal(mdb_cursor_open(w.txn, dbi, &cur), 0);
    MDB_val k = {1, "L"}, v;
    assert_int_equal(mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE), 0);
    assert_int_equal(((const char *)k.mv_data)[0], 'L');
    uint8_t junk[3] = {9, 9, 9};
    v = (MDB_val){3, junk};
    assert_int_equal(mdb_cursor_put(cur, &k, &v, MDB_CURRENT), 0);
    mdb_cursor_close(cur);
    ts_raw_end(&w, 1);
    coffer_verify_report *r = verify_env(env);
    find_finding(r, COFFER_VERIFY_CHANGE_LOG, COFFER_VERIFY_NO_PAGE);
    coffer_verify_report_free(r);
    if (env->mode != TS_PLAIN)
        return; /* the counter is sealed in encrypted files */
    dbi = ts_raw_open(&w, env->path, "0");
    uint8_t mk[5] = {'k', 0, 0, 0, 1}, one[8] = {0, 0, 0, 0, 0, 0, 0, 1};
    k = (MDB_val){5, mk};
    v = (MDB_val){8, one};
    assert_int_equal(mdb_put(w.txn, dbi, &k, &v, 0), 0);
    ts_raw_end(&w, 1);
    r = verify_env(env);
    size_t i = find_finding(r, COFFER_VERIFY_COUNTER, COFFER_VERIFY_NO_PAGE);
    assert_string_equal(coffer_verify_report_class(r, i), "Owner");
    coffer_verify_report_free(r);
}

/* ---- damage to the stored schema ----------------------------------------- */

/* Moves the value of metadata key `from` to key `to`, as a damaged byte in
 * the key would: the value is kept, under a name nothing reads. */
static void move_meta_key(const char *path, const char *from, const char *to)
{
    ts_raw w;
    MDB_dbi dbi = ts_raw_open(&w, path, "0");
    MDB_val k = {strlen(from), (void *)from}, v;
    assert_int_equal(mdb_get(w.txn, dbi, &k, &v), 0);
    void *copy = malloc(v.mv_size);
    memcpy(copy, v.mv_data, v.mv_size);
    MDB_val nk = {strlen(to), (void *)to}, nv = {v.mv_size, copy};
    assert_int_equal(mdb_put(w.txn, dbi, &nk, &nv, 0), 0);
    assert_int_equal(mdb_del(w.txn, dbi, &k, NULL), 0);
    free(copy);
    ts_raw_end(&w, 1);
}

/* Whether metadata key `name` exists, and the number of entries of
 * sub-database `objects`, read without the library. */
static int raw_has_meta_key(const char *path, const char *name, const char *objects, size_t *entries)
{
    ts_raw w;
    MDB_dbi dbi = ts_raw_open(&w, path, "0");
    MDB_val k = {strlen(name), (void *)name}, v;
    int found = mdb_get(w.txn, dbi, &k, &v) == 0;
    MDB_dbi odbi;
    MDB_stat ms;
    assert_int_equal(mdb_dbi_open(w.txn, objects, 0, &odbi), 0);
    assert_int_equal(mdb_stat(w.txn, odbi, &ms), 0);
    *entries = ms.ms_entries;
    ts_raw_end(&w, 0);
    return found;
}

/* A file whose stored schema is gone (its key damaged) is damage that verify
 * reports, whatever the pages say: it never asks for the schema to be
 * written, and no open writes a new one over the classes' data. */
TS_ENV_TEST(test_missing_schema)
{
    fill(env->db, 30, 0);
    ts_env_close(env);
    size_t entries_before = 0; /* records or clusters, by the file's format */
    assert_true(raw_has_meta_key(env->path, "schema", OWNER_OBJECTS, &entries_before));
    move_meta_key(env->path, "schema", "schemb");
    coffer_verify_report *r = verify_env(env);
    size_t i = find_finding(r, COFFER_VERIFY_HEADER, COFFER_VERIFY_NO_PAGE);
    assert_non_null(strstr(coffer_verify_report_message(r, i), "no stored schema"));
    coffer_verify_report_free(r);

    const uint8_t *key = ts_mode_key(env->mode);
    coffer_db *db = NULL;
    assert_status(ts_open_path(env->path, key, 1, NULL, 0, 0, &db), COFFER_ERR_CORRUPTED);
    assert_error_contains("no stored schema");
    assert_status(ts_open_path(env->path, key, 0, NULL, 0, 0, &db), COFFER_ERR_CORRUPTED);
    assert_status(ts_open_path(env->path, key, 0, schema, 2, 1, &db), COFFER_ERR_CORRUPTED);
    assert_error_contains(env->path);
    assert_null(db);
    size_t entries = 0;
    assert_false(raw_has_meta_key(env->path, "schema", OWNER_OBJECTS, &entries));
    assert_int_equal(entries, entries_before); /* nothing written, nothing lost */

    /* Refused with what verify found, by verify-on-open and as a seed. */
    coffer_config *config = ts_env_config(env);
    assert_ok(coffer_config_set_verify_on_open(config, 1));
    assert_status(coffer_open(config, &db), COFFER_ERR_CORRUPTED);
    assert_error_contains("database header");
    assert_error_contains("no stored schema");
    coffer_config_free(config);
    char target[TS_PATH_MAX];
    config = ts_config_at(ts_join(target, env->dir, "from-seed.coffer"));
    if (key)
        assert_ok(coffer_config_set_encryption_key(config, key, 64));
    assert_ok(coffer_config_set_seed_path(config, env->path));
    int before = ts_count_dir_entries(env->dir);
    assert_status(coffer_open(config, &db), COFFER_ERR_CORRUPTED);
    assert_error_contains("the seed file");
    assert_error_contains("no stored schema");
    assert_int_equal(ts_count_dir_entries(env->dir), before);
    coffer_config_free(config);

    /* The key put back, the file is whole again. */
    move_meta_key(env->path, "schemb", "schema");
    r = verify_env(env);
    assert_sound(r);
    ts_env_reopen(env, schema, 2, 1);
    assert_int_equal(ts_count_of(env->db, "Owner"), 29);
}

/* The header's encryption flag flipped: a plain file that asks for a key, an
 * encrypted one that refuses its own. The key check (zeros in a plain file)
 * tells the damage from a missing or wrong key. */
TS_ENV_TEST(test_header_flag_disagrees_with_key_check)
{
    fill(env->db, 10, 0);
    ts_env_close(env);
    ts_raw w;
    MDB_dbi dbi = ts_raw_open(&w, env->path, "0");
    MDB_val k = {6, "header"}, v;
    assert_int_equal(mdb_get(w.txn, dbi, &k, &v), 0);
    assert_int_equal(v.mv_size, 64);
    uint8_t h[64];
    memcpy(h, v.mv_data, sizeof h);
    h[12] ^= 1; /* flags, bit 0: encrypted */
    v = (MDB_val){sizeof h, h};
    assert_int_equal(mdb_put(w.txn, dbi, &k, &v, 0), 0);
    ts_raw_end(&w, 1);
    const char *says = env->mode == TS_PLAIN ? "marked encrypted, but lacks a key check" : "marked plain, but has a key check";
    coffer_verify_report *r = verify_env(env);
    size_t i = find_finding(r, COFFER_VERIFY_HEADER, COFFER_VERIFY_NO_PAGE);
    assert_non_null(strstr(coffer_verify_report_message(r, i), says));
    coffer_verify_report_free(r);
    coffer_db *db = NULL;
    assert_status(ts_open_path(env->path, ts_mode_key(env->mode), 0, schema, 2, 1, &db), COFFER_ERR_CORRUPTED);
    assert_error_contains(says);
    assert_status(ts_open_path(env->path, env->mode == TS_PLAIN ? ts_key : NULL, 1, NULL, 0, 0, &db), COFFER_ERR_CORRUPTED);
    assert_null(db);
}

/* A stored schema that decodes and passes its checksum, but gives class
 * Owner a table number whose sub-databases the file does not have. */
TS_ENV_TEST(test_schema_names_missing_sub_databases)
{
    fill(env->db, 10, 0);
    ts_env_close(env);
    ts_raw w;
    MDB_dbi dbi = ts_raw_open(&w, env->path, "0");
    MDB_val k = {6, "schema"}, v;
    assert_int_equal(mdb_get(w.txn, dbi, &k, &v), 0);
    uint8_t *copy = malloc(v.mv_size);
    memcpy(copy, v.mv_data, v.mv_size);
    /* encoding (4), version (8), next table (4) at 12, class count (4),
     * then Owner's name (2 + 5) and its table (4) at 27: 1 becomes 7. */
    assert_memory_equal(copy + 20, "\x05\x00Owner", 7);
    assert_int_equal(copy[27], 1);
    copy[12] = 8;
    copy[27] = 7;
    size_t body = v.mv_size - CF_CHECKSUM_SIZE;
    cf_put_le(copy + body, cf_checksum(0, k.mv_data, k.mv_size, copy, body), CF_CHECKSUM_SIZE);
    v.mv_data = copy;
    assert_int_equal(mdb_put(w.txn, dbi, &k, &v, 0), 0);
    free(copy);
    ts_raw_end(&w, 1);
    coffer_verify_report *r = verify_env(env);
    size_t i = find_finding(r, COFFER_VERIFY_HEADER, COFFER_VERIFY_NO_PAGE);
    assert_non_null(strstr(coffer_verify_report_message(r, i), "the objects of class 'Owner' are missing"));
    coffer_verify_report_free(r);
}

/* A raw LMDB file with every layout the walker knows: sorted duplicates in
 * sub-pages and in sub-trees, fixed-size duplicates, integer and reverse
 * keys, overflow values. Its pages are sound; it is just not a Coffer file. */
static void test_raw_lmdb_layouts(void **state)
{
    ts_env *env = *state;
    MDB_env *menv;
    MDB_txn *txn;
    assert_int_equal(mdb_env_create(&menv), 0);
    mdb_env_set_maxdbs(menv, 8);
    assert_int_equal(mdb_env_open(menv, env->path, MDB_NOSUBDIR, 0644), 0);
    assert_int_equal(mdb_txn_begin(menv, NULL, 0, &txn), 0);
    MDB_dbi dups, fixed, ints, rev;
    assert_int_equal(mdb_dbi_open(txn, "dups", MDB_CREATE | MDB_DUPSORT, &dups), 0);
    assert_int_equal(mdb_dbi_open(txn, "fixed", MDB_CREATE | MDB_DUPSORT | MDB_DUPFIXED | MDB_INTEGERDUP, &fixed), 0);
    assert_int_equal(mdb_dbi_open(txn, "ints", MDB_CREATE | MDB_INTEGERKEY, &ints), 0);
    assert_int_equal(mdb_dbi_open(txn, "rev", MDB_CREATE | MDB_REVERSEKEY, &rev), 0);
    static char big[20000];
    for (uint64_t i = 0; i < 3000; i++) {
        char key[32], val[64];
        int kl = snprintf(key, sizeof key, "key-%05llu", (unsigned long long)(i % 300));
        int vl = snprintf(val, sizeof val, "value-%llu-%s", (unsigned long long)i, i % 300 == 7 ? "x" : "");
        MDB_val k = {(size_t)kl, key}, v = {(size_t)vl, val};
        assert_int_equal(mdb_put(txn, dups, &k, &v, 0), 0);
        uint64_t n = i * 7919;
        MDB_val fv = {8, &n};
        k.mv_size = (size_t)snprintf(key, sizeof key, "f%llu", (unsigned long long)(i % 3));
        assert_int_equal(mdb_put(txn, fixed, &k, &fv, 0), 0);
        MDB_val ik = {8, &n}, iv = {(size_t)vl, val};
        assert_int_equal(mdb_put(txn, ints, &ik, &iv, 0), 0);
        k.mv_size = (size_t)kl;
        MDB_val rv = {i % 500 == 0 ? sizeof big : (size_t)vl, i % 500 == 0 ? big : val};
        assert_int_equal(mdb_put(txn, rev, &k, &rv, 0), 0);
    }
    for (uint64_t n = 1; n <= 3; n++) { /* few fixed-size duplicates: a sub-page */
        MDB_val gk = {1, "g"}, gv = {8, &n};
        assert_int_equal(mdb_put(txn, fixed, &gk, &gv, 0), 0);
    }
    assert_int_equal(mdb_txn_commit(txn), 0);
    /* A second commit frees pages: the free list has entries. */
    assert_int_equal(mdb_txn_begin(menv, NULL, 0, &txn), 0);
    MDB_val k = {9, "key-00001"};
    assert_int_equal(mdb_del(txn, dups, &k, NULL), 0);
    assert_int_equal(mdb_txn_commit(txn), 0);
    mdb_env_close(menv);
    coffer_verify_report *r = verify_env(env);
    if (coffer_verify_report_count(r) != 1)
        print_report(r);
    assert_int_equal(coffer_verify_report_count(r), 1);
    assert_int_equal(coffer_verify_report_kind(r, 0), COFFER_VERIFY_HEADER);
    assert_non_null(strstr(coffer_verify_report_message(r, 0), "not a Coffer database"));
    coffer_verify_report_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TS_TEST_ALL_MODES_SETUP(test_sound_every_kind, setup),
        TS_TEST_FILE_MODES_SETUP(test_sound_empty_and_large, setup),
        TS_TEST_EMPTY(test_errors_without_report),
        TS_TEST_EMPTY(test_raw_lmdb_layouts),
        TS_TEST_MODE_SETUP(test_damaged_meta, setup, ts_mode_plain, "plain"),
        TS_TEST_MODE_SETUP(test_meta_on_the_wrong_page, setup, ts_mode_plain, "plain"),
        TS_TEST_MODE_SETUP(test_truncated_and_foreign, setup, ts_mode_plain, "plain"),
        TS_TEST_MODE_SETUP(test_damaged_page_header, setup, ts_mode_plain, "plain"),
        TS_TEST_MODE_SETUP(test_damaged_node_flags_and_order, setup, ts_mode_plain, "plain"),
        TS_TEST_MODE_SETUP(test_damaged_overflow_and_shared_page, setup, ts_mode_plain, "plain"),
        TS_TEST_MODE_SETUP(test_verify_on_open_and_seed, setup, ts_mode_plain, "plain"),
        TS_TEST_MODE_SETUP(test_lmdb_assertion_names_the_file, setup, ts_mode_plain, "plain"),
        TS_TEST_FILE_MODES_SETUP(test_damaged_record, setup),
        TS_TEST_MODE_SETUP(test_invalid_utf8_string, setup, ts_mode_plain, "plain"),
        TS_TEST_FILE_MODES_SETUP(test_missing_index_entry, setup),
        TS_TEST_FILE_MODES_SETUP(test_primary_key_entry_missing, setup),
        TS_TEST_FILE_MODES_SETUP(test_dangling_link_and_backlinks, setup),
        TS_TEST_FILE_MODES_SETUP(test_damaged_counter_and_log, setup),
        TS_TEST_FILE_MODES_SETUP(test_missing_schema, setup),
        TS_TEST_MODE_SETUP(test_schema_names_missing_sub_databases, setup, ts_mode_plain, "plain"),
        TS_TEST_FILE_MODES_SETUP(test_header_flag_disagrees_with_key_check, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
