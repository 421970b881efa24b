/* integrate — applying downloaded changesets (docs/SYNC.md, "Merge rules")
 * in one write transaction marked COFFER_ORIGIN_REMOTE, together with the
 * last integrated server version, so that a batch is applied whole or not at
 * all and never twice. */
#ifndef COFFER_SYNC_INTEGRATE_H
#define COFFER_SYNC_INTEGRATE_H

#include "storage/handles.h"
#include "sync/state.h"

/* Integrates `n` server changesets (in increasing server version) into
 * `db`: those at or below the file's last integrated server version are
 * skipped, the rest merged by the rules, and the last server version stored,
 * in one transaction. On error nothing of the batch is applied. `*server_version`
 * (may be NULL) receives the file's last integrated server version after. */
coffer_status cf_sync_integrate(coffer_db *db, const cf_server_changeset *changesets, size_t n, uint64_t *server_version);

/* Integrates into an open write transaction (the caller commits it marked
 * remote, with `txn->sync_cache` = `cache`). */
coffer_status cf_sync_integrate_in(coffer_txn *txn, cf_sync_cache *cache, const cf_server_changeset *changesets,
                                   size_t n, uint64_t *server_version);

#endif
