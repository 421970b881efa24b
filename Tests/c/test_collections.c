/* test_collections.c — lists, sets and maps as properties, mixed values
 * with nested lists and maps, collection handles and their invalidation,
 * transactions around collection changes. Every test runs on plain,
 * encrypted and in-memory databases. */
#define _GNU_SOURCE
#include "test_support.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OPT COFFER_PROPERTY_OPTIONAL
#define LIST_OF COFFER_COLLECTION_LIST
#define SET_OF COFFER_COLLECTION_SET
#define MAP_OF COFFER_COLLECTION_MAP

/* ------------------------------------------------------------------------ */
/* Schema                                                                    */
/* ------------------------------------------------------------------------ */

enum { I_N = 0, I_NAME, I_COUNT };
enum { O_V = 0, O_COUNT };

enum {
    H_NAME = 0,
    H_INTS,       /* list int */
    H_OPT_INTS,   /* list int? */
    H_STRINGS,    /* list string */
    H_ITEMS,      /* list Item */
    H_MIXED_LIST, /* list mixed */
    H_SET_BOOL,   /* sets of every scalar type, in coffer_type order */
    H_SET_INT,
    H_SET_FLOAT,
    H_SET_DOUBLE,
    H_SET_STRING,
    H_SET_BINARY,
    H_SET_DATE,
    H_SET_OID,
    H_SET_UUID,
    H_SET_DECIMAL,
    H_SET_OPT_INT, /* set int? */
    H_SET_ITEMS,   /* set Item */
    H_MAP_INT,     /* map int */
    H_MAP_OPT_STR, /* map string? */
    H_MAP_ITEMS,   /* map Item? */
    H_MAP_MIXED,   /* map mixed */
    H_ANY,         /* mixed */
    H_ANY2,        /* mixed */
    H_COUNT
};

static const coffer_property_schema item_props[I_COUNT] = {
    {.name = "n", .type = COFFER_TYPE_INT},
    {.name = "name", .type = COFFER_TYPE_STRING},
};

static const coffer_property_schema other_props[O_COUNT] = {
    {.name = "v", .type = COFFER_TYPE_INT},
};

static const coffer_property_schema holder_props[H_COUNT] = {
    {.name = "name", .type = COFFER_TYPE_STRING},
    {.name = "ints", .type = COFFER_TYPE_INT, .collection = LIST_OF},
    {.name = "optInts", .type = COFFER_TYPE_INT, .flags = OPT, .collection = LIST_OF},
    {.name = "strings", .type = COFFER_TYPE_STRING, .collection = LIST_OF},
    {.name = "items", .type = COFFER_TYPE_LINK, .collection = LIST_OF, .object_class = "Item"},
    {.name = "mixedList", .type = COFFER_TYPE_MIXED, .flags = OPT, .collection = LIST_OF},
    {.name = "setBool", .type = COFFER_TYPE_BOOL, .collection = SET_OF},
    {.name = "setInt", .type = COFFER_TYPE_INT, .collection = SET_OF},
    {.name = "setFloat", .type = COFFER_TYPE_FLOAT, .collection = SET_OF},
    {.name = "setDouble", .type = COFFER_TYPE_DOUBLE, .collection = SET_OF},
    {.name = "setString", .type = COFFER_TYPE_STRING, .collection = SET_OF},
    {.name = "setBinary", .type = COFFER_TYPE_BINARY, .collection = SET_OF},
    {.name = "setDate", .type = COFFER_TYPE_DATE, .collection = SET_OF},
    {.name = "setObjectId", .type = COFFER_TYPE_OBJECT_ID, .collection = SET_OF},
    {.name = "setUuid", .type = COFFER_TYPE_UUID, .collection = SET_OF},
    {.name = "setDecimal", .type = COFFER_TYPE_DECIMAL128, .collection = SET_OF},
    {.name = "setOptInt", .type = COFFER_TYPE_INT, .flags = OPT, .collection = SET_OF},
    {.name = "setItems", .type = COFFER_TYPE_LINK, .collection = SET_OF, .object_class = "Item"},
    {.name = "mapInt", .type = COFFER_TYPE_INT, .collection = MAP_OF},
    {.name = "mapOptStr", .type = COFFER_TYPE_STRING, .flags = OPT, .collection = MAP_OF},
    {.name = "mapItems", .type = COFFER_TYPE_LINK, .flags = OPT, .collection = MAP_OF, .object_class = "Item"},
    {.name = "mapMixed", .type = COFFER_TYPE_MIXED, .flags = OPT, .collection = MAP_OF},
    {.name = "any", .type = COFFER_TYPE_MIXED, .flags = OPT},
    {.name = "any2", .type = COFFER_TYPE_MIXED, .flags = OPT},
};

static const coffer_class_schema coll_schema[] = {
    {.name = "Item", .properties = item_props, .property_count = I_COUNT},
    {.name = "Other", .properties = other_props, .property_count = O_COUNT},
    {.name = "Holder", .properties = holder_props, .property_count = H_COUNT},
};
#define COLL_SCHEMA_COUNT (sizeof coll_schema / sizeof coll_schema[0])

static struct {
    coffer_class_id item, other, holder;
} C;

static const char *const class_names[] = {"Item", "Other", "Holder"};
static coffer_class_id *const class_ids[] = {&C.item, &C.other, &C.holder};

static int setup_coll(void **state)
{
    return ts_setup_schema_classes(state, coll_schema, COLL_SCHEMA_COUNT, 3, class_names, class_ids);
}

#define COLL_TEST(f) TS_TEST_ALL_MODES_SETUP(f, setup_coll)

static void reopen(ts_env *env)
{
    ts_env_reopen(env, coll_schema, COLL_SCHEMA_COUNT, 1);
    assert_int_equal(ts_find_classes(env->db, 3, class_names, class_ids), 0);
}

/* ------------------------------------------------------------------------ */
/* Helpers                                                                   */
/* ------------------------------------------------------------------------ */

static const uint8_t BIN_A[] = {0x00, 0x01, 0x00, 0xff};
static const uint8_t BIN_B[] = {0x00, 0x01, 0x00};
static const char UTF8_TEXT[] = "h\xc3\xa9llo \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x8e\x89";

static coffer_value decv(const char *text)
{
    coffer_decimal128 d = ts_dec(text);
    return coffer_value_decimal128(d.w[0], d.w[1]);
}

/* ts_value_equal extended to links, and to the counts of nested
 * collections read back. */
static int val_eq(const coffer_value *a, const coffer_value *b)
{
    if (a->type != b->type)
        return 0;
    switch (a->type) {
    case COFFER_TYPE_LINK: return a->u.link.class_id == b->u.link.class_id && a->u.link.key == b->u.link.key;
    case COFFER_TYPE_LIST:
    case COFFER_TYPE_SET: return a->u.list.count == b->u.list.count;
    case COFFER_TYPE_MAP: return a->u.map.count == b->u.map.count;
    default: return ts_value_equal(a, b);
    }
}

static const char *describe(const coffer_value *v, char *buf, size_t size)
{
    if (v->type == COFFER_TYPE_LINK)
        snprintf(buf, size, "link %u/%" PRIu64, (unsigned)v->u.link.class_id, v->u.link.key);
    else if (v->type == COFFER_TYPE_LIST || v->type == COFFER_TYPE_SET)
        snprintf(buf, size, "%s(%zu)", v->type == COFFER_TYPE_LIST ? "list" : "set", v->u.list.count);
    else if (v->type == COFFER_TYPE_MAP)
        snprintf(buf, size, "map(%zu)", v->u.map.count);
    else
        ts_value_describe(v, buf, size);
    return buf;
}

static void check_eq(const coffer_value *got, const coffer_value *want, const char *what, const char *file, int line)
{
    if (!val_eq(got, want)) {
        char a[160], b[160];
        print_error("%s:%d: %s: got %s, expected %s\n", file, line, what, describe(got, a, sizeof a),
                    describe(want, b, sizeof b));
        _fail(file, line);
    }
    if (got->type == COFFER_TYPE_STRING &&
        (got->u.string.data == NULL || ((const char *)got->u.string.data)[got->u.string.size] != '\0')) {
        print_error("%s:%d: %s: string read back is not NUL-terminated\n", file, line, what);
        _fail(file, line);
    }
}

/* A nested collection as read back: type and count only. */
static coffer_value counted(coffer_type type, size_t count)
{
    coffer_value v;
    memset(&v, 0, sizeof v);
    v.type = type;
    if (type == COFFER_TYPE_MAP)
        v.u.map.count = count;
    else
        v.u.list.count = count;
    return v;
}

#define assert_list_item(list, i, expected) check_list_item((list), (i), (expected), __FILE__, __LINE__)
static void check_list_item(coffer_list *list, uint64_t i, coffer_value expected, const char *file, int line)
{
    coffer_value got;
    memset(&got, 0, sizeof got);
    ts_check_status(coffer_list_get(list, i, &got), COFFER_OK, "coffer_list_get", file, line);
    char what[64];
    snprintf(what, sizeof what, "list element %" PRIu64, i);
    check_eq(&got, &expected, what, file, line);
}

#define assert_map_item(map, key, expected) check_map_item((map), (key), (expected), __FILE__, __LINE__)
static void check_map_item(coffer_map *map, const char *key, coffer_value expected, const char *file, int line)
{
    coffer_value got;
    memset(&got, 0, sizeof got);
    ts_check_status(coffer_map_get(map, key, SIZE_MAX, &got), COFFER_OK, "coffer_map_get", file, line);
    char what[128];
    snprintf(what, sizeof what, "map value \"%s\"", key);
    check_eq(&got, &expected, what, file, line);
}

#define assert_prop(obj, p, expected) check_prop((obj), (p), (expected), __FILE__, __LINE__)
static void check_prop(coffer_object *obj, coffer_property_id p, coffer_value expected, const char *file, int line)
{
    coffer_value got;
    memset(&got, 0, sizeof got);
    ts_check_status(coffer_object_get_value(obj, p, &got), COFFER_OK, "coffer_object_get_value", file, line);
    char what[64];
    snprintf(what, sizeof what, "property %u", (unsigned)p);
    check_eq(&got, &expected, what, file, line);
}

/* Asserts an int list holds exactly want[0..n). */
#define assert_ints(list, ...)                                                          \
    do {                                                                                \
        const int64_t want_[] = {__VA_ARGS__};                                          \
        check_ints((list), want_, sizeof want_ / sizeof want_[0], __FILE__, __LINE__);  \
    } while (0)
static void check_ints(coffer_list *list, const int64_t *want, size_t n, const char *file, int line)
{
    uint64_t count = UINT64_MAX;
    ts_check_status(coffer_list_count(list, &count), COFFER_OK, "coffer_list_count", file, line);
    int bad = count != n;
    int64_t got[256];
    for (uint64_t i = 0; !bad && i < count && i < 256; i++) {
        coffer_value v;
        ts_check_status(coffer_list_get(list, i, &v), COFFER_OK, "coffer_list_get", file, line);
        if (v.type != COFFER_TYPE_INT)
            bad = 1;
        got[i] = v.u.integer;
        if (got[i] != want[i])
            bad = 1;
    }
    if (bad) {
        print_error("%s:%d: list has %" PRIu64 " elements, expected %zu:", file, line, count, n);
        for (size_t i = 0; i < n; i++)
            print_error(" %" PRId64, want[i]);
        print_error("\n");
        _fail(file, line);
    }
}

static coffer_object *new_holder(coffer_txn *txn, const char *name)
{
    coffer_field f[] = {ts_field(H_NAME, ts_str(name))};
    coffer_object *obj = ts_create(txn, C.holder, f, 1);
    return obj;
}

static coffer_object *holder_with(coffer_txn *txn, coffer_property_id p, coffer_value v)
{
    coffer_field f[] = {ts_field(H_NAME, ts_str("h")), ts_field(p, v)};
    coffer_object *obj = ts_create(txn, C.holder, f, 2);
    return obj;
}

static coffer_object *new_item(coffer_txn *txn, int64_t n)
{
    coffer_field f[] = {ts_field(I_N, coffer_value_int(n))};
    coffer_object *obj = ts_create(txn, C.item, f, 1);
    return obj;
}

static coffer_object *first_holder(coffer_txn *txn)
{
    coffer_iter *it = NULL;
    assert_ok(coffer_class_iterate(txn, C.holder, &it));
    coffer_object *obj = NULL;
    assert_true(ts_next(it, &obj));
    coffer_object_key key = coffer_object_key_of(obj);
    coffer_iter_free(it);
    obj = NULL;
    assert_ok(coffer_object_get(txn, C.holder, key, &obj));
    return obj;
}

/* Opening a collection property and counting it take the same steps for
 * lists, sets and maps; generated once per kind: open_list/open_set/open_map
 * (checks the handle is valid) and lcount/scount/mcount. */
#define COLLECTION_HELPERS(kind, prefix)                                    \
    static coffer_##kind *open_##kind(coffer_object *obj, coffer_property_id p) \
    {                                                                       \
        coffer_##kind *c = NULL;                                            \
        assert_ok(coffer_object_get_##kind(obj, p, &c));                    \
        assert_non_null(c);                                                 \
        assert_true(coffer_##kind##_is_valid(c));                           \
        return c;                                                           \
    }                                                                       \
    static uint64_t prefix##count(coffer_##kind *c)                         \
    {                                                                       \
        uint64_t n = UINT64_MAX;                                            \
        assert_ok(coffer_##kind##_count(c, &n));                            \
        return n;                                                           \
    }
COLLECTION_HELPERS(list, l)
COLLECTION_HELPERS(set, s)
COLLECTION_HELPERS(map, m)

/* contains, insert and remove share one signature and report 0 or 1. */
typedef coffer_status (*set_op_fn)(coffer_set *, const coffer_value *, int *);
static int set_op(set_op_fn op, coffer_set *s, coffer_value v)
{
    int result = -1;
    assert_ok(op(s, &v, &result));
    assert_true(result == 0 || result == 1);
    return result;
}
#define set_has(s, v) set_op(coffer_set_contains, (s), (v))
#define set_add(s, v) set_op(coffer_set_insert, (s), (v))
#define set_del(s, v) set_op(coffer_set_remove, (s), (v))

static void lappend(coffer_list *l, coffer_value v) { assert_ok(coffer_list_append(l, &v)); }
static void mset(coffer_map *m, const char *key, coffer_value v) { assert_ok(coffer_map_set(m, key, SIZE_MAX, &v)); }

/* Asserts an int set holds exactly the values want[0..n), in any order,
 * each once through coffer_set_get. */
#define assert_int_set(set, ...)                                                        \
    do {                                                                                \
        const int64_t want_[] = {__VA_ARGS__};                                          \
        check_int_set((set), want_, sizeof want_ / sizeof want_[0], __FILE__, __LINE__); \
    } while (0)
#define assert_int_set_empty(set) check_int_set((set), NULL, 0, __FILE__, __LINE__)
static void check_int_set(coffer_set *set, const int64_t *want, size_t n, const char *file, int line)
{
    uint64_t count = UINT64_MAX;
    ts_check_status(coffer_set_count(set, &count), COFFER_OK, "coffer_set_count", file, line);
    int bad = count != n;
    int seen[64] = {0};
    for (uint64_t i = 0; !bad && i < count; i++) {
        coffer_value v;
        ts_check_status(coffer_set_get(set, i, &v), COFFER_OK, "coffer_set_get", file, line);
        size_t j = 0;
        while (j < n && !(v.type == COFFER_TYPE_INT && v.u.integer == want[j]))
            j++;
        if (j == n || seen[j]++)
            bad = 1;
    }
    for (size_t j = 0; !bad && j < n; j++) {
        coffer_value v = coffer_value_int(want[j]);
        int found = 0;
        ts_check_status(coffer_set_contains(set, &v, &found), COFFER_OK, "coffer_set_contains", file, line);
        if (!found)
            bad = 1;
    }
    if (bad) {
        print_error("%s:%d: set has %" PRIu64 " elements, expected %zu:", file, line, count, n);
        for (size_t i = 0; i < n; i++)
            print_error(" %" PRId64, want[i]);
        print_error("\n");
        _fail(file, line);
    }
}

/* ------------------------------------------------------------------------ */
/* Lists                                                                     */
/* ------------------------------------------------------------------------ */

TS_ENV_TEST(test_list_basic)
{
    coffer_txn *w = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_value init[] = {coffer_value_int(1), coffer_value_int(2), coffer_value_int(3)};
    coffer_object *h = holder_with(w, H_INTS, coffer_value_list(init, 3));

    /* the property reads as a list with its count and no items */
    coffer_value v;
    memset(&v, 0x5a, sizeof v);
    assert_ok(coffer_object_get_value(h, H_INTS, &v));
    assert_int_equal(v.type, COFFER_TYPE_LIST);
    assert_int_equal(v.u.list.count, 3);
    assert_null(v.u.list.items);
    /* a list never written reads as an empty list */
    assert_ok(coffer_object_get_value(h, H_STRINGS, &v));
    assert_int_equal(v.type, COFFER_TYPE_LIST);
    assert_int_equal(v.u.list.count, 0);

    coffer_list *l = open_list(h, H_INTS);
    assert_ints(l, 1, 2, 3);
    lappend(l, coffer_value_int(4));
    assert_ints(l, 1, 2, 3, 4);
    coffer_value x = coffer_value_int(0);
    assert_ok(coffer_list_insert(l, 0, &x));
    x = coffer_value_int(99);
    assert_ok(coffer_list_insert(l, 2, &x));
    assert_ints(l, 0, 1, 99, 2, 3, 4);
    x = coffer_value_int(5);
    assert_ok(coffer_list_insert(l, 6, &x)); /* at count: appends */
    assert_ints(l, 0, 1, 99, 2, 3, 4, 5);
    x = coffer_value_int(100);
    assert_ok(coffer_list_set(l, 2, &x));
    assert_ints(l, 0, 1, 100, 2, 3, 4, 5);
    assert_ok(coffer_list_remove(l, 0));
    assert_ok(coffer_list_remove(l, 5));
    assert_ints(l, 1, 100, 2, 3, 4);
    assert_ok(coffer_list_move(l, 0, 4));
    assert_ints(l, 100, 2, 3, 4, 1);
    assert_ok(coffer_list_move(l, 4, 0));
    assert_ints(l, 1, 100, 2, 3, 4);
    assert_ok(coffer_list_move(l, 1, 3));
    assert_ints(l, 1, 2, 3, 100, 4);
    assert_ok(coffer_list_move(l, 2, 2));
    assert_ints(l, 1, 2, 3, 100, 4);
    assert_ok(coffer_list_swap(l, 0, 4));
    assert_ints(l, 4, 2, 3, 100, 1);
    assert_ok(coffer_list_swap(l, 3, 1));
    assert_ints(l, 4, 100, 3, 2, 1);
    assert_ok(coffer_list_swap(l, 2, 2));
    assert_ints(l, 4, 100, 3, 2, 1);
    /* the object reads the new count */
    assert_prop(h, H_INTS, counted(COFFER_TYPE_LIST, 5));
    /* a second handle on the same list sees the same */
    coffer_list *l2 = open_list(h, H_INTS);
    assert_ints(l2, 4, 100, 3, 2, 1);
    coffer_list_release(l2);
    coffer_object_key hk = coffer_object_key_of(h);
    ts_commit(w);

    coffer_txn *r = ts_begin(env->db, COFFER_TXN_READ);
    h = NULL;
    assert_ok(coffer_object_get(r, C.holder, hk, &h));
    l = open_list(h, H_INTS);
    assert_ints(l, 4, 100, 3, 2, 1);
    coffer_txn_free(r);

    /* clear, and replacing the whole list through set_value */
    w = ts_begin(env->db, COFFER_TXN_WRITE);
    assert_ok(coffer_object_get(w, C.holder, hk, &h));
    l = open_list(h, H_INTS);
    assert_ok(coffer_list_clear(l));
    assert_int_equal(lcount(l), 0);
    assert_ok(coffer_list_clear(l)); /* clearing an empty list is fine */
    coffer_value repl[] = {coffer_value_int(7), coffer_value_int(8)};
    coffer_value rv = coffer_value_list(repl, 2);
    assert_ok(coffer_object_set_value(h, H_INTS, &rv));
    coffer_list *l3 = open_list(h, H_INTS);
    assert_ints(l3, 7, 8);
    rv = coffer_value_list(NULL, 0);
    assert_ok(coffer_object_set_value(h, H_INTS, &rv));
    coffer_list_release(l3);
    l3 = open_list(h, H_INTS);
    assert_int_equal(lcount(l3), 0);
    ts_commit(w);
}

TS_ENV_TEST(test_list_index_errors)
{
    coffer_txn *w = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_value init[] = {coffer_value_int(1), coffer_value_int(2), coffer_value_int(3)};
    coffer_object *h = holder_with(w, H_INTS, coffer_value_list(init, 3));
    coffer_list *l = open_list(h, H_INTS);
    coffer_value v, x = coffer_value_int(9);

    assert_status(coffer_list_get(l, 7, &v), COFFER_ERR_INVALID_ARGUMENT);
    assert_error_contains("7");
    assert_error_contains("3");
    assert_status(coffer_list_get(l, 3, &v), COFFER_ERR_INVALID_ARGUMENT);
    assert_status(coffer_list_get(l, UINT64_MAX, &v), COFFER_ERR_INVALID_ARGUMENT);
    assert_status(coffer_list_set(l, 3, &x), COFFER_ERR_INVALID_ARGUMENT);
    assert_status(coffer_list_insert(l, 4, &x), COFFER_ERR_INVALID_ARGUMENT);
    assert_error_contains("4");
    assert_status(coffer_list_remove(l, 3), COFFER_ERR_INVALID_ARGUMENT);
    assert_status(coffer_list_move(l, 0, 3), COFFER_ERR_INVALID_ARGUMENT);
    assert_status(coffer_list_move(l, 3, 0), COFFER_ERR_INVALID_ARGUMENT);
    assert_status(coffer_list_swap(l, 0, 3), COFFER_ERR_INVALID_ARGUMENT);
    assert_status(coffer_list_swap(l, 5, 1), COFFER_ERR_INVALID_ARGUMENT);
    assert_ints(l, 1, 2, 3);

    /* NULL arguments */
    uint64_t n;
    assert_status(coffer_list_count(NULL, &n), COFFER_ERR_INVALID_ARGUMENT);
    assert_status(coffer_list_count(l, NULL), COFFER_ERR_INVALID_ARGUMENT);
    assert_status(coffer_list_get(l, 0, NULL), COFFER_ERR_INVALID_ARGUMENT);
    assert_status(coffer_list_append(l, NULL), COFFER_ERR_INVALID_ARGUMENT);
    assert_status(coffer_list_append(NULL, &x), COFFER_ERR_INVALID_ARGUMENT);
    assert_status(coffer_object_get_list(h, H_INTS, NULL), COFFER_ERR_INVALID_ARGUMENT);
    coffer_list *bad = NULL;
    assert_status(coffer_object_get_list(NULL, H_INTS, &bad), COFFER_ERR_INVALID_ARGUMENT);
    assert_status(coffer_object_get_list(h, H_COUNT + 3, &bad), COFFER_ERR_INVALID_ARGUMENT);
    assert_false(coffer_list_is_valid(NULL));
    coffer_list_release(NULL);
    coffer_set_release(NULL);
    coffer_map_release(NULL);

    /* an empty list */
    assert_ok(coffer_list_clear(l));
    assert_status(coffer_list_get(l, 0, &v), COFFER_ERR_INVALID_ARGUMENT);
    assert_status(coffer_list_remove(l, 0), COFFER_ERR_INVALID_ARGUMENT);
    assert_status(coffer_list_set(l, 0, &x), COFFER_ERR_INVALID_ARGUMENT);
    assert_status(coffer_list_move(l, 0, 0), COFFER_ERR_INVALID_ARGUMENT);
    assert_ok(coffer_list_insert(l, 0, &x));
    assert_ints(l, 9);
    ts_commit(w);
}

TS_ENV_TEST(test_list_types)
{
    coffer_txn *w = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_object *h = new_holder(w, "h");
    coffer_object *other = ts_create(w, C.other, NULL, 0);

    /* strings: UTF-8, empty, binary-looking */
    coffer_list *ls = open_list(h, H_STRINGS);
    lappend(ls, coffer_value_string(UTF8_TEXT, SIZE_MAX));
    lappend(ls, coffer_value_string(NULL, 0));
    lappend(ls, ts_str("third"));
    assert_list_item(ls, 0, coffer_value_string(UTF8_TEXT, SIZE_MAX));
    assert_list_item(ls, 1, ts_str(""));
    assert_list_item(ls, 2, ts_str("third"));
    coffer_value bad = coffer_value_int(1);
    assert_status(coffer_list_append(ls, &bad), COFFER_ERR_TYPE);
    assert_error_contains("strings");
    assert_error_contains("Holder");
    bad = coffer_value_null();
    assert_status(coffer_list_append(ls, &bad), COFFER_ERR_TYPE);
    assert_error_contains("strings");
    bad = coffer_value_string("\xff\xfe", 2);
    assert_not_ok(coffer_list_append(ls, &bad));
    assert_int_equal(lcount(ls), 3);

    /* ints: null only in the optional list */
    coffer_list *li = open_list(h, H_INTS);
    bad = coffer_value_null();
    assert_status(coffer_list_append(li, &bad), COFFER_ERR_TYPE);
    assert_error_contains("ints");
    bad = ts_str("1");
    assert_status(coffer_list_insert(li, 0, &bad), COFFER_ERR_TYPE);
    assert_error_contains("ints");
    bad = coffer_value_double(1.0);
    assert_status(coffer_list_append(li, &bad), COFFER_ERR_TYPE);
    lappend(li, coffer_value_int(5));
    bad = coffer_value_bool(true);
    assert_status(coffer_list_set(li, 0, &bad), COFFER_ERR_TYPE);
    assert_error_contains("ints");
    bad = coffer_value_link(C.item, 0);
    assert_status(coffer_list_set(li, 0, &bad), COFFER_ERR_TYPE);
    assert_ints(li, 5);
    coffer_list *lo = open_list(h, H_OPT_INTS);
    lappend(lo, coffer_value_null());
    lappend(lo, coffer_value_int(-1));
    assert_list_item(lo, 0, coffer_value_null());
    assert_list_item(lo, 1, coffer_value_int(-1));

    /* links: the right class only */
    coffer_list *lit = open_list(h, H_ITEMS);
    coffer_object *item = new_item(w, 1);
    lappend(lit, coffer_value_object(item));
    lappend(lit, coffer_value_link(C.item, coffer_object_key_of(item)));
    assert_list_item(lit, 0, coffer_value_link(C.item, coffer_object_key_of(item)));
    assert_list_item(lit, 1, coffer_value_link(C.item, coffer_object_key_of(item)));
    bad = coffer_value_object(other);
    assert_status(coffer_list_append(lit, &bad), COFFER_ERR_TYPE);
    assert_error_contains("items");
    bad = coffer_value_link(C.item, coffer_object_key_of(item) + 100);
    assert_status(coffer_list_append(lit, &bad), COFFER_ERR_NOT_FOUND);
    assert_error_contains("items");
    assert_int_equal(lcount(lit), 2);

    /* wrong values at create write nothing */
    coffer_value mixed_up[] = {coffer_value_int(1), ts_str("x")};
    coffer_field f[] = {ts_field(H_NAME, ts_str("bad")), ts_field(H_INTS, coffer_value_list(mixed_up, 2))};
    assert_status(coffer_object_create(w, C.holder, f, 2, COFFER_UPDATE_ERROR, NULL), COFFER_ERR_TYPE);
    assert_error_contains("ints");
    assert_error_contains("Holder");
    f[1] = ts_field(H_INTS, coffer_value_int(3));
    assert_status(coffer_object_create(w, C.holder, f, 2, COFFER_UPDATE_ERROR, NULL), COFFER_ERR_TYPE);
    assert_error_contains("ints");
    f[1] = ts_field(H_INTS, coffer_value_map(NULL, 0));
    assert_status(coffer_object_create(w, C.holder, f, 2, COFFER_UPDATE_ERROR, NULL), COFFER_ERR_TYPE);
    assert_error_contains("ints");
    coffer_field g[] = {ts_field(H_NAME, coffer_value_list(mixed_up, 1))};
    assert_status(coffer_object_create(w, C.holder, g, 1, COFFER_UPDATE_ERROR, NULL), COFFER_ERR_TYPE);
    assert_error_contains("name");
    assert_int_equal(ts_count(w, C.holder), 1);

    /* opening with the wrong kind */
    coffer_list *l = NULL;
    coffer_set *s = NULL;
    coffer_map *m = NULL;
    assert_status(coffer_object_get_list(h, H_NAME, &l), COFFER_ERR_TYPE);
    assert_error_contains("name");
    assert_status(coffer_object_get_list(h, H_SET_INT, &l), COFFER_ERR_TYPE);
    assert_error_contains("setInt");
    assert_status(coffer_object_get_list(h, H_MAP_INT, &l), COFFER_ERR_TYPE);
    assert_error_contains("mapInt");
    assert_status(coffer_object_get_set(h, H_INTS, &s), COFFER_ERR_TYPE);
    assert_error_contains("ints");
    assert_status(coffer_object_get_map(h, H_INTS, &m), COFFER_ERR_TYPE);
    assert_error_contains("ints");
    assert_status(coffer_object_get_set(h, H_ANY, &s), COFFER_ERR_TYPE);
    /* a mixed property that does not hold a list */
    assert_status(coffer_object_get_list(h, H_ANY, &l), COFFER_ERR_TYPE);
    assert_error_contains("any");
    coffer_value iv = coffer_value_int(1);
    assert_ok(coffer_object_set_value(h, H_ANY, &iv));
    assert_status(coffer_object_get_list(h, H_ANY, &l), COFFER_ERR_TYPE);
    assert_error_contains("any");
    assert_status(coffer_object_get_map(h, H_ANY, &m), COFFER_ERR_TYPE);
    assert_error_contains("any");
    ts_commit(w);

    coffer_txn *r = ts_begin(env->db, COFFER_TXN_READ);
    h = first_holder(r);
    ls = open_list(h, H_STRINGS);
    assert_list_item(ls, 0, coffer_value_string(UTF8_TEXT, SIZE_MAX));
    assert_list_item(ls, 1, ts_str(""));
    lo = open_list(h, H_OPT_INTS);
    assert_list_item(lo, 0, coffer_value_null());
    coffer_txn_free(r);
}

/* A long list of links crossing many chunks, with random operations
 * checked against a model array. */
#define LONG_N 10000
#define LONG_OPS 2500

static void long_check_all(coffer_list *l, const coffer_object_key *model, size_t n)
{
    assert_int_equal(lcount(l), n);
    for (size_t i = 0; i < n; i++) {
        coffer_value v;
        assert_ok(coffer_list_get(l, i, &v));
        if (v.type != COFFER_TYPE_LINK || v.u.link.class_id != C.item || v.u.link.key != model[i]) {
            print_error("element %zu: type %d key %" PRIu64 ", expected key %" PRIu64 "\n", i, (int)v.type,
                        v.u.link.key, model[i]);
            fail();
        }
    }
}

TS_ENV_TEST(test_list_long_links)
{
    ts_seed(777);
    coffer_object_key *items = malloc(LONG_N * sizeof *items);
    coffer_object_key *model = malloc((LONG_N + LONG_OPS) * sizeof *model);
    assert_non_null(items);
    assert_non_null(model);

    coffer_txn *w = ts_begin(env->db, COFFER_TXN_WRITE);
    for (int i = 0; i < LONG_N; i++) {
        coffer_object *it = new_item(w, i);
        items[i] = coffer_object_key_of(it);
        coffer_object_release(it);
    }
    coffer_object *h = new_holder(w, "long");
    coffer_object_key hk = coffer_object_key_of(h);
    coffer_list *l = open_list(h, H_ITEMS);
    for (int i = 0; i < LONG_N; i++) {
        coffer_value v = coffer_value_link(C.item, items[i]);
        assert_ok(coffer_list_append(l, &v));
        model[i] = items[i];
    }
    size_t n = LONG_N;
    long_check_all(l, model, n);
    ts_commit(w);

    w = ts_begin(env->db, COFFER_TXN_WRITE);
    h = NULL;
    assert_ok(coffer_object_get(w, C.holder, hk, &h));
    l = open_list(h, H_ITEMS);
    for (int op = 0; op < LONG_OPS; op++) {
        uint64_t kind = ts_rand_below(7);
        coffer_object_key k = items[ts_rand_below(LONG_N)];
        coffer_value v = coffer_value_link(C.item, k);
        if (kind == 0 || n < 2) { /* insert */
            size_t at = (size_t)ts_rand_below(n + 1);
            assert_ok(coffer_list_insert(l, at, &v));
            memmove(&model[at + 1], &model[at], (n - at) * sizeof *model);
            model[at] = k;
            n++;
        } else if (kind == 1) { /* remove */
            size_t at = (size_t)ts_rand_below(n);
            assert_ok(coffer_list_remove(l, at));
            memmove(&model[at], &model[at + 1], (n - at - 1) * sizeof *model);
            n--;
        } else if (kind == 2) { /* set */
            size_t at = (size_t)ts_rand_below(n);
            assert_ok(coffer_list_set(l, at, &v));
            model[at] = k;
        } else if (kind == 3) { /* move */
            size_t from = (size_t)ts_rand_below(n), to = (size_t)ts_rand_below(n);
            assert_ok(coffer_list_move(l, from, to));
            coffer_object_key m = model[from];
            memmove(&model[from], &model[from + 1], (n - from - 1) * sizeof *model);
            memmove(&model[to + 1], &model[to], (n - 1 - to) * sizeof *model);
            model[to] = m;
        } else if (kind == 4) { /* swap */
            size_t a = (size_t)ts_rand_below(n), b = (size_t)ts_rand_below(n);
            assert_ok(coffer_list_swap(l, a, b));
            coffer_object_key t = model[a];
            model[a] = model[b];
            model[b] = t;
        } else if (kind == 5) { /* append */
            assert_ok(coffer_list_append(l, &v));
            model[n++] = k;
        } else { /* remove at either end */
            size_t at = ts_rand_below(2) ? 0 : n - 1;
            assert_ok(coffer_list_remove(l, at));
            memmove(&model[at], &model[at + 1], (n - at - 1) * sizeof *model);
            n--;
        }
        /* spot checks after every operation */
        assert_int_equal(lcount(l), n);
        for (int s = 0; s < 3; s++) {
            size_t at = (size_t)ts_rand_below(n);
            coffer_value got;
            assert_ok(coffer_list_get(l, at, &got));
            assert_int_equal(got.type, COFFER_TYPE_LINK);
            assert_int_equal(got.u.link.key, model[at]);
        }
        if (op % 500 == 499)
            long_check_all(l, model, n);
    }
    long_check_all(l, model, n);

    /* the backlink count of a few items matches the model */
    for (int s = 0; s < 5; s++) {
        coffer_object_key k = items[ts_rand_below(LONG_N)];
        uint64_t want = 0;
        for (size_t i = 0; i < n; i++)
            want += model[i] == k;
        coffer_object *it = NULL;
        assert_ok(coffer_object_get(w, C.item, k, &it));
        uint64_t got = UINT64_MAX;
        assert_ok(coffer_object_backlink_count_from(it, C.holder, H_ITEMS, &got));
        assert_int_equal(got, want);
        coffer_object_release(it);
    }
    ts_commit(w);

    coffer_txn *r = ts_begin(env->db, COFFER_TXN_READ);
    assert_ok(coffer_object_get(r, C.holder, hk, &h));
    l = open_list(h, H_ITEMS);
    long_check_all(l, model, n);
    coffer_txn_free(r);

    /* deleting items removes every occurrence */
    w = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_object_key victim = model[n / 2];
    coffer_object *vo = NULL;
    assert_ok(coffer_object_get(w, C.item, victim, &vo));
    assert_ok(coffer_object_delete(vo));
    size_t out = 0;
    for (size_t i = 0; i < n; i++)
        if (model[i] != victim)
            model[out++] = model[i];
    n = out;
    assert_ok(coffer_object_get(w, C.holder, hk, &h));
    l = open_list(h, H_ITEMS);
    long_check_all(l, model, n);
    ts_commit(w);

    if (env->mode != TS_MEMORY) {
        reopen(env);
        r = ts_begin(env->db, COFFER_TXN_READ);
        assert_ok(coffer_object_get(r, C.holder, hk, &h));
        l = open_list(h, H_ITEMS);
        long_check_all(l, model, n);
        coffer_txn_free(r);
    }

    /* clearing a long list */
    w = ts_begin(env->db, COFFER_TXN_WRITE);
    assert_ok(coffer_object_get(w, C.holder, hk, &h));
    l = open_list(h, H_ITEMS);
    assert_ok(coffer_list_clear(l));
    assert_int_equal(lcount(l), 0);
    ts_commit(w);
    r = ts_begin(env->db, COFFER_TXN_READ);
    assert_ok(coffer_object_get(r, C.holder, hk, &h));
    l = open_list(h, H_ITEMS);
    assert_int_equal(lcount(l), 0);
    assert_int_equal(ts_count(r, C.item), LONG_N - 1);
    coffer_txn_free(r);
    free(items);
    free(model);
}

/* Random operations on a long list of ints, over several transactions. */
TS_ENV_TEST(test_list_random_ints)
{
    ts_seed(4242);
    enum { START = 3000, OPS = 1500 };
    int64_t *model = malloc((START + OPS) * sizeof *model);
    assert_non_null(model);
    coffer_value *init = malloc(START * sizeof *init);
    assert_non_null(init);
    for (int i = 0; i < START; i++) {
        model[i] = (int64_t)ts_rand() >> 1;
        init[i] = coffer_value_int(model[i]);
    }
    size_t n = START;
    coffer_txn *w = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_object *h = holder_with(w, H_INTS, coffer_value_list(init, START));
    coffer_object_key hk = coffer_object_key_of(h);
    ts_commit(w);
    free(init);

    for (int round = 0; round < 5; round++) {
        w = ts_begin(env->db, COFFER_TXN_WRITE);
        assert_ok(coffer_object_get(w, C.holder, hk, &h));
        coffer_list *l = open_list(h, H_INTS);
        for (int op = 0; op < OPS / 5; op++) {
            int64_t x = (int64_t)ts_rand_below(1000000);
            coffer_value v = coffer_value_int(x);
            uint64_t kind = ts_rand_below(5);
            if (kind == 0 || n == 0) {
                size_t at = (size_t)ts_rand_below(n + 1);
                assert_ok(coffer_list_insert(l, at, &v));
                memmove(&model[at + 1], &model[at], (n - at) * sizeof *model);
                model[at] = x;
                n++;
            } else if (kind == 1) {
                size_t at = (size_t)ts_rand_below(n);
                assert_ok(coffer_list_remove(l, at));
                memmove(&model[at], &model[at + 1], (n - at - 1) * sizeof *model);
                n--;
            } else if (kind == 2) {
                size_t at = (size_t)ts_rand_below(n);
                assert_ok(coffer_list_set(l, at, &v));
                model[at] = x;
            } else if (kind == 3) {
                size_t from = (size_t)ts_rand_below(n), to = (size_t)ts_rand_below(n);
                assert_ok(coffer_list_move(l, from, to));
                int64_t m = model[from];
                memmove(&model[from], &model[from + 1], (n - from - 1) * sizeof *model);
                memmove(&model[to + 1], &model[to], (n - 1 - to) * sizeof *model);
                model[to] = m;
            } else {
                size_t a = (size_t)ts_rand_below(n), b = (size_t)ts_rand_below(n);
                assert_ok(coffer_list_swap(l, a, b));
                int64_t t = model[a];
                model[a] = model[b];
                model[b] = t;
            }
        }
        int keep = round != 2; /* one round is aborted */
        if (keep) {
            ts_commit(w);
        } else {
            assert_ok(coffer_txn_abort(w));
            coffer_txn_free(w);
            /* reload the model from the database */
            coffer_txn *r = ts_begin(env->db, COFFER_TXN_READ);
            assert_ok(coffer_object_get(r, C.holder, hk, &h));
            l = open_list(h, H_INTS);
            n = lcount(l);
            for (size_t i = 0; i < n; i++) {
                coffer_value v;
                assert_ok(coffer_list_get(l, i, &v));
                model[i] = v.u.integer;
            }
            coffer_txn_free(r);
            continue;
        }
        coffer_txn *r = ts_begin(env->db, COFFER_TXN_READ);
        assert_ok(coffer_object_get(r, C.holder, hk, &h));
        l = open_list(h, H_INTS);
        assert_int_equal(lcount(l), n);
        for (size_t i = 0; i < n; i++) {
            coffer_value v;
            assert_ok(coffer_list_get(l, i, &v));
            assert_int_equal(v.type, COFFER_TYPE_INT);
            if (v.u.integer != model[i]) {
                print_error("round %d element %zu: %" PRId64 ", expected %" PRId64 "\n", round, i, v.u.integer,
                            model[i]);
                fail();
            }
        }
        coffer_txn_free(r);
    }
    free(model);
}

/* ------------------------------------------------------------------------ */
/* Sets                                                                      */
/* ------------------------------------------------------------------------ */

typedef struct {
    coffer_property_id prop;
    const char *name;
    coffer_value a, b;
    coffer_value wrong;
} set_case;

static size_t set_cases(set_case *c)
{
    size_t n = 0;
    c[n++] = (set_case){H_SET_BOOL, "setBool", coffer_value_bool(true), coffer_value_bool(false), coffer_value_int(1)};
    c[n++] = (set_case){H_SET_INT, "setInt", coffer_value_int(INT64_MIN), coffer_value_int(42), coffer_value_double(42)};
    c[n++] = (set_case){H_SET_FLOAT, "setFloat", coffer_value_float(1.5f), coffer_value_float(-2.25f),
                        ts_str("1.5")};
    c[n++] = (set_case){H_SET_DOUBLE, "setDouble", coffer_value_double(1e300), coffer_value_double(-0.5),
                        ts_str("1e300")};
    c[n++] = (set_case){H_SET_STRING, "setString", coffer_value_string(UTF8_TEXT, SIZE_MAX), ts_str(""),
                        coffer_value_binary("x", 1)};
    c[n++] = (set_case){H_SET_BINARY, "setBinary", coffer_value_binary(BIN_A, sizeof BIN_A),
                        coffer_value_binary(BIN_B, sizeof BIN_B), ts_str("x")};
    c[n++] = (set_case){H_SET_DATE, "setDate", coffer_value_date(1700000000, 5), coffer_value_date(-1, -5),
                        coffer_value_int(0)};
    c[n++] = (set_case){H_SET_OID, "setObjectId", coffer_value_object_id(OID_A), coffer_value_object_id(OID_B),
                        coffer_value_uuid(UUID_A)};
    c[n++] = (set_case){H_SET_UUID, "setUuid", coffer_value_uuid(UUID_A), coffer_value_uuid(UUID_B),
                        coffer_value_object_id(OID_A)};
    c[n++] = (set_case){H_SET_DECIMAL, "setDecimal", decv("1.25"), decv("-3E-7"), ts_str("1.25")};
    return n;
}

TS_ENV_TEST(test_set_every_type)
{
    set_case cases[16];
    size_t nc = set_cases(cases);
    coffer_txn *w = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_object *h = new_holder(w, "h");
    for (size_t i = 0; i < nc; i++) {
        set_case *c = &cases[i];
        coffer_set *s = open_set(h, c->prop);
        assert_int_equal(scount(s), 0);
        assert_int_equal(set_add(s, c->a), 1);
        assert_int_equal(set_has(s, c->b), 0);
        assert_int_equal(set_add(s, c->b), 1);
        assert_int_equal(set_add(s, c->a), 0);
        assert_int_equal(set_add(s, c->b), 0);
        assert_int_equal(scount(s), 2);
        assert_int_equal(set_has(s, c->a), 1);
        assert_int_equal(set_has(s, c->b), 1);
        /* both elements are reachable by position, each once */
        coffer_value g0, g1;
        assert_ok(coffer_set_get(s, 0, &g0));
        int first_a = val_eq(&g0, &c->a);
        assert_true(first_a || val_eq(&g0, &c->b));
        assert_ok(coffer_set_get(s, 1, &g1));
        assert_true(val_eq(&g1, first_a ? &c->b : &c->a));
        coffer_value dummy;
        assert_status(coffer_set_get(s, 2, &dummy), COFFER_ERR_INVALID_ARGUMENT);
        /* wrong types and null are type errors naming the property */
        assert_status(coffer_set_insert(s, &c->wrong, NULL), COFFER_ERR_TYPE);
        assert_error_contains(c->name);
        int found = 0;
        assert_status(coffer_set_contains(s, &c->wrong, &found), COFFER_ERR_TYPE);
        assert_error_contains(c->name);
        assert_status(coffer_set_remove(s, &c->wrong, NULL), COFFER_ERR_TYPE);
        coffer_value null = coffer_value_null();
        assert_status(coffer_set_insert(s, &null, NULL), COFFER_ERR_TYPE);
        assert_error_contains(c->name);
        assert_int_equal(scount(s), 2);
        /* the property reads as a set with its size */
        assert_prop(h, c->prop, counted(COFFER_TYPE_SET, 2));
        /* remove */
        assert_int_equal(set_del(s, c->a), 1);
        assert_int_equal(set_del(s, c->a), 0);
        assert_int_equal(set_has(s, c->a), 0);
        assert_int_equal(scount(s), 1);
        assert_ok(coffer_set_insert(s, &c->a, NULL)); /* inserted may be NULL */
        assert_ok(coffer_set_remove(s, &c->b, NULL));
        assert_ok(coffer_set_insert(s, &c->b, NULL));
        assert_int_equal(scount(s), 2);
        coffer_set_release(s);
    }
    /* an optional set holds null once */
    coffer_set *so = open_set(h, H_SET_OPT_INT);
    assert_int_equal(set_add(so, coffer_value_null()), 1);
    assert_int_equal(set_add(so, coffer_value_null()), 0);
    assert_int_equal(set_add(so, coffer_value_int(0)), 1);
    assert_int_equal(set_has(so, coffer_value_null()), 1);
    assert_int_equal(scount(so), 2);
    coffer_object_key hk = coffer_object_key_of(h);
    ts_commit(w);

    if (env->mode != TS_MEMORY)
        reopen(env);
    coffer_txn *r = ts_begin(env->db, COFFER_TXN_READ);
    assert_ok(coffer_object_get(r, C.holder, hk, &h));
    for (size_t i = 0; i < nc; i++) {
        set_case *c = &cases[i];
        coffer_set *s = open_set(h, c->prop);
        assert_int_equal(scount(s), 2);
        assert_int_equal(set_has(s, c->a), 1);
        assert_int_equal(set_has(s, c->b), 1);
        /* a value read is borrowed until the next call on the handle */
        coffer_value g0, g1;
        assert_ok(coffer_set_get(s, 0, &g0));
        int first_a = val_eq(&g0, &c->a);
        assert_true(first_a || val_eq(&g0, &c->b));
        assert_ok(coffer_set_get(s, 1, &g1));
        assert_true(val_eq(&g1, first_a ? &c->b : &c->a));
        coffer_set_release(s);
    }
    so = open_set(h, H_SET_OPT_INT);
    assert_int_equal(scount(so), 2);
    assert_int_equal(set_has(so, coffer_value_null()), 1);
    coffer_txn_free(r);

    /* clear */
    w = ts_begin(env->db, COFFER_TXN_WRITE);
    assert_ok(coffer_object_get(w, C.holder, hk, &h));
    for (size_t i = 0; i < nc; i++) {
        coffer_set *s = open_set(h, cases[i].prop);
        assert_ok(coffer_set_clear(s));
        assert_int_equal(scount(s), 0);
        assert_int_equal(set_has(s, cases[i].a), 0);
    }
    ts_commit(w);
}

/* Set equality follows coffer_value_equal: NaN equals NaN, -0.0 equals
 * 0.0, decimals compare by value. */
TS_ENV_TEST(test_set_equality_rules)
{
    /* the rules themselves */
    coffer_value a = coffer_value_double(NAN), b = coffer_value_double(-NAN);
    assert_true(coffer_value_equal(&a, &b));
    a = coffer_value_double(-0.0);
    b = coffer_value_double(0.0);
    assert_true(coffer_value_equal(&a, &b));
    a = decv("1.0");
    b = decv("1.00");
    assert_true(coffer_value_equal(&a, &b));
    a = coffer_value_link(1, 2);
    b = coffer_value_link(1, 2);
    assert_true(coffer_value_equal(&a, &b));
    b = coffer_value_link(2, 2);
    assert_false(coffer_value_equal(&a, &b));
    b = coffer_value_link(1, 3);
    assert_false(coffer_value_equal(&a, &b));
    a = coffer_value_list(NULL, 0);
    b = coffer_value_list(NULL, 0);
    assert_false(coffer_value_equal(&a, &b));
    a = coffer_value_map(NULL, 0);
    b = coffer_value_map(NULL, 0);
    assert_false(coffer_value_equal(&a, &b));

    coffer_txn *w = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_object *h = new_holder(w, "h");
    coffer_object_key hk = coffer_object_key_of(h);

    coffer_set *sd = open_set(h, H_SET_DOUBLE);
    assert_int_equal(set_add(sd, coffer_value_double(NAN)), 1);
    assert_int_equal(set_add(sd, coffer_value_double(-NAN)), 0);
    assert_int_equal(set_add(sd, coffer_value_double(0.0)), 1);
    assert_int_equal(set_add(sd, coffer_value_double(-0.0)), 0);
    assert_int_equal(set_add(sd, coffer_value_double(INFINITY)), 1);
    assert_int_equal(set_add(sd, coffer_value_double(-INFINITY)), 1);
    assert_int_equal(scount(sd), 4);
    assert_int_equal(set_has(sd, coffer_value_double(NAN)), 1);
    assert_int_equal(set_has(sd, coffer_value_double(-0.0)), 1);
    assert_int_equal(set_has(sd, coffer_value_double(1.0)), 0);
    assert_int_equal(set_del(sd, coffer_value_double(-0.0)), 1);
    assert_int_equal(set_has(sd, coffer_value_double(0.0)), 0);
    assert_int_equal(set_del(sd, coffer_value_double(-NAN)), 1);
    assert_int_equal(scount(sd), 2);
    assert_int_equal(set_add(sd, coffer_value_double(-0.0)), 1);
    assert_int_equal(set_add(sd, coffer_value_double(0.0)), 0);

    coffer_set *sf = open_set(h, H_SET_FLOAT);
    assert_int_equal(set_add(sf, coffer_value_float(NAN)), 1);
    assert_int_equal(set_add(sf, coffer_value_float(NAN)), 0);
    assert_int_equal(set_add(sf, coffer_value_float(-0.0f)), 1);
    assert_int_equal(set_add(sf, coffer_value_float(0.0f)), 0);
    assert_int_equal(set_has(sf, coffer_value_float(0.0f)), 1);
    assert_int_equal(scount(sf), 2);

    coffer_set *sx = open_set(h, H_SET_DECIMAL);
    assert_int_equal(set_add(sx, decv("1.0")), 1);
    assert_int_equal(set_add(sx, decv("1.00")), 0);
    assert_int_equal(set_add(sx, decv("1")), 0);
    assert_int_equal(set_add(sx, decv("10E-1")), 0);
    assert_int_equal(set_has(sx, decv("1.000")), 1);
    assert_int_equal(set_add(sx, decv("0")), 1);
    assert_int_equal(set_add(sx, decv("-0")), 0);
    assert_int_equal(set_add(sx, decv("0E+10")), 0);
    assert_int_equal(set_add(sx, decv("NaN")), 1);
    assert_int_equal(set_add(sx, decv("NaN")), 0);
    assert_int_equal(set_add(sx, decv("1.01")), 1);
    assert_int_equal(scount(sx), 4);
    assert_int_equal(set_del(sx, decv("1.0000")), 1);
    assert_int_equal(set_has(sx, decv("1.0")), 0);
    assert_int_equal(scount(sx), 3);

    /* strings and binaries compare by size and bytes */
    coffer_set *ss = open_set(h, H_SET_STRING);
    assert_int_equal(set_add(ss, ts_str("a")), 1);
    assert_int_equal(set_add(ss, ts_str("A")), 1);
    assert_int_equal(set_add(ss, coffer_value_string("ab", 1)), 0);
    assert_int_equal(set_add(ss, ts_str("")), 1);
    assert_int_equal(scount(ss), 3);
    coffer_set *sb = open_set(h, H_SET_BINARY);
    assert_int_equal(set_add(sb, coffer_value_binary("\0", 1)), 1);
    assert_int_equal(set_add(sb, coffer_value_binary("\0\0", 2)), 1);
    assert_int_equal(set_add(sb, coffer_value_binary(NULL, 0)), 1);
    assert_int_equal(set_add(sb, coffer_value_binary("", 0)), 0);
    assert_int_equal(scount(sb), 3);
    ts_commit(w);

    coffer_txn *r = ts_begin(env->db, COFFER_TXN_READ);
    assert_ok(coffer_object_get(r, C.holder, hk, &h));
    sd = open_set(h, H_SET_DOUBLE);
    assert_int_equal(scount(sd), 3);
    assert_int_equal(set_has(sd, coffer_value_double(0.0)), 1);
    assert_int_equal(set_has(sd, coffer_value_double(NAN)), 0);
    sx = open_set(h, H_SET_DECIMAL);
    assert_int_equal(scount(sx), 3);
    assert_int_equal(set_has(sx, decv("-0.0")), 1);
    assert_int_equal(set_has(sx, decv("NaN")), 1);
    assert_int_equal(set_has(sx, decv("1.010")), 1);
    coffer_txn_free(r);
}

TS_ENV_TEST(test_set_algebra)
{
    coffer_txn *w = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_object *h1 = new_holder(w, "one"), *h2 = new_holder(w, "two");
    coffer_set *a = open_set(h1, H_SET_INT), *b = open_set(h2, H_SET_INT);
    for (int64_t v = 1; v <= 3; v++)
        set_add(a, coffer_value_int(v));
    for (int64_t v = 2; v <= 4; v++)
        set_add(b, coffer_value_int(v));

    assert_ok(coffer_set_union(a, b));
    assert_int_set(a, 1, 2, 3, 4);
    assert_int_set(b, 2, 3, 4);
    assert_ok(coffer_set_subtract(a, b));
    assert_int_set(a, 1);
    set_add(a, coffer_value_int(3));
    set_add(a, coffer_value_int(9));
    assert_ok(coffer_set_intersect(a, b));
    assert_int_set(a, 3);
    assert_ok(coffer_set_intersect(b, a));
    assert_int_set(b, 3);

    /* with itself */
    set_add(a, coffer_value_int(5));
    assert_ok(coffer_set_union(a, a));
    assert_int_set(a, 3, 5);
    assert_ok(coffer_set_intersect(a, a));
    assert_int_set(a, 3, 5);
    assert_ok(coffer_set_subtract(a, a));
    assert_int_set_empty(a);

    /* two handles on the same set */
    set_add(a, coffer_value_int(6));
    coffer_set *a2 = open_set(h1, H_SET_INT);
    assert_ok(coffer_set_union(a, a2));
    assert_int_set(a, 6);

    /* with an empty set */
    coffer_set *e = open_set(new_holder(w, "empty"), H_SET_INT);
    assert_ok(coffer_set_union(a, e));
    assert_int_set(a, 6);
    assert_ok(coffer_set_subtract(a, e));
    assert_int_set(a, 6);
    assert_ok(coffer_set_intersect(a, e));
    assert_int_set_empty(a);
    set_add(a, coffer_value_int(6));

    /* another element type */
    coffer_set *strs = open_set(h1, H_SET_STRING);
    set_add(strs, ts_str("x"));
    assert_not_ok(coffer_set_union(b, strs));
    assert_not_ok(coffer_set_intersect(b, strs));
    assert_not_ok(coffer_set_subtract(b, strs));
    coffer_set *opt = open_set(h1, H_SET_OPT_INT);
    set_add(opt, coffer_value_null());
    assert_int_set(b, 3);
    assert_status(coffer_set_union(b, NULL), COFFER_ERR_INVALID_ARGUMENT);
    assert_status(coffer_set_union(NULL, b), COFFER_ERR_INVALID_ARGUMENT);

    /* string sets */
    coffer_set *strs2 = open_set(h2, H_SET_STRING);
    set_add(strs2, ts_str("y"));
    set_add(strs2, ts_str("x"));
    assert_ok(coffer_set_union(strs, strs2));
    assert_int_equal(scount(strs), 2);
    assert_ok(coffer_set_subtract(strs2, strs));
    assert_int_equal(scount(strs2), 0);

    /* link sets */
    coffer_object *i1 = new_item(w, 1), *i2 = new_item(w, 2), *i3 = new_item(w, 3);
    coffer_set *la = open_set(h1, H_SET_ITEMS), *lb = open_set(h2, H_SET_ITEMS);
    assert_int_equal(set_add(la, coffer_value_object(i1)), 1);
    assert_int_equal(set_add(la, coffer_value_link(C.item, coffer_object_key_of(i1))), 0);
    assert_int_equal(set_add(la, coffer_value_object(i2)), 1);
    assert_int_equal(set_add(lb, coffer_value_object(i2)), 1);
    assert_int_equal(set_add(lb, coffer_value_object(i3)), 1);
    assert_ok(coffer_set_intersect(la, lb));
    assert_int_equal(scount(la), 1);
    assert_int_equal(set_has(la, coffer_value_object(i2)), 1);
    assert_ok(coffer_set_union(la, lb));
    assert_int_equal(scount(la), 2);
    assert_int_equal(set_has(la, coffer_value_link(C.item, coffer_object_key_of(i3))), 1);
    coffer_object_key h1k = coffer_object_key_of(h1);
    ts_commit(w);

    coffer_txn *r = ts_begin(env->db, COFFER_TXN_READ);
    coffer_object *rh = NULL;
    assert_ok(coffer_object_get(r, C.holder, h1k, &rh));
    a = open_set(rh, H_SET_INT);
    assert_int_set(a, 6);
    coffer_txn_free(r);
}

TS_ENV_TEST(test_set_links)
{
    coffer_txn *w = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_object *h = new_holder(w, "h");
    coffer_object *i1 = new_item(w, 1), *i2 = new_item(w, 2);
    coffer_object *other = ts_create(w, C.other, NULL, 0);
    coffer_set *s = open_set(h, H_SET_ITEMS);
    assert_int_equal(set_add(s, coffer_value_object(i1)), 1);
    assert_int_equal(set_add(s, coffer_value_object(i2)), 1);
    coffer_value bad = coffer_value_object(other);
    assert_status(coffer_set_insert(s, &bad, NULL), COFFER_ERR_TYPE);
    assert_error_contains("setItems");
    bad = coffer_value_null();
    assert_status(coffer_set_insert(s, &bad, NULL), COFFER_ERR_TYPE);
    assert_error_contains("setItems");
    bad = coffer_value_link(C.item, 12345);
    assert_status(coffer_set_insert(s, &bad, NULL), COFFER_ERR_NOT_FOUND);
    assert_int_equal(scount(s), 2);
    coffer_value v;
    assert_ok(coffer_set_get(s, 0, &v));
    assert_int_equal(v.type, COFFER_TYPE_LINK);
    assert_int_equal(v.u.link.class_id, C.item);

    /* a set created with duplicates holds each once */
    coffer_value dup[] = {coffer_value_object(i1), coffer_value_object(i2), coffer_value_object(i1)};
    coffer_object *h2 = holder_with(w, H_SET_ITEMS, coffer_value_list(dup, 3));
    coffer_set *s2 = open_set(h2, H_SET_ITEMS);
    assert_int_equal(scount(s2), 2);
    coffer_value idup[] = {coffer_value_int(3), coffer_value_int(1), coffer_value_int(3), coffer_value_int(2),
                           coffer_value_int(1)};
    coffer_object *h3 = holder_with(w, H_SET_INT, coffer_value_list(idup, 5));
    coffer_set *s3 = open_set(h3, H_SET_INT);
    assert_int_set(s3, 1, 2, 3);

    /* deleting a member removes it from every set */
    coffer_object_key k1 = coffer_object_key_of(i1);
    assert_ok(coffer_object_delete(i1));
    assert_int_equal(scount(s), 1);
    assert_int_equal(scount(s2), 1);
    assert_ok(coffer_set_get(s, 0, &v));
    assert_int_equal(v.u.link.key, coffer_object_key_of(i2));
    (void)k1;
    ts_commit(w);
}

/* ------------------------------------------------------------------------ */
/* Maps                                                                      */
/* ------------------------------------------------------------------------ */

TS_ENV_TEST(test_map_basic)
{
    coffer_txn *w = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_map_entry init[] = {{.key = {"b", 1}, .value = coffer_value_int(2)},
                               {.key = {"a", 1}, .value = coffer_value_int(1)}};
    coffer_object *h = holder_with(w, H_MAP_INT, coffer_value_map(init, 2));
    assert_prop(h, H_MAP_INT, counted(COFFER_TYPE_MAP, 2));
    coffer_map *m = open_map(h, H_MAP_INT);
    assert_int_equal(mcount(m), 2);
    assert_map_item(m, "a", coffer_value_int(1));
    assert_map_item(m, "b", coffer_value_int(2));
    mset(m, "c", coffer_value_int(3));
    mset(m, "b", coffer_value_int(20)); /* replaces */
    assert_int_equal(mcount(m), 3);
    assert_map_item(m, "b", coffer_value_int(20));
    int found = -1;
    assert_ok(coffer_map_contains(m, "c", SIZE_MAX, &found));
    assert_int_equal(found, 1);
    assert_ok(coffer_map_contains(m, "d", SIZE_MAX, &found));
    assert_int_equal(found, 0);
    /* explicit sizes: "cx" of size 1 is "c" */
    assert_ok(coffer_map_contains(m, "cx", 1, &found));
    assert_int_equal(found, 1);
    coffer_value v;
    assert_status(coffer_map_get(m, "missing-key", SIZE_MAX, &v), COFFER_ERR_NOT_FOUND);
    assert_error_contains("missing-key");
    int removed = -1;
    assert_ok(coffer_map_remove(m, "b", SIZE_MAX, &removed));
    assert_int_equal(removed, 1);
    assert_ok(coffer_map_remove(m, "b", SIZE_MAX, &removed));
    assert_int_equal(removed, 0);
    assert_ok(coffer_map_remove(m, "b", SIZE_MAX, NULL));
    assert_status(coffer_map_get(m, "b", SIZE_MAX, &v), COFFER_ERR_NOT_FOUND);
    assert_int_equal(mcount(m), 2);

    /* entries in key order (bytewise) */
    static const char *keys[] = {"b", "\xc3\xa9t\xc3\xa9", "aa", "Z", "ab", "0", "a", "B", "a b", "x$"};
    static const char *sorted[] = {"0", "B", "Z", "a", "a b", "aa", "ab", "b", "x$", "\xc3\xa9t\xc3\xa9"};
    enum { NK = sizeof keys / sizeof keys[0] };
    assert_ok(coffer_map_clear(m));
    assert_int_equal(mcount(m), 0);
    for (int i = 0; i < NK; i++)
        mset(m, keys[i], coffer_value_int(i));
    assert_int_equal(mcount(m), NK);
    /* the whole order first, printed on a mismatch */
    /* Plain files keep key order; encrypted ones hash their keys, so only
     * the set of keys (each exactly once) is fixed. */
    int order_ok = 1, seen[NK] = {0};
    char order[512] = "";
    for (int i = 0; i < NK; i++) {
        coffer_bytes k = {NULL, 0};
        assert_ok(coffer_map_get_entry(m, (uint64_t)i, &k, NULL));
        if (env->mode != TS_ENCRYPTED && (k.size != strlen(sorted[i]) || memcmp(k.data, sorted[i], k.size) != 0))
            order_ok = 0;
        for (int j = 0; j < NK; j++)
            if (k.size == strlen(sorted[j]) && memcmp(k.data, sorted[j], k.size) == 0)
                seen[j]++;
        snprintf(order + strlen(order), sizeof order - strlen(order), " '%.*s'", (int)k.size, (const char *)k.data);
    }
    for (int j = 0; j < NK; j++)
        if (seen[j] != 1)
            order_ok = 0;
    if (!order_ok)
        fail_msg("map entries are not in key order (or not each key once):%s", order);
    for (int i = 0; i < NK; i++) {
        coffer_bytes k = {NULL, 0};
        memset(&v, 0, sizeof v);
        assert_ok(coffer_map_get_entry(m, (uint64_t)i, &k, &v));
        int orig = 0;
        while (orig < NK && (k.size != strlen(keys[orig]) || memcmp(k.data, keys[orig], k.size) != 0))
            orig++;
        assert_true(orig < NK);
        if (env->mode != TS_ENCRYPTED)
            assert_memory_equal(k.data, sorted[i], k.size);
        assert_int_equal(v.type, COFFER_TYPE_INT);
        assert_int_equal(v.u.integer, orig);
        /* key or value alone */
        assert_ok(coffer_map_get_entry(m, (uint64_t)i, &k, NULL));
        assert_ok(coffer_map_get_entry(m, (uint64_t)i, NULL, &v));
        assert_int_equal(v.u.integer, orig);
    }
    coffer_bytes k;
    assert_status(coffer_map_get_entry(m, NK, &k, &v), COFFER_ERR_INVALID_ARGUMENT);
    coffer_object_key hk = coffer_object_key_of(h);
    ts_commit(w);

    if (env->mode != TS_MEMORY)
        reopen(env);
    coffer_txn *r = ts_begin(env->db, COFFER_TXN_READ);
    assert_ok(coffer_object_get(r, C.holder, hk, &h));
    m = open_map(h, H_MAP_INT);
    assert_int_equal(mcount(m), NK);
    for (int i = 0; i < NK; i++) {
        assert_ok(coffer_map_get_entry(m, (uint64_t)i, &k, NULL));
        if (env->mode != TS_ENCRYPTED) {
            assert_int_equal(k.size, strlen(sorted[i]));
            assert_memory_equal(k.data, sorted[i], k.size);
        }
        assert_map_item(m, keys[i], coffer_value_int(i));
    }
    coffer_txn_free(r);
}

TS_ENV_TEST(test_map_key_rules)
{
    coffer_txn *w = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_object *h = new_holder(w, "h");
    coffer_map *m = open_map(h, H_MAP_INT);
    coffer_value one = coffer_value_int(1);

    assert_status(coffer_map_set(m, "", SIZE_MAX, &one), COFFER_ERR_INVALID_ARGUMENT);
    assert_status(coffer_map_set(m, "", 0, &one), COFFER_ERR_INVALID_ARGUMENT);
    assert_status(coffer_map_set(m, NULL, 0, &one), COFFER_ERR_INVALID_ARGUMENT);
    assert_status(coffer_map_set(m, "a.b", SIZE_MAX, &one), COFFER_ERR_INVALID_ARGUMENT);
    assert_error_contains("a.b");
    assert_status(coffer_map_set(m, ".", SIZE_MAX, &one), COFFER_ERR_INVALID_ARGUMENT);
    assert_status(coffer_map_set(m, "tail.", SIZE_MAX, &one), COFFER_ERR_INVALID_ARGUMENT);
    assert_error_contains("tail.");
    assert_status(coffer_map_set(m, "$dollar", SIZE_MAX, &one), COFFER_ERR_INVALID_ARGUMENT);
    assert_error_contains("$dollar");
    assert_status(coffer_map_set(m, "$", SIZE_MAX, &one), COFFER_ERR_INVALID_ARGUMENT);
    assert_status(coffer_map_set(m, "\xff\xfe", SIZE_MAX, &one), COFFER_ERR_INVALID_ARGUMENT);
    assert_status(coffer_map_set(m, "ok\xc3", SIZE_MAX, &one), COFFER_ERR_INVALID_ARGUMENT);
    assert_status(coffer_map_set(m, "\xc0\xaf", SIZE_MAX, &one), COFFER_ERR_INVALID_ARGUMENT); /* overlong '/' */
    assert_status(coffer_map_set(m, "a\0b", 3, &one), COFFER_ERR_INVALID_ARGUMENT);
    assert_int_equal(mcount(m), 0);

    /* allowed: '$' not leading, other punctuation, multi-byte text */
    mset(m, "x$", one);
    mset(m, "with space", one);
    mset(m, "a-b_c/d:e", one);
    mset(m, "\xe6\x97\xa5\xe6\x9c\xac", one);
    assert_int_equal(mcount(m), 4);

    /* bad keys in a map value at create name the class and property */
    coffer_map_entry bad[] = {{.key = {"fine", 4}, .value = coffer_value_int(1)},
                              {.key = {"bad.key", 7}, .value = coffer_value_int(2)}};
    coffer_field f[] = {ts_field(H_NAME, ts_str("x")), ts_field(H_MAP_INT, coffer_value_map(bad, 2))};
    assert_status(coffer_object_create(w, C.holder, f, 2, COFFER_UPDATE_ERROR, NULL), COFFER_ERR_INVALID_ARGUMENT);
    assert_error_contains("mapInt");
    assert_error_contains("bad.key");
    bad[1].key = (coffer_bytes){"$op", 3};
    f[1] = ts_field(H_ANY, coffer_value_map(bad, 2));
    assert_status(coffer_object_create(w, C.holder, f, 2, COFFER_UPDATE_ERROR, NULL), COFFER_ERR_INVALID_ARGUMENT);
    assert_error_contains("any");
    /* ... also deep in a mixed value */
    coffer_value inner = coffer_value_map(bad, 2);
    coffer_value outer_items[] = {coffer_value_int(0), inner};
    f[1] = ts_field(H_ANY, coffer_value_list(outer_items, 2));
    assert_status(coffer_object_create(w, C.holder, f, 2, COFFER_UPDATE_ERROR, NULL), COFFER_ERR_INVALID_ARGUMENT);
    assert_int_equal(ts_count(w, C.holder), 1);

    /* and in a nested map of a mixed value */
    coffer_value iv = coffer_value_map(NULL, 0);
    assert_ok(coffer_object_set_value(h, H_ANY, &iv));
    coffer_map *nm = open_map(h, H_ANY);
    assert_status(coffer_map_set(nm, "a.b", SIZE_MAX, &one), COFFER_ERR_INVALID_ARGUMENT);
    assert_status(coffer_map_set(nm, "$a", SIZE_MAX, &one), COFFER_ERR_INVALID_ARGUMENT);
    assert_int_equal(mcount(nm), 0);
    ts_commit(w);
}

TS_ENV_TEST(test_map_types)
{
    coffer_txn *w = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_object *h = new_holder(w, "h");
    coffer_map *mi = open_map(h, H_MAP_INT);
    coffer_value bad = coffer_value_null();
    assert_status(coffer_map_set(mi, "k", 1, &bad), COFFER_ERR_TYPE);
    assert_error_contains("mapInt");
    assert_error_contains("Holder");
    bad = ts_str("1");
    assert_status(coffer_map_set(mi, "k", 1, &bad), COFFER_ERR_TYPE);
    assert_error_contains("mapInt");
    assert_int_equal(mcount(mi), 0);

    coffer_map *ms = open_map(h, H_MAP_OPT_STR);
    mset(ms, "null", coffer_value_null());
    mset(ms, "text", coffer_value_string(UTF8_TEXT, SIZE_MAX));
    mset(ms, "empty", ts_str(""));
    assert_map_item(ms, "null", coffer_value_null());
    assert_map_item(ms, "text", coffer_value_string(UTF8_TEXT, SIZE_MAX));
    assert_map_item(ms, "empty", ts_str(""));
    bad = coffer_value_int(3);
    assert_status(coffer_map_set(ms, "text", SIZE_MAX, &bad), COFFER_ERR_TYPE);
    assert_error_contains("mapOptStr");
    assert_map_item(ms, "text", coffer_value_string(UTF8_TEXT, SIZE_MAX));

    coffer_map *ml = open_map(h, H_MAP_ITEMS);
    coffer_object *i1 = new_item(w, 1);
    coffer_object *other = ts_create(w, C.other, NULL, 0);
    mset(ml, "one", coffer_value_object(i1));
    mset(ml, "none", coffer_value_null());
    assert_map_item(ml, "one", coffer_value_link(C.item, coffer_object_key_of(i1)));
    assert_map_item(ml, "none", coffer_value_null());
    bad = coffer_value_object(other);
    assert_status(coffer_map_set(ml, "two", SIZE_MAX, &bad), COFFER_ERR_TYPE);
    assert_error_contains("mapItems");
    bad = coffer_value_link(C.item, coffer_object_key_of(i1) + 50);
    assert_status(coffer_map_set(ml, "two", SIZE_MAX, &bad), COFFER_ERR_NOT_FOUND);
    assert_int_equal(mcount(ml), 2);
    /* deleting the target keeps the key with a null value */
    assert_ok(coffer_object_delete(i1));
    assert_int_equal(mcount(ml), 2);
    assert_map_item(ml, "one", coffer_value_null());
    coffer_object_key hk = coffer_object_key_of(h);
    ts_commit(w);

    coffer_txn *r = ts_begin(env->db, COFFER_TXN_READ);
    assert_ok(coffer_object_get(r, C.holder, hk, &h));
    ms = open_map(h, H_MAP_OPT_STR);
    assert_int_equal(mcount(ms), 3);
    assert_map_item(ms, "null", coffer_value_null());
    assert_map_item(ms, "text", coffer_value_string(UTF8_TEXT, SIZE_MAX));
    ml = open_map(h, H_MAP_ITEMS);
    assert_map_item(ml, "one", coffer_value_null());
    coffer_txn_free(r);
}

/* ------------------------------------------------------------------------ */
/* Mixed values                                                              */
/* ------------------------------------------------------------------------ */

static size_t mixed_scalars(coffer_value *out)
{
    size_t n = 0;
    out[n++] = coffer_value_null();
    out[n++] = coffer_value_bool(true);
    out[n++] = coffer_value_bool(false);
    out[n++] = coffer_value_int(INT64_MAX);
    out[n++] = coffer_value_int(-1);
    out[n++] = coffer_value_float(3.5f);
    out[n++] = coffer_value_float(NAN);
    out[n++] = coffer_value_double(-1e-300);
    out[n++] = coffer_value_double(1.0);
    out[n++] = coffer_value_string(UTF8_TEXT, SIZE_MAX);
    out[n++] = ts_str("");
    out[n++] = coffer_value_binary(BIN_A, sizeof BIN_A);
    out[n++] = coffer_value_binary(NULL, 0);
    out[n++] = coffer_value_date(1700000000, 123456789);
    out[n++] = coffer_value_date(-5, -250);
    out[n++] = coffer_value_object_id(OID_A);
    out[n++] = coffer_value_uuid(UUID_B);
    out[n++] = decv("1.0");
    out[n++] = decv("-3E-7");
    return n;
}

TS_ENV_TEST(test_mixed_scalars)
{
    coffer_value vals[32];
    size_t nv = mixed_scalars(vals);
    coffer_txn *w = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_object *h = new_holder(w, "h");
    coffer_object_key hk = coffer_object_key_of(h);
    /* the default of a mixed property is null */
    assert_prop(h, H_ANY, coffer_value_null());
    coffer_list *l = open_list(h, H_MIXED_LIST);
    coffer_map *m = open_map(h, H_MAP_MIXED);
    for (size_t i = 0; i < nv; i++) {
        assert_ok(coffer_object_set_value(h, H_ANY, &vals[i]));
        assert_prop(h, H_ANY, vals[i]);
        lappend(l, vals[i]);
        char key[16];
        snprintf(key, sizeof key, "k%02zu", i);
        mset(m, key, vals[i]);
    }
    for (size_t i = 0; i < nv; i++)
        assert_list_item(l, i, vals[i]);
    /* each object holds a value of its own */
    coffer_object *h2 = holder_with(w, H_ANY, vals[3]);
    assert_prop(h2, H_ANY, vals[3]);
    assert_prop(h, H_ANY, vals[nv - 1]);
    ts_commit(w);

    if (env->mode != TS_MEMORY)
        reopen(env);
    coffer_txn *r = ts_begin(env->db, COFFER_TXN_READ);
    assert_ok(coffer_object_get(r, C.holder, hk, &h));
    assert_prop(h, H_ANY, vals[nv - 1]);
    l = open_list(h, H_MIXED_LIST);
    m = open_map(h, H_MAP_MIXED);
    assert_int_equal(lcount(l), nv);
    assert_int_equal(mcount(m), nv);
    for (size_t i = 0; i < nv; i++) {
        assert_list_item(l, i, vals[i]);
        char key[16];
        snprintf(key, sizeof key, "k%02zu", i);
        assert_map_item(m, key, vals[i]);
    }
    coffer_txn_free(r);

    /* one property set to each value in its own transaction */
    for (size_t i = 0; i < nv; i++) {
        w = ts_begin(env->db, COFFER_TXN_WRITE);
        assert_ok(coffer_object_get(w, C.holder, hk, &h));
        assert_ok(coffer_object_set_value(h, H_ANY2, &vals[i]));
        ts_commit(w);
        r = ts_begin(env->db, COFFER_TXN_READ);
        assert_ok(coffer_object_get(r, C.holder, hk, &h));
        assert_prop(h, H_ANY2, vals[i]);
        coffer_txn_free(r);
    }
}

TS_ENV_TEST(test_mixed_links)
{
    coffer_txn *w = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_object *h = new_holder(w, "h");
    coffer_object *item = new_item(w, 1);
    coffer_object *other = ts_create(w, C.other, NULL, 0);
    coffer_value ilink = coffer_value_link(C.item, coffer_object_key_of(item));
    coffer_value olink = coffer_value_link(C.other, coffer_object_key_of(other));

    /* a mixed value links to any class */
    coffer_value v = coffer_value_object(item);
    assert_ok(coffer_object_set_value(h, H_ANY, &v));
    assert_prop(h, H_ANY, ilink);
    assert_ok(coffer_object_set_value(h, H_ANY, &olink));
    assert_prop(h, H_ANY, olink);
    coffer_list *l = open_list(h, H_MIXED_LIST);
    lappend(l, ilink);
    lappend(l, coffer_value_object(other));
    lappend(l, coffer_value_int(3));
    assert_list_item(l, 0, ilink);
    assert_list_item(l, 1, olink);
    coffer_map *m = open_map(h, H_MAP_MIXED);
    mset(m, "i", coffer_value_object(item));
    assert_map_item(m, "i", ilink);

    /* links to missing objects */
    v = coffer_value_link(C.item, coffer_object_key_of(item) + 77);
    assert_status(coffer_object_set_value(h, H_ANY, &v), COFFER_ERR_NOT_FOUND);
    assert_error_contains("any");
    assert_status(coffer_list_append(l, &v), COFFER_ERR_NOT_FOUND);
    assert_prop(h, H_ANY, olink);
    /* a nested object description has no class to create in a mixed value */
    coffer_field nf[] = {ts_field(I_N, coffer_value_int(5))};
    v = coffer_value_fields(nf, 1);
    assert_not_ok(coffer_object_set_value(h, H_ANY, &v));
    assert_int_equal(ts_count(w, C.item), 1);

    /* backlinks through mixed values, nested ones included */
    coffer_value nested[] = {ilink, coffer_value_int(1)};
    coffer_map_entry me[] = {{.key = {"deep", 4}, .value = coffer_value_list(nested, 2)}};
    v = coffer_value_map(me, 1);
    assert_ok(coffer_object_set_value(h, H_ANY2, &v));
    uint64_t n = 0;
    assert_ok(coffer_object_backlink_count_from(item, C.holder, H_ANY2, &n));
    assert_int_equal(n, 1);
    assert_ok(coffer_object_backlink_count_from(item, C.holder, H_MIXED_LIST, &n));
    assert_int_equal(n, 1);
    assert_ok(coffer_object_backlink_count_all(item, &n));
    assert_int_equal(n, 3); /* mixedList[0], mapMixed["i"], any2.deep[0] */
    coffer_object_key hk = coffer_object_key_of(h);
    ts_commit(w);

    coffer_txn *r = ts_begin(env->db, COFFER_TXN_READ);
    assert_ok(coffer_object_get(r, C.holder, hk, &h));
    assert_prop(h, H_ANY, olink);
    l = open_list(h, H_MIXED_LIST);
    assert_list_item(l, 0, ilink);
    assert_list_item(l, 1, olink);
    coffer_txn_free(r);

    /* deleting the target nulls a top-level mixed link */
    w = ts_begin(env->db, COFFER_TXN_WRITE);
    assert_ok(coffer_object_get(w, C.holder, hk, &h));
    coffer_object *o2 = NULL;
    assert_ok(coffer_object_get(w, C.other, olink.u.link.key, &o2));
    assert_ok(coffer_object_delete(o2));
    assert_prop(h, H_ANY, coffer_value_null());
    ts_commit(w);
}

TS_ENV_TEST(test_mixed_nested)
{
    coffer_txn *w = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_value empty_list = coffer_value_list(NULL, 0);
    coffer_value inner_list[] = {coffer_value_int(3), empty_list};
    coffer_map_entry deepest[] = {{.key = {"z", 1}, .value = ts_str("deep")}};
    coffer_value five[] = {coffer_value_int(5)};
    coffer_map_entry inner_map[] = {
        {.key = {"k", 1}, .value = coffer_value_int(4)},
        {.key = {"m", 1}, .value = coffer_value_map(deepest, 1)},
        {.key = {"l", 1}, .value = coffer_value_list(five, 1)},
    };
    coffer_value top[] = {coffer_value_int(1), ts_str("two"), coffer_value_list(inner_list, 2),
                          coffer_value_map(inner_map, 3)};
    coffer_object *h = holder_with(w, H_ANY, coffer_value_list(top, 4));
    coffer_object_key hk = coffer_object_key_of(h);

    for (int pass = 0; pass < 3; pass++) {
        assert_prop(h, H_ANY, counted(COFFER_TYPE_LIST, 4));
        coffer_list *l = open_list(h, H_ANY);
        assert_int_equal(lcount(l), 4);
        assert_list_item(l, 0, coffer_value_int(1));
        assert_list_item(l, 1, ts_str("two"));
        assert_list_item(l, 2, counted(COFFER_TYPE_LIST, 2));
        assert_list_item(l, 3, counted(COFFER_TYPE_MAP, 3));
        coffer_list *il = NULL;
        assert_ok(coffer_list_get_list(l, 2, &il));
        assert_list_item(il, 0, coffer_value_int(3));
        assert_list_item(il, 1, counted(COFFER_TYPE_LIST, 0));
        coffer_list *el = NULL;
        assert_ok(coffer_list_get_list(il, 1, &el));
        assert_int_equal(lcount(el), 0);
        coffer_map *im = NULL;
        assert_ok(coffer_list_get_map(l, 3, &im));
        assert_int_equal(mcount(im), 3);
        assert_map_item(im, "k", coffer_value_int(4));
        assert_map_item(im, "m", counted(COFFER_TYPE_MAP, 1));
        assert_map_item(im, "l", counted(COFFER_TYPE_LIST, 1));
        coffer_map *dm = NULL;
        assert_ok(coffer_map_get_map(im, "m", SIZE_MAX, &dm));
        assert_map_item(dm, "z", ts_str("deep"));
        coffer_list *fl = NULL;
        assert_ok(coffer_map_get_list(im, "l", SIZE_MAX, &fl));
        assert_list_item(fl, 0, coffer_value_int(5));
        /* the wrong kind of element */
        coffer_list *badl = NULL;
        coffer_map *badm = NULL;
        assert_status(coffer_list_get_list(l, 0, &badl), COFFER_ERR_TYPE);
        assert_status(coffer_list_get_map(l, 2, &badm), COFFER_ERR_TYPE);
        assert_status(coffer_list_get_list(l, 3, &badl), COFFER_ERR_TYPE);
        assert_status(coffer_map_get_list(im, "k", SIZE_MAX, &badl), COFFER_ERR_TYPE);
        assert_status(coffer_map_get_map(im, "l", SIZE_MAX, &badm), COFFER_ERR_TYPE);
        assert_status(coffer_map_get_list(im, "nokey", SIZE_MAX, &badl), COFFER_ERR_NOT_FOUND);
        assert_status(coffer_list_get_list(l, 4, &badl), COFFER_ERR_INVALID_ARGUMENT);
        coffer_map *notmap = NULL;
        assert_status(coffer_object_get_map(h, H_ANY, &notmap), COFFER_ERR_TYPE);
        assert_error_contains("any");

        if (pass == 0) {
            /* change nested collections through their handles */
            lappend(el, ts_str("added"));
            mset(dm, "y", coffer_value_int(-1));
            coffer_value nested_new[] = {coffer_value_bool(true)};
            assert_ok(coffer_list_set(fl, 0, &nested_new[0]));
            inner_list[1] = coffer_value_list(nested_new, 1);
            ts_commit(w);
            /* and put the expected shape back for the checks */
            w = ts_begin(env->db, COFFER_TXN_READ);
            assert_ok(coffer_object_get(w, C.holder, hk, &h));
            coffer_list *x = open_list(h, H_ANY);
            coffer_list *x2 = NULL;
            assert_ok(coffer_list_get_list(x, 2, &x2));
            coffer_list *x3 = NULL;
            assert_ok(coffer_list_get_list(x2, 1, &x3));
            assert_list_item(x3, 0, ts_str("added"));
            coffer_map *y = NULL;
            assert_ok(coffer_list_get_map(x, 3, &y));
            coffer_map *y2 = NULL;
            assert_ok(coffer_map_get_map(y, "m", SIZE_MAX, &y2));
            assert_int_equal(mcount(y2), 2);
            assert_map_item(y2, "y", coffer_value_int(-1));
            coffer_list *y3 = NULL;
            assert_ok(coffer_map_get_list(y, "l", SIZE_MAX, &y3));
            assert_list_item(y3, 0, coffer_value_bool(true));
            coffer_txn_free(w);
            /* restore the original shape */
            w = ts_begin(env->db, COFFER_TXN_WRITE);
            assert_ok(coffer_object_get(w, C.holder, hk, &h));
            inner_list[1] = empty_list;
            coffer_value tv = coffer_value_list(top, 4);
            assert_ok(coffer_object_set_value(h, H_ANY, &tv));
        } else if (pass == 1) {
            ts_commit(w);
            if (env->mode != TS_MEMORY)
                reopen(env);
            w = ts_begin(env->db, COFFER_TXN_READ);
            assert_ok(coffer_object_get(w, C.holder, hk, &h));
        }
    }
    coffer_txn_free(w);

    /* nesting through collection handles: lists and maps of mixed values */
    w = ts_begin(env->db, COFFER_TXN_WRITE);
    assert_ok(coffer_object_get(w, C.holder, hk, &h));
    coffer_list *ml = open_list(h, H_MIXED_LIST);
    coffer_value pair[] = {coffer_value_int(1), coffer_value_int(2)};
    lappend(ml, coffer_value_list(pair, 2));
    coffer_map_entry one[] = {{.key = {"a", 1}, .value = coffer_value_int(1)}};
    lappend(ml, coffer_value_map(one, 1));
    coffer_list *nl = NULL;
    assert_ok(coffer_list_get_list(ml, 0, &nl));
    assert_int_equal(lcount(nl), 2);
    lappend(nl, coffer_value_list(NULL, 0));
    coffer_list *nnl = NULL;
    assert_ok(coffer_list_get_list(nl, 2, &nnl));
    lappend(nnl, ts_str("x"));
    coffer_map *nm = NULL;
    assert_ok(coffer_list_get_map(ml, 1, &nm));
    mset(nm, "b", coffer_value_map(NULL, 0));
    coffer_map *mm = open_map(h, H_MAP_MIXED);
    mset(mm, "list", coffer_value_list(pair, 2));
    coffer_list *ll = NULL;
    assert_ok(coffer_map_get_list(mm, "list", SIZE_MAX, &ll));
    assert_list_item(ll, 1, coffer_value_int(2));
    ts_commit(w);

    coffer_txn *r = ts_begin(env->db, COFFER_TXN_READ);
    assert_ok(coffer_object_get(r, C.holder, hk, &h));
    ml = open_list(h, H_MIXED_LIST);
    assert_list_item(ml, 0, counted(COFFER_TYPE_LIST, 3));
    assert_list_item(ml, 1, counted(COFFER_TYPE_MAP, 2));
    assert_ok(coffer_list_get_list(ml, 0, &nl));
    assert_ok(coffer_list_get_list(nl, 2, &nnl));
    assert_list_item(nnl, 0, ts_str("x"));
    assert_ok(coffer_list_get_map(ml, 1, &nm));
    assert_map_item(nm, "b", counted(COFFER_TYPE_MAP, 0));
    coffer_txn_free(r);
}

/* Builds a mixed value of `depth` nested lists, or maps when `maps`, or
 * alternating from a list when `alternate`: level i holds the int i and,
 * below the last level, the next collection (at the last the string
 * "bottom"). `items` and `entries` need depth*2 slots. */
static coffer_value build_nested(int depth, int maps, int alternate, coffer_value *items, coffer_map_entry *entries)
{
    coffer_value next = ts_str("bottom");
    for (int i = depth - 1; i >= 0; i--) {
        int as_map = alternate ? (i % 2 == 1) : maps;
        if (as_map) {
            entries[2 * i] = (coffer_map_entry){.key = {"level", 5}, .value = coffer_value_int(i + 1)};
            entries[2 * i + 1] = (coffer_map_entry){.key = {"next", 4}, .value = next};
            next = coffer_value_map(&entries[2 * i], 2);
        } else {
            items[2 * i] = coffer_value_int(i + 1);
            items[2 * i + 1] = next;
            next = coffer_value_list(&items[2 * i], 2);
        }
    }
    return next;
}

/* Walks down from mixed property p to the given depth, checking each
 * level (and the "bottom" string at the last one when `bottom`); returns
 * the handle of the last level in *last_list or *last_map. */
static void walk_nested_to(coffer_object *h, coffer_property_id p, int depth, int maps, int alternate, int bottom,
                           coffer_list **last_list, coffer_map **last_map)
{
    coffer_list *l = NULL;
    coffer_map *m = NULL;
    int first_map = alternate ? 0 : maps;
    if (first_map)
        assert_ok(coffer_object_get_map(h, p, &m));
    else
        assert_ok(coffer_object_get_list(h, p, &l));
    for (int level = 1; level <= depth; level++) {
        int is_map = alternate ? ((level - 1) % 2 == 1) : maps;
        int next_is_map = alternate ? (level % 2 == 1) : maps;
        coffer_value v;
        if (is_map) {
            assert_ok(coffer_map_get(m, "level", SIZE_MAX, &v));
        } else {
            assert_ok(coffer_list_get(l, 0, &v));
        }
        assert_int_equal(v.type, COFFER_TYPE_INT);
        assert_int_equal(v.u.integer, level);
        if (level == depth) {
            if (!bottom)
                break;
            if (is_map)
                assert_map_item(m, "next", ts_str("bottom"));
            else
                assert_list_item(l, 1, ts_str("bottom"));
            break;
        }
        coffer_list *nl = NULL;
        coffer_map *nm = NULL;
        if (is_map && next_is_map)
            assert_ok(coffer_map_get_map(m, "next", SIZE_MAX, &nm));
        else if (is_map)
            assert_ok(coffer_map_get_list(m, "next", SIZE_MAX, &nl));
        else if (next_is_map)
            assert_ok(coffer_list_get_map(l, 1, &nm));
        else
            assert_ok(coffer_list_get_list(l, 1, &nl));
        if (l)
            coffer_list_release(l);
        if (m)
            coffer_map_release(m);
        l = nl;
        m = nm;
    }
    *last_list = l;
    *last_map = m;
}

static void walk_nested(coffer_object *h, coffer_property_id p, int depth, int maps, int alternate,
                        coffer_list **last_list, coffer_map **last_map)
{
    walk_nested_to(h, p, depth, maps, alternate, 1, last_list, last_map);
}

TS_ENV_TEST(test_mixed_max_nesting)
{
    enum { D = COFFER_MAX_NESTING };
    static coffer_value items[2 * (D + 2)];
    static coffer_map_entry entries[2 * (D + 2)];
    coffer_txn *w = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_object *h = new_holder(w, "h");
    coffer_object_key hk = coffer_object_key_of(h);

    /* 101 levels: rejected, naming the property, for lists, maps, both */
    for (int kind = 0; kind < 3; kind++) {
        coffer_value too_deep = build_nested(D + 1, kind == 1, kind == 2, items, entries);
        assert_status(coffer_object_set_value(h, H_ANY, &too_deep), COFFER_ERR_LIMIT);
        assert_error_contains("any");
        coffer_field f[] = {ts_field(H_ANY, too_deep)};
        assert_status(coffer_object_create(w, C.holder, f, 1, COFFER_UPDATE_ERROR, NULL), COFFER_ERR_LIMIT);
        assert_error_contains("any");
        assert_error_contains("Holder");
    }
    assert_int_equal(ts_count(w, C.holder), 1);
    assert_prop(h, H_ANY, coffer_value_null());

    /* 100 levels: accepted */
    coffer_value lists = build_nested(D, 0, 0, items, entries);
    assert_ok(coffer_object_set_value(h, H_ANY, &lists));
    coffer_value maps = build_nested(D, 1, 0, items, entries);
    assert_ok(coffer_object_set_value(h, H_ANY2, &maps));
    coffer_list *ll = NULL;
    coffer_map *lm = NULL;
    walk_nested(h, H_ANY, D, 0, 0, &ll, &lm);
    assert_non_null(ll);
    /* at the deepest level no further collection fits, scalars do */
    coffer_value empty = coffer_value_list(NULL, 0);
    assert_status(coffer_list_append(ll, &empty), COFFER_ERR_LIMIT);
    coffer_value emap = coffer_value_map(NULL, 0);
    assert_status(coffer_list_append(ll, &emap), COFFER_ERR_LIMIT);
    assert_status(coffer_list_set(ll, 1, &empty), COFFER_ERR_LIMIT);
    assert_status(coffer_list_insert(ll, 0, &emap), COFFER_ERR_LIMIT);
    lappend(ll, coffer_value_int(101));
    assert_int_equal(lcount(ll), 3);
    coffer_list_release(ll);
    walk_nested(h, H_ANY2, D, 1, 0, &ll, &lm);
    assert_non_null(lm);
    assert_status(coffer_map_set(lm, "more", SIZE_MAX, &emap), COFFER_ERR_LIMIT);
    assert_status(coffer_map_set(lm, "more", SIZE_MAX, &empty), COFFER_ERR_LIMIT);
    mset(lm, "more", coffer_value_int(7));
    coffer_map_release(lm);

    /* one level up there is room for exactly one more level */
    coffer_list *l99 = NULL;
    walk_nested_to(h, H_ANY, D - 1, 0, 0, 0, &l99, &lm);
    assert_non_null(l99);
    /* replace "next" (level 100) by a fresh empty list: still 100 levels */
    assert_ok(coffer_list_set(l99, 1, &empty));
    coffer_value one_in[] = {coffer_value_int(1)};
    coffer_value two_levels = coffer_value_list(one_in, 1);
    coffer_value nest2[] = {two_levels};
    coffer_value three_levels = coffer_value_list(nest2, 1);
    assert_ok(coffer_list_append(l99, &two_levels)); /* level 100 holds ints only */
    assert_status(coffer_list_append(l99, &three_levels), COFFER_ERR_LIMIT);
    assert_int_equal(lcount(l99), 3);
    /* put the original level 100 back */
    coffer_value bottom[] = {coffer_value_int(D), ts_str("bottom"), coffer_value_int(101)};
    coffer_value orig = coffer_value_list(bottom, 3);
    assert_ok(coffer_list_set(l99, 1, &orig));
    assert_ok(coffer_list_remove(l99, 2));
    coffer_list_release(l99);

    /* alternating lists and maps */
    coffer_field f[] = {ts_field(H_ANY, build_nested(D, 0, 1, items, entries))};
    coffer_object *alt = ts_create(w, C.holder, f, 1);
    coffer_object_key ak = coffer_object_key_of(alt);
    walk_nested(alt, H_ANY, D, 0, 1, &ll, &lm);
    ts_commit(w);

    if (env->mode != TS_MEMORY)
        reopen(env);
    coffer_txn *r = ts_begin(env->db, COFFER_TXN_READ);
    assert_ok(coffer_object_get(r, C.holder, hk, &h));
    walk_nested(h, H_ANY, D, 0, 0, &ll, &lm);
    assert_list_item(ll, 2, coffer_value_int(101));
    walk_nested(h, H_ANY2, D, 1, 0, &ll, &lm);
    assert_map_item(lm, "more", coffer_value_int(7));
    assert_ok(coffer_object_get(r, C.holder, ak, &alt));
    walk_nested(alt, H_ANY, D, 0, 1, &ll, &lm);
    coffer_txn_free(r);

    /* deleting an object with deep nesting works and leaves nothing behind */
    w = ts_begin(env->db, COFFER_TXN_WRITE);
    assert_ok(coffer_object_get(w, C.holder, hk, &h));
    assert_ok(coffer_object_delete(h));
    assert_ok(coffer_object_get(w, C.holder, ak, &alt));
    coffer_value nul = coffer_value_null();
    assert_ok(coffer_object_set_value(alt, H_ANY, &nul));
    ts_commit(w);
    assert_int_equal(ts_count_of(env->db, "Holder"), 1);
}

/* A handle that does not see a class reads links to it in mixed values
 * with class_id UINT32_MAX, and counts its backlinks. */
TS_ENV_TEST(test_mixed_link_to_hidden_class)
{
    coffer_txn *w = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_object *h = new_holder(w, "h");
    coffer_object_key hk = coffer_object_key_of(h);
    coffer_object *other = ts_create(w, C.other, NULL, 0);
    coffer_object *item = new_item(w, 1);
    coffer_object_key ik = coffer_object_key_of(item);
    coffer_value ol = coffer_value_object(other);
    assert_ok(coffer_object_set_value(h, H_ANY, &ol));
    coffer_value il = coffer_value_object(item);
    assert_ok(coffer_object_set_value(h, H_ANY2, &il));
    ts_commit(w);

    /* a second handle on the same storage that sees Item and Holder only */
    coffer_config *cfg = ts_env_config(env);
    const char *subset[] = {"Item", "Holder"};
    assert_ok(coffer_config_set_class_subset(cfg, subset, 2));
    coffer_db *sub = NULL;
    assert_ok(coffer_open(cfg, &sub));
    coffer_config_free(cfg);
    assert_int_equal(coffer_db_class_count(sub), 2);
    coffer_class_id sh = 0, si = 0;
    assert_ok(coffer_db_find_class(sub, "Holder", &sh));
    assert_ok(coffer_db_find_class(sub, "Item", &si));
    coffer_property_id sany = 0, sany2 = 0;
    assert_ok(coffer_db_find_property(sub, sh, "any", &sany));
    assert_ok(coffer_db_find_property(sub, sh, "any2", &sany2));
    coffer_txn *r = ts_begin(sub, COFFER_TXN_READ);
    coffer_object *rh = NULL;
    assert_ok(coffer_object_get(r, sh, hk, &rh));
    coffer_value v;
    assert_ok(coffer_object_get_value(rh, sany, &v));
    assert_int_equal(v.type, COFFER_TYPE_LINK);
    assert_int_equal(v.u.link.class_id, UINT32_MAX);
    assert_ok(coffer_object_get_value(rh, sany2, &v));
    assert_int_equal(v.type, COFFER_TYPE_LINK);
    assert_int_equal(v.u.link.class_id, si);
    assert_int_equal(v.u.link.key, ik);
    coffer_txn_free(r);

    /* backlinks from a class the handle does not see still count */
    w = ts_begin(sub, COFFER_TXN_WRITE);
    coffer_object *ri = NULL;
    assert_ok(coffer_object_get(w, si, ik, &ri));
    uint64_t n = 0;
    assert_ok(coffer_object_backlink_count_all(ri, &n));
    assert_int_equal(n, 1);
    ts_commit(w);
    coffer_close(sub);
}

/* ------------------------------------------------------------------------ */
/* Handles                                                                   */
/* ------------------------------------------------------------------------ */

TS_ENV_TEST(test_handles_after_object_delete)
{
    coffer_txn *w = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_object *h = new_holder(w, "h");
    coffer_value two[] = {coffer_value_int(1), coffer_value_int(2)};
    coffer_value tv = coffer_value_list(two, 2);
    assert_ok(coffer_object_set_value(h, H_INTS, &tv));
    assert_ok(coffer_object_set_value(h, H_ANY, &tv));
    coffer_list *l = open_list(h, H_INTS);
    coffer_set *s = open_set(h, H_SET_INT);
    set_add(s, coffer_value_int(1));
    coffer_map *m = open_map(h, H_MAP_INT);
    mset(m, "a", coffer_value_int(1));
    coffer_list *nl = open_list(h, H_ANY);
    assert_ok(coffer_object_delete(h));

    coffer_value v, one = coffer_value_int(1);
    uint64_t n;
    int flag;
    assert_false(coffer_list_is_valid(l));
    assert_false(coffer_set_is_valid(s));
    assert_false(coffer_map_is_valid(m));
    assert_false(coffer_list_is_valid(nl));
    assert_status(coffer_list_count(l, &n), COFFER_ERR_NOT_FOUND);
    assert_status(coffer_list_get(l, 0, &v), COFFER_ERR_NOT_FOUND);
    assert_status(coffer_list_append(l, &one), COFFER_ERR_NOT_FOUND);
    assert_status(coffer_list_clear(l), COFFER_ERR_NOT_FOUND);
    assert_status(coffer_list_count(nl, &n), COFFER_ERR_NOT_FOUND);
    assert_status(coffer_list_append(nl, &one), COFFER_ERR_NOT_FOUND);
    assert_status(coffer_set_count(s, &n), COFFER_ERR_NOT_FOUND);
    assert_status(coffer_set_insert(s, &one, &flag), COFFER_ERR_NOT_FOUND);
    assert_status(coffer_set_contains(s, &one, &flag), COFFER_ERR_NOT_FOUND);
    assert_status(coffer_map_count(m, &n), COFFER_ERR_NOT_FOUND);
    assert_status(coffer_map_set(m, "b", 1, &one), COFFER_ERR_NOT_FOUND);
    assert_status(coffer_map_get(m, "a", 1, &v), COFFER_ERR_NOT_FOUND);
    assert_status(coffer_map_contains(m, "a", 1, &flag), COFFER_ERR_NOT_FOUND);
    coffer_bytes k;
    assert_status(coffer_map_get_entry(m, 0, &k, &v), COFFER_ERR_NOT_FOUND);
    assert_status(coffer_set_get(s, 0, &v), COFFER_ERR_NOT_FOUND);
    coffer_list *nested = NULL;
    assert_status(coffer_list_get_list(nl, 0, &nested), COFFER_ERR_NOT_FOUND);
    /* opening a collection of a deleted object */
    coffer_list *l2 = NULL;
    assert_status(coffer_object_get_list(h, H_INTS, &l2), COFFER_ERR_NOT_FOUND);
    coffer_map *m2 = NULL;
    assert_status(coffer_object_get_map(h, H_MAP_INT, &m2), COFFER_ERR_NOT_FOUND);
    coffer_list_release(l);
    coffer_set_release(s);
    coffer_map_release(m);
    coffer_list_release(nl);
    ts_commit(w);
}

TS_ENV_TEST(test_handles_after_nested_replace)
{
    coffer_txn *w = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_value one[] = {coffer_value_int(1)};
    coffer_map_entry me[] = {{.key = {"a", 1}, .value = coffer_value_int(1)}};
    coffer_value top[] = {coffer_value_list(one, 1), coffer_value_map(me, 1), coffer_value_list(one, 1)};
    coffer_object *h = holder_with(w, H_ANY, coffer_value_list(top, 3));
    coffer_list *outer = open_list(h, H_ANY);
    coffer_list *in0 = NULL, *in2 = NULL;
    coffer_map *in1 = NULL;
    assert_ok(coffer_list_get_list(outer, 0, &in0));
    assert_ok(coffer_list_get_map(outer, 1, &in1));
    assert_ok(coffer_list_get_list(outer, 2, &in2));
    uint64_t n;
    coffer_value v, x = coffer_value_int(5);

    /* appending to the parent leaves nested handles valid */
    lappend(outer, coffer_value_int(9));
    assert_true(coffer_list_is_valid(in0));
    assert_int_equal(lcount(in0), 1);
    /* list_set replaces element 0: its handle dies, the others live */
    assert_ok(coffer_list_set(outer, 0, &x));
    assert_false(coffer_list_is_valid(in0));
    assert_status(coffer_list_count(in0, &n), COFFER_ERR_NOT_FOUND);
    assert_status(coffer_list_append(in0, &x), COFFER_ERR_NOT_FOUND);
    assert_true(coffer_map_is_valid(in1));
    assert_int_equal(mcount(in1), 1);
    /* even a new collection in the same place is another collection */
    coffer_value fresh = coffer_value_list(one, 1);
    assert_ok(coffer_list_set(outer, 2, &fresh));
    assert_false(coffer_list_is_valid(in2));
    assert_status(coffer_list_get(in2, 0, &v), COFFER_ERR_NOT_FOUND);
    coffer_list *again = NULL;
    assert_ok(coffer_list_get_list(outer, 2, &again));
    assert_int_equal(lcount(again), 1);
    /* list_remove of the map */
    assert_ok(coffer_list_remove(outer, 1));
    assert_false(coffer_map_is_valid(in1));
    assert_status(coffer_map_count(in1, &n), COFFER_ERR_NOT_FOUND);
    assert_status(coffer_map_set(in1, "b", 1, &x), COFFER_ERR_NOT_FOUND);
    /* list_clear kills the rest */
    assert_ok(coffer_list_clear(outer));
    assert_false(coffer_list_is_valid(again));
    assert_status(coffer_list_count(again, &n), COFFER_ERR_NOT_FOUND);
    /* maps of mixed values: set, remove, clear */
    coffer_map *mm = open_map(h, H_MAP_MIXED);
    mset(mm, "l", coffer_value_list(one, 1));
    mset(mm, "m", coffer_value_map(me, 1));
    coffer_list *ml = NULL;
    assert_ok(coffer_map_get_list(mm, "l", SIZE_MAX, &ml));
    coffer_map *mmm = NULL;
    assert_ok(coffer_map_get_map(mm, "m", SIZE_MAX, &mmm));
    mset(mm, "l", coffer_value_list(one, 1));
    assert_false(coffer_list_is_valid(ml));
    assert_status(coffer_list_count(ml, &n), COFFER_ERR_NOT_FOUND);
    assert_true(coffer_map_is_valid(mmm));
    assert_ok(coffer_map_get_list(mm, "l", SIZE_MAX, &ml));
    assert_ok(coffer_map_remove(mm, "m", SIZE_MAX, NULL));
    assert_false(coffer_map_is_valid(mmm));
    assert_status(coffer_map_get(mmm, "a", 1, &v), COFFER_ERR_NOT_FOUND);
    assert_ok(coffer_map_clear(mm));
    assert_false(coffer_list_is_valid(ml));
    ts_commit(w);
}

/* Replacing a mixed property's collection, even with another collection,
 * kills handles on the old one and on collections nested in it. */
TS_ENV_TEST(test_handles_after_mixed_replace)
{
    coffer_txn *w = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_value one[] = {coffer_value_int(1)};
    coffer_map_entry me[] = {{.key = {"a", 1}, .value = coffer_value_int(1)}};
    coffer_object *h = holder_with(w, H_ANY, coffer_value_list(one, 1));
    coffer_list *outer = open_list(h, H_ANY);
    uint64_t n;
    coffer_value x = coffer_value_int(5);
    /* a nested map handle whose parent map in a mixed property is replaced */
    coffer_map_entry outer_e[] = {{.key = {"in", 2}, .value = coffer_value_map(me, 1)}};
    coffer_value om = coffer_value_map(outer_e, 1);
    assert_ok(coffer_object_set_value(h, H_ANY2, &om));
    coffer_map *o = open_map(h, H_ANY2);
    coffer_map *oi = NULL;
    assert_ok(coffer_map_get_map(o, "in", SIZE_MAX, &oi));
    coffer_value nul = coffer_value_null();
    assert_ok(coffer_object_set_value(h, H_ANY2, &nul));
    assert_false(coffer_map_is_valid(o));
    assert_false(coffer_map_is_valid(oi));
    assert_status(coffer_map_count(oi, &n), COFFER_ERR_NOT_FOUND);
    /* a different scalar, and a map replaced by a map */
    coffer_value nm2 = coffer_value_map(outer_e, 1);
    assert_ok(coffer_object_set_value(h, H_ANY2, &nm2));
    o = open_map(h, H_ANY2);
    assert_ok(coffer_map_get_map(o, "in", SIZE_MAX, &oi));
    assert_ok(coffer_object_set_value(h, H_ANY2, &x));
    assert_false(coffer_map_is_valid(o));
    assert_false(coffer_map_is_valid(oi));
    assert_ok(coffer_object_set_value(h, H_ANY2, &nm2));
    o = open_map(h, H_ANY2);
    assert_ok(coffer_map_get_map(o, "in", SIZE_MAX, &oi));
    assert_ok(coffer_object_set_value(h, H_ANY2, &nm2));
    /* the property's handle follows the property to its new map; the
     * nested one belonged to the old map alone */
    assert_true(coffer_map_is_valid(o));
    assert_int_equal(mcount(o), 1);
    assert_false(coffer_map_is_valid(oi));
    assert_status(coffer_map_count(oi, &n), COFFER_ERR_NOT_FOUND);

    /* replacing the mixed property's list by another list: the handle reads
     * the new one */
    coffer_value two[] = {coffer_value_int(7), coffer_value_int(8)};
    coffer_value nl = coffer_value_list(two, 2);
    assert_ok(coffer_object_set_value(h, H_ANY, &nl));
    assert_true(coffer_list_is_valid(outer));
    assert_int_equal(lcount(outer), 2);
    coffer_list *outer2 = open_list(h, H_ANY);
    assert_int_equal(lcount(outer2), 2);
    assert_ok(coffer_object_set_value(h, H_ANY, &x));
    assert_false(coffer_list_is_valid(outer2));
    assert_status(coffer_list_append(outer2, &x), COFFER_ERR_NOT_FOUND);

    ts_commit(w);
}

TS_ENV_TEST(test_handles_after_txn_end)
{
    coffer_txn *w = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_object *h = new_holder(w, "h");
    coffer_list *l = open_list(h, H_INTS);
    coffer_set *s = open_set(h, H_SET_INT);
    coffer_map *m = open_map(h, H_MAP_INT);
    lappend(l, coffer_value_int(1));
    assert_ok(coffer_txn_commit(w));
    uint64_t n;
    coffer_value one = coffer_value_int(1);
    assert_false(coffer_list_is_valid(l));
    assert_false(coffer_set_is_valid(s));
    assert_false(coffer_map_is_valid(m));
    assert_status(coffer_list_count(l, &n), COFFER_ERR_MISUSE);
    assert_status(coffer_list_append(l, &one), COFFER_ERR_MISUSE);
    assert_status(coffer_set_count(s, &n), COFFER_ERR_MISUSE);
    assert_status(coffer_map_count(m, &n), COFFER_ERR_MISUSE);
    coffer_list *l2 = NULL;
    assert_status(coffer_object_get_list(h, H_INTS, &l2), COFFER_ERR_MISUSE);
    coffer_txn_free(w);

    coffer_txn *r = ts_begin(env->db, COFFER_TXN_READ);
    h = first_holder(r);
    l = open_list(h, H_INTS);
    assert_ints(l, 1);
    assert_ok(coffer_txn_abort(r));
    assert_status(coffer_list_count(l, &n), COFFER_ERR_MISUSE);
    coffer_txn_free(r);
}

/* ------------------------------------------------------------------------ */
/* Transactions                                                              */
/* ------------------------------------------------------------------------ */

static coffer_object_key make_populated(ts_env *env)
{
    coffer_txn *w = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_value ints[] = {coffer_value_int(1), coffer_value_int(2)};
    coffer_value strs[] = {ts_str("a"), ts_str("b")};
    coffer_map_entry me[] = {{.key = {"a", 1}, .value = coffer_value_int(1)}};
    coffer_value nested[] = {coffer_value_int(1), coffer_value_list(ints, 2)};
    coffer_field f[] = {
        ts_field(H_NAME, ts_str("populated")),
        ts_field(H_INTS, coffer_value_list(ints, 2)),
        ts_field(H_SET_STRING, coffer_value_list(strs, 2)),
        ts_field(H_MAP_INT, coffer_value_map(me, 1)),
        ts_field(H_ANY, coffer_value_list(nested, 2)),
    };
    coffer_object *h = ts_create(w, C.holder, f, 5);
    coffer_object_key hk = coffer_object_key_of(h);
    ts_commit(w);
    return hk;
}

static void check_populated(coffer_txn *txn, coffer_object_key hk)
{
    coffer_object *h = NULL;
    assert_ok(coffer_object_get(txn, C.holder, hk, &h));
    coffer_list *l = open_list(h, H_INTS);
    assert_ints(l, 1, 2);
    coffer_set *s = open_set(h, H_SET_STRING);
    assert_int_equal(scount(s), 2);
    assert_int_equal(set_has(s, ts_str("a")), 1);
    assert_int_equal(set_has(s, ts_str("b")), 1);
    coffer_map *m = open_map(h, H_MAP_INT);
    assert_int_equal(mcount(m), 1);
    assert_map_item(m, "a", coffer_value_int(1));
    coffer_list *a = open_list(h, H_ANY);
    assert_int_equal(lcount(a), 2);
    coffer_list *an = NULL;
    assert_ok(coffer_list_get_list(a, 1, &an));
    assert_ints(an, 1, 2);
}

TS_ENV_TEST(test_abort_discards_collection_changes)
{
    coffer_object_key hk = make_populated(env);

    coffer_txn *w = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_object *h = NULL;
    assert_ok(coffer_object_get(w, C.holder, hk, &h));
    coffer_list *l = open_list(h, H_INTS);
    lappend(l, coffer_value_int(3));
    assert_ok(coffer_list_swap(l, 0, 1));
    assert_ok(coffer_list_remove(l, 0));
    coffer_set *s = open_set(h, H_SET_STRING);
    set_add(s, ts_str("c"));
    set_del(s, ts_str("a"));
    coffer_map *m = open_map(h, H_MAP_INT);
    mset(m, "a", coffer_value_int(100));
    mset(m, "b", coffer_value_int(2));
    coffer_list *a = open_list(h, H_ANY);
    coffer_list *an = NULL;
    assert_ok(coffer_list_get_list(a, 1, &an));
    assert_ok(coffer_list_clear(an));
    lappend(a, coffer_value_map(NULL, 0));
    assert_ok(coffer_txn_abort(w));
    coffer_txn_free(w);

    coffer_txn *r = ts_begin(env->db, COFFER_TXN_READ);
    check_populated(r, hk);
    coffer_txn_free(r);

    /* clearing everything, then aborting */
    w = ts_begin(env->db, COFFER_TXN_WRITE);
    assert_ok(coffer_object_get(w, C.holder, hk, &h));
    assert_ok(coffer_list_clear(open_list(h, H_INTS)));
    assert_ok(coffer_set_clear(open_set(h, H_SET_STRING)));
    assert_ok(coffer_map_clear(open_map(h, H_MAP_INT)));
    assert_ok(coffer_list_clear(open_list(h, H_ANY)));
    coffer_txn_free(w); /* free aborts */
    r = ts_begin(env->db, COFFER_TXN_READ);
    check_populated(r, hk);
    coffer_txn_free(r);
}

TS_ENV_TEST(test_commit_reopen_keeps_collections)
{
    coffer_object_key hk = make_populated(env);
    coffer_txn *w = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_object *h = NULL;
    assert_ok(coffer_object_get(w, C.holder, hk, &h));
    coffer_list *l = open_list(h, H_INTS);
    lappend(l, coffer_value_int(3));
    ts_commit(w);

    if (env->mode != TS_MEMORY) {
        reopen(env);
    } else {
        /* an in-memory store keeps its data while a handle stays open */
        coffer_db *keep = ts_env_keep(env);
        reopen(env);
        coffer_close(keep);
    }
    coffer_txn *r = ts_begin(env->db, COFFER_TXN_READ);
    assert_ok(coffer_object_get(r, C.holder, hk, &h));
    l = open_list(h, H_INTS);
    assert_ints(l, 1, 2, 3);
    coffer_set *s = open_set(h, H_SET_STRING);
    assert_int_equal(scount(s), 2);
    coffer_map *m = open_map(h, H_MAP_INT);
    assert_map_item(m, "a", coffer_value_int(1));
    coffer_list *a = open_list(h, H_ANY);
    coffer_list *an = NULL;
    assert_ok(coffer_list_get_list(a, 1, &an));
    assert_ints(an, 1, 2);
    coffer_txn_free(r);
}

TS_ENV_TEST(test_read_txn_rejects_writes)
{
    coffer_object_key hk = make_populated(env);
    coffer_txn *r = ts_begin(env->db, COFFER_TXN_READ);
    coffer_object *h = NULL;
    assert_ok(coffer_object_get(r, C.holder, hk, &h));
    coffer_value one = coffer_value_int(1);
    coffer_list *l = open_list(h, H_INTS);
    assert_status(coffer_list_append(l, &one), COFFER_ERR_NOT_IN_WRITE);
    assert_status(coffer_list_insert(l, 0, &one), COFFER_ERR_NOT_IN_WRITE);
    assert_status(coffer_list_set(l, 0, &one), COFFER_ERR_NOT_IN_WRITE);
    assert_status(coffer_list_remove(l, 0), COFFER_ERR_NOT_IN_WRITE);
    assert_status(coffer_list_move(l, 0, 1), COFFER_ERR_NOT_IN_WRITE);
    assert_status(coffer_list_swap(l, 0, 1), COFFER_ERR_NOT_IN_WRITE);
    assert_status(coffer_list_clear(l), COFFER_ERR_NOT_IN_WRITE);
    coffer_set *s = open_set(h, H_SET_STRING);
    coffer_set *s2 = open_set(h, H_SET_STRING);
    coffer_value a = ts_str("a");
    assert_status(coffer_set_insert(s, &a, NULL), COFFER_ERR_NOT_IN_WRITE);
    assert_status(coffer_set_remove(s, &a, NULL), COFFER_ERR_NOT_IN_WRITE);
    assert_status(coffer_set_clear(s), COFFER_ERR_NOT_IN_WRITE);
    assert_status(coffer_set_union(s, s2), COFFER_ERR_NOT_IN_WRITE);
    assert_status(coffer_set_intersect(s, s2), COFFER_ERR_NOT_IN_WRITE);
    assert_status(coffer_set_subtract(s, s2), COFFER_ERR_NOT_IN_WRITE);
    coffer_map *m = open_map(h, H_MAP_INT);
    assert_status(coffer_map_set(m, "z", 1, &one), COFFER_ERR_NOT_IN_WRITE);
    assert_status(coffer_map_remove(m, "a", 1, NULL), COFFER_ERR_NOT_IN_WRITE);
    assert_status(coffer_map_clear(m), COFFER_ERR_NOT_IN_WRITE);
    coffer_list *an = NULL;
    assert_ok(coffer_list_get_list(open_list(h, H_ANY), 1, &an));
    assert_status(coffer_list_append(an, &one), COFFER_ERR_NOT_IN_WRITE);
    coffer_value lv = coffer_value_list(NULL, 0);
    assert_status(coffer_object_set_value(h, H_INTS, &lv), COFFER_ERR_NOT_IN_WRITE);
    /* reads still work and nothing changed */
    check_populated(r, hk);
    coffer_txn_free(r);
}

/* A list handle keeps the chunk it read last (opened once, decrypted once
 * in an encrypted file) only while the transaction writes nothing: another
 * handle's append, set and remove, and a delete that unlinks an element,
 * are each seen by a handle that read the same chunk before. */
TS_ENV_TEST(test_list_handles_see_each_others_writes)
{
    enum { N = 300 };
    coffer_object_key items[N], model[N + 1];
    coffer_txn *w = ts_begin(env->db, COFFER_TXN_WRITE);
    for (int i = 0; i < N; i++) {
        coffer_object *it = new_item(w, i);
        items[i] = coffer_object_key_of(it);
        coffer_object_release(it);
    }
    coffer_object *h = new_holder(w, "two handles");
    coffer_list *a = open_list(h, H_ITEMS), *b = open_list(h, H_ITEMS);
    size_t n = 0;
    for (int i = 0; i < N - 1; i++) {
        coffer_value v = coffer_value_link(C.item, items[i]);
        assert_ok(coffer_list_append(a, &v));
        model[n++] = items[i];
    }
    long_check_all(b, model, n); /* b now holds the last chunk */

    coffer_value v = coffer_value_link(C.item, items[N - 1]);
    assert_ok(coffer_list_append(a, &v));
    model[n++] = items[N - 1];
    long_check_all(b, model, n);

    v = coffer_value_link(C.item, items[0]);
    assert_ok(coffer_list_set(a, n - 2, &v));
    model[n - 2] = items[0];
    coffer_value got;
    assert_ok(coffer_list_get(b, n - 2, &got));
    assert_int_equal(got.u.link.key, items[0]);
    assert_ok(coffer_list_remove(b, 1));
    memmove(&model[1], &model[2], (n - 2) * sizeof *model);
    n--;
    long_check_all(a, model, n);

    /* The delete removes the item from the list through a handle of its own. */
    coffer_object_key victim = model[n - 1];
    long_check_all(a, model, n);
    coffer_object *vo = NULL;
    assert_ok(coffer_object_get(w, C.item, victim, &vo));
    assert_ok(coffer_object_delete(vo));
    size_t out = 0;
    for (size_t i = 0; i < n; i++)
        if (model[i] != victim)
            model[out++] = model[i];
    n = out;
    long_check_all(a, model, n);
    long_check_all(b, model, n);
    ts_commit(w);

    coffer_txn *r = ts_begin(env->db, COFFER_TXN_READ);
    h = first_holder(r);
    a = open_list(h, H_ITEMS);
    b = open_list(h, H_ITEMS);
    long_check_all(a, model, n);
    long_check_all(b, model, n);
    coffer_txn_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        COLL_TEST(test_list_basic),
        COLL_TEST(test_list_index_errors),
        COLL_TEST(test_list_types),
        COLL_TEST(test_list_long_links),
        COLL_TEST(test_list_handles_see_each_others_writes),
        COLL_TEST(test_list_random_ints),
        COLL_TEST(test_set_every_type),
        COLL_TEST(test_set_equality_rules),
        COLL_TEST(test_set_algebra),
        COLL_TEST(test_set_links),
        COLL_TEST(test_map_basic),
        COLL_TEST(test_map_key_rules),
        COLL_TEST(test_map_types),
        COLL_TEST(test_mixed_scalars),
        COLL_TEST(test_mixed_links),
        COLL_TEST(test_mixed_nested),
        COLL_TEST(test_mixed_max_nesting),
        COLL_TEST(test_mixed_link_to_hidden_class),
        COLL_TEST(test_handles_after_object_delete),
        COLL_TEST(test_handles_after_nested_replace),
        COLL_TEST(test_handles_after_mixed_replace),
        COLL_TEST(test_handles_after_txn_end),
        COLL_TEST(test_abort_discards_collection_changes),
        COLL_TEST(test_commit_reopen_keeps_collections),
        COLL_TEST(test_read_txn_rejects_writes),
    };
    return cmocka_run_group_tests_name("collections", tests, NULL, NULL);
}
