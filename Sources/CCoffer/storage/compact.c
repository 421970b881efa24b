/* compact — compacting a file in place when it is first opened in the
 * process, and deleting a database's files.
 *
 * Exclusion: every process that has an LMDB environment open holds a shared
 * lock on byte 0 of the lock file, and a process opening one takes that lock
 * before it opens the data file. Holding a write lock on that byte therefore
 * proves no other process has the file open and keeps new ones waiting until
 * the compacted file is in place. The file is read with MDB_NOLOCK so that
 * LMDB itself never touches (and so never drops) that lock. */
#define _GNU_SOURCE
#include "storage/lifecycle.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <lmdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "storage/env.h"
#include "storage/file_version.h"
#include "storage/reported_copy.h"
#include "util/error.h"

coffer_status cf_delete_database_files(const char *path)
{
    if (unlink(path) != 0 && errno != ENOENT)
        return cf_error(COFFER_ERR_IO, "cannot delete '%s': %s", path, strerror(errno));
    static const char *const sidecars[] = {"-lock", "-note"};
    for (size_t i = 0; i < sizeof sidecars / sizeof sidecars[0]; i++) {
        char name[4200];
        snprintf(name, sizeof name, "%s%s", path, sidecars[i]);
        if (unlink(name) != 0 && errno != ENOENT)
            return cf_error(COFFER_ERR_IO, "cannot delete '%s': %s", name, strerror(errno));
    }
    return COFFER_OK;
}

coffer_status cf_sync_dir(const char *path)
{
    char *copy = strdup(path);
    if (!copy)
        return cf_error(COFFER_ERR_NO_MEMORY, "out of memory");
    int fd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    coffer_status st = COFFER_OK;
    if (fd < 0 || fsync(fd) != 0)
        st = cf_error(COFFER_ERR_IO, "cannot sync the directory of '%s': %s", path, strerror(errno));
    if (fd >= 0)
        close(fd);
    free(copy);
    return st;
}

coffer_status cf_sync_file(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    coffer_status st = COFFER_OK;
    if (fd < 0 || fsync(fd) != 0)
        st = cf_error(COFFER_ERR_IO, "cannot sync '%s': %s", path, strerror(errno));
    if (fd >= 0)
        close(fd);
    return st;
}

/* Bytes of the pages in use: every page up to the last one written, less
 * those on LMDB's free list. */
static int used_bytes(MDB_env *env, uint64_t *out)
{
    MDB_txn *txn;
    int rc = mdb_txn_begin(env, NULL, MDB_RDONLY, &txn);
    if (rc != 0)
        return rc;
    MDB_envinfo info;
    MDB_stat st;
    mdb_env_info(env, &info);
    mdb_env_stat(env, &st);
    uint64_t free_pages = 0;
    MDB_cursor *cur;
    rc = mdb_cursor_open(txn, 0 /* the free list */, &cur);
    if (rc == 0) {
        MDB_val k, v;
        while (mdb_cursor_get(cur, &k, &v, MDB_NEXT) == 0)
            if (v.mv_size >= sizeof(size_t))
                free_pages += ((const size_t *)v.mv_data)[0];
        mdb_cursor_close(cur);
    }
    uint64_t pages = (uint64_t)info.me_last_pgno + 1;
    *out = (pages > free_pages ? pages - free_pages : 0) * st.ms_psize;
    mdb_txn_abort(txn);
    return 0;
}

/* With the exclusion lock held: asks the callback, and replaces the file by
 * a compacted copy written beside it. */
static coffer_status compact_locked(const coffer_config *config, const char *path, uint64_t total)
{
    MDB_env *env;
    int rc = mdb_env_create(&env);
    if (rc != 0)
        return cf_error_mdb(rc, path);
    mdb_env_set_maxdbs(env, CF_MAX_DBIS);
    mdb_env_set_mapsize(env, (size_t)(total + (1u << 20)));
    rc = mdb_env_open(env, path, MDB_NOSUBDIR | MDB_NOLOCK | MDB_RDONLY | MDB_NOTLS, 0644);
    if (rc != 0) {
        mdb_env_close(env);
        return COFFER_OK; /* not a database this can read: the usual open reports it */
    }
    uint64_t used = 0;
    cf_progress report;
    coffer_status st = cf_progress_begin(&report, config->progress, config->progress_ctx, COFFER_PROGRESS_SHOULD_COMPACT, 1);
    int compact = st == COFFER_OK && used_bytes(env, &used) == 0 && config->should_compact(total, used, config->should_compact_ctx);
    if (st == COFFER_OK)
        st = cf_progress_end(&report);
    if (st == COFFER_OK && compact)
        st = cf_progress_begin(&report, config->progress, config->progress_ctx, COFFER_PROGRESS_COMPACTION, used);
    if (st == COFFER_OK && compact) {
        char tmp[4200];
        snprintf(tmp, sizeof tmp, "%s.compact-XXXXXX", path);
        int fd = mkstemp(tmp);
        if (fd < 0) {
            st = cf_error(COFFER_ERR_IO, "cannot create a file beside '%s' to compact it: %s", path, strerror(errno));
        } else {
            close(fd);
            unlink(tmp); /* LMDB creates the copy itself and refuses to overwrite */
            st = cf_copy_env_reported(env, tmp, MDB_CP_COMPACT, &report);
            if (st == COFFER_ERR_IO)
                cf_error_prefix("cannot compact '%s'", path);
            /* LMDB's compacting copy starts again at version 1 */
            MDB_envinfo info;
            if (st == COFFER_OK && (rc = mdb_env_info(env, &info)) != 0)
                st = cf_error(COFFER_ERR_IO, "cannot compact '%s': %s", path, mdb_strerror(rc));
            if (st == COFFER_OK)
                st = cf_file_raise_version(tmp, (uint64_t)info.me_last_txnid);
            if (st == COFFER_OK)
                st = cf_sync_file(tmp);
            if (st == COFFER_OK)
                st = cf_progress_end(&report); /* the last moment to cancel: the file is still the old one */
            if (st == COFFER_OK && rename(tmp, path) != 0)
                st = cf_error(COFFER_ERR_IO, "cannot replace '%s' by its compacted copy: %s", path, strerror(errno));
            if (st == COFFER_OK)
                st = cf_sync_dir(path);
            else
                unlink(tmp);
        }
    }
    mdb_env_close(env);
    return st;
}

coffer_status cf_compact_on_launch(const coffer_config *config, const char *path)
{
    struct stat sb;
    if (stat(path, &sb) != 0 || sb.st_size == 0 || cf_env_file_is_open(&sb))
        return COFFER_OK; /* nothing to compact, or not the first open in the process */
    int missing;
    int fd = cf_exclusion_lock(path, 1, &missing);
    if (fd < 0)
        return COFFER_OK; /* cannot prove exclusion: do not compact */
    coffer_status st = compact_locked(config, path, (uint64_t)sb.st_size);
    if (missing) {
        /* made only to exclude others: the open that follows makes its own
         * (and a file that is not a database gets none) */
        char lock[4200];
        if (snprintf(lock, sizeof lock, "%s-lock", path) < (int)sizeof lock)
            unlink(lock);
    }
    close(fd); /* drops the lock: waiting processes open the new file */
    return st;
}
