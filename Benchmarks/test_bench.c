/*
 * test_bench.c — the harness's own checks: the data set is deterministic and
 * within its stated ranges, the oracle agrees with a brute-force count, the
 * raw LMDB engine's records round-trip and refuse damage, its index keys sort
 * in value order, a wrong answer from any engine fails verification, and the
 * list operations of Coffer and SQLite give the oracle's answer, a different
 * one for a list in another order, and refuse a link to a missing object.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <ftw.h>

#include "coffer_engine.h"
#include "lmdb_record.h"
#include "results.h"

static bench_workload small_workload(uint64_t n)
{
    return (bench_workload){.seed = 7, .n = n, .queries = 40, .scans = 5, .prefix_queries = 30, .single_writes = 9,
                            .list_length = 250};
}

static void entities_are_deterministic_and_in_range(void **state)
{
    (void)state;
    bench_workload w = small_workload(5000), other = w;
    other.seed = 8;
    bench_entity a, b;
    int saw_empty_text = 0, saw_full_text = 0, saw_empty_blob = 0, saw_full_blob = 0, same_as_other_seed = 0;
    for (uint64_t i = 0; i < w.n; i++) {
        bench_entity_make(&w, i, &a);
        bench_entity_make(&w, i, &b);
        assert_int_equal(bench_entity_hash(&a), bench_entity_hash(&b));
        assert_int_equal(a.id, (int64_t)i + 1);
        assert_true(a.text_len <= BENCH_TEXT_MAX && a.blob_len <= BENCH_TEXT_MAX);
        assert_int_equal(strlen(a.text), a.text_len);
        assert_int_equal(strlen(a.name), BENCH_NAME_LEN);
        assert_true(a.group >= 0 && (uint64_t)a.group < bench_group_count(&w));
        saw_empty_text |= a.text_len == 0;
        saw_full_text |= a.text_len == BENCH_TEXT_MAX;
        saw_empty_blob |= a.blob_len == 0;
        saw_full_blob |= a.blob_len == BENCH_TEXT_MAX;
        bench_entity_make(&other, i, &b);
        same_as_other_seed += bench_entity_hash(&a) == bench_entity_hash(&b);
    }
    assert_true(saw_empty_text && saw_full_text && saw_empty_blob && saw_full_blob);
    assert_int_equal(same_as_other_seed, 0);
}

static void hash_sees_every_field(void **state)
{
    (void)state;
    bench_workload w = small_workload(10);
    bench_entity e, changed;
    bench_entity_make(&w, 3, &e);
    uint64_t h = bench_entity_hash(&e);
    changed = e, changed.flag = !e.flag;
    assert_true(bench_entity_hash(&changed) != h);
    changed = e, changed.f = e.f + 1;
    assert_true(bench_entity_hash(&changed) != h);
    changed = e, changed.blob_len = e.blob_len ? e.blob_len - 1 : 1;
    assert_true(bench_entity_hash(&changed) != h);
    changed = e, changed.name[5] = changed.name[5] == 'a' ? 'b' : 'a';
    assert_true(bench_entity_hash(&changed) != h);
    /* Reads in order weigh by position: swapping two objects changes it. */
    bench_entity f;
    bench_entity_make(&w, 4, &f);
    assert_true(bench_check_ordered(bench_check_ordered(0, 0, &e), 1, &f) !=
                bench_check_ordered(bench_check_ordered(0, 0, &f), 1, &e));
}

static void shuffled_ids_are_a_permutation(void **state)
{
    (void)state;
    bench_workload w = small_workload(1000);
    int64_t *ids = bench_shuffled_ids(&w);
    char *seen = calloc(w.n + 1, 1);
    assert_non_null(ids);
    assert_non_null(seen);
    int in_place = 0;
    for (uint64_t i = 0; i < w.n; i++) {
        assert_true(ids[i] >= 1 && (uint64_t)ids[i] <= w.n);
        assert_false(seen[ids[i]]);
        seen[ids[i]] = 1;
        in_place += ids[i] == (int64_t)i + 1;
    }
    assert_true(in_place < 20);
    free(ids);
    free(seen);
}

/* The oracle against a brute-force evaluation of each query. */
static void oracle_matches_brute_force(void **state)
{
    (void)state;
    bench_workload w = small_workload(3000);
    uint64_t expected[BENCH_OP_COUNT], by_pk = 0, ordered = 0, eq = 0, scan = 0, contains = 0, prefix = 0, list = 0;
    assert_int_equal(bench_expected_checks(&w, expected), 0);
    assert_int_equal(bench_workload_prepare(&w), 0);
    for (uint64_t i = 0; i < w.n; i++) {
        bench_entity e = w.entities[i];
        by_pk = bench_check_add(by_pk, &e);
        bench_entity_apply_update(&w, &e);
        ordered = bench_check_ordered(ordered, i, &e);
        for (uint64_t q = 0; q < w.queries; q++)
            eq += e.group == bench_query_group(&w, q);
        for (uint64_t s = 0; s < w.scans; s++)
            scan += e.i64 > bench_scan_threshold(&w, s);
        for (uint64_t s = 0; s < w.scans; s++) {
            char needle[BENCH_NEEDLE_LEN + 1];
            bench_scan_needle(&w, s, needle);
            contains += strstr(e.text, needle) != NULL;
        }
        for (uint64_t q = 0; q < w.prefix_queries; q++) {
            char p[BENCH_PREFIX_LEN + 1];
            bench_query_prefix(&w, q, p);
            prefix += (uint64_t)bench_has_prefix(e.name, BENCH_NAME_LEN, p);
        }
    }
    assert_int_equal(expected[BENCH_OP_INSERT_BULK], w.n);
    assert_int_equal(expected[BENCH_OP_READ_BY_PK], by_pk);
    assert_int_equal(expected[BENCH_OP_READ_ALL], ordered);
    assert_int_equal(expected[BENCH_OP_QUERY_INDEXED_EQ], eq);
    assert_int_equal(expected[BENCH_OP_SCAN_FILTER], scan);
    assert_int_equal(expected[BENCH_OP_SCAN_CONTAINS], contains);
    assert_int_equal(expected[BENCH_OP_QUERY_PREFIX], prefix);
    assert_int_equal(expected[BENCH_OP_DELETE_ALL], 0);
    assert_int_equal(expected[BENCH_OP_SINGLE_WRITES], w.single_writes);
    /* The list links the single-write objects, the ones left when it runs;
     * the prepared targets are the generator's. */
    int linked[9] = {0};
    for (uint64_t i = 0; i < w.list_length; i++) {
        assert_int_equal(w.list_targets[i], bench_list_target(&w, i));
        assert_true(w.list_targets[i] > (int64_t)w.n && w.list_targets[i] <= (int64_t)(w.n + w.single_writes));
        linked[w.list_targets[i] - (int64_t)w.n - 1] = 1;
        list += bench_mix((uint64_t)w.list_targets[i]) * (2 * i + 1);
    }
    for (int k = 0; k < 9; k++)
        assert_true(linked[k]);
    assert_int_equal(expected[BENCH_OP_LIST_APPEND], w.list_length);
    assert_int_equal(expected[BENCH_OP_LIST_READ], list);
    assert_int_equal(bench_op_count(&w, BENCH_OP_LIST_APPEND), w.list_length);
    assert_int_equal(bench_op_count(&w, BENCH_OP_LIST_READ), w.list_length);
    /* Non-trivial answers: queries hit something, scans split the set. */
    assert_true(eq > 0 && prefix > 0 && scan > 0 && scan < w.scans * w.n && contains > 0 && contains < w.scans * w.n);
    /* The single-write objects follow the bulk set's ids. */
    assert_int_equal(w.entities[w.n].id, (int64_t)w.n + 1);
    bench_workload_release(&w);
}

static void lmdb_records_round_trip(void **state)
{
    (void)state;
    bench_workload w = small_workload(500);
    uint8_t rec[LMDB_RECORD_MAX];
    bench_entity e, back;
    for (uint64_t i = 0; i < w.n; i++) {
        bench_entity_make(&w, i, &e);
        size_t size = lmdb_record_encode(&e, rec);
        assert_true(size <= LMDB_RECORD_MAX);
        memset(&back, 0xAB, sizeof back);
        assert_int_equal(lmdb_record_decode(rec, size, &back), 0);
        assert_int_equal(bench_entity_hash(&back), bench_entity_hash(&e));
        int64_t i64;
        assert_int_equal(lmdb_record_i64(rec, size, &i64), 0);
        assert_int_equal(i64, e.i64);
    }
    /* The largest object fits. */
    memset(&e, 'x', sizeof e);
    e.flag = true;
    e.text_len = e.blob_len = BENCH_TEXT_MAX;
    e.text[BENCH_TEXT_MAX] = e.name[BENCH_NAME_LEN] = '\0';
    size_t size = lmdb_record_encode(&e, rec);
    assert_int_equal(lmdb_record_decode(rec, size, &back), 0);
    assert_int_equal(bench_entity_hash(&back), bench_entity_hash(&e));
}

static void lmdb_records_refuse_damage(void **state)
{
    (void)state;
    bench_workload w = small_workload(5);
    uint8_t rec[LMDB_RECORD_MAX];
    bench_entity e, back;
    int64_t i64;
    bench_entity_make(&w, 2, &e);
    size_t size = lmdb_record_encode(&e, rec);
    assert_int_equal(lmdb_record_decode(rec, size - 1, &back), -1);   /* truncated */
    assert_int_equal(lmdb_record_decode(rec, 5, &back), -1);          /* shorter than the header */
    rec[0] = 2;                                                       /* unknown version */
    assert_int_equal(lmdb_record_decode(rec, size, &back), -1);
    assert_int_equal(lmdb_record_i64(rec, size, &i64), -1);
    rec[0] = 1;
    rec[6 + 2 * 3] = 0xFF, rec[6 + 2 * 3 + 1] = 0xFF;                 /* i64 ends past the record */
    assert_int_equal(lmdb_record_i64(rec, size, &i64), -1);
    assert_int_equal(lmdb_record_decode(rec, size, &back), -1);
}

static int compare_keys(const uint8_t *a, size_t an, const uint8_t *b, size_t bn)
{
    int c = memcmp(a, b, an < bn ? an : bn);
    return c ? c : (an > bn) - (an < bn);
}

static void lmdb_index_keys_sort_by_value(void **state)
{
    (void)state;
    static const int64_t values[] = {INT64_MIN, -5, -1, 0, 3, 1000, INT64_MAX};
    uint8_t a[LMDB_INDEX_KEY_MAX], b[LMDB_INDEX_KEY_MAX];
    for (size_t i = 0; i + 1 < sizeof values / sizeof values[0]; i++) {
        size_t an = lmdb_index_int_key(LMDB_COLUMN_GROUP, values[i], 99, a);
        size_t bn = lmdb_index_int_key(LMDB_COLUMN_GROUP, values[i + 1], 1, b);
        assert_true(compare_keys(a, an, b, bn) < 0);
        assert_int_equal(lmdb_index_object_key(a, an), 99);
    }
    /* A name's entries start with the prefix of every prefix of the name. */
    size_t kn = lmdb_index_name_key("abcdef", 6, 42, a);
    size_t pn = lmdb_index_name_prefix("ab", 2, b);
    assert_int_equal(memcmp(a, b, pn), 0);
    pn = lmdb_index_name_prefix("ac", 2, b);
    assert_true(memcmp(a, b, pn) < 0);
    assert_int_equal(lmdb_index_object_key(a, kn), 42);
    /* Equal values in different columns never share a prefix. */
    size_t gn = lmdb_index_int_key(LMDB_COLUMN_GROUP, 7, 0, a);
    size_t in = lmdb_index_int_key(LMDB_COLUMN_ID, 7, 0, b);
    assert_int_equal(gn, in);
    assert_true(memcmp(a, b, gn) != 0);
}

/* Two engines that agree with the oracle, except where a test changes it. */
static void two_results(bench_result r[2], const uint64_t expected[BENCH_OP_COUNT])
{
    memset(r, 0, 2 * sizeof r[0]);
    r[0].engine = &bench_engine_lmdb;
    r[1].engine = &bench_engine_sqlite;
    for (int k = 0; k < 2; k++) {
        r[k].completed = 1;
        for (int op = 0; op < BENCH_OP_COUNT; op++) {
            r[k].supported[op] = 1;
            r[k].check[op] = expected[op];
            r[k].seconds[op] = 0.5 * (k + 1);
        }
    }
}

/* A 100-object workload, its oracle and two engines' results that agree
 * with it. */
typedef struct agreeing_pair {
    bench_workload w;
    uint64_t expected[BENCH_OP_COUNT];
    bench_result r[2];
} agreeing_pair;

static void agreeing_results(agreeing_pair *t)
{
    t->w = small_workload(100);
    assert_int_equal(bench_expected_checks(&t->w, t->expected), 0);
    two_results(t->r, t->expected);
}

static void verification_names_a_wrong_answer(void **state)
{
    (void)state;
    agreeing_pair t;
    char *text = NULL;
    size_t len = 0;
    agreeing_results(&t);

    FILE *err = open_memstream(&text, &len);
    assert_int_equal(bench_verify(t.r, 2, t.expected, err), 0);
    fclose(err);
    assert_int_equal(len, 0);
    free(text);

    t.r[1].check[BENCH_OP_SCAN_FILTER] += 1;
    t.r[0].check[BENCH_OP_READ_ALL] ^= 1;
    /* The list read back with its first two (different) links swapped. */
    uint64_t swapped = 0, second = 1;
    while (bench_list_target(&t.w, second) == bench_list_target(&t.w, 0))
        second++;
    for (uint64_t i = 0; i < t.w.list_length; i++)
        swapped = bench_check_list(swapped, i, bench_list_target(&t.w, i == 0 ? second : i == second ? 0 : i));
    t.r[1].check[BENCH_OP_LIST_READ] = swapped;
    err = open_memstream(&text, &len);
    assert_int_equal(bench_verify(t.r, 2, t.expected, err), 3);
    fclose(err);
    assert_non_null(strstr(text, "sqlite, unindexed_filter_scan"));
    assert_non_null(strstr(text, "lmdb, read_all_in_order"));
    assert_non_null(strstr(text, "sqlite, list_read_in_order"));
    free(text);

    /* An operation an engine does not support is not checked. */
    two_results(t.r, t.expected);
    t.r[0].supported[BENCH_OP_DELETE_ALL] = 0;
    t.r[0].check[BENCH_OP_DELETE_ALL] = 12345;
    err = open_memstream(&text, &len);
    assert_int_equal(bench_verify(t.r, 2, t.expected, err), 0);
    fclose(err);
    free(text);
}

static void ratios_divide_rates(void **state)
{
    (void)state;
    agreeing_pair t;
    agreeing_results(&t);
    /* lmdb took 0.5 s, sqlite 1 s: lmdb is twice as fast. */
    assert_true(bench_ratio(t.r, 2, &t.w, BENCH_OP_INSERT_BULK, "lmdb", "sqlite") == 2.0);
    assert_true(bench_ops_per_second(&t.r[0], &t.w, BENCH_OP_INSERT_BULK) == 200.0);
    /* A missing engine or operation gives no ratio. */
    assert_true(bench_ratio(t.r, 2, &t.w, BENCH_OP_INSERT_BULK, "coffer", "sqlite") == 0);
    t.r[1].supported[BENCH_OP_UPDATE_ALL] = 0;
    assert_true(bench_ratio(t.r, 2, &t.w, BENCH_OP_UPDATE_ALL, "lmdb", "sqlite") == 0);
}

static void repeated_runs_keep_the_fastest(void **state)
{
    (void)state;
    agreeing_pair t;
    agreeing_results(&t); /* t.r[0] took 0.5 s per operation, t.r[1] 1 s */
    t.r[0].peak_rss_bytes = 100;
    t.r[1].peak_rss_bytes = 300;
    t.r[1].seconds[BENCH_OP_READ_ALL] = 0.25;
    bench_result best = t.r[0];
    bench_keep_fastest(&best, &t.r[1]);
    assert_true(best.seconds[BENCH_OP_READ_ALL] == 0.25);
    assert_true(best.seconds[BENCH_OP_INSERT_BULK] == 0.5);
    assert_int_equal(best.peak_rss_bytes, 300);
    /* A failed run wins, so that its error is not lost. */
    t.r[1].completed = 0;
    snprintf(t.r[1].error, sizeof t.r[1].error, "update_all: disk full");
    bench_keep_fastest(&best, &t.r[1]);
    assert_int_equal(best.completed, 0);
    assert_string_equal(best.error, "update_all: disk full");
}

static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)st, (void)type, (void)ftw;
    return remove(path);
}

/* Runs the single-object writes (the objects the list links) and then the
 * list operations of `engine` on a fresh store; returns the list
 * operations' status, with their checks in `append` and `read`. */
static int run_list_ops(const bench_engine *engine, const bench_workload *w, uint64_t *append, uint64_t *read)
{
    char dir[] = "/tmp/bench-selftest-XXXXXX";
    void *state;
    uint64_t written = 0;
    assert_non_null(mkdtemp(dir));
    assert_int_equal(engine->open(dir, &state), 0);
    assert_int_equal(engine->ops[BENCH_OP_SINGLE_WRITES](state, w, &written), 0);
    assert_int_equal(written, w->single_writes);
    *append = *read = 0;
    assert_int_equal(engine->prepare(state, w, BENCH_OP_LIST_APPEND), 0);
    int rc = engine->ops[BENCH_OP_LIST_APPEND](state, w, append);
    rc |= engine->ops[BENCH_OP_LIST_READ](state, w, read);
    engine->close(state);
    nftw(dir, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
    return rc;
}

static void list_ops_answer_like_the_oracle(const bench_engine *engine)
{
    bench_workload w = small_workload(50);
    w.list_length = 2 * BENCH_LIST_BATCH + 500; /* three transactions, the last one partial */
    uint64_t expected[BENCH_OP_COUNT], append, read;
    assert_int_equal(bench_expected_checks(&w, expected), 0);
    assert_int_equal(bench_workload_prepare(&w), 0);
    assert_int_equal(run_list_ops(engine, &w, &append, &read), 0);
    assert_int_equal(append, expected[BENCH_OP_LIST_APPEND]);
    assert_int_equal(read, expected[BENCH_OP_LIST_READ]);

    /* The same links in another order read back to another answer. */
    uint64_t last = w.list_length - 1;
    while (w.list_targets[last] == w.list_targets[0])
        last--;
    int64_t t = w.list_targets[0];
    w.list_targets[0] = w.list_targets[last];
    w.list_targets[last] = t;
    assert_int_equal(run_list_ops(engine, &w, &append, &read), 0);
    assert_int_equal(append, expected[BENCH_OP_LIST_APPEND]);
    assert_true(read != expected[BENCH_OP_LIST_READ]);
    w.list_targets[last] = w.list_targets[0];
    w.list_targets[0] = t;

    /* A link to an object that does not exist fails its transaction; the
     * transactions committed before it keep their links. */
    w.list_targets[BENCH_LIST_BATCH + 10] = (int64_t)(w.n + w.single_writes + 1);
    assert_int_equal(run_list_ops(engine, &w, &append, &read), -1);
    assert_true(strlen(bench_failure()) > 0);
    uint64_t first_batch = 0;
    for (uint64_t i = 0; i < BENCH_LIST_BATCH; i++)
        first_batch = bench_check_list(first_batch, i, w.list_targets[i]);
    assert_int_equal(read, first_batch);
    bench_workload_release(&w);
}

static void coffer_list_ops_answer_like_the_oracle(void **state)
{
    (void)state;
    list_ops_answer_like_the_oracle(&bench_engine_coffer);
    assert_non_null(strstr(bench_failure(), "appending a link"));
}

/* Until the list operations are prepared, Entity is no link target, so
 * that delete_all clears it in one step; the list refuses to run then. */
static void coffer_adds_the_list_class_when_prepared(void **state)
{
    (void)state;
    char dir[] = "/tmp/bench-selftest-XXXXXX";
    void *engine_state;
    coffer_class_id cls;
    uint64_t check = 0;
    bench_workload w = small_workload(50);
    assert_int_equal(bench_workload_prepare(&w), 0);
    assert_non_null(mkdtemp(dir));
    assert_int_equal(bench_engine_coffer.open(dir, &engine_state), 0);
    coffer_bench *b = engine_state;
    assert_int_equal(coffer_db_find_class(b->db, "ListOwner", &cls), COFFER_ERR_NOT_FOUND);
    assert_int_equal(bench_engine_coffer.ops[BENCH_OP_LIST_APPEND](engine_state, &w, &check), -1);
    assert_non_null(strstr(bench_failure(), "not prepared"));
    assert_int_equal(bench_engine_coffer.ops[BENCH_OP_LIST_READ](engine_state, &w, &check), -1);
    assert_non_null(strstr(bench_failure(), "no list to read"));
    assert_int_equal(bench_engine_coffer.ops[BENCH_OP_SINGLE_WRITES](engine_state, &w, &check), 0);
    assert_int_equal(bench_engine_coffer.prepare(engine_state, &w, BENCH_OP_LIST_APPEND), 0);
    assert_int_equal(coffer_db_find_class(b->db, "ListOwner", &cls), COFFER_OK);
    /* The objects written before the schema grew are still there. */
    uint64_t count = 0;
    coffer_txn *txn;
    assert_int_equal(coffer_txn_begin(b->db, COFFER_TXN_READ, &txn), COFFER_OK);
    assert_int_equal(coffer_class_count(txn, b->cls, &count), COFFER_OK);
    coffer_txn_free(txn);
    assert_int_equal(count, w.single_writes);
    bench_engine_coffer.close(engine_state);
    nftw(dir, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
    bench_workload_release(&w);
}

static void coffer_encrypted_list_ops_answer_like_the_oracle(void **state)
{
    (void)state;
    list_ops_answer_like_the_oracle(&bench_engine_coffer_encrypted);
}

static void sqlite_list_ops_answer_like_the_oracle(void **state)
{
    (void)state;
    list_ops_answer_like_the_oracle(&bench_engine_sqlite);
    assert_non_null(strstr(bench_failure(), "FOREIGN KEY constraint failed"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(entities_are_deterministic_and_in_range),
        cmocka_unit_test(hash_sees_every_field),
        cmocka_unit_test(shuffled_ids_are_a_permutation),
        cmocka_unit_test(oracle_matches_brute_force),
        cmocka_unit_test(lmdb_records_round_trip),
        cmocka_unit_test(lmdb_records_refuse_damage),
        cmocka_unit_test(lmdb_index_keys_sort_by_value),
        cmocka_unit_test(verification_names_a_wrong_answer),
        cmocka_unit_test(ratios_divide_rates),
        cmocka_unit_test(repeated_runs_keep_the_fastest),
        cmocka_unit_test(coffer_list_ops_answer_like_the_oracle),
        cmocka_unit_test(coffer_adds_the_list_class_when_prepared),
        cmocka_unit_test(coffer_encrypted_list_ops_answer_like_the_oracle),
        cmocka_unit_test(sqlite_list_ops_answer_like_the_oracle),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
