/* reported_copy — LMDB's copy of an environment written to a new file
 * while a progress callback is told the bytes written and may cancel. */
#ifndef COFFER_REPORTED_COPY_H
#define COFFER_REPORTED_COPY_H

#include <lmdb.h>

#include "coffer.h"
#include "util/progress.h"

/* Writes the copy of `env` that mdb_env_copyfd2(env, fd, flags) makes to
 * the new file `path` (created; it must not exist), reporting the bytes
 * written through `progress`, which the caller has begun and ends. LMDB
 * writes into a pipe from a thread of its own while the calling thread
 * moves the bytes to the file, so the callback runs on the calling thread
 * and cancelling stops LMDB's copy. Returns COFFER_OK, COFFER_ERR_IO or
 * COFFER_ERR_CANCELLED; on failure nothing is left at `path`. With no
 * callback it is mdb_env_copy2(). */
coffer_status cf_copy_env_reported(MDB_env *env, const char *path, unsigned flags, cf_progress *progress);

#endif
