/* env — the process-wide registry of LMDB environments (one per file, shared
 * by every handle of the process), map sizing and growth, in-memory stores,
 * seed files and the default path. */
#ifndef COFFER_ENV_H
#define COFFER_ENV_H

#include <lmdb.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "coffer.h"
#include "storage/signal.h"

/* Sub-database 0 holds metadata; class table t keeps its objects in 2t and
 * its index entries in 2t+1. One more handle than the numbered ones is
 * reserved for the scratch sub-database of a format upgrade. */
#define CF_META_DBI 0u
#define CF_GRAPH_DBI 1u /* collections and backlinks */
#define CF_MAX_DBIS (2u * COFFER_MAX_CLASSES + 2u)
#define CF_SCRATCH_DBI_NAME "upgrade"

typedef struct cf_env {
    MDB_env *mdb;
    int refcount;
    dev_t dev;
    ino_t ino;
    char *path;        /* file path; NULL for in-memory */
    char *memory_id;   /* in-memory identifier; NULL for files */
    pid_t pid;         /* the process that opened it: LMDB environments do not survive fork() */
    int read_only;     /* opened with MDB_RDONLY */
    cf_signal *signal; /* commits of every process, for observers */

    int lock_fd;       /* our descriptor of the lock file (kept while LMDB's is open), or -1 */
    unsigned created;  /* CF_CREATED_* files that opening this environment created */
    int served;        /* a coffer_open succeeded through it: it created nothing to remove */
    unsigned psize;    /* LMDB's page size of the file */
    int durability;       /* coffer_durability of its commits (durability.c) */
    int durability_fixed; /* a handle that can write fixed it; read-only ones do not */

    pthread_mutex_t dbi_lock; /* recursive; see cf_env_dbi_lock */
    pthread_mutex_t lock; /* guards everything below */
    int active_txns;      /* transactions of this process */
    int grow_pending;     /* a write found the map full: grow before the next */
    int broken;           /* the map was lost in a failed remap: no more transactions */
    size_t map_size;
    uint64_t max_file_size; /* 0 = unlimited */
    int has_writer;
    pthread_t writer;
    MDB_dbi dbis[CF_MAX_DBIS]; /* by sub-database number; 0 = not open */
    unsigned char dbi_open[CF_MAX_DBIS];

    struct cf_env *next;
} cf_env;

/* Finds or opens the environment of `path` (when memory_id is NULL) or of the
 * in-memory store `memory_id`, adding a reference. `read_only` asks for a
 * read-only handle; a handle that can write asks for `durability` (a
 * coffer_durability), which the first one fixes for the environment: a
 * later one asking for another fails with COFFER_ERR_BUSY. Takes the
 * registry lock for the call. */
coffer_status cf_env_acquire(const char *path, const char *memory_id, int read_only,
                             uint64_t max_file_size, int durability, cf_env **out);

/* LMDB's environment flags for a coffer_durability. */
unsigned cf_durability_flags(int durability);

/* The name of a coffer_durability, for messages ("full", "normal", "none");
 * NULL for a value that is none. */
const char *cf_durability_name(int durability);

/* Whether the file `sb` describes is open in this process. */
int cf_env_file_is_open(const struct stat *sb);

/* Whether another reference than the caller's holds `env`. */
int cf_env_is_shared(const cf_env *env);

/* Records that a coffer_open succeeded through `env`: the files it created
 * stay when it closes. */
void cf_env_mark_served(cf_env *env);

/* Serialises the transactions that open sub-databases of `env` (LMDB
 * allows that in one transaction of the environment at a time): an
 * opening's passes hold it, and so does a copy opening a source's
 * sub-database. Recursive. */
void cf_env_dbi_lock(cf_env *env);
void cf_env_dbi_unlock(cf_env *env);

/* Whether `env` was opened by another process (this one is a fork() of
 * it). Such an environment must not be used nor closed: LMDB would act on
 * the parent's reader slots and locks. */
int cf_env_inherited(const cf_env *env);

/* Drops a reference; the last one closes the environment. Takes the
 * registry lock for the call. */
void cf_env_release(cf_env *env);

/* Guards the registry of environments, the gates of the opens in progress
 * (open/open_gate.h) and the default path. Held only for short steps, never
 * across an open's passes, migration, compaction or seed copy. Recursive. */
void cf_registry_lock(void);
void cf_registry_unlock(void);

/* Begins an LMDB transaction. With no other transaction of the process
 * open, it first grows the map once the file uses more than half of it (or
 * a write found it full) and adopts a file another process grew beyond it
 * (MDB_MAP_RESIZED). Fails with COFFER_ERR_MISUSE if this thread already
 * holds the write transaction. */
coffer_status cf_env_txn_begin(cf_env *env, int write, MDB_txn **out);

/* Accounts for the end of a transaction begun by cf_env_txn_begin. */
void cf_env_txn_end(cf_env *env, int write);

/* Maps a MDB_MAP_FULL on a write to COFFER_ERR_FILE_TOO_LARGE when the map
 * reached the configured maximum file size, else to COFFER_ERR_MAP_FULL
 * (one transaction wrote more than the reserved room while the process kept
 * other transactions open), arranging growth before the next one. */
coffer_status cf_env_map_full(cf_env *env, const char *what);

/* Looks up (and with `create`, creates) sub-database `number` in `txn`. The
 * handle is remembered for the process once `remember` is set, which the
 * caller does only after the transaction that opened it committed. */
coffer_status cf_env_dbi(cf_env *env, MDB_txn *txn, uint32_t number, int create, MDB_dbi *out);
void cf_env_remember_dbi(cf_env *env, uint32_t number, MDB_dbi dbi);
int cf_env_known_dbi(cf_env *env, uint32_t number, MDB_dbi *out);

/* Copies `seed` to `path` atomically (temporary file, fsync, link). `check`
 * (may be NULL) is given the temporary copy before it takes the path; a
 * status other than COFFER_OK from it leaves nothing behind. `progress`
 * (may be NULL) is told the bytes copied as COFFER_PROGRESS_SEED_COPY, and
 * cancelling from it leaves nothing behind either. */
typedef coffer_status (*cf_seed_check_fn)(const char *copy, void *ctx);
coffer_status cf_copy_seed(const char *seed, const char *path, cf_seed_check_fn check, void *ctx, coffer_progress_fn progress,
                           void *progress_ctx);

/* The default path; read it with the registry held, or take a copy (NULL
 * when out of memory) that a concurrent coffer_set_default_path() leaves
 * intact. */
const char *cf_default_path(void);
char *cf_default_path_copy(void);

#endif
