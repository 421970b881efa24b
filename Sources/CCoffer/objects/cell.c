/* cell — tag + payload encoding of mixed values and collection elements. */
#include "objects/cell.h"

#include <math.h>
#include <string.h>

#include "util/error.h"
#include "storage/record.h"

size_t cf_cell_size(const coffer_value *v)
{
    switch (v->type) {
    case COFFER_TYPE_LINK: return 1 + 12;
    case COFFER_TYPE_LIST:
    case COFFER_TYPE_MAP: return 1 + 8;
    default: return 1 + cf_scalar_size(v);
    }
}

void cf_cell_write(uint8_t *out, const coffer_value *v)
{
    out[0] = (uint8_t)v->type;
    switch (v->type) {
    case COFFER_TYPE_LINK:
        cf_put_le(out + 1, v->u.link.class_id, 4);
        cf_put_le(out + 5, v->u.link.key, 8);
        break;
    case COFFER_TYPE_LIST:
    case COFFER_TYPE_MAP: cf_put_le(out + 1, v->u.link.key, 8); break;
    case COFFER_TYPE_NULL: break;
    default: cf_scalar_write(out + 1, v); break;
    }
}

coffer_status cf_cell_read(const uint8_t *cell, size_t n, coffer_value *out)
{
    memset(out, 0, sizeof *out);
    if (n < 1)
        return cf_error(COFFER_ERR_CORRUPTED, "an empty value cell");
    coffer_type t = (coffer_type)cell[0];
    size_t len = n - 1;
    out->type = t;
    switch (t) {
    case COFFER_TYPE_NULL:
        return len ? cf_error(COFFER_ERR_CORRUPTED, "a null cell with %zu bytes", len) : COFFER_OK;
    case COFFER_TYPE_LINK:
        if (len != 12)
            break;
        out->u.link.class_id = (uint32_t)cf_get_le(cell + 1, 4);
        out->u.link.key = cf_get_le(cell + 5, 8);
        return COFFER_OK;
    case COFFER_TYPE_LIST:
    case COFFER_TYPE_MAP:
        if (len != 8)
            break;
        out->u.link.key = cf_get_le(cell + 1, 8);
        return COFFER_OK;
    default:
        if (t < COFFER_TYPE_BOOL || t > COFFER_TYPE_DECIMAL128)
            break;
        {
            coffer_status st = cf_scalar_read(cell + 1, len, t, out);
            return st == COFFER_OK ? st : cf_error_prefix("a value cell");
        }
    }
    return cf_error(COFFER_ERR_CORRUPTED, "a value cell of type %u and %zu bytes", (unsigned)cell[0], len);
}

__extension__ typedef unsigned __int128 u128;

/* A decimal's identity: kind, sign, exponent and coefficient with trailing
 * zeros moved into the exponent, so every member of a cohort agrees. */
static size_t decimal_identity(const coffer_decimal128 *d, uint8_t *out)
{
    uint64_t hi = d->w[1], lo = d->w[0];
    int sign = (int)(hi >> 63);
    memset(out, 0, 20);
    if ((hi >> 58 & 0x1F) == 0x1F) { /* NaN */
        out[0] = 0;
        return 20;
    }
    if ((hi >> 58 & 0x1F) == 0x1E) { /* infinity */
        out[0] = sign ? 1 : 2;
        return 20;
    }
    u128 coef = 0;
    int exp = 0;
    if ((hi >> 61 & 3) != 3) {
        exp = (int)(hi >> 49 & 0x3FFF) - 6176;
        coef = (u128)(hi & ((UINT64_C(1) << 49) - 1)) << 64 | lo;
        u128 max = 1;
        for (int i = 0; i < 34; i++)
            max *= 10;
        if (coef >= max)
            coef = 0; /* non-canonical: reads as zero, as in BSON */
    }
    if (coef == 0) {
        sign = 0;
        exp = 0;
    }
    while (coef && coef % 10 == 0) {
        coef /= 10;
        exp++;
    }
    out[0] = 3;
    out[1] = (uint8_t)sign;
    cf_put_be16(out + 2, (uint16_t)(exp + 32768));
    cf_put_be64(out + 4, (uint64_t)(coef >> 64));
    cf_put_be64(out + 12, (uint64_t)coef);
    return 20;
}

void cf_cell_identity(const coffer_value *v, uint8_t head[40], size_t *headlen, const void **body, size_t *bodylen)
{
    head[0] = (uint8_t)v->type;
    size_t n = 1;
    *body = NULL;
    *bodylen = 0;
    switch (v->type) {
    case COFFER_TYPE_STRING:
        *body = v->u.string.data;
        *bodylen = v->u.string.size;
        break;
    case COFFER_TYPE_BINARY:
        *body = v->u.binary.data;
        *bodylen = v->u.binary.size;
        break;
    case COFFER_TYPE_FLOAT: {
        float f = v->u.float_value;
        if (f == 0)
            f = 0; /* -0.0 */
        uint32_t bits;
        memcpy(&bits, &f, 4);
        if (isnan(f))
            bits = 0x7FC00000u;
        cf_put_be32(head + n, bits);
        n += 4;
        break;
    }
    case COFFER_TYPE_DOUBLE: {
        double f = v->u.double_value;
        if (f == 0)
            f = 0;
        uint64_t bits;
        memcpy(&bits, &f, 8);
        if (isnan(f))
            bits = UINT64_C(0x7FF8000000000000);
        cf_put_be64(head + n, bits);
        n += 8;
        break;
    }
    case COFFER_TYPE_DECIMAL128: n += decimal_identity(&v->u.decimal128, head + n); break;
    default: {
        uint8_t tmp[40];
        cf_cell_write(tmp, v); /* fixed-width payloads are canonical */
        size_t len = cf_cell_size(v) - 1;
        memcpy(head + n, tmp + 1, len);
        n += len;
        break;
    }
    }
    *headlen = n;
}
