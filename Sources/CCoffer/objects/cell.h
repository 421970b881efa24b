/* cell — the encoding of one value stored outside a record's fixed columns:
 * a mixed property, a collection element or a map value (docs/FORMAT.md).
 * A cell is a type tag and a payload. Inside the library a cell's value is a
 * coffer_value in "stored form": a link carries the target's table number
 * (not a class id) in u.link.class_id, and a nested list or map carries its
 * collection id in u.link.key. */
#ifndef COFFER_CELL_H
#define COFFER_CELL_H

#include <stddef.h>
#include <stdint.h>

#include "coffer.h"

/* Size of the cell of stored-form value `v`. */
size_t cf_cell_size(const coffer_value *v);

/* Writes that cell into out[0 .. cf_cell_size(v)). */
void cf_cell_write(uint8_t *out, const coffer_value *v);

/* Decodes the cell p[0..n) into stored form; strings and binaries borrow p.
 * COFFER_ERR_CORRUPTED if it is not a valid cell. */
coffer_status cf_cell_read(const uint8_t *p, size_t n, coffer_value *out);

/* Writes the identity of `v` (equal values by coffer_value_equal give equal
 * identities: -0.0 and 0.0, every NaN, 1.0 and 1.00 as decimals) as a head
 * of fixed bytes into head[0..*headlen) (at most 40 bytes) and a body
 * pointer for strings and binaries. */
void cf_cell_identity(const coffer_value *v, uint8_t head[40], size_t *headlen, const void **body, size_t *bodylen);

/* The stored-form helpers. */
static inline coffer_value cf_stored_link(uint32_t table, uint64_t key)
{
    coffer_value v;
    v.type = COFFER_TYPE_LINK;
    v.u.link.class_id = table;
    v.u.link.key = key;
    return v;
}
static inline coffer_value cf_stored_nested(coffer_type kind, uint64_t id)
{
    coffer_value v;
    v.type = kind;
    v.u.link.class_id = 0;
    v.u.link.key = id;
    return v;
}

#endif
