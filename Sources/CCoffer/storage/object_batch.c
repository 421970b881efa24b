/* object_batch — the columns of a batch of objects (object_store.h, "column
 * batches"): a cluster's column block (file format 5, docs/FORMAT.md
 * "Clusters") described once, so that a scan reads its values in a loop
 * over the block instead of finding each object's value on its own. */
#define _GNU_SOURCE
#include "storage/object_store.h"

#include <inttypes.h>

#include "storage/cluster.h"
#include "util/error.h"

static coffer_status damaged(const cf_object_batch *b, uint16_t column)
{
    return cf_error(COFFER_ERR_CORRUPTED, "objects %" PRIu64 " to %" PRIu64 " of class '%s': the block of cluster column %u is damaged",
                    b->base, b->base | 255u, b->class_name, column);
}

coffer_status cf_batch_column(const cf_object_batch *b, uint16_t column, coffer_type type, cf_column *out)
{
    const cf_cluster *c = b->cluster;
    *out = (cf_column){.n = b->n, .type = type};
    if (column >= c->ncols) {
        out->all_null = 1; /* a column added after the cluster was written */
        return COFFER_OK;
    }
    const uint8_t *block;
    size_t len;
    coffer_status st = cf_cluster_block_of(c, column, &block, &len);
    if (st != COFFER_OK)
        return cf_error_prefix("objects %" PRIu64 " to %" PRIu64 " of class '%s'", b->base, b->base | 255u, b->class_name);
    if (len < CF_BLOCK_HEADER)
        return damaged(b, column);
    if (block[0] == CF_BLOCK_NULL) {
        out->all_null = 1;
        return COFFER_OK;
    }
    size_t bitmap = cf_cluster_bitmap_size(c->n);
    if (len < CF_BLOCK_HEADER + bitmap)
        return damaged(b, column);
    out->nulls = block + CF_BLOCK_HEADER;
    for (size_t i = 0; i < bitmap && !out->some_null; i++)
        out->some_null = out->nulls[i] != 0;
    const uint8_t *body = out->nulls + bitmap;
    size_t body_len = len - CF_BLOCK_HEADER - bitmap;
    if (block[0] == CF_BLOCK_FIXED) {
        out->width = block[1];
        if ((size_t)c->n * out->width > body_len)
            return damaged(b, column);
        out->fixed = body;
        return COFFER_OK;
    }
    if (block[0] == CF_BLOCK_NARROW) {
        /* Only an int column is narrowed: its values are read as ints. */
        out->width = block[1];
        if (type != COFFER_TYPE_INT || !cf_narrow_width_ok(block[1]) || body_len < CF_NARROW_BASE ||
            (size_t)c->n * out->width > body_len - CF_NARROW_BASE)
            return damaged(b, column);
        out->narrow = 1;
        out->base = cf_get_le(body, 8);
        out->fixed = body + CF_NARROW_BASE;
        return COFFER_OK;
    }
    out->end_width = block[0] == CF_BLOCK_ENDS16 ? 2 : block[0] == CF_BLOCK_ENDS32 ? 4 : 0;
    if (!out->end_width || body_len < (size_t)c->n * out->end_width)
        return damaged(b, column);
    out->ends = body;
    out->bytes = body + (size_t)c->n * out->end_width;
    out->bytes_len = body_len - (size_t)c->n * out->end_width;
    /* Ends in order and within the values: a value's place is then read
     * without a check (cf_column_span). */
    size_t prev = 0;
    for (uint16_t i = 0; i < c->n; i++) {
        size_t end = cf_column_end(out, i);
        if (end < prev || end > out->bytes_len)
            return damaged(b, column);
        prev = end;
    }
    return COFFER_OK;
}

coffer_status cf_batch_value(const cf_object_batch *b, const cf_column *c, uint16_t i, coffer_value *out)
{
    if (cf_column_is_null(c, i)) {
        *out = (coffer_value){.type = COFFER_TYPE_NULL};
        return COFFER_OK;
    }
    const uint8_t *p;
    size_t n;
    uint8_t wide[8];
    if (c->narrow) {
        cf_put_le(wide, (uint64_t)cf_column_int(c, i), 8);
        p = wide;
        n = 8;
    } else if (c->fixed) {
        p = c->fixed + (size_t)i * c->width;
        n = c->width;
    } else {
        size_t start, end; /* checked by cf_batch_column */
        cf_column_span(c, i, &start, &end);
        p = c->bytes + start;
        n = end - start;
    }
    coffer_status st = cf_scalar_read(p, n, c->type, out);
    return st == COFFER_OK ? st
                           : cf_error_prefix("object %" PRIu64 " of class '%s'", b->base | b->lows[i], b->class_name);
}
