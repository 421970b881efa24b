/* observe_recorder — the recording callbacks and waits declared in
 * observe_recorder.h. */
#define _GNU_SOURCE
#include "observe_recorder.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

void recorder_init(recorder *r)
{
    memset(r, 0, sizeof *r);
    pthread_mutex_init(&r->lock, NULL);
    pthread_cond_init(&r->cond, NULL);
}

void recorder_destroy(recorder *r)
{
    pthread_mutex_destroy(&r->lock);
    pthread_cond_destroy(&r->cond);
}

void recorder_stop(recorder *r)
{
    coffer_token_stop(r->token);
    recorder_destroy(r);
}

static seen_call *begin_call(recorder *r)
{
    pthread_mutex_lock(&r->lock);
    assert_true(r->ncalls < MAX_SEEN);
    seen_call *c = &r->calls[r->ncalls];
    memset(c, 0, sizeof *c);
    c->thread = pthread_self();
    return c;
}

/* begin_call() for the callbacks told a change set: `changes` NULL is the
 * initial call. */
static seen_call *begin_change(recorder *r, coffer_txn *txn, const void *changes)
{
    assert_non_null(txn);
    seen_call *c = begin_call(r);
    c->initial = changes == NULL;
    return c;
}

static void end_call(recorder *r)
{
    r->ncalls++;
    int stop = r->stop_inside_after && r->ncalls == r->stop_inside_after;
    pthread_cond_broadcast(&r->cond);
    pthread_mutex_unlock(&r->lock);
    if (r->sleep_ms) {
        r->in_callback = 1;
        usleep((useconds_t)r->sleep_ms * 1000);
        r->in_callback = 0;
    }
    if (stop)
        coffer_token_stop(r->token);
}

void on_collection(void *ctx, coffer_txn *txn, const coffer_collection_changes *ch)
{
    recorder *r = ctx;
    seen_call *c = begin_change(r, txn, ch);
    if (ch) {
        c->ndel = coffer_collection_changes_copy(ch, COFFER_CHANGE_DELETIONS, c->del);
        c->nins = coffer_collection_changes_copy(ch, COFFER_CHANGE_INSERTIONS, c->ins);
        c->nmod = coffer_collection_changes_copy(ch, COFFER_CHANGE_MODIFICATIONS, c->mod);
        c->nmod_new = coffer_collection_changes_copy(ch, COFFER_CHANGE_MODIFICATIONS_NEW, c->mod_new);
        c->nmoves = coffer_collection_changes_move_count(ch);
        for (size_t i = 0; i < c->nmoves; i++)
            assert_int_equal(coffer_collection_changes_move(ch, i, &c->from[i], &c->to[i]), COFFER_OK);
        c->cleared = coffer_collection_changes_cleared(ch);
        c->root_deleted = coffer_collection_changes_root_deleted(ch);
    }
    end_call(r);
}

void on_object(void *ctx, coffer_txn *txn, const coffer_object_changes *ch)
{
    recorder *r = ctx;
    seen_call *c = begin_change(r, txn, ch);
    if (ch) {
        c->object_deleted = coffer_object_changes_deleted(ch);
        c->nprops = coffer_object_changes_count(ch);
        for (size_t i = 0; i < c->nprops && i < 8; i++) {
            coffer_value o, n;
            assert_int_equal(coffer_object_changes_property(ch, i, &c->props[i], &o, &n), COFFER_OK);
            c->old_int[i] = o.type == COFFER_TYPE_INT ? o.u.integer : -1;
            c->new_int[i] = n.type == COFFER_TYPE_INT ? n.u.integer : -1;
        }
    }
    end_call(r);
}

void on_db(void *ctx, coffer_txn *txn, uint64_t old_version, uint64_t new_version)
{
    recorder *r = ctx;
    uint64_t v;
    assert_int_equal(coffer_txn_version(txn, &v), COFFER_OK);
    assert_int_equal(v, new_version);
    assert_true(new_version > old_version);
    seen_call *c = begin_call(r);
    (void)c;
    end_call(r);
}

/* How many calls the recorder has seen. */
int calls_of(recorder *r)
{
    pthread_mutex_lock(&r->lock);
    int n = r->ncalls;
    pthread_mutex_unlock(&r->lock);
    return n;
}

/* Waits until the recorder has seen `n` calls (at most 5 s). */
void wait_calls(recorder *r, int n)
{
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += 5;
    pthread_mutex_lock(&r->lock);
    while (r->ncalls < n && pthread_cond_timedwait(&r->cond, &r->lock, &deadline) == 0)
        ;
    int got = r->ncalls;
    pthread_mutex_unlock(&r->lock);
    if (got < n)
        fail_msg("waited 5 s for %d callbacks, saw %d", n, got);
}

/* No further call arrives within `ms` milliseconds. */
void expect_quiet(recorder *r, int ms)
{
    int before = calls_of(r);
    usleep((useconds_t)ms * 1000);
    assert_int_equal(calls_of(r), before);
}

void expect_indices(const uint64_t *got, size_t n, const uint64_t *want, size_t wn)
{
    assert_int_equal(n, wn);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(got[i], want[i]);
}

void on_map(void *ctx, coffer_txn *txn, const coffer_map_changes *ch)
{
    recorder *r = ctx;
    seen_call *c = begin_change(r, txn, ch);
    if (ch) {
        for (int kind = 0; kind < 3; kind++) {
            c->nkeys[kind] = coffer_map_changes_count(ch, kind);
            assert_true(c->nkeys[kind] <= MAX_SEEN_KEYS);
            for (size_t i = 0; i < c->nkeys[kind]; i++) {
                coffer_bytes key;
                assert_int_equal(coffer_map_changes_key(ch, kind, i, &key), COFFER_OK);
                assert_true(key.size < sizeof c->keys[kind][i]);
                memcpy(c->keys[kind][i], key.data, key.size);
                c->keys[kind][i][key.size] = 0;
            }
        }
        c->cleared = coffer_map_changes_cleared(ch);
        c->root_deleted = coffer_map_changes_root_deleted(ch);
    }
    end_call(r);
}

void expect_keys(const seen_call *c, int kind, const char *const *want, size_t n)
{
    assert_int_equal(c->nkeys[kind], n);
    for (size_t i = 0; i < n; i++)
        assert_string_equal(c->keys[kind][i], want[i]);
}
