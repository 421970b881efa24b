/* engine — a parsed query bound to a class of an open database, and the
 * machinery that runs it: the binder (names and types checked, literals
 * converted to what they are compared with), the evaluator (one object at a
 * time), the planner (index or scan) and the trailing SORT/DISTINCT/LIMIT.
 *
 * A bound query is immutable once built and owns all its memory in one
 * arena; running it keeps per-run state (patterns, value buffers) in a
 * cf_qrun, so one bound query may be run by several threads at once.
 *
 * Semantics of a key path (docs/QUERY.md): evaluating a path on an object
 * gives a list of values. Starting from the object, every step maps each
 * value so far to zero or more values: a property of a to-one link gives one
 * (null stays null), a list, set, map or backlink gives its elements, an
 * aggregate (@count, @sum, ...) folds everything so far into one value. A
 * comparison holds for ANY (default), ALL or NONE of the left values, each
 * compared with any of the right values.
 */
#ifndef COFFER_QUERY_ENGINE_H
#define COFFER_QUERY_ENGINE_H

#include "storage/handles.h"
#include "query/query.h"
#include "query/interrupt.h"

/* ---- bound key paths ----------------------------------------------------- */

typedef enum cf_bstep_kind {
    CF_BS_PROPERTY,   /* a scalar, mixed or to-one link property: one value */
    CF_BS_ELEMENTS,   /* a list or set property's elements, a map's values */
    CF_BS_AT,         /* a list property's element at `index` (or FIRST/LAST) */
    CF_BS_KEY,        /* a map property's value under `key` (null if absent) */
    CF_BS_KEYS,       /* a map property's keys */
    CF_BS_SIZE,       /* a collection property's element count */
    CF_BS_LINKING,    /* objects of `origin_cls` linking here by `origin_prop` */
    CF_BS_BACKLINK_COUNT, /* @links.@count: every backlink of the object */
    CF_BS_MIXED_AT,   /* a nested list in a mixed value: element at `index` */
    CF_BS_MIXED_KEY,  /* a nested map in a mixed value: value under `key` */
    CF_BS_MIXED_SIZE, /* a nested collection in a mixed value: its size */
    CF_BS_MIXED_ELEMENTS, /* a nested collection in a mixed value: its values */
    CF_BS_LENGTH,     /* a string's length in code points (binary: bytes) */
    CF_BS_TYPE,       /* a mixed value's type name */
    CF_BS_COUNT,      /* folds: how many values so far */
    CF_BS_AGGREGATE   /* folds: @sum/@avg/@min/@max of the values so far, or
                       * of property `prop` of each object so far */
} cf_bstep_kind;

/* Positions for CF_BS_AT / CF_BS_MIXED_AT. */
#define CF_AT_FIRST UINT64_MAX
#define CF_AT_LAST (UINT64_MAX - 1)

typedef struct cf_bstep {
    cf_bstep_kind kind;
    coffer_class_id cls;    /* the class whose property is read */
    coffer_property_id prop;
    coffer_class_id origin_cls;      /* CF_BS_LINKING */
    coffer_property_id origin_prop;
    uint64_t index;         /* CF_BS_AT, CF_BS_MIXED_AT */
    const char *key;        /* CF_BS_KEY, CF_BS_MIXED_KEY */
    size_t key_size;
    cf_qpath_elem_kind aggregate; /* CF_BS_AGGREGATE: CF_QK_SUM/AVG/MIN/MAX */
    int has_prop;           /* CF_BS_AGGREGATE of property `prop` of `cls` */
} cf_bstep;

/* ---- bound operands and predicates --------------------------------------- */

/* A constant obj('Class', key): the object is looked up when the query runs
 * (u.list.items: the primary key, one value; u.list.count: the class id).
 * A run replaces it by the link, or by a link to no object. */
#define CF_QTYPE_OBJECT_REF ((coffer_type)66)

typedef enum cf_boperand_kind {
    CF_BO_CONST,    /* `consts`: a literal, an argument, or a list of them */
    CF_BO_PATH,     /* `steps` from the object (or from variable `var`) */
    CF_BO_SUBQUERY  /* the number of `steps` values for which `where` holds */
} cf_boperand_kind;

typedef struct cf_bpred cf_bpred;

typedef struct cf_boperand {
    cf_boperand_kind kind;
    cf_qquantifier quantifier;
    const cf_bstep *steps;
    size_t nsteps;
    int var;                 /* -1: the object; else a SUBQUERY variable depth */
    const coffer_value *consts;
    size_t nconsts;
    const cf_bpred *where;   /* CF_BO_SUBQUERY */
    int sub_var;             /* CF_BO_SUBQUERY: the depth of its variable */
    /* CF_BO_SUBQUERY: the variables declared outside it that `where` reads
     * (-1: the object the query tests). Its count is a function of these
     * and of where it starts, which is what a nested one is memoized by. */
    const int *deps;
    size_t ndeps;
    /* Static facts from the binder. */
    coffer_type type;        /* value type; LINK for objects; MIXED if unknown */
    coffer_class_id link_cls;/* type LINK: the class */
    int multi;               /* may give several values (quantifiers apply) */
    int type_names;          /* values are @type names */
    const char *label;       /* for messages: "property 'Dog.age'" */
} cf_boperand;

typedef enum cf_bpred_kind { CF_BP_TRUE, CF_BP_FALSE, CF_BP_AND, CF_BP_OR, CF_BP_NOT, CF_BP_COMPARE } cf_bpred_kind;

struct cf_bpred {
    cf_bpred_kind kind;
    const cf_bpred *const *items; /* AND, OR */
    size_t count;
    const cf_bpred *operand;      /* NOT */
    cf_qcompare_op op;            /* COMPARE */
    unsigned modifiers;
    cf_boperand left, right;
    int pattern;                  /* slot of a precompiled text pattern, or -1 */
    int ref_slot;                 /* slot of its constants with obj() found, or -1 */
    int simple;                   /* one property of the object against constants */
};

/* Whether a comparison is one property of an object of class `cls` (not a
 * link or mixed) against constants, which the evaluator reads directly. */
int cf_bpred_is_simple(const cf_bpred *p, coffer_class_id cls);

/* ---- a bound query ------------------------------------------------------- */

typedef struct cf_bsort {
    const cf_bstep *steps;
    size_t nsteps;
    int ascending;
} cf_bsort;

typedef struct cf_bpost {
    cf_qpost_kind kind;
    const cf_bsort *keys;
    size_t count;
    uint64_t limit;
} cf_bpost;

/* Where one argument ($n, not a list and not the key of obj()) landed in a
 * bound query: what cf_bquery_patch() rewrites in place. */
typedef struct cf_bslot {
    size_t arg;              /* n of $n */
    coffer_type arg_type;    /* the type the argument had when bound */
    coffer_type to;          /* what it was converted for */
    coffer_value *value;     /* the constant in the bound tree */
    const struct cf_bslot *next;
} cf_bslot;

typedef struct cf_bquery {
    cf_qarena *arena;
    coffer_db *db;
    coffer_class_id cls;
    const cf_bpred *where;
    const cf_bpost *post;
    size_t npost;
    int npatterns;   /* text pattern slots used by `where` */
    int nrefs;       /* slots of constants holding obj('Class', key) */
    int max_var;     /* deepest SUBQUERY variable + 1 */
    const cf_query *parsed; /* the syntax tree: in the arena, or in `source`'s */
    struct cf_bquery *source; /* a rebound query: the query whose tree it uses (held) */
    char *text;      /* canonical text, made on first request (malloc'ed) */
    uint64_t timeout_ms; /* coffer_query_set_timeout(): the one setting that
                          * changes after binding (atomic); 0 = none */
    int refs;        /* results that may rerun it hold a reference */
    const cf_bslot *slots; /* every argument's constant, when `patchable` */
    int patchable;   /* arguments only as plain constants (see cf_bslot) */
    coffer_query *spare; /* a rebound copy that coffer_query_count_rebound()
                          * patches (taken and put back atomically; it
                          * holds no reference to this query) */
} cf_bquery;

/* Binds `q` to class `cls` of `db` with `nargs` arguments (copied). On
 * success the bound query owns `q`'s arena (and so `q`); on error `q` is
 * left to the caller to free. Errors are COFFER_ERR_QUERY with a message
 * naming the culprit. */
coffer_status cf_query_bind(coffer_db *db, coffer_class_id cls, cf_query *q, const coffer_value *args, size_t nargs,
                            cf_bquery **out);
/* Binds the tree of `from` again with other arguments, into an arena of
 * its own; the new bound query holds a reference to `from`. */
coffer_status cf_query_rebind(cf_bquery *from, const coffer_value *args, size_t nargs, cf_bquery **out);
/* Rewrites the arguments of `bq` in place with `args`, when `bq` is
 * patchable and every argument it uses is given with the type it was bound
 * with (no re-parse, no re-plan, no allocation); strings and binaries are
 * borrowed from `args`. Returns 1 when patched, 0 when the caller must
 * rebind instead (which then names any error). */
int cf_bquery_patch(cf_bquery *bq, const coffer_value *args, size_t nargs);
/* The spare rebound copy of `query` with `args` patched in, taken from the
 * query for the caller alone; NULL when there is none or it cannot be
 * patched with these (the caller then rebinds). */
coffer_query *cf_query_spare_take(const coffer_query *query, const coffer_value *args, size_t nargs);
/* Gives `spare` (taken, or a rebinding of `query` from
 * coffer_query_rebind()) to `query` to keep, or frees it when the query
 * cannot use one or keeps one already. */
void cf_query_spare_put(const coffer_query *query, coffer_query *spare);
/* Reference counting: a new bound query has one reference. */
void cf_bquery_retain(cf_bquery *bq);
void cf_bquery_free(cf_bquery *bq);

/* ---- running ------------------------------------------------------------- */

typedef struct cf_qvals {
    coffer_value *v;
    size_t n, cap;
} cf_qvals;

typedef struct cf_qrun cf_qrun;

/* Per-run state: text patterns, value buffers, object handles opened while
 * evaluating one object, SUBQUERY variables and the counts of nested
 * SUBQUERYs already evaluated. `guard` (NULL: none; borrowed for the run's
 * life) is checked once per element a SUBQUERY visits. */
coffer_status cf_qrun_new(coffer_txn *txn, const cf_bquery *bq, cf_qguard *guard, cf_qrun **out);
/* Checks the run's guard: COFFER_OK, or COFFER_ERR_INTERRUPTED (set as the
 * last error). Callers check once per object. */
coffer_status cf_qrun_check(cf_qrun *run);
void cf_qrun_free(cf_qrun *run);

/* Evaluates the query's predicate on `obj`: 1, 0, or -1 on error (with the
 * last error set). */
int cf_qrun_matches(cf_qrun *run, coffer_object *obj);
/* A simple comparison (cf_bpred_is_simple) of the property's `value`. */
int cf_qrun_compare_value(cf_qrun *run, const cf_bpred *p, const coffer_value *value);
/* The same for one predicate of the query (a conjunct). */
int cf_qrun_eval(cf_qrun *run, const cf_bpred *p, coffer_object *obj);

/* Folds values into @sum, @avg, @min or @max (`agg` is CF_QK_SUM...), as
 * the aggregate of a collection and of results: nulls and values that are
 * not numbers (dates for min and max) are skipped; an empty sum is 0, an
 * empty average, minimum or maximum null. `type` is the values' declared
 * type (MIXED if unknown): a sum of ints is an int. */
coffer_status cf_qfold(cf_qpath_elem_kind agg, coffer_type type, const coffer_value *vals, size_t n, coffer_value *out);

/* Evaluates a path on `obj` into `out` (values borrow handles that stay open
 * until cf_qrun_release()). */
coffer_status cf_qrun_path(cf_qrun *run, coffer_object *obj, const cf_bstep *steps, size_t nsteps, cf_qvals *out);
/* Releases the object handles the last evaluations opened. */
void cf_qrun_release(cf_qrun *run);

/* ---- values -------------------------------------------------------------- */

/* Orders two values for comparisons and sorting: numbers of any type by
 * value, strings and binaries by bytes, dates, object ids, uuids, bools.
 * Returns 0 and sets *cmp (-1, 0, 1) when they are comparable; -1 when not
 * (different kinds, null, links of other classes). */
int cf_qvalue_compare(const coffer_value *a, const coffer_value *b, int *cmp);
/* Equality as `==` sees it: comparable and equal, or both null, or the same
 * link. */
int cf_qvalue_equal(const coffer_value *a, const coffer_value *b);
/* Total order for SORT and DISTINCT: null first, then by kind, then by
 * value. */
int cf_qvalue_sort_compare(const coffer_value *a, const coffer_value *b);
/* The @type name of a value ("int", "string", ...). */
const char *cf_qvalue_type_name(const coffer_value *v);
/* Whether @type name `name` (case-insensitive; "numeric" and other groups
 * included) covers the value's type. */
int cf_qtype_name_matches(const coffer_value *v, const char *name, size_t len);

int cf_qvals_push(cf_qvals *vals, const coffer_value *v);

#endif
