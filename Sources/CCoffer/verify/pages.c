/* pages — walks every page of an LMDB file with a bounds-checked reader of
 * its own (storage/lmdb_layout.h) and reports structural damage: meta pages, page
 * headers, nodes, key order, overflow pages, the free list, sub-databases,
 * sorted duplicates, pages used twice and pages that belong to nothing. */
#define _GNU_SOURCE
#include "verify/pages.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/error.h"
#include "storage/lmdb_layout.h"

/* Deeper than any real tree: LMDB's trees of 2^48 pages stay below 16. */
#define MAX_LEVELS 24
/* Nested walks: a tree, a sorted-duplicate sub-tree inside it. */
#define MAX_STACK (2 * MAX_LEVELS + 2)

typedef struct named_db {
    char name[64]; /* quoted, for messages */
    uint8_t key[LMDB_MAX_KEY];
    size_t klen;
    uint8_t db[LMDB_DB_SIZE];
    uint64_t page; /* the catalogue page naming it */
} named_db;

struct cf_pages {
    int fd;
    const char *label;
    coffer_verify_report *r;
    size_t findings_before;
    uint64_t file_size;
    uint32_t psize;
    uint64_t last_pg;
    uint64_t txnid;
    uint8_t *used;  /* bitmap over pages 0..last_pg: reached from a tree */
    uint8_t *freed; /* bitmap: listed in the free list */
    uint8_t *stack[MAX_STACK];
    int sp;
    uint8_t *value; /* an overflow value (free-list entries) */
    size_t value_cap;
    named_db *named;
    size_t nnamed, named_cap;
};

enum { TREE_FREE, TREE_MAIN, TREE_NAMED, TREE_DUPS };

/* One tree being walked: what it is, its order, and what its pages add up to. */
typedef struct tree {
    char name[200];
    int kind;
    uint16_t flags;  /* MDB_db flags */
    uint32_t ksize2; /* LEAF2 key size of a DUPFIXED duplicate tree */
    lmdb_order order, dup_order;
    uint16_t depth;
    uint64_t branch, leaf, overflow, entries;
    uint8_t last[LMDB_MAX_KEY + 1];
    size_t last_len;
    int has_last;
    uint64_t last_page;
} tree;

static int bit_get(const uint8_t *b, uint64_t i) { return (b[i >> 3] >> (i & 7)) & 1; }
static void bit_set(uint8_t *b, uint64_t i) { b[i >> 3] |= (uint8_t)(1u << (i & 7)); }

static lmdb_order key_order(uint16_t flags)
{
    return (flags & LMDB_REVERSEKEY) ? LMDB_ORDER_REVERSE : (flags & LMDB_INTEGERKEY) ? LMDB_ORDER_INTEGER : LMDB_ORDER_BYTES;
}

static lmdb_order dup_order(uint16_t flags)
{
    return (flags & LMDB_INTEGERDUP) ? LMDB_ORDER_INTEGER : (flags & LMDB_REVERSEDUP) ? LMDB_ORDER_REVERSE : LMDB_ORDER_BYTES;
}

/* Reads `len` bytes at `off`; 0 if the file ends first. */
static int read_at(cf_pages *w, uint64_t off, uint8_t *buf, size_t len)
{
    if (off > w->file_size || len > w->file_size - off)
        return 0;
    size_t done = 0;
    while (done < len) {
        ssize_t n = pread(w->fd, buf + done, len - done, (off_t)(off + done));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return 0;
        done += (size_t)n;
    }
    return 1;
}

/* Reads page `pgno` into the buffer of the current stack level. */
static uint8_t *read_page(cf_pages *w, uint64_t pgno, const char *what)
{
    uint8_t *p = w->stack[w->sp];
    if (!read_at(w, pgno * w->psize, p, w->psize)) {
        cf_report_add(w->r, COFFER_VERIFY_FILE, pgno, NULL, 0, "%s: page %llu lies beyond the end of the file (%llu bytes)",
                      what, (unsigned long long)pgno, (unsigned long long)w->file_size);
        return NULL;
    }
    return p;
}

/* Takes page `pgno` for tree `t`, reached from page `from`: it must be a
 * page after the metas, up to the last page, not yet reached nor free. */
static int claim(cf_pages *w, const tree *t, uint64_t pgno, uint64_t from)
{
    if (pgno < LMDB_NUM_METAS || pgno > w->last_pg) {
        cf_report_add(w->r, COFFER_VERIFY_NODE, from, NULL, 0, "%s: a node points to page %llu, outside the pages in use (2 to %llu)",
                      t->name, (unsigned long long)pgno, (unsigned long long)w->last_pg);
        return 0;
    }
    if (bit_get(w->used, pgno) || bit_get(w->freed, pgno)) {
        cf_report_add(w->r, COFFER_VERIFY_PAGE_SHARED, pgno, NULL, 0, "%s: page %llu (reached from page %llu) is %s", t->name,
                      (unsigned long long)pgno, (unsigned long long)from,
                      bit_get(w->freed, pgno) ? "also listed as free" : "already used elsewhere");
        return 0;
    }
    bit_set(w->used, pgno);
    return 1;
}

/* Checks the order of `key` after the tree's previous key and against the
 * lower bound `lo` its branch separator sets. */
static void check_order(cf_pages *w, tree *t, lmdb_order order, const uint8_t *key, size_t klen, const uint8_t *lo, size_t lolen,
                        uint64_t page, int index)
{
    if (lo && lmdb_compare(order, key, klen, lo, lolen) < 0)
        cf_report_add(w->r, COFFER_VERIFY_KEY_ORDER, page, NULL, 0, "%s: key %d of page %llu sorts before its branch separator",
                      t->name, index, (unsigned long long)page);
    else if (t->has_last && lmdb_compare(order, key, klen, t->last, t->last_len) <= 0)
        cf_report_add(w->r, COFFER_VERIFY_KEY_ORDER, page, NULL, 0, "%s: key %d of page %llu does not sort after the key before it%s",
                      t->name, index, (unsigned long long)page, t->last_page != page ? " (on the previous page)" : "");
    if (klen <= LMDB_MAX_KEY) {
        memcpy(t->last, key, klen);
        t->last_len = klen;
        t->has_last = 1;
        t->last_page = page;
    }
}

/* Checks the overflow pages of a value of `size` bytes starting at `pgno`,
 * reached from leaf page `from`; with `copy`, reads the value into w->value.
 * A run may hold more pages than the value needs: LMDB keeps a value's
 * overflow pages when a smaller value replaces it. */
static int check_overflow(cf_pages *w, tree *t, uint64_t pgno, uint64_t size, uint64_t from, int copy)
{
    uint64_t need = lmdb_overflow_pages(size, w->psize);
    uint8_t p[LMDB_PAGE_HEADER]; /* the header only: the leaf's buffer stays */
    if (pgno < LMDB_NUM_METAS || pgno > w->last_pg) {
        cf_report_add(w->r, COFFER_VERIFY_OVERFLOW, from, NULL, 0,
                      "%s: a value of %llu bytes on page %llu points to overflow page %llu, outside the pages in use",
                      t->name, (unsigned long long)size, (unsigned long long)from, (unsigned long long)pgno);
        return 0;
    }
    if (!read_at(w, pgno * w->psize, p, sizeof p)) {
        cf_report_add(w->r, COFFER_VERIFY_FILE, pgno, NULL, 0, "%s: overflow page %llu lies beyond the end of the file", t->name,
                      (unsigned long long)pgno);
        return 0;
    }
    uint16_t flags = lmdb_u16(p + LMDB_OFF_FLAGS);
    uint64_t n = lmdb_u32(p + LMDB_OFF_PAGES);
    if (lmdb_u64(p + LMDB_OFF_PGNO) != pgno || (flags & ~LMDB_P_DIRTY) != LMDB_P_OVERFLOW || n < need ||
        n > w->last_pg - pgno + 1) {
        cf_report_add(w->r, COFFER_VERIFY_OVERFLOW, pgno, NULL, 0,
                      "%s: overflow page %llu (from page %llu) has header page %llu, flags 0x%x, %llu pages; expected an overflow "
                      "run of at least %llu pages inside the pages in use", t->name, (unsigned long long)pgno,
                      (unsigned long long)from, (unsigned long long)lmdb_u64(p + LMDB_OFF_PGNO), flags, (unsigned long long)n,
                      (unsigned long long)need);
        return 0;
    }
    for (uint64_t i = 0; i < n; i++) {
        if (!claim(w, t, pgno + i, from))
            return 0;
    }
    t->overflow += n;
    if (!copy)
        return 1;
    if (size > w->value_cap) {
        uint8_t *v = realloc(w->value, size);
        if (!v)
            return 0;
        w->value = v;
        w->value_cap = size;
    }
    return read_at(w, pgno * w->psize + LMDB_PAGE_HEADER, w->value, size);
}

/* A free-list entry: key = transaction id, value = its freed pages (a
 * count, then that many page numbers, in descending order). */
static void check_free_entry(cf_pages *w, tree *t, const uint8_t *key, size_t klen, const uint8_t *v, uint64_t vlen, uint64_t page)
{
    if (klen != 8) {
        cf_report_add(w->r, COFFER_VERIFY_FREE_LIST, page, NULL, 0, "the free list: a key of %zu bytes on page %llu; keys are 8 bytes",
                      klen, (unsigned long long)page);
        return;
    }
    uint64_t txn = lmdb_u64(key);
    if (txn > w->txnid)
        cf_report_add(w->r, COFFER_VERIFY_FREE_LIST, page, NULL, 0,
                      "the free list: an entry of transaction %llu on page %llu is newer than the file's %llu",
                      (unsigned long long)txn, (unsigned long long)page, (unsigned long long)w->txnid);
    uint64_t count = vlen >= 8 ? lmdb_u64(v) : 0;
    if (vlen < 8 || vlen % 8 != 0 || count != vlen / 8 - 1) {
        cf_report_add(w->r, COFFER_VERIFY_FREE_LIST, page, NULL, 0,
                      "the free list: the entry of transaction %llu on page %llu has %llu bytes, not a page list",
                      (unsigned long long)txn, (unsigned long long)page, (unsigned long long)vlen);
        return;
    }
    uint64_t prev = UINT64_MAX;
    for (uint64_t i = 0; i < count; i++) {
        uint64_t pg = lmdb_u64(v + 8 * (i + 1));
        if (pg < LMDB_NUM_METAS || pg > w->last_pg) {
            cf_report_add(w->r, COFFER_VERIFY_FREE_LIST, page, NULL, 0,
                          "the free list: transaction %llu lists page %llu, outside the pages in use (2 to %llu)",
                          (unsigned long long)txn, (unsigned long long)pg, (unsigned long long)w->last_pg);
            continue;
        }
        if (pg >= prev)
            cf_report_add(w->r, COFFER_VERIFY_FREE_LIST, page, NULL, 0,
                          "the free list: the pages of transaction %llu are not in descending order at page %llu",
                          (unsigned long long)txn, (unsigned long long)pg);
        prev = pg;
        if (bit_get(w->used, pg) || bit_get(w->freed, pg)) {
            cf_report_add(w->r, COFFER_VERIFY_PAGE_SHARED, pg, NULL, 0, "the free list: page %llu (transaction %llu) is %s",
                          (unsigned long long)pg, (unsigned long long)txn,
                          bit_get(w->freed, pg) ? "listed as free twice" : "free but also in use");
            continue;
        }
        bit_set(w->freed, pg);
    }
    (void)t;
}

static void walk_tree(cf_pages *w, tree *t, const uint8_t *db, uint64_t from);

static void remember_named(cf_pages *w, const uint8_t *key, size_t klen, const uint8_t *db, uint64_t page)
{
    if (w->nnamed == w->named_cap) {
        size_t cap = w->named_cap ? 2 * w->named_cap : 32;
        named_db *n = realloc(w->named, cap * sizeof *n);
        if (!n)
            return;
        w->named = n;
        w->named_cap = cap;
    }
    named_db *n = &w->named[w->nnamed++];
    cf_quote(n->name, sizeof n->name, (const char *)key, klen);
    memcpy(n->key, key, klen); /* at most LMDB_MAX_KEY: checked with the node */
    n->klen = klen;
    memcpy(n->db, db, LMDB_DB_SIZE);
    n->page = page;
}

/* Walks the sorted duplicates of one key kept in a sub-page: a small leaf
 * page inside the node's data, with offsets relative to its start. */
static void check_subpage(cf_pages *w, tree *t, const uint8_t *sp, size_t len, uint64_t page, int index)
{
    uint16_t flags = len >= LMDB_PAGE_HEADER ? lmdb_u16(sp + LMDB_OFF_FLAGS) : 0;
    uint16_t lower = len >= LMDB_PAGE_HEADER ? lmdb_u16(sp + LMDB_OFF_LOWER) : 0;
    uint16_t upper = len >= LMDB_PAGE_HEADER ? lmdb_u16(sp + LMDB_OFF_UPPER) : 0;
    int leaf2 = (flags & LMDB_P_LEAF2) != 0;
    if (len < LMDB_PAGE_HEADER || (flags & (LMDB_P_LEAF | LMDB_P_SUBP)) != (LMDB_P_LEAF | LMDB_P_SUBP) ||
        (flags & ~(LMDB_P_LEAF | LMDB_P_SUBP | LMDB_P_DIRTY | LMDB_P_LEAF2)) || leaf2 != ((t->flags & LMDB_DUPFIXED) != 0) ||
        lower < LMDB_PAGE_HEADER || lower > upper || upper > len || (lower - LMDB_PAGE_HEADER) % 2) {
        cf_report_add(w->r, COFFER_VERIFY_NODE, page, NULL, 0,
                      "%s: node %d of page %llu holds duplicates in a damaged sub-page (%zu bytes, flags 0x%x, bounds %u-%u)",
                      t->name, index, (unsigned long long)page, len, flags, lower, upper);
        return;
    }
    size_t n = (size_t)(lower - LMDB_PAGE_HEADER) / 2;
    tree dups = {.kind = TREE_DUPS, .order = t->dup_order};
    snprintf(dups.name, sizeof dups.name, "%.120s (duplicates of node %d of page %llu)", t->name, index, (unsigned long long)page);
    size_t ks = lmdb_u16(sp + LMDB_OFF_PAD);
    if (n == 0)
        cf_report_add(w->r, COFFER_VERIFY_NODE, page, NULL, 0, "%s: an empty sub-page", dups.name);
    for (size_t i = 0; i < n; i++) {
        const uint8_t *k;
        size_t kl;
        if (leaf2) {
            if (ks == 0 || LMDB_PAGE_HEADER + (i + 1) * ks > len) {
                cf_report_add(w->r, COFFER_VERIFY_NODE, page, NULL, 0, "%s: fixed-size duplicates run past the sub-page", dups.name);
                return;
            }
            k = sp + LMDB_PAGE_HEADER + i * ks;
            kl = ks;
        } else {
            size_t off = lmdb_u16(sp + LMDB_PAGE_HEADER + 2 * i);
            if (off < upper || off + LMDB_NODE_HEADER > len || off + LMDB_NODE_HEADER + lmdb_u16(sp + off + 6) > len ||
                (lmdb_u16(sp + off) | lmdb_u16(sp + off + 2)) != 0 || lmdb_u16(sp + off + 4) != 0) {
                cf_report_add(w->r, COFFER_VERIFY_NODE, page, NULL, 0, "%s: duplicate %zu lies outside the sub-page or has data",
                              dups.name, i);
                return;
            }
            kl = lmdb_u16(sp + off + 6);
            k = sp + off + LMDB_NODE_HEADER;
        }
        check_order(w, &dups, dups.order, k, kl, NULL, 0, page, (int)i);
    }
    t->entries += n;
}

/* A leaf node of tree `t`: its value, by the tree's kind and the node's flags. */
static void check_leaf_value(cf_pages *w, tree *t, const uint8_t *node, size_t ksize, uint16_t nflags, uint64_t dsize,
                             uint64_t page, int index)
{
    const uint8_t *key = node + LMDB_NODE_HEADER, *data = key + ksize;
    int dup = (nflags & LMDB_F_DUPDATA) != 0, sub = (nflags & LMDB_F_SUBDATA) != 0, big = (nflags & LMDB_F_BIGDATA) != 0;
    int allowed = t->kind == TREE_DUPS ? nflags == 0
                : t->kind == TREE_FREE ? !dup && !sub
                : t->kind == TREE_MAIN ? !dup && !(sub && big)
                : dup ? (t->flags & LMDB_DUPSORT) && !big : !sub;
    if (!allowed || (t->kind == TREE_DUPS && dsize != 0)) {
        cf_report_add(w->r, COFFER_VERIFY_NODE, page, NULL, 0, "%s: node %d of page %llu has flags 0x%x, impossible here", t->name,
                      index, (unsigned long long)page, nflags);
        return;
    }
    if (big) {
        uint64_t first = lmdb_u64(data);
        if (check_overflow(w, t, first, dsize, page, t->kind == TREE_FREE) && t->kind == TREE_FREE)
            check_free_entry(w, t, key, ksize, w->value, dsize, page);
        t->entries++;
        return;
    }
    if (t->kind == TREE_FREE) {
        check_free_entry(w, t, key, ksize, data, dsize, page);
        t->entries++;
    } else if (sub && !dup) { /* a named sub-database in the catalogue */
        if (dsize != LMDB_DB_SIZE)
            cf_report_add(w->r, COFFER_VERIFY_NODE, page, NULL, 0, "%s: sub-database record of node %d of page %llu has %llu bytes",
                          t->name, index, (unsigned long long)page, (unsigned long long)dsize);
        else
            remember_named(w, key, ksize, data, page);
        t->entries++;
    } else if (dup && !sub) {
        check_subpage(w, t, data, dsize, page, index);
    } else if (dup) {
        if (dsize != LMDB_DB_SIZE) {
            cf_report_add(w->r, COFFER_VERIFY_NODE, page, NULL, 0, "%s: duplicate sub-tree record of node %d of page %llu has %llu bytes",
                          t->name, index, (unsigned long long)page, (unsigned long long)dsize);
            return;
        }
        tree dups = {.kind = TREE_DUPS, .flags = t->flags, .order = t->dup_order, .ksize2 = lmdb_u32(data + LMDB_DB_PAD)};
        snprintf(dups.name, sizeof dups.name, "%.120s (duplicates of node %d of page %llu)", t->name, index, (unsigned long long)page);
        walk_tree(w, &dups, data, page);
        t->entries += lmdb_u64(data + LMDB_DB_ENTRIES);
    } else {
        t->entries++;
    }
}

/* Walks page `pgno` of tree `t` at `level` (1 = root); keys must sort at or
 * after `lo` (the branch separator leading here, NULL for the leftmost). */
static void walk_page(cf_pages *w, tree *t, uint64_t pgno, int level, const uint8_t *lo, size_t lolen, uint64_t from)
{
    if (!claim(w, t, pgno, from))
        return;
    if (level > MAX_LEVELS || w->sp + 1 >= MAX_STACK) {
        cf_report_add(w->r, COFFER_VERIFY_TREE, pgno, NULL, 0, "%s: page %llu is %d levels deep", t->name, (unsigned long long)pgno, level);
        return;
    }
    w->sp++;
    uint8_t *p = read_page(w, pgno, t->name);
    if (!p)
        goto done;
    uint32_t ps = w->psize;
    uint16_t flags = lmdb_u16(p + LMDB_OFF_FLAGS), lower = lmdb_u16(p + LMDB_OFF_LOWER), upper = lmdb_u16(p + LMDB_OFF_UPPER);
    uint64_t hdr = lmdb_u64(p + LMDB_OFF_PGNO);
    int leaf2_expected = t->kind == TREE_DUPS && (t->flags & LMDB_DUPFIXED);
    int branch = flags == LMDB_P_BRANCH, leaf = flags == (leaf2_expected ? LMDB_P_LEAF | LMDB_P_LEAF2 : LMDB_P_LEAF);
    if (hdr != pgno) {
        cf_report_add(w->r, COFFER_VERIFY_PAGE, pgno, NULL, 0, "%s: page %llu says it is page %llu", t->name, (unsigned long long)pgno,
                      (unsigned long long)hdr);
        goto done;
    }
    if (!branch && !leaf) {
        cf_report_add(w->r, COFFER_VERIFY_PAGE, pgno, NULL, 0, "%s: page %llu has type flags 0x%x, not a %s page", t->name,
                      (unsigned long long)pgno, flags, level < t->depth ? "branch" : "leaf");
        goto done;
    }
    if (branch != (level < t->depth)) {
        cf_report_add(w->r, COFFER_VERIFY_PAGE, pgno, NULL, 0, "%s: page %llu is a %s page at level %d of a tree %u levels deep",
                      t->name, (unsigned long long)pgno, branch ? "branch" : "leaf", level, t->depth);
        goto done;
    }
    if (lower < LMDB_PAGE_HEADER || lower > upper || upper > ps || (lower - LMDB_PAGE_HEADER) % 2) {
        cf_report_add(w->r, COFFER_VERIFY_PAGE, pgno, NULL, 0, "%s: page %llu has free-space bounds %u-%u in a page of %u bytes",
                      t->name, (unsigned long long)pgno, lower, upper, ps);
        goto done;
    }
    int n = (lower - LMDB_PAGE_HEADER) / 2;
    if (n == 0) {
        cf_report_add(w->r, COFFER_VERIFY_PAGE, pgno, NULL, 0, "%s: page %llu has no nodes", t->name, (unsigned long long)pgno);
        goto done;
    }
    if (branch)
        t->branch++;
    else
        t->leaf++;
    if (leaf2_expected && leaf) {
        /* The key size is the tree's (MDB_db.pad); pages need not repeat it. */
        size_t ks = t->ksize2;
        if (ks == 0 || ks > LMDB_MAX_KEY || LMDB_PAGE_HEADER + (size_t)n * ks > ps) {
            cf_report_add(w->r, COFFER_VERIFY_PAGE, pgno, NULL, 0, "%s: page %llu holds %d fixed-size keys of %zu bytes", t->name,
                          (unsigned long long)pgno, n, ks);
            goto done;
        }
        for (int i = 0; i < n; i++)
            check_order(w, t, t->order, p + LMDB_PAGE_HEADER + (size_t)i * ks, ks, i ? NULL : lo, lolen, pgno, i);
        t->entries += (uint64_t)n;
        goto done;
    }
    size_t used = 0;
    for (int i = 0; i < n; i++) {
        size_t off = lmdb_u16(p + LMDB_PAGE_HEADER + 2 * i);
        if (off < upper || off + LMDB_NODE_HEADER > ps) {
            cf_report_add(w->r, COFFER_VERIFY_NODE, pgno, NULL, 0, "%s: node %d of page %llu is at offset %zu, outside %u-%u", t->name,
                          i, (unsigned long long)pgno, off, upper, ps);
            goto done;
        }
        const uint8_t *node = p + off;
        uint16_t nflags = lmdb_u16(node + 4);
        size_t ksize = lmdb_u16(node + 6);
        uint64_t dsize = lmdb_u16(node) | (uint64_t)lmdb_u16(node + 2) << 16;
        uint64_t on_page = branch ? 0 : (nflags & LMDB_F_BIGDATA) ? 8 : dsize;
        uint64_t size = LMDB_NODE_HEADER + ksize + on_page;
        if (off + size > ps) {
            cf_report_add(w->r, COFFER_VERIFY_NODE, pgno, NULL, 0,
                          "%s: node %d of page %llu (key %zu bytes, data %llu bytes) runs past the end of the page", t->name, i,
                          (unsigned long long)pgno, ksize, (unsigned long long)on_page);
            goto done;
        }
        used += (size_t)size;
        if ((branch && i > 0) || !branch) {
            if (ksize == 0 || ksize > LMDB_MAX_KEY) {
                cf_report_add(w->r, COFFER_VERIFY_NODE, pgno, NULL, 0, "%s: node %d of page %llu has a key of %zu bytes", t->name, i,
                              (unsigned long long)pgno, ksize);
                goto done;
            }
        }
    }
    if (used > ps - upper) {
        cf_report_add(w->r, COFFER_VERIFY_NODE, pgno, NULL, 0, "%s: the nodes of page %llu overlap (%zu bytes in %u)", t->name,
                      (unsigned long long)pgno, used, ps - upper);
        goto done;
    }
    for (int i = 0; i < n; i++) {
        const uint8_t *node = p + lmdb_u16(p + LMDB_PAGE_HEADER + 2 * i);
        size_t ksize = lmdb_u16(node + 6);
        const uint8_t *key = node + LMDB_NODE_HEADER;
        if (branch) {
            uint64_t child = lmdb_u16(node) | (uint64_t)lmdb_u16(node + 2) << 16 | (uint64_t)lmdb_u16(node + 4) << 32;
            const uint8_t *clo = lo;
            size_t clolen = lolen;
            if (i > 0) {
                if (t->has_last && lmdb_compare(t->order, key, ksize, t->last, t->last_len) <= 0)
                    cf_report_add(w->r, COFFER_VERIFY_KEY_ORDER, pgno, NULL, 0,
                                  "%s: separator %d of branch page %llu does not sort after the keys before it", t->name, i,
                                  (unsigned long long)pgno);
                clo = key;
                clolen = ksize;
            }
            walk_page(w, t, child, level + 1, clo, clolen, pgno);
            continue;
        }
        uint16_t nflags = lmdb_u16(node + 4);
        check_order(w, t, t->order, key, ksize, i ? NULL : lo, lolen, pgno, i);
        uint64_t dsize = lmdb_u16(node) | (uint64_t)lmdb_u16(node + 2) << 16;
        check_leaf_value(w, t, node, ksize, nflags, dsize, pgno, i);
    }
done:
    w->sp--;
}

/* Walks the tree `db` (an MDB_db record) and compares what its pages add up
 * to with what the record says. */
static void walk_tree(cf_pages *w, tree *t, const uint8_t *db, uint64_t from)
{
    uint64_t root = lmdb_u64(db + LMDB_DB_ROOT);
    t->depth = lmdb_u16(db + LMDB_DB_DEPTH);
    if (t->kind != TREE_FREE && t->kind != TREE_DUPS) {
        t->flags = lmdb_u16(db + LMDB_DB_FLAGS);
        if (t->flags & ~LMDB_DB_FLAGS_KNOWN)
            cf_report_add(w->r, COFFER_VERIFY_TREE, from, NULL, 0, "%s: unknown flags 0x%x", t->name, t->flags);
        t->order = key_order(t->flags);
        t->dup_order = dup_order(t->flags);
    }
    if (root == LMDB_INVALID_PGNO) {
        if (t->depth || lmdb_u64(db + LMDB_DB_ENTRIES) || lmdb_u64(db + LMDB_DB_LEAF) || lmdb_u64(db + LMDB_DB_BRANCH))
            cf_report_add(w->r, COFFER_VERIFY_TREE, from, NULL, 0, "%s: empty, but its record counts %llu entries at depth %u", t->name,
                          (unsigned long long)lmdb_u64(db + LMDB_DB_ENTRIES), t->depth);
        return;
    }
    if (t->depth == 0 || t->depth > MAX_LEVELS) {
        cf_report_add(w->r, COFFER_VERIFY_TREE, root, NULL, 0, "%s: its record gives depth %u", t->name, t->depth);
        return;
    }
    size_t before = cf_report_total(w->r);
    walk_page(w, t, root, 1, NULL, 0, from);
    if (cf_report_total(w->r) != before)
        return; /* the counts of a damaged tree say nothing more */
    uint64_t want[4] = {lmdb_u64(db + LMDB_DB_BRANCH), lmdb_u64(db + LMDB_DB_LEAF), lmdb_u64(db + LMDB_DB_OVERFLOW),
                        lmdb_u64(db + LMDB_DB_ENTRIES)};
    uint64_t got[4] = {t->branch, t->leaf, t->overflow, t->entries};
    static const char *const what[4] = {"branch pages", "leaf pages", "overflow pages", "entries"};
    for (int i = 0; i < 4; i++) {
        if (want[i] != got[i])
            cf_report_add(w->r, COFFER_VERIFY_TREE, root, NULL, 0, "%s: its record counts %llu %s, its pages hold %llu", t->name,
                          (unsigned long long)want[i], what[i], (unsigned long long)got[i]);
    }
}

/* ---- meta pages --------------------------------------------------------- */

typedef struct meta {
    int valid;
    uint8_t m[LMDB_META_SIZE];
    uint32_t psize;
    uint64_t txnid, last_pg;
    char why[160];
} meta;

static void read_meta(cf_pages *w, int index, uint64_t off, meta *out)
{
    uint8_t p[LMDB_PAGE_HEADER + LMDB_META_SIZE];
    memset(out, 0, sizeof *out);
    if (!read_at(w, off, p, sizeof p)) {
        snprintf(out->why, sizeof out->why, "it lies beyond the end of the file");
        return;
    }
    const uint8_t *m = p + LMDB_PAGE_HEADER;
    memcpy(out->m, m, LMDB_META_SIZE);
    out->psize = lmdb_u32(m + LMDB_META_FREE_DB_OFF + LMDB_DB_PAD);
    out->txnid = lmdb_u64(m + LMDB_META_TXNID_OFF);
    out->last_pg = lmdb_u64(m + LMDB_META_LAST_PG_OFF);
    uint16_t flags = lmdb_u16(p + LMDB_OFF_FLAGS);
    if (!(flags & LMDB_P_META))
        snprintf(out->why, sizeof out->why, "its header has flags 0x%x, not a meta page", flags);
    else if (lmdb_u32(m + LMDB_META_MAGIC_OFF) != LMDB_MAGIC)
        snprintf(out->why, sizeof out->why, "it lacks LMDB's magic number (0x%08x)", lmdb_u32(m + LMDB_META_MAGIC_OFF));
    else if (lmdb_u32(m + LMDB_META_VERSION_OFF) != LMDB_DATA_VERSION)
        snprintf(out->why, sizeof out->why, "it has data version %u, not %u", lmdb_u32(m + LMDB_META_VERSION_OFF), LMDB_DATA_VERSION);
    else if (lmdb_u64(p + LMDB_OFF_PGNO) != (uint64_t)index)
        snprintf(out->why, sizeof out->why, "its header names page %llu", (unsigned long long)lmdb_u64(p + LMDB_OFF_PGNO));
    else if (out->psize < 512 || out->psize > 65536 || (out->psize & (out->psize - 1)))
        snprintf(out->why, sizeof out->why, "it gives a page size of %u bytes", out->psize);
    else if (out->last_pg < LMDB_NUM_METAS - 1 || out->last_pg > UINT64_MAX / out->psize)
        snprintf(out->why, sizeof out->why, "it gives %llu as the last page", (unsigned long long)out->last_pg);
    else
        out->valid = 1;
}

/* Checks the record of the free or main tree in the chosen meta. */
static int meta_root_ok(cf_pages *w, const uint8_t *db, const char *what, int index)
{
    uint64_t root = lmdb_u64(db + LMDB_DB_ROOT);
    if (root == LMDB_INVALID_PGNO || (root >= LMDB_NUM_METAS && root <= w->last_pg))
        return 1;
    cf_report_add(w->r, COFFER_VERIFY_META, (uint64_t)index, NULL, 0, "meta page %d: %s starts at page %llu, outside the pages in use",
                  index, what, (unsigned long long)root);
    return 0;
}

static coffer_status alloc_walk(cf_pages *w)
{
    size_t bits = (size_t)((w->last_pg + 8) / 8);
    w->used = calloc(1, bits);
    w->freed = calloc(1, bits);
    if (!w->used || !w->freed)
        return cf_error(COFFER_ERR_NO_MEMORY, "out of memory verifying %s (%llu pages)", w->label, (unsigned long long)w->last_pg + 1);
    for (int i = 0; i < MAX_STACK; i++) {
        if (!(w->stack[i] = malloc(w->psize)))
            return cf_error(COFFER_ERR_NO_MEMORY, "out of memory verifying %s", w->label);
    }
    return COFFER_OK;
}

/* Reports pages that are neither reached from a tree nor listed as free:
 * LMDB accounts for every page after the metas, so these were lost. */
static void report_unreached(cf_pages *w)
{
    uint64_t first = 0, count = 0;
    for (uint64_t p = LMDB_NUM_METAS; p <= w->last_pg; p++) {
        if (!bit_get(w->used, p) && !bit_get(w->freed, p)) {
            if (!count)
                first = p;
            count++;
        }
    }
    if (count)
        cf_report_add(w->r, COFFER_VERIFY_TREE, first, NULL, 0,
                      "%llu page%s (the first is page %llu) belong%s to no tree and are not listed as free",
                      (unsigned long long)count, count == 1 ? "" : "s", (unsigned long long)first, count == 1 ? "s" : "");
}

static coffer_status check(int fd, const char *label, uint64_t want_txnid, int metas_only, coffer_verify_report *r, cf_pages **out)
{
    *out = NULL;
    struct stat sb;
    if (fstat(fd, &sb) != 0)
        return cf_error(COFFER_ERR_IO, "cannot stat %s: %s", label, strerror(errno));
    cf_pages *w = calloc(1, sizeof *w);
    if (!w)
        return cf_error(COFFER_ERR_NO_MEMORY, "out of memory verifying %s", label);
    w->fd = fd;
    w->label = label;
    w->r = r;
    w->file_size = (uint64_t)sb.st_size;
    *out = w;
    meta metas[LMDB_NUM_METAS];
    read_meta(w, 0, 0, &metas[0]);
    long sys = sysconf(_SC_PAGESIZE);
    read_meta(w, 1, metas[0].valid ? metas[0].psize : (sys > 0 ? (uint64_t)sys : 4096u), &metas[1]);
    int pick = -1;
    for (int i = 0; i < 2; i++) {
        if (!metas[i].valid)
            continue;
        if (want_txnid ? metas[i].txnid == want_txnid : (pick < 0 || metas[i].txnid > metas[pick].txnid))
            pick = i;
    }
    if (want_txnid && pick < 0 && (metas[0].valid || metas[1].valid))
        return COFFER_DONE; /* moved on: the caller pins a newer version */
    /* LMDB writes transaction t's meta to page t & 1, and an open file's
     * readers read that page for the newest t: of two equal ids, that one. */
    if (pick >= 0 && (metas[pick].txnid & 1) != (uint64_t)pick && metas[1 - pick].valid &&
        metas[1 - pick].txnid == metas[pick].txnid)
        pick = 1 - pick;
    w->findings_before = cf_report_total(r);
    if (!metas[0].valid && !metas[1].valid && w->file_size < 2 * LMDB_PAGE_HEADER) {
        cf_report_add(r, COFFER_VERIFY_FILE, COFFER_VERIFY_NO_PAGE, NULL, 0, "%s has %llu bytes: too short to be a database", label,
                      (unsigned long long)w->file_size);
        return COFFER_OK;
    }
    for (int i = 0; i < 2; i++) {
        if (!metas[i].valid)
            cf_report_add(r, COFFER_VERIFY_META, (uint64_t)i, NULL, 0, "meta page %d is damaged: %s%s", i, metas[i].why,
                          pick >= 0 ? "; LMDB refuses to open the file" : "");
    }
    if (pick < 0)
        return COFFER_OK;
    if ((metas[pick].txnid & 1) != (uint64_t)pick)
        cf_report_add(r, COFFER_VERIFY_META, (uint64_t)pick, NULL, 0,
                      "meta page %d holds transaction %llu, which belongs on meta page %d: LMDB would read that page instead", pick,
                      (unsigned long long)metas[pick].txnid, 1 - pick);
    if (metas[1 - pick].valid && metas[1 - pick].psize != metas[pick].psize)
        cf_report_add(r, COFFER_VERIFY_META, (uint64_t)(1 - pick), NULL, 0, "meta page %d gives page size %u, meta page %d %u", 1 - pick,
                      metas[1 - pick].psize, pick, metas[pick].psize);
    const meta *m = &metas[pick];
    w->psize = m->psize;
    w->last_pg = m->last_pg;
    w->txnid = m->txnid;
    uint64_t needed = (m->last_pg + 1) * m->psize;
    if (w->file_size < needed) {
        cf_report_add(r, COFFER_VERIFY_FILE, COFFER_VERIFY_NO_PAGE, NULL, 0,
                      "%s is truncated: %llu bytes on disk, %llu in use (pages 0 to %llu of %u bytes)", label,
                      (unsigned long long)w->file_size, (unsigned long long)needed, (unsigned long long)m->last_pg, m->psize);
        /* Walking would only report every missing page: stop at the figure. */
        return COFFER_OK;
    }
    if (metas_only)
        return COFFER_OK;
    coffer_status st = alloc_walk(w);
    if (st != COFFER_OK)
        return st;
    bit_set(w->used, 0);
    bit_set(w->used, 1);
    const uint8_t *free_db = m->m + LMDB_META_FREE_DB_OFF, *main_db = m->m + LMDB_META_MAIN_DB_OFF;
    if (!meta_root_ok(w, free_db, "the free list", pick) || !meta_root_ok(w, main_db, "the catalogue of sub-databases", pick))
        return COFFER_OK;
    tree t = {.kind = TREE_FREE, .order = LMDB_ORDER_INTEGER, .flags = LMDB_INTEGERKEY};
    snprintf(t.name, sizeof t.name, "the free list");
    walk_tree(w, &t, free_db, (uint64_t)pick);
    tree cat = {.kind = TREE_MAIN};
    snprintf(cat.name, sizeof cat.name, "the catalogue of sub-databases");
    walk_tree(w, &cat, main_db, (uint64_t)pick);
    for (size_t i = 0; i < w->nnamed; i++) {
        tree s = {.kind = TREE_NAMED};
        snprintf(s.name, sizeof s.name, "sub-database %s", w->named[i].name);
        walk_tree(w, &s, w->named[i].db, w->named[i].page);
    }
    if (cf_report_total(r) == w->findings_before)
        report_unreached(w);
    return COFFER_OK;
}

coffer_status cf_pages_check(int fd, const char *label, uint64_t want_txnid, coffer_verify_report *r, cf_pages **out)
{
    return check(fd, label, want_txnid, 0, r, out);
}

coffer_status cf_pages_check_metas(int fd, const char *label, coffer_verify_report *r, cf_pages **out)
{
    return check(fd, label, 0, 1, r, out);
}

int cf_pages_sound(const cf_pages *w) { return w && w->psize && cf_report_total(w->r) == w->findings_before; }

uint64_t cf_pages_locate(cf_pages *w, uint32_t number, const uint8_t *key, size_t klen)
{
    if (!w || !w->psize || !w->stack[0])
        return COFFER_VERIFY_NO_PAGE;
    char name[16];
    int nlen = snprintf(name, sizeof name, "%u", number);
    const named_db *db = NULL;
    for (size_t i = 0; i < w->nnamed && !db; i++)
        if (w->named[i].klen == (size_t)nlen && memcmp(w->named[i].key, name, (size_t)nlen) == 0)
            db = &w->named[i];
    if (!db)
        return COFFER_VERIFY_NO_PAGE;
    lmdb_order order = key_order(lmdb_u16(db->db + LMDB_DB_FLAGS));
    uint64_t pgno = lmdb_u64(db->db + LMDB_DB_ROOT);
    uint8_t *p = w->stack[0];
    for (int level = 0; level < MAX_LEVELS; level++) {
        if (pgno < LMDB_NUM_METAS || pgno > w->last_pg || !read_at(w, pgno * w->psize, p, w->psize))
            return COFFER_VERIFY_NO_PAGE;
        uint16_t flags = lmdb_u16(p + LMDB_OFF_FLAGS), lower = lmdb_u16(p + LMDB_OFF_LOWER);
        if (flags != LMDB_P_BRANCH)
            return flags & LMDB_P_LEAF ? pgno : COFFER_VERIFY_NO_PAGE;
        if (lower < LMDB_PAGE_HEADER || lower > w->psize)
            return COFFER_VERIFY_NO_PAGE;
        int n = (lower - LMDB_PAGE_HEADER) / 2;
        uint64_t child = LMDB_INVALID_PGNO;
        for (int i = 0; i < n; i++) {
            size_t off = lmdb_u16(p + LMDB_PAGE_HEADER + 2 * i);
            if (off + LMDB_NODE_HEADER > w->psize || off + LMDB_NODE_HEADER + lmdb_u16(p + off + 6) > w->psize)
                return COFFER_VERIFY_NO_PAGE;
            const uint8_t *node = p + off;
            if (i > 0 && lmdb_compare(order, key, klen, node + LMDB_NODE_HEADER, lmdb_u16(node + 6)) < 0)
                break;
            child = lmdb_u16(node) | (uint64_t)lmdb_u16(node + 2) << 16 | (uint64_t)lmdb_u16(node + 4) << 32;
        }
        pgno = child;
    }
    return COFFER_VERIFY_NO_PAGE;
}

void cf_pages_free(cf_pages *w)
{
    if (!w)
        return;
    free(w->used);
    free(w->freed);
    for (int i = 0; i < MAX_STACK; i++)
        free(w->stack[i]);
    free(w->value);
    free(w->named);
    free(w);
}
