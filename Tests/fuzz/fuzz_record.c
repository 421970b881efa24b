/*
 * fuzz_record.c — libFuzzer target for the record decoder (storage/record.h).
 * The first byte picks the type each column is read as, the rest is taken
 * as a stored record. Nothing may crash or read out of bounds; a record
 * either fails to parse or parses; each column reads as a value or as
 * COFFER_ERR_CORRUPTED, never anything else; and the values read, written
 * again as a record, parse and read back to the same bytes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "coffer.h"
#include "../../Sources/CCoffer/storage/record.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const coffer_type column_types[] = {
    COFFER_TYPE_BOOL, COFFER_TYPE_INT, COFFER_TYPE_FLOAT, COFFER_TYPE_DOUBLE, COFFER_TYPE_STRING,
    COFFER_TYPE_BINARY, COFFER_TYPE_DATE, COFFER_TYPE_OBJECT_ID, COFFER_TYPE_UUID, COFFER_TYPE_DECIMAL128,
};
#define TYPE_COUNT (sizeof column_types / sizeof column_types[0])

/* Aborts unless `a` and `b` encode to the same bytes (or are both null). */
static void check_same(const coffer_value *a, const coffer_value *b)
{
    if (a->type != b->type)
        abort();
    if (a->type == COFFER_TYPE_NULL)
        return;
    size_t n = cf_scalar_size(a);
    if (n != cf_scalar_size(b))
        abort();
    uint8_t *x = malloc(n + 1), *y = malloc(n + 1);
    if (!x || !y)
        abort();
    cf_scalar_write(x, a);
    cf_scalar_write(y, b);
    if (memcmp(x, y, n) != 0)
        abort();
    free(x);
    free(y);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    unsigned first = data[0];
    cf_record rec;
    if (cf_record_parse(data + 1, size - 1, &rec) != COFFER_OK)
        return 0;
    /* One column past the end too: a column the record lacks reads as null. */
    uint16_t ncols = rec.ncols < UINT16_MAX ? (uint16_t)(rec.ncols + 1) : rec.ncols;
    coffer_value *slots = calloc(ncols, sizeof *slots);
    if (!slots)
        abort();
    for (uint16_t c = 0; c < ncols; c++) {
        coffer_type type = column_types[(first + c) % TYPE_COUNT];
        coffer_status st = cf_record_get(&rec, c, type, &slots[c]);
        if (st == COFFER_ERR_CORRUPTED)
            slots[c].type = COFFER_TYPE_NULL;
        else if (st != COFFER_OK || (slots[c].type != type && slots[c].type != COFFER_TYPE_NULL))
            abort();
    }
    size_t n = cf_record_size(slots, ncols);
    uint8_t *again = malloc(n ? n : 1);
    if (!again)
        abort();
    cf_record_write(again, slots, ncols);
    cf_record rec2;
    if (cf_record_parse(again, n, &rec2) != COFFER_OK)
        abort();
    for (uint16_t c = 0; c < ncols; c++) {
        coffer_value back;
        coffer_type type = column_types[(first + c) % TYPE_COUNT];
        if (cf_record_get(&rec2, c, type, &back) != COFFER_OK)
            abort();
        check_same(&slots[c], &back);
    }
    free(again);
    free(slots);
    return 0;
}
