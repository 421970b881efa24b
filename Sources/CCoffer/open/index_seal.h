/* index_seal — an encrypted file of format 5 (indexes as keyed hashes, one
 * LMDB key per entry) brought to format 6 (indexes as B+trees of sealed
 * nodes, storage/index_tree.h) in place, by the first read-write open that
 * may (docs/FORMAT.md, "Sealed index trees (format 6)"). */
#ifndef COFFER_INDEX_SEAL_H
#define COFFER_INDEX_SEAL_H
#include "storage/handles.h"

/* Empties the index sub-database of every class of write transaction `txn`
 * and builds each class's index again, from its objects, as a sealed tree:
 * db->sealed_index is set for this. The caller sets the header's format
 * and commits; on any failure it aborts and clears db->sealed_index, which
 * leaves the file as it was. Errors: those of reading the objects
 * (COFFER_ERR_INTEGRITY, COFFER_ERR_CORRUPTED) and of writing
 * (COFFER_ERR_MAP_FULL, COFFER_ERR_IO). */
coffer_status cf_index_seal_all(coffer_txn *txn);

#endif
