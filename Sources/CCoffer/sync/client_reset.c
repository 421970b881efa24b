/* client_reset — the client reset modes (docs/SYNC.md, "Client reset") and
 * their configuration. */
#include "sync/client_reset.h"

#include <stdlib.h>

#include "crypto/crypto.h"
#include "schema/schema.h"
#include "storage/config.h"
#include "storage/txn.h"
#include "sync/state.h"
#include "util/error.h"

COFFER_API coffer_status coffer_config_set_sync_client_reset(coffer_config *config, coffer_client_reset_mode mode,
                                                             coffer_client_reset_fn fn, void *ctx)
{
    CHECK_CONFIG(config, "coffer_config_set_sync_client_reset");
    if (mode != COFFER_CLIENT_RESET_RECOVER_UNSYNCED && mode != COFFER_CLIENT_RESET_DISCARD_UNSYNCED &&
        mode != COFFER_CLIENT_RESET_MANUAL)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT,
                        "coffer_config_set_sync_client_reset: unknown mode %d (0 recover, 1 discard, 2 manual)", (int)mode);
    config->sync_reset_mode = mode;
    config->sync_reset_fn = fn;
    config->sync_reset_ctx = fn ? ctx : NULL;
    return COFFER_OK;
}

const char *cf_sync_client_reset_name(coffer_client_reset_mode mode)
{
    switch (mode) {
    case COFFER_CLIENT_RESET_RECOVER_UNSYNCED: return "recover unsynced changes";
    case COFFER_CLIENT_RESET_DISCARD_UNSYNCED: return "discard unsynced changes";
    case COFFER_CLIENT_RESET_MANUAL: return "manual";
    }
    return "unknown";
}

/* Deletes every object of the file's top-level classes (embedded objects go
 * with their owners). */
static coffer_status delete_objects(coffer_txn *txn)
{
    coffer_status st = COFFER_OK;
    for (size_t c = 0; c < txn->db->schema->nclasses && st == COFFER_OK; c++)
        if (!cf_class_embedded(&txn->db->schema->classes[c]))
            st = coffer_class_clear(txn, (coffer_class_id)c);
    return st;
}

coffer_status cf_sync_client_reset_apply(coffer_db *db, coffer_client_reset_mode mode, const char *partition)
{
    if (mode == COFFER_CLIENT_RESET_MANUAL)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "a manual client reset is left to the app");
    coffer_txn *txn;
    coffer_status st = coffer_txn_begin(db, COFFER_TXN_WRITE, &txn);
    if (st != COFFER_OK)
        return st;
    txn->log_always = 1;
    st = coffer_txn_set_origin(txn, COFFER_ORIGIN_REMOTE);
    if (st == COFFER_OK && mode == COFFER_CLIENT_RESET_DISCARD_UNSYNCED) {
        if ((st = delete_objects(txn)) == COFFER_OK)
            st = cf_sync_forget_state(txn);
    }
    /* A new client that downloads the history from the start: what it holds
     * merges as no change, and what the service has and it lacks arrives. */
    cf_sync_progress prog;
    if (st == COFFER_OK && (st = cf_sync_progress_read(txn, &prog)) == COFFER_OK) {
        prog.server_version = 0;
        if (mode == COFFER_CLIENT_RESET_DISCARD_UNSYNCED)
            prog.acked_client_version = 0;
        st = cf_sync_progress_write(txn, &prog);
    }
    char *stored = NULL;
    uint8_t id[CF_SYNC_ID_SIZE];
    if (st == COFFER_OK && (st = cf_sync_partition(txn, &stored)) == COFFER_OK) {
        cf_random(id, sizeof id);
        st = cf_sync_set_identity(txn, id, stored ? stored : partition);
    }
    free(stored);
    return cf_sync_txn_finish(txn, st);
}
