/* versions — counting the versions of a file that read transactions keep
 * alive (LMDB's reader table covers every process), and the limit a
 * handle may set on them. */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/buffer.h"
#include "util/error.h"
#include "storage/txn.h"

typedef struct reader_versions {
    uint64_t *ids;
    size_t n, cap;
    int oom;
} reader_versions;

typedef struct reader_walk {
    cf_reader_fn fn;
    void *ctx;
} reader_walk;

/* One line of mdb_reader_list: "pid thread txnid", txnid "-" when the slot
 * has no transaction open; the header line does not parse. */
static int reader_line(const char *line, void *ctx)
{
    reader_walk *w = ctx;
    long long pid;
    unsigned long long thread;
    char txnid[32];
    if (sscanf(line, "%lld %llx %31s", &pid, &thread, txnid) != 3)
        return 0;
    uint64_t version = txnid[0] >= '0' && txnid[0] <= '9' ? strtoull(txnid, NULL, 10) : 0;
    w->fn((int64_t)pid, (uint64_t)thread, version, w->ctx);
    return 0;
}

int cf_each_reader(MDB_env *env, cf_reader_fn fn, void *ctx)
{
    reader_walk w = {fn, ctx};
    return mdb_reader_list(env, reader_line, &w);
}

/* Gathers the distinct versions read. */
static void collect(int64_t pid, uint64_t thread, uint64_t id, void *ctx)
{
    (void)pid;
    (void)thread;
    reader_versions *rv = ctx;
    if (id == 0)
        return;
    for (size_t i = 0; i < rv->n; i++)
        if (rv->ids[i] == id)
            return;
    uint64_t *p = cf_grow(rv->ids, rv->n, &rv->cap, sizeof *p, 16);
    if (!p) {
        rv->oom = 1;
        return;
    }
    rv->ids = p;
    rv->ids[rv->n++] = id;
}

/* The distinct versions read now, and whether the newest is one of them. */
static coffer_status read_versions(coffer_db *db, uint64_t *pinned, int *head_pinned)
{
    reader_versions rv = {0};
    cf_each_reader(db->env->mdb, collect, &rv);
    MDB_envinfo info;
    mdb_env_info(db->env->mdb, &info);
    *head_pinned = 0;
    for (size_t i = 0; i < rv.n; i++)
        if (rv.ids[i] == (uint64_t)info.me_last_txnid)
            *head_pinned = 1;
    *pinned = rv.n;
    free(rv.ids);
    return rv.oom ? cf_error(COFFER_ERR_NO_MEMORY, "out of memory counting active versions") : COFFER_OK;
}

coffer_status cf_check_active_versions(coffer_db *db)
{
    uint64_t pinned;
    int head_pinned;
    coffer_status st = read_versions(db, &pinned, &head_pinned);
    if (st != COFFER_OK)
        return st;
    /* After a commit the versions read stay alive, plus the new one. */
    uint64_t after = pinned + 1;
    if (after > db->max_active_versions)
        return cf_error(COFFER_ERR_LIMIT, "cannot begin a write transaction on '%s': its commit would make %" PRIu64
                        " versions live, above the limit of %" PRIu64 " active versions; %" PRIu64
                        " older versions are still read by open read transactions: end them and retry",
                        db->env->path ? db->env->path : db->env->memory_id, after, db->max_active_versions, pinned);
    return COFFER_OK;
}

COFFER_API coffer_status coffer_db_active_versions(coffer_db *db, uint64_t *out)
{
    if (!db || db->magic != CF_DB_MAGIC || !out)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "coffer_db_active_versions: %s is NULL or not a database", out ? "db" : "out");
    if (db->closed)
        return cf_error(COFFER_ERR_MISUSE, "coffer_db_active_versions: the database is closed");
    uint64_t pinned;
    int head_pinned;
    coffer_status st = read_versions(db, &pinned, &head_pinned);
    if (st == COFFER_OK)
        *out = pinned + (head_pinned ? 0 : 1);
    return st;
}
