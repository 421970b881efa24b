/* file_version — keeping a file's version when it is rewritten. LMDB's
 * compacting copy starts the copy's transaction ids at 1, and a copy written
 * entry by entry starts them at its own first commit; Coffer's versions are
 * those ids, and they must never go back (observers, the change log and the
 * sync client's outbox are ordered by them). So a compacted or copied file,
 * before anyone opens it, is given the version of the file it came from. */
#ifndef COFFER_FILE_VERSION_H
#define COFFER_FILE_VERSION_H

#include <stdint.h>

#include "coffer.h"

/* Raises the version (LMDB's last transaction id) of the closed data file at
 * `path` to `version` when it is lower; a no-op otherwise. Both meta pages
 * then describe the file's current tree, the newest under `version`, so
 * LMDB may pick either. The file must be one no process has open (a copy
 * written beside its final name). COFFER_ERR_IO (naming the path) if it
 * cannot be read or written, COFFER_ERR_CORRUPTED if its meta pages are not
 * LMDB 0.9's. */
coffer_status cf_file_raise_version(const char *path, uint64_t version);

#endif
