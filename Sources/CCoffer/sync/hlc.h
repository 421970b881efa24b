/* hlc — the hybrid logical clock of docs/SYNC.md ("Clocks"): 48 bits of
 * wall-clock milliseconds and a 16-bit counter, and the process-wide clock
 * source it reads (the system clock, or one a test installs with
 * coffer_sync_set_clock_source to simulate days passing). */
#ifndef COFFER_SYNC_HLC_H
#define COFFER_SYNC_HLC_H

#include <stdint.h>

/* Milliseconds since 1970 from the installed source. */
uint64_t cf_hlc_now_ms(void);

/* The clock of a new local change after `previous`: max(previous + 1, now << 16). */
uint64_t cf_hlc_next(uint64_t previous);

/* The clock after seeing a remote clock: max(local, remote) + 1. */
static inline uint64_t cf_hlc_observe(uint64_t local, uint64_t remote)
{
    return (local > remote ? local : remote) + 1;
}

#endif
