/* print — the canonical text of a parsed query: one spelling per operator,
 * keywords in capitals, dates as T<sec>:<nsec>, parentheses only where the
 * tree needs them. Parsing the text gives the same tree back. */
#include <sodium.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/buffer.h"
#include "util/error.h"
#include "query/query.h"

typedef cf_buf buffer;

static void put(buffer *b, const char *s, size_t n) { cf_buf_put(b, s, n); }

static void puts_(buffer *b, const char *s)
{
    put(b, s, strlen(s));
}

static void printf_(buffer *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void printf_(buffer *b, const char *fmt, ...)
{
    char tmp[64];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n > 0)
        put(b, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

static void quoted(buffer *b, const char *s, size_t n)
{
    put(b, "\"", 1);
    for (size_t i = 0; i < n; i++) {
        switch (s[i]) {
        case '"': puts_(b, "\\\""); break;
        case '\\': puts_(b, "\\\\"); break;
        case '\n': puts_(b, "\\n"); break;
        case '\r': puts_(b, "\\r"); break;
        case '\t': puts_(b, "\\t"); break;
        case '\0': puts_(b, "\\0"); break;
        default: put(b, s + i, 1); break;
        }
    }
    put(b, "\"", 1);
}

/* A property or class name, with the characters a name escapes escaped. */
static void name(buffer *b, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        switch (s[i]) {
        case ' ': puts_(b, "\\ "); break;
        case '\t': puts_(b, "\\t"); break;
        case '\n': puts_(b, "\\n"); break;
        case '\r': puts_(b, "\\r"); break;
        default: put(b, s + i, 1); break;
        }
    }
}

static void hex(buffer *b, const uint8_t *bytes, size_t from, size_t to)
{
    for (size_t i = from; i < to; i++)
        printf_(b, "%02x", bytes[i]);
}

static void value(buffer *b, const cf_qvalue *v)
{
    switch (v->kind) {
    case CF_QV_NULL: puts_(b, "null"); break;
    case CF_QV_BOOL: puts_(b, v->u.boolean ? "true" : "false"); break;
    case CF_QV_INT:
    case CF_QV_FLOAT: puts_(b, v->u.num.text); break;
    case CF_QV_STRING: quoted(b, v->u.bytes.data, v->u.bytes.size); break;
    case CF_QV_BINARY: {
        size_t size = sodium_base64_ENCODED_LEN(v->u.bytes.size, sodium_base64_VARIANT_ORIGINAL);
        char *text = malloc(size);
        if (!text) {
            b->failed = 1;
            break;
        }
        sodium_bin2base64(text, size, (const unsigned char *)v->u.bytes.data, v->u.bytes.size,
                          sodium_base64_VARIANT_ORIGINAL);
        puts_(b, "B64\"");
        puts_(b, text);
        puts_(b, "\"");
        free(text);
        break;
    }
    case CF_QV_DATE:
        printf_(b, "T%lld:%d", (long long)v->u.date.seconds, (int)v->u.date.nanoseconds);
        break;
    case CF_QV_OBJECT_ID:
        puts_(b, "oid(");
        hex(b, v->u.object_id.bytes, 0, 12);
        puts_(b, ")");
        break;
    case CF_QV_UUID:
        puts_(b, "uuid(");
        hex(b, v->u.uuid.bytes, 0, 4);
        puts_(b, "-");
        hex(b, v->u.uuid.bytes, 4, 6);
        puts_(b, "-");
        hex(b, v->u.uuid.bytes, 6, 8);
        puts_(b, "-");
        hex(b, v->u.uuid.bytes, 8, 10);
        puts_(b, "-");
        hex(b, v->u.uuid.bytes, 10, 16);
        puts_(b, ")");
        break;
    }
}

static void path(buffer *b, const cf_qpath *p)
{
    static const char *const quantifiers[] = {"", "ANY ", "ALL ", "NONE "};
    puts_(b, quantifiers[p->quantifier]);
    for (size_t i = 0; i < p->count; i++) {
        const cf_qpath_elem *e = &p->elems[i];
        const char *dot = i ? "." : "";
        switch (e->kind) {
        case CF_QK_PROPERTY: puts_(b, dot); name(b, e->name, e->name_size); break;
        case CF_QK_VARIABLE: puts_(b, "$"); put(b, e->name, e->name_size); break;
        case CF_QK_INDEX: printf_(b, "[%llu]", (unsigned long long)e->index); break;
        case CF_QK_FIRST: puts_(b, "[FIRST]"); break;
        case CF_QK_LAST: puts_(b, "[LAST]"); break;
        case CF_QK_KEY: puts_(b, "["); quoted(b, e->name, e->name_size); puts_(b, "]"); break;
        case CF_QK_BACKLINKS:
            puts_(b, dot);
            puts_(b, "@links.");
            name(b, e->name, e->name_size);
            puts_(b, ".");
            name(b, e->property, strlen(e->property));
            break;
        case CF_QK_ALL_BACKLINKS: puts_(b, dot); puts_(b, "@links"); break;
        case CF_QK_COUNT: puts_(b, ".@count"); break;
        case CF_QK_SUM: puts_(b, ".@sum"); break;
        case CF_QK_AVG: puts_(b, ".@avg"); break;
        case CF_QK_MIN: puts_(b, ".@min"); break;
        case CF_QK_MAX: puts_(b, ".@max"); break;
        case CF_QK_KEYS: puts_(b, ".@keys"); break;
        case CF_QK_VALUES: puts_(b, ".@values"); break;
        case CF_QK_TYPE: puts_(b, ".@type"); break;
        }
    }
}

static void pred(buffer *b, const cf_qpred *p);

static void expr(buffer *b, const cf_qexpr *e)
{
    switch (e->kind) {
    case CF_QE_VALUE: value(b, &e->u.value); break;
    case CF_QE_ARG: printf_(b, "$%zu", e->u.arg); break;
    case CF_QE_LIST:
        puts_(b, (const char *const[]){"", "ANY ", "ALL ", "NONE "}[e->u.list.quantifier]);
        puts_(b, "{");
        for (size_t i = 0; i < e->u.list.count; i++) {
            if (i)
                puts_(b, ", ");
            expr(b, &e->u.list.items[i]);
        }
        puts_(b, "}");
        break;
    case CF_QE_PATH: path(b, &e->u.path); break;
    case CF_QE_OBJECT:
        puts_(b, "obj(");
        quoted(b, e->u.object.cls, strlen(e->u.object.cls));
        puts_(b, ", ");
        expr(b, e->u.object.key);
        puts_(b, ")");
        break;
    case CF_QE_SUBQUERY:
        puts_(b, "SUBQUERY(");
        path(b, &e->u.subquery.path);
        puts_(b, ", $");
        puts_(b, e->u.subquery.variable);
        puts_(b, ", ");
        pred(b, e->u.subquery.where);
        puts_(b, ").@count");
        break;
    }
}

static const char *op_text(cf_qcompare_op op)
{
    static const char *const ops[] = {"==", "!=", "<", "<=", ">", ">=", "BEGINSWITH", "ENDSWITH",
                                      "CONTAINS", "LIKE", "IN", "BETWEEN"};
    return ops[op];
}

/* A child of an AND needs parentheses if it is an AND or OR itself; a child
 * of an OR only if it is an OR; an operand of NOT if it is either. */
static void child(buffer *b, const cf_qpred *c, bool parens)
{
    if (parens)
        puts_(b, "(");
    pred(b, c);
    if (parens)
        puts_(b, ")");
}

static void pred(buffer *b, const cf_qpred *p)
{
    switch (p->kind) {
    case CF_QP_TRUE: puts_(b, "TRUEPREDICATE"); break;
    case CF_QP_FALSE: puts_(b, "FALSEPREDICATE"); break;
    case CF_QP_AND:
    case CF_QP_OR:
        for (size_t i = 0; i < p->u.children.count; i++) {
            const cf_qpred *c = p->u.children.items[i];
            if (i)
                puts_(b, p->kind == CF_QP_AND ? " AND " : " OR ");
            child(b, c, c->kind == CF_QP_OR || (p->kind == CF_QP_AND && c->kind == CF_QP_AND));
        }
        break;
    case CF_QP_NOT:
        puts_(b, "NOT ");
        child(b, p->u.operand, p->u.operand->kind == CF_QP_AND || p->u.operand->kind == CF_QP_OR);
        break;
    case CF_QP_COMPARE:
        expr(b, &p->u.compare.left);
        puts_(b, " ");
        puts_(b, op_text(p->u.compare.op));
        if (p->u.compare.modifiers) {
            puts_(b, "[");
            if (p->u.compare.modifiers & CF_QM_CASE_INSENSITIVE)
                puts_(b, "c");
            if (p->u.compare.modifiers & CF_QM_DIACRITIC_INSENSITIVE)
                puts_(b, "d");
            puts_(b, "]");
        }
        puts_(b, " ");
        expr(b, &p->u.compare.right);
        break;
    }
}

static void post(buffer *b, const cf_qpost *o)
{
    if (o->kind == CF_QO_LIMIT) {
        printf_(b, " LIMIT(%llu)", (unsigned long long)o->limit);
        return;
    }
    puts_(b, o->kind == CF_QO_SORT ? " SORT(" : " DISTINCT(");
    for (size_t i = 0; i < o->count; i++) {
        if (i)
            puts_(b, ", ");
        path(b, &o->keys[i].path);
        if (o->kind == CF_QO_SORT)
            puts_(b, o->keys[i].ascending ? " ASC" : " DESC");
    }
    puts_(b, ")");
}

coffer_status cf_query_print(const cf_query *query, char **out)
{
    if (!out || !query)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "query: %s is NULL", out ? "the query" : "out");
    *out = NULL;
    buffer b = {0};
    pred(&b, query->where);
    for (size_t i = 0; i < query->post_count; i++)
        post(&b, &query->post[i]);
    if (b.failed || !b.p) {
        free(b.p);
        return cf_error(COFFER_ERR_NO_MEMORY, "query: out of memory while printing");
    }
    *out = (char *)b.p;
    return COFFER_OK;
}
