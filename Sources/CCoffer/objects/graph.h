/* graph — links, backlinks, embedded objects and collections: the part of
 * the object graph that object.c and collection.c share. Values here are in
 * the stored form of cell.h. */
#ifndef COFFER_GRAPH_H
#define COFFER_GRAPH_H

#include "storage/handles.h"

/* Where a value goes: property `prop` of object `key` of class `cls` (the
 * top-level owner, named by backlinks), directly (depth 0) or as an element
 * of a collection at nesting level `depth`; `mixed` when elements are mixed
 * values (a mixed property or a nested collection). */
typedef struct cf_slot {
    coffer_class_id cls;
    coffer_property_id prop;
    coffer_object_key key;
    int depth;
    int mixed;
    int element;    /* an element of a collection (not the property itself) */
    int policy;     /* update policy for nested object descriptions */
} cf_slot;

/* Sub-database 1 access shared by the graph and the collections. Gets and
 * puts seal and open as cf_store_* do; cf_graph_seek positions `cur` on the
 * first key at or after `key`, cf_graph_first on the first key starting
 * with `prefix` (both COFFER_DONE if none); cf_graph_cursor_close closes a
 * cursor of cf_graph_cursor (NULL is left alone). */
coffer_status cf_graph_present(const coffer_txn *txn);
coffer_status cf_graph_get(coffer_txn *txn, const uint8_t *key, size_t klen, const uint8_t **data, size_t *len, uint8_t **buf,
                           size_t *cap, const char *what);
coffer_status cf_graph_put(coffer_txn *txn, const uint8_t *key, size_t klen, const uint8_t *data, size_t len);
coffer_status cf_graph_del(coffer_txn *txn, const uint8_t *key, size_t klen);
coffer_status cf_graph_seek(MDB_cursor *cur, const uint8_t *key, size_t klen, MDB_val *k, MDB_val *v);
coffer_status cf_graph_first(coffer_txn *txn, MDB_cursor *cur, const uint8_t *prefix, size_t plen, MDB_val *k, MDB_val *v);
coffer_status cf_graph_cursor(coffer_txn *txn, MDB_cursor **cur);
void cf_graph_cursor_close(MDB_cursor *cur);

/* "class 'C', property 'p'" of a slot, for messages; returns buf. */
const char *cf_slot_where(const coffer_txn *txn, const cf_slot *s, char *buf, size_t size);

/* The class and key a link value (COFFER_TYPE_LINK or _OBJECT) names;
 * errors name the slot's property. */
coffer_status cf_graph_link_target(coffer_txn *txn, const cf_slot *s, const coffer_value *v, coffer_class_id *cls,
                                   coffer_object_key *key);

/* Checks a map key: non-empty UTF-8 without NUL, no '.', no leading '$'. */
coffer_status cf_map_key_check(const coffer_txn *txn, const cf_slot *s, const coffer_bytes *key);

/* Checks public value `v` for `slot` before anything is written: types,
 * classes, link targets, map keys, nesting depth, nested descriptions. */
coffer_status cf_graph_check(coffer_txn *txn, const cf_slot *slot, const coffer_value *v);

/* Stores checked public value `v`: creates nested objects and collections,
 * adds backlinks, and gives its stored form in *out. */
coffer_status cf_graph_store(coffer_txn *txn, const cf_slot *slot, const coffer_value *v, coffer_value *out);

/* Releases stored value `v` that is overwritten or removed: drops its
 * backlink, deletes an embedded target and a nested collection. */
coffer_status cf_graph_release(coffer_txn *txn, const cf_slot *slot, const coffer_value *v);

/* Turns a stored value into the public one (a link's table into a class
 * id; a nested collection into its kind and count). */
coffer_status cf_graph_public(coffer_txn *txn, coffer_value *v);

/* The class of the handle's view stored in `table`, or -1. */
int cf_graph_class_of_table(const coffer_db *db, uint32_t table);

/* Adds `delta` (+1/-1) links from (otable, ocol, okey) to (ttable, tkey). */
coffer_status cf_backlink_change(coffer_txn *txn, uint32_t ttable, coffer_object_key tkey, uint32_t otable, uint16_t ocol,
                                 coffer_object_key okey, int delta);

/* Writes the prefix of the backlinks of (ttable, tkey) — from (otable, ocol)
 * when `with_origin` — and returns its length. */
size_t cf_backlink_prefix(uint32_t ttable, coffer_object_key tkey, int with_origin, uint32_t otable, uint16_t ocol, uint8_t *out);

/* A backlink entry: `count` links to its target from property `ocol` of
 * object `okey` of table `otable`. */
typedef struct cf_backlink {
    uint32_t otable;
    uint16_t ocol;
    coffer_object_key okey;
    uint32_t count;
} cf_backlink;

/* Reads the backlink entry under cursor position (k, v). */
coffer_status cf_backlink_entry(coffer_txn *txn, const MDB_val *k, const MDB_val *v, cf_backlink *out);

/* Counts the links to (ttable, tkey), from (otable, ocol) when with_origin. */
coffer_status cf_backlink_count(coffer_txn *txn, uint32_t ttable, coffer_object_key tkey, int with_origin, uint32_t otable,
                                uint16_t ocol, uint64_t *out);

/* Drops every link to (ttable, tkey) as its deletion requires: links become
 * null, list and set elements go, map values become null. */
coffer_status cf_graph_unlink_all(coffer_txn *txn, uint32_t ttable, coffer_object_key tkey);

/* Collections of a property: the count of collection `id` (0 = empty). */
coffer_status cf_collection_count(coffer_txn *txn, uint64_t id, uint64_t *out);

/* Creates a collection for `slot` of kind `kind` (COFFER_COLLECTION_*) at
 * nesting level `depth`, filled from public value `v` (a list or map
 * value), and gives its id (0 when `v` is empty and `allow_empty_id`). */
coffer_status cf_collection_create(coffer_txn *txn, const cf_slot *slot, int kind, int depth, const coffer_value *v, uint64_t *id);

/* Deletes collection `id` and releases everything in it. */
coffer_status cf_collection_delete(coffer_txn *txn, const cf_slot *slot, uint64_t id);

/* Removes or nulls every link to (ttable, tkey) inside collection `id`;
 * `own` when `id` is the slot property's own collection (not one nested in
 * a mixed value). Elements removed from lists are recorded in the change
 * log as erased. */
coffer_status cf_collection_unlink(coffer_txn *txn, const cf_slot *slot, uint64_t id, int own, uint32_t ttable,
                                   coffer_object_key tkey);

/* The key under which an entry of sub-database 1 (`key`, with opened value
 * `value`) is stored in the file of `txn`: set elements and map entries are
 * keyed by hashes that depend on the file's key; other keys stay. `out`
 * holds CF_COLLECTION_KEY_MAX bytes. For copies to another file. */
#define CF_COLLECTION_KEY_MAX 511
coffer_status cf_collection_copy_key(const coffer_txn *txn, const uint8_t *key, size_t klen, const uint8_t *value, size_t vlen,
                                     uint8_t *out, size_t *outlen);

/* Implemented by object.c for the graph: */

/* Checks the contents of a non-null scalar `v` (UTF-8, sizes, dates);
 * `p` names the property in messages. */
coffer_status cf_value_check_scalar(const cf_class *c, const cf_prop *p, const coffer_value *v);

/* Creates an object from a nested description (embedded classes allowed)
 * or updates the one with its primary key; gives its key. */
coffer_status cf_object_create_nested(coffer_txn *txn, coffer_class_id cls, const coffer_field *fields, size_t count, int policy,
                                      int depth, coffer_object_key *key);

/* Deletes object `key` of class `cls` with every cascade. */
coffer_status cf_object_delete_key(coffer_txn *txn, coffer_class_id cls, coffer_object_key key);

/* Drops links to (ttable, tkey) from property column `column` of object
 * `okey` of class `ocls`. */
coffer_status cf_object_unlink(coffer_txn *txn, coffer_class_id ocls, uint16_t column, coffer_object_key okey, uint32_t ttable,
                               coffer_object_key tkey);

/* Checks the fields of a nested object description of class `cls`. */
coffer_status cf_object_check_fields(coffer_txn *txn, coffer_class_id cls, const coffer_field *fields, size_t count, int policy,
                                     int depth);

/* The stored collection id of collection property (or mixed property with
 * a nested collection) `prop` of object `key`; with `create`, a property
 * collection is stored now if it is not yet. *kind gets its kind. */
coffer_status cf_object_collection(coffer_txn *txn, coffer_class_id cls, coffer_object_key key, coffer_property_id prop,
                                   int create, uint64_t *id, int *kind, int *depth);

#endif
