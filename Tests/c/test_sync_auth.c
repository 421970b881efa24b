/* test_sync_auth.c — the HELLO token of a sync session: a fixed token
 * (coffer_config_set_sync_token) is sent as given; a token callback
 * (coffer_config_set_sync_token_callback) is asked before every connection
 * and asked for a fresh token after ERROR TOKEN_EXPIRED, after which the
 * session connects again by itself; a refused token (AUTH) or an expired
 * fixed token stops the session; a callback that refuses, has no token now,
 * or overruns its buffer; and the setters' errors. The peer is a small gate
 * in this file that checks HELLO tokens as docs/SYNC.md says the service
 * does and answers WELCOME or ERROR. */
#define _GNU_SOURCE
#include "sync_fixture.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../Sources/CCoffer/sync/frames.h"

/* ------------------------------------------------------------------------ */
/* The gate                                                                  */
/* ------------------------------------------------------------------------ */

typedef struct gate {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    char valid[64];   /* the token it accepts */
    char expired[64]; /* the token it answers TOKEN_EXPIRED */
    char seen[8][64]; /* the tokens of the HELLOs it received, in order */
    int nseen;
} gate;

static coffer_status gate_send(void *ctx, void *connection, const uint8_t *data, size_t size)
{
    gate *g = ctx;
    sync_peer_conn *c = connection;
    cf_frame f;
    if (cf_frame_decode(data, size, &f) != COFFER_OK)
        abort();
    if (f.type == CF_FRAME_HELLO) {
        char token[64];
        snprintf(token, sizeof token, "%.*s", (int)f.u.hello.token.n, (const char *)f.u.hello.token.p);
        pthread_mutex_lock(&g->lock);
        if (g->nseen < 8)
            snprintf(g->seen[g->nseen++], sizeof g->seen[0], "%s", token);
        cf_buf b = {0};
        if (!token[0])
            cf_frame_error_encode(&b, CF_SYNC_ERR_AUTH, "HELLO carries no token", 1);
        else if (strcmp(token, g->expired) == 0)
            cf_frame_error_encode(&b, CF_SYNC_ERR_TOKEN_EXPIRED, "the access token has expired", 1);
        else if (strcmp(token, g->valid) != 0)
            cf_frame_error_encode(&b, CF_SYNC_ERR_AUTH, "the HELLO token was refused: bad signature", 1);
        else {
            cf_frame_welcome_encode(&b, 0, 0);
            sync_peer_push(c, b.p, b.len);
            b = (cf_buf){0};
            cf_frame_download_encode(&b, 0, 0, NULL, 0);
        }
        sync_peer_push(c, b.p, b.len);
        pthread_cond_broadcast(&g->cond);
        pthread_mutex_unlock(&g->lock);
    }
    cf_frame_free(&f);
    return COFFER_OK;
}

static int gate_seen(gate *g, char out[8][64])
{
    pthread_mutex_lock(&g->lock);
    int n = g->nseen;
    memcpy(out, g->seen, sizeof g->seen);
    pthread_mutex_unlock(&g->lock);
    return n;
}

/* ------------------------------------------------------------------------ */
/* Token callbacks                                                           */
/* ------------------------------------------------------------------------ */

/* Gives `current`; on refresh, `fresh` from then on. Counts its calls. */
typedef struct provider {
    pthread_mutex_t lock;
    const char *current, *fresh;
    int calls, refreshes;
    coffer_status answer; /* what it returns (COFFER_OK unless a test says) */
    int overrun;          /* fills the whole buffer, without a NUL */
} provider;

static coffer_status provide(void *ctx, int refresh, char *buf, size_t size)
{
    provider *p = ctx;
    pthread_mutex_lock(&p->lock);
    p->calls++;
    if (refresh) {
        p->refreshes++;
        p->current = p->fresh;
    }
    coffer_status st = p->answer;
    if (st == COFFER_OK) {
        if (p->overrun)
            memset(buf, 'x', size);
        else
            snprintf(buf, size, "%s", p->current);
    }
    pthread_mutex_unlock(&p->lock);
    return st;
}

static int provider_calls(provider *p)
{
    pthread_mutex_lock(&p->lock);
    int n = p->calls;
    pthread_mutex_unlock(&p->lock);
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
    sync_fixture base; /* the folder and the transport */
    gate g;
    provider p;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    if (!f || sync_fixture_setup(&f->base) != 0)
        return -1;
    pthread_mutex_init(&f->g.lock, NULL);
    pthread_cond_init(&f->g.cond, NULL);
    pthread_mutex_init(&f->p.lock, NULL);
    snprintf(f->g.valid, sizeof f->g.valid, "fresh-token");
    snprintf(f->g.expired, sizeof f->g.expired, "old-token");
    f->p.current = "old-token";
    f->p.fresh = "fresh-token";
    f->base.transport = (coffer_sync_transport){&f->g, sync_peer_open, gate_send, sync_peer_receive, sync_peer_close};
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

/* Opens a synced file with a fixed `token` (NULL: none) or, with `use_callback`, the provider. */
static coffer_db *open_with(fixture *f, const char *token, int use_callback)
{
    coffer_config *cfg = sync_fixture_config(&f->base, "a.coffer", schema, 1, "ws://gate.test/sync/v1");
    if (token)
        assert_ok(coffer_config_set_sync_token(cfg, token));
    if (use_callback)
        assert_ok(coffer_config_set_sync_token_callback(cfg, provide, &f->p));
    return sync_fixture_open(cfg);
}

/* Waits until the session is in `state`; fails after 20 s. */
static void wait_for_state(coffer_db *db, int state)
{
    for (int i = 0; i < 4000 && coffer_sync_state(db) != state; i++) {
        struct timespec pause = {0, 5000000L};
        nanosleep(&pause, NULL);
    }
    assert_int_equal(coffer_sync_state(db), state);
}

static void assert_sync_error_contains(coffer_db *db, const char *text)
{
    char buf[512];
    assert_ok(coffer_sync_error(db, buf, sizeof buf));
    if (!strstr(buf, text))
        fail_msg("the sync error '%s' does not contain '%s'", buf, text);
}

#define WAIT_MS SYNC_WAIT_MS

/* ------------------------------------------------------------------------ */
/* Tests                                                                     */
/* ------------------------------------------------------------------------ */

static void test_a_fixed_token_is_sent_in_hello(void **state)
{
    fixture *f = *state;
    coffer_db *db = open_with(f, "fresh-token", 0);
    assert_ok(coffer_sync_wait_for_download(db, WAIT_MS));
    char seen[8][64];
    assert_true(gate_seen(&f->g, seen) >= 1);
    assert_string_equal(seen[0], "fresh-token");
    coffer_close(db);
}

static void test_no_token_is_refused_for_good(void **state)
{
    fixture *f = *state;
    coffer_db *db = open_with(f, NULL, 0);
    assert_status(coffer_sync_wait_for_download(db, WAIT_MS), COFFER_ERR_MISUSE);
    assert_error_contains("AUTH");
    wait_for_state(db, COFFER_SYNC_FAILED);
    assert_sync_error_contains(db, "HELLO carries no token");
    char seen[8][64];
    assert_int_equal(gate_seen(&f->g, seen), 1);
    assert_string_equal(seen[0], "");
    coffer_close(db);
}

static void test_a_forged_token_is_refused_for_good(void **state)
{
    fixture *f = *state;
    coffer_db *db = open_with(f, "forged-token", 0);
    assert_status(coffer_sync_wait_for_download(db, WAIT_MS), COFFER_ERR_MISUSE);
    wait_for_state(db, COFFER_SYNC_FAILED);
    assert_sync_error_contains(db, "AUTH");
    assert_sync_error_contains(db, "bad signature");
    coffer_close(db);
}

static void test_an_expired_fixed_token_stops_the_session(void **state)
{
    fixture *f = *state;
    coffer_db *db = open_with(f, "old-token", 0);
    assert_status(coffer_sync_wait_for_download(db, WAIT_MS), COFFER_ERR_MISUSE);
    wait_for_state(db, COFFER_SYNC_FAILED);
    assert_sync_error_contains(db, "TOKEN_EXPIRED");
    coffer_close(db);
}

static void test_the_callback_refreshes_an_expired_token_and_reconnects(void **state)
{
    fixture *f = *state;
    /* The callback wins over a fixed token. */
    coffer_db *db = open_with(f, "forged-token", 1);
    assert_ok(coffer_sync_wait_for_download(db, WAIT_MS));
    char seen[8][64];
    int n = gate_seen(&f->g, seen);
    assert_int_equal(n, 2);
    assert_string_equal(seen[0], "old-token");
    assert_string_equal(seen[1], "fresh-token");
    pthread_mutex_lock(&f->p.lock);
    assert_int_equal(f->p.refreshes, 1);
    assert_int_equal(f->p.calls, 2);
    pthread_mutex_unlock(&f->p.lock);
    /* Every later connection asks again, without refresh. */
    assert_ok(coffer_sync_pause(db));
    wait_for_state(db, COFFER_SYNC_PAUSED);
    assert_ok(coffer_sync_resume(db));
    assert_ok(coffer_sync_wait_for_download(db, WAIT_MS));
    assert_int_equal(provider_calls(&f->p), 3);
    pthread_mutex_lock(&f->p.lock);
    assert_int_equal(f->p.refreshes, 1);
    pthread_mutex_unlock(&f->p.lock);
    coffer_close(db);
}

static void test_a_callback_that_refuses_stops_the_session(void **state)
{
    fixture *f = *state;
    f->p.answer = COFFER_ERR_INVALID_ARGUMENT;
    coffer_db *db = open_with(f, NULL, 1);
    assert_status(coffer_sync_wait_for_download(db, WAIT_MS), COFFER_ERR_MISUSE);
    wait_for_state(db, COFFER_SYNC_FAILED);
    assert_sync_error_contains(db, "token callback refused");
    char seen[8][64];
    assert_int_equal(gate_seen(&f->g, seen), 0); /* no HELLO was sent */
    /* resume() tries again once the callback can answer. */
    pthread_mutex_lock(&f->p.lock);
    f->p.answer = COFFER_OK;
    f->p.current = "fresh-token";
    pthread_mutex_unlock(&f->p.lock);
    assert_ok(coffer_sync_resume(db));
    assert_ok(coffer_sync_wait_for_download(db, WAIT_MS));
    coffer_close(db);
}

static void test_a_callback_without_a_token_now_is_retried(void **state)
{
    fixture *f = *state;
    f->p.answer = COFFER_ERR_IO;
    coffer_db *db = open_with(f, NULL, 1);
    while (provider_calls(&f->p) < 3) {
        struct timespec pause = {0, 5000000L};
        nanosleep(&pause, NULL);
    }
    assert_int_not_equal(coffer_sync_state(db), COFFER_SYNC_FAILED);
    assert_sync_error_contains(db, "has no token now");
    pthread_mutex_lock(&f->p.lock);
    f->p.answer = COFFER_OK;
    f->p.current = "fresh-token";
    pthread_mutex_unlock(&f->p.lock);
    assert_ok(coffer_sync_wait_for_download(db, WAIT_MS));
    coffer_close(db);
}

static void test_a_callback_that_overruns_its_buffer_stops_the_session(void **state)
{
    fixture *f = *state;
    f->p.overrun = 1;
    coffer_db *db = open_with(f, NULL, 1);
    assert_status(coffer_sync_wait_for_download(db, WAIT_MS), COFFER_ERR_MISUSE);
    wait_for_state(db, COFFER_SYNC_FAILED);
    assert_sync_error_contains(db, "without its NUL");
    coffer_close(db);
}

static void test_the_setters_errors(void **state)
{
    (void)state;
    assert_status(coffer_config_set_sync_token(NULL, "t"), COFFER_ERR_INVALID_ARGUMENT);
    assert_error_contains("coffer_config_set_sync_token");
    assert_status(coffer_config_set_sync_token_callback(NULL, provide, NULL), COFFER_ERR_INVALID_ARGUMENT);
    assert_error_contains("coffer_config_set_sync_token_callback");
    coffer_config *cfg = ts_config_new();
    char *big = malloc(COFFER_SYNC_TOKEN_MAX + 1);
    memset(big, 'a', COFFER_SYNC_TOKEN_MAX);
    big[COFFER_SYNC_TOKEN_MAX] = 0;
    assert_status(coffer_config_set_sync_token(cfg, big), COFFER_ERR_INVALID_ARGUMENT);
    assert_error_contains("at most 8191");
    big[COFFER_SYNC_TOKEN_MAX - 1] = 0;
    assert_ok(coffer_config_set_sync_token(cfg, big)); /* the longest accepted */
    free(big);
    assert_ok(coffer_config_set_sync_token(cfg, NULL));  /* cleared */
    assert_ok(coffer_config_set_sync_token(cfg, ""));
    assert_ok(coffer_config_set_sync_token_callback(cfg, NULL, NULL));
    coffer_config_free(cfg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_a_fixed_token_is_sent_in_hello, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_token_is_refused_for_good, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_forged_token_is_refused_for_good, setup, teardown),
        cmocka_unit_test_setup_teardown(test_an_expired_fixed_token_stops_the_session, setup, teardown),
        cmocka_unit_test_setup_teardown(test_the_callback_refreshes_an_expired_token_and_reconnects, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_callback_that_refuses_stops_the_session, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_callback_without_a_token_now_is_retried, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_callback_that_overruns_its_buffer_stops_the_session, setup, teardown),
        cmocka_unit_test(test_the_setters_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
