/* error — status codes and the thread-local last error (code + message). */
#ifndef COFFER_ERROR_H
#define COFFER_ERROR_H

#include "coffer.h"

/* Sets the calling thread's last error and returns `status`, so that callers
 * can write `return cf_error(COFFER_ERR_TYPE, "...", ...);`. The message is
 * formatted with printf rules and truncated to the buffer. */
coffer_status cf_error(coffer_status status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Prepends "context: " to the calling thread's current message, keeping its
 * status; returns that status. Used to add the class or file to a lower
 * layer's message. */
coffer_status cf_error_prefix(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Maps an LMDB return code to a status and message, naming `what`. */
coffer_status cf_error_mdb(int rc, const char *what);

/* Copies at most `max` bytes of `text` into a quoted, printable form for
 * messages ("abc…" with non-printables as \xNN). Returns `buf`. */
const char *cf_quote(char *buf, size_t bufsize, const char *text, size_t len);

#endif
