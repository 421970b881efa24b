/* index_pending — index entries written in key order (index_pending.h). */
#include "storage/index_pending.h"

#include <stdlib.h>
#include <string.h>

#include "util/error.h"
#include "storage/index_tree.h"
#include "storage/txn.h"

/* The pending entries of one column: each stored as u16 length (native
 * order) then its bytes, at offs[i] in `bytes`. */
typedef struct bucket {
    uint16_t column;
    uint8_t *bytes;
    size_t used, cap;
    size_t *offs;
    size_t n, ncap;
} bucket;

typedef struct class_pending {
    bucket *buckets;
    size_t nbuckets, cap;
    size_t entries;
} class_pending;

struct cf_index_pending {
    class_pending *classes;
    size_t nclasses;
};

int cf_index_pending_enabled(const coffer_txn *txn)
{
    return txn->defer_index;
}

int cf_index_pending_column(const uint8_t *p, size_t plen)
{
    return plen >= 2 ? (int)((unsigned)p[0] << 8 | p[1]) : -1;
}

static class_pending *class_of(coffer_txn *txn, coffer_class_id cls, int create)
{
    struct cf_index_pending *ip = txn->index_pending;
    if (!ip) {
        if (!create)
            return NULL;
        size_t n = txn->db->schema->nclasses;
        ip = calloc(1, sizeof *ip);
        if (!ip || !(ip->classes = calloc(n ? n : 1, sizeof *ip->classes))) {
            free(ip);
            return NULL;
        }
        ip->nclasses = n;
        txn->index_pending = ip;
    }
    return cls < ip->nclasses ? &ip->classes[cls] : NULL;
}

static bucket *bucket_of(class_pending *cp, uint16_t column, int create)
{
    for (size_t i = 0; i < cp->nbuckets; i++)
        if (cp->buckets[i].column == column)
            return &cp->buckets[i];
    if (!create)
        return NULL;
    if (cp->nbuckets == cp->cap) {
        size_t cap = cp->cap ? cp->cap * 2 : 4;
        bucket *b = realloc(cp->buckets, cap * sizeof *b);
        if (!b)
            return NULL;
        cp->buckets = b;
        cp->cap = cap;
    }
    bucket *b = &cp->buckets[cp->nbuckets++];
    memset(b, 0, sizeof *b);
    b->column = column;
    return b;
}

/* Byte order, a shorter entry first on a tie (LMDB's order of keys). */
static int entry_cmp(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
    int c = memcmp(a, b, alen < blen ? alen : blen);
    return c ? c : (alen > blen) - (alen < blen);
}

static size_t entry_len(const uint8_t *p)
{
    uint16_t n;
    memcpy(&n, p, 2);
    return n;
}

/* An entry to sort: the 16 bytes after its column (big-endian, zeros
 * past its end) as two numbers, and the entry (its length first). */
typedef struct sort_item {
    uint64_t head[2];
    const uint8_t *p;
} sort_item;

static int item_cmp(const void *x, const void *y)
{
    const sort_item *a = x, *b = y;
    for (int w = 0; w < 2; w++)
        if (a->head[w] != b->head[w])
            return a->head[w] < b->head[w] ? -1 : 1;
    return entry_cmp(a->p + 2, entry_len(a->p), b->p + 2, entry_len(b->p));
}

static unsigned head_byte(const sort_item *it, int pos)
{
    return (unsigned)(it->head[pos / 8] >> (8 * (7 - pos % 8))) & 255;
}

/* Sorts items[0..n) by entry (tmp holds n more): a stable radix sort of
 * the heads, a byte at a time from the last, skipping bytes all heads
 * share, then each run of equal heads (entries alike in their first 18
 * bytes) by its whole entries. */
static void sort_items(sort_item *items, sort_item *tmp, size_t n)
{
    /* The bits in which some head differs from the first. */
    sort_item diff = {{0, 0}, NULL};
    for (size_t i = 1; i < n; i++) {
        diff.head[0] |= items[i].head[0] ^ items[0].head[0];
        diff.head[1] |= items[i].head[1] ^ items[0].head[1];
    }
    for (int pos = 15; pos >= 0; pos--) {
        if (head_byte(&diff, pos) == 0)
            continue; /* every head has this byte */
        size_t count[256] = {0};
        for (size_t i = 0; i < n; i++)
            count[head_byte(&items[i], pos)]++;
        size_t at = 0;
        for (int b = 0; b < 256; b++) {
            size_t c = count[b];
            count[b] = at;
            at += c;
        }
        for (size_t i = 0; i < n; i++)
            tmp[count[head_byte(&items[i], pos)]++] = items[i];
        memcpy(items, tmp, n * sizeof *items);
    }
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        while (j < n && items[j].head[0] == items[i].head[0] && items[j].head[1] == items[i].head[1])
            j++;
        if (j - i > 1)
            qsort(items + i, j - i, sizeof *items, item_cmp);
        i = j;
    }
}

/* Empties bucket `b`, whose entries were written. */
static void emptied(class_pending *cp, bucket *b)
{
    cp->entries -= b->n;
    b->n = 0;
    b->used = 0;
}

/* Writes the few entries of bucket `b` as they came, each as a single put
 * would (the order of a handful of entries does not change how full the
 * pages are; sorting them would cost a commit of one object more). */
static coffer_status flush_few(coffer_txn *txn, coffer_class_id cls, class_pending *cp, bucket *b)
{
    coffer_status st = COFFER_OK;
    for (size_t i = 0; st == COFFER_OK && i < b->n; i++) {
        const uint8_t *p = b->bytes + b->offs[i];
        size_t len = entry_len(p);
        if (txn->db->sealed_index) {
            st = cf_itree_insert(txn, cls, p + 2, len);
        } else {
            MDB_val k = {len, (void *)(p + 2)}, v = {0, (void *)""};
            int rc = mdb_put(txn->mdb, txn->db->index_dbis[cls], &k, &v, 0);
            if (rc != 0)
                st = cf_txn_write_error(txn, rc, "cannot add an index entry");
        }
    }
    emptied(cp, b);
    return st;
}

/* Writes bucket `b` of class `cls` in key order and empties it. Entries
 * after the last stored key are appended; equal entries are written once. */
static coffer_status flush_bucket(coffer_txn *txn, coffer_class_id cls, class_pending *cp, bucket *b)
{
    if (b->n == 0)
        return COFFER_OK;
    if (b->n < CF_INDEX_PENDING_FEW)
        return flush_few(txn, cls, cp, b);
    sort_item *items = malloc(2 * b->n * sizeof *items);
    if (!items)
        return cf_error(COFFER_ERR_NO_MEMORY, "out of memory writing index entries");
    /* The sorted entries, in the second half, which the sort uses. */
    const uint8_t **sorted = (const uint8_t **)(void *)(items + b->n);
    /* Entries that came in order (a primary key or a creation date of
     * objects made in increasing order) need no sort: the check stops at
     * the first entry below its predecessor. */
    size_t in_order = 1;
    while (in_order < b->n) {
        const uint8_t *p = b->bytes + b->offs[in_order - 1], *q = b->bytes + b->offs[in_order];
        if (entry_cmp(p + 2, entry_len(p), q + 2, entry_len(q)) > 0)
            break;
        in_order++;
    }
    if (in_order == b->n) {
        for (size_t i = 0; i < b->n; i++)
            sorted[i] = b->bytes + b->offs[i];
    } else {
        for (size_t i = 0; i < b->n; i++) {
            const uint8_t *p = b->bytes + b->offs[i];
            size_t len = entry_len(p);
            uint64_t head[2] = {0, 0};
            for (size_t j = 2; j < 18; j++)
                head[(j - 2) / 8] = head[(j - 2) / 8] << 8 | (j < len ? p[2 + j] : 0);
            items[i] = (sort_item){{head[0], head[1]}, p};
        }
        sort_items(items, items + b->n, b->n);
        for (size_t i = 0; i < b->n; i++)
            sorted[i] = items[i].p;
    }
    if (txn->db->sealed_index) {
        /* One descent per leaf the sorted entries reach. */
        coffer_status st = cf_itree_insert_run(txn, cls, sorted, b->n);
        free(items);
        cp->entries -= b->n;
        b->n = 0;
        b->used = 0;
        return st;
    }
    /* A cursor of its own: a walk of the transaction's index cursor may be
     * under way (LMDB keeps other cursors in place across the puts). */
    MDB_cursor *cur = NULL;
    int orc = mdb_cursor_open(txn->mdb, txn->db->index_dbis[cls], &cur);
    coffer_status st = orc ? cf_error_mdb(orc, "cannot open an index cursor") : COFFER_OK;
    /* The first entry past the last stored key: from there on, appends. */
    size_t append_from = b->n;
    if (st == COFFER_OK) {
        MDB_val k, v;
        int rc = mdb_cursor_get(cur, &k, &v, MDB_LAST);
        if (rc == MDB_NOTFOUND) {
            append_from = 0;
        } else if (rc != 0) {
            st = cf_error_mdb(rc, "cannot read an index");
        } else {
            size_t lo = 0, hi = b->n;
            while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (entry_cmp(sorted[mid] + 2, entry_len(sorted[mid]), k.mv_data, k.mv_size) > 0)
                    hi = mid;
                else
                    lo = mid + 1;
            }
            append_from = lo;
        }
    }
    for (size_t i = 0; st == COFFER_OK && i < b->n; i++) {
        const uint8_t *e = sorted[i];
        size_t len = entry_len(e);
        if (i > 0 && entry_len(sorted[i - 1]) == len && memcmp(sorted[i - 1] + 2, e + 2, len) == 0)
            continue;
        MDB_val k = {len, (void *)(e + 2)}, v = {0, (void *)""};
        int rc = mdb_cursor_put(cur, &k, &v, i >= append_from ? MDB_APPEND : 0);
        if (rc != 0)
            st = cf_txn_write_error(txn, rc, "cannot add an index entry");
    }
    if (cur)
        mdb_cursor_close(cur);
    free(items);
    cp->entries -= b->n;
    b->n = 0;
    b->used = 0;
    return st;
}

coffer_status cf_index_pending_add(coffer_txn *txn, coffer_class_id cls, const uint8_t *e, size_t len)
{
    class_pending *cp = class_of(txn, cls, 1);
    bucket *b = cp ? bucket_of(cp, (uint16_t)cf_index_pending_column(e, len), 1) : NULL;
    if (!b)
        return cf_error(COFFER_ERR_NO_MEMORY, "out of memory adding an index entry");
    if (b->used + 2 + len > b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 4096;
        while (cap < b->used + 2 + len)
            cap *= 2;
        uint8_t *p = realloc(b->bytes, cap);
        if (!p)
            return cf_error(COFFER_ERR_NO_MEMORY, "out of memory adding an index entry");
        b->bytes = p;
        b->cap = cap;
    }
    if (b->n == b->ncap) {
        size_t ncap = b->ncap ? b->ncap * 2 : 256;
        size_t *o = realloc(b->offs, ncap * sizeof *o);
        if (!o)
            return cf_error(COFFER_ERR_NO_MEMORY, "out of memory adding an index entry");
        b->offs = o;
        b->ncap = ncap;
    }
    uint16_t n16 = (uint16_t)len;
    b->offs[b->n++] = b->used;
    memcpy(b->bytes + b->used, &n16, 2);
    memcpy(b->bytes + b->used + 2, e, len);
    b->used += 2 + len;
    cp->entries++;
    return b->used >= CF_INDEX_PENDING_MAX_BYTES ? flush_bucket(txn, cls, cp, b) : COFFER_OK;
}

coffer_status cf_index_pending_flush(coffer_txn *txn, coffer_class_id cls, int column)
{
    class_pending *cp = class_of(txn, cls, 0);
    if (!cp || cp->entries == 0)
        return COFFER_OK;
    coffer_status st = COFFER_OK;
    for (size_t i = 0; st == COFFER_OK && i < cp->nbuckets; i++)
        if (column < 0 || cp->buckets[i].column == (uint16_t)column)
            st = flush_bucket(txn, cls, cp, &cp->buckets[i]);
    return st;
}

coffer_status cf_index_pending_flush_all(coffer_txn *txn)
{
    struct cf_index_pending *ip = txn->index_pending;
    coffer_status st = COFFER_OK;
    for (size_t c = 0; ip && st == COFFER_OK && c < ip->nclasses; c++)
        st = cf_index_pending_flush(txn, (coffer_class_id)c, -1);
    return st;
}

void cf_index_pending_discard(coffer_txn *txn, coffer_class_id cls, int column)
{
    class_pending *cp = class_of(txn, cls, 0);
    for (size_t i = 0; cp && i < cp->nbuckets; i++) {
        bucket *b = &cp->buckets[i];
        if (column < 0 || b->column == (uint16_t)column) {
            cp->entries -= b->n;
            b->n = 0;
            b->used = 0;
        }
    }
}

void cf_index_pending_free(coffer_txn *txn)
{
    struct cf_index_pending *ip = txn->index_pending;
    if (!ip)
        return;
    for (size_t c = 0; c < ip->nclasses; c++) {
        class_pending *cp = &ip->classes[c];
        for (size_t i = 0; i < cp->nbuckets; i++) {
            free(cp->buckets[i].bytes);
            free(cp->buckets[i].offs);
        }
        free(cp->buckets);
    }
    free(ip->classes);
    free(ip);
    txn->index_pending = NULL;
}
