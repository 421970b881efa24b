/* changelog — recording a write transaction's changes, writing them as one
 * metadata entry with its commit, reading entries back, and trimming the
 * entries that no open read transaction of any process can still need. */
#include "storage/changelog.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "storage/handles.h"
#include "storage/record.h"
#include "storage/txn.h"
#include "util/buffer.h"
#include "util/error.h"

#define LOG_ENCODING 1
#define LOG_KEY_SIZE 9 /* 'L' + version (u64 BE) */
#define NO_COLUMN UINT32_MAX

/* One report. Modified columns below 64 gather in `mask`; a column above
 * that gets a report of its own in `column`. */
typedef struct log_event {
    uint32_t table;
    uint32_t kind;
    uint64_t key;
    uint64_t mask;
    uint32_t column;
    uint32_t seq; /* report order, which qsort would not keep */
} log_event;

struct cf_changelog {
    log_event *events;
    size_t nevents, cap;
    cf_log_coll_op *ops;
    size_t nops, ops_cap;
};

static coffer_status out_of_memory(coffer_txn *txn)
{
    txn->failed = 1;
    return cf_error(COFFER_ERR_NO_MEMORY, "out of memory recording the changes of a write transaction");
}

static cf_changelog *changelog_of(coffer_txn *txn)
{
    if (!txn->log)
        txn->log = calloc(1, sizeof *txn->log);
    return txn->log;
}

/* An object's earlier reports are dropped when its whole table is cleared:
 * what was inserted is gone again, what existed is deleted by the clear. */
static void drop_table_events(cf_changelog *log, uint32_t table)
{
    size_t kept = 0;
    for (size_t i = 0; i < log->nevents; i++)
        if (log->events[i].table != table)
            log->events[kept++] = log->events[i];
    log->nevents = kept;
}

coffer_status cf_log_object_change(coffer_txn *txn, uint32_t table, uint64_t key, uint32_t kind, uint32_t column)
{
    cf_changelog *log = changelog_of(txn);
    if (!log)
        return out_of_memory(txn);
    if (kind == CF_LOG_MODIFY && column < 64 && log->nevents) {
        /* Writes to one object come together: fold them into one report. */
        log_event *last = &log->events[log->nevents - 1];
        if (last->table == table && last->key == key && last->kind == CF_LOG_MODIFY && last->column == NO_COLUMN) {
            last->mask |= UINT64_C(1) << column;
            return COFFER_OK;
        }
    }
    if (kind == CF_LOG_CLEAR)
        drop_table_events(log, table);
    log_event *grown = cf_grow(log->events, log->nevents, &log->cap, sizeof *log->events, 64);
    if (!grown)
        return out_of_memory(txn);
    log->events = grown;
    log_event *e = &log->events[log->nevents++];
    e->table = table;
    e->kind = kind;
    e->key = kind == CF_LOG_CLEAR ? 0 : key;
    e->mask = kind == CF_LOG_MODIFY && column < 64 ? UINT64_C(1) << column : 0;
    e->column = kind == CF_LOG_MODIFY && column >= 64 ? column : NO_COLUMN;
    return COFFER_OK;
}

coffer_status cf_log_collection_op(coffer_txn *txn, uint32_t table, uint32_t column, uint64_t key, uint64_t coll_id,
                                   uint32_t op, uint64_t a, uint64_t b)
{
    cf_changelog *log = changelog_of(txn);
    if (!log)
        return out_of_memory(txn);
    cf_log_coll_op *grown = cf_grow(log->ops, log->nops, &log->ops_cap, sizeof *log->ops, 16);
    if (!grown)
        return out_of_memory(txn);
    log->ops = grown;
    log->ops[log->nops++] = (cf_log_coll_op){table, column, key, coll_id, op, a, b};
    return COFFER_OK;
}

void cf_log_discard(coffer_txn *txn)
{
    if (!txn->log)
        return;
    free(txn->log->events);
    free(txn->log->ops);
    free(txn->log);
    txn->log = NULL;
}

/* ------------------------------------------------------------------------ */
/* Encoding                                                                  */
/* ------------------------------------------------------------------------ */

static void put_varint(cf_buf *b, uint64_t v)
{
    if (b->failed || b->cap - b->len <= 10) {
        cf_buf_varint(b, v); /* grows the buffer */
        return;
    }
    uint8_t *p = b->p + b->len;
    while (v >= 0x80) { /* cf_buf_varint's bytes, written in place */
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    *p = 0; /* as cf_buf_put leaves it */
    b->len = (size_t)(p - b->p);
}

static int get_varint(const uint8_t **p, const uint8_t *end, uint64_t *out)
{
    uint64_t v = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
        if (*p >= end)
            return -1;
        uint8_t byte = *(*p)++;
        v |= (uint64_t)(byte & 0x7f) << shift;
        if (!(byte & 0x80)) {
            *out = v;
            return 0;
        }
    }
    return -1;
}

/* Order: table, then a clear before the table's objects, then key, then
 * report order. */
static int compare_events(const void *pa, const void *pb)
{
    const log_event *a = pa, *b = pb;
    if (a->table != b->table)
        return a->table < b->table ? -1 : 1;
    int ca = a->kind == CF_LOG_CLEAR, cb = b->kind == CF_LOG_CLEAR;
    if (ca != cb)
        return ca ? -1 : 1;
    if (a->key != b->key)
        return a->key < b->key ? -1 : 1;
    if (a->seq != b->seq)
        return a->seq < b->seq ? -1 : 1;
    return 0;
}

/* Sorts n events into compare_events' order with stable byte-wise radix
 * passes (key, then clear first, then table), each skipped when all its
 * digits agree: a few linear passes instead of n log n comparisons, for
 * commits that change many objects. The order within one object's reports
 * is kept as the passes are stable. Returns 0, or -1 out of memory (the
 * events left as they were). */
static int sort_events(log_event *ev, size_t n)
{
    log_event *tmp = malloc(n * sizeof *tmp);
    if (!tmp)
        return -1;
    log_event *src = ev, *dst = tmp;
    /* digits, least significant first: 8 of the key, the clear flag, 4 of the table */
    for (int pass = 0; pass < 13; pass++) {
        size_t count[256] = {0};
        for (size_t i = 0; i < n; i++) {
            const log_event *e = &src[i];
            unsigned d = pass < 8    ? (unsigned)(e->key >> (8 * pass)) & 0xFF
                         : pass == 8 ? e->kind != CF_LOG_CLEAR
                                     : (unsigned)(e->table >> (8 * (pass - 9))) & 0xFF;
            count[d]++;
        }
        int trivial = 0;
        for (int d = 0; d < 256; d++)
            trivial |= count[d] == n;
        if (trivial)
            continue;
        size_t at = 0;
        for (int d = 0; d < 256; d++) {
            size_t c = count[d];
            count[d] = at;
            at += c;
        }
        for (size_t i = 0; i < n; i++) {
            const log_event *e = &src[i];
            unsigned d = pass < 8    ? (unsigned)(e->key >> (8 * pass)) & 0xFF
                         : pass == 8 ? e->kind != CF_LOG_CLEAR
                                     : (unsigned)(e->table >> (8 * (pass - 9))) & 0xFF;
            dst[count[d]++] = *e;
        }
        log_event *t = src;
        src = dst;
        dst = t;
    }
    if (src != ev)
        memcpy(ev, src, n * sizeof *ev);
    free(tmp);
    return 0;
}

static int compare_u32(const void *pa, const void *pb)
{
    uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
    return a < b ? -1 : a > b;
}

/* Writes the folded object reports of events[from, to) (one object). */
static size_t encode_object(cf_buf *b, const log_event *ev, size_t n, uint32_t *big, size_t *nbig_out)
{
    uint32_t kinds = 0;
    uint64_t mask = 0;
    size_t nbig = 0;
    for (size_t i = 0; i < n; i++) {
        kinds |= ev[i].kind;
        mask |= ev[i].mask;
        if (ev[i].column != NO_COLUMN)
            big[nbig++] = ev[i].column;
    }
    *nbig_out = 0;
    uint32_t kind;
    if (kinds & CF_LOG_CLEAR)
        kind = CF_LOG_CLEAR;
    else if ((kinds & CF_LOG_INSERT) && (kinds & CF_LOG_DELETE))
        return 0; /* created and deleted again: it never existed for anyone else */
    else if (kinds & CF_LOG_INSERT)
        kind = CF_LOG_INSERT;
    else if (kinds & CF_LOG_DELETE)
        kind = CF_LOG_DELETE;
    else
        kind = CF_LOG_MODIFY;
    put_varint(b, ev[0].table);
    put_varint(b, ev[0].key);
    put_varint(b, kind);
    if (kind == CF_LOG_MODIFY) {
        size_t ncols = (size_t)__builtin_popcountll(mask);
        if (nbig > 1)
            qsort(big, nbig, sizeof *big, compare_u32);
        size_t unique = 0;
        for (size_t i = 0; i < nbig; i++)
            if (!unique || big[unique - 1] != big[i])
                big[unique++] = big[i];
        put_varint(b, ncols + unique);
        for (uint64_t m = mask; m; m &= m - 1)
            put_varint(b, (uint64_t)__builtin_ctzll(m));
        for (size_t i = 0; i < unique; i++)
            put_varint(b, big[i]);
    }
    *nbig_out = nbig;
    return 1;
}

static coffer_status encode(coffer_txn *txn, cf_buf *b, int *empty)
{
    cf_changelog *log = txn->log;
    *empty = 1;
    if (!log || (!log->nevents && !log->nops)) {
        uint8_t nothing[4] = {LOG_ENCODING, (uint8_t)txn->origin, 0, 0}; /* no objects, no operations */
        cf_buf_put(b, nothing, sizeof nothing);
        return b->failed ? out_of_memory(txn) : COFFER_OK;
    }
    for (size_t i = 0; i < log->nevents; i++)
        log->events[i].seq = (uint32_t)i;
    if (sort_events(log->events, log->nevents) != 0)
        qsort(log->events, log->nevents, sizeof *log->events, compare_events);

    uint32_t *big = NULL;
    if (log->nevents) {
        big = malloc(log->nevents * sizeof *big);
        if (!big)
            return out_of_memory(txn);
    }
    cf_buf objects = {0};
    size_t nobjects = 0;
    for (size_t i = 0; i < log->nevents;) {
        size_t j = i + 1;
        while (j < log->nevents && log->events[j].table == log->events[i].table &&
               log->events[j].key == log->events[i].key &&
               (log->events[j].kind == CF_LOG_CLEAR) == (log->events[i].kind == CF_LOG_CLEAR))
            j++;
        size_t nbig;
        nobjects += encode_object(&objects, log->events + i, j - i, big, &nbig);
        i = j;
    }
    free(big);

    uint8_t head[2] = {LOG_ENCODING, (uint8_t)txn->origin};
    cf_buf_put(b, head, 2);
    put_varint(b, nobjects);
    if (objects.len)
        cf_buf_put(b, objects.p, objects.len);
    free(objects.p);
    put_varint(b, log->nops);
    for (size_t i = 0; i < log->nops; i++) {
        const cf_log_coll_op *op = &log->ops[i];
        put_varint(b, op->table);
        put_varint(b, op->column);
        put_varint(b, op->key);
        put_varint(b, op->coll_id);
        put_varint(b, op->op);
        put_varint(b, op->a);
        put_varint(b, op->b);
    }
    if (b->failed || objects.failed)
        return out_of_memory(txn);
    *empty = nobjects == 0 && log->nops == 0;
    return COFFER_OK;
}

static size_t log_key(uint64_t version, uint8_t out[LOG_KEY_SIZE])
{
    out[0] = 'L';
    cf_put_be64(out + 1, version);
    return LOG_KEY_SIZE;
}

/* ------------------------------------------------------------------------ */
/* Trimming                                                                  */
/* ------------------------------------------------------------------------ */

typedef struct oldest_reader {
    uint64_t txnid; /* UINT64_MAX: no reader */
} oldest_reader;

/* Keeps the oldest version a reader slot reads (idle slots read none). */
static void note_reader(int64_t pid, uint64_t thread, uint64_t version, void *ctx)
{
    (void)pid;
    (void)thread;
    oldest_reader *r = ctx;
    if (version != 0 && version < r->txnid)
        r->txnid = version;
}

/* Deletes the entries of versions no open read transaction needs: a reader
 * at version v needs the entries after v. Without readers only the newest
 * entry (this commit's) stays. */
static coffer_status trim(coffer_txn *txn, uint64_t version)
{
    oldest_reader r = {UINT64_MAX};
    if (cf_each_reader(mdb_txn_env(txn->mdb), note_reader, &r) < 0)
        return COFFER_OK; /* keeping entries longer is always safe */
    uint64_t cutoff = r.txnid == UINT64_MAX || r.txnid >= version ? version - 1 : r.txnid;
    MDB_cursor *cur;
    int rc = mdb_cursor_open(txn->mdb, txn->db->meta_dbi, &cur);
    if (rc != 0)
        return cf_txn_write_error(txn, rc, "cannot trim the change log");
    uint8_t first[LOG_KEY_SIZE];
    log_key(0, first);
    for (;;) {
        /* Seek again after each delete rather than trust the cursor's
         * position after mdb_cursor_del. */
        MDB_val k = {LOG_KEY_SIZE, first}, v;
        rc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE);
        if (rc != 0 || k.mv_size != LOG_KEY_SIZE || ((const uint8_t *)k.mv_data)[0] != 'L' ||
            cf_get_be64((const uint8_t *)k.mv_data + 1) > cutoff)
            break;
        if ((rc = mdb_cursor_del(cur, 0)) != 0)
            break;
    }
    mdb_cursor_close(cur);
    if (rc != 0 && rc != MDB_NOTFOUND)
        return cf_txn_write_error(txn, rc, "cannot trim the change log");
    return COFFER_OK;
}

coffer_status cf_log_commit(coffer_txn *txn)
{
    cf_buf b = {0};
    int empty;
    coffer_status st = encode(txn, &b, &empty);
    if (st == COFFER_OK && (!empty || txn->log_always)) {
        uint64_t version = (uint64_t)mdb_txn_id(txn->mdb);
        uint8_t key[LOG_KEY_SIZE];
        st = cf_store_put(txn, txn->db->meta_dbi, CF_META_DBI, key, log_key(version, key), b.p, b.len, 0,
                          "cannot write the change log");
        if (st == COFFER_OK)
            st = trim(txn, version);
    }
    free(b.p);
    return st;
}

/* ------------------------------------------------------------------------ */
/* Reading                                                                   */
/* ------------------------------------------------------------------------ */

void cf_log_entry_free(cf_log_entry *entry)
{
    if (!entry)
        return;
    free(entry->objects);
    free(entry->ops);
    free(entry->columns);
    memset(entry, 0, sizeof *entry);
}

static coffer_status decode(const uint8_t *p, size_t len, uint64_t version, cf_log_entry *out)
{
    const uint8_t *end = p + len;
    uint64_t n, v[7];
    memset(out, 0, sizeof *out);
    out->version = version;
    if (len < 2 || p[0] != LOG_ENCODING)
        goto corrupted;
    out->origin = p[1];
    p += 2;
    if (get_varint(&p, end, &n) || n > len)
        goto corrupted;
    out->nobjects = (size_t)n;
    out->objects = calloc(n ? n : 1, sizeof *out->objects);
    /* Every column takes at least one byte: the entry's size bounds them. */
    out->columns = malloc(len * sizeof *out->columns);
    if (!out->objects || !out->columns)
        goto no_memory;
    size_t ncolumns = 0;
    for (size_t i = 0; i < out->nobjects; i++) {
        cf_log_object *o = &out->objects[i];
        if (get_varint(&p, end, &v[0]) || get_varint(&p, end, &v[1]) || get_varint(&p, end, &v[2]) ||
            v[0] > UINT32_MAX)
            goto corrupted;
        o->table = (uint32_t)v[0];
        o->key = v[1];
        o->kind = (uint32_t)v[2];
        if (o->kind != CF_LOG_INSERT && o->kind != CF_LOG_DELETE && o->kind != CF_LOG_MODIFY && o->kind != CF_LOG_CLEAR)
            goto corrupted;
        if (o->kind == CF_LOG_MODIFY) {
            uint64_t nc;
            if (get_varint(&p, end, &nc) || nc > (uint64_t)(end - p))
                goto corrupted;
            o->ncolumns = (size_t)nc;
            for (size_t c = 0; c < o->ncolumns; c++) {
                uint64_t col;
                if (get_varint(&p, end, &col) || col > UINT32_MAX)
                    goto corrupted;
                out->columns[ncolumns + c] = (uint32_t)col;
            }
            o->columns = (const uint32_t *)(uintptr_t)ncolumns; /* an offset until the array is final */
            ncolumns += o->ncolumns;
        }
    }
    for (size_t i = 0; i < out->nobjects; i++)
        if (out->objects[i].kind == CF_LOG_MODIFY)
            out->objects[i].columns = out->columns + (size_t)(uintptr_t)out->objects[i].columns;
    if (get_varint(&p, end, &n) || n > (uint64_t)(end - p))
        goto corrupted;
    out->nops = (size_t)n;
    out->ops = calloc(n ? n : 1, sizeof *out->ops);
    if (!out->ops)
        goto no_memory;
    for (size_t i = 0; i < out->nops; i++) {
        for (int f = 0; f < 7; f++)
            if (get_varint(&p, end, &v[f]))
                goto corrupted;
        if (v[0] > UINT32_MAX || v[1] > UINT32_MAX || v[4] < CF_COLL_INSERT || v[4] > CF_COLL_CLEAR)
            goto corrupted;
        out->ops[i] = (cf_log_coll_op){(uint32_t)v[0], (uint32_t)v[1], v[2], v[3], (uint32_t)v[4], v[5], v[6]};
    }
    if (p != end)
        goto corrupted;
    return COFFER_OK;
corrupted:
    cf_log_entry_free(out);
    return cf_error(COFFER_ERR_CORRUPTED, "the change log entry of version %" PRIu64 " is damaged", version);
no_memory:
    cf_log_entry_free(out);
    return cf_error(COFFER_ERR_NO_MEMORY, "out of memory reading the change log");
}

coffer_status cf_log_read(coffer_txn *txn, uint64_t version, cf_log_entry *out)
{
    memset(out, 0, sizeof *out);
    uint8_t key[LOG_KEY_SIZE];
    const uint8_t *data;
    size_t len;
    uint8_t *buf = NULL;
    size_t cap = 0;
    coffer_status st = cf_store_get(txn, txn->db->meta_dbi, CF_META_DBI, key, log_key(version, key), &data, &len, &buf,
                                    &cap, "change log entry");
    if (st == COFFER_OK)
        st = decode(data, len, version, out);
    free(buf);
    return st;
}

coffer_status cf_log_oldest(coffer_txn *txn, uint64_t *out)
{
    *out = 0;
    MDB_cursor *cur;
    int rc = mdb_cursor_open(txn->mdb, txn->db->meta_dbi, &cur);
    if (rc != 0)
        return cf_error_mdb(rc, "cannot read the change log");
    uint8_t first[LOG_KEY_SIZE];
    MDB_val k = {log_key(0, first), first}, v;
    rc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE);
    if (rc == 0 && k.mv_size == LOG_KEY_SIZE && ((const uint8_t *)k.mv_data)[0] == 'L')
        *out = cf_get_be64((const uint8_t *)k.mv_data + 1);
    mdb_cursor_close(cur);
    if (rc != 0 && rc != MDB_NOTFOUND)
        return cf_error_mdb(rc, "cannot read the change log");
    return COFFER_OK;
}

/* ------------------------------------------------------------------------ */
/* Size                                                                      */
/* ------------------------------------------------------------------------ */

coffer_status cf_log_size(coffer_txn *txn, uint64_t *entries, uint64_t *bytes)
{
    *entries = 0;
    *bytes = 0;
    MDB_cursor *cur;
    int rc = mdb_cursor_open(txn->mdb, txn->db->meta_dbi, &cur);
    if (rc != 0)
        return cf_error(COFFER_ERR_INTERNAL, "cannot read the change log: %s", mdb_strerror(rc));
    uint8_t first[LOG_KEY_SIZE];
    log_key(0, first);
    MDB_val k = {LOG_KEY_SIZE, first}, v;
    for (rc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE); rc == 0; rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
        if (k.mv_size != LOG_KEY_SIZE || ((const uint8_t *)k.mv_data)[0] != 'L')
            break;
        (*entries)++;
        *bytes += k.mv_size + v.mv_size;
    }
    mdb_cursor_close(cur);
    if (rc != 0 && rc != MDB_NOTFOUND)
        return cf_error(COFFER_ERR_CORRUPTED, "cannot read the change log: %s", mdb_strerror(rc));
    return COFFER_OK;
}
