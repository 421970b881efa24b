/* env — one LMDB environment per file per process, shared by refcount. LMDB
 * must never be opened twice in one process for the same file: closing one
 * handle would drop the POSIX locks of the other. */
#define _GNU_SOURCE
#include "storage/env.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/error.h"

static pthread_mutex_t registry_mutex = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static cf_env *registry;

void cf_registry_lock(void) { pthread_mutex_lock(&registry_mutex); }
void cf_registry_unlock(void) { pthread_mutex_unlock(&registry_mutex); }

/* A large map is only a reservation of address space, not disk. 1 GiB is
 * more than ordinary use needs; the map doubles when a write fills it.
 * COFFER_INITIAL_MAP_SIZE (bytes) overrides it, which tests use to exercise
 * growth. */
static size_t initial_map_size(void)
{
    size_t size = (size_t)1 << 30;
    const char *s = getenv("COFFER_INITIAL_MAP_SIZE");
    if (s && *s) {
        char *end = NULL;
        unsigned long long v = strtoull(s, &end, 10);
        if (end && *end == '\0' && v >= 65536)
            size = (size_t)v;
    }
    if (sizeof(size_t) < 8 && size > ((size_t)1 << 28))
        size = (size_t)1 << 28;
    return size;
}

static size_t page_round(uint64_t v)
{
    long page = sysconf(_SC_PAGESIZE);
    uint64_t p = page > 0 ? (uint64_t)page : 4096u;
    v -= v % p;
    if (v < p)
        v = p;
    if (v > (uint64_t)SIZE_MAX)
        v = SIZE_MAX - (SIZE_MAX % p);
    return (size_t)v;
}

static cf_env *env_new(void)
{
    cf_env *env = calloc(1, sizeof *env);
    if (!env)
        return NULL;
    pthread_mutex_init(&env->lock, NULL);
    env->refcount = 1;
    return env;
}

static void env_free(cf_env *env)
{
    if (!env)
        return;
    if (env->mdb)
        mdb_env_close(env->mdb);
    cf_signal_close(env->signal);
    pthread_mutex_destroy(&env->lock);
    free(env->path);
    free(env->memory_id);
    free(env);
}

static const char *memory_dir(void)
{
    if (access("/dev/shm", W_OK | X_OK) == 0)
        return "/dev/shm";
    const char *t = getenv("TMPDIR");
    return (t && *t) ? t : "/tmp";
}

/* LMDB stops the process (abort()) when one of its own checks fails, which
 * a damaged page can cause outside coffer_verify(). This cannot be turned
 * into an error, but the user learns which file and what to do. */
static void on_lmdb_assert(MDB_env *mdb, const char *msg)
{
    const cf_env *env = mdb_env_get_userctx(mdb);
    const char *name = env && env->path ? env->path : env && env->memory_id ? env->memory_id : "a database";
    fprintf(stderr,
            "coffer: the storage engine found a damaged page in '%s' (%s) and stops the process.\n"
            "coffer: run `coffer verify %s` (coffer_verify() in C, db.verify() in Python, Database.verify in Swift) "
            "to see what is damaged, and restore the file from a backup.\n",
            name, msg, name);
    fflush(stderr);
}

/* Opens env->mdb on `path` with `flags`, sized for the file and the cap. */
static coffer_status open_mdb(cf_env *env, const char *path, unsigned flags, uint64_t file_size, const char *label)
{
    int rc = mdb_env_create(&env->mdb);
    if (rc != 0)
        return cf_error_mdb(rc, label);
    mdb_env_set_maxdbs(env->mdb, CF_MAX_DBIS + 1);
    mdb_env_set_userctx(env->mdb, env);
    mdb_env_set_assert(env->mdb, on_lmdb_assert);
    uint64_t map = initial_map_size();
    if (file_size * 2 > map)
        map = file_size * 2;
    if (env->max_file_size && map > env->max_file_size)
        map = env->max_file_size > file_size ? env->max_file_size : file_size;
    mdb_env_set_mapsize(env->mdb, page_round(map));
    rc = mdb_env_open(env->mdb, path, flags | MDB_NOSUBDIR | MDB_NOTLS, 0644);
    if (rc != 0) {
        mdb_env_close(env->mdb);
        env->mdb = NULL;
        if (rc == MDB_INVALID || rc == MDB_VERSION_MISMATCH)
            return cf_error(COFFER_ERR_NOT_A_DATABASE, "%s is not a Coffer database (%s)", label, mdb_strerror(rc));
        if (rc == EACCES || rc == EROFS)
            return cf_error(COFFER_ERR_READ_ONLY, "%s cannot be opened for writing: %s", label, mdb_strerror(rc));
        if (rc == ENOENT)
            return cf_error(COFFER_ERR_NOT_FOUND, "%s: %s", label, mdb_strerror(rc));
        return cf_error_mdb(rc, label);
    }
    MDB_envinfo info;
    mdb_env_info(env->mdb, &info);
    env->map_size = info.me_mapsize;
    int dead = 0;
    mdb_reader_check(env->mdb, &dead);
    return COFFER_OK;
}

/* LMDB maps the file and trusts its meta page; a file cut short would fault
 * (SIGBUS) on the first read of a missing page, so check the size first. */
static coffer_status check_not_truncated(cf_env *env, const char *label)
{
    MDB_envinfo info;
    MDB_stat st;
    mdb_env_info(env->mdb, &info);
    if (mdb_env_stat(env->mdb, &st) != 0)
        return cf_error(COFFER_ERR_CORRUPTED, "%s: cannot read the file's statistics", label);
    int fd = -1;
    struct stat sb;
    if (mdb_env_get_fd(env->mdb, &fd) != 0 || fstat(fd, &sb) != 0)
        return cf_error(COFFER_ERR_IO, "%s: cannot stat: %s", label, strerror(errno));
    uint64_t needed = ((uint64_t)info.me_last_pgno + 1) * st.ms_psize;
    if (sb.st_size > 0 && (uint64_t)sb.st_size < needed)
        return cf_error(COFFER_ERR_CORRUPTED, "%s is truncated: %lld bytes on disk, %llu in use",
                        label, (long long)sb.st_size, (unsigned long long)needed);
    return COFFER_OK;
}

/* Adds a newly opened environment to the registry, or frees it on failure. */
static coffer_status register_env(cf_env *env, coffer_status st, cf_env **out)
{
    if (st == COFFER_OK && !(env->signal = cf_signal_open(env->memory_id ? NULL : env->path, env->read_only)))
        st = cf_error(COFFER_ERR_NO_MEMORY, "out of memory opening a database");
    if (st != COFFER_OK) {
        env_free(env);
        return st;
    }
    env->next = registry;
    registry = env;
    *out = env;
    return COFFER_OK;
}

static coffer_status acquire_memory(const char *id, int read_only, uint64_t max_file_size, cf_env **out)
{
    for (cf_env *e = registry; e; e = e->next) {
        if (e->memory_id && strcmp(e->memory_id, id) == 0) {
            e->refcount++;
            *out = e;
            return COFFER_OK;
        }
    }
    if (read_only)
        return cf_error(COFFER_ERR_NOT_FOUND, "in-memory database '%s' does not exist and cannot be created read-only", id);
    cf_env *env = env_new();
    if (!env || !(env->memory_id = strdup(id))) {
        env_free(env);
        return cf_error(COFFER_ERR_NO_MEMORY, "out of memory opening in-memory database '%s'", id);
    }
    env->max_file_size = max_file_size;
    char path[4096];
    snprintf(path, sizeof path, "%s/coffer-memory-XXXXXX", memory_dir());
    int fd = mkstemp(path);
    if (fd < 0) {
        env_free(env);
        return cf_error(COFFER_ERR_IO, "cannot create the store of in-memory database '%s' in %s: %s", id, memory_dir(), strerror(errno));
    }
    close(fd);
    char label[200];
    snprintf(label, sizeof label, "in-memory database '%.100s'", id);
    coffer_status st = open_mdb(env, path, MDB_NOSYNC | MDB_NOMETASYNC, 0, label);
    /* Unlinked at once: the data lives as long as the mapping, no file stays. */
    char lock[4200];
    snprintf(lock, sizeof lock, "%s-lock", path);
    unlink(path);
    unlink(lock);
    return register_env(env, st, out);
}

static coffer_status acquire_file(const char *path, int read_only, uint64_t max_file_size, cf_env **out)
{
    struct stat sb;
    if (stat(path, &sb) != 0) {
        if (errno != ENOENT)
            return cf_error(COFFER_ERR_IO, "cannot open '%s': %s", path, strerror(errno));
        if (read_only)
            return cf_error(COFFER_ERR_NOT_FOUND, "cannot open '%s' read-only: the file does not exist", path);
        int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
        if (fd < 0)
            return cf_error(errno == EACCES || errno == EROFS ? COFFER_ERR_READ_ONLY : COFFER_ERR_IO,
                            "cannot create '%s': %s", path, strerror(errno));
        close(fd);
        if (stat(path, &sb) != 0)
            return cf_error(COFFER_ERR_IO, "cannot open '%s': %s", path, strerror(errno));
    }
    if (S_ISDIR(sb.st_mode))
        return cf_error(COFFER_ERR_IO, "cannot open '%s': it is a directory", path);
    for (cf_env *e = registry; e; e = e->next) {
        if (!e->memory_id && e->dev == sb.st_dev && e->ino == sb.st_ino) {
            if (e->read_only && !read_only)
                return cf_error(COFFER_ERR_BUSY, "'%s' is already open read-only in this process and cannot also be opened for writing", path);
            e->refcount++;
            if (max_file_size) {
                pthread_mutex_lock(&e->lock);
                e->max_file_size = max_file_size;
                pthread_mutex_unlock(&e->lock);
            }
            *out = e;
            return COFFER_OK;
        }
    }
    cf_env *env = env_new();
    if (!env || !(env->path = strdup(path))) {
        env_free(env);
        return cf_error(COFFER_ERR_NO_MEMORY, "out of memory opening '%s'", path);
    }
    env->dev = sb.st_dev;
    env->ino = sb.st_ino;
    env->max_file_size = max_file_size;
    /* Read-only handles share a read-write environment when the file can be
     * written, so that a later read-write open in the process can join it. */
    env->read_only = read_only && access(path, W_OK) != 0;
    char label[4200];
    snprintf(label, sizeof label, "'%s'", path);
    coffer_status st = open_mdb(env, path, env->read_only ? MDB_RDONLY : 0, (uint64_t)sb.st_size, label);
    if (st == COFFER_OK)
        st = check_not_truncated(env, label);
    return register_env(env, st, out);
}

coffer_status cf_env_acquire(const char *path, const char *memory_id, int read_only,
                             uint64_t max_file_size, cf_env **out)
{
    if (memory_id)
        return acquire_memory(memory_id, read_only, max_file_size, out);
    return acquire_file(path, read_only, max_file_size, out);
}

int cf_env_file_is_open(const struct stat *sb)
{
    for (cf_env *e = registry; e; e = e->next)
        if (!e->memory_id && e->dev == sb->st_dev && e->ino == sb->st_ino)
            return 1;
    return 0;
}

void cf_env_release(cf_env *env)
{
    if (!env || --env->refcount > 0)
        return;
    for (cf_env **p = &registry; *p; p = &(*p)->next) {
        if (*p == env) {
            *p = env->next;
            break;
        }
    }
    env_free(env);
}

/* Grows the map (doubling, capped) when a write filled it. LMDB allows this
 * only while the process has no transaction open. Called with env->lock. */
static void grow_if_pending(cf_env *env)
{
    if (!env->grow_pending || env->active_txns != 0)
        return;
    uint64_t want = (uint64_t)env->map_size * 2;
    if (env->max_file_size && want > env->max_file_size)
        want = env->max_file_size;
    if (mdb_env_set_mapsize(env->mdb, page_round(want)) == 0) {
        MDB_envinfo info;
        mdb_env_info(env->mdb, &info);
        env->map_size = info.me_mapsize;
    }
    env->grow_pending = 0;
}

coffer_status cf_env_txn_begin(cf_env *env, int write, MDB_txn **out)
{
    pthread_t self = pthread_self();
    pthread_mutex_lock(&env->lock);
    if (write && env->has_writer && pthread_equal(env->writer, self)) {
        pthread_mutex_unlock(&env->lock);
        return cf_error(COFFER_ERR_MISUSE, "this thread already holds the write transaction of %s; commit or abort it first",
                        env->path ? env->path : env->memory_id);
    }
    grow_if_pending(env);
    env->active_txns++;
    pthread_mutex_unlock(&env->lock);

    int rc = mdb_txn_begin(env->mdb, NULL, write ? 0 : MDB_RDONLY, out);
    if (rc == MDB_MAP_RESIZED) {
        /* Another process grew the file beyond our map: adopt its size. */
        pthread_mutex_lock(&env->lock);
        if (env->active_txns == 1 && mdb_env_set_mapsize(env->mdb, 0) == 0) {
            MDB_envinfo info;
            mdb_env_info(env->mdb, &info);
            env->map_size = info.me_mapsize;
            pthread_mutex_unlock(&env->lock);
            rc = mdb_txn_begin(env->mdb, NULL, write ? 0 : MDB_RDONLY, out);
        } else {
            pthread_mutex_unlock(&env->lock);
        }
    }
    pthread_mutex_lock(&env->lock);
    if (rc != 0) {
        env->active_txns--;
        pthread_mutex_unlock(&env->lock);
        if (rc == MDB_MAP_RESIZED)
            return cf_error(COFFER_ERR_BUSY, "the file was grown by another process; end this process's open transactions and retry");
        return cf_error_mdb(rc, "cannot begin a transaction");
    }
    if (write) {
        env->has_writer = 1;
        env->writer = self;
    }
    pthread_mutex_unlock(&env->lock);
    return COFFER_OK;
}

void cf_env_txn_end(cf_env *env, int write)
{
    pthread_mutex_lock(&env->lock);
    env->active_txns--;
    if (write)
        env->has_writer = 0;
    pthread_mutex_unlock(&env->lock);
}

coffer_status cf_env_map_full(cf_env *env, const char *what)
{
    pthread_mutex_lock(&env->lock);
    int capped = env->max_file_size && env->map_size >= page_round(env->max_file_size);
    if (!capped)
        env->grow_pending = 1;
    uint64_t cap = env->max_file_size;
    pthread_mutex_unlock(&env->lock);
    if (capped)
        return cf_error(COFFER_ERR_FILE_TOO_LARGE, "%s: the file reached its maximum size of %llu bytes; nothing of this transaction was committed",
                        what, (unsigned long long)cap);
    return cf_error(COFFER_ERR_MAP_FULL, "%s: the map is full; nothing of this transaction was committed and the map grows before the next write transaction: retry it", what);
}

int cf_env_known_dbi(cf_env *env, uint32_t number, MDB_dbi *out)
{
    if (number >= CF_MAX_DBIS)
        return 0;
    pthread_mutex_lock(&env->lock);
    int known = env->dbi_open[number];
    if (known)
        *out = env->dbis[number];
    pthread_mutex_unlock(&env->lock);
    return known;
}

void cf_env_remember_dbi(cf_env *env, uint32_t number, MDB_dbi dbi)
{
    if (number >= CF_MAX_DBIS)
        return;
    pthread_mutex_lock(&env->lock);
    env->dbis[number] = dbi;
    env->dbi_open[number] = 1;
    pthread_mutex_unlock(&env->lock);
}

coffer_status cf_env_dbi(cf_env *env, MDB_txn *txn, uint32_t number, int create, MDB_dbi *out)
{
    if (cf_env_known_dbi(env, number, out))
        return COFFER_OK;
    if (number >= CF_MAX_DBIS)
        return cf_error(COFFER_ERR_LIMIT, "sub-database %u is beyond the limit of %u", number, CF_MAX_DBIS);
    char name[16];
    snprintf(name, sizeof name, "%u", number);
    int rc = mdb_dbi_open(txn, name, create ? MDB_CREATE : 0, out);
    if (rc == MDB_NOTFOUND)
        return cf_error(COFFER_ERR_NOT_FOUND, "sub-database %u does not exist", number);
    if (rc == MDB_INCOMPATIBLE)
        return cf_error(COFFER_ERR_NOT_A_DATABASE, "sub-database %u has an unexpected layout", number);
    if (rc != 0)
        return cf_error_mdb(rc, "cannot open a sub-database");
    return COFFER_OK;
}

coffer_status cf_copy_seed(const char *seed, const char *path, cf_seed_check_fn check, void *ctx)
{
    int in = open(seed, O_RDONLY | O_CLOEXEC);
    if (in < 0)
        return cf_error(errno == ENOENT ? COFFER_ERR_NOT_FOUND : COFFER_ERR_IO,
                        "cannot open the seed file '%s': %s", seed, strerror(errno));
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.seed-XXXXXX", path);
    int out = mkstemp(tmp);
    if (out < 0) {
        close(in);
        return cf_error(COFFER_ERR_IO, "cannot create '%s': %s", tmp, strerror(errno));
    }
    char buf[65536];
    coffer_status st = COFFER_OK;
    for (;;) {
        ssize_t n = read(in, buf, sizeof buf);
        if (n == 0)
            break;
        if (n < 0) {
            if (errno == EINTR)
                continue;
            st = cf_error(COFFER_ERR_IO, "cannot read the seed file '%s': %s", seed, strerror(errno));
            break;
        }
        for (ssize_t off = 0; off < n && st == COFFER_OK;) {
            ssize_t w = write(out, buf + off, (size_t)(n - off));
            if (w < 0 && errno == EINTR)
                continue;
            if (w < 0)
                st = cf_error(COFFER_ERR_IO, "cannot write '%s': %s", tmp, strerror(errno));
            else
                off += w;
        }
        if (st != COFFER_OK)
            break;
    }
    close(in);
    if (st == COFFER_OK && fsync(out) != 0)
        st = cf_error(COFFER_ERR_IO, "cannot sync '%s': %s", tmp, strerror(errno));
    close(out);
    if (st == COFFER_OK && check)
        st = check(tmp, ctx);
    /* link() does not replace: if the path appeared meanwhile, it wins. */
    if (st == COFFER_OK && link(tmp, path) != 0 && errno != EEXIST)
        st = cf_error(COFFER_ERR_IO, "cannot create '%s' from the seed file: %s", path, strerror(errno));
    unlink(tmp);
    return st;
}

static char *default_path_value;

const char *cf_default_path(void)
{
    return default_path_value ? default_path_value : "default.coffer";
}

COFFER_API const char *coffer_default_path(void) { return cf_default_path(); }

COFFER_API coffer_status coffer_set_default_path(const char *path)
{
    if (path && !*path)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "default path must not be empty");
    char *copy = NULL;
    if (path && !(copy = strdup(path)))
        return cf_error(COFFER_ERR_NO_MEMORY, "out of memory setting the default path");
    cf_registry_lock();
    free(default_path_value);
    default_path_value = copy;
    cf_registry_unlock();
    return COFFER_OK;
}
