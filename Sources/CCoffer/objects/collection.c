/* collection — lists, sets and maps, of properties and nested in mixed
 * values, and their handles. Storage layout in docs/FORMAT.md: keys in
 * sub-database 1 that start with 'C'. A list is a directory (its header) and
 * chunks of cells, so one element costs one chunk and one directory write
 * however long the list is. */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "objects/cell.h"
#include "util/error.h"
#include "objects/graph.h"
#include "storage/changelog.h"
#include "storage/txn.h"

#define TAG_COLLECTION 'C'
#define PART_HEADER 0
#define PART_CHUNK 1
#define PART_SET 2
#define PART_MAP 3

/* A chunk holds at most this many elements, and is split when its cells
 * pass CHUNK_BYTES (so that it stays inside one LMDB page). */
#define CHUNK_ELEMS 128
#define CHUNK_BYTES 1600
#define MAP_KEY_PREFIX 400
#define HEADER_FIXED 32


static const cf_class *class_at(const coffer_txn *txn, coffer_class_id cls) { return &txn->db->schema->classes[cls]; }


static size_t coll_key(uint64_t id, int part, uint8_t *out)
{
    out[0] = TAG_COLLECTION;
    cf_put_be64(out + 1, id);
    out[9] = (uint8_t)part;
    return 10;
}

static size_t chunk_key(uint64_t id, uint32_t chunk, uint8_t *out)
{
    size_t n = coll_key(id, PART_CHUNK, out);
    cf_put_be32(out + n, chunk);
    return n + 4;
}

/* The end of the list a write transaction appends to, kept in memory
 * (below, "list tails"). */
static coffer_status tail_flush_id(coffer_txn *txn, uint64_t id);
static int tail_copy_header(cf_coll *c);

/* ---- headers ------------------------------------------------------------- */

/* Header: kind, depth, owner (table, column, key), count, next chunk
 * number, chunk count, then per chunk its number and cumulative end. */
static coffer_status hdr_reserve(cf_coll *c, uint32_t n)
{
    if (n <= c->chunk_cap)
        return COFFER_OK;
    uint32_t cap = c->chunk_cap ? c->chunk_cap : 8;
    while (cap < n)
        cap *= 2;
    uint32_t *a = realloc(c->chunk_no, cap * sizeof *a);
    if (a)
        c->chunk_no = a;
    uint32_t *b = a ? realloc(c->ends, cap * sizeof *b) : NULL;
    if (!a || !b)
        return cf_error(COFFER_ERR_NO_MEMORY, "out of memory reading a list");
    c->ends = b;
    c->chunk_cap = cap;
    return COFFER_OK;
}

static coffer_status hdr_decode(cf_coll *c, const uint8_t *p, size_t len)
{
    if (len < HEADER_FIXED + 4 || p[0] < COFFER_COLLECTION_LIST || p[0] > COFFER_COLLECTION_MAP)
        return cf_error(COFFER_ERR_CORRUPTED, "collection %" PRIu64 " has a damaged header", c->id);
    if (p[0] != c->kind)
        return cf_error(COFFER_ERR_CORRUPTED, "collection %" PRIu64 " is of another kind than its owner says", c->id);
    c->count = cf_get_le(p + 20, 8);
    c->next_chunk = (uint32_t)cf_get_le(p + 28, 4);
    uint32_t n = (uint32_t)cf_get_le(p + 32, 4);
    if ((len - HEADER_FIXED - 4) / 8 < n || len != HEADER_FIXED + 4 + (size_t)n * 8)
        return cf_error(COFFER_ERR_CORRUPTED, "collection %" PRIu64 " has a damaged directory", c->id);
    coffer_status st = hdr_reserve(c, n + 1);
    if (st != COFFER_OK)
        return st;
    c->nchunks = n;
    uint32_t prev = 0;
    for (uint32_t i = 0; i < n; i++) {
        c->chunk_no[i] = (uint32_t)cf_get_le(p + HEADER_FIXED + 4 + 8 * (size_t)i, 4);
        c->ends[i] = (uint32_t)cf_get_le(p + HEADER_FIXED + 8 + 8 * (size_t)i, 4);
        if (c->ends[i] <= prev || c->chunk_no[i] >= c->next_chunk)
            return cf_error(COFFER_ERR_CORRUPTED, "collection %" PRIu64 " has a damaged directory", c->id);
        prev = c->ends[i];
    }
    if (c->kind == COFFER_COLLECTION_LIST && prev != c->count)
        return cf_error(COFFER_ERR_CORRUPTED, "collection %" PRIu64 " counts %" PRIu64 " elements but holds %u", c->id, c->count, prev);
    return COFFER_OK;
}

static coffer_status hdr_store(cf_coll *c)
{
    coffer_status fst = tail_flush_id(c->txn, c->id);
    if (fst != COFFER_OK)
        return fst;
    size_t len = HEADER_FIXED + 4 + (size_t)c->nchunks * 8;
    uint8_t stackbuf[512], *p = len <= sizeof stackbuf ? stackbuf : malloc(len);
    if (!p)
        return cf_error(COFFER_ERR_NO_MEMORY, "out of memory writing a collection");
    const coffer_txn *txn = c->txn;
    memset(p, 0, HEADER_FIXED);
    p[0] = (uint8_t)c->kind;
    p[1] = (uint8_t)c->depth;
    cf_put_le(p + 4, class_at(txn, c->cls)->table, 4);
    cf_put_le(p + 8, class_at(txn, c->cls)->props[c->prop].column, 2);
    cf_put_le(p + 12, c->okey, 8);
    cf_put_le(p + 20, c->count, 8);
    cf_put_le(p + 28, c->next_chunk, 4);
    cf_put_le(p + 32, c->nchunks, 4);
    for (uint32_t i = 0; i < c->nchunks; i++) {
        cf_put_le(p + HEADER_FIXED + 4 + 8 * (size_t)i, c->chunk_no[i], 4);
        cf_put_le(p + HEADER_FIXED + 8 + 8 * (size_t)i, c->ends[i], 4);
    }
    uint8_t key[10];
    coll_key(c->id, PART_HEADER, key);
    coffer_status st = cf_graph_put(c->txn, key, sizeof key, p, len);
    if (p != stackbuf)
        free(p);
    return st;
}

/* Makes the cached header current. A property's collection is looked up
 * through its object each time the transaction has written, so a handle
 * follows the property when it is assigned a new collection. */
static coffer_status coll_load(cf_coll *c)
{
    coffer_txn *txn = c->txn;
    if (c->loaded && c->generation == txn->generation)
        return COFFER_OK;
    c->loaded = 0;
    c->cursor_valid = 0;
    c->rchunk_valid = 0;
    if (!c->nested) {
        int kind, depth;
        coffer_status st = cf_object_collection(txn, c->cls, c->okey, c->prop, 0, &c->id, &kind, &depth);
        if (st != COFFER_OK)
            return st;
        if (kind != c->kind) {
            char w[200];
            cf_slot s = {.cls = c->cls, .prop = c->prop};
            return cf_error(COFFER_ERR_NOT_FOUND, "%s no longer holds this %s", cf_slot_where(txn, &s, w, sizeof w),
                            c->kind == COFFER_COLLECTION_MAP ? "map" : "list");
        }
    }
    int tail = c->id && c->kind == COFFER_COLLECTION_LIST ? tail_copy_header(c) : 0;
    if (tail < 0)
        return COFFER_ERR_NO_MEMORY;
    if (c->id == 0) {
        c->count = 0;
        c->nchunks = 0;
        c->next_chunk = 0;
    } else if (!tail) {
        uint8_t key[10];
        coll_key(c->id, PART_HEADER, key);
        const uint8_t *data;
        size_t len;
        coffer_status st = cf_graph_get(txn, key, sizeof key, &data, &len, &c->buf, &c->buf_cap, "a collection header");
        if (st == COFFER_ERR_NOT_FOUND)
            return cf_error(COFFER_ERR_NOT_FOUND, "the collection was deleted (its object was deleted or the value replaced)");
        if (st == COFFER_OK)
            st = hdr_decode(c, data, len);
        if (st != COFFER_OK)
            return st;
    }
    c->loaded = 1;
    c->generation = txn->generation;
    return COFFER_OK;
}

/* After a write by this handle its cache is current again. */
static void coll_wrote(cf_coll *c)
{
    c->txn->generation++;
    c->generation = c->txn->generation;
    c->cursor_valid = 0;
    c->rchunk_valid = 0;
}

/* Stores a property collection that does not exist yet. */
static coffer_status coll_materialize(cf_coll *c)
{
    if (c->id)
        return COFFER_OK;
    int kind, depth;
    coffer_status st = cf_object_collection(c->txn, c->cls, c->okey, c->prop, 1, &c->id, &kind, &depth);
    if (st != COFFER_OK)
        return st;
    c->generation = c->txn->generation;
    return COFFER_OK;
}

static cf_slot elem_slot(const cf_coll *c)
{
    const cf_prop *p = &class_at(c->txn, c->cls)->props[c->prop];
    cf_slot s = {c->cls, c->prop, c->okey, c->depth, p->type == COFFER_TYPE_MIXED, 1, c->policy};
    return s;
}

/* Creates the header of a new collection. */
static coffer_status coll_new(cf_coll *c)
{
    coffer_status st = cf_txn_next_collection_id(c->txn, &c->id);
    if (st != COFFER_OK)
        return st;
    c->count = 0;
    c->nchunks = 0;
    c->next_chunk = 0;
    return hdr_store(c);
}

static void coll_tmp(cf_coll *c, coffer_txn *txn, const cf_slot *s, int kind, int depth, uint64_t id)
{
    memset(c, 0, sizeof *c);
    c->magic = CF_COLL_MAGIC;
    c->txn = txn;
    c->kind = kind;
    c->cls = s->cls;
    c->prop = s->prop;
    c->okey = s->key;
    c->nested = 1; /* never looked up through the object */
    c->policy = s->policy;
    c->depth = depth;
    c->id = id;
}

static void coll_tmp_free(cf_coll *c)
{
    free(c->chunk_no);
    free(c->ends);
    free(c->buf);
    free(c->rchunk);
    if (c->cursor)
        mdb_cursor_close(c->cursor);
}

/* ---- list chunks --------------------------------------------------------- */

typedef struct chunk {
    uint8_t *data; /* own copy */
    size_t len;
    uint32_t n;
} chunk;

static const uint8_t *chunk_cell(const chunk *k, uint32_t i, size_t *len)
{
    const uint8_t *ends = k->data + 2;
    size_t payload = 2 + 4 * (size_t)k->n;
    uint32_t start = i ? (uint32_t)cf_get_le(ends + 4 * (size_t)(i - 1), 4) : 0;
    uint32_t end = (uint32_t)cf_get_le(ends + 4 * (size_t)i, 4);
    *len = end - start;
    return k->data + payload + start;
}

static coffer_status chunk_parse(chunk *k, uint64_t id)
{
    if (k->len < 2)
        goto bad;
    k->n = (uint32_t)cf_get_le(k->data, 2);
    size_t payload = 2 + 4 * (size_t)k->n;
    if (k->n == 0 || k->len < payload)
        goto bad;
    uint32_t prev = 0;
    for (uint32_t i = 0; i < k->n; i++) {
        uint32_t e = (uint32_t)cf_get_le(k->data + 2 + 4 * (size_t)i, 4);
        if (e <= prev && i > 0)
            goto bad;
        if (e < prev || payload + e > k->len)
            goto bad;
        prev = e;
    }
    if (payload + prev != k->len)
        goto bad;
    return COFFER_OK;
bad:
    return cf_error(COFFER_ERR_CORRUPTED, "a chunk of collection %" PRIu64 " is damaged", id);
}

static coffer_status tail_chunk(cf_coll *c, uint32_t no, uint8_t **buf, size_t *cap, size_t *len, int *found);

/* Reads chunk number `no` into *buf (grown as needed, *cap its size; the
 * caller owns it) and parses it into *out, which borrows *buf. The chunk
 * a write transaction keeps in memory (its list tail) is read from there. */
static coffer_status chunk_load(cf_coll *c, uint32_t no, uint8_t **buf, size_t *cap, chunk *out)
{
    int in_tail;
    size_t len;
    coffer_status st = tail_chunk(c, no, buf, cap, &len, &in_tail);
    if (st != COFFER_OK)
        return st;
    if (!in_tail) {
        uint8_t key[14];
        chunk_key(c->id, no, key);
        const uint8_t *data;
        st = cf_graph_get(c->txn, key, sizeof key, &data, &len, buf, cap, "a list chunk");
        if (st == COFFER_ERR_NOT_FOUND)
            return cf_error(COFFER_ERR_CORRUPTED, "a chunk of collection %" PRIu64 " is missing", c->id);
        if (st != COFFER_OK)
            return st;
        if (data != *buf) { /* borrowed from the map: copy */
            if (len + 1 > *cap) {
                uint8_t *b = realloc(*buf, len + 1);
                if (!b)
                    return cf_error(COFFER_ERR_NO_MEMORY, "out of memory reading a list");
                *buf = b;
                *cap = len + 1;
            }
            memcpy(*buf, data, len);
        }
    }
    out->data = *buf;
    out->len = len;
    return chunk_parse(out, c->id);
}

/* Reads chunk number `no` into a fresh copy owned by the caller. */
static coffer_status chunk_read(cf_coll *c, uint32_t no, chunk *out)
{
    uint8_t *buf = NULL;
    size_t cap = 0;
    coffer_status st = chunk_load(c, no, &buf, &cap, out);
    if (st != COFFER_OK) {
        free(buf);
        out->data = NULL;
    }
    return st;
}

/* A list of cell slices to write as chunks. */
typedef struct slice {
    const uint8_t *p;
    size_t len;
} slice;

static coffer_status chunk_write(cf_coll *c, uint32_t no, const slice *cells, uint32_t n)
{
    size_t payload = 0;
    for (uint32_t i = 0; i < n; i++)
        payload += cells[i].len;
    size_t len = 2 + 4 * (size_t)n + payload;
    uint8_t *p = malloc(len);
    if (!p)
        return cf_error(COFFER_ERR_NO_MEMORY, "out of memory writing a list");
    cf_put_le(p, n, 2);
    size_t off = 0, base = 2 + 4 * (size_t)n;
    for (uint32_t i = 0; i < n; i++) {
        if (cells[i].len)
            memcpy(p + base + off, cells[i].p, cells[i].len);
        off += cells[i].len;
        cf_put_le(p + 2 + 4 * (size_t)i, off, 4);
    }
    uint8_t key[14];
    chunk_key(c->id, no, key);
    coffer_status st = cf_graph_put(c->txn, key, sizeof key, p, len);
    free(p);
    return st;
}

static uint32_t chunk_of(const cf_coll *c, uint64_t index)
{
    uint32_t lo = 0, hi = c->nchunks - 1;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (c->ends[mid] > index)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

static uint64_t chunk_start(const cf_coll *c, uint32_t j) { return j ? c->ends[j - 1] : 0; }

/* Replaces `remove` (0 or 1) elements at `index` by `cell` (or nothing):
 * insert, remove and set in one place. The header must be loaded. */
static coffer_status list_splice(cf_coll *c, uint64_t index, int remove, const uint8_t *cell, size_t cell_len)
{
    coffer_status st = tail_flush_id(c->txn, c->id);
    if (st == COFFER_OK)
        st = coll_materialize(c);
    if (st != COFFER_OK)
        return st;
    if (c->nchunks == 0) {
        if (!cell)
            return COFFER_OK;
        st = hdr_reserve(c, 1);
        if (st == COFFER_OK)
            st = chunk_write(c, c->next_chunk, &(slice){cell, cell_len}, 1);
        if (st != COFFER_OK)
            return st;
        c->chunk_no[0] = c->next_chunk++;
        c->ends[0] = 1;
        c->nchunks = 1;
        c->count = 1;
        return hdr_store(c);
    }
    uint32_t j = index >= c->count ? c->nchunks - 1 : chunk_of(c, index);
    uint32_t local = (uint32_t)(index - chunk_start(c, j));
    chunk k;
    st = chunk_read(c, c->chunk_no[j], &k);
    if (st != COFFER_OK)
        return st;
    uint32_t n = k.n - (uint32_t)remove + (cell ? 1 : 0);
    slice *cells = malloc(((size_t)n + 1) * sizeof *cells);
    if (!cells) {
        free(k.data);
        return cf_error(COFFER_ERR_NO_MEMORY, "out of memory writing a list");
    }
    uint32_t m = 0;
    size_t bytes = 0;
    for (uint32_t i = 0; i < k.n; i++) {
        if (i == local && cell)
            cells[m++] = (slice){cell, cell_len};
        if (i == local && remove)
            continue;
        cells[m].p = chunk_cell(&k, i, &cells[m].len);
        m++;
    }
    if (local == k.n && cell)
        cells[m++] = (slice){cell, cell_len};
    for (uint32_t i = 0; i < m; i++)
        bytes += cells[i].len + 4;
    int delta = (cell ? 1 : 0) - remove;
    if (m == 0) {
        uint8_t key[14];
        chunk_key(c->id, c->chunk_no[j], key);
        st = cf_graph_del(c->txn, key, sizeof key);
        memmove(c->chunk_no + j, c->chunk_no + j + 1, (c->nchunks - j - 1) * sizeof *c->chunk_no);
        memmove(c->ends + j, c->ends + j + 1, (c->nchunks - j - 1) * sizeof *c->ends);
        c->nchunks--;
        for (uint32_t i = j; i < c->nchunks; i++)
            c->ends[i] = (uint32_t)((int64_t)c->ends[i] + delta);
    } else if ((m <= CHUNK_ELEMS && bytes <= CHUNK_BYTES) || m == 1) {
        st = chunk_write(c, c->chunk_no[j], cells, m);
        for (uint32_t i = j; i < c->nchunks; i++)
            c->ends[i] = (uint32_t)((int64_t)c->ends[i] + delta);
    } else {
        /* Split: an append to the last chunk starts a new one, so lists
         * built by appending stay dense; otherwise halve. */
        uint32_t left = (j == c->nchunks - 1 && local == k.n) ? m - 1 : m / 2;
        st = hdr_reserve(c, c->nchunks + 1);
        if (st == COFFER_OK)
            st = chunk_write(c, c->chunk_no[j], cells, left);
        if (st == COFFER_OK)
            st = chunk_write(c, c->next_chunk, cells + left, m - left);
        if (st == COFFER_OK) {
            uint32_t old_end = c->ends[j];
            memmove(c->chunk_no + j + 2, c->chunk_no + j + 1, (c->nchunks - j - 1) * sizeof *c->chunk_no);
            memmove(c->ends + j + 2, c->ends + j + 1, (c->nchunks - j - 1) * sizeof *c->ends);
            c->chunk_no[j + 1] = c->next_chunk++;
            c->nchunks++;
            c->ends[j] = (uint32_t)(chunk_start(c, j) + left);
            c->ends[j + 1] = (uint32_t)((int64_t)old_end + delta);
            for (uint32_t i = j + 2; i < c->nchunks; i++)
                c->ends[i] = (uint32_t)((int64_t)c->ends[i] + delta);
        }
    }
    free(cells);
    free(k.data);
    if (st != COFFER_OK)
        return st;
    c->count = (uint64_t)((int64_t)c->count + delta);
    return hdr_store(c);
}

/* Reads element `index` of a loaded list as a stored-form value that
 * borrows c->buf. */
static coffer_status list_read(cf_coll *c, uint64_t index, coffer_value *out)
{
    uint32_t j = chunk_of(c, index);
    chunk k;
    if (c->rchunk_valid && c->rchunk_no == c->chunk_no[j] && c->rchunk_generation == c->txn->generation) {
        k = (chunk){c->rchunk, c->rchunk_len, c->rchunk_n};
    } else {
        /* Keep the opened chunk: the next element is most likely in it. */
        c->rchunk_valid = 0;
        coffer_status st = chunk_load(c, c->chunk_no[j], &c->rchunk, &c->rchunk_cap, &k);
        if (st != COFFER_OK)
            return st;
        if (k.n != c->ends[j] - chunk_start(c, j))
            return cf_error(COFFER_ERR_CORRUPTED, "a chunk of collection %" PRIu64 " holds %u elements where its directory says %" PRIu64,
                            c->id, k.n, c->ends[j] - chunk_start(c, j));
        c->rchunk_len = k.len;
        c->rchunk_n = k.n;
        c->rchunk_no = c->chunk_no[j];
        c->rchunk_generation = c->txn->generation;
        c->rchunk_valid = 1;
    }
    size_t len;
    const uint8_t *cell = chunk_cell(&k, (uint32_t)(index - chunk_start(c, j)), &len);
    /* Values borrow the handle's chunk, until its next read. */
    return cf_cell_read(cell, len, out);
}

/* ---- list tails ----------------------------------------------------------- */

/* Appends are the common write to a list, and a list grows at its end: a
 * write transaction keeps the end of the list it appends to (its header and
 * last chunk) in memory and writes them once, when it commits or before
 * anything else reads or changes that list (docs/FORMAT.md, "Appends").
 * One list at a time: appending to another writes the first out. The
 * transaction holds the tail (txn->deferred); writes of the list other
 * than appends, and every read of its header, write it out first
 * (tail_flush_id); reads of its elements through a handle read the last
 * chunk from the tail (tail_chunk). The bytes written are those the
 * appends one by one would have written. */
typedef struct list_tail {
    cf_coll c;        /* the header: a temporary handle (coll_tmp) */
    uint32_t no;      /* the last chunk's number */
    uint32_t n;       /* its cells */
    uint32_t ends[CHUNK_ELEMS]; /* end offset of each cell */
    uint8_t *cells;   /* the cells, concatenated */
    size_t len, cap;
    int dirty;        /* the chunk and the header differ from what is stored */
} list_tail;

static list_tail *tail_of(const coffer_txn *txn, uint64_t id)
{
    list_tail *t = txn->deferred;
    return t && id && t->c.id == id ? t : NULL;
}

/* The last chunk of a tail, encoded as docs/FORMAT.md stores it, into *p
 * (grown as needed). */
static coffer_status tail_encode(const list_tail *t, uint8_t **p, size_t *cap, size_t *len)
{
    size_t head = 2 + 4 * (size_t)t->n;
    *len = head + t->len;
    if (*len + 1 > *cap) {
        uint8_t *b = realloc(*p, *len + 1);
        if (!b)
            return cf_error(COFFER_ERR_NO_MEMORY, "out of memory writing a list");
        *p = b;
        *cap = *len + 1;
    }
    cf_put_le(*p, t->n, 2);
    for (uint32_t i = 0; i < t->n; i++)
        cf_put_le(*p + 2 + 4 * (size_t)i, t->ends[i], 4);
    if (t->len)
        memcpy(*p + head, t->cells, t->len);
    return COFFER_OK;
}

/* Writes the tail's chunk and header (when changed) and forgets which list
 * it holds. A failure leaves only abort. */
static coffer_status tail_write(coffer_txn *txn, list_tail *t)
{
    coffer_status st = COFFER_OK;
    uint64_t id = t->c.id;
    t->c.id = 0; /* hdr_store must not flush it again */
    if (t->dirty) {
        uint8_t *p = NULL;
        size_t cap = 0, len;
        st = tail_encode(t, &p, &cap, &len);
        if (st == COFFER_OK) {
            uint8_t key[14];
            chunk_key(id, t->no, key);
            st = cf_graph_put(txn, key, sizeof key, p, len);
        }
        free(p);
        t->c.id = id;
        if (st == COFFER_OK) {
            txn->deferred = NULL; /* hdr_store looks for a tail */
            st = hdr_store(&t->c);
            txn->deferred = t;
        }
        t->c.id = 0;
    }
    t->dirty = 0;
    if (st != COFFER_OK)
        txn->failed = 1;
    return st;
}

static coffer_status tail_flush(coffer_txn *txn)
{
    list_tail *t = txn->deferred;
    return t && t->c.id ? tail_write(txn, t) : COFFER_OK;
}

static void tail_drop(coffer_txn *txn)
{
    list_tail *t = txn->deferred;
    if (!t)
        return;
    free(t->c.chunk_no);
    free(t->c.ends);
    free(t->cells);
    free(t);
}

static coffer_status tail_flush_id(coffer_txn *txn, uint64_t id)
{
    list_tail *t = tail_of(txn, id);
    return t ? tail_write(txn, t) : COFFER_OK;
}

/* Copies the directory of a list whose tail the transaction holds into
 * handle `c`: 1 if it did, 0 if there is no tail of it, -1 (error set) if
 * out of memory. */
static int tail_copy_header(cf_coll *c)
{
    list_tail *t = tail_of(c->txn, c->id);
    if (!t)
        return 0;
    if (hdr_reserve(c, t->c.nchunks + 1) != COFFER_OK)
        return -1;
    c->count = t->c.count;
    c->next_chunk = t->c.next_chunk;
    c->nchunks = t->c.nchunks;
    memcpy(c->chunk_no, t->c.chunk_no, t->c.nchunks * sizeof *c->chunk_no);
    memcpy(c->ends, t->c.ends, t->c.nchunks * sizeof *c->ends);
    return 1;
}

static coffer_status tail_chunk(cf_coll *c, uint32_t no, uint8_t **buf, size_t *cap, size_t *len, int *found)
{
    list_tail *t = tail_of(c->txn, c->id);
    *found = t && t->dirty && t->no == no;
    return *found ? tail_encode(t, buf, cap, len) : COFFER_OK;
}

/* Makes the transaction's tail that of loaded list `c` (which has a
 * chunk), writing out another list's. */
static coffer_status tail_take(cf_coll *c, list_tail **out)
{
    coffer_txn *txn = c->txn;
    list_tail *t = txn->deferred;
    if (t && t->c.id == c->id) {
        *out = t;
        return COFFER_OK;
    }
    coffer_status st = t && t->c.id ? tail_write(txn, t) : COFFER_OK;
    if (st != COFFER_OK)
        return st;
    if (!t) {
        t = calloc(1, sizeof *t);
        if (!t)
            return cf_error(COFFER_ERR_NO_MEMORY, "out of memory writing a list");
        txn->deferred = t;
        txn->deferred_flush = tail_flush;
        txn->deferred_drop = tail_drop;
    }
    uint32_t last = c->nchunks - 1;
    chunk k;
    st = chunk_read(c, c->chunk_no[last], &k);
    if (st != COFFER_OK)
        return st;
    if (k.n > CHUNK_ELEMS || k.n != c->ends[last] - chunk_start(c, last)) {
        free(k.data);
        return cf_error(COFFER_ERR_CORRUPTED, "the last chunk of collection %" PRIu64 " does not match its directory", c->id);
    }
    size_t head = 2 + 4 * (size_t)k.n, cells = k.len - head;
    if (cells > t->cap) {
        uint8_t *b = realloc(t->cells, cells);
        if (!b) {
            free(k.data);
            return cf_error(COFFER_ERR_NO_MEMORY, "out of memory writing a list");
        }
        t->cells = b;
        t->cap = cells;
    }
    if (cells)
        memcpy(t->cells, k.data + head, cells);
    for (uint32_t i = 0; i < k.n; i++)
        t->ends[i] = (uint32_t)cf_get_le(k.data + 2 + 4 * (size_t)i, 4);
    t->n = k.n;
    t->len = cells;
    t->no = c->chunk_no[last];
    free(k.data);
    /* The header: the handle's, in a temporary handle of the tail's own. */
    uint32_t *chunk_no = t->c.chunk_no, *ends = t->c.ends, chunk_cap = t->c.chunk_cap;
    cf_slot s = {.cls = c->cls, .prop = c->prop, .key = c->okey, .policy = c->policy};
    coll_tmp(&t->c, txn, &s, c->kind, c->depth, 0);
    t->c.chunk_no = chunk_no;
    t->c.ends = ends;
    t->c.chunk_cap = chunk_cap;
    st = hdr_reserve(&t->c, c->nchunks + 1);
    if (st != COFFER_OK)
        return st;
    memcpy(t->c.chunk_no, c->chunk_no, c->nchunks * sizeof *c->chunk_no);
    memcpy(t->c.ends, c->ends, c->nchunks * sizeof *c->ends);
    t->c.nchunks = c->nchunks;
    t->c.count = c->count;
    t->c.next_chunk = c->next_chunk;
    t->c.id = c->id;
    t->dirty = 0;
    *out = t;
    return COFFER_OK;
}

/* Adds a directory entry for a new last chunk `no` of handle `c`. */
static coffer_status dir_push(cf_coll *c, uint32_t no)
{
    coffer_status st = hdr_reserve(c, c->nchunks + 1);
    if (st != COFFER_OK)
        return st;
    c->chunk_no[c->nchunks] = no;
    c->ends[c->nchunks] = (uint32_t)c->count;
    c->nchunks++;
    if (no >= c->next_chunk)
        c->next_chunk = no + 1;
    return COFFER_OK;
}

/* Appends cell `cell` (`cl` bytes) to loaded list `c`, which has a chunk,
 * through the transaction's tail: the cell goes into the last chunk, or
 * starts a new one when it is full (as list_splice would). */
static coffer_status tail_append(cf_coll *c, const uint8_t *cell, size_t cl)
{
    list_tail *t = NULL;
    coffer_status st = tail_take(c, &t);
    if (st != COFFER_OK)
        return st;
    uint32_t m = t->n + 1;
    if (m > CHUNK_ELEMS || t->len + cl + 4 * (size_t)m > CHUNK_BYTES) {
        if (t->dirty) { /* the full chunk: written now, the header later */
            uint8_t *p = NULL;
            size_t cap = 0, len;
            st = tail_encode(t, &p, &cap, &len);
            if (st == COFFER_OK) {
                uint8_t key[14];
                chunk_key(t->c.id, t->no, key);
                st = cf_graph_put(c->txn, key, sizeof key, p, len);
            }
            free(p);
            if (st != COFFER_OK)
                return st;
        }
        uint32_t no = t->c.next_chunk;
        st = dir_push(&t->c, no);
        if (st == COFFER_OK)
            st = dir_push(c, no);
        if (st != COFFER_OK)
            return st;
        t->no = no;
        t->n = 0;
        t->len = 0;
    }
    if (t->len + cl > t->cap) {
        size_t cap = t->cap ? t->cap : 2048;
        while (cap < t->len + cl)
            cap *= 2;
        uint8_t *b = realloc(t->cells, cap);
        if (!b)
            return cf_error(COFFER_ERR_NO_MEMORY, "out of memory writing a list");
        t->cells = b;
        t->cap = cap;
    }
    memcpy(t->cells + t->len, cell, cl);
    t->len += cl;
    t->ends[t->n++] = (uint32_t)t->len;
    t->dirty = 1;
    t->c.count++;
    t->c.ends[t->c.nchunks - 1]++;
    c->count++;
    c->ends[c->nchunks - 1]++;
    return COFFER_OK;
}

/* ---- set elements and map entries ---------------------------------------- */

/* Key of stored-form element `v` of set `id`: a hash of its identity, keyed
 * in an encrypted file. */
static size_t set_key(const coffer_txn *txn, uint64_t id, const coffer_value *v, uint8_t *out)
{
    size_t n = coll_key(id, PART_SET, out);
    uint8_t head[48];
    size_t hl;
    const void *body;
    size_t bl;
    cf_put_be64(head, id);
    cf_cell_identity(v, head + 8, &hl, &body, &bl);
    cf_index_hash(txn->db->keys, out + n, head, 8 + hl, body, bl);
    return n + CF_INDEX_HASH_SIZE;
}

/* Key of map entry `key` of map `id`: the key's bytes in a plain file (a
 * long one as a prefix and a hash), a keyed hash in an encrypted one. */
static size_t map_key(const coffer_txn *txn, uint64_t id, const coffer_bytes *key, uint8_t *out)
{
    size_t n = coll_key(id, PART_MAP, out);
    uint8_t head[8];
    cf_put_be64(head, id);
    if (txn->db->keys) {
        cf_index_hash(txn->db->keys, out + n, head, 8, key->data, key->size);
        return n + CF_INDEX_HASH_SIZE;
    }
    if (key->size <= MAP_KEY_PREFIX) {
        memcpy(out + n, key->data, key->size);
        return n + key->size;
    }
    memcpy(out + n, key->data, MAP_KEY_PREFIX);
    n += MAP_KEY_PREFIX;
    out[n++] = 0; /* keys hold no NUL: no plain key looks like this */
    cf_index_hash(NULL, out + n, head, 8, key->data, key->size);
    return n + CF_INDEX_HASH_SIZE;
}

#define ENTRY_KEY_MAX (10 + MAP_KEY_PREFIX + 1 + CF_INDEX_HASH_SIZE)

/* A map entry's stored bytes: key length, key, cell. */
static coffer_status entry_parse(const uint8_t *p, size_t len, coffer_bytes *key, coffer_value *v)
{
    if (len < 4 || cf_get_le(p, 4) > len - 4)
        return cf_error(COFFER_ERR_CORRUPTED, "a map entry is damaged");
    size_t kl = (size_t)cf_get_le(p, 4);
    if (key)
        *key = (coffer_bytes){p + 4, kl};
    return cf_cell_read(p + 4 + kl, len - 4 - kl, v);
}

coffer_status cf_collection_copy_key(const coffer_txn *txn, const uint8_t *key, size_t klen, const uint8_t *value, size_t vlen,
                                     uint8_t *out, size_t *outlen)
{
    if (klen >= 10 && key[0] == TAG_COLLECTION && (key[9] == PART_SET || key[9] == PART_MAP)) {
        uint64_t id = cf_get_be64(key + 1);
        coffer_value v;
        coffer_bytes mk;
        coffer_status st = key[9] == PART_SET ? cf_cell_read(value, vlen, &v) : entry_parse(value, vlen, &mk, &v);
        if (st != COFFER_OK)
            return st;
        *outlen = key[9] == PART_SET ? set_key(txn, id, &v, out) : map_key(txn, id, &mk, out);
        return COFFER_OK;
    }
    if (klen > CF_COLLECTION_KEY_MAX)
        return cf_error(COFFER_ERR_CORRUPTED, "a collection key is damaged");
    memcpy(out, key, klen);
    *outlen = klen;
    return COFFER_OK;
}

static coffer_status entry_put(coffer_txn *txn, uint64_t id, const coffer_bytes *key, const coffer_value *stored)
{
    size_t cl = cf_cell_size(stored), len = 4 + key->size + cl;
    uint8_t *p = malloc(len);
    if (!p)
        return cf_error(COFFER_ERR_NO_MEMORY, "out of memory writing a map");
    cf_put_le(p, key->size, 4);
    memcpy(p + 4, key->data, key->size);
    cf_cell_write(p + 4 + key->size, stored);
    uint8_t k[ENTRY_KEY_MAX];
    size_t kl = map_key(txn, id, key, k);
    coffer_status st = cf_graph_put(txn, k, kl, p, len);
    free(p);
    return st;
}

/* Reads a map entry into a copy owned by *buf; COFFER_ERR_NOT_FOUND if
 * absent. A long key's hash match is confirmed by the stored key. */
static coffer_status entry_get(coffer_txn *txn, uint64_t id, const coffer_bytes *key, uint8_t **buf, size_t *cap, coffer_value *v)
{
    uint8_t k[ENTRY_KEY_MAX];
    size_t kl = map_key(txn, id, key, k);
    const uint8_t *data;
    size_t len;
    coffer_status st = cf_graph_get(txn, k, kl, &data, &len, buf, cap, "a map entry");
    if (st != COFFER_OK)
        return st;
    if (data != *buf) {
        if (len + 1 > *cap) {
            uint8_t *b = realloc(*buf, len + 1);
            if (!b)
                return cf_error(COFFER_ERR_NO_MEMORY, "out of memory reading a map");
            *buf = b;
            *cap = len + 1;
        }
        memcpy(*buf, data, len);
    }
    coffer_bytes stored_key = {0};
    st = entry_parse(*buf, len, &stored_key, v);
    if (st == COFFER_OK && (stored_key.size != key->size || memcmp(stored_key.data, key->data, key->size) != 0))
        return COFFER_ERR_NOT_FOUND;
    return st;
}


/* Writes one element into a set; *added is 0 when it was there. The value
 * is public and checked; it is stored (side effects) only when added. */
static coffer_status set_add(cf_coll *c, const coffer_value *v, int *added)
{
    coffer_txn *txn = c->txn;
    cf_slot s = elem_slot(c);
    coffer_value probe = *v;
    coffer_class_id cls = 0;
    coffer_object_key key = 0;
    *added = 0;
    coffer_status st;
    if (v->type == COFFER_TYPE_LINK || v->type == COFFER_TYPE_OBJECT) {
        st = cf_graph_link_target(txn, &s, v, &cls, &key);
        if (st != COFFER_OK)
            return st;
        probe = cf_stored_link(class_at(txn, cls)->table, key);
    }
    uint8_t k[10 + CF_INDEX_HASH_SIZE];
    size_t kl;
    if (v->type != COFFER_TYPE_FIELDS) {
        kl = set_key(txn, c->id, &probe, k);
        MDB_val mk = {kl, k}, mv;
        int rc = mdb_get(txn->mdb, txn->db->graph_dbi, &mk, &mv);
        if (rc == 0)
            return COFFER_OK;
        if (rc != MDB_NOTFOUND)
            return cf_error_mdb(rc, "cannot read a set");
    }
    coffer_value stored;
    st = cf_graph_store(txn, &s, v, &stored);
    if (st != COFFER_OK)
        return st;
    kl = set_key(txn, c->id, &stored, k);
    size_t cl = cf_cell_size(&stored);
    uint8_t *cell = malloc(cl);
    if (!cell)
        return cf_error(COFFER_ERR_NO_MEMORY, "out of memory writing a set");
    cf_cell_write(cell, &stored);
    MDB_val mk = {kl, k}, mv;
    int rc = mdb_get(txn->mdb, txn->db->graph_dbi, &mk, &mv);
    if (rc == 0) { /* a nested description that upserted an element already there */
        free(cell);
        return cf_graph_release(txn, &s, &stored);
    }
    st = cf_graph_put(txn, k, kl, cell, cl);
    free(cell);
    if (st == COFFER_OK) {
        c->count++;
        *added = 1;
    }
    return st;
}

/* Removes stored-form element `probe`; *removed is 0 when it was absent. */
static coffer_status set_drop(cf_coll *c, const coffer_value *probe, int *removed)
{
    coffer_txn *txn = c->txn;
    uint8_t k[10 + CF_INDEX_HASH_SIZE];
    size_t kl = set_key(txn, c->id, probe, k);
    MDB_val mk = {kl, k}, mv;
    *removed = 0;
    int rc = mdb_get(txn->mdb, txn->db->graph_dbi, &mk, &mv);
    if (rc == MDB_NOTFOUND)
        return COFFER_OK;
    if (rc != 0)
        return cf_error_mdb(rc, "cannot read a set");
    coffer_status st = cf_graph_del(txn, k, kl);
    if (st != COFFER_OK)
        return st;
    cf_slot s = elem_slot(c);
    c->count--;
    *removed = 1;
    return cf_graph_release(txn, &s, probe);
}

/* Positions the handle's cursor on element `index` of a set or map (in key
 * order); sequential reads step instead of seeking. */
static coffer_status coll_seek(cf_coll *c, uint64_t index, MDB_val *k, MDB_val *v)
{
    coffer_txn *txn = c->txn;
    uint8_t prefix[10];
    coll_key(c->id, c->kind == COFFER_COLLECTION_SET ? PART_SET : PART_MAP, prefix);
    if (!c->cursor) {
        coffer_status st = cf_graph_cursor(txn, &c->cursor);
        if (st != COFFER_OK)
            return st;
    }
    int rc;
    if (c->cursor_valid && c->cursor_generation == txn->generation && c->cursor_pos <= index) {
        rc = mdb_cursor_get(c->cursor, k, v, MDB_GET_CURRENT);
        for (uint64_t i = c->cursor_pos; rc == 0 && i < index; i++)
            rc = mdb_cursor_get(c->cursor, k, v, MDB_NEXT);
    } else {
        coffer_status st = cf_graph_first(txn, c->cursor, prefix, sizeof prefix, k, v);
        if (st != COFFER_OK)
            return st == COFFER_DONE ? cf_error(COFFER_ERR_CORRUPTED, "collection %" PRIu64 " holds fewer elements than it counts", c->id)
                                     : st;
        rc = 0;
        for (uint64_t i = 0; rc == 0 && i < index; i++)
            rc = mdb_cursor_get(c->cursor, k, v, MDB_NEXT);
    }
    if (rc != 0 || k->mv_size < sizeof prefix || memcmp(k->mv_data, prefix, sizeof prefix) != 0) {
        c->cursor_valid = 0;
        return rc && rc != MDB_NOTFOUND ? cf_error_mdb(rc, "cannot read a collection")
                                        : cf_error(COFFER_ERR_CORRUPTED, "collection %" PRIu64 " holds fewer elements than it counts", c->id);
    }
    c->cursor_valid = 1;
    c->cursor_pos = index;
    c->cursor_generation = txn->generation;
    return COFFER_OK;
}

/* Opens the element or entry under the cursor into c->buf. */
static coffer_status coll_open_current(cf_coll *c, const MDB_val *k, const MDB_val *v, const uint8_t **data, size_t *len)
{
    coffer_status st = cf_store_open(c->txn, CF_GRAPH_DBI, k, v, data, len, &c->buf, &c->buf_cap, "a collection element");
    if (st != COFFER_OK || *data == c->buf)
        return st;
    if (*len + 1 > c->buf_cap) {
        uint8_t *b = realloc(c->buf, *len + 1);
        if (!b)
            return cf_error(COFFER_ERR_NO_MEMORY, "out of memory reading a collection");
        c->buf = b;
        c->buf_cap = *len + 1;
    }
    memcpy(c->buf, *data, *len);
    *data = c->buf;
    return COFFER_OK;
}

/* ---- whole collections --------------------------------------------------- */

/* Cells accumulated into chunks by a bulk append. */
typedef struct bulk {
    cf_coll *c;
    uint8_t *cells; /* concatenated */
    size_t len, cap;
    slice *slices;
    uint32_t n;
} bulk;

static coffer_status bulk_flush(bulk *b)
{
    if (!b->n)
        return COFFER_OK;
    cf_coll *c = b->c;
    size_t off = 0;
    for (uint32_t i = 0; i < b->n; i++) {
        b->slices[i].p = b->cells + off;
        off += b->slices[i].len;
    }
    coffer_status st = hdr_reserve(c, c->nchunks + 1);
    if (st == COFFER_OK)
        st = chunk_write(c, c->next_chunk, b->slices, b->n);
    if (st != COFFER_OK)
        return st;
    c->chunk_no[c->nchunks] = c->next_chunk++;
    c->count += b->n;
    c->ends[c->nchunks] = (uint32_t)c->count;
    c->nchunks++;
    b->n = 0;
    b->len = 0;
    return COFFER_OK;
}

static coffer_status bulk_add(bulk *b, const coffer_value *stored)
{
    size_t cl = cf_cell_size(stored);
    if (b->n && (b->n == CHUNK_ELEMS || b->len + cl + 4 * ((size_t)b->n + 1) > CHUNK_BYTES)) {
        coffer_status st = bulk_flush(b);
        if (st != COFFER_OK)
            return st;
    }
    if (b->len + cl > b->cap) {
        size_t cap = b->cap ? b->cap : 2048;
        while (cap < b->len + cl)
            cap *= 2;
        uint8_t *p = realloc(b->cells, cap);
        if (!p)
            return cf_error(COFFER_ERR_NO_MEMORY, "out of memory writing a list");
        b->cells = p;
        b->cap = cap;
    }
    cf_cell_write(b->cells + b->len, stored);
    b->slices[b->n++].len = cl;
    b->len += cl;
    return COFFER_OK;
}

static coffer_status map_assign(cf_coll *c, const cf_slot *e, const coffer_bytes *key, const coffer_value *v);

coffer_status cf_collection_create(coffer_txn *txn, const cf_slot *slot, int kind, int depth, const coffer_value *v, uint64_t *id)
{
    cf_coll c;
    coll_tmp(&c, txn, slot, kind, depth, 0);
    coffer_status st = coll_new(&c);
    cf_slot e = elem_slot(&c);
    if (st == COFFER_OK && v && v->type == COFFER_TYPE_LIST && kind == COFFER_COLLECTION_LIST) {
        bulk b = {&c, NULL, 0, 0, malloc(sizeof(slice) * CHUNK_ELEMS), 0};
        if (!b.slices)
            st = cf_error(COFFER_ERR_NO_MEMORY, "out of memory writing a list");
        for (size_t i = 0; st == COFFER_OK && i < v->u.list.count; i++) {
            coffer_value stored;
            st = cf_graph_store(txn, &e, &v->u.list.items[i], &stored);
            if (st == COFFER_OK)
                st = bulk_add(&b, &stored);
        }
        if (st == COFFER_OK)
            st = bulk_flush(&b);
        free(b.cells);
        free(b.slices);
    } else if (st == COFFER_OK && v && v->type == COFFER_TYPE_LIST) {
        for (size_t i = 0; st == COFFER_OK && i < v->u.list.count; i++) {
            int added;
            st = set_add(&c, &v->u.list.items[i], &added);
        }
    } else if (st == COFFER_OK && v && v->type == COFFER_TYPE_MAP) {
        for (size_t i = 0; st == COFFER_OK && i < v->u.map.count; i++)
            st = map_assign(&c, &e, &v->u.map.entries[i].key, &v->u.map.entries[i].value);
    }
    if (st == COFFER_OK && c.count)
        st = hdr_store(&c);
    *id = c.id;
    coll_tmp_free(&c);
    return st;
}

/* Releases every cell of the chunk (and, with `drop`, deletes it). */
static coffer_status release_chunk(cf_coll *c, const cf_slot *e, uint32_t no, int drop)
{
    chunk k;
    coffer_status st = chunk_read(c, no, &k);
    for (uint32_t i = 0; st == COFFER_OK && i < k.n; i++) {
        size_t len;
        const uint8_t *cell = chunk_cell(&k, i, &len);
        coffer_value v;
        st = cf_cell_read(cell, len, &v);
        if (st == COFFER_OK)
            st = cf_graph_release(c->txn, e, &v);
    }
    free(k.data);
    if (st == COFFER_OK && drop) {
        uint8_t key[14];
        chunk_key(c->id, no, key);
        st = cf_graph_del(c->txn, key, sizeof key);
    }
    return st;
}

/* Deletes every element of a set or map, releasing each. */
static coffer_status release_entries(cf_coll *c, const cf_slot *e)
{
    coffer_txn *txn = c->txn;
    uint8_t prefix[10];
    coll_key(c->id, c->kind == COFFER_COLLECTION_SET ? PART_SET : PART_MAP, prefix);
    MDB_cursor *cur;
    coffer_status st = cf_graph_cursor(txn, &cur);
    while (st == COFFER_OK) {
        MDB_val k, v;
        st = cf_graph_first(txn, cur, prefix, sizeof prefix, &k, &v);
        if (st != COFFER_OK)
            break;
        uint8_t key[ENTRY_KEY_MAX];
        size_t klen = k.mv_size <= sizeof key ? k.mv_size : sizeof key;
        memcpy(key, k.mv_data, klen);
        const uint8_t *data;
        size_t len;
        uint8_t *buf = NULL;
        size_t cap = 0;
        st = cf_store_open(txn, CF_GRAPH_DBI, &k, &v, &data, &len, &buf, &cap, "a collection element");
        uint8_t *copy = NULL;
        if (st == COFFER_OK && !buf && !(copy = malloc(len ? len : 1)))
            st = cf_error(COFFER_ERR_NO_MEMORY, "out of memory deleting a collection");
        if (copy)
            memcpy(copy, data, len);
        const uint8_t *bytes = buf ? buf : copy;
        coffer_value val;
        if (st == COFFER_OK)
            st = c->kind == COFFER_COLLECTION_SET ? cf_cell_read(bytes, len, &val) : entry_parse(bytes, len, NULL, &val);
        if (st == COFFER_OK)
            st = cf_graph_del(txn, key, klen);
        if (st == COFFER_OK)
            st = cf_graph_release(txn, e, &val);
        free(buf);
        free(copy);
    }
    mdb_cursor_close(cur);
    return st == COFFER_DONE ? COFFER_OK : st;
}

/* Reads the header of collection `id`, at least `min` bytes of it, into
 * *data (which *buf owns when set; the caller frees *buf). */
static coffer_status hdr_read(coffer_txn *txn, uint64_t id, size_t min, const uint8_t **data, size_t *len, uint8_t **buf)
{
    uint8_t key[10];
    coll_key(id, PART_HEADER, key);
    size_t cap = 0;
    *buf = NULL;
    coffer_status st = tail_flush_id(txn, id);
    if (st == COFFER_OK)
        st = cf_graph_get(txn, key, sizeof key, data, len, buf, &cap, "a collection header");
    if (st == COFFER_OK && *len < min)
        st = cf_error(COFFER_ERR_CORRUPTED, "collection %" PRIu64 " has a damaged header", id);
    return st;
}

/* Reads the kind and depth of collection `id` into a temporary handle. */
static coffer_status coll_open_tmp(coffer_txn *txn, const cf_slot *slot, uint64_t id, cf_coll *c)
{
    const uint8_t *data;
    size_t len;
    uint8_t *buf;
    coffer_status st = hdr_read(txn, id, 2, &data, &len, &buf);
    if (st == COFFER_OK) {
        coll_tmp(c, txn, slot, data[0], data[1], id);
        st = hdr_decode(c, data, len);
        if (st != COFFER_OK)
            coll_tmp_free(c);
    }
    free(buf);
    return st;
}

/* Walks stored collection `id` (0 for none) in a temporary handle: `fn`
 * gets the handle and its element slot. Nothing to do when it is gone. */
typedef coffer_status (*coll_walk)(cf_coll *c, const cf_slot *e, const void *arg);

static coffer_status walk_stored(coffer_txn *txn, const cf_slot *slot, uint64_t id, coll_walk fn, const void *arg)
{
    if (!id)
        return COFFER_OK;
    cf_coll c;
    coffer_status st = coll_open_tmp(txn, slot, id, &c);
    if (st != COFFER_OK)
        return st == COFFER_ERR_NOT_FOUND ? COFFER_OK : st;
    cf_slot e = elem_slot(&c);
    st = fn(&c, &e, arg);
    coll_tmp_free(&c);
    return st;
}

/* Releases every element, then the header. */
static coffer_status delete_elements(cf_coll *c, const cf_slot *e, const void *arg)
{
    (void)arg;
    coffer_status st = COFFER_OK;
    if (c->kind == COFFER_COLLECTION_LIST) {
        for (uint32_t j = 0; st == COFFER_OK && j < c->nchunks; j++)
            st = release_chunk(c, e, c->chunk_no[j], 1);
    } else {
        st = release_entries(c, e);
    }
    if (st == COFFER_OK) {
        uint8_t key[10];
        coll_key(c->id, PART_HEADER, key);
        st = cf_graph_del(c->txn, key, sizeof key);
    }
    return st;
}

coffer_status cf_collection_delete(coffer_txn *txn, const cf_slot *slot, uint64_t id)
{
    return walk_stored(txn, slot, id, delete_elements, NULL);
}

/* The object whose links cf_collection_unlink drops, and the collection
 * that is its property's own (0: none), whose operations the change log
 * names without a collection id. */
typedef struct link_target {
    uint32_t table;
    coffer_object_key key;
    uint64_t own_id;
} link_target;

static int is_target(const coffer_value *v, const link_target *t)
{
    return v->type == COFFER_TYPE_LINK && v->u.link.class_id == t->table && v->u.link.key == t->key;
}

/* Removes the target's links from a list, and from the collections nested
 * in it. */
static coffer_status unlink_list(cf_coll *c, const cf_slot *e, const link_target *t)
{
    coffer_status st = COFFER_OK;
    /* Chunks from the last, cells from the last: a removal never moves
     * what is still to be visited. */
    for (uint32_t j = c->nchunks; st == COFFER_OK && j-- > 0;) {
        chunk k;
        st = chunk_read(c, c->chunk_no[j], &k);
        uint64_t start = chunk_start(c, j);
        for (uint32_t i = k.n; st == COFFER_OK && i-- > 0;) {
            size_t len;
            const uint8_t *cell = chunk_cell(&k, i, &len);
            coffer_value v;
            st = cf_cell_read(cell, len, &v);
            if (st != COFFER_OK)
                break;
            if (is_target(&v, t)) {
                st = list_splice(c, start + i, 1, NULL, 0);
                if (st == COFFER_OK)
                    st = cf_graph_release(c->txn, e, &v);
                /* Observers of the list see the element go at the position
                 * it had then (later ones were removed first). */
                if (st == COFFER_OK) {
                    const cf_class *cl = class_at(c->txn, c->cls);
                    st = cf_log_collection_op(c->txn, cl->table, cl->props[c->prop].column, c->okey,
                                              c->id == t->own_id ? 0 : c->id, CF_COLL_ERASE, start + i, 0);
                }
            } else if (v.type == COFFER_TYPE_LIST || v.type == COFFER_TYPE_MAP) {
                st = cf_collection_unlink(c->txn, e, v.u.link.key, 0, t->table, t->key);
            }
        }
        free(k.data);
    }
    return st;
}

/* Removes the target from a set (a set holds no nested collections). */
static coffer_status unlink_set(cf_coll *c, const link_target *t)
{
    coffer_value probe = cf_stored_link(t->table, t->key);
    int removed;
    coffer_status st = set_drop(c, &probe, &removed);
    if (st == COFFER_OK && removed)
        st = hdr_store(c);
    return st;
}

/* Sets the map's entries that link to the target to null, and unlinks the
 * collections nested in it. */
static coffer_status unlink_map(cf_coll *c, const cf_slot *e, const link_target *t)
{
    coffer_txn *txn = c->txn;
    uint8_t prefix[10];
    coll_key(c->id, PART_MAP, prefix);
    MDB_cursor *cur;
    coffer_status st = cf_graph_cursor(txn, &cur);
    MDB_val k, v;
    if (st == COFFER_OK)
        st = cf_graph_first(txn, cur, prefix, sizeof prefix, &k, &v);
    while (st == COFFER_OK) {
        uint8_t key[ENTRY_KEY_MAX];
        size_t klen = k.mv_size <= sizeof key ? k.mv_size : sizeof key;
        memcpy(key, k.mv_data, klen);
        const uint8_t *data;
        size_t len;
        st = coll_open_current(c, &k, &v, &data, &len);
        coffer_bytes ekey = {0};
        coffer_value val;
        if (st == COFFER_OK)
            st = entry_parse(data, len, &ekey, &val);
        if (st != COFFER_OK)
            break;
        if (is_target(&val, t)) {
            uint8_t *kcopy = malloc(ekey.size ? ekey.size : 1);
            if (!kcopy) {
                st = cf_error(COFFER_ERR_NO_MEMORY, "out of memory updating a map");
                break;
            }
            memcpy(kcopy, ekey.data, ekey.size);
            coffer_bytes kb = {kcopy, ekey.size};
            coffer_value null = {.type = COFFER_TYPE_NULL};
            st = entry_put(txn, c->id, &kb, &null);
            if (st == COFFER_OK)
                st = cf_graph_release(txn, e, &val);
            free(kcopy);
        } else if (val.type == COFFER_TYPE_LIST || val.type == COFFER_TYPE_MAP) {
            st = cf_collection_unlink(txn, e, val.u.link.key, 0, t->table, t->key);
        }
        if (st != COFFER_OK)
            break;
        /* Writes may move the cursor: find our place again. */
        k = (MDB_val){klen, key};
        int rc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE);
        if (rc == 0 && k.mv_size == klen && memcmp(k.mv_data, key, klen) == 0)
            rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT);
        if (rc == MDB_NOTFOUND || (rc == 0 && (k.mv_size < sizeof prefix || memcmp(k.mv_data, prefix, sizeof prefix) != 0)))
            st = COFFER_DONE;
        else if (rc != 0)
            st = cf_error_mdb(rc, "cannot read a map");
    }
    if (cur)
        mdb_cursor_close(cur);
    c->cursor = NULL;
    return st == COFFER_DONE ? COFFER_OK : st;
}

static coffer_status unlink_elements(cf_coll *c, const cf_slot *e, const void *arg)
{
    const link_target *t = arg;
    if (c->kind == COFFER_COLLECTION_LIST)
        return unlink_list(c, e, t);
    return c->kind == COFFER_COLLECTION_SET ? unlink_set(c, t) : unlink_map(c, e, t);
}

coffer_status cf_collection_unlink(coffer_txn *txn, const cf_slot *slot, uint64_t id, int own, uint32_t ttable,
                                   coffer_object_key tkey)
{
    link_target t = {ttable, tkey, own ? id : 0};
    return walk_stored(txn, slot, id, unlink_elements, &t);
}

coffer_status cf_collection_count(coffer_txn *txn, uint64_t id, uint64_t *out)
{
    *out = 0;
    if (!id)
        return COFFER_OK;
    const uint8_t *data;
    size_t len;
    uint8_t *buf;
    coffer_status st = hdr_read(txn, id, HEADER_FIXED, &data, &len, &buf);
    if (st == COFFER_OK)
        *out = cf_get_le(data + 20, 8);
    free(buf);
    return st == COFFER_ERR_NOT_FOUND ? COFFER_OK : st;
}

static coffer_status map_assign(cf_coll *c, const cf_slot *e, const coffer_bytes *key, const coffer_value *v)
{
    coffer_txn *txn = c->txn;
    uint8_t *buf = NULL;
    size_t cap = 0;
    coffer_value old;
    coffer_status st = entry_get(txn, c->id, key, &buf, &cap, &old);
    int existed = st == COFFER_OK;
    if (st == COFFER_ERR_NOT_FOUND)
        st = COFFER_OK;
    coffer_value stored;
    if (st == COFFER_OK)
        st = cf_graph_store(txn, e, v, &stored);
    if (st == COFFER_OK)
        st = entry_put(txn, c->id, key, &stored);
    if (st == COFFER_OK && existed)
        st = cf_graph_release(txn, e, &old);
    else if (st == COFFER_OK)
        c->count++;
    free(buf);
    return st;
}

/* ---- handles ------------------------------------------------------------- */

static cf_coll *coll_alloc(coffer_txn *txn, int kind)
{
    cf_coll *c = cf_pool_take(&txn->colls, sizeof *c, "out of memory opening a collection");
    if (!c)
        return NULL;
    /* A reused handle starts as a new one, keeping its pool links and buffers
     * (its cursor was closed on release). */
    *c = (cf_coll){.pool = c->pool, .buf = c->buf, .buf_cap = c->buf_cap,
                   .chunk_no = c->chunk_no, .ends = c->ends, .chunk_cap = c->chunk_cap,
                   .rchunk = c->rchunk, .rchunk_cap = c->rchunk_cap,
                   .magic = CF_COLL_MAGIC, .txn = txn, .kind = kind, .in_use = 1, .policy = COFFER_UPDATE_ERROR};
    return c;
}

static void coll_release(cf_coll *c, int kind)
{
    if (!c || c->magic != CF_COLL_MAGIC || !c->in_use || c->kind != kind)
        return;
    c->in_use = 0;
    c->loaded = 0;
    if (c->cursor) {
        mdb_cursor_close(c->cursor);
        c->cursor = NULL;
    }
    cf_pool_give(&c->txn->colls, c);
}

static const char *kind_name(int kind)
{
    return kind == COFFER_COLLECTION_LIST ? "list" : kind == COFFER_COLLECTION_SET ? "set" : "map";
}

/* Checks a handle (of the expected kind) and loads its header. */
static coffer_status coll_use(cf_coll *c, int kind, int write)
{
    if (!c || c->magic != CF_COLL_MAGIC || !c->in_use || c->kind != kind)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "%s handle is NULL, released or not a %s", kind_name(kind), kind_name(kind));
    coffer_status st = cf_txn_check(c->txn, write);
    if (st == COFFER_OK)
        st = coll_load(c);
    return st;
}

/* The element count of a handle of the expected kind; `fn` names the call. */
static coffer_status coll_count(cf_coll *c, int kind, const char *fn, uint64_t *out)
{
    if (!out)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "%s: out is NULL", fn);
    coffer_status st = coll_use(c, kind, 0);
    if (st == COFFER_OK)
        *out = c->count;
    return st;
}

static coffer_status open_property(coffer_object *obj, coffer_property_id prop, int kind, cf_coll **out)
{
    if (!out)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "out is NULL");
    *out = NULL;
    if (!obj || obj->magic != CF_OBJ_MAGIC || !obj->in_use)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "object handle is NULL, released or not an object");
    coffer_txn *txn = obj->txn;
    coffer_status st = cf_txn_check(txn, 0);
    if (st != COFFER_OK)
        return st;
    const cf_class *c = class_at(txn, obj->cls);
    if (prop >= c->nprops)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "class '%s' has no property with id %u (it has %zu)", c->name, prop, c->nprops);
    uint64_t id;
    int k, depth;
    st = cf_object_collection(txn, obj->cls, obj->key, prop, 0, &id, &k, &depth);
    if (st != COFFER_OK)
        return st;
    if (k != kind)
        return cf_error(COFFER_ERR_TYPE, "class '%s', property '%s' does not hold a %s", c->name, c->props[prop].name, kind_name(kind));
    cf_coll *h = coll_alloc(txn, kind);
    if (!h)
        return COFFER_ERR_NO_MEMORY;
    h->cls = obj->cls;
    h->prop = prop;
    h->okey = obj->key;
    h->depth = depth;
    h->id = id;
    *out = h;
    return COFFER_OK;
}

COFFER_API coffer_status coffer_object_get_list(coffer_object *obj, coffer_property_id prop, coffer_list **out)
{
    return open_property(obj, prop, COFFER_COLLECTION_LIST, (cf_coll **)out);
}

COFFER_API coffer_status coffer_object_get_set(coffer_object *obj, coffer_property_id prop, coffer_set **out)
{
    return open_property(obj, prop, COFFER_COLLECTION_SET, (cf_coll **)out);
}

COFFER_API coffer_status coffer_object_get_map(coffer_object *obj, coffer_property_id prop, coffer_map **out)
{
    return open_property(obj, prop, COFFER_COLLECTION_MAP, (cf_coll **)out);
}

/* Opens the collection nested in stored value `v` of handle `parent`. */
static coffer_status open_nested(cf_coll *parent, const coffer_value *v, int kind, const char *at, cf_coll **out)
{
    int want = kind == COFFER_COLLECTION_LIST ? COFFER_TYPE_LIST : COFFER_TYPE_MAP;
    if ((int)v->type != want) {
        char w[200];
        cf_slot s = {.cls = parent->cls, .prop = parent->prop};
        return cf_error(COFFER_ERR_TYPE, "%s: %s holds %s, not a %s", cf_slot_where(parent->txn, &s, w, sizeof w), at,
                        coffer_type_name(v->type), kind_name(kind));
    }
    cf_coll *h = coll_alloc(parent->txn, kind);
    if (!h)
        return COFFER_ERR_NO_MEMORY;
    h->cls = parent->cls;
    h->prop = parent->prop;
    h->okey = parent->okey;
    h->nested = 1;
    h->depth = parent->depth + 1;
    h->id = v->u.link.key;
    *out = h;
    return COFFER_OK;
}

static coffer_status index_error(uint64_t index, uint64_t count, const char *what)
{
    return cf_error(COFFER_ERR_INVALID_ARGUMENT, "index %" PRIu64 " is out of range: the %s has %" PRIu64 " element%s", index, what,
                    count, count == 1 ? "" : "s");
}

/* ---- lists --------------------------------------------------------------- */

#define LIST(l) ((cf_coll *)(l))

COFFER_API coffer_status coffer_list_count(coffer_list *list, uint64_t *out)
{
    return coll_count(LIST(list), COFFER_COLLECTION_LIST, "coffer_list_count", out);
}

static coffer_status list_at(cf_coll *c, uint64_t index, coffer_value *stored)
{
    if (index >= c->count)
        return index_error(index, c->count, "list");
    return list_read(c, index, stored);
}

static coffer_status entry_at(cf_coll *c, uint64_t index, coffer_bytes *key, coffer_value *v);

/* Element `index` of a list or set, in public form; `fn` names the call. */
static inline coffer_status coll_get(cf_coll *c, int kind, const char *fn, uint64_t index, coffer_value *out)
{
    if (!out)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "%s: out is NULL", fn);
    coffer_status st = coll_use(c, kind, 0);
    if (st == COFFER_OK)
        st = kind == COFFER_COLLECTION_LIST ? list_at(c, index, out) : entry_at(c, index, NULL, out);
    if (st == COFFER_OK)
        st = cf_graph_public(c->txn, out);
    return st;
}

COFFER_API coffer_status coffer_list_get(coffer_list *list, uint64_t index, coffer_value *out)
{
    return coll_get(LIST(list), COFFER_COLLECTION_LIST, "coffer_list_get", index, out);
}

static coffer_status list_get_nested(coffer_list *list, uint64_t index, int kind, cf_coll **out)
{
    cf_coll *c = LIST(list);
    if (!out)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "out is NULL");
    *out = NULL;
    coffer_value v;
    coffer_status st = coll_use(c, COFFER_COLLECTION_LIST, 0);
    if (st == COFFER_OK)
        st = list_at(c, index, &v);
    char at[64];
    snprintf(at, sizeof at, "list element %" PRIu64, index);
    return st == COFFER_OK ? open_nested(c, &v, kind, at, out) : st;
}

COFFER_API coffer_status coffer_list_get_list(coffer_list *list, uint64_t index, coffer_list **out)
{
    return list_get_nested(list, index, COFFER_COLLECTION_LIST, (cf_coll **)out);
}

COFFER_API coffer_status coffer_list_get_map(coffer_list *list, uint64_t index, coffer_map **out)
{
    return list_get_nested(list, index, COFFER_COLLECTION_MAP, (cf_coll **)out);
}

/* A copy of a stored cell, for values that must outlive the next read. */
typedef struct cell_copy {
    uint8_t *p;
    size_t len;
    coffer_value v;
} cell_copy;

static coffer_status copy_cell(const coffer_value *stored, cell_copy *out)
{
    out->len = cf_cell_size(stored);
    out->p = malloc(out->len);
    if (!out->p)
        return cf_error(COFFER_ERR_NO_MEMORY, "out of memory");
    cf_cell_write(out->p, stored);
    return cf_cell_read(out->p, out->len, &out->v);
}

/* Checks public value `v` for collection `c`; nothing is written. */
static coffer_status check_element(cf_coll *c, const coffer_value *v)
{
    if (!v)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "value is NULL");
    cf_slot e = elem_slot(c);
    return cf_graph_check(c->txn, &e, v);
}

/* Stores checked value `v` for list `c`, giving its cell. */
static coffer_status store_cell(cf_coll *c, const coffer_value *v, cell_copy *out)
{
    cf_slot e = elem_slot(c);
    coffer_value stored;
    coffer_status st = cf_graph_store(c->txn, &e, v, &stored);
    if (st == COFFER_OK)
        st = copy_cell(&stored, out);
    return st;
}

/* Copies element `index` of a loaded list, so that writes cannot move it;
 * the caller frees out->p even on failure. */
static coffer_status list_copy_at(cf_coll *c, uint64_t index, cell_copy *out)
{
    coffer_value v;
    coffer_status st = list_at(c, index, &v);
    return st == COFFER_OK ? copy_cell(&v, out) : st;
}

/* Releases what stored element `v`, just dropped from `c`, held. */
static coffer_status release_element(cf_coll *c, const coffer_value *v)
{
    cf_slot e = elem_slot(c);
    return cf_graph_release(c->txn, &e, v);
}

/* Ends a write on a collection: a failure after the first write leaves
 * the transaction half-changed, so only abort remains. */
static coffer_status coll_finish(cf_coll *c, coffer_status st)
{
    if (st == COFFER_OK) {
        /* The owner's property changed: its observers and those of results
         * holding it hear of it. */
        const cf_class *cl = &c->txn->db->schema->classes[c->cls];
        st = cf_log_object_change(c->txn, cl->table, c->okey, CF_LOG_MODIFY, cl->props[c->prop].column);
    }
    if (st != COFFER_OK)
        c->txn->failed = 1;
    coll_wrote(c);
    return st;
}

/* As coll_finish, and records list operation `op` (CF_COLL_*) in the change
 * log, positions as they were when it was made. */
static coffer_status list_finish(cf_coll *c, coffer_status st, uint32_t op, uint64_t a, uint64_t b)
{
    if (st == COFFER_OK) {
        const cf_class *cl = &c->txn->db->schema->classes[c->cls];
        st = cf_log_collection_op(c->txn, cl->table, cl->props[c->prop].column, c->okey, c->nested ? c->id : 0, op, a, b);
    }
    return coll_finish(c, st);
}

/* Stores checked value `value` and writes it at `index` of a loaded list,
 * in place of `remove` (0 or 1) elements. An append to a list that has a
 * chunk goes through the transaction's tail. */
static coffer_status list_put(cf_coll *c, uint64_t index, int remove, const coffer_value *value)
{
    if (!remove && index == c->count && c->id && c->nchunks) {
        cf_slot e = elem_slot(c);
        coffer_value stored;
        uint8_t small[64], *cell = small;
        size_t cl = 0;
        coffer_status st = cf_graph_store(c->txn, &e, value, &stored);
        if (st == COFFER_OK) {
            cl = cf_cell_size(&stored);
            if (cl > sizeof small && !(cell = malloc(cl)))
                st = cf_error(COFFER_ERR_NO_MEMORY, "out of memory writing a list");
        }
        if (st == COFFER_OK) {
            cf_cell_write(cell, &stored);
            st = coll_load(c); /* storing may have written */
        }
        if (st == COFFER_OK)
            st = c->id && c->nchunks ? tail_append(c, cell, cl) : list_splice(c, c->count, 0, cell, cl);
        if (cell != small)
            free(cell);
        return st;
    }
    cell_copy cell = {0};
    coffer_status st = store_cell(c, value, &cell);
    if (st == COFFER_OK)
        st = coll_load(c); /* storing may have written */
    if (st == COFFER_OK)
        st = list_splice(c, index, remove, cell.p, cell.len);
    free(cell.p);
    return st;
}

COFFER_API coffer_status coffer_list_insert(coffer_list *list, uint64_t index, const coffer_value *value)
{
    cf_coll *c = LIST(list);
    coffer_status st = coll_use(c, COFFER_COLLECTION_LIST, 1);
    if (st == COFFER_OK && index > c->count)
        return index_error(index, c->count, "list");
    if (st == COFFER_OK)
        st = check_element(c, value);
    return st == COFFER_OK ? list_finish(c, list_put(c, index, 0, value), CF_COLL_INSERT, index, 0) : st;
}

COFFER_API coffer_status coffer_list_append(coffer_list *list, const coffer_value *value)
{
    coffer_status st = coll_use(LIST(list), COFFER_COLLECTION_LIST, 1);
    return st == COFFER_OK ? coffer_list_insert(list, LIST(list)->count, value) : st;
}

/* The list edits below first copy the elements they move or drop (reads
 * fail without writing), then write and finish (see coll_finish). */

COFFER_API coffer_status coffer_list_set(coffer_list *list, uint64_t index, const coffer_value *value)
{
    cf_coll *c = LIST(list);
    cell_copy prev = {0};
    coffer_status st = coll_use(c, COFFER_COLLECTION_LIST, 1);
    if (st == COFFER_OK)
        st = list_copy_at(c, index, &prev);
    if (st == COFFER_OK)
        st = check_element(c, value);
    if (st == COFFER_OK) {
        st = list_put(c, index, 1, value);
        if (st == COFFER_OK)
            st = release_element(c, &prev.v);
        st = list_finish(c, st, CF_COLL_SET, index, 0);
    }
    free(prev.p);
    return st;
}

COFFER_API coffer_status coffer_list_remove(coffer_list *list, uint64_t index)
{
    cf_coll *c = LIST(list);
    cell_copy prev = {0};
    coffer_status st = coll_use(c, COFFER_COLLECTION_LIST, 1);
    if (st == COFFER_OK)
        st = list_copy_at(c, index, &prev);
    if (st == COFFER_OK) {
        st = list_splice(c, index, 1, NULL, 0);
        if (st == COFFER_OK)
            st = release_element(c, &prev.v);
        st = list_finish(c, st, CF_COLL_ERASE, index, 0);
    }
    free(prev.p);
    return st;
}

COFFER_API coffer_status coffer_list_move(coffer_list *list, uint64_t from, uint64_t to)
{
    cf_coll *c = LIST(list);
    cell_copy cell = {0};
    coffer_status st = coll_use(c, COFFER_COLLECTION_LIST, 1);
    if (st == COFFER_OK && to >= c->count)
        return index_error(to, c->count, "list");
    if (st == COFFER_OK)
        st = list_copy_at(c, from, &cell);
    if (st == COFFER_OK && from != to) {
        st = list_splice(c, from, 1, NULL, 0);
        if (st == COFFER_OK)
            st = list_splice(c, to, 0, cell.p, cell.len);
        st = list_finish(c, st, CF_COLL_MOVE, from, to);
    }
    free(cell.p);
    return st;
}

COFFER_API coffer_status coffer_list_swap(coffer_list *list, uint64_t a, uint64_t b)
{
    cf_coll *c = LIST(list);
    cell_copy ca = {0}, cb = {0};
    coffer_status st = coll_use(c, COFFER_COLLECTION_LIST, 1);
    if (st == COFFER_OK)
        st = list_copy_at(c, a, &ca);
    if (st == COFFER_OK)
        st = list_copy_at(c, b, &cb);
    if (st == COFFER_OK && a != b) {
        st = list_splice(c, a, 1, cb.p, cb.len);
        if (st == COFFER_OK)
            st = list_splice(c, b, 1, ca.p, ca.len);
        st = list_finish(c, st, CF_COLL_SWAP, a, b);
    }
    free(ca.p);
    free(cb.p);
    return st;
}

COFFER_API coffer_status coffer_list_clear(coffer_list *list)
{
    cf_coll *c = LIST(list);
    coffer_status st = coll_use(c, COFFER_COLLECTION_LIST, 1);
    if (st != COFFER_OK || c->id == 0)
        return st;
    cf_slot e = elem_slot(c);
    uint64_t before = c->count;
    st = tail_flush_id(c->txn, c->id);
    for (uint32_t j = 0; st == COFFER_OK && j < c->nchunks; j++)
        st = release_chunk(c, &e, c->chunk_no[j], 1);
    if (st == COFFER_OK) {
        c->nchunks = 0;
        c->count = 0;
        st = hdr_store(c);
    }
    return list_finish(c, st, CF_COLL_CLEAR, before, 0);
}

COFFER_API int coffer_list_is_valid(coffer_list *list)
{
    return coll_use(LIST(list), COFFER_COLLECTION_LIST, 0) == COFFER_OK;
}

COFFER_API void coffer_list_release(coffer_list *list) { coll_release(LIST(list), COFFER_COLLECTION_LIST); }

/* ---- sets ---------------------------------------------------------------- */

#define SET(s) ((cf_coll *)(s))

COFFER_API coffer_status coffer_set_count(coffer_set *set, uint64_t *out)
{
    return coll_count(SET(set), COFFER_COLLECTION_SET, "coffer_set_count", out);
}

/* Reads element `index` of a loaded set or map into stored form (and, for
 * a map, its key). */
static coffer_status entry_at(cf_coll *c, uint64_t index, coffer_bytes *key, coffer_value *v)
{
    if (index >= c->count)
        return index_error(index, c->count, kind_name(c->kind));
    MDB_val k, mv;
    const uint8_t *data;
    size_t len;
    coffer_status st = coll_seek(c, index, &k, &mv);
    if (st == COFFER_OK)
        st = coll_open_current(c, &k, &mv, &data, &len);
    if (st != COFFER_OK)
        return st;
    return c->kind == COFFER_COLLECTION_SET ? cf_cell_read(data, len, v) : entry_parse(data, len, key, v);
}

COFFER_API coffer_status coffer_set_get(coffer_set *set, uint64_t index, coffer_value *out)
{
    return coll_get(SET(set), COFFER_COLLECTION_SET, "coffer_set_get", index, out);
}

/* The stored form of a value looked up in a set: links become table and
 * key; nested descriptions cannot be looked up. */
static coffer_status set_probe(cf_coll *c, const coffer_value *v, coffer_value *probe, int *absent)
{
    *absent = 0;
    if (!v)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "value is NULL");
    cf_slot e = elem_slot(c);
    char w[200];
    if (v->type == COFFER_TYPE_FIELDS)
        return cf_error(COFFER_ERR_TYPE, "%s: a set is searched by value, not by a nested object description", cf_slot_where(c->txn, &e, w, sizeof w));
    coffer_status st = cf_graph_check(c->txn, &e, v);
    if (st == COFFER_ERR_NOT_FOUND && (v->type == COFFER_TYPE_LINK || v->type == COFFER_TYPE_OBJECT)) {
        *absent = 1; /* a deleted object is in no set */
        return COFFER_OK;
    }
    if (st != COFFER_OK)
        return st;
    *probe = *v;
    if (v->type == COFFER_TYPE_LINK || v->type == COFFER_TYPE_OBJECT) {
        coffer_class_id cls = 0;
        coffer_object_key key = 0;
        st = cf_graph_link_target(c->txn, &e, v, &cls, &key);
        if (st == COFFER_OK)
            *probe = cf_stored_link(class_at(c->txn, cls)->table, key);
    }
    return st;
}

COFFER_API coffer_status coffer_set_contains(coffer_set *set, const coffer_value *value, int *found)
{
    cf_coll *c = SET(set);
    if (!found)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "coffer_set_contains: found is NULL");
    *found = 0;
    coffer_status st = coll_use(c, COFFER_COLLECTION_SET, 0);
    coffer_value probe;
    int absent;
    if (st == COFFER_OK)
        st = set_probe(c, value, &probe, &absent);
    if (st != COFFER_OK || absent || c->id == 0)
        return st;
    uint8_t k[10 + CF_INDEX_HASH_SIZE];
    size_t kl = set_key(c->txn, c->id, &probe, k);
    MDB_val mk = {kl, k}, mv;
    int rc = mdb_get(c->txn->mdb, c->txn->db->graph_dbi, &mk, &mv);
    if (rc != 0 && rc != MDB_NOTFOUND)
        return cf_error_mdb(rc, "cannot read a set");
    *found = rc == 0;
    return COFFER_OK;
}

COFFER_API coffer_status coffer_set_insert(coffer_set *set, const coffer_value *value, int *inserted)
{
    cf_coll *c = SET(set);
    if (inserted)
        *inserted = 0;
    coffer_status st = coll_use(c, COFFER_COLLECTION_SET, 1);
    if (st == COFFER_OK)
        st = check_element(c, value);
    if (st != COFFER_OK)
        return st;
    int added = 0;
    st = coll_materialize(c);
    if (st == COFFER_OK)
        st = set_add(c, value, &added);
    if (st == COFFER_OK && added)
        st = hdr_store(c);
    if (inserted)
        *inserted = added;
    return coll_finish(c, st);
}

COFFER_API coffer_status coffer_set_remove(coffer_set *set, const coffer_value *value, int *removed)
{
    cf_coll *c = SET(set);
    if (removed)
        *removed = 0;
    coffer_status st = coll_use(c, COFFER_COLLECTION_SET, 1);
    coffer_value probe;
    int absent = 0, gone = 0;
    if (st == COFFER_OK)
        st = set_probe(c, value, &probe, &absent);
    if (st != COFFER_OK || absent || c->id == 0)
        return st;
    st = set_drop(c, &probe, &gone);
    if (st == COFFER_OK && gone)
        st = hdr_store(c);
    if (removed)
        *removed = gone;
    return coll_finish(c, st);
}

/* Empties a set or map. */
static coffer_status clear_entries(cf_coll *c, int kind)
{
    coffer_status st = coll_use(c, kind, 1);
    if (st != COFFER_OK || c->id == 0)
        return st;
    cf_slot e = elem_slot(c);
    uint64_t before = c->count;
    st = release_entries(c, &e);
    if (st == COFFER_OK) {
        c->count = 0;
        st = hdr_store(c);
    }
    /* Observers of the set or map tell a clear from removals. */
    if (st == COFFER_OK) {
        const cf_class *cl = class_at(c->txn, c->cls);
        st = cf_log_collection_op(c->txn, cl->table, cl->props[c->prop].column, c->okey, c->nested ? c->id : 0,
                                  CF_COLL_CLEAR, before, 0);
    }
    return coll_finish(c, st);
}

COFFER_API coffer_status coffer_set_clear(coffer_set *set) { return clear_entries(SET(set), COFFER_COLLECTION_SET); }

/* Copies every element of set `c` (stored form) so that writes cannot move
 * them. */
typedef struct elements {
    cell_copy *items;
    size_t n;
} elements;

static void elements_free(elements *e)
{
    for (size_t i = 0; i < e->n; i++)
        free(e->items[i].p);
    free(e->items);
}

static coffer_status collect(cf_coll *c, elements *out)
{
    out->items = calloc(c->count ? c->count : 1, sizeof *out->items);
    out->n = 0;
    if (!out->items)
        return cf_error(COFFER_ERR_NO_MEMORY, "out of memory reading a set");
    for (uint64_t i = 0; i < c->count; i++) {
        coffer_value v;
        coffer_status st = entry_at(c, i, NULL, &v);
        if (st == COFFER_OK)
            st = copy_cell(&v, &out->items[out->n]);
        if (st != COFFER_OK)
            return st;
        out->n++;
    }
    return COFFER_OK;
}

static coffer_status check_same_kind(cf_coll *a, cf_coll *b)
{
    coffer_status st = coll_use(b, COFFER_COLLECTION_SET, 0);
    if (st != COFFER_OK)
        return st;
    if (b->txn != a->txn)
        return cf_error(COFFER_ERR_MISUSE, "the other set belongs to another transaction");
    const cf_prop *pa = &class_at(a->txn, a->cls)->props[a->prop], *pb = &class_at(b->txn, b->cls)->props[b->prop];
    if (pa->type != pb->type || (pa->type == COFFER_TYPE_LINK && pa->target != pb->target))
        return cf_error(COFFER_ERR_TYPE, "sets '%s.%s' and '%s.%s' hold different types", class_at(a->txn, a->cls)->name, pa->name,
                        class_at(b->txn, b->cls)->name, pb->name);
    return COFFER_OK;
}

enum { SET_UNION, SET_INTERSECT, SET_SUBTRACT };

static coffer_status set_combine(coffer_set *set, coffer_set *other, int op)
{
    cf_coll *c = SET(set), *o = SET(other);
    coffer_status st = coll_use(c, COFFER_COLLECTION_SET, 1);
    if (st == COFFER_OK)
        st = check_same_kind(c, o);
    if (st != COFFER_OK)
        return st;
    if (c == o)
        return op == SET_SUBTRACT ? coffer_set_clear(set) : COFFER_OK;
    elements mine = {0}, theirs = {0};
    st = collect(o, &theirs);
    if (st == COFFER_OK && op == SET_INTERSECT)
        st = collect(c, &mine);
    if (st != COFFER_OK) {
        elements_free(&mine);
        elements_free(&theirs);
        return st;
    }
    st = coll_materialize(c);
    for (size_t i = 0; st == COFFER_OK && op == SET_UNION && i < theirs.n; i++) {
        coffer_value v = theirs.items[i].v;
        int added;
        st = cf_graph_public(c->txn, &v);
        if (st == COFFER_OK)
            st = set_add(c, &v, &added);
    }
    for (size_t i = 0; st == COFFER_OK && op == SET_SUBTRACT && i < theirs.n; i++) {
        int gone;
        st = set_drop(c, &theirs.items[i].v, &gone);
    }
    for (size_t i = 0; st == COFFER_OK && op == SET_INTERSECT && i < mine.n; i++) {
        uint8_t k[10 + CF_INDEX_HASH_SIZE];
        size_t kl = set_key(c->txn, o->id, &mine.items[i].v, k);
        MDB_val mk = {kl, k}, mv;
        int rc = o->id ? mdb_get(c->txn->mdb, c->txn->db->graph_dbi, &mk, &mv) : MDB_NOTFOUND;
        int gone;
        if (rc == MDB_NOTFOUND)
            st = set_drop(c, &mine.items[i].v, &gone);
        else if (rc != 0)
            st = cf_error_mdb(rc, "cannot read a set");
    }
    if (st == COFFER_OK)
        st = hdr_store(c);
    elements_free(&mine);
    elements_free(&theirs);
    return coll_finish(c, st);
}

COFFER_API coffer_status coffer_set_union(coffer_set *set, coffer_set *other) { return set_combine(set, other, SET_UNION); }
COFFER_API coffer_status coffer_set_intersect(coffer_set *set, coffer_set *other) { return set_combine(set, other, SET_INTERSECT); }
COFFER_API coffer_status coffer_set_subtract(coffer_set *set, coffer_set *other) { return set_combine(set, other, SET_SUBTRACT); }

COFFER_API int coffer_set_is_valid(coffer_set *set) { return coll_use(SET(set), COFFER_COLLECTION_SET, 0) == COFFER_OK; }
COFFER_API void coffer_set_release(coffer_set *set) { coll_release(SET(set), COFFER_COLLECTION_SET); }

/* ---- maps ---------------------------------------------------------------- */

#define MAP(m) ((cf_coll *)(m))

static coffer_status key_arg(cf_coll *c, const char *key, size_t size, coffer_bytes *out)
{
    if (!key && size && size != SIZE_MAX)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "map key is NULL");
    *out = (coffer_bytes){key ? key : "", size == SIZE_MAX ? (key ? strlen(key) : 0) : size};
    cf_slot e = elem_slot(c);
    return cf_map_key_check(c->txn, &e, out);
}

COFFER_API coffer_status coffer_map_count(coffer_map *map, uint64_t *out)
{
    return coll_count(MAP(map), COFFER_COLLECTION_MAP, "coffer_map_count", out);
}

/* Looks up `key` in a loaded map: stored form borrowing c->buf. */
static coffer_status map_lookup(cf_coll *c, const coffer_bytes *key, coffer_value *v)
{
    if (c->id == 0)
        return COFFER_ERR_NOT_FOUND;
    return entry_get(c->txn, c->id, key, &c->buf, &c->buf_cap, v);
}

static coffer_status key_missing(const coffer_bytes *key)
{
    char q[96];
    return cf_error(COFFER_ERR_NOT_FOUND, "the map has no key %s", cf_quote(q, sizeof q, key->data, key->size < 48 ? key->size : 48));
}

/* The common start of a call on one key: checks the handle and the key and
 * looks the key up; *absent says it is not there. */
static coffer_status map_find(cf_coll *c, const char *key, size_t size, int write, coffer_bytes *k, coffer_value *v, int *absent)
{
    *absent = 0;
    coffer_status st = coll_use(c, COFFER_COLLECTION_MAP, write);
    if (st == COFFER_OK)
        st = key_arg(c, key, size, k);
    if (st != COFFER_OK)
        return st;
    st = map_lookup(c, k, v);
    if (st == COFFER_ERR_NOT_FOUND) {
        *absent = 1;
        return COFFER_OK;
    }
    return st;
}

/* Reads the stored value under `key`, which must be there. */
static coffer_status map_read(cf_coll *c, const char *key, size_t size, coffer_bytes *k, coffer_value *v)
{
    int absent;
    coffer_status st = map_find(c, key, size, 0, k, v, &absent);
    return st == COFFER_OK && absent ? key_missing(k) : st;
}

COFFER_API coffer_status coffer_map_get(coffer_map *map, const char *key, size_t size, coffer_value *out)
{
    cf_coll *c = MAP(map);
    if (!out)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "coffer_map_get: out is NULL");
    coffer_bytes k;
    coffer_status st = map_read(c, key, size, &k, out);
    return st == COFFER_OK ? cf_graph_public(c->txn, out) : st;
}

COFFER_API coffer_status coffer_map_contains(coffer_map *map, const char *key, size_t size, int *found)
{
    cf_coll *c = MAP(map);
    if (!found)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "coffer_map_contains: found is NULL");
    *found = 0;
    coffer_bytes k;
    coffer_value v;
    int absent;
    coffer_status st = map_find(c, key, size, 0, &k, &v, &absent);
    *found = st == COFFER_OK && !absent;
    return st;
}

COFFER_API coffer_status coffer_map_set(coffer_map *map, const char *key, size_t size, const coffer_value *value)
{
    cf_coll *c = MAP(map);
    coffer_bytes k;
    coffer_status st = coll_use(c, COFFER_COLLECTION_MAP, 1);
    if (st == COFFER_OK)
        st = key_arg(c, key, size, &k);
    if (st == COFFER_OK)
        st = check_element(c, value);
    if (st != COFFER_OK)
        return st;
    uint64_t before = c->count;
    cf_slot e = elem_slot(c);
    st = coll_materialize(c);
    if (st == COFFER_OK)
        st = map_assign(c, &e, &k, value);
    if (st == COFFER_OK && c->count != before)
        st = hdr_store(c);
    return coll_finish(c, st);
}

COFFER_API coffer_status coffer_map_remove(coffer_map *map, const char *key, size_t size, int *removed)
{
    cf_coll *c = MAP(map);
    if (removed)
        *removed = 0;
    coffer_bytes k;
    coffer_value v;
    int absent;
    coffer_status st = map_find(c, key, size, 1, &k, &v, &absent);
    if (st != COFFER_OK || absent)
        return st;
    cell_copy old = {0};
    if (st == COFFER_OK)
        st = copy_cell(&v, &old);
    if (st != COFFER_OK) {
        free(old.p);
        return st;
    }
    uint8_t ek[ENTRY_KEY_MAX];
    size_t ekl = map_key(c->txn, c->id, &k, ek);
    st = cf_graph_del(c->txn, ek, ekl);
    if (st == COFFER_OK) {
        c->count--;
        st = hdr_store(c);
    }
    if (st == COFFER_OK) {
        cf_slot e = elem_slot(c);
        st = cf_graph_release(c->txn, &e, &old.v);
    }
    free(old.p);
    if (st == COFFER_OK && removed)
        *removed = 1;
    return coll_finish(c, st);
}

COFFER_API coffer_status coffer_map_get_entry(coffer_map *map, uint64_t index, coffer_bytes *key, coffer_value *value)
{
    cf_coll *c = MAP(map);
    coffer_bytes k;
    coffer_value v;
    coffer_status st = coll_use(c, COFFER_COLLECTION_MAP, 0);
    if (st == COFFER_OK)
        st = entry_at(c, index, &k, &v);
    if (st == COFFER_OK)
        st = cf_graph_public(c->txn, &v);
    if (st == COFFER_OK) {
        if (key)
            *key = k;
        if (value)
            *value = v;
    }
    return st;
}

static coffer_status map_get_nested(coffer_map *map, const char *key, size_t size, int kind, cf_coll **out)
{
    cf_coll *c = MAP(map);
    if (!out)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "out is NULL");
    *out = NULL;
    coffer_bytes k;
    coffer_value v;
    coffer_status st = map_read(c, key, size, &k, &v);
    if (st != COFFER_OK)
        return st;
    char at[96], q[64];
    snprintf(at, sizeof at, "map key %s", cf_quote(q, sizeof q, k.data, k.size < 32 ? k.size : 32));
    return open_nested(c, &v, kind, at, out);
}

COFFER_API coffer_status coffer_map_get_list(coffer_map *map, const char *key, size_t size, coffer_list **out)
{
    return map_get_nested(map, key, size, COFFER_COLLECTION_LIST, (cf_coll **)out);
}

COFFER_API coffer_status coffer_map_get_map(coffer_map *map, const char *key, size_t size, coffer_map **out)
{
    return map_get_nested(map, key, size, COFFER_COLLECTION_MAP, (cf_coll **)out);
}

COFFER_API coffer_status coffer_map_clear(coffer_map *map) { return clear_entries(MAP(map), COFFER_COLLECTION_MAP); }

COFFER_API int coffer_map_is_valid(coffer_map *map) { return coll_use(MAP(map), COFFER_COLLECTION_MAP, 0) == COFFER_OK; }
COFFER_API void coffer_map_release(coffer_map *map) { coll_release(MAP(map), COFFER_COLLECTION_MAP); }
