/* lifecycle — what coffer_open does to a file before the usual opening:
 * compacting it on launch, deleting it when a migration is needed; and what
 * it removes again when the opening fails (leftovers.c). */
#ifndef COFFER_LIFECYCLE_H
#define COFFER_LIFECYCLE_H

#include "coffer.h"
#include "storage/config.h"

/* Asks the configuration's compact-on-launch callback and compacts the file
 * at `path` in place when it says so, the file is not open in this process
 * and no other process has it open. Call with the file's open gate held
 * (open/open_gate.h): two threads must not compact one file. */
coffer_status cf_compact_on_launch(const coffer_config *config, const char *path);

/* Deletes the data and lock files of the database at `path` (a missing one
 * is not an error). */
coffer_status cf_delete_database_files(const char *path);

/* Opens `<path>-lock` (creating it when `create`) and takes the write lock
 * on its byte 0. Every process that has the database open holds a read lock
 * there, so success proves that none has, and keeps new openers waiting
 * until the returned descriptor is closed. -1 when another process holds
 * it or the file cannot be opened; *missing is set when it did not exist
 * (with `create`, this call created it: the caller removes it again). */
int cf_exclusion_lock(const char *path, int create, int *missing);

/* What an open created beside `path`, for cf_remove_leftovers. */
#define CF_CREATED_DATA 1u /* the data file itself */
#define CF_CREATED_LOCK 2u /* `<path>-lock` */
#define CF_CREATED_NOTE 4u /* `<path>-note` */

/* After a failed open: removes the files of `created` (CF_CREATED_*) again,
 * under the exclusion lock, and the data file only while it holds no
 * committed transaction. Does nothing while another process has the
 * database open. */
void cf_remove_leftovers(const char *path, unsigned created);

/* fsync of a file, and of the directory holding `path` (so that a rename
 * or link in it is durable). */
coffer_status cf_sync_file(const char *path);
coffer_status cf_sync_dir(const char *path);

#endif
