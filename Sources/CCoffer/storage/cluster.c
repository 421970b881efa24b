/* cluster — O(1) decoding of a cluster of objects (its encoding is
 * storage/cluster_encode.c). */
#include "storage/cluster.h"

#include <string.h>

#include "util/error.h"

#define BLOCK_HEADER CF_BLOCK_HEADER
#define FLAG_EXTERNAL CF_CLUSTER_FLAG_EXTERNAL
#define BLOCK_NULL CF_BLOCK_NULL
#define BLOCK_FIXED CF_BLOCK_FIXED
#define BLOCK_ENDS16 CF_BLOCK_ENDS16
#define BLOCK_ENDS32 CF_BLOCK_ENDS32
#define BLOCK_NARROW CF_BLOCK_NARROW
#define bitmap_size cf_cluster_bitmap_size

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
    if (data[0] < CF_CLUSTER_VERSION_MIN || data[0] > CF_CLUSTER_VERSION)
        return cf_error(data[0] > CF_CLUSTER_VERSION ? COFFER_ERR_FORMAT_VERSION : COFFER_ERR_CORRUPTED,
                        "cluster has version %u; this library reads versions %u to %u", data[0], CF_CLUSTER_VERSION_MIN,
                        CF_CLUSTER_VERSION);
    if (data[1] & ~FLAG_EXTERNAL)
        return cf_error(COFFER_ERR_CORRUPTED, "cluster has unknown flags 0x%x", data[1]);
    out->version = data[0];
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
    const uint8_t *stored = c->apart ? NULL : c->blocks + start + (size_t)col * c->overhead;
    coffer_status st = c->open(c->open_ctx, c, col, stored, end - start + c->overhead);
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
        size_t off = o->kind == BLOCK_FIXED    ? (size_t)at * o->width
                     : o->kind == BLOCK_NARROW ? CF_NARROW_BASE + (size_t)at * o->width
                                               : (size_t)at * (o->kind == BLOCK_ENDS32 ? 4 : 2);
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
static int raw_in_block(const cf_cluster *c, const uint8_t *b, size_t blen, uint16_t at, const uint8_t **p, size_t *n,
                        uint8_t wide[8])
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
    if (b[0] == CF_BLOCK_NARROW) {
        unsigned w = b[1];
        if (!cf_narrow_width_ok(w) || body_len < CF_NARROW_BASE || (size_t)(at + 1) * w > body_len - CF_NARROW_BASE)
            return -1;
        int64_t v = cf_narrow_value(cf_get_le(body, 8), body + CF_NARROW_BASE + (size_t)at * w, w);
        cf_put_le(wide, (uint64_t)v, 8);
        *p = wide;
        *n = 8;
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

int cf_cluster_block_check(const cf_cluster *c, const uint8_t *b, size_t blen)
{
    if (blen < BLOCK_HEADER)
        return -1;
    if (b[0] == BLOCK_NULL)
        return 0;
    size_t bm = bitmap_size(c->n);
    if (blen < BLOCK_HEADER + bm)
        return -1;
    size_t body_len = blen - BLOCK_HEADER - bm;
    if (b[0] == BLOCK_FIXED)
        return (size_t)c->n * b[1] <= body_len ? 0 : -1;
    if (b[0] == BLOCK_NARROW) /* what raw_in_block checks of a narrowed value */
        return cf_narrow_width_ok(b[1]) && body_len >= CF_NARROW_BASE &&
                       (size_t)c->n * b[1] <= body_len - CF_NARROW_BASE
                   ? 0
                   : -1;
    int ew = b[0] == BLOCK_ENDS16 ? 2 : b[0] == BLOCK_ENDS32 ? 4 : 0;
    if (!ew || body_len < (size_t)c->n * ew)
        return -1;
    /* what raw_in_block checks of each value: ends in order, within the values */
    const uint8_t *ends = b + BLOCK_HEADER + bm;
    size_t values_len = body_len - (size_t)c->n * ew, prev = 0;
    for (uint16_t i = 0; i < c->n; i++) {
        size_t end = (size_t)cf_get_le(ends + (size_t)i * ew, ew);
        if (end < prev || end > values_len)
            return -1;
        prev = end;
    }
    return 0;
}

int cf_cluster_raw(const cf_cluster *c, uint16_t at, uint16_t col, const uint8_t **p, size_t *n, uint8_t wide[8])
{
    if (col >= c->ncols || at >= c->n)
        return 0;
    const uint8_t *b;
    size_t blen;
    if (cf_cluster_block_of(c, col, &b, &blen) != COFFER_OK)
        return -1;
    return raw_in_block(c, b, blen, at, p, n, wide);
}

coffer_status cf_cluster_get(const cf_cluster *c, uint16_t at, uint16_t col, coffer_type type, coffer_value *out)
{
    const uint8_t *p = NULL, *b;
    uint8_t wide[8];
    size_t n = 0, blen;
    memset(out, 0, sizeof *out);
    int present = 0;
    if (col < c->ncols && at < c->n) {
        coffer_status st = cf_cluster_block_of(c, col, &b, &blen);
        if (st != COFFER_OK)
            return st;
        present = raw_in_block(c, b, blen, at, &p, &n, wide);
        /* A widened value is copied out only as an int: nothing may borrow it. */
        if (present > 0 && p == wide && type != COFFER_TYPE_INT)
            present = -1;
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
