/* scan — the positioned errors of the cursor over a query's text (see
 * scan.h): offsets are reported in characters, counted from 1. */
#include <stdarg.h>
#include <stdio.h>

#include "util/error.h"
#include "query/scan.h"

coffer_status cf_qscan_error(cf_qscan *sc, size_t offset, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    /* Characters, not bytes: UTF-8 continuation bytes do not count. */
    size_t chars = 1;
    for (size_t i = 0; i < offset && i < sc->len; i++)
        if (((unsigned char)sc->src[i] & 0xC0) != 0x80)
            chars++;
    sc->error_offset = offset;
    return cf_error(COFFER_ERR_INVALID_ARGUMENT, "query: at offset %zu: %s", chars, msg);
}

coffer_status cf_qscan_no_memory(cf_qscan *sc)
{
    sc->error_offset = sc->pos;
    return cf_error(COFFER_ERR_NO_MEMORY, "query: out of memory");
}
