/* test_sync_merge.c — the sync client's recording and integration, with
 * real files exchanging changesets through the codec: one replica's outbox
 * is read as encoded, decoded and integrated into the others, in different
 * orders, and the replicas are compared object by object. Covers what a
 * commit records (and what a remote commit and a file without a client id do
 * not), creates, updates and deletes, embedded objects, concurrent list
 * inserts, delete against update, create against create with one primary
 * key, set adds and removes, map puts, what survives a delete (the ghost of a
 * deleted object, values below its tombstone), links to deleted objects, a failing
 * batch, a commit too large to sync, and a process killed during integration (nothing half-applied),
 * redelivery (nothing applied twice), and a client offline for a simulated
 * week. */
#define _GNU_SOURCE
#include "sync_fixture.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../Sources/CCoffer/storage/handles.h"
#include "../../Sources/CCoffer/sync/integrate.h"
#include "../../Sources/CCoffer/sync/record.h"
#include "../../Sources/CCoffer/sync/state.h"
#include "../../Sources/CCoffer/sync/values.h"

enum { P_ID = 0, P_NAME, P_AGE, P_TAGS, P_FRIENDS, P_LABELS, P_ATTRS, P_BEST, P_HOME, P_EXTRA, P_ADDRS, P_PLACES, P_COUNT };
enum { A_STREET = 0, A_CITY };

static const coffer_property_schema person_props[P_COUNT] = {
    {.name = "id", .type = COFFER_TYPE_INT, .flags = COFFER_PROPERTY_PRIMARY_KEY},
    {.name = "name", .type = COFFER_TYPE_STRING},
    {.name = "age", .type = COFFER_TYPE_INT},
    {.name = "tags", .type = COFFER_TYPE_STRING, .collection = COFFER_COLLECTION_LIST},
    {.name = "friends", .type = COFFER_TYPE_LINK, .collection = COFFER_COLLECTION_LIST, .object_class = "Person"},
    {.name = "labels", .type = COFFER_TYPE_STRING, .collection = COFFER_COLLECTION_SET},
    {.name = "attrs", .type = COFFER_TYPE_INT, .flags = COFFER_PROPERTY_OPTIONAL, .collection = COFFER_COLLECTION_MAP},
    {.name = "best", .type = COFFER_TYPE_LINK, .flags = COFFER_PROPERTY_OPTIONAL, .object_class = "Person"},
    {.name = "home", .type = COFFER_TYPE_LINK, .flags = COFFER_PROPERTY_OPTIONAL, .object_class = "Address"},
    {.name = "extra", .type = COFFER_TYPE_MIXED, .flags = COFFER_PROPERTY_OPTIONAL},
    {.name = "addrs", .type = COFFER_TYPE_LINK, .collection = COFFER_COLLECTION_LIST, .object_class = "Address"},
    {.name = "places", .type = COFFER_TYPE_LINK, .flags = COFFER_PROPERTY_OPTIONAL, .collection = COFFER_COLLECTION_MAP,
     .object_class = "Address"},
};
static const coffer_property_schema address_props[] = {
    {.name = "street", .type = COFFER_TYPE_STRING},
    {.name = "city", .type = COFFER_TYPE_STRING},
};
static const coffer_class_schema schema[] = {
    {.name = "Person", .properties = person_props, .property_count = P_COUNT},
    {.name = "Address", .properties = address_props, .property_count = 2, .flags = COFFER_CLASS_EMBEDDED},
};

/* ------------------------------------------------------------------------ */
/* Replicas                                                                  */
/* ------------------------------------------------------------------------ */

typedef struct msg {
    uint8_t origin[16];
    uint8_t *bytes;
    size_t len;
    uint64_t version;
} msg;

typedef struct replica {
    char path[TS_PATH_MAX];
    coffer_db *db;
    coffer_class_id person;
    uint8_t id[16];
    uint64_t taken;      /* outbox read up to this version */
    uint64_t server;     /* server versions given to its downloads so far */
} replica;

typedef struct world {
    sync_fixture base; /* the folder; replicas exchange changesets without a transport */
    replica r[3];
} world;

static void open_replica(world *w, int i, const uint8_t *key)
{
    replica *r = &w->r[i];
    char name[32];
    snprintf(name, sizeof name, "r%d.coffer", i);
    ts_join(r->path, w->base.dir, name);
    assert_ok(ts_open_path(r->path, key, 0, schema, 2, 1, &r->db));
    r->person = ts_class(r->db, "Person");
    assert_ok(cf_sync_enable(r->db, "p"));
    coffer_txn *txn = ts_begin(r->db, COFFER_TXN_READ);
    int has;
    assert_ok(cf_sync_client_id(txn, r->id, &has));
    assert_true(has);
    coffer_txn_free(txn);
}

static int setup_world(void **state, const uint8_t *key)
{
    world *w = calloc(1, sizeof *w);
    if (!w || sync_fixture_setup(&w->base) != 0)
        return -1;
    sync_use_fake_clock();
    for (int i = 0; i < 3; i++)
        open_replica(w, i, key);
    *state = w;
    return 0;
}

static int setup_plain(void **state) { return setup_world(state, NULL); }
static int setup_encrypted(void **state) { return setup_world(state, ts_key); }

static int teardown_world(void **state)
{
    world *w = *state;
    for (int i = 0; i < 3; i++)
        coffer_close(w->r[i].db);
    sync_fixture_teardown(&w->base);
    free(w);
    return 0;
}

typedef struct batch {
    msg *m;
    size_t n, cap;
} batch;

static void batch_free(batch *b)
{
    for (size_t i = 0; i < b->n; i++)
        free(b->m[i].bytes);
    free(b->m);
    memset(b, 0, sizeof *b);
}

typedef struct take_ctx {
    batch *b;
    const uint8_t *origin;
} take_ctx;

static int take_one(void *ctx, uint64_t version, const uint8_t *cs, size_t len)
{
    take_ctx *t = ctx;
    if (t->b->n == t->b->cap) {
        t->b->cap = t->b->cap ? t->b->cap * 2 : 8;
        t->b->m = realloc(t->b->m, t->b->cap * sizeof *t->b->m);
    }
    msg *m = &t->b->m[t->b->n++];
    memcpy(m->origin, t->origin, 16);
    m->bytes = malloc(len);
    memcpy(m->bytes, cs, len);
    m->len = len;
    m->version = version;
    return 0;
}

/* The changesets of r's outbox not taken before, as uploaded. */
static batch take(replica *r)
{
    batch b = {0};
    coffer_txn *txn = ts_begin(r->db, COFFER_TXN_READ);
    take_ctx t = {&b, r->id};
    assert_ok(cf_sync_outbox_each(txn, r->taken, take_one, &t));
    coffer_txn_free(txn);
    if (b.n)
        r->taken = b.m[b.n - 1].version;
    return b;
}

/* The service acknowledges every changeset of r's outbox. */
static void acknowledge(replica *r)
{
    coffer_txn *txn = ts_begin(r->db, COFFER_TXN_WRITE);
    cf_sync_progress prog;
    assert_ok(cf_sync_progress_read(txn, &prog));
    uint64_t version;
    assert_ok(coffer_txn_version(txn, &version));
    prog.acked_client_version = version;
    assert_ok(cf_sync_progress_write(txn, &prog));
    assert_ok(cf_sync_outbox_trim(txn, version));
    assert_ok(coffer_txn_set_origin(txn, COFFER_ORIGIN_REMOTE));
    ts_commit(txn);
}

/* The client id stored in r's file (all zero for none or a bundle's). */
static const uint8_t *client_id(replica *r)
{
    static uint8_t id[16];
    coffer_txn *txn = ts_begin(r->db, COFFER_TXN_READ);
    int has;
    assert_ok(cf_sync_client_id(txn, id, &has));
    assert_true(has);
    coffer_txn_free(txn);
    return id;
}

/* Integrates the changesets of `b` into `to` as one download batch. */
static coffer_status deliver_status(replica *to, const batch *b)
{
    cf_server_changeset *s = calloc(b->n ? b->n : 1, sizeof *s);
    coffer_status st = COFFER_OK;
    size_t n = 0;
    for (; n < b->n && st == COFFER_OK; n++) {
        s[n].server_version = ++to->server;
        memcpy(s[n].origin, b->m[n].origin, 16);
        st = cf_sync_cs_decode(b->m[n].bytes, b->m[n].len, &s[n].cs);
    }
    if (st == COFFER_OK)
        st = cf_sync_integrate(to->db, s, b->n, NULL);
    for (size_t i = 0; i < n; i++)
        cf_sync_cs_free(&s[i].cs);
    free(s);
    return st;
}

static void deliver(replica *to, const batch *b)
{
    assert_ok(deliver_status(to, b));
}

/* Every object of `db`, each property encoded as sent, one line per object, sorted. */
static int cmp_lines(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int cmp_bufs(const void *x, const void *y)
{
    const cf_buf *a = x, *b = y;
    size_t n = a->len < b->len ? a->len : b->len;
    int c = memcmp(a->p, b->p, n);
    return c ? c : (a->len > b->len) - (a->len < b->len);
}

/* A set's elements or a map's entries in byte order: their order in the
 * file is unspecified (and differs between replicas). */
static void encode_unordered(coffer_object *o, coffer_property_id p, cf_buf *out)
{
    uint64_t n;
    coffer_set *s = NULL;
    coffer_map *m = NULL;
    if (p == P_LABELS) {
        assert_ok(coffer_object_get_set(o, p, &s));
        assert_ok(coffer_set_count(s, &n));
    } else {
        assert_ok(coffer_object_get_map(o, p, &m));
        assert_ok(coffer_map_count(m, &n));
    }
    cf_buf *items = calloc(n + 1, sizeof *items);
    for (uint64_t i = 0; i < n; i++)
        assert_ok(s ? cf_sync_encode_set_elem(s, i, &items[i]) : cf_sync_encode_map_entry(m, i, &items[i], &items[i]));
    qsort(items, n, sizeof *items, cmp_bufs);
    cf_wire_varint(out, n);
    for (uint64_t i = 0; i < n; i++) {
        cf_buf_put(out, items[i].p, items[i].len);
        free(items[i].p);
    }
    free(items);
}

static char *dump(coffer_db *db)
{
    coffer_txn *txn = ts_begin(db, COFFER_TXN_READ);
    coffer_class_id cls = ts_class(db, "Person");
    coffer_iter *it;
    assert_ok(coffer_class_iterate(txn, cls, &it));
    char **lines = NULL;
    size_t n = 0;
    coffer_object *o;
    while (coffer_iter_next(it, &o) == COFFER_OK) {
        cf_buf b = {0};
        assert_ok(cf_sync_encode_pk(o, &b));
        for (coffer_property_id p = 1; p < P_COUNT; p++)
            if (p == P_LABELS || p == P_ATTRS || p == P_PLACES)
                encode_unordered(o, p, &b);
            else
                assert_ok(cf_sync_encode_prop(o, p, &b));
        char *line = malloc(b.len * 2 + 1);
        for (size_t i = 0; i < b.len; i++)
            sprintf(line + 2 * i, "%02x", b.p[i]);
        line[b.len * 2] = 0;
        free(b.p);
        lines = realloc(lines, (n + 1) * sizeof *lines);
        lines[n++] = line;
    }
    coffer_iter_free(it);
    coffer_txn_free(txn);
    if (n)
        qsort(lines, n, sizeof *lines, cmp_lines);
    size_t total = 1;
    for (size_t i = 0; i < n; i++)
        total += strlen(lines[i]) + 1;
    char *out = malloc(total);
    out[0] = 0;
    for (size_t i = 0; i < n; i++) {
        strcat(out, lines[i]);
        strcat(out, "\n");
        free(lines[i]);
    }
    free(lines);
    return out;
}

static void assert_converged(world *w)
{
    char *a = dump(w->r[0].db), *b = dump(w->r[1].db), *c = dump(w->r[2].db);
    assert_string_equal(a, b);
    assert_string_equal(a, c);
    free(a);
    free(b);
    free(c);
}

/* Every replica gets every other replica's new changesets (in replica order). */
static void exchange_all(world *w)
{
    batch b[3];
    for (int i = 0; i < 3; i++)
        b[i] = take(&w->r[i]);
    for (int to = 0; to < 3; to++)
        for (int from = 0; from < 3; from++)
            if (from != to && b[from].n)
                deliver(&w->r[to], &b[from]);
    for (int i = 0; i < 3; i++)
        batch_free(&b[i]);
}

/* ------------------------------------------------------------------------ */
/* Writing                                                                   */
/* ------------------------------------------------------------------------ */

static coffer_object *person(coffer_txn *txn, replica *r, int64_t id)
{
    coffer_value pk = coffer_value_int(id);
    coffer_object *o;
    assert_ok(coffer_object_find(txn, r->person, &pk, &o));
    return o;
}

static void add_person(replica *r, int64_t id, const char *name)
{
    coffer_txn *txn = ts_begin(r->db, COFFER_TXN_WRITE);
    coffer_field f[] = {ts_field(P_ID, coffer_value_int(id)), ts_field(P_NAME, ts_str(name))};
    ts_create(txn, r->person, f, 2);
    ts_commit(txn);
}

static void set_name(replica *r, int64_t id, const char *name)
{
    coffer_txn *txn = ts_begin(r->db, COFFER_TXN_WRITE);
    coffer_value v = ts_str(name);
    assert_ok(coffer_object_set_value(person(txn, r, id), P_NAME, &v));
    ts_commit(txn);
}

static void delete_person(replica *r, int64_t id)
{
    coffer_txn *txn = ts_begin(r->db, COFFER_TXN_WRITE);
    assert_ok(coffer_object_delete(person(txn, r, id)));
    ts_commit(txn);
}

static void list_insert(replica *r, int64_t id, uint64_t at, const char *tag)
{
    coffer_txn *txn = ts_begin(r->db, COFFER_TXN_WRITE);
    coffer_list *l;
    assert_ok(coffer_object_get_list(person(txn, r, id), P_TAGS, &l));
    coffer_value v = ts_str(tag);
    assert_ok(coffer_list_insert(l, at, &v));
    ts_commit(txn);
}

static uint64_t tag_count(replica *r, int64_t id)
{
    coffer_txn *txn = ts_begin(r->db, COFFER_TXN_READ);
    coffer_list *l;
    uint64_t n;
    assert_ok(coffer_object_get_list(person(txn, r, id), P_TAGS, &l));
    assert_ok(coffer_list_count(l, &n));
    coffer_txn_free(txn);
    return n;
}

static const char *name_of(replica *r, int64_t id, char *buf, size_t cap)
{
    coffer_txn *txn = ts_begin(r->db, COFFER_TXN_READ);
    coffer_value pk = coffer_value_int(id), v;
    coffer_object *o;
    coffer_status st = coffer_object_find(txn, r->person, &pk, &o);
    if (st == COFFER_ERR_NOT_FOUND)
        snprintf(buf, cap, "(none)");
    else {
        assert_ok(st);
        assert_ok(coffer_object_get_value(o, P_NAME, &v));
        snprintf(buf, cap, "%.*s", (int)v.u.string.size, (const char *)v.u.string.data);
    }
    coffer_txn_free(txn);
    return buf;
}

/* ------------------------------------------------------------------------ */
/* Tests                                                                     */
/* ------------------------------------------------------------------------ */

static void test_a_commit_records_its_changeset(void **state)
{
    world *w = *state;
    replica *a = &w->r[0];
    coffer_txn *txn = ts_begin(a->db, COFFER_TXN_WRITE);
    coffer_value tags[] = {ts_str("x"), ts_str("y")};
    coffer_value labels[] = {ts_str("l")};
    coffer_map_entry attrs[] = {{{"k", 1}, coffer_value_int(5)}};
    coffer_field f[] = {ts_field(P_ID, coffer_value_int(1)), ts_field(P_NAME, ts_str("Ann")),
                        ts_field(P_TAGS, coffer_value_list(tags, 2)), ts_field(P_LABELS, coffer_value_list(labels, 1)),
                        ts_field(P_ATTRS, coffer_value_map(attrs, 1))};
    ts_create(txn, a->person, f, 5);
    uint64_t version;
    assert_ok(coffer_txn_version(txn, &version));
    ts_commit(txn);

    batch b = take(a);
    assert_int_equal(b.n, 1);
    assert_int_equal(b.m[0].version, version);
    cf_sync_cs cs;
    assert_ok(cf_sync_cs_decode(b.m[0].bytes, b.m[0].len, &cs));
    assert_int_equal(cs.version, version);
    assert_int_equal(cs.clock >> 16, sync_fake_now);
    static const uint8_t ops[] = {CF_OP_CREATE, CF_OP_LIST_INSERT, CF_OP_LIST_INSERT, CF_OP_SET_ADD, CF_OP_MAP_PUT};
    assert_int_equal(cs.nchanges, 5);
    for (size_t i = 0; i < 5; i++)
        assert_int_equal(cs.changes[i].op, ops[i]);
    assert_false(cs.changes[1].has_anchor);
    assert_true(cs.changes[2].has_anchor);
    assert_int_equal(cf_elem_id_cmp(&cs.changes[2].anchor, &cs.changes[1].elem), 0);
    /* CREATE carries every property but the key and the collections. */
    assert_int_equal(cs.changes[0].nfields, 5);
    cf_sync_cs_free(&cs);
    batch_free(&b);

    /* A remote commit records stamps, not an outbox changeset. */
    txn = ts_begin(a->db, COFFER_TXN_WRITE);
    assert_ok(coffer_txn_set_origin(txn, COFFER_ORIGIN_REMOTE));
    coffer_value v = ts_str("Remote");
    assert_ok(coffer_object_set_value(person(txn, a, 1), P_NAME, &v));
    ts_commit(txn);
    b = take(a);
    assert_int_equal(b.n, 0);

    /* An update records only what changed; a list erase names the element. */
    txn = ts_begin(a->db, COFFER_TXN_WRITE);
    coffer_list *l;
    assert_ok(coffer_object_get_list(person(txn, a, 1), P_TAGS, &l));
    assert_ok(coffer_list_remove(l, 0));
    v = coffer_value_int(41);
    assert_ok(coffer_object_set_value(person(txn, a, 1), P_AGE, &v));
    ts_commit(txn);
    b = take(a);
    assert_int_equal(b.n, 1);
    assert_ok(cf_sync_cs_decode(b.m[0].bytes, b.m[0].len, &cs));
    assert_int_equal(cs.nchanges, 2);
    assert_int_equal(cs.changes[0].op, CF_OP_UPDATE);
    assert_int_equal(cs.changes[0].nfields, 1);
    assert_int_equal(cs.changes[1].op, CF_OP_LIST_ERASE);
    assert_true(cf_slice_eq_str(cs.changes[1].prop, "tags"));
    cf_sync_cs_free(&cs);
    batch_free(&b);
}

static void test_a_file_without_client_id_records_nothing(void **state)
{
    world *w = *state;
    char path[TS_PATH_MAX];
    coffer_db *db;
    assert_ok(ts_open_path(ts_join(path, w->base.dir, "plain.coffer"), NULL, 0, schema, 2, 1, &db));
    coffer_txn *txn = ts_begin(db, COFFER_TXN_WRITE);
    coffer_field f[] = {ts_field(P_ID, coffer_value_int(1))};
    ts_create(txn, ts_class(db, "Person"), f, 1);
    ts_commit(txn);
    txn = ts_begin(db, COFFER_TXN_READ);
    MDB_cursor *cur;
    assert_int_equal(mdb_cursor_open(txn->mdb, db->meta_dbi, &cur), 0);
    MDB_val k = {1, "S"}, v;
    int rc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE);
    assert_true(rc != 0 || ((const char *)k.mv_data)[0] != 'S');
    mdb_cursor_close(cur);
    coffer_txn_free(txn);
    /* Syncing it later records what it already holds, once. */
    assert_ok(cf_sync_enable(db, "p"));
    assert_ok(cf_sync_enable(db, "p"));
    assert_status(cf_sync_enable(db, "q"), COFFER_ERR_INVALID_ARGUMENT);
    assert_error_contains("partition 'p'");
    replica r = {.db = db, .person = ts_class(db, "Person")};
    txn = ts_begin(db, COFFER_TXN_READ);
    int has;
    assert_ok(cf_sync_client_id(txn, r.id, &has));
    coffer_txn_free(txn);
    batch b = take(&r);
    assert_int_equal(b.n, 1);
    deliver(&w->r[1], &b);
    batch_free(&b);
    char buf[64];
    assert_string_equal(name_of(&w->r[1], 1, buf, sizeof buf), "");
    coffer_close(db);
}

static void test_a_class_without_primary_key_cannot_sync(void **state)
{
    world *w = *state;
    static const coffer_property_schema props[] = {{.name = "x", .type = COFFER_TYPE_INT}};
    static const coffer_class_schema keyless[] = {{.name = "Loose", .properties = props, .property_count = 1}};
    char path[TS_PATH_MAX];
    coffer_db *db;
    assert_ok(ts_open_path(ts_join(path, w->base.dir, "keyless.coffer"), NULL, 0, keyless, 1, 1, &db));
    assert_status(cf_sync_enable(db, "p"), COFFER_ERR_SCHEMA);
    assert_error_contains("'Loose' has no primary key");
    coffer_close(db);
}

static void test_objects_replicate_whole(void **state)
{
    world *w = *state;
    replica *a = &w->r[0];
    coffer_txn *txn = ts_begin(a->db, COFFER_TXN_WRITE);
    coffer_field f2[] = {ts_field(P_ID, coffer_value_int(2)), ts_field(P_NAME, ts_str("Bo"))};
    coffer_object *bo = ts_create(txn, a->person, f2, 2);
    coffer_value tags[] = {ts_str("t1"), ts_str("t2"), ts_str("t3")};
    coffer_value friends[] = {coffer_value_link(a->person, coffer_object_key_of(bo))};
    coffer_value labels[] = {ts_str("red"), ts_str("blue")};
    coffer_map_entry attrs[] = {{{"h", 1}, coffer_value_int(180)}, {{"w", 1}, coffer_value_null()}};
    coffer_field home[] = {ts_field(A_STREET, ts_str("Main St")), ts_field(A_CITY, ts_str("Oslo"))};
    coffer_value nested[] = {coffer_value_int(1), ts_str("two")};
    coffer_field f1[] = {ts_field(P_ID, coffer_value_int(1)),
                         ts_field(P_NAME, ts_str("Ann")),
                         ts_field(P_AGE, coffer_value_int(40)),
                         ts_field(P_TAGS, coffer_value_list(tags, 3)),
                         ts_field(P_FRIENDS, coffer_value_list(friends, 1)),
                         ts_field(P_LABELS, coffer_value_list(labels, 2)),
                         ts_field(P_ATTRS, coffer_value_map(attrs, 2)),
                         ts_field(P_BEST, coffer_value_link(a->person, coffer_object_key_of(bo))),
                         ts_field(P_HOME, coffer_value_fields(home, 2)),
                         ts_field(P_EXTRA, coffer_value_list(nested, 2))};
    ts_create(txn, a->person, f1, sizeof f1 / sizeof f1[0]);
    ts_commit(txn);
    exchange_all(w);
    assert_converged(w);

    /* Changes of every kind, an embedded object's property among them. */
    txn = ts_begin(a->db, COFFER_TXN_WRITE);
    coffer_object *ann = person(txn, a, 1);
    coffer_value v;
    assert_ok(coffer_object_get_value(ann, P_HOME, &v));
    coffer_object *addr;
    assert_ok(coffer_object_get(txn, v.u.link.class_id, v.u.link.key, &addr));
    v = ts_str("Bergen");
    assert_ok(coffer_object_set_value(addr, A_CITY, &v));
    coffer_list *l;
    assert_ok(coffer_object_get_list(ann, P_TAGS, &l));
    assert_ok(coffer_list_move(l, 0, 2));
    assert_ok(coffer_list_swap(l, 0, 1));
    v = ts_str("t4");
    assert_ok(coffer_list_append(l, &v));
    assert_ok(coffer_list_set(l, 1, &v));
    coffer_set *s;
    assert_ok(coffer_object_get_set(ann, P_LABELS, &s));
    int changed;
    v = ts_str("red");
    assert_ok(coffer_set_remove(s, &v, &changed));
    v = ts_str("green");
    assert_ok(coffer_set_insert(s, &v, &changed));
    coffer_map *m;
    assert_ok(coffer_object_get_map(ann, P_ATTRS, &m));
    v = coffer_value_int(75);
    assert_ok(coffer_map_set(m, "w", 1, &v));
    assert_ok(coffer_map_remove(m, "h", 1, &changed));
    v = coffer_value_double(2.5);
    assert_ok(coffer_object_set_value(ann, P_EXTRA, &v));
    ts_commit(txn);
    exchange_all(w);
    assert_converged(w);

    /* A list cleared and a table cleared. */
    txn = ts_begin(a->db, COFFER_TXN_WRITE);
    assert_ok(coffer_object_get_list(person(txn, a, 1), P_TAGS, &l));
    assert_ok(coffer_list_clear(l));
    ts_commit(txn);
    exchange_all(w);
    assert_converged(w);
    assert_int_equal(tag_count(&w->r[2], 1), 0);
    txn = ts_begin(a->db, COFFER_TXN_WRITE);
    assert_ok(coffer_class_clear(txn, a->person));
    ts_commit(txn);
    exchange_all(w);
    assert_converged(w);
    assert_int_equal(ts_count_of(w->r[1].db, "Person"), 0);
}

static void test_concurrent_list_inserts_all_survive(void **state)
{
    world *w = *state;
    replica *a = &w->r[0], *b = &w->r[1], *c = &w->r[2];
    add_person(a, 1, "Ann");
    list_insert(a, 1, 0, "base");
    exchange_all(w);
    /* Offline, concurrently: appends on both sides, inserts at the head. */
    sync_fake_now += 10;
    list_insert(a, 1, 1, "a1");
    list_insert(a, 1, 2, "a2");
    list_insert(a, 1, 0, "a0");
    sync_fake_now += 10;
    list_insert(b, 1, 1, "b1");
    list_insert(b, 1, 0, "b0");
    batch ba = take(a), bb = take(b), bc = take(c);
    assert_int_equal(bc.n, 0);
    /* A gets B's, B gets A's, C gets B's before A's. */
    deliver(a, &bb);
    deliver(b, &ba);
    deliver(c, &bb);
    deliver(c, &ba);
    batch_free(&ba);
    batch_free(&bb);
    assert_converged(w);
    assert_int_equal(tag_count(c, 1), 6);
}

static void test_delete_beats_a_later_update(void **state)
{
    world *w = *state;
    replica *a = &w->r[0], *b = &w->r[1], *c = &w->r[2];
    add_person(a, 1, "Ann");
    exchange_all(w);
    sync_fake_now += 100;
    delete_person(a, 1);
    sync_fake_now += 100; /* the update is later, and still loses */
    set_name(b, 1, "Ann II");
    list_insert(b, 1, 0, "late");
    batch ba = take(a), bb = take(b);
    deliver(c, &bb); /* C sees the update first */
    deliver(c, &ba);
    deliver(a, &bb);
    deliver(b, &ba);
    batch_free(&ba);
    batch_free(&bb);
    assert_converged(w);
    char buf[64];
    assert_string_equal(name_of(c, 1, buf, sizeof buf), "(none)");
    assert_string_equal(name_of(b, 1, buf, sizeof buf), "(none)");

    /* Created again here after the delete was seen: a new life everywhere,
     * without the late insert C's ghost kept (the create removes it). */
    sync_fake_now += 100;
    add_person(c, 1, "Ann again");
    exchange_all(w);
    assert_converged(w);
    assert_string_equal(name_of(a, 1, buf, sizeof buf), "Ann again");
    assert_int_equal(tag_count(a, 1), 0);
    assert_int_equal(tag_count(c, 1), 0);
}

static void test_create_with_the_same_primary_key_merges(void **state)
{
    world *w = *state;
    replica *a = &w->r[0], *b = &w->r[1], *c = &w->r[2];
    sync_fake_now += 5;
    add_person(a, 9, "from A");
    sync_fake_now += 5;
    add_person(b, 9, "from B");
    batch ba = take(a), bb = take(b);
    deliver(a, &bb);
    deliver(b, &ba);
    deliver(c, &bb); /* the later create first */
    deliver(c, &ba);
    batch_free(&ba);
    batch_free(&bb);
    assert_converged(w);
    char buf[64];
    assert_string_equal(name_of(a, 9, buf, sizeof buf), "from B");
}

static void set_op(replica *r, int64_t id, const char *label, int add)
{
    coffer_txn *txn = ts_begin(r->db, COFFER_TXN_WRITE);
    coffer_set *s;
    int changed;
    assert_ok(coffer_object_get_set(person(txn, r, id), P_LABELS, &s));
    coffer_value v = ts_str(label);
    assert_ok(add ? coffer_set_insert(s, &v, &changed) : coffer_set_remove(s, &v, &changed));
    ts_commit(txn);
}

static void map_put(replica *r, int64_t id, const char *key, int64_t value)
{
    coffer_txn *txn = ts_begin(r->db, COFFER_TXN_WRITE);
    coffer_map *m;
    assert_ok(coffer_object_get_map(person(txn, r, id), P_ATTRS, &m));
    coffer_value v = coffer_value_int(value);
    assert_ok(coffer_map_set(m, key, strlen(key), &v));
    ts_commit(txn);
}

static void test_sets_and_maps_merge_per_element(void **state)
{
    world *w = *state;
    replica *a = &w->r[0], *b = &w->r[1], *c = &w->r[2];
    add_person(a, 1, "Ann");
    set_op(a, 1, "keep", 1);
    set_op(a, 1, "drop", 1);
    map_put(a, 1, "x", 1);
    exchange_all(w);
    sync_fake_now += 10;
    set_op(a, 1, "drop", 0);   /* removed on A ... */
    set_op(a, 1, "fromA", 1);
    map_put(a, 1, "x", 2);     /* ... the same key put on both: B's is later */
    map_put(a, 1, "onlyA", 1);
    sync_fake_now += 10;
    set_op(b, 1, "drop", 0);
    set_op(b, 1, "drop", 1);   /* ... and added again later on B: present */
    set_op(b, 1, "fromB", 1);
    map_put(b, 1, "x", 3);
    batch ba = take(a), bb = take(b);
    deliver(c, &ba);
    deliver(c, &bb);
    deliver(a, &bb);
    deliver(b, &ba);
    batch_free(&ba);
    batch_free(&bb);
    assert_converged(w);
    coffer_txn *txn = ts_begin(c->db, COFFER_TXN_READ);
    coffer_set *s;
    coffer_map *m;
    uint64_t n;
    int found;
    assert_ok(coffer_object_get_set(person(txn, c, 1), P_LABELS, &s));
    assert_ok(coffer_set_count(s, &n));
    assert_int_equal(n, 4); /* keep, drop, fromA, fromB */
    coffer_value v = ts_str("drop");
    assert_ok(coffer_set_contains(s, &v, &found));
    assert_true(found);
    assert_ok(coffer_object_get_map(person(txn, c, 1), P_ATTRS, &m));
    assert_ok(coffer_map_get(m, "x", 1, &v));
    assert_int_equal(v.u.integer, 3);
    assert_ok(coffer_map_count(m, &n));
    assert_int_equal(n, 2);
    coffer_txn_free(txn);
}

static int has_label(replica *r, int64_t id, const char *label)
{
    coffer_txn *txn = ts_begin(r->db, COFFER_TXN_READ);
    coffer_set *s;
    int found;
    coffer_value v = ts_str(label);
    assert_ok(coffer_object_get_set(person(txn, r, id), P_LABELS, &s));
    assert_ok(coffer_set_contains(s, &v, &found));
    coffer_txn_free(txn);
    return found;
}

static void reopen(world *w, int i)
{
    coffer_close(w->r[i].db);
    uint64_t taken = w->r[i].taken, server = w->r[i].server;
    open_replica(w, i, NULL);
    w->r[i].taken = taken;
    w->r[i].server = server;
}

/* B updates an object A deleted (B has not seen the delete, its clock is
 * later); C, which saw the delete, creates it again between the two. The
 * update is kept above the tombstone and shows in the new life, on A (update
 * before create, kept by the ghost across a reopen), on B (its own update
 * before the delete) and on C (update after create). */
static void test_an_update_of_a_deleted_object_shows_in_its_new_life(void **state)
{
    world *w = *state;
    replica *a = &w->r[0], *b = &w->r[1], *c = &w->r[2];
    add_person(a, 1, "Ann");
    map_put(a, 1, "old", 1);
    exchange_all(w);
    sync_fake_now += 100;
    delete_person(a, 1);
    batch ba = take(a);
    deliver(c, &ba);
    sync_fake_now += 100;
    add_person(c, 1, "Ann again");
    sync_fake_now += 100;
    set_name(b, 1, "late name");
    set_op(b, 1, "late", 1);
    map_put(b, 1, "late", 7);
    list_insert(b, 1, 0, "late");
    batch bb = take(b), bc = take(c);
    deliver(a, &bb);
    reopen(w, 0);
    a = &w->r[0];
    char buf[64];
    assert_string_equal(name_of(a, 1, buf, sizeof buf), "(none)"); /* still deleted */
    deliver(a, &bc);
    deliver(b, &ba);
    deliver(b, &bc);
    deliver(c, &bb);
    batch_free(&ba);
    batch_free(&bb);
    batch_free(&bc);
    assert_converged(w);
    for (int i = 0; i < 3; i++) {
        assert_string_equal(name_of(&w->r[i], 1, buf, sizeof buf), "late name");
        assert_true(has_label(&w->r[i], 1, "late"));
        assert_int_equal(tag_count(&w->r[i], 1), 1);
    }
    /* The map entry of the first life is gone for good; the late one shows. */
    coffer_txn *txn = ts_begin(a->db, COFFER_TXN_READ);
    coffer_map *m;
    uint64_t n;
    coffer_value v;
    assert_ok(coffer_object_get_map(person(txn, a, 1), P_ATTRS, &m));
    assert_ok(coffer_map_count(m, &n));
    assert_int_equal(n, 1);
    assert_ok(coffer_map_get(m, "late", 4, &v));
    assert_int_equal(v.u.integer, 7);
    coffer_txn_free(txn);
}

/* Values stamped below the tombstone never come back, and a create older
 * than the tombstone is ignored, whatever the order of arrival. */
static void test_values_below_the_tombstone_are_gone_for_good(void **state)
{
    world *w = *state;
    replica *a = &w->r[0], *b = &w->r[1], *c = &w->r[2];
    add_person(a, 2, "Bo");
    exchange_all(w);
    sync_fake_now += 100;
    set_name(b, 2, "early update");
    set_op(b, 2, "early", 1);
    sync_fake_now += 100;
    delete_person(a, 2);
    batch ba = take(a), bb = take(b);
    deliver(c, &ba); /* the delete first: the update arrives late and stays below it */
    deliver(c, &bb);
    deliver(a, &bb);
    deliver(b, &ba);
    batch_free(&ba);
    batch_free(&bb);
    assert_converged(w);
    sync_fake_now += 100;
    add_person(c, 2, "Bo II");
    exchange_all(w);
    assert_converged(w);
    char buf[64];
    for (int i = 0; i < 3; i++) {
        assert_string_equal(name_of(&w->r[i], 2, buf, sizeof buf), "Bo II");
        assert_false(has_label(&w->r[i], 2, "early"));
    }
    /* A create stamped before a later delete arrives after it: ignored. */
    sync_fake_now += 100;
    add_person(a, 3, "Cy");
    batch early = take(a);
    sync_fake_now += 100;
    deliver(b, &early);
    delete_person(b, 3);
    batch bd = take(b);
    deliver(c, &bd);
    deliver(c, &early);
    deliver(a, &bd);
    batch_free(&early);
    batch_free(&bd);
    assert_converged(w);
    assert_string_equal(name_of(c, 3, buf, sizeof buf), "(none)");
}

/* A commit whose changeset no sync frame could carry is refused at commit,
 * naming the limit; nothing of it is kept and the file goes on. */
/* A delete that arrives after a create of a later life still removes what
 * was stamped below it: here, list elements and set elements of the first
 * life that reached C after C had created the object again. */
static void test_a_late_delete_of_an_earlier_life_removes_its_values(void **state)
{
    world *w = *state;
    replica *a = &w->r[0], *b = &w->r[1], *c = &w->r[2];
    add_person(a, 5, "first life");
    batch created = take(a);
    deliver(b, &created);
    list_insert(a, 5, 0, "old");
    set_op(a, 5, "old", 1);
    batch edits = take(a);
    sync_fake_now += 100;
    delete_person(b, 5);
    batch deleted = take(b);
    sync_fake_now += 100;
    add_person(c, 5, "second life"); /* C has seen nothing of the first */
    batch second = take(c);
    deliver(c, &created);
    deliver(c, &edits);
    assert_int_equal(tag_count(c, 5), 1);
    deliver(c, &deleted);
    deliver(a, &deleted);
    deliver(a, &second);
    deliver(b, &edits);
    deliver(b, &second);
    assert_converged(w);
    char buf[64];
    for (int i = 0; i < 3; i++) {
        assert_string_equal(name_of(&w->r[i], 5, buf, sizeof buf), "second life");
        assert_int_equal(tag_count(&w->r[i], 5), 0);
        assert_false(has_label(&w->r[i], 5, "old"));
    }
    /* The first life's edits arriving again, now that B knows the tombstone
     * and the object lives: they stay invisible. */
    deliver(b, &edits);
    assert_int_equal(tag_count(b, 5), 0);
    assert_false(has_label(b, 5, "old"));
    assert_converged(w);
    batch_free(&created);
    batch_free(&edits);
    batch_free(&deleted);
    batch_free(&second);
}

/* A create of a live object raises its creation stamp: a delete stamped
 * between the two creates (of the first life only) leaves it live. */
static void test_an_object_created_twice_outlives_a_delete_between(void **state)
{
    world *w = *state;
    replica *a = &w->r[0], *b = &w->r[1], *c = &w->r[2];
    add_person(a, 6, "first");
    batch first = take(a);
    deliver(b, &first);
    sync_fake_now += 100;
    delete_person(b, 6);
    batch deleted = take(b);
    sync_fake_now += 100;
    add_person(c, 6, "second"); /* C has seen neither */
    batch second = take(c);
    deliver(c, &first);
    deliver(c, &deleted);
    deliver(a, &second);
    deliver(a, &deleted); /* A had the first create: the second one arrived before the delete */
    deliver(b, &second);
    batch_free(&first);
    batch_free(&deleted);
    batch_free(&second);
    assert_converged(w);
    char buf[64];
    for (int i = 0; i < 3; i++)
        assert_string_equal(name_of(&w->r[i], 6, buf, sizeof buf), "second");
}

static void test_a_commit_too_large_to_sync_is_refused(void **state)
{
    world *w = *state;
    replica *a = &w->r[0];
    add_person(a, 1, "Ann");
    batch before = take(a);
    size_t piece = 1u << 20;
    char *big = malloc(piece);
    memset(big, 'x', piece);
    coffer_txn *txn = ts_begin(a->db, COFFER_TXN_WRITE);
    coffer_field f[] = {ts_field(P_ID, coffer_value_int(2)), ts_field(P_NAME, ts_str("Big"))};
    ts_create(txn, a->person, f, 2);
    coffer_list *l;
    assert_ok(coffer_object_get_list(person(txn, a, 2), P_TAGS, &l));
    coffer_value v = {.type = COFFER_TYPE_STRING, .u.string = {big, piece}};
    for (uint64_t i = 0; i < 65; i++)
        assert_ok(coffer_list_insert(l, i, &v));
    assert_int_equal(coffer_txn_commit(txn), COFFER_ERR_LIMIT);
    assert_non_null(strstr(coffer_last_error(), "limit of a sync frame (64 MiB)"));
    coffer_txn_free(txn);
    free(big);
    char buf[64];
    assert_string_equal(name_of(a, 2, buf, sizeof buf), "(none)");
    batch after = take(a);
    assert_int_equal(after.n, 0); /* no changeset was kept */
    add_person(a, 3, "Cy");
    batch later = take(a);
    assert_int_equal(later.n, 1);
    deliver(&w->r[1], &before);
    deliver(&w->r[1], &later);
    assert_string_equal(name_of(&w->r[1], 3, buf, sizeof buf), "Cy");
    batch_free(&before);
    batch_free(&after);
    batch_free(&later);
}

static void test_links_to_deleted_objects_become_null(void **state)
{
    world *w = *state;
    replica *a = &w->r[0], *b = &w->r[1], *c = &w->r[2];
    add_person(a, 1, "Ann");
    add_person(a, 2, "Bo");
    add_person(a, 3, "Cy");
    exchange_all(w);
    sync_fake_now += 10;
    delete_person(a, 2);
    sync_fake_now += 10;
    /* Concurrently on B: links to Bo from Cy. */
    coffer_txn *txn = ts_begin(b->db, COFFER_TXN_WRITE);
    coffer_object *bo = person(txn, b, 2), *cy = person(txn, b, 3);
    coffer_value link = coffer_value_link(b->person, coffer_object_key_of(bo));
    assert_ok(coffer_object_set_value(cy, P_BEST, &link));
    coffer_list *l;
    assert_ok(coffer_object_get_list(cy, P_FRIENDS, &l));
    assert_ok(coffer_list_append(l, &link));
    coffer_value ann = coffer_value_link(b->person, coffer_object_key_of(person(txn, b, 1)));
    assert_ok(coffer_list_append(l, &ann));
    ts_commit(txn);
    batch ba = take(a), bb = take(b);
    deliver(c, &bb);
    deliver(c, &ba);
    deliver(a, &bb);
    deliver(b, &ba);
    batch_free(&ba);
    batch_free(&bb);
    assert_converged(w);
    for (int i = 0; i < 3; i++) {
        txn = ts_begin(w->r[i].db, COFFER_TXN_READ);
        coffer_value v;
        coffer_object *o = person(txn, &w->r[i], 3);
        assert_ok(coffer_object_get_value(o, P_BEST, &v));
        assert_int_equal(v.type, COFFER_TYPE_NULL);
        uint64_t n;
        assert_ok(coffer_object_get_list(o, P_FRIENDS, &l));
        assert_ok(coffer_list_count(l, &n));
        assert_int_equal(n, 1); /* Ann only */
        coffer_txn_free(txn);
    }
    /* Later list edits still converge after the element was lost. */
    txn = ts_begin(c->db, COFFER_TXN_WRITE);
    assert_ok(coffer_object_get_list(person(txn, c, 3), P_FRIENDS, &l));
    ann = coffer_value_link(c->person, coffer_object_key_of(person(txn, c, 1)));
    assert_ok(coffer_list_insert(l, 0, &ann));
    ts_commit(txn);
    exchange_all(w);
    assert_converged(w);
}

static void test_a_failing_batch_applies_nothing(void **state)
{
    world *w = *state;
    replica *a = &w->r[0], *b = &w->r[1];
    add_person(a, 1, "Ann");
    set_name(a, 1, "Ann 2");
    batch ba = take(a);
    assert_int_equal(ba.n, 2);
    /* The second changeset names a class B does not have. */
    cf_sync_cs_builder cs = {.version = 99, .clock = sync_fake_now << 16};
    cf_buf pk = {0}, bad = {0};
    cf_wire_u8(&pk, CF_SV_INT);
    cf_wire_zigzag(&pk, 1);
    cf_cs_begin_change(&cs, CF_OP_DELETE, "Ghost", (cf_slice){pk.p, pk.len});
    assert_ok(cf_sync_cs_finish(&cs, &bad));
    cf_sync_cs_builder_free(&cs);
    free(ba.m[1].bytes);
    ba.m[1].bytes = bad.p;
    ba.m[1].len = bad.len;
    free(pk.p);
    assert_status(deliver_status(b, &ba), COFFER_ERR_SCHEMA);
    assert_error_contains("'Ghost'");
    assert_int_equal(ts_count_of(b->db, "Person"), 0);
    coffer_txn *txn = ts_begin(b->db, COFFER_TXN_READ);
    cf_sync_progress prog;
    assert_ok(cf_sync_progress_read(txn, &prog));
    assert_int_equal(prog.server_version, 0);
    coffer_txn_free(txn);
    batch_free(&ba);
}

static void test_a_process_killed_during_integration_leaves_nothing(void **state)
{
    world *w = *state;
    replica *a = &w->r[0], *b = &w->r[1];
    add_person(a, 1, "Ann");
    list_insert(a, 1, 0, "t");
    batch ba = take(a);
    cf_server_changeset s[2];
    for (size_t i = 0; i < 2; i++) {
        s[i].server_version = i + 1;
        memcpy(s[i].origin, a->id, 16);
        assert_ok(cf_sync_cs_decode(ba.m[i].bytes, ba.m[i].len, &s[i].cs));
    }
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        /* Integrate in a write transaction and die before its commit. */
        coffer_db *db;
        if (ts_open_path(b->path, NULL, 0, schema, 2, 1, &db) != COFFER_OK)
            _exit(2);
        coffer_txn *txn;
        cf_sync_cache cache = {0};
        if (coffer_txn_begin(db, COFFER_TXN_WRITE, &txn) != COFFER_OK ||
            cf_sync_integrate_in(txn, &cache, s, 2, NULL) != COFFER_OK)
            _exit(3);
        kill(getpid(), SIGKILL);
        _exit(4);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    assert_int_equal(ts_count_of(b->db, "Person"), 0);
    /* The same batch again: applied once, and redelivered, not twice. */
    uint64_t sv;
    assert_ok(cf_sync_integrate(b->db, s, 2, &sv));
    assert_int_equal(sv, 2);
    assert_ok(cf_sync_integrate(b->db, s, 2, &sv));
    assert_int_equal(tag_count(b, 1), 1);
    for (size_t i = 0; i < 2; i++)
        cf_sync_cs_free(&s[i].cs);
    batch_free(&ba);
}

static void test_a_week_offline(void **state)
{
    world *w = *state;
    replica *a = &w->r[0], *b = &w->r[1], *c = &w->r[2];
    add_person(a, 1, "Ann");
    exchange_all(w);
    /* A goes offline for a week and writes 300 times, an hour apart; B
     * renames Ann once on the third day. */
    uint64_t start = sync_fake_now;
    char name[32];
    for (int i = 0; i < 300; i++) {
        sync_fake_now = start + (uint64_t)i * 3600 * 1000;
        if (i == 72)
            set_name(b, 1, "B on day 3");
        snprintf(name, sizeof name, "A %d", i);
        if (i < 50)
            set_name(a, 1, name);
        list_insert(a, 1, (uint64_t)i, name);
    }
    batch ba = take(a);
    assert_int_equal(ba.n, 350);
    for (size_t i = 1; i < ba.n; i++) {
        cf_sync_cs x, y;
        assert_ok(cf_sync_cs_decode(ba.m[i - 1].bytes, ba.m[i - 1].len, &x));
        assert_ok(cf_sync_cs_decode(ba.m[i].bytes, ba.m[i].len, &y));
        assert_true(x.clock < y.clock);
        assert_true(x.version < y.version);
        cf_sync_cs_free(&x);
        cf_sync_cs_free(&y);
    }
    batch bb = take(b);
    deliver(b, &ba);
    deliver(c, &ba);
    deliver(c, &bb);
    deliver(a, &bb);
    batch_free(&ba);
    batch_free(&bb);
    assert_converged(w);
    char buf[64];
    /* B's rename on day 3 is later than A's renames of the first two days. */
    assert_string_equal(name_of(c, 1, buf, sizeof buf), "B on day 3");
    assert_int_equal(tag_count(c, 1), 300);
}

static void test_a_copy_is_a_new_client(void **state)
{
    world *w = *state;
    replica *a = &w->r[0];
    replica *b = &w->r[1], *c = &w->r[2];
    add_person(a, 1, "Ann");
    batch old_create = take(a);
    deliver(b, &old_create);
    sync_fake_now += 10;
    delete_person(a, 1);
    add_person(a, 2, "Bo"); /* not uploaded yet */
    /* A create of a new life elsewhere, and a later update from a replica
     * that has not seen the delete: A keeps the update in its ghost. */
    sync_fake_now += 10;
    add_person(c, 1, "C's life");
    batch new_life = take(c);
    sync_fake_now += 10;
    set_name(b, 1, "B's late name");
    batch late = take(b);
    deliver(a, &late);
    /* A has commits the service has not acknowledged: no copy, and nothing
     * is left at the path. */
    char refused[TS_PATH_MAX];
    ts_join(refused, w->base.dir, "early-copy.coffer");
    assert_int_equal(coffer_db_write_copy(a->db, refused, NULL, 0), COFFER_ERR_MISUSE);
    assert_non_null(strstr(coffer_last_error(), "not uploaded yet"));
    assert_int_equal(access(refused, F_OK), -1);
    acknowledge(a);
    /* An encrypted copy, and a plain copy of this plain file, which LMDB's
     * own copy would make a twin of the same client. */
    const uint8_t *keys[] = {ts_key, NULL};
    uint8_t claimed[2][16];
    for (int k = 0; k < 2; k++) {
        char path[TS_PATH_MAX];
        ts_join(path, w->base.dir, keys[k] ? "copy.coffer" : "plain-copy.coffer");
        assert_ok(coffer_db_write_copy(a->db, path, keys[k], keys[k] ? 64 : 0));
        replica r = {.server = a->server}; /* it starts from A's progress */
        assert_ok(ts_open_path(path, keys[k], 0, schema, 2, 1, &r.db));
        r.person = ts_class(r.db, "Person");
        /* The copy is a bundle: no client id of its own until it commits. */
        static const uint8_t zero[16];
        assert_memory_equal(client_id(&r), zero, 16);
        batch b = take(&r);
        assert_int_equal(b.n, 0); /* the original uploads its outbox, not the copy */
        /* The tombstone holds in the copy (its key hashed under the copy's
         * key): the create from before the delete stays deleted. */
        deliver(&r, &old_create);
        char buf[64];
        assert_string_equal(name_of(&r, 1, buf, sizeof buf), "(none)");
        /* So does the ghost: the new life shows the later update. */
        deliver(&r, &new_life);
        assert_string_equal(name_of(&r, 1, buf, sizeof buf), "B's late name");
        /* Integrating downloads does not make it a client of its own; its
         * first commit does, with an id kept from then on. */
        assert_memory_equal(client_id(&r), zero, 16);
        set_name(&r, 2, "Bo 2");
        memcpy(r.id, client_id(&r), 16);
        assert_memory_not_equal(r.id, zero, 16);
        assert_memory_not_equal(r.id, a->id, 16);
        memcpy(claimed[k], r.id, 16);
        /* And the copy records its own commits. */
        b = take(&r);
        assert_int_equal(b.n, 1);
        assert_memory_equal(client_id(&r), r.id, 16);
        batch_free(&b);
        coffer_close(r.db);
    }
    assert_memory_not_equal(claimed[0], claimed[1], 16);
    batch_free(&old_create);
    batch_free(&new_life);
    batch_free(&late);
}

/* Files made byte for byte from one bundle (as a seed file is installed)
 * each claim a client id of their own at their first commit, and start
 * from the bundle's progress. */
static void test_each_file_made_from_a_bundle_is_a_new_client(void **state)
{
    world *w = *state;
    replica *a = &w->r[0];
    add_person(a, 1, "Ann");
    batch created = take(a);
    acknowledge(a);
    char bundle[TS_PATH_MAX];
    ts_join(bundle, w->base.dir, "bundle.coffer");
    assert_ok(coffer_db_write_copy(a->db, bundle, NULL, 0));
    uint8_t ids[2][16];
    for (int i = 0; i < 2; i++) {
        char path[TS_PATH_MAX], name[32];
        snprintf(name, sizeof name, "installed-%d.coffer", i);
        ts_join(path, w->base.dir, name);
        assert_int_equal(ts_copy_file(bundle, path), 0);
        replica r = {0};
        assert_ok(ts_open_path(path, NULL, 0, schema, 2, 1, &r.db));
        r.person = ts_class(r.db, "Person");
        char buf[64];
        assert_string_equal(name_of(&r, 1, buf, sizeof buf), "Ann");
        add_person(&r, 10 + i, "installed");
        memcpy(ids[i], client_id(&r), 16);
        memcpy(r.id, ids[i], 16);
        assert_memory_not_equal(ids[i], a->id, 16);
        /* Only its own commit waits for upload, not the bundle's objects. */
        batch b = take(&r);
        assert_int_equal(b.n, 1);
        batch_free(&b);
        coffer_close(r.db);
    }
    assert_memory_not_equal(ids[0], ids[1], 16);
    batch_free(&created);
}

/* Sets property `prop` of the embedded object at `v` (a link) to `text`. */
static void set_embedded(coffer_txn *txn, coffer_value v, coffer_property_id prop, const char *text)
{
    assert_int_equal(v.type, COFFER_TYPE_LINK);
    coffer_object *o;
    assert_ok(coffer_object_get(txn, v.u.link.class_id, v.u.link.key, &o));
    coffer_value t = ts_str(text);
    assert_ok(coffer_object_set_value(o, prop, &t));
}

static void test_embedded_objects_in_lists_and_maps(void **state)
{
    world *w = *state;
    replica *a = &w->r[0];
    coffer_txn *txn = ts_begin(a->db, COFFER_TXN_WRITE);
    coffer_field one[] = {ts_field(A_STREET, ts_str("First St")), ts_field(A_CITY, ts_str("Oslo"))};
    coffer_field two[] = {ts_field(A_STREET, ts_str("Second St")), ts_field(A_CITY, ts_str("Rome"))};
    coffer_field three[] = {ts_field(A_STREET, ts_str("Third St")), ts_field(A_CITY, ts_str("Lima"))};
    coffer_value addrs[] = {coffer_value_fields(one, 2), coffer_value_fields(two, 2)};
    coffer_map_entry places[] = {{{"home", 4}, coffer_value_fields(three, 2)}};
    coffer_field f[] = {ts_field(P_ID, coffer_value_int(1)), ts_field(P_ADDRS, coffer_value_list(addrs, 2)),
                        ts_field(P_PLACES, coffer_value_map(places, 1))};
    ts_create(txn, a->person, f, 3);
    ts_commit(txn);
    exchange_all(w);
    assert_converged(w);

    /* A property of an embedded object in the list, and of one in the map. */
    txn = ts_begin(a->db, COFFER_TXN_WRITE);
    coffer_object *ann = person(txn, a, 1);
    coffer_list *l;
    coffer_map *m;
    coffer_value v;
    assert_ok(coffer_object_get_list(ann, P_ADDRS, &l));
    assert_ok(coffer_list_get(l, 1, &v));
    set_embedded(txn, v, A_CITY, "Milan");
    assert_ok(coffer_object_get_map(ann, P_PLACES, &m));
    assert_ok(coffer_map_get(m, "home", 4, &v));
    set_embedded(txn, v, A_STREET, "Fourth St");
    ts_commit(txn);
    batch b = take(a);
    assert_int_equal(b.n, 1);
    cf_sync_cs cs;
    assert_ok(cf_sync_cs_decode(b.m[0].bytes, b.m[0].len, &cs));
    assert_int_equal(cs.nchanges, 2);
    assert_true(cs.changes[0].op == CF_OP_LIST_SET || cs.changes[1].op == CF_OP_LIST_SET);
    assert_true(cs.changes[0].op == CF_OP_MAP_PUT || cs.changes[1].op == CF_OP_MAP_PUT);
    cf_sync_cs_free(&cs);
    deliver(&w->r[1], &b);
    deliver(&w->r[2], &b);
    batch_free(&b);
    assert_converged(w);
    txn = ts_begin(w->r[2].db, COFFER_TXN_READ);
    assert_ok(coffer_object_get_list(person(txn, &w->r[2], 1), P_ADDRS, &l));
    assert_ok(coffer_list_get(l, 1, &v));
    coffer_object *o;
    assert_ok(coffer_object_get(txn, v.u.link.class_id, v.u.link.key, &o));
    assert_ok(coffer_object_get_value(o, A_CITY, &v));
    assert_int_equal(v.u.string.size, 5);
    assert_memory_equal(v.u.string.data, "Milan", 5);
    coffer_txn_free(txn);
}

#define WORLD_TEST(f) cmocka_unit_test_setup_teardown(f, setup_plain, teardown_world)

int main(void)
{
    const struct CMUnitTest tests[] = {
        WORLD_TEST(test_a_commit_records_its_changeset),
        WORLD_TEST(test_a_file_without_client_id_records_nothing),
        WORLD_TEST(test_a_class_without_primary_key_cannot_sync),
        WORLD_TEST(test_objects_replicate_whole),
        cmocka_unit_test_setup_teardown(test_objects_replicate_whole, setup_encrypted, teardown_world),
        WORLD_TEST(test_embedded_objects_in_lists_and_maps),
        WORLD_TEST(test_concurrent_list_inserts_all_survive),
        WORLD_TEST(test_delete_beats_a_later_update),
        WORLD_TEST(test_create_with_the_same_primary_key_merges),
        WORLD_TEST(test_sets_and_maps_merge_per_element),
        WORLD_TEST(test_an_update_of_a_deleted_object_shows_in_its_new_life),
        WORLD_TEST(test_values_below_the_tombstone_are_gone_for_good),
        WORLD_TEST(test_a_late_delete_of_an_earlier_life_removes_its_values),
        WORLD_TEST(test_an_object_created_twice_outlives_a_delete_between),
        WORLD_TEST(test_a_commit_too_large_to_sync_is_refused),
        WORLD_TEST(test_links_to_deleted_objects_become_null),
        WORLD_TEST(test_a_failing_batch_applies_nothing),
        WORLD_TEST(test_a_process_killed_during_integration_leaves_nothing),
        WORLD_TEST(test_a_week_offline),
        WORLD_TEST(test_a_copy_is_a_new_client),
        WORLD_TEST(test_each_file_made_from_a_bundle_is_a_new_client),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
