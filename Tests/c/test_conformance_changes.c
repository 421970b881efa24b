/*
 * test_conformance_changes.c — runs the change-notification conformance
 * suite (Tests/conformance/changesets.json) against the live-data API: one
 * cmocka case per conformance case, named by its id. Each case opens an
 * in-memory database with its fixture's schema and objects, applies the
 * case's setup in one committed write, registers the observer (results of a
 * query, a list, or an object) with auto-refresh off, refreshes for the
 * initial callback, applies the case's write as one write transaction,
 * refreshes again and compares exactly what the callback was told.
 *
 * The cases restate facts asserted by realm-core's object-store tests
 * (https://github.com/realm/realm-core, commit f8752e18: test/object-store/
 * results.cpp, list.cpp, object.cpp, transaction_log_parsing.cpp and
 * primitive_list.cpp), licensed under the Apache License 2.0; each case cites
 * its file and section in `source`.
 *
 * A list seen through a query or sort ("list_results") is observed with
 * coffer_list_query_observe() (a list of objects) or
 * coffer_list_values_observe() (a list of values, sorted or distinct on
 * "self"). Every case runs; none is skipped.
 */
#include "test_support.h"
#include "json_reader.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef COFFER_CONFORMANCE_CHANGES_FILE
#error "COFFER_CONFORMANCE_CHANGES_FILE must name Tests/conformance/changesets.json"
#endif

#define MAX_CLASSES 8
#define MAX_PROPS 8
#define MAX_INDICES 64
#define MAX_SEEN_PROPS 8

static jr_value *suite;

/* ------------------------------------------------------------------------ */
/* Schema: the fixture's Realm-JS form as coffer_class_schema arrays         */
/* ------------------------------------------------------------------------ */

typedef struct built_schema {
    coffer_class_schema classes[MAX_CLASSES];
    coffer_property_schema props[MAX_CLASSES][MAX_PROPS];
    size_t count;
} built_schema;

/* The value type a Realm-JS type name stands for; COFFER_TYPE_NULL for a
 * name that is no value type (a class, "object", "list", ...). */
static coffer_type scalar_type(const char *name)
{
    static const struct {
        const char *name;
        coffer_type type;
    } types[] = {{"int", COFFER_TYPE_INT},       {"bool", COFFER_TYPE_BOOL},   {"string", COFFER_TYPE_STRING},
                 {"double", COFFER_TYPE_DOUBLE}, {"float", COFFER_TYPE_FLOAT}, {"date", COFFER_TYPE_DATE}};
    for (size_t i = 0; name && i < sizeof types / sizeof types[0]; i++)
        if (strcmp(types[i].name, name) == 0)
            return types[i].type;
    return COFFER_TYPE_NULL;
}

static int is_scalar_name(const char *name) { return scalar_type(name) != COFFER_TYPE_NULL; }

static void build_property(coffer_property_schema *p, const jr_value *js, const char *primary_key)
{
    const char *type = jr_get_str(js, "type"), *object_type = jr_get_str(js, "objectType");
    memset(p, 0, sizeof *p);
    p->name = jr_get_str(js, "name");
    assert_non_null(p->name);
    assert_non_null(type);
    if (jr_is_true(jr_get(js, "optional")))
        p->flags |= COFFER_PROPERTY_OPTIONAL;
    if (primary_key && strcmp(primary_key, p->name) == 0)
        p->flags |= COFFER_PROPERTY_PRIMARY_KEY;
    if (strcmp(type, "object") == 0) {
        p->type = COFFER_TYPE_LINK;
        p->flags |= COFFER_PROPERTY_OPTIONAL;
        p->object_class = object_type;
    } else if (strcmp(type, "list") == 0) {
        p->collection = COFFER_COLLECTION_LIST;
        assert_non_null(object_type);
        if (is_scalar_name(object_type)) {
            p->type = scalar_type(object_type);
        } else {
            p->type = COFFER_TYPE_LINK;
            p->object_class = object_type;
        }
    } else if (strcmp(type, "linkingObjects") == 0) {
        p->type = COFFER_TYPE_LINKING_OBJECTS;
        p->object_class = object_type;
        p->link_origin_property = jr_get_str(js, "property");
    } else {
        p->type = scalar_type(type);
        if (p->type == COFFER_TYPE_NULL)
            fail_msg("conformance schema: unsupported type '%s'", type);
    }
}

static void build_schema(const jr_value *schema, built_schema *out)
{
    memset(out, 0, sizeof *out);
    out->count = jr_count(schema);
    assert_true(out->count <= MAX_CLASSES);
    for (size_t c = 0; c < out->count; c++) {
        const jr_value *cls = jr_at(schema, c), *props = jr_get(cls, "properties");
        assert_true(jr_count(props) <= MAX_PROPS);
        for (size_t i = 0; i < jr_count(props); i++)
            build_property(&out->props[c][i], jr_at(props, i), jr_get_str(cls, "primaryKey"));
        out->classes[c].name = jr_get_str(cls, "name");
        out->classes[c].properties = out->props[c];
        out->classes[c].property_count = jr_count(props);
    }
}

/* ------------------------------------------------------------------------ */
/* Objects and values, addressed by class name and primary key               */
/* ------------------------------------------------------------------------ */

typedef struct conf_db {
    coffer_db *db;
    coffer_txn *txn; /* the write in progress */
} conf_db;

static const coffer_property_schema *property_of(coffer_db *db, coffer_class_id cls, coffer_property_id prop)
{
    return &coffer_db_class_schema(db, cls)->properties[prop];
}

static coffer_object *find_object(conf_db *c, const char *type, int64_t pk)
{
    coffer_object *obj;
    coffer_value v = coffer_value_int(pk);
    assert_ok(coffer_object_find(c->txn, ts_class(c->db, type), &v, &obj));
    return obj;
}

/* A value for property `p` (or for an element of it, when it is a list). */
static coffer_value value_for(conf_db *c, const coffer_property_schema *p, const jr_value *js)
{
    if (!js || js->kind == JR_NULL)
        return coffer_value_null();
    switch (p->type) {
    case COFFER_TYPE_LINK: {
        coffer_object *target = find_object(c, p->object_class, jr_int(js, 0));
        coffer_value v = coffer_value_link(ts_class(c->db, p->object_class), coffer_object_key_of(target));
        coffer_object_release(target);
        return v;
    }
    case COFFER_TYPE_INT: return coffer_value_int(jr_int(js, 0));
    case COFFER_TYPE_BOOL: return coffer_value_bool(jr_is_true(js));
    case COFFER_TYPE_DOUBLE: return coffer_value_double(js->number);
    case COFFER_TYPE_FLOAT: return coffer_value_float((float)js->number);
    case COFFER_TYPE_STRING: return ts_str(jr_str(js));
    default: fail_msg("conformance value: unsupported property type %d", (int)p->type); return coffer_value_null();
    }
}

static coffer_list *list_of(conf_db *c, coffer_object *obj, const char *type, const char *prop)
{
    coffer_list *list;
    assert_ok(coffer_object_get_list(obj, ts_prop(c->db, ts_class(c->db, type), prop), &list));
    return list;
}

/* Creates an object from a value keyed by property name: plain properties as
 * fields, then the lists element by element. */
static void create_object(conf_db *c, const char *type, const jr_value *value)
{
    coffer_class_id cls = ts_class(c->db, type);
    coffer_field fields[MAX_PROPS];
    size_t n = 0;
    for (size_t i = 0; i < jr_count(value); i++) {
        coffer_property_id prop = ts_prop(c->db, cls, value->keys[i]);
        const coffer_property_schema *p = property_of(c->db, cls, prop);
        if (p->collection == COFFER_COLLECTION_NONE)
            fields[n++] = ts_field(prop, value_for(c, p, jr_at(value, i)));
    }
    coffer_object *obj = ts_create(c->txn, cls, fields, n);
    for (size_t i = 0; i < jr_count(value); i++) {
        coffer_property_id prop = ts_prop(c->db, cls, value->keys[i]);
        const coffer_property_schema *p = property_of(c->db, cls, prop);
        if (p->collection != COFFER_COLLECTION_LIST)
            continue;
        coffer_list *list = list_of(c, obj, type, value->keys[i]);
        for (size_t k = 0; k < jr_count(jr_at(value, i)); k++) {
            coffer_value v = value_for(c, p, jr_at(jr_at(value, i), k));
            assert_ok(coffer_list_append(list, &v));
        }
        coffer_list_release(list);
    }
    coffer_object_release(obj);
}

static uint64_t op_index(const jr_value *op, const char *name)
{
    const jr_value *v = jr_get(op, name);
    assert_non_null(v);
    return (uint64_t)jr_int(v, 0);
}

/* One list operation on property `property` of object `pk` of `type`. */
static void apply_list_op(conf_db *c, const char *name, const jr_value *op)
{
    const char *type = jr_get_str(op, "type"), *prop_name = jr_get_str(op, "property");
    coffer_class_id cls = ts_class(c->db, type);
    const coffer_property_schema *p = property_of(c->db, cls, ts_prop(c->db, cls, prop_name));
    coffer_object *obj = find_object(c, type, jr_int(jr_get(op, "pk"), 0));
    coffer_list *list = list_of(c, obj, type, prop_name);
    coffer_value v = coffer_value_null();
    if (jr_get(op, "value"))
        v = value_for(c, p, jr_get(op, "value"));
    if (strcmp(name, "list_insert") == 0)
        assert_ok(coffer_list_insert(list, op_index(op, "index"), &v));
    else if (strcmp(name, "list_append") == 0)
        assert_ok(coffer_list_append(list, &v));
    else if (strcmp(name, "list_erase") == 0)
        assert_ok(coffer_list_remove(list, op_index(op, "index")));
    else if (strcmp(name, "list_set") == 0)
        assert_ok(coffer_list_set(list, op_index(op, "index"), &v));
    else if (strcmp(name, "list_move") == 0)
        assert_ok(coffer_list_move(list, op_index(op, "from"), op_index(op, "to")));
    else if (strcmp(name, "list_swap") == 0)
        assert_ok(coffer_list_swap(list, op_index(op, "index1"), op_index(op, "index2")));
    else if (strcmp(name, "list_clear") == 0)
        assert_ok(coffer_list_clear(list));
    else
        fail_msg("conformance write: unknown operation '%s'", name);
    coffer_list_release(list);
    coffer_object_release(obj);
}

static void apply_op(conf_db *c, const jr_value *op)
{
    const char *name = jr_get_str(op, "op"), *type = jr_get_str(op, "type");
    assert_non_null(name);
    assert_non_null(type);
    if (strcmp(name, "create") == 0) {
        create_object(c, type, jr_get(op, "value"));
    } else if (strcmp(name, "set") == 0) {
        coffer_class_id cls = ts_class(c->db, type);
        coffer_property_id prop = ts_prop(c->db, cls, jr_get_str(op, "property"));
        coffer_object *obj = find_object(c, type, jr_int(jr_get(op, "pk"), 0));
        coffer_value v = value_for(c, property_of(c->db, cls, prop), jr_get(op, "value"));
        assert_ok(coffer_object_set_value(obj, prop, &v));
        coffer_object_release(obj);
    } else if (strcmp(name, "delete") == 0) {
        coffer_object *obj = find_object(c, type, jr_int(jr_get(op, "pk"), 0));
        assert_ok(coffer_object_delete(obj));
        coffer_object_release(obj);
    } else if (strcmp(name, "delete_all") == 0) {
        assert_ok(coffer_class_clear(c->txn, ts_class(c->db, type)));
    } else {
        apply_list_op(c, name, op);
    }
}

/* Applies `ops` (fixture objects when `objects` is set, else write
 * operations) as one committed write transaction. */
static void apply_in_one_write(conf_db *c, const jr_value *ops, int objects)
{
    c->txn = ts_begin(c->db, COFFER_TXN_WRITE);
    for (size_t i = 0; i < jr_count(ops); i++) {
        const jr_value *op = jr_at(ops, i);
        if (objects)
            create_object(c, jr_get_str(op, "type"), jr_get(op, "value"));
        else
            apply_op(c, op);
    }
    ts_commit(c->txn);
    c->txn = NULL;
}

/* ------------------------------------------------------------------------ */
/* What the callback was told                                                */
/* ------------------------------------------------------------------------ */

typedef struct told {
    int calls;
    int initial_calls;
    uint64_t idx[4][MAX_INDICES]; /* by coffer_change_kind */
    size_t nidx[4];
    uint64_t from[MAX_INDICES], to[MAX_INDICES];
    size_t nmoves;
    int cleared, root_deleted, deleted;
    coffer_property_id props[MAX_SEEN_PROPS];
    size_t nprops;
} told;

/* Counts a callback; whether it carries changes (the first one does not). */
static bool count_call(told *t, const coffer_txn *txn, const void *changes)
{
    assert_non_null(txn);
    t->calls++;
    if (!changes)
        t->initial_calls++;
    return changes != NULL;
}

static void on_collection(void *ctx, coffer_txn *txn, const coffer_collection_changes *ch)
{
    told *t = ctx;
    if (!count_call(t, txn, ch))
        return;
    for (int kind = 0; kind < 4; kind++) {
        t->nidx[kind] = coffer_collection_changes_count(ch, kind);
        assert_true(t->nidx[kind] <= MAX_INDICES);
        assert_int_equal(coffer_collection_changes_copy(ch, kind, t->idx[kind]), t->nidx[kind]);
    }
    t->nmoves = coffer_collection_changes_move_count(ch);
    assert_true(t->nmoves <= MAX_INDICES);
    for (size_t i = 0; i < t->nmoves; i++)
        assert_ok(coffer_collection_changes_move(ch, i, &t->from[i], &t->to[i]));
    t->cleared = coffer_collection_changes_cleared(ch);
    t->root_deleted = coffer_collection_changes_root_deleted(ch);
}

static void on_object(void *ctx, coffer_txn *txn, const coffer_object_changes *ch)
{
    told *t = ctx;
    if (!count_call(t, txn, ch))
        return;
    t->deleted = coffer_object_changes_deleted(ch);
    t->nprops = coffer_object_changes_count(ch);
    assert_true(t->nprops <= MAX_SEEN_PROPS);
    for (size_t i = 0; i < t->nprops; i++) {
        coffer_value o, n;
        assert_ok(coffer_object_changes_property(ch, i, &t->props[i], &o, &n));
    }
}

/* ------------------------------------------------------------------------ */
/* Comparing with the expected change                                        */
/* ------------------------------------------------------------------------ */

static void print_indices(const char *label, const uint64_t *v, size_t n)
{
    print_message("    %s [", label);
    for (size_t i = 0; i < n; i++)
        print_message("%s%llu", i ? ", " : "", (unsigned long long)v[i]);
    print_message("]\n");
}

static int same_indices(const uint64_t *got, size_t n, const jr_value *want)
{
    if (n != jr_count(want))
        return 0;
    for (size_t i = 0; i < n; i++)
        if (got[i] != (uint64_t)jr_int(jr_at(want, i), -1))
            return 0;
    return 1;
}

static int same_moves(const told *t, const jr_value *want)
{
    if (t->nmoves != jr_count(want))
        return 0;
    for (size_t i = 0; i < t->nmoves; i++) {
        const jr_value *m = jr_at(want, i);
        if (t->from[i] != (uint64_t)jr_int(jr_at(m, 0), -1) || t->to[i] != (uint64_t)jr_int(jr_at(m, 1), -1))
            return 0;
    }
    return 1;
}

static void check_flag(const char *name, int got, const jr_value *expected, int *ok)
{
    const jr_value *want = jr_get(expected, name);
    if (want && (got != 0) != jr_is_true(want)) {
        print_message("    %s: got %d, expected %d\n", name, got, (int)jr_is_true(want));
        *ok = 0;
    }
}

static void check_collection(const told *t, const jr_value *expected)
{
    static const char *const names[4] = {"deletions", "insertions", "modifications", "modifications_new"};
    int ok = 1;
    for (int kind = 0; kind < 4; kind++)
        if (!same_indices(t->idx[kind], t->nidx[kind], jr_get(expected, names[kind])))
            ok = 0;
    if (!same_moves(t, jr_get(expected, "moves")))
        ok = 0;
    check_flag("collection_was_cleared", t->cleared, expected, &ok);
    check_flag("collection_root_was_deleted", t->root_deleted, expected, &ok);
    if (ok)
        return;
    print_message("  the change set differs; got:\n");
    for (int kind = 0; kind < 4; kind++)
        print_indices(names[kind], t->idx[kind], t->nidx[kind]);
    print_message("    moves [");
    for (size_t i = 0; i < t->nmoves; i++)
        print_message("%s[%llu, %llu]", i ? ", " : "", (unsigned long long)t->from[i], (unsigned long long)t->to[i]);
    print_message("]\n");
    fail_msg("change set differs from the conformance case");
}

static void check_object(coffer_db *db, coffer_class_id cls, const told *t, const jr_value *expected)
{
    if (jr_is_true(jr_get(expected, "deleted"))) {
        assert_true(t->deleted);
        assert_int_equal(t->nprops, 0);
        return;
    }
    assert_false(t->deleted);
    const jr_value *want = jr_get(expected, "changed_properties");
    assert_non_null(want);
    const coffer_class_schema *schema = coffer_db_class_schema(db, cls);
    int ok = t->nprops == jr_count(want);
    for (size_t i = 0; ok && i < t->nprops; i++) {
        int found = 0;
        for (size_t k = 0; k < jr_count(want); k++)
            found |= strcmp(schema->properties[t->props[i]].name, jr_str(jr_at(want, k))) == 0;
        ok = found;
    }
    if (ok)
        return;
    print_message("  changed properties: got");
    for (size_t i = 0; i < t->nprops; i++)
        print_message(" %s", schema->properties[t->props[i]].name);
    print_message("\n");
    fail_msg("changed properties differ from the conformance case");
}

/* ------------------------------------------------------------------------ */
/* Observers                                                                 */
/* ------------------------------------------------------------------------ */

/* The key paths of a case: absent = NULL (unfiltered), [] = a non-NULL empty
 * array (shallow). */
typedef struct key_paths {
    const char *paths[8];
    const char *const *ptr;
    size_t count;
} key_paths;

static void read_key_paths(const jr_value *js, key_paths *kp)
{
    memset(kp, 0, sizeof *kp);
    if (!js)
        return;
    kp->count = jr_count(js);
    assert_true(kp->count <= 8);
    for (size_t i = 0; i < kp->count; i++)
        kp->paths[i] = jr_str(jr_at(js, i));
    kp->ptr = kp->paths;
}

/* Appends the descriptors of a case to a query text as SORT, DISTINCT and
 * LIMIT clauses, in the listed order. */
static void append_descriptors(char *text, size_t size, const jr_value *descriptors)
{
    for (size_t d = 0; d < jr_count(descriptors); d++) {
        const jr_value *desc = jr_at(descriptors, d);
        const jr_value *sort = jr_get(desc, "sort"), *distinct = jr_get(desc, "distinct"),
                       *limit = jr_get(desc, "limit");
        size_t len = strlen(text);
        if (sort) {
            len += (size_t)snprintf(text + len, size - len, " SORT(");
            for (size_t i = 0; i < jr_count(sort); i++) {
                const jr_value *key = jr_at(sort, i);
                len += (size_t)snprintf(text + len, size - len, "%s%s %s", i ? ", " : "",
                                        jr_get_str(key, "property"),
                                        jr_is_true(jr_get(key, "ascending")) ? "ASC" : "DESC");
            }
            snprintf(text + len, size - len, ")");
        } else if (distinct) {
            len += (size_t)snprintf(text + len, size - len, " DISTINCT(");
            for (size_t i = 0; i < jr_count(distinct); i++)
                len += (size_t)snprintf(text + len, size - len, "%s%s", i ? ", " : "", jr_str(jr_at(distinct, i)));
            snprintf(text + len, size - len, ")");
        } else if (limit) {
            snprintf(text + len, size - len, " LIMIT(%lld)", (long long)jr_int(limit, 0));
        }
    }
    assert_true(strlen(text) + 1 < size);
}

static coffer_token *observe_query(coffer_db *db, const char *type, const char *text, const key_paths *kp, told *t)
{
    coffer_query *q;
    coffer_token *token;
    assert_ok(coffer_query_compile(db, ts_class(db, type), text, SIZE_MAX, NULL, 0, &q));
    assert_ok(coffer_query_observe(db, q, kp->ptr, kp->count, on_collection, t, &token));
    coffer_query_free(q);
    return token;
}

/* A list seen through a query: a list of objects through a query of its
 * element class ("TRUEPREDICATE" when the case has none) with the case's
 * descriptors; a list of values through its distinct and sort on "self". */
static coffer_token *observe_list_results(coffer_db *db, const jr_value *observe, coffer_class_id owner_cls,
                                          coffer_object_key owner, const key_paths *kp, told *t)
{
    coffer_property_id prop = ts_prop(db, owner_cls, jr_get_str(observe, "property"));
    const coffer_property_schema *p = property_of(db, owner_cls, prop);
    const jr_value *descriptors = jr_get(observe, "descriptors");
    coffer_token *token;
    if (is_scalar_name(p->object_class) || p->type != COFFER_TYPE_LINK) {
        int order = COFFER_SORT_NONE, distinct = 0;
        for (size_t d = 0; d < jr_count(descriptors); d++) {
            const jr_value *desc = jr_at(descriptors, d), *sort = jr_get(desc, "sort");
            if (sort)
                order = jr_is_true(jr_get(jr_at(sort, 0), "ascending")) ? COFFER_SORT_ASCENDING : COFFER_SORT_DESCENDING;
            else if (jr_get(desc, "distinct"))
                distinct = 1;
            else
                fail_msg("a list of values is seen only sorted or distinct");
        }
        assert_ok(coffer_list_values_observe(db, owner_cls, owner, prop, order, distinct, on_collection, t, &token));
        return token;
    }
    char text[512];
    const char *query = jr_get_str(observe, "query");
    snprintf(text, sizeof text, "%s", query ? query : "TRUEPREDICATE");
    append_descriptors(text, sizeof text, descriptors);
    coffer_query *q;
    assert_ok(coffer_query_compile(db, ts_class(db, p->object_class), text, SIZE_MAX, NULL, 0, &q));
    assert_ok(coffer_list_query_observe(db, owner_cls, owner, prop, q, kp->ptr, kp->count, on_collection, t, &token));
    coffer_query_free(q);
    return token;
}

static coffer_token *observe_case(conf_db *c, const jr_value *observe, const key_paths *kp, told *t,
                                  coffer_class_id *object_cls)
{
    const char *kind = jr_get_str(observe, "kind"), *type = jr_get_str(observe, "type");
    coffer_token *token = NULL;
    if (strcmp(kind, "results") == 0) {
        char text[512];
        snprintf(text, sizeof text, "%s", jr_get_str(observe, "query"));
        append_descriptors(text, sizeof text, jr_get(observe, "descriptors"));
        return observe_query(c->db, type, text, kp, t);
    }
    c->txn = ts_begin(c->db, COFFER_TXN_READ);
    coffer_object *obj = find_object(c, type, jr_int(jr_get(observe, "pk"), 0));
    coffer_object_key key = coffer_object_key_of(obj);
    coffer_object_release(obj);
    coffer_txn_free(c->txn);
    c->txn = NULL;
    coffer_class_id cls = ts_class(c->db, type);
    if (strcmp(kind, "list_results") == 0)
        return observe_list_results(c->db, observe, cls, key, kp, t);
    if (strcmp(kind, "list") == 0) {
        coffer_property_id prop = ts_prop(c->db, cls, jr_get_str(observe, "property"));
        assert_ok(coffer_list_observe(c->db, cls, key, prop, kp->ptr, kp->count, on_collection, t, &token));
    } else {
        assert_string_equal(kind, "object");
        *object_cls = cls;
        assert_ok(coffer_object_observe(c->db, cls, key, kp->ptr, kp->count, on_object, t, &token));
    }
    return token;
}

/* ------------------------------------------------------------------------ */
/* One case                                                                  */
/* ------------------------------------------------------------------------ */

static void run_case(void **state)
{
    const jr_value *c = *state;
    const char *id = jr_get_str(c, "id");
    const jr_value *observe = jr_get(c, "observe"), *expected = jr_get(c, "expected");
    const jr_value *fixture = jr_get(jr_get(suite, "fixtures"), jr_get_str(c, "fixture"));
    assert_non_null(fixture);
    built_schema schema;
    build_schema(jr_get(fixture, "schema"), &schema);

    char ident[256];
    snprintf(ident, sizeof ident, "conformance-changes-%s", id);
    conf_db db = {0};
    assert_ok(ts_open_memory(ident, schema.classes, schema.count, 1, &db.db));
    assert_ok(coffer_db_set_auto_refresh(db.db, 0));
    apply_in_one_write(&db, jr_get(fixture, "objects"), 1);
    if (jr_get(c, "setup"))
        apply_in_one_write(&db, jr_get(c, "setup"), 0);

    key_paths kp;
    read_key_paths(jr_get(c, "keyPaths"), &kp);
    told t;
    memset(&t, 0, sizeof t);
    coffer_class_id object_cls = 0;
    coffer_token *token = observe_case(&db, observe, &kp, &t, &object_cls);
    assert_ok(coffer_db_refresh(db.db));
    assert_int_equal(t.calls, 1);
    assert_int_equal(t.initial_calls, 1);

    apply_in_one_write(&db, jr_get(c, "write"), 0);
    assert_ok(coffer_db_refresh(db.db));
    if (jr_is_true(jr_get(expected, "no_notification"))) {
        if (t.calls != 1)
            fail_msg("expected no notification, got %d callback(s) after the write", t.calls - 1);
    } else {
        assert_int_equal(t.calls, 2);
        if (strcmp(jr_get_str(observe, "kind"), "object") == 0)
            check_object(db.db, object_cls, &t, expected);
        else
            check_collection(&t, expected);
    }
    coffer_token_stop(token);
    coffer_close(db.db);
}

int main(void)
{
    char error[256];
    suite = jr_parse_file(COFFER_CONFORMANCE_CHANGES_FILE, error, sizeof error);
    if (!suite) {
        fprintf(stderr, "%s\n", error);
        return 1;
    }
    const jr_value *cases = jr_get(suite, "cases");
    size_t n = jr_count(cases);
    struct CMUnitTest *tests = calloc(n ? n : 1, sizeof *tests);
    if (!tests) {
        jr_free(suite);
        return 1;
    }
    for (size_t i = 0; i < n; i++) {
        tests[i].name = jr_get_str(jr_at(cases, i), "id");
        tests[i].test_func = run_case;
        tests[i].initial_state = (void *)jr_at(cases, i);
    }
    int failed = _cmocka_run_group_tests("conformance_changes", tests, n, NULL, NULL);
    free(tests);
    jr_free(suite);
    return failed;
}
