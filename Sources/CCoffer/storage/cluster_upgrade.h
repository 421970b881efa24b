/* cluster_upgrade — re-laying a file's objects from one record each (file
 * format 4) into clusters (format 5), inside the write transaction of the
 * upgrade (docs/FORMAT.md, "Upgrading"). */
#ifndef COFFER_CLUSTER_UPGRADE_H
#define COFFER_CLUSTER_UPGRADE_H

#include "storage/handles.h"

/* Moves every object of every class of `stored` (the stored schema; NULL
 * for none) from its record into its cluster, keeping its key, so that
 * indexes, links, collections, backlinks and the change log, which name
 * objects by key, stay as they are; writes the object counts format 5
 * keeps. `txn` is the upgrade's write transaction on a handle that has no
 * schema open yet; the handle reads and writes clusters from then on
 * (txn->db->clustered). Values must carry their checksums already (a plain
 * file of format 4). A damaged record stops it with COFFER_ERR_CORRUPTED
 * (COFFER_ERR_INTEGRITY when its seal fails) naming the object; the caller
 * then aborts the transaction, which leaves the file as it was. */
coffer_status cf_clusters_upgrade(coffer_txn *txn, const cf_schema *stored);

#endif
