/*
 * fuzz_cluster.c — libFuzzer target for the cluster decoder of file format 5
 * (storage/cluster.h). The first byte picks the type each column is read
 * as, the rest is taken as a stored cluster. Nothing may crash or read out
 * of bounds; a cluster either fails to parse or parses; every value of
 * every object reads as a value or as COFFER_ERR_CORRUPTED, never anything
 * else; and positions found by key stay inside the cluster. A value's
 * stored bytes (cf_cluster_raw) lie inside the input, or, for a narrowed
 * int, in the 8 bytes it is widened into.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "coffer.h"
#include "../../Sources/CCoffer/storage/cluster.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const coffer_type column_types[] = {
    COFFER_TYPE_BOOL, COFFER_TYPE_INT, COFFER_TYPE_FLOAT, COFFER_TYPE_DOUBLE, COFFER_TYPE_STRING,
    COFFER_TYPE_BINARY, COFFER_TYPE_DATE, COFFER_TYPE_OBJECT_ID, COFFER_TYPE_UUID, COFFER_TYPE_DECIMAL128,
};
#define TYPE_COUNT (sizeof column_types / sizeof column_types[0])

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    cf_cluster c;
    if (cf_cluster_parse(data + 1, size - 1, &c) != COFFER_OK)
        return 0;
    for (unsigned low = 0; low <= CF_CLUSTER_MAX; low++) {
        uint16_t at = cf_cluster_seek(&c, low);
        if (at > c.n || (at < c.n && c.lows[at] < low) || (at > 0 && c.lows[at - 1] >= low))
            abort();
    }
    /* One column past the end too: a column the cluster lacks reads as null. */
    for (uint16_t i = 0; i < c.n; i++) {
        (void)cf_cluster_is_external(&c, i);
        for (uint32_t col = 0; col <= c.ncols; col++) {
            coffer_value v;
            coffer_type type = column_types[(data[0] + col + i) % TYPE_COUNT];
            const uint8_t *p = NULL;
            size_t n = 0;
            uint8_t wide[8];
            int raw = cf_cluster_raw(&c, i, (uint16_t)col, &p, &n, wide);
            if (raw == 1 && !(p == wide ? n == 8 : p >= data + 1 && n <= size - 1 && p - (data + 1) <= (ptrdiff_t)(size - 1 - n)))
                abort();
            coffer_status st = cf_cluster_get(&c, i, (uint16_t)col, type, &v);
            if (st != COFFER_OK && st != COFFER_ERR_CORRUPTED)
                abort();
            if (st == COFFER_OK && v.type != COFFER_TYPE_NULL && v.type != type)
                abort();
            if (col == c.ncols && (st != COFFER_OK || v.type != COFFER_TYPE_NULL))
                abort();
        }
    }
    return 0;
}
