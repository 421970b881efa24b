/* progress — reporting one phase of a long open to the progress callback
 * (coffer_config_set_progress): 0 first, total last, at most about once
 * per percent in between, and the callback's request to cancel. */
#ifndef COFFER_PROGRESS_H
#define COFFER_PROGRESS_H

#include <stdint.h>

#include "coffer.h"

typedef struct cf_progress {
    coffer_progress_fn fn; /* NULL: nothing is reported, nothing cancels */
    void *ctx;
    coffer_progress_phase phase;
    uint64_t total;
    uint64_t last; /* the last `done` reported */
    int cancelled;
} cf_progress;

/* Starts `phase` of `total` units and reports 0 of it. COFFER_OK, or
 * COFFER_ERR_CANCELLED with the last error set if the callback cancels. */
coffer_status cf_progress_begin(cf_progress *p, coffer_progress_fn fn, void *ctx, coffer_progress_phase phase, uint64_t total);

/* `done` units are complete: reported if it is a percent of the total (or
 * more) past the last report and below the total. As cf_progress_begin. */
coffer_status cf_progress_step(cf_progress *p, uint64_t done);

/* Reports the phase as complete (total of total). As cf_progress_begin. */
coffer_status cf_progress_end(cf_progress *p);

/* The name of a phase in messages: "seed copy", "migration", ... */
const char *cf_progress_phase_name(coffer_progress_phase phase);

#endif
