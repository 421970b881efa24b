/* wire — the sync protocol's primitive encodings: varints, fixed-size
 * integers, length-prefixed bytes and strings, and the structural check of
 * values (docs/SYNC.md). Every read is bounds-checked and names the frame,
 * the field and the offset when the input is short or impossible. */
#include "sync/wire.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/error.h"

void cf_wire_varint(cf_buf *b, uint64_t v)
{
    cf_buf_varint(b, v);
}

void cf_wire_zigzag(cf_buf *b, int64_t v)
{
    cf_wire_varint(b, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}

void cf_wire_u64le(cf_buf *b, uint64_t v)
{
    uint8_t tmp[8];
    for (int i = 0; i < 8; i++)
        tmp[i] = (uint8_t)(v >> (8 * i));
    cf_buf_put(b, tmp, 8);
}

void cf_wire_u8(cf_buf *b, uint8_t v)
{
    cf_buf_put(b, &v, 1);
}

void cf_wire_bytes(cf_buf *b, const void *p, size_t n)
{
    cf_wire_varint(b, n);
    cf_buf_put(b, p, n);
}

coffer_status cf_wire_bad(const cf_wreader *r, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return cf_error(COFFER_ERR_CORRUPTED, "%s: %s (at byte %zu)", r->frame, msg, (size_t)(r->p - r->start));
}

static coffer_status truncated(const cf_wreader *r, const char *what)
{
    return cf_wire_bad(r, "truncated: it ends inside %s", what);
}

coffer_status cf_wire_get_varint(cf_wreader *r, uint64_t *out, const char *what)
{
    uint64_t v = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
        if (r->p >= r->end)
            return truncated(r, what);
        uint8_t byte = *r->p++;
        if (shift == 63 && byte > 1)
            return cf_wire_bad(r, "%s: a varint larger than 64 bits", what);
        v |= (uint64_t)(byte & 0x7f) << shift;
        if (!(byte & 0x80)) {
            *out = v;
            return COFFER_OK;
        }
    }
    return cf_wire_bad(r, "%s: a varint longer than 10 bytes", what);
}

coffer_status cf_wire_get_zigzag(cf_wreader *r, int64_t *out, const char *what)
{
    uint64_t u = 0;
    coffer_status st = cf_wire_get_varint(r, &u, what);
    if (st == COFFER_OK)
        *out = (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
    return st;
}

coffer_status cf_wire_get_raw(cf_wreader *r, size_t n, const uint8_t **out, const char *what)
{
    if (cf_wreader_left(r) < n)
        return truncated(r, what);
    *out = r->p;
    r->p += n;
    return COFFER_OK;
}

coffer_status cf_wire_get_u64le(cf_wreader *r, uint64_t *out, const char *what)
{
    const uint8_t *p = NULL;
    coffer_status st = cf_wire_get_raw(r, 8, &p, what);
    if (st != COFFER_OK)
        return st;
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    *out = v;
    return COFFER_OK;
}

coffer_status cf_wire_get_u8(cf_wreader *r, uint8_t *out, const char *what)
{
    const uint8_t *p = NULL;
    coffer_status st = cf_wire_get_raw(r, 1, &p, what);
    if (st == COFFER_OK)
        *out = *p;
    return st;
}

coffer_status cf_wire_get_bytes(cf_wreader *r, cf_slice *out, const char *what)
{
    uint64_t n = 0;
    coffer_status st = cf_wire_get_varint(r, &n, what);
    if (st != COFFER_OK)
        return st;
    if (n > cf_wreader_left(r))
        return cf_wire_bad(r, "%s: a length of %llu bytes, but %zu remain", what, (unsigned long long)n, cf_wreader_left(r));
    out->p = r->p;
    out->n = (size_t)n;
    r->p += n;
    return COFFER_OK;
}

coffer_status cf_wire_get_string(cf_wreader *r, cf_slice *out, const char *what)
{
    coffer_status st = cf_wire_get_bytes(r, out, what);
    if (st == COFFER_OK && out->n && memchr(out->p, 0, out->n))
        return cf_wire_bad(r, "%s: a string containing a NUL byte", what);
    return st;
}

coffer_status cf_wire_get_count(cf_wreader *r, uint64_t *out, size_t min_size, const char *what)
{
    coffer_status st = cf_wire_get_varint(r, out, what);
    if (st == COFFER_OK && min_size && *out > cf_wreader_left(r) / min_size)
        return cf_wire_bad(r, "%s: %llu items cannot fit in the %zu bytes that remain", what, (unsigned long long)*out,
                           cf_wreader_left(r));
    return st;
}

static coffer_status check_value(cf_wreader *r, int depth, const char *what)
{
    uint8_t tag;
    const uint8_t *raw;
    uint64_t n;
    int64_t i, ns;
    cf_slice s;
    coffer_status st = cf_wire_get_u8(r, &tag, what);
    if (st != COFFER_OK)
        return st;
    if (depth > CF_WIRE_MAX_DEPTH)
        return cf_wire_bad(r, "%s: values nested deeper than %d levels", what, CF_WIRE_MAX_DEPTH);
    switch (tag) {
    case CF_SV_NULL:
        return COFFER_OK;
    case CF_SV_BOOL:
        st = cf_wire_get_u8(r, &tag, what);
        if (st == COFFER_OK && tag > 1)
            return cf_wire_bad(r, "%s: a bool of %u (0 or 1)", what, tag);
        return st;
    case CF_SV_INT:
        return cf_wire_get_zigzag(r, &i, what);
    case CF_SV_FLOAT:
        return cf_wire_get_raw(r, 4, &raw, what);
    case CF_SV_DOUBLE:
        return cf_wire_get_raw(r, 8, &raw, what);
    case CF_SV_STRING:
        return cf_wire_get_string(r, &s, what);
    case CF_SV_BINARY:
        return cf_wire_get_bytes(r, &s, what);
    case CF_SV_DATE:
        if ((st = cf_wire_get_zigzag(r, &i, what)) != COFFER_OK || (st = cf_wire_get_zigzag(r, &ns, what)) != COFFER_OK)
            return st;
        if (ns > 999999999 || ns < -999999999)
            return cf_wire_bad(r, "%s: a date with %lld nanoseconds", what, (long long)ns);
        return COFFER_OK;
    case CF_SV_OBJECT_ID:
        return cf_wire_get_raw(r, 12, &raw, what);
    case CF_SV_UUID:
    case CF_SV_DECIMAL128:
        return cf_wire_get_raw(r, 16, &raw, what);
    case CF_SV_LINK:
        if ((st = cf_wire_get_string(r, &s, what)) != COFFER_OK)
            return st;
        return check_value(r, depth + 1, what);
    case CF_SV_EMBEDDED:
        if ((st = cf_wire_get_string(r, &s, what)) != COFFER_OK || (st = cf_wire_get_count(r, &n, 2, what)) != COFFER_OK)
            return st;
        for (uint64_t k = 0; k < n; k++)
            if ((st = cf_wire_get_string(r, &s, what)) != COFFER_OK || (st = check_value(r, depth + 1, what)) != COFFER_OK)
                return st;
        return COFFER_OK;
    case CF_SV_LIST:
        if ((st = cf_wire_get_count(r, &n, 1, what)) != COFFER_OK)
            return st;
        for (uint64_t k = 0; k < n; k++)
            if ((st = check_value(r, depth + 1, what)) != COFFER_OK)
                return st;
        return COFFER_OK;
    case CF_SV_MAP:
        if ((st = cf_wire_get_count(r, &n, 2, what)) != COFFER_OK)
            return st;
        for (uint64_t k = 0; k < n; k++)
            if ((st = cf_wire_get_string(r, &s, what)) != COFFER_OK || (st = check_value(r, depth + 1, what)) != COFFER_OK)
                return st;
        return COFFER_OK;
    default:
        r->p--;
        return cf_wire_bad(r, "%s: unknown value tag %u", what, tag);
    }
}

coffer_status cf_wire_get_value(cf_wreader *r, cf_slice *out, const char *what)
{
    const uint8_t *start = r->p;
    coffer_status st = check_value(r, 0, what);
    if (st == COFFER_OK) {
        out->p = start;
        out->n = (size_t)(r->p - start);
    }
    return st;
}

char *cf_slice_strdup(cf_slice s)
{
    char *out = malloc(s.n + 1);
    if (out) {
        if (s.n)
            memcpy(out, s.p, s.n);
        out[s.n] = 0;
    }
    return out;
}
