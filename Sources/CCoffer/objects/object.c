/* object — objects as records keyed by 8-byte big-endian keys, appended in
 * order, with their index entries kept in step. */
#define _GNU_SOURCE
#include "objects/object.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "objects/cell.h"
#include "util/error.h"
#include "objects/graph.h"
#include "storage/changelog.h"
#include "storage/index.h"
#include "storage/object_store.h"
#include "storage/txn.h"

#define SLOTS_ON_STACK 32
/* Fields one update changes in place at most (more are written whole). */
#define PATCH_MAX 16

/* ---- messages ------------------------------------------------------------ */

static const char *describe(const coffer_value *v, char *buf, size_t size)
{
    switch (v->type) {
    case COFFER_TYPE_NULL: return "null";
    case COFFER_TYPE_BOOL: return v->u.boolean ? "true" : "false";
    case COFFER_TYPE_INT: snprintf(buf, size, "%" PRId64, v->u.integer); return buf;
    case COFFER_TYPE_STRING: return cf_quote(buf, size, v->u.string.data, v->u.string.size < 64 ? v->u.string.size : 64);
    case COFFER_TYPE_OBJECT_ID: coffer_object_id_to_string(&v->u.object_id, buf); return buf;
    case COFFER_TYPE_UUID: {
        const uint8_t *b = v->u.uuid.bytes;
        snprintf(buf, size, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
                 b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
        return buf;
    }
    default: return coffer_type_name(v->type);
    }
}

static const cf_class *class_of(const coffer_txn *txn, coffer_class_id cls) { return &txn->db->schema->classes[cls]; }

/* ---- values -------------------------------------------------------------- */

coffer_value cf_value_default(coffer_type t)
{
    coffer_value v;
    memset(&v, 0, sizeof v);
    v.type = t;
    if (t == COFFER_TYPE_STRING)
        v.u.string = (coffer_bytes){"", 0};
    else if (t == COFFER_TYPE_BINARY)
        v.u.binary = (coffer_bytes){"", 0};
    else if (t == COFFER_TYPE_DECIMAL128)
        v.u.decimal128.w[1] = UINT64_C(0x3040000000000000); /* 0E+0 */
    return v;
}

static int utf8_valid(const unsigned char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        unsigned c = s[i];
        if (c < 0x80) {
            if (c == 0)
                return 0;
            i++;
            continue;
        }
        size_t len = (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
        if (!len || i + len > n)
            return 0;
        unsigned cp = c & (0x7F >> len);
        for (size_t k = 1; k < len; k++) {
            if ((s[i + k] & 0xC0) != 0x80)
                return 0;
            cp = cp << 6 | (s[i + k] & 0x3F);
        }
        if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10FFFF ||
            (cp >= 0xD800 && cp <= 0xDFFF))
            return 0;
        i += len;
    }
    return 1;
}

static coffer_status check_value(const cf_class *c, const cf_prop *p, const coffer_value *v)
{
    if (v->type == COFFER_TYPE_NULL) {
        if (!cf_prop_optional(p))
            return cf_error(COFFER_ERR_TYPE, "class '%s', property '%s': null is not allowed in a required %s property",
                            c->name, p->name, coffer_type_name(p->type));
        return COFFER_OK;
    }
    if (v->type != p->type)
        return cf_error(COFFER_ERR_TYPE, "class '%s', property '%s': expected %s, got %s", c->name, p->name,
                        coffer_type_name(p->type), coffer_type_name(v->type));
    return cf_value_check_scalar(c, p, v);
}

/* Checks the contents of a non-null scalar `v` of its own type. */
coffer_status cf_value_check_scalar(const cf_class *c, const cf_prop *p, const coffer_value *v)
{
    if (v->type == COFFER_TYPE_STRING || v->type == COFFER_TYPE_BINARY) {
        const coffer_bytes *b = v->type == COFFER_TYPE_STRING ? &v->u.string : &v->u.binary;
        if (b->size && !b->data)
            return cf_error(COFFER_ERR_INVALID_ARGUMENT, "class '%s', property '%s': data is NULL but size is %zu",
                            c->name, p->name, b->size);
        if (b->size > COFFER_MAX_VALUE_SIZE)
            return cf_error(COFFER_ERR_LIMIT, "class '%s', property '%s': a value of %zu bytes exceeds the limit of %u",
                            c->name, p->name, b->size, COFFER_MAX_VALUE_SIZE);
        if (v->type == COFFER_TYPE_STRING && !utf8_valid(b->data, b->size))
            return cf_error(COFFER_ERR_INVALID_ARGUMENT, "class '%s', property '%s': string is not valid UTF-8 or contains NUL",
                            c->name, p->name);
    }
    if (v->type == COFFER_TYPE_DATE) {
        int64_t s = v->u.date.seconds;
        int32_t ns = v->u.date.nanoseconds;
        if (ns <= -1000000000 || ns >= 1000000000 || (s > 0 && ns < 0) || (s < 0 && ns > 0))
            return cf_error(COFFER_ERR_INVALID_ARGUMENT,
                            "class '%s', property '%s': date nanoseconds %d are out of range or of the other sign than seconds %" PRId64,
                            c->name, p->name, ns, s);
    }
    return COFFER_OK;
}

/* ---- object handles ------------------------------------------------------ */

static coffer_object *obj_alloc(coffer_txn *txn, coffer_class_id cls, coffer_object_key key)
{
    coffer_object *o = cf_pool_take(&txn->objects, sizeof *o, "out of memory allocating an object handle");
    if (!o)
        return NULL;
    /* A reused handle starts as a new one, keeping its pool links and buffer. */
    *o = (coffer_object){.pool = o->pool, .row = {.buf = o->row.buf, .buf_cap = o->row.buf_cap},
                         .magic = CF_OBJ_MAGIC, .txn = txn, .cls = cls, .key = key, .in_use = 1};
    return o;
}

static coffer_status check_obj(const coffer_object *obj, int write)
{
    if (!obj || obj->magic != CF_OBJ_MAGIC || !obj->in_use)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "object handle is NULL, released or not an object");
    return cf_txn_check(obj->txn, write);
}

/* Marks the row just read as obj's current values. */
static void obj_took(coffer_object *obj)
{
    obj->loaded = 1;
    obj->generation = obj->txn->generation;
}

/* Makes obj->row current: records move when the transaction writes. */
static coffer_status obj_load(coffer_object *obj)
{
    coffer_txn *txn = obj->txn;
    if (obj->deleted)
        return cf_error(COFFER_ERR_NOT_FOUND, "object %" PRIu64 " of class '%s' was deleted", obj->key,
                        class_of(txn, obj->cls)->name);
    if (obj->loaded && obj->generation == txn->generation)
        return COFFER_OK;
    /* The message names the object through the prefix below, so nothing is
     * formatted on the way of a successful read. */
    coffer_status st = cf_objects_get(txn, obj->cls, obj->key, &obj->row);
    if (st == COFFER_ERR_NOT_FOUND) {
        obj->deleted = 1;
        return cf_error(COFFER_ERR_NOT_FOUND, "object %" PRIu64 " of class '%s' does not exist (it was deleted)", obj->key,
                        class_of(txn, obj->cls)->name);
    }
    if (st != COFFER_OK)
        return cf_error_prefix("object %" PRIu64 " of class '%s'", obj->key, class_of(txn, obj->cls)->name);
    obj_took(obj);
    return COFFER_OK;
}

/* Loads an object whose key the file itself gave (an index entry, a
 * backlink): deletes remove those in the same transaction, so an object
 * that is missing means a damaged file, not a deleted object. */
static coffer_status obj_load_named(coffer_object *obj, const char *named_by)
{
    coffer_status st = obj_load(obj);
    if (st != COFFER_ERR_NOT_FOUND)
        return st;
    obj->deleted = 0;
    return cf_error(COFFER_ERR_CORRUPTED, "%s of class '%s' names object %" PRIu64 ", which does not exist: the file is "
                    "damaged", named_by, class_of(obj->txn, obj->cls)->name, obj->key);
}

/* Properties kept outside the plain columns: links, mixed values,
 * collections and linking objects. */
static int is_graph_prop(const cf_prop *p)
{
    return p->type == COFFER_TYPE_LINK || p->type == COFFER_TYPE_MIXED || p->type == COFFER_TYPE_LINKING_OBJECTS ||
           cf_prop_is_collection(p);
}

/* How a property's column is stored in the record: a link as its target's
 * key, a collection as its id, a mixed value as a cell of bytes. */
static coffer_type storage_type(const cf_prop *p)
{
    if (cf_prop_is_collection(p) || p->type == COFFER_TYPE_LINK)
        return COFFER_TYPE_INT;
    if (p->type == COFFER_TYPE_MIXED)
        return COFFER_TYPE_BINARY;
    if (p->type == COFFER_TYPE_LINKING_OBJECTS)
        return COFFER_TYPE_NULL;
    return p->type;
}

/* Reads the column of property `p` as stored (see storage_type); null in a
 * required scalar property (left by a schema change) reads as the type's
 * default. */
static coffer_status obj_read_raw(coffer_object *obj, const cf_prop *p, coffer_value *out)
{
    coffer_type t = storage_type(p);
    coffer_status st = t == COFFER_TYPE_NULL ? (out->type = COFFER_TYPE_NULL, COFFER_OK) : cf_row_get(&obj->row, p->column, t, out);
    if (st != COFFER_OK)
        return cf_error_prefix("object %" PRIu64 " of class '%s', property '%s'", obj->key,
                               class_of(obj->txn, obj->cls)->name, p->name);
    if (out->type == COFFER_TYPE_NULL && !cf_prop_optional(p) && !is_graph_prop(p))
        *out = cf_value_default(p->type);
    return COFFER_OK;
}

/* Reads a graph property in stored form (cell.h): a link as table and key,
 * a mixed value decoded, a collection as its id (an int; null when none). */
static coffer_status obj_read_stored(coffer_object *obj, const cf_prop *p, coffer_value *out)
{
    coffer_value raw;
    coffer_status st = obj_read_raw(obj, p, &raw);
    if (st != COFFER_OK || raw.type == COFFER_TYPE_NULL) {
        *out = raw;
        return st;
    }
    if (p->type == COFFER_TYPE_LINK && !cf_prop_is_collection(p)) {
        *out = cf_stored_link(class_of(obj->txn, (coffer_class_id)p->target)->table, (uint64_t)raw.u.integer);
        return COFFER_OK;
    }
    if (p->type == COFFER_TYPE_MIXED && !cf_prop_is_collection(p)) {
        st = cf_cell_read(raw.u.binary.data, raw.u.binary.size, out);
        if (st != COFFER_OK)
            return cf_error_prefix("object %" PRIu64 " of class '%s', property '%s'", obj->key, class_of(obj->txn, obj->cls)->name,
                                   p->name);
        return COFFER_OK;
    }
    *out = raw;
    return COFFER_OK;
}

/* Reads property `p` of a loaded object as the public value. */
static coffer_status obj_read(coffer_object *obj, const cf_prop *p, coffer_value *out)
{
    if (!is_graph_prop(p))
        return obj_read_raw(obj, p, out);
    coffer_txn *txn = obj->txn;
    if (p->type == COFFER_TYPE_LINKING_OBJECTS) {
        const cf_class *origin = class_of(txn, (coffer_class_id)p->target);
        uint64_t n;
        coffer_status st = cf_backlink_count(txn, class_of(txn, obj->cls)->table, obj->key, 1, origin->table,
                                             origin->props[p->origin].column, &n);
        memset(out, 0, sizeof *out);
        out->type = COFFER_TYPE_LIST;
        out->u.list.count = (size_t)n;
        return st;
    }
    coffer_status st = obj_read_stored(obj, p, out);
    if (st != COFFER_OK)
        return st;
    if (cf_prop_is_collection(p)) {
        uint64_t n = 0;
        if (out->type == COFFER_TYPE_INT)
            st = cf_collection_count(txn, (uint64_t)out->u.integer, &n);
        memset(out, 0, sizeof *out);
        out->type = p->collection == COFFER_COLLECTION_LIST ? COFFER_TYPE_LIST
                  : p->collection == COFFER_COLLECTION_SET  ? COFFER_TYPE_SET
                                                            : COFFER_TYPE_MAP;
        if (out->type == COFFER_TYPE_MAP)
            out->u.map.count = (size_t)n;
        else
            out->u.list.count = (size_t)n;
        return st;
    }
    return cf_graph_public(txn, out);
}

/* ---- primary keys -------------------------------------------------------- */

/* Finds the object whose indexed property `p` equals `v`, confirming a hashed
 * match by the stored value. *found is 0 when there is none. */
static coffer_status find_indexed(coffer_txn *txn, coffer_class_id cls, const cf_prop *p, const coffer_value *v,
                                  coffer_object_key *key, int *found, coffer_object *into)
{
    uint8_t prefix[CF_INDEX_PREFIX_MAX];
    int hashed;
    size_t plen = cf_index_prefix(txn->db, class_of(txn, cls), p, v, prefix, &hashed);
    coffer_status st;
    *found = 0;
    coffer_object_key from = 0;
    for (;;) {
        coffer_object_key k;
        st = cf_index_seek(txn, cls, prefix, plen, from, &k);
        if (st != COFFER_OK)
            break;
        if (!hashed) {
            *key = k;
            *found = 1;
            break;
        }
        /* Confirm through `into` when given, so the caller gets the object
         * loaded (an encrypted record is opened once, not twice). */
        coffer_object local = {.magic = CF_OBJ_MAGIC, .txn = txn, .cls = cls, .in_use = 1};
        coffer_object *probe = into ? into : &local;
        probe->key = k;
        probe->loaded = 0;
        probe->deleted = 0;
        coffer_value cur_value;
        st = obj_load_named(probe, "an index entry");
        if (st == COFFER_OK)
            st = obj_read(probe, p, &cur_value);
        int match = st == COFFER_OK && coffer_value_equal(&cur_value, v);
        cf_row_free(&local.row);
        if (st != COFFER_OK)
            break;
        if (match) {
            *key = k;
            *found = 1;
            st = COFFER_OK;
            break;
        }
        if (k == UINT64_MAX)
            break;
        from = k + 1;
    }
    return st == COFFER_DONE || st == COFFER_ERR_NOT_FOUND ? COFFER_OK : st;
}

/* ---- writing records ----------------------------------------------------- */

/* Slots of a record: one value per column, null where no property is. */
typedef struct slots {
    coffer_value *v;
    coffer_value stack[SLOTS_ON_STACK];
    uint16_t n;
} slots;

static coffer_status slots_init(slots *s, const cf_class *c)
{
    s->n = c->next_column;
    s->v = s->n <= SLOTS_ON_STACK ? s->stack : calloc(s->n, sizeof *s->v);
    if (!s->v)
        return cf_error(COFFER_ERR_NO_MEMORY, "out of memory encoding an object");
    memset(s->v, 0, (size_t)s->n * sizeof *s->v);
    return COFFER_OK;
}

static void slots_free(slots *s)
{
    if (s->v != s->stack)
        free(s->v);
}

static coffer_status put_record(coffer_txn *txn, coffer_class_id cls, coffer_object_key key, const slots *s, int append)
{
    return cf_objects_put(txn, cls, key, s->v, s->n, append);
}

/* Per-property marks of one call: on the stack for ordinary classes. */
typedef struct marks {
    unsigned char *seen;
    unsigned char stack[64];
} marks;

static unsigned char *marks_init(marks *m, size_t nprops)
{
    m->seen = nprops <= sizeof m->stack ? m->stack : malloc(nprops);
    if (m->seen)
        memset(m->seen, 0, nprops <= sizeof m->stack ? sizeof m->stack : nprops);
    else
        cf_error(COFFER_ERR_NO_MEMORY, "out of memory");
    return m->seen;
}

static void marks_free(marks *m)
{
    if (m->seen != m->stack)
        free(m->seen);
}

static cf_slot slot_of(coffer_class_id cls, coffer_property_id prop, coffer_object_key key, int policy)
{
    cf_slot s = {cls, prop, key, 0, 0, 0, policy};
    return s;
}

static coffer_status check_field(coffer_txn *txn, coffer_class_id cls, coffer_property_id prop, const coffer_value *v, int policy)
{
    const cf_class *c = class_of(txn, cls);
    const cf_prop *p = &c->props[prop];
    if (p->type == COFFER_TYPE_LINKING_OBJECTS)
        return cf_error(COFFER_ERR_IMMUTABLE, "class '%s', property '%s' holds linking objects and is read-only", c->name, p->name);
    if (is_graph_prop(p)) {
        cf_slot slot = slot_of(cls, prop, 0, policy);
        return cf_graph_check(txn, &slot, v);
    }
    return check_value(c, p, v);
}

/* Objects nested in descriptions may nest this deep. */
#define MAX_OBJECT_NESTING 1000

static coffer_status validate_fields(coffer_txn *txn, coffer_class_id cls, const coffer_field *fields, size_t count,
                                     unsigned char *seen, int policy)
{
    const cf_class *c = class_of(txn, cls);
    if (count && !fields)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "fields is NULL but count is %zu", count);
    for (size_t i = 0; i < count; i++) {
        coffer_property_id id = fields[i].property;
        if (id >= c->nprops)
            return cf_error(COFFER_ERR_INVALID_ARGUMENT, "class '%s' has no property with id %u (it has %zu)", c->name, id, c->nprops);
        if (seen[id])
            return cf_error(COFFER_ERR_INVALID_ARGUMENT, "class '%s': property '%s' is listed twice", c->name, c->props[id].name);
        seen[id] = 1;
        coffer_status st = check_field(txn, cls, id, &fields[i].value, policy);
        if (st != COFFER_OK)
            return st;
    }
    return COFFER_OK;
}

static coffer_status check_class(const coffer_txn *txn, coffer_class_id cls)
{
    if (cls >= txn->db->schema->nclasses)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "class id %u is out of range (the database has %zu classes)", cls,
                        txn->db->schema->nclasses);
    return COFFER_OK;
}

/* The common checks of a call on a class in a transaction. */
static coffer_status check_txn_class(const coffer_txn *txn, coffer_class_id cls, int write)
{
    coffer_status st = cf_txn_check(txn, write);
    return st == COFFER_OK ? check_class(txn, cls) : st;
}

/* The primary-key value among `fields`, or null. */
static coffer_value pk_of(const cf_class *c, const coffer_field *fields, size_t count, int *listed)
{
    *listed = 0;
    for (size_t i = 0; c->pk >= 0 && i < count; i++)
        if (fields[i].property == (coffer_property_id)c->pk) {
            *listed = 1;
            return fields[i].value;
        }
    return (coffer_value){.type = COFFER_TYPE_NULL};
}

coffer_status cf_object_check_fields(coffer_txn *txn, coffer_class_id cls, const coffer_field *fields, size_t count, int policy,
                                     int depth)
{
    (void)depth;
    const cf_class *c = class_of(txn, cls);
    if (txn->nesting >= MAX_OBJECT_NESTING)
        return cf_error(COFFER_ERR_LIMIT, "class '%s': objects nest more than %d levels deep", c->name, MAX_OBJECT_NESTING);
    marks m;
    unsigned char *seen = marks_init(&m, c->nprops);
    if (!seen)
        return COFFER_ERR_NO_MEMORY;
    txn->nesting++;
    coffer_status st = validate_fields(txn, cls, fields, count, seen, policy);
    txn->nesting--;
    marks_free(&m);
    if (st != COFFER_OK || c->pk < 0)
        return st;
    int listed;
    coffer_value pk = pk_of(c, fields, count, &listed);
    if (!listed && !cf_prop_optional(&c->props[c->pk]))
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "class '%s' needs a value for its primary key '%s'", c->name, c->props[c->pk].name);
    if (policy != COFFER_UPDATE_ERROR)
        return COFFER_OK;
    coffer_object_key existing;
    int found;
    st = find_indexed(txn, cls, &c->props[c->pk], &pk, &existing, &found, NULL);
    if (st == COFFER_OK && found) {
        char buf[96];
        return cf_error(COFFER_ERR_PRIMARY_KEY_EXISTS, "class '%s' already has an object with primary key %s", c->name,
                        describe(&pk, buf, sizeof buf));
    }
    return st;
}

/* New stored forms of the graph fields of one write, and the cells their
 * mixed values need in the record. */
typedef struct graph_values {
    coffer_value *stored; /* per field */
    uint8_t **cells;      /* per field, for mixed values */
    size_t n;
} graph_values;

static void graph_values_free(graph_values *g)
{
    for (size_t i = 0; g->cells && i < g->n; i++)
        free(g->cells[i]);
    free(g->cells);
    free(g->stored);
}

/* Stores the graph fields of object `key` (creating nested objects and
 * collections, adding backlinks) and gives their stored forms. */
static coffer_status store_graph_fields(coffer_txn *txn, coffer_class_id cls, coffer_object_key key, const coffer_field *fields,
                                        size_t count, const unsigned char *todo, int policy, graph_values *g)
{
    const cf_class *c = class_of(txn, cls);
    g->n = count;
    g->stored = calloc(count ? count : 1, sizeof *g->stored);
    g->cells = calloc(count ? count : 1, sizeof *g->cells);
    if (!g->stored || !g->cells)
        return cf_error(COFFER_ERR_NO_MEMORY, "out of memory writing an object");
    coffer_status st = COFFER_OK;
    for (size_t i = 0; st == COFFER_OK && i < count; i++) {
        const cf_prop *p = &c->props[fields[i].property];
        if (!is_graph_prop(p) || !todo[i])
            continue;
        cf_slot slot = slot_of(cls, fields[i].property, key, policy);
        const coffer_value *v = &fields[i].value;
        coffer_value *out = &g->stored[i];
        out->type = COFFER_TYPE_NULL;
        if (cf_prop_is_collection(p)) {
            size_t n = v->type == COFFER_TYPE_MAP ? v->u.map.count : v->type == COFFER_TYPE_LIST ? v->u.list.count : 0;
            uint64_t id = 0;
            if (n)
                st = cf_collection_create(txn, &slot, p->collection, 1, v, &id);
            if (id) {
                out->type = COFFER_TYPE_INT;
                out->u.integer = (int64_t)id;
            }
            continue;
        }
        coffer_value stored;
        st = cf_graph_store(txn, &slot, v, &stored);
        if (st != COFFER_OK)
            break;
        if (stored.type == COFFER_TYPE_NULL)
            continue;
        if (p->type == COFFER_TYPE_LINK) {
            out->type = COFFER_TYPE_INT;
            out->u.integer = (int64_t)stored.u.link.key;
            continue;
        }
        size_t len = cf_cell_size(&stored);
        g->cells[i] = malloc(len);
        if (!g->cells[i])
            st = cf_error(COFFER_ERR_NO_MEMORY, "out of memory writing an object");
        else
            cf_cell_write(g->cells[i], &stored);
        out->type = COFFER_TYPE_BINARY;
        out->u.binary = (coffer_bytes){g->cells[i], len};
    }
    return st;
}

static coffer_status set_fields(coffer_object *obj, const coffer_field *fields, size_t count, int only_modified, int policy);

static int class_has_graph(const cf_class *c)
{
    for (size_t i = 0; i < c->nprops; i++)
        if (is_graph_prop(&c->props[i]) && c->props[i].type != COFFER_TYPE_LINKING_OBJECTS)
            return 1;
    return 0;
}

/* Creates an object (or, with a primary key under an update policy,
 * updates the existing one) and gives its key. */
static coffer_status create_object(coffer_txn *txn, coffer_class_id cls, const coffer_field *fields, size_t count, int policy,
                                   coffer_object_key *out_key)
{
    const cf_class *c = class_of(txn, cls);
    marks m;
    unsigned char *seen = marks_init(&m, c->nprops);
    if (!seen)
        return COFFER_ERR_NO_MEMORY;
    coffer_status st = validate_fields(txn, cls, fields, count, seen, policy);
    marks_free(&m);
    if (st != COFFER_OK)
        return st;
    if (c->pk >= 0) {
        const cf_prop *pp = &c->props[c->pk];
        int listed;
        coffer_value pk = pk_of(c, fields, count, &listed);
        if (!listed && !cf_prop_optional(pp))
            return cf_error(COFFER_ERR_INVALID_ARGUMENT, "class '%s' needs a value for its primary key '%s'", c->name, pp->name);
        coffer_object_key existing;
        int found = 0;
        st = find_indexed(txn, cls, pp, &pk, &existing, &found, NULL);
        if (st != COFFER_OK)
            return st;
        if (found) {
            char buf[96];
            if (policy == COFFER_UPDATE_ERROR)
                return cf_error(COFFER_ERR_PRIMARY_KEY_EXISTS, "class '%s' already has an object with primary key %s", c->name,
                                describe(&pk, buf, sizeof buf));
            coffer_object *obj = obj_alloc(txn, cls, existing);
            if (!obj)
                return COFFER_ERR_NO_MEMORY;
            st = set_fields(obj, fields, count, policy == COFFER_UPDATE_MODIFIED, policy);
            coffer_object_release(obj);
            *out_key = existing;
            return st;
        }
    }
    cf_class_state *state = NULL;
    st = cf_txn_class_state(txn, cls, &state);
    if (st != COFFER_OK)
        return st;
    /* Reserve the key first: nested objects of this class take later ones. */
    coffer_object_key key = state->next_key;
    state->next_key = key + 1;
    state->dirty = 1;
    int graph = class_has_graph(c);
    graph_values g = {0};
    if (graph) {
        unsigned char all[1] = {1};
        unsigned char *todo = count ? malloc(count) : all;
        if (!todo)
            st = cf_error(COFFER_ERR_NO_MEMORY, "out of memory writing an object");
        else if (count)
            memset(todo, 1, count);
        if (st == COFFER_OK)
            st = store_graph_fields(txn, cls, key, fields, count, todo, policy, &g);
        if (todo != all)
            free(todo);
    }
    slots s;
    if (st == COFFER_OK)
        st = slots_init(&s, c);
    if (st != COFFER_OK) {
        graph_values_free(&g);
        txn->failed = 1;
        return st;
    }
    for (size_t i = 0; i < c->nprops; i++)
        s.v[c->props[i].column] = cf_prop_optional(&c->props[i]) || is_graph_prop(&c->props[i])
                                      ? (coffer_value){.type = COFFER_TYPE_NULL}
                                      : cf_value_default(c->props[i].type);
    for (size_t i = 0; i < count; i++) {
        const cf_prop *p = &c->props[fields[i].property];
        s.v[p->column] = is_graph_prop(p) ? g.stored[i] : fields[i].value;
    }
    /* Appending is only possible while no nested object took a later key. */
    st = put_record(txn, cls, key, &s, state->next_key == key + 1);
    for (size_t i = 0; st == COFFER_OK && i < c->nprops; i++)
        if (cf_prop_indexed(&c->props[i]))
            st = cf_index_add(txn, cls, &c->props[i], &s.v[c->props[i].column], key);
    slots_free(&s);
    graph_values_free(&g);
    if (st == COFFER_OK)
        st = cf_log_object_change(txn, c->table, key, CF_LOG_INSERT, 0);
    if (st != COFFER_OK) {
        txn->failed = 1; /* part of the object may be written */
        return st;
    }
    txn->generation++;
    *out_key = key;
    return COFFER_OK;
}

COFFER_API coffer_status coffer_object_create(coffer_txn *txn, coffer_class_id cls, const coffer_field *fields, size_t count,
                                              int update_policy, coffer_object **out)
{
    if (out)
        *out = NULL;
    coffer_status st = check_txn_class(txn, cls, 1);
    if (st != COFFER_OK)
        return st;
    if (update_policy != COFFER_UPDATE_ERROR && update_policy != COFFER_UPDATE_ALL && update_policy != COFFER_UPDATE_MODIFIED)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "update policy %d is not COFFER_UPDATE_ERROR, _ALL or _MODIFIED", update_policy);
    const cf_class *c = class_of(txn, cls);
    if (cf_class_embedded(c))
        return cf_error(COFFER_ERR_INVALID_ARGUMENT,
                        "class '%s' is embedded: its objects are created inside a parent, through a link, list or map given "
                        "their fields", c->name);
    coffer_object_key key;
    st = create_object(txn, cls, fields, count, update_policy, &key);
    if (st != COFFER_OK || !out)
        return st;
    *out = obj_alloc(txn, cls, key);
    return *out ? COFFER_OK : COFFER_ERR_NO_MEMORY;
}

coffer_status cf_object_create_nested(coffer_txn *txn, coffer_class_id cls, const coffer_field *fields, size_t count, int policy,
                                      int depth, coffer_object_key *key)
{
    (void)depth;
    txn->nesting++;
    coffer_status st = create_object(txn, cls, fields, count, policy, key);
    txn->nesting--;
    return st;
}

/* The stored form of field i's new value: a graph property's as
 * store_graph_fields made it. */
static coffer_value new_value(const cf_class *c, const coffer_field *fields, size_t i, const graph_values *g)
{
    return is_graph_prop(&c->props[fields[i].property]) ? g->stored[i] : fields[i].value;
}

/* Changes the fields marked in `todo` (none of them a graph property) in
 * place where the object store can (cf_objects_patch): *patched says
 * whether it did; when not, the caller writes the record whole. */
static coffer_status patch_fields(coffer_object *obj, const coffer_field *fields, size_t count, const unsigned char *todo,
                                  int *patched)
{
    const cf_class *c = class_of(obj->txn, obj->cls);
    uint16_t cols[PATCH_MAX];
    coffer_value vals[PATCH_MAX];
    size_t n = 0;
    *patched = 0;
    for (size_t i = 0; i < count; i++) {
        if (!todo[i])
            continue;
        if (n == PATCH_MAX)
            return COFFER_OK;
        cols[n] = c->props[fields[i].property].column;
        vals[n++] = fields[i].value;
    }
    coffer_status st = cf_objects_patch(obj->txn, obj->cls, obj->key, cols, vals, n);
    if (st == COFFER_DONE)
        return COFFER_OK;
    *patched = st == COFFER_OK;
    return st;
}

/* Rewrites the object's record with `fields` applied. Values are checked
 * first, so a failure after that point can only come from storage. */
static coffer_status set_fields(coffer_object *obj, const coffer_field *fields, size_t count, int only_modified, int policy)
{
    coffer_txn *txn = obj->txn;
    const cf_class *c = class_of(txn, obj->cls);
    coffer_status st = obj_load(obj);
    if (st != COFFER_OK)
        return st;
    marks m;
    unsigned char *seen = marks_init(&m, c->nprops);
    if (!seen)
        return COFFER_ERR_NO_MEMORY;
    st = validate_fields(txn, obj->cls, fields, count, seen, policy);
    unsigned char todo_stack[64], *todo = count <= sizeof todo_stack ? todo_stack : malloc(count);
    if (!todo && st == COFFER_OK)
        st = cf_error(COFFER_ERR_NO_MEMORY, "out of memory");
    int changed = 0, graph_changed = 0;
    /* Which fields change (the primary key may only be repeated). */
    for (size_t i = 0; st == COFFER_OK && i < count; i++) {
        const cf_prop *p = &c->props[fields[i].property];
        todo[i] = 0;
        if (cf_prop_is_collection(p)) { /* assigning a collection always replaces it */
            todo[i] = 1;
            changed = graph_changed = 1;
            continue;
        }
        int is_pk = (int)fields[i].property == c->pk;
        if (!is_pk && !only_modified) { /* written whatever it holds now */
            todo[i] = 1;
            changed = 1;
            graph_changed |= is_graph_prop(p);
            continue;
        }
        coffer_value now;
        st = obj_read(obj, p, &now);
        if (st != COFFER_OK)
            break;
        int same = coffer_value_equal(&now, &fields[i].value);
        if (is_pk && !txn->db->in_migration) { /* a migration may assign keys */
            if (!same) {
                char a[96], b[96];
                st = cf_error(COFFER_ERR_IMMUTABLE, "class '%s': primary key '%s' cannot be changed (from %s to %s)", c->name, p->name,
                              describe(&now, a, sizeof a), describe(&fields[i].value, b, sizeof b));
            }
            continue;
        }
        if (only_modified && same)
            continue;
        todo[i] = 1;
        changed = 1;
        if (is_graph_prop(p))
            graph_changed = 1;
    }
    /* Old graph values, released once the record no longer holds them. */
    coffer_value *old_graph = NULL;
    graph_values g = {0};
    if (st == COFFER_OK && graph_changed) {
        old_graph = calloc(count, sizeof *old_graph);
        if (!old_graph)
            st = cf_error(COFFER_ERR_NO_MEMORY, "out of memory");
        for (size_t i = 0; st == COFFER_OK && i < count; i++) {
            const cf_prop *p = &c->props[fields[i].property];
            if (todo[i] && is_graph_prop(p))
                st = obj_read_stored(obj, p, &old_graph[i]);
        }
        if (st == COFFER_OK)
            st = store_graph_fields(txn, obj->cls, obj->key, fields, count, todo, policy, &g);
        if (st == COFFER_OK)
            st = obj_load(obj); /* nested writes may have moved the record */
        if (st != COFFER_OK)
            txn->failed = 1;
    }
    slots s = {0};
    if (st == COFFER_OK && changed) {
        for (size_t i = 0; i < count; i++)
            if (todo[i])
                seen[fields[i].property] = 2; /* written */
        /* Old index entries go first, while the old bytes that the old
         * values borrow are still in place. */
        for (size_t i = 0; st == COFFER_OK && i < c->nprops; i++) {
            if (seen[i] != 2 || !cf_prop_indexed(&c->props[i]))
                continue;
            coffer_value was;
            st = obj_read_raw(obj, &c->props[i], &was);
            if (st == COFFER_OK)
                st = cf_index_remove(txn, obj->cls, &c->props[i], &was, obj->key);
        }
        int patched = 0;
        if (st == COFFER_OK && !graph_changed)
            st = patch_fields(obj, fields, count, todo, &patched);
        if (st == COFFER_OK && !patched) {
            st = slots_init(&s, c);
            for (size_t i = 0; st == COFFER_OK && i < c->nprops; i++)
                st = obj_read_raw(obj, &c->props[i], &s.v[c->props[i].column]);
            for (size_t i = 0; st == COFFER_OK && i < count; i++)
                if (todo[i])
                    s.v[c->props[fields[i].property].column] = new_value(c, fields, i, &g);
            if (st == COFFER_OK)
                st = put_record(txn, obj->cls, obj->key, &s, 0);
        }
        for (size_t i = 0; st == COFFER_OK && i < count; i++) {
            const cf_prop *p = &c->props[fields[i].property];
            if (todo[i] && cf_prop_indexed(p)) {
                coffer_value v = new_value(c, fields, i, &g);
                st = cf_index_add(txn, obj->cls, p, &v, obj->key);
            }
        }
        for (size_t i = 0; st == COFFER_OK && i < c->nprops; i++)
            if (seen[i] == 2)
                st = cf_log_object_change(txn, c->table, obj->key, CF_LOG_MODIFY, c->props[i].column);
        if (st == COFFER_OK)
            txn->generation++;
        for (size_t i = 0; st == COFFER_OK && graph_changed && i < count; i++) {
            const cf_prop *p = &c->props[fields[i].property];
            if (!todo[i] || !is_graph_prop(p))
                continue;
            cf_slot slot = slot_of(obj->cls, fields[i].property, obj->key, policy);
            if (cf_prop_is_collection(p))
                st = old_graph[i].type == COFFER_TYPE_INT ? cf_collection_delete(txn, &slot, (uint64_t)old_graph[i].u.integer) : COFFER_OK;
            else
                st = cf_graph_release(txn, &slot, &old_graph[i]);
        }
        if (st != COFFER_OK)
            txn->failed = 1;
    }
    slots_free(&s);
    graph_values_free(&g);
    free(old_graph);
    if (todo != todo_stack)
        free(todo);
    marks_free(&m);
    return st;
}

/* ---- public object API --------------------------------------------------- */

COFFER_API coffer_status coffer_object_get(coffer_txn *txn, coffer_class_id cls, coffer_object_key key, coffer_object **out)
{
    if (!out)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "coffer_object_get: out is NULL");
    *out = NULL;
    coffer_status st = check_txn_class(txn, cls, 0);
    if (st != COFFER_OK)
        return st;
    coffer_object *obj = obj_alloc(txn, cls, key);
    if (!obj)
        return COFFER_ERR_NO_MEMORY;
    st = obj_load(obj);
    if (st != COFFER_OK) {
        coffer_object_release(obj);
        if (st == COFFER_ERR_NOT_FOUND)
            return cf_error(COFFER_ERR_NOT_FOUND, "class '%s' has no object with key %" PRIu64, class_of(txn, cls)->name, key);
        return st;
    }
    *out = obj;
    return COFFER_OK;
}

COFFER_API coffer_status coffer_object_find(coffer_txn *txn, coffer_class_id cls, const coffer_value *pk, coffer_object **out)
{
    if (!out || !pk)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "coffer_object_find: %s is NULL", out ? "pk" : "out");
    *out = NULL;
    coffer_status st = check_txn_class(txn, cls, 0);
    if (st != COFFER_OK)
        return st;
    const cf_class *c = class_of(txn, cls);
    if (c->pk < 0)
        return cf_error(COFFER_ERR_NOT_FOUND, "class '%s' has no primary key", c->name);
    const cf_prop *p = &c->props[c->pk];
    if (pk->type != p->type && !(pk->type == COFFER_TYPE_NULL && cf_prop_optional(p)))
        return cf_error(COFFER_ERR_TYPE, "class '%s': primary key '%s' is %s, got %s", c->name, p->name,
                        coffer_type_name(p->type), coffer_type_name(pk->type));
    coffer_object *obj = obj_alloc(txn, cls, 0);
    if (!obj)
        return COFFER_ERR_NO_MEMORY;
    coffer_object_key key = 0;
    int found = 0;
    st = find_indexed(txn, cls, p, pk, &key, &found, obj);
    if (st == COFFER_OK && !found) {
        char buf[96];
        st = cf_error(COFFER_ERR_NOT_FOUND, "class '%s' has no object with primary key %s", c->name, describe(pk, buf, sizeof buf));
    }
    if (st == COFFER_OK && obj->key != key) {
        obj->key = key; /* found without a probe: load it now */
        obj->loaded = 0;
        st = obj_load_named(obj, "the primary-key index");
    }
    if (st != COFFER_OK) {
        coffer_object_release(obj);
        return st;
    }
    *out = obj;
    return COFFER_OK;
}

COFFER_API void coffer_object_release(coffer_object *obj)
{
    if (!obj || obj->magic != CF_OBJ_MAGIC || !obj->in_use || obj->iter_owned)
        return;
    obj->in_use = 0;
    obj->loaded = 0;
    cf_pool_give(&obj->txn->objects, obj);
}

COFFER_API coffer_object_key coffer_object_key_of(const coffer_object *obj)
{
    return obj && obj->magic == CF_OBJ_MAGIC ? obj->key : 0;
}

COFFER_API coffer_class_id coffer_object_class(const coffer_object *obj)
{
    return obj && obj->magic == CF_OBJ_MAGIC ? obj->cls : UINT32_MAX;
}

COFFER_API coffer_status coffer_object_get_value(coffer_object *obj, coffer_property_id prop, coffer_value *out)
{
    coffer_status st = check_obj(obj, 0);
    if (st != COFFER_OK)
        return st;
    if (!out)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "coffer_object_get_value: out is NULL");
    const cf_class *c = class_of(obj->txn, obj->cls);
    if (prop >= c->nprops)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "class '%s' has no property with id %u (it has %zu)", c->name, prop, c->nprops);
    st = obj_load(obj);
    if (st != COFFER_OK)
        return st;
    return obj_read(obj, &c->props[prop], out);
}

COFFER_API coffer_status coffer_object_set_value(coffer_object *obj, coffer_property_id prop, const coffer_value *value)
{
    if (!value)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "coffer_object_set_value: value is NULL");
    coffer_field f = {prop, *value};
    return coffer_object_set_fields(obj, &f, 1);
}

COFFER_API coffer_status coffer_object_set_fields(coffer_object *obj, const coffer_field *fields, size_t count)
{
    coffer_status st = check_obj(obj, 1);
    if (st != COFFER_OK)
        return st;
    return set_fields(obj, fields, count, 0, COFFER_UPDATE_ALL);
}

/* Deletes a loaded object: links to it are dropped, what it owns (embedded
 * objects, collections, its own backlinks) goes with it. */
static coffer_status delete_object(coffer_object *obj)
{
    coffer_txn *txn = obj->txn;
    const cf_class *c = class_of(txn, obj->cls);
    uint32_t saved_table = txn->deleting_table;
    coffer_object_key saved_key = txn->deleting_key;
    txn->deleting_table = c->table;
    txn->deleting_key = obj->key;
    coffer_status st = cf_graph_unlink_all(txn, c->table, obj->key);
    for (size_t i = 0; st == COFFER_OK && i < c->nprops; i++) {
        const cf_prop *p = &c->props[i];
        if (!is_graph_prop(p) || p->type == COFFER_TYPE_LINKING_OBJECTS)
            continue;
        coffer_value v;
        st = obj_load(obj); /* releases write: the record may move */
        if (st == COFFER_OK)
            st = obj_read_stored(obj, p, &v);
        if (st != COFFER_OK)
            break;
        cf_slot slot = slot_of(obj->cls, (coffer_property_id)i, obj->key, COFFER_UPDATE_ALL);
        if (cf_prop_is_collection(p))
            st = v.type == COFFER_TYPE_INT ? cf_collection_delete(txn, &slot, (uint64_t)v.u.integer) : COFFER_OK;
        else
            st = cf_graph_release(txn, &slot, &v);
    }
    if (st == COFFER_OK)
        st = obj_load(obj);
    for (size_t i = 0; st == COFFER_OK && i < c->nprops; i++) {
        if (!cf_prop_indexed(&c->props[i]))
            continue;
        coffer_value v;
        st = obj_read(obj, &c->props[i], &v);
        if (st == COFFER_OK)
            st = cf_index_remove(txn, obj->cls, &c->props[i], &v, obj->key);
    }
    if (st == COFFER_OK) {
        st = cf_objects_delete(txn, obj->cls, obj->key);
    }
    if (st == COFFER_OK)
        st = cf_log_object_change(txn, c->table, obj->key, CF_LOG_DELETE, 0);
    txn->deleting_table = saved_table;
    txn->deleting_key = saved_key;
    if (st != COFFER_OK) {
        if (st != COFFER_ERR_CORRUPTED && st != COFFER_ERR_INTEGRITY)
            txn->failed = 1;
        return st;
    }
    /* Keys are never reused: make sure the counter is past this one. */
    cf_class_state *state;
    if (cf_txn_class_state(txn, obj->cls, &state) == COFFER_OK && state->next_key <= obj->key) {
        state->next_key = obj->key + 1;
        state->dirty = 1;
    }
    obj->deleted = 1;
    txn->generation++;
    return COFFER_OK;
}

COFFER_API coffer_status coffer_object_delete(coffer_object *obj)
{
    coffer_status st = check_obj(obj, 1);
    if (st == COFFER_OK)
        st = obj_load(obj);
    return st == COFFER_OK ? delete_object(obj) : st;
}

coffer_status cf_object_delete_key(coffer_txn *txn, coffer_class_id cls, coffer_object_key key)
{
    coffer_object *obj = obj_alloc(txn, cls, key);
    if (!obj)
        return COFFER_ERR_NO_MEMORY;
    coffer_status st = obj_load(obj);
    if (st == COFFER_OK)
        st = delete_object(obj);
    coffer_object_release(obj);
    return st;
}

coffer_status cf_object_unlink(coffer_txn *txn, coffer_class_id ocls, uint16_t column, coffer_object_key okey, uint32_t ttable,
                               coffer_object_key tkey)
{
    const cf_class *c = class_of(txn, ocls);
    size_t i = 0;
    while (i < c->nprops && (c->props[i].column != column || c->props[i].type == COFFER_TYPE_LINKING_OBJECTS))
        i++;
    if (i == c->nprops)
        return COFFER_ERR_NOT_FOUND; /* the property is gone from the schema */
    const cf_prop *p = &c->props[i];
    coffer_object *obj = obj_alloc(txn, ocls, okey);
    if (!obj)
        return COFFER_ERR_NO_MEMORY;
    coffer_value v;
    coffer_status st = obj_load(obj);
    if (st == COFFER_OK)
        st = obj_read_stored(obj, p, &v);
    cf_slot slot = slot_of(ocls, (coffer_property_id)i, okey, COFFER_UPDATE_ALL);
    if (st == COFFER_OK && cf_prop_is_collection(p)) {
        if (v.type == COFFER_TYPE_INT)
            st = cf_collection_unlink(txn, &slot, (uint64_t)v.u.integer, 1, ttable, tkey);
    } else if (st == COFFER_OK && v.type == COFFER_TYPE_LINK && v.u.link.class_id == ttable && v.u.link.key == tkey) {
        coffer_field f = {(coffer_property_id)i, {.type = COFFER_TYPE_NULL}};
        st = set_fields(obj, &f, 1, 0, COFFER_UPDATE_ALL);
    } else if (st == COFFER_OK && (v.type == COFFER_TYPE_LIST || v.type == COFFER_TYPE_MAP)) {
        st = cf_collection_unlink(txn, &slot, v.u.link.key, 0, ttable, tkey);
    }
    coffer_object_release(obj);
    return st;
}

coffer_status cf_object_collection(coffer_txn *txn, coffer_class_id cls, coffer_object_key key, coffer_property_id prop, int create,
                                   uint64_t *id, int *kind, int *depth)
{
    const cf_class *c = class_of(txn, cls);
    const cf_prop *p = &c->props[prop];
    *id = 0;
    *kind = COFFER_COLLECTION_NONE;
    *depth = 1;
    coffer_object *obj = obj_alloc(txn, cls, key);
    if (!obj)
        return COFFER_ERR_NO_MEMORY;
    coffer_value v = {.type = COFFER_TYPE_NULL};
    coffer_status st = obj_load(obj);
    if (st == COFFER_OK && is_graph_prop(p))
        st = obj_read_stored(obj, p, &v);
    if (st == COFFER_OK && cf_prop_is_collection(p)) {
        *kind = p->collection;
        if (v.type == COFFER_TYPE_INT)
            *id = (uint64_t)v.u.integer;
        if (!*id && create) {
            /* The first write to an empty collection property stores it. */
            cf_slot slot = slot_of(cls, prop, key, COFFER_UPDATE_ERROR);
            st = cf_collection_create(txn, &slot, p->collection, 1, NULL, id);
            slots s;
            if (st == COFFER_OK)
                st = obj_load(obj);
            if (st == COFFER_OK)
                st = slots_init(&s, c);
            if (st == COFFER_OK) {
                for (size_t i = 0; st == COFFER_OK && i < c->nprops; i++)
                    st = obj_read_raw(obj, &c->props[i], &s.v[c->props[i].column]);
                s.v[p->column] = (coffer_value){.type = COFFER_TYPE_INT, .u.integer = (int64_t)*id};
                if (st == COFFER_OK)
                    st = put_record(txn, cls, key, &s, 0);
                slots_free(&s);
            }
            if (st == COFFER_OK)
                txn->generation++;
            else
                txn->failed = 1;
        }
    } else if (st == COFFER_OK && (v.type == COFFER_TYPE_LIST || v.type == COFFER_TYPE_MAP)) {
        *kind = v.type == COFFER_TYPE_LIST ? COFFER_COLLECTION_LIST : COFFER_COLLECTION_MAP;
        *id = v.u.link.key;
    }
    coffer_object_release(obj);
    return st;
}

COFFER_API int coffer_object_is_valid(coffer_object *obj)
{
    if (check_obj(obj, 0) != COFFER_OK || obj->deleted)
        return 0;
    if (obj->loaded && obj->generation == obj->txn->generation)
        return 1;
    return cf_objects_exists(obj->txn, obj->cls, obj->key) == COFFER_OK;
}

/* ---- classes ------------------------------------------------------------- */

COFFER_API coffer_status coffer_class_count(coffer_txn *txn, coffer_class_id cls, uint64_t *out)
{
    if (!out)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "coffer_class_count: out is NULL");
    coffer_status st = check_txn_class(txn, cls, 0);
    if (st != COFFER_OK)
        return st;
    return cf_objects_count(txn, cls, out);
}

/* Whether objects of class `cls` take part in the object graph: they hold
 * links or collections, or some class can link to them. */
static int class_in_graph(const coffer_txn *txn, coffer_class_id cls)
{
    const cf_schema *schema = txn->db->schema;
    if (class_has_graph(&schema->classes[cls]))
        return 1;
    for (size_t i = 0; i < schema->nclasses; i++)
        for (size_t j = 0; j < schema->classes[i].nprops; j++) {
            const cf_prop *p = &schema->classes[i].props[j];
            if (p->type == COFFER_TYPE_MIXED || (p->type == COFFER_TYPE_LINK && p->target == (int)cls))
                return 1;
        }
    return 0;
}

COFFER_API coffer_status coffer_class_clear(coffer_txn *txn, coffer_class_id cls)
{
    coffer_status st = check_txn_class(txn, cls, 1);
    cf_class_state *state;
    if (st == COFFER_OK)
        st = cf_txn_class_state(txn, cls, &state); /* keeps the key counter */
    if (st != COFFER_OK)
        return st;
    if (class_in_graph(txn, cls)) {
        /* One by one, so links to them and what they own follow. */
        coffer_object *obj = obj_alloc(txn, cls, 0);
        if (!obj)
            return COFFER_ERR_NO_MEMORY;
        for (;;) {
            cf_object_cursor cur;
            coffer_object_key first;
            st = cf_object_cursor_open(txn, cls, &cur);
            if (st == COFFER_OK)
                st = cf_object_cursor_seek(&cur, 0, &first, NULL);
            cf_object_cursor_close(&cur);
            if (st != COFFER_OK) {
                if (st == COFFER_DONE)
                    st = COFFER_OK;
                break;
            }
            obj->key = first;
            obj->loaded = 0;
            obj->deleted = 0;
            st = obj_load(obj);
            if (st == COFFER_OK)
                st = delete_object(obj);
            if (st != COFFER_OK)
                break;
        }
        coffer_object_release(obj);
        return st;
    }
    st = cf_objects_clear(txn, cls);
    if (st != COFFER_OK)
        return st;
    state->dirty = 1;
    txn->generation++;
    return cf_log_object_change(txn, class_of(txn, cls)->table, 0, CF_LOG_CLEAR, 0);
}

/* ---- iterators ----------------------------------------------------------- */

static coffer_status iter_new(coffer_txn *txn, coffer_class_id cls, coffer_iter **out)
{
    coffer_iter *it = calloc(1, sizeof *it);
    if (!it)
        return cf_error(COFFER_ERR_NO_MEMORY, "out of memory creating an iterator");
    it->obj = obj_alloc(txn, cls, 0);
    if (!it->obj) {
        free(it);
        return COFFER_ERR_NO_MEMORY;
    }
    it->obj->iter_owned = 1;
    it->magic = CF_ITER_MAGIC;
    it->txn = txn;
    it->cls = cls;
    it->next = txn->iters;
    txn->iters = it;
    *out = it;
    return COFFER_OK;
}

COFFER_API coffer_status coffer_class_iterate(coffer_txn *txn, coffer_class_id cls, coffer_iter **out)
{
    if (!out)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "coffer_class_iterate: out is NULL");
    *out = NULL;
    coffer_status st = check_txn_class(txn, cls, 0);
    if (st != COFFER_OK)
        return st;
    return iter_new(txn, cls, out);
}

COFFER_API coffer_status coffer_index_find(coffer_txn *txn, coffer_class_id cls, coffer_property_id prop, const coffer_value *value,
                                           coffer_iter **out)
{
    if (!out || !value)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "coffer_index_find: %s is NULL", out ? "value" : "out");
    *out = NULL;
    coffer_status st = check_txn_class(txn, cls, 0);
    if (st != COFFER_OK)
        return st;
    const cf_class *c = class_of(txn, cls);
    if (prop >= c->nprops)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "class '%s' has no property with id %u (it has %zu)", c->name, prop, c->nprops);
    const cf_prop *p = &c->props[prop];
    if (!cf_prop_indexed(p))
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "property '%s.%s' has no index", c->name, p->name);
    if (value->type != p->type && !(value->type == COFFER_TYPE_NULL && cf_prop_optional(p)))
        return cf_error(COFFER_ERR_TYPE, "class '%s', property '%s': expected %s%s, got %s", c->name, p->name,
                        coffer_type_name(p->type), cf_prop_optional(p) ? " or null" : "", coffer_type_name(value->type));
    coffer_iter *it = NULL;
    st = iter_new(txn, cls, &it);
    if (st != COFFER_OK)
        return st;
    it->by_index = 1;
    it->prop = prop;
    it->prefix_len = cf_index_prefix(txn->db, c, p, value, it->prefix, &it->recheck);
    it->value = *value;
    if (it->recheck && value->type == COFFER_TYPE_STRING) {
        it->value_copy = malloc(value->u.string.size + 1);
        if (!it->value_copy) {
            coffer_iter_free(it);
            return cf_error(COFFER_ERR_NO_MEMORY, "out of memory creating an iterator");
        }
        memcpy(it->value_copy, value->u.string.data, value->u.string.size);
        it->value.u.string.data = it->value_copy;
    }
    *out = it;
    return COFFER_OK;
}

static coffer_status iter_next_class(coffer_iter *it)
{
    coffer_txn *txn = it->txn;
    coffer_object_key key;
    coffer_status st;
    if (!it->started) {
        st = cf_object_cursor_next(&it->objects, &key, &it->obj->row);
    } else if (it->generation != txn->generation) {
        /* A write may have moved pages: seek past the last key seen. */
        if (it->last_key == UINT64_MAX)
            return COFFER_DONE;
        st = cf_object_cursor_seek(&it->objects, it->last_key + 1, &key, &it->obj->row);
    } else {
        st = cf_object_cursor_next(&it->objects, &key, &it->obj->row);
    }
    if (st != COFFER_OK)
        return st;
    it->started = 1;
    it->last_key = key;
    it->generation = txn->generation;
    it->obj->key = key;
    it->obj->deleted = 0;
    obj_took(it->obj);
    return COFFER_OK;
}

static coffer_status iter_next_index(coffer_iter *it)
{
    coffer_txn *txn = it->txn;
    const cf_prop *p = &class_of(txn, it->cls)->props[it->prop];
    for (;;) {
        if (it->started && it->last_key == UINT64_MAX)
            return COFFER_DONE;
        coffer_object_key from = it->started ? it->last_key + 1 : 0, key;
        coffer_status st = cf_index_seek(txn, it->cls, it->prefix, it->prefix_len, from, &key);
        if (st != COFFER_OK)
            return st;
        it->started = 1;
        it->last_key = key;
        it->obj->key = key;
        it->obj->deleted = 0;
        it->obj->loaded = 0;
        st = obj_load_named(it->obj, "an index entry");
        if (st != COFFER_OK)
            return st;
        if (!it->recheck)
            return COFFER_OK;
        coffer_value v;
        st = obj_read(it->obj, p, &v);
        if (st != COFFER_OK)
            return st;
        if (coffer_value_equal(&v, &it->value))
            return COFFER_OK;
    }
}

/* Backlinks: entries under the prefix (target, origin class and column),
 * one per origin object with a count; the origin is returned count times. */
static coffer_status iter_next_backlink(coffer_iter *it)
{
    coffer_txn *txn = it->txn;
    if (it->repeat > 0) {
        it->repeat--;
        return COFFER_OK;
    }
    for (;;) {
        MDB_val k, v;
        uint8_t key[27];
        memcpy(key, it->prefix, it->prefix_len);
        size_t klen = it->prefix_len;
        if (it->started) {
            if (it->last_key == UINT64_MAX)
                return COFFER_DONE;
            cf_put_be64(key + klen, it->last_key + 1);
            klen += 8;
        }
        coffer_status st = cf_graph_seek(it->backlinks, key, klen, &k, &v);
        if (st == COFFER_OK && (k.mv_size < it->prefix_len || memcmp(k.mv_data, it->prefix, it->prefix_len) != 0))
            st = COFFER_DONE;
        if (st != COFFER_OK)
            return st;
        cf_backlink e;
        st = cf_backlink_entry(txn, &k, &v, &e);
        if (st != COFFER_OK)
            return st;
        it->started = 1;
        it->last_key = e.okey;
        it->generation = txn->generation;
        it->obj->key = e.okey;
        it->obj->deleted = 0;
        it->obj->loaded = 0;
        st = obj_load_named(it->obj, "a backlink");
        if (st != COFFER_OK || e.count == 0)
            return st == COFFER_OK ? cf_error(COFFER_ERR_CORRUPTED, "a backlink entry counts no links") : st;
        it->repeat = e.count - 1;
        return COFFER_OK;
    }
}

COFFER_API coffer_status coffer_iter_next(coffer_iter *it, coffer_object **obj)
{
    if (!it || it->magic != CF_ITER_MAGIC || !obj)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "coffer_iter_next: %s", obj ? "iterator is NULL or not an iterator" : "obj is NULL");
    *obj = NULL;
    coffer_status st = cf_txn_check(it->txn, 0);
    if (st != COFFER_OK)
        return st;
    if (it->done)
        return COFFER_DONE;
    if (it->by_backlink && !it->backlinks) {
        if (!it->txn->db->has_graph)
            return it->done = 1, COFFER_DONE;
        st = cf_graph_cursor(it->txn, &it->backlinks);
    } else if (!it->by_backlink && !it->by_index && !it->objects.cur) {
        st = cf_object_cursor_open(it->txn, it->cls, &it->objects);
    }
    if (st != COFFER_OK)
        return st;
    st = it->by_backlink ? iter_next_backlink(it) : it->by_index ? iter_next_index(it) : iter_next_class(it);
    if (st == COFFER_DONE)
        it->done = 1;
    else if (st == COFFER_OK)
        *obj = it->obj;
    return st;
}

COFFER_API void coffer_iter_free(coffer_iter *it)
{
    if (!it || it->magic != CF_ITER_MAGIC)
        return;
    coffer_txn *txn = it->txn;
    for (coffer_iter **p = &txn->iters; *p; p = &(*p)->next) {
        if (*p == it) {
            *p = it->next;
            break;
        }
    }
    cf_object_cursor_close(&it->objects);
    cf_graph_cursor_close(it->backlinks);
    it->obj->iter_owned = 0;
    coffer_object_release(it->obj);
    it->magic = CF_DEAD_MAGIC;
    free(it->value_copy);
    free(it);
}

/* ---- schema changes ------------------------------------------------------ */

coffer_status cf_object_build_index(coffer_txn *txn, coffer_class_id cls, coffer_property_id prop, int unique)
{
    const cf_class *c = class_of(txn, cls);
    const cf_prop *p = &c->props[prop];
    coffer_iter *it = NULL;
    coffer_status st = coffer_class_iterate(txn, cls, &it);
    coffer_object *obj;
    while (st == COFFER_OK && (st = coffer_iter_next(it, &obj)) == COFFER_OK) {
        coffer_value v;
        st = obj_read(obj, p, &v);
        if (st != COFFER_OK)
            break;
        if (unique) {
            coffer_object_key other;
            int found;
            st = find_indexed(txn, cls, p, &v, &other, &found, NULL);
            if (st == COFFER_OK && found) {
                char buf[96];
                st = cf_error(COFFER_ERR_MIGRATION_REQUIRED, "class '%s': primary key '%s' would have the duplicate value %s",
                              c->name, p->name, describe(&v, buf, sizeof buf));
                break;
            }
        }
        if (st == COFFER_OK)
            st = cf_index_add(txn, cls, p, &v, obj->key);
        it->generation = txn->generation; /* index writes do not move records */
    }
    coffer_iter_free(it);
    return st == COFFER_DONE ? COFFER_OK : st;
}

/* ---- backlinks ----------------------------------------------------------- */

/* Where the backlinks to an object are kept: under its table and key, then
 * the origin's table and the column of the origin's link property. */
typedef struct backlink_place {
    coffer_class_id origin;
    uint32_t ttable, otable;
    uint16_t ocol;
} backlink_place;

/* Resolves the origin of backlinks: a linking-objects property of obj's
 * class, or an explicit origin class and property. */
static coffer_status backlink_origin(coffer_object *obj, int declared, coffer_class_id ocls, coffer_property_id oprop, backlink_place *at)
{
    coffer_status st = check_obj(obj, 0);
    if (st != COFFER_OK)
        return st;
    coffer_txn *txn = obj->txn;
    const cf_class *c = class_of(txn, obj->cls);
    const cf_prop *origin_prop;
    if (declared) {
        if (oprop >= c->nprops)
            return cf_error(COFFER_ERR_INVALID_ARGUMENT, "class '%s' has no property with id %u (it has %zu)", c->name, oprop, c->nprops);
        const cf_prop *p = &c->props[oprop];
        if (p->type != COFFER_TYPE_LINKING_OBJECTS)
            return cf_error(COFFER_ERR_INVALID_ARGUMENT, "class '%s', property '%s' is not a linking-objects property", c->name, p->name);
        at->origin = (coffer_class_id)p->target;
        origin_prop = &class_of(txn, at->origin)->props[p->origin];
    } else {
        st = check_class(txn, ocls);
        if (st != COFFER_OK)
            return st;
        const cf_class *o = class_of(txn, ocls);
        if (oprop >= o->nprops)
            return cf_error(COFFER_ERR_INVALID_ARGUMENT, "class '%s' has no property with id %u (it has %zu)", o->name, oprop, o->nprops);
        if (!cf_prop_holds_links(&o->props[oprop]))
            return cf_error(COFFER_ERR_INVALID_ARGUMENT, "class '%s', property '%s' cannot hold links", o->name, o->props[oprop].name);
        at->origin = ocls;
        origin_prop = &o->props[oprop];
    }
    at->ttable = c->table;
    at->otable = class_of(txn, at->origin)->table;
    at->ocol = origin_prop->column;
    return obj_load(obj);
}

static coffer_status backlinks(coffer_object *obj, int declared, coffer_class_id ocls, coffer_property_id oprop, coffer_iter **out)
{
    if (!out)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "out is NULL");
    *out = NULL;
    backlink_place at = {0};
    coffer_iter *it = NULL;
    coffer_status st = backlink_origin(obj, declared, ocls, oprop, &at);
    if (st == COFFER_OK)
        st = iter_new(obj->txn, at.origin, &it);
    if (st != COFFER_OK)
        return st;
    it->by_backlink = 1;
    it->prefix_len = cf_backlink_prefix(at.ttable, obj->key, 1, at.otable, at.ocol, it->prefix);
    *out = it;
    return COFFER_OK;
}

static coffer_status backlink_count(coffer_object *obj, int declared, coffer_class_id ocls, coffer_property_id oprop, uint64_t *out)
{
    if (!out)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "out is NULL");
    *out = 0;
    backlink_place at = {0};
    coffer_status st = backlink_origin(obj, declared, ocls, oprop, &at);
    return st == COFFER_OK ? cf_backlink_count(obj->txn, at.ttable, obj->key, 1, at.otable, at.ocol, out) : st;
}

COFFER_API coffer_status coffer_object_backlinks(coffer_object *obj, coffer_property_id prop, coffer_iter **out)
{
    return backlinks(obj, 1, 0, prop, out);
}

COFFER_API coffer_status coffer_object_backlink_count(coffer_object *obj, coffer_property_id prop, uint64_t *out)
{
    return backlink_count(obj, 1, 0, prop, out);
}

COFFER_API coffer_status coffer_object_backlinks_from(coffer_object *obj, coffer_class_id origin_cls, coffer_property_id origin_prop,
                                                      coffer_iter **out)
{
    return backlinks(obj, 0, origin_cls, origin_prop, out);
}

COFFER_API coffer_status coffer_object_backlink_count_from(coffer_object *obj, coffer_class_id origin_cls,
                                                           coffer_property_id origin_prop, uint64_t *out)
{
    return backlink_count(obj, 0, origin_cls, origin_prop, out);
}

COFFER_API coffer_status coffer_object_backlink_count_all(coffer_object *obj, uint64_t *out)
{
    if (!out)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "coffer_object_backlink_count_all: out is NULL");
    *out = 0;
    coffer_status st = check_obj(obj, 0);
    if (st == COFFER_OK)
        st = obj_load(obj);
    if (st != COFFER_OK)
        return st;
    return cf_backlink_count(obj->txn, class_of(obj->txn, obj->cls)->table, obj->key, 0, 0, 0, out);
}

/* ---- schema changes of graph properties ---------------------------------- */

coffer_status cf_object_drop_graph_column(coffer_txn *txn, coffer_class_id cls, const cf_prop *old, uint32_t target_table)
{
    return cf_object_drop_graph_column_from(txn, cls, old, target_table, NULL, 0);
}

coffer_status cf_object_drop_graph_column_from(coffer_txn *txn, coffer_class_id cls, const cf_prop *old, uint32_t target_table,
                                               coffer_txn *src, coffer_class_id src_cls)
{
    /* The slot machinery names properties by index: lend the class the old
     * property as one more, for the length of this call. */
    cf_class *c = &txn->db->schema->classes[cls];
    cf_prop *props = malloc((c->nprops + 1) * sizeof *props);
    if (!props)
        return cf_error(COFFER_ERR_NO_MEMORY, "out of memory changing the schema");
    memcpy(props, c->props, c->nprops * sizeof *props);
    props[c->nprops] = *old;
    props[c->nprops].target = old->object_class ? cf_schema_find(txn->db->schema, old->object_class) : -1;
    cf_prop *saved = c->props;
    size_t nsaved = c->nprops;
    c->props = props;
    c->nprops = nsaved + 1;
    const cf_prop *p = &props[nsaved];
    coffer_iter *it = NULL;
    coffer_status st = src ? coffer_class_iterate(src, src_cls, &it) : coffer_class_iterate(txn, cls, &it);
    coffer_object *obj;
    while (st == COFFER_OK && (st = coffer_iter_next(it, &obj)) == COFFER_OK) {
        coffer_value raw, stored = {.type = COFFER_TYPE_NULL};
        st = obj_read_raw(obj, p, &raw);
        if (st != COFFER_OK || raw.type == COFFER_TYPE_NULL)
            continue;
        cf_slot slot = slot_of(cls, (coffer_property_id)nsaved, obj->key, COFFER_UPDATE_ALL);
        if (cf_prop_is_collection(p) && raw.type == COFFER_TYPE_INT) {
            st = cf_collection_delete(txn, &slot, (uint64_t)raw.u.integer);
        } else {
            if (p->type == COFFER_TYPE_LINK && raw.type == COFFER_TYPE_INT)
                stored = cf_stored_link(target_table, (uint64_t)raw.u.integer);
            else if (p->type == COFFER_TYPE_MIXED && raw.type == COFFER_TYPE_BINARY)
                st = cf_cell_read(raw.u.binary.data, raw.u.binary.size, &stored);
            if (st == COFFER_OK)
                st = cf_graph_release(txn, &slot, &stored);
        }
    }
    coffer_iter_free(it);
    c->props = saved;
    c->nprops = nsaved;
    free(props);
    return st == COFFER_DONE ? COFFER_OK : st;
}

/* ---- batch reads ---------------------------------------------------------- */

COFFER_API coffer_status coffer_object_get_values(coffer_object *obj, const coffer_property_id *props, size_t count,
                                                  coffer_value *out)
{
    if (out && count)
        memset(out, 0, count * sizeof *out);
    coffer_status st = check_obj(obj, 0);
    if (st != COFFER_OK)
        return st;
    if (count && (!props || !out))
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "coffer_object_get_values: %s is NULL", props ? "out" : "props");
    const cf_class *c = class_of(obj->txn, obj->cls);
    for (size_t i = 0; i < count; i++)
        if (props[i] >= c->nprops)
            return cf_error(COFFER_ERR_INVALID_ARGUMENT, "class '%s' has no property with id %u (it has %zu), at position %zu",
                            c->name, props[i], c->nprops, i);
    st = obj_load(obj);
    for (size_t i = 0; st == COFFER_OK && i < count; i++)
        st = obj_read(obj, &c->props[props[i]], &out[i]);
    if (st != COFFER_OK && count)
        memset(out, 0, count * sizeof *out); /* all or nothing */
    return st;
}
