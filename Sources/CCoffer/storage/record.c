/* record — encoding and O(1) decoding of one object's columns. */
#include "storage/record.h"

#include <string.h>

#include "util/error.h"

#define FLAG_WIDE 1u

size_t cf_scalar_size(const coffer_value *v)
{
    switch (v->type) {
    case COFFER_TYPE_NULL: return 0;
    case COFFER_TYPE_BOOL: return 1;
    case COFFER_TYPE_INT: return 8;
    case COFFER_TYPE_FLOAT: return 4;
    case COFFER_TYPE_DOUBLE: return 8;
    case COFFER_TYPE_STRING: return v->u.string.size + 1;
    case COFFER_TYPE_BINARY: return v->u.binary.size;
    case COFFER_TYPE_DATE: return 12;
    case COFFER_TYPE_OBJECT_ID: return 12;
    case COFFER_TYPE_UUID: return 16;
    case COFFER_TYPE_DECIMAL128: return 16;
    default: return 0; /* links, mixed values and collections are stored as int or binary columns */
    }
}

static size_t header_size(uint16_t ncols, int wide)
{
    return 4 + ((size_t)ncols + 7) / 8 + (size_t)ncols * (wide ? 4 : 2);
}

void cf_scalar_write(uint8_t *p, const coffer_value *v)
{
    switch (v->type) {
    case COFFER_TYPE_BOOL: p[0] = v->u.boolean ? 1 : 0; break;
    case COFFER_TYPE_INT: cf_put_le(p, (uint64_t)v->u.integer, 8); break;
    case COFFER_TYPE_FLOAT: {
        uint32_t bits;
        memcpy(&bits, &v->u.float_value, 4);
        cf_put_le(p, bits, 4);
        break;
    }
    case COFFER_TYPE_DOUBLE: {
        uint64_t bits;
        memcpy(&bits, &v->u.double_value, 8);
        cf_put_le(p, bits, 8);
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
        cf_put_le(p, (uint64_t)v->u.date.seconds, 8);
        cf_put_le(p + 8, (uint32_t)v->u.date.nanoseconds, 4);
        break;
    case COFFER_TYPE_OBJECT_ID: memcpy(p, v->u.object_id.bytes, 12); break;
    case COFFER_TYPE_UUID: memcpy(p, v->u.uuid.bytes, 16); break;
    case COFFER_TYPE_DECIMAL128:
        cf_put_le(p, v->u.decimal128.w[0], 8);
        cf_put_le(p + 8, v->u.decimal128.w[1], 8);
        break;
    default: break;
    }
}

size_t cf_record_size(const coffer_value *slots, uint16_t ncols)
{
    size_t body = 0;
    for (uint16_t i = 0; i < ncols; i++)
        body += cf_scalar_size(&slots[i]);
    return header_size(ncols, body > 0xFFFF) + body;
}

void cf_record_write(uint8_t *out, const coffer_value *slots, uint16_t ncols)
{
    size_t body = 0;
    for (uint16_t i = 0; i < ncols; i++)
        body += cf_scalar_size(&slots[i]);
    int wide = body > 0xFFFF;
    out[0] = CF_RECORD_VERSION;
    out[1] = wide ? FLAG_WIDE : 0;
    cf_put_le(out + 2, ncols, 2);
    uint8_t *nulls = out + 4;
    uint8_t *ends = nulls + ((size_t)ncols + 7) / 8;
    uint8_t *values = out + header_size(ncols, wide);
    memset(nulls, 0, ((size_t)ncols + 7) / 8);
    size_t off = 0;
    for (uint16_t i = 0; i < ncols; i++) {
        const coffer_value *v = &slots[i];
        uint8_t *p = values + off;
        if (v->type == COFFER_TYPE_NULL)
            nulls[i / 8] |= (uint8_t)(1u << (i % 8));
        else
            cf_scalar_write(p, v);
        off += cf_scalar_size(v);
        cf_put_le(ends + (size_t)i * (wide ? 4 : 2), off, wide ? 4 : 2);
    }
}

coffer_status cf_record_parse(const uint8_t *data, size_t len, cf_record *out)
{
    if (len < 4)
        return cf_error(COFFER_ERR_CORRUPTED, "record of %zu bytes is too short", len);
    if (data[0] != CF_RECORD_VERSION)
        return cf_error(data[0] > CF_RECORD_VERSION ? COFFER_ERR_FORMAT_VERSION : COFFER_ERR_CORRUPTED,
                        "record has version %u; this library reads version %u", data[0], CF_RECORD_VERSION);
    if (data[1] & ~FLAG_WIDE)
        return cf_error(COFFER_ERR_CORRUPTED, "record has unknown flags 0x%x", data[1]);
    out->ncols = (uint16_t)cf_get_le(data + 2, 2);
    out->wide = (data[1] & FLAG_WIDE) != 0;
    size_t hs = header_size(out->ncols, out->wide);
    if (len < hs)
        return cf_error(COFFER_ERR_CORRUPTED, "record of %zu bytes is shorter than its header of %zu", len, hs);
    out->nulls = data + 4;
    out->ends = out->nulls + ((size_t)out->ncols + 7) / 8;
    out->values = data + hs;
    out->values_len = len - hs;
    return COFFER_OK;
}

coffer_status cf_scalar_read(const uint8_t *p, size_t n, coffer_type type, coffer_value *out)
{
    memset(out, 0, sizeof *out);
    size_t want = 0;
    switch (type) {
    case COFFER_TYPE_BOOL: want = 1; break;
    case COFFER_TYPE_INT: case COFFER_TYPE_DOUBLE: want = 8; break;
    case COFFER_TYPE_FLOAT: want = 4; break;
    case COFFER_TYPE_DATE: case COFFER_TYPE_OBJECT_ID: want = 12; break;
    case COFFER_TYPE_UUID: case COFFER_TYPE_DECIMAL128: want = 16; break;
    case COFFER_TYPE_STRING:
        if (n == 0 || p[n - 1] != 0)
            return cf_error(COFFER_ERR_CORRUPTED, "a string without its terminator");
        break;
    default: break;
    }
    if (want && n != want)
        return cf_error(COFFER_ERR_CORRUPTED, "%zu bytes where a %s takes %zu", n, coffer_type_name(type), want);
    out->type = type;
    switch (type) {
    case COFFER_TYPE_BOOL:
        if (p[0] > 1)
            return cf_error(COFFER_ERR_CORRUPTED, "a bool holding %u", p[0]);
        out->u.boolean = p[0] != 0;
        break;
    case COFFER_TYPE_INT: out->u.integer = (int64_t)cf_get_le(p, 8); break;
    case COFFER_TYPE_FLOAT: {
        uint32_t bits = (uint32_t)cf_get_le(p, 4);
        memcpy(&out->u.float_value, &bits, 4);
        break;
    }
    case COFFER_TYPE_DOUBLE: {
        uint64_t bits = cf_get_le(p, 8);
        memcpy(&out->u.double_value, &bits, 8);
        break;
    }
    case COFFER_TYPE_STRING: out->u.string = (coffer_bytes){p, n - 1}; break;
    case COFFER_TYPE_BINARY: out->u.binary = (coffer_bytes){n ? p : (const void *)"", n}; break;
    case COFFER_TYPE_DATE:
        out->u.date.seconds = (int64_t)cf_get_le(p, 8);
        out->u.date.nanoseconds = (int32_t)(uint32_t)cf_get_le(p + 8, 4);
        break;
    case COFFER_TYPE_OBJECT_ID: memcpy(out->u.object_id.bytes, p, 12); break;
    case COFFER_TYPE_UUID: memcpy(out->u.uuid.bytes, p, 16); break;
    case COFFER_TYPE_DECIMAL128:
        out->u.decimal128.w[0] = cf_get_le(p, 8);
        out->u.decimal128.w[1] = cf_get_le(p + 8, 8);
        break;
    default:
        return cf_error(COFFER_ERR_CORRUPTED, "a value of unknown type %d", (int)type);
    }
    return COFFER_OK;
}

static size_t end_of(const cf_record *r, uint16_t col)
{
    return (size_t)cf_get_le(r->ends + (size_t)col * (r->wide ? 4 : 2), r->wide ? 4 : 2);
}

int cf_record_raw(const cf_record *r, uint16_t col, const uint8_t **p, size_t *n)
{
    if (col >= r->ncols || (r->nulls[col / 8] >> (col % 8)) & 1)
        return 0;
    size_t start = col ? end_of(r, (uint16_t)(col - 1)) : 0;
    size_t end = end_of(r, col);
    if (start > end || end > r->values_len)
        return -1;
    *p = r->values + start;
    *n = end - start;
    return 1;
}

coffer_status cf_record_get(const cf_record *r, uint16_t col, coffer_type type, coffer_value *out)
{
    const uint8_t *p = NULL;
    size_t n = 0;
    int present = cf_record_raw(r, col, &p, &n);
    memset(out, 0, sizeof *out);
    if (present == 0) {
        out->type = COFFER_TYPE_NULL;
        return COFFER_OK;
    }
    if (present < 0)
        return cf_error(COFFER_ERR_CORRUPTED, "record column %u lies outside the record", col);
    coffer_status st = cf_scalar_read(p, n, type, out);
    return st == COFFER_OK ? st : cf_error_prefix("record column %u", col);
}
