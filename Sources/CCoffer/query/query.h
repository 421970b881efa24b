/* query — the query language front end: parsing a query string into a
 * syntax tree (AST), printing a tree back as canonical text, comparing trees.
 *
 * The tree is purely syntactic: key paths are names, not yet bound to a
 * schema, and literals are not yet converted to the type of what they are
 * compared with. Binding, type checks, planning and evaluation build on it.
 *
 * Memory: every node, string and array of one parsed query lives in the
 * query's arena and is freed by one cf_query_free(). Nothing in the tree
 * points into the caller's query text.
 *
 * Grammar (keywords are case-insensitive):
 *
 *   query      := or_pred { SORT(sort_key {, sort_key}) | DISTINCT(path {, path})
 *                         | LIMIT(integer) } END
 *   or_pred    := and_pred { (OR | '||') and_pred }
 *   and_pred   := not_pred { (AND | '&&') not_pred }
 *   not_pred   := (NOT | '!') not_pred | '(' or_pred ')'
 *               | TRUEPREDICATE | FALSEPREDICATE | comparison
 *   comparison := expr op [modifier] expr
 *               | expr BETWEEN '{' value ',' value '}'
 *               | expr IN [modifier] ('{' values '}' | $n | path)
 *   op         := == = != <> < <= =< > >= => BEGINSWITH ENDSWITH CONTAINS LIKE
 *   modifier   := [c] | [d] | [cd]            (on ==, !=, IN and string ops)
 *   expr       := value | $n | [ANY|SOME|ALL|NONE] ('{' values '}' | $n | path)
 *               | SUBQUERY(path, $var, or_pred).@count | object
 *   values     := (value | $n | object) {, (value | $n | object)}
 *   object     := obj('Class', primary_key)   primary_key: an integer, a
 *                 string, oid(...), uuid(...) or $n; the object of that class
 *                 with that primary key, found when the query runs
 *   name       := letters, digits, '_' and non-ASCII characters, not
 *                 starting with a digit; "\ ", "\t", "\n" and "\r" in a
 *                 name stand for a space, a tab, a newline and a return
 *   path       := (name | $var | @links.Class.property | @links)
 *                 { .name | [n] | [FIRST] | [LAST] | ['key'] | .@count | .@size
 *                   | .@sum | .@avg | .@min | .@max | .@keys | .@values | .@type
 *                   | .@links.Class.property | .@links }
 *
 * A trailing `.length` is an ordinary property element named "length": only
 * the binder knows whether the object has such a property or the string or
 * collection before it is meant.
 */
#ifndef COFFER_QUERY_H
#define COFFER_QUERY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "coffer.h"

/* Deepest nesting of parentheses, NOT and SUBQUERY a query may have, so that
 * recursion on any input stays bounded. */
#define CF_QUERY_MAX_DEPTH 200

/* ---- arena --------------------------------------------------------------- */

typedef struct cf_qarena cf_qarena;

/* A fresh arena, or NULL when out of memory. */
cf_qarena *cf_qarena_new(void);
/* Frees the arena and everything allocated in it. NULL is fine. */
void cf_qarena_free(cf_qarena *arena);
/* `size` zeroed bytes aligned for any type, or NULL when out of memory. */
void *cf_qarena_alloc(cf_qarena *arena, size_t size);
/* A NUL-terminated copy of `len` bytes of `text` (which may contain NUL). */
char *cf_qarena_strndup(cf_qarena *arena, const char *text, size_t len);

/* ---- literal values ------------------------------------------------------ */

typedef enum cf_qvalue_kind {
    CF_QV_NULL,      /* null, nil */
    CF_QV_BOOL,      /* true, false */
    CF_QV_INT,       /* 12, -3, 0x1F: an integer that fits int64 */
    CF_QV_FLOAT,     /* 1.5, -2e10, inf, nan, integers beyond int64 */
    CF_QV_STRING,    /* 'a' or "a", escapes decoded */
    CF_QV_BINARY,    /* B64"..." decoded */
    CF_QV_DATE,      /* T<sec>:<nsec> or YYYY-MM-DD@HH:MM:SS[:nanos] */
    CF_QV_OBJECT_ID, /* oid(24 hex digits) */
    CF_QV_UUID       /* uuid(8-4-4-4-12 hex digits) */
} cf_qvalue_kind;

typedef struct cf_qvalue {
    cf_qvalue_kind kind;
    union {
        bool boolean;
        /* CF_QV_INT: `integer`; `number` (the same value as double) and
         * `decimal` help the binder compare it with float columns. */
        struct {
            int64_t integer;
            double number;
            /* Canonical text: decimal digits for an integer; the source
             * spelling for a float (keeping the precision that decimal128
             * columns care about: "1.50" is not "1.5"), with "inf", "-inf"
             * and "nan" for the special values. NUL-terminated. */
            const char *text;
            /* The literal as decimal128, when it is one (at most 34
             * significant digits, exponent in range). */
            bool has_decimal;
            coffer_decimal128 decimal;
        } num;
        /* CF_QV_STRING and CF_QV_BINARY: `size` bytes (strings may contain
         * NUL through "\0"); data is also NUL-terminated. */
        struct {
            const char *data;
            size_t size;
        } bytes;
        coffer_timestamp date;
        coffer_object_id object_id;
        coffer_uuid uuid;
    } u;
} cf_qvalue;

/* ---- key paths ----------------------------------------------------------- */

typedef enum cf_qpath_elem_kind {
    CF_QK_PROPERTY,  /* name; also a trailing `length` (see above) */
    CF_QK_VARIABLE,  /* $name of an enclosing SUBQUERY; first element only */
    CF_QK_INDEX,     /* [n] */
    CF_QK_FIRST,     /* [FIRST] */
    CF_QK_LAST,      /* [LAST] */
    CF_QK_KEY,       /* ['key']: a map entry */
    CF_QK_BACKLINKS, /* @links.Class.property: objects linking here */
    CF_QK_ALL_BACKLINKS, /* @links: every backlink; only before @count */
    CF_QK_COUNT,     /* @count and @size; last element */
    CF_QK_SUM,       /* @sum, @avg, @min, @max: last, or before one property */
    CF_QK_AVG,
    CF_QK_MIN,
    CF_QK_MAX,
    CF_QK_KEYS,      /* @keys of a map; last element */
    CF_QK_VALUES,    /* @values of a map */
    CF_QK_TYPE       /* @type of a mixed value; last element */
} cf_qpath_elem_kind;

typedef struct cf_qpath_elem {
    cf_qpath_elem_kind kind;
    /* CF_QK_PROPERTY, CF_QK_VARIABLE (without '$'), CF_QK_KEY (size in
     * name_size, may contain NUL), CF_QK_BACKLINKS (the class). */
    const char *name;
    size_t name_size;
    /* CF_QK_BACKLINKS: the linking property. */
    const char *property;
    /* CF_QK_INDEX. */
    uint64_t index;
} cf_qpath_elem;

typedef enum cf_qquantifier {
    CF_QQ_NONE_GIVEN, /* no keyword: an implicit ANY over collections */
    CF_QQ_ANY,        /* ANY, SOME */
    CF_QQ_ALL,
    CF_QQ_NONE        /* NONE */
} cf_qquantifier;

typedef struct cf_qpath {
    cf_qquantifier quantifier;
    const cf_qpath_elem *elems;
    size_t count; /* >= 1 */
} cf_qpath;

/* ---- expressions (operands of comparisons) ------------------------------- */

typedef struct cf_qexpr cf_qexpr;
typedef struct cf_qpred cf_qpred;

typedef enum cf_qexpr_kind {
    CF_QE_VALUE,    /* a literal */
    CF_QE_ARG,      /* $n */
    CF_QE_LIST,     /* {a, b, ...}: literals and arguments */
    CF_QE_PATH,     /* a key path */
    CF_QE_SUBQUERY, /* SUBQUERY(path, $var, predicate).@count */
    CF_QE_OBJECT    /* obj('Class', key): also an item of a list */
} cf_qexpr_kind;

struct cf_qexpr {
    cf_qexpr_kind kind;
    size_t offset; /* 0-based byte offset in the query text, for messages */
    union {
        cf_qvalue value;
        size_t arg;
        struct {
            const cf_qexpr *items;
            size_t count;
            /* ANY, ALL or NONE before the list: the comparison holds for
             * any, all or none of its values; ANY $n is a list of $n. */
            cf_qquantifier quantifier;
        } list;
        cf_qpath path;
        struct {
            cf_qpath path;
            const char *variable; /* without '$' */
            const cf_qpred *where;
        } subquery;
        struct {
            const char *cls;       /* the class name, NUL-terminated */
            const cf_qexpr *key;   /* CF_QE_VALUE or CF_QE_ARG */
        } object;
    } u;
};

/* ---- predicates ---------------------------------------------------------- */

typedef enum cf_qcompare_op {
    CF_QC_EQ, CF_QC_NE, CF_QC_LT, CF_QC_LE, CF_QC_GT, CF_QC_GE,
    CF_QC_BEGINSWITH, CF_QC_ENDSWITH, CF_QC_CONTAINS, CF_QC_LIKE,
    CF_QC_IN,     /* right: a list, an argument or a path */
    CF_QC_BETWEEN /* right: a list of exactly two items */
} cf_qcompare_op;

/* Comparison modifiers, or-ed. */
enum {
    CF_QM_CASE_INSENSITIVE = 1u << 0,      /* [c] */
    CF_QM_DIACRITIC_INSENSITIVE = 1u << 1  /* [d] */
};

typedef enum cf_qpred_kind {
    CF_QP_TRUE,    /* TRUEPREDICATE */
    CF_QP_FALSE,   /* FALSEPREDICATE */
    CF_QP_AND,     /* children, count >= 2 */
    CF_QP_OR,      /* children, count >= 2 */
    CF_QP_NOT,     /* operand */
    CF_QP_COMPARE  /* compare */
} cf_qpred_kind;

struct cf_qpred {
    cf_qpred_kind kind;
    size_t offset; /* 0-based byte offset in the query text */
    union {
        struct {
            const cf_qpred *const *items;
            size_t count;
        } children;
        const cf_qpred *operand;
        struct {
            cf_qcompare_op op;
            unsigned modifiers;
            cf_qexpr left, right;
        } compare;
    } u;
};

/* ---- trailing SORT / DISTINCT / LIMIT ------------------------------------ */

typedef struct cf_qsort_key {
    cf_qpath path; /* quantifier is always CF_QQ_NONE_GIVEN */
    bool ascending;
} cf_qsort_key;

typedef enum cf_qpost_kind { CF_QO_SORT, CF_QO_DISTINCT, CF_QO_LIMIT } cf_qpost_kind;

typedef struct cf_qpost {
    cf_qpost_kind kind;
    const cf_qsort_key *keys; /* SORT: keys; DISTINCT: keys (ascending unused) */
    size_t count;
    uint64_t limit;           /* LIMIT */
} cf_qpost;

/* ---- a parsed query ------------------------------------------------------ */

typedef struct cf_query {
    cf_qarena *arena;
    const cf_qpred *where;
    const cf_qpost *post; /* in the order written; applied in that order */
    size_t post_count;
    size_t arg_count;     /* 1 + the highest $n used, 0 if none */
} cf_query;

/* Parses `len` bytes of `text` (which need not be NUL-terminated). On success
 * stores a new query in `*out` (free it with cf_query_free()). On a syntax
 * error returns COFFER_ERR_INVALID_ARGUMENT with a message
 * "query: at offset N: expected X, found Y" (N is the 1-based character
 * offset, counting UTF-8 code points), stores the 0-based byte offset of the
 * culprit in `*error_offset` when that is not NULL, and leaves `*out` NULL.
 * COFFER_ERR_NO_MEMORY when out of memory. */
coffer_status cf_query_parse(const char *text, size_t len, cf_query **out, size_t *error_offset);

/* Frees the query and its whole tree. NULL is fine. */
void cf_query_free(cf_query *query);

/* The canonical text of `query` in a new malloc()ed, NUL-terminated string
 * stored in `*out` (free() it). Parsing that text gives an equal query, and
 * printing that gives the same text. COFFER_ERR_NO_MEMORY when out of memory. */
coffer_status cf_query_print(const cf_query *query, char **out);

/* 1 if the two queries have the same tree (offsets aside), else 0. */
int cf_query_equal(const cf_query *a, const cf_query *b);

#endif
