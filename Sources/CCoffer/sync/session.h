/* session — one synced handle's sync session (docs/SYNC.md, "Wire
 * protocol"): a thread that connects through the transport, says HELLO,
 * uploads the outbox in bounded batches, integrates downloads and
 * acknowledges them, and reconnects with backoff; and the calls that wait
 * for it, pause and resume it. */
#ifndef COFFER_SYNC_SESSION_H
#define COFFER_SYNC_SESSION_H

#include "storage/config.h"
#include "storage/handles.h"

/* Most bytes of one UPLOAD frame, and unacknowledged upload bytes. */
#define CF_SYNC_FRAME_BYTES (1u << 20)
#define CF_SYNC_WINDOW_BYTES (4u << 20)

/* Starts the session of `db` as `config` says (sync URL set): makes the
 * file a synced one if it is not, then starts the thread. */
coffer_status cf_sync_session_start(coffer_db *db, const coffer_config *config);

/* Waits for the download when `config` asks for it before open
 * (coffer_config_set_sync_download_before_open); COFFER_OK at once otherwise. */
coffer_status cf_sync_session_download_before_open(coffer_db *db, const coffer_config *config);

/* Stops and frees the session of `db` (joins its thread); no-op without one. */
void cf_sync_session_stop(coffer_db *db);

/* Flexible sync (sync/subscriptions.c): the latest subscription set
 * version the session of `db` sent to the service (0 without a session),
 * and the call that tells the session a new set was committed. */
uint64_t cf_sync_session_subscriptions_sent(coffer_db *db);
void cf_sync_session_subscriptions_changed(coffer_db *db);

/* The built-in transport for ws:// URLs (sync/websocket.c). */
extern const coffer_sync_transport cf_websocket_transport;

#endif
