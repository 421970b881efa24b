/* observe_recorder — what observers' callbacks were told, for the live
 * database's tests: a recorder collects every call (change sets with their
 * indices and moves, map keys, object changes, the thread it ran on), and
 * the tests wait for calls, check that none came, and compare indices. */
#ifndef OBSERVE_RECORDER_H
#define OBSERVE_RECORDER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "coffer.h"

#define MAX_SEEN 32
#define MAX_SEEN_KEYS 8

typedef struct seen_call {
    int initial;
    uint64_t del[64], ins[64], mod[64], mod_new[64], from[16], to[16];
    size_t ndel, nins, nmod, nmod_new, nmoves;
    int cleared, root_deleted, object_deleted;
    coffer_property_id props[8];
    int64_t old_int[8], new_int[8];
    size_t nprops;
    /* map observers: the keys deleted, inserted and modified */
    char keys[3][MAX_SEEN_KEYS][32];
    size_t nkeys[3];
    pthread_t thread;
} seen_call;

typedef struct recorder {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    seen_call calls[MAX_SEEN];
    int ncalls;
    coffer_token *token;   /* the observation recording here: for stopping from inside, and recorder_stop() */
    int stop_inside_after; /* stop own token at this call number (0 never) */
    int sleep_ms;          /* hold the callback this long */
    _Atomic int in_callback;
} recorder;

void recorder_init(recorder *r);
void recorder_destroy(recorder *r);
/* Stops the observation whose token is r->token, then recorder_destroy(). */
void recorder_stop(recorder *r);

/* Callbacks recording into the recorder given as their context. */
void on_collection(void *ctx, coffer_txn *txn, const coffer_collection_changes *ch);
void on_map(void *ctx, coffer_txn *txn, const coffer_map_changes *ch);
void on_object(void *ctx, coffer_txn *txn, const coffer_object_changes *ch);
void on_db(void *ctx, coffer_txn *txn, uint64_t old_version, uint64_t new_version);

/* How many calls the recorder has seen. */
int calls_of(recorder *r);
/* Waits until the recorder has seen `n` calls (fails after 5 s). */
void wait_calls(recorder *r, int n);
/* No further call arrives within `ms` milliseconds. */
void expect_quiet(recorder *r, int ms);

void expect_indices(const uint64_t *got, size_t n, const uint64_t *want, size_t wn);
#define EXPECT(got, ngot, ...)                                                              \
    do {                                                                                    \
        static const uint64_t want_[] = {__VA_ARGS__};                                      \
        expect_indices((got), (ngot), want_, sizeof want_ / sizeof want_[0]);               \
    } while (0)

/* The keys of `kind` a map call was told equal `want` (n of them, in order). */
void expect_keys(const seen_call *c, int kind, const char *const *want, size_t n);
#define EXPECT_KEYS(call, kind, ...)                                                        \
    do {                                                                                    \
        static const char *const want_[] = {__VA_ARGS__};                                   \
        expect_keys((call), (kind), want_, sizeof want_ / sizeof want_[0]);                 \
    } while (0)
#define EXPECT_NO_KEYS(call, kind) expect_keys((call), (kind), NULL, 0)

#endif
