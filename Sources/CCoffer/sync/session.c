/* session — the sync thread of a synced handle and its public controls.
 * The thread owns the connection; the app's threads only read the state and
 * wait on a condition variable that the thread signals whenever progress is
 * made. Uploads read the outbox from the file (so commits of any handle or
 * process are seen), at most CF_SYNC_FRAME_BYTES per frame and
 * CF_SYNC_WINDOW_BYTES unacknowledged; acknowledgements trim the outbox;
 * downloads are integrated and then acknowledged. */
#include "sync/session.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sync/error_report.h"
#include "sync/frames.h"
#include "sync/integrate.h"
#include "sync/record.h"
#include "sync/client_reset.h"
#include "sync/state.h"
#include "sync/subscriptions.h"
#include "util/error.h"

#define RECEIVE_MS 20           /* how long one receive waits before the outbox is looked at again */
#define WELCOME_MS 30000        /* how long the service may take to answer HELLO */
#define BACKOFF_FIRST_MS 100
#define BACKOFF_MAX_MS 30000

#define STATE_QUEUE 16 /* state changes waiting to be told to the callback */

typedef struct state_change {
    int from, to;
} state_change;

typedef struct in_flight {
    uint64_t version;
    size_t bytes;
} in_flight;

struct cf_sync_session {
    coffer_db *db;
    char *url, *partition;
    coffer_sync_transport transport;
    char *token;                  /* the fixed HELLO token, or NULL */
    coffer_sync_token_fn token_fn; /* or the callback that supplies it */
    void *token_ctx;
    coffer_sync_error_fn error_fn; /* told of every ERROR frame */
    void *error_ctx;
    coffer_client_reset_mode reset_mode; /* what CLIENT_RESET does (sync/client_reset.c) */
    coffer_client_reset_fn reset_fn;     /* told before and after a reset, or NULL */
    void *reset_ctx;
    int reset_after; /* a reset was applied: tell reset_fn once caught up */
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t cond; /* progress, state changes, stop, pause, resume */
    int stop, paused, wake;
    int resumed; /* coffer_sync_resume() since the thread last looked: start the backoff over */
    uint64_t pause_gen;         /* counts coffer_sync_pause() calls */
    uint64_t conn_gen;          /* pause_gen when the current connection began */
    int state;
    coffer_sync_state_fn state_fn; /* told of every state change, or NULL */
    void *state_ctx;
    state_change changes[STATE_QUEUE]; /* changes not told yet, oldest first */
    size_t nchanges;
    int telling;                /* `teller` is calling state_fn */
    pthread_t teller;
    int caught_up;              /* connected and every server changeset integrated */
    uint64_t idle;              /* receives that found nothing waiting while caught up */
    uint64_t acked;             /* the service has every outbox changeset up to this */
    char error[512];
    /* The thread's own. */
    void *conn;
    int refresh_token; /* the service answered TOKEN_EXPIRED: ask the callback for a fresh one */
    char *token_buf;   /* COFFER_SYNC_TOKEN_MAX bytes the callback fills */
    uint64_t sent_through;
    in_flight *flight;
    size_t nflight, flight_cap;
    size_t unacked_bytes;
    /* Flexible sync (sync/subscriptions.c), under `lock`: the latest set
     * version sent, the latest the service completed or refused (with its
     * message), and whether a commit made a set not sent yet. */
    int flexible;
    uint64_t subs_sent, subs_complete, subs_refused;
    int subs_dirty;
    char subs_error[512];
    /* Progress (coffer_sync_progress_get), under `lock`: changeset bytes
     * since the session started, per direction. `unsent` is the thread's:
     * the outbox bytes after what was sent, as last counted. */
    uint64_t transferred[2], transferable[2];
    size_t unsent;
    coffer_sync_progress_fn progress_fn;
    void *progress_ctx;
    int new_file; /* the file had no client id before this session */
};

typedef struct cf_sync_session session;

/* Sets a direction's counts and tells the callback when they changed (on
 * the session thread, without the lock). */
static void set_progress(session *s, int dir, uint64_t transferred, uint64_t transferable)
{
    if (transferable < transferred)
        transferable = transferred;
    pthread_mutex_lock(&s->lock);
    int changed = s->transferred[dir] != transferred || s->transferable[dir] != transferable;
    s->transferred[dir] = transferred;
    s->transferable[dir] = transferable;
    pthread_mutex_unlock(&s->lock);
    if (changed && s->progress_fn)
        s->progress_fn(s->progress_ctx, dir, transferred, transferable);
}

/* The upload's counts from the acknowledged bytes and what is left. */
static void upload_progress(session *s, uint64_t acked_bytes)
{
    uint64_t done = s->transferred[COFFER_SYNC_UPLOAD] + acked_bytes; /* written on this thread only */
    set_progress(s, COFFER_SYNC_UPLOAD, done, done + s->unacked_bytes + s->unsent);
}

/* ------------------------------------------------------------------------ */
/* Configuration                                                             */
/* ------------------------------------------------------------------------ */

COFFER_API coffer_status coffer_config_set_sync(coffer_config *config, const char *url, const char *partition)
{
    CHECK_CONFIG(config, "coffer_config_set_sync");
    if (url && strncmp(url, "ws://", 5) != 0 && strncmp(url, "wss://", 6) != 0)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "coffer_config_set_sync: URL '%s' is neither ws:// nor wss://", url);
    if (url && (!partition || !*partition))
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "coffer_config_set_sync: the partition is empty");
    char *u = url ? strdup(url) : NULL, *p = url ? strdup(partition) : NULL;
    if (url && (!u || !p)) {
        free(u);
        free(p);
        return cf_error(COFFER_ERR_NO_MEMORY, "out of memory");
    }
    free(config->sync_url);
    free(config->sync_partition);
    config->sync_url = u;
    config->sync_partition = p;
    return COFFER_OK;
}

COFFER_API coffer_status coffer_config_set_sync_flexible(coffer_config *config, int flexible)
{
    CHECK_CONFIG(config, "coffer_config_set_sync_flexible");
    config->sync_flexible = flexible != 0;
    return COFFER_OK;
}

COFFER_API coffer_status coffer_config_set_sync_transport(coffer_config *config, const coffer_sync_transport *transport)
{
    CHECK_CONFIG(config, "coffer_config_set_sync_transport");
    if (transport && (!transport->open || !transport->send || !transport->receive || !transport->close))
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "coffer_config_set_sync_transport: every callback is required");
    memset(&config->sync_transport, 0, sizeof config->sync_transport);
    if (transport)
        config->sync_transport = *transport;
    return COFFER_OK;
}

COFFER_API coffer_status coffer_sync_transport_fail(coffer_status status, const char *message)
{
    return cf_error(status, "%s", message ? message : "");
}

COFFER_API coffer_status coffer_config_set_sync_token(coffer_config *config, const char *token)
{
    CHECK_CONFIG(config, "coffer_config_set_sync_token");
    size_t len = token ? strlen(token) : 0;
    if (len >= COFFER_SYNC_TOKEN_MAX)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT,
                        "coffer_config_set_sync_token: the token has %zu bytes; at most %d are sent", len,
                        COFFER_SYNC_TOKEN_MAX - 1);
    char *copy = len ? strdup(token) : NULL;
    if (len && !copy)
        return cf_error(COFFER_ERR_NO_MEMORY, "out of memory");
    free(config->sync_token);
    config->sync_token = copy;
    return COFFER_OK;
}

COFFER_API coffer_status coffer_config_set_sync_state_callback(coffer_config *config, coffer_sync_state_fn fn,
                                                               void *ctx)
{
    CHECK_CONFIG(config, "coffer_config_set_sync_state_callback");
    config->sync_state_fn = fn;
    config->sync_state_ctx = fn ? ctx : NULL;
    return COFFER_OK;
}

COFFER_API coffer_status coffer_config_set_sync_token_callback(coffer_config *config, coffer_sync_token_fn fn,
                                                               void *ctx)
{
    CHECK_CONFIG(config, "coffer_config_set_sync_token_callback");
    config->sync_token_fn = fn;
    config->sync_token_ctx = fn ? ctx : NULL;
    return COFFER_OK;
}

/* ------------------------------------------------------------------------ */
/* Shared state                                                              */
/* ------------------------------------------------------------------------ */

/* Under s->lock: moves to `state`, and queues the change for the state
 * callback (a full queue folds the change into its last entry). */
static void change_state_locked(session *s, int state)
{
    if (s->state == state)
        return;
    if (s->state_fn) {
        if (s->nchanges < STATE_QUEUE)
            s->changes[s->nchanges++] = (state_change){s->state, state};
        else
            s->changes[STATE_QUEUE - 1].to = state;
    }
    s->state = state;
    if (state != COFFER_SYNC_CONNECTED)
        s->caught_up = 0;
    pthread_cond_broadcast(&s->cond);
}

/* Tells the state callback of the queued changes, in order. When this
 * thread is in the callback already (further up its stack), that call
 * tells the rest after it returns; when another thread is, this waits for
 * it to finish, so that the changes this thread made have been told when
 * this returns. Never called with s->lock held. */
static void tell_state_changes(session *s)
{
    if (!s->state_fn)
        return;
    pthread_mutex_lock(&s->lock);
    if (s->telling && pthread_equal(s->teller, pthread_self())) {
        pthread_mutex_unlock(&s->lock);
        return;
    }
    while (s->telling)
        pthread_cond_wait(&s->cond, &s->lock);
    s->telling = 1;
    s->teller = pthread_self();
    while (s->nchanges) {
        state_change c = s->changes[0];
        memmove(s->changes, s->changes + 1, --s->nchanges * sizeof *s->changes);
        if (c.from == c.to)
            continue;
        pthread_mutex_unlock(&s->lock);
        s->state_fn(s->state_ctx, c.from, c.to);
        pthread_mutex_lock(&s->lock);
    }
    s->telling = 0;
    pthread_cond_broadcast(&s->cond);
    pthread_mutex_unlock(&s->lock);
}

/* The sync thread's own state changes. A paused session stays
 * COFFER_SYNC_PAUSED whatever its connection does until it notices the
 * pause, and a connection begun before the last pause changes nothing. */
static void set_state(session *s, int state)
{
    pthread_mutex_lock(&s->lock);
    if ((!s->paused || state == COFFER_SYNC_PAUSED) && s->conn_gen == s->pause_gen)
        change_state_locked(s, state);
    pthread_mutex_unlock(&s->lock);
    tell_state_changes(s);
}

static void set_error(session *s, const char *fmt, const char *detail)
{
    pthread_mutex_lock(&s->lock);
    snprintf(s->error, sizeof s->error, fmt, detail);
    pthread_mutex_unlock(&s->lock);
}

/* The time `ms` from now, for pthread_cond_timedwait. */
static struct timespec deadline_in(uint64_t ms)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    uint64_t secs = ms / 1000;
    until.tv_sec = secs > (uint64_t)INT32_MAX ? INT32_MAX : until.tv_sec + (time_t)secs;
    until.tv_nsec += (long)(ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    return until;
}

/* Sleeps `ms` or until stopped, paused or resumed; 1 if the thread should stop. */
static int pause_for(session *s, uint64_t ms)
{
    struct timespec until = deadline_in(ms);
    pthread_mutex_lock(&s->lock);
    while (!s->stop && !s->wake && pthread_cond_timedwait(&s->cond, &s->lock, &until) != ETIMEDOUT)
        ;
    s->wake = 0;
    int stop = s->stop;
    pthread_mutex_unlock(&s->lock);
    return stop;
}

static int should_leave(session *s)
{
    pthread_mutex_lock(&s->lock);
    int leave = s->stop || s->paused || s->conn_gen != s->pause_gen;
    pthread_mutex_unlock(&s->lock);
    return leave;
}

/* ------------------------------------------------------------------------ */
/* The file                                                                  */
/* ------------------------------------------------------------------------ */

/* A write transaction for sync's own bookkeeping. */
static coffer_status begin_own(session *s, coffer_txn **txn)
{
    coffer_status st = coffer_txn_begin(s->db, COFFER_TXN_WRITE, txn);
    if (st == COFFER_OK) {
        (*txn)->log_always = 1;
        st = coffer_txn_set_origin(*txn, COFFER_ORIGIN_REMOTE);
    }
    return st;
}

/* The service has the outbox up to `version`: drop it from the file. */
static coffer_status acknowledged(session *s, uint64_t version)
{
    coffer_txn *txn;
    coffer_status st = begin_own(s, &txn);
    if (st != COFFER_OK)
        return st;
    cf_sync_progress prog;
    st = cf_sync_progress_read(txn, &prog);
    if (st == COFFER_OK && version > prog.acked_client_version) {
        prog.acked_client_version = version;
        if ((st = cf_sync_outbox_trim(txn, version)) == COFFER_OK)
            st = cf_sync_progress_write(txn, &prog);
    }
    st = cf_sync_txn_finish(txn, st);
    if (st == COFFER_OK) {
        pthread_mutex_lock(&s->lock);
        if (version > s->acked)
            s->acked = version;
        pthread_cond_broadcast(&s->cond);
        pthread_mutex_unlock(&s->lock);
    }
    return st;
}

/* The file is behind what the service has of its client id (restored from
 * a backup, or a byte copy of another file): the versions it commits next
 * would collide with versions the service already integrated from that id,
 * and be dropped as repeats. It becomes a new client: a new id, the same
 * download progress, and its outbox uploaded again under the new id (the
 * service merges what it already has as no change). */
static coffer_status become_new_client(session *s, const char *why)
{
    coffer_txn *txn;
    coffer_status st = begin_own(s, &txn);
    if (st != COFFER_OK)
        return st;
    uint8_t id[CF_SYNC_ID_SIZE];
    char *partition = NULL;
    cf_random(id, sizeof id);
    if ((st = cf_sync_partition(txn, &partition)) == COFFER_OK)
        st = cf_sync_set_identity(txn, id, partition ? partition : s->partition);
    free(partition);
    st = cf_sync_txn_finish(txn, st);
    if (st == COFFER_OK)
        set_error(s, "%s; the file now syncs as a new client", why);
    return st;
}

/* ------------------------------------------------------------------------ */
/* Frames                                                                    */
/* ------------------------------------------------------------------------ */

static coffer_status send_frame(session *s, const cf_buf *b)
{
    if (b->failed)
        return cf_error(COFFER_ERR_NO_MEMORY, "out of memory building a sync frame");
    coffer_status st = s->transport.send(s->transport.ctx, s->conn, b->p, b->len);
    if (st != COFFER_OK && !coffer_last_error()[0])
        cf_error(st, "the sync transport failed to send a frame");
    return st;
}

/* Stops the session until resume(): the error (just set) first, so that a
 * thread that sees COFFER_SYNC_FAILED also sees why. */
static coffer_status refused_for_good(session *s, coffer_status st)
{
    set_error(s, "%s", coffer_last_error());
    set_state(s, COFFER_SYNC_FAILED);
    return st;
}

/* The token for the next HELLO: the callback's (fresh after TOKEN_EXPIRED),
 * else the fixed one, else "". A callback that refuses stops the session. */
static coffer_status hello_token(session *s, const char **out)
{
    if (!s->token_fn) {
        *out = s->token ? s->token : "";
        return COFFER_OK;
    }
    memset(s->token_buf, 0, COFFER_SYNC_TOKEN_MAX);
    coffer_clear_error();
    coffer_status st = s->token_fn(s->token_ctx, s->refresh_token, s->token_buf, COFFER_SYNC_TOKEN_MAX);
    if (st == COFFER_OK) {
        if (!memchr(s->token_buf, 0, COFFER_SYNC_TOKEN_MAX))
            return refused_for_good(s, cf_error(COFFER_ERR_MISUSE,
                                                "the sync token callback wrote a token of %d bytes or more, without its NUL",
                                                COFFER_SYNC_TOKEN_MAX));
        s->refresh_token = 0;
        *out = s->token_buf;
        return COFFER_OK;
    }
    const char *detail = coffer_last_error()[0] ? coffer_last_error() : "no message";
    char why[300];
    snprintf(why, sizeof why, "%s", detail);
    if (st == COFFER_ERR_IO || st == COFFER_ERR_TIMEOUT)
        return cf_error(COFFER_ERR_IO, "the sync token callback has no token now (status %d: %s); retrying", st, why);
    return refused_for_good(
        s, cf_error(COFFER_ERR_MISUSE, "the sync token callback refused to supply a token (status %d: %s)", st, why));
}

/* Sends SUBSCRIBE with the file's latest subscription set. */
static coffer_status send_subscriptions(session *s)
{
    pthread_mutex_lock(&s->lock);
    s->subs_dirty = 0;
    pthread_mutex_unlock(&s->lock);
    cf_buf b = {0};
    uint64_t version = 0;
    coffer_status st = cf_subs_subscribe_frame(s->db, &b, &version);
    if (st == COFFER_OK)
        st = send_frame(s, &b);
    free(b.p);
    if (st == COFFER_OK) {
        pthread_mutex_lock(&s->lock);
        s->subs_sent = version;
        pthread_mutex_unlock(&s->lock);
    }
    return st;
}

/* Records the service's answer to subscription set `version`: complete, or
 * refused with `message`; wakes the waiters. */
static coffer_status subscriptions_answered(session *s, uint64_t version, int state, const char *message)
{
    coffer_txn *txn;
    coffer_status st = begin_own(s, &txn);
    if (st != COFFER_OK)
        return st;
    st = cf_sync_txn_finish(txn, cf_subs_record(txn, version, state, message));
    pthread_mutex_lock(&s->lock);
    if (state == COFFER_SUBSCRIPTION_COMPLETE && version > s->subs_complete)
        s->subs_complete = version;
    if (state == COFFER_SUBSCRIPTION_ERROR && version >= s->subs_refused) {
        s->subs_refused = version;
        snprintf(s->subs_error, sizeof s->subs_error, "%s", message);
    }
    pthread_cond_broadcast(&s->cond);
    pthread_mutex_unlock(&s->lock);
    return st;
}

static coffer_status send_hello(session *s)
{
    coffer_txn *txn;
    coffer_status st = coffer_txn_begin(s->db, COFFER_TXN_READ, &txn);
    if (st != COFFER_OK)
        return st;
    uint8_t client[CF_SYNC_ID_SIZE];
    int has;
    cf_sync_progress prog;
    if ((st = cf_sync_client_id(txn, client, &has)) == COFFER_OK)
        st = cf_sync_progress_read(txn, &prog);
    coffer_txn_free(txn);
    if (st != COFFER_OK)
        return st;
    const char *token = "";
    if ((st = hello_token(s, &token)) != COFFER_OK)
        return st;
    cf_buf schema = {0}, b = {0};
    cf_wire_schema_encode(s->db->schema, &schema);
    cf_frame_hello_encode_version(&b, s->flexible ? CF_SYNC_PROTOCOL_FLEXIBLE : CF_SYNC_PROTOCOL_PROGRESS, client,
                                  s->partition, token, prog.server_version, schema.p, schema.len);
    b.failed |= schema.failed;
    st = send_frame(s, &b);
    free(schema.p);
    free(b.p);
    /* A flexible client's subscriptions follow its HELLO. */
    if (st == COFFER_OK && s->flexible)
        st = send_subscriptions(s);
    return st;
}

typedef struct upload_batch {
    cf_buf body;
    uint64_t count;
    uint64_t last;
    size_t budget; /* bytes still allowed unacknowledged */
    in_flight *flight;
    size_t nflight, cap;
    int failed;
    int full;    /* the batch takes no more: the rest is only counted */
    size_t rest; /* outbox bytes after the batch */
} upload_batch;

static int add_to_batch(void *ctx, uint64_t version, const uint8_t *cs, size_t len)
{
    upload_batch *u = ctx;
    (void)version;
    /* A changeset larger than a frame goes alone. */
    if (u->full || (u->count && (u->body.len + len > CF_SYNC_FRAME_BYTES || len > u->budget)) ||
        (!u->count && len > u->budget && u->budget < CF_SYNC_WINDOW_BYTES) /* wait for acknowledgements */) {
        u->full = 1;
        u->rest += len;
        return 0;
    }
    in_flight *f = cf_grow(u->flight, u->nflight, &u->cap, sizeof *f, 16);
    if (!f) {
        u->failed = 1;
        return 1;
    }
    u->flight = f;
    f[u->nflight++] = (in_flight){version, len};
    cf_buf_put(&u->body, cs, len);
    u->count++;
    u->last = version;
    u->budget = len > u->budget ? 0 : u->budget - len;
    u->full = u->body.len >= CF_SYNC_FRAME_BYTES;
    return 0;
}

/* Sends what the window allows of the outbox after what was sent. */
static coffer_status upload_some(session *s)
{
    while (s->unacked_bytes < CF_SYNC_WINDOW_BYTES) {
        upload_batch u = {.budget = CF_SYNC_WINDOW_BYTES - s->unacked_bytes};
        coffer_txn *txn;
        coffer_status st = coffer_txn_begin(s->db, COFFER_TXN_READ, &txn);
        if (st != COFFER_OK)
            return st;
        st = cf_sync_outbox_each(txn, s->sent_through, add_to_batch, &u);
        coffer_txn_free(txn);
        if (st == COFFER_OK && u.failed)
            st = cf_error(COFFER_ERR_NO_MEMORY, "out of memory building an upload");
        if (st == COFFER_OK && u.count) {
            cf_buf b = {0};
            cf_frame_upload_encode(&b, u.count, u.body.p, u.body.len);
            st = send_frame(s, &b);
            free(b.p);
        }
        for (size_t i = 0; st == COFFER_OK && i < u.nflight; i++) {
            in_flight *f = cf_grow(s->flight, s->nflight, &s->flight_cap, sizeof *f, 16);
            if (!f) {
                st = cf_error(COFFER_ERR_NO_MEMORY, "out of memory");
                break;
            }
            s->flight = f;
            f[s->nflight++] = u.flight[i];
            s->unacked_bytes += u.flight[i].bytes;
        }
        if (st == COFFER_OK && u.count)
            s->sent_through = u.last;
        if (st == COFFER_OK) {
            s->unsent = u.rest;
            upload_progress(s, 0);
        }
        free(u.flight);
        free(u.body.p);
        if (st != COFFER_OK || !u.count)
            return st;
    }
    return COFFER_OK;
}

static void forget_in_flight(session *s, uint64_t through)
{
    size_t k = 0;
    uint64_t acked = 0;
    for (size_t i = 0; i < s->nflight; i++) {
        if (s->flight[i].version <= through) {
            s->unacked_bytes -= s->flight[i].bytes;
            acked += s->flight[i].bytes;
        } else
            s->flight[k++] = s->flight[i];
    }
    s->nflight = k;
    upload_progress(s, acked);
}

/* The service's ERROR frame: retry later, or stop for good. */
static coffer_status on_error_frame(session *s, const cf_frame_error *e)
{
    char msg[400];
    snprintf(msg, sizeof msg, "%s: %.*s", cf_sync_error_name(e->code), (int)(e->message.n > 300 ? 300 : e->message.n),
             (const char *)e->message.p);
    cf_sync_report_error(s->error_fn, s->error_ctx, e);
    if (e->code == CF_SYNC_ERR_SUBSCRIPTION && !e->fatal) {
        /* The set is refused; the service goes on with the one before. */
        char why[400];
        snprintf(why, sizeof why, "%.*s", (int)(e->message.n > 390 ? 390 : e->message.n), (const char *)e->message.p);
        return subscriptions_answered(s, e->set_version, COFFER_SUBSCRIPTION_ERROR, why);
    }
    if (e->code == CF_SYNC_ERR_COMPENSATING_WRITE && !e->fatal) {
        /* The write was refused; the service's state of the object follows in a download. */
        set_error(s, "%s", msg);
        return COFFER_OK;
    }
    if (e->code == CF_SYNC_ERR_CLIENT_RESET && s->reset_mode != COFFER_CLIENT_RESET_MANUAL) {
        if (s->reset_fn)
            s->reset_fn(s->reset_ctx, s->db, 0);
        coffer_status st = cf_sync_client_reset_apply(s->db, s->reset_mode, s->partition);
        if (st != COFFER_OK)
            return refused_for_good(s, st);
        s->reset_after = 1;
        cf_error(COFFER_ERR_IO, "client reset (%s): %s", cf_sync_client_reset_name(s->reset_mode), msg);
        set_error(s, "%s", coffer_last_error());
        return COFFER_ERR_IO;
    }
    if (e->code == CF_SYNC_ERR_TOKEN_EXPIRED && s->token_fn) {
        /* The callback refreshes it before the next HELLO. */
        s->refresh_token = 1;
        return cf_error(COFFER_ERR_IO, "the sync service refused the session: %s; refreshing the token", msg);
    }
    set_error(s, "the sync service refused the session: %s", msg);
    int retry = e->code == CF_SYNC_ERR_OVERLOADED || e->code == CF_SYNC_ERR_INTERNAL || !e->fatal;
    if (!retry) {
        set_state(s, COFFER_SYNC_FAILED);
        return cf_error(COFFER_ERR_MISUSE, "the sync service refused the session: %s", msg);
    }
    return cf_error(COFFER_ERR_IO, "the sync service refused the session: %s", msg);
}

/* A caught-up DOWNLOAD (count 0): the file has every other client's change
 * up to the frame's latest server version, and its own are applied, so its
 * progress moves there. A copy of the file for bundling then starts from the
 * service's state as it was, its own uploads included (docs/SYNC.md,
 * "Bundled files"). */
static coffer_status caught_up_through(session *s, uint64_t latest)
{
    coffer_txn *txn;
    coffer_status st = coffer_txn_begin(s->db, COFFER_TXN_READ, &txn);
    cf_sync_progress prog;
    if (st == COFFER_OK)
        st = cf_sync_progress_read(txn, &prog);
    coffer_txn_free(txn);
    if (st != COFFER_OK || latest <= prog.server_version)
        return st;
    if ((st = begin_own(s, &txn)) != COFFER_OK)
        return st;
    if ((st = cf_sync_progress_read(txn, &prog)) == COFFER_OK && latest > prog.server_version) {
        prog.server_version = latest;
        st = cf_sync_progress_write(txn, &prog);
    }
    return cf_sync_txn_finish(txn, st);
}

static coffer_status on_download(session *s, const cf_frame_download *d)
{
    uint64_t through = 0, bytes = 0;
    coffer_status st = COFFER_OK;
    for (size_t i = 0; i < d->count; i++)
        bytes += d->changesets[i].len;
    if (!d->count)
        st = caught_up_through(s, d->latest_server_version);
    if (st == COFFER_OK && d->count) {
        if ((st = cf_sync_integrate(s->db, d->changesets, d->count, &through)) != COFFER_OK)
            return st;
        cf_buf b = {0};
        cf_frame_download_ack_encode(&b, through);
        st = send_frame(s, &b);
        free(b.p);
    }
    int done = d->count == 0 || d->changesets[d->count - 1].server_version >= d->latest_server_version;
    /* Caught up: nothing is left, whatever was announced (read rules may
     * have made the changesets smaller than the service counted). */
    uint64_t got = s->transferred[COFFER_SYNC_DOWNLOAD] + bytes;
    set_progress(s, COFFER_SYNC_DOWNLOAD, got, done ? got : s->transferable[COFFER_SYNC_DOWNLOAD]);
    if (st == COFFER_OK && done && s->reset_after) {
        s->reset_after = 0;
        if (s->reset_fn)
            s->reset_fn(s->reset_ctx, s->db, 1);
    }
    pthread_mutex_lock(&s->lock);
    s->caught_up = done;
    pthread_cond_broadcast(&s->cond);
    pthread_mutex_unlock(&s->lock);
    return st;
}

/* Handles one received frame. */
static coffer_status on_frame(session *s, const uint8_t *data, size_t size)
{
    cf_frame f;
    coffer_status st = cf_frame_decode(data, size, &f);
    if (st != COFFER_OK)
        return st;
    switch (f.type) {
    case CF_FRAME_UPLOAD_ACK:
        forget_in_flight(s, f.u.upload_ack.last_client_version);
        st = acknowledged(s, f.u.upload_ack.last_client_version);
        break;
    case CF_FRAME_DOWNLOAD:
        st = on_download(s, &f.u.download);
        break;
    case CF_FRAME_ERROR:
        st = on_error_frame(s, &f.u.error);
        break;
    case CF_FRAME_SUBSCRIPTION_COMPLETE:
        st = subscriptions_answered(s, f.u.subscription_complete.set_version, COFFER_SUBSCRIPTION_COMPLETE, "");
        break;
    case CF_FRAME_PROGRESS:
        set_progress(s, COFFER_SYNC_DOWNLOAD, s->transferred[COFFER_SYNC_DOWNLOAD],
                     s->transferred[COFFER_SYNC_DOWNLOAD] + f.u.progress);
        break;
    default:
        st = cf_error(COFFER_ERR_CORRUPTED, "the sync service sent a frame of type %u in a session", f.type);
        break;
    }
    cf_frame_free(&f);
    return st;
}

/* The file's newest committed version. */
static coffer_status current_version(session *s, uint64_t *out)
{
    coffer_txn *txn;
    coffer_status st = coffer_txn_begin(s->db, COFFER_TXN_READ, &txn);
    if (st != COFFER_OK)
        return st;
    st = coffer_txn_version(txn, out);
    coffer_txn_free(txn);
    return st;
}

/* Waits for WELCOME (or ERROR) after HELLO. */
static coffer_status welcome(session *s)
{
    uint64_t waited = 0;
    for (;;) {
        const uint8_t *data;
        size_t size;
        coffer_status st = s->transport.receive(s->transport.ctx, s->conn, 100, &data, &size);
        if (st == COFFER_ERR_TIMEOUT) {
            if ((waited += 100) >= WELCOME_MS)
                return cf_error(COFFER_ERR_IO, "the sync service did not answer HELLO in %d s", WELCOME_MS / 1000);
            if (should_leave(s))
                return COFFER_ERR_TIMEOUT;
            continue;
        }
        if (st != COFFER_OK)
            return st;
        cf_frame f;
        if ((st = cf_frame_decode(data, size, &f)) != COFFER_OK)
            return st;
        if (f.type == CF_FRAME_ERROR)
            st = on_error_frame(s, &f.u.error);
        else if (f.type != CF_FRAME_WELCOME)
            st = cf_error(COFFER_ERR_CORRUPTED, "the sync service answered HELLO with a frame of type %u", f.type);
        /* A partition-based session also takes a version 2 answer: no PROGRESS frames then. */
        else if (s->flexible ? f.u.welcome.protocol != CF_SYNC_PROTOCOL_FLEXIBLE
                             : f.u.welcome.protocol != CF_SYNC_PROTOCOL_PROGRESS &&
                                   f.u.welcome.protocol != CF_SYNC_PROTOCOL)
            st = cf_error(COFFER_ERR_CORRUPTED, "the sync service speaks protocol %llu, not %u",
                          (unsigned long long)f.u.welcome.protocol,
                          s->flexible ? CF_SYNC_PROTOCOL_FLEXIBLE : CF_SYNC_PROTOCOL_PROGRESS);
        else {
            /* Changesets up to its last integrated version arrived before a lost acknowledgement. */
            uint64_t last = f.u.welcome.last_client_version, version = 0;
            if ((st = current_version(s, &version)) == COFFER_OK && last > version) {
                if ((st = become_new_client(s, "the sync service has versions of this client the file never made "
                                               "(restored from a backup?)")) == COFFER_OK)
                    st = cf_error(COFFER_ERR_IO, "the file is behind the sync service's record of its client: "
                                                 "it syncs again as a new client");
            } else if (st == COFFER_OK) {
                st = acknowledged(s, last);
                s->sent_through = last;
            }
        }
        cf_frame_free(&f);
        return st;
    }
}

/* One connection, from open to close. */
static coffer_status connection(session *s, int *connected)
{
    pthread_mutex_lock(&s->lock);
    s->conn_gen = s->pause_gen;
    pthread_mutex_unlock(&s->lock);
    set_state(s, COFFER_SYNC_CONNECTING);
    coffer_clear_error();
    coffer_status st = s->transport.open(s->transport.ctx, s->url, &s->conn);
    if (st != COFFER_OK) {
        s->conn = NULL;
        if (!coffer_last_error()[0])
            cf_error(st, "the sync transport could not connect to %s (status %d)", s->url, st);
        return st;
    }
    s->sent_through = 0;
    s->nflight = 0;
    s->unacked_bytes = 0;
    if ((st = send_hello(s)) == COFFER_OK)
        st = welcome(s);
    if (st == COFFER_OK) {
        *connected = 1;
        set_state(s, COFFER_SYNC_CONNECTED);
        set_error(s, "%s", "");
    }
    while (st == COFFER_OK && !should_leave(s)) {
        pthread_mutex_lock(&s->lock);
        int resubscribe = s->subs_dirty;
        pthread_mutex_unlock(&s->lock);
        if (resubscribe && (st = send_subscriptions(s)) != COFFER_OK)
            break;
        if ((st = upload_some(s)) != COFFER_OK)
            break;
        const uint8_t *data;
        size_t size;
        st = s->transport.receive(s->transport.ctx, s->conn, RECEIVE_MS, &data, &size);
        if (st == COFFER_ERR_TIMEOUT) {
            /* Nothing waits: whatever the service sent before now is integrated. */
            pthread_mutex_lock(&s->lock);
            if (s->caught_up) {
                s->idle++;
                pthread_cond_broadcast(&s->cond);
            }
            pthread_mutex_unlock(&s->lock);
            st = COFFER_OK;
            continue;
        }
        if (st == COFFER_OK)
            st = on_frame(s, data, size);
    }
    s->transport.close(s->transport.ctx, s->conn);
    s->conn = NULL;
    return st == COFFER_ERR_TIMEOUT ? COFFER_OK : st;
}

static void *run(void *arg)
{
    session *s = arg;
    uint64_t backoff = BACKOFF_FIRST_MS;
    for (;;) {
        pthread_mutex_lock(&s->lock);
        while (s->paused && !s->stop) {
            change_state_locked(s, COFFER_SYNC_PAUSED);
            s->caught_up = 0;
            backoff = BACKOFF_FIRST_MS;
            pthread_mutex_unlock(&s->lock);
            tell_state_changes(s);
            pthread_mutex_lock(&s->lock);
            if (!s->paused || s->stop)
                break;
            pthread_cond_wait(&s->cond, &s->lock);
        }
        int stop = s->stop, failed = s->state == COFFER_SYNC_FAILED;
        pthread_mutex_unlock(&s->lock);
        if (stop)
            break;
        if (failed) { /* refused for good: wait for resume or close */
            pthread_mutex_lock(&s->lock);
            while (!s->stop && !s->wake)
                pthread_cond_wait(&s->cond, &s->lock);
            s->wake = 0;
            if (!s->stop && !s->paused)
                change_state_locked(s, COFFER_SYNC_DISCONNECTED);
            pthread_mutex_unlock(&s->lock);
            tell_state_changes(s);
            continue;
        }
        int connected = 0;
        coffer_status st = connection(s, &connected);
        if (connected)
            backoff = BACKOFF_FIRST_MS;
        if (st != COFFER_OK && coffer_last_error()[0])
            set_error(s, "%s", coffer_last_error());
        pthread_mutex_lock(&s->lock);
        int refused = s->state == COFFER_SYNC_FAILED;
        /* Left for a pause that a resume has undone already: connect again at once. */
        int repaused = s->conn_gen != s->pause_gen;
        if (!refused && !s->paused && !repaused)
            change_state_locked(s, COFFER_SYNC_DISCONNECTED);
        s->caught_up = 0;
        pthread_cond_broadcast(&s->cond);
        int again = s->paused || refused || repaused;
        pthread_mutex_unlock(&s->lock);
        tell_state_changes(s);
        if (!again && pause_for(s, backoff))
            break;
        backoff = backoff * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : backoff * 2;
        pthread_mutex_lock(&s->lock);
        if (s->resumed) /* a resume reconnects at once and starts the backoff over */
            backoff = BACKOFF_FIRST_MS;
        s->resumed = 0;
        pthread_mutex_unlock(&s->lock);
    }
    return NULL;
}

/* ------------------------------------------------------------------------ */
/* Starting and stopping                                                     */
/* ------------------------------------------------------------------------ */

static void free_session(session *s)
{
    pthread_mutex_destroy(&s->lock);
    pthread_cond_destroy(&s->cond);
    free(s->flight);
    free(s->url);
    free(s->partition);
    free(s->token);
    free(s->token_buf);
    free(s);
}

coffer_status cf_sync_session_start(coffer_db *db, const coffer_config *config)
{
    if (db->read_only)
        return cf_error(COFFER_ERR_READ_ONLY, "a read-only handle cannot sync");
    if (!config->sync_transport.open && strncmp(config->sync_url, "wss://", 6) == 0)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT,
                        "sync URL '%s': the built-in transport has no TLS; a wss:// URL needs a transport that "
                        "speaks TLS (coffer_config_set_sync_transport)",
                        config->sync_url);
    /* A file that never synced (coffer_config_set_sync_download_before_open, ONCE). */
    int new_file = 0;
    coffer_txn *check;
    coffer_status st = coffer_txn_begin(db, COFFER_TXN_READ, &check);
    if (st == COFFER_OK) {
        uint8_t id[CF_SYNC_ID_SIZE];
        int has = 0;
        st = cf_sync_client_id(check, id, &has);
        coffer_txn_free(check);
        new_file = !has;
    }
    if (st != COFFER_OK || (st = cf_sync_enable(db, config->sync_partition)) != COFFER_OK)
        return st;
    session *s = calloc(1, sizeof *s);
    if (!s || !(s->url = strdup(config->sync_url)) || !(s->partition = strdup(config->sync_partition)) ||
        (config->sync_token && !(s->token = strdup(config->sync_token))) ||
        (config->sync_token_fn && !(s->token_buf = malloc(COFFER_SYNC_TOKEN_MAX)))) {
        if (s) {
            free(s->url);
            free(s->partition);
            free(s->token);
            free(s);
        }
        return cf_error(COFFER_ERR_NO_MEMORY, "out of memory starting a sync session");
    }
    s->token_fn = config->sync_token_fn;
    s->token_ctx = config->sync_token_ctx;
    s->state_fn = config->sync_state_fn;
    s->state_ctx = config->sync_state_ctx;
    s->error_fn = config->sync_error_fn;
    s->error_ctx = config->sync_error_ctx;
    s->progress_fn = config->sync_progress_fn;
    s->progress_ctx = config->sync_progress_ctx;
    s->reset_mode = config->sync_reset_mode;
    s->reset_fn = config->sync_reset_fn;
    s->reset_ctx = config->sync_reset_ctx;
    s->flexible = config->sync_flexible;
    s->new_file = new_file;
    s->db = db;
    s->transport = config->sync_transport.open ? config->sync_transport : cf_websocket_transport;
    s->state = COFFER_SYNC_CONNECTING;
    pthread_mutex_init(&s->lock, NULL);
    pthread_cond_init(&s->cond, NULL);
    coffer_txn *txn;
    cf_sync_progress prog = {0};
    if ((st = coffer_txn_begin(db, COFFER_TXN_READ, &txn)) == COFFER_OK) {
        st = cf_sync_progress_read(txn, &prog);
        coffer_txn_free(txn);
    }
    s->acked = prog.acked_client_version;
    if (st == COFFER_OK && pthread_create(&s->thread, NULL, run, s) != 0)
        st = cf_error(COFFER_ERR_NO_MEMORY, "cannot start the sync thread");
    if (st != COFFER_OK) {
        free_session(s);
        return st;
    }
    db->sync = s;
    return COFFER_OK;
}

void cf_sync_session_stop(coffer_db *db)
{
    session *s = db->sync;
    if (!s)
        return;
    pthread_mutex_lock(&s->lock);
    s->stop = 1;
    pthread_cond_broadcast(&s->cond);
    pthread_mutex_unlock(&s->lock);
    pthread_join(s->thread, NULL);
    pthread_mutex_lock(&s->lock);
    change_state_locked(s, COFFER_SYNC_OFF);
    pthread_mutex_unlock(&s->lock);
    tell_state_changes(s);
    db->sync = NULL;
    free_session(s);
}

/* ------------------------------------------------------------------------ */
/* The public controls                                                       */
/* ------------------------------------------------------------------------ */

static coffer_status session_of(coffer_db *db, const char *fn, session **out)
{
    if (!db || db->magic != CF_DB_MAGIC || db->closed)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "%s: the database handle is NULL or closed", fn);
    if (!db->sync)
        return cf_error(COFFER_ERR_MISUSE, "%s: this handle does not sync (see coffer_config_set_sync)", fn);
    *out = db->sync;
    return COFFER_OK;
}

COFFER_API int coffer_sync_state(coffer_db *db)
{
    if (!db || db->magic != CF_DB_MAGIC || db->closed || !db->sync)
        return COFFER_SYNC_OFF;
    session *s = db->sync;
    pthread_mutex_lock(&s->lock);
    int state = s->state;
    pthread_mutex_unlock(&s->lock);
    return state;
}

COFFER_API coffer_status coffer_sync_error(coffer_db *db, char *buf, size_t size)
{
    session *s = NULL;
    coffer_status st = session_of(db, "coffer_sync_error", &s);
    if (st != COFFER_OK)
        return st;
    if (!buf || !size)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "coffer_sync_error: no buffer");
    pthread_mutex_lock(&s->lock);
    snprintf(buf, size, "%s", s->error);
    pthread_mutex_unlock(&s->lock);
    return COFFER_OK;
}

typedef struct last_ctx {
    uint64_t last;
} last_ctx;

static int note_last(void *ctx, uint64_t version, const uint8_t *cs, size_t len)
{
    (void)cs;
    (void)len;
    ((last_ctx *)ctx)->last = version;
    return 0;
}

/* Waits on the session's condition until `done` holds or the timeout. */
static coffer_status wait_until(session *s, uint64_t timeout_ms, int (*done)(session *, uint64_t), uint64_t arg,
                                const char *what)
{
    struct timespec until = deadline_in(timeout_ms);
    coffer_status st = COFFER_OK;
    pthread_mutex_lock(&s->lock);
    while (!done(s, arg)) {
        if (s->state == COFFER_SYNC_FAILED) {
            st = cf_error(COFFER_ERR_MISUSE, "%s: %s", what, s->error);
            break;
        }
        if (pthread_cond_timedwait(&s->cond, &s->lock, &until) == ETIMEDOUT && !done(s, arg)) {
            st = cf_error(COFFER_ERR_TIMEOUT, "%s did not finish in %llu ms (sync state %d%s%s)", what,
                          (unsigned long long)timeout_ms, s->state, s->error[0] ? ": " : "", s->error);
            break;
        }
    }
    pthread_mutex_unlock(&s->lock);
    return st;
}

static int uploaded(session *s, uint64_t target) { return s->acked >= target; }
static int downloaded(session *s, uint64_t idle_before)
{
    return s->state == COFFER_SYNC_CONNECTED && s->caught_up && s->idle > idle_before;
}

COFFER_API coffer_status coffer_sync_wait_for_upload(coffer_db *db, uint64_t timeout_ms)
{
    session *s = NULL;
    coffer_status st = session_of(db, "coffer_sync_wait_for_upload", &s);
    if (st != COFFER_OK)
        return st;
    coffer_txn *txn;
    last_ctx last = {0};
    if ((st = coffer_txn_begin(db, COFFER_TXN_READ, &txn)) != COFFER_OK)
        return st;
    st = cf_sync_outbox_each(txn, 0, note_last, &last);
    coffer_txn_free(txn);
    if (st != COFFER_OK || !last.last)
        return st;
    return wait_until(s, timeout_ms, uploaded, last.last, "waiting for the upload");
}

COFFER_API coffer_status coffer_sync_wait_for_download(coffer_db *db, uint64_t timeout_ms)
{
    session *s = NULL;
    coffer_status st = session_of(db, "coffer_sync_wait_for_download", &s);
    if (st != COFFER_OK)
        return st;
    pthread_mutex_lock(&s->lock);
    uint64_t idle = s->idle;
    pthread_mutex_unlock(&s->lock);
    return wait_until(s, timeout_ms, downloaded, idle, "waiting for the download");
}

/* Sets the pause flag (resume also wakes a thread waiting out a backoff or a refusal). */
static coffer_status set_paused(coffer_db *db, const char *fn, int paused)
{
    session *s = NULL;
    coffer_status st = session_of(db, fn, &s);
    if (st != COFFER_OK)
        return st;
    pthread_mutex_lock(&s->lock);
    if (paused) {
        if (!s->paused)
            s->pause_gen++;
        s->paused = 1;
        change_state_locked(s, COFFER_SYNC_PAUSED);
    } else {
        s->paused = 0;
        s->wake = 1;
        s->resumed = 1;
        if (s->state == COFFER_SYNC_FAILED) /* try again: the service may have been fixed */
            change_state_locked(s, COFFER_SYNC_DISCONNECTED);
    }
    pthread_cond_broadcast(&s->cond);
    pthread_mutex_unlock(&s->lock);
    tell_state_changes(s);
    return COFFER_OK;
}

COFFER_API coffer_status coffer_sync_pause(coffer_db *db)
{
    return set_paused(db, "coffer_sync_pause", 1);
}

COFFER_API coffer_status coffer_sync_resume(coffer_db *db)
{
    return set_paused(db, "coffer_sync_resume", 0);
}

typedef struct byte_sum {
    uint64_t bytes;
} byte_sum;

static int add_len(void *ctx, uint64_t version, const uint8_t *cs, size_t len)
{
    (void)version;
    (void)cs;
    ((byte_sum *)ctx)->bytes += len;
    return 0;
}

COFFER_API coffer_status coffer_sync_progress_get(coffer_db *db, int direction, uint64_t *transferred,
                                                  uint64_t *transferable)
{
    const char *fn = "coffer_sync_progress_get";
    session *s = NULL;
    coffer_status st = session_of(db, fn, &s);
    if (st != COFFER_OK)
        return st;
    if (direction != COFFER_SYNC_UPLOAD && direction != COFFER_SYNC_DOWNLOAD)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "%s: direction %d is neither COFFER_SYNC_UPLOAD (0) nor "
                                                     "COFFER_SYNC_DOWNLOAD (1)", fn, direction);
    pthread_mutex_lock(&s->lock);
    uint64_t done = s->transferred[direction], total = s->transferable[direction];
    pthread_mutex_unlock(&s->lock);
    if (direction == COFFER_SYNC_UPLOAD) {
        /* What is left is the outbox, read now: commits made while paused count. */
        coffer_txn *txn;
        byte_sum left = {0};
        if ((st = coffer_txn_begin(db, COFFER_TXN_READ, &txn)) != COFFER_OK)
            return st;
        st = cf_sync_outbox_each(txn, 0, add_len, &left);
        coffer_txn_free(txn);
        if (st != COFFER_OK)
            return st;
        total = done + left.bytes;
    }
    if (transferred)
        *transferred = done;
    if (transferable)
        *transferable = total;
    return COFFER_OK;
}

coffer_status cf_sync_session_download_before_open(coffer_db *db, const coffer_config *config)
{
    session *s = db->sync;
    int mode = config->sync_download_before_open;
    if (!s || mode == COFFER_SYNC_DOWNLOAD_NEVER || (mode == COFFER_SYNC_DOWNLOAD_ONCE && !s->new_file))
        return COFFER_OK;
    uint64_t timeout = config->sync_download_timeout_ms ? config->sync_download_timeout_ms : UINT64_MAX / 2;
    pthread_mutex_lock(&s->lock);
    uint64_t idle = s->idle;
    pthread_mutex_unlock(&s->lock);
    return wait_until(s, timeout, downloaded, idle, "downloading before open");
}

/* ------------------------------------------------------------------------ */
/* Flexible sync                                                             */
/* ------------------------------------------------------------------------ */

uint64_t cf_sync_session_subscriptions_sent(coffer_db *db)
{
    session *s = db->sync;
    if (!s || !s->flexible)
        return 0;
    pthread_mutex_lock(&s->lock);
    uint64_t sent = s->subs_sent;
    pthread_mutex_unlock(&s->lock);
    return sent;
}

void cf_sync_session_subscriptions_changed(coffer_db *db)
{
    session *s = db->sync;
    if (!s || !s->flexible)
        return;
    pthread_mutex_lock(&s->lock);
    s->subs_dirty = 1;
    pthread_cond_broadcast(&s->cond);
    pthread_mutex_unlock(&s->lock);
}

COFFER_API coffer_status coffer_subscriptions_wait(coffer_db *db, uint64_t version, uint64_t timeout_ms)
{
    const char *fn = "coffer_subscriptions_wait";
    session *s = NULL;
    coffer_status st = session_of(db, fn, &s);
    if (st != COFFER_OK)
        return st;
    if (!s->flexible)
        return cf_error(COFFER_ERR_MISUSE, "%s: this handle syncs a partition, not subscriptions "
                                           "(see coffer_config_set_sync_flexible)", fn);
    coffer_subscription_set *latest;
    if ((st = coffer_subscriptions_latest(db, &latest)) != COFFER_OK)
        return st;
    uint64_t newest = coffer_subscription_set_version(latest);
    int state = coffer_subscription_set_state(latest);
    if (version == newest && state == COFFER_SUBSCRIPTION_ERROR)
        st = cf_error(COFFER_ERR_QUERY, "subscription set %llu was refused: %s", (unsigned long long)version,
                      coffer_subscription_set_error(latest));
    coffer_subscription_set_free(latest);
    if (st != COFFER_OK)
        return st;
    if (version > newest)
        return cf_error(COFFER_ERR_MISUSE, "%s: subscription set %llu was never committed (the latest is %llu)", fn,
                        (unsigned long long)version, (unsigned long long)newest);
    /* Complete in the file (an earlier session, or the empty set of version 0). */
    if (version == newest && state == COFFER_SUBSCRIPTION_COMPLETE)
        return COFFER_OK;
    struct timespec until = deadline_in(timeout_ms);
    pthread_mutex_lock(&s->lock);
    for (;;) {
        if (s->subs_complete >= version) {
            st = COFFER_OK;
            break;
        }
        if (s->subs_refused == version) {
            st = cf_error(COFFER_ERR_QUERY, "subscription set %llu was refused: %s", (unsigned long long)version,
                          s->subs_error);
            break;
        }
        if (pthread_cond_timedwait(&s->cond, &s->lock, &until) == ETIMEDOUT) {
            st = cf_error(COFFER_ERR_TIMEOUT, "%s: subscription set %llu is not complete after %llu ms", fn,
                          (unsigned long long)version, (unsigned long long)timeout_ms);
            break;
        }
    }
    pthread_mutex_unlock(&s->lock);
    return st;
}
