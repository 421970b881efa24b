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
 *
 * Clusters of version 4 (the ones written now) hold only the u32 and the
 * head in that value; block c is the value of its own key,
 * cf_cluster_block_key(c, cluster), sealed or checksummed as part c is
 * above, so that an update writes only the blocks it changes. Versions 2
 * and 3 are read as above and written as version 4 when they change
 * (unless only values changed in place: then as stored).
 */
#ifndef COFFER_CLUSTER_PARTS_H
#define COFFER_CLUSTER_PARTS_H

#include "storage/cluster.h"
#include "storage/handles.h"

#define CF_CLUSTER_HEAD_PART 0xFFFFu
#define CF_CLUSTER_PART_KEY_SIZE 10 /* the cluster's 8-byte key, then the part's number, big-endian */

/* Writes plain cluster plain[0 .. len) (as cf_cluster_write wrote it) as
 * cluster `cid` of sub-database `number` (handle `dbi`) of version 4: its
 * head as the value of the cluster's key, each column block as the value of
 * its own key (cf_cluster_block_key); the blocks of columns `ncols` to
 * `old_ncols` - 1 that an earlier version of the cluster stored apart are
 * deleted. `flags` are mdb_put flags for the head. */
coffer_status cf_cluster_store(coffer_txn *txn, MDB_dbi dbi, uint32_t number, uint64_t cid, const uint8_t *plain,
                               size_t len, unsigned flags, uint16_t old_ncols);

/* Deletes the blocks of columns from .. to - 1 of cluster `cid`, stored
 * apart (those not there are skipped). */
coffer_status cf_cluster_delete_blocks(coffer_txn *txn, MDB_dbi dbi, uint64_t cid, uint16_t from, uint16_t to);

/* Reads column `col`'s block of cluster `cid` stored apart (version 4)
 * from LMDB and opens it as cf_cluster_open_part does; `len` is its stored
 * size as the head gives it (with its checksum or seal).
 * COFFER_ERR_CORRUPTED when it is missing or of another size. */
coffer_status cf_cluster_fetch_block(coffer_txn *txn, MDB_dbi dbi, uint32_t number, uint64_t cid, uint16_t col,
                                     size_t len, const uint8_t **data, size_t *dlen, uint8_t **buf, size_t *cap);

/* Writes cluster `cid` again as stored value `stored` (stored_len bytes,
 * as cf_cluster_store wrote it; `c` its head as cf_cluster_open_head
 * parsed it) with the blocks of the columns where changed[col] is not NULL
 * replaced by those plain bytes, each of its block's size as stored: those
 * are checksummed or sealed again, every other part (the head, the other
 * columns) is copied as stored, bound to the same place. For a cluster
 * whose values changed in place; `stored` may borrow LMDB's map, as it is
 * copied before the write. A cluster whose blocks are stored apart
 * (c->apart) has only the changed blocks written, each under its key. */
coffer_status cf_cluster_store_changed(coffer_txn *txn, MDB_dbi dbi, uint32_t number, uint64_t cid, const uint8_t *stored,
                                       size_t stored_len, const cf_cluster *c, const uint8_t *const *changed);

/* Opens the head of stored cluster `v` (cluster `cid` of sub-database
 * `number`; opened into *buf in an encrypted file) and parses it into
 * *out, whose blocks stay stored: out->blocks points at the first, or
 * out->apart is set (version 4: each block is a value of its own), and
 * the caller sets out->opened, open and open_ctx. COFFER_ERR_CORRUPTED or
 * COFFER_ERR_INTEGRITY naming the damage. */
coffer_status cf_cluster_open_head(coffer_txn *txn, uint32_t number, uint64_t cid, const MDB_val *v, uint8_t **buf,
                                   size_t *cap, cf_cluster *out);

/* Opens part `part` of cluster `cid`, stored as stored[0 .. len): checks
 * its checksum in place, or opens its seal into *buf. */
coffer_status cf_cluster_open_part(coffer_txn *txn, uint32_t number, uint64_t cid, uint16_t part, const uint8_t *stored,
                                   size_t len, const uint8_t **data, size_t *dlen, uint8_t **buf, size_t *cap);

/* Opens every part of stored cluster `v` (its blocks read from `dbi`
 * when stored apart) into one plain cluster, *buf (grown as needed; the
 * caller owns it), [0 .. *len): for a copy of the file, which stores it
 * again for its own file id and key. */
coffer_status cf_cluster_open_whole(coffer_txn *txn, MDB_dbi dbi, uint32_t number, uint64_t cid, const MDB_val *v,
                                    uint8_t **buf, size_t *cap, size_t *len);

#endif
