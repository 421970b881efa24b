/* progress — reporting one phase of a long open. */
#include "util/progress.h"

#include "util/error.h"

const char *cf_progress_phase_name(coffer_progress_phase phase)
{
    switch (phase) {
    case COFFER_PROGRESS_SEED_COPY: return "seed copy";
    case COFFER_PROGRESS_SHOULD_COMPACT: return "compact-on-launch check";
    case COFFER_PROGRESS_COMPACTION: return "compaction";
    case COFFER_PROGRESS_MIGRATION: return "migration";
    case COFFER_PROGRESS_COPY: return "copy";
    }
    return "open";
}

static coffer_status report(cf_progress *p, uint64_t done)
{
    if (!p->fn)
        return COFFER_OK;
    if (p->cancelled || p->fn(p->phase, done, p->total, p->ctx) != 0) {
        p->cancelled = 1;
        return cf_error(COFFER_ERR_CANCELLED, "the progress callback cancelled the %s (at %llu of %llu); nothing was changed",
                        cf_progress_phase_name(p->phase), (unsigned long long)done, (unsigned long long)p->total);
    }
    p->last = done;
    return COFFER_OK;
}

coffer_status cf_progress_begin(cf_progress *p, coffer_progress_fn fn, void *ctx, coffer_progress_phase phase, uint64_t total)
{
    *p = (cf_progress){.fn = fn, .ctx = ctx, .phase = phase, .total = total};
    return report(p, 0);
}

coffer_status cf_progress_step(cf_progress *p, uint64_t done)
{
    if (!p || !p->fn)
        return COFFER_OK;
    if (p->cancelled)
        return report(p, p->last);
    uint64_t step = p->total / 100 ? p->total / 100 : 1;
    if (done >= p->total || done < p->last + step)
        return COFFER_OK;
    return report(p, done);
}

coffer_status cf_progress_end(cf_progress *p)
{
    if (!p || !p->fn)
        return COFFER_OK;
    return report(p, p->total);
}
