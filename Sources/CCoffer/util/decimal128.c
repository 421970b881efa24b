/* decimal128 — IEEE 754-2008 decimal128 in BID encoding: parsing and
 * formatting as the BSON Decimal128 specification does them, numeric
 * comparison and conversions to and from binary floating point.
 *
 * Layout of the 128 bits (w[1] high, w[0] low):
 *   bit 127        sign
 *   bits 126..122  11111 NaN (bit 121 set: signalling), 11110 infinity
 *   bits 126..125  11: second form, coefficient 100b followed by bits 110..0
 *                  (always more than 10^34 - 1, so non-canonical: read as 0),
 *                  biased exponent in bits 124..111
 *   otherwise      biased exponent in bits 126..113, coefficient in 112..0
 * The exponent bias is 6176; exponents run from -6176 to 6111 and the
 * coefficient from 0 to 10^34 - 1. */
#include "util/decimal128.h"
#include "util/error.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__extension__ typedef unsigned __int128 u128;

#define EXP_MIN (-6176)
#define EXP_MAX 6111
#define EXP_BIAS 6176
#define MAX_DIGITS 34
/* Caps the exponent written in the text while it is read: anything beyond
 * this is out of range for every coefficient, and zeros clamp anyway. */
#define EXP_TEXT_CAP 100000000LL

#define HIGH_NAN 0x7C00000000000000ULL
#define HIGH_INF 0x7800000000000000ULL
#define HIGH_SIGN 0x8000000000000000ULL

static u128 pow10_u128(int n)
{
    u128 r = 1;
    while (n-- > 0)
        r *= 10;
    return r;
}

/* 10^34 - 1, the largest coefficient. */
static u128 coef_max(void)
{
    return pow10_u128(MAX_DIGITS) - 1;
}

enum kind { KIND_FINITE, KIND_INF, KIND_NAN };

typedef struct parts {
    int negative;
    enum kind kind;
    u128 coef;
    int exp;
} parts;

static void decode(const coffer_decimal128 *d, parts *p)
{
    uint64_t hi = d->w[1], lo = d->w[0];
    unsigned top5 = (unsigned)((hi >> 58) & 0x1F);

    p->negative = (int)(hi >> 63);
    p->coef = 0;
    p->exp = 0;
    if (top5 == 0x1F) {
        p->kind = KIND_NAN;
        return;
    }
    if (top5 == 0x1E) {
        p->kind = KIND_INF;
        return;
    }
    p->kind = KIND_FINITE;
    if (((hi >> 61) & 3) == 3) {
        /* The implied coefficient is at least 2^113 > 10^34 - 1. */
        p->exp = (int)((hi >> 47) & 0x3FFF) - EXP_BIAS;
    } else {
        p->exp = (int)((hi >> 49) & 0x3FFF) - EXP_BIAS;
        p->coef = ((u128)(hi & ((1ULL << 49) - 1)) << 64) | lo;
        if (p->coef > coef_max())
            p->coef = 0;
    }
}

/* `coef` <= 10^34 - 1 and EXP_MIN <= exp <= EXP_MAX. */
static void encode(int negative, u128 coef, int exp, coffer_decimal128 *out)
{
    uint64_t biased = (uint64_t)(exp + EXP_BIAS);
    out->w[1] = (negative ? HIGH_SIGN : 0) | (biased << 49) | (uint64_t)(coef >> 64);
    out->w[0] = (uint64_t)coef;
}

static int digit_count(u128 c)
{
    int n = 0;
    while (c) {
        n++;
        c /= 10;
    }
    return n;
}

static int ascii_lower(int c)
{
    return (c >= 'A' && c <= 'Z') ? c - 'A' + 'a' : c;
}

/* Case-insensitive: the `len` bytes at `s` are exactly `word`. */
static int equals_word(const char *s, size_t len, const char *word)
{
    size_t n = strlen(word);
    if (len != n)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (ascii_lower((unsigned char)s[i]) != word[i])
            return 0;
    return 1;
}

static coffer_status parse_error(const char *text, size_t len, const char *what)
{
    char q[96];
    return cf_error(COFFER_ERR_INVALID_ARGUMENT, "decimal128: %s %s",
                    cf_quote(q, sizeof q, text, len), what);
}

static coffer_status parse(const char *text, size_t len, coffer_decimal128 *out)
{
    size_t i = 0;
    int negative = 0;

    if (i < len && (text[i] == '+' || text[i] == '-')) {
        negative = text[i] == '-';
        i++;
    }
    if (equals_word(text + i, len - i, "inf") || equals_word(text + i, len - i, "infinity")) {
        out->w[1] = HIGH_INF | (negative ? HIGH_SIGN : 0);
        out->w[0] = 0;
        return COFFER_OK;
    }
    if (equals_word(text + i, len - i, "nan")) {
        /* Quiet NaN; "-NaN" keeps its sign bit (BSON prints it as "NaN"). */
        out->w[1] = HIGH_NAN | (negative ? HIGH_SIGN : 0);
        out->w[0] = 0;
        return COFFER_OK;
    }

    /* Coefficient: digits with at most one '.', at least one digit. */
    u128 coef = 0;
    size_t digits = 0;      /* every digit read */
    size_t fraction = 0;    /* digits after the point */
    size_t significant = 0; /* digits from the first non-zero one */
    size_t dropped = 0;     /* zeros past the 34th significant digit */
    int seen_point = 0, inexact = 0;
    for (; i < len; i++) {
        char c = text[i];
        if (c == '.') {
            if (seen_point)
                return parse_error(text, len, "is not a number");
            seen_point = 1;
            continue;
        }
        if (c < '0' || c > '9')
            break;
        digits++;
        if (seen_point)
            fraction++;
        if (significant == 0 && c == '0')
            continue;
        significant++;
        if (significant <= MAX_DIGITS)
            coef = coef * 10 + (unsigned)(c - '0');
        else if (c == '0')
            dropped++;
        else
            inexact = 1;
    }
    if (digits == 0)
        return parse_error(text, len, "is not a number");

    /* Exponent. */
    long long exp_text = 0;
    if (i < len && (text[i] == 'e' || text[i] == 'E')) {
        int exp_negative = 0;
        size_t exp_digits = 0;
        i++;
        if (i < len && (text[i] == '+' || text[i] == '-')) {
            exp_negative = text[i] == '-';
            i++;
        }
        for (; i < len && text[i] >= '0' && text[i] <= '9'; i++) {
            exp_digits++;
            if (exp_text < EXP_TEXT_CAP)
                exp_text = exp_text * 10 + (text[i] - '0');
        }
        if (exp_digits == 0)
            return parse_error(text, len, "is not a number");
        if (exp_negative)
            exp_text = -exp_text;
    }
    if (i != len)
        return parse_error(text, len, "is not a number");
    if (inexact)
        return parse_error(text, len, "has more than 34 significant digits");

    /* Digit counts are bounded by the length of a string in memory, so
     * this cannot overflow a long long. */
    long long exp = exp_text - (long long)fraction + (long long)dropped;

    if (coef == 0) {
        /* Zeros clamp to the exponent range: the value is the same. */
        if (exp > EXP_MAX)
            exp = EXP_MAX;
        if (exp < EXP_MIN)
            exp = EXP_MIN;
    } else {
        /* Fold the exponent into the coefficient where that is exact. */
        u128 max = coef_max();
        while (exp > EXP_MAX && coef * 10 <= max) {
            coef *= 10;
            exp--;
        }
        while (exp < EXP_MIN && coef % 10 == 0) {
            coef /= 10;
            exp++;
        }
        if (exp > EXP_MAX)
            return parse_error(text, len, "is too large for decimal128");
        if (exp < EXP_MIN)
            return parse_error(text, len, "is too small for decimal128 (it would be rounded)");
    }
    encode(negative, coef, (int)exp, out);
    return COFFER_OK;
}

COFFER_API coffer_status coffer_decimal128_from_string(const char *text, coffer_decimal128 *out)
{
    if (text == NULL)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "decimal128: text is NULL");
    if (out == NULL)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "decimal128: out is NULL");
    return parse(text, strlen(text), out);
}

/* Writes the coefficient's decimal digits ("0" for zero) and a NUL;
 * returns the number of digits. `buf` holds at least MAX_DIGITS + 1. */
static int coefficient_digits(u128 coef, char *buf)
{
    char tmp[MAX_DIGITS + 8];
    int n = 0;
    do {
        tmp[n++] = (char)('0' + (int)(coef % 10));
        coef /= 10;
    } while (coef != 0 && n < (int)sizeof tmp);
    for (int k = 0; k < n; k++)
        buf[k] = tmp[n - 1 - k];
    buf[n] = '\0';
    return n;
}

COFFER_API void coffer_decimal128_to_string(const coffer_decimal128 *d, char *buf)
{
    parts p;
    char digits[MAX_DIGITS + 8];
    char *o = buf;

    if (buf == NULL)
        return;
    if (d == NULL) {
        buf[0] = '\0';
        return;
    }
    decode(d, &p);
    if (p.kind == KIND_NAN) {
        strcpy(buf, "NaN");
        return;
    }
    if (p.negative)
        *o++ = '-';
    if (p.kind == KIND_INF) {
        strcpy(o, "Infinity");
        return;
    }

    int n = coefficient_digits(p.coef, digits);
    int adjusted = n - 1 + p.exp;
    if (p.exp > 0 || adjusted < -6) {
        /* Scientific notation: d[.ddd]E+-x */
        *o++ = digits[0];
        if (n > 1) {
            *o++ = '.';
            memcpy(o, digits + 1, (size_t)(n - 1));
            o += n - 1;
        }
        snprintf(o, 8, "E%+d", adjusted);
    } else if (p.exp == 0) {
        memcpy(o, digits, (size_t)n + 1);
    } else {
        int point = n + p.exp; /* digits before the decimal point */
        if (point > 0) {
            memcpy(o, digits, (size_t)point);
            o += point;
            *o++ = '.';
            memcpy(o, digits + point, (size_t)(n - point) + 1);
        } else {
            /* adjusted >= -6 bounds the leading zeros to 5. */
            *o++ = '0';
            *o++ = '.';
            for (int k = 0; k < -point; k++)
                *o++ = '0';
            memcpy(o, digits, (size_t)n + 1);
        }
    }
}

/* Compares the magnitudes of two non-zero finite values. */
static int compare_magnitude(u128 ca, int ea, u128 cb, int eb)
{
    int aa = digit_count(ca) + ea, ab = digit_count(cb) + eb;
    if (aa != ab)
        return aa < ab ? -1 : 1;
    /* Equal adjusted exponents: |ea - eb| < 34 and the scaled coefficient
     * has as many digits as the other one, so it fits. */
    if (ea > eb)
        ca *= pow10_u128(ea - eb);
    else if (eb > ea)
        cb *= pow10_u128(eb - ea);
    return ca < cb ? -1 : ca > cb ? 1 : 0;
}

/* -2 -inf, -1 negative, 0 zero, 1 positive, 2 +inf. */
static int value_class(const parts *p)
{
    if (p->kind == KIND_INF)
        return p->negative ? -2 : 2;
    if (p->coef == 0)
        return 0;
    return p->negative ? -1 : 1;
}

int cf_decimal128_compare(const coffer_decimal128 *a, const coffer_decimal128 *b)
{
    parts pa, pb;
    decode(a, &pa);
    decode(b, &pb);
    if (pa.kind == KIND_NAN || pb.kind == KIND_NAN) {
        if (pa.kind == pb.kind)
            return 0;
        return pa.kind == KIND_NAN ? -1 : 1;
    }
    int ca = value_class(&pa), cb = value_class(&pb);
    if (ca != cb)
        return ca < cb ? -1 : 1;
    if (ca == 0 || ca == 2 || ca == -2)
        return 0;
    int m = compare_magnitude(pa.coef, pa.exp, pb.coef, pb.exp);
    return ca > 0 ? m : -m;
}

double cf_decimal128_to_double(const coffer_decimal128 *d)
{
    parts p;
    char digits[MAX_DIGITS + 8];
    char text[MAX_DIGITS + 32];

    decode(d, &p);
    if (p.kind == KIND_NAN)
        return NAN;
    if (p.kind == KIND_INF)
        return p.negative ? -INFINITY : INFINITY;
    coefficient_digits(p.coef, digits);
    /* No decimal point, so the locale does not matter to strtod. */
    snprintf(text, sizeof text, "%s%se%d", p.negative ? "-" : "", digits, p.exp);
    int saved = errno;
    double v = strtod(text, NULL);
    errno = saved;
    return v;
}

/* Copies printf output into `out`, replacing the locale's decimal point
 * (whatever bytes it is) with '.'. */
static size_t normalise_number(const char *in, char *out, size_t size)
{
    size_t o = 0;
    int in_point = 0;
    for (const char *s = in; *s && o + 1 < size; s++) {
        char c = *s;
        if ((c >= '0' && c <= '9') || c == '-' || c == '+' || c == 'e' || c == 'E') {
            out[o++] = c;
            in_point = 0;
        } else if (!in_point) {
            out[o++] = '.';
            in_point = 1;
        }
    }
    out[o] = '\0';
    return o;
}

coffer_status cf_decimal128_from_double(double v, coffer_decimal128 *out)
{
    char text[64], clean[64];

    if (out == NULL)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "decimal128: out is NULL");
    if (isnan(v)) {
        out->w[1] = HIGH_NAN;
        out->w[0] = 0;
        return COFFER_OK;
    }
    if (isinf(v)) {
        out->w[1] = HIGH_INF | (v < 0 ? HIGH_SIGN : 0);
        out->w[0] = 0;
        return COFFER_OK;
    }
    /* The fewest significant digits that read back as v; 17 always do. */
    int saved = errno;
    for (int precision = 1; precision <= 17; precision++) {
        snprintf(text, sizeof text, "%.*g", precision, v);
        if (strtod(text, NULL) == v)
            break;
    }
    errno = saved;
    size_t len = normalise_number(text, clean, sizeof clean);
    return parse(clean, len, out);
}

void cf_decimal128_from_int64(int64_t v, coffer_decimal128 *out)
{
    if (out == NULL)
        return;
    uint64_t magnitude = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    encode(v < 0, (u128)magnitude, 0, out);
}
