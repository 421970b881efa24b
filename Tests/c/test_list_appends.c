/* test_list_appends.c — appends to a list, which a write transaction keeps
 * at the list's end in memory until it commits or something else reads or
 * changes the list (docs/FORMAT.md, "Appends"), and reads in order, which
 * keep the chunk read last. Every test compares the list with a model,
 * inside the transaction, after its commit, after a reopen and through
 * coffer_db_verify(), on plain, encrypted and in-memory databases. */
#define _GNU_SOURCE
#include "test_support.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LIST_OF COFFER_COLLECTION_LIST
#define OPT COFFER_PROPERTY_OPTIONAL

enum { I_N = 0, I_COUNT };
enum { H_NAME = 0, H_INTS, H_STRINGS, H_ITEMS, H_OTHER_ITEMS, H_MIXED, H_OPT_DOUBLES, H_BLOBS, H_COUNT };

static const coffer_property_schema item_props[I_COUNT] = {
    {.name = "n", .type = COFFER_TYPE_INT},
};

static const coffer_property_schema holder_props[H_COUNT] = {
    {.name = "name", .type = COFFER_TYPE_STRING},
    {.name = "ints", .type = COFFER_TYPE_INT, .collection = LIST_OF},
    {.name = "strings", .type = COFFER_TYPE_STRING, .collection = LIST_OF},
    {.name = "items", .type = COFFER_TYPE_LINK, .collection = LIST_OF, .object_class = "Item"},
    {.name = "otherItems", .type = COFFER_TYPE_LINK, .collection = LIST_OF, .object_class = "Item"},
    {.name = "mixed", .type = COFFER_TYPE_MIXED, .flags = OPT, .collection = LIST_OF},
    {.name = "optDoubles", .type = COFFER_TYPE_DOUBLE, .flags = OPT, .collection = LIST_OF},
    {.name = "blobs", .type = COFFER_TYPE_BINARY, .collection = LIST_OF},
};

static const coffer_class_schema schema[] = {
    {.name = "Item", .properties = item_props, .property_count = I_COUNT},
    {.name = "Holder", .properties = holder_props, .property_count = H_COUNT},
};
#define SCHEMA_COUNT (sizeof schema / sizeof schema[0])

static struct {
    coffer_class_id item, holder;
} C;
static const char *const class_names[] = {"Item", "Holder"};
static coffer_class_id *const class_ids[] = {&C.item, &C.holder};

static int setup(void **state)
{
    return ts_setup_schema_classes(state, schema, SCHEMA_COUNT, 2, class_names, class_ids);
}

#define LIST_TEST(f) TS_TEST_ALL_MODES_SETUP(f, setup)

/* ---- helpers ------------------------------------------------------------- */

static void reopen(ts_env *env)
{
    coffer_db *keep = ts_env_keep(env);
    ts_env_reopen(env, schema, SCHEMA_COUNT, 1);
    assert_int_equal(ts_find_classes(env->db, 2, class_names, class_ids), 0);
    if (keep)
        coffer_close(keep);
}

static coffer_object_key new_object(coffer_txn *txn, coffer_class_id cls, const coffer_field *f, size_t n)
{
    coffer_object *o;
    assert_ok(coffer_object_create(txn, cls, f, n, COFFER_UPDATE_ERROR, &o));
    coffer_object_key k = coffer_object_key_of(o);
    coffer_object_release(o);
    return k;
}

static coffer_object_key new_item(coffer_txn *txn, int64_t n)
{
    coffer_field f = {I_N, coffer_value_int(n)};
    return new_object(txn, C.item, &f, 1);
}

static coffer_object_key new_holder(coffer_txn *txn)
{
    coffer_field f = {H_NAME, ts_str("h")};
    return new_object(txn, C.holder, &f, 1);
}

/* Opens list `prop` of holder `hk` in `txn`; the handle lives as long as
 * the transaction. */
static coffer_list *open_list(coffer_txn *txn, coffer_object_key hk, coffer_property_id prop)
{
    coffer_object *h;
    coffer_list *l;
    assert_ok(coffer_object_get(txn, C.holder, hk, &h));
    assert_ok(coffer_object_get_list(h, prop, &l));
    coffer_object_release(h);
    return l;
}

static uint64_t lcount(coffer_list *l)
{
    uint64_t n;
    assert_ok(coffer_list_count(l, &n));
    return n;
}

static void append_int(coffer_list *l, int64_t v)
{
    coffer_value x = coffer_value_int(v);
    assert_ok(coffer_list_append(l, &x));
}

static void append_link(coffer_list *l, coffer_object_key k)
{
    coffer_value x = coffer_value_link(C.item, k);
    assert_ok(coffer_list_append(l, &x));
}

/* The list of ints equals model[0 .. n), read in order. */
#define assert_ints(l, model, n) check_ints((l), (model), (n), __FILE__, __LINE__)
static void check_ints(coffer_list *l, const int64_t *model, size_t n, const char *file, int line)
{
    uint64_t count = lcount(l);
    if (count != n) {
        print_error("%s:%d: the list has %" PRIu64 " elements, the model %zu\n", file, line, count, n);
        fail();
    }
    for (size_t i = 0; i < n; i++) {
        coffer_value v;
        assert_ok(coffer_list_get(l, i, &v));
        if (v.type != COFFER_TYPE_INT || v.u.integer != model[i]) {
            print_error("%s:%d: element %zu is %" PRId64 " (type %d), the model has %" PRId64 "\n", file, line, i,
                        v.u.integer, (int)v.type, model[i]);
            fail();
        }
    }
}

/* The list of links equals model[0 .. n), read in order. */
#define assert_links(l, model, n) check_links((l), (model), (n), __FILE__, __LINE__)
static void check_links(coffer_list *l, const coffer_object_key *model, size_t n, const char *file, int line)
{
    uint64_t count = lcount(l);
    if (count != n) {
        print_error("%s:%d: the list has %" PRIu64 " elements, the model %zu\n", file, line, count, n);
        fail();
    }
    for (size_t i = 0; i < n; i++) {
        coffer_value v;
        assert_ok(coffer_list_get(l, i, &v));
        if (v.type != COFFER_TYPE_LINK || v.u.link.class_id != C.item || v.u.link.key != model[i]) {
            print_error("%s:%d: element %zu links to %" PRIu64 ", the model to %" PRIu64 "\n", file, line, i, v.u.link.key,
                        model[i]);
            fail();
        }
    }
}

/* coffer_db_verify finds nothing wrong: chunk and header agree, and every
 * backlink count matches the links stored. */
static void assert_verified(coffer_db *db)
{
    coffer_verify_report *r;
    assert_ok(coffer_db_verify(db, &r));
    size_t n = coffer_verify_report_count(r);
    for (size_t i = 0; i < n; i++)
        print_error("verify: %s\n", coffer_verify_report_message(r, i));
    coffer_verify_report_free(r);
    assert_int_equal(n, 0);
}

static uint64_t backlinks_of(coffer_txn *txn, coffer_object_key item)
{
    coffer_object *o;
    uint64_t n;
    assert_ok(coffer_object_get(txn, C.item, item, &o));
    assert_ok(coffer_object_backlink_count_from(o, C.holder, H_ITEMS, &n));
    coffer_object_release(o);
    return n;
}

/* ---- tests --------------------------------------------------------------- */

/* Appends across many chunk boundaries (by count and, with long strings, by
 * bytes), read back in the transaction, after the commit and after a
 * reopen, in order and by random index. */
TS_ENV_TEST(test_append_across_chunks)
{
    enum { N = 2000 };
    int64_t *model = malloc(N * sizeof *model);
    assert_non_null(model);
    coffer_txn *w = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_object_key hk = new_holder(w);
    coffer_list *l = open_list(w, hk, H_INTS);
    coffer_list *s = open_list(w, hk, H_STRINGS);
    char text[700];
    for (size_t i = 0; i < N; i++) {
        model[i] = (int64_t)(i * 7919 % 1000003) - 500000;
        append_int(l, model[i]);
        /* 1 to 600 bytes: some chunks split by bytes long before 128 cells,
         * one cell over 600 bytes gets a chunk nearly to itself. */
        size_t len = 1 + i * 37 % 600;
        memset(text, 'a' + (int)(i % 26), len);
        text[len] = 0;
        coffer_value v = coffer_value_string(text, len);
        assert_ok(coffer_list_append(s, &v));
        if (i % 333 == 0)
            assert_ints(l, model, i + 1); /* reads in the middle of the appends */
    }
    assert_ints(l, model, N);
    ts_commit(w);

    coffer_txn *r = ts_begin(env->db, COFFER_TXN_READ);
    l = open_list(r, hk, H_INTS);
    s = open_list(r, hk, H_STRINGS);
    assert_ints(l, model, N);
    assert_int_equal(lcount(s), N);
    for (size_t i = 0; i < N; i++) {
        coffer_value v;
        assert_ok(coffer_list_get(s, i, &v));
        size_t len = 1 + i * 37 % 600;
        assert_int_equal(v.type, COFFER_TYPE_STRING);
        assert_int_equal(v.u.string.size, len);
        assert_int_equal(((const char *)v.u.string.data)[0], 'a' + (int)(i % 26));
        assert_int_equal(((const char *)v.u.string.data)[len - 1], 'a' + (int)(i % 26));
    }
    ts_seed(11);
    for (int k = 0; k < 3000; k++) { /* random order: the kept chunk changes */
        uint64_t i = ts_rand_below(N);
        coffer_value v;
        assert_ok(coffer_list_get(l, i, &v));
        assert_int_equal(v.u.integer, model[i]);
    }
    coffer_value v;
    assert_status(coffer_list_get(l, N, &v), COFFER_ERR_INVALID_ARGUMENT);
    assert_error_contains("out of range");
    coffer_txn_free(r);
    assert_verified(env->db);

    reopen(env);
    r = ts_begin(env->db, COFFER_TXN_READ);
    assert_ints(open_list(r, hk, H_INTS), model, N);
    coffer_txn_free(r);
    free(model);
}

/* Appends mixed with inserts, removals, sets, moves and swaps in the same
 * transaction, and with reads through a second handle: each sees what the
 * appends before it did. */
TS_ENV_TEST(test_appends_mixed_with_edits)
{
    enum { OPS = 4000, CAP = OPS + 10 };
    int64_t *model = malloc(CAP * sizeof *model);
    assert_non_null(model);
    size_t n = 0;
    ts_seed(2024);
    coffer_txn *w = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_object_key hk = new_holder(w);
    coffer_list *l = open_list(w, hk, H_INTS);
    coffer_list *other = open_list(w, hk, H_INTS); /* the same list */
    for (int op = 0; op < OPS; op++) {
        uint64_t kind = ts_rand_below(16);
        int64_t v = (int64_t)op;
        if (kind < 9 || n < 2) {
            append_int(kind == 8 ? other : l, v);
            model[n++] = v;
        } else if (kind == 9) {
            size_t at = (size_t)ts_rand_below(n + 1);
            coffer_value x = coffer_value_int(v);
            assert_ok(coffer_list_insert(l, at, &x));
            memmove(&model[at + 1], &model[at], (n - at) * sizeof *model);
            model[at] = v;
            n++;
        } else if (kind == 10) {
            size_t at = n - 1 - (size_t)ts_rand_below(n < 4 ? n : 4); /* near the end: in the kept chunk */
            assert_ok(coffer_list_remove(l, at));
            memmove(&model[at], &model[at + 1], (n - at - 1) * sizeof *model);
            n--;
        } else if (kind == 11) {
            size_t at = (size_t)ts_rand_below(n);
            coffer_value x = coffer_value_int(-v);
            assert_ok(coffer_list_set(other, at, &x));
            model[at] = -v;
        } else if (kind == 12) {
            size_t from = (size_t)ts_rand_below(n), to = (size_t)ts_rand_below(n);
            assert_ok(coffer_list_move(l, from, to));
            int64_t m = model[from];
            memmove(&model[from], &model[from + 1], (n - from - 1) * sizeof *model);
            memmove(&model[to + 1], &model[to], (n - 1 - to) * sizeof *model);
            model[to] = m;
        } else if (kind == 13) {
            size_t a = (size_t)ts_rand_below(n), b = n - 1;
            assert_ok(coffer_list_swap(other, a, b));
            int64_t t = model[a];
            model[a] = model[b];
            model[b] = t;
        } else if (kind == 14) {
            coffer_value x;
            size_t at = n - 1;
            assert_ok(coffer_list_get(other, at, &x));
            assert_int_equal(x.u.integer, model[at]);
            assert_int_equal(lcount(other), n);
        } else { /* the count through the owner's property */
            coffer_object *h;
            coffer_value x;
            assert_ok(coffer_object_get(w, C.holder, hk, &h));
            assert_ok(coffer_object_get_value(h, H_INTS, &x));
            assert_int_equal(x.type, COFFER_TYPE_LIST);
            assert_int_equal(x.u.list.count, n);
            coffer_object_release(h);
        }
        if (op % 500 == 0)
            assert_ints(other, model, n);
    }
    assert_ints(l, model, n);
    assert_ints(other, model, n);
    ts_commit(w);
    assert_verified(env->db);
    coffer_txn *r = ts_begin(env->db, COFFER_TXN_READ);
    assert_ints(open_list(r, hk, H_INTS), model, n);
    coffer_txn_free(r);
    free(model);
}

/* A list of 100,000 links appended 1,000 per transaction, and read back in
 * order: equal to the model, and each item's backlink count is the number
 * of times the list holds it. */
TS_ENV_TEST(test_long_list_in_batches)
{
    enum { N = 100000, ITEMS = 500, BATCH = 1000 };
    coffer_object_key items[ITEMS];
    uint64_t counts[ITEMS] = {0};
    coffer_object_key *model = malloc(N * sizeof *model);
    assert_non_null(model);
    coffer_txn *w = ts_begin(env->db, COFFER_TXN_WRITE);
    for (int i = 0; i < ITEMS; i++)
        items[i] = new_item(w, i);
    coffer_object_key hk = new_holder(w);
    ts_commit(w);
    ts_seed(99);
    for (size_t first = 0; first < N; first += BATCH) {
        w = ts_begin(env->db, COFFER_TXN_WRITE);
        coffer_list *l = open_list(w, hk, H_ITEMS);
        for (size_t i = first; i < first + BATCH; i++) {
            size_t t = (size_t)ts_rand_below(ITEMS);
            append_link(l, items[t]);
            model[i] = items[t];
            counts[t]++;
        }
        ts_commit(w);
    }
    coffer_txn *r = ts_begin(env->db, COFFER_TXN_READ);
    assert_links(open_list(r, hk, H_ITEMS), model, N);
    for (int i = 0; i < ITEMS; i += 49)
        assert_int_equal(backlinks_of(r, items[i]), counts[i]);
    coffer_txn_free(r);
    assert_verified(env->db);
    free(model);
}

/* Lists of every element type appended to, alternating between lists in
 * one transaction (the transaction keeps one list's end at a time). */
TS_ENV_TEST(test_every_type_alternating)
{
    enum { N = 300 };
    coffer_txn *w = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_object_key item = new_item(w, 5);
    coffer_object_key hk = new_holder(w);
    coffer_list *ints = open_list(w, hk, H_INTS), *strs = open_list(w, hk, H_STRINGS), *links = open_list(w, hk, H_ITEMS),
                *mixed = open_list(w, hk, H_MIXED), *dbl = open_list(w, hk, H_OPT_DOUBLES), *blobs = open_list(w, hk, H_BLOBS);
    char text[32];
    for (int i = 0; i < N; i++) {
        append_int(ints, i);
        snprintf(text, sizeof text, "s%d", i);
        coffer_value s = coffer_value_string(text, SIZE_MAX);
        assert_ok(coffer_list_append(strs, &s));
        append_link(links, item);
        coffer_value m = i % 3 == 0 ? coffer_value_int(i) : i % 3 == 1 ? ts_str("mixed") : coffer_value_link(C.item, item);
        assert_ok(coffer_list_append(mixed, &m));
        coffer_value d = i % 2 ? coffer_value_double(i + 0.5) : coffer_value_null();
        assert_ok(coffer_list_append(dbl, &d));
        uint8_t bytes[3] = {(uint8_t)i, 0, (uint8_t)(i >> 8)};
        coffer_value b = coffer_value_binary(bytes, sizeof bytes);
        assert_ok(coffer_list_append(blobs, &b));
    }
    ts_commit(w);
    assert_verified(env->db);
    coffer_txn *r = ts_begin(env->db, COFFER_TXN_READ);
    ints = open_list(r, hk, H_INTS);
    strs = open_list(r, hk, H_STRINGS);
    links = open_list(r, hk, H_ITEMS);
    mixed = open_list(r, hk, H_MIXED);
    dbl = open_list(r, hk, H_OPT_DOUBLES);
    blobs = open_list(r, hk, H_BLOBS);
    for (int i = 0; i < N; i++) {
        coffer_value v;
        assert_ok(coffer_list_get(ints, (uint64_t)i, &v));
        assert_int_equal(v.u.integer, i);
        assert_ok(coffer_list_get(strs, (uint64_t)i, &v));
        snprintf(text, sizeof text, "s%d", i);
        assert_int_equal(v.u.string.size, strlen(text));
        assert_memory_equal(v.u.string.data, text, strlen(text));
        assert_ok(coffer_list_get(links, (uint64_t)i, &v));
        assert_int_equal(v.type, COFFER_TYPE_LINK);
        assert_int_equal(v.u.link.key, item);
        assert_ok(coffer_list_get(mixed, (uint64_t)i, &v));
        assert_int_equal(v.type, i % 3 == 0 ? COFFER_TYPE_INT : i % 3 == 1 ? COFFER_TYPE_STRING : COFFER_TYPE_LINK);
        assert_ok(coffer_list_get(dbl, (uint64_t)i, &v));
        if (i % 2) {
            assert_int_equal(v.type, COFFER_TYPE_DOUBLE);
            assert_true(v.u.double_value == i + 0.5);
        } else {
            assert_int_equal(v.type, COFFER_TYPE_NULL);
        }
        assert_ok(coffer_list_get(blobs, (uint64_t)i, &v));
        assert_int_equal(v.type, COFFER_TYPE_BINARY);
        assert_int_equal(v.u.binary.size, 3);
        assert_int_equal(((const uint8_t *)v.u.binary.data)[0], (uint8_t)i);
    }
    /* The links of the list and those of the mixed list, counted apart. */
    assert_int_equal(backlinks_of(r, item), N);
    coffer_txn_free(r);
}

/* Links appended, then their targets deleted in the same transaction: the
 * list drops them at once, and the backlinks match. */
TS_ENV_TEST(test_links_then_delete_targets)
{
    enum { ITEMS = 10, N = 700 };
    coffer_object_key items[ITEMS];
    coffer_object_key model[N];
    coffer_txn *w = ts_begin(env->db, COFFER_TXN_WRITE);
    for (int i = 0; i < ITEMS; i++)
        items[i] = new_item(w, i);
    coffer_object_key hk = new_holder(w);
    append_link(open_list(w, hk, H_ITEMS), items[0]); /* stored before the appends below */
    ts_commit(w);

    w = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_list *l = open_list(w, hk, H_ITEMS);
    size_t n = 1;
    model[0] = items[0];
    for (int i = 0; i < N - 1; i++) {
        append_link(l, items[i % ITEMS]);
        model[n++] = items[i % ITEMS];
    }
    assert_int_equal(backlinks_of(w, items[3]), (N - 1) / ITEMS + ((N - 1) % ITEMS > 3));
    /* Delete items 3 and 0: every link to them goes, from the last. */
    for (int d = 0; d < 2; d++) {
        coffer_object_key gone = items[d ? 0 : 3];
        coffer_object *o;
        assert_ok(coffer_object_get(w, C.item, gone, &o));
        assert_ok(coffer_object_delete(o));
        coffer_object_release(o);
        size_t m = 0;
        for (size_t i = 0; i < n; i++)
            if (model[i] != gone)
                model[m++] = model[i];
        n = m;
        assert_links(l, model, n);
    }
    assert_int_equal(backlinks_of(w, items[4]), (N - 1) / ITEMS + ((N - 1) % ITEMS > 4));
    /* Appending goes on after the deletes. */
    append_link(l, items[4]);
    model[n++] = items[4];
    assert_links(l, model, n);
    ts_commit(w);
    assert_verified(env->db);
    coffer_txn *r = ts_begin(env->db, COFFER_TXN_READ);
    assert_links(open_list(r, hk, H_ITEMS), model, n);
    coffer_txn_free(r);
}

/* The holder deleted after appends to its lists in the same transaction:
 * the lists and the backlinks they held are gone. */
TS_ENV_TEST(test_owner_deleted_after_appends)
{
    coffer_txn *w = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_object_key item = new_item(w, 1);
    coffer_object_key hk = new_holder(w);
    coffer_list *l = open_list(w, hk, H_ITEMS);
    for (int i = 0; i < 300; i++)
        append_link(l, item);
    ts_commit(w);
    w = ts_begin(env->db, COFFER_TXN_WRITE);
    l = open_list(w, hk, H_ITEMS);
    for (int i = 0; i < 300; i++)
        append_link(l, item);
    assert_int_equal(backlinks_of(w, item), 600);
    coffer_object *h;
    assert_ok(coffer_object_get(w, C.holder, hk, &h));
    assert_ok(coffer_object_delete(h));
    coffer_object_release(h);
    assert_int_equal(backlinks_of(w, item), 0);
    assert_false(coffer_list_is_valid(l));
    coffer_value v = coffer_value_link(C.item, item);
    assert_not_ok(coffer_list_append(l, &v));
    ts_commit(w);
    assert_verified(env->db);
}

/* An aborted transaction leaves the list as it was; a read transaction
 * begun before a commit keeps reading the list as it was then. */
TS_ENV_TEST(test_abort_and_snapshots)
{
    enum { N = 500 };
    int64_t model[2 * N];
    coffer_txn *w = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_object_key hk = new_holder(w);
    coffer_list *l = open_list(w, hk, H_INTS);
    for (int i = 0; i < N; i++) {
        model[i] = i;
        append_int(l, i);
    }
    ts_commit(w);

    w = ts_begin(env->db, COFFER_TXN_WRITE);
    l = open_list(w, hk, H_INTS);
    for (int i = 0; i < N; i++)
        append_int(l, 1000 + i);
    assert_int_equal(lcount(l), 2 * N);
    assert_ok(coffer_txn_abort(w));
    coffer_txn_free(w);

    coffer_txn *before = ts_begin(env->db, COFFER_TXN_READ);
    coffer_list *old = open_list(before, hk, H_INTS);
    assert_ints(old, model, N);

    w = ts_begin(env->db, COFFER_TXN_WRITE);
    l = open_list(w, hk, H_INTS);
    for (int i = 0; i < N; i++) {
        model[N + i] = 2000 + i;
        append_int(l, 2000 + i);
    }
    /* A write that fails checking leaves what was appended before it. */
    coffer_value bad = ts_str("not an int");
    assert_status(coffer_list_append(l, &bad), COFFER_ERR_TYPE);
    assert_error_contains("ints");
    coffer_txn_free(w); /* freed without commit: aborted */

    old = open_list(before, hk, H_INTS);
    assert_ints(old, model, N);
    w = ts_begin(env->db, COFFER_TXN_WRITE);
    l = open_list(w, hk, H_INTS);
    for (int i = 0; i < N; i++)
        append_int(l, 2000 + i);
    assert_status(coffer_list_append(l, &bad), COFFER_ERR_TYPE);
    ts_commit(w);

    assert_ints(old, model, N); /* pinned to its snapshot */
    coffer_txn_free(before);
    coffer_txn *after = ts_begin(env->db, COFFER_TXN_READ);
    assert_ints(open_list(after, hk, H_INTS), model, 2 * N);
    coffer_txn_free(after);
    assert_verified(env->db);
}

/* A list nested in a mixed list is appended to through its own handle. */
TS_ENV_TEST(test_nested_list_appends)
{
    enum { N = 400 };
    int64_t model[N];
    coffer_txn *w = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_object_key hk = new_holder(w);
    coffer_list *outer = open_list(w, hk, H_MIXED);
    coffer_value empty = {.type = COFFER_TYPE_LIST};
    assert_ok(coffer_list_append(outer, &empty));
    coffer_list *inner;
    assert_ok(coffer_list_get_list(outer, 0, &inner));
    append_int(inner, -1);
    ts_commit(w);

    w = ts_begin(env->db, COFFER_TXN_WRITE);
    outer = open_list(w, hk, H_MIXED);
    assert_ok(coffer_list_get_list(outer, 0, &inner));
    model[0] = -1;
    for (int i = 1; i < N; i++) {
        model[i] = i;
        append_int(inner, i);
        if (i % 50 == 0) { /* the outer list's count of it reads its header */
            coffer_value v;
            assert_ok(coffer_list_get(outer, 0, &v));
            assert_int_equal(v.type, COFFER_TYPE_LIST);
            assert_int_equal(v.u.list.count, (size_t)i + 1);
        }
    }
    ts_commit(w);
    coffer_txn *r = ts_begin(env->db, COFFER_TXN_READ);
    outer = open_list(r, hk, H_MIXED);
    assert_ok(coffer_list_get_list(outer, 0, &inner));
    assert_ints(inner, model, N);
    coffer_txn_free(r);
    assert_verified(env->db);
}

/* Appends made by a migration callback, in the open's own transaction,
 * are written when that transaction commits. */
typedef struct migration_arg {
    coffer_object_key holder;
    int appends;
} migration_arg;

static coffer_status append_in_migration(coffer_migration *m, uint64_t old_version, uint64_t new_version, void *ctx)
{
    (void)old_version;
    (void)new_version;
    const migration_arg *a = ctx;
    coffer_class_id holder;
    coffer_object *h;
    coffer_list *l;
    coffer_status st = coffer_db_find_class(coffer_migration_db(m), "Holder", &holder);
    if (st == COFFER_OK)
        st = coffer_object_get(coffer_migration_txn(m), holder, a->holder, &h);
    if (st != COFFER_OK)
        return st;
    st = coffer_object_get_list(h, H_INTS, &l);
    coffer_object_release(h);
    for (int i = 0; st == COFFER_OK && i < a->appends; i++) {
        coffer_value v = coffer_value_int(100 + i);
        st = coffer_list_append(l, &v);
    }
    return st;
}

TS_ENV_TEST(test_appends_in_migration)
{
    enum { FIRST = 5, MORE = 300 };
    int64_t model[FIRST + MORE];
    coffer_txn *w = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_object_key hk = new_holder(w);
    coffer_list *l = open_list(w, hk, H_INTS);
    for (int i = 0; i < FIRST; i++) {
        model[i] = i;
        append_int(l, i);
    }
    ts_commit(w);
    for (int i = 0; i < MORE; i++)
        model[FIRST + i] = 100 + i;

    coffer_db *keep = ts_env_keep(env);
    ts_env_close(env);
    migration_arg arg = {hk, MORE};
    coffer_config *config = ts_env_config(env);
    assert_ok(coffer_config_set_schema(config, schema, SCHEMA_COUNT, 2));
    assert_ok(coffer_config_set_migration(config, append_in_migration, &arg));
    assert_ok(coffer_open(config, &env->db));
    coffer_config_free(config);
    assert_int_equal(ts_find_classes(env->db, 2, class_names, class_ids), 0);
    coffer_txn *r = ts_begin(env->db, COFFER_TXN_READ);
    assert_ints(open_list(r, hk, H_INTS), model, FIRST + MORE);
    coffer_txn_free(r);
    assert_verified(env->db);
    if (keep)
        coffer_close(keep);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        LIST_TEST(test_append_across_chunks),
        LIST_TEST(test_appends_mixed_with_edits),
        LIST_TEST(test_long_list_in_batches),
        LIST_TEST(test_every_type_alternating),
        LIST_TEST(test_links_then_delete_targets),
        LIST_TEST(test_owner_deleted_after_appends),
        LIST_TEST(test_abort_and_snapshots),
        LIST_TEST(test_nested_list_appends),
        LIST_TEST(test_appends_in_migration),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
