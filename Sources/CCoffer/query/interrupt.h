/* interrupt — what stops a running query before it ends: coffer_interrupt()
 * on its database handle, called from any thread, and the query's own
 * timeout (coffer_query_set_timeout()). A run takes a guard when it starts
 * and checks it as it goes: once per object it reads and once per element
 * a SUBQUERY visits, so the check is never far away however the query is
 * shaped. */
#ifndef COFFER_QUERY_INTERRUPT_H
#define COFFER_QUERY_INTERRUPT_H

#include <stdint.h>

#include "storage/handles.h"

typedef struct cf_qguard {
    const coffer_db *db;
    uint64_t epoch;       /* the database's interrupt count when the call began */
    uint64_t timeout_ms;  /* 0: none */
    uint64_t deadline_ns; /* monotonic clock; meaningful when timeout_ms > 0 */
    unsigned ticks;       /* checks since the clock was last read */
} cf_qguard;

/* Starts a guard for a call on `db`: coffer_interrupt() calls from now on
 * stop it. No timeout yet. */
void cf_qguard_start(cf_qguard *guard, const coffer_db *db);

/* Gives the guard a deadline `timeout_ms` from now (0: none). */
void cf_qguard_set_timeout(cf_qguard *guard, uint64_t timeout_ms);

/* COFFER_OK, or COFFER_ERR_INTERRUPTED with a message saying whether
 * coffer_interrupt() or the timeout stopped the query. NULL never stops. */
coffer_status cf_qguard_check(cf_qguard *guard);

#endif
