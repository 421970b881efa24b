/* test_batch_read.c — coffer_object_pack(), coffer_object_pack_by_primary_key()
 * and coffer_results_pack(): the
 * packed layout of coffer.h decoded here from its documentation alone, and
 * compared with what coffer_object_get_value() reads one value at a time,
 * for every type, nulls, graph properties, strings copied and borrowed;
 * buffers too small (the size needed, nothing written past the end); pages
 * read across a commit (pinned to their read transaction); rows of deleted
 * objects; objects found by a primary key that is missing or of the wrong
 * type; bad arguments; coffer_pack_request_run(), a lookup made once per
 * class; and coffer_query_count_rebound(), a prepared query counted with
 * other arguments (rewritten in place when their types match). Every test runs on plain, encrypted and in-memory
 * databases. */
#define _GNU_SOURCE
#include "test_support.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OPT COFFER_PROPERTY_OPTIONAL

/* ---- decoding the documented layout ---------------------------------------- */

static coffer_pack_header header_of(const void *buf)
{
    coffer_pack_header h;
    memcpy(&h, buf, sizeof h);
    assert_int_equal(h.magic, COFFER_PACK_MAGIC);
    assert_int_equal(h.version, COFFER_PACK_VERSION);
    assert_int_equal(h.row_size, 16 + 24 * (uint64_t)h.value_count);
    return h;
}

static coffer_pack_row row_of(const void *buf, size_t row)
{
    coffer_pack_header h = header_of(buf);
    assert_true(row < h.row_count);
    coffer_pack_row r;
    memcpy(&r, (const uint8_t *)buf + 32 + row * h.row_size, sizeof r);
    return r;
}

/* Value i of row `row` as a coffer_value; strings and binaries point at
 * their bytes (copied into buf, or borrowed), which must end with a NUL. */
static coffer_value value_of(const void *buf, size_t row, size_t i)
{
    coffer_pack_header h = header_of(buf);
    assert_true(row < h.row_count && i < h.value_count);
    coffer_pack_value pv;
    memcpy(&pv, (const uint8_t *)buf + 32 + row * h.row_size + 16 + i * 24, sizeof pv);
    coffer_value v;
    memset(&v, 0, sizeof v);
    v.type = (coffer_type)pv.type;
    switch (v.type) {
    case COFFER_TYPE_NULL: break;
    case COFFER_TYPE_BOOL: assert_true(pv.u.boolean <= 1); v.u.boolean = pv.u.boolean; break;
    case COFFER_TYPE_INT: v.u.integer = pv.u.integer; break;
    case COFFER_TYPE_FLOAT: v.u.float_value = pv.u.float_value; break;
    case COFFER_TYPE_DOUBLE: v.u.double_value = pv.u.double_value; break;
    case COFFER_TYPE_STRING:
    case COFFER_TYPE_BINARY: {
        const uint8_t *data;
        if (h.flags & COFFER_PACK_BORROW) {
            data = (const uint8_t *)(uintptr_t)pv.u.bytes.ref;
        } else {
            assert_true(pv.u.bytes.ref >= 32 + h.row_count * h.row_size);
            assert_true(pv.u.bytes.ref + pv.u.bytes.size + 1 <= h.size);
            data = (const uint8_t *)buf + pv.u.bytes.ref;
        }
        if (v.type == COFFER_TYPE_STRING)
            assert_int_equal(data[pv.u.bytes.size], 0);
        v.u.string.data = data;
        v.u.string.size = (size_t)pv.u.bytes.size;
        break;
    }
    case COFFER_TYPE_DATE:
        v.u.date.seconds = pv.u.integer;
        v.u.date.nanoseconds = (int32_t)pv.extra;
        break;
    case COFFER_TYPE_OBJECT_ID: memcpy(v.u.object_id.bytes, pv.u.raw, 12); break;
    case COFFER_TYPE_UUID: memcpy(v.u.uuid.bytes, pv.u.raw, 16); break;
    case COFFER_TYPE_DECIMAL128:
        v.u.decimal128.w[0] = pv.u.words[0];
        v.u.decimal128.w[1] = pv.u.words[1];
        break;
    case COFFER_TYPE_LINK:
        v.u.link.key = (uint64_t)pv.u.integer;
        v.u.link.class_id = pv.extra;
        break;
    case COFFER_TYPE_LIST:
    case COFFER_TYPE_SET: v.u.list.count = (size_t)pv.u.integer; break;
    case COFFER_TYPE_MAP: v.u.map.count = (size_t)pv.u.integer; break;
    default: fail_msg("unexpected packed type %u", pv.type);
    }
    if (v.type != COFFER_TYPE_DATE && v.type != COFFER_TYPE_LINK)
        assert_int_equal(pv.extra, 0);
    return v;
}

static int same_value(const coffer_value *a, const coffer_value *b)
{
    if (a->type != b->type)
        return 0;
    if (a->type == COFFER_TYPE_LIST || a->type == COFFER_TYPE_SET)
        return a->u.list.count == b->u.list.count;
    if (a->type == COFFER_TYPE_MAP)
        return a->u.map.count == b->u.map.count;
    return ts_value_equal(a, b);
}

/* Row `row` of buf holds obj's key and props[i] as get_value reads them. */
static void assert_row_matches(const void *buf, size_t row, coffer_object *obj, const coffer_property_id *props,
                               size_t n)
{
    coffer_pack_row r = row_of(buf, row);
    assert_int_equal(r.key, coffer_object_key_of(obj));
    assert_int_equal(r.flags, 0);
    assert_int_equal(r.reserved, 0);
    for (size_t i = 0; i < n; i++) {
        coffer_value one, packed = value_of(buf, row, i);
        assert_ok(coffer_object_get_value(obj, props[i], &one));
        if (!same_value(&one, &packed)) {
            char a[128], b[128];
            fail_msg("row %zu, position %zu (property %u): packed %s, one by one %s", row, i, props[i],
                     ts_value_describe(&packed, a, sizeof a), ts_value_describe(&one, b, sizeof b));
        }
    }
}

/* A buffer of `size` bytes filled with a pattern, and `slack` more after. */
static uint8_t *canary_buffer(size_t size, size_t slack)
{
    uint8_t *b = malloc(size + slack + 1);
    assert_non_null(b);
    memset(b, 0xA5, size + slack + 1);
    return b;
}

static void assert_untouched(const uint8_t *b, size_t from, size_t to)
{
    for (size_t i = from; i < to; i++)
        if (b[i] != 0xA5)
            fail_msg("byte %zu past the capacity of %zu was written", i, from);
}

static coffer_property_id all_props[AT_COUNT];

/* An object of every type (its optional values set or null); `code`, if not
 * NULL, is the string primary key of class "Typed" (property AT_COUNT). */
static coffer_object_key add_typed(coffer_db *db, coffer_class_id cls, int with_optionals, const char *code)
{
    coffer_txn *txn = ts_begin(db, COFFER_TXN_WRITE);
    coffer_field f[AT_COUNT + 1];
    size_t n = 0;
    f[n++] = ts_field(AT_BOOL, coffer_value_bool(true));
    f[n++] = ts_field(AT_INT, coffer_value_int(-1234567890123ll));
    f[n++] = ts_field(AT_FLOAT, coffer_value_float(3.25f));
    f[n++] = ts_field(AT_DOUBLE, coffer_value_double(-2.5e300));
    f[n++] = ts_field(AT_STRING, ts_str("h\xc3\xa9llo"));
    f[n++] = ts_field(AT_BINARY, coffer_value_binary("\0\1\0\2", 4));
    f[n++] = ts_field(AT_DATE, coffer_value_date(-5, -250));
    f[n++] = ts_field(AT_OID, coffer_value_object_id(OID_A));
    f[n++] = ts_field(AT_UUID, coffer_value_uuid(UUID_A));
    coffer_decimal128 d = ts_dec("-12.345");
    f[n++] = ts_field(AT_DECIMAL, coffer_value_decimal128(d.w[0], d.w[1]));
    if (with_optionals) {
        f[n++] = ts_field(AT_OPT_BOOL, coffer_value_bool(false));
        f[n++] = ts_field(AT_OPT_INT, coffer_value_int(7));
        f[n++] = ts_field(AT_OPT_FLOAT, coffer_value_float(-0.0f));
        f[n++] = ts_field(AT_OPT_DOUBLE, coffer_value_double(1e-300));
        f[n++] = ts_field(AT_OPT_STRING, ts_str(""));
        f[n++] = ts_field(AT_OPT_BINARY, coffer_value_binary("", 0));
        f[n++] = ts_field(AT_OPT_DATE, coffer_value_date(1700000000, 999999999));
        f[n++] = ts_field(AT_OPT_OID, coffer_value_object_id(OID_B));
        f[n++] = ts_field(AT_OPT_UUID, coffer_value_uuid(UUID_B));
        coffer_decimal128 e = ts_dec("1E+6000");
        f[n++] = ts_field(AT_OPT_DECIMAL, coffer_value_decimal128(e.w[0], e.w[1]));
    }
    if (code)
        f[n++] = ts_field(AT_COUNT, ts_str(code));
    coffer_object *obj = ts_create(txn, cls, f, n);
    coffer_object_key key = coffer_object_key_of(obj);
    ts_commit(txn);
    return key;
}

static coffer_object_key add_all_types(coffer_db *db, coffer_class_id cls, int with_optionals)
{
    return add_typed(db, cls, with_optionals, NULL);
}

/* Packs obj (allocating the size needed) and returns the buffer. */
static uint8_t *pack_object(coffer_object *obj, const coffer_property_id *props, size_t n, int flags)
{
    size_t needed = 0;
    assert_status(coffer_object_pack(obj, props, n, flags, NULL, 0, &needed), COFFER_ERR_BUFFER_TOO_SMALL);
    assert_true(needed >= 32 + 16 + 24 * n);
    uint8_t *buf = canary_buffer(needed, 0);
    size_t again = 0;
    assert_ok(coffer_object_pack(obj, props, n, flags, buf, needed, &again));
    assert_int_equal(again, needed);
    assert_int_equal(header_of(buf).size, needed);
    return buf;
}

/* ---- objects ------------------------------------------------------------------ */

/* Every scalar type, set and null, copied: the packed values equal get_value's. */
TS_ENV_TEST(test_every_type_copied)
{
    coffer_object_key keys[2] = {add_all_types(env->db, env->all_types, 1), add_all_types(env->db, env->all_types, 0)};
    coffer_txn *txn = ts_begin(env->db, COFFER_TXN_READ);
    for (int k = 0; k < 2; k++) {
        coffer_object *obj = NULL;
        assert_ok(coffer_object_get(txn, env->all_types, keys[k], &obj));
        uint8_t *buf = pack_object(obj, all_props, AT_COUNT, COFFER_PACK_COPY);
        coffer_pack_header h = header_of(buf);
        assert_int_equal(h.flags, 0);
        assert_int_equal(h.row_count, 1);
        assert_int_equal(h.value_count, AT_COUNT);
        assert_row_matches(buf, 0, obj, all_props, AT_COUNT);
        coffer_value s = value_of(buf, 0, AT_STRING);
        assert_int_equal(s.u.string.size, 6);
        assert_memory_equal(s.u.string.data, "h\xc3\xa9llo", 7); /* with its NUL */
        coffer_value b = value_of(buf, 0, AT_BINARY);
        assert_int_equal(b.u.binary.size, 4);
        assert_memory_equal(b.u.binary.data, "\0\1\0\2", 4);
        coffer_value date = value_of(buf, 0, AT_DATE);
        assert_int_equal(date.u.date.seconds, -5);
        assert_int_equal(date.u.date.nanoseconds, -250);
        for (coffer_property_id p = AT_OPT_BOOL; p < AT_COUNT; p++)
            assert_int_equal(value_of(buf, 0, p).type, k == 0 ? ts_all_types_type(p) : COFFER_TYPE_NULL);
        /* copied bytes outlive the object handle and the transaction */
        coffer_object_release(obj);
        if (k == 1) {
            coffer_txn_free(txn);
            txn = NULL;
        }
        assert_memory_equal(value_of(buf, 0, AT_STRING).u.string.data, "h\xc3\xa9llo", 7);
        free(buf);
    }
}

/* Borrowed strings point into the database in a read transaction of a
 * plain file and stay valid until it ends; elsewhere they are copied and
 * the header says so. */
TS_ENV_TEST(test_strings_borrowed)
{
    coffer_object_key key = add_all_types(env->db, env->all_types, 1);
    const coffer_property_id props[] = {AT_STRING, AT_BINARY, AT_OPT_STRING, AT_INT};
    coffer_txn *txn = ts_begin(env->db, COFFER_TXN_READ);
    coffer_object *obj = NULL;
    assert_ok(coffer_object_get(txn, env->all_types, key, &obj));
    uint8_t *buf = pack_object(obj, props, 4, COFFER_PACK_BORROW);
    coffer_pack_header h = header_of(buf);
    int borrowed = env->mode != TS_ENCRYPTED;
    assert_int_equal(h.flags, borrowed ? COFFER_PACK_BORROW : 0);
    /* borrowed: nothing behind the rows */
    assert_int_equal(h.size == 32 + h.row_size, borrowed);
    coffer_object_release(obj); /* borrowed bytes belong to the transaction, not the handle */
    assert_ok(coffer_object_get(txn, env->all_types, key, &obj));
    assert_row_matches(buf, 0, obj, props, 4);
    coffer_value s = value_of(buf, 0, 0);
    assert_memory_equal(s.u.string.data, "h\xc3\xa9llo", 7);
    if (borrowed) {
        const uint8_t *p = s.u.string.data;
        assert_true(p < buf || p >= buf + h.size);
    }
    free(buf);
    coffer_txn_free(txn);

    /* a write transaction's records move as it writes: copied */
    txn = ts_begin(env->db, COFFER_TXN_WRITE);
    assert_ok(coffer_object_get(txn, env->all_types, key, &obj));
    buf = pack_object(obj, props, 4, COFFER_PACK_BORROW);
    assert_int_equal(header_of(buf).flags, 0);
    assert_row_matches(buf, 0, obj, props, 4);
    free(buf);
    ts_commit(txn);
}

/* Links, lists, mixed values and linking objects, as get_value reads them. */
enum { N_NAME = 0, N_NEXT, N_TAGS, N_ANY, N_PREVIOUS, N_SCORES, N_COUNT };
static const coffer_property_schema node_props[N_COUNT] = {
    {.name = "name", .type = COFFER_TYPE_STRING},
    {.name = "next", .type = COFFER_TYPE_LINK, .flags = OPT, .object_class = "Node"},
    {.name = "tags", .type = COFFER_TYPE_STRING, .collection = COFFER_COLLECTION_LIST},
    {.name = "any", .type = COFFER_TYPE_MIXED, .flags = OPT},
    {.name = "previous", .type = COFFER_TYPE_LINKING_OBJECTS, .object_class = "Node", .link_origin_property = "next"},
    {.name = "scores", .type = COFFER_TYPE_INT, .collection = COFFER_COLLECTION_MAP},
};
static const coffer_class_schema node_schema[] = {
    {.name = "Node", .properties = node_props, .property_count = N_COUNT},
};
static int setup_nodes(void **state) { return ts_setup_schema(state, node_schema, 1); }

TS_ENV_TEST(test_graph_properties)
{
    coffer_class_id node = ts_class(env->db, "Node");
    coffer_txn *txn = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_object *tail = NULL;
    coffer_field tf[] = {ts_field(N_NAME, ts_str("tail")), ts_field(N_ANY, ts_str("mixed text"))};
    assert_ok(coffer_object_create(txn, node, tf, 2, COFFER_UPDATE_ERROR, &tail));
    coffer_value tags[] = {ts_str("a"), ts_str("b"), ts_str("c")};
    coffer_map_entry scores[] = {{{"x", 1}, coffer_value_int(1)}, {{"y", 1}, coffer_value_int(2)}};
    coffer_field hf[] = {ts_field(N_NAME, ts_str("head")), ts_field(N_NEXT, coffer_value_link(node, coffer_object_key_of(tail))),
                         ts_field(N_TAGS, coffer_value_list(tags, 3)), ts_field(N_ANY, coffer_value_int(5)),
                         ts_field(N_SCORES, coffer_value_map(scores, 2))};
    assert_ok(coffer_object_create(txn, node, hf, 5, COFFER_UPDATE_ERROR, NULL));
    ts_commit(txn);

    txn = ts_begin(env->db, COFFER_TXN_READ);
    coffer_results *all = NULL;
    assert_ok(coffer_results_all(txn, node, &all));
    const coffer_property_id props[] = {N_NAME, N_NEXT, N_TAGS, N_ANY, N_PREVIOUS, N_SCORES};
    size_t needed = 0;
    assert_status(coffer_results_pack(all, 0, 2, props, N_COUNT, COFFER_PACK_COPY, NULL, 0, &needed),
                  COFFER_ERR_BUFFER_TOO_SMALL);
    uint8_t *buf = canary_buffer(needed, 0);
    assert_ok(coffer_results_pack(all, 0, 2, props, N_COUNT, COFFER_PACK_COPY, buf, needed, &needed));
    for (size_t row = 0; row < 2; row++) {
        coffer_object *obj = NULL;
        assert_ok(coffer_results_get(all, row, &obj));
        assert_row_matches(buf, row, obj, props, N_COUNT);
        coffer_object_release(obj);
    }
    assert_int_equal(value_of(buf, 0, N_NEXT).type, COFFER_TYPE_NULL);
    assert_int_equal(value_of(buf, 0, N_ANY).type, COFFER_TYPE_STRING);
    assert_int_equal(value_of(buf, 0, N_PREVIOUS).u.list.count, 1);
    coffer_value link = value_of(buf, 1, N_NEXT);
    assert_int_equal(link.type, COFFER_TYPE_LINK);
    assert_int_equal(link.u.link.class_id, node);
    assert_int_equal(link.u.link.key, row_of(buf, 0).key);
    assert_int_equal(value_of(buf, 1, N_TAGS).u.list.count, 3);
    assert_int_equal(value_of(buf, 1, N_SCORES).type, COFFER_TYPE_MAP);
    assert_int_equal(value_of(buf, 1, N_SCORES).u.map.count, 2);
    free(buf);
    coffer_results_free(all);
    coffer_txn_free(txn);
}

/* Every capacity short of the size needed: the error gives that size and
 * names both, and no byte at or past the capacity is written. */
TS_ENV_TEST(test_buffer_too_small)
{
    coffer_object_key key = add_all_types(env->db, env->all_types, 1);
    coffer_txn *txn = ts_begin(env->db, COFFER_TXN_READ);
    coffer_object *obj = NULL;
    assert_ok(coffer_object_get(txn, env->all_types, key, &obj));
    for (int flags = COFFER_PACK_COPY; flags <= COFFER_PACK_BORROW; flags++) {
        size_t needed = 0;
        assert_status(coffer_object_pack(obj, all_props, AT_COUNT, flags, NULL, 0, &needed), COFFER_ERR_BUFFER_TOO_SMALL);
        char want[96];
        snprintf(want, sizeof want, "the buffer holds 0 bytes, %zu are needed", needed);
        assert_error_contains(want);
        for (size_t cap = 0; cap < needed; cap++) {
            uint8_t *buf = canary_buffer(needed, 64);
            size_t got = 0;
            assert_status(coffer_object_pack(obj, all_props, AT_COUNT, flags, buf, cap, &got),
                          COFFER_ERR_BUFFER_TOO_SMALL);
            assert_int_equal(got, needed);
            assert_untouched(buf, cap, needed + 64);
            free(buf);
        }
        uint8_t *buf = canary_buffer(needed, 64);
        assert_ok(coffer_object_pack(obj, all_props, AT_COUNT, flags, buf, needed + 64, &needed));
        assert_untouched(buf, needed, needed + 64);
        assert_row_matches(buf, 0, obj, all_props, AT_COUNT);
        free(buf);
    }
    coffer_txn_free(txn);
}

/* ---- pages of results -------------------------------------------------------- */

static void add_people(coffer_db *db, coffer_class_id person, int n)
{
    coffer_txn *txn = ts_begin(db, COFFER_TXN_WRITE);
    for (int i = 0; i < n; i++) {
        char name[32];
        snprintf(name, sizeof name, "person %d", i);
        ts_add_person(txn, person, i, name);
    }
    ts_commit(txn);
}

static const coffer_property_id person_props[] = {PERSON_ID, PERSON_NAME, PERSON_AGE, PERSON_NICKNAME};

/* A page is a range of positions of the results, in their order. */
TS_ENV_TEST(test_results_page)
{
    add_people(env->db, env->person, 50);
    coffer_txn *txn = ts_begin(env->db, COFFER_TXN_READ);
    coffer_query *q = NULL;
    assert_ok(coffer_query_compile(env->db, env->person, "id >= 5 SORT(id DESC)", SIZE_MAX, NULL, 0, &q));
    coffer_results *r = NULL;
    assert_ok(coffer_query_run(txn, q, &r));
    size_t needed = 0;
    assert_status(coffer_results_pack(r, 10, 20, person_props, 4, COFFER_PACK_COPY, NULL, 0, &needed),
                  COFFER_ERR_BUFFER_TOO_SMALL);
    uint8_t *buf = canary_buffer(needed, 8);
    assert_ok(coffer_results_pack(r, 10, 20, person_props, 4, COFFER_PACK_COPY, buf, needed, &needed));
    assert_untouched(buf, needed, needed + 8);
    coffer_pack_header h = header_of(buf);
    assert_int_equal(h.row_count, 20);
    for (size_t row = 0; row < 20; row++) {
        coffer_object *obj = NULL;
        assert_ok(coffer_results_get(r, 10 + row, &obj));
        assert_row_matches(buf, row, obj, person_props, 4);
        coffer_object_release(obj);
        assert_int_equal(value_of(buf, row, 0).u.integer, 49 - 10 - (int64_t)row);
    }
    free(buf);

    /* the last page, an empty one at the end, and ranges past it */
    size_t small = 0;
    uint8_t page[4096];
    assert_ok(coffer_results_pack(r, 40, 5, person_props, 4, COFFER_PACK_COPY, page, sizeof page, &small));
    assert_int_equal(header_of(page).row_count, 5);
    assert_int_equal(value_of(page, 4, 0).u.integer, 5);
    assert_ok(coffer_results_pack(r, 45, 0, person_props, 4, COFFER_PACK_COPY, page, sizeof page, &small));
    assert_int_equal(small, 32);
    assert_int_equal(header_of(page).row_count, 0);
    assert_status(coffer_results_pack(r, 40, 6, person_props, 4, COFFER_PACK_COPY, page, sizeof page, &small),
                  COFFER_ERR_INVALID_ARGUMENT);
    assert_error_contains("positions 40..46 are out of range (the results hold 45)");
    assert_int_equal(small, 0);
    assert_status(coffer_results_pack(r, 46, 0, person_props, 4, COFFER_PACK_COPY, page, sizeof page, &small),
                  COFFER_ERR_INVALID_ARGUMENT);
    /* keys alone */
    assert_ok(coffer_results_pack(r, 0, 3, NULL, 0, COFFER_PACK_COPY, page, sizeof page, &small));
    assert_int_equal(small, 32 + 3 * 16);
    coffer_object_key third = 0;
    assert_ok(coffer_results_key(r, 2, &third));
    assert_int_equal(row_of(page, 2).key, third);
    coffer_results_free(r);
    coffer_query_free(q);
    coffer_txn_free(txn);
}

/* A read transaction's pages show its snapshot after other commits, and
 * strings borrowed before a commit still read what they read. */
TS_ENV_TEST(test_page_pinned_across_commit)
{
    add_people(env->db, env->person, 10);
    coffer_txn *reader = ts_begin(env->db, COFFER_TXN_READ);
    coffer_results *r = NULL;
    assert_ok(coffer_results_all(reader, env->person, &r));
    size_t needed = 0;
    uint8_t *before = canary_buffer(4096, 0);
    assert_ok(coffer_results_pack(r, 0, 10, person_props, 4, COFFER_PACK_BORROW, before, 4096, &needed));

    coffer_txn *writer = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_results *w = NULL;
    assert_ok(coffer_results_all(writer, env->person, &w));
    coffer_value renamed = ts_str("a much longer name than any before, to move the records");
    assert_ok(coffer_results_set_value(w, PERSON_NAME, &renamed));
    coffer_object *gone = NULL;
    assert_ok(coffer_results_get(w, 3, &gone));
    assert_ok(coffer_object_delete(gone));
    coffer_results_free(w);
    for (int i = 10; i < 200; i++)
        ts_add_person(writer, env->person, i, "filler to allocate new pages");
    ts_commit(writer);

    uint8_t *after = canary_buffer(4096, 0);
    assert_ok(coffer_results_pack(r, 0, 10, person_props, 4, COFFER_PACK_BORROW, after, 4096, &needed));
    for (size_t row = 0; row < 10; row++) {
        char name[32];
        snprintf(name, sizeof name, "person %zu", row);
        coffer_value a = value_of(before, row, 1), b = value_of(after, row, 1);
        assert_int_equal(row_of(after, row).flags, 0); /* deleted after the snapshot: still there */
        assert_int_equal(a.u.string.size, strlen(name));
        assert_memory_equal(a.u.string.data, name, strlen(name) + 1);
        assert_memory_equal(b.u.string.data, name, strlen(name) + 1);
    }
    uint64_t count = 0;
    assert_ok(coffer_class_count(reader, env->person, &count));
    assert_int_equal(count, 10);
    free(before);
    free(after);
    coffer_results_free(r);
    coffer_txn_free(reader);

    coffer_txn *fresh = ts_begin(env->db, COFFER_TXN_READ);
    assert_ok(coffer_results_all(fresh, env->person, &r));
    uint8_t page[4096];
    assert_ok(coffer_results_pack(r, 0, 1, person_props, 4, COFFER_PACK_COPY, page, sizeof page, &needed));
    coffer_value now = value_of(page, 0, 1);
    assert_int_equal(now.u.string.size, renamed.u.string.size);
    coffer_results_free(r);
    coffer_txn_free(fresh);
}

/* An object deleted in the write transaction after its results were
 * computed gives a row marked deleted, with its key and null values. */
TS_ENV_TEST(test_deleted_row)
{
    add_people(env->db, env->person, 4);
    coffer_txn *txn = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_results *r = NULL;
    assert_ok(coffer_results_all(txn, env->person, &r));
    coffer_object *obj = NULL;
    assert_ok(coffer_results_get(r, 2, &obj));
    coffer_object_key key = coffer_object_key_of(obj);
    assert_ok(coffer_object_delete(obj));
    uint8_t page[4096];
    size_t needed = 0;
    assert_ok(coffer_results_pack(r, 0, 4, person_props, 4, COFFER_PACK_COPY, page, sizeof page, &needed));
    assert_int_equal(row_of(page, 2).flags, COFFER_PACK_ROW_DELETED);
    assert_int_equal(row_of(page, 2).key, key);
    for (size_t i = 0; i < 4; i++)
        assert_int_equal(value_of(page, 2, i).type, COFFER_TYPE_NULL);
    assert_int_equal(row_of(page, 3).flags, 0);
    assert_int_equal(value_of(page, 3, 0).u.integer, 3);
    /* the deleted object itself cannot be packed */
    assert_status(coffer_object_pack(obj, person_props, 4, COFFER_PACK_COPY, page, sizeof page, &needed),
                  COFFER_ERR_NOT_FOUND);
    assert_int_equal(needed, 0);
    coffer_object_release(obj);
    coffer_results_free(r);
    ts_commit(txn);
}

/* Bad arguments name what was wrong and write nothing. */
TS_ENV_TEST(test_bad_arguments)
{
    add_people(env->db, env->person, 2);
    coffer_txn *txn = ts_begin(env->db, COFFER_TXN_READ);
    coffer_results *r = NULL;
    assert_ok(coffer_results_all(txn, env->person, &r));
    coffer_object *obj = NULL;
    assert_ok(coffer_results_get(r, 0, &obj));
    uint8_t page[512];
    memset(page, 0xA5, sizeof page);
    size_t needed = 99;
    assert_status(coffer_object_pack(NULL, person_props, 4, COFFER_PACK_COPY, page, sizeof page, &needed),
                  COFFER_ERR_INVALID_ARGUMENT);
    assert_int_equal(needed, 0);
    assert_status(coffer_object_pack(obj, person_props, 4, COFFER_PACK_COPY, page, sizeof page, NULL),
                  COFFER_ERR_INVALID_ARGUMENT);
    assert_error_contains("needed is NULL");
    assert_status(coffer_object_pack(obj, person_props, 4, COFFER_PACK_COPY, NULL, 10, &needed),
                  COFFER_ERR_INVALID_ARGUMENT);
    assert_error_contains("buf is NULL but capacity is 10");
    assert_status(coffer_object_pack(obj, NULL, 4, COFFER_PACK_COPY, page, sizeof page, &needed),
                  COFFER_ERR_INVALID_ARGUMENT);
    assert_error_contains("props is NULL");
    assert_status(coffer_object_pack(obj, person_props, 4, 2, page, sizeof page, &needed), COFFER_ERR_INVALID_ARGUMENT);
    assert_error_contains("flags 2");
    const coffer_property_id bad[] = {PERSON_ID, PERSON_COUNT};
    assert_status(coffer_object_pack(obj, bad, 2, COFFER_PACK_COPY, page, sizeof page, &needed),
                  COFFER_ERR_INVALID_ARGUMENT);
    assert_error_contains("class 'Person' has no property with id 4");
    assert_error_contains("at position 1");
    assert_status(coffer_results_pack(r, 0, 2, bad, 2, COFFER_PACK_COPY, page, sizeof page, &needed),
                  COFFER_ERR_INVALID_ARGUMENT);
    assert_status(coffer_results_pack(NULL, 0, 2, person_props, 4, COFFER_PACK_COPY, page, sizeof page, &needed),
                  COFFER_ERR_INVALID_ARGUMENT);
    for (size_t i = 0; i < sizeof page; i++)
        assert_int_equal(page[i], 0xA5);
    coffer_object_release(obj);
    assert_status(coffer_object_pack(obj, person_props, 4, COFFER_PACK_COPY, page, sizeof page, &needed),
                  COFFER_ERR_INVALID_ARGUMENT);
    assert_error_contains("released");

    /* after the transaction */
    assert_ok(coffer_results_get(r, 1, &obj));
    assert_ok(coffer_txn_abort(txn));
    assert_status(coffer_object_pack(obj, person_props, 4, COFFER_PACK_COPY, page, sizeof page, &needed),
                  COFFER_ERR_MISUSE);
    coffer_txn_free(txn);
    assert_status(coffer_results_pack(r, 0, 2, person_props, 4, COFFER_PACK_COPY, page, sizeof page, &needed),
                  COFFER_ERR_MISUSE);
    coffer_results_free(r);
}

/* ---- one object by its primary key --------------------------------------------- */

/* Class "Typed": every type of AllTypes, then a string primary key. */
static coffer_property_schema typed_props[AT_COUNT + 1];
static const coffer_class_schema typed_schema[] = {
    {.name = "Typed", .properties = typed_props, .property_count = AT_COUNT + 1},
};
static int setup_typed(void **state) { return ts_setup_schema(state, typed_schema, 1); }

/* Packs the object of `cls` with primary key `pk` (allocating the size needed). */
static uint8_t *pack_by_key(coffer_txn *txn, coffer_class_id cls, coffer_value pk, const coffer_property_id *props,
                            size_t n, int flags)
{
    size_t needed = 0;
    assert_status(coffer_object_pack_by_primary_key(txn, cls, &pk, props, n, flags, NULL, 0, &needed, NULL),
                  COFFER_ERR_BUFFER_TOO_SMALL);
    assert_true(needed >= 32 + 16 + 24 * n);
    uint8_t *buf = canary_buffer(needed, 0);
    size_t again = 0;
    assert_ok(coffer_object_pack_by_primary_key(txn, cls, &pk, props, n, flags, buf, needed, &again, NULL));
    assert_int_equal(again, needed);
    assert_int_equal(header_of(buf).size, needed);
    return buf;
}

/* Every type, set and null, strings and binaries copied and borrowed: the
 * row equals what coffer_object_pack() and get_value read of the object
 * coffer_object_find() finds; the handle is given only when asked for. */
TS_ENV_TEST(test_pk_every_type)
{
    coffer_class_id typed = ts_class(env->db, "Typed");
    coffer_property_id props[AT_COUNT + 1];
    for (coffer_property_id p = 0; p <= AT_COUNT; p++)
        props[p] = p;
    coffer_object_key set = add_typed(env->db, typed, 1, "set"), nulls = add_typed(env->db, typed, 0, "nulls");
    coffer_txn *txn = ts_begin(env->db, COFFER_TXN_READ);
    const char *codes[] = {"set", "nulls"};
    for (int k = 0; k < 2; k++) {
        for (int flags = COFFER_PACK_COPY; flags <= COFFER_PACK_BORROW; flags++) {
            uint8_t *buf = pack_by_key(txn, typed, ts_str(codes[k]), props, AT_COUNT + 1, flags);
            coffer_pack_header h = header_of(buf);
            assert_int_equal(h.row_count, 1);
            assert_int_equal(h.value_count, AT_COUNT + 1);
            assert_int_equal(h.flags, flags == COFFER_PACK_BORROW && env->mode != TS_ENCRYPTED ? COFFER_PACK_BORROW : 0);
            coffer_object *obj = NULL;
            coffer_value pk = ts_str(codes[k]);
            assert_ok(coffer_object_find(txn, typed, &pk, &obj));
            assert_int_equal(coffer_object_key_of(obj), k == 0 ? set : nulls);
            assert_int_equal(row_of(buf, 0).key, k == 0 ? set : nulls);
            assert_row_matches(buf, 0, obj, props, AT_COUNT + 1);
            coffer_object_release(obj);
            for (coffer_property_id p = AT_OPT_BOOL; p < AT_COUNT; p++)
                assert_int_equal(value_of(buf, 0, p).type, k == 0 ? ts_all_types_type(p) : COFFER_TYPE_NULL);
            coffer_value s = value_of(buf, 0, AT_STRING), b = value_of(buf, 0, AT_BINARY);
            assert_memory_equal(s.u.string.data, "h\xc3\xa9llo", 7);
            assert_int_equal(b.u.binary.size, 4);
            assert_memory_equal(b.u.binary.data, "\0\1\0\2", 4);
            coffer_value code = value_of(buf, 0, AT_COUNT);
            assert_int_equal(code.u.string.size, strlen(codes[k]));
            free(buf);
        }
    }
    /* the handle, when asked for, is the object's; the key alone needs no props */
    uint8_t page[256];
    size_t needed = 0;
    coffer_object *obj = NULL;
    coffer_value pk = ts_str("nulls");
    assert_ok(coffer_object_pack_by_primary_key(txn, typed, &pk, NULL, 0, COFFER_PACK_COPY, page, sizeof page,
                                                &needed, &obj));
    assert_int_equal(needed, 32 + 16);
    assert_int_equal(row_of(page, 0).key, nulls);
    assert_non_null(obj);
    assert_int_equal(coffer_object_key_of(obj), nulls);
    coffer_value v;
    assert_ok(coffer_object_get_value(obj, AT_INT, &v));
    assert_int_equal(v.u.integer, -1234567890123ll);
    coffer_object_release(obj);
    coffer_txn_free(txn);

    /* in a write transaction, after a change it made: its own state, copied */
    txn = ts_begin(env->db, COFFER_TXN_WRITE);
    assert_ok(coffer_object_find(txn, typed, &pk, &obj));
    coffer_value longer = ts_str("a longer string than before, written in this transaction");
    assert_ok(coffer_object_set_value(obj, AT_STRING, &longer));
    coffer_object_release(obj);
    uint8_t *buf = pack_by_key(txn, typed, pk, props, AT_COUNT + 1, COFFER_PACK_BORROW);
    assert_int_equal(header_of(buf).flags, 0);
    coffer_value s = value_of(buf, 0, AT_STRING);
    assert_int_equal(s.u.string.size, longer.u.string.size);
    assert_memory_equal(s.u.string.data, longer.u.string.data, longer.u.string.size);
    free(buf);
    ts_commit(txn);
}

/* Every capacity short of the size needed fails with that size, named in
 * the message, and writes no byte at or past the capacity. */
TS_ENV_TEST(test_pk_buffer_too_small)
{
    add_people(env->db, env->person, 3);
    coffer_txn *txn = ts_begin(env->db, COFFER_TXN_READ);
    coffer_value pk = coffer_value_int(2);
    size_t needed = 0;
    coffer_object *obj = (coffer_object *)&needed; /* set to NULL on error */
    assert_status(coffer_object_pack_by_primary_key(txn, env->person, &pk, person_props, 4, COFFER_PACK_COPY, NULL,
                                                    0, &needed, &obj),
                  COFFER_ERR_BUFFER_TOO_SMALL);
    assert_null(obj);
    char want[96];
    snprintf(want, sizeof want, "the buffer holds 0 bytes, %zu are needed", needed);
    assert_error_contains(want);
    assert_error_contains("coffer_object_pack_by_primary_key");
    for (size_t cap = 0; cap < needed; cap++) {
        uint8_t *buf = canary_buffer(needed, 64);
        size_t got = 0;
        assert_status(coffer_object_pack_by_primary_key(txn, env->person, &pk, person_props, 4, COFFER_PACK_COPY,
                                                        buf, cap, &got, NULL),
                      COFFER_ERR_BUFFER_TOO_SMALL);
        assert_int_equal(got, needed);
        assert_untouched(buf, cap, needed + 64);
        free(buf);
    }
    uint8_t *buf = canary_buffer(needed, 64);
    assert_ok(coffer_object_pack_by_primary_key(txn, env->person, &pk, person_props, 4, COFFER_PACK_COPY, buf,
                                                needed + 64, &needed, NULL));
    assert_untouched(buf, needed, needed + 64);
    assert_int_equal(value_of(buf, 0, 0).u.integer, 2);
    coffer_value name = value_of(buf, 0, 1);
    assert_memory_equal(name.u.string.data, "person 2", 9);
    assert_int_equal(value_of(buf, 0, 3).type, COFFER_TYPE_NULL); /* nickname, never set */
    free(buf);
    coffer_txn_free(txn);
}

/* A key no object has, a key of the wrong type, a class without a primary
 * key and bad arguments: errors that name them, nothing written. */
TS_ENV_TEST(test_pk_missing_and_wrong_type)
{
    add_people(env->db, env->person, 3);
    coffer_txn *txn = ts_begin(env->db, COFFER_TXN_READ);
    uint8_t page[512];
    memset(page, 0xA5, sizeof page);
    size_t needed = 99;
    coffer_object *obj = (coffer_object *)&needed;
    coffer_value missing = coffer_value_int(42);
    assert_status(coffer_object_pack_by_primary_key(txn, env->person, &missing, person_props, 4, COFFER_PACK_COPY,
                                                    page, sizeof page, &needed, &obj),
                  COFFER_ERR_NOT_FOUND);
    assert_error_contains("coffer_object_pack_by_primary_key");
    assert_error_contains("class 'Person' has no object with primary key 42");
    assert_int_equal(needed, 0);
    assert_null(obj);

    coffer_value text = ts_str("2");
    needed = 99;
    assert_status(coffer_object_pack_by_primary_key(txn, env->person, &text, person_props, 4, COFFER_PACK_COPY, page,
                                                    sizeof page, &needed, NULL),
                  COFFER_ERR_TYPE);
    assert_error_contains("primary key 'id' is int, got string");
    assert_int_equal(needed, 0);

    coffer_value zero = coffer_value_int(0);
    assert_status(coffer_object_pack_by_primary_key(txn, env->all_types, &zero, NULL, 0, COFFER_PACK_COPY, page,
                                                    sizeof page, &needed, NULL),
                  COFFER_ERR_NOT_FOUND);
    assert_error_contains("has no primary key");
    assert_status(coffer_object_pack_by_primary_key(txn, 999, &zero, NULL, 0, COFFER_PACK_COPY, page, sizeof page,
                                                    &needed, NULL),
                  COFFER_ERR_INVALID_ARGUMENT);
    assert_status(coffer_object_pack_by_primary_key(txn, env->person, NULL, NULL, 0, COFFER_PACK_COPY, page,
                                                    sizeof page, &needed, NULL),
                  COFFER_ERR_INVALID_ARGUMENT);
    assert_error_contains("pk is NULL");
    assert_status(coffer_object_pack_by_primary_key(txn, env->person, &zero, NULL, 0, COFFER_PACK_COPY, page,
                                                    sizeof page, NULL, NULL),
                  COFFER_ERR_INVALID_ARGUMENT);
    assert_error_contains("needed is NULL");
    const coffer_property_id bad[] = {PERSON_ID, PERSON_COUNT};
    coffer_value one = coffer_value_int(1);
    obj = (coffer_object *)&needed;
    assert_status(coffer_object_pack_by_primary_key(txn, env->person, &one, bad, 2, COFFER_PACK_COPY, page,
                                                    sizeof page, &needed, &obj),
                  COFFER_ERR_INVALID_ARGUMENT);
    assert_error_contains("class 'Person' has no property with id 4");
    assert_null(obj);
    assert_status(coffer_object_pack_by_primary_key(NULL, env->person, &one, NULL, 0, COFFER_PACK_COPY, page,
                                                    sizeof page, &needed, NULL),
                  COFFER_ERR_INVALID_ARGUMENT);
    for (size_t i = 0; i < sizeof page; i++)
        assert_int_equal(page[i], 0xA5);

    /* after the transaction */
    assert_ok(coffer_txn_abort(txn));
    assert_status(coffer_object_pack_by_primary_key(txn, env->person, &one, NULL, 0, COFFER_PACK_COPY, page,
                                                    sizeof page, &needed, NULL),
                  COFFER_ERR_MISUSE);
    coffer_txn_free(txn);
}

/* A read transaction finds and reads its snapshot after other commits:
 * an object renamed and one deleted since read as before, one created
 * since is not there, and borrowed strings still read what they read. */
TS_ENV_TEST(test_pk_pinned_across_commit)
{
    add_people(env->db, env->person, 5);
    coffer_txn *reader = ts_begin(env->db, COFFER_TXN_READ);
    coffer_value two = coffer_value_int(2), three = coffer_value_int(3), late = coffer_value_int(500);
    uint8_t before[1024], after[1024], gone[1024];
    size_t needed = 0;
    assert_ok(coffer_object_pack_by_primary_key(reader, env->person, &two, person_props, 4, COFFER_PACK_BORROW, before,
                                                sizeof before, &needed, NULL));

    coffer_txn *writer = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_object *obj = NULL;
    assert_ok(coffer_object_find(writer, env->person, &two, &obj));
    coffer_value renamed = ts_str("a much longer name than any before, to move the records");
    assert_ok(coffer_object_set_value(obj, PERSON_NAME, &renamed));
    coffer_object_release(obj);
    assert_ok(coffer_object_find(writer, env->person, &three, &obj));
    assert_ok(coffer_object_delete(obj));
    coffer_object_release(obj);
    for (int i = 10; i <= 500; i++)
        ts_add_person(writer, env->person, i, "filler to allocate new pages");
    ts_commit(writer);

    assert_ok(coffer_object_pack_by_primary_key(reader, env->person, &two, person_props, 4, COFFER_PACK_BORROW, after,
                                                sizeof after, &needed, NULL));
    assert_memory_equal(value_of(before, 0, 1).u.string.data, "person 2", 9);
    assert_memory_equal(value_of(after, 0, 1).u.string.data, "person 2", 9);
    assert_ok(coffer_object_pack_by_primary_key(reader, env->person, &three, person_props, 4, COFFER_PACK_COPY, gone,
                                                sizeof gone, &needed, NULL));
    assert_int_equal(value_of(gone, 0, 0).u.integer, 3);
    assert_status(coffer_object_pack_by_primary_key(reader, env->person, &late, person_props, 4, COFFER_PACK_COPY,
                                                    gone, sizeof gone, &needed, NULL),
                  COFFER_ERR_NOT_FOUND);
    coffer_txn_free(reader);

    coffer_txn *fresh = ts_begin(env->db, COFFER_TXN_READ);
    assert_ok(coffer_object_pack_by_primary_key(fresh, env->person, &two, person_props, 4, COFFER_PACK_COPY, after,
                                                sizeof after, &needed, NULL));
    assert_int_equal(value_of(after, 0, 1).u.string.size, renamed.u.string.size);
    assert_status(coffer_object_pack_by_primary_key(fresh, env->person, &three, person_props, 4, COFFER_PACK_COPY,
                                                    gone, sizeof gone, &needed, NULL),
                  COFFER_ERR_NOT_FOUND);
    assert_ok(coffer_object_pack_by_primary_key(fresh, env->person, &late, person_props, 4, COFFER_PACK_COPY, gone,
                                                sizeof gone, &needed, NULL));
    coffer_txn_free(fresh);
}

/* A request made once for a class and run for key after key packs what
 * coffer_object_pack_by_primary_key() packs, byte for byte; a missing key,
 * a key of the wrong type, a class without a primary key, a buffer too
 * small, and NULL request or transaction are named, with nothing written. */
TS_ENV_TEST(test_pk_request)
{
    add_people(env->db, env->person, 5);
    coffer_txn *txn = ts_begin(env->db, COFFER_TXN_READ);
    uint8_t page[512], expected[512];
    coffer_pack_request request = {.cls = env->person, .props = person_props, .count = 4,
                                   .flags = COFFER_PACK_COPY, .buf = page, .capacity = sizeof page};
    for (int64_t id = 4; id >= 0; id--) {
        memset(page, 0xA5, sizeof page);
        request.key = coffer_value_int(id);
        size_t needed = 0;
        assert_ok(coffer_pack_request_run(txn, &request));
        assert_ok(coffer_object_pack_by_primary_key(txn, env->person, &request.key, person_props, 4, COFFER_PACK_COPY,
                                                    expected, sizeof expected, &needed, NULL));
        assert_int_equal(request.needed, needed);
        assert_memory_equal(page, expected, needed);
        assert_int_equal(value_of(page, 0, 0).u.integer, id);
    }

    memset(page, 0xA5, sizeof page);
    request.key = coffer_value_int(42);
    assert_status(coffer_pack_request_run(txn, &request), COFFER_ERR_NOT_FOUND);
    assert_error_contains("coffer_pack_request_run");
    assert_error_contains("class 'Person' has no object with primary key 42");
    assert_int_equal(request.needed, 0);
    for (size_t i = 0; i < sizeof page; i++)
        assert_int_equal(page[i], 0xA5);

    request.key = ts_str("2");
    assert_status(coffer_pack_request_run(txn, &request), COFFER_ERR_TYPE);
    assert_error_contains("primary key 'id' is int, got string");
    assert_int_equal(request.needed, 0);

    request.key = coffer_value_int(1);
    request.capacity = 40;
    assert_status(coffer_pack_request_run(txn, &request), COFFER_ERR_BUFFER_TOO_SMALL);
    assert_true(request.needed > 40);
    request.capacity = sizeof page;
    assert_ok(coffer_pack_request_run(txn, &request));

    coffer_pack_request typed = {.cls = env->all_types, .key = coffer_value_int(0), .flags = COFFER_PACK_COPY,
                                 .buf = page, .capacity = sizeof page};
    assert_status(coffer_pack_request_run(txn, &typed), COFFER_ERR_NOT_FOUND);
    assert_error_contains("has no primary key");
    typed.cls = 999;
    assert_status(coffer_pack_request_run(txn, &typed), COFFER_ERR_INVALID_ARGUMENT);
    assert_status(coffer_pack_request_run(txn, NULL), COFFER_ERR_INVALID_ARGUMENT);
    assert_error_contains("request is NULL");
    assert_status(coffer_pack_request_run(NULL, &request), COFFER_ERR_INVALID_ARGUMENT);
    coffer_txn_free(txn);
}

/* ---- a prepared query counted with other arguments ------------------------------ */

/* coffer_query_count_rebound() gives what rebinding, counting and freeing
 * give, for an indexed string equality, an unindexed int range and a null
 * argument, leaves the prepared query's own arguments bound, counts a read
 * transaction's snapshot across a commit and a write transaction's own
 * changes; and names a mistyped or missing argument and bad arguments, with
 * *out 0 on every error. */
TS_ENV_TEST(test_count_rebound)
{
    add_people(env->db, env->person, 30); /* ids 0..29, names "person <id>" */
    coffer_value first = ts_str("person 1");
    coffer_query *by_name = NULL, *by_id = NULL, *by_nickname = NULL;
    assert_ok(coffer_query_compile(env->db, env->person, "name == $0", SIZE_MAX, &first, 1, &by_name));
    coffer_value zero = coffer_value_int(0);
    assert_ok(coffer_query_compile(env->db, env->person, "id > $0 AND age == 0", SIZE_MAX, &zero, 1, &by_id));
    assert_ok(coffer_query_compile(env->db, env->person, "nickname == $0", SIZE_MAX, &first, 1, &by_nickname));
    coffer_txn *reader = ts_begin(env->db, COFFER_TXN_READ);

    uint64_t n = 99, plain = 99;
    coffer_value seven = ts_str("person 7"), nobody = ts_str("nobody");
    assert_ok(coffer_query_count_rebound(reader, by_name, &seven, 1, &n));
    assert_int_equal(n, 1);
    assert_ok(coffer_query_count_rebound(reader, by_name, &nobody, 1, &n));
    assert_int_equal(n, 0);
    coffer_value twenty = coffer_value_int(20);
    assert_ok(coffer_query_count_rebound(reader, by_id, &twenty, 1, &n));
    assert_int_equal(n, 9);
    coffer_value null = coffer_value_null();
    assert_ok(coffer_query_count_rebound(reader, by_nickname, &null, 1, &n));
    assert_int_equal(n, 30);
    /* the prepared queries keep their own arguments */
    assert_ok(coffer_query_count(reader, by_name, &plain));
    assert_int_equal(plain, 1);
    assert_ok(coffer_query_count(reader, by_id, &plain));
    assert_int_equal(plain, 29);

    /* a commit after the read transaction began is not seen by it; a new one sees it */
    coffer_txn *writer = ts_begin(env->db, COFFER_TXN_WRITE);
    ts_add_person(writer, env->person, 100, "person 7");
    ts_add_person(writer, env->person, 101, "person 7");
    assert_ok(coffer_query_count_rebound(writer, by_name, &seven, 1, &n));
    assert_int_equal(n, 3); /* the write's own changes */
    ts_commit(writer);
    assert_ok(coffer_query_count_rebound(reader, by_name, &seven, 1, &n));
    assert_int_equal(n, 1);
    assert_ok(coffer_query_count_rebound(reader, by_id, &twenty, 1, &n));
    assert_int_equal(n, 9);
    coffer_txn *fresh = ts_begin(env->db, COFFER_TXN_READ);
    assert_ok(coffer_query_count_rebound(fresh, by_name, &seven, 1, &n));
    assert_int_equal(n, 3);
    assert_ok(coffer_query_count_rebound(fresh, by_id, &twenty, 1, &n));
    assert_int_equal(n, 11);
    coffer_txn_free(fresh);

    /* errors: the argument named, *out 0 */
    n = 99;
    assert_status(coffer_query_count_rebound(reader, by_name, &twenty, 1, &n), COFFER_ERR_QUERY);
    assert_error_contains("name");
    assert_int_equal(n, 0);
    n = 99;
    assert_status(coffer_query_count_rebound(reader, by_name, NULL, 0, &n), COFFER_ERR_QUERY);
    assert_error_contains("$0");
    assert_int_equal(n, 0);
    n = 99;
    assert_status(coffer_query_count_rebound(reader, by_name, NULL, 1, &n), COFFER_ERR_INVALID_ARGUMENT);
    assert_int_equal(n, 0);
    assert_status(coffer_query_count_rebound(reader, by_name, &seven, 1, NULL), COFFER_ERR_INVALID_ARGUMENT);
    assert_error_contains("out is NULL");
    n = 99;
    assert_status(coffer_query_count_rebound(NULL, by_name, &seven, 1, &n), COFFER_ERR_INVALID_ARGUMENT);
    assert_error_contains("txn is NULL");
    assert_int_equal(n, 0);
    n = 99;
    assert_status(coffer_query_count_rebound(reader, NULL, &seven, 1, &n), COFFER_ERR_INVALID_ARGUMENT);
    assert_int_equal(n, 0);
    assert_ok(coffer_txn_abort(reader));
    n = 99;
    assert_status(coffer_query_count_rebound(reader, by_name, &seven, 1, &n), COFFER_ERR_MISUSE);
    assert_int_equal(n, 0);
    coffer_txn_free(reader);
    coffer_query_free(by_name);
    coffer_query_free(by_id);
    coffer_query_free(by_nickname);
}

/* Every scalar type and null: counting "<property> == $0" rebound to a value
 * gives what compiling the query with that value and counting it gives. */
TS_ENV_TEST(test_count_rebound_every_type)
{
    coffer_object_key keys[2] = {add_all_types(env->db, env->all_types, 1), add_all_types(env->db, env->all_types, 0)};
    coffer_txn *txn = ts_begin(env->db, COFFER_TXN_READ);
    coffer_object *objs[2] = {NULL, NULL};
    for (int k = 0; k < 2; k++)
        assert_ok(coffer_object_get(txn, env->all_types, keys[k], &objs[k]));
    for (coffer_property_id p = 0; p < AT_COUNT; p++) {
        char text[64];
        snprintf(text, sizeof text, "%s == $0", ts_all_types_properties[p].name);
        coffer_value first, second;
        assert_ok(coffer_object_get_value(objs[0], p, &first));
        assert_ok(coffer_object_get_value(objs[1], p, &second));
        coffer_query *prepared = NULL;
        assert_ok(coffer_query_compile(env->db, env->all_types, text, SIZE_MAX, &first, 1, &prepared));
        const coffer_value *values[2] = {&first, &second};
        for (int k = 0; k < 2; k++) {
            coffer_query *compiled = NULL;
            assert_ok(coffer_query_compile(env->db, env->all_types, text, SIZE_MAX, values[k], 1, &compiled));
            uint64_t expected = 99, counted = 99;
            assert_ok(coffer_query_count(txn, compiled, &expected));
            assert_ok(coffer_query_count_rebound(txn, prepared, values[k], 1, &counted));
            if (counted != expected || expected == 0)
                fail_msg("%s with the value of object %d: counted %" PRIu64 ", compiled and counted %" PRIu64, text, k,
                         counted, expected);
            coffer_query_free(compiled);
        }
        coffer_query_free(prepared);
    }
    coffer_object_release(objs[0]);
    coffer_object_release(objs[1]);
    coffer_txn_free(txn);
}

/* Counting one prepared query again and again with arguments of the type it
 * was bound with rewrites them in place; every call still gives what a
 * fresh query gives: for every scalar type, a value that matches and one
 * that does not, a change of type (null, and a double against a float
 * property) in between and after, a string argument whose bytes change
 * between calls; a wrong type or a missing argument is named. */
TS_ENV_TEST(test_count_rebound_in_place)
{
    add_all_types(env->db, env->all_types, 1);
    add_all_types(env->db, env->all_types, 0);
    coffer_txn *txn = ts_begin(env->db, COFFER_TXN_READ);
    coffer_decimal128 d = ts_dec("-12.345"), other_d = ts_dec("4.5");
    const coffer_value match[10] = {
        coffer_value_bool(true), coffer_value_int(-1234567890123ll), coffer_value_float(3.25f),
        coffer_value_double(-2.5e300), ts_str("h\xc3\xa9llo"), coffer_value_binary("\0\1\0\2", 4),
        coffer_value_date(-5, -250), coffer_value_object_id(OID_A), coffer_value_uuid(UUID_A),
        coffer_value_decimal128(d.w[0], d.w[1])};
    const coffer_value miss[10] = {
        coffer_value_bool(false), coffer_value_int(5), coffer_value_float(1.5f), coffer_value_double(2.0),
        ts_str("other"), coffer_value_binary("\3", 1), coffer_value_date(9, 0), coffer_value_object_id(OID_B),
        coffer_value_uuid(UUID_B), coffer_value_decimal128(other_d.w[0], other_d.w[1])};
    coffer_value null = coffer_value_null();
    for (coffer_property_id p = 0; p < 10; p++) {
        char text[64];
        snprintf(text, sizeof text, "%s == $0", ts_all_types_properties[p].name);
        coffer_query *prepared = NULL;
        assert_ok(coffer_query_compile(env->db, env->all_types, text, SIZE_MAX, &miss[p], 1, &prepared));
        const coffer_value *sequence[] = {&match[p], &miss[p], &match[p], &null, &match[p], &miss[p], &match[p]};
        for (size_t i = 0; i < sizeof sequence / sizeof *sequence; i++) {
            coffer_query *fresh = NULL;
            uint64_t expected = 99, counted = 99;
            assert_ok(coffer_query_compile(env->db, env->all_types, text, SIZE_MAX, sequence[i], 1, &fresh));
            assert_ok(coffer_query_count(txn, fresh, &expected));
            assert_ok(coffer_query_count_rebound(txn, prepared, sequence[i], 1, &counted));
            if (counted != expected || expected != (sequence[i] == &match[p] ? 2u : 0u))
                fail_msg("%s, call %zu: counted %" PRIu64 ", a fresh query %" PRIu64, text, i, counted, expected);
            coffer_query_free(fresh);
        }
        /* a wrong type is named, after and before in-place calls */
        coffer_value wrong = p == AT_STRING || p == AT_BINARY ? coffer_value_int(1) : ts_str("x");
        uint64_t n = 99;
        assert_status(coffer_query_count_rebound(txn, prepared, &wrong, 1, &n), COFFER_ERR_QUERY);
        assert_error_contains(ts_all_types_properties[p].name);
        assert_int_equal(n, 0);
        assert_ok(coffer_query_count_rebound(txn, prepared, &match[p], 1, &n));
        assert_int_equal(n, 2);
        /* the prepared query keeps its own argument */
        assert_ok(coffer_query_count(txn, prepared, &n));
        assert_int_equal(n, 0);
        coffer_query_free(prepared);
    }

    /* a double against a float property converts as binding does, in place too */
    coffer_query *by_float = NULL;
    coffer_value as_double = coffer_value_double(3.25), other_double = coffer_value_double(3.5);
    assert_ok(coffer_query_compile(env->db, env->all_types, "floatValue == $0", SIZE_MAX, &other_double, 1, &by_float));
    uint64_t n = 99;
    for (int i = 0; i < 3; i++) {
        assert_ok(coffer_query_count_rebound(txn, by_float, i == 1 ? &other_double : &as_double, 1, &n));
        assert_int_equal(n, i == 1 ? 0 : 2);
    }
    coffer_query_free(by_float);

    /* a string's bytes are read at each call, not kept from the last */
    coffer_query *by_string = NULL;
    char buffer[16] = "h\xc3\xa9llo";
    coffer_value borrowed = coffer_value_string(buffer, SIZE_MAX);
    assert_ok(coffer_query_compile(env->db, env->all_types, "stringValue == $0", SIZE_MAX, &borrowed, 1, &by_string));
    assert_ok(coffer_query_count_rebound(txn, by_string, &borrowed, 1, &n));
    assert_int_equal(n, 2);
    assert_ok(coffer_query_count_rebound(txn, by_string, &borrowed, 1, &n));
    assert_int_equal(n, 2);
    memcpy(buffer, "nothing", 8);
    assert_ok(coffer_query_count_rebound(txn, by_string, &borrowed, 1, &n));
    assert_int_equal(n, 0);
    memcpy(buffer, "h\xc3\xa9llo", 7);
    assert_ok(coffer_query_count_rebound(txn, by_string, &borrowed, 1, &n));
    assert_int_equal(n, 2);

    /* a missing argument is named, also once the query was counted in place */
    coffer_query *two = NULL;
    coffer_value pair[2] = {ts_str("h\xc3\xa9llo"), coffer_value_int(-1234567890123ll)};
    assert_ok(coffer_query_compile(env->db, env->all_types, "stringValue == $0 AND intValue == $1", SIZE_MAX, pair, 2, &two));
    assert_ok(coffer_query_count_rebound(txn, two, pair, 2, &n));
    assert_ok(coffer_query_count_rebound(txn, two, pair, 2, &n));
    assert_int_equal(n, 2);
    n = 99;
    assert_status(coffer_query_count_rebound(txn, two, pair, 1, &n), COFFER_ERR_QUERY);
    assert_error_contains("$1");
    assert_int_equal(n, 0);
    coffer_value swapped[2] = {pair[1], pair[0]};
    assert_status(coffer_query_count_rebound(txn, two, swapped, 2, &n), COFFER_ERR_QUERY);
    assert_int_equal(n, 0);
    assert_ok(coffer_query_count_rebound(txn, two, pair, 2, &n));
    assert_int_equal(n, 2);
    coffer_query_free(two);
    coffer_query_free(by_string);
    coffer_txn_free(txn);
}

int main(void)
{
    for (coffer_property_id p = 0; p < AT_COUNT; p++)
        all_props[p] = p;
    for (coffer_property_id p = 0; p < AT_COUNT; p++)
        typed_props[p] = ts_all_types_properties[p];
    typed_props[AT_COUNT] = (coffer_property_schema){.name = "code", .type = COFFER_TYPE_STRING,
                                                     .flags = COFFER_PROPERTY_PRIMARY_KEY};
    const struct CMUnitTest tests[] = {
        TS_TEST_ALL_MODES(test_every_type_copied),
        TS_TEST_ALL_MODES(test_strings_borrowed),
        TS_TEST_ALL_MODES_SETUP(test_graph_properties, setup_nodes),
        TS_TEST_ALL_MODES(test_buffer_too_small),
        TS_TEST_ALL_MODES(test_results_page),
        TS_TEST_ALL_MODES(test_page_pinned_across_commit),
        TS_TEST_ALL_MODES(test_deleted_row),
        TS_TEST_ALL_MODES(test_bad_arguments),
        TS_TEST_ALL_MODES_SETUP(test_pk_every_type, setup_typed),
        TS_TEST_ALL_MODES(test_pk_buffer_too_small),
        TS_TEST_ALL_MODES(test_pk_missing_and_wrong_type),
        TS_TEST_ALL_MODES(test_pk_pinned_across_commit),
        TS_TEST_ALL_MODES(test_pk_request),
        TS_TEST_ALL_MODES(test_count_rebound),
        TS_TEST_ALL_MODES(test_count_rebound_every_type),
        TS_TEST_ALL_MODES(test_count_rebound_in_place),
    };
    return cmocka_run_group_tests_name("batch_read", tests, NULL, NULL);
}
