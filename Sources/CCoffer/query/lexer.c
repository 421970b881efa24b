/* lexer — tokens of the query language: punctuation, operators in all their
 * spellings, names, @names, $arguments, $variables and decoded literals. */
#include <string.h>

#include "util/error.h"
#include "query/lexer.h"
#include "query/literal.h"

bool cf_qlex_word_is(const char *text, size_t len, const char *word)
{
    /* Called for every keyword a word might be: stop at the first
     * difference rather than measure `word` first. */
    size_t i = 0;
    for (; i < len && word[i]; i++) {
        char c = text[i];
        if (c >= 'A' && c <= 'Z')
            c = (char)(c - 'A' + 'a');
        char w = word[i];
        if (w >= 'A' && w <= 'Z')
            w = (char)(w - 'A' + 'a');
        if (c != w)
            return false;
    }
    return i == len && word[i] == '\0';
}

static int peek(const cf_qscan *sc, size_t ahead)
{
    size_t i = sc->pos + ahead;
    return i < sc->len ? (unsigned char)sc->src[i] : -1;
}

static size_t ident_end(const cf_qscan *sc, size_t from)
{
    while (from < sc->len && cf_qscan_is_ident_char((unsigned char)sc->src[from]))
        from++;
    return from;
}

static bool starts_with(const cf_qscan *sc, const char *word)
{
    size_t n = strlen(word);
    return sc->len - sc->pos >= n && memcmp(sc->src + sc->pos, word, n) == 0;
}

static coffer_status punct(cf_qscan *sc, cf_qtoken *tok, cf_qtok_kind kind, size_t len)
{
    tok->kind = kind;
    sc->pos += len;
    return COFFER_OK;
}

/* A sign or digit that starts a number, or a signed inf/infinity/nan. */
static coffer_status signed_literal(cf_qscan *sc, cf_qtoken *tok)
{
    int next = peek(sc, 1);
    if (cf_qscan_is_digit(next) || (next == '.' && cf_qscan_is_digit(peek(sc, 2)))) {
        tok->kind = CF_QT_VALUE;
        return cf_qlit_number(sc, &tok->value);
    }
    size_t start = sc->pos, end = ident_end(sc, start + 1);
    const char *word = sc->src + start + 1;
    size_t n = end - start - 1;
    if (cf_qlex_word_is(word, n, "inf") || cf_qlex_word_is(word, n, "infinity") ||
        cf_qlex_word_is(word, n, "nan")) {
        tok->kind = CF_QT_VALUE;
        sc->pos = end;
        return cf_qlit_special_float(sc, sc->src[start] == '-',
                                     cf_qlex_word_is(word, n, "nan") ? "nan" : "inf", &tok->value);
    }
    return cf_qscan_error(sc, start, "expected a number after '%c'", sc->src[start]);
}

static coffer_status dollar(cf_qscan *sc, cf_qtoken *tok)
{
    size_t start = sc->pos;
    if (cf_qscan_is_digit(peek(sc, 1))) {
        size_t i = start + 1, n = 0;
        while (i < sc->len && cf_qscan_is_digit((unsigned char)sc->src[i])) {
            n = n * 10 + (size_t)(sc->src[i] - '0');
            if (n > 1000000)
                return cf_qscan_error(sc, start, "argument number too large (at most $1000000)");
            i++;
        }
        if (i < sc->len && cf_qscan_is_ident_start((unsigned char)sc->src[i]))
            return cf_qscan_error(sc, i, "unexpected character after argument $%zu", n);
        tok->kind = CF_QT_ARG;
        tok->arg = n;
        sc->pos = i;
        return COFFER_OK;
    }
    if (cf_qscan_is_ident_start(peek(sc, 1))) {
        tok->kind = CF_QT_VAR;
        sc->pos = ident_end(sc, start + 1);
        return COFFER_OK;
    }
    return cf_qscan_error(sc, start, "expected an argument number or a variable name after '$'");
}

/* Whether `c` may follow a backslash inside a name: "\ " is a space,
 * "\t", "\n" and "\r" a tab, a newline and a carriage return. */
static bool name_escape(int c) { return c == ' ' || c == 't' || c == 'n' || c == 'r'; }

/* The end of the name starting at `start`, escapes included. */
static coffer_status name_end(cf_qscan *sc, size_t start, size_t *end)
{
    size_t i = ident_end(sc, start);
    while (i < sc->len && sc->src[i] == '\\') {
        int c = i + 1 < sc->len ? (unsigned char)sc->src[i + 1] : -1;
        if (c < 0)
            return cf_qscan_error(sc, i, "a name ends with '\\' (a name may escape a space, \\t, \\n or \\r)");
        if (!name_escape(c)) {
            char q[16];
            if (c > ' ' && c < 0x7f)
                return cf_qscan_error(sc, i, "invalid escape '\\%c' in a name (a name may escape a space, \\t, \\n "
                                      "or \\r)", c);
            return cf_qscan_error(sc, i, "invalid escape in a name: '\\' followed by %s (a name may escape a space, "
                                  "\\t, \\n or \\r)", cf_quote(q, sizeof q, sc->src + i + 1, 1));
        }
        i = ident_end(sc, i + 2);
    }
    *end = i;
    return COFFER_OK;
}

static coffer_status word(cf_qscan *sc, cf_qtoken *tok)
{
    size_t start = sc->pos, end = start;
    coffer_status st = name_end(sc, start, &end);
    if (st != COFFER_OK)
        return st;
    const char *w = sc->src + start;
    size_t n = end - start;
    if (cf_qlex_word_is(w, n, "true") || cf_qlex_word_is(w, n, "false")) {
        tok->kind = CF_QT_VALUE;
        tok->value.kind = CF_QV_BOOL;
        tok->value.u.boolean = cf_qlex_word_is(w, n, "true");
        sc->pos = end;
        return COFFER_OK;
    }
    if (cf_qlex_word_is(w, n, "null") || cf_qlex_word_is(w, n, "nil")) {
        tok->kind = CF_QT_VALUE;
        tok->value.kind = CF_QV_NULL;
        sc->pos = end;
        return COFFER_OK;
    }
    if (cf_qlex_word_is(w, n, "inf") || cf_qlex_word_is(w, n, "infinity") ||
        cf_qlex_word_is(w, n, "nan")) {
        tok->kind = CF_QT_VALUE;
        sc->pos = end;
        return cf_qlit_special_float(sc, false,
                                     cf_qlex_word_is(w, n, "nan") ? "nan" : "inf", &tok->value);
    }
    tok->kind = CF_QT_IDENT;
    sc->pos = end;
    return COFFER_OK;
}

/* Comparison and logical operators in every spelling, the two-character
 * ones first. A single '&' or '|' is none. */
static const struct {
    char text[3];
    cf_qtok_kind kind;
} operators[] = {
    {"==", CF_QT_EQ}, {"=<", CF_QT_LE}, {"=>", CF_QT_GE}, {"!=", CF_QT_NE}, {"<=", CF_QT_LE},
    {"<>", CF_QT_NE}, {">=", CF_QT_GE}, {"&&", CF_QT_AND}, {"||", CF_QT_OR},
    {"=", CF_QT_EQ}, {"!", CF_QT_BANG}, {"<", CF_QT_LT}, {">", CF_QT_GT},
};

static coffer_status operator(cf_qscan *sc, cf_qtoken *tok, int c, int d)
{
    for (size_t i = 0; i < sizeof operators / sizeof operators[0]; i++)
        if (operators[i].text[0] == c && (operators[i].text[1] == '\0' || operators[i].text[1] == d))
            return punct(sc, tok, operators[i].kind, operators[i].text[1] ? 2 : 1);
    return cf_qscan_error(sc, sc->pos, "expected '%c%c', found a single '%c'", c, c, c);
}

static coffer_status lex(cf_qscan *sc, cf_qtoken *tok)
{
    int c = peek(sc, 0), d = peek(sc, 1);
    switch (c) {
    case -1: tok->kind = CF_QT_END; return COFFER_OK;
    case '(': return punct(sc, tok, CF_QT_LPAREN, 1);
    case ')': return punct(sc, tok, CF_QT_RPAREN, 1);
    case '{': return punct(sc, tok, CF_QT_LBRACE, 1);
    case '}': return punct(sc, tok, CF_QT_RBRACE, 1);
    case '[': return punct(sc, tok, CF_QT_LBRACKET, 1);
    case ']': return punct(sc, tok, CF_QT_RBRACKET, 1);
    case ',': return punct(sc, tok, CF_QT_COMMA, 1);
    case '.':
        if (cf_qscan_is_digit(d)) {
            tok->kind = CF_QT_VALUE;
            return cf_qlit_number(sc, &tok->value);
        }
        return punct(sc, tok, CF_QT_DOT, 1);
    case '=':
    case '!':
    case '<':
    case '>':
    case '&':
    case '|': return operator(sc, tok, c, d);
    case '\'':
    case '"':
        tok->kind = CF_QT_VALUE;
        return cf_qlit_string(sc, &tok->value);
    case '$': return dollar(sc, tok);
    case '@':
        if (!cf_qscan_is_ident_start(d))
            return cf_qscan_error(sc, sc->pos, "expected a name after '@'");
        tok->kind = CF_QT_AT;
        sc->pos = ident_end(sc, sc->pos + 1);
        return COFFER_OK;
    case '+':
    case '-': return signed_literal(sc, tok);
    default: break;
    }
    if (cf_qscan_is_digit(c)) {
        tok->kind = CF_QT_VALUE;
        if (cf_qlit_looks_like_iso_date(sc, sc->pos))
            return cf_qlit_iso_date(sc, &tok->value);
        return cf_qlit_number(sc, &tok->value);
    }
    if (c == 'T' && cf_qlit_looks_like_t_date(sc, sc->pos)) {
        tok->kind = CF_QT_VALUE;
        return cf_qlit_t_date(sc, &tok->value);
    }
    if (starts_with(sc, "B64\"") || starts_with(sc, "B64'")) {
        tok->kind = CF_QT_VALUE;
        return cf_qlit_base64(sc, &tok->value);
    }
    if (starts_with(sc, "oid(")) {
        tok->kind = CF_QT_VALUE;
        return cf_qlit_object_id(sc, &tok->value);
    }
    if (starts_with(sc, "uuid(")) {
        tok->kind = CF_QT_VALUE;
        return cf_qlit_uuid(sc, &tok->value);
    }
    if (c == 'b' || c == 'B') {
        /* bin(...) and binary(...): the word, then a '('. */
        size_t end = ident_end(sc, sc->pos), open = end;
        while (open < sc->len && (sc->src[open] == ' ' || sc->src[open] == '\t'))
            open++;
        if ((cf_qlex_word_is(sc->src + sc->pos, end - sc->pos, "bin") ||
             cf_qlex_word_is(sc->src + sc->pos, end - sc->pos, "binary")) && open < sc->len && sc->src[open] == '(') {
            tok->kind = CF_QT_VALUE;
            return cf_qlit_bin(sc, open, &tok->value);
        }
    }
    if (cf_qscan_is_ident_start(c))
        return word(sc, tok);
    char q[16];
    return cf_qscan_error(sc, sc->pos, "unexpected character %s",
                         cf_quote(q, sizeof q, sc->src + sc->pos, 1));
}

coffer_status cf_qlex_next(cf_qscan *sc, cf_qtoken *tok)
{
    while (sc->pos < sc->len && strchr(" \t\r\n\f\v", sc->src[sc->pos]) && sc->src[sc->pos])
        sc->pos++;
    memset(tok, 0, sizeof *tok);
    tok->offset = sc->pos;
    coffer_status st = lex(sc, tok);
    tok->text = sc->src + tok->offset;
    tok->len = sc->pos - tok->offset;
    return st;
}
