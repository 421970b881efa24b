/*
 * lmdb_record.h — the raw LMDB engine's bytes: an object record laid out as
 * docs/FORMAT.md describes Coffer's plain records (so both engines store the
 * same number of bytes per object), and index keys encoded as Coffer's
 * plain index entries (column ‖ tag ‖ value ‖ object key).
 */
#ifndef BENCH_LMDB_RECORD_H
#define BENCH_LMDB_RECORD_H

#include <stddef.h>
#include <stdint.h>

#include "workload.h"

#define LMDB_RECORD_COLUMNS 10
/* Header, offsets and the largest values. */
#define LMDB_RECORD_MAX (4 + 2 + 2 * LMDB_RECORD_COLUMNS + 45 + 2 * (BENCH_TEXT_MAX + 1) + BENCH_NAME_LEN + 1)

/* Columns of the indexed properties, as in the Coffer schema. */
enum { LMDB_COLUMN_ID = 0, LMDB_COLUMN_I64 = 3, LMDB_COLUMN_GROUP = 8, LMDB_COLUMN_NAME = 9 };

/* Encodes `e` into `out` (LMDB_RECORD_MAX bytes); returns the size. */
size_t lmdb_record_encode(const bench_entity *e, uint8_t *out);
/* Decodes a record, checking every offset. 0, or -1 if it is malformed. */
int lmdb_record_decode(const uint8_t *rec, size_t size, bench_entity *e);
/* Reads only the i64 column, in O(1). 0, or -1 if malformed. */
int lmdb_record_i64(const uint8_t *rec, size_t size, int64_t *out);

/* Index keys. An int key is 2 + 1 + 8 (+ 8 with the object key) bytes; a
 * name key 2 + 1 + len + 1 (+ 8). Each returns the size written. Pass
 * object_key 0 to get the prefix that every entry for that value starts with. */
#define LMDB_INDEX_INT_KEY_SIZE (2 + 1 + 8 + 8)
#define LMDB_INDEX_NAME_KEY_SIZE (2 + 1 + BENCH_NAME_LEN + 1 + 8)
#define LMDB_INDEX_KEY_MAX \
    (LMDB_INDEX_INT_KEY_SIZE > LMDB_INDEX_NAME_KEY_SIZE ? LMDB_INDEX_INT_KEY_SIZE : LMDB_INDEX_NAME_KEY_SIZE)
size_t lmdb_index_int_key(unsigned column, int64_t value, uint64_t object_key, uint8_t *out);
size_t lmdb_index_name_key(const char *name, size_t len, uint64_t object_key, uint8_t *out);
/* The prefix of every name key whose name starts with `prefix`. */
size_t lmdb_index_name_prefix(const char *prefix, size_t len, uint8_t *out);
/* The object key at the end of an index key. */
uint64_t lmdb_index_object_key(const uint8_t *key, size_t size);

void lmdb_put_be64(uint8_t *out, uint64_t v);
uint64_t lmdb_get_be64(const uint8_t *in);

#endif
