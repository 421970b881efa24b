/* reserve — reserving the disk space of the lock and note files before
 * they are mapped, and the size of LMDB's lock file. */
#define _GNU_SOURCE
#include "storage/reserve.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "util/error.h"

/* The failures that mean the space is not there; anything else means the
 * filesystem cannot reserve ahead, which is left to LMDB as before. */
static int out_of_space(int err)
{
    return err == ENOSPC || err == EDQUOT || err == EFBIG || err == EIO;
}

#if defined(__linux__) || defined(__FreeBSD__)
static int allocate(int fd, off_t size)
{
    int err;
    do
        err = posix_fallocate(fd, 0, size);
    while (err == EINTR);
    return err;
}
#else
/* No posix_fallocate: zeros written past the end allocate as well. The
 * existing bytes are never written, since another process may use them. */
static int allocate(int fd, off_t size)
{
    struct stat sb;
    if (fstat(fd, &sb) != 0)
        return errno;
    static const char zeros[4096];
    for (off_t at = sb.st_size; at < size;) {
        size_t n = (size_t)(size - at) < sizeof zeros ? (size_t)(size - at) : sizeof zeros;
        ssize_t w = pwrite(fd, zeros, n, at);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return errno;
        at += w;
    }
    return 0;
}
#endif

coffer_status cf_reserve_space(int fd, off_t size, const char *name)
{
    int err = allocate(fd, size);
    if (err != 0 && out_of_space(err))
        return cf_error(COFFER_ERR_IO, "cannot reserve %lld bytes for '%s': %s", (long long)size, name, strerror(err));
    return COFFER_OK;
}

/* The layout of LMDB's reader table (lmdb/mdb.c, MDB_txninfo), needed only
 * for its size: a header of two cache-line-padded parts, then one padded
 * slot per reader. The size of a slot and the header follow the platform's
 * types; LMDB names its mutexes by semaphore on Apple and BSD systems and
 * keeps pthread mutexes in the table elsewhere. */
#define LMDB_CACHELINE 64
#define CACHELINE_ROUND(n) (((n) + LMDB_CACHELINE - 1) & ~(size_t)(LMDB_CACHELINE - 1))

typedef struct lmdb_reader_body {
    size_t txnid;
    pid_t pid;
    pthread_t tid;
} lmdb_reader_body;

#if defined(__APPLE__) || defined(BSD) || defined(__FreeBSD_kernel__)
#define LMDB_MUTEX_NAME_SIZE 32
typedef struct lmdb_table_body {
    uint32_t magic, format;
    char reader_mutex_name[LMDB_MUTEX_NAME_SIZE];
    size_t txnid;
    unsigned numreaders;
} lmdb_table_body;
#else
#define LMDB_MUTEX_NAME_SIZE sizeof(pthread_mutex_t)
typedef struct lmdb_table_body {
    uint32_t magic, format;
    pthread_mutex_t reader_mutex;
    size_t txnid;
    unsigned numreaders;
} lmdb_table_body;
#endif

off_t cf_lock_file_size(MDB_env *mdb)
{
    unsigned readers = 0;
    if (mdb_env_get_maxreaders(mdb, &readers) != 0 || readers == 0)
        readers = 126; /* LMDB's default */
    size_t slot = CACHELINE_ROUND(sizeof(lmdb_reader_body));
    size_t header = CACHELINE_ROUND(sizeof(lmdb_table_body)) + CACHELINE_ROUND(LMDB_MUTEX_NAME_SIZE);
    return (off_t)((readers - 1) * slot + header + slot);
}

coffer_status cf_reserve_lock_file(MDB_env *mdb, const char *path, int *fd)
{
    char name[4200];
    *fd = -1;
    if (snprintf(name, sizeof name, "%s-lock", path) >= (int)sizeof name)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "the path '%.200s...' is too long", path);
    int lfd = open(name, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (lfd < 0) {
        if (errno == EACCES || errno == EROFS || errno == EPERM)
            return COFFER_OK;
        return cf_error(COFFER_ERR_IO, "cannot create '%s': %s", name, strerror(errno));
    }
    struct stat sb;
    coffer_status st = COFFER_OK;
    if (fstat(lfd, &sb) != 0)
        st = cf_error(COFFER_ERR_IO, "cannot stat '%s': %s", name, strerror(errno));
    else
        st = cf_reserve_space(lfd, sb.st_size > 0 ? sb.st_size : cf_lock_file_size(mdb), name);
    if (st != COFFER_OK) {
        close(lfd);
        return st;
    }
    *fd = lfd;
    return COFFER_OK;
}

/* Below this many free bytes a short write means the disk ran full; this
 * close to the process's file size limit, that it hit the limit. */
#define NEARLY_FULL (1u << 20)

coffer_status cf_error_write(MDB_env *mdb, int rc, const char *what)
{
    int fd = -1;
    if ((rc != EIO && rc != EFBIG) || !mdb || mdb_env_get_fd(mdb, &fd) != 0)
        return cf_error_mdb(rc, what);
    struct rlimit limit;
    struct stat sb;
    if (getrlimit(RLIMIT_FSIZE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY && fstat(fd, &sb) == 0 &&
        (uint64_t)sb.st_size + NEARLY_FULL > (uint64_t)limit.rlim_cur)
        return cf_error(COFFER_ERR_IO, "%s: %s (this process may not write files larger than %llu bytes)", what,
                        strerror(EFBIG), (unsigned long long)limit.rlim_cur);
    struct statvfs vfs;
    if (rc == EIO && fstatvfs(fd, &vfs) == 0 && (uint64_t)vfs.f_bavail * vfs.f_frsize < NEARLY_FULL)
        return cf_error(COFFER_ERR_IO, "%s: %s (a write was cut short with %llu bytes free)", what, strerror(ENOSPC),
                        (unsigned long long)vfs.f_bavail * vfs.f_frsize);
    return cf_error_mdb(rc, what);
}
