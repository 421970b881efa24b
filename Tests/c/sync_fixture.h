/*
 * sync_fixture.h — what the sync suites share (test_sync_auth.c,
 * test_sync_session.c, test_sync_merge.c): a temporary folder per test, a
 * fake wall clock for every sync clock of the process, and synced files
 * opened through a transport the suite provides.
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

#endif
