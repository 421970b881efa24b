/* compare — how query values compare: numbers across int, float, double and
 * decimal128 by value, bytes by bytes, and the total order SORT uses. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util/buffer.h"
#include "util/decimal128.h"
#include "query/engine.h"

static int sign(int64_t d) { return d < 0 ? -1 : d > 0; }

static int is_number(coffer_type t)
{
    return t == COFFER_TYPE_INT || t == COFFER_TYPE_FLOAT || t == COFFER_TYPE_DOUBLE || t == COFFER_TYPE_DECIMAL128;
}

static double as_double(const coffer_value *v)
{
    return v->type == COFFER_TYPE_FLOAT ? (double)v->u.float_value : v->u.double_value;
}

/* NaN sorts before every number and equals NaN, as in decimal128. */
static int double_compare(double a, double b)
{
    if (isnan(a) || isnan(b))
        return isnan(a) && isnan(b) ? 0 : isnan(a) ? -1 : 1;
    return a < b ? -1 : a > b;
}

/* An int64 against a double, exactly (no rounding of large integers). */
static int int_double_compare(int64_t i, double d)
{
    if (isnan(d))
        return 1;
    if (d >= 9223372036854775808.0)
        return -1;
    if (d < -9223372036854775808.0)
        return 1;
    int64_t t = (int64_t)d; /* truncates toward zero, in range here */
    if (i != t)
        return i < t ? -1 : 1;
    double frac = d - (double)t;
    return frac > 0 ? -1 : frac < 0;
}

static void to_decimal(const coffer_value *v, coffer_decimal128 *out)
{
    switch (v->type) {
    case COFFER_TYPE_INT: cf_decimal128_from_int64(v->u.integer, out); break;
    case COFFER_TYPE_DECIMAL128: *out = v->u.decimal128; break;
    default: cf_decimal128_from_double(as_double(v), out); break;
    }
}

static int number_compare(const coffer_value *a, const coffer_value *b)
{
    if (a->type == COFFER_TYPE_DECIMAL128 || b->type == COFFER_TYPE_DECIMAL128) {
        coffer_decimal128 x, y;
        to_decimal(a, &x);
        to_decimal(b, &y);
        return cf_decimal128_compare(&x, &y);
    }
    if (a->type == COFFER_TYPE_INT && b->type == COFFER_TYPE_INT)
        return a->u.integer < b->u.integer ? -1 : a->u.integer > b->u.integer;
    if (a->type == COFFER_TYPE_INT)
        return int_double_compare(a->u.integer, as_double(b));
    if (b->type == COFFER_TYPE_INT)
        return -int_double_compare(b->u.integer, as_double(a));
    return double_compare(as_double(a), as_double(b));
}

static int bytes_compare(const coffer_bytes *a, const coffer_bytes *b)
{
    size_t n = a->size < b->size ? a->size : b->size;
    int c = n ? memcmp(a->data, b->data, n) : 0;
    if (c)
        return c < 0 ? -1 : 1;
    return a->size < b->size ? -1 : a->size > b->size;
}

static int is_bytes(coffer_type t) { return t == COFFER_TYPE_STRING || t == COFFER_TYPE_BINARY; }

int cf_qvalue_compare(const coffer_value *a, const coffer_value *b, int *cmp)
{
    if (is_number(a->type) && is_number(b->type)) {
        *cmp = number_compare(a, b);
        return 0;
    }
    if (is_bytes(a->type) && is_bytes(b->type)) {
        *cmp = bytes_compare(&a->u.string, &b->u.string);
        return 0;
    }
    if (a->type != b->type)
        return -1;
    switch (a->type) {
    case COFFER_TYPE_BOOL: *cmp = (int)a->u.boolean - (int)b->u.boolean; return 0;
    case COFFER_TYPE_DATE:
        if (a->u.date.seconds != b->u.date.seconds)
            *cmp = a->u.date.seconds < b->u.date.seconds ? -1 : 1;
        else
            *cmp = sign((int64_t)a->u.date.nanoseconds - b->u.date.nanoseconds);
        return 0;
    case COFFER_TYPE_OBJECT_ID: *cmp = sign(memcmp(a->u.object_id.bytes, b->u.object_id.bytes, 12)); return 0;
    case COFFER_TYPE_UUID: *cmp = sign(memcmp(a->u.uuid.bytes, b->u.uuid.bytes, 16)); return 0;
    case COFFER_TYPE_LINK:
        if (a->u.link.class_id != b->u.link.class_id)
            return -1;
        *cmp = a->u.link.key < b->u.link.key ? -1 : a->u.link.key > b->u.link.key;
        return 0;
    default: return -1;
    }
}

int cf_qvalue_equal(const coffer_value *a, const coffer_value *b)
{
    if (a->type == COFFER_TYPE_NULL || b->type == COFFER_TYPE_NULL)
        return a->type == b->type;
    /* A string never equals binary data in a mixed value, though the
     * operators compare the bytes of both. */
    if (a->type != b->type && is_bytes(a->type) && is_bytes(b->type))
        return 0;
    int c;
    return cf_qvalue_compare(a, b, &c) == 0 && c == 0;
}

/* The rank of a kind in the SORT order, as Realm orders mixed values:
 * null, bools, numbers, strings, binaries, dates, object ids, uuids, links. */
static int kind_rank(coffer_type t)
{
    switch (t) {
    case COFFER_TYPE_NULL: return 0;
    case COFFER_TYPE_BOOL: return 1;
    case COFFER_TYPE_INT:
    case COFFER_TYPE_FLOAT:
    case COFFER_TYPE_DOUBLE:
    case COFFER_TYPE_DECIMAL128: return 2;
    case COFFER_TYPE_STRING: return 3;
    case COFFER_TYPE_BINARY: return 4;
    case COFFER_TYPE_DATE: return 5;
    case COFFER_TYPE_OBJECT_ID: return 6;
    case COFFER_TYPE_UUID: return 7;
    case COFFER_TYPE_LINK: return 8;
    default: return 9;
    }
}

int cf_qvalue_sort_compare(const coffer_value *a, const coffer_value *b)
{
    int ra = kind_rank(a->type), rb = kind_rank(b->type);
    if (ra != rb)
        return ra < rb ? -1 : 1;
    if (ra == 8 && a->u.link.class_id != b->u.link.class_id)
        return a->u.link.class_id < b->u.link.class_id ? -1 : 1;
    int c = 0;
    if (cf_qvalue_compare(a, b, &c) != 0)
        return 0;
    return c;
}

const char *cf_qvalue_type_name(const coffer_value *v)
{
    switch (v->type) {
    case COFFER_TYPE_NULL: return "null";
    case COFFER_TYPE_DECIMAL128: return "decimal";
    case COFFER_TYPE_LINK: return "object";
    case COFFER_TYPE_MAP: return "dictionary";
    default: return coffer_type_name(v->type);
    }
}

static int name_is(const char *name, size_t len, const char *want)
{
    return strlen(want) == len && strncasecmp(name, want, len) == 0;
}

int cf_qtype_name_matches(const coffer_value *v, const char *name, size_t len)
{
    if (name_is(name, len, cf_qvalue_type_name(v)))
        return 1;
    switch (v->type) {
    case COFFER_TYPE_INT:
    case COFFER_TYPE_FLOAT:
    case COFFER_TYPE_DOUBLE: return name_is(name, len, "numeric");
    case COFFER_TYPE_DECIMAL128: return name_is(name, len, "numeric") || name_is(name, len, "decimal128");
    case COFFER_TYPE_BOOL: return name_is(name, len, "boolean");
    case COFFER_TYPE_DATE: return name_is(name, len, "timestamp");
    case COFFER_TYPE_LINK: return name_is(name, len, "link");
    case COFFER_TYPE_LIST: return name_is(name, len, "array");
    case COFFER_TYPE_MAP: return name_is(name, len, "map");
    default: return 0;
    }
}

int cf_qvals_push(cf_qvals *vals, const coffer_value *v)
{
    coffer_value *p = cf_grow(vals->v, vals->n, &vals->cap, sizeof *p, 16);
    if (!p)
        return -1;
    vals->v = p;
    vals->v[vals->n++] = *v;
    return 0;
}
