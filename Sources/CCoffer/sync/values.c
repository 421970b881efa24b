/* values — converting between the file's values and the sync encoding.
 * Encoding reads through the public object and collection calls, so it sees
 * exactly what an app sees; decoding resolves class and property names and
 * primary keys in the file being written. */
#include "sync/values.h"

#include <stdlib.h>
#include <string.h>

#include "util/error.h"

static coffer_status encode_list(coffer_txn *txn, coffer_list *l, cf_buf *b, int depth);
static coffer_status encode_map(coffer_txn *txn, coffer_map *m, cf_buf *b, int depth);
static coffer_status encode(coffer_txn *txn, const coffer_value *v, coffer_list *list, coffer_map *map, cf_buf *b,
                            int depth);

static coffer_status put_le(cf_buf *b, const void *p, size_t n)
{
    cf_buf_put(b, p, n); /* the values are little-endian in memory on every supported target */
    return COFFER_OK;
}

static coffer_status encode_object_props(coffer_object *obj, cf_buf *b, int depth)
{
    coffer_txn *txn = obj->txn;
    const cf_class *c = &txn->db->schema->classes[obj->cls];
    uint64_t n = 0;
    for (size_t i = 0; i < c->nprops; i++)
        n += c->props[i].type != COFFER_TYPE_LINKING_OBJECTS;
    cf_wire_varint(b, n);
    for (size_t i = 0; i < c->nprops; i++) {
        if (c->props[i].type == COFFER_TYPE_LINKING_OBJECTS)
            continue;
        cf_wire_string(b, c->props[i].name, strlen(c->props[i].name));
        coffer_status st = cf_sync_encode_prop(obj, (coffer_property_id)i, b);
        if (st != COFFER_OK)
            return st;
    }
    (void)depth;
    return COFFER_OK;
}

coffer_status cf_sync_encode_pk(coffer_object *obj, cf_buf *b)
{
    const cf_class *c = &obj->txn->db->schema->classes[obj->cls];
    if (c->pk < 0) {
        cf_wire_u8(b, CF_SV_NULL);
        return COFFER_OK;
    }
    coffer_value v;
    coffer_status st = coffer_object_get_value(obj, (coffer_property_id)c->pk, &v);
    return st == COFFER_OK ? encode(obj->txn, &v, NULL, NULL, b, 0) : st;
}

static coffer_status encode_link(coffer_txn *txn, coffer_link l, cf_buf *b, int depth)
{
    const cf_schema *s = txn->db->schema;
    if (l.class_id >= s->nclasses) { /* a class this handle does not see */
        cf_wire_u8(b, CF_SV_NULL);
        return COFFER_OK;
    }
    const cf_class *c = &s->classes[l.class_id];
    coffer_object *o;
    coffer_status st = coffer_object_get(txn, l.class_id, l.key, &o);
    if (st != COFFER_OK)
        return st;
    if (cf_class_embedded(c)) {
        cf_wire_u8(b, CF_SV_EMBEDDED);
        cf_wire_string(b, c->name, strlen(c->name));
        st = encode_object_props(o, b, depth + 1);
    } else {
        cf_wire_u8(b, CF_SV_LINK);
        cf_wire_string(b, c->name, strlen(c->name));
        st = cf_sync_encode_pk(o, b);
    }
    coffer_object_release(o);
    return st;
}

static coffer_status encode(coffer_txn *txn, const coffer_value *v, coffer_list *list, coffer_map *map, cf_buf *b,
                            int depth)
{
    if (depth > COFFER_MAX_NESTING)
        return cf_error(COFFER_ERR_LIMIT, "sync: values nested deeper than %d levels", COFFER_MAX_NESTING);
    switch (v->type) {
    case COFFER_TYPE_NULL:
        cf_wire_u8(b, CF_SV_NULL);
        return COFFER_OK;
    case COFFER_TYPE_BOOL:
        cf_wire_u8(b, CF_SV_BOOL);
        cf_wire_u8(b, v->u.boolean ? 1 : 0);
        return COFFER_OK;
    case COFFER_TYPE_INT:
        cf_wire_u8(b, CF_SV_INT);
        cf_wire_zigzag(b, v->u.integer);
        return COFFER_OK;
    case COFFER_TYPE_FLOAT:
        cf_wire_u8(b, CF_SV_FLOAT);
        return put_le(b, &v->u.float_value, 4);
    case COFFER_TYPE_DOUBLE:
        cf_wire_u8(b, CF_SV_DOUBLE);
        return put_le(b, &v->u.double_value, 8);
    case COFFER_TYPE_STRING:
        cf_wire_u8(b, CF_SV_STRING);
        cf_wire_bytes(b, v->u.string.data, v->u.string.size);
        return COFFER_OK;
    case COFFER_TYPE_BINARY:
        cf_wire_u8(b, CF_SV_BINARY);
        cf_wire_bytes(b, v->u.binary.data, v->u.binary.size);
        return COFFER_OK;
    case COFFER_TYPE_DATE:
        cf_wire_u8(b, CF_SV_DATE);
        cf_wire_zigzag(b, v->u.date.seconds);
        cf_wire_zigzag(b, v->u.date.nanoseconds);
        return COFFER_OK;
    case COFFER_TYPE_OBJECT_ID:
        cf_wire_u8(b, CF_SV_OBJECT_ID);
        cf_buf_put(b, v->u.object_id.bytes, 12);
        return COFFER_OK;
    case COFFER_TYPE_UUID:
        cf_wire_u8(b, CF_SV_UUID);
        cf_buf_put(b, v->u.uuid.bytes, 16);
        return COFFER_OK;
    case COFFER_TYPE_DECIMAL128:
        cf_wire_u8(b, CF_SV_DECIMAL128);
        cf_wire_u64le(b, v->u.decimal128.w[0]);
        cf_wire_u64le(b, v->u.decimal128.w[1]);
        return COFFER_OK;
    case COFFER_TYPE_LINK:
        return encode_link(txn, v->u.link, b, depth);
    case COFFER_TYPE_LIST:
    case COFFER_TYPE_SET:
        if (list)
            return encode_list(txn, list, b, depth + 1);
        break;
    case COFFER_TYPE_MAP:
        if (map)
            return encode_map(txn, map, b, depth + 1);
        break;
    default:
        break;
    }
    return cf_error(COFFER_ERR_INTERNAL, "sync: a %s value cannot be encoded here", coffer_type_name(v->type));
}

coffer_status cf_sync_encode_value(coffer_txn *txn, const coffer_value *v, coffer_list *list, coffer_map *map, cf_buf *b)
{
    return encode(txn, v, list, map, b, 0);
}

static coffer_status encode_list_elem(coffer_txn *txn, coffer_list *l, uint64_t i, cf_buf *b, int depth)
{
    coffer_value v;
    coffer_status st = coffer_list_get(l, i, &v);
    if (st != COFFER_OK)
        return st;
    if (v.type == COFFER_TYPE_LIST) {
        coffer_list *sub;
        if ((st = coffer_list_get_list(l, i, &sub)) == COFFER_OK) {
            st = encode_list(txn, sub, b, depth + 1);
            coffer_list_release(sub);
        }
        return st;
    }
    if (v.type == COFFER_TYPE_MAP) {
        coffer_map *sub;
        if ((st = coffer_list_get_map(l, i, &sub)) == COFFER_OK) {
            st = encode_map(txn, sub, b, depth + 1);
            coffer_map_release(sub);
        }
        return st;
    }
    return encode(txn, &v, NULL, NULL, b, depth);
}

coffer_status cf_sync_encode_list_elem(coffer_list *l, uint64_t i, cf_buf *b)
{
    coffer_status st = encode_list_elem(l->c.txn, l, i, b, 1);
    return st == COFFER_OK && b->failed ? cf_error(COFFER_ERR_NO_MEMORY, "out of memory encoding a value") : st;
}

static coffer_status encode_list(coffer_txn *txn, coffer_list *l, cf_buf *b, int depth)
{
    uint64_t n;
    coffer_status st = coffer_list_count(l, &n);
    if (st != COFFER_OK)
        return st;
    cf_wire_u8(b, CF_SV_LIST);
    cf_wire_varint(b, n);
    for (uint64_t i = 0; i < n && st == COFFER_OK; i++)
        st = encode_list_elem(txn, l, i, b, depth);
    return st;
}

coffer_status cf_sync_encode_set_elem(coffer_set *s, uint64_t i, cf_buf *b)
{
    coffer_value v;
    coffer_status st = coffer_set_get(s, i, &v);
    if (st == COFFER_OK)
        st = encode(s->c.txn, &v, NULL, NULL, b, 1);
    return st == COFFER_OK && b->failed ? cf_error(COFFER_ERR_NO_MEMORY, "out of memory encoding a value") : st;
}

static coffer_status encode_set(coffer_set *s, cf_buf *b)
{
    uint64_t n;
    coffer_status st = coffer_set_count(s, &n);
    if (st != COFFER_OK)
        return st;
    cf_wire_u8(b, CF_SV_LIST);
    cf_wire_varint(b, n);
    for (uint64_t i = 0; i < n && st == COFFER_OK; i++)
        st = cf_sync_encode_set_elem(s, i, b);
    return st;
}

/* Entry i of map `m`: its key into `key` (as a wire string) and value into `b`. */
static coffer_status encode_map_entry(coffer_txn *txn, coffer_map *m, uint64_t i, cf_buf *key, cf_buf *b, int depth)
{
    coffer_bytes k;
    coffer_value v;
    coffer_status st = coffer_map_get_entry(m, i, &k, &v);
    if (st != COFFER_OK)
        return st;
    cf_wire_bytes(key, k.data, k.size);
    if (v.type != COFFER_TYPE_LIST && v.type != COFFER_TYPE_MAP)
        return encode(txn, &v, NULL, NULL, b, depth);
    char *name = cf_slice_strdup((cf_slice){k.data, k.size});
    if (!name)
        return cf_error(COFFER_ERR_NO_MEMORY, "out of memory encoding a map");
    if (v.type == COFFER_TYPE_LIST) {
        coffer_list *sub;
        if ((st = coffer_map_get_list(m, name, k.size, &sub)) == COFFER_OK) {
            st = encode_list(txn, sub, b, depth + 1);
            coffer_list_release(sub);
        }
    } else {
        coffer_map *sub;
        if ((st = coffer_map_get_map(m, name, k.size, &sub)) == COFFER_OK) {
            st = encode_map(txn, sub, b, depth + 1);
            coffer_map_release(sub);
        }
    }
    free(name);
    return st;
}

coffer_status cf_sync_encode_map_entry(coffer_map *m, uint64_t i, cf_buf *key, cf_buf *b)
{
    coffer_status st = encode_map_entry(m->c.txn, m, i, key, b, 1);
    return st == COFFER_OK && (b->failed || key->failed) ? cf_error(COFFER_ERR_NO_MEMORY, "out of memory encoding a value") : st;
}

static coffer_status encode_map(coffer_txn *txn, coffer_map *m, cf_buf *b, int depth)
{
    uint64_t n;
    coffer_status st = coffer_map_count(m, &n);
    if (st != COFFER_OK)
        return st;
    cf_wire_u8(b, CF_SV_MAP);
    cf_wire_varint(b, n);
    for (uint64_t i = 0; i < n && st == COFFER_OK; i++)
        st = encode_map_entry(txn, m, i, b, b, depth);
    return st;
}

coffer_status cf_sync_encode_prop(coffer_object *obj, coffer_property_id prop, cf_buf *b)
{
    coffer_value v;
    coffer_status st = coffer_object_get_value(obj, prop, &v);
    if (st != COFFER_OK)
        return st;
    coffer_txn *txn = obj->txn;
    if (v.type == COFFER_TYPE_LIST) {
        coffer_list *l;
        if ((st = coffer_object_get_list(obj, prop, &l)) == COFFER_OK) {
            st = encode_list(txn, l, b, 1);
            coffer_list_release(l);
        }
    } else if (v.type == COFFER_TYPE_SET) {
        coffer_set *s;
        if ((st = coffer_object_get_set(obj, prop, &s)) == COFFER_OK) {
            st = encode_set(s, b);
            coffer_set_release(s);
        }
    } else if (v.type == COFFER_TYPE_MAP) {
        coffer_map *m;
        if ((st = coffer_object_get_map(obj, prop, &m)) == COFFER_OK) {
            st = encode_map(txn, m, b, 1);
            coffer_map_release(m);
        }
    } else {
        st = encode(txn, &v, NULL, NULL, b, 0);
    }
    if (st == COFFER_OK && b->failed)
        st = cf_error(COFFER_ERR_NO_MEMORY, "out of memory encoding a value");
    return st;
}

/* ------------------------------------------------------------------------ */
/* Decoding                                                                  */
/* ------------------------------------------------------------------------ */

void *cf_arena_alloc(cf_arena *a, size_t size)
{
    void **blocks = cf_grow(a->blocks, a->n, &a->cap, sizeof *a->blocks, 8);
    if (!blocks)
        return NULL;
    a->blocks = blocks;
    void *p = calloc(1, size ? size : 1);
    if (p)
        a->blocks[a->n++] = p;
    return p;
}

void cf_arena_free(cf_arena *a)
{
    for (size_t i = 0; i < a->n; i++)
        free(a->blocks[i]);
    free(a->blocks);
    memset(a, 0, sizeof *a);
}

int cf_sync_class_named(const cf_schema *s, cf_slice name)
{
    char buf[COFFER_MAX_CLASS_NAME + 1];
    if (name.n > COFFER_MAX_CLASS_NAME)
        return -1;
    memcpy(buf, name.p, name.n);
    buf[name.n] = 0;
    return cf_schema_find(s, buf);
}

int cf_sync_prop_named(const cf_class *c, cf_slice name)
{
    char buf[COFFER_MAX_PROPERTY_NAME + 1];
    if (name.n > COFFER_MAX_PROPERTY_NAME)
        return -1;
    memcpy(buf, name.p, name.n);
    buf[name.n] = 0;
    return cf_class_find_prop(c, buf);
}

typedef struct decoder {
    coffer_txn *txn;
    cf_arena *arena;
} decoder;

static coffer_status decode(decoder *d, cf_wreader *r, coffer_value *out, int *missing, int depth);

static coffer_status no_memory(void)
{
    return cf_error(COFFER_ERR_NO_MEMORY, "out of memory decoding a synced value");
}

static coffer_status find_class(decoder *d, cf_slice name, coffer_class_id *out)
{
    int i = cf_sync_class_named(d->txn->db->schema, name);
    if (i < 0)
        return cf_error(COFFER_ERR_SCHEMA, "sync: class '%.*s' is not in this file's schema", (int)name.n,
                        (const char *)name.p);
    *out = (coffer_class_id)i;
    return COFFER_OK;
}

static coffer_status decode_link(decoder *d, cf_wreader *r, coffer_value *out, int *missing)
{
    cf_slice name, pkenc;
    coffer_class_id cls = 0;
    coffer_value pk;
    coffer_object *o;
    coffer_status st = cf_wire_get_string(r, &name, "a link's class");
    if (st == COFFER_OK)
        st = cf_wire_get_value(r, &pkenc, "a link's primary key");
    if (st == COFFER_OK)
        st = find_class(d, name, &cls);
    if (st == COFFER_OK)
        st = cf_sync_decode_scalar(pkenc, &pk);
    if (st != COFFER_OK)
        return st;
    st = coffer_object_find(d->txn, cls, &pk, &o);
    if (st == COFFER_ERR_NOT_FOUND) {
        *out = coffer_value_null();
        *missing = 1;
        return COFFER_OK;
    }
    if (st != COFFER_OK)
        return st;
    *out = coffer_value_link(cls, coffer_object_key_of(o));
    coffer_object_release(o);
    return COFFER_OK;
}

static coffer_status decode_embedded(decoder *d, cf_wreader *r, coffer_value *out, int depth)
{
    cf_slice name;
    coffer_class_id cls = 0;
    uint64_t n;
    coffer_status st = cf_wire_get_string(r, &name, "an embedded object's class");
    if (st == COFFER_OK)
        st = find_class(d, name, &cls);
    if (st == COFFER_OK)
        st = cf_wire_get_count(r, &n, 2, "an embedded object's properties");
    if (st != COFFER_OK)
        return st;
    const cf_class *c = &d->txn->db->schema->classes[cls];
    coffer_field *fields = cf_arena_alloc(d->arena, (size_t)n * sizeof *fields);
    if (!fields)
        return no_memory();
    size_t nf = 0;
    for (uint64_t i = 0; i < n; i++) {
        cf_slice pname;
        int lost = 0;
        if ((st = cf_wire_get_string(r, &pname, "a property name")) != COFFER_OK)
            return st;
        int p = cf_sync_prop_named(c, pname);
        if (p < 0)
            return cf_error(COFFER_ERR_SCHEMA, "sync: class '%s' has no property '%.*s'", c->name, (int)pname.n, (const char *)pname.p);
        fields[nf].property = (coffer_property_id)p;
        if ((st = decode(d, r, &fields[nf].value, &lost, depth + 1)) != COFFER_OK)
            return st;
        nf++;
    }
    *out = coffer_value_fields(fields, nf);
    return COFFER_OK;
}

static coffer_status decode(decoder *d, cf_wreader *r, coffer_value *out, int *missing, int depth)
{
    uint8_t tag;
    const uint8_t *raw;
    uint64_t n;
    int64_t i, ns;
    cf_slice s;
    coffer_status st = cf_wire_get_u8(r, &tag, "a value");
    if (st != COFFER_OK)
        return st;
    if (depth > CF_WIRE_MAX_DEPTH)
        return cf_wire_bad(r, "values nested deeper than %d levels", CF_WIRE_MAX_DEPTH);
    memset(out, 0, sizeof *out);
    switch (tag) {
    case CF_SV_NULL:
        *out = coffer_value_null();
        return COFFER_OK;
    case CF_SV_BOOL:
        if ((st = cf_wire_get_u8(r, &tag, "a bool")) == COFFER_OK)
            *out = coffer_value_bool(tag != 0);
        return st;
    case CF_SV_INT:
        if ((st = cf_wire_get_zigzag(r, &i, "an int")) == COFFER_OK)
            *out = coffer_value_int(i);
        return st;
    case CF_SV_FLOAT:
        if ((st = cf_wire_get_raw(r, 4, &raw, "a float")) == COFFER_OK) {
            out->type = COFFER_TYPE_FLOAT;
            memcpy(&out->u.float_value, raw, 4);
        }
        return st;
    case CF_SV_DOUBLE:
        if ((st = cf_wire_get_raw(r, 8, &raw, "a double")) == COFFER_OK) {
            out->type = COFFER_TYPE_DOUBLE;
            memcpy(&out->u.double_value, raw, 8);
        }
        return st;
    case CF_SV_STRING:
        if ((st = cf_wire_get_string(r, &s, "a string")) == COFFER_OK)
            *out = coffer_value_string((const char *)s.p, s.n);
        return st;
    case CF_SV_BINARY:
        if ((st = cf_wire_get_bytes(r, &s, "a binary")) == COFFER_OK)
            *out = coffer_value_binary(s.p, s.n);
        return st;
    case CF_SV_DATE:
        if ((st = cf_wire_get_zigzag(r, &i, "a date")) == COFFER_OK && (st = cf_wire_get_zigzag(r, &ns, "a date")) == COFFER_OK) {
            if (ns > 999999999 || ns < -999999999)
                return cf_wire_bad(r, "a date with %lld nanoseconds", (long long)ns);
            *out = coffer_value_date(i, (int32_t)ns);
        }
        return st;
    case CF_SV_OBJECT_ID:
        if ((st = cf_wire_get_raw(r, 12, &raw, "an objectId")) == COFFER_OK)
            *out = coffer_value_object_id(raw);
        return st;
    case CF_SV_UUID:
        if ((st = cf_wire_get_raw(r, 16, &raw, "a uuid")) == COFFER_OK)
            *out = coffer_value_uuid(raw);
        return st;
    case CF_SV_DECIMAL128: {
        uint64_t lo, hi;
        if ((st = cf_wire_get_u64le(r, &lo, "a decimal128")) == COFFER_OK && (st = cf_wire_get_u64le(r, &hi, "a decimal128")) == COFFER_OK)
            *out = coffer_value_decimal128(lo, hi);
        return st;
    }
    case CF_SV_LINK:
        if (!d)
            break;
        return decode_link(d, r, out, missing);
    case CF_SV_EMBEDDED:
        if (!d)
            break;
        return decode_embedded(d, r, out, depth);
    case CF_SV_LIST: {
        if (!d)
            break;
        if ((st = cf_wire_get_count(r, &n, 1, "a list")) != COFFER_OK)
            return st;
        coffer_value *items = cf_arena_alloc(d->arena, (size_t)n * sizeof *items);
        if (!items)
            return no_memory();
        size_t k = 0;
        for (uint64_t e = 0; e < n; e++) {
            int lost = 0;
            if ((st = decode(d, r, &items[k], &lost, depth + 1)) != COFFER_OK)
                return st;
            k += !lost; /* a list of links loses an element whose target is gone */
        }
        *out = coffer_value_list(items, k);
        return COFFER_OK;
    }
    case CF_SV_MAP: {
        if (!d)
            break;
        if ((st = cf_wire_get_count(r, &n, 2, "a map")) != COFFER_OK)
            return st;
        coffer_map_entry *entries = cf_arena_alloc(d->arena, (size_t)n * sizeof *entries);
        if (!entries)
            return no_memory();
        for (uint64_t e = 0; e < n; e++) {
            int lost = 0;
            if ((st = cf_wire_get_string(r, &s, "a map key")) != COFFER_OK ||
                (st = decode(d, r, &entries[e].value, &lost, depth + 1)) != COFFER_OK)
                return st;
            entries[e].key = (coffer_bytes){s.p, s.n};
        }
        *out = coffer_value_map(entries, (size_t)n);
        return COFFER_OK;
    }
    default:
        break;
    }
    r->p--;
    return cf_wire_bad(r, d ? "unknown value tag %u" : "a value of tag %u where a primary key was expected", tag);
}

coffer_status cf_sync_decode_value(coffer_txn *txn, cf_slice enc, cf_arena *arena, coffer_value *out, int *missing)
{
    decoder d = {txn, arena};
    cf_wreader r = cf_wreader_make(enc.p, enc.n, "a synced value");
    *missing = 0;
    return decode(&d, &r, out, missing, 0);
}

coffer_status cf_sync_decode_scalar(cf_slice enc, coffer_value *out)
{
    cf_wreader r = cf_wreader_make(enc.p, enc.n, "a primary key");
    int missing = 0;
    return decode(NULL, &r, out, &missing, 0);
}
