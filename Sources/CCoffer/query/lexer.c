/* lexer — tokens of the query language: punctuation, operators in all their
 * spellings, names, @names, $arguments, $variables and decoded literals. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "util/error.h"
#include "query/lexer.h"

coffer_status cf_qlex_error(cf_qlexer *lx, size_t offset, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    /* Characters, not bytes: UTF-8 continuation bytes do not count. */
    size_t chars = 1;
    for (size_t i = 0; i < offset && i < lx->len; i++)
        if (((unsigned char)lx->src[i] & 0xC0) != 0x80)
            chars++;
    lx->error_offset = offset;
    return cf_error(COFFER_ERR_INVALID_ARGUMENT, "query: at offset %zu: %s", chars, msg);
}

coffer_status cf_qlex_no_memory(cf_qlexer *lx)
{
    lx->error_offset = lx->pos;
    return cf_error(COFFER_ERR_NO_MEMORY, "query: out of memory");
}

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

static int peek(const cf_qlexer *lx, size_t ahead)
{
    size_t i = lx->pos + ahead;
    return i < lx->len ? (unsigned char)lx->src[i] : -1;
}

static size_t ident_end(const cf_qlexer *lx, size_t from)
{
    while (from < lx->len && cf_qlex_is_ident_char((unsigned char)lx->src[from]))
        from++;
    return from;
}

static bool starts_with(const cf_qlexer *lx, const char *word)
{
    size_t n = strlen(word);
    return lx->len - lx->pos >= n && memcmp(lx->src + lx->pos, word, n) == 0;
}

static coffer_status punct(cf_qlexer *lx, cf_qtoken *tok, cf_qtok_kind kind, size_t len)
{
    tok->kind = kind;
    lx->pos += len;
    return COFFER_OK;
}

/* A sign or digit that starts a number, or a signed inf/infinity/nan. */
static coffer_status signed_literal(cf_qlexer *lx, cf_qtoken *tok)
{
    int next = peek(lx, 1);
    if (cf_qlex_is_digit(next) || (next == '.' && cf_qlex_is_digit(peek(lx, 2)))) {
        tok->kind = CF_QT_VALUE;
        return cf_qlit_number(lx, &tok->value);
    }
    size_t start = lx->pos, end = ident_end(lx, start + 1);
    const char *word = lx->src + start + 1;
    size_t n = end - start - 1;
    if (cf_qlex_word_is(word, n, "inf") || cf_qlex_word_is(word, n, "infinity") ||
        cf_qlex_word_is(word, n, "nan")) {
        tok->kind = CF_QT_VALUE;
        lx->pos = end;
        return cf_qlit_special_float(lx, start, lx->src[start] == '-',
                                     cf_qlex_word_is(word, n, "nan") ? "nan" : "inf", &tok->value);
    }
    return cf_qlex_error(lx, start, "expected a number after '%c'", lx->src[start]);
}

static coffer_status dollar(cf_qlexer *lx, cf_qtoken *tok)
{
    size_t start = lx->pos;
    if (cf_qlex_is_digit(peek(lx, 1))) {
        size_t i = start + 1, n = 0;
        while (i < lx->len && cf_qlex_is_digit((unsigned char)lx->src[i])) {
            n = n * 10 + (size_t)(lx->src[i] - '0');
            if (n > 1000000)
                return cf_qlex_error(lx, start, "argument number too large (at most $1000000)");
            i++;
        }
        if (i < lx->len && cf_qlex_is_ident_start((unsigned char)lx->src[i]))
            return cf_qlex_error(lx, i, "unexpected character after argument $%zu", n);
        tok->kind = CF_QT_ARG;
        tok->arg = n;
        lx->pos = i;
        return COFFER_OK;
    }
    if (cf_qlex_is_ident_start(peek(lx, 1))) {
        tok->kind = CF_QT_VAR;
        lx->pos = ident_end(lx, start + 1);
        return COFFER_OK;
    }
    return cf_qlex_error(lx, start, "expected an argument number or a variable name after '$'");
}

static coffer_status word(cf_qlexer *lx, cf_qtoken *tok)
{
    size_t start = lx->pos, end = ident_end(lx, start);
    const char *w = lx->src + start;
    size_t n = end - start;
    if (cf_qlex_word_is(w, n, "true") || cf_qlex_word_is(w, n, "false")) {
        tok->kind = CF_QT_VALUE;
        tok->value.kind = CF_QV_BOOL;
        tok->value.u.boolean = cf_qlex_word_is(w, n, "true");
        lx->pos = end;
        return COFFER_OK;
    }
    if (cf_qlex_word_is(w, n, "null") || cf_qlex_word_is(w, n, "nil")) {
        tok->kind = CF_QT_VALUE;
        tok->value.kind = CF_QV_NULL;
        lx->pos = end;
        return COFFER_OK;
    }
    if (cf_qlex_word_is(w, n, "inf") || cf_qlex_word_is(w, n, "infinity") ||
        cf_qlex_word_is(w, n, "nan")) {
        tok->kind = CF_QT_VALUE;
        lx->pos = end;
        return cf_qlit_special_float(lx, start, false,
                                     cf_qlex_word_is(w, n, "nan") ? "nan" : "inf", &tok->value);
    }
    tok->kind = CF_QT_IDENT;
    lx->pos = end;
    return COFFER_OK;
}

static coffer_status lex(cf_qlexer *lx, cf_qtoken *tok)
{
    int c = peek(lx, 0), d = peek(lx, 1);
    switch (c) {
    case -1: tok->kind = CF_QT_END; return COFFER_OK;
    case '(': return punct(lx, tok, CF_QT_LPAREN, 1);
    case ')': return punct(lx, tok, CF_QT_RPAREN, 1);
    case '{': return punct(lx, tok, CF_QT_LBRACE, 1);
    case '}': return punct(lx, tok, CF_QT_RBRACE, 1);
    case '[': return punct(lx, tok, CF_QT_LBRACKET, 1);
    case ']': return punct(lx, tok, CF_QT_RBRACKET, 1);
    case ',': return punct(lx, tok, CF_QT_COMMA, 1);
    case '.':
        if (cf_qlex_is_digit(d)) {
            tok->kind = CF_QT_VALUE;
            return cf_qlit_number(lx, &tok->value);
        }
        return punct(lx, tok, CF_QT_DOT, 1);
    case '=':
        if (d == '=') return punct(lx, tok, CF_QT_EQ, 2);
        if (d == '<') return punct(lx, tok, CF_QT_LE, 2);
        if (d == '>') return punct(lx, tok, CF_QT_GE, 2);
        return punct(lx, tok, CF_QT_EQ, 1);
    case '!':
        if (d == '=') return punct(lx, tok, CF_QT_NE, 2);
        return punct(lx, tok, CF_QT_BANG, 1);
    case '<':
        if (d == '=') return punct(lx, tok, CF_QT_LE, 2);
        if (d == '>') return punct(lx, tok, CF_QT_NE, 2);
        return punct(lx, tok, CF_QT_LT, 1);
    case '>':
        if (d == '=') return punct(lx, tok, CF_QT_GE, 2);
        return punct(lx, tok, CF_QT_GT, 1);
    case '&':
        if (d == '&') return punct(lx, tok, CF_QT_AND, 2);
        return cf_qlex_error(lx, lx->pos, "expected '&&', found a single '&'");
    case '|':
        if (d == '|') return punct(lx, tok, CF_QT_OR, 2);
        return cf_qlex_error(lx, lx->pos, "expected '||', found a single '|'");
    case '\'':
    case '"':
        tok->kind = CF_QT_VALUE;
        return cf_qlit_string(lx, &tok->value);
    case '$': return dollar(lx, tok);
    case '@':
        if (!cf_qlex_is_ident_start(d))
            return cf_qlex_error(lx, lx->pos, "expected a name after '@'");
        tok->kind = CF_QT_AT;
        lx->pos = ident_end(lx, lx->pos + 1);
        return COFFER_OK;
    case '+':
    case '-': return signed_literal(lx, tok);
    default: break;
    }
    if (cf_qlex_is_digit(c)) {
        tok->kind = CF_QT_VALUE;
        if (cf_qlit_looks_like_iso_date(lx, lx->pos))
            return cf_qlit_iso_date(lx, &tok->value);
        return cf_qlit_number(lx, &tok->value);
    }
    if (c == 'T' && cf_qlit_looks_like_t_date(lx, lx->pos)) {
        tok->kind = CF_QT_VALUE;
        return cf_qlit_t_date(lx, &tok->value);
    }
    if (starts_with(lx, "B64\"") || starts_with(lx, "B64'")) {
        tok->kind = CF_QT_VALUE;
        return cf_qlit_base64(lx, &tok->value);
    }
    if (starts_with(lx, "oid(")) {
        tok->kind = CF_QT_VALUE;
        return cf_qlit_object_id(lx, &tok->value);
    }
    if (starts_with(lx, "uuid(")) {
        tok->kind = CF_QT_VALUE;
        return cf_qlit_uuid(lx, &tok->value);
    }
    if (cf_qlex_is_ident_start(c))
        return word(lx, tok);
    char q[16];
    return cf_qlex_error(lx, lx->pos, "unexpected character %s",
                         cf_quote(q, sizeof q, lx->src + lx->pos, 1));
}

coffer_status cf_qlex_next(cf_qlexer *lx, cf_qtoken *tok)
{
    while (lx->pos < lx->len && strchr(" \t\r\n\f\v", lx->src[lx->pos]) && lx->src[lx->pos])
        lx->pos++;
    memset(tok, 0, sizeof *tok);
    tok->offset = lx->pos;
    coffer_status st = lex(lx, tok);
    tok->text = lx->src + tok->offset;
    tok->len = lx->pos - tok->offset;
    return st;
}
