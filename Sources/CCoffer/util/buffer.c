/* buffer — a growing byte buffer. */
#include "util/buffer.h"

#include <stdlib.h>
#include <string.h>

void cf_buf_put(cf_buf *b, const void *src, size_t n)
{
    if (b->failed)
        return;
    if (b->cap - b->len <= n) {
        size_t cap = b->cap ? b->cap : 64;
        while (cap - b->len <= n) {
            if (cap > SIZE_MAX / 2) {
                b->failed = 1;
                return;
            }
            cap *= 2;
        }
        uint8_t *p = realloc(b->p, cap);
        if (!p) {
            b->failed = 1;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    if (n)
        memcpy(b->p + b->len, src, n);
    b->len += n;
    b->p[b->len] = 0;
}
