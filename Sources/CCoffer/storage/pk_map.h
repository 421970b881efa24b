/* pk_map — a transaction's hash map over the primary-key index entries of a
 * class, so that a transaction that looks up many objects by primary key
 * pays one walk of that column's entries instead of one B-tree descent per
 * key (docs/FORMAT.md "Index entries" is unchanged: the map lives in memory
 * only, for the life of one transaction).
 *
 * A transaction builds the map of a class once its lookups by primary key
 * reach a sixteenth of the class's objects (and at least CF_PK_MAP_MIN_LOOKUPS),
 * from the index entries of the primary-key column, and keeps it in step
 * with every entry of that column the transaction adds or removes
 * (cf_index_add, cf_index_remove, cf_index_drop_column, cf_objects_clear).
 * It maps a 64-bit word for an entry's prefix (column ‖ encoded value, as
 * cf_index_prefix writes it) to the object key: a non-null int's encoded
 * value itself, any other prefix's hash. A key found by a hash is a
 * candidate that the caller confirms by comparing the object's stored value,
 * as it does for hashed index entries; a key found by an int's value is the
 * answer while the map holds no hashed word. A class of more than
 * CF_PK_MAP_MAX_ENTRIES objects gets no map. */
#ifndef COFFER_PK_MAP_H
#define COFFER_PK_MAP_H

#include "storage/handles.h"

/* Lookups by primary key in one transaction before a map is considered. */
#define CF_PK_MAP_MIN_LOOKUPS 32
/* The most entries a map holds (16 bytes each, a table at most half full). */
#define CF_PK_MAP_MAX_ENTRIES (UINT64_C(1) << 20)

/* Looks up the entries of class `cls` in primary-key column `column` whose
 * prefix is `prefix` (plen bytes, column included) and whose object key is
 * at least `from`. When the transaction has (or now builds) a map of that
 * column, *mapped is nonzero and the result is COFFER_OK with *key the
 * smallest candidate or COFFER_DONE when there is none: *mapped is 2 when
 * the candidate is the answer, 1 when it is to be confirmed by value;
 * otherwise *mapped is 0 and the caller seeks the index. Counts a lookup
 * when `from` is 0. Errors are those of reading the index to build it. */
coffer_status cf_pk_map_find(coffer_txn *txn, coffer_class_id cls, uint16_t column, const uint8_t *prefix, size_t plen,
                             coffer_object_key from, coffer_object_key *key, int *mapped);

/* Keeps a map of class `cls` in step with index entry `entry` (len bytes:
 * prefix ‖ object key) just added (`added`) to or removed from the index. */
void cf_pk_map_note(coffer_txn *txn, coffer_class_id cls, const uint8_t *entry, size_t len, int added);

/* Drops the map of class `cls` (its index column was dropped or cleared);
 * a later lookup may build it again. */
void cf_pk_map_forget(coffer_txn *txn, coffer_class_id cls);

/* Frees every map of the transaction (at its end). */
void cf_pk_map_free(coffer_txn *txn);

/* For tests: 1 when the transaction holds a map of class `cls`. */
int cf_pk_map_active(const coffer_txn *txn, coffer_class_id cls);

#endif
