/* reserve — disk space: reserving it for the files that are written through
 * shared mappings (LMDB's lock file, its reader table, and the note file of
 * the commit signal), and naming a full disk when a write fails. A store into a mapped page the filesystem cannot back kills
 * the process with SIGBUS; reserving the blocks first turns a full disk into
 * an error at open. (The data file needs nothing: without MDB_WRITEMAP,
 * LMDB writes it with pwrite, which reports ENOSPC.) */
#ifndef COFFER_RESERVE_H
#define COFFER_RESERVE_H

#include <lmdb.h>
#include <sys/types.h>

#include "coffer.h"

/* Allocates the blocks of bytes [0, size) of `fd` (growing the file to
 * `size` if shorter; never shrinking it). A filesystem that cannot reserve
 * space ahead is not an error. COFFER_ERR_IO naming `name` when the disk is
 * full, over quota or failing. */
coffer_status cf_reserve_space(int fd, off_t size, const char *name);

/* The size LMDB gives the lock file of `mdb` (created, not yet open): its
 * reader table for the environment's maximum number of readers. */
off_t cf_lock_file_size(MDB_env *mdb);

/* Opens `<path>-lock` (creating it) and reserves its space before LMDB maps
 * it: the whole table for a new (empty) file, the blocks of its present size
 * for an existing one, whose size other processes may rely on. Sets *fd to
 * the open descriptor, which the caller keeps until after mdb_env_close() if
 * LMDB has opened the file meanwhile (closing any descriptor of a file drops
 * the process's locks on it), or -1 when the file cannot be opened for
 * writing (a read-only folder: LMDB decides then). COFFER_ERR_IO when the
 * space cannot be reserved; the file is left for the caller to remove. */
coffer_status cf_reserve_lock_file(MDB_env *mdb, const char *path, int *fd);

/* The error of a failed LMDB write (`rc`, from a commit or a put of `mdb`),
 * as cf_error_mdb gives it, except that a write LMDB reports as EIO because
 * it was cut short is named for what it is: the disk is full, when the
 * file's filesystem has (almost) no room left, or the file reached the
 * process's file size limit (RLIMIT_FSIZE, also for EFBIG). */
coffer_status cf_error_write(MDB_env *mdb, int rc, const char *what);

#endif
