/* bind — checks a parsed query against the schema of an open database:
 * resolves key paths to steps over properties, checks that what is compared
 * can be compared, and converts literals and arguments to the type of the
 * property they meet. Every error is COFFER_ERR_QUERY naming the culprit. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/decimal128.h"
#include "util/error.h"
#include "query/engine.h"

typedef coffer_status status;

/* Where a key path stands after some steps: objects of a class, or values. */
typedef struct position {
    int is_object;
    coffer_class_id cls;
    coffer_type type; /* values: their type (MIXED: any) */
    int multi;
    int type_names;
} position;

typedef struct variable {
    const char *name;
    position at;
} variable;

typedef struct binder {
    coffer_db *db;
    const cf_schema *schema;
    cf_qarena *arena;
    coffer_class_id cls;
    const coffer_value *args;
    size_t nargs;
    int npatterns;
    int nrefs;
    int nvars, max_var;
    const cf_bslot *slots; /* arguments bound as plain constants */
    int unpatchable;       /* an argument bound otherwise (list, obj(), null) */
    variable vars[CF_QUERY_MAX_DEPTH]; /* last: not cleared up front */
} binder;

static status no_memory(void) { return cf_error(COFFER_ERR_NO_MEMORY, "query: out of memory"); }

static const cf_class *class_at(const binder *b, coffer_class_id cls) { return &b->schema->classes[cls]; }

static int is_number(coffer_type t)
{
    return t == COFFER_TYPE_INT || t == COFFER_TYPE_FLOAT || t == COFFER_TYPE_DOUBLE || t == COFFER_TYPE_DECIMAL128;
}

static int is_bytes(coffer_type t) { return t == COFFER_TYPE_STRING || t == COFFER_TYPE_BINARY; }

static int is_text_op(cf_qcompare_op op)
{
    return op == CF_QC_BEGINSWITH || op == CF_QC_ENDSWITH || op == CF_QC_CONTAINS || op == CF_QC_LIKE;
}

static int is_ordered_op(cf_qcompare_op op)
{
    return op == CF_QC_LT || op == CF_QC_LE || op == CF_QC_GT || op == CF_QC_GE || op == CF_QC_BETWEEN;
}

static const char *op_name(cf_qcompare_op op)
{
    static const char *const names[] = {"==", "!=", "<", "<=", ">", ">=", "BEGINSWITH", "ENDSWITH",
                                        "CONTAINS", "LIKE", "IN", "BETWEEN"};
    return names[op];
}

static const char *type_label(coffer_type t, int is_link_cls, const binder *b, coffer_class_id cls)
{
    if (t == COFFER_TYPE_LINK && is_link_cls)
        return class_at(b, cls)->name;
    return coffer_type_name(t);
}

/* Appends `part` to the label being built, truncating at the buffer's end. */
static void label_put(char *buf, size_t cap, size_t *n, const char *part, size_t len)
{
    if (len > cap - 1 - *n)
        len = cap - 1 - *n;
    memcpy(buf + *n, part, len);
    *n += len;
}

/* "'owner.address.city'" for messages, in the arena. Built for every path
 * bound, so plain property names are copied without formatting. */
static const char *path_label(binder *b, const cf_qpath *path)
{
    char buf[512];
    size_t n = 0;
    label_put(buf, sizeof buf, &n, "'", 1);
    for (size_t i = 0; i < path->count; i++) {
        const cf_qpath_elem *e = &path->elems[i];
        const char *part = NULL;
        char tmp[160];
        switch (e->kind) {
        case CF_QK_PROPERTY: part = e->name; break;
        case CF_QK_VARIABLE: snprintf(tmp, sizeof tmp, "$%s", e->name); part = tmp; break;
        case CF_QK_INDEX: snprintf(tmp, sizeof tmp, "[%llu]", (unsigned long long)e->index); part = tmp; break;
        case CF_QK_FIRST: part = "[FIRST]"; break;
        case CF_QK_LAST: part = "[LAST]"; break;
        case CF_QK_KEY: snprintf(tmp, sizeof tmp, "['%.100s']", e->name); part = tmp; break;
        case CF_QK_BACKLINKS: snprintf(tmp, sizeof tmp, "@links.%.60s.%.60s", e->name, e->property); part = tmp; break;
        case CF_QK_ALL_BACKLINKS: part = "@links"; break;
        case CF_QK_COUNT: part = "@count"; break;
        case CF_QK_SUM: part = "@sum"; break;
        case CF_QK_AVG: part = "@avg"; break;
        case CF_QK_MIN: part = "@min"; break;
        case CF_QK_MAX: part = "@max"; break;
        case CF_QK_KEYS: part = "@keys"; break;
        case CF_QK_VALUES: part = "@values"; break;
        case CF_QK_TYPE: part = "@type"; break;
        }
        if (i && part[0] != '[')
            label_put(buf, sizeof buf, &n, ".", 1);
        label_put(buf, sizeof buf, &n, part, strlen(part));
    }
    label_put(buf, sizeof buf, &n, "'", 1);
    char *out = cf_qarena_strndup(b->arena, buf, n);
    return out ? out : "a key path";
}

/* ---- key paths ----------------------------------------------------------- */

static position object_at(coffer_class_id cls, int multi)
{
    position p = {1, cls, COFFER_TYPE_LINK, multi, 0};
    return p;
}

static position value_at(coffer_type t, int multi)
{
    position p = {0, 0, t, multi, 0};
    return p;
}

/* What one element of a property (or the property itself) is. */
static position element_of(const cf_prop *p, int multi)
{
    if (p->type == COFFER_TYPE_LINK)
        return object_at((coffer_class_id)p->target, multi);
    return value_at(p->type, multi);
}

static int elem_is(const cf_qpath *path, size_t i, cf_qpath_elem_kind kind)
{
    return i < path->count && path->elems[i].kind == kind;
}

static int elem_is_position(const cf_qpath *path, size_t i)
{
    return elem_is(path, i, CF_QK_INDEX) || elem_is(path, i, CF_QK_FIRST) || elem_is(path, i, CF_QK_LAST);
}

static uint64_t position_index(const cf_qpath_elem *e)
{
    return e->kind == CF_QK_FIRST ? CF_AT_FIRST : e->kind == CF_QK_LAST ? CF_AT_LAST : e->index;
}

/* A step of `kind` that reads the map entry named by path element `e`. */
static void key_step(cf_bstep *s, cf_bstep_kind kind, const cf_qpath_elem *e)
{
    s->kind = kind;
    s->key = e->name;
    s->key_size = e->name_size;
}

static int aggregatable(coffer_type t, cf_qpath_elem_kind agg)
{
    if (is_number(t) || t == COFFER_TYPE_MIXED)
        return 1;
    return (agg == CF_QK_MIN || agg == CF_QK_MAX) && t == COFFER_TYPE_DATE;
}

static coffer_type aggregate_type(coffer_type t, cf_qpath_elem_kind agg)
{
    if (agg == CF_QK_MIN || agg == CF_QK_MAX || t == COFFER_TYPE_MIXED || t == COFFER_TYPE_DECIMAL128)
        return t;
    if (agg == CF_QK_AVG)
        return COFFER_TYPE_DOUBLE;
    return t == COFFER_TYPE_INT ? COFFER_TYPE_INT : COFFER_TYPE_DOUBLE;
}

static const char *aggregate_name(cf_qpath_elem_kind k)
{
    return k == CF_QK_SUM ? "@sum" : k == CF_QK_AVG ? "@avg" : k == CF_QK_MIN ? "@min" : "@max";
}

/* Binds the collection property `p` and what follows it (an index, key,
 * @count, @keys or @values folds into one step). */
static status bind_collection(const cf_qpath *path, size_t *i, const cf_prop *p, coffer_class_id cls,
                              coffer_property_id prop, const char *label, cf_bstep *s, position *at)
{
    size_t next = *i + 1;
    s->cls = cls;
    s->prop = prop;
    int is_map = p->collection == COFFER_COLLECTION_MAP;
    const char *kind = is_map ? "map" : p->collection == COFFER_COLLECTION_SET ? "set" : "list";
    if (elem_is_position(path, next)) {
        if (p->collection != COFFER_COLLECTION_LIST)
            return cf_error(COFFER_ERR_QUERY, "query: %s is a %s; [n], [FIRST] and [LAST] need a list", label, kind);
        s->kind = CF_BS_AT;
        s->index = position_index(&path->elems[next]);
        *at = element_of(p, at->multi);
        *i = next;
    } else if (elem_is(path, next, CF_QK_COUNT)) {
        s->kind = CF_BS_SIZE;
        *at = value_at(COFFER_TYPE_INT, at->multi);
        *i = next;
    } else if (elem_is(path, next, CF_QK_KEY) || elem_is(path, next, CF_QK_KEYS) || elem_is(path, next, CF_QK_VALUES)) {
        if (!is_map)
            return cf_error(COFFER_ERR_QUERY, "query: %s is a %s; ['key'], @keys and @values need a map", label, kind);
        const cf_qpath_elem *e = &path->elems[next];
        if (e->kind == CF_QK_KEY) {
            key_step(s, CF_BS_KEY, e);
            *at = element_of(p, at->multi);
        } else if (e->kind == CF_QK_KEYS) {
            s->kind = CF_BS_KEYS;
            *at = value_at(COFFER_TYPE_STRING, 1);
        } else {
            s->kind = CF_BS_ELEMENTS;
            *at = element_of(p, 1);
        }
        *i = next;
    } else {
        s->kind = CF_BS_ELEMENTS;
        *at = element_of(p, 1);
    }
    return COFFER_OK;
}

static status bind_property(binder *b, const cf_qpath *path, size_t *i, const char *label, cf_bstep *s, position *at)
{
    const cf_qpath_elem *e = &path->elems[*i];
    if (!at->is_object) {
        if (strcmp(e->name, "length") == 0 && *i + 1 == path->count &&
            (is_bytes(at->type) || at->type == COFFER_TYPE_MIXED)) {
            s->kind = CF_BS_LENGTH;
            *at = value_at(COFFER_TYPE_INT, at->multi);
            return COFFER_OK;
        }
        return cf_error(COFFER_ERR_QUERY, "query: in %s, '%s' is applied to %s values, which have no properties", label,
                        e->name, coffer_type_name(at->type));
    }
    const cf_class *c = class_at(b, at->cls);
    int pi = cf_class_find_prop(c, e->name);
    if (pi < 0)
        return cf_error(COFFER_ERR_QUERY, "query: class '%s' has no property '%s' (in %s)", c->name, e->name, label);
    const cf_prop *p = &c->props[pi];
    s->cls = at->cls;
    s->prop = (coffer_property_id)pi;
    if (p->type == COFFER_TYPE_LINKING_OBJECTS) {
        s->kind = CF_BS_LINKING;
        s->origin_cls = (coffer_class_id)p->target;
        s->origin_prop = (coffer_property_id)p->origin;
        *at = object_at((coffer_class_id)p->target, 1);
        return COFFER_OK;
    }
    if (cf_prop_is_collection(p))
        return bind_collection(path, i, p, at->cls, (coffer_property_id)pi, label, s, at);
    s->kind = CF_BS_PROPERTY;
    *at = element_of(p, at->multi);
    return COFFER_OK;
}

/* Steps on values of a mixed property holding a nested list or map. */
static status bind_mixed(const cf_qpath *path, size_t i, const char *label, cf_bstep *s, position *at)
{
    const cf_qpath_elem *e = &path->elems[i];
    if (at->is_object || at->type != COFFER_TYPE_MIXED)
        return cf_error(COFFER_ERR_QUERY, "query: in %s, %s needs a list, set or map property (or a mixed one)",
                        label, e->kind == CF_QK_KEY ? "['key']" : e->kind == CF_QK_VALUES ? "@values" : "[n]");
    if (e->kind == CF_QK_KEY) {
        key_step(s, CF_BS_MIXED_KEY, e);
    } else if (e->kind == CF_QK_VALUES) {
        s->kind = CF_BS_MIXED_ELEMENTS;
        at->multi = 1;
    } else {
        s->kind = CF_BS_MIXED_AT;
        s->index = position_index(e);
    }
    return COFFER_OK;
}

static status bind_aggregate(binder *b, const cf_qpath *path, size_t *i, const char *label, cf_bstep *s, position *at)
{
    cf_qpath_elem_kind agg = path->elems[*i].kind;
    s->kind = CF_BS_AGGREGATE;
    s->aggregate = agg;
    if (!at->multi)
        return cf_error(COFFER_ERR_QUERY, "query: %s in %s needs a collection before it", aggregate_name(agg), label);
    coffer_type t = at->type;
    if (at->is_object) {
        if (!elem_is(path, *i + 1, CF_QK_PROPERTY))
            return cf_error(COFFER_ERR_QUERY, "query: %s of objects in %s needs a property after it, as in %s.price",
                            aggregate_name(agg), label, aggregate_name(agg));
        const cf_class *c = class_at(b, at->cls);
        const char *name = path->elems[*i + 1].name;
        int pi = cf_class_find_prop(c, name);
        if (pi < 0)
            return cf_error(COFFER_ERR_QUERY, "query: class '%s' has no property '%s' (in %s)", c->name, name, label);
        const cf_prop *p = &c->props[pi];
        if (cf_prop_is_collection(p) || p->type == COFFER_TYPE_LINK || p->type == COFFER_TYPE_LINKING_OBJECTS)
            return cf_error(COFFER_ERR_QUERY, "query: %s needs a property of numbers, but '%s.%s' is not one (in %s)",
                            aggregate_name(agg), c->name, name, label);
        s->has_prop = 1;
        s->cls = at->cls;
        s->prop = (coffer_property_id)pi;
        t = p->type;
        (*i)++;
    }
    if (!aggregatable(t, agg))
        return cf_error(COFFER_ERR_QUERY, "query: %s needs numbers%s, but %s holds %s values", aggregate_name(agg),
                        agg == CF_QK_MIN || agg == CF_QK_MAX ? " or dates" : "", label, coffer_type_name(t));
    *at = value_at(aggregate_type(t, agg), 0);
    return COFFER_OK;
}

static status bind_backlinks(binder *b, const cf_qpath_elem *e, const char *label, cf_bstep *s, position *at)
{
    if (!at->is_object)
        return cf_error(COFFER_ERR_QUERY, "query: @links in %s needs objects before it", label);
    int oc = cf_schema_find(b->schema, e->name);
    if (oc < 0)
        return cf_error(COFFER_ERR_QUERY, "query: no class '%s' (in %s)", e->name, label);
    const cf_class *c = class_at(b, (coffer_class_id)oc);
    int op = cf_class_find_prop(c, e->property);
    if (op < 0)
        return cf_error(COFFER_ERR_QUERY, "query: class '%s' has no property '%s' (in %s)", c->name, e->property, label);
    const cf_prop *p = &c->props[op];
    if (p->type != COFFER_TYPE_LINK || p->collection == COFFER_COLLECTION_MAP || p->target != (int)at->cls)
        return cf_error(COFFER_ERR_QUERY, "query: '%s.%s' is not a link, list or set of links to '%s' (in %s)", c->name,
                        e->property, class_at(b, at->cls)->name, label);
    s->kind = CF_BS_LINKING;
    s->origin_cls = (coffer_class_id)oc;
    s->origin_prop = (coffer_property_id)op;
    *at = object_at((coffer_class_id)oc, 1);
    return COFFER_OK;
}

static status bind_count(const char *label, cf_bstep *s, position *at)
{
    if (!at->multi) {
        if (at->is_object || at->type != COFFER_TYPE_MIXED)
            return cf_error(COFFER_ERR_QUERY, "query: @count in %s needs a collection before it", label);
        s->kind = CF_BS_MIXED_SIZE;
    } else {
        s->kind = CF_BS_COUNT;
    }
    *at = value_at(COFFER_TYPE_INT, 0);
    return COFFER_OK;
}

static status bind_path(binder *b, const cf_qpath *path, cf_bstep **steps_out, size_t *nsteps, int *var, position *at,
                        const char **label_out)
{
    const char *label = path_label(b, path);
    *label_out = label;
    cf_bstep *steps = cf_qarena_alloc(b->arena, path->count * sizeof *steps);
    if (!steps)
        return no_memory();
    size_t n = 0, i = 0;
    *var = -1;
    *at = object_at(b->cls, 0);
    if (path->elems[0].kind == CF_QK_VARIABLE) {
        int v = b->nvars - 1;
        while (v >= 0 && strcmp(b->vars[v].name, path->elems[0].name) != 0)
            v--;
        if (v < 0)
            return cf_error(COFFER_ERR_QUERY, "query: $%s in %s is not the variable of an enclosing SUBQUERY",
                            path->elems[0].name, label);
        *var = v;
        *at = b->vars[v].at;
        i = 1;
    }
    for (; i < path->count; i++) {
        const cf_qpath_elem *e = &path->elems[i];
        cf_bstep *s = &steps[n];
        memset(s, 0, sizeof *s);
        status st = COFFER_OK;
        if (at->type_names)
            return cf_error(COFFER_ERR_QUERY, "query: in %s, nothing may follow @type", label);
        switch (e->kind) {
        case CF_QK_PROPERTY: st = bind_property(b, path, &i, label, s, at); break;
        case CF_QK_VARIABLE:
            return cf_error(COFFER_ERR_QUERY, "query: $%s may only start a key path (in %s)", e->name, label);
        case CF_QK_INDEX:
        case CF_QK_FIRST:
        case CF_QK_LAST:
        case CF_QK_KEY:
        case CF_QK_VALUES: st = bind_mixed(path, i, label, s, at); break;
        case CF_QK_KEYS: return cf_error(COFFER_ERR_QUERY, "query: @keys in %s needs a map property before it", label);
        case CF_QK_BACKLINKS: st = bind_backlinks(b, e, label, s, at); break;
        case CF_QK_ALL_BACKLINKS:
            if (!at->is_object || !elem_is(path, i + 1, CF_QK_COUNT))
                return cf_error(COFFER_ERR_QUERY, "query: @links alone must be followed by @count (in %s)", label);
            s->kind = CF_BS_BACKLINK_COUNT;
            *at = value_at(COFFER_TYPE_INT, at->multi);
            i++;
            break;
        case CF_QK_COUNT: st = bind_count(label, s, at); break;
        case CF_QK_SUM:
        case CF_QK_AVG:
        case CF_QK_MIN:
        case CF_QK_MAX: st = bind_aggregate(b, path, &i, label, s, at); break;
        case CF_QK_TYPE:
            if (at->is_object || at->type != COFFER_TYPE_MIXED)
                return cf_error(COFFER_ERR_QUERY, "query: @type in %s needs a mixed property before it", label);
            s->kind = CF_BS_TYPE;
            at->type_names = 1;
            break;
        }
        if (st != COFFER_OK)
            return st;
        n++;
    }
    *steps_out = steps;
    *nsteps = n;
    return COFFER_OK;
}

/* ---- constants ----------------------------------------------------------- */

/* A literal that meets only its own type (or mixed) as that value; `what`
 * names it for a message. */
static coffer_value one_type_literal(const cf_qvalue *q, const char **what)
{
    switch (q->kind) {
    case CF_QV_BOOL: *what = "a bool"; return coffer_value_bool(q->u.boolean);
    case CF_QV_DATE: *what = "a date"; return coffer_value_date(q->u.date.seconds, q->u.date.nanoseconds);
    case CF_QV_OBJECT_ID: *what = "an objectId"; return coffer_value_object_id(q->u.object_id.bytes);
    default: *what = "a uuid"; return coffer_value_uuid(q->u.uuid.bytes);
    }
}

/* Converts a literal to what it meets: `to` is the other side's type
 * (MIXED: any). */
static status convert_literal(binder *b, const cf_qvalue *q, const cf_boperand *other, coffer_value *out)
{
    coffer_type to = other->type_names ? COFFER_TYPE_STRING : other->type;
    const char *what = NULL;
    memset(out, 0, sizeof *out);
    switch (q->kind) {
    case CF_QV_NULL: out->type = COFFER_TYPE_NULL; return COFFER_OK;
    case CF_QV_INT:
    case CF_QV_FLOAT: {
        int integral = q->kind == CF_QV_INT;
        switch (to) {
        case COFFER_TYPE_INT:
            *out = integral ? coffer_value_int(q->u.num.integer) : coffer_value_double(q->u.num.number);
            return COFFER_OK;
        case COFFER_TYPE_FLOAT: *out = coffer_value_float((float)q->u.num.number); return COFFER_OK;
        case COFFER_TYPE_DOUBLE: *out = coffer_value_double(q->u.num.number); return COFFER_OK;
        case COFFER_TYPE_DECIMAL128:
            out->type = COFFER_TYPE_DECIMAL128;
            if (q->u.num.has_decimal)
                out->u.decimal128 = q->u.num.decimal;
            else
                cf_decimal128_from_double(q->u.num.number, &out->u.decimal128);
            return COFFER_OK;
        case COFFER_TYPE_MIXED:
            *out = integral ? coffer_value_int(q->u.num.integer) : coffer_value_double(q->u.num.number);
            return COFFER_OK;
        default: break;
        }
        what = "a number";
        break;
    }
    case CF_QV_STRING:
    case CF_QV_BINARY:
        if (is_bytes(to) || to == COFFER_TYPE_MIXED) {
            int binary = q->kind == CF_QV_BINARY || to == COFFER_TYPE_BINARY;
            *out = binary ? coffer_value_binary(q->u.bytes.data, q->u.bytes.size)
                          : coffer_value_string(q->u.bytes.data, q->u.bytes.size);
            return COFFER_OK;
        }
        what = q->kind == CF_QV_STRING ? "a string" : "binary data";
        break;
    case CF_QV_BOOL:
    case CF_QV_DATE:
    case CF_QV_OBJECT_ID:
    case CF_QV_UUID: {
        coffer_value v = one_type_literal(q, &what);
        if (to == v.type || to == COFFER_TYPE_MIXED) {
            *out = v;
            return COFFER_OK;
        }
        break;
    }
    }
    return cf_error(COFFER_ERR_QUERY, "query: cannot compare %s (%s) with %s", other->label,
                    type_label(other->type, 1, b, other->link_cls), what);
}

static status copy_bytes(binder *b, coffer_value *v)
{
    size_t n = v->u.string.size;
    char *p = cf_qarena_alloc(b->arena, n + 1);
    if (!p)
        return no_memory();
    if (n)
        memcpy(p, v->u.string.data, n);
    v->u.string.data = p;
    return COFFER_OK;
}

/* Converts argument `index`'s value (or one item of a list argument). */
static status convert_argument(binder *b, size_t index, const coffer_value *a, const cf_boperand *other, coffer_value *out)
{
    coffer_type to = other->type_names ? COFFER_TYPE_STRING : other->type;
    *out = *a;
    const char *got = coffer_type_name(a->type);
    switch (a->type) {
    case COFFER_TYPE_NULL: return COFFER_OK;
    case COFFER_TYPE_OBJECT: {
        const coffer_object *obj = a->u.object;
        if (!obj || obj->magic != CF_OBJ_MAGIC || !obj->txn || obj->txn->db != b->db)
            return cf_error(COFFER_ERR_QUERY, "query: argument $%zu is not an object of this database", index);
        *out = coffer_value_link(obj->cls, obj->key);
        a = out;
    }
        /* fall through */
    case COFFER_TYPE_LINK:
        if (a->u.link.class_id >= b->schema->nclasses)
            return cf_error(COFFER_ERR_QUERY, "query: argument $%zu links to class id %u, which this database lacks",
                            index, a->u.link.class_id);
        if (to == COFFER_TYPE_MIXED || (to == COFFER_TYPE_LINK && a->u.link.class_id == other->link_cls))
            return COFFER_OK;
        got = class_at(b, a->u.link.class_id)->name;
        break;
    case COFFER_TYPE_INT:
    case COFFER_TYPE_FLOAT:
    case COFFER_TYPE_DOUBLE:
    case COFFER_TYPE_DECIMAL128:
        if (to == COFFER_TYPE_MIXED || to == a->type)
            return COFFER_OK;
        if (is_number(to)) {
            if (to == COFFER_TYPE_FLOAT && a->type != COFFER_TYPE_DECIMAL128) {
                double d = a->type == COFFER_TYPE_INT ? (double)a->u.integer : a->type == COFFER_TYPE_FLOAT ? a->u.float_value : a->u.double_value;
                *out = coffer_value_float((float)d);
            } else if (to == COFFER_TYPE_DOUBLE && a->type == COFFER_TYPE_FLOAT) {
                *out = coffer_value_double(a->u.float_value);
            }
            return COFFER_OK; /* the rest compare by value as they are */
        }
        break;
    case COFFER_TYPE_STRING:
    case COFFER_TYPE_BINARY:
        if (is_bytes(to) || to == COFFER_TYPE_MIXED) {
            if (!a->u.string.data && a->u.string.size)
                return cf_error(COFFER_ERR_QUERY, "query: argument $%zu has NULL data of %zu bytes", index, a->u.string.size);
            if (a->type == COFFER_TYPE_STRING && a->u.string.size == SIZE_MAX)
                out->u.string.size = a->u.string.data ? strlen(a->u.string.data) : 0;
            return copy_bytes(b, out);
        }
        break;
    case COFFER_TYPE_BOOL:
    case COFFER_TYPE_DATE:
    case COFFER_TYPE_OBJECT_ID:
    case COFFER_TYPE_UUID:
        if (to == a->type || to == COFFER_TYPE_MIXED)
            return COFFER_OK;
        break;
    default:
        return cf_error(COFFER_ERR_QUERY, "query: argument $%zu is a %s, which a query cannot compare", index, got);
    }
    return cf_error(COFFER_ERR_QUERY, "query: cannot compare %s (%s) with argument $%zu (%s)", other->label,
                    type_label(other->type, 1, b, other->link_cls), index, got);
}

static size_t const_count(const binder *b, const cf_qexpr *e)
{
    if (e->kind == CF_QE_VALUE || e->kind == CF_QE_OBJECT)
        return 1;
    if (e->kind == CF_QE_ARG) {
        const coffer_value *a = &b->args[e->u.arg];
        return a->type == COFFER_TYPE_LIST ? a->u.list.count : 1;
    }
    size_t n = 0;
    for (size_t i = 0; i < e->u.list.count; i++)
        n += const_count(b, &e->u.list.items[i]);
    return n;
}

static status check_argument(const binder *b, const cf_qexpr *e)
{
    if (e->kind == CF_QE_ARG) {
        if (e->u.arg >= b->nargs)
            return cf_error(COFFER_ERR_QUERY, "query: the query uses $%zu but %zu argument%s given", e->u.arg, b->nargs,
                            b->nargs == 1 ? " was" : "s were");
        const coffer_value *a = &b->args[e->u.arg];
        if (a->type == COFFER_TYPE_LIST && a->u.list.count && !a->u.list.items)
            return cf_error(COFFER_ERR_QUERY, "query: argument $%zu is a list of %zu items without items", e->u.arg,
                            a->u.list.count);
    }
    if (e->kind == CF_QE_LIST)
        for (size_t i = 0; i < e->u.list.count; i++) {
            status st = check_argument(b, &e->u.list.items[i]);
            if (st != COFFER_OK)
                return st;
        }
    if (e->kind == CF_QE_OBJECT)
        return check_argument(b, e->u.object.key);
    return COFFER_OK;
}

static status fill_consts(binder *b, const cf_qexpr *e, const cf_boperand *other, coffer_value *out, size_t *n);

/* obj('Class', key) compared with `other`: the class must have a primary
 * key and be what `other` links to; the key is converted to its type. */
static status convert_object(binder *b, const cf_qexpr *e, const cf_boperand *other, coffer_value *out)
{
    const char *name = e->u.object.cls;
    int cls = cf_schema_find(b->schema, name);
    if (cls < 0)
        return cf_error(COFFER_ERR_QUERY, "query: obj('%s', ...) names no class of the database", name);
    const cf_class *c = class_at(b, (coffer_class_id)cls);
    if (c->pk < 0)
        return cf_error(COFFER_ERR_QUERY, "query: obj('%s', ...): class '%s' has no primary key", name, name);
    if (other->type != COFFER_TYPE_MIXED && !(other->type == COFFER_TYPE_LINK && other->link_cls == (coffer_class_id)cls))
        return cf_error(COFFER_ERR_QUERY, "query: cannot compare %s (%s) with obj('%s', ...), an object of class '%s'",
                        other->label, type_label(other->type, 1, b, other->link_cls), name, name);
    const cf_prop *pk = &c->props[c->pk];
    const coffer_value *arg = e->u.object.key->kind == CF_QE_ARG ? &b->args[e->u.object.key->u.arg] : NULL;
    if (arg)
        b->unpatchable = 1;
    if (arg && arg->type == COFFER_TYPE_LIST)
        return cf_error(COFFER_ERR_QUERY, "query: obj('%s', $%zu) takes one primary key, not a list", name,
                        e->u.object.key->u.arg);
    char label[160];
    snprintf(label, sizeof label, "the primary key of class '%s' ('%s')", name, pk->name);
    cf_boperand key_of = {.type = pk->type, .label = label};
    coffer_value *key = cf_qarena_alloc(b->arena, sizeof *key);
    if (!key)
        return no_memory();
    size_t n = 0;
    status st = fill_consts(b, e->u.object.key, &key_of, key, &n);
    if (st != COFFER_OK)
        return st;
    if (key->type == COFFER_TYPE_NULL && !cf_prop_optional(pk))
        return cf_error(COFFER_ERR_QUERY, "query: obj('%s', ...) needs a primary key; null is not one of class '%s'",
                        name, name);
    memset(out, 0, sizeof *out);
    out->type = CF_QTYPE_OBJECT_REF;
    out->u.list.items = key;
    out->u.list.count = (size_t)cls;
    return COFFER_OK;
}

/* Whether an argument of type `t` converts by its type alone, so that
 * another of the same type can replace it in place (cf_bquery_patch()). */
static int patchable_type(coffer_type t)
{
    switch (t) {
    case COFFER_TYPE_BOOL:
    case COFFER_TYPE_INT:
    case COFFER_TYPE_FLOAT:
    case COFFER_TYPE_DOUBLE:
    case COFFER_TYPE_DECIMAL128:
    case COFFER_TYPE_STRING:
    case COFFER_TYPE_BINARY:
    case COFFER_TYPE_DATE:
    case COFFER_TYPE_OBJECT_ID:
    case COFFER_TYPE_UUID: return 1;
    default: return 0;
    }
}

static status note_slot(binder *b, size_t arg, coffer_type arg_type, coffer_type to, coffer_value *value)
{
    if (!patchable_type(arg_type)) {
        b->unpatchable = 1;
        return COFFER_OK;
    }
    cf_bslot *slot = cf_qarena_alloc(b->arena, sizeof *slot);
    if (!slot)
        return no_memory();
    *slot = (cf_bslot){.arg = arg, .arg_type = arg_type, .to = to, .value = value, .next = b->slots};
    b->slots = slot;
    return COFFER_OK;
}

static status fill_consts(binder *b, const cf_qexpr *e, const cf_boperand *other, coffer_value *out, size_t *n)
{
    if (e->kind == CF_QE_VALUE)
        return convert_literal(b, &e->u.value, other, &out[(*n)++]);
    if (e->kind == CF_QE_OBJECT)
        return convert_object(b, e, other, &out[(*n)++]);
    if (e->kind == CF_QE_ARG) {
        const coffer_value *a = &b->args[e->u.arg];
        if (a->type != COFFER_TYPE_LIST) {
            coffer_value *value = &out[(*n)++];
            status st = convert_argument(b, e->u.arg, a, other, value);
            if (st == COFFER_OK && !b->unpatchable)
                st = note_slot(b, e->u.arg, a->type, other->type_names ? COFFER_TYPE_STRING : other->type, value);
            return st;
        }
        b->unpatchable = 1;
        for (size_t i = 0; i < a->u.list.count; i++) {
            if (a->u.list.items[i].type == COFFER_TYPE_LIST)
                return cf_error(COFFER_ERR_QUERY, "query: argument $%zu is a list holding a list", e->u.arg);
            status st = convert_argument(b, e->u.arg, &a->u.list.items[i], other, &out[(*n)++]);
            if (st != COFFER_OK)
                return st;
        }
        return COFFER_OK;
    }
    for (size_t i = 0; i < e->u.list.count; i++) {
        status st = fill_consts(b, &e->u.list.items[i], other, out, n);
        if (st != COFFER_OK)
            return st;
    }
    return COFFER_OK;
}

static status bind_consts(binder *b, const cf_qexpr *e, const cf_boperand *other, cf_boperand *o)
{
    o->kind = CF_BO_CONST;
    o->var = -1;
    o->type = other->type;
    o->label = "a constant";
    size_t n = const_count(b, e);
    o->multi = e->kind != CF_QE_VALUE && e->kind != CF_QE_OBJECT;
    o->quantifier = e->kind == CF_QE_LIST ? e->u.list.quantifier : CF_QQ_NONE_GIVEN;
    coffer_value *vals = cf_qarena_alloc(b->arena, (n ? n : 1) * sizeof *vals);
    if (!vals)
        return no_memory();
    size_t filled = 0;
    status st = fill_consts(b, e, other, vals, &filled);
    o->consts = vals;
    o->nconsts = filled;
    return st;
}

/* ---- predicates ---------------------------------------------------------- */

static status bind_pred(binder *b, const cf_qpred *q, const cf_bpred **out);

/* Marks in `seen` (indexed by variable + 1) the variables below `limit`
 * that predicate `p` reads; those of nested SUBQUERYs are already known. */
static void mark_deps(const cf_bpred *p, int limit, unsigned char *seen)
{
    switch (p->kind) {
    case CF_BP_AND:
    case CF_BP_OR:
        for (size_t i = 0; i < p->count; i++)
            mark_deps(p->items[i], limit, seen);
        return;
    case CF_BP_NOT: mark_deps(p->operand, limit, seen); return;
    case CF_BP_COMPARE:
        for (int side = 0; side < 2; side++) {
            const cf_boperand *o = side ? &p->right : &p->left;
            if (o->kind == CF_BO_CONST)
                continue;
            if (o->var < limit)
                seen[o->var + 1] = 1;
            for (size_t i = 0; o->kind == CF_BO_SUBQUERY && i < o->ndeps; i++)
                if (o->deps[i] < limit)
                    seen[o->deps[i] + 1] = 1;
        }
        return;
    default: return;
    }
}

/* Records what SUBQUERY operand `o` depends on besides where it starts. */
static status subquery_deps(binder *b, cf_boperand *o)
{
    unsigned char seen[CF_QUERY_MAX_DEPTH + 1] = {0};
    mark_deps(o->where, o->sub_var, seen);
    size_t n = 0;
    for (int v = 0; v <= o->sub_var; v++)
        n += seen[v];
    int *deps = cf_qarena_alloc(b->arena, (n ? n : 1) * sizeof *deps);
    if (!deps)
        return no_memory();
    o->ndeps = 0;
    for (int v = 0; v <= o->sub_var; v++)
        if (seen[v])
            deps[o->ndeps++] = v - 1;
    o->deps = deps;
    return COFFER_OK;
}

static status bind_operand(binder *b, const cf_qexpr *e, cf_boperand *o)
{
    memset(o, 0, sizeof *o);
    o->var = -1;
    position at;
    if (e->kind == CF_QE_PATH) {
        cf_bstep *steps;
        status st = bind_path(b, &e->u.path, &steps, &o->nsteps, &o->var, &at, &o->label);
        if (st != COFFER_OK)
            return st;
        o->kind = CF_BO_PATH;
        o->steps = steps;
        o->quantifier = e->u.path.quantifier;
    } else {
        cf_bstep *steps;
        int var;
        const char *label;
        status st = bind_path(b, &e->u.subquery.path, &steps, &o->nsteps, &var, &at, &label);
        if (st != COFFER_OK)
            return st;
        if (!at.multi)
            return cf_error(COFFER_ERR_QUERY, "query: SUBQUERY needs a collection, but %s is a single value", label);
        if (b->nvars == CF_QUERY_MAX_DEPTH)
            return cf_error(COFFER_ERR_QUERY, "query: SUBQUERY nested too deeply");
        o->kind = CF_BO_SUBQUERY;
        o->steps = steps;
        o->var = var;
        o->sub_var = b->nvars;
        at.multi = 0;
        b->vars[b->nvars].name = e->u.subquery.variable;
        b->vars[b->nvars].at = at;
        b->nvars++;
        if (b->nvars > b->max_var)
            b->max_var = b->nvars;
        st = bind_pred(b, e->u.subquery.where, &o->where);
        b->nvars--;
        if (st == COFFER_OK)
            st = subquery_deps(b, o);
        if (st != COFFER_OK)
            return st;
        o->label = "SUBQUERY(...).@count";
        at = value_at(COFFER_TYPE_INT, 0);
    }
    o->type = at.type;
    o->link_cls = at.cls;
    o->multi = at.multi;
    o->type_names = at.type_names;
    if (o->quantifier != CF_QQ_NONE_GIVEN && !o->multi)
        return cf_error(COFFER_ERR_QUERY, "query: ANY, ALL and NONE need a collection, but %s is a single value", o->label);
    return COFFER_OK;
}

static int comparable(const cf_boperand *a, const cf_boperand *b)
{
    if (a->type == COFFER_TYPE_MIXED || b->type == COFFER_TYPE_MIXED)
        return 1;
    if (is_number(a->type) && is_number(b->type))
        return 1;
    if (is_bytes(a->type) && is_bytes(b->type))
        return 1;
    if (a->type == COFFER_TYPE_LINK && b->type == COFFER_TYPE_LINK)
        return a->link_cls == b->link_cls;
    return a->type == b->type;
}

static int has_null(const cf_boperand *o)
{
    for (size_t i = 0; i < o->nconsts; i++)
        if (o->consts[i].type == COFFER_TYPE_NULL)
            return 1;
    return 0;
}

static status check_compare(binder *b, cf_bpred *p)
{
    const cf_boperand *l = &p->left, *r = &p->right;
    const cf_boperand *path = l->kind == CF_BO_CONST ? r : l;
    cf_qcompare_op op = p->op;
    if (l->kind != CF_BO_CONST && r->kind != CF_BO_CONST && !comparable(l, r))
        return cf_error(COFFER_ERR_QUERY, "query: cannot compare %s (%s) with %s (%s)", l->label,
                        type_label(l->type, 1, b, l->link_cls), r->label, type_label(r->type, 1, b, r->link_cls));
    if (l->quantifier != CF_QQ_NONE_GIVEN && r->quantifier != CF_QQ_NONE_GIVEN)
        return cf_error(COFFER_ERR_QUERY, "query: only one side of a comparison may have ANY, ALL or NONE");
    if (op == CF_QC_IN && r->kind == CF_BO_CONST && r->quantifier != CF_QQ_NONE_GIVEN)
        return cf_error(COFFER_ERR_QUERY, "query: IN takes a plain list or argument; write == ANY {...}, == ALL {...} "
                        "or == NONE {...} to quantify one");
    if (is_text_op(op)) {
        for (int side = 0; side < 2; side++) {
            const cf_boperand *o = side ? r : l;
            if (o->kind != CF_BO_CONST && !is_bytes(o->type) && o->type != COFFER_TYPE_MIXED)
                return cf_error(COFFER_ERR_QUERY, "query: %s needs strings or binary data, but %s is %s", op_name(op),
                                o->label, type_label(o->type, 1, b, o->link_cls));
        }
        if (path->type_names)
            return cf_error(COFFER_ERR_QUERY, "query: %s cannot apply to @type", op_name(op));
    }
    if ((op == CF_QC_EQ || op == CF_QC_NE) && path->type == COFFER_TYPE_LINK && path->multi && path->kind == CF_BO_PATH) {
        const cf_boperand *c = path == l ? r : l;
        if (c->kind == CF_BO_CONST && c->nconsts == 1 && !c->multi && c->consts[0].type == COFFER_TYPE_NULL)
            return cf_error(COFFER_ERR_QUERY, "query: cannot compare %s, a list of links, with NULL (compare its "
                            "@count with 0, or a property of its objects with NULL)", path->label);
    }
    if (is_ordered_op(op)) {
        if (path->type == COFFER_TYPE_LINK || path->type_names)
            return cf_error(COFFER_ERR_QUERY, "query: %s cannot order %s: %s can only be compared with == and !=",
                            op_name(op), path->label, path->type_names ? "@type" : "objects");
        if ((l->kind == CF_BO_CONST && has_null(l)) || (r->kind == CF_BO_CONST && has_null(r)))
            return cf_error(COFFER_ERR_QUERY, "query: %s cannot compare %s with null; use == or !=", op_name(op),
                            path->label);
    }
    if (op == CF_QC_BETWEEN) {
        if (r->nconsts != 2)
            return cf_error(COFFER_ERR_QUERY, "query: BETWEEN needs two values, {low, high}");
        if (!is_number(path->type) && path->type != COFFER_TYPE_DATE && path->type != COFFER_TYPE_MIXED)
            return cf_error(COFFER_ERR_QUERY, "query: BETWEEN needs numbers or dates, but %s is %s", path->label,
                            type_label(path->type, 1, b, path->link_cls));
    }
    if (p->modifiers) {
        if (!is_text_op(op) && op != CF_QC_EQ && op != CF_QC_NE && op != CF_QC_IN)
            return cf_error(COFFER_ERR_QUERY, "query: [c] and [d] apply to ==, !=, IN and the string operators, not %s",
                            op_name(op));
        for (int side = 0; side < 2; side++) {
            const cf_boperand *o = side ? r : l;
            if (o->kind != CF_BO_CONST && !is_bytes(o->type) && o->type != COFFER_TYPE_MIXED)
                return cf_error(COFFER_ERR_QUERY, "query: [c] and [d] need strings, but %s is %s", o->label,
                                type_label(o->type, 1, b, o->link_cls));
        }
    }
    return COFFER_OK;
}

/* Gives a comparison with obj() constants a slot for them found. */
static status note_object_refs(binder *b, cf_bpred *p)
{
    const cf_boperand *c = p->left.kind == CF_BO_CONST ? &p->left : &p->right;
    if (c->kind != CF_BO_CONST)
        return COFFER_OK;
    for (size_t i = 0; i < c->nconsts; i++) {
        if (c->consts[i].type != CF_QTYPE_OBJECT_REF)
            continue;
        if (p->op != CF_QC_EQ && p->op != CF_QC_NE && p->op != CF_QC_IN)
            return cf_error(COFFER_ERR_QUERY, "query: %s cannot compare with obj(...): objects are compared with ==, != "
                            "and IN", op_name(p->op));
        p->ref_slot = b->nrefs++;
        break;
    }
    return COFFER_OK;
}

static cf_qcompare_op mirror(cf_qcompare_op op)
{
    switch (op) {
    case CF_QC_LT: return CF_QC_GT;
    case CF_QC_LE: return CF_QC_GE;
    case CF_QC_GT: return CF_QC_LT;
    case CF_QC_GE: return CF_QC_LE;
    default: return op;
    }
}

static int is_const_expr(const cf_qexpr *e)
{
    return e->kind == CF_QE_VALUE || e->kind == CF_QE_ARG || e->kind == CF_QE_LIST || e->kind == CF_QE_OBJECT;
}

static status bind_compare(binder *b, const cf_qpred *q, cf_bpred *p)
{
    const cf_qexpr *le = &q->u.compare.left, *re = &q->u.compare.right;
    p->kind = CF_BP_COMPARE;
    p->op = q->u.compare.op;
    p->modifiers = q->u.compare.modifiers;
    p->pattern = -1;
    p->ref_slot = -1;
    status st = check_argument(b, le);
    if (st == COFFER_OK)
        st = check_argument(b, re);
    if (st != COFFER_OK)
        return st;
    int lc = is_const_expr(le), rc = is_const_expr(re);
    if (lc && rc)
        return cf_error(COFFER_ERR_QUERY, "query: a comparison needs a key path on one side, not two constants (at "
                                          "offset %zu)", q->offset + 1);
    /* A constant on the left of == or < is moved to the right. */
    if (lc && p->op <= CF_QC_GE) {
        const cf_qexpr *t = le;
        le = re;
        re = t;
        lc = 0;
        rc = 1;
        p->op = mirror(p->op);
    }
    if (!lc && (st = bind_operand(b, le, &p->left)) != COFFER_OK)
        return st;
    if (!rc && (st = bind_operand(b, re, &p->right)) != COFFER_OK)
        return st;
    /* An operator that does not apply is the error to report, before any
     * constant fails to convert to the property's type. */
    for (int side = 0; side < 2 && is_text_op(p->op); side++) {
        const cf_boperand *o = side ? &p->right : &p->left;
        if ((side ? !rc : !lc) && !is_bytes(o->type) && o->type != COFFER_TYPE_MIXED)
            return cf_error(COFFER_ERR_QUERY, "query: %s needs strings or binary data, but %s is %s", op_name(p->op),
                            o->label, type_label(o->type, 1, b, o->link_cls));
    }
    if (lc)
        st = bind_consts(b, le, &p->right, &p->left);
    if (rc)
        st = bind_consts(b, re, &p->left, &p->right);
    if (st != COFFER_OK)
        return st;
    st = check_compare(b, p);
    if (st == COFFER_OK)
        st = note_object_refs(b, p);
    if (st != COFFER_OK)
        return st;
    if (p->op == CF_QC_IN)
        p->op = CF_QC_EQ; /* IN is == against any of the right side's values */
    /* A text operator against one constant string gets a pattern compiled
     * once per run. */
    int text = is_text_op(p->op) || (p->modifiers && (p->op == CF_QC_EQ || p->op == CF_QC_NE));
    if (text && p->right.kind == CF_BO_CONST && p->right.nconsts == 1 && is_bytes(p->right.consts[0].type))
        p->pattern = b->npatterns++;
    p->simple = cf_bpred_is_simple(p, b->cls);
    return COFFER_OK;
}

static status bind_pred(binder *b, const cf_qpred *q, const cf_bpred **out)
{
    cf_bpred *p = cf_qarena_alloc(b->arena, sizeof *p);
    if (!p)
        return no_memory();
    p->pattern = -1;
    status st = COFFER_OK;
    switch (q->kind) {
    case CF_QP_TRUE: p->kind = CF_BP_TRUE; break;
    case CF_QP_FALSE: p->kind = CF_BP_FALSE; break;
    case CF_QP_NOT:
        p->kind = CF_BP_NOT;
        st = bind_pred(b, q->u.operand, &p->operand);
        break;
    case CF_QP_AND:
    case CF_QP_OR: {
        p->kind = q->kind == CF_QP_AND ? CF_BP_AND : CF_BP_OR;
        const cf_bpred **items = cf_qarena_alloc(b->arena, q->u.children.count * sizeof *items);
        if (!items)
            return no_memory();
        for (size_t i = 0; i < q->u.children.count && st == COFFER_OK; i++)
            st = bind_pred(b, q->u.children.items[i], &items[i]);
        p->items = (const cf_bpred *const *)items;
        p->count = q->u.children.count;
        break;
    }
    case CF_QP_COMPARE: st = bind_compare(b, q, p); break;
    }
    *out = p;
    return st;
}

/* ---- SORT, DISTINCT, LIMIT ----------------------------------------------- */

static status bind_post(binder *b, const cf_query *q, cf_bquery *bq)
{
    cf_bpost *post = cf_qarena_alloc(b->arena, (q->post_count ? q->post_count : 1) * sizeof *post);
    if (!post)
        return no_memory();
    for (size_t i = 0; i < q->post_count; i++) {
        const cf_qpost *src = &q->post[i];
        post[i].kind = src->kind;
        post[i].limit = src->limit;
        if (src->kind == CF_QO_LIMIT)
            continue;
        cf_bsort *keys = cf_qarena_alloc(b->arena, src->count * sizeof *keys);
        if (!keys)
            return no_memory();
        for (size_t k = 0; k < src->count; k++) {
            cf_bstep *steps;
            int var;
            position at;
            const char *label;
            status st = bind_path(b, &src->keys[k].path, &steps, &keys[k].nsteps, &var, &at, &label);
            if (st != COFFER_OK)
                return st;
            const char *what = src->kind == CF_QO_SORT ? "SORT" : "DISTINCT";
            if (at.multi)
                return cf_error(COFFER_ERR_QUERY, "query: %s needs single values, but %s goes through a collection",
                                what, label);
            if (at.is_object)
                return cf_error(COFFER_ERR_QUERY, "query: %s needs a property of values, but %s is a link", what, label);
            keys[k].steps = steps;
            keys[k].ascending = src->keys[k].ascending;
        }
        post[i].keys = keys;
        post[i].count = src->count;
    }
    bq->post = post;
    bq->npost = q->post_count;
    return COFFER_OK;
}

/* Binds tree `q` into `arena`. */
static status bind_into(coffer_db *db, coffer_class_id cls, const cf_query *q, cf_qarena *arena, const coffer_value *args,
                        size_t nargs, cf_bquery **out)
{
    *out = NULL;
    binder bind;
    binder *b = &bind;
    memset(b, 0, offsetof(binder, vars)); /* vars are set as SUBQUERYs declare them */
    cf_bquery *bq = cf_qarena_alloc(arena, sizeof *bq);
    if (!bq)
        return no_memory();
    b->db = db;
    b->schema = db->schema;
    b->arena = arena;
    b->cls = cls;
    b->args = args;
    b->nargs = nargs;
    status st = bind_pred(b, q->where, &bq->where);
    if (st == COFFER_OK)
        st = bind_post(b, q, bq);
    if (st != COFFER_OK)
        return st;
    bq->arena = arena;
    bq->parsed = q;
    bq->db = db;
    bq->cls = cls;
    bq->npatterns = b->npatterns;
    bq->nrefs = b->nrefs;
    bq->max_var = b->max_var;
    bq->patchable = !b->unpatchable;
    bq->slots = bq->patchable ? b->slots : NULL;
    bq->refs = 1;
    *out = bq;
    return COFFER_OK;
}

coffer_status cf_query_bind(coffer_db *db, coffer_class_id cls, cf_query *q, const coffer_value *args, size_t nargs,
                            cf_bquery **out)
{
    return bind_into(db, cls, q, q->arena, args, nargs, out);
}

coffer_status cf_query_rebind(cf_bquery *from, const coffer_value *args, size_t nargs, cf_bquery **out)
{
    cf_qarena *arena = cf_qarena_new();
    if (!arena)
        return no_memory();
    status st = bind_into(from->db, from->cls, from->parsed, arena, args, nargs, out);
    if (st != COFFER_OK) {
        cf_qarena_free(arena);
        return st;
    }
    cf_bquery_retain(from);
    (*out)->source = from;
    return COFFER_OK;
}

int cf_bquery_patch(cf_bquery *bq, const coffer_value *args, size_t nargs)
{
    if (!bq->patchable)
        return 0;
    for (const cf_bslot *s = bq->slots; s; s = s->next) {
        if (s->arg >= nargs || args[s->arg].type != s->arg_type)
            return 0;
        const coffer_value *a = &args[s->arg];
        if (is_bytes(a->type) && !a->u.string.data && a->u.string.size)
            return 0; /* rebinding names the error */
    }
    for (const cf_bslot *s = bq->slots; s; s = s->next) {
        const coffer_value *a = &args[s->arg];
        coffer_value *v = s->value;
        *v = *a;
        if (s->to == COFFER_TYPE_FLOAT && is_number(a->type) && a->type != COFFER_TYPE_FLOAT &&
            a->type != COFFER_TYPE_DECIMAL128)
            *v = coffer_value_float((float)(a->type == COFFER_TYPE_INT ? (double)a->u.integer : a->u.double_value));
        else if (s->to == COFFER_TYPE_DOUBLE && a->type == COFFER_TYPE_FLOAT)
            *v = coffer_value_double(a->u.float_value);
        else if (a->type == COFFER_TYPE_STRING && a->u.string.size == SIZE_MAX)
            v->u.string.size = a->u.string.data ? strlen(a->u.string.data) : 0;
    }
    return 1;
}

void cf_bquery_retain(cf_bquery *bq) { __atomic_add_fetch(&bq->refs, 1, __ATOMIC_RELAXED); }

void cf_bquery_free(cf_bquery *bq)
{
    if (!bq || __atomic_sub_fetch(&bq->refs, 1, __ATOMIC_ACQ_REL) != 0)
        return;
    cf_bquery *source = bq->source;
    coffer_query_free(bq->spare);
    free(bq->text);
    cf_qarena_free(bq->arena); /* which holds bq */
    cf_bquery_free(source);
}
