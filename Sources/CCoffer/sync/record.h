/* record — what a synced file writes at each commit (docs/SYNC.md, "What a
 * client records"): the commit hook that every handle runs before LMDB's
 * commit, which turns a local commit's change-log entry into an outbox
 * changeset and keeps the objects' merge state (stamps, list element ids,
 * set and map elements) in step, and writes the merge state an integration
 * changed; and the first sync of a file, which gives it a client id and
 * records the objects it already holds. */
#ifndef COFFER_SYNC_RECORD_H
#define COFFER_SYNC_RECORD_H

#include "storage/handles.h"

/* The commit hook (coffer_db.commit_hook). Does nothing for a file without
 * a client id. */
coffer_status cf_sync_commit_hook(coffer_txn *txn);

/* Makes `db`'s file a synced file of `partition` if it is not one yet: a new
 * client id, and one outbox changeset that creates every object it holds.
 * COFFER_ERR_SCHEMA names a top-level class without a primary key;
 * COFFER_ERR_INVALID_ARGUMENT when the file already syncs another
 * partition (naming both). */
coffer_status cf_sync_enable(coffer_db *db, const char *partition);

/* The class index of table `table` in the handle's view, or -1. */
int cf_sync_class_of_table(const coffer_db *db, uint32_t table);
/* The property index of column `column` of class `cls`, or -1. */
int cf_sync_prop_of_column(const coffer_db *db, int cls, uint32_t column);

#endif
