/* error — status codes and the thread-local last error. */
#include "util/error.h"

#include <errno.h>
#include <lmdb.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define MESSAGE_SIZE 1024

static _Thread_local coffer_status last_status = COFFER_OK;
static _Thread_local char last_message[MESSAGE_SIZE];

COFFER_API const char *coffer_strerror(coffer_status status)
{
    switch (status) {
    case COFFER_OK: return "success";
    case COFFER_DONE: return "no more objects";
    case COFFER_ERR_INVALID_ARGUMENT: return "invalid argument";
    case COFFER_ERR_NO_MEMORY: return "out of memory";
    case COFFER_ERR_IO: return "I/O error";
    case COFFER_ERR_NOT_FOUND: return "not found";
    case COFFER_ERR_MISUSE: return "misuse of the API";
    case COFFER_ERR_NOT_IN_WRITE: return "not in a write transaction";
    case COFFER_ERR_READ_ONLY: return "database is read-only";
    case COFFER_ERR_SCHEMA: return "invalid schema";
    case COFFER_ERR_MIGRATION_REQUIRED: return "migration required";
    case COFFER_ERR_SCHEMA_VERSION: return "schema version lower than the file's";
    case COFFER_ERR_TYPE: return "wrong value type";
    case COFFER_ERR_PRIMARY_KEY_EXISTS: return "primary key already exists";
    case COFFER_ERR_IMMUTABLE: return "property is immutable";
    case COFFER_ERR_MAP_FULL: return "map full; retry the write transaction";
    case COFFER_ERR_FILE_TOO_LARGE: return "maximum file size reached";
    case COFFER_ERR_NOT_A_DATABASE: return "file is not a Coffer database";
    case COFFER_ERR_FORMAT_VERSION: return "file format not readable by this library";
    case COFFER_ERR_CORRUPTED: return "file is corrupted";
    case COFFER_ERR_INTEGRITY: return "integrity check failed";
    case COFFER_ERR_KEY_REQUIRED: return "file is encrypted and no key was given";
    case COFFER_ERR_WRONG_KEY: return "wrong encryption key";
    case COFFER_ERR_NOT_ENCRYPTED: return "file is not encrypted";
    case COFFER_ERR_LIMIT: return "limit reached";
    case COFFER_ERR_BUSY: return "file is busy";
    case COFFER_ERR_INTERNAL: return "internal error";
    case COFFER_ERR_QUERY: return "invalid query";
    case COFFER_ERR_INTERRUPTED: return "query interrupted";
    case COFFER_ERR_TIMEOUT: return "timed out";
    case COFFER_ERR_BUFFER_TOO_SMALL: return "buffer too small";
    case COFFER_ERR_CANCELLED: return "cancelled";
    }
    return "unknown status";
}

COFFER_API const char *coffer_last_error(void) { return last_message; }

COFFER_API coffer_status coffer_last_status(void) { return last_status; }

COFFER_API void coffer_clear_error(void)
{
    last_status = COFFER_OK;
    last_message[0] = '\0';
}

coffer_status cf_error(coffer_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_message, sizeof last_message, fmt, ap);
    va_end(ap);
    last_status = status;
    return status;
}

coffer_status cf_error_prefix(const char *fmt, ...)
{
    char prefix[512], old[MESSAGE_SIZE];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    memcpy(old, last_message, sizeof old);
    snprintf(last_message, sizeof last_message, "%.400s: %.600s", prefix, old);
    return last_status;
}

coffer_status cf_error_mdb(int rc, const char *what)
{
    coffer_status st;
    switch (rc) {
    case MDB_MAP_FULL: st = COFFER_ERR_MAP_FULL; break;
    case MDB_READERS_FULL: st = COFFER_ERR_LIMIT; break;
    case MDB_CORRUPTED:
    case MDB_PAGE_NOTFOUND:
    case MDB_INVALID:
    case MDB_VERSION_MISMATCH: st = COFFER_ERR_CORRUPTED; break;
    case MDB_NOTFOUND: st = COFFER_ERR_NOT_FOUND; break;
    case MDB_TXN_FULL:
    case MDB_DBS_FULL:
    case MDB_BAD_VALSIZE: st = COFFER_ERR_LIMIT; break;
    case ENOMEM: st = COFFER_ERR_NO_MEMORY; break;
    case EACCES:
    case EROFS: st = COFFER_ERR_READ_ONLY; break;
    case ENOSPC:
    case EDQUOT:
    case EFBIG:
    case EIO: st = COFFER_ERR_IO; break;
    default: st = COFFER_ERR_INTERNAL; break;
    }
    return cf_error(st, "%s: %s", what, mdb_strerror(rc));
}

const char *cf_quote(char *buf, size_t bufsize, const char *text, size_t len)
{
    size_t o = 0, max = bufsize > 8 ? bufsize - 8 : 0;
    if (bufsize == 0)
        return buf;
    buf[o++] = '\'';
    for (size_t i = 0; i < len && o < max; i++) {
        unsigned char c = (unsigned char)text[i];
        if (c >= 0x20 && c != 0x7f && c != '\\')
            buf[o++] = (char)c;
        else
            o += (size_t)snprintf(buf + o, bufsize - o, "\\x%02x", c);
    }
    if (o >= max && max > 0) {
        memcpy(buf + o, "...", 3);
        o += 3;
    }
    buf[o++] = '\'';
    buf[o] = '\0';
    return buf;
}
