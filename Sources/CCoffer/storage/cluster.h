/* cluster — the encoding of up to 256 objects of one class stored together
 * in one LMDB value (file format 5, docs/FORMAT.md "Clusters"): the low
 * bytes of their keys, then their values column by column, so that a scan
 * of one property reads one contiguous block and any value is found in
 * O(1) without decoding the others. */
#ifndef COFFER_CLUSTER_H
#define COFFER_CLUSTER_H

#include <stddef.h>
#include <stdint.h>

#include "coffer.h"
#include "storage/record.h"

#define CF_CLUSTER_VERSION 4u     /* written; 4 stores its blocks apart (below) */
#define CF_CLUSTER_VERSION_MIN 2u /* read: version 2 has no narrowed blocks */
/* From this version on a cluster's LMDB value holds its head only, and each
 * column block is an LMDB value of its own (cf_cluster_block_key), so that
 * an update of some columns writes only their blocks. Versions 2 and 3 hold
 * the head and every block in one value. */
#define CF_CLUSTER_VERSION_APART 4u
#define CF_BLOCK_PREFIX 0x02u /* first byte of a column block's key; sorts after every cluster and external key */
#define CF_BLOCK_KEY_SIZE 11  /* prefix, column (u16 BE), cluster (u64 BE) */
#define CF_CLUSTER_BITS 8
#define CF_CLUSTER_HEADER_SIZE 6 /* version, flags, object count, column count: then the keys */
#define CF_CLUSTER_MAX 256 /* objects of keys k with the same k >> CF_CLUSTER_BITS */
/* An object whose record is larger is stored outside its cluster, under its
 * own key (cf_cluster_external_key), so that a cluster stays small enough
 * to be rewritten whole. */
#define CF_CLUSTER_INLINE_MAX 1024
#define CF_EXTERNAL_PREFIX 0x01u /* first byte of an external key; a cluster's is 0 */
#define CF_EXTERNAL_KEY_SIZE 9
#define CF_CLUSTER_FLAG_EXTERNAL 1u /* a bitmap of the objects stored outside follows the keys */
#define CF_BLOCK_HEADER 2            /* a column block's kind and width */

/* How a column block stores its values. A narrowed block (cluster version
 * 3) holds a column of ints (8-byte values) as a base and each value's
 * distance from it in `width` bytes (1, 2 or 4). */
enum { CF_BLOCK_NULL = 0, CF_BLOCK_FIXED = 1, CF_BLOCK_ENDS16 = 2, CF_BLOCK_ENDS32 = 3, CF_BLOCK_NARROW = 4 };
#define CF_NARROW_BASE 8 /* a narrowed block's base, i64 LE, after its null bitmap */

/* The value at `p` of a narrowed block of `width` bytes (1, 2 or 4), with
 * its block's `base`. */
static inline int64_t cf_narrow_value(uint64_t base, const uint8_t *p, unsigned width)
{
    uint64_t off = width == 1 ? p[0] : width == 2 ? (uint64_t)p[0] | (uint64_t)p[1] << 8 : cf_get_le(p, 4);
    return (int64_t)(base + off);
}

/* Whether `width` is one a narrowed block may have. */
static inline int cf_narrow_width_ok(unsigned width) { return width == 1 || width == 2 || width == 4; }

static inline size_t cf_cluster_bitmap_size(uint16_t n) { return ((size_t)n + 7) / 8; }

/* A column block once opened (its checksum checked or its seal opened). */
typedef struct cf_cluster_block {
    const uint8_t *data; /* NULL until opened */
    size_t len;
    uint8_t kind, width; /* its first two bytes, kept for cf_cluster_prefetch */
} cf_cluster_block;

struct cf_cluster;
/* Opens the block of column `col`, stored as stored[0 .. len), into
 * c->opened[col]; a status naming the damage when it cannot. */
typedef coffer_status (*cf_cluster_open_fn)(void *ctx, const struct cf_cluster *c, uint16_t col, const uint8_t *stored,
                                            size_t len);

/* A parsed cluster, borrowing its bytes. Its column blocks either follow
 * one another at `blocks` (opened == NULL), or are stored apart, each with
 * `overhead` bytes of checksum or seal, and opened on first use by `open`
 * (storage/cluster_parts.h): after the head in its value (`blocks` points
 * at the first), or, when `apart` (cluster version 4), each as an LMDB
 * value of its own (`blocks` is NULL; `open` is given no stored bytes). */
typedef struct cf_cluster {
    const uint8_t *lows; /* n low bytes of the keys, strictly increasing */
    const uint8_t *external; /* bitmap of the objects stored outside, or NULL for none */
    const uint8_t *dir;  /* ncols 32-bit ends of the column blocks (as opened) */
    const uint8_t *blocks;
    size_t blocks_len; /* the blocks' bytes as opened */
    uint16_t n, ncols;
    cf_cluster_block *opened; /* ncols blocks, or NULL */
    size_t overhead;
    cf_cluster_open_fn open;
    void *open_ctx;
    uint8_t version; /* the head's */
    uint8_t apart;   /* its blocks are LMDB values of their own */
} cf_cluster;

/* Checks the header, keys and block directory of a cluster of `len` bytes
 * (column blocks are checked as they are read). COFFER_ERR_CORRUPTED naming
 * what is wrong, COFFER_ERR_FORMAT_VERSION for a newer cluster version. */
coffer_status cf_cluster_parse(const uint8_t *data, size_t len, cf_cluster *out);

/* The size of the head (header, keys, bitmap and directory) that starts the
 * `len` bytes at `data`, or 0 when they are too short to hold one. */
size_t cf_cluster_head_size(const uint8_t *data, size_t len);

/* Checks a head of exactly `len` bytes whose blocks hold `blocks_len`
 * bytes once opened; out->blocks is left NULL (cf_cluster_parse's errors). */
coffer_status cf_cluster_parse_head(const uint8_t *head, size_t len, size_t blocks_len, cf_cluster *out);

/* The bytes of column `col`'s block (col < c->ncols), opening it first
 * when it is stored apart: the opener's status when it cannot. */
coffer_status cf_cluster_block_of(const cf_cluster *c, uint16_t col, const uint8_t **b, size_t *len);

/* Whether the object at `at` is stored outside the cluster (its columns
 * here are null). */
static inline int cf_cluster_is_external(const cf_cluster *c, uint16_t at)
{
    return c->external && (c->external[at / 8] >> (at % 8)) & 1;
}

/* The LMDB key of object `key` stored outside its cluster. */
static inline void cf_cluster_external_key(uint8_t out[CF_EXTERNAL_KEY_SIZE], uint64_t key)
{
    out[0] = CF_EXTERNAL_PREFIX;
    cf_put_be64(out + 1, key);
}

/* The LMDB key of column `col`'s block of cluster `cid` stored apart: a
 * column's blocks follow one another in key order. */
static inline void cf_cluster_block_key(uint8_t out[CF_BLOCK_KEY_SIZE], uint16_t col, uint64_t cid)
{
    out[0] = CF_BLOCK_PREFIX;
    out[1] = (uint8_t)(col >> 8);
    out[2] = (uint8_t)col;
    cf_put_be64(out + 3, cid);
}

/* The position of the first object whose key's low byte is at least `low`,
 * or c->n when there is none. */
uint16_t cf_cluster_seek(const cf_cluster *c, unsigned low);

/* The stored bytes of column `col` of the object at position `at` (as
 * cf_scalar_write wrote them): 1 with *p and *n set, 0 when null or a
 * column the cluster does not have, -1 when its block is damaged (no
 * message) or cannot be opened (the opener's message). A value of a
 * narrowed block is widened into `wide` (its 8 bytes, LE), and *p points
 * there. */
int cf_cluster_raw(const cf_cluster *c, uint16_t at, uint16_t col, const uint8_t **p, size_t *n, uint8_t wide[8]);

/* Checks a column block of cluster `c`, b[0 .. blen) as opened, whole:
 * 0 when cf_cluster_raw will find every object's value in it, -1 (no
 * message) when it is damaged. One pass over its ends, instead of a
 * check per value. */
int cf_cluster_block_check(const cf_cluster *c, const uint8_t *b, size_t blen);

/* Asks the processor to load the bytes of every opened column block that
 * reading the object at `at` whole will touch, all at once, so that their
 * cache misses overlap instead of following one another. Reads nothing. */
void cf_cluster_prefetch(const cf_cluster *c, uint16_t at);

/* Column `col` of the object at `at` read as `type` (cf_record_get's rules;
 * strings and binaries borrow the cluster's bytes). */
coffer_status cf_cluster_get(const cf_cluster *c, uint16_t at, uint16_t col, coffer_type type, coffer_value *out);

#endif
