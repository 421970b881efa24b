/* lmdb_record.c — record and index key bytes of the raw LMDB engine. */
#include "lmdb_record.h"

#include <string.h>

enum { HEADER = 4, NULL_BITMAP = 2, OFFSETS = 2 * LMDB_RECORD_COLUMNS, VALUES = HEADER + NULL_BITMAP + OFFSETS };

void lmdb_put_be64(uint8_t *out, uint64_t v)
{
    for (int i = 7; i >= 0; i--, v >>= 8)
        out[i] = (uint8_t)v;
}

uint64_t lmdb_get_be64(const uint8_t *in)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = v << 8 | in[i];
    return v;
}

static uint8_t *put(uint8_t *p, const void *v, size_t n)
{
    memcpy(p, v, n);
    return p + n;
}

size_t lmdb_record_encode(const bench_entity *e, uint8_t *out)
{
    uint8_t *values = out + VALUES, *p = values, nul = 0, flag = e->flag;
    int64_t i32 = e->i32;
    size_t ends[LMDB_RECORD_COLUMNS], c = 0;
    /* Host byte order is little-endian on every machine this runs on. */
    p = put(p, &e->id, 8), ends[c++] = (size_t)(p - values);
    p = put(p, &flag, 1), ends[c++] = (size_t)(p - values);
    p = put(p, &i32, 8), ends[c++] = (size_t)(p - values);
    p = put(p, &e->i64, 8), ends[c++] = (size_t)(p - values);
    p = put(p, &e->f, 4), ends[c++] = (size_t)(p - values);
    p = put(p, &e->d, 8), ends[c++] = (size_t)(p - values);
    p = put(p, e->text, e->text_len), p = put(p, &nul, 1), ends[c++] = (size_t)(p - values);
    p = put(p, e->blob, e->blob_len), ends[c++] = (size_t)(p - values);
    p = put(p, &e->group, 8), ends[c++] = (size_t)(p - values);
    p = put(p, e->name, BENCH_NAME_LEN), p = put(p, &nul, 1), ends[c++] = (size_t)(p - values);
    out[0] = 1; /* record version */
    out[1] = 0; /* 16-bit offsets */
    out[2] = LMDB_RECORD_COLUMNS;
    out[3] = 0;
    out[4] = out[5] = 0; /* no nulls */
    for (c = 0; c < LMDB_RECORD_COLUMNS; c++) {
        out[HEADER + NULL_BITMAP + 2 * c] = (uint8_t)ends[c];
        out[HEADER + NULL_BITMAP + 2 * c + 1] = (uint8_t)(ends[c] >> 8);
    }
    return (size_t)(p - out);
}

/* The bytes of column c, checked against the record's size. */
static const uint8_t *column(const uint8_t *rec, size_t size, unsigned c, size_t *len)
{
    if (size < VALUES || rec[0] != 1 || rec[1] != 0 || rec[2] != LMDB_RECORD_COLUMNS || rec[3] != 0)
        return NULL;
    const uint8_t *off = rec + HEADER + NULL_BITMAP;
    size_t end = (size_t)off[2 * c] | (size_t)off[2 * c + 1] << 8;
    size_t start = c ? ((size_t)off[2 * c - 2] | (size_t)off[2 * c - 1] << 8) : 0;
    if (start > end || VALUES + end > size)
        return NULL;
    *len = end - start;
    return rec + VALUES + start;
}

int lmdb_record_i64(const uint8_t *rec, size_t size, int64_t *out)
{
    size_t len;
    const uint8_t *v = column(rec, size, LMDB_COLUMN_I64, &len);
    if (!v || len != 8)
        return -1;
    memcpy(out, v, 8);
    return 0;
}

int lmdb_record_decode(const uint8_t *rec, size_t size, bench_entity *e)
{
    static const size_t fixed[LMDB_RECORD_COLUMNS] = {8, 1, 8, 8, 4, 8, 0, 0, 8, BENCH_NAME_LEN + 1};
    const uint8_t *v[LMDB_RECORD_COLUMNS];
    size_t len[LMDB_RECORD_COLUMNS];
    for (unsigned c = 0; c < LMDB_RECORD_COLUMNS; c++) {
        v[c] = column(rec, size, c, &len[c]);
        if (!v[c] || (fixed[c] && len[c] != fixed[c]))
            return -1;
    }
    if (len[6] < 1 || len[6] > BENCH_TEXT_MAX + 1 || len[7] > BENCH_TEXT_MAX)
        return -1;
    int64_t i32;
    memcpy(&e->id, v[0], 8);
    e->flag = v[1][0] != 0;
    memcpy(&i32, v[2], 8);
    e->i32 = (int32_t)i32;
    memcpy(&e->i64, v[3], 8);
    memcpy(&e->f, v[4], 4);
    memcpy(&e->d, v[5], 8);
    e->text_len = (uint8_t)(len[6] - 1);
    memcpy(e->text, v[6], e->text_len);
    e->text[e->text_len] = '\0';
    e->blob_len = (uint8_t)len[7];
    memcpy(e->blob, v[7], len[7]);
    memcpy(&e->group, v[8], 8);
    memcpy(e->name, v[9], BENCH_NAME_LEN);
    e->name[BENCH_NAME_LEN] = '\0';
    return 0;
}

size_t lmdb_index_int_key(unsigned column, int64_t value, uint64_t object_key, uint8_t *out)
{
    out[0] = (uint8_t)(column >> 8);
    out[1] = (uint8_t)column;
    out[2] = 1; /* not null */
    lmdb_put_be64(out + 3, (uint64_t)value ^ (1ull << 63));
    if (!object_key)
        return 11;
    lmdb_put_be64(out + 11, object_key);
    return 19;
}

size_t lmdb_index_name_prefix(const char *prefix, size_t len, uint8_t *out)
{
    out[0] = 0;
    out[1] = LMDB_COLUMN_NAME;
    out[2] = 1;
    memcpy(out + 3, prefix, len);
    return 3 + len;
}

size_t lmdb_index_name_key(const char *name, size_t len, uint64_t object_key, uint8_t *out)
{
    size_t n = lmdb_index_name_prefix(name, len, out);
    out[n++] = 0; /* end of a short string */
    if (!object_key)
        return n;
    lmdb_put_be64(out + n, object_key);
    return n + 8;
}

uint64_t lmdb_index_object_key(const uint8_t *key, size_t size)
{
    return size >= 8 ? lmdb_get_be64(key + size - 8) : 0;
}
