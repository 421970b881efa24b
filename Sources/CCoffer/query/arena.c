/* arena — one allocation region per parsed query, freed in one call. */
#include <stdlib.h>
#include <string.h>

#include "query/query.h"

#define CHUNK_SIZE 4096
/* The arena and its first chunk in one block that malloc serves from its
 * per-thread cache (blocks up to about 1 KiB): a short query, compiled and
 * freed again and again, then costs no trip into the allocator's bins. */
#define FIRST_BLOCK_SIZE 1024

typedef struct chunk {
    struct chunk *next;
    size_t used, size;
    _Alignas(max_align_t) unsigned char data[];
} chunk;

struct cf_qarena {
    chunk *head;
    chunk first; /* the first chunk lives in the arena's own allocation */
};

cf_qarena *cf_qarena_new(void)
{
    cf_qarena *arena = malloc(FIRST_BLOCK_SIZE);
    if (!arena)
        return NULL;
    arena->first.next = NULL;
    arena->first.used = 0;
    arena->first.size = FIRST_BLOCK_SIZE - sizeof(cf_qarena);
    arena->head = &arena->first;
    return arena;
}

void cf_qarena_free(cf_qarena *arena)
{
    if (!arena)
        return;
    for (chunk *c = arena->head, *next; c; c = next) {
        next = c->next;
        if (c != &arena->first)
            free(c);
    }
    free(arena);
}

void *cf_qarena_alloc(cf_qarena *arena, size_t size)
{
    const size_t align = _Alignof(max_align_t);
    size = (size + align - 1) & ~(align - 1);
    if (size == 0)
        size = align;
    chunk *c = arena->head;
    if (!c || c->size - c->used < size) {
        size_t want = size > CHUNK_SIZE ? size : CHUNK_SIZE;
        if (want > SIZE_MAX - sizeof(chunk))
            return NULL;
        chunk *n = malloc(sizeof(chunk) + want);
        if (!n)
            return NULL;
        n->used = 0;
        n->size = want;
        if (c && size > CHUNK_SIZE) {
            /* A large block goes behind the current chunk, which keeps its room. */
            n->next = c->next;
            c->next = n;
        } else {
            n->next = c;
            arena->head = n;
        }
        c = n;
    }
    void *p = c->data + c->used;
    c->used += size;
    memset(p, 0, size);
    return p;
}

char *cf_qarena_strndup(cf_qarena *arena, const char *text, size_t len)
{
    if (len == SIZE_MAX)
        return NULL;
    char *s = cf_qarena_alloc(arena, len + 1);
    if (s && len)
        memcpy(s, text, len);
    return s;
}
