/* cell — tag + payload encoding of mixed values and collection elements. */
#include "cell.h"

#include <math.h>
#include <string.h>

#include "error.h"
#include "record.h"

static void put_le(uint8_t *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++, v >>= 8)
        p[i] = (uint8_t)v;
}

static uint64_t get_le(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

/* Payload sizes of the fixed-width types; SIZE_MAX for variable ones. */
static size_t fixed_size(coffer_type t)
{
    switch (t) {
    case COFFER_TYPE_NULL: return 0;
    case COFFER_TYPE_BOOL: return 1;
    case COFFER_TYPE_INT: return 8;
    case COFFER_TYPE_FLOAT: return 4;
    case COFFER_TYPE_DOUBLE: return 8;
    case COFFER_TYPE_DATE: return 12;
    case COFFER_TYPE_OBJECT_ID: return 12;
    case COFFER_TYPE_UUID: return 16;
    case COFFER_TYPE_DECIMAL128: return 16;
    case COFFER_TYPE_LINK: return 12;
    case COFFER_TYPE_LIST: case COFFER_TYPE_MAP: return 8;
    default: return SIZE_MAX;
    }
}

size_t cf_cell_size(const coffer_value *v)
{
    if (v->type == COFFER_TYPE_STRING)
        return 1 + v->u.string.size + 1; /* a NUL, so reads can lend C strings */
    if (v->type == COFFER_TYPE_BINARY)
        return 1 + v->u.binary.size;
    return 1 + fixed_size(v->type);
}

void cf_cell_write(uint8_t *out, const coffer_value *v)
{
    out[0] = (uint8_t)v->type;
    uint8_t *p = out + 1;
    switch (v->type) {
    case COFFER_TYPE_BOOL: p[0] = v->u.boolean ? 1 : 0; break;
    case COFFER_TYPE_INT: put_le(p, (uint64_t)v->u.integer, 8); break;
    case COFFER_TYPE_FLOAT: {
        uint32_t bits;
        memcpy(&bits, &v->u.float_value, 4);
        put_le(p, bits, 4);
        break;
    }
    case COFFER_TYPE_DOUBLE: {
        uint64_t bits;
        memcpy(&bits, &v->u.double_value, 8);
        put_le(p, bits, 8);
        break;
    }
    case COFFER_TYPE_STRING:
        if (v->u.string.size)
            memcpy(p, v->u.string.data, v->u.string.size);
        p[v->u.string.size] = 0;
        break;
    case COFFER_TYPE_BINARY:
        if (v->u.binary.size)
            memcpy(p, v->u.binary.data, v->u.binary.size);
        break;
    case COFFER_TYPE_DATE:
        put_le(p, (uint64_t)v->u.date.seconds, 8);
        put_le(p + 8, (uint32_t)v->u.date.nanoseconds, 4);
        break;
    case COFFER_TYPE_OBJECT_ID: memcpy(p, v->u.object_id.bytes, 12); break;
    case COFFER_TYPE_UUID: memcpy(p, v->u.uuid.bytes, 16); break;
    case COFFER_TYPE_DECIMAL128:
        put_le(p, v->u.decimal128.w[0], 8);
        put_le(p + 8, v->u.decimal128.w[1], 8);
        break;
    case COFFER_TYPE_LINK:
        put_le(p, v->u.link.class_id, 4);
        put_le(p + 4, v->u.link.key, 8);
        break;
    case COFFER_TYPE_LIST:
    case COFFER_TYPE_MAP: put_le(p, v->u.link.key, 8); break;
    default: break;
    }
}

coffer_status cf_cell_read(const uint8_t *cell, size_t n, coffer_value *out)
{
    memset(out, 0, sizeof *out);
    if (n < 1)
        return cf_error(COFFER_ERR_CORRUPTED, "an empty value cell");
    coffer_type t = (coffer_type)cell[0];
    const uint8_t *p = cell + 1;
    size_t len = n - 1;
    out->type = t;
    if (t == COFFER_TYPE_STRING) {
        if (len < 1 || p[len - 1] != 0)
            return cf_error(COFFER_ERR_CORRUPTED, "a string cell without its terminator");
        out->u.string = (coffer_bytes){p, len - 1};
        return COFFER_OK;
    }
    if (t == COFFER_TYPE_BINARY) {
        out->u.binary = (coffer_bytes){len ? p : (const void *)"", len};
        return COFFER_OK;
    }
    size_t want = fixed_size(t);
    if (want == SIZE_MAX || len != want)
        return cf_error(COFFER_ERR_CORRUPTED, "a value cell of type %u and %zu bytes", (unsigned)cell[0], len);
    switch (t) {
    case COFFER_TYPE_BOOL:
        if (p[0] > 1)
            return cf_error(COFFER_ERR_CORRUPTED, "a bool cell holding %u", p[0]);
        out->u.boolean = p[0] != 0;
        break;
    case COFFER_TYPE_INT: out->u.integer = (int64_t)get_le(p, 8); break;
    case COFFER_TYPE_FLOAT: {
        uint32_t bits = (uint32_t)get_le(p, 4);
        memcpy(&out->u.float_value, &bits, 4);
        break;
    }
    case COFFER_TYPE_DOUBLE: {
        uint64_t bits = get_le(p, 8);
        memcpy(&out->u.double_value, &bits, 8);
        break;
    }
    case COFFER_TYPE_DATE:
        out->u.date.seconds = (int64_t)get_le(p, 8);
        out->u.date.nanoseconds = (int32_t)(uint32_t)get_le(p + 8, 4);
        break;
    case COFFER_TYPE_OBJECT_ID: memcpy(out->u.object_id.bytes, p, 12); break;
    case COFFER_TYPE_UUID: memcpy(out->u.uuid.bytes, p, 16); break;
    case COFFER_TYPE_DECIMAL128:
        out->u.decimal128.w[0] = get_le(p, 8);
        out->u.decimal128.w[1] = get_le(p + 8, 8);
        break;
    case COFFER_TYPE_LINK:
        out->u.link.class_id = (uint32_t)get_le(p, 4);
        out->u.link.key = get_le(p + 4, 8);
        break;
    case COFFER_TYPE_LIST:
    case COFFER_TYPE_MAP: out->u.link.key = get_le(p, 8); break;
    default: break;
    }
    return COFFER_OK;
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
