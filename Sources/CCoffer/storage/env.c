/* env — one LMDB environment per file per process, shared by refcount. LMDB
 * must never be opened twice in one process for the same file: closing one
 * handle would drop the POSIX locks of the other. */
#define _GNU_SOURCE
#include "storage/env.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "storage/lifecycle.h"
#include "storage/reserve.h"
#include "util/error.h"
#include "util/progress.h"

static pthread_mutex_t registry_mutex = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static cf_env *registry;

static void track_current_pid(void);
static pthread_once_t current_pid_once = PTHREAD_ONCE_INIT;

void cf_registry_lock(void)
{
    pthread_once(&current_pid_once, track_current_pid); /* its fork handlers keep the lock usable in a child */
    pthread_mutex_lock(&registry_mutex);
}

void cf_registry_unlock(void) { pthread_mutex_unlock(&registry_mutex); }

/* Without MDB_WRITEMAP the map is read-only and costs no memory and no disk
 * beyond the pages read: it only reserves address space. So it is sized far
 * beyond ordinary use (64 GiB, or four times the file once the file outgrows
 * a quarter of that), and a process whose transactions stay open (an
 * observed database always has one) keeps room to write. It grows before it
 * fills, at a transaction begun with no other open, since LMDB remaps only
 * then. COFFER_INITIAL_MAP_SIZE (bytes) replaces the 64 GiB, which tests
 * use to exercise growth. */
static uint64_t map_reserve(void)
{
    uint64_t size = sizeof(size_t) >= 8 ? (uint64_t)64 << 30 : (uint64_t)1 << 28;
    const char *s = getenv("COFFER_INITIAL_MAP_SIZE");
    if (s && *s) {
        char *end = NULL;
        unsigned long long v = strtoull(s, &end, 10);
        if (end && *end == '\0' && v >= 65536)
            size = (uint64_t)v;
    }
    return size;
}

/* The largest map LMDB is asked for: half the 64-bit address space, or 2 GiB
 * on a 32-bit system. */
static uint64_t map_ceiling(void)
{
    return sizeof(size_t) >= 8 ? (uint64_t)1 << 46 : (uint64_t)1 << 31;
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

/* The map a file of `used` bytes should have: the reservation, or four
 * times the file, within the configured maximum file size (but never below
 * what the file already uses). */
static uint64_t map_target(const cf_env *env, uint64_t used)
{
    uint64_t want = map_reserve();
    if (used > want / 4)
        want = used > map_ceiling() / 4 ? map_ceiling() : used * 4;
    if (env->max_file_size && want > env->max_file_size)
        want = env->max_file_size;
    return want > used ? want : used;
}

/* The largest of `want`, want/2, want/4... (not below `floor`) that the
 * address space can take now, tried with a mapping that reserves nothing:
 * LMDB gives up its old map before it maps the new one and cannot get it
 * back if that fails, so a size is tried before LMDB is asked for it. 0 if
 * none fits. */
static uint64_t fit_address_space(uint64_t want, uint64_t floor)
{
    if (floor == 0)
        floor = 1;
    for (uint64_t size = want;; size /= 2) {
        if (size < floor)
            size = floor;
        void *p = mmap(NULL, page_round(size), PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p != MAP_FAILED) {
            munmap(p, page_round(size));
            return size;
        }
        if (size == floor)
            return 0;
    }
}

/* Bytes of the file in use: every page up to the newest commit's last,
 * whichever process made it. */
static uint64_t used_bytes(cf_env *env)
{
    MDB_envinfo info;
    if (mdb_env_info(env->mdb, &info) != 0)
        return 0;
    return ((uint64_t)info.me_last_pgno + 1) * env->psize;
}

/* This process's id, kept up to date across fork() by an atfork handler,
 * so that checking for an inherited environment at every transaction costs
 * no system call. */
static pid_t current_pid;

static void refresh_current_pid(void) { current_pid = getpid(); }

/* fork() happens between two holds of the registry lock, never during
 * one: the child's copy would stay locked by a thread it does not have. */
static void before_fork(void) { pthread_mutex_lock(&registry_mutex); }

static void after_fork_in_parent(void) { pthread_mutex_unlock(&registry_mutex); }

static void after_fork_in_child(void)
{
    refresh_current_pid();
    /* the forking thread holds it, under a thread id the child changed */
    pthread_mutexattr_t attr;
    pthread_mutexattr_init(&attr);
    pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&registry_mutex, &attr);
    pthread_mutexattr_destroy(&attr);
}

static void track_current_pid(void)
{
    refresh_current_pid();
    pthread_atfork(before_fork, after_fork_in_parent, after_fork_in_child);
}

static pid_t this_process(void)
{
    pthread_once(&current_pid_once, track_current_pid);
    return current_pid;
}

static cf_env *env_new(void)
{
    cf_env *env = calloc(1, sizeof *env);
    if (!env)
        return NULL;
    pthread_mutex_init(&env->lock, NULL);
    pthread_mutexattr_t attr;
    pthread_mutexattr_init(&attr);
    pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&env->dbi_lock, &attr);
    pthread_mutexattr_destroy(&attr);
    env->refcount = 1;
    env->lock_fd = -1;
    env->pid = this_process();
    return env;
}

static void env_free(cf_env *env)
{
    if (!env)
        return;
    if (env->mdb)
        mdb_env_close(env->mdb);
    if (env->lock_fd >= 0)
        close(env->lock_fd); /* after LMDB's: closing it earlier would drop LMDB's locks */
    cf_signal_close(env->signal);
    if (env->path && !env->served)
        cf_remove_leftovers(env->path, env->created);
    pthread_mutex_destroy(&env->lock);
    pthread_mutex_destroy(&env->dbi_lock);
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

/* Whether the lock file at `<path>-lock` is still the one this process
 * opened before LMDB did: a failed open elsewhere may have removed it (see
 * leftovers.c) while LMDB waited for its lock, and two lock files for one
 * database would let two writers in. */
static int lock_file_replaced(const cf_env *env, const char *path)
{
    char name[4200];
    struct stat mine, now;
    if (env->lock_fd < 0 || snprintf(name, sizeof name, "%s-lock", path) >= (int)sizeof name)
        return 0;
    if (fstat(env->lock_fd, &mine) != 0)
        return 0;
    return stat(name, &now) != 0 || now.st_dev != mine.st_dev || now.st_ino != mine.st_ino;
}

static void close_mdb(cf_env *env)
{
    mdb_env_close(env->mdb);
    env->mdb = NULL;
    if (env->lock_fd >= 0)
        close(env->lock_fd);
    env->lock_fd = -1;
}

/* Opens env->mdb on `path` with `flags`, its map sized for the file and the
 * cap, after reserving the lock file's space. */
static coffer_status open_mdb(cf_env *env, const char *path, unsigned flags, uint64_t file_size, const char *label)
{
    for (int attempt = 0;; attempt++) {
        int rc = mdb_env_create(&env->mdb);
        if (rc != 0)
            return cf_error_mdb(rc, label);
        mdb_env_set_maxdbs(env->mdb, CF_MAX_DBIS + 1);
        mdb_env_set_userctx(env->mdb, env);
        mdb_env_set_assert(env->mdb, on_lmdb_assert);
        uint64_t map = fit_address_space(map_target(env, file_size), file_size);
        if (map == 0) {
            close_mdb(env);
            return cf_error(COFFER_ERR_NO_MEMORY, "%s: no room in the address space to map its %llu bytes", label,
                            (unsigned long long)file_size);
        }
        mdb_env_set_mapsize(env->mdb, page_round(map));
        coffer_status st = cf_reserve_lock_file(env->mdb, path, &env->lock_fd);
        if (st != COFFER_OK) {
            close_mdb(env);
            return cf_error_prefix("cannot open %s", label);
        }
        rc = mdb_env_open(env->mdb, path, flags | MDB_NOSUBDIR | MDB_NOTLS, 0644);
        if (rc != 0) {
            close_mdb(env);
            if (rc == MDB_INVALID || rc == MDB_VERSION_MISMATCH)
                return cf_error(COFFER_ERR_NOT_A_DATABASE, "%s is not a Coffer database (%s)", label, mdb_strerror(rc));
            if (rc == EACCES || rc == EROFS)
                return cf_error(COFFER_ERR_READ_ONLY, "%s cannot be opened for writing: %s", label, mdb_strerror(rc));
            if (rc == ENOENT)
                return cf_error(COFFER_ERR_NOT_FOUND, "%s: %s", label, mdb_strerror(rc));
            return cf_error_mdb(rc, label);
        }
        if (lock_file_replaced(env, path)) {
            close_mdb(env);
            if (attempt < 8)
                continue;
            return cf_error(COFFER_ERR_BUSY, "%s: its lock file was replaced again and again while it was being opened", label);
        }
        break;
    }
    MDB_envinfo info;
    MDB_stat ms;
    mdb_env_info(env->mdb, &info);
    env->map_size = info.me_mapsize;
    env->psize = mdb_env_stat(env->mdb, &ms) == 0 ? ms.ms_psize : 4096u;
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

/* Adds a newly opened environment to the registry, or frees it on failure
 * (removing what its opening created). */
static coffer_status register_env(cf_env *env, coffer_status st, cf_env **out)
{
    if (st == COFFER_OK)
        st = cf_signal_open(env->memory_id ? NULL : env->path, env->read_only, &env->signal);
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
        if (e->memory_id && strcmp(e->memory_id, id) == 0 && !cf_env_inherited(e)) {
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
    env->durability = COFFER_DURABILITY_NONE;
    env->durability_fixed = 1;
    coffer_status st = open_mdb(env, path, MDB_NOSYNC | MDB_NOMETASYNC, 0, label);
    /* Unlinked at once: the data lives as long as the mapping, no file stays. */
    char lock[4200];
    snprintf(lock, sizeof lock, "%s-lock", path);
    unlink(path);
    unlink(lock);
    return register_env(env, st, out);
}

/* Which of the lock and note files of `path` do not exist yet: the ones an
 * open that fails must remove again. */
static unsigned missing_sidecars(const char *path)
{
    static const struct { const char *suffix; unsigned flag; } sidecars[] = {{"-lock", CF_CREATED_LOCK}, {"-note", CF_CREATED_NOTE}};
    unsigned missing = 0;
    for (size_t i = 0; i < sizeof sidecars / sizeof sidecars[0]; i++) {
        char name[4200];
        struct stat sb;
        if (snprintf(name, sizeof name, "%s%s", path, sidecars[i].suffix) < (int)sizeof name && lstat(name, &sb) != 0 &&
            errno == ENOENT)
            missing |= sidecars[i].flag;
    }
    return missing;
}

/* A handle that can write joins `e`: it fixes the environment's durability
 * if no such handle did, or must ask for the same. */
static coffer_status join_durability(cf_env *e, const char *path, int durability)
{
    if (e->durability_fixed) {
        if (e->durability == durability)
            return COFFER_OK;
        return cf_error(COFFER_ERR_BUSY, "'%s' is already open in this process with durability %s and cannot also be "
                        "opened with durability %s: the handles of a file share its storage environment",
                        path, cf_durability_name(e->durability), cf_durability_name(durability));
    }
    unsigned all = MDB_NOSYNC | MDB_NOMETASYNC, want = cf_durability_flags(durability);
    int rc = mdb_env_set_flags(e->mdb, all & ~want, 0);
    if (rc == 0 && want)
        rc = mdb_env_set_flags(e->mdb, want, 1);
    if (rc != 0)
        return cf_error_mdb(rc, "setting the durability");
    e->durability = durability;
    e->durability_fixed = 1;
    return COFFER_OK;
}

static coffer_status acquire_file(const char *path, int read_only, uint64_t max_file_size, int durability, cf_env **out)
{
    struct stat sb;
    unsigned created = 0;
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
        created = CF_CREATED_DATA;
        if (stat(path, &sb) != 0)
            return cf_error(COFFER_ERR_IO, "cannot open '%s': %s", path, strerror(errno));
    }
    if (S_ISDIR(sb.st_mode))
        return cf_error(COFFER_ERR_IO, "cannot open '%s': it is a directory", path);
    for (cf_env *e = registry; e; e = e->next) {
        if (!e->memory_id && e->dev == sb.st_dev && e->ino == sb.st_ino && !cf_env_inherited(e)) {
            if (e->read_only && !read_only)
                return cf_error(COFFER_ERR_BUSY, "'%s' is already open read-only in this process and cannot also be opened for writing", path);
            if (!read_only) {
                coffer_status st = join_durability(e, path, durability);
                if (st != COFFER_OK)
                    return st;
            }
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
    if (!(created & CF_CREATED_DATA))
        created |= missing_sidecars(path);
    else
        created |= CF_CREATED_LOCK | CF_CREATED_NOTE;
    cf_env *env = env_new();
    if (!env || !(env->path = strdup(path))) {
        env_free(env);
        if (created & CF_CREATED_DATA)
            cf_remove_leftovers(path, created);
        return cf_error(COFFER_ERR_NO_MEMORY, "out of memory opening '%s'", path);
    }
    env->created = created;
    env->dev = sb.st_dev;
    env->ino = sb.st_ino;
    env->max_file_size = max_file_size;
    /* Read-only handles share a read-write environment when the file can be
     * written, so that a later read-write open in the process can join it. */
    env->read_only = read_only && access(path, W_OK) != 0;
    env->durability = read_only ? COFFER_DURABILITY_FULL : durability;
    env->durability_fixed = !read_only;
    char label[4200];
    snprintf(label, sizeof label, "'%s'", path);
    unsigned flags = env->read_only ? MDB_RDONLY : cf_durability_flags(env->durability);
    coffer_status st = open_mdb(env, path, flags, (uint64_t)sb.st_size, label);
    if (st == COFFER_OK)
        st = check_not_truncated(env, label);
    return register_env(env, st, out);
}

coffer_status cf_env_acquire(const char *path, const char *memory_id, int read_only,
                             uint64_t max_file_size, int durability, cf_env **out)
{
    cf_registry_lock();
    coffer_status st = memory_id ? acquire_memory(memory_id, read_only, max_file_size, out)
                                 : acquire_file(path, read_only, max_file_size, durability, out);
    cf_registry_unlock();
    return st;
}

int cf_env_file_is_open(const struct stat *sb)
{
    int open = 0;
    cf_registry_lock();
    for (cf_env *e = registry; e && !open; e = e->next)
        open = !e->memory_id && e->dev == sb->st_dev && e->ino == sb->st_ino && !cf_env_inherited(e);
    cf_registry_unlock();
    return open;
}

int cf_env_is_shared(const cf_env *env)
{
    cf_registry_lock();
    int shared = env->refcount > 1;
    cf_registry_unlock();
    return shared;
}

void cf_env_mark_served(cf_env *env)
{
    cf_registry_lock();
    env->served = 1;
    cf_registry_unlock();
}

void cf_env_dbi_lock(cf_env *env) { pthread_mutex_lock(&env->dbi_lock); }

void cf_env_dbi_unlock(cf_env *env) { pthread_mutex_unlock(&env->dbi_lock); }

int cf_env_inherited(const cf_env *env) { return env->pid != this_process(); }

void cf_env_release(cf_env *env)
{
    if (!env)
        return;
    cf_registry_lock();
    if (--env->refcount == 0) {
        for (cf_env **p = &registry; *p; p = &(*p)->next) {
            if (*p == env) {
                *p = env->next;
                break;
            }
        }
        env_free(env);
    }
    cf_registry_unlock();
}

/* Remaps to `size` bytes, or to the largest half, quarter... of it above
 * the present map that the address space takes. LMDB allows it only while
 * the process has no transaction open. If LMDB loses the map all the same,
 * `broken` makes every later transaction fail instead of reading through
 * it. Called with env->lock. */
static void remap(cf_env *env, uint64_t size)
{
    uint64_t floor = size > env->map_size ? (uint64_t)env->map_size + 1 : size;
    uint64_t fits = fit_address_space(size, floor);
    if (fits == 0)
        return;
    if (mdb_env_set_mapsize(env->mdb, page_round(fits)) != 0) {
        env->broken = 1; /* with no transaction open, only the new mapping can have failed */
        return;
    }
    MDB_envinfo info;
    mdb_env_info(env->mdb, &info);
    env->map_size = info.me_mapsize;
}

/* Grows the map before it fills: once the file (whichever process wrote
 * it) uses more than half of it, or after a write found it full; and brings
 * it within a maximum file size lowered by a later handle. Called with
 * env->lock and no transaction of the process open. */
static void adjust_map(cf_env *env)
{
    uint64_t used = used_bytes(env);
    /* At almost every transaction the map is under half full, no growth was
     * asked for and no size cap applies: nothing to work out then. */
    if (used <= env->map_size / 2 && !env->grow_pending && !env->max_file_size)
        return;
    uint64_t basis = env->grow_pending && env->map_size > used ? env->map_size : used;
    uint64_t target = map_target(env, basis);
    int grow = (used > env->map_size / 2 || env->grow_pending) && page_round(target) > env->map_size;
    int shrink = env->max_file_size && page_round(target) < env->map_size;
    if (grow || shrink)
        remap(env, target);
    env->grow_pending = 0;
}

coffer_status cf_env_txn_begin(cf_env *env, int write, MDB_txn **out)
{
    pthread_t self = pthread_self();
    const char *name = env->path ? env->path : env->memory_id;
    if (cf_env_inherited(env))
        return cf_error(COFFER_ERR_MISUSE, "%s was opened by process %ld and cannot be used in process %ld, a fork() of it; "
                        "open it again in this process", name, (long)env->pid, (long)getpid());
    pthread_mutex_lock(&env->lock);
    if (write && env->has_writer && pthread_equal(env->writer, self)) {
        pthread_mutex_unlock(&env->lock);
        return cf_error(COFFER_ERR_MISUSE, "this thread already holds the write transaction of %s; commit or abort it first", name);
    }
    if (env->active_txns == 0 && !env->broken)
        adjust_map(env);
    if (env->broken) {
        pthread_mutex_unlock(&env->lock);
        return cf_error(COFFER_ERR_NO_MEMORY, "%s lost its map when it was resized (out of address space); close every handle of it and open it again", name);
    }
    env->active_txns++;
    pthread_mutex_unlock(&env->lock);

    int rc = mdb_txn_begin(env->mdb, NULL, write ? 0 : MDB_RDONLY, out);
    if (rc == MDB_MAP_RESIZED) {
        /* Another process grew the file beyond our map while this process
         * kept transactions open: adopt it once they are closed. */
        pthread_mutex_lock(&env->lock);
        int adopt = env->active_txns == 1;
        if (adopt)
            remap(env, map_target(env, used_bytes(env)));
        adopt = adopt && !env->broken;
        pthread_mutex_unlock(&env->lock);
        /* not under env->lock: a write transaction may wait for another process */
        if (adopt)
            rc = mdb_txn_begin(env->mdb, NULL, write ? 0 : MDB_RDONLY, out);
    }
    pthread_mutex_lock(&env->lock);
    if (rc != 0) {
        env->active_txns--;
        pthread_mutex_unlock(&env->lock);
        if (rc == MDB_MAP_RESIZED)
            return cf_error(COFFER_ERR_BUSY, "%s grew beyond the %zu bytes this process maps while transactions of this process "
                            "stayed open; end them (and stop observers) and retry", name, env->map_size);
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
    size_t map = env->map_size;
    pthread_mutex_unlock(&env->lock);
    if (capped)
        return cf_error(COFFER_ERR_FILE_TOO_LARGE, "%s: the file reached its maximum size of %llu bytes; nothing of this transaction was committed",
                        what, (unsigned long long)cap);
    return cf_error(COFFER_ERR_MAP_FULL, "%s: this transaction needs more than the %zu bytes mapped for the file, which can grow "
                    "only while this process has no other transaction open; nothing of it was committed, and the map grows before "
                    "the next transaction that begins with none open: retry it then", what, map);
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

coffer_status cf_copy_seed(const char *seed, const char *path, cf_seed_check_fn check, void *ctx, coffer_progress_fn progress,
                           void *progress_ctx)
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
    struct stat sb;
    uint64_t copied = 0;
    cf_progress report;
    coffer_status st = cf_progress_begin(&report, progress, progress_ctx, COFFER_PROGRESS_SEED_COPY,
                                         fstat(in, &sb) == 0 ? (uint64_t)sb.st_size : 0);
    while (st == COFFER_OK) {
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
        copied += (uint64_t)n;
        st = cf_progress_step(&report, copied);
    }
    close(in);
    if (st == COFFER_OK && fsync(out) != 0)
        st = cf_error(COFFER_ERR_IO, "cannot sync '%s': %s", tmp, strerror(errno));
    close(out);
    if (st == COFFER_OK && check)
        st = check(tmp, ctx);
    if (st == COFFER_OK)
        st = cf_progress_end(&report); /* the last moment to cancel: nothing is at the path yet */
    /* link() does not replace: if the path appeared meanwhile, it wins. */
    if (st == COFFER_OK && link(tmp, path) != 0 && errno != EEXIST)
        st = cf_error(COFFER_ERR_IO, "cannot create '%s' from the seed file: %s", path, strerror(errno));
    unlink(tmp);
    return st;
}

/* Every default path ever set is kept for the life of the process (a list,
 * one entry per coffer_set_default_path() call), so the pointer
 * coffer_default_path() returns stays valid while another thread sets a new
 * one; the current one is read atomically. */
struct kept_path {
    struct kept_path *older;
    char path[];
};
static _Atomic(struct kept_path *) default_path_value;

const char *cf_default_path(void)
{
    struct kept_path *current = atomic_load_explicit(&default_path_value, memory_order_acquire);
    return current && current->path[0] ? current->path : "default.coffer";
}

char *cf_default_path_copy(void) { return strdup(cf_default_path()); }

COFFER_API const char *coffer_default_path(void) { return cf_default_path(); }

COFFER_API coffer_status coffer_set_default_path(const char *path)
{
    if (path && !*path)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "default path must not be empty");
    size_t len = path ? strlen(path) : 0; /* an empty entry stands for "default.coffer" */
    struct kept_path *kept = malloc(sizeof *kept + len + 1);
    if (!kept)
        return cf_error(COFFER_ERR_NO_MEMORY, "out of memory setting the default path");
    memcpy(kept->path, path ? path : "", len + 1);
    cf_registry_lock();
    kept->older = atomic_load_explicit(&default_path_value, memory_order_relaxed);
    atomic_store_explicit(&default_path_value, kept, memory_order_release);
    cf_registry_unlock();
    return COFFER_OK;
}
