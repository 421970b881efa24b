/* signal — tells every process that has a file open that a commit happened,
 * without polling: a commit counter in a small shared file beside the
 * database (`<path>-note`), which committers increment and waiters sleep on
 * (a futex on Linux). An in-memory store keeps its counter in this process.
 * docs/FORMAT.md, "The note file", describes it. */
#ifndef COFFER_SIGNAL_H
#define COFFER_SIGNAL_H

#include <stdint.h>

#include "coffer.h"

typedef struct cf_signal cf_signal;

/* Opens the note file of the database at `path` (creating it unless
 * `read_only`, its space reserved before it is mapped), or a process-local
 * counter when `path` is NULL, into *out. A file that cannot be opened or
 * mapped (a read-only folder without one) gives a signal that never wakes
 * early: waiters then rely on their timeout. Fails only when out of memory
 * and with COFFER_ERR_IO when the disk has no room for the note file. */
coffer_status cf_signal_open(const char *path, int read_only, cf_signal **out);

void cf_signal_close(cf_signal *sig);

/* The counter now. */
uint32_t cf_signal_value(cf_signal *sig);

/* After a commit: increments the counter and wakes every waiter of every
 * process. */
void cf_signal_commit(cf_signal *sig);

/* Wakes this process's waiters without counting a commit (to stop one). */
void cf_signal_poke(cf_signal *sig);

/* Sleeps while the counter equals `seen`, at most `timeout_ms`
 * milliseconds; returns early on a commit or a poke (or spuriously: the
 * caller checks what it waits for). */
void cf_signal_wait(cf_signal *sig, uint32_t seen, int timeout_ms);

#endif
