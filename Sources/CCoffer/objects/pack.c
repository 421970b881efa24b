/* pack — the packed layout of coffer.h written from objects' values: the
 * header, one fixed-size row per object (its key, then a 24-byte value per
 * property asked for), and the bytes of copied strings and binaries behind
 * the rows. Values are read with coffer_object_get_values(), so whatever
 * the storage below does, a row holds what the one-value calls return. */
#include "objects/pack.h"

#include <string.h>

_Static_assert(sizeof(coffer_pack_header) == 32, "the packed header is 32 bytes");
_Static_assert(sizeof(coffer_pack_row) == 16, "a packed row starts with 16 bytes");
_Static_assert(sizeof(coffer_pack_value) == 24, "a packed value is 24 bytes");

#define HEADER_SIZE sizeof(coffer_pack_header)
#define ROW_HEAD sizeof(coffer_pack_row)

/* Where a string read in `txn` stays put for the whole read transaction:
 * a plain file's records are read in place from LMDB's map, which a read
 * transaction keeps as it was. A write transaction moves records as it
 * writes; an encrypted file's records are opened into the handle's memory. */
static int values_stay_put(const coffer_txn *txn) { return !txn->write && !txn->db->keys; }

coffer_status cf_pack_begin(cf_packer *pk, const char *fn, coffer_txn *txn, coffer_class_id cls,
                            const coffer_property_id *props, size_t nvalues, int flags, void *buf, size_t cap,
                            size_t rows, size_t *needed)
{
    memset(pk, 0, sizeof *pk);
    if (!needed)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "%s: needed is NULL", fn);
    *needed = 0;
    if (!buf && cap)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "%s: buf is NULL but capacity is %zu", fn, cap);
    if (!props && nvalues)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "%s: props is NULL but count is %zu", fn, nvalues);
    if (flags != COFFER_PACK_COPY && flags != COFFER_PACK_BORROW)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "%s: flags %d are neither COFFER_PACK_COPY nor COFFER_PACK_BORROW", fn,
                        flags);
    const cf_class *c = &txn->db->schema->classes[cls];
    for (size_t i = 0; i < nvalues; i++)
        if (props[i] >= c->nprops)
            return cf_error(COFFER_ERR_INVALID_ARGUMENT, "%s: class '%s' has no property with id %u (it has %zu), at "
                            "position %zu", fn, c->name, props[i], c->nprops, i);
    if (nvalues > (UINT32_MAX - ROW_HEAD) / sizeof(coffer_pack_value) || rows > UINT32_MAX ||
        (rows && (ROW_HEAD + nvalues * sizeof(coffer_pack_value)) > (SIZE_MAX - HEADER_SIZE) / rows))
        return cf_error(COFFER_ERR_LIMIT, "%s: %zu rows of %zu values do not fit in one buffer", fn, rows, nvalues);
    if (nvalues > sizeof pk->small / sizeof pk->small[0]) {
        pk->values = malloc(nvalues * sizeof *pk->values);
        if (!pk->values)
            return cf_error(COFFER_ERR_NO_MEMORY, "%s: out of memory", fn);
    } else {
        pk->values = pk->small;
    }
    pk->buf = buf;
    pk->cap = cap;
    pk->rows = rows;
    pk->nvalues = nvalues;
    pk->row_size = ROW_HEAD + nvalues * sizeof(coffer_pack_value);
    pk->rows_end = HEADER_SIZE + rows * pk->row_size;
    pk->size = pk->rows_end;
    pk->borrow = flags == COFFER_PACK_BORROW && values_stay_put(txn);
    return COFFER_OK;
}

/* The bytes of a string or binary: their address, or their offset once
 * copied behind the rows (with a NUL after them). */
static uint64_t bytes_ref(cf_packer *pk, const coffer_bytes *b)
{
    if (pk->borrow)
        return (uint64_t)(uintptr_t)b->data;
    size_t at = pk->size;
    pk->size += b->size + 1;
    if (pk->size <= pk->cap) {
        if (b->size)
            memcpy(pk->buf + at, b->data, b->size);
        pk->buf[at + b->size] = 0;
    }
    return at;
}

static void pack_value(cf_packer *pk, const coffer_value *v, coffer_pack_value *out)
{
    memset(out, 0, sizeof *out);
    out->type = (uint32_t)v->type;
    switch (v->type) {
    case COFFER_TYPE_BOOL: out->u.boolean = v->u.boolean ? 1 : 0; break;
    case COFFER_TYPE_INT: out->u.integer = v->u.integer; break;
    case COFFER_TYPE_FLOAT: out->u.float_value = v->u.float_value; break;
    case COFFER_TYPE_DOUBLE: out->u.double_value = v->u.double_value; break;
    case COFFER_TYPE_STRING:
    case COFFER_TYPE_BINARY:
        out->u.bytes.size = v->u.string.size;
        out->u.bytes.ref = bytes_ref(pk, &v->u.string);
        break;
    case COFFER_TYPE_DATE:
        out->u.integer = v->u.date.seconds;
        out->extra = (uint32_t)v->u.date.nanoseconds;
        break;
    case COFFER_TYPE_OBJECT_ID: memcpy(out->u.raw, v->u.object_id.bytes, sizeof v->u.object_id.bytes); break;
    case COFFER_TYPE_UUID: memcpy(out->u.raw, v->u.uuid.bytes, sizeof v->u.uuid.bytes); break;
    case COFFER_TYPE_DECIMAL128:
        out->u.words[0] = v->u.decimal128.w[0];
        out->u.words[1] = v->u.decimal128.w[1];
        break;
    case COFFER_TYPE_LINK:
        out->u.integer = (int64_t)v->u.link.key;
        out->extra = v->u.link.class_id;
        break;
    case COFFER_TYPE_LIST:
    case COFFER_TYPE_SET: out->u.integer = (int64_t)v->u.list.count; break;
    case COFFER_TYPE_MAP: out->u.integer = (int64_t)v->u.map.count; break;
    default: break;
    }
}

coffer_status cf_pack_row(cf_packer *pk, size_t row, coffer_object *obj, coffer_object_key key,
                          const coffer_property_id *props)
{
    if (obj) {
        coffer_status st = coffer_object_get_values(obj, props, pk->nvalues, pk->values);
        if (st != COFFER_OK)
            return st;
    } else {
        memset(pk->values, 0, pk->nvalues * sizeof *pk->values);
    }
    /* Rows are written only when the whole row area fits; the bytes behind
     * them are counted either way, for the size needed. */
    int write_row = pk->rows_end <= pk->cap;
    /* A NULL buffer (capacity 0, asking for the size) has no row to point at. */
    uint8_t *at = write_row ? pk->buf + HEADER_SIZE + row * pk->row_size : NULL;
    if (write_row) {
        coffer_pack_row head = {.key = key, .flags = obj ? 0 : COFFER_PACK_ROW_DELETED};
        memcpy(at, &head, sizeof head);
    }
    for (size_t i = 0; i < pk->nvalues; i++) {
        coffer_pack_value v;
        pack_value(pk, &pk->values[i], &v);
        if (write_row)
            memcpy(at + ROW_HEAD + i * sizeof v, &v, sizeof v);
    }
    return COFFER_OK;
}

coffer_status cf_pack_end(cf_packer *pk, const char *fn, coffer_status st, size_t *needed)
{
    if (pk->values != pk->small)
        free(pk->values);
    pk->values = NULL;
    if (st != COFFER_OK)
        return st;
    *needed = pk->size;
    if (pk->size > pk->cap)
        return cf_error(COFFER_ERR_BUFFER_TOO_SMALL, "%s: the buffer holds %zu bytes, %zu are needed", fn, pk->cap,
                        pk->size);
    coffer_pack_header h = {.magic = COFFER_PACK_MAGIC,
                            .version = COFFER_PACK_VERSION,
                            .flags = pk->borrow ? COFFER_PACK_BORROW : 0,
                            .row_count = (uint32_t)pk->rows,
                            .value_count = (uint32_t)pk->nvalues,
                            .row_size = pk->row_size,
                            .size = pk->size};
    memcpy(pk->buf, &h, sizeof h);
    return COFFER_OK;
}
