/* checksums — the checksum every value of a plain file of format 4 or later
 * carries (docs/FORMAT.md, "Checksums"), as the seal does in an encrypted
 * file: computing and checking it, and adding it to every value of a file
 * written before (the upgrade to format 4). */
#ifndef COFFER_CHECKSUMS_H
#define COFFER_CHECKSUMS_H

#include "storage/handles.h"

#define CF_CHECKSUM_SIZE 4

/* The checksum of `len` bytes of `data` stored under `key` in sub-database
 * `number`: bound to its place, so a value moved to another key or
 * sub-database does not check either. */
uint32_t cf_checksum(uint32_t number, const uint8_t *key, size_t klen, const uint8_t *data, size_t len);

/* Checks the checksum that ends the stored value `v` (under `k` in
 * sub-database `number`) and gives the value without it. COFFER_ERR_CORRUPTED
 * naming `what` when it does not match or the value is too short. */
coffer_status cf_checksum_open(uint32_t number, const MDB_val *k, const MDB_val *v, const uint8_t **data, size_t *len,
                               const char *what);

/* Appends the checksum to every value of sub-database `dbi` (number
 * `number`) of a file written without them, but the value of key `skip`
 * (the header, which stays as it is; NULL for none). Used by the upgrade to
 * format 4, inside its write transaction. */
coffer_status cf_checksum_add_all(coffer_txn *txn, MDB_dbi dbi, uint32_t number, const char *skip);

/* Adds checksums to every value of a plain file written without them: the
 * metadata but the header, the collections and backlinks, and the objects
 * of every class of `stored` (the stored schema; NULL for none). Index
 * entries have no value and stay as they are. */
coffer_status cf_checksum_add_file(coffer_txn *txn, const cf_schema *stored);

#endif
