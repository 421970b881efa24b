/* test_sync_error_callback.c — coffer_config_set_sync_error_callback(): the
 * callback is told of every ERROR frame of the service, with the code, its
 * name, the message and whether it is fatal, and for a compensating write
 * (code 10, protocol 2) the refused object's class and primary key; a
 * compensating write does not end the session (no reconnection), a fatal
 * error does; a frame whose compensating-write fields are cut short is
 * refused by the codec; and the setter's errors. The peer is a small script
 * in this file that answers HELLO with WELCOME, a caught-up DOWNLOAD and the
 * ERROR frames the test chose, as docs/SYNC.md says the service does. */
#define _GNU_SOURCE
#include "sync_fixture.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../Sources/CCoffer/sync/frames.h"

/* ------------------------------------------------------------------------ */
/* The script                                                                */
/* ------------------------------------------------------------------------ */

typedef struct script {
    pthread_mutex_t lock;
    int hellos;
    int fatal_auth; /* answer HELLO with a fatal AUTH instead */
} script;

/* An ERROR COMPENSATING_WRITE frame naming `cls` and the encoded `pk`. */
static cf_buf compensating(const char *message, const char *cls, const uint8_t *pk, size_t pk_len)
{
    cf_buf b = {0};
    cf_frame_error_encode(&b, CF_SYNC_ERR_COMPENSATING_WRITE, message, 0);
    cf_wire_string(&b, cls, strlen(cls));
    cf_buf_put(&b, pk, pk_len);
    return b;
}

/* Queues `b` for the client; the connection owns its bytes from here. */
static void push(sync_peer_conn *c, cf_buf b) { sync_peer_push(c, b.p, b.len); }

static coffer_status script_send(void *ctx, void *connection, const uint8_t *data, size_t size)
{
    script *s = ctx;
    sync_peer_conn *c = connection;
    cf_frame f;
    if (cf_frame_decode(data, size, &f) != COFFER_OK)
        abort();
    if (f.type == CF_FRAME_HELLO) {
        if (f.u.hello.protocol != CF_SYNC_PROTOCOL_PROGRESS)
            abort();
        pthread_mutex_lock(&s->lock);
        s->hellos++;
        int fatal_auth = s->fatal_auth;
        pthread_mutex_unlock(&s->lock);
        cf_buf b = {0};
        if (fatal_auth) {
            cf_frame_error_encode(&b, CF_SYNC_ERR_AUTH, "the HELLO token was refused", 1);
            push(c, b);
        } else {
            cf_frame_welcome_encode(&b, 0, 0);
            push(c, b);
            b = (cf_buf){0};
            cf_frame_download_encode(&b, 0, 0, NULL, 0);
            push(c, b);
            const uint8_t int_pk[] = {CF_SV_INT, 14}; /* zigzag 7 */
            push(c, compensating("write to Note 7 refused by the rule \"owner == %user.id\"", "Note", int_pk, sizeof int_pk));
            const uint8_t string_pk[] = {CF_SV_STRING, 3, 'a', 'b', 'c'};
            push(c, compensating("write to Note \"abc\" refused", "Note", string_pk, sizeof string_pk));
        }
    }
    cf_frame_free(&f);
    return COFFER_OK;
}

/* ------------------------------------------------------------------------ */
/* What the callback saw                                                     */
/* ------------------------------------------------------------------------ */

typedef struct seen_event {
    uint64_t code;
    char name[32], message[128], cls[32];
    int fatal, has_class, has_pk;
    coffer_type pk_type;
    int64_t pk_int;
    char pk_string[32];
} seen_event;

typedef struct recorder {
    pthread_mutex_t lock;
    seen_event events[8];
    int n;
} recorder;

static void record_error(void *ctx, const coffer_sync_error_event *e)
{
    recorder *r = ctx;
    pthread_mutex_lock(&r->lock);
    if (r->n < 8) {
        seen_event *s = &r->events[r->n++];
        memset(s, 0, sizeof *s);
        s->code = e->code;
        snprintf(s->name, sizeof s->name, "%s", e->code_name);
        snprintf(s->message, sizeof s->message, "%s", e->message);
        s->fatal = e->fatal;
        s->has_class = e->class_name != NULL;
        if (e->class_name)
            snprintf(s->cls, sizeof s->cls, "%s", e->class_name);
        s->has_pk = e->primary_key != NULL;
        if (e->primary_key) {
            s->pk_type = e->primary_key->type;
            if (s->pk_type == COFFER_TYPE_INT)
                s->pk_int = e->primary_key->u.integer;
            else if (s->pk_type == COFFER_TYPE_STRING)
                snprintf(s->pk_string, sizeof s->pk_string, "%.*s", (int)e->primary_key->u.string.size,
                         (const char *)e->primary_key->u.string.data);
        }
    }
    pthread_mutex_unlock(&r->lock);
}

static int events_seen(recorder *r)
{
    pthread_mutex_lock(&r->lock);
    int n = r->n;
    pthread_mutex_unlock(&r->lock);
    return n;
}

/* ------------------------------------------------------------------------ */
/* Fixtures                                                                  */
/* ------------------------------------------------------------------------ */

static const coffer_property_schema note_props[] = {
    {.name = "id", .type = COFFER_TYPE_INT, .flags = COFFER_PROPERTY_PRIMARY_KEY},
};
static const coffer_class_schema schema[] = {{.name = "Note", .properties = note_props, .property_count = 1}};

typedef struct fixture {
    sync_fixture base;
    script s;
    recorder r;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    if (!f || sync_fixture_setup(&f->base) != 0)
        return -1;
    pthread_mutex_init(&f->s.lock, NULL);
    pthread_mutex_init(&f->r.lock, NULL);
    f->base.transport = (coffer_sync_transport){&f->s, sync_peer_open, script_send, sync_peer_receive, sync_peer_close};
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    sync_fixture_teardown(&f->base);
    free(f);
    return 0;
}

static coffer_db *open_recorded(fixture *f)
{
    coffer_config *cfg = sync_fixture_config(&f->base, "a.coffer", schema, 1, "ws://script.test/sync/v1");
    assert_ok(coffer_config_set_sync_error_callback(cfg, record_error, &f->r));
    return sync_fixture_open(cfg);
}

static void wait_for_events(recorder *r, int n)
{
    for (int i = 0; i < 4000 && events_seen(r) < n; i++) {
        struct timespec pause = {0, 5000000L};
        nanosleep(&pause, NULL);
    }
    assert_int_equal(events_seen(r), n);
}

/* ------------------------------------------------------------------------ */
/* Tests                                                                     */
/* ------------------------------------------------------------------------ */

static void test_compensating_writes_reach_the_callback_and_the_session_goes_on(void **state)
{
    fixture *f = *state;
    coffer_db *db = open_recorded(f);
    wait_for_events(&f->r, 2);
    seen_event *a = &f->r.events[0], *b = &f->r.events[1];
    assert_int_equal(a->code, COFFER_SYNC_ERROR_COMPENSATING_WRITE);
    assert_string_equal(a->name, "COMPENSATING_WRITE");
    assert_non_null(strstr(a->message, "owner == %user.id"));
    assert_int_equal(a->fatal, 0);
    assert_true(a->has_class);
    assert_string_equal(a->cls, "Note");
    assert_true(a->has_pk);
    assert_int_equal(a->pk_type, COFFER_TYPE_INT);
    assert_int_equal(a->pk_int, 7);
    assert_int_equal(b->pk_type, COFFER_TYPE_STRING);
    assert_string_equal(b->pk_string, "abc");
    /* Not fatal: the session stays connected on its first connection. */
    struct timespec settle = {0, 200000000L};
    nanosleep(&settle, NULL);
    assert_int_equal(coffer_sync_state(db), COFFER_SYNC_CONNECTED);
    assert_ok(coffer_sync_wait_for_download(db, SYNC_WAIT_MS));
    pthread_mutex_lock(&f->s.lock);
    assert_int_equal(f->s.hellos, 1);
    pthread_mutex_unlock(&f->s.lock);
    char buf[512];
    assert_ok(coffer_sync_error(db, buf, sizeof buf));
    assert_non_null(strstr(buf, "COMPENSATING_WRITE"));
    coffer_close(db);
}

static void test_a_fatal_error_reaches_the_callback_without_an_object(void **state)
{
    fixture *f = *state;
    f->s.fatal_auth = 1;
    coffer_db *db = open_recorded(f);
    wait_for_events(&f->r, 1);
    seen_event *e = &f->r.events[0];
    assert_int_equal(e->code, COFFER_SYNC_ERROR_AUTH);
    assert_string_equal(e->name, "AUTH");
    assert_int_equal(e->fatal, 1);
    assert_false(e->has_class);
    assert_false(e->has_pk);
    for (int i = 0; i < 4000 && coffer_sync_state(db) != COFFER_SYNC_FAILED; i++) {
        struct timespec pause = {0, 5000000L};
        nanosleep(&pause, NULL);
    }
    assert_int_equal(coffer_sync_state(db), COFFER_SYNC_FAILED);
    coffer_close(db);
}

static void test_a_compensating_write_without_its_object_does_not_decode(void **state)
{
    (void)state;
    cf_buf b = {0};
    cf_frame_error_encode(&b, CF_SYNC_ERR_COMPENSATING_WRITE, "refused", 0);
    cf_wire_string(&b, "Note", 4); /* the primary key is missing */
    cf_frame f;
    assert_status(cf_frame_decode(b.p, b.len, &f), COFFER_ERR_CORRUPTED);
    assert_non_null(strstr(coffer_last_error(), "primary key"));
    /* Another code takes no object: the same bytes after it are left over. */
    cf_buf other = {0};
    cf_frame_error_encode(&other, CF_SYNC_ERR_INTERNAL, "failed", 0);
    cf_wire_string(&other, "Note", 4);
    assert_status(cf_frame_decode(other.p, other.len, &f), COFFER_ERR_CORRUPTED);
    free(b.p);
    free(other.p);
}

static void test_the_setters_errors(void **state)
{
    (void)state;
    assert_status(coffer_config_set_sync_error_callback(NULL, record_error, NULL), COFFER_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(coffer_last_error(), "coffer_config_set_sync_error_callback"));
    coffer_config *cfg = NULL;
    assert_ok(coffer_config_new(&cfg));
    assert_ok(coffer_config_set_sync_error_callback(cfg, record_error, NULL));
    assert_ok(coffer_config_set_sync_error_callback(cfg, NULL, NULL));
    coffer_config_free(cfg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_compensating_writes_reach_the_callback_and_the_session_goes_on, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_a_fatal_error_reaches_the_callback_without_an_object, setup, teardown),
        cmocka_unit_test(test_a_compensating_write_without_its_object_does_not_decode),
        cmocka_unit_test(test_the_setters_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
