/* error_report — telling the app of the sync service's ERROR frames through
 * the callback of coffer_config_set_sync_error_callback(): the code, its
 * name, the message, and for a compensating write the refused object's
 * class and primary key. */
#ifndef COFFER_SYNC_ERROR_REPORT_H
#define COFFER_SYNC_ERROR_REPORT_H

#include "sync/frames.h"

/* Calls `fn(ctx, event)` for `e` (nothing when `fn` is NULL) on the calling
 * thread; everything the event points to lives until it returns. */
void cf_sync_report_error(coffer_sync_error_fn fn, void *ctx, const cf_frame_error *e);

#endif
