/* interrupt — coffer_interrupt() and the guard a running query checks (see
 * interrupt.h). An interrupt bumps a counter on the database handle; a guard
 * remembers the counter's value when its call began and stops once it
 * moves, so every query running at the time of the interrupt stops and any
 * begun later runs normally. */
#include <time.h>

#include "util/error.h"
#include "query/interrupt.h"

/* How many checks pass between two readings of the clock. */
#define CLOCK_EVERY 64

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

COFFER_API coffer_status coffer_interrupt(coffer_db *db)
{
    if (!db || __atomic_load_n(&db->magic, __ATOMIC_RELAXED) != CF_DB_MAGIC)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "database handle is NULL or not a database");
    __atomic_add_fetch(&db->interrupts, 1, __ATOMIC_RELEASE);
    return COFFER_OK;
}

void cf_qguard_start(cf_qguard *guard, const coffer_db *db)
{
    guard->db = db;
    guard->epoch = __atomic_load_n(&db->interrupts, __ATOMIC_ACQUIRE);
    guard->timeout_ms = 0;
    guard->deadline_ns = 0;
    guard->ticks = 0;
}

void cf_qguard_set_timeout(cf_qguard *guard, uint64_t timeout_ms)
{
    guard->timeout_ms = timeout_ms;
    guard->ticks = 0;
    if (timeout_ms)
        guard->deadline_ns = now_ns() + (timeout_ms > UINT64_MAX / 2000000u ? UINT64_MAX / 2 : timeout_ms * 1000000u);
}

coffer_status cf_qguard_check(cf_qguard *guard)
{
    if (!guard)
        return COFFER_OK;
    if (__atomic_load_n(&guard->db->interrupts, __ATOMIC_RELAXED) != guard->epoch)
        return cf_error(COFFER_ERR_INTERRUPTED, "query: interrupted by coffer_interrupt()");
    if (guard->timeout_ms && ++guard->ticks >= CLOCK_EVERY) {
        guard->ticks = 0;
        if (now_ns() >= guard->deadline_ns)
            return cf_error(COFFER_ERR_INTERRUPTED, "query: interrupted: it ran longer than its timeout of %llu ms",
                            (unsigned long long)guard->timeout_ms);
    }
    return COFFER_OK;
}
