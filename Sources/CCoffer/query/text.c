/* text — string and binary matching for the query language (see text.h).
 *
 * Both sides become arrays of 32-bit units: a code point, or
 * INVALID_UNIT(b) for a byte b that begins no well-formed UTF-8 sequence.
 * Those values lie above U+10FFFF, so they equal nothing but the same byte
 * and never reach utf8proc (whose tables stop at U+10FFFF). Byte-exact
 * matching skips the units except for a LIKE with wildcards inside. */
#include "query/text.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

#include "util/error.h"

#define INVALID_UNIT(b) ((int32_t)0x110000 + (int32_t)(b))
#define STAR ((int32_t)'*')
#define QUESTION ((int32_t)'?')

/* Units on the stack for cf_text_match(), per side: longer inputs allocate. */
#define LOCAL_UNITS 128

/* A growing array of units; `data` starts as a caller's array or NULL. */
typedef struct units {
    int32_t *data;
    size_t len, cap;
    bool heap; /* data was malloc()ed by us */
} units;

struct cf_text_pattern {
    cf_qcompare_op op;         /* EQ, BEGINSWITH, ENDSWITH, CONTAINS, LIKE */
    bool negate;               /* != */
    utf8proc_option_t options; /* 0: byte-exact */
    const uint8_t *bytes;      /* byte-exact needle (LIKE: its literal part) */
    size_t nbytes;
    uint8_t *owned_bytes;      /* the copy `bytes` points into, if any */
    units needle;              /* transformed needle, or a LIKE's units */
    units scratch;             /* the text's units during one match */
};

/* ---- units --------------------------------------------------------------- */

/* Makes room for `need` units in all; false when out of memory. */
static bool units_reserve(units *u, size_t need)
{
    if (need <= u->cap)
        return true;
    if (need > SIZE_MAX / sizeof(int32_t) / 2)
        return false;
    size_t cap = u->cap > 16 ? u->cap : 16;
    while (cap < need)
        cap *= 2;
    int32_t *data = u->heap ? realloc(u->data, cap * sizeof *data) : malloc(cap * sizeof *data);
    if (!data)
        return false;
    if (!u->heap && u->len)
        memcpy(data, u->data, u->len * sizeof *data);
    u->data = data;
    u->cap = cap;
    u->heap = true;
    return true;
}

static void units_release(units *u)
{
    if (u->heap)
        free(u->data);
    *u = (units){0};
}

/* Length of the well-formed UTF-8 sequence at `s`, or 0 if there is none. */
static size_t sequence_length(const uint8_t *s, size_t avail, int32_t *cp)
{
    utf8proc_int32_t c;
    utf8proc_ssize_t n = utf8proc_iterate(s, (utf8proc_ssize_t)(avail < 4 ? avail : 4), &c);
    if (n <= 0)
        return 0;
    *cp = c;
    return (size_t)n;
}

/* `len` bytes as units, untransformed. Never needs more units than bytes. */
static bool decode(units *out, const uint8_t *s, size_t len)
{
    out->len = 0;
    if (!units_reserve(out, len))
        return false;
    int32_t *d = out->data;
    size_t pos = 0, n = 0;
    while (pos < len) {
        uint8_t b = s[pos];
        int32_t cp;
        size_t step;
        if (b < 0x80) {
            d[n++] = b;
            pos++;
        } else if ((step = sequence_length(s + pos, len - pos, &cp)) != 0) {
            d[n++] = cp;
            pos += step;
        } else {
            d[n++] = INVALID_UNIT(b);
            pos++;
        }
    }
    out->len = n;
    return true;
}

/* Appends well-formed, non-empty UTF-8 `s` transformed with `options`.
 * utf8proc_decompose() decomposes, folds or strips and orders the marks;
 * it reports the size it needs when the room is short, so grow and redo.
 * Returns 0, or -1 with the last error set. */
static int append_transformed(units *out, const uint8_t *s, size_t len, utf8proc_option_t options)
{
    utf8proc_ssize_t got;
    for (;;) {
        size_t room = out->cap - out->len;
        got = utf8proc_decompose(s, (utf8proc_ssize_t)len, out->data + out->len,
                                 (utf8proc_ssize_t)room, options);
        if (got < 0) /* not reached: the input is well-formed, the options valid */
            return cf_error(COFFER_ERR_INTERNAL, "text: utf8proc: %s", utf8proc_errmsg(got)), -1;
        if ((size_t)got <= room)
            break;
        if (!units_reserve(out, out->len + (size_t)got))
            return cf_error(COFFER_ERR_NO_MEMORY, "text: out of memory folding %zu bytes", len), -1;
    }
    got = utf8proc_normalize_utf32(out->data + out->len, got, options); /* composes */
    if (got < 0)
        return cf_error(COFFER_ERR_INTERNAL, "text: utf8proc: %s", utf8proc_errmsg(got)), -1;
    out->len += (size_t)got;
    return 0;
}

/* Appends one unit, growing when needed; false when out of memory. */
static bool append_unit(units *out, int32_t unit)
{
    if (out->len == out->cap && !units_reserve(out, out->len + 1))
        return false;
    out->data[out->len++] = unit;
    return true;
}

/* `len` bytes as transformed units; each byte that begins no well-formed
 * sequence is kept as its own unit. Only stretches of non-ASCII characters,
 * with the ASCII character before them (marks compose with it), go through
 * utf8proc: any other ASCII character is alone, since ASCII neither
 * decomposes nor is ever the second half of a composition, and marks are
 * never reordered across it. Returns 0, or -1 with the last error set. */
static int transform(units *out, const uint8_t *s, size_t len, utf8proc_option_t options)
{
    out->len = 0;
    if (!units_reserve(out, len + 8))
        goto no_memory;
    bool fold = (options & UTF8PROC_CASEFOLD) != 0;
    size_t pos = 0;
    while (pos < len) {
        /* ASCII that no mark follows. */
        while (pos < len && s[pos] < 0x80 && (pos + 1 == len || s[pos + 1] < 0x80)) {
            int32_t c = s[pos++];
            if (out->len == out->cap && !units_reserve(out, out->len + (len - pos) + 1))
                goto no_memory;
            out->data[out->len++] = fold && c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c;
        }
        if (pos == len)
            break;
        size_t end = pos + (s[pos] < 0x80);
        int32_t cp;
        size_t step;
        while (end < len && s[end] >= 0x80 && (step = sequence_length(s + end, len - end, &cp)) != 0)
            end += step;
        if (end - pos == 1 && s[pos] < 0x80) { /* before a byte that is not well-formed */
            if (!append_unit(out, fold && s[pos] >= 'A' && s[pos] <= 'Z' ? s[pos] + ('a' - 'A') : s[pos]))
                goto no_memory;
        } else if (end > pos && append_transformed(out, s + pos, end - pos, options) != 0) {
            return -1;
        }
        if (end < len && s[end] >= 0x80) { /* not well-formed */
            if (!append_unit(out, INVALID_UNIT(s[end])))
                goto no_memory;
            end++;
        }
        pos = end;
    }
    return 0;
no_memory:
    return cf_error(COFFER_ERR_NO_MEMORY, "text: out of memory folding %zu bytes", len), -1;
}

/* ---- matching ------------------------------------------------------------ */

/* Whole-text LIKE over units: the last `*` is remembered and, on a
 * mismatch, made to swallow one more unit. Each unit of the text is tried
 * against at most the whole pattern: O(tn × pn). */
static bool like_units(const int32_t *t, size_t tn, const int32_t *p, size_t pn)
{
    size_t ti = 0, pi = 0, star = 0, mark = 0;
    bool have_star = false;
    while (ti < tn) {
        if (pi < pn && p[pi] == STAR) {
            have_star = true;
            star = pi++;
            mark = ti;
        } else if (pi < pn && (p[pi] == QUESTION || p[pi] == t[ti])) {
            pi++;
            ti++;
        } else if (have_star) {
            pi = star + 1;
            ti = ++mark;
        } else {
            return false;
        }
    }
    while (pi < pn && p[pi] == STAR)
        pi++;
    return pi == pn;
}

/* memmem over `size`-byte elements: a hit must start on an element. */
static bool contains(const void *hay, size_t hn, const void *needle, size_t nn, size_t size)
{
    if (nn == 0)
        return true;
    if (hn < nn)
        return false;
    const uint8_t *h = hay, *end = h + hn * size;
    while ((size_t)(end - h) >= nn * size) {
        const uint8_t *hit = memmem(h, (size_t)(end - h), needle, nn * size);
        if (!hit)
            return false;
        if ((size_t)(hit - (const uint8_t *)hay) % size == 0)
            return true;
        h = hit + 1;
    }
    return false;
}

/* EQ, BEGINSWITH, ENDSWITH and CONTAINS over `size`-byte elements. */
static bool match_literal(cf_qcompare_op op, const void *t, size_t tn, const void *n, size_t nn, size_t size)
{
    switch (op) {
    case CF_QC_EQ:
        return tn == nn && (nn == 0 || memcmp(t, n, nn * size) == 0);
    case CF_QC_BEGINSWITH:
        return tn >= nn && (nn == 0 || memcmp(t, n, nn * size) == 0);
    case CF_QC_ENDSWITH:
        return tn >= nn && (nn == 0 || memcmp((const uint8_t *)t + (tn - nn) * size, n, nn * size) == 0);
    default:
        return contains(t, tn, n, nn, size);
    }
}

/* ---- patterns ------------------------------------------------------------ */

static bool has_invalid_unit(const units *u)
{
    for (size_t i = 0; i < u->len; i++)
        if (u->data[i] > 0x10FFFF)
            return true;
    return false;
}

/* A LIKE whose only wildcards are `*`s at its ends is a cheaper operator on
 * the part between them: 'a*' BEGINSWITH, '*a' ENDSWITH, '*a*' (and '*')
 * CONTAINS, 'a' ==. Byte-exact needles qualify only if well-formed UTF-8:
 * then a byte match is a match on whole characters, as LIKE's is. */
static void simplify_like(cf_text_pattern *p)
{
    const units *u = &p->needle;
    size_t lead = 0, trail = 0;
    while (lead < u->len && u->data[lead] == STAR)
        lead++;
    while (trail < u->len - lead && u->data[u->len - 1 - trail] == STAR)
        trail++;
    for (size_t i = lead; i < u->len - trail; i++)
        if (u->data[i] == STAR || u->data[i] == QUESTION)
            return;
    if (p->options == 0 && has_invalid_unit(u))
        return;
    if (lead == 0 && trail == 0)
        p->op = CF_QC_EQ;
    else if (lead == 0)
        p->op = CF_QC_BEGINSWITH;
    else if (trail == 0)
        p->op = CF_QC_ENDSWITH;
    else
        p->op = CF_QC_CONTAINS;
    if (lead + trail == 0)
        return;
    if (p->options == 0) { /* '*' is one byte and one unit */
        p->bytes += lead;
        p->nbytes -= lead + trail;
    }
    memmove(p->needle.data, p->needle.data + lead, (u->len - lead - trail) * sizeof(int32_t));
    p->needle.len -= lead + trail;
}

static utf8proc_option_t options_for(unsigned modifiers)
{
    utf8proc_option_t options = 0;
    if (modifiers & CF_QM_CASE_INSENSITIVE)
        options |= UTF8PROC_CASEFOLD;
    if (modifiers & CF_QM_DIACRITIC_INSENSITIVE)
        options |= UTF8PROC_STRIPMARK;
    /* Both need decomposition first; composing afterwards makes "é" one
     * unit on both sides, however it was spelled. */
    return options ? options | UTF8PROC_COMPOSE : 0;
}

/* Fills `*p`; the needle's units start in `needle_local` (LOCAL_UNITS long)
 * and the text's in `text_local` when these are not NULL. The needle's
 * bytes are borrowed unless `copy`. On failure releases what it took. */
static coffer_status pattern_init(cf_text_pattern *p, cf_qcompare_op op, unsigned modifiers,
                                  const void *needle, size_t len, bool copy,
                                  int32_t *needle_local, int32_t *text_local)
{
    *p = (cf_text_pattern){0};
    switch (op) {
    case CF_QC_EQ: case CF_QC_BEGINSWITH: case CF_QC_ENDSWITH: case CF_QC_CONTAINS: case CF_QC_LIKE:
        break;
    case CF_QC_NE:
        p->negate = true;
        op = CF_QC_EQ;
        break;
    default:
        return cf_error(COFFER_ERR_INVALID_ARGUMENT,
                        "text: operator %d is not a string operator (==, !=, BEGINSWITH, ENDSWITH, CONTAINS, LIKE)",
                        (int)op);
    }
    if (modifiers & ~(unsigned)(CF_QM_CASE_INSENSITIVE | CF_QM_DIACRITIC_INSENSITIVE))
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "text: unknown modifier bits 0x%x (only [c] and [d] exist)",
                        modifiers);
    if (!needle && len > 0)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "text: the needle is NULL but %zu bytes long", len);
    p->op = op;
    p->options = options_for(modifiers);
    if (needle_local)
        p->needle = (units){.data = needle_local, .cap = LOCAL_UNITS};
    if (text_local)
        p->scratch = (units){.data = text_local, .cap = LOCAL_UNITS};
    p->bytes = needle;
    p->nbytes = len;
    if (copy && len > 0) {
        if (!(p->owned_bytes = malloc(len)))
            return cf_error(COFFER_ERR_NO_MEMORY, "text: out of memory copying a needle of %zu bytes", len);
        memcpy(p->owned_bytes, needle, len);
        p->bytes = p->owned_bytes;
    }
    bool ok = true;
    if (p->options)
        ok = transform(&p->needle, p->bytes, len, p->options) == 0;
    else if (op == CF_QC_LIKE && !(ok = decode(&p->needle, p->bytes, len)))
        cf_error(COFFER_ERR_NO_MEMORY, "text: out of memory decoding a needle of %zu bytes", len);
    if (!ok) {
        units_release(&p->needle);
        free(p->owned_bytes);
        return coffer_last_status();
    }
    if (op == CF_QC_LIKE)
        simplify_like(p);
    return COFFER_OK;
}

static void pattern_release(cf_text_pattern *p)
{
    units_release(&p->needle);
    units_release(&p->scratch);
    free(p->owned_bytes);
}

coffer_status cf_text_pattern_new(cf_qcompare_op op, unsigned modifiers, const void *needle, size_t len,
                                  cf_text_pattern **out)
{
    if (!out)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "text: no place to store the pattern");
    *out = NULL;
    cf_text_pattern *p = malloc(sizeof *p);
    if (!p)
        return cf_error(COFFER_ERR_NO_MEMORY, "text: out of memory compiling a pattern");
    coffer_status st = pattern_init(p, op, modifiers, needle, len, true, NULL, NULL);
    if (st != COFFER_OK) {
        free(p);
        return st;
    }
    *out = p;
    return COFFER_OK;
}

int cf_text_pattern_match(cf_text_pattern *p, const void *text, size_t len)
{
    if (!p || (!text && len > 0))
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "text: %s", p ? "the text is NULL but not empty"
                                                                   : "no pattern to match"), -1;
    const uint8_t *t = text;
    bool hit;
    if (p->options) {
        if (transform(&p->scratch, t, len, p->options) != 0)
            return -1;
    } else if (p->op == CF_QC_LIKE) {
        if (!decode(&p->scratch, t, len))
            return cf_error(COFFER_ERR_NO_MEMORY, "text: out of memory decoding %zu bytes", len), -1;
    } else {
        hit = match_literal(p->op, t, len, p->bytes, p->nbytes, 1);
        return hit != p->negate;
    }
    if (p->op == CF_QC_LIKE)
        hit = like_units(p->scratch.data, p->scratch.len, p->needle.data, p->needle.len);
    else
        hit = match_literal(p->op, p->scratch.data, p->scratch.len, p->needle.data, p->needle.len,
                            sizeof(int32_t));
    return hit != p->negate;
}

void cf_text_pattern_free(cf_text_pattern *p)
{
    if (!p)
        return;
    pattern_release(p);
    free(p);
}

int cf_text_match(cf_qcompare_op op, unsigned modifiers, const void *text, size_t tlen, const void *needle,
                  size_t nlen)
{
    int32_t needle_local[LOCAL_UNITS], text_local[LOCAL_UNITS];
    cf_text_pattern p;
    if (pattern_init(&p, op, modifiers, needle, nlen, false, needle_local, text_local) != COFFER_OK)
        return -1;
    int result = cf_text_pattern_match(&p, text, tlen);
    pattern_release(&p);
    return result;
}

uint64_t cf_text_length(const void *text, size_t len)
{
    const uint8_t *s = text;
    uint64_t count = 0;
    size_t pos = 0;
    if (!s)
        return 0;
    while (pos < len) {
        int32_t cp;
        size_t step = s[pos] < 0x80 ? 1 : sequence_length(s + pos, len - pos, &cp);
        pos += step ? step : 1;
        count++;
    }
    return count;
}
