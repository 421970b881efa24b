/* index_tree — the index of a class as a B+tree of sealed nodes (encrypted
 * files of format 6, docs/FORMAT.md "Sealed index trees"). The tree holds
 * the same entries as a plain file's index keys (column ‖ encoded value ‖
 * object key, storage/index.h), in byte order, but each node — a sorted
 * array of entries (a leaf) or of separators and child node ids (an inner
 * node) — is one LMDB value of the class's index sub-database, stored under
 * its node id (u64 BE) and sealed there like any other value (bound to that
 * place). The root is node 1; an absent root is an empty tree.
 *
 * A transaction keeps the nodes it has opened, decoded, until it ends (a
 * read transaction opens each node once, so a run of queries in one
 * snapshot decrypts the upper levels once, and in an encrypted file passes
 * them on to the next read transaction, see cf_itree_free). A write transaction changes
 * nodes in memory, splitting and merging them as they grow and shrink, and
 * seals and writes the changed ones when it commits (cf_itree_flush); a
 * node merged away is deleted from LMDB at once. An abort drops them with
 * the rest, and so does a writer killed before its commit. */
#ifndef COFFER_INDEX_TREE_H
#define COFFER_INDEX_TREE_H

#include "storage/handles.h"

/* The most bytes a node's encoding may take (a node of more is damaged),
 * and a quarter of it the least a node but the root may take: below it, it
 * merges with a neighbour. */
#define CF_ITREE_NODE_MAX 4096
/* A node splits once its encoding exceeds this many bytes, so that, sealed
 * (40 bytes more), it fits one 4 KiB LMDB overflow page (its 16-byte head
 * and 4,080 bytes). Files written by earlier libraries, which split past
 * CF_ITREE_NODE_MAX, read the same. */
#define CF_ITREE_NODE_SPLIT (4096 - 16 - 40)
#define CF_ITREE_MAX_DEPTH 16

typedef struct cf_itree_node cf_itree_node;

/* A position in a tree: the nodes from the root to a leaf and the index
 * taken in each. Valid until the transaction writes to the tree again. */
typedef struct cf_itree_cursor {
    coffer_txn *txn;
    coffer_class_id cls;
    int depth;
    struct {
        cf_itree_node *node;
        uint32_t at;
    } path[CF_ITREE_MAX_DEPTH];
} cf_itree_cursor;

/* Adds entry e[0..len) to the tree of class `cls` (nothing to do when it is
 * there already). A write transaction only. */
coffer_status cf_itree_insert(coffer_txn *txn, coffer_class_id cls, const uint8_t *e, size_t len);

/* Adds the entries of a run sorted in byte order to the tree of class
 * `cls`, as cf_itree_insert would one by one, but descending once for each
 * leaf the run reaches (and again after a leaf splits) rather than once per
 * entry. run[i] points at the entry's length (u16, native order) followed
 * by its bytes; entries stored already, or twice in the run, are added
 * once. A write transaction only. */
coffer_status cf_itree_insert_run(coffer_txn *txn, coffer_class_id cls, const uint8_t *const *run, size_t count);

/* Removes entry e[0..len); *found (when not NULL) says whether it was there. */
coffer_status cf_itree_delete(coffer_txn *txn, coffer_class_id cls, const uint8_t *e, size_t len, int *found);

/* Places `cur` at the first entry not below key[0..klen) and returns it in
 * *e, *len (borrowed from the transaction's nodes): COFFER_OK, or
 * COFFER_DONE past the last entry. COFFER_ERR_INTEGRITY or
 * COFFER_ERR_CORRUPTED (naming the class and node) when a node fails to
 * open or decode. */
coffer_status cf_itree_seek(cf_itree_cursor *cur, coffer_txn *txn, coffer_class_id cls, const uint8_t *key, size_t klen,
                            const uint8_t **e, size_t *len);

/* The entry after the cursor's: COFFER_OK, or COFFER_DONE at the end. */
coffer_status cf_itree_next(cf_itree_cursor *cur, const uint8_t **e, size_t *len);

/* Seals and writes every node the write transaction changed. */
coffer_status cf_itree_flush(coffer_txn *txn);

/* Forgets the nodes of class `cls` after its index sub-database was
 * emptied (mdb_drop) in `txn`. */
void cf_itree_forget_class(coffer_txn *txn, coffer_class_id cls);

/* Empties the index sub-database of class `cls` in write transaction `txn`
 * (whatever it holds: hashed keys of format 5, or a tree) and forgets the
 * transaction's nodes of the class. Errors: those of an LMDB write. */
coffer_status cf_itree_empty_class(coffer_txn *txn, coffer_class_id cls);
/* Frees the transaction's nodes (at its end). A read transaction of an
 * encrypted file leaves them to the next read transaction of its handle,
 * which takes a node again when its stored value is still, byte for byte,
 * the sealed value the node was opened from (every seal draws a fresh
 * random nonce, so a node written since differs, and so does a stored
 * value changed in any byte, which then fails its seal's check when opened
 * again), else opens it again. What is left stays within
 * CF_ITREE_POOL_BYTES: past it the leaves are freed, then the inner nodes.
 * A write transaction's nodes, and so an aborted transaction's changes,
 * are never left. */
#define CF_ITREE_POOL_BYTES (16u << 20)
void cf_itree_free(coffer_txn *txn);

/* Frees the nodes a read transaction left for the next (at close). */
void cf_itree_pool_free(coffer_db *db);

/* The memory (bytes) of the nodes read transactions left on handle `db`
 * for the next, or -1 when none are left (for the tests; only while no
 * read transaction of the handle ends). */
long long cf_itree_pool_bytes(coffer_db *db);

/* Checks the tree of class `cls` throughout: entries in order in every
 * node, separators bounding their children, every leaf at one depth, no
 * node but the root below a quarter full after a write. Returns the
 * number of entries in *count. COFFER_ERR_CORRUPTED naming what is wrong. */
coffer_status cf_itree_check(coffer_txn *txn, coffer_class_id cls, uint64_t *count);

#endif
