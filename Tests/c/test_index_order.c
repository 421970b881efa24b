/*
 * test_index_order.c — index entries a write transaction adds are written
 * at its commit in key order (storage/index_pending.h), or as soon as a
 * read or a removal reaches their column, and the answers never show it.
 *
 * One random history per storage mode (plain, encrypted: format 6's sealed
 * trees, in memory): creates with increasing and random primary keys,
 * updates of indexed values (of objects created earlier in the same
 * transaction too), deletes, clears of the class, aborted transactions; a
 * model of the objects answers, and the database must agree on equality,
 * prefix and range counts and lookups by primary key, inside the write
 * transaction (its own uncommitted entries), after its commit and after a
 * reopen. coffer_db_verify() finds every index entry where it belongs and
 * the sealed trees' nodes within their bounds. The fill: a bulk insert of
 * 20,000 objects with three indexed columns leaves the index pages full
 * (a bound on the index's bytes per entry, page counts being
 * deterministic), and an encrypted file's sealed nodes each fit one page.
 * Sorted runs (each column's entries of one commit, written to a sealed
 * tree one leaf at a time): entries before the first stored key and after
 * the last, many in one leaf's range (splits inside a run), values indexed
 * already, scattered over every leaf, against a model again.
 */
#include "test_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const coffer_property_schema item_props[] = {
    {.name = "id", .type = COFFER_TYPE_INT, .flags = COFFER_PROPERTY_PRIMARY_KEY},
    {.name = "group", .type = COFFER_TYPE_INT, .flags = COFFER_PROPERTY_INDEXED},
    {.name = "name", .type = COFFER_TYPE_STRING, .flags = COFFER_PROPERTY_INDEXED},
    {.name = "other", .type = COFFER_TYPE_INT},
};
static const coffer_class_schema schema[] = {{.name = "Item", .properties = item_props, .property_count = 4}};
enum { P_ID, P_GROUP, P_NAME, P_OTHER };

#define MAX_IDS 4096
#define GROUPS 37

/* The model: per primary key (0 .. MAX_IDS - 1), whether the object lives,
 * its group and its name (3 letters of "abc"). */
typedef struct model {
    uint8_t live[MAX_IDS];
    int64_t group[MAX_IDS];
    char name[MAX_IDS][4];
} model;

static void random_name(char out[4])
{
    for (int i = 0; i < 3; i++)
        out[i] = (char)('a' + ts_rand_below(3));
    out[3] = 0;
}

static coffer_db *query_db; /* the handle the queries are compiled for */

static uint64_t db_count(coffer_txn *txn, coffer_class_id cls, const char *text, const coffer_value *args, size_t n)
{
    coffer_query *q;
    assert_ok(coffer_query_compile(query_db, cls, text, SIZE_MAX, args, n, &q));
    uint64_t count;
    assert_ok(coffer_query_count(txn, q, &count));
    coffer_query_free(q);
    return count;
}

/* Compares every answer the index gives with the model's. */
/* The object of primary key `id` is found when it lives, with its group. */
static void check_lookup(coffer_txn *txn, coffer_class_id cls, int id, int live, int64_t group)
{
    coffer_value pk = coffer_value_int(id);
    coffer_object *o = NULL;
    coffer_status st = coffer_object_find(txn, cls, &pk, &o);
    if (!live) {
        assert_status(st, COFFER_ERR_NOT_FOUND);
        return;
    }
    assert_ok(st);
    assert_int_equal(ts_get_int(o, P_GROUP), group);
    coffer_object_release(o);
}

static void check_against(coffer_txn *txn, coffer_class_id cls, const model *m)
{
    uint64_t live = 0, by_group[GROUPS] = {0}, by_prefix[9] = {0}, below[GROUPS + 1] = {0};
    for (int id = 0; id < MAX_IDS; id++) {
        if (!m->live[id])
            continue;
        live++;
        by_group[m->group[id]]++;
        by_prefix[(m->name[id][0] - 'a') * 3 + (m->name[id][1] - 'a')]++;
        for (int g = (int)m->group[id] + 1; g <= GROUPS; g++)
            below[g]++;
    }
    assert_int_equal(ts_count(txn, cls), live);
    for (int g = 0; g < GROUPS; g += 3) {
        coffer_value a = coffer_value_int(g);
        assert_int_equal(db_count(txn, cls, "group == $0", &a, 1), by_group[g]);
        assert_int_equal(db_count(txn, cls, "group < $0", &a, 1), below[g]);
    }
    for (int p = 0; p < 9; p++) {
        char prefix[3] = {(char)('a' + p / 3), (char)('a' + p % 3), 0};
        coffer_value a = ts_str(prefix);
        assert_int_equal(db_count(txn, cls, "name BEGINSWITH $0", &a, 1), by_prefix[p]);
    }
    for (int id = 0; id < MAX_IDS; id += 7) {
        check_lookup(txn, cls, id, m->live[id], m->group[id]);
    }
}

static void check_sound(coffer_db *db)
{
    coffer_verify_report *r;
    assert_ok(coffer_db_verify(db, &r));
    for (size_t i = 0; i < coffer_verify_report_count(r); i++)
        print_message("finding: %s\n", coffer_verify_report_message(r, i));
    assert_int_equal(coffer_verify_report_count(r), 0);
    coffer_verify_report_free(r);
}

static void create(coffer_txn *txn, coffer_class_id cls, model *m, int id)
{
    m->live[id] = 1;
    m->group[id] = (int64_t)ts_rand_below(GROUPS);
    random_name(m->name[id]);
    coffer_field f[4] = {
        ts_field(P_ID, coffer_value_int(id)),
        ts_field(P_GROUP, coffer_value_int(m->group[id])),
        ts_field(P_NAME, ts_str(m->name[id])),
        ts_field(P_OTHER, coffer_value_int(id * 3)),
    };
    coffer_object_release(ts_create(txn, cls, f, 4));
}

static coffer_object *find(coffer_txn *txn, coffer_class_id cls, int id)
{
    coffer_value pk = coffer_value_int(id);
    coffer_object *o;
    assert_ok(coffer_object_find(txn, cls, &pk, &o));
    return o;
}

/* One transaction of random operations on the model's objects; checks
 * the answers inside it now and then. `ids` is the next increasing id. */
static void random_transaction(coffer_txn *txn, coffer_class_id cls, model *m, int *next_id, int ops)
{
    for (int i = 0; i < ops; i++) {
        unsigned what = (unsigned)ts_rand_below(100);
        int id = (int)ts_rand_below(MAX_IDS);
        if (what < 45 && *next_id < MAX_IDS) { /* appended ids, as a bulk insert makes */
            while (*next_id < MAX_IDS && m->live[*next_id])
                ++*next_id;
            if (*next_id < MAX_IDS)
                create(txn, cls, m, (*next_id)++);
        } else if (what < 60 && !m->live[id]) {
            create(txn, cls, m, id);
        } else if (what < 85 && m->live[id]) {
            coffer_object *o = find(txn, cls, id);
            char old[4];
            memcpy(old, m->name[id], 4);
            m->group[id] = (int64_t)ts_rand_below(GROUPS);
            random_name(m->name[id]);
            coffer_field f[2] = {ts_field(P_GROUP, coffer_value_int(m->group[id])), ts_field(P_NAME, ts_str(m->name[id]))};
            size_t nf = ts_rand_below(2) ? 2 : 1;
            assert_ok(coffer_object_set_fields(o, f, nf));
            if (nf == 1)
                memcpy(m->name[id], old, 4); /* only the group changed */
            coffer_object_release(o);
        } else if (what < 97 && m->live[id]) {
            coffer_object *o = find(txn, cls, id);
            assert_ok(coffer_object_delete(o));
            coffer_object_release(o);
            m->live[id] = 0;
        } else if (what >= 99) {
            check_against(txn, cls, m);
        }
    }
}

/* Every live object reads back as the model has it. */
static void check_objects(coffer_txn *txn, coffer_class_id cls, const model *m)
{
    for (int id = 0; id < MAX_IDS; id++) {
        if (!m->live[id])
            continue;
        coffer_object *o = find(txn, cls, id);
        size_t len;
        const char *name = ts_get_string(o, P_NAME, &len);
        assert_int_equal(len, 3);
        assert_memory_equal(name, m->name[id], 3);
        assert_int_equal(ts_get_int(o, P_GROUP), m->group[id]);
        coffer_object_release(o);
    }
}

TS_ENV_TEST(test_random_history_matches_model)
{
    model *m = calloc(1, sizeof *m), *saved = calloc(1, sizeof *saved);
    assert_non_null(m);
    assert_non_null(saved);
    query_db = env->db;
    ts_seed(0x5EED0 + (uint64_t)env->mode);
    coffer_class_id cls = ts_class(env->db, "Item");
    int next_id = 0;
    for (int round = 0; round < 8; round++) {
        *saved = *m;
        int saved_next = next_id;
        coffer_txn *txn = ts_begin(env->db, COFFER_TXN_WRITE);
        random_transaction(txn, cls, m, &next_id, round == 0 ? 2500 : 600);
        check_objects(txn, cls, m);
        check_against(txn, cls, m);
        if (round == 5) {
            /* Aborted: none of its entries may remain. */
            assert_ok(coffer_txn_abort(txn));
            coffer_txn_free(txn);
            *m = *saved;
            next_id = saved_next;
        } else if (round == 3) {
            /* A clear after creates and updates of the same transaction,
             * then a few more creates: only those stay. */
            assert_ok(coffer_class_clear(txn, cls));
            memset(m, 0, sizeof *m);
            for (int id = 100; id < 140; id++)
                create(txn, cls, m, id);
            check_against(txn, cls, m);
            ts_commit(txn);
        } else {
            ts_commit(txn);
        }
        coffer_txn *r = ts_begin(env->db, COFFER_TXN_READ);
        check_against(r, cls, m);
        assert_ok(coffer_txn_abort(r));
        coffer_txn_free(r);
    }
    check_sound(env->db);
    coffer_db *keep = ts_env_keep(env);
    ts_env_reopen(env, schema, 1, 1);
    query_db = env->db;
    coffer_txn *r = ts_begin(env->db, COFFER_TXN_READ);
    check_against(r, ts_class(env->db, "Item"), m);
    assert_ok(coffer_txn_abort(r));
    coffer_txn_free(r);
    if (keep)
        coffer_close(keep);
    free(m);
    free(saved);
}

/* A duplicate primary key is still refused inside the transaction that
 * created the first object, before anything of it is written. */
TS_ENV_TEST(test_uniqueness_within_transaction)
{
    coffer_class_id cls = ts_class(env->db, "Item");
    query_db = env->db;
    coffer_txn *txn = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_field f[3] = {ts_field(P_ID, coffer_value_int(7)), ts_field(P_GROUP, coffer_value_int(1)),
                         ts_field(P_NAME, ts_str("abc"))};
    coffer_object_release(ts_create(txn, cls, f, 3));
    coffer_object *o = NULL;
    assert_status(coffer_object_create(txn, cls, f, 3, COFFER_UPDATE_ERROR, &o), COFFER_ERR_PRIMARY_KEY_EXISTS);
    assert_null(o);
    /* The failed create left no entry of its group or name behind. */
    coffer_value g = coffer_value_int(1), n = ts_str("abc");
    assert_int_equal(db_count(txn, cls, "group == $0", &g, 1), 1);
    assert_int_equal(db_count(txn, cls, "name == $0", &n, 1), 1);
    ts_commit(txn);
    coffer_txn *r = ts_begin(env->db, COFFER_TXN_READ);
    assert_int_equal(db_count(r, cls, "group == $0", &g, 1), 1);
    assert_int_equal(db_count(r, cls, "name == $0", &n, 1), 1);
    assert_ok(coffer_txn_abort(r));
    coffer_txn_free(r);
    check_sound(env->db);
}

/* ---- sorted runs across leaves ---------------------------------------------- */

#define RUN_IDS 12000
#define RUN_GROUPS 60

/* The model of the runs test: per primary key, whether it lives, its
 * group and its name ("n" and 4 digits, few distinct: many objects share
 * a name and a group, so a commit adds entries of values indexed already). */
typedef struct run_model {
    uint8_t live[RUN_IDS];
    int64_t group[RUN_IDS];
    int name[RUN_IDS];
} run_model;

static void run_name(char out[6], int n) { snprintf(out, 6, "n%04d", n); }

static void run_create(coffer_txn *txn, coffer_class_id cls, run_model *m, int id, int64_t group, int name)
{
    m->live[id] = 1;
    m->group[id] = group;
    m->name[id] = name;
    char text[6];
    run_name(text, name);
    coffer_field f[4] = {
        ts_field(P_ID, coffer_value_int(id)),
        ts_field(P_GROUP, coffer_value_int(group)),
        ts_field(P_NAME, ts_str(text)),
        ts_field(P_OTHER, coffer_value_int(id)),
    };
    coffer_object_release(ts_create(txn, cls, f, 4));
}

/* Every group's count, ranges of groups, names by value and by prefix,
 * and lookups by primary key (every live one, and absent ones around them). */
static void run_check(coffer_txn *txn, coffer_class_id cls, const run_model *m)
{
    uint64_t live = 0, by_group[RUN_GROUPS] = {0}, by_name[100] = {0}, by_prefix[10] = {0};
    for (int id = 0; id < RUN_IDS; id++) {
        if (!m->live[id])
            continue;
        live++;
        by_group[m->group[id]]++;
        by_name[m->name[id]]++;
        by_prefix[m->name[id] / 10]++;
    }
    assert_int_equal(ts_count(txn, cls), live);
    uint64_t below = 0;
    for (int g = 0; g < RUN_GROUPS; g++) {
        coffer_value a = coffer_value_int(g);
        assert_int_equal(db_count(txn, cls, "group == $0", &a, 1), by_group[g]);
        assert_int_equal(db_count(txn, cls, "group < $0", &a, 1), below);
        below += by_group[g];
    }
    for (int n = 0; n < 100; n++) {
        char text[6];
        run_name(text, n);
        coffer_value a = ts_str(text);
        assert_int_equal(db_count(txn, cls, "name == $0", &a, 1), by_name[n]);
    }
    for (int p = 0; p < 10; p++) {
        char prefix[5];
        snprintf(prefix, sizeof prefix, "n00%d", p);
        coffer_value a = ts_str(prefix);
        assert_int_equal(db_count(txn, cls, "name BEGINSWITH $0", &a, 1), by_prefix[p]);
    }
    for (int id = 0; id < RUN_IDS; id++) {
        check_lookup(txn, cls, id, m->live[id], m->group[id]);
    }
}

/* Commits one transaction, checking the answers inside it, after it and
 * (verify) the index's structure. */
static void run_commit(ts_env *env, coffer_txn *txn, coffer_class_id cls, const run_model *m)
{
    run_check(txn, cls, m);
    ts_commit(txn);
    coffer_txn *r = ts_begin(env->db, COFFER_TXN_READ);
    run_check(r, cls, m);
    assert_ok(coffer_txn_abort(r));
    coffer_txn_free(r);
    check_sound(env->db);
}

/* The entries a commit writes as one sorted run: every kind of place the
 * run reaches in a tree of many leaves and several levels. */
TS_ENV_TEST(test_sorted_runs_across_leaves)
{
    run_model *m = calloc(1, sizeof *m);
    assert_non_null(m);
    query_db = env->db;
    ts_seed(0x2A11 + (uint64_t)env->mode);
    coffer_class_id cls = ts_class(env->db, "Item");

    /* A base of every fourth id from 4,000 to 7,996 in few groups and
     * names: each column's entries fill many leaves. */
    coffer_txn *txn = ts_begin(env->db, COFFER_TXN_WRITE);
    for (int id = 4000; id < 8000; id += 4)
        run_create(txn, cls, m, id, id % RUN_GROUPS, (id / 4) % 100);
    run_commit(env, txn, cls, m);

    /* Entries below the first stored key and above the last, in one run:
     * ids 0..999 and 9,000..9,999, values indexed already (groups and
     * names the base has) and new ones. */
    txn = ts_begin(env->db, COFFER_TXN_WRITE);
    for (int id = 0; id < 1000; id++)
        run_create(txn, cls, m, id, id % 7, id % 100);
    for (int id = 9000; id < 10000; id++)
        run_create(txn, cls, m, id, RUN_GROUPS - 1 - id % 3, 99 - id % 5);
    run_commit(env, txn, cls, m);

    /* Many entries in one leaf's range: the primary keys between two of
     * the base's neighbours fill that leaf past its size several times
     * over (splits in the middle of a run, not at its end), and group 17
     * and name n0042, held by base objects, take 1,500 more entries each
     * between their existing ones. */
    txn = ts_begin(env->db, COFFER_TXN_WRITE);
    for (int id = 5001; id < 7000; id++)
        if (id % 4)
            run_create(txn, cls, m, id, id % 3 ? 17 : (int64_t)ts_rand_below(RUN_GROUPS),
                       id % 2 ? 42 : (int)ts_rand_below(100));
    run_commit(env, txn, cls, m);

    /* Scattered: random ids across the whole tree (every leaf gets a few),
     * deletes and updates that reach the same columns in between (their
     * removals write the pending entries early), then an abort. */
    for (int round = 0; round < 3; round++) {
        run_model saved = *m;
        txn = ts_begin(env->db, COFFER_TXN_WRITE);
        for (int k = 0; k < 1500; k++) {
            int id = (int)ts_rand_below(RUN_IDS);
            if (!m->live[id]) {
                run_create(txn, cls, m, id, (int64_t)ts_rand_below(RUN_GROUPS), (int)ts_rand_below(100));
            } else if (ts_rand_below(4) == 0) {
                coffer_object *o = find(txn, cls, id);
                assert_ok(coffer_object_delete(o));
                coffer_object_release(o);
                m->live[id] = 0;
            } else if (ts_rand_below(3) == 0) {
                coffer_object *o = find(txn, cls, id);
                m->group[id] = (int64_t)ts_rand_below(RUN_GROUPS);
                coffer_field f = ts_field(P_GROUP, coffer_value_int(m->group[id]));
                assert_ok(coffer_object_set_fields(o, &f, 1));
                coffer_object_release(o);
            }
        }
        if (round == 1) {
            run_check(txn, cls, m);
            assert_ok(coffer_txn_abort(txn));
            coffer_txn_free(txn);
            *m = saved;
            continue;
        }
        run_commit(env, txn, cls, m);
    }

    coffer_db *keep = ts_env_keep(env);
    ts_env_reopen(env, schema, 1, 1);
    query_db = env->db;
    coffer_txn *r = ts_begin(env->db, COFFER_TXN_READ);
    run_check(r, ts_class(env->db, "Item"), m);
    assert_ok(coffer_txn_abort(r));
    coffer_txn_free(r);
    if (keep)
        coffer_close(keep);
    free(m);
}

/* ---- fill ------------------------------------------------------------------- */

#define FILL_OBJECTS 20000

TS_ENV_TEST(test_bulk_insert_fills_index_pages)
{
    coffer_class_id cls = ts_class(env->db, "Item");
    ts_seed(42);
    coffer_txn *txn = ts_begin(env->db, COFFER_TXN_WRITE);
    for (int id = 1; id <= FILL_OBJECTS; id++) {
        char name[7];
        for (int j = 0; j < 6; j++)
            name[j] = (char)('a' + ts_rand_below(26));
        name[6] = 0;
        coffer_field f[4] = {
            ts_field(P_ID, coffer_value_int(id)),
            ts_field(P_GROUP, coffer_value_int((int64_t)ts_rand_below(FILL_OBJECTS / 10))),
            ts_field(P_NAME, ts_str(name)),
            ts_field(P_OTHER, coffer_value_int(id)),
        };
        coffer_object_release(ts_create(txn, cls, f, 4));
    }
    ts_commit(txn);
    coffer_class_stats cs;
    assert_ok(coffer_db_class_stats(env->db, cls, &cs));
    assert_int_equal(cs.index_entries, 3 * FILL_OBJECTS);
    double per_entry = (double)cs.index_bytes / (double)cs.index_entries;
    print_message("    %s: %.1f index bytes per entry\n", ts_mode_name(env->mode), per_entry);
    if (env->mode == TS_ENCRYPTED && ts_storage_format() < 5) {
        /* Encrypted files of format 4 keep keyed hashes, not sealed trees:
         * the bound below is the sealed nodes'. */
        check_sound(env->db);
        return;
    }
    /* Entries of 19 (id, group) and 18 (name) bytes. Plain: with LMDB's
     * 8-byte node head and 2-byte pointer each, 28.7 bytes at full pages;
     * this takes 29.9 with the branch pages, entries added one by one
     * took 41.8 (leaves half to 70% full). Sealed nodes: 2 bytes of length
     * each, nodes of one page three quarters full or more: 28.7, where
     * entries added one by one took 35.8 (nodes split at the middle). */
    assert_true(per_entry <= (env->mode == TS_ENCRYPTED ? 30.0 : 31.0));
    check_sound(env->db);
}

static int setup(void **state) { return ts_setup_schema(state, schema, 1); }

int main(void)
{
    const struct CMUnitTest tests[] = {
        TS_TEST_ALL_MODES_SETUP(test_random_history_matches_model, setup),
        TS_TEST_ALL_MODES_SETUP(test_uniqueness_within_transaction, setup),
        TS_TEST_ALL_MODES_SETUP(test_sorted_runs_across_leaves, setup),
        TS_TEST_FILE_MODES_SETUP(test_bulk_insert_fills_index_pages, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
