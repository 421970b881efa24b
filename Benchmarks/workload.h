/*
 * workload.h — the benchmark's data set and the answers it must produce.
 *
 * Every value derives from (seed, index) alone, so each engine, in its own
 * process, regenerates exactly the same objects without sharing memory, and
 * the expected answer of every operation (the oracle) is computed here from
 * the generator, independently of any engine.
 */
#ifndef BENCH_WORKLOAD_H
#define BENCH_WORKLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define BENCH_TEXT_MAX 99   /* the free text and the bytes are 0..99 long */
#define BENCH_NAME_LEN 6    /* the indexed string: 6 lowercase letters */
#define BENCH_PREFIX_LEN 2  /* prefix queries use the first 2 letters (the oracle counts 26 * 26 prefixes) */
#define BENCH_NEEDLE_LEN 2  /* text CONTAINS scans look for 2 characters of the text's alphabet */
#define BENCH_LIST_MAX 100000  /* the list grows to min(n, this) links by default */
#define BENCH_LIST_BATCH 1000  /* list appends per write transaction */

/* One object. Field order matches the Coffer schema's property ids. */
typedef struct bench_entity {
    int64_t id;       /* primary key, 1..n for the bulk set */
    bool flag;
    int32_t i32;
    int64_t i64;      /* the unindexed filter scan tests i64 > threshold */
    float f;
    double d;
    uint8_t text_len;
    char text[BENCH_TEXT_MAX + 1];     /* NUL-terminated for engines that want it */
    uint8_t blob_len;
    uint8_t blob[BENCH_TEXT_MAX];
    int64_t group;    /* indexed int: about 10 objects share a value */
    char name[BENCH_NAME_LEN + 1];     /* indexed string, NUL-terminated */
} bench_entity;

/* Sizes and seed of one run. */
typedef struct bench_workload {
    uint64_t seed;
    uint64_t n;              /* objects in the bulk set */
    uint64_t queries;        /* indexed equality queries */
    uint64_t scans;          /* unindexed filter scans, and as many text CONTAINS scans */
    uint64_t prefix_queries; /* string prefix queries */
    uint64_t single_writes;  /* single-object write transactions */
    uint64_t list_length;    /* links appended to the list */
    /* Filled by bench_workload_prepare(), so that generating objects is not
     * timed: objects 0 .. n + single_writes - 1, the ids 1..n in the
     * shuffled order reads and updates visit them, and the ids the list's
     * links point to, in list order. */
    bench_entity *entities;
    int64_t *order;
    int64_t *list_targets;
} bench_workload;

/* Generates the objects and the shuffled order. 0, or -1 if out of memory. */
int bench_workload_prepare(bench_workload *w);
void bench_workload_release(bench_workload *w);

/* splitmix64: a tiny, well-mixed deterministic generator. */
uint64_t bench_mix(uint64_t x);
typedef struct bench_rng { uint64_t state; } bench_rng;
void bench_rng_init(bench_rng *r, uint64_t seed, uint64_t stream, uint64_t index);
uint64_t bench_rng_next(bench_rng *r);
/* Uniform in [0, bound) for bound >= 1. */
uint64_t bench_rng_below(bench_rng *r, uint64_t bound);

/* Number of distinct values of `group`: n / 10, at least 1. */
uint64_t bench_group_count(const bench_workload *w);

/* Object number `index` (0-based); its id is index + 1. Objects n.. are the
 * ones the single-object write transactions insert. */
void bench_entity_make(const bench_workload *w, uint64_t index, bench_entity *e);
/* The values the update operation writes into object `id`: i64 and d. */
void bench_entity_updated_values(const bench_workload *w, int64_t id, int64_t *i64, double *d);
/* Applies bench_entity_updated_values() to `e`. */
void bench_entity_apply_update(const bench_workload *w, bench_entity *e);

/* A hash of every field, identical for equal objects on every engine. */
uint64_t bench_entity_hash(const bench_entity *e);
/* The read checks: reads by primary key add hashes (order-free); reads in
 * order weight each hash by the position read, so order matters too. */
uint64_t bench_check_add(uint64_t check, const bench_entity *e);
uint64_t bench_check_ordered(uint64_t check, uint64_t position, const bench_entity *e);

/* A permutation of the ids 1..n (reads and updates visit objects in this
 * order). Caller frees. NULL if out of memory. */
int64_t *bench_shuffled_ids(const bench_workload *w);

/* The id of the object that list append number i (0-based) links: one of
 * the objects the single-object write transactions inserted (ids n + 1 ..
 * n + single_writes), the only ones left when the list operations run. */
int64_t bench_list_target(const bench_workload *w, uint64_t i);
/* The read check of the list: each linked object's id weighted by its
 * position, so that order matters. */
uint64_t bench_check_list(uint64_t check, uint64_t position, int64_t id);

/* Parameters of query number q. */
int64_t bench_query_group(const bench_workload *w, uint64_t q);
int64_t bench_scan_threshold(const bench_workload *w, uint64_t s);
void bench_query_prefix(const bench_workload *w, uint64_t q, char prefix[BENCH_PREFIX_LEN + 1]);
/* The characters text CONTAINS scan number s looks for, NUL-terminated. */
void bench_scan_needle(const bench_workload *w, uint64_t s, char needle[BENCH_NEEDLE_LEN + 1]);
/* 1 if text[0 .. len) contains `needle` (BENCH_NEEDLE_LEN bytes). */
int bench_text_contains(const char *text, size_t len, const char *needle);
/* 1 if `name` (of `len` bytes) starts with the BENCH_PREFIX_LEN bytes of
 * `prefix`. */
int bench_has_prefix(const char *name, size_t len, const char *prefix);

/* The operations, in the order they run. */
typedef enum bench_op {
    BENCH_OP_INSERT_BULK,
    BENCH_OP_READ_BY_PK,
    BENCH_OP_UPDATE_ALL,
    BENCH_OP_READ_ALL,
    BENCH_OP_QUERY_INDEXED_EQ,
    BENCH_OP_SCAN_FILTER,
    BENCH_OP_SCAN_CONTAINS,
    BENCH_OP_QUERY_PREFIX,
    BENCH_OP_DELETE_ALL,
    BENCH_OP_SINGLE_WRITES,
    BENCH_OP_LIST_APPEND,
    BENCH_OP_LIST_READ,
    BENCH_OP_COUNT
} bench_op;

/* The JSON key of an operation ("insert_bulk", ...). */
const char *bench_op_key(bench_op op);
/* A human description with its unit ("bulk insert, 1 transaction"). */
const char *bench_op_title(bench_op op);
/* How many operations one run of `op` performs (objects, queries, scans). */
uint64_t bench_op_count(const bench_workload *w, bench_op op);

/* The answer every engine must produce for each operation (see engine.h for
 * what each check means). Returns 0, or -1 if out of memory. */
int bench_expected_checks(const bench_workload *w, uint64_t expected[BENCH_OP_COUNT]);

#endif
