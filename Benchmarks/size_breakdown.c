/*
 * size_breakdown.c — where the bytes of coffer-bench's file go.
 *
 * Runs the benchmark's writes on a Coffer engine (bulk insert, then update
 * all, as coffer-bench does before it measures the file), then opens the
 * file with LMDB alone, read-only, and reports per sub-database its pages
 * (branch, leaf, overflow), the bytes its entries fill (LMDB's node
 * headers, keys, values and page pointers) and so its fill factor; the
 * index sub-database split by column (primary key, then each index); the
 * metadata split into the change log and the rest; the free pages; the
 * file's size; and the sizes of a copy (coffer_db_write_copy) and of the
 * file compacted on launch (LMDB's compacting copy). For a plain file, also
 * what its clusters' column blocks would take stored as LMDB values of their
 * own (whole, or cut into pieces that fit a leaf or a page), with a checksum
 * or a seal each, and the pages the update would leave free then.
 *
 *   coffer-size [--n N] [--seed S] [--engine coffer|coffer_encrypted|
 *                coffer_clusters|coffer_clusters_encrypted] [--dir DIR] [--json]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <ftw.h>
#include <inttypes.h>
#include <lmdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "coffer_engine.h"
#include "engine.h"
#include "workload.h"

/* LMDB 0.9's page layout (64-bit): a 16-byte page header, 8-byte node
 * headers, 2-byte node pointers, nodes padded to an even size, values
 * larger than the node limit on overflow pages. */
#define PAGE_HEADER 16u
#define NODE_HEADER 8u
#define NODE_POINTER 2u

typedef struct usage {
    uint64_t entries, branch, leaf, overflow; /* pages */
    uint64_t node_bytes;                      /* leaf nodes with their pointers */
    uint64_t key_bytes, value_bytes;          /* payload, overflow values included */
} usage;

static size_t node_limit(size_t psize)
{
    return (((psize - PAGE_HEADER) / 2) & ~(size_t)1) - NODE_POINTER;
}

/* One leaf entry's bytes on its leaf page, and its overflow pages. */
static void count_entry(usage *u, size_t psize, const MDB_val *k, const MDB_val *v)
{
    size_t sz = NODE_HEADER + k->mv_size + v->mv_size;
    if (sz > node_limit(psize)) {
        sz = NODE_HEADER + k->mv_size + sizeof(size_t);
        u->overflow += (PAGE_HEADER - 1 + v->mv_size) / psize + 1;
    }
    u->node_bytes += ((sz + 1) & ~(size_t)1) + NODE_POINTER;
    u->entries++;
    u->key_bytes += k->mv_size;
    u->value_bytes += v->mv_size;
}

static uint64_t dir_total;
static int add_file(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)path, (void)ftw;
    if (type == FTW_F)
        dir_total += (uint64_t)st->st_size;
    return 0;
}

/* Copies the file `from` to `to`; 0, or -1. */
static int copy_file(const char *from, const char *to)
{
    FILE *in = fopen(from, "rb"), *out = in ? fopen(to, "wb") : NULL;
    char buf[1 << 16];
    size_t n;
    int rc = in && out ? 0 : -1;
    while (rc == 0 && (n = fread(buf, 1, sizeof buf, in)) > 0)
        if (fwrite(buf, 1, n, out) != n)
            rc = -1;
    if (in && ferror(in))
        rc = -1;
    if (in)
        fclose(in);
    if (out && fclose(out) != 0)
        rc = -1;
    return rc;
}

/* Removes the store's files from `dir` (a run's, or one left before). */
static void remove_files(const char *dir)
{
    static const char *const names[] = {"bench.coffer", "bench.coffer-lock", "bench.coffer-note"};
    char path[4200];
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        unlink(path);
    }
}

static uint64_t file_bytes(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (uint64_t)st.st_size : 0;
}

static void print_row(const char *what, const usage *u, size_t psize, uint64_t n, int json, int *first)
{
    uint64_t pages = u->branch + u->leaf + u->overflow;
    double fill = u->leaf ? (double)u->node_bytes / ((double)u->leaf * (double)(psize - PAGE_HEADER)) : 0.0;
    if (json) {
        printf("%s\n    {\"part\": \"%s\", \"entries\": %" PRIu64 ", \"branch_pages\": %" PRIu64
               ", \"leaf_pages\": %" PRIu64 ", \"overflow_pages\": %" PRIu64 ", \"bytes\": %" PRIu64
               ", \"key_bytes\": %" PRIu64 ", \"value_bytes\": %" PRIu64 ", \"leaf_fill\": %.3f}",
               *first ? "" : ",", what, u->entries, u->branch, u->leaf, u->overflow, pages * psize, u->key_bytes,
               u->value_bytes, fill);
        *first = 0;
        return;
    }
    printf("%-28s %9" PRIu64 " %7" PRIu64 " %7" PRIu64 " %8" PRIu64 " %12" PRIu64 " %9.1f %9.1f %6.0f%%\n", what,
           u->entries, u->branch, u->leaf, u->overflow, pages * psize, (double)(pages * psize) / (double)n,
           (double)(u->key_bytes + u->value_bytes) / (double)n, fill * 100.0);
}

/* Walks every entry of `dbi` into `u` (one usage) or, split by the first
 * two key bytes (an index sub-database's column), into cols[]. */
static int walk(MDB_txn *txn, MDB_dbi dbi, size_t psize, usage *u, usage *cols, size_t ncols, usage *log)
{
    MDB_stat st;
    MDB_cursor *cur;
    if (mdb_stat(txn, dbi, &st) || mdb_cursor_open(txn, dbi, &cur))
        return -1;
    u->branch = st.ms_branch_pages;
    u->leaf = st.ms_leaf_pages;
    MDB_val k, v;
    int rc;
    while ((rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) == 0) {
        count_entry(u, psize, &k, &v);
        if (cols && k.mv_size >= 2) {
            size_t c = ((size_t)((uint8_t *)k.mv_data)[0] << 8) | ((uint8_t *)k.mv_data)[1];
            count_entry(&cols[c < ncols ? c : ncols - 1], psize, &k, &v);
        } else if (log && k.mv_size == 9 && ((char *)k.mv_data)[0] == 'L') {
            count_entry(log, psize, &k, &v);
        }
    }
    mdb_cursor_close(cur);
    u->overflow = st.ms_overflow_pages;
    return rc == MDB_NOTFOUND ? 0 : -1;
}


/* ---- column blocks stored apart: what they would take ---------------------
 * Read from a plain file of format 5, whose clusters hold their head and
 * column blocks in one LMDB value (docs/FORMAT.md, "Clusters"): per column,
 * the size of each cluster's block as opened, and from them the pages a
 * layout storing each block (or pieces of it) as an LMDB value of its own,
 * under a key of column ‖ cluster (so a column's blocks follow one another),
 * would take, and the pages the update of coffer-bench (columns `i64` and
 * `d`, every object) would leave free in it: the pages of those columns'
 * blocks, which it writes again, where today it writes every cluster whole.
 * Nodes are packed on leaves in key order as LMDB's appends pack them. */
enum { PROJ_COLS = 64, PROJ_LEAF = 4096 - PAGE_HEADER };

typedef struct proj_pack {
    uint64_t leaves, overflow, used; /* pages; bytes used on the current leaf */
} proj_pack;

static void pack_node(proj_pack *p, size_t psize, size_t key, size_t value)
{
    size_t sz = NODE_HEADER + key + value;
    if (sz > node_limit(psize)) {
        p->overflow += (PAGE_HEADER - 1 + value) / psize + 1;
        sz = NODE_HEADER + key + sizeof(size_t);
    }
    sz = ((sz + 1) & ~(size_t)1) + NODE_POINTER;
    if (!p->leaves || p->used + sz > psize - PAGE_HEADER) {
        p->leaves++;
        p->used = 0;
    }
    p->used += sz;
}

/* How a block of `len` bytes is cut into values: 0 whole, 1 pieces that fit
 * a leaf (as few as can, of equal size), 2 pieces of one overflow page each
 * and a last piece, on a leaf when it fits one. */
enum { CUT_WHOLE, CUT_LEAF, CUT_PAGE, CUT_COUNT };
static const char *const cut_names[CUT_COUNT] = {"one value per block", "pieces that fit a leaf",
                                                 "pieces of one page each"};

static void pack_block(proj_pack *p, size_t psize, int cut, size_t len, size_t ovh)
{
    size_t key = 11 + (cut != CUT_WHOLE); /* 0x02 ‖ column (u16) ‖ cluster (u64) [‖ piece] */
    size_t leaf_max = node_limit(psize) - NODE_HEADER - key - ovh - 1;
    if (cut == CUT_WHOLE || len <= leaf_max) {
        pack_node(p, psize, key, len + ovh);
    } else if (cut == CUT_LEAF) {
        size_t pieces = (len + leaf_max - 1) / leaf_max;
        for (size_t i = 0; i < pieces; i++)
            pack_node(p, psize, key, len / pieces + (i < len % pieces) + ovh);
    } else {
        size_t page_max = psize - PAGE_HEADER - ovh;
        for (; len > leaf_max; len -= len < page_max ? len : page_max)
            pack_node(p, psize, key, (len < page_max ? len : page_max) + ovh);
        if (len)
            pack_node(p, psize, key, len + ovh);
    }
}

typedef struct proj_cols {
    uint64_t clusters, blocks[PROJ_COLS], bytes[PROJ_COLS], head_bytes;
    size_t *sizes[PROJ_COLS]; /* per cluster, the block's size as opened */
    size_t *heads;
    size_t cap, ncols;
} proj_cols;

/* Reads every cluster of object sub-database `dbi` of a plain file into
 * *pc; 0, or -1 when a value is not a plain cluster of format 5. */
static int proj_read(MDB_txn *txn, MDB_dbi dbi, proj_cols *pc)
{
    MDB_cursor *cur;
    MDB_val k, v;
    if (mdb_cursor_open(txn, dbi, &cur))
        return -1;
    int rc = 0;
    while (rc == 0 && mdb_cursor_get(cur, &k, &v, MDB_NEXT) == 0) {
        const uint8_t *b = v.mv_data;
        if (k.mv_size != 8 || v.mv_size < 4)
            continue; /* an object stored outside its cluster */
        size_t h = (size_t)b[0] | (size_t)b[1] << 8 | (size_t)b[2] << 16 | (size_t)b[3] << 24;
        const uint8_t *head = b + 4;
        if (h < 6 || 4 + h > v.mv_size)
            return mdb_cursor_close(cur), -1;
        size_t n = (size_t)head[2] | (size_t)head[3] << 8, nc = (size_t)head[4] | (size_t)head[5] << 8;
        size_t dir = 6 + n + ((head[1] & 1) ? (n + 7) / 8 : 0);
        if (dir + 4 * nc != h || nc > PROJ_COLS)
            return mdb_cursor_close(cur), -1;
        if (pc->clusters == pc->cap) {
            pc->cap = pc->cap ? 2 * pc->cap : 1024;
            for (size_t c = 0; c < PROJ_COLS; c++)
                if (!(pc->sizes[c] = realloc(pc->sizes[c], pc->cap * sizeof(size_t))))
                    return mdb_cursor_close(cur), -1;
            if (!(pc->heads = realloc(pc->heads, pc->cap * sizeof(size_t))))
                return mdb_cursor_close(cur), -1;
        }
        size_t start = 0;
        for (size_t c = 0; c < PROJ_COLS; c++) {
            size_t end = start;
            if (c < nc) {
                const uint8_t *e = head + dir + 4 * c;
                end = (size_t)e[0] | (size_t)e[1] << 8 | (size_t)e[2] << 16 | (size_t)e[3] << 24;
            }
            pc->sizes[c][pc->clusters] = end - start;
            pc->bytes[c] += end - start;
            pc->blocks[c] += c < nc;
            start = end;
        }
        pc->heads[pc->clusters] = h;
        pc->head_bytes += h;
        if (nc > pc->ncols)
            pc->ncols = nc;
        pc->clusters++;
    }
    mdb_cursor_close(cur);
    return 0;
}

/* Prints, for a checksum (4 bytes) and a seal (40) per value, the pages of
 * each way of cutting the blocks, and the update's free pages. */
static void proj_print(const proj_cols *pc, size_t psize, uint64_t n, const unsigned *updated, size_t nupdated,
                       int json, int *first)
{
    static const size_t overheads[2] = {4, 40};
    if (!json) {
        printf("\ncolumn blocks stored apart (from this file's %" PRIu64 " clusters), bytes per object:\n",
               pc->clusters);
        printf("%-8s", "column");
        for (size_t c = 0; c < pc->ncols; c++)
            printf(" %7zu", c);
        printf("\n%-8s", "opened");
        for (size_t c = 0; c < pc->ncols; c++)
            printf(" %7.1f", (double)pc->bytes[c] / (double)n);
        printf("\n");
        printf("%-26s %8s %9s %9s %12s %9s\n", "cut", "overhead", "heads", "blocks", "update free", "total");
    }
    for (size_t o = 0; o < 2; o++) {
        proj_pack heads = {0};
        for (uint64_t i = 0; i < pc->clusters; i++)
            pack_node(&heads, psize, 8, pc->heads[i] + overheads[o]);
        for (int cut = 0; cut < CUT_COUNT; cut++) {
            uint64_t pages = 0, freed = 0;
            for (size_t c = 0; c < pc->ncols; c++) {
                proj_pack p = {0};
                for (uint64_t i = 0; i < pc->clusters; i++)
                    pack_block(&p, psize, cut, pc->sizes[c][i], overheads[o]);
                uint64_t col_pages = p.leaves + p.overflow;
                pages += col_pages;
                for (size_t u = 0; u < nupdated; u++)
                    if (updated[u] == c)
                        freed += col_pages;
            }
            double on = (double)n, head_b = (double)((heads.leaves + heads.overflow) * psize) / on;
            double blocks_b = (double)(pages * psize) / on, free_b = (double)(freed * psize) / on;
            if (json) {
                printf("%s\n    {\"part\": \"blocks apart: %s, overhead %zu\", \"head_bytes\": %.0f, "
                       "\"block_bytes\": %.0f, \"update_free_bytes\": %.0f}",
                       *first ? "" : ",", cut_names[cut], overheads[o], head_b * on, blocks_b * on, free_b * on);
                *first = 0;
            } else {
                printf("%-26s %8zu %9.1f %9.1f %12.1f %9.1f\n", cut_names[cut], overheads[o], head_b, blocks_b,
                       free_b, head_b + blocks_b + free_b);
            }
        }
    }
}

static int report(const char *path, uint64_t n, uint64_t total, uint64_t copy_total, uint64_t compacted_total, int json,
                  int encrypted)
{
    proj_cols pc = {0};
    int proj_ok = !encrypted;
    MDB_env *env;
    MDB_txn *txn;
    MDB_dbi main_dbi;
    int rc = mdb_env_create(&env);
    if (!rc)
        rc = mdb_env_set_maxdbs(env, 4096);
    if (!rc)
        rc = mdb_env_set_mapsize(env, (size_t)64 << 30);
    if (!rc)
        rc = mdb_env_open(env, path, MDB_RDONLY | MDB_NOSUBDIR | MDB_NOLOCK, 0644);
    if (!rc)
        rc = mdb_txn_begin(env, NULL, MDB_RDONLY, &txn);
    if (!rc)
        rc = mdb_dbi_open(txn, NULL, 0, &main_dbi);
    if (rc) {
        fprintf(stderr, "coffer-size: cannot read %s: %s\n", path, mdb_strerror(rc));
        return -1;
    }
    MDB_stat env_stat;
    MDB_envinfo info;
    mdb_env_stat(env, &env_stat);
    mdb_env_info(env, &info);
    size_t psize = env_stat.ms_psize;
    uint64_t pages_used = (uint64_t)info.me_last_pgno + 1;

    /* Free pages: the free list's records are page lists led by their length. */
    uint64_t free_pages = 0;
    MDB_cursor *cur;
    MDB_val k, v;
    if (mdb_cursor_open(txn, 0, &cur) == 0) {
        while (mdb_cursor_get(cur, &k, &v, MDB_NEXT) == 0) {
            size_t len;
            if (v.mv_size >= sizeof len) {
                memcpy(&len, v.mv_data, sizeof len);
                free_pages += len;
            }
        }
        mdb_cursor_close(cur);
    }
    MDB_stat free_stat;
    mdb_stat(txn, 0, &free_stat);
    uint64_t free_tree = free_stat.ms_branch_pages + free_stat.ms_leaf_pages + free_stat.ms_overflow_pages;

    if (json)
        printf("{\n  \"objects\": %" PRIu64 ",\n  \"page_size\": %zu,\n  \"parts\": [", n, psize);
    else
        printf("%-28s %9s %7s %7s %8s %12s %9s %9s %7s\n", "part", "entries", "branch", "leaf", "overflow", "bytes",
               "B/object", "payload/o", "fill");
    int first = 1;
    uint64_t accounted = 0;
    char name[32];
    /* The catalogue lists the sub-databases by name: 0, 1, 2t, 2t + 1. */
    MDB_cursor *cat;
    if (mdb_cursor_open(txn, main_dbi, &cat))
        return -1;
    while (mdb_cursor_get(cat, &k, &v, MDB_NEXT) == 0) {
        if (k.mv_size == 0 || k.mv_size >= sizeof name)
            continue;
        memcpy(name, k.mv_data, k.mv_size);
        name[k.mv_size] = 0;
        MDB_dbi dbi;
        if (mdb_dbi_open(txn, name, 0, &dbi))
            continue;
        unsigned long number = strtoul(name, NULL, 10);
        usage u = {0}, log = {0};
        char label[64];
        if (number >= 2 && number % 2 == 1) {
            enum { NCOLS = 64 };
            usage cols[NCOLS] = {{0}};
            if (walk(txn, dbi, psize, &u, cols, NCOLS, NULL))
                return -1;
            uint64_t node_total = u.node_bytes;
            snprintf(label, sizeof label, "%s index (all)", name);
            print_row(label, &u, psize, n, json, &first);
            for (size_t c = 0; c < NCOLS; c++) {
                if (!cols[c].entries)
                    continue;
                /* Pages split in proportion to the column's bytes. */
                double share = node_total ? (double)cols[c].node_bytes / (double)node_total : 0.0;
                cols[c].leaf = (uint64_t)((double)u.leaf * share + 0.5);
                cols[c].branch = (uint64_t)((double)u.branch * share + 0.5);
                snprintf(label, sizeof label, "  column %zu (share)", c);
                print_row(label, &cols[c], psize, n, json, &first);
            }
        } else {
            if (walk(txn, dbi, psize, &u, NULL, 0, number == 0 ? &log : NULL))
                return -1;
            if (number >= 2 && proj_ok && proj_read(txn, dbi, &pc))
                proj_ok = 0; /* not clusters of format 5 */
            snprintf(label, sizeof label, "%s %s", name,
                     number == 0 ? "metadata" : number == 1 ? "collections" : "objects");
            print_row(label, &u, psize, n, json, &first);
            if (number == 0 && log.entries) {
                double share = u.node_bytes ? (double)log.node_bytes / (double)u.node_bytes : 0.0;
                log.leaf = (uint64_t)((double)u.leaf * share + 0.5);
                log.branch = (uint64_t)((double)u.branch * share + 0.5);
                print_row("  change log (share)", &log, psize, n, json, &first);
            }
        }
        accounted += u.branch + u.leaf + u.overflow;
    }
    mdb_cursor_close(cat);
    MDB_stat main_stat;
    mdb_stat(txn, main_dbi, &main_stat);
    uint64_t catalogue = main_stat.ms_branch_pages + main_stat.ms_leaf_pages;
    uint64_t file = file_bytes(path);
    static const unsigned updated[] = {PROP_I64, PROP_D}; /* columns numbered as the properties */
    if (json && proj_ok && pc.clusters)
        proj_print(&pc, psize, n, updated, 2, json, &first);
    if (json) {
        printf("\n  ],\n  \"catalogue_pages\": %" PRIu64 ",\n  \"free_pages\": %" PRIu64
               ",\n  \"free_list_pages\": %" PRIu64 ",\n  \"pages_used\": %" PRIu64 ",\n  \"data_file_bytes\": %" PRIu64
               ",\n  \"file_size_bytes\": %" PRIu64 ",\n  \"copy_bytes\": %" PRIu64
               ",\n  \"compacted_on_launch_bytes\": %" PRIu64 "\n}\n",
               catalogue, free_pages, free_tree, pages_used, file, total, copy_total, compacted_total);
    } else {
        double o = (double)n;
        uint64_t other = pages_used - accounted - free_pages - free_tree - catalogue;
        printf("%-28s %12" PRIu64 " %9.1f\n", "free pages", free_pages * psize, (double)(free_pages * psize) / o);
        printf("%-28s %12" PRIu64 " %9.1f\n", "free list, catalogue, meta",
               (free_tree + catalogue + other) * psize, (double)((free_tree + catalogue + other) * psize) / o);
        printf("%-28s %12" PRIu64 " %9.1f\n", "pages in use (last page)", pages_used * psize,
               (double)(pages_used * psize) / o);
        printf("%-28s %12" PRIu64 " %9.1f\n", "data file", file, (double)file / o);
        printf("%-28s %12" PRIu64 " %9.1f\n", "all files (as coffer-bench)", total, (double)total / o);
        printf("%-28s %12" PRIu64 " %9.1f\n", "copy (all files)", copy_total, (double)copy_total / o);
        printf("%-28s %12" PRIu64 " %9.1f\n", "compacted on launch (all)", compacted_total,
               (double)compacted_total / o);
    }
    if (!json && proj_ok && pc.clusters)
        proj_print(&pc, psize, n, updated, 2, json, &first);
    for (size_t c = 0; c < PROJ_COLS; c++)
        free(pc.sizes[c]);
    free(pc.heads);
    mdb_txn_abort(txn);
    mdb_env_close(env);
    return 0;
}

static int always(uint64_t total, uint64_t used, void *ctx)
{
    (void)total, (void)used, (void)ctx;
    return 1;
}

/* Compacts the store at `path` as compaction on launch does (LMDB's
 * compacting copy renamed over it); its files' bytes, or 0 on failure. */
static uint64_t compact_on_launch(const char *path, const char *dir, const unsigned char *key, size_t key_size)
{
    coffer_config *config = NULL;
    coffer_db *db = NULL;
    coffer_status st;
    if ((st = coffer_config_new(&config)) != COFFER_OK || (st = coffer_config_set_path(config, path)) != COFFER_OK ||
        (key && (st = coffer_config_set_encryption_key(config, key, key_size)) != COFFER_OK) ||
        (st = coffer_config_set_should_compact_on_launch(config, always, NULL)) != COFFER_OK ||
        (st = coffer_open(config, &db)) != COFFER_OK) {
        fprintf(stderr, "coffer-size: compacting on launch: %s\n", coffer_last_error());
        coffer_config_free(config);
        return 0;
    }
    coffer_config_free(config);
    coffer_close(db);
    dir_total = 0;
    nftw(dir, add_file, 8, FTW_PHYS);
    return dir_total;
}

static int usage_exit(void)
{
    fprintf(stderr, "usage: coffer-size [--n N] [--seed S] [--engine coffer|coffer_encrypted|coffer_clusters|"
                    "coffer_clusters_encrypted] [--dir DIR] [--json]\n");
    return 2;
}

int main(int argc, char **argv)
{
    bench_workload w = {.seed = 42, .n = 100000, .queries = 1, .scans = 1, .prefix_queries = 1, .single_writes = 1,
                        .list_length = 1};
    const bench_engine *engine = &bench_engine_coffer;
    const char *dir = NULL;
    int json = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0) {
            json = 1;
        } else if (i + 1 < argc && strcmp(argv[i], "--n") == 0) {
            w.n = strtoull(argv[++i], NULL, 10);
        } else if (i + 1 < argc && strcmp(argv[i], "--seed") == 0) {
            w.seed = strtoull(argv[++i], NULL, 10);
        } else if (i + 1 < argc && strcmp(argv[i], "--dir") == 0) {
            dir = argv[++i];
        } else if (i + 1 < argc && strcmp(argv[i], "--engine") == 0) {
            const char *e = argv[++i];
            engine = strcmp(e, "coffer") == 0                      ? &bench_engine_coffer
                     : strcmp(e, "coffer_encrypted") == 0          ? &bench_engine_coffer_encrypted
                     : strcmp(e, "coffer_clusters") == 0           ? &bench_engine_coffer_clusters
                     : strcmp(e, "coffer_clusters_encrypted") == 0 ? &bench_engine_coffer_clusters_encrypted
                                                                   : NULL;
            if (!engine)
                return usage_exit();
        } else {
            return usage_exit();
        }
    }
    if (w.n == 0)
        return usage_exit();
    char tmp[] = "/tmp/coffer-size-XXXXXX";
    int made_dir = !dir;
    if (!dir && !(dir = mkdtemp(tmp))) {
        perror("coffer-size: mkdtemp");
        return 1;
    }
    if (strlen(dir) > 3000) {
        fprintf(stderr, "coffer-size: the directory's path is too long\n");
        return 2;
    }
    char work[4096], copy[4200], copy_dir[4096];
    snprintf(work, sizeof work, "%s/store", dir);
    snprintf(copy_dir, sizeof copy_dir, "%s/copy", dir);
    if ((mkdir(dir, 0755) && errno != EEXIST) || (mkdir(work, 0755) && errno != EEXIST) ||
        (mkdir(copy_dir, 0755) && errno != EEXIST)) {
        perror("coffer-size: mkdir");
        return 1;
    }
    remove_files(work);
    remove_files(copy_dir);
    if (bench_workload_prepare(&w)) {
        fprintf(stderr, "coffer-size: out of memory\n");
        return 1;
    }
    void *state;
    uint64_t check = 0;
    const bench_op ops[] = {BENCH_OP_INSERT_BULK, BENCH_OP_READ_BY_PK, BENCH_OP_UPDATE_ALL, BENCH_OP_READ_ALL};
    if (engine->open(work, &state)) {
        fprintf(stderr, "coffer-size: %s\n", bench_failure());
        return 1;
    }
    for (size_t i = 0; i < sizeof ops / sizeof *ops; i++) {
        if (engine->ops[ops[i]](state, &w, &check)) {
            fprintf(stderr, "coffer-size: %s: %s\n", bench_op_key(ops[i]), bench_failure());
            return 1;
        }
    }
    dir_total = 0;
    nftw(work, add_file, 8, FTW_PHYS);
    uint64_t total = dir_total;
    coffer_bench *b = state;
    snprintf(copy, sizeof copy, "%s/bench.coffer", copy_dir);
    unsigned char key[COFFER_ENCRYPTION_KEY_SIZE];
    for (size_t i = 0; i < sizeof key; i++)
        key[i] = (unsigned char)(i * 37 + 11);
    coffer_status st = coffer_db_write_copy(b->db, copy, b->encrypted ? key : NULL, b->encrypted ? sizeof key : 0);
    if (st != COFFER_OK) {
        fprintf(stderr, "coffer-size: write copy: %s\n", coffer_last_error());
        return 1;
    }
    engine->close(state);
    dir_total = 0;
    nftw(copy_dir, add_file, 8, FTW_PHYS);
    uint64_t copy_total = dir_total;
    if (!json)
        printf("%s, N = %" PRIu64 ", after bulk insert and update all\n", engine->key, w.n);
    /* Compaction on launch of a byte copy of the store (the store itself is
     * read below as it was left). */
    char compact_dir[4096], compact_path[4200];
    snprintf(compact_dir, sizeof compact_dir, "%s/compact", dir);
    snprintf(compact_path, sizeof compact_path, "%s/bench.coffer", compact_dir);
    if ((mkdir(compact_dir, 0755) && errno != EEXIST) || (remove_files(compact_dir), copy_file(b->path, compact_path))) {
        fprintf(stderr, "coffer-size: cannot copy the store to %s\n", compact_path);
        return 1;
    }
    uint64_t compacted_total = compact_on_launch(compact_path, compact_dir, b->encrypted ? key : NULL,
                                                 b->encrypted ? sizeof key : 0);
    remove_files(compact_dir);
    rmdir(compact_dir);
    if (!compacted_total)
        return 1;
    int rc = report(b->path, w.n, total, copy_total, compacted_total, json, b->encrypted);
    bench_workload_release(&w);
    remove_files(work);
    remove_files(copy_dir);
    rmdir(work);
    rmdir(copy_dir);
    if (made_dir)
        rmdir(dir);
    return rc ? 1 : 0;
}
