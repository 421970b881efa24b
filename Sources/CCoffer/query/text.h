/* text — the string and binary operators of the query language:
 * ==, BEGINSWITH, ENDSWITH, CONTAINS and LIKE, each plain or with [c], [d]
 * or [cd], and the `.length` of a string.
 *
 * Without modifiers matching is byte-exact; LIKE's `?` then stands for one
 * code point. With modifiers both sides are first transformed the same way
 * with utf8proc, and matching compares the resulting code points:
 *   [c]  full Unicode case folding (UTF8PROC_CASEFOLD: "ß" and "SS" both
 *        become "ss"), then canonical composition (NFC), so that composed
 *        and decomposed spellings of a character compare equal;
 *   [d]  canonical decomposition, removal of every combining mark (general
 *        categories Mn, Mc and Me: UTF8PROC_STRIPMARK), then composition:
 *        "é" and "e\u0301" both become "e", "Ä" becomes "A"; letters that
 *        have no decomposition (ø, đ, ł, æ) stay as they are;
 *   [cd] both.
 * After the transform a character is one code point where Unicode has a
 * precomposed form, so "é" neither begins nor ends with "e" under [c].
 *
 * Text need not be valid UTF-8 (binary columns use the same operators).
 * A byte that does not begin a well-formed UTF-8 sequence (RFC 3629: no
 * overlong forms, no surrogates, nothing above U+10FFFF, no truncated
 * sequence) is one unit of its own: it is kept as it is, equals only the
 * same byte, counts as one character for `?` and for cf_text_length(), and
 * splits the text in two: the characters on either side are transformed
 * separately and never composed across it.
 *
 * LIKE: `*` is any sequence of characters (also none), `?` exactly one; there
 * is no escape character. The whole text must match. Worst case time is
 * O(text length × pattern length), with no recursion.
 *
 * An empty needle: BEGINSWITH, ENDSWITH and CONTAINS match every text, ==
 * only the empty text. A needle that the transform empties (such as a lone
 * combining mark under [d]) is an empty needle. */
#ifndef COFFER_QUERY_TEXT_H
#define COFFER_QUERY_TEXT_H

#include <stddef.h>
#include <stdint.h>

#include "query.h" /* beside this header, for the tests too */

/* Matching operators (the subset of cf_qcompare_op that text supports): CF_QC_EQ, CF_QC_BEGINSWITH,
 * CF_QC_ENDSWITH, CF_QC_CONTAINS, CF_QC_LIKE. Modifiers: CF_QM_CASE_INSENSITIVE | CF_QM_DIACRITIC_INSENSITIVE. */

/* A compiled right-hand side: the needle folded once, so that matching many texts against it is cheap. */
typedef struct cf_text_pattern cf_text_pattern;

/* Compiles `len` bytes of `needle` (copied; NULL is fine when `len` is 0)
 * into a new pattern stored in `*out` (free it with cf_text_pattern_free()).
 * CF_QC_NE is accepted too: it matches exactly where CF_QC_EQ does not.
 * COFFER_ERR_INVALID_ARGUMENT for another operator, unknown modifier bits or
 * a NULL `out`/`needle`; COFFER_ERR_NO_MEMORY when out of memory. */
coffer_status cf_text_pattern_new(cf_qcompare_op op, unsigned modifiers, const void *needle, size_t len,
                                  cf_text_pattern **out);   /* COFFER_ERR_NO_MEMORY, COFFER_ERR_INVALID_ARGUMENT (op) */

/* 1 match, 0 no match, -1 out of memory (sets the last error). Thread-compatible: a pattern may be used by one
 * thread at a time (it may keep scratch buffers). `text` may be NULL when `len` is 0. The pattern keeps a
 * scratch buffer as large as the largest text it transformed, so matching allocates nothing once warm. */
int cf_text_pattern_match(cf_text_pattern *p, const void *text, size_t len);

/* Frees the pattern and its scratch buffer. NULL is fine. */
void cf_text_pattern_free(cf_text_pattern *p);

/* One-shot form for when the right side differs per object (e.g. `tags CONTAINS[c] name`). Same results.
 * Allocates only for long inputs. -1 also for an operator or modifier that cf_text_pattern_new() rejects
 * (with its COFFER_ERR_INVALID_ARGUMENT message). */
int cf_text_match(cf_qcompare_op op, unsigned modifiers, const void *text, size_t tlen, const void *needle, size_t nlen);

/* Number of Unicode code points in UTF-8 `text` (invalid bytes count one each): the `.length` of a string. */
uint64_t cf_text_length(const void *text, size_t len);

/* The first place where needle[0 .. nlen) occurs in text[0 .. len), or NULL
 * (text itself for an empty needle): memmem, faster on the short texts and
 * needles of a scan (text_find.c). */
const uint8_t *cf_text_find(const uint8_t *text, size_t len, const uint8_t *needle, size_t nlen);

#endif
