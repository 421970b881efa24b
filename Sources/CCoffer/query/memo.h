/* memo — the counts of nested SUBQUERYs already evaluated in one run of a
 * query, keyed by the subquery and by every value its count depends on
 * (where it starts and the outer variables it reads). A nested SUBQUERY is
 * met again for every element of every enclosing one; looking its count up
 * keeps evaluation polynomial in the query's depth instead of exponential.
 *
 * A run reads one snapshot and writes nothing, so a count stays true for
 * the whole run; the memo is dropped with the run.
 */
#ifndef COFFER_QUERY_MEMO_H
#define COFFER_QUERY_MEMO_H

#include <stddef.h>
#include <stdint.h>

#include "coffer.h"
#include "util/buffer.h"

typedef struct cf_qmemo cf_qmemo;

/* A new, empty memo; NULL when out of memory. */
cf_qmemo *cf_qmemo_new(void);
/* Frees the memo. NULL is fine. */
void cf_qmemo_free(cf_qmemo *memo);

/* Appends `v` to the key being built in `key`. Returns 0 when the value
 * cannot be part of a key (a collection or an open handle): the caller then
 * evaluates without the memo. */
int cf_qmemo_key_value(cf_buf *key, const coffer_value *v);

/* 1 and the count in `*count` if `key` was stored, else 0. */
int cf_qmemo_find(const cf_qmemo *memo, const cf_buf *key, int64_t *count);

/* Stores `count` under `key` (not present yet). When the memo has grown to
 * its limit it starts over empty first, so a run's memory stays bounded.
 * COFFER_ERR_NO_MEMORY when out of memory (the memo is then unchanged). */
coffer_status cf_qmemo_put(cf_qmemo *memo, const cf_buf *key, int64_t count);

#endif
