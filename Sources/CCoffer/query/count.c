/* count — coffer_query_count(): the number of objects a query matches in a
 * transaction, in one call and without results for the caller to free.
 * Written on the results calls, so it counts as they count: from the index
 * alone where the planner can (coffer_query_run()'s deferred keys), by
 * running the query otherwise. */
#include "storage/txn.h"

COFFER_API coffer_status coffer_query_count(coffer_txn *txn, const coffer_query *query, uint64_t *out)
{
    if (!out)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "coffer_query_count: out is NULL");
    *out = 0;
    coffer_results *results = NULL;
    coffer_status st = coffer_query_run(txn, query, &results);
    if (st == COFFER_OK)
        st = coffer_results_count(results, out);
    coffer_results_free(results);
    return st;
}
