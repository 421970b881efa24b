/* test_copy.c — coffer_db_write_copy with every combination of source and
 * copy keys, compaction on launch, and the active-version limit. */
#define _GNU_SOURCE
#include "test_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
};
static const coffer_class_schema schema[] = {{.name = "Owner", .properties = owner_props, .property_count = 9}};
enum { O_ID, O_SCORE, O_NOTE, O_NUMS, O_WORDS, O_ATTRS, O_ANY, O_FRIEND, O_FANS };
#define N_OWNERS 40

static void fill(coffer_db *db)
{
    coffer_txn *txn = ts_begin(db, COFFER_TXN_WRITE);
    coffer_class_id owner = ts_class(db, "Owner");
    for (int i = 0; i < N_OWNERS; i++) {
        char id[32], note[32], w1[16];
        snprintf(id, sizeof id, "owner-%03d", i);
        snprintf(note, sizeof note, "note %d", i);
        snprintf(w1, sizeof w1, "w%d", i % 7);
        coffer_value nums[3] = {coffer_value_int(i), coffer_value_int(i * 2), coffer_value_int(-i)};
        coffer_value words[2] = {ts_str(w1), ts_str("common")};
        coffer_map_entry attrs[2] = {{{"colour", 6}, ts_str(i % 2 ? "red" : "blue")}, {{"size", 4}, coffer_value_null()}};
        coffer_value inner[2] = {coffer_value_int(i), ts_str("nested")};
        coffer_value any = i % 3 == 0 ? coffer_value_list(inner, 2) : i % 3 == 1 ? coffer_value_double(i / 4.0) : ts_str(note);
        coffer_field f[] = {
            ts_field(O_ID, ts_str(id)), ts_field(O_SCORE, coffer_value_int(i % 5)),
            ts_field(O_NOTE, i % 4 ? ts_str(note) : coffer_value_null()), ts_field(O_NUMS, coffer_value_list(nums, 3)),
            ts_field(O_WORDS, coffer_value_list(words, 2)), ts_field(O_ATTRS, coffer_value_map(attrs, 2)), ts_field(O_ANY, any),
            ts_field(O_FRIEND, i >= 3 ? coffer_value_link(owner, 1 + (uint64_t)(i % 3)) : coffer_value_null()),
        };
        assert_ok(coffer_object_create(txn, owner, f, 8, COFFER_UPDATE_ERROR, NULL));
    }
    /* Gaps in the keys: copies keep object keys as they are. */
    coffer_object *obj;
    assert_ok(coffer_object_get(txn, owner, 10, &obj));
    assert_ok(coffer_object_delete(obj));
    ts_commit(txn);
}

static void compare_lists(coffer_list *a, coffer_list *b)
{
    uint64_t na, nb;
    assert_ok(coffer_list_count(a, &na));
    assert_ok(coffer_list_count(b, &nb));
    assert_int_equal(na, nb);
    for (uint64_t i = 0; i < na; i++) {
        coffer_value va, vb;
        assert_ok(coffer_list_get(a, i, &va));
        assert_ok(coffer_list_get(b, i, &vb));
        assert_true(ts_value_equal(&va, &vb));
    }
}

/* Every object and property of `a` equals the one with the same key in `b`. */
static void compare_dbs(coffer_db *a, coffer_db *b)
{
    coffer_txn *ta = ts_begin(a, COFFER_TXN_READ), *tb = ts_begin(b, COFFER_TXN_READ);
    coffer_class_id cls = ts_class(a, "Owner"), clsb = ts_class(b, "Owner");
    assert_int_equal(ts_count(ta, cls), ts_count(tb, clsb));
    coffer_iter *it;
    assert_ok(coffer_class_iterate(ta, cls, &it));
    coffer_object *oa;
    size_t seen = 0;
    while (ts_next(it, &oa)) {
        coffer_object *ob;
        assert_ok(coffer_object_get(tb, clsb, coffer_object_key_of(oa), &ob));
        for (coffer_property_id p = 0; p <= O_FANS; p++) {
            coffer_value va, vb;
            assert_ok(coffer_object_get_value(oa, p, &va));
            assert_ok(coffer_object_get_value(ob, p, &vb));
            if (va.type == COFFER_TYPE_LIST || va.type == COFFER_TYPE_SET || va.type == COFFER_TYPE_MAP) {
                assert_int_equal(va.type, vb.type);
                assert_int_equal(va.u.list.count, vb.u.list.count);
            } else {
                assert_true(ts_value_equal(&va, &vb));
            }
        }
        coffer_list *la, *lb;
        assert_ok(coffer_object_get_list(oa, O_NUMS, &la));
        assert_ok(coffer_object_get_list(ob, O_NUMS, &lb));
        compare_lists(la, lb);
        coffer_value any;
        assert_ok(coffer_object_get_value(oa, O_ANY, &any));
        if (any.type == COFFER_TYPE_LIST) {
            assert_ok(coffer_object_get_list(oa, O_ANY, &la));
            assert_ok(coffer_object_get_list(ob, O_ANY, &lb));
            compare_lists(la, lb);
        }
        /* Sets and maps are found by their (re-hashed) keys. */
        coffer_set *sa, *sb;
        assert_ok(coffer_object_get_set(oa, O_WORDS, &sa));
        assert_ok(coffer_object_get_set(ob, O_WORDS, &sb));
        uint64_t n;
        assert_ok(coffer_set_count(sa, &n));
        for (uint64_t i = 0; i < n; i++) {
            coffer_value v;
            int found = 0;
            assert_ok(coffer_set_get(sa, i, &v));
            assert_ok(coffer_set_contains(sb, &v, &found));
            assert_true(found);
        }
        coffer_map *ma, *mb;
        assert_ok(coffer_object_get_map(oa, O_ATTRS, &ma));
        assert_ok(coffer_object_get_map(ob, O_ATTRS, &mb));
        coffer_value va, vb;
        assert_ok(coffer_map_get(ma, "colour", SIZE_MAX, &va));
        assert_ok(coffer_map_get(mb, "colour", SIZE_MAX, &vb));
        assert_true(ts_value_equal(&va, &vb));
        coffer_object_release(ob);
        seen++;
    }
    assert_int_equal(seen, N_OWNERS - 1);
    /* Indexes of the copy answer: primary key and secondary. */
    coffer_value pk = ts_str("owner-007"), score = coffer_value_int(3);
    coffer_object *found;
    assert_ok(coffer_object_find(tb, clsb, &pk, &found));
    assert_int_equal(coffer_object_key_of(found), 8);
    assert_int_equal(ts_index_count(tb, clsb, O_SCORE, &score), ts_index_count(ta, cls, O_SCORE, &score));
    coffer_txn_free(ta);
    coffer_txn_free(tb);
}

static coffer_status open_copy(const char *path, const uint8_t *key, coffer_db **out)
{
    return ts_open_path(path, key, 0, NULL, 0, 0, out);
}

TS_ENV_TEST(test_write_copy_every_key_combination)
{
    fill(env->db);
    uint64_t source_version = ts_version_of(env->db);
    const uint8_t *keys[] = {NULL, ts_key, ts_other_key};
    for (int k = 0; k < 3; k++) {
        char name[64], path[TS_PATH_MAX];
        snprintf(name, sizeof name, "copy-%d.coffer", k);
        ts_join(path, env->dir, name);
        assert_ok(coffer_db_write_copy(env->db, path, keys[k], keys[k] ? 64 : 0));
        coffer_db *copy;
        if (keys[k]) {
            assert_status(open_copy(path, NULL, &copy), COFFER_ERR_KEY_REQUIRED);
            assert_status(open_copy(path, keys[k] == ts_key ? ts_other_key : ts_key, &copy), COFFER_ERR_WRONG_KEY);
        } else {
            assert_status(open_copy(path, ts_key, &copy), COFFER_ERR_NOT_ENCRYPTED);
        }
        assert_ok(open_copy(path, keys[k], &copy));
        assert_int_equal(coffer_db_is_encrypted(copy), keys[k] != NULL);
        compare_dbs(env->db, copy);
        /* Versions go on from the source's: a copy never goes back to 1. */
        assert_int_equal(ts_version_of(copy), source_version);
        coffer_verify_report *report;
        assert_ok(coffer_db_verify(copy, &report));
        assert_int_equal(coffer_verify_report_count(report), 0);
        coffer_verify_report_free(report);
        /* The copy is a database of its own: writes there stay there. */
        coffer_txn *txn = ts_begin(copy, COFFER_TXN_WRITE);
        coffer_set *set;
        coffer_object *obj;
        assert_ok(coffer_object_get(txn, 0, 1, &obj));
        assert_ok(coffer_object_get_set(obj, O_WORDS, &set));
        int inserted = 1;
        coffer_value common = ts_str("common");
        assert_ok(coffer_set_insert(set, &common, &inserted));
        assert_int_equal(inserted, 0);
        coffer_field f[] = {ts_field(O_ID, ts_str("new")), ts_field(O_SCORE, coffer_value_int(3))};
        assert_ok(coffer_object_create(txn, 0, f, 2, COFFER_UPDATE_ERROR, &obj));
        assert_int_equal(coffer_object_key_of(obj), N_OWNERS + 1);
        ts_commit(txn);
        assert_int_equal(ts_version_of(copy), source_version + 1);
        assert_int_equal(ts_count_of(copy, "Owner"), N_OWNERS);
        assert_int_equal(ts_count_of(env->db, "Owner"), N_OWNERS - 1);
        coffer_close(copy);
    }
}

TS_ENV_TEST(test_write_copy_refuses_existing_and_bad_input)
{
    fill(env->db);
    char path[TS_PATH_MAX];
    ts_join(path, env->dir, "taken.coffer");
    assert_int_equal(ts_write_file(path, "keep", 4), 0);
    assert_status(coffer_db_write_copy(env->db, path, NULL, 0), COFFER_ERR_IO);
    assert_error_contains("taken.coffer");
    assert_error_contains("already exists");
    assert_status(coffer_db_write_copy(env->db, path, ts_key, 64), COFFER_ERR_IO);
    size_t size;
    unsigned char *data = ts_read_file(path, &size);
    assert_int_equal(size, 4);
    assert_memory_equal(data, "keep", 4);
    free(data);
    ts_join(path, env->dir, "fresh.coffer");
    assert_status(coffer_db_write_copy(env->db, path, ts_key, 32), COFFER_ERR_INVALID_ARGUMENT);
    assert_error_contains("32");
    assert_status(coffer_db_write_copy(env->db, NULL, NULL, 0), COFFER_ERR_INVALID_ARGUMENT);
    assert_status(coffer_db_write_copy(NULL, path, NULL, 0), COFFER_ERR_INVALID_ARGUMENT);
    assert_false(ts_file_exists(path));
    ts_join(path, env->dir, "no-such-dir/copy.coffer");
    assert_status(coffer_db_write_copy(env->db, path, ts_key, 64), COFFER_ERR_IO);
    /* Nothing but the database's own files (data, lock, note) and the file
     * that was there. */
    assert_int_equal(ts_count_dir_entries(env->dir), env->mode == TS_MEMORY ? 1 : 4);
}

static int ts_setup_owner(void **state) { return ts_setup_schema(state, schema, 1); }

int main(void)
{
    const struct CMUnitTest tests[] = {
        TS_TEST_ALL_MODES_SETUP(test_write_copy_every_key_combination, ts_setup_owner),
        TS_TEST_ALL_MODES_SETUP(test_write_copy_refuses_existing_and_bad_input, ts_setup_owner),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
