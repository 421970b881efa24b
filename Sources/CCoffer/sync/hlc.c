/* hlc — hybrid logical clock values and the clock source they read. The
 * source is process-wide (a function pointer swapped atomically) so that a
 * test can move time forward for every handle at once. */
#include "sync/hlc.h"

#include <stdatomic.h>
#include <time.h>

#include "coffer.h"

typedef struct clock_source {
    coffer_clock_fn fn;
    void *ctx;
} clock_source;

static clock_source sources[2];
static _Atomic(clock_source *) current = NULL;
static atomic_int next_slot = 0;

COFFER_API void coffer_sync_set_clock_source(coffer_clock_fn fn, void *ctx)
{
    if (!fn) {
        atomic_store(&current, NULL);
        return;
    }
    /* Two slots: a reader of the old one is not disturbed by this write. */
    int slot = atomic_fetch_add(&next_slot, 1) & 1;
    sources[slot] = (clock_source){fn, ctx};
    atomic_store(&current, &sources[slot]);
}

uint64_t cf_hlc_now_ms(void)
{
    clock_source *s = atomic_load(&current);
    if (s)
        return s->fn(s->ctx);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

uint64_t cf_hlc_next(uint64_t previous)
{
    uint64_t now = cf_hlc_now_ms() & ((UINT64_C(1) << 48) - 1);
    uint64_t wall = now << 16;
    return wall > previous + 1 ? wall : previous + 1;
}
