/* subscriptions — flexible sync's query subscriptions (docs/SYNC.md,
 * "Flexible sync"): the latest subscription set of a file, kept in its
 * metadata under `Sq` (docs/FORMAT.md, "Sync") so that it survives reopening,
 * the public coffer_subscription* calls, and what the sync session needs of
 * it: the SUBSCRIBE frame of the latest set and the record of the service's
 * answer (complete, or refused with a message). */
#ifndef COFFER_SYNC_SUBSCRIPTIONS_H
#define COFFER_SYNC_SUBSCRIPTIONS_H

#include <stddef.h>
#include <stdint.h>

#include "storage/handles.h"
#include "sync/wire.h"

/* The latest set as stored: version 0 is the empty set a file starts with. */
typedef struct cf_subs_query {
    char *name; /* "" for an unnamed subscription */
    char *cls;
    char *query;
} cf_subs_query;

typedef struct cf_subs {
    uint64_t version;
    int state;   /* coffer_subscription_state as stored: pending, complete or error */
    char *error; /* the service's message for an error, else "" */
    cf_subs_query *queries;
    size_t count, cap;
} cf_subs;

/* Reads the file's latest set into *out (the empty set of version 0 when
 * none was committed); free with cf_subs_free. */
coffer_status cf_subs_read(coffer_txn *txn, cf_subs *out);
void cf_subs_free(cf_subs *s);

/* Encodes the SUBSCRIBE frame of the file's latest set into `b` (*version:
 * the set's version). */
coffer_status cf_subs_subscribe_frame(coffer_db *db, cf_buf *b, uint64_t *version);

/* Records the service's answer for set `version` (when it is still the
 * latest): `state` COFFER_SUBSCRIPTION_COMPLETE, or _ERROR with `message`.
 * `txn` is a write transaction the caller finishes. */
coffer_status cf_subs_record(coffer_txn *txn, uint64_t version, int state, const char *message);

#endif
