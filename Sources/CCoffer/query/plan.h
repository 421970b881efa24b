/* plan — finding the objects a bound query matches (plan.c) and putting them
 * in the order its SORT, DISTINCT and LIMIT ask for (post.c). */
#ifndef COFFER_QUERY_PLAN_H
#define COFFER_QUERY_PLAN_H

#include "query/engine.h"
#include "query/interrupt.h"

/* A growing array of object keys. */
typedef struct cf_keylist {
    uint64_t *k;
    size_t n, cap;
} cf_keylist;

coffer_status cf_keylist_push(cf_keylist *keys, uint64_t key);

/* Appends to `out` the keys of the objects of the query's class that match
 * its predicate, in key order: from the whole class (through an index when
 * one answers a conjunct), or, when `within` is not NULL, from those
 * `nwithin` keys in their order. SORT/DISTINCT/LIMIT are not applied.
 * `guard` (NULL: none) stops it with COFFER_ERR_INTERRUPTED. */
coffer_status cf_query_select(coffer_txn *txn, const cf_bquery *bq, cf_qguard *guard, const uint64_t *within,
                              size_t nwithin, cf_keylist *out);

/* 1 when an index answers `bq`'s predicate alone, one entry per match, so
 * that its matches can be counted without collecting them. */
int cf_query_index_countable(coffer_txn *txn, const cf_bquery *bq);
/* The number of matches of a query cf_query_index_countable() accepts,
 * read from the index; SORT/DISTINCT/LIMIT are not applied. */
coffer_status cf_query_index_count(coffer_txn *txn, const cf_bquery *bq, size_t *count);

/* Writes how cf_query_select() finds the matches of `bq` into buf[0..size):
 * "index of 'Class.prop' (equality|range|prefix)" (with ", then a filter"
 * when other conjuncts or a hashed value are checked after), "scan of
 * 'Class'" or "all objects of 'Class'". COFFER_ERR_INVALID_ARGUMENT when it
 * does not fit. */
coffer_status cf_query_explain(coffer_txn *txn, const cf_bquery *bq, char *buf, size_t size);

/* Applies the query's SORT, DISTINCT and LIMIT, in the order written, to
 * `keys` in place. */
coffer_status cf_query_post(coffer_txn *txn, const cf_bquery *bq, cf_qguard *guard, cf_keylist *keys);

#endif
