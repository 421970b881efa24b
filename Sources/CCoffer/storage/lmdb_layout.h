/* lmdb_layout — LMDB's on-disk page layout (liblmdb 0.9, 64-bit,
 * little-endian), as verify/'s page walker and storage/file_version read it:
 * page and node headers, the meta page, the MDB_db record, flags and the
 * default key orders. Only facts about the bytes live here; every reader
 * bounds-checks before it uses them. */
#ifndef COFFER_LMDB_LAYOUT_H
#define COFFER_LMDB_LAYOUT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Page header: pgno u64, pad u16 (key size of LEAF2 pages), flags u16, then
 * lower u16 and upper u16 (or, on overflow pages, the page count u32). The
 * node offsets (u16 each) follow; they are relative to the page start. */
#define LMDB_PAGE_HEADER 16u
#define LMDB_OFF_PGNO 0
#define LMDB_OFF_PAD 8
#define LMDB_OFF_FLAGS 10
#define LMDB_OFF_LOWER 12
#define LMDB_OFF_UPPER 14
#define LMDB_OFF_PAGES 12

#define LMDB_P_BRANCH 0x01u
#define LMDB_P_LEAF 0x02u
#define LMDB_P_OVERFLOW 0x04u
#define LMDB_P_META 0x08u
#define LMDB_P_DIRTY 0x10u
#define LMDB_P_LEAF2 0x20u
#define LMDB_P_SUBP 0x40u

/* Node header: lo u16, hi u16 (data size of a leaf node; low 32 bits of the
 * child page of a branch node, whose flags hold bits 32-47), flags u16, key
 * size u16; the key and then the data follow. */
#define LMDB_NODE_HEADER 8u
#define LMDB_F_BIGDATA 0x01u
#define LMDB_F_SUBDATA 0x02u
#define LMDB_F_DUPDATA 0x04u

/* MDB_db: pad u32 (LEAF2 key size; the page size in the free DB's copy in
 * the meta), flags u16, depth u16, branch, leaf and overflow page counts,
 * entries and root, u64 each. */
#define LMDB_DB_SIZE 48u
#define LMDB_DB_PAD 0
#define LMDB_DB_FLAGS 4
#define LMDB_DB_DEPTH 6
#define LMDB_DB_BRANCH 8
#define LMDB_DB_LEAF 16
#define LMDB_DB_OVERFLOW 24
#define LMDB_DB_ENTRIES 32
#define LMDB_DB_ROOT 40

/* mdb_dbi_open flags kept in MDB_db.flags. */
#define LMDB_REVERSEKEY 0x02u
#define LMDB_DUPSORT 0x04u
#define LMDB_INTEGERKEY 0x08u
#define LMDB_DUPFIXED 0x10u
#define LMDB_INTEGERDUP 0x20u
#define LMDB_REVERSEDUP 0x40u
#define LMDB_DB_FLAGS_KNOWN 0x7eu

/* MDB_meta, after the page header of pages 0 and 1: magic u32, version u32,
 * fixed address u64, map size u64, the free DB and the main DB (MDB_db
 * each), last page u64, transaction id u64. */
#define LMDB_META_MAGIC_OFF 0
#define LMDB_META_VERSION_OFF 4
#define LMDB_META_MAPSIZE_OFF 16
#define LMDB_META_FREE_DB_OFF 24
#define LMDB_META_MAIN_DB_OFF (24 + LMDB_DB_SIZE)
#define LMDB_META_LAST_PG_OFF (24 + 2 * LMDB_DB_SIZE)
#define LMDB_META_TXNID_OFF (LMDB_META_LAST_PG_OFF + 8)
#define LMDB_META_SIZE (LMDB_META_TXNID_OFF + 8)
#define LMDB_MAGIC 0xBEEFC0DEu
#define LMDB_DATA_VERSION 1u
#define LMDB_NUM_METAS 2u
#define LMDB_INVALID_PGNO UINT64_MAX
#define LMDB_MAX_KEY 511u

/* Page counts of an overflow value of `size` bytes (OVPAGES). */
static inline uint64_t lmdb_overflow_pages(uint64_t size, uint32_t psize)
{
    return (LMDB_PAGE_HEADER - 1 + size) / psize + 1;
}

static inline uint16_t lmdb_u16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static inline uint32_t lmdb_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t lmdb_u64(const uint8_t *p) { return (uint64_t)lmdb_u32(p) | (uint64_t)lmdb_u32(p + 4) << 32; }

/* The key orders LMDB gives a database by its flags: bytes (shorter first
 * on a common prefix), bytes from the end (REVERSE*), or native unsigned
 * integers of 4 or 8 bytes (INTEGER*). */
typedef enum { LMDB_ORDER_BYTES, LMDB_ORDER_REVERSE, LMDB_ORDER_INTEGER } lmdb_order;

static inline int lmdb_compare(lmdb_order order, const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
    if (order == LMDB_ORDER_INTEGER && alen == blen && (alen == 4 || alen == 8)) {
        uint64_t x = alen == 4 ? lmdb_u32(a) : lmdb_u64(a), y = alen == 4 ? lmdb_u32(b) : lmdb_u64(b);
        return x < y ? -1 : x > y;
    }
    if (order == LMDB_ORDER_REVERSE) {
        size_t i = alen, j = blen;
        while (i > 0 && j > 0) {
            int d = (int)a[--i] - (int)b[--j];
            if (d)
                return d;
        }
        return alen < blen ? -1 : alen > blen;
    }
    size_t n = alen < blen ? alen : blen;
    int d = n ? memcmp(a, b, n) : 0;
    return d ? d : alen < blen ? -1 : alen > blen;
}

#endif
