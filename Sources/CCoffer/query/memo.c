/* memo — a hash table from byte keys to SUBQUERY counts (see memo.h): open
 * addressing with linear probing; the key bytes live one after another in
 * one growing buffer. */
#include <stdlib.h>
#include <string.h>

#include "util/error.h"
#include "query/memo.h"

/* Past these the memo starts over: a run keeps at most this much. */
#define MEMO_MAX_ENTRIES (1u << 20)
#define MEMO_MAX_KEY_BYTES ((size_t)64 << 20)

typedef struct entry {
    uint64_t hash; /* 0: an empty slot */
    size_t off, len;
    int64_t count;
} entry;

struct cf_qmemo {
    entry *slots;
    size_t nslots; /* a power of two, or 0 */
    size_t used;
    cf_buf keys;
};

cf_qmemo *cf_qmemo_new(void) { return calloc(1, sizeof(cf_qmemo)); }

void cf_qmemo_free(cf_qmemo *memo)
{
    if (!memo)
        return;
    free(memo->slots);
    free(memo->keys.p);
    free(memo);
}

static void put_bytes(cf_buf *key, const void *p, size_t n) { cf_buf_put(key, p, n); }

int cf_qmemo_key_value(cf_buf *key, const coffer_value *v)
{
    uint8_t tag = (uint8_t)v->type;
    switch (v->type) {
    case COFFER_TYPE_NULL: put_bytes(key, &tag, 1); return 1;
    case COFFER_TYPE_BOOL: {
        uint8_t b = v->u.boolean ? 1 : 0;
        put_bytes(key, &tag, 1);
        put_bytes(key, &b, 1);
        return 1;
    }
    case COFFER_TYPE_INT: put_bytes(key, &tag, 1); put_bytes(key, &v->u.integer, 8); return 1;
    case COFFER_TYPE_FLOAT: put_bytes(key, &tag, 1); put_bytes(key, &v->u.float_value, 4); return 1;
    case COFFER_TYPE_DOUBLE: put_bytes(key, &tag, 1); put_bytes(key, &v->u.double_value, 8); return 1;
    case COFFER_TYPE_DATE:
        put_bytes(key, &tag, 1);
        put_bytes(key, &v->u.date.seconds, 8);
        put_bytes(key, &v->u.date.nanoseconds, 4);
        return 1;
    case COFFER_TYPE_OBJECT_ID: put_bytes(key, &tag, 1); put_bytes(key, v->u.object_id.bytes, 12); return 1;
    case COFFER_TYPE_UUID: put_bytes(key, &tag, 1); put_bytes(key, v->u.uuid.bytes, 16); return 1;
    case COFFER_TYPE_DECIMAL128: put_bytes(key, &tag, 1); put_bytes(key, v->u.decimal128.w, 16); return 1;
    case COFFER_TYPE_LINK:
        put_bytes(key, &tag, 1);
        put_bytes(key, &v->u.link.class_id, 4);
        put_bytes(key, &v->u.link.key, 8);
        return 1;
    case COFFER_TYPE_STRING:
    case COFFER_TYPE_BINARY: {
        uint64_t size = v->u.string.size;
        put_bytes(key, &tag, 1);
        put_bytes(key, &size, 8);
        if (size)
            put_bytes(key, v->u.string.data, (size_t)size);
        return 1;
    }
    default: return 0; /* collections and handles: not a key */
    }
}

/* FNV-1a, never 0 (0 marks an empty slot). */
static uint64_t hash_of(const uint8_t *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325u;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 0x100000001b3u;
    }
    return h ? h : 1;
}

static const entry *lookup(const cf_qmemo *m, const uint8_t *key, size_t len, uint64_t h)
{
    if (!m->nslots)
        return NULL;
    size_t mask = m->nslots - 1;
    for (size_t i = (size_t)h & mask;; i = (i + 1) & mask) {
        const entry *e = &m->slots[i];
        if (!e->hash)
            return e;
        if (e->hash == h && e->len == len && memcmp(m->keys.p + e->off, key, len) == 0)
            return e;
    }
}

int cf_qmemo_find(const cf_qmemo *memo, const cf_buf *key, int64_t *count)
{
    const entry *e = lookup(memo, key->p, key->len, hash_of(key->p, key->len));
    if (!e || !e->hash)
        return 0;
    *count = e->count;
    return 1;
}

static void insert(cf_qmemo *m, const entry *e)
{
    size_t mask = m->nslots - 1;
    size_t i = (size_t)e->hash & mask;
    while (m->slots[i].hash)
        i = (i + 1) & mask;
    m->slots[i] = *e;
}

/* Keeps the table at most half full. */
static coffer_status make_room(cf_qmemo *m)
{
    if (m->nslots && (m->used + 1) * 2 <= m->nslots)
        return COFFER_OK;
    size_t n = m->nslots ? m->nslots * 2 : 64;
    entry *slots = calloc(n, sizeof *slots);
    if (!slots)
        return cf_error(COFFER_ERR_NO_MEMORY, "query: out of memory");
    entry *old = m->slots;
    size_t nold = m->nslots;
    m->slots = slots;
    m->nslots = n;
    for (size_t i = 0; i < nold; i++)
        if (old[i].hash)
            insert(m, &old[i]);
    free(old);
    return COFFER_OK;
}

coffer_status cf_qmemo_put(cf_qmemo *memo, const cf_buf *key, int64_t count)
{
    if (memo->used >= MEMO_MAX_ENTRIES || memo->keys.len + key->len > MEMO_MAX_KEY_BYTES) {
        if (memo->nslots)
            memset(memo->slots, 0, memo->nslots * sizeof *memo->slots);
        memo->used = 0;
        memo->keys.len = 0;
    }
    coffer_status st = make_room(memo);
    if (st != COFFER_OK)
        return st;
    size_t off = memo->keys.len;
    cf_buf_put(&memo->keys, key->p, key->len);
    if (memo->keys.failed) {
        memo->keys.failed = 0;
        memo->keys.len = off;
        return cf_error(COFFER_ERR_NO_MEMORY, "query: out of memory");
    }
    entry e = {hash_of(key->p, key->len), off, key->len, count};
    insert(memo, &e);
    memo->used++;
    return COFFER_OK;
}
