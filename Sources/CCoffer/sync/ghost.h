/* ghost — what a synced file keeps of a deleted object (docs/SYNC.md,
 * "Merge rules"): the values stamped above its tombstone. An update, set or
 * map change of a deleted object that arrives after its delete changes
 * nothing visible, but the service keeps it, and it shows if a later create
 * starts a new life; the ghost keeps it here too, so that replicas converge
 * whatever order the changes arrive in. A ghost is a cf_sync_obj outside any
 * cache: its properties hold a stamp and, for a scalar, the encoded value;
 * its set elements and map entries their stamps (and map values). It lives
 * in the metadata under 'S' 'g', keyed like the tombstone. */
#ifndef COFFER_SYNC_GHOST_H
#define COFFER_SYNC_GHOST_H

#include "sync/state.h"

/* The ghost of (table, primary key), malloc'd (free with
 * cf_sync_obj_free); *out is NULL when there is none. */
coffer_status cf_sync_ghost_get(coffer_txn *txn, uint32_t table, cf_slice pk, cf_sync_obj **out);
/* An empty ghost of (table, primary key). */
coffer_status cf_sync_ghost_make(uint32_t table, cf_slice pk, cf_sync_obj **out);
/* Writes `g` (or removes its record when it keeps nothing). */
coffer_status cf_sync_ghost_put(coffer_txn *txn, const cf_sync_obj *g);
coffer_status cf_sync_ghost_del(coffer_txn *txn, uint32_t table, cf_slice pk);
/* Forgets every value stamped at or below `tombstone`. */
void cf_sync_ghost_prune(cf_sync_obj *g, const cf_stamp *tombstone);
/* Sets a ghost property's encoded value. */
coffer_status cf_sync_prop_set_value(cf_sync_prop *p, cf_slice value);

#endif
