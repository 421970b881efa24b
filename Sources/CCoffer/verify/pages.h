/* pages — the structural half of coffer_verify(): a reader of LMDB's
 * on-disk layout (storage/lmdb_layout.h) over a file descriptor, which checks the
 * meta pages, every page of every tree (the free list, the catalogue of
 * sub-databases, each sub-database and its sorted-duplicate sub-pages and
 * sub-trees), every node's bounds and flags, key order, overflow pages,
 * pages reached twice and pages that belong to nothing, and reports what it
 * finds. It reads pages with pread into buffers of its own and never hands
 * a page to LMDB, so no damage can crash it. */
#ifndef COFFER_VERIFY_PAGES_H
#define COFFER_VERIFY_PAGES_H

#include <stddef.h>
#include <stdint.h>

#include "verify/report.h"

typedef struct cf_pages cf_pages;

/* Walks the file open on `fd` (`label` names it in messages), adding
 * findings to `r`. With `want_txnid` non-zero it walks the meta page of that
 * transaction (the one a read transaction pins) and gives COFFER_DONE,
 * adding nothing, if neither meta page holds it any more; 0 walks the newest
 * valid meta page, as LMDB does. *out (freed with cf_pages_free) remembers
 * the sub-databases for cf_pages_locate; it may be NULL after an error.
 * COFFER_ERR_IO or COFFER_ERR_NO_MEMORY when the walk itself fails. */
coffer_status cf_pages_check(int fd, const char *label, uint64_t want_txnid, coffer_verify_report *r, cf_pages **out);

/* Checks only what LMDB reads when it opens a file: both meta pages and
 * the file's size against the pages in use. */
coffer_status cf_pages_check_metas(int fd, const char *label, coffer_verify_report *r, cf_pages **out);

/* Whether the walk found the file's structure sound (no finding of its own). */
int cf_pages_sound(const cf_pages *w);

/* The leaf page holding `key` in sub-database `number`, or
 * COFFER_VERIFY_NO_PAGE; for findings about a record. Reads only through
 * the bounds-checked reader. */
uint64_t cf_pages_locate(cf_pages *w, uint32_t number, const uint8_t *key, size_t klen);

void cf_pages_free(cf_pages *w);

#endif
