/* scan — the cursor over a query's text that the lexer and the literal
 * readers share: the text, the reading position, the arena decoded literals
 * go to, errors that name their position, and the character classes of the
 * query language. Neither reader knows the other's internals; both move
 * this cursor. */
#ifndef COFFER_QUERY_SCAN_H
#define COFFER_QUERY_SCAN_H

#include "query/query.h"

typedef struct cf_qscan {
    const char *src;
    size_t len;
    size_t pos;
    cf_qarena *arena;
    size_t error_offset; /* byte offset of the last error */
} cf_qscan;

/* Sets the last error to "query: at offset N: <message>" where N is the
 * 1-based character offset of byte `offset`, records `offset` in the cursor
 * and returns COFFER_ERR_INVALID_ARGUMENT. */
coffer_status cf_qscan_error(cf_qscan *sc, size_t offset, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Out of memory while parsing: COFFER_ERR_NO_MEMORY at the cursor. */
coffer_status cf_qscan_no_memory(cf_qscan *sc);

static inline bool cf_qscan_is_digit(int c) { return c >= '0' && c <= '9'; }
static inline bool cf_qscan_is_ident_start(int c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c >= 0x80;
}
static inline bool cf_qscan_is_ident_char(int c)
{
    return cf_qscan_is_ident_start(c) || cf_qscan_is_digit(c);
}

#endif
