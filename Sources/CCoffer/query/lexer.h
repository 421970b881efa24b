/* lexer — splits a query string into tokens; literals come out decoded. */
#ifndef COFFER_QUERY_LEXER_H
#define COFFER_QUERY_LEXER_H

#include "query/query.h"

typedef enum cf_qtok_kind {
    CF_QT_END,
    CF_QT_LPAREN, CF_QT_RPAREN, CF_QT_LBRACE, CF_QT_RBRACE,
    CF_QT_LBRACKET, CF_QT_RBRACKET, CF_QT_COMMA, CF_QT_DOT,
    CF_QT_EQ, CF_QT_NE, CF_QT_LT, CF_QT_LE, CF_QT_GT, CF_QT_GE, /* every spelling */
    CF_QT_AND, CF_QT_OR, CF_QT_BANG,                            /* && || ! */
    CF_QT_IDENT,  /* a name or keyword: text/len */
    CF_QT_AT,     /* @name: text/len include the '@' */
    CF_QT_VALUE,  /* a literal: value */
    CF_QT_ARG,    /* $n: arg */
    CF_QT_VAR     /* $name: text/len include the '$' */
} cf_qtok_kind;

typedef struct cf_qtoken {
    cf_qtok_kind kind;
    size_t offset;     /* 0-based byte offset of the token */
    const char *text;  /* the token's source text */
    size_t len;
    cf_qvalue value;   /* CF_QT_VALUE; strings live in the arena */
    size_t arg;        /* CF_QT_ARG */
} cf_qtoken;

typedef struct cf_qlexer {
    const char *src;
    size_t len;
    size_t pos;
    cf_qarena *arena;
    size_t error_offset; /* byte offset of the last error */
} cf_qlexer;

/* Reads the next token into `*tok`. On malformed input returns
 * COFFER_ERR_INVALID_ARGUMENT with a positioned message (see
 * cf_qlex_error()); COFFER_ERR_NO_MEMORY when the arena cannot grow. */
coffer_status cf_qlex_next(cf_qlexer *lx, cf_qtoken *tok);

/* Sets the last error to "query: at offset N: <message>" where N is the
 * 1-based character offset of byte `offset`, records `offset` in the lexer
 * and returns COFFER_ERR_INVALID_ARGUMENT. */
coffer_status cf_qlex_error(cf_qlexer *lx, size_t offset, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Out of memory while parsing. */
coffer_status cf_qlex_no_memory(cf_qlexer *lx);

/* Literal readers used by the lexer (literal.c). Each starts at lx->pos on
 * the literal's first byte, fills `*v` and leaves lx->pos after it. */
coffer_status cf_qlit_string(cf_qlexer *lx, cf_qvalue *v);
coffer_status cf_qlit_base64(cf_qlexer *lx, cf_qvalue *v);   /* at B64" */
coffer_status cf_qlit_number(cf_qlexer *lx, cf_qvalue *v);   /* at sign or digit or '.' */
coffer_status cf_qlit_special_float(cf_qlexer *lx, size_t start, bool negative,
                                    const char *word, cf_qvalue *v); /* inf, nan */
coffer_status cf_qlit_iso_date(cf_qlexer *lx, cf_qvalue *v); /* at YYYY-MM-DD@... */
coffer_status cf_qlit_t_date(cf_qlexer *lx, cf_qvalue *v);   /* at T<sec>:<nsec> */
coffer_status cf_qlit_object_id(cf_qlexer *lx, cf_qvalue *v); /* at oid( */
coffer_status cf_qlit_uuid(cf_qlexer *lx, cf_qvalue *v);     /* at uuid( */

/* Whether the input at `pos` matches YYYY-MM-DD followed by '@' or 'T'. */
bool cf_qlit_looks_like_iso_date(const cf_qlexer *lx, size_t pos);
/* Whether the input at `pos` matches T-?digits:-?digits. */
bool cf_qlit_looks_like_t_date(const cf_qlexer *lx, size_t pos);

static inline bool cf_qlex_is_digit(int c) { return c >= '0' && c <= '9'; }
static inline bool cf_qlex_is_ident_start(int c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c >= 0x80;
}
static inline bool cf_qlex_is_ident_char(int c)
{
    return cf_qlex_is_ident_start(c) || cf_qlex_is_digit(c);
}

/* Case-insensitive comparison of `len` bytes with the ASCII word. */
bool cf_qlex_word_is(const char *text, size_t len, const char *word);

#endif
