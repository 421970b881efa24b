/*
 * test_updates_in_place.c — updates of existing objects. In file format 5
 * an update whose new values have the encoded sizes of the old ones is
 * made in the cluster's column blocks (or the transaction's new record)
 * without writing the object whole; any other update writes it whole.
 * Either way, what a transaction reads after an update, what it commits,
 * and what an abort leaves must be the same: every scalar type (required
 * and optional, nulls, strings growing, shrinking and keeping their size)
 * against a model, in the same transaction and after the commit; objects
 * created earlier in the same transaction, in a cluster that appends
 * filled and wrote before the commit; indexed properties (the index finds
 * the new value at once, never the old); the change log naming exactly the
 * properties changed; aborts; and a writer killed with SIGKILL while it
 * commits updates. Run on both file formats (format 4 always writes
 * objects whole).
 */
#define _GNU_SOURCE
#include "test_support.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../Sources/CCoffer/storage/changelog.h"

/* ---- a model of AllTypes objects ------------------------------------------ */

#define MAX_OBJECTS 1200
#define STRING_MAX 40

/* An AllTypes object's values; strings and binaries own their bytes. */
typedef struct model_object {
    coffer_object_key key;
    coffer_value v[AT_COUNT];
    char bytes[AT_COUNT][STRING_MAX + 1];
} model_object;

typedef struct model {
    model_object *o;
    size_t n;
} model;

/* A random value of AllTypes property p (null sometimes when optional);
 * its bytes, when it has some, in `bytes`. */
static coffer_value random_value(coffer_property_id p, char bytes[STRING_MAX + 1])
{
    coffer_type t = ts_all_types_type(p);
    if (p >= AT_OPT_BOOL && ts_rand_below(4) == 0)
        return coffer_value_null();
    switch (t) {
    case COFFER_TYPE_BOOL:
        return coffer_value_bool(ts_rand_below(2));
    case COFFER_TYPE_INT:
        return coffer_value_int((int64_t)ts_rand());
    case COFFER_TYPE_FLOAT:
        return coffer_value_float((float)ts_rand_below(100000) / 7.0f);
    case COFFER_TYPE_DOUBLE:
        return coffer_value_double((double)ts_rand_below(1000000) / 3.0);
    case COFFER_TYPE_STRING: {
        /* mostly 8 characters (the size a change in place keeps), else any */
        size_t len = ts_rand_below(2) ? 8 : ts_rand_below(STRING_MAX + 1);
        for (size_t i = 0; i < len; i++)
            bytes[i] = (char)('a' + ts_rand_below(26));
        bytes[len] = 0;
        return coffer_value_string(bytes, len);
    }
    case COFFER_TYPE_BINARY: {
        size_t len = ts_rand_below(2) ? 8 : ts_rand_below(STRING_MAX + 1);
        ts_rand_bytes(bytes, len);
        return coffer_value_binary(bytes, len);
    }
    case COFFER_TYPE_DATE:
        return coffer_value_date((int64_t)ts_rand_below(4000000000u), (int32_t)ts_rand_below(1000000000));
    case COFFER_TYPE_OBJECT_ID: {
        uint8_t id[12];
        ts_rand_bytes(id, sizeof id);
        return coffer_value_object_id(id);
    }
    case COFFER_TYPE_UUID: {
        uint8_t id[16];
        ts_rand_bytes(id, sizeof id);
        return coffer_value_uuid(id);
    }
    case COFFER_TYPE_DECIMAL128:
        return coffer_value_decimal128(ts_rand_below(1000000), UINT64_C(0x3040000000000000));
    default:
        fail_msg("unexpected type %d", (int)t);
        return coffer_value_null();
    }
}

/* Stores value v of property p in model object m, copying its bytes. */
static void model_set(model_object *m, coffer_property_id p, coffer_value v)
{
    if (v.type == COFFER_TYPE_STRING) {
        memcpy(m->bytes[p], v.u.string.data, v.u.string.size + 1);
        v.u.string.data = m->bytes[p];
    } else if (v.type == COFFER_TYPE_BINARY) {
        if (v.u.binary.size)
            memcpy(m->bytes[p], v.u.binary.data, v.u.binary.size);
        v.u.binary.data = (const uint8_t *)m->bytes[p];
    }
    m->v[p] = v;
}

/* Creates an AllTypes object of random values, in the model too. */
static void create_random(coffer_txn *w, coffer_class_id at, model *m)
{
    assert_true(m->n < MAX_OBJECTS);
    model_object *mo = &m->o[m->n++];
    coffer_field f[AT_COUNT];
    char bytes[STRING_MAX + 1];
    for (coffer_property_id p = 0; p < AT_COUNT; p++) {
        model_set(mo, p, random_value(p, bytes));
        f[p] = ts_field(p, mo->v[p]);
    }
    coffer_object *o = ts_create(w, at, f, AT_COUNT);
    mo->key = coffer_object_key_of(o);
    coffer_object_release(o);
}

/* Asserts that object m reads as the model says. */
static void check_object(coffer_txn *txn, coffer_class_id at, const model_object *m)
{
    coffer_object *o = NULL;
    assert_ok(coffer_object_get(txn, at, m->key, &o));
    for (coffer_property_id p = 0; p < AT_COUNT; p++)
        assert_value(o, p, &m->v[p]);
    coffer_object_release(o);
}

static void check_all(coffer_txn *txn, coffer_class_id at, const model *m)
{
    assert_int_equal(ts_count(txn, at), m->n);
    for (size_t i = 0; i < m->n; i++)
        check_object(txn, at, &m->o[i]);
}

/* Sets 1 to 3 random properties of a random object to random values (in
 * the model too), then reads the object back whole. */
static void update_random(coffer_txn *w, coffer_class_id at, model *m)
{
    model_object *mo = &m->o[ts_rand_below(m->n)];
    coffer_field f[3];
    char bytes[3][STRING_MAX + 1];
    size_t n = 1 + ts_rand_below(3);
    for (size_t i = 0; i < n; i++) {
        coffer_property_id p;
        int again;
        do {
            p = (coffer_property_id)ts_rand_below(AT_COUNT);
            again = 0;
            for (size_t j = 0; j < i; j++)
                again |= f[j].property == p;
        } while (again);
        f[i] = ts_field(p, random_value(p, bytes[i]));
    }
    coffer_object *o = NULL;
    assert_ok(coffer_object_get(w, at, mo->key, &o));
    assert_ok(coffer_object_set_fields(o, f, n));
    for (size_t i = 0; i < n; i++)
        model_set(mo, f[i].property, f[i].value);
    for (coffer_property_id p = 0; p < AT_COUNT; p++) /* the same handle */
        assert_value(o, p, &mo->v[p]);
    coffer_object_release(o);
    check_object(w, at, mo); /* a new one */
}

static size_t verify_findings(coffer_db *db)
{
    coffer_verify_report *r = NULL;
    assert_ok(coffer_db_verify(db, &r));
    size_t total = coffer_verify_report_count(r);
    for (size_t i = 0; i < total; i++)
        print_message("    finding: %s\n", coffer_verify_report_message(r, i));
    coffer_verify_report_free(r);
    return total;
}

/* ---- every type, in the same transaction, after the commit, aborted -------- */

TS_ENV_TEST(test_updates_of_every_type)
{
    ts_seed(19);
    model m = {calloc(MAX_OBJECTS, sizeof(model_object)), 0};
    coffer_class_id at = env->all_types;
    coffer_txn *w = ts_begin(env->db, COFFER_TXN_WRITE);
    for (int i = 0; i < 600; i++) /* clusters 0, 1 and part of 2 */
        create_random(w, at, &m);
    ts_commit(w);

    /* Objects stored, then objects created in the same transaction (the
     * cluster of keys 768..1023 is filled, so written before the commit),
     * updated and read back; the new ones updated again after that. */
    w = ts_begin(env->db, COFFER_TXN_WRITE);
    for (int i = 0; i < 3000; i++)
        update_random(w, at, &m);
    for (int i = 0; i < 500; i++)
        create_random(w, at, &m);
    for (int i = 0; i < 3000; i++)
        update_random(w, at, &m);
    check_all(w, at, &m);
    ts_commit(w);

    coffer_txn *r = ts_begin(env->db, COFFER_TXN_READ);
    check_all(r, at, &m);
    coffer_txn_free(r);
    assert_int_equal(verify_findings(env->db), 0);

    /* An aborted transaction's updates leave nothing. */
    model saved = {malloc(MAX_OBJECTS * sizeof(model_object)), m.n};
    memcpy(saved.o, m.o, m.n * sizeof *m.o);
    for (size_t i = 0; i < saved.n; i++) /* the copies' bytes are their own */
        for (coffer_property_id p = 0; p < AT_COUNT; p++)
            model_set(&saved.o[i], p, m.o[i].v[p]);
    w = ts_begin(env->db, COFFER_TXN_WRITE);
    for (int i = 0; i < 2000; i++)
        update_random(w, at, &m);
    assert_ok(coffer_txn_abort(w));
    coffer_txn_free(w);
    r = ts_begin(env->db, COFFER_TXN_READ);
    check_all(r, at, &saved);
    coffer_txn_free(r);

    /* The next transaction starts from the committed values. */
    w = ts_begin(env->db, COFFER_TXN_WRITE);
    for (int i = 0; i < 500; i++)
        update_random(w, at, &saved);
    ts_commit(w);
    if (env->mode != TS_MEMORY) /* in memory, closing the only handle drops the data */
        ts_env_reopen(env, ts_std_schema, TS_STD_SCHEMA_COUNT, 1);
    r = ts_begin(env->db, COFFER_TXN_READ);
    check_all(r, at, &saved);
    coffer_txn_free(r);
    assert_int_equal(verify_findings(env->db), 0);
    free(saved.o);
    free(m.o);
}

/* Object i of test_updates_of_narrowed_ints: its int and optional int. */
typedef struct narrow_pair {
    int64_t n;
    int null;
    int64_t opt;
} narrow_pair;

static void set_pair(coffer_txn *w, coffer_class_id at, coffer_object_key key, narrow_pair p)
{
    coffer_object *o = NULL;
    assert_ok(coffer_object_get(w, at, key, &o));
    coffer_field f[] = {ts_field(AT_INT, coffer_value_int(p.n)),
                        ts_field(AT_OPT_INT, p.null ? coffer_value_null() : coffer_value_int(p.opt))};
    assert_ok(coffer_object_set_fields(o, f, 2));
    coffer_object_release(o);
}

static void check_pairs(coffer_txn *txn, coffer_class_id at, const coffer_object_key *keys, const narrow_pair *pairs,
                        size_t n)
{
    for (size_t i = 0; i < n; i++) {
        coffer_object *o = NULL;
        assert_ok(coffer_object_get(txn, at, keys[i], &o));
        assert_int_equal(ts_get_int(o, AT_INT), pairs[i].n);
        if (pairs[i].null) {
            assert_true(ts_get_is_null(o, AT_OPT_INT));
        } else {
            assert_false(ts_get_is_null(o, AT_OPT_INT));
            assert_int_equal(ts_get_int(o, AT_OPT_INT), pairs[i].opt);
        }
        coffer_object_release(o);
    }
}

/* Int columns stored narrowed (a cluster's values within 2^32 of its
 * smallest one, in 1, 2 or 4 bytes each): updates that fit their range,
 * nulls set and cleared, values below the smallest and far outside the
 * range (the object then written whole), read back in the transaction,
 * after the commit and after an abort. */
TS_ENV_TEST(test_updates_of_narrowed_ints)
{
    enum { N = 256 };
    coffer_class_id at = env->all_types;
    coffer_object_key keys[N];
    narrow_pair pairs[N], saved[N];
    coffer_txn *w = ts_begin(env->db, COFFER_TXN_WRITE);
    for (int i = 0; i < N; i++) {
        pairs[i] = (narrow_pair){.n = 1000 + i, .null = i % 3 == 0, .opt = (int64_t)i * 100 - 5000};
        coffer_field f[] = {ts_field(AT_INT, coffer_value_int(pairs[i].n)),
                            ts_field(AT_OPT_INT, pairs[i].null ? coffer_value_null() : coffer_value_int(pairs[i].opt)),
                            ts_field(AT_STRING, ts_str("narrow"))};
        coffer_object *o = ts_create(w, at, f, 3);
        keys[i] = coffer_object_key_of(o);
        coffer_object_release(o);
    }
    ts_commit(w);

    /* In range: 1000..1255 (one byte), -5000..20500 (two bytes). */
    w = ts_begin(env->db, COFFER_TXN_WRITE);
    for (int i = 0; i < N; i++) {
        pairs[i] = (narrow_pair){.n = 1000 + (i * 7) % N, .null = i % 3 == 1, .opt = 20500 - (int64_t)i * 3};
        set_pair(w, at, keys[i], pairs[i]);
    }
    check_pairs(w, at, keys, pairs, N);
    ts_commit(w);
    coffer_txn *r = ts_begin(env->db, COFFER_TXN_READ);
    check_pairs(r, at, keys, pairs, N);
    coffer_txn_free(r);

    /* An abort leaves the committed values. */
    memcpy(saved, pairs, sizeof saved);
    w = ts_begin(env->db, COFFER_TXN_WRITE);
    for (int i = 0; i < N; i += 2)
        set_pair(w, at, keys[i], (narrow_pair){.n = 1001, .null = 0, .opt = -5000});
    assert_ok(coffer_txn_abort(w));
    coffer_txn_free(w);
    r = ts_begin(env->db, COFFER_TXN_READ);
    check_pairs(r, at, keys, saved, N);
    coffer_txn_free(r);

    /* Out of range: below the smallest, past what the width holds, the
     * extremes; then in-range updates of the same cluster again. */
    w = ts_begin(env->db, COFFER_TXN_WRITE);
    pairs[5] = (narrow_pair){.n = 999, .null = 0, .opt = -5001};
    pairs[6] = (narrow_pair){.n = 1256, .null = 0, .opt = 70000};
    pairs[7] = (narrow_pair){.n = INT64_MIN, .null = 0, .opt = INT64_MAX};
    for (int i = 5; i <= 7; i++)
        set_pair(w, at, keys[i], pairs[i]);
    for (int i = 100; i < 110; i++) {
        pairs[i] = (narrow_pair){.n = 1200 + i % 7, .null = 0, .opt = i};
        set_pair(w, at, keys[i], pairs[i]);
    }
    check_pairs(w, at, keys, pairs, N);
    ts_commit(w);
    r = ts_begin(env->db, COFFER_TXN_READ);
    check_pairs(r, at, keys, pairs, N);
    coffer_txn_free(r);

    /* The cluster written again holds the wide values: updates still read right. */
    w = ts_begin(env->db, COFFER_TXN_WRITE);
    for (int i = 200; i < N; i++) {
        pairs[i] = (narrow_pair){.n = -(int64_t)i, .null = i % 2 == 0, .opt = (int64_t)i << 40};
        set_pair(w, at, keys[i], pairs[i]);
    }
    ts_commit(w);
    if (env->mode != TS_MEMORY)
        ts_env_reopen(env, ts_std_schema, TS_STD_SCHEMA_COUNT, 1);
    r = ts_begin(env->db, COFFER_TXN_READ);
    check_pairs(r, at, keys, pairs, N);
    coffer_txn_free(r);
    assert_int_equal(verify_findings(env->db), 0);
}

/* Sets AllTypes object `key`'s int and double (in place in format 5). */
static void set_numbers(coffer_txn *w, coffer_class_id at, coffer_object_key key, int64_t n)
{
    coffer_object *o = NULL;
    assert_ok(coffer_object_get(w, at, key, &o));
    coffer_field f[] = {ts_field(AT_INT, coffer_value_int(n)), ts_field(AT_DOUBLE, coffer_value_double((double)n / 2))};
    assert_ok(coffer_object_set_fields(o, f, 2));
    coffer_object_release(o);
}

static void check_numbers(coffer_txn *txn, coffer_class_id at, coffer_object_key key, int64_t n)
{
    coffer_object *o = NULL;
    assert_ok(coffer_object_get(txn, at, key, &o));
    assert_int_equal(ts_get_int(o, AT_INT), n);
    assert_true(ts_get_double(o, AT_DOUBLE) == (double)n / 2);
    coffer_object_release(o);
}

static coffer_object_key add_numbers(coffer_txn *w, coffer_class_id at, int64_t n)
{
    coffer_field f[] = {ts_field(AT_INT, coffer_value_int(n)), ts_field(AT_DOUBLE, coffer_value_double((double)n / 2)),
                        ts_field(AT_STRING, ts_str("numbers"))};
    coffer_object *o = ts_create(w, at, f, 3);
    coffer_object_key key = coffer_object_key_of(o);
    coffer_object_release(o);
    return key;
}

/* Appends that fill a cluster write it before the commit: an update after
 * that, and nothing else, must still reach the file. */
TS_ENV_TEST(test_updates_after_a_cluster_was_written)
{
    coffer_class_id at = env->all_types;
    coffer_txn *w = ts_begin(env->db, COFFER_TXN_WRITE);
    for (int64_t i = 1; i <= 300; i++)
        assert_int_equal(add_numbers(w, at, i), i);
    set_numbers(w, at, 10, -10); /* a new object of cluster 0, written when key 255 came */
    ts_commit(w);

    w = ts_begin(env->db, COFFER_TXN_WRITE);
    set_numbers(w, at, 260, -260); /* stored, in cluster 1 ... */
    for (int64_t i = 301; i <= 600; i++) /* ... which key 511 fills and writes */
        assert_int_equal(add_numbers(w, at, i), i);
    set_numbers(w, at, 270, -270); /* stored, after the write */
    set_numbers(w, at, 400, -400); /* new, after the write */
    check_numbers(w, at, 260, -260);
    check_numbers(w, at, 270, -270);
    check_numbers(w, at, 400, -400);
    ts_commit(w);

    coffer_txn *r = ts_begin(env->db, COFFER_TXN_READ);
    for (int64_t i = 1; i <= 600; i++)
        check_numbers(r, at, (coffer_object_key)i, i == 10 || i == 260 || i == 270 || i == 400 ? -i : i);
    coffer_txn_free(r);
    assert_int_equal(verify_findings(env->db), 0);
}

/* ---- indexed properties -------------------------------------------------------- */

static uint64_t count_named(coffer_db *db, coffer_txn *txn, coffer_class_id person, const char *name)
{
    coffer_value arg = ts_str(name);
    coffer_query *q = NULL;
    assert_ok(coffer_query_compile(db, person, "name == $0", 10, &arg, 1, &q));
    uint64_t n = 0;
    assert_ok(coffer_query_count(txn, q, &n));
    coffer_query_free(q);
    return n;
}

static void person_name(int64_t id, int generation, int longer, char *out, size_t size)
{
    snprintf(out, size, "%c%s-%05lld", 'a' + generation % 26, longer ? "-and-more" : "", (long long)id);
}

TS_ENV_TEST(test_indexed_updates)
{
    coffer_class_id person = env->person;
    enum { PEOPLE = 700 };
    coffer_txn *w = ts_begin(env->db, COFFER_TXN_WRITE);
    char name[64], old[64];
    for (int64_t id = 0; id < PEOPLE; id++) {
        person_name(id, 0, 0, name, sizeof name);
        ts_add_person(w, person, id, name);
    }
    ts_commit(w);

    /* Same size (in place in format 5), then longer, then shorter again. */
    for (int generation = 1; generation <= 3; generation++) {
        w = ts_begin(env->db, COFFER_TXN_WRITE);
        for (int64_t id = 0; id < PEOPLE; id += 3) {
            coffer_value pk = coffer_value_int(id);
            coffer_object *o = NULL;
            assert_ok(coffer_object_find(w, person, &pk, &o));
            person_name(id, generation - 1, generation == 3, old, sizeof old);
            person_name(id, generation, generation == 2, name, sizeof name);
            coffer_field f[] = {ts_field(PERSON_NAME, ts_str(name)), ts_field(PERSON_AGE, coffer_value_int(generation))};
            assert_ok(coffer_object_set_fields(o, f, 2));
            coffer_object_release(o);
            assert_int_equal(count_named(env->db, w, person, name), 1);
            assert_int_equal(count_named(env->db, w, person, old), 0);
        }
        ts_commit(w);
    }
    coffer_txn *r = ts_begin(env->db, COFFER_TXN_READ);
    for (int64_t id = 0; id < PEOPLE; id++) {
        int generation = id % 3 == 0 ? 3 : 0;
        person_name(id, generation, 0, name, sizeof name);
        assert_int_equal(count_named(env->db, r, person, name), 1);
        coffer_value pk = coffer_value_int(id);
        coffer_object *o = NULL;
        assert_ok(coffer_object_find(r, person, &pk, &o));
        assert_string_equal(ts_get_string(o, PERSON_NAME, NULL), name);
        assert_int_equal(ts_get_int(o, PERSON_AGE), id % 3 == 0 ? 3 : 0);
        coffer_object_release(o);
    }
    coffer_txn_free(r);
    assert_int_equal(verify_findings(env->db), 0);
}

/* ---- the change log --------------------------------------------------------------- */

TS_ENV_TEST(test_change_log_names_the_changed_properties)
{
    coffer_class_id person = env->person;
    coffer_txn *w = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_object_key keys[300];
    for (int64_t id = 0; id < 300; id++)
        keys[id] = ts_add_person(w, person, id, "somebody");
    ts_commit(w);

    /* ages of every other person (in place), nicknames of every fifth
     * (null to a string: written whole), both for some */
    w = ts_begin(env->db, COFFER_TXN_WRITE);
    for (int64_t id = 0; id < 300; id++) {
        coffer_object *o = NULL;
        assert_ok(coffer_object_get(w, person, keys[id], &o));
        coffer_value age = coffer_value_int(id + 1000), nick = ts_str("nick");
        if (id % 2 == 0)
            assert_ok(coffer_object_set_value(o, PERSON_AGE, &age));
        if (id % 5 == 0)
            assert_ok(coffer_object_set_value(o, PERSON_NICKNAME, &nick));
        coffer_object_release(o);
    }
    uint64_t version;
    assert_ok(coffer_txn_version(w, &version));
    ts_commit(w);

    coffer_txn *r = ts_begin(env->db, COFFER_TXN_READ);
    cf_log_entry e;
    assert_ok(cf_log_read(r, version, &e));
    size_t expected = 0;
    for (int64_t id = 0; id < 300; id++)
        expected += id % 2 == 0 || id % 5 == 0;
    assert_int_equal(e.nobjects, expected);
    for (size_t i = 0; i < e.nobjects; i++) {
        const cf_log_object *o = &e.objects[i];
        assert_int_equal(o->kind, CF_LOG_MODIFY);
        int64_t id = -1;
        for (int64_t j = 0; j < 300; j++)
            if (keys[j] == o->key)
                id = j;
        assert_true(id >= 0);
        size_t want = (id % 2 == 0) + (id % 5 == 0);
        assert_int_equal(o->ncolumns, want);
        for (size_t c = 0; c < o->ncolumns; c++)
            assert_true((o->columns[c] == PERSON_AGE && id % 2 == 0) || (o->columns[c] == PERSON_NICKNAME && id % 5 == 0));
    }
    cf_log_entry_free(&e);
    coffer_txn_free(r);
}

/* ---- a writer killed while it commits updates ------------------------------------ */

#define KILL_OBJECTS 2000
#define KILL_TXNS 100000
#define COMMITS_ID (-1)

/* The value transaction t gives to the i64 and double of object `id`, and
 * whether it updates it: a deterministic function of (seed, t, id). */
static int touches(uint64_t seed, int t, int64_t id)
{
    uint64_t z = seed ^ ((uint64_t)t * 0x9E3779B97F4A7C15ull) ^ ((uint64_t)id * 0xBF58476D1CE4E5B9ull);
    z = (z ^ (z >> 31)) * 0x94D049BB133111EBull;
    return (z >> 40) % 8 == 0;
}

enum { CHILD_OPEN = 10, CHILD_BEGIN, CHILD_STEP, CHILD_COMMIT, CHILD_REPORT };

static coffer_status set_person(coffer_txn *w, coffer_class_id person, int64_t id, int t)
{
    coffer_value pk = coffer_value_int(id);
    coffer_object *o = NULL;
    coffer_status st = coffer_object_find(w, person, &pk, &o);
    coffer_field f[] = {ts_field(PERSON_AGE, coffer_value_int(t))};
    if (st == COFFER_OK)
        st = coffer_object_set_fields(o, f, 1);
    coffer_object_release(o);
    return st;
}

static void updater_child(const char *path, const uint8_t *key, uint64_t seed, int report_fd)
{
    coffer_db *db = NULL;
    if (ts_open_path(path, key, 0, ts_std_schema, TS_STD_SCHEMA_COUNT, 1, &db) != COFFER_OK)
        _exit(CHILD_OPEN);
    coffer_class_id person;
    if (coffer_db_find_class(db, "Person", &person) != COFFER_OK)
        _exit(CHILD_OPEN);
    for (int t = 1; t < KILL_TXNS; t++) {
        coffer_txn *w = NULL;
        if (coffer_txn_begin(db, COFFER_TXN_WRITE, &w) != COFFER_OK)
            _exit(CHILD_BEGIN);
        for (int64_t id = 0; id < KILL_OBJECTS; id++)
            if (touches(seed, t, id) && set_person(w, person, id, t) != COFFER_OK)
                _exit(CHILD_STEP);
        if (set_person(w, person, COMMITS_ID, t) != COFFER_OK)
            _exit(CHILD_STEP);
        if (coffer_txn_commit(w) != COFFER_OK)
            _exit(CHILD_COMMIT);
        coffer_txn_free(w);
        int32_t done = t;
        if (write(report_fd, &done, sizeof done) != (ssize_t)sizeof done)
            _exit(CHILD_REPORT);
    }
    _exit(0);
}

/* The file holds the updates of `acked` transactions, or of acked + 1. */
static void check_killed(const char *path, const uint8_t *key, uint64_t seed, int acked)
{
    coffer_db *db = NULL;
    assert_ok(ts_open_path(path, key, 0, ts_std_schema, TS_STD_SCHEMA_COUNT, 1, &db));
    assert_int_equal(verify_findings(db), 0);
    coffer_class_id person = ts_class(db, "Person");
    coffer_txn *r = ts_begin(db, COFFER_TXN_READ);
    coffer_value pk = coffer_value_int(COMMITS_ID);
    coffer_object *o = NULL;
    assert_ok(coffer_object_find(r, person, &pk, &o));
    int commits = (int)ts_get_int(o, PERSON_AGE);
    coffer_object_release(o);
    print_message("    %d commits in the file, %d reported\n", commits, acked);
    assert_true(commits >= acked && commits <= acked + 1);
    for (int64_t id = 0; id < KILL_OBJECTS; id++) {
        int last = 0;
        for (int t = 1; t <= commits; t++)
            if (touches(seed, t, id))
                last = t;
        pk = coffer_value_int(id);
        assert_ok(coffer_object_find(r, person, &pk, &o));
        assert_int_equal(ts_get_int(o, PERSON_AGE), last);
        coffer_object_release(o);
    }
    assert_int_equal(ts_count(r, person), KILL_OBJECTS + 1);
    coffer_txn_free(r);
    coffer_close(db);
}

TS_ENV_TEST(test_killed_updater)
{
    const uint8_t *key = ts_mode_key(env->mode);
    uint64_t seed = (uint64_t)time(NULL) ^ (uint64_t)getpid();
    print_message("    seed %llu\n", (unsigned long long)seed);
    ts_seed(seed);
    for (int round = 0; round < 2; round++) {
        char path[TS_PATH_MAX], name[64];
        snprintf(name, sizeof name, "updated-%d.coffer", round);
        ts_join(path, env->dir, name);
        coffer_db *db = NULL;
        assert_ok(ts_open_path(path, key, 0, ts_std_schema, TS_STD_SCHEMA_COUNT, 1, &db));
        coffer_class_id person = ts_class(db, "Person");
        coffer_txn *w = ts_begin(db, COFFER_TXN_WRITE);
        for (int64_t id = COMMITS_ID; id < KILL_OBJECTS; id++)
            ts_add_person(w, person, id, "somebody");
        ts_commit(w);
        coffer_close(db);
        uint64_t round_seed = seed + (uint64_t)round;

        ts_fork child;
        if (ts_fork_with_pipes(&child) == 0)
            updater_child(path, key, round_seed, child.send);
        int target = 2 + (int)ts_rand_below(40);
        int32_t acked = ts_kill_writer(&child, target, 0, 5000, 200);
        assert_true(acked >= target);
        print_message("    round %d: killed after %d reported commits\n", round, acked);
        check_killed(path, key, round_seed, acked);
        check_killed(path, key, round_seed, acked); /* once more, after a reopen */
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TS_TEST_ALL_MODES(test_updates_of_every_type),
        TS_TEST_ALL_MODES(test_updates_after_a_cluster_was_written),
        TS_TEST_ALL_MODES(test_updates_of_narrowed_ints),
        TS_TEST_ALL_MODES(test_indexed_updates),
        TS_TEST_ALL_MODES(test_change_log_names_the_changed_properties),
        TS_TEST_FILE_MODES_SETUP(test_killed_updater, ts_setup_empty),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
