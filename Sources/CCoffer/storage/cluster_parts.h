/* cluster_parts — a cluster as file format 5 stores it (docs/FORMAT.md,
 * "Clusters"): its head and each column block apart, each with its own
 * checksum (plain file) or seal (encrypted file) bound to its place (the
 * file id for a seal, the table, the cluster, the part), so that a read
 * opens only the blocks it uses, and a block moved to another column or
 * cluster, or swapped with another, fails to open:
 *
 *   u32 LE   the head's size once opened
 *   head     with its checksum or seal             (part CF_CLUSTER_HEAD_PART)
 *   block c  with its checksum or seal, c = 0 .. ncols - 1   (part c)
 */
#ifndef COFFER_CLUSTER_PARTS_H
#define COFFER_CLUSTER_PARTS_H

#include "storage/cluster.h"
#include "storage/handles.h"

#define CF_CLUSTER_HEAD_PART 0xFFFFu
#define CF_CLUSTER_PART_KEY_SIZE 10 /* the cluster's 8-byte key, then the part's number, big-endian */

/* Writes plain cluster plain[0 .. len) (as cf_cluster_write wrote it) as
 * the value of cluster `cid` of sub-database `number` (handle `dbi`).
 * `flags` are mdb_put flags. */
coffer_status cf_cluster_store(coffer_txn *txn, MDB_dbi dbi, uint32_t number, uint64_t cid, const uint8_t *plain,
                               size_t len, unsigned flags);

/* Writes cluster `cid` again as stored value `stored` (stored_len bytes,
 * as cf_cluster_store wrote it; `c` its head as cf_cluster_open_head
 * parsed it) with the blocks of the columns where changed[col] is not NULL
 * replaced by those plain bytes, each of its block's size as stored: those
 * are checksummed or sealed again, every other part (the head, the other
 * columns) is copied as stored, bound to the same place. For a cluster
 * whose values changed in place; `stored` may borrow LMDB's map, as it is
 * copied before the write. */
coffer_status cf_cluster_store_changed(coffer_txn *txn, MDB_dbi dbi, uint32_t number, uint64_t cid, const uint8_t *stored,
                                       size_t stored_len, const cf_cluster *c, const uint8_t *const *changed);

/* Opens the head of stored cluster `v` (cluster `cid` of sub-database
 * `number`; opened into *buf in an encrypted file) and parses it into
 * *out, whose blocks stay stored: out->blocks points at the first, and
 * the caller sets out->opened, open and open_ctx. COFFER_ERR_CORRUPTED or
 * COFFER_ERR_INTEGRITY naming the damage. */
coffer_status cf_cluster_open_head(coffer_txn *txn, uint32_t number, uint64_t cid, const MDB_val *v, uint8_t **buf,
                                   size_t *cap, cf_cluster *out);

/* Opens part `part` of cluster `cid`, stored as stored[0 .. len): checks
 * its checksum in place, or opens its seal into *buf. */
coffer_status cf_cluster_open_part(coffer_txn *txn, uint32_t number, uint64_t cid, uint16_t part, const uint8_t *stored,
                                   size_t len, const uint8_t **data, size_t *dlen, uint8_t **buf, size_t *cap);

/* Opens every part of stored cluster `v` into one plain cluster, *buf
 * (grown as needed; the caller owns it), [0 .. *len): for a copy of the
 * file, which stores it again for its own file id and key. */
coffer_status cf_cluster_open_whole(coffer_txn *txn, uint32_t number, uint64_t cid, const MDB_val *v, uint8_t **buf,
                                    size_t *cap, size_t *len);

#endif
