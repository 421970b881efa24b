/* rebound — coffer_query_count_rebound(): a prepared query counted with
 * other arguments in one call, for bindings whose cost is per call. Written
 * on the public query calls (rebind, count, free), so it counts what they
 * count, from the index alone where they can. The query keeps one rebound
 * copy, whose arguments later calls rewrite in place when they have the
 * types it was bound with (no parse, bind or allocation for them). */
#include "util/error.h"
#include "query/engine.h"

COFFER_API coffer_status coffer_query_count_rebound(coffer_txn *txn, const coffer_query *query,
                                                    const coffer_value *args, size_t arg_count, uint64_t *out)
{
    static const char fn[] = "coffer_query_count_rebound";
    if (!out)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "%s: out is NULL", fn);
    *out = 0;
    if (!txn)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "%s: txn is NULL", fn);
    if (args || !arg_count) {
        coffer_query *spare = cf_query_spare_take(query, args, arg_count);
        if (spare) {
            coffer_status st = coffer_query_count(txn, spare, out);
            cf_query_spare_put(query, spare);
            return st;
        }
    }
    coffer_query *bound = NULL;
    coffer_status st = coffer_query_rebind(query, args, arg_count, &bound);
    if (st == COFFER_OK)
        st = coffer_query_count(txn, bound, out);
    if (st == COFFER_OK)
        cf_query_spare_put(query, bound);
    else
        coffer_query_free(bound);
    return st;
}
