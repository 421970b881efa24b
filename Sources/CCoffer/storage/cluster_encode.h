/* cluster_encode — writing a cluster (file format 5, docs/FORMAT.md
 * "Clusters") from its members: new records, objects of a parsed cluster
 * copied value by value, objects stored outside. Planning finds every
 * value's bytes once and sizes each column block in the same pass (kind,
 * width, null count, total, and for a column of ints their smallest and
 * largest value); encoding then copies each value once. A column of ints
 * whose values lie within 2^32 of one another is narrowed: stored as the
 * smallest and each value's distance from it in 1, 2 or 4 bytes. The
 * encoder's memory is reused from one cluster to the next. */
#ifndef COFFER_CLUSTER_ENCODE_H
#define COFFER_CLUSTER_ENCODE_H

#include "schema/schema.h"
#include "storage/cluster.h"

/* One object to encode: the low byte of its key and its values as a record,
 * or as the object at position `at` of cluster `src` when src is not NULL
 * (an unchanged object, copied value by value without a record: its blocks
 * are opened and their values checked by the caller), or `external` (rec
 * and src unused) when it is stored outside. */
typedef struct cf_cluster_member {
    uint8_t low;
    int external;
    cf_record rec;
    const struct cf_cluster *src;
    uint16_t at;
} cf_cluster_member;

typedef struct cf_cluster_value cf_cluster_value;
typedef struct cf_cluster_column cf_cluster_column;

/* A cluster planned for encoding, and the memory of the plan. Zero it
 * before its first use; free it with cf_cluster_encoder_free. */
typedef struct cf_cluster_encoder {
    const cf_cluster_member *m;
    uint16_t n, ncols;
    int external;
    size_t size;
    cf_cluster_value *values; /* n * ncols, object by object */
    size_t values_cap;
    cf_cluster_column *columns;
    size_t columns_cap;
    uint8_t *ints; /* bitmap: column c holds ints (narrowed when they fit) */
    size_t ints_len, ints_cap;
} cf_cluster_encoder;

/* Tells the encoder which columns of the clusters it encodes next hold
 * ints (the class's int properties that are not collections), so that it
 * may narrow them; NULL: none (every column is stored as it is given).
 * COFFER_ERR_NO_MEMORY. */
coffer_status cf_cluster_encoder_set_class(cf_cluster_encoder *enc, const cf_class *cl);

/* Plans the cluster of members m[0..n) (1 <= n <= 256, lows strictly
 * increasing; `m` and what it points at must stay until cf_cluster_encode)
 * and sets *size to its encoded size. COFFER_ERR_NO_MEMORY. */
coffer_status cf_cluster_plan(cf_cluster_encoder *enc, const cf_cluster_member *m, uint16_t n, size_t *size);

/* Writes the planned cluster into out[0 .. size). */
void cf_cluster_encode(const cf_cluster_encoder *enc, uint8_t *out);

/* Frees the plan's memory (the encoder can be used again). */
void cf_cluster_encoder_free(cf_cluster_encoder *enc);

/* The bytes the plan's memory holds, for a bound on memory kept. */
size_t cf_cluster_encoder_bytes(const cf_cluster_encoder *enc);

#endif
