/* literal — decoding of the literal forms of the query language: strings
 * with escapes, numbers (decimal, hex, inf, nan), dates, oid(), uuid(), B64"". */
#include <locale.h>
#include <math.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/decimal128.h"
#include "util/error.h"
#include "query/lexer.h"

/* ---- strings ------------------------------------------------------------- */

static int escape_char(int c)
{
    switch (c) {
    case '\\': return '\\';
    case '\'': return '\'';
    case '"': return '"';
    case '/': return '/';
    case 'n': return '\n';
    case 'r': return '\r';
    case 't': return '\t';
    case 'b': return '\b';
    case 'f': return '\f';
    case 'v': return '\v';
    case '0': return '\0';
    default: return -1;
    }
}

coffer_status cf_qlit_string(cf_qlexer *lx, cf_qvalue *v)
{
    size_t start = lx->pos, i = start + 1, size = 0;
    char quote = lx->src[start];
    for (;; i++) {
        if (i >= lx->len)
            return cf_qlex_error(lx, start, "unterminated string (expected a closing %c)", quote);
        char c = lx->src[i];
        if (c == quote)
            break;
        if (c == '\\') {
            if (i + 1 >= lx->len)
                return cf_qlex_error(lx, start, "unterminated string (expected a closing %c)", quote);
            if (escape_char((unsigned char)lx->src[i + 1]) < 0) {
                char q[16];
                return cf_qlex_error(lx, i, "unknown escape '\\' %s in a string (known: \\\\ \\' \\\" \\/ \\n \\r \\t \\b \\f \\v \\0)",
                                     cf_quote(q, sizeof q, lx->src + i + 1, 1));
            }
            i++;
        }
        size++;
    }
    char *out = cf_qarena_alloc(lx->arena, size + 1);
    if (!out)
        return cf_qlex_no_memory(lx);
    size_t o = 0;
    for (size_t j = start + 1; j < i; j++) {
        char c = lx->src[j];
        out[o++] = c == '\\' ? (char)escape_char((unsigned char)lx->src[++j]) : c;
    }
    v->kind = CF_QV_STRING;
    v->u.bytes.data = out;
    v->u.bytes.size = size;
    lx->pos = i + 1;
    return COFFER_OK;
}

coffer_status cf_qlit_base64(cf_qlexer *lx, cf_qvalue *v)
{
    size_t start = lx->pos, open = start + 3, i = open + 1;
    char quote = lx->src[open];
    while (i < lx->len && lx->src[i] != quote)
        i++;
    if (i >= lx->len)
        return cf_qlex_error(lx, start, "unterminated B64 literal (expected a closing %c)", quote);
    const char *b64 = lx->src + open + 1;
    size_t b64_len = i - open - 1;
    unsigned char *out = cf_qarena_alloc(lx->arena, b64_len / 4 * 3 + 4);
    if (!out)
        return cf_qlex_no_memory(lx);
    size_t size = 0;
    const char *end = NULL;
    int rc = sodium_base642bin(out, b64_len / 4 * 3 + 3, b64, b64_len, NULL, &size, &end,
                               sodium_base64_VARIANT_ORIGINAL);
    if (rc != 0 || end != b64 + b64_len)
        rc = sodium_base642bin(out, b64_len / 4 * 3 + 3, b64, b64_len, NULL, &size, &end,
                               sodium_base64_VARIANT_ORIGINAL_NO_PADDING);
    if (rc != 0 || end != b64 + b64_len)
        return cf_qlex_error(lx, start, "expected base64 text (A-Z a-z 0-9 + / =) in B64%c...%c",
                             quote, quote);
    out[size] = 0;
    v->kind = CF_QV_BINARY;
    v->u.bytes.data = (const char *)out;
    v->u.bytes.size = size;
    lx->pos = i + 1;
    return COFFER_OK;
}

/* ---- numbers ------------------------------------------------------------- */

/* strtod reads the locale's decimal point; the language always uses '.'. */
static double parse_double(char *text)
{
    const char *point = localeconv()->decimal_point;
    if (point && point[0] && point[0] != '.' && !point[1]) {
        char *dot = strchr(text, '.');
        if (dot)
            *dot = point[0];
        double d = strtod(text, NULL);
        if (dot)
            *dot = '.';
        return d;
    }
    return strtod(text, NULL);
}

static coffer_status set_int(cf_qlexer *lx, cf_qvalue *v, int64_t n)
{
    char buf[24];
    snprintf(buf, sizeof buf, "%lld", (long long)n);
    v->kind = CF_QV_INT;
    v->u.num.integer = n;
    v->u.num.number = (double)n;
    v->u.num.text = cf_qarena_strndup(lx->arena, buf, strlen(buf));
    if (!v->u.num.text)
        return cf_qlex_no_memory(lx);
    v->u.num.has_decimal = true;
    cf_decimal128_from_int64(n, &v->u.num.decimal);
    return COFFER_OK;
}

static coffer_status set_float(cf_qlexer *lx, cf_qvalue *v, const char *text, size_t len)
{
    char *t = cf_qarena_strndup(lx->arena, text, len);
    if (!t)
        return cf_qlex_no_memory(lx);
    v->kind = CF_QV_FLOAT;
    v->u.num.text = t;
    v->u.num.number = parse_double(t);
    /* Not every float is a decimal128 (too many digits); the binder reports
     * that only when the literal meets a decimal128 column. */
    coffer_status saved = coffer_last_status();
    v->u.num.has_decimal = coffer_decimal128_from_string(t, &v->u.num.decimal) == COFFER_OK;
    if (saved == COFFER_OK)
        coffer_clear_error();
    return COFFER_OK;
}

coffer_status cf_qlit_special_float(cf_qlexer *lx, size_t start, bool negative,
                                    const char *word, cf_qvalue *v)
{
    (void)start;
    bool nan = strcmp(word, "nan") == 0;
    coffer_status st = set_float(lx, v, nan ? "nan" : negative ? "-inf" : "inf",
                                 nan ? 3 : negative ? 4 : 3);
    if (st == COFFER_OK)
        v->u.num.number = nan ? NAN : negative ? -INFINITY : INFINITY;
    return st;
}

static int hex_value(int c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static coffer_status hex_number(cf_qlexer *lx, size_t start, size_t i, bool negative, cf_qvalue *v)
{
    uint64_t n = 0;
    size_t digits = 0;
    for (; i < lx->len && hex_value((unsigned char)lx->src[i]) >= 0; i++, digits++) {
        if (n >> 60)
            return cf_qlex_error(lx, start, "hex integer out of the 64-bit range");
        n = n << 4 | (uint64_t)hex_value((unsigned char)lx->src[i]);
    }
    if (digits == 0)
        return cf_qlex_error(lx, start, "expected hex digits after '0x'");
    if (i < lx->len && cf_qlex_is_ident_char((unsigned char)lx->src[i]))
        return cf_qlex_error(lx, i, "unexpected character after a number");
    if (n > (uint64_t)INT64_MAX + (negative ? 1u : 0u))
        return cf_qlex_error(lx, start, "hex integer out of the 64-bit range");
    lx->pos = i;
    int64_t value = negative ? (n == (uint64_t)INT64_MAX + 1u ? INT64_MIN : -(int64_t)n) : (int64_t)n;
    return set_int(lx, v, value);
}

coffer_status cf_qlit_number(cf_qlexer *lx, cf_qvalue *v)
{
    size_t start = lx->pos, i = start;
    bool negative = false;
    if (lx->src[i] == '+' || lx->src[i] == '-')
        negative = lx->src[i++] == '-';
    if (i + 1 < lx->len && lx->src[i] == '0' && (lx->src[i + 1] == 'x' || lx->src[i + 1] == 'X'))
        return hex_number(lx, start, i + 2, negative, v);
    size_t digits_start = i;
    bool integral = true;
    while (i < lx->len && cf_qlex_is_digit((unsigned char)lx->src[i]))
        i++;
    if (i < lx->len && lx->src[i] == '.') {
        integral = false;
        i++;
        while (i < lx->len && cf_qlex_is_digit((unsigned char)lx->src[i]))
            i++;
    }
    if (i < lx->len && (lx->src[i] == 'e' || lx->src[i] == 'E')) {
        integral = false;
        i++;
        if (i < lx->len && (lx->src[i] == '+' || lx->src[i] == '-'))
            i++;
        if (i >= lx->len || !cf_qlex_is_digit((unsigned char)lx->src[i]))
            return cf_qlex_error(lx, start, "expected digits in the exponent of a number");
        while (i < lx->len && cf_qlex_is_digit((unsigned char)lx->src[i]))
            i++;
    }
    if (i < lx->len && cf_qlex_is_ident_char((unsigned char)lx->src[i]))
        return cf_qlex_error(lx, i, "unexpected character after a number");
    lx->pos = i;
    if (integral) {
        uint64_t n = 0;
        bool overflow = false;
        for (size_t j = digits_start; j < i && !overflow; j++) {
            unsigned d = (unsigned)(lx->src[j] - '0');
            if (n > (UINT64_MAX - d) / 10)
                overflow = true;
            else
                n = n * 10 + d;
        }
        if (!overflow && n <= (uint64_t)INT64_MAX + (negative ? 1u : 0u))
            return set_int(lx, v, negative ? (n == (uint64_t)INT64_MAX + 1u ? INT64_MIN : -(int64_t)n)
                                           : (int64_t)n);
    }
    /* A leading '+' is dropped so that the canonical text has one spelling. */
    size_t from = lx->src[start] == '+' ? start + 1 : start;
    return set_float(lx, v, lx->src + from, i - from);
}

/* ---- dates --------------------------------------------------------------- */

static size_t count_digits(const cf_qlexer *lx, size_t pos)
{
    size_t n = 0;
    while (pos + n < lx->len && cf_qlex_is_digit((unsigned char)lx->src[pos + n]))
        n++;
    return n;
}

bool cf_qlit_looks_like_iso_date(const cf_qlexer *lx, size_t pos)
{
    if (count_digits(lx, pos) != 4 || pos + 4 >= lx->len || lx->src[pos + 4] != '-')
        return false;
    return count_digits(lx, pos + 5) > 0;
}

bool cf_qlit_looks_like_t_date(const cf_qlexer *lx, size_t pos)
{
    size_t i = pos + 1;
    if (i < lx->len && lx->src[i] == '-')
        i++;
    size_t n = count_digits(lx, i);
    if (n == 0 || i + n >= lx->len || lx->src[i + n] != ':')
        return false;
    i += n + 1;
    if (i < lx->len && lx->src[i] == '-')
        i++;
    return count_digits(lx, i) > 0;
}

/* Days since 1970-01-01 of a proleptic Gregorian date. */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    unsigned yoe = (unsigned)(y - era * 400);
    unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468;
}

static bool read_field(const cf_qlexer *lx, size_t *i, size_t min_digits, size_t max_digits,
                       char sep, unsigned long *out)
{
    if (sep) {
        if (*i >= lx->len || lx->src[*i] != sep)
            return false;
        (*i)++;
    }
    size_t n = count_digits(lx, *i);
    if (n < min_digits || n > max_digits)
        return false;
    unsigned long v = 0;
    for (size_t k = 0; k < n; k++)
        v = v * 10 + (unsigned long)(lx->src[*i + k] - '0');
    *i += n;
    *out = v;
    return true;
}

coffer_status cf_qlit_iso_date(cf_qlexer *lx, cf_qvalue *v)
{
    static const unsigned month_days[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    size_t start = lx->pos, i = start;
    unsigned long year, month, day, hour, minute, second, nanos = 0;
    bool ok = read_field(lx, &i, 4, 4, 0, &year) && read_field(lx, &i, 1, 2, '-', &month) &&
              read_field(lx, &i, 1, 2, '-', &day) && i < lx->len &&
              (lx->src[i] == '@' || lx->src[i] == 'T');
    if (ok) {
        i++;
        ok = read_field(lx, &i, 1, 2, 0, &hour) && read_field(lx, &i, 1, 2, ':', &minute) &&
             read_field(lx, &i, 1, 2, ':', &second);
    }
    if (ok && i < lx->len && lx->src[i] == ':')
        ok = read_field(lx, &i, 1, 9, ':', &nanos);
    if (!ok || (i < lx->len && cf_qlex_is_ident_char((unsigned char)lx->src[i])))
        return cf_qlex_error(lx, start, "expected a date YYYY-MM-DD@HH:MM:SS or YYYY-MM-DD@HH:MM:SS:NANOS");
    bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    if (month < 1 || month > 12 || day < 1 || day > month_days[month - 1] ||
        (month == 2 && day == 29 && !leap) || hour > 23 || minute > 59 || second > 59)
        return cf_qlex_error(lx, start, "date %.*s does not exist", (int)(i - start), lx->src + start);
    int64_t days = days_from_civil((int64_t)year, (unsigned)month, (unsigned)day);
    int64_t seconds = days * 86400 + (int64_t)(hour * 3600 + minute * 60 + second);
    /* Before 1970 the nanoseconds take the sign of the seconds, as in Realm. */
    if (seconds < 0 && nanos > 0) {
        seconds += 1;
        nanos = 1000000000ul - nanos;
        v->u.date.nanoseconds = -(int32_t)nanos;
    } else {
        v->u.date.nanoseconds = (int32_t)nanos;
    }
    v->kind = CF_QV_DATE;
    v->u.date.seconds = seconds;
    lx->pos = i;
    return COFFER_OK;
}

static bool read_signed(const cf_qlexer *lx, size_t *i, int64_t limit, int64_t *out)
{
    bool negative = *i < lx->len && lx->src[*i] == '-';
    if (negative)
        (*i)++;
    uint64_t n = 0;
    size_t digits = count_digits(lx, *i);
    for (size_t k = 0; k < digits; k++) {
        uint64_t d = (uint64_t)(lx->src[*i + k] - '0');
        if (n > ((uint64_t)limit - d) / 10)
            return false;
        n = n * 10 + d;
    }
    *i += digits;
    *out = negative ? -(int64_t)n : (int64_t)n;
    return true;
}

coffer_status cf_qlit_t_date(cf_qlexer *lx, cf_qvalue *v)
{
    size_t start = lx->pos, i = start + 1;
    int64_t seconds, nanos;
    if (!read_signed(lx, &i, INT64_MAX, &seconds))
        return cf_qlex_error(lx, start, "seconds of a T<seconds>:<nanoseconds> date out of range");
    i++; /* ':' */
    if (!read_signed(lx, &i, 999999999, &nanos))
        return cf_qlex_error(lx, start, "nanoseconds of a T<seconds>:<nanoseconds> date out of range (at most 999999999)");
    if (i < lx->len && cf_qlex_is_ident_char((unsigned char)lx->src[i]))
        return cf_qlex_error(lx, i, "unexpected character after a date");
    if ((seconds > 0 && nanos < 0) || (seconds < 0 && nanos > 0))
        return cf_qlex_error(lx, start, "the nanoseconds of a T<seconds>:<nanoseconds> date must have the sign of the seconds");
    v->kind = CF_QV_DATE;
    v->u.date.seconds = seconds;
    v->u.date.nanoseconds = (int32_t)nanos;
    lx->pos = i;
    return COFFER_OK;
}

/* ---- oid(), uuid() ------------------------------------------------------- */

/* The text between "name(" and ")": its start and length, or false. */
static bool call_contents(const cf_qlexer *lx, size_t open, size_t max, size_t *from, size_t *len)
{
    size_t i = open + 1;
    while (i < lx->len && i - open - 1 <= max && lx->src[i] != ')')
        i++;
    if (i >= lx->len || lx->src[i] != ')')
        return false;
    *from = open + 1;
    *len = i - open - 1;
    return true;
}

coffer_status cf_qlit_object_id(cf_qlexer *lx, cf_qvalue *v)
{
    size_t start = lx->pos, from, len;
    bool ok = call_contents(lx, start + 3, 24, &from, &len) && len == 24;
    for (size_t k = 0; ok && k < 24; k++)
        ok = hex_value((unsigned char)lx->src[from + k]) >= 0;
    if (!ok)
        return cf_qlex_error(lx, start, "expected 24 hex digits in oid(...)");
    for (size_t k = 0; k < 12; k++)
        v->u.object_id.bytes[k] = (uint8_t)(hex_value((unsigned char)lx->src[from + 2 * k]) << 4 |
                                            hex_value((unsigned char)lx->src[from + 2 * k + 1]));
    v->kind = CF_QV_OBJECT_ID;
    lx->pos = from + len + 1;
    return COFFER_OK;
}

coffer_status cf_qlit_uuid(cf_qlexer *lx, cf_qvalue *v)
{
    size_t start = lx->pos, from, len;
    bool ok = call_contents(lx, start + 4, 36, &from, &len) && len == 36;
    size_t byte = 0;
    for (size_t k = 0; ok && k < 36;) {
        if (k == 8 || k == 13 || k == 18 || k == 23) {
            ok = lx->src[from + k] == '-';
            k++;
            continue;
        }
        int hi = hex_value((unsigned char)lx->src[from + k]);
        int lo = hex_value((unsigned char)lx->src[from + k + 1]);
        ok = hi >= 0 && lo >= 0;
        if (ok)
            v->u.uuid.bytes[byte++] = (uint8_t)(hi << 4 | lo);
        k += 2;
    }
    if (!ok)
        return cf_qlex_error(lx, start, "expected a UUID xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx in uuid(...)");
    v->kind = CF_QV_UUID;
    lx->pos = from + len + 1;
    return COFFER_OK;
}
