/* leftovers — removing what a failed open created beside a path: the data
 * file of a create that failed, and the lock and note files put beside a
 * file that turned out not to be a database (or could not be opened). They
 * are removed only under the exclusion lock (see compact.c), which proves
 * that no process has the database open, and a data file only while it
 * holds no committed transaction, so another process's data is never lost. */
#define _GNU_SOURCE
#include "storage/lifecycle.h"

#include <errno.h>
#include <fcntl.h>
#include <lmdb.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

int cf_exclusion_lock(const char *path, int create, int *missing)
{
    char lock[4200];
    *missing = 0;
    if (snprintf(lock, sizeof lock, "%s-lock", path) >= (int)sizeof lock)
        return -1;
    int fd = open(lock, O_RDWR | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT) {
        *missing = 1;
        if (create)
            fd = open(lock, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    }
    if (fd < 0)
        return -1;
    struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1};
    if (fcntl(fd, F_SETLK, &fl) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Whether the data file at `path` holds nothing committed: empty, no more
 * than the two meta pages LMDB writes when it creates a file, or meta pages
 * that name no transaction. A file that cannot be read counts as holding
 * data. */
static int holds_no_commit(const char *path)
{
    struct stat sb;
    if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode))
        return 0;
    long page = sysconf(_SC_PAGESIZE);
    if (sb.st_size <= 2 * (off_t)(page > 0 ? page : 4096))
        return 1;
    MDB_env *env;
    if (mdb_env_create(&env) != 0)
        return 0;
    mdb_env_set_mapsize(env, (size_t)sb.st_size);
    int empty = 0;
    if (mdb_env_open(env, path, MDB_NOSUBDIR | MDB_NOLOCK | MDB_RDONLY | MDB_NOTLS, 0644) == 0) {
        MDB_envinfo info;
        empty = mdb_env_info(env, &info) == 0 && info.me_last_txnid == 0;
    }
    mdb_env_close(env);
    return empty;
}

void cf_remove_leftovers(const char *path, unsigned created)
{
    if (!path || !created)
        return;
    int missing;
    int fd = cf_exclusion_lock(path, 0, &missing);
    if (fd < 0 && !missing)
        return; /* another process has it open (or it cannot be told) */
    if ((created & CF_CREATED_DATA) && holds_no_commit(path))
        unlink(path);
    char name[4200];
    if ((created & CF_CREATED_NOTE) && snprintf(name, sizeof name, "%s-note", path) < (int)sizeof name)
        unlink(name);
    /* Last, with the lock still held. An opener already waiting for the
     * lock holds the unlinked file: it notices (the open compares the lock
     * file's identity before and after) and opens again. */
    if ((created & CF_CREATED_LOCK) && fd >= 0 && snprintf(name, sizeof name, "%s-lock", path) < (int)sizeof name)
        unlink(name);
    if (fd >= 0)
        close(fd);
}
