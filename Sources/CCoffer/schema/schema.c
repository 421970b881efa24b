/* schema — validation, copies, the stored encoding and schema differences. */
#define _GNU_SOURCE
#include "schema/schema.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/buffer.h"
#include "util/error.h"

#define SCHEMA_ENCODING_VERSION 2u

/* ---- validation ---------------------------------------------------------- */

static int valid_utf8(const unsigned char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        unsigned c = s[i];
        size_t len;
        unsigned min;
        if (c < 0x80) { i++; continue; }
        else if ((c & 0xE0) == 0xC0) { len = 2; min = 0x80; c &= 0x1F; }
        else if ((c & 0xF0) == 0xE0) { len = 3; min = 0x800; c &= 0x0F; }
        else if ((c & 0xF8) == 0xF0) { len = 4; min = 0x10000; c &= 0x07; }
        else return 0;
        if (i + len > n) return 0;
        for (size_t k = 1; k < len; k++) {
            if ((s[i + k] & 0xC0) != 0x80) return 0;
            c = (c << 6) | (s[i + k] & 0x3F);
        }
        if (c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) return 0;
        i += len;
    }
    return 1;
}

static coffer_status check_name(const char *name, size_t max, const char *what, const char *owner)
{
    if (!name || !*name)
        return cf_error(COFFER_ERR_SCHEMA, "%s%s%s name must not be empty", owner ? owner : "", owner ? ": " : "", what);
    size_t n = strlen(name);
    if (n > max)
        return cf_error(COFFER_ERR_SCHEMA, "%s name '%s' is %zu bytes long; the limit is %zu bytes of UTF-8", what, name, n, max);
    if (!valid_utf8((const unsigned char *)name, n))
        return cf_error(COFFER_ERR_SCHEMA, "%s name is not valid UTF-8", what);
    return COFFER_OK;
}

static int pk_type_ok(coffer_type t)
{
    return t == COFFER_TYPE_INT || t == COFFER_TYPE_STRING || t == COFFER_TYPE_OBJECT_ID || t == COFFER_TYPE_UUID;
}

static int index_type_ok(coffer_type t)
{
    return t == COFFER_TYPE_BOOL || t == COFFER_TYPE_INT || t == COFFER_TYPE_STRING || t == COFFER_TYPE_DATE ||
           t == COFFER_TYPE_OBJECT_ID || t == COFFER_TYPE_UUID;
}

/* Collection, link and linking-objects rules of one property, on its own. */
static coffer_status validate_kind(const coffer_class_schema *c, const coffer_property_schema *p)
{
    if (p->collection > COFFER_COLLECTION_MAP)
        return cf_error(COFFER_ERR_SCHEMA, "property '%s.%s' has unknown collection kind %u", c->name, p->name, p->collection);
    int is_link = p->type == COFFER_TYPE_LINK, is_backlink = p->type == COFFER_TYPE_LINKING_OBJECTS;
    if ((is_link || is_backlink) && (!p->object_class || !*p->object_class))
        return cf_error(COFFER_ERR_SCHEMA, "property '%s.%s' is a %s and needs object_class", c->name, p->name,
                        is_link ? "link" : "linking-objects property");
    if (!is_link && !is_backlink && p->object_class)
        return cf_error(COFFER_ERR_SCHEMA, "property '%s.%s': object_class is only for links and linking objects, not %s",
                        c->name, p->name, coffer_type_name(p->type));
    if (!is_backlink && p->link_origin_property)
        return cf_error(COFFER_ERR_SCHEMA, "property '%s.%s': link_origin_property is only for linking objects", c->name, p->name);
    if (is_backlink) {
        if (!p->link_origin_property || !*p->link_origin_property)
            return cf_error(COFFER_ERR_SCHEMA, "linking-objects property '%s.%s' needs link_origin_property", c->name, p->name);
        if (p->collection || p->flags)
            return cf_error(COFFER_ERR_SCHEMA, "linking-objects property '%s.%s' takes no collection kind and no flags", c->name, p->name);
    }
    if (is_link && (p->collection == COFFER_COLLECTION_LIST || p->collection == COFFER_COLLECTION_SET) &&
        (p->flags & COFFER_PROPERTY_OPTIONAL))
        return cf_error(COFFER_ERR_SCHEMA, "property '%s.%s': a %s of links cannot hold null (drop COFFER_PROPERTY_OPTIONAL)",
                        c->name, p->name, p->collection == COFFER_COLLECTION_LIST ? "list" : "set");
    if (p->collection && (p->flags & (COFFER_PROPERTY_PRIMARY_KEY | COFFER_PROPERTY_INDEXED)))
        return cf_error(COFFER_ERR_SCHEMA, "property '%s.%s' is a collection and cannot be a primary key or indexed", c->name, p->name);
    return COFFER_OK;
}

/* Rules between classes: link targets exist, embedded objects are held only
 * where Realm allows, linking objects name a link back to their class. */
static coffer_status validate_links(const coffer_class_schema *classes, size_t n, const coffer_class_schema *c)
{
    for (size_t i = 0; i < c->property_count; i++) {
        const coffer_property_schema *p = &c->properties[i];
        if (!p->object_class)
            continue;
        const coffer_class_schema *t = NULL;
        for (size_t k = 0; k < n && !t; k++)
            if (strcmp(classes[k].name, p->object_class) == 0)
                t = &classes[k];
        if (!t)
            return cf_error(COFFER_ERR_SCHEMA, "property '%s.%s' refers to class '%s', which is not in the schema", c->name, p->name,
                            p->object_class);
        if (p->type == COFFER_TYPE_LINK) {
            if ((t->flags & COFFER_CLASS_EMBEDDED) && p->collection == COFFER_COLLECTION_SET)
                return cf_error(COFFER_ERR_SCHEMA, "property '%s.%s': a set cannot hold embedded objects of class '%s'", c->name,
                                p->name, t->name);
            continue;
        }
        const coffer_property_schema *o = NULL;
        for (size_t k = 0; k < t->property_count && !o; k++)
            if (strcmp(t->properties[k].name, p->link_origin_property) == 0)
                o = &t->properties[k];
        if (!o)
            return cf_error(COFFER_ERR_SCHEMA, "linking-objects property '%s.%s': class '%s' has no property '%s'", c->name, p->name,
                            t->name, p->link_origin_property);
        if (o->type != COFFER_TYPE_LINK || o->collection == COFFER_COLLECTION_MAP || !o->object_class ||
            strcmp(o->object_class, c->name) != 0)
            return cf_error(COFFER_ERR_SCHEMA, "linking-objects property '%s.%s': '%s.%s' is not a link, list or set of links to '%s'",
                            c->name, p->name, t->name, o->name, c->name);
    }
    return COFFER_OK;
}

static coffer_status validate_class(const coffer_class_schema *c)
{
    coffer_status st = check_name(c->name, COFFER_MAX_CLASS_NAME, "class", NULL);
    if (st != COFFER_OK)
        return st;
    if (c->flags & ~(uint32_t)COFFER_CLASS_EMBEDDED)
        return cf_error(COFFER_ERR_SCHEMA, "class '%s': flags 0x%x are not supported", c->name, c->flags);
    if (c->reserved[0] || c->reserved[1])
        return cf_error(COFFER_ERR_SCHEMA, "class '%s': reserved fields must be NULL", c->name);
    if (c->property_count > COFFER_MAX_PROPERTIES)
        return cf_error(COFFER_ERR_SCHEMA, "class '%s' has %zu properties; the limit is %d", c->name, c->property_count, COFFER_MAX_PROPERTIES);
    if (c->property_count && !c->properties)
        return cf_error(COFFER_ERR_SCHEMA, "class '%s': properties is NULL but property_count is %zu", c->name, c->property_count);
    int pk = -1;
    for (size_t i = 0; i < c->property_count; i++) {
        const coffer_property_schema *p = &c->properties[i];
        char owner[128];
        snprintf(owner, sizeof owner, "class '%s', property %zu", c->name, i);
        st = check_name(p->name, COFFER_MAX_PROPERTY_NAME, "property", owner);
        if (st != COFFER_OK)
            return cf_error_prefix("class '%s'", c->name);
        if ((int)p->type < COFFER_TYPE_BOOL || (int)p->type > COFFER_TYPE_LINKING_OBJECTS)
            return cf_error(COFFER_ERR_SCHEMA, "property '%s.%s' has unsupported type %d", c->name, p->name, (int)p->type);
        if (p->flags & ~(uint32_t)(COFFER_PROPERTY_OPTIONAL | COFFER_PROPERTY_PRIMARY_KEY | COFFER_PROPERTY_INDEXED))
            return cf_error(COFFER_ERR_SCHEMA, "property '%s.%s' has unknown flags 0x%x", c->name, p->name, p->flags);
        if (p->reserved[0] || p->reserved[1])
            return cf_error(COFFER_ERR_SCHEMA, "property '%s.%s': reserved fields must be NULL", c->name, p->name);
        st = validate_kind(c, p);
        if (st != COFFER_OK)
            return st;
        if ((p->flags & COFFER_PROPERTY_PRIMARY_KEY) && (c->flags & COFFER_CLASS_EMBEDDED))
            return cf_error(COFFER_ERR_SCHEMA, "embedded class '%s' cannot have a primary key ('%s')", c->name, p->name);
        if (p->flags & COFFER_PROPERTY_PRIMARY_KEY) {
            if (pk >= 0)
                return cf_error(COFFER_ERR_SCHEMA, "class '%s' has two primary keys: '%s' and '%s'", c->name, c->properties[pk].name, p->name);
            if (!pk_type_ok(p->type))
                return cf_error(COFFER_ERR_SCHEMA, "property '%s.%s' cannot be a primary key: type %s is not int, string, objectId or uuid",
                                c->name, p->name, coffer_type_name(p->type));
            pk = (int)i;
        }
        if ((p->flags & COFFER_PROPERTY_INDEXED) && !index_type_ok(p->type))
            return cf_error(COFFER_ERR_SCHEMA, "property '%s.%s' cannot be indexed: type %s is not bool, int, string, date, objectId or uuid",
                            c->name, p->name, coffer_type_name(p->type));
        for (size_t j = 0; j < i; j++)
            if (strcmp(c->properties[j].name, p->name) == 0)
                return cf_error(COFFER_ERR_SCHEMA, "class '%s' has two properties named '%s'", c->name, p->name);
    }
    return COFFER_OK;
}

COFFER_API coffer_status coffer_schema_validate(const coffer_class_schema *classes, size_t n)
{
    if (n && !classes)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "schema: classes is NULL but class_count is %zu", n);
    if (n > COFFER_MAX_CLASSES)
        return cf_error(COFFER_ERR_SCHEMA, "schema has %zu classes; the limit is %d", n, COFFER_MAX_CLASSES);
    for (size_t i = 0; i < n; i++) {
        coffer_status st = validate_class(&classes[i]);
        if (st != COFFER_OK)
            return st;
        for (size_t j = 0; j < i; j++)
            if (strcmp(classes[j].name, classes[i].name) == 0)
                return cf_error(COFFER_ERR_SCHEMA, "schema has two classes named '%s'", classes[i].name);
    }
    for (size_t i = 0; i < n; i++) {
        coffer_status st = validate_links(classes, n, &classes[i]);
        if (st != COFFER_OK)
            return st;
    }
    return COFFER_OK;
}

/* ---- copies -------------------------------------------------------------- */

static void class_free(cf_class *c)
{
    for (size_t i = 0; i < c->nprops; i++) {
        free(c->props[i].name);
        free(c->props[i].object_class);
        free(c->props[i].origin_prop);
    }
    free(c->props);
    free(c->pub_props);
    free(c->name);
}

void cf_schema_free(cf_schema *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->nclasses; i++)
        class_free(&s->classes[i]);
    free(s->classes);
    free(s);
}

void cf_schema_remove_class(cf_schema *s, size_t index)
{
    if (index >= s->nclasses)
        return;
    class_free(&s->classes[index]);
    memmove(&s->classes[index], &s->classes[index + 1], (s->nclasses - index - 1) * sizeof *s->classes);
    s->nclasses--;
}

static void class_find_pk(cf_class *c)
{
    c->pk = -1;
    for (size_t i = 0; i < c->nprops; i++)
        if (c->props[i].flags & COFFER_PROPERTY_PRIMARY_KEY)
            c->pk = (int)i;
}

static coffer_status oom(void) { return cf_error(COFFER_ERR_NO_MEMORY, "out of memory copying the schema"); }

static char *dup_or_null(const char *s) { return s ? strdup(s) : NULL; }

/* Copies the link names of a property and makes the flags canonical: links
 * (outside lists and sets) and mixed values are always nullable. */
static coffer_status normalize_kind(cf_prop *p, const char *object_class, const char *origin)
{
    p->object_class = dup_or_null(object_class);
    p->origin_prop = dup_or_null(origin);
    p->target = p->origin = -1;
    if ((object_class && !p->object_class) || (origin && !p->origin_prop))
        return COFFER_ERR_NO_MEMORY;
    if (p->type == COFFER_TYPE_MIXED ||
        (p->type == COFFER_TYPE_LINK && (p->collection == COFFER_COLLECTION_NONE || p->collection == COFFER_COLLECTION_MAP)))
        p->flags |= COFFER_PROPERTY_OPTIONAL;
    return COFFER_OK;
}

/* Copies one property, names included. */
static coffer_status prop_copy(cf_prop *dst, const cf_prop *src)
{
    *dst = *src;
    dst->name = strdup(src->name);
    dst->object_class = dup_or_null(src->object_class);
    dst->origin_prop = dup_or_null(src->origin_prop);
    if (!dst->name || (src->object_class && !dst->object_class) || (src->origin_prop && !dst->origin_prop)) {
        free(dst->name);
        free(dst->object_class);
        free(dst->origin_prop);
        memset(dst, 0, sizeof *dst);
        return oom();
    }
    return COFFER_OK;
}

coffer_status cf_schema_from_public(const coffer_class_schema *classes, size_t n, cf_schema **out)
{
    coffer_status st = coffer_schema_validate(classes, n);
    if (st != COFFER_OK)
        return st;
    cf_schema *s = calloc(1, sizeof *s);
    if (!s || (n && !(s->classes = calloc(n, sizeof *s->classes)))) {
        free(s);
        return oom();
    }
    s->nclasses = n;
    for (size_t i = 0; i < n; i++) {
        cf_class *c = &s->classes[i];
        c->name = strdup(classes[i].name);
        c->nprops = classes[i].property_count;
        c->props = calloc(c->nprops ? c->nprops : 1, sizeof *c->props);
        if (!c->name || !c->props) {
            cf_schema_free(s);
            return oom();
        }
        for (size_t j = 0; j < c->nprops; j++) {
            const coffer_property_schema *p = &classes[i].properties[j];
            c->props[j].name = strdup(p->name);
            if (!c->props[j].name) {
                cf_schema_free(s);
                return oom();
            }
            c->props[j].type = p->type;
            c->props[j].flags = p->flags;
            c->props[j].column = (uint16_t)j;
            c->props[j].collection = (uint8_t)p->collection;
            if (normalize_kind(&c->props[j], p->object_class, p->link_origin_property) != COFFER_OK) {
                cf_schema_free(s);
                return oom();
            }
        }
        c->flags = classes[i].flags;
        c->next_column = (uint16_t)c->nprops;
        class_find_pk(c);
    }
    *out = s;
    return COFFER_OK;
}

static coffer_status class_copy(cf_class *dst, const cf_class *src)
{
    memset(dst, 0, sizeof *dst);
    dst->name = strdup(src->name);
    dst->props = calloc(src->nprops ? src->nprops : 1, sizeof *dst->props);
    if (!dst->name || !dst->props)
        return oom();
    dst->table = src->table;
    dst->flags = src->flags;
    dst->next_column = src->next_column;
    dst->nprops = src->nprops;
    for (size_t j = 0; j < src->nprops; j++) {
        if (prop_copy(&dst->props[j], &src->props[j]) != COFFER_OK) {
            dst->nprops = j;
            return COFFER_ERR_NO_MEMORY;
        }
    }
    dst->pk = src->pk;
    return COFFER_OK;
}

static cf_schema *schema_alloc(size_t capacity)
{
    cf_schema *s = calloc(1, sizeof *s);
    if (s && !(s->classes = calloc(capacity ? capacity : 1, sizeof *s->classes))) {
        free(s);
        return NULL;
    }
    return s;
}

coffer_status cf_schema_copy(const cf_schema *src, cf_schema **out)
{
    cf_schema *s = schema_alloc(src->nclasses);
    if (!s)
        return oom();
    s->version = src->version;
    s->next_table = src->next_table;
    for (size_t i = 0; i < src->nclasses; i++) {
        s->nclasses = i + 1;
        if (class_copy(&s->classes[i], &src->classes[i]) != COFFER_OK) {
            cf_schema_free(s);
            return COFFER_ERR_NO_MEMORY;
        }
    }
    *out = s;
    return COFFER_OK;
}

int cf_schema_find(const cf_schema *s, const char *name)
{
    for (size_t i = 0; s && i < s->nclasses; i++)
        if (strcmp(s->classes[i].name, name) == 0)
            return (int)i;
    return -1;
}

int cf_class_find_prop(const cf_class *c, const char *name)
{
    for (size_t i = 0; i < c->nprops; i++)
        if (strcmp(c->props[i].name, name) == 0)
            return (int)i;
    return -1;
}

coffer_status cf_schema_publish(cf_schema *s)
{
    for (size_t i = 0; i < s->nclasses; i++) {
        cf_class *c = &s->classes[i];
        free(c->pub_props);
        c->pub_props = calloc(c->nprops ? c->nprops : 1, sizeof *c->pub_props);
        if (!c->pub_props)
            return oom();
        for (size_t j = 0; j < c->nprops; j++) {
            c->pub_props[j].name = c->props[j].name;
            c->pub_props[j].type = c->props[j].type;
            c->pub_props[j].flags = c->props[j].flags;
            c->pub_props[j].collection = c->props[j].collection;
            c->pub_props[j].object_class = c->props[j].object_class;
            c->pub_props[j].link_origin_property = c->props[j].origin_prop;
        }
        memset(&c->pub, 0, sizeof c->pub);
        c->pub.name = c->name;
        c->pub.properties = c->pub_props;
        c->pub.property_count = c->nprops;
        c->pub.flags = c->flags;
    }
    return COFFER_OK;
}

/* ---- stored encoding ----------------------------------------------------- */

static void put_u8(cf_buf *w, uint8_t v) { cf_buf_put(w, &v, 1); }
static void put_u16(cf_buf *w, uint16_t v) { uint8_t b[2] = {(uint8_t)v, (uint8_t)(v >> 8)}; cf_buf_put(w, b, 2); }
static void put_u32(cf_buf *w, uint32_t v) { put_u16(w, (uint16_t)v); put_u16(w, (uint16_t)(v >> 16)); }
static void put_u64(cf_buf *w, uint64_t v) { put_u32(w, (uint32_t)v); put_u32(w, (uint32_t)(v >> 32)); }
static void put_str(cf_buf *w, const char *s) { size_t n = strlen(s); put_u16(w, (uint16_t)n); cf_buf_put(w, s, n); }

coffer_status cf_schema_encode(const cf_schema *s, uint8_t **out, size_t *len)
{
    cf_buf w = {0};
    put_u32(&w, SCHEMA_ENCODING_VERSION);
    put_u64(&w, s->version);
    put_u32(&w, s->next_table);
    put_u32(&w, (uint32_t)s->nclasses);
    for (size_t i = 0; i < s->nclasses; i++) {
        const cf_class *c = &s->classes[i];
        put_str(&w, c->name);
        put_u32(&w, c->table);
        put_u32(&w, c->flags);
        put_u16(&w, c->next_column);
        put_u16(&w, (uint16_t)c->nprops);
        for (size_t j = 0; j < c->nprops; j++) {
            put_str(&w, c->props[j].name);
            put_u8(&w, (uint8_t)c->props[j].type);
            put_u32(&w, c->props[j].flags);
            put_u16(&w, c->props[j].column);
            put_u8(&w, c->props[j].collection);
            put_str(&w, c->props[j].object_class ? c->props[j].object_class : "");
            put_str(&w, c->props[j].origin_prop ? c->props[j].origin_prop : "");
        }
    }
    if (w.failed) {
        free(w.p);
        return oom();
    }
    *out = w.p;
    *len = w.len;
    return COFFER_OK;
}

typedef struct rbuf {
    const uint8_t *p;
    size_t len, off;
    int bad;
} rbuf;

static const uint8_t *take(rbuf *r, size_t n)
{
    if (r->bad || r->len - r->off < n) {
        r->bad = 1;
        return NULL;
    }
    const uint8_t *p = r->p + r->off;
    r->off += n;
    return p;
}

static uint8_t get_u8(rbuf *r) { const uint8_t *p = take(r, 1); return p ? p[0] : 0; }
static uint16_t get_u16(rbuf *r) { const uint8_t *p = take(r, 2); return p ? (uint16_t)(p[0] | p[1] << 8) : 0; }
static uint32_t get_u32(rbuf *r) { uint32_t lo = get_u16(r); return lo | (uint32_t)get_u16(r) << 16; }
static uint64_t get_u64(rbuf *r) { uint64_t lo = get_u32(r); return lo | (uint64_t)get_u32(r) << 32; }

static char *get_str(rbuf *r)
{
    uint16_t n = get_u16(r);
    const uint8_t *p = take(r, n);
    if (!p)
        return NULL;
    char *s = malloc((size_t)n + 1);
    if (!s) {
        r->bad = 1;
        return NULL;
    }
    memcpy(s, p, n);
    s[n] = '\0';
    if (strlen(s) != n)
        r->bad = 1;
    return s;
}

coffer_status cf_schema_decode(const uint8_t *buf, size_t len, cf_schema **out)
{
    rbuf r = {buf, len, 0, 0};
    uint32_t enc = get_u32(&r);
    if (!r.bad && enc > SCHEMA_ENCODING_VERSION)
        return cf_error(COFFER_ERR_FORMAT_VERSION, "the stored schema uses encoding %u; this library reads up to %u", enc, SCHEMA_ENCODING_VERSION);
    uint64_t version = get_u64(&r);
    uint32_t next_table = get_u32(&r);
    uint32_t n = get_u32(&r);
    if (r.bad || n > COFFER_MAX_CLASSES)
        return cf_error(COFFER_ERR_CORRUPTED, "the stored schema is damaged");
    cf_schema *s = schema_alloc(n);
    if (!s)
        return oom();
    s->version = version;
    s->next_table = next_table;
    for (uint32_t i = 0; i < n && !r.bad; i++) {
        cf_class *c = &s->classes[i];
        s->nclasses = i + 1;
        c->name = get_str(&r);
        c->table = get_u32(&r);
        c->flags = get_u32(&r);
        c->next_column = get_u16(&r);
        uint16_t np = get_u16(&r);
        if (r.bad || np > COFFER_MAX_PROPERTIES || c->table == 0 || c->table >= next_table)
            break;
        c->props = calloc(np ? np : 1, sizeof *c->props);
        if (!c->props) {
            r.bad = 1;
            break;
        }
        for (uint16_t j = 0; j < np && !r.bad; j++) {
            c->nprops = (size_t)j + 1;
            c->props[j].name = get_str(&r);
            c->props[j].type = (coffer_type)get_u8(&r);
            c->props[j].flags = get_u32(&r);
            c->props[j].column = get_u16(&r);
            c->props[j].target = c->props[j].origin = -1;
            if (enc >= 2) {
                c->props[j].collection = get_u8(&r);
                c->props[j].object_class = get_str(&r);
                c->props[j].origin_prop = get_str(&r);
                if (c->props[j].object_class && !*c->props[j].object_class) {
                    free(c->props[j].object_class);
                    c->props[j].object_class = NULL;
                }
                if (c->props[j].origin_prop && !*c->props[j].origin_prop) {
                    free(c->props[j].origin_prop);
                    c->props[j].origin_prop = NULL;
                }
            }
            if ((int)c->props[j].type < COFFER_TYPE_BOOL || (int)c->props[j].type > COFFER_TYPE_LINKING_OBJECTS ||
                c->props[j].collection > COFFER_COLLECTION_MAP || c->props[j].column >= c->next_column ||
                ((c->props[j].type == COFFER_TYPE_LINK || c->props[j].type == COFFER_TYPE_LINKING_OBJECTS) &&
                 !c->props[j].object_class))
                r.bad = 1;
        }
        class_find_pk(c);
    }
    if (r.bad || s->nclasses != n || r.off != r.len) {
        cf_schema_free(s);
        return cf_error(COFFER_ERR_CORRUPTED, "the stored schema is damaged");
    }
    *out = s;
    return COFFER_OK;
}

/* ---- planning an open ---------------------------------------------------- */

typedef struct planner {
    cf_plan *plan;
    const cf_schema *stored; /* the file's schema before this open, or NULL */
    cf_buf diffs;
    int oom;
} planner;

/* Records a difference that needs a migration at the same schema version. */
static void note_diff(planner *pl, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note_diff(planner *pl, const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    pl->plan->needs_migration = 1;
    if (pl->diffs.len)
        cf_buf_put(&pl->diffs, "; ", 2);
    cf_buf_put(&pl->diffs, line, strlen(line));
}

static void add_action(planner *pl, cf_action_kind kind, const cf_class *c, int class_index, int prop_index, uint16_t column)
{
    cf_action *a = realloc(pl->plan->actions, (pl->plan->nactions + 1) * sizeof *a);
    if (!a) {
        pl->oom = 1;
        return;
    }
    pl->plan->actions = a;
    a[pl->plan->nactions++] = (cf_action){.kind = kind, .table = c->table, .column = column, .class_index = class_index,
                                          .prop_index = prop_index};
    pl->plan->changed = 1;
}

/* A stored property that held links or collections and goes away (or
 * changes type): its contents must be released, so that backlink counts
 * stay exact and owned objects and collections do not linger. */
static void drop_graph(planner *pl, const cf_schema *stored, const cf_class *s, int class_index, const cf_prop *sp)
{
    if (!(sp->type == COFFER_TYPE_LINK || sp->type == COFFER_TYPE_MIXED || sp->collection != COFFER_COLLECTION_NONE))
        return;
    add_action(pl, CF_ACTION_DROP_GRAPH, s, class_index, -1, sp->column);
    if (pl->oom)
        return;
    cf_action *a = &pl->plan->actions[pl->plan->nactions - 1];
    if (prop_copy(&a->old, sp) != COFFER_OK) {
        pl->oom = 1;
        a->kind = CF_ACTION_DROP_INDEX; /* harmless, and frees nothing */
        return;
    }
    int t = sp->object_class ? cf_schema_find(stored, sp->object_class) : -1;
    a->old_target_table = t >= 0 ? stored->classes[t].table : 0;
}

static const char *optional_word(uint32_t flags) { return (flags & COFFER_PROPERTY_OPTIONAL) ? "optional" : "required"; }

/* Compares given property `gp` with its stored namesake in class `s`, notes
 * differences, assigns its column, and says whether its index must be built. */
static int same_name(const char *a, const char *b) { return (!a && !b) || (a && b && strcmp(a, b) == 0); }

/* A description of a property's kind for messages: "list<int>", "link<Dog>". */
static const char *kind_text(const cf_prop *p, char *buf, size_t size)
{
    static const char *const kinds[] = {"", "list", "set", "map"};
    const char *t = p->object_class ? p->object_class : coffer_type_name(p->type);
    if (p->collection)
        snprintf(buf, size, "%s<%s>", kinds[p->collection], t);
    else if (p->type == COFFER_TYPE_LINK)
        snprintf(buf, size, "link<%s>", t);
    else
        snprintf(buf, size, "%s", coffer_type_name(p->type));
    return buf;
}

static int plan_prop(planner *pl, cf_class *s, int class_index, const char *class_name, cf_prop *gp)
{
    int j = cf_class_find_prop(s, gp->name);
    if (gp->type == COFFER_TYPE_LINKING_OBJECTS) {
        /* Computed from the links: nothing stored, no migration. */
        gp->column = j >= 0 ? s->props[j].column : s->next_column++;
        if (j < 0 || s->props[j].type != gp->type || !same_name(s->props[j].object_class, gp->object_class) ||
            !same_name(s->props[j].origin_prop, gp->origin_prop))
            pl->plan->changed = 1;
        return 0;
    }
    if (j < 0) {
        note_diff(pl, "property '%s.%s' was added", class_name, gp->name);
        gp->column = s->next_column++;
        pl->plan->changed = 1;
        return cf_prop_indexed(gp);
    }
    const cf_prop *sp = &s->props[j];
    gp->column = sp->column;
    if (sp->type != gp->type || sp->collection != gp->collection || !same_name(sp->object_class, gp->object_class)) {
        char a[160], b[160];
        note_diff(pl, "property '%s.%s' changed type from %s to %s", class_name, gp->name, kind_text(sp, a, sizeof a),
                  kind_text(gp, b, sizeof b));
        /* A new column: the old values are not readable as the new type. */
        gp->column = s->next_column++;
        if (cf_prop_indexed(sp))
            add_action(pl, CF_ACTION_DROP_INDEX, s, class_index, -1, sp->column);
        drop_graph(pl, pl->stored, s, class_index, sp);
        pl->plan->changed = 1;
        return cf_prop_indexed(gp);
    }
    int reindex = cf_prop_indexed(sp) != cf_prop_indexed(gp); /* no migration needed */
    if ((sp->flags ^ gp->flags) & COFFER_PROPERTY_OPTIONAL) {
        note_diff(pl, "property '%s.%s' changed from %s to %s", class_name, gp->name,
                  optional_word(sp->flags), optional_word(gp->flags));
        reindex = 1;
    }
    if ((sp->flags ^ gp->flags) & COFFER_PROPERTY_PRIMARY_KEY) {
        note_diff(pl, (gp->flags & COFFER_PROPERTY_PRIMARY_KEY) ? "property '%s.%s' became the primary key"
                                                                   : "property '%s.%s' is no longer the primary key",
                  class_name, gp->name);
        reindex = 1;
    }
    if (sp->flags != gp->flags)
        pl->plan->changed = 1;
    if (!reindex)
        return 0;
    if (cf_prop_indexed(sp))
        add_action(pl, CF_ACTION_DROP_INDEX, s, class_index, -1, sp->column);
    return cf_prop_indexed(gp);
}

/* Brings stored class `s` to given class `g`: records differences, and edits
 * `s` (columns, flags, order) as applying them at a higher version would. */
static void plan_class(planner *pl, cf_class *s, int class_index, const cf_class *g)
{
    cf_prop *props = calloc(g->nprops ? g->nprops : 1, sizeof *props);
    if (!props) {
        pl->oom = 1;
        return;
    }
    if ((s->flags ^ g->flags) & COFFER_CLASS_EMBEDDED) {
        note_diff(pl, "class '%s' changed from %s to %s", g->name, cf_class_embedded(s) ? "embedded" : "top-level",
                  cf_class_embedded(g) ? "embedded" : "top-level");
        s->flags = g->flags;
    }
    for (size_t i = 0; i < g->nprops; i++) {
        if (prop_copy(&props[i], &g->props[i]) != COFFER_OK) {
            pl->oom = 1;
            continue;
        }
        if (plan_prop(pl, s, class_index, g->name, &props[i]))
            add_action(pl, CF_ACTION_BUILD_INDEX, s, class_index, (int)i, props[i].column);
    }
    for (size_t j = 0; j < s->nprops; j++) {
        if (cf_class_find_prop(g, s->props[j].name) < 0) {
            if (s->props[j].type != COFFER_TYPE_LINKING_OBJECTS)
                note_diff(pl, "property '%s.%s' was removed", g->name, s->props[j].name);
            if (cf_prop_indexed(&s->props[j]))
                add_action(pl, CF_ACTION_DROP_INDEX, s, class_index, -1, s->props[j].column);
            drop_graph(pl, pl->stored, s, class_index, &s->props[j]);
            pl->plan->changed = 1;
        }
    }
    if (s->nprops != g->nprops)
        pl->plan->changed = 1;
    for (size_t j = 0; j < s->nprops; j++) {
        free(s->props[j].name);
        free(s->props[j].object_class);
        free(s->props[j].origin_prop);
    }
    free(s->props);
    s->props = props;
    s->nprops = g->nprops;
    class_find_pk(s);
    /* The BUILD_INDEX actions refer to props of the final order. */
}

static int in_subset(const char *name, const char *const *subset, size_t n)
{
    if (!n)
        return 1;
    for (size_t i = 0; i < n; i++)
        if (strcmp(subset[i], name) == 0)
            return 1;
    return 0;
}

/* The first property of `c` that can link to a class of `view`, or NULL. */
static const cf_prop *link_into(const cf_class *c, const cf_schema *view)
{
    for (size_t j = 0; j < c->nprops; j++) {
        const cf_prop *p = &c->props[j];
        if (p->type == COFFER_TYPE_MIXED || (p->type == COFFER_TYPE_LINK && cf_schema_find(view, p->object_class) >= 0))
            return p;
    }
    return NULL;
}

static coffer_status note_left_out(cf_plan *plan, const cf_class *c, const cf_prop *via)
{
    cf_left_out *grown = realloc(plan->left_out, (plan->nleft_out + 1) * sizeof *grown);
    if (!grown)
        return oom();
    plan->left_out = grown;
    cf_left_out *l = &grown[plan->nleft_out];
    l->name = strdup(c->name);
    l->via = strdup(via->name);
    plan->nleft_out++;
    return l->name && l->via ? COFFER_OK : oom();
}

/* A class left out of a subset must not be able to link into it: deleting
 * an object has to reach every link to it. A class a higher schema version
 * leaves out (`given` lacks it) is only noted: the migration may empty it. */
static coffer_status check_subset_closed(const cf_schema *all, const cf_schema *view, const cf_schema *given, int higher,
                                         cf_plan *plan)
{
    for (size_t i = 0; i < all->nclasses; i++) {
        const cf_class *c = &all->classes[i];
        if (cf_schema_find(view, c->name) >= 0)
            continue;
        const cf_prop *p = link_into(c, view);
        if (!p)
            continue;
        if (higher && cf_schema_find(given, c->name) < 0) {
            coffer_status st = note_left_out(plan, c, p);
            if (st != COFFER_OK)
                return st;
            continue;
        }
        return cf_error(COFFER_ERR_SCHEMA, "the class subset leaves out class '%s', whose property '%s' can link to the "
                        "classes it opens; include '%s'", c->name, p->name, c->name);
    }
    return COFFER_OK;
}

coffer_status cf_schema_plan(const cf_schema *stored, const cf_schema *given, uint64_t given_version,
                             const char *const *subset, size_t nsubset, cf_plan *plan)
{
    memset(plan, 0, sizeof *plan);
    planner pl = {plan, stored, {0}, 0};
    coffer_status st;
    if (stored && given && given_version < stored->version)
        return cf_error(COFFER_ERR_SCHEMA_VERSION, "schema version %llu is lower than the file's schema version %llu",
                        (unsigned long long)given_version, (unsigned long long)stored->version);
    const cf_schema *names = given ? given : stored;
    for (size_t i = 0; i < nsubset; i++)
        if (cf_schema_find(names, subset[i]) < 0)
            return cf_error(COFFER_ERR_NOT_FOUND, "class subset names '%s', which is not a class of the %s", subset[i],
                            given ? "schema given" : "file");

    if (stored) {
        st = cf_schema_copy(stored, &plan->stored);
    } else {
        plan->stored = schema_alloc(given ? given->nclasses : 0);
        st = plan->stored ? COFFER_OK : oom();
        if (st == COFFER_OK) {
            plan->stored->next_table = 1;
            plan->changed = 1;
        }
    }
    if (st != COFFER_OK)
        return st;
    cf_schema *ns = plan->stored;

    if (given) {
        if (!stored || given_version != stored->version)
            plan->changed = 1;
        ns->version = given_version;
        /* Grow the class array so every given class fits. */
        cf_class *grown = realloc(ns->classes, (ns->nclasses + given->nclasses + 1) * sizeof *grown);
        if (!grown) {
            cf_plan_free(plan);
            return oom();
        }
        ns->classes = grown;
        for (size_t i = 0; i < given->nclasses; i++) {
            const cf_class *g = &given->classes[i];
            if (!in_subset(g->name, subset, nsubset))
                continue;
            int k = cf_schema_find(ns, g->name);
            if (k < 0) {
                if (ns->next_table > COFFER_MAX_CLASSES) {
                    cf_plan_free(plan);
                    return cf_error(COFFER_ERR_LIMIT, "cannot add class '%s': the file has used all %d class slots", g->name, COFFER_MAX_CLASSES);
                }
                cf_class *c = &ns->classes[ns->nclasses];
                if (class_copy(c, g) != COFFER_OK) {
                    class_free(c);
                    cf_plan_free(plan);
                    return COFFER_ERR_NO_MEMORY;
                }
                c->table = ns->next_table++;
                ns->nclasses++;
                add_action(&pl, CF_ACTION_CREATE_TABLE, c, (int)ns->nclasses - 1, -1, 0);
            } else {
                plan_class(&pl, &ns->classes[k], k, g);
            }
        }
    }
    if (pl.oom || pl.diffs.failed) {
        free(pl.diffs.p);
        cf_plan_free(plan);
        return oom();
    }
    if (pl.diffs.len) {
        cf_buf_put(&pl.diffs, "", 1);
        plan->differences = (char *)pl.diffs.p;
    }
    if (plan->needs_migration && stored && given_version == stored->version) {
        coffer_status e = cf_error(COFFER_ERR_MIGRATION_REQUIRED,
                                   "migration required: the schema differs from the file's at schema version %llu: %s",
                                   (unsigned long long)given_version, plan->differences);
        cf_plan_free(plan);
        return e;
    }

    /* The view: given classes in the given order (or the stored ones), with
     * properties in the given order and the stored columns. */
    const cf_schema *order = given ? given : ns;
    int higher = stored && given && given_version > stored->version;
    plan->view = schema_alloc(order->nclasses);
    if (!plan->view) {
        cf_plan_free(plan);
        return oom();
    }
    plan->view->version = ns->version;
    plan->view->next_table = ns->next_table;
    for (size_t i = 0; i < order->nclasses; i++) {
        if (!in_subset(order->classes[i].name, subset, nsubset))
            continue;
        int k = cf_schema_find(ns, order->classes[i].name);
        cf_class *v = &plan->view->classes[plan->view->nclasses++];
        if (class_copy(v, &ns->classes[k]) != COFFER_OK) {
            cf_plan_free(plan);
            return COFFER_ERR_NO_MEMORY;
        }
    }
    if ((st = cf_schema_resolve(plan->view)) != COFFER_OK || (st = check_subset_closed(ns, plan->view, given, higher, plan)) != COFFER_OK ||
        (st = cf_schema_publish(plan->view)) != COFFER_OK) {
        cf_plan_free(plan);
        return st;
    }
    return COFFER_OK;
}

coffer_status cf_schema_resolve(cf_schema *view)
{
    for (size_t i = 0; i < view->nclasses; i++) {
        cf_class *c = &view->classes[i];
        for (size_t j = 0; j < c->nprops; j++) {
            cf_prop *p = &c->props[j];
            p->target = p->origin = -1;
            if (!p->object_class)
                continue;
            p->target = cf_schema_find(view, p->object_class);
            if (p->target < 0)
                return cf_error(COFFER_ERR_SCHEMA, "property '%s.%s' refers to class '%s', which this handle does not open "
                                "(add it to the class subset)", c->name, p->name, p->object_class);
            if (p->type == COFFER_TYPE_LINKING_OBJECTS) {
                p->origin = cf_class_find_prop(&view->classes[p->target], p->origin_prop);
                if (p->origin < 0)
                    return cf_error(COFFER_ERR_SCHEMA, "linking-objects property '%s.%s': class '%s' has no property '%s'", c->name,
                                    p->name, p->object_class, p->origin_prop);
            }
        }
    }
    return COFFER_OK;
}

void cf_plan_free(cf_plan *plan)
{
    cf_schema_free(plan->stored);
    cf_schema_free(plan->view);
    for (size_t i = 0; i < plan->nactions; i++) {
        if (plan->actions[i].kind != CF_ACTION_DROP_GRAPH)
            continue;
        free(plan->actions[i].old.name);
        free(plan->actions[i].old.object_class);
        free(plan->actions[i].old.origin_prop);
    }
    free(plan->actions);
    free(plan->differences);
    for (size_t i = 0; i < plan->nleft_out; i++) {
        free(plan->left_out[i].name);
        free(plan->left_out[i].via);
    }
    free(plan->left_out);
    memset(plan, 0, sizeof *plan);
}
