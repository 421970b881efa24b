/* buffer — a growing byte buffer, and growing heap arrays. */
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

void cf_buf_varint(cf_buf *b, uint64_t v)
{
    uint8_t tmp[10];
    size_t n = 0;
    do {
        tmp[n] = (uint8_t)(v & 0x7f);
        v >>= 7;
        if (v)
            tmp[n] |= 0x80;
        n++;
    } while (v);
    cf_buf_put(b, tmp, n);
}

void *cf_grow(void *items, size_t n, size_t *cap, size_t elem, size_t first_cap)
{
    if (n < *cap)
        return items;
    size_t new_cap = *cap ? *cap * 2 : first_cap;
    if (new_cap > SIZE_MAX / elem)
        return NULL;
    void *p = realloc(items, new_cap * elem);
    if (p)
        *cap = new_cap;
    return p;
}
