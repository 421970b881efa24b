/* lifecycle — what coffer_open does to a file before the usual opening:
 * compacting it on launch, deleting it when a migration is needed. */
#ifndef COFFER_LIFECYCLE_H
#define COFFER_LIFECYCLE_H

#include "coffer.h"
#include "storage/config.h"

/* Asks the configuration's compact-on-launch callback and compacts the file
 * at `path` in place when it says so, the file is not open in this process
 * and no other process has it open. Call with the registry held. */
coffer_status cf_compact_on_launch(const coffer_config *config, const char *path);

/* Deletes the data and lock files of the database at `path` (a missing one
 * is not an error). */
coffer_status cf_delete_database_files(const char *path);

/* fsync of a file, and of the directory holding `path` (so that a rename
 * or link in it is durable). */
coffer_status cf_sync_file(const char *path);
coffer_status cf_sync_dir(const char *path);

#endif
