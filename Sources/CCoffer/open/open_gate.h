/* open_gate — one lock per database file (or in-memory store) for the
 * opens of this process: an open holds its file's gate from the seed copy
 * to the end of its migration, so that a second open of the same file
 * waits for the first and finds its outcome, while opens of other files go
 * on. The registry lock guards only the map of gates, briefly. */
#ifndef COFFER_OPEN_GATE_H
#define COFFER_OPEN_GATE_H

#include "coffer.h"

typedef struct cf_open_gate cf_open_gate;

/* Waits for and takes the gate of the file at `path` (when memory_id is
 * NULL) or of the in-memory store `memory_id`. A file is known by its path
 * with symbolic links resolved, so two spellings of one path share a gate;
 * a file that does not exist yet, by its resolved folder and its name. The
 * gate is recursive: a migration or progress callback may open the same
 * file again on its own thread. Gates taken by another process (this one is
 * a fork() of it) are not waited for. Errors: COFFER_ERR_NO_MEMORY. */
coffer_status cf_open_gate_enter(const char *path, const char *memory_id, cf_open_gate **out);

/* Releases a gate taken by cf_open_gate_enter on the same thread. */
void cf_open_gate_leave(cf_open_gate *gate);

#endif
