/* wire — the primitive encodings of the sync protocol (docs/SYNC.md, "Wire
 * protocol"): LEB128 and zigzag varints, little-endian u64, length-prefixed
 * bytes and strings, 16-byte ids, and values, written into a cf_buf and read
 * back through a bounds-checked reader that names what was being read when
 * the input ends early or holds something impossible. */
#ifndef COFFER_SYNC_WIRE_H
#define COFFER_SYNC_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "coffer.h"
#include "util/buffer.h"

/* Value tags (docs/SYNC.md, "Values"). */
enum {
    CF_SV_NULL = 0,
    CF_SV_BOOL = 1,
    CF_SV_INT = 2,
    CF_SV_FLOAT = 3,
    CF_SV_DOUBLE = 4,
    CF_SV_STRING = 5,
    CF_SV_BINARY = 6,
    CF_SV_DATE = 7,
    CF_SV_OBJECT_ID = 8,
    CF_SV_UUID = 9,
    CF_SV_DECIMAL128 = 10,
    CF_SV_LINK = 11,
    CF_SV_EMBEDDED = 12,
    CF_SV_LIST = 13,
    CF_SV_MAP = 14
};

/* Deepest nesting of values (embedded objects, lists, maps) a reader accepts. */
#define CF_WIRE_MAX_DEPTH (COFFER_MAX_NESTING + 2)

/* A run of bytes inside a frame (borrowed from it). */
typedef struct cf_slice {
    const uint8_t *p;
    size_t n;
} cf_slice;

/* Writers: append to `b` (an allocation failure sets b->failed). */
void cf_wire_varint(cf_buf *b, uint64_t v);
void cf_wire_zigzag(cf_buf *b, int64_t v);
void cf_wire_u64le(cf_buf *b, uint64_t v);
void cf_wire_u8(cf_buf *b, uint8_t v);
void cf_wire_bytes(cf_buf *b, const void *p, size_t n);
static inline void cf_wire_string(cf_buf *b, const char *s, size_t n) { cf_wire_bytes(b, s, n); }

/* A reader over [p, end). `frame` names the frame or record being read in
 * error messages ("DOWNLOAD frame"). */
typedef struct cf_wreader {
    const uint8_t *start, *p, *end;
    const char *frame;
} cf_wreader;

static inline cf_wreader cf_wreader_make(const void *data, size_t n, const char *frame)
{
    const uint8_t *p = data;
    return (cf_wreader){p, p, p + n, frame};
}

static inline size_t cf_wreader_left(const cf_wreader *r) { return (size_t)(r->end - r->p); }

/* Readers: COFFER_OK, or COFFER_ERR_CORRUPTED with a message naming the
 * frame, `what` was being read and the byte offset. Nothing is read past
 * `end`. */
coffer_status cf_wire_get_varint(cf_wreader *r, uint64_t *out, const char *what);
coffer_status cf_wire_get_zigzag(cf_wreader *r, int64_t *out, const char *what);
coffer_status cf_wire_get_u64le(cf_wreader *r, uint64_t *out, const char *what);
coffer_status cf_wire_get_u8(cf_wreader *r, uint8_t *out, const char *what);
coffer_status cf_wire_get_raw(cf_wreader *r, size_t n, const uint8_t **out, const char *what);
coffer_status cf_wire_get_bytes(cf_wreader *r, cf_slice *out, const char *what);
/* A string: bytes without NUL, so that it can be copied to a C string (the
 * object layer checks UTF-8 where a string becomes a value). */
coffer_status cf_wire_get_string(cf_wreader *r, cf_slice *out, const char *what);
/* A count of items that each take at least `min_size` bytes: refused when
 * the rest of the input cannot hold them (so a hostile count never makes a
 * reader allocate more than the input justifies). */
coffer_status cf_wire_get_count(cf_wreader *r, uint64_t *out, size_t min_size, const char *what);

/* Checks one value (of any tag, nested up to CF_WIRE_MAX_DEPTH) and returns
 * its bytes, tag included, in `*out`. */
coffer_status cf_wire_get_value(cf_wreader *r, cf_slice *out, const char *what);

/* The error for a reader that found something impossible (not a truncation). */
coffer_status cf_wire_bad(const cf_wreader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Copies a slice to a NUL-terminated heap string (NULL when out of memory). */
char *cf_slice_strdup(cf_slice s);

static inline int cf_slice_eq(cf_slice a, cf_slice b) { return a.n == b.n && (a.n == 0 || __builtin_memcmp(a.p, b.p, a.n) == 0); }
static inline int cf_slice_eq_str(cf_slice a, const char *s) { return a.n == __builtin_strlen(s) && __builtin_memcmp(a.p, s, a.n) == 0; }

#endif
