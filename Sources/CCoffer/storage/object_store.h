/* object_store — the object store interface (docs/ARCHITECTURE.md, "The
 * object store boundary"): how the objects of a class and their index
 * entries sit in LMDB is known only below this line. Above it, objects/,
 * query/ and verify/ get rows, values, keys in order, scans and index walks
 * through these functions and never call LMDB on an object table or an
 * index, nor decode a record's bytes. Strings and binaries handed out are
 * borrowed: valid until the read transaction ends (plain files: LMDB's map;
 * encrypted files: the row's or the scan's opened buffer, until its next
 * read), and in a write transaction until the next write to the class.
 * object_store.c implements the object half, index.c the index walks. */
#ifndef COFFER_OBJECT_STORE_H
#define COFFER_OBJECT_STORE_H

#include <string.h>

#include "storage/cluster.h"
#include "storage/handles.h"

/* ---- rows ---------------------------------------------------------------- */

/* Reads the object `key` of class `cls` into `row` (its buffer is reused
 * and grown as needed; cf_row_free releases it). COFFER_ERR_NOT_FOUND
 * without a message when there is no such object; COFFER_ERR_CORRUPTED or
 * COFFER_ERR_INTEGRITY (encrypted) with one when its bytes are damaged. */
coffer_status cf_objects_get(coffer_txn *txn, coffer_class_id cls, coffer_object_key key, cf_row *row);

/* COFFER_OK when object `key` of class `cls` exists, COFFER_ERR_NOT_FOUND
 * (no message) when not; reads nothing of it. */
coffer_status cf_objects_exists(coffer_txn *txn, coffer_class_id cls, coffer_object_key key);

/* Column `column` of a row read as `type`, in O(1): a column the row does
 * not have, or a null one, gives COFFER_TYPE_NULL. COFFER_ERR_CORRUPTED if
 * its bytes do not fit the type. Strings and binaries borrow the row. */
coffer_status cf_row_get(const cf_row *row, uint16_t column, coffer_type type, coffer_value *out);

/* Frees a row's buffer (the row itself belongs to the caller). */
void cf_row_free(cf_row *row);

/* ---- writes -------------------------------------------------------------- */

/* Writes object `key` of class `cls` whole: `slots[c]` is column c's value
 * (type NULL = null) for c < ncols. `append` says the key is above every key
 * of the class (a new object), so the write is an append. The values are
 * copied; errors name the object. */
coffer_status cf_objects_put(coffer_txn *txn, coffer_class_id cls, coffer_object_key key, const coffer_value *slots,
                             uint16_t ncols, int append);

/* Changes columns cols[0..n) (distinct) of existing object `key` of class
 * `cls` to vals[0..n) (type NULL = null) in place, without writing the
 * object whole: file format 5 keeps an unchanged object's other values
 * where they are stored and changes only these in the transaction's
 * cluster, when each new value has the encoded size of the one it
 * replaces (docs/FORMAT.md, "Clusters"). COFFER_DONE (no message), with
 * nothing changed, when that cannot be done (format 4, a value of another
 * size, an object stored outside its cluster): the caller writes the
 * object whole with cf_objects_put. Strings and binaries the object's
 * rows borrowed may hold the new bytes afterwards, so a caller reads what
 * it needs of the old values (index entries) first. */
coffer_status cf_objects_patch(coffer_txn *txn, coffer_class_id cls, coffer_object_key key, const uint16_t *cols,
                               const coffer_value *vals, size_t n);

/* Removes object `key` of class `cls` (its index entries are the caller's). */
coffer_status cf_objects_delete(coffer_txn *txn, coffer_class_id cls, coffer_object_key key);

/* Removes every object and every index entry of class `cls` at once. */
coffer_status cf_objects_clear(coffer_txn *txn, coffer_class_id cls);

/* The LMDB key (in the class's object table, sub-database 2t) under which
 * object `key` is stored: its own key, or its cluster's in file format 5.
 * For the integrity check, which locates objects on their pages. */
void cf_objects_place(const coffer_txn *txn, coffer_object_key key, uint8_t out[8]);

/* ---- counts and keys in order -------------------------------------------- */

/* The number of objects of class `cls`, in O(1). */
coffer_status cf_objects_count(coffer_txn *txn, coffer_class_id cls, uint64_t *out);

/* The number of objects stored under table number `table`, a class the
 * handle's schema may not hold (a migration counting a left-out class);
 * `name` names it in messages. */
coffer_status cf_objects_count_table(coffer_txn *txn, uint32_t table, const char *name, uint64_t *out);

/* A cf_object_cursor (handles.h) is a position in the objects of one class,
 * in key order. It stays usable across writes of its transaction only
 * through cf_object_cursor_seek (a write may move what it points at). */

/* Opens a cursor on class `cls`; cf_object_cursor_close ends it. */
coffer_status cf_object_cursor_open(coffer_txn *txn, coffer_class_id cls, cf_object_cursor *out);

/* Moves to the first object whose key is at least `from` and gives its key,
 * and its values in `row` when not NULL. COFFER_DONE past the last object.
 * A damaged entry is COFFER_ERR_CORRUPTED (or COFFER_ERR_INTEGRITY) naming
 * it; cf_object_cursor_next then moves past it. Nothing is allocated per
 * object (a row's buffer is reused). */
coffer_status cf_object_cursor_seek(cf_object_cursor *c, coffer_object_key from, coffer_object_key *key, cf_row *row);

/* The object after the current one (the first when none is current). */
coffer_status cf_object_cursor_next(cf_object_cursor *c, coffer_object_key *key, cf_row *row);

/* Closes a cursor (a zeroed or closed one is left as it is). */
void cf_object_cursor_close(cf_object_cursor *c);

/* ---- scans --------------------------------------------------------------- */

/* Called once per object of a scan, in key order, with the values of the
 * columns asked for (null columns as COFFER_TYPE_NULL). Returns COFFER_OK to
 * go on, COFFER_DONE to stop the scan early (which then returns COFFER_OK),
 * or any other status to stop it and return that status. */
typedef coffer_status (*cf_scan_fn)(void *ctx, coffer_object_key key, const coffer_value *values);

/* Reads columns `columns[0..n)` (as `types[0..n)`) of every object of class
 * `cls` in key order, touching only their bytes, without allocating per
 * object. A damaged object stops the scan with an error naming it. */
coffer_status cf_objects_scan(coffer_txn *txn, coffer_class_id cls, const uint16_t *columns, const coffer_type *types,
                              size_t n, cf_scan_fn fn, void *ctx);

/* ---- column batches -------------------------------------------------------
 * A scan that tests a few columns of every object can take the objects in
 * batches instead, where the store keeps them column by column (file format
 * 5: an unchanged cluster, every object in it): the batch's keys, and each
 * column read in place as one array, without a value being decoded until
 * it is asked for. Objects not kept that way (format 4, a cluster changed
 * by the transaction or with objects stored outside) still go one by one. */

#define CF_OBJECT_BATCH_MAX 256

/* Up to CF_OBJECT_BATCH_MAX objects of one class, in key order. */
typedef struct cf_object_batch {
    coffer_object_key base;   /* object i's key is base | lows[i] */
    const uint8_t *lows;
    uint16_t n;
    const struct cf_cluster *cluster; /* where the columns are read */
    const char *class_name;           /* for messages */
} cf_object_batch;

/* One column of a batch, borrowed from the store as a batch's values are
 * (object_store.h's opening note). A value is null when `all_null` or its
 * bit in `nulls` is set; otherwise it is `width` bytes at fixed + i * width
 * (fixed != NULL), or, in a column of values of different sizes, the bytes
 * between two of the `n` ends (checked once to be in order and within
 * `bytes_len`). Either way the values follow one another: cf_column_span
 * gives each one's place. Values are encoded as in a record
 * (docs/FORMAT.md): an int is 8 bytes LE, a string its bytes and a NUL;
 * but in a narrowed column (`narrow`, only of type int) an int is `base`
 * plus its `width` bytes: read it with cf_column_int or cf_batch_value. */
typedef struct cf_column {
    uint16_t n;
    uint8_t all_null;
    uint8_t some_null;    /* a bit of `nulls` is set */
    uint8_t narrow;       /* ints stored as `base` plus `width` bytes each (1, 2 or 4) */
    const uint8_t *nulls;
    const uint8_t *fixed;
    size_t width;
    uint64_t base;
    const uint8_t *ends;  /* variable sizes: n ends of end_width bytes, relative to `bytes` */
    unsigned end_width;
    const uint8_t *bytes;
    size_t bytes_len;
    coffer_type type;
} cf_column;

static inline int cf_column_is_null(const cf_column *c, uint16_t i)
{
    return c->all_null || ((c->nulls[i >> 3] >> (i & 7)) & 1);
}

/* Whether the column's values are ints read with cf_column_int. */
static inline int cf_column_has_ints(const cf_column *c)
{
    return !c->all_null && c->type == COFFER_TYPE_INT && c->fixed && (c->width == 8 || c->narrow);
}

/* A little-endian integer of `n` bytes (2, 4 or 8): one load where the
 * processor is little-endian. */
static inline uint64_t cf_column_load(const uint8_t *p, int n)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (n == 8) {
        uint64_t v;
        memcpy(&v, p, 8);
        return v;
    }
    if (n == 4) {
        uint32_t v;
        memcpy(&v, p, 4);
        return v;
    }
    uint16_t v;
    memcpy(&v, p, 2);
    return v;
#else
    return cf_get_le(p, n);
#endif
}

/* Value i of a column cf_column_has_ints() accepts (not null). */
static inline int64_t cf_column_int(const cf_column *c, uint16_t i)
{
    if (c->narrow)
        return cf_narrow_value(c->base, c->fixed + (size_t)i * c->width, (unsigned)c->width);
    return (int64_t)cf_column_load(c->fixed + (size_t)i * 8, 8);
}

/* Whether the column's values are doubles (or floats) read with
 * cf_column_real. */
static inline int cf_column_has_reals(const cf_column *c)
{
    return !c->all_null && c->fixed && !c->narrow &&
           ((c->type == COFFER_TYPE_DOUBLE && c->width == 8) || (c->type == COFFER_TYPE_FLOAT && c->width == 4));
}

/* Value i of a column cf_column_has_reals() accepts (not null), as a double. */
static inline double cf_column_real(const cf_column *c, uint16_t i)
{
    if (c->width == 8) {
        uint64_t bits = cf_column_load(c->fixed + (size_t)i * 8, 8);
        double d;
        memcpy(&d, &bits, 8);
        return d;
    }
    uint32_t bits = (uint32_t)cf_column_load(c->fixed + (size_t)i * 4, 4);
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

/* The end of value i, from the start of the values (fixed or `bytes`). */
static inline size_t cf_column_end(const cf_column *c, uint16_t i)
{
    if (c->fixed)
        return ((size_t)i + 1) * c->width;
    return c->end_width == 2 ? (size_t)cf_column_load(c->ends + (size_t)i * 2, 2)
                             : (size_t)cf_column_load(c->ends + (size_t)i * 4, 4);
}

/* Where value i lies: [*start, *end) of cf_column_values(c) (empty or
 * zeros when null). */
static inline void cf_column_span(const cf_column *c, uint16_t i, size_t *start, size_t *end)
{
    *start = i ? cf_column_end(c, (uint16_t)(i - 1)) : 0;
    *end = cf_column_end(c, i);
}

static inline const uint8_t *cf_column_values(const cf_column *c) { return c->fixed ? c->fixed : c->bytes; }
static inline size_t cf_column_values_len(const cf_column *c)
{
    return c->n ? cf_column_end(c, (uint16_t)(c->n - 1)) : 0;
}

/* Called once per batch of a cf_objects_scan_batches; same return rules as
 * cf_scan_fn. */
typedef coffer_status (*cf_batch_fn)(void *ctx, const cf_object_batch *batch);

/* cf_objects_scan, with the objects the store keeps column by column handed
 * to `batch_fn` a batch at a time instead of to `fn` one by one; every
 * object goes to exactly one of them, in key order. */
coffer_status cf_objects_scan_batches(coffer_txn *txn, coffer_class_id cls, const uint16_t *columns,
                                      const coffer_type *types, size_t n, cf_scan_fn fn, cf_batch_fn batch_fn, void *ctx);

/* Column `column` of batch `b`, read as `type`: checks its block's header
 * and sizes once (a column the batch's objects do not have is all null).
 * COFFER_ERR_CORRUPTED (or the opener's status) naming the objects. */
coffer_status cf_batch_column(const cf_object_batch *b, uint16_t column, coffer_type type, cf_column *out);

/* Value i of column `c` of batch `b` (cf_record_get's rules; strings and
 * binaries borrow the store). COFFER_ERR_CORRUPTED naming the object when
 * its bytes do not fit the type. */
coffer_status cf_batch_value(const cf_object_batch *b, const cf_column *c, uint16_t i, coffer_value *out);

/* ---- index walks --------------------------------------------------------- */

/* Called once per index entry of a walk, in index order, with the object
 * key it names; same return rules as cf_scan_fn. */
typedef coffer_status (*cf_index_fn)(void *ctx, coffer_object_key key);

/* Walks the entries of class `cls` whose prefix (column ‖ encoded value,
 * cf_index_prefix) is `prefix` exactly (`exact`) or begins with it: in
 * value order, and each value's objects in key order. */
coffer_status cf_index_walk_prefix(coffer_txn *txn, coffer_class_id cls, const uint8_t *prefix, size_t plen, int exact,
                                   cf_index_fn fn, void *ctx);

/* A range of one column's non-null values, by their encoded prefixes
 * (cf_index_prefix of the bounds; only meaningful in plain files, where
 * encoded values keep their order). */
typedef struct cf_index_range {
    uint16_t column;
    const uint8_t *lo, *hi; /* NULL: unbounded */
    size_t lolen, hilen;
    int lo_incl, hi_incl;
} cf_index_range;

/* Walks the entries of class `cls` whose value lies in range `r`, in value
 * order; same callback rules as cf_index_walk_prefix. */
coffer_status cf_index_walk_range(coffer_txn *txn, coffer_class_id cls, const cf_index_range *r, cf_index_fn fn,
                                  void *ctx);

/* Called once per index entry of cf_index_each with the column it belongs to
 * (-1 when the entry is too short to be one) and its bytes, for the
 * integrity check, which locates entries on their pages. */
typedef void (*cf_index_entry_fn)(void *ctx, int column, const uint8_t *entry, size_t len);

/* Every index entry of class `cls` in order. */
coffer_status cf_index_each(coffer_txn *txn, coffer_class_id cls, cf_index_entry_fn fn, void *ctx);

/* COFFER_OK when class `cls` holds index entry `entry` (column ‖ encoded
 * value ‖ object key, as cf_index_entry builds it), else
 * COFFER_ERR_NOT_FOUND (no message). */
coffer_status cf_index_contains(coffer_txn *txn, coffer_class_id cls, const uint8_t *entry, size_t len);

#endif
