/* object — create, read, update and delete objects; primary keys; class
 * counts, iteration and index lookups. */
#ifndef COFFER_OBJECT_H
#define COFFER_OBJECT_H

#include "handles.h"

/* Indexes every object's value of property `prop` of class `cls` (after a
 * schema change). With `unique`, a duplicate is COFFER_ERR_MIGRATION_REQUIRED. */
coffer_status cf_object_build_index(coffer_txn *txn, coffer_class_id cls, coffer_property_id prop, int unique);

#endif
