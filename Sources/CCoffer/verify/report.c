/* report — the list of findings coffer_verify() returns, and its getters. */
#include "verify/report.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

coffer_verify_report *cf_report_new(void) { return calloc(1, sizeof(coffer_verify_report)); }

void cf_report_add(coffer_verify_report *r, coffer_verify_kind kind, uint64_t page, const char *class_name, uint64_t key,
                   const char *fmt, ...)
{
    if (r->count >= CF_VERIFY_MAX_FINDINGS) {
        r->omitted++;
        return;
    }
    if (r->count == r->cap) {
        size_t cap = r->cap ? 2 * r->cap : 16;
        cf_finding *items = realloc(r->items, cap * sizeof *items);
        if (!items) {
            r->out_of_memory = 1;
            r->omitted++;
            return;
        }
        r->items = items;
        r->cap = cap;
    }
    char text[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    cf_finding *f = &r->items[r->count];
    f->kind = kind;
    f->page = page;
    f->key = key;
    f->message = strdup(text);
    f->class_name = class_name ? strdup(class_name) : NULL;
    if (!f->message || (class_name && !f->class_name)) {
        free(f->message);
        free(f->class_name);
        r->out_of_memory = 1;
        r->omitted++;
        return;
    }
    r->count++;
}

size_t cf_report_total(const coffer_verify_report *r) { return r->count + r->omitted; }

static const cf_finding *finding(const coffer_verify_report *r, size_t i) { return r && i < r->count ? &r->items[i] : NULL; }

COFFER_API size_t coffer_verify_report_count(const coffer_verify_report *r) { return r ? r->count : 0; }

COFFER_API size_t coffer_verify_report_omitted(const coffer_verify_report *r) { return r ? r->omitted : 0; }

COFFER_API coffer_verify_kind coffer_verify_report_kind(const coffer_verify_report *r, size_t i)
{
    const cf_finding *f = finding(r, i);
    return f ? f->kind : COFFER_VERIFY_NONE;
}

COFFER_API uint64_t coffer_verify_report_page(const coffer_verify_report *r, size_t i)
{
    const cf_finding *f = finding(r, i);
    return f ? f->page : COFFER_VERIFY_NO_PAGE;
}

COFFER_API const char *coffer_verify_report_class(const coffer_verify_report *r, size_t i)
{
    const cf_finding *f = finding(r, i);
    return f ? f->class_name : NULL;
}

COFFER_API uint64_t coffer_verify_report_object_key(const coffer_verify_report *r, size_t i)
{
    const cf_finding *f = finding(r, i);
    return f ? f->key : 0;
}

COFFER_API const char *coffer_verify_report_message(const coffer_verify_report *r, size_t i)
{
    const cf_finding *f = finding(r, i);
    return f ? f->message : NULL;
}

COFFER_API void coffer_verify_report_free(coffer_verify_report *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->count; i++) {
        free(r->items[i].message);
        free(r->items[i].class_name);
    }
    free(r->items);
    free(r);
}

COFFER_API const char *coffer_verify_kind_name(coffer_verify_kind kind)
{
    switch (kind) {
    case COFFER_VERIFY_NONE: return "none";
    case COFFER_VERIFY_FILE: return "file";
    case COFFER_VERIFY_META: return "meta page";
    case COFFER_VERIFY_PAGE: return "page header";
    case COFFER_VERIFY_NODE: return "node";
    case COFFER_VERIFY_KEY_ORDER: return "key order";
    case COFFER_VERIFY_OVERFLOW: return "overflow pages";
    case COFFER_VERIFY_PAGE_SHARED: return "page used twice";
    case COFFER_VERIFY_FREE_LIST: return "free list";
    case COFFER_VERIFY_TREE: return "tree";
    case COFFER_VERIFY_HEADER: return "database header";
    case COFFER_VERIFY_RECORD: return "record";
    case COFFER_VERIFY_INDEX: return "index";
    case COFFER_VERIFY_PRIMARY_KEY: return "primary key";
    case COFFER_VERIFY_LINK: return "link";
    case COFFER_VERIFY_BACKLINK: return "backlink";
    case COFFER_VERIFY_COLLECTION: return "collection";
    case COFFER_VERIFY_COUNTER: return "counter";
    case COFFER_VERIFY_CHANGE_LOG: return "change log";
    }
    return "unknown";
}
