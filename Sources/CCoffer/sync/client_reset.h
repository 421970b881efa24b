/* client_reset — what a file does when the sync service answers ERROR
 * CLIENT_RESET (docs/SYNC.md, "Client reset"): in the recover and discard
 * modes it becomes a new client that downloads the partition's history again
 * (its progress back to 0), keeping (recover) or deleting (discard) its
 * synced objects and its commits not yet uploaded. */
#ifndef COFFER_SYNC_CLIENT_RESET_H
#define COFFER_SYNC_CLIENT_RESET_H

#include "storage/handles.h"

/* Resets the file of `db` in one commit marked remote (nothing of it is
 * uploaded); `partition` is stored when the file has none. The manual mode
 * is not applied here (COFFER_ERR_INVALID_ARGUMENT). */
coffer_status cf_sync_client_reset_apply(coffer_db *db, coffer_client_reset_mode mode, const char *partition);

/* The mode's name, for messages. */
const char *cf_sync_client_reset_name(coffer_client_reset_mode mode);

#endif
