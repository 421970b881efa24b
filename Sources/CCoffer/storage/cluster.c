/* cluster — encoding and O(1) decoding of a cluster of objects. */
#include "storage/cluster.h"

#include <string.h>

#include "util/error.h"

#define BLOCK_HEADER 2
#define FLAG_EXTERNAL 1u /* a bitmap of the objects stored outside follows the keys */

/* How a column block stores its values. */
enum { BLOCK_NULL = 0, BLOCK_FIXED = 1, BLOCK_ENDS16 = 2, BLOCK_ENDS32 = 3 };

static size_t bitmap_size(uint16_t n) { return ((size_t)n + 7) / 8; }

/* ---- decoding ------------------------------------------------------------ */

size_t cf_cluster_head_size(const uint8_t *data, size_t len)
{
    if (len < CF_CLUSTER_HEADER_SIZE)
        return 0;
    size_t n = (size_t)cf_get_le(data + 2, 2), ncols = (size_t)cf_get_le(data + 4, 2);
    size_t head = CF_CLUSTER_HEADER_SIZE + n + (data[1] & FLAG_EXTERNAL ? bitmap_size((uint16_t)n) : 0) + ncols * 4;
    return head <= len ? head : 0;
}

coffer_status cf_cluster_parse_head(const uint8_t *data, size_t len, size_t blocks_len, cf_cluster *out)
{
    *out = (cf_cluster){0};
    if (len < CF_CLUSTER_HEADER_SIZE)
        return cf_error(COFFER_ERR_CORRUPTED, "cluster of %zu bytes is too short", len);
    if (data[0] != CF_CLUSTER_VERSION)
        return cf_error(data[0] > CF_CLUSTER_VERSION ? COFFER_ERR_FORMAT_VERSION : COFFER_ERR_CORRUPTED,
                        "cluster has version %u; this library reads version %u", data[0], CF_CLUSTER_VERSION);
    if (data[1] & ~FLAG_EXTERNAL)
        return cf_error(COFFER_ERR_CORRUPTED, "cluster has unknown flags 0x%x", data[1]);
    out->n = (uint16_t)cf_get_le(data + 2, 2);
    out->ncols = (uint16_t)cf_get_le(data + 4, 2);
    if (out->n == 0 || out->n > CF_CLUSTER_MAX)
        return cf_error(COFFER_ERR_CORRUPTED, "cluster says it holds %u objects (1 to %d)", out->n, CF_CLUSTER_MAX);
    size_t ext = data[1] & FLAG_EXTERNAL ? bitmap_size(out->n) : 0;
    size_t head = CF_CLUSTER_HEADER_SIZE + out->n + ext + (size_t)out->ncols * 4;
    if (len != head)
        return cf_error(COFFER_ERR_CORRUPTED, "cluster head of %zu bytes where its header says %zu", len, head);
    out->lows = data + CF_CLUSTER_HEADER_SIZE;
    out->external = ext ? out->lows + out->n : NULL;
    out->dir = out->lows + out->n + ext;
    out->blocks_len = blocks_len;
    for (uint16_t i = 1; i < out->n; i++)
        if (out->lows[i] <= out->lows[i - 1])
            return cf_error(COFFER_ERR_CORRUPTED, "cluster keys out of order at position %u", i);
    size_t prev = 0;
    for (uint16_t c = 0; c < out->ncols; c++) {
        size_t end = (size_t)cf_get_le(out->dir + (size_t)c * 4, 4);
        if (end < prev + BLOCK_HEADER || end > blocks_len)
            return cf_error(COFFER_ERR_CORRUPTED, "cluster column %u lies outside the cluster", c);
        prev = end;
    }
    if (prev != blocks_len)
        return cf_error(COFFER_ERR_CORRUPTED, "cluster has %zu bytes after its last column", blocks_len - prev);
    return COFFER_OK;
}

coffer_status cf_cluster_parse(const uint8_t *data, size_t len, cf_cluster *out)
{
    size_t head = cf_cluster_head_size(data, len);
    if (len >= CF_CLUSTER_HEADER_SIZE && !head)
        return cf_error(COFFER_ERR_CORRUPTED, "cluster of %zu bytes is shorter than its header", len);
    coffer_status st = cf_cluster_parse_head(data, head ? head : len, len - head, out);
    if (st == COFFER_OK)
        out->blocks = data + head;
    return st;
}

coffer_status cf_cluster_block_of(const cf_cluster *c, uint16_t col, const uint8_t **b, size_t *len)
{
    if (c->opened && c->opened[col].data) { /* the common case: a block read before */
        *b = c->opened[col].data;
        *len = c->opened[col].len;
        return COFFER_OK;
    }
    size_t start = col ? (size_t)cf_get_le(c->dir + (size_t)(col - 1) * 4, 4) : 0;
    size_t end = (size_t)cf_get_le(c->dir + (size_t)col * 4, 4); /* the head's checks hold */
    if (!c->opened) {
        *b = c->blocks + start;
        *len = end - start;
        return COFFER_OK;
    }
    coffer_status st = c->open(c->open_ctx, c, col, c->blocks + start + (size_t)col * c->overhead, end - start + c->overhead);
    if (st != COFFER_OK)
        return st;
    cf_cluster_block *o = &c->opened[col];
    if (o->len >= BLOCK_HEADER) {
        o->kind = o->data[0];
        o->width = o->data[1];
    }
    *b = o->data;
    *len = o->len;
    return COFFER_OK;
}

void cf_cluster_prefetch(const cf_cluster *c, uint16_t at)
{
    if (!c->opened || at >= c->n)
        return;
    size_t bm = bitmap_size(c->n);
    for (uint16_t col = 0; col < c->ncols; col++) {
        const cf_cluster_block *o = &c->opened[col];
        if (!o->data || o->kind == BLOCK_NULL)
            continue;
        const uint8_t *body = o->data + BLOCK_HEADER + bm;
        size_t off = o->kind == BLOCK_FIXED ? (size_t)at * o->width : (size_t)at * (o->kind == BLOCK_ENDS32 ? 4 : 2);
        if (BLOCK_HEADER + bm + off >= o->len)
            continue; /* a damaged block: its read says so */
        __builtin_prefetch(o->data + BLOCK_HEADER + at / 8);
        __builtin_prefetch(body + off);
    }
}

uint16_t cf_cluster_seek(const cf_cluster *c, unsigned low)
{
    /* Keys are strictly increasing, so lows[i] >= i: when lows[low] == low,
     * no earlier key reaches low (the common case of a cluster without gaps). */
    if (low < c->n && c->lows[low] == low)
        return (uint16_t)low;
    uint16_t lo = 0, hi = c->n;
    while (lo < hi) {
        uint16_t mid = (uint16_t)((lo + hi) / 2);
        if (c->lows[mid] < low)
            lo = (uint16_t)(mid + 1);
        else
            hi = mid;
    }
    return lo;
}

/* cf_cluster_raw on column block b[0 .. blen) of the cluster. */
static int raw_in_block(const cf_cluster *c, const uint8_t *b, size_t blen, uint16_t at, const uint8_t **p, size_t *n)
{
    if (blen < BLOCK_HEADER)
        return -1;
    if (b[0] == BLOCK_NULL)
        return 0;
    size_t bm = bitmap_size(c->n);
    if (blen < BLOCK_HEADER + bm)
        return -1;
    if ((b[BLOCK_HEADER + at / 8] >> (at % 8)) & 1)
        return 0;
    const uint8_t *body = b + BLOCK_HEADER + bm;
    size_t body_len = blen - BLOCK_HEADER - bm;
    if (b[0] == BLOCK_FIXED) {
        size_t w = b[1];
        if ((size_t)(at + 1) * w > body_len)
            return -1;
        *p = body + (size_t)at * w;
        *n = w;
        return 1;
    }
    int ew = b[0] == BLOCK_ENDS16 ? 2 : b[0] == BLOCK_ENDS32 ? 4 : 0;
    if (!ew || body_len < (size_t)c->n * ew)
        return -1;
    size_t vstart = at ? (size_t)cf_get_le(body + (size_t)(at - 1) * ew, ew) : 0;
    size_t vend = (size_t)cf_get_le(body + (size_t)at * ew, ew);
    size_t values_len = body_len - (size_t)c->n * ew;
    if (vstart > vend || vend > values_len)
        return -1;
    *p = body + (size_t)c->n * ew + vstart;
    *n = vend - vstart;
    return 1;
}

int cf_cluster_raw(const cf_cluster *c, uint16_t at, uint16_t col, const uint8_t **p, size_t *n)
{
    if (col >= c->ncols || at >= c->n)
        return 0;
    const uint8_t *b;
    size_t blen;
    if (cf_cluster_block_of(c, col, &b, &blen) != COFFER_OK)
        return -1;
    return raw_in_block(c, b, blen, at, p, n);
}

coffer_status cf_cluster_get(const cf_cluster *c, uint16_t at, uint16_t col, coffer_type type, coffer_value *out)
{
    const uint8_t *p = NULL, *b;
    size_t n = 0, blen;
    memset(out, 0, sizeof *out);
    int present = 0;
    if (col < c->ncols && at < c->n) {
        coffer_status st = cf_cluster_block_of(c, col, &b, &blen);
        if (st != COFFER_OK)
            return st;
        present = raw_in_block(c, b, blen, at, &p, &n);
    }
    if (present == 0) {
        out->type = COFFER_TYPE_NULL;
        return COFFER_OK;
    }
    if (present < 0)
        return cf_error(COFFER_ERR_CORRUPTED, "the block of cluster column %u is damaged", col);
    coffer_status st = cf_scalar_read(p, n, type, out);
    return st == COFFER_OK ? st : cf_error_prefix("cluster column %u", col);
}

/* ---- encoding ------------------------------------------------------------ */

/* The stored bytes of column `col` of member `m`: 1 with *p and *len set,
 * 0 when null (or stored outside). */
static int member_raw(const cf_cluster_member *m, uint16_t col, const uint8_t **p, size_t *len)
{
    if (m->external)
        return 0;
    if (m->src)
        return cf_cluster_raw(m->src, m->at, col, p, len) == 1;
    return cf_record_raw(&m->rec, col, p, len) == 1;
}

/* How column `col` of members m[0..n) is stored: its block kind, the width
 * of a fixed-width block, and the block's size. */
static size_t column_plan(const cf_cluster_member *m, uint16_t n, uint16_t col, int *kind, size_t *width)
{
    size_t present = 0, total = 0, w = 0;
    int same = 1;
    for (uint16_t i = 0; i < n; i++) {
        const uint8_t *p;
        size_t len;
        if (!member_raw(&m[i], col, &p, &len))
            continue;
        if (present++ == 0)
            w = len;
        else if (len != w)
            same = 0;
        total += len;
    }
    *width = w;
    if (present == 0) {
        *kind = BLOCK_NULL;
        return BLOCK_HEADER;
    }
    size_t bm = bitmap_size(n);
    if (same && w <= 0xFF) {
        *kind = BLOCK_FIXED;
        return BLOCK_HEADER + bm + (size_t)n * w;
    }
    *kind = total > 0xFFFF ? BLOCK_ENDS32 : BLOCK_ENDS16;
    return BLOCK_HEADER + bm + (size_t)n * (*kind == BLOCK_ENDS32 ? 4 : 2) + total;
}

static uint16_t max_columns(const cf_cluster_member *m, uint16_t n)
{
    uint16_t ncols = 0;
    for (uint16_t i = 0; i < n; i++) {
        uint16_t k = m[i].external ? 0 : m[i].src ? m[i].src->ncols : m[i].rec.ncols;
        ncols = k > ncols ? k : ncols;
    }
    return ncols;
}

static int any_external(const cf_cluster_member *m, uint16_t n)
{
    for (uint16_t i = 0; i < n; i++)
        if (m[i].external)
            return 1;
    return 0;
}

size_t cf_cluster_size(const cf_cluster_member *m, uint16_t n)
{
    uint16_t ncols = max_columns(m, n);
    size_t size = CF_CLUSTER_HEADER_SIZE + n + (any_external(m, n) ? bitmap_size(n) : 0) + (size_t)ncols * 4;
    for (uint16_t c = 0; c < ncols; c++) {
        int kind;
        size_t width;
        size += column_plan(m, n, c, &kind, &width);
    }
    return size;
}

/* Writes column `col`'s block at `b`; returns its size. */
static size_t write_column(uint8_t *b, const cf_cluster_member *m, uint16_t n, uint16_t col)
{
    int kind;
    size_t width;
    size_t size = column_plan(m, n, col, &kind, &width);
    b[0] = (uint8_t)kind;
    b[1] = kind == BLOCK_FIXED ? (uint8_t)width : 0;
    if (kind == BLOCK_NULL)
        return size;
    size_t bm = bitmap_size(n);
    uint8_t *nulls = b + BLOCK_HEADER;
    uint8_t *body = nulls + bm;
    memset(nulls, 0, bm);
    int ew = kind == BLOCK_ENDS32 ? 4 : 2;
    uint8_t *values = kind == BLOCK_FIXED ? body : body + (size_t)n * ew;
    size_t off = 0;
    for (uint16_t i = 0; i < n; i++) {
        const uint8_t *p = NULL;
        size_t len = 0;
        if (!member_raw(&m[i], col, &p, &len)) {
            nulls[i / 8] |= (uint8_t)(1u << (i % 8));
            len = 0;
        }
        if (kind == BLOCK_FIXED) {
            if (p && len)
                memcpy(values + (size_t)i * width, p, len);
            else
                memset(values + (size_t)i * width, 0, width);
            continue;
        }
        if (len)
            memcpy(values + off, p, len);
        off += len;
        cf_put_le(body + (size_t)i * ew, off, ew);
    }
    return size;
}

void cf_cluster_write(uint8_t *out, const cf_cluster_member *m, uint16_t n)
{
    uint16_t ncols = max_columns(m, n);
    int ext = any_external(m, n);
    out[0] = CF_CLUSTER_VERSION;
    out[1] = ext ? FLAG_EXTERNAL : 0;
    cf_put_le(out + 2, n, 2);
    cf_put_le(out + 4, ncols, 2);
    uint8_t *lows = out + CF_CLUSTER_HEADER_SIZE;
    for (uint16_t i = 0; i < n; i++)
        lows[i] = m[i].low;
    uint8_t *dir = lows + n;
    if (ext) {
        memset(dir, 0, bitmap_size(n));
        for (uint16_t i = 0; i < n; i++)
            if (m[i].external)
                dir[i / 8] |= (uint8_t)(1u << (i % 8));
        dir += bitmap_size(n);
    }
    uint8_t *blocks = dir + (size_t)ncols * 4;
    size_t off = 0;
    for (uint16_t c = 0; c < ncols; c++) {
        off += write_column(blocks + off, m, n, c);
        cf_put_le(dir + (size_t)c * 4, off, 4);
    }
}
