/* cluster_cache — the clusters a transaction opened and changed: a hash
 * table by (class, cluster), and per class the changed ones in order, which
 * cursors merge with LMDB's and the commit writes. */
#define _GNU_SOURCE
#include "storage/cluster_cache.h"

#include <inttypes.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "storage/cluster_encode.h"
#include "storage/cluster_parts.h"
#include "storage/txn.h"
#include "util/error.h"

#define FIRST_CAPACITY 64

typedef struct changed_list {
    cf_cluster_entry **entries; /* by cid */
    size_t n, cap;
    int64_t count_change;
    int cleared; /* the table was emptied: its stored count is 0 */
} changed_list;

struct cf_cluster_cache {
    cf_cluster_entry **slots; /* open addressing, a power of two */
    size_t cap, used;
    changed_list *classes;
    size_t nclasses;
    cf_cluster_member *members; /* CF_CLUSTER_MAX, for encoding */
    cf_cluster_encoder enc;
    /* A cluster was written to LMDB before the commit: a plain file's
     * clusters and records read from now on may sit in pages this
     * transaction changes again, so they are copied when opened. */
    int wrote;
    cf_cluster_entry *spare; /* entries kept for reuse (write transactions), by `next_spare` */
    size_t nspare;
};

static size_t slot_of(coffer_class_id cls, uint64_t cid, size_t cap)
{
    uint64_t h = (cid ^ ((uint64_t)cls << 48)) * 0x9E3779B97F4A7C15ull;
    return (size_t)(h >> 17) & (cap - 1);
}

static void cache_destroy(struct cf_cluster_cache *c);

static struct cf_cluster_cache *cache_new(size_t nclasses)
{
    struct cf_cluster_cache *c = calloc(1, sizeof *c);
    if (c) {
        c->slots = calloc(FIRST_CAPACITY, sizeof *c->slots);
        c->classes = calloc(nclasses + 1, sizeof *c->classes);
        c->cap = FIRST_CAPACITY;
        c->nclasses = nclasses;
    }
    if (c && c->slots && c->classes)
        return c;
    if (c) {
        free(c->slots);
        free(c->classes);
    }
    free(c);
    return NULL;
}

/* The cache a write transaction left on its handle, or NULL (also when it
 * was made for another number of classes: the schema changed). */
static struct cf_cluster_cache *cache_reused(coffer_db *db, size_t nclasses)
{
    struct cf_cluster_cache *c = atomic_exchange(&db->cluster_pool, NULL);
    if (c && c->nclasses != nclasses) {
        cache_destroy(c);
        c = NULL;
    }
    return c;
}

static struct cf_cluster_cache *cache_of(coffer_txn *txn)
{
    if (txn->clusters)
        return txn->clusters;
    size_t n = txn->db->schema->nclasses;
    struct cf_cluster_cache *c = txn->reuse_clusters ? cache_reused(txn->db, n) : NULL;
    if (!c && !(c = cache_new(n))) {
        cf_error(COFFER_ERR_NO_MEMORY, "out of memory opening a cluster");
        return NULL;
    }
    txn->clusters = c;
    return c;
}

static cf_cluster_entry *lookup(const struct cf_cluster_cache *c, coffer_class_id cls, uint64_t cid)
{
    for (size_t i = slot_of(cls, cid, c->cap);; i = (i + 1) & (c->cap - 1)) {
        cf_cluster_entry *e = c->slots[i];
        if (!e || (e->cls == cls && e->cid == cid))
            return e;
    }
}

static coffer_status insert(struct cf_cluster_cache *c, cf_cluster_entry *e)
{
    if (2 * (c->used + 1) > c->cap) {
        size_t cap = 2 * c->cap;
        cf_cluster_entry **slots = calloc(cap, sizeof *slots);
        if (!slots)
            return cf_error(COFFER_ERR_NO_MEMORY, "out of memory opening a cluster");
        for (size_t i = 0; i < c->cap; i++) {
            cf_cluster_entry *x = c->slots[i];
            if (!x)
                continue;
            size_t j = slot_of(x->cls, x->cid, cap);
            while (slots[j])
                j = (j + 1) & (cap - 1);
            slots[j] = x;
        }
        free(c->slots);
        c->slots = slots;
        c->cap = cap;
    }
    size_t i = slot_of(e->cls, e->cid, c->cap);
    while (c->slots[i])
        i = (i + 1) & (c->cap - 1);
    c->slots[i] = e;
    c->used++;
    return COFFER_OK;
}

/* ---- the arena of new records -------------------------------------------- */

#define ARENA_CHUNK 16384

struct cf_arena_chunk {
    cf_arena_chunk *next;
    size_t used, cap;
    uint8_t data[];
};

static void arena_free(cf_cluster_entry *e)
{
    while (e->arena) {
        cf_arena_chunk *next = e->arena->next;
        free(e->arena);
        e->arena = next;
    }
}

/* `len` bytes (len > 0) that stay where they are until the entry is freed. */
static uint8_t *arena_alloc(cf_cluster_entry *e, size_t len)
{
    len = (len + 7) & ~(size_t)7;
    cf_arena_chunk *c = e->arena;
    if (!c || c->cap - c->used < len) {
        size_t cap = len > ARENA_CHUNK / 4 ? len : ARENA_CHUNK;
        cf_arena_chunk *fresh = cap == ARENA_CHUNK && e->spare_chunk ? e->spare_chunk : malloc(sizeof *fresh + cap);
        if (fresh == e->spare_chunk)
            e->spare_chunk = NULL;
        if (!fresh)
            return NULL;
        fresh->used = 0;
        fresh->cap = cap;
        if (c && cap != ARENA_CHUNK) { /* a large record: keep filling the current chunk */
            fresh->next = c->next;
            c->next = fresh;
            fresh->used = len;
            return fresh->data;
        }
        fresh->next = c;
        e->arena = c = fresh;
    }
    uint8_t *p = c->data + c->used;
    c->used += len;
    return p;
}

static void slots_free(cf_cluster_entry *e)
{
    free(e->slots);
    e->slots = NULL;
    arena_free(e);
}

/* Frees what entry `e` opened and changed, but not its spare memory. */
static void entry_clear(cf_cluster_entry *e)
{
    slots_free(e);
    if (e->own_blocks)
        for (uint16_t col = 0; col < e->view.ncols; col++)
            free(e->own_blocks[col]);
    free(e->own_blocks);
    free(e->patched);
    e->own_blocks = NULL;
    e->patched = NULL;
    if (e->external)
        for (int i = 0; i < CF_CLUSTER_MAX; i++)
            free(e->external[i].buf);
    free(e->external);
    free(e->view.opened);
    free(e->blocks);
    free(e->buf);
    free(e->copy);
    e->external = NULL;
    e->view.opened = NULL;
    e->blocks = e->buf = e->copy = NULL;
}

static void entry_free(cf_cluster_entry *e)
{
    entry_clear(e);
    free(e->spare_slots);
    free(e->spare_chunk);
    free(e);
}

/* A new entry: a spare one when the cache keeps any. */
static cf_cluster_entry *entry_new(struct cf_cluster_cache *c)
{
    cf_cluster_entry *e = c->spare;
    if (!e)
        return calloc(1, sizeof *e);
    c->spare = e->next_spare;
    c->nspare--;
    *e = (cf_cluster_entry){.spare_slots = e->spare_slots, .spare_chunk = e->spare_chunk};
    return e;
}

static const char *class_name(const coffer_txn *txn, coffer_class_id cls) { return txn->db->schema->classes[cls].name; }

static void cluster_key(uint8_t kb[8], uint64_t cid) { cf_put_be64(kb, cid); }

static uint32_t number_of(const coffer_txn *txn, const cf_cluster_entry *e)
{
    return 2 * txn->db->schema->classes[e->cls].table;
}

/* Names the objects of cluster `e` in the last error; returns its status. */
static coffer_status name_objects(const coffer_txn *txn, const cf_cluster_entry *e)
{
    return cf_error_prefix("objects %" PRIu64 " to %" PRIu64 " of class '%s'", e->cid << CF_CLUSTER_BITS,
                           (e->cid << CF_CLUSTER_BITS) | (CF_CLUSTER_MAX - 1), class_name(txn, e->cls));
}

/* cf_cluster_open_fn of a stored cluster: a plain file's block is checked
 * where LMDB maps it, an encrypted file's is opened into its place in
 * e->blocks (laid out as the blocks are once opened). A block stored apart
 * (cluster version 4) is read from its own key first; in a plain file it
 * is copied into e->blocks once the transaction has written clusters,
 * whose writes may move LMDB's pages. */
static coffer_status open_block(void *ctx, const cf_cluster *c, uint16_t col, const uint8_t *stored, size_t len)
{
    cf_cluster_entry *e = ctx;
    coffer_txn *txn = e->txn;
    uint8_t *dst = NULL;
    size_t cap = 0;
    int own = txn->db->keys || (c->apart && txn->clusters->wrote);
    if (own) {
        if (!e->blocks && !(e->blocks = malloc(c->blocks_len ? c->blocks_len : 1)))
            return cf_error(COFFER_ERR_NO_MEMORY, "out of memory opening a cluster");
        size_t start = col ? (size_t)cf_get_le(c->dir + (size_t)(col - 1) * 4, 4) : 0;
        dst = e->blocks + start;
        cap = len - c->overhead;
    }
    const uint8_t *data;
    size_t dlen;
    coffer_status st = c->apart ? cf_cluster_fetch_block(txn, txn->db->object_dbis[e->cls], number_of(txn, e), e->cid, col,
                                                         len, &data, &dlen, &dst, &cap)
                                : cf_cluster_open_part(txn, number_of(txn, e), e->cid, col, stored, len, &data, &dlen,
                                                       &dst, &cap);
    if (st != COFFER_OK)
        return name_objects(txn, e);
    if (own && data != dst) { /* a plain block, checked in LMDB's map */
        memcpy(dst, data, dlen);
        data = dst;
    }
    c->opened[col] = (cf_cluster_block){.data = data, .len = dlen};
    return COFFER_OK;
}

/* Opens the head of stored cluster value `v` into `e`; its blocks open on use. */
static coffer_status open_stored(coffer_txn *txn, cf_cluster_entry *e, const MDB_val *v)
{
    e->txn = txn;
    MDB_val own = *v;
    if (txn->clusters->wrote && !txn->db->keys) {
        if (!(e->copy = malloc(v->mv_size ? v->mv_size : 1)))
            return cf_error(COFFER_ERR_NO_MEMORY, "out of memory opening a cluster");
        memcpy(e->copy, v->mv_data, v->mv_size);
        own.mv_data = e->copy;
    }
    e->stored = own.mv_data;
    e->stored_len = own.mv_size;
    coffer_status st = cf_cluster_open_head(txn, number_of(txn, e), e->cid, &own, &e->buf, &e->cap, &e->view);
    if (st == COFFER_OK && e->view.ncols && !(e->view.opened = calloc(e->view.ncols, sizeof *e->view.opened)))
        st = cf_error(COFFER_ERR_NO_MEMORY, "out of memory opening a cluster");
    if (st != COFFER_OK) {
        e->view = (cf_cluster){0};
        return name_objects(txn, e);
    }
    e->view.open = open_block;
    e->view.open_ctx = e;
    e->apart_ncols = e->view.apart ? e->view.ncols : 0;
    return st;
}

coffer_status cf_clusters_find(coffer_txn *txn, coffer_class_id cls, uint64_t cid, const MDB_val *stored, int create,
                               cf_cluster_entry **out)
{
    *out = NULL;
    struct cf_cluster_cache *c = cache_of(txn);
    if (!c)
        return COFFER_ERR_NO_MEMORY;
    cf_cluster_entry *e = lookup(c, cls, cid);
    if (e) {
        *out = e;
        return COFFER_OK;
    }
    MDB_val v = {0, NULL};
    if (stored) {
        v = *stored;
    } else {
        uint8_t kb[8];
        cluster_key(kb, cid);
        MDB_val k = {8, kb};
        int rc = mdb_get(txn->mdb, txn->db->object_dbis[cls], &k, &v);
        if (rc == MDB_NOTFOUND && !create)
            return COFFER_OK;
        if (rc != 0 && rc != MDB_NOTFOUND)
            return cf_error_mdb(rc, "cannot read a cluster");
    }
    e = entry_new(c);
    if (!e)
        return cf_error(COFFER_ERR_NO_MEMORY, "out of memory opening a cluster");
    e->cls = cls;
    e->cid = cid;
    coffer_status st = v.mv_data ? open_stored(txn, e, &v) : COFFER_OK;
    if (st == COFFER_OK)
        st = insert(c, e);
    if (st != COFFER_OK) {
        entry_free(e);
        return st;
    }
    *out = e;
    return COFFER_OK;
}

/* Keeps class `cls`'s changed clusters in cid order. */
static coffer_status add_changed(struct cf_cluster_cache *c, cf_cluster_entry *e)
{
    changed_list *l = &c->classes[e->cls];
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 16;
        cf_cluster_entry **p = realloc(l->entries, cap * sizeof *p);
        if (!p)
            return cf_error(COFFER_ERR_NO_MEMORY, "out of memory changing a cluster");
        l->entries = p;
        l->cap = cap;
    }
    size_t at = l->n;
    while (at > 0 && l->entries[at - 1]->cid > e->cid)
        at--;
    memmove(l->entries + at + 1, l->entries + at, (l->n - at) * sizeof *l->entries);
    l->entries[at] = e;
    l->n++;
    return COFFER_OK;
}

coffer_status cf_clusters_change(coffer_txn *txn, cf_cluster_entry *e)
{
    if (e->slots)
        return COFFER_OK;
    e->changes++;
    if (e->spare_slots) {
        e->slots = memset(e->spare_slots, 0, CF_CLUSTER_MAX * sizeof *e->slots);
        e->spare_slots = NULL;
    } else {
        e->slots = calloc(CF_CLUSTER_MAX, sizeof *e->slots);
    }
    coffer_status st = e->slots ? COFFER_OK : cf_error(COFFER_ERR_NO_MEMORY, "out of memory changing a cluster");
    for (uint16_t i = 0; st == COFFER_OK && i < e->view.n; i++) {
        cf_cluster_slot *slot = &e->slots[e->view.lows[i]];
        if (cf_cluster_is_external(&e->view, i)) {
            slot->kept = 1;
            continue;
        }
        slot->stored = 1;
        slot->at = i;
    }
    if (st == COFFER_OK)
        st = add_changed(txn->clusters, e);
    if (st != COFFER_OK)
        slots_free(e);
    return st;
}

/* Opens (its checksum or seal checked) and checks the block of column
 * `col` of changed cluster `e` once. */
static coffer_status check_block(coffer_txn *txn, cf_cluster_entry *e, uint16_t col)
{
    const uint8_t *b;
    size_t blen;
    coffer_status st = cf_cluster_block_of(&e->view, col, &b, &blen); /* names the objects when it fails */
    if (st == COFFER_OK && cf_cluster_block_check(&e->view, b, blen) < 0) {
        cf_error(COFFER_ERR_CORRUPTED, "the block of cluster column %u is damaged", col);
        st = name_objects(txn, e);
    }
    return st;
}

/* Every block of changed cluster `e` opened and checked whole, so that
 * the commit encodes the unchanged objects again from these blocks
 * without a failure. */
static coffer_status open_all(coffer_txn *txn, cf_cluster_entry *e)
{
    coffer_status st = COFFER_OK;
    for (uint16_t col = 0; !e->all_open && st == COFFER_OK && col < e->view.ncols; col++)
        st = check_block(txn, e, col);
    if (st == COFFER_OK)
        e->all_open = 1;
    return st;
}

static coffer_status write_filled(coffer_txn *txn, cf_cluster_entry *e);

coffer_status cf_clusters_set(coffer_txn *txn, cf_cluster_entry *e, unsigned low, const uint8_t *rec, size_t len)
{
    changed_list *l = &txn->clusters->classes[e->cls];
    cf_cluster_slot *slot = &e->slots[low];
    uint8_t *copy = NULL;
    coffer_status st = open_all(txn, e);
    if (st != COFFER_OK)
        return st;
    if (rec) {
        /* The object's former record is overwritten when the new one fits. */
        copy = slot->rec && slot->cap >= len ? slot->rec : arena_alloc(e, len ? len : 1);
        if (!copy)
            return cf_error(COFFER_ERR_NO_MEMORY, "out of memory writing an object");
        memmove(copy, rec, len);
    }
    int was = slot->rec != NULL || slot->kept || slot->stored;
    l->count_change += (copy != NULL) - was;
    e->changes++;
    if (slot->kept) /* the record stored outside goes, or is written again */
        slot->drop = 1;
    slot->kept = 0;
    slot->stored = 0;
    if (copy != slot->rec)
        slot->cap = copy ? (uint32_t)len : 0;
    slot->rec = copy;
    slot->len = (uint32_t)len;
    return copy && !was && low == CF_CLUSTER_MAX - 1 ? write_filled(txn, e) : COFFER_OK;
}

/* ---- changes in place ---------------------------------------------------- */

#define NULL_SIZE SIZE_MAX

/* Where value `at` of column `col` of `e`'s view, whose opened block is
 * b[0..blen), takes a value of `size` bytes (NULL_SIZE: a null) in place:
 * its offset in the block, or -1 when it does not fit there. */
static ptrdiff_t block_place_in(const cf_cluster_entry *e, const uint8_t *b, size_t blen, uint16_t at, uint16_t col,
                                size_t size)
{
    const cf_cluster *v = &e->view;
    if (blen < CF_BLOCK_HEADER)
        return -1;
    size_t body = CF_BLOCK_HEADER + cf_cluster_bitmap_size(v->n);
    if (b[0] == CF_BLOCK_FIXED) {
        size_t w = b[1];
        if ((size != NULL_SIZE && size != w) || body + ((size_t)at + 1) * w > blen)
            return -1;
        return (ptrdiff_t)(body + (size_t)at * w);
    }
    if (b[0] == CF_BLOCK_NARROW) { /* the value's fit in the column's range is narrow_fits' */
        size_t w = b[1];
        if ((size != NULL_SIZE && size != 8) || !cf_narrow_width_ok((unsigned)w) ||
            body + CF_NARROW_BASE + ((size_t)at + 1) * w > blen)
            return -1;
        return (ptrdiff_t)(body + CF_NARROW_BASE + (size_t)at * w);
    }
    if (b[0] != CF_BLOCK_ENDS16 && b[0] != CF_BLOCK_ENDS32)
        return -1;
    const uint8_t *p = NULL;
    uint8_t wide[8]; /* not used: only narrowed blocks widen, and they are placed above */
    size_t len = 0;
    int present = cf_cluster_raw(v, at, col, &p, &len, wide);
    if (present < 0 || (size != NULL_SIZE && (present == 0 || len != size)))
        return -1; /* a value of another size, or one in place of a null */
    if (size == NULL_SIZE && present && len)
        return -1; /* a null would leave the old bytes in the block */
    return present ? (ptrdiff_t)(p - b) : 0;
}

/* Whether int `v` (a null always does) fits the range of block b[0..blen)
 * when it is a narrowed one: its base plus what `width` bytes hold.
 * Other blocks: 1. */
static int narrow_fits(const cf_cluster_entry *e, const uint8_t *b, size_t blen, const coffer_value *v)
{
    if (blen < CF_BLOCK_HEADER || b[0] != CF_BLOCK_NARROW)
        return 1;
    if (v->type == COFFER_TYPE_NULL)
        return 1;
    if (v->type != COFFER_TYPE_INT)
        return 0;
    size_t body = CF_BLOCK_HEADER + cf_cluster_bitmap_size(e->view.n);
    if (blen < body + CF_NARROW_BASE)
        return 0;
    uint64_t base = cf_get_le(b + body, 8), off = (uint64_t)v->u.integer - base; /* mod 2^64, as cf_narrow_value adds */
    unsigned w = b[1];
    return w < 8 && off < ((uint64_t)1 << (8 * w));
}

/* Column `col`'s opened block of `e`, made writable: an encrypted file's
 * is already the entry's own; a plain file's, read in LMDB's map, is
 * copied once. NULL when out of memory. */
static uint8_t *block_writable(cf_cluster_entry *e, uint16_t col)
{
    cf_cluster_block *o = &e->view.opened[col];
    uintptr_t d = (uintptr_t)o->data, own = (uintptr_t)e->blocks;
    if (e->blocks && d >= own && d < own + e->view.blocks_len)
        return (uint8_t *)(uintptr_t)o->data;
    if (e->own_blocks && e->own_blocks[col])
        return e->own_blocks[col];
    if (!e->own_blocks && !(e->own_blocks = calloc(e->view.ncols, sizeof *e->own_blocks)))
        return NULL;
    uint8_t *copy = malloc(o->len ? o->len : 1);
    if (!copy)
        return NULL;
    memcpy(copy, o->data, o->len);
    e->own_blocks[col] = copy;
    o->data = copy;
    return copy;
}

/* Writes the values into the blocks of the unchanged object at `at`. */
static coffer_status patch_blocks(coffer_txn *txn, cf_cluster_entry *e, uint16_t at, const uint16_t *cols,
                                  const coffer_value *vals, size_t n)
{
    if (!e->patched && !(e->patched = calloc(e->view.ncols ? e->view.ncols : 1, 1)))
        return cf_error(COFFER_ERR_NO_MEMORY, "out of memory writing an object");
    ptrdiff_t offs[16]; /* each value's place in its block, found once */
    if (n > sizeof offs / sizeof *offs || !e->view.opened)
        return COFFER_DONE;
    for (size_t i = 0; i < n; i++) {
        if (cols[i] >= e->view.ncols)
            return COFFER_DONE;
        if (!e->patched[cols[i]] && !e->all_open) {
            coffer_status st = check_block(txn, e, cols[i]);
            if (st != COFFER_OK)
                return st;
        }
        const uint8_t *blk;
        size_t blen;
        if (cf_cluster_block_of(&e->view, cols[i], &blk, &blen) != COFFER_OK)
            return COFFER_DONE;
        size_t size = vals[i].type == COFFER_TYPE_NULL ? NULL_SIZE : cf_scalar_size(&vals[i]);
        offs[i] = block_place_in(e, blk, blen, at, cols[i], size);
        if (offs[i] < 0 || !narrow_fits(e, blk, blen, &vals[i]))
            return COFFER_DONE;
    }
    for (size_t i = 0; i < n; i++) {
        e->patched[cols[i]] = 1;
        int null = vals[i].type == COFFER_TYPE_NULL;
        ptrdiff_t off = offs[i];
        uint8_t *b = block_writable(e, cols[i]);
        if (!b)
            return cf_error(COFFER_ERR_NO_MEMORY, "out of memory writing an object");
        uint8_t *bit = b + CF_BLOCK_HEADER + at / 8, mask = (uint8_t)(1u << (at % 8));
        if (null) {
            *bit |= mask;
            if (b[0] == CF_BLOCK_FIXED || b[0] == CF_BLOCK_NARROW)
                memset(b + off, 0, b[1]);
        } else if (b[0] == CF_BLOCK_NARROW) {
            *bit &= (uint8_t)~mask;
            uint64_t base = cf_get_le(b + CF_BLOCK_HEADER + cf_cluster_bitmap_size(e->view.n), 8);
            cf_put_le(b + off, (uint64_t)vals[i].u.integer - base, b[1]);
        } else {
            *bit &= (uint8_t)~mask;
            cf_scalar_write(b + off, &vals[i]);
        }
    }
    return COFFER_OK;
}

/* Writes the values into the object's new record, in its place. */
static coffer_status patch_record(cf_cluster_slot *slot, const uint16_t *cols, const coffer_value *vals, size_t n)
{
    cf_record r;
    if (cf_record_parse(slot->rec, slot->len, &r) != COFFER_OK)
        return COFFER_DONE;
    uint8_t *at[16];
    if (n > sizeof at / sizeof *at)
        return COFFER_DONE;
    for (size_t i = 0; i < n; i++) {
        const uint8_t *p;
        size_t len;
        if (vals[i].type == COFFER_TYPE_NULL || cf_record_raw(&r, cols[i], &p, &len) != 1 ||
            len != cf_scalar_size(&vals[i]))
            return COFFER_DONE; /* a null takes no bytes in a record: not in place */
        at[i] = slot->rec + (p - slot->rec);
    }
    for (size_t i = 0; i < n; i++)
        cf_scalar_write(at[i], &vals[i]);
    return COFFER_OK;
}

coffer_status cf_clusters_patch(coffer_txn *txn, cf_cluster_entry *e, unsigned low, const uint16_t *cols,
                                const coffer_value *vals, size_t n)
{
    coffer_status st = cf_clusters_change(txn, e);
    if (st != COFFER_OK)
        return st;
    cf_cluster_slot *slot = &e->slots[low];
    if (slot->stored)
        st = patch_blocks(txn, e, slot->at, cols, vals, n);
    else if (slot->rec && slot->len <= CF_CLUSTER_INLINE_MAX)
        st = patch_record(slot, cols, vals, n);
    else
        st = COFFER_DONE; /* stored outside, or not there */
    if (st == COFFER_OK)
        e->changes++; /* written again at the commit if appends filled it before */
    return st;
}

int cf_clusters_next_changed(const coffer_txn *txn, coffer_class_id cls, uint64_t from, uint64_t *cid)
{
    if (!txn->clusters)
        return 0;
    const changed_list *l = &txn->clusters->classes[cls];
    size_t lo = 0, hi = l->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (l->entries[mid]->cid < from)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == l->n)
        return 0;
    *cid = l->entries[lo]->cid;
    return 1;
}

void cf_clusters_drop_class(coffer_txn *txn, coffer_class_id cls)
{
    struct cf_cluster_cache *c = txn->clusters;
    if (!c)
        return;
    /* The entries stay (rows may point into them until the next read) but
     * hold nothing: changed and empty, written as absent. */
    changed_list *l = &c->classes[cls];
    for (size_t i = 0; i < c->cap; i++) {
        cf_cluster_entry *e = c->slots[i];
        if (!e || e->cls != cls)
            continue;
        e->view.n = 0;
        e->all_open = 1; /* no object left to encode again: its blocks, gone from LMDB, are never read */
        e->apart_ncols = 0;
        e->changes++;
        if (e->slots)
            memset(e->slots, 0, CF_CLUSTER_MAX * sizeof *e->slots);
    }
    l->count_change = 0;
    l->cleared = 1;
}

int64_t cf_clusters_count_change(const coffer_txn *txn, coffer_class_id cls)
{
    return txn->clusters ? txn->clusters->classes[cls].count_change : 0;
}

/* Writes or deletes the record of object `key` stored outside its cluster. */
static coffer_status write_external(coffer_txn *txn, cf_cluster_entry *e, uint64_t key, const cf_cluster_slot *slot,
                                    int outside)
{
    const cf_class *cl = &txn->db->schema->classes[e->cls];
    uint8_t kb[CF_EXTERNAL_KEY_SIZE];
    cf_cluster_external_key(kb, key);
    if (outside)
        return cf_store_put(txn, txn->db->object_dbis[e->cls], 2 * cl->table, kb, sizeof kb, slot->rec, slot->len, 0,
                            "cannot write an object stored outside its cluster");
    MDB_val k = {sizeof kb, kb};
    int rc = mdb_del(txn->mdb, txn->db->object_dbis[e->cls], &k, NULL);
    return rc && rc != MDB_NOTFOUND ? cf_txn_write_error(txn, rc, "cannot delete an object stored outside its cluster")
                                    : COFFER_OK;
}

/* Whether changed cluster `e` holds the objects it was read with, each
 * where it was stored, none added, removed or written as a record: only
 * values changed in place in its blocks (cf_clusters_patch). */
static int only_patched(const cf_cluster_entry *e)
{
    if (!e->view.n || !e->view.opened || e->view.external)
        return 0;
    uint16_t i = 0;
    for (int low = 0; low < CF_CLUSTER_MAX; low++) {
        const cf_cluster_slot *slot = &e->slots[low];
        if (slot->rec || slot->kept || slot->drop)
            return 0;
        if (!slot->stored)
            continue;
        if (i >= e->view.n || slot->at != i || e->view.lows[i] != low)
            return 0;
        i++;
    }
    return i == e->view.n && e->stored;
}

/* Writes cluster `e` as it was read, with the values changed in its
 * blocks: the blocks changed checksummed or sealed again, the rest of the
 * stored value copied as it is, nothing planned value by value. */
static coffer_status write_patched(coffer_txn *txn, cf_cluster_entry *e)
{
    const cf_class *cl = &txn->db->schema->classes[e->cls];
    const uint8_t *stack[64] = {0}, **changed = e->view.ncols <= 64 ? stack : malloc(e->view.ncols * sizeof *changed);
    if (!changed)
        return cf_error(COFFER_ERR_NO_MEMORY, "out of memory writing a cluster");
    for (uint16_t col = 0; col < e->view.ncols; col++)
        changed[col] = e->patched && e->patched[col] ? e->view.opened[col].data : NULL;
    coffer_status st = cf_cluster_store_changed(txn, txn->db->object_dbis[e->cls], 2 * cl->table, e->cid, e->stored,
                                                e->stored_len, &e->view, changed);
    if (changed != stack)
        free(changed);
    return st;
}

/* Writes changed cluster `e`, or deletes it when it holds no object, and
 * the changed objects it stores outside. */
static coffer_status write_entry(coffer_txn *txn, struct cf_cluster_cache *c, cf_cluster_entry *e)
{
    const cf_class *cl = &txn->db->schema->classes[e->cls];
    if (only_patched(e)) {
        coffer_status st = write_patched(txn, e);
        if (st == COFFER_OK) {
            e->written = 1;
            e->written_at = e->changes;
            return st;
        }
        return cf_error_prefix("objects %" PRIu64 " to %" PRIu64 " of class '%s'", e->cid << CF_CLUSTER_BITS,
                               (e->cid << CF_CLUSTER_BITS) | (CF_CLUSTER_MAX - 1), cl->name);
    }
    cf_cluster_member *m = c->members;
    uint16_t n = 0;
    coffer_status st = e->view.n ? open_all(txn, e) : COFFER_OK;
    for (int low = 0; low < CF_CLUSTER_MAX && st == COFFER_OK; low++) {
        cf_cluster_slot *slot = &e->slots[low];
        uint64_t key = e->cid << CF_CLUSTER_BITS | (unsigned)low;
        int outside = slot->rec && slot->len > CF_CLUSTER_INLINE_MAX;
        if (slot->drop || (outside && !slot->kept)) {
            st = write_external(txn, e, key, slot, outside);
            slot->kept |= outside; /* written there: a change drops or writes it again */
        }
        slot->drop = 0;
        if (st != COFFER_OK || (!slot->rec && !slot->kept && !slot->stored))
            continue;
        m[n] = (cf_cluster_member){.low = (uint8_t)low, .external = outside || slot->kept};
        if (slot->stored) {
            m[n].src = &e->view;
            m[n].at = slot->at;
        } else if (!m[n].external) {
            st = cf_record_parse(slot->rec, slot->len, &m[n].rec);
        }
        n++;
    }
    uint8_t kb[8];
    cluster_key(kb, e->cid);
    if (st == COFFER_OK && n == 0) {
        MDB_val k = {8, kb};
        int rc = mdb_del(txn->mdb, txn->db->object_dbis[e->cls], &k, NULL);
        if (rc != 0 && rc != MDB_NOTFOUND)
            st = cf_txn_write_error(txn, rc, "cannot delete an emptied cluster");
        if (st == COFFER_OK)
            st = cf_cluster_delete_blocks(txn, txn->db->object_dbis[e->cls], e->cid, 0, e->apart_ncols);
        if (st == COFFER_OK)
            e->apart_ncols = 0;
    } else if (st == COFFER_OK) {
        size_t size;
        uint8_t *buf;
        st = cf_cluster_encoder_set_class(&c->enc, cl);
        if (st == COFFER_OK)
            st = cf_cluster_plan(&c->enc, m, n, &size);
        if (st == COFFER_OK)
            st = cf_txn_scratch(txn, size, &buf);
        if (st == COFFER_OK) {
            cf_cluster_encode(&c->enc, buf);
            st = cf_cluster_store(txn, txn->db->object_dbis[e->cls], 2 * cl->table, e->cid, buf, size, 0,
                                  e->apart_ncols);
        }
        if (st == COFFER_OK)
            e->apart_ncols = (uint16_t)cf_get_le(buf + 4, 2); /* the column count of the head just written */
    }
    if (st == COFFER_OK) {
        e->written = 1;
        e->written_at = e->changes;
    }
    return st == COFFER_OK ? st
                           : cf_error_prefix("objects %" PRIu64 " to %" PRIu64 " of class '%s'", e->cid << CF_CLUSTER_BITS,
                                             (e->cid << CF_CLUSTER_BITS) | (CF_CLUSTER_MAX - 1), cl->name);
}

/* Writes cluster `e` now that an append filled it. */
static coffer_status write_filled(coffer_txn *txn, cf_cluster_entry *e)
{
    struct cf_cluster_cache *c = txn->clusters;
    if (!c->members && !(c->members = malloc(CF_CLUSTER_MAX * sizeof *c->members)))
        return cf_error(COFFER_ERR_NO_MEMORY, "out of memory writing a cluster");
    c->wrote = 1;
    return write_entry(txn, c, e);
}

coffer_status cf_clusters_flush(coffer_txn *txn)
{
    struct cf_cluster_cache *c = txn->clusters;
    if (!c)
        return COFFER_OK;
    if (!c->members && !(c->members = malloc(CF_CLUSTER_MAX * sizeof *c->members)))
        return cf_error(COFFER_ERR_NO_MEMORY, "out of memory writing the clusters");
    coffer_status st = COFFER_OK;
    for (size_t ci = 0; ci < c->nclasses && st == COFFER_OK; ci++) {
        changed_list *l = &c->classes[ci];
        for (size_t i = 0; i < l->n && st == COFFER_OK; i++) {
            cf_cluster_entry *e = l->entries[i];
            if (!e->written || e->written_at != e->changes)
                st = write_entry(txn, c, e);
        }
        if (st != COFFER_OK || (l->count_change == 0 && !l->cleared))
            continue;
        uint32_t table = txn->db->schema->classes[ci].table;
        uint64_t count = 0;
        if (!l->cleared)
            st = cf_clusters_stored_count(txn, table, &count);
        if (st == COFFER_OK)
            st = cf_clusters_write_count(txn, table, (uint64_t)((int64_t)count + l->count_change));
        l->count_change = 0;
        l->cleared = 0;
    }
    return st;
}

static void cache_destroy(struct cf_cluster_cache *c)
{
    for (size_t i = 0; i < c->cap; i++)
        if (c->slots[i])
            entry_free(c->slots[i]);
    while (c->spare) {
        cf_cluster_entry *next = c->spare->next_spare;
        entry_free(c->spare);
        c->spare = next;
    }
    for (size_t i = 0; i < c->nclasses; i++)
        free(c->classes[i].entries);
    free(c->classes);
    free(c->slots);
    free(c->members);
    cf_cluster_encoder_free(&c->enc);
    free(c);
}

/* Keeps entry `e`'s changed-slot table and one arena chunk for the next
 * entry, when the cache keeps fewer than CF_CLUSTER_POOL_ENTRIES; frees it
 * otherwise. */
static void entry_recycle(struct cf_cluster_cache *c, cf_cluster_entry *e)
{
    if (c->nspare >= CF_CLUSTER_POOL_ENTRIES) {
        entry_free(e);
        return;
    }
    if (!e->spare_slots) {
        e->spare_slots = e->slots;
        e->slots = NULL;
    }
    for (cf_arena_chunk *k = e->arena, *next; k; k = next) {
        next = k->next;
        if (!e->spare_chunk && k->cap == ARENA_CHUNK)
            e->spare_chunk = k;
        else
            free(k);
    }
    e->arena = NULL;
    entry_clear(e);
    e->next_spare = c->spare;
    c->spare = e;
    c->nspare++;
}

/* Empties cache `c` for the next write transaction, keeping at most
 * CF_CLUSTER_POOL_ENTRIES entries' memory and tables of bounded size. */
static void cache_reset(struct cf_cluster_cache *c)
{
    for (size_t i = 0; i < c->cap; i++)
        if (c->slots[i]) {
            entry_recycle(c, c->slots[i]);
            c->slots[i] = NULL;
        }
    c->used = 0;
    if (c->cap > CF_CLUSTER_POOL_TABLE) {
        cf_cluster_entry **slots = calloc(FIRST_CAPACITY, sizeof *slots);
        if (slots) {
            free(c->slots);
            c->slots = slots;
            c->cap = FIRST_CAPACITY;
        }
    }
    for (size_t i = 0; i < c->nclasses; i++) {
        changed_list *l = &c->classes[i];
        if (l->cap > CF_CLUSTER_POOL_TABLE) {
            free(l->entries);
            *l = (changed_list){0};
        }
        l->n = 0;
        l->count_change = 0;
        l->cleared = 0;
    }
    if (cf_cluster_encoder_bytes(&c->enc) > CF_CLUSTER_POOL_ENCODER)
        cf_cluster_encoder_free(&c->enc);
    c->wrote = 0;
}

void cf_clusters_free(coffer_txn *txn)
{
    struct cf_cluster_cache *c = txn->clusters;
    if (!c)
        return;
    txn->clusters = NULL;
    if (!txn->reuse_clusters || txn->db->magic != CF_DB_MAGIC) {
        cache_destroy(c);
        return;
    }
    cache_reset(c);
    struct cf_cluster_cache *none = NULL;
    if (!atomic_compare_exchange_strong(&txn->db->cluster_pool, &none, c))
        cache_destroy(c); /* another write transaction's cache is kept */
}

int cf_clusters_pool_entries(coffer_db *db)
{
    struct cf_cluster_cache *c = atomic_load(&db->cluster_pool);
    return c ? (int)c->nspare : -1;
}

void cf_clusters_pool_free(coffer_db *db)
{
    struct cf_cluster_cache *c = atomic_exchange(&db->cluster_pool, NULL);
    if (c)
        cache_destroy(c);
}

/* ---- positions ----------------------------------------------------------- */

int cf_cluster_entry_seek(const cf_cluster_entry *e, unsigned low)
{
    if (e->slots) {
        for (; low < CF_CLUSTER_MAX; low++)
            if (e->slots[low].rec || e->slots[low].kept || e->slots[low].stored)
                return (int)low;
        return -1;
    }
    uint16_t at = cf_cluster_seek(&e->view, low);
    return at < e->view.n ? at : -1;
}

unsigned cf_cluster_entry_low(const cf_cluster_entry *e, int pos)
{
    return e->slots ? (unsigned)pos : e->view.lows[pos];
}

/* Opens object `low` of `e`, stored outside the cluster, into e->external. */
static coffer_status open_external(coffer_txn *txn, cf_cluster_entry *e, unsigned low, cf_record *rec)
{
    if (!e->external && !(e->external = calloc(CF_CLUSTER_MAX, sizeof *e->external)))
        return cf_error(COFFER_ERR_NO_MEMORY, "out of memory reading an object");
    cf_external *x = &e->external[low];
    if (!x->opened) {
        uint8_t kb[CF_EXTERNAL_KEY_SIZE];
        cf_cluster_external_key(kb, e->cid << CF_CLUSTER_BITS | low);
        coffer_status st = cf_store_get(txn, txn->db->object_dbis[e->cls], 2 * txn->db->schema->classes[e->cls].table, kb,
                                        sizeof kb, &x->data, &x->len, &x->buf, &x->cap, "an object stored outside its cluster");
        if (st == COFFER_ERR_NOT_FOUND)
            st = cf_error(COFFER_ERR_CORRUPTED, "the record its cluster stores outside is missing");
        if (st == COFFER_OK && txn->clusters->wrote && !txn->db->keys && x->data != x->buf) {
            /* in a page that writing a filled cluster may change again */
            uint8_t *p = x->len <= x->cap ? x->buf : realloc(x->buf, x->len ? x->len : 1);
            if (!p)
                return cf_error(COFFER_ERR_NO_MEMORY, "out of memory reading an object");
            if (p != x->buf)
                x->cap = x->len;
            x->buf = p;
            memcpy(p, x->data, x->len);
            x->data = p;
        }
        if (st != COFFER_OK)
            return st;
        x->opened = 1;
    }
    return cf_record_parse(x->data, x->len, rec);
}

coffer_status cf_cluster_entry_row(coffer_txn *txn, cf_cluster_entry *e, int pos, cf_row *row)
{
    row->cl = NULL;
    if (e->slots && e->slots[pos].stored) {
        row->cl = &e->view;
        row->at = e->slots[pos].at;
        return COFFER_OK;
    }
    if (e->slots)
        return e->slots[pos].rec ? cf_record_parse(e->slots[pos].rec, e->slots[pos].len, &row->rec)
                                 : open_external(txn, e, (unsigned)pos, &row->rec);
    if (cf_cluster_is_external(&e->view, (uint16_t)pos))
        return open_external(txn, e, e->view.lows[pos], &row->rec);
    row->cl = &e->view;
    row->at = (uint16_t)pos;
    return COFFER_OK;
}

/* ---- object counts ------------------------------------------------------- */

size_t cf_meta_object_count(uint32_t table, uint8_t out[5])
{
    out[0] = 'n';
    cf_put_be32(out + 1, table);
    return 5;
}

coffer_status cf_clusters_stored_count(coffer_txn *txn, uint32_t table, uint64_t *out)
{
    uint8_t mk[5];
    size_t mklen = cf_meta_object_count(table, mk);
    const uint8_t *data;
    size_t len;
    uint8_t *buf = NULL;
    size_t cap = 0;
    *out = 0;
    coffer_status st = cf_store_get(txn, txn->db->meta_dbi, CF_META_DBI, mk, mklen, &data, &len, &buf, &cap, "an object count");
    if (st == COFFER_OK && len != 8)
        st = cf_error(COFFER_ERR_CORRUPTED, "an object count of %zu bytes (8 expected)", len);
    if (st == COFFER_OK)
        *out = cf_get_be64(data);
    free(buf);
    return st == COFFER_ERR_NOT_FOUND ? COFFER_OK : st;
}

coffer_status cf_clusters_write_count(coffer_txn *txn, uint32_t table, uint64_t count)
{
    uint8_t mk[5], v[8];
    size_t mklen = cf_meta_object_count(table, mk);
    cf_put_be64(v, count);
    return cf_store_put(txn, txn->db->meta_dbi, CF_META_DBI, mk, mklen, v, 8, 0, "cannot write an object count");
}
