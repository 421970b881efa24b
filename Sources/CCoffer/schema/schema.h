/* schema — classes and properties: validation, the copy a handle keeps, the
 * stored (serialised) schema and the difference between two schemas. */
#ifndef COFFER_SCHEMA_H
#define COFFER_SCHEMA_H

#include <stddef.h>
#include <stdint.h>

#include "coffer.h"

typedef struct cf_prop {
    char *name;
    coffer_type type;
    uint32_t flags;      /* COFFER_PROPERTY_* */
    uint16_t column;     /* slot in the record and prefix of index keys */
    uint8_t collection;  /* COFFER_COLLECTION_* */
    char *object_class;  /* link target or linking-objects origin class */
    char *origin_prop;   /* linking objects: the origin property */
    int target;          /* resolved in a handle's view: class index, or -1 */
    int origin;          /* linking objects: property index in `target` */
} cf_prop;

typedef struct cf_class {
    char *name;
    uint32_t table; /* objects in sub-database 2*table, indexes in 2*table+1 */
    uint32_t flags;
    uint16_t next_column;
    size_t nprops;
    cf_prop *props;
    int pk; /* index of the primary-key property, or -1 */
    coffer_class_schema pub;          /* introspection copy */
    coffer_property_schema *pub_props;
} cf_class;

typedef struct cf_schema {
    uint64_t version;
    uint32_t next_table;
    size_t nclasses;
    cf_class *classes;
} cf_schema;

static inline int cf_prop_optional(const cf_prop *p) { return (p->flags & COFFER_PROPERTY_OPTIONAL) != 0; }
static inline int cf_prop_is_collection(const cf_prop *p) { return p->collection != COFFER_COLLECTION_NONE; }
/* Whether the property can hold links (and so origin backlinks). */
static inline int cf_prop_holds_links(const cf_prop *p)
{
    return p->type == COFFER_TYPE_LINK || p->type == COFFER_TYPE_MIXED;
}
static inline int cf_prop_indexed(const cf_prop *p)
{
    return (p->flags & (COFFER_PROPERTY_INDEXED | COFFER_PROPERTY_PRIMARY_KEY)) != 0;
}

static inline int cf_class_embedded(const cf_class *c) { return (c->flags & COFFER_CLASS_EMBEDDED) != 0; }

/* Resolves the link targets and linking-objects origins of a handle's view
 * (COFFER_ERR_SCHEMA if a target is not in the view). */
coffer_status cf_schema_resolve(cf_schema *view);

/* Validates and copies a user schema (tables and columns not yet assigned). */
coffer_status cf_schema_from_public(const coffer_class_schema *classes, size_t n, cf_schema **out);
coffer_status cf_schema_copy(const cf_schema *src, cf_schema **out);
void cf_schema_free(cf_schema *s);

/* Removes class `index` from `s` (a migration deleted it). */
void cf_schema_remove_class(cf_schema *s, size_t index);

int cf_schema_find(const cf_schema *s, const char *class_name);
int cf_class_find_prop(const cf_class *c, const char *prop_name);

/* Fills the introspection structs (pub, pub_props) of every class. */
coffer_status cf_schema_publish(cf_schema *s);

/* Stored form: a versioned binary encoding (see docs/FORMAT.md). */
coffer_status cf_schema_encode(const cf_schema *s, uint8_t **out, size_t *len);
coffer_status cf_schema_decode(const uint8_t *buf, size_t len, cf_schema **out);

/* What opening with a given schema does to the stored one. */
typedef enum cf_action_kind {
    CF_ACTION_CREATE_TABLE,
    CF_ACTION_DROP_INDEX, /* remove every index entry of a column */
    CF_ACTION_BUILD_INDEX, /* index every object's value of a column */
    CF_ACTION_DROP_GRAPH   /* release the links and collections of a removed or retyped property */
} cf_action_kind;

typedef struct cf_action {
    cf_action_kind kind;
    uint32_t table;
    uint16_t column;
    int class_index; /* in the new stored schema */
    int prop_index;  /* for BUILD_INDEX */
    cf_prop old;     /* for DROP_GRAPH: the stored property (names owned) */
    uint32_t old_target_table; /* for DROP_GRAPH of a link: its target's table */
    int skip;        /* cancelled by a migration (a renamed property keeps its contents) */
} cf_action;

/* A stored class a higher schema version leaves out although it can link
 * to the classes kept (through property `via`): it may go only once the
 * migration has emptied it, which cf_migration_drop_left_out checks. */
typedef struct cf_left_out {
    char *name;
    char *via;
} cf_left_out;

typedef struct cf_plan {
    cf_schema *stored;   /* the schema to store (new or unchanged) */
    cf_schema *view;     /* what the handle sees, in the given order */
    cf_action *actions;
    size_t nactions;
    int changed;         /* the stored schema must be written */
    int needs_migration; /* differences that need a migration at the same version */
    char *differences;   /* human-readable list of them, "; "-separated */
    cf_left_out *left_out;
    size_t nleft_out;
} cf_plan;

/* Plans opening: `stored` may be NULL (new file), `given` NULL (use the
 * stored schema). `subset` limits the view to those class names. A class
 * left out of the subset, or of a schema at the same version, must not be
 * able to link into the view (COFFER_ERR_SCHEMA); one left out of a schema
 * at a higher version is listed in plan->left_out instead. Returns
 * COFFER_ERR_SCHEMA_VERSION, COFFER_ERR_MIGRATION_REQUIRED or
 * COFFER_ERR_NOT_FOUND (unknown subset class) with a message. */
coffer_status cf_schema_plan(const cf_schema *stored, const cf_schema *given, uint64_t given_version,
                             const char *const *subset, size_t nsubset, cf_plan *plan);
void cf_plan_free(cf_plan *plan);

#endif
