/* test_sync_session.c — the sync session of coffer_open(): its thread,
 * transport calls, upload batches and acknowledgements, downloads pushed to
 * other clients, reconnection after an outage and after a cut connection
 * (nothing lost, nothing applied twice), a file restored from a backup
 * (a new client, nothing lost), pause and resume, waits that time
 * out instead of hanging, a session the peer refuses for good, and the
 * errors of misuse. The peer is a small relay in this file that speaks the
 * protocol through the core's own codec: it keeps a history and each
 * client's progress as docs/SYNC.md says a service does, so the session is
 * exercised end to end in one process; the real service is tested against
 * the same document on its own. */
#define _GNU_SOURCE
#include "sync_fixture.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../Sources/CCoffer/sync/frames.h"

/* ------------------------------------------------------------------------ */
/* The relay                                                                 */
/* ------------------------------------------------------------------------ */

typedef struct entry {
    uint64_t server_version;
    uint8_t origin[16];
    cf_buf cs;
} entry;

typedef struct peer_client {
    uint8_t id[16];
    uint64_t last_version;
    uint64_t last_acked; /* the last server version it acknowledged */
} peer_client;

typedef struct frame {
    cf_buf b;
    struct frame *next;
} frame;

typedef struct conn {
    struct relay *relay;
    uint8_t id[16];
    int helloed, cut;
    frame *head, *tail;
    uint8_t *last; /* the frame returned by the last receive */
    struct conn *next;
} conn;

typedef struct relay {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int down;             /* open fails */
    int refuse;           /* answer HELLO with a fatal SCHEMA_MISMATCH */
    int drop_next_ack;    /* integrate the next upload, then cut the connection without acknowledging */
    int hold_acks;        /* integrate uploads but acknowledge none (a slow service) */
    size_t held_bytes;    /* upload bytes received while acknowledgements were held */
    entry *history;
    size_t n, cap;
    peer_client clients[8];
    size_t nclients;
    conn *conns;
    size_t max_upload_frame;
    uint64_t uploads_seen, duplicate_uploads;
    uint64_t resets; /* HELLOs answered CLIENT_RESET */
} relay;

static void enqueue(conn *c, cf_buf b)
{
    frame *f = calloc(1, sizeof *f);
    f->b = b;
    if (c->tail)
        c->tail->next = f;
    else
        c->head = f;
    c->tail = f;
}

static peer_client *client_of(relay *r, const uint8_t id[16])
{
    for (size_t i = 0; i < r->nclients; i++)
        if (memcmp(r->clients[i].id, id, 16) == 0)
            return &r->clients[i];
    peer_client *p = &r->clients[r->nclients++];
    memcpy(p->id, id, 16);
    return p;
}

static uint64_t latest(relay *r) { return r->n ? r->history[r->n - 1].server_version : 0; }

/* Queues the history after `after` not made by `c`, then says caught up. */
static void send_history(relay *r, conn *c, uint64_t after)
{
    cf_buf body = {0};
    uint64_t count = 0;
    for (size_t i = 0; i < r->n; i++) {
        entry *e = &r->history[i];
        if (e->server_version <= after || memcmp(e->origin, c->id, 16) == 0)
            continue;
        cf_wire_varint(&body, e->server_version);
        cf_buf_put(&body, e->origin, 16);
        cf_buf_put(&body, e->cs.p, e->cs.len);
        count++;
    }
    cf_buf b = {0};
    cf_frame_download_encode(&b, latest(r), count, body.p, body.len);
    enqueue(c, b);
    free(body.p);
}

static coffer_status relay_open(void *ctx, const char *url, void **out)
{
    relay *r = ctx;
    if (strcmp(url, "ws://relay.test/sync/v1") != 0)
        return COFFER_ERR_INVALID_ARGUMENT;
    pthread_mutex_lock(&r->lock);
    int down = r->down;
    conn *c = NULL;
    if (!down) {
        c = calloc(1, sizeof *c);
        c->relay = r;
        c->next = r->conns;
        r->conns = c;
    }
    pthread_mutex_unlock(&r->lock);
    if (down)
        return COFFER_ERR_IO;
    *out = c;
    return COFFER_OK;
}

/* The relay runs on the sync thread, where the test's assertions (which
 * keep their message in a global) must not be used: a broken frame aborts. */
#define RELAY_MUST(expr)                                                                   \
    do {                                                                                   \
        if ((expr) != COFFER_OK) {                                                         \
            fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #expr, coffer_last_error()); \
            abort();                                                                       \
        }                                                                                  \
    } while (0)

static coffer_status relay_send(void *ctx, void *connection, const uint8_t *data, size_t size)
{
    relay *r = ctx;
    conn *c = connection;
    cf_frame f;
    coffer_status st = cf_frame_decode(data, size, &f);
    RELAY_MUST(st);
    pthread_mutex_lock(&r->lock);
    if (c->cut) {
        pthread_mutex_unlock(&r->lock);
        cf_frame_free(&f);
        return COFFER_ERR_IO;
    }
    cf_buf b = {0};
    switch (f.type) {
    case CF_FRAME_HELLO: {
        memcpy(c->id, f.u.hello.client, 16);
        c->helloed = 1;
        if (r->refuse) {
            cf_frame_error_encode(&b, CF_SYNC_ERR_SCHEMA_MISMATCH, "Person.age: int here, string there", 1);
            enqueue(c, b);
            break;
        }
        /* A client that has less than it acknowledged is a file restored from a backup. */
        if (f.u.hello.last_server_version < client_of(r, c->id)->last_acked) {
            r->resets++;
            cf_frame_error_encode(&b, CF_SYNC_ERR_CLIENT_RESET, "the client's progress is behind what it acknowledged", 1);
            enqueue(c, b);
            break;
        }
        cf_frame_welcome_encode(&b, client_of(r, c->id)->last_version, latest(r));
        enqueue(c, b);
        send_history(r, c, f.u.hello.last_server_version);
        break;
    }
    case CF_FRAME_UPLOAD: {
        RELAY_MUST(c->helloed ? COFFER_OK : COFFER_ERR_MISUSE);
        if (size > r->max_upload_frame)
            r->max_upload_frame = size;
        peer_client *pc = client_of(r, c->id);
        /* Each changeset again, as bytes: walk the frame after its header. */
        cf_wreader rd = cf_wreader_make(data, size, "UPLOAD");
        uint8_t type;
        uint64_t count;
        RELAY_MUST(cf_wire_get_u8(&rd, &type, "type"));
        RELAY_MUST(cf_wire_get_varint(&rd, &count, "count"));
        for (uint64_t i = 0; i < count; i++) {
            const uint8_t *start = rd.p;
            cf_sync_cs cs;
            RELAY_MUST(cf_sync_cs_read(&rd, &cs));
            r->uploads_seen++;
            if (cs.version <= pc->last_version) {
                r->duplicate_uploads++;
                cf_sync_cs_free(&cs);
                continue;
            }
            pc->last_version = cs.version;
            if (r->n == r->cap) {
                r->cap = r->cap ? r->cap * 2 : 64;
                r->history = realloc(r->history, r->cap * sizeof *r->history);
            }
            entry *e = &r->history[r->n++];
            memset(e, 0, sizeof *e);
            e->server_version = r->n;
            memcpy(e->origin, c->id, 16);
            cf_buf_put(&e->cs, start, (size_t)(rd.p - start));
            cf_sync_cs_free(&cs);
            /* Pushed to every other client. */
            for (conn *o = r->conns; o; o = o->next) {
                if (o == c || !o->helloed || o->cut)
                    continue;
                cf_buf push = {0}, body = {0};
                cf_wire_varint(&body, e->server_version);
                cf_buf_put(&body, e->origin, 16);
                cf_buf_put(&body, e->cs.p, e->cs.len);
                cf_frame_download_encode(&push, e->server_version, 1, body.p, body.len);
                free(body.p);
                enqueue(o, push);
            }
        }
        if (r->hold_acks) {
            r->held_bytes += size;
            break;
        }
        if (r->drop_next_ack) {
            r->drop_next_ack = 0;
            c->cut = 1;
            break;
        }
        cf_frame_upload_ack_encode(&b, pc->last_version, latest(r));
        enqueue(c, b);
        break;
    }
    case CF_FRAME_DOWNLOAD_ACK: {
        peer_client *pc = client_of(r, c->id);
        if (f.u.download_ack > pc->last_acked)
            pc->last_acked = f.u.download_ack;
        break;
    }
    default:
        fprintf(stderr, "the client sent a frame of type %u\n", f.type);
        abort();
    }
    pthread_cond_broadcast(&r->cond);
    pthread_mutex_unlock(&r->lock);
    cf_frame_free(&f);
    return COFFER_OK;
}

static coffer_status relay_receive(void *ctx, void *connection, int timeout_ms, const uint8_t **data, size_t *size)
{
    relay *r = ctx;
    conn *c = connection;
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_nsec += (long)timeout_ms * 1000000L;
    until.tv_sec += until.tv_nsec / 1000000000L;
    until.tv_nsec %= 1000000000L;
    pthread_mutex_lock(&r->lock);
    while (!c->head && !c->cut && pthread_cond_timedwait(&r->cond, &r->lock, &until) != ETIMEDOUT)
        ;
    coffer_status st = COFFER_ERR_TIMEOUT;
    if (c->cut) {
        st = COFFER_ERR_IO;
    } else if (c->head) {
        frame *f = c->head;
        c->head = f->next;
        if (!c->head)
            c->tail = NULL;
        free(c->last);
        c->last = f->b.p;
        *data = f->b.p;
        *size = f->b.len;
        free(f);
        st = COFFER_OK;
    }
    pthread_mutex_unlock(&r->lock);
    return st;
}

static void relay_close(void *ctx, void *connection)
{
    relay *r = ctx;
    conn *c = connection;
    pthread_mutex_lock(&r->lock);
    for (conn **p = &r->conns; *p; p = &(*p)->next)
        if (*p == c) {
            *p = c->next;
            break;
        }
    pthread_mutex_unlock(&r->lock);
    for (frame *f = c->head, *next; f; f = next) {
        next = f->next;
        free(f->b.p);
        free(f);
    }
    free(c->last);
    free(c);
}

static void relay_cut_all(relay *r)
{
    pthread_mutex_lock(&r->lock);
    for (conn *c = r->conns; c; c = c->next)
        c->cut = 1;
    pthread_cond_broadcast(&r->cond);
    pthread_mutex_unlock(&r->lock);
}

/* Stops holding acknowledgements and acknowledges what every client sent. */
static void relay_release_acks(relay *r)
{
    pthread_mutex_lock(&r->lock);
    r->hold_acks = 0;
    for (conn *c = r->conns; c; c = c->next) {
        if (!c->helloed || c->cut)
            continue;
        cf_buf b = {0};
        cf_frame_upload_ack_encode(&b, client_of(r, c->id)->last_version, latest(r));
        enqueue(c, b);
    }
    pthread_cond_broadcast(&r->cond);
    pthread_mutex_unlock(&r->lock);
}

static void relay_set(relay *r, int *field, int value)
{
    pthread_mutex_lock(&r->lock);
    *field = value;
    pthread_mutex_unlock(&r->lock);
}

/* ------------------------------------------------------------------------ */
/* Fixtures                                                                  */
/* ------------------------------------------------------------------------ */

static const coffer_property_schema note_props[] = {
    {.name = "id", .type = COFFER_TYPE_INT, .flags = COFFER_PROPERTY_PRIMARY_KEY},
    {.name = "text", .type = COFFER_TYPE_STRING},
    {.name = "blob", .type = COFFER_TYPE_BINARY},
};
static const coffer_class_schema schema[] = {{.name = "Note", .properties = note_props, .property_count = 3}};

typedef struct fixture {
    sync_fixture base; /* the folder and the transport */
    relay r;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    if (!f || sync_fixture_setup(&f->base) != 0)
        return -1;
    pthread_mutex_init(&f->r.lock, NULL);
    pthread_cond_init(&f->r.cond, NULL);
    f->base.transport = (coffer_sync_transport){&f->r, relay_open, relay_send, relay_receive, relay_close};
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    for (size_t i = 0; i < f->r.n; i++)
        free(f->r.history[i].cs.p);
    free(f->r.history);
    sync_fixture_teardown(&f->base);
    free(f);
    return 0;
}

static coffer_db *open_synced(fixture *f, const char *name)
{
    return sync_fixture_open(sync_fixture_config(&f->base, name, schema, 1, "ws://relay.test/sync/v1"));
}

static void put_note(coffer_db *db, int64_t id, const char *text)
{
    coffer_txn *txn = ts_begin(db, COFFER_TXN_WRITE);
    coffer_field fields[] = {ts_field(0, coffer_value_int(id)), ts_field(1, ts_str(text))};
    assert_ok(coffer_object_create(txn, ts_class(db, "Note"), fields, 2, COFFER_UPDATE_MODIFIED, NULL));
    ts_commit(txn);
}

static const char *text_of(coffer_db *db, int64_t id, char *buf, size_t cap)
{
    coffer_txn *txn = ts_begin(db, COFFER_TXN_READ);
    coffer_value pk = coffer_value_int(id), v;
    coffer_object *o;
    if (coffer_object_find(txn, ts_class(db, "Note"), &pk, &o) != COFFER_OK)
        snprintf(buf, cap, "(none)");
    else {
        assert_ok(coffer_object_get_value(o, 1, &v));
        snprintf(buf, cap, "%.*s", (int)v.u.string.size, (const char *)v.u.string.data);
    }
    coffer_txn_free(txn);
    return buf;
}

#define WAIT_MS SYNC_WAIT_MS

/* ------------------------------------------------------------------------ */
/* Tests                                                                     */
/* ------------------------------------------------------------------------ */

/* A transport whose connections never open (the service is down). */
static coffer_status relay_fail_open(void *ctx, const char *url, void **out)
{
    (void)ctx;
    (void)url;
    *out = NULL;
    return coffer_sync_transport_fail(COFFER_ERR_IO, "connection refused");
}

static void test_two_clients_sync_through_the_session(void **state)
{
    fixture *f = *state;
    coffer_db *a = open_synced(f, "a.coffer"), *b = open_synced(f, "b.coffer");
    put_note(a, 1, "from A");
    put_note(b, 2, "from B");
    assert_ok(coffer_sync_wait_for_upload(a, WAIT_MS));
    assert_ok(coffer_sync_wait_for_upload(b, WAIT_MS));
    assert_ok(coffer_sync_wait_for_download(a, WAIT_MS));
    assert_ok(coffer_sync_wait_for_download(b, WAIT_MS));
    char buf[64];
    assert_string_equal(text_of(b, 1, buf, sizeof buf), "from A");
    assert_string_equal(text_of(a, 2, buf, sizeof buf), "from B");
    assert_int_equal(coffer_sync_state(a), COFFER_SYNC_CONNECTED);
    assert_ok(coffer_sync_error(a, buf, sizeof buf));
    assert_string_equal(buf, "");
    /* Uploaded changesets leave the outbox; nothing is uploaded twice. */
    assert_int_equal(f->r.duplicate_uploads, 0);
    coffer_close(a);
    coffer_close(b);
}

static void test_offline_for_a_week_then_catching_up(void **state)
{
    fixture *f = *state;
    sync_use_fake_clock();
    relay_set(&f->r, &f->r.down, 1);
    coffer_db *a = open_synced(f, "a.coffer");
    /* A thousand commits over a week, a few of them large. */
    static uint8_t big[300000];
    coffer_class_id note = ts_class(a, "Note");
    for (int i = 0; i < 1000; i++) {
        sync_fake_now += 600000;
        coffer_txn *txn = ts_begin(a, COFFER_TXN_WRITE);
        char text[32];
        snprintf(text, sizeof text, "note %d", i);
        big[0] = (uint8_t)i;
        coffer_field fields[] = {ts_field(0, coffer_value_int(i % 100)), ts_field(1, ts_str(text)),
                                 ts_field(2, coffer_value_binary(big, i % 100 == 7 ? sizeof big : 10))};
        assert_ok(coffer_object_create(txn, note, fields, 3, COFFER_UPDATE_MODIFIED, NULL));
        ts_commit(txn);
    }
    assert_int_not_equal(coffer_sync_state(a), COFFER_SYNC_CONNECTED);
    assert_status(coffer_sync_wait_for_upload(a, 50), COFFER_ERR_TIMEOUT);
    assert_error_contains("did not finish");
    /* The network returns. */
    relay_set(&f->r, &f->r.down, 0);
    assert_ok(coffer_sync_wait_for_upload(a, 60000));
    /* Frames of at most 1 MiB (plus the frame's own header). */
    assert_true(f->r.max_upload_frame > 300000);
    assert_true(f->r.max_upload_frame <= (1u << 20) + 16);
    coffer_db *b = open_synced(f, "b.coffer");
    assert_ok(coffer_sync_wait_for_download(b, 60000));
    char buf[64];
    assert_string_equal(text_of(b, 99, buf, sizeof buf), "note 999");
    assert_int_equal(ts_count_of(b, "Note"), 100);
    coffer_close(a);
    coffer_close(b);
    coffer_sync_set_clock_source(NULL, NULL);
}

static void test_a_lost_acknowledgement_uploads_nothing_twice(void **state)
{
    fixture *f = *state;
    coffer_db *a = open_synced(f, "a.coffer"), *b = open_synced(f, "b.coffer");
    assert_ok(coffer_sync_wait_for_download(a, WAIT_MS));
    relay_set(&f->r, &f->r.drop_next_ack, 1);
    put_note(a, 1, "once");
    /* The relay integrated it and cut the connection before acknowledging:
     * the session reconnects, WELCOME says what was integrated, and the
     * changeset is not sent again. */
    assert_ok(coffer_sync_wait_for_upload(a, WAIT_MS));
    put_note(a, 2, "twice");
    assert_ok(coffer_sync_wait_for_upload(a, WAIT_MS));
    assert_int_equal(f->r.n, 2);
    assert_int_equal(f->r.duplicate_uploads, 0);
    assert_ok(coffer_sync_wait_for_download(b, WAIT_MS));
    char buf[64];
    assert_string_equal(text_of(b, 2, buf, sizeof buf), "twice");
    /* Connections cut under both clients: they come back. */
    relay_cut_all(&f->r);
    put_note(b, 3, "after the cut");
    assert_ok(coffer_sync_wait_for_upload(b, WAIT_MS));
    assert_ok(coffer_sync_wait_for_download(a, WAIT_MS));
    assert_string_equal(text_of(a, 3, buf, sizeof buf), "after the cut");
    coffer_close(a);
    coffer_close(b);
}

/* Closes `db` and copies its file to `backup`, as a backup would. */
static void back_up(fixture *f, coffer_db *db, const char *name, const char *backup)
{
    char from[TS_PATH_MAX], to[TS_PATH_MAX];
    coffer_close(db);
    assert_int_equal(ts_copy_file(ts_join(from, f->base.dir, name), ts_join(to, f->base.dir, backup)), 0);
}

/* The restored file made commits offline; C, a new client, must see them
 * and everything the original uploaded after the backup. */
static void assert_everything_reached(fixture *f, coffer_db *restored, int64_t last)
{
    assert_ok(coffer_sync_wait_for_upload(restored, WAIT_MS));
    assert_ok(coffer_sync_wait_for_download(restored, WAIT_MS));
    coffer_db *c = open_synced(f, "c.coffer");
    assert_ok(coffer_sync_wait_for_download(c, WAIT_MS));
    char buf[64], want[32];
    for (int64_t id = 1; id <= last; id++) {
        assert_string_not_equal(text_of(c, id, buf, sizeof buf), "(none)");
        assert_string_equal(text_of(c, id, buf, sizeof buf), text_of(restored, id, want, sizeof want));
    }
    coffer_close(c);
}

/* The service has versions of the client the restored file never made: at
 * WELCOME the file becomes a new client and uploads its outbox again. */
static void test_a_file_restored_from_a_backup_becomes_a_new_client(void **state)
{
    fixture *f = *state;
    coffer_db *a = open_synced(f, "a.coffer");
    put_note(a, 1, "before the backup");
    assert_ok(coffer_sync_wait_for_upload(a, WAIT_MS));
    back_up(f, a, "a.coffer", "backup.coffer");
    a = open_synced(f, "a.coffer");
    put_note(a, 2, "after the backup");
    put_note(a, 3, "after the backup too");
    assert_ok(coffer_sync_wait_for_upload(a, WAIT_MS));
    coffer_close(a);
    /* Restored, written offline, then connected. */
    relay_set(&f->r, &f->r.down, 1);
    coffer_db *restored = open_synced(f, "backup.coffer");
    put_note(restored, 4, "only in the restored file");
    relay_set(&f->r, &f->r.down, 0);
    assert_everything_reached(f, restored, 4);
    char buf[64];
    assert_string_equal(text_of(restored, 3, buf, sizeof buf), "after the backup too");
    assert_int_equal(f->r.nclients, 3); /* A, the restored file under its new id, C */
    assert_int_equal(coffer_sync_state(restored), COFFER_SYNC_CONNECTED);
    coffer_close(restored);
}

/* The restored file committed past the versions the original uploaded
 * after the backup, so WELCOME cannot tell; its HELLO says it has less than
 * it acknowledged, and the service answers CLIENT_RESET: it becomes a new
 * client, and its commit of the same version as one of the original's is
 * not dropped as a repeat. */
static void test_a_client_reset_from_the_service_keeps_every_commit(void **state)
{
    fixture *f = *state;
    coffer_db *a = open_synced(f, "a.coffer");
    put_note(a, 1, "before the backup");
    assert_ok(coffer_sync_wait_for_upload(a, WAIT_MS));
    back_up(f, a, "a.coffer", "backup.coffer");
    coffer_db *b = open_synced(f, "b.coffer");
    put_note(b, 9, "from B");
    assert_ok(coffer_sync_wait_for_upload(b, WAIT_MS));
    coffer_close(b);
    a = open_synced(f, "a.coffer");
    put_note(a, 2, "after the backup");
    assert_ok(coffer_sync_wait_for_upload(a, WAIT_MS));
    assert_ok(coffer_sync_wait_for_download(a, WAIT_MS)); /* B's note, acknowledged */
    coffer_close(a);
    relay_set(&f->r, &f->r.down, 1);
    coffer_db *restored = open_synced(f, "backup.coffer");
    for (int64_t id = 3; id <= 6; id++)
        put_note(restored, id, "only in the restored file");
    relay_set(&f->r, &f->r.down, 0);
    assert_everything_reached(f, restored, 6);
    char buf[64];
    assert_string_equal(text_of(restored, 9, buf, sizeof buf), "from B");
    assert_int_equal(f->r.resets, 1);
    assert_int_equal(f->r.duplicate_uploads, 0);
    coffer_close(restored);
}

/* Counts the reset callback's calls (on the sync thread): [0] before, [1] after. */
static void count_resets(void *ctx, coffer_db *db, int after)
{
    assert_non_null(db);
    atomic_fetch_add(&((atomic_int *)ctx)[after ? 1 : 0], 1);
}

/* A restored backup (notes 1 and, offline, 3-6) of a file whose original
 * then synced 2, and B's 9: the service answers CLIENT_RESET. */
static coffer_db *restored_with_reset_mode(fixture *f, coffer_client_reset_mode mode, atomic_int *calls)
{
    coffer_db *a = open_synced(f, "a.coffer");
    put_note(a, 1, "before the backup");
    assert_ok(coffer_sync_wait_for_upload(a, WAIT_MS));
    back_up(f, a, "a.coffer", "backup.coffer");
    coffer_db *b = open_synced(f, "b.coffer");
    put_note(b, 9, "from B");
    assert_ok(coffer_sync_wait_for_upload(b, WAIT_MS));
    coffer_close(b);
    a = open_synced(f, "a.coffer");
    put_note(a, 2, "after the backup");
    assert_ok(coffer_sync_wait_for_upload(a, WAIT_MS));
    assert_ok(coffer_sync_wait_for_download(a, WAIT_MS));
    coffer_close(a);
    relay_set(&f->r, &f->r.down, 1);
    coffer_config *config = sync_fixture_config(&f->base, "backup.coffer", schema, 1, "ws://relay.test/sync/v1");
    assert_ok(coffer_config_set_sync_client_reset(config, mode, count_resets, calls));
    coffer_db *restored = sync_fixture_open(config);
    for (int64_t id = 3; id <= 6; id++)
        put_note(restored, id, "only in the restored file");
    relay_set(&f->r, &f->r.down, 0);
    return restored;
}

static uint64_t note_count(coffer_db *db)
{
    coffer_txn *txn = ts_begin(db, COFFER_TXN_READ);
    uint64_t n;
    assert_ok(coffer_class_count(txn, ts_class(db, "Note"), &n));
    coffer_txn_free(txn);
    return n;
}

/* Discard: the file ends with exactly the service's notes (1, 2 and 9), its
 * offline notes gone from it and never uploaded; told before and after. */
static void test_a_client_reset_that_discards_unsynced_changes(void **state)
{
    fixture *f = *state;
    atomic_int calls[2] = {0, 0};
    coffer_db *restored = restored_with_reset_mode(f, COFFER_CLIENT_RESET_DISCARD_UNSYNCED, calls);
    for (int i = 0; i < 400 && atomic_load(&calls[1]) == 0; i++)
        nanosleep(&(struct timespec){0, 25000000}, NULL);
    assert_int_equal(atomic_load(&calls[0]), 1);
    assert_int_equal(atomic_load(&calls[1]), 1);
    assert_ok(coffer_sync_wait_for_download(restored, WAIT_MS));
    assert_int_equal(note_count(restored), 3);
    char buf[64];
    assert_string_equal(text_of(restored, 2, buf, sizeof buf), "after the backup");
    assert_string_equal(text_of(restored, 9, buf, sizeof buf), "from B");
    assert_string_equal(text_of(restored, 3, buf, sizeof buf), "(none)");
    /* It syncs on as a new client. */
    put_note(restored, 7, "after the reset");
    assert_ok(coffer_sync_wait_for_upload(restored, WAIT_MS));
    coffer_db *c = open_synced(f, "c.coffer");
    assert_ok(coffer_sync_wait_for_download(c, WAIT_MS));
    assert_int_equal(note_count(c), 4);
    assert_string_equal(text_of(c, 3, buf, sizeof buf), "(none)");
    coffer_close(c);
    coffer_close(restored);
}

/* Manual: nothing changes; the session fails naming the reset. */
static void test_a_manual_client_reset_changes_nothing(void **state)
{
    fixture *f = *state;
    atomic_int calls[2] = {0, 0};
    coffer_db *restored = restored_with_reset_mode(f, COFFER_CLIENT_RESET_MANUAL, calls);
    for (int i = 0; i < 400 && coffer_sync_state(restored) != COFFER_SYNC_FAILED; i++)
        nanosleep(&(struct timespec){0, 25000000}, NULL);
    assert_int_equal(coffer_sync_state(restored), COFFER_SYNC_FAILED);
    char why[512];
    assert_ok(coffer_sync_error(restored, why, sizeof why));
    assert_non_null(strstr(why, "CLIENT_RESET"));
    assert_int_equal(atomic_load(&calls[0]) + atomic_load(&calls[1]), 0);
    assert_int_equal(note_count(restored), 5); /* 1 and 3-6, as before */
    coffer_close(restored);
}

static void test_client_reset_modes_are_checked(void **state)
{
    (void)state;
    coffer_config *config;
    assert_ok(coffer_config_new(&config));
    assert_int_equal(coffer_config_set_sync_client_reset(config, (coffer_client_reset_mode)7, NULL, NULL),
                     COFFER_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(coffer_last_error(), "unknown mode 7"));
    assert_int_equal(coffer_config_set_sync_client_reset(NULL, COFFER_CLIENT_RESET_MANUAL, NULL, NULL),
                     COFFER_ERR_INVALID_ARGUMENT);
    assert_ok(coffer_config_set_sync_client_reset(config, COFFER_CLIENT_RESET_DISCARD_UNSYNCED, NULL, NULL));
    coffer_config_free(config);
}

static void test_pause_and_resume(void **state)
{
    fixture *f = *state;
    coffer_db *a = open_synced(f, "a.coffer");
    assert_ok(coffer_sync_wait_for_download(a, WAIT_MS));
    assert_ok(coffer_sync_pause(a));
    put_note(a, 1, "written while paused");
    assert_status(coffer_sync_wait_for_upload(a, 100), COFFER_ERR_TIMEOUT);
    assert_int_equal(coffer_sync_state(a), COFFER_SYNC_PAUSED);
    assert_int_equal(f->r.n, 0);
    assert_ok(coffer_sync_resume(a));
    assert_ok(coffer_sync_wait_for_upload(a, WAIT_MS));
    assert_int_equal(f->r.n, 1);
    coffer_close(a);
}

static void test_a_refused_session_fails_the_waits(void **state)
{
    fixture *f = *state;
    relay_set(&f->r, &f->r.refuse, 1);
    coffer_db *a = open_synced(f, "a.coffer");
    put_note(a, 1, "x");
    assert_status(coffer_sync_wait_for_upload(a, WAIT_MS), COFFER_ERR_MISUSE);
    assert_error_contains("SCHEMA_MISMATCH");
    assert_int_equal(coffer_sync_state(a), COFFER_SYNC_FAILED);
    char buf[256];
    assert_ok(coffer_sync_error(a, buf, sizeof buf));
    assert_non_null(strstr(buf, "Person.age"));
    /* Resumed after the service was fixed. */
    relay_set(&f->r, &f->r.refuse, 0);
    assert_ok(coffer_sync_resume(a));
    assert_ok(coffer_sync_wait_for_upload(a, WAIT_MS));
    coffer_close(a);
}

static void test_misuse_and_bad_configuration(void **state)
{
    fixture *f = *state;
    coffer_config *cfg = ts_config_new();
    assert_status(coffer_config_set_sync(cfg, "http://x", "p"), COFFER_ERR_INVALID_ARGUMENT);
    assert_error_contains("neither ws:// nor wss://");
    assert_status(coffer_config_set_sync(cfg, "ws://x", ""), COFFER_ERR_INVALID_ARGUMENT);
    assert_error_contains("partition");
    coffer_sync_transport half = {.open = relay_open};
    assert_status(coffer_config_set_sync_transport(cfg, &half), COFFER_ERR_INVALID_ARGUMENT);
    assert_ok(coffer_config_set_sync(cfg, NULL, NULL));
    coffer_config_free(cfg);
    assert_status(coffer_config_set_sync(NULL, "ws://x", "p"), COFFER_ERR_INVALID_ARGUMENT);

    char path[TS_PATH_MAX];
    coffer_db *plain;
    assert_ok(ts_open_path(ts_join(path, f->base.dir, "plain.coffer"), NULL, 0, schema, 1, 1, &plain));
    assert_int_equal(coffer_sync_state(plain), COFFER_SYNC_OFF);
    assert_status(coffer_sync_wait_for_upload(plain, 10), COFFER_ERR_MISUSE);
    assert_error_contains("does not sync");
    assert_status(coffer_sync_pause(plain), COFFER_ERR_MISUSE);
    char buf[8];
    assert_status(coffer_sync_error(plain, buf, sizeof buf), COFFER_ERR_MISUSE);
    coffer_close(plain);

    /* A keyless class cannot sync: coffer_open says which. */
    static const coffer_property_schema loose_props[] = {{.name = "x", .type = COFFER_TYPE_INT}};
    static const coffer_class_schema loose[] = {{.name = "Loose", .properties = loose_props, .property_count = 1}};
    cfg = ts_config_at(ts_join(path, f->base.dir, "loose.coffer"));
    assert_ok(coffer_config_set_schema(cfg, loose, 1, 1));
    assert_ok(coffer_config_set_sync(cfg, "ws://relay.test/sync/v1", "p"));
    assert_ok(coffer_config_set_sync_transport(cfg, &f->base.transport));
    coffer_db *db = NULL;
    assert_status(coffer_open(cfg, &db), COFFER_ERR_SCHEMA);
    assert_error_contains("'Loose'");
    assert_null(db);
    coffer_config_free(cfg);

    /* The built-in transport speaks ws:// only: opening a wss:// session
     * without a transport of its own says so, naming the URL. */
    cfg = ts_config_at(ts_join(path, f->base.dir, "tls.coffer"));
    assert_ok(coffer_config_set_schema(cfg, schema, 1, 1));
    assert_ok(coffer_config_set_sync(cfg, "wss://127.0.0.1:1/sync/v1", "p"));
    db = NULL;
    assert_status(coffer_open(cfg, &db), COFFER_ERR_INVALID_ARGUMENT);
    assert_error_contains("wss://127.0.0.1:1/sync/v1");
    assert_error_contains("no TLS");
    assert_null(db);
    coffer_config_free(cfg);
}

static void test_unacknowledged_uploads_stay_within_the_window(void **state)
{
    fixture *f = *state;
    coffer_db *a = open_synced(f, "a.coffer");
    assert_ok(coffer_sync_wait_for_download(a, WAIT_MS));
    relay_set(&f->r, &f->r.hold_acks, 1);
    /* 10 MB of commits while the service acknowledges nothing. */
    static uint8_t big[500000];
    coffer_class_id note = ts_class(a, "Note");
    for (int i = 0; i < 20; i++) {
        coffer_txn *txn = ts_begin(a, COFFER_TXN_WRITE);
        coffer_field fields[] = {ts_field(0, coffer_value_int(i)), ts_field(2, coffer_value_binary(big, sizeof big))};
        assert_ok(coffer_object_create(txn, note, fields, 2, COFFER_UPDATE_ERROR, NULL));
        ts_commit(txn);
    }
    assert_status(coffer_sync_wait_for_upload(a, 500), COFFER_ERR_TIMEOUT);
    pthread_mutex_lock(&f->r.lock);
    size_t held = f->r.held_bytes;
    pthread_mutex_unlock(&f->r.lock);
    /* At most 4 MiB of changesets (and their frames' headers) await acknowledgement. */
    assert_true(held <= (4u << 20) + 64);
    relay_release_acks(&f->r);
    assert_ok(coffer_sync_wait_for_upload(a, 60000));
    assert_int_equal(f->r.n, 20);
    coffer_close(a);
}

/* ------------------------------------------------------------------------ */
/* State changes (coffer_config_set_sync_state_callback)                     */
/* ------------------------------------------------------------------------ */

/* What a state callback saw: every change, the thread it ran on, and
 * whether two calls ever overlapped. */
typedef struct state_log {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int from[256], to[256];
    pthread_t thread[256];
    size_t n;
    int inside, overlapped;
    coffer_db *db;      /* set after coffer_open: the callback may use it */
    int pause_when_connected;
} state_log;

static void log_state(void *ctx, int from, int to)
{
    state_log *l = ctx;
    pthread_mutex_lock(&l->lock);
    if (l->inside++)
        l->overlapped = 1;
    if (l->n < 256) {
        l->from[l->n] = from;
        l->to[l->n] = to;
        l->thread[l->n] = pthread_self();
        l->n++;
    }
    coffer_db *db = l->pause_when_connected && to == COFFER_SYNC_CONNECTED ? l->db : NULL;
    pthread_cond_broadcast(&l->cond);
    pthread_mutex_unlock(&l->lock);
    /* From inside the callback: the change it makes is told after this call. */
    if (db)
        coffer_sync_pause(db);
    pthread_mutex_lock(&l->lock);
    l->inside--;
    pthread_mutex_unlock(&l->lock);
}

static void state_log_init(state_log *l)
{
    memset(l, 0, sizeof *l);
    pthread_mutex_init(&l->lock, NULL);
    pthread_cond_init(&l->cond, NULL);
}

static void state_log_destroy(state_log *l)
{
    pthread_mutex_destroy(&l->lock);
    pthread_cond_destroy(&l->cond);
}

/* Waits until the callback has told a change to `to` after the first
 * `after` changes; returns the index of that change, or -1 after WAIT_MS. */
static int state_log_wait(state_log *l, size_t after, int to)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += WAIT_MS / 1000;
    pthread_mutex_lock(&l->lock);
    int found = -1;
    for (;;) {
        for (size_t i = after; i < l->n && found < 0; i++)
            if (l->to[i] == to)
                found = (int)i;
        if (found >= 0 || pthread_cond_timedwait(&l->cond, &l->lock, &until) == ETIMEDOUT)
            break;
    }
    pthread_mutex_unlock(&l->lock);
    return found;
}

static size_t state_log_count(state_log *l)
{
    pthread_mutex_lock(&l->lock);
    size_t n = l->n;
    pthread_mutex_unlock(&l->lock);
    return n;
}

/* Every change starts where the one before ended, and changes something. */
static void assert_state_chain(state_log *l, int first)
{
    pthread_mutex_lock(&l->lock);
    int at = first;
    for (size_t i = 0; i < l->n; i++) {
        if (l->from[i] != at || l->from[i] == l->to[i])
            fail_msg("state change %zu is %d -> %d after one ending at %d", i, l->from[i], l->to[i], at);
        at = l->to[i];
    }
    assert_false(l->overlapped);
    pthread_mutex_unlock(&l->lock);
}

static coffer_db *open_observed(fixture *f, const char *name, state_log *l)
{
    coffer_config *cfg = sync_fixture_config(&f->base, name, schema, 1, "ws://relay.test/sync/v1");
    assert_ok(coffer_config_set_sync_state_callback(cfg, log_state, l));
    coffer_db *db = sync_fixture_open(cfg);
    pthread_mutex_lock(&l->lock);
    l->db = db;
    pthread_mutex_unlock(&l->lock);
    return db;
}

static void test_the_state_callback_tells_every_change(void **state)
{
    fixture *f = *state;
    state_log l;
    state_log_init(&l);
    coffer_db *a = open_observed(f, "a.coffer", &l);
    assert_true(state_log_wait(&l, 0, COFFER_SYNC_CONNECTED) >= 0);
    assert_int_equal(coffer_sync_state(a), COFFER_SYNC_CONNECTED);
    assert_int_equal(l.from[0], COFFER_SYNC_CONNECTING);
    assert_false(pthread_equal(l.thread[0], pthread_self()));

    /* Paused as soon as pause returns, told on this thread before it returns. */
    size_t before = state_log_count(&l);
    assert_ok(coffer_sync_pause(a));
    assert_int_equal(coffer_sync_state(a), COFFER_SYNC_PAUSED);
    assert_int_equal(state_log_count(&l), before + 1);
    assert_int_equal(l.to[before], COFFER_SYNC_PAUSED);
    /* A second pause changes nothing, and the closed connection neither. */
    assert_ok(coffer_sync_pause(a));
    put_note(a, 1, "written while paused");
    assert_status(coffer_sync_wait_for_upload(a, 200), COFFER_ERR_TIMEOUT);
    assert_int_equal(coffer_sync_state(a), COFFER_SYNC_PAUSED);
    assert_int_equal(state_log_count(&l), before + 1);

    /* Resumed: connecting, then connected, on the sync thread. */
    assert_ok(coffer_sync_resume(a));
    int connecting = state_log_wait(&l, before + 1, COFFER_SYNC_CONNECTING);
    assert_int_equal(connecting, (int)before + 1);
    assert_int_equal(state_log_wait(&l, before + 2, COFFER_SYNC_CONNECTED), (int)before + 2);
    assert_ok(coffer_sync_wait_for_upload(a, WAIT_MS));

    /* The service goes away: disconnected (and connecting again, and
     * disconnected, while it stays away), then connected when it is back. */
    before = state_log_count(&l);
    relay_set(&f->r, &f->r.down, 1);
    relay_cut_all(&f->r);
    int down = state_log_wait(&l, before, COFFER_SYNC_DISCONNECTED);
    assert_true(down >= 0);
    assert_true(state_log_wait(&l, (size_t)down + 1, COFFER_SYNC_CONNECTING) >= 0);
    relay_set(&f->r, &f->r.down, 0);
    assert_true(state_log_wait(&l, (size_t)down + 1, COFFER_SYNC_CONNECTED) >= 0);
    assert_ok(coffer_sync_wait_for_download(a, WAIT_MS));

    /* Closing tells the last change, to OFF, on the closing thread. */
    coffer_close(a);
    size_t n = state_log_count(&l);
    assert_int_equal(l.to[n - 1], COFFER_SYNC_OFF);
    assert_true(pthread_equal(l.thread[n - 1], pthread_self()));
    assert_state_chain(&l, COFFER_SYNC_CONNECTING);
    state_log_destroy(&l);
}

static void test_a_pause_undone_at_once_still_reconnects(void **state)
{
    fixture *f = *state;
    state_log l;
    state_log_init(&l);
    coffer_db *a = open_observed(f, "a.coffer", &l);
    /* Before the session connected: paused at once all the same. */
    assert_ok(coffer_sync_pause(a));
    assert_int_equal(coffer_sync_state(a), COFFER_SYNC_PAUSED);
    put_note(a, 1, "x");
    assert_ok(coffer_sync_resume(a));
    assert_ok(coffer_sync_wait_for_upload(a, WAIT_MS));
    assert_true(state_log_wait(&l, 0, COFFER_SYNC_CONNECTED) >= 0);
    /* Connected, then paused and resumed back to back: the connection is
     * closed and made again, and every change told. */
    size_t before = state_log_count(&l);
    assert_ok(coffer_sync_pause(a));
    assert_ok(coffer_sync_resume(a));
    int paused = state_log_wait(&l, before, COFFER_SYNC_PAUSED);
    assert_int_equal(paused, (int)before);
    assert_true(state_log_wait(&l, before + 1, COFFER_SYNC_CONNECTED) >= 0);
    put_note(a, 2, "y");
    assert_ok(coffer_sync_wait_for_upload(a, WAIT_MS));
    assert_int_equal(f->r.n, 2);
    coffer_close(a);
    assert_state_chain(&l, COFFER_SYNC_CONNECTING);
    state_log_destroy(&l);
}

static void test_a_refusal_and_a_pause_from_the_callback(void **state)
{
    fixture *f = *state;
    state_log l;
    state_log_init(&l);
    relay_set(&f->r, &f->r.refuse, 1);
    coffer_db *a = open_observed(f, "a.coffer", &l);
    assert_true(state_log_wait(&l, 0, COFFER_SYNC_FAILED) >= 0);
    assert_int_equal(coffer_sync_state(a), COFFER_SYNC_FAILED);
    /* Resumed: disconnected when resume returns, then connecting; the
     * callback pauses the session as soon as it is connected. */
    pthread_mutex_lock(&l.lock);
    l.pause_when_connected = 1;
    pthread_mutex_unlock(&l.lock);
    relay_set(&f->r, &f->r.refuse, 0);
    size_t before = state_log_count(&l);
    assert_ok(coffer_sync_resume(a));
    /* (The sync thread may have moved on already, told by this thread too.) */
    assert_true(state_log_count(&l) >= before + 1);
    assert_int_equal(l.from[before], COFFER_SYNC_FAILED);
    assert_int_equal(l.to[before], COFFER_SYNC_DISCONNECTED);
    int connected = state_log_wait(&l, before, COFFER_SYNC_CONNECTED);
    assert_true(connected >= 0);
    assert_int_equal(state_log_wait(&l, (size_t)connected, COFFER_SYNC_PAUSED), connected + 1);
    assert_int_equal(coffer_sync_state(a), COFFER_SYNC_PAUSED);
    coffer_close(a);
    assert_state_chain(&l, COFFER_SYNC_CONNECTING);
    pthread_mutex_lock(&l.lock);
    assert_int_equal(l.to[l.n - 1], COFFER_SYNC_OFF);
    pthread_mutex_unlock(&l.lock);
    state_log_destroy(&l);

    assert_status(coffer_config_set_sync_state_callback(NULL, log_state, NULL), COFFER_ERR_INVALID_ARGUMENT);
    assert_error_contains("config is NULL");
}

static coffer_status failing_open(void *ctx, const char *url, void **out)
{
    (void)ctx;
    (void)out;
    if (strncmp(url, "wss://", 6) == 0)
        return coffer_sync_transport_fail(COFFER_ERR_IO, "TLS handshake: certificate verify failed (unknown CA)");
    return COFFER_ERR_IO; /* no message: the session says which URL failed */
}

static void test_a_transport_says_why_it_failed(void **state)
{
    fixture *f = *state;
    coffer_sync_transport t = f->base.transport;
    t.open = failing_open;
    const char *urls[] = {"wss://tls.test/sync/v1", "ws://plain.test/sync/v1"};
    const char *want[] = {"certificate verify failed (unknown CA)", "could not connect to ws://plain.test/sync/v1"};
    for (int i = 0; i < 2; i++) {
        char name[32];
        snprintf(name, sizeof name, "t%d.coffer", i);
        coffer_config *cfg = sync_fixture_config(&f->base, name, schema, 1, urls[i]);
        assert_ok(coffer_config_set_sync_transport(cfg, &t));
        coffer_db *db = sync_fixture_open(cfg);
        assert_status(coffer_sync_wait_for_download(db, 300), COFFER_ERR_TIMEOUT);
        char msg[256];
        assert_ok(coffer_sync_error(db, msg, sizeof msg));
        if (!strstr(msg, want[i]))
            fail_msg("the session's error is '%s', not naming '%s'", msg, want[i]);
        coffer_close(db);
    }
    assert_status(coffer_sync_transport_fail(COFFER_ERR_TIMEOUT, NULL), COFFER_ERR_TIMEOUT);
    assert_string_equal(coffer_last_error(), "");
}

/* Connection attempts, counted for a transport that refuses them all. */
typedef struct {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int attempts;
} attempt_log;

static coffer_status counting_refusal(void *ctx, const char *url, void **out)
{
    (void)url;
    (void)out;
    attempt_log *log = ctx;
    pthread_mutex_lock(&log->lock);
    log->attempts++;
    pthread_cond_broadcast(&log->cond);
    pthread_mutex_unlock(&log->lock);
    return coffer_sync_transport_fail(COFFER_ERR_IO, "connection refused (test)");
}

/* Waits up to `ms` for `n` attempts; returns the count reached. */
static int attempts_wait(attempt_log *log, int n, int ms)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += ms / 1000;
    until.tv_nsec += (long)(ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&log->lock);
    while (log->attempts < n && pthread_cond_timedwait(&log->cond, &log->lock, &until) != ETIMEDOUT)
        ;
    int got = log->attempts;
    pthread_mutex_unlock(&log->lock);
    return got;
}

static void test_a_resume_starts_the_backoff_over(void **state)
{
    fixture *f = *state;
    attempt_log log = {.attempts = 0};
    pthread_mutex_init(&log.lock, NULL);
    pthread_cond_init(&log.cond, NULL);
    coffer_sync_transport t = f->base.transport;
    t.ctx = &log;
    t.open = counting_refusal;
    coffer_config *cfg = sync_fixture_config(&f->base, "backoff.coffer", schema, 1, "ws://refusing.test/sync/v1");
    assert_ok(coffer_config_set_sync_transport(cfg, &t));
    coffer_db *db = sync_fixture_open(cfg);
    /* Six refusals 0.1, 0.2, ... 1.6 s apart: the session now waits 3.2 s,
     * then 6.4 s. */
    assert_int_equal(attempts_wait(&log, 6, 30000), 6);
    assert_ok(coffer_sync_pause(db));
    assert_ok(coffer_sync_resume(db));
    /* Resumed: one attempt at once and the next after the first backoff,
     * not after the 6.4 s the refusals had grown it to. */
    assert_true(attempts_wait(&log, 7, 30000) >= 7);
    int reached = attempts_wait(&log, 8, 5000);
    if (reached < 8)
        fail_msg("no second attempt within 5 s of a resume: the backoff was not started over (%d attempts)", reached);
    coffer_close(db);
    pthread_cond_destroy(&log.cond);
    pthread_mutex_destroy(&log.lock);
}

/* What a progress callback was told of the upload: each call's counts. */
typedef struct progress_log {
    pthread_mutex_t lock;
    uint64_t last_done, calls, backwards;
} progress_log;

static void log_progress(void *ctx, int direction, uint64_t transferred, uint64_t transferable)
{
    progress_log *l = ctx;
    pthread_mutex_lock(&l->lock);
    if (direction == COFFER_SYNC_UPLOAD) {
        if (transferred < l->last_done || transferable < transferred)
            l->backwards++;
        l->last_done = transferred;
        l->calls++;
    }
    pthread_mutex_unlock(&l->lock);
}

static void test_progress_counts_bytes_and_open_downloads_first(void **state)
{
    fixture *f = *state;
    progress_log log = {.lock = PTHREAD_MUTEX_INITIALIZER};
    coffer_config *cfg = sync_fixture_config(&f->base, "a.coffer", schema, 1, "ws://relay.test/sync/v1");
    assert_ok(coffer_config_set_sync_progress_callback(cfg, log_progress, &log));
    coffer_db *a = sync_fixture_open(cfg);
    uint64_t done = 1, total = 1;
    assert_ok(coffer_sync_progress_get(a, COFFER_SYNC_UPLOAD, &done, &total));
    assert_int_equal(done, 0);
    for (int i = 1; i <= 3; i++)
        put_note(a, i, "a note of the progress test");
    assert_ok(coffer_sync_wait_for_upload(a, WAIT_MS));
    assert_ok(coffer_sync_progress_get(a, COFFER_SYNC_UPLOAD, &done, &total));
    assert_true(done > 0);
    assert_int_equal(done, total);
    pthread_mutex_lock(&log.lock);
    assert_true(log.calls >= 1);
    assert_int_equal(log.backwards, 0);
    assert_int_equal(log.last_done, done);
    pthread_mutex_unlock(&log.lock);

    /* A new file that downloads before open has A's notes when open returns,
     * and downloaded exactly the bytes A uploaded. */
    cfg = sync_fixture_config(&f->base, "b.coffer", schema, 1, "ws://relay.test/sync/v1");
    assert_ok(coffer_config_set_sync_download_before_open(cfg, COFFER_SYNC_DOWNLOAD_ALWAYS, WAIT_MS));
    coffer_db *b = sync_fixture_open(cfg);
    char buf[64];
    assert_string_equal(text_of(b, 3, buf, sizeof buf), "a note of the progress test");
    uint64_t got = 0, known = 0;
    assert_ok(coffer_sync_progress_get(b, COFFER_SYNC_DOWNLOAD, &got, &known));
    assert_int_equal(got, done);
    assert_int_equal(known, got);
    assert_ok(coffer_sync_progress_get(b, COFFER_SYNC_DOWNLOAD, NULL, NULL));

    /* Misuse. */
    assert_status(coffer_sync_progress_get(b, 7, &got, &known), COFFER_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(coffer_last_error(), "direction 7"));
    assert_status(coffer_config_set_sync_download_before_open(NULL, 0, 0), COFFER_ERR_INVALID_ARGUMENT);
    assert_status(coffer_config_set_sync_progress_callback(NULL, NULL, NULL), COFFER_ERR_INVALID_ARGUMENT);
    coffer_config *bad = NULL;
    assert_ok(coffer_config_new(&bad));
    assert_status(coffer_config_set_sync_download_before_open(bad, 3, 0), COFFER_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(coffer_last_error(), "mode 3"));
    coffer_config_free(bad);
    coffer_close(a);
    coffer_close(b);
}

static void test_an_open_that_downloads_first_fails_when_refused_or_late(void **state)
{
    fixture *f = *state;
    /* Refused for good: the open says why. */
    relay_set(&f->r, &f->r.refuse, 1);
    coffer_config *cfg = sync_fixture_config(&f->base, "r.coffer", schema, 1, "ws://relay.test/sync/v1");
    assert_ok(coffer_config_set_sync_download_before_open(cfg, COFFER_SYNC_DOWNLOAD_ALWAYS, WAIT_MS));
    coffer_db *db = NULL;
    assert_status(coffer_open(cfg, &db), COFFER_ERR_MISUSE);
    assert_null(db);
    assert_non_null(strstr(coffer_last_error(), "SCHEMA_MISMATCH"));
    coffer_config_free(cfg);
    relay_set(&f->r, &f->r.refuse, 0);

    /* Nobody answers in time: a timeout; .once on a file that synced before does not wait. */
    cfg = sync_fixture_config(&f->base, "t.coffer", schema, 1, "ws://relay.test/sync/v1");
    coffer_sync_transport silent = {NULL, relay_fail_open, relay_send, relay_receive, relay_close};
    assert_ok(coffer_config_set_sync_transport(cfg, &silent));
    assert_ok(coffer_config_set_sync_download_before_open(cfg, COFFER_SYNC_DOWNLOAD_ALWAYS, 300));
    assert_status(coffer_open(cfg, &db), COFFER_ERR_TIMEOUT);
    assert_non_null(strstr(coffer_last_error(), "downloading before open"));
    assert_ok(coffer_config_set_sync_download_before_open(cfg, COFFER_SYNC_DOWNLOAD_ONCE, 300));
    assert_ok(coffer_open(cfg, &db));
    coffer_close(db);
    coffer_config_free(cfg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_two_clients_sync_through_the_session, setup, teardown),
        cmocka_unit_test_setup_teardown(test_offline_for_a_week_then_catching_up, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_lost_acknowledgement_uploads_nothing_twice, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_file_restored_from_a_backup_becomes_a_new_client, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_client_reset_from_the_service_keeps_every_commit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_client_reset_that_discards_unsynced_changes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_manual_client_reset_changes_nothing, setup, teardown),
        cmocka_unit_test(test_client_reset_modes_are_checked),
        cmocka_unit_test_setup_teardown(test_pause_and_resume, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unacknowledged_uploads_stay_within_the_window, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_refused_session_fails_the_waits, setup, teardown),
        cmocka_unit_test_setup_teardown(test_misuse_and_bad_configuration, setup, teardown),
        cmocka_unit_test_setup_teardown(test_the_state_callback_tells_every_change, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_pause_undone_at_once_still_reconnects, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_refusal_and_a_pause_from_the_callback, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_transport_says_why_it_failed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_resume_starts_the_backoff_over, setup, teardown),

        cmocka_unit_test_setup_teardown(test_progress_counts_bytes_and_open_downloads_first, setup, teardown),
        cmocka_unit_test_setup_teardown(test_an_open_that_downloads_first_fails_when_refused_or_late, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
