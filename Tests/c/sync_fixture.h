/*
 * sync_fixture.h — what the sync suites share (test_sync_auth.c,
 * test_sync_session.c, test_sync_merge.c, test_sync_error_callback.c): a
 * temporary folder per test, a fake wall clock for every sync clock of the
 * process, synced files opened through a transport the suite provides, and
 * the connection of a scripted peer that answers frames with queued frames.
 */
#ifndef COFFER_SYNC_FIXTURE_H
#define COFFER_SYNC_FIXTURE_H

#include "test_support.h"

/* How long a suite waits for a session to reach a state, in milliseconds. */
#define SYNC_WAIT_MS 20000

typedef struct sync_fixture {
    char dir[TS_PATH_MAX];           /* a fresh temporary folder */
    coffer_sync_transport transport; /* the suite's peer; set it after sync_fixture_setup */
} sync_fixture;

/* Makes the temporary folder (and zeroes the rest). Returns 0 or -1. */
int sync_fixture_setup(sync_fixture *f);
/* Removes the folder and restores the system clock. */
void sync_fixture_teardown(sync_fixture *f);

/* The wall-clock time (milliseconds since 1970) the fake clock reads; a
 * test moves it forward. sync_use_fake_clock makes every sync clock read
 * it (until sync_fixture_teardown). */
extern uint64_t sync_fake_now;
void sync_use_fake_clock(void);

/* A configuration of `name` in the fixture's folder with `classes` at
 * version 1, synced to `url` (partition "team-1") through the fixture's
 * transport. The caller frees it, or opens it with sync_fixture_open. */
coffer_config *sync_fixture_config(const sync_fixture *f, const char *name, const coffer_class_schema *classes,
                                   size_t count, const char *url);
/* Opens `cfg` (asserts) and frees it. */
coffer_db *sync_fixture_open(coffer_config *cfg);

/* A connection of a scripted peer (a transport whose send callback decides
 * the answers): the frames queued for the client, handed out in order by
 * sync_peer_receive. sync_peer_open, sync_peer_receive and sync_peer_close
 * are the transport's open, receive and close; the suite writes send, which
 * gets the connection as its `connection` and queues answers with
 * sync_peer_push. */
#define SYNC_PEER_FRAMES 8

typedef struct sync_peer_conn {
    void *peer;                         /* the transport's ctx */
    uint8_t *frames[SYNC_PEER_FRAMES];  /* queued, malloc'ed, owned here */
    size_t sizes[SYNC_PEER_FRAMES];
    int count, next;                    /* queued so far; handed out so far */
    uint8_t *last;                      /* the frame receive returned last */
} sync_peer_conn;

coffer_status sync_peer_open(void *ctx, const char *url, void **out);
/* Queues the `size` bytes at `frame` (malloc'ed; the connection frees it).
 * Asserts that the queue has room. */
void sync_peer_push(sync_peer_conn *c, uint8_t *frame, size_t size);
/* The next queued frame; none: COFFER_ERR_TIMEOUT after at most 5 ms. */
coffer_status sync_peer_receive(void *ctx, void *connection, int timeout_ms, const uint8_t **data, size_t *size);
/* Frees the frames not handed out, the last one and the connection. */
void sync_peer_close(void *ctx, void *connection);

#endif
