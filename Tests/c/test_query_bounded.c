/* test_query_bounded.c — queries whose cost has bounds: nested SUBQUERYs
 * deep enough to take forever if every level re-evaluated the ones inside
 * it (their counts must match an independent computation), coffer_interrupt()
 * from another thread stopping a query that would not end, per-query
 * timeouts, and the handle working normally after either. */
#define _GNU_SOURCE
#include "test_support.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Class "Node": a value and a list of links to other nodes. */
enum { N_V = 0, N_NEXT, N_COUNT };

static const coffer_property_schema node_props[N_COUNT] = {
    {.name = "v", .type = COFFER_TYPE_INT},
    {.name = "next", .type = COFFER_TYPE_LINK, .collection = COFFER_COLLECTION_LIST, .object_class = "Node"},
};

static const coffer_class_schema node_schema[] = {
    {.name = "Node", .properties = node_props, .property_count = N_COUNT},
};

static coffer_class_id NODE;

static int setup_nodes(void **state)
{
    static const char *const names[] = {"Node"};
    static coffer_class_id *const ids[] = {&NODE};
    return ts_setup_schema_classes(state, node_schema, 1, 1, names, ids);
}

#define MAX_NODES 400
#define FANOUT 3

/* The graph, as the test itself knows it: node i has value v[i] and links
 * to next[i][0..nnext[i]). Objects are created in order, so node i has the
 * i-th key. */
typedef struct graph {
    int n;
    int64_t v[MAX_NODES];
    int next[MAX_NODES][FANOUT];
    int nnext[MAX_NODES];
    coffer_object_key key[MAX_NODES];
} graph;

static graph G;

/* Node i: value i % 10 (9 only on every 37th node), no links on every 5th
 * node, else links to three others spread over the graph. */
static void make_graph(ts_env *env, int n)
{
    G.n = n;
    for (int i = 0; i < n; i++) {
        G.v[i] = i % 37 == 0 ? 9 : i % 9;
        G.nnext[i] = i % 5 == 0 ? 0 : FANOUT;
        G.next[i][0] = (i * 7 + 1) % n;
        G.next[i][1] = (i * 13 + 5) % n;
        G.next[i][2] = (i + 1) % n;
    }
    coffer_txn *txn = ts_begin(env->db, COFFER_TXN_WRITE);
    for (int i = 0; i < n; i++) {
        coffer_field f = ts_field(N_V, coffer_value_int(G.v[i]));
        coffer_object *o = ts_create(txn, NODE, &f, 1);
        G.key[i] = coffer_object_key_of(o);
        coffer_object_release(o);
    }
    for (int i = 0; i < n; i++) {
        coffer_object *o;
        coffer_list *l;
        assert_ok(coffer_object_get(txn, NODE, G.key[i], &o));
        assert_ok(coffer_object_get_list(o, N_NEXT, &l));
        for (int k = 0; k < G.nnext[i]; k++) {
            coffer_value link = coffer_value_link(NODE, G.key[G.next[i][k]]);
            assert_ok(coffer_list_append(l, &link));
        }
        coffer_list_release(l);
        coffer_object_release(o);
    }
    ts_commit(txn);
}

/* Appends printf-style text to a growing string. */
static void append(char **s, size_t *len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void append(char **s, size_t *len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    *s = realloc(*s, *len + (size_t)n + 1);
    assert_non_null(*s);
    va_start(ap, fmt);
    vsnprintf(*s + *len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    *len += (size_t)n;
}

/* SUBQUERY(next, $a0, SUBQUERY($a0.next, $a1, ... <innermost>
 * ...).@count > 0).@count > 0, `depth` levels deep. With innermost
 * "$a<depth-1>.v == 9": some path of exactly `depth` links ends at a node
 * whose value is 9. */
static char *chain_query(int depth, const char *innermost)
{
    char *s = NULL;
    size_t len = 0;
    for (int k = 0; k < depth; k++) {
        if (k == 0)
            append(&s, &len, "SUBQUERY(next, $a0, ");
        else
            append(&s, &len, "SUBQUERY($a%d.next, $a%d, ", k - 1, k);
    }
    append(&s, &len, "%s", innermost);
    for (int k = 0; k < depth; k++)
        append(&s, &len, ").@count > 0");
    return s;
}

/* The matches of chain_query(depth, "$a<depth-1>.v == 9"), computed from
 * the graph: reach[y] says whether a path of the remaining length from y
 * ends at a 9, level by level from the innermost. */
static int expected_chain(int depth, int *match)
{
    int reach[MAX_NODES], prev[MAX_NODES];
    for (int y = 0; y < G.n; y++)
        reach[y] = G.v[y] == 9;
    for (int level = depth - 2; level >= 0; level--) {
        memcpy(prev, reach, sizeof prev);
        for (int y = 0; y < G.n; y++) {
            reach[y] = 0;
            for (int k = 0; k < G.nnext[y]; k++)
                reach[y] |= prev[G.next[y][k]];
        }
    }
    int count = 0;
    for (int r = 0; r < G.n; r++) {
        match[r] = 0;
        for (int k = 0; k < G.nnext[r]; k++)
            match[r] |= reach[G.next[r][k]];
        count += match[r];
    }
    return count;
}

/* Compiles `text` and runs it in `txn`, checking that as many rows come
 * back (`*count`) as `want` flags nodes. The caller frees the results, then
 * `*q`. */
static coffer_results *run_counted(coffer_db *db, coffer_txn *txn, const char *text, const int *want,
                                   coffer_query **q, uint64_t *count)
{
    assert_ok(coffer_query_compile(db, NODE, text, SIZE_MAX, NULL, 0, q));
    coffer_results *r;
    assert_ok(coffer_query_run(txn, *q, &r));
    assert_ok(coffer_results_count(r, count));
    int nwant = 0;
    for (int i = 0; i < G.n; i++)
        nwant += want[i];
    assert_int_equal(*count, nwant);
    return r;
}

/* Runs `text` and checks that exactly the nodes flagged in `want` match. */
static void check_matches(ts_env *env, const char *text, const int *want)
{
    coffer_txn *txn = ts_begin(env->db, COFFER_TXN_READ);
    coffer_query *q;
    uint64_t count;
    coffer_results *r = run_counted(env->db, txn, text, want, &q, &count);
    for (uint64_t i = 0, at = 0; i < count; i++) {
        coffer_object_key key;
        assert_ok(coffer_results_key(r, i, &key));
        while (at < (uint64_t)G.n && !want[at])
            at++; /* results are in key order, as the nodes were created */
        assert_true(at < (uint64_t)G.n);
        assert_int_equal(key, G.key[at]);
        at++;
    }
    coffer_results_free(r);
    coffer_txn_free(txn);
    coffer_query_free(q);
}

/* Depth 50 over 300 nodes: each level re-evaluated per element would cost
 * 3^50 visits; with each nested count computed once per node it is about
 * 50 * 300 * 3. The TIMEOUT of this test bounds it. */
TS_ENV_TEST(test_deep_subquery_completes)
{
    make_graph(env, 300);
    int want[MAX_NODES];
    int nwant = expected_chain(50, want);
    assert_true(nwant > 0 && nwant < G.n); /* the fixture tells matches apart */
    char *text = chain_query(50, "$a49.v == 9");
    check_matches(env, text, want);
    free(text);
}

/* Nested counts that read outer variables and the object itself are kept
 * apart by those values: compared with a direct computation. */
TS_ENV_TEST(test_nested_subquery_outer_variables)
{
    make_graph(env, 60);
    const char *text = "SUBQUERY(next, $a, SUBQUERY($a.next, $b, SUBQUERY($b.next, $c, $c.v > $a.v AND $c.v != v)"
                       ".@count > 0).@count > 0).@count >= 2";
    int want[MAX_NODES];
    int nwant = 0;
    for (int r = 0; r < G.n; r++) {
        int count = 0;
        for (int i = 0; i < G.nnext[r]; i++) {
            int a = G.next[r][i], found = 0;
            for (int j = 0; j < G.nnext[a] && !found; j++) {
                int b = G.next[a][j];
                for (int k = 0; k < G.nnext[b] && !found; k++) {
                    int c = G.next[b][k];
                    found = G.v[c] > G.v[a] && G.v[c] != G.v[r];
                }
            }
            count += found;
        }
        want[r] = count >= 2;
        nwant += want[r];
    }
    assert_true(nwant > 0 && nwant < G.n);
    check_matches(env, text, want);

    /* A nested count that depends on the object the query tests. */
    const char *by_root = "SUBQUERY(next, $a, SUBQUERY($a.next, $b, $b.v == v).@count > 0).@count > 0";
    for (int r = 0; r < G.n; r++) {
        want[r] = 0;
        for (int i = 0; i < G.nnext[r]; i++)
            for (int j = 0; j < G.nnext[G.next[r][i]]; j++)
                want[r] |= G.v[G.next[G.next[r][i]][j]] == G.v[r];
    }
    check_matches(env, by_root, want);
}

/* A graph of 40 nodes and a query over it no machine finishes: 20 nested
 * levels whose innermost condition reads every outer variable, so no two
 * counts share a key (3^20 paths from each node). */
static coffer_query *endless_query(ts_env *env)
{
    make_graph(env, 40);
    char inner[2048];
    size_t len = 0;
    for (int k = 0; k < 19; k++)
        len += (size_t)snprintf(inner + len, sizeof inner - len, "%s$a19.v != $a%d.v", k ? " OR " : "", k);
    char *text = chain_query(20, inner);
    coffer_query *q;
    assert_ok(coffer_query_compile(env->db, NODE, text, SIZE_MAX, NULL, 0, &q));
    free(text);
    return q;
}

typedef struct interrupter {
    coffer_db *db;
    int done; /* set by the querying thread when its query returned */
    int calls;
    int failed; /* a call did not return COFFER_OK (cmocka asserts only on the test's thread) */
} interrupter;

static void *interrupt_until_done(void *arg)
{
    interrupter *it = arg;
    struct timespec pause = {0, 5 * 1000 * 1000};
    while (!__atomic_load_n(&it->done, __ATOMIC_ACQUIRE)) {
        if (coffer_interrupt(it->db) != COFFER_OK)
            it->failed = 1;
        it->calls++;
        nanosleep(&pause, NULL);
    }
    return NULL;
}

TS_ENV_TEST(test_interrupt_from_another_thread)
{
    coffer_query *q = endless_query(env);

    /* An interrupt with no query running changes nothing later. */
    assert_ok(coffer_interrupt(env->db));

    coffer_txn *txn = ts_begin(env->db, COFFER_TXN_READ);
    interrupter it = {.db = env->db};
    pthread_t thread;
    assert_int_equal(pthread_create(&thread, NULL, interrupt_until_done, &it), 0);
    coffer_results *r = NULL;
    coffer_status st = coffer_query_run(txn, q, &r);
    __atomic_store_n(&it.done, 1, __ATOMIC_RELEASE);
    pthread_join(thread, NULL);
    assert_status(st, COFFER_ERR_INTERRUPTED);
    assert_error_contains("interrupted by coffer_interrupt()");
    assert_null(r);
    assert_true(it.calls > 0);
    assert_false(it.failed);
    assert_string_equal(coffer_strerror(COFFER_ERR_INTERRUPTED), "query interrupted");

    /* The transaction and the handle go on as before. */
    int want[MAX_NODES];
    expected_chain(3, want);
    char *quick = chain_query(3, "$a2.v == 9");
    coffer_query *q2;
    uint64_t count;
    r = run_counted(env->db, txn, quick, want, &q2, &count);
    coffer_results_free(r);
    coffer_query_free(q2);
    coffer_txn_free(txn);
    check_matches(env, quick, want);
    free(quick);
    coffer_query_free(q);
}

TS_ENV_TEST(test_timeout_stops_a_query)
{
    coffer_query *q = endless_query(env);
    assert_int_equal(coffer_query_timeout(q), 0);
    assert_ok(coffer_query_set_timeout(q, 50));
    assert_int_equal(coffer_query_timeout(q), 50);

    coffer_txn *txn = ts_begin(env->db, COFFER_TXN_READ);
    coffer_results *r = NULL;
    assert_status(coffer_query_run(txn, q, &r), COFFER_ERR_INTERRUPTED);
    assert_error_contains("timeout of 50 ms");
    assert_null(r);

    /* A rebound query keeps the timeout; filtering other results with it
     * is bounded the same way. */
    coffer_query *again;
    assert_ok(coffer_query_rebind(q, NULL, 0, &again));
    assert_int_equal(coffer_query_timeout(again), 50);
    coffer_results *all;
    assert_ok(coffer_results_all(txn, NODE, &all));
    assert_status(coffer_results_filter(all, again, &r), COFFER_ERR_INTERRUPTED);
    assert_error_contains("timeout of 50 ms");
    coffer_results_free(all);
    coffer_query_free(again);

    /* A quick query with a timeout finishes as usual. */
    coffer_query *quick;
    assert_ok(coffer_query_compile(env->db, NODE, "v == 9", SIZE_MAX, NULL, 0, &quick));
    assert_ok(coffer_query_set_timeout(quick, 60000));
    assert_ok(coffer_query_run(txn, quick, &r));
    uint64_t count;
    assert_ok(coffer_results_count(r, &count));
    assert_int_equal(count, 2); /* nodes 0 and 37 */
    coffer_results_free(r);
    coffer_query_free(quick);
    coffer_txn_free(txn);
    coffer_query_free(q);
}

static void test_bad_handles(void **state)
{
    (void)state;
    assert_status(coffer_interrupt(NULL), COFFER_ERR_INVALID_ARGUMENT);
    assert_status(coffer_query_set_timeout(NULL, 5), COFFER_ERR_INVALID_ARGUMENT);
    assert_int_equal(coffer_query_timeout(NULL), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TS_TEST_ALL_MODES_SETUP(test_deep_subquery_completes, setup_nodes),
        TS_TEST_MODE_SETUP(test_nested_subquery_outer_variables, setup_nodes, ts_mode_plain, "plain"),
        TS_TEST_MODE_SETUP(test_interrupt_from_another_thread, setup_nodes, ts_mode_plain, "plain"),
        TS_TEST_MODE_SETUP(test_timeout_stops_a_query, setup_nodes, ts_mode_encrypted, "encrypted"),
        cmocka_unit_test(test_bad_handles),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
