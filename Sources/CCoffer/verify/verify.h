/* verify — coffer_verify(): the page walk (verify/pages.h), then, on a sound
 * structure, the contents (verify/logic.c); and the refusal of damaged files
 * that opening a file with verify-on-open, or copying a seed file, asks for. */
#ifndef COFFER_VERIFY_H
#define COFFER_VERIFY_H

#include "storage/handles.h"
#include "verify/pages.h"
#include "verify/report.h"

/* Checks every object, collection, index entry, backlink, counter and
 * change-log entry of the open database `db` in a read transaction of its
 * own, adding findings to `r`; `pages` locates the page of a finding.
 * Fails only when the check itself cannot go on (out of memory). */
coffer_status cf_verify_contents(coffer_db *db, cf_pages *pages, coffer_verify_report *r);

/* Verifies the file at `path` (with `key`, COFFER_ENCRYPTION_KEY_SIZE bytes
 * or NULL): COFFER_OK if it is sound, COFFER_ERR_CORRUPTED naming `what`
 * (e.g. "the seed file 'x'") and the first finding if not, or the error that
 * kept it from being checked. */
coffer_status cf_verify_or_refuse(const char *path, const uint8_t *key, const char *what);

#endif
