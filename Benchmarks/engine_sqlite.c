/*
 * engine_sqlite.c — SQLite as a user would tune it for this job: one table
 * with the same columns, indexes on `group` and `name`, WAL journal,
 * synchronous=FULL (every commit durable, as in LMDB), prepared statements
 * and the same transaction boundaries as the other engines. The list is a
 * table of (owner, position, target) rows keyed by owner and position, its
 * target a foreign key of entity.
 */
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

#include "engine.h"

enum {
    ST_BEGIN, ST_COMMIT, ST_INSERT, ST_SELECT_ID, ST_UPDATE, ST_SELECT_ALL,
    ST_COUNT_GROUP, ST_COUNT_I64, ST_COUNT_TEXT, ST_COUNT_PREFIX, ST_DELETE_ALL, ST_COUNT,
    ST_LIST_END, ST_LIST_INSERT, ST_LIST_COUNT, ST_LIST_READ, ST_N
};

/* The one list of the list operations. */
#define LIST_OWNER 1

static const char *const statement_sql[ST_N] = {
    [ST_BEGIN] = "BEGIN",
    [ST_COMMIT] = "COMMIT",
    [ST_INSERT] = ("INSERT INTO entity (id, flag, i32, i64, f, d, text, blob, grp, name) "
                   "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)"),
    [ST_SELECT_ID] = "SELECT id, flag, i32, i64, f, d, text, blob, grp, name FROM entity WHERE id = ?1",
    [ST_UPDATE] = "UPDATE entity SET i64 = ?2, d = ?3 WHERE id = ?1",
    [ST_SELECT_ALL] = "SELECT id, flag, i32, i64, f, d, text, blob, grp, name FROM entity ORDER BY id",
    [ST_COUNT_GROUP] = "SELECT count(*) FROM entity WHERE grp = ?1",
    [ST_COUNT_I64] = "SELECT count(*) FROM entity WHERE i64 > ?1",
    /* instr() is a case-sensitive substring test, as CONTAINS is (LIKE is not). */
    [ST_COUNT_TEXT] = "SELECT count(*) FROM entity WHERE instr(text, ?1) > 0",
    /* GLOB is case-sensitive like a prefix match and can use the index. */
    [ST_COUNT_PREFIX] = "SELECT count(*) FROM entity WHERE name GLOB ?1",
    [ST_DELETE_ALL] = "DELETE FROM entity",
    [ST_COUNT] = "SELECT count(*) FROM entity",
    /* Where the list ends: read once per write transaction, as Coffer reads
     * the list's header once per transaction. */
    [ST_LIST_END] = "SELECT coalesce(max(position) + 1, 0) FROM list_item WHERE owner = ?1",
    [ST_LIST_INSERT] = "INSERT INTO list_item (owner, position, target) VALUES (?1, ?2, ?3)",
    [ST_LIST_COUNT] = "SELECT count(*) FROM list_item WHERE owner = ?1",
    /* Following each link to its object, as Coffer opens each linked object. */
    [ST_LIST_READ] = ("SELECT entity.id FROM list_item JOIN entity ON entity.id = list_item.target"
                      " WHERE list_item.owner = ?1 ORDER BY list_item.position"),
};

typedef struct sqlite_bench {
    sqlite3 *db;
    sqlite3_stmt *st[ST_N];
} sqlite_bench;

static int fail(sqlite_bench *b, const char *what)
{
    return bench_fail("%s: %s", what, sqlite3_errmsg(b->db));
}

/* Steps a statement that returns no row, then resets it. */
static int exec(sqlite_bench *b, int which)
{
    int rc = sqlite3_step(b->st[which]);
    sqlite3_reset(b->st[which]);
    return rc == SQLITE_DONE ? 0 : fail(b, statement_sql[which]);
}

/* Steps a statement returning one integer. */
static int exec_count(sqlite_bench *b, int which, uint64_t *count)
{
    sqlite3_stmt *s = b->st[which];
    int rc = sqlite3_step(s);
    if (rc == SQLITE_ROW)
        *count += (uint64_t)sqlite3_column_int64(s, 0);
    sqlite3_reset(s);
    return rc == SQLITE_ROW ? 0 : fail(b, statement_sql[which]);
}

static int sqlite_open(const char *dir, void **state)
{
    static sqlite_bench bench;
    static const char setup[] =
        "PRAGMA journal_mode = WAL;"
        "PRAGMA synchronous = FULL;"
        /* Room for the whole 100,000-object set, as LMDB's map gives. */
        "PRAGMA cache_size = -65536;"
        "CREATE TABLE entity (id INTEGER PRIMARY KEY, flag INTEGER NOT NULL, i32 INTEGER NOT NULL,"
        " i64 INTEGER NOT NULL, f REAL NOT NULL, d REAL NOT NULL, text TEXT NOT NULL, blob BLOB NOT NULL,"
        " grp INTEGER NOT NULL, name TEXT NOT NULL);"
        "CREATE INDEX entity_grp ON entity (grp);"
        "CREATE INDEX entity_name ON entity (name);"
        "CREATE TABLE list_item (owner INTEGER NOT NULL, position INTEGER NOT NULL,"
        " target INTEGER NOT NULL REFERENCES entity (id), PRIMARY KEY (owner, position)) WITHOUT ROWID;";
    char path[4096];
    snprintf(path, sizeof path, "%s/bench.sqlite", dir);
    memset(&bench, 0, sizeof bench);
    if (sqlite3_open_v2(path, &bench.db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK ||
        sqlite3_exec(bench.db, setup, NULL, NULL, NULL) != SQLITE_OK) {
        fail(&bench, "opening the SQLite database");
        sqlite3_close(bench.db);
        return -1;
    }
    for (int i = 0; i < ST_N; i++)
        if (sqlite3_prepare_v3(bench.db, statement_sql[i], -1, SQLITE_PREPARE_PERSISTENT, &bench.st[i], NULL)) {
            fail(&bench, statement_sql[i]);
            for (int j = 0; j < i; j++)
                sqlite3_finalize(bench.st[j]);
            sqlite3_close(bench.db);
            return -1;
        }
    *state = &bench;
    return 0;
}

static void sqlite_close(void *state)
{
    sqlite_bench *b = state;
    for (int i = 0; i < ST_N; i++)
        sqlite3_finalize(b->st[i]);
    sqlite3_close(b->db);
}

/* Ends a failed write transaction so that nothing of it stays. */
static int rollback(sqlite_bench *b)
{
    sqlite3_exec(b->db, "ROLLBACK", NULL, NULL, NULL);
    return -1;
}

static int insert_one(sqlite_bench *b, const bench_entity *e)
{
    sqlite3_stmt *s = b->st[ST_INSERT];
    /* A non-NULL pointer: an empty blob must not become NULL. */
    static const uint8_t no_bytes[1];
    sqlite3_bind_int64(s, 1, e->id);
    sqlite3_bind_int(s, 2, e->flag);
    sqlite3_bind_int(s, 3, e->i32);
    sqlite3_bind_int64(s, 4, e->i64);
    sqlite3_bind_double(s, 5, e->f);
    sqlite3_bind_double(s, 6, e->d);
    sqlite3_bind_text(s, 7, e->text, e->text_len, SQLITE_STATIC);
    sqlite3_bind_blob(s, 8, e->blob_len ? (const void *)e->blob : no_bytes, e->blob_len, SQLITE_STATIC);
    sqlite3_bind_int64(s, 9, e->group);
    sqlite3_bind_text(s, 10, e->name, BENCH_NAME_LEN, SQLITE_STATIC);
    return exec(b, ST_INSERT);
}

static int insert_objects(sqlite_bench *b, const bench_entity *e, uint64_t count)
{
    if (exec(b, ST_BEGIN))
        return -1;
    for (uint64_t i = 0; i < count; i++)
        if (insert_one(b, &e[i]))
            return rollback(b);
    return exec(b, ST_COMMIT) ? rollback(b) : 0;
}

static int count_objects(sqlite_bench *b, uint64_t *count)
{
    *count = 0;
    return exec_count(b, ST_COUNT, count);
}

/* Reads the current row of `s` (the column order of ST_SELECT_*). */
static int read_row(sqlite3_stmt *s, bench_entity *e)
{
    int text_len = sqlite3_column_bytes(s, 6), blob_len, name_len;
    const unsigned char *text = sqlite3_column_text(s, 6);
    const void *blob = sqlite3_column_blob(s, 7);
    blob_len = sqlite3_column_bytes(s, 7);
    const unsigned char *name = sqlite3_column_text(s, 9);
    name_len = sqlite3_column_bytes(s, 9);
    e->id = sqlite3_column_int64(s, 0);
    if (text_len > BENCH_TEXT_MAX || blob_len > BENCH_TEXT_MAX || name_len != BENCH_NAME_LEN || (text_len && !text) ||
        (blob_len && !blob) || !name)
        return bench_fail("row %lld: a text or blob column has the wrong size", (long long)e->id);
    e->flag = sqlite3_column_int(s, 1) != 0;
    e->i32 = sqlite3_column_int(s, 2);
    e->i64 = sqlite3_column_int64(s, 3);
    e->f = (float)sqlite3_column_double(s, 4);
    e->d = sqlite3_column_double(s, 5);
    e->text_len = (uint8_t)text_len;
    if (text_len) /* SQLite gives NULL for empty values */
        memcpy(e->text, text, (size_t)text_len);
    e->text[text_len] = '\0';
    e->blob_len = (uint8_t)blob_len;
    if (blob_len)
        memcpy(e->blob, blob, (size_t)blob_len);
    e->group = sqlite3_column_int64(s, 8);
    memcpy(e->name, name, BENCH_NAME_LEN);
    e->name[BENCH_NAME_LEN] = '\0';
    return 0;
}

static int insert_bulk(void *state, const bench_workload *w, uint64_t *check)
{
    return insert_objects(state, w->entities, w->n) || count_objects(state, check);
}

static int read_by_pk(void *state, const bench_workload *w, uint64_t *check)
{
    sqlite_bench *b = state;
    sqlite3_stmt *s = b->st[ST_SELECT_ID];
    bench_entity e;
    /* One read transaction, as the other engines read from one snapshot. */
    if (exec(b, ST_BEGIN))
        return -1;
    for (uint64_t i = 0; i < w->n; i++) {
        sqlite3_bind_int64(s, 1, w->order[i]);
        int rc = sqlite3_step(s);
        if (rc != SQLITE_ROW) {
            fail(b, rc == SQLITE_DONE ? "no row with that id" : "reading by id");
            sqlite3_reset(s);
            return rollback(b);
        }
        int bad = read_row(s, &e);
        sqlite3_reset(s);
        if (bad)
            return rollback(b);
        *check = bench_check_add(*check, &e);
    }
    return exec(b, ST_COMMIT);
}

static int update_all(void *state, const bench_workload *w, uint64_t *check)
{
    sqlite_bench *b = state;
    sqlite3_stmt *s = b->st[ST_UPDATE];
    if (exec(b, ST_BEGIN))
        return -1;
    for (uint64_t i = 0; i < w->n; i++) {
        int64_t i64;
        double d;
        bench_entity_updated_values(w, w->order[i], &i64, &d);
        sqlite3_bind_int64(s, 1, w->order[i]);
        sqlite3_bind_int64(s, 2, i64);
        sqlite3_bind_double(s, 3, d);
        if (exec(b, ST_UPDATE))
            return rollback(b);
        *check += (uint64_t)sqlite3_changes(b->db);
    }
    return exec(b, ST_COMMIT) ? rollback(b) : 0;
}

static int read_all(void *state, const bench_workload *w, uint64_t *check)
{
    (void)w;
    sqlite_bench *b = state;
    sqlite3_stmt *s = b->st[ST_SELECT_ALL];
    bench_entity e;
    uint64_t position = 0;
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        if (read_row(s, &e)) {
            sqlite3_reset(s);
            return -1;
        }
        *check = bench_check_ordered(*check, position++, &e);
    }
    sqlite3_reset(s);
    return rc == SQLITE_DONE ? 0 : fail(b, "reading all rows");
}

/* Runs the one-parameter count statement `st` `count` times in one read
 * transaction, binding param(w, i) for run i, and adds up the counts. */
static int count_runs(sqlite_bench *b, int st, uint64_t count, int64_t (*param)(const bench_workload *, uint64_t),
                      const bench_workload *w, uint64_t *check)
{
    if (exec(b, ST_BEGIN))
        return -1;
    for (uint64_t i = 0; i < count; i++) {
        sqlite3_bind_int64(b->st[st], 1, param(w, i));
        if (exec_count(b, st, check))
            return rollback(b);
    }
    return exec(b, ST_COMMIT);
}

static int query_indexed_eq(void *state, const bench_workload *w, uint64_t *check)
{
    return count_runs(state, ST_COUNT_GROUP, w->queries, bench_query_group, w, check);
}

static int scan_filter(void *state, const bench_workload *w, uint64_t *check)
{
    return count_runs(state, ST_COUNT_I64, w->scans, bench_scan_threshold, w, check);
}

/* count_runs with a text parameter: make(w, i, text) writes run i's. */
static int count_text_runs(sqlite_bench *b, int st, uint64_t count,
                           void (*make)(const bench_workload *, uint64_t, char *), const bench_workload *w,
                           uint64_t *check)
{
    if (exec(b, ST_BEGIN))
        return -1;
    for (uint64_t i = 0; i < count; i++) {
        char text[(BENCH_PREFIX_LEN > BENCH_NEEDLE_LEN ? BENCH_PREFIX_LEN : BENCH_NEEDLE_LEN) + 2];
        make(w, i, text);
        sqlite3_bind_text(b->st[st], 1, text, -1, SQLITE_TRANSIENT);
        if (exec_count(b, st, check))
            return rollback(b);
    }
    return exec(b, ST_COMMIT);
}

static int scan_contains(void *state, const bench_workload *w, uint64_t *check)
{
    return count_text_runs(state, ST_COUNT_TEXT, w->scans, bench_scan_needle, w, check);
}

/* GLOB pattern of prefix query q. */
static void prefix_pattern(const bench_workload *w, uint64_t q, char *out)
{
    bench_query_prefix(w, q, out);
    strcat(out, "*");
}

static int query_prefix(void *state, const bench_workload *w, uint64_t *check)
{
    return count_text_runs(state, ST_COUNT_PREFIX, w->prefix_queries, prefix_pattern, w, check);
}

static int delete_all(void *state, const bench_workload *w, uint64_t *check)
{
    (void)w;
    sqlite_bench *b = state;
    if (exec(b, ST_BEGIN))
        return -1;
    if (exec(b, ST_DELETE_ALL))
        return rollback(b);
    return exec(b, ST_COMMIT) ? rollback(b) : count_objects(b, check);
}

static int single_writes(void *state, const bench_workload *w, uint64_t *check)
{
    for (uint64_t k = 0; k < w->single_writes; k++)
        if (insert_objects(state, &w->entities[w->n + k], 1))
            return -1;
    return count_objects(state, check);
}

/* Appends links first .. end - 1 of the workload's targets in one write
 * transaction, each at the position after the list's end. */
static int append_batch(sqlite_bench *b, const bench_workload *w, uint64_t first, uint64_t end)
{
    sqlite3_stmt *s = b->st[ST_LIST_INSERT];
    uint64_t position = 0;
    if (exec(b, ST_BEGIN))
        return -1;
    sqlite3_bind_int64(b->st[ST_LIST_END], 1, LIST_OWNER);
    if (exec_count(b, ST_LIST_END, &position))
        return rollback(b);
    sqlite3_bind_int64(s, 1, LIST_OWNER);
    for (uint64_t i = first; i < end; i++) {
        sqlite3_bind_int64(s, 2, (int64_t)position++);
        sqlite3_bind_int64(s, 3, w->list_targets[i]);
        if (exec(b, ST_LIST_INSERT))
            return rollback(b);
    }
    return exec(b, ST_COMMIT) ? rollback(b) : 0;
}

static int list_append(void *state, const bench_workload *w, uint64_t *check)
{
    sqlite_bench *b = state;
    for (uint64_t first = 0; first < w->list_length; first += BENCH_LIST_BATCH) {
        uint64_t end = w->list_length - first > BENCH_LIST_BATCH ? first + BENCH_LIST_BATCH : w->list_length;
        if (append_batch(b, w, first, end))
            return -1;
    }
    *check = 0;
    sqlite3_bind_int64(b->st[ST_LIST_COUNT], 1, LIST_OWNER);
    return exec_count(b, ST_LIST_COUNT, check);
}

static int list_read(void *state, const bench_workload *w, uint64_t *check)
{
    (void)w;
    sqlite_bench *b = state;
    sqlite3_stmt *s = b->st[ST_LIST_READ];
    uint64_t position = 0;
    int rc;
    sqlite3_bind_int64(s, 1, LIST_OWNER);
    while ((rc = sqlite3_step(s)) == SQLITE_ROW)
        *check = bench_check_list(*check, position++, sqlite3_column_int64(s, 0));
    sqlite3_reset(s);
    return rc == SQLITE_DONE ? 0 : fail(b, "reading the list");
}

/* A link must lead to an object, as in Coffer: with foreign keys enforced
 * each insert into list_item checks that its target exists. Enabled before
 * the list operations, not at open: a table that other tables reference
 * loses DELETE's truncate optimization, which would slow delete_all, as
 * Coffer adds the list's class only then. */
static int sqlite_prepare(void *state, const bench_workload *w, bench_op op)
{
    (void)w;
    sqlite_bench *b = state;
    if (op != BENCH_OP_LIST_APPEND)
        return 0;
    return sqlite3_exec(b->db, "PRAGMA foreign_keys = ON", NULL, NULL, NULL) == SQLITE_OK
               ? 0
               : fail(b, "PRAGMA foreign_keys = ON");
}

static const char *sqlite_plan(bench_op op)
{
    switch (op) {
    case BENCH_OP_QUERY_INDEXED_EQ: return "count(*) on index";
    case BENCH_OP_SCAN_FILTER: return "count(*), table scan";
    case BENCH_OP_SCAN_CONTAINS: return "count(*) WHERE instr(text, x) > 0, table scan";
    case BENCH_OP_QUERY_PREFIX: return "count(*), GLOB on index";
    case BENCH_OP_LIST_APPEND: return "INSERT (owner, position, target), foreign key checked";
    case BENCH_OP_LIST_READ: return "list_item range JOIN entity";
    default: return NULL;
    }
}

const bench_engine bench_engine_sqlite = {
    .key = "sqlite",
    .open = sqlite_open,
    .close = sqlite_close,
    .ops =
        {
            BENCH_CORE_OPS,
            [BENCH_OP_LIST_APPEND] = list_append,
            [BENCH_OP_LIST_READ] = list_read,
        },
    .plan = sqlite_plan,
    .prepare = sqlite_prepare,
};
