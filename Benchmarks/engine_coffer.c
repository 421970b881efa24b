/*
 * engine_coffer.c — Coffer through its public C API, plain and encrypted,
 * in the default file format and in clusters (format 5, experimental).
 * Queries live in coffer_queries.c.
 */
#define COFFER_EXPERIMENTAL_API
#include <stdio.h>
#include <string.h>

#include "coffer_engine.h"

static const coffer_property_schema entity_properties[PROP_COUNT] = {
    [PROP_ID] = {.name = "id", .type = COFFER_TYPE_INT, .flags = COFFER_PROPERTY_PRIMARY_KEY},
    [PROP_FLAG] = {.name = "flag", .type = COFFER_TYPE_BOOL},
    [PROP_I32] = {.name = "i32", .type = COFFER_TYPE_INT},
    [PROP_I64] = {.name = "i64", .type = COFFER_TYPE_INT},
    [PROP_F] = {.name = "f", .type = COFFER_TYPE_FLOAT},
    [PROP_D] = {.name = "d", .type = COFFER_TYPE_DOUBLE},
    [PROP_TEXT] = {.name = "text", .type = COFFER_TYPE_STRING},
    [PROP_BLOB] = {.name = "blob", .type = COFFER_TYPE_BINARY},
    [PROP_GROUP] = {.name = "group", .type = COFFER_TYPE_INT, .flags = COFFER_PROPERTY_INDEXED},
    [PROP_NAME] = {.name = "name", .type = COFFER_TYPE_STRING, .flags = COFFER_PROPERTY_INDEXED},
};

/* The list operations' owner: one object with a list of links to Entity.
 * The class joins the schema (version 2) only when the list operations
 * start: a class that others can link to is cleared object by object, so
 * that links to its objects follow, and delete_all would time that. */
static const coffer_property_schema owner_properties[] = {
    [OWNER_PROP_ITEMS] = {.name = "items", .type = COFFER_TYPE_LINK, .collection = COFFER_COLLECTION_LIST,
                          .object_class = "Entity"},
};

static const coffer_class_schema bench_schema[] = {
    {.name = "Entity", .properties = entity_properties, .property_count = PROP_COUNT},
    {.name = "ListOwner", .properties = owner_properties, .property_count = 1},
};


int coffer_bench_fail(const char *what, coffer_status st)
{
    return bench_fail("%s: %s (%s)", what, coffer_last_error(), coffer_strerror(st));
}

int coffer_bench_begin(coffer_bench *b, int mode, coffer_txn **txn)
{
    coffer_status st = coffer_txn_begin(b->db, mode, txn);
    return st == COFFER_OK ? 0 : coffer_bench_fail("coffer_txn_begin", st);
}

int coffer_bench_commit(coffer_txn *txn)
{
    coffer_status st = coffer_txn_commit(txn);
    coffer_txn_free(txn);
    return st == COFFER_OK ? 0 : coffer_bench_fail("coffer_txn_commit", st);
}

/* Opens b->path with the first `classes` classes of the schema, whose
 * version is that count. */
static int open_schema(coffer_bench *b, size_t classes)
{
    /* A fixed key: the benchmark measures the cipher, not key management. */
    unsigned char key[COFFER_ENCRYPTION_KEY_SIZE];
    for (size_t i = 0; i < sizeof key; i++)
        key[i] = (unsigned char)(i * 37 + 11);
    coffer_config *config = NULL;
    coffer_status st;
    if ((st = coffer_config_new(&config)) != COFFER_OK ||
        (st = coffer_config_set_path(config, b->path)) != COFFER_OK ||
        (st = coffer_config_set_schema(config, bench_schema, classes, classes)) != COFFER_OK ||
        (b->encrypted && (st = coffer_config_set_encryption_key(config, key, sizeof key)) != COFFER_OK) ||
        (st = coffer_config_set_storage_format(config, b->format)) != COFFER_OK ||
        (st = coffer_open(config, &b->db)) != COFFER_OK) {
        coffer_config_free(config);
        b->db = NULL;
        return coffer_bench_fail("opening the Coffer database", st);
    }
    coffer_config_free(config);
    if ((st = coffer_db_find_class(b->db, "Entity", &b->cls)) != COFFER_OK ||
        (classes > 1 && (st = coffer_db_find_class(b->db, "ListOwner", &b->owner_cls)) != COFFER_OK)) {
        coffer_close(b->db);
        b->db = NULL;
        return coffer_bench_fail("coffer_db_find_class", st);
    }
    b->has_list_class = classes > 1;
    return 0;
}

int coffer_bench_add_list_class(coffer_bench *b)
{
    if (b->has_list_class)
        return 0;
    coffer_close(b->db);
    return open_schema(b, 2);
}

static int open_store(const char *dir, int encrypted, unsigned format, void **state)
{
    static coffer_bench bench;
    memset(&bench, 0, sizeof bench);
    bench.encrypted = encrypted;
    bench.format = format;
    snprintf(bench.path, sizeof bench.path, "%s/bench.coffer", dir);
    if (open_schema(&bench, 1))
        return -1;
    *state = &bench;
    return 0;
}

static int open_plain(const char *dir, void **state) { return open_store(dir, 0, 0, state); }
static int open_encrypted(const char *dir, void **state) { return open_store(dir, 1, 0, state); }
static int open_clusters(const char *dir, void **state)
{
    return open_store(dir, 0, COFFER_STORAGE_FORMAT_CLUSTERS, state);
}
static int open_clusters_encrypted(const char *dir, void **state)
{
    return open_store(dir, 1, COFFER_STORAGE_FORMAT_CLUSTERS, state);
}

static void close_store(void *state)
{
    coffer_close(((coffer_bench *)state)->db); /* NULL (a failed reopen) is a no-op */
}

static void entity_fields(const bench_entity *e, coffer_field f[PROP_COUNT])
{
    f[0] = (coffer_field){PROP_ID, coffer_value_int(e->id)};
    f[1] = (coffer_field){PROP_FLAG, coffer_value_bool(e->flag)};
    f[2] = (coffer_field){PROP_I32, coffer_value_int(e->i32)};
    f[3] = (coffer_field){PROP_I64, coffer_value_int(e->i64)};
    f[4] = (coffer_field){PROP_F, coffer_value_float(e->f)};
    f[5] = (coffer_field){PROP_D, coffer_value_double(e->d)};
    f[6] = (coffer_field){PROP_TEXT, coffer_value_string(e->text, e->text_len)};
    f[7] = (coffer_field){PROP_BLOB, coffer_value_binary(e->blob, e->blob_len)};
    f[8] = (coffer_field){PROP_GROUP, coffer_value_int(e->group)};
    f[9] = (coffer_field){PROP_NAME, coffer_value_string(e->name, BENCH_NAME_LEN)};
}

/* Reads every property of `obj` into `e`, checking each type and size. */
static int read_entity(coffer_object *obj, bench_entity *e)
{
    coffer_value v[PROP_COUNT];
    static const coffer_type types[PROP_COUNT] = {
        COFFER_TYPE_INT, COFFER_TYPE_BOOL, COFFER_TYPE_INT, COFFER_TYPE_INT, COFFER_TYPE_FLOAT,
        COFFER_TYPE_DOUBLE, COFFER_TYPE_STRING, COFFER_TYPE_BINARY, COFFER_TYPE_INT, COFFER_TYPE_STRING};
    for (coffer_property_id p = 0; p < PROP_COUNT; p++) {
        coffer_status st = coffer_object_get_value(obj, p, &v[p]);
        if (st != COFFER_OK)
            return coffer_bench_fail("coffer_object_get_value", st);
        if (v[p].type != types[p])
            return bench_fail("property %s read as %s", entity_properties[p].name, coffer_type_name(v[p].type));
    }
    if (v[PROP_TEXT].u.string.size > BENCH_TEXT_MAX || v[PROP_BLOB].u.binary.size > BENCH_TEXT_MAX ||
        v[PROP_NAME].u.string.size != BENCH_NAME_LEN)
        return bench_fail("object %lld: a string or binary value has the wrong size", (long long)v[PROP_ID].u.integer);
    e->id = v[PROP_ID].u.integer;
    e->flag = v[PROP_FLAG].u.boolean;
    e->i32 = (int32_t)v[PROP_I32].u.integer;
    e->i64 = v[PROP_I64].u.integer;
    e->f = v[PROP_F].u.float_value;
    e->d = v[PROP_D].u.double_value;
    e->text_len = (uint8_t)v[PROP_TEXT].u.string.size;
    if (e->text_len) /* an empty value may have no data pointer */
        memcpy(e->text, v[PROP_TEXT].u.string.data, e->text_len);
    e->text[e->text_len] = '\0';
    e->blob_len = (uint8_t)v[PROP_BLOB].u.binary.size;
    if (e->blob_len)
        memcpy(e->blob, v[PROP_BLOB].u.binary.data, e->blob_len);
    e->group = v[PROP_GROUP].u.integer;
    memcpy(e->name, v[PROP_NAME].u.string.data, BENCH_NAME_LEN);
    e->name[BENCH_NAME_LEN] = '\0';
    return 0;
}

static int count_objects(coffer_bench *b, uint64_t *count)
{
    coffer_txn *txn;
    if (coffer_bench_begin(b, COFFER_TXN_READ, &txn))
        return -1;
    coffer_status st = coffer_class_count(txn, b->cls, count);
    coffer_txn_free(txn);
    return st == COFFER_OK ? 0 : coffer_bench_fail("coffer_class_count", st);
}

/* Creates the object of entity `e`; frees txn on failure. */
static int create_entity(coffer_bench *b, coffer_txn *txn, const bench_entity *e)
{
    coffer_field fields[PROP_COUNT];
    entity_fields(e, fields);
    coffer_status st = coffer_object_create(txn, b->cls, fields, PROP_COUNT, COFFER_UPDATE_ERROR, NULL);
    if (st != COFFER_OK) {
        coffer_txn_free(txn);
        return coffer_bench_fail("coffer_object_create", st);
    }
    return 0;
}

static int insert_bulk(void *state, const bench_workload *w, uint64_t *check)
{
    coffer_bench *b = state;
    coffer_txn *txn;
    if (coffer_bench_begin(b, COFFER_TXN_WRITE, &txn))
        return -1;
    for (uint64_t i = 0; i < w->n; i++)
        if (create_entity(b, txn, &w->entities[i]))
            return -1;
    return coffer_bench_commit(txn) || count_objects(b, check);
}

static int read_by_pk(void *state, const bench_workload *w, uint64_t *check)
{
    coffer_bench *b = state;
    coffer_txn *txn;
    bench_entity e;
    if (coffer_bench_begin(b, COFFER_TXN_READ, &txn))
        return -1;
    for (uint64_t i = 0; i < w->n; i++) {
        coffer_value pk = coffer_value_int(w->order[i]);
        coffer_object *obj;
        coffer_status st = coffer_object_find(txn, b->cls, &pk, &obj);
        if (st != COFFER_OK) {
            coffer_txn_free(txn);
            return coffer_bench_fail("coffer_object_find", st);
        }
        if (read_entity(obj, &e)) {
            coffer_txn_free(txn);
            return -1;
        }
        coffer_object_release(obj);
        *check = bench_check_add(*check, &e);
    }
    coffer_txn_free(txn);
    return 0;
}

static int update_all(void *state, const bench_workload *w, uint64_t *check)
{
    coffer_bench *b = state;
    coffer_txn *txn;
    if (coffer_bench_begin(b, COFFER_TXN_WRITE, &txn))
        return -1;
    for (uint64_t i = 0; i < w->n; i++) {
        int64_t i64;
        double d;
        coffer_value pk = coffer_value_int(w->order[i]);
        coffer_object *obj;
        bench_entity_updated_values(w, w->order[i], &i64, &d);
        coffer_field fields[2] = {{PROP_I64, coffer_value_int(i64)}, {PROP_D, coffer_value_double(d)}};
        coffer_status st = coffer_object_find(txn, b->cls, &pk, &obj);
        if (st == COFFER_OK)
            st = coffer_object_set_fields(obj, fields, 2);
        if (st != COFFER_OK) {
            coffer_txn_free(txn);
            return coffer_bench_fail("updating an object", st);
        }
        coffer_object_release(obj);
        ++*check;
    }
    return coffer_bench_commit(txn);
}

static int read_all(void *state, const bench_workload *w, uint64_t *check)
{
    (void)w;
    coffer_bench *b = state;
    coffer_txn *txn;
    coffer_iter *it;
    coffer_object *obj;
    bench_entity e;
    coffer_status st;
    uint64_t position = 0;
    if (coffer_bench_begin(b, COFFER_TXN_READ, &txn))
        return -1;
    if ((st = coffer_class_iterate(txn, b->cls, &it)) != COFFER_OK) {
        coffer_txn_free(txn);
        return coffer_bench_fail("coffer_class_iterate", st);
    }
    while ((st = coffer_iter_next(it, &obj)) == COFFER_OK) {
        if (read_entity(obj, &e)) {
            coffer_txn_free(txn);
            return -1;
        }
        *check = bench_check_ordered(*check, position++, &e);
    }
    coffer_txn_free(txn);
    return st == COFFER_DONE ? 0 : coffer_bench_fail("coffer_iter_next", st);
}

static int delete_all(void *state, const bench_workload *w, uint64_t *check)
{
    (void)w;
    coffer_bench *b = state;
    coffer_txn *txn;
    if (coffer_bench_begin(b, COFFER_TXN_WRITE, &txn))
        return -1;
    coffer_status st = coffer_class_clear(txn, b->cls);
    if (st != COFFER_OK) {
        coffer_txn_free(txn);
        return coffer_bench_fail("coffer_class_clear", st);
    }
    return coffer_bench_commit(txn) || count_objects(b, check);
}

static int single_writes(void *state, const bench_workload *w, uint64_t *check)
{
    coffer_bench *b = state;
    for (uint64_t k = 0; k < w->single_writes; k++) {
        coffer_txn *txn;
        if (coffer_bench_begin(b, COFFER_TXN_WRITE, &txn))
            return -1;
        if (create_entity(b, txn, &w->entities[w->n + k]) || coffer_bench_commit(txn))
            return -1;
    }
    return count_objects(b, check);
}

#define COFFER_OPS                                              \
    {                                                           \
        [BENCH_OP_INSERT_BULK] = insert_bulk,                   \
        [BENCH_OP_READ_BY_PK] = read_by_pk,                     \
        [BENCH_OP_UPDATE_ALL] = update_all,                     \
        [BENCH_OP_READ_ALL] = read_all,                         \
        [BENCH_OP_QUERY_INDEXED_EQ] = coffer_bench_query_indexed_eq, \
        [BENCH_OP_SCAN_FILTER] = coffer_bench_scan_filter,      \
        [BENCH_OP_SCAN_CONTAINS] = coffer_bench_scan_contains,  \
        [BENCH_OP_QUERY_PREFIX] = coffer_bench_query_prefix,    \
        [BENCH_OP_DELETE_ALL] = delete_all,                     \
        [BENCH_OP_SINGLE_WRITES] = single_writes,               \
        [BENCH_OP_LIST_APPEND] = coffer_bench_list_append,      \
        [BENCH_OP_LIST_READ] = coffer_bench_list_read,          \
    }

const bench_engine bench_engine_coffer = {
    .key = "coffer", .open = open_plain, .close = close_store, .ops = COFFER_OPS, .plan = coffer_bench_plan,
    .prepare = coffer_bench_prepare};

const bench_engine bench_engine_coffer_encrypted = {
    .key = "coffer_encrypted", .open = open_encrypted, .close = close_store, .ops = COFFER_OPS,
    .plan = coffer_bench_plan, .prepare = coffer_bench_prepare};

const bench_engine bench_engine_coffer_clusters = {
    .key = "coffer_clusters", .open = open_clusters, .close = close_store, .ops = COFFER_OPS,
    .plan = coffer_bench_plan, .prepare = coffer_bench_prepare};

const bench_engine bench_engine_coffer_clusters_encrypted = {
    .key = "coffer_clusters_encrypted", .open = open_clusters_encrypted, .close = close_store, .ops = COFFER_OPS,
    .plan = coffer_bench_plan, .prepare = coffer_bench_prepare};
