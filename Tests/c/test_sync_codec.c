/* test_sync_codec.c — the sync protocol's encodings (docs/SYNC.md): every
 * frame, changeset op and value tag written and read back; every prefix of
 * a frame and hostile counts, tags, nesting and varints refused with an
 * error that names the frame and what was being read; the schema of a file
 * as sent in HELLO; and the hybrid logical clock under an injected clock. */
#include "test_support.h"

#include <stdlib.h>
#include <string.h>

#include "../../Sources/CCoffer/sync/frames.h"
#include "../../Sources/CCoffer/sync/hlc.h"
#include "../../Sources/CCoffer/storage/handles.h"

static const uint8_t CLIENT_A[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};

/* Writes a value of every tag into `b` (as one list, so it is one value). */
static void put_every_value(cf_buf *b)
{
    cf_wire_u8(b, CF_SV_LIST);
    cf_wire_varint(b, 15);
    cf_wire_u8(b, CF_SV_NULL);
    cf_wire_u8(b, CF_SV_BOOL);
    cf_wire_u8(b, 1);
    cf_wire_u8(b, CF_SV_INT);
    cf_wire_zigzag(b, -123456789012LL);
    float f = 1.5f;
    double d = -2.25;
    cf_wire_u8(b, CF_SV_FLOAT);
    cf_buf_put(b, &f, 4);
    cf_wire_u8(b, CF_SV_DOUBLE);
    cf_buf_put(b, &d, 8);
    cf_wire_u8(b, CF_SV_STRING);
    cf_wire_string(b, "héllo", strlen("héllo"));
    cf_wire_u8(b, CF_SV_BINARY);
    cf_wire_bytes(b, "\0\1\2", 3);
    cf_wire_u8(b, CF_SV_DATE);
    cf_wire_zigzag(b, -1);
    cf_wire_zigzag(b, -500000000);
    cf_wire_u8(b, CF_SV_OBJECT_ID);
    cf_buf_put(b, OID_A, 12);
    cf_wire_u8(b, CF_SV_UUID);
    cf_buf_put(b, UUID_A, 16);
    cf_wire_u8(b, CF_SV_DECIMAL128);
    cf_wire_u64le(b, 1);
    cf_wire_u64le(b, 0x3040000000000000ull);
    cf_wire_u8(b, CF_SV_LINK);
    cf_wire_string(b, "Person", 6);
    cf_wire_u8(b, CF_SV_INT);
    cf_wire_zigzag(b, 7);
    cf_wire_u8(b, CF_SV_EMBEDDED);
    cf_wire_string(b, "Address", 7);
    cf_wire_varint(b, 1);
    cf_wire_string(b, "city", 4);
    cf_wire_u8(b, CF_SV_STRING);
    cf_wire_string(b, "Oslo", 4);
    cf_wire_u8(b, CF_SV_LIST);
    cf_wire_varint(b, 0);
    cf_wire_u8(b, CF_SV_MAP);
    cf_wire_varint(b, 1);
    cf_wire_string(b, "k", 1);
    cf_wire_u8(b, CF_SV_NULL);
}

static void put_pk(cf_buf *b, int64_t id)
{
    cf_wire_u8(b, CF_SV_INT);
    cf_wire_zigzag(b, id);
}

/* A changeset with one change of every op. */
static void build_changeset(cf_buf *out, uint64_t version, uint64_t clock)
{
    cf_sync_cs_builder cs = {.version = version, .clock = clock};
    cf_buf pk = {0};
    put_pk(&pk, 42);
    cf_slice pks = {pk.p, pk.len};
    cf_elem_id e1 = {clock, {0}, 0}, e2 = {clock, {0}, 1};
    memcpy(e1.client, CLIENT_A, 16);
    memcpy(e2.client, CLIENT_A, 16);

    cf_cs_begin_change(&cs, CF_OP_CREATE, "Person", pks);
    cf_wire_varint(&cs.body, 2);
    cf_wire_string(&cs.body, "name", 4);
    cf_wire_u8(&cs.body, CF_SV_STRING);
    cf_wire_string(&cs.body, "Ann", 3);
    cf_wire_string(&cs.body, "all", 3);
    put_every_value(&cs.body);
    cf_cs_begin_change(&cs, CF_OP_UPDATE, "Person", pks);
    cf_wire_varint(&cs.body, 0);
    cf_cs_begin_change(&cs, CF_OP_LIST_INSERT, "Person", pks);
    cf_wire_string(&cs.body, "tags", 4);
    cf_cs_elem_id(&cs.body, &e1);
    cf_wire_u8(&cs.body, 0);
    cf_wire_u8(&cs.body, CF_SV_NULL);
    cf_cs_begin_change(&cs, CF_OP_LIST_INSERT, "Person", pks);
    cf_wire_string(&cs.body, "tags", 4);
    cf_cs_elem_id(&cs.body, &e2);
    cf_wire_u8(&cs.body, 1);
    cf_cs_elem_id(&cs.body, &e1);
    cf_wire_u8(&cs.body, CF_SV_BOOL);
    cf_wire_u8(&cs.body, 0);
    cf_cs_begin_change(&cs, CF_OP_LIST_SET, "Person", pks);
    cf_wire_string(&cs.body, "tags", 4);
    cf_cs_elem_id(&cs.body, &e2);
    cf_wire_u8(&cs.body, CF_SV_NULL);
    cf_cs_begin_change(&cs, CF_OP_LIST_ERASE, "Person", pks);
    cf_wire_string(&cs.body, "tags", 4);
    cf_cs_elem_id(&cs.body, &e1);
    cf_cs_begin_change(&cs, CF_OP_SET_ADD, "Person", pks);
    cf_wire_string(&cs.body, "labels", 6);
    cf_wire_u8(&cs.body, CF_SV_STRING);
    cf_wire_string(&cs.body, "x", 1);
    cf_cs_begin_change(&cs, CF_OP_SET_REMOVE, "Person", pks);
    cf_wire_string(&cs.body, "labels", 6);
    cf_wire_u8(&cs.body, CF_SV_STRING);
    cf_wire_string(&cs.body, "y", 1);
    cf_cs_begin_change(&cs, CF_OP_MAP_PUT, "Person", pks);
    cf_wire_string(&cs.body, "attrs", 5);
    cf_wire_string(&cs.body, "k", 1);
    cf_wire_u8(&cs.body, CF_SV_INT);
    cf_wire_zigzag(&cs.body, 1);
    cf_cs_begin_change(&cs, CF_OP_MAP_REMOVE, "Person", pks);
    cf_wire_string(&cs.body, "attrs", 5);
    cf_wire_string(&cs.body, "k", 1);
    cf_cs_begin_change(&cs, CF_OP_DELETE, "Person", pks);
    assert_ok(cf_sync_cs_finish(&cs, out));
    cf_sync_cs_builder_free(&cs);
    free(pk.p);
}

static void check_changeset(const cf_sync_cs *cs, uint64_t version, uint64_t clock)
{
    assert_int_equal(cs->version, version);
    assert_int_equal(cs->clock, clock);
    assert_int_equal(cs->nchanges, 11);
    static const uint8_t ops[] = {CF_OP_CREATE,   CF_OP_UPDATE,  CF_OP_LIST_INSERT, CF_OP_LIST_INSERT,
                                  CF_OP_LIST_SET, CF_OP_LIST_ERASE, CF_OP_SET_ADD,  CF_OP_SET_REMOVE,
                                  CF_OP_MAP_PUT,  CF_OP_MAP_REMOVE, CF_OP_DELETE};
    for (size_t i = 0; i < 11; i++) {
        assert_int_equal(cs->changes[i].op, ops[i]);
        assert_true(cf_slice_eq_str(cs->changes[i].cls, "Person"));
    }
    const cf_sync_change *c = &cs->changes[0];
    assert_int_equal(c->nfields, 2);
    cf_wreader r = cf_wreader_make(c->fields.p, c->fields.n, "fields");
    cf_slice name, value;
    assert_ok(cf_sync_change_field(&r, &name, &value));
    assert_true(cf_slice_eq_str(name, "name"));
    assert_ok(cf_sync_change_field(&r, &name, &value));
    assert_true(cf_slice_eq_str(name, "all"));
    assert_int_equal(value.p[0], CF_SV_LIST);
    assert_int_equal(r.p, r.end);
    assert_false(cs->changes[2].has_anchor);
    assert_true(cs->changes[3].has_anchor);
    assert_int_equal(cs->changes[3].elem.seq, 1);
    assert_int_equal(cs->changes[3].anchor.seq, 0);
    assert_memory_equal(cs->changes[3].anchor.client, CLIENT_A, 16);
    assert_true(cf_slice_eq_str(cs->changes[8].key, "k"));
    assert_true(cf_slice_eq_str(cs->changes[6].prop, "labels"));
}

static void test_changeset_round_trip(void **state)
{
    (void)state;
    cf_buf b = {0};
    build_changeset(&b, 9, 0x123456789abcull);
    cf_sync_cs cs;
    assert_ok(cf_sync_cs_decode(b.p, b.len, &cs));
    check_changeset(&cs, 9, 0x123456789abcull);
    cf_sync_cs_free(&cs);
    free(b.p);
}

/* Decodes `b` as a frame; returns the status (the frame freed). */
static coffer_status decode_status(const uint8_t *p, size_t n)
{
    cf_frame f;
    coffer_status st = cf_frame_decode(p, n, &f);
    if (st == COFFER_OK)
        cf_frame_free(&f);
    return st;
}

static void test_every_frame_round_trips(void **state)
{
    (void)state;
    cf_buf cs1 = {0}, cs2 = {0}, b = {0};
    build_changeset(&cs1, 3, 100);
    build_changeset(&cs2, 4, 200);
    cf_frame f;

    /* HELLO with a schema of one class. */
    cf_buf schema = {0};
    cf_wire_varint(&schema, 1);
    cf_wire_string(&schema, "Person", 6);
    cf_wire_u8(&schema, 0);
    cf_wire_string(&schema, "id", 2);
    cf_wire_varint(&schema, 1);
    cf_wire_string(&schema, "id", 2);
    cf_wire_varint(&schema, COFFER_TYPE_INT);
    cf_wire_u8(&schema, 0);
    cf_wire_string(&schema, "", 0);
    cf_frame_hello_encode(&b, CLIENT_A, "team-1", "", 77, schema.p, schema.len);
    assert_ok(cf_frame_decode(b.p, b.len, &f));
    assert_int_equal(f.type, CF_FRAME_HELLO);
    assert_int_equal(f.u.hello.protocol, 2);
    assert_memory_equal(f.u.hello.client, CLIENT_A, 16);
    assert_true(cf_slice_eq_str(f.u.hello.partition, "team-1"));
    assert_int_equal(f.u.hello.token.n, 0);
    assert_int_equal(f.u.hello.last_server_version, 77);
    assert_int_equal(f.u.hello.schema.n, schema.len);
    cf_frame_free(&f);

    b.len = 0;
    cf_frame_welcome_encode(&b, 5, 1234567);
    assert_ok(cf_frame_decode(b.p, b.len, &f));
    assert_int_equal(f.type, CF_FRAME_WELCOME);
    assert_int_equal(f.u.welcome.last_client_version, 5);
    assert_int_equal(f.u.welcome.latest_server_version, 1234567);

    b.len = 0;
    cf_buf both = {0};
    cf_buf_put(&both, cs1.p, cs1.len);
    cf_buf_put(&both, cs2.p, cs2.len);
    cf_frame_upload_encode(&b, 2, both.p, both.len);
    assert_ok(cf_frame_decode(b.p, b.len, &f));
    assert_int_equal(f.type, CF_FRAME_UPLOAD);
    assert_int_equal(f.u.upload.count, 2);
    check_changeset(&f.u.upload.changesets[0], 3, 100);
    check_changeset(&f.u.upload.changesets[1], 4, 200);
    cf_frame_free(&f);

    b.len = 0;
    cf_frame_upload_ack_encode(&b, 4, 99);
    assert_ok(cf_frame_decode(b.p, b.len, &f));
    assert_int_equal(f.u.upload_ack.last_client_version, 4);
    assert_int_equal(f.u.upload_ack.server_version, 99);

    b.len = both.len = 0;
    cf_wire_varint(&both, 10);
    cf_buf_put(&both, CLIENT_A, 16);
    cf_buf_put(&both, cs1.p, cs1.len);
    cf_wire_varint(&both, 11);
    cf_buf_put(&both, CLIENT_A, 16);
    cf_buf_put(&both, cs2.p, cs2.len);
    cf_frame_download_encode(&b, 12, 2, both.p, both.len);
    assert_ok(cf_frame_decode(b.p, b.len, &f));
    assert_int_equal(f.type, CF_FRAME_DOWNLOAD);
    assert_int_equal(f.u.download.latest_server_version, 12);
    assert_int_equal(f.u.download.count, 2);
    assert_int_equal(f.u.download.changesets[1].server_version, 11);
    check_changeset(&f.u.download.changesets[1].cs, 4, 200);
    cf_frame_free(&f);

    /* Every prefix of the DOWNLOAD frame is refused, never read past. */
    for (size_t n = 0; n < b.len; n++) {
        uint8_t *copy = malloc(n ? n : 1);
        memcpy(copy, b.p, n);
        assert_int_equal(decode_status(copy, n), COFFER_ERR_CORRUPTED);
        free(copy);
    }
    assert_true(strstr(coffer_last_error(), "truncated") != NULL);

    b.len = 0;
    cf_frame_download_ack_encode(&b, 11);
    assert_ok(cf_frame_decode(b.p, b.len, &f));
    assert_int_equal(f.u.download_ack, 11);

    b.len = 0;
    cf_frame_error_encode(&b, CF_SYNC_ERR_SCHEMA_MISMATCH, "Person.age: int here, string there", 1);
    assert_ok(cf_frame_decode(b.p, b.len, &f));
    assert_int_equal(f.u.error.code, CF_SYNC_ERR_SCHEMA_MISMATCH);
    assert_true(cf_slice_eq_str(f.u.error.message, "Person.age: int here, string there"));
    assert_true(f.u.error.fatal);
    assert_string_equal(cf_sync_error_name(f.u.error.code), "SCHEMA_MISMATCH");

    /* A trailing byte is refused. */
    cf_wire_u8(&b, 0);
    assert_int_equal(decode_status(b.p, b.len), COFFER_ERR_CORRUPTED);
    assert_true(strstr(coffer_last_error(), "ERROR frame") != NULL);
    assert_true(strstr(coffer_last_error(), "after the end") != NULL);

    free(schema.p);
    free(both.p);
    free(cs1.p);
    free(cs2.p);
    free(b.p);
}

static void expect_refused(const cf_buf *b, const char *needle)
{
    assert_int_equal(decode_status(b->p, b->len), COFFER_ERR_CORRUPTED);
    if (!strstr(coffer_last_error(), needle))
        fail_msg("message '%s' does not contain '%s'", coffer_last_error(), needle);
}

static void test_hostile_frames(void **state)
{
    (void)state;
    cf_buf b = {0};
    /* Empty and unknown types. */
    expect_refused(&b, "frame type");
    cf_wire_u8(&b, 99);
    expect_refused(&b, "unknown frame type 99");

    /* A changeset count far beyond what the frame holds: refused before any allocation. */
    b.len = 0;
    cf_wire_u8(&b, CF_FRAME_UPLOAD);
    cf_wire_varint(&b, UINT64_MAX / 2);
    expect_refused(&b, "cannot fit");

    /* A varint of eleven bytes. */
    b.len = 0;
    cf_wire_u8(&b, CF_FRAME_DOWNLOAD_ACK);
    for (int i = 0; i < 11; i++)
        cf_wire_u8(&b, 0xff);
    expect_refused(&b, "varint");

    /* A string longer than the frame. */
    b.len = 0;
    cf_wire_u8(&b, CF_FRAME_ERROR);
    cf_wire_varint(&b, 1);
    cf_wire_varint(&b, 1000);
    cf_buf_put(&b, "abc", 3);
    expect_refused(&b, "error message");

    /* An unknown value tag and a bool that is neither 0 nor 1. */
    b.len = 0;
    cf_wire_u8(&b, CF_FRAME_UPLOAD);
    cf_wire_varint(&b, 1);
    cf_wire_varint(&b, 1);
    cf_wire_u64le(&b, 5);
    cf_wire_varint(&b, 1);
    cf_wire_u8(&b, CF_OP_SET_ADD);
    cf_wire_string(&b, "C", 1);
    put_pk(&b, 1);
    cf_wire_string(&b, "s", 1);
    size_t at = b.len;
    cf_wire_u8(&b, 40);
    expect_refused(&b, "unknown value tag 40");
    b.len = at;
    cf_wire_u8(&b, CF_SV_BOOL);
    cf_wire_u8(&b, 2);
    expect_refused(&b, "bool");

    /* Values nested deeper than the limit. */
    b.len = 0;
    cf_wire_u8(&b, CF_FRAME_UPLOAD);
    cf_wire_varint(&b, 1);
    cf_wire_varint(&b, 1);
    cf_wire_u64le(&b, 5);
    cf_wire_varint(&b, 1);
    cf_wire_u8(&b, CF_OP_SET_ADD);
    cf_wire_string(&b, "C", 1);
    put_pk(&b, 1);
    cf_wire_string(&b, "s", 1);
    for (int i = 0; i < CF_WIRE_MAX_DEPTH + 5; i++) {
        cf_wire_u8(&b, CF_SV_LIST);
        cf_wire_varint(&b, 1);
    }
    cf_wire_u8(&b, CF_SV_NULL);
    expect_refused(&b, "nested deeper");

    /* Server versions that do not increase. */
    cf_buf cs = {0};
    build_changeset(&cs, 1, 1);
    b.len = 0;
    cf_wire_u8(&b, CF_FRAME_DOWNLOAD);
    cf_wire_varint(&b, 9);
    cf_wire_varint(&b, 2);
    for (int i = 0; i < 2; i++) {
        cf_wire_varint(&b, 5);
        cf_buf_put(&b, CLIENT_A, 16);
        cf_buf_put(&b, cs.p, cs.len);
    }
    expect_refused(&b, "versions must increase");

    /* A string with a NUL byte where a name is expected. */
    b.len = 0;
    cf_frame_hello_encode(&b, CLIENT_A, "a", "", 0, (const uint8_t *)"\0", 1);
    b.p[1 + 1 + 16 + 1] = 0;
    expect_refused(&b, "NUL");

    free(cs.p);
    free(b.p);
}

static void test_schema_of_a_file(void **state)
{
    (void)state;
    static const coffer_property_schema address[] = {{.name = "city", .type = COFFER_TYPE_STRING}};
    static const coffer_property_schema person[] = {
        {.name = "id", .type = COFFER_TYPE_STRING, .flags = COFFER_PROPERTY_PRIMARY_KEY},
        {.name = "age", .type = COFFER_TYPE_INT, .flags = COFFER_PROPERTY_OPTIONAL | COFFER_PROPERTY_INDEXED},
        {.name = "friends", .type = COFFER_TYPE_LINK, .collection = COFFER_COLLECTION_LIST, .object_class = "Person"},
        {.name = "tags", .type = COFFER_TYPE_STRING, .collection = COFFER_COLLECTION_SET},
        {.name = "home", .type = COFFER_TYPE_LINK, .flags = COFFER_PROPERTY_OPTIONAL, .object_class = "Address"},
        {.name = "fans", .type = COFFER_TYPE_LINKING_OBJECTS, .object_class = "Person", .link_origin_property = "friends"},
    };
    static const coffer_class_schema classes[] = {
        {.name = "Person", .properties = person, .property_count = 6},
        {.name = "Address", .properties = address, .property_count = 1, .flags = COFFER_CLASS_EMBEDDED},
    };
    char dir[TS_PATH_MAX], path[TS_PATH_MAX];
    assert_int_equal(ts_make_temp_dir(dir), 0);
    coffer_db *db;
    assert_ok(ts_open_path(ts_join(path, dir, "s.coffer"), NULL, 0, classes, 2, 1, &db));
    cf_buf b = {0};
    cf_wire_schema_encode(db->schema, &b);
    cf_wreader r = cf_wreader_make(b.p, b.len, "schema");
    cf_wire_schema s;
    assert_ok(cf_wire_schema_read(&r, &s));
    assert_int_equal(r.p, r.end);
    assert_int_equal(s.nclasses, 2);
    assert_true(cf_slice_eq_str(s.classes[0].name, "Person"));
    assert_true(cf_slice_eq_str(s.classes[0].pk, "id"));
    assert_int_equal(s.classes[0].nprops, 5); /* linking objects are not synced */
    assert_int_equal(s.classes[0].props[1].flags, CF_SCHEMA_OPTIONAL | CF_SCHEMA_INDEXED);
    assert_int_equal(s.classes[0].props[2].flags, CF_SCHEMA_LIST);
    assert_true(cf_slice_eq_str(s.classes[0].props[2].target, "Person"));
    assert_int_equal(s.classes[0].props[3].flags, CF_SCHEMA_SET);
    assert_int_equal(s.classes[1].flags, 1);
    assert_int_equal(s.classes[1].pk.n, 0);
    cf_wire_schema_free(&s);
    /* Cut short anywhere, it is refused. */
    for (size_t n = 0; n < b.len; n++) {
        r = cf_wreader_make(b.p, n, "schema");
        assert_int_equal(cf_wire_schema_read(&r, &s), COFFER_ERR_CORRUPTED);
    }
    free(b.p);
    coffer_close(db);
    ts_remove_tree(dir);
}

static uint64_t fake_now;
static uint64_t fake_clock(void *ctx)
{
    (void)ctx;
    return fake_now;
}

static void test_hybrid_logical_clock(void **state)
{
    (void)state;
    fake_now = 1000;
    coffer_sync_set_clock_source(fake_clock, NULL);
    uint64_t c1 = cf_hlc_next(0);
    assert_int_equal(c1, 1000ull << 16);
    /* The wall clock stands still: the counter moves. */
    uint64_t c2 = cf_hlc_next(c1);
    assert_int_equal(c2, c1 + 1);
    /* A week later. */
    fake_now += 7ull * 24 * 3600 * 1000;
    uint64_t c3 = cf_hlc_next(c2);
    assert_int_equal(c3, fake_now << 16);
    /* The wall clock goes back: the clock does not. */
    fake_now = 10;
    assert_int_equal(cf_hlc_next(c3), c3 + 1);
    /* Seeing a remote clock moves past it. */
    assert_int_equal(cf_hlc_observe(c1, c3), c3 + 1);
    assert_int_equal(cf_hlc_observe(c3, c1), c3 + 1);
    coffer_sync_set_clock_source(NULL, NULL);
    assert_true(cf_hlc_now_ms() > 1600000000000ull);
}

static void test_stamps_order_by_clock_then_client(void **state)
{
    (void)state;
    cf_stamp a = {5, {0}}, b = {5, {0}}, c = {6, {0}};
    b.client[15] = 1;
    assert_true(cf_stamp_cmp(&a, &b) < 0);
    assert_true(cf_stamp_cmp(&b, &c) < 0);
    assert_int_equal(cf_stamp_cmp(&a, &a), 0);
    cf_elem_id x = {5, {0}, 1}, y = {5, {0}, 2};
    assert_true(cf_elem_id_cmp(&x, &y) < 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_changeset_round_trip),
        cmocka_unit_test(test_every_frame_round_trips),
        cmocka_unit_test(test_hostile_frames),
        cmocka_unit_test(test_schema_of_a_file),
        cmocka_unit_test(test_hybrid_logical_clock),
        cmocka_unit_test(test_stamps_order_by_clock_then_client),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
