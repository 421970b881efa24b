/* object — create, read, update and delete objects; primary keys; class
 * counts, iteration and index lookups. */
#ifndef COFFER_OBJECT_H
#define COFFER_OBJECT_H

#include "storage/handles.h"

/* Indexes every object's value of property `prop` of class `cls` (after a
 * schema change). With `unique`, a duplicate is COFFER_ERR_MIGRATION_REQUIRED. */
coffer_status cf_object_build_index(coffer_txn *txn, coffer_class_id cls, coffer_property_id prop, int unique);

/* Releases, in every object of class `cls`, what stored property `old` (no
 * longer in the schema, or retyped) holds: its backlinks, embedded objects
 * and collections. `target_table` is a link's target table. */
coffer_status cf_object_drop_graph_column(coffer_txn *txn, coffer_class_id cls, const cf_prop *old, uint32_t target_table);

/* What a required scalar property reads as when its column is null (a
 * column added by a schema change): false, 0, "", empty bytes, 0E+0... */
coffer_value cf_value_default(coffer_type t);

/* As cf_object_drop_graph_column, but reads the column from the objects of
 * class `src_cls` in transaction `src` (a snapshot from before a migration,
 * which still has objects the migration rewrote or deleted). */
coffer_status cf_object_drop_graph_column_from(coffer_txn *txn, coffer_class_id cls, const cf_prop *old, uint32_t target_table,
                                               coffer_txn *src, coffer_class_id src_cls);

#endif
