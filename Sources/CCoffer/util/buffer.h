/* buffer — growing memory: a byte buffer for encoders and message builders,
 * and the doubling of heap arrays that grow one element at a time. */
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

/* Appends `v` as an unsigned LEB128 varint (1 to 10 bytes). */
void cf_buf_varint(cf_buf *b, uint64_t v);

/* Makes room for one more element in a heap array that holds `n` elements
 * of `elem` bytes in `*cap` slots: returns the array, reallocated to twice
 * its capacity (`first_cap` slots at the start) when it is full, and updates
 * `*cap`. Returns NULL when out of memory; the array is then unchanged. */
void *cf_grow(void *items, size_t n, size_t *cap, size_t elem, size_t first_cap);

#endif
