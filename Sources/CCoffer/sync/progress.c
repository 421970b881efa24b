/* progress — the configuration of sync progress and of downloading before
 * open (include/coffer.h, coffer_config_set_sync_progress_callback and
 * coffer_config_set_sync_download_before_open); the session counts the
 * bytes (sync/session.c). */
#include "storage/config.h"
#include "util/error.h"

COFFER_API coffer_status coffer_config_set_sync_progress_callback(coffer_config *config, coffer_sync_progress_fn fn,
                                                                  void *ctx)
{
    CHECK_CONFIG(config, "coffer_config_set_sync_progress_callback");
    config->sync_progress_fn = fn;
    config->sync_progress_ctx = fn ? ctx : NULL;
    return COFFER_OK;
}

COFFER_API coffer_status coffer_config_set_sync_download_before_open(coffer_config *config, int mode,
                                                                     uint64_t timeout_ms)
{
    CHECK_CONFIG(config, "coffer_config_set_sync_download_before_open");
    if (mode != COFFER_SYNC_DOWNLOAD_NEVER && mode != COFFER_SYNC_DOWNLOAD_ONCE && mode != COFFER_SYNC_DOWNLOAD_ALWAYS)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT,
                        "coffer_config_set_sync_download_before_open: mode %d is none of NEVER (0), ONCE (1), "
                        "ALWAYS (2)",
                        mode);
    config->sync_download_before_open = mode;
    config->sync_download_timeout_ms = timeout_ms;
    return COFFER_OK;
}
