/* migration — the migration callback: an old view of the file beside the
 * new schema's write transaction, renames, class deletion, and what runs
 * after the callback (releasing removed contents, checking primary keys). */
#ifndef COFFER_MIGRATION_H
#define COFFER_MIGRATION_H

#include "storage/handles.h"

/* Whether opening with `config` over stored schema `stored` runs the
 * migration callback. */
int cf_migration_applies(const coffer_config *config, const cf_schema *stored);

/* In the read pass of opening: opens the sub-databases of every stored
 * class, so that the write pass can read the old file beside its own
 * transaction (LMDB shares a sub-database handle only once the transaction
 * that opened it has ended). Records them in opened/numbers. */
coffer_status cf_migration_prepare(coffer_txn *txn, const cf_schema *stored, MDB_dbi **opened, uint32_t **numbers,
                                   size_t *nopened);

/* In the write pass, after the plan was applied without its deferred
 * actions (see apply_plan): runs the callback and then the deferred
 * actions. On error nothing may be committed. */
coffer_status cf_migration_run(const coffer_config *config, coffer_txn *txn, cf_plan *plan, const cf_schema *stored,
                               const char *label);

/* In the write pass of a higher schema version, after the callback (if
 * any): drops the classes of plan->left_out the migration emptied, refuses
 * (COFFER_ERR_SCHEMA) one that still has objects, and checks that no class
 * staying in the file refers to a class that left it. */
coffer_status cf_migration_drop_left_out(coffer_txn *txn, cf_plan *plan, const char *label);

#endif
