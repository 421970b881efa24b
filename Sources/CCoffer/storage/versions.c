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

/* One line of mdb_reader_list: "pid thread txnid", txnid "-" when idle. */
static int collect(const char *line, void *ctx)
{
    reader_versions *rv = ctx;
    int pid;
    size_t tid;
    char txnid[32];
    if (sscanf(line, "%d %zx %31s", &pid, &tid, txnid) != 3 || txnid[0] < '0' || txnid[0] > '9')
        return 0;
    uint64_t id = strtoull(txnid, NULL, 10);
    for (size_t i = 0; i < rv->n; i++)
        if (rv->ids[i] == id)
            return 0;
    uint64_t *p = cf_grow(rv->ids, rv->n, &rv->cap, sizeof *p, 16);
    if (!p) {
        rv->oom = 1;
        return 0;
    }
    rv->ids = p;
    rv->ids[rv->n++] = id;
    return 0;
}

/* The distinct versions read now, and whether the newest is one of them. */
static coffer_status read_versions(coffer_db *db, uint64_t *pinned, int *head_pinned)
{
    reader_versions rv = {0};
    mdb_reader_list(db->env->mdb, collect, &rv);
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
