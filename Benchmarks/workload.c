/* workload.c — the deterministic data set and its oracle; see workload.h. */
#include "workload.h"

#include <stdlib.h>
#include <string.h>

/* Streams keep the values of different purposes independent. */
enum { STREAM_ENTITY = 1, STREAM_UPDATE, STREAM_SHUFFLE, STREAM_GROUP_QUERY, STREAM_SCAN, STREAM_PREFIX, STREAM_LIST, STREAM_NEEDLE };

static const char text_alphabet[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 ";

uint64_t bench_mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

void bench_rng_init(bench_rng *r, uint64_t seed, uint64_t stream, uint64_t index)
{
    r->state = bench_mix(bench_mix(seed ^ (stream << 56)) ^ index);
}

uint64_t bench_rng_next(bench_rng *r)
{
    r->state += 0x9e3779b97f4a7c15ull;
    uint64_t z = r->state;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

uint64_t bench_rng_below(bench_rng *r, uint64_t bound)
{
    /* Multiply-shift: bias is below 2^-40 for the bounds used here. */
    return (uint64_t)(((unsigned __int128)bench_rng_next(r) * bound) >> 64);
}

uint64_t bench_group_count(const bench_workload *w)
{
    return w->n >= 10 ? w->n / 10 : 1;
}

void bench_entity_make(const bench_workload *w, uint64_t index, bench_entity *e)
{
    bench_rng r;
    bench_rng_init(&r, w->seed, STREAM_ENTITY, index);
    e->id = (int64_t)index + 1;
    e->flag = bench_rng_next(&r) & 1;
    e->i32 = (int32_t)(uint32_t)bench_rng_next(&r);
    e->i64 = (int64_t)bench_rng_next(&r);
    /* Exactly representable values, so every engine stores them unchanged. */
    e->f = (float)(int32_t)(bench_rng_next(&r) >> 40) / 1024.0f;
    e->d = (double)(int64_t)(bench_rng_next(&r) >> 11) / 4096.0;
    e->text_len = (uint8_t)bench_rng_below(&r, BENCH_TEXT_MAX + 1);
    for (unsigned i = 0; i < e->text_len; i++)
        e->text[i] = text_alphabet[bench_rng_below(&r, sizeof text_alphabet - 1)];
    e->text[e->text_len] = '\0';
    e->blob_len = (uint8_t)bench_rng_below(&r, BENCH_TEXT_MAX + 1);
    for (unsigned i = 0; i < e->blob_len; i++)
        e->blob[i] = (uint8_t)bench_rng_next(&r);
    e->group = (int64_t)bench_rng_below(&r, bench_group_count(w));
    for (unsigned i = 0; i < BENCH_NAME_LEN; i++)
        e->name[i] = (char)('a' + bench_rng_below(&r, 26));
    e->name[BENCH_NAME_LEN] = '\0';
}

void bench_entity_updated_values(const bench_workload *w, int64_t id, int64_t *i64, double *d)
{
    bench_rng r;
    bench_rng_init(&r, w->seed, STREAM_UPDATE, (uint64_t)id);
    *i64 = (int64_t)bench_rng_next(&r);
    *d = (double)(int64_t)(bench_rng_next(&r) >> 11) / 4096.0;
}

void bench_entity_apply_update(const bench_workload *w, bench_entity *e)
{
    bench_entity_updated_values(w, e->id, &e->i64, &e->d);
}

static uint64_t hash_step(uint64_t h, uint64_t v)
{
    return (h ^ v) * 0x100000001b3ull + 0x9e3779b97f4a7c15ull;
}

static uint64_t hash_bytes(uint64_t h, const void *data, size_t len)
{
    const unsigned char *p = data;
    h = hash_step(h, len);
    while (len >= 8) {
        uint64_t v;
        memcpy(&v, p, 8);
        h = hash_step(h, v);
        p += 8;
        len -= 8;
    }
    uint64_t tail = 0;
    memcpy(&tail, p, len);
    return hash_step(h, tail);
}

uint64_t bench_entity_hash(const bench_entity *e)
{
    uint32_t fbits;
    uint64_t dbits;
    memcpy(&fbits, &e->f, sizeof fbits);
    memcpy(&dbits, &e->d, sizeof dbits);
    uint64_t h = 0xcbf29ce484222325ull;
    h = hash_step(h, (uint64_t)e->id);
    h = hash_step(h, e->flag);
    h = hash_step(h, (uint64_t)(int64_t)e->i32);
    h = hash_step(h, (uint64_t)e->i64);
    h = hash_step(h, fbits);
    h = hash_step(h, dbits);
    h = hash_bytes(h, e->text, e->text_len);
    h = hash_bytes(h, e->blob, e->blob_len);
    h = hash_step(h, (uint64_t)e->group);
    h = hash_bytes(h, e->name, BENCH_NAME_LEN);
    return bench_mix(h);
}

uint64_t bench_check_add(uint64_t check, const bench_entity *e)
{
    return check + bench_entity_hash(e);
}

uint64_t bench_check_ordered(uint64_t check, uint64_t position, const bench_entity *e)
{
    return check + bench_entity_hash(e) * (2 * position + 1);
}

int64_t *bench_shuffled_ids(const bench_workload *w)
{
    int64_t *ids = malloc((w->n ? w->n : 1) * sizeof *ids);
    if (!ids)
        return NULL;
    for (uint64_t i = 0; i < w->n; i++)
        ids[i] = (int64_t)i + 1;
    bench_rng r;
    bench_rng_init(&r, w->seed, STREAM_SHUFFLE, 0);
    for (uint64_t i = w->n; i > 1; i--) {
        uint64_t j = bench_rng_below(&r, i);
        int64_t t = ids[i - 1];
        ids[i - 1] = ids[j];
        ids[j] = t;
    }
    return ids;
}

int64_t bench_list_target(const bench_workload *w, uint64_t i)
{
    bench_rng r;
    bench_rng_init(&r, w->seed, STREAM_LIST, i);
    return (int64_t)(w->n + 1 + bench_rng_below(&r, w->single_writes ? w->single_writes : 1));
}

uint64_t bench_check_list(uint64_t check, uint64_t position, int64_t id)
{
    return check + bench_mix((uint64_t)id) * (2 * position + 1);
}

int bench_workload_prepare(bench_workload *w)
{
    uint64_t total = w->n + w->single_writes;
    w->entities = malloc((total ? total : 1) * sizeof *w->entities);
    w->order = bench_shuffled_ids(w);
    w->list_targets = malloc((w->list_length ? w->list_length : 1) * sizeof *w->list_targets);
    if (!w->entities || !w->order || !w->list_targets) {
        bench_workload_release(w);
        return -1;
    }
    for (uint64_t i = 0; i < total; i++)
        bench_entity_make(w, i, &w->entities[i]);
    for (uint64_t i = 0; i < w->list_length; i++)
        w->list_targets[i] = bench_list_target(w, i);
    return 0;
}

void bench_workload_release(bench_workload *w)
{
    free(w->entities);
    free(w->order);
    free(w->list_targets);
    w->entities = NULL;
    w->order = NULL;
    w->list_targets = NULL;
}

int64_t bench_query_group(const bench_workload *w, uint64_t q)
{
    bench_rng r;
    bench_rng_init(&r, w->seed, STREAM_GROUP_QUERY, q);
    return (int64_t)bench_rng_below(&r, bench_group_count(w));
}

int64_t bench_scan_threshold(const bench_workload *w, uint64_t s)
{
    bench_rng r;
    bench_rng_init(&r, w->seed, STREAM_SCAN, s);
    return (int64_t)bench_rng_next(&r);
}

void bench_query_prefix(const bench_workload *w, uint64_t q, char prefix[BENCH_PREFIX_LEN + 1])
{
    bench_rng r;
    bench_rng_init(&r, w->seed, STREAM_PREFIX, q);
    for (unsigned i = 0; i < BENCH_PREFIX_LEN; i++)
        prefix[i] = (char)('a' + bench_rng_below(&r, 26));
    prefix[BENCH_PREFIX_LEN] = '\0';
}

void bench_scan_needle(const bench_workload *w, uint64_t s, char needle[BENCH_NEEDLE_LEN + 1])
{
    bench_rng r;
    bench_rng_init(&r, w->seed, STREAM_NEEDLE, s);
    for (unsigned i = 0; i < BENCH_NEEDLE_LEN; i++)
        needle[i] = text_alphabet[bench_rng_below(&r, sizeof text_alphabet - 1)];
    needle[BENCH_NEEDLE_LEN] = '\0';
}

int bench_text_contains(const char *text, size_t len, const char *needle)
{
    for (size_t i = 0; i + BENCH_NEEDLE_LEN <= len; i++)
        if (memcmp(text + i, needle, BENCH_NEEDLE_LEN) == 0)
            return 1;
    return 0;
}

int bench_has_prefix(const char *name, size_t len, const char *prefix)
{
    return len >= BENCH_PREFIX_LEN && memcmp(name, prefix, BENCH_PREFIX_LEN) == 0;
}

static const struct {
    const char *key;
    const char *title;
} op_names[BENCH_OP_COUNT] = {
    [BENCH_OP_INSERT_BULK] = {"insert_bulk", "bulk insert, one transaction (objects/s)"},
    [BENCH_OP_READ_BY_PK] = {"read_by_primary_key", "read by primary key, all fields (objects/s)"},
    [BENCH_OP_UPDATE_ALL] = {"update_all", "update every object, one transaction (objects/s)"},
    [BENCH_OP_READ_ALL] = {"read_all_in_order", "read all in order, all fields (objects/s)"},
    [BENCH_OP_QUERY_INDEXED_EQ] = {"indexed_equality_query", "indexed int equality query, count (queries/s)"},
    [BENCH_OP_SCAN_FILTER] = {"unindexed_filter_scan", "unindexed filter i64 > x, count (scans/s)"},
    [BENCH_OP_SCAN_CONTAINS] = {"unindexed_contains_scan", "unindexed text CONTAINS x, count (scans/s)"},
    [BENCH_OP_QUERY_PREFIX] = {"string_prefix_query", "indexed string prefix query, count (queries/s)"},
    [BENCH_OP_DELETE_ALL] = {"delete_all", "delete all, one transaction (objects/s)"},
    [BENCH_OP_SINGLE_WRITES] = {"single_object_write_transactions", "single-object write transactions (commits/s)"},
    [BENCH_OP_LIST_APPEND] = {"list_append", "list append, 1,000 per transaction (links/s)"},
    [BENCH_OP_LIST_READ] = {"list_read_in_order", "list read in order, following links (links/s)"},
};

const char *bench_op_key(bench_op op)
{
    return op < BENCH_OP_COUNT ? op_names[op].key : "unknown";
}

const char *bench_op_title(bench_op op)
{
    return op < BENCH_OP_COUNT ? op_names[op].title : "unknown";
}

uint64_t bench_op_count(const bench_workload *w, bench_op op)
{
    switch (op) {
    case BENCH_OP_QUERY_INDEXED_EQ: return w->queries;
    case BENCH_OP_SCAN_FILTER:
    case BENCH_OP_SCAN_CONTAINS: return w->scans;
    case BENCH_OP_QUERY_PREFIX: return w->prefix_queries;
    case BENCH_OP_SINGLE_WRITES: return w->single_writes;
    case BENCH_OP_LIST_APPEND:
    case BENCH_OP_LIST_READ: return w->list_length;
    default: return w->n;
    }
}

int bench_expected_checks(const bench_workload *w, uint64_t expected[BENCH_OP_COUNT])
{
    uint64_t groups = bench_group_count(w);
    uint64_t *group_sizes = calloc(groups, sizeof *group_sizes);
    uint64_t *prefix_sizes = calloc(26 * 26, sizeof *prefix_sizes);
    int64_t *updated_i64 = malloc((w->n ? w->n : 1) * sizeof *updated_i64);
    char (*needles)[BENCH_NEEDLE_LEN + 1] = malloc((w->scans ? w->scans : 1) * sizeof *needles);
    if (!group_sizes || !prefix_sizes || !updated_i64 || !needles) {
        free(needles);
        free(group_sizes);
        free(prefix_sizes);
        free(updated_i64);
        return -1;
    }
    memset(expected, 0, BENCH_OP_COUNT * sizeof expected[0]);
    for (uint64_t s = 0; s < w->scans; s++)
        bench_scan_needle(w, s, needles[s]);
    bench_entity e;
    for (uint64_t i = 0; i < w->n; i++) {
        bench_entity_make(w, i, &e);
        expected[BENCH_OP_READ_BY_PK] = bench_check_add(expected[BENCH_OP_READ_BY_PK], &e);
        group_sizes[e.group]++;
        prefix_sizes[(e.name[0] - 'a') * 26 + (e.name[1] - 'a')]++;
        for (uint64_t s = 0; s < w->scans; s++)
            expected[BENCH_OP_SCAN_CONTAINS] += (uint64_t)bench_text_contains(e.text, e.text_len, needles[s]);
        bench_entity_apply_update(w, &e);
        updated_i64[i] = e.i64;
        expected[BENCH_OP_READ_ALL] = bench_check_ordered(expected[BENCH_OP_READ_ALL], i, &e);
    }
    expected[BENCH_OP_INSERT_BULK] = w->n;
    expected[BENCH_OP_UPDATE_ALL] = w->n;
    for (uint64_t q = 0; q < w->queries; q++)
        expected[BENCH_OP_QUERY_INDEXED_EQ] += group_sizes[bench_query_group(w, q)];
    for (uint64_t s = 0; s < w->scans; s++) {
        int64_t threshold = bench_scan_threshold(w, s);
        for (uint64_t i = 0; i < w->n; i++)
            expected[BENCH_OP_SCAN_FILTER] += updated_i64[i] > threshold;
    }
    for (uint64_t q = 0; q < w->prefix_queries; q++) {
        char prefix[BENCH_PREFIX_LEN + 1];
        bench_query_prefix(w, q, prefix);
        expected[BENCH_OP_QUERY_PREFIX] += prefix_sizes[(prefix[0] - 'a') * 26 + (prefix[1] - 'a')];
    }
    expected[BENCH_OP_DELETE_ALL] = 0;
    expected[BENCH_OP_SINGLE_WRITES] = w->single_writes;
    expected[BENCH_OP_LIST_APPEND] = w->list_length;
    for (uint64_t i = 0; i < w->list_length; i++)
        expected[BENCH_OP_LIST_READ] = bench_check_list(expected[BENCH_OP_LIST_READ], i, bench_list_target(w, i));
    free(group_sizes);
    free(prefix_sizes);
    free(updated_i64);
    free(needles);
    return 0;
}
