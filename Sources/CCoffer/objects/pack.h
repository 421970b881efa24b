/* pack — writes objects' values into a caller's buffer in the packed layout
 * of coffer.h ("Batch reads and writes"): the header, one row per object,
 * copied bytes behind the rows. Shared by coffer_object_pack() (objects/)
 * and coffer_results_pack() (query/); it reads through the object module's
 * public calls only, never record bytes. */
#ifndef COFFER_PACK_H
#define COFFER_PACK_H

#include "storage/handles.h"

typedef struct cf_packer {
    uint8_t *buf;
    size_t cap;
    size_t rows;          /* rows the call packs */
    size_t nvalues;       /* values per row */
    size_t row_size;
    size_t rows_end;      /* offset of the first copied byte */
    size_t size;          /* bytes needed so far: rows, then copied bytes */
    int borrow;           /* strings are addresses, not copies */
    coffer_value *values; /* one row read, before it is packed */
    coffer_value small[16];
} cf_packer;

/* Checks the arguments common to the pack calls (`fn` names the call in
 * messages) and starts packing `rows` rows of `props` of class `cls` read
 * in `txn`. On error nothing was written and the packer needs no end. */
coffer_status cf_pack_begin(cf_packer *pk, const char *fn, coffer_txn *txn, coffer_class_id cls,
                            const coffer_property_id *props, size_t nvalues, int flags, void *buf, size_t cap,
                            size_t rows, size_t *needed);

/* Packs row `row`: the values of `obj`, or (obj NULL) a deleted object
 * with key `key`. Writes only what fits; counts everything. */
coffer_status cf_pack_row(cf_packer *pk, size_t row, coffer_object *obj, coffer_object_key key,
                          const coffer_property_id *props);

/* Ends packing: writes the header if everything fit, sets `*needed`, and
 * returns `st` (the status of the rows), or COFFER_ERR_BUFFER_TOO_SMALL. */
coffer_status cf_pack_end(cf_packer *pk, const char *fn, coffer_status st, size_t *needed);

#endif
