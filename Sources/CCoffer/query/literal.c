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
#include "query/literal.h"

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

coffer_status cf_qlit_string(cf_qscan *sc, cf_qvalue *v)
{
    size_t start = sc->pos, i = start + 1, size = 0;
    char quote = sc->src[start];
    for (;; i++) {
        if (i >= sc->len)
            return cf_qscan_error(sc, start, "unterminated string (expected a closing %c)", quote);
        char c = sc->src[i];
        if (c == quote)
            break;
        if (c == '\\') {
            if (i + 1 >= sc->len)
                return cf_qscan_error(sc, start, "unterminated string (expected a closing %c)", quote);
            if (escape_char((unsigned char)sc->src[i + 1]) < 0) {
                char q[16];
                return cf_qscan_error(sc, i, "unknown escape '\\' %s in a string (known: \\\\ \\' \\\" \\/ \\n \\r \\t \\b \\f \\v \\0)",
                                     cf_quote(q, sizeof q, sc->src + i + 1, 1));
            }
            i++;
        }
        size++;
    }
    char *out = cf_qarena_alloc(sc->arena, size + 1);
    if (!out)
        return cf_qscan_no_memory(sc);
    size_t o = 0;
    for (size_t j = start + 1; j < i; j++) {
        char c = sc->src[j];
        out[o++] = c == '\\' ? (char)escape_char((unsigned char)sc->src[++j]) : c;
    }
    v->kind = CF_QV_STRING;
    v->u.bytes.data = out;
    v->u.bytes.size = size;
    sc->pos = i + 1;
    return COFFER_OK;
}

coffer_status cf_qlit_base64(cf_qscan *sc, cf_qvalue *v)
{
    size_t start = sc->pos, open = start + 3, i = open + 1;
    char quote = sc->src[open];
    while (i < sc->len && sc->src[i] != quote)
        i++;
    if (i >= sc->len)
        return cf_qscan_error(sc, start, "unterminated B64 literal (expected a closing %c)", quote);
    const char *b64 = sc->src + open + 1;
    size_t b64_len = i - open - 1;
    unsigned char *out = cf_qarena_alloc(sc->arena, b64_len / 4 * 3 + 4);
    if (!out)
        return cf_qscan_no_memory(sc);
    size_t size = 0;
    const char *end = NULL;
    int rc = sodium_base642bin(out, b64_len / 4 * 3 + 3, b64, b64_len, NULL, &size, &end,
                               sodium_base64_VARIANT_ORIGINAL);
    if (rc != 0 || end != b64 + b64_len)
        rc = sodium_base642bin(out, b64_len / 4 * 3 + 3, b64, b64_len, NULL, &size, &end,
                               sodium_base64_VARIANT_ORIGINAL_NO_PADDING);
    if (rc != 0 || end != b64 + b64_len)
        return cf_qscan_error(sc, start, "expected base64 text (A-Z a-z 0-9 + / =) in B64%c...%c",
                             quote, quote);
    out[size] = 0;
    v->kind = CF_QV_BINARY;
    v->u.bytes.data = (const char *)out;
    v->u.bytes.size = size;
    sc->pos = i + 1;
    return COFFER_OK;
}

static void skip_spaces(cf_qscan *sc)
{
    while (sc->pos < sc->len && strchr(" \t\r\n\f\v", sc->src[sc->pos]) && sc->src[sc->pos])
        sc->pos++;
}

coffer_status cf_qlit_bin(cf_qscan *sc, size_t open, cf_qvalue *v)
{
    size_t start = sc->pos;
    sc->pos = open + 1;
    skip_spaces(sc);
    coffer_status st;
    if (sc->len - sc->pos >= 4 && memcmp(sc->src + sc->pos, "B64", 3) == 0 &&
        (sc->src[sc->pos + 3] == '"' || sc->src[sc->pos + 3] == '\''))
        st = cf_qlit_base64(sc, v);
    else if (sc->pos < sc->len && (sc->src[sc->pos] == '"' || sc->src[sc->pos] == '\''))
        st = cf_qlit_string(sc, v);
    else
        return cf_qscan_error(sc, sc->pos, "expected a string or B64\"...\" in %.*s(...)", (int)(open - start),
                              sc->src + start);
    if (st != COFFER_OK)
        return st;
    skip_spaces(sc);
    if (sc->pos >= sc->len || sc->src[sc->pos] != ')')
        return cf_qscan_error(sc, sc->pos, "expected ')' to close %.*s(...)", (int)(open - start), sc->src + start);
    sc->pos++;
    v->kind = CF_QV_BINARY;
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

static coffer_status set_int(cf_qscan *sc, cf_qvalue *v, int64_t n)
{
    char buf[24];
    snprintf(buf, sizeof buf, "%lld", (long long)n);
    v->kind = CF_QV_INT;
    v->u.num.integer = n;
    v->u.num.number = (double)n;
    v->u.num.text = cf_qarena_strndup(sc->arena, buf, strlen(buf));
    if (!v->u.num.text)
        return cf_qscan_no_memory(sc);
    v->u.num.has_decimal = true;
    cf_decimal128_from_int64(n, &v->u.num.decimal);
    return COFFER_OK;
}

static coffer_status set_float(cf_qscan *sc, cf_qvalue *v, const char *text, size_t len)
{
    char *t = cf_qarena_strndup(sc->arena, text, len);
    if (!t)
        return cf_qscan_no_memory(sc);
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

coffer_status cf_qlit_special_float(cf_qscan *sc, bool negative, const char *word, cf_qvalue *v)
{
    bool nan = strcmp(word, "nan") == 0;
    coffer_status st = set_float(sc, v, nan ? "nan" : negative ? "-inf" : "inf",
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

static coffer_status hex_number(cf_qscan *sc, size_t start, size_t i, bool negative, cf_qvalue *v)
{
    uint64_t n = 0;
    size_t digits = 0;
    for (; i < sc->len && hex_value((unsigned char)sc->src[i]) >= 0; i++, digits++) {
        if (n >> 60)
            return cf_qscan_error(sc, start, "hex integer out of the 64-bit range");
        n = n << 4 | (uint64_t)hex_value((unsigned char)sc->src[i]);
    }
    if (digits == 0)
        return cf_qscan_error(sc, start, "expected hex digits after '0x'");
    if (i < sc->len && cf_qscan_is_ident_char((unsigned char)sc->src[i]))
        return cf_qscan_error(sc, i, "unexpected character after a number");
    if (n > (uint64_t)INT64_MAX + (negative ? 1u : 0u))
        return cf_qscan_error(sc, start, "hex integer out of the 64-bit range");
    sc->pos = i;
    int64_t value = negative ? (n == (uint64_t)INT64_MAX + 1u ? INT64_MIN : -(int64_t)n) : (int64_t)n;
    return set_int(sc, v, value);
}

coffer_status cf_qlit_number(cf_qscan *sc, cf_qvalue *v)
{
    size_t start = sc->pos, i = start;
    bool negative = false;
    if (sc->src[i] == '+' || sc->src[i] == '-')
        negative = sc->src[i++] == '-';
    if (i + 1 < sc->len && sc->src[i] == '0' && (sc->src[i + 1] == 'x' || sc->src[i + 1] == 'X'))
        return hex_number(sc, start, i + 2, negative, v);
    size_t digits_start = i;
    bool integral = true;
    while (i < sc->len && cf_qscan_is_digit((unsigned char)sc->src[i]))
        i++;
    if (i < sc->len && sc->src[i] == '.') {
        integral = false;
        i++;
        while (i < sc->len && cf_qscan_is_digit((unsigned char)sc->src[i]))
            i++;
    }
    if (i < sc->len && (sc->src[i] == 'e' || sc->src[i] == 'E')) {
        integral = false;
        i++;
        if (i < sc->len && (sc->src[i] == '+' || sc->src[i] == '-'))
            i++;
        if (i >= sc->len || !cf_qscan_is_digit((unsigned char)sc->src[i]))
            return cf_qscan_error(sc, start, "expected digits in the exponent of a number");
        while (i < sc->len && cf_qscan_is_digit((unsigned char)sc->src[i]))
            i++;
    }
    if (i < sc->len && cf_qscan_is_ident_char((unsigned char)sc->src[i]))
        return cf_qscan_error(sc, i, "unexpected character after a number");
    sc->pos = i;
    if (integral) {
        uint64_t n = 0;
        bool overflow = false;
        for (size_t j = digits_start; j < i && !overflow; j++) {
            unsigned d = (unsigned)(sc->src[j] - '0');
            if (n > (UINT64_MAX - d) / 10)
                overflow = true;
            else
                n = n * 10 + d;
        }
        if (!overflow && n <= (uint64_t)INT64_MAX + (negative ? 1u : 0u))
            return set_int(sc, v, negative ? (n == (uint64_t)INT64_MAX + 1u ? INT64_MIN : -(int64_t)n)
                                           : (int64_t)n);
    }
    /* A leading '+' is dropped so that the canonical text has one spelling. */
    size_t from = sc->src[start] == '+' ? start + 1 : start;
    return set_float(sc, v, sc->src + from, i - from);
}

/* ---- dates --------------------------------------------------------------- */

static size_t count_digits(const cf_qscan *sc, size_t pos)
{
    size_t n = 0;
    while (pos + n < sc->len && cf_qscan_is_digit((unsigned char)sc->src[pos + n]))
        n++;
    return n;
}

bool cf_qlit_looks_like_iso_date(const cf_qscan *sc, size_t pos)
{
    if (count_digits(sc, pos) != 4 || pos + 4 >= sc->len || sc->src[pos + 4] != '-')
        return false;
    return count_digits(sc, pos + 5) > 0;
}

bool cf_qlit_looks_like_t_date(const cf_qscan *sc, size_t pos)
{
    size_t i = pos + 1;
    if (i < sc->len && sc->src[i] == '-')
        i++;
    size_t n = count_digits(sc, i);
    if (n == 0 || i + n >= sc->len || sc->src[i + n] != ':')
        return false;
    i += n + 1;
    if (i < sc->len && sc->src[i] == '-')
        i++;
    return count_digits(sc, i) > 0;
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

static bool read_field(const cf_qscan *sc, size_t *i, size_t min_digits, size_t max_digits,
                       char sep, unsigned long *out)
{
    if (sep) {
        if (*i >= sc->len || sc->src[*i] != sep)
            return false;
        (*i)++;
    }
    size_t n = count_digits(sc, *i);
    if (n < min_digits || n > max_digits)
        return false;
    unsigned long v = 0;
    for (size_t k = 0; k < n; k++)
        v = v * 10 + (unsigned long)(sc->src[*i + k] - '0');
    *i += n;
    *out = v;
    return true;
}

coffer_status cf_qlit_iso_date(cf_qscan *sc, cf_qvalue *v)
{
    static const unsigned month_days[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    size_t start = sc->pos, i = start;
    unsigned long year, month, day, hour, minute, second, nanos = 0;
    bool ok = read_field(sc, &i, 4, 4, 0, &year) && read_field(sc, &i, 1, 2, '-', &month) &&
              read_field(sc, &i, 1, 2, '-', &day) && i < sc->len &&
              (sc->src[i] == '@' || sc->src[i] == 'T');
    if (ok) {
        i++;
        ok = read_field(sc, &i, 1, 2, 0, &hour) && read_field(sc, &i, 1, 2, ':', &minute) &&
             read_field(sc, &i, 1, 2, ':', &second);
    }
    if (ok && i < sc->len && sc->src[i] == ':')
        ok = read_field(sc, &i, 1, 9, ':', &nanos);
    if (!ok || (i < sc->len && cf_qscan_is_ident_char((unsigned char)sc->src[i])))
        return cf_qscan_error(sc, start, "expected a date YYYY-MM-DD@HH:MM:SS or YYYY-MM-DD@HH:MM:SS:NANOS");
    bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    if (month < 1 || month > 12 || day < 1 || day > month_days[month - 1] ||
        (month == 2 && day == 29 && !leap) || hour > 23 || minute > 59 || second > 59)
        return cf_qscan_error(sc, start, "date %.*s does not exist", (int)(i - start), sc->src + start);
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
    sc->pos = i;
    return COFFER_OK;
}

static bool read_signed(const cf_qscan *sc, size_t *i, int64_t limit, int64_t *out)
{
    bool negative = *i < sc->len && sc->src[*i] == '-';
    if (negative)
        (*i)++;
    uint64_t n = 0;
    size_t digits = count_digits(sc, *i);
    for (size_t k = 0; k < digits; k++) {
        uint64_t d = (uint64_t)(sc->src[*i + k] - '0');
        if (n > ((uint64_t)limit - d) / 10)
            return false;
        n = n * 10 + d;
    }
    *i += digits;
    *out = negative ? -(int64_t)n : (int64_t)n;
    return true;
}

coffer_status cf_qlit_t_date(cf_qscan *sc, cf_qvalue *v)
{
    size_t start = sc->pos, i = start + 1;
    int64_t seconds, nanos;
    if (!read_signed(sc, &i, INT64_MAX, &seconds))
        return cf_qscan_error(sc, start, "seconds of a T<seconds>:<nanoseconds> date out of range");
    i++; /* ':' */
    if (!read_signed(sc, &i, 999999999, &nanos))
        return cf_qscan_error(sc, start, "nanoseconds of a T<seconds>:<nanoseconds> date out of range (at most 999999999)");
    if (i < sc->len && cf_qscan_is_ident_char((unsigned char)sc->src[i]))
        return cf_qscan_error(sc, i, "unexpected character after a date");
    if ((seconds > 0 && nanos < 0) || (seconds < 0 && nanos > 0))
        return cf_qscan_error(sc, start, "the nanoseconds of a T<seconds>:<nanoseconds> date must have the sign of the seconds");
    v->kind = CF_QV_DATE;
    v->u.date.seconds = seconds;
    v->u.date.nanoseconds = (int32_t)nanos;
    sc->pos = i;
    return COFFER_OK;
}

/* ---- oid(), uuid() ------------------------------------------------------- */

/* The text between "name(" and ")": its start and length, or false. */
static bool call_contents(const cf_qscan *sc, size_t open, size_t max, size_t *from, size_t *len)
{
    size_t i = open + 1;
    while (i < sc->len && i - open - 1 <= max && sc->src[i] != ')')
        i++;
    if (i >= sc->len || sc->src[i] != ')')
        return false;
    *from = open + 1;
    *len = i - open - 1;
    return true;
}

coffer_status cf_qlit_object_id(cf_qscan *sc, cf_qvalue *v)
{
    size_t start = sc->pos, from, len;
    bool ok = call_contents(sc, start + 3, 24, &from, &len) && len == 24;
    for (size_t k = 0; ok && k < 24; k++)
        ok = hex_value((unsigned char)sc->src[from + k]) >= 0;
    if (!ok)
        return cf_qscan_error(sc, start, "expected 24 hex digits in oid(...)");
    for (size_t k = 0; k < 12; k++)
        v->u.object_id.bytes[k] = (uint8_t)(hex_value((unsigned char)sc->src[from + 2 * k]) << 4 |
                                            hex_value((unsigned char)sc->src[from + 2 * k + 1]));
    v->kind = CF_QV_OBJECT_ID;
    sc->pos = from + len + 1;
    return COFFER_OK;
}

coffer_status cf_qlit_uuid(cf_qscan *sc, cf_qvalue *v)
{
    size_t start = sc->pos, from, len;
    bool ok = call_contents(sc, start + 4, 36, &from, &len) && len == 36;
    size_t byte = 0;
    for (size_t k = 0; ok && k < 36;) {
        if (k == 8 || k == 13 || k == 18 || k == 23) {
            ok = sc->src[from + k] == '-';
            k++;
            continue;
        }
        int hi = hex_value((unsigned char)sc->src[from + k]);
        int lo = hex_value((unsigned char)sc->src[from + k + 1]);
        ok = hi >= 0 && lo >= 0;
        if (ok)
            v->u.uuid.bytes[byte++] = (uint8_t)(hi << 4 | lo);
        k += 2;
    }
    if (!ok)
        return cf_qscan_error(sc, start, "expected a UUID xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx in uuid(...)");
    v->kind = CF_QV_UUID;
    sc->pos = from + len + 1;
    return COFFER_OK;
}
