/* stats — what a file is made of, for inspection tools: its size and pages
 * (used, and free pages kept for reuse), the bytes of each class's objects
 * and indexes, of collections and of the change log, and the reader slots
 * of every process with the version each one reads. Everything is read in
 * one read transaction, so the numbers describe one version of the file. */
#define _GNU_SOURCE
#include <inttypes.h>
#include <string.h>
#include <sys/stat.h>

#include "storage/changelog.h"
#include "storage/handles.h"
#include "storage/object_store.h"
#include "storage/txn.h"
#include "util/error.h"

static coffer_status check_db(const coffer_db *db, const void *out, const char *fn)
{
    if (!db || db->magic != CF_DB_MAGIC || !out)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "%s: %s is NULL or not a database", fn, out ? "db" : "out");
    if (db->closed)
        return cf_error(COFFER_ERR_MISUSE, "%s: the database is closed", fn);
    return COFFER_OK;
}

/* Bytes of the pages of one sub-database; 0 if it is not there. */
static uint64_t dbi_bytes(MDB_txn *txn, MDB_dbi dbi, uint64_t *entries)
{
    MDB_stat st;
    if (mdb_stat(txn, dbi, &st) != 0) {
        if (entries)
            *entries = 0;
        return 0;
    }
    if (entries)
        *entries = st.ms_entries;
    return (uint64_t)(st.ms_branch_pages + st.ms_leaf_pages + st.ms_overflow_pages) * st.ms_psize;
}

/* LMDB's free list (sub-database 0): each record is a page list whose first
 * word is its length. */
static coffer_status count_free_pages(MDB_txn *txn, uint64_t *out)
{
    MDB_cursor *cur;
    *out = 0;
    int rc = mdb_cursor_open(txn, 0, &cur);
    if (rc != 0)
        return cf_error(COFFER_ERR_INTERNAL, "cannot read the free list: %s", mdb_strerror(rc));
    MDB_val k, v;
    while ((rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) == 0) {
        size_t n;
        if (v.mv_size < sizeof n)
            continue;
        memcpy(&n, v.mv_data, sizeof n);
        *out += n;
    }
    mdb_cursor_close(cur);
    if (rc != MDB_NOTFOUND)
        return cf_error(COFFER_ERR_CORRUPTED, "cannot read the free list: %s", mdb_strerror(rc));
    return COFFER_OK;
}

COFFER_API coffer_status coffer_db_stats(coffer_db *db, coffer_stats *out)
{
    coffer_status st = check_db(db, out, "coffer_db_stats");
    if (st != COFFER_OK)
        return st;
    memset(out, 0, sizeof *out);
    coffer_txn *txn;
    if ((st = coffer_txn_begin(db, COFFER_TXN_READ, &txn)) != COFFER_OK)
        return st;
    MDB_env *env = db->env->mdb;
    MDB_envinfo info;
    MDB_stat env_stat;
    mdb_env_info(env, &info);
    mdb_env_stat(env, &env_stat);
    out->page_size = env_stat.ms_psize;
    out->map_size = info.me_mapsize;
    out->max_readers = info.me_maxreaders;
    out->readers = info.me_numreaders;
    out->pages_used = (uint64_t)info.me_last_pgno + 1;
    out->version = (uint64_t)mdb_txn_id(txn->mdb);
    int fd;
    struct stat sb;
    if (mdb_env_get_fd(env, &fd) == 0 && fstat(fd, &sb) == 0)
        out->file_size = (uint64_t)sb.st_size;
    st = count_free_pages(txn->mdb, &out->pages_free);
    if (st == COFFER_OK) {
        out->metadata_bytes = dbi_bytes(txn->mdb, db->meta_dbi, NULL);
        if (db->has_graph)
            out->collection_bytes = dbi_bytes(txn->mdb, db->graph_dbi, NULL);
        st = cf_log_size(txn, &out->changelog_entries, &out->changelog_bytes);
    }
    coffer_txn_free(txn);
    return st;
}

static void count_index_entry(void *ctx, int column, const uint8_t *entry, size_t len)
{
    (void)column;
    (void)entry;
    (void)len;
    ++*(uint64_t *)ctx;
}

COFFER_API coffer_status coffer_db_class_stats(coffer_db *db, coffer_class_id cls, coffer_class_stats *out)
{
    coffer_status st = check_db(db, out, "coffer_db_class_stats");
    if (st != COFFER_OK)
        return st;
    if (cls >= db->schema->nclasses)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "coffer_db_class_stats: class id %" PRIu32 " is out of range (%zu classes)",
                        cls, db->schema->nclasses);
    memset(out, 0, sizeof *out);
    coffer_txn *txn;
    if ((st = coffer_txn_begin(db, COFFER_TXN_READ, &txn)) != COFFER_OK)
        return st;
    st = coffer_class_count(txn, cls, &out->objects);
    if (st == COFFER_OK) {
        out->object_bytes = dbi_bytes(txn->mdb, db->object_dbis[cls], NULL);
        out->index_bytes = dbi_bytes(txn->mdb, db->index_dbis[cls], &out->index_entries);
        if (db->sealed_index) { /* LMDB counts the nodes: count the entries in them */
            out->index_entries = 0;
            st = cf_index_each(txn, cls, count_index_entry, &out->index_entries);
        }
    }
    coffer_txn_free(txn);
    return st;
}

typedef struct reader_list {
    coffer_reader *out;
    size_t capacity;
    size_t count;
} reader_list;

static void note_reader(int64_t pid, uint64_t thread, uint64_t version, void *ctx)
{
    reader_list *r = ctx;
    if (r->count < r->capacity)
        r->out[r->count] = (coffer_reader){pid, thread, version};
    r->count++;
}

COFFER_API coffer_status coffer_db_readers(coffer_db *db, coffer_reader *out, size_t capacity, size_t *count)
{
    coffer_status st = check_db(db, count, "coffer_db_readers");
    if (st != COFFER_OK)
        return st;
    if (!out && capacity > 0)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "coffer_db_readers: out is NULL with capacity %zu", capacity);
    reader_list r = {out, capacity, 0};
    int rc = cf_each_reader(db->env->mdb, note_reader, &r);
    if (rc < 0)
        return cf_error(COFFER_ERR_INTERNAL, "cannot list the readers of the file");
    *count = r.count;
    return COFFER_OK;
}
