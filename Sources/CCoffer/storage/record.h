/* record — the binary encoding of one object (docs/FORMAT.md). A record is
 * a header, a null bitmap, the end offset of every column's bytes, then the
 * bytes; any column is read in O(1) without decoding the others. */
#ifndef COFFER_RECORD_H
#define COFFER_RECORD_H

#include <stddef.h>
#include <stdint.h>

#include "coffer.h"

#define CF_RECORD_VERSION 1u

typedef struct cf_record {
    const uint8_t *nulls;
    const uint8_t *ends;
    const uint8_t *values;
    size_t values_len;
    uint16_t ncols;
    int wide; /* 32-bit end offsets */
} cf_record;

/* One object's stored values as read from its class (object_store.h): the
 * parsed record, borrowed from LMDB's map in a plain file or from `buf` (the
 * opened record, owned by the row and reused from read to read) in an
 * encrypted one; or, in file format 5, an object of a cluster the
 * transaction keeps open (storage/cluster_cache.h). */
struct cf_cluster;

typedef struct cf_row {
    cf_record rec;
    const struct cf_cluster *cl; /* file format 5: the values are object `at` of this cluster, not rec */
    uint16_t at;
    uint8_t *buf;
    size_t buf_cap;
} cf_row;

/* Checks the header of a record of `len` bytes. COFFER_ERR_CORRUPTED if it
 * is not a record this library can read. */
coffer_status cf_record_parse(const uint8_t *data, size_t len, cf_record *out);

/* Reads column `column` as `type` into *out; a column the record does not
 * have, or a null one, gives COFFER_TYPE_NULL. COFFER_ERR_CORRUPTED if the
 * bytes do not fit the type. Strings and binaries borrow the record. */
coffer_status cf_record_get(const cf_record *r, uint16_t column, coffer_type type, coffer_value *out);

/* The stored bytes of column `column` (as cf_scalar_write wrote them): 1
 * with *p and *n set, 0 when the column is null or absent, -1 (no message)
 * when its end offsets lie outside the record. */
int cf_record_raw(const cf_record *r, uint16_t column, const uint8_t **p, size_t *n);

/* Size of the record holding `slots[0..ncols)` (type NULL = null). */
size_t cf_record_size(const coffer_value *slots, uint16_t ncols);

/* Writes that record into out[0 .. cf_record_size()). */
void cf_record_write(uint8_t *out, const coffer_value *slots, uint16_t ncols);

/* The encoding of one non-null scalar value (a record column, or a cell's
 * payload): its size, writing it, and reading it back (COFFER_ERR_CORRUPTED
 * if the bytes do not fit the type; strings and binaries borrow p). */
size_t cf_scalar_size(const coffer_value *v);
void cf_scalar_write(uint8_t *p, const coffer_value *v);
coffer_status cf_scalar_read(const uint8_t *p, size_t n, coffer_type type, coffer_value *out);

/* Little-endian and big-endian load/store helpers shared by the storage code. */
static inline void cf_put_le(uint8_t *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++, v >>= 8)
        p[i] = (uint8_t)v;
}
static inline uint64_t cf_get_le(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}
static inline void cf_put_be64(uint8_t *p, uint64_t v)
{
    for (int i = 7; i >= 0; i--, v >>= 8)
        p[i] = (uint8_t)v;
}
static inline uint64_t cf_get_be64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = v << 8 | p[i];
    return v;
}
static inline void cf_put_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24); p[1] = (uint8_t)(v >> 16); p[2] = (uint8_t)(v >> 8); p[3] = (uint8_t)v;
}
static inline void cf_put_be16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)(v >> 8); p[1] = (uint8_t)v; }
static inline uint32_t cf_get_be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

#endif
