/*
 * fuzz_query_parse.c — libFuzzer target for the query parser. Any input must
 * parse or fail cleanly; a parsed query must print to text that parses to an
 * equal tree and prints the same again.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coffer.h"
#include "../../Sources/CCoffer/query/query.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cf_query *q = NULL;
    size_t off = 0;
    coffer_status st = cf_query_parse((const char *)data, size, &q, &off);
    if (st != COFFER_OK) {
        if (q != NULL || off > size || strncmp(coffer_last_error(), "query: ", 7) != 0)
            abort();
        return 0;
    }
    char *once = NULL, *twice = NULL;
    if (cf_query_print(q, &once) != COFFER_OK)
        abort();
    cf_query *again = NULL;
    if (cf_query_parse(once, strlen(once), &again, NULL) != COFFER_OK) {
        fprintf(stderr, "printed text does not parse: %s\n%s\n", once, coffer_last_error());
        abort();
    }
    if (!cf_query_equal(q, again)) {
        fprintf(stderr, "printed text parses to another tree: %s\n", once);
        abort();
    }
    if (cf_query_print(again, &twice) != COFFER_OK || strcmp(once, twice) != 0) {
        fprintf(stderr, "printing is not a fixed point: %s\n", once);
        abort();
    }
    free(once);
    free(twice);
    cf_query_free(q);
    cf_query_free(again);
    return 0;
}
