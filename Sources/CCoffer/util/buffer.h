/* buffer — a growing byte buffer for encoders and message builders. */
#ifndef COFFER_BUFFER_H
#define COFFER_BUFFER_H

#include <stddef.h>
#include <stdint.h>

/* Zero-initialise to start; the owner frees `p`. A NUL always follows the
 * `len` bytes written (not counted), so text can be read as a C string. */
typedef struct cf_buf {
    uint8_t *p;
    size_t len, cap;
    int failed; /* an allocation failed: nothing more was appended */
} cf_buf;

/* Appends `n` bytes of `src`. */
void cf_buf_put(cf_buf *b, const void *src, size_t n);

#endif
