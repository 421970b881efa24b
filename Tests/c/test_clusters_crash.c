/*
 * test_clusters_crash.c — file format 5 (objects in clusters) killed in the
 * middle of writing. A child process runs write transactions that insert,
 * update and delete objects across clusters (some objects large enough to
 * be stored outside their cluster) and reports each commit to the parent;
 * the parent kills it with SIGKILL at a random moment, then opens the file:
 * coffer_db_verify() finds nothing, and the file holds exactly the objects
 * of the reported commits (or of one more, finished before the kill but not
 * yet reported), each with its values, none of a later transaction.
 *
 * The transactions are a deterministic function of their number, so the
 * parent rebuilds what each commit left by running the same steps on a
 * model. Plain and encrypted files, a few rounds each; COFFER_CRASH_ROUNDS
 * asks for more rounds, COFFER_CRASH_SEED for a given seed.
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

#define P(n, t, f) {.name = (n), .type = (t), .flags = (f)}
static const coffer_property_schema item_props[] = {
    P("id", COFFER_TYPE_INT, COFFER_PROPERTY_PRIMARY_KEY),
    P("version", COFFER_TYPE_INT, COFFER_PROPERTY_INDEXED),
    P("name", COFFER_TYPE_STRING, 0),
    P("blob", COFFER_TYPE_BINARY, COFFER_PROPERTY_OPTIONAL),
};
static const coffer_class_schema schema[] = {{.name = "Item", .properties = item_props, .property_count = 4}};
enum { I_ID, I_VERSION, I_NAME, I_BLOB };

/* Object id COMMITS holds, in `version`, the number of transactions committed. */
#define COMMITS_ID (-1)
#define MAX_TXNS 4000
#define MAX_NEW 48
#define MAX_IDS (MAX_TXNS * MAX_NEW)
#define LARGE_BLOB 3000 /* above the largest object a cluster holds inline */

/* What the committed transactions left: per id, whether it exists, its
 * version and the size of its blob. */
typedef struct model {
    uint8_t *present;
    int32_t *version;
    uint16_t *blob;
    int64_t next_id;
    int64_t count;
} model;

static void model_init(model *m)
{
    m->present = calloc(MAX_IDS, 1);
    m->version = calloc(MAX_IDS, sizeof *m->version);
    m->blob = calloc(MAX_IDS, sizeof *m->blob);
    m->next_id = 0;
    m->count = 0;
}

static void model_free(model *m)
{
    free(m->present);
    free(m->version);
    free(m->blob);
}

/* splitmix64: the steps of transaction t come from (seed, t) alone. */
static uint64_t mix(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static uint16_t blob_size(uint64_t *s)
{
    uint64_t r = mix(s) % 10;
    return r < 4 ? 0 : r < 9 ? (uint16_t)(1 + mix(s) % 200) : (uint16_t)(LARGE_BLOB + mix(s) % 2000);
}

/* One step of a transaction. */
typedef enum { STEP_CREATE, STEP_UPDATE, STEP_DELETE } step_kind;
typedef struct step {
    step_kind kind;
    int64_t id;
    int32_t version;
    uint16_t blob;
} step;

/* The steps of transaction t on model m (which they change, as the commit
 * would): up to MAX_NEW objects created, some updated, some deleted. */
static size_t txn_steps(uint64_t seed, int t, model *m, step *out)
{
    uint64_t s = seed ^ ((uint64_t)t * 0xD6E8FEB86659FD93ull);
    size_t n = 0;
    int creates = 1 + (int)(mix(&s) % MAX_NEW);
    for (int i = 0; i < creates; i++) {
        int64_t id = m->next_id++;
        step st = {STEP_CREATE, id, t, blob_size(&s)};
        m->present[id] = 1;
        m->version[id] = st.version;
        m->blob[id] = st.blob;
        m->count++;
        out[n++] = st;
    }
    int others = (int)(mix(&s) % 24);
    for (int i = 0; i < others; i++) {
        int64_t id = (int64_t)(mix(&s) % (uint64_t)m->next_id);
        if (!m->present[id])
            continue;
        if (mix(&s) % 3 == 0) {
            m->present[id] = 0;
            m->count--;
            out[n++] = (step){STEP_DELETE, id, 0, 0};
        } else {
            uint16_t blob = blob_size(&s);
            m->version[id] = t;
            m->blob[id] = blob;
            out[n++] = (step){STEP_UPDATE, id, t, blob};
        }
    }
    return n;
}

static void name_of(int64_t id, int32_t version, char *out, size_t size)
{
    snprintf(out, size, "item %lld version %d", (long long)id, (int)version);
}

static uint8_t blob_byte(int64_t id, int32_t version, size_t i) { return (uint8_t)(id * 7 + version + i); }

static void fill_blob(uint8_t *b, int64_t id, int32_t version, size_t n)
{
    for (size_t i = 0; i < n; i++)
        b[i] = blob_byte(id, version, i);
}

/* ---- the writer (a child: no cmocka assertions, exit codes) ------------- */

enum { CHILD_OPEN = 10, CHILD_CLASS, CHILD_BEGIN, CHILD_STEP, CHILD_COMMIT, CHILD_REPORT };

static coffer_status write_step(coffer_txn *w, coffer_class_id cls, const step *s, uint8_t *blob)
{
    coffer_value pk = coffer_value_int(s->id);
    coffer_object *o = NULL;
    coffer_status st;
    if (s->kind == STEP_DELETE) {
        st = coffer_object_find(w, cls, &pk, &o);
        if (st == COFFER_OK)
            st = coffer_object_delete(o);
        coffer_object_release(o);
        return st;
    }
    char name[64];
    name_of(s->id, s->version, name, sizeof name);
    fill_blob(blob, s->id, s->version, s->blob);
    coffer_field f[] = {ts_field(I_ID, pk), ts_field(I_VERSION, coffer_value_int(s->version)),
                        ts_field(I_NAME, ts_str(name)),
                        ts_field(I_BLOB, s->blob ? coffer_value_binary(blob, s->blob) : coffer_value_null())};
    if (s->kind == STEP_CREATE) {
        st = coffer_object_create(w, cls, f, 4, COFFER_UPDATE_ERROR, &o);
    } else {
        st = coffer_object_find(w, cls, &pk, &o);
        if (st == COFFER_OK)
            st = coffer_object_set_fields(o, f + 1, 3);
    }
    coffer_object_release(o);
    return st;
}

static coffer_status write_commits(coffer_txn *w, coffer_class_id cls, int commits)
{
    coffer_value pk = coffer_value_int(COMMITS_ID);
    coffer_field f[] = {ts_field(I_ID, pk), ts_field(I_VERSION, coffer_value_int(commits)),
                        ts_field(I_NAME, ts_str("commits"))};
    coffer_object *o = NULL;
    coffer_status st = coffer_object_create(w, cls, f, 3, COFFER_UPDATE_MODIFIED, &o);
    coffer_object_release(o);
    return st;
}

static void writer_child(const char *path, const uint8_t *key, uint64_t seed, int report_fd)
{
    coffer_db *db = NULL;
    if (ts_open_path(path, key, 0, schema, 1, 1, &db) != COFFER_OK)
        _exit(CHILD_OPEN);
    coffer_class_id cls;
    if (coffer_db_find_class(db, "Item", &cls) != COFFER_OK)
        _exit(CHILD_CLASS);
    model m;
    model_init(&m);
    static step steps[MAX_NEW + 24];
    static uint8_t blob[LARGE_BLOB + 2000];
    for (int t = 0; t < MAX_TXNS; t++) {
        coffer_txn *w = NULL;
        if (coffer_txn_begin(db, COFFER_TXN_WRITE, &w) != COFFER_OK)
            _exit(CHILD_BEGIN);
        size_t n = txn_steps(seed, t, &m, steps);
        for (size_t i = 0; i < n; i++)
            if (write_step(w, cls, &steps[i], blob) != COFFER_OK)
                _exit(CHILD_STEP);
        if (write_commits(w, cls, t + 1) != COFFER_OK)
            _exit(CHILD_STEP);
        if (coffer_txn_commit(w) != COFFER_OK)
            _exit(CHILD_COMMIT);
        coffer_txn_free(w);
        int32_t done = t + 1;
        if (write(report_fd, &done, sizeof done) != (ssize_t)sizeof done)
            _exit(CHILD_REPORT);
    }
    _exit(0);
}

/* ---- the parent ---------------------------------------------------------- */

/* The file holds the objects of `acked` commits, or of acked + 1. */
static void check_file(const char *path, const uint8_t *key, uint64_t seed, int acked)
{
    coffer_db *db = NULL;
    assert_ok(ts_open_path(path, key, 0, schema, 1, 1, &db));
    coffer_verify_report *report = NULL;
    assert_ok(coffer_db_verify(db, &report));
    for (size_t i = 0; i < coffer_verify_report_count(report); i++)
        print_error("    finding: %s\n", coffer_verify_report_message(report, i));
    assert_int_equal(coffer_verify_report_count(report), 0);
    coffer_verify_report_free(report);

    coffer_class_id cls = ts_class(db, "Item");
    coffer_txn *r = ts_begin(db, COFFER_TXN_READ);
    coffer_value pk = coffer_value_int(COMMITS_ID);
    coffer_object *o = NULL;
    int64_t commits = 0;
    coffer_status st = coffer_object_find(r, cls, &pk, &o);
    if (st == COFFER_OK)
        commits = ts_get_int(o, I_VERSION);
    else
        assert_int_equal(st, COFFER_ERR_NOT_FOUND);
    coffer_object_release(o);
    print_message("    %lld commits in the file, %d reported\n", (long long)commits, acked);
    assert_true(commits >= acked && commits <= acked + 1);

    model m;
    model_init(&m);
    static step steps[MAX_NEW + 24];
    for (int t = 0; t < commits; t++)
        txn_steps(seed, t, &m, steps);
    uint64_t count = 0;
    assert_ok(coffer_class_count(r, cls, &count));
    assert_int_equal(count, (uint64_t)m.count + (commits > 0));

    /* every object of the model, by primary key, with its values */
    static uint8_t expect[LARGE_BLOB + 2000];
    for (int64_t id = 0; id < m.next_id; id++) {
        pk = coffer_value_int(id);
        st = coffer_object_find(r, cls, &pk, &o);
        if (!m.present[id]) {
            assert_int_equal(st, COFFER_ERR_NOT_FOUND);
            continue;
        }
        assert_ok(st);
        assert_int_equal(ts_get_int(o, I_VERSION), m.version[id]);
        char name[64];
        name_of(id, m.version[id], name, sizeof name);
        assert_string_equal(ts_get_string(o, I_NAME, NULL), name);
        if (!m.blob[id]) {
            assert_true(ts_get_is_null(o, I_BLOB));
        } else {
            size_t size = 0;
            const void *b = ts_get_binary(o, I_BLOB, &size);
            assert_int_equal(size, m.blob[id]);
            fill_blob(expect, id, m.version[id], size);
            assert_memory_equal(b, expect, size);
        }
        coffer_object_release(o);
    }
    /* and nothing else, in key order */
    coffer_iter *it = NULL;
    assert_ok(coffer_class_iterate(r, cls, &it));
    uint64_t seen = 0;
    while (ts_next(it, &o)) {
        int64_t id = ts_get_int(o, I_ID);
        assert_true(id == COMMITS_ID || (id >= 0 && id < m.next_id && m.present[id]));
        seen++;
    }
    coffer_iter_free(it);
    assert_int_equal(seen, count);
    coffer_txn_free(r);
    model_free(&m);

    /* the write lock was recovered: the file takes a new commit */
    coffer_txn *w = ts_begin(db, COFFER_TXN_WRITE);
    assert_ok(write_commits(w, cls, (int)commits));
    ts_commit(w);
    coffer_close(db);
}

static int env_int(const char *name, int fallback)
{
    const char *v = getenv(name);
    return v && *v ? atoi(v) : fallback;
}

TS_ENV_TEST(test_killed_writer)
{
    const uint8_t *key = ts_mode_key(env->mode);
    const char *seed_text = getenv("COFFER_CRASH_SEED");
    uint64_t seed = seed_text && *seed_text ? strtoull(seed_text, NULL, 10) : (uint64_t)time(NULL) ^ (uint64_t)getpid();
    int rounds = env_int("COFFER_CRASH_ROUNDS", 3);
    print_message("    %d rounds, seed %llu (COFFER_CRASH_SEED)\n", rounds, (unsigned long long)seed);
    ts_seed(seed);
    for (int round = 0; round < rounds; round++) {
        char path[TS_PATH_MAX], name[64];
        snprintf(name, sizeof name, "killed-%d.coffer", round);
        ts_join(path, env->dir, name);
        coffer_db *db = NULL;
        assert_ok(ts_open_path(path, key, 0, schema, 1, 1, &db));
        coffer_close(db);
        uint64_t round_seed = seed + (uint64_t)round;

        ts_fork child;
        if (ts_fork_with_pipes(&child) == 0)
            writer_child(path, key, round_seed, child.send);
        int target = 2 + (int)ts_rand_below(100);
        int32_t acked = ts_kill_writer(&child, target, 0, 5000, 200);
        assert_true(acked >= target);
        print_message("    round %d: killed after %d reported commits\n", round, acked);
        check_file(path, key, round_seed, acked);
        check_file(path, key, round_seed, acked); /* once more, after a reopen */
    }
}

int main(void)
{
    /* This suite is about file format 5, whatever the run's default. */
    setenv("COFFER_TEST_STORAGE_FORMAT", "5", 1);
    const struct CMUnitTest tests[] = {
        TS_TEST_FILE_MODES_SETUP(test_killed_writer, ts_setup_empty),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
