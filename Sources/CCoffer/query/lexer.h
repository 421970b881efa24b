/* lexer — splits a query string into tokens over the cursor of scan.h;
 * literals come out decoded by the readers of literal.h. */
#ifndef COFFER_QUERY_LEXER_H
#define COFFER_QUERY_LEXER_H

#include "query/scan.h"

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

/* Reads the next token into `*tok`. On malformed input returns
 * COFFER_ERR_INVALID_ARGUMENT with a positioned message (see
 * cf_qscan_error()); COFFER_ERR_NO_MEMORY when the arena cannot grow. */
coffer_status cf_qlex_next(cf_qscan *sc, cf_qtoken *tok);

/* Case-insensitive comparison of `len` bytes with the ASCII word. */
bool cf_qlex_word_is(const char *text, size_t len, const char *word);

#endif
