/* test_sync_subscriptions.c — flexible sync's subscription sets
 * (include/coffer.h, docs/SYNC.md "Flexible sync"): updates that append and
 * remove by name, class or all, committed as increasing versions that
 * survive reopening; the errors of each call; the SUBSCRIBE a flexible
 * session sends after its HELLO of protocol 3 and after each commit; the
 * service's SUBSCRIPTION_COMPLETE and ERROR SUBSCRIPTION recorded in the
 * file and seen by coffer_subscriptions_wait(); and the codec of the new
 * frames and of EVICT. The peer is a small script in this file that answers
 * as docs/SYNC.md says the service does (the real service is tested from
 * Tests/sync/test_sync_flexible.py). */
#define _GNU_SOURCE
#include "sync_fixture.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../Sources/CCoffer/sync/frames.h"

/* ------------------------------------------------------------------------ */
/* The script                                                                */
/* ------------------------------------------------------------------------ */

typedef struct script {
    pthread_mutex_t lock;
    int hello_protocol;
    int subscribes;            /* SUBSCRIBE frames received */
    uint64_t last_version;     /* of the last one */
    uint64_t last_count;
    char last_query[64];       /* its first query */
} script;

static void push(sync_peer_conn *c, cf_buf b) { sync_peer_push(c, b.p, b.len); }

static coffer_status script_send(void *ctx, void *connection, const uint8_t *data, size_t size)
{
    script *s = ctx;
    sync_peer_conn *c = connection;
    if (size && data[0] == CF_FRAME_SUBSCRIBE) {
        /* The client's codec does not decode what only the service reads. */
        cf_wreader r = cf_wreader_make(data + 1, size - 1, "SUBSCRIBE frame");
        uint64_t version, count;
        cf_slice name = {0}, cls = {0}, query = {0};
        if (cf_wire_get_varint(&r, &version, "version") != COFFER_OK ||
            cf_wire_get_varint(&r, &count, "count") != COFFER_OK)
            abort();
        for (uint64_t i = 0; i < count; i++) {
            cf_slice n, k, q;
            if (cf_wire_get_string(&r, &n, "name") != COFFER_OK || cf_wire_get_string(&r, &k, "class") != COFFER_OK ||
                cf_wire_get_string(&r, &q, "query") != COFFER_OK)
                abort();
            if (i == 0) {
                name = n;
                cls = k;
                query = q;
            }
        }
        if (cf_wreader_left(&r))
            abort();
        (void)name;
        (void)cls;
        pthread_mutex_lock(&s->lock);
        s->subscribes++;
        s->last_version = version;
        s->last_count = count;
        snprintf(s->last_query, sizeof s->last_query, "%.*s", (int)query.n, (const char *)query.p);
        int refuse = count && memmem(query.p, query.n, "LIKE", 4) != NULL;
        pthread_mutex_unlock(&s->lock);
        cf_buf b = {0};
        if (refuse)
            cf_frame_subscription_error_encode(&b, "subscription 'bad' of Note: LIKE at offset 5 is not supported",
                                               version);
        else
            cf_frame_subscription_complete_encode(&b, version, 7);
        push(c, b);
        return COFFER_OK;
    }
    cf_frame f;
    if (cf_frame_decode(data, size, &f) != COFFER_OK)
        abort();
    if (f.type == CF_FRAME_HELLO) {
        pthread_mutex_lock(&s->lock);
        s->hello_protocol = (int)f.u.hello.protocol;
        pthread_mutex_unlock(&s->lock);
        cf_buf b = {0};
        cf_wire_u8(&b, CF_FRAME_WELCOME); /* protocol 3 */
        cf_wire_varint(&b, CF_SYNC_PROTOCOL_FLEXIBLE);
        cf_wire_varint(&b, 0);
        cf_wire_varint(&b, 0);
        push(c, b);
        b = (cf_buf){0};
        cf_frame_download_encode(&b, 0, 0, NULL, 0);
        push(c, b);
    }
    cf_frame_free(&f);
    return COFFER_OK;
}

static int script_subscribes(script *s, uint64_t *version)
{
    pthread_mutex_lock(&s->lock);
    int n = s->subscribes;
    if (version)
        *version = s->last_version;
    pthread_mutex_unlock(&s->lock);
    return n;
}

/* ------------------------------------------------------------------------ */
/* Fixtures                                                                  */
/* ------------------------------------------------------------------------ */

static const coffer_property_schema note_props[] = {
    {.name = "id", .type = COFFER_TYPE_INT, .flags = COFFER_PROPERTY_PRIMARY_KEY},
    {.name = "title", .type = COFFER_TYPE_STRING},
};
static const coffer_property_schema part_props[] = {
    {.name = "size", .type = COFFER_TYPE_INT},
};
static const coffer_class_schema schema[] = {
    {.name = "Note", .properties = note_props, .property_count = 2},
    {.name = "Part", .properties = part_props, .property_count = 1, .flags = COFFER_CLASS_EMBEDDED},
};

typedef struct fixture {
    sync_fixture base;
    script s;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    if (!f || sync_fixture_setup(&f->base) != 0)
        return -1;
    pthread_mutex_init(&f->s.lock, NULL);
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

static coffer_db *open_local(fixture *f, const char *name)
{
    coffer_config *cfg = sync_fixture_config(&f->base, name, schema, 2, NULL);
    return sync_fixture_open(cfg);
}

static coffer_db *open_flexible(fixture *f, const char *name)
{
    coffer_config *cfg = sync_fixture_config(&f->base, name, schema, 2, "ws://script.test/sync/v1");
    assert_ok(coffer_config_set_sync_flexible(cfg, 1));
    return sync_fixture_open(cfg);
}

/* The latest set's subscriptions as "name:class:query" joined by "|". */
static void describe(coffer_db *db, char *out, size_t cap, uint64_t *version, int *state)
{
    coffer_subscription_set *set;
    assert_ok(coffer_subscriptions_latest(db, &set));
    out[0] = 0;
    for (size_t i = 0; i < coffer_subscription_set_count(set); i++) {
        const char *name, *cls, *query;
        assert_ok(coffer_subscription_set_at(set, i, &name, &cls, &query));
        size_t len = strlen(out);
        snprintf(out + len, cap - len, "%s%s:%s:%s", i ? "|" : "", name, cls, query);
    }
    if (version)
        *version = coffer_subscription_set_version(set);
    if (state)
        *state = coffer_subscription_set_state(set);
    coffer_subscription_set_free(set);
}

/* ------------------------------------------------------------------------ */
/* Tests                                                                     */
/* ------------------------------------------------------------------------ */

static void test_updates_are_versioned_and_survive_reopening(void **state)
{
    fixture *f = *state;
    coffer_db *db = open_local(f, "local.coffer");
    char text[256];
    uint64_t version;
    int st;
    describe(db, text, sizeof text, &version, &st);
    assert_string_equal(text, "");
    assert_int_equal(version, 0);
    assert_int_equal(st, COFFER_SUBSCRIPTION_COMPLETE);

    coffer_subscription_set *u;
    assert_ok(coffer_subscriptions_update(db, &u));
    assert_ok(coffer_subscription_set_append(u, "old", "Note", "id > 2"));
    assert_ok(coffer_subscription_set_append(u, "old", "Note", "id > 2")); /* the same: nothing */
    assert_ok(coffer_subscription_set_append(u, NULL, "Note", "title == 'x'"));
    assert_ok(coffer_subscription_set_append(u, "", "Note", "title == 'x'"));
    assert_ok(coffer_subscription_set_append(u, "all", "Note", "TRUEPREDICATE"));
    assert_int_equal(coffer_subscription_set_count(u), 3);
    assert_int_equal(coffer_subscription_set_state(u), COFFER_SUBSCRIPTION_PENDING);
    size_t at;
    assert_ok(coffer_subscription_set_find(u, "all", &at));
    assert_int_equal(at, 2);
    uint64_t committed;
    assert_ok(coffer_subscription_set_commit(u, &committed));
    assert_int_equal(committed, 1);
    assert_int_equal(coffer_subscription_set_version(u), 1);
    /* A committed set is a snapshot. */
    assert_status(coffer_subscription_set_append(u, "more", "Note", "id > 3"), COFFER_ERR_MISUSE);
    assert_error_contains("not an update");
    coffer_subscription_set_free(u);

    assert_ok(coffer_subscriptions_update(db, &u));
    int removed;
    assert_ok(coffer_subscription_set_remove_named(u, "old", &removed));
    assert_int_equal(removed, 1);
    assert_ok(coffer_subscription_set_remove_named(u, "old", &removed));
    assert_int_equal(removed, 0);
    assert_ok(coffer_subscription_set_append(u, "new", "Note", "id < 10"));
    assert_ok(coffer_subscription_set_commit(u, &committed));
    assert_int_equal(committed, 2);
    coffer_subscription_set_free(u);
    /* An update dropped without a commit changes nothing. */
    assert_ok(coffer_subscriptions_update(db, &u));
    size_t n;
    assert_ok(coffer_subscription_set_remove_all(u, &n));
    assert_int_equal(n, 3);
    coffer_subscription_set_free(u);
    coffer_close(db);

    db = open_local(f, "local.coffer");
    describe(db, text, sizeof text, &version, &st);
    assert_string_equal(text, ":Note:title == 'x'|all:Note:TRUEPREDICATE|new:Note:id < 10");
    assert_int_equal(version, 2);
    assert_int_equal(st, COFFER_SUBSCRIPTION_PENDING);
    assert_ok(coffer_subscriptions_update(db, &u));
    assert_ok(coffer_subscription_set_remove_class(u, "Note", &n));
    assert_int_equal(n, 3);
    assert_ok(coffer_subscription_set_commit(u, &committed));
    assert_int_equal(committed, 3);
    coffer_subscription_set_free(u);
    describe(db, text, sizeof text, &version, NULL);
    assert_string_equal(text, "");
    assert_int_equal(version, 3);
    coffer_close(db);
}

static void test_bad_calls_are_refused_with_a_message(void **state)
{
    fixture *f = *state;
    coffer_db *db = open_local(f, "bad.coffer");
    coffer_subscription_set *set, *u;
    assert_status(coffer_subscriptions_latest(NULL, &set), COFFER_ERR_INVALID_ARGUMENT);
    assert_status(coffer_subscriptions_update(db, NULL), COFFER_ERR_INVALID_ARGUMENT);
    assert_ok(coffer_subscriptions_latest(db, &set));
    assert_status(coffer_subscription_set_remove_all(set, NULL), COFFER_ERR_MISUSE);
    assert_status(coffer_subscription_set_commit(set, NULL), COFFER_ERR_MISUSE);
    assert_status(coffer_subscription_set_at(set, 0, NULL, NULL, NULL), COFFER_ERR_NOT_FOUND);
    size_t at;
    assert_status(coffer_subscription_set_find(set, "none", &at), COFFER_ERR_NOT_FOUND);
    assert_error_contains("'none'");
    coffer_subscription_set_free(set);

    assert_ok(coffer_subscriptions_update(db, &u));
    assert_status(coffer_subscription_set_append(u, "x", "Dog", "age > 2"), COFFER_ERR_SCHEMA);
    assert_error_contains("no class 'Dog'");
    assert_status(coffer_subscription_set_append(u, "x", "Part", "size > 2"), COFFER_ERR_SCHEMA);
    assert_error_contains("embedded");
    assert_status(coffer_subscription_set_append(u, "x", "Note", ""), COFFER_ERR_INVALID_ARGUMENT);
    assert_error_contains("query is empty");
    assert_status(coffer_subscription_set_append(u, "x", NULL, "id > 1"), COFFER_ERR_INVALID_ARGUMENT);
    assert_ok(coffer_subscription_set_append(u, "x", "Note", "id > 1"));
    assert_status(coffer_subscription_set_append(u, "x", "Note", "id > 2"), COFFER_ERR_PRIMARY_KEY_EXISTS);
    assert_error_contains("'x' exists already (Note: id > 1)");
    assert_int_equal(coffer_subscription_set_count(u), 1);
    coffer_subscription_set_free(u);
    /* Waiting needs a flexible session. */
    assert_status(coffer_subscriptions_wait(db, 0, 10), COFFER_ERR_MISUSE);
    coffer_close(db);
    coffer_subscription_set_free(NULL);
    assert_int_equal(coffer_subscription_set_count(NULL), 0);
    assert_string_equal(coffer_subscription_set_error(NULL), "");
}

static void test_a_flexible_session_subscribes_and_records_the_answers(void **state)
{
    fixture *f = *state;
    coffer_db *db = open_flexible(f, "flex.coffer");
    /* HELLO of protocol 3, then SUBSCRIBE of the empty set of version 0. */
    for (int i = 0; i < 4000 && script_subscribes(&f->s, NULL) < 1; i++)
        usleep(5000);
    uint64_t version;
    assert_int_equal(script_subscribes(&f->s, &version), 1);
    assert_int_equal(version, 0);
    assert_int_equal(f->s.hello_protocol, CF_SYNC_PROTOCOL_FLEXIBLE);
    assert_ok(coffer_subscriptions_wait(db, 0, SYNC_WAIT_MS));

    coffer_subscription_set *u;
    assert_ok(coffer_subscriptions_update(db, &u));
    assert_ok(coffer_subscription_set_append(u, "recent", "Note", "id > 2"));
    uint64_t committed;
    assert_ok(coffer_subscription_set_commit(u, &committed));
    coffer_subscription_set_free(u);
    assert_int_equal(committed, 1);
    assert_ok(coffer_subscriptions_wait(db, 1, SYNC_WAIT_MS));
    assert_int_equal(script_subscribes(&f->s, &version), 2);
    assert_int_equal(version, 1);
    assert_string_equal(f->s.last_query, "id > 2");
    char text[128];
    int st;
    describe(db, text, sizeof text, &version, &st);
    assert_int_equal(st, COFFER_SUBSCRIPTION_COMPLETE);

    /* A set the service refuses: the error state, with its message. */
    assert_ok(coffer_subscriptions_update(db, &u));
    assert_ok(coffer_subscription_set_remove_all(u, NULL));
    assert_ok(coffer_subscription_set_append(u, "bad", "Note", "title LIKE 'a*'"));
    assert_ok(coffer_subscription_set_commit(u, &committed));
    coffer_subscription_set_free(u);
    assert_status(coffer_subscriptions_wait(db, 2, SYNC_WAIT_MS), COFFER_ERR_QUERY);
    assert_error_contains("LIKE at offset 5 is not supported");
    coffer_subscription_set *latest;
    assert_ok(coffer_subscriptions_latest(db, &latest));
    assert_int_equal(coffer_subscription_set_state(latest), COFFER_SUBSCRIPTION_ERROR);
    assert_non_null(strstr(coffer_subscription_set_error(latest), "subscription 'bad' of Note"));
    coffer_subscription_set_free(latest);
    /* The session goes on. */
    assert_int_equal(coffer_sync_state(db), COFFER_SYNC_CONNECTED);
    assert_status(coffer_subscriptions_wait(db, 9, 10), COFFER_ERR_MISUSE);
    assert_error_contains("never committed");
    coffer_close(db);

    /* Reopened: the refused set and its message are still there, the wait
     * answers at once, and the session subscribes with the last set the
     * service completed. */
    int before = script_subscribes(&f->s, NULL);
    db = open_flexible(f, "flex.coffer");
    assert_status(coffer_subscriptions_wait(db, 2, 10), COFFER_ERR_QUERY);
    assert_error_contains("LIKE");
    for (int i = 0; i < 4000 && script_subscribes(&f->s, NULL) <= before; i++)
        usleep(5000);
    assert_int_equal(script_subscribes(&f->s, &version), before + 1);
    assert_int_equal(version, 1);
    pthread_mutex_lock(&f->s.lock);
    assert_string_equal(f->s.last_query, "id > 2");
    pthread_mutex_unlock(&f->s.lock);
    coffer_close(db);
}

static void test_the_new_frames_and_evict_decode(void **state)
{
    (void)state;
    cf_buf b = {0};
    cf_frame f;
    cf_frame_subscription_complete_encode(&b, 5, 300);
    assert_ok(cf_frame_decode(b.p, b.len, &f));
    assert_int_equal(f.type, CF_FRAME_SUBSCRIPTION_COMPLETE);
    assert_int_equal(f.u.subscription_complete.set_version, 5);
    assert_int_equal(f.u.subscription_complete.server_version, 300);
    cf_frame_free(&f);
    free(b.p);

    b = (cf_buf){0};
    cf_frame_subscription_error_encode(&b, "no", 6);
    assert_ok(cf_frame_decode(b.p, b.len, &f));
    assert_int_equal(f.u.error.code, CF_SYNC_ERR_SUBSCRIPTION);
    assert_int_equal(f.u.error.set_version, 6);
    assert_int_equal(f.u.error.fatal, 0);
    cf_frame_free(&f);
    /* A fatal SUBSCRIPTION error, and one without its version, are refused. */
    b.p[1 + 1 + 1 + 2] = 1;
    assert_status(cf_frame_decode(b.p, b.len, &f), COFFER_ERR_CORRUPTED);
    assert_error_contains("never fatal");
    assert_status(cf_frame_decode(b.p, b.len - 1, &f), COFFER_ERR_CORRUPTED);
    free(b.p);

    /* EVICT carries the class and primary key only. */
    cf_sync_cs_builder cs = {.version = 1, .clock = 1};
    const uint8_t pk[] = {CF_SV_INT, 4};
    cf_cs_begin_change(&cs, CF_OP_EVICT, "Note", (cf_slice){pk, sizeof pk});
    cf_buf enc = {0};
    assert_ok(cf_sync_cs_finish(&cs, &enc));
    cf_sync_cs_builder_free(&cs);
    cf_sync_cs decoded;
    assert_ok(cf_sync_cs_decode(enc.p, enc.len, &decoded));
    assert_int_equal(decoded.nchanges, 1);
    assert_int_equal(decoded.changes[0].op, CF_OP_EVICT);
    assert_true(cf_slice_eq_str(decoded.changes[0].cls, "Note"));
    cf_sync_cs_free(&decoded);
    free(enc.p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_updates_are_versioned_and_survive_reopening, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_calls_are_refused_with_a_message, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_flexible_session_subscribes_and_records_the_answers, setup, teardown),
        cmocka_unit_test(test_the_new_frames_and_evict_decode),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
