/*
 * engine_lmdb.c — raw LMDB doing the physical work Coffer does: one record
 * per object under an increasing 8-byte key written with MDB_APPEND, index
 * entries for the primary key, `group` and `name` as plain keys in a second
 * database, the next object key in a third, every commit durable. It is the
 * floor that shows Coffer's own overhead.
 */
#include <lmdb.h>
#include <stdio.h>
#include <string.h>

#include "engine.h"
#include "lmdb_record.h"

typedef struct lmdb_bench {
    MDB_env *env;
    MDB_dbi objects, index, meta;
    uint64_t next_key; /* the last object key used */
} lmdb_bench;

static int fail(const char *what, int rc)
{
    return bench_fail("%s: %s", what, mdb_strerror(rc));
}

static int begin(lmdb_bench *b, unsigned flags, MDB_txn **txn)
{
    int rc = mdb_txn_begin(b->env, NULL, flags, txn);
    return rc ? fail("mdb_txn_begin", rc) : 0;
}

static int commit(MDB_txn *txn)
{
    int rc = mdb_txn_commit(txn);
    return rc ? fail("mdb_txn_commit", rc) : 0;
}

static int lmdb_open(const char *dir, void **state)
{
    static lmdb_bench bench;
    char path[4096];
    MDB_txn *txn;
    int rc;
    snprintf(path, sizeof path, "%s/bench.lmdb", dir);
    if ((rc = mdb_env_create(&bench.env)))
        return fail("mdb_env_create", rc);
    /* Address space only, as in Coffer: large enough for 1,000,000 objects. */
    if ((rc = mdb_env_set_mapsize(bench.env, (size_t)4 << 30)) || (rc = mdb_env_set_maxdbs(bench.env, 3)) ||
        (rc = mdb_env_open(bench.env, path, MDB_NOSUBDIR | MDB_NOTLS, 0644))) {
        mdb_env_close(bench.env);
        return fail("opening the LMDB environment", rc);
    }
    if ((rc = mdb_txn_begin(bench.env, NULL, 0, &txn)) ||
        (rc = mdb_dbi_open(txn, "objects", MDB_CREATE, &bench.objects)) ||
        (rc = mdb_dbi_open(txn, "index", MDB_CREATE, &bench.index)) ||
        (rc = mdb_dbi_open(txn, "meta", MDB_CREATE, &bench.meta)) || (rc = mdb_txn_commit(txn))) {
        mdb_env_close(bench.env);
        return fail("creating the LMDB databases", rc);
    }
    bench.next_key = 0;
    *state = &bench;
    return 0;
}

static void lmdb_close(void *state)
{
    mdb_env_close(((lmdb_bench *)state)->env);
}

/* Writes one new object and its three index entries. */
static int put_object(lmdb_bench *b, MDB_cursor *objects, MDB_cursor *index, const bench_entity *e)
{
    uint8_t rec[LMDB_RECORD_MAX], okey[8], ikey[LMDB_INDEX_KEY_MAX];
    uint64_t key = ++b->next_key;
    MDB_val k = {8, okey}, v = {lmdb_record_encode(e, rec), rec}, empty = {0, NULL};
    int rc;
    lmdb_put_be64(okey, key);
    if ((rc = mdb_cursor_put(objects, &k, &v, MDB_APPEND)))
        return fail("writing an object", rc);
    k.mv_data = ikey;
    k.mv_size = lmdb_index_int_key(LMDB_COLUMN_ID, e->id, key, ikey);
    if ((rc = mdb_cursor_put(index, &k, &empty, 0)))
        return fail("writing a primary-key entry", rc);
    k.mv_size = lmdb_index_int_key(LMDB_COLUMN_GROUP, e->group, key, ikey);
    if ((rc = mdb_cursor_put(index, &k, &empty, 0)))
        return fail("writing a group index entry", rc);
    k.mv_size = lmdb_index_name_key(e->name, BENCH_NAME_LEN, key, ikey);
    if ((rc = mdb_cursor_put(index, &k, &empty, 0)))
        return fail("writing a name index entry", rc);
    return 0;
}

/* Stores the next object key, as Coffer does in every write transaction. */
static int put_counter(lmdb_bench *b, MDB_txn *txn)
{
    uint8_t value[8];
    MDB_val k = {7, "nextkey"}, v = {8, value};
    lmdb_put_be64(value, b->next_key);
    int rc = mdb_put(txn, b->meta, &k, &v, 0);
    return rc ? fail("writing the key counter", rc) : 0;
}

static int insert_objects(lmdb_bench *b, const bench_entity *e, uint64_t count)
{
    MDB_txn *txn;
    MDB_cursor *objects, *index;
    int rc;
    if (begin(b, 0, &txn))
        return -1;
    if ((rc = mdb_cursor_open(txn, b->objects, &objects)) || (rc = mdb_cursor_open(txn, b->index, &index))) {
        mdb_txn_abort(txn);
        return fail("mdb_cursor_open", rc);
    }
    for (uint64_t i = 0; i < count; i++)
        if (put_object(b, objects, index, &e[i])) {
            mdb_txn_abort(txn);
            return -1;
        }
    return put_counter(b, txn) ? (mdb_txn_abort(txn), -1) : commit(txn);
}

static int count_objects(lmdb_bench *b, uint64_t *count)
{
    MDB_txn *txn;
    MDB_stat st;
    if (begin(b, MDB_RDONLY, &txn))
        return -1;
    int rc = mdb_stat(txn, b->objects, &st);
    mdb_txn_abort(txn);
    *count = st.ms_entries;
    return rc ? fail("mdb_stat", rc) : 0;
}

/* The object key of the object with primary key `id` (0 if none). */
static int find_by_id(MDB_cursor *index, int64_t id, uint64_t *key)
{
    uint8_t prefix[LMDB_INDEX_KEY_MAX];
    MDB_val k = {lmdb_index_int_key(LMDB_COLUMN_ID, id, 0, prefix), prefix}, v;
    size_t plen = k.mv_size;
    int rc = mdb_cursor_get(index, &k, &v, MDB_SET_RANGE);
    *key = 0;
    if (rc == MDB_NOTFOUND)
        return 0;
    if (rc)
        return fail("reading the primary-key index", rc);
    if (k.mv_size == plen + 8 && memcmp(k.mv_data, prefix, plen) == 0)
        *key = lmdb_index_object_key(k.mv_data, k.mv_size);
    return 0;
}

/* Reads the record of the object with primary key `id`. */
static int get_by_id(lmdb_bench *b, MDB_txn *txn, MDB_cursor *index, int64_t id, uint8_t okey[8], MDB_val *rec)
{
    uint64_t key;
    if (find_by_id(index, id, &key))
        return -1;
    if (!key)
        return bench_fail("no object with id %lld", (long long)id);
    lmdb_put_be64(okey, key);
    MDB_val k = {8, okey};
    int rc = mdb_get(txn, b->objects, &k, rec);
    return rc ? fail("reading an object", rc) : 0;
}

/* Begins a transaction (mdb_txn_begin flags) with a cursor on `dbi`. */
static int begin_with_cursor(lmdb_bench *b, unsigned flags, MDB_dbi dbi, MDB_txn **txn, MDB_cursor **cur)
{
    int rc;
    if (begin(b, flags, txn))
        return -1;
    if ((rc = mdb_cursor_open(*txn, dbi, cur))) {
        mdb_txn_abort(*txn);
        return fail("mdb_cursor_open", rc);
    }
    return 0;
}

/* Reads and decodes the object with primary key `id`; its object key goes
 * to okey. Aborts txn on failure. */
static int load_by_id(lmdb_bench *b, MDB_txn *txn, MDB_cursor *index, int64_t id, uint8_t okey[8], bench_entity *e)
{
    MDB_val rec;
    if (get_by_id(b, txn, index, id, okey, &rec)) {
        mdb_txn_abort(txn);
        return -1;
    }
    if (lmdb_record_decode(rec.mv_data, rec.mv_size, e)) {
        mdb_txn_abort(txn);
        return bench_fail("object %lld: malformed record", (long long)id);
    }
    return 0;
}

static int insert_bulk(void *state, const bench_workload *w, uint64_t *check)
{
    return insert_objects(state, w->entities, w->n) || count_objects(state, check);
}

static int read_by_pk(void *state, const bench_workload *w, uint64_t *check)
{
    lmdb_bench *b = state;
    MDB_txn *txn;
    MDB_cursor *index;
    bench_entity e;
    if (begin_with_cursor(b, MDB_RDONLY, b->index, &txn, &index))
        return -1;
    for (uint64_t i = 0; i < w->n; i++) {
        uint8_t okey[8];
        if (load_by_id(b, txn, index, w->order[i], okey, &e))
            return -1;
        *check = bench_check_add(*check, &e);
    }
    mdb_txn_abort(txn);
    return 0;
}

static int update_all(void *state, const bench_workload *w, uint64_t *check)
{
    lmdb_bench *b = state;
    MDB_txn *txn;
    MDB_cursor *index;
    bench_entity e;
    int rc;
    if (begin_with_cursor(b, 0, b->index, &txn, &index))
        return -1;
    for (uint64_t i = 0; i < w->n; i++) {
        uint8_t okey[8], buf[LMDB_RECORD_MAX];
        if (load_by_id(b, txn, index, w->order[i], okey, &e))
            return -1;
        bench_entity_apply_update(w, &e);
        MDB_val k = {8, okey}, v = {lmdb_record_encode(&e, buf), buf};
        if ((rc = mdb_put(txn, b->objects, &k, &v, 0))) {
            mdb_txn_abort(txn);
            return fail("updating an object", rc);
        }
        ++*check;
    }
    return put_counter(b, txn) ? (mdb_txn_abort(txn), -1) : commit(txn);
}

/* Walks the index entries that start with `prefix`, counting them. */
static int count_prefix(MDB_cursor *index, const uint8_t *prefix, size_t plen, uint64_t *count)
{
    MDB_val k = {plen, (void *)prefix}, v;
    int rc = mdb_cursor_get(index, &k, &v, MDB_SET_RANGE);
    while (rc == 0 && k.mv_size >= plen && memcmp(k.mv_data, prefix, plen) == 0) {
        ++*count;
        rc = mdb_cursor_get(index, &k, &v, MDB_NEXT);
    }
    return rc && rc != MDB_NOTFOUND ? fail("walking the index", rc) : 0;
}

/* Runs `count` index walks on prefixes `make_prefix` builds. */
static int index_walks(lmdb_bench *b, uint64_t count, size_t (*make_prefix)(const bench_workload *, uint64_t, uint8_t *),
                       const bench_workload *w, uint64_t *check)
{
    MDB_txn *txn;
    MDB_cursor *index;
    if (begin_with_cursor(b, MDB_RDONLY, b->index, &txn, &index))
        return -1;
    for (uint64_t q = 0; q < count; q++) {
        uint8_t prefix[LMDB_INDEX_KEY_MAX];
        size_t plen = make_prefix(w, q, prefix);
        if (count_prefix(index, prefix, plen, check)) {
            mdb_txn_abort(txn);
            return -1;
        }
    }
    mdb_txn_abort(txn);
    return 0;
}

static size_t group_prefix(const bench_workload *w, uint64_t q, uint8_t *out)
{
    return lmdb_index_int_key(LMDB_COLUMN_GROUP, bench_query_group(w, q), 0, out);
}

static size_t name_prefix(const bench_workload *w, uint64_t q, uint8_t *out)
{
    char prefix[BENCH_PREFIX_LEN + 1];
    bench_query_prefix(w, q, prefix);
    return lmdb_index_name_prefix(prefix, BENCH_PREFIX_LEN, out);
}

static int query_indexed_eq(void *state, const bench_workload *w, uint64_t *check)
{
    return index_walks(state, w->queries, group_prefix, w, check);
}

static int query_prefix(void *state, const bench_workload *w, uint64_t *check)
{
    return index_walks(state, w->prefix_queries, name_prefix, w, check);
}

/* Visits every record in key order. */
typedef int (*record_fn)(const MDB_val *rec, uint64_t position, const void *arg, uint64_t *check);

static int walk_records(lmdb_bench *b, record_fn fn, const void *arg, uint64_t *check)
{
    MDB_txn *txn;
    MDB_cursor *cur;
    MDB_val k, v;
    uint64_t position = 0;
    int rc;
    if (begin_with_cursor(b, MDB_RDONLY, b->objects, &txn, &cur))
        return -1;
    for (rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); rc == 0; rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT))
        if (fn(&v, position++, arg, check)) {
            mdb_txn_abort(txn);
            return -1;
        }
    mdb_txn_abort(txn);
    return rc != MDB_NOTFOUND ? fail("walking the objects", rc) : 0;
}

static int read_record(const MDB_val *rec, uint64_t position, const void *arg, uint64_t *check)
{
    (void)arg;
    bench_entity e;
    if (lmdb_record_decode(rec->mv_data, rec->mv_size, &e))
        return bench_fail("object at position %llu: malformed record", (unsigned long long)position);
    *check = bench_check_ordered(*check, position, &e);
    return 0;
}

static int filter_record(const MDB_val *rec, uint64_t position, const void *arg, uint64_t *check)
{
    int64_t i64;
    if (lmdb_record_i64(rec->mv_data, rec->mv_size, &i64))
        return bench_fail("object at position %llu: malformed record", (unsigned long long)position);
    *check += i64 > *(const int64_t *)arg;
    return 0;
}

static int read_all(void *state, const bench_workload *w, uint64_t *check)
{
    (void)w;
    return walk_records(state, read_record, NULL, check);
}

static int scan_filter(void *state, const bench_workload *w, uint64_t *check)
{
    for (uint64_t s = 0; s < w->scans; s++) {
        int64_t threshold = bench_scan_threshold(w, s);
        if (walk_records(state, filter_record, &threshold, check))
            return -1;
    }
    return 0;
}

static int contains_record(const MDB_val *rec, uint64_t position, const void *arg, uint64_t *check)
{
    bench_entity e;
    if (lmdb_record_decode(rec->mv_data, rec->mv_size, &e))
        return bench_fail("object at position %llu: malformed record", (unsigned long long)position);
    *check += (uint64_t)bench_text_contains(e.text, e.text_len, arg);
    return 0;
}

static int scan_contains(void *state, const bench_workload *w, uint64_t *check)
{
    for (uint64_t s = 0; s < w->scans; s++) {
        char needle[BENCH_NEEDLE_LEN + 1];
        bench_scan_needle(w, s, needle);
        if (walk_records(state, contains_record, needle, check))
            return -1;
    }
    return 0;
}

static int delete_all(void *state, const bench_workload *w, uint64_t *check)
{
    (void)w;
    lmdb_bench *b = state;
    MDB_txn *txn;
    int rc;
    if (begin(b, 0, &txn))
        return -1;
    if ((rc = mdb_drop(txn, b->objects, 0)) || (rc = mdb_drop(txn, b->index, 0))) {
        mdb_txn_abort(txn);
        return fail("mdb_drop", rc);
    }
    return commit(txn) || count_objects(b, check);
}

static int single_writes(void *state, const bench_workload *w, uint64_t *check)
{
    for (uint64_t k = 0; k < w->single_writes; k++)
        if (insert_objects(state, &w->entities[w->n + k], 1))
            return -1;
    return count_objects(state, check);
}

static const char *lmdb_plan(bench_op op)
{
    switch (op) {
    case BENCH_OP_QUERY_INDEXED_EQ: return "index walk, count of keys";
    case BENCH_OP_SCAN_FILTER: return "record scan, one column";
    case BENCH_OP_SCAN_CONTAINS: return "record scan, records decoded";
    case BENCH_OP_QUERY_PREFIX: return "index range walk";
    case BENCH_OP_DELETE_ALL: return "mdb_drop";
    default: return NULL;
    }
}

const bench_engine bench_engine_lmdb = {
    .key = "lmdb",
    .open = lmdb_open,
    .close = lmdb_close,
    .ops =
        {
            BENCH_CORE_OPS,
        },
    .plan = lmdb_plan,
};
