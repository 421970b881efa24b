/* values — a synced object's values on the wire and back: reading a
 * property, list element, set element or map entry out of the file into the
 * encoding of docs/SYNC.md ("Values": links as target class and primary key,
 * embedded objects as their properties, nested collections in full), and
 * turning an encoded value into a coffer_value for a property of this file
 * (links resolved by primary key, a missing target reported). */
#ifndef COFFER_SYNC_VALUES_H
#define COFFER_SYNC_VALUES_H

#include "storage/handles.h"
#include "sync/wire.h"

/* Encodes property `prop` of `obj` (a collection in full). */
coffer_status cf_sync_encode_prop(coffer_object *obj, coffer_property_id prop, cf_buf *b);
/* Encodes a value read from the file (`v` of the transaction `txn`); for a
 * nested collection (type LIST/MAP with `list`/`map` open on it) pass the
 * handle, else NULL. */
coffer_status cf_sync_encode_value(coffer_txn *txn, const coffer_value *v, coffer_list *list, coffer_map *map, cf_buf *b);
/* Encodes element `i` of a list or set; entry `i` of a map, its key (a
 * wire string) into `key` and its value into `b`. */
coffer_status cf_sync_encode_list_elem(coffer_list *l, uint64_t i, cf_buf *b);
coffer_status cf_sync_encode_set_elem(coffer_set *s, uint64_t i, cf_buf *b);
coffer_status cf_sync_encode_map_entry(coffer_map *m, uint64_t i, cf_buf *key, cf_buf *b);
/* The encoded primary key of `obj` (class `cls`). */
coffer_status cf_sync_encode_pk(coffer_object *obj, cf_buf *b);

/* The index of the class or property named `name` (not NUL-terminated), or -1. */
struct cf_class;
int cf_sync_class_named(const cf_schema *s, cf_slice name);
int cf_sync_prop_named(const cf_class *c, cf_slice name);

/* Memory for decoded values, freed together. */
typedef struct cf_arena {
    void **blocks;
    size_t n, cap;
} cf_arena;
void *cf_arena_alloc(cf_arena *a, size_t size);
void cf_arena_free(cf_arena *a);

/* Decodes `enc` into *out for writing into this file. A link names its
 * target by class and primary key: one whose target is not in the file
 * becomes null and sets *missing (inside a nested list it is left out, as a
 * list of links loses an element whose target is deleted). An embedded
 * object becomes a COFFER_TYPE_FIELDS description. Strings and binaries
 * borrow from `enc`, arrays from `arena`. COFFER_ERR_SCHEMA names a class or
 * property this file does not have. */
coffer_status cf_sync_decode_value(coffer_txn *txn, cf_slice enc, cf_arena *arena, coffer_value *out, int *missing);
/* Decodes a primary key (a scalar). */
coffer_status cf_sync_decode_scalar(cf_slice enc, coffer_value *out);

#endif
