/* columnar — evaluating a conjunction of simple comparisons (one property
 * of the object against constants, cf_bpred_is_simple) over a batch of
 * objects the store keeps column by column (object_store.h, "column
 * batches"): each conjunct is a loop over its column, run only on the
 * objects the conjuncts before it kept, the one that keeps the fewest
 * first; the matches' keys are appended in bulk. No value of an object is
 * read but the ones compared, and nothing is allocated per object. */
#ifndef COFFER_QUERY_COLUMNAR_H
#define COFFER_QUERY_COLUMNAR_H

#include "storage/object_store.h"
#include "query/plan.h"

typedef struct cf_columnar cf_columnar;

/* Prepares the conjuncts conj[0..n) of a query on class `cls` for batches;
 * `run` compares the values no loop of its own does (borrowed). */
coffer_status cf_columnar_new(coffer_txn *txn, cf_qrun *run, coffer_class_id cls, const cf_bpred *const *conj, size_t n,
                              cf_columnar **out);
void cf_columnar_free(cf_columnar *cs);

/* Appends to `out`, in key order, the keys of the objects of `batch` that
 * match every conjunct. */
coffer_status cf_columnar_select(cf_columnar *cs, const cf_object_batch *batch, cf_keylist *out);

#endif
