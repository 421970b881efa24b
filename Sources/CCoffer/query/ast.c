/* ast — structural equality of parsed queries (source offsets aside). */
#include <string.h>

#include "query/query.h"

static int bytes_equal(const char *a, size_t an, const char *b, size_t bn)
{
    return an == bn && (an == 0 || memcmp(a, b, an) == 0);
}

static int value_equal(const cf_qvalue *a, const cf_qvalue *b)
{
    if (a->kind != b->kind)
        return 0;
    switch (a->kind) {
    case CF_QV_NULL: return 1;
    case CF_QV_BOOL: return a->u.boolean == b->u.boolean;
    case CF_QV_INT: return a->u.num.integer == b->u.num.integer;
    case CF_QV_FLOAT: return strcmp(a->u.num.text, b->u.num.text) == 0;
    case CF_QV_STRING:
    case CF_QV_BINARY:
        return bytes_equal(a->u.bytes.data, a->u.bytes.size, b->u.bytes.data, b->u.bytes.size);
    case CF_QV_DATE:
        return a->u.date.seconds == b->u.date.seconds &&
               a->u.date.nanoseconds == b->u.date.nanoseconds;
    case CF_QV_OBJECT_ID: return memcmp(&a->u.object_id, &b->u.object_id, sizeof a->u.object_id) == 0;
    case CF_QV_UUID: return memcmp(&a->u.uuid, &b->u.uuid, sizeof a->u.uuid) == 0;
    }
    return 0;
}

static int elem_equal(const cf_qpath_elem *a, const cf_qpath_elem *b)
{
    if (a->kind != b->kind)
        return 0;
    switch (a->kind) {
    case CF_QK_PROPERTY:
    case CF_QK_VARIABLE:
    case CF_QK_KEY: return bytes_equal(a->name, a->name_size, b->name, b->name_size);
    case CF_QK_BACKLINKS:
        return bytes_equal(a->name, a->name_size, b->name, b->name_size) &&
               strcmp(a->property, b->property) == 0;
    case CF_QK_INDEX: return a->index == b->index;
    default: return 1;
    }
}

static int path_equal(const cf_qpath *a, const cf_qpath *b)
{
    if (a->quantifier != b->quantifier || a->count != b->count)
        return 0;
    for (size_t i = 0; i < a->count; i++)
        if (!elem_equal(&a->elems[i], &b->elems[i]))
            return 0;
    return 1;
}

static int pred_equal(const cf_qpred *a, const cf_qpred *b);

static int expr_equal(const cf_qexpr *a, const cf_qexpr *b)
{
    if (a->kind != b->kind)
        return 0;
    switch (a->kind) {
    case CF_QE_VALUE: return value_equal(&a->u.value, &b->u.value);
    case CF_QE_ARG: return a->u.arg == b->u.arg;
    case CF_QE_LIST:
        if (a->u.list.count != b->u.list.count || a->u.list.quantifier != b->u.list.quantifier)
            return 0;
        for (size_t i = 0; i < a->u.list.count; i++)
            if (!expr_equal(&a->u.list.items[i], &b->u.list.items[i]))
                return 0;
        return 1;
    case CF_QE_PATH: return path_equal(&a->u.path, &b->u.path);
    case CF_QE_OBJECT:
        return strcmp(a->u.object.cls, b->u.object.cls) == 0 && expr_equal(a->u.object.key, b->u.object.key);
    case CF_QE_SUBQUERY:
        return path_equal(&a->u.subquery.path, &b->u.subquery.path) &&
               strcmp(a->u.subquery.variable, b->u.subquery.variable) == 0 &&
               pred_equal(a->u.subquery.where, b->u.subquery.where);
    }
    return 0;
}

static int pred_equal(const cf_qpred *a, const cf_qpred *b)
{
    if (a->kind != b->kind)
        return 0;
    switch (a->kind) {
    case CF_QP_TRUE:
    case CF_QP_FALSE: return 1;
    case CF_QP_AND:
    case CF_QP_OR:
        if (a->u.children.count != b->u.children.count)
            return 0;
        for (size_t i = 0; i < a->u.children.count; i++)
            if (!pred_equal(a->u.children.items[i], b->u.children.items[i]))
                return 0;
        return 1;
    case CF_QP_NOT: return pred_equal(a->u.operand, b->u.operand);
    case CF_QP_COMPARE:
        return a->u.compare.op == b->u.compare.op &&
               a->u.compare.modifiers == b->u.compare.modifiers &&
               expr_equal(&a->u.compare.left, &b->u.compare.left) &&
               expr_equal(&a->u.compare.right, &b->u.compare.right);
    }
    return 0;
}

int cf_query_equal(const cf_query *a, const cf_query *b)
{
    if (!a || !b)
        return a == b;
    if (a->post_count != b->post_count || a->arg_count != b->arg_count ||
        !pred_equal(a->where, b->where))
        return 0;
    for (size_t i = 0; i < a->post_count; i++) {
        const cf_qpost *x = &a->post[i], *y = &b->post[i];
        if (x->kind != y->kind || x->count != y->count || x->limit != y->limit)
            return 0;
        for (size_t k = 0; k < x->count; k++)
            if (x->keys[k].ascending != y->keys[k].ascending ||
                !path_equal(&x->keys[k].path, &y->keys[k].path))
                return 0;
    }
    return 1;
}
