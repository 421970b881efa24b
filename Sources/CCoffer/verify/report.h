/* report — the findings of coffer_verify(): a growable list of (kind, page,
 * class, object key, message), capped so that a badly damaged file cannot
 * make it grow without bound, and its public getters. */
#ifndef COFFER_VERIFY_REPORT_H
#define COFFER_VERIFY_REPORT_H

#include <stddef.h>
#include <stdint.h>

#include "coffer.h"

/* At most this many findings are kept; the rest are only counted. */
#define CF_VERIFY_MAX_FINDINGS 1000u

typedef struct cf_finding {
    coffer_verify_kind kind;
    uint64_t page; /* COFFER_VERIFY_NO_PAGE when not tied to a page */
    char *class_name;
    uint64_t key;
    char *message;
} cf_finding;

struct coffer_verify_report {
    cf_finding *items;
    size_t count, cap;
    size_t omitted; /* findings past CF_VERIFY_MAX_FINDINGS */
    int out_of_memory;
};

coffer_verify_report *cf_report_new(void);

/* Adds a finding (class_name may be NULL, key 0 when none). Out of memory
 * is remembered in the report rather than returned: a check goes on. */
void cf_report_add(coffer_verify_report *r, coffer_verify_kind kind, uint64_t page, const char *class_name, uint64_t key,
                   const char *fmt, ...) __attribute__((format(printf, 6, 7)));

/* Findings so far, counting the omitted ones. */
size_t cf_report_total(const coffer_verify_report *r);

#endif
