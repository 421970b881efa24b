/* index_tree — a B+tree of sealed nodes per class (storage/index_tree.h).
 *
 * A node's plain bytes (docs/FORMAT.md "Sealed index trees"):
 *     u8 kind (0 leaf, 1 inner) ‖ u8 version (1) ‖ u16 0 ‖ u32 LE n
 *     leaf:  n × (u16 LE length ‖ entry)
 *     inner: u64 LE child 0, then n × (u16 LE length ‖ separator ‖ u64 LE child)
 * Child i of an inner node holds the entries e with sep[i-1] <= e < sep[i].
 * In memory a node keeps its entries as offsets into one buffer, to which
 * new entries are appended (the bytes of removed ones stay until the node
 * is encoded again). */
#include "storage/index_tree.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "storage/record.h"
#include "storage/txn.h"
#include "util/error.h"

#define NODE_HEAD 8
#define NODE_MIN (CF_ITREE_NODE_MAX / 4)
#define ROOT_ID 1

struct cf_itree_node {
    uint64_t mapkey; /* class << 48 | id */
    uint64_t id;
    coffer_class_id cls;
    uint8_t leaf, dirty, gone;
    uint32_t n, cap;  /* entries (leaf) or separators (inner) */
    uint32_t *off;
    uint16_t *len;
    uint64_t *child; /* n + 1 of an inner node */
    uint8_t *buf;
    size_t used, bufcap;
    size_t size; /* the encoding's length */
    uint64_t epoch; /* the cache's epoch in which it was last known current */
    /* A read transaction's node of an encrypted file: the sealed value it
     * was opened from, byte for byte (in `buf`, after the plain bytes), so
     * that a later read transaction takes the node again only when the
     * stored value is that very one; NULL otherwise. */
    const uint8_t *sealed;
    size_t sealed_len;
    size_t bytes; /* the memory it holds, as counted in the cache's `bytes` */
    struct cf_itree_node *next_all;
};

typedef struct cf_itree_cache {
    cf_itree_node **slots; /* open addressing by mapkey */
    size_t nslots, count;
    cf_itree_node *all;
    uint64_t *next_id; /* per class, 0 = not known yet */
    size_t nclasses;
    uint8_t *scratch;
    size_t scratch_cap;
    uint64_t epoch; /* bumped when a transaction takes the cache over */
    size_t bytes; /* the memory of the nodes read transactions opened */
} cf_itree_cache;

/* ---- the cache ----------------------------------------------------------- */

static uint64_t mapkey_of(coffer_class_id cls, uint64_t id) { return (uint64_t)cls << 48 | id; }

static size_t slot_of(uint64_t key, size_t nslots)
{
    key ^= key >> 31;
    key *= UINT64_C(0x9E3779B97F4A7C15);
    return (size_t)(key >> 17) & (nslots - 1);
}

static coffer_status cache_of(coffer_txn *txn, cf_itree_cache **out)
{
    if (!txn->itree && !txn->write && txn->db->keys) {
        txn->itree = atomic_exchange(&txn->db->itree_pool, NULL);
        if (txn->itree)
            txn->itree->epoch++; /* every node is checked again before use */
    }
    if (!txn->itree) {
        txn->itree = calloc(1, sizeof *txn->itree);
        if (!txn->itree)
            return cf_error(COFFER_ERR_NO_MEMORY, "out of memory opening an index");
    }
    *out = txn->itree;
    return COFFER_OK;
}

static cf_itree_node *cache_find(cf_itree_cache *c, uint64_t key)
{
    if (!c->nslots)
        return NULL;
    for (size_t i = slot_of(key, c->nslots);; i = (i + 1) & (c->nslots - 1)) {
        cf_itree_node *n = c->slots[i];
        if (!n || n->mapkey == key)
            return n;
    }
}

static void slots_put(cf_itree_node **slots, size_t nslots, cf_itree_node *n)
{
    size_t i = slot_of(n->mapkey, nslots);
    while (slots[i])
        i = (i + 1) & (nslots - 1);
    slots[i] = n;
}

static coffer_status cache_add(cf_itree_cache *c, cf_itree_node *n)
{
    if ((c->count + 1) * 2 > c->nslots) {
        size_t ns = c->nslots ? c->nslots * 2 : 64;
        cf_itree_node **s = calloc(ns, sizeof *s);
        if (!s)
            return cf_error(COFFER_ERR_NO_MEMORY, "out of memory opening an index");
        for (size_t i = 0; i < c->nslots; i++)
            if (c->slots[i])
                slots_put(s, ns, c->slots[i]);
        free(c->slots);
        c->slots = s;
        c->nslots = ns;
    }
    slots_put(c->slots, c->nslots, n);
    c->count++;
    n->next_all = c->all;
    c->all = n;
    return COFFER_OK;
}

static void node_free(cf_itree_node *n)
{
    free(n->off);
    free(n->len);
    free(n->child);
    free(n->buf);
    free(n);
}

static void cache_free(cf_itree_cache *c)
{
    for (cf_itree_node *n = c->all, *next; n; n = next) {
        next = n->next_all;
        node_free(n);
    }
    free(c->slots);
    free(c->next_id);
    free(c->scratch);
    free(c);
}

/* Frees the nodes of `c` that `drop` selects (given `ctx`) and rebuilds its
 * table. */
static void cache_drop(cf_itree_cache *c, int (*drop)(const cf_itree_node *n, const void *ctx), const void *ctx)
{
    cf_itree_node *keep = NULL, *next;
    if (c->nslots)
        memset(c->slots, 0, c->nslots * sizeof *c->slots);
    c->count = 0;
    for (cf_itree_node *n = c->all; n; n = next) {
        next = n->next_all;
        if (drop(n, ctx)) {
            c->bytes -= n->bytes;
            node_free(n);
            continue;
        }
        n->next_all = keep;
        keep = n;
        slots_put(c->slots, c->nslots, n);
        c->count++;
    }
    c->all = keep;
}

static int is_leaf(const cf_itree_node *n, const void *ctx)
{
    (void)ctx;
    return n->leaf;
}

static int is_any(const cf_itree_node *n, const void *ctx)
{
    (void)n;
    (void)ctx;
    return 1;
}

static int is_of_class(const cf_itree_node *n, const void *cls)
{
    return n->cls == *(const coffer_class_id *)cls;
}

/* Brings a cache to be pooled within CF_ITREE_POOL_BYTES: its leaves go
 * first (the inner nodes, few and on every lookup's path, stay), then the
 * rest. */
static void cache_trim(cf_itree_cache *c)
{
    if (c->bytes > CF_ITREE_POOL_BYTES)
        cache_drop(c, is_leaf, NULL);
    if (c->bytes > CF_ITREE_POOL_BYTES)
        cache_drop(c, is_any, NULL);
}

void cf_itree_free(coffer_txn *txn)
{
    cf_itree_cache *c = txn->itree;
    if (!c)
        return;
    txn->itree = NULL;
    if (!txn->write && txn->db->keys && txn->db->magic == CF_DB_MAGIC) {
        cache_trim(c);
        cf_itree_cache *none = NULL;
        if (atomic_compare_exchange_strong(&txn->db->itree_pool, &none, c))
            return;
    }
    cache_free(c);
}

long long cf_itree_pool_bytes(coffer_db *db)
{
    cf_itree_cache *c = atomic_exchange(&db->itree_pool, NULL);
    if (!c)
        return -1;
    long long bytes = (long long)c->bytes;
    cf_itree_cache *none = NULL;
    if (!atomic_compare_exchange_strong(&db->itree_pool, &none, c))
        cache_free(c);
    return bytes;
}

void cf_itree_pool_free(coffer_db *db)
{
    cf_itree_cache *c = atomic_exchange(&db->itree_pool, NULL);
    if (c)
        cache_free(c);
}

void cf_itree_forget_class(coffer_txn *txn, coffer_class_id cls)
{
    cf_itree_cache *c = txn->itree;
    if (!c)
        return;
    cache_drop(c, is_of_class, &cls);
    if (cls < c->nclasses)
        c->next_id[cls] = 0;
}

coffer_status cf_itree_empty_class(coffer_txn *txn, coffer_class_id cls)
{
    int rc = mdb_drop(txn->mdb, txn->db->index_dbis[cls], 0);
    if (rc != 0)
        return cf_txn_write_error(txn, rc, "cannot empty an index");
    cf_itree_forget_class(txn, cls);
    return COFFER_OK;
}

/* ---- nodes in memory ----------------------------------------------------- */

static const uint8_t *entry_at(const cf_itree_node *n, uint32_t i) { return n->buf + n->off[i]; }

static int bytes_cmp(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
    int c = memcmp(a, b, alen < blen ? alen : blen);
    return c ? c : (alen > blen) - (alen < blen);
}

/* The first index whose entry is not below key (`upper`: above key). */
static uint32_t node_search(const cf_itree_node *n, const uint8_t *key, size_t klen, int upper)
{
    uint32_t lo = 0, hi = n->n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        int c = bytes_cmp(entry_at(n, mid), n->len[mid], key, klen);
        if (c < 0 || (upper && c == 0))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static coffer_status node_reserve(cf_itree_node *n, uint32_t count, size_t bytes)
{
    if (count > n->cap) {
        uint32_t cap = n->cap ? n->cap : 16;
        while (cap < count)
            cap *= 2;
        uint32_t *off = realloc(n->off, cap * sizeof *off);
        if (off)
            n->off = off;
        uint16_t *len = off ? realloc(n->len, cap * sizeof *len) : NULL;
        if (len)
            n->len = len;
        uint64_t *child = len && !n->leaf ? realloc(n->child, (cap + 1) * sizeof *child) : NULL;
        if (child)
            n->child = child;
        if (!off || !len || (!n->leaf && !child))
            return cf_error(COFFER_ERR_NO_MEMORY, "out of memory changing an index");
        n->cap = cap;
    }
    if (n->used + bytes > n->bufcap) {
        size_t cap = n->bufcap ? n->bufcap : 256;
        while (cap < n->used + bytes)
            cap *= 2;
        uint8_t *b = realloc(n->buf, cap);
        if (!b)
            return cf_error(COFFER_ERR_NO_MEMORY, "out of memory changing an index");
        n->buf = b;
        n->bufcap = cap;
    }
    return COFFER_OK;
}

static size_t item_size(const cf_itree_node *n, size_t len) { return 2 + len + (n->leaf ? 0 : 8); }

/* Inserts e at index i; an inner node gets `right` as child i + 1. */
static coffer_status node_insert(cf_itree_node *n, uint32_t i, const uint8_t *e, size_t len, uint64_t right)
{
    coffer_status st = node_reserve(n, n->n + 1, len);
    if (st != COFFER_OK)
        return st;
    memcpy(n->buf + n->used, e, len);
    memmove(n->off + i + 1, n->off + i, (n->n - i) * sizeof *n->off);
    memmove(n->len + i + 1, n->len + i, (n->n - i) * sizeof *n->len);
    n->off[i] = (uint32_t)n->used;
    n->len[i] = (uint16_t)len;
    if (!n->leaf) {
        memmove(n->child + i + 2, n->child + i + 1, (n->n - i) * sizeof *n->child);
        n->child[i + 1] = right;
    }
    n->used += len;
    n->n++;
    n->size += item_size(n, len);
    n->dirty = 1;
    return COFFER_OK;
}

/* Removes entry i; an inner node loses child i + 1 with it. */
static void node_remove(cf_itree_node *n, uint32_t i)
{
    n->size -= item_size(n, n->len[i]);
    memmove(n->off + i, n->off + i + 1, (n->n - i - 1) * sizeof *n->off);
    memmove(n->len + i, n->len + i + 1, (n->n - i - 1) * sizeof *n->len);
    if (!n->leaf)
        memmove(n->child + i + 1, n->child + i + 2, (n->n - i - 1) * sizeof *n->child);
    n->n--;
    n->dirty = 1;
}

static coffer_status node_new(coffer_txn *txn, coffer_class_id cls, uint64_t id, int leaf, cf_itree_node **out)
{
    cf_itree_cache *c = NULL;
    coffer_status st = cache_of(txn, &c);
    if (st != COFFER_OK)
        return st;
    cf_itree_node *n = cache_find(c, mapkey_of(cls, id));
    if (n) {
        /* A node deleted earlier in the transaction (only the root's id
         * comes back): it starts again, empty. */
        n->gone = 0;
        n->n = 0;
        n->used = 0;
        n->leaf = (uint8_t)leaf;
        n->size = NODE_HEAD + (leaf ? 0 : 8);
        n->dirty = 1;
        if (!leaf && !n->child && !(n->child = calloc(n->cap + 1, sizeof *n->child)))
            return cf_error(COFFER_ERR_NO_MEMORY, "out of memory changing an index");
        *out = n;
        return COFFER_OK;
    }
    n = calloc(1, sizeof *n);
    if (!n)
        return cf_error(COFFER_ERR_NO_MEMORY, "out of memory changing an index");
    n->id = id;
    n->cls = cls;
    n->mapkey = mapkey_of(cls, id);
    n->leaf = (uint8_t)leaf;
    n->size = NODE_HEAD + (leaf ? 0 : 8);
    n->dirty = 1;
    n->epoch = c->epoch;
    if (!leaf && !(n->child = calloc(1, sizeof *n->child))) {
        free(n);
        return cf_error(COFFER_ERR_NO_MEMORY, "out of memory changing an index");
    }
    st = cache_add(c, n);
    if (st != COFFER_OK) {
        node_free(n);
        return st;
    }
    *out = n;
    return COFFER_OK;
}

/* ---- nodes in LMDB ------------------------------------------------------- */

static uint32_t index_number(const coffer_txn *txn, coffer_class_id cls)
{
    return 2 * txn->db->schema->classes[cls].table + 1;
}

static coffer_status damaged(const coffer_txn *txn, coffer_class_id cls, uint64_t id, const char *what)
{
    return cf_error(COFFER_ERR_CORRUPTED, "class '%s': index node %llu is damaged: %s", txn->db->schema->classes[cls].name,
                    (unsigned long long)id, what);
}

/* Decodes plain bytes p[0..len) (owned by the node from here on) into n.
 * Its head and lengths are checked, so that no entry reaches past its
 * bytes; the order of its entries is not: a node opened from its seal is
 * one Coffer wrote there, and cf_itree_check (verify) checks the order of
 * every node. */
static coffer_status node_decode(coffer_txn *txn, cf_itree_node *n, uint8_t *p, size_t len, size_t cap)
{
    n->buf = p;
    n->used = len;
    n->bufcap = cap;
    if (len < NODE_HEAD || p[0] > 1 || p[1] != 1 || p[2] || p[3])
        return damaged(txn, n->cls, n->id, "its head is not that of a node of version 1");
    n->leaf = p[0] == 0;
    uint32_t count = (uint32_t)cf_get_le(p + 4, 4);
    if (count > len / 2)
        return damaged(txn, n->cls, n->id, "it counts more entries than it can hold");
    coffer_status st = node_reserve(n, count ? count : 1, 0);
    if (st != COFFER_OK)
        return st;
    size_t at = NODE_HEAD;
    if (!n->leaf) {
        if (len - at < 8)
            return damaged(txn, n->cls, n->id, "it ends inside its first child");
        n->child[0] = cf_get_le(p + at, 8);
        at += 8;
    }
    for (uint32_t i = 0; i < count; i++) {
        if (len - at < 2)
            return damaged(txn, n->cls, n->id, "it ends inside an entry's length");
        size_t el = (size_t)p[at] | (size_t)p[at + 1] << 8;
        at += 2;
        if (len - at < el + (n->leaf ? 0 : 8))
            return damaged(txn, n->cls, n->id, "an entry runs past its end");
        n->off[i] = (uint32_t)at;
        n->len[i] = (uint16_t)el;
        at += el;
        if (!n->leaf) {
            n->child[i + 1] = cf_get_le(p + at, 8);
            at += 8;
        }
    }
    if (at != len)
        return damaged(txn, n->cls, n->id, "it has bytes after its last entry");
    n->n = count;
    n->size = len;
    return COFFER_OK;
}

/* Node `id` of class `cls`: the transaction's, else decoded from LMDB.
 * A node an earlier read transaction left (an older epoch) is taken when
 * its stored value is still, byte for byte, the sealed value it was opened
 * from (every seal draws a fresh nonce, and any other byte changed would
 * fail the seal's check), else opened again, and checked again. *out is NULL when LMDB has no such node (only the root may
 * be absent). */
static coffer_status node_get(coffer_txn *txn, coffer_class_id cls, uint64_t id, cf_itree_node **out)
{
    cf_itree_cache *c = NULL;
    coffer_status st = cache_of(txn, &c);
    if (st != COFFER_OK)
        return st;
    cf_itree_node *n = cache_find(c, mapkey_of(cls, id));
    if (n && n->epoch == c->epoch) {
        *out = n->gone ? NULL : n;
        return COFFER_OK;
    }
    *out = NULL;
    uint8_t key[8];
    cf_put_be64(key, id);
    MDB_val k = {8, key}, v;
    int rc = mdb_get(txn->mdb, txn->db->index_dbis[cls], &k, &v);
    if (rc != 0 && rc != MDB_NOTFOUND)
        return cf_error_mdb(rc, "cannot read an index node");
    if (rc == MDB_NOTFOUND) {
        if (n) {
            n->gone = 1;
            n->epoch = c->epoch;
        }
        return COFFER_OK;
    }
    /* Only a read transaction's nodes outlive it (and are pooled): only
     * they keep the sealed value, to be recognised by. */
    int keep_sealed = txn->db->keys != NULL && !txn->write;
    if (n && !n->gone && n->sealed && v.mv_size == n->sealed_len && memcmp(n->sealed, v.mv_data, v.mv_size) == 0) {
        n->epoch = c->epoch; /* the very value it was opened from */
        *out = n;
        return COFFER_OK;
    }
    const uint8_t *data;
    size_t len, cap = 0;
    uint8_t *buf = NULL;
    if (keep_sealed) { /* room for the plain bytes, then the sealed value */
        cap = 2 * v.mv_size;
        if (!(buf = malloc(cap)))
            return cf_error(COFFER_ERR_NO_MEMORY, "out of memory opening an index");
    }
    st = cf_store_open(txn, index_number(txn, cls), &k, &v, &data, &len, &buf, &cap, "an index node");
    if (st != COFFER_OK) {
        free(buf);
        return cf_error_prefix("class '%s', index node %llu", txn->db->schema->classes[cls].name, (unsigned long long)id);
    }
    if (data != buf) { /* a plain file's bytes, in LMDB's map */
        uint8_t *copy = malloc(len ? len : 1);
        if (!copy) {
            free(buf);
            return cf_error(COFFER_ERR_NO_MEMORY, "out of memory opening an index");
        }
        memcpy(copy, data, len);
        free(buf);
        buf = copy;
        cap = len;
    }
    int fresh = n == NULL;
    if (fresh && !(n = calloc(1, sizeof *n))) {
        free(buf);
        return cf_error(COFFER_ERR_NO_MEMORY, "out of memory opening an index");
    }
    if (!fresh) { /* opened again in place: its old contents go */
        c->bytes -= n->bytes;
        n->bytes = 0;
        free(n->buf);
        free(n->off);
        free(n->len);
        free(n->child);
        n->buf = NULL;
        n->off = NULL;
        n->len = NULL;
        n->child = NULL;
        n->cap = 0;
        n->n = 0;
        n->gone = n->dirty = 0;
    }
    n->id = id;
    n->cls = cls;
    n->mapkey = mapkey_of(cls, id);
    n->epoch = c->epoch;
    n->sealed = NULL;
    n->sealed_len = 0;
    if (keep_sealed && buf && cap >= len + v.mv_size) {
        memcpy(buf + len, v.mv_data, v.mv_size);
        n->sealed = buf + len;
        n->sealed_len = v.mv_size;
    }
    st = node_decode(txn, n, buf, len, cap);
    if (st == COFFER_OK && fresh)
        st = cache_add(c, n);
    if (st == COFFER_OK && !txn->write) {
        n->bytes = sizeof *n + n->bufcap + (size_t)n->cap * (sizeof *n->off + sizeof *n->len) +
                   (n->leaf ? 0 : ((size_t)n->cap + 1) * sizeof *n->child);
        c->bytes += n->bytes;
    }
    if (st != COFFER_OK) {
        if (fresh) {
            node_free(n);
        } else {
            n->gone = 1; /* never taken as it was */
            n->n = 0;
        }
        return st;
    }
    *out = n;
    return COFFER_OK;
}

/* A fresh node id of class `cls`: past the last one LMDB holds and every
 * one this transaction made. */
static coffer_status next_id(coffer_txn *txn, coffer_class_id cls, uint64_t *out)
{
    cf_itree_cache *c = txn->itree;
    if (cls >= c->nclasses) {
        size_t nc = (size_t)cls + 8;
        uint64_t *ids = realloc(c->next_id, nc * sizeof *ids);
        if (!ids)
            return cf_error(COFFER_ERR_NO_MEMORY, "out of memory changing an index");
        memset(ids + c->nclasses, 0, (nc - c->nclasses) * sizeof *ids);
        c->next_id = ids;
        c->nclasses = nc;
    }
    if (!c->next_id[cls]) {
        MDB_cursor *cur;
        coffer_status st = cf_txn_index_cursor(txn, cls, &cur);
        if (st != COFFER_OK)
            return st;
        MDB_val k, v;
        int rc = mdb_cursor_get(cur, &k, &v, MDB_LAST);
        if (rc == 0 && k.mv_size == 8)
            c->next_id[cls] = cf_get_be64(k.mv_data) + 1;
        else if (rc == 0 || rc == MDB_NOTFOUND)
            c->next_id[cls] = ROOT_ID + 1;
        else
            return cf_error_mdb(rc, "cannot read an index");
        if (c->next_id[cls] <= ROOT_ID)
            c->next_id[cls] = ROOT_ID + 1;
    }
    *out = c->next_id[cls]++;
    return COFFER_OK;
}

/* Deletes node n from LMDB (merged away). */
static coffer_status node_drop(coffer_txn *txn, cf_itree_node *n)
{
    n->gone = 1;
    n->dirty = 0;
    uint8_t key[8];
    cf_put_be64(key, n->id);
    MDB_val k = {8, key};
    int rc = mdb_del(txn->mdb, txn->db->index_dbis[n->cls], &k, NULL);
    if (rc != 0 && rc != MDB_NOTFOUND)
        return cf_txn_write_error(txn, rc, "cannot delete an index node");
    return COFFER_OK;
}

static coffer_status node_write(coffer_txn *txn, cf_itree_cache *c, cf_itree_node *n)
{
    if (c->scratch_cap < n->size) {
        uint8_t *s = realloc(c->scratch, n->size);
        if (!s)
            return cf_error(COFFER_ERR_NO_MEMORY, "out of memory writing an index");
        c->scratch = s;
        c->scratch_cap = n->size;
    }
    uint8_t *p = c->scratch;
    p[0] = n->leaf ? 0 : 1;
    p[1] = 1;
    p[2] = p[3] = 0;
    cf_put_le(p + 4, n->n, 4);
    size_t at = NODE_HEAD;
    if (!n->leaf) {
        cf_put_le(p + at, n->child[0], 8);
        at += 8;
    }
    for (uint32_t i = 0; i < n->n; i++) {
        p[at] = (uint8_t)n->len[i];
        p[at + 1] = (uint8_t)(n->len[i] >> 8);
        memcpy(p + at + 2, entry_at(n, i), n->len[i]);
        at += 2 + n->len[i];
        if (!n->leaf) {
            cf_put_le(p + at, n->child[i + 1], 8);
            at += 8;
        }
    }
    uint8_t key[8];
    cf_put_be64(key, n->id);
    coffer_status st = cf_store_put(txn, txn->db->index_dbis[n->cls], index_number(txn, n->cls), key, 8, p, at, 0,
                                    "cannot write an index node");
    if (st != COFFER_OK)
        return st;
    n->dirty = 0;
    /* Compact: the node's buffer becomes the bytes just written. */
    if (n->used > 2 * at + 256 && n->bufcap >= at) {
        memcpy(n->buf, p, at);
        size_t o = NODE_HEAD + (n->leaf ? 0 : 8);
        for (uint32_t i = 0; i < n->n; i++) {
            n->off[i] = (uint32_t)(o + 2);
            o += 2 + n->len[i] + (n->leaf ? 0 : 8);
        }
        n->used = at;
    }
    return COFFER_OK;
}

coffer_status cf_itree_flush(coffer_txn *txn)
{
    cf_itree_cache *c = txn->itree;
    if (!c)
        return COFFER_OK;
    for (cf_itree_node *n = c->all; n; n = n->next_all)
        if (n->dirty && !n->gone) {
            coffer_status st = node_write(txn, c, n);
            if (st != COFFER_OK)
                return st;
        }
    return COFFER_OK;
}

/* ---- descending ---------------------------------------------------------- */

/* Fills cur->path from the root down to the leaf where `key` belongs
 * (`upper`: the leaf of the last entries not above it, for a seek by
 * lower bound the same). *empty when the tree has no root. */
static coffer_status descend(cf_itree_cursor *cur, const uint8_t *key, size_t klen, int *empty)
{
    cf_itree_node *n;
    coffer_status st = node_get(cur->txn, cur->cls, ROOT_ID, &n);
    *empty = 0;
    cur->depth = 0;
    if (st != COFFER_OK)
        return st;
    if (!n) {
        *empty = 1;
        return COFFER_OK;
    }
    for (;;) {
        if (cur->depth == CF_ITREE_MAX_DEPTH)
            return damaged(cur->txn, cur->cls, n->id, "the tree is deeper than any Coffer writes");
        if (n->leaf) {
            cur->path[cur->depth].node = n;
            cur->path[cur->depth++].at = key ? node_search(n, key, klen, 0) : 0;
            return COFFER_OK;
        }
        uint32_t i = key ? node_search(n, key, klen, 1) : 0;
        cur->path[cur->depth].node = n;
        cur->path[cur->depth++].at = i;
        uint64_t id = n->child[i];
        st = node_get(cur->txn, cur->cls, id, &n);
        if (st != COFFER_OK)
            return st;
        if (!n)
            return damaged(cur->txn, cur->cls, id, "its parent names it, but it is not stored");
    }
}

/* Moves to the first entry at or after the cursor's leaf position. */
static coffer_status settle(cf_itree_cursor *cur, const uint8_t **e, size_t *len)
{
    for (;;) {
        cf_itree_node *leaf = cur->path[cur->depth - 1].node;
        uint32_t at = cur->path[cur->depth - 1].at;
        if (at < leaf->n) {
            *e = entry_at(leaf, at);
            *len = leaf->len[at];
            return COFFER_OK;
        }
        /* Up to the nearest inner node with a child to the right. */
        int d = cur->depth - 2;
        while (d >= 0 && cur->path[d].at >= cur->path[d].node->n)
            d--;
        if (d < 0)
            return COFFER_DONE;
        cur->path[d].at++;
        for (; d < cur->depth - 1; d++) {
            uint64_t id = cur->path[d].node->child[cur->path[d].at];
            cf_itree_node *n;
            coffer_status st = node_get(cur->txn, cur->cls, id, &n);
            if (st != COFFER_OK)
                return st;
            if (!n || n->leaf != (d + 1 == cur->depth - 1))
                return damaged(cur->txn, cur->cls, id, "its parent names it, but it is not stored at its depth");
            cur->path[d + 1].node = n;
            cur->path[d + 1].at = 0;
        }
    }
}

coffer_status cf_itree_seek(cf_itree_cursor *cur, coffer_txn *txn, coffer_class_id cls, const uint8_t *key, size_t klen,
                            const uint8_t **e, size_t *len)
{
    cur->txn = txn;
    cur->cls = cls;
    int empty;
    coffer_status st = descend(cur, key, klen, &empty);
    if (st != COFFER_OK)
        return st;
    if (empty)
        return COFFER_DONE;
    return settle(cur, e, len);
}

coffer_status cf_itree_next(cf_itree_cursor *cur, const uint8_t **e, size_t *len)
{
    if (cur->depth == 0)
        return COFFER_DONE;
    cur->path[cur->depth - 1].at++;
    return settle(cur, e, len);
}

/* ---- inserting ----------------------------------------------------------- */

/* Moves the upper part of n (entries from `mid` on; for an inner node the
 * separator at `mid` goes up instead) into the new node r. */
static coffer_status move_upper(cf_itree_node *n, uint32_t mid, cf_itree_node *r)
{
    uint32_t from = n->leaf ? mid : mid + 1;
    if (!n->leaf)
        r->child[0] = n->child[mid + 1];
    for (uint32_t i = from; i < n->n; i++) {
        coffer_status st = node_insert(r, r->n, entry_at(n, i), n->len[i], n->leaf ? 0 : n->child[i + 1]);
        if (st != COFFER_OK)
            return st;
    }
    while (n->n > mid)
        node_remove(n, n->n - 1);
    n->dirty = r->dirty = 1;
    return COFFER_OK;
}

/* The index where an oversized node splits: the first at which the bytes
 * before it pass half its size (at least 1, at most n - 1). */
static uint32_t split_point(const cf_itree_node *n)
{
    size_t half = (n->size - NODE_HEAD) / 2, acc = 0;
    uint32_t i = 0;
    while (i < n->n && acc < half)
        acc += item_size(n, n->len[i++]);
    if (i >= n->n)
        i = n->n - 1;
    if (i == 0)
        i = 1;
    return i;
}

/* The index where an oversized leaf whose last entry was just added splits
 * (entries coming in order): the upper part gets the fewest last entries
 * that make it a quarter full, so that the lower one stays as full as it
 * can (at least 1, at most n - 1). */
static uint32_t split_point_tail(const cf_itree_node *n)
{
    size_t acc = NODE_HEAD;
    uint32_t i = n->n;
    while (i > 1 && acc < NODE_MIN)
        acc += item_size(n, n->len[--i]);
    if (i >= n->n)
        i = n->n - 1;
    if (i == 0)
        i = 1;
    return i;
}

/* Splits cur->path[d].node, which is oversized, and goes on up; `tail`: the
 * leaf at d took an entry at its end (split_point_tail). */
static coffer_status split_up(cf_itree_cursor *cur, int d, int tail)
{
    coffer_txn *txn = cur->txn;
    while (d >= 0 && cur->path[d].node->size > CF_ITREE_NODE_SPLIT && cur->path[d].node->n >= 3) {
        cf_itree_node *n = cur->path[d].node, *r;
        uint64_t rid;
        coffer_status st = next_id(txn, cur->cls, &rid);
        if (st == COFFER_OK)
            st = node_new(txn, cur->cls, rid, n->leaf, &r);
        if (st != COFFER_OK)
            return st;
        uint32_t mid = tail && n->leaf ? split_point_tail(n) : split_point(n);
        /* The separator: a leaf's first upper entry, an inner node's middle one. */
        size_t slen = n->len[mid];
        uint8_t sep[CF_ITREE_NODE_MAX];
        memcpy(sep, entry_at(n, mid), slen);
        if ((st = move_upper(n, mid, r)) != COFFER_OK)
            return st;
        if (d == 0) {
            /* The root keeps id 1: its halves move to two new nodes. */
            cf_itree_node *l;
            uint64_t lid;
            st = next_id(txn, cur->cls, &lid);
            if (st == COFFER_OK)
                st = node_new(txn, cur->cls, lid, n->leaf, &l);
            if (st != COFFER_OK)
                return st;
            if (!n->leaf)
                l->child[0] = n->child[0];
            for (uint32_t i = 0; i < n->n && st == COFFER_OK; i++)
                st = node_insert(l, l->n, entry_at(n, i), n->len[i], n->leaf ? 0 : n->child[i + 1]);
            if (st != COFFER_OK)
                return st;
            l->dirty = 1;
            while (n->n)
                node_remove(n, n->n - 1);
            if (n->leaf) {
                free(n->child);
                uint64_t *child = malloc((n->cap + 1) * sizeof *child);
                if (!child)
                    return cf_error(COFFER_ERR_NO_MEMORY, "out of memory changing an index");
                n->child = child;
                n->leaf = 0;
            }
            n->used = 0;
            n->size = NODE_HEAD + 8;
            n->child[0] = lid;
            return node_insert(n, 0, sep, slen, rid);
        }
        cf_itree_node *parent = cur->path[d - 1].node;
        if ((st = node_insert(parent, cur->path[d - 1].at, sep, slen, rid)) != COFFER_OK)
            return st;
        d--;
    }
    return COFFER_OK;
}

coffer_status cf_itree_insert(coffer_txn *txn, coffer_class_id cls, const uint8_t *e, size_t len)
{
    if (len == 0 || len > CF_ITREE_NODE_MAX / 8)
        return cf_error(COFFER_ERR_INTERNAL, "an index entry of %zu bytes", len);
    cf_itree_cursor cur = {.txn = txn, .cls = cls};
    int empty;
    coffer_status st = descend(&cur, e, len, &empty);
    if (st != COFFER_OK)
        return st;
    if (empty) {
        cf_itree_node *root;
        st = node_new(txn, cls, ROOT_ID, 1, &root);
        if (st != COFFER_OK)
            return st;
        return node_insert(root, 0, e, len, 0);
    }
    cf_itree_node *leaf = cur.path[cur.depth - 1].node;
    uint32_t at = cur.path[cur.depth - 1].at;
    if (at < leaf->n && bytes_cmp(entry_at(leaf, at), leaf->len[at], e, len) == 0)
        return COFFER_OK;
    int tail = at == leaf->n;
    st = node_insert(leaf, at, e, len, 0);
    return st == COFFER_OK ? split_up(&cur, cur.depth - 1, tail) : st;
}

/* The entry run[i] of a run: its length (native order) and bytes. */
static size_t run_len(const uint8_t *p)
{
    uint16_t n;
    memcpy(&n, p, 2);
    return n;
}

/* The first index of leaf n from `from` on whose entry is not below key:
 * the entry at `from` first (the next entry of a sorted run most often
 * goes there or at the end), then a binary search of the rest. */
static uint32_t leaf_search_from(const cf_itree_node *n, uint32_t from, const uint8_t *key, size_t klen)
{
    if (from >= n->n || bytes_cmp(entry_at(n, from), n->len[from], key, klen) >= 0)
        return from;
    if (bytes_cmp(entry_at(n, n->n - 1), n->len[n->n - 1], key, klen) < 0)
        return n->n;
    uint32_t lo = from + 1, hi = n->n - 1;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (bytes_cmp(entry_at(n, mid), n->len[mid], key, klen) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

coffer_status cf_itree_insert_run(coffer_txn *txn, coffer_class_id cls, const uint8_t *const *run, size_t count)
{
    size_t i = 0;
    while (i < count) {
        const uint8_t *e = run[i] + 2;
        size_t len = run_len(run[i]);
        if (len == 0 || len > CF_ITREE_NODE_MAX / 8)
            return cf_error(COFFER_ERR_INTERNAL, "an index entry of %zu bytes", len);
        if (i > 0 && run_len(run[i - 1]) == len && memcmp(run[i - 1] + 2, e, len) == 0) {
            i++; /* the run holds it twice */
            continue;
        }
        cf_itree_cursor cur = {.txn = txn, .cls = cls};
        int empty;
        coffer_status st = descend(&cur, e, len, &empty);
        if (st != COFFER_OK)
            return st;
        if (empty) {
            cf_itree_node *root;
            if ((st = node_new(txn, cls, ROOT_ID, 1, &root)) != COFFER_OK)
                return st;
            cur.depth = 1;
            cur.path[0].node = root;
            cur.path[0].at = 0;
        }
        /* The leaf takes every entry of the run below the separator that
         * bounds it (the one after the nearest ancestor's child taken),
         * until it grows past a node's size and splits; the next entry
         * then descends again. */
        cf_itree_node *leaf = cur.path[cur.depth - 1].node;
        const uint8_t *hi = NULL;
        size_t hilen = 0;
        for (int d = cur.depth - 2; d >= 0; d--) {
            const cf_itree_node *p = cur.path[d].node;
            if (cur.path[d].at < p->n) {
                hi = entry_at(p, cur.path[d].at);
                hilen = p->len[cur.path[d].at];
                break;
            }
        }
        uint32_t at = cur.path[cur.depth - 1].at;
        int tail = 0;
        for (;;) {
            at = leaf_search_from(leaf, at, e, len);
            if (at < leaf->n && bytes_cmp(entry_at(leaf, at), leaf->len[at], e, len) == 0) {
                i++; /* stored already */
            } else {
                tail = at == leaf->n;
                if ((st = node_insert(leaf, at, e, len, 0)) != COFFER_OK)
                    return st;
                at++;
                i++;
                if (leaf->size > CF_ITREE_NODE_SPLIT)
                    break;
            }
            /* The next entry of the run, when it belongs in this leaf. */
            while (i < count && run_len(run[i - 1]) == run_len(run[i]) &&
                   memcmp(run[i - 1] + 2, run[i] + 2, run_len(run[i])) == 0)
                i++;
            if (i == count)
                break;
            e = run[i] + 2;
            len = run_len(run[i]);
            if (len == 0 || len > CF_ITREE_NODE_MAX / 8)
                return cf_error(COFFER_ERR_INTERNAL, "an index entry of %zu bytes", len);
            if (hi && bytes_cmp(e, len, hi, hilen) >= 0)
                break;
        }
        if (leaf->size > CF_ITREE_NODE_SPLIT) {
            cur.path[cur.depth - 1].at = at;
            if ((st = split_up(&cur, cur.depth - 1, tail)) != COFFER_OK)
                return st;
        }
    }
    return COFFER_OK;
}

/* ---- deleting ------------------------------------------------------------ */

/* Joins child i + 1 of `parent` into child i (with their separator between
 * them when inner), then splits the result again if it is too large. */
static coffer_status join_children(coffer_txn *txn, cf_itree_node *parent, uint32_t i)
{
    cf_itree_node *l, *r;
    coffer_status st = node_get(txn, parent->cls, parent->child[i], &l);
    if (st == COFFER_OK && l)
        st = node_get(txn, parent->cls, parent->child[i + 1], &r);
    if (st != COFFER_OK)
        return st;
    if (!l || !r || l->leaf != r->leaf)
        return damaged(txn, parent->cls, parent->id, "it names children that are not stored or not at one depth");
    size_t slen = parent->len[i];
    uint8_t sep[CF_ITREE_NODE_MAX];
    memcpy(sep, entry_at(parent, i), slen);
    uint32_t base = l->n;
    if (!l->leaf && (st = node_insert(l, l->n, sep, slen, r->child[0])) != COFFER_OK)
        return st;
    for (uint32_t j = 0; j < r->n && st == COFFER_OK; j++)
        st = node_insert(l, l->n, entry_at(r, j), r->len[j], l->leaf ? 0 : r->child[j + 1]);
    if (st != COFFER_OK)
        return st;
    (void)base;
    if (l->size <= CF_ITREE_NODE_SPLIT) {
        node_remove(parent, i);
        return node_drop(txn, r);
    }
    /* Too large for one node: share the entries out again. */
    while (r->n)
        node_remove(r, r->n - 1);
    r->used = 0;
    r->size = NODE_HEAD + (r->leaf ? 0 : 8);
    uint32_t mid = split_point(l);
    size_t nlen = l->len[mid];
    uint8_t nsep[CF_ITREE_NODE_MAX];
    memcpy(nsep, entry_at(l, mid), nlen);
    if ((st = move_upper(l, mid, r)) != COFFER_OK)
        return st;
    /* Replace the separator. */
    uint64_t right = parent->child[i + 1];
    node_remove(parent, i);
    return node_insert(parent, i, nsep, nlen, right);
}

coffer_status cf_itree_delete(coffer_txn *txn, coffer_class_id cls, const uint8_t *e, size_t len, int *found)
{
    if (found)
        *found = 0;
    cf_itree_cursor cur = {.txn = txn, .cls = cls};
    int empty;
    coffer_status st = descend(&cur, e, len, &empty);
    if (st != COFFER_OK || empty)
        return st;
    cf_itree_node *leaf = cur.path[cur.depth - 1].node;
    uint32_t at = cur.path[cur.depth - 1].at;
    if (at >= leaf->n || bytes_cmp(entry_at(leaf, at), leaf->len[at], e, len) != 0)
        return COFFER_OK;
    if (found)
        *found = 1;
    node_remove(leaf, at);
    /* Rebalance up the path while a node is under a quarter full. */
    for (int d = cur.depth - 1; d > 0; d--) {
        cf_itree_node *n = cur.path[d].node, *parent = cur.path[d - 1].node;
        if (n->size >= NODE_MIN)
            break;
        if (parent->n == 0)
            break; /* only one child: nothing to join with */
        uint32_t i = cur.path[d - 1].at;
        st = join_children(txn, parent, i < parent->n ? i : i - 1);
        if (st != COFFER_OK)
            return st;
    }
    /* A root with one child takes the child's place; an empty root goes. */
    cf_itree_node *root = cur.path[0].node;
    while (!root->leaf && root->n == 0) {
        cf_itree_node *only;
        if ((st = node_get(txn, cls, root->child[0], &only)) != COFFER_OK)
            return st;
        if (!only)
            return damaged(txn, cls, root->child[0], "the root names it, but it is not stored");
        root->leaf = only->leaf;
        root->used = 0;
        root->size = NODE_HEAD + (root->leaf ? 0 : 8);
        if (!root->leaf)
            root->child[0] = only->child[0];
        for (uint32_t j = 0; j < only->n && st == COFFER_OK; j++)
            st = node_insert(root, root->n, entry_at(only, j), only->len[j], root->leaf ? 0 : only->child[j + 1]);
        if (st == COFFER_OK)
            st = node_drop(txn, only);
        if (st != COFFER_OK)
            return st;
        root->dirty = 1;
    }
    if (root->leaf && root->n == 0)
        return node_drop(txn, root);
    return COFFER_OK;
}

/* ---- checking ------------------------------------------------------------ */

static coffer_status check_node(coffer_txn *txn, coffer_class_id cls, uint64_t id, int depth, int *leaf_depth,
                                const uint8_t *lo, size_t lolen, const uint8_t *hi, size_t hilen, uint64_t *count)
{
    cf_itree_node *n;
    coffer_status st = node_get(txn, cls, id, &n);
    if (st != COFFER_OK)
        return st;
    if (!n)
        return damaged(txn, cls, id, "its parent names it, but it is not stored");
    if (depth >= CF_ITREE_MAX_DEPTH)
        return damaged(txn, cls, id, "the tree is too deep");
    if (id != ROOT_ID && n->size < NODE_MIN)
        return damaged(txn, cls, id, "it is less than a quarter full");
    if (n->size > CF_ITREE_NODE_MAX && n->n >= 3)
        return damaged(txn, cls, id, "it is over full");
    for (uint32_t i = 0; i < n->n; i++) {
        if (i && bytes_cmp(entry_at(n, i - 1), n->len[i - 1], entry_at(n, i), n->len[i]) >= 0)
            return damaged(txn, cls, id, "its entries are out of order");
        if (lo && bytes_cmp(entry_at(n, i), n->len[i], lo, lolen) < 0)
            return damaged(txn, cls, id, "an entry is below its separator");
        if (hi && bytes_cmp(entry_at(n, i), n->len[i], hi, hilen) >= 0)
            return damaged(txn, cls, id, "an entry is not below the next separator");
    }
    if (n->leaf) {
        if (*leaf_depth < 0)
            *leaf_depth = depth;
        else if (*leaf_depth != depth)
            return damaged(txn, cls, id, "its leaves are at different depths");
        *count += n->n;
        return COFFER_OK;
    }
    for (uint32_t i = 0; i <= n->n; i++) {
        const uint8_t *clo = i ? entry_at(n, i - 1) : lo, *chi = i < n->n ? entry_at(n, i) : hi;
        size_t cllen = i ? n->len[i - 1] : lolen, chlen = i < n->n ? n->len[i] : hilen;
        st = check_node(txn, cls, n->child[i], depth + 1, leaf_depth, clo, cllen, chi, chlen, count);
        if (st != COFFER_OK)
            return st;
    }
    return COFFER_OK;
}

coffer_status cf_itree_check(coffer_txn *txn, coffer_class_id cls, uint64_t *count)
{
    *count = 0;
    cf_itree_node *root;
    coffer_status st = node_get(txn, cls, ROOT_ID, &root);
    if (st != COFFER_OK || !root)
        return st;
    int leaf_depth = -1;
    return check_node(txn, cls, ROOT_ID, 0, &leaf_depth, NULL, 0, NULL, 0, count);
}
