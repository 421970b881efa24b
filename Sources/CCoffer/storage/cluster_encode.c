/* cluster_encode — a cluster's bytes from its members in two steps: a plan
 * that reads each value's place once (a record's column ends, or a parsed
 * cluster's block) and sizes every column block on the way, then one copy
 * of each value into its block (a narrowed int its distance from the
 * column's smallest). */
#include "storage/cluster_encode.h"

#include <stdlib.h>
#include <string.h>

#include "util/error.h"

#define NULL_VALUE UINT32_MAX

struct cf_cluster_value {
    const uint8_t *p;
    uint32_t len; /* NULL_VALUE: null */
    uint8_t wide[8]; /* a value of a narrowed source block, widened (p points here) */
};

struct cf_cluster_column {
    size_t total, size, width;
    uint32_t present;
    uint8_t same, kind;
    uint8_t ints;   /* a column of ints: lo and hi are kept */
    uint8_t narrow; /* CF_BLOCK_NARROW's width, once sized */
    int64_t lo, hi;
};

static int grow(void **p, size_t *cap, size_t want, size_t elem)
{
    if (want <= *cap)
        return 1;
    size_t cap2 = *cap ? *cap : 64;
    while (cap2 < want)
        cap2 *= 2;
    void *q = realloc(*p, cap2 * elem);
    if (!q)
        return 0;
    *p = q;
    *cap = cap2;
    return 1;
}

static uint16_t columns_of(const cf_cluster_member *m)
{
    return m->external ? 0 : m->src ? m->src->ncols : m->rec.ncols;
}

/* Finds member `m`'s values of columns [0, ncols) into v, counting them
 * into the columns' plans. */
static void read_member(const cf_cluster_member *m, uint16_t ncols, cf_cluster_value *v, cf_cluster_column *cols)
{
    uint16_t have = columns_of(m);
    for (uint16_t c = 0; c < ncols; c++) {
        const uint8_t *p = NULL;
        size_t len = 0;
        int present = c >= have  ? 0
                      : m->src ? cf_cluster_raw(m->src, m->at, c, &p, &len, v[c].wide)
                               : cf_record_raw(&m->rec, c, &p, &len);
        if (present != 1) {
            v[c].len = NULL_VALUE;
            continue;
        }
        v[c].p = p;
        v[c].len = (uint32_t)len;
        cf_cluster_column *col = &cols[c];
        if (col->present++ == 0)
            col->width = len;
        else if (len != col->width)
            col->same = 0;
        col->total += len;
        if (col->ints && len == 8) {
            int64_t x = (int64_t)cf_get_le(p, 8);
            if (col->present == 1 || x < col->lo)
                col->lo = x;
            if (col->present == 1 || x > col->hi)
                col->hi = x;
        }
    }
}

/* Decides column `col`'s block kind and size from its counts. */
static void size_column(cf_cluster_column *col, uint16_t n)
{
    size_t bm = cf_cluster_bitmap_size(n);
    if (col->present == 0) {
        col->kind = CF_BLOCK_NULL;
        col->size = CF_BLOCK_HEADER;
    } else if (col->same && col->width <= 0xFF) {
        col->kind = CF_BLOCK_FIXED;
        col->size = CF_BLOCK_HEADER + bm + (size_t)n * col->width;
        uint64_t range = (uint64_t)col->hi - (uint64_t)col->lo;
        unsigned w = !col->ints || col->width != 8 ? 0 : range <= 0xFF ? 1 : range <= 0xFFFF ? 2 : range <= 0xFFFFFFFFu ? 4 : 0;
        size_t narrow = CF_BLOCK_HEADER + bm + CF_NARROW_BASE + (size_t)n * w;
        if (w && narrow < col->size) {
            col->kind = CF_BLOCK_NARROW;
            col->narrow = (uint8_t)w;
            col->size = narrow;
        }
    } else {
        col->kind = col->total > 0xFFFF ? CF_BLOCK_ENDS32 : CF_BLOCK_ENDS16;
        col->size = CF_BLOCK_HEADER + bm + (size_t)n * (col->kind == CF_BLOCK_ENDS32 ? 4 : 2) + col->total;
    }
}

coffer_status cf_cluster_plan(cf_cluster_encoder *enc, const cf_cluster_member *m, uint16_t n, size_t *size)
{
    uint16_t ncols = 0;
    int external = 0;
    for (uint16_t i = 0; i < n; i++) {
        uint16_t k = columns_of(&m[i]);
        ncols = k > ncols ? k : ncols;
        external |= m[i].external != 0;
    }
    if (!grow((void **)&enc->values, &enc->values_cap, (size_t)n * ncols + 1, sizeof *enc->values) ||
        !grow((void **)&enc->columns, &enc->columns_cap, (size_t)ncols + 1, sizeof *enc->columns))
        return cf_error(COFFER_ERR_NO_MEMORY, "out of memory encoding a cluster");
    enc->m = m;
    enc->n = n;
    enc->ncols = ncols;
    enc->external = external;
    for (uint16_t c = 0; c < ncols; c++)
        enc->columns[c] = (cf_cluster_column){.same = 1, .ints = c / 8 < enc->ints_len && (enc->ints[c / 8] >> (c % 8)) & 1};
    for (uint16_t i = 0; i < n; i++)
        read_member(&m[i], ncols, enc->values + (size_t)i * ncols, enc->columns);
    size_t total = CF_CLUSTER_HEADER_SIZE + n + (external ? cf_cluster_bitmap_size(n) : 0) + (size_t)ncols * 4;
    for (uint16_t c = 0; c < ncols; c++) {
        size_column(&enc->columns[c], n);
        total += enc->columns[c].size;
    }
    enc->size = total;
    *size = total;
    return COFFER_OK;
}

/* Writes column `c`'s block at `b` as planned. */
static void write_column(const cf_cluster_encoder *enc, uint16_t c, uint8_t *b)
{
    const cf_cluster_column *col = &enc->columns[c];
    uint16_t n = enc->n;
    b[0] = col->kind;
    b[1] = col->kind == CF_BLOCK_FIXED ? (uint8_t)col->width : col->narrow;
    if (col->kind == CF_BLOCK_NULL)
        return;
    size_t bm = cf_cluster_bitmap_size(n);
    uint8_t *nulls = b + CF_BLOCK_HEADER, *body = nulls + bm;
    memset(nulls, 0, bm);
    const cf_cluster_value *v = enc->values + c;
    if (col->kind == CF_BLOCK_NARROW) {
        unsigned w = col->narrow;
        uint64_t base = (uint64_t)col->lo;
        cf_put_le(body, base, 8);
        body += CF_NARROW_BASE;
        for (uint16_t i = 0; i < n; i++, v += enc->ncols) {
            uint64_t off = 0;
            if (v->len == NULL_VALUE)
                nulls[i / 8] |= (uint8_t)(1u << (i % 8));
            else
                off = cf_get_le(v->p, 8) - base;
            cf_put_le(body + (size_t)i * w, off, (int)w);
        }
        return;
    }
    if (col->kind == CF_BLOCK_FIXED) {
        size_t w = col->width;
        for (uint16_t i = 0; i < n; i++, v += enc->ncols) {
            if (v->len == NULL_VALUE) {
                nulls[i / 8] |= (uint8_t)(1u << (i % 8));
                memset(body + (size_t)i * w, 0, w);
            } else if (w) {
                memcpy(body + (size_t)i * w, v->p, w);
            }
        }
        return;
    }
    int ew = col->kind == CF_BLOCK_ENDS32 ? 4 : 2;
    uint8_t *values = body + (size_t)n * ew;
    size_t off = 0;
    for (uint16_t i = 0; i < n; i++, v += enc->ncols) {
        if (v->len == NULL_VALUE) {
            nulls[i / 8] |= (uint8_t)(1u << (i % 8));
        } else if (v->len) {
            memcpy(values + off, v->p, v->len);
            off += v->len;
        }
        cf_put_le(body + (size_t)i * ew, off, ew);
    }
}

void cf_cluster_encode(const cf_cluster_encoder *enc, uint8_t *out)
{
    const cf_cluster_member *m = enc->m;
    uint16_t n = enc->n, ncols = enc->ncols;
    out[0] = CF_CLUSTER_VERSION;
    out[1] = enc->external ? CF_CLUSTER_FLAG_EXTERNAL : 0;
    cf_put_le(out + 2, n, 2);
    cf_put_le(out + 4, ncols, 2);
    uint8_t *lows = out + CF_CLUSTER_HEADER_SIZE;
    for (uint16_t i = 0; i < n; i++)
        lows[i] = m[i].low;
    uint8_t *dir = lows + n;
    if (enc->external) {
        memset(dir, 0, cf_cluster_bitmap_size(n));
        for (uint16_t i = 0; i < n; i++)
            if (m[i].external)
                dir[i / 8] |= (uint8_t)(1u << (i % 8));
        dir += cf_cluster_bitmap_size(n);
    }
    uint8_t *blocks = dir + (size_t)ncols * 4;
    size_t off = 0;
    for (uint16_t c = 0; c < ncols; c++) {
        write_column(enc, c, blocks + off);
        off += enc->columns[c].size;
        cf_put_le(dir + (size_t)c * 4, off, 4);
    }
}

coffer_status cf_cluster_encoder_set_class(cf_cluster_encoder *enc, const cf_class *cl)
{
    size_t len = 0;
    for (size_t i = 0; cl && i < cl->nprops; i++)
        if (cl->props[i].type == COFFER_TYPE_INT && cl->props[i].collection == COFFER_COLLECTION_NONE &&
            (size_t)cl->props[i].column / 8 + 1 > len)
            len = (size_t)cl->props[i].column / 8 + 1;
    if (!grow((void **)&enc->ints, &enc->ints_cap, len + 1, 1))
        return cf_error(COFFER_ERR_NO_MEMORY, "out of memory encoding a cluster");
    memset(enc->ints, 0, len);
    for (size_t i = 0; cl && i < cl->nprops; i++)
        if (cl->props[i].type == COFFER_TYPE_INT && cl->props[i].collection == COFFER_COLLECTION_NONE)
            enc->ints[cl->props[i].column / 8] |= (uint8_t)(1u << (cl->props[i].column % 8));
    enc->ints_len = len;
    return COFFER_OK;
}

void cf_cluster_encoder_free(cf_cluster_encoder *enc)
{
    free(enc->values);
    free(enc->columns);
    free(enc->ints);
    *enc = (cf_cluster_encoder){0};
}

size_t cf_cluster_encoder_bytes(const cf_cluster_encoder *enc)
{
    return enc->values_cap * sizeof *enc->values + enc->columns_cap * sizeof *enc->columns + enc->ints_cap;
}
