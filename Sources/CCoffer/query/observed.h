/* observed — what the live database (changes/) needs of a compiled query:
 * a reference of its own, whether its order is its own (SORT, DISTINCT or
 * LIMIT) or the class's, and its matching keys in a transaction. */
#ifndef COFFER_QUERY_OBSERVED_H
#define COFFER_QUERY_OBSERVED_H

#include <stddef.h>
#include <stdint.h>

#include "coffer.h"

/* A new handle on the same compiled query (it shares the bound query), for
 * as long as the caller needs it: release it with cf_query_unshare(), not
 * coffer_query_free(). */
coffer_status cf_query_share(const coffer_query *query, coffer_query **out);
void cf_query_unshare(coffer_query *shared);

/* 1 when SORT, DISTINCT or LIMIT order or cut the results; 0 when they are
 * in the class's order (creation order). */
int cf_query_ordered(const coffer_query *query);

/* The keys of the objects matching `query` in `txn`, in result order, in a
 * malloc'ed array the caller frees (NULL when there are none). */
coffer_status cf_query_keys(coffer_txn *txn, const coffer_query *query, uint64_t **keys, size_t *count);

#endif
